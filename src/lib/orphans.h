/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * orphans.h - the evidence about each vGPU on the host (its owner record,
 * the libvirt domains that name it, the processes that hold it open, its
 * age, a failed free) and the class it falls in; the reaper that frees
 * orphans and stale vGPUs, collecting the evidence again right before each
 * write.  Missing evidence never makes a vGPU freeable: it fails closed.
 */
#ifndef VGPU_ORPHANS_H
#define VGPU_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "records.h"
#include "util.h"

/* The default grace period: a younger vGPU nobody names may be one being set up. */
#define VGPU_ORPHAN_GRACE_S 300

/* The classes, in their precedence (the first that applies). */
enum vgpu_oclass {
	VGPU_OCLASS_IN_USE, /* a process holds it open, or NVML has a VM on it */
	VGPU_OCLASS_FOREIGN, /* a domain names it that is not its record's: never touched */
	VGPU_OCLASS_WEDGED, /* a free of it failed before, or the kernel log says it is stuck */
	VGPU_OCLASS_STALE, /* its record's domain is gone or no longer names it */
	VGPU_OCLASS_ORPHAN, /* nobody names or holds it, no record, older than the grace */
	VGPU_OCLASS_OWNED, /* its record's domain names it */
	VGPU_OCLASS_CONFIG, /* no record: the host config's last apply made it */
	VGPU_OCLASS_YOUNG, /* would be an orphan, but is younger than the grace */
	VGPU_OCLASS_INCOMING, /* its record holds it for a domain migrating here, before the
				 deadline */
	VGPU_OCLASS_CONFLICT, /* what is there is not what its record says: never freed here */
	VGPU_OCLASS_UNKNOWN, /* evidence is missing: nothing is concluded */
	VGPU_OCLASS_N,
};

/**
 * vgpu_oclass_str() - the class as the CLI and metrics spell it.
 * @c: the class
 * Return: "in-use", "foreign", "wedged", "stale", "orphan", "owned",
 * "config", "young", "incoming", "conflict" or "unknown" (static text).
 */
const char *vgpu_oclass_str(enum vgpu_oclass c);

/* What is known about one vGPU. */
struct vgpu_evidence {
	bool record; /* an owner record claims it */
	bool config; /* no record, the host config's last apply made it */
	bool domains_known; /* the domains were read (a connection was given) */
	bool record_domain_names; /* the record's domain (by UUID) exists and names it */
	bool incoming; /* the record holds it for a domain migrating here; its deadline is ahead */
	bool conflict; /* the vGPU there is not the record's (another type or parent) */
	bool other_domain_names; /* a domain other than the record's names it */
	char domain[VGPU_DOMAIN_NAME_MAX + 1]; /* a domain that names it, "" for none */
	bool holders_known; /* every process's open files could be read */
	int holder; /* a process that holds it open, 0 for none */
	char nvml_vm[VGPU_UUID_LEN]; /* NVML: the VM (UUID) its active instance runs for, "" none */
	bool nvml_known; /* NVML answered for its GPU */
	bool nvml_maybe; /* NVML: an active instance of its type on its GPU may be its own */
	bool wedged; /* a wedged marker names it, or the kernel log has a wedge line for it */
	bool wedged_log; /* the kernel log has a wedge line for it (since it was last cleared) */
	long long age_s; /* seconds since it was made, -1 when not known */
};

/**
 * vgpu_oclass_of() - the class @e puts a vGPU in, by precedence: in-use,
 * foreign, wedged, conflict, stale, orphan.  Evidence that is not known never gives
 * stale or orphan (unknown instead), nor does an NVML instance that may be
 * its own.  A record whose domain does not name the
 * vGPU is stale, unless it is incoming and its deadline is ahead (incoming: the
 * domain is not here yet); an expired incoming record is stale like any other.
 * @e: the evidence
 * @grace_s: how old a vGPU nobody names must be to be an orphan
 * Return: the class.
 */
enum vgpu_oclass vgpu_oclass_of(const struct vgpu_evidence *e, long long grace_s);

/* One libvirt domain: who it is and the devices its hostdevs name. */
struct vgpu_odom {
	char *name; /* its name (owned) */
	char uuid[VGPU_UUID_LEN]; /* its UUID, normalized; "" when unreadable */
	bool active; /* it runs now */
	struct vgpu_strv mdevs; /* mdev UUIDs its persistent or live definition names */
	struct vgpu_strv vfs; /* PCI functions ("DDDD:BB:SS.F") it names */
};
/**
 * vgpu_odoms_free() - free domains and what they hold.
 * @d: the domains (NULL is fine)
 * @n: how many
 */
void vgpu_odoms_free(struct vgpu_odom *d, size_t n);

/* One vGPU on the host with its evidence and class. */
struct vgpu_orow {
	char gpu[VGPU_BDF_LEN]; /* its GPU */
	char parent[VGPU_BDF_LEN]; /* its VF or parent */
	enum vgpu_iface iface;
	unsigned type_id; /* its type, 0 when not known */
	char mdev[VGPU_UUID_LEN]; /* mdev UUID, "" for vendor VFIO */
	char key[VGPU_RECORD_KEY_LEN]; /* its record's file name, "" for none */
	char rec_domain[VGPU_DOMAIN_NAME_MAX + 1]; /* its record's domain, "" for none */
	struct vgpu_evidence ev;
	enum vgpu_oclass cls;
	struct vgpu_record rec; /* its owner record; for one without, what the free needs */
};

#endif
