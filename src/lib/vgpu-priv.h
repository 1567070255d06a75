/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals shared by the library's modules and its unit tests. */
#ifndef VGPU_PRIV_H
#define VGPU_PRIV_H

#include <stdarg.h>
#include <sys/types.h>

#include "vgpu.h"

struct vgpu_host {
	int rootfd;
	char *root; /* as given, for messages; "/" for the real host */
	char err[512];
	vgpu_warn_fn warn;
	void *warn_data;
	struct vgpu_gpu *gpus;
	size_t n_gpus;
	bool scanned;
	struct vgpu_topology topo;
	bool have_topo;
};

/* error.c */
int vgpu_set_error(struct vgpu_host *h, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void vgpu_warn(struct vgpu_host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "ROOT/rel" for messages; "/rel" on the real host. */
const char *vgpu_path_show(const struct vgpu_host *h, const char *rel, char *buf, size_t len);

/* sysfs.c: every filesystem access goes through these, relative to the root. */
/* Read a whole small file into buf (NUL-terminated, trailing newlines stripped). */
int vgpu_read_str(struct vgpu_host *h, const char *rel, char *buf, size_t len);
/* Same, relative to an open directory (from vgpu_list_dir_at). */
int vgpu_read_str_at(int dirfd, const char *rel, char *buf, size_t len);
int vgpu_read_long(struct vgpu_host *h, const char *rel, long *out);
int vgpu_read_hex(struct vgpu_host *h, const char *rel, unsigned long *out);
int vgpu_read_cpulist(struct vgpu_host *h, const char *rel, struct vgpu_cpuset *out);
/* Read a whole file (up to 64 MiB); caller frees *out. */
int vgpu_read_file(struct vgpu_host *h, const char *rel, char **out, size_t *len_out);
/* Same relative to @dirfd; AT_FDCWD for a user's own file (a template). */
int vgpu_read_file_at(int dirfd, const char *path, char **out, size_t *len_out);
/* Basename of a symlink's target. */
int vgpu_link_basename(struct vgpu_host *h, const char *rel, char *buf, size_t len);
int vgpu_readlink(struct vgpu_host *h, const char *rel, char *buf, size_t len);
bool vgpu_exists(struct vgpu_host *h, const char *rel);
bool vgpu_is_dir(struct vgpu_host *h, const char *rel);
/* Sorted (strverscmp) entry names, without "." and ".."; caller frees with vgpu_strv_free. */
int vgpu_list_dir(struct vgpu_host *h, const char *rel, char ***out, size_t *n);
void vgpu_strv_free(char **v, size_t n);
/* Same, also handing out an fd of the directory (caller closes it). */
int vgpu_list_dir_at(struct vgpu_host *h, const char *rel, char ***out, size_t *n, int *dirfd_out);

/* util.c */
int vgpu_parse_long(const char *s, long *out);
int vgpu_parse_hex(const char *s, unsigned long *out);
char *vgpu_strip(char *s);
char *vgpu_xstrdup(const char *s);
char *vgpu_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* vgpu.c */
int vgpu_parse_creatable(const char *text, unsigned **ids, char ***names, size_t *n,
			 void (*bad_line)(void *data, unsigned lineno, const char *line),
			 void *data);
long vgpu_description_max_instance(const char *desc);

#endif
