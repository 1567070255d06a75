/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by apply on the real host: apply-ops.c (the host
 * actions) and apply-host.c (the command).  Nothing else includes this.
 */
#ifndef VGPU_APPLY_PRIV_H
#define VGPU_APPLY_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "apply.h"
#include "mig.h"
#include "txn.h"

/* What the real actions work with. */
struct apply_host {
	struct vgpu_sysfs *fs;
	const struct vgpu_nvtools *tools;
	struct vgpu_nvml *nvml; /* NULL: nvidia-smi alone */
	bool said_fallback;
	bool one_gpu; /* a GPU's own process: other GPUs may be half-made under it */
	const char *gpu; /* the GPU of that process */
	bool keep_catalog; /* under the lock: each reading adds to the stored catalogues */
	/* nvidia-smi mig -lgi of lgi_gpu, read since our last change to its GIs */
	char lgi_gpu[VGPU_BDF_LEN];
	struct vgpu_mig_gi *lgi;
	size_t n_lgi;
	struct vgpu_txn txn; /* the vGPUs created, destroyed again on failure */
};

/* The real actions (apply-ops.c); their data is a struct apply_host. */
extern const struct vgpu_apply_ops apply_host_ops;
/* Forget the kept nvidia-smi GI listing: the host lock is taken again. */
void apply_lgi_forget(struct apply_host *h);
/* Read the host into *@out, with the GIs NVML or nvidia-smi report. */
int apply_read_host(struct apply_host *h, struct vgpu_ctx *ctx, struct vgpu_model **out);
/* Say once that nvidia-smi stands in for NVML. */
void apply_say_fallback(struct apply_host *h, struct vgpu_ctx *ctx);
#endif
