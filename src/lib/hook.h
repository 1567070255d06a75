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
/* the domain XML on the hook's stdin is read up to this many bytes (VGPU_XML_MAX_SIZE) */
#define VGPU_HOOK_XML_MAX (4u << 20)
/* and for at most this long: libvirt writes it at once (a stuck writer must not hang a start) */
#define VGPU_HOOK_STDIN_MS 10000
/* a hook waiting here holds up a VM start: wait less than assign does */
#define VGPU_HOOK_LOCK_WAIT_MS 10000

/* The domain a hook call is about. */
struct vgpu_hook_domain {
	const char *name; /* as libvirt passes it (argv[1]), for messages */
	const char *uuid; /* normalized: records and hostdevs are matched by it */
	const struct vgpu_strv *mdevs; /* mdev UUIDs its definition's hostdevs name, or NULL */
	const struct vgpu_strv *vfs; /* PCI functions its hostdevs name, or NULL */
};

/**
 * vgpu_hook_scan_uuid() - the domain's <uuid> from the XML libvirt gives
 * the hook on stdin, without an XML library: the first <uuid> child of the
 * root <domain>, skipping comments, processing instructions and CDATA, with
 * quoted attribute values honoured.  Anything unusual (a DTD, an entity, a
 * root that is not <domain>) is left to the hardened parser.
 * @xml: the text
 * @len: its length
 * @uuid: the UUID, normalized, on success
 * Return: 0, -ENOENT (no <uuid>) or -EINVAL (not plain enough to scan).
 */
int vgpu_hook_scan_uuid(const char *xml, size_t len, char uuid[VGPU_UUID_LEN]);

/**
 * vgpu_hook_maybe_foreign() - the cheap test before the hardened parse: does
 * the domain XML @xml mention a vGPU that a record of another domain than
 * @uuid holds (its mdev UUID, or its VF's address as libvirt writes a
 * hostdev source)?  A superset of what vgpu_hook_prepare() refuses: true
 * only sends the call down the slow path, which decides.
 * @xml: the domain XML, NUL-terminated
 * @recs: every owner record
 * @uuid: the domain's UUID
 * Return: true when the XML names another domain's vGPU, or might.
 */
bool vgpu_hook_maybe_foreign(const char *xml, const struct vgpu_records *recs, const char *uuid);

/**
 * vgpu_hook_owns() - does record @r belong to domain @d (by UUID: a renamed
 * domain keeps its vGPUs)?
 * @d: the domain
 * @r: an owner record
 * Return: true when it does.
 */
bool vgpu_hook_owns(const struct vgpu_hook_domain *d, const struct vgpu_record *r);

/**
 * vgpu_hook_has_work() - would @op change anything for @d?  The hook's
 * cheap path: prepare has work when a vGPU of @d is missing, of another
 * type or elsewhere (the same test vgpu_hook_prepare() makes), or when @d's
 * hostdevs name a vGPU another domain's record holds; release when @d has a
 * per-start vGPU or a failed start left a note.  Decided without
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
 * @name: the domain's name (notes are named by it: a domain cannot be
 *        renamed while it runs, so prepare, started and release of one run
 *        agree on it, and started needs no stdin)
 */
void vgpu_hook_started(struct vgpu_sysfs *fs, const char *name);

/**
 * vgpu_hook_prepare() - under the host lock, refuse a definition whose
 * hostdevs name a vGPU another domain's record holds (for vendor VFIO the VF
 * is the vGPU: the domain would start with the other's), then make every
 * vGPU the records give @d exist as recorded.  An mdev whose parent another vGPU holds moves
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
