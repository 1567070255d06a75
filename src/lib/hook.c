// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libvirt hook's decisions (see hook.h).  Never calls libvirt: the
 * daemon waits for the hook, so a call back into it would deadlock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "hook.h"
#include "read-host.h"
#include "live.h"
#include "read-live.h"
#include "sysfs-lock.h"
#include "sysfs-state.h"
#include "txn.h"

#define NOTE_MAX (64 * 1024)

/* One prepare or release under the lock. */
struct hook {
	struct vgpu_ctx *ctx;
	struct vgpu_sysfs *fs;
	const struct vgpu_hook_domain *d;
	struct vgpu_records recs;
	struct vgpu_txn txn;
	struct vgpu_strv created; /* record keys of the vGPUs this prepare created */
};

bool vgpu_hook_owns(const struct vgpu_hook_domain *d, const struct vgpu_record *r)
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

int vgpu_hook_scan_uuid(const char *xml, size_t len, char uuid[VGPU_UUID_LEN])
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

bool vgpu_hook_maybe_foreign(const char *xml, const struct vgpu_records *recs, const char *uuid)
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
static const struct vgpu_record *foreign_hostdev(const struct vgpu_hook_domain *d,
						 const struct vgpu_records *recs)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];

		if (vgpu_hook_owns(d, r))
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

bool vgpu_hook_has_work(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *op,
			const struct vgpu_hook_domain *d, const struct vgpu_records *recs)
{
	bool release = strcmp(op, "release") == 0;

	if (!release && foreign_hostdev(d, recs))
		return true; /* the locked call refuses the start */
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		bool ready;

		if (!vgpu_hook_owns(d, r))
			continue;
		if (release && r->lifetime == VGPU_LIFETIME_PER_START)
			return true;
		/* unreadable: the locked call says what is wrong, or fixes it */
		if (!release && (as_recorded(ctx, fs, r, &ready) < 0 || !ready))
			return true;
	}
	return release && read_note(fs, d->name, NULL, false);
}

void vgpu_hook_started(struct vgpu_sysfs *fs, const char *name)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };

	if (vgpu_sysdir_open(fs, &d, VGPU_PREPARED_DIR) == 0)
		vgpu_sysfs_unlink(&d, name);
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
		return vgpu_error(h->ctx, -EBUSY,
				  "%s (mdev %s): parent %s is taken and no other VF of GPU %s "
				  "offers type %u now",
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

		if (!vgpu_hook_owns(h->d, o) && strcmp(o->parent, r->parent) == 0)
			return vgpu_error(h->ctx, -EBUSY, "VF %s of %s is held by domain '%s' (%s)",
					  r->parent, r->profile, o->domain, o->domain_uuid);
	}
	return 0;
}

static int prepare_one(struct hook *h, const struct vgpu_record *r)
{
	bool ready;
	int e = as_recorded(h->ctx, h->fs, r, &ready);

	if (e < 0 || ready)
		return e; /* there already: the normal case */
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

	if (!h->created.n)
		return 0;
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
		if (!vgpu_hook_owns(h->d, &h->recs.v[i]) &&
		    strcmp(h->recs.v[i].parent, r->parent) == 0)
			return true;
	return false;
}

/*
 * Two records of this domain for one mdev: a move killed between writing
 * the new record and dropping the old.  The one the mdev is on stays; else
 * the one whose parent nobody else holds (the move's target).  The other
 * is dropped (in the transaction) and left out of @h's records.
 */
/* Two records of this domain for one mdev: their indexes in @h's records. */
static bool twin_records(const struct hook *h, size_t *i, size_t *k)
{
	for (*i = 0; *i < h->recs.n; (*i)++)
		for (*k = *i + 1; *k < h->recs.n; (*k)++) {
			const struct vgpu_record *a = &h->recs.v[*i], *b = &h->recs.v[*k];

			if (vgpu_hook_owns(h->d, a) && vgpu_hook_owns(h->d, b) && a->mdev_uuid[0] &&
			    strcmp(a->mdev_uuid, b->mdev_uuid) == 0)
				return true;
		}
	return false;
}

static int drop_interrupted_moves(struct hook *h)
{
	size_t i, k;

	while (twin_records(h, &i, &k)) {
		bool a_ready = false, b_ready = false;
		struct vgpu_record gone;
		size_t drop;
		int e;

		if (as_recorded(h->ctx, h->fs, &h->recs.v[i], &a_ready) < 0 ||
		    as_recorded(h->ctx, h->fs, &h->recs.v[k], &b_ready) < 0)
			return -EIO;
		drop = a_ready ? k : b_ready ? i : parent_of_other(h, &h->recs.v[i]) ? i : k;
		gone = h->recs.v[drop];
		vgpu_log(h->ctx, LOG_NOTICE,
			 "mdev %s of '%s' has two records (a move was interrupted): the one on "
			 "%s is dropped",
			 gone.mdev_uuid, h->d->name, gone.parent);
		e = vgpu_txn_record_drop(&h->txn, &gone);
		if (e < 0)
			return e;
		memmove(&h->recs.v[drop], &h->recs.v[drop + 1],
			(h->recs.n - drop - 1) * sizeof(h->recs.v[0]));
		h->recs.n--;
	}
	return 0;
}

static int do_prepare(struct hook *h)
{
	const struct vgpu_record *o;
	int e = drop_interrupted_moves(h);

	if (e < 0)
		return e;
	o = foreign_hostdev(h->d, &h->recs);

	if (o)
		return vgpu_error(h->ctx, -EBUSY,
				  "its definition names %s %s, which domain '%s' (%s) holds; "
				  "the domain cannot start (remove that hostdev)",
				  o->iface == VGPU_IFACE_MDEV ? "mdev" : "VF",
				  o->iface == VGPU_IFACE_MDEV ? o->mdev_uuid : o->parent, o->domain,
				  o->domain_uuid);
	for (size_t i = 0; i < h->recs.n; i++) {
		int e;

		if (!vgpu_hook_owns(h->d, &h->recs.v[i]))
			continue;
		e = prepare_one(h, &h->recs.v[i]);
		if (e < 0)
			return e;
	}
	return write_note(h);
}

/* ---- release ---------------------------------------------------------------- */

static bool listed(const struct vgpu_strv *keys, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];

	vgpu_record_key(r, key);
	for (size_t i = 0; i < keys->n; i++)
		if (strcmp(keys->items[i], key) == 0)
			return true;
	return false;
}

/* Per-start vGPUs go at each stop, and after a failed start what its prepare created. */
static int do_release(struct hook *h)
{
	VGPU_AUTOSTRV failed_start = { 0 };

	read_note(h->fs, h->d->name, &failed_start, true);
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];
		int e;

		if (!vgpu_hook_owns(h->d, r) ||
		    (r->lifetime != VGPU_LIFETIME_PER_START && !listed(&failed_start, r)))
			continue;
		e = vgpu_txn_destroy(&h->txn, r);
		if (e == -ESTALE) { /* not ours any more: leave it, say so */
			vgpu_warn(h->ctx, "%s", vgpu_ctx_error(h->ctx));
			e = 0;
		}
		if (e < 0)
			return e;
	}
	return 0;
}

/* ---- locks ------------------------------------------------------------------ */

/* The GPUs of @d's records (all of them, or those not as recorded) into @l. */
static void gpus_of(struct hook *h, bool only_missing, struct vgpu_gpu_locks *l)
{
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];
		bool ready = false;

		if (!vgpu_hook_owns(h->d, r))
			continue;
		if (only_missing && as_recorded(h->ctx, h->fs, r, &ready) == 0 && ready)
			continue;
		vgpu_gpu_locks_add(l, r->gpu);
	}
}

static void hook_clear(struct hook *h)
{
	vgpu_records_clear(&h->recs);
	vgpu_strv_clear(&h->created);
}

/* Under the host lock: the records as they are now, and the GPUs of @h's domain. */
static int hook_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct hook *h = arg;
	int e;

	vgpu_records_clear(&h->recs);
	e = vgpu_records_read(h->ctx, h->fs, &h->recs);
	if (e == 0)
		gpus_of(h, false, want);
	return e;
}

/*
 * Lock the host and the GPUs of the domain's records (never waiting for a
 * GPU with the host locked: vgpu_locks_take()), read the records again
 * (another run may have changed them), act, commit or undo; by @until.
 */
static int hook_run(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_hook_domain *d,
		    uint64_t until, int (*act)(struct hook *), bool writes_records)
{
	struct hook h = { .ctx = ctx, .fs = fs, .d = d };
	struct vgpu_gpu_locks l = { .n = 0 };
	int e = vgpu_locks_take(ctx, fs, until, hook_gpus, &h, &l);

	if (e == 0) {
		/*
		 * An act that writes no record (a release only frees what its
		 * records say): the decision is made, the host lock goes, and
		 * the driver's free (up to VGPU_LIVE_FREE_WAIT_MS) keeps only
		 * the GPUs' locks.  A prepare may move an mdev: it keeps both.
		 */
		if (!writes_records && l.n)
			vgpu_sysfs_unlock(fs);
		vgpu_txn_init(&h.txn, ctx, fs, false);
		e = act(&h);
		if (e < 0)
			vgpu_txn_rollback(&h.txn);
		else
			vgpu_txn_commit(&h.txn);
		vgpu_gpu_locks_release(&l);
		vgpu_sysfs_unlock(fs);
	}
	hook_clear(&h);
	return e;
}

/*
 * The common prepare after a reboot: each missing vGPU goes back where its
 * record says, with nothing in the way.  Only the records are read under
 * the host lock; the driver writes happen under the locks of their GPUs, so
 * the domains of different GPUs start side by side.  Anything else (a
 * foreign hostdev, a parent held by another vGPU, an mdev that must move)
 * is left to the path under the host lock: -EAGAIN with *@slow set.  A lock
 * not taken by @until is an error of its own (also -EAGAIN, EWOULDBLOCK):
 * the start's budget is spent, and is not spent twice.
 */
static int prepare_by_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			  const struct vgpu_hook_domain *d, uint64_t until, bool *slow)
{
	struct hook h = { .ctx = ctx, .fs = fs, .d = d };
	struct vgpu_gpu_locks l = { .n = 0 };
	uint64_t now = vgpu_monotonic_ms();
	int e = vgpu_sysfs_lock(ctx, fs, until > now ? (unsigned)(until - now) : 0);

	*slow = false;
	if (e < 0)
		return e;
	e = vgpu_records_read(ctx, fs, &h.recs);
	if (e == 0 && foreign_hostdev(d, &h.recs))
		e = -EAGAIN;
	for (size_t i = 0; e == 0 && i < h.recs.n; i++)
		if (vgpu_hook_owns(d, &h.recs.v[i]))
			e = held_by_other(&h, &h.recs.v[i]) < 0 ? -EAGAIN : 0;
	*slow = e == -EAGAIN;
	if (e == 0)
		gpus_of(&h, true, &l);
	vgpu_sysfs_unlock(fs);
	if (e < 0 || !l.gpus.n) {
		vgpu_gpu_locks_release(&l);
		hook_clear(&h);
		return e;
	}
	e = vgpu_gpu_locks_take(ctx, fs, &l, until);
	if (e < 0) {
		hook_clear(&h);
		return e;
	}
	/* under the GPUs' locks: the records as they are now (a release may have run) */
	vgpu_records_clear(&h.recs);
	e = vgpu_records_read(ctx, fs, &h.recs);
	vgpu_txn_init(&h.txn, ctx, fs, false);
	for (size_t i = 0; e == 0 && i < h.recs.n; i++) {
		const struct vgpu_record *r = &h.recs.v[i];
		bool ready, locked = false;

		for (size_t k = 0; k < l.gpus.n && !locked; k++)
			locked = strcmp(l.gpus.items[k], r->gpu) == 0;
		if (!vgpu_hook_owns(d, r) || !locked)
			continue;
		e = as_recorded(ctx, fs, r, &ready);
		if (e < 0 || ready)
			continue;
		e = vgpu_txn_create(&h.txn, r);
		if (e == 0) {
			note_created(&h, r);
		} else {
			e = -EAGAIN; /* the path under the host lock moves an mdev or says why */
			*slow = true;
		}
	}
	if (e == 0)
		e = write_note(&h);
	if (e < 0)
		vgpu_txn_rollback(&h.txn);
	else
		vgpu_txn_commit(&h.txn);
	vgpu_gpu_locks_release(&l);
	hook_clear(&h);
	return e;
}

int vgpu_hook_prepare(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_hook_domain *d)
{
	/* one budget for the whole start, whichever path it takes */
	uint64_t until = vgpu_monotonic_ms() + VGPU_HOOK_LOCK_WAIT_MS;
	bool slow;
	int e = prepare_by_gpu(ctx, fs, d, until, &slow);

	if (!slow)
		return e;
	vgpu_ctx_clear(ctx);
	return hook_run(ctx, fs, d, until, do_prepare, true);
}

int vgpu_hook_release(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_hook_domain *d)
{
	return hook_run(ctx, fs, d, vgpu_monotonic_ms() + VGPU_HOOK_LOCK_WAIT_MS, do_release,
			false);
}
