// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Changes as transactions: each step that took effect is pushed with its
 * inverse; a failure undoes them in reverse (see txn.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "txn.h"

const struct vgpu_txn_ops vgpu_txn_live_ops = {
	.create = vgpu_live_create,
	.destroy = vgpu_live_destroy,
	.record_write = vgpu_record_write,
	.record_remove = vgpu_record_remove,
};

void vgpu_txn_init(struct vgpu_txn *t, struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, bool dry_run)
{
	memset(t, 0, sizeof(*t));
	t->ctx = ctx;
	t->fs = fs;
	t->ops = &vgpu_txn_live_ops;
	t->dry_run = dry_run;
}

/* Push a step; a dry run reports it as @how says (kind, object, record). */
static void push(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, const struct vgpu_step *how,
		 const struct vgpu_record *r, const char *fmt, va_list ap)
{
	struct vgpu_step s = *how;
	char path[sizeof(VGPU_RECORDS_DIR) + VGPU_RECORD_KEY_LEN + 1];

	t->steps = vgpu_xreallocarray(t->steps, t->n + 1, sizeof(*t->steps));
	t->steps[t->n].what = vgpu_vasprintf(fmt, ap);
	t->steps[t->n].undo = undo;
	t->steps[t->n].data = data;
	if (!t->dry_run) {
		vgpu_log(t->ctx, LOG_DEBUG, "%s", t->steps[t->n++].what);
		return;
	}
	if (r) {
		char key[VGPU_RECORD_KEY_LEN];

		s.gpu = r->gpu[0] ? r->gpu : NULL;
		s.profile = r->profile[0] ? r->profile : NULL;
		s.parent = r->parent[0] ? r->parent : NULL;
		s.domain = r->domain[0] ? r->domain : NULL;
		s.count = 1;
		if (s.object == VGPU_OBJECT_RECORD) {
			vgpu_record_key(r, key);
			snprintf(path, sizeof(path), "%s/%s", VGPU_RECORDS_DIR, key);
			s.path = path;
		}
	}
	s.text = t->steps[t->n++].what;
	vgpu_step_report(t->ctx, &s);
}

void vgpu_txn_push(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, const char *fmt, ...)
{
	const struct vgpu_step other = { .kind = VGPU_STEP_OTHER };
	va_list ap;

	va_start(ap, fmt);
	push(t, undo, data, &other, NULL, fmt, ap);
	va_end(ap);
}

/* vgpu_txn_push() of a step on record @r, of @kind and @object. */
static void push_rec(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, enum vgpu_step_kind kind,
		     enum vgpu_step_object object, const struct vgpu_record *r, const char *fmt,
		     ...) __attribute__((format(printf, 7, 8)));
static void push_rec(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, enum vgpu_step_kind kind,
		     enum vgpu_step_object object, const struct vgpu_record *r, const char *fmt,
		     ...)
{
	const struct vgpu_step how = { .kind = kind, .object = object };
	va_list ap;

	va_start(ap, fmt);
	push(t, undo, data, &how, r, fmt, ap);
	va_end(ap);
}

/*
 * Asked to stop (vgpu_interrupt()): no step starts after it, so the
 * caller's rollback leaves the host as it was (undo steps never ask).
 */
static int stopped(struct vgpu_txn *t)
{
	if (t->dry_run || !vgpu_interrupted())
		return 0;
	return vgpu_error(t->ctx, -EINTR, "interrupted (signal %d): nothing more is changed",
			  vgpu_interrupted());
}

int vgpu_txn_rollback(struct vgpu_txn *t)
{
	char *done = NULL;
	int ret = 0;

	if (t->n == 0 || t->dry_run) {
		vgpu_txn_commit(t);
		return 0;
	}
	while (t->n) {
		struct vgpu_txn_step *s = &t->steps[--t->n];
		struct vgpu_ctx sub = { 0 };
		const char *sep = done ? ", " : "";

		if (s->undo(&sub, s->data) < 0) {
			vgpu_append(&done, "%sFAILED to undo '%s' (%s)", sep, s->what,
				    vgpu_ctx_error(&sub));
			ret = -EIO;
		} else {
			vgpu_append(&done, "%sundid '%s'", sep, s->what);
		}
		vgpu_ctx_clear(&sub);
		free(s->what);
		free(s->data);
	}
	vgpu_error_append(t->ctx, "%s: %s", ret ? "rollback incomplete" : "rolled back", done);
	free(done);
	free(t->steps);
	t->steps = NULL;
	return ret;
}

void vgpu_txn_commit(struct vgpu_txn *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->steps[i].what);
		free(t->steps[i].data);
	}
	free(t->steps);
	t->steps = NULL;
	t->n = 0;
}

/* The data of every step below: the host and one record (two for a put). */
struct rec_step {
	struct vgpu_sysfs *fs;
	const struct vgpu_txn_ops *ops;
	struct vgpu_record rec;
	struct vgpu_record old;
	bool has_old;
};

static struct rec_step *rec_step(struct vgpu_txn *t, const struct vgpu_record *r)
{
	struct rec_step *s = vgpu_xcalloc(1, sizeof(*s));

	s->fs = t->fs;
	s->ops = t->ops;
	s->rec = *r;
	return s;
}

static int undo_create(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	bool freed;

	return s->ops->destroy(ctx, s->fs, &s->rec, &freed);
}

static int undo_destroy(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	bool created;

	return s->ops->create(ctx, s->fs, &s->rec, &created);
}

static const char *where(const struct vgpu_record *r, char *buf, size_t len)
{
	if (r->iface == VGPU_IFACE_MDEV)
		snprintf(buf, len, "mdev %s (%s) on %s", r->mdev_uuid, r->profile, r->parent);
	else
		snprintf(buf, len, "vGPU %s (type %u) on VF %s", r->profile, r->type_id, r->parent);
	return buf;
}

int vgpu_txn_create(struct vgpu_txn *t, const struct vgpu_record *r)
{
	char buf[VGPU_PROFILE_MAX + 128];
	bool created = false;
	int err = stopped(t);

	if (err < 0)
		return err;
	err = t->dry_run ? 0 : t->ops->create(t->ctx, t->fs, r, &created);
	/* created but not confirmed: the rollback must still free it */
	if (created || (t->dry_run && err == 0))
		push_rec(t, undo_create, rec_step(t, r), VGPU_STEP_VGPU_CREATE, VGPU_OBJECT_VGPU, r,
			 "create %s", where(r, buf, sizeof(buf)));
	return err;
}

int vgpu_txn_destroy(struct vgpu_txn *t, const struct vgpu_record *r)
{
	char buf[VGPU_PROFILE_MAX + 128];
	bool freed = false;
	int err = stopped(t);

	if (err < 0)
		return err;
	err = t->dry_run ? 0 : t->ops->destroy(t->ctx, t->fs, r, &freed);
	if (freed || (t->dry_run && err == 0))
		push_rec(t, undo_destroy, rec_step(t, r), VGPU_STEP_VGPU_DESTROY, VGPU_OBJECT_VGPU,
			 r, "free %s", where(r, buf, sizeof(buf)));
	return err;
}

static int undo_put(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	char key[VGPU_RECORD_KEY_LEN];

	if (s->has_old)
		return s->ops->record_write(ctx, s->fs, &s->old);
	vgpu_record_key(&s->rec, key);
	return s->ops->record_remove(ctx, s->fs, key);
}

static int undo_drop(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;

	return s->ops->record_write(ctx, s->fs, &s->rec);
}

int vgpu_txn_record_put(struct vgpu_txn *t, const struct vgpu_record *r,
			const struct vgpu_record *old)
{
	char key[VGPU_RECORD_KEY_LEN];
	struct rec_step *s;
	int err = stopped(t);

	if (err < 0)
		return err;
	s = rec_step(t, r);
	if (!t->dry_run && (err = t->ops->record_write(t->ctx, t->fs, r)) < 0) {
		/* a failure after the rename still leaves the new record: put the old back */
		struct vgpu_ctx sub = { 0 };

		if (old) {
			s->old = *old;
			s->has_old = true;
		}
		undo_put(&sub, s);
		vgpu_ctx_clear(&sub);
		free(s);
		return err;
	}
	if (old) {
		s->old = *old;
		s->has_old = true;
	}
	vgpu_record_key(r, key);
	push_rec(t, undo_put, s, VGPU_STEP_RECORD_WRITE, VGPU_OBJECT_RECORD, r,
		 "write owner record %s (domain %s)", key, r->domain);
	return 0;
}

int vgpu_txn_record_drop(struct vgpu_txn *t, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];
	int err = stopped(t);

	if (err < 0)
		return err;
	vgpu_record_key(r, key);
	if (!t->dry_run && (err = t->ops->record_remove(t->ctx, t->fs, key)) < 0)
		return err;
	push_rec(t, undo_drop, rec_step(t, r), VGPU_STEP_RECORD_DROP, VGPU_OBJECT_RECORD, r,
		 "drop owner record %s (domain %s)", key, r->domain);
	return 0;
}

int vgpu_txn_release(struct vgpu_txn *t, const struct vgpu_record *r)
{
	int err = vgpu_txn_destroy(t, r);

	/* the host no longer has what the record says: the claim goes all the same */
	if (err == -ESTALE) {
		vgpu_warn(t->ctx, "%s; the record is dropped, the host left as it is",
			  vgpu_ctx_error(t->ctx));
		err = 0;
	}
	return err < 0 ? err : vgpu_txn_record_drop(t, r);
}
