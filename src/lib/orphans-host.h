/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * orphans-host.h - the evidence read from the host (records, libvirt's
 * domains, proc/'s open files, ages, wedged markers) and the reaper that
 * frees orphans and stale vGPUs.  The classes are orphans.h's.
 */
#ifndef VGPU_ORPHANS_HOST_H
#define VGPU_ORPHANS_HOST_H

#include "orphans.h"

struct vgpu_sysfs;
struct vgpu_nvml;
struct vgpu_catalogue;

/* Where the domains come from; read again at each look (the reaper's before each write). */
struct vgpu_odom_source {
	/* the domains (vgpu_odoms_free()), or -errno with a message in the ctx */
	int (*read)(struct vgpu_ctx *ctx, void *arg, struct vgpu_odom **out, size_t *n);
	void *arg;
};

/**
 * vgpu_orphans_scan() - every vGPU on the host (mdevs and vendor-VFIO VFs
 * holding a type) with its evidence, classed.
 * @ctx: errors and warnings
 * @fs: the host root (its proc/ is read for holders)
 * @src: where the domains are read, or NULL: they are unknown
 * @nv: NVML, for each GPU's active vGPU instances and their VM IDs (NULL: none)
 * @cat: the message catalogue: a kernel log line of one of its wedge rows makes
 *       the vGPU it names wedged (NULL: no line does, @ctx is warned)
 * @grace_s: the grace period for orphans
 * @out: the rows, on success (free() them); a row of a vGPU without a record
 *       has the record its free needs in @rec
 * @n: how many
 * Return: 0 or -errno with a message in @ctx (the host cannot be read).
 */
int vgpu_orphans_scan(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_odom_source *src, struct vgpu_nvml *nv,
		      const struct vgpu_catalogue *cat, long long grace_s, struct vgpu_orow **out,
		      size_t *n);

struct vgpu_model;

/**
 * vgpu_orphans_count() - how many of the host's vGPUs fall in each class,
 * from what the host tells without libvirt (the records, the processes'
 * open files, the wedged markers and the kernel log): in-use, wedged,
 * conflict and incoming are told; a vGPU nobody holds may be owned, stale,
 * foreign or an orphan, which only the domains tell, and counts as unknown.
 * @ctx: warnings
 * @fs: the host root
 * @m: the host, read (vgpu_host_read())
 * @recs: its records
 * @cat: the message catalogue, for the kernel log's wedge lines (NULL: none)
 * @count: the count per class, every class written
 */
void vgpu_orphans_count(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			const struct vgpu_records *recs, const struct vgpu_catalogue *cat,
			long long count[VGPU_OCLASS_N]);

/* What vgpu_orphans_reap() frees. */
#define VGPU_REAP_ORPHANS 1u
#define VGPU_REAP_STALE 2u

/**
 * vgpu_orphans_reap() - under the host lock, free the vGPUs of the classes
 * @what asks for: for each, the evidence is collected again right before
 * its write and it is freed only when its class is still one asked for;
 * the write is read back, a stale vGPU's record removed.  A free that fails
 * marks the vGPU wedged.  Refused as a whole (nothing freed) when the
 * processes' open files cannot all be read or the domains are not known.
 * @ctx: errors, and one notice per vGPU freed or left
 * @fs: the host root
 * @src: where the domains are read (NULL: they are unknown, the run is refused)
 * @nv: NVML, read with the domains before the locks (NULL: none)
 * @cat: the message catalogue, for the kernel log's wedge lines (NULL: none)
 * @what: VGPU_REAP_ORPHANS and/or VGPU_REAP_STALE
 * @grace_s: the grace period for orphans
 * @dry_run: only say what would be freed
 * @freed: how many were freed (or would be)
 * Return: 0, or -errno with a message in @ctx (-EACCES: the evidence is not
 * whole; -EIO: a free failed, the vGPU marked wedged).
 */
int vgpu_orphans_reap(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_odom_source *src, struct vgpu_nvml *nv,
		      const struct vgpu_catalogue *cat, unsigned what, long long grace_s,
		      bool dry_run, size_t *freed);

/**
 * vgpu_orphans_clear_wedged() - under the host lock, clear what marks a vGPU
 * wedged: its marker (named by @id, or, for a VF or parent address, every
 * marker of an mdev on it), and the kernel log's wedge lines for it so far
 * (the latest time of the log's lines, or now, is noted: only later lines
 * count again; a line in that same second does not).  plan and
 * assign take its parent again.  The admin says it is clear (freed, or the
 * host rebooted): nothing on the device is checked.
 * @ctx: errors, and one notice per marker removed
 * @fs: the host root
 * @cat: the message catalogue, for the kernel log's wedge lines (NULL: none)
 * @id: the mdev UUID or the VF's (parent's) PCI address
 * Return: 0, or -errno with a message in @ctx (-EINVAL: @id is neither;
 * -ENOENT: nothing marks it wedged).
 */
int vgpu_orphans_clear_wedged(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			      const struct vgpu_catalogue *cat, const char *id);

#endif
