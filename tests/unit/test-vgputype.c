// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-vgputype - vGPU type-name grammar and MIG tables (src/lib/vgputype.c).
 *
 * Names come from real drivers across GPU families; the expected decodings
 * follow the vGPU host reference, sections 3.1-3.5 (grammar, worked
 * examples) and 4.2/4.3 (MIG profile tables, type -> GI profile).
 * Each row of the name tables runs as its own cmocka test named after the
 * type name, so a failure says which name broke.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vgpu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct type_case {
	const char *name;
	int ret;
	const char *profile;
	const char *board;
	enum vgpu_backing backing;
	unsigned slices;
	unsigned fb_mib;
	char series;
	const char *attribute;
	const char *gi_profile;
	int gi_profile_id;
};

#define TS(n, prof, brd, fb, s)                                                                    \
	{ n, 0, prof, brd, VGPU_BACKING_TIME_SLICED, 0, fb, s, "", "", -1 }
#define MIG(n, prof, brd, sl, fb, s, attr, gi, id)                                                 \
	{ n, 0, prof, brd, VGPU_BACKING_MIG, sl, fb, s, attr, gi, id }
/* Outside the grammar: -EINVAL, backing unknown, only the short name kept. */
#define BAD(n, prof) { n, -EINVAL, prof, "", VGPU_BACKING_UNKNOWN, 0, 0, 0, "", "", -1 }

/* Reference table 3.5, row by row. */
static struct type_case worked_examples[] = {
	MIG("NVIDIA A30-1-6C", "A30-1-6C", "A30", 1, 6144, 'C', "", "1g.6gb", 14),
	MIG("NVIDIA A30-1-6CME", "A30-1-6CME", "A30", 1, 6144, 'C', "ME", "1g.6gb+me", 21),
	TS("NVIDIA A30-6C", "A30-6C", "A30", 6144, 'C'),
	MIG("GRID A100X-2-10C", "A100X-2-10C", "A100X", 2, 10240, 'C', "", "2g.10gb", 14),
	MIG("NVIDIA H100L-1-24C", "H100L-1-24C", "H100L", 1, 24576, 'C', "", "1g.24gb", 15),
	TS("NVIDIA H200X-141C", "H200X-141C", "H200X", 144384, 'C'),
	/* "0" GB is 512 MiB */
	TS("GRID M60-0Q", "M60-0Q", "M60", 512, 'Q'),
	/* a letter-only dash segment belongs to the board token */
	TS("NVIDIA RTX6000-Ada-4Q", "RTX6000-Ada-4Q", "RTX6000-Ada", 4096, 'Q'),
	/* MIG-backed but time-sliced inside the GI: no name-based GI table for DC */
	MIG("NVIDIA RTX Pro 6000 Blackwell DC-1-12C", "DC-1-12C", "DC", 1, 12288, 'C', "", "",
	    -1),
	/* legacy name outside both patterns */
	BAD("GRID M10-2B4", "M10-2B4"),
};

/* More families and the MIG table of section 4.3. */
static struct type_case more_names[] = {
	TS("NVIDIA L40S-48Q", "L40S-48Q", "L40S", 49152, 'Q'),
	TS("NVIDIA L40S-1B", "L40S-1B", "L40S", 1024, 'B'),
	TS("GRID T4-16C", "T4-16C", "T4", 16384, 'C'),
	TS("GRID T4-1A", "T4-1A", "T4", 1024, 'A'),
	TS("T4-8Q", "T4-8Q", "T4", 8192, 'Q'),
	TS("NVIDIA A100D-80C", "A100D-80C", "A100D", 81920, 'C'),
	MIG("NVIDIA A100D-7-80C", "A100D-7-80C", "A100D", 7, 81920, 'C', "", "7g.80gb", 0),
	MIG("A100D-7-80C", "A100D-7-80C", "A100D", 7, 81920, 'C', "", "7g.80gb", 0),
	MIG("GRID A100-1-5CME", "A100-1-5CME", "A100", 1, 5120, 'C', "ME", "1g.5gb+me", 20),
	MIG("A100-1-10C", "A100-1-10C", "A100", 1, 10240, 'C', "", "1g.10gb", 15),
	MIG("NVIDIA H100-3-40C", "H100-3-40C", "H100", 3, 40960, 'C', "", "3g.40gb", 9),
	MIG("NVIDIA H100-1-10CME", "H100-1-10CME", "H100", 1, 10240, 'C', "ME", "1g.10gb+me",
	    20),
	MIG("NVIDIA H100XM-4-40C", "H100XM-4-40C", "H100XM", 4, 40960, 'C', "", "4g.40gb", 5),
	MIG("NVIDIA H100L-7-94C", "H100L-7-94C", "H100L", 7, 96256, 'C', "", "7g.94gb", 0),
	MIG("NVIDIA H200-1-18C", "H200-1-18C", "H200", 1, 18432, 'C', "", "1g.18gb", 19),
	MIG("NVIDIA A30-2-12CME", "A30-2-12CME", "A30", 2, 12288, 'C', "ME", "2g.12gb+me", 6),
	MIG("NVIDIA A30-4-24C", "A30-4-24C", "A30", 4, 24576, 'C', "", "4g.24gb", 0),
	/* no such GI on the board: MIG-backed, but no profile */
	MIG("NVIDIA A30-3-18C", "A30-3-18C", "A30", 3, 18432, 'C', "", "", -1),
	/* a board without a MIG table */
	MIG("NVIDIA B200X-1-23C", "B200X-1-23C", "B200X", 1, 23552, 'C', "", "", -1),
};

/* Attribute suffixes (reference 3.3); MEALL must not read as ME + "ALL". */
static struct type_case suffixes[] = {
	MIG("DC-1-24CNOME", "DC-1-24CNOME", "DC", 1, 24576, 'C', "NOME", "", -1),
	MIG("DC-1-24CMEALL", "DC-1-24CMEALL", "DC", 1, 24576, 'C', "MEALL", "", -1),
	MIG("DC-2-48QGFX", "DC-2-48QGFX", "DC", 2, 49152, 'Q', "GFX", "", -1),
	MIG("NVIDIA A30-1-6CMEALL", "A30-1-6CMEALL", "A30", 1, 6144, 'C', "MEALL", "", -1),
	MIG("NVIDIA A30-1-6CNOME", "A30-1-6CNOME", "A30", 1, 6144, 'C', "NOME", "", -1),
	/* suffixes belong to MIG-backed names only */
	BAD("NVIDIA A30-6CME", "A30-6CME"),
	BAD("NVIDIA A30-1-6CMEAL", "A30-1-6CMEAL"),
	BAD("NVIDIA A30-1-6Cme", "A30-1-6Cme"),
};

static struct type_case garbage[] = {
	BAD("", ""),
	BAD("NVIDIA", "NVIDIA"),
	BAD("A30-", "A30-"),
	BAD("NVIDIA A30-", "A30-"),
	/* board tokens are upper case and digits */
	BAD("a30-6C", "a30-6C"),
	BAD("NVIDIA a30-1-6C", "a30-1-6C"),
	BAD("A30-1-6X", "A30-1-6X"),
	/* G is a single digit 1-9 */
	BAD("A30-10-6C", "A30-10-6C"),
	BAD("A30-0-6C", "A30-0-6C"),
	BAD("A30-1-6CFOO", "A30-1-6CFOO"),
	/* GB is 0 or has no leading zero */
	BAD("A30-06C", "A30-06C"),
	BAD("A30-1-06C", "A30-1-06C"),
	BAD("A30-C", "A30-C"),
	BAD("A30--6C", "A30--6C"),
	BAD("A30-6C-", "A30-6C-"),
	BAD("-6C", "-6C"),
	BAD("A30-6", "A30-6"),
	BAD("GRID P40-1B4", "P40-1B4"),
};

static void check_type(void **state)
{
	const struct type_case *c = *state;
	struct vgpu_type_info t;
	int r;

	/* out is filled either way: poison it first */
	memset(&t, 0x5a, sizeof(t));
	r = vgpu_type_parse(c->name, &t);
	assert_int_equal(r, c->ret);
	assert_string_equal(t.profile, c->profile);
	assert_string_equal(t.board, c->board);
	assert_int_equal(t.backing, c->backing);
	assert_int_equal(t.slices, c->slices);
	assert_int_equal(t.fb_mib, c->fb_mib);
	assert_int_equal(t.series, c->series);
	assert_string_equal(t.attribute, c->attribute);
	assert_string_equal(t.gi_profile, c->gi_profile);
	assert_int_equal(t.gi_profile_id, c->gi_profile_id);
}

/*
 * A short name that does not fit profile[64]: -ENAMETOOLONG, and out must
 * still say "unknown" (the host reader classifies into calloc()ed storage,
 * where a left-over gi_profile_id of 0 would name a real GI profile).
 */
static void test_short_name_too_long(void **state)
{
	char name[128];
	struct vgpu_type_info t;

	(void)state;
	memset(name, 'A', 70);
	strcpy(name + 70, "-1-6C");
	memset(&t, 0, sizeof(t));
	assert_int_equal(vgpu_type_parse(name, &t), -ENAMETOOLONG);
	assert_int_equal(t.backing, VGPU_BACKING_UNKNOWN);
	assert_int_equal(t.gi_profile_id, -1);
	assert_int_equal(t.slices, 0);
}

/* A board token that does not fit board[40]; the short name still fits. */
static void test_board_too_long(void **state)
{
	char name[64];
	struct vgpu_type_info t;

	(void)state;
	memset(name, 'B', 45);
	strcpy(name + 45, "-4Q");
	memset(&t, 0x5a, sizeof(t));
	assert_int_equal(vgpu_type_parse(name, &t), -ENAMETOOLONG);
	assert_string_equal(t.profile, name);
	assert_int_equal(t.backing, VGPU_BACKING_UNKNOWN);
	assert_int_equal(t.gi_profile_id, -1);
}

static void test_backing_iface_str(void **state)
{
	(void)state;
	assert_string_equal(vgpu_backing_str(VGPU_BACKING_UNKNOWN), "unknown");
	assert_string_equal(vgpu_backing_str(VGPU_BACKING_TIME_SLICED), "time-sliced");
	assert_string_equal(vgpu_backing_str(VGPU_BACKING_MIG), "mig");
	assert_string_equal(vgpu_iface_str(VGPU_IFACE_NONE), "none");
	assert_string_equal(vgpu_iface_str(VGPU_IFACE_MDEV), "mdev");
	assert_string_equal(vgpu_iface_str(VGPU_IFACE_VENDOR_VFIO), "vendor-vfio");
}

static const struct vgpu_mig_profile *find_profile(const struct vgpu_mig_board *b,
						   const char *name)
{
	for (size_t i = 0; i < b->n_profiles; i++)
		if (strcmp(b->profiles[i].name, name) == 0)
			return &b->profiles[i];
	return NULL;
}

static void test_mig_board_find_tokens(void **state)
{
	static const struct {
		const char *token, *model;
		unsigned mem_slices;
	} known[] = {
		{ "A30", "A30 24GB", 4 },
		{ "A100", "A100 40GB", 8 },
		{ "A100X", "A100 40GB", 8 },
		{ "A100D", "A100 80GB", 8 },
		{ "A100DX", "A100 80GB", 8 },
		{ "H100", "H100 80GB", 8 },
		{ "H100XM", "H100 80GB", 8 },
		{ "H100L", "H100 NVL 94GB", 8 },
		{ "H100XL", "H100 NVL 94GB", 8 },
		{ "H200", "H200 141GB", 8 },
		{ "H200X", "H200 141GB", 8 },
	};
	static const char *const unknown[] = {
		"", "A10", "A3", "A300", "a30", "H100X", "H100 H100XM", "A100 ", " A100",
		"DC", "B200X", "L40S", "RTX6000-Ada",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		const struct vgpu_mig_board *b = vgpu_mig_board_find(known[i].token);

		if (!b)
			fail_msg("no MIG table for board token '%s'", known[i].token);
		assert_string_equal(b->model, known[i].model);
		assert_int_equal(b->mem_slices, known[i].mem_slices);
	}
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++)
		if (vgpu_mig_board_find(unknown[i]))
			fail_msg("board token '%s' should have no MIG table", unknown[i]);
	/* tokens of one row share the entry */
	assert_ptr_equal(vgpu_mig_board_find("A100"), vgpu_mig_board_find("A100X"));
	assert_ptr_equal(vgpu_mig_board_find("H200"), vgpu_mig_board_find("H200X"));
	assert_ptr_not_equal(vgpu_mig_board_find("A100"), vgpu_mig_board_find("A100D"));
}

/* Reference 4.2: the A30 table, whole. */
static void test_mig_table_a30(void **state)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_find("A30");
	static const struct vgpu_mig_profile want[] = {
		{ "1g.6gb", 14, 1, 4, "0,1,2,3" },
		{ "1g.6gb+me", 21, 1, 1, "0,1,2,3" },
		{ "2g.12gb", 5, 2, 2, "0,2" },
		{ "2g.12gb+me", 6, 2, 1, "0,2" },
		{ "4g.24gb", 0, 4, 1, "0" },
	};

	(void)state;
	assert_non_null(b);
	assert_int_equal(b->n_profiles, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct vgpu_mig_profile *p = find_profile(b, want[i].name);

		if (!p)
			fail_msg("A30 has no profile '%s'", want[i].name);
		assert_int_equal(p->id, want[i].id);
		assert_int_equal(p->slices, want[i].slices);
		assert_int_equal(p->max, want[i].max);
		assert_string_equal(p->placements, want[i].placements);
	}
}

/* Reference 4.2: the shared geometry of the 8-memory-slice parts, per board. */
static void test_mig_tables_8slice(void **state)
{
	static const struct {
		const char *token;
		const char *names[7]; /* slots: 1g, 1g+me, 1g large, 2g, 3g, 4g, 7g */
	} boards[] = {
		{ "A100", { "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
			    "7g.40gb" } },
		{ "A100D", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
			     "7g.80gb" } },
		{ "H100", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
			    "7g.80gb" } },
		{ "H100L", { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
			     "7g.94gb" } },
		{ "H200", { "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb",
			    "7g.141gb" } },
	};
	static const struct {
		int id;
		unsigned slices, max;
		const char *placements;
	} slot[7] = {
		{ 19, 1, 7, "0,1,2,3,4,5,6" }, /* 1g small */
		{ 20, 1, 1, "0,1,2,3,4,5,6" }, /* 1g small +me */
		{ 15, 2, 4, "0,2,4,6" },       /* 1g large */
		{ 14, 2, 3, "0,2,4" },         /* 2g */
		{ 9, 4, 2, "0,4" },            /* 3g */
		{ 5, 4, 1, "0" },              /* 4g */
		{ 0, 8, 1, "0" },              /* 7g */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(boards); i++) {
		const struct vgpu_mig_board *b = vgpu_mig_board_find(boards[i].token);

		assert_non_null(b);
		assert_int_equal(b->n_profiles, 7);
		for (size_t k = 0; k < 7; k++) {
			const struct vgpu_mig_profile *p = find_profile(b, boards[i].names[k]);

			if (!p)
				fail_msg("%s has no profile '%s'", boards[i].token,
					 boards[i].names[k]);
			assert_int_equal(p->id, slot[k].id);
			assert_int_equal(p->slices, slot[k].slices);
			assert_int_equal(p->max, slot[k].max);
			assert_string_equal(p->placements, slot[k].placements);
		}
	}
}

static void test_model_for_device(void **state)
{
	(void)state;
	assert_string_equal(vgpu_model_for_device(0x20b7), "NVIDIA A30");
	assert_string_equal(vgpu_model_for_device(0x26b9), "NVIDIA L40S");
	assert_string_equal(vgpu_model_for_device(0x1eb8), "Tesla T4");
	assert_string_equal(vgpu_model_for_device(0x2331), "NVIDIA H100 PCIe");
	assert_string_equal(vgpu_model_for_device(0x20b5), "NVIDIA A100 80GB PCIe");
	assert_string_equal(vgpu_model_for_device(0x13f2), "Tesla M60");
	assert_string_equal(vgpu_model_for_device(0x2321), "NVIDIA H100 NVL");
	assert_null(vgpu_model_for_device(0x0000));
	assert_null(vgpu_model_for_device(0xffff));
	/* the vendor id is not a device id */
	assert_null(vgpu_model_for_device(0x10de));
}

static const struct CMUnitTest fixed_tests[] = {
	cmocka_unit_test(test_short_name_too_long),
	cmocka_unit_test(test_board_too_long),
	cmocka_unit_test(test_backing_iface_str),
	cmocka_unit_test(test_mig_board_find_tokens),
	cmocka_unit_test(test_mig_table_a30),
	cmocka_unit_test(test_mig_tables_8slice),
	cmocka_unit_test(test_model_for_device),
};

#define N_CASES                                                                                    \
	(ARRAY_SIZE(worked_examples) + ARRAY_SIZE(more_names) + ARRAY_SIZE(suffixes) +             \
	 ARRAY_SIZE(garbage))

static size_t add_cases(struct CMUnitTest *t, size_t n, struct type_case *c, size_t nc,
			const char *prefix, char names[][96])
{
	for (size_t i = 0; i < nc; i++, n++) {
		snprintf(names[n], sizeof(names[n]), "%s \"%s\"", prefix, c[i].name);
		t[n] = (struct CMUnitTest){ .name = names[n],
					    .test_func = check_type,
					    .initial_state = &c[i] };
	}
	return n;
}

int main(void)
{
	static char names[N_CASES][96];
	struct CMUnitTest tests[N_CASES + ARRAY_SIZE(fixed_tests)];
	size_t n = 0;

	n = add_cases(tests, n, worked_examples, ARRAY_SIZE(worked_examples), "table 3.5", names);
	n = add_cases(tests, n, more_names, ARRAY_SIZE(more_names), "name", names);
	n = add_cases(tests, n, suffixes, ARRAY_SIZE(suffixes), "suffix", names);
	n = add_cases(tests, n, garbage, ARRAY_SIZE(garbage), "garbage", names);
	for (size_t i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[n++] = fixed_tests[i];
	return cmocka_run_group_tests_name("vgputype", tests, NULL, NULL);
}
