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

#include "vgpu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

/* What a host reported through its vgpu_warn_fn, each message strdup'ed. */
struct warnings {
	char *msgs[64];
	size_t n;
};

/* The vgpu_warn_fn: vgpu_host_set_warn(h, warnings_collect, &w). */
static inline void warnings_collect(void *data, const char *msg)
{
	struct warnings *w = data;

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

/* A host opened from @root, and the warnings it gave. */
struct host_fixture {
	char root[1024];
	struct vgpu_host *h;
	struct warnings warn;
};

/* cmocka setup: *state = a zeroed struct host_fixture. */
static inline int host_fixture_setup(void **state)
{
	struct host_fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	*state = f;
	return 0;
}

/* cmocka teardown: free the host, the warnings and the fixture (not the files at root). */
static inline int host_fixture_teardown(void **state)
{
	struct host_fixture *f = *state;

	vgpu_host_free(f->h);
	warnings_free(&f->warn);
	free(f);
	return 0;
}

/* A cmocka test that gets a fresh struct host_fixture in *state. */
#define host_unit_test(fn)                                                                         \
	cmocka_unit_test_setup_teardown(fn, host_fixture_setup, host_fixture_teardown)

/* vgpu_host_open(@root) into *@h, which must succeed; @warn, when given, collects warnings. */
static inline void host_open_ok(const char *root, struct vgpu_host **h, struct warnings *warn)
{
	char *err = NULL;
	int r = vgpu_host_open(root, h, &err);

	if (r != 0)
		fail_msg("vgpu_host_open('%s') = %d: %s", root, r, err ? err : "(no message)");
	if (warn)
		vgpu_host_set_warn(*h, warnings_collect, warn);
}

/* vgpu_host_scan() with types, which must succeed. */
static inline void host_scan_ok(struct vgpu_host *h)
{
	int r = vgpu_host_scan(h, true);

	if (r != 0)
		fail_msg("vgpu_host_scan('%s') = %d: %s", vgpu_host_root(h), r, vgpu_last_error(h));
}

/* vgpu_host_read_topology(), which must succeed. */
static inline void host_read_topology_ok(struct vgpu_host *h)
{
	int r = vgpu_host_read_topology(h);

	if (r != 0)
		fail_msg("vgpu_host_read_topology('%s') = %d: %s", vgpu_host_root(h), r,
			 vgpu_last_error(h));
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

/*
 * A zeroed fixture of @size on the heap whose struct vgpu_plan pointer at
 * @plan_offset points to a zeroed heap plan (~34 KiB: too big for a test's stack);
 * NULL when out of memory.  Use through NEW_FIXTURE_WITH_PLAN().
 */
static inline void *alloc_fixture_with_plan(size_t size, size_t plan_offset)
{
	unsigned char *f = calloc(1, size);
	struct vgpu_plan *plan = calloc(1, sizeof(*plan));

	if (!f || !plan) {
		free(f);
		free(plan);
		return NULL;
	}
	memcpy(f + plan_offset, &plan, sizeof(plan));
	return f;
}

/*
 * A zeroed @type whose member `struct vgpu_plan *plan` points to a zeroed plan, or NULL.
 * (The comparison, never evaluated, does not compile unless ->plan has that type.)
 */
#define NEW_FIXTURE_WITH_PLAN(type)                                                                \
	((type *)alloc_fixture_with_plan(                                                          \
		sizeof(type),                                                                      \
		offsetof(type, plan) + 0 * sizeof(((type *)0)->plan == (struct vgpu_plan *)0)))

#endif /* VGPU_TEST_UTIL_H */
