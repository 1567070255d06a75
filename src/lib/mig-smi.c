// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: nvidia-smi's MIG output read strictly: `nvidia-smi mig -lgi`
 * rows into GPU instances of a board, and the MIG mode query's CSV.  Pure
 * functions over the text; running the program is nvtools.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "mig-priv.h"
#include "mig.h"

/* Split @line (modified) on white space into at most @max tokens; returns the count. */
static size_t split_ws(char *line, char **tok, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

static bool all_digits(const char *s, size_t max)
{
	size_t d = strspn(s, "0123456789");

	return d && d <= max && !s[d];
}

/*
 * One row of the -lgi box, its '|' stripped: GPU, "MIG", name, profile ID,
 * instance ID, start:size.  Return: 1 a GI, 0 not a row (header, rule), -EINVAL.
 */
static int lgi_row(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, char *inner,
		   const char *line, unsigned *gpu, struct vgpu_mig_gi *gi)
{
	char *tok[6];
	size_t n = split_ws(inner, tok, 6);
	unsigned start, size;
	int used = -1;

	if (n == 0 || !all_digits(tok[0], 4))
		return 0;
	if (n != 6 || strcmp(tok[1], "MIG") != 0 || !all_digits(tok[3], 4) ||
	    !all_digits(tok[4], 4) || sscanf(tok[5], "%2u:%2u%n", &start, &size, &used) != 2 ||
	    tok[5][used] || used < 0)
		return vgpu_error(ctx, -EINVAL, "nvidia-smi mig -lgi: cannot read the row '%s'",
				  line);
	*gpu = (unsigned)atoi(tok[0]);
	gi->profile = mig_profile_by_name(b, tok[2]);
	gi->start = start;
	gi->id = atoi(tok[4]);
	if (!gi->profile || gi->profile->id != atoi(tok[3]))
		return vgpu_error(
			ctx, -EINVAL,
			"nvidia-smi mig -lgi: '%s' (ID %s) is not a profile of %s in the row '%s'",
			tok[2], tok[3], b->model, line);
	if (size != gi->profile->size || start >= MIG_SLICES_MAX ||
	    !(gi->profile->placements & (1u << start)))
		return vgpu_error(ctx, -EINVAL,
				  "nvidia-smi mig -lgi: %s cannot be at %u:%u on %s (row '%s')",
				  gi->profile->name, start, size, b->model, line);
	return 1;
}

/* Read one line of @text at *pos into @line (truncated, NUL-terminated); false at the end. */
static bool next_line(const char *text, size_t *pos, char *line, size_t size)
{
	size_t l;

	if (!text[*pos])
		return false;
	l = strcspn(text + *pos, "\n");
	snprintf(line, size, "%.*s", (int)(l < size ? l : size - 1), text + *pos);
	*pos += l + (text[*pos + l] == '\n');
	return true;
}

int vgpu_mig_parse_lgi(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *text,
		       struct vgpu_mig_gi **gis, size_t *n)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *v = NULL;
	size_t k = 0, pos = 0;
	bool seen = false;
	unsigned gpu0 = 0;
	char line[512], inner[512];

	if (strnlen(text, VGPU_MIG_TEXT_MAX + 1) > VGPU_MIG_TEXT_MAX)
		return vgpu_error(ctx, -EINVAL, "nvidia-smi mig -lgi: output over %d bytes",
				  VGPU_MIG_TEXT_MAX);
	while (next_line(text, &pos, line, sizeof(line))) {
		const char *bar = strchr(line, '|'), *end = strrchr(line, '|');
		struct vgpu_mig_gi gi;
		unsigned gpu = 0;
		int r;

		if (strstr(line, "No MIG-enabled devices found") ||
		    strstr(line, "No GPU instances found") || strstr(line, "GPU instances:"))
			seen = true;
		if (!bar)
			continue;
		/* a row cut before its closing '|' still reads */
		if (end == bar)
			end = line + strlen(line);
		snprintf(inner, sizeof(inner), "%.*s", (int)(end - bar - 1), bar + 1);
		r = lgi_row(ctx, b, inner, line, &gpu, &gi);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (k && gpu != gpu0)
			return vgpu_error(
				ctx, -EINVAL,
				"nvidia-smi mig -lgi: rows of GPUs %u and %u (pass -i BUS)", gpu0,
				gpu);
		if (k == b->mem_slices)
			return vgpu_error(ctx, -EINVAL, "nvidia-smi mig -lgi: more than %u GIs",
					  b->mem_slices);
		if (!v)
			v = vgpu_xcalloc(b->mem_slices, sizeof(*v));
		gpu0 = gpu;
		v[k++] = gi;
	}
	if (!seen && !k)
		return vgpu_error(ctx, -EINVAL, "not the output of nvidia-smi mig -lgi");
	*gis = vgpu_steal_ptr(&v);
	*n = k;
	return 0;
}

/* "Enabled" 1, "Disabled" 0, "[N/A]" -1; -2 otherwise. */
static int mode_value(const char *s)
{
	if (strcmp(s, "Enabled") == 0)
		return 1;
	if (strcmp(s, "Disabled") == 0)
		return 0;
	if (strcmp(s, "[N/A]") == 0 || strcmp(s, "N/A") == 0)
		return -1;
	return -2;
}

/* @s without leading and trailing white space (modified in place). */
static char *trim(char *s)
{
	size_t l;

	s += strspn(s, " \t\r");
	l = strlen(s);
	while (l && isspace((unsigned char)s[l - 1]))
		s[--l] = '\0';
	return s;
}

int vgpu_mig_parse_mode(struct vgpu_ctx *ctx, const char *text, int *current, int *pending)
{
	char line[256], orig[256], *f[3], *save = NULL;
	size_t pos = 0, nf = 0;
	int cur, pend;

	if (strnlen(text, VGPU_MIG_TEXT_MAX + 1) > VGPU_MIG_TEXT_MAX)
		return vgpu_error(ctx, -EINVAL, "nvidia-smi --query-gpu: output too long");
	pos += strspn(text, " \t\r\n");
	if (!next_line(text, &pos, line, sizeof(line)) || text[pos + strspn(text + pos, " \t\r\n")])
		return vgpu_error(
			ctx, -EINVAL,
			"nvidia-smi --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending: want one line, got '%.60s'",
			text);
	snprintf(orig, sizeof(orig), "%s", line);
	for (char *t = strtok_r(line, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (nf == 3)
			return vgpu_error(ctx, -EINVAL, "MIG mode: more than 3 fields in '%s'",
					  trim(orig));
		f[nf++] = trim(t);
	}
	if (nf != 3 || !strchr(f[0], ':'))
		return vgpu_error(ctx, -EINVAL, "MIG mode: not 'BUS, CURRENT, PENDING': '%s'",
				  trim(orig));
	cur = mode_value(f[1]);
	pend = mode_value(f[2]);
	if (cur == -2 || pend == -2)
		return vgpu_error(ctx, -EINVAL,
				  "MIG mode of %s: '%s' is neither Enabled, Disabled nor [N/A]",
				  f[0], cur == -2 ? f[1] : f[2]);
	*current = cur;
	*pending = pend;
	return 0;
}
