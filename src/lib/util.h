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
 * @s: the text; an optional sign, then digits, nothing else but blanks
 * @out: the number, written only on success
 * Return: 0, -EINVAL (not a number) or -ERANGE (does not fit a long).
 */
int vgpu_parse_long(const char *s, long *out);
/**
 * vgpu_parse_hex() - a hex integer with optional 0x, blanks around it allowed.
 * @s: the text; no sign, no second "0x"
 * @out: the number, written only on success
 * Return: 0, -EINVAL (not a hex number) or -ERANGE (does not fit an unsigned long).
 */
int vgpu_parse_hex(const char *s, unsigned long *out);
/**
 * vgpu_strip() - strip leading and trailing blanks in place.
 * @s: the string; trailing blanks are overwritten with NULs
 * Return: the first non-blank character of @s (its end when all blank).
 */
char *vgpu_strip(char *s);
/**
 * vgpu_path_join() - "@dir/@leaf" into @buf (just @leaf when @dir is empty),
 * without snprintf()'s format parsing: paths are joined per vGPU type.
 * @buf: where the path goes
 * @len: the size of @buf, terminator included
 * @dir: the leading part, or "" for none
 * @leaf: the trailing part
 * Return: 0 or -ENAMETOOLONG (@buf then holds an empty string).
 */
int vgpu_path_join(char *buf, size_t len, const char *dir, const char *leaf);
/**
 * vgpu_bdf_normalize() - "0000:3B:00.0", "3b:00.0" or "00000000:3B:00.0" to
 * the sysfs form "0000:3b:00.0".
 * @in: the PCI address: an optional domain of up to 8 hex digits (as
 *      nvidia-smi prints it; at most 0xffff), bus, device (at most 0x1f) and
 *      function (at most 7)
 * @out: the normalized address, written only on success
 *
 * Exactly two hex digits for bus and device (one or two accepted when written
 * that way), one for the function; blanks and stray characters are refused.
 * Return: 0 or -EINVAL.
 */
int vgpu_bdf_normalize(const char *in, char out[VGPU_BDF_LEN]);

/**
 * vgpu_utf8_seq_len() - length of the valid UTF-8 sequence at @s, reading at
 * most @n bytes; 0 when it is not one (overlongs, surrogates, > U+10FFFF).
 * @s: the first byte of the sequence (RFC 3629)
 * @n: how many bytes may be read from @s
 * Return: 1 to 4, or 0 for an invalid or truncated sequence.
 */
size_t vgpu_utf8_seq_len(const char *s, size_t n);
/**
 * vgpu_utf8_valid() - is @s valid UTF-8 (no overlongs, no surrogates)?
 * @s: a NUL-terminated string
 * Return: true if every sequence in @s is valid.
 */
bool vgpu_utf8_valid(const char *s);
/**
 * vgpu_utf8_sanitize() - a copy of @s with each invalid UTF-8 byte replaced by U+FFFD.
 * @s: a NUL-terminated string
 * Return: the copy on the heap; caller frees.
 */
char *vgpu_utf8_sanitize(const char *s);

/** A growable list of owned strings: {items, n}. */
struct vgpu_strv {
	char **items;
	size_t n, cap;
};
/**
 * vgpu_strv_push() - append @s (owned by the list from now on).
 * @v: the list; grows as needed
 * @s: a heap string, freed by vgpu_strv_clear()
 */
void vgpu_strv_push(struct vgpu_strv *v, char *s);
/**
 * vgpu_strv_clear() - free every string and the array; the list is empty and reusable after.
 * @v: the list (a zeroed list is fine)
 */
void vgpu_strv_clear(struct vgpu_strv *v);
/**
 * vgpu_strv_sort() - sort with strverscmp (virtfn2 before virtfn10).
 * @v: the list, sorted in place
 */
void vgpu_strv_sort(struct vgpu_strv *v);
/**
 * vgpu_strv_uniq() - sort and drop duplicates (strcmp).
 * @v: the list, sorted in strcmp() order in place; the duplicates are freed
 */
void vgpu_strv_uniq(struct vgpu_strv *v);
#define VGPU_AUTOSTRV __attribute__((cleanup(vgpu_strv_clear))) struct vgpu_strv

/**
 * vgpu_domain_name_check() - can @name be a libvirt domain name?  Non-empty,
 * at most 200 bytes, valid UTF-8, no control characters, no '/'.
 * @name: the name as the user gave it
 * Return: NULL when it can, else why not (static text).
 */
const char *vgpu_domain_name_check(const char *name);
/**
 * vgpu_uuid_generate() - a random RFC 4122 version 4 UUID, from getrandom(2).
 * @ctx: where errors go
 * @out: the UUID, dashed and lowercase
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_uuid_generate(struct vgpu_ctx *ctx, char out[VGPU_UUID_LEN]);
/**
 * vgpu_uuid_normalize() - a UUID as libvirt takes it (8-4-4-4-12 or 32 hex
 * digits, blanks around) to the dashed lowercase form.
 * @in: the text
 * @out: the dashed lowercase UUID, written only when @in is one
 * Return: true when @in is one.
 */
bool vgpu_uuid_normalize(const char *in, char out[VGPU_UUID_LEN]);
/**
 * vgpu_uuid_valid() - is @s a dashed 8-4-4-4-12 hex UUID?
 * @s: the text; hex digits of either case, no blanks
 * Return: true if it is one.
 */
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

/**
 * vgpu_edit_distance() - the optimal string alignment distance between two
 * names (Damerau-Levenshtein with adjacent transpositions, as git's "did you
 * mean"): "A30-6Q" is 1 from "A30-6C", "--jsno" 1 from "--json".
 * @a: a name; only its first %VGPU_EDIT_MAX bytes count
 * @b: the other name, cut the same way
 * @fold: compare ASCII letters case-insensitively (profiles are)
 * Return: the number of insertions, deletions, substitutions and swaps of
 * neighbours that turn @a into @b.
 */
unsigned vgpu_edit_distance(const char *a, const char *b, bool fold);
#define VGPU_EDIT_MAX 64
/**
 * vgpu_nearest() - the name nearest to a mistyped one, for a suggestion.
 * @word: what was typed
 * @names: the names there are
 * @n: how many
 * @fold: case-insensitive, as vgpu_edit_distance() takes it
 *
 * Near enough is 1 edit for a word of up to 4 bytes, 2 for a longer one; an
 * exact match (a name typed right) is no suggestion. The first of equally
 * near names wins.
 * Return: a member of @names, or NULL when none is near enough.
 */
const char *vgpu_nearest(const char *word, const char *const *names, size_t n, bool fold);

/**
 * vgpu_size_text() - a size for a message, in the unit a user wrote another
 * one: "600G" beside "251.6G" when they typed 600G, MiB when they typed 4096.
 * @buf: where the text goes
 * @len: the size of @buf
 * @kib: the size in KiB
 * @like: a size as vgpu_parse_size_kib() takes it (its unit is used as
 *        written), or NULL: MiB
 * Return: @buf: the number with one decimal when it is not whole, then the unit.
 */
const char *vgpu_size_text(char *buf, size_t len, uint64_t kib, const char *like);

/**
 * vgpu_monotonic_ms() - the monotonic clock in milliseconds, for deadlines
 * measured in wall-clock time (never the count of tries).
 * Return: milliseconds since an unspecified start.
 */
uint64_t vgpu_monotonic_ms(void);

#endif
