// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * failmalloc.so - LD_PRELOAD fault injection: the Nth allocation (malloc,
 * calloc, realloc; FAILMALLOC_AT=N, counting from 1) and
 * every one after it return NULL with ENOMEM.  FAILMALLOC_COUNT=1 prints the
 * number of allocations made at exit instead (to size a sweep).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long at = -1, seen;
static int counting;

static void setup(void)
{
	static int done;
	const char *a, *c;

	if (done)
		return;
	done = 1;
	a = getenv("FAILMALLOC_AT");
	c = getenv("FAILMALLOC_COUNT");
	at = a ? atol(a) : -1;
	counting = c && *c == '1';
}

static int fail_now(void)
{
	setup();
	seen++;
	if (at > 0 && seen >= at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t s)
{
	return fail_now() ? NULL : __libc_calloc(n, s);
}

void *realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}

__attribute__((destructor)) static void report(void)
{
	char buf[64];
	int l;

	if (!counting)
		return;
	l = snprintf(buf, sizeof(buf), "failmalloc: %ld allocations\n", seen);
	if (write(STDERR_FILENO, buf, (size_t)l) < 0)
		return;
}
