/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read-topo.h - the host's NUMA nodes and CPUs (read-topo.c): what pinning
 * plans against.
 */
#ifndef VGPU_READ_TOPO_H
#define VGPU_READ_TOPO_H

#include "ctx.h"
#include "model.h"
#include "sysfs.h"

/**
 * vgpu_model_read_topology() - read only the NUMA/CPU topology into @t.
 * @ctx: errors, and warnings about damaged files
 * @fs: the host root
 * @t: an initialised (zeroed or earlier read) topology; replaced on success,
 *     its old arrays freed
 *
 * Online CPUs come from cpu/online, else cpu/present, else the cpu<N>
 * directories; nodes from node/online, else the node<N> directories, else
 * one node 0 holding every CPU.  Damaged files are warned about and skipped.
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no CPUs found);
 * free @t with vgpu_topology_clear().
 */
int vgpu_model_read_topology(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_topology *t);

#endif
