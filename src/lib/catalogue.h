/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * catalogue.h - the catalogue of driver, kernel and QEMU messages that
 * vgpuctl diagnose reads logs with (data/catalogue.tsv): per row an id, a
 * kind (root cause, symptom, context, noise), a POSIX extended regular
 * expression, the cause, the next step and the public source it was learned
 * from; and the decoding of the NVIDIA status codes and Xids the rows
 * capture.  Pure: the caller reads the file, this parses and matches text.
 */
#ifndef VGPU_CATALOGUE_H
#define VGPU_CATALOGUE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"

enum vgpu_cat_kind {
	VGPU_CAT_CAUSE = 0, /* a root cause: the first one is the verdict */
	VGPU_CAT_SYMPTOM, /* a consequence of a cause elsewhere: shown, never the verdict */
	VGPU_CAT_INFO, /* context (a range, a setting) */
	VGPU_CAT_NOISE, /* seen in healthy start-ups: never a cause on its own */
};

enum vgpu_cat_decode {
	VGPU_CAT_DECODE_NONE = 0,
	VGPU_CAT_DECODE_STATUS, /* group 1: an NVIDIA status code (hex) */
	VGPU_CAT_DECODE_XID, /* group 1: an Xid (decimal) */
};

struct vgpu_cat_row {
	char *id;
	enum vgpu_cat_kind kind;
	enum vgpu_cat_decode decode;
	char *regex;
	char *cause;
	char *next;
	char *source;
	char *needle; /* a literal every match contains ("" when none is known): strstr first */
	size_t line; /* its line in the file */
	regex_t re;
};

struct vgpu_catalogue {
	struct vgpu_cat_row *rows;
	size_t n;
};

/**
 * vgpu_cat_kind_str() - a kind as the catalogue spells it.
 * @k: the kind
 * Return: "cause", "symptom", "info" or "noise" (static text).
 */
const char *vgpu_cat_kind_str(enum vgpu_cat_kind k);

/**
 * vgpu_catalogue_parse() - parse a catalogue's text (data/catalogue.tsv).
 * @ctx: the error context
 * @text: the file's contents, NUL-terminated
 * @path: the file's name, for messages ("PATH:LINE: ...")
 * @out: the catalogue, on success; free with vgpu_catalogue_clear()
 * Return: 0, or -EINVAL with the first malformed row named by file and line.
 */
int vgpu_catalogue_parse(struct vgpu_ctx *ctx, const char *text, const char *path,
			 struct vgpu_catalogue *out);

/**
 * vgpu_catalogue_clear() - free a catalogue's rows.
 * @cat: the catalogue (may be empty)
 */
void vgpu_catalogue_clear(struct vgpu_catalogue *cat);

/**
 * vgpu_catalogue_match() - the row of one log line: the first row, in file
 * order, whose expression matches it.
 * @cat: the catalogue
 * @line: the line, NUL-terminated, without its newline
 * @code: the captured status code or Xid of a row that decodes one, else
 *        left alone (NULL: not wanted)
 * Return: the row (borrowed from @cat), or NULL when none matches.
 */
const struct vgpu_cat_row *vgpu_catalogue_match(const struct vgpu_catalogue *cat, const char *line,
						unsigned long *code);

/**
 * vgpu_catalogue_row_matches() - whether one row's expression matches a line.
 * @row: the row
 * @line: the line, NUL-terminated
 * Return: true when it matches.
 */
bool vgpu_catalogue_row_matches(const struct vgpu_cat_row *row, const char *line);

/**
 * vgpu_status_name() - an NVIDIA resource manager status code's name
 * (open-gpu-kernel-modules, src/common/sdk/nvidia/inc/nvstatuscodes.h).
 * @code: the status code
 * Return: "INSUFFICIENT_RESOURCES" and the like (static text), or NULL when
 * the table does not know it.
 */
const char *vgpu_status_name(unsigned long code);

/**
 * vgpu_xid_info() - an Xid's name and NVIDIA's resolution bucket (immediate
 * action) from the Xid catalogue
 * (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).
 * @xid: the Xid
 * @bucket: its bucket ("RESTART_APP", "RESET_GPU", ...), on success
 * Return: its description (static text), or NULL when the table does not know it.
 */
const char *vgpu_xid_info(unsigned long xid, const char **bucket);

#endif
