// SPDX-License-Identifier: GPL-2.0-or-later
/* The CLI's JSON writer: output buffers, JSON strings and values. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "util.h"

void cli_ob_init(struct cli_obuf *o, FILE *f, size_t cap)
{
	o->f = f;
	o->b = vgpu_xmalloc(cap);
	o->n = 0;
	o->cap = cap;
}

/*
 * A full buffer goes straight to the file: fwrite() would copy it once
 * more, into stdio's 64 KiB buffer, whose pages would fault in too.  What
 * write() does not take is handed to stdio, which tries again and, if it
 * fails too, keeps the error for close_stdout() to report.
 */
void cli_ob_write(struct cli_obuf *o)
{
	const char *p = o->b;
	size_t left = o->n;

	if (fflush(o->f) == 0)
		while (left) {
			ssize_t w = write(fileno(o->f), p, left);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			p += w;
			left -= (size_t)w;
		}
	if (left)
		fwrite(p, 1, left, o->f);
	o->n = 0;
}

/*
 * What does not fit: a buffer without a FILE grows; one with a FILE takes
 * what fits and is written out, as often as it fills.  Bytes reach the
 * file only after they were copied in, so no path hands write() or
 * fwrite() a byte never written.
 */
void cli_ob_spill(struct cli_obuf *o, const char *s, size_t l)
{
	while (!o->f && l > o->cap - o->n) {
		o->cap *= 2;
		o->b = vgpu_xrealloc(o->b, o->cap);
	}
	for (;;) {
		size_t room = o->cap - o->n, k = l < room ? l : room;

		memcpy(o->b + o->n, s, k);
		o->n += k;
		if (k == l)
			return;
		cli_ob_write(o);
		s += k;
		l -= k;
	}
}

/* The bytes a JSON string holds as they are: printable ASCII but '"' and '\\'. */
static const bool json_plain[256] = {
	[0x20 ... 0x21] = true, /* '"' is 0x22 */
	[0x23 ... 0x5b] = true, /* '\\' is 0x5c */
	[0x5d ... 0x7f] = true,
};

/* The character at @s, escaped: one control or quoting byte, or one UTF-8 sequence. */
static const char *json_escape(struct cli_obuf *o, const char *s, const char *end)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char ch = (unsigned char)*s;
	size_t l = ch < 0x80 ? 1 : vgpu_utf8_seq_len(s, (size_t)(end - s));

	if (l > 1) {
		cli_ob_put(o, s, l);
		return s + l;
	}
	if (l == 0) {
		CLI_OB_LIT(o, "\\ufffd");
	} else if (ch == '"' || ch == '\\') {
		char e[2] = { '\\', (char)ch };

		cli_ob_put(o, e, sizeof(e));
	} else if (ch == '\n') {
		CLI_OB_LIT(o, "\\n");
	} else if (ch == '\t') {
		CLI_OB_LIT(o, "\\t");
	} else {
		char e[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };

		cli_ob_put(o, e, sizeof(e));
	}
	return s + 1;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped, and
 * any byte that is not valid UTF-8 written as U+FFFD, so the output is
 * valid JSON whatever a host's files hold (the reader warns about them).
 */
void cli_json_string(struct cli_obuf *o, const char *s, size_t len)
{
	const char *end = s + len;

	CLI_OB_LIT(o, "\"");
	while (s < end) {
		const char *run = s;

		/* printable ASCII, nearly all of it, goes out in one piece */
		while (s < end && json_plain[(unsigned char)*s])
			s++;
		cli_ob_put(o, run, (size_t)(s - run));
		if (s < end)
			s = json_escape(o, s, end);
	}
	CLI_OB_LIT(o, "\"");
}

/* A value: a number as it is, a string, or newline-separated items as an array. */
void cli_json_str(FILE *f, const char *s)
{
	struct cli_obuf o;

	cli_ob_init(&o, f, 256);
	if (s)
		cli_json_string(&o, s, strlen(s));
	else
		CLI_OB_LIT(&o, "null");
	cli_ob_write(&o);
	free(o.b);
}

void cli_json_value(struct cli_obuf *o, enum col_kind kind, const char *v, size_t len)
{
	const char *end = v + len;

	if (kind == COL_NUM || kind == COL_SIZE_MIB) {
		cli_ob_put(o, v, len);
	} else if (kind == COL_ARRAY) {
		CLI_OB_LIT(o, "[");
		while (v < end) {
			const char *nl = memchr(v, '\n', (size_t)(end - v));
			size_t l = nl ? (size_t)(nl - v) : (size_t)(end - v);

			cli_json_string(o, v, l);
			v += l;
			if (v < end) {
				v++;
				CLI_OB_LIT(o, ", ");
			}
		}
		CLI_OB_LIT(o, "]");
	} else {
		cli_json_string(o, v, len);
	}
}
