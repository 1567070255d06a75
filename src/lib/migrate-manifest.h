/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * migrate-manifest.h - the JSON that `migrate-check` sends the target
 * (the source's manifest) and that `migrate-offer` answers (the offer):
 * one format, written and read here (pure: no I/O).  docs/migration.md
 * describes it.
 */
#ifndef VGPU_MIGRATE_MANIFEST_H
#define VGPU_MIGRATE_MANIFEST_H

#include <stddef.h>

#include "ctx.h"
#include "migrate-check.h"

#define VGPU_MIG_MANIFEST_VERSION 1
#define VGPU_MIG_MANIFEST_MAX 65536 /* bytes read at most */
#define VGPU_MIG_MANIFEST_MAX_VGPUS 64

/**
 * vgpu_mig_manifest_format() - @h as a manifest (or, with @h->reasons, an offer).
 * @h: the host
 * Return: the JSON text with a trailing newline, allocated.
 */
char *vgpu_mig_manifest_format(const struct vgpu_mig_host *h);

/**
 * vgpu_mig_manifest_parse() - read a manifest or an offer.
 * @ctx: where the error goes
 * @text: the JSON text (need not end in NUL)
 * @len: its length, at most VGPU_MIG_MANIFEST_MAX
 * @out: the host on success (its arrays allocated, free with
 *       vgpu_mig_offer_clear()); @out->reasons and @out->devices are set
 *       when every vGPU names a device or a reason (an offer)
 *
 * Keys it does not know are skipped, so a newer vgpuctl's manifest is read
 * by an older one.  Values it does not know ("?", null) stay unknown.
 * Return: 0, -EINVAL when the text is not such a document, -E2BIG when it
 * is larger than the bounds.
 */
int vgpu_mig_manifest_parse(struct vgpu_ctx *ctx, const char *text, size_t len,
			    struct vgpu_mig_host *out);

#endif
