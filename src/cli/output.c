// SPDX-License-Identifier: GPL-2.0-or-later
/* Messages, tables and JSON: the CLI's one writer. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

#include "cli.h"
#include "util.h"

/* "vgpuctl: MESSAGE\n", control characters (a name given with a newline) escaped. */
static void print_message(struct cli *c, const char *fmt, va_list ap)
{
	char *msg = vgpu_escape_controls(vgpu_vasprintf(fmt, ap));

	fprintf(c->err, "vgpuctl: %s\n", msg);
	free(msg);
}

void cli_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(c, fmt, ap);
	va_end(ap);
}

int cli_usage_error(struct cli *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(c, fmt, ap);
	va_end(ap);
	fprintf(c->err, "Try 'vgpuctl %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return EXIT_USAGE;
}

/*
 * Tables and JSON from one place.  A table is a grid of optional strings in
 * one arena; text output pads columns to their widest cell, JSON output
 * renders numbers, strings, string arrays and absent values (null).
 *
 * Why not libsmartcols (lsblk's library): on a 2,560-row listing it spent
 * ~11 ms formatting (character-at-a-time output, a strdup per cell), more
 * than reading the host took, and we use none of its trees or wrapping.
 */
struct cli_table {
	const char *name;
	const struct col *cols;
	size_t ncols;
	bool json;
	uint32_t *cells; /* nrows x ncols arena offsets; 0 = absent */
	size_t nrows, cap;
	char *arena;
	size_t alen, acap;
};

struct cli_table *cli_table(struct cli *c, const char *name, const struct col *cols, size_t n)
{
	struct cli_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->name = name;
	t->cols = cols;
	t->ncols = n;
	t->json = c->json;
	t->acap = 1 << 16;
	t->arena = malloc(t->acap);
	if (!t->arena) {
		free(t);
		return NULL;
	}
	t->alen = 1; /* offset 0 means "absent" */
	return t;
}

static void table_free(struct cli_table *t)
{
	free(t->cells);
	free(t->arena);
	free(t);
}

struct cli_line *cli_line_new(struct cli_table *t)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		uint32_t *n = realloc(t->cells, cap * t->ncols * sizeof(*n));

		if (!n)
			abort(); /* a listing that does not fit in memory: nothing to salvage */
		t->cells = n;
		t->cap = cap;
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	t->nrows++;
	return (struct cli_line *)t;
}

void cli_cell_str(struct cli_line *ln, size_t col, const char *s)
{
	struct cli_table *t = (struct cli_table *)ln;
	size_t l;

	if (!s || col >= t->ncols || !t->nrows)
		return;
	l = strlen(s) + 1;
	if (t->alen + l > t->acap) {
		size_t cap = t->acap;
		char *n;

		while (t->alen + l > cap)
			cap *= 2;
		if (cap > UINT32_MAX || !(n = realloc(t->arena, cap)))
			abort();
		t->arena = n;
		t->acap = cap;
	}
	memcpy(t->arena + t->alen, s, l);
	t->cells[(t->nrows - 1) * t->ncols + col] = (uint32_t)t->alen;
	t->alen += l;
}

void cli_cell(struct cli_line *ln, size_t col, char *data)
{
	cli_cell_str(ln, col, data);
	free(data);
}

void cli_cell_num(struct cli_line *ln, size_t col, long v, bool present)
{
	char buf[32];

	if (!present)
		return;
	snprintf(buf, sizeof(buf), "%ld", v);
	cli_cell_str(ln, col, buf);
}

static const char *cell(const struct cli_table *t, size_t r, size_t c)
{
	uint32_t off = t->cells[r * t->ncols + c];

	return off ? t->arena + off : NULL;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped, and
 * any byte that is not valid UTF-8 written as U+FFFD, so the output is
 * valid JSON whatever a host's files hold (the reader warns about them).
 */
static void json_string(FILE *f, const char *s, size_t len)
{
	const char *run = s, *end = s + len;

	fputc('"', f);
	while (s < end) {
		unsigned char ch = (unsigned char)*s;
		size_t l = ch < 0x80 ? 1 : vgpu_utf8_seq_len(s, (size_t)(end - s));

		if (l > 1 || (l == 1 && ch >= 0x20 && ch != '"' && ch != '\\')) {
			s += l;
			continue;
		}
		fwrite(run, 1, (size_t)(s - run), f);
		s++;
		run = s;
		if (l == 0)
			fputs("\\ufffd", f);
		else if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else
			fprintf(f, "\\u%04x", ch);
	}
	fwrite(run, 1, (size_t)(end - run), f);
	fputc('"', f);
}

static void print_json(const struct cli_table *t, FILE *f)
{
	fprintf(f, "{\n   \"%s\": [", t->name);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",{\n" : "\n      {\n", f);
		for (size_t c = 0; c < t->ncols; c++) {
			const char *v = cell(t, r, c);

			fprintf(f, "         \"%s\": ", t->cols[c].key);
			if (!v) {
				fputs("null", f);
			} else if (t->cols[c].kind == COL_NUM) {
				fputs(v, f);
			} else if (t->cols[c].kind == COL_ARRAY) {
				/* newline-separated items */
				fputc('[', f);
				for (const char *p = v; *p;) {
					size_t l = strcspn(p, "\n");

					json_string(f, p, l);
					p += l;
					if (*p) {
						p++;
						fputs(", ", f);
					}
				}
				fputc(']', f);
			} else {
				json_string(f, v, strlen(v));
			}
			fputs(c + 1 < t->ncols ? ",\n" : "\n", f);
		}
		fputs("      }", f);
	}
	fputs(t->nrows ? "\n   ]\n}\n" : "]\n}\n", f);
}

static void print_text(const struct cli_table *t, FILE *f)
{
	size_t *w = calloc(t->ncols, sizeof(*w));

	if (!w)
		abort();
	for (size_t c = 0; c < t->ncols; c++)
		w[c] = (t->cols[c].flags & COL_JSON_ONLY) ? 0 : strlen(t->cols[c].header);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *v = cell(t, r, c);
			size_t l = v ? strlen(v) : 0;

			if (!(t->cols[c].flags & COL_JSON_ONLY) && l > w[c])
				w[c] = l;
		}
	/* the header too only when there is something to head, as lsblk does */
	for (size_t r = 0; t->nrows && r <= t->nrows; r++) {
		size_t pending = 0; /* padding is written only before visible text */

		for (size_t c = 0; c < t->ncols; c++) {
			const char *v = r ? cell(t, r - 1, c) : t->cols[c].header;
			size_t l = v ? strlen(v) : 0;

			if ((t->cols[c].flags & COL_JSON_ONLY))
				continue;
			pending += c ? 1 : 0;
			if ((t->cols[c].flags & COL_RIGHT))
				pending += w[c] - l;
			if (l) {
				fprintf(f, "%*s%s", (int)pending, "", v);
				pending = 0;
			}
			if (!(t->cols[c].flags & COL_RIGHT))
				pending += w[c] - l;
		}
		fputc('\n', f);
	}
	free(w);
}

int cli_table_print(struct cli *c, struct cli_table *t)
{
	if (t->json)
		print_json(t, c->out);
	else
		print_text(t, c->out);
	table_free(t);
	return 0;
}
