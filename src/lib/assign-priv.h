/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the use cases on one domain, assign.c and release.c:
 * the end of their transaction, the definition put where struct
 * vgpu_domain_target says (defined in release.c, the lower of the two:
 * assign undoes a failed write with vgpu_release()).  Nothing else includes
 * this.
 */
#ifndef VGPU_ASSIGN_PRIV_H
#define VGPU_ASSIGN_PRIV_H

struct _xmlDoc;
struct vgpu_ctx;
struct vgpu_domain_target;
struct vgpu_outfile;
struct vgpu_sysfs;
struct vgpu_txn;

/* Open @t's output file, before the locks (none for a dry run, libvirt or the caller). */
int assign_open_output(struct vgpu_ctx *ctx, const struct vgpu_domain_target *t,
		       struct vgpu_outfile *of);
/*
 * The last step under the locks: the new definition goes where @t says.  A
 * regular file is replaced now (a failure is still undone); a FIFO or a
 * device waits on its reader, so its text is kept in *@later and written
 * after every lock is released.
 */
int assign_put_domain(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_domain_target *t,
		      struct vgpu_outfile *of, char **xml, char **later);
/* Undo everything on failure, keep it on success; the lock goes either way. */
int assign_finish(struct vgpu_txn *txn, struct vgpu_sysfs *fs, int r);
#endif
