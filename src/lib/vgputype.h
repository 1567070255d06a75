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

/* Capacity of vgpu_type_info.profile and .board, NUL included. */
#define VGPU_PROFILE_MAX 256

struct vgpu_type_info {
	char profile[VGPU_PROFILE_MAX]; /* short name: last space-separated token */
	char board[VGPU_PROFILE_MAX]; /* GPU token: "A30", "RTX6000-Ada", "K1" */
	enum vgpu_backing backing;
	unsigned slices; /* GI compute slices, the <G> of a MIG-backed name; else 0 */
	/*
	 * Framebuffer in MiB; "0" GB means 512 MiB.  0 means unknown: Kepler
	 * names ("K140Q") do not encode it, read it from the type's description
	 * with vgpu_description_framebuffer_mib().
	 */
	unsigned fb_mib;
	char series; /* 'A', 'B', 'C', 'Q'; 0 when none or unknown */
	char attribute[8]; /* "", "ME", "NOME", "MEALL" */
	char gi_profile[24]; /* "1g.6gb+me" for MIG-backed types on known boards */
	int gi_profile_id; /* nvidia-smi -cgi profile ID, -1 when unknown */
};

/**
 * vgpu_type_parse() - classify a vGPU type name by NVIDIA's grammar.
 * @name: full name ("NVIDIA A30-1-6C", "GRID T4-4Q") or short name.
 * @out: filled on every return.
 *
 * The short name is the last space-separated token.  Classes:
 * time-sliced <board>-<GB><S> and the legacy <board>-<GB>B4; Kepler
 * K<1|2><n>0[Q] (no framebuffer in the name: fb_mib 0); MIG-backed
 * <board>-<G>-<GB><S>[ME|NOME|MEALL].  Names outside the grammar get backing
 * VGPU_BACKING_UNKNOWN and the short name as profile.
 *
 * Return: 0 when the name matched the grammar, -EINVAL otherwise,
 * -ENAMETOOLONG if the short name does not fit VGPU_PROFILE_MAX (profile then
 * holds its NUL-terminated prefix and backing is unknown).
 */
int vgpu_type_parse(const char *name, struct vgpu_type_info *out);

/**
 * vgpu_type_spec_names() - does @spec name the type @id, short profile
 * @profile and full name @name?  The one rule every command uses: the type
 * ID as N or nvidia-N; the short or full name in any case ("a30-6c"); or a
 * full name with another prefix ("GRID A30-6C" for "NVIDIA A30-6C").
 * @spec: what the user asked for
 * @id: the type ID
 * @profile: its short name, or NULL when unknown (then only the ID answers)
 * @name: its full name from the driver, or NULL
 * Return: true if it does; an empty @spec names nothing.
 */
bool vgpu_type_spec_names(const char *spec, unsigned id, const char *profile, const char *name);

/**
 * vgpu_description_framebuffer_mib() - framebuffer from an mdev description.
 * @desc: the type's description file, "num_heads=4, frl_config=45,
 *        framebuffer=1024M, max_resolution=4096x2160, max_instance=8".
 *
 * Reads the value of the "framebuffer" key (a whole key: it starts the string
 * or follows ',' or white space): decimal digits without leading zero, then
 * 'M' (MiB) or 'G' (GiB), then the end, ',' or white space.
 *
 * Return: the framebuffer in MiB (> 0), -1 when the key is absent or its
 * value invalid.
 */
long vgpu_description_framebuffer_mib(const char *desc);

/**
 * vgpu_backing_str() - "time-sliced", "mig" or "unknown".
 * @b: the backing
 * Return: the word for @b (static text); "unknown" for any other value.
 */
const char *vgpu_backing_str(enum vgpu_backing b);
/**
 * vgpu_iface_str() - "mdev", "vendor-vfio" or "none".
 * @i: the interface
 * Return: the word for @i (static text), as records and output spell it;
 * "none" for any other value.
 */
const char *vgpu_iface_str(enum vgpu_iface i);
/**
 * vgpu_model_for_device() - model name for a known NVIDIA device ID, or NULL
 * (from pci.ids, for display only).
 * @device_id: the PCI device ID of an NVIDIA GPU
 * Return: the model name ("NVIDIA A30"; static text), or NULL when unknown.
 */
const char *vgpu_model_for_device(uint16_t device_id);

#endif
