/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * migrate-plan.h - where a domain migrating to this host lands: one
 * decision (pure: no I/O) that the destination's hook (migrate begin, which
 * then writes the incoming records) and `vgpuctl migrate-offer` (which
 * answers the source's migrate-xml with it) both make, so that migrate-xml
 * prints the XML the hook will print.
 */
#ifndef VGPU_MIGRATE_PLAN_H
#define VGPU_MIGRATE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "ctx.h"
#include "model.h"
#include "plan.h"
#include "records.h"

/* One vGPU of the migrating domain, as its XML and our metadata say on the source. */
struct vgpu_mplan_vgpu {
	const char *profile; /* its type as the metadata names it */
	enum vgpu_iface iface; /* on the source */
	const char *mdev_uuid; /* mdev: the UUID its hostdev names on the source; else NULL */
	const char *vf; /* vendor VFIO: the source's VF its hostdev names; else NULL */
	bool display; /* mdev: its hostdev has display or ramfb on, which a VF hostdev cannot */
};

/* The migrating domain. */
struct vgpu_mplan_in {
	const char *uuid; /* normalized: the records it owns here are matched by it */
	const struct vgpu_mplan_vgpu *vgpus;
	size_t n_vgpus; /* 1 to VGPU_MAX_VGPUS */
	unsigned vcpus; /* <vcpu>, for the CPUs of the target GPU's node (0: 1) */
	uint64_t memory_kib; /* guest memory, checked against the node; 0: not checked */
	bool pinned; /* we pinned it: the CPUs chosen here are its pinning */
	bool iface_change; /* mdev <-> VF allowed (libvirt >= 11.0) */
	const char *iface_change_why; /* why not, for the refusal (NULL: a plain sentence) */
	/*
	 * an HGX board in vGPU mode (FABRIC_MODE=2): the free fabric partition
	 * the caller chose (vgpu_fabric_place_vgpus()), vGPU i on its GPU
	 * part_gpus[i]; partitioned false: none
	 */
	bool partitioned;
	unsigned partition;
	char part_gpus[VGPU_MAX_VGPUS][VGPU_BDF_LEN];
};

/* Where one vGPU lands here. */
struct vgpu_mplan_landing {
	char parent[VGPU_BDF_LEN]; /* the VF (vendor VFIO) or mdev parent here */
	char gpu[VGPU_BDF_LEN];
	/* mdev: the source's UUID when it is free here; "" when it needs a new one; VF: "" */
	char mdev_uuid[VGPU_UUID_LEN];
	enum vgpu_iface iface; /* here: another than the source's only with iface_change */
	unsigned type_id; /* the type's ID here */
	char profile[VGPU_PROFILE_MAX]; /* the type's short name here */
	bool changed; /* the hostdev must name another device than on the source */
};

/* The decision. */
struct vgpu_mplan {
	struct vgpu_mplan_landing landing[VGPU_MAX_VGPUS]; /* in the order of the input */
	size_t n_landing;
	int node; /* the target GPUs' NUMA node (-1: unknown) */
	struct vgpu_cpuset cpus; /* the host CPUs chosen there for the domain's vCPUs */
	unsigned pins[VGPU_MAX_CPUS]; /* pins[i]: the host CPU of vCPU i there, whole cores */
	unsigned n_pins; /* every slot of the guest topology (cores x threads); 0: none */
	bool partitioned; /* the domain runs in fabric partition @partition here */
	unsigned partition;
};

/**
 * vgpu_mplan_make() - choose a device here for each vGPU of a domain
 * migrating here, as the hook does under the host lock: the capacity
 * model's plan (vgpu_plan_make(), other records' pinned CPUs excluded); an
 * mdev keeps its UUID when no mdev and no record here has it (and no vGPU
 * before it kept the same), else its landing names "" (the caller makes a
 * new one); a vendor-VFIO vGPU gets a VF of this host.  Refused: records of
 * the domain here already active (-EEXIST), no room (the plan's error), an
 * interface change without @in->iface_change, or an mdev with a display
 * that would become a VF (-ENOTSUP).  Incoming records of the domain (an
 * earlier attempt) are not counted: the hook replaces them.  With
 * @in->partitioned the vGPUs go on the partition's GPUs, one on each.
 * @ctx: errors; the plan's warnings go to its log
 * @m: the target's model (VGPU_READ_TYPES | VGPU_READ_TOPOLOGY)
 * @recs: its owner records, the expired incoming ones dropped
 * @in: the domain
 * @out: the landings, node, CPUs and pins, on success
 * Return: 0 or -errno with a one-line message in @ctx.
 */
int vgpu_mplan_make(struct vgpu_ctx *ctx, const struct vgpu_model *m,
		    const struct vgpu_records *recs, const struct vgpu_mplan_in *in,
		    struct vgpu_mplan *out);

#endif
