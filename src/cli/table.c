// SPDX-License-Identifier: GPL-2.0-or-later
/* Tables: cells filled row by row, printed as aligned text, raw text or JSON. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "cli.h"
#include "json.h"
#include "util.h"

/*
 * Tables and JSON from one place.  A table is a grid of optional cells in
 * one arena.  Text output pads columns to their widest cell.  JSON needs
 * no widths: a JSON table keeps only the row being filled, each cell
 * written as JSON (number, string, string array) when it is set, and the
 * row goes out when the next one starts.  A 2,560-row listing never holds
 * its cells (holding them, and growing the arrays that held them, took
 * ~130 page faults), and renders each value once.
 *
 * Why not libsmartcols (lsblk's library): on a 2,560-row listing it spent
 * ~11 ms formatting (character-at-a-time output, a strdup per cell), more
 * than reading the host took, and we use none of its trees or wrapping.
 */
struct cli_table {
	const char *name;
	const struct col *cols;
	size_t ncols;
	struct cli_obuf arena; /* the cells: text NUL-terminated, JSON as JSON; byte 0 unused */
	uint32_t *cells; /* arena offsets, rows x ncols (JSON: the row being filled); 0 = absent */
	size_t nrows, cap;
	struct cli_obuf *json; /* JSON: the output; NULL for text */
	uint32_t *lens; /* JSON: the cells' lengths */
	char *keys; /* JSON: what goes before each value, see json_keys() */
	size_t *koff;
	bool member; /* JSON: one member of the caller's document (cli.json_member) */
	bool bytes; /* text: COL_SIZE_MIB in bytes (cli.bytes), else human-readable */
};

/* The cells of the row being filled (the only one a JSON table keeps). */
static uint32_t *row(const struct cli_table *t)
{
	return &t->cells[t->json ? 0 : (t->nrows - 1) * t->ncols];
}

static const char *cell(const struct cli_table *t, size_t r, size_t c)
{
	uint32_t off = t->cells[r * t->ncols + c];

	return off ? t->arena.b + off : NULL;
}

/*
 * What goes before each value, built once: '         "key": ', and for
 * every column but the first the ",\n" that ends the value before it.
 * Column c's is keys + koff[c], koff[c + 1] - koff[c] bytes.
 */
static void json_keys(struct cli_table *t)
{
	size_t size = 1, *off = vgpu_xcalloc(t->ncols + 1, sizeof(*off));
	char *buf;

	for (size_t c = 0; c < t->ncols; c++)
		size += strlen(t->cols[c].key) + sizeof(",\n         \"\": ");
	buf = vgpu_xmalloc(size);
	for (size_t c = 0; c < t->ncols; c++)
		off[c + 1] = off[c] + (size_t)snprintf(buf + off[c], size - off[c],
						       "%s         \"%s\": ", c ? ",\n" : "",
						       t->cols[c].key);
	t->keys = buf;
	t->koff = off;
}

/* The opening; nothing reaches @f before the buffer fills or the table is printed. */
static void json_start(struct cli_table *t, FILE *f)
{
	t->json = vgpu_xmalloc(sizeof(*t->json));
	cli_ob_init(t->json, f, 16384);
	t->lens = vgpu_xcalloc(t->ncols, sizeof(*t->lens));
	json_keys(t);
	if (t->member)
		CLI_OB_LIT(t->json, ",\n   \"");
	else
		CLI_OB_LIT(t->json, "{\n   \"");
	cli_ob_put(t->json, t->name, strlen(t->name));
	CLI_OB_LIT(t->json, "\": [");
}

/* The row just filled, row number nrows. */
static void json_row(struct cli_table *t)
{
	struct cli_obuf *o = t->json;

	if (t->nrows > 1)
		CLI_OB_LIT(o, ",{\n");
	else
		CLI_OB_LIT(o, "\n      {\n");
	for (size_t c = 0; c < t->ncols; c++) {
		cli_ob_put(o, t->keys + t->koff[c], t->koff[c + 1] - t->koff[c]);
		if (t->cells[c])
			cli_ob_put(o, t->arena.b + t->cells[c], t->lens[c]);
		else
			CLI_OB_LIT(o, "null");
	}
	if (t->ncols)
		CLI_OB_LIT(o, "\n");
	CLI_OB_LIT(o, "      }");
}

static void json_end(struct cli_table *t)
{
	struct cli_obuf *o = t->json;

	if (t->nrows) {
		json_row(t);
		CLI_OB_LIT(o, "\n   ]");
	} else {
		CLI_OB_LIT(o, "]");
	}
	if (!t->member)
		CLI_OB_LIT(o, "\n}\n");
	cli_ob_write(o);
}

struct cli_table *cli_table(struct cli *c, const char *name, const struct col *cols, size_t n)
{
	struct cli_table *t = vgpu_xcalloc(1, sizeof(*t));

	t->name = name;
	t->cols = cols;
	t->ncols = n;
	/* a JSON table holds one row */
	cli_ob_init(&t->arena, NULL, c->json ? 1 << 12 : 1 << 16);
	t->arena.n = 1; /* offset 0 means "absent" */
	t->member = c->json_member;
	t->bytes = c->bytes;
	if (c->json)
		json_start(t, c->out);
	return t;
}

void cli_table_discard(struct cli_table *t)
{
	free(t->cells);
	free(t->arena.b);
	if (t->json)
		free(t->json->b);
	free(t->json);
	free(t->lens);
	free(t->keys);
	free(t->koff);
	free(t);
}

struct cli_line *cli_line_new(struct cli_table *t)
{
	if (t->json && t->nrows) {
		json_row(t); /* the row is complete: out it goes, and its cells are reused */
		t->arena.n = 1;
	} else if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : t->json ? 1 : 64;
		/* a listing that does not fit in memory: nothing to salvage (the OOM policy) */
		t->cells = vgpu_xreallocarray(t->cells, cap * t->ncols, sizeof(*t->cells));
		t->cap = cap;
	}
	t->nrows++;
	memset(row(t), 0, t->ncols * sizeof(*t->cells));
	return (struct cli_line *)t;
}

/* Cell @col of the row being filled: @len bytes at @s, as text or as JSON. */
static void cell_put(struct cli_table *t, size_t col, const char *s, size_t len)
{
	size_t off = t->arena.n;

	if (col >= t->ncols || !t->nrows)
		return;
	if (t->json) {
		cli_json_value(&t->arena, t->cols[col].kind, s, len);
		t->lens[col] = (uint32_t)(t->arena.n - off);
	} else {
		cli_ob_put(&t->arena, s, len);
		cli_ob_put(&t->arena, "", 1);
	}
	if (t->arena.n > UINT32_MAX)
		abort(); /* offsets are 32 bits: a 4 GiB listing */
	row(t)[col] = (uint32_t)off;
}

void cli_cell_str(struct cli_line *ln, size_t col, const char *s)
{
	if (s)
		cell_put((struct cli_table *)ln, col, s, strlen(s));
}

void cli_cell(struct cli_line *ln, size_t col, char *data)
{
	cli_cell_str(ln, col, data);
	free(data);
}

void cli_cell_num_after(struct cli_line *ln, size_t col, const char *prefix, long v)
{
	/* "%s%ld" by hand: a listing has five numbers a row, and snprintf() was a tenth of it */
	char buf[64], *end = buf + sizeof(buf), *p = end;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	size_t lp = strlen(prefix);

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	if (lp <= (size_t)(p - buf)) {
		p -= lp;
		memcpy(p, prefix, lp);
		cell_put((struct cli_table *)ln, col, p, (size_t)(end - p));
	} else {
		cli_cell(ln, col, vgpu_asprintf("%s%.*s", prefix, (int)(end - p), p));
	}
}

/*
 * @mib MiB in bytes, in decimal: digit by digit times 2^20, as it may not
 * fit 64 bits.  Return: its length.
 */
static size_t mib_bytes(char *buf, uint64_t mib)
{
	unsigned char d[48]; /* little-endian decimal digits: 20 + 7 at most */
	unsigned long long carry = 0;
	size_t n = 0, l = 0;

	do
		d[n++] = (unsigned char)(mib % 10);
	while (mib /= 10);
	for (size_t i = 0; i < n; i++) {
		carry += d[i] * 1048576ULL;
		d[i] = (unsigned char)(carry % 10);
		carry /= 10;
	}
	for (; carry; carry /= 10)
		d[n++] = (unsigned char)(carry % 10);
	while (n > 1 && !d[n - 1])
		n--; /* 0 MiB is "0" */
	while (n)
		buf[l++] = (char)('0' + d[--n]);
	buf[l] = '\0';
	return l;
}

/*
 * @mib MiB human-readable as util-linux's size_to_human_string() writes
 * bytes for lsblk: powers of 1024, the largest unit the size reaches (M G
 * T P E: whole MiB never need K), one decimal rounded half up and left out
 * when it is 0 ("48G", "251.6G", "512M"), and "0B" for nothing.  Done in
 * MiB, whose 2^20 bytes divide evenly: the digits are those of the bytes.
 * Return: its length.
 */
static size_t mib_human(char *buf, size_t size, uint64_t mib)
{
	static const char units[] = "MGTPE";
	unsigned shift = 0; /* of the unit, from MiB */
	uint64_t dec, frac;

	if (!mib)
		return (size_t)snprintf(buf, size, "0B");
	while (shift < 40 && mib >> (shift + 10))
		shift += 10;
	dec = mib >> shift;
	frac = mib & ((UINT64_C(1) << shift) - 1);
	/* three digits (truncated), rounded to one */
	frac = ((frac * 1000 >> shift) + 50) / 100;
	if (frac == 10) {
		dec++;
		frac = 0;
	}
	if (frac)
		return (size_t)snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", dec, frac,
					units[shift / 10]);
	return (size_t)snprintf(buf, size, "%" PRIu64 "%c", dec, units[shift / 10]);
}

void cli_cell_num(struct cli_line *ln, size_t col, long v, bool present)
{
	struct cli_table *t = (struct cli_table *)ln;
	char buf[64];

	if (!present)
		return;
	/* a size: the MiB as they are in JSON, human-readable or bytes in text */
	if (!t->json && col < t->ncols && t->cols[col].kind == COL_SIZE_MIB && v >= 0) {
		size_t l = t->bytes ? mib_bytes(buf, (uint64_t)v) :
				      mib_human(buf, sizeof(buf), (uint64_t)v);

		cell_put(t, col, buf, l);
		return;
	}
	cli_cell_num_after(ln, col, "", v);
}

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
			const char *v = cell(t, r, cols[i]);
			size_t l = v ? strlen(v) : 0;

			if (l > w[i])
				w[i] = l;
		}
	for (size_t r = headings ? 0 : 1; t->nrows && r <= t->nrows; r++) {
		size_t pending = 0; /* padding is written only before visible text */

		for (size_t i = 0; i < n; i++) {
			size_t c = cols[i];
			const char *v = r ? cell(t, r - 1, c) : t->cols[c].header;
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

int cli_table_print(struct cli *c, struct cli_table *t)
{
	size_t *cols, bad_len = 0;
	const char *bad = NULL;
	ssize_t n;

	if (t->json) {
		json_end(t);
		cli_table_discard(t);
		return 0;
	}
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
		cli_table_discard(t);
		return EXIT_USAGE;
	}
	print_text(t, c->out, cols, (size_t)n, c->raw, !c->no_headings);
	free(cols);
	cli_table_discard(t);
	return 0;
}
