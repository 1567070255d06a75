/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * records.h - who owns which vGPU: one owner record per vGPU under
 * ROOT/var/lib/vgpuctl/owners/, written atomically (temporary file, fsync,
 * rename) under the host lock.  A record is the claim: it is written before
 * any sysfs write and outlives a host reboot, so the hook can re-create the
 * vGPU and a stale release can tell that a VF belongs to someone else now.
 *
 * File name: the parent's PCI address (vendor-specific VFIO: one vGPU per
 * VF), or "PARENT_MDEVUUID" (mdev: a non-SR-IOV parent holds several), so
 * even a damaged record still names the parent it claims.
 * Content: "key=value" lines (see vgpu_record_format()).
 */
#ifndef VGPU_RECORDS_H
#define VGPU_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "ctx.h"
#include "util.h"
#include "vgputype.h"

#define VGPU_RECORDS_DIR "var/lib/vgpuctl/owners"
#define VGPU_RECORD_KEY_LEN (VGPU_BDF_LEN + VGPU_UUID_LEN)
#define VGPU_DOMAIN_NAME_MAX 200

enum vgpu_lifetime {
	VGPU_LIFETIME_PERSISTENT = 0, /* assign .. release; the hook re-creates after a reboot */
	VGPU_LIFETIME_PER_START, /* reserved; created at each start, freed at each stop */
};
/**
 * vgpu_lifetime_str() - the lifetime as a record and the CLI spell it.
 * @l: the lifetime
 * Return: "per-start" or "persistent" (static text).
 */
const char *vgpu_lifetime_str(enum vgpu_lifetime l);

/* an incoming record holds its vGPU for at most this long (a migration not started by then will
 * not) */
#define VGPU_INCOMING_MAX_S 3600

enum vgpu_record_state {
	VGPU_RECORD_ACTIVE = 0, /* the domain's, here (no "state" line: records before migration) */
	VGPU_RECORD_INCOMING, /* held for a domain migrating here, until its deadline */
};
/**
 * vgpu_record_state_str() - the state as a record spells it.
 * @s: the state
 * Return: "active" or "incoming" (static text).
 */
const char *vgpu_record_state_str(enum vgpu_record_state s);

struct vgpu_record {
	char domain[VGPU_DOMAIN_NAME_MAX + 1];
	char domain_uuid[VGPU_UUID_LEN];
	char gpu[VGPU_BDF_LEN];
	char parent[VGPU_BDF_LEN];
	enum vgpu_iface iface;
	unsigned type_id;
	char profile[VGPU_PROFILE_MAX];
	char mdev_uuid[VGPU_UUID_LEN]; /* "" for vendor VFIO */
	enum vgpu_lifetime lifetime;
	struct vgpu_cpuset cpus; /* host CPUs the domain was pinned to (empty: not pinned) */
	enum vgpu_record_state state;
	long long deadline; /* incoming: Unix seconds when the hold ends; else 0 */
	/* the NVSwitch fabric partition the domain runs in (HGX, Fabric Manager's vGPU mode) */
	bool partitioned; /* false: none ("partition" line absent: records before it) */
	unsigned partition; /* with @partitioned: Fabric Manager's partition ID */
};

struct vgpu_records {
	struct vgpu_record *v; /* sorted by key */
	size_t n;
	struct vgpu_strv damaged_parents; /* parents of records that could not be read */
	struct vgpu_strv damaged_keys; /* their file names, sorted: what an admin looks at */
};

struct vgpu_sysfs;

/**
 * vgpu_record_key() - the record's file name into @key.
 * @r: the record
 * @key: "PARENT" for vendor VFIO, "PARENT_MDEVUUID" for mdev
 */
void vgpu_record_key(const struct vgpu_record *r, char key[VGPU_RECORD_KEY_LEN]);
/**
 * vgpu_record_format() - the record as text: one "key=value" line for each of
 * domain, domain_uuid, gpu, parent, interface, type_id, profile, mdev_uuid
 * and lifetime, in that order; then "cpus" when the domain was pinned,
 * "partition" when it runs in a fabric partition, and "state=incoming"
 * with "deadline" for an incoming record (an active one has neither, so it
 * reads as before).
 * @r: the record
 * Return: the text on the heap; caller frees.
 */
char *vgpu_record_format(const struct vgpu_record *r);
/**
 * vgpu_record_parse() - a record from its text; every value is validated
 * (PCI addresses, UUIDs, decimal id, a libvirt-valid domain name).
 * @ctx: where errors go
 * @text: "key=value" lines as vgpu_record_format() writes them; every key
 *        exactly once, no other keys; "deadline" (a positive number) exactly
 *        when "state" is "incoming"
 * @what: the record's name in messages (its file)
 * @out: the record, written only on success
 * Return: 0 or -EINVAL with a message naming @what and the key in @ctx.
 */
int vgpu_record_parse(struct vgpu_ctx *ctx, const char *text, const char *what,
		      struct vgpu_record *out);
/**
 * vgpu_records_read() - every record on the host.  A damaged record is
 * warned about and its parent (from the file name) listed in
 * damaged_parents, so it still counts as taken.  No directory: none.
 * @ctx: errors, and warnings about damaged records
 * @fs: the host root
 * @out: overwritten (not cleared first): the records sorted by key, and the
 *       damaged records' parents, sorted and unique
 *
 * Names starting with '.' (a writer's temporary files) are skipped.
 * Return: 0 or -errno with a message in @ctx; clear with vgpu_records_clear().
 */
int vgpu_records_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_records *out);
/**
 * vgpu_records_clear() - free what @rs holds; it is empty and reusable after.
 * @rs: the records (a zeroed struct is fine)
 */
void vgpu_records_clear(struct vgpu_records *rs);
#define VGPU_AUTORECORDS __attribute__((cleanup(vgpu_records_clear))) struct vgpu_records
/**
 * vgpu_records_find() - the record of the vGPU on @parent (and mdev
 * @mdev_uuid, NULL: any), or NULL.
 * @rs: the records
 * @parent: the parent's normalized PCI address (compared as text)
 * @mdev_uuid: the mdev's normalized UUID, or NULL for the first record on @parent
 * Return: the record, borrowed from @rs, or NULL when none matches.
 */
const struct vgpu_record *vgpu_records_find(const struct vgpu_records *rs, const char *parent,
					    const char *mdev_uuid);
/**
 * vgpu_records_find_vgpu() - the record of one vGPU as a definition names
 * it: an mdev by its UUID alone (the hook moves an mdev to another parent
 * of its GPU when its own is taken; the record follows, the definition
 * keeps naming the UUID), a vendor-VFIO vGPU by its VF.
 * @rs: the records
 * @parent: the parent the definition names (normalized)
 * @mdev_uuid: the mdev's normalized UUID, or NULL or "" for vendor VFIO
 * Return: the record, borrowed from @rs, or NULL when none matches.
 */
const struct vgpu_record *vgpu_records_find_vgpu(const struct vgpu_records *rs, const char *parent,
						 const char *mdev_uuid);
/**
 * vgpu_records_parent_taken() - is @parent claimed by a record (or a damaged one)?
 * @rs: the records
 * @parent: the parent's normalized PCI address (compared as text)
 * Return: true if a record or a damaged record's file name claims it.
 */
bool vgpu_records_parent_taken(const struct vgpu_records *rs, const char *parent);
struct vgpu_model;
/* Marker files of vGPUs whose free failed (orphans-host.c), one per vGPU, named
 * by its mdev UUID or VF address, holding a "parent=BDF" line. */
#define VGPU_WEDGED_DIR "var/lib/vgpuctl/wedged"
/**
 * vgpu_wedged_apply() - count a vGPU of unknown type as reserved on the
 * parent of every wedged marker, so planners (plan, assign) skip that parent
 * until an admin clears the marker.  No directory: none.
 * @fs: the host root
 * @m: the model read from the same host; parents it lacks are ignored
 */
void vgpu_wedged_apply(struct vgpu_sysfs *fs, struct vgpu_model *m);
/**
 * vgpu_records_apply() - count in @m every recorded vGPU that does not exist
 * now (a --per-start reservation, a vGPU gone after a reboot) and every
 * damaged record as reserved on its parent, so planners treat those
 * parents as taken.  An incoming record holds its parent like that until
 * its deadline; an expired one counts for nothing.
 * @rs: the records, from vgpu_records_read()
 * @m: the model read from the same host; records of parents it lacks are ignored
 */
void vgpu_records_apply(const struct vgpu_records *rs, struct vgpu_model *m);
/**
 * vgpu_record_expired() - is @r an incoming record whose deadline has passed?
 * @r: the record
 * @now: Unix seconds
 * Return: true when it is void: its domain did not arrive in time.
 */
bool vgpu_record_expired(const struct vgpu_record *r, long long now);
/**
 * vgpu_records_drop_expired() - remove the files of the expired incoming
 * records of @rs, and those records from @rs.  Writers call it under the
 * host lock, after vgpu_records_read().
 * @ctx: where errors go
 * @fs: the host root, or NULL to drop them from @rs only (a dry run)
 * @rs: the records; kept sorted
 * @now: Unix seconds
 * Return: how many were dropped, or -errno with a message in @ctx (@rs then
 *         still holds the records not yet removed).
 */
int vgpu_records_drop_expired(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_records *rs,
			      long long now);
/**
 * vgpu_record_write() - create or replace @r's record (atomic).
 * @ctx: where errors go
 * @fs: the host root; ROOT/var/lib/vgpuctl/owners is created if missing
 * @r: the record; its file is named by vgpu_record_key()
 * Return: 0 or -errno with a message naming the file in @ctx; -EINVAL for
 *         an incoming record whose deadline is past or more than
 *         VGPU_INCOMING_MAX_S ahead.
 */
int vgpu_record_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r);
/**
 * vgpu_record_remove() - drop the record @key.  Absent is fine.
 * @ctx: where errors go
 * @fs: the host root
 * @key: the record's file name, from vgpu_record_key()
 * Return: 0 or -errno with a message naming the file in @ctx.
 */
int vgpu_record_remove(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *key);

#endif
