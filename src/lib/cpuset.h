/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpuset.h - fixed-size CPU bitmaps and the kernel's cpulist format (pure).
 */
#ifndef VGPU_CPUSET_H
#define VGPU_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGPU_MAX_CPUS 8192

/* ---- CPU sets ---------------------------------------------------------- */

struct vgpu_cpuset {
	uint64_t w[VGPU_MAX_CPUS / 64];
};

/** vgpu_cpuset_zero() - empty @s. */
void vgpu_cpuset_zero(struct vgpu_cpuset *s);
/** vgpu_cpuset_set() - add @cpu to @s (CPUs >= VGPU_MAX_CPUS are ignored). */
void vgpu_cpuset_set(struct vgpu_cpuset *s, unsigned cpu);
/** vgpu_cpuset_clear() - remove @cpu from @s. */
void vgpu_cpuset_clear(struct vgpu_cpuset *s, unsigned cpu);
/** vgpu_cpuset_has() - is @cpu in @s? */
bool vgpu_cpuset_has(const struct vgpu_cpuset *s, unsigned cpu);
/** vgpu_cpuset_count() - number of CPUs in @s. */
unsigned vgpu_cpuset_count(const struct vgpu_cpuset *s);
/** vgpu_cpuset_empty() - is @s empty? */
bool vgpu_cpuset_empty(const struct vgpu_cpuset *s);
/* Lowest member >= from, or -1. */
int vgpu_cpuset_next(const struct vgpu_cpuset *s, unsigned from);
/** vgpu_cpuset_or() - @d |= @s. */
void vgpu_cpuset_or(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/** vgpu_cpuset_and() - @d &= @s. */
void vgpu_cpuset_and(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/** vgpu_cpuset_andnot() - @d &= ~@s. */
void vgpu_cpuset_andnot(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/** vgpu_cpuset_subset() - is every CPU of @a in @b? */
bool vgpu_cpuset_subset(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b);
/** vgpu_cpuset_intersects() - do @a and @b share a CPU? */
bool vgpu_cpuset_intersects(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b);
/**
 * vgpu_cpulist_parse() - parse a kernel cpulist ("0-23,48-71", "", "0-7:2").
 * Return: 0 or -EINVAL (syntax) / -ERANGE (CPU >= VGPU_MAX_CPUS).
 */
int vgpu_cpulist_parse(const char *str, struct vgpu_cpuset *out);
/**
 * vgpu_cpumask_parse() - parse a kernel cpumask ("ff,00000000": 32-bit hex
 * words, most significant first), as nodeN/cpumap and thread_siblings show it.
 * Return: 0 or -EINVAL / -ERANGE (a CPU >= VGPU_MAX_CPUS set).
 */
int vgpu_cpumask_parse(const char *str, struct vgpu_cpuset *out);
/* Enough for any set: "8191," is the longest item. */
#define VGPU_CPULIST_LEN (VGPU_MAX_CPUS / 2 * 6)
/**
 * vgpu_cpulist_format() - write @s as a compact cpulist ("" for the empty set).
 * A buffer of VGPU_CPULIST_LEN always suffices.  Never a wrong list: when
 * @buf is too small it holds whole items followed by "...".
 * Return: @buf.
 */
char *vgpu_cpulist_format(const struct vgpu_cpuset *s, char *buf, size_t len);

#endif
