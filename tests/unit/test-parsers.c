// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-parsers - the text parsers behind the host reader:
 * creatable_vgpu_types and mdev descriptions (src/lib/read-types.c), numbers
 * (src/lib/util.c) and PCI addresses (vgpu_bdf_normalize).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "read-priv.h"

/* ---- creatable_vgpu_types (reference 1.3) ------------------------------- */

struct bad_lines {
	unsigned lineno[16];
	char *line[16];
	size_t n;
};

static void record_bad_line(void *data, unsigned lineno, const char *line)
{
	struct bad_lines *b = data;

	assert_true(b->n < ARRAY_SIZE(b->line));
	b->lineno[b->n] = lineno;
	b->line[b->n++] = strdup(line);
}

struct creatable {
	struct vgpu_creatable cr;
	/* views of cr after a parse */
	unsigned *ids;
	char **names;
	size_t n;
	struct bad_lines bad;
};

static int creatable_setup(void **state)
{
	struct creatable *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	*state = c;
	return 0;
}

static int creatable_teardown(void **state)
{
	struct creatable *c = *state;

	vgpu_creatable_clear(&c->cr);
	for (size_t i = 0; i < c->bad.n; i++)
		free(c->bad.line[i]);
	free(c);
	return 0;
}

static void parse_with(struct creatable *c, const char *text,
		       void (*cb)(void *, unsigned, const char *), void *data)
{
	vgpu_creatable_clear(&c->cr);
	vgpu_parse_creatable(text, &c->cr, cb, data);
	c->ids = c->cr.ids;
	c->names = c->cr.names.items;
	c->n = c->cr.names.n;
}

static void parse(struct creatable *c, const char *text)
{
	parse_with(c, text, record_bad_line, &c->bad);
}

static void test_creatable_header(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID    : vGPU Name\n"
		 "1145  : NVIDIA L40S-1B\n"
		 "1147  : NVIDIA L40S-1Q\n");
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ids[0], 1145);
	assert_string_equal(c->names[0], "NVIDIA L40S-1B");
	assert_int_equal(c->ids[1], 1147);
	assert_string_equal(c->names[1], "NVIDIA L40S-1Q");
	assert_int_equal(c->bad.n, 0);
}

static void test_creatable_no_header(void **state)
{
	struct creatable *c = *state;

	/* and no newline at the end */
	parse(c, "1056 : NVIDIA H100-1-10C\n1058 : NVIDIA H100-2-20C");
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ids[0], 1056);
	assert_string_equal(c->names[0], "NVIDIA H100-1-10C");
	assert_int_equal(c->ids[1], 1058);
	assert_string_equal(c->names[1], "NVIDIA H100-2-20C");
	assert_int_equal(c->bad.n, 0);
}

static void test_creatable_tabs(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID\t:\tvGPU Name\n"
		 "1147\t:\tNVIDIA L40S-1Q\n"
		 "1148:NVIDIA L40S-2Q\n"
		 "  1149 \t :  NVIDIA L40S-4Q \t\n"
		 "1150 : NVIDIA L40S-6Q\r\n");
	assert_int_equal(c->n, 4);
	assert_int_equal(c->ids[0], 1147);
	assert_string_equal(c->names[0], "NVIDIA L40S-1Q");
	assert_int_equal(c->ids[1], 1148);
	assert_string_equal(c->names[1], "NVIDIA L40S-2Q");
	assert_int_equal(c->ids[2], 1149);
	assert_string_equal(c->names[2], "NVIDIA L40S-4Q");
	assert_int_equal(c->ids[3], 1150);
	assert_string_equal(c->names[3], "NVIDIA L40S-6Q");
	assert_int_equal(c->bad.n, 0);
}

static void test_creatable_blank_lines(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID    : vGPU Name\n"
		 "\n"
		 "1145  : NVIDIA L40S-1B\n"
		 "   \n"
		 "\t\n"
		 "1146  : NVIDIA L40S-2B\n"
		 "\n\n");
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ids[0], 1145);
	assert_int_equal(c->ids[1], 1146);
	assert_string_equal(c->names[1], "NVIDIA L40S-2B");
	assert_int_equal(c->bad.n, 0);
}

/* The malformed fixture's list: garbage on line 3 is reported, the rest kept. */
static void test_creatable_garbage_line(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID    : vGPU Name\n1145  : NVIDIA L40S-1B\nthis is not a type\n"
		 "1147\t:\tNVIDIA L40S-1Q\n\n");
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ids[0], 1145);
	assert_int_equal(c->ids[1], 1147);
	assert_int_equal(c->bad.n, 1);
	assert_int_equal(c->bad.lineno[0], 3);
	assert_string_equal(c->bad.line[0], "this is not a type");
}

/* An over-long line is reported, not cut down to a different name. */
static void test_creatable_long_line(void **state)
{
	struct creatable *c = *state;
	char text[2048];

	/* a 600-character name is read (names may be long); 1,100 is damage, reported */
	snprintf(text, sizeof(text), "1145  : NVIDIA %01100d\n1147  : NVIDIA L40S-1Q\n", 0);
	parse(c, text);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->ids[0], 1147);
	assert_int_equal(c->bad.n, 1);
	assert_int_equal(c->bad.lineno[0], 1);
}

/* Line numbers count blank lines too; every bad shape is reported once. */
static void test_creatable_bad_shapes(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID    : vGPU Name\n" /* 1 */
		 "\n" /* 2 */
		 "1145 NVIDIA L40S-1B\n" /* 3: no colon */
		 "1146 :\n" /* 4: no name */
		 "12x : NVIDIA L40S-1Q\n" /* 5: id with junk */
		 ": NVIDIA L40S-2Q\n" /* 6: no id */
		 "1149 : NVIDIA L40S-4Q\n" /* 7: fine */
		 "-5 : NVIDIA L40S-6Q\n" /* 8: negative id */
		 "99999999999 : X\n"); /* 9: id out of range */
	assert_int_equal(c->n, 1);
	assert_int_equal(c->ids[0], 1149);
	assert_string_equal(c->names[0], "NVIDIA L40S-4Q");
	assert_int_equal(c->bad.n, 6);
	assert_int_equal(c->bad.lineno[0], 3);
	assert_string_equal(c->bad.line[0], "1145 NVIDIA L40S-1B");
	assert_int_equal(c->bad.lineno[1], 4);
	assert_string_equal(c->bad.line[1], "1146 :");
	assert_int_equal(c->bad.lineno[2], 5);
	assert_int_equal(c->bad.lineno[3], 6);
	assert_int_equal(c->bad.lineno[4], 8);
	assert_int_equal(c->bad.lineno[5], 9);
}

static void test_creatable_name_with_spaces(void **state)
{
	struct creatable *c = *state;

	parse(c, "ID    : vGPU Name\n"
		 "2001  : NVIDIA RTX Pro 6000 Blackwell DC-1-12C\n"
		 "2002  : NVIDIA RTX Pro 6000 Blackwell DC-4-96Q   \n");
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ids[0], 2001);
	assert_string_equal(c->names[0], "NVIDIA RTX Pro 6000 Blackwell DC-1-12C");
	assert_int_equal(c->ids[1], 2002);
	assert_string_equal(c->names[1], "NVIDIA RTX Pro 6000 Blackwell DC-4-96Q");
	assert_int_equal(c->bad.n, 0);
}

/* current_vgpu_type 0 means "no vGPU": 0 is never a type id. */
static void test_creatable_id_zero(void **state)
{
	struct creatable *c = *state;

	parse(c, "0 : NVIDIA A30-6C\n684 : NVIDIA A30-6C\n");
	assert_int_equal(c->n, 1);
	assert_int_equal(c->ids[0], 684);
	assert_int_equal(c->bad.n, 1);
	assert_int_equal(c->bad.lineno[0], 1);
	assert_string_equal(c->bad.line[0], "0 : NVIDIA A30-6C");
}

/* Only the first line can be a header. */
static void test_creatable_late_header(void **state)
{
	struct creatable *c = *state;

	parse(c, "1145 : NVIDIA L40S-1B\nID    : vGPU Name\n");
	assert_int_equal(c->n, 1);
	assert_int_equal(c->bad.n, 1);
	assert_int_equal(c->bad.lineno[0], 2);
	assert_string_equal(c->bad.line[0], "ID    : vGPU Name");
}

/* A VF that holds a vGPU has an empty list. */
static void test_creatable_empty(void **state)
{
	struct creatable *c = *state;

	parse(c, "");
	assert_int_equal(c->n, 0);
	assert_int_equal(c->bad.n, 0);
	parse(c, "ID    : vGPU Name\n");
	assert_int_equal(c->n, 0);
	assert_int_equal(c->bad.n, 0);
}

static void test_creatable_no_callback(void **state)
{
	struct creatable *c = *state;

	parse_with(c, "junk\n1145 : NVIDIA L40S-1B\nmore junk\n", NULL, NULL);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->ids[0], 1145);
}

/* ---- mdev description: max_instance ----------------------------------- */

static void test_description_max_instance(void **state)
{
	static const struct {
		const char *desc;
		long want;
	} cases[] = {
		{ "num_heads=4, frl_config=60, framebuffer=2048M, max_resolution=5120x2880, "
		  "max_instance=8",
		  8 },
		{ "num_heads=1, frl_config=60, framebuffer=24576M, max_resolution=4096x2160, "
		  "max_instance=1",
		  1 },
		{ "num_heads=4, frl_config=60, framebuffer=1024M, max_resolution=5120x2880", -1 },
		{ "", -1 },
		{ "num_heads=4\nframebuffer=4096M\nmax_instance=4\n", 4 },
		{ "max_instance=16", 16 },
		{ "max_instance=7, num_heads=1", 7 },
		/* a key that merely ends in max_instance does not count */
		{ "vgpu_max_instance=3, max_instance=5", 5 },
		{ "vgpu_max_instance=3", -1 },
		{ "max_instance=", -1 },
		{ "max_instance=-2", -1 },
		{ "max_instance=abc", -1 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long v = vgpu_description_max_instance(cases[i].desc);

		if (v != cases[i].want)
			fail_msg("max_instance of \"%s\" = %ld, expected %ld", cases[i].desc, v,
				 cases[i].want);
	}
}

/* ---- numbers ------------------------------------------------------------- */

static void test_parse_long(void **state)
{
	static const struct {
		const char *s;
		int ret;
		long v;
	} cases[] = {
		{ "42", 0, 42 },	 { " 42 ", 0, 42 },
		{ "-1\n", 0, -1 },	 { "0", 0, 0 },
		{ "4\n", 0, 4 },	 { "", -EINVAL, 0 },
		{ " \n", -EINVAL, 0 },	 { "lots", -EINVAL, 0 },
		{ "12abc", -EINVAL, 0 }, { "0x10", -EINVAL, 0 },
		{ "1 2", -EINVAL, 0 },	 { "99999999999999999999999", -ERANGE, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long v = 12345;
		int r = vgpu_parse_long(cases[i].s, &v);

		if (r != cases[i].ret)
			fail_msg("vgpu_parse_long(\"%s\") = %d, expected %d", cases[i].s, r,
				 cases[i].ret);
		/* out is set only on success */
		assert_int_equal(v, r == 0 ? cases[i].v : 12345);
	}
}

static void test_parse_hex(void **state)
{
	static const struct {
		const char *s;
		int ret;
		unsigned long v;
	} cases[] = {
		{ "0x10de\n", 0, 0x10de },
		{ "10de", 0, 0x10de },
		{ "0x030200\n", 0, 0x030200 },
		{ "0X20B7", 0, 0x20b7 },
		{ " 42 ", 0, 0x42 },
		{ "0", 0, 0 },
		{ "", -EINVAL, 0 },
		{ "\n", -EINVAL, 0 },
		{ "0x", -EINVAL, 0 },
		{ "0xZZ", -EINVAL, 0 },
		{ "0x10dg", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "0x -1", -EINVAL, 0 },
		{ "10 de", -EINVAL, 0 },
		{ "0x1ffffffffffffffff", -ERANGE, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long v = 12345;
		int r = vgpu_parse_hex(cases[i].s, &v);

		if (r != cases[i].ret)
			fail_msg("vgpu_parse_hex(\"%s\") = %d, expected %d", cases[i].s, r,
				 cases[i].ret);
		assert_int_equal(v, r == 0 ? cases[i].v : 12345);
	}
}

/*
 * One "0x" prefix only: strtoul(..., 16) would take a second one, so
 * "0x0x10de" must not read as 0x10de.
 */
static void test_parse_hex_double_prefix(void **state)
{
	unsigned long v = 12345;

	(void)state;
	assert_int_equal(vgpu_parse_hex("0x0x10de", &v), -EINVAL);
	assert_int_equal(v, 12345);
	assert_int_equal(vgpu_parse_hex("0x0X10", &v), -EINVAL);
}

static void test_strip(void **state)
{
	char a[] = "  \tNVIDIA L40S-4Q \r\n";
	char b[] = "   ";
	char c[] = "x";

	(void)state;
	assert_string_equal(vgpu_strip(a), "NVIDIA L40S-4Q");
	assert_string_equal(vgpu_strip(b), "");
	assert_string_equal(vgpu_strip(c), "x");
}

/* ---- PCI addresses --------------------------------------------------------- */

static void test_bdf_normalize(void **state)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "0000:3b:00.0", "0000:3b:00.0" },
		{ "0000:3B:00.0", "0000:3b:00.0" },
		/* nvidia-smi's 8-digit domain */
		{ "00000000:3D:00.0", "0000:3d:00.0" },
		{ "3b:00.4", "0000:3b:00.4" },
		{ "41:04.3", "0000:41:04.3" },
		{ "0001:c1:1f.7", "0001:c1:1f.7" },
		{ "ffff:ff:1f.7", "ffff:ff:1f.7" },
	};
	static const char *const bad[] = {
		"3b:00",
		"0000:3b:20.0", /* device > 0x1f */
		"zz:00.0",
		"",
		"3b",
		"3b:00.8", /* function > 7 */
		"10000:3b:00.0", /* domain > 0xffff */
		"000000000:3b:00.0", /* more than 8 domain digits */
		":3b:00.0",
		"1:2:3:4",
		"0000:3b:00.4x",
		"0000:3b:00.0\n",
		"3b: 00.4", /* sscanf's %x alone would skip the blank */
		" 3b:00.4",
		"0000:3b:00",
		"0000:3b.00.0",
		"0000:3b:00.",
		"0000:3b:00:0",
		"0000:1ff:00.0",
		"0x:e.5", /* sscanf's %2x took "0x" as a number */
		"0x3b:00.0",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char out[VGPU_BDF_LEN];
		int r = vgpu_bdf_normalize(good[i].in, out);

		if (r != 0)
			fail_msg("vgpu_bdf_normalize(\"%s\") = %d, expected 0", good[i].in, r);
		assert_string_equal(out, good[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char out[VGPU_BDF_LEN] = "unchanged";
		int r = vgpu_bdf_normalize(bad[i], out);

		if (r != -EINVAL)
			fail_msg("vgpu_bdf_normalize(\"%s\") = %d (\"%s\"), expected -EINVAL",
				 bad[i], r, out);
		assert_string_equal(out, "unchanged");
	}
}

/* The edit distance behind "did you mean": swaps of neighbours count once, case folds on request.
 */
static void test_edit_distance(void **state)
{
	static const char *const profiles[] = { "A30-1-6C", "A30-4C", "A30-6C", "A30-8C" };
	static const char *const opts[] = { "gpu", "vf", "json", "sysroot" };

	(void)state;
	assert_int_equal(vgpu_edit_distance("types", "types", false), 0);
	assert_int_equal(vgpu_edit_distance("tpyes", "types", false), 1);
	assert_int_equal(vgpu_edit_distance("jsno", "json", false), 1);
	assert_int_equal(vgpu_edit_distance("", "abc", false), 3);
	assert_int_equal(vgpu_edit_distance("a30-6c", "A30-6C", false), 2);
	assert_int_equal(vgpu_edit_distance("a30-6c", "A30-6C", true), 0);
	assert_string_equal(vgpu_nearest("A30-6Q", profiles, 4, true), "A30-6C");
	assert_string_equal(vgpu_nearest("a30-1-6cm", profiles, 4, true), "A30-1-6C");
	assert_null(vgpu_nearest("H100-80C", profiles, 4, true));
	assert_string_equal(vgpu_nearest("jsno", opts, 4, false), "json");
	/* a name typed right is no suggestion; a short word gets 1 edit only */
	assert_null(vgpu_nearest("json", opts, 4, false));
	assert_null(vgpu_nearest("xx", opts, 4, false));
	/* names longer than the bound still compare (their first VGPU_EDIT_MAX bytes) */
	char a[200], b[200];

	memset(a, 'x', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	assert_int_equal(vgpu_edit_distance(a, b, false), 0);
}

/* Sizes in messages are in the unit the user typed. */
static void test_size_text(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 600ULL << 20, "600G"), "600G");
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 263856435, "600G"), "251.6G");
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 263856435, "600GiB"), "251.6GiB");
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 4096 * 1024, "8192M"), "4096M");
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 4096 * 1024, "8192"), "4096 MiB");
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 4096 * 1024, NULL), "4096 MiB");
	/* GB is powers of 1000, as libvirt reads it */
	assert_string_equal(vgpu_size_text(buf, sizeof(buf), 1953125, "2GB"), "2GB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_creatable_header, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_no_header, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_tabs, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_blank_lines, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_long_line, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_garbage_line, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_bad_shapes, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_name_with_spaces, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_id_zero, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_late_header, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_empty, creatable_setup,
						creatable_teardown),
		cmocka_unit_test_setup_teardown(test_creatable_no_callback, creatable_setup,
						creatable_teardown),
		cmocka_unit_test(test_description_max_instance),
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_parse_hex),
		cmocka_unit_test(test_parse_hex_double_prefix),
		cmocka_unit_test(test_strip),
		cmocka_unit_test(test_bdf_normalize),
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_size_text),
	};

	return cmocka_run_group_tests_name("parsers", tests, NULL, NULL);
}
