/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mig-tables.h - the MIG GPU-instance profiles of each board (NVIDIA MIG
 * User Guide, "Supported MIG Profiles") and the one board lookup.
 */
#ifndef VGPU_MIG_TABLES_H
#define VGPU_MIG_TABLES_H

#include <stddef.h>
#include <stdint.h>

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
 * vgpu_mig_board_by_token() - the board table whose type-name tokens hold
 * @token exactly ("A30", "H100L"; case-sensitive, no model strings).
 * @token: a board token, as the type-name grammar reads it
 * Return: the table (static), or NULL.
 */
const struct vgpu_mig_board *vgpu_mig_board_by_token(const char *token);

/**
 * vgpu_mig_board_by_device() - the board table of a MIG board's PF device ID.
 * @device_id: the PCI device ID of the GPU (the PF)
 * Return: the table (static), or NULL when the ID is no MIG board we know.
 */
const struct vgpu_mig_board *vgpu_mig_board_by_device(uint16_t device_id);

#endif
