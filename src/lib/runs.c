// SPDX-License-Identifier: LGPL-2.1-or-later
/* runs.c - the last apply/assert result per label (runs.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "runs.h"
#include "sysfs-state.h"
#include "util.h"

/*
 * The longest name kept: the writer's temporary file is ".NAME.PID.tmp"
 * (vgpu_sysfs_replace(); a PID has at most 7 digits), and a name longer
 * than NAME_MAX cannot be created.
 */
#define RUN_NAME_MAX (NAME_MAX - 13)

/* A file name: COMMAND@LABEL with the label's other bytes as %XX; @len: RUN_NAME_MAX + 1. */
static int run_name(const struct vgpu_run *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s@", r->command);
	size_t used;

	if (n < 0 || (size_t)n >= len || !r->command[0])
		return -ENAMETOOLONG;
	used = (size_t)n;
	for (const unsigned char *p = (const unsigned char *)r->label; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';

		/* a label too long for a file name is not kept rather than kept as another's */
		if (used + (plain ? 1 : 3) >= len)
			return -ENAMETOOLONG;
		if (plain)
			buf[used++] = (char)*p;
		else
			used += (size_t)snprintf(buf + used, len - used, "%%%02X", *p);
	}
	buf[used] = 0;
	return 0;
}

static int unhex(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 :
	       ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
					-1;
}

/* COMMAND@LABEL back into @r; -EINVAL for a name we did not write */
static int parse_name(const char *name, struct vgpu_run *r)
{
	const char *at = strchr(name, '@');
	size_t n = 0;

	if (!at || at == name || (size_t)(at - name) >= sizeof(r->command) || name[0] == '.')
		return -EINVAL;
	memcpy(r->command, name, (size_t)(at - name));
	r->command[at - name] = 0;
	for (const char *p = at + 1; *p; p++) {
		int ch = (unsigned char)*p;

		if (ch == '%') {
			int hi = unhex(p[1]), lo = hi < 0 ? -1 : unhex(p[2]);

			if (lo < 0)
				return -EINVAL;
			ch = hi * 16 + lo;
			p += 2;
		}
		if (n + 1 >= sizeof(r->label) || ch == 0)
			return -EINVAL;
		r->label[n++] = (char)ch;
	}
	r->label[n] = 0;
	return n ? 0 : -EINVAL;
}

int vgpu_runs_save(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_run *r,
		   const char *file)
{
	char name[RUN_NAME_MAX + 1];
	struct vgpu_sysdir d;
	VGPU_AUTOFREE char *data = NULL;
	int rc = run_name(r, name, sizeof(name));

	if (rc < 0)
		return vgpu_error(ctx, rc, "label '%s' is too long to keep its result", r->label);
	/* the file name goes on one line: a newline in it would start a key */
	data = vgpu_asprintf("exit=%d\ntime=%" PRId64 "\ndifferences=%ld\nfile=%s\n", r->exit_code,
			     r->time, r->differences, file && !strchr(file, '\n') ? file : "");
	for (size_t i = 0; i < r->vgpus.n; i++)
		vgpu_append(&data, "vgpu=%s\n", r->vgpus.items[i]);
	rc = vgpu_sysfs_mkdirs_ctx(ctx, fs, &d, VGPU_RUNS_DIR);
	if (rc < 0)
		return rc;
	rc = vgpu_sysfs_replace(&d, name, data, strlen(data));
	if (rc < 0)
		vgpu_error(ctx, rc, "cannot write '%s/%s': %s", VGPU_RUNS_DIR, name, strerror(-rc));
	vgpu_sysdir_close(&d);
	return rc;
}

/* "key=value" lines: exit, time, differences (the others are for people) */
static int parse_body(const char *s, struct vgpu_run *r)
{
	unsigned seen = 0;

	while (*s) {
		size_t l = strcspn(s, "\n");
		char *end;

		if (strncmp(s, "exit=", 5) == 0) {
			long v = strtol(s + 5, &end, 10);

			if (end != s + l || end == s + 5 || v < 0 || v > 255)
				return -EINVAL;
			r->exit_code = (int)v;
			seen |= 1;
		} else if (strncmp(s, "time=", 5) == 0) {
			long long v = strtoll(s + 5, &end, 10);

			if (end != s + l || end == s + 5 || v < 0)
				return -EINVAL;
			r->time = v;
			seen |= 2;
		} else if (strncmp(s, "vgpu=", 5) == 0 && l > 5) {
			vgpu_strv_push(&r->vgpus, vgpu_asprintf("%.*s", (int)(l - 5), s + 5));
		} else if (strncmp(s, "differences=", 12) == 0) {
			long v = strtol(s + 12, &end, 10);

			if (end != s + l || end == s + 12 || v < 0)
				return -EINVAL;
			r->differences = v;
			seen |= 4;
		}
		s += l + (s[l] == '\n');
	}
	return seen == 7 ? 0 : -EINVAL;
}

size_t vgpu_runs_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_run **out)
{
	VGPU_AUTOSTRV names = { 0 };
	struct vgpu_sysdir root;
	size_t n = 0;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &names, "%s", VGPU_RUNS_DIR) < 0)
		names.n = 0; /* none kept yet */
	*out = vgpu_xcalloc(names.n + 1, sizeof(**out));
	for (size_t i = 0; i < names.n; i++) {
		struct vgpu_run *r = &(*out)[n];
		VGPU_AUTOFREE char *body = NULL;
		size_t len = 0;
		int rc;

		if (names.items[i][0] == '.')
			continue; /* a writer's temporary file */
		rc = parse_name(names.items[i], r);
		/* a vgpu= line per vGPU: 64 KiB is thousands */
		if (rc == 0)
			rc = vgpu_sysfs_read_file(&root, 64 * 1024, &body, &len, "%s/%s",
						  VGPU_RUNS_DIR, names.items[i]);
		if (rc == 0)
			rc = parse_body(body, r);
		if (rc < 0) {
			vgpu_strv_clear(&r->vgpus);
			vgpu_warn(ctx, "%s/%s: not a result vgpuctl kept (%s); skipped",
				  VGPU_RUNS_DIR, names.items[i],
				  rc == -EINVAL ? "unexpected content" : strerror(-rc));
			continue;
		}
		n++;
	}
	return n;
}

void vgpu_runs_free(struct vgpu_run *runs, size_t n)
{
	for (size_t i = 0; runs && i < n; i++)
		vgpu_strv_clear(&runs[i].vgpus);
	free(runs);
}

const char *vgpu_runs_config_of(const struct vgpu_run *runs, size_t n, const char *parent,
				unsigned type, const char *mdev)
{
	char want[128];
	const struct vgpu_run *best = NULL;

	snprintf(want, sizeof(want), "%s %u%s%s", parent, type, mdev ? " " : "", mdev ? mdev : "");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(runs[i].command, "apply") != 0 || (best && runs[i].time <= best->time))
			continue;
		for (size_t k = 0; k < runs[i].vgpus.n; k++)
			if (strcmp(runs[i].vgpus.items[k], want) == 0) {
				best = &runs[i];
				break;
			}
	}
	return best ? best->label : NULL;
}
