/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read-live.h - the vGPU an owner record describes, as the host has it now
 * (read-live.c): what the hook, the listings and live.c's writes ask before
 * they decide.
 */
#ifndef VGPU_READ_LIVE_H
#define VGPU_READ_LIVE_H

#include <stdbool.h>

#include "ctx.h"
#include "records.h"
#include "sysfs.h"

/* A vendor-VFIO VF's vGPU type (0: none), relative to the root; %s: the VF. */
#define VGPU_LIVE_VFIO_ATTR "sys/bus/pci/devices/%s/nvidia/current_vgpu_type"
/* An mdev's directory, relative to the root; %s: its UUID. */
#define VGPU_LIVE_MDEV_DIR "sys/bus/mdev/devices/%s"

/* What is on a parent now, read fresh. */
struct vgpu_live_state {
	bool exists; /* the vGPU (VF type set / mdev UUID present) */
	unsigned type_id; /* its type; 0 unknown */
	char parent[VGPU_BDF_LEN]; /* mdev: the parent it is on now */
};

/**
 * vgpu_live_show() - a host path as a message shows it: @fmt with @a, under the root
 * @fs: the host
 * @buf: VGPU_SHOW_LEN bytes for the text
 * @fmt: the path below the root, with one %s (VGPU_LIVE_VFIO_ATTR, VGPU_LIVE_MDEV_DIR)
 * @a: the %s (a PCI address or an mdev UUID)
 *
 * Return: @buf
 */
const char *vgpu_live_show(struct vgpu_sysfs *fs, char *buf, const char *fmt, const char *a);
/**
 * vgpu_live_query() - the vGPU @r describes, as the host has it now: for
 * vendor VFIO what @r->parent holds, for mdev where @r->mdev_uuid is.
 * @ctx: where errors go
 * @fs: the host root
 * @r: the vGPU's record; its parent, type id and mdev UUID are validated first
 * @out: overwritten with the state; an mdev UUID that is not there is
 *       exists == false, not an error
 * Return: 0 or -errno with a message in @ctx (an unreadable attribute;
 * -EINVAL for a record that does not validate).
 */
int vgpu_live_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		    struct vgpu_live_state *out);
/**
 * vgpu_live_as_recorded() - @st is the vGPU @r describes: there, of its type, on its parent.
 * @st: the state from vgpu_live_query()
 * @r: the record
 * Return: true if @st exists with @r's type id on @r's parent.
 */
bool vgpu_live_as_recorded(const struct vgpu_live_state *st, const struct vgpu_record *r);

#endif
