/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs.h - root-aware file access: the only code that opens, reads or
 * writes the filesystem.
 *
 * A struct vgpu_sysfs holds one directory fd on the host's root (--sysroot,
 * default "/").  Every path is relative and is resolved inside that root
 * with openat2(RESOLVE_IN_ROOT): ".." and symlinks, absolute or relative,
 * never leave it, so a fixture tree (or a host tree a hook is pointed at)
 * is a jail.  A struct vgpu_sysdir is a directory below the root opened
 * once (a PCI device, a type directory); paths relative to it resolve
 * beneath it (RESOLVE_BENEATH) and fail with VGPU_EESCAPE if they would
 * leave it.
 *
 * Reads open with O_NONBLOCK and refuse anything but a regular file
 * (VGPU_ENOTREG): a FIFO or a device planted in a tree can never block or
 * stream.  Every read is bounded.  Missing files return -ENOENT; the caller
 * decides whether the attribute is optional.
 */
#ifndef VGPU_SYSFS_H
#define VGPU_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "util.h"

#define VGPU_PATH_MAX 512

struct vgpu_sysfs;

/**
 * vgpu_sysfs_open() - open the host rooted at @sysroot (NULL = the real host "/").
 * An empty @sysroot is refused (it is a mistake, not "/").
 * Return: 0 or -errno with a message in @ctx; caller frees *out.
 */
int vgpu_sysfs_open(struct vgpu_ctx *ctx, const char *sysroot, struct vgpu_sysfs **out);
/** vgpu_sysfs_free() - close the root (NULL is fine). */
void vgpu_sysfs_free(struct vgpu_sysfs *fs);
VGPU_DEFINE_AUTOPTR(sysfs, struct vgpu_sysfs, vgpu_sysfs_free)
/* The root as given (no trailing slash), "/" for the real host. */
const char *vgpu_sysfs_root(const struct vgpu_sysfs *fs);

/* A directory below the root: its fd, its path relative to the root. */
struct vgpu_sysdir {
	struct vgpu_sysfs *fs;
	int fd; /* the root's fd for the root itself */
	bool is_root;
	char path[VGPU_PATH_MAX]; /* relative to the root, "" for the root */
};

/* The root itself as a directory; nothing to close. */
void vgpu_sysdir_root(struct vgpu_sysfs *fs, struct vgpu_sysdir *d);
/**
 * vgpu_sysdir_open() - open the directory at a root-relative path.
 * Return: 0 or -errno; close with vgpu_sysdir_close().
 */
int vgpu_sysdir_open(struct vgpu_sysfs *fs, struct vgpu_sysdir *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, below another open directory (@parent); the path stays root-relative for messages. */
int vgpu_sysdir_open_at(const struct vgpu_sysdir *parent, struct vgpu_sysdir *d, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));
/** vgpu_sysdir_close() - close a directory from vgpu_sysdir_open*() (idempotent). */
void vgpu_sysdir_close(struct vgpu_sysdir *d);
#define VGPU_AUTOSYSDIR __attribute__((cleanup(vgpu_sysdir_close))) struct vgpu_sysdir

/*
 * "ROOT/dir/rel" as a user should read it in a message ("/sys/..." on the
 * real host).  Returns @buf.
 */
const char *vgpu_sysdir_show(const struct vgpu_sysdir *d, const char *rel, char *buf, size_t len);
#define VGPU_SHOW_LEN (2 * VGPU_PATH_MAX + 64)
/* "ROOT/<d>/<rel>" for a message, into a char array @buf. */
#define VGPU_SHOW(d, rel, buf) vgpu_sysdir_show(d, rel, buf, sizeof(buf))
/**
 * vgpu_warn_file() - say that a host file is damaged: "cannot read
 * 'ROOT/<d>/<rel>': <cause><tail>" at LOG_WARNING, the one warning for
 * every damaged kernel file (readers skip what they cannot read).
 * @ctx: where the warning goes
 * @d: the directory @rel is below
 * @rel: the file, relative to @d
 * @err: the -errno of the failed read; its words are the cause
 * @tail: appended to the message (what follows from it), or NULL
 */
void vgpu_warn_file(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel, int err,
		    const char *tail);
/**
 * vgpu_warn_file_why() - vgpu_warn_file() with the cause in words.
 * @ctx: where the warning goes
 * @d: the directory @rel is below
 * @rel: the file, relative to @d
 * @cause: what is wrong with it ("not a count")
 * @tail: appended to the message, or NULL
 */
void vgpu_warn_file_why(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel,
			const char *cause, const char *tail);

/*
 * Readers: the path is a printf format relative to @d.  Return 0 or -errno
 * (-ENOENT missing, VGPU_EDANGLING a link to nothing, VGPU_EESCAPE leaving
 * @d or absolute, VGPU_ENOTREG not a regular file, -EISDIR a directory,
 * -EFBIG longer than the buffer or the cap, -EINVAL unparsable,
 * VGPU_ERANGE_VALUE out of range).  No context: the caller decides whether
 * a file is optional and words the message.  Out-parameters other than
 * string buffers are written only on success.
 */
/* Whole small file, trailing newlines stripped. */
int vgpu_sysfs_read_str(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A decimal number in [@min, @max]. */
int vgpu_sysfs_read_long(const struct vgpu_sysdir *d, long *out, long min, long max,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A hex number (0x optional) no larger than @max. */
int vgpu_sysfs_read_hex(const struct vgpu_sysdir *d, unsigned long *out, unsigned long max,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A kernel cpulist ("0-3,8"). */
int vgpu_sysfs_read_cpulist(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));
/* A kernel cpumask ("ff,00000000"), as nodeN/cpumap. */
int vgpu_sysfs_read_cpumask(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));
/* A whole file of up to @cap bytes, NUL-terminated; caller frees *out. */
int vgpu_sysfs_read_file(const struct vgpu_sysdir *d, size_t cap, char **out, size_t *len,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A symlink's target. */
int vgpu_sysfs_readlink(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The last component of a symlink's target. */
int vgpu_sysfs_link_basename(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt,
			     ...) __attribute__((format(printf, 4, 5)));
/* stat() following links inside the root. */
int vgpu_sysfs_stat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* lstat(): the entry itself. */
int vgpu_sysfs_lstat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Entry names without "." and "..", sorted with strverscmp; *out is replaced. */
int vgpu_sysfs_list_dir(const struct vgpu_sysdir *d, struct vgpu_strv *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_write() - the one write to the host: @value in a single write(2)
 * to an existing regular file (sysfs attributes take a value in one write).
 * Return: 0 or -errno (the driver's errno for a refused value; -ENXIO for a
 * FIFO nobody reads, VGPU_ENOTREG for one somebody does).
 */
int vgpu_sysfs_write(const struct vgpu_sysdir *d, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * vgpu_file_read() - a user's own file (a template, a domain given with --from):
 * a regular file of at most @cap bytes, read without blocking on a FIFO.
 * Return: 0 or -errno with "cannot read 'PATH': cause" in @ctx; caller frees *out.
 */
int vgpu_file_read(struct vgpu_ctx *ctx, const char *path, size_t cap, char **out, size_t *len);

/* ---- state files: our own records and lock below the root ----------------- */

/**
 * vgpu_sysfs_mkdirs() - create the directory @rel below the root and its
 * missing parents (mode 0755), then open it into @d.
 * Return: 0 or -errno; close @d with vgpu_sysdir_close().
 */
int vgpu_sysfs_mkdirs(struct vgpu_sysfs *fs, struct vgpu_sysdir *d, const char *rel);
/**
 * vgpu_sysfs_mkdirs_ctx() - vgpu_sysfs_mkdirs() that reports its own error.
 * @ctx: gets "cannot create 'ROOT/@rel': cause" on failure
 * @fs: the host root
 * @d: the directory, opened on success
 * @rel: the directory's path below the root
 * Return: 0 or -errno with a message in @ctx; close @d with vgpu_sysdir_close().
 */
int vgpu_sysfs_mkdirs_ctx(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_sysdir *d,
			  const char *rel);
/**
 * vgpu_sysfs_replace() - make the file @name in @d hold @data, atomically: a
 * temporary file is written, fsync()ed and renamed over @name, then the
 * directory is fsync()ed.  A crash leaves the old or the new file, never a
 * torn one.  @name is one path component.
 * Return: 0 or -errno (nothing changed).
 */
int vgpu_sysfs_replace(const struct vgpu_sysdir *d, const char *name, const char *data, size_t len);
/**
 * vgpu_sysfs_unlink() - remove the file @name (one component) from @d and
 * fsync() the directory.  Return: 0, -ENOENT or -errno.
 */
int vgpu_sysfs_unlink(const struct vgpu_sysdir *d, const char *name);
/**
 * vgpu_sysfs_lock() - take the host-wide lock ROOT/run/vgpuctl/lock
 * (flock(2), exclusive), waiting at most @timeout_ms for another holder.
 * Held until vgpu_sysfs_unlock() or vgpu_sysfs_free() (or process exit).
 * Return: 0 or -errno with a message in @ctx (-EWOULDBLOCK: still held).
 */
int vgpu_sysfs_lock(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned timeout_ms);
/** vgpu_sysfs_unlock() - release the lock (fine when not held). */
void vgpu_sysfs_unlock(struct vgpu_sysfs *fs);
/**
 * vgpu_file_replace() - a user's file (-o OUT) replaced atomically, like
 * vgpu_sysfs_replace().  Return: 0 or -errno with "cannot write 'PATH': cause".
 */
int vgpu_file_replace(struct vgpu_ctx *ctx, const char *path, const char *data, size_t len);
#define VGPU_LOCK_PATH "run/vgpuctl/lock"

#endif
