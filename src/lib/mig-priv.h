/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the MIG files: mig.c (planning) and mig-smi.c
 * (nvidia-smi's output).  Nothing else includes this.
 */
#ifndef VGPU_MIG_PRIV_H
#define VGPU_MIG_PRIV_H

/* Placements are uint16_t bitmasks: no board has more memory slices. */
#define MIG_SLICES_MAX 16

struct vgpu_mig_board;
struct vgpu_mig_profile;

/* The profile of board @b named @name (any case), or NULL (mig.c). */
const struct vgpu_mig_profile *mig_profile_by_name(const struct vgpu_mig_board *b,
						   const char *name);
#endif
