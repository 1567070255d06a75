// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-metrics - the metrics use case (src/lib/metrics.c) on the committed
 * fixture hosts: what counts as a free VF, which vGPUs and records are
 * exported with which labels, where MIG mode is exported, the last runs, and
 * the text format.
 *
 * Usage: test-metrics SRCDIR (or VGPU_SRCDIR in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "metrics.h"
#include "sysfs.h"
#include "test-util.h"

static const char *srcdir;

/* tests/data/hosts/@name read with types, its metrics collected with @recs and @runs */
static void collect(struct host_fixture *f, const char *name, const struct vgpu_records *recs,
		    const struct vgpu_run *runs, size_t n_runs, struct vgpu_metrics *mt)
{
	static const struct vgpu_records none;

	fixture_host_path(f->root, sizeof(f->root), srcdir, name);
	vgpu_sysfs_free(f->fs); /* another host than the last one */
	f->fs = NULL;
	host_read_ok(f, f->root, VGPU_READ_TYPES);
	vgpu_metrics_collect(&f->ctx, f->fs, f->m, recs ? recs : &none, runs, n_runs, 1700000000,
			     NULL, mt);
}

static const struct vgpu_metric_family *fam(const struct vgpu_metrics *mt, const char *name)
{
	const struct vgpu_metric_family *f = vgpu_metrics_find(mt, name);

	if (!f)
		fail_msg("no family %s", name);
	return f;
}

/*
 * The value of @name's one series whose labels are the "label=value" pairs
 * of @want (NULL-ended); -1 when none has them, fails when several do.
 */
static long long value(const struct vgpu_metrics *mt, const char *name, ...)
{
	const struct vgpu_metric_family *f = fam(mt, name);
	long long v = -1;
	size_t hits = 0;

	for (size_t i = 0; i < f->n; i++) {
		const char *w;
		bool all = true;
		va_list ap;

		va_start(ap, name);
		while (all && (w = va_arg(ap, const char *))) {
			const char *eq = strchr(w, '=');
			const char *have = NULL;

			for (size_t l = 0; l < f->samples[i].n_labels; l++)
				if (strlen(f->samples[i].labels[l].name) == (size_t)(eq - w) &&
				    strncmp(f->samples[i].labels[l].name, w, (size_t)(eq - w)) == 0)
					have = f->samples[i].labels[l].value;
			all = have && strcmp(have, eq + 1) == 0;
		}
		va_end(ap);
		if (all) {
			v = f->samples[i].value;
			hits++;
		}
	}
	if (hits > 1)
		fail_msg("%zu series of %s have the labels asked for", hits, name);
	return v;
}

/* A T4's PF is its one vGPU parent, not a VF: it counts as no VF, free or used. */
static void test_pf_is_no_vf(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_metrics mt;
	const struct vgpu_metric_family *vfs;

	collect(f, "t4-legacy", NULL, NULL, 0, &mt);
	vfs = fam(&mt, "vgpuctl_vfs");
	assert_int_equal(vfs->n, 4); /* free, used, reserved, unknown */
	for (size_t i = 0; i < vfs->n; i++)
		if (vfs->samples[i].value != 0)
			fail_msg("a T4 has %lld VFs in state %s", vfs->samples[i].value,
				 vgpu_metric_label(&vfs->samples[i], "state"));
	/* its vGPU on the PF is still one, an orphan */
	assert_int_equal(value(&mt, "vgpuctl_vgpus", "gpu=0000:5e:00.0", "profile=T4-4Q",
			       "state=orphan", NULL),
			 1);
	vgpu_metrics_clear(&mt);
}

/* VFs free and used as the VFs say (the L40S host: one VF of 41:00.0 holds a vGPU). */
static void test_vfs_free_and_used(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_metrics mt;

	collect(f, "vfio-ts-l40s", NULL, NULL, 0, &mt);
	assert_int_equal(value(&mt, "vgpuctl_vfs", "gpu=0000:41:00.0", "state=free", NULL), 7);
	assert_int_equal(value(&mt, "vgpuctl_vfs", "gpu=0000:41:00.0", "state=used", NULL), 1);
	assert_int_equal(value(&mt, "vgpuctl_vfs", "gpu=0000:c1:00.0", "state=free", NULL), 8);
	vgpu_metrics_clear(&mt);
}

/*
 * A damaged record: a vgpuctl_vgpu series marked damaged that blocks its VF,
 * and no vgpuctl_vgpus series with an empty profile.
 */
static void test_damaged_record(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_records recs = { 0 };
	struct vgpu_metrics mt;
	const struct vgpu_metric_family *vgpus;

	vgpu_strv_push(&recs.damaged_keys, vgpu_xstrdup("0000:c1:00.6"));
	collect(f, "vfio-ts-l40s", &recs, NULL, 0, &mt);
	assert_int_equal(value(&mt, "vgpuctl_vgpu", "vf=0000:c1:00.6", "state=damaged",
			       "gpu=0000:c1:00.0", "record=var/lib/vgpuctl/owners/0000:c1:00.6",
			       NULL),
			 1);
	assert_int_equal(value(&mt, "vgpuctl_blocked_vf", "vf=0000:c1:00.6", "state=damaged", NULL),
			 1);
	assert_int_equal(value(&mt, "vgpuctl_blocked_vfs", "gpu=0000:c1:00.0", NULL), 1);
	assert_int_equal(value(&mt, "vgpuctl_blocked_vfs", "gpu=0000:41:00.0", NULL), 0);
	vgpus = fam(&mt, "vgpuctl_vgpus");
	for (size_t i = 0; i < vgpus->n; i++) {
		const char *profile = vgpu_metric_label(&vgpus->samples[i], "profile");

		if (!profile || !*profile)
			fail_msg("vgpuctl_vgpus has a series with an empty profile (state %s)",
				 vgpu_metric_label(&vgpus->samples[i], "state"));
	}
	assert_int_equal(value(&mt, "vgpuctl_vgpus", "state=damaged", NULL), -1);
	vgpu_metrics_clear(&mt);
	vgpu_records_clear(&recs);
}

/*
 * MIG mode is exported only where NVML said it, and never for a board
 * without MIG, whatever the model holds for it.
 */
static void test_mig_enabled_only_where_known(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_metrics mt;

	/* the A30 host without NVML: its lists and GPU instances do not make it known */
	collect(f, "a30-dual-mdev", NULL, NULL, 0, &mt);
	assert_int_equal(fam(&mt, "vgpuctl_mig_enabled")->n, 0);
	assert_int_equal(fam(&mt, "vgpuctl_mig_pending_enabled")->n, 0);
	vgpu_metrics_clear(&mt);
	/* as NVML fills it in: on, and pending off */
	f->m->gpus[1].mig_current = VGPU_ON;
	f->m->gpus[1].mig_pending = VGPU_OFF;
	vgpu_metrics_collect(&f->ctx, f->fs, f->m, &(struct vgpu_records){ 0 }, NULL, 0, 0, NULL,
			     &mt);
	assert_int_equal(fam(&mt, "vgpuctl_mig_enabled")->n, 1);
	assert_int_equal(value(&mt, "vgpuctl_mig_enabled", "gpu=0000:af:00.0", NULL), 1);
	assert_int_equal(value(&mt, "vgpuctl_mig_pending_enabled", "gpu=0000:af:00.0", NULL), 0);
	vgpu_metrics_clear(&mt);

	/* an L40S has no MIG: nothing, even where the model says off */
	collect(f, "vfio-ts-l40s", NULL, NULL, 0, &mt);
	assert_int_equal(fam(&mt, "vgpuctl_mig_enabled")->n, 0);
	vgpu_metrics_clear(&mt);
	for (size_t i = 0; i < f->m->n_gpus; i++)
		f->m->gpus[i].mig_current = f->m->gpus[i].mig_pending = VGPU_OFF;
	vgpu_metrics_collect(&f->ctx, f->fs, f->m, &(struct vgpu_records){ 0 }, NULL, 0, 0, NULL,
			     &mt);
	assert_int_equal(fam(&mt, "vgpuctl_mig_enabled")->n, 0);
	assert_int_equal(fam(&mt, "vgpuctl_mig_pending_enabled")->n, 0);
	vgpu_metrics_clear(&mt);
}

/* The last runs, per command and config label; a vGPU an apply made is "config". */
static void test_runs(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_run runs[2] = {
		{ .command = "assert",
		  .label = "l40s-8q",
		  .exit_code = 3,
		  .time = 1700000001,
		  .differences = 2 },
		{ .command = "apply", .label = "l40s-4q", .exit_code = 0, .time = 1700000002 },
	};
	struct vgpu_metrics mt;

	vgpu_strv_push(&runs[1].vgpus, vgpu_xstrdup("0000:41:00.5 1149"));
	collect(f, "vfio-ts-l40s", NULL, runs, 2, &mt);
	assert_int_equal(value(&mt, "vgpuctl_last_run_exit_code", "command=assert",
			       "config=l40s-8q", NULL),
			 3);
	assert_int_equal(value(&mt, "vgpuctl_last_run_differences", "command=assert", NULL), 2);
	assert_int_equal(value(&mt, "vgpuctl_last_run_timestamp_seconds", "command=apply", NULL),
			 1700000002);
	assert_int_equal(value(&mt, "vgpuctl_vgpu", "vf=0000:41:00.5", "state=config",
			       "profile=L40S-4Q", "type_id=1149", NULL),
			 1);
	assert_int_equal(value(&mt, "vgpuctl_vgpus", "gpu=0000:41:00.0", "profile=L40S-4Q",
			       "state=config", NULL),
			 1);
	vgpu_metrics_clear(&mt);
	vgpu_strv_clear(&runs[1].vgpus);
}

/* A host that cannot be read: vgpuctl_up 0, the runs, and no host family. */
static void test_unreadable_host(void **state)
{
	struct vgpu_run run = { .command = "apply", .label = "a", .exit_code = 1, .time = 5 };
	struct vgpu_metrics mt;
	size_t len;
	char *text;

	(void)state;
	vgpu_metrics_collect(NULL, NULL, NULL, NULL, &run, 1, 42, NULL, &mt);
	assert_int_equal(value(&mt, "vgpuctl_up", NULL), 0);
	assert_int_equal(value(&mt, "vgpuctl_metrics_timestamp_seconds", NULL), 42);
	assert_null(vgpu_metrics_find(&mt, "vgpuctl_vfs"));
	assert_int_equal(value(&mt, "vgpuctl_last_run_exit_code", "config=a", NULL), 1);
	text = vgpu_metrics_text(&mt, &len);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "# TYPE vgpuctl_up gauge\nvgpuctl_up 0\n"));
	assert_non_null(
		strstr(text, "\nvgpuctl_last_run_exit_code{command=\"apply\",config=\"a\"} 1\n"));
	free(text);
	vgpu_metrics_clear(&mt);
}

/* Label values escape backslash, double quote and newline, and nothing else. */
static void test_text_escapes(void **state)
{
	struct vgpu_run run = { .command = "apply", .label = "a\"b\\c\nd", .time = 5 };
	struct vgpu_metrics mt;
	size_t len;
	char *text;

	(void)state;
	vgpu_metrics_collect(NULL, NULL, NULL, NULL, &run, 1, 42, NULL, &mt);
	text = vgpu_metrics_text(&mt, &len);
	assert_non_null(strstr(
		text,
		"vgpuctl_last_run_timestamp_seconds{command=\"apply\",config=\"a\\\"b\\\\c\\nd\"} 5\n"));
	free(text);
	vgpu_metrics_clear(&mt);
}

/*
 * The fabric partitions: by state, and per partition with the domain whose
 * records hold it.  A four-GPU board: 0 all, 1-2 the pairs, 3-6 the singles.
 */
static void test_fabric(void **state)
{
	static const char *const bus[4] = { "0000:1b:00.0", "0000:2a:00.0", "0000:3d:00.0",
					    "0000:5d:00.0" };
	struct vgpu_fabric_part parts[7];
	struct vgpu_fabric fab = { .mode = VGPU_FABRIC_VGPU, .v = parts, .n = 7 };
	struct vgpu_record rec = { .partitioned = true, .partition = 4 };
	struct vgpu_records recs = { .v = &rec, .n = 1 };
	struct vgpu_metrics mt = { 0 };
	static const unsigned first[7] = { 0, 0, 2, 0, 1, 2, 3 }, size[7] = { 4, 2, 2, 1, 1, 1, 1 };

	(void)state;
	memset(parts, 0, sizeof(parts));
	for (unsigned i = 0; i < 7; i++) {
		parts[i].id = i;
		parts[i].supported = i != 6;
		parts[i].ngpus = size[i];
		for (unsigned k = 0; k < size[i]; k++)
			snprintf(parts[i].gpu[k].bus, VGPU_BDF_LEN, "%s", bus[first[i] + k]);
	}
	parts[3].active = true; /* single 3 (GPU 1b): active, by no record of ours */
	snprintf(rec.domain, sizeof(rec.domain), "vm1"); /* holds single 4 (GPU 2a), not active */
	vgpu_metrics_add_fabric(&mt, &fab, &recs);
	assert_int_equal(value(&mt, "vgpuctl_fabric_partitions", "state=active", NULL), 1);
	assert_int_equal(value(&mt, "vgpuctl_fabric_partitions", "state=held", NULL), 1);
	/* pair 2 (3d, 5d) and single 5 (3d); single 6 is unsupported */
	assert_int_equal(value(&mt, "vgpuctl_fabric_partitions", "state=free", NULL), 2);
	assert_int_equal(value(&mt, "vgpuctl_fabric_partitions", "state=unsupported", NULL), 1);
	assert_int_equal(value(&mt, "vgpuctl_fabric_partition_active", "partition=3", "gpus=1",
			       "domain=", NULL),
			 1);
	assert_int_equal(value(&mt, "vgpuctl_fabric_partition_active", "partition=4", "domain=vm1",
			       NULL),
			 0);
	assert_int_equal(
		value(&mt, "vgpuctl_fabric_partition_active", "partition=0", "gpus=4", NULL), 0);
	vgpu_metrics_clear(&mt);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pf_is_no_vf, host_fixture_setup,
						host_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_vfs_free_and_used, host_fixture_setup,
						host_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_record, host_fixture_setup,
						host_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_mig_enabled_only_where_known,
						host_fixture_setup, host_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_runs, host_fixture_setup,
						host_fixture_teardown),
		cmocka_unit_test(test_unreadable_host),
		cmocka_unit_test(test_text_escapes),
		cmocka_unit_test(test_fabric),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
