/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The CLI's JSON writer: output buffers and JSON values (json.c). */
#ifndef VGPUCTL_CLI_JSON_H
#define VGPUCTL_CLI_JSON_H

#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * JSON goes through buffers of our own: a 2,560-row listing is ~36,000
 * values, and stdio's per-call locking and format parsing (an fprintf()
 * per key, an fputs() per separator) cost more than reading the host.
 * A buffer with a FILE is written out when full (cli_ob_write()); one without
 * (a table's cells) grows instead.
 */
struct cli_obuf {
	FILE *f; /* NULL: grow */
	char *b;
	size_t n, cap; /* bytes of b in use (only those are ever written out), its size */
};

/* A buffer of @cap bytes that writes to @f when full, or grows when @f is NULL. */
void cli_ob_init(struct cli_obuf *o, FILE *f, size_t cap);
/* What the buffer holds, out to its file. */
void cli_ob_write(struct cli_obuf *o);
/* @l bytes at @s that do not fit: grow, or write out as often as it fills. */
void cli_ob_spill(struct cli_obuf *o, const char *s, size_t l);

/* Inline for what fits, which is nearly everything: a listing makes ~100,000 of these. */
static inline void cli_ob_put(struct cli_obuf *o, const char *s, size_t l)
{
	if (l <= o->cap - o->n) {
		memcpy(o->b + o->n, s, l);
		o->n += l;
	} else {
		cli_ob_spill(o, s, l);
	}
}

#define CLI_OB_LIT(o, lit) cli_ob_put(o, lit, sizeof(lit) - 1)

/* @len bytes at @s as a JSON string, escaped, invalid UTF-8 as U+FFFD. */
void cli_json_string(struct cli_obuf *o, const char *s, size_t len);
/* A value of a column of @kind: a number as it is, a string, or newline-separated items as an
 * array. */
void cli_json_value(struct cli_obuf *o, enum col_kind kind, const char *v, size_t len);

#endif
