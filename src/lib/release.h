/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * release.h - release one domain's vGPUs (release.c), and where a changed
 * definition goes, for release and assign (assign.h includes this).
 */
#ifndef VGPU_RELEASE_H
#define VGPU_RELEASE_H

#include <stdbool.h>

#include "ctx.h"
#include "domxml.h"
#include "sysfs.h"

/* How long assign and release wait for another run's host lock. */
#define VGPU_ASSIGN_LOCK_WAIT_MS 30000

struct vgpu_virt;
struct vgpu_txn_ops;

/* Where a changed definition goes. */
struct vgpu_domain_target {
	struct vgpu_virt *virt; /* the domain is this connection's: redefined there */
	const char *output; /* no @virt: this file is replaced; NULL: handed back */
	bool dry_run; /* change nothing anywhere; the definition is handed back */
	const struct vgpu_txn_ops *ops; /* how vGPUs and records change; NULL: vgpu_txn_live_ops */
};

/**
 * vgpu_release() - destroy and forget the vGPUs the owner records give the
 * domain @doc (by its UUID), take them out of its definition and put it
 * where @t says.  A vGPU our metadata names that another domain's record
 * holds now, or no record holds, is left alone and warned about.
 * @ctx: errors and warnings
 * @fs: the host root; its lock is taken for the change and released after
 * @doc: the domain, edited in place
 * @dom: @doc as vgpu_domain_read() read it before this call
 * @vf: release only the vGPU on this parent (a normalized PCI address), or NULL
 * @t: where the new definition goes
 * @xml: the new definition when @t hands it back, else NULL
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_release(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
		 const struct vgpu_domain_info *dom, const char *vf,
		 const struct vgpu_domain_target *t, char **xml);

#endif
