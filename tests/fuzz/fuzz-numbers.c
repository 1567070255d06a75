// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The small parsers of util.h and domxml.h on arbitrary text: numbers, PCI
 * addresses, UUIDs, memory sizes, domain names and UTF-8.  Every successful
 * parse is checked against its canonical form.
 */
#include <errno.h>
#include <inttypes.h>

#include "domxml.h"
#include "fuzz-common.h"
#include "util.h"

#define MAX_INPUT 4096

static void numbers(const char *s)
{
	char buf[64];
	unsigned long h, h2;
	long v, v2;
	int r;

	r = vgpu_parse_long(s, &v);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "parse_long r=%d", r);
	if (r == 0) {
		snprintf(buf, sizeof(buf), "%ld", v);
		FUZZ_ASSERT(vgpu_parse_long(buf, &v2) == 0 && v2 == v, "%ld does not re-parse", v);
	}
	r = vgpu_parse_hex(s, &h);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "parse_hex r=%d", r);
	if (r == 0) {
		snprintf(buf, sizeof(buf), "%lx", h);
		FUZZ_ASSERT(vgpu_parse_hex(buf, &h2) == 0 && h2 == h, "%lx does not re-parse", h);
		snprintf(buf, sizeof(buf), "0x%lx", h);
		FUZZ_ASSERT(vgpu_parse_hex(buf, &h2) == 0 && h2 == h, "0x%lx does not re-parse", h);
	}
}

static void bdf(const char *s)
{
	char out[VGPU_BDF_LEN], again[VGPU_BDF_LEN];
	int r;

	memset(out, 'X', sizeof(out));
	r = vgpu_bdf_normalize(s, out);
	FUZZ_ASSERT(r == 0 || r == -EINVAL, "bdf r=%d", r);
	if (r)
		return;
	FUZZ_ASSERT(strlen(out) == VGPU_BDF_LEN - 1, "bdf '%s' of length %zu", out, strlen(out));
	FUZZ_ASSERT(out[4] == ':' && out[7] == ':' && out[10] == '.', "bdf '%s'", out);
	for (int i = 0; i < VGPU_BDF_LEN - 1; i++)
		if (i != 4 && i != 7 && i != 10)
			FUZZ_ASSERT(strchr("0123456789abcdef", out[i]) && out[i], "bdf '%s'", out);
	r = vgpu_bdf_normalize(out, again);
	FUZZ_ASSERT(r == 0 && strcmp(out, again) == 0, "bdf '%s' re-normalizes to '%s' (%d)", out,
		    again, r);
}

static void uuid(const char *s)
{
	char out[VGPU_UUID_LEN], again[VGPU_UUID_LEN];

	if (!vgpu_uuid_normalize(s, out))
		return;
	FUZZ_ASSERT(vgpu_uuid_valid(out), "uuid '%s' not valid", out);
	for (const char *p = out; *p; p++)
		FUZZ_ASSERT(*p == '-' || strchr("0123456789abcdef", *p), "uuid '%s' not lowercase",
			    out);
	FUZZ_ASSERT(vgpu_uuid_normalize(out, again) && strcmp(out, again) == 0,
		    "uuid '%s' not idempotent", out);
	if (vgpu_uuid_valid(s))
		FUZZ_ASSERT(strcasecmp(s, out) == 0, "valid uuid '%s' changed to '%s'", s, out);
}

static void size_kib(const char *s)
{
	uint64_t kib, again;
	char buf[64];
	int r;

	r = vgpu_parse_size_kib(s, &kib);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "size r=%d", r);
	if (r)
		return;
	FUZZ_ASSERT(kib >= 1024, "size %" PRIu64 " KiB below 1 MiB", kib);
	snprintf(buf, sizeof(buf), "%" PRIu64 "KiB", kib);
	r = vgpu_parse_size_kib(buf, &again);
	FUZZ_ASSERT(r == 0 && again == kib, "'%s' re-parses to %" PRIu64 " (%d)", buf, again, r);
}

static void names(const char *s)
{
	const char *why = vgpu_domain_name_check(s);
	bool valid = vgpu_utf8_valid(s);
	char *clean = vgpu_utf8_sanitize(s);

	FUZZ_ASSERT(vgpu_utf8_valid(clean), "sanitized text is not valid UTF-8");
	if (valid)
		FUZZ_ASSERT(strcmp(clean, s) == 0, "valid UTF-8 changed by sanitize");
	else
		FUZZ_ASSERT(strcmp(clean, s) != 0, "invalid UTF-8 unchanged by sanitize");
	FUZZ_ASSERT(strlen(clean) <= 3 * strlen(s), "sanitize grew %zu to %zu", strlen(s),
		    strlen(clean));
	if (!why) {
		FUZZ_ASSERT(*s && strlen(s) <= 200 && valid && !strchr(s, '/'),
			    "name accepted: '%.80s'", s);
		for (const unsigned char *p = (const unsigned char *)s; *p; p++)
			FUZZ_ASSERT(*p >= 0x20 && *p != 0x7f, "control character accepted");
	}
	free(clean);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > MAX_INPUT)
		return 0;
	s = fuzz_cstr(data, size);
	numbers(s);
	bdf(s);
	uuid(s);
	size_kib(s);
	names(s);
	free(s);
	return 0;
}
