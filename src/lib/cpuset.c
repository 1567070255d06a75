// SPDX-License-Identifier: LGPL-2.1-or-later
/* Fixed-size CPU bitmaps and the kernel's cpulist format. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"

#define NWORDS (VGPU_MAX_CPUS / 64)

void vgpu_cpuset_zero(struct vgpu_cpuset *s)
{
	memset(s, 0, sizeof(*s));
}

void vgpu_cpuset_set(struct vgpu_cpuset *s, unsigned cpu)
{
	if (cpu < VGPU_MAX_CPUS)
		s->w[cpu / 64] |= 1ull << (cpu % 64);
}

void vgpu_cpuset_clear(struct vgpu_cpuset *s, unsigned cpu)
{
	if (cpu < VGPU_MAX_CPUS)
		s->w[cpu / 64] &= ~(1ull << (cpu % 64));
}

bool vgpu_cpuset_has(const struct vgpu_cpuset *s, unsigned cpu)
{
	return cpu < VGPU_MAX_CPUS && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned vgpu_cpuset_count(const struct vgpu_cpuset *s)
{
	unsigned n = 0;

	for (size_t i = 0; i < NWORDS; i++)
		n += (unsigned)__builtin_popcountll(s->w[i]);
	return n;
}

bool vgpu_cpuset_empty(const struct vgpu_cpuset *s)
{
	for (size_t i = 0; i < NWORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

int vgpu_cpuset_next(const struct vgpu_cpuset *s, unsigned from)
{
	for (size_t i = from / 64; i < NWORDS; i++) {
		uint64_t w = s->w[i];

		if (i == from / 64)
			w &= ~0ull << (from % 64);
		if (w)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
	}
	return -1;
}

void vgpu_cpuset_or(struct vgpu_cpuset *d, const struct vgpu_cpuset *s)
{
	for (size_t i = 0; i < NWORDS; i++)
		d->w[i] |= s->w[i];
}

void vgpu_cpuset_and(struct vgpu_cpuset *d, const struct vgpu_cpuset *s)
{
	for (size_t i = 0; i < NWORDS; i++)
		d->w[i] &= s->w[i];
}

void vgpu_cpuset_andnot(struct vgpu_cpuset *d, const struct vgpu_cpuset *s)
{
	for (size_t i = 0; i < NWORDS; i++)
		d->w[i] &= ~s->w[i];
}

bool vgpu_cpuset_subset(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b)
{
	for (size_t i = 0; i < NWORDS; i++)
		if (a->w[i] & ~b->w[i])
			return false;
	return true;
}

bool vgpu_cpuset_intersects(const struct vgpu_cpuset *a, const struct vgpu_cpuset *b)
{
	for (size_t i = 0; i < NWORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

static int parse_uint(const char **p, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	v = strtoul(*p, &end, 10);
	if (v >= VGPU_MAX_CPUS)
		return -ERANGE;
	*p = end;
	*out = (unsigned)v;
	return 0;
}

/* Grammar (kernel bitmap_parselist): item[,item...], item = N | N-M | N-M:stride */
int vgpu_cpulist_parse(const char *str, struct vgpu_cpuset *out)
{
	struct vgpu_cpuset s;
	const char *p = str;
	int r;

	vgpu_cpuset_zero(&s);
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		unsigned a, b, stride = 1;

		r = parse_uint(&p, &a);
		if (r < 0)
			return r;
		b = a;
		if (*p == '-') {
			p++;
			r = parse_uint(&p, &b);
			if (r < 0)
				return r;
			if (b < a)
				return -EINVAL;
			if (*p == ':') {
				p++;
				r = parse_uint(&p, &stride);
				if (r < 0)
					return r;
				if (stride == 0)
					return -EINVAL;
			}
		}
		for (unsigned c = a; c <= b; c += stride)
			vgpu_cpuset_set(&s, c);
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return -EINVAL;
	*out = s;
	return 0;
}

char *vgpu_cpulist_format(const struct vgpu_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;
	int c = vgpu_cpuset_next(s, 0);

	if (len == 0)
		return buf;
	buf[0] = '\0';
	while (c >= 0) {
		int e = c;
		int w;

		while (e + 1 < VGPU_MAX_CPUS && vgpu_cpuset_has(s, (unsigned)e + 1))
			e++;
		if (e == c)
			w = snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		else
			w = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - off) {
			/* keep whole items only and say the list goes on: ",..." */
			while (off > 0 && len - off < 5) {
				char *comma = memrchr(buf, ',', off);

				off = comma ? (size_t)(comma - buf) : 0;
			}
			buf[off] = '\0';
			if (len - off >= 5 || (off == 0 && len >= 4))
				strcpy(buf + off, off ? ",..." : "...");
			break;
		}
		off += (size_t)w;
		if (e + 1 >= VGPU_MAX_CPUS)
			break;
		c = vgpu_cpuset_next(s, (unsigned)e + 1);
	}
	return buf;
}

int vgpu_cpumask_parse(const char *str, struct vgpu_cpuset *out)
{
	struct vgpu_cpuset s;
	const char *p = str, *end;
	size_t len, digits = 0;
	unsigned bit = 0;

	while (isspace((unsigned char)*p))
		p++;
	len = strlen(p);
	while (len && isspace((unsigned char)p[len - 1]))
		len--;
	if (!len)
		return -EINVAL;
	vgpu_cpuset_zero(&s);
	/* from the least significant (rightmost) digit: 4 CPUs per hex digit */
	for (end = p + len; end > p; end--) {
		char ch = end[-1];
		unsigned v;

		if (ch == ',') {
			if (digits % 8 || end - 1 == p || end == p + len)
				return -EINVAL; /* 32-bit words between commas */
			continue;
		}
		if (!isxdigit((unsigned char)ch))
			return -EINVAL;
		v = (unsigned)(isdigit((unsigned char)ch) ? ch - '0' : (ch | 0x20) - 'a' + 10);
		for (unsigned b = 0; b < 4; b++, bit++) {
			if (!(v >> b & 1))
				continue;
			if (bit >= VGPU_MAX_CPUS)
				return -ERANGE;
			vgpu_cpuset_set(&s, bit);
		}
		digits++;
	}
	*out = s;
	return 0;
}
