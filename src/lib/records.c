// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Owner records: one small text file per vGPU, replaced atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "records.h"
#include "sysfs-state.h"

#define RECORD_MAX 4096

const char *vgpu_lifetime_str(enum vgpu_lifetime l)
{
	return l == VGPU_LIFETIME_PER_START ? "per-start" : "persistent";
}

const char *vgpu_record_state_str(enum vgpu_record_state s)
{
	return s == VGPU_RECORD_INCOMING ? "incoming" : "active";
}

void vgpu_record_key(const struct vgpu_record *r, char key[VGPU_RECORD_KEY_LEN])
{
	if (r->iface == VGPU_IFACE_MDEV)
		snprintf(key, VGPU_RECORD_KEY_LEN, "%s_%s", r->parent, r->mdev_uuid);
	else
		snprintf(key, VGPU_RECORD_KEY_LEN, "%s", r->parent);
}

char *vgpu_record_format(const struct vgpu_record *r)
{
	char *text = vgpu_asprintf("domain=%s\ndomain_uuid=%s\ngpu=%s\nparent=%s\ninterface=%s\n"
				   "type_id=%u\nprofile=%s\nmdev_uuid=%s\nlifetime=%s\n",
				   r->domain, r->domain_uuid, r->gpu, r->parent,
				   vgpu_iface_str(r->iface), r->type_id, r->profile, r->mdev_uuid,
				   vgpu_lifetime_str(r->lifetime));

	if (!vgpu_cpuset_empty(&r->cpus)) {
		VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);

		vgpu_append(&text, "cpus=%s\n",
			    vgpu_cpulist_format(&r->cpus, list, VGPU_CPULIST_LEN));
	}
	if (r->partitioned)
		vgpu_append(&text, "partition=%u\n", r->partition);
	if (r->state == VGPU_RECORD_INCOMING)
		vgpu_append(&text, "state=incoming\ndeadline=%lld\n", r->deadline);
	return text;
}

/* One "key=value" into @r; -EINVAL when the key is unknown or the value wrong. */
static int parse_field(struct vgpu_record *r, const char *key, const char *val, unsigned *seen)
{
	static const char *const keys[] = { "domain",	 "domain_uuid", "gpu",	   "parent",
					    "interface", "type_id",	"profile", "mdev_uuid",
					    "lifetime",	 "cpus",	"state",   "deadline",
					    "partition" };
	size_t k;
	long id;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]) && strcmp(key, keys[k]) != 0; k++)
		;
	if (k == sizeof(keys) / sizeof(keys[0]) || (*seen & (1u << k)))
		return -EINVAL; /* unknown or twice */
	*seen |= 1u << k;
	switch (k) {
	case 0:
		return vgpu_domain_name_check(val) ?
			       -EINVAL :
			       (snprintf(r->domain, sizeof(r->domain), "%s", val), 0);
	case 1:
		return vgpu_uuid_normalize(val, r->domain_uuid) ? 0 : -EINVAL;
	case 2:
		return vgpu_bdf_normalize(val, r->gpu);
	case 3:
		return vgpu_bdf_normalize(val, r->parent);
	case 4:
		r->iface = strcmp(val, "mdev") == 0	   ? VGPU_IFACE_MDEV :
			   strcmp(val, "vendor-vfio") == 0 ? VGPU_IFACE_VENDOR_VFIO :
							     VGPU_IFACE_NONE;
		return r->iface == VGPU_IFACE_NONE ? -EINVAL : 0;
	case 5:
		if (vgpu_parse_long(val, &id) < 0 || id <= 0 || id > 0xffffff)
			return -EINVAL;
		r->type_id = (unsigned)id;
		return 0;
	case 6:
		if (!*val || strlen(val) >= sizeof(r->profile) || !vgpu_utf8_valid(val))
			return -EINVAL;
		snprintf(r->profile, sizeof(r->profile), "%s", val);
		return 0;
	case 7:
		if (!*val)
			return 0;
		return vgpu_uuid_normalize(val, r->mdev_uuid) ? 0 : -EINVAL;
	case 9: /* optional: the CPUs the domain was pinned to */
		return vgpu_cpulist_parse(val, &r->cpus) < 0 ? -EINVAL : 0;
	case 10: /* optional: "active" when absent */
		if (strcmp(val, "incoming") == 0)
			r->state = VGPU_RECORD_INCOMING;
		else if (strcmp(val, "active") != 0)
			return -EINVAL;
		return 0;
	case 11: /* with state=incoming only */
		if (vgpu_parse_long(val, &id) < 0 || id <= 0)
			return -EINVAL;
		r->deadline = id;
		return 0;
	case 12: /* optional: the fabric partition (Fabric Manager's IDs start at 0) */
		if (vgpu_parse_long(val, &id) < 0 || id < 0 || id > 0xffff)
			return -EINVAL;
		r->partitioned = true;
		r->partition = (unsigned)id;
		return 0;
	default:
		if (strcmp(val, "persistent") == 0)
			r->lifetime = VGPU_LIFETIME_PERSISTENT;
		else if (strcmp(val, "per-start") == 0)
			r->lifetime = VGPU_LIFETIME_PER_START;
		else
			return -EINVAL;
		return 0;
	}
}

int vgpu_record_parse(struct vgpu_ctx *ctx, const char *text, const char *what,
		      struct vgpu_record *out)
{
	VGPU_AUTOFREE char *copy = vgpu_xstrdup(text);
	struct vgpu_record r;
	unsigned seen = 0;
	char *save = NULL;

	memset(&r, 0, sizeof(r));
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			return vgpu_error(ctx, -EINVAL,
					  "owner record '%s': line '%s' is not key=value", what,
					  line);
		*eq = '\0';
		if (parse_field(&r, line, eq + 1, &seen) < 0)
			return vgpu_error(ctx, -EINVAL, "owner record '%s': bad or repeated '%s'",
					  what, line);
	}
	if ((seen & 0x1ff) != 0x1ff)
		return vgpu_error(ctx, -EINVAL, "owner record '%s': a key is missing", what);
	if ((r.iface == VGPU_IFACE_MDEV) != (r.mdev_uuid[0] != '\0'))
		return vgpu_error(ctx, -EINVAL,
				  "owner record '%s': 'mdev_uuid' does not fit interface '%s'",
				  what, vgpu_iface_str(r.iface));
	if ((r.state == VGPU_RECORD_INCOMING) != (r.deadline != 0))
		return vgpu_error(ctx, -EINVAL,
				  "owner record '%s': 'deadline' does not fit state '%s'", what,
				  vgpu_record_state_str(r.state));
	*out = r;
	return 0;
}

static int record_cmp(const void *a, const void *b)
{
	char ka[VGPU_RECORD_KEY_LEN], kb[VGPU_RECORD_KEY_LEN];

	vgpu_record_key(a, ka);
	vgpu_record_key(b, kb);
	return strcmp(ka, kb);
}

/* Read one record file; a damaged one is warned about and its parent kept. */
static void read_one(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *name,
		     struct vgpu_records *out)
{
	char show[VGPU_SHOW_LEN], key[VGPU_RECORD_KEY_LEN], parent[VGPU_BDF_LEN];
	VGPU_AUTOFREE char *text = NULL;
	struct vgpu_ctx sub = { 0 };
	struct vgpu_record r;
	const char *why = NULL;
	size_t len;
	int err;

	vgpu_sysdir_show(d, name, show, sizeof(show));
	err = vgpu_sysfs_read_file(d, RECORD_MAX, &text, &len, "%s", name);
	if (err < 0) {
		why = vgpu_strerror(err);
	} else if (strlen(text) != len) {
		why = "contains a NUL byte";
	} else if (vgpu_record_parse(&sub, text, show, &r) < 0) {
		vgpu_warn(ctx, "%s; it still counts as taken", vgpu_ctx_error(&sub));
	} else {
		vgpu_record_key(&r, key);
		if (strcmp(key, name) == 0) {
			out->v = vgpu_xreallocarray(out->v, out->n + 1, sizeof(*out->v));
			out->v[out->n++] = r;
			vgpu_ctx_clear(&sub);
			return;
		}
		why = "its content names another vGPU than its file name";
	}
	vgpu_ctx_clear(&sub);
	if (why)
		vgpu_warn(ctx, "owner record '%s': %s; it still counts as taken", show, why);
	/* the file name names the parent, whatever the content says */
	snprintf(key, sizeof(key), "%s", name);
	key[strcspn(key, "_")] = '\0';
	if (vgpu_bdf_normalize(key, parent) == 0) {
		vgpu_strv_push(&out->damaged_parents, vgpu_xstrdup(parent));
		vgpu_strv_push(&out->damaged_keys, vgpu_xstrdup(name));
	}
}

int vgpu_records_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_records *out)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV names = { 0 };
	char show[VGPU_SHOW_LEN];
	int r;

	memset(out, 0, sizeof(*out));
	r = vgpu_sysdir_open(fs, &d, VGPU_RECORDS_DIR);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		r = vgpu_sysfs_list_dir(&d, &names, ".");
	if (r < 0) {
		struct vgpu_sysdir root;

		vgpu_sysdir_root(fs, &root);
		return vgpu_error(ctx, r, "cannot read owner records in '%s': %s",
				  vgpu_sysdir_show(&root, VGPU_RECORDS_DIR, show, sizeof(show)),
				  vgpu_strerror(r));
	}
	for (size_t i = 0; i < names.n; i++)
		if (names.items[i][0] != '.') /* temporary files of a writer */
			read_one(ctx, &d, names.items[i], out);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), record_cmp);
	vgpu_strv_uniq(&out->damaged_parents);
	vgpu_strv_sort(&out->damaged_keys);
	return 0;
}

void vgpu_records_clear(struct vgpu_records *rs)
{
	free(rs->v);
	vgpu_strv_clear(&rs->damaged_parents);
	vgpu_strv_clear(&rs->damaged_keys);
	memset(rs, 0, sizeof(*rs));
}

const struct vgpu_record *vgpu_records_find(const struct vgpu_records *rs, const char *parent,
					    const char *mdev_uuid)
{
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].parent, parent) == 0 &&
		    (!mdev_uuid || strcmp(rs->v[i].mdev_uuid, mdev_uuid) == 0))
			return &rs->v[i];
	return NULL;
}

const struct vgpu_record *vgpu_records_find_vgpu(const struct vgpu_records *rs, const char *parent,
						 const char *mdev_uuid)
{
	if (!mdev_uuid || !*mdev_uuid)
		return vgpu_records_find(rs, parent, NULL);
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].mdev_uuid, mdev_uuid) == 0)
			return &rs->v[i];
	return NULL;
}

bool vgpu_records_parent_taken(const struct vgpu_records *rs, const char *parent)
{
	if (vgpu_records_find(rs, parent, NULL))
		return true;
	for (size_t i = 0; i < rs->damaged_parents.n; i++)
		if (strcmp(rs->damaged_parents.items[i], parent) == 0)
			return true;
	return false;
}

void vgpu_records_apply(const struct vgpu_records *rs, struct vgpu_model *m)
{
	long long now = (long long)time(NULL);

	for (size_t i = 0; i < rs->n; i++) {
		const struct vgpu_record *r = &rs->v[i];
		const struct vgpu_parent *p = vgpu_model_find_parent(m, r->parent);
		bool exists = false;

		if (!p || vgpu_record_expired(r, now)) /* void: the next writer drops it */
			continue;
		if (r->iface == VGPU_IFACE_MDEV) {
			for (size_t k = 0; k < p->mdevs.n && !exists; k++)
				exists = strcmp(p->mdevs.items[k], r->mdev_uuid) == 0;
		} else {
			exists = p->in_use;
		}
		if (!exists)
			vgpu_model_reserve(m, r->parent, r->type_id);
		else
			vgpu_model_claim(m, r->parent);
	}
	for (size_t i = 0; i < rs->damaged_parents.n; i++)
		vgpu_model_reserve(m, rs->damaged_parents.items[i], 0);
}

void vgpu_wedged_apply(struct vgpu_sysfs *fs, struct vgpu_model *m)
{
	VGPU_AUTOSTRV names = { 0 };
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &names, VGPU_WEDGED_DIR) < 0)
		return;
	for (size_t i = 0; i < names.n; i++) {
		char text[128], parent[VGPU_BDF_LEN];

		if (names.items[i][0] == '.' ||
		    vgpu_sysfs_read_str(&root, text, sizeof(text), VGPU_WEDGED_DIR "/%s",
					names.items[i]) < 0 ||
		    strncmp(text, "parent=", 7) != 0)
			continue;
		text[strcspn(text, "\n")] = '\0';
		if (vgpu_bdf_normalize(text + 7, parent) == 0 && vgpu_model_find_parent(m, parent))
			vgpu_model_reserve(m, parent, 0);
	}
}

bool vgpu_record_expired(const struct vgpu_record *r, long long now)
{
	return r->state == VGPU_RECORD_INCOMING && r->deadline <= now;
}

int vgpu_records_drop_expired(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_records *rs,
			      long long now)
{
	size_t kept = 0;
	int dropped = 0, r = 0;

	for (size_t i = 0; i < rs->n; i++) {
		char key[VGPU_RECORD_KEY_LEN];

		if (r == 0 && vgpu_record_expired(&rs->v[i], now)) {
			vgpu_record_key(&rs->v[i], key);
			r = fs ? vgpu_record_remove(ctx, fs, key) : 0;
			if (r == 0) {
				vgpu_log(
					ctx, LOG_NOTICE,
					"%s owner record '%s': domain '%s' did not migrate here before its deadline",
					fs ? "dropped" : "would drop", key, rs->v[i].domain);
				dropped++;
				continue;
			}
		}
		rs->v[kept++] = rs->v[i];
	}
	rs->n = kept;
	return r < 0 ? r : dropped;
}

int vgpu_record_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *rec)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = vgpu_record_format(rec);
	char key[VGPU_RECORD_KEY_LEN], show[VGPU_SHOW_LEN];
	long long now = (long long)time(NULL);
	int r;

	vgpu_record_key(rec, key);
	if (rec->state == VGPU_RECORD_INCOMING &&
	    (rec->deadline <= now || rec->deadline > now + VGPU_INCOMING_MAX_S))
		return vgpu_error(
			ctx, -EINVAL,
			"owner record '%s': an incoming record's deadline must lie within %d seconds from now",
			key, VGPU_INCOMING_MAX_S);
	r = vgpu_sysfs_mkdirs_ctx(ctx, fs, &d, VGPU_RECORDS_DIR);
	if (r < 0)
		return r;
	r = vgpu_sysfs_replace(&d, key, text, strlen(text));
	if (r < 0)
		return vgpu_error(ctx, r, "cannot write owner record '%s': %s",
				  vgpu_sysdir_show(&d, key, show, sizeof(show)), vgpu_strerror(r));
	return 0;
}

int vgpu_record_remove(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *key)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char show[VGPU_SHOW_LEN];
	int r = vgpu_sysdir_open(fs, &d, VGPU_RECORDS_DIR);

	if (r == -ENOENT)
		return 0;
	if (r == 0)
		r = vgpu_sysfs_unlink(&d, key);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		struct vgpu_sysdir root;
		char rel[VGPU_PATH_MAX];

		vgpu_sysdir_root(fs, &root);
		snprintf(rel, sizeof(rel), "%s/%s", VGPU_RECORDS_DIR, key);
		return vgpu_error(ctx, r, "cannot remove owner record '%s': %s",
				  vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(r));
	}
	return 0;
}
