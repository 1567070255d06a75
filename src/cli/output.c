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

/* The cell @a @b (either may be empty), copied to the arena. */
static void cell_put(struct cli_table *t, size_t col, const char *a, size_t la, const char *b,
		     size_t lb)
{
	size_t l = la + lb + 1;

	if (col >= t->ncols || !t->nrows)
		return;
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
	memcpy(t->arena + t->alen, a, la);
	memcpy(t->arena + t->alen + la, b, lb);
	t->arena[t->alen + la + lb] = '\0';
	t->cells[(t->nrows - 1) * t->ncols + col] = (uint32_t)t->alen;
	t->alen += l;
}

void cli_cell_str(struct cli_line *ln, size_t col, const char *s)
{
	if (s)
		cell_put((struct cli_table *)ln, col, s, strlen(s), "", 0);
}

void cli_cell(struct cli_line *ln, size_t col, char *data)
{
	cli_cell_str(ln, col, data);
	free(data);
}

void cli_cell_num_after(struct cli_line *ln, size_t col, const char *prefix, long v)
{
	/* "%ld" by hand: a listing has five numbers a row, and snprintf() was a tenth of it */
	char digits[24], *p = digits + sizeof(digits);
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	cell_put((struct cli_table *)ln, col, prefix, strlen(prefix), p,
		 (size_t)(digits + sizeof(digits) - p));
}

void cli_cell_num(struct cli_line *ln, size_t col, long v, bool present)
{
	if (present)
		cli_cell_num_after(ln, col, "", v);
}

static const char *cell(const struct cli_table *t, size_t r, size_t c)
{
	uint32_t off = t->cells[r * t->ncols + c];

	return off ? t->arena + off : NULL;
}

/*
 * JSON goes through a buffer of its own: a 2,560-row listing is ~36,000
 * values, and stdio's per-call locking and format parsing (an fprintf()
 * per key, an fputs() per separator) cost more than reading the host.
 * A full buffer goes to the FILE in one fwrite().
 */
struct obuf {
	FILE *f;
	size_t n; /* bytes of b[] in use: only those are ever written out */
	char b[16384];
};

/*
 * Copy @s in, writing out each buffer it fills: bytes reach the FILE only
 * after they were copied, so no path hands fwrite() a byte never written.
 */
static void ob_put(struct obuf *o, const char *s, size_t l)
{
	for (;;) {
		size_t room = sizeof(o->b) - o->n, k = l < room ? l : room;

		memcpy(o->b + o->n, s, k);
		o->n += k;
		if (k == l)
			return;
		fwrite(o->b, 1, o->n, o->f);
		o->n = 0;
		s += k;
		l -= k;
	}
}

#define OB_LIT(o, lit) ob_put(o, lit, sizeof(lit) - 1)

/*
 * A JSON string: quotes, backslashes and control characters escaped, and
 * any byte that is not valid UTF-8 written as U+FFFD, so the output is
 * valid JSON whatever a host's files hold (the reader warns about them).
 */
static void json_string(struct obuf *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s, *end = s + len;

	OB_LIT(o, "\"");
	while (s < end) {
		unsigned char ch = (unsigned char)*s;
		size_t l = ch < 0x80 ? 1 : vgpu_utf8_seq_len(s, (size_t)(end - s));

		if (l > 1 || (l == 1 && ch >= 0x20 && ch != '"' && ch != '\\')) {
			s += l;
			continue;
		}
		ob_put(o, run, (size_t)(s - run));
		s++;
		run = s;
		if (l == 0) {
			OB_LIT(o, "\\ufffd");
		} else if (ch == '"' || ch == '\\') {
			char e[2] = { '\\', (char)ch };

			ob_put(o, e, sizeof(e));
		} else if (ch == '\n') {
			OB_LIT(o, "\\n");
		} else if (ch == '\t') {
			OB_LIT(o, "\\t");
		} else {
			char e[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };

			ob_put(o, e, sizeof(e));
		}
	}
	ob_put(o, run, (size_t)(end - run));
	OB_LIT(o, "\"");
}

/* One value: null, a number as it is, a string, or newline-separated items as an array. */
static void json_value(struct obuf *o, enum col_kind kind, const char *v)
{
	if (!v) {
		OB_LIT(o, "null");
	} else if (kind == COL_NUM) {
		ob_put(o, v, strlen(v));
	} else if (kind == COL_ARRAY) {
		OB_LIT(o, "[");
		for (const char *p = v; *p;) {
			size_t l = strcspn(p, "\n");

			json_string(o, p, l);
			p += l;
			if (*p) {
				p++;
				OB_LIT(o, ", ");
			}
		}
		OB_LIT(o, "]");
	} else {
		json_string(o, v, strlen(v));
	}
}

static void print_json(const struct cli_table *t, FILE *f)
{
	struct obuf *o = vgpu_xmalloc(sizeof(*o));
	size_t *klen = vgpu_xcalloc(t->ncols, sizeof(*klen));

	o->f = f;
	o->n = 0;
	for (size_t c = 0; c < t->ncols; c++)
		klen[c] = strlen(t->cols[c].key);
	OB_LIT(o, "{\n   \"");
	ob_put(o, t->name, strlen(t->name));
	OB_LIT(o, "\": [");
	for (size_t r = 0; r < t->nrows; r++) {
		if (r)
			OB_LIT(o, ",{\n");
		else
			OB_LIT(o, "\n      {\n");
		for (size_t c = 0; c < t->ncols; c++) {
			OB_LIT(o, "         \"");
			ob_put(o, t->cols[c].key, klen[c]);
			OB_LIT(o, "\": ");
			json_value(o, t->cols[c].kind, cell(t, r, c));
			if (c + 1 < t->ncols)
				OB_LIT(o, ",\n");
			else
				OB_LIT(o, "\n");
		}
		OB_LIT(o, "      }");
	}
	if (t->nrows)
		OB_LIT(o, "\n   ]\n}\n");
	else
		OB_LIT(o, "]\n}\n");
	fwrite(o->b, 1, o->n, o->f);
	free(klen);
	free(o);
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
