/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mig.h - MIG GPU-instance planning (pure: no I/O).
 *
 * The profile tables and the board lookup live in mig-tables.c; this module
 * reads what the user asks for, places GPU
 * instances exactly and parses the nvidia-smi output that says what exists.
 * Placements are in memory slices (reference vgpu-host.md section 4).
 */
#ifndef VGPU_MIG_H
#define VGPU_MIG_H

#include <stddef.h>

#include "ctx.h"
#include "model.h"
#include "mig-tables.h"
#include "vgputype.h"

/* Counts in one request: "1g.6gbx64" at most. */
#define VGPU_MIG_COUNT_MAX 64
/* nvidia-smi output is read up to this many bytes; a GPU's listing is a few KiB. */
#define VGPU_MIG_TEXT_MAX (1 << 20)

/* A GPU instance: one that exists (id >= 0) or one planned (id -1). */
struct vgpu_mig_gi {
	const struct vgpu_mig_profile *profile;
	unsigned start; /* first memory slice */
	int id; /* GI id, -1 when planned */
};

/* N instances of one profile. */
struct vgpu_mig_request {
	const struct vgpu_mig_profile *profile;
	unsigned count;
};

/**
 * vgpu_mig_parse_request() - read one PROFILE[xN] argument.
 * @arg: "1g.6gb", "MIG 1g.6gb", a GI profile ID ("14"), or a MIG-backed vGPU
 *       type of @b ("A30-1-6C", "NVIDIA A30-1-6CME"), each optionally
 *       followed by "x<N>", N in 1..VGPU_MIG_COUNT_MAX.
 *
 * Return: 0 and *out, or -EINVAL with a one-line message naming @arg (and
 * listing @b's profiles when the name is not one of them).
 */
int vgpu_mig_parse_request(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *arg,
			   struct vgpu_mig_request *out);

/**
 * vgpu_mig_solve() - place the requested GPU instances beside existing ones.
 * @existing: GIs that exist (kept where they are); checked against @b.
 * @req: what to add; profiles must be @b's.
 * @out: the new GIs (id -1) in creation order: larger profiles first.
 *
 * Exact: every legal placement is tried.  Of all layouts that fit, the one
 * kept has the longest run of free memory slices, then the lowest starts in
 * creation order.  Counts, memory and compute slices are checked before the
 * search, so it never runs over more than the board's slices.
 *
 * Return: 0 (caller frees *out; NULL when @n_req asks for nothing) or
 * -ENOSPC when nothing fits, -EINVAL for inconsistent @existing, with a
 * one-line message saying why in profile names.
 */
int vgpu_mig_solve(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
		   const struct vgpu_mig_gi *existing, size_t n_existing,
		   const struct vgpu_mig_request *req, size_t n_req, struct vgpu_mig_gi **out,
		   size_t *n_out);

/**
 * vgpu_mig_largest_free() - the longest run of memory slices of @b that none
 * of @gis occupies.
 */
unsigned vgpu_mig_largest_free(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *gis,
			       size_t n);

/**
 * vgpu_mig_parse_lgi() - the GIs of one GPU from `nvidia-smi mig -i BUS -lgi`.
 * @text: the whole output (NUL-terminated, at most VGPU_MIG_TEXT_MAX bytes).
 *
 * Rows inside the box, spaces collapsed:
 * "| 0 MIG 1g.6gb 14 3 0:1 |" (GPU, name, profile ID, instance ID,
 * start:size).  "No MIG-enabled devices found." and "No GPU instances
 * found" give no GIs.
 *
 * Return: 0 and *gis (caller frees; NULL when none), or -EINVAL with the
 * offending line.
 */
int vgpu_mig_parse_lgi(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *text,
		       struct vgpu_mig_gi **gis, size_t *n);

/**
 * vgpu_mig_parse_mode() - MIG mode from `nvidia-smi -i BUS
 * --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader`.
 * @current, @pending: 1 enabled, 0 disabled, -1 "[N/A]" (not a MIG GPU).
 *
 * Return: 0, or -EINVAL when @text is not one such line.
 */
int vgpu_mig_parse_mode(struct vgpu_ctx *ctx, const char *text, int *current, int *pending);

#endif
