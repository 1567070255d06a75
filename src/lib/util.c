// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small string and number helpers. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "ctx.h"
#include "util.h"

char *vgpu_strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int vgpu_path_join(char *buf, size_t len, const char *dir, const char *leaf)
{
	size_t dl = strlen(dir), sep = dl ? 1 : 0, ll = strlen(leaf);

	if (dl + sep + ll >= len) {
		if (len)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(buf, dir, dl);
	buf[dl] = '/'; /* overwritten by @leaf when @dir is empty */
	memcpy(buf + dl + sep, leaf, ll + 1);
	return 0;
}

/* After a number: only blanks may follow.  0, -EINVAL, or strto*'s errno. */
static int number_end(const char *start, const char *end, int err)
{
	if (end == start)
		return -EINVAL;
	if (err)
		return -err;
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -EINVAL : 0;
}

int vgpu_parse_long(const char *s, long *out)
{
	char *end;
	long v;
	int r;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	r = number_end(s, end, errno);
	if (r == 0)
		*out = v;
	return r;
}

int vgpu_parse_hex(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;
	int r;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	/* strtoul would accept a second "0x" (or a sign) here */
	if (!isxdigit((unsigned char)*s) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 16);
	r = number_end(s, end, errno);
	if (r == 0)
		*out = v;
	return r;
}

static const char hex_digit[] = "0123456789abcdef";

/* 1..@max hex digits at *p; advances *p. */
static int hex_field(const char **p, unsigned max, unsigned *out)
{
	unsigned v = 0, n = 0;

	while (n < max && isxdigit((unsigned char)**p)) {
		int c = tolower((unsigned char)**p);

		v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
		(*p)++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

int vgpu_bdf_normalize(const char *in, char out[VGPU_BDF_LEN])
{
	unsigned dom = 0, bus, dev, fn;
	const char *p = in, *c1 = strchr(in, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (!c1)
		return -EINVAL;
	if (c2) {
		/* nvidia-smi prints an 8-digit domain: 00000000:3D:00.0 */
		if (c1 == in || c1 - in > 8 || hex_field(&p, 8, &dom) < 0 || p != c1)
			return -EINVAL;
		p++;
	}
	if (hex_field(&p, 2, &bus) < 0 || *p++ != ':' || hex_field(&p, 2, &dev) < 0 ||
	    *p++ != '.' || hex_field(&p, 1, &fn) < 0 || *p)
		return -EINVAL;
	if (dom > 0xffff || dev > 0x1f || fn > 7)
		return -EINVAL;
	/* "%04x:%02x:%02x.%x" without snprintf(): every PCI device and VF link comes here */
	for (int i = 0; i < 4; i++)
		out[i] = hex_digit[(dom >> (12 - 4 * i)) & 15];
	out[4] = ':';
	out[5] = hex_digit[bus >> 4];
	out[6] = hex_digit[bus & 15];
	out[7] = ':';
	out[8] = hex_digit[dev >> 4];
	out[9] = hex_digit[dev & 15];
	out[10] = '.';
	out[11] = hex_digit[fn];
	out[12] = '\0';
	return 0;
}

void vgpu_strv_push(struct vgpu_strv *v, char *s)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->items = vgpu_xreallocarray(v->items, v->cap, sizeof(*v->items));
	}
	v->items[v->n++] = s;
}

void vgpu_strv_clear(struct vgpu_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->items[i]);
	free(v->items);
	memset(v, 0, sizeof(*v));
}

static int cmp_ver(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void vgpu_strv_sort(struct vgpu_strv *v)
{
	if (v->n > 1)
		qsort(v->items, v->n, sizeof(*v->items), cmp_ver);
}

void vgpu_strv_uniq(struct vgpu_strv *v)
{
	size_t k = 0;

	if (v->n > 1)
		qsort(v->items, v->n, sizeof(*v->items), cmp_str);
	for (size_t i = 0; i < v->n; i++) {
		if (k && strcmp(v->items[k - 1], v->items[i]) == 0)
			free(v->items[i]);
		else
			v->items[k++] = v->items[i];
	}
	v->n = k;
}

/* RFC 3629 */
size_t vgpu_utf8_seq_len(const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	size_t n;
	unsigned min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n > max)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool vgpu_utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = vgpu_utf8_seq_len((const char *)p, 4);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

char *vgpu_utf8_sanitize(const char *s)
{
	char *r = vgpu_xmalloc(strlen(s) * 3 + 1), *o = r;

	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = vgpu_utf8_seq_len((const char *)p, 4);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	*o = '\0';
	return r;
}

/* ---- UUIDs and domain names ---------------------------------------------- */

int vgpu_uuid_generate(struct vgpu_ctx *ctx, char out[VGPU_UUID_LEN])
{
	unsigned char b[16];
	ssize_t n = getrandom(b, sizeof(b), 0);

	if (n != (ssize_t)sizeof(b)) {
		/* a short read sets no errno: what errno holds is an earlier call's */
		int err = n < 0 ? errno : EIO;

		return vgpu_error(ctx, -err, "cannot generate a UUID: %s", strerror(err));
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, VGPU_UUID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
	return 0;
}

bool vgpu_uuid_valid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

bool vgpu_uuid_normalize(const char *in, char out[VGPU_UUID_LEN])
{
	char hex[33];
	size_t n = 0, len;

	while (isspace((unsigned char)*in))
		in++;
	len = strlen(in);
	while (len && isspace((unsigned char)in[len - 1]))
		len--;
	if (len == 36) {
		char tmp[37];

		memcpy(tmp, in, 36);
		tmp[36] = '\0';
		if (!vgpu_uuid_valid(tmp))
			return false;
	} else if (len != 32) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '-')
			continue;
		if (!isxdigit((unsigned char)in[i]) || n == 32)
			return false;
		hex[n++] = (char)tolower((unsigned char)in[i]);
	}
	if (n != 32)
		return false;
	snprintf(out, VGPU_UUID_LEN, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
		 hex + 20);
	return true;
}

const char *vgpu_domain_name_check(const char *name)
{
	if (!*name)
		return "empty";
	if (strlen(name) > 200)
		return "longer than 200 bytes";
	if (!vgpu_utf8_valid(name))
		return "not valid UTF-8";
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "contains a control character";
	if (strchr(name, '/'))
		return "contains '/'";
	return NULL;
}

/* Bytes per libvirt unit @u (powers of 1024 or 1000 up to exa), 0 if unknown. */
static uint64_t unit_bytes(const char *u)
{
	static const char prefixes[] = "kmgtpe";
	const char *p;
	uint64_t base, f = 1;

	if (!strcasecmp(u, "b") || !strcasecmp(u, "byte") || !strcasecmp(u, "bytes"))
		return 1;
	p = *u ? strchr(prefixes, tolower((unsigned char)*u)) : NULL;
	if (!p)
		return 0;
	if (!u[1] || !strcasecmp(u + 1, "ib"))
		base = 1024;
	else if ((u[1] == 'b' || u[1] == 'B') && !u[2])
		base = 1000;
	else
		return 0;
	for (const char *q = prefixes; q <= p; q++)
		f *= base;
	return f;
}

#define SIZE_KIB_MAX 1000000000000000ULL /* 10^15 KiB: an exbibyte */
#define SIZE_DIGITS_MAX 18 /* digits of each part kept: 10^18 < 2^63 */

int vgpu_parse_scaled_kib(const char *num, const char *unit, uint64_t dflt_bytes, bool fraction,
			  uint64_t *out)
{
	uint64_t f = unit && *unit ? unit_bytes(unit) : dflt_bytes;
	uint64_t whole = 0, frac = 0, scale = 1;
	unsigned __int128 bytes, div, kib;
	bool dropped = false; /* a non-zero fraction digit past SIZE_DIGITS_MAX */
	const char *p = num;

	if (!isdigit((unsigned char)*p) || !f)
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > SIZE_KIB_MAX * 1024)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.' && fraction && isdigit((unsigned char)p[1])) {
		unsigned digits = 0;

		for (p++; isdigit((unsigned char)*p); p++) {
			if (digits++ < SIZE_DIGITS_MAX) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			} else if (*p != '0') {
				dropped = true;
			}
		}
	}
	if (*p)
		return -EINVAL;
	if ((unsigned __int128)whole * f > (unsigned __int128)SIZE_KIB_MAX * 1024)
		return -ERANGE;
	bytes = ((unsigned __int128)whole * scale + frac) * f;
	div = (unsigned __int128)scale * 1024;
	kib = bytes / div + (bytes % div || dropped);
	if (kib < 1 || kib > SIZE_KIB_MAX)
		return -ERANGE;
	*out = (uint64_t)kib;
	return 0;
}

const char *vgpu_size_text(char *buf, size_t len, uint64_t kib, const char *like)
{
	const char *unit = like ? like + strspn(like, "0123456789.") : "";
	uint64_t f = *unit ? unit_bytes(unit) : 0;
	unsigned __int128 tenths;

	if (!f) {
		unit = " MiB"; /* a bare number is MiB (and an unknown unit was refused before) */
		f = 1024 * 1024;
	}
	tenths = ((unsigned __int128)kib * 1024 * 10 + f / 2) / f;
	if (tenths % 10)
		snprintf(buf, len, "%llu.%u%s", (unsigned long long)(tenths / 10),
			 (unsigned)(tenths % 10), unit);
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)(tenths / 10), unit);
	return buf;
}

int vgpu_parse_size_kib(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789.");
	bool zero = true;
	char num[64];
	uint64_t kib;
	int r;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++)
		zero &= num[i] == '0' || num[i] == '.';
	if (zero)
		return -EINVAL; /* "0" is no size, not a small one */
	r = vgpu_parse_scaled_kib(num, s + n, 1024 * 1024, true, &kib);
	if (r < 0)
		return r;
	if (kib < 1024)
		return -ERANGE; /* no guest runs in less than a MiB */
	*out = kib;
	return 0;
}

uint64_t vgpu_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned vgpu_edit_distance(const char *a, const char *b, bool fold)
{
	/* three rows: the one being filled, the one above, and the one before it (swaps) */
	unsigned rows[3][VGPU_EDIT_MAX + 1], *d2 = rows[0], *d1 = rows[1], *d = rows[2];
	size_t la = strnlen(a, VGPU_EDIT_MAX), lb = strnlen(b, VGPU_EDIT_MAX);

	for (size_t j = 0; j <= lb; j++)
		d1[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		d[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			char x = fold ? (char)tolower((unsigned char)a[i - 1]) : a[i - 1];
			char y = fold ? (char)tolower((unsigned char)b[j - 1]) : b[j - 1];
			unsigned best = d1[j] + 1;

			if (d[j - 1] + 1 < best)
				best = d[j - 1] + 1;
			if (d1[j - 1] + (x != y) < best)
				best = d1[j - 1] + (x != y);
			if (i > 1 && j > 1 && d2[j - 2] + 1 < best) {
				char px = fold ? (char)tolower((unsigned char)a[i - 2]) : a[i - 2];
				char py = fold ? (char)tolower((unsigned char)b[j - 2]) : b[j - 2];

				if (x == py && px == y)
					best = d2[j - 2] + 1;
			}
			d[j] = best;
		}
		unsigned *t = d2;

		d2 = d1;
		d1 = d;
		d = t;
	}
	return d1[lb];
}

const char *vgpu_nearest(const char *word, const char *const *names, size_t n, bool fold)
{
	const char *best = NULL;
	unsigned best_d = ~0u, limit = strlen(word) > 4 ? 2 : 1;

	for (size_t i = 0; i < n; i++) {
		unsigned d = vgpu_edit_distance(word, names[i], fold);

		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best_d >= 1 && best_d <= limit ? best : NULL;
}
