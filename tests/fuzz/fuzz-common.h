/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the libFuzzer targets: bounded NUL-terminated copies, checks. */
#ifndef VGPU_FUZZ_COMMON_H
#define VGPU_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (embedded NULs end the string early). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Known library bugs (reported, not fixed yet) are not findings unless
 * VGPU_FUZZ_STRICT=1: a long run then looks for new ones, and the kept
 * crasher in regressions/<target>/ shows the old one with the variable set.
 */
static inline int fuzz_strict(void)
{
	static int strict = -1;

	if (strict < 0) {
		const char *e = getenv("VGPU_FUZZ_STRICT");

		strict = e && *e && strcmp(e, "0") != 0;
	}
	return strict;
}

/* An invariant broke: say which, with the input as C text, and crash for libFuzzer. */
#define FUZZ_ASSERT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__,       \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
