/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mig-tables.h - the MIG GPU-instance profiles of each board (NVIDIA MIG
 * User Guide, "Supported MIG Profiles") and the one board lookup.
 */
#ifndef VGPU_MIG_TABLES_H
#define VGPU_MIG_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * One GPU-instance profile.  Two kinds of slice: compute (SM) slices, the <g>
 * of the profile name and the <G> of a MIG-backed type name; memory slices,
 * the unit of placements (a board has 8, or 4 on A30 and RTX PRO).
 */
struct vgpu_mig_profile {
	const char *name; /* "1g.6gb+me" */
	int id; /* nvidia-smi GI profile ID */
	unsigned compute; /* compute slices: the <g> of the name */
	unsigned size; /* memory slices a GI occupies: Size of -lgipp Start:Size */
	unsigned max; /* instances of this profile alone per GPU */
	uint16_t placements; /* bit i: a GI may start at memory slice i */
};

struct vgpu_mig_board {
	const char *tokens; /* space-separated type-name board tokens */
	const char *model;
	unsigned mem_slices; /* memory slices of the whole GPU */
	unsigned compute_slices; /* compute slices of the whole GPU */
	/*
	 * Non-NULL where MIG-backed vGPU types run on one GI variant although
	 * their names carry no suffix, and may be time-sliced inside the GI (<GB>
	 * is the vGPU's share, not the GI's memory): "+gfx" on RTX PRO DC.
	 */
	const char *vgpu_gi_variant;
	const struct vgpu_mig_profile *profiles;
	size_t n_profiles;
};

/**
 * vgpu_mig_board_lookup() - a board table by type-name token ("A30", "H100L")
 * or by model string ("A100 80GB", "NVIDIA H100 NVL", "NVIDIA A100-PCIE-40GB").
 * @name: a board token (exact, case-sensitive), else a model string matched
 *        word by word, case-insensitively; a memory size in it ("64GB") that
 *        the board's model does not carry names another part: no table
 * Return: the table (static), or NULL.
 */
const struct vgpu_mig_board *vgpu_mig_board_lookup(const char *name);

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
