// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: releasing one domain's vGPUs (vgpu_release(), see assign.h), the
 * inverse of assign: the vGPUs its owner records give it destroyed and
 * forgotten, taken out of its definition, what is not provably its own left
 * alone and said, one transaction; and that transaction's end, which
 * assign shares (assign-priv.h): the definition put where struct
 * vgpu_domain_target says, the transaction kept or undone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "assign-priv.h"
#include "release.h"
#include "catalog.h"
#include "cleanup.h"
#include "read-host.h"
#include "live.h"
#include "outfile.h"
#include "records.h"
#include "sysfs-lock.h"
#include "txn.h"
#include "virt.h"

/*
 * Where the new definition goes: -o OUT is opened and checked before
 * anything changes (another user's link or file in /tmp, a FIFO nobody
 * reads), so a refusal costs nothing to undo.
 */
int assign_open_output(struct vgpu_ctx *ctx, const struct vgpu_domain_target *t,
		       struct vgpu_outfile *of)
{
	memset(of, 0, sizeof(*of));
	of->dirfd = of->fd = -1;
	if (t->dry_run || t->virt || !t->output)
		return 0;
	return vgpu_outfile_open(ctx, t->output, of);
}

/*
 * The last step under the locks: the new definition goes where @t says.  A
 * regular file is replaced now (a failure is still undone); a FIFO or a
 * device waits on its reader, so its text is kept in *@later and written
 * after every lock is released.
 */
int assign_put_domain(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_domain_target *t,
		      struct vgpu_outfile *of, char **xml, char **later)
{
	VGPU_AUTOFREE char *text = NULL;
	int r = vgpu_domain_format(ctx, doc, &text);

	if (r < 0)
		return r;
	if (t->dry_run || (!t->virt && !t->output)) {
		*xml = vgpu_steal_ptr(&text);
		return 0;
	}
	if (t->output && vgpu_outfile_through(of)) {
		*later = vgpu_steal_ptr(&text);
		return 0;
	}
	if (t->output)
		return vgpu_outfile_write(ctx, of, text, strlen(text));
	return vgpu_virt_define(ctx, t->virt, text);
}

/* Undo everything on failure, keep it on success; the lock goes either way. */
int assign_finish(struct vgpu_txn *txn, struct vgpu_sysfs *fs, int r)
{
	if (r < 0)
		vgpu_txn_rollback(txn);
	else
		vgpu_txn_commit(txn);
	vgpu_sysfs_unlock(fs);
	return r;
}

/*
 * Is @rec one of the vGPUs `--vf @vf` names: recorded on @vf, or an mdev our
 * metadata @m puts on @vf (the hook may have moved it: the record follows
 * the mdev, the definition keeps naming the VF it was assigned on)?
 */
static bool on_vf(const struct vgpu_record *rec, const struct vgpu_meta *m, const char *vf)
{
	if (!vf || strcmp(rec->parent, vf) == 0)
		return true;
	for (size_t i = 0; rec->mdev_uuid[0] && i < m->n_vgpus; i++)
		if (strcmp(m->vgpus[i].vf, vf) == 0 &&
		    strcmp(m->vgpus[i].mdev_uuid, rec->mdev_uuid) == 0)
			return true;
	return false;
}

/*
 * Destroy and forget what the records give domain @uuid (on @vf only, if
 * given).  A record the host no longer matches (VF gone, another vGPU
 * there) is dropped and the host left alone: release always drops its claim.
 */
static int release_vgpus(struct vgpu_txn *txn, const struct vgpu_records *recs,
			 const struct vgpu_meta *m, const char *uuid, const char *vf)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *rec = &recs->v[i];
		int r;

		if (strcmp(rec->domain_uuid, uuid) != 0 || !on_vf(rec, m, vf))
			continue;
		r = vgpu_txn_release(txn, rec);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Take the released vGPUs out of the definition: with @vf, those our
 * metadata puts there and those whose record (found by mdev UUID) is there.
 */
static void strip_released(struct _xmlDoc *doc, const struct vgpu_records *recs,
			   const struct vgpu_meta *m, const char *uuid, const char *vf)
{
	if (!vf) {
		vgpu_domain_strip(doc, NULL);
		return;
	}
	vgpu_domain_strip(doc, vf);
	for (size_t i = 0; i < m->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *v = &m->vgpus[i];
		const struct vgpu_record *rec = vgpu_records_find_vgpu(recs, v->vf, v->mdev_uuid);

		if (rec && strcmp(rec->domain_uuid, uuid) == 0 && strcmp(rec->parent, vf) == 0)
			vgpu_domain_strip(doc, v->vf);
	}
}

/* Our metadata names a vGPU whose record is gone or another domain's: say so, free nothing. */
static void warn_foreign(struct vgpu_ctx *ctx, const struct vgpu_records *recs,
			 const struct vgpu_meta *m, const char *uuid, const char *former,
			 const char *vf)
{
	for (size_t i = 0; i < m->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *v = &m->vgpus[i];
		const struct vgpu_record *rec = vgpu_records_find_vgpu(recs, v->vf, v->mdev_uuid);

		if (vf && strcmp(v->vf, vf) != 0 && (!rec || strcmp(rec->parent, vf) != 0))
			continue;
		if (!rec)
			vgpu_warn(ctx, "%s on %s has no owner record; not freed", v->profile,
				  v->vf);
		else if (strcmp(rec->domain_uuid, uuid) != 0 &&
			 strcmp(rec->domain_uuid, former) != 0)
			vgpu_warn(ctx, "%s on %s belongs to domain '%s' (%s) now; not freed",
				  v->profile, v->vf, rec->domain, rec->domain_uuid);
	}
}

/*
 * The UUID this domain had before it was redefined under the same name
 * with a new one (into @former, "" when none): our metadata's owner, when
 * records of that UUID name this domain.  Those vGPUs are this domain's to
 * release; a namesake's records without that proof are said, not freed.
 */
static void former_uuid(struct vgpu_ctx *ctx, const struct vgpu_records *recs,
			const struct vgpu_meta *m, const char *name, const char *uuid,
			char former[VGPU_UUID_LEN])
{
	former[0] = '\0';
	for (size_t i = 0; name && m->owner[0] && strcmp(m->owner, uuid) && i < recs->n; i++)
		if (strcmp(recs->v[i].domain_uuid, m->owner) == 0 &&
		    strcmp(recs->v[i].domain, name) == 0)
			snprintf(former, VGPU_UUID_LEN, "%s", m->owner);
	if (former[0])
		vgpu_log(
			ctx, LOG_NOTICE,
			"'%s' was redefined with UUID %s; the vGPUs recorded for its former UUID %s are released too",
			name, uuid, former);
	for (size_t i = 0; name && i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];

		if (strcmp(r->domain, name) == 0 && strcmp(r->domain_uuid, uuid) != 0 &&
		    strcmp(r->domain_uuid, former) != 0) {
			vgpu_warn(
				ctx,
				"%s on %s is recorded for a domain '%s' with UUID %s, not this one's %s; not freed (if that domain is gone, release it with a definition of that UUID)",
				r->profile, r->parent, r->domain, r->domain_uuid, uuid);
			vgpu_ctx_hint(ctx, VGPU_HINT_RELEASE_BY_UUID);
		}
	}
}

/* What release decides on, read again each time the host lock is taken. */
struct release_view {
	struct vgpu_ctx *ctx;
	struct vgpu_sysfs *fs;
	const struct vgpu_meta *m;
	const char *name;
	const char *uuid;
	char former[VGPU_UUID_LEN];
	struct vgpu_records recs;
	bool dry_run; /* decides only: an expired record is dropped from recs, not the host */
};

/* Under the host lock: the records now, and the GPUs of the domain's (and its former UUID's). */
static int release_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct release_view *v = arg;
	int r;

	vgpu_records_clear(&v->recs);
	v->former[0] = '\0';
	r = vgpu_records_read(v->ctx, v->fs, &v->recs);
	if (r == 0) /* a writer drops what an expired migration held */
		r = vgpu_records_drop_expired(v->ctx, v->dry_run ? NULL : v->fs, &v->recs,
					      (long long)time(NULL));
	if (r < 0)
		return r;
	r = 0;
	former_uuid(v->ctx, &v->recs, v->m, v->name, v->uuid, v->former);
	for (size_t i = 0; i < v->recs.n; i++)
		if (strcmp(v->recs.v[i].domain_uuid, v->uuid) == 0 ||
		    strcmp(v->recs.v[i].domain_uuid, v->former) == 0)
			vgpu_gpu_locks_add(want, v->recs.v[i].gpu);
	return 0;
}

static int release_locked(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
			  const struct vgpu_domain_info *dom, const char *vf,
			  const struct vgpu_domain_target *t, struct vgpu_outfile *of, char **xml,
			  char **later)
{
	const char *uuid = dom->uuid;
	const struct vgpu_meta *m = &dom->meta;
	struct vgpu_gpu_locks gl = { .n = 0 };
	struct release_view v = {
		.ctx = ctx, .fs = fs, .m = m, .name = dom->name, .uuid = uuid, .dry_run = t->dry_run
	};
	const char *former = v.former;
	struct vgpu_txn txn;
	int r;

	if (!uuid[0])
		return vgpu_error(ctx, -EINVAL, "the domain has no usable <uuid>");
	if (dom->meta_r == -EINVAL)
		return vgpu_error(ctx, -EINVAL, "%s", dom->meta_error);
	/* a dry run reads and decides, locks nothing */
	if (t->dry_run)
		r = release_gpus(&v, &gl);
	else
		r = vgpu_locks_take(ctx, fs, vgpu_monotonic_ms() + VGPU_ASSIGN_LOCK_WAIT_MS,
				    release_gpus, &v, &gl);
	if (r < 0) {
		vgpu_records_clear(&v.recs);
		vgpu_gpu_locks_release(&gl);
		return r;
	}
	/*
	 * Decided: the records hold the VFs until each is dropped, so the host
	 * lock goes before the driver's frees (up to VGPU_LIVE_FREE_WAIT_MS
	 * each), which keep only the GPUs' locks.  With nothing to free there
	 * is no slow work: the run ends under the host lock, in its turn.
	 */
	if (gl.n)
		vgpu_sysfs_unlock(fs);
	vgpu_txn_init(&txn, ctx, fs, t->dry_run);
	if (t->ops)
		txn.ops = t->ops;
	warn_foreign(ctx, &v.recs, m, uuid, former, vf);
	r = release_vgpus(&txn, &v.recs, m, uuid, vf);
	if (r == 0 && former[0])
		r = release_vgpus(&txn, &v.recs, m, former, vf);
	if (r == 0) {
		if (former[0])
			strip_released(doc, &v.recs, m, former, vf);
		strip_released(doc, &v.recs, m, uuid, vf);
		r = assign_put_domain(ctx, doc, t, of, xml, later);
	}
	r = assign_finish(&txn, fs, r);
	vgpu_gpu_locks_release(&gl);
	vgpu_records_clear(&v.recs);
	return r;
}

/*
 * The domain's last vGPU here is released: the vgpu_params set `params`
 * noted for it goes too (and its former UUID's).  The release stands
 * whatever happens to the note: a failure is a warning.
 */
static void forget_params(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			  const struct vgpu_domain_info *dom)
{
	const char *uuids[] = { dom->uuid, dom->meta.owner };

	for (size_t i = 0; i < ARRAY_SIZE(uuids); i++) {
		struct vgpu_ctx sub;

		if (!uuids[i][0] || (i && strcmp(uuids[i], dom->uuid) == 0))
			continue;
		vgpu_ctx_init(&sub, NULL, NULL);
		if (vgpu_live_params_forget(&sub, fs, uuids[i]) < 0)
			vgpu_warn(ctx, "%s", vgpu_ctx_error(&sub));
		vgpu_ctx_clear(&sub);
	}
}

int vgpu_release(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
		 const struct vgpu_domain_info *dom, const char *vf,
		 const struct vgpu_domain_target *t, char **xml)
{
	VGPU_AUTOFREE char *later = NULL;
	struct vgpu_outfile of;
	int r = assign_open_output(ctx, t, &of);

	*xml = NULL;
	if (r == 0)
		r = release_locked(ctx, fs, doc, dom, vf, t, &of, xml, &later);
	if (r == 0 && !t->dry_run)
		forget_params(ctx, fs, dom);
	/* the vGPUs are free: a reader that fails now only misses the definition */
	if (r == 0 && later && vgpu_outfile_write(ctx, &of, later, strlen(later)) < 0)
		r = -EPIPE;
	vgpu_outfile_close(&of);
	return r;
}
