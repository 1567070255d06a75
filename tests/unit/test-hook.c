// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-hook - every branch of the libvirt hook's phases (src/lib/hook.c,
 * vgpu_hook_run()) on writable copies of the fixture hosts: the cheap pass
 * that only ever says "nothing to do" (and when it reads stdin), the locked
 * prepare (vGPUs created under their GPUs' locks alone, or decided under the
 * host lock: a foreign hostdev, a parent another domain holds, an mdev that
 * moves, an interrupted move, a create that fails), the note of a failed
 * start, started, and release.
 *
 * The driver is simulated: vgpu_live_create() and vgpu_live_destroy() are
 * wrapped at link time (-Wl,--wrap) by functions that change the tree as the
 * driver would (the VF's current_vgpu_type; an mdev's device directory and
 * links), fail on demand, and note whether the host lock was held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/wait.h>
#include <time.h>

#include <dirent.h>

#include "hook.h"
#include "records.h"
#include "sysfs-lock.h"
#include "test-util.h"

#define L40S "vfio-ts-l40s"
#define A30 "a30-dual-mdev"
#define VM1 "11111111-2222-4333-8444-555555555555"
#define VM2 "22222222-2222-4333-8444-555555555555"
#define MDEV1 "aaaaaaaa-0000-4000-8000-000000000001"
#define MDEV2 "aaaaaaaa-0000-4000-8000-000000000002"
#define L40S_8Q 1151u
#define L40S_4Q 1149u
#define A30_6C 684u

static const char *srcdir;

/* A host for one test, and what the simulated driver saw. */
struct env {
	char root[700];
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs;
	char log[16384]; /* every log message, one a line */
	const char *xml; /* what stdin holds */
	int xml_reads;
	int xml_err; /* read_xml fails with this when set */
	/* the driver */
	int fail_create; /* -errno: every create fails */
	char fail_create_on[16]; /* only creates on this parent fail ("" every one) */
	int fail_destroy;
	char fail_destroy_on[16]; /* only frees on this parent fail ("" every one) */
	int n_create, n_destroy;
	bool host_locked_in_write; /* the host lock was held during a create or destroy */
	bool holding; /* the test holds the host lock itself */
	const char *reason; /* release's shut-off reason (the hook's EXTRA), NULL: none */
};

static struct env *cur;

static void collect(void *data, int priority, const char *msg)
{
	struct env *e = data;
	size_t l = strlen(e->log);

	(void)priority;
	snprintf(e->log + l, sizeof(e->log) - l, "%s\n", msg);
}

/*
 * The fixture hosts are copied once (a copy takes seconds on a loaded
 * machine); each test starts from a reset copy: no records, notes or locks,
 * every VF's current_vgpu_type as the fixture has it, no mdev created.
 */
struct copy {
	const char *host;
	char root[700];
	char *state_rel[64]; /* every sys/bus/pci/devices/X/nvidia/current_vgpu_type */
	char *state_text[64];
	size_t n_state;
};

static char group_base[512];
static struct copy copies[] = { { .host = L40S }, { .host = A30 } };

static char *slurp(const char *path)
{
	char buf[256];
	size_t n;
	FILE *fp = fopen(path, "r");

	if (!fp)
		fail_msg("cannot read %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strdup(buf);
}

static void list_devices(const char *root, char names[][32], size_t *n)
{
	char path[1024];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices", root);
	dir = opendir(path);
	*n = 0;
	if (!dir)
		fail_msg("cannot list %s", path);
	while ((de = readdir(dir)) && *n < 32)
		if (de->d_name[0] != '.')
			snprintf(names[(*n)++], 32, "%.31s", de->d_name);
	closedir(dir);
}

static int group_setup(void **state)
{
	(void)state;
	tree_make(group_base, sizeof(group_base), "hook");
	for (size_t i = 0; i < ARRAY_SIZE(copies); i++) {
		struct copy *c = &copies[i];
		char cmd[2048], names[32][32], rel[256], path[1024];
		size_t n;

		snprintf(c->root, sizeof(c->root), "%s/%s", group_base, c->host);
		snprintf(cmd, sizeof(cmd), "cp -a '%s/tests/data/hosts/%s' '%s'", srcdir, c->host,
			 c->root);
		if (system(cmd) != 0)
			return -1;
		list_devices(c->root, names, &n);
		for (size_t k = 0; k < n && c->n_state < ARRAY_SIZE(c->state_rel); k++) {
			snprintf(rel, sizeof(rel),
				 "sys/bus/pci/devices/%s/nvidia/current_vgpu_type", names[k]);
			snprintf(path, sizeof(path), "%s/%s", c->root, rel);
			if (access(path, F_OK) != 0)
				continue;
			c->state_rel[c->n_state] = strdup(rel);
			c->state_text[c->n_state++] = slurp(path);
		}
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(copies); i++)
		for (size_t k = 0; k < copies[i].n_state; k++) {
			free(copies[i].state_rel[k]);
			free(copies[i].state_text[k]);
		}
	tree_remove(group_base);
	return 0;
}

/* The copy as the fixture has it: what a test wrote is gone. */
static void reset(const struct copy *c)
{
	char path[1024], names[32][32];
	size_t n;

	for (const char *const *d = (const char *const[]){ "var", "run", "sys/bus/mdev", NULL }; *d;
	     d++) {
		snprintf(path, sizeof(path), "%s/%s", c->root, *d);
		tree_remove(path);
	}
	for (size_t k = 0; k < c->n_state; k++)
		tree_put(c->root, c->state_rel[k], c->state_text[k]);
	/* mdevs the simulated driver made: ROOT/sys/bus/pci/devices/PARENT/UUID */
	list_devices(c->root, names, &n);
	for (size_t k = 0; k < n; k++) {
		struct dirent *de;
		DIR *dir;

		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s", c->root, names[k]);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			char sub[1400];

			if (strlen(de->d_name) != 36 || de->d_name[8] != '-')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			tree_remove(sub);
		}
		if (dir)
			closedir(dir);
	}
}

static int setup_host(void **state, const char *host)
{
	struct env *e = calloc(1, sizeof(*e));
	const struct copy *c = NULL;

	assert_non_null(e);
	for (size_t i = 0; i < ARRAY_SIZE(copies); i++)
		if (strcmp(copies[i].host, host) == 0)
			c = &copies[i];
	assert_non_null(c);
	reset(c);
	snprintf(e->root, sizeof(e->root), "%s", c->root);
	vgpu_ctx_init(&e->ctx, collect, e);
	vgpu_ctx_set_priority(&e->ctx, LOG_NOTICE);
	if (vgpu_sysfs_open(&e->ctx, e->root, &e->fs) < 0)
		fail_msg("cannot open %s: %s", e->root, vgpu_ctx_error(&e->ctx));
	cur = e;
	*state = e;
	return 0;
}

static int setup_l40s(void **state)
{
	return setup_host(state, L40S);
}

static int setup_a30(void **state)
{
	return setup_host(state, A30);
}

static int teardown(void **state)
{
	struct env *e = *state;

	vgpu_sysfs_free(e->fs);
	vgpu_ctx_clear(&e->ctx);
	free(e);
	cur = NULL;
	return 0;
}

/* ---- the simulated driver --------------------------------------------------------- */

static void vf_attr(char *buf, size_t len, const char *vf)
{
	snprintf(buf, len, "sys/bus/pci/devices/%s/nvidia/current_vgpu_type", vf);
}

/* The type id VF @vf holds (0: none); -1 when unreadable. */
static long vf_type(struct env *e, const char *vf)
{
	char rel[256], path[1024];
	long v = -1;
	FILE *fp;

	vf_attr(rel, sizeof(rel), vf);
	snprintf(path, sizeof(path), "%s/%s", e->root, rel);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &v) != 1)
		v = -1;
	fclose(fp);
	return v;
}

static void set_vf(struct env *e, const char *vf, unsigned type)
{
	char rel[256], val[16];

	vf_attr(rel, sizeof(rel), vf);
	snprintf(val, sizeof(val), "%u\n", type);
	tree_put(e->root, rel, val);
}

/* mdev @uuid: on which parent (buf), "" when absent. */
static const char *mdev_parent(struct env *e, const char *uuid, char *buf, size_t len)
{
	char path[1024], target[1024];
	ssize_t n;
	char *slash;

	snprintf(path, sizeof(path), "%s/sys/bus/mdev/devices/%s", e->root, uuid);
	n = readlink(path, target, sizeof(target) - 1);
	buf[0] = '\0';
	if (n <= 0)
		return buf;
	target[n] = '\0';
	if ((slash = strrchr(target, '/')))
		*slash = '\0';
	slash = strrchr(target, '/');
	snprintf(buf, len, "%.63s", slash ? slash + 1 : target);
	return buf;
}

static void add_mdev(struct env *e, const char *uuid, const char *parent, unsigned type)
{
	char rel[512], target[512];

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/%s/mdev_type", parent, uuid);
	snprintf(target, sizeof(target), "../mdev_supported_types/nvidia-%u", type);
	tree_link(e->root, rel, target);
	snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s", uuid);
	snprintf(target, sizeof(target), "/sys/bus/pci/devices/%s/%s", parent, uuid);
	tree_link(e->root, rel, target);
}

static void remove_mdev(struct env *e, const char *uuid, const char *parent)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/sys/bus/mdev/devices/%s", e->root, uuid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/%s", e->root, parent, uuid);
	tree_remove(path);
}

/* Is the host lock held (by the code under test) now? */
static bool host_locked(struct env *e)
{
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs = NULL;
	bool held;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_sysfs_open(&ctx, e->root, &fs), 0);
	held = vgpu_sysfs_lock(&ctx, fs, 0) < 0;
	vgpu_sysfs_free(fs);
	vgpu_ctx_clear(&ctx);
	return held;
}

int __wrap_vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			    const struct vgpu_record *r, bool *created);
int __wrap_vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			    const struct vgpu_record *r, bool *created)
{
	struct env *e = cur;
	char on[64];

	(void)fs;
	*created = false;
	e->n_create++;
	e->host_locked_in_write |= host_locked(e);
	if (e->fail_create && (!e->fail_create_on[0] || strcmp(e->fail_create_on, r->parent) == 0))
		return vgpu_error(ctx, e->fail_create, "create on %s fails (simulated)", r->parent);
	if (r->iface == VGPU_IFACE_VENDOR_VFIO) {
		long t = vf_type(e, r->parent);

		if (t == (long)r->type_id)
			return 0;
		if (t != 0)
			return vgpu_error(ctx, -EBUSY, "VF %s already holds vGPU type %ld",
					  r->parent, t);
		set_vf(e, r->parent, r->type_id);
	} else {
		if (mdev_parent(e, r->mdev_uuid, on, sizeof(on))[0])
			return vgpu_error(ctx, -EEXIST, "mdev %s already exists on %s",
					  r->mdev_uuid, on);
		add_mdev(e, r->mdev_uuid, r->parent, r->type_id);
	}
	*created = true;
	return 0;
}

int __wrap_vgpu_live_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			     const struct vgpu_record *r, bool *freed);
int __wrap_vgpu_live_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			     const struct vgpu_record *r, bool *freed)
{
	struct env *e = cur;
	char on[64];

	(void)fs;
	*freed = false;
	e->n_destroy++;
	e->host_locked_in_write |= host_locked(e);
	if (e->fail_destroy &&
	    (!e->fail_destroy_on[0] || strcmp(e->fail_destroy_on, r->parent) == 0))
		return vgpu_error(ctx, e->fail_destroy, "free on %s fails (simulated)", r->parent);
	if (r->iface == VGPU_IFACE_VENDOR_VFIO) {
		long t = vf_type(e, r->parent);

		if (t == 0)
			return 0;
		if (t != (long)r->type_id)
			return vgpu_error(ctx, -ESTALE, "VF %s holds vGPU type %ld, not %u",
					  r->parent, t, r->type_id);
		set_vf(e, r->parent, 0);
	} else {
		if (!mdev_parent(e, r->mdev_uuid, on, sizeof(on))[0])
			return 0;
		remove_mdev(e, r->mdev_uuid, on);
	}
	*freed = true;
	return 0;
}

/* ---- records, notes, calls ---------------------------------------------------------- */

static struct vgpu_record vfio_rec(const char *dom, const char *uuid, const char *vf, unsigned type,
				   enum vgpu_lifetime life)
{
	char gpu[VGPU_BDF_LEN];
	struct vgpu_record r;

	snprintf(gpu, sizeof(gpu), "%.8s00.0", vf);
	r = test_record(dom, uuid, gpu, vf, type, type == L40S_8Q ? "L40S-8Q" : "L40S-4Q");
	r.lifetime = life;
	return r;
}

static struct vgpu_record mdev_rec(const char *dom, const char *uuid, const char *parent,
				   const char *mdev, enum vgpu_lifetime life)
{
	char gpu[VGPU_BDF_LEN];
	struct vgpu_record r;

	snprintf(gpu, sizeof(gpu), "%.8s00.0", parent);
	r = test_record(dom, uuid, gpu, parent, A30_6C, "A30-6C");
	r.iface = VGPU_IFACE_MDEV;
	r.lifetime = life;
	snprintf(r.mdev_uuid, sizeof(r.mdev_uuid), "%s", mdev);
	return r;
}

static void put_rec(struct env *e, const struct vgpu_record *r)
{
	if (vgpu_record_write(&e->ctx, e->fs, r) < 0)
		fail_msg("cannot write a record: %s", vgpu_ctx_error(&e->ctx));
}

/* The records on the host now, as "DOMAIN PARENT" lines. */
static void records_now(struct env *e, char *buf, size_t len)
{
	VGPU_AUTORECORDS recs = { 0 };

	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < recs.n; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, "%s %s\n", recs.v[i].domain, recs.v[i].parent);
	}
}

/* @r as a migration here writes it: incoming, its deadline @ahead seconds from now. */
static struct vgpu_record incoming(struct vgpu_record r, long long ahead)
{
	r.state = VGPU_RECORD_INCOMING;
	r.deadline = (long long)time(NULL) + ahead;
	return r;
}

/* The state of the record of @parent on the host now: "active", "incoming" or "none". */
static const char *state_now(struct env *e, const char *parent)
{
	VGPU_AUTORECORDS recs = { 0 };
	const struct vgpu_record *r;

	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	r = vgpu_records_find(&recs, parent, NULL);
	return r ? vgpu_record_state_str(r->state) : "none";
}

/* The note a prepare left for domain @name ("" when none). */
static const char *note_of(struct env *e, const char *name, char *buf, size_t len)
{
	char path[1024];
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s/%s", e->root, VGPU_PREPARED_DIR, name);
	buf[0] = '\0';
	fp = fopen(path, "r");
	if (fp) {
		n = fread(buf, 1, len - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static int give_xml(void *data, struct vgpu_ctx *ctx, const char **xml, size_t *len)
{
	struct env *e = data;

	e->xml_reads++;
	if (e->xml_err)
		return vgpu_error(ctx, e->xml_err, "no whole domain XML on stdin (simulated)");
	*xml = e->xml;
	*len = strlen(e->xml);
	return 0;
}

static char xml_buf[4096];

/* The domain XML libvirt would give: @name, @uuid, hostdevs @devices. */
static const char *dom_xml(const char *name, const char *uuid, const char *devices)
{
	snprintf(
		xml_buf, sizeof(xml_buf),
		"<domain type='kvm'>\n  <name>%s</name>\n  <uuid>%s</uuid>\n  <memory unit='KiB'>1048576</memory>\n  <devices>%s</devices>\n</domain>\n",
		name, uuid, devices);
	return xml_buf;
}

/* The cheap pass: 0 with *next, or -errno. */
static int cheap(struct env *e, enum vgpu_hook_phase phase, const char *name, const char *xml,
		 enum vgpu_hook_next *next)
{
	const struct vgpu_hook_input in = { .name = name,
					    .read_xml = give_xml,
					    .xml_data = e,
					    .lock_wait_ms = 300,
					    .reason = e->reason };
	struct vgpu_hook_result res = { .next = (enum vgpu_hook_next) - 1 };
	int r;

	e->xml = xml;
	r = vgpu_hook_run(&e->ctx, e->fs, phase, &in, &res);
	if (r == 0)
		*next = res.next;
	else
		assert_int_equal((int)res.next, -1); /* set on success only */
	return r;
}

static enum vgpu_hook_next cheap_ok(struct env *e, enum vgpu_hook_phase phase, const char *name,
				    const char *xml)
{
	enum vgpu_hook_next next = VGPU_HOOK_DONE;
	int r = cheap(e, phase, name, xml, &next);

	if (r < 0)
		fail_msg("cheap pass: %d: %s", r, vgpu_ctx_error(&e->ctx));
	return next;
}

/* The locked pass for the domain @uuid with hostdevs @mdevs, @vfs (NULL: none). */
static int locked(struct env *e, enum vgpu_hook_phase phase, const char *name, const char *uuid,
		  const char *mdev, const char *vf)
{
	VGPU_AUTOSTRV mdevs = { 0 };
	VGPU_AUTOSTRV vfs = { 0 };
	const struct vgpu_hook_domain d = { .uuid = uuid, .mdevs = &mdevs, .vfs = &vfs };
	const struct vgpu_hook_input in = {
		.name = name, .parsed = &d, .lock_wait_ms = 300, .reason = e->reason
	};
	struct vgpu_hook_result res = { .next = (enum vgpu_hook_next) - 1 };
	int r;

	if (mdev)
		vgpu_strv_push(&mdevs, vgpu_xstrdup(mdev));
	if (vf)
		vgpu_strv_push(&vfs, vgpu_xstrdup(vf));
	vgpu_ctx_clear(&e->ctx);
	r = vgpu_hook_run(&e->ctx, e->fs, phase, &in, &res);
	if (r == 0)
		assert_int_equal(res.next, VGPU_HOOK_DONE);
	if (!e->holding)
		assert_false(host_locked(e)); /* never left behind */
	return r;
}

static void locked_ok(struct env *e, enum vgpu_hook_phase phase, const char *name, const char *uuid)
{
	int r = locked(e, phase, name, uuid, NULL, NULL);

	if (r < 0)
		fail_msg("locked pass: %d: %s", r, vgpu_ctx_error(&e->ctx));
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not in '%s'", needle, hay);
}

/* ---- which calls are the hook's ------------------------------------------------------ */

static void test_phase_of(void **state)
{
	enum vgpu_hook_phase p = (enum vgpu_hook_phase) - 1;

	(void)state;
	assert_true(vgpu_hook_phase_of("vm1", "prepare", "begin", &p));
	assert_int_equal(p, VGPU_HOOK_PREPARE);
	assert_true(vgpu_hook_phase_of("vm1", "started", "begin", &p));
	assert_int_equal(p, VGPU_HOOK_STARTED);
	assert_true(vgpu_hook_phase_of("vm1", "release", "end", &p));
	assert_int_equal(p, VGPU_HOOK_RELEASE);
	p = (enum vgpu_hook_phase) - 1;
	assert_false(vgpu_hook_phase_of("vm1", "prepare", "end", &p));
	assert_false(vgpu_hook_phase_of("vm1", "release", "begin", &p));
	assert_false(vgpu_hook_phase_of("vm1", "stopped", "end", &p));
	assert_false(vgpu_hook_phase_of("vm1", "migrate", "end", &p));
	assert_false(vgpu_hook_phase_of("vm1", "restore", "begin", &p));
	assert_false(vgpu_hook_phase_of("vm1", "migrate", NULL, &p));
	assert_false(vgpu_hook_phase_of("a/b", "migrate", "begin", &p));
	assert_false(vgpu_hook_phase_of("vm1", "prepare", NULL, &p));
	assert_false(vgpu_hook_phase_of("vm1", NULL, NULL, &p));
	/* a name that would be a path is not one of ours */
	assert_false(vgpu_hook_phase_of("a/b", "prepare", "begin", &p));
	assert_false(vgpu_hook_phase_of(".", "prepare", "begin", &p));
	assert_false(vgpu_hook_phase_of("..", "release", "end", &p));
	assert_false(vgpu_hook_phase_of("", "prepare", "begin", &p));
	assert_false(vgpu_hook_phase_of(NULL, "prepare", "begin", &p));
	assert_int_equal((int)p, -1);
	/* libvirt on the destination: NAME migrate begin -, the migratable XML on stdin */
	assert_true(vgpu_hook_phase_of("vm1", "migrate", "begin", &p));
	assert_int_equal(p, VGPU_HOOK_MIGRATE);
}

/* ---- the cheap pass -------------------------------------------------------------------- */

/* No record on the host: no domain is ours, and stdin is never read. */
static void test_cheap_no_records(void **state)
{
	struct env *e = *state;

	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(e->xml_reads, 0);
}

/* Records of another domain only: not ours (by UUID), nothing to do. */
static void test_cheap_not_ours(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm2", VM2, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PER_START);

	put_rec(e, &r); /* missing and per-start: work, for vm2 */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	/* the name alone does not make it ours: a domain called vm2 with another UUID */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm2", dom_xml("vm2", VM1, "")),
			 VGPU_HOOK_DONE);
	/* a name that would be a path is never ours: stdin is not read */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm2/..", dom_xml("vm2", VM2, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(e->xml_reads, 3);
}

/* Ours, every vGPU there as recorded: prepare has nothing to do. */
static void test_cheap_prepare_present(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);

	put_rec(e, &r);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(e->xml_reads, 1);
}

/* Ours, the vGPU missing (after a reboot), of another type, or unreadable: the locked pass. */
static void test_cheap_prepare_work(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char rel[256], path[1024];

	put_rec(e, &r);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	set_vf(e, "0000:c1:00.4", L40S_4Q);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	vf_attr(rel, sizeof(rel), "0000:c1:00.4");
	snprintf(path, sizeof(path), "%s/%s", e->root, rel);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
}

/* A renamed domain keeps its vGPUs: records are matched by UUID, not by name. */
static void test_cheap_renamed(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("old-name", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);

	put_rec(e, &r);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "new-name", dom_xml("new-name", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	locked_ok(e, VGPU_HOOK_PREPARE, "new-name", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
}

/* The XML names another domain's vGPU (its mdev UUID, its VF): the hardened parse decides. */
static void test_cheap_maybe_foreign(void **state)
{
	struct env *e = *state;
	struct vgpu_record m =
		mdev_rec("vm2", VM2, "0000:3b:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record v =
		vfio_rec("vm2", VM2, "0000:3b:00.5", A30_6C, VGPU_LIFETIME_PERSISTENT);
	static const char mdev_dev[] =
		"<hostdev mode='subsystem' type='mdev' model='vfio-pci'>"
		"<source><address uuid='AAAAAAAA-0000-4000-8000-000000000002'/>"
		"</source></hostdev>";
	static const char vf_sq[] = "<hostdev mode='subsystem' type='pci'><source><address "
				    "domain='0x0000' bus='0x3b' slot='0x00' function='0x5'/>"
				    "</source></hostdev>";
	static const char vf_dq[] =
		"<hostdev mode=\"subsystem\" type=\"pci\"><source><address "
		"domain=\"0x0000\" bus=\"0x3b\" slot=\"0x00\" function=\"0x5\"/>"
		"</source></hostdev>";
	static const char vf_other[] = "<hostdev mode='subsystem' type='pci'><source><address "
				       "domain='0x0000' bus='0x3b' slot='0x00' function='0x6'/>"
				       "</source></hostdev>";

	put_rec(e, &m);
	put_rec(e, &v);
	/* vm1 has no record at all: only the foreign test sends it on */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, mdev_dev)),
			 VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, vf_sq)),
			 VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, vf_dq)),
			 VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, vf_other)),
			 VGPU_HOOK_DONE);
	/* its own vGPUs are not foreign to vm2; release never refuses */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, mdev_dev)),
			 VGPU_HOOK_DONE);
}

/* XML the scanner cannot read: the hardened parser decides when a record names the domain. */
static void test_cheap_unscannable(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	static const char dtd[] = "<!DOCTYPE domain [<!ENTITY u \"" VM1 "\">]>"
				  "<domain><name>vm1</name><uuid>&u;</uuid></domain>";
	static const char no_uuid[] = "<domain><name>vm1</name></domain>";
	static const char other_root[] = "<network><uuid>" VM1 "</uuid></network>";

	put_rec(e, &r);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dtd), VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", no_uuid), VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", other_root), VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm9", dtd), VGPU_HOOK_DONE);
	/* comments, processing instructions, CDATA and quoted '>' do not fool the scanner */
	assert_int_equal(
		cheap_ok(e, VGPU_HOOK_PREPARE, "vm1",
			 "<?xml version='1.0'?><!-- <uuid>x</uuid> --><domain a='>'>"
			 "<![CDATA[<uuid>y</uuid>]]><name>vm1</name><devices><uuid>z</uuid>"
			 "</devices><uuid> " VM1 " </uuid></domain>"),
		VGPU_HOOK_DONE);
}

/* release: work when the domain has a per-start vGPU or a failed start left a note. */
static void test_cheap_release(void **state)
{
	struct env *e = *state;
	struct vgpu_record p =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record s =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PER_START);
	char rel[128];

	put_rec(e, &p);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	snprintf(rel, sizeof(rel), "%s/vm1", VGPU_PREPARED_DIR);
	tree_put(e->root, rel, "0000:c1:00.4\n");
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_STARTED, "vm1", NULL), VGPU_HOOK_DONE);
	put_rec(e, &s);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
}

/* stdin that cannot be read, records that cannot be read: errors, with the message. */
static void test_cheap_errors(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	enum vgpu_hook_next next;
	char path[1024];

	put_rec(e, &r);
	e->xml_err = -ETIMEDOUT;
	assert_int_equal(cheap(e, VGPU_HOOK_PREPARE, "vm1", "", &next), -ETIMEDOUT);
	assert_contains(vgpu_ctx_error(&e->ctx), "no whole domain XML");
	e->xml_err = 0;
	snprintf(path, sizeof(path), "%s/%s", e->root, VGPU_RECORDS_DIR);
	tree_remove(path);
	tree_put(e->root, "var/lib/vgpuctl/owners", "not a directory\n");
	assert_true(cheap(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, ""), &next) < 0);
	assert_contains(vgpu_ctx_error(&e->ctx), "owners");
}

/* started drops the note (by name, without stdin); nothing else changes. */
static void test_started(void **state)
{
	struct env *e = *state;
	char rel[128], note[256];

	assert_int_equal(cheap_ok(e, VGPU_HOOK_STARTED, "vm1", NULL), VGPU_HOOK_DONE);
	snprintf(rel, sizeof(rel), "%s/vm1", VGPU_PREPARED_DIR);
	tree_put(e->root, rel, "0000:c1:00.4\n");
	snprintf(rel, sizeof(rel), "%s/vm2", VGPU_PREPARED_DIR);
	tree_put(e->root, rel, "0000:c1:00.5\n");
	assert_int_equal(cheap_ok(e, VGPU_HOOK_STARTED, "vm1", NULL), VGPU_HOOK_DONE);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
	assert_string_equal(note_of(e, "vm2", note, sizeof(note)), "0000:c1:00.5\n");
	assert_int_equal(e->xml_reads, 0);
}

/* ---- the locked prepare ---------------------------------------------------------------- */

/* Every vGPU there: nothing created, no note. */
static void test_prepare_present(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &r);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(e->n_create, 0);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
}

/*
 * After a reboot: each missing vGPU is created where its record says, under
 * its GPU's lock alone (the host lock is not held: starts on other GPUs go
 * on), and noted for a failed start's release; another domain's is left.
 */
static void test_prepare_recreates(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record b =
		vfio_rec("vm1", VM1, "0000:41:00.6", L40S_4Q, VGPU_LIFETIME_PER_START);
	struct vgpu_record o =
		vfio_rec("vm2", VM2, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &a);
	put_rec(e, &b);
	put_rec(e, &o);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
	assert_int_equal(vf_type(e, "0000:41:00.6"), L40S_4Q);
	assert_int_equal(vf_type(e, "0000:c1:00.5"), 0);
	assert_int_equal(e->n_create, 2);
	assert_false(e->host_locked_in_write);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "0000:41:00.6\n0000:c1:00.4\n");
	/* again: all there, nothing more */
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(e->n_create, 2);
}

/* A VF that holds another type: vendor VFIO cannot move; the start is refused, nothing changes. */
static void test_prepare_wrong_type(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &r);
	set_vf(e, "0000:c1:00.4", L40S_4Q);
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx), "already holds vGPU type 1149");
	assert_contains(vgpu_ctx_error(&e->ctx), "the domain cannot start");
	/* tried under the GPU's lock, then once more under the host lock */
	assert_int_equal(e->n_create, 2);
	assert_true(e->host_locked_in_write);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_4Q);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
}

/* A failure midway undoes every step: the vGPU created first is freed, no note stays. */
static void test_prepare_rollback(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:41:00.6", L40S_4Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record b =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &a);
	put_rec(e, &b);
	e->fail_create = -ENOSPC;
	snprintf(e->fail_create_on, sizeof(e->fail_create_on), "0000:c1:00.4");
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL), -ENOSPC);
	assert_contains(vgpu_ctx_error(&e->ctx), "create on 0000:c1:00.4 fails");
	assert_int_equal(vf_type(e, "0000:41:00.6"), 0);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	assert_true(e->n_destroy >= 1);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
}

/* A state that cannot be read is an error (the locked pass never guesses). */
static void test_prepare_unreadable(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char rel[256], path[1024];

	put_rec(e, &r);
	vf_attr(rel, sizeof(rel), "0000:c1:00.4");
	snprintf(path, sizeof(path), "%s/%s", e->root, rel);
	assert_int_equal(unlink(path), 0);
	assert_true(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL) < 0);
	assert_contains(vgpu_ctx_error(&e->ctx), "current_vgpu_type");
	assert_int_equal(e->n_create, 0);
}

/* A hostdev naming another domain's mdev or VF: the start is refused before anything. */
static void test_prepare_foreign_hostdev(void **state)
{
	struct env *e = *state;
	struct vgpu_record m =
		mdev_rec("vm2", VM2, "0000:3b:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record v =
		vfio_rec("vm2", VM2, "0000:3b:00.5", A30_6C, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record mine =
		mdev_rec("vm1", VM1, "0000:3b:00.6", MDEV1, VGPU_LIFETIME_PERSISTENT);

	put_rec(e, &m);
	put_rec(e, &v);
	put_rec(e, &mine);
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, MDEV2, NULL), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx), "names mdev " MDEV2 ", which domain 'vm2'");
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, "0000:3b:00.5"), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx), "names VF 0000:3b:00.5, which domain 'vm2'");
	assert_int_equal(e->n_create, 0);
	/* its own, or one nobody holds, is fine */
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, MDEV1, "0000:3b:00.7"), 0);
}

/* Vendor VFIO: the recorded VF is claimed by another domain's record: refused, names it. */
static void test_prepare_vf_held_by_other(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	/* only a damaged host has this: an mdev record of vm2 on vm1's VF */
	struct vgpu_record o =
		mdev_rec("vm2", VM2, "0000:c1:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &r);
	put_rec(e, &o);
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx),
			"VF 0000:c1:00.4 of L40S-8Q is held by domain 'vm2' (" VM2 ")");
	assert_int_equal(e->n_create, 0);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
}

/* mdev: the recorded parent is another domain's: the mdev moves, the record follows. */
static void test_prepare_mdev_moves(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		mdev_rec("vm1", VM1, "0000:3b:00.4", MDEV1, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record o =
		mdev_rec("vm2", VM2, "0000:3b:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	char recs[512], on[64], note[256];

	put_rec(e, &r);
	put_rec(e, &o);
	add_mdev(e, MDEV2, "0000:3b:00.4", A30_6C);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_string_equal(mdev_parent(e, MDEV1, on, sizeof(on)), "0000:3b:00.5");
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:3b:00.4\nvm1 0000:3b:00.5\n");
	assert_contains(e->log, "mdev " MDEV1 " of 'vm1' moved from 0000:3b:00.4 to 0000:3b:00.5");
	assert_true(e->host_locked_in_write);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "0000:3b:00.5_" MDEV1 "\n");
}

/* mdev: a create refused by the driver (an unrecorded vGPU in the way) also moves. */
static void test_prepare_mdev_create_fails_moves(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		mdev_rec("vm1", VM1, "0000:3b:00.4", MDEV1, VGPU_LIFETIME_PERSISTENT);
	char recs[512], on[64];

	put_rec(e, &r);
	e->fail_create = -EIO;
	snprintf(e->fail_create_on, sizeof(e->fail_create_on), "0000:3b:00.4");
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_string_equal(mdev_parent(e, MDEV1, on, sizeof(on)), "0000:3b:00.5");
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:3b:00.5\n");
}

/* mdev: the parent is taken and no other VF of the GPU offers the type: refused. */
static void test_prepare_mdev_nowhere(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		mdev_rec("vm1", VM1, "0000:3b:00.4", MDEV1, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record o =
		mdev_rec("vm2", VM2, "0000:3b:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	static const char *const others[] = { "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7" };
	char recs[512];

	put_rec(e, &r);
	put_rec(e, &o);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		struct vgpu_record x = mdev_rec("vm3", "33333333-2222-4333-8444-555555555555",
						others[i], MDEV2, VGPU_LIFETIME_PERSISTENT);

		x.mdev_uuid[35] = (char)('3' + i);
		put_rec(e, &x);
	}
	assert_int_equal(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL), -EBUSY);
	assert_contains(
		vgpu_ctx_error(&e->ctx),
		"parent 0000:3b:00.4 is taken and no other VF of GPU 0000:3b:00.0 offers type 684 now");
	records_now(e, recs, sizeof(recs));
	assert_contains(recs, "vm1 0000:3b:00.4\n");
	assert_int_equal(e->n_create, 0);
}

/*
 * A move killed between writing the new record and dropping the old: two
 * records of one mdev.  The one the mdev is on stays; with the mdev on
 * neither, the one whose parent nobody else holds.
 */
static void test_prepare_interrupted_move(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		mdev_rec("vm1", VM1, "0000:3b:00.4", MDEV1, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record b =
		mdev_rec("vm1", VM1, "0000:3b:00.5", MDEV1, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record o =
		mdev_rec("vm2", VM2, "0000:3b:00.4", MDEV2, VGPU_LIFETIME_PERSISTENT);
	char recs[512], on[64];

	/* the mdev on the old parent: the move's new record goes */
	put_rec(e, &a);
	put_rec(e, &b);
	add_mdev(e, MDEV1, "0000:3b:00.4", A30_6C);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:3b:00.4\n");
	assert_contains(e->log,
			"has two records (a move was interrupted): the one on 0000:3b:00.5");

	/* the mdev on the new parent: the old record goes */
	remove_mdev(e, MDEV1, "0000:3b:00.4");
	add_mdev(e, MDEV1, "0000:3b:00.5", A30_6C);
	put_rec(e, &b);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:3b:00.5\n");
	assert_int_equal(e->n_create, 0);

	/* on neither, the old parent another domain's: the new one stays, the mdev goes there */
	remove_mdev(e, MDEV1, "0000:3b:00.5");
	put_rec(e, &a);
	put_rec(e, &o);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:3b:00.4\nvm1 0000:3b:00.5\n");
	assert_string_equal(mdev_parent(e, MDEV1, on, sizeof(on)), "0000:3b:00.5");
}

/* The host lock not had in time: an error, nothing done. */
static void test_prepare_lock_timeout(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_sysfs *other = NULL;

	put_rec(e, &r);
	assert_int_equal(vgpu_sysfs_open(&e->ctx, e->root, &other), 0);
	assert_int_equal(vgpu_sysfs_lock(&e->ctx, other, 0), 0);
	e->holding = true;
	assert_true(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL) < 0);
	assert_contains(vgpu_ctx_error(&e->ctx), "lock");
	assert_int_equal(e->n_create, 0);
	vgpu_sysfs_free(other);
}

/* The GPU's lock not had in time (another run works on it): an error, nothing done. */
static void test_prepare_gpu_lock_timeout(void **state)
{
	struct env *e = *state;
	struct vgpu_record r =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_sysfs *other = NULL;
	int fd = -1;

	put_rec(e, &r);
	assert_int_equal(vgpu_sysfs_open(&e->ctx, e->root, &other), 0);
	assert_int_equal(vgpu_sysfs_lock_gpu(&e->ctx, other, "0000:c1:00.0", 0, &fd), 0);
	assert_true(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL) < 0);
	assert_int_equal(e->n_create, 0);
	close(fd);
	vgpu_sysfs_free(other);
	/* a vGPU on another GPU does not wait for it */
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	assert_int_equal(vgpu_sysfs_open(&e->ctx, e->root, &other), 0);
	assert_int_equal(vgpu_sysfs_lock_gpu(&e->ctx, other, "0000:c1:00.0", 0, &fd), 0);
	r = vfio_rec("vm1", VM1, "0000:41:00.6", L40S_4Q, VGPU_LIFETIME_PERSISTENT);
	put_rec(e, &r);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:41:00.6"), L40S_4Q);
	close(fd);
	vgpu_sysfs_free(other);
}

/* ---- release ------------------------------------------------------------------------------ */

/* Per-start vGPUs go at each stop; persistent ones and every record stay. */
static void test_release_frees_per_start(void **state)
{
	struct env *e = *state;
	struct vgpu_record p =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record s =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PER_START);
	struct vgpu_record o =
		vfio_rec("vm2", VM2, "0000:c1:00.6", L40S_8Q, VGPU_LIFETIME_PER_START);
	char recs[512];

	put_rec(e, &p);
	put_rec(e, &s);
	put_rec(e, &o);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	set_vf(e, "0000:c1:00.5", L40S_8Q);
	set_vf(e, "0000:c1:00.6", L40S_8Q);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
	assert_int_equal(vf_type(e, "0000:c1:00.5"), 0);
	assert_int_equal(vf_type(e, "0000:c1:00.6"), L40S_8Q);
	/* the free holds only the GPU's lock */
	assert_false(e->host_locked_in_write);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:c1:00.4\nvm1 0000:c1:00.5\nvm2 0000:c1:00.6\n");
}

/* Nothing per-start, no note: nothing is freed. */
static void test_release_nothing(void **state)
{
	struct env *e = *state;
	struct vgpu_record p =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);

	put_rec(e, &p);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(e->n_destroy, 0);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
}

/*
 * A start that failed after prepare: release (without started) frees what
 * that prepare created, persistent or not, and drops the note; after a
 * start that went through (started), a stop keeps them.
 */
static void test_release_failed_start(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record b =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char note[256];

	put_rec(e, &a);
	put_rec(e, &b);
	set_vf(e, "0000:c1:00.5", L40S_8Q); /* there before: not this prepare's */
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "0000:c1:00.4\n");
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	assert_int_equal(vf_type(e, "0000:c1:00.5"), L40S_8Q);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");

	/* prepare, started, release: a normal stop */
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_STARTED, "vm1", NULL), VGPU_HOOK_DONE);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
}

/* A vGPU that is not the one recorded any more is left, with a warning; the rest goes on. */
static void test_release_stale(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PER_START);
	struct vgpu_record b =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PER_START);

	put_rec(e, &a);
	put_rec(e, &b);
	set_vf(e, "0000:c1:00.4", L40S_4Q);
	set_vf(e, "0000:c1:00.5", L40S_8Q);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_contains(e->log, "VF 0000:c1:00.4 holds vGPU type 1149, not 1151");
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_4Q);
	assert_int_equal(vf_type(e, "0000:c1:00.5"), 0);
}

/* A free that fails: an error; what was freed before it is made again. */
static void test_release_fails(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PER_START);

	put_rec(e, &a);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	e->fail_destroy = -EBUSY;
	assert_int_equal(locked(e, VGPU_HOOK_RELEASE, "vm1", VM1, NULL, NULL), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx), "free on 0000:c1:00.4 fails");
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
}

/* The GPU's lock not had in time: an error, nothing freed. */
static void test_release_lock_timeout(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PER_START);
	struct vgpu_sysfs *other = NULL;
	int fd = -1;

	put_rec(e, &a);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	assert_int_equal(vgpu_sysfs_open(&e->ctx, e->root, &other), 0);
	assert_int_equal(vgpu_sysfs_lock_gpu(&e->ctx, other, "0000:c1:00.0", 0, &fd), 0);
	assert_true(locked(e, VGPU_HOOK_RELEASE, "vm1", VM1, NULL, NULL) < 0);
	assert_int_equal(e->n_destroy, 0);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
	close(fd);
	vgpu_sysfs_free(other);
}

/* Is there a vgpu_params note for domain @uuid (var/lib/vgpuctl/params/UUID)? */
static bool note_there(struct env *e, const char *uuid)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/var/lib/vgpuctl/params/%s", e->root, uuid);
	return access(path, F_OK) == 0;
}

/*
 * libvirt 10.5 and later: a release whose reason is "migrated" (the domain
 * runs elsewhere now) frees all of the domain's vGPUs here, persistent ones
 * too, and drops their records, with the host lock held for the record
 * writes; other domains' stay.  The cheap pass sees that work.
 */
static void test_release_migrated(void **state)
{
	struct env *e = *state;
	struct vgpu_record p =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record s =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PER_START);
	struct vgpu_record o =
		vfio_rec("vm2", VM2, "0000:c1:00.6", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char recs[512];

	put_rec(e, &p);
	put_rec(e, &o);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	set_vf(e, "0000:c1:00.5", L40S_8Q);
	set_vf(e, "0000:c1:00.6", L40S_8Q);
	e->reason = "migrated";
	/* a persistent vGPU alone, no note: work only because it migrated */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	/* another domain's release that migrated: nothing of vm1's */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm3",
				  dom_xml("vm3", "33333333-2222-4333-8444-555555555555", "")),
			 VGPU_HOOK_DONE);
	put_rec(e, &s);
	/* the vgpu_params set noted for vm1 goes with its last record; vm2's stays */
	tree_put(e->root, "var/lib/vgpuctl/params/" VM1, "disable_vnc=1\n");
	tree_put(e->root, "var/lib/vgpuctl/params/" VM2, "disable_vnc=1\n");
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_false(note_there(e, VM1));
	assert_true(note_there(e, VM2));
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	assert_int_equal(vf_type(e, "0000:c1:00.5"), 0);
	assert_int_equal(vf_type(e, "0000:c1:00.6"), L40S_8Q);
	assert_true(e->host_locked_in_write); /* records dropped: under the host lock */
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:c1:00.6\n");
	/* nothing left: the next release of vm1 has no work */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
}

/* Any other reason ("-" before libvirt 10.5, "shutdown", none): persistent vGPUs and records stay.
 */
static void test_release_other_reasons(void **state)
{
	struct env *e = *state;
	struct vgpu_record p =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	static const char *const reasons[] = { "-", "shutdown", "destroyed", "Migrated", NULL };
	char recs[512];

	put_rec(e, &p);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	tree_put(e->root, "var/lib/vgpuctl/params/" VM1, "disable_vnc=1\n");
	for (size_t i = 0; i < ARRAY_SIZE(reasons); i++) {
		e->reason = reasons[i];
		assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
				 VGPU_HOOK_DONE);
		locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
		assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
		records_now(e, recs, sizeof(recs));
		assert_string_equal(recs, "vm1 0000:c1:00.4\n");
		assert_true(note_there(e, VM1)); /* its record stays: so does its set */
	}
	assert_int_equal(e->n_destroy, 0);
}

/* A migrated release whose second free fails: an error, the first vGPU made again, every record
 * kept. */
static void test_release_migrated_fails(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_record b =
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char recs[512];

	put_rec(e, &a);
	put_rec(e, &b);
	set_vf(e, "0000:c1:00.4", L40S_8Q);
	set_vf(e, "0000:c1:00.5", L40S_8Q);
	e->reason = "migrated";
	e->fail_destroy = -EBUSY;
	snprintf(e->fail_destroy_on, sizeof(e->fail_destroy_on), "0000:c1:00.5");
	assert_int_equal(locked(e, VGPU_HOOK_RELEASE, "vm1", VM1, NULL, NULL), -EBUSY);
	assert_contains(vgpu_ctx_error(&e->ctx), "free on 0000:c1:00.5 fails");
	assert_int_equal(e->n_destroy, 2);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q); /* made again */
	assert_int_equal(vf_type(e, "0000:c1:00.5"), L40S_8Q);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:c1:00.4\nvm1 0000:c1:00.5\n");
}

/* ---- a domain migrating here (incoming records) ----------------------------------------- */

/*
 * prepare on the destination creates the vGPUs the migration's incoming
 * records name and makes the records active, under the host lock (a record
 * is written); the cheap pass sees the work even when the vGPU is there.
 */
static void test_prepare_incoming_becomes_active(void **state)
{
	struct env *e = *state;
	struct vgpu_record a = incoming(
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 600);
	struct vgpu_record b = incoming(
		vfio_rec("vm1", VM1, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 600);
	char note[256];

	put_rec(e, &a);
	put_rec(e, &b);
	set_vf(e, "0000:c1:00.5", L40S_8Q); /* there already: only the record changes */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_PREPARE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
	assert_int_equal(e->n_create, 1);
	assert_true(e->host_locked_in_write);
	assert_string_equal(state_now(e, "0000:c1:00.4"), "active");
	assert_string_equal(state_now(e, "0000:c1:00.5"), "active");
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "arrived\n0000:c1:00.4\n");
	/* the start went through: a stop keeps vGPUs and records */
	assert_int_equal(cheap_ok(e, VGPU_HOOK_STARTED, "vm1", NULL), VGPU_HOOK_DONE);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), L40S_8Q);
	assert_string_equal(state_now(e, "0000:c1:00.4"), "active");
}

/* A failure midway leaves the records incoming and creates nothing. */
static void test_prepare_incoming_rollback(void **state)
{
	struct env *e = *state;
	struct vgpu_record a = incoming(
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 600);
	char note[256];

	put_rec(e, &a);
	e->fail_create = -EIO;
	assert_true(locked(e, VGPU_HOOK_PREPARE, "vm1", VM1, NULL, NULL) < 0);
	assert_string_equal(state_now(e, "0000:c1:00.4"), "incoming");
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	assert_string_equal(note_of(e, "vm1", note, sizeof(note)), "");
}

/*
 * The incoming start fails after prepare (the migration does not go
 * through): release frees what it made, the vGPUs and the records the
 * migration wrote; another domain's stay.
 */
static void test_release_failed_incoming_start(void **state)
{
	struct env *e = *state;
	struct vgpu_record a = incoming(
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 600);
	struct vgpu_record o =
		vfio_rec("vm2", VM2, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	char recs[256];

	put_rec(e, &a);
	put_rec(e, &o);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(cheap_ok(e, VGPU_HOOK_RELEASE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_PARSE_XML);
	locked_ok(e, VGPU_HOOK_RELEASE, "vm1", VM1);
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:c1:00.5\n");
}

/*
 * An incoming record whose domain never arrived is dropped after its
 * deadline by the next writer (here the hook of another domain), and
 * prepare of that domain has nothing to create any more.
 */
static void test_incoming_expired_dropped(void **state)
{
	struct env *e = *state;
	struct vgpu_record o =
		vfio_rec("vm2", VM2, "0000:c1:00.5", L40S_8Q, VGPU_LIFETIME_PER_START);
	char recs[256], rel[128], text[1024];
	struct vgpu_record gone = incoming(
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 0);
	char *t;

	put_rec(e, &o);
	gone.deadline = 1000; /* long past: written as a migration left it */
	t = vgpu_record_format(&gone);
	snprintf(text, sizeof(text), "%s", t);
	free(t);
	snprintf(rel, sizeof(rel), "%s/0000:c1:00.4", VGPU_RECORDS_DIR);
	tree_put(e->root, rel, text);
	locked_ok(e, VGPU_HOOK_PREPARE, "vm2", VM2);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:c1:00.5\n");
	assert_contains(e->log, "did not migrate here before its deadline");
	assert_int_equal(vf_type(e, "0000:c1:00.4"), 0);
}

/* ---- migrate begin on the destination ------------------------------------------------- */

#define VM3 "33333333-2222-4333-8444-555555555555"

/* The locked migrate pass for domain @name/@uuid with @n vGPUs @v. */
static int migrate(struct env *e, const char *name, const char *uuid,
		   const struct vgpu_hook_vgpu *v, size_t n, struct vgpu_hook_result *res)
{
	const struct vgpu_hook_domain d = { .uuid = uuid, .vgpus = v, .n_vgpus = n, .vcpus = 2 };
	const struct vgpu_hook_input in = {
		.name = name, .parsed = &d, .lock_wait_ms = 300, .reason = e->reason
	};
	int r;

	memset(res, 0, sizeof(*res));
	vgpu_ctx_clear(&e->ctx);
	r = vgpu_hook_run(&e->ctx, e->fs, VGPU_HOOK_MIGRATE, &in, res);
	assert_false(host_locked(e)); /* never left behind */
	if (r < 0)
		assert_int_equal(res->n_landing, 0);
	return r;
}

static void migrate_ok(struct env *e, const char *name, const char *uuid,
		       const struct vgpu_hook_vgpu *v, size_t n, struct vgpu_hook_result *res)
{
	int r = migrate(e, name, uuid, v, n, res);

	if (r < 0)
		fail_msg("migrate: %d: %s", r, vgpu_ctx_error(&e->ctx));
}

/*
 * The cheap pass reads stdin even on a host without records (the domain
 * comes from elsewhere) and asks for the parse only when the XML names our
 * metadata's namespace: another domain's migration is answered at once.
 */
static void test_migrate_cheap(void **state)
{
	struct env *e = *state;
	const char *ours = "<metadata><vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' "
			   "owner='" VM1 "'/></metadata>";
	char xml[4096];

	assert_int_equal(cheap_ok(e, VGPU_HOOK_MIGRATE, "vm1", dom_xml("vm1", VM1, "")),
			 VGPU_HOOK_DONE);
	assert_int_equal(e->xml_reads, 1);
	snprintf(xml, sizeof(xml), "%s", dom_xml("vm1", VM1, ""));
	memcpy(strstr(xml, "  <devices>"), ours, strlen(ours)); /* over the devices */
	snprintf(strstr(xml, "</metadata>") + strlen("</metadata>"), 32, "\n</domain>\n");
	assert_int_equal(cheap_ok(e, VGPU_HOOK_MIGRATE, "vm1", xml), VGPU_HOOK_PARSE_XML);
	assert_int_equal(e->xml_reads, 2);
	/* stdin that cannot be read fails the call (the migration is cancelled) */
	e->xml_err = -EIO;
	assert_int_equal(cheap(e, VGPU_HOOK_MIGRATE, "vm1", xml, &(enum vgpu_hook_next){ 0 }),
			 -EIO);
}

/* No vGPU in the metadata: not ours; nothing written, nothing to print. */
static void test_migrate_not_ours(void **state)
{
	struct env *e = *state;
	struct vgpu_hook_result res;
	char recs[64];

	migrate_ok(e, "vm1", VM1, NULL, 0, &res);
	assert_int_equal(res.n_landing, 0);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "");
}

/*
 * A VF vGPU lands on a VF of this host, recorded incoming for the domain's
 * UUID with a deadline within the hour; nothing is created yet.  A second
 * attempt replaces the first's records; the same VF address as on the
 * source needs no rewrite.
 */
static void test_migrate_vf(void **state)
{
	struct env *e = *state;
	struct vgpu_hook_vgpu v = { .profile = "L40S-8Q",
				    .iface = VGPU_IFACE_VENDOR_VFIO,
				    .vf = "0000:99:00.4" };
	struct vgpu_hook_result res, again;
	VGPU_AUTORECORDS recs = { 0 };
	long long now = (long long)time(NULL);
	char text[256], want[256];

	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	assert_int_equal(res.n_landing, 1);
	assert_true(res.landing[0].changed);
	assert_string_equal(res.landing[0].mdev_uuid, "");
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_string_equal(recs.v[0].parent, res.landing[0].parent);
	assert_string_equal(recs.v[0].domain_uuid, VM1);
	assert_int_equal(recs.v[0].state, VGPU_RECORD_INCOMING);
	assert_int_equal(recs.v[0].type_id, L40S_8Q);
	assert_true(recs.v[0].deadline > now);
	assert_true(recs.v[0].deadline <= now + VGPU_INCOMING_MAX_S + 1);
	assert_int_equal(e->n_create, 0); /* prepare creates it, not migrate */
	assert_true(vgpu_cpuset_empty(&recs.v[0].cpus)); /* not pinned: no CPUs held */

	v.vf = res.landing[0].parent;
	migrate_ok(e, "vm1", VM1, &v, 1, &again);
	assert_string_equal(again.landing[0].parent, res.landing[0].parent);
	assert_false(again.landing[0].changed);
	records_now(e, text, sizeof(text));
	snprintf(want, sizeof(want), "vm1 %s\n", res.landing[0].parent);
	assert_string_equal(text, want);
}

/* A domain whose records here are active (it runs here) cannot migrate here; nothing changes. */
static void test_migrate_active_here(void **state)
{
	struct env *e = *state;
	struct vgpu_record a =
		vfio_rec("vm1", VM1, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	const struct vgpu_hook_vgpu v = { .profile = "L40S-8Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	struct vgpu_hook_result res;
	char recs[256];
	struct vgpu_record b = incoming(
		vfio_rec("vm1", VM1, "0000:41:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT), 600);

	put_rec(e, &a);
	put_rec(e, &b); /* sorted first: still not removed by a refused migration */
	assert_int_equal(migrate(e, "vm1", VM1, &v, 1, &res), -EEXIST);
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm1 0000:41:00.4\nvm1 0000:c1:00.4\n");
	assert_string_equal(state_now(e, "0000:c1:00.4"), "active");
}

/*
 * The fixture's GPU 41 holds L40S-4Q vGPUs (no other size fits beside
 * them); another domain's record holds GPU c1 with L40S-48Q: no room, one
 * line, nothing written.
 */
static void test_migrate_no_room(void **state)
{
	struct env *e = *state;
	struct vgpu_record a = vfio_rec("vm2", VM2, "0000:c1:00.4", 1155, VGPU_LIFETIME_PER_START);
	const struct vgpu_hook_vgpu v = { .profile = "L40S-48Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	struct vgpu_hook_result res;
	char recs[256];
	int r;

	put_rec(e, &a);
	r = migrate(e, "vm1", VM1, &v, 1, &res);
	assert_true(r == -EBUSY || r == -ENOSPC);
	assert_contains(vgpu_ctx_error(&e->ctx), "L40S-48Q");
	assert_null(strchr(vgpu_ctx_error(&e->ctx), '\n')); /* one line for stderr */
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, "vm2 0000:c1:00.4\n");
}

/*
 * Two migrations race for the last L40S-48Q slot (GPU c1): the host lock
 * orders them, the first holds the slot with its incoming record, the
 * second is refused with nothing written.
 */
static void test_migrate_race_last_slot(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "L40S-48Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	struct vgpu_hook_result res;
	char recs[256], want[256];

	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	snprintf(want, sizeof(want), "vm1 %s\n", res.landing[0].parent);
	assert_true(migrate(e, "vm3", VM3, &v, 1, &res) < 0);
	assert_contains(vgpu_ctx_error(&e->ctx), "L40S-48Q");
	records_now(e, recs, sizeof(recs));
	assert_string_equal(recs, want);
}

/* One migrate of @name/@uuid in a child process: exit 0 placed, 1 refused for room, 2 else. */
static void migrate_child(const char *root, const char *name, const char *uuid)
{
	const struct vgpu_hook_vgpu v = { .profile = "L40S-48Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	const struct vgpu_hook_domain d = { .uuid = uuid, .vgpus = &v, .n_vgpus = 1, .vcpus = 2 };
	const struct vgpu_hook_input in = { .name = name, .parsed = &d, .lock_wait_ms = 20000 };
	struct vgpu_hook_result res;
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_ctx ctx;
	int r;

	vgpu_ctx_init(&ctx, NULL, NULL);
	if (vgpu_sysfs_open(&ctx, root, &fs) < 0)
		_exit(2);
	r = vgpu_hook_run(&ctx, fs, VGPU_HOOK_MIGRATE, &in, &res);
	_exit(r == 0 ? 0 : r == -EBUSY || r == -ENOSPC ? 1 : 2);
}

/* The same race in two processes at once: exactly one wins, the other is refused, one record. */
static void test_migrate_race_processes(void **state)
{
	struct env *e = *state;
	const char *names[] = { "vm1", "vm3" }, *uuids[] = { VM1, VM3 };
	int won = 0, refused = 0;
	VGPU_AUTORECORDS recs = { 0 };
	pid_t pid[2];

	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			migrate_child(e->root, names[i], uuids[i]);
	}
	for (int i = 0; i < 2; i++) {
		int st = 0;

		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st));
		won += WEXITSTATUS(st) == 0;
		refused += WEXITSTATUS(st) == 1;
	}
	assert_int_equal(won, 1);
	assert_int_equal(refused, 1);
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_int_equal(recs.v[0].state, VGPU_RECORD_INCOMING);
	assert_int_equal(recs.v[0].type_id, 1155);
}

/* An mdev keeps its UUID when nobody here has it; the hostdev needs no rewrite. */
static void test_migrate_mdev_kept(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "A30-6C",
					  .iface = VGPU_IFACE_MDEV,
					  .mdev_uuid = MDEV1 };
	struct vgpu_hook_result res;
	VGPU_AUTORECORDS recs = { 0 };

	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	assert_int_equal(res.n_landing, 1);
	assert_string_equal(res.landing[0].mdev_uuid, MDEV1);
	assert_false(res.landing[0].changed);
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_string_equal(recs.v[0].mdev_uuid, MDEV1);
	assert_int_equal(recs.v[0].state, VGPU_RECORD_INCOMING);
}

/* An mdev whose UUID another domain's record or an mdev here has gets a new one. */
static void test_migrate_mdev_uuid_taken(void **state)
{
	struct env *e = *state;
	struct vgpu_record o = mdev_rec("vm2", VM2, "0000:af:00.4", MDEV1, VGPU_LIFETIME_PER_START);
	const struct vgpu_hook_vgpu v = { .profile = "A30-6C",
					  .iface = VGPU_IFACE_MDEV,
					  .mdev_uuid = MDEV1 };
	const struct vgpu_hook_vgpu w = { .profile = "A30-6C",
					  .iface = VGPU_IFACE_MDEV,
					  .mdev_uuid = MDEV2 };
	struct vgpu_hook_result res;

	put_rec(e, &o);
	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	assert_true(res.landing[0].changed);
	assert_string_not_equal(res.landing[0].mdev_uuid, MDEV1);
	assert_true(vgpu_uuid_valid(res.landing[0].mdev_uuid));
	add_mdev(e, MDEV2, "0000:3b:00.5", A30_6C); /* a device nobody recorded */
	migrate_ok(e, "vm3", VM3, &w, 1, &res);
	assert_true(res.landing[0].changed);
	assert_string_not_equal(res.landing[0].mdev_uuid, MDEV2);
}

/* The locked migrate pass with mdev<->VF allowed or not (@why: the refusal's reason). */
static int migrate_iface(struct env *e, const struct vgpu_hook_vgpu *v, bool allowed,
			 const char *why, struct vgpu_hook_result *res)
{
	const struct vgpu_hook_domain d = { .uuid = VM1,
					    .vgpus = v,
					    .n_vgpus = 1,
					    .vcpus = 2,
					    .iface_change = allowed,
					    .iface_change_why = why };
	const struct vgpu_hook_input in = { .name = "vm1", .parsed = &d, .lock_wait_ms = 300 };

	memset(res, 0, sizeof(*res));
	vgpu_ctx_clear(&e->ctx);
	return vgpu_hook_run(&e->ctx, e->fs, VGPU_HOOK_MIGRATE, &in, res);
}

/*
 * A VF vGPU that would be an mdev here: refused with one line naming the
 * reason the caller gave (this host's libvirt), nothing written; allowed
 * (libvirt >= 11.0), it lands on an mdev with a new UUID, recorded as one.
 */
static void test_migrate_interface_change(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "A30-6C",
					  .iface = VGPU_IFACE_VENDOR_VFIO,
					  .vf = "0000:3b:00.4" };
	struct vgpu_hook_result res;
	VGPU_AUTORECORDS recs = { 0 };
	char text[64];

	assert_int_equal(migrate_iface(e, &v, false, "this host's libvirt is 10.0.0", &res),
			 -ENOTSUP);
	assert_contains(vgpu_ctx_error(&e->ctx), "vendor-vfio on the source and would be mdev");
	assert_contains(vgpu_ctx_error(&e->ctx), "this host's libvirt is 10.0.0");
	assert_null(strchr(vgpu_ctx_error(&e->ctx), '\n'));
	assert_int_equal(res.n_landing, 0);
	records_now(e, text, sizeof(text));
	assert_string_equal(text, "");
	assert_int_equal(migrate_iface(e, &v, false, NULL, &res), -ENOTSUP);
	assert_contains(vgpu_ctx_error(&e->ctx), "libvirt 11.0 or later on both ends");

	assert_int_equal(migrate_iface(e, &v, true, NULL, &res), 0);
	assert_int_equal(res.n_landing, 1);
	assert_int_equal(res.landing[0].iface, VGPU_IFACE_MDEV);
	assert_int_equal(res.landing[0].type_id, A30_6C);
	assert_true(res.landing[0].changed);
	assert_true(vgpu_uuid_valid(res.landing[0].mdev_uuid));
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_int_equal(recs.v[0].iface, VGPU_IFACE_MDEV);
	assert_string_equal(recs.v[0].mdev_uuid, res.landing[0].mdev_uuid);
	assert_int_equal(recs.v[0].state, VGPU_RECORD_INCOMING);
}

/*
 * An mdev vGPU that would be a VF here: gated the same way; allowed, it
 * lands on a VF.  An mdev whose hostdev shows a display (or ramfb) cannot
 * become a VF, whose hostdev has none: refused even when allowed.
 */
static void test_migrate_mdev_to_vf(void **state)
{
	struct env *e = *state;
	struct vgpu_hook_vgpu v = {
		.profile = "L40S-8Q", .iface = VGPU_IFACE_MDEV, .mdev_uuid = MDEV1, .display = true
	};
	struct vgpu_hook_result res;
	VGPU_AUTORECORDS recs = { 0 };
	char text[64];

	assert_int_equal(migrate_iface(e, &v, false, NULL, &res), -ENOTSUP);
	assert_int_equal(migrate_iface(e, &v, true, NULL, &res), -ENOTSUP);
	assert_contains(vgpu_ctx_error(&e->ctx), "display");
	records_now(e, text, sizeof(text));
	assert_string_equal(text, "");
	v.display = false;
	assert_int_equal(migrate_iface(e, &v, true, NULL, &res), 0);
	assert_int_equal(res.landing[0].iface, VGPU_IFACE_VENDOR_VFIO);
	assert_string_equal(res.landing[0].mdev_uuid, "");
	assert_true(res.landing[0].changed);
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_int_equal(recs.v[0].iface, VGPU_IFACE_VENDOR_VFIO);
	assert_string_equal(recs.v[0].parent, res.landing[0].parent);
}

/*
 * The CPUs for a pinned domain's re-pin: one per vCPU slot, on whole cores
 * of the target GPU's node, vCPUs 2i and 2i+1 on one core's siblings (as
 * xml pins); the record holds the same CPUs.
 */
static void test_migrate_pins(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "L40S-8Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	const struct vgpu_hook_domain d = {
		.uuid = VM1, .vgpus = &v, .n_vgpus = 1, .vcpus = 4, .pinned = true
	};
	const struct vgpu_hook_input in = { .name = "vm1", .parsed = &d, .lock_wait_ms = 300 };
	struct vgpu_hook_result res = { .n_landing = 0 };
	struct vgpu_cpuset pinned;
	VGPU_AUTORECORDS recs = { 0 };

	assert_int_equal(vgpu_hook_run(&e->ctx, e->fs, VGPU_HOOK_MIGRATE, &in, &res), 0);
	assert_true(res.node >= 0);
	assert_true(res.n_pins >= 4);
	vgpu_cpuset_zero(&pinned);
	for (unsigned i = 0; i < res.n_pins; i++)
		vgpu_cpuset_set(&pinned, res.pins[i]);
	assert_int_equal(vgpu_cpuset_count(&pinned), res.n_pins); /* each CPU once */
	assert_true(vgpu_cpuset_subset(&pinned, &res.cpus));
	assert_int_equal(vgpu_cpuset_count(&res.cpus), res.n_pins); /* whole cores, no spare */
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_true(vgpu_cpuset_subset(&recs.v[0].cpus, &res.cpus));
	assert_true(vgpu_cpuset_subset(&res.cpus, &recs.v[0].cpus));
}

/*
 * The CLI could not give libvirt the rewritten XML: the incoming records
 * the pass wrote go; a domain whose records here are active keeps them.
 */
static void test_migrate_abandon(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "L40S-8Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	struct vgpu_record a =
		vfio_rec("vm2", VM2, "0000:c1:00.4", L40S_8Q, VGPU_LIFETIME_PERSISTENT);
	struct vgpu_hook_result res;
	char text[128];

	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	put_rec(e, &a);
	assert_int_equal(vgpu_hook_migrate_abandon(&e->ctx, e->fs, "vm1", VM1, 300), 0);
	records_now(e, text, sizeof(text));
	assert_string_equal(text, "vm2 0000:c1:00.4\n");
	assert_int_equal(vgpu_hook_migrate_abandon(&e->ctx, e->fs, "vm2", VM2, 300), -EEXIST);
	records_now(e, text, sizeof(text));
	assert_string_equal(text, "vm2 0000:c1:00.4\n");
	assert_false(host_locked(e));
}

/*
 * An incoming record past its deadline (a migration that never came) holds
 * the last L40S-48Q slot: the next migrate drops it and takes the slot.
 */
static void test_migrate_drops_expired(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "L40S-48Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	struct vgpu_record gone =
		incoming(vfio_rec("vm2", VM2, "0000:c1:00.4", 1155, VGPU_LIFETIME_PERSISTENT), 600);
	struct vgpu_hook_result res;
	char text[128], want[128], rel[128], *t;

	snprintf(gone.profile, sizeof(gone.profile), "L40S-48Q");
	put_rec(e, &gone);
	assert_true(migrate(e, "vm1", VM1, &v, 1, &res) < 0); /* held until its deadline */
	gone.deadline = 1000; /* long past: written as a migration left it */
	t = vgpu_record_format(&gone);
	snprintf(rel, sizeof(rel), "%s/0000:c1:00.4", VGPU_RECORDS_DIR);
	tree_put(e->root, rel, t);
	free(t);
	migrate_ok(e, "vm1", VM1, &v, 1, &res);
	snprintf(want, sizeof(want), "vm1 %s\n", res.landing[0].parent);
	records_now(e, text, sizeof(text));
	assert_string_equal(text, want);
}

/*
 * A pinned domain's records hold the CPUs chosen for it here; then the
 * destination's prepare creates the vGPU and makes the record active.
 */
static void test_migrate_then_prepare(void **state)
{
	struct env *e = *state;
	const struct vgpu_hook_vgpu v = { .profile = "L40S-8Q", .iface = VGPU_IFACE_VENDOR_VFIO };
	const struct vgpu_hook_domain d = {
		.uuid = VM1, .vgpus = &v, .n_vgpus = 1, .vcpus = 2, .pinned = true
	};
	const struct vgpu_hook_input in = { .name = "vm1", .parsed = &d, .lock_wait_ms = 300 };
	struct vgpu_hook_result res = { .n_landing = 0 };
	VGPU_AUTORECORDS recs = { 0 };

	assert_int_equal(vgpu_hook_run(&e->ctx, e->fs, VGPU_HOOK_MIGRATE, &in, &res), 0);
	assert_int_equal(res.n_landing, 1);
	assert_false(vgpu_cpuset_empty(&res.cpus));
	assert_int_equal(vgpu_records_read(&e->ctx, e->fs, &recs), 0);
	assert_int_equal(recs.n, 1);
	assert_true(vgpu_cpuset_subset(&recs.v[0].cpus, &res.cpus));
	assert_true(vgpu_cpuset_subset(&res.cpus, &recs.v[0].cpus));
	assert_string_equal(state_now(e, res.landing[0].parent), "incoming");
	locked_ok(e, VGPU_HOOK_PREPARE, "vm1", VM1);
	assert_int_equal(vf_type(e, res.landing[0].parent), L40S_8Q);
	assert_string_equal(state_now(e, res.landing[0].parent), "active");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_of),
		cmocka_unit_test_setup_teardown(test_cheap_no_records, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_not_ours, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_prepare_present, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_prepare_work, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_renamed, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_maybe_foreign, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_unscannable, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_release, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_cheap_errors, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_started, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_present, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_recreates, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_wrong_type, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_rollback, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_unreadable, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_foreign_hostdev, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_vf_held_by_other, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_prepare_mdev_moves, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_mdev_create_fails_moves, setup_a30,
						teardown),
		cmocka_unit_test_setup_teardown(test_prepare_mdev_nowhere, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_interrupted_move, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_lock_timeout, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_gpu_lock_timeout, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_frees_per_start, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_nothing, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_failed_start, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_incoming_becomes_active, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_prepare_incoming_rollback, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_failed_incoming_start, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_incoming_expired_dropped, setup_l40s,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_stale, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_fails, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_lock_timeout, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_migrated, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_other_reasons, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_release_migrated_fails, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_cheap, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_not_ours, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_vf, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_active_here, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_no_room, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_race_last_slot, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_race_processes, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_mdev_kept, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_mdev_uuid_taken, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_interface_change, setup_a30, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_mdev_to_vf, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_pins, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_abandon, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_drops_expired, setup_l40s, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_then_prepare, setup_l40s, teardown),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
