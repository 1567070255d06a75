/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * host.h - the host as every command, apply and the hook see it: the
 * readers' model (read-pci.c, read-types.c, read-topo.c), with the owner
 * records counted in and the stored type catalogues merged back.
 */
#ifndef VGPU_HOST_H
#define VGPU_HOST_H

#include "ctx.h"
#include "model.h"
#include "records.h"
#include "sysfs.h"

/**
 * vgpu_host_read() - read the host below @fs: its GPUs, parents and (with
 * VGPU_READ_TYPES) type catalogues, plus every owner record, so that a VF
 * reserved or claimed by a record counts as taken whether or not its vGPU
 * exists (a --per-start reservation, a vGPU gone after a reboot).
 * @ctx: errors, and warnings about damaged files
 * @fs: the host root
 * @what: VGPU_READ_* flags
 * @out: the model, on success
 * @recs: the records read, on success (NULL: not wanted)
 * Return: 0 or -errno with a message in @ctx; caller frees *out and clears @recs.
 */
int vgpu_host_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned what,
		   struct vgpu_model **out, struct vgpu_records *recs);

/**
 * vgpu_host_warn_unknown_type() - warn about @t if its name is outside
 * NVIDIA's grammar, naming the file it came from.
 * @ctx: where the warning goes (each message is shown once by the CLI)
 * @t: a type of a model
 */
void vgpu_host_warn_unknown_type(struct vgpu_ctx *ctx, const struct vgpu_type *t);
/**
 * vgpu_host_warn_unknown_types() - warn once per type of @m whose name is
 * outside NVIDIA's grammar, naming the file it came from (for the commands
 * that list or choose types).
 * @ctx: where the warnings go
 * @m: a model read with VGPU_READ_TYPES
 */
void vgpu_host_warn_unknown_types(struct vgpu_ctx *ctx, const struct vgpu_model *m);

#endif
