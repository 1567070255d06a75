// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Creating and freeing vGPUs, confirmed by reading back, and transactions
 * that undo what they did.  The sysfs interfaces: mdev create/remove as in
 * Documentation/driver-api/vfio-mediated-device.rst, vendor-specific VFIO
 * (nvidia/current_vgpu_type) as in the NVIDIA Virtual GPU Software User Guide;
 * what the driver's errnos mean: create_hint() below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "read-live.h"
#include "sysfs-state.h"

#define VFIO_ATTR VGPU_LIVE_VFIO_ATTR
#define MDEV_DIR VGPU_LIVE_MDEV_DIR

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * The vGPU type the VF of @r holds now (0: none).  Every write starts with
 * vgpu_live_query(), which validates @r before any of its values becomes a
 * path.
 */
static int vfio_current(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			long *cur)
{
	struct vgpu_live_state st;
	int err = vgpu_live_query(ctx, fs, r, &st);

	if (err == 0)
		*cur = st.type_id;
	return err;
}

/* What the driver means by an errno on create. */
static const char *create_hint(int err, enum vgpu_iface iface)
{
	switch (-err) {
	case EIO:
	case EUSERS:
	case ENOSPC:
		return " (the driver refused: the type is not creatable there now, the GPU is full, or no GPU instance is free)";
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
	long cur = 0;
	int err = vfio_current(ctx, fs, r, &cur);

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
		return vgpu_error(
			ctx, err,
			"cannot create vGPU %s (type %u) on VF %s: writing '%s' to '%s' failed: %s%s",
			r->profile, r->type_id, r->parent, val,
			vgpu_live_show(fs, show, VFIO_ATTR, r->parent), vgpu_strerror(err),
			create_hint(err, r->iface));
	*created = true;
	err = vfio_current(ctx, fs, r, &cur);
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
	int err = vgpu_live_query(ctx, fs, r, &st);

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
		return vgpu_error(
			ctx, err,
			"cannot create mdev %s (%s, nvidia-%u) on %s: writing to '%s' failed: %s%s",
			r->mdev_uuid, r->profile, r->type_id, r->parent,
			vgpu_sysdir_show(&root, rel, show, sizeof(show)), vgpu_strerror(err),
			create_hint(err, r->iface));
	*created = true;
	err = vgpu_live_query(ctx, fs, r, &st);
	if (err == 0 && !vgpu_live_as_recorded(&st, r))
		err = vgpu_error(ctx, -EIO,
				 "mdev %s: created on %s as nvidia-%u, but the host shows %s",
				 r->mdev_uuid, r->parent, r->type_id,
				 st.exists ? "another parent or type" : "no such device");
	return err;
}

int vgpu_live_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		     bool *created)
{
	*created = false;
	return r->iface == VGPU_IFACE_MDEV ? create_mdev(ctx, fs, r, created) :
					     create_vfio(ctx, fs, r, created);
}

/*
 * Vendor VFIO: read first (never write 0 to a free VF: EPERM), then 0,
 * retried while QEMU is still closing the VF (EPERM) or the vGPU manager
 * has not let go (EBUSY).  About 5 s of waiting at most, plus the driver's
 * own wait inside a write.
 */
/*
 * The driver is still freeing a vGPU after VGPU_LIVE_FREE_WAIT_MS: the write
 * goes on in a process of its own, holding no lock, so the next start on
 * this GPU is not kept waiting; the record stays until a later run finds
 * the vGPU gone.
 */
static int slow_free(struct vgpu_ctx *ctx, const char *what, const char *which)
{
	return vgpu_error(
		ctx, -EINPROGRESS,
		"the driver is still freeing %s %s after %d s; that goes on without vgpuctl's locks and its owner record stays: run release again once it is gone",
		what, which, VGPU_LIVE_FREE_WAIT_MS / 1000);
}

static int destroy_vfio(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			bool *freed)
{
	static const unsigned backoff_ms[] = { 50, 100, 200, 400, 800, 1600, 1850 };
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	long cur = 0;
	int err;

	vgpu_sysdir_root(fs, &root);
	for (size_t attempt = 0;; attempt++) {
		err = vfio_current(ctx, fs, r, &cur);
		if (err == -ENOENT) /* VFs disabled, the GPU swapped: nothing of ours is there */
			return vgpu_error(ctx, -ESTALE, "VF %s is gone; nothing freed", r->parent);
		if (err < 0)
			return err;
		if (cur == 0)
			return 0;
		if (cur != r->type_id)
			return vgpu_error(
				ctx, -ESTALE,
				"VF %s holds vGPU type %ld, not %u as recorded; not freed",
				r->parent, cur, r->type_id);
		err = vgpu_sysfs_write_bounded(&root, "0", VGPU_LIVE_FREE_WAIT_MS, VFIO_ATTR,
					       r->parent);
		if (err == 0)
			break;
		if (err == -EINPROGRESS)
			return slow_free(ctx, "the vGPU on VF", r->parent);
		if ((err != -EPERM && err != -EBUSY) ||
		    attempt == sizeof(backoff_ms) / sizeof(backoff_ms[0]))
			return vgpu_error(
				ctx, err,
				"cannot free the vGPU on VF %s: writing '0' to '%s' failed: %s%s",
				r->parent, vgpu_live_show(fs, show, VFIO_ATTR, r->parent),
				vgpu_strerror(err),
				err == -EPERM || err == -EBUSY ?
					" (a process still holds the VF; retried for 5 s)" :
					"");
		msleep(backoff_ms[attempt]);
	}
	*freed = true;
	err = vfio_current(ctx, fs, r, &cur);
	if (err == 0 && cur != 0)
		err = vgpu_error(ctx, -EIO, "VF %s: wrote 0 to current_vgpu_type, reads %ld",
				 r->parent, cur);
	return err;
}

/*
 * Which of @paths (NULL-terminated) does a process hold open (the
 * ROOT/proc/<pid>/fd/<n> links)?  NULL: none.
 */
static const char *held_open(struct vgpu_sysfs *fs, const char *const *paths)
{
	VGPU_AUTOSTRV pids = { 0 };
	struct vgpu_sysdir root;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &pids, "proc") < 0)
		return NULL;
	for (size_t i = 0; i < pids.n; i++) {
		VGPU_AUTOSTRV fds = { 0 };
		const char *pid = pids.items[i];

		if (strspn(pid, "0123456789") != strlen(pid) ||
		    vgpu_sysfs_list_dir(&root, &fds, "proc/%s/fd", pid) < 0)
			continue;
		for (size_t j = 0; j < fds.n; j++) {
			char target[128];

			if (vgpu_sysfs_readlink(&root, target, sizeof(target), "proc/%s/fd/%s", pid,
						fds.items[j]) < 0)
				continue;
			for (const char *const *p = paths; *p; p++)
				if (strcmp(target, *p) == 0)
					return *p;
		}
	}
	return NULL;
}

/*
 * The device files a user of mdev @uuid holds: its IOMMU group
 * (/dev/vfio/<group>) and, where the kernel has iommufd, its VFIO cdev
 * (/dev/vfio/devices/vfioN, from the mdev's vfio-dev/ directory), which
 * libvirt 12.1 and later may open instead of the group.
 */
static bool mdev_open(struct vgpu_sysfs *fs, const struct vgpu_sysdir *root, const char *uuid,
		      char *what, size_t len)
{
	char group[32], cdev[96] = "", grp[64] = "";
	VGPU_AUTOSTRV vdevs = { 0 };
	const char *paths[3] = { NULL, NULL, NULL }, *held;
	size_t n = 0;

	if (vgpu_sysfs_link_basename(root, group, sizeof(group), MDEV_DIR "/iommu_group", uuid) ==
	    0) {
		snprintf(grp, sizeof(grp), "/dev/vfio/%s", group);
		paths[n++] = grp;
	}
	if (vgpu_sysfs_list_dir(root, &vdevs, MDEV_DIR "/vfio-dev", uuid) == 0 && vdevs.n &&
	    strncmp(vdevs.items[0], "vfio", 4) == 0) {
		snprintf(cdev, sizeof(cdev), "/dev/vfio/devices/%.60s", vdevs.items[0]);
		paths[n++] = cdev;
	}
	held = n ? held_open(fs, paths) : NULL;
	if (held)
		snprintf(what, len, "%s", held);
	return held != NULL;
}

static int destroy_mdev(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			bool *freed)
{
	char group[192], rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN];
	struct vgpu_live_state st;
	struct vgpu_sysdir root;
	int err = vgpu_live_query(ctx, fs, r, &st);

	if (err < 0 || !st.exists)
		return err;
	if (st.type_id != r->type_id)
		return vgpu_error(ctx, -ESTALE,
				  "mdev %s has type %u, not %u as recorded; not freed",
				  r->mdev_uuid, st.type_id, r->type_id);
	/* the same UUID on another parent is not the vGPU this record made */
	if (st.parent[0] && strcmp(st.parent, r->parent) != 0)
		return vgpu_error(ctx, -ESTALE,
				  "mdev %s is on %s, not on %s as recorded; not freed",
				  r->mdev_uuid, st.parent, r->parent);
	vgpu_sysdir_root(fs, &root);
	/* the kernel blocks `remove` until the user closes the device: never issue it then */
	if (mdev_open(fs, &root, r->mdev_uuid, group, sizeof(group)))
		return vgpu_error(ctx, -EBUSY, "mdev %s is still open (%s); not freed",
				  r->mdev_uuid, group);
	snprintf(rel, sizeof(rel), MDEV_DIR "/remove", r->mdev_uuid);
	err = vgpu_sysfs_write_bounded(&root, "1", VGPU_LIVE_FREE_WAIT_MS, "%s", rel);
	if (err == -ENOENT)
		return 0; /* removed meanwhile */
	if (err == -EINPROGRESS)
		return slow_free(ctx, "mdev", r->mdev_uuid);
	if (err < 0)
		return vgpu_error(ctx, err, "cannot free mdev %s: writing '1' to '%s' failed: %s",
				  r->mdev_uuid, vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(err));
	*freed = true;
	err = vgpu_live_query(ctx, fs, r, &st);
	if (err == 0 && st.exists)
		err = vgpu_error(ctx, -EIO, "mdev %s: wrote remove, but it is still there",
				 r->mdev_uuid);
	return err;
}

int vgpu_live_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		      bool *freed)
{
	*freed = false;
	return r->iface == VGPU_IFACE_MDEV ? destroy_mdev(ctx, fs, r, freed) :
					     destroy_vfio(ctx, fs, r, freed);
}

/* The record validated (vgpu_live_query()) and the relative path of its vgpu_params. */
static int params_path(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       char *rel, size_t len)
{
	struct vgpu_live_state st;
	int err = vgpu_live_query(ctx, fs, r, &st);

	if (err < 0)
		return err;
	if (r->iface == VGPU_IFACE_MDEV)
		snprintf(rel, len, VGPU_LIVE_MDEV_PARAMS, r->mdev_uuid);
	else
		snprintf(rel, len, VGPU_LIVE_VFIO_PARAMS, r->parent);
	return 0;
}

int vgpu_live_params_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			  struct vgpu_params *out)
{
	char rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN], text[VGPU_PARAMS_TEXT_MAX];
	struct vgpu_sysdir root;
	int err = params_path(ctx, fs, r, rel, sizeof(rel));

	if (err < 0)
		return err;
	vgpu_sysdir_root(fs, &root);
	err = vgpu_sysfs_read_str(&root, text, sizeof(text), "%s", rel);
	if (err < 0)
		return vgpu_error(ctx, err, "cannot read '%s': %s",
				  vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(err));
	err = vgpu_params_parse(ctx, text, out);
	if (err < 0)
		vgpu_error_append(ctx, "in '%s'", vgpu_sysdir_show(&root, rel, show, sizeof(show)));
	return err;
}

int vgpu_live_params_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
			   const struct vgpu_params *set)
{
	char rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN], text[VGPU_PARAMS_TEXT_MAX];
	char got_text[VGPU_PARAMS_TEXT_MAX];
	struct vgpu_params got;
	struct vgpu_sysdir root;
	int err = params_path(ctx, fs, r, rel, sizeof(rel));

	if (err < 0)
		return err;
	vgpu_sysdir_root(fs, &root);
	vgpu_params_file_text(set, text, sizeof(text));
	err = vgpu_sysfs_write(&root, text, "%s", rel);
	if (err < 0)
		return vgpu_error(
			ctx, err, "cannot write '%s' to '%s': %s%s", text,
			vgpu_sysdir_show(&root, rel, show, sizeof(show)), vgpu_strerror(err),
			err == -EBUSY ?
				" (the vGPU is open: the driver takes a new set only while it is closed)" :
				"");
	err = vgpu_live_params_read(ctx, fs, r, &got);
	if (err < 0)
		return err;
	if (!vgpu_params_equal(&got, set))
		return vgpu_error(ctx, -EIO, "wrote '%s' to '%s', but it reads '%s'", text,
				  vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_params_format(&got, got_text, sizeof(got_text)));
	return 0;
}

int vgpu_live_params_note(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
			  const struct vgpu_params *set)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char text[VGPU_PARAMS_TEXT_MAX + 1];
	int err;

	if (!vgpu_uuid_valid(uuid))
		return vgpu_error(ctx, -EINVAL, "'%s' is not a domain UUID", uuid);
	vgpu_params_format(set, text, sizeof(text) - 1);
	strcat(text, "\n");
	err = vgpu_sysfs_mkdirs_ctx(ctx, fs, &d, VGPU_PARAMS_NOTE_DIR);
	if (err == 0 && (err = vgpu_sysfs_replace(&d, uuid, text, strlen(text))) < 0)
		vgpu_error(ctx, err, "cannot write %s/%s: %s", VGPU_PARAMS_NOTE_DIR, uuid,
			   vgpu_strerror(err));
	return err;
}

int vgpu_live_params_noted(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid,
			   struct vgpu_params *out)
{
	char text[VGPU_PARAMS_TEXT_MAX];
	struct vgpu_sysdir root;
	int err;

	if (!vgpu_uuid_valid(uuid))
		return vgpu_error(ctx, -EINVAL, "'%s' is not a domain UUID", uuid);
	vgpu_sysdir_root(fs, &root);
	err = vgpu_sysfs_read_str(&root, text, sizeof(text), VGPU_PARAMS_NOTE_DIR "/%s", uuid);
	if (err < 0)
		return vgpu_error(ctx, err, "cannot read %s/%s: %s", VGPU_PARAMS_NOTE_DIR, uuid,
				  vgpu_strerror(err));
	return vgpu_params_parse(ctx, text, out);
}

int vgpu_live_params_forget(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *uuid)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	struct vgpu_records recs = { 0 };
	bool named = false;
	int err;

	if (!vgpu_uuid_valid(uuid))
		return vgpu_error(ctx, -EINVAL, "'%s' is not a domain UUID", uuid);
	err = vgpu_records_read(ctx, fs, &recs);
	for (size_t i = 0; err == 0 && i < recs.n; i++)
		named = named || strcmp(recs.v[i].domain_uuid, uuid) == 0;
	vgpu_records_clear(&recs);
	if (err < 0 || named)
		return err;
	err = vgpu_sysdir_open(fs, &d, VGPU_PARAMS_NOTE_DIR);
	if (err == 0)
		err = vgpu_sysfs_unlink(&d, uuid);
	if (err == -ENOENT)
		return 0;
	if (err < 0)
		return vgpu_error(ctx, err, "cannot remove %s/%s: %s", VGPU_PARAMS_NOTE_DIR, uuid,
				  vgpu_strerror(err));
	return 1;
}
