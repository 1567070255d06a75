/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * txn.h - a change of several steps as one transaction.
 *
 * Each step that succeeded is pushed with its inverse, and a failure undoes
 * the steps done in reverse (as libvirt's virMediatedDeviceListMarkDevices
 * does).  The context's message then reads "first error; rolled back: ..."
 * or "...; rollback incomplete: ...".  In a dry run the steps are only
 * logged (LOG_NOTICE, "would ...") and nothing changes.
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
int vgpu_txn_destroy(struct vgpu_txn *t, const struct vgpu_record *r);
/* Write @r's record; @old (NULL: none) is what the undo puts back. */
int vgpu_txn_record_put(struct vgpu_txn *t, const struct vgpu_record *r,
			const struct vgpu_record *old);
int vgpu_txn_record_drop(struct vgpu_txn *t, const struct vgpu_record *r);

#endif
