// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-orphans-host - the reaper (src/lib/orphans-host.c) on a temporary copy
 * of a fixture host: the domains are listed once per run, before any lock,
 * however many vGPUs it frees (no libvirt call per vGPU under the locks);
 * domains that cannot be listed refuse the run; a record held for an incoming
 * migration keeps its vGPU until its deadline, then it is stale; a record
 * whose vGPU is not what it says (conflict) is never freed; a kernel-log wedge
 * line (a catalogue wedge row, from a syslog file or dev/kmsg) naming a VF
 * makes it wedged until release --clear-wedged; without a catalogue, none does.
 *
 * Usage: test-orphans-host SRCDIR (or VGPU_SRCDIR in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalogue.h"
#include "orphans-host.h"
#include "read-host.h"
#include "sysfs.h"
#include "test-util.h"

#define VF_TYPE "sys/bus/pci/devices/%s/nvidia/current_vgpu_type"

static const char *srcdir;

/* A copy of vfio-ts-l40s (41:00.5 holds an L40S-4Q no record claims), opened. */
struct fx {
	struct host_fixture h;
	int reads; /* how many times the domains were listed */
	bool read_fails;
	struct vgpu_catalogue cat; /* data/catalogue.tsv */
	const struct vgpu_catalogue *use; /* what the scans get: &cat, or NULL */
};

/* One copy for the group (copying is the slow part); each test resets what they change. */
static int group_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char src[1024], cmd[2200];

	if (!f)
		return -1;
	vgpu_ctx_init(&f->h.ctx, warnings_collect, &f->h.warn);
	tree_make(f->h.root, sizeof(f->h.root), "orphans-host");
	fixture_host_path(src, sizeof(src), srcdir, "vfio-ts-l40s");
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, f->h.root);
	if (system(cmd) != 0)
		return -1;
	tree_dir(f->h.root, "proc"); /* no process holds anything */
	if (vgpu_sysfs_open(&f->h.ctx, f->h.root, &f->h.fs))
		return -1;
	snprintf(src, sizeof(src), "%s/data/catalogue.tsv", srcdir);
	{
		VGPU_AUTOFREE char *text = NULL;
		size_t len = 0;

		if (vgpu_file_read(&f->h.ctx, src, 1u << 20, &text, &len) < 0 ||
		    vgpu_catalogue_parse(&f->h.ctx, text, src, &f->cat) < 0)
			return -1;
	}
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fx *f = *state;

	if (!f) /* the setup failed */
		return 0;
	tree_remove(f->h.root);
	vgpu_catalogue_clear(&f->cat);
	vgpu_sysfs_free(f->h.fs);
	vgpu_ctx_clear(&f->h.ctx);
	warnings_free(&f->h.warn);
	free(f);
	return 0;
}

/* Remove @rel under the tree and what it holds. */
static void tree_remove_rel(struct fx *f, const char *rel)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%s", f->h.root, rel);
	tree_remove(path);
}

/* Back to the fixture: only 41:00.5 holds a type, no record, no kernel log, no marker. */
static int fx_setup(void **state)
{
	struct fx *f = *state;
	static const char *const vfs[] = { "0000:41:00.6", "0000:41:00.7", "0000:41:01.0" };
	char path[1200];

	for (size_t i = 0; i < sizeof(vfs) / sizeof(vfs[0]); i++) {
		snprintf(path, sizeof(path), VF_TYPE, vfs[i]);
		tree_put(f->h.root, path, "0\n");
	}
	snprintf(path, sizeof(path), "%s/" VGPU_RECORDS_DIR "/0000:41:00.5", f->h.root);
	(void)unlink(path);
	tree_remove_rel(f, "var/log");
	tree_remove_rel(f, "dev");
	tree_remove_rel(f, "proc/stat");
	tree_remove_rel(f, VGPU_WEDGED_DIR);
	f->use = &f->cat;
	f->reads = 0;
	f->read_fails = false;
	return 0;
}

#define fx_test(fn) cmocka_unit_test_setup(fn, fx_setup)

/* The domain source: none, counted. */
static int count_reads(struct vgpu_ctx *ctx, void *arg, struct vgpu_odom **out, size_t *n)
{
	struct fx *f = arg;

	f->reads++;
	if (f->read_fails)
		return vgpu_error(ctx, -EIO, "cannot list domains: connection closed");
	*out = NULL;
	*n = 0;
	return 0;
}

/* @vf holds an L40S-4Q that no record claims. */
static void vf_type(struct fx *f, const char *vf)
{
	char rel[128];

	snprintf(rel, sizeof(rel), VF_TYPE, vf);
	tree_put(f->h.root, rel, "1149\n");
}

static void test_domains_listed_once(void **state)
{
	struct fx *f = *state;
	struct vgpu_odom_source src = { count_reads, f };
	size_t freed = 0;

	vf_type(f, "0000:41:00.6");
	vf_type(f, "0000:41:00.7");
	vf_type(f, "0000:41:01.0");
	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, &src, NULL, f->use,
					   VGPU_REAP_ORPHANS, 0, true, &freed),
			 0);
	assert_int_equal(freed, 4);
	/* one listing for the run, not one more per vGPU */
	assert_int_equal(f->reads, 1);
}

static void test_domains_unknown_refused(void **state)
{
	struct fx *f = *state;
	struct vgpu_odom_source src = { count_reads, f };
	size_t freed = 9;

	f->read_fails = true;
	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, &src, NULL, f->use,
					   VGPU_REAP_ORPHANS, 0, true, &freed),
			 -EACCES);
	assert_int_equal(freed, 0);
	assert_non_null(strstr(vgpu_ctx_error(&f->h.ctx), "connection closed: nothing freed"));
	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, NULL, NULL, f->use,
					   VGPU_REAP_ORPHANS, 0, true, &freed),
			 -EACCES);
}

/* A record on 41:00.5 (which holds 1149) for type @type, incoming until @deadline (0: active). */
static void record(struct fx *f, unsigned type, long long deadline)
{
	char text[512];
	int k = snprintf(text, sizeof(text),
			 "domain=mig\ndomain_uuid=55555555-2222-4333-8444-555555555555\n"
			 "gpu=0000:41:00.0\nparent=0000:41:00.5\ninterface=vendor-vfio\n"
			 "type_id=%u\nprofile=L40S-4Q\nmdev_uuid=\nlifetime=persistent\n",
			 type);

	if (deadline)
		snprintf(text + k, sizeof(text) - (size_t)k, "state=incoming\ndeadline=%lld\n",
			 deadline);
	tree_put(f->h.root, VGPU_RECORDS_DIR "/0000:41:00.5", text);
}

/* The one row's class after a scan with no domains. */
static enum vgpu_oclass class_of(struct fx *f)
{
	struct vgpu_odom_source src = { count_reads, f };
	struct vgpu_orow *rows = NULL;
	enum vgpu_oclass c = VGPU_OCLASS_N;
	size_t n = 0;

	assert_int_equal(vgpu_orphans_scan(&f->h.ctx, f->h.fs, &src, NULL, f->use, 0, &rows, &n),
			 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].parent, "0000:41:00.5") == 0)
			c = rows[i].cls;
	free(rows);
	return c;
}

static size_t reap_stale(struct fx *f)
{
	struct vgpu_odom_source src = { count_reads, f };
	size_t freed = 99;

	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, &src, NULL, f->use, VGPU_REAP_STALE,
					   0, true, &freed),
			 0);
	return freed;
}

static void test_incoming_conflict(void **state)
{
	struct fx *f = *state;
	long long now = (long long)time(NULL);

	record(f, 1149, now + 600); /* held for a domain migrating here, not here yet */
	assert_int_equal(class_of(f), VGPU_OCLASS_INCOMING);
	assert_int_equal(reap_stale(f), 0);
	record(f, 1149, now - 1); /* its deadline passed: nobody is coming */
	assert_int_equal(class_of(f), VGPU_OCLASS_STALE);
	assert_int_equal(reap_stale(f), 1);
	record(f, 1149, 0); /* an active record whose domain is gone */
	assert_int_equal(class_of(f), VGPU_OCLASS_STALE);
	record(f, 1156, 0); /* the VF holds another type than its record says */
	assert_int_equal(class_of(f), VGPU_OCLASS_CONFLICT);
	assert_int_equal(reap_stale(f), 0);
}

/* metrics' count, without libvirt: what records, holders and markers tell; the rest unknown. */
static void test_count_without_domains(void **state)
{
	struct fx *f = *state;
	long long count[VGPU_OCLASS_N];
	VGPU_AUTORECORDS recs = { 0 };
	struct vgpu_model *m = NULL;

	record(f, 1149, (long long)time(NULL) + 600); /* 41:00.5: incoming */
	vf_type(f, "0000:41:00.6"); /* no record, nobody holds it: orphan or foreign? */
	vf_type(f, "0000:41:00.7"); /* a process holds it */
	tree_dir(f->h.root, "proc/77/fd");
	tree_link(f->h.root, "proc/77/fd/3", "/dev/vfio/34");
	assert_int_equal(vgpu_host_read(&f->h.ctx, f->h.fs, VGPU_READ_TYPES, &m, &recs), 0);
	vgpu_orphans_count(&f->h.ctx, f->h.fs, m, &recs, f->use, count);
	vgpu_model_free(m);
	tree_remove_rel(f, "proc/77");
	assert_int_equal(count[VGPU_OCLASS_INCOMING], 1);
	assert_int_equal(count[VGPU_OCLASS_IN_USE], 1);
	assert_int_equal(count[VGPU_OCLASS_UNKNOWN], 1);
	assert_int_equal(count[VGPU_OCLASS_ORPHAN] + count[VGPU_OCLASS_FOREIGN] +
				 count[VGPU_OCLASS_STALE] + count[VGPU_OCLASS_OWNED],
			 0);
}

/* Append "@t host kernel: @msg" to the tree's syslog kernel log (@t: ISO time, Unix seconds). */
static void kern_line(struct fx *f, long long t, const char *msg)
{
	char path[1200], day[32];
	time_t tt = (time_t)t;
	struct tm tm;
	FILE *fp;

	tree_dir(f->h.root, "var/log");
	snprintf(path, sizeof(path), "%s/var/log/kern.log", f->h.root);
	fp = fopen(path, "a");
	assert_non_null(fp);
	assert_non_null(gmtime_r(&tt, &tm));
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(fp, "%s host kernel: %s\n", day, msg);
	fclose(fp);
}

#define WEDGE_41_00_5 "NVRM: GPU at PCI:0000:41:00.5: RmInitAdapter failed! (0x22:0x65:1422)"

static void test_kernel_log_wedge(void **state)
{
	struct fx *f = *state;
	long long now = (long long)time(NULL);

	/* a wedge line for another VF, and a harmless line for this one: not wedged */
	kern_line(f, now - 60,
		  "[nvidia-vgpu-vfio] 0000:41:00.6: ERESTARTSYS received during open, waiting for "
		  "25000 milliseconds");
	kern_line(f, now - 59, "NVRM: GPU 0000:41:00.5: vGPU manager is running in SRIOV mode");
	/* a row that is no wedge row: a GPU that could not initialise (0x62), not a teardown */
	kern_line(f, now - 58,
		  "NVRM: GPU at PCI:0000:41:00.5: RmInitAdapter failed! (0x62:0x65:1422)");
	assert_int_equal(class_of(f), VGPU_OCLASS_ORPHAN);
	/* the VF without its PCI domain, as NVRM often writes it */
	kern_line(f, now - 50, "NVRM: GPU at PCI:41:00.5: RmInitAdapter failed! (0x22:0x65:1422)");
	assert_int_equal(class_of(f), VGPU_OCLASS_WEDGED);
	/* cleared: the lines so far no longer count; a later one does */
	assert_int_equal(vgpu_orphans_clear_wedged(&f->h.ctx, f->h.fs, f->use, "41:00.5"), 0);
	assert_int_equal(class_of(f), VGPU_OCLASS_ORPHAN);
	assert_int_equal(vgpu_orphans_clear_wedged(&f->h.ctx, f->h.fs, f->use, "0000:41:00.5"),
			 -ENOENT);
	kern_line(f, now + 5, WEDGE_41_00_5);
	assert_int_equal(class_of(f), VGPU_OCLASS_WEDGED);
	assert_int_equal(vgpu_orphans_clear_wedged(&f->h.ctx, f->h.fs, f->use, "not-a-vgpu"),
			 -EINVAL);
}

static void kmsg_append(struct fx *f, const char *text)
{
	char path[1200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/dev/kmsg", f->h.root);
	fp = fopen(path, "a");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* dev/kmsg's records ("PRIO,SEQ,TS_USEC,FLAGS;MESSAGE"), their times from proc/stat's btime. */
static void test_kmsg_wedge(void **state)
{
	struct fx *f = *state;
	long long now = (long long)time(NULL);
	char text[512];

	snprintf(text, sizeof(text), "cpu  1 2 3 4\nbtime %lld\n", now - 1000);
	tree_put(f->h.root, "proc/stat", text);
	tree_dir(f->h.root, "dev");
	snprintf(text, sizeof(text),
		 "6,1,1000000,-;Linux version 6.8.0\n3,2,900000000,-;%s\n"
		 " SUBSYSTEM=pci\n",
		 WEDGE_41_00_5);
	tree_put(f->h.root, "dev/kmsg", text);
	assert_int_equal(class_of(f), VGPU_OCLASS_WEDGED);
	/* its syslog copy is the same line, not a second one: cleared with it */
	kern_line(f, now - 100, WEDGE_41_00_5);
	assert_int_equal(vgpu_orphans_clear_wedged(&f->h.ctx, f->h.fs, f->use, "0000:41:00.5"), 0);
	assert_int_equal(class_of(f), VGPU_OCLASS_ORPHAN);
	/* a record of later (btime + 1010 s): wedged again */
	snprintf(text, sizeof(text), "3,3,1010000000,-;%s\n", WEDGE_41_00_5);
	kmsg_append(f, text);
	assert_int_equal(class_of(f), VGPU_OCLASS_WEDGED);
}

/* No catalogue (not found): the scan works, no line makes a vGPU wedged, and it says so. */
static void test_no_catalogue(void **state)
{
	struct fx *f = *state;

	kern_line(f, (long long)time(NULL), WEDGE_41_00_5);
	assert_int_equal(class_of(f), VGPU_OCLASS_WEDGED);
	f->use = NULL;
	warnings_free(&f->h.warn);
	assert_int_equal(class_of(f), VGPU_OCLASS_ORPHAN);
	assert_true(f->h.warn.n > 0);
	assert_non_null(strstr(f->h.warn.msgs[f->h.warn.n - 1], "no message catalogue"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		fx_test(test_domains_listed_once),
		fx_test(test_domains_unknown_refused),
		fx_test(test_incoming_conflict),
		fx_test(test_kernel_log_wedge),
		fx_test(test_kmsg_wedge),
		fx_test(test_no_catalogue),
		fx_test(test_count_without_domains),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
