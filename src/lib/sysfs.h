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
 * stream.  Where a directory's mount cannot hold a device (a nodev mount,
 * sysfs, proc), a read stays on that mount (RESOLVE_NO_XDEV) and the
 * file's first pread() tells a directory (EISDIR) and a FIFO (ESPIPE,
 * nothing read from it) from a regular file; elsewhere every file is
 * fstat()ed before it is read.  Every read is bounded.  Missing files
 * return -ENOENT; the caller decides whether the attribute is optional.
 */
#ifndef VGPU_SYSFS_H
#define VGPU_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "util.h"

#define VGPU_PATH_MAX 512

struct vgpu_sysfs;

/**
 * vgpu_sysfs_open() - open the host rooted at @sysroot (NULL = the real host "/").
 * @ctx: where errors go
 * @sysroot: the root directory (--sysroot), or NULL for "/"; a trailing slash is dropped
 * @out: the opened root, on success
 *
 * An empty @sysroot is refused (it is a mistake, not "/").  A root other than
 * "/" needs openat2() (Linux 5.6); on an older kernel only "/" opens, with
 * plain openat().
 * Return: 0 or -errno with a message in @ctx (-ENOTDIR: not a directory,
 * -EINVAL: empty); caller frees *out with vgpu_sysfs_free().
 */
int vgpu_sysfs_open(struct vgpu_ctx *ctx, const char *sysroot, struct vgpu_sysfs **out);
/**
 * vgpu_sysfs_free() - close the root and release the host lock if held.
 * @fs: from vgpu_sysfs_open(), or NULL (nothing to do)
 */
void vgpu_sysfs_free(struct vgpu_sysfs *fs);
VGPU_DEFINE_AUTOPTR(sysfs, struct vgpu_sysfs, vgpu_sysfs_free)
/**
 * vgpu_sysfs_root() - the root as given, for messages.
 * @fs: the host root
 * Return: the root path without a trailing slash, "/" for the real host;
 * owned by @fs.
 */
const char *vgpu_sysfs_root(const struct vgpu_sysfs *fs);

/* A directory below the root: its fd, its path relative to the root. */
struct vgpu_sysdir {
	struct vgpu_sysfs *fs;
	int fd; /* the root's fd for the root itself */
	bool is_root;
	/*
	 * Its mount holds no device (nodev, sysfs, proc): reads that stay on
	 * it skip the per-file fstat() (false, the safe default, in a
	 * hand-made struct).
	 */
	bool nodev;
	char path[VGPU_PATH_MAX]; /* relative to the root, "" for the root */
};

/**
 * vgpu_sysdir_root() - the root itself as a directory; nothing to close.
 * @fs: the host root
 * @d: filled in: the root's fd, path "" (paths below it resolve inside the root)
 */
void vgpu_sysdir_root(struct vgpu_sysfs *fs, struct vgpu_sysdir *d);
/**
 * vgpu_sysdir_open() - open the directory at a root-relative path.
 * @fs: the host root
 * @d: the directory, filled in on success
 * @fmt: printf format of the path, relative to the root (an absolute path is VGPU_EESCAPE)
 * @...: arguments for @fmt
 * Return: 0 or -errno (-ENOENT, -ENOTDIR, -ENAMETOOLONG, VGPU_EDANGLING, ...), no
 * message; close @d with vgpu_sysdir_close().
 */
int vgpu_sysdir_open(struct vgpu_sysfs *fs, struct vgpu_sysdir *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysdir_open_at() - vgpu_sysdir_open() below another open directory.
 * @parent: the directory the path is relative to; the result may not leave it
 * @d: the directory, filled in on success; its path stays root-relative for messages
 * @fmt: printf format of the path, relative to @parent
 * @...: arguments for @fmt
 * Return: 0 or -errno (VGPU_EESCAPE if the path leaves @parent), no message;
 * close @d with vgpu_sysdir_close().
 */
int vgpu_sysdir_open_at(const struct vgpu_sysdir *parent, struct vgpu_sysdir *d, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysdir_close() - close a directory from vgpu_sysdir_open*() (idempotent).
 * @d: the directory; the root from vgpu_sysdir_root() is left open
 */
void vgpu_sysdir_close(struct vgpu_sysdir *d);
#define VGPU_AUTOSYSDIR __attribute__((cleanup(vgpu_sysdir_close))) struct vgpu_sysdir

/**
 * vgpu_sysdir_show() - "ROOT/dir/rel" as a user should read it in a message
 * ("/sys/..." on the real host).
 * @d: the directory
 * @rel: a path below @d, or NULL / "" for @d itself
 * @buf: where the text goes (truncated to fit)
 * @len: the size of @buf; VGPU_SHOW_LEN holds any path
 * Return: @buf.
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
/**
 * vgpu_sysfs_read_str() - read a whole small file, trailing newlines stripped.
 * @d: the directory the path is relative to
 * @buf: the text, NUL-terminated (also trailing CRs and NULs are stripped)
 * @len: the size of @buf, terminator included
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EFBIG: longer than @len - 1,
 * -EINVAL: a NUL inside the text).
 */
int vgpu_sysfs_read_str(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/**
 * vgpu_sysfs_read_long() - read a decimal number in [@min, @max].
 * @d: the directory the path is relative to
 * @out: the number, on success
 * @min: smallest value accepted
 * @max: largest value accepted
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a number,
 * VGPU_ERANGE_VALUE: outside [@min, @max] or too long to be a number).
 */
int vgpu_sysfs_read_long(const struct vgpu_sysdir *d, long *out, long min, long max,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/**
 * vgpu_sysfs_read_hex() - read a hex number (0x optional) no larger than @max.
 * @d: the directory the path is relative to
 * @out: the number, on success
 * @max: largest value accepted
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a hex number,
 * VGPU_ERANGE_VALUE: above @max or too long to be a number).
 */
int vgpu_sysfs_read_hex(const struct vgpu_sysdir *d, unsigned long *out, unsigned long max,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/**
 * vgpu_sysfs_read_cpulist() - read a kernel cpulist ("0-3,8").
 * @d: the directory the path is relative to
 * @out: the CPUs, on success
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a cpulist,
 * VGPU_ERANGE_VALUE: a CPU at or beyond VGPU_MAX_CPUS).
 */
int vgpu_sysfs_read_cpulist(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_read_cpumask() - read a kernel cpumask ("ff,00000000"), as nodeN/cpumap.
 * @d: the directory the path is relative to
 * @out: the CPUs, on success
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a cpumask,
 * VGPU_ERANGE_VALUE: a CPU at or beyond VGPU_MAX_CPUS).
 */
int vgpu_sysfs_read_cpumask(const struct vgpu_sysdir *d, struct vgpu_cpuset *out, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_read_file() - read a whole file of up to @cap bytes, NUL-terminated.
 * @d: the directory the path is relative to
 * @cap: the most bytes accepted; a longer file is -EFBIG
 * @out: the contents, on success; caller frees
 * @len: the length without the terminator, on success (NULL: not wanted)
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader; caller frees *out.
 */
int vgpu_sysfs_read_file(const struct vgpu_sysdir *d, size_t cap, char **out, size_t *len,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/**
 * vgpu_sysfs_read_tail() - read the last @cap bytes of a file (a log), NUL-terminated.
 * @d: the directory the path is relative to
 * @cap: the most bytes read: a longer file's first bytes are skipped (its
 *       first line then starts in the middle)
 * @out: the contents, on success; caller frees
 * @len: their length without the terminator, on success (NULL: not wanted)
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader; caller frees *out.
 */
int vgpu_sysfs_read_tail(const struct vgpu_sysdir *d, size_t cap, char **out, size_t *len,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/**
 * vgpu_sysfs_readlink() - read a symlink's target.
 * @d: the directory the path is relative to
 * @buf: the target, NUL-terminated
 * @len: the size of @buf
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a symlink,
 * -ENAMETOOLONG: the target does not fit @buf).
 */
int vgpu_sysfs_readlink(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/**
 * vgpu_sysfs_link_basename() - read the last component of a symlink's target
 * (a driver link's name, an IOMMU group's number).
 * @d: the directory the path is relative to
 * @buf: the component, NUL-terminated, on success
 * @len: the size of @buf
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-EINVAL: not a symlink or a target
 * ending in '/', -ENAMETOOLONG: does not fit @buf).
 */
int vgpu_sysfs_link_basename(const struct vgpu_sysdir *d, char *buf, size_t len, const char *fmt,
			     ...) __attribute__((format(printf, 4, 5)));
/**
 * vgpu_sysfs_stat() - stat() following links inside the root.
 * @d: the directory the path is relative to
 * @st: the status, on success
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader.
 */
int vgpu_sysfs_stat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_lstat() - lstat(): the entry itself, a symlink not followed.
 * @d: the directory the path is relative to
 * @st: the status, on success
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader.
 */
int vgpu_sysfs_lstat(const struct vgpu_sysdir *d, struct stat *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_list_dir() - the entry names of a directory, without "." and "..",
 * sorted with strverscmp (virtfn2 before virtfn10).
 * @d: the directory the path is relative to
 * @out: replaced by the names on success (its old contents are freed); caller
 *       clears it with vgpu_strv_clear()
 * @fmt: printf format of the path, relative to @d ("" for @d itself)
 * @...: arguments for @fmt
 * Return: 0 or -errno as for every reader (-ENOTDIR: not a directory).
 */
int vgpu_sysfs_list_dir(const struct vgpu_sysdir *d, struct vgpu_strv *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_write() - the one write to the host: @value in a single write(2)
 * to an existing regular file (sysfs attributes take a value in one write).
 * @d: the directory the path is relative to
 * @value: the text written, without a terminator
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: 0 or -errno, no message (the driver's errno for a refused value;
 * -ENXIO for a FIFO nobody reads, VGPU_ENOTREG for one somebody does; -EIO
 * for a short write).
 */
int vgpu_sysfs_write(const struct vgpu_sysdir *d, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_sysfs_write_bounded() - vgpu_sysfs_write() that waits at most @wait_ms
 * for the driver: the write is made by a child process that holds none of
 * the caller's files (no lock), and is left to finish on its own when the
 * driver takes longer (a vGPU's remove after its VM stopped can take many
 * seconds), so the caller can let its locks go.
 * @d: the directory the path is relative to
 * @value: the text written, without a terminator
 * @wait_ms: how long the caller waits for the driver
 * @fmt: printf format of the path, relative to @d
 * @...: arguments for @fmt
 * Return: as vgpu_sysfs_write(), or -EINPROGRESS when the write goes on
 * without the caller.
 */
int vgpu_sysfs_write_bounded(const struct vgpu_sysdir *d, const char *value, unsigned wait_ms,
			     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/**
 * vgpu_file_read() - a user's own file (a template, a domain given with --from):
 * a regular file of at most @cap bytes, read without blocking on a FIFO.
 * @ctx: where errors go
 * @path: the file, as the user gave it (not below the root)
 * @cap: the most bytes accepted (-EFBIG beyond)
 * @out: the contents, NUL-terminated, on success
 * @len: the length without the terminator, on success (NULL: not wanted)
 * Return: 0 or -errno with "cannot read 'PATH': cause" in @ctx; caller frees *out.
 */
int vgpu_file_read(struct vgpu_ctx *ctx, const char *path, size_t cap, char **out, size_t *len);

#endif
