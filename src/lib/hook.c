// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libvirt hook's decisions (see hook.h).  Never calls libvirt: the
 * daemon waits for the hook, so a call back into it would deadlock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "domxml.h"
#include "fabric-place.h"
#include "fabric.h"
#include "hook.h"
#include "read-host.h"
#include "live.h"
#include "migrate-plan.h"
#include "nvml.h"
#include "read-live.h"
#include "sysfs-lock.h"
#include "sysfs-state.h"
#include "txn.h"

#define NOTE_MAX (64 * 1024)
/* the note's line that says prepare made incoming records active (no record key has no ':') */
#define NOTE_ARRIVED "arrived"

/* The domain a call is about. */
struct dom {
	const char *name; /* as libvirt passes it, for messages and notes */
	const char *uuid; /* normalized: records and hostdevs are matched by it */
	const struct vgpu_strv *mdevs; /* hostdevs: mdev UUIDs, or NULL (not parsed) */
	const struct vgpu_strv *vfs; /* hostdevs: PCI functions, or NULL */
	bool migrated; /* release: libvirt says the domain migrated (it runs elsewhere now) */
	const struct vgpu_params *params; /* prepare: the set for vgpu_params, or NULL */
	const char *nvfm; /* libnvfm (NULL: VGPU_NVFM_SONAME), for a fabric in vGPU mode */
	const char *nvml; /* NVML (NULL: VGPU_NVML_SONAME), for the GPUs' module IDs */
};

/* One locked pass of prepare or release. */
struct hook {
	struct vgpu_ctx *ctx;
	struct vgpu_sysfs *fs;
	const struct dom *d;
	struct vgpu_records recs; /* read once under the host lock */
	bool *ready; /* per record: an owned vGPU is there as recorded (read with recs) */
	bool slow; /* prepare: decide and act under the host lock */
	bool force_slow; /* the creates under the GPUs' locks alone failed: again, slow */
	bool retry; /* a create under the GPUs' locks alone failed */
	struct vgpu_txn txn;
	struct vgpu_strv created; /* record keys of the vGPUs this prepare created */
	bool arrived; /* prepare made the domain's incoming records active */
	struct vgpu_fm *fm; /* Fabric Manager, while the pass activates or deactivates */
	unsigned partition; /* the partition prepare activated (its undo deactivates it) */
};

/* Does record @r belong to @d (by UUID: a renamed domain keeps its vGPUs)? */
static bool owns(const struct dom *d, const struct vgpu_record *r)
{
	return strcmp(r->domain_uuid, d->uuid) == 0;
}

/* ---- the UUID from stdin, without libxml2 ------------------------------------- */

/* @p past the end of @what in [@p, @end), or NULL. */
static const char *past(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);

	for (; p + n <= end; p++)
		if (memcmp(p, what, n) == 0)
			return p + n;
	return NULL;
}

static bool starts(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);

	return (size_t)(end - p) >= n && memcmp(p, what, n) == 0;
}

/*
 * The first <uuid> child of the root <domain>, without an XML library:
 * comments, processing instructions and CDATA skipped, quoted attribute
 * values honoured.  Anything unusual (a DTD, an entity, a root that is not
 * <domain>) is left to the hardened parser: -EINVAL; -ENOENT: no <uuid>.
 */
static int scan_uuid(const char *xml, size_t len, char uuid[VGPU_UUID_LEN])
{
	const char *p = xml, *end = xml + len;
	int depth = 0;

	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		const char *name, *q;
		size_t n;
		bool closing, empty;
		char quote = 0;

		const char *skip = starts(p, end, "<?")	       ? "?>" :
				   starts(p, end, "<!--")      ? "-->" :
				   starts(p, end, "<![CDATA[") ? "]]>" :
								 NULL;

		if (skip) {
			p = past(p, end, skip);
			if (!p)
				return -EINVAL;
			continue;
		}
		if (starts(p, end, "<!"))
			return -EINVAL; /* a DTD: the hardened parser decides */
		closing = p + 1 < end && p[1] == '/';
		name = p + 1 + closing;
		for (n = 0; name + n < end && !strchr(" \t\r\n/>", name[n]); n++)
			;
		for (q = name + n; q < end && (quote || *q != '>'); q++)
			if (*q == '"' || *q == '\'')
				quote = quote == *q ? 0 : quote ? quote : *q;
		if (q >= end || name + n > end)
			return -EINVAL;
		empty = q[-1] == '/';
		if (closing) {
			if (--depth < 0)
				return -EINVAL;
		} else if (depth == 0 && (n != 6 || memcmp(name, "domain", 6) != 0)) {
			return -EINVAL;
		} else if (depth == 1 && n == 4 && memcmp(name, "uuid", 4) == 0 && !empty) {
			const char *text = q + 1, *stop = memchr(text, '<', (size_t)(end - text));
			char buf[64];
			size_t l;

			if (!stop || !starts(stop, end, "</uuid>"))
				return -EINVAL;
			while (text < stop && strchr(" \t\r\n", *text))
				text++;
			for (l = (size_t)(stop - text); l && strchr(" \t\r\n", text[l - 1]); l--)
				;
			if (l >= sizeof(buf))
				return -EINVAL;
			memcpy(buf, text, l);
			buf[l] = '\0';
			return vgpu_uuid_normalize(buf, uuid) ? 0 : -EINVAL;
		} else if (!empty) {
			depth++;
		}
		p = q + 1;
	}
	return -ENOENT;
}

/*
 * Does the domain XML @xml (NUL-terminated) mention a vGPU that a record of
 * another domain than @uuid holds: its mdev UUID, or its VF's address as
 * libvirt writes a hostdev source?  A superset of what the locked prepare
 * refuses: true only sends the call on to the hardened parser.
 */
static bool maybe_foreign(const char *xml, const struct vgpu_records *recs, const char *uuid)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		unsigned d, b, sl, f;
		char addr[128];

		if (strcmp(r->domain_uuid, uuid) == 0)
			continue;
		if (r->mdev_uuid[0] && strcasestr(xml, r->mdev_uuid))
			return true;
		if (r->iface != VGPU_IFACE_VENDOR_VFIO ||
		    sscanf(r->parent, "%x:%x:%x.%x", &d, &b, &sl, &f) != 4)
			continue;
		/* libvirt's own form, with single quotes, or with double quotes as libxml2 writes
		 */
		for (const char *q = "'\""; *q; q++) {
			snprintf(
				addr, sizeof(addr),
				"domain=%c0x%04x%c bus=%c0x%02x%c slot=%c0x%02x%c function=%c0x%x%c",
				*q, d, *q, *q, b, *q, *q, sl, *q, *q, f, *q);
			if (strstr(xml, addr))
				return true;
		}
	}
	return false;
}

/* A hostdev of @d that names a vGPU another domain's record holds, or NULL. */
static const struct vgpu_record *foreign_hostdev(const struct dom *d,
						 const struct vgpu_records *recs)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];

		if (owns(d, r))
			continue;
		for (size_t k = 0; d->mdevs && r->mdev_uuid[0] && k < d->mdevs->n; k++)
			if (strcmp(d->mdevs->items[k], r->mdev_uuid) == 0)
				return r;
		for (size_t k = 0; d->vfs && r->iface == VGPU_IFACE_VENDOR_VFIO && k < d->vfs->n;
		     k++)
			if (strcmp(d->vfs->items[k], r->parent) == 0)
				return r;
	}
	return NULL;
}

/* Is the vGPU @r describes there as recorded?  -errno when it cannot be read. */
static int as_recorded(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *ready)
{
	struct vgpu_live_state st;
	int e = vgpu_live_query(ctx, fs, r, &st);

	if (e < 0)
		return e;
	*ready = vgpu_live_as_recorded(&st, r);
	return 0;
}

/* The keys a failed start's prepare created; @drop: remove the note. */
static bool read_note(struct vgpu_sysfs *fs, const char *name, struct vgpu_strv *keys, bool drop)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	char *save = NULL;
	size_t len;

	if (vgpu_sysdir_open(fs, &d, VGPU_PREPARED_DIR) < 0 ||
	    vgpu_sysfs_read_file(&d, NOTE_MAX, &text, &len, "%s", name) < 0)
		return false;
	for (char *k = keys ? strtok_r(text, "\n", &save) : NULL; k;
	     k = strtok_r(NULL, "\n", &save))
		vgpu_strv_push(keys, vgpu_xstrdup(k));
	if (drop)
		vgpu_sysfs_unlink(&d, name);
	return true;
}

/* The cheap pass: would @phase change anything for @d?  (No lock: "no" is final.) */
static bool has_work(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_hook_phase phase,
		     const struct dom *d, const struct vgpu_records *recs)
{
	bool release = phase == VGPU_HOOK_RELEASE;

	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		bool ready;

		if (!owns(d, r))
			continue;
		if (release && r->lifetime == VGPU_LIFETIME_PER_START)
			return true;
		if (release && d->migrated && r->state != VGPU_RECORD_INCOMING)
			return true; /* it runs elsewhere: its vGPUs and records here go */
		if (!release && r->state == VGPU_RECORD_INCOMING)
			return true; /* a domain migrating here: its records become active */
		/* unreadable: the locked pass says what is wrong, or fixes it */
		if (!release && (as_recorded(ctx, fs, r, &ready) < 0 || !ready))
			return true;
	}
	return release && read_note(fs, d->name, NULL, false);
}

static void drop_note(struct vgpu_sysfs *fs, const char *name)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };

	if (vgpu_sysdir_open(fs, &d, VGPU_PREPARED_DIR) == 0)
		vgpu_sysfs_unlink(&d, name);
}

/* ---- the fabric partition (HGX, Fabric Manager in vGPU mode) ----------------- */

/*
 * The partition the domain's records name, and one VF per GPU of it (its
 * vGPUs' VFs, in the records' order).  0: none; 1: one; -EINVAL (with a
 * message) when the records disagree.
 */
static int domain_partition(struct vgpu_ctx *ctx, const struct dom *d,
			    const struct vgpu_records *recs, unsigned *id, const char **gpus,
			    char (*vfs)[VGPU_BDF_LEN], size_t *nvfs)
{
	bool found = false;

	*nvfs = 0;
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		bool seen = false;

		if (!owns(d, r) || !r->partitioned)
			continue;
		if (found && r->partition != *id)
			return vgpu_error(
				ctx, -EINVAL,
				"the owner records of '%s' name fabric partitions %u and %u; the domain cannot start",
				d->name, *id, r->partition);
		found = true;
		*id = r->partition;
		for (size_t k = 0; k < *nvfs; k++)
			seen |= strcmp(gpus[k], r->gpu) == 0;
		if (seen || *nvfs == VGPU_FABRIC_MAX_GPUS)
			continue;
		gpus[*nvfs] = r->gpu;
		snprintf(vfs[(*nvfs)++], VGPU_BDF_LEN, "%s", r->parent);
	}
	return found;
}

/*
 * Fabric Manager's partitions on this host, each GPU named by its PCI
 * address: NVML's module IDs (Fabric Manager's physical IDs) of @m's GPUs,
 * else the bus ID Fabric Manager gives.  Opens *@fm when it is NULL.
 */
static int fabric_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d,
		       struct vgpu_model *m, struct vgpu_fm **fm, struct vgpu_fabric *out)
{
	struct vgpu_nvml *nvml = NULL;
	struct vgpu_ctx sub;
	bool modules = false;
	int e = *fm ? 0 : vgpu_fm_open(ctx, d->nvfm, fs, fm);

	if (e < 0)
		return e;
	for (size_t i = 0; i < m->n_gpus; i++)
		modules |= m->gpus[i].module_id >= 0;
	vgpu_ctx_init(&sub, NULL, NULL);
	if (!modules && vgpu_nvml_open(&sub, d->nvml, &nvml) == 0)
		vgpu_nvml_module_ids(&sub, nvml, m);
	else if (!modules)
		vgpu_log(ctx, LOG_DEBUG, "no module IDs from NVML: %s", vgpu_ctx_error(&sub));
	vgpu_nvml_close(nvml);
	vgpu_ctx_clear(&sub);
	*out = (struct vgpu_fabric){ .mode = VGPU_FABRIC_VGPU };
	return vgpu_fm_read(ctx, *fm, m, out);
}

/*
 * @vfs (one per GPU, @gpus[k] the GPU of @vfs[k]) in the order of partition
 * @id's GPUs as Fabric Manager lists them: nv_fm_agent.h, "the order of VFs
 * should be associated with actual physical GPUs in the partition", and the
 * user guide asks for the same order at every activation.
 */
static int order_vfs(struct hook *h, unsigned id, const char **gpus, char (*vfs)[VGPU_BDF_LEN],
		     size_t nvfs)
{
	VGPU_AUTOPTR(model) m = NULL;
	struct vgpu_fabric f = { .mode = VGPU_FABRIC_NONE };
	const struct vgpu_fabric_part *p = NULL;
	char out[VGPU_FABRIC_MAX_GPUS][VGPU_BDF_LEN];
	int e = vgpu_host_read(h->ctx, h->fs, 0, &m, NULL);

	if (e == 0)
		e = fabric_read(h->ctx, h->fs, h->d, m, &h->fm, &f);
	if (e < 0)
		return e;
	for (size_t i = 0; i < f.n && !p; i++)
		if (f.v[i].id == id)
			p = &f.v[i];
	if (!p || p->ngpus != nvfs)
		e = vgpu_error(
			h->ctx, -EINVAL,
			"Fabric Manager has no partition %u of %zu GPUs (the owner records' one)",
			id, nvfs);
	for (size_t k = 0; e == 0 && k < p->ngpus; k++) {
		size_t i;

		for (i = 0; i < nvfs && strcmp(gpus[i], p->gpu[k].bus) != 0; i++)
			;
		if (!p->gpu[k].bus[0])
			e = vgpu_error(
				h->ctx, -ENXIO,
				"fabric partition %u: which GPU has module ID %u is not known (NVML gives no module IDs, Fabric Manager no bus ID), and the VFs must be passed in the order of the partition's GPUs",
				id, p->gpu[k].module_id);
		else if (i == nvfs)
			e = vgpu_error(
				h->ctx, -EINVAL,
				"fabric partition %u: no vGPU of the domain is on its GPU of module ID %u (%s): NVML gives no module IDs, or the records name another partition",
				id, p->gpu[k].module_id,
				p->gpu[k].bus[0] ? p->gpu[k].bus : "not known");
		else
			snprintf(out[k], VGPU_BDF_LEN, "%s", vfs[i]);
	}
	if (e == 0)
		memcpy(vfs, out, nvfs * sizeof(out[0]));
	vgpu_fabric_clear(&f);
	return e;
}

/* Does this host's Fabric Manager run in vGPU mode?  Only then is libnvfm loaded. */
static bool fabric_vgpu_mode(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs)
{
	enum vgpu_fabric_mode mode = VGPU_FABRIC_NONE;

	if (vgpu_fabric_mode_read(ctx, fs, &mode) < 0) {
		vgpu_warn(ctx, "%s", vgpu_ctx_error(ctx));
		vgpu_ctx_clear(ctx);
		return false;
	}
	return mode == VGPU_FABRIC_VGPU;
}

/* The cheap pass: do the domain's records name a partition on a host in vGPU mode? */
static bool has_partition(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d,
			  const struct vgpu_records *recs)
{
	for (size_t i = 0; i < recs->n; i++)
		if (owns(d, &recs->v[i]) && recs->v[i].partitioned)
			return fabric_vgpu_mode(ctx, fs);
	return false;
}

/* The note of the partition prepare activated for the domain named @name: its ID, or -errno. */
static long activated_read(struct vgpu_sysfs *fs, const char *name)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char text[32];
	long id;
	int e = vgpu_sysdir_open(fs, &d, VGPU_ACTIVATED_DIR);

	if (e == 0)
		e = vgpu_sysfs_read_str(&d, text, sizeof(text), "%s", name);
	if (e < 0)
		return e;
	text[strcspn(text, "\n")] = '\0';
	return vgpu_parse_long(text, &id) < 0 || id < 0 ? -EINVAL : id;
}

static void activated_drop(struct vgpu_sysfs *fs, const char *name)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };

	if (vgpu_sysdir_open(fs, &d, VGPU_ACTIVATED_DIR) == 0)
		vgpu_sysfs_unlink(&d, name);
}

static int undo_activate(struct vgpu_ctx *ctx, void *data)
{
	struct hook *h = *(struct hook **)data;

	activated_drop(h->fs, h->d->name);
	return vgpu_fm_deactivate(ctx, h->fm, h->partition);
}

/*
 * prepare, after the creates: activate the domain's partition with one VF
 * per GPU, and note it; the undo deactivates it.  Nothing without a
 * partition or off vGPU mode.
 */
static int activate(struct hook *h)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char vfs[VGPU_FABRIC_MAX_GPUS][VGPU_BDF_LEN], text[32];
	const char *gpus[VGPU_FABRIC_MAX_GPUS];
	struct hook **data;
	size_t nvfs;
	unsigned id = 0;
	int e = domain_partition(h->ctx, h->d, &h->recs, &id, gpus, vfs, &nvfs);

	if (e <= 0 || !fabric_vgpu_mode(h->ctx, h->fs))
		return e;
	/* one GPU: one order; else Fabric Manager's, through NVML's module IDs */
	e = nvfs > 1 ? order_vfs(h, id, gpus, vfs, nvfs) : 0;
	if (e == 0 && !h->fm)
		e = vgpu_fm_open(h->ctx, h->d->nvfm, h->fs, &h->fm);
	if (e == 0)
		e = vgpu_fm_activate(h->ctx, h->fm, id, vfs, nvfs);
	if (e < 0) {
		vgpu_error_append(
			h->ctx,
			"fabric partition %u of '%s' is not active: the domain cannot start", id,
			h->d->name);
		return e;
	}
	vgpu_log(h->ctx, LOG_INFO, "fabric partition %u of '%s' activated", id, h->d->name);
	h->partition = id;
	data = vgpu_xmalloc(sizeof(*data));
	*data = h;
	vgpu_txn_push(&h->txn, undo_activate, data, "activate the fabric partition");
	snprintf(text, sizeof(text), "%u\n", id);
	e = vgpu_sysfs_mkdirs(h->fs, &d, VGPU_ACTIVATED_DIR);
	if (e == 0)
		e = vgpu_sysfs_replace(&d, h->d->name, text, strlen(text));
	if (e < 0)
		return vgpu_error(h->ctx, e, "cannot write %s/%s: %s", VGPU_ACTIVATED_DIR,
				  h->d->name, vgpu_strerror(e));
	return 0;
}

/*
 * release, after the frees: deactivate the partition prepare activated
 * (its note) and drop the note.  The domain has stopped whatever Fabric
 * Manager says: a failure is a warning.
 */
static void deactivate(struct hook *h)
{
	long id = activated_read(h->fs, h->d->name);
	struct vgpu_ctx sub;
	int e;

	if (id < 0 || !fabric_vgpu_mode(h->ctx, h->fs))
		return;
	vgpu_ctx_init(&sub, NULL, NULL);
	e = vgpu_fm_open(&sub, h->d->nvfm, h->fs, &h->fm);
	if (e == 0)
		e = vgpu_fm_deactivate(&sub, h->fm, (unsigned)id);
	if (e < 0)
		vgpu_warn(
			h->ctx,
			"fabric partition %ld of '%s' may stay active (deactivate it with 'vgpuctl fabric deactivate %ld'): %s",
			id, h->d->name, id, vgpu_ctx_error(&sub));
	else
		vgpu_log(h->ctx, LOG_INFO, "fabric partition %ld of '%s' deactivated", id,
			 h->d->name);
	activated_drop(h->fs, h->d->name);
	vgpu_ctx_clear(&sub);
}

/* ---- prepare ---------------------------------------------------------------- */

static void note_created(struct hook *h, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];

	vgpu_record_key(r, key);
	vgpu_strv_push(&h->created, vgpu_xstrdup(key));
}

/*
 * mdev: the hostdev names only the UUID, so when the recorded parent is
 * taken by someone else the vGPU may move to another free parent of the
 * same GPU that offers the type; the record follows.  NULL when none.
 */
static const struct vgpu_parent *other_parent(const struct vgpu_model *m,
					      const struct vgpu_record *r)
{
	const struct vgpu_gpu *g = vgpu_model_find_gpu(m, r->gpu);

	for (size_t i = 0; g && i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		if (p->in_use || p->n_reserved || p->state_unknown || p->index < 0)
			continue;
		for (size_t k = 0; k < p->n_types; k++)
			if (p->types[k].type->id == r->type_id && p->types[k].available > 0)
				return p;
	}
	return NULL;
}

/* The recorded parent holds a vGPU that is not this one: move, or say who holds it. */
static int relocate_mdev(struct hook *h, const struct vgpu_record *r)
{
	VGPU_AUTOPTR(model) m = NULL;
	const struct vgpu_parent *p;
	struct vgpu_record moved;
	int e;

	if (vgpu_host_read(h->ctx, h->fs, VGPU_READ_TYPES, &m, NULL) < 0)
		return vgpu_error(h->ctx, -EIO, "cannot read the host to move mdev %s: %s",
				  r->mdev_uuid, vgpu_ctx_error(h->ctx));
	p = other_parent(m, r);
	if (!p)
		return vgpu_error(
			h->ctx, -EBUSY,
			"%s (mdev %s): parent %s is taken and no other VF of GPU %s offers type %u now",
			r->profile, r->mdev_uuid, r->parent, r->gpu, r->type_id);
	moved = *r;
	snprintf(moved.parent, sizeof(moved.parent), "%s", p->addr);
	/*
	 * The new claim first, the old one dropped last: killed in between, the
	 * domain has two records of one mdev (drop_interrupted_moves() keeps one),
	 * never none.
	 */
	e = vgpu_txn_record_put(&h->txn, &moved, NULL);
	if (e == 0)
		e = vgpu_txn_create(&h->txn, &moved);
	if (e == 0)
		e = vgpu_txn_record_drop(&h->txn, r);
	if (e == 0) {
		note_created(h, &moved);
		vgpu_log(h->ctx, LOG_NOTICE, "mdev %s of '%s' moved from %s to %s", r->mdev_uuid,
			 h->d->name, r->parent, p->addr);
	}
	return e;
}

/* Who holds @r's parent, for the message: another domain's record, or nobody we know. */
static int held_by_other(struct hook *h, const struct vgpu_record *r)
{
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *o = &h->recs.v[i];

		if (!owns(h->d, o) && strcmp(o->parent, r->parent) == 0)
			return vgpu_error(h->ctx, -EBUSY, "VF %s of %s is held by domain '%s' (%s)",
					  r->parent, r->profile, o->domain, o->domain_uuid);
	}
	return 0;
}

/* Under the host lock: the domain migrating here arrives; its incoming record @i becomes active. */
static int arrive(struct hook *h, size_t i)
{
	struct vgpu_record active = h->recs.v[i];
	int e;

	active.state = VGPU_RECORD_ACTIVE;
	active.deadline = 0;
	e = vgpu_txn_record_put(&h->txn, &active, &h->recs.v[i]);
	if (e < 0)
		return e;
	h->recs.v[i] = active;
	h->arrived = true;
	return 0;
}

/* Under the host lock: record @i of the domain, whose state was read with the records. */
static int prepare_one(struct hook *h, size_t i)
{
	const struct vgpu_record *r = &h->recs.v[i];
	int e;

	if (r->state == VGPU_RECORD_INCOMING && (e = arrive(h, i)) < 0)
		return e;
	if (h->ready[i])
		return 0; /* there already: the normal case */
	e = held_by_other(h, r);
	if (e < 0 && r->iface == VGPU_IFACE_MDEV)
		return relocate_mdev(h, r);
	if (e < 0)
		return e;
	e = vgpu_txn_create(&h->txn, r);
	if (e == 0) {
		note_created(h, r);
		return 0;
	}
	/* the parent cannot take it (a vGPU nobody recorded is there): an mdev may move */
	if (r->iface == VGPU_IFACE_MDEV && (e == -EIO || e == -EUSERS || e == -EBUSY))
		return relocate_mdev(h, r);
	if (e == -EBUSY || e == -EPERM) /* vendor VFIO names the VF in the hostdev: no move */
		vgpu_error_append(h->ctx, "the domain cannot start");
	return e;
}

/* The note of what prepare created; its undo removes it again. */
static int undo_note(struct vgpu_ctx *ctx, void *data)
{
	struct hook *h = *(struct hook **)data;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	int e = vgpu_sysdir_open(h->fs, &d, VGPU_PREPARED_DIR);

	if (e == 0)
		e = vgpu_sysfs_unlink(&d, h->d->name);
	if (e < 0 && e != -ENOENT)
		return vgpu_error(ctx, e, "cannot remove %s/%s: %s", VGPU_PREPARED_DIR, h->d->name,
				  vgpu_strerror(e));
	return 0;
}

static int write_note(struct hook *h)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	struct hook **data;
	int e;

	if (!h->created.n && !h->arrived)
		return 0;
	text = vgpu_xstrdup(h->arrived ? NOTE_ARRIVED "\n" : "");
	for (size_t i = 0; i < h->created.n; i++)
		vgpu_append(&text, "%s\n", h->created.items[i]);
	e = vgpu_sysfs_mkdirs(h->fs, &d, VGPU_PREPARED_DIR);
	if (e == 0)
		e = vgpu_sysfs_replace(&d, h->d->name, text, strlen(text));
	if (e < 0)
		return vgpu_error(h->ctx, e, "cannot write %s/%s: %s", VGPU_PREPARED_DIR,
				  h->d->name, vgpu_strerror(e));
	data = vgpu_xmalloc(sizeof(*data));
	*data = h;
	vgpu_txn_push(&h->txn, undo_note, data, "note what prepare created");
	return 0;
}

/* Is @r's parent claimed by another domain's record? */
static bool parent_of_other(const struct hook *h, const struct vgpu_record *r)
{
	for (size_t i = 0; i < h->recs.n; i++)
		if (!owns(h->d, &h->recs.v[i]) && strcmp(h->recs.v[i].parent, r->parent) == 0)
			return true;
	return false;
}

/* Two records of this domain for one mdev: their indexes in @h's records. */
static bool twin_records(const struct hook *h, size_t *i, size_t *k)
{
	for (*i = 0; *i < h->recs.n; (*i)++)
		for (*k = *i + 1; *k < h->recs.n; (*k)++) {
			const struct vgpu_record *a = &h->recs.v[*i], *b = &h->recs.v[*k];

			if (owns(h->d, a) && owns(h->d, b) && a->mdev_uuid[0] &&
			    strcmp(a->mdev_uuid, b->mdev_uuid) == 0)
				return true;
		}
	return false;
}

/*
 * Two records of this domain for one mdev: a move killed between writing
 * the new record and dropping the old.  The one the mdev is on stays; else
 * the one whose parent nobody else holds (the move's target).  The other
 * is dropped (in the transaction) and left out of @h's records.
 */
static int drop_interrupted_moves(struct hook *h)
{
	size_t i, k;

	while (twin_records(h, &i, &k)) {
		size_t drop = h->ready[i]			? k :
			      h->ready[k]			? i :
			      parent_of_other(h, &h->recs.v[i]) ? i :
								  k;
		struct vgpu_record gone = h->recs.v[drop];
		int e;

		vgpu_log(
			h->ctx, LOG_NOTICE,
			"mdev %s of '%s' has two records (a move was interrupted): the one on %s is dropped",
			gone.mdev_uuid, h->d->name, gone.parent);
		e = vgpu_txn_record_drop(&h->txn, &gone);
		if (e < 0)
			return e;
		memmove(&h->recs.v[drop], &h->recs.v[drop + 1],
			(h->recs.n - drop - 1) * sizeof(h->recs.v[0]));
		memmove(&h->ready[drop], &h->ready[drop + 1],
			(h->recs.n - drop - 1) * sizeof(h->ready[0]));
		h->recs.n--;
	}
	return 0;
}

/* Does the vGPU of another domain's record @r have profiling on (its vgpu_params)? */
static bool profiling_of(void *data, const struct vgpu_record *r)
{
	struct hook *h = data;
	struct vgpu_params p;
	struct vgpu_ctx quiet;
	bool on = false;

	vgpu_ctx_init(&quiet, NULL, NULL);
	if (vgpu_live_params_read(&quiet, h->fs, r, &p) == 0)
		on = vgpu_params_profiling(&p);
	vgpu_ctx_clear(&quiet);
	return on;
}

/*
 * The metadata's vgpu_params set, whole, to each of the domain's vGPUs
 * (created now or there before), read back: after the creates, before
 * QEMU opens them (oVirt's order, vdsm mdev_create).  A failure fails the
 * start; the transaction undoes the creates.
 */
static int write_params(struct hook *h)
{
	const struct vgpu_params *set = h->d->params;
	int e;

	if (!set)
		return 0;
	e = vgpu_params_check_profiling(h->ctx, &h->recs, h->d->uuid, set, profiling_of, h);
	if (e < 0) {
		vgpu_error_append(h->ctx, "the domain cannot start");
		return e;
	}
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];

		if (!owns(h->d, r))
			continue;
		e = vgpu_live_params_write(h->ctx, h->fs, r, set);
		if (e < 0) {
			vgpu_error_append(h->ctx, "vgpu_params of %s %s: the domain cannot start",
					  r->iface == VGPU_IFACE_MDEV ? "mdev" : "the vGPU on VF",
					  r->iface == VGPU_IFACE_MDEV ? r->mdev_uuid : r->parent);
			return e;
		}
	}
	/* what vgpus shows as configured: the set this start took */
	if (vgpu_live_params_note(h->ctx, h->fs, h->d->uuid, set) < 0) {
		vgpu_warn(h->ctx, "%s", vgpu_ctx_error(h->ctx));
		vgpu_ctx_clear(h->ctx);
	}
	return 0;
}

/* Under the host lock and the GPUs' locks: everything prepare may have to do. */
static int prepare_slow(struct hook *h)
{
	int e = drop_interrupted_moves(h);

	for (size_t i = 0; e == 0 && i < h->recs.n; i++)
		if (owns(h->d, &h->recs.v[i]))
			e = prepare_one(h, i);
	if (e == 0)
		e = write_params(h);
	if (e == 0)
		e = activate(h);
	return e < 0 ? e : write_note(h);
}

/*
 * Under the GPUs' locks alone: the common prepare after a reboot, each
 * missing vGPU back where its record says, with nothing in the way.  A
 * create that fails is decided again under the host lock (h->retry).
 */
static int prepare_fast(struct hook *h)
{
	int e;

	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];

		if (!owns(h->d, r) || h->ready[i])
			continue;
		if (vgpu_txn_create(&h->txn, r) < 0) {
			h->retry = true; /* the path under the host lock moves an mdev or says why
					  */
			return -EAGAIN;
		}
		note_created(h, r);
	}
	e = write_params(h);
	if (e == 0)
		e = activate(h);
	return e < 0 ? e : write_note(h);
}

/* ---- release ---------------------------------------------------------------- */

static bool has_line(const struct vgpu_strv *lines, const char *line)
{
	for (size_t i = 0; i < lines->n; i++)
		if (strcmp(lines->items[i], line) == 0)
			return true;
	return false;
}

static bool listed(const struct vgpu_strv *keys, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];

	vgpu_record_key(r, key);
	return has_line(keys, key);
}

/* Did the failed start's prepare make incoming records active (the note says)? */
static bool note_arrived(struct vgpu_sysfs *fs, const char *name)
{
	VGPU_AUTOSTRV lines = { 0 };

	return read_note(fs, name, &lines, false) && has_line(&lines, NOTE_ARRIVED);
}

/*
 * Per-start vGPUs go at each stop, and after a failed start what its
 * prepare created; after a failed incoming start (a migration here that
 * did not go through) the records the migration wrote go too.  A domain
 * that migrated away runs elsewhere: every vGPU and record of it here
 * goes, as `release` frees them (incoming records aside: a migration
 * coming here holds those).
 */
static int do_release(struct hook *h)
{
	VGPU_AUTOSTRV failed_start = { 0 };
	bool arrived;

	read_note(h->fs, h->d->name, &failed_start, true);
	arrived = has_line(&failed_start, NOTE_ARRIVED);
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];
		int e = 0;

		if (!owns(h->d, r))
			continue;
		if (h->d->migrated) {
			if (r->state != VGPU_RECORD_INCOMING &&
			    (e = vgpu_txn_release(&h->txn, r)) < 0)
				return e;
			continue;
		}
		if (r->lifetime == VGPU_LIFETIME_PER_START || listed(&failed_start, r))
			e = vgpu_txn_destroy(&h->txn, r);
		if (e == -ESTALE) { /* not ours any more: leave it, say so */
			vgpu_warn(h->ctx, "%s", vgpu_ctx_error(h->ctx));
			continue;
		}
		if (e == 0 && arrived)
			e = vgpu_txn_record_drop(&h->txn, r);
		if (e < 0)
			return e;
	}
	deactivate(h);
	return 0;
}

/*
 * After a release: once no record names the domain (it migrated away, a
 * failed incoming start was undone), the vgpu_params set noted for it goes.
 * The release stands whatever happens to the note: a failure is a warning.
 */
static void forget_params(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid)
{
	struct vgpu_ctx sub;

	vgpu_ctx_init(&sub, NULL, NULL);
	if (vgpu_live_params_forget(&sub, fs, uuid) < 0)
		vgpu_warn(ctx, "%s", vgpu_ctx_error(&sub));
	vgpu_ctx_clear(&sub);
}

/* ---- locks ------------------------------------------------------------------ */

static void hook_clear(struct hook *h)
{
	vgpu_records_clear(&h->recs);
	free(h->ready);
	h->ready = NULL;
	vgpu_strv_clear(&h->created);
}

/* Under the host lock: the records as they are now (again, each time the lock is taken). */
static int read_records(struct hook *h)
{
	int e;

	hook_clear(h);
	e = vgpu_records_read(h->ctx, h->fs, &h->recs);
	if (e == 0) /* a writer drops what an expired migration held */
		e = vgpu_records_drop_expired(h->ctx, h->fs, &h->recs, (long long)time(NULL));
	if (e < 0)
		return e;
	e = 0;
	h->ready = vgpu_xcalloc(h->recs.n ? h->recs.n : 1, sizeof(*h->ready));
	return 0;
}

/* release: the records, and the GPUs of the domain's. */
static int release_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct hook *h = arg;
	int e = read_records(h);

	/*
	 * records that arrived with a failed incoming start, or of a domain that
	 * migrated away, are dropped: under the host lock
	 */
	h->slow = e == 0 && (h->d->migrated || note_arrived(h->fs, h->d->name));
	for (size_t i = 0; e == 0 && i < h->recs.n; i++)
		if (owns(h->d, &h->recs.v[i]))
			vgpu_gpu_locks_add(want, h->recs.v[i].gpu);
	return e;
}

/*
 * prepare: the records and the state of the domain's vGPUs, read once; a
 * foreign hostdev refused; the way (h->slow: a parent another record
 * holds, an interrupted move, or a first try that failed) and the GPUs to
 * lock (those of the missing vGPUs; slow, all of the domain's).
 */
static int prepare_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct hook *h = arg;
	const struct vgpu_record *o;
	size_t i, k;
	int e = read_records(h);

	if (e < 0)
		return e;
	o = foreign_hostdev(h->d, &h->recs);
	if (o)
		return vgpu_error(
			h->ctx, -EBUSY,
			"its definition names %s %s, which domain '%s' (%s) holds; the domain cannot start (remove that hostdev)",
			o->iface == VGPU_IFACE_MDEV ? "mdev" : "VF",
			o->iface == VGPU_IFACE_MDEV ? o->mdev_uuid : o->parent, o->domain,
			o->domain_uuid);
	h->slow = h->force_slow || twin_records(h, &i, &k);
	for (i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];

		if (!owns(h->d, r))
			continue;
		if (r->state == VGPU_RECORD_INCOMING)
			h->slow = true; /* its record is written: under the host lock */
		e = as_recorded(h->ctx, h->fs, r, &h->ready[i]);
		if (e < 0)
			return e;
		if (!h->ready[i] && parent_of_other(h, r))
			h->slow = true;
	}
	/* a vgpu_params set goes to every vGPU of the domain: under its GPU's lock */
	for (i = 0; i < h->recs.n; i++)
		if (owns(h->d, &h->recs.v[i]) && (h->slow || !h->ready[i] || h->d->params))
			vgpu_gpu_locks_add(want, h->recs.v[i].gpu);
	return 0;
}

/*
 * One locked pass: the host lock and the GPUs' locks (never waiting for a
 * GPU with the host locked: vgpu_locks_take()), the records read under
 * them, act, commit or undo; by @until.  An act that needs only the GPUs'
 * locks (a release frees what its records say; a prepare that only
 * creates) lets the host lock go first: the records of a locked GPU do not
 * change while its lock is held, and the driver's writes (a free may take
 * VGPU_LIVE_FREE_WAIT_MS) hold up no other GPU.  A slow prepare (it may
 * move an mdev: a record write) keeps both.
 */
static int hook_pass(struct hook *h, uint64_t until, int (*decide)(void *, struct vgpu_gpu_locks *),
		     int (*act)(struct hook *))
{
	struct vgpu_gpu_locks l = { .n = 0 };
	int e = vgpu_locks_take(h->ctx, h->fs, until, decide, h, &l);

	if (e == 0) {
		/* with nothing to lock there is no slow work: the pass ends in its turn */
		if (!h->slow && l.n)
			vgpu_sysfs_unlock(h->fs);
		vgpu_txn_init(&h->txn, h->ctx, h->fs, false);
		e = act(h);
		if (e < 0)
			vgpu_txn_rollback(&h->txn);
		else
			vgpu_txn_commit(&h->txn);
		vgpu_fm_close(h->fm); /* after the undo, which may deactivate */
		h->fm = NULL;
		vgpu_gpu_locks_release(&l);
		vgpu_sysfs_unlock(h->fs);
	}
	hook_clear(h);
	return e;
}

static int prepare_act(struct hook *h)
{
	return h->slow ? prepare_slow(h) : prepare_fast(h);
}

static int prepare(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d, uint64_t until)
{
	struct hook h = { .ctx = ctx, .fs = fs, .d = d };
	int e = hook_pass(&h, until, prepare_gpus, prepare_act);

	/* a create under the GPUs' locks alone failed: once more, all under the host lock */
	if (h.retry) {
		vgpu_ctx_clear(ctx);
		h = (struct hook){ .ctx = ctx, .fs = fs, .d = d, .force_slow = true };
		e = hook_pass(&h, until, prepare_gpus, prepare_act);
	}
	return e;
}

/* ---- migrate: a domain coming here -------------------------------------------------- */

/*
 * Under the host lock: this domain's records here.  Active ones refuse the
 * migration; incoming ones (an earlier attempt that failed) are dropped.
 */
static int drop_earlier_attempt(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d)
{
	VGPU_AUTORECORDS recs = { 0 };
	int e = vgpu_records_read(ctx, fs, &recs);

	for (size_t i = 0; e == 0 && i < recs.n; i++) { /* refused: nothing removed */
		const struct vgpu_record *r = &recs.v[i];

		if (owns(d, r) && r->state == VGPU_RECORD_ACTIVE)
			return vgpu_error(
				ctx, -EEXIST,
				"domain '%s' (%s) already holds %s on %s here; it cannot migrate here",
				r->domain, r->domain_uuid, r->profile, r->parent);
	}
	for (size_t i = 0; e == 0 && i < recs.n; i++) {
		char key[VGPU_RECORD_KEY_LEN];

		if (!owns(d, &recs.v[i]))
			continue;
		vgpu_record_key(&recs.v[i], key);
		e = vgpu_record_remove(ctx, fs, key);
	}
	return e;
}

/* Under the host lock: choose (vgpu_mplan_make()), write the incoming records (all or none), say
 * where. */
static int migrate_locked(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d,
			  const struct vgpu_hook_domain *pd, struct vgpu_hook_result *out)
{
	VGPU_AUTOPTR(model) m = NULL;
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOFREE struct vgpu_mplan *plan = vgpu_xcalloc(1, sizeof(*plan));
	struct vgpu_mplan_vgpu v[VGPU_MAX_VGPUS];
	struct vgpu_fabric fabric = { .mode = VGPU_FABRIC_NONE };
	struct vgpu_mplan_in in = { .uuid = d->uuid,
				    .vgpus = v,
				    .n_vgpus = pd->n_vgpus,
				    .vcpus = pd->vcpus,
				    .memory_kib = pd->memory_kib,
				    .pinned = pd->pinned,
				    .iface_change = pd->iface_change,
				    .iface_change_why = pd->iface_change_why };
	long long deadline = (long long)time(NULL) + VGPU_INCOMING_MAX_S;
	struct vgpu_txn txn;
	int e = drop_earlier_attempt(ctx, fs, d);

	if (e == 0)
		e = vgpu_host_read(ctx, fs, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY, &m, &recs);
	if (e == 0) /* a writer drops what an expired migration held */
		e = vgpu_records_drop_expired(ctx, fs, &recs, (long long)time(NULL));
	if (e < 0)
		return e;
	for (size_t i = 0; i < pd->n_vgpus; i++)
		v[i] = (struct vgpu_mplan_vgpu){ .profile = pd->vgpus[i].profile,
						 .iface = pd->vgpus[i].iface,
						 .mdev_uuid = pd->vgpus[i].mdev_uuid,
						 .vf = pd->vgpus[i].vf,
						 .display = pd->vgpus[i].display };
	if (fabric_vgpu_mode(ctx, fs)) {
		/* an HGX board in vGPU mode: the domain needs a free partition here */
		struct vgpu_fm *fm = NULL;

		const char *profiles[VGPU_MAX_VGPUS];
		struct vgpu_place part;

		for (size_t i = 0; i < pd->n_vgpus; i++)
			profiles[i] = pd->vgpus[i].profile;
		e = fabric_read(ctx, fs, d, m, &fm, &fabric);
		vgpu_fm_close(fm);
		if (e == 0)
			e = vgpu_fabric_place_vgpus(ctx, m, &recs, d->uuid, profiles, pd->n_vgpus,
						    &fabric, &part);
		vgpu_fabric_clear(&fabric);
		if (e < 0)
			return e;
		in.partitioned = true;
		in.partition = part.id;
		for (size_t i = 0; i < part.ngpus && i < VGPU_MAX_VGPUS; i++)
			snprintf(in.part_gpus[i], sizeof(in.part_gpus[i]), "%s", part.gpu[i]);
	}
	e = vgpu_mplan_make(ctx, m, &recs, &in, plan);
	/* a new UUID where the source's is taken here (migrate-offer names "" for it) */
	for (size_t i = 0; e == 0 && i < plan->n_landing; i++)
		if (plan->landing[i].iface == VGPU_IFACE_MDEV && !plan->landing[i].mdev_uuid[0])
			e = vgpu_uuid_generate(ctx, plan->landing[i].mdev_uuid);
	if (e < 0)
		return e;
	vgpu_txn_init(&txn, ctx, fs, false);
	for (size_t i = 0; e == 0 && i < plan->n_landing; i++) {
		const struct vgpu_mplan_landing *l = &plan->landing[i];
		struct vgpu_record r = { .iface = l->iface,
					 .type_id = l->type_id,
					 .lifetime = pd->per_start ? VGPU_LIFETIME_PER_START :
								     VGPU_LIFETIME_PERSISTENT,
					 .state = VGPU_RECORD_INCOMING,
					 .deadline = deadline };

		snprintf(r.domain, sizeof(r.domain), "%s", d->name);
		snprintf(r.domain_uuid, sizeof(r.domain_uuid), "%s", d->uuid);
		snprintf(r.gpu, sizeof(r.gpu), "%s", l->gpu);
		snprintf(r.parent, sizeof(r.parent), "%s", l->parent);
		snprintf(r.profile, sizeof(r.profile), "%s", l->profile);
		snprintf(r.mdev_uuid, sizeof(r.mdev_uuid), "%s", l->mdev_uuid);
		if (pd->pinned) /* the CPUs it will be pinned to here are taken */
			r.cpus = plan->cpus;
		/* prepare activates it (domain_partition()) */
		r.partitioned = plan->partitioned;
		r.partition = plan->partition;
		e = vgpu_txn_record_put(&txn, &r, NULL);
	}
	if (e < 0) {
		vgpu_txn_rollback(&txn);
		return e;
	}
	vgpu_txn_commit(&txn);
	for (size_t i = 0; i < plan->n_landing; i++) {
		const struct vgpu_mplan_landing *l = &plan->landing[i];
		struct vgpu_hook_landing *o = &out->landing[i];

		snprintf(o->parent, sizeof(o->parent), "%s", l->parent);
		snprintf(o->gpu, sizeof(o->gpu), "%s", l->gpu);
		snprintf(o->mdev_uuid, sizeof(o->mdev_uuid), "%s", l->mdev_uuid);
		o->iface = l->iface;
		o->type_id = l->type_id;
		o->changed = l->changed;
	}
	out->n_landing = plan->n_landing;
	out->node = plan->node;
	out->cpus = plan->cpus;
	out->n_pins = plan->n_pins;
	memcpy(out->pins, plan->pins, plan->n_pins * sizeof(out->pins[0]));
	return 0;
}

static int migrate_in(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct dom *d,
		      const struct vgpu_hook_domain *pd, uint64_t until,
		      struct vgpu_hook_result *out)
{
	uint64_t now = vgpu_monotonic_ms();
	int e;

	out->n_landing = 0;
	out->node = -1;
	if (!pd->n_vgpus)
		return 0; /* no vGPU of ours: nothing to choose, nothing to print */
	if (pd->n_vgpus > VGPU_MAX_VGPUS)
		return vgpu_error(ctx, -EINVAL, "%zu vGPUs: at most %d", pd->n_vgpus,
				  VGPU_MAX_VGPUS);
	e = vgpu_sysfs_lock(ctx, fs, until > now ? (unsigned)(until - now) : 0);
	if (e < 0)
		return e;
	e = migrate_locked(ctx, fs, d, pd, out);
	vgpu_sysfs_unlock(fs);
	if (e < 0)
		out->n_landing = 0;
	return e;
}

int vgpu_hook_migrate_abandon(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *name,
			      const char *uuid, unsigned lock_wait_ms)
{
	const struct dom d = { .name = name, .uuid = uuid };
	int e = vgpu_sysfs_lock(ctx, fs, lock_wait_ms);

	if (e < 0)
		return e;
	e = drop_earlier_attempt(ctx, fs, &d); /* incoming only: active ones refuse */
	vgpu_sysfs_unlock(fs);
	return e;
}

/* ---- the entry ---------------------------------------------------------------- */

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* libvirt refuses '/' in names; a name that would be a path is not one of ours */
static bool plain_name(const char *s)
{
	return s && *s && !strchr(s, '/') && !is(s, ".") && !is(s, "..");
}

bool vgpu_hook_phase_of(const char *name, const char *op, const char *sub,
			enum vgpu_hook_phase *phase)
{
	if (!plain_name(name))
		return false;
	if (is(op, "prepare") && is(sub, "begin"))
		*phase = VGPU_HOOK_PREPARE;
	else if (is(op, "started") && is(sub, "begin"))
		*phase = VGPU_HOOK_STARTED;
	else if (is(op, "release") && is(sub, "end"))
		*phase = VGPU_HOOK_RELEASE;
	else if (is(op, "migrate") && is(sub, "begin"))
		*phase = VGPU_HOOK_MIGRATE; /* on the destination, before anything moves */
	else
		return false;
	return true;
}

/* release: does libvirt (10.5 and later) say the domain stopped because it migrated away? */
static bool migrated(const struct vgpu_hook_input *in)
{
	return in->reason && strcmp(in->reason, "migrated") == 0;
}

/*
 * Does the XML keep a vgpu_params set (<vgpuctl:params>, in any prefix)?  A
 * false "yes" costs only the parse; the set is written at every start.
 */
static bool has_params(const char *xml, size_t len)
{
	return memmem(xml, len, ":params", 7) && memmem(xml, len, VGPU_XML_NS, strlen(VGPU_XML_NS));
}

/* Without a lock: is there anything for the locked pass to do?  Only "no" is final. */
static int cheap_pass(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_hook_phase phase,
		      const struct vgpu_hook_input *in, enum vgpu_hook_next *next)
{
	VGPU_AUTORECORDS recs = { 0 };
	char uuid[VGPU_UUID_LEN];
	const struct dom d = { .name = in->name,
			       .uuid = uuid,
			       .migrated = phase == VGPU_HOOK_RELEASE && migrated(in) };
	const char *xml = NULL;
	size_t len = 0;
	bool ours = false;
	int e;

	if (phase == VGPU_HOOK_MIGRATE) {
		/*
		 * A domain from elsewhere: no record here names it, only its
		 * metadata says whether it has our vGPUs.  libvirt writes the
		 * namespace as we gave it; without it the domain is not ours.
		 */
		e = in->read_xml ?
			    in->read_xml(in->xml_data, ctx, &xml, &len) :
			    vgpu_error(ctx, -EINVAL, "no domain XML to read for '%s'", in->name);
		if (e < 0)
			return e;
		if (memmem(xml, len, VGPU_XML_NS, strlen(VGPU_XML_NS)))
			*next = VGPU_HOOK_PARSE_XML;
		return 0;
	}
	e = vgpu_records_read(ctx, fs, &recs);
	/* a host without records: nothing of any domain is ours (stdin is not read) */
	if (e < 0 || !recs.n)
		return e;
	e = in->read_xml ? in->read_xml(in->xml_data, ctx, &xml, &len) :
			   vgpu_error(ctx, -EINVAL, "no domain XML to read for '%s'", in->name);
	if (e < 0)
		return e;
	if (scan_uuid(xml, len, uuid) < 0) {
		/* no UUID without the parser: by name, is the domain ours at all? */
		for (size_t i = 0; i < recs.n && !ours; i++)
			ours = strcmp(recs.v[i].domain, in->name) == 0;
		/* ours: the hardened parser decides (and refuses hostile input) */
		*next = ours ? VGPU_HOOK_PARSE_XML : VGPU_HOOK_DONE;
		return 0;
	}
	for (size_t i = 0; i < recs.n && !ours; i++)
		ours = owns(&d, &recs.v[i]);
	if ((phase == VGPU_HOOK_PREPARE && maybe_foreign(xml, &recs, uuid)) ||
	    (ours && phase == VGPU_HOOK_PREPARE && has_params(xml, len)) ||
	    (ours && has_work(ctx, fs, phase, &d, &recs)) ||
	    (ours && phase == VGPU_HOOK_PREPARE && has_partition(ctx, fs, &d, &recs)) ||
	    (phase == VGPU_HOOK_RELEASE && activated_read(fs, in->name) >= 0))
		*next = VGPU_HOOK_PARSE_XML;
	return 0;
}

int vgpu_hook_run(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_hook_phase phase,
		  const struct vgpu_hook_input *in, struct vgpu_hook_result *out)
{
	/* one budget for the whole call, whichever way it goes */
	uint64_t until = vgpu_monotonic_ms() + in->lock_wait_ms;
	struct dom d = { .name = in->name, .migrated = phase == VGPU_HOOK_RELEASE && migrated(in) };
	enum vgpu_hook_next next = VGPU_HOOK_DONE;
	int e = 0;

	if (!plain_name(in->name)) {
		/* not one of ours */
	} else if (phase == VGPU_HOOK_STARTED) {
		drop_note(fs, in->name); /* named by the domain: no stdin needed */
	} else if (!in->parsed) {
		e = cheap_pass(ctx, fs, phase, in, &next);
	} else {
		d.uuid = in->parsed->uuid;
		d.mdevs = in->parsed->mdevs;
		d.vfs = in->parsed->vfs;
		d.params = in->parsed->params;
		d.nvfm = in->nvfm;
		d.nvml = in->nvml;
		if (phase == VGPU_HOOK_PREPARE)
			e = prepare(ctx, fs, &d, until);
		else if (phase == VGPU_HOOK_MIGRATE)
			e = migrate_in(ctx, fs, &d, in->parsed, until, out);
		else {
			struct hook h = { .ctx = ctx, .fs = fs, .d = &d };

			e = hook_pass(&h, until, release_gpus, do_release);
			if (e == 0)
				forget_params(ctx, fs, d.uuid);
		}
	}
	if (e == 0)
		out->next = next;
	return e;
}
