// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vGPU types and instances on both host interfaces:
 *  - mdev: <parent>/mdev_supported_types/nvidia-<N>/{name,description,
 *    available_instances,device_api}, instances under sys/bus/mdev/devices;
 *  - vendor VFIO: <VF>/nvidia/{creatable_vgpu_types,current_vgpu_type}.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "read-priv.h"

long vgpu_description_max_instance(const char *desc)
{
	const char *p = desc;

	/* "num_heads=4, frl_config=60, framebuffer=2048M, ..., max_instance=4" */
	while ((p = strstr(p, "max_instance="))) {
		if (p == desc || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\n') {
			char *end;
			long v = strtol(p + 13, &end, 10);

			if (end != p + 13 && v >= 0 && v <= VGPU_MAX_INSTANCES)
				return v;
			return -1;
		}
		p += 13;
	}
	return -1;
}

void vgpu_creatable_clear(struct vgpu_creatable *c)
{
	free(c->ids);
	vgpu_strv_clear(&c->names);
	c->ids = NULL;
}

/*
 * One line of creatable_vgpu_types.  Return: 0 and *id, *name set; 1 for the
 * header line ("ID    : vGPU Name": no type, skipped); -EINVAL.
 */
static int creatable_line(char *s, unsigned lineno, unsigned long *id, char **name)
{
	char *colon = strchr(s, ':'), *end;

	if (colon && !isdigit((unsigned char)*s) && lineno == 1)
		return 1; /* header: "ID    : vGPU Name" */
	if (!colon || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*id = strtoul(s, &end, 10);
	if (end == s || errno || *id == 0 || *id > (unsigned long)VGPU_MAX_TYPE_ID ||
	    *vgpu_strip(end) != ':' || end > colon)
		return -EINVAL;
	*name = vgpu_strip(colon + 1);
	return **name ? 0 : -EINVAL;
}

void vgpu_parse_creatable(const char *text, struct vgpu_creatable *out,
			  void (*bad_line)(void *data, unsigned lineno, const char *line),
			  void *data)
{
	size_t cap = 0;
	unsigned lineno = 0;

	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		VGPU_AUTOFREE char *line = NULL;
		unsigned long id;
		char *s, *name;
		int r;

		lineno++;
		if (l >= VGPU_NAME_FILE_MAX) {
			/* reported, never silently cut to a different name */
			line = vgpu_asprintf("%.40s...", p);
			p += l + (p[l] == '\n');
			if (bad_line)
				bad_line(data, lineno, line);
			continue;
		}
		line = vgpu_xstrndup(p, l);
		p += l + (p[l] == '\n');
		s = vgpu_strip(line);
		if (!*s)
			continue;
		r = creatable_line(s, lineno, &id, &name);
		if (r > 0)
			continue;
		if (r < 0) {
			if (bad_line)
				bad_line(data, lineno, s);
			continue;
		}
		if (out->names.n == cap) {
			cap = cap ? cap * 2 : 16;
			out->ids = vgpu_xreallocarray(out->ids, cap, sizeof(*out->ids));
		}
		out->ids[out->names.n] = (unsigned)id;
		vgpu_strv_push(&out->names, vgpu_xstrdup(name));
	}
}

/* A name from the host as text we can print: invalid UTF-8 replaced, with a warning. */
static char *host_text(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel,
		       const char *s)
{
	char show[VGPU_SHOW_LEN];

	if (vgpu_utf8_valid(s))
		return vgpu_xstrdup(s);
	vgpu_warn(ctx, "'%s' is not valid UTF-8; invalid bytes shown as U+FFFD",
		  VGPU_SHOW(d, rel, show));
	return vgpu_utf8_sanitize(s);
}

/*
 * Remember where a type's name came from: a name outside the grammar is
 * reported by the commands that list or choose types, not by every reader.
 */
static void set_source(const struct vgpu_sysdir *d, const char *rel, struct vgpu_type *t)
{
	char show[VGPU_SHOW_LEN];

	if (!t->source)
		t->source = vgpu_xstrdup(VGPU_SHOW(d, rel, show));
}

static int parse_mdev_type_dir(const char *dir, unsigned *id)
{
	long v;

	if (strncmp(dir, "nvidia-", 7) != 0 || vgpu_parse_long(dir + 7, &v) < 0 || v <= 0 ||
	    v > VGPU_MAX_TYPE_ID)
		return -EINVAL;
	*id = (unsigned)v;
	return 0;
}

/* Name, description and device_api of a type seen for the first time on @g. */
static struct vgpu_type *mdev_catalog_add(struct vgpu_ctx *ctx, const struct vgpu_sysdir *types,
					  struct vgpu_gpu *g, const char *dir, unsigned id)
{
	VGPU_AUTOFREE char *buf = vgpu_xmalloc(VGPU_NAME_FILE_MAX);
	VGPU_AUTOFREE char *name = NULL;
	char rel[VGPU_PATH_MAX];
	struct vgpu_type *t;
	int r;

	r = vgpu_path_join(rel, sizeof(rel), dir, "name");
	if (r == 0)
		r = vgpu_sysfs_read_str(types, buf, VGPU_NAME_FILE_MAX, "%s", rel);
	if (r == 0 && !*vgpu_strip(buf))
		r = -ENODATA;
	if (r < 0) {
		vgpu_warn_file_why(ctx, types, rel, r == -ENODATA ? "empty" : vgpu_strerror(r),
				   "; type skipped");
		return NULL;
	}
	name = host_text(ctx, types, rel, vgpu_strip(buf));
	t = vgpu_gpu_add_type(g, id, name);
	set_source(types, rel, t);
	r = vgpu_path_join(rel, sizeof(rel), dir, "description");
	if (r == 0)
		r = vgpu_sysfs_read_str(types, buf, VGPU_NAME_FILE_MAX, "%s", rel);
	if (r == 0) {
		/* descriptions may carry newlines; normalise them */
		for (char *c = buf; *c; c++)
			if (*c == '\n')
				*c = ' ';
		t->description = host_text(ctx, types, rel, vgpu_strip(buf));
		t->max_instances = vgpu_description_max_instance(t->description);
		if (t->max_instances < 0)
			vgpu_warn_file_why(ctx, types, rel, "no max_instance=", NULL);
		/* Kepler names (GRID K120Q) do not encode the framebuffer; the driver says it */
		if (!t->info.fb_mib && t->info.backing != VGPU_BACKING_UNKNOWN) {
			long fb = vgpu_description_framebuffer_mib(t->description);

			if (fb > 0)
				t->info.fb_mib = (unsigned)fb;
		}
	} else if (r != -ENOENT) {
		vgpu_warn_file(ctx, types, rel, r, NULL);
	}
	r = vgpu_path_join(rel, sizeof(rel), dir, "device_api");
	if (r == 0)
		r = vgpu_sysfs_read_str(types, buf, VGPU_NAME_FILE_MAX, "%s", rel);
	if (r == 0)
		t->device_api = host_text(ctx, types, rel, vgpu_strip(buf));
	else if (r != -ENOENT)
		vgpu_warn_file(ctx, types, rel, r, NULL);
	return t;
}

/*
 * A type id names the same type on every parent of a GPU (one driver type
 * table), so name, description and device_api are read once per GPU and
 * only available_instances per parent.
 */
static void read_mdev_parent(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g,
			     struct vgpu_parent *p)
{
	VGPU_AUTOSYSDIR types = { .fd = -1 };
	VGPU_AUTOSTRV ents = { 0 };
	char show[VGPU_SHOW_LEN];
	int r;

	struct vgpu_sysdir root;
	char rel[VGPU_PATH_MAX];

	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/mdev_supported_types", p->addr);
	r = vgpu_sysdir_open(fs, &types, "%s", rel);
	if (r == 0)
		r = vgpu_sysfs_list_dir(&types, &ents, "%s", "");
	if (r < 0) {
		vgpu_warn(ctx, "cannot list '%s': %s", VGPU_SHOW(&root, rel, show),
			  vgpu_strerror(r));
		return;
	}
	if (!ents.n) /* the driver always lists its types, creatable now or not */
		vgpu_warn(ctx, "'%s' is empty: no vGPU types", VGPU_SHOW(&root, rel, show));
	for (size_t i = 0; i < ents.n; i++) {
		const char *dir = ents.items[i];
		const struct vgpu_type *t;
		char rel[VGPU_PATH_MAX];
		unsigned id;
		long avail;

		if (parse_mdev_type_dir(dir, &id) < 0) {
			vgpu_warn(ctx, "'%s' is not an NVIDIA type directory (nvidia-<N>); skipped",
				  VGPU_SHOW(&types, dir, show));
			continue;
		}
		/*
		 * Every parent of a GPU lists the same sorted ids, so the i-th
		 * entry is nearly always the catalogue's i-th type: checked before
		 * the binary search, whose pointer chasing misses the cache after
		 * each read.
		 */
		if (i < g->n_types && g->types[i]->id == id)
			t = g->types[i];
		else
			t = vgpu_gpu_find_type(g, id);
		if (!t && !(t = mdev_catalog_add(ctx, &types, g, dir, id)))
			continue;
		r = vgpu_path_join(rel, sizeof(rel), dir, "available_instances");
		if (r == 0)
			r = vgpu_sysfs_read_long(&types, &avail, 0, VGPU_MAX_INSTANCES, "%s", rel);
		if (r < 0) {
			vgpu_warn_file_why(ctx, &types, rel,
					   r == -EINVAL ? "not a count" : vgpu_strerror(r),
					   "; type skipped");
			continue;
		}
		vgpu_parent_add_type(p, t, avail);
	}
}

struct bad_line_ctx {
	struct vgpu_ctx *ctx;
	const struct vgpu_sysdir *d;
	const char *rel;
};

static void creatable_bad_line(void *data, unsigned lineno, const char *line)
{
	struct bad_line_ctx *c = data;
	char show[VGPU_SHOW_LEN];

	vgpu_warn(c->ctx, "'%s' line %u: cannot parse '%s'; skipped", VGPU_SHOW(c->d, c->rel, show),
		  lineno, line);
}

/* current_vgpu_type and creatable_vgpu_types of one VF; the types go to @c. */
static void read_vfio_parent(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g,
			     struct vgpu_parent *p, struct vgpu_creatable *c)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	long cur;
	int r;

	r = vgpu_sysdir_open(fs, &d, "sys/bus/pci/devices/%s/nvidia", p->addr);
	if (r < 0) {
		struct vgpu_sysdir root;
		char rel[VGPU_PATH_MAX];

		vgpu_sysdir_root(fs, &root);
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/nvidia", p->addr);
		p->state_unknown = true;
		vgpu_warn_file(ctx, &root, rel, r, "; VF state unknown");
		return;
	}
	r = vgpu_sysfs_read_long(&d, &cur, 0, VGPU_MAX_TYPE_ID, "current_vgpu_type");
	if (r < 0) {
		vgpu_warn_file_why(ctx, &d, "current_vgpu_type",
				   r == -EINVAL ? "not a type id" : vgpu_strerror(r),
				   "; VF state unknown");
		p->state_unknown = true;
	} else {
		p->current_type = (unsigned)cur;
		p->in_use = cur != 0;
	}
	r = vgpu_sysfs_read_file(&d, 16u << 20, &text, NULL, "creatable_vgpu_types");
	if (r < 0) {
		vgpu_warn_file(ctx, &d, "creatable_vgpu_types", r, NULL);
		return;
	}
	struct bad_line_ctx bl = { ctx, &d, "creatable_vgpu_types" };

	vgpu_parse_creatable(text, c, creatable_bad_line, &bl);
	if (!c->names.n)
		return;
	/* the new ones in one merge: a list of 50,000 ids costs n log n, not n^2 */
	VGPU_AUTOFREE char **names = vgpu_xcalloc(c->names.n, sizeof(*names));
	VGPU_AUTOFREE struct vgpu_type **added = vgpu_xcalloc(c->names.n, sizeof(*added));

	for (size_t i = 0; i < c->names.n; i++)
		names[i] = vgpu_gpu_find_type(g, c->ids[i]) ?
				   NULL :
				   host_text(ctx, &d, "creatable_vgpu_types", c->names.items[i]);
	vgpu_gpu_add_types(g, c->ids, names, c->names.n, added);
	for (size_t i = 0; i < c->names.n; i++) {
		if (added[i])
			set_source(&d, "creatable_vgpu_types", added[i]);
		free(names[i]);
	}
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/*
 * creatable_vgpu_types is capacity-dependent, not a catalogue: the GPU's
 * catalogue is the union over its VFs, and a VF offers a type now (1) when
 * its own list names it, else 0.  Sorted ids keep this n log n.
 */
static void read_vfio_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g)
{
	struct vgpu_creatable *cs = vgpu_xcalloc(g->n_parents, sizeof(*cs));

	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].iface == VGPU_IFACE_VENDOR_VFIO)
			read_vfio_parent(ctx, fs, g, &g->parents[i], &cs[i]);
	for (size_t i = 0; i < g->n_parents; i++) {
		struct vgpu_parent *p = &g->parents[i];

		if (p->iface != VGPU_IFACE_VENDOR_VFIO)
			continue;
		if (cs[i].names.n)
			qsort(cs[i].ids, cs[i].names.n, sizeof(*cs[i].ids), cmp_uint);
		for (size_t k = 0; k < g->n_types; k++) {
			unsigned id = g->types[k]->id;
			bool offered = cs[i].names.n &&
				       bsearch(&id, cs[i].ids, cs[i].names.n, sizeof(id), cmp_uint);

			vgpu_parent_add_type(p, g->types[k], offered ? 1 : 0);
		}
	}
	for (size_t i = 0; i < g->n_parents; i++)
		vgpu_creatable_clear(&cs[i]);
	free(cs);
}

int vgpu_read_types(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g)
{
	if (g->iface == VGPU_IFACE_VENDOR_VFIO) {
		read_vfio_gpu(ctx, fs, g);
		return 0;
	}
	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].iface == VGPU_IFACE_MDEV)
			read_mdev_parent(ctx, fs, g, &g->parents[i]);
	return 0;
}

static struct vgpu_parent *find_parent(struct vgpu_model *m, const char *addr)
{
	for (size_t i = 0; i < m->n_gpus; i++)
		for (size_t j = 0; j < m->gpus[i].n_parents; j++)
			if (strcmp(m->gpus[i].parents[j].addr, addr) == 0)
				return &m->gpus[i].parents[j];
	return NULL;
}

/*
 * mdev instances: sys/bus/mdev/devices/<UUID> -> .../<parent BDF>/<UUID>,
 * with mdev_type -> ../mdev_supported_types/nvidia-<N>.  The bus directory
 * is absent while no mdev driver is loaded: no instances.
 */
int vgpu_mdev_locate(const struct vgpu_sysdir *root, const char *uuid, char parent[VGPU_BDF_LEN],
		     unsigned *type_id)
{
	char target[VGPU_PATH_MAX * 2], base[64];
	char *slash;
	int r = vgpu_sysfs_readlink(root, target, sizeof(target), "sys/bus/mdev/devices/%s", uuid);

	*type_id = 0;
	parent[0] = '\0';
	if (r < 0)
		return r;
	/* .../<parent BDF>/<uuid> */
	if ((slash = strrchr(target, '/')))
		*slash = '\0';
	slash = strrchr(target, '/');
	if (vgpu_bdf_normalize(slash ? slash + 1 : target, parent) < 0)
		parent[0] = '\0';
	if (vgpu_sysfs_link_basename(root, base, sizeof(base), "sys/bus/mdev/devices/%s/mdev_type",
				     uuid) < 0 ||
	    parse_mdev_type_dir(base, type_id) < 0)
		*type_id = 0;
	return 0;
}

int vgpu_read_mdevs(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m)
{
	VGPU_AUTOSTRV ents = { 0 };
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	bool any_mdev = false;
	int r;

	for (size_t i = 0; i < m->n_gpus; i++)
		any_mdev |= m->gpus[i].iface == VGPU_IFACE_MDEV;
	if (!any_mdev)
		return 0;
	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_list_dir(&root, &ents, "sys/bus/mdev/devices");
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		vgpu_warn_file(ctx, &root, "sys/bus/mdev/devices", r, "; mdevs not listed");
		return 0;
	}
	for (size_t i = 0; i < ents.n; i++) {
		char rel[VGPU_PATH_MAX], parent_addr[VGPU_BDF_LEN];
		struct stat st;
		struct vgpu_parent *p;
		unsigned id = 0;

		snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s", ents.items[i]);
		r = vgpu_mdev_locate(&root, ents.items[i], parent_addr, &id);
		if (r < 0) {
			vgpu_warn(ctx, "cannot read link '%s': %s; skipped",
				  VGPU_SHOW(&root, rel, show), vgpu_strerror(r));
			continue;
		}
		if (vgpu_sysfs_stat(&root, &st, "%s", rel) < 0 || !S_ISDIR(st.st_mode)) {
			vgpu_warn(ctx, "'%s' is a link to nothing; skipped",
				  VGPU_SHOW(&root, rel, show));
			continue;
		}
		if (!parent_addr[0])
			continue; /* not below a PCI function: another kind of parent */
		p = find_parent(m, parent_addr);
		if (!p)
			continue; /* an mdev of another vendor's parent */
		if (!vgpu_utf8_valid(ents.items[i]) || strlen(ents.items[i]) != 36) {
			vgpu_warn(ctx, "'%s' is not an mdev UUID; skipped",
				  VGPU_SHOW(&root, rel, show));
			continue;
		}
		if (!id) {
			snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s/mdev_type",
				 ents.items[i]);
			vgpu_warn(ctx, "cannot read link '%s'; type of mdev %s unknown",
				  VGPU_SHOW(&root, rel, show), ents.items[i]);
		}
		vgpu_strv_push(&p->mdevs, vgpu_xstrdup(ents.items[i]));
		p->in_use = true;
		if (!p->current_type)
			p->current_type = id;
	}
	return 0;
}
