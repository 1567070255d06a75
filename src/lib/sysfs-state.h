/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs-state.h - state files of our own below the root: owner records,
 * type catalogues, run notes.  Directories are made on demand; a file is
 * replaced atomically (temporary file, fsync, rename, fsync of the
 * directory), so a crash leaves the old file or the new one, and the
 * temporaries of killed writers are removed by the next writer.
 */
#ifndef VGPU_SYSFS_STATE_H
#define VGPU_SYSFS_STATE_H

#include <stddef.h>
#include <sys/stat.h>

#include "ctx.h"
#include "sysfs.h"

/**
 * vgpu_sysfs_mkdirs() - create the directory @rel below the root and its
 * missing parents (mode 0755), then open it into @d.
 * @fs: the host root
 * @d: the directory, opened on success
 * @rel: the directory's path below the root (an absolute path is VGPU_EESCAPE)
 * Return: 0 or -errno, no message; close @d with vgpu_sysdir_close().
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
 * vgpu_sysfs_replace() - make the file @name in @d hold @data, atomically.
 * @d: the directory
 * @name: the file's name, one path component
 * @data: the new contents
 * @len: the length of @data
 *
 * A temporary file is written, fsync()ed and renamed over @name, then the
 * directory is fsync()ed.  A crash leaves the old or the new file, never a
 * torn one.  The new file has mode 0644.  Temporary files that killed
 * writers left in @d (".NAME.PID.tmp" whose PID is gone) are removed after.
 * Return: 0 or -errno, no message (nothing changed; -EINVAL: @name is not one
 * component).
 */
int vgpu_sysfs_replace(const struct vgpu_sysdir *d, const char *name, const char *data, size_t len);
/**
 * vgpu_sysfs_unlink() - remove the file @name (one component) from @d and
 * fsync() the directory; temporary files of killed writers go too (see vgpu_sysfs_replace()).
 * @d: the directory
 * @name: the file's name, one path component
 * Return: 0, -ENOENT or -errno, no message (-EINVAL: @name is not one component).
 */
int vgpu_sysfs_unlink(const struct vgpu_sysdir *d, const char *name);
/**
 * vgpu_write_all() - write all of @data to @fd, through short writes and EINTR.
 * @fd: an open file
 * @data: the bytes
 * @len: how many
 * Return: 0 or -errno (-EIO: the file took nothing).
 */
int vgpu_write_all(int fd, const char *data, size_t len);
/**
 * vgpu_replace_at() - write @data to a new file in @dirfd and rename it over
 * @name, fsynced: readers see the old file or the new one, never a part.
 * @dirfd: the directory
 * @name: one path component
 * @data: the new contents
 * @len: the length of @data
 * @keep: the replaced file's stat: the new file gets its mode and owner; or NULL (0644)
 * @attrs_from: an fd of the replaced file whose extended attributes (ACL,
 * security label, user.*) the new file gets, or -1
 * Return: 0 or -errno; on failure nothing is left behind and @name is untouched.
 */
int vgpu_replace_at(int dirfd, const char *name, const char *data, size_t len,
		    const struct stat *keep, int attrs_from);

#endif
