/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vgpu.h - the vgpuctl library: a read-only model of an NVIDIA vGPU host
 * (GPUs, SR-IOV VFs, vGPU types on both host interfaces, NUMA topology),
 * read from sysfs/procfs below a root directory.
 */
#ifndef VGPU_H
#define VGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"
#include "vgputype.h"

#define VGPU_BDF_LEN 13 /* "dddd:bb:dd.f" + NUL */

/* ---- host model ------------------------------------------------------- */

struct vgpu_host;

/* One vGPU type as seen by the whole GPU (shared by all its VFs). */
struct vgpu_type {
	unsigned id; /* N of nvidia-N / creatable_vgpu_types */
	char *name; /* full name from the driver, NULL if unknown */
	char *description; /* mdev only */
	char *device_api; /* mdev only */
	long max_instances; /* from description, -1 unknown */
	struct vgpu_type_info info;
};

/* A type on one parent, with what can be created there now. */
struct vgpu_parent_type {
	const struct vgpu_type *type; /* owned by the GPU's catalogue */
	long available; /* instances creatable now, -1 unknown */
};

struct vgpu_gpu;

/* A vGPU parent: an SR-IOV VF, or the PF itself on non-SR-IOV cards. */
struct vgpu_vf {
	char addr[VGPU_BDF_LEN];
	struct vgpu_gpu *gpu;
	int index; /* VF index, -1 for a PF parent */
	int numa_node;
	int iommu_group; /* -1 when none */
	enum vgpu_iface iface;
	bool in_use;
	bool state_unknown; /* current_vgpu_type unreadable */
	unsigned current_type; /* vendor VFIO or the mdev's type; 0 none */
	char **mdev_uuids;
	size_t n_mdev;
	struct vgpu_parent_type *types;
	size_t n_types;
};

struct vgpu_gpu {
	char addr[VGPU_BDF_LEN];
	uint16_t vendor_id, device_id;
	char *model;
	int numa_node; /* -1 unknown */
	struct vgpu_cpuset cpus; /* local_cpulist */
	bool has_cpus;
	char *driver; /* NULL when unbound */
	int iommu_group;
	int sriov_total_vfs; /* -1 when not SR-IOV capable */
	int sriov_num_vfs;
	enum vgpu_iface iface;
	int minor; /* /dev/nvidia<minor>, -1 unknown */
	int mig_instances; /* GIs from procfs, -1 unknown */
	struct vgpu_vf *vfs; /* parents: VFs, or the PF alone */
	size_t n_vfs;
	struct vgpu_type **types; /* catalogue, sorted by id */
	size_t n_types;
};

struct vgpu_node {
	int id;
	struct vgpu_cpuset cpus;
	uint64_t mem_total_kib;
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

typedef void (*vgpu_warn_fn)(void *data, const char *msg);

/**
 * vgpu_host_open() - open a host rooted at @sysroot (NULL or "/" = real host).
 * Return: 0 or -errno; the message is in *err_out (static storage is never
 * used: the caller frees it) when non-NULL.
 */
int vgpu_host_open(const char *sysroot, struct vgpu_host **out, char **err_out);
void vgpu_host_free(struct vgpu_host *h);
void vgpu_host_set_warn(struct vgpu_host *h, vgpu_warn_fn fn, void *data);
const char *vgpu_last_error(const struct vgpu_host *h);
const char *vgpu_host_root(const struct vgpu_host *h);

/**
 * vgpu_host_scan() - read GPUs, parents, types (with @want_types).
 * Damaged entries are reported through the warn callback and skipped.
 * Return: 0 or -errno.
 */
int vgpu_host_scan(struct vgpu_host *h, bool want_types);
const struct vgpu_gpu *vgpu_host_gpus(const struct vgpu_host *h, size_t *n);
const struct vgpu_gpu *vgpu_host_find_gpu(const struct vgpu_host *h, const char *bdf);
const struct vgpu_vf *vgpu_host_find_vf(const struct vgpu_host *h, const char *bdf);
/* The GPU's catalogue entry for a type id, or NULL. */
const struct vgpu_type *vgpu_gpu_find_type(const struct vgpu_gpu *g, unsigned id);
/*
 * Same, falling back to another GPU of the same model: a vendor-VFIO VF in use
 * drops out of every creatable list of its own GPU, while a sibling GPU with
 * free capacity still names the type (one driver type table per model).
 */
const struct vgpu_type *vgpu_host_find_type(const struct vgpu_host *h, const struct vgpu_gpu *g,
					    unsigned id);
const char *vgpu_vf_state_str(const struct vgpu_vf *vf);

/* Read NUMA/CPU topology. Return: 0 or -errno. */
int vgpu_host_read_topology(struct vgpu_host *h);
const struct vgpu_topology *vgpu_host_topology(const struct vgpu_host *h);
const struct vgpu_node *vgpu_topology_node(const struct vgpu_topology *t, int id);
void vgpu_topology_clear(struct vgpu_topology *t);
/* The thread siblings of the core whose lowest CPU is @core (core_of[] value). */
void vgpu_topology_core_cpus(const struct vgpu_topology *t, int core, struct vgpu_cpuset *out);

/* Normalise "0000:3B:00.0" / "3b:00.0" / "00000000:3B:00.0" to sysfs BDF. */
int vgpu_bdf_normalize(const char *in, char out[VGPU_BDF_LEN]);

/* ---- planning (pure: works on the in-memory model) --------------------- */

#define VGPU_MAX_VGPUS 8

struct vgpu_request {
	const char *profiles[VGPU_MAX_VGPUS]; /* short, full name, nvidia-N or N */
	size_t n_profiles;
	unsigned vcpus;
	const char *gpu; /* restrict to this GPU (BDF) or NULL */
	const char *vf; /* use exactly this VF or NULL */
	struct vgpu_cpuset exclude; /* never use these CPUs (--exclude-cpus, other domains) */
	uint64_t memory_kib; /* guest memory, bound to the node; 0 = not checked */
};

struct vgpu_choice {
	const struct vgpu_vf *vf;
	const struct vgpu_type *type;
};

struct vgpu_plan {
	int node;
	struct vgpu_choice vgpus[VGPU_MAX_VGPUS];
	size_t n_vgpus;
	unsigned pins[VGPU_MAX_CPUS]; /* host CPU of vCPU i */
	unsigned vcpus;
	unsigned cores, threads; /* guest topology: cores x threads == vcpus */
	struct vgpu_cpuset cpus; /* the VM's host CPUs */
	char reason[512]; /* why this VF, in words */
	char warnings[512]; /* '\n'-separated, "" when none */
};

/* Does type t answer to spec (profile, full name, nvidia-N or N)? */
bool vgpu_type_matches(const struct vgpu_type *t, const char *spec);

/**
 * vgpu_plan_cpus() - pin @vcpus vCPUs to whole free cores of @node.
 * Cores are taken lowest first; all thread siblings of a core go together
 * and vCPUs 2i, 2i+1 land on the siblings of one core.
 * Return: 0 or -ENOSPC with a message in @err.
 */
int vgpu_plan_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
		   unsigned vcpus, struct vgpu_plan *out, char *err, size_t errlen);

/* Free whole-core CPUs of @node once @busy is taken out. */
void vgpu_node_free_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
			 struct vgpu_cpuset *out);

/**
 * vgpu_plan_make() - choose VFs for each requested profile and pin CPUs.
 * Host must be scanned with types and its topology read.
 * Return: 0 or -errno with the message in vgpu_last_error().
 */
int vgpu_plan_make(struct vgpu_host *h, const struct vgpu_request *req, struct vgpu_plan *out);

/* ---- domain XML (libxml2 tree API, no I/O) ---------------------------- */

#define VGPU_XML_NS "urn:vgpuctl:domain:1"
#define VGPU_XML_NS_PREFIX "vgpuctl"

struct vgpu_domain_opts {
	const char *name; /* NULL: keep the template's / --from's */
	const char *uuid; /* NULL: keep the existing one, else generate */
	uint64_t memory_kib; /* 0: keep existing */
	const char *virt_type; /* "kvm", "qemu" or NULL to keep */
	bool hugepages;
	const struct vgpu_cpuset *emulator_cpus; /* NULL: the VM's own CPUs */
	const char *mdev_uuids[VGPU_MAX_VGPUS]; /* NULL entries: generate */
};

/**
 * vgpu_domain_build() - edit @doc (a libvirt domain) for @plan: vGPU hostdevs,
 * vCPU pinning, strict memory on the GPU's node, metadata for the hook.
 * @doc: parsed template or existing definition; edited in place.
 * Return: 0 or -errno with a message in @err.
 */
struct _xmlDoc;
int vgpu_domain_build(struct _xmlDoc *doc, const struct vgpu_plan *plan,
		      const struct vgpu_domain_opts *o, char *err, size_t errlen);
/* Parse domain XML safely (no network, no entities, no DTD, size cap). */
int vgpu_domain_parse(const char *buf, size_t len, const char *what, struct _xmlDoc **out,
		      char *err, size_t errlen);
/* The domain's <memory> in KiB (libvirt units). Return: 0 or -EINVAL/-ENOENT. */
int vgpu_domain_memory_kib(struct _xmlDoc *doc, uint64_t *out);
/* Serialise without XML declaration, 2-space indent. Caller frees *out. */
int vgpu_domain_format(struct _xmlDoc *doc, char **out);
/* Random RFC 4122 version 4 UUID. */
int vgpu_uuid_generate(char out[37]);
bool vgpu_uuid_valid(const char *s);
/* Parse "32G", "4096M", "1.5GiB", "512" (MiB) into KiB. */
int vgpu_parse_size_kib(const char *s, uint64_t *out);

/* ---- libvirt (loaded with dlopen() on first use) ----------------------- */

struct vgpu_virt;
/* Return: 0 or -errno with the message in @err. */
int vgpu_virt_open(const char *uri, struct vgpu_virt **out, char *err, size_t errlen);
void vgpu_virt_close(struct vgpu_virt *v);
/**
 * vgpu_virt_pinned_cpus() - host CPUs pinned by the connection's other
 * domains (vcpupin, emulatorpin, iothreadpin, <vcpu cpuset>), active or not.
 * A domain named @self_name or with UUID @self_uuid is skipped (re-planning).
 */
int vgpu_virt_pinned_cpus(struct vgpu_virt *v, const char *self_name, const char *self_uuid,
			  struct vgpu_cpuset *out, char *err, size_t errlen);
/* Add pinned CPUs found in one domain definition to @out. */
int vgpu_domain_pinned_cpus(const char *xml, struct vgpu_cpuset *out);

#endif
