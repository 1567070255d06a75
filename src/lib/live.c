// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Creating and freeing vGPUs, confirmed by reading back, and transactions
 * that undo what they did.  The driver's errnos: live-and-hooks.md section 3.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "vgpu-priv.h"

#define VFIO_ATTR "sys/bus/pci/devices/%s/nvidia/current_vgpu_type"
#define MDEV_DIR "sys/bus/mdev/devices/%s"

/* The record's addresses, id and UUID are validated before they become paths. */
static int check_record(struct vgpu_ctx *ctx, const struct vgpu_record *r)
{
	char bdf[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(r->parent, bdf) < 0 || strcmp(bdf, r->parent) != 0)
		return vgpu_error(ctx, -EINVAL, "'%s' is not a PCI address", r->parent);
	if (r->type_id == 0 || r->type_id > 0xffffff)
		return vgpu_error(ctx, -EINVAL, "%u is not a vGPU type id", r->type_id);
	if (r->iface == VGPU_IFACE_MDEV && !vgpu_uuid_valid(r->mdev_uuid))
		return vgpu_error(ctx, -EINVAL, "'%s' is not an mdev UUID", r->mdev_uuid);
	if (r->iface != VGPU_IFACE_MDEV && r->iface != VGPU_IFACE_VENDOR_VFIO)
		return vgpu_error(ctx, -EINVAL, "vGPU on %s has no interface", r->parent);
	return 0;
}

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *show_root(struct vgpu_sysfs *fs, char *buf, const char *fmt, const char *a)
{
	struct vgpu_sysdir root;
	char rel[VGPU_PATH_MAX];

	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), fmt, a);
	return vgpu_sysdir_show(&root, rel, buf, VGPU_SHOW_LEN);
}

static int vfio_current(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *vf, long *cur)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	int r;

	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_read_long(&root, cur, 0, 0xffffff, VFIO_ATTR, vf);
	if (r < 0)
		return vgpu_error(ctx, r, "cannot read '%s': %s",
				  show_root(fs, show, VFIO_ATTR, vf), vgpu_strerror(r));
	return 0;
}

/* mdev @uuid: does it exist, on which parent, of which type. */
static int mdev_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
		      struct vgpu_live_state *out)
{
	char show[VGPU_SHOW_LEN];
	struct vgpu_sysdir root;
	int r;

	memset(out, 0, sizeof(*out));
	vgpu_sysdir_root(fs, &root);
	r = vgpu_mdev_locate(&root, uuid, out->parent, &out->type_id);
	if (r == -ENOENT || r == -VGPU_EDANGLING)
		return 0;
	if (r < 0)
		return vgpu_error(ctx, r, "cannot read '%s': %s",
				  show_root(fs, show, MDEV_DIR, uuid), vgpu_strerror(r));
	out->exists = true;
	return 0;
}

bool vgpu_live_as_recorded(const struct vgpu_live_state *st, const struct vgpu_record *r)
{
	return st->exists && st->type_id == r->type_id && strcmp(st->parent, r->parent) == 0;
}

int vgpu_live_query(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		    struct vgpu_live_state *out)
{
	long cur;
	int err = check_record(ctx, r);

	if (err < 0)
		return err;
	if (r->iface == VGPU_IFACE_MDEV)
		return mdev_query(ctx, fs, r->mdev_uuid, out);
	memset(out, 0, sizeof(*out));
	err = vfio_current(ctx, fs, r->parent, &cur);
	if (err < 0)
		return err;
	out->exists = cur != 0;
	out->type_id = (unsigned)cur;
	snprintf(out->parent, sizeof(out->parent), "%s", r->parent);
	return 0;
}

/* What the driver means by an errno on create. */
static const char *create_hint(int err, enum vgpu_iface iface)
{
	switch (-err) {
	case EIO:
	case EUSERS:
	case ENOSPC:
		return " (the driver refused: the type is not creatable there now, the GPU is "
		       "full, or no GPU instance is free)";
	case EPERM:
		return iface == VGPU_IFACE_VENDOR_VFIO ? " (the VF already holds a vGPU)" : "";
	case EEXIST:
		return " (the UUID is in use on another parent)";
	case ENOENT:
		return " (the device or the type is gone)";
	default:
		return "";
	}
}

static int create_vfio(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *created)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN], val[16];
	long cur;
	int err = vfio_current(ctx, fs, r->parent, &cur);

	if (err < 0)
		return err;
	if (cur == r->type_id)
		return 0;
	if (cur != 0)
		return vgpu_error(ctx, -EBUSY, "VF %s already holds vGPU type %ld", r->parent, cur);
	vgpu_sysdir_root(fs, &root);
	snprintf(val, sizeof(val), "%u", r->type_id);
	err = vgpu_sysfs_write(&root, val, VFIO_ATTR, r->parent);
	if (err < 0)
		return vgpu_error(ctx, err,
				  "cannot create vGPU %s (type %u) on VF %s: writing '%s' "
				  "to '%s' failed: %s%s",
				  r->profile, r->type_id, r->parent, val,
				  show_root(fs, show, VFIO_ATTR, r->parent), vgpu_strerror(err),
				  create_hint(err, r->iface));
	*created = true;
	err = vfio_current(ctx, fs, r->parent, &cur);
	if (err == 0 && cur != r->type_id)
		err = vgpu_error(ctx, -EIO, "VF %s: wrote type %u to current_vgpu_type, reads %ld",
				 r->parent, r->type_id, cur);
	return err;
}

static int create_mdev(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *created)
{
	char rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN];
	struct vgpu_live_state st;
	struct vgpu_sysdir root;
	int err = mdev_query(ctx, fs, r->mdev_uuid, &st);

	if (err < 0)
		return err;
	if (vgpu_live_as_recorded(&st, r))
		return 0;
	if (st.exists)
		return vgpu_error(ctx, -EEXIST, "mdev %s already exists on %s with type %u",
				  r->mdev_uuid, st.parent[0] ? st.parent : "another parent",
				  st.type_id);
	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/mdev_supported_types/nvidia-%u/create",
		 r->parent, r->type_id);
	err = vgpu_sysfs_write(&root, r->mdev_uuid, "%s", rel);
	if (err < 0)
		return vgpu_error(ctx, err,
				  "cannot create mdev %s (%s, nvidia-%u) on %s: writing "
				  "to '%s' failed: %s%s",
				  r->mdev_uuid, r->profile, r->type_id, r->parent,
				  vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(err), create_hint(err, r->iface));
	*created = true;
	err = mdev_query(ctx, fs, r->mdev_uuid, &st);
	if (err == 0 && !vgpu_live_as_recorded(&st, r))
		err = vgpu_error(ctx, -EIO,
				 "mdev %s: created on %s as nvidia-%u, but the host "
				 "shows %s",
				 r->mdev_uuid, r->parent, r->type_id,
				 st.exists ? "another parent or type" : "no such device");
	return err;
}

int vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *created)
{
	int err = check_record(ctx, r);

	*created = false;
	if (err < 0)
		return err;
	return r->iface == VGPU_IFACE_MDEV ? create_mdev(ctx, fs, r, created) :
					     create_vfio(ctx, fs, r, created);
}

/*
 * Vendor VFIO: read first (never write 0 to a free VF: EPERM), then 0,
 * retried while QEMU is still closing the VF (EPERM) or the vGPU manager
 * has not let go (EBUSY).  About 5 s of waiting at most, plus the driver's
 * own wait inside a write.
 */
static int free_vfio(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *freed)
{
	static const unsigned backoff_ms[] = { 50, 100, 200, 400, 800, 1600, 1850 };
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	long cur;
	int err;

	vgpu_sysdir_root(fs, &root);
	for (size_t attempt = 0;; attempt++) {
		err = vfio_current(ctx, fs, r->parent, &cur);
		if (err < 0)
			return err;
		if (cur == 0)
			return 0;
		if (cur != r->type_id)
			return vgpu_error(ctx, -EBUSY,
					  "VF %s holds vGPU type %ld, not %u as recorded; "
					  "not freed",
					  r->parent, cur, r->type_id);
		err = vgpu_sysfs_write(&root, "0", VFIO_ATTR, r->parent);
		if (err == 0)
			break;
		if ((err != -EPERM && err != -EBUSY) ||
		    attempt == sizeof(backoff_ms) / sizeof(backoff_ms[0]))
			return vgpu_error(
				ctx, err,
				"cannot free the vGPU on VF %s: writing '0' to "
				"'%s' failed: %s%s",
				r->parent, show_root(fs, show, VFIO_ATTR, r->parent),
				vgpu_strerror(err),
				err == -EPERM || err == -EBUSY ?
					" (a process still holds the VF; retried for 5 s)" :
					"");
		msleep(backoff_ms[attempt]);
	}
	*freed = true;
	err = vfio_current(ctx, fs, r->parent, &cur);
	if (err == 0 && cur != 0)
		err = vgpu_error(ctx, -EIO, "VF %s: wrote 0 to current_vgpu_type, reads %ld",
				 r->parent, cur);
	return err;
}

/* Does any process hold /dev/vfio/<group> open?  (ROOT/proc/<pid>/fd/<n> links) */
static bool vfio_group_open(struct vgpu_sysfs *fs, const char *group)
{
	VGPU_AUTOSTRV pids = { 0 };
	struct vgpu_sysdir root;
	char want[64];

	snprintf(want, sizeof(want), "/dev/vfio/%s", group);
	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &pids, "proc") < 0)
		return false;
	for (size_t i = 0; i < pids.n; i++) {
		VGPU_AUTOSTRV fds = { 0 };
		const char *pid = pids.items[i];

		if (strspn(pid, "0123456789") != strlen(pid) ||
		    vgpu_sysfs_list_dir(&root, &fds, "proc/%s/fd", pid) < 0)
			continue;
		for (size_t j = 0; j < fds.n; j++) {
			char target[128];

			if (vgpu_sysfs_readlink(&root, target, sizeof(target), "proc/%s/fd/%s", pid,
						fds.items[j]) == 0 &&
			    strcmp(target, want) == 0)
				return true;
		}
	}
	return false;
}

static int free_mdev(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *freed)
{
	char group[32], rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN];
	struct vgpu_live_state st;
	struct vgpu_sysdir root;
	int err = mdev_query(ctx, fs, r->mdev_uuid, &st);

	if (err < 0 || !st.exists)
		return err;
	if (st.type_id != r->type_id)
		return vgpu_error(ctx, -EBUSY, "mdev %s has type %u, not %u as recorded; not freed",
				  r->mdev_uuid, st.type_id, r->type_id);
	vgpu_sysdir_root(fs, &root);
	/* the kernel blocks `remove` until the user closes the device: never issue it then */
	if (vgpu_sysfs_link_basename(&root, group, sizeof(group), MDEV_DIR "/iommu_group",
				     r->mdev_uuid) == 0 &&
	    vfio_group_open(fs, group))
		return vgpu_error(ctx, -EBUSY, "mdev %s is still open (/dev/vfio/%s); not freed",
				  r->mdev_uuid, group);
	snprintf(rel, sizeof(rel), MDEV_DIR "/remove", r->mdev_uuid);
	err = vgpu_sysfs_write(&root, "1", "%s", rel);
	if (err == -ENOENT)
		return 0; /* removed meanwhile */
	if (err < 0)
		return vgpu_error(ctx, err, "cannot free mdev %s: writing '1' to '%s' failed: %s",
				  r->mdev_uuid, vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(err));
	*freed = true;
	err = mdev_query(ctx, fs, r->mdev_uuid, &st);
	if (err == 0 && st.exists)
		err = vgpu_error(ctx, -EIO, "mdev %s: wrote remove, but it is still there",
				 r->mdev_uuid);
	return err;
}

int vgpu_live_free(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		   bool *freed)
{
	int err = check_record(ctx, r);

	*freed = false;
	if (err < 0)
		return err;
	return r->iface == VGPU_IFACE_MDEV ? free_mdev(ctx, fs, r, freed) :
					     free_vfio(ctx, fs, r, freed);
}

/* ---- transactions ---------------------------------------------------------- */

void vgpu_txn_init(struct vgpu_txn *t, struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, bool dry_run)
{
	memset(t, 0, sizeof(*t));
	t->ctx = ctx;
	t->fs = fs;
	t->dry_run = dry_run;
}

void vgpu_txn_push(struct vgpu_txn *t, vgpu_undo_fn undo, void *data, const char *fmt, ...)
{
	va_list ap;

	t->steps = vgpu_xreallocarray(t->steps, t->n + 1, sizeof(*t->steps));
	va_start(ap, fmt);
	t->steps[t->n].what = vgpu_vasprintf(fmt, ap);
	va_end(ap);
	t->steps[t->n].undo = undo;
	t->steps[t->n].data = data;
	vgpu_log(t->ctx, t->dry_run ? LOG_NOTICE : LOG_DEBUG, "%s%s", t->dry_run ? "would " : "",
		 t->steps[t->n].what);
	t->n++;
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
	struct vgpu_record rec;
	struct vgpu_record old;
	bool has_old;
};

static struct rec_step *rec_step(struct vgpu_txn *t, const struct vgpu_record *r)
{
	struct rec_step *s = vgpu_xcalloc(1, sizeof(*s));

	s->fs = t->fs;
	s->rec = *r;
	return s;
}

static int undo_create(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	bool freed;

	return vgpu_live_free(ctx, s->fs, &s->rec, &freed);
}

static int undo_free(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	bool created;

	return vgpu_live_create(ctx, s->fs, &s->rec, &created);
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
	int err;

	err = t->dry_run ? 0 : vgpu_live_create(t->ctx, t->fs, r, &created);
	/* created but not confirmed: the rollback must still free it */
	if (created || (t->dry_run && err == 0))
		vgpu_txn_push(t, undo_create, rec_step(t, r), "create %s",
			      where(r, buf, sizeof(buf)));
	return err;
}

int vgpu_txn_free(struct vgpu_txn *t, const struct vgpu_record *r)
{
	char buf[VGPU_PROFILE_MAX + 128];
	bool freed = false;
	int err;

	err = t->dry_run ? 0 : vgpu_live_free(t->ctx, t->fs, r, &freed);
	if (freed || (t->dry_run && err == 0))
		vgpu_txn_push(t, undo_free, rec_step(t, r), "free %s", where(r, buf, sizeof(buf)));
	return err;
}

static int undo_put(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;
	char key[VGPU_RECORD_KEY_LEN];

	if (s->has_old)
		return vgpu_record_write(ctx, s->fs, &s->old);
	vgpu_record_key(&s->rec, key);
	return vgpu_record_remove(ctx, s->fs, key);
}

static int undo_drop(struct vgpu_ctx *ctx, void *data)
{
	struct rec_step *s = data;

	return vgpu_record_write(ctx, s->fs, &s->rec);
}

int vgpu_txn_record_put(struct vgpu_txn *t, const struct vgpu_record *r,
			const struct vgpu_record *old)
{
	char key[VGPU_RECORD_KEY_LEN];
	struct rec_step *s;
	int err;

	s = rec_step(t, r);
	if (!t->dry_run && (err = vgpu_record_write(t->ctx, t->fs, r)) < 0) {
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
	vgpu_txn_push(t, undo_put, s, "write owner record %s (domain %s)", key, r->domain);
	return 0;
}

int vgpu_txn_record_drop(struct vgpu_txn *t, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];
	int err;

	vgpu_record_key(r, key);
	if (!t->dry_run && (err = vgpu_record_remove(t->ctx, t->fs, key)) < 0)
		return err;
	vgpu_txn_push(t, undo_drop, rec_step(t, r), "drop owner record %s (domain %s)", key,
		      r->domain);
	return 0;
}
