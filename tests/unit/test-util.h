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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "ctx.h"
#include "model.h"
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

#endif /* VGPU_TEST_UTIL_H */
