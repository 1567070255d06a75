// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-records - owner records (src/lib/records.c) in a temporary root:
 * written, read back, replaced and removed; damaged files warned about and
 * skipped while their parents stay taken; the state of a record's vGPU on
 * the host (vgpu_host_record_state); and what concurrent runs rely on: a
 * reader sees the old record or the new one, never a part, a failed write
 * leaves the old one, and the temporaries of killed writers are swept.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "read-host.h"
#include "records.h"
#include "test-util.h"

#define VF1 "0000:3b:00.4"
#define VF2 "0000:3b:00.5"
#define PF "0000:3b:00.0"
#define MDEV_PF "0000:5e:00.0"
#define U1 "0a5c3a1e-1b2c-4d5e-8f90-123456789abc"
#define U2 "1b6d4b2f-2c3d-4e6f-9a01-23456789abcd"
#define DOM_UUID "6f1d2c3b-4a59-4e8d-9c7b-0a1b2c3d4e5f"
#define OWNERS VGPU_RECORDS_DIR

/* A temporary root, opened, with the warnings its context collected. */
struct fx {
	char root[1024];
	char shm[1024]; /* a second root in /dev/shm, removed at teardown; "" none */
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs;
	struct warnings warn;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	tree_make(f->root, sizeof(f->root), "records");
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	if (vgpu_sysfs_open(&f->ctx, f->root, &f->fs) != 0)
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	vgpu_sysfs_free(f->fs);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
	tree_remove(f->root);
	tree_remove(f->shm);
	free(f);
	return 0;
}

#define fx_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* A valid vendor-VFIO record of @domain on @parent. */
static struct vgpu_record vfio_rec(const char *domain, const char *parent, unsigned type)
{
	return test_record(domain, DOM_UUID, PF, parent, type, "A30-6C");
}

/* A valid mdev record of @domain: mdev @uuid on @parent. */
static struct vgpu_record mdev_rec(const char *domain, const char *parent, const char *uuid)
{
	struct vgpu_record r = vfio_rec(domain, parent, 256);

	snprintf(r.gpu, sizeof(r.gpu), "%s", parent);
	r.iface = VGPU_IFACE_MDEV;
	snprintf(r.mdev_uuid, sizeof(r.mdev_uuid), "%s", uuid);
	snprintf(r.profile, sizeof(r.profile), "T4-4Q");
	return r;
}

static void write_ok(struct fx *f, const struct vgpu_record *r)
{
	int e = vgpu_record_write(&f->ctx, f->fs, r);

	if (e != 0)
		fail_msg("vgpu_record_write() = %d: %s", e, vgpu_ctx_error(&f->ctx));
}

static void read_ok(struct fx *f, struct vgpu_records *rs)
{
	int e = vgpu_records_read(&f->ctx, f->fs, rs);

	if (e != 0)
		fail_msg("vgpu_records_read() = %d: %s", e, vgpu_ctx_error(&f->ctx));
}

static void assert_same_record(const struct vgpu_record *a, const struct vgpu_record *b)
{
	char fa[4096], fb[4096];
	char *ta = vgpu_record_format(a), *tb = vgpu_record_format(b);

	snprintf(fa, sizeof(fa), "%s", ta);
	snprintf(fb, sizeof(fb), "%s", tb);
	free(ta);
	free(tb);
	assert_string_equal(fa, fb);
	assert_int_equal(a->lifetime, b->lifetime);
	assert_int_equal(a->iface, b->iface);
	assert_int_equal(a->type_id, b->type_id);
}

/* The names in ROOT/var/lib/vgpuctl/owners, dot files included, space-separated. */
static void owners_listing(struct fx *f, char *buf, size_t len)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV names = { 0 };

	buf[0] = '\0';
	if (vgpu_sysdir_open(f->fs, &d, OWNERS) < 0 || vgpu_sysfs_list_dir(&d, &names, ".") < 0)
		return;
	for (size_t i = 0; i < names.n; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, "%s%s", i ? " " : "", names.items[i]);
	}
}

/* ---- written, read, replaced, removed ------------------------------------------------ */

/* Both kinds come back as written, sorted by key, in files named by their keys. */
static void test_write_read_roundtrip(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm-b", VF2, 557), b = mdev_rec("vm-a", MDEV_PF, U1);
	VGPU_AUTORECORDS rs = { 0 };
	char names[512];
	struct stat st;
	char path[2048];

	b.lifetime = VGPU_LIFETIME_PER_START;
	parse_cpus("2-5,10", &b.cpus);
	write_ok(f, &a);
	write_ok(f, &b);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, VF2 " " MDEV_PF "_" U1);
	snprintf(path, sizeof(path), "%s/%s", f->root, OWNERS);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	read_ok(f, &rs);
	assert_int_equal(rs.n, 2);
	assert_int_equal(rs.damaged_parents.n, 0);
	assert_same_record(&rs.v[0], &a); /* "0000:3b:..." before "0000:5e:..." */
	assert_same_record(&rs.v[1], &b);
	assert_cpus(&rs.v[1].cpus, "2-5,10");
	assert_int_equal(rs.v[1].lifetime, VGPU_LIFETIME_PER_START);
	assert_no_warnings(&f->warn);
}

/* A second write of the same vGPU replaces its record: one file, the new content. */
static void test_write_replaces(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm-old", VF1, 557), b = vfio_rec("vm-new", VF1, 558);
	VGPU_AUTORECORDS rs = { 0 };
	char names[512];

	write_ok(f, &a);
	write_ok(f, &b);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, VF1); /* no temporary left behind */
	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.v[0].domain, "vm-new");
	assert_int_equal(rs.v[0].type_id, 558);
}

/* Removing drops the file; removing what is not there, or with no directory, is fine. */
static void test_remove(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm", VF1, 557), b = vfio_rec("vm", VF2, 557);
	VGPU_AUTORECORDS rs = { 0 };
	char names[512];

	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, VF1), 0); /* no directory yet */
	write_ok(f, &a);
	write_ok(f, &b);
	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, VF1), 0);
	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, VF1), 0); /* gone already */
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, VF2);
	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.v[0].parent, VF2);
}

/* A key that is not one file name never becomes a path outside the directory. */
static void test_keys_stay_inside(void **state)
{
	struct fx *f = *state;
	struct vgpu_record r = vfio_rec("vm", "../../../../etc", 557);
	char path[2048];
	struct stat st;

	assert_int_equal(vgpu_record_write(&f->ctx, f->fs, &r), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "cannot write owner record"));
	snprintf(path, sizeof(path), "%s/etc", f->root);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, "../lock"), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "cannot remove owner record"));
}

/* A record that cannot be removed (a directory in its place) is an error naming it. */
static void test_remove_fails(void **state)
{
	struct fx *f = *state;

	tree_dir(f->root, OWNERS "/" VF1);
	assert_true(vgpu_record_remove(&f->ctx, f->fs, VF1) < 0);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), OWNERS "/" VF1));
}

/* No directory: no records, and nothing to warn about. */
static void test_read_no_dir(void **state)
{
	struct fx *f = *state;
	VGPU_AUTORECORDS rs = { 0 };

	read_ok(f, &rs);
	assert_int_equal(rs.n, 0);
	assert_int_equal(rs.damaged_parents.n, 0);
	assert_no_warnings(&f->warn);
}

/* ---- damage --------------------------------------------------------------------------- */

/* The lines of a valid record of @parent, @drop left out, @extra added. */
static void record_text(char *buf, size_t len, const char *parent, const char *drop,
			const char *extra)
{
	struct vgpu_record r = vfio_rec("vm", parent, 557);
	char *text = vgpu_record_format(&r), *save = NULL;

	buf[0] = '\0';
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(buf);

		if (drop && strncmp(line, drop, strlen(drop)) == 0)
			continue;
		snprintf(buf + l, len - l, "%s\n", line);
	}
	if (extra) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, "%s", extra);
	}
	free(text);
}

/*
 * Every kind of damage is warned about once, names its file and is skipped,
 * and its parent (from the file name) still counts as taken.
 */
static void test_damaged_warned_and_skipped(void **state)
{
	struct fx *f = *state;
	struct vgpu_record good = vfio_rec("vm", "0000:3b:00.7", 557);
	VGPU_AUTORECORDS rs = { 0 };
	char text[4096], big[5000];
	static const char *const damaged[] = {
		"0000:3b:01.0", "0000:3b:01.1", "0000:3b:01.2",
		"0000:3b:01.3", "0000:3b:01.4", "0000:3b:01.5",
		"0000:3b:01.6", "0000:3b:01.7", ("0000:3c:00.0_" U2),
	};

	write_ok(f, &good);
	tree_put(f->root, OWNERS "/0000:3b:01.0", "hello\n"); /* not key=value */
	record_text(text, sizeof(text), "0000:3b:01.1", "lifetime=", NULL); /* a key missing */
	tree_put(f->root, OWNERS "/0000:3b:01.1", text);
	record_text(text, sizeof(text), "0000:3b:01.2", NULL, "type_id=557\n"); /* a key twice */
	tree_put(f->root, OWNERS "/0000:3b:01.2", text);
	record_text(text, sizeof(text), "0000:3b:01.3", "type_id=", "type_id=16777216\n");
	tree_put(f->root, OWNERS "/0000:3b:01.3", text); /* out of range */
	record_text(text, sizeof(text), "0000:3b:01.5", NULL, NULL); /* names another vGPU */
	tree_put(f->root, OWNERS "/0000:3b:01.4", text);
	record_text(text, sizeof(text), "0000:3b:01.5", NULL, NULL);
	tree_put_len(f->root, OWNERS "/0000:3b:01.5", text, strlen(text) + 1); /* a NUL inside */
	memset(big, 'x', sizeof(big));
	tree_put_len(f->root, OWNERS "/0000:3b:01.6", big, sizeof(big)); /* too large */
	tree_dir(f->root, OWNERS "/0000:3b:01.7"); /* not a file */
	tree_put(f->root, OWNERS "/0000:3c:00.0_" U2, "domain=vm\n");
	tree_put(f->root, OWNERS "/junk", "hello\n"); /* names no parent */

	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.v[0].parent, "0000:3b:00.7");
	assert_int_equal(f->warn.n, ARRAY_SIZE(damaged) + 1);
	for (size_t i = 0; i < ARRAY_SIZE(damaged); i++) {
		bool warned = false;

		for (size_t k = 0; k < f->warn.n; k++)
			warned |= strstr(f->warn.msgs[k], damaged[i]) != NULL &&
				  strstr(f->warn.msgs[k], "it still counts as taken") != NULL;
		if (!warned)
			fail_msg("no warning names the damaged record %s", damaged[i]);
		assert_string_equal(rs.damaged_keys.items[i], damaged[i]); /* sorted */
	}
	assert_int_equal(rs.damaged_keys.n, ARRAY_SIZE(damaged));
	assert_int_equal(rs.damaged_parents.n, ARRAY_SIZE(damaged));
	assert_string_equal(rs.damaged_parents.items[8], "0000:3c:00.0"); /* the key's parent */
	assert_true(vgpu_records_parent_taken(&rs, "0000:3b:01.4"));
	assert_true(vgpu_records_parent_taken(&rs, "0000:3c:00.0"));
	assert_true(vgpu_records_parent_taken(&rs, "0000:3b:00.7"));
	assert_false(vgpu_records_parent_taken(&rs, "0000:3b:00.6"));
}

/* A writer's temporary file is no record: skipped without a word. */
static void test_temporaries_skipped(void **state)
{
	struct fx *f = *state;
	VGPU_AUTORECORDS rs = { 0 };

	tree_put(f->root, OWNERS "/." VF1 ".12345.tmp", "domain=half");
	read_ok(f, &rs);
	assert_int_equal(rs.n, 0);
	assert_int_equal(rs.damaged_parents.n, 0);
	assert_no_warnings(&f->warn);
}

/* ---- the text of a record -------------------------------------------------------------- */

static int parse(struct fx *f, const char *text, struct vgpu_record *out)
{
	vgpu_ctx_clear(&f->ctx);
	return vgpu_record_parse(&f->ctx, text, "REC", out);
}

/* Values are validated and normalized; every key once; mdev_uuid fits the interface. */
static void test_parse_rules(void **state)
{
	struct fx *f = *state;
	struct vgpu_record out, m = mdev_rec("vm", MDEV_PF, U1);
	char text[4096];
	char *t;

	record_text(text, sizeof(text), VF1, "parent=", "parent=0000:3B:00.4\n");
	assert_int_equal(parse(f, text, &out), 0);
	assert_string_equal(out.parent, VF1);
	assert_int_equal(out.lifetime, VGPU_LIFETIME_PERSISTENT);
	assert_true(vgpu_cpuset_empty(&out.cpus));

	record_text(text, sizeof(text), VF1, "type_id=", "type_id=16777215\n");
	assert_int_equal(parse(f, text, &out), 0);
	assert_int_equal(out.type_id, 0xffffff);
	record_text(text, sizeof(text), VF1, "type_id=", "type_id=0\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "owner record 'REC'"));
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "type_id"));

	record_text(text, sizeof(text), VF1, "lifetime=", "lifetime=forever\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, "lifetime=", "lifetime=per-start\n");
	assert_int_equal(parse(f, text, &out), 0);
	assert_int_equal(out.lifetime, VGPU_LIFETIME_PER_START);
	record_text(text, sizeof(text), VF1, "interface=", "interface=none\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, NULL, "colour=blue\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, "domain=", "domain=a/b\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, "cpus=", "cpus=0-3\n");
	assert_int_equal(parse(f, text, &out), 0);
	assert_cpus(&out.cpus, "0-3");

	/* vendor VFIO with an mdev UUID, mdev without one */
	record_text(text, sizeof(text), VF1, "mdev_uuid=", "mdev_uuid=" U1 "\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "does not fit"));
	t = vgpu_record_format(&m);
	assert_int_equal(parse(f, t, &out), 0);
	assert_same_record(&out, &m);
	free(t);
	m.mdev_uuid[0] = '\0';
	t = vgpu_record_format(&m);
	assert_int_equal(parse(f, t, &out), -EINVAL);
	free(t);

	/* written only on success */
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(parse(f, "domain=vm\n", &out), -EINVAL);
	assert_int_equal((unsigned char)out.domain[0], 0x5a);
}

/* ---- lookups and the model ------------------------------------------------------------ */

static void test_find(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm", VF1, 557), b = mdev_rec("vm", MDEV_PF, U1),
			   c = mdev_rec("vm", MDEV_PF, U2);
	VGPU_AUTORECORDS rs = { 0 };

	write_ok(f, &a);
	write_ok(f, &b);
	write_ok(f, &c);
	read_ok(f, &rs);
	assert_string_equal(vgpu_records_find(&rs, VF1, NULL)->parent, VF1);
	assert_null(vgpu_records_find(&rs, VF2, NULL));
	assert_string_equal(vgpu_records_find(&rs, MDEV_PF, U2)->mdev_uuid, U2);
	assert_null(vgpu_records_find(&rs, VF1, U2));
	/* an mdev is found by its UUID alone: the hook may have moved it to another parent */
	assert_string_equal(vgpu_records_find_vgpu(&rs, "0000:5e:00.1", U1)->mdev_uuid, U1);
	assert_string_equal(vgpu_records_find_vgpu(&rs, VF1, "")->parent, VF1);
	assert_null(vgpu_records_find_vgpu(&rs, VF2, NULL));
	assert_true(vgpu_records_parent_taken(&rs, MDEV_PF));
	assert_false(vgpu_records_parent_taken(&rs, VF2));
}

/* A recorded vGPU that is there is claimed; one that is not is reserved; damage reserves. */
static void test_apply_to_model(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(model) m = vgpu_model_new();
	struct vgpu_gpu *g = vgpu_model_add_gpu(m, PF, 0x20b7);
	struct vgpu_parent *p;
	const struct vgpu_parent *q;
	struct vgpu_records rs = { 0 };
	struct vgpu_record v[] = { vfio_rec("vm", VF1, 557), vfio_rec("vm", VF2, 558),
				   vfio_rec("vm", "0000:99:00.4", 557) };

	p = vgpu_gpu_add_parent(g, VF1, 0);
	p->in_use = true;
	vgpu_gpu_add_parent(g, VF2, 1);
	vgpu_gpu_add_parent(g, "0000:3b:00.6", 2);
	g = vgpu_model_add_gpu(m, MDEV_PF, 0x1eb8);
	p = vgpu_gpu_add_parent(g, MDEV_PF, -1);
	vgpu_strv_push(&p->mdevs, vgpu_xstrdup(U1));
	rs.v = vgpu_xcalloc(5, sizeof(*rs.v));
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		rs.v[rs.n++] = v[i];
	rs.v[rs.n++] = mdev_rec("vm", MDEV_PF, U1);
	rs.v[rs.n++] = mdev_rec("vm", MDEV_PF, U2);
	vgpu_strv_push(&rs.damaged_parents, vgpu_xstrdup("0000:3b:00.6"));

	vgpu_records_apply(&rs, m);
	q = vgpu_model_find_parent(m, VF1); /* there: claimed */
	assert_int_equal(q->n_claimed, 1);
	assert_int_equal(q->n_reserved, 0);
	q = vgpu_model_find_parent(m, VF2); /* not there: reserved, of its type */
	assert_int_equal(q->n_claimed, 0);
	assert_int_equal(q->n_reserved, 1);
	assert_int_equal(q->reserved_type, 558);
	q = vgpu_model_find_parent(m, "0000:3b:00.6"); /* damaged: reserved, type unknown */
	assert_int_equal(q->n_reserved, 1);
	assert_int_equal(q->reserved_type, 0);
	q = vgpu_model_find_parent(m, MDEV_PF); /* U1 there, U2 not */
	assert_int_equal(q->n_claimed, 1);
	assert_int_equal(q->n_reserved, 1);
	vgpu_records_clear(&rs);
	(void)f;
}

/* ---- the state of a record's vGPU on the host ------------------------------------------ */

static enum vgpu_state state_of(struct fx *f, const struct vgpu_record *r)
{
	return vgpu_host_record_state(&f->ctx, f->fs, r);
}

/* An mdev @uuid on @parent of type nvidia-@type, as sysfs links it. */
static void put_mdev(struct fx *f, const char *uuid, const char *parent, unsigned type)
{
	char rel[512], target[512];

	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/%s", parent, uuid);
	tree_dir(f->root, rel);
	snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s", uuid);
	snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s/%s", parent, uuid);
	tree_link(f->root, rel, target);
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/%s/mdev_type", parent, uuid);
	snprintf(target, sizeof(target), "../mdev_supported_types/nvidia-%u", type);
	tree_link(f->root, rel, target);
}

static void test_states(void **state)
{
	struct fx *f = *state;
	struct vgpu_record r = vfio_rec("vm", VF1, 557), m = mdev_rec("vm", MDEV_PF, U1);
	const char *attr = "sys/bus/pci/devices/" VF1 "/nvidia/current_vgpu_type";

	assert_int_equal(state_of(f, &r), VGPU_STATE_UNKNOWN); /* the VF cannot be read */
	assert_int_equal(f->warn.n, 1);
	assert_non_null(strstr(f->warn.msgs[0], "current_vgpu_type"));
	tree_put(f->root, attr, "557\n");
	assert_int_equal(state_of(f, &r), VGPU_STATE_ACTIVE);
	tree_put(f->root, attr, "558\n");
	assert_int_equal(state_of(f, &r), VGPU_STATE_CONFLICT);
	tree_put(f->root, attr, "0\n");
	assert_int_equal(state_of(f, &r), VGPU_STATE_MISSING);
	r.lifetime = VGPU_LIFETIME_PER_START;
	assert_int_equal(state_of(f, &r), VGPU_STATE_RESERVED);

	assert_int_equal(state_of(f, &m), VGPU_STATE_MISSING);
	put_mdev(f, U1, MDEV_PF, 256);
	assert_int_equal(state_of(f, &m), VGPU_STATE_ACTIVE);
	put_mdev(f, U2, "0000:5e:00.1", 256); /* the UUID on another parent */
	snprintf(m.mdev_uuid, sizeof(m.mdev_uuid), "%s", U2);
	assert_int_equal(state_of(f, &m), VGPU_STATE_CONFLICT);
	assert_int_equal(f->warn.n, 1);

	assert_string_equal(vgpu_state_str(VGPU_STATE_ACTIVE), "active");
	assert_string_equal(vgpu_state_str(VGPU_STATE_RESERVED), "reserved");
	assert_string_equal(vgpu_state_str(VGPU_STATE_MISSING), "missing");
	assert_string_equal(vgpu_state_str(VGPU_STATE_DAMAGED), "damaged");
}

/*
 * The fabric partition: written only when set (partition 0, the whole board,
 * is one), read back; a record without the line has none, as before.
 */
static void test_partition(void **state)
{
	struct fx *f = *state;
	struct vgpu_record out, in = vfio_rec("vm", VF1, 557);
	VGPU_AUTORECORDS rs = { 0 };
	char text[4096];
	char *t;

	t = vgpu_record_format(&in);
	assert_null(strstr(t, "partition="));
	free(t);
	record_text(text, sizeof(text), VF1, NULL, NULL);
	assert_int_equal(parse(f, text, &out), 0);
	assert_false(out.partitioned);

	in.partitioned = true;
	in.partition = 0;
	t = vgpu_record_format(&in);
	assert_non_null(strstr(t, "\npartition=0\n"));
	assert_int_equal(parse(f, t, &out), 0);
	free(t);
	assert_true(out.partitioned);
	assert_int_equal(out.partition, 0);

	in.partition = 12;
	assert_int_equal(vgpu_record_write(&f->ctx, f->fs, &in), 0);
	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_true(rs.v[0].partitioned);
	assert_int_equal(rs.v[0].partition, 12);
	assert_same_record(&rs.v[0], &in);

	record_text(text, sizeof(text), VF1, NULL, "partition=-1\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "partition"));
	record_text(text, sizeof(text), VF1, NULL, "partition=two\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, NULL, "partition=3\npartition=4\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
}

/* ---- incoming records (a domain migrating here) ----------------------------------------- */

/* An incoming record keeps its state and deadline; a record without them is active, as before. */
static void test_incoming_parse(void **state)
{
	struct fx *f = *state;
	struct vgpu_record out, in = vfio_rec("vm", VF1, 557);
	char text[4096];
	char *t;

	record_text(text, sizeof(text), VF1, NULL, NULL); /* a record before migration existed */
	assert_null(strstr(text, "state="));
	assert_int_equal(parse(f, text, &out), 0);
	assert_int_equal(out.state, VGPU_RECORD_ACTIVE);
	assert_int_equal(out.deadline, 0);

	in.state = VGPU_RECORD_INCOMING;
	in.deadline = 1900000000;
	t = vgpu_record_format(&in);
	assert_non_null(strstr(t, "state=incoming\ndeadline=1900000000\n"));
	assert_int_equal(parse(f, t, &out), 0);
	free(t);
	assert_int_equal(out.state, VGPU_RECORD_INCOMING);
	assert_true(out.deadline == 1900000000);
	assert_string_equal(vgpu_record_state_str(out.state), "incoming");

	record_text(text, sizeof(text), VF1, NULL, "state=active\n");
	assert_int_equal(parse(f, text, &out), 0);
	assert_int_equal(out.state, VGPU_RECORD_ACTIVE);
	record_text(text, sizeof(text), VF1, NULL, "state=incoming\n"); /* no deadline */
	assert_int_equal(parse(f, text, &out), -EINVAL);
	assert_non_null(
		strstr(vgpu_ctx_error(&f->ctx), "'deadline' does not fit state 'incoming'"));
	record_text(text, sizeof(text), VF1, NULL, "deadline=1900000000\n"); /* no state */
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, NULL, "state=leaving\ndeadline=1900000000\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, NULL, "state=incoming\ndeadline=0\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
	record_text(text, sizeof(text), VF1, NULL, "state=incoming\ndeadline=soon\n");
	assert_int_equal(parse(f, text, &out), -EINVAL);
}

/* The deadline is written only when it lies ahead, at most an hour; else nothing is written. */
static void test_incoming_deadline_bounds(void **state)
{
	struct fx *f = *state;
	struct vgpu_record r = vfio_rec("vm", VF1, 557);
	VGPU_AUTORECORDS rs = { 0 };
	long long now = (long long)time(NULL);
	char names[512];

	r.state = VGPU_RECORD_INCOMING;
	r.deadline = now + VGPU_INCOMING_MAX_S + 60;
	assert_int_equal(vgpu_record_write(&f->ctx, f->fs, &r), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "deadline"));
	r.deadline = now - 1;
	vgpu_ctx_clear(&f->ctx);
	assert_int_equal(vgpu_record_write(&f->ctx, f->fs, &r), -EINVAL);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, "");

	r.deadline = now + VGPU_INCOMING_MAX_S - 5;
	write_ok(f, &r);
	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_int_equal(rs.v[0].state, VGPU_RECORD_INCOMING);
	assert_true(rs.v[0].deadline == r.deadline);
	assert_false(vgpu_record_expired(&rs.v[0], now));
	assert_true(vgpu_record_expired(&rs.v[0], r.deadline));
}

/*
 * An expired incoming record is dropped by the next writer (its file goes),
 * a live one and the active ones stay; a dry run drops it from memory only;
 * and until it is dropped it holds no capacity.
 */
static void test_incoming_expired_dropped(void **state)
{
	struct fx *f = *state;
	struct vgpu_record act = vfio_rec("vm-a", VF1, 557), live = vfio_rec("vm-b", VF2, 557);
	struct vgpu_records rs = { 0 };
	long long now = (long long)time(NULL);
	char text[4096], names[512];
	VGPU_AUTOPTR(model) m = vgpu_model_new();
	struct vgpu_gpu *g = vgpu_model_add_gpu(m, PF, 0x20b7);

	live.state = VGPU_RECORD_INCOMING;
	live.deadline = now + 600;
	write_ok(f, &act);
	write_ok(f, &live);
	/* written an hour ago: its deadline has passed */
	record_text(text, sizeof(text), "0000:3b:00.6", NULL, "state=incoming\ndeadline=1000\n");
	tree_put(f->root, OWNERS "/0000:3b:00.6", text);

	read_ok(f, &rs);
	assert_int_equal(rs.n, 3);
	vgpu_gpu_add_parent(g, "0000:3b:00.6", 2);
	vgpu_gpu_add_parent(g, VF2, 1);
	vgpu_records_apply(&rs, m);
	assert_int_equal(vgpu_model_find_parent(m, "0000:3b:00.6")->n_reserved, 0);
	assert_int_equal(vgpu_model_find_parent(m, VF2)->n_reserved, 1); /* held until it arrives */

	assert_int_equal(vgpu_records_drop_expired(&f->ctx, NULL, &rs, now), 1); /* a dry run */
	assert_int_equal(rs.n, 2);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, "0000:3b:00.4 0000:3b:00.5 0000:3b:00.6");
	vgpu_records_clear(&rs);

	read_ok(f, &rs);
	assert_int_equal(vgpu_records_drop_expired(&f->ctx, f->fs, &rs, now), 1);
	assert_int_equal(rs.n, 2);
	assert_string_equal(rs.v[0].parent, VF1);
	assert_string_equal(rs.v[1].parent, VF2);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, "0000:3b:00.4 0000:3b:00.5");
	assert_int_equal(vgpu_records_drop_expired(&f->ctx, f->fs, &rs, now), 0);
	/* past its deadline the live one goes too */
	assert_int_equal(vgpu_records_drop_expired(&f->ctx, f->fs, &rs, now + 601), 1);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, "0000:3b:00.4");
	vgpu_records_clear(&rs);
}

/* An incoming record whose vGPU is not there yet is "incoming"; once made, "active". */
static void test_incoming_state(void **state)
{
	struct fx *f = *state;
	struct vgpu_record r = vfio_rec("vm", VF1, 557);
	const char *attr = "sys/bus/pci/devices/" VF1 "/nvidia/current_vgpu_type";

	r.state = VGPU_RECORD_INCOMING;
	r.deadline = (long long)time(NULL) + 600;
	tree_put(f->root, attr, "0\n");
	assert_int_equal(state_of(f, &r), VGPU_STATE_INCOMING);
	assert_string_equal(vgpu_state_str(VGPU_STATE_INCOMING), "incoming");
	tree_put(f->root, attr, "557\n");
	assert_int_equal(state_of(f, &r), VGPU_STATE_ACTIVE);
}

/* ---- what concurrent runs rely on ------------------------------------------------------- */

/*
 * A reader never sees a part of a record: while another process replaces
 * one record with two versions of different lengths as fast as it can,
 * every read finds exactly one record, whole, of one version or the other.
 */
static void test_replace_atomic_under_reads(void **state)
{
	struct fx *f = *state;
	struct vgpu_sysfs *disk = f->fs;
	struct vgpu_record a = vfio_rec("short", VF1, 557);
	struct vgpu_record b = vfio_rec("a-much-longer-domain-name-than-the-other-one", VF1, 558);
	size_t reads = 0, seen_a = 0, seen_b = 0;
	int status;
	pid_t pid;

	parse_cpus("0-63", &b.cpus);
	/*
	 * In memory where there is a tmpfs: a rename is as atomic there, and
	 * 1500 fsync()s on a disk take longer than a unit test may.
	 */
	if (access("/dev/shm", W_OK) == 0) {
		char shm[1024];
		int n = snprintf(shm, sizeof(shm), "/dev/shm/vgpu-records-XXXXXX");

		assert_true(n > 0 && (size_t)n < sizeof(shm) && mkdtemp(shm));
		assert_int_equal(vgpu_sysfs_open(&f->ctx, shm, &f->fs), 0);
		snprintf(f->shm, sizeof(f->shm), "%s", shm);
	}
	write_ok(f, &a);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct vgpu_ctx ctx;

		vgpu_ctx_init(&ctx, NULL, NULL);
		for (int i = 0; i < 1500; i++)
			if (vgpu_record_write(&ctx, f->fs, i % 2 ? &a : &b) != 0)
				_exit(1);
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		VGPU_AUTORECORDS rs = { 0 };

		read_ok(f, &rs);
		reads++;
		if (rs.n != 1 || rs.damaged_keys.n)
			fail_msg("read %zu: %zu records, %zu damaged (%s)", reads, rs.n,
				 rs.damaged_keys.n, f->warn.n ? f->warn.msgs[0] : "no warning");
		if (strcmp(rs.v[0].domain, a.domain) == 0)
			seen_a++;
		else if (strcmp(rs.v[0].domain, b.domain) == 0 && rs.v[0].type_id == 558)
			seen_b++;
		else
			fail_msg("read %zu: a record of neither version", reads);
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_no_warnings(&f->warn);
	assert_int_equal(seen_a + seen_b, reads);
	assert_true(reads > 0);
	if (f->fs != disk) {
		vgpu_sysfs_free(f->fs);
		f->fs = disk;
	}
}

/* A write that fails leaves the old record whole, and says which file. */
static void test_failed_write_keeps_old(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm-old", VF1, 557), b = vfio_rec("vm-new", VF1, 558);
	VGPU_AUTORECORDS rs = { 0 };
	char tmp[512];

	write_ok(f, &a);
	/* this process's temporary file name taken by a directory: the write cannot start */
	snprintf(tmp, sizeof(tmp), OWNERS "/." VF1 ".%ld.tmp", (long)getpid());
	tree_dir(f->root, tmp);
	assert_true(vgpu_record_write(&f->ctx, f->fs, &b) < 0);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "cannot write owner record"));
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), VF1));
	read_ok(f, &rs);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.v[0].domain, "vm-old");
	assert_int_equal(rs.v[0].type_id, 557);
	assert_no_warnings(&f->warn);
}

/* A PID that names no process now: a child that has exited and been reaped. */
static long dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

/* @rel's modification time set @age_s seconds back. */
static void age(struct fx *f, const char *rel, long age_s)
{
	char path[2048];
	struct timespec ts[2];

	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/*
 * The next write sweeps what a killed writer left (its PID gone, untouched
 * for a minute), and nothing a writer may still be busy with.
 */
static void test_stale_temporaries_swept(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = vfio_rec("vm", VF1, 557);
	char stale[256], fresh[256], alive[256], names[1024], want[1024];
	long dead = dead_pid();

	snprintf(stale, sizeof(stale), "." VF2 ".%ld.tmp", dead);
	snprintf(fresh, sizeof(fresh), ".0000:3b:00.6.%ld.tmp", dead);
	snprintf(alive, sizeof(alive), ".0000:3b:00.7.%ld.tmp", (long)getppid());
	char rel[512];

	snprintf(stale, sizeof(stale), "." VF2 ".%ld.tmp", dead);
	snprintf(fresh, sizeof(fresh), ".0000:3b:00.6.%ld.tmp", dead);
	snprintf(alive, sizeof(alive), ".0000:3b:00.7.%ld.tmp", (long)getppid());
	snprintf(rel, sizeof(rel), OWNERS "/%s", stale);
	tree_put(f->root, rel, "domain=half");
	age(f, rel, 3600);
	snprintf(rel, sizeof(rel), OWNERS "/%s", fresh);
	tree_put(f->root, rel, "domain=half");
	snprintf(rel, sizeof(rel), OWNERS "/%s", alive);
	tree_put(f->root, rel, "domain=half");
	age(f, rel, 3600);

	write_ok(f, &a);
	owners_listing(f, names, sizeof(names));
	/* strverscmp order: ".0000:3b:00.6..." ".0000:3b:00.7..." "0000:3b:00.4" */
	snprintf(want, sizeof(want), "%s %s " VF1, fresh, alive);
	assert_string_equal(names, want);

	/* a removal sweeps too, once the writer is gone long enough */
	snprintf(rel, sizeof(rel), OWNERS "/%s", fresh);
	age(f, rel, 3600);
	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, VF1), 0);
	owners_listing(f, names, sizeof(names));
	assert_string_equal(names, alive);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		fx_test(test_write_read_roundtrip),
		fx_test(test_write_replaces),
		fx_test(test_remove),
		fx_test(test_keys_stay_inside),
		fx_test(test_remove_fails),
		fx_test(test_read_no_dir),
		fx_test(test_damaged_warned_and_skipped),
		fx_test(test_temporaries_skipped),
		fx_test(test_parse_rules),
		fx_test(test_find),
		fx_test(test_apply_to_model),
		fx_test(test_states),
		fx_test(test_partition),
		fx_test(test_incoming_parse),
		fx_test(test_incoming_deadline_bounds),
		fx_test(test_incoming_expired_dropped),
		fx_test(test_incoming_state),
		fx_test(test_replace_atomic_under_reads),
		fx_test(test_failed_write_keeps_old),
		fx_test(test_stale_temporaries_swept),
	};

	return cmocka_run_group_tests_name("records", tests, NULL, NULL);
}
