// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-cpuset - CPU bitmaps and the kernel cpulist format (src/lib/cpuset.c).
 *
 * cpulists are what sysfs prints in node<N>/cpulist, local_cpulist and
 * thread_siblings_list ("0-23,48-71", one trailing newline).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cpuset.h"
#include "test-util.h"

static void test_parse_two_ranges(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	parse_cpus("0-23,48-71", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 48);
	assert_true(vgpu_cpuset_has(&s, 0));
	assert_true(vgpu_cpuset_has(&s, 23));
	assert_false(vgpu_cpuset_has(&s, 24));
	assert_false(vgpu_cpuset_has(&s, 47));
	assert_true(vgpu_cpuset_has(&s, 48));
	assert_true(vgpu_cpuset_has(&s, 71));
	assert_false(vgpu_cpuset_has(&s, 72));
	assert_cpus(&s, "0-23,48-71");
}

static void test_parse_single(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	parse_cpus("0", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 1);
	assert_true(vgpu_cpuset_has(&s, 0));
	assert_false(vgpu_cpuset_has(&s, 1));
	parse_cpus("8191", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 1);
	assert_true(vgpu_cpuset_has(&s, 8191));
}

/* An empty file (a memory-only node's cpulist) is the empty set. */
static void test_parse_empty(void **state)
{
	static const char *const empties[] = { "", "\n", " ", " \n\n" };
	struct vgpu_cpuset s;
	char buf[16];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(empties); i++) {
		/* the result replaces whatever out held */
		vgpu_cpuset_zero(&s);
		vgpu_cpuset_set(&s, 5);
		vgpu_cpuset_set(&s, 4000);
		parse_cpus(empties[i], &s);
		assert_true(vgpu_cpuset_empty(&s));
		assert_int_equal(vgpu_cpuset_count(&s), 0);
		assert_int_equal(vgpu_cpuset_next(&s, 0), -1);
	}
	memset(buf, 'x', sizeof(buf));
	assert_string_equal(vgpu_cpulist_format(&s, buf, sizeof(buf)), "");
}

static void test_parse_stride(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	parse_cpus("0-7:2", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 4);
	assert_true(vgpu_cpuset_has(&s, 0));
	assert_false(vgpu_cpuset_has(&s, 1));
	assert_true(vgpu_cpuset_has(&s, 6));
	assert_false(vgpu_cpuset_has(&s, 7));
	assert_cpus(&s, "0,2,4,6");
	/* stride that does not land on the end */
	parse_cpus("1-10:4", &s);
	assert_cpus(&s, "1,5,9");
	parse_cpus("0-3:1,8", &s);
	assert_cpus(&s, "0-3,8");
}

/* sysfs ends lists with a newline; tolerate surrounding whitespace only. */
static void test_parse_whitespace(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "0-23,48-71\n", "0-23,48-71" },
		{ " 0-3\n", "0-3" },
		{ "0-3\n\n", "0-3" },
		{ "\t5\r\n", "5" },
		{ "  1,3  ", "1,3" },
	};
	struct vgpu_cpuset s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		parse_cpus(cases[i].in, &s);
		assert_cpus(&s, cases[i].out);
	}
}

static void test_parse_errors(void **state)
{
	static const char *const bad[] = {
		"a",	   "3-1",   "1,,2", ",1",   "1-",  "-1",  "1-3:",  "1-3:0", "5:2",
		"0-7:2/4", "0-3 4", "1, 2", "1 ,2", "0x3", "1;2", "0-3,a", "1.5",   "0--3",
	};
	struct vgpu_cpuset s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r;

		/* out is set only on success */
		vgpu_cpuset_zero(&s);
		vgpu_cpuset_set(&s, 77);
		r = vgpu_cpulist_parse(bad[i], &s);
		if (r != -EINVAL)
			fail_msg("vgpu_cpulist_parse(\"%s\") = %d, expected -EINVAL", bad[i], r);
		assert_int_equal(vgpu_cpuset_count(&s), 1);
		assert_true(vgpu_cpuset_has(&s, 77));
	}
}

static void test_parse_range_limit(void **state)
{
	static const char *const big[] = {
		"8192", "0-8192", "8192-8193", "0,8192", "0-15:8192", "99999999999999999999999",
	};
	struct vgpu_cpuset s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(big); i++) {
		int r;

		vgpu_cpuset_zero(&s);
		vgpu_cpuset_set(&s, 3);
		r = vgpu_cpulist_parse(big[i], &s);
		if (r != -ERANGE)
			fail_msg("vgpu_cpulist_parse(\"%s\") = %d, expected -ERANGE", big[i], r);
		assert_int_equal(vgpu_cpuset_count(&s), 1);
	}
	/* the last CPU that fits */
	parse_cpus("0-8191", &s);
	assert_int_equal(vgpu_cpuset_count(&s), VGPU_MAX_CPUS);
	assert_cpus(&s, "0-8191");
}

/* format(parse(x)) == x for lists in the kernel's canonical form. */
static void test_round_trip(void **state)
{
	static const char *const canon[] = {
		"0",	       "0-23,48-71", "1,3,5",	      "0-1,3-4,6", "63-64",
		"127,129",     "0-8191",     "8191",	      "4-7,12-15", "0-3,8-11",
		"24-47,72-95", "0,2,4,6,8",  "1-2,8190-8191", "",
	};
	struct vgpu_cpuset s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(canon); i++) {
		char buf[256];

		parse_cpus(canon[i], &s);
		vgpu_cpulist_format(&s, buf, sizeof(buf));
		if (strcmp(buf, canon[i]) != 0)
			fail_msg("format(parse(\"%s\")) = \"%s\"", canon[i], buf);
	}
}

/* Non-canonical input comes out sorted, merged and compressed. */
static void test_format_normalises(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "5,1", "1,5" },	  { "0-3,2-5", "0-5" },
		{ "0,1,2", "0-2" },	  { "3,3,3", "3" },
		{ "7-7", "7" },		  { "10-12,0-2,3", "0-3,10-12" },
		{ "0-7:2,1-7:2", "0-7" }, { "63,64-127", "63-127" },
	};
	struct vgpu_cpuset s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		parse_cpus(cases[i].in, &s);
		assert_cpus(&s, cases[i].out);
	}
}

static void test_set_clear_has(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	vgpu_cpuset_zero(&s);
	assert_true(vgpu_cpuset_empty(&s));
	vgpu_cpuset_set(&s, 0);
	vgpu_cpuset_set(&s, 63);
	vgpu_cpuset_set(&s, 64);
	vgpu_cpuset_set(&s, 8191);
	assert_false(vgpu_cpuset_empty(&s));
	assert_int_equal(vgpu_cpuset_count(&s), 4);
	/* out of range: ignored, never a member */
	vgpu_cpuset_set(&s, 8192);
	vgpu_cpuset_set(&s, 100000);
	assert_int_equal(vgpu_cpuset_count(&s), 4);
	assert_false(vgpu_cpuset_has(&s, 8192));
	assert_false(vgpu_cpuset_has(&s, 100000));
	vgpu_cpuset_clear(&s, 63);
	vgpu_cpuset_clear(&s, 8192);
	assert_false(vgpu_cpuset_has(&s, 63));
	assert_true(vgpu_cpuset_has(&s, 64));
	assert_int_equal(vgpu_cpuset_count(&s), 3);
	assert_cpus(&s, "0,64,8191");
}

static void test_next(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	parse_cpus("3,63-64,200,8191", &s);
	assert_int_equal(vgpu_cpuset_next(&s, 0), 3);
	assert_int_equal(vgpu_cpuset_next(&s, 3), 3);
	assert_int_equal(vgpu_cpuset_next(&s, 4), 63);
	assert_int_equal(vgpu_cpuset_next(&s, 63), 63);
	assert_int_equal(vgpu_cpuset_next(&s, 64), 64);
	assert_int_equal(vgpu_cpuset_next(&s, 65), 200);
	assert_int_equal(vgpu_cpuset_next(&s, 201), 8191);
	assert_int_equal(vgpu_cpuset_next(&s, 8191), 8191);
	assert_int_equal(vgpu_cpuset_next(&s, 8192), -1);
	assert_int_equal(vgpu_cpuset_next(&s, 70000), -1);
	vgpu_cpuset_clear(&s, 8191);
	assert_int_equal(vgpu_cpuset_next(&s, 201), -1);

	/* walk the set the way the library does */
	{
		unsigned seen = 0;
		int last = -1;

		parse_cpus("0-23,48-71", &s);
		for (int c = vgpu_cpuset_next(&s, 0); c >= 0;
		     c = vgpu_cpuset_next(&s, (unsigned)c + 1)) {
			assert_true(c > last);
			last = c;
			seen++;
		}
		assert_int_equal(seen, 48);
		assert_int_equal(last, 71);
	}
}

static void test_count(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	parse_cpus("0-63", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 64);
	parse_cpus("0-127,4096-4099", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 132);
	parse_cpus("0-95:2", &s);
	assert_int_equal(vgpu_cpuset_count(&s), 48);
}

static void test_subset(void **state)
{
	struct vgpu_cpuset node0, gpu, other, empty;

	(void)state;
	parse_cpus("0-23,48-71", &node0);
	parse_cpus("0-23,48-71", &gpu);
	assert_true(vgpu_cpuset_subset(&gpu, &node0));
	parse_cpus("2-5,50", &gpu);
	assert_true(vgpu_cpuset_subset(&gpu, &node0));
	assert_false(vgpu_cpuset_subset(&node0, &gpu));
	parse_cpus("23-24", &other);
	assert_false(vgpu_cpuset_subset(&other, &node0));
	parse_cpus("4000", &other);
	assert_false(vgpu_cpuset_subset(&other, &node0));
	vgpu_cpuset_zero(&empty);
	assert_true(vgpu_cpuset_subset(&empty, &node0));
	assert_true(vgpu_cpuset_subset(&empty, &empty));
	assert_false(vgpu_cpuset_subset(&node0, &empty));
}

static void test_intersects(void **state)
{
	struct vgpu_cpuset a, b, empty;

	(void)state;
	parse_cpus("0-23,48-71", &a);
	parse_cpus("24-47,72-95", &b);
	assert_false(vgpu_cpuset_intersects(&a, &b));
	assert_false(vgpu_cpuset_intersects(&b, &a));
	parse_cpus("47-48", &b);
	assert_true(vgpu_cpuset_intersects(&a, &b));
	parse_cpus("71", &b);
	assert_true(vgpu_cpuset_intersects(&a, &b));
	vgpu_cpuset_zero(&empty);
	assert_false(vgpu_cpuset_intersects(&a, &empty));
	assert_false(vgpu_cpuset_intersects(&empty, &empty));
	assert_true(vgpu_cpuset_intersects(&a, &a));
}

static void test_or_and_andnot(void **state)
{
	struct vgpu_cpuset d, s;

	(void)state;
	parse_cpus("0-3,100", &d);
	parse_cpus("2-5,8191", &s);
	vgpu_cpuset_or(&d, &s);
	assert_cpus(&d, "0-5,100,8191");

	parse_cpus("0-3,100", &d);
	vgpu_cpuset_and(&d, &s);
	assert_cpus(&d, "2-3");

	parse_cpus("0-3,100", &d);
	vgpu_cpuset_andnot(&d, &s);
	assert_cpus(&d, "0-1,100");

	/* s is not modified */
	assert_cpus(&s, "2-5,8191");
}

static void test_format_small_buffer(void **state)
{
	struct vgpu_cpuset s;
	char buf[8];

	(void)state;
	parse_cpus("0-8191", &s);
	/* exactly enough: "0-8191" + NUL */
	assert_string_equal(vgpu_cpulist_format(&s, buf, 7), "0-8191");
	/* too small: whole items and ",...", never a different valid list */
	parse_cpus("0-3,100-103", &s);
	assert_string_equal(vgpu_cpulist_format(&s, buf, 8), "0-3,...");
	assert_string_equal(vgpu_cpulist_format(&s, buf, 6), "...");
	parse_cpus("0-8191", &s);
	/* a zero-length buffer is left alone */
	buf[0] = 'x';
	vgpu_cpulist_format(&s, buf, 0);
	assert_int_equal(buf[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_two_ranges),
		cmocka_unit_test(test_parse_single),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_stride),
		cmocka_unit_test(test_parse_whitespace),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_range_limit),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format_normalises),
		cmocka_unit_test(test_set_clear_has),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_subset),
		cmocka_unit_test(test_intersects),
		cmocka_unit_test(test_or_and_andnot),
		cmocka_unit_test(test_format_small_buffer),
	};

	return cmocka_run_group_tests_name("cpuset", tests, NULL, NULL);
}
