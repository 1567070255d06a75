/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apply.h - bring a host to a host configuration (NVIDIA's mig-parted and
 * vgpu-device-manager formats, hostcfg.h) in the one order that works:
 *   1. MIG mode          set and read back
 *   2. SR-IOV VFs        enabled (rebinding the GPU destroys its GPU
 *                        instances: nothing that must survive comes before)
 *   3. GPU instances     created where the solver places them, largest first
 *   4. vGPUs             created on free parents, read back
 *   5. domains           started, last (apply-host.c)
 * Each step compares before it acts, so a second run changes nothing and a
 * run killed between two steps is completed by the next one.  A host made
 * in the wrong order (GPU instances before VFs) is repaired by the order
 * itself: enabling the VFs wipes the instances, step 3 makes them again.
 *
 * Two layers: the resolution of a configuration against a host model
 * (apply-resolve.c) and the ordered steps (apply.c) are pure over a model
 * and a table of host actions (struct vgpu_apply_ops), so they are
 * unit-tested on hosts built in memory; apply-ops.c gives the real actions
 * (nvidia-smi, sriov-manage, sysfs writes in a transaction) and
 * apply-host.c the whole command (libvirt's domains last).
 */
#ifndef VGPU_APPLY_H
#define VGPU_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "hostcfg.h"
#include "mig.h"
#include "model.h"
#include "nvml.h"
#include "nvtools.h"
#include "records.h"
#include "sysfs.h"

#define VGPU_APPLY_MAX_GIS 64
/* How long apply waits for another run's host lock. */
#define VGPU_APPLY_LOCK_WAIT_MS 30000

/*
 * One "TYPE: COUNT" of vgpu-devices, its type resolved once for every
 * decision (MIG mode, GPU instances, counting): the GPU's type the name, ID
 * or "nvidia-ID" names in its catalogue, else the name read by NVIDIA's
 * grammar in NVIDIA's upper case ("h100-1-10c" is H100-1-10C).
 */
struct vgpu_apply_vgpu {
	const struct vgpu_cfg_count *cfg; /* into the configuration */
	struct vgpu_type_info info; /* backing VGPU_BACKING_UNKNOWN: nothing says */
	unsigned id; /* the type's id, 0 where no catalogue names it */
};

/* What a configuration asks of one GPU. */
struct vgpu_apply_gpu {
	char addr[VGPU_BDF_LEN];
	const struct vgpu_mig_board *board;
	unsigned line; /* the entry that selected it first */
	unsigned mig_line, vgpu_line; /* the mig-configs / vgpu-configs entry that set it */
	int mig; /* -1 not said, 0, 1 */
	bool vfs; /* SR-IOV VFs enabled */
	bool vgpu_section; /* selected by a vgpu-configs entry */
	bool gis_set; /* the GI layout is given (or derived from MIG-backed vGPUs) */
	bool vfs_changed; /* this run enables or disables its VFs (a dry run predicts from it) */
	bool gis_changed; /* this run creates GPU instances (a dry run predicts from it) */
	bool hetero; /* time-sliced vGPUs of several sizes: mixed-size mode */
	struct vgpu_mig_request gis[VGPU_APPLY_MAX_GIS];
	size_t n_gis;
	struct vgpu_apply_vgpu *vgpus;
	size_t n_vgpus;
};

/*
 * The host actions of the steps.  Each returns 0 or -errno with a message
 * in @ctx; @data is struct vgpu_apply's ops_data.  In a dry run the changing
 * ones only say what they would do.
 */
struct vgpu_apply_ops {
	/* MIG mode of GPU @gpu now and pending: VGPU_ON (1), VGPU_OFF (0), or VGPU_UNKNOWN (-1)
	 * when not supported (enum vgpu_tristate's values, vgpu_nv_mig_mode()) */
	int (*mig_mode)(void *data, struct vgpu_ctx *ctx, const char *gpu, int *current,
			int *pending);
	/* switch MIG mode, read back */
	int (*set_mig)(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on);
	/* enable or disable all SR-IOV VFs of @gpu */
	int (*set_vfs)(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on);
	/* the GPU instances of @gpu (heap array), placed on @board's table */
	int (*list_gis)(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
			const char *gpu, struct vgpu_mig_gi **gis, size_t *n);
	/*
	 * create @n GPU instances (and their compute instances) where @gis
	 * places them, beside the @n_have GIs @have that exist
	 */
	int (*create_gis)(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
			  const char *gpu, const struct vgpu_mig_gi *have, size_t n_have,
			  const struct vgpu_mig_gi *gis, size_t n);
	/* destroy every GPU instance of @gpu */
	int (*destroy_gis)(void *data, struct vgpu_ctx *ctx, const char *gpu);
	/* the host as it is now (vgpu_host_read() with VGPU_READ_TYPES) */
	int (*read_host)(void *data, struct vgpu_ctx *ctx, struct vgpu_model **out);
	/* create the vGPU @r describes (no owner record: the configuration owns it) */
	int (*create_vgpu)(void *data, struct vgpu_ctx *ctx, const struct vgpu_record *r);
	/* turn mixed-size time-sliced mode on (NULL: this host cannot) */
	int (*set_hetero)(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on);
};

/* One apply or assert run. */
struct vgpu_apply {
	struct vgpu_ctx *ctx;
	const char *file; /* the configuration, as messages name it */
	bool dry_run; /* say what would change, change nothing */
	bool check; /* assert: every difference into @diffs, change nothing */
	const struct vgpu_apply_ops *ops;
	void *ops_data;
	struct vgpu_model *model; /* the host, owned; replaced after steps that change it */
	struct vgpu_apply_gpu *gpus; /* what the configuration asks, per GPU */
	size_t n_gpus;
	/*
	 * assert: what differs; apply: what is left.  Each difference is the
	 * step that would fix it (kind, GPU, object, profile, count), with
	 * what the config wants and what the host has where known, and its
	 * line for people in @text
	 */
	struct vgpu_steps diffs;
	bool progress; /* after each step that did something: "step N/M (NAME) done in S s" */
};

/**
 * vgpu_apply_resolve() - what @cfg asks of each NVIDIA GPU of @a->model:
 * entries selected by index (NVIDIA GPUs by PCI address, from 0), address
 * or "all", filtered by device ID; MIG-backed vGPUs derive MIG mode and one
 * GPU instance each where no mig-configs entry gives the layout;
 * time-sliced ones need MIG off; vGPUs on SR-IOV GPUs need their VFs.
 * Pure: reads only the model.
 * @a: the run; @a->gpus is filled
 * @cfg: the selected label of a configuration
 * Return: 0, or -EINVAL / -ENODEV / -E2BIG with a "FILE:LINE: ..." message
 * in @a->ctx (a GPU selected twice by one map, an index or address with no
 * GPU, a profile the board has no table for, a mix that cannot be).
 */
int vgpu_apply_resolve(struct vgpu_apply *a, const struct vgpu_hostcfg *cfg);

/**
 * vgpu_apply_gpu_steps() - run the steps for GPU @i of @a->gpus, in order:
 * MIG mode, VFs, GPU instances, mixed-size mode, vGPUs, through @a->ops;
 * the model is read again where a step changed what the next one reads.
 * GPUs do not depend on each other: a caller may run each in a process of
 * its own.
 * @a: a run whose @a->gpus vgpu_apply_resolve() filled
 * @i: the GPU's index in @a->gpus
 * Return: 0 (differences, and vGPUs beyond the configuration, are in
 * @a->diffs) or -errno with "step N (NAME): ..." in @a->ctx (the
 * steps' messages name the GPU).
 */
int vgpu_apply_gpu_steps(struct vgpu_apply *a, size_t i);

/**
 * vgpu_apply_steps() - vgpu_apply_gpu_steps() for every GPU, one after the
 * other, stopping at the first failure.
 * @a: a run whose @a->gpus vgpu_apply_resolve() filled
 * Return: 0 or the first failure's -errno (its message in @a->ctx).
 */
int vgpu_apply_steps(struct vgpu_apply *a);

/**
 * vgpu_apply_clear() - free what a run holds (the model, the resolution,
 * the differences); the configuration and the ops are the caller's.
 * @a: the run
 */
void vgpu_apply_clear(struct vgpu_apply *a);

/* The whole command, on the real host. */
struct vgpu_apply_opts {
	const char *file; /* the configuration file */
	const char *label; /* the label to apply */
	const char *uri; /* libvirt, for start-domains */
	bool dry_run, check;
	struct vgpu_nvtools tools; /* nvidia-smi and sriov-manage */
	struct vgpu_nvml *nvml; /* NVML, borrowed; NULL: nvidia-smi does it all */
	bool progress; /* a person watches (a terminal): each step's number and time */
	/*
	 * NULL, or filled after a successful apply: the config's vGPUs, those of
	 * its types on its GPUs that no owner record claims, "PARENT TYPE" or
	 * "PARENT TYPE MDEV" (kept with the result, runs.h: vgpus lists them as
	 * the config's, not as orphans)
	 */
	struct vgpu_strv *owned;
	/*
	 * NULL, or set true once the configuration was read and has the label:
	 * a result is kept only for a label the config has (a mistyped --config
	 * would leave a record, and an alert on it, for ever)
	 */
	bool *has_label;
	/*
	 * NULL, or the plan of a dry run: each step it would take appended in
	 * order (those before a failure too); the caller clears it
	 * (vgpu_steps_clear()).  NULL: the steps go to the context's step
	 * callback (vgpu_step_report())
	 */
	struct vgpu_steps *steps;
};

/**
 * vgpu_apply_host() - apply (or assert) @o->label of @o->file on the host
 * below @fs: the configuration is read and resolved, then (not for a dry
 * run or assert) decided again under the host lock with the configured
 * GPUs' locks taken; the host lock goes before the slow work, which holds
 * only those GPUs' locks; steps 1 to 4 run with NVIDIA's tools and
 * sysfs writes in one transaction (vGPUs made are destroyed again when a
 * later step fails), then the configuration's domains are started.
 * @ctx: errors; progress at LOG_INFO; a dry run's steps (vgpu_step_report())
 *       unless @o->steps takes them
 * @fs: the host root
 * @o: what to apply and how
 * @diffs: what differs (assert) or is left over (apply), appended: each
 *         the step that would fix it, @want and @have where known, its
 *         line for people in @text; the caller clears it (vgpu_steps_clear())
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_apply_host(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_apply_opts *o,
		    struct vgpu_steps *diffs);

#endif
