/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvtools.h - NVIDIA's programs as vgpuctl drives them: nvidia-smi for MIG
 * mode and GPU instances, sriov-manage for VFs.  Always -i <PCI address>
 * (indexes move), an argv and a deadline (exec.h), and every change read
 * back; the driver's own words are quoted when a step fails.
 *
 * With @dry_run, the changing calls report a step ("run: ARGV", with its
 * kind, GPU and count: vgpu_step_report()) and change nothing; the reading
 * calls still run.
 */
#ifndef VGPU_NVTOOLS_H
#define VGPU_NVTOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "mig.h"

#define VGPU_NVIDIA_SMI_DEFAULT "/usr/bin/nvidia-smi"
#define VGPU_SRIOV_MANAGE_DEFAULT "/usr/lib/nvidia/sriov-manage"

struct vgpu_nvtools {
	const char *nvidia_smi; /* an absolute path (a name is run as a path, never looked up in
				   PATH) */
	const char *sriov_manage;
	long timeout_ms; /* per call; 0: the default (5 minutes: GPU resets are slow) */
	int unbind_tries; /* sriov-manage tries while a client holds the GPU; 0: 5 */
	long unbind_wait_ms; /* between tries; 0: 2 s */
	bool dry_run;
};

/**
 * vgpu_nv_mig_mode() - MIG mode of @bus now and pending, as enum
 * vgpu_tristate's values (model.h) in an int: VGPU_ON (1), VGPU_OFF (0), or
 * VGPU_UNKNOWN (-1) where the GPU does not support MIG ("[N/A]").
 * @ctx: where errors go
 * @t: the programs and their deadline; runs even in a dry run (it only reads)
 * @bus: the GPU's PCI address, passed to nvidia-smi -i
 * @current: the mode now (VGPU_ON, VGPU_OFF, VGPU_UNKNOWN), on success
 * @pending: the mode after the next GPU reset (the same values), on success
 * Return: 0 or -errno with a message in @ctx (vgpu_exec_ok()'s, or -EINVAL
 * for output that is not one "BUS, CURRENT, PENDING" line).
 */
int vgpu_nv_mig_mode(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		     int *current, int *pending);
/**
 * vgpu_nv_set_mig() - switch MIG mode and read it back; pending-only is an error naming why.
 * @ctx: where errors go
 * @t: the programs and their deadline; in a dry run only its step is reported
 * @bus: the GPU's PCI address
 * @on: enable (nvidia-smi -mig 1) or disable (-mig 0)
 * Return: 0 or -errno with a message in @ctx: -EBUSY when the mode read back
 * is still the old one (quoting nvidia-smi's last line, such as "In use by
 * another client"), else vgpu_exec_ok()'s or vgpu_nv_mig_mode()'s error.
 */
int vgpu_nv_set_mig(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus, bool on);
/**
 * vgpu_nv_gis() - the GPU instances of @bus (none when MIG mode is off).
 * @ctx: where errors go
 * @t: the programs and their deadline; runs even in a dry run (it only reads)
 * @b: the GPU's board table, which the listed profiles must be of
 * @bus: the GPU's PCI address
 * @gis: the GIs (caller frees), NULL when none; set to NULL first in every case
 * @n: the number of *@gis; set to 0 first in every case
 *
 * nvidia-smi mig -lgi's non-zero exit for "No GPU instances found" is no error.
 * Return: 0 or -errno with a message in @ctx (vgpu_exec()'s, -EIO for a failed
 * nvidia-smi, -EINVAL for output vgpu_mig_parse_lgi() refuses).
 */
int vgpu_nv_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const struct vgpu_mig_board *b,
		const char *bus, struct vgpu_mig_gi **gis, size_t *n);
/**
 * vgpu_nv_create_gis() - create GIs of these profiles in this order, each with its full CI.
 * @ctx: where errors go
 * @t: the programs and their deadline; in a dry run only its step is reported
 * @bus: the GPU's PCI address
 * @gis: the GIs to create, as vgpu_mig_solve() orders them; only their profile
 *       IDs are passed (nvidia-smi mig -cgi ID,... -C)
 * @n: the number of @gis; 0 runs nothing
 * Return: 0 or -errno with a message in @ctx (vgpu_exec_ok()'s).
 */
int vgpu_nv_create_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		       const struct vgpu_mig_gi *gis, size_t n);
/**
 * vgpu_nv_set_hetero() - nvidia-smi vgpu -i BUS -shm 1|0: mixed-size mode.
 * @ctx: where errors go
 * @t: the tools
 * @bus: the GPU
 * @on: the mode
 * Return: 0 or -errno with nvidia-smi's message in @ctx.
 */
int vgpu_nv_set_hetero(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		       bool on);
/**
 * vgpu_nv_destroy_gis() - destroy every CI, then every GI of @bus.
 * @ctx: where errors go
 * @t: the programs and their deadline; in a dry run only its step is reported
 * @bus: the GPU's PCI address
 *
 * A failing -dci (a GI without CIs has nothing to destroy) is not an error:
 * -dgi decides.
 * Return: 0 or -errno with a message in @ctx (vgpu_exec_ok()'s, for -dgi).
 */
int vgpu_nv_destroy_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);
/**
 * vgpu_nv_enable_vfs() - sriov-manage -e @bus; "unbindLock" (a client such
 * as DCGM holds the GPU) is retried a bounded number of times, then named.
 * @ctx: where errors go, and a LOG_INFO line before each retry
 * @t: the programs, the deadline, and unbind_tries / unbind_wait_ms for the
 *     retries; in a dry run only its step is reported
 * @bus: the GPU's PCI address
 * Return: 0 or -errno with a message in @ctx (vgpu_exec_ok()'s; after the last
 * unbindLock try, a message that names the client as the cause).
 */
int vgpu_nv_enable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);
/**
 * vgpu_nv_disable_vfs() - sriov-manage -d @bus.
 * @ctx: where errors go
 * @t: the programs and their deadline; in a dry run only its step is reported
 * @bus: the GPU's PCI address
 * Return: 0 or -errno with a message in @ctx (vgpu_exec_ok()'s).
 */
int vgpu_nv_disable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus);

#endif
