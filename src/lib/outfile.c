// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A user's file the result goes to (-o OUT): see outfile.h.  Resolved one
 * component at a time from an open directory, so what was checked is what
 * is written: a link's owner is read with the link, not after realpath().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "outfile.h"
#include "sysfs-state.h"
#include "util.h"

#define MAX_LINKS 40 /* the kernel's own limit on links in one path */

/* A sticky directory anybody may write to (/tmp): other users' links and files are theirs. */
static bool shared_dir(const struct stat *dir)
{
	return (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
}

/* Neither the caller nor the directory's owner owns @st: the kernel's protected_* test. */
static bool foreign(const struct stat *dir, const struct stat *st)
{
	return shared_dir(dir) && st->st_uid != geteuid() && st->st_uid != dir->st_uid;
}

/* Split @path into its directory (opened) and last component; "a/" has none. */
static int open_parent(const char *path, int *dirfd, char **base)
{
	const char *slash = strrchr(path, '/');
	VGPU_AUTOFREE char *dir = NULL;

	if (slash && !slash[1])
		return -EISDIR;
	if (slash)
		dir = slash == path ? vgpu_xstrdup("/") :
				      vgpu_xstrndup(path, (size_t)(slash - path));
	*base = vgpu_xstrdup(slash ? slash + 1 : path);
	if (strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
		return -EISDIR;
	*dirfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *dirfd < 0 ? -errno : 0;
}

/* @link's target as a path usable from where @cur was: relative to @cur's directory. */
static char *link_path(const char *cur, const char *target)
{
	const char *slash = strrchr(cur, '/');
	char *out;

	if (target[0] == '/' || !slash)
		return vgpu_xstrdup(target);
	if (asprintf(&out, "%.*s/%s", (int)(slash - cur), cur, target) < 0)
		abort();
	return out;
}

/* Forget the directory of the previous hop (or of the file, at the end). */
static void close_dir(struct vgpu_outfile *of)
{
	if (of->dirfd >= 0)
		close(of->dirfd);
	of->dirfd = -1;
	free(of->base);
	of->base = NULL;
}

static int refuse(struct vgpu_ctx *ctx, const char *path, int err, const char *why)
{
	return vgpu_error(ctx, err, "cannot write '%s': %s", path, why);
}

int vgpu_outfile_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_outfile *of)
{
	VGPU_AUTOFREE char *cur = vgpu_xstrdup(path);
	char why[VGPU_PATH_MAX + 160];

	memset(of, 0, sizeof(*of));
	of->dirfd = of->fd = -1;
	of->path = vgpu_xstrdup(path);
	for (int hops = 0;; hops++) {
		struct stat dir, st;
		char target[VGPU_PATH_MAX], *next;
		ssize_t n;
		int r;

		close_dir(of);
		r = open_parent(cur, &of->dirfd, &of->base);
		if (r < 0)
			return refuse(ctx, path, r, strerror(-r));
		if (fstat(of->dirfd, &dir) < 0 ||
		    fstatat(of->dirfd, of->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				return 0; /* a new file */
			return refuse(ctx, path, -errno, strerror(errno));
		}
		if (S_ISLNK(st.st_mode) && foreign(&dir, &st)) {
			snprintf(
				why, sizeof(why),
				"'%s' is a symbolic link that another user (uid %u) owns in a shared sticky directory; it is not followed",
				cur, (unsigned)st.st_uid);
			return refuse(ctx, path, -EACCES, why);
		}
		if (S_ISLNK(st.st_mode)) {
			if (hops == MAX_LINKS)
				return refuse(ctx, path, -ELOOP, strerror(ELOOP));
			n = readlinkat(of->dirfd, of->base, target, sizeof(target) - 1);
			if (n < 0)
				return refuse(ctx, path, -errno, strerror(errno));
			target[n] = '\0';
			next = link_path(cur, target);
			free(cur);
			cur = next;
			continue;
		}
		if (S_ISDIR(st.st_mode))
			return refuse(ctx, path, -EISDIR, strerror(EISDIR));
		if (foreign(&dir, &st)) {
			snprintf(
				why, sizeof(why),
				"'%s' belongs to another user (uid %u) in a shared sticky directory; write somewhere else or remove it first",
				cur, (unsigned)st.st_uid);
			return refuse(ctx, path, -EACCES, why);
		}
		if (S_ISREG(st.st_mode)) {
			of->exists = true;
			of->st = st;
			return 0;
		}
		/* a FIFO or a device: written through; opened now, so none that blocks */
		of->fd = openat(of->dirfd, of->base,
				O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		if (of->fd < 0 && errno == ENXIO)
			return refuse(ctx, path, -EPIPE, "nothing reads from it");
		if (of->fd < 0)
			return refuse(ctx, path, -errno, strerror(errno));
		if (fstat(of->fd, &of->st) < 0 || S_ISREG(of->st.st_mode))
			return refuse(ctx, path, -EAGAIN, "it changed while it was opened");
		return 0;
	}
}

bool vgpu_outfile_through(const struct vgpu_outfile *of)
{
	return of->fd >= 0;
}

/* A file that is a mount point (bind-mounted into a container) cannot be renamed over. */
static int rewrite_in_place(struct vgpu_outfile *of, const char *data, size_t len)
{
	int fd = openat(of->dirfd, of->base, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBUSY;
	}
	r = vgpu_write_all(fd, data, len);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int vgpu_outfile_write(struct vgpu_ctx *ctx, struct vgpu_outfile *of, const char *data, size_t len)
{
	int r, old = -1;

	if (of->fd >= 0) {
		int flags = fcntl(of->fd, F_GETFL);

		/* a reader is there: now wait for it, as `cat > FIFO` would */
		if (flags >= 0)
			(void)fcntl(of->fd, F_SETFL, flags & ~O_NONBLOCK);
		r = vgpu_write_all(of->fd, data, len);
		if (r < 0)
			return vgpu_error(ctx, r, "cannot write '%s': %s", of->path,
					  r == -EPIPE ? "its reader went away" : strerror(-r));
		return 0;
	}
	if (of->exists)
		old = openat(of->dirfd, of->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	r = vgpu_replace_at(of->dirfd, of->base, data, len, of->exists ? &of->st : NULL, old);
	if (old >= 0)
		close(old);
	if (r == -EBUSY && of->exists)
		r = rewrite_in_place(of, data, len);
	if (r == -EPERM || r == -ENOTSUP)
		return vgpu_error(
			ctx, r,
			"cannot write '%s': its extended attributes (ACL, security label) cannot be kept: %s; the file is left as it was",
			of->path, strerror(-r));
	if (r < 0)
		return vgpu_error(ctx, r, "cannot write '%s': %s", of->path, vgpu_strerror(r));
	return 0;
}

void vgpu_outfile_close(struct vgpu_outfile *of)
{
	close_dir(of);
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	free(of->path);
	of->path = NULL;
}

int vgpu_file_replace(struct vgpu_ctx *ctx, const char *path, const char *data, size_t len)
{
	struct vgpu_outfile of;
	int r = vgpu_outfile_open(ctx, path, &of);

	if (r == 0)
		r = vgpu_outfile_write(ctx, &of, data, len);
	vgpu_outfile_close(&of);
	return r;
}
