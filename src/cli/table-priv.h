/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A table's cells, shared by table.c (filling, JSON) and table-text.c (text). */
#ifndef VGPUCTL_CLI_TABLE_PRIV_H
#define VGPUCTL_CLI_TABLE_PRIV_H

#include <stdint.h>

#include "cli.h"
#include "json.h"

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

/* Row @r's cell @c as text, or NULL when it is absent. */
static inline const char *cli_table_cell(const struct cli_table *t, size_t r, size_t c)
{
	uint32_t off = t->cells[r * t->ncols + c];

	return off ? t->arena.b + off : NULL;
}

/* Print @t as text (the columns -o names, -n, -r), or a usage error for an unknown column. */
int cli_table_print_text(struct cli *c, const struct cli_table *t);

#endif
