// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vGPU type-name grammar and MIG profile tables.  Pure functions, no I/O.
 *
 * Grammar from NVIDIA/vgpu-device-manager pkg/types/vgpu_type.go; the short
 * name is the last space-separated token of the driver's name (go-nvlib
 * parseMdevTypeName):
 *   time-sliced: GPU(-letters)*-GB{A,B,C,Q}
 *   MIG-backed:  GPU-G-GB{A,B,C,Q}[ME|NOME|MEALL|GFX]
 * Time-sliced is tried first; a numeric middle field forces the MIG reading.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgputype.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *vgpu_backing_str(enum vgpu_backing b)
{
	switch (b) {
	case VGPU_BACKING_TIME_SLICED:
		return "time-sliced";
	case VGPU_BACKING_MIG:
		return "mig";
	default:
		return "unknown";
	}
}

const char *vgpu_iface_str(enum vgpu_iface i)
{
	switch (i) {
	case VGPU_IFACE_MDEV:
		return "mdev";
	case VGPU_IFACE_VENDOR_VFIO:
		return "vendor-vfio";
	default:
		return "none";
	}
}

/* ---- MIG tables (MIG UG r580; reference vgpu-host.md section 4.2) ------- */

static const struct vgpu_mig_profile mig_a30[] = {
	{ "1g.6gb", 14, 1, 4, "0,1,2,3" }, { "1g.6gb+me", 21, 1, 1, "0,1,2,3" },
	{ "2g.12gb", 5, 2, 2, "0,2" },	   { "2g.12gb+me", 6, 2, 1, "0,2" },
	{ "4g.24gb", 0, 4, 1, "0" },
};

/* The 8-memory-slice parts share IDs, slice counts and placements. */
#define MIG8(s1, s1l, g2, g3, g4, g7)                                                              \
	{ s1, 19, 1, 7, "0,1,2,3,4,5,6" }, { s1 "+me", 20, 1, 1, "0,1,2,3,4,5,6" },                \
		{ s1l, 15, 2, 4, "0,2,4,6" }, { g2, 14, 2, 3, "0,2,4" }, { g3, 9, 4, 2, "0,4" },   \
		{ g4, 5, 4, 1, "0" },                                                              \
	{                                                                                          \
		g7, 0, 8, 1, "0"                                                                   \
	}

static const struct vgpu_mig_profile mig_a100_40[] = {
	MIG8("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
};
static const struct vgpu_mig_profile mig_80[] = {
	MIG8("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
};
static const struct vgpu_mig_profile mig_h100_nvl[] = {
	MIG8("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"),
};
static const struct vgpu_mig_profile mig_h200[] = {
	MIG8("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
};

static const struct vgpu_mig_board mig_boards[] = {
	{ "A30", "A30 24GB", 4, mig_a30, ARRAY_SIZE(mig_a30) },
	{ "A100 A100X", "A100 40GB", 8, mig_a100_40, ARRAY_SIZE(mig_a100_40) },
	{ "A100D A100DX", "A100 80GB", 8, mig_80, ARRAY_SIZE(mig_80) },
	{ "H100 H100XM", "H100 80GB", 8, mig_80, ARRAY_SIZE(mig_80) },
	{ "H100L H100XL", "H100 NVL 94GB", 8, mig_h100_nvl, ARRAY_SIZE(mig_h100_nvl) },
	{ "H200 H200X", "H200 141GB", 8, mig_h200, ARRAY_SIZE(mig_h200) },
};

const struct vgpu_mig_board *vgpu_mig_board_find(const char *token)
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

/* ---- PCI device IDs (pci.ids), for display only ----------------------- */

static const struct {
	uint16_t id;
	const char *model;
} models[] = {
	{ 0x13bd, "Tesla M10" },
	{ 0x13f2, "Tesla M60" },
	{ 0x1b38, "Tesla P40" },
	{ 0x1db4, "Tesla V100-PCIE-16GB" },
	{ 0x1db6, "Tesla V100-PCIE-32GB" },
	{ 0x1eb8, "Tesla T4" },
	{ 0x20b0, "NVIDIA A100-SXM4-40GB" },
	{ 0x20b2, "NVIDIA A100-SXM4-80GB" },
	{ 0x20b5, "NVIDIA A100 80GB PCIe" },
	{ 0x20b7, "NVIDIA A30" },
	{ 0x20f1, "NVIDIA A100-PCIE-40GB" },
	{ 0x2230, "NVIDIA RTX A6000" },
	{ 0x2235, "NVIDIA A40" },
	{ 0x2236, "NVIDIA A10" },
	{ 0x25b6, "NVIDIA A16" },
	{ 0x26b1, "NVIDIA RTX 6000 Ada Generation" },
	{ 0x26b5, "NVIDIA L40" },
	{ 0x26b9, "NVIDIA L40S" },
	{ 0x27b8, "NVIDIA L4" },
	{ 0x2321, "NVIDIA H100 NVL" },
	{ 0x2330, "NVIDIA H100 80GB HBM3" },
	{ 0x2331, "NVIDIA H100 PCIe" },
	{ 0x2335, "NVIDIA H200" },
	{ 0x2339, "NVIDIA H100 SXM5 94GB" },
	{ 0x233b, "NVIDIA H200 NVL" },
	{ 0x2901, "NVIDIA B200" },
	{ 0x2bb5, "NVIDIA RTX PRO 6000 Blackwell Server Edition" },
};

const char *vgpu_model_for_device(uint16_t device_id)
{
	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		if (models[i].id == device_id)
			return models[i].model;
	return NULL;
}

/* ---- grammar ------------------------------------------------------------ */

static bool is_board_token(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool is_letters(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalpha((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Parse "GB S [ATTR]" at s (length n): GB = 0|[1-9][0-9]*, S one of A B C Q.
 * Returns the number of characters consumed, 0 on mismatch.
 */
static size_t parse_fb_series(const char *s, size_t n, unsigned *gb, char *series)
{
	size_t i = 0;
	unsigned long v = 0;

	if (!n || !isdigit((unsigned char)s[0]))
		return 0;
	if (s[0] == '0') {
		i = 1;
	} else {
		while (i < n && isdigit((unsigned char)s[i])) {
			v = v * 10 + (unsigned)(s[i] - '0');
			if (v > 100000)
				return 0;
			i++;
		}
	}
	if (i >= n || !strchr("ABCQ", s[i]))
		return 0;
	*gb = (unsigned)v;
	*series = s[i];
	return i + 1;
}

static const struct {
	const char *attr, *gi_suffix;
} attrs[] = {
	/* MEALL before ME: the longer suffix must win. */
	{ "MEALL", "+me.all" },
	{ "NOME", "-me" },
	{ "ME", "+me" },
	{ "GFX", "+gfx" },
};

static void fill_gi_profile(struct vgpu_type_info *t, unsigned gb)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_find(t->board);
	const char *suffix = "";
	char name[sizeof(t->gi_profile)];

	t->gi_profile[0] = '\0';
	t->gi_profile_id = -1;
	if (!b)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
		if (strcmp(t->attribute, attrs[i].attr) == 0)
			suffix = attrs[i].gi_suffix;
	if (snprintf(name, sizeof(name), "%ug.%ugb%s", t->slices, gb, suffix) >= (int)sizeof(name))
		return;
	for (size_t i = 0; i < b->n_profiles; i++) {
		if (strcmp(b->profiles[i].name, name) == 0) {
			memcpy(t->gi_profile, name, sizeof(t->gi_profile) - 1);
			t->gi_profile[sizeof(t->gi_profile) - 1] = '\0';
			t->gi_profile_id = b->profiles[i].id;
			return;
		}
	}
}

int vgpu_type_parse(const char *name, struct vgpu_type_info *out)
{
	struct vgpu_type_info t;
	const char *sp, *tok[8];
	size_t len[8], k = 0;
	const char *p;
	unsigned gb = 0;
	char series = 0;
	size_t used;

	memset(&t, 0, sizeof(t));
	t.gi_profile_id = -1;
	sp = strrchr(name, ' ');
	p = sp ? sp + 1 : name;
	*out = t; /* callers see backing unknown and no GI profile on every error path */
	if (strlen(p) >= sizeof(t.profile))
		return -ENAMETOOLONG;
	strcpy(t.profile, p);
	*out = t;

	/* Split the short name on '-'. */
	while (k < ARRAY_SIZE(tok)) {
		size_t l = strcspn(p, "-");

		tok[k] = p;
		len[k++] = l;
		if (!p[l])
			break;
		p += l + 1;
	}
	if (k < 2 || k == ARRAY_SIZE(tok) || !is_board_token(tok[0], len[0]))
		return -EINVAL;

	/* time-sliced: board, letter-only segments, then GB+series exactly */
	bool ts = true;

	for (size_t i = 1; i + 1 < k; i++)
		if (!is_letters(tok[i], len[i]))
			ts = false;
	used = parse_fb_series(tok[k - 1], len[k - 1], &gb, &series);
	if (ts && used && used == len[k - 1]) {
		size_t bl = (size_t)(tok[k - 2] + len[k - 2] - tok[0]);

		if (bl >= sizeof(t.board))
			return -ENAMETOOLONG;
		memcpy(t.board, tok[0], bl);
		t.board[bl] = '\0';
		t.backing = VGPU_BACKING_TIME_SLICED;
		t.fb_mib = gb ? gb * 1024 : 512;
		t.series = series;
		*out = t;
		return 0;
	}

	/* MIG-backed: board-G-GB S [ATTR] */
	if (k != 3 || len[1] != 1 || tok[1][0] < '1' || tok[1][0] > '9' || !used)
		return -EINVAL;
	{
		const char *rest = tok[2] + used;
		size_t rl = len[2] - used;
		bool ok = rl == 0;

		for (size_t i = 0; !ok && i < ARRAY_SIZE(attrs); i++)
			if (strlen(attrs[i].attr) == rl && strncmp(rest, attrs[i].attr, rl) == 0) {
				memcpy(t.attribute, rest, rl);
				t.attribute[rl] = '\0';
				ok = true;
			}
		if (!ok)
			return -EINVAL;
	}
	if (len[0] >= sizeof(t.board))
		return -ENAMETOOLONG;
	memcpy(t.board, tok[0], len[0]);
	t.board[len[0]] = '\0';
	t.backing = VGPU_BACKING_MIG;
	t.slices = (unsigned)(tok[1][0] - '0');
	t.fb_mib = gb ? gb * 1024 : 512;
	t.series = series;
	fill_gi_profile(&t, gb);
	*out = t;
	return 0;
}
