// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * floor.c - the cost floor for `vgpuctl --sysroot ROOT types --per-vf --json`.
 *
 *   floor ROOT
 *
 * A bare loop that performs the file reads vgpuctl performs for that
 * command, with the same system calls (openat2() with the same flags and
 * resolve flags, fstatfs() where vgpuctl asks whether a directory's mount
 * can hold a device, fstat() of each file read where it can, pread() with
 * the same buffer sizes, fstatat() and readlinkat() of single names,
 * getdents64(), close()), in the same places, including the second
 * O_PATH | O_NOFOLLOW open that tells an absent file from a dangling link
 * after ENOENT, and nothing else: no model,
 * no sorting, no parsing beyond what it takes to decide which file comes
 * next (vendor, class, virtfn links, the GPU's minor, type ids seen on a
 * GPU), no output.  bench-floor.sh times it next to vgpuctl in one hyperfine
 * run and compares user time: what vgpuctl spends above this is its own
 * work.  `strace -c -f` on both must show the same counts for these calls.
 *
 * It follows the reading path for hosts like mksynth.sh's (mdev parents,
 * NUMA node known): it does not read the NUMA topology (read only when a
 * GPU's numa_node is -1) nor vendor-VFIO parents.  Errors are ignored as
 * vgpuctl ignores them (a missing optional file costs its failed open).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define NO_XDEV(nodev) ((nodev) ? RESOLVE_NO_XDEV : 0ULL)
#define NUM_BUF 64 /* vgpu_sysfs_read_long/_hex */
#define CPULIST_BUF (8192 / 2 * 6 + 64) /* read_cpus(): VGPU_CPULIST_LEN + 64 */
#define NAME_BUF 1024 /* VGPU_NAME_FILE_MAX */
#define MAX_PARENTS 256
#define MAX_TYPE_ID 4096

static int o2_once(int dfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)flags | O_CLOEXEC,
				.resolve = resolve };

	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/*
 * open_in(): an open that follows links and finds nothing is tried again
 * with O_PATH | O_NOFOLLOW, to tell an absent file from a dangling link.
 */
static int o2(int dfd, const char *path, int flags, unsigned long long resolve)
{
	int fd = o2_once(dfd, path, flags, resolve);

	if (fd < 0 && errno == ENOENT && !(flags & O_NOFOLLOW)) {
		int lfd = o2_once(dfd, path, O_PATH | O_NOFOLLOW, resolve);

		if (lfd >= 0)
			close(lfd);
		errno = ENOENT;
	}
	return fd;
}

/* mount_nodev(): can the mount of @fd hold no device (nodev, sysfs, proc)? */
static int mount_nodev(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return 0;
	return (sfs.f_flags & ST_NODEV) || sfs.f_type == SYSFS_MAGIC ||
	       sfs.f_type == PROC_SUPER_MAGIC;
}

static int root_nodev; /* vgpu_sysfs_open(): the root's mount */

/*
 * vgpu_sysdir_open() from the root: on a device-free root its mount only
 * (and then device-free itself), else an fstatfs() of the new directory.
 */
static int sysdir(int root, const char *rel, int *nodev)
{
	int fd = o2(root, rel, O_RDONLY | O_DIRECTORY, IN_ROOT | NO_XDEV(root_nodev));

	*nodev = 0;
	if (fd >= 0)
		*nodev = root_nodev || mount_nodev(fd);
	return fd;
}

/*
 * open_read(): below a device-free directory the mount is not left and
 * the first pread() types the file; elsewhere an fstat() first.
 */
static int open_read(int dfd, const char *rel, unsigned long long res, int nodev)
{
	struct stat st;
	int fd = o2(dfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, res | NO_XDEV(nodev));

	if (fd >= 0 && !nodev && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* read_str(): open, one pread (a second only when the buffer filled), close. */
static ssize_t rd(int dfd, const char *rel, unsigned long long res, int nodev, char *buf,
		  size_t len)
{
	ssize_t n;
	int fd = open_read(dfd, rel, res, nodev);

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	if (n == (ssize_t)len - 1) {
		char c;

		if (pread(fd, &c, 1, n) != 0)
			n = -1;
	}
	if (n >= 0)
		buf[n] = '\0';
	close(fd);
	return n;
}

/* read_all(): 4 KiB first, pread until end of file. */
static void rd_all(int dfd, const char *rel, unsigned long long res, int nodev, char *buf,
		   size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd = open_read(dfd, rel, res, nodev);

	buf[0] = '\0';
	if (fd < 0)
		return;
	while (len + 1 < cap && (n = pread(fd, buf + len, 4096 - 1 - len, (off_t)len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
}

/*
 * stat_rel(): a single name is fstatat(AT_SYMLINK_NOFOLLOW)ed (a link to
 * follow is not on this host), a longer path gets an O_PATH fd, fstat,
 * close; 1 directory, 0 other, -1 absent.
 */
static int st_rel(int dfd, const char *rel, int nofollow)
{
	struct stat st;
	int fd, r;

	if (!strchr(rel, '/'))
		return fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -1 : S_ISDIR(st.st_mode);
	fd = o2(dfd, rel, O_PATH | (nofollow ? O_NOFOLLOW : 0), BENEATH);
	if (fd < 0)
		return -1;
	r = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	close(fd);
	return r;
}

/*
 * readlink_rel(): readlinkat(dfd, name) for a single name, else an
 * O_PATH | O_NOFOLLOW fd, readlinkat(fd, ""), close.
 */
static int lnk(int dfd, const char *rel, char *buf, size_t len)
{
	ssize_t n;

	if (!strchr(rel, '/')) {
		n = readlinkat(dfd, rel, buf, len - 1);
	} else {
		int fd = o2(dfd, rel, O_PATH | O_NOFOLLOW, BENEATH);

		if (fd < 0)
			return -1;
		n = readlinkat(fd, "", buf, len - 1);
		close(fd);
	}
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* vgpu_sysfs_list_dir(): open the directory, getdents64 into one buffer, close. */
struct names {
	char buf[32768 * 4];
	size_t n, used;
	const char *v[4096];
};

static void ls(int dfd, const char *rel, unsigned long long res, struct names *out)
{
	char buf[32768];
	ssize_t got;
	int fd = o2(dfd, rel, O_RDONLY | O_DIRECTORY, res);

	out->n = out->used = 0;
	if (fd < 0)
		return;
	while ((got = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			size_t l = strlen(e->d_name) + 1;

			off += e->d_reclen;
			if (e->d_name[0] == '.' &&
			    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
				continue;
			if (out->n == 4096 || out->used + l > sizeof(out->buf))
				continue;
			memcpy(out->buf + out->used, e->d_name, l);
			out->v[out->n++] = out->buf + out->used;
			out->used += l;
		}
	}
	close(fd);
}

static char parents[MAX_PARENTS][16]; /* mdev parents, in reading order */
static int parent_gpu[MAX_PARENTS];
static size_t n_parents;

static void add_parent(const char *addr, int gpu)
{
	size_t l = strlen(addr);

	if (n_parents < MAX_PARENTS && l < sizeof(parents[0])) {
		memcpy(parents[n_parents], addr, l + 1);
		parent_gpu[n_parents++] = gpu;
	}
}

static void gpu(int root, int d, int dnodev, const char *addr, int gi)
{
	static char info[1 << 16], cpus[CPULIST_BUF];
	static struct names ents;
	char buf[NAME_BUF], rel[512];
	const char *minor;
	int mdev;

	rd(d, "numa_node", BENEATH, dnodev, buf, NUM_BUF);
	rd(d, "local_cpulist", BENEATH, dnodev, cpus, sizeof(cpus));
	lnk(d, "driver", buf, 512); /* read_driver(): VGPU_PATH_MAX */
	lnk(d, "iommu_group", buf, sizeof(buf));
	rd(d, "sriov_totalvfs", BENEATH, dnodev, buf, NUM_BUF);
	int numvfs = rd(d, "sriov_numvfs", BENEATH, dnodev, buf, NUM_BUF) > 0 ? atoi(buf) : 0;
	snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", addr);
	rd_all(root, rel, IN_ROOT, root_nodev, info, sizeof(info));
	minor = strstr(info, "Device Minor:");
	if (minor) {
		snprintf(rel, sizeof(rel), "proc/driver/nvidia/capabilities/gpu%d/mig",
			 atoi(minor + 13));
		ls(root, rel, IN_ROOT, &ents);
	}
	mdev = st_rel(d, "mdev_supported_types", 0);
	if (mdev == 1) {
		add_parent(addr, gi);
		return;
	}
	if (numvfs <= 0)
		return;
	ls(d, ".", BENEATH, &ents);
	for (size_t i = 0; i < ents.n; i++) {
		char target[1024];
		const char *base;
		int vd, vnodev;

		if (strncmp(ents.v[i], "virtfn", 6) != 0 ||
		    lnk(d, ents.v[i], target, sizeof(target)))
			continue;
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", base) >= (int)sizeof(rel))
			continue;
		vd = sysdir(root, rel, &vnodev);
		if (vd < 0)
			continue;
		rd(vd, "numa_node", BENEATH, vnodev, buf, NUM_BUF);
		lnk(vd, "iommu_group", buf, sizeof(buf));
		st_rel(vd, "nvidia/current_vgpu_type", 0);
		if (st_rel(vd, "mdev_supported_types", 0) == 1)
			add_parent(base, gi);
		close(vd);
	}
}

static void mdevs(int root)
{
	static struct names ents;
	char rel[512], target[1024];

	ls(root, "sys/bus/mdev/devices", IN_ROOT, &ents);
	for (size_t i = 0; i < ents.n; i++) {
		snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s", ents.v[i]);
		if (lnk(root, rel, target, sizeof(target)) == 0) {
			snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s/mdev_type", ents.v[i]);
			lnk(root, rel, target, sizeof(target));
		}
	}
}

static void types(int root)
{
	static unsigned char seen[MAX_TYPE_ID + 1];
	static struct names ents;
	int cur_gpu = -1;

	for (size_t p = 0; p < n_parents; p++) {
		char rel[512], buf[NAME_BUF];
		int td, tnodev;

		if (parent_gpu[p] != cur_gpu) {
			memset(seen, 0, sizeof(seen));
			cur_gpu = parent_gpu[p];
		}
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/mdev_supported_types",
			 parents[p]);
		td = sysdir(root, rel, &tnodev);
		if (td < 0)
			continue;
		ls(td, ".", BENEATH, &ents);
		for (size_t i = 0; i < ents.n; i++) {
			const char *dir = ents.v[i];
			unsigned long id;

			if (strncmp(dir, "nvidia-", 7) != 0)
				continue;
			id = strtoul(dir + 7, NULL, 10);
			if (id == 0 || id > MAX_TYPE_ID)
				continue;
			if (!seen[id]) {
				seen[id] = 1;
				snprintf(rel, sizeof(rel), "%s/name", dir);
				rd(td, rel, BENEATH, tnodev, buf, NAME_BUF);
				snprintf(rel, sizeof(rel), "%s/description", dir);
				rd(td, rel, BENEATH, tnodev, buf, NAME_BUF);
				snprintf(rel, sizeof(rel), "%s/device_api", dir);
				rd(td, rel, BENEATH, tnodev, buf, NAME_BUF);
			}
			snprintf(rel, sizeof(rel), "%s/available_instances", dir);
			rd(td, rel, BENEATH, tnodev, buf, NUM_BUF);
		}
		close(td);
	}
}

int main(int argc, char **argv)
{
	static struct names devs;
	char rel[512], buf[NUM_BUF];
	int root, fd, ngpu = 0, nodev;

	if (argc != 2) {
		fputs("usage: floor ROOT\n", stderr);
		return 2;
	}
	root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 1;
	}
	fd = o2(root, ".", O_PATH, RESOLVE_IN_ROOT);
	if (fd >= 0)
		close(fd);
	root_nodev = mount_nodev(root);
	ls(root, "sys/bus/pci/devices", IN_ROOT, &devs);
	for (size_t i = 0; i < devs.n; i++) {
		int d;

		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", devs.v[i]);
		d = sysdir(root, rel, &nodev);
		if (d < 0)
			continue;
		/* is_nvidia_gpu(): VFs out by physfn, then vendor, class, device */
		if (st_rel(d, "physfn", 1) < 0 &&
		    rd(d, "vendor", BENEATH, nodev, buf, NUM_BUF) > 0 &&
		    strncmp(buf, "0x10de", 6) == 0 &&
		    rd(d, "class", BENEATH, nodev, buf, NUM_BUF) > 0 &&
		    (strncmp(buf, "0x0300", 6) == 0 || strncmp(buf, "0x0302", 6) == 0) &&
		    rd(d, "device", BENEATH, nodev, buf, NUM_BUF) > 0)
			gpu(root, d, nodev, devs.v[i], ngpu++);
		close(d);
	}
	if (n_parents)
		mdevs(root);
	/* cli_read_host(): owner records and stored catalogues (absent on this host) */
	fd = sysdir(root, "var/lib/vgpuctl/owners", &nodev);
	if (fd >= 0)
		close(fd);
	fd = sysdir(root, "var/lib/vgpuctl/catalog", &nodev);
	if (fd >= 0)
		close(fd);
	types(root);
	close(root);
	return 0;
}
