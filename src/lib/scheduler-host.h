/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scheduler-host.h - the vGPU scheduler on the host: what each GPU runs now
 * (NVML, else the kernel log), what the modprobe.d files give it at the next
 * driver load, and the one file vgpuctl writes there
 * (etc/modprobe.d/vgpuctl-scheduler.conf).
 */
#ifndef VGPU_SCHEDULER_HOST_H
#define VGPU_SCHEDULER_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "model.h"
#include "scheduler.h"
#include "sysfs.h"

/* The directory of the module options, and vgpuctl's file there. */
#define VGPU_SCHED_DIR "etc/modprobe.d"
#define VGPU_SCHED_FILE "vgpuctl-scheduler.conf"

struct vgpu_nvml;

/* One GPU's scheduler, three ways. */
struct vgpu_sched_row {
	char gpu[VGPU_BDF_LEN];
	struct vgpu_sched live; /* policy NONE: not known */
	const char *live_from; /* "nvml", "kernel log"; NULL when not known */
	struct vgpu_sched conf; /* what the next driver load gives (best effort by default) */
	bool conf_set; /* an RmPVMRL names it (else the driver's default) */
	uint32_t conf_value;
	char conf_from[256]; /* the file, "" for the default */
	enum vgpu_tristate pending; /* configured but not live: a driver reload applies it */
	enum vgpu_tristate hetero; /* mixed-size mode (NVML) */
};

/**
 * vgpu_sched_conf_read() - the scheduler's registry keys of every NAME.conf
 * modprobe reads: etc/modprobe.d, run/modprobe.d, usr/local/lib/modprobe.d,
 * usr/lib/modprobe.d, lib/modprobe.d (a name in an earlier directory hides
 * it in the later ones), in name order (a later file's parameter wins).
 * @ctx: where the error goes
 * @fs: the host root
 * @all: the keys of every file (zeroed first; clear with vgpu_sched_conf_clear())
 * @ours: the keys of vgpuctl's file alone (NULL: not wanted)
 * Return: 0 (no such directory: none), or -errno with a message naming the file
 * (a malformed line, a file that cannot be read).
 */
int vgpu_sched_conf_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_sched_conf *all,
			 struct vgpu_sched_conf *ours);

/**
 * vgpu_sched_rows() - every GPU's scheduler: live, configured, pending.
 * @ctx: where the error goes
 * @fs: the host root
 * @n: NVML (NULL: the kernel log only); a GPU it does not answer for is
 *     looked up in the last scheduler lines of var/log/kern.log, messages or syslog
 * @m: the host's GPUs (their mixed-size mode)
 * @rows: one per GPU of @m, in its order (heap)
 * Return: 0 or -errno as vgpu_sched_conf_read() (then *@rows is NULL).
 */
int vgpu_sched_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_nvml *n,
		    const struct vgpu_model *m, struct vgpu_sched_row **rows);

/* How long vgpu_sched_set() waits for another run's host lock (as assign and release). */
#define VGPU_SCHED_LOCK_WAIT_MS 30000

/* One setting asked for: for one GPU, or for every GPU. */
struct vgpu_sched_want {
	const char *gpu; /* a normalized address of the model; NULL: every GPU */
	struct vgpu_sched s;
};

/**
 * vgpu_sched_set() - give GPUs a scheduler at the next driver load: the one
 * file vgpuctl owns in etc/modprobe.d is replaced atomically
 * (NVreg_RegistryDwords for a setting of every GPU, NVreg_RegistryDwordsPerDevice
 * for those of one GPU; the other registry keys and GPUs the driver gets now
 * are kept).
 * @ctx: where the error goes; warnings when a later file overrides it
 * @fs: the host root; unless @dry_run its host lock is taken (waiting up to
 *      VGPU_SCHED_LOCK_WAIT_MS) for the read and the write and released after,
 *      so the caller must not hold it
 * @m: the host's GPUs (their mixed-size mode)
 * @w: the settings (at most one for every GPU, one per GPU)
 * @n: how many (at least one)
 * @dry_run: write nothing
 * @text: the file's new text (heap), on success
 * @changed: whether it differs from the file there now
 * Return: 0; -ERANGE or -EINVAL for a setting NVIDIA does not document;
 * -EINVAL when fixed share is asked of a GPU in mixed-size mode;
 * -EWOULDBLOCK when another run holds the host lock past the wait; -errno of
 * the read or write, each with a message.
 */
int vgpu_sched_set(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
		   const struct vgpu_sched_want *w, size_t n, bool dry_run, char **text,
		   bool *changed);

#endif
