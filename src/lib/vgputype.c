// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vGPU type-name grammar and MIG profile tables.  Pure functions, no I/O.
 *
 * Grammar from NVIDIA/vgpu-device-manager pkg/types/vgpu_type.go and the
 * classes of real names (NVIDIA Virtual GPU Software User Guide, "Virtual GPU
 * Types for Supported GPUs"); the short name is the last space-separated token
 * of the driver's name (go-nvlib parseMdevTypeName):
 *   time-sliced: GPU(-letters)*-GB{A,B,C,Q}, legacy GPU(-letters)*-GB"B4"
 *   Kepler:      K{1,2}<digit>0[Q] (no framebuffer in the name)
 *   MIG-backed:  GPU-G-GB{A,B,C,Q}[ME|NOME|MEALL]
 * Time-sliced is tried first; a numeric middle field forces the MIG reading.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mig-tables.h"
#include "util.h"
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
	{ 0x20f3, "NVIDIA A800-SXM4-80GB" },
	{ 0x20f5, "NVIDIA A800 80GB PCIe" },
	{ 0x20f6, "NVIDIA A800 40GB PCIe" },
	{ 0x2230, "NVIDIA RTX A6000" },
	{ 0x2235, "NVIDIA A40" },
	{ 0x2236, "NVIDIA A10" },
	{ 0x25b6, "NVIDIA A16" },
	{ 0x26b1, "NVIDIA RTX 6000 Ada Generation" },
	{ 0x26b5, "NVIDIA L40" },
	{ 0x26b9, "NVIDIA L40S" },
	{ 0x27b8, "NVIDIA L4" },
	{ 0x2321, "NVIDIA H100 NVL" },
	{ 0x2322, "NVIDIA H800 PCIe" },
	{ 0x2324, "NVIDIA H800" },
	{ 0x2330, "NVIDIA H100 80GB HBM3" },
	{ 0x2331, "NVIDIA H100 PCIe" },
	{ 0x2335, "NVIDIA H200" },
	{ 0x2339, "NVIDIA H100 SXM5 94GB" },
	{ 0x233b, "NVIDIA H200 NVL" },
	{ 0x2348, "NVIDIA GH200 144G HBM3e" },
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

/*
 * Attribute suffixes of MIG-backed names.  "GFX" is not among them: it marks
 * a vgpu-device-manager config key ("DC-1-24QGFX"), never a driver type
 * (NVIDIA/vgpu-device-manager strips it before looking the type up:
 * stripVGPUConfigSuffix()).
 */
static const struct {
	const char *attr, *gi_suffix;
} attrs[] = {
	/* MEALL before ME: the longer suffix must win. */
	{ "MEALL", "+me.all" },
	{ "NOME", "-me" },
	{ "ME", "+me" },
};

/* Split a GI profile name "<g>g.<m>gb<suffix>"; false if it is not one. */
static bool gi_name_split(const char *name, unsigned *g, unsigned *gb, const char **suffix)
{
	int n = -1;

	if (sscanf(name, "%ug.%ugb%n", g, gb, &n) != 2 || n < 0)
		return false;
	*suffix = name + n;
	return true;
}

/*
 * MIG-backed type -> GI profile.  Ordinary boards: the profile with the
 * name's compute slices, the name's GB as its memory (1g.10gb and 1g.20gb on
 * 80 GB parts differ only there) and the attribute's suffix.  Boards with a
 * vgpu_gi_variant (DC): the variant profile with the name's compute slices
 * whose memory holds the name's GB, the vGPU's share of the GI ("DC-1-12C"
 * -> 1g.24gb+gfx); attribute names get none there, as nothing says which GI
 * they run on.
 */
static void fill_gi_profile(struct vgpu_type_info *t, unsigned gb)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup(t->board);
	const char *want = "";

	t->gi_profile[0] = '\0';
	t->gi_profile_id = -1;
	if (!b)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
		if (strcmp(t->attribute, attrs[i].attr) == 0)
			want = attrs[i].gi_suffix;
	if (b->vgpu_gi_variant) {
		if (t->attribute[0])
			return;
		want = b->vgpu_gi_variant;
	}
	for (size_t i = 0; i < b->n_profiles; i++) {
		const struct vgpu_mig_profile *p = &b->profiles[i];
		unsigned pg, pgb;
		const char *suffix;

		if (!gi_name_split(p->name, &pg, &pgb, &suffix) || strcmp(suffix, want) != 0 ||
		    p->compute != t->slices)
			continue;
		if (b->vgpu_gi_variant ? gb > pgb : gb != pgb)
			continue;
		if (strlen(p->name) >= sizeof(t->gi_profile))
			return;
		strcpy(t->gi_profile, p->name);
		t->gi_profile_id = p->id;
		return;
	}
}

/*
 * Kepler names without a dash: K<board><n>0[Q], board 1 or 2 (GRID K1, K2):
 * "K100", "K140Q", "K260Q".  The framebuffer is not in the name.
 */
static bool parse_kepler(const char *s, size_t n, struct vgpu_type_info *t)
{
	if (n < 4 || n > 5 || s[0] != 'K' || (s[1] != '1' && s[1] != '2') ||
	    !isdigit((unsigned char)s[2]) || s[3] != '0' || (n == 5 && s[4] != 'Q'))
		return false;
	t->board[0] = 'K';
	t->board[1] = s[1];
	t->board[2] = '\0';
	t->backing = VGPU_BACKING_TIME_SLICED;
	t->fb_mib = 0;
	t->series = n == 5 ? 'Q' : 0;
	return true;
}

/* The short name split on '-'. */
struct tokens {
	const char *tok[8];
	size_t len[8], k;
};

static bool split_tokens(const char *p, struct tokens *tk)
{
	tk->k = 0;
	while (tk->k < ARRAY_SIZE(tk->tok)) {
		size_t l = strcspn(p, "-");

		tk->tok[tk->k] = p;
		tk->len[tk->k++] = l;
		if (!p[l])
			break;
		p += l + 1;
	}
	return tk->k >= 2 && tk->k < ARRAY_SIZE(tk->tok) && is_board_token(tk->tok[0], tk->len[0]);
}

/*
 * Time-sliced: board, letter-only segments, then GB+series exactly, or the
 * legacy GB "B4" (B-series with 4 display heads: "T4-2B4").
 * Return: 1 matched, 0 not this class, -ENAMETOOLONG.
 */
static int parse_time_sliced(const struct tokens *tk, struct vgpu_type_info *t)
{
	const char *last = tk->tok[tk->k - 1];
	size_t ll = tk->len[tk->k - 1], used, bl;
	unsigned gb = 0;
	char series = 0;

	for (size_t i = 1; i + 1 < tk->k; i++)
		if (!is_letters(tk->tok[i], tk->len[i]))
			return 0;
	used = parse_fb_series(last, ll, &gb, &series);
	if (!used || !(used == ll || (series == 'B' && ll == used + 1 && last[used] == '4')))
		return 0;
	bl = (size_t)(tk->tok[tk->k - 2] + tk->len[tk->k - 2] - tk->tok[0]);
	if (bl >= sizeof(t->board))
		return -ENAMETOOLONG;
	memcpy(t->board, tk->tok[0], bl);
	t->board[bl] = '\0';
	t->backing = VGPU_BACKING_TIME_SLICED;
	t->fb_mib = gb ? gb * 1024 : 512;
	t->series = series;
	return 1;
}

/* MIG-backed: board-G-GB S [ATTR].  Return: 1 matched, 0 not, -ENAMETOOLONG. */
static int parse_mig(const struct tokens *tk, struct vgpu_type_info *t)
{
	unsigned gb = 0;
	char series = 0;
	size_t used, rl;
	const char *rest;
	bool ok;

	if (tk->k != 3 || tk->len[1] != 1 || tk->tok[1][0] < '1' || tk->tok[1][0] > '9')
		return 0;
	used = parse_fb_series(tk->tok[2], tk->len[2], &gb, &series);
	if (!used)
		return 0;
	rest = tk->tok[2] + used;
	rl = tk->len[2] - used;
	ok = rl == 0;
	for (size_t i = 0; !ok && i < ARRAY_SIZE(attrs); i++)
		if (strlen(attrs[i].attr) == rl && strncmp(rest, attrs[i].attr, rl) == 0) {
			memcpy(t->attribute, rest, rl);
			t->attribute[rl] = '\0';
			ok = true;
		}
	if (!ok)
		return 0;
	if (tk->len[0] >= sizeof(t->board))
		return -ENAMETOOLONG;
	memcpy(t->board, tk->tok[0], tk->len[0]);
	t->board[tk->len[0]] = '\0';
	t->backing = VGPU_BACKING_MIG;
	t->slices = (unsigned)(tk->tok[1][0] - '0');
	t->fb_mib = gb ? gb * 1024 : 512;
	t->series = series;
	fill_gi_profile(t, gb);
	return 1;
}

bool vgpu_type_spec_names(const char *spec, unsigned id, const char *profile, const char *name)
{
	struct vgpu_type_info want;
	long n;

	if (!*spec)
		return false; /* an empty request names nothing */
	if (strncmp(spec, "nvidia-", 7) == 0 && vgpu_parse_long(spec + 7, &n) == 0)
		return n > 0 && (unsigned long)n == id;
	if (vgpu_parse_long(spec, &n) == 0)
		return n > 0 && (unsigned long)n == id;
	if (!profile)
		return false;
	/* NVIDIA spells them in upper case; a hand types "a30-6c" */
	if (strcasecmp(spec, profile) == 0 || (name && strcasecmp(spec, name) == 0))
		return true;
	/* a full name with another prefix ("NVIDIA A30-1-6C" for "GRID A30-1-6C") */
	vgpu_type_parse(spec, &want);
	return strchr(spec, ' ') && strcasecmp(want.profile, profile) == 0;
}

int vgpu_type_parse(const char *name, struct vgpu_type_info *out)
{
	struct vgpu_type_info t;
	struct tokens tk;
	const char *sp = strrchr(name, ' ');
	const char *p = sp ? sp + 1 : name;
	size_t n = strlen(p);
	int r;

	memset(&t, 0, sizeof(t));
	t.gi_profile_id = -1;
	if (n >= sizeof(t.profile)) {
		/* keep a prefix to show; backing stays unknown, no GI profile */
		memcpy(t.profile, p, sizeof(t.profile) - 1);
		t.profile[sizeof(t.profile) - 1] = '\0';
		*out = t;
		return -ENAMETOOLONG;
	}
	memcpy(t.profile, p, n + 1);
	*out = t; /* callers see backing unknown and no GI profile on every error path */
	if (parse_kepler(p, n, &t)) {
		*out = t;
		return 0;
	}
	if (!split_tokens(p, &tk))
		return -EINVAL;
	r = parse_time_sliced(&tk, &t);
	if (r == 0)
		r = parse_mig(&tk, &t);
	if (r <= 0) {
		/* what a class filled in part stays out: unknown, profile only */
		return r < 0 ? r : -EINVAL;
	}
	*out = t;
	return 0;
}

long vgpu_description_framebuffer_mib(const char *desc)
{
	static const char key[] = "framebuffer=";
	const char *p = desc;
	long v = 0;

	if (!desc)
		return -1;
	/* the first whole key: at the start, or after ',' or white space */
	while ((p = strstr(p, key)) != NULL) {
		if (p == desc || p[-1] == ',' || isspace((unsigned char)p[-1]))
			break;
		p++;
	}
	if (!p)
		return -1;
	p += sizeof(key) - 1;
	if (*p < '1' || *p > '9')
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > 1L << 20) /* 1 TiB in MiB; keeps v * 1024 inside 32 bits */
			return -1;
	}
	if (*p == 'G')
		v *= 1024;
	else if (*p != 'M')
		return -1;
	p++;
	if (*p && *p != ',' && !isspace((unsigned char)*p))
		return -1;
	return v;
}
