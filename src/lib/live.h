/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * live.h - creating and freeing vGPUs on a host, and changes as
 * transactions.
 *
 * Every write goes through vgpu_sysfs_write() and is confirmed by reading
 * back (vendor VFIO: current_vgpu_type reads the id; mdev:
 * sys/bus/mdev/devices/<uuid> exists with the right mdev_type).  Values
 * become paths only after validation (PCI address, UUID, decimal id).
 *
 * A change of several steps is a struct vgpu_txn: each step that succeeded
 * is pushed with its inverse, and a failure undoes the first i steps in
 * reverse (as libvirt's virMediatedDeviceListMarkDevices does).  The
 * context's message then reads "first error; rolled back: ..." or
 * "...; rollback failed: ...".  In a dry run the steps are only logged
 * (LOG_NOTICE, "would ...") and nothing changes.
 */
#ifndef VGPU_LIVE_H
#define VGPU_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "records.h"
#include "sysfs.h"

/* What is on a parent now, read fresh. */
struct vgpu_live_state {
	bool exists; /* the vGPU (VF type set / mdev UUID present) */
	unsigned type_id; /* its type; 0 unknown */
	char parent[VGPU_BDF_LEN]; /* mdev: the parent it is on now */
};

/**
 * vgpu_live_query() - the vGPU @r describes, as the host has it now: for
 * vendor VFIO what @r->parent holds, for mdev where @r->mdev_uuid is.
 * Return: 0 or -errno with a message in @ctx (an unreadable attribute).
 */
int vgpu_live_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		    struct vgpu_live_state *out);
/** vgpu_live_as_recorded() - @st is the vGPU @r describes: there, of its type, on its parent. */
bool vgpu_live_as_recorded(const struct vgpu_live_state *st, const struct vgpu_record *r);
/**
 * vgpu_live_create() - create the vGPU @r describes.  Already there with
 * the same type and parent: nothing to do (*created false).  Another vGPU in
 * the way: -EBUSY / -EEXIST.  The driver's errno otherwise, with its usual
 * meaning in the message.
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *created);
/**
 * vgpu_live_free() - free the vGPU @r describes, only if it is there with
 * @r's type (another type is refused: -EBUSY).  Gone already: nothing to do
 * (*freed false).  Vendor VFIO: `0` is written only to a VF that holds a
 * vGPU, retried with bounded backoff on EPERM/EBUSY while QEMU exits.
 * mdev: `remove` is never written while a process holds the mdev's VFIO
 * group open (-EBUSY).
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_live_free(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		   bool *freed);

/* ---- transactions ---------------------------------------------------------- */

typedef int (*vgpu_undo_fn)(struct vgpu_ctx *ctx, void *data);

struct vgpu_txn_step {
	char *what; /* "created vGPU 1056 on VF 0000:41:00.4" */
	vgpu_undo_fn undo;
	void *data; /* freed with free() */
};

struct vgpu_txn {
	struct vgpu_ctx *ctx;
	struct vgpu_sysfs *fs;
	bool dry_run;
	struct vgpu_txn_step *steps;
	size_t n;
};

void vgpu_txn_init(struct vgpu_txn *t, struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, bool dry_run);
/* A step done: remember its inverse (@data is owned by the transaction). */
void vgpu_txn_push(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/**
 * vgpu_txn_rollback() - undo every step in reverse, appending what the undo
 * did to the context's message.  Return: 0 when all was undone, else -EIO.
 */
int vgpu_txn_rollback(struct vgpu_txn *t);
/* Keep the changes; forget the inverses. */
void vgpu_txn_commit(struct vgpu_txn *t);

/* Steps: each does its change (or logs it in a dry run) and pushes its inverse. */
int vgpu_txn_create(struct vgpu_txn *t, const struct vgpu_record *r);
int vgpu_txn_free(struct vgpu_txn *t, const struct vgpu_record *r);
/* Write @r's record; @old (NULL: none) is what the undo puts back. */
int vgpu_txn_record_put(struct vgpu_txn *t, const struct vgpu_record *r,
			const struct vgpu_record *old);
int vgpu_txn_record_drop(struct vgpu_txn *t, const struct vgpu_record *r);

#endif
