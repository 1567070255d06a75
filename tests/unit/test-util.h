/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-util.h - helpers shared by the cmocka unit tests in this directory.
 *
 * Each test is one executable built from one .c file, so everything here is
 * static inline.  Helpers named *_ok and assert_* fail the running test with
 * fail_msg() or a cmocka assertion, naming what they were given.
 */
#ifndef VGPU_TEST_UTIL_H
#define VGPU_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "ctx.h"
#include "model.h"
#include "migrate-check.h"
#include "read-host.h"
#include "records.h"
#include "sysfs.h"

/* ---- paths ------------------------------------------------------------------------ */

/* $TMPDIR, or /tmp when it is unset or empty. */
static inline const char *test_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

/*
 * The source root for tests that read the committed fixture hosts: argv[1], else
 * $VGPU_SRCDIR.  NULL, after a usage line on stderr, when neither is given.
 */
static inline const char *test_srcdir(int argc, char **argv)
{
	const char *srcdir = argc > 1 ? argv[1] : getenv("VGPU_SRCDIR");

	if (!srcdir || !*srcdir) {
		fprintf(stderr, "usage: %s SRCDIR (or set VGPU_SRCDIR)\n", argv[0]);
		return NULL;
	}
	return srcdir;
}

/* @buf = @srcdir/tests/data/hosts/@name (a committed fixture host); fails when too long. */
static inline void fixture_host_path(char *buf, size_t len, const char *srcdir, const char *name)
{
	int n = snprintf(buf, len, "%s/tests/data/hosts/%s", srcdir, name);

	if (n < 0 || (size_t)n >= len)
		fail_msg("source directory path too long: %s", srcdir);
}

/* ---- trees in a temporary directory ----------------------------------------------- */

/* @buf = a new empty directory $TMPDIR/vgpu-@tag-XXXXXX; fails the test when it cannot. */
static inline void tree_make(char *buf, size_t len, const char *tag)
{
	int n = snprintf(buf, len, "%s/vgpu-%s-XXXXXX", test_tmpdir(), tag);

	if (n < 0 || (size_t)n >= len || !mkdtemp(buf))
		fail_msg("cannot make a temporary directory for %s: %s", tag, strerror(errno));
}

/* mkdir -p @path. */
static inline void tree_mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir '%s': %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir '%s': %s", tmp, strerror(errno));
}

/* @buf = @root/@rel, after making @rel's parent directories. */
static inline void tree_path(char *buf, size_t len, const char *root, const char *rel)
{
	char *slash;
	int n = snprintf(buf, len, "%s/%s", root, rel);

	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long: %s/%s", root, rel);
	slash = strrchr(buf, '/');
	*slash = '\0';
	tree_mkdirs(buf);
	*slash = '/';
}

/* A file @root/@rel holding @len bytes of @content (parents made, replaced if there). */
static inline void tree_put_len(const char *root, const char *rel, const char *content, size_t len)
{
	char path[PATH_MAX];
	FILE *fp;

	tree_path(path, sizeof(path), root, rel);
	fp = fopen(path, "w");
	if (!fp)
		fail_msg("cannot create '%s': %s", path, strerror(errno));
	if (fwrite(content, 1, len, fp) != len || fclose(fp) != 0)
		fail_msg("cannot write '%s': %s", path, strerror(errno));
}

/* tree_put(root, "sys/devices/system/cpu/online", "0-7\n"): a text file, parents made. */
static inline void tree_put(const char *root, const char *rel, const char *content)
{
	tree_put_len(root, rel, content, strlen(content));
}

/* A symlink @root/@rel -> @target (parents made). */
static inline void tree_link(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];

	tree_path(path, sizeof(path), root, rel);
	if (symlink(target, path) < 0)
		fail_msg("symlink '%s' -> '%s': %s", path, target, strerror(errno));
}

/* A FIFO @root/@rel (parents made). */
static inline void tree_fifo(const char *root, const char *rel)
{
	char path[PATH_MAX];

	tree_path(path, sizeof(path), root, rel);
	if (mkfifo(path, 0644) < 0)
		fail_msg("mkfifo '%s': %s", path, strerror(errno));
}

/* A directory @root/@rel (parents made). */
static inline void tree_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", root, rel);

	if (n < 0 || (size_t)n >= sizeof(path))
		fail_msg("path too long: %s/%s", root, rel);
	tree_mkdirs(path);
}

static inline int tree_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf @root (links are removed, never followed). */
static inline void tree_remove(const char *root)
{
	if (root && *root)
		nftw(root, tree_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- warnings ---------------------------------------------------------------------- */

/* What the library logged through a context's log callback, each message strdup'ed. */
struct warnings {
	char *msgs[64];
	size_t n;
};

/* The log callback: vgpu_ctx_init(&ctx, warnings_collect, &w). */
static inline void warnings_collect(void *data, int priority, const char *msg)
{
	struct warnings *w = data;

	(void)priority;
	assert_true(w->n < ARRAY_SIZE(w->msgs));
	w->msgs[w->n++] = strdup(msg);
}

static inline void warnings_free(struct warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->msgs[i]);
	w->n = 0;
}

static inline void assert_no_warnings(const struct warnings *w)
{
	if (w->n)
		fail_msg("%zu unexpected warning(s), first: %s", w->n, w->msgs[0]);
}

/* ---- an empty root ------------------------------------------------------------------- */

/* An empty host root in $TMPDIR, opened, and a context whose warnings are kept. */
struct root_fixture {
	char root[PATH_MAX];
	struct vgpu_sysfs *fs;
	struct vgpu_ctx ctx;
	struct warnings warn;
};

/* Make @f's root ($TMPDIR/vgpu-@tag-XXXXXX) and open it (@f zeroed); fails the test if not. */
static inline void root_fixture_open(struct root_fixture *f, const char *tag)
{
	tree_make(f->root, sizeof(f->root), tag);
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	if (vgpu_sysfs_open(&f->ctx, f->root, &f->fs) < 0)
		fail_msg("%s: %s", f->root, vgpu_ctx_error(&f->ctx));
}

/* What root_fixture_open() made, the root's files too, freed. */
static inline void root_fixture_close(struct root_fixture *f)
{
	vgpu_sysfs_free(f->fs);
	f->fs = NULL;
	tree_remove(f->root);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
}

/* ---- hosts --------------------------------------------------------------------------- */

/* A host read from @root, the context it logged to, and the warnings it gave. */
struct host_fixture {
	char root[1024];
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs;
	struct vgpu_model *m;
	struct warnings warn;
};

/* cmocka setup: *state = a zeroed struct host_fixture with its context. */
static inline int host_fixture_setup(void **state)
{
	struct host_fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	*state = f;
	return 0;
}

/* cmocka teardown: free the model, the root, the warnings and the fixture. */
static inline int host_fixture_teardown(void **state)
{
	struct host_fixture *f = *state;

	vgpu_model_free(f->m);
	vgpu_sysfs_free(f->fs);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
	free(f);
	return 0;
}

/* A cmocka test that gets a fresh struct host_fixture in *state. */
#define host_unit_test(fn)                                                                         \
	cmocka_unit_test_setup_teardown(fn, host_fixture_setup, host_fixture_teardown)

/* Open @root and read it with @what (VGPU_READ_*) into f->m, which must succeed. */
static inline void host_read_ok(struct host_fixture *f, const char *root, unsigned what)
{
	int r;

	if (!f->fs && (r = vgpu_sysfs_open(&f->ctx, root, &f->fs)) != 0)
		fail_msg("vgpu_sysfs_open('%s') = %d: %s", root, r, vgpu_ctx_error(&f->ctx));
	vgpu_model_free(f->m);
	f->m = NULL;
	r = vgpu_model_read(&f->ctx, f->fs, what, &f->m);
	if (r != 0)
		fail_msg("vgpu_model_read('%s') = %d: %s", root, r, vgpu_ctx_error(&f->ctx));
}

/* ---- CPU sets and plans -------------------------------------------------------------- */

/* vgpu_cpulist_parse(), which must succeed. */
static inline void parse_cpus(const char *list, struct vgpu_cpuset *s)
{
	int r = vgpu_cpulist_parse(list, s);

	if (r != 0)
		fail_msg("vgpu_cpulist_parse(\"%s\") = %d, expected 0", list, r);
}

/* @s formats as the cpulist @want ("" for the empty set). */
static inline void assert_cpus(const struct vgpu_cpuset *s, const char *want)
{
	char buf[4096];

	assert_string_equal(vgpu_cpulist_format(s, buf, sizeof(buf)), want);
}

/* ---- owner records and migration vGPUs ------------------------------------------------ */

/*
 * An owner record of domain @domain (@uuid): a vendor-VFIO vGPU of type
 * @type_id (@profile) on VF @parent of GPU @gpu, active, persistent; the
 * caller changes what its test needs.
 */
static inline struct vgpu_record test_record(const char *domain, const char *uuid, const char *gpu,
					     const char *parent, unsigned type_id,
					     const char *profile)
{
	struct vgpu_record r;

	/* each cut to its field's size (the precision says so to the compiler) */
	memset(&r, 0, sizeof(r));
	snprintf(r.domain, sizeof(r.domain), "%.*s", (int)sizeof(r.domain) - 1, domain);
	snprintf(r.domain_uuid, sizeof(r.domain_uuid), "%.*s", (int)sizeof(r.domain_uuid) - 1,
		 uuid);
	snprintf(r.gpu, sizeof(r.gpu), "%.*s", (int)sizeof(r.gpu) - 1, gpu);
	snprintf(r.parent, sizeof(r.parent), "%.*s", (int)sizeof(r.parent) - 1, parent);
	r.iface = VGPU_IFACE_VENDOR_VFIO;
	r.type_id = type_id;
	snprintf(r.profile, sizeof(r.profile), "%.*s", (int)sizeof(r.profile) - 1, profile);
	return r;
}

/* An H100-20C, vendor-VFIO, on an H100 SXM (ECC on, vgpu_params off), as a manifest has it. */
static inline struct vgpu_mig_vgpu test_h100_20c(void)
{
	return (struct vgpu_mig_vgpu){
		.type_id = 1023,
		.type_name = "H100-20C",
		.iface = VGPU_IFACE_VENDOR_VFIO,
		.pci_device = 0x2331,
		.pci_subsystem = 0x10de1626,
		.fb_mib = 81559,
		.ecc = VGPU_ON,
		.enable_uvm = VGPU_OFF,
		.enable_debugging = VGPU_OFF,
		.enable_profiling = VGPU_OFF,
	};
}

#endif /* VGPU_TEST_UTIL_H */
