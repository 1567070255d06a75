// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * State files of our own below the root (owner records, catalogues, the
 * hook's notes under var/lib/vgpuctl and run/vgpuctl): directories made on
 * demand, files replaced atomically, and the temporary files that killed
 * writers left swept away.  See sysfs-state.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "sysfs-priv.h"
#include "sysfs-state.h"
#include "sysfs.h"

int vgpu_sysfs_mkdirs(struct vgpu_sysfs *fs, struct vgpu_sysdir *d, const char *rel)
{
	struct vgpu_sysdir root;
	char path[VGPU_PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (path[0] == '/')
		return -VGPU_EESCAPE;
	vgpu_sysdir_root(fs, &root);
	/* each prefix in turn: "var", "var/lib", "var/lib/vgpuctl" */
	for (char *slash = path;; slash++) {
		bool last;

		slash = strchrnul(slash, '/');
		last = *slash == '\0';
		*slash = '\0';
		if (vgpu_sysdir_open(fs, d, "%s", path) == 0) {
			if (last)
				return 0;
			vgpu_sysdir_close(d);
		} else {
			char *base = strrchr(path, '/');
			VGPU_AUTOSYSDIR parent = { .fd = -1 };

			if (base) {
				int r;

				*base = '\0';
				r = vgpu_sysdir_open(fs, &parent, "%s", path);
				*base = '/';
				if (r < 0)
					return r;
			}
			if (mkdirat(base ? parent.fd : root.fd, base ? base + 1 : path, 0755) < 0 &&
			    errno != EEXIST)
				return -errno;
			if (last)
				return vgpu_sysdir_open(fs, d, "%s", path);
		}
		*slash = '/';
	}
}

int vgpu_write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Give @to every extended attribute of @from (an ACL is one: system.posix_acl_*). */
static int copy_xattrs(int from, int to)
{
	char names[8192], value[65536];
	ssize_t n = flistxattr(from, names, sizeof(names));

	if (n < 0)
		return errno == ENOTSUP ? 0 : -errno;
	for (const char *name = names; name < names + n; name += strlen(name) + 1) {
		ssize_t v = fgetxattr(from, name, value, sizeof(value));

		if (v < 0 && errno == ENODATA)
			continue; /* removed meanwhile */
		if (v < 0 || fsetxattr(to, name, value, (size_t)v, 0) < 0)
			return -errno;
	}
	return 0;
}

int vgpu_replace_at(int dirfd, const char *name, const char *data, size_t len,
		    const struct stat *keep, int attrs_from)
{
	char tmp[VGPU_PATH_MAX];
	int fd, r;

	if (!sysfs_one_component(name))
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	(void)unlinkat(dirfd, tmp, 0); /* a leftover of a crashed run of this pid */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    keep ? 0600 : 0644);
	if (fd < 0)
		return -errno;
	r = vgpu_write_all(fd, data, len);
	/* the owner first: fchown() may clear set-id bits that fchmod() sets */
	if (r == 0 && keep && fchown(fd, keep->st_uid, keep->st_gid) < 0 && errno != EPERM)
		r = -errno;
	if (r == 0 && keep && fchmod(fd, keep->st_mode & 07777) < 0)
		r = -errno;
	/* after the mode: an ACL's mask is the group bits, and the ACL is what was there */
	if (r == 0 && attrs_from >= 0)
		r = copy_xattrs(attrs_from, fd);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0);
		return r;
	}
	/*
	 * The rename has taken effect and the data is on disk; a directory
	 * fsync() that fails only leaves the rename's durability to the next
	 * sync.  Failing here would report as not done a change that is done.
	 */
	(void)fsync(dirfd);
	return 0;
}

/* Is @pid a process that no longer exists (its files and tickets are litter)? */
static bool pid_gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/*
 * A writer killed between its temporary file and the rename leaves
 * ".NAME.PID.tmp"; only its own PID would remove it.  Remove those whose
 * writer is gone (the PID names no process), so none stays forever.
 */
/*
 * Untouched for TEMP_STALE_S: no write in progress.  A PID alone does not
 * tell: one in another PID namespace (a container sharing the directory)
 * names nothing here, while its writer is alive.
 */
#define TEMP_STALE_S 60

static bool temp_old(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       sysfs_mtime_age_ms(&st) > TEMP_STALE_S * 1000;
}

static void sweep_temps(int dirfd)
{
	int fd = dup(dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir))) {
		const char *dot;
		char *end;
		long pid;

		if (e->d_name[0] != '.' || strlen(e->d_name) < 6 ||
		    strcmp(e->d_name + strlen(e->d_name) - 4, ".tmp") != 0)
			continue;
		dot = e->d_name + strlen(e->d_name) - 4; /* ".tmp" */
		while (dot > e->d_name + 1 && dot[-1] != '.')
			dot--;
		pid = strtol(dot, &end, 10);
		if (dot > e->d_name + 1 && end == e->d_name + strlen(e->d_name) - 4 &&
		    pid_gone(pid) && temp_old(dirfd, e->d_name))
			(void)unlinkat(dirfd, e->d_name, 0);
	}
	closedir(dir);
}

int vgpu_sysfs_replace(const struct vgpu_sysdir *d, const char *name, const char *data, size_t len)
{
	int r = vgpu_replace_at(d->fd, name, data, len, NULL, -1);

	if (r == 0)
		sweep_temps(d->fd);
	return r;
}

int vgpu_sysfs_unlink(const struct vgpu_sysdir *d, const char *name)
{
	if (!sysfs_one_component(name))
		return -EINVAL;
	if (unlinkat(d->fd, name, 0) < 0)
		return -errno;
	(void)fsync(d->fd); /* done either way: see vgpu_sysfs_replace() */
	sweep_temps(d->fd);
	return 0;
}

int vgpu_sysfs_mkdirs_ctx(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_sysdir *d,
			  const char *rel)
{
	int r = vgpu_sysfs_mkdirs(fs, d, rel);

	if (r < 0) {
		char show[VGPU_SHOW_LEN];
		struct vgpu_sysdir root;

		vgpu_sysdir_root(fs, &root);
		return vgpu_error(ctx, r, "cannot create '%s': %s",
				  vgpu_sysdir_show(&root, rel, show, sizeof(show)),
				  vgpu_strerror(r));
	}
	return 0;
}
