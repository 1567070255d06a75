// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Root-aware file access: the only code that reads the host.  Every path
 * is relative to the host's root directory fd, so a fixture tree under
 * --sysroot is a whole host.  (Nothing writes to the host yet; the write
 * path arrives with assign/release.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "vgpu-priv.h"

int vgpu_host_open(const char *sysroot, struct vgpu_host **out, char **err_out)
{
	const char *root = sysroot && *sysroot ? sysroot : "/";
	struct vgpu_host *h;
	struct stat st;
	int fd;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err_out) {
			if (err == ENOTDIR || (stat(root, &st) == 0 && !S_ISDIR(st.st_mode)))
				*err_out = vgpu_asprintf("sysroot '%s' is not a directory", root);
			else
				*err_out = vgpu_asprintf("cannot open sysroot '%s': %s", root,
							 strerror(err));
		}
		return -err;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->rootfd = fd;
	h->root = vgpu_xstrdup(root);
	/* Drop a trailing slash so messages read ROOT/sys/... */
	for (size_t l = strlen(h->root); l > 1 && h->root[l - 1] == '/'; l--)
		h->root[l - 1] = '\0';
	*out = h;
	return 0;
}

const char *vgpu_host_root(const struct vgpu_host *h)
{
	return h->root;
}

static int open_rel(struct vgpu_host *h, const char *rel, int flags)
{
	int fd = openat(h->rootfd, rel, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int vgpu_read_str(struct vgpu_host *h, const char *rel, char *buf, size_t len)
{
	return vgpu_read_str_at(h->rootfd, rel, buf, len);
}

int vgpu_read_str_at(int dirfd, const char *rel, char *buf, size_t len)
{
	VGPU_AUTOCLOSE int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	/*
	 * sysfs hands out a whole attribute in one read; a short read means
	 * end of file for regular files too, so only a full buffer costs a
	 * second read to tell "exactly full" from "too long".
	 */
	n = read(fd, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1) {
		char c;
		ssize_t m = read(fd, &c, 1);

		if (m < 0)
			return -errno;
		if (m > 0)
			return -EFBIG;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return 0;
}

int vgpu_read_file(struct vgpu_host *h, const char *rel, char **out, size_t *len_out)
{
	return vgpu_read_file_at(h->rootfd, rel, out, len_out);
}

int vgpu_read_file_at(int dirfd, const char *path, char **out, size_t *len_out)
{
	VGPU_AUTOCLOSE int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	VGPU_AUTOFREE char *buf = NULL;
	size_t cap = 4096, len = 0;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *nb;

			if (cap >= (64u << 20))
				return -EFBIG;
			nb = realloc(buf, cap * 2);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = vgpu_steal_ptr(&buf);
	return 0;
}

int vgpu_read_long(struct vgpu_host *h, const char *rel, long *out)
{
	char buf[64];
	int r = vgpu_read_str(h, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	return vgpu_parse_long(buf, out);
}

int vgpu_read_hex(struct vgpu_host *h, const char *rel, unsigned long *out)
{
	char buf[64];
	int r = vgpu_read_str(h, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	return vgpu_parse_hex(buf, out);
}

int vgpu_read_cpulist(struct vgpu_host *h, const char *rel, struct vgpu_cpuset *out)
{
	char buf[8192];
	int r = vgpu_read_str(h, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	return vgpu_cpulist_parse(buf, out);
}

int vgpu_readlink(struct vgpu_host *h, const char *rel, char *buf, size_t len)
{
	ssize_t n = readlinkat(h->rootfd, rel, buf, len - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int vgpu_link_basename(struct vgpu_host *h, const char *rel, char *buf, size_t len)
{
	char target[4096];
	const char *base;
	int r = vgpu_readlink(h, rel, target, sizeof(target));

	if (r < 0)
		return r;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

bool vgpu_exists(struct vgpu_host *h, const char *rel)
{
	return faccessat(h->rootfd, rel, F_OK, 0) == 0;
}

bool vgpu_is_dir(struct vgpu_host *h, const char *rel)
{
	struct stat st;

	return fstatat(h->rootfd, rel, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_ver(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

void vgpu_strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int vgpu_list_dir(struct vgpu_host *h, const char *rel, char ***out, size_t *n_out)
{
	return vgpu_list_dir_at(h, rel, out, n_out, NULL);
}

int vgpu_list_dir_at(struct vgpu_host *h, const char *rel, char ***out, size_t *n_out,
		     int *dirfd_out)
{
	VGPU_AUTOCLOSE int fd = open_rel(h, rel, O_RDONLY | O_DIRECTORY);
	char **v = NULL;
	size_t n = 0, cap = 0;
	char buf[32768];
	ssize_t got;

	if (fd < 0)
		return fd;
	/*
	 * getdents64() straight into a buffer: opendir() would add an fstat()
	 * and an fcntl() per directory, and the caller may keep the fd to read
	 * entries relative to it (short path walks).
	 */
	while ((got = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);

			off += e->d_reclen;
			if (e->d_name[0] == '.' &&
			    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
				continue;
			if (n == cap) {
				char **nv;

				cap = cap ? cap * 2 : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv)
					goto fail_oom;
				v = nv;
			}
			v[n] = strdup(e->d_name);
			if (!v[n])
				goto fail_oom;
			n++;
		}
	}
	if (got < 0) {
		int err = -errno;

		vgpu_strv_free(v, n);
		return err;
	}
	/* readdir order is not stable; strverscmp puts virtfn2 before virtfn10. */
	if (n)
		qsort(v, n, sizeof(*v), cmp_ver);
	*out = v;
	*n_out = n;
	if (dirfd_out) {
		*dirfd_out = fd;
		fd = -1;
	}
	return 0;
fail_oom:
	vgpu_strv_free(v, n);
	return -ENOMEM;
}
