// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Root-aware file access: the root as a jail, the readers (regular files
 * only, bounded reads) and the one write to the host.  See sysfs.h for the
 * rules; state files are sysfs-state.c, locks sysfs-lock.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "sysfs-priv.h"
#include "sysfs.h"

static int sys_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = {
		.flags = (unsigned long long)flags | O_CLOEXEC,
		.resolve = resolve,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN); /* RESOLVE_IN_ROOT races with renames: retry */
	return fd < 0 ? -errno : (int)fd;
}

/*
 * Can nothing below @fd's mount be opened as a device?  A nodev mount
 * refuses to open device nodes (EACCES), and sysfs and proc hold none.
 * Below such a directory, a path that stays on its mount
 * (RESOLVE_NO_XDEV) opens a regular file, a directory or a FIFO (a socket
 * does not open): pread() tells them apart without an fstat() per file.
 */
static bool mount_nodev(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return false;
	return (sfs.f_flags & ST_NODEV) || sfs.f_type == SYSFS_MAGIC ||
	       sfs.f_type == PROC_SUPER_MAGIC;
}

int vgpu_sysfs_open(struct vgpu_ctx *ctx, const char *sysroot, struct vgpu_sysfs **out)
{
	const char *root = sysroot ? sysroot : "/";
	struct vgpu_sysfs *fs;
	struct stat st;
	int fd, r;

	if (!*root)
		return vgpu_error(ctx, -EINVAL, "sysroot '': an empty root is not a directory");
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOTDIR || (stat(root, &st) == 0 && !S_ISDIR(st.st_mode)))
			return vgpu_error(ctx, -ENOTDIR, "sysroot '%s' is not a directory", root);
		return vgpu_error(ctx, -err, "cannot open sysroot '%s': %s", root, strerror(err));
	}
	fs = vgpu_xcalloc(1, sizeof(*fs));
	fs->rootfd = fd;
	fs->lockfd = -1;
	fs->root = vgpu_xstrdup(root);
	/* Drop a trailing slash so messages read ROOT/sys/... */
	for (size_t l = strlen(fs->root); l > 1 && fs->root[l - 1] == '/'; l--)
		fs->root[l - 1] = '\0';
	r = sys_openat2(fd, ".", O_PATH, RESOLVE_IN_ROOT);
	if (r >= 0) {
		close(r);
		fs->nodev = mount_nodev(fd);
	} else if (r == -ENOSYS && strcmp(fs->root, "/") == 0) {
		fs->no_openat2 = true; /* "/" needs no jail */
	} else {
		vgpu_sysfs_free(fs);
		return vgpu_error(
			ctx, r,
			"cannot confine paths to sysroot '%s': openat2() failed: %s (Linux 5.6 or later is needed for a root other than /)",
			root, strerror(-r));
	}
	*out = fs;
	return 0;
}

void vgpu_sysfs_free(struct vgpu_sysfs *fs)
{
	if (!fs)
		return;
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	if (fs->lockfd >= 0)
		close(fs->lockfd); /* the host lock (sysfs-lock.c): drops the flock */
	free(fs->root);
	free(fs);
}

const char *vgpu_sysfs_root(const struct vgpu_sysfs *fs)
{
	return fs->root;
}

void vgpu_sysdir_root(struct vgpu_sysfs *fs, struct vgpu_sysdir *d)
{
	d->fs = fs;
	d->fd = fs->rootfd;
	d->is_root = true;
	d->nodev = fs->nodev;
	d->path[0] = '\0';
}

static int vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	/*
	 * Nearly every path is a literal ("vendor") or "%s" with a path the
	 * caller built: copied as it is, since vsnprintf() costs more than
	 * the openat2() of a short sysfs name.
	 */
	const char *s = fmt;

	if (strcmp(fmt, "%s") == 0)
		s = va_arg(ap, const char *);
	else if (strchr(fmt, '%'))
		s = NULL;
	if (s) {
		if (vgpu_path_join(buf, len, "", s) < 0)
			return -ENAMETOOLONG;
	} else {
		int n = vsnprintf(buf, len, fmt, ap);

		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
	}
	if (buf[0] == '/')
		return -VGPU_EESCAPE; /* every path is relative to a directory */
	return 0;
}

/*
 * Open @rel below @d: inside the root, or beneath a subdirectory.  With
 * @same_mount, on @d's mount only (RESOLVE_NO_XDEV): -EXDEV is then either
 * a way out or another mount, and left to the caller to tell apart.
 */
static int open_how(const struct vgpu_sysdir *d, const char *rel, int flags, bool same_mount)
{
	int fd;

	if (d->fs->no_openat2) {
		fd = openat(d->fd, rel, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	unsigned long long how = (d->is_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) |
				 RESOLVE_NO_MAGICLINKS | (same_mount ? RESOLVE_NO_XDEV : 0);

	fd = sys_openat2(d->fd, rel, flags, how);
	if (fd == -EXDEV)
		return same_mount ? -EXDEV : -VGPU_EESCAPE;
	if (fd == -ENOENT && !(flags & O_NOFOLLOW)) {
		/*
		 * Absent, or there but a link to nothing?  Optional files may be
		 * absent in silence; a dangling link is damage and must say so.
		 */
		int lfd = sys_openat2(d->fd, rel, O_PATH | O_NOFOLLOW, how);

		if (lfd >= 0) {
			close(lfd);
			return -VGPU_EDANGLING;
		}
	}
	return fd;
}

static int open_in(const struct vgpu_sysdir *d, const char *rel, int flags)
{
	return open_how(d, rel, flags, false);
}

/*
 * open_in(), staying on @d's mount where that mount holds no device
 * (@d->nodev); *@nodev: whether it did, so that what opened is no device
 * either.  A path into another mount (a bind mount in a tree) opens as
 * usual, with *@nodev false.
 */
static int open_nodev(const struct vgpu_sysdir *d, const char *rel, int flags, bool *nodev)
{
	if (d->nodev) {
		int fd = open_how(d, rel, flags, true);

		if (fd != -EXDEV) {
			*nodev = true;
			return fd;
		}
	}
	*nodev = false;
	return open_in(d, rel, flags);
}

static int sysdir_openv(const struct vgpu_sysdir *parent, struct vgpu_sysdir *d, const char *fmt,
			va_list ap)
{
	char rel[VGPU_PATH_MAX];
	int r = vformat(rel, sizeof(rel), fmt, ap), fd;
	bool nodev;

	if (r < 0)
		return r;
	fd = open_nodev(parent, rel, O_RDONLY | O_DIRECTORY, &nodev);
	if (fd < 0)
		return fd;
	d->fs = parent->fs;
	d->fd = fd;
	d->is_root = false;
	/* on the parent's device-free mount it stays one; else ask once per directory */
	d->nodev = nodev || (!parent->fs->no_openat2 && mount_nodev(fd));
	if (vgpu_path_join(d->path, sizeof(d->path), parent->path, rel) < 0) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return 0;
}

int vgpu_sysdir_open(struct vgpu_sysfs *fs, struct vgpu_sysdir *d, const char *fmt, ...)
{
	struct vgpu_sysdir root;
	va_list ap;
	int r;

	vgpu_sysdir_root(fs, &root);
	va_start(ap, fmt);
	r = sysdir_openv(&root, d, fmt, ap);
	va_end(ap);
	return r;
}

int vgpu_sysdir_open_at(const struct vgpu_sysdir *parent, struct vgpu_sysdir *d, const char *fmt,
			...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sysdir_openv(parent, d, fmt, ap);
	va_end(ap);
	return r;
}

void vgpu_sysdir_close(struct vgpu_sysdir *d)
{
	if (d->fs && !d->is_root && d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

const char *vgpu_sysdir_show(const struct vgpu_sysdir *d, const char *rel, char *buf, size_t len)
{
	const char *root = d->fs->root;
	bool slash_root = strcmp(root, "/") == 0;

	snprintf(buf, len, "%s%s%s%s%s", slash_root ? "" : root, *d->path ? "/" : "", d->path,
		 rel && *rel ? "/" : "", rel ? rel : "");
	if (!*buf)
		snprintf(buf, len, "%s", root);
	return buf;
}

/*
 * A file open for reading.  @typed: fstat() said it is a regular file.
 * Otherwise it was opened where no device can be (see mount_nodev()) and
 * its first read says what it is: pread() fails on a directory (EISDIR)
 * and on a FIFO (ESPIPE, reading nothing from it); only such a failure
 * costs an fstat().
 */
struct reader {
	int fd;
	bool typed;
	bool stream; /* a regular file that cannot pread(): read() it */
	off_t off;
};

/*
 * Open a regular file for reading without ever blocking or reading a
 * FIFO or a device: O_NONBLOCK, and an fstat() unless no device can be
 * there.  The caller closes @rd->fd.
 */
static int open_read(const struct vgpu_sysdir *d, const char *rel, struct reader *rd)
{
	struct stat st;
	bool nodev;
	int fd = open_nodev(d, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &nodev);

	if (fd < 0)
		return fd;
	if (!nodev && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		int err = S_ISDIR(st.st_mode) ? -EISDIR : -VGPU_ENOTREG;

		close(fd);
		return err;
	}
	*rd = (struct reader){ .fd = fd, .typed = !nodev };
	return 0;
}

/* Up to @len bytes at @rd's offset: how many (0 at the end), or -errno. */
static ssize_t reader_read(struct reader *rd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = rd->stream ? read(rd->fd, buf, len) : pread(rd->fd, buf, len, rd->off);
		struct stat st;
		int err;

		if (n >= 0) {
			rd->off += n;
			return n;
		}
		err = errno;
		if (err == EINTR)
			continue;
		if (!rd->typed) {
			/* the first read of a file no fstat() has seen: what is it? */
			if (err == EISDIR)
				return -EISDIR;
			if (fstat(rd->fd, &st) < 0)
				return -errno;
			if (!S_ISREG(st.st_mode))
				return S_ISDIR(st.st_mode) ? -EISDIR : -VGPU_ENOTREG;
			rd->typed = true;
		}
		/* a regular file without pread() (a stream-like procfs file) */
		if (err == ESPIPE && !rd->stream && rd->off == 0) {
			rd->stream = true;
			continue;
		}
		return -err;
	}
}

static int read_str(const struct vgpu_sysdir *d, const char *rel, char *buf, size_t len)
{
	VGPU_AUTOCLOSE int fd = -1;
	struct reader rd;
	ssize_t n;
	int r = open_read(d, rel, &rd);

	if (r < 0)
		return r;
	fd = rd.fd;
	/*
	 * sysfs hands out a whole attribute in one read; a short read means
	 * end of file for regular files too, so only a full buffer costs a
	 * second read to tell "exactly full" from "too long".
	 */
	n = reader_read(&rd, buf, len - 1);
	if (n < 0)
		return (int)n;
	if ((size_t)n == len - 1) {
		char c;
		ssize_t m = reader_read(&rd, &c, 1);

		if (m < 0)
			return (int)m;
		if (m > 0)
			return -EFBIG;
	}
	/* trailing NULs too: some dumps of real machines pad attributes with one */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '\0'))
		n--;
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n))
		return -EINVAL; /* an attribute is text: a NUL inside means garbage */
	return 0;
}

#define FORMAT_REL(rel, fmt)                                                                       \
	char rel[VGPU_PATH_MAX];                                                                   \
	do {                                                                                       \
		va_list ap_;                                                                       \
		int r_;                                                                            \
		va_start(ap_, fmt);                                                                \
		r_ = vformat(rel, sizeof(rel), fmt, ap_);                                          \
		va_end(ap_);                                                                       \
		if (r_ < 0)                                                                        \
			return r_;                                                                 \
	} while (0)

int vgpu_sysfs_read_str(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
{
	FORMAT_REL(rel, fmt);
	return read_str(d, rel, buf, len);
}

int vgpu_sysfs_read_long(const struct vgpu_sysdir *d, long *out, long min, long max,
			 const char *fmt, ...)
{
	char buf[64];
	long v;
	int r;

	FORMAT_REL(rel, fmt);
	r = read_str(d, rel, buf, sizeof(buf));
	if (r == -EFBIG)
		return -VGPU_ERANGE_VALUE; /* 64 digits is no attribute's number */
	if (r == 0)
		r = vgpu_parse_long(buf, &v);
	if (r == -ERANGE || (r == 0 && (v < min || v > max)))
		return -VGPU_ERANGE_VALUE;
	if (r == 0)
		*out = v;
	return r;
}

int vgpu_sysfs_read_hex(const struct vgpu_sysdir *d, unsigned long *out, unsigned long max,
			const char *fmt, ...)
{
	char buf[64];
	unsigned long v;
	int r;

	FORMAT_REL(rel, fmt);
	r = read_str(d, rel, buf, sizeof(buf));
	if (r == -EFBIG)
		return -VGPU_ERANGE_VALUE;
	if (r == 0)
		r = vgpu_parse_hex(buf, &v);
	if (r == -ERANGE || (r == 0 && v > max))
		return -VGPU_ERANGE_VALUE;
	if (r == 0)
		*out = v;
	return r;
}

/* The longest cpulist/cpumask of VGPU_MAX_CPUS CPUs fits; larger files are damage. */
#define CPULIST_FILE_MAX (VGPU_CPULIST_LEN + 64)

static int read_cpus(const struct vgpu_sysdir *d, const char *rel, struct vgpu_cpuset *out,
		     int (*parse)(const char *, struct vgpu_cpuset *))
{
	VGPU_AUTOFREE char *buf = vgpu_xmalloc(CPULIST_FILE_MAX);
	struct vgpu_cpuset s;
	int r = read_str(d, rel, buf, CPULIST_FILE_MAX);

	if (r == 0)
		r = parse(buf, &s);
	if (r == -ERANGE)
		r = -VGPU_ERANGE_VALUE;
	if (r == 0)
		*out = s;
	return r;
}

int vgpu_sysfs_read_cpulist(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...)
{
	FORMAT_REL(rel, fmt);
	return read_cpus(d, rel, out, vgpu_cpulist_parse);
}

int vgpu_sysfs_read_cpumask(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...)
{
	FORMAT_REL(rel, fmt);
	return read_cpus(d, rel, out, vgpu_cpumask_parse);
}

static int read_all(struct reader *rd, size_t cap, char **out, size_t *len_out)
{
	VGPU_AUTOFREE char *buf = NULL;
	size_t size = 4096, len = 0;

	buf = vgpu_xmalloc(size);
	for (;;) {
		ssize_t n;

		/* full: grow, even at the cap, to tell "exactly @cap bytes" from "more" */
		if (size - len < 2) {
			size *= 2;
			buf = vgpu_xrealloc(buf, size);
		}
		n = reader_read(rd, buf + len, size - len - 1);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > cap)
			return -EFBIG;
	}
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = vgpu_steal_ptr(&buf);
	return 0;
}

int vgpu_sysfs_read_file(const struct vgpu_sysdir *d, size_t cap, char **out, size_t *len,
			 const char *fmt, ...)
{
	VGPU_AUTOCLOSE int fd = -1;
	struct reader rd;
	int r;

	FORMAT_REL(rel, fmt);
	r = open_read(d, rel, &rd);
	if (r < 0)
		return r;
	fd = rd.fd;
	return read_all(&rd, cap, out, len);
}

int vgpu_sysfs_read_tail(const struct vgpu_sysdir *d, size_t cap, char **out, size_t *len,
			 const char *fmt, ...)
{
	VGPU_AUTOCLOSE int fd = -1;
	VGPU_AUTOFREE char *buf = NULL;
	struct reader rd;
	struct stat st;
	size_t n = 0;
	int r;

	FORMAT_REL(rel, fmt);
	r = open_read(d, rel, &rd);
	if (r < 0)
		return r;
	fd = rd.fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > cap)
		rd.off = st.st_size - (off_t)cap; /* a log that grows on is read to here */
	buf = vgpu_xmalloc(cap + 1);
	while (n < cap) {
		ssize_t k = reader_read(&rd, buf + n, cap - n);

		if (k < 0)
			return (int)k;
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	*out = vgpu_steal_ptr(&buf);
	return 0;
}

/* An O_PATH fd on the entry itself (the link, not its target). */
static int open_entry(const struct vgpu_sysdir *d, const char *rel, bool follow)
{
	return open_in(d, rel, O_PATH | (follow ? 0 : O_NOFOLLOW));
}

static int readlink_rel(const struct vgpu_sysdir *d, const char *rel, char *buf, size_t len)
{
	VGPU_AUTOCLOSE int fd = -1;
	ssize_t n;

	if (sysfs_one_component(rel)) {
		n = readlinkat(d->fd, rel, buf, len - 1);
		if (n < 0)
			return -errno; /* EINVAL: not a link */
	} else {
		fd = open_entry(d, rel, false);
		if (fd < 0)
			return fd;
		n = readlinkat(fd, "", buf, len - 1);
	}
	if (n < 0)
		return errno == ENOENT ? -EINVAL : -errno; /* ENOENT here: not a link */
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int vgpu_sysfs_readlink(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
{
	FORMAT_REL(rel, fmt);
	return readlink_rel(d, rel, buf, len);
}

int vgpu_sysfs_link_basename(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt,
			     ...)
{
	char target[VGPU_PATH_MAX * 2];
	const char *base;
	int r;

	FORMAT_REL(rel, fmt);
	r = readlink_rel(d, rel, target, sizeof(target));
	if (r < 0)
		return r;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= len)
		return !*base ? -EINVAL : -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

static int stat_rel(const struct vgpu_sysdir *d, const char *rel, struct stat *st, bool follow)
{
	VGPU_AUTOCLOSE int fd = -1;
	struct stat s;

	if (sysfs_one_component(rel)) {
		if (fstatat(d->fd, rel, &s, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		/* a link to follow is followed inside the jail, below */
		if (!follow || !S_ISLNK(s.st_mode)) {
			*st = s;
			return 0;
		}
	}
	fd = open_entry(d, rel, follow);
	if (fd < 0)
		return fd;
	return fstat(fd, st) < 0 ? -errno : 0;
}

int vgpu_sysfs_stat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
{
	FORMAT_REL(rel, fmt);
	return stat_rel(d, rel, st, true);
}

int vgpu_sysfs_lstat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
{
	FORMAT_REL(rel, fmt);
	return stat_rel(d, rel, st, false);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * strverscmp() order, quicker where names share a prefix (nvidia-600,
 * nvidia-601, ...; 0000:10:00.4, 0000:10:00.5): past the common prefix, a
 * difference outside numbers is a byte difference, and one inside a
 * number that starts with 1-9 in the prefix is decided by the numbers'
 * lengths, then by the first different digit.  Everything else (numbers
 * with leading zeros, a number starting at the difference) is left to
 * strverscmp() itself.
 */
static int cmp_version(const void *pa, const void *pb)
{
	const char *a = *(char *const *)pa, *b = *(char *const *)pb;
	size_t i = 0, j, la, lb;

	while (a[i] == b[i]) {
		if (!a[i])
			return 0;
		i++;
	}
	for (j = i; j > 0 && is_digit(a[j - 1]); j--)
		;
	if (j == i) {
		if (!is_digit(a[i]) && !is_digit(b[i]))
			return (unsigned char)a[i] - (unsigned char)b[i];
		return strverscmp(a, b);
	}
	if (a[j] == '0')
		return strverscmp(a, b);
	for (la = i; is_digit(a[la]); la++)
		;
	for (lb = i; is_digit(b[lb]); lb++)
		;
	if (la != lb)
		return la < lb ? -1 : 1;
	return (unsigned char)a[i] - (unsigned char)b[i];
}

int vgpu_sysfs_list_dir(const struct vgpu_sysdir *d, struct vgpu_strv *out, const char *fmt, ...)
{
	VGPU_AUTOSTRV v = { 0 };
	VGPU_AUTOCLOSE int fd = -1;
	char buf[32768];
	ssize_t got;

	FORMAT_REL(rel, fmt);
	fd = open_in(d, *rel ? rel : ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	/* getdents64() straight into a buffer: opendir() adds an fstat() and an fcntl() */
	while ((got = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);

			off += e->d_reclen;
			if (e->d_name[0] == '.' &&
			    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
				continue;
			vgpu_strv_push(&v, vgpu_xstrdup(e->d_name));
		}
	}
	if (got < 0)
		return -errno;
	/* readdir order is not stable; strverscmp puts virtfn2 before virtfn10 */
	if (v.n > 1)
		qsort(v.items, v.n, sizeof(*v.items), cmp_version);
	vgpu_strv_clear(out);
	*out = v;
	memset(&v, 0, sizeof(v));
	return 0;
}

/* Open @rel for the one write: an existing regular file, never blocking on a FIFO. */
static int open_write(const struct vgpu_sysdir *d, const char *rel)
{
	int fd = open_in(d, rel, O_WRONLY | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -VGPU_ENOTREG;
	}
	return fd;
}

static int write_once(int fd, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;

	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int vgpu_sysfs_write(const struct vgpu_sysdir *d, const char *value, const char *fmt, ...)
{
	VGPU_AUTOCLOSE int fd = -1;

	FORMAT_REL(rel, fmt);
	fd = open_write(d, rel);
	if (fd < 0)
		return fd;
	return write_once(fd, value);
}

/* Close every descriptor but @a and @b: a child must not keep its parent's flocks. */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		(void)syscall(SYS_close_range, 3U, (unsigned)lo - 1, 0U);
	if (hi > lo + 1)
		(void)syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0U);
	(void)syscall(SYS_close_range, (unsigned)hi + 1, ~0U, 0U);
}

int vgpu_sysfs_write_bounded(const struct vgpu_sysdir *d, const char *value, unsigned wait_ms,
			     const char *fmt, ...)
{
	VGPU_AUTOCLOSE int fd = -1;
	int pipefd[2], err = -EIO;
	struct pollfd pfd;
	pid_t pid;

	FORMAT_REL(rel, fmt);
	fd = open_write(d, rel);
	if (fd < 0)
		return fd;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		/*
		 * The write, alone: no lock, no ticket, no terminal signal (a
		 * Ctrl-C must not cut a driver's remove short); the parent may
		 * be gone by the time the driver returns.
		 */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* nor the caller's stdout: a reader (libvirt, a pipe) waits for its end */
		for (int i = 0; null >= 0 && i < 3; i++)
			(void)dup2(null, i);
		close_all_but(fd, pipefd[1]);
		(void)setsid();
		err = write_once(fd, value);
		(void)!write(pipefd[1], &err, sizeof(err));
		_exit(0);
	}
	close(pipefd[1]);
	pfd = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	for (uint64_t end = vgpu_monotonic_ms() + wait_ms;;) {
		uint64_t now = vgpu_monotonic_ms();
		int n = poll(&pfd, 1, now < end ? (int)(end - now) : 0);

		if (n > 0 && read(pipefd[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
			err = -EIO; /* the child died before it could say */
		if (n > 0 || (n == 0 && now >= end) || (n < 0 && errno != EINTR))
			break;
	}
	close(pipefd[0]);
	if (pfd.revents) {
		(void)waitpid(pid, NULL, 0);
		return err;
	}
	return -EINPROGRESS; /* the child goes on; init reaps it if we end first */
}

int vgpu_file_read(struct vgpu_ctx *ctx, const char *path, size_t cap, char **out, size_t *len)
{
	VGPU_AUTOCLOSE int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int r;

	if (fd < 0)
		return vgpu_error(ctx, -errno, "cannot read '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return vgpu_error(ctx, -errno, "cannot read '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return vgpu_error(ctx, S_ISDIR(st.st_mode) ? -EISDIR : -VGPU_ENOTREG,
				  "cannot read '%s': %s", path,
				  S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
	struct reader rd = { .fd = fd, .typed = true };

	r = read_all(&rd, cap, out, len);
	if (r == -EFBIG)
		return vgpu_error(ctx, r, "'%s' is larger than %zu bytes", path, cap);
	if (r < 0)
		return vgpu_error(ctx, r, "cannot read '%s': %s", path, strerror(-r));
	return 0;
}

void vgpu_warn_file(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel, int err,
		    const char *tail)
{
	vgpu_warn_file_why(ctx, d, rel, vgpu_strerror(err), tail);
}

void vgpu_warn_file_why(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel,
			const char *cause, const char *tail)
{
	char show[VGPU_SHOW_LEN];

	vgpu_warn(ctx, "cannot read '%s': %s%s", VGPU_SHOW(d, rel, show), cause, tail ? tail : "");
}
