// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The MIG tables of every board vGPU types name, and the one lookup of a
 * board: by type-name token, model string or PCI device ID (pure).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "mig-tables.h"
#include "util.h"

/* ---- MIG tables (NVIDIA MIG User Guide r580, "Supported MIG Profiles") -- */

/*
 * Rows: name, GI profile ID, compute slices, memory slices (size), max
 * instances, placements (bit i: start at memory slice i).
 */
static const struct vgpu_mig_profile mig_a30[] = {
	{ "1g.6gb", 14, 1, 1, 4, 0x0f }, { "1g.6gb+me", 21, 1, 1, 1, 0x0f },
	{ "2g.12gb", 5, 2, 2, 2, 0x05 }, { "2g.12gb+me", 6, 2, 2, 1, 0x05 },
	{ "4g.24gb", 0, 4, 4, 1, 0x01 },
};

/*
 * The 8-memory-slice parts (A100, A800, H100, H800, H20, GH200, H200, B200,
 * GB200, B300) share IDs, slice counts and placements: MIG UG "Supported MIG
 * Profiles" and -lgip/-lgipp samples (the IDs for H20, GH200, B200, GB200
 * and B300 follow gpu-operator/mig-parted -lgip samples or the shared
 * geometry).
 *   1g small {0..6}:1, 1g large {0,2,4,6}:2, 2g {0,2,4}:2, 3g {0,4}:4,
 *   4g {0}:4, 7g {0}:8.
 */
#define MIG8(s1, s1l, g2, g3, g4, g7)                                                              \
	{ s1, 19, 1, 1, 7, 0x7f }, { s1 "+me", 20, 1, 1, 1, 0x7f }, { s1l, 15, 1, 2, 4, 0x55 },    \
		{ g2, 14, 2, 2, 3, 0x15 }, { g3, 9, 3, 4, 2, 0x11 }, { g4, 5, 4, 4, 1, 0x01 },     \
	{                                                                                          \
		g7, 0, 7, 8, 1, 0x01                                                               \
	}

static const struct vgpu_mig_profile mig_40[] = {
	MIG8("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
};
static const struct vgpu_mig_profile mig_80[] = {
	MIG8("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
};
static const struct vgpu_mig_profile mig_94[] = {
	MIG8("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"),
};
static const struct vgpu_mig_profile mig_96[] = {
	MIG8("1g.12gb", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"),
};
static const struct vgpu_mig_profile mig_141[] = {
	MIG8("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
};
static const struct vgpu_mig_profile mig_144[] = {
	MIG8("1g.18gb", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb"),
};
static const struct vgpu_mig_profile mig_180[] = {
	MIG8("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"),
};
static const struct vgpu_mig_profile mig_189[] = {
	MIG8("1g.24gb", "1g.47gb", "2g.47gb", "3g.95gb", "4g.95gb", "7g.189gb"),
};
static const struct vgpu_mig_profile mig_269[] = {
	MIG8("1g.34gb", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb", "7g.269gb"),
};

/*
 * RTX PRO 6000 Blackwell Server Edition, 4 memory and 4 compute slices.
 * Names and maxima: MIG UG r580 "RTX PRO 6000 Blackwell MIG profiles"; IDs:
 * nvidia-smi mig -lgip samples (14 21 47 65 67 5 35 64 66 0 32).  Placements
 * follow the A30 layout (1g {0,1,2,3}:1, 2g {0,2}:2, 4g {0}:4; unverified).
 */
static const struct vgpu_mig_profile mig_dc[] = {
	{ "1g.24gb", 14, 1, 1, 4, 0x0f },     { "1g.24gb+me", 21, 1, 1, 1, 0x0f },
	{ "1g.24gb+gfx", 47, 1, 1, 4, 0x0f }, { "1g.24gb+me.all", 65, 1, 1, 1, 0x0f },
	{ "1g.24gb-me", 67, 1, 1, 4, 0x0f },  { "2g.48gb", 5, 2, 2, 2, 0x05 },
	{ "2g.48gb+gfx", 35, 2, 2, 2, 0x05 }, { "2g.48gb+me.all", 64, 2, 2, 1, 0x05 },
	{ "2g.48gb-me", 66, 2, 2, 2, 0x05 },  { "4g.96gb", 0, 4, 4, 1, 0x01 },
	{ "4g.96gb+gfx", 32, 4, 4, 1, 0x01 },
};

#define BOARD8(tok, model, tbl)                                                                    \
	{                                                                                          \
		tok, model, 8, 7, NULL, tbl, ARRAY_SIZE(tbl)                                       \
	}

/*
 * Board tokens: the <board> of NVIDIA's vGPU type names ("A100D" of
 * "A100D-1-10C"), as NVIDIA Virtual GPU Software User Guide, "Virtual GPU
 * Types for Supported GPUs" lists them.
 */
static const struct vgpu_mig_board mig_boards[] = {
	{ "A30", "A30 24GB", 4, 4, NULL, mig_a30, ARRAY_SIZE(mig_a30) },
	BOARD8("A100 A100X", "A100 40GB", mig_40),
	BOARD8("A100D A100DX", "A100 80GB", mig_80),
	BOARD8("A800", "A800 40GB", mig_40),
	BOARD8("A800D A800DX", "A800 80GB", mig_80),
	BOARD8("H100 H100XM", "H100 80GB", mig_80),
	BOARD8("H800 H800XM", "H800 80GB", mig_80),
	BOARD8("H100L H100XL", "H100 NVL 94GB", mig_94),
	BOARD8("H800L", "H800 NVL 94GB", mig_94),
	BOARD8("H20 GH200", "H20/GH200 96GB", mig_96),
	BOARD8("H200 H200X", "H200 141GB", mig_141),
	BOARD8("H20X", "H20 141GB", mig_141),
	BOARD8("GH200L", "GH200 144GB", mig_144),
	BOARD8("B200X", "B200 180GB", mig_180),
	BOARD8("GB200", "GB200 189GB", mig_189),
	BOARD8("B300X", "B300 269GB", mig_269),
	/*
	 * vGPU types run on +gfx GIs, names without suffix (vgpu-device-manager
	 * pkg/vgpu/config.go; cubecos saw 24576 MiB types on GI IDs 47/35/32).
	 */
	{ "DC", "RTX PRO 6000 Blackwell 96GB", 4, 4, "+gfx", mig_dc, ARRAY_SIZE(mig_dc) },
};

const struct vgpu_mig_board *vgpu_mig_board_by_token(const char *token)
{
	size_t tl = strlen(token);

	for (size_t i = 0; i < ARRAY_SIZE(mig_boards); i++) {
		const char *p = mig_boards[i].tokens;

		while (*p) {
			size_t l = strcspn(p, " ");

			if (l == tl && strncmp(p, token, l) == 0)
				return &mig_boards[i];
			p += l;
			p += *p == ' ';
		}
	}
	return NULL;
}

/*
 * PF device IDs of MIG boards: pciutils pci.ids (2023.04: 20b0 20b1 20b2 20b5
 * 20b7 20f1 20f3 20f5 20f6 2322 2324 2330 2331 2339) and NVIDIA's Linux
 * driver README, Appendix A "Supported NVIDIA GPU Products", for the newer
 * ones (2321 H100 NVL, 2335 H200 SXM, 233b H200 NVL, 2901 B200, 2bb5 RTX PRO
 * 6000 Blackwell Server Edition).
 * 20b3 (A100 SXM 64GB) has no table and is left out.
 */
static const struct {
	uint16_t id;
	const char *token;
} mig_devices[] = {
	{ 0x20b0, "A100X" },  { 0x20b1, "A100" },  { 0x20b2, "A100DX" }, { 0x20b5, "A100D" },
	{ 0x20b7, "A30" },    { 0x20f1, "A100" },  { 0x20f3, "A800DX" }, { 0x20f5, "A800D" },
	{ 0x20f6, "A800" },   { 0x2321, "H100L" }, { 0x2322, "H800" },	 { 0x2324, "H800XM" },
	{ 0x2330, "H100XM" }, { 0x2331, "H100" },  { 0x2335, "H200X" },	 { 0x2339, "H100XL" },
	{ 0x233b, "H200" },   { 0x2901, "B200X" }, { 0x2bb5, "DC" },
};

/*
 * Model strings ("NVIDIA A100-PCIE-40GB", "NVIDIA H100 NVL") to tokens: the
 * first rule whose words all appear wins, so specific rules come first.
 */
static const struct {
	const char *words;
	const char *token;
} model_rules[] = {
	{ "RTX PRO 6000 BLACKWELL", "DC" },
	{ "GH200 144G", "GH200L" },
	{ "GH200", "GH200" },
	{ "GB200", "GB200" },
	{ "B300", "B300X" },
	{ "B200", "B200X" },
	{ "H20 141GB", "H20X" },
	{ "H20", "H20" },
	{ "H200", "H200" },
	{ "H100 NVL", "H100L" },
	{ "H100 94GB", "H100XL" },
	{ "H100", "H100" },
	{ "H800 NVL", "H800L" },
	{ "H800", "H800" },
	{ "A800 80GB", "A800D" },
	{ "A800", "A800" },
	{ "A100 80GB", "A100D" },
	{ "A100", "A100" },
	{ "A30", "A30" },
};

static const char model_seps[] = " -_,()/";

/* Is @w (length @n) a word of @s, case-insensitively? */
static bool has_word(const char *s, const char *w, size_t n)
{
	while (*s) {
		size_t l;

		s += strspn(s, model_seps);
		l = strcspn(s, model_seps);
		if (l == n && strncasecmp(s, w, n) == 0)
			return true;
		s += l;
	}
	return false;
}

static bool has_all_words(const char *s, const char *words)
{
	while (*words) {
		size_t l = strcspn(words, " ");

		if (!has_word(s, words, l))
			return false;
		words += l;
		words += *words == ' ';
	}
	return true;
}

/*
 * A memory size in @model ("64GB") that the board's model string does not
 * carry means another part of the family (A100 SXM 64GB, H100 SXM5 64GB).
 */
static bool sizes_agree(const char *model, const struct vgpu_mig_board *b)
{
	const char *s = model;

	while (*s) {
		size_t l, d;

		s += strspn(s, model_seps);
		l = strcspn(s, model_seps);
		d = strspn(s, "0123456789");
		if (d && d + 2 == l && strncasecmp(s + d, "GB", 2) == 0 &&
		    !has_word(b->model, s, l))
			return false;
		s += l;
	}
	return true;
}

const struct vgpu_mig_board *vgpu_mig_board_lookup(const char *name)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_by_token(name);

	if (b)
		return b;
	for (size_t i = 0; i < ARRAY_SIZE(model_rules); i++) {
		if (!has_all_words(name, model_rules[i].words))
			continue;
		b = vgpu_mig_board_by_token(model_rules[i].token);
		return b && sizes_agree(name, b) ? b : NULL;
	}
	return NULL;
}

const struct vgpu_mig_board *vgpu_mig_board_by_device(uint16_t device_id)
{
	for (size_t i = 0; i < ARRAY_SIZE(mig_devices); i++)
		if (mig_devices[i].id == device_id)
			return vgpu_mig_board_by_token(mig_devices[i].token);
	return NULL;
}
