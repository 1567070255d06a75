/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vgputype.h - NVIDIA vGPU type-name grammar, MIG profile tables and PCI model
 * names (pure: no I/O).
 */
#ifndef VGPU_VGPUTYPE_H
#define VGPU_VGPUTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- vGPU type names (pure) -------------------------------------------- */

enum vgpu_backing {
	VGPU_BACKING_UNKNOWN = 0,
	VGPU_BACKING_TIME_SLICED,
	VGPU_BACKING_MIG,
};

enum vgpu_iface {
	VGPU_IFACE_NONE = 0,
	VGPU_IFACE_MDEV,
	VGPU_IFACE_VENDOR_VFIO,
};

struct vgpu_type_info {
	char profile[64]; /* short name: last space-separated token */
	char board[40]; /* GPU token: "A30", "RTX6000-Ada" */
	enum vgpu_backing backing;
	unsigned slices; /* GI compute slices (MIG-backed), else 0 */
	unsigned fb_mib; /* framebuffer; "0" GB means 512 MiB */
	char series; /* 'A', 'B', 'C', 'Q'; 0 when unknown */
	char attribute[8]; /* "", "ME", "NOME", "MEALL", "GFX" */
	char gi_profile[24]; /* "1g.6gb+me" for MIG-backed types on known boards */
	int gi_profile_id; /* nvidia-smi -cgi profile ID, -1 when unknown */
};

/**
 * vgpu_type_parse() - classify a vGPU type name by NVIDIA's grammar.
 * @name: full name ("NVIDIA A30-1-6C", "GRID T4-4Q") or short name.
 * Names outside the grammar get backing VGPU_BACKING_UNKNOWN and the short
 * name as profile.
 * Return: 0 when the name matched the grammar, -EINVAL otherwise (out is
 * filled either way), -ENAMETOOLONG if a token does not fit.
 */
int vgpu_type_parse(const char *name, struct vgpu_type_info *out);
const char *vgpu_backing_str(enum vgpu_backing b);
const char *vgpu_iface_str(enum vgpu_iface i);
/* Model name for a known NVIDIA device ID, or NULL. */
const char *vgpu_model_for_device(uint16_t device_id);

struct vgpu_mig_profile {
	const char *name; /* "1g.6gb+me" */
	int id; /* nvidia-smi GI profile ID */
	unsigned slices; /* memory slices */
	unsigned max; /* instances per GPU */
	const char *placements; /* starts, "0,1,2,3" */
};

struct vgpu_mig_board {
	const char *tokens; /* space-separated type-name board tokens */
	const char *model;
	unsigned mem_slices;
	const struct vgpu_mig_profile *profiles;
	size_t n_profiles;
};

/* MIG table for a board token ("A30", "H100L"), or NULL. */
const struct vgpu_mig_board *vgpu_mig_board_find(const char *token);

#endif
