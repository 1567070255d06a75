/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hook.h - what the libvirt qemu hook decides, one call per phase, without
 * libvirt and without libxml2 (the caller reads stdin when the library asks,
 * and parses the XML with the hardened parser when the library says so).
 *
 * prepare begin: every vGPU the owner records give the domain exists with
 * its type, created where missing (after a reboot, or per-start); the
 * incoming records a migration here wrote become active.
 * release end: per-start vGPUs are destroyed, and so is what the prepare of
 * a start that failed created (after a failed incoming start, the records
 * the migration wrote go too); the others stay until release.  A release
 * whose reason is "migrated" (libvirt 10.5 and later) frees all of the
 * domain's vGPUs here and drops their records, as `release` does: the
 * domain runs on another host now.
 *
 * A start that fails after prepare ends in release without started (the
 * daemon calls stopped and release on every failure path).  prepare notes
 * what it created in VGPU_PREPARED_DIR/DOMAIN; started drops the note; a
 * release that finds it destroys exactly those vGPUs.  run/ is empty after
 * a reboot, as the vGPUs are.
 */
#ifndef VGPU_HOOK_H
#define VGPU_HOOK_H

#include <stdbool.h>

#include "cpuset.h"
#include "ctx.h"
#include "params.h"
#include "plan.h"
#include "records.h"
#include "sysfs.h"

#define VGPU_PREPARED_DIR "run/vgpuctl/prepared"
/* the fabric partition prepare activated, per domain (its ID): release deactivates it */
#define VGPU_ACTIVATED_DIR "run/vgpuctl/partitions"
/* the domain XML on the hook's stdin is read up to this many bytes (VGPU_XML_MAX_SIZE) */
#define VGPU_HOOK_XML_MAX (4u << 20)
/* and for at most this long: libvirt writes it at once (a stuck writer must not hang a start) */
#define VGPU_HOOK_STDIN_MS 10000
/* a hook waiting here holds up a VM start: wait less than assign does */
#define VGPU_HOOK_LOCK_WAIT_MS 10000

/* What libvirt calls the hook for, of what the hook acts on. */
enum vgpu_hook_phase {
	VGPU_HOOK_PREPARE, /* prepare begin: the domain's vGPUs exist as recorded */
	VGPU_HOOK_STARTED, /* started begin: the start went through */
	VGPU_HOOK_RELEASE, /* release end: per-start vGPUs and a failed start's go */
	VGPU_HOOK_MIGRATE, /* migrate begin, on the destination: incoming records written */
};

/* migrate: one vGPU of the domain migrating here, from its XML and our metadata. */
struct vgpu_hook_vgpu {
	const char *profile; /* its type as the metadata names it */
	enum vgpu_iface iface; /* on the source */
	const char *mdev_uuid; /* mdev: the UUID its hostdev names on the source; else NULL */
	const char *vf; /* vendor VFIO: the source's VF its hostdev names; else NULL */
	bool display; /* mdev: its hostdev has display or ramfb on, which a VF hostdev cannot */
};

/* The domain as the hardened parser read it from the XML on stdin. */
struct vgpu_hook_domain {
	const char *uuid; /* normalized: records and hostdevs are matched by it */
	const struct vgpu_strv *mdevs; /* mdev UUIDs its definition's hostdevs name, or NULL */
	const struct vgpu_strv *vfs; /* PCI functions its hostdevs name, or NULL */
	/* migrate only: the vGPUs our metadata gives it (none: not ours, nothing to do) */
	const struct vgpu_hook_vgpu *vgpus;
	size_t n_vgpus;
	unsigned vcpus; /* <vcpu>, for the CPUs of the target GPU's node (0: 1) */
	uint64_t memory_kib; /* guest memory, checked against the node; 0: not checked */
	bool per_start; /* the metadata says per-start: the records say so too */
	bool pinned; /* the metadata says we pinned it: the records hold the CPUs chosen here */
	/* mdev<->VF allowed: libvirt >= 11.0 here (the source's is migrate-check's) */
	bool iface_change;
	const char *iface_change_why; /* why not, for the refusal (NULL: a plain sentence) */
	/* prepare: the set our metadata keeps for each vGPU's vgpu_params; NULL: none kept */
	const struct vgpu_params *params;
};

/* migrate: where one vGPU lands on this host. */
struct vgpu_hook_landing {
	char parent[VGPU_BDF_LEN]; /* the VF (vendor VFIO) or mdev parent here */
	char gpu[VGPU_BDF_LEN];
	char mdev_uuid[VGPU_UUID_LEN]; /* mdev: the source's when it was free here, else new */
	enum vgpu_iface iface; /* here: another than the source's only when iface_change */
	unsigned type_id; /* the type's ID here */
	bool changed; /* the hostdev must name another device than on the source */
};

/* One call of the hook. */
struct vgpu_hook_input {
	const char *name; /* the domain's name as libvirt passes it (argv[1]) */
	/*
	 * The domain XML on stdin, NUL-terminated, read only when the library
	 * calls this (at most once per vgpu_hook_run()): 0 or -errno with a
	 * message in @ctx.  A call that is not about one of our domains never
	 * reads stdin.  Needed by the cheap pass only.
	 */
	int (*read_xml)(void *data, struct vgpu_ctx *ctx, const char **xml, size_t *len);
	void *xml_data; /* for read_xml */
	/* NULL: the cheap pass; else what the hardened parser read (the locked pass) */
	const struct vgpu_hook_domain *parsed;
	unsigned lock_wait_ms; /* the whole call's budget for the locks (VGPU_HOOK_LOCK_WAIT_MS) */
	/*
	 * release: the shut-off reason, the hook's 4th argument (EXTRA) since
	 * libvirt 10.5 ("migrated", "shutdown", "destroyed", ...); "-" before,
	 * NULL when not given.  "migrated": the domain runs elsewhere now.
	 */
	const char *reason;
	/*
	 * libnvfm, on a host whose Fabric Manager runs in vGPU mode
	 * (fabricmanager.cfg says FABRIC_MODE=2): loaded only there, by the
	 * locked pass of a domain whose records name a partition; NULL:
	 * VGPU_NVFM_SONAME
	 */
	const char *nvfm;
	/*
	 * NVML (NULL: VGPU_NVML_SONAME), loaded with libnvfm only: the GPUs'
	 * module IDs, which Fabric Manager names a partition's GPUs by
	 */
	const char *nvml;
};

/* What the caller does next. */
enum vgpu_hook_next {
	VGPU_HOOK_DONE, /* nothing (more) to do: exit 0 */
	/* parse the XML with the hardened parser, call again with ->parsed set */
	VGPU_HOOK_PARSE_XML,
};

struct vgpu_hook_result {
	enum vgpu_hook_next next;
	/* migrate, after the locked pass: where each vGPU of ->parsed lands, in its order */
	struct vgpu_hook_landing landing[VGPU_MAX_VGPUS];
	size_t n_landing; /* 0: nothing written, nothing to print */
	int node; /* the target GPUs' NUMA node (-1: unknown) */
	struct vgpu_cpuset cpus; /* the host CPUs chosen there for the domain's vCPUs */
	unsigned pins[VGPU_MAX_CPUS]; /* pins[i]: the host CPU of vCPU i there, whole cores */
	unsigned n_pins; /* at least the domain's vcpus */
};

/**
 * vgpu_hook_phase_of() - is a hook call one the hook acts on: prepare begin,
 * started begin, release end or migrate begin (on the destination) of a
 * domain whose name can be one of ours
 * (libvirt refuses '/' in names; "." and ".." are not names)?
 * @name: the domain's name (argv[1])
 * @op: the operation (argv[2]), or NULL
 * @sub: the sub-operation (argv[3]), or NULL
 * @phase: the phase, when it is one
 * Return: true when it is; false: exit 0 without reading stdin.
 */
bool vgpu_hook_phase_of(const char *name, const char *op, const char *sub,
			enum vgpu_hook_phase *phase);

/**
 * vgpu_hook_run() - one phase of the libvirt hook, decided from one reading
 * of the owner records and of the state of the domain's vGPUs per pass.
 *
 * started drops the note of what prepare created (notes are named by the
 * domain: a domain cannot be renamed while it runs).
 *
 * The cheap pass (@in->parsed NULL) takes no lock and only ever concludes
 * "nothing to do" (VGPU_HOOK_DONE), the answer the locked pass would give
 * on the same host; anything else is VGPU_HOOK_PARSE_XML.  Without records
 * it ends before reading stdin; otherwise it reads the domain's UUID from
 * the XML with a plain scanner, then: prepare has work when a vGPU of the
 * domain is missing, of another type, elsewhere or unreadable, or when the
 * XML names a vGPU another domain's record holds; release when the domain
 * has a per-start vGPU or a failed start left a note, or, migrated
 * (@in->reason), has any record here but an incoming one.  An XML the scanner
 * cannot read goes to the hardened parser when a record names the domain.
 * migrate reads stdin whatever the records say (the domain comes from
 * elsewhere) and has work only when the XML names our metadata's namespace.
 *
 * The locked pass (@in->parsed set; records matched by UUID, so a renamed
 * domain keeps its vGPUs) reads the records and the vGPUs' state once under
 * the host lock.  prepare refuses a definition whose hostdevs name a vGPU
 * another domain's record holds (for vendor VFIO the VF is the vGPU), then
 * creates each missing vGPU under its GPU's lock only (the host lock goes:
 * domains of different GPUs start side by side); a parent held by another
 * vGPU, an interrupted move or a create that fails is decided under the
 * host lock instead, where an mdev may move to a free parent of the same
 * GPU that offers its type (the record follows).  What was created is noted
 * for a failed start's release.  When the metadata keeps a vgpu_params set
 * (->params), prepare writes it whole to each of the domain's vGPUs, those
 * it created and those that were there (the set is for the next open),
 * before QEMU opens them, and reads it back; a write that fails or reads
 * back otherwise fails the start, undoing the creates (enable_profiling is
 * refused while another domain's active vGPU on one of its GPUs has it on).
 * The cheap pass sends a domain whose XML names a set to the locked pass.
 * On a host whose Fabric Manager runs in vGPU mode, a domain whose records
 * name a fabric partition has work in prepare and release: prepare
 * activates the partition (vgpu_fm_activate(), one VF per GPU: those its
 * vGPUs are on) after the vGPUs exist and the set is written, before QEMU
 * starts; a failure (Fabric Manager not running, fabric not ready,
 * partition in use, out of sync) fails the start, undoing the creates.
 * What it activated is noted in VGPU_ACTIVATED_DIR/DOMAIN; release
 * deactivates that partition after the frees and drops the note (a failure
 * there is a warning: the domain has stopped).  On other hosts libnvfm is
 * never loaded.
 * release destroys the per-start vGPUs and
 * what a failed start's prepare created, under the GPUs' locks only; the
 * records stay.  A migrated release (@in->reason "migrated") frees every
 * vGPU of the domain's records (incoming ones aside) and drops the records,
 * as vgpu_txn_release() does, keeping the host lock for the record writes.
 * One transaction per pass: a failure undoes every step.
 *
 * migrate (locked pass) chooses,
 * under the host lock, a device here for each vGPU the metadata names with
 * the capacity model, as assign does (vgpu_mplan_make(), the decision
 * migrate-offer makes too; a new mdev UUID made here): an mdev keeps its UUID when no mdev
 * and no record here has it, else gets a new one; a vendor-VFIO vGPU gets a
 * VF of this host.  It writes their records as incoming, held for the
 * domain's UUID until VGPU_INCOMING_MAX_S from now (with the CPUs chosen
 * on the target GPUs' node when the domain is pinned), and says where each
 * lands in @out.  Incoming records a failed earlier attempt of the same
 * domain left are replaced.  Refused (-ENOSPC, -EEXIST, -ENOTSUP), nothing
 * is written: no room, records of the domain here already active, or an
 * interface that would change (mdev and VF on the two ends) when
 * ->iface_change does not allow it or the mdev's hostdev shows a display.
 * @ctx: errors and warnings
 * @fs: the host root
 * @phase: the phase
 * @in: the call
 * @out: what to do next, set on success
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_hook_run(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_hook_phase phase,
		  const struct vgpu_hook_input *in, struct vgpu_hook_result *out);

/**
 * vgpu_hook_migrate_abandon() - drop the incoming records a migrate pass
 * wrote for the domain @uuid, under the host lock (the caller could not
 * give libvirt the rewritten definition: the migration will not come).
 * @ctx: errors
 * @fs: the host root
 * @name: the domain's name, for messages
 * @uuid: the domain's UUID, normalized
 * @lock_wait_ms: how long to wait for the host lock
 * Return: 0 or -errno with a message in @ctx (-EEXIST: its records here are
 * active; nothing is dropped).
 */
int vgpu_hook_migrate_abandon(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *name,
			      const char *uuid, unsigned lock_wait_ms);

#endif
