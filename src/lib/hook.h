/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hook.h - what the libvirt qemu hook decides, without libvirt and without
 * libxml2 (the caller reads the domain's UUID from the XML on stdin).
 *
 * prepare begin: every vGPU the owner records give the domain exists with
 * its type, created where missing (after a reboot, or per-start).
 * release end: per-start vGPUs are destroyed, and so is what the prepare of
 * a start that failed created; the others stay until release.
 *
 * A start that fails after prepare ends in release without started (the
 * daemon calls stopped and release on every failure path).  prepare notes
 * what it created in VGPU_PREPARED_DIR/DOMAIN; started drops the note; a
 * release that finds it destroys exactly those vGPUs.  run/ is empty after
 * a reboot, as the vGPUs are.
 */
#ifndef VGPU_HOOK_H
#define VGPU_HOOK_H

#include <stdbool.h>

#include "ctx.h"
#include "records.h"
#include "sysfs.h"

#define VGPU_PREPARED_DIR "run/vgpuctl/prepared"
/* a hook waiting here holds up a VM start: wait less than assign does */
#define VGPU_HOOK_LOCK_WAIT_MS 10000

/* The domain a hook call is about. */
struct vgpu_hook_domain {
	const char *name; /* as libvirt passes it (argv[1]) */
	const char *uuid; /* normalized; NULL: records are matched by @name */
};

/**
 * vgpu_hook_owns() - does record @r belong to domain @d?
 * @d: the domain; by UUID when it has one, else by name
 * @r: an owner record
 * Return: true when it does.
 */
bool vgpu_hook_owns(const struct vgpu_hook_domain *d, const struct vgpu_record *r);

/**
 * vgpu_hook_has_work() - would @op change anything for @d?  The hook's
 * cheap path: prepare has work when a vGPU of @d is missing, of another
 * type or elsewhere (the same test vgpu_hook_prepare() makes); release when
 * @d has a per-start vGPU or a failed start left a note.  Decided without
 * the lock, so it only ever leads to "nothing to do", the answer the
 * locked call would give on the same host.
 * @ctx: warnings (a vGPU that cannot be read counts as work)
 * @fs: the host root
 * @op: "prepare" or "release"
 * @d: the domain
 * @recs: every owner record
 * Return: true when @op has work for @d.
 */
bool vgpu_hook_has_work(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *op,
			const struct vgpu_hook_domain *d, const struct vgpu_records *recs);

/**
 * vgpu_hook_started() - a start went through: drop the note of what its
 * prepare created, so its release is a normal stop.
 * @fs: the host root
 * @name: the domain's name
 */
void vgpu_hook_started(struct vgpu_sysfs *fs, const char *name);

/**
 * vgpu_hook_prepare() - under the host lock, make every vGPU the records
 * give @d exist as recorded.  An mdev whose parent another vGPU holds moves
 * to a free parent of the same GPU that offers its type (the record
 * follows); a vendor-VFIO vGPU cannot move (the hostdev names the VF).
 * What was created is noted for a failed start's release.  One transaction:
 * a failure undoes every step.
 * @ctx: errors and warnings
 * @fs: the host root
 * @d: the domain
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_hook_prepare(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_hook_domain *d);

/**
 * vgpu_hook_release() - under the host lock, destroy @d's per-start vGPUs
 * and what a failed start's prepare created; the records stay.
 * @ctx: errors and warnings
 * @fs: the host root
 * @d: the domain
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_hook_release(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_hook_domain *d);

#endif
