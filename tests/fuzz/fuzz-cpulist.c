// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpu_cpulist_parse() and vgpu_cpumask_parse() on arbitrary text; a parsed
 * set formats (VGPU_CPULIST_LEN buffer) to a list that parses back to it, and
 * a short buffer gets whole items of the set followed by "...".
 */
#include <errno.h>

#include "cpuset.h"
#include "fuzz-common.h"

#define MAX_INPUT 4096

static char list[VGPU_CPULIST_LEN];

static void round_trip(const struct vgpu_cpuset *s, const char *what)
{
	struct vgpu_cpuset back;
	int r;

	vgpu_cpulist_format(s, list, sizeof(list));
	FUZZ_ASSERT(strlen(list) < sizeof(list), "%s: unterminated list", what);
	FUZZ_ASSERT(!strstr(list, "..."), "%s: a full buffer was cut: '%.80s'", what, list);
	r = vgpu_cpulist_parse(list, &back);
	FUZZ_ASSERT(r == 0, "%s: '%.200s' does not parse back (%d)", what, list, r);
	FUZZ_ASSERT(memcmp(&back, s, sizeof(back)) == 0, "%s: '%.200s' parses to another set", what,
		    list);
	FUZZ_ASSERT(vgpu_cpuset_count(s) == 0 || list[0], "%s: empty list for a non-empty set",
		    what);
}

/* A short buffer: a prefix of whole items, then "..." when cut. */
static void short_buffer(const struct vgpu_cpuset *s, size_t len)
{
	char buf[64], *dots;
	struct vgpu_cpuset part;
	int r;

	memset(buf, 'X', sizeof(buf));
	vgpu_cpulist_format(s, buf, len);
	if (len == 0) {
		FUZZ_ASSERT(buf[0] == 'X', "a zero-length buffer was written");
		return;
	}
	FUZZ_ASSERT(memchr(buf, '\0', len) != NULL, "not terminated within %zu bytes", len);
	FUZZ_ASSERT(buf[len] == 'X' || len == sizeof(buf), "wrote past %zu bytes", len);
	dots = strstr(buf, "...");
	if (dots) {
		FUZZ_ASSERT(dots[3] == '\0', "'...' inside '%s'", buf);
		if (dots > buf) {
			FUZZ_ASSERT(dots[-1] == ',', "cut item before '...' in '%s'", buf);
			dots[-1] = '\0';
		} else {
			dots[0] = '\0';
		}
	}
	r = vgpu_cpulist_parse(buf, &part);
	FUZZ_ASSERT(r == 0, "short list '%s' (len %zu) does not parse (%d)", buf, len, r);
	FUZZ_ASSERT(vgpu_cpuset_subset(&part, s), "short list '%s' names CPUs not in the set", buf);
	/*
	 * Below 4 bytes not even "..." fits and the result is "" for any set:
	 * vgpu_cpulist_format() cannot mark the cut there (reported; callers
	 * use VGPU_CPULIST_LEN).  From 4 bytes on, no "..." means complete.
	 */
	if (!dots && len >= 4)
		FUZZ_ASSERT(memcmp(&part, s, sizeof(part)) == 0,
			    "short list '%s' (len %zu) dropped CPUs without '...'", buf, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vgpu_cpuset s;
	char *text;
	int r;

	if (size > MAX_INPUT)
		return 0;
	text = fuzz_cstr(data, size);
	memset(&s, 0x5a, sizeof(s));
	r = vgpu_cpulist_parse(text, &s);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "cpulist r=%d", r);
	if (r == 0) {
		round_trip(&s, "cpulist");
		short_buffer(&s, size ? data[0] % 48 : 0);
	}
	r = vgpu_cpumask_parse(text, &s);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE, "cpumask r=%d", r);
	if (r == 0)
		round_trip(&s, "cpumask");
	free(text);
	return 0;
}
