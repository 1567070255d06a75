/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mig.h - MIG GPU-instance planning (pure: no I/O).
 *
 * The profile tables and the board lookup live in mig-tables.c; this module
 * reads what the user asks for, places GPU
 * instances exactly and parses the nvidia-smi output that says what exists.
 * Placements are in memory slices (NVIDIA MIG User Guide, "Supported MIG
 * Profiles"; nvidia-smi mig -lgipp prints them as Start:Size).
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
 * @ctx: where errors go
 * @b: the board the profile must be one of
 * @arg: "1g.6gb", "MIG 1g.6gb", a GI profile ID ("14"), or a MIG-backed vGPU
 *       type of @b ("A30-1-6C", "NVIDIA A30-1-6CME"), each optionally
 *       followed by "x<N>", N in 1..VGPU_MIG_COUNT_MAX.  Profile names
 *       compare case-insensitively.
 * @out: the profile (pointing into @b's table) and the count of GIs, on
 *       success (for a type time-sliced inside GIs, ceil(N / vGPUs per GI))
 *
 * Return: 0 and *out, or -EINVAL with a one-line message naming @arg (and
 * listing @b's profiles when the name is not one of them).
 */
int vgpu_mig_parse_request(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *arg,
			   struct vgpu_mig_request *out);

/**
 * vgpu_mig_solve() - place the requested GPU instances beside existing ones.
 * @ctx: where errors go
 * @b: the board's table
 * @existing: GIs that exist (kept where they are); checked against @b.
 * @n_existing: the number of @existing
 * @req: what to add; profiles must be @b's.
 * @n_req: the number of @req; several requests of one profile are merged
 * @out: the new GIs (id -1) in creation order: larger profiles first.
 * @n_out: the number of *@out, on success
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
 * vgpu_mig_first_fit_order() - an order in which to create @plan's GIs so
 * that a driver placing each new GI at its lowest free legal start puts
 * every one where @plan says (for nvidia-smi, which takes no placement).
 * @b: the board's table
 * @existing: GIs that exist, at their starts
 * @n_existing: how many
 * @plan: the GIs to create, at the starts the solver chose
 * @n_plan: how many (at most the board's memory slices)
 * @order: @n_plan indexes into @plan, in creation order, on success
 *
 * Exhaustive over orders (at most 8! for 8 GIs; equal GIs are tried once).
 * Return: 0, -ENOENT when no order makes first-fit reach @plan, -E2BIG.
 */
int vgpu_mig_first_fit_order(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *existing,
			     size_t n_existing, const struct vgpu_mig_gi *plan, size_t n_plan,
			     size_t *order);

/**
 * vgpu_mig_largest_free() - the longest run of memory slices of @b that none
 * of @gis occupies.
 * @b: the board's table
 * @gis: GPU instances on the board (existing or planned), at their starts
 * @n: the number of @gis
 * Return: the run's length in memory slices (0 when the board is full).
 */
unsigned vgpu_mig_largest_free(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *gis,
			       size_t n);

/**
 * vgpu_mig_parse_lgi() - the GIs of one GPU from `nvidia-smi mig -i BUS -lgi`.
 * @ctx: where errors go
 * @b: the GPU's board; every row must name one of its profiles at a legal start
 * @text: the whole output (NUL-terminated, at most VGPU_MIG_TEXT_MAX bytes).
 * @gis: the GIs in the order listed, on success
 * @n: the number of *@gis, on success
 *
 * Rows inside the box, spaces collapsed:
 * "| 0 MIG 1g.6gb 14 3 0:1 |" (GPU, name, profile ID, instance ID,
 * start:size).  "No MIG-enabled devices found." and "No GPU instances
 * found" give no GIs.
 *
 * Return: 0 and *gis (caller frees; NULL when none), or -EINVAL with the
 * offending line (also for rows of two GPUs, more GIs than @b has memory
 * slices, or text that is not -lgi output at all).
 */
int vgpu_mig_parse_lgi(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *text,
		       struct vgpu_mig_gi **gis, size_t *n);

/**
 * vgpu_mig_parse_mode() - MIG mode from `nvidia-smi -i BUS
 * --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader`.
 * @ctx: where errors go
 * @text: the whole output: one line "BUS, CURRENT, PENDING", blank lines around it allowed
 * @current: VGPU_ON (1) enabled, VGPU_OFF (0) disabled, VGPU_UNKNOWN (-1) "[N/A]" (not a
 *           MIG GPU), as enum vgpu_tristate (model.h); written on success
 * @pending: the mode after the next GPU reset, with the same values; written on success
 *
 * Return: 0, or -EINVAL with a message in @ctx when @text is not one such line.
 */
int vgpu_mig_parse_mode(struct vgpu_ctx *ctx, const char *text, int *current, int *pending);

/* ---- the MIG table of a GPU of a model ------------------------------------ */

/**
 * vgpu_mig_board_for_gpu() - the MIG table of @g: from the board token of a
 * MIG-backed type in its catalogue, else of any type, else from its PCI
 * device ID, else from its model string.
 * @g: a GPU of a model (its catalogue read, or empty)
 * Return: the table (static), or NULL when @g is not a MIG GPU we know.
 */
const struct vgpu_mig_board *vgpu_mig_board_for_gpu(const struct vgpu_gpu *g);

/**
 * vgpu_mig_type_per_gi() - vGPUs of a MIG-backed type one GI holds, by the
 * tables: the GI's memory over the type's framebuffer on boards that
 * time-slice inside GIs (RTX PRO DC: "DC-1-8C" on 1g.24gb+gfx: 3), else 1.
 * The driver's own number (NVML) wins where there is one: vgpu_type_per_gi().
 * @t: the type's parsed name
 * Return: >= 1.
 */
unsigned vgpu_mig_type_per_gi(const struct vgpu_type_info *t);

#endif
