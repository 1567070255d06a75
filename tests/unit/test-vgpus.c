// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-vgpus - the vGPU rows (src/lib/vgpus.c) that vgpus, the inventory and
 * the metrics render, on a temporary copy of a fixture host: a record's
 * state read from the host, a damaged record's claimed parent, a vGPU no
 * record claims told apart as the config's (a run made it) or an orphan,
 * and the order the listing relies on.
 *
 * Usage: test-vgpus SRCDIR (or VGPU_SRCDIR in the environment).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"
#include "test-util.h"
#include "vgpus.h"

#define PF "0000:41:00.0"
#define HELD "0000:41:00.5" /* the fixture's one vGPU: L40S-4Q (1149), no record */
#define UUID1 "11111111-2222-4333-8444-555555555551"

static const char *srcdir;

/* A copy of vfio-ts-l40s, opened; its records read into @recs by read_host(). */
struct fx {
	struct host_fixture h;
	struct vgpu_records recs;
	struct vgpu_rows rows;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char src[1024], cmd[2200];
	int r;

	if (!f)
		return -1;
	vgpu_ctx_init(&f->h.ctx, warnings_collect, &f->h.warn);
	tree_make(f->h.root, sizeof(f->h.root), "vgpus");
	fixture_host_path(src, sizeof(src), srcdir, "vfio-ts-l40s");
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, f->h.root);
	if (system(cmd) != 0)
		return -1;
	r = vgpu_sysfs_open(&f->h.ctx, f->h.root, &f->h.fs);
	if (r)
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	vgpu_rows_clear(&f->rows);
	vgpu_records_clear(&f->recs);
	tree_remove(f->h.root);
	vgpu_model_free(f->h.m);
	vgpu_sysfs_free(f->h.fs);
	vgpu_ctx_clear(&f->h.ctx);
	warnings_free(&f->h.warn);
	free(f);
	return 0;
}

#define fx_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* A vendor-VFIO record of @domain on @parent of the fixture's GPU, L40S-8Q. */
static void put_record(struct fx *f, const char *domain, const char *parent,
		       enum vgpu_lifetime lifetime, unsigned type, const char *profile)
{
	struct vgpu_record r = test_record(domain, UUID1, PF, parent, type, profile);
	int e;

	r.lifetime = lifetime;
	e = vgpu_record_write(&f->h.ctx, f->h.fs, &r);
	if (e)
		fail_msg("vgpu_record_write() = %d: %s", e, vgpu_ctx_error(&f->h.ctx));
}

/* The host and its records read, then its rows (runs: vgpu_rows_read()'s). */
static void rows_ok(struct fx *f, const struct vgpu_run *runs, size_t n_runs, bool read_runs)
{
	int e;

	host_read_ok(&f->h, f->h.root, VGPU_READ_TYPES);
	vgpu_records_clear(&f->recs);
	e = vgpu_records_read(&f->h.ctx, f->h.fs, &f->recs);
	if (e)
		fail_msg("vgpu_records_read() = %d: %s", e, vgpu_ctx_error(&f->h.ctx));
	vgpu_rows_clear(&f->rows);
	vgpu_rows_read(&f->h.ctx, f->h.fs, f->h.m, &f->recs, runs, n_runs, read_runs, &f->rows);
}

/* A vGPU no record claims and no run made is an orphan, with its type's profile. */
static void test_orphan(void **state)
{
	struct fx *f = *state;
	const struct vgpu_row *v;

	rows_ok(f, NULL, 0, true);
	assert_int_equal(f->rows.n, 1);
	v = &f->rows.v[0];
	assert_int_equal(v->state, VGPU_STATE_ORPHAN);
	assert_null(v->rec);
	assert_non_null(v->orphan);
	assert_null(v->key);
	assert_null(v->config);
	assert_string_equal(v->parent->addr, HELD);
	assert_string_equal(vgpu_row_gpu(v), PF);
	assert_string_equal(vgpu_row_profile(v), "L40S-4Q");
	assert_no_warnings(&f->h.warn);
}

/*
 * The config's vGPU: the runs on the host say an apply made it (read here
 * when the caller has none), and the caller's runs win when it gives them.
 */
static void test_config_from_runs(void **state)
{
	struct fx *f = *state;
	struct vgpu_run run = { .command = "apply", .label = "l40s-4q", .time = 1700000000 };
	int e;

	vgpu_strv_push(&run.vgpus, vgpu_xstrdup(HELD " 1149"));
	e = vgpu_runs_save(&f->h.ctx, f->h.fs, &run, "/etc/vgpu.yaml");
	if (e)
		fail_msg("vgpu_runs_save() = %d: %s", e, vgpu_ctx_error(&f->h.ctx));
	rows_ok(f, NULL, 0, true);
	assert_int_equal(f->rows.n, 1);
	assert_int_equal(f->rows.v[0].state, VGPU_STATE_CONFIG);
	assert_string_equal(f->rows.v[0].config, "l40s-4q");
	assert_int_equal(f->rows.n_runs_read, 1);

	/* the caller read the runs, and none made it: an orphan, the disk not read again */
	rows_ok(f, NULL, 0, false);
	assert_int_equal(f->rows.v[0].state, VGPU_STATE_ORPHAN);
	assert_int_equal(f->rows.n_runs_read, 0);

	/* the caller's runs tell it is the config's */
	rows_ok(f, &run, 1, false);
	assert_int_equal(f->rows.v[0].state, VGPU_STATE_CONFIG);
	assert_string_equal(f->rows.v[0].config, "l40s-4q");
	vgpu_rows_clear(&f->rows); /* it points into @run */
	vgpu_strv_clear(&run.vgpus);
}

/*
 * Records first, each state read from the host (active where its vGPU is,
 * missing or reserved where it is not), then damaged records with the
 * parent their file names claim, then vGPUs no record claims: the one a
 * record claims is no orphan.
 */
static void test_records_damaged_order(void **state)
{
	struct fx *f = *state;
	const struct vgpu_row *v;

	put_record(f, "vm-active", HELD, VGPU_LIFETIME_PERSISTENT, 1149, "L40S-4Q");
	put_record(f, "vm-missing", "0000:41:00.4", VGPU_LIFETIME_PERSISTENT, 1151, "L40S-8Q");
	put_record(f, "vm-reserved", "0000:41:00.6", VGPU_LIFETIME_PER_START, 1151, "L40S-8Q");
	tree_put(f->h.root, "var/lib/vgpuctl/owners/0000:41:00.7", "garbage\n");
	tree_put(f->h.root, "var/lib/vgpuctl/owners/0000:99:00.1_" UUID1, "garbage\n");
	rows_ok(f, NULL, 0, true);
	assert_int_equal(f->rows.n, 5);

	v = &f->rows.v[0]; /* records sorted by key: .4, .5, .6 */
	assert_string_equal(v->rec->domain, "vm-missing");
	assert_int_equal(v->state, VGPU_STATE_MISSING);
	assert_string_equal(v->key, "0000:41:00.4");
	v = &f->rows.v[1];
	assert_string_equal(v->rec->domain, "vm-active");
	assert_int_equal(v->state, VGPU_STATE_ACTIVE);
	assert_string_equal(vgpu_row_profile(v), "L40S-4Q");
	v = &f->rows.v[2];
	assert_string_equal(v->rec->domain, "vm-reserved");
	assert_int_equal(v->state, VGPU_STATE_RESERVED);

	v = &f->rows.v[3]; /* a damaged record on a VF of the host */
	assert_int_equal(v->state, VGPU_STATE_DAMAGED);
	assert_null(v->rec);
	assert_null(v->orphan);
	assert_string_equal(v->key, "0000:41:00.7");
	assert_string_equal(v->claimed_parent, "0000:41:00.7");
	assert_non_null(v->parent);
	assert_string_equal(vgpu_row_gpu(v), PF);
	assert_null(vgpu_row_profile(v));
	assert_null(v->damaged_mdev);
	v = &f->rows.v[4]; /* one whose parent is not on the host, named with its mdev */
	assert_int_equal(v->state, VGPU_STATE_DAMAGED);
	assert_string_equal(v->claimed_parent, "0000:99:00.1");
	assert_null(v->parent);
	assert_null(vgpu_row_gpu(v));
	assert_string_equal(v->damaged_mdev, UUID1);
	/* the held VF is claimed: no orphan row, and no run was read for none */
	assert_int_equal(f->rows.n_runs_read, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		fx_test(test_orphan),
		fx_test(test_config_from_runs),
		fx_test(test_records_damaged_order),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
