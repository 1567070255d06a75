/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef VGPU_CATALOG_H
#define VGPU_CATALOG_H

#include "ctx.h"
#include "model.h"

struct vgpu_sysfs;

/*
 * Type catalogues: a vendor-VFIO VF in use drops out of its GPU's creatable
 * lists, and once every VF of a model is in use no list names the larger
 * types (nor the framebuffer they imply).  Each GPU's catalogue (id and
 * name) is kept under ROOT/var/lib/vgpuctl/catalog/<GPU BDF> while it is
 * known, and merged back when the host is read.
 */
#define VGPU_CATALOG_DIR "var/lib/vgpuctl/catalog"
/**
 * vgpu_catalog_save_gpu() - add the types @g lists now that its stored
 * catalogue lacks (a union: nothing stored is dropped).
 * @ctx: where errors go
 * @fs: the host root; ROOT/var/lib/vgpuctl/catalog is created if missing
 * @g: the GPU, read with VGPU_READ_TYPES; one without types is skipped
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_catalog_save_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_gpu *g);
/**
 * vgpu_catalog_save() - vgpu_catalog_save_gpu() for each GPU of @m.
 * @ctx: where errors go
 * @fs: the host root; ROOT/var/lib/vgpuctl/catalog is created if missing
 * @m: the model, read with VGPU_READ_TYPES; GPUs without types are skipped
 *
 * Each file is replaced atomically and holds one "ID NAME" line per type.
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_catalog_save(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m);
/**
 * vgpu_catalog_load() - add the stored types each GPU's catalogue lacks now
 * (damaged lines are warned about and skipped).
 * @ctx: where the warnings go
 * @fs: the host root; no catalogue directory, or no file for a GPU, is no error
 * @m: the model; a type it already has keeps its name
 */
void vgpu_catalog_load(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m);

#endif
