// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * openat2-shim.c - run vgpuctl and floor under valgrind, which (3.19) does
 * not know openat2(): syscall(SYS_openat2, ...) becomes openat() with the
 * same flags, the resolve flags dropped.  Both programs call syscall() for
 * openat2, so both pay the same for the shim.  For instruction counts only
 * (callgrind): the paths are not confined.
 *
 *   cc -O2 -shared -fPIC -o openat2-shim.so openat2-shim.c -ldl
 *   valgrind --tool=callgrind --trace-children=yes \
 *       env LD_PRELOAD=$PWD/openat2-shim.so vgpuctl --sysroot ROOT types --per-vf --json
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_openat2) {
		const struct open_how *how = (const struct open_how *)a[2];

		return openat((int)a[0], (const char *)a[1], (int)how->flags, (mode_t)how->mode);
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
