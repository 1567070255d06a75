/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * model.h - a vGPU host as plain data: GPUs, their vGPU parents (SR-IOV
 * VFs, or the PF itself on non-SR-IOV cards), type catalogues and the
 * NUMA/CPU topology.  No file descriptors: the model is filled by
 * vgpu_model_read() (read-host.h) from a struct vgpu_sysfs (and can be read again after
 * a write), or built in memory with the vgpu_model_add_*() builders.
 *
 * Ownership: the model owns everything reachable from it.  Inside one
 * model, parent->gpu and parent_type->type point into the same model and
 * are kept valid by the builders; nothing outside holds such pointers
 * across a call that adds to the model (plans name hardware by BDF).
 */
#ifndef VGPU_MODEL_H
#define VGPU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "util.h"
#include "vgputype.h"

/* NVIDIA's PCI vendor ID: the one place it is spelled */
#define VGPU_PCI_VENDOR_NVIDIA 0x10de

struct vgpu_mig_profile;

/* One vGPU type as the whole GPU sees it (shared by all its parents). */
struct vgpu_type {
	unsigned id; /* N of nvidia-N / creatable_vgpu_types */
	char *name; /* full name from the driver */
	char *description; /* mdev only, NULL otherwise */
	char *device_api; /* mdev only, NULL otherwise */
	long max_instances; /* per GPU: from the description or NVML, -1 unknown */
	/*
	 * Time-sliced, per GPU in mixed-size mode: NVML's placements of the type
	 * for that mode (vgpu-host.md 5.2: often below max_instances), -1 unknown
	 */
	long max_mixed;
	/*
	 * MIG-backed: vGPUs of this type one GPU instance holds (NVML's
	 * MaxInstancesPerGpuInstance), -1 unknown (then 1, or the GI's memory
	 * over the type's framebuffer where the board time-slices inside GIs).
	 */
	long per_gi;
	bool from_driver; /* max_instances, per_gi and the GI profile came from NVML */
	char *source; /* the file the name came from, for messages; NULL in memory */
	struct vgpu_type_info info;
};

/* A type on one parent, with what can be created there now. */
struct vgpu_parent_type {
	const struct vgpu_type *type; /* in the GPU's catalogue */
	long available; /* instances creatable now, -1 unknown */
};

struct vgpu_gpu;

/* A vGPU parent: an SR-IOV VF, or the PF itself on non-SR-IOV cards (index -1). */
struct vgpu_parent {
	char addr[VGPU_BDF_LEN];
	const struct vgpu_gpu *gpu;
	int index; /* VF index, -1 for a PF parent */
	int numa_node;
	int iommu_group; /* -1 when none */
	enum vgpu_iface iface;
	bool in_use;
	bool state_unknown; /* current_vgpu_type unreadable */
	unsigned current_type; /* vendor VFIO or the mdev's type; 0 none */
	int gi_id; /* the GPU instance its MIG-backed vGPU runs on, -1 none or unknown */
	struct vgpu_strv mdevs; /* UUIDs of the mdevs on this parent */
	/*
	 * vGPUs claimed by owner records that do not exist now (reserved for
	 * --per-start, or gone after a reboot): taken all the same.
	 */
	unsigned n_reserved;
	unsigned reserved_type; /* type of the last one; 0 unknown (a damaged record) */
	unsigned n_claimed; /* vGPUs on it now that owner records claim (a domain's) */
	struct vgpu_parent_type *types;
	size_t n_types;
};

/* GPU instances per GPU the model keeps (a MIG GPU has at most 8 memory slices) */
#define VGPU_GIS_MAX 32

/* A GPU instance (MIG). */
struct vgpu_gi {
	int id; /* GI id: gi<N> in procfs, NVML's id */
	const struct vgpu_mig_profile *profile; /* in the board's table; NULL unknown */
	int start; /* first memory slice, -1 unknown */
	unsigned used; /* vGPUs on it, reserved ones included (vgpu_model_count_gi_users()) */
	unsigned used_type; /* their type (the last one counted), 0 none */
};

/* A setting the driver may or may not have told us. */
enum vgpu_tristate {
	VGPU_UNKNOWN = -1,
	VGPU_OFF = 0,
	VGPU_ON = 1,
};

struct vgpu_gpu {
	char addr[VGPU_BDF_LEN];
	uint16_t vendor_id, device_id;
	uint32_t subsystem; /* subsystem vendor << 16 | subsystem device (the board), 0 unknown */
	char *model;
	int numa_node; /* -1 unknown */
	/* its memory as a CPU-less NUMA node (coherent: Grace; the driver's numa_status), -1 none
	 */
	int mem_node;
	struct vgpu_cpuset cpus; /* local_cpulist */
	bool has_cpus;
	char *driver; /* NULL when unbound */
	int iommu_group; /* -1 when none */
	int sriov_total_vfs; /* -1 when not SR-IOV capable */
	int sriov_num_vfs;
	enum vgpu_iface iface;
	int minor; /* /dev/nvidia<minor>, -1 unknown */
	int mig_instances; /* GIs from procfs, -1 unknown */
	enum vgpu_tristate mig_current, mig_pending; /* MIG mode (NVML), else unknown */
	enum vgpu_tristate hetero; /* mixed-size time-sliced mode (NVML), else unknown */
	const char *mig_source; /* who said: "nvml", "cache" (static text); NULL nobody */
	uint64_t fb_mib; /* the GPU's framebuffer (NVML), 0 unknown */
	struct vgpu_gi *gis; /* its GPU instances, by id */
	size_t n_gis;
	bool gis_exact; /* every GI's profile and start are known (NVML or its cache) */
	bool types_whole; /* the catalogue is the board's whole table (stored, or NVML) */
	struct vgpu_parent *parents; /* VFs, or the PF alone */
	size_t n_parents;
	struct vgpu_type **types; /* catalogue, sorted by id */
	size_t n_types;
	int module_id; /* NVML's module ID (HGX: Fabric Manager's physical ID), -1 unknown */
};

struct vgpu_node {
	int id;
	struct vgpu_cpuset cpus;
	uint64_t mem_total_kib; /* 0 unknown */
	long hugepages_1g_total, hugepages_1g_free; /* -1 unknown */
};

struct vgpu_topology {
	struct vgpu_node *nodes;
	size_t n_nodes;
	struct vgpu_cpuset online;
	/* core_of[cpu]: lowest CPU of the cpu's thread-sibling set, -1 offline */
	int *core_of;
	unsigned n_cpus; /* size of core_of: highest online CPU + 1 */
};

struct vgpu_model {
	struct vgpu_gpu *gpus;
	size_t n_gpus;
	struct vgpu_topology topo;
	bool has_topology;
};

/* ---- building in memory (tests, planners working on a copy) --------------- */

/**
 * vgpu_model_new() - an empty model; free with vgpu_model_free().
 * Return: the model (never NULL).
 */
struct vgpu_model *vgpu_model_new(void);
/**
 * vgpu_model_free() - free @m and all it owns (NULL is fine).
 * @m: the model, or NULL
 */
void vgpu_model_free(struct vgpu_model *m);
VGPU_DEFINE_AUTOPTR(model, struct vgpu_model, vgpu_model_free)
/**
 * vgpu_model_add_gpu() - add a GPU (zeroed but for -1 "unknown" fields and @addr).
 * @m: the model; its GPU array may move (the parents' ->gpu pointers are updated)
 * @addr: the GPU's PCI address, copied as given (normalize it first)
 * @device_id: the PCI device ID; the vendor is VGPU_PCI_VENDOR_NVIDIA
 * Return: the new GPU, owned by @m; valid until the next vgpu_model_add_gpu().
 */
struct vgpu_gpu *vgpu_model_add_gpu(struct vgpu_model *m, const char *addr, uint16_t device_id);
/**
 * vgpu_gpu_add_parent() - add a parent to @g (index -1: the PF itself).
 * @g: the GPU; its parent array may move
 * @addr: the parent's PCI address, copied as given
 * @index: the VF index, or -1 for the PF itself on non-SR-IOV cards
 *
 * The parent starts free, with @g's NUMA node and no IOMMU group (-1).
 * Return: the new parent, owned by @g's model; valid until the next addition to @g.
 */
struct vgpu_parent *vgpu_gpu_add_parent(struct vgpu_gpu *g, const char *addr, int index);
/**
 * vgpu_gpu_add_type() - add type @id named @name (copied) to @g's catalogue, classified.
 * @g: the GPU; its catalogue stays sorted by id
 * @id: the type id (N of nvidia-N)
 * @name: the driver's type name, parsed with vgpu_type_parse()
 * Return: the new type, or the one already there with @id (its name unchanged);
 * owned by @g's model.
 */
struct vgpu_type *vgpu_gpu_add_type(struct vgpu_gpu *g, unsigned id, const char *name);
/**
 * vgpu_gpu_add_types() - vgpu_gpu_add_type() for a whole list at once: one
 * sort and one merge, n log n in the list and linear in the catalogue,
 * where adding one by one in the list's order could be quadratic.
 * @g: the GPU; its catalogue stays sorted by id
 * @ids: the type ids of the list
 * @names: their names, as vgpu_gpu_add_type() takes them
 * @n: how many
 * @added: per entry, the type it added, or NULL when @g had the id already
 *         (or the list named it before)
 */
void vgpu_gpu_add_types(struct vgpu_gpu *g, const unsigned *ids, char *const *names, size_t n,
			struct vgpu_type **added);
/**
 * vgpu_gpu_available() - how many of each catalogue type @g's parents can
 * create now, summed over its parents as each parent's list says (no
 * capacity model across types).  P x T log T for P parents and T types.
 * @g: the GPU
 * @out: one count per entry of @g's catalogue, in its order
 */
void vgpu_gpu_available(const struct vgpu_gpu *g, long *out);
/**
 * vgpu_gpu_add_gi() - add GPU instance @id to @g (kept sorted by id), or
 * complete the one there.
 * @g: the GPU
 * @id: the GI id
 * @profile: its profile in the board's table, NULL unknown (a known one is kept)
 * @start: its first memory slice, -1 unknown (a known one is kept)
 * Return: the GI, owned by @g; valid until the next addition.
 */
struct vgpu_gi *vgpu_gpu_add_gi(struct vgpu_gpu *g, int id, const struct vgpu_mig_profile *profile,
				int start);
/**
 * vgpu_gpu_find_gi() - @g's GI with @id, or NULL.
 * @g: the GPU
 * @id: the GI id
 * Return: the GI, borrowed from the model.
 */
struct vgpu_gi *vgpu_gpu_find_gi(const struct vgpu_gpu *g, int id);
/**
 * vgpu_parent_add_type() - record that @p offers @t with @available instances now.
 * @p: the parent
 * @t: a type in the catalogue of @p's GPU (the pointer is kept)
 * @available: instances creatable now, -1 unknown
 */
void vgpu_parent_add_type(struct vgpu_parent *p, const struct vgpu_type *t, long available);
/**
 * vgpu_model_set_topology() - set the topology (takes ownership of t's arrays).
 * @m: the model; a topology it had is freed
 * @t: the topology; zeroed afterwards
 */
void vgpu_model_set_topology(struct vgpu_model *m, struct vgpu_topology *t);
/**
 * vgpu_topology_clear() - free @t's arrays and zero it.
 * @t: the topology (a zeroed one is fine)
 */
void vgpu_topology_clear(struct vgpu_topology *t);

/* ---- looking things up -------------------------------------------------- */

/**
 * vgpu_model_find_gpu() - the GPU at @bdf (any accepted spelling), or NULL.
 * @m: the model
 * @bdf: a PCI address as vgpu_bdf_normalize() takes it
 * Return: the GPU, borrowed from @m; NULL when @m has none there or @bdf is
 * not an address.
 */
const struct vgpu_gpu *vgpu_model_find_gpu(const struct vgpu_model *m, const char *bdf);
/**
 * vgpu_model_gpu_index() - NVIDIA's index of a GPU: its place in PCI bus
 * order among the NVIDIA GPUs, as nvidia-smi numbers them and a host
 * config's "devices: [0]" names them.
 * @m: the model (GPUs sorted by address, as the readers leave them)
 * @g: a GPU of @m
 * Return: the index from 0, or -1 when @g is not an NVIDIA GPU of @m.
 */
int vgpu_model_gpu_index(const struct vgpu_model *m, const struct vgpu_gpu *g);
/**
 * vgpu_model_find_gpu_arg() - the GPU a user named: a PCI address, or
 * NVIDIA's index (vgpu_model_gpu_index()) in decimal.
 * @m: the model
 * @arg: "0000:3b:00.0", "3b:00.0" or "0"
 * Return: the GPU, borrowed from @m; NULL when @m has none such.
 */
const struct vgpu_gpu *vgpu_model_find_gpu_arg(const struct vgpu_model *m, const char *arg);
/**
 * vgpu_model_find_parent() - the vGPU parent at @bdf, or NULL.
 * @m: the model
 * @bdf: a PCI address as vgpu_bdf_normalize() takes it
 * Return: the parent, borrowed from @m; NULL when @m has none there or @bdf
 * is not an address.
 */
const struct vgpu_parent *vgpu_model_find_parent(const struct vgpu_model *m, const char *bdf);
/**
 * vgpu_model_reserve() - count one reserved vGPU of @type_id (0: unknown) on
 * the parent at @bdf.
 * @m: the model
 * @bdf: the parent's PCI address (any accepted spelling)
 * @type_id: the reserved vGPU's type, 0 unknown (a damaged record); becomes
 *           the parent's reserved_type
 * Return: false when the model has no such parent.
 */
bool vgpu_model_reserve(struct vgpu_model *m, const char *bdf, unsigned type_id);
/**
 * vgpu_model_claim() - count one vGPU on the parent at @bdf as an owner
 * record's (a domain's, not a host configuration's).
 * @m: the model
 * @bdf: the parent's PCI address (any accepted spelling)
 * Return: false when the model has no such parent.
 */
bool vgpu_model_claim(struct vgpu_model *m, const char *bdf);
/**
 * vgpu_gpu_find_type() - the GPU's catalogue entry for a type id, or NULL.
 * @g: the GPU
 * @id: the type id
 * Return: the type, borrowed from the model (binary search); NULL when @g's
 * catalogue lacks it.
 */
const struct vgpu_type *vgpu_gpu_find_type(const struct vgpu_gpu *g, unsigned id);
/**
 * vgpu_gpu_type_index() - where type @id sits in @g's catalogue.
 * @g: the GPU
 * @id: the type id
 * Return: its index (binary search), or @g->n_types when the catalogue lacks it.
 */
size_t vgpu_gpu_type_index(const struct vgpu_gpu *g, unsigned id);
/**
 * vgpu_model_find_type() - vgpu_gpu_find_type(), falling back to another GPU
 * of the same model.
 * @m: the model @g belongs to
 * @g: the GPU asked first
 * @id: the type id
 *
 * A vendor-VFIO VF in use drops out of every creatable list of its own GPU,
 * while a sibling GPU with free capacity still names the type (one driver
 * type table per model).  "Same model" means the same PCI device ID.
 * Return: the type, borrowed from @m, or NULL when no such GPU names it.
 */
const struct vgpu_type *vgpu_model_find_type(const struct vgpu_model *m, const struct vgpu_gpu *g,
					     unsigned id);
/**
 * vgpu_parent_state_str() - the parent's state in one word.
 * @p: the parent
 * Return: "free", "in-use", "reserved" or "unknown" (static text); unknown
 * wins over in-use, in-use over reserved.
 */
const char *vgpu_parent_state_str(const struct vgpu_parent *p);
/**
 * vgpu_type_matches() - does @t answer to @spec (short profile, full name, nvidia-N or N)?
 * @t: the type
 * @spec: what the user asked for; names compare in any case ("a30-6c")
 * Return: true if it does; an empty @spec matches nothing.
 */
bool vgpu_type_matches(const struct vgpu_type *t, const char *spec);
/**
 * vgpu_gpu_match_type() - the first type of @g that answers to @spec
 * (vgpu_type_matches()), or NULL.
 * @g: the GPU
 * @spec: what the user asked for
 * Return: the type, borrowed from @g, or NULL.
 */
const struct vgpu_type *vgpu_gpu_match_type(const struct vgpu_gpu *g, const char *spec);

/**
 * vgpu_topology_node() - node @id of @t, or NULL.
 * @t: the topology
 * @id: the NUMA node id
 * Return: the node, borrowed from @t, or NULL when @t has none with @id.
 */
const struct vgpu_node *vgpu_topology_node(const struct vgpu_topology *t, int id);
/**
 * vgpu_topology_core_cpus() - the thread siblings of the core whose lowest
 * CPU is @core (a core_of[] value).
 * @t: the topology
 * @core: the core's lowest online CPU
 * @out: the core's online CPUs (empty if @core is no core's lowest CPU)
 */
void vgpu_topology_core_cpus(const struct vgpu_topology *t, int core, struct vgpu_cpuset *out);
/**
 * vgpu_topology_next_core() - the lowest core (its lowest CPU) >= @from
 * whose lowest CPU is in @within, or -1; see vgpu_topology_for_each_core().
 * @t: the topology
 * @within: the CPUs to consider
 * @from: the first CPU number looked at (not negative)
 * Return: the core's lowest CPU, or -1 when there is none.
 */
int vgpu_topology_next_core(const struct vgpu_topology *t, const struct vgpu_cpuset *within,
			    int from);
/* for (each core c of @t whose lowest CPU is in @within), lowest first */
#define vgpu_topology_for_each_core(t, within, c)                                                  \
	for (int c = vgpu_topology_next_core(t, within, 0); c >= 0;                                \
	     c = vgpu_topology_next_core(t, within, c + 1))

#endif
