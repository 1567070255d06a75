// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The message catalogue: parse data/catalogue.tsv, match log lines, decode
 * NVIDIA status codes and Xids.  Pure (the caller reads the file).
 *
 * Cost: a log of L lines against R rows is L * R matches at worst; each row
 * keeps the longest literal its expression requires (its "needle"), and a
 * line that does not contain it is skipped with strstr() before regexec(),
 * so a long kernel log costs about R substring searches per line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "cleanup.h"

#define FIELDS 7

const char *vgpu_cat_kind_str(enum vgpu_cat_kind k)
{
	switch (k) {
	case VGPU_CAT_CAUSE:
		return "cause";
	case VGPU_CAT_SYMPTOM:
		return "symptom";
	case VGPU_CAT_INFO:
		return "info";
	case VGPU_CAT_NOISE:
		break;
	}
	return "noise";
}

static int kind_parse(const char *s, enum vgpu_cat_kind *k)
{
	static const char *const names[] = { "cause", "symptom", "info", "noise" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*k = (enum vgpu_cat_kind)i;
			return 0;
		}
	return -EINVAL;
}

static int decode_parse(const char *s, enum vgpu_cat_decode *d)
{
	if (!strcmp(s, "-"))
		*d = VGPU_CAT_DECODE_NONE;
	else if (!strcmp(s, "status"))
		*d = VGPU_CAT_DECODE_STATUS;
	else if (!strcmp(s, "xid"))
		*d = VGPU_CAT_DECODE_XID;
	else
		return -EINVAL;
	return 0;
}

static bool id_valid(const char *s)
{
	if (!*s || strlen(s) > 40)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

/*
 * The longest literal every match of @re contains: characters outside groups
 * and bracket expressions, not made optional by '*', '?' or '{'.  An
 * expression with an alternation has none ("": every line goes to regexec).
 */
static char *needle_of(const char *re)
{
	size_t len = strlen(re), best = 0;
	VGPU_AUTOFREE char *run = vgpu_xmalloc(len + 1);
	VGPU_AUTOFREE char *keep = vgpu_xcalloc(1, len + 1);
	size_t n = 0;
	int depth = 0;

	for (const char *p = re; *p; p++)
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '|')
			return vgpu_xstrdup("");
#define CUT()                                                                                      \
	do {                                                                                       \
		if (n > best) {                                                                    \
			best = n;                                                                  \
			memcpy(keep, run, n);                                                      \
			keep[n] = '\0';                                                            \
		}                                                                                  \
		n = 0;                                                                             \
	} while (0)
	for (const char *p = re; *p; p++) {
		char c = *p;

		if (c == '\\' && p[1]) {
			c = *++p;
			if (!strchr(".[]()*+?{}|^$\\", c)) {
				CUT();
				continue;
			}
		} else if (c == '[') {
			CUT();
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				break;
			continue;
		} else if (c == '(' || c == ')') {
			CUT();
			depth += c == '(' ? 1 : -1;
			continue;
		} else if (c == '*' || c == '?' || c == '{') {
			if (n)
				n--;
			CUT();
			if (c == '{')
				while (p[1] && *p != '}')
					p++;
			continue;
		} else if (c == '+' || c == '.' || c == '^' || c == '$') {
			CUT();
			continue;
		}
		if (depth)
			continue;
		/* a literal followed by an optional marker is not required */
		run[n++] = c;
	}
	CUT();
#undef CUT
	return vgpu_steal_ptr(&keep);
}

static void row_clear(struct vgpu_cat_row *r)
{
	free(r->id);
	free(r->regex);
	free(r->cause);
	free(r->next);
	free(r->source);
	free(r->needle);
	regfree(&r->re);
}

void vgpu_catalogue_clear(struct vgpu_catalogue *cat)
{
	for (size_t i = 0; i < cat->n; i++)
		row_clear(&cat->rows[i]);
	free(cat->rows);
	cat->rows = NULL;
	cat->n = 0;
}

/* One row from the TAB-separated fields of @line (modified). */
static int row_parse(struct vgpu_ctx *ctx, char *line, const char *path, size_t lineno,
		     const struct vgpu_catalogue *cat, struct vgpu_cat_row *r)
{
	char *f[FIELDS];
	size_t n = 0;
	char *p = line;
	int e;

	for (;;) {
		char *tab = strchr(p, '\t');

		if (n == FIELDS)
			return vgpu_error(ctx, -EINVAL, "%s:%zu: more than %d fields", path, lineno,
					  FIELDS);
		f[n++] = p;
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	if (n != FIELDS)
		return vgpu_error(
			ctx, -EINVAL,
			"%s:%zu: %zu fields, not %d (id, kind, decode, regex, cause, next, source, separated by one TAB)",
			path, lineno, n, FIELDS);
	for (size_t i = 0; i < FIELDS; i++)
		if (!*f[i])
			return vgpu_error(ctx, -EINVAL, "%s:%zu: field %zu is empty", path, lineno,
					  i + 1);
	if (!id_valid(f[0]))
		return vgpu_error(ctx, -EINVAL,
				  "%s:%zu: id '%s': not 1 to 40 lowercase letters, digits and '-'",
				  path, lineno, f[0]);
	for (size_t i = 0; i < cat->n; i++)
		if (!strcmp(cat->rows[i].id, f[0]))
			return vgpu_error(ctx, -EINVAL, "%s:%zu: id '%s' is already on line %zu",
					  path, lineno, f[0], cat->rows[i].line);
	if (kind_parse(f[1], &r->kind) < 0)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%zu: kind '%s': not cause, symptom, info or noise", path,
				  lineno, f[1]);
	if (decode_parse(f[2], &r->decode) < 0)
		return vgpu_error(ctx, -EINVAL, "%s:%zu: decode '%s': not -, status or xid", path,
				  lineno, f[2]);
	e = regcomp(&r->re, f[3], REG_EXTENDED);
	if (e) {
		char msg[256];

		regerror(e, &r->re, msg, sizeof(msg));
		return vgpu_error(ctx, -EINVAL, "%s:%zu: regex '%s': %s", path, lineno, f[3], msg);
	}
	if (r->decode != VGPU_CAT_DECODE_NONE && r->re.re_nsub < 1) {
		regfree(&r->re);
		return vgpu_error(
			ctx, -EINVAL,
			"%s:%zu: decode '%s' needs a group in the regex to capture the code", path,
			lineno, f[2]);
	}
	r->id = vgpu_xstrdup(f[0]);
	r->regex = vgpu_xstrdup(f[3]);
	r->cause = vgpu_xstrdup(f[4]);
	r->next = vgpu_xstrdup(f[5]);
	r->source = vgpu_xstrdup(f[6]);
	r->needle = needle_of(f[3]);
	r->line = lineno;
	return 0;
}

int vgpu_catalogue_parse(struct vgpu_ctx *ctx, const char *text, const char *path,
			 struct vgpu_catalogue *out)
{
	VGPU_AUTOFREE char *copy = vgpu_xstrdup(text);
	struct vgpu_catalogue cat = { 0 };
	size_t lineno = 0;
	char *p = copy;

	while (p && *p) {
		char *line = p;
		char *nl = strchr(p, '\n');
		struct vgpu_cat_row r = { 0 };
		int e;

		lineno++;
		if (nl) {
			*nl = '\0';
			p = nl + 1;
		} else {
			p = NULL;
		}
		if (!*line || *line == '#')
			continue;
		e = row_parse(ctx, line, path, lineno, &cat, &r);
		if (e < 0) {
			vgpu_catalogue_clear(&cat);
			return e;
		}
		cat.rows = vgpu_xreallocarray(cat.rows, cat.n + 1, sizeof(*cat.rows));
		cat.rows[cat.n++] = r;
	}
	if (!cat.n)
		return vgpu_error(ctx, -EINVAL, "%s: no rows", path);
	*out = cat;
	return 0;
}

bool vgpu_catalogue_row_matches(const struct vgpu_cat_row *row, const char *line)
{
	if (*row->needle && !strstr(line, row->needle))
		return false;
	return regexec(&row->re, line, 0, NULL, 0) == 0;
}

const struct vgpu_cat_row *vgpu_catalogue_match(const struct vgpu_catalogue *cat, const char *line,
						unsigned long *code)
{
	for (size_t i = 0; i < cat->n; i++) {
		const struct vgpu_cat_row *r = &cat->rows[i];
		regmatch_t m[2];
		char num[24];
		size_t l;

		if (*r->needle && !strstr(line, r->needle))
			continue;
		if (regexec(&r->re, line, 2, m, 0))
			continue;
		if (r->decode == VGPU_CAT_DECODE_NONE || !code || m[1].rm_so < 0)
			return r;
		l = (size_t)(m[1].rm_eo - m[1].rm_so);
		if (l && l < sizeof(num)) {
			memcpy(num, line + m[1].rm_so, l);
			num[l] = '\0';
			*code = strtoul(num, NULL, r->decode == VGPU_CAT_DECODE_XID ? 10 : 16);
		}
		return r;
	}
	return NULL;
}

/*
 * NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvstatuscodes.h,
 * the codes vGPU logs show (each checked against that file, 2026-11-28)
 */
static const struct {
	unsigned long code;
	const char *name;
} statuses[] = {
	{ 0x17, "IN_USE" },
	{ 0x1A, "INSUFFICIENT_RESOURCES" },
	{ 0x1B, "INSUFFICIENT_PERMISSIONS" },
	{ 0x1F, "INVALID_ARGUMENT" },
	{ 0x22, "INVALID_CLASS" },
	{ 0x26, "INVALID_DEVICE" },
	{ 0x38, "INVALID_OPERATION" },
	{ 0x40, "INVALID_STATE" },
	{ 0x51, "NO_MEMORY" },
	{ 0x55, "NOT_READY" },
	{ 0x56, "NOT_SUPPORTED" },
	{ 0x57, "OBJECT_NOT_FOUND" },
	{ 0x62, "RESET_REQUIRED" },
	{ 0x65, "TIMEOUT" },
	{ 0x7A, "FABRIC_MANAGER_NOT_PRESENT" },
	{ 0x81, "NVLINK_FABRIC_NOT_READY" },
	{ 0x82, "NVLINK_FABRIC_FAILURE" },
	{ 0x87, "FABRIC_STATE_OUT_OF_SYNC" },
};

const char *vgpu_status_name(unsigned long code)
{
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].code == code)
			return statuses[i].name;
	return NULL;
}

/*
 * NVIDIA's Xid catalogue, "Resolution Bucket (Immediate Action)", for the
 * Xids a vGPU host sees most; others: see the catalogue.  Checked against
 * https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html and
 * NVIDIA/NVSentinel distros/kubernetes/nvsentinel/charts/gpu-health-monitor/
 * xiderrorsmapping.csv (NVIDIA's machine-readable copy of that column).
 * WORKFLOW_* buckets name a documented workflow: WORKFLOW_XID_45 (solo:
 * RESTART_FM, else IGNORE), WORKFLOW_XID_48 (solo: RESET_GPU; with Xid 63 or
 * 64: DRAIN_AND_RESET).
 */
static const struct {
	unsigned long xid;
	const char *what;
	const char *bucket;
} xids[] = {
	{ 8, "GPU stopped processing", "RESTART_APP" },
	{ 13, "graphics engine exception", "RESTART_APP" },
	{ 31, "GPU memory page fault", "RESTART_APP" },
	{ 43, "GPU stopped processing", "IGNORE" },
	{ 45, "preemptive cleanup, due to a previous error", "WORKFLOW_XID_45" },
	{ 48, "double bit ECC error", "WORKFLOW_XID_48" },
	{ 63, "row remapping recording event", "IGNORE" },
	{ 64, "row remapping failure", "RESET_GPU" },
	{ 74, "NVLink error", "WORKFLOW_NVLINK_ERR" },
	{ 79, "GPU has fallen off the bus", "RESTART_BM" },
	{ 94, "contained ECC error", "RESTART_APP" },
	{ 95, "uncontained ECC error", "RESET_GPU" },
	{ 119, "GSP RPC timeout", "RESET_GPU" },
	{ 120, "GSP error", "RESET_GPU" },
};

const char *vgpu_xid_info(unsigned long xid, const char **bucket)
{
	for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++)
		if (xids[i].xid == xid) {
			*bucket = xids[i].bucket;
			return xids[i].what;
		}
	return NULL;
}
