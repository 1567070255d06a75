/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runs.h - the last result of apply and assert per command and config
 * label, kept under ROOT/var/lib/vgpuctl/runs/ for `vgpuctl metrics`
 * (an alert on drift needs to know when the host was last checked and how
 * that went).  One file per command and label, "COMMAND@LABEL" (bytes of
 * the label outside [A-Za-z0-9._-] as %XX), written atomically; content
 * "key=value" lines: exit, time (Unix seconds), differences, file, and for
 * apply one "vgpu=PARENT TYPE[ MDEV]" per vGPU of the config (what vgpus
 * lists as the config's rather than as an orphan).
 */
#ifndef VGPU_RUNS_H
#define VGPU_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "util.h"

#define VGPU_RUNS_DIR "var/lib/vgpuctl/runs"
#define VGPU_RUN_LABEL_MAX 256

struct vgpu_sysfs;

struct vgpu_run {
	char command[16]; /* "apply" or "assert" */
	char label[VGPU_RUN_LABEL_MAX];
	int exit_code; /* 0 matched/done, 1 failed or could not check, 3 differs */
	int64_t time; /* Unix seconds */
	long differences;
	struct vgpu_strv vgpus; /* apply: "PARENT TYPE[ MDEV]" of the config's vGPUs */
};

/**
 * vgpu_runs_save() - keep @r (its file name from command and label).
 * @ctx: where errors go
 * @fs: the host root
 * @r: the result
 * @file: the config file, as given (kept for whoever reads the record)
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_runs_save(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_run *r,
		   const char *file);
/**
 * vgpu_runs_read() - every result kept, sorted by file name; a file that
 * cannot be read or parsed is warned about and skipped.
 * @ctx: where warnings go
 * @fs: the host root
 * @out: the results, never NULL (free with vgpu_runs_free())
 * Return: how many; none when the directory does not exist.
 */
size_t vgpu_runs_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_run **out);
/**
 * vgpu_runs_free() - free what vgpu_runs_read() returned.
 * @runs: the results (NULL is fine)
 * @n: how many
 */
void vgpu_runs_free(struct vgpu_run *runs, size_t n);
/**
 * vgpu_runs_config_of() - the config label whose last apply made the vGPU
 * of type @type on @parent (mdev: with UUID @mdev), the newest if several.
 * @runs: from vgpu_runs_read()
 * @n: how many
 * @parent: the vGPU's parent (VF) address
 * @type: its type ID
 * @mdev: its mdev UUID, NULL for vendor VFIO
 * Return: the label (in @runs), or NULL when no apply made it.
 */
const char *vgpu_runs_config_of(const struct vgpu_run *runs, size_t n, const char *parent,
				unsigned type, const char *mdev);

#endif
