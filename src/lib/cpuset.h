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

/**
 * vgpu_cpuset_zero() - empty @s.
 * @s: the set, all CPUs removed
 */
void vgpu_cpuset_zero(struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_set() - add @cpu to @s (CPUs >= VGPU_MAX_CPUS are ignored).
 * @s: the set
 * @cpu: the CPU number
 */
void vgpu_cpuset_set(struct vgpu_cpuset *s, unsigned cpu);
/**
 * vgpu_cpuset_clear() - remove @cpu from @s (CPUs >= VGPU_MAX_CPUS are ignored).
 * @s: the set
 * @cpu: the CPU number
 */
void vgpu_cpuset_clear(struct vgpu_cpuset *s, unsigned cpu);
/**
 * vgpu_cpuset_has() - is @cpu in @s?
 * @s: the set
 * @cpu: the CPU number
 * Return: true if @cpu is a member; false for any CPU >= VGPU_MAX_CPUS.
 */
bool vgpu_cpuset_has(const struct vgpu_cpuset *s, unsigned cpu);
/**
 * vgpu_cpuset_count() - number of CPUs in @s.
 * @s: the set
 * Return: how many CPUs are members.
 */
unsigned vgpu_cpuset_count(const struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_empty() - is @s empty?
 * @s: the set
 * Return: true if no CPU is a member.
 */
bool vgpu_cpuset_empty(const struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_next() - the lowest member at or above @from, for iterating.
 * @s: the set
 * @from: the first CPU number to look at
 * Return: the CPU number, or -1 when no member is >= @from.
 */
int vgpu_cpuset_next(const struct vgpu_cpuset *s, unsigned from);
/**
 * vgpu_cpuset_or() - @d |= @s.
 * @d: the set changed: gets every CPU of @s
 * @s: the CPUs added
 */
void vgpu_cpuset_or(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_and() - @d &= @s.
 * @d: the set changed: keeps only CPUs also in @s
 * @s: the CPUs kept
 */
void vgpu_cpuset_and(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_andnot() - @d &= ~@s.
 * @d: the set changed: loses every CPU of @s
 * @s: the CPUs removed
 */
void vgpu_cpuset_andnot(struct vgpu_cpuset *d, const struct vgpu_cpuset *s);
/**
 * vgpu_cpuset_subset() - is every CPU of @a in @b?
 * @a: the candidate subset
 * @b: the set it must fit in
 * Return: true if @a is a subset of @b (an empty @a always is).
 */
bool vgpu_cpuset_subset(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b);
/**
 * vgpu_cpuset_intersects() - do @a and @b share a CPU?
 * @a: one set
 * @b: the other set
 * Return: true if at least one CPU is in both.
 */
bool vgpu_cpuset_intersects(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b);
/**
 * vgpu_cpulist_parse() - parse a kernel cpulist ("0-23,48-71", "", "0-7:2").
 * @str: the text, as bitmap_parselist() takes it; surrounding white space is ignored
 * @out: the CPUs, written only on success
 * Return: 0 or -EINVAL (syntax) / -ERANGE (CPU >= VGPU_MAX_CPUS).
 */
int vgpu_cpulist_parse(const char *str, struct vgpu_cpuset *out);
/**
 * vgpu_cpumask_parse() - parse a kernel cpumask ("ff,00000000": 32-bit hex
 * words, most significant first), as nodeN/cpumap and thread_siblings show it.
 * @str: the text; surrounding white space is ignored, an empty mask is invalid
 * @out: the CPUs, written only on success
 * Return: 0 or -EINVAL / -ERANGE (a CPU >= VGPU_MAX_CPUS set).
 */
int vgpu_cpumask_parse(const char *str, struct vgpu_cpuset *out);
/* Enough for any set: "8191," is the longest item. */
#define VGPU_CPULIST_LEN (VGPU_MAX_CPUS / 2 * 6)
/**
 * vgpu_cpulist_format() - write @s as a compact cpulist ("" for the empty set).
 * @s: the set
 * @buf: where the text goes
 * @len: the size of @buf (0: nothing is written)
 *
 * A buffer of VGPU_CPULIST_LEN always suffices.  Never a wrong list: when
 * @buf is too small it holds whole items followed by "...".
 * Return: @buf.
 */
char *vgpu_cpulist_format(const struct vgpu_cpuset *s, char *buf, size_t len);

#endif
