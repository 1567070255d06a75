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
/**
 * vgpu_read_gpus() - add every NVIDIA GPU below sys/bus/pci/devices to @m,
 * with its parents: SR-IOV VFs through the PF's virtfn<N> links, or the PF
 * itself when it has mdev_supported_types.
 * @ctx: errors, and warnings about damaged files (those devices are skipped)
 * @fs: the host root
 * @m: the model the GPUs are added to
 *
 * A GPU is a display controller (class 0x0300 or 0x0302) of vendor
 * VGPU_PCI_VENDOR_NVIDIA that is not a VF.  A tree without sys/bus/pci/devices
 * is warned about and lists no GPUs.
 * Return: 0 or -errno with a message in @ctx (sys/bus/pci/devices cannot be listed).
 */
int vgpu_read_gpus(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m);

/* read-types.c */
/**
 * vgpu_read_types() - read @g's type catalogue and what each parent offers now.
 * @ctx: where warnings about damaged files go (those types are skipped)
 * @fs: the host root
 * @g: the GPU, with its parents read
 *
 * mdev: each parent's mdev_supported_types/nvidia-<N>, name, description and
 * device_api read once per GPU, available_instances per parent.  Vendor VFIO:
 * the catalogue is the union of the VFs' creatable_vgpu_types, and a VF offers
 * a type (1) when its own list names it, else 0.
 * Return: 0 (damage is only warned about).
 */
int vgpu_read_types(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g);
/**
 * vgpu_mdev_locate() - where mdev @uuid is: its parent's BDF from the
 * sys/bus/mdev/devices link ("" when the parent is not a PCI function) and
 * its type id from the mdev_type link (0 when unreadable or not nvidia-<N>).
 * @root: the host root as a directory
 * @uuid: the mdev's UUID (it becomes part of a path: validate it first)
 * @parent: the parent's normalized BDF, or ""; set in every case
 * @type_id: the type id, or 0; set in every case
 * Return: 0, or the readlink's -errno (-ENOENT: no such mdev).
 */
int vgpu_mdev_locate(const struct vgpu_sysdir *root, const char *uuid, char parent[VGPU_BDF_LEN],
		     unsigned *type_id);
/**
 * vgpu_read_mdevs() - mdev instances of the model's parents (sys/bus/mdev/devices).
 * @ctx: where warnings about damaged entries go (those entries are skipped)
 * @fs: the host root
 * @m: the model; each mdev's UUID is added to its parent's mdevs, the parent
 *     marked in use and, if unset, its current_type set to the mdev's type
 *
 * Nothing is read when no GPU of @m is an mdev GPU; no sys/bus/mdev/devices
 * (no mdev driver loaded) means no instances.  mdevs of other parents are ignored.
 * Return: 0 (an unreadable directory is only warned about).
 */
int vgpu_read_mdevs(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m);
/* What vgpu_parse_creatable() appends to: ids[i] is the id of names.items[i]. */
struct vgpu_creatable {
	unsigned *ids;
	struct vgpu_strv names;
};
/**
 * vgpu_parse_creatable() - parse creatable_vgpu_types: an optional
 * "ID : vGPU Name" header, then "ID : name" lines; tolerate tabs and blank
 * lines, report anything else through bad_line.  Linear in the text.
 * @text: the file's text, NUL-terminated
 * @out: the ids and names are appended to @out->ids and @out->names, in file
 *       order; free with vgpu_creatable_clear()
 * @bad_line: called with @data, the 1-based line number and the stripped line
 *            for each line that cannot be parsed (an id of 0 or above
 *            VGPU_MAX_TYPE_ID, no name; a line of VGPU_NAME_FILE_MAX bytes or
 *            more is shown cut to 40 bytes and "..."); NULL: skip them silently
 * @data: passed to @bad_line
 */
void vgpu_parse_creatable(const char *text, struct vgpu_creatable *out,
			  void (*bad_line)(void *data, unsigned lineno, const char *line),
			  void *data);
/**
 * vgpu_creatable_clear() - free what vgpu_parse_creatable() appended.
 * @c: the lists; empty and reusable afterwards (a zeroed struct is fine)
 */
void vgpu_creatable_clear(struct vgpu_creatable *c);
/**
 * vgpu_description_max_instance() - max_instance= of an mdev description, -1 if none.
 * @desc: the type's description ("num_heads=4, ..., max_instance=4"); the key
 *        must start the text or follow ' ', ',' or a newline
 * Return: the value, 0 to VGPU_MAX_INSTANCES, or -1 when the key is absent or
 * its value is not such a number.
 */
long vgpu_description_max_instance(const char *desc);

#endif
