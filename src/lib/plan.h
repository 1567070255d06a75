/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan.h - placement and CPU pinning: a request and a const host model in,
 * a plan out that names hardware by PCI address and type id (pure: no I/O,
 * no pointers into the model).
 */
#ifndef VGPU_PLAN_H
#define VGPU_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "model.h"

#define VGPU_MAX_VGPUS 8

struct vgpu_fabric;

struct vgpu_request {
	const char *profiles[VGPU_MAX_VGPUS]; /* short, full name, nvidia-N or N */
	size_t n_profiles;
	unsigned vcpus;
	const char *gpu; /* restrict to this GPU (BDF) or NULL */
	const char *vf; /* use exactly this parent or NULL */
	/* how messages name @gpu and @vf (the caller's option: "--gpu"); NULL: "GPU", "VF" */
	const char *gpu_arg, *vf_arg;
	/* the domain's UUID and the mdev UUIDs, when given; vgpu_plan_set_ids() chooses the rest */
	const char *uuid;
	const char *mdev_uuids[VGPU_MAX_VGPUS];
	struct vgpu_cpuset exclude; /* never use these CPUs (--exclude-cpus, other domains) */
	uint64_t memory_kib; /* guest memory, bound to the node; 0 = not checked */
	const char *memory_arg; /* @memory_kib as the user typed it ("600G"): messages use its unit
				 */
	bool hugepages; /* backed by 1 GiB pages: check the node has them free */
	/*
	 * An HGX board's fabric in vGPU mode (Fabric Manager's FABRIC_MODE=2):
	 * vgpu_domain_plan() gives the VM a free partition of as many GPUs as
	 * it has vGPUs and fills @gpus from it; NULL: no fabric to mind
	 */
	const struct vgpu_fabric *fabric;
	/* one vGPU on each of these GPUs, in order (a partition's), any NUMA node; 0: any GPUs */
	char gpus[VGPU_MAX_VGPUS][VGPU_BDF_LEN];
	size_t n_gpus;
	/* the guest mirrors the host: vGPUs may sit on GPUs of several nodes, one cell each */
	bool mirror;
};

/* One vGPU of the plan. */
struct vgpu_choice {
	char gpu[VGPU_BDF_LEN];
	char parent[VGPU_BDF_LEN];
	enum vgpu_iface iface;
	unsigned type_id;
	char *profile; /* short name */
	enum vgpu_backing backing;
	char *gi_profile; /* MIG-backed on a known board, else NULL */
	char mdev_uuid[VGPU_UUID_LEN]; /* mdev: set by vgpu_plan_set_ids(); "" for vendor VFIO */
	int node; /* the GPU's NUMA node (-1 unknown): a mirrored guest's cell */
	int mem_node; /* the GPU's memory as a NUMA node (Grace), -1 none */
};

/**
 * vgpu_choice_set() - make @c name type @t on parent @p (BDFs and id copied,
 * profile strings duplicated; what @c held before is freed).
 */
void vgpu_choice_set(struct vgpu_choice *c, const struct vgpu_parent *p, const struct vgpu_type *t);

/* One guest NUMA cell of a mirrored guest: a host node holding some of the VM's GPUs. */
struct vgpu_plan_cell {
	int node; /* the host NUMA node */
	unsigned first, slots; /* its vCPU slots: first .. first + slots - 1 */
	unsigned n_vgpus; /* the VM's vGPUs on GPUs of that node */
	struct vgpu_cpuset cpus; /* its host CPUs */
};

struct vgpu_plan {
	char uuid[VGPU_UUID_LEN]; /* the domain's, set by vgpu_plan_set_ids() */
	int node;
	struct vgpu_choice vgpus[VGPU_MAX_VGPUS];
	size_t n_vgpus;
	unsigned *pins; /* pins[i]: host CPU of vCPU i, cores x threads entries */
	unsigned vcpus; /* started; cores x threads may hold more, offline (a spare sibling) */
	unsigned cores, threads; /* guest topology: cores x threads >= vcpus */
	struct vgpu_cpuset cpus; /* the VM's host CPUs */
	char *reason; /* why this parent, in words */
	bool partitioned; /* the VM runs in fabric partition @partition (HGX, vGPU mode) */
	unsigned partition;
	/* a mirrored guest (vgpu_request.mirror): its cells by host node id; 0: not mirrored */
	struct vgpu_plan_cell cells[VGPU_MAX_VGPUS];
	size_t n_cells;
};

/**
 * vgpu_plan_make() - choose a parent for each requested profile and pin CPUs.
 * Capacity is the GPU's: its framebuffer, and time-sliced vGPUs of one GPU
 * all of one type (no mixed-size mode), counting vGPUs that exist already.
 * The plan's UUIDs are left for vgpu_plan_set_ids().
 * @ctx: errors; warnings (unsupported combinations, hugepages not reserved) go to its log
 * @m: a model read with VGPU_READ_TYPES | VGPU_READ_TOPOLOGY (or built so)
 * @req: the profiles, vCPUs, GPU or VF asked for, CPUs to avoid, memory
 * @out: the plan, on success
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no such GPU, VF or
 * profile; -EBUSY: the VF asked for cannot take it; -ENOSPC: no room);
 * free *@out with vgpu_plan_free().
 */
int vgpu_plan_make(struct vgpu_ctx *ctx, const struct vgpu_model *m, const struct vgpu_request *req,
		   struct vgpu_plan **out);
/**
 * vgpu_plan_set_ids() - choose the identities @plan still lacks: the
 * domain's UUID (given in @req, else @existing, else new) and each mdev
 * vGPU's UUID (given, else the next of @prev, else new).  Two vGPUs never
 * share one.
 * @ctx: errors
 * @plan: a plan from vgpu_plan_make(); its uuid and mdev_uuid fields are set
 * @req: the request the plan was made for (its uuid and mdev_uuids)
 * @existing: the domain's current UUID, or NULL to make a new one
 * @prev: the mdev UUIDs the domain's vGPUs had before, in order (NULL: none)
 * @n_prev: how many @prev holds
 * Return: 0, or -EINVAL (a UUID that is not one, a shared mdev UUID) or the
 * error of vgpu_uuid_generate(), with a message in @ctx.
 */
int vgpu_plan_set_ids(struct vgpu_ctx *ctx, struct vgpu_plan *plan, const struct vgpu_request *req,
		      const char *existing, char (*prev)[VGPU_UUID_LEN], size_t n_prev);
/**
 * vgpu_plan_cell_memory() - the share of @mem_kib guest memory that cell @k
 * of a mirrored @plan gets: by its vGPUs, in whole @unit_kib, the rest in
 * cell 0.
 * @plan: a plan with cells
 * @k: the cell
 * @mem_kib: the guest's memory
 * @unit_kib: the granule (1024: MiB; 1 GiB for hugepages)
 * Return: the cell's memory in KiB.
 */
uint64_t vgpu_plan_cell_memory(const struct vgpu_plan *plan, size_t k, uint64_t mem_kib,
			       uint64_t unit_kib);
/**
 * vgpu_plan_free() - free a plan.
 * @p: the plan, or NULL
 */
void vgpu_plan_free(struct vgpu_plan *p);
VGPU_DEFINE_AUTOPTR(plan, struct vgpu_plan, vgpu_plan_free)

/**
 * vgpu_plan_cpus() - pin @vcpus vCPUs to whole free cores of @node into @out.
 * Cores are taken lowest first; all thread siblings of a core go together
 * and vCPUs 2i, 2i+1 land on the siblings of one core.  @out's pins,
 * vcpus, cores, threads, cpus and node are replaced only on success.
 * @ctx: where errors go
 * @t: the host's topology
 * @node: the NUMA node the VM lives on
 * @busy: CPUs that are taken (other domains' pins, --exclude-cpus)
 * @vcpus: how many vCPUs
 * @out: the plan whose CPU fields are set
 * Return: 0 or -EINVAL (no vCPUs) / -ENOENT (no such node) / -ENOSPC (not
 * enough free whole cores) with a message in @ctx.
 */
int vgpu_plan_cpus(struct vgpu_ctx *ctx, const struct vgpu_topology *t, int node,
		   const struct vgpu_cpuset *busy, unsigned vcpus, struct vgpu_plan *out);

/**
 * vgpu_plan_mirror_cpus() - the cells of a mirrored guest and their pins:
 * one cell per NUMA node of @plan's vGPUs (lowest node first), the vCPUs
 * split over them by their vGPUs in whole cores (units of the host's threads
 * per core when the count allows, every cell at least one), each cell pinned
 * to whole free cores of its node as vgpu_plan_cpus() pins one.  A cell that
 * would hold a spare sibling makes the guest single-threaded (the spare would
 * sit between two cells' vCPUs).  @plan's cells, pins, vcpus, cores,
 * threads and cpus are set on success; its node is the caller's.
 * @ctx: where errors go
 * @t: the host's topology
 * @busy: CPUs that are taken
 * @vcpus: how many vCPUs
 * @plan: a plan whose vGPUs are chosen (their node set)
 * Return: 0 or -EINVAL (fewer vCPUs than cells, a GPU without a node) or
 * vgpu_plan_cpus()'s error for a cell's node, with a message in @ctx.
 */
int vgpu_plan_mirror_cpus(struct vgpu_ctx *ctx, const struct vgpu_topology *t,
			  const struct vgpu_cpuset *busy, unsigned vcpus, struct vgpu_plan *plan);
/**
 * vgpu_gpu_room() - how many more vGPUs of @t fit on @g now, by the
 * capacity model (vgpu_capacity_of(): free VFs, reservations, one
 * time-sliced size, framebuffer, maxima, MIG mode and GPU instances).
 * @m: the host (a GPU of the same model gives the framebuffer when @g's lists lack it)
 * @g: the GPU
 * @t: a type of its catalogue
 * Return: the count; UINT_MAX when the model cannot be sure (GPU instances
 * whose profiles nothing tells): the driver decides then.
 */
unsigned vgpu_gpu_room(const struct vgpu_model *m, const struct vgpu_gpu *g,
		       const struct vgpu_type *t);
/**
 * vgpu_node_free_cpus() - the CPUs of @node's whole cores that @busy leaves free.
 * @t: the host's topology
 * @node: a NUMA node id
 * @busy: CPUs that are taken; a core with one taken CPU is taken
 * @out: the free CPUs
 */
void vgpu_node_free_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
			 struct vgpu_cpuset *out);

#endif
