/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the host readers (read-pci.c, read-types.c, read-topo.c) and
 * their unit tests; the CLI never includes this.
 */
#ifndef VGPU_READ_PRIV_H
#define VGPU_READ_PRIV_H

#include "ctx.h"
#include "model.h"
#include "sysfs.h"

/* Bounds for numbers read from the host: outside them a file is damaged. */
#define VGPU_MAX_NUMA_NODE 1023 /* MAX_NUMNODES is at most 1024 */
#define VGPU_MAX_SRIOV_VFS 65535 /* sriov_totalvfs is a u16 */
#define VGPU_MAX_TYPE_ID 0xffffffL
#define VGPU_MAX_INSTANCES 65536L
#define VGPU_MAX_HUGEPAGES (1L << 24) /* 16 PiB of 1 GiB pages */
#define VGPU_MAX_MEM_KIB (1ULL << 50) /* 1 EiB */
#define VGPU_NAME_FILE_MAX 1024 /* a type name longer than this is damage */

/* read-pci.c */
int vgpu_read_gpus(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m);

/* read-types.c */
int vgpu_read_types(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g);
/*
 * vgpu_mdev_locate() - where mdev @uuid is: its parent's BDF from the
 * sys/bus/mdev/devices link ("" when the parent is not a PCI function) and
 * its type id from the mdev_type link (0 when unreadable or not nvidia-<N>).
 * Return: 0, or the readlink's -errno (-ENOENT: no such mdev).
 */
int vgpu_mdev_locate(const struct vgpu_sysdir *root, const char *uuid, char parent[VGPU_BDF_LEN],
		     unsigned *type_id);
/* vgpu_read_mdevs() - mdev instances of the model's parents (sys/bus/mdev/devices). */
int vgpu_read_mdevs(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m);
/*
 * creatable_vgpu_types: an optional "ID : vGPU Name" header, then "ID : name"
 * lines; tolerate tabs and blank lines, report anything else through bad_line.
 * Linear in the text.  Return: 0 (ids/names appended to @ids and @names).
 */
struct vgpu_creatable {
	unsigned *ids;
	struct vgpu_strv names;
};
void vgpu_parse_creatable(const char *text, struct vgpu_creatable *out,
			  void (*bad_line)(void *data, unsigned lineno, const char *line),
			  void *data);
/* vgpu_creatable_clear() - free what vgpu_parse_creatable() appended. */
void vgpu_creatable_clear(struct vgpu_creatable *c);
/* vgpu_description_max_instance() - max_instance= of an mdev description, -1 if none. */
long vgpu_description_max_instance(const char *desc);

#endif
