/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the files of the ground floor that open host files:
 * sysfs.c (the jail and the readers), sysfs-state.c (state files) and
 * sysfs-lock.c (locks).  Nothing else includes this.
 */
#ifndef VGPU_SYSFS_PRIV_H
#define VGPU_SYSFS_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct vgpu_sysfs {
	int rootfd;
	char *root; /* as given, for messages; "/" for the real host */
	bool no_openat2; /* old kernel on the real host: plain openat() */
	bool nodev; /* the root's mount holds no device (see mount_nodev()) */
	int lockfd; /* ROOT/run/vgpuctl/lock while held, else -1 (sysfs-lock.c) */
};

/*
 * One plain name ("driver", not "a/b", "." or ".."): looked up in the
 * directory itself, it cannot lead out of it, and an lstat() or a
 * readlink() needs no openat2() to stay inside.
 */
static inline bool sysfs_one_component(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* How long ago @st was last modified, in ms (its mtime against the wall clock). */
static inline int64_t sysfs_mtime_age_ms(const struct stat *st)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return ((int64_t)now.tv_sec - st->st_mtim.tv_sec) * 1000 +
	       (now.tv_nsec - st->st_mtim.tv_nsec) / 1000000;
}

#endif
