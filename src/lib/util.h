/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.h - small pure helpers: number parsing with ranges, PCI addresses,
 * string lists.
 */
#ifndef VGPU_UTIL_H
#define VGPU_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vgpu_ctx;

#define VGPU_BDF_LEN 13 /* "dddd:bb:dd.f" + NUL */
#define VGPU_UUID_LEN 37 /* 8-4-4-4-12 + NUL */

/**
 * vgpu_parse_long() - a decimal integer, blanks around it allowed.
 * Return: 0, -EINVAL (not a number) or -ERANGE (does not fit a long).
 */
int vgpu_parse_long(const char *s, long *out);
/** vgpu_parse_hex() - a hex integer with optional 0x. Return: 0, -EINVAL or -ERANGE. */
int vgpu_parse_hex(const char *s, unsigned long *out);
/* Strip leading and trailing blanks in place; returns the first non-blank. */
char *vgpu_strip(char *s);
/**
 * vgpu_path_join() - "@dir/@leaf" into @buf (just @leaf when @dir is empty),
 * without snprintf()'s format parsing: paths are joined per vGPU type.
 * Return: 0 or -ENAMETOOLONG (@buf then holds an empty string).
 */
int vgpu_path_join(char *buf, size_t len, const char *dir, const char *leaf);
/**
 * vgpu_bdf_normalize() - "0000:3B:00.0", "3b:00.0" or "00000000:3B:00.0" to
 * the sysfs form "0000:3b:00.0".  Exactly two hex digits for bus and device
 * (one or two accepted when written that way), one for the function; blanks
 * and stray characters are refused.
 * Return: 0 or -EINVAL.
 */
int vgpu_bdf_normalize(const char *in, char out[VGPU_BDF_LEN]);

/**
 * vgpu_utf8_seq_len() - length of the valid UTF-8 sequence at @s, reading at
 * most @n bytes; 0 when it is not one (overlongs, surrogates, > U+10FFFF).
 */
size_t vgpu_utf8_seq_len(const char *s, size_t n);
/**
 * vgpu_utf8_valid() - is @s valid UTF-8 (no overlongs, no surrogates)?
 */
bool vgpu_utf8_valid(const char *s);
/* A copy of @s with each invalid UTF-8 byte replaced by U+FFFD; caller frees. */
char *vgpu_utf8_sanitize(const char *s);

/** A growable list of owned strings: {items, n}. */
struct vgpu_strv {
	char **items;
	size_t n, cap;
};
/* Append @s (owned by the list from now on). */
void vgpu_strv_push(struct vgpu_strv *v, char *s);
/* Free every string and the array; the list is empty and reusable after. */
void vgpu_strv_clear(struct vgpu_strv *v);
/* Sort with strverscmp (virtfn2 before virtfn10). */
void vgpu_strv_sort(struct vgpu_strv *v);
/* Sort and drop duplicates (strcmp). */
void vgpu_strv_uniq(struct vgpu_strv *v);
#define VGPU_AUTOSTRV __attribute__((cleanup(vgpu_strv_clear))) struct vgpu_strv

/**
 * vgpu_domain_name_check() - can @name be a libvirt domain name?  Non-empty,
 * at most 200 bytes, valid UTF-8, no control characters, no '/'.
 * Return: NULL when it can, else why not (static text).
 */
const char *vgpu_domain_name_check(const char *name);
/* Random RFC 4122 version 4 UUID. Return: 0 or -errno with a message in @ctx. */
int vgpu_uuid_generate(struct vgpu_ctx *ctx, char out[VGPU_UUID_LEN]);
/*
 * A UUID as libvirt takes it (8-4-4-4-12 or 32 hex digits, blanks around)
 * to the dashed lowercase form.  Return: true when @in is one.
 */
bool vgpu_uuid_normalize(const char *in, char out[VGPU_UUID_LEN]);
/** vgpu_uuid_valid() - is @s a dashed 8-4-4-4-12 hex UUID? */
bool vgpu_uuid_valid(const char *s);

/**
 * vgpu_parse_scaled_kib() - a libvirt scaled integer (virScaleInteger) in
 * KiB, rounded up, in integer arithmetic.
 * @num: digits, with a fraction ("1.5") only when @fraction
 * @unit: "b"/"byte"/"bytes", or k/m/g/t/p/e followed by nothing or "iB"
 *        (powers of 1024) or "B" (powers of 1000), case-insensitive; NULL
 *        or "" means @dflt_bytes
 * @dflt_bytes: bytes per unit when @unit says none
 * @fraction: accept a decimal fraction
 * @out: the size in KiB, 1 to 10^15, on success
 * Return: 0, -EINVAL (syntax, unknown unit) or -ERANGE.
 */
int vgpu_parse_scaled_kib(const char *num, const char *unit, uint64_t dflt_bytes, bool fraction,
			  uint64_t *out);
/**
 * vgpu_parse_size_kib() - a memory size as a user types it: a number
 * (fraction allowed) and a libvirt unit as vgpu_parse_scaled_kib() takes
 * it, no unit meaning MiB.
 * @s: the text, number and unit with nothing between them ("32G", "1.5GiB")
 * @out: the size in KiB, at least 1 MiB, on success
 * Return: 0, -EINVAL (syntax, zero) or -ERANGE.
 */
int vgpu_parse_size_kib(const char *s, uint64_t *out);

#endif
