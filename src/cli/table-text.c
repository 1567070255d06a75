// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tables as text: the columns -o/--output names, aligned or --raw, the
 * header unless --noheadings; and a listing's columns for its --help.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "table-priv.h"
#include "util.h"

/*
 * -o/--output names column @c with @l bytes at @p: its header (any case),
 * or for a size its header with "-MIB" (FB-MIB, the header when sizes were
 * printed in MiB).
 */
static bool names_column(const struct col *c, const char *p, size_t l)
{
	size_t hl = strlen(c->header);

	if (c->flags & COL_JSON_ONLY)
		return false;
	if (hl == l && strncasecmp(c->header, p, l) == 0)
		return true;
	return c->kind == COL_SIZE_MIB && l == hl + 4 && strncasecmp(c->header, p, hl) == 0 &&
	       strncasecmp(p + hl, "-MIB", 4) == 0;
}

/*
 * The text columns to print, in order: every column but JSON-only ones, or
 * those -o/--output names (names_column()).  Return: how many, or -1 with
 * *bad the unknown name.
 */
static ssize_t text_columns(const struct cli_table *t, const char *list, size_t *out,
			    const char **bad, size_t *bad_len)
{
	size_t n = 0;

	if (!list) {
		for (size_t c = 0; c < t->ncols; c++)
			if (!(t->cols[c].flags & COL_JSON_ONLY))
				out[n++] = c;
		return (ssize_t)n;
	}
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ","), c;

		for (c = 0; c < t->ncols; c++)
			if (names_column(&t->cols[c], p, l))
				break;
		if (c == t->ncols) {
			*bad = p;
			*bad_len = l;
			return -1;
		}
		if (n < t->ncols)
			out[n++] = c;
		p += l + (p[l] == ',');
	}
	return (ssize_t)n;
}

void cli_columns_help(FILE *f, const struct cli_columns *cc)
{
	int w = 0;
	bool json_only = false;

	for (size_t i = 0; i < cc->n; i++) {
		const struct col *col = &cc->cols[i];
		const char *name = col->flags & COL_JSON_ONLY ? col->key : col->header;

		if ((int)strlen(name) > w)
			w = (int)strlen(name);
		json_only |= (col->flags & COL_JSON_ONLY) != 0;
	}
	fputs("\nColumns (for -o/--output, by header):\n", f);
	for (size_t i = 0; i < cc->n; i++)
		if (!(cc->cols[i].flags & COL_JSON_ONLY))
			fprintf(f, "  %-*s  %s\n", w, cc->cols[i].header, cc->desc[i]);
	if (json_only)
		fputs("JSON adds:\n", f);
	for (size_t i = 0; i < cc->n; i++)
		if (cc->cols[i].flags & COL_JSON_ONLY)
			fprintf(f, "  %-*s  %s\n", w, cc->cols[i].key, cc->desc[i]);
	if (cc->note)
		fprintf(f, "%s\n", cc->note);
}

/* A --raw value: blanks and backslashes as \xNN, as util-linux's raw output */
static void raw_value(FILE *f, size_t i, const char *v)
{
	if (i)
		fputc(' ', f);
	for (; *v; v++) {
		if (*v == ' ' || *v == '\\' || *v == '\t' || *v == '\n')
			fprintf(f, "\\x%02x", (unsigned char)*v);
		else
			fputc(*v, f);
	}
}

/*
 * Aligned columns (right-aligned where COL_RIGHT), or with --raw one space
 * between values (blanks in them escaped) and "-" for an absent one, so
 * fields stay where scripts count them; the header unless --noheadings, and only when there is
 * something to head, as lsblk does.
 */
static void print_text(const struct cli_table *t, FILE *f, const size_t *cols, size_t n, bool raw,
		       bool headings)
{
	size_t *w = vgpu_xcalloc(n + 1, sizeof(*w));

	for (size_t i = 0; i < n; i++)
		w[i] = headings ? strlen(t->cols[cols[i]].header) : 0;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < n; i++) {
			const char *v = cli_table_cell(t, r, cols[i]);
			size_t l = v ? strlen(v) : 0;

			if (l > w[i])
				w[i] = l;
		}
	for (size_t r = headings ? 0 : 1; t->nrows && r <= t->nrows; r++) {
		size_t pending = 0; /* padding is written only before visible text */

		for (size_t i = 0; i < n; i++) {
			size_t c = cols[i];
			const char *v = r ? cli_table_cell(t, r - 1, c) : t->cols[c].header;
			size_t l = v ? strlen(v) : 0;

			if (raw) {
				raw_value(f, i, l ? v : "-");
				continue;
			}
			pending += i ? 1 : 0;
			if ((t->cols[c].flags & COL_RIGHT))
				pending += w[i] - l;
			if (l) {
				fprintf(f, "%*s%s", (int)pending, "", v);
				pending = 0;
			}
			if (!(t->cols[c].flags & COL_RIGHT))
				pending += w[i] - l;
		}
		fputc('\n', f);
	}
	free(w);
}

int cli_table_print_text(struct cli *c, const struct cli_table *t)
{
	size_t *cols, bad_len = 0;
	const char *bad = NULL;
	ssize_t n;

	cols = vgpu_xcalloc(t->ncols + 1, sizeof(*cols));
	n = text_columns(t, c->columns, cols, &bad, &bad_len);
	if (n < 0) {
		char *known = NULL;

		for (size_t k = 0; k < t->ncols; k++)
			if (!(t->cols[k].flags & COL_JSON_ONLY))
				vgpu_append(&known, "%s%s", known ? "," : "", t->cols[k].header);
		cli_error(c, "--output: no column '%.*s' here (columns: %s)", (int)bad_len, bad,
			  known ? known : "");
		free(known);
		free(cols);
		return EXIT_USAGE;
	}
	print_text(t, c->out, cols, (size_t)n, c->raw, !c->no_headings);
	free(cols);
	return 0;
}
