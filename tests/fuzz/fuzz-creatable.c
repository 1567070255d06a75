// SPDX-License-Identifier: GPL-2.0-or-later
/* vgpu_parse_creatable() on arbitrary text: ids in range, names non-empty single lines. */
#include "fuzz-common.h"
#include "read-priv.h"

#define MAX_INPUT 65536

struct bad {
	unsigned last_lineno;
	unsigned n;
};

static void bad_line(void *data, unsigned lineno, const char *line)
{
	struct bad *b = data;

	FUZZ_ASSERT(line != NULL, "NULL bad line");
	FUZZ_ASSERT(lineno > b->last_lineno, "bad line %u after %u", lineno, b->last_lineno);
	FUZZ_ASSERT(!strchr(line, '\n'), "bad line %u holds a newline", lineno);
	b->last_lineno = lineno;
	b->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgpu_creatable c = { 0 };
	struct bad b = { 0 };
	size_t lines = 1;
	char *text;

	if (size > MAX_INPUT)
		return 0;
	text = fuzz_cstr(data, size);
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	vgpu_parse_creatable(text, &c, bad_line, &b);
	FUZZ_ASSERT(c.names.n + b.n <= lines, "%zu names + %u bad lines > %zu lines", c.names.n,
		    b.n, lines);
	for (size_t i = 0; i < c.names.n; i++) {
		const char *n = c.names.items[i];

		FUZZ_ASSERT(c.ids[i] >= 1 && c.ids[i] <= 0xffffff, "id %u", c.ids[i]);
		FUZZ_ASSERT(n && *n, "empty name for id %u", c.ids[i]);
		FUZZ_ASSERT(!strchr(n, '\n'), "name for id %u holds a newline", c.ids[i]);
		FUZZ_ASSERT(strlen(n) < VGPU_NAME_FILE_MAX, "name of %zu bytes", strlen(n));
	}
	/* without a bad_line callback the result is the same */
	{
		struct vgpu_creatable c2 = { 0 };

		vgpu_parse_creatable(text, &c2, NULL, NULL);
		FUZZ_ASSERT(c2.names.n == c.names.n, "%zu vs %zu names", c2.names.n, c.names.n);
		for (size_t i = 0; i < c.names.n; i++)
			FUZZ_ASSERT(c2.ids[i] == c.ids[i] &&
					    strcmp(c2.names.items[i], c.names.items[i]) == 0,
				    "entry %zu differs", i);
		vgpu_creatable_clear(&c2);
	}
	vgpu_creatable_clear(&c);
	free(text);
	return 0;
}
