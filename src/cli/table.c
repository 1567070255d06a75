// SPDX-License-Identifier: GPL-2.0-or-later
/* Tables: cells filled row by row, and written out as JSON row by row (text: table-text.c). */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "cli.h"
#include "table-priv.h"
#include "util.h"

/* The cells of the row being filled (the only one a JSON table keeps). */
static uint32_t *row(const struct cli_table *t)
{
	return &t->cells[t->json ? 0 : (t->nrows - 1) * t->ncols];
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

int cli_table_print(struct cli *c, struct cli_table *t)
{
	int r = 0;

	if (t->json)
		json_end(t);
	else
		r = cli_table_print_text(c, t);
	cli_table_discard(t);
	return r;
}
