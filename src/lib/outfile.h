/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * outfile.h - a file outside the host root that a command writes its result
 * to (-o OUT): an admin's domain definition, perhaps in a shared directory.
 *
 * The file is opened and checked before anything changes, written while the
 * change can still be undone when that is quick (a regular file: a new file
 * renamed over it), or after the locks are gone when its reader decides how
 * long a write takes (a FIFO, a device).  Root writes where other users may
 * write too, so the kernel's rules for sticky world-writable directories
 * (fs.protected_symlinks, fs.protected_regular, fs.protected_fifos) are kept
 * here as well, whatever the sysctls say: a link or a file another user owns
 * there is neither followed nor written.
 */
#ifndef VGPU_OUTFILE_H
#define VGPU_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "ctx.h"

struct vgpu_outfile {
	char *path; /* as given, for messages */
	int dirfd; /* the directory of the file finally written */
	char *base; /* its name there */
	int fd; /* a FIFO or a device, opened: written through, never replaced; else -1 */
	bool exists; /* a regular file is there: its mode, owner and xattrs are kept */
	struct stat st; /* the file's, when it exists */
};

/**
 * vgpu_outfile_open() - resolve and check where @path writes, before any change.
 * @ctx: where errors go ("cannot write 'PATH': why")
 * @path: the file, relative to the working directory or absolute
 * @of: filled in; close with vgpu_outfile_close() whatever the result
 *
 * A symlink is followed (up to 40) unless it sits in a sticky world-writable
 * directory and neither the caller nor the directory's owner owns it; a
 * regular file, a FIFO or a device in such a directory is refused unless the
 * caller or the directory's owner owns it.  A directory is refused, and a
 * FIFO nobody reads is refused at once (it would block).
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_outfile_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_outfile *of);
/**
 * vgpu_outfile_through() - whether a write may wait on a reader (FIFO, device).
 * @of: from vgpu_outfile_open()
 * Return: true when the write should come after every lock is released.
 */
bool vgpu_outfile_through(const struct vgpu_outfile *of);
/**
 * vgpu_outfile_write() - write @data to the file checked by vgpu_outfile_open().
 * @ctx: where errors go
 * @of: the opened file
 * @data: the text
 * @len: its length
 *
 * A regular file is replaced atomically by a new one that gets the old
 * one's mode, owner, ACL and extended attributes (an attribute that cannot
 * be set fails the write and leaves the file as it was); where the file is
 * a mount point (a bind-mounted file) and cannot be renamed over, it is
 * rewritten in place.  A FIFO or a device is written through.
 * Return: 0 or -errno with a message in @ctx.
 */
int vgpu_outfile_write(struct vgpu_ctx *ctx, struct vgpu_outfile *of, const char *data, size_t len);
/**
 * vgpu_outfile_close() - free what vgpu_outfile_open() holds (idempotent).
 * @of: the file, after vgpu_outfile_open() (whatever it returned)
 */
void vgpu_outfile_close(struct vgpu_outfile *of);
/**
 * vgpu_file_replace() - open, check and write a user's file in one call
 * (vgpu_outfile_open(), then vgpu_outfile_write()).
 * @ctx: where errors go
 * @path: the file, as the user gave it (not below the root)
 * @data: the new contents
 * @len: the length of @data
 * Return: 0 or -errno with "cannot write 'PATH': cause" in @ctx (-EISDIR
 * for a directory, -EPIPE for a FIFO nobody reads, -EACCES for another
 * user's link or file in a shared sticky directory).
 */
int vgpu_file_replace(struct vgpu_ctx *ctx, const char *path, const char *data, size_t len);

#endif
