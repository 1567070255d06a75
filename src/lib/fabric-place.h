/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric-place.h - which NVSwitch fabric partition a VM with N vGPUs takes
 * on an HGX board in vGPU mode (FABRIC_MODE=2), where every VM, even one
 * with a single vGPU, runs in an active partition: one vGPU on each GPU of
 * a supported, inactive partition of exactly N GPUs.  Pure: the fabric,
 * the partitions taken and the GPUs that can take the type now in, the
 * choice out.
 */
#ifndef VGPU_FABRIC_PLACE_H
#define VGPU_FABRIC_PLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "fabric.h"
#include "util.h"

struct vgpu_place_in {
	const struct vgpu_fabric *fabric; /* the partitions, from vgpu_fm_read() */
	/* partitions taken: active per Fabric Manager (also ->active), or held in owner records */
	const unsigned *taken;
	size_t n_taken;
	/* GPUs (PCI addresses) that can take the wanted vGPU type now (the capacity model) */
	const struct vgpu_strv *fit;
	size_t ngpus; /* the VM's vGPUs: the partition's size */
};

struct vgpu_place {
	unsigned id; /* the partition */
	size_t ngpus;
	char gpu[VGPU_FABRIC_MAX_GPUS][VGPU_BDF_LEN]; /* its GPUs, sorted by PCI address */
};

/**
 * vgpu_fabric_taken() - is partition @id among @in's taken ones, or active?
 * @in: the fabric and the partitions taken
 * @id: a partition
 * Return: true when it cannot be activated for another VM now.
 */
bool vgpu_fabric_taken(const struct vgpu_place_in *in, unsigned id);

/**
 * vgpu_fabric_gpu_taken() - is GPU @bus in a taken (or active) partition?
 * @in: the fabric and the partitions taken
 * @bus: the GPU's PCI address
 * @by: the partition that holds it, when it is (NULL: not wanted)
 * Return: true when it is.
 */
bool vgpu_fabric_gpu_taken(const struct vgpu_place_in *in, const char *bus, unsigned *by);

/**
 * vgpu_fabric_free_count() - how many partitions could be activated now:
 * supported, not taken, every GPU known and in no taken partition.
 * @in: the fabric and the partitions taken (@in->fit and ngpus unused)
 * Return: the count.
 */
size_t vgpu_fabric_free_count(const struct vgpu_place_in *in);

/**
 * vgpu_fabric_place() - a partition of exactly @in->ngpus GPUs for one VM:
 * supported, not taken, each GPU known, in @in->fit and in no taken
 * partition.  Best fit: the candidate that breaks the fewest free larger
 * partitions (so 2-, 4- and 8-GPU VMs side by side fill the board without
 * splitting one), ties to the lowest id.
 * @ctx: the reason when none is free
 * @in: the fabric, what is taken, the GPUs that fit, the size
 * @out: the choice, on success
 * Return: 0; -ENOSPC "no free partition of N GPUs" with what blocks each
 * candidate, -EINVAL when the fabric has no partition of that size at all.
 */
int vgpu_fabric_place(struct vgpu_ctx *ctx, const struct vgpu_place_in *in, struct vgpu_place *out);

struct vgpu_model;
struct vgpu_records;

/**
 * vgpu_fabric_place_vgpus() - vgpu_fabric_place() for a domain with @n vGPUs
 * of @profiles: the partitions other domains' owner records hold (@recs,
 * expired ones dropped by the caller) are taken, and the GPUs that fit are
 * those with room for every profile (the capacity model).
 * @ctx: the reason when none is free
 * @m: the host's model (VGPU_READ_TYPES)
 * @recs: its owner records
 * @self: the domain's UUID (normalized): its own records take nothing
 * @profiles: the vGPUs' types
 * @n: how many: the partition's size
 * @fabric: the partitions, from vgpu_fm_read()
 * @out: the choice, on success
 * Return: 0; -errno as vgpu_fabric_place().
 */
int vgpu_fabric_place_vgpus(struct vgpu_ctx *ctx, const struct vgpu_model *m,
			    const struct vgpu_records *recs, const char *self,
			    const char *const *profiles, size_t n, const struct vgpu_fabric *fabric,
			    struct vgpu_place *out);

#endif
