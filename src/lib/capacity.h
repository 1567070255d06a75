/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity.h - how many more vGPUs of a type a GPU takes now, counted the
 * way the driver counts (pure over the model: no I/O).
 *
 * It accounts for free VFs and owner reservations, the type's per-GPU
 * maximum, time-sliced mode (one size per GPU unless mixed-size mode is on),
 * the framebuffer left, MIG mode, free GPU instances of the type's profile,
 * room to create one, and vGPUs per GI for types time-sliced inside a GI.
 * When nothing fits, the first reason that applies, from a closed list.
 */
#ifndef VGPU_CAPACITY_H
#define VGPU_CAPACITY_H

#include "model.h"
#include "records.h"

/* Why a GPU takes no more of a type, in the order they are checked. */
enum vgpu_cap_reason {
	VGPU_CAP_OK = 0, /* available > 0 */
	VGPU_CAP_NOT_SUPPORTED, /* the board has no such type */
	VGPU_CAP_VFS_DISABLED, /* SR-IOV GPU with its VFs off */
	VGPU_CAP_MIG_MODE_OFF, /* MIG-backed type, MIG mode off */
	VGPU_CAP_MIG_MODE_ON, /* time-sliced type, MIG mode on */
	/*
	 * MIG mode is not known (no NVML) and the driver's lists show the other
	 * kind: a MIG-backed type where only time-sliced ones are offered or held,
	 * or the reverse (GPU instances there)
	 */
	VGPU_CAP_MIG_MODE_UNKNOWN,
	VGPU_CAP_NO_ROOM_FOR_GI, /* no free GI of the profile and no room to create one */
	VGPU_CAP_NO_GI, /* no free GI of the profile, but room to create one */
	VGPU_CAP_OTHER_SIZE, /* time-sliced: another size is there, mixed-size mode off */
	VGPU_CAP_FB_FULL, /* not enough framebuffer left */
	VGPU_CAP_MAX_INSTANCES, /* the type's per-GPU maximum is reached */
	VGPU_CAP_RESERVED, /* owner records hold what is left */
	VGPU_CAP_ALL_VFS_HELD, /* every VF holds a vGPU */
	VGPU_CAP_N_REASONS
};

/* Capacity of one type on one GPU. */
struct vgpu_capacity {
	long available; /* how many more can be created now (>= 0) */
	long max_instances; /* per-GPU maximum, -1 unknown */
	long per_gi; /* vGPUs one GI of the profile holds; -1 for time-sliced types */
	enum vgpu_cap_reason reason; /* VGPU_CAP_OK when available > 0 */
	bool exact; /* false where the GI layout had to be inferred from the driver's lists */
	/*
	 * RESERVED / ALL_VFS_HELD: the domains the records name, comma-separated
	 * ("" when no record says); allocated, free with vgpu_capacity_clear().
	 */
	char *domains;
};

/**
 * vgpu_capacity_of() - how many more vGPUs of @t @g takes now, or why none.
 * @m: the model @g belongs to (GPUs of the same PCI device ID share a
 *     framebuffer size and a type table)
 * @g: the GPU
 * @t: the type (from any catalogue of @m; matched to @g's by id)
 * @recs: owner records, to name the domains that hold what is left; NULL: none named
 * @out: the answer; clear it with vgpu_capacity_clear()
 *
 * Linear in @g's parents and catalogue.  Owner reservations count as
 * vGPUs that exist.
 */
void vgpu_capacity_of(const struct vgpu_model *m, const struct vgpu_gpu *g,
		      const struct vgpu_type *t, const struct vgpu_records *recs,
		      struct vgpu_capacity *out);

/**
 * vgpu_gpu_capacities() - vgpu_capacity_of() for every type of @g's
 * catalogue, with what the answers share (MIG mode, framebuffer, what the
 * lists offer) worked out once: linear in the listing, where asking type by
 * type walks every parent's list for each type.
 * @m: the model @g belongs to
 * @g: the GPU
 * @recs: owner records, or NULL
 * @out: one answer per catalogue entry, in its order; clear each
 */
void vgpu_gpu_capacities(const struct vgpu_model *m, const struct vgpu_gpu *g,
			 const struct vgpu_records *recs, struct vgpu_capacity *out);

/**
 * vgpu_capacity_clear() - free what @c holds and zero it.
 * @c: an answer of vgpu_capacity_of() (a zeroed one is fine)
 */
void vgpu_capacity_clear(struct vgpu_capacity *c);

/**
 * vgpu_cap_reason_code() - the reason's code as `why` prints it.
 * @r: the reason
 * Return: "not-supported", "vfs-disabled", ... (static text); "" for VGPU_CAP_OK.
 */
const char *vgpu_cap_reason_code(enum vgpu_cap_reason r);

/**
 * vgpu_cap_reason_text() - one sentence saying the reason, then the next step.
 * @r: the reason
 * Return: static text; "" for VGPU_CAP_OK.
 */
const char *vgpu_cap_reason_text(enum vgpu_cap_reason r);

/**
 * vgpu_type_same_size() - whether time-sliced @a and @b may share a GPU
 * outside mixed-size mode: the same type on mdev, the same framebuffer
 * size on vendor-specific VFIO (L40S-4Q beside L40S-4C).
 * @a: a type
 * @b: another
 * @iface: the GPU's interface
 * Return: true when they may.
 */
bool vgpu_type_same_size(const struct vgpu_type *a, const struct vgpu_type *b,
			 enum vgpu_iface iface);

/**
 * vgpu_gpu_mig_mode() - the GPU's MIG mode: NVML's answer, else what its
 * vGPUs, GPU instances and type lists show.
 * @g: the GPU
 * Return: VGPU_ON, VGPU_OFF, or VGPU_UNKNOWN when nothing tells.
 */
enum vgpu_tristate vgpu_gpu_mig_mode(const struct vgpu_gpu *g);

/**
 * vgpu_gpu_framebuffer_mib() - the GPU's framebuffer in MiB: NVML's total,
 * else the largest time-sliced type of its model times its maximum (one
 * such vGPU owns the whole GPU).
 * @m: the model
 * @g: the GPU
 * Return: MiB, 0 unknown.
 */
uint64_t vgpu_gpu_framebuffer_mib(const struct vgpu_model *m, const struct vgpu_gpu *g);

/**
 * vgpu_gpu_types_whole() - is @g's catalogue the board's whole type table?
 * mdev lists every type (with 0 available), a GPU without vGPUs lists every
 * type, and a stored or NVML catalogue is whole; a vendor-VFIO GPU holding
 * vGPUs lists only what still fits.
 * @g: the GPU
 * Return: true when a type it lacks is one the board does not have.
 */
bool vgpu_gpu_types_whole(const struct vgpu_gpu *g);

/**
 * vgpu_type_max_instances() - the most vGPUs of @t @g takes in its time-slice
 * mode: in mixed-size mode NVML's count for that mode where it is lower,
 * else the type's maximum.
 * @g: the GPU
 * @t: one of its types
 * Return: the count, or -1 unknown.
 */
long vgpu_type_max_instances(const struct vgpu_gpu *g, const struct vgpu_type *t);

/**
 * vgpu_type_per_gi() - vGPUs of MIG-backed type @t one GI holds: the
 * driver's number, else the GI's memory over the type's framebuffer on boards
 * that time-slice inside GIs, else 1.
 * @t: the type
 * Return: >= 1 for a MIG-backed type, -1 for any other.
 */
long vgpu_type_per_gi(const struct vgpu_type *t);

/**
 * vgpu_model_unnamed_holder() - a vGPU parent that holds (or a record
 * reserves) a type no list or stored catalogue names, on a GPU of @profile's
 * board: it may hold @profile.  A vendor-VFIO GPU lists only what still fits,
 * so without NVML a held type can be nameless, and "no GPU offers it" would
 * be wrong.
 * @m: the model
 * @profile: a type's short name ("H100-3-40C"), any case
 * Return: the first such parent (borrowed from @m), or NULL.
 */
const struct vgpu_parent *vgpu_model_unnamed_holder(const struct vgpu_model *m,
						    const char *profile);

struct vgpu_mig_gi;

/**
 * vgpu_gpu_known_gis() - @g's GPU instances with their profiles and starts,
 * as a planner takes them (vgpu_mig_solve()'s existing GIs), where they are
 * all known: NVML (or its cache) listed them, or there are none.
 * @g: the GPU
 * @out: a heap array of them (NULL when none), on success
 * @n: how many, on success
 * Return: 0, or -ENOENT when some GI's profile or start is not known (no NVML).
 */
int vgpu_gpu_known_gis(const struct vgpu_gpu *g, struct vgpu_mig_gi **out, size_t *n);

#endif
