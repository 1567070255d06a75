/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * live.h - creating and destroying vGPUs on a host.
 *
 * Every write goes through vgpu_sysfs_write() and is confirmed by reading
 * back (vendor VFIO: current_vgpu_type reads the id; mdev:
 * sys/bus/mdev/devices/<uuid> exists with the right mdev_type).  Values
 * become paths only after validation (PCI address, UUID, decimal id).
 */
#ifndef VGPU_LIVE_H
#define VGPU_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "params.h"
#include "records.h"
#include "sysfs.h"

/**
 * vgpu_live_create() - create the vGPU @r describes.  Already there with
 * the same type and parent: nothing to do (*created false).  Another vGPU in
 * the way: -EBUSY / -EEXIST.  The driver's errno otherwise, with its usual
 * meaning in the message.
 * @ctx: where errors go
 * @fs: the host root
 * @r: the vGPU's record (vendor VFIO: its type id is written to the VF's
 *     nvidia/current_vgpu_type; mdev: its UUID to the type's create)
 * @created: false first; true once the write took effect, even when the
 *           read-back then fails (the caller must still free it)
 * Return: 0 or -errno with a message in @ctx (-EINVAL: the record does not
 * validate; -EIO: the read-back does not show the vGPU).
 */
int vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *created);
/* How long a free waits for the driver before it goes on without vgpuctl's locks. */
#define VGPU_LIVE_FREE_WAIT_MS 3000
/**
 * vgpu_live_destroy() - free the vGPU @r describes, only if it is there as
 * recorded: of @r's type and, for an mdev, on @r's parent.  Gone already:
 * nothing to do (*freed false).  Vendor VFIO: `0` is written only to a VF
 * that holds a vGPU, retried with bounded backoff on EPERM/EBUSY while QEMU
 * exits.  mdev: `remove` is never written while a process holds the mdev's
 * VFIO group or its iommufd cdev open (-EBUSY).  The driver gets
 * VGPU_LIVE_FREE_WAIT_MS for the write: a slower one goes on without the
 * caller (vgpu_sysfs_write_bounded()), which can let its locks go.
 * @ctx: where errors go
 * @fs: the host root (its proc/ is searched for holders of the device files)
 * @r: the vGPU's record
 * @freed: false first; true once the write took effect, even when the
 *         read-back then fails
 * Return: 0 or -errno with a message in @ctx (-EINVAL: the record does not
 * validate; -ESTALE: the host no longer has the vGPU the record describes,
 * as the VF is gone or holds another type or the mdev sits on another
 * parent, and nothing was written; -EBUSY: in use; -EIO: the read-back still
 * shows the vGPU; -EINPROGRESS: the driver is still freeing it, *freed false
 * and the record must stay).
 */
int vgpu_live_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		      bool *freed);

/* The vgpu_params file of an mdev, or of a VF (vendor VFIO). */
#define VGPU_LIVE_MDEV_PARAMS "sys/bus/mdev/devices/%s/nvidia/vgpu_params"
#define VGPU_LIVE_VFIO_PARAMS "sys/bus/pci/devices/%s/nvidia/vgpu_params"
/**
 * vgpu_live_params_read() - what the vgpu_params file of the vGPU @r
 * describes holds now.
 * @ctx: where errors go
 * @fs: the host root
 * @r: the vGPU's record (validated before it becomes a path)
 * @out: the set, on success
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no such file, the
 * vGPU is not there; -EINVAL: the record does not validate or the file
 * does not read as name=value pairs).
 */
int vgpu_live_params_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			  struct vgpu_params *out);
/**
 * vgpu_live_params_write() - write @set whole to the vgpu_params file of
 * the vGPU @r describes (a single space for the empty set: that clears
 * it), then read it back.  The driver refuses the write while the vGPU is
 * open (its errno is returned as is).
 * @ctx: where errors go
 * @fs: the host root
 * @r: the vGPU's record (validated before it becomes a path)
 * @set: the set
 * Return: 0 or -errno with a message in @ctx naming the file (-EIO: the
 * file reads back another set than was written).
 */
int vgpu_live_params_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			   const struct vgpu_params *set);
/* The set `params` last kept for a domain, one file per domain UUID (what vgpus shows). */
#define VGPU_PARAMS_NOTE_DIR "var/lib/vgpuctl/params"
/**
 * vgpu_live_params_note() - note @set as the vgpu_params set configured for
 * the domain @uuid (VGPU_PARAMS_NOTE_DIR/UUID, replaced atomically), so
 * `vgpus` can show it beside what the files read before the next start.
 * @ctx: where errors go
 * @fs: the host root
 * @uuid: the domain's UUID, normalized
 * @set: the set
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_live_params_note(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
			  const struct vgpu_params *set);
/**
 * vgpu_live_params_noted() - the set vgpu_live_params_note() kept for @uuid.
 * @ctx: where errors go
 * @fs: the host root
 * @uuid: the domain's UUID, normalized
 * @out: the set, on success
 * Return: 0 or -errno with a message in @ctx (-ENOENT: none noted).
 */
int vgpu_live_params_noted(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
			   struct vgpu_params *out);
/**
 * vgpu_live_params_forget() - remove the note vgpu_live_params_note() kept
 * for the domain @uuid once no owner record names it (its last vGPU here
 * was released); kept while one does.
 * @ctx: where errors go
 * @fs: the host root
 * @uuid: the domain's UUID, normalized
 * Return: 1 removed, 0 kept or none there, or -errno with a message in @ctx.
 */
int vgpu_live_params_forget(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid);

#endif
