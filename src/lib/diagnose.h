/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * diagnose.h - why a vGPU or its VM failed: the host's logs (the kernel log
 * files, the domain's QEMU log) read under the root, the vGPU manager's
 * journal (journalctl -o json), their lines joined on
 * every identity of the object (mdev UUID, the VF and GPU addresses in their
 * full, short and odd forms, the VM's UUID and name, from the owner
 * records), each matched against the message catalogue (catalogue.h); a
 * timeline of the matched lines and a verdict: the first root cause.
 */
#ifndef VGPU_DIAGNOSE_H
#define VGPU_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "catalogue.h"
#include "ctx.h"
#include "records.h"
#include "util.h"

struct vgpu_sysfs;

struct vgpu_diag_query {
	const char *target; /* a domain name, an mdev or VM UUID, a PCI address; NULL: the host */
	long long since; /* Unix seconds: lines before are left out; 0: all */
	long long now; /* Unix seconds: the year of syslog lines that carry none */
	bool timed_only; /* with since: leave out lines whose time is unknown */
	/* journalctl to ask for nvidia-vgpu-mgr's and nvidia-vgpud's journal (-o json); NULL: none
	 */
	const char *journalctl;
};

struct vgpu_diag_entry {
	const char *source; /* the log's path under the root (static, or in vgpu_diag's logs) */
	size_t lineno; /* its line in the part of the log read */
	char *text; /* the line */
	long long when; /* Unix seconds; 0: unknown */
	const struct vgpu_cat_row *row; /* borrowed from the catalogue */
	bool has_code;
	unsigned long code; /* the status code or Xid the row decodes */
	size_t seq; /* the order it was gathered in: ties in time keep it */
	/* repeats of the same line (a boot loop): how many in all (1: none), and the last one */
	size_t count;
	const char *last_source;
	size_t last_lineno;
	long long last_when;
};

struct vgpu_diag {
	struct vgpu_diag_entry *v; /* in time order (a log's own order on ties) */
	size_t n;
	struct vgpu_strv identities; /* what lines were joined on; empty: every line */
	struct vgpu_strv logs; /* the logs read (root-relative paths) */
	const struct vgpu_diag_entry *verdict; /* the first root cause, or NULL */
	const struct vgpu_diag_entry *symptom; /* without a cause: the first symptom, or NULL */
};

/**
 * vgpu_diagnose() - read the logs of @q's object and match them.
 * @ctx: the error context
 * @fs: the host's root
 * @recs: the owner records (for the object's identities)
 * @cat: the catalogue
 * @q: what to diagnose, and since when
 * @out: the timeline and verdict, on success; free with vgpu_diag_clear()
 * Return: 0, or -EINVAL for a target that is no domain name, UUID or PCI address.
 */
int vgpu_diagnose(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_records *recs,
		  const struct vgpu_catalogue *cat, const struct vgpu_diag_query *q,
		  struct vgpu_diag *out);

/**
 * vgpu_diag_kernel() - the kernel's log lines the catalogue knows, whatever
 * they name: dev/kmsg's records (read without blocking, bounded) and the
 * syslog files' lines less their copies of those records, each log's tail
 * read once, as vgpu_diagnose() reads them.  The entries are in the order
 * read (dev/kmsg first), not ordered or folded (no vgpu_diag_finish()).
 * @fs: the host's root
 * @cat: the catalogue
 * @q: since and now (its target and journalctl are not used)
 * @out: the entries and the logs read; free with vgpu_diag_clear()
 */
void vgpu_diag_kernel(struct vgpu_sysfs *fs, const struct vgpu_catalogue *cat,
		      const struct vgpu_diag_query *q, struct vgpu_diag *out);

/**
 * vgpu_diag_lines() - match one log's text: the pure part of vgpu_diagnose().
 * @cat: the catalogue
 * @ids: the identities a line must name (case-insensitive, as a whole word); empty: any line
 * @source: the log's name, kept in the entries (must outlive @out)
 * @text: the log's text, NUL-terminated
 * @all_lines: every line belongs to the object (the domain's own QEMU log)
 * @q: since and now
 * @out: the entries are appended here; call vgpu_diag_finish() after the last log
 */
void vgpu_diag_lines(const struct vgpu_catalogue *cat, const struct vgpu_strv *ids,
		     const char *source, const char *text, bool all_lines,
		     const struct vgpu_diag_query *q, struct vgpu_diag *out);

/**
 * vgpu_diag_finish() - order the timeline, fold repeats and find the verdict:
 * the first root-cause line (never noise, info or a symptom).  A line that
 * repeats an earlier one (the same row and code, the same text but for its
 * time and the numbers in brackets: "[ 2720.206992]", a process ID) is
 * folded into that one's count and last place: a boot loop's failure is
 * shown once.
 * @d: the entries vgpu_diag_lines() gathered
 */
void vgpu_diag_finish(struct vgpu_diag *d);

/**
 * vgpu_diag_parse_time() - a log line's time, or --since's: "2026-11-28T19:02:11[.frac][Z|+hh:mm]",
 * "2026-11-28 19:02:11", "2026-11-28" (local time without a zone), or syslog's
 * "Nov 28 19:02:11" (local time, the year of @now or the one before).
 * @s: the text, at its start
 * @now: Unix seconds
 * @out: Unix seconds, on success
 * Return: the number of characters read, or 0 when @s starts with no time.
 */
size_t vgpu_diag_parse_time(const char *s, long long now, long long *out);

/**
 * vgpu_diag_journal_text() - journalctl -o json's records as log lines:
 * "2026-11-28T19:02:11.123456Z IDENTIFIER[PID]: MESSAGE" (the time from
 * __REALTIME_TIMESTAMP), one per record that has a MESSAGE string.
 * @json: journalctl's output, one JSON object per line, NUL-terminated
 * Return: the text, allocated; caller frees.
 */
char *vgpu_diag_journal_text(const char *json);

/**
 * vgpu_diag_clear() - free a diagnosis.
 * @d: the diagnosis (may be empty)
 */
void vgpu_diag_clear(struct vgpu_diag *d);

#endif
