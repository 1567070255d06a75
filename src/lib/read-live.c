// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The vGPU an owner record describes, as the host has it now: the read side
 * of live.c, beside the other readers so that reading never depends on the
 * writer.  vendor VFIO: the VF's nvidia/current_vgpu_type; mdev: where
 * sys/bus/mdev/devices/<uuid> is and its mdev_type.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "read-live.h"
#include "read-priv.h"

/* The record's addresses, id and UUID are validated before they become paths. */
static int check_record(struct vgpu_ctx *ctx, const struct vgpu_record *r)
{
	char bdf[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(r->parent, bdf) < 0 || strcmp(bdf, r->parent) != 0)
		return vgpu_error(ctx, -EINVAL, "'%s' is not a PCI address", r->parent);
	if (r->type_id == 0 || r->type_id > 0xffffff)
		return vgpu_error(ctx, -EINVAL, "%u is not a vGPU type id", r->type_id);
	if (r->iface == VGPU_IFACE_MDEV && !vgpu_uuid_valid(r->mdev_uuid))
		return vgpu_error(ctx, -EINVAL, "'%s' is not an mdev UUID", r->mdev_uuid);
	if (r->iface != VGPU_IFACE_MDEV && r->iface != VGPU_IFACE_VENDOR_VFIO)
		return vgpu_error(ctx, -EINVAL, "vGPU on %s has no interface", r->parent);
	return 0;
}

const char *vgpu_live_show(struct vgpu_sysfs *fs, char *buf, const char *fmt, const char *a)
{
	struct vgpu_sysdir root;
	char rel[VGPU_PATH_MAX];

	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), fmt, a);
	return vgpu_sysdir_show(&root, rel, buf, VGPU_SHOW_LEN);
}

static int vfio_current(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *vf, long *cur)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	int r;

	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_read_long(&root, cur, 0, 0xffffff, VGPU_LIVE_VFIO_ATTR, vf);
	if (r < 0)
		return vgpu_error(ctx, r, "cannot read '%s': %s",
				  vgpu_live_show(fs, show, VGPU_LIVE_VFIO_ATTR, vf),
				  vgpu_strerror(r));
	return 0;
}

/* mdev @uuid: does it exist, on which parent, of which type. */
static int mdev_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
		      struct vgpu_live_state *out)
{
	char show[VGPU_SHOW_LEN];
	struct vgpu_sysdir root;
	int r;

	memset(out, 0, sizeof(*out));
	vgpu_sysdir_root(fs, &root);
	r = vgpu_mdev_locate(&root, uuid, out->parent, &out->type_id);
	if (r == -ENOENT || r == -VGPU_EDANGLING)
		return 0;
	if (r < 0)
		return vgpu_error(ctx, r, "cannot read '%s': %s",
				  vgpu_live_show(fs, show, VGPU_LIVE_MDEV_DIR, uuid),
				  vgpu_strerror(r));
	out->exists = true;
	return 0;
}

bool vgpu_live_as_recorded(const struct vgpu_live_state *st, const struct vgpu_record *r)
{
	return st->exists && st->type_id == r->type_id && strcmp(st->parent, r->parent) == 0;
}

int vgpu_live_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		    struct vgpu_live_state *out)
{
	long cur;
	int err = check_record(ctx, r);

	if (err < 0)
		return err;
	if (r->iface == VGPU_IFACE_MDEV)
		return mdev_query(ctx, fs, r->mdev_uuid, out);
	memset(out, 0, sizeof(*out));
	err = vfio_current(ctx, fs, r->parent, &cur);
	if (err < 0)
		return err;
	out->exists = cur != 0;
	out->type_id = (unsigned)cur;
	snprintf(out->parent, sizeof(out->parent), "%s", r->parent);
	return 0;
}
