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

#include "mig-tables.h"
#include "vgputype.h"

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
	{                                                                                          \
		n, 0, prof, brd, VGPU_BACKING_TIME_SLICED, 0, fb, s, "", "", -1                    \
	}
#define MIG(n, prof, brd, sl, fb, s, attr, gi, id)                                                 \
	{                                                                                          \
		n, 0, prof, brd, VGPU_BACKING_MIG, sl, fb, s, attr, gi, id                         \
	}
/* Outside the grammar: -EINVAL, backing unknown, only the short name kept. */
#define BAD(n, prof)                                                                               \
	{                                                                                          \
		n, -EINVAL, prof, "", VGPU_BACKING_UNKNOWN, 0, 0, 0, "", "", -1                    \
	}

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
	/*
	 * MIG-backed, time-sliced inside a +gfx GI: 12 GB is the vGPU's share of
	 * a 1g.24gb+gfx GI (reference vgpu-type-names.md 4, vgpu-host.md 4.3)
	 */
	MIG("NVIDIA RTX Pro 6000 Blackwell DC-1-12C", "DC-1-12C", "DC", 1, 12288, 'C', "",
	    "1g.24gb+gfx", 47),
	/* legacy display-head suffix: was rejected, is a time-sliced B type */
	TS("GRID M10-2B4", "M10-2B4", "M10", 2048, 'B'),
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
	MIG("NVIDIA H100-1-10CME", "H100-1-10CME", "H100", 1, 10240, 'C', "ME", "1g.10gb+me", 20),
	MIG("NVIDIA H100XM-4-40C", "H100XM-4-40C", "H100XM", 4, 40960, 'C', "", "4g.40gb", 5),
	MIG("NVIDIA H100L-7-94C", "H100L-7-94C", "H100L", 7, 96256, 'C', "", "7g.94gb", 0),
	MIG("NVIDIA H200-1-18C", "H200-1-18C", "H200", 1, 18432, 'C', "", "1g.18gb", 19),
	MIG("NVIDIA A30-2-12CME", "A30-2-12CME", "A30", 2, 12288, 'C', "ME", "2g.12gb+me", 6),
	MIG("NVIDIA A30-4-24C", "A30-4-24C", "A30", 4, 24576, 'C', "", "4g.24gb", 0),
	/* no such GI on the board: MIG-backed, but no profile */
	MIG("NVIDIA A30-3-18C", "A30-3-18C", "A30", 3, 18432, 'C', "", "", -1),
	/* reference 4.3: B200 -1-23C -> 1g.23gb (was a board without a table) */
	MIG("NVIDIA B200X-1-23C", "B200X-1-23C", "B200X", 1, 23552, 'C', "", "1g.23gb", 19),
	/* a board without a MIG table */
	MIG("NVIDIA L40S-1-12C", "L40S-1-12C", "L40S", 1, 12288, 'C', "", "", -1),
};

/* Attribute suffixes (reference 3.3); MEALL must not read as ME + "ALL". */
static struct type_case suffixes[] = {
	/* on DC nothing says which GI an attribute name runs on: none */
	MIG("DC-1-24CNOME", "DC-1-24CNOME", "DC", 1, 24576, 'C', "NOME", "", -1),
	MIG("DC-1-24CMEALL", "DC-1-24CMEALL", "DC", 1, 24576, 'C', "MEALL", "", -1),
	/* GFX marks a vgpu-device-manager config key, not a driver type (section 5) */
	BAD("DC-2-48QGFX", "DC-2-48QGFX"),
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
	/* only B carries the display-head suffix, and only "4" */
	BAD("GRID T4-2Q4", "T4-2Q4"),
	BAD("GRID T4-2B2", "T4-2B2"),
	BAD("GRID T4-2B44", "T4-2B44"),
	BAD("GRID T4-1-2B4", "T4-1-2B4"),
	BAD("GRID T4-B4", "T4-B4"),
	/* trailing space: empty short name */
	BAD("NVIDIA ", ""),
};

/* Reference vgpu-type-names.md, every example name, class by class. */
static struct type_case ref_class1[] = {
	TS("NVIDIA A30-6C", "A30-6C", "A30", 6144, 'C'),
	TS("NVIDIA L40S-48Q", "L40S-48Q", "L40S", 49152, 'Q'),
	TS("NVIDIA A16-4Q", "A16-4Q", "A16", 4096, 'Q'),
	TS("NVIDIA RTX6000-Ada-4Q", "RTX6000-Ada-4Q", "RTX6000-Ada", 4096, 'Q'),
	TS("GRID M60-0Q", "M60-0Q", "M60", 512, 'Q'),
	TS("NVIDIA H200X-141C", "H200X-141C", "H200X", 144384, 'C'),
};

/* Class 2: <board>-<GB>B4 reads as <board>-<GB>B. */
static struct type_case ref_class2[] = {
	TS("GRID M10-1B4", "M10-1B4", "M10", 1024, 'B'),
	TS("GRID M10-2B4", "M10-2B4", "M10", 2048, 'B'),
	TS("GRID M60-1B4", "M60-1B4", "M60", 1024, 'B'),
	TS("GRID M60-2B4", "M60-2B4", "M60", 2048, 'B'),
	TS("GRID P4-1B4", "P4-1B4", "P4", 1024, 'B'),
	TS("GRID P4-2B4", "P4-2B4", "P4", 2048, 'B'),
	TS("GRID P40-1B4", "P40-1B4", "P40", 1024, 'B'),
	TS("GRID P40-2B4", "P40-2B4", "P40", 2048, 'B'),
	TS("GRID T4-1B4", "T4-1B4", "T4", 1024, 'B'),
	TS("GRID T4-2B4", "T4-2B4", "T4", 2048, 'B'),
	TS("GRID V100D-1B4", "V100D-1B4", "V100D", 1024, 'B'),
	TS("GRID V100D-2B4", "V100D-2B4", "V100D", 2048, 'B'),
	/* same decoding as the plain B name */
	TS("GRID T4-2B", "T4-2B", "T4", 2048, 'B'),
	TS("GRID M60-0B4", "M60-0B4", "M60", 512, 'B'),
};

/* Class 3: Kepler, no dash; board K1/K2, framebuffer unknown (0). */
static struct type_case ref_class3[] = {
	TS("GRID K100", "K100", "K1", 0, 0),
	TS("GRID K120Q", "K120Q", "K1", 0, 'Q'),
	TS("GRID K140Q", "K140Q", "K1", 0, 'Q'),
	TS("GRID K200", "K200", "K2", 0, 0),
	TS("GRID K220Q", "K220Q", "K2", 0, 'Q'),
	TS("GRID K240Q", "K240Q", "K2", 0, 'Q'),
	TS("GRID K260Q", "K260Q", "K2", 0, 'Q'),
	TS("K280Q", "K280Q", "K2", 0, 'Q'),
	BAD("GRID K300", "K300"),
	BAD("GRID K10", "K10"),
	BAD("GRID K1000", "K1000"),
	BAD("GRID K120A", "K120A"),
	BAD("GRID k100", "k100"),
	BAD("GRID K121Q", "K121Q"),
	BAD("GRID K140QQ", "K140QQ"),
	BAD("GRID K1", "K1"),
	BAD("GRID K140Q-1", "K140Q-1"),
};

/* Class 4 examples, and each new board's table. */
static struct type_case ref_class4[] = {
	MIG("NVIDIA A30-1-6C", "A30-1-6C", "A30", 1, 6144, 'C', "", "1g.6gb", 14),
	MIG("NVIDIA A30-1-6CME", "A30-1-6CME", "A30", 1, 6144, 'C', "ME", "1g.6gb+me", 21),
	MIG("GRID A100X-2-10C", "A100X-2-10C", "A100X", 2, 10240, 'C', "", "2g.10gb", 14),
	MIG("NVIDIA H100L-1-24C", "H100L-1-24C", "H100L", 1, 24576, 'C', "", "1g.24gb", 15),
	MIG("NVIDIA RTX Pro 6000 Blackwell DC-1-12C", "DC-1-12C", "DC", 1, 12288, 'C', "",
	    "1g.24gb+gfx", 47),
	MIG("NVIDIA A800-1-5C", "A800-1-5C", "A800", 1, 5120, 'C', "", "1g.5gb", 19),
	MIG("NVIDIA A800-1-10C", "A800-1-10C", "A800", 1, 10240, 'C', "", "1g.10gb", 15),
	MIG("NVIDIA A800-7-40C", "A800-7-40C", "A800", 7, 40960, 'C', "", "7g.40gb", 0),
	MIG("NVIDIA A800D-1-10C", "A800D-1-10C", "A800D", 1, 10240, 'C', "", "1g.10gb", 19),
	MIG("NVIDIA A800DX-1-20C", "A800DX-1-20C", "A800DX", 1, 20480, 'C', "", "1g.20gb", 15),
	MIG("NVIDIA H800-3-40C", "H800-3-40C", "H800", 3, 40960, 'C', "", "3g.40gb", 9),
	MIG("NVIDIA H800XM-1-10CME", "H800XM-1-10CME", "H800XM", 1, 10240, 'C', "ME", "1g.10gb+me",
	    20),
	MIG("NVIDIA H800L-1-12C", "H800L-1-12C", "H800L", 1, 12288, 'C', "", "1g.12gb", 19),
	MIG("NVIDIA H800L-4-47C", "H800L-4-47C", "H800L", 4, 48128, 'C', "", "4g.47gb", 5),
	MIG("NVIDIA H20-1-12C", "H20-1-12C", "H20", 1, 12288, 'C', "", "1g.12gb", 19),
	MIG("NVIDIA H20-7-96C", "H20-7-96C", "H20", 7, 98304, 'C', "", "7g.96gb", 0),
	MIG("NVIDIA GH200-1-24C", "GH200-1-24C", "GH200", 1, 24576, 'C', "", "1g.24gb", 15),
	MIG("NVIDIA GH200-2-24C", "GH200-2-24C", "GH200", 2, 24576, 'C', "", "2g.24gb", 14),
	MIG("NVIDIA H20X-1-18C", "H20X-1-18C", "H20X", 1, 18432, 'C', "", "1g.18gb", 19),
	MIG("NVIDIA H20X-1-35C", "H20X-1-35C", "H20X", 1, 35840, 'C', "", "1g.35gb", 15),
	MIG("NVIDIA GH200L-1-36C", "GH200L-1-36C", "GH200L", 1, 36864, 'C', "", "1g.36gb", 15),
	MIG("NVIDIA GH200L-3-72C", "GH200L-3-72C", "GH200L", 3, 73728, 'C', "", "3g.72gb", 9),
	MIG("NVIDIA B200X-1-45C", "B200X-1-45C", "B200X", 1, 46080, 'C', "", "1g.45gb", 15),
	MIG("NVIDIA B200X-7-180C", "B200X-7-180C", "B200X", 7, 184320, 'C', "", "7g.180gb", 0),
	MIG("NVIDIA GB200-1-24CME", "GB200-1-24CME", "GB200", 1, 24576, 'C', "ME", "1g.24gb+me",
	    20),
	MIG("NVIDIA GB200-4-95C", "GB200-4-95C", "GB200", 4, 97280, 'C', "", "4g.95gb", 5),
	MIG("NVIDIA B300X-1-34C", "B300X-1-34C", "B300X", 1, 34816, 'C', "", "1g.34gb", 19),
	MIG("NVIDIA B300X-1-67C", "B300X-1-67C", "B300X", 1, 68608, 'C', "", "1g.67gb", 15),
	MIG("NVIDIA B300X-7-269C", "B300X-7-269C", "B300X", 7, 275456, 'C', "", "7g.269gb", 0),
};

/* Memory decides between same-slice profiles; no match, no profile. */
static struct type_case mig_memory[] = {
	MIG("A100D-1-10C", "A100D-1-10C", "A100D", 1, 10240, 'C', "", "1g.10gb", 19),
	MIG("A100D-1-20C", "A100D-1-20C", "A100D", 1, 20480, 'C', "", "1g.20gb", 15),
	MIG("H100-1-20C", "H100-1-20C", "H100", 1, 20480, 'C', "", "1g.20gb", 15),
	MIG("A100D-1-15C", "A100D-1-15C", "A100D", 1, 15360, 'C', "", "", -1),
	MIG("A100D-2-10C", "A100D-2-10C", "A100D", 2, 10240, 'C', "", "", -1),
	MIG("A100-1-20C", "A100-1-20C", "A100", 1, 20480, 'C', "", "", -1),
	MIG("H100-1-20CME", "H100-1-20CME", "H100", 1, 20480, 'C', "ME", "", -1),
	MIG("H100-4-47C", "H100-4-47C", "H100", 4, 48128, 'C', "", "", -1),
	MIG("H100-7-40C", "H100-7-40C", "H100", 7, 40960, 'C', "", "", -1),
};

/* DC: the +gfx GI with the name's slices whose memory holds the share. */
static struct type_case dc_names[] = {
	MIG("DC-1-24C", "DC-1-24C", "DC", 1, 24576, 'C', "", "1g.24gb+gfx", 47),
	MIG("DC-1-8C", "DC-1-8C", "DC", 1, 8192, 'C', "", "1g.24gb+gfx", 47),
	MIG("DC-1-2Q", "DC-1-2Q", "DC", 1, 2048, 'Q', "", "1g.24gb+gfx", 47),
	MIG("DC-1-0B", "DC-1-0B", "DC", 1, 512, 'B', "", "1g.24gb+gfx", 47),
	MIG("DC-2-48Q", "DC-2-48Q", "DC", 2, 49152, 'Q', "", "2g.48gb+gfx", 35),
	MIG("DC-2-24C", "DC-2-24C", "DC", 2, 24576, 'C', "", "2g.48gb+gfx", 35),
	MIG("DC-4-96C", "DC-4-96C", "DC", 4, 98304, 'C', "", "4g.96gb+gfx", 32),
	MIG("DC-4-24A", "DC-4-24A", "DC", 4, 24576, 'A', "", "4g.96gb+gfx", 32),
	/* more than the GI holds, or no GI with that many slices */
	MIG("DC-1-48C", "DC-1-48C", "DC", 1, 49152, 'C', "", "", -1),
	MIG("DC-3-24C", "DC-3-24C", "DC", 3, 24576, 'C', "", "", -1),
	MIG("DC-1-24CME", "DC-1-24CME", "DC", 1, 24576, 'C', "ME", "", -1),
};

/* Class 5: not type names. */
static struct type_case ref_class5[] = {
	BAD("DC-1-24QGFX", "DC-1-24QGFX"),
	BAD("RTX6000-Ada-2QGFX", "RTX6000-Ada-2QGFX"),
	BAD("NVIDIA A30-1-6CGFX", "A30-1-6CGFX"),
	BAD("NVIDIA RTX Pro 6000 Blackwell DC-1-24QGFX", "DC-1-24QGFX"),
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
 * A short name that does not fit VGPU_PROFILE_MAX: -ENAMETOOLONG, out says
 * "unknown" (the host reader classifies into calloc()ed storage, where a
 * left-over gi_profile_id of 0 would name a real GI profile), and profile
 * keeps a NUL-terminated prefix to show.
 */
static void test_short_name_too_long(void **state)
{
	static const char *const prefixes[] = { "", "NVIDIA ", "NVIDIA RTX Pro 6000 " };
	char name[400], tok[301];
	struct vgpu_type_info t;

	(void)state;
	memset(tok, 'A', 295);
	strcpy(tok + 295, "-1-6C"); /* 300 characters, grammatical but for its length */
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		snprintf(name, sizeof(name), "%s%s", prefixes[i], tok);
		memset(&t, 0x5a, sizeof(t));
		assert_int_equal(vgpu_type_parse(name, &t), -ENAMETOOLONG);
		assert_int_equal(t.backing, VGPU_BACKING_UNKNOWN);
		assert_int_equal(t.gi_profile_id, -1);
		assert_int_equal(t.slices, 0);
		assert_int_equal(t.fb_mib, 0);
		assert_string_equal(t.board, "");
		assert_string_equal(t.gi_profile, "");
		assert_int_equal(strlen(t.profile), VGPU_PROFILE_MAX - 1);
		assert_memory_equal(t.profile, tok, VGPU_PROFILE_MAX - 1);
	}
	/* one character over */
	memset(name, 'B', VGPU_PROFILE_MAX - 3);
	strcpy(name + VGPU_PROFILE_MAX - 3, "-4Q");
	assert_int_equal(vgpu_type_parse(name, &t), -ENAMETOOLONG);
	assert_int_equal(strlen(t.profile), VGPU_PROFILE_MAX - 1);
}

/* The longest short name that fits, with a board token nearly as long. */
static void test_long_name_fits(void **state)
{
	char name[VGPU_PROFILE_MAX];
	struct vgpu_type_info t;

	(void)state;
	memset(name, 'B', VGPU_PROFILE_MAX - 4);
	strcpy(name + VGPU_PROFILE_MAX - 4, "-4Q");
	assert_int_equal(strlen(name), VGPU_PROFILE_MAX - 1);
	memset(&t, 0x5a, sizeof(t));
	assert_int_equal(vgpu_type_parse(name, &t), 0);
	assert_string_equal(t.profile, name);
	assert_int_equal(strlen(t.board), VGPU_PROFILE_MAX - 4);
	assert_int_equal(t.backing, VGPU_BACKING_TIME_SLICED);
	assert_int_equal(t.fb_mib, 4096);
	assert_int_equal(t.gi_profile_id, -1);

	/* a long MIG-backed name: unknown board, no GI profile */
	memset(name, 'C', VGPU_PROFILE_MAX - 7);
	strcpy(name + VGPU_PROFILE_MAX - 7, "-1-6C");
	assert_int_equal(vgpu_type_parse(name, &t), 0);
	assert_int_equal(t.backing, VGPU_BACKING_MIG);
	assert_int_equal(t.gi_profile_id, -1);

	/* long garbage: -EINVAL, the whole short name kept */
	memset(name, 'x', VGPU_PROFILE_MAX - 1);
	name[VGPU_PROFILE_MAX - 1] = '\0';
	assert_int_equal(vgpu_type_parse(name, &t), -EINVAL);
	assert_string_equal(t.profile, name);
	/* many dashes */
	for (size_t i = 0; i < VGPU_PROFILE_MAX - 1; i++)
		name[i] = i % 2 ? '-' : 'A';
	assert_int_equal(vgpu_type_parse(name, &t), -EINVAL);
	assert_int_equal(t.backing, VGPU_BACKING_UNKNOWN);
}

static void test_description_framebuffer(void **state)
{
	static const struct {
		const char *desc;
		long mib;
	} cases[] = {
		{ "num_heads=4, frl_config=45, framebuffer=1024M, max_resolution=5120x2880, "
		  "max_instance=8",
		  1024 },
		{ "num_heads=4, frl_config=60, framebuffer=2048M, max_resolution=4096x2160, "
		  "max_instance=4",
		  2048 },
		{ "framebuffer=512M", 512 },
		{ "framebuffer=1G", 1024 },
		{ "num_heads=1,framebuffer=4G,max_instance=2", 4096 },
		{ "num_heads=1\tframebuffer=8192M\n", 8192 },
		{ "framebuffer=1048576M", 1048576 },
		/* the first whole key decides */
		{ "xframebuffer=1M, framebuffer=2048M", 2048 },
		{ "framebuffer=abc, framebuffer=2048M", -1 },
		{ "", -1 },
		{ "num_heads=4, max_instance=8", -1 },
		{ "xframebuffer=1024M", -1 },
		{ "max_framebuffer=1024M", -1 },
		{ "framebuffer 1024M", -1 },
		{ "framebuffer=", -1 },
		{ "framebuffer=M", -1 },
		{ "framebuffer=1024", -1 },
		{ "framebuffer=1024K", -1 },
		{ "framebuffer=1024MB", -1 },
		{ "framebuffer=1024m", -1 },
		{ "framebuffer=0M", -1 },
		{ "framebuffer=01024M", -1 },
		{ "framebuffer=-1024M", -1 },
		{ "framebuffer= 1024M", -1 },
		{ "framebuffer=1048577M", -1 },
		{ "framebuffer=99999999999999999999999M", -1 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (vgpu_description_framebuffer_mib(cases[i].desc) != cases[i].mib)
			fail_msg("\"%s\": got %ld, want %ld", cases[i].desc,
				 vgpu_description_framebuffer_mib(cases[i].desc), cases[i].mib);
	assert_int_equal(vgpu_description_framebuffer_mib(NULL), -1);
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

static const struct vgpu_mig_profile *find_profile(const struct vgpu_mig_board *b, const char *name)
{
	for (size_t i = 0; i < b->n_profiles; i++)
		if (strcmp(b->profiles[i].name, name) == 0)
			return &b->profiles[i];
	return NULL;
}

/* Every board token of the reference, with its table's model and geometry. */
static const struct {
	const char *token, *model;
	unsigned mem_slices, compute_slices;
} known_boards[] = {
	{ "A30", "A30 24GB", 4, 4 },
	{ "A100", "A100 40GB", 8, 7 },
	{ "A100X", "A100 40GB", 8, 7 },
	{ "A100D", "A100 80GB", 8, 7 },
	{ "A100DX", "A100 80GB", 8, 7 },
	{ "A800", "A800 40GB", 8, 7 },
	{ "A800D", "A800 80GB", 8, 7 },
	{ "A800DX", "A800 80GB", 8, 7 },
	{ "H100", "H100 80GB", 8, 7 },
	{ "H100XM", "H100 80GB", 8, 7 },
	{ "H800", "H800 80GB", 8, 7 },
	{ "H800XM", "H800 80GB", 8, 7 },
	{ "H100L", "H100 NVL 94GB", 8, 7 },
	{ "H100XL", "H100 NVL 94GB", 8, 7 },
	{ "H800L", "H800 NVL 94GB", 8, 7 },
	{ "H20", "H20/GH200 96GB", 8, 7 },
	{ "GH200", "H20/GH200 96GB", 8, 7 },
	{ "H200", "H200 141GB", 8, 7 },
	{ "H200X", "H200 141GB", 8, 7 },
	{ "H20X", "H20 141GB", 8, 7 },
	{ "GH200L", "GH200 144GB", 8, 7 },
	{ "B200X", "B200 180GB", 8, 7 },
	{ "GB200", "GB200 189GB", 8, 7 },
	{ "B300X", "B300 269GB", 8, 7 },
	{ "DC", "RTX PRO 6000 Blackwell 96GB", 4, 4 },
};

static void test_mig_board_find_tokens(void **state)
{
	/* neither a token nor a model string of a MIG board ("a30" is the model A30) */
	static const char *const unknown[] = {
		"", "A10", "A3", "A300", "H100X", "L40S", "RTX6000-Ada", "dc", "DCX", "K1",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known_boards); i++) {
		const struct vgpu_mig_board *b = vgpu_mig_board_lookup(known_boards[i].token);

		if (!b)
			fail_msg("no MIG table for board token '%s'", known_boards[i].token);
		assert_string_equal(b->model, known_boards[i].model);
		assert_int_equal(b->mem_slices, known_boards[i].mem_slices);
		assert_int_equal(b->compute_slices, known_boards[i].compute_slices);
		/* only DC runs its vGPU types on a GI variant */
		if (strcmp(known_boards[i].token, "DC") == 0)
			assert_string_equal(b->vgpu_gi_variant, "+gfx");
		else
			assert_null(b->vgpu_gi_variant);
	}
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++)
		if (vgpu_mig_board_lookup(unknown[i]))
			fail_msg("board token '%s' should have no MIG table", unknown[i]);
	/* tokens of one row share the entry */
	assert_ptr_equal(vgpu_mig_board_lookup("A100"), vgpu_mig_board_lookup("A100X"));
	assert_ptr_equal(vgpu_mig_board_lookup("H200"), vgpu_mig_board_lookup("H200X"));
	assert_ptr_equal(vgpu_mig_board_lookup("H20"), vgpu_mig_board_lookup("GH200"));
	assert_ptr_not_equal(vgpu_mig_board_lookup("A100"), vgpu_mig_board_lookup("A100D"));
	assert_ptr_not_equal(vgpu_mig_board_lookup("H20"), vgpu_mig_board_lookup("H20X"));
	assert_ptr_not_equal(vgpu_mig_board_lookup("GH200"), vgpu_mig_board_lookup("GH200L"));
}

/* Memory-slice mask of a GI of size memory slices starting at start. */
static unsigned span(unsigned start, unsigned size)
{
	return ((1u << size) - 1) << start;
}

/* Brute force: most GIs of one profile that fit side by side. */
static unsigned max_disjoint(const struct vgpu_mig_profile *p)
{
	unsigned best = 0;

	for (unsigned set = 0; set < 1u << 16; set++) {
		unsigned used = 0, n = 0;
		bool ok = (set & ~(unsigned)p->placements) == 0;

		for (unsigned s = 0; ok && s < 16; s++) {
			if (!(set & 1u << s))
				continue;
			ok = (used & span(s, p->size)) == 0;
			used |= span(s, p->size);
			n++;
		}
		if (ok && n > best)
			best = n;
	}
	return best;
}

/*
 * Every table: placements and sizes fit the board's memory slices; the name
 * agrees with the compute slices; IDs and names are unique; and a profile's
 * maximum is the number of its GIs that fit side by side, except where a
 * media-engine profile (+me, +me.all) is limited to fewer by its engines.
 */
static void test_mig_tables_consistent(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known_boards); i++) {
		const char *tok = known_boards[i].token;
		const struct vgpu_mig_board *b = vgpu_mig_board_lookup(tok);

		assert_non_null(b);
		assert_true(b->n_profiles > 0);
		assert_true(b->mem_slices > 0 && b->mem_slices <= 16);
		for (size_t k = 0; k < b->n_profiles; k++) {
			const struct vgpu_mig_profile *p = &b->profiles[k];
			unsigned g = 0, gb = 0, fit;
			int n = -1;

			if (sscanf(p->name, "%ug.%ugb%n", &g, &gb, &n) != 2 || n < 0)
				fail_msg("%s: bad profile name '%s'", tok, p->name);
			assert_int_equal(g, p->compute);
			assert_true(p->compute >= 1 && p->compute <= b->compute_slices);
			assert_true(p->size >= 1 && p->size <= b->mem_slices);
			assert_true(p->size >= p->compute || b->mem_slices == 8);
			if (!p->placements)
				fail_msg("%s %s: no placement", tok, p->name);
			for (unsigned s = 0; s < 16; s++)
				if ((p->placements & 1u << s) && s + p->size > b->mem_slices)
					fail_msg("%s %s: placement %u:%u beyond %u memory slices",
						 tok, p->name, s, p->size, b->mem_slices);
			fit = max_disjoint(p);
			if (strstr(p->name, "+me")) {
				if (p->max < 1 || p->max > fit)
					fail_msg("%s %s: max %u, %u fit", tok, p->name, p->max,
						 fit);
			} else if (p->max != fit) {
				fail_msg("%s %s: max %u, but %u fit side by side", tok, p->name,
					 p->max, fit);
			}
			for (size_t j = 0; j < k; j++) {
				if (b->profiles[j].id == p->id)
					fail_msg("%s: ID %d twice", tok, p->id);
				if (strcmp(b->profiles[j].name, p->name) == 0)
					fail_msg("%s: '%s' twice", tok, p->name);
			}
		}
	}
}

/* Reference 4.2: the A30 table, whole. */
static void test_mig_table_a30(void **state)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup("A30");
	static const struct vgpu_mig_profile want[] = {
		{ "1g.6gb", 14, 1, 1, 4, 0x0f }, { "1g.6gb+me", 21, 1, 1, 1, 0x0f },
		{ "2g.12gb", 5, 2, 2, 2, 0x05 }, { "2g.12gb+me", 6, 2, 2, 1, 0x05 },
		{ "4g.24gb", 0, 4, 4, 1, 0x01 },
	};

	(void)state;
	assert_non_null(b);
	assert_int_equal(b->n_profiles, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct vgpu_mig_profile *p = find_profile(b, want[i].name);

		if (!p)
			fail_msg("A30 has no profile '%s'", want[i].name);
		assert_int_equal(p->id, want[i].id);
		assert_int_equal(p->compute, want[i].compute);
		assert_int_equal(p->size, want[i].size);
		assert_int_equal(p->max, want[i].max);
		assert_int_equal(p->placements, want[i].placements);
	}
}

/* RTX PRO 6000 Blackwell (DC): MIG UG names and maxima, -lgip IDs. */
static void test_mig_table_dc(void **state)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup("DC");
	static const struct vgpu_mig_profile want[] = {
		{ "1g.24gb", 14, 1, 1, 4, 0x0f },     { "1g.24gb+me", 21, 1, 1, 1, 0x0f },
		{ "1g.24gb+gfx", 47, 1, 1, 4, 0x0f }, { "1g.24gb+me.all", 65, 1, 1, 1, 0x0f },
		{ "1g.24gb-me", 67, 1, 1, 4, 0x0f },  { "2g.48gb", 5, 2, 2, 2, 0x05 },
		{ "2g.48gb+gfx", 35, 2, 2, 2, 0x05 }, { "2g.48gb+me.all", 64, 2, 2, 1, 0x05 },
		{ "2g.48gb-me", 66, 2, 2, 2, 0x05 },  { "4g.96gb", 0, 4, 4, 1, 0x01 },
		{ "4g.96gb+gfx", 32, 4, 4, 1, 0x01 },
	};

	(void)state;
	assert_non_null(b);
	assert_int_equal(b->n_profiles, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct vgpu_mig_profile *p = find_profile(b, want[i].name);

		if (!p)
			fail_msg("DC has no profile '%s'", want[i].name);
		assert_int_equal(p->id, want[i].id);
		assert_int_equal(p->compute, want[i].compute);
		assert_int_equal(p->size, want[i].size);
		assert_int_equal(p->max, want[i].max);
		assert_int_equal(p->placements, want[i].placements);
	}
}

/* Reference 4.2: the shared geometry of the 8-memory-slice parts, per board. */
static void test_mig_tables_8slice(void **state)
{
	static const struct {
		const char *token;
		const char *names[7]; /* slots: 1g, 1g+me, 1g large, 2g, 3g, 4g, 7g */
	} boards[] = {
		{ "A100",
		  { "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
		    "7g.40gb" } },
		{ "A800",
		  { "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
		    "7g.40gb" } },
		{ "A100D",
		  { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
		    "7g.80gb" } },
		{ "A800D",
		  { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
		    "7g.80gb" } },
		{ "H100",
		  { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
		    "7g.80gb" } },
		{ "H800",
		  { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
		    "7g.80gb" } },
		{ "H100L",
		  { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
		    "7g.94gb" } },
		{ "H800L",
		  { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
		    "7g.94gb" } },
		{ "H20",
		  { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb",
		    "7g.96gb" } },
		{ "H200",
		  { "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb",
		    "7g.141gb" } },
		{ "H20X",
		  { "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb",
		    "7g.141gb" } },
		{ "GH200L",
		  { "1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb",
		    "7g.144gb" } },
		{ "B200X",
		  { "1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb",
		    "7g.180gb" } },
		{ "GB200",
		  { "1g.24gb", "1g.24gb+me", "1g.47gb", "2g.47gb", "3g.95gb", "4g.95gb",
		    "7g.189gb" } },
		{ "B300X",
		  { "1g.34gb", "1g.34gb+me", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb",
		    "7g.269gb" } },
	};
	/* id, compute slices, memory slices, max, placements */
	static const struct vgpu_mig_profile slot[7] = {
		{ "1g small", 19, 1, 1, 7, 0x7f }, { "1g small +me", 20, 1, 1, 1, 0x7f },
		{ "1g large", 15, 1, 2, 4, 0x55 }, { "2g", 14, 2, 2, 3, 0x15 },
		{ "3g", 9, 3, 4, 2, 0x11 },	   { "4g", 5, 4, 4, 1, 0x01 },
		{ "7g", 0, 7, 8, 1, 0x01 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(boards); i++) {
		const struct vgpu_mig_board *b = vgpu_mig_board_lookup(boards[i].token);

		assert_non_null(b);
		assert_int_equal(b->n_profiles, 7);
		for (size_t k = 0; k < 7; k++) {
			const struct vgpu_mig_profile *p = find_profile(b, boards[i].names[k]);

			if (!p)
				fail_msg("%s has no profile '%s'", boards[i].token,
					 boards[i].names[k]);
			assert_int_equal(p->id, slot[k].id);
			assert_int_equal(p->compute, slot[k].compute);
			assert_int_equal(p->size, slot[k].size);
			assert_int_equal(p->max, slot[k].max);
			assert_int_equal(p->placements, slot[k].placements);
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
	assert_string_equal(vgpu_model_for_device(0x20f3), "NVIDIA A800-SXM4-80GB");
	assert_string_equal(vgpu_model_for_device(0x20f5), "NVIDIA A800 80GB PCIe");
	assert_string_equal(vgpu_model_for_device(0x20f6), "NVIDIA A800 40GB PCIe");
	assert_string_equal(vgpu_model_for_device(0x2322), "NVIDIA H800 PCIe");
	assert_string_equal(vgpu_model_for_device(0x2324), "NVIDIA H800");
	assert_string_equal(vgpu_model_for_device(0x2348), "NVIDIA GH200 144G HBM3e");
	assert_null(vgpu_model_for_device(0x0000));
	assert_null(vgpu_model_for_device(0xffff));
	/* the vendor id is not a device id */
	assert_null(vgpu_model_for_device(0x10de));
}

/* The one rule for "does this spelling name that type": every prefix, any case, the ID. */
static void test_type_spec_names(void **state)
{
	static const char *const yes[] = { "A30-6C",	  "a30-6c", "NVIDIA A30-6C", "GRID A30-6C",
					   "grid a30-6c", "684",    "nvidia-684",    " 684 " };
	static const char *const no[] = { "A30-4C", "GRID A30-4C", "685",  "nvidia-685", "nvidia-",
					  "",	    "0",	   "GRID", "A30-6C 684", "NVIDIA" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (!vgpu_type_spec_names(yes[i], 684, "A30-6C", "NVIDIA A30-6C"))
			fail_msg("'%s' does not name type 684 A30-6C", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (vgpu_type_spec_names(no[i], 684, "A30-6C", "NVIDIA A30-6C"))
			fail_msg("'%s' names type 684 A30-6C", no[i]);
	/* what our metadata and records hold: the ID and the short name, no full name */
	assert_true(vgpu_type_spec_names("GRID A30-6C", 684, "A30-6C", NULL));
	assert_true(vgpu_type_spec_names("NVIDIA A30-6C", 684, "A30-6C", NULL));
	/* a name that could not be read: the ID only */
	assert_true(vgpu_type_spec_names("nvidia-684", 684, NULL, NULL));
	assert_false(vgpu_type_spec_names("A30-6C", 684, NULL, NULL));
}

static const struct CMUnitTest fixed_tests[] = {
	cmocka_unit_test(test_short_name_too_long),
	cmocka_unit_test(test_long_name_fits),
	cmocka_unit_test(test_description_framebuffer),
	cmocka_unit_test(test_backing_iface_str),
	cmocka_unit_test(test_mig_board_find_tokens),
	cmocka_unit_test(test_mig_tables_consistent),
	cmocka_unit_test(test_mig_table_a30),
	cmocka_unit_test(test_mig_table_dc),
	cmocka_unit_test(test_mig_tables_8slice),
	cmocka_unit_test(test_model_for_device),
	cmocka_unit_test(test_type_spec_names),
};

static const struct {
	struct type_case *c;
	size_t n;
	const char *prefix;
} case_sets[] = {
	{ worked_examples, ARRAY_SIZE(worked_examples), "table 3.5" },
	{ more_names, ARRAY_SIZE(more_names), "name" },
	{ suffixes, ARRAY_SIZE(suffixes), "suffix" },
	{ garbage, ARRAY_SIZE(garbage), "garbage" },
	{ ref_class1, ARRAY_SIZE(ref_class1), "class 1" },
	{ ref_class2, ARRAY_SIZE(ref_class2), "class 2 B4" },
	{ ref_class3, ARRAY_SIZE(ref_class3), "class 3 Kepler" },
	{ ref_class4, ARRAY_SIZE(ref_class4), "class 4 MIG" },
	{ mig_memory, ARRAY_SIZE(mig_memory), "MIG memory" },
	{ dc_names, ARRAY_SIZE(dc_names), "DC" },
	{ ref_class5, ARRAY_SIZE(ref_class5), "class 5 not a type" },
};

#define N_CASES                                                                                    \
	(ARRAY_SIZE(worked_examples) + ARRAY_SIZE(more_names) + ARRAY_SIZE(suffixes) +             \
	 ARRAY_SIZE(garbage) + ARRAY_SIZE(ref_class1) + ARRAY_SIZE(ref_class2) +                   \
	 ARRAY_SIZE(ref_class3) + ARRAY_SIZE(ref_class4) + ARRAY_SIZE(mig_memory) +                \
	 ARRAY_SIZE(dc_names) + ARRAY_SIZE(ref_class5))

int main(void)
{
	static char names[N_CASES][96];
	struct CMUnitTest tests[N_CASES + ARRAY_SIZE(fixed_tests)];
	size_t n = 0;

	for (size_t s = 0; s < ARRAY_SIZE(case_sets); s++) {
		for (size_t i = 0; i < case_sets[s].n; i++, n++) {
			snprintf(names[n], sizeof(names[n]), "%s \"%s\"", case_sets[s].prefix,
				 case_sets[s].c[i].name);
			tests[n] = (struct CMUnitTest){ .name = names[n],
							.test_func = check_type,
							.initial_state = &case_sets[s].c[i] };
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[n++] = fixed_tests[i];
	return cmocka_run_group_tests_name("vgputype", tests, NULL, NULL);
}
