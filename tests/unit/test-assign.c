// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-assign - the use cases on one domain (src/lib/assign.c: vgpu_assign,
 * vgpu_release) on a temporary copy of a fixture host.  The owner records
 * are real files under the copy; the driver is an in-memory stand-in
 * (struct vgpu_txn_ops) that remembers the vGPUs it made and fails where a
 * test says; libvirt is the stand-in of fake-libvirt/ (version 9.0, two
 * other domains), found first through this test's RPATH.  The clock the
 * locks' deadlines are read on is wrapped (--wrap=vgpu_monotonic_ms), so a
 * test can let another holder outlast the 30 s wait at once.
 *
 * Each branch of assign and release has a test: what the caller gets (the
 * return, the message) and what the host is left with (records, vGPUs).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "assign.h"
#include "catalog.h"
#include "live.h"
#include "params.h"
#include "records.h"
#include "sysfs-lock.h"
#include "test-util.h"
#include "txn.h"
#include "virt.h"

static const char *srcdir;

#define UUID1 "a1b2c3d4-0007-4000-8000-000000000001"
#define UUID2 "a1b2c3d4-0007-4000-8000-000000000002"

/* ---- the in-memory driver ------------------------------------------------------------ */

#define MAX_MADE 16

static struct sim {
	struct vgpu_record made[MAX_MADE]; /* the vGPUs there now */
	size_t n_made;
	unsigned creates, destroys; /* calls */
	int fail_create; /* -errno */
	unsigned fail_create_at; /* this call (1, 2, ...) fails with -EBUSY; 0: none */
	int fail_destroy; /* -errno */
	bool stale; /* destroy: the host holds another vGPU there (-ESTALE) */
	int fail_write; /* -errno: every record write fails */
} sim;

static bool same_vgpu(const struct vgpu_record *a, const struct vgpu_record *b)
{
	return strcmp(a->parent, b->parent) == 0 && strcmp(a->mdev_uuid, b->mdev_uuid) == 0;
}

static int sim_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		      bool *created)
{
	(void)fs;
	*created = false;
	sim.creates++;
	if (sim.fail_create || sim.creates == sim.fail_create_at)
		return vgpu_error(ctx, sim.fail_create ? sim.fail_create : -EBUSY,
				  "the driver refused %s on %s", r->profile, r->parent);
	for (size_t i = 0; i < sim.n_made; i++)
		if (same_vgpu(&sim.made[i], r))
			return 0;
	assert_true(sim.n_made < MAX_MADE);
	sim.made[sim.n_made++] = *r;
	*created = true;
	return 0;
}

static int sim_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *freed)
{
	(void)fs;
	*freed = false;
	sim.destroys++;
	if (sim.fail_destroy)
		return vgpu_error(ctx, sim.fail_destroy, "the driver could not free %s", r->parent);
	if (sim.stale)
		return vgpu_error(ctx, -ESTALE, "%s holds another vGPU now", r->parent);
	for (size_t i = 0; i < sim.n_made; i++)
		if (same_vgpu(&sim.made[i], r)) {
			sim.made[i] = sim.made[--sim.n_made];
			*freed = true;
			break;
		}
	return 0;
}

static int sim_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r)
{
	if (sim.fail_write)
		return vgpu_error(ctx, sim.fail_write, "cannot write the record of %s", r->parent);
	return vgpu_record_write(ctx, fs, r);
}

static const struct vgpu_txn_ops sim_ops = {
	.create = sim_create,
	.destroy = sim_destroy,
	.record_write = sim_write,
	.record_remove = vgpu_record_remove,
};

/*
 * The clock the locks' deadlines are read on, wrapped (--wrap): with
 * clock_step_ms set, each reading is that much later than the one before,
 * so a wait of VGPU_ASSIGN_LOCK_WAIT_MS ends after a few polls.
 */
uint64_t __real_vgpu_monotonic_ms(void);
uint64_t __wrap_vgpu_monotonic_ms(void);

static uint64_t clock_step_ms, clock_skew_ms;

uint64_t __wrap_vgpu_monotonic_ms(void)
{
	clock_skew_ms += clock_step_ms;
	return __real_vgpu_monotonic_ms() + clock_skew_ms;
}

/* ---- the host and the runs ----------------------------------------------------------- */

struct fx {
	char root[1024];
	struct vgpu_ctx ctx;
	struct warnings warn;
	struct vgpu_sysfs *fs;
	char *xml; /* the last run's definition */
};

/* The fixture hosts, copied once for all tests (a copy costs a second on a busy disk). */
static char hosts[2][1024];
static const char *const host_names[] = { "a30-dual-mdev", "vfio-ts-l40s" };

static int group_setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(host_names); i++) {
		char src[1024], cmd[4200];

		tree_make(hosts[i], sizeof(hosts[i]), "assign");
		fixture_host_path(src, sizeof(src), srcdir, host_names[i]);
		snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, hosts[i]);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(host_names); i++)
		tree_remove(hosts[i]);
	return 0;
}

/*
 * What a run wrote into a host copy (records, catalogues, locks, outputs):
 * everything but the fixture's sys/ and proc/, which the stand-in driver
 * never changes.
 */
static void host_reset(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[2048];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "sys") || !strcmp(e->d_name, "proc"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		tree_remove(path);
	}
	if (d)
		closedir(d);
}

/* f->root: the copy of fixture host @i (0: a30-dual-mdev, 1: vfio-ts-l40s). */
static void host_use(struct fx *f, size_t i)
{
	snprintf(f->root, sizeof(f->root), "%s", hosts[i]);
	host_reset(f->root);
	vgpu_sysfs_free(f->fs);
	f->fs = NULL;
	if (vgpu_sysfs_open(&f->ctx, f->root, &f->fs) < 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	memset(&sim, 0, sizeof(sim));
	clock_step_ms = 0;
	unsetenv("FAKE_LIBVIRT_FAIL");
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	vgpu_ctx_set_priority(&f->ctx, LOG_NOTICE);
	host_use(f, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	vgpu_sysfs_free(f->fs);
	host_reset(f->root);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
	free(f->xml);
	free(f);
	unsetenv("FAKE_LIBVIRT_FAIL");
	return 0;
}

#define assign_test(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* A domain named @name with UUID @uuid (NULL: no <uuid>), 1 GiB and 1 vCPU. */
static char *domain(const char *name, const char *uuid)
{
	return vgpu_asprintf("<domain type='kvm'>\n  <name>%s</name>\n%s%s%s"
			     "  <memory>1048576</memory>\n  <vcpu>1</vcpu>\n"
			     "  <os>\n    <type>hvm</type>\n  </os>\n</domain>\n",
			     name, uuid ? "  <uuid>" : "", uuid ? uuid : "",
			     uuid ? "</uuid>\n" : "");
}

/* @xml with the first @from replaced by @to (a copy). */
static char *replace(const char *xml, const char *from, const char *to)
{
	const char *p = strstr(xml, from);

	if (!p)
		fail_msg("'%s' is not in the definition", from);
	return vgpu_asprintf("%.*s%s%s", (int)(p - xml), xml, to, p + strlen(from));
}

/* What one run asks besides the domain. */
struct ask {
	const char *profile; /* "A30-6C", or "A30-6C,A30-6C" */
	bool dry_run, per_start, no_pin;
	const char *output;
	struct vgpu_virt *virt;
	const char *mdev_uuid;
	const char *name;
	const char *vf; /* assign: exactly this parent; release: only this parent */
	const char *gpu; /* assign: on this GPU */
	unsigned vcpus; /* assign: 0 takes the domain's <vcpu> */
	uint64_t memory_kib; /* assign: 0 keeps the domain's <memory> */
	const struct vgpu_cpuset *emulator_cpus;
};

/* vgpu_assign() of @xml (the definition handed back goes to f->xml). */
static int assign(struct fx *f, const char *xml, const struct ask *a)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *list = vgpu_xstrdup(a->profile);
	struct vgpu_domain_info dom;
	struct vgpu_request req = { .n_profiles = 0 };
	struct vgpu_domain_opts o = { .name = a->name,
				      .memory_kib = a->memory_kib,
				      .emulator_cpus = a->emulator_cpus,
				      .no_pin = a->no_pin,
				      .per_start = a->per_start };
	struct vgpu_domain_target t = {
		.virt = a->virt, .output = a->output, .dry_run = a->dry_run, .ops = &sim_ops
	};
	int r;

	for (char *save = NULL, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
		req.profiles[req.n_profiles++] = p;
	req.mdev_uuids[0] = a->mdev_uuid;
	req.gpu = a->gpu;
	req.vf = a->vf;
	req.vcpus = a->vcpus;
	if (vgpu_domain_parse(&f->ctx, xml, strlen(xml), "test", &doc) < 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	vgpu_domain_read(f->fs, doc, &dom);
	free(f->xml);
	f->xml = NULL;
	vgpu_ctx_clear(&f->ctx);
	r = vgpu_assign(&f->ctx, f->fs, doc, &dom, &req, &o, &t, &f->xml);
	vgpu_domain_info_clear(&dom);
	return r;
}

/* vgpu_release() of @xml. */
static int release(struct fx *f, const char *xml, const struct ask *a)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	struct vgpu_domain_info dom;
	struct vgpu_domain_target t = {
		.virt = a->virt, .output = a->output, .dry_run = a->dry_run, .ops = &sim_ops
	};
	int r;

	if (vgpu_domain_parse(&f->ctx, xml, strlen(xml), "test", &doc) < 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	vgpu_domain_read(f->fs, doc, &dom);
	free(f->xml);
	f->xml = NULL;
	vgpu_ctx_clear(&f->ctx);
	r = vgpu_release(&f->ctx, f->fs, doc, &dom, a->vf, &t, &f->xml);
	vgpu_domain_info_clear(&dom);
	return r;
}

/* The owner records on the host now. */
static size_t n_records(struct fx *f)
{
	VGPU_AUTORECORDS recs = { 0 };

	if (vgpu_records_read(&f->ctx, f->fs, &recs) < 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	return recs.n;
}

/* The one record on the host (fails the test unless there is exactly one). */
static struct vgpu_record one_record(struct fx *f)
{
	VGPU_AUTORECORDS recs = { 0 };

	if (vgpu_records_read(&f->ctx, f->fs, &recs) < 0 || recs.n != 1)
		fail_msg("want 1 record, have %zu", recs.n);
	return recs.v[0];
}

static bool logged(const struct fx *f, const char *part)
{
	for (size_t i = 0; i < f->warn.n; i++)
		if (strstr(f->warn.msgs[i], part))
			return true;
	return false;
}

#define assert_error(f, part)                                                                      \
	do {                                                                                       \
		if (!strstr(vgpu_ctx_error(&(f)->ctx), part))                                      \
			fail_msg("message '%s' lacks '%s'", vgpu_ctx_error(&(f)->ctx), part);      \
	} while (0)

#define assert_logged(f, part)                                                                     \
	do {                                                                                       \
		if (!logged(f, part))                                                              \
			fail_msg("nothing logged with '%s'", part);                                \
	} while (0)

/* Assign @profile to vm1 (UUID1): must succeed; its definition in f->xml. */
static void assign_vm1(struct fx *f, const char *profile)
{
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = profile };

	if (assign(f, xml, &a) != 0)
		fail_msg("assign %s: %s", profile, vgpu_ctx_error(&f->ctx));
}

/* ---- assign ------------------------------------------------------------------------- */

/* The success path: a record, then the vGPU; the definition names it. */
static void test_assign_creates(void **state)
{
	struct fx *f = *state;
	struct vgpu_record rec;

	assign_vm1(f, "A30-6C");
	assert_int_equal(sim.n_made, 1);
	rec = one_record(f);
	assert_string_equal(rec.domain, "vm1");
	assert_string_equal(rec.domain_uuid, UUID1);
	assert_int_equal(rec.type_id, 684);
	assert_int_equal(rec.lifetime, VGPU_LIFETIME_PERSISTENT);
	assert_false(vgpu_cpuset_empty(&rec.cpus));
	assert_true(same_vgpu(&rec, &sim.made[0]));
	assert_non_null(strstr(f->xml, rec.mdev_uuid));
	assert_non_null(strstr(f->xml, "vgpuctl:vgpus"));
}

/* --per-start: claimed, not created (the hook creates it at each start); --no-pin: no CPUs. */
static void test_assign_per_start(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C", .per_start = true, .no_pin = true };
	struct vgpu_record rec;

	assert_int_equal(assign(f, xml, &a), 0);
	assert_int_equal(sim.creates, 0);
	rec = one_record(f);
	assert_int_equal(rec.lifetime, VGPU_LIFETIME_PER_START);
	assert_true(vgpu_cpuset_empty(&rec.cpus));
}

/* A dry run changes nothing anywhere, and hands the definition back. */
static void test_assign_dry_run(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C", .dry_run = true };
	char lock[1200];

	sim.fail_create = sim.fail_write = -EIO; /* a step that ran would fail */
	assert_int_equal(assign(f, xml, &a), 0);
	assert_int_equal(sim.creates, 0);
	assert_int_equal(n_records(f), 0);
	assert_non_null(strstr(f->xml, "<hostdev"));
	/* not even the lock file */
	snprintf(lock, sizeof(lock), "%s/run/vgpuctl", f->root);
	assert_int_not_equal(access(lock, F_OK), 0);
}

/* The same request again on the new definition: a no-op, said. */
static void test_assign_again_is_noop(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(assign(f, out, &a), 0);
	assert_int_equal(sim.creates, 1);
	assert_int_equal(n_records(f), 1);
	assert_logged(f, "'vm1' already has A30-6C: nothing to do");
	assert_string_equal(f->xml, out);
}

/*
 * One matcher for the planner and the no-op: every spelling the planner
 * takes for type 684 is the same request to a domain that holds 684 (a
 * no-op), and every spelling it does not take for 684 is another request.
 * A second rule that drifts from the planner's fails here.
 */
static void test_assign_one_matcher(void **state)
{
	static const char *const same[] = { "A30-6C",	  "a30-6c",	   "684",
					    "nvidia-684", "NVIDIA A30-6C", "GRID A30-6C" };
	static const char *const other[] = { "A30-12C", "685", "nvidia-683", "NVIDIA A30-12C" };
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *vm2 = domain("vm2", UUID2);

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	for (size_t i = 0; i < ARRAY_SIZE(same) + ARRAY_SIZE(other); i++) {
		bool is_same = i < ARRAY_SIZE(same);
		const char *spec = is_same ? same[i] : other[i - ARRAY_SIZE(same)];
		const struct ask a = { .profile = spec },
				 dry = { .profile = spec, .dry_run = true };
		int r;

		/* the planner: a fresh domain gets type 684 for it, or another type or none */
		r = assign(f, vm2, &dry);
		if (is_same && r != 0)
			fail_msg("plan '%s': %s", spec, vgpu_ctx_error(&f->ctx));
		if (is_same != (r == 0 && strstr(f->xml, "type-id=\"684\"") != NULL))
			fail_msg("the planner takes '%s' %s type 684", spec,
				 is_same ? "not for" : "for");
		/* the no-op: the same request, or refused as another */
		r = assign(f, out, &a);
		if (r != (is_same ? 0 : -EEXIST))
			fail_msg("assign '%s' again: %d (%s)", spec, r, vgpu_ctx_error(&f->ctx));
		assert_int_equal(sim.creates, 1);
	}
}

/* A cut-off assign run again in another spelling of its type: kept, not made again. */
static void test_assign_cut_off_kept_other_spelling(void **state)
{
	static const char *const same[] = { "684", "nvidia-684", "NVIDIA A30-6C", "a30-6c" };
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);

	assign_vm1(f, "A30-6C");
	for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
		const struct ask a = { .profile = same[i] };

		if (assign(f, xml, &a) != 0)
			fail_msg("'%s': %s", same[i], vgpu_ctx_error(&f->ctx));
		assert_int_equal(sim.creates, 1);
		assert_int_equal(sim.destroys, 0);
	}
}

/*
 * "Already has it" compares type IDs: metadata whose profile text is not
 * the driver's name for its type (hand-edited, or a renamed type) still
 * holds type 684, and the request for A30-6C is a no-op.
 */
static void test_assign_noop_by_type_id(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *renamed = NULL;
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	renamed = replace(out, "profile=\"A30-6C\"", "profile=\"grid_a30-6c\"");
	assert_int_equal(assign(f, renamed, &a), 0);
	assert_logged(f, "'vm1' already has grid_a30-6c: nothing to do");
	assert_int_equal(sim.creates, 1);
}

/* Another type on a domain that has one of ours: refused, nothing changed. */
static void test_assign_other_type_refused(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { .profile = "A30-12C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(assign(f, out, &a), -EEXIST);
	assert_error(f, "the domain already has other vGPUs from vgpuctl (A30-6C); release them "
			"first");
	assert_int_equal(sim.creates, 1);
	assert_int_equal(n_records(f), 1);
}

/* Damaged metadata of ours: refused like other vGPUs. */
static void test_assign_damaged_metadata(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *bad = NULL;
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	bad = replace(out, "type-id=\"684\"", "type-id=\"x\"");
	assert_int_equal(assign(f, bad, &a), -EEXIST);
	assert_error(f, "the domain already has other vGPUs from vgpuctl; release them first");
}

/* A copy of another domain's definition (a template): its vGPUs are not taken over. */
static void test_assign_template_copy_gets_own(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *tmp = NULL, *copy = NULL;
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	tmp = replace(out, UUID1, UUID2);
	copy = replace(tmp, "<name>vm1</name>", "<name>vm2</name>");
	assert_int_equal(assign(f, copy, &a), 0);
	assert_logged(f,
		      "belongs to domain " UUID1 ": not taken over; 'vm2' gets vGPUs of its own");
	assert_int_equal(sim.n_made, 2);
	assert_int_equal(n_records(f), 2);
	assert_false(strcmp(sim.made[0].parent, sim.made[1].parent) == 0);
}

/* The UUID of a domain under another name, with our metadata: refused. */
static void test_assign_uuid_of_other_with_meta(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *renamed = NULL;
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	renamed = replace(out, "<name>vm1</name>", "<name>vm2</name>");
	assert_int_equal(assign(f, renamed, &a), -EEXIST);
	assert_error(f, "UUID " UUID1 " is domain 'vm1''s (it holds A30-6C on");
	assert_int_equal(sim.creates, 1);
}

/* ... and without: the records of that UUID are another domain's, never touched. */
static void test_assign_uuid_of_other_records(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm2 = domain("vm2", UUID1);
	const struct ask a = { .profile = "A30-6C" };

	assign_vm1(f, "A30-6C");
	assert_int_equal(assign(f, vm2, &a), -EEXIST);
	assert_error(f, "UUID " UUID1 " is domain 'vm1''s");
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 1);
	assert_int_equal(sim.destroys, 0);
}

/* The same input again (an assign cut off before its definition was written): kept. */
static void test_assign_cut_off_kept(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };
	struct vgpu_record before, after;

	assign_vm1(f, "A30-6C");
	before = one_record(f);
	assert_int_equal(assign(f, xml, &a), 0);
	assert_logged(f, "'vm1' already holds A30-6C on");
	assert_int_equal(sim.creates, 1);
	assert_int_equal(sim.destroys, 0);
	after = one_record(f);
	assert_true(same_vgpu(&before, &after));
	assert_non_null(strstr(f->xml, before.mdev_uuid));
}

/* ... asking for something else: the earlier claims are undone and a new vGPU made. */
static void test_assign_cut_off_undone(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-12C" };

	assign_vm1(f, "A30-6C");
	assert_int_equal(assign(f, xml, &a), 0);
	assert_logged(f, "an earlier assign of 'vm1' did not finish: undoing its A30-6C on");
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(sim.made[0].type_id, 686);
	assert_int_equal(one_record(f).type_id, 686);
}

/* A guest no vGPU can go to is refused before anything is locked or written. */
static void test_assign_guest_refused(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *ppc = NULL;
	const struct ask a = { .profile = "A30-6C" };

	ppc = replace(xml, "<type>hvm</type>", "<type arch='ppc64'>hvm</type>");
	assert_int_equal(assign(f, ppc, &a), -ENOTSUP);
	assert_error(f, "ppc64");
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* A <vcpu> that is no count, with no count asked: refused. */
static void test_assign_bad_vcpu(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *bad = NULL;
	const struct ask a = { .profile = "A30-6C" };

	bad = replace(xml, "<vcpu>1</vcpu>", "<vcpu>many</vcpu>");
	assert_int_equal(assign(f, bad, &a), -EINVAL);
	assert_error(f, "the domain has no usable <vcpu>; give a vCPU count");
	assert_int_equal(n_records(f), 0);
}

/* A type no GPU offers: the plan fails, nothing changed. */
static void test_assign_unknown_type(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-7C" };

	assert_int_equal(assign(f, xml, &a), -ENOENT);
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* No capacity left: the second A30-24C has no GPU (the first's record holds it). */
static void test_assign_no_capacity(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm2 = domain("vm2", UUID2);
	const struct ask a = { .profile = "A30-24C" };

	assign_vm1(f, "A30-24C");
	assert_int_equal(assign(f, vm2, &a), -EBUSY);
	assert_int_equal(n_records(f), 1);
	assert_int_equal(sim.creates, 1);
}

/* An mdev UUID another domain's record holds: refused. */
static void test_assign_mdev_uuid_taken(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm2 = domain("vm2", UUID2);
	struct vgpu_record rec;

	assign_vm1(f, "A30-6C");
	rec = one_record(f);
	{
		const struct ask a = { .profile = "A30-6C", .mdev_uuid = rec.mdev_uuid };

		assert_int_equal(assign(f, vm2, &a), -EEXIST);
	}
	assert_error(f, "is already domain 'vm1''s");
	/* the way out is the caller's to name (--mdev-uuid): a hint, no option in the message */
	assert_true(vgpu_ctx_hints(&f->ctx) & VGPU_HINT_OTHER_MDEV_UUID);
	assert_null(strstr(vgpu_ctx_error(&f->ctx), "--"));
	assert_int_equal(n_records(f), 1);
}

/* The definition cannot be built (no <name>): nothing claimed. */
static void test_assign_build_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *noname = NULL;
	const struct ask a = { .profile = "A30-6C" };

	noname = replace(xml, "<name>vm1</name>", "");
	assert_int_equal(assign(f, noname, &a), -EINVAL);
	assert_error(f, "the domain has no <name>");
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* The record cannot be written: nothing created, nothing left. */
static void test_assign_record_write_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };

	sim.fail_write = -ENOSPC;
	assert_int_equal(assign(f, xml, &a), -ENOSPC);
	assert_error(f, "cannot write the record of");
	assert_int_equal(sim.creates, 0);
	sim.fail_write = 0;
	assert_int_equal(n_records(f), 0);
}

/* The driver refuses: the claim is rolled back. */
static void test_assign_create_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };

	sim.fail_create = -EBUSY;
	assert_int_equal(assign(f, xml, &a), -EBUSY);
	assert_error(f, "the driver refused A30-6C on");
	assert_error(f, "; rolled back: undid 'write owner record");
	assert_int_equal(n_records(f), 0);
	assert_null(f->xml);
}

/* Two vGPUs, the second refused: the first is freed again, both claims dropped. */
static void test_assign_second_create_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C,A30-6C" };

	sim.fail_create_at = 2;
	assert_int_equal(assign(f, xml, &a), -EBUSY);
	assert_error(f, "rolled back: undid 'create mdev");
	assert_int_equal(sim.creates, 2);
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 0);
	assert_int_equal(n_records(f), 0);
}

/* libvirt refuses the new definition: the vGPU is freed and the claim dropped. */
static void test_assign_define_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);

	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	setenv("FAKE_LIBVIRT_FAIL", "define", 1);
	{
		const struct ask a = { .profile = "A30-6C", .virt = v };

		assert_int_equal(assign(f, xml, &a), -EIO);
	}
	assert_error(f, "define refused");
	assert_error(f, "rolled back: undid 'create mdev");
	assert_int_equal(sim.creates, 1);
	assert_int_equal(sim.n_made, 0);
	assert_int_equal(n_records(f), 0);
}

/* With libvirt: the definition goes there; the other domains' pinned CPUs are avoided. */
static void test_assign_defines(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	struct vgpu_record rec;

	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	{
		const struct ask a = { .profile = "A30-6C", .virt = v };

		assert_int_equal(assign(f, xml, &a), 0);
	}
	assert_null(f->xml); /* defined, not handed back */
	rec = one_record(f);
	assert_false(vgpu_cpuset_has(&rec.cpus, 3));
	assert_false(vgpu_cpuset_has(&rec.cpus, 5));
}

/* A vendor-VFIO vGPU with a libvirt older than 10.0: refused before any change. */
static void test_assign_libvirt_too_old(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);

	host_use(f, 1);
	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	{
		const struct ask a = { .profile = "L40S-12Q", .virt = v };

		assert_int_equal(assign(f, xml, &a), -ENOTSUP);
	}
	assert_error(f, "libvirt 9.0.0 refuses a vendor-specific VFIO vGPU");
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* The output cannot be opened: refused before anything changes. */
static void test_assign_output_unopenable(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	char out[1200];

	snprintf(out, sizeof(out), "%s/no/such/dir/vm1.xml", f->root);
	{
		const struct ask a = { .profile = "A30-6C", .output = out };

		assert_true(assign(f, xml, &a) < 0);
	}
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* The output file gets the definition. */
static void test_assign_output_file(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *buf = NULL;
	char out[1200];
	size_t len;

	snprintf(out, sizeof(out), "%s/vm1.xml", f->root);
	{
		const struct ask a = { .profile = "A30-6C", .output = out };

		assert_int_equal(assign(f, xml, &a), 0);
	}
	assert_null(f->xml);
	assert_int_equal(vgpu_file_read(&f->ctx, out, 1 << 20, &buf, &len), 0);
	assert_non_null(strstr(buf, one_record(f).mdev_uuid));
}

/* A device that fails once the locks are gone: the assign is undone, -EPIPE. */
static void test_assign_late_output_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C", .output = "/dev/full" };

	if (access("/dev/full", W_OK) != 0)
		skip();
	assert_int_equal(assign(f, xml, &a), -EPIPE);
	assert_error(f, "; the assign is undone");
	assert_int_equal(sim.creates, 1);
	assert_int_equal(sim.n_made, 0);
	assert_int_equal(n_records(f), 0);
}

/* ... but a no-op run undoes nothing: the vGPUs were there before it. */
static void test_assign_late_output_fails_noop(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { .profile = "A30-6C", .output = "/dev/full" };

	if (access("/dev/full", W_OK) != 0)
		skip();
	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(assign(f, out, &a), -EPIPE);
	assert_null(strstr(vgpu_ctx_error(&f->ctx), "undone"));
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 1);
}

/* Interrupted: no step starts, nothing is left (in a child: it cannot be taken back). */
static void test_assign_interrupted(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		vgpu_interrupt(SIGINT);
		_exit(assign(f, xml, &a) == -EINTR && sim.creates == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(n_records(f), 0);
}

/* Emulator CPUs the host has not online: refused before anything changes. */
static void test_assign_emulator_cpus_offline(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	struct vgpu_cpuset emu;
	const struct ask a = { .profile = "A30-6C", .emulator_cpus = &emu };

	vgpu_cpuset_zero(&emu);
	vgpu_cpuset_set(&emu, 2);
	vgpu_cpuset_set(&emu, 200);
	assert_int_equal(assign(f, xml, &a), -EINVAL);
	assert_error(f, "emulator CPUs 200 are not online on this host");
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* vgpu_domain_plan() (plan --from) makes the domain's checks assign makes. */
static void test_plan_checks_domain(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *ppc = NULL, *bad = NULL;
	const int want[] = { 0, -ENOTSUP, -EINVAL };
	const char *inp[3];

	ppc = replace(xml, "<type>hvm</type>", "<type arch='ppc64'>hvm</type>");
	bad = replace(xml, "<vcpu>1</vcpu>", "<vcpu>many</vcpu>");
	inp[0] = xml;
	inp[1] = ppc;
	inp[2] = bad;
	for (size_t i = 0; i < ARRAY_SIZE(inp); i++) {
		VGPU_AUTOPTR(xmldoc) doc = NULL;
		VGPU_AUTOPTR(plan) plan = NULL;
		struct vgpu_domain_info dom;
		struct vgpu_request req = { .profiles = { "A30-6C" }, .n_profiles = 1 };
		const struct vgpu_domain_opts o = { .name = NULL };

		assert_int_equal(vgpu_domain_parse(&f->ctx, inp[i], strlen(inp[i]), "t", &doc), 0);
		vgpu_domain_read(f->fs, doc, &dom);
		vgpu_ctx_clear(&f->ctx);
		if (vgpu_domain_plan(&f->ctx, f->fs, NULL, &dom, true, &req, &o, NULL, &plan) !=
		    want[i])
			fail_msg("input %zu: %s", i, vgpu_ctx_error(&f->ctx));
		vgpu_domain_info_clear(&dom);
		if (i == 0)
			assert_int_equal(plan->vcpus, 1); /* the domain's <vcpu> */
	}
	assert_error(f, "the domain has no usable <vcpu>; give a vCPU count");
}

/* Run again with the --gpu and --vf it got: a no-op; another GPU or VF: refused. */
static void test_assign_again_same_place(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	struct vgpu_record rec;
	char other_gpu[VGPU_BDF_LEN], other_vf[VGPU_BDF_LEN];

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	rec = one_record(f);
	snprintf(other_gpu, sizeof(other_gpu), "%s",
		 strcmp(rec.gpu, "0000:3b:00.0") ? "0000:3b:00.0" : "0000:af:00.0");
	/* a VF of the same GPU, so that only --vf differs */
	snprintf(other_vf, sizeof(other_vf), "%.11s%s", rec.parent,
		 strcmp(rec.parent + 11, "7") ? "7" : "6");
	{
		const struct ask same[] = { { .profile = "A30-6C", .gpu = rec.gpu + 5 },
					    { .profile = "A30-6C", .vf = rec.parent } };
		const struct ask other[] = { { .profile = "A30-6C", .gpu = other_gpu },
					     { .profile = "A30-6C", .vf = other_vf } };

		for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
			if (assign(f, out, &same[i]) != 0)
				fail_msg("same %zu: %s", i, vgpu_ctx_error(&f->ctx));
			assert_logged(f, "'vm1' already has A30-6C: nothing to do");
			assert_int_equal(assign(f, out, &other[i]), -EEXIST);
			assert_error(f, "the domain already has other vGPUs from vgpuctl (A30-6C)");
		}
	}
	assert_int_equal(sim.creates, 1);
	assert_int_equal(n_records(f), 1);
}

/*
 * A cut-off assign run again with the --gpu, --vf and --mdev-uuid it got:
 * kept; with fewer vCPUs (pins within the recorded CPUs, but not all of
 * them) it is another request: undone, made anew.
 */
static void test_assign_cut_off_same_place(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm1 = domain("vm1", UUID1);
	const struct ask four = { .profile = "A30-6C", .vcpus = 4 };
	struct vgpu_record rec;

	assert_int_equal(assign(f, vm1, &four), 0);
	rec = one_record(f);
	assert_int_equal(vgpu_cpuset_count(&rec.cpus), 4);
	{
		const struct ask a = { .profile = "A30-6C",
				       .vcpus = 4,
				       .gpu = rec.gpu,
				       .vf = rec.parent,
				       .mdev_uuid = rec.mdev_uuid };

		assert_int_equal(assign(f, vm1, &a), 0);
	}
	assert_logged(f, "'vm1' already holds A30-6C on");
	assert_int_equal(sim.creates, 1);
	assert_int_equal(sim.destroys, 0);
	{
		const struct ask a = { .profile = "A30-6C" }; /* the domain's 1 vCPU */

		assert_int_equal(assign(f, vm1, &a), 0);
	}
	assert_logged(f, "an earlier assign of 'vm1' did not finish: undoing its A30-6C on");
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 1);
	rec = one_record(f);
	assert_true(vgpu_cpuset_count(&rec.cpus) < 4);
}

/* Undoing a cut-off assign touches only that domain's records and vGPUs. */
static void test_assign_cut_off_undo_own_only(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm1 = domain("vm1", UUID1), *vm2 = domain("vm2", UUID2);
	const struct ask two = { .profile = "A30-6C,A30-6C" }, six = { .profile = "A30-6C" };
	VGPU_AUTORECORDS recs = { 0 };
	struct vgpu_record theirs;
	size_t n_vm2 = 0;

	assert_int_equal(assign(f, vm2, &six), 0);
	theirs = one_record(f);
	assign_vm1(f, "A30-6C");
	if (assign(f, vm1, &two) != 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	assert_logged(f, "an earlier assign of 'vm1' did not finish");
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 3);
	assert_int_equal(vgpu_records_read(&f->ctx, f->fs, &recs), 0);
	assert_int_equal(recs.n, 3);
	for (size_t i = 0; i < recs.n; i++)
		n_vm2 += strcmp(recs.v[i].domain, "vm2") == 0 && same_vgpu(&recs.v[i], &theirs);
	assert_int_equal(n_vm2, 1);
}

/* The undo of a cut-off assign fails: the run fails, the claim stays, other domains untouched. */
static void test_assign_cut_off_undo_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm1 = domain("vm1", UUID1), *vm2 = domain("vm2", UUID2);
	const struct ask a = { .profile = "A30-12C" }, six = { .profile = "A30-6C" };

	assert_int_equal(assign(f, vm2, &six), 0);
	assign_vm1(f, "A30-6C");
	sim.fail_destroy = -EBUSY;
	assert_int_equal(assign(f, vm1, &a), -EBUSY);
	assert_error(f, "the driver could not free");
	assert_int_equal(sim.destroys, 1); /* vm1's only */
	assert_int_equal(sim.n_made, 2);
	assert_int_equal(n_records(f), 2);
}

/* A no-op with libvirt leaves its definition alone: nothing is defined again. */
static void test_assign_noop_libvirt(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *out = NULL;

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	setenv("FAKE_LIBVIRT_FAIL", "define", 1); /* a define would fail the run */
	{
		const struct ask a = { .profile = "A30-6C", .virt = v };

		assert_int_equal(assign(f, out, &a), 0);
	}
	assert_logged(f, "'vm1' already has A30-6C: nothing to do");
	assert_null(f->xml);
	assert_int_equal(sim.creates, 1);
}

/* The late output fails and so does the undo: said, with what to run. */
static void test_assign_late_output_undo_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C", .output = "/dev/full" };

	if (access("/dev/full", W_OK) != 0)
		skip();
	sim.fail_destroy = -EBUSY;
	assert_int_equal(assign(f, xml, &a), -EIO);
	assert_error(f, "; the assign could not be undone: run release");
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 1);
}

/* The other domains' pins cannot be read from libvirt: refused, nothing claimed. */
static void test_assign_libvirt_pins_unreadable(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);

	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	setenv("FAKE_LIBVIRT_FAIL", "list", 1);
	{
		const struct ask a = { .profile = "A30-6C", .virt = v };

		assert_true(assign(f, xml, &a) < 0);
	}
	assert_int_equal(n_records(f), 0);
	assert_int_equal(sim.creates, 0);
}

/* A cut-off assign's vGPU is no longer on the host: its claim is dropped all the same. */
static void test_assign_cut_off_stale(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-12C" };

	assign_vm1(f, "A30-6C");
	sim.stale = true;
	assert_int_equal(assign(f, xml, &a), 0);
	assert_logged(f, "an earlier assign of 'vm1' did not finish: undoing its A30-6C on");
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(one_record(f).type_id, 686);
}

/* ---- locks, the catalogue, a copied definition ------------------------------------- */

/* Another run's hold: on the host lock, or on the locks of both GPUs of a30-dual-mdev. */
struct holder {
	struct vgpu_sysfs *fs;
	int gpu_fd[2];
};

static void hold(struct fx *f, struct holder *h, bool host, bool gpus)
{
	static const char *const gpu[] = { "0000:3b:00.0", "0000:af:00.0" };

	h->gpu_fd[0] = h->gpu_fd[1] = -1;
	if (vgpu_sysfs_open(&f->ctx, f->root, &h->fs) < 0 ||
	    (host && vgpu_sysfs_lock(&f->ctx, h->fs, 0) < 0))
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	for (size_t i = 0; gpus && i < ARRAY_SIZE(gpu); i++)
		if (vgpu_sysfs_lock_gpu(&f->ctx, h->fs, gpu[i], 0, &h->gpu_fd[i]) < 0)
			fail_msg("%s", vgpu_ctx_error(&f->ctx));
	/* from now on every wait for a lock ends at once, past its deadline */
	clock_step_ms = 1000;
}

static void unhold(struct holder *h)
{
	clock_step_ms = 0;
	for (size_t i = 0; i < ARRAY_SIZE(h->gpu_fd); i++)
		if (h->gpu_fd[i] >= 0)
			close(h->gpu_fd[i]);
	vgpu_sysfs_free(h->fs); /* drops the host lock */
}

/* Is the host lock free now (nothing this run took is left held)? */
static bool host_lock_free(struct fx *f)
{
	struct vgpu_sysfs *other = NULL;
	bool ok;

	if (vgpu_sysfs_open(&f->ctx, f->root, &other) < 0)
		fail_msg("%s", vgpu_ctx_error(&f->ctx));
	ok = vgpu_sysfs_lock(&f->ctx, other, 0) == 0;
	vgpu_sysfs_free(other);
	return ok;
}

/* Another run holds the host lock past the wait: refused, nothing claimed or made. */
static void test_assign_host_lock_busy(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };
	struct holder h;

	hold(f, &h, true, false);
	assert_int_equal(assign(f, xml, &a), -EWOULDBLOCK);
	assert_error(f, "another vgpuctl holds the host lock");
	assert_int_equal(sim.creates, 0);
	assert_int_equal(n_records(f), 0);
	assert_null(f->xml);
	unhold(&h);
	/* once it is free, the same assign goes through */
	assign_vm1(f, "A30-6C");
	assert_int_equal(sim.n_made, 1);
}

/* A GPU's lock stays busy: the claim made under the host lock is dropped again. */
static void test_assign_gpu_lock_busy(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { .profile = "A30-6C" };
	struct holder h;

	hold(f, &h, false, true);
	assert_int_equal(assign(f, xml, &a), -EWOULDBLOCK);
	assert_error(f, "another vgpuctl holds the lock of GPU 0000:");
	assert_error(f, "; rolled back: undid 'write owner record");
	assert_int_equal(sim.creates, 0);
	assert_int_equal(n_records(f), 0);
	assert_null(f->xml);
	assert_true(host_lock_free(f));
	unhold(&h);
}

/*
 * The type catalogue cannot be saved (a file where its directory goes):
 * warned about, the assign itself goes through.
 */
static void test_assign_catalog_unsaved(void **state)
{
	struct fx *f = *state;

	tree_put(f->root, VGPU_CATALOG_DIR, "not a directory\n");
	assign_vm1(f, "A30-6C");
	assert_logged(f, "var/lib/vgpuctl/catalog");
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 1);
}

/*
 * A copy of an assigned definition (4 vCPUs, 2 GiB, the originals saved in
 * our metadata) as a template: its metadata is dropped, which puts back
 * <vcpu>1</vcpu> and 1 GiB, and the new domain is planned on those, not on
 * what the other domain's assign made of them.
 */
static void test_assign_template_copy_reread(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *vm1 = domain("vm1", UUID1), *out = NULL, *tmp = NULL, *copy = NULL;
	const struct ask big = { .profile = "A30-6C", .vcpus = 4, .memory_kib = 2097152 };
	const struct ask a = { .profile = "A30-6C" };

	assert_int_equal(assign(f, vm1, &big), 0);
	out = vgpu_steal_ptr(&f->xml);
	assert_non_null(strstr(out, "2097152"));
	tmp = replace(out, UUID1, UUID2);
	copy = replace(tmp, "<name>vm1</name>", "<name>vm2</name>");
	assert_int_equal(assign(f, copy, &a), 0);
	assert_logged(f, "'vm2' gets vGPUs of its own");
	assert_non_null(strstr(f->xml, "<vcpu placement=\"static\">1</vcpu>"));
	assert_non_null(strstr(f->xml, "<memory>1048576</memory>"));
	assert_null(strstr(f->xml, "2097152"));
	assert_int_equal(n_records(f), 2);
}

/* ---- release ------------------------------------------------------------------------ */

/* Release frees the vGPU, drops the record and gives the definition back as it was. */
static void test_release_frees(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *orig = domain("vm1", UUID1), *want = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(release(f, out, &a), 0);
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 0);
	assert_int_equal(n_records(f), 0);
	assert_int_equal(vgpu_domain_parse(&f->ctx, orig, strlen(orig), "orig", &doc), 0);
	assert_int_equal(vgpu_domain_format(&f->ctx, doc, &want), 0);
	assert_string_equal(f->xml, want);
}

/* A dry run of release changes nothing. */
static void test_release_dry_run(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { .dry_run = true };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(release(f, out, &a), 0);
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(n_records(f), 1);
	assert_null(strstr(f->xml, "<hostdev"));
}

/* Nothing to release: fine, nothing called. */
static void test_release_nothing(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	const struct ask a = { 0 };

	assert_int_equal(release(f, xml, &a), 0);
	assert_int_equal(sim.destroys, 0);
	assert_no_warnings(&f->warn);
}

/* A domain without a usable <uuid>: refused. */
static void test_release_no_uuid(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", NULL);
	const struct ask a = { 0 };

	assert_int_equal(release(f, xml, &a), -EINVAL);
	assert_error(f, "the domain has no usable <uuid>");
}

/* Damaged metadata of ours: refused, naming what is damaged. */
static void test_release_damaged_metadata(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *bad = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	bad = replace(out, "type-id=\"684\"", "type-id=\"x\"");
	assert_int_equal(release(f, bad, &a), -EINVAL);
	assert_error(f, "vgpuctl metadata: 'type-id' of 'A30-6C' is not a type id");
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(n_records(f), 1);
}

/* Another domain's vGPU that our metadata names (a copied definition): said, never freed. */
static void test_release_foreign_refused(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *tmp = NULL, *copy = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	tmp = replace(out, UUID1, UUID2);
	copy = replace(tmp, "<name>vm1</name>", "<name>vm2</name>");
	assert_int_equal(release(f, copy, &a), 0);
	assert_logged(f, "belongs to domain 'vm1' (" UUID1 ") now; not freed");
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 1);
}

/* Metadata naming a vGPU no record holds: said, not freed. */
static void test_release_no_record(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1);
	VGPU_AUTOFREE char *out = NULL;
	const struct ask dry = { .profile = "A30-6C", .dry_run = true }, a = { 0 };

	assert_int_equal(assign(f, xml, &dry), 0);
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(release(f, out, &a), 0);
	assert_logged(f, "has no owner record; not freed");
	assert_int_equal(sim.destroys, 0);
}

/* Redefined under the same name with a new UUID: the former UUID's vGPUs go too. */
static void test_release_former_uuid(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL, *redefined = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	redefined = replace(out, "<uuid>" UUID1, "<uuid>" UUID2);
	assert_int_equal(release(f, redefined, &a), 0);
	assert_logged(f, "'vm1' was redefined with UUID " UUID2);
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(n_records(f), 0);
}

/* A namesake with another UUID and no proof: its vGPUs are said, not freed. */
static void test_release_namesake_not_freed(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *other = domain("vm1", UUID2);
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	assert_int_equal(release(f, other, &a), 0);
	assert_logged(f, "is recorded for a domain 'vm1' with UUID " UUID1);
	assert_true(vgpu_ctx_hints(&f->ctx) & VGPU_HINT_RELEASE_BY_UUID);
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(n_records(f), 1);
}

/* The host holds another vGPU where the record says ours is: the record goes, the host stays. */
static void test_release_stale(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	sim.stale = true;
	assert_int_equal(release(f, out, &a), 0);
	assert_logged(f, "the record is dropped, the host left as it is");
	assert_int_equal(sim.n_made, 1);
	assert_int_equal(n_records(f), 0);
}

/* The driver cannot free it: release fails, the record stays. */
static void test_release_destroy_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { 0 };

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	sim.fail_destroy = -EBUSY;
	assert_int_equal(release(f, out, &a), -EBUSY);
	assert_error(f, "the driver could not free");
	assert_int_equal(n_records(f), 1);
	assert_int_equal(sim.n_made, 1);
}

/* --vf of another parent: nothing of this domain's is there, nothing freed. */
static void test_release_other_vf(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	struct vgpu_record rec;

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	rec = one_record(f);
	{
		const struct ask a = { .vf = strcmp(rec.parent, "0000:3b:00.7") ? "0000:3b:00.7" :
										  "0000:3b:00.6" };

		assert_int_equal(release(f, out, &a), 0);
		assert_int_equal(sim.destroys, 0);
	}
	{
		const struct ask a = { .vf = rec.parent };

		assert_int_equal(release(f, out, &a), 0);
		assert_int_equal(sim.destroys, 1);
		assert_int_equal(n_records(f), 0);
	}
}

/* Is there a vgpu_params note for @uuid (var/lib/vgpuctl/params/UUID)? */
static bool params_noted(struct fx *f, const char *uuid)
{
	char path[2048];

	snprintf(path, sizeof(path), "%s/%s/%s", f->root, VGPU_PARAMS_NOTE_DIR, uuid);
	return access(path, F_OK) == 0;
}

/*
 * The vgpu_params set `params` noted for a domain goes with its last vGPU
 * here: kept by a dry run and while one vGPU is left, another domain's kept.
 */
static void test_release_forgets_params(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *xml = domain("vm1", UUID1), *out = NULL;
	struct vgpu_params set = { .n = 0 };
	VGPU_AUTORECORDS recs = { 0 };
	char first[VGPU_BDF_LEN];

	{
		const struct ask a = { .profile = "A30-6C,A30-6C" };

		assert_int_equal(assign(f, xml, &a), 0);
	}
	out = vgpu_steal_ptr(&f->xml);
	warnings_free(&f->warn); /* assign's notes on two vGPUs of one GPU */
	assert_int_equal(vgpu_records_read(&f->ctx, f->fs, &recs), 0);
	assert_int_equal(recs.n, 2);
	snprintf(first, sizeof(first), "%s", recs.v[0].parent);
	assert_int_equal(vgpu_params_set(&f->ctx, &set, "disable_vnc", "1", false), 0);
	assert_int_equal(vgpu_live_params_note(&f->ctx, f->fs, UUID1, &set), 0);
	assert_int_equal(vgpu_live_params_note(&f->ctx, f->fs, UUID2, &set), 0);
	{
		const struct ask a = { .dry_run = true };

		assert_int_equal(release(f, out, &a), 0);
		assert_true(params_noted(f, UUID1));
	}
	{
		const struct ask a = { .vf = first };

		assert_int_equal(release(f, out, &a), 0);
		assert_int_equal(n_records(f), 1);
		assert_true(params_noted(f, UUID1));
	}
	{
		const struct ask a = { 0 };

		assert_int_equal(release(f, out, &a), 0);
		assert_int_equal(n_records(f), 0);
		assert_false(params_noted(f, UUID1));
	}
	assert_true(params_noted(f, UUID2));
}

/* libvirt refuses the released definition: the vGPU is made again and the record put back. */
static void test_release_define_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *out = NULL;
	struct vgpu_record before, after;

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	before = one_record(f);
	assert_int_equal(vgpu_virt_open(&f->ctx, "test:///fake", &v), 0);
	setenv("FAKE_LIBVIRT_FAIL", "define", 1);
	{
		const struct ask a = { .virt = v };

		assert_int_equal(release(f, out, &a), -EIO);
	}
	assert_error(f, "rolled back:");
	assert_int_equal(sim.n_made, 1);
	after = one_record(f);
	assert_true(same_vgpu(&before, &after));
}

/*
 * --vf names the VF the definition has: the hook moved the mdev since
 * (its record follows it to another VF), and it is released all the same.
 */
static void test_release_vf_moved(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	struct vgpu_record rec, moved;
	char key[VGPU_RECORD_KEY_LEN];

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	rec = one_record(f);
	moved = rec;
	snprintf(moved.parent, sizeof(moved.parent), "%.11s%s", rec.parent,
		 strcmp(rec.parent + 11, "7") ? "7" : "6");
	vgpu_record_key(&rec, key);
	assert_int_equal(vgpu_record_remove(&f->ctx, f->fs, key), 0);
	assert_int_equal(vgpu_record_write(&f->ctx, f->fs, &moved), 0);
	{
		const struct ask a = { .vf = rec.parent };

		assert_int_equal(release(f, out, &a), 0);
	}
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(n_records(f), 0);
	assert_null(strstr(f->xml, "<hostdev"));
}

/* Another run holds the host lock past the wait: refused, nothing freed. */
static void test_release_host_lock_busy(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { 0 };
	struct holder h;

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	hold(f, &h, true, false);
	assert_int_equal(release(f, out, &a), -EWOULDBLOCK);
	assert_error(f, "another vgpuctl holds the host lock");
	unhold(&h);
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(n_records(f), 1);
	assert_null(f->xml);
}

/* The GPU's lock stays busy: refused, nothing freed, no lock left held. */
static void test_release_gpu_lock_busy(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { 0 };
	struct holder h;

	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	hold(f, &h, false, true);
	assert_int_equal(release(f, out, &a), -EWOULDBLOCK);
	assert_error(f, "another vgpuctl holds the lock of GPU 0000:");
	assert_true(host_lock_free(f));
	unhold(&h);
	assert_int_equal(sim.destroys, 0);
	assert_int_equal(n_records(f), 1);
}

/* The output fails once the locks are gone: -EPIPE, the vGPUs stay freed. */
static void test_release_late_output_fails(void **state)
{
	struct fx *f = *state;
	VGPU_AUTOFREE char *out = NULL;
	const struct ask a = { .output = "/dev/full" };

	if (access("/dev/full", W_OK) != 0)
		skip();
	assign_vm1(f, "A30-6C");
	out = vgpu_steal_ptr(&f->xml);
	assert_int_equal(release(f, out, &a), -EPIPE);
	assert_int_equal(sim.destroys, 1);
	assert_int_equal(sim.n_made, 0);
	assert_int_equal(n_records(f), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		assign_test(test_assign_creates),
		assign_test(test_assign_per_start),
		assign_test(test_assign_dry_run),
		assign_test(test_assign_again_is_noop),
		assign_test(test_assign_one_matcher),
		assign_test(test_assign_cut_off_kept_other_spelling),
		assign_test(test_assign_noop_by_type_id),
		assign_test(test_assign_other_type_refused),
		assign_test(test_assign_damaged_metadata),
		assign_test(test_assign_template_copy_gets_own),
		assign_test(test_assign_uuid_of_other_with_meta),
		assign_test(test_assign_uuid_of_other_records),
		assign_test(test_assign_cut_off_kept),
		assign_test(test_assign_cut_off_undone),
		assign_test(test_assign_guest_refused),
		assign_test(test_assign_bad_vcpu),
		assign_test(test_assign_unknown_type),
		assign_test(test_assign_no_capacity),
		assign_test(test_assign_mdev_uuid_taken),
		assign_test(test_assign_build_fails),
		assign_test(test_assign_record_write_fails),
		assign_test(test_assign_create_fails),
		assign_test(test_assign_second_create_fails),
		assign_test(test_assign_define_fails),
		assign_test(test_assign_defines),
		assign_test(test_assign_libvirt_too_old),
		assign_test(test_assign_output_unopenable),
		assign_test(test_assign_output_file),
		assign_test(test_assign_late_output_fails),
		assign_test(test_assign_late_output_fails_noop),
		assign_test(test_assign_interrupted),
		assign_test(test_assign_emulator_cpus_offline),
		assign_test(test_plan_checks_domain),
		assign_test(test_assign_again_same_place),
		assign_test(test_assign_cut_off_same_place),
		assign_test(test_assign_cut_off_undo_own_only),
		assign_test(test_assign_cut_off_undo_fails),
		assign_test(test_assign_noop_libvirt),
		assign_test(test_assign_late_output_undo_fails),
		assign_test(test_assign_libvirt_pins_unreadable),
		assign_test(test_assign_cut_off_stale),
		assign_test(test_assign_host_lock_busy),
		assign_test(test_assign_gpu_lock_busy),
		assign_test(test_assign_catalog_unsaved),
		assign_test(test_assign_template_copy_reread),
		assign_test(test_release_frees),
		assign_test(test_release_dry_run),
		assign_test(test_release_nothing),
		assign_test(test_release_no_uuid),
		assign_test(test_release_damaged_metadata),
		assign_test(test_release_foreign_refused),
		assign_test(test_release_no_record),
		assign_test(test_release_former_uuid),
		assign_test(test_release_namesake_not_freed),
		assign_test(test_release_stale),
		assign_test(test_release_destroy_fails),
		assign_test(test_release_other_vf),
		assign_test(test_release_define_fails),
		assign_test(test_release_vf_moved),
		assign_test(test_release_forgets_params),
		assign_test(test_release_host_lock_busy),
		assign_test(test_release_gpu_lock_busy),
		assign_test(test_release_late_output_fails),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
