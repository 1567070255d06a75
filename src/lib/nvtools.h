/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvtools.h - NVIDIA's programs as vgpuctl drives them: nvidia-smi for MIG
 * mode and GPU instances, sriov-manage for VFs.  Always -i <PCI address>
 * (indexes move), an argv and a deadline (exec.h), and every change read
 * back; the driver's own words are quoted when a step fails.
 *
 * With @dry_run, the changing calls log "would run: ARGV" at LOG_NOTICE and
 * change nothing; the reading calls still run.
 */
#ifndef VGPU_NVTOOLS_H
#define VGPU_NVTOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "mig.h"

#define VGPU_NVIDIA_SMI_DEFAULT "nvidia-smi"
#define VGPU_SRIOV_MANAGE_DEFAULT "/usr/lib/nvidia/sriov-manage"

struct vgpu_nvtools {
	const char *nvidia_smi; /* a path, or a name looked up in PATH */
	const char *sriov_manage;
	long timeout_ms; /* per call; 0: the default (5 minutes: GPU resets are slow) */
	int unbind_tries; /* sriov-manage tries while a client holds the GPU; 0: 5 */
	long unbind_wait_ms; /* between tries; 0: 2 s */
	bool dry_run;
};

/** vgpu_nv_mig_mode() - MIG mode of @bus now and pending: 1, 0, or -1 when not supported. */
int vgpu_nv_mig_mode(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		     int *current, int *pending);
/** vgpu_nv_set_mig() - switch MIG mode and read it back; pending-only is an error naming why. */
int vgpu_nv_set_mig(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus, bool on);
/** vgpu_nv_gis() - the GPU instances of @bus (none when MIG mode is off). */
int vgpu_nv_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const struct vgpu_mig_board *b,
		const char *bus, struct vgpu_mig_gi **gis, size_t *n);
/** vgpu_nv_create_gis() - create GIs of these profiles in this order, each with its full CI. */
int vgpu_nv_create_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		       const struct vgpu_mig_gi *gis, size_t n);
/** vgpu_nv_destroy_gis() - destroy every CI, then every GI of @bus. */
int vgpu_nv_destroy_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);
/**
 * vgpu_nv_enable_vfs() - sriov-manage -e @bus; "unbindLock" (a client such
 * as DCGM holds the GPU) is retried a bounded number of times, then named.
 */
int vgpu_nv_enable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);
/** vgpu_nv_disable_vfs() - sriov-manage -d @bus. */
int vgpu_nv_disable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);

#endif
