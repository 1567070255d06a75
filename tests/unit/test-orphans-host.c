// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-orphans-host - the reaper (src/lib/orphans-host.c) on a temporary copy
 * of a fixture host: the domains are listed once per run, before any lock,
 * however many vGPUs it frees (no libvirt call per vGPU under the locks);
 * domains that cannot be listed refuse the run.
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

#include "orphans-host.h"
#include "sysfs.h"
#include "test-util.h"

#define VF_TYPE "sys/bus/pci/devices/%s/nvidia/current_vgpu_type"

static const char *srcdir;

/* A copy of vfio-ts-l40s (41:00.5 holds an L40S-4Q no record claims), opened. */
struct fx {
	struct host_fixture h;
	int reads; /* how many times the domains were listed */
	bool read_fails;
};

static int fx_setup(void **state)
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
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	tree_remove(f->h.root);
	vgpu_sysfs_free(f->h.fs);
	vgpu_ctx_clear(&f->h.ctx);
	warnings_free(&f->h.warn);
	free(f);
	return 0;
}

#define fx_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

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
	assert_int_equal(
		vgpu_orphans_reap(&f->h.ctx, f->h.fs, &src, VGPU_REAP_ORPHANS, 0, true, &freed), 0);
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
	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, &src, VGPU_REAP_ORPHANS, 0, true,
					   &freed),
			 -EACCES);
	assert_int_equal(freed, 0);
	assert_non_null(strstr(vgpu_ctx_error(&f->h.ctx), "connection closed: nothing freed"));
	assert_int_equal(vgpu_orphans_reap(&f->h.ctx, f->h.fs, NULL, VGPU_REAP_ORPHANS, 0, true,
					   &freed),
			 -EACCES);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		fx_test(test_domains_listed_once),
		fx_test(test_domains_unknown_refused),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
