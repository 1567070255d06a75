/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvml.h - NVIDIA's management library, loaded with dlopen() by the
 * commands that need what only the driver knows: MIG mode, GPU instances
 * with their placements, creating GPU instances at a given placement, and
 * the board's full vGPU type table with each type's maxima and GI profile.
 * Never linked: a host without the driver (or a test host) runs without it.
 */
#ifndef VGPU_NVML_H
#define VGPU_NVML_H

#include <stdbool.h>

#include "ctx.h"
#include "mig.h"
#include "model.h"

/* The library's soname, as the driver installs it. */
#define VGPU_NVML_SONAME "libnvidia-ml.so.1"
#define VGPU_NVML_VM_ID_LEN 81 /* NVML_DEVICE_UUID_BUFFER_SIZE and a terminator */

struct vgpu_nvml;

/**
 * vgpu_nvml_open() - load and initialise NVML.
 * @ctx: where the reason goes when it cannot be used
 * @path: the library (a path, or a soname the loader looks up); NULL:
 *        VGPU_NVML_SONAME
 * @out: the handle, on success; free with vgpu_nvml_close()
 *
 * Return: 0; -ENOENT when the library is not there, -ENOSYS when it lacks
 * an entry point vgpuctl needs (a driver too old), -EIO when nvmlInit fails
 * (no driver loaded); each with a one-line message in @ctx.
 */
int vgpu_nvml_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_nvml **out);

/**
 * vgpu_nvml_close() - shut NVML down and unload it (NULL is fine).
 * @n: the handle
 */
void vgpu_nvml_close(struct vgpu_nvml *n);

/**
 * vgpu_nvml_can_place() - does this NVML create GPU instances at a given placement?
 * @n: the handle
 * Return: true when nvmlDeviceCreateGpuInstanceWithPlacement is there.
 */
bool vgpu_nvml_can_place(const struct vgpu_nvml *n);

/**
 * vgpu_nvml_fill() - complete @m with what NVML says about each GPU.
 * @ctx: warnings (a GPU NVML does not know is skipped with one)
 * @n: the handle
 * @m: the model: per GPU, MIG mode (current, pending), framebuffer,
 *     mixed-size mode, the GPU instances with profile and start (gis_exact),
 *     and the supported vGPU types: types the catalogue lacks are added,
 *     and each gets its per-GPU maximum, vGPUs per GI and GI profile.
 */
void vgpu_nvml_fill(struct vgpu_ctx *ctx, struct vgpu_nvml *n, struct vgpu_model *m);

/**
 * vgpu_nvml_gis() - the GPU instances of a GPU with their placements.
 * @ctx: where errors go
 * @n: the handle
 * @b: the board's table (the GIs' profiles point into it)
 * @bus: the GPU's PCI address
 * @gis: the GIs (heap; NULL when none)
 * @n_gis: how many
 * Return: 0, or -errno with a message in @ctx (-EIO: a GI of a profile @b lacks).
 */
int vgpu_nvml_gis(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const struct vgpu_mig_board *b,
		  const char *bus, struct vgpu_mig_gi **gis, size_t *n_gis);

/**
 * vgpu_nvml_create_gi() - create a GPU instance at a placement, with its full
 * compute instance.
 * @ctx: where errors go
 * @n: the handle
 * @bus: the GPU's PCI address
 * @p: the GI profile (its ID and memory slices)
 * @start: the first memory slice
 * @id: the new GI's id, on success
 * Return: 0, or -errno with NVML's reason in @ctx (-ENOSPC: the slices are taken).
 */
int vgpu_nvml_create_gi(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const char *bus,
			const struct vgpu_mig_profile *p, unsigned start, int *id);

/**
 * vgpu_nvml_set_hetero() - turn mixed-size time-sliced mode on or off.
 * @ctx: where errors go
 * @n: the handle
 * @bus: the GPU's PCI address
 * @on: the mode
 * Return: 0; -ENOSYS when this NVML cannot; -EBUSY while a vGPU exists; -errno.
 */
int vgpu_nvml_set_hetero(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const char *bus, bool on);

struct vgpu_mig_host;
struct vgpu_records;

/**
 * vgpu_nvml_mig_source() - NVML's part of a live migration's manifest: per
 * vGPU of @domain (in its owner records' order, as vgpu_mig_manifest_of()
 * lists them) its GPU's ECC mode and active NVLinks, and of the domain's vGPU instance there
 * (nvmlVgpuInstanceGetVmID is the domain's UUID, of the record's type) the
 * metadata and the runtime state size; the driver build from the GPUs' and
 * instances' migration capability bits.
 * @n: the handle; NULL: nothing is filled
 * @recs: the owner records
 * @domain: the domain's name or UUID
 * @h: the manifest vgpu_mig_manifest_of() filled; what NVML does not say stays unknown
 */
void vgpu_nvml_mig_source(struct vgpu_nvml *n, const struct vgpu_records *recs, const char *domain,
			  struct vgpu_mig_host *h);

/**
 * vgpu_nvml_mig_target() - NVML's part of a live migration's offer: for each
 * vGPU given a device, that GPU's ECC mode, its active NVLinks, its migration capability bit
 * (the driver build) and nvmlGetVgpuCompatibility() of the source vGPU's
 * metadata against it.
 * @n: the handle; NULL: nothing is filled
 * @m: the target's model (the GPU of each device)
 * @src: the source's manifest
 * @dst: the offer vgpu_mig_offer() made
 */
void vgpu_nvml_mig_target(struct vgpu_nvml *n, const struct vgpu_model *m,
			  const struct vgpu_mig_host *src, struct vgpu_mig_host *dst);

struct vgpu_sched;

/**
 * vgpu_nvml_sched() - the live vGPU scheduler of a GPU
 * (nvmlDeviceGetVgpuSchedulerState): policy, adaptive round robin with its
 * averaging factor, or the time slice (ns, rounded to ms).
 * @n: the handle; NULL: -ENOSYS
 * @bus: the GPU's PCI address
 * @out: the setting, written only on success
 * Return: 0; -ENOSYS when this NVML cannot tell (too old, not a vGPU
 * host); -ENOENT when no scheduling is active; -errno for NVML's other errors.
 */
int vgpu_nvml_sched(struct vgpu_nvml *n, const char *bus, struct vgpu_sched *out);

/**
 * vgpu_nvml_module_ids() - each GPU's module ID (nvmlDeviceGetModuleId): on an
 * HGX board the physical ID Fabric Manager names the GPU by; nothing else is read.
 * @ctx: warnings (a GPU NVML does not know is skipped with one)
 * @n: the handle
 * @m: the model: each GPU's module_id, -1 when this NVML cannot tell
 */
void vgpu_nvml_module_ids(struct vgpu_ctx *ctx, struct vgpu_nvml *n, struct vgpu_model *m);
/**
 * vgpu_nvml_nvlinks() - how many of a GPU's NVLinks are active
 * (nvmlDeviceGetNvLinkState per link; links the board lacks do not count).
 * @n: the handle; NULL: -ENOSYS
 * @bus: the GPU's PCI address
 * @out: the count, written only on success
 * Return: 0, -ENOSYS (this NVML has no NVLink call), -ENOENT (no such GPU)
 * or -EIO (NVML could not tell).
 */
int vgpu_nvml_nvlinks(struct vgpu_nvml *n, const char *bus, unsigned *out);

/* One active vGPU instance on a GPU, as NVML tells it. */
struct vgpu_nvml_vgpu {
	unsigned type_id; /* its type, 0 when NVML does not say */
	char vm[VGPU_NVML_VM_ID_LEN]; /* the VM ID: the VM's UUID (or a domain ID), "" unknown */
	bool vm_is_uuid; /* @vm is a UUID (NVML_VGPU_VM_ID_UUID), else a domain ID */
};

/**
 * vgpu_nvml_active_vgpus() - the active vGPU instances on a GPU
 * (nvmlDeviceGetActiveVgpus), each with its type and its VM ID
 * (nvmlVgpuInstanceGetVmID): a running VM's vGPU.
 * @n: the handle; NULL: -ENOSYS
 * @bus: the GPU's PCI address
 * @out: room for @max instances
 * @max: how many fit
 * Return: how many were written; -ENOSYS when this NVML cannot tell (no
 * handle, or the calls are missing); -EIO for NVML's errors.
 */
int vgpu_nvml_active_vgpus(struct vgpu_nvml *n, const char *bus, struct vgpu_nvml_vgpu *out,
			   size_t max);

#endif
