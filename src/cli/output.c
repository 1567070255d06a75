// SPDX-License-Identifier: GPL-2.0-or-later
/* Tables and JSON from one place: libsmartcols, as lsblk and lscpu do. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;

	fputs("vgpuctl: ", c->err);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
}

struct seen {
	char **msgs;
	size_t n;
};

void cli_warn_cb(void *data, const char *msg)
{
	struct cli *c = data;
	static struct seen seen; /* CLI-only: one process, one run */

	for (size_t i = 0; i < seen.n; i++)
		if (strcmp(seen.msgs[i], msg) == 0)
			return;
	char **n = realloc(seen.msgs, (seen.n + 1) * sizeof(*n));

	if (n) {
		seen.msgs = n;
		seen.msgs[seen.n] = strdup(msg);
		if (seen.msgs[seen.n])
			seen.n++;
	}
	fprintf(c->err, "vgpuctl: warning: %s\n", msg);
}

int cli_usage_error(struct cli *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("vgpuctl: ", c->err);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fprintf(c->err, "\nTry 'vgpuctl %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return EXIT_USAGE;
}

int cli_scan_host(struct cli *c, unsigned what)
{
	char *err = NULL;
	int r;

	if (!c->host) {
		r = vgpu_host_open(c->sysroot, &c->host, &err);
		if (r < 0) {
			cli_error(c, "%s", err ? err : strerror(-r));
			free(err);
			return EXIT_FAILURE;
		}
		vgpu_host_set_warn(c->host, cli_warn_cb, c);
	}
	if (vgpu_host_scan(c->host, what & CLI_SCAN_TYPES) < 0 ||
	    ((what & CLI_SCAN_TOPOLOGY) && vgpu_host_read_topology(c->host) < 0)) {
		cli_error(c, "%s", vgpu_last_error(c->host));
		return EXIT_FAILURE;
	}
	return 0;
}

struct libscols_table *cli_table(struct cli *c, const char *name, const struct col *cols, size_t n)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb)
		return NULL;
	scols_table_set_name(tb, name);
	scols_table_enable_json(tb, c->json);
	for (size_t i = 0; i < n; i++) {
		struct libscols_column *cl = scols_table_new_column(
			tb, c->json ? cols[i].key : cols[i].header, cols[i].whint, cols[i].flags);

		if (!cl) {
			scols_unref_table(tb);
			return NULL;
		}
		if (cols[i].kind == COL_NUM)
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
		else if (cols[i].kind == COL_ARRAY && c->json) {
			scols_column_set_json_type(cl, SCOLS_JSON_ARRAY_STRING);
			scols_column_set_flags(cl, scols_column_get_flags(cl) | SCOLS_FL_WRAP);
			scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize,
						  scols_wrapnl_nextchunk, NULL);
			scols_column_set_safechars(cl, "\n");
		}
	}
	return tb;
}

void cli_cell(struct libscols_line *ln, size_t col, char *data)
{
	scols_line_refer_data(ln, col, data);
}

void cli_cell_str(struct libscols_line *ln, size_t col, const char *s)
{
	if (s)
		scols_line_set_data(ln, col, s);
}

void cli_cell_num(struct libscols_line *ln, size_t col, long v, bool present)
{
	char buf[32];

	if (!present)
		return;
	snprintf(buf, sizeof(buf), "%ld", v);
	scols_line_set_data(ln, col, buf);
}

int cli_table_print(struct cli *c, struct libscols_table *tb)
{
	scols_table_set_stream(tb, c->out);
	scols_print_table(tb);
	scols_unref_table(tb);
	return 0;
}
