/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * txn.h - a change of several steps as one transaction.
 *
 * Each step that succeeded is pushed with its inverse, and a failure undoes
 * the steps done in reverse (as libvirt's virMediatedDeviceListMarkDevices
 * does).  The context's message then reads "first error; rolled back: ..."
 * or "...; rollback incomplete: ...".  In a dry run the steps are only
 * reported (vgpu_step_report(): kind, vGPU or record, text) and nothing
 * changes.
 */
#ifndef VGPU_TXN_H
#define VGPU_TXN_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "records.h"
#include "sysfs.h"

typedef int (*vgpu_undo_fn)(struct vgpu_ctx *ctx, void *data);

struct vgpu_txn_step {
	char *what; /* "created vGPU 1056 on VF 0000:41:00.4" */
	vgpu_undo_fn undo;
	void *data; /* freed with free() */
};

/*
 * What a transaction's steps do to the host, swappable as struct
 * vgpu_apply_ops is for apply: the driver's and the records' own functions
 * (vgpu_txn_live_ops) by default, a test's stand-ins to fail a step on purpose.
 * Each has the contract of the function it stands for.
 */
struct vgpu_txn_ops {
	/* vgpu_live_create() */
	int (*create)(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		      bool *created);
	/* vgpu_live_destroy() */
	int (*destroy)(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *freed);
	/* vgpu_record_write() */
	int (*record_write)(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			    const struct vgpu_record *r);
	/* vgpu_record_remove() */
	int (*record_remove)(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *key);
};

/* vgpu_live_create(), vgpu_live_destroy(), vgpu_record_write(), vgpu_record_remove() */
extern const struct vgpu_txn_ops vgpu_txn_live_ops;

struct vgpu_txn {
	struct vgpu_ctx *ctx;
	struct vgpu_sysfs *fs;
	const struct vgpu_txn_ops *ops; /* vgpu_txn_live_ops unless the caller sets another */
	bool dry_run;
	struct vgpu_txn_step *steps;
	size_t n;
};

/**
 * vgpu_txn_init() - start an empty transaction.
 * @t: the transaction, overwritten
 * @ctx: where the steps' errors, the rollback's account and the step log go
 * @fs: the host the steps change
 * @dry_run: only report each step (vgpu_step_report()); change nothing
 *
 * The steps use vgpu_txn_live_ops; set @t->ops after this for others.
 */
void vgpu_txn_init(struct vgpu_txn *t, struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, bool dry_run);
/**
 * vgpu_txn_push() - a step done: remember its inverse (@data is owned by the
 * transaction).
 * @t: the transaction
 * @undo: the inverse, called by vgpu_txn_rollback() with its own context and @data
 * @data: the inverse's argument on the heap; freed with free() on commit or rollback
 * @fmt: printf format of what the step did, for the log and the rollback message
 * @...: arguments for @fmt
 *
 * The step is logged at LOG_DEBUG; a dry run reports it (vgpu_step_report(),
 * kind VGPU_STEP_OTHER).
 */
void vgpu_txn_push(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/**
 * vgpu_txn_rollback() - undo every step in reverse, appending what the undo
 * did to the context's message.
 * @t: the transaction; empty afterwards, every step's data freed
 *
 * The message gets "; rolled back: undid '...', ..." or "; rollback
 * incomplete: ... FAILED to undo '...' (cause)".  With no step, or in a dry
 * run, nothing is undone and the message is left alone.
 * Return: 0 when all was undone, else -EIO.
 */
int vgpu_txn_rollback(struct vgpu_txn *t);
/**
 * vgpu_txn_commit() - keep the changes; forget the inverses.
 * @t: the transaction; empty afterwards, every step's data freed
 */
void vgpu_txn_commit(struct vgpu_txn *t);

/* Steps: each does its change (or reports it in a dry run) and pushes its inverse. */
/**
 * vgpu_txn_create() - create the vGPU @r describes (vgpu_live_create()) and
 * push its freeing as the inverse.
 * @t: the transaction
 * @r: the vGPU's record (copied into the step)
 *
 * A vGPU that was there already is no step.  One created but not confirmed
 * is pushed all the same, so a rollback still frees it.
 * Return: 0 or -errno with a message in @t's context (from vgpu_live_create()).
 */
int vgpu_txn_create(struct vgpu_txn *t, const struct vgpu_record *r);
/**
 * vgpu_txn_destroy() - free the vGPU @r describes (vgpu_live_destroy()) and
 * push its re-creation as the inverse.
 * @t: the transaction
 * @r: the vGPU's record (copied into the step)
 *
 * A vGPU that was gone already is no step.
 * Return: 0 or -errno with a message in @t's context (from vgpu_live_destroy()).
 */
int vgpu_txn_destroy(struct vgpu_txn *t, const struct vgpu_record *r);
/**
 * vgpu_txn_record_put() - write @r's record; @old (NULL: none) is what the undo puts back.
 * @t: the transaction
 * @r: the record written (vgpu_record_write())
 * @old: the record it replaces, or NULL: the undo then removes @r's record
 *
 * A failed write is undone at once (the old record put back, or the new one
 * removed) and pushes no step.
 * Return: 0 or -errno with a message in @t's context.
 */
int vgpu_txn_record_put(struct vgpu_txn *t, const struct vgpu_record *r,
			const struct vgpu_record *old);
/**
 * vgpu_txn_record_drop() - remove @r's record (vgpu_record_remove()) and push
 * writing it again as the inverse.
 * @t: the transaction
 * @r: the record dropped (copied into the step); absent on disk is fine
 * Return: 0 or -errno with a message in @t's context.
 */
int vgpu_txn_record_drop(struct vgpu_txn *t, const struct vgpu_record *r);
/**
 * vgpu_txn_release() - free the vGPU @r describes and drop its record, as
 * `release` does: a vGPU the host no longer has as @r says (-ESTALE from
 * vgpu_txn_destroy(): its VF gone, another vGPU there) is left as it is and
 * said as a warning, and the record goes all the same.
 * @t: the transaction
 * @r: the record (copied into the steps)
 * Return: 0 or -errno with a message in @t's context.
 */
int vgpu_txn_release(struct vgpu_txn *t, const struct vgpu_record *r);

#endif
