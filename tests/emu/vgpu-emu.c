// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpu-emu: test-only kernel and NVIDIA vGPU driver emulator.
 *
 * A FUSE passthrough of a fixture host tree (BACKING) in which the files that create and
 * free vGPUs behave like the kernel and NVIDIA's shipped driver: vendor-specific VFIO
 * current_vgpu_type, mdev create and remove, with creatable_vgpu_types and
 * available_instances kept up to date. Faults come from a control file outside the mount
 * and every mutating operation is journalled. Semantics, rule syntax and journal format:
 * tests/emu/README.md.
 */
#define FUSE_USE_VERSION 35

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define REL_MAX 512
#define MAX_TYPES 1024
#define MAX_GPUS 64
#define MAX_PARENTS 512
#define MAX_INSTS 512
#define MAX_CAT 128
#define MAX_GIS 16
#define MAX_ALIASES 1024
#define MAX_RULES 256
#define SYSFS_MAX 4095 /* a sysfs store sees at most PAGE_SIZE - 1 bytes */
#define VALUE_MAX 256 /* journal: longer values are cut */
#define UUID_LEN 36
#define HEADER "ID    : vGPU Name\n"

static int g_bfd = -1;
static char g_backing[PATH_MAX];
static char *g_control;
static int g_logfd = -1;
static long g_block_ms = 60000;
static bool g_board_types; /* --board-types */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_loglock = PTHREAD_MUTEX_INITIALIZER;
static int g_notes;

/* ------------------------------------------------------------------------------------ */
/* small helpers */

static void lock(void)
{
	/* a worker cancelled at unmount must not die holding the lock */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&g_lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&g_lock);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
	va_list ap;

	g_notes++;
	va_start(ap, fmt);
	fputs("vgpu-emu: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* snprintf that reports truncation: 0 or -ENAMETOOLONG */
__attribute__((format(printf, 3, 4))) static int pathf(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= n) {
		out[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

static void copy(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	if (l >= n)
		l = n - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* FUSE path to a path relative to the backing root ("." for the root) */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static bool top_is(const char *r, const char *top)
{
	size_t l = strlen(top);

	return !strncmp(r, top, l) && (r[l] == '/' || !r[l]);
}

static bool in_kernel_tree(const char *r)
{
	return top_is(r, "sys") || top_is(r, "proc");
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !fuse_interrupted())
		;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* whole small file of the backing tree, NUL-terminated; length or -errno */
static ssize_t slurp(const char *r, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t k = 0;
	int fd, e;

	fd = openat(g_bfd, r, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	while (len + 1 < n && (k = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)k;
	e = k < 0 ? -errno : 0;
	buf[len] = '\0';
	close(fd);
	if (e)
		return e;
	return len + 1 < n ? (ssize_t)len : -EFBIG;
}

/* replace a backing file's content in place (same inode: open handles see it) */
static int put(const char *r, const char *s, mode_t mode)
{
	char old[16384];
	size_t len = strlen(s);
	ssize_t k = slurp(r, old, sizeof(old));
	int fd, e = 0;

	if (k >= 0 && (size_t)k == len && !memcmp(old, s, len))
		return 0;
	fd = openat(g_bfd, r, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	if (len && write(fd, s, len) != (ssize_t)len)
		e = errno ? -errno : -EIO;
	close(fd);
	return e;
}

static bool exists(const char *r)
{
	struct stat st;

	return !fstatat(g_bfd, r, &st, AT_SYMLINK_NOFOLLOW);
}

static bool is_dir(const char *r)
{
	struct stat st;

	return !fstatat(g_bfd, r, &st, 0) && S_ISDIR(st.st_mode);
}

static bool is_reg(const char *r)
{
	struct stat st;

	return !fstatat(g_bfd, r, &st, 0) && S_ISREG(st.st_mode);
}

static int rm_rf(int dfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (!unlinkat(dfd, name, 0) || errno == ENOENT)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rm_rf(dirfd(d), de->d_name);
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR) ? -errno : 0;
}

/* canonical mount-relative form of a backing path (symlinks resolved, inside BACKING) */
static int canon(const char *r, char *out, size_t n)
{
	char abs[PATH_MAX], res[PATH_MAX];
	size_t bl = strlen(g_backing);

	if (pathf(abs, sizeof(abs), "%s/%s", g_backing, r) || !realpath(abs, res))
		return -ENOENT;
	if (strncmp(res, g_backing, bl) || (res[bl] && res[bl] != '/'))
		return -EXDEV;
	copy(out, n, res[bl] ? res + bl + 1 : ".");
	return 0;
}

/* shortest relative symlink target from directory FROM to TO (both canonical) */
static int relpath(const char *from, const char *to, char *out, size_t n)
{
	size_t i, c = 0, o = 0;
	const char *s;
	int up;

	/* c: the longest common prefix that ends at a component boundary of both */
	for (i = 0;; i++) {
		if ((!from[i] || from[i] == '/') && (!to[i] || to[i] == '/'))
			c = i;
		if (!from[i] || !to[i] || from[i] != to[i])
			break;
	}
	up = c == 0 && from[0] ? 1 : 0;
	for (s = from + c; *s; s++)
		up += *s == '/';
	for (s = to + c; *s == '/'; s++)
		;
	out[0] = '\0';
	while (up--) {
		if (o + 4 > n)
			return -ENAMETOOLONG;
		memcpy(out + o, "../", 4);
		o += 3;
	}
	if (!*s && o)
		out[--o] = '\0';
	if (o + strlen(s) + 1 > n)
		return -ENAMETOOLONG;
	strcpy(out + o, s);
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* errno names, kernel number parsing */

/* "EIO" for EIO: glibc's names (2.32+), a number for the rest */
static const char *errname(int e, char *buf, size_t n)
{
	const char *s;

	if (e < 0)
		e = -e;
	if (!e)
		return "0";
	s = strerrorname_np(e);
	if (s)
		return s;
	snprintf(buf, n, "%d", e);
	return buf;
}

static int errnum(const char *s)
{
	const char *name;
	char *end;
	long v;
	int e;

	for (e = 1; e < 4096; e++)
		if ((name = strerrorname_np(e)) && !strcmp(name, s))
			return e;
	v = strtol(s, &end, 10);
	return *s && !*end && v > 0 && v < 4096 ? (int)v : -1;
}

/* lib/kstrtox.c: _kstrtoull, kstrtoull, kstrtoll */
static int k_kstrtoull_(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long v = 0;
	unsigned int d, n = 0;
	bool over = false;

	if (base == 0) {
		base = 10;
		if (s[0] == '0' && tolower((unsigned char)s[1]) == 'x' &&
		    isxdigit((unsigned char)s[2]))
			base = 16;
		else if (s[0] == '0')
			base = 8;
	}
	if (base == 16 && s[0] == '0' && tolower((unsigned char)s[1]) == 'x')
		s += 2;
	for (;; s++, n++) {
		int c = tolower((unsigned char)*s);

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		if (v > (ULLONG_MAX - d) / base)
			over = true;
		v = v * base + d;
	}
	if (over)
		return -ERANGE;
	if (!n)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

static int k_kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	if (s[0] == '+')
		s++;
	return k_kstrtoull_(s, base, res);
}

static int k_kstrtoll(const char *s, unsigned int base, long long *res)
{
	unsigned long long t;
	int r;

	if (s[0] == '-') {
		r = k_kstrtoull_(s + 1, base, &t);
		if (r < 0)
			return r;
		if (t > (unsigned long long)LLONG_MAX + 1)
			return -ERANGE;
		*res = t == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)t;
		return 0;
	}
	r = k_kstrtoull(s, base, &t);
	if (r < 0)
		return r;
	if (t > (unsigned long long)LLONG_MAX)
		return -ERANGE;
	*res = (long long)t;
	return 0;
}

static bool uuid_valid(const char *s)
{
	int i;

	for (i = 0; i < UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

static bool uuid_name(const char *s)
{
	return strlen(s) == UUID_LEN && uuid_valid(s);
}

/* ------------------------------------------------------------------------------------ */
/* journal */

static void escape(const char *buf, size_t n, char *out, size_t outn)
{
	size_t i, o = 0;

	if (n && buf[n - 1] == '\n')
		n--;
	for (i = 0; i < n && o + 8 < outn; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (i == VALUE_MAX) {
			o += (size_t)snprintf(out + o, outn - o, "...");
			break;
		}
		if (c == '\\')
			o += (size_t)snprintf(out + o, outn - o, "\\\\");
		else if (c == '\n')
			o += (size_t)snprintf(out + o, outn - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(out + o, outn - o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, outn - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

__attribute__((format(printf, 2, 3))) static void journal(int res, const char *fmt, ...)
{
	char line[PATH_MAX * 2 + 4 * VALUE_MAX + 64], eb[16];
	va_list ap;
	int k;

	if (g_logfd < 0)
		return;
	va_start(ap, fmt);
	k = vsnprintf(line, sizeof(line) - 32, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k >= sizeof(line) - 32)
		k = (int)sizeof(line) - 33;
	k += snprintf(line + k, sizeof(line) - (size_t)k, " -> %s\n", errname(res, eb, sizeof(eb)));
	pthread_mutex_lock(&g_loglock);
	if (write(g_logfd, line, (size_t)k) != k)
		note("journal write failed: %s", strerror(errno));
	pthread_mutex_unlock(&g_loglock);
}

/* ------------------------------------------------------------------------------------ */
/* the vGPU model */

struct vtype {
	int id;
	char name[128];
	long fb; /* MiB, 0 unknown */
	int slices; /* MIG-backed: GPU slices; 0 time-sliced */
	int maxinst; /* per GPU, from the mdev description; 0 unknown */
	int per_gi; /* MIG-backed: vGPUs one GI takes (--per-gi, else derived); 0 unknown */
	bool per_gi_opt; /* per_gi given with --per-gi */
	int mixed_max; /* time-sliced, per GPU in mixed-size mode (--mixed-max); 0 none */
	bool named; /* the name parsed */
};

struct gi {
	int id;
	int size; /* GPU slices; -1 unknown */
	int type; /* the type of the vGPUs it holds (one type per GI); 0 while free */
	int n; /* vGPUs on it */
};

struct gpu {
	char dir[REL_MAX]; /* the PF, canonical */
	char devid[32]; /* vendor:device */
	int minor;
	bool vfio;
	bool had_vgpu; /* at mount */
	bool header; /* creatable lists carry "ID : vGPU Name" */
	bool mig;
	int total_slices;
	long total_fb; /* MiB, 0 = no limit */
	bool hetero; /* mixed-size mode: the NVML stand-in's hetero-<PF> says 1 */
	struct stat hetero_st; /* that file when last read (st_ino 0: missing) */
	bool gi_mode;
	struct gi gi[MAX_GIS];
	int ngi;
	int next_gi;
	int cat[MAX_CAT]; /* catalogue, ascending type ids */
	int ncat;
	int offered[MAX_CAT]; /* creatable somewhere at mount */
	int noffered;
};

struct parent {
	char dir[REL_MAX]; /* canonical */
	int gpu;
	bool vfio;
	bool sriov; /* a VF: one vGPU at most */
	int types[MAX_CAT]; /* mdev: catalogued nvidia-N dirs */
	int ntypes;
};

struct inst {
	bool live;
	bool removing;
	int parent;
	int type;
	int gi; /* -1: none */
	char uuid[UUID_LEN + 1]; /* mdev; "" for vendor VFIO */
};

struct alias {
	char dir[REL_MAX];
	char alias[REL_MAX];
};

static struct vtype types[MAX_TYPES];
static int ntypes;
static struct gpu gpus[MAX_GPUS];
static int ngpus;
static struct parent parents[MAX_PARENTS];
static int nparents;
static struct inst insts[MAX_INSTS];
static int ninsts;
static struct alias aliases[MAX_ALIASES];
static int naliases;

static struct vtype *type_get(int id)
{
	int i;

	for (i = 0; i < ntypes; i++)
		if (types[i].id == id)
			return &types[i];
	return NULL;
}

/*
 * NVIDIA's grammar: [VENDOR ]<GPU>-[<G>-]<GB><series>...; the short name is the last word.
 * <G> makes it MIG-backed (G slices).
 */
static bool parse_name(const char *name, int *slices, long *fb)
{
	const char *s = strrchr(name, ' ');
	const char *q;
	long gb = 0;

	s = s ? s + 1 : name;
	for (q = s; isupper((unsigned char)*q) || isdigit((unsigned char)*q); q++)
		;
	if (q == s || *q != '-')
		return false;
	q++;
	*slices = 0;
	if (q[0] >= '1' && q[0] <= '9' && q[1] == '-') {
		*slices = q[0] - '0';
		q += 2;
	}
	if (!isdigit((unsigned char)*q))
		return false;
	while (isdigit((unsigned char)*q) && gb < 100000)
		gb = gb * 10 + (*q++ - '0');
	if (!*q || !strchr("ABCQ", *q))
		return false;
	*fb = gb * 1024;
	return true;
}

static struct vtype *type_add(int id, const char *name)
{
	struct vtype *t = type_get(id);

	if (!t) {
		if (ntypes == MAX_TYPES)
			return NULL;
		t = &types[ntypes++];
		memset(t, 0, sizeof(*t));
		t->id = id;
	}
	if (name && !t->named) {
		copy(t->name, sizeof(t->name), name);
		t->named = parse_name(name, &t->slices, &t->fb);
	}
	return t;
}

static bool ids_has(const int *ids, int n, int id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static void ids_add(int *ids, int *n, int id)
{
	int i;

	if (ids_has(ids, *n, id) || *n == MAX_CAT)
		return;
	for (i = *n; i > 0 && ids[i - 1] > id; i--)
		ids[i] = ids[i - 1];
	ids[i] = id;
	(*n)++;
}

static void alias_add(const char *dir, const char *alias)
{
	int i;

	for (i = 0; i < naliases; i++)
		if (!strcmp(aliases[i].dir, dir))
			return;
	if (naliases == MAX_ALIASES)
		return;
	copy(aliases[naliases].dir, REL_MAX, dir);
	copy(aliases[naliases].alias, REL_MAX, alias);
	naliases++;
}

static void alias_del(const char *dir)
{
	int i;

	for (i = 0; i < naliases; i++)
		if (!strcmp(aliases[i].dir, dir)) {
			aliases[i] = aliases[--naliases];
			return;
		}
}

/* the bus form of a canonical path (sys/bus/pci/devices/BDF/..., sys/bus/mdev/devices/UUID/...) */
static bool alias_of(const char *r, char *out, size_t n)
{
	size_t best = 0, l;
	int i, b = -1;

	for (i = 0; i < naliases; i++) {
		l = strlen(aliases[i].dir);
		if (l > best && !strncmp(r, aliases[i].dir, l) && (r[l] == '/' || !r[l])) {
			best = l;
			b = i;
		}
	}
	if (b < 0)
		return false;
	return !pathf(out, n, "%s%s", aliases[b].alias, r + best);
}

static int parent_find(const char *dir, size_t len)
{
	int i;

	for (i = 0; i < nparents; i++)
		if (strlen(parents[i].dir) == len && !strncmp(parents[i].dir, dir, len))
			return i;
	return -1;
}

static int inst_of_parent(int p)
{
	int i;

	for (i = 0; i < ninsts; i++)
		if (insts[i].live && insts[i].parent == p)
			return i;
	return -1;
}

static int inst_count(int p)
{
	int i, n = 0;

	for (i = 0; i < ninsts; i++)
		n += insts[i].live && insts[i].parent == p;
	return n;
}

static int inst_by_uuid(const char *uuid)
{
	int i;

	for (i = 0; i < ninsts; i++)
		if (insts[i].live && !strcasecmp(insts[i].uuid, uuid))
			return i;
	return -1;
}

static int inst_new(int p, int type, int gi, const char *uuid)
{
	int i;

	for (i = 0; i < ninsts; i++)
		if (!insts[i].live)
			break;
	if (i == MAX_INSTS)
		return -1;
	if (i == ninsts)
		ninsts++;
	memset(&insts[i], 0, sizeof(insts[i]));
	insts[i].live = true;
	insts[i].parent = p;
	insts[i].type = type;
	insts[i].gi = gi;
	copy(insts[i].uuid, sizeof(insts[i].uuid), uuid ? uuid : "");
	return i;
}

/* vGPUs of type ID that one GPU instance takes (time-sliced inside the GI); 1 unknown */
static int seats(int id)
{
	const struct vtype *t = type_get(id);

	return t && t->per_gi > 0 ? t->per_gi : 1;
}

/* live vGPUs of GPU G on GI id GI */
static int gi_count(int g, int gi)
{
	int i, n = 0;

	for (i = 0; i < ninsts; i++)
		n += insts[i].live && parents[insts[i].parent].gpu == g && insts[i].gi == gi;
	return n;
}

/* an earlier live vGPU of GPU G (before slot I) is on the same GI as slot I */
static bool gi_seen(int g, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (insts[j].live && parents[insts[j].parent].gpu == g &&
		    insts[j].gi == insts[i].gi)
			return true;
	return false;
}

/* slices in use on GPU G (counting slices): each GI once, a vGPU without a GI by itself */
static int used_slices(int g)
{
	const struct vtype *t;
	int i, n = 0;

	for (i = 0; i < ninsts; i++)
		if (insts[i].live && parents[insts[i].parent].gpu == g &&
		    (insts[i].gi < 0 || !gi_seen(g, i)) && (t = type_get(insts[i].type)))
			n += t->slices;
	return n;
}

/*
 * vGPUs of MIG-backed type T that GPU G can still take: the seats left in the GIs that hold
 * T, plus every seat of the free GIs of T's size (or, counting slices, of the GIs that fit)
 */
static int mig_seats(int g, const struct vtype *t)
{
	const struct gpu *gp = &gpus[g];
	int i, k = seats(t->id), n = 0, c;

	if (gp->gi_mode) {
		for (i = 0; i < gp->ngi; i++) {
			if (gp->gi[i].size != t->slices)
				continue;
			if (!gp->gi[i].n)
				n += k;
			else if (gp->gi[i].type == t->id && gp->gi[i].n < k)
				n += k - gp->gi[i].n;
		}
		return n;
	}
	for (i = 0; i < ninsts; i++)
		if (insts[i].live && parents[insts[i].parent].gpu == g && insts[i].type == t->id &&
		    insts[i].gi >= 0 && !gi_seen(g, i) && (c = gi_count(g, insts[i].gi)) < k)
			n += k - c;
	c = (gp->total_slices - used_slices(g)) / t->slices;
	return n + (c > 0 ? c * k : 0);
}

/* how many more vGPUs of type ID parent P can take now */
static int avail(int p, int id)
{
	const struct parent *pa = &parents[p];
	const struct gpu *g = &gpus[pa->gpu];
	const struct vtype *t = type_get(id), *u;
	long total, used = 0;
	int i, n = 0, same = 0;

	if (!t || !t->named || !ids_has(g->cat, g->ncat, id))
		return 0;
	if (pa->sriov && inst_count(p))
		return 0;
	if (g->mig) {
		if (!t->slices)
			return 0;
		n = mig_seats(pa->gpu, t);
	} else {
		if (t->slices)
			return 0;
		for (i = 0; i < ninsts; i++) {
			if (!insts[i].live || parents[insts[i].parent].gpu != pa->gpu)
				continue;
			u = type_get(insts[i].type);
			/*
			 * mdev: one type per GPU; vendor VFIO: one framebuffer size;
			 * mixed-size mode: any sizes side by side (vgpu-host.md 5.1)
			 */
			if (!g->hetero && (pa->vfio ? !u || u->fb != t->fb : insts[i].type != id))
				return 0;
			used += u ? u->fb : 0;
			same += insts[i].type == id;
		}
		total = g->total_fb;
		if (!pa->vfio && t->maxinst > 0 && t->fb > 0 && !g->hetero)
			total = t->fb * t->maxinst;
		/* the type's own maximum per GPU (mdev description) holds in both modes */
		if (t->maxinst > 0 && same >= t->maxinst)
			return 0;
		if (!total || !t->fb)
			n = INT_MAX;
		else
			n = (int)((total - used) / t->fb);
		if (t->maxinst > 0 && n > t->maxinst - same)
			n = t->maxinst - same;
		/* mixed-size mode: the lower maximum of that mode (--mixed-max) */
		if (g->hetero && t->mixed_max > 0 && n > t->mixed_max - same)
			n = t->mixed_max - same;
	}
	if (n < 0)
		n = 0;
	if (pa->sriov && n > 1)
		n = 1;
	return n;
}

/* what the driver shows in creatable_vgpu_types of vendor-VFIO parent P */
static void creatable_text(int p, char *out, size_t n)
{
	const struct gpu *g = &gpus[parents[p].gpu];
	size_t o = 0;
	int i;

	out[0] = '\0';
	if (inst_count(p))
		return;
	if (g->header)
		o += (size_t)snprintf(out, n, HEADER);
	for (i = 0; i < g->ncat && o < n; i++)
		if (avail(p, g->cat[i]) > 0)
			o += (size_t)snprintf(out + o, n - o, "%-6d: %s\n", g->cat[i],
					      type_get(g->cat[i])->name);
}

/* each of P's state files with the model's content: write it, or (CHECK) compare */
static void parent_files(int p, bool check)
{
	const struct parent *pa = &parents[p];
	char r[PATH_MAX], want[16384], have[16384];
	int i;

	if (pa->vfio) {
		if (pathf(r, sizeof(r), "%s/nvidia/creatable_vgpu_types", pa->dir))
			return;
		creatable_text(p, want, sizeof(want));
		if (!check)
			put(r, want, 0444);
		else if (slurp(r, have, sizeof(have)) < 0 || strcmp(have, want))
			note("model differs from the fixture: %s", r);
		return;
	}
	for (i = 0; i < pa->ntypes; i++) {
		if (pathf(r, sizeof(r), "%s/mdev_supported_types/nvidia-%d/available_instances",
			  pa->dir, pa->types[i]))
			continue;
		snprintf(want, sizeof(want), "%d\n", avail(p, pa->types[i]));
		if (!check)
			put(r, want, 0444);
		else if (slurp(r, have, sizeof(have)) < 0 || strcmp(have, want))
			note("model differs from the fixture: %s", r);
	}
}

static void gpu_apply(int g)
{
	int p;

	for (p = 0; p < nparents; p++)
		if (parents[p].gpu == g)
			parent_files(p, false);
}

/*
 * a GI for a new vGPU of type T: the lowest GI that holds T with a seat left, else the lowest
 * free GI of T's size; -1 none, -2 not MIG-backed
 */
static int gi_take(int g, const struct vtype *t)
{
	struct gpu *gp = &gpus[g];
	int i, k = seats(t->id);

	if (!t->slices)
		return -2;
	if (!gp->gi_mode) {
		for (i = 0; i < ninsts; i++)
			if (insts[i].live && parents[insts[i].parent].gpu == g &&
			    insts[i].type == t->id && insts[i].gi >= 0 &&
			    gi_count(g, insts[i].gi) < k)
				return insts[i].gi;
		return gp->next_gi++;
	}
	for (i = 0; i < gp->ngi; i++)
		if (gp->gi[i].n && gp->gi[i].type == t->id && gp->gi[i].n < k &&
		    gp->gi[i].size == t->slices)
			break;
	if (i == gp->ngi)
		for (i = 0; i < gp->ngi && (gp->gi[i].n || gp->gi[i].size != t->slices); i++)
			;
	if (i == gp->ngi)
		return -1;
	gp->gi[i].n++;
	gp->gi[i].type = t->id;
	return gp->gi[i].id;
}

static void gi_give(int g, int id)
{
	int i;

	for (i = 0; i < gpus[g].ngi; i++)
		if (gpus[g].gi[i].id == id && gpus[g].gi[i].n > 0 && !--gpus[g].gi[i].n)
			gpus[g].gi[i].type = 0;
}

/* ------------------------------------------------------------------------------------ */
/* building the model from the backing tree at mount */

static int read_int(const char *r, long long *v)
{
	char buf[64];

	if (slurp(r, buf, sizeof(buf)) < 0)
		return -1;
	return k_kstrtoll(buf, 10, v) ? -1 : 0;
}

static int gpu_get(const char *dir)
{
	char r[PATH_MAX], buf[4096], ven[32] = "", dev[32] = "";
	struct gpu *g;
	const char *m;
	int i;

	for (i = 0; i < ngpus; i++)
		if (!strcmp(gpus[i].dir, dir))
			return i;
	if (ngpus == MAX_GPUS)
		return -1;
	g = &gpus[ngpus];
	memset(g, 0, sizeof(*g));
	copy(g->dir, sizeof(g->dir), dir);
	g->minor = -1;
	g->header = true;
	if (!pathf(r, sizeof(r), "%s/vendor", dir) && slurp(r, buf, sizeof(buf)) >= 0)
		sscanf(buf, "%31s", ven);
	if (!pathf(r, sizeof(r), "%s/device", dir) && slurp(r, buf, sizeof(buf)) >= 0)
		sscanf(buf, "%31s", dev);
	snprintf(g->devid, sizeof(g->devid), "%.15s:%.15s", ven, dev);
	if (!pathf(r, sizeof(r), "proc/driver/nvidia/gpus/%s/information", base(dir)) &&
	    slurp(r, buf, sizeof(buf)) >= 0 && (m = strstr(buf, "Device Minor:")))
		g->minor = atoi(m + strlen("Device Minor:"));
	return ngpus++;
}

static int parent_add(const char *dir, bool vfio)
{
	char r[PATH_MAX], gdir[REL_MAX];
	struct parent *p;
	bool sriov = false;
	int g;

	if (nparents == MAX_PARENTS || pathf(r, sizeof(r), "%s/physfn", dir))
		return -1;
	if (!canon(r, gdir, sizeof(gdir)))
		sriov = true;
	else
		copy(gdir, sizeof(gdir), dir);
	g = gpu_get(gdir);
	if (g < 0)
		return -1;
	p = &parents[nparents];
	memset(p, 0, sizeof(*p));
	copy(p->dir, sizeof(p->dir), dir);
	p->gpu = g;
	p->vfio = vfio;
	p->sriov = vfio || sriov;
	gpus[g].vfio |= vfio;
	return nparents++;
}

static int gi_file(const char *dir)
{
	char r[PATH_MAX];
	long long v;

	if (pathf(r, sizeof(r), "%s/nvidia/gpu_instance_id", dir) || read_int(r, &v) || v < 0 ||
	    v > INT_MAX)
		return -1;
	return (int)v;
}

static void scan_vfio(const char *dir)
{
	char r[PATH_MAX], buf[16384], *line, *save = NULL, *q, *end;
	int p = parent_add(dir, true), first = 1;
	struct gpu *g;
	long long v;
	long id;

	if (p < 0)
		return;
	g = &gpus[parents[p].gpu];
	if (!pathf(r, sizeof(r), "%s/nvidia/current_vgpu_type", dir) && !read_int(r, &v) && v > 0 &&
	    v <= INT_MAX) {
		inst_new(p, (int)v, gi_file(dir), NULL);
		type_add((int)v, NULL);
	}
	if (pathf(r, sizeof(r), "%s/nvidia/creatable_vgpu_types", dir) ||
	    slurp(r, buf, sizeof(buf)) <= 0)
		return;
	/* "ID : name" lines; a header, blank and garbage lines are skipped */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (first-- == 1)
			g->header = !strncmp(line, "ID", 2);
		while (*line == ' ' || *line == '\t')
			line++;
		id = strtol(line, &end, 10);
		if (end == line || id <= 0 || id > INT_MAX)
			continue;
		while (*end == ' ' || *end == '\t')
			end++;
		if (*end++ != ':')
			continue;
		while (*end == ' ' || *end == '\t')
			end++;
		for (q = end + strlen(end); q > end && isspace((unsigned char)q[-1]); q--)
			*(q - 1) = '\0';
		if (!*end || !type_add((int)id, end))
			continue;
		ids_add(g->offered, &g->noffered, (int)id);
	}
}

static void scan_mdev(const char *dir)
{
	char r[PATH_MAX], buf[4096], lnk[PATH_MAX];
	struct dirent **ents = NULL;
	int p = parent_add(dir, false), n, i, id;
	struct parent *pa;
	struct vtype *t;
	const char *s;
	long long v;
	ssize_t k;

	if (p < 0)
		return;
	pa = &parents[p];
	if (pathf(r, sizeof(r), "%s/%s/mdev_supported_types", g_backing, dir))
		return;
	n = scandir(r, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (sscanf(ents[i]->d_name, "nvidia-%d", &id) != 1 || id <= 0)
			goto next;
		if (pathf(r, sizeof(r), "%s/mdev_supported_types/%s/name", dir, ents[i]->d_name) ||
		    slurp(r, buf, sizeof(buf)) <= 0)
			goto next;
		buf[strcspn(buf, "\n")] = '\0';
		t = type_add(id, buf);
		if (!t || !t->named)
			goto next;
		if (!pathf(r, sizeof(r), "%s/mdev_supported_types/%s/description", dir,
			   ents[i]->d_name) &&
		    slurp(r, buf, sizeof(buf)) > 0) {
			if ((s = strstr(buf, "framebuffer=")) && atol(s + 12) > 0)
				t->fb = atol(s + 12);
			if ((s = strstr(buf, "max_instance=")))
				t->maxinst = atoi(s + 13);
		}
		ids_add(pa->types, &pa->ntypes, id);
		ids_add(gpus[pa->gpu].cat, &gpus[pa->gpu].ncat, id);
		if (!pathf(r, sizeof(r), "%s/mdev_supported_types/%s/available_instances", dir,
			   ents[i]->d_name) &&
		    !read_int(r, &v) && v > 0)
			ids_add(gpus[pa->gpu].offered, &gpus[pa->gpu].noffered, id);
next:
		free(ents[i]);
	}
	free(ents);
	/* existing mdevs: UUID directories of the parent */
	if (pathf(r, sizeof(r), "%s/%s", g_backing, dir))
		return;
	n = scandir(r, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (uuid_name(ents[i]->d_name) &&
		    !pathf(r, sizeof(r), "%s/%s/mdev_type", dir, ents[i]->d_name) &&
		    (k = readlinkat(g_bfd, r, lnk, sizeof(lnk) - 1)) > 0) {
			lnk[k] = '\0';
			if (sscanf(base(lnk), "nvidia-%d", &id) == 1 &&
			    !pathf(r, sizeof(r), "%s/%s", dir, ents[i]->d_name)) {
				inst_new(p, id, gi_file(r), ents[i]->d_name);
				pathf(lnk, sizeof(lnk), "sys/bus/mdev/devices/%s", ents[i]->d_name);
				alias_add(r, lnk);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

static int cmp_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

static int cmp_asc(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * GIs of a MIG GPU: their ids from /proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<N>,
 * sizes inferred: a held GI has its vGPUs' slices (several vGPUs of one type may share it),
 * the free ones the distinct sizes offered at mount (largest first), the rest the smallest
 * offered size. No GI directories or inconsistent: no GI mode (counting slices).
 */
static void gpu_gis(int gi)
{
	struct gpu *g = &gpus[gi];
	char r[PATH_MAX];
	struct dirent **ents = NULL;
	int ids[MAX_GIS], nid = 0, sizes[MAX_CAT], nsz = 0, i, j, k, n, id, sum = 0, unknown = 0;
	const struct vtype *t;

	g->next_gi = 1;
	for (i = 0; i < ninsts; i++)
		if (insts[i].live && parents[insts[i].parent].gpu == gi &&
		    insts[i].gi >= g->next_gi)
			g->next_gi = insts[i].gi + 1;
	if (g->minor < 0 || pathf(r, sizeof(r), "%s/proc/driver/nvidia/capabilities/gpu%d/mig",
				  g_backing, g->minor))
		goto slices;
	n = scandir(r, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (sscanf(ents[i]->d_name, "gi%d", &id) == 1 && nid < MAX_GIS)
			ids[nid++] = id;
		free(ents[i]);
	}
	free(ents);
	if (!nid)
		goto slices;
	qsort(ids, (size_t)nid, sizeof(int), cmp_asc);
	g->ngi = nid;
	for (i = 0; i < nid; i++)
		g->gi[i] = (struct gi){ ids[i], -1, 0, 0 };
	/* held GIs: the recorded id if that GI can take the vGPU, else the lowest free one */
	for (i = 0; i < ninsts; i++) {
		if (!insts[i].live || parents[insts[i].parent].gpu != gi)
			continue;
		t = type_get(insts[i].type);
		if (t && t->named && !t->slices)
			continue;
		k = seats(insts[i].type);
		for (j = 0; j < nid; j++)
			if (g->gi[j].id == insts[i].gi &&
			    (!g->gi[j].n || (g->gi[j].type == insts[i].type && g->gi[j].n < k)))
				break;
		if (j == nid)
			for (j = 0; j < nid && g->gi[j].n; j++)
				;
		if (j == nid)
			goto fail;
		if (!g->gi[j].n) {
			g->gi[j].size = t && t->named ? t->slices : -1;
			if (g->gi[j].size < 0)
				unknown++;
			else
				sum += g->gi[j].size;
		}
		g->gi[j].n++;
		g->gi[j].type = insts[i].type;
		insts[i].gi = g->gi[j].id;
	}
	for (i = 0; i < g->noffered; i++)
		if ((t = type_get(g->offered[i])) && t->slices && !ids_has(sizes, nsz, t->slices))
			sizes[nsz++] = t->slices;
	qsort(sizes, (size_t)nsz, sizeof(int), cmp_desc);
	for (i = 0, j = 0; i < nid; i++) {
		if (g->gi[i].n)
			continue;
		g->gi[i].size = j < nsz ? sizes[j] : nsz ? sizes[nsz - 1] : 0;
		sum += g->gi[i].size;
		j++;
	}
	if (j < nsz)
		goto fail;
	for (i = 0; i < nid && unknown; i++)
		if (g->gi[i].size < 0) {
			g->gi[i].size = (g->total_slices - sum) / unknown;
			if (g->gi[i].size < 0)
				goto fail;
		}
	for (i = 0, sum = 0; i < nid; i++)
		sum += g->gi[i].size;
	if (sum > g->total_slices)
		goto fail;
	g->gi_mode = true;
	return;
fail:
	note("GPU %s: GI layout does not add up, counting slices instead", g->dir);
slices:
	/* every held MIG-backed vGPU without a GI id gets a GI of its own */
	g->ngi = 0;
	for (i = 0; i < ninsts; i++)
		if (insts[i].live && parents[insts[i].parent].gpu == gi && insts[i].gi < 0 &&
		    (t = type_get(insts[i].type)) && t->slices)
			insts[i].gi = g->next_gi++;
}

/*
 * vGPUs per GI of the MIG-backed catalogue types (unless --per-gi): on 4-slice GPUs the GI's
 * memory over the type's framebuffer, the GI's memory being the largest MIG-backed type of
 * the same slice count in the catalogues of the GPUs of this model (DC-1-24C: 24 GB per 1g
 * GI, so DC-1-8C gets 3; A30's types all get 1). On 7-slice GPUs always 1: their 1-slice
 * types come in two memory sizes (1g.10gb, 1g.20gb), which this rule would take for one GI.
 */
static void per_gi_derive(void)
{
	struct vtype *t;
	const struct vtype *u;
	int i, j, k, l;
	long mem;

	for (i = 0; i < ngpus; i++)
		for (k = 0; k < gpus[i].ncat; k++) {
			t = type_get(gpus[i].cat[k]);
			if (!t || !t->slices || t->per_gi_opt)
				continue;
			mem = 0;
			for (j = 0; j < ngpus && gpus[i].total_slices == 4; j++) {
				if (strcmp(gpus[i].devid, gpus[j].devid))
					continue;
				for (l = 0; l < gpus[j].ncat; l++)
					if ((u = type_get(gpus[j].cat[l])) &&
					    u->slices == t->slices && u->fb > mem)
						mem = u->fb;
			}
			t->per_gi = t->fb > 0 && mem >= t->fb ? (int)(mem / t->fb) : 1;
		}
}

static void gpus_finish(void)
{
	char r[PATH_MAX];
	const struct vtype *t;
	int i, j, k;

	for (i = 0; i < ninsts; i++)
		if (insts[i].live)
			gpus[parents[insts[i].parent].gpu].had_vgpu = true;
	for (i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		/* vendor VFIO: what the free VFs list plus the held types (named ones) */
		if (g->vfio) {
			for (j = 0; j < g->noffered; j++)
				ids_add(g->cat, &g->ncat, g->offered[j]);
			for (j = 0; j < ninsts; j++)
				if (insts[j].live && parents[insts[j].parent].gpu == i &&
				    (t = type_get(insts[j].type)) && t->named)
					ids_add(g->cat, &g->ncat, t->id);
		}
	}
	/*
	 * --board-types: one driver type table per board, so a vendor-VFIO GPU also has the
	 * types of the other vendor-VFIO GPUs of its PCI vendor:device (a GPU whose lists a held
	 * vGPU cut down at mount lists them all again once free, as the driver does)
	 */
	for (i = 0; i < ngpus && g_board_types; i++)
		for (j = 0; j < ngpus; j++)
			if (j != i && gpus[i].vfio && gpus[j].vfio &&
			    !strcmp(gpus[i].devid, gpus[j].devid))
				for (k = 0; k < gpus[j].ncat; k++)
					ids_add(gpus[i].cat, &gpus[i].ncat, gpus[j].cat[k]);
	for (i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		g->total_slices = 7;
		for (j = 0; j < g->ncat; j++) {
			t = type_get(g->cat[j]);
			if (t->slices) {
				const char *s = strrchr(t->name, ' ');

				s = s ? s + 1 : t->name;
				/* 4-slice boards: A30, RTX PRO 6000 Blackwell (DC) */
				if (!strncmp(s, "A30", 3) || !strncmp(s, "DC-", 3))
					g->total_slices = 4;
				break;
			}
		}
		g->mig = g->minor >= 0 &&
			 !pathf(r, sizeof(r), "proc/driver/nvidia/capabilities/gpu%d/mig",
				g->minor) &&
			 is_dir(r);
		for (j = 0; j < g->noffered && !g->mig; j++)
			g->mig = (t = type_get(g->offered[j])) && t->slices;
	}
	/* framebuffer: the largest time-sliced type of the GPUs of this model free at mount */
	for (i = 0; i < ngpus; i++) {
		for (j = 0; j < ngpus; j++) {
			if (strcmp(gpus[i].devid, gpus[j].devid) || gpus[j].had_vgpu)
				continue;
			for (k = 0; k < gpus[j].ncat; k++) {
				t = type_get(gpus[j].cat[k]);
				if (!t->slices && t->fb > gpus[i].total_fb)
					gpus[i].total_fb = t->fb;
			}
		}
	}
	per_gi_derive();
	for (i = 0; i < ngpus; i++)
		if (gpus[i].mig)
			gpu_gis(i);
}

static void scan_host(void)
{
	char r[PATH_MAX], dir[REL_MAX], lnk[REL_MAX];
	struct dirent **ents = NULL;
	int n, i, p;

	if (pathf(r, sizeof(r), "%s/sys/bus/pci/devices", g_backing))
		return;
	n = scandir(r, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (name[0] == '.' || pathf(r, sizeof(r), "sys/bus/pci/devices/%s", name) ||
		    canon(r, dir, sizeof(dir)))
			goto next;
		if (!pathf(lnk, sizeof(lnk), "sys/bus/pci/devices/%s", name))
			alias_add(dir, lnk);
		if (!pathf(r, sizeof(r), "%s/nvidia/current_vgpu_type", dir) && is_reg(r))
			scan_vfio(dir);
		else if (!pathf(r, sizeof(r), "%s/mdev_supported_types", dir) && is_dir(r))
			scan_mdev(dir);
next:
		free(ents[i]);
	}
	free(ents);
	gpus_finish();
	for (p = 0; p < nparents; p++)
		parent_files(p, true);
}

/* ------------------------------------------------------------------------------------ */
/* control file: fault rules */

enum {
	OP_WRITE = 1 << 0,
	OP_CREATE = 1 << 1,
	OP_RENAME = 1 << 2,
	OP_UNLINK = 1 << 3,
	OP_MKDIR = 1 << 4,
	OP_RMDIR = 1 << 5,
	OP_FSYNC = 1 << 6,
	OP_TRUNCATE = 1 << 7,
	OP_SYMLINK = 1 << 8,
	OP_LINK = 1 << 9,
	OP_SETATTR = 1 << 10,
	OP_READ = 1 << 11,
	OP_ANY = (1 << 11) - 1, /* every mutating op */
};

static const struct {
	const char *name;
	unsigned int op;
} opnames[] = {
	{ "write", OP_WRITE },	 { "create", OP_CREATE },     { "rename", OP_RENAME },
	{ "unlink", OP_UNLINK }, { "mkdir", OP_MKDIR },	      { "rmdir", OP_RMDIR },
	{ "fsync", OP_FSYNC },	 { "truncate", OP_TRUNCATE }, { "symlink", OP_SYMLINK },
	{ "link", OP_LINK },	 { "setattr", OP_SETATTR },   { "read", OP_READ },
	{ "any", OP_ANY },
};

enum rkind { R_FAIL, R_VANISH, R_DELAY, R_OPEN };

struct rule {
	char text[512]; /* normalised line: counters survive a reload if it is unchanged */
	enum rkind kind;
	unsigned int ops;
	char arg[REL_MAX]; /* glob or id */
	int err;
	long after, count, ms;
	long seen, fired;
	bool taken; /* reload bookkeeping */
	char nvrm[16]; /* fail: the status of the NVRM line the driver logs, "" none */
};

static struct rule rules[MAX_RULES];
static int nrules;
static struct stat ctl_st;
static bool ctl_seen;

static bool parse_rule(char *line, struct rule *ru)
{
	char *tok[8], *save = NULL, *t, *end;
	int n = 0, i;
	size_t k;

	memset(ru, 0, sizeof(*ru));
	for (t = strtok_r(line, " \t", &save); t && n < 8; t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (i)
			strncat(ru->text, " ", sizeof(ru->text) - strlen(ru->text) - 1);
		strncat(ru->text, tok[i], sizeof(ru->text) - strlen(ru->text) - 1);
	}
	ru->count = -1;
	if (!strcmp(tok[0], "fail") && n >= 4) {
		ru->kind = R_FAIL;
		for (k = 0; k < sizeof(opnames) / sizeof(opnames[0]); k++)
			if (!strcmp(opnames[k].name, tok[1]))
				ru->ops = opnames[k].op;
		ru->err = errnum(tok[3]);
		if (!ru->ops || ru->err < 0)
			return false;
		copy(ru->arg, sizeof(ru->arg), rel(tok[2]));
		for (i = 4; i < n; i++) {
			if (!strncmp(tok[i], "after=", 6))
				ru->after = strtol(tok[i] + 6, &end, 10);
			else if (!strncmp(tok[i], "count=", 6))
				ru->count = strtol(tok[i] + 6, &end, 10);
			else if (!strncmp(tok[i], "nvrm=", 5) && tok[i][5] &&
				 strlen(tok[i]) < 5 + sizeof(ru->nvrm)) {
				strcpy(ru->nvrm, tok[i] + 5);
				continue;
			} else
				return false;
			if (*end || end == tok[i] + 6)
				return false;
		}
		return true;
	}
	if (!strcmp(tok[0], "vanish") && n == 2) {
		ru->kind = R_VANISH;
		copy(ru->arg, sizeof(ru->arg), rel(tok[1]));
		return true;
	}
	if (!strcmp(tok[0], "delay") && n == 3) {
		ru->kind = R_DELAY;
		copy(ru->arg, sizeof(ru->arg), rel(tok[1]));
		ru->ms = strtol(tok[2], &end, 10);
		return !*end && ru->ms >= 0;
	}
	if (!strcmp(tok[0], "open") && n == 2) {
		ru->kind = R_OPEN;
		copy(ru->arg, sizeof(ru->arg), tok[1]);
		return true;
	}
	return false;
}

/* re-read the control file if it changed (g_lock held) */
static void rules_refresh(void)
{
	static struct rule fresh[MAX_RULES];
	char buf[65536], *line, *save = NULL, *hash;
	struct stat st;
	ssize_t k = -1;
	int fd, n = 0, i, j;
	bool gone;

	if (!g_control)
		return;
	gone = stat(g_control, &st) < 0;
	if (gone && !ctl_seen)
		return;
	if (!gone && ctl_seen && st.st_ino == ctl_st.st_ino && st.st_size == ctl_st.st_size &&
	    st.st_mtim.tv_sec == ctl_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == ctl_st.st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == ctl_st.st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == ctl_st.st_ctim.tv_nsec)
		return;
	ctl_seen = !gone;
	ctl_st = st;
	buf[0] = '\0';
	if (!gone && (fd = open(g_control, O_RDONLY | O_CLOEXEC)) >= 0) {
		k = read(fd, buf, sizeof(buf) - 1);
		buf[k > 0 ? k : 0] = '\0';
		close(fd);
	}
	for (line = strtok_r(buf, "\n", &save); line && n < MAX_RULES;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		line[strcspn(line, "\r")] = '\0';
		if (!parse_rule(line, &fresh[n])) {
			note("control: ignoring bad rule '%s'", fresh[n].text);
			continue;
		}
		n++;
	}
	/* a rule already present keeps its counters */
	for (j = 0; j < nrules; j++)
		rules[j].taken = false;
	for (i = 0; i < n; i++)
		for (j = 0; j < nrules; j++)
			if (!rules[j].taken && !strcmp(rules[j].text, fresh[i].text)) {
				rules[j].taken = true;
				fresh[i].seen = rules[j].seen;
				fresh[i].fired = rules[j].fired;
				break;
			}
	memcpy(rules, fresh, sizeof(struct rule) * (size_t)n);
	nrules = n;
}

static bool glob_hit(const char *glob, const char *r)
{
	char al[PATH_MAX];

	return !fnmatch(glob, r, 0) || (alias_of(r, al, sizeof(al)) && !fnmatch(glob, al, 0));
}

/* GLOB matches PATH or a directory above it */
static bool chain_hit(const char *glob, const char *path)
{
	char p[PATH_MAX], *s;

	copy(p, sizeof(p), path);
	for (;;) {
		if (!fnmatch(glob, p, 0))
			return true;
		s = strrchr(p, '/');
		if (!s)
			return false;
		*s = '\0';
	}
}

/* R or a directory above it, in its own or its bus form, matches a vanish rule (g_lock held) */
static bool vanished(const char *r)
{
	char al[PATH_MAX];
	bool has_al = false, looked = false;
	int i;

	if (!strcmp(r, "."))
		return false;
	for (i = 0; i < nrules; i++) {
		if (rules[i].kind != R_VANISH)
			continue;
		if (!looked) {
			has_al = alias_of(r, al, sizeof(al));
			looked = true;
		}
		if (chain_hit(rules[i].arg, r) || (has_al && chain_hit(rules[i].arg, al)))
			return true;
	}
	return false;
}

/* the error a fail rule injects into operation OP on R (or R2), 0 none (g_lock held) */
/*
 * The kernel's log stream, dev/kmsg in the tree (Documentation/ABI/testing/dev-kmsg):
 * records "PRIO,SEQ,TS_USEC,FLAGS;MESSAGE\n", TS_USEC microseconds since boot
 * (CLOCK_BOOTTIME), kept one a line in the backing's dev/kmsg (made with the
 * first record).  A reader gets one record per read(), EINVAL for a buffer too
 * small for it, and at the end EAGAIN (O_NONBLOCK) or 0.  The tree's proc/stat
 * gets this host's btime when it has none, so TS_USEC converts to the wall
 * clock as on a real host.
 */
static unsigned long g_kmsg_seq; /* the next record's SEQ */

static bool is_kmsg(const char *r)
{
	return !strcmp(r, "dev/kmsg");
}

/* SEQ goes on after the fixture's own records, if it has a dev/kmsg. */
static void kmsg_init(void)
{
	char buf[4096];
	ssize_t k;
	int fd = openat(g_bfd, "dev/kmsg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < k; i++)
			g_kmsg_seq += buf[i] == '\n';
	close(fd);
}

/*
 * Before the first record: the tree's dev/, and proc/stat with this host's
 * btime where the fixture has none (the tree equals its fixture until then).
 */
static void kmsg_setup(void)
{
	static bool done;
	char buf[4096];
	FILE *f;
	int fd;

	if (done)
		return;
	done = true;
	mkdirat(g_bfd, "dev", 0755);
	if (faccessat(g_bfd, "proc/stat", F_OK, 0) == 0 || !(f = fopen("/proc/stat", "re")))
		return;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "btime ", 6)) {
			mkdirat(g_bfd, "proc", 0755);
			fd = openat(g_bfd, "proc/stat", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				    0644);
			if (fd >= 0 && write(fd, buf, strlen(buf)) < 0)
				note("cannot write proc/stat: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
	fclose(f);
}

/* One record of dev/kmsg from byte @off: what read() of the kernel's /dev/kmsg gives. */
static int kmsg_read(int fd, char *buf, size_t size, off_t off, int flags)
{
	char rec[8192];
	ssize_t k = pread(fd, rec, sizeof(rec), off);
	char *nl;

	if (k < 0)
		return -errno;
	nl = memchr(rec, '\n', (size_t)k);
	if (!nl) /* the end (or a record still being appended) */
		return flags & O_NONBLOCK ? -EAGAIN : 0;
	if ((size_t)(nl - rec + 1) > size)
		return -EINVAL;
	memcpy(buf, rec, (size_t)(nl - rec + 1));
	return (int)(nl - rec + 1);
}

/* A kernel log record at level @prio appended to dev/kmsg (g_lock held). */
static void kmsg_add(int prio, const char *msg)
{
	char line[512];
	struct timespec ts;
	int fd, n;

	kmsg_setup();
	clock_gettime(CLOCK_BOOTTIME, &ts);
	n = snprintf(line, sizeof(line), "%d,%lu,%lld,-;%s\n", prio, g_kmsg_seq,
		     (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, msg);
	fd = openat(g_bfd, "dev/kmsg", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		note("cannot append to dev/kmsg: %s", strerror(errno));
		return;
	}
	if (write(fd, line, (size_t)n) != n)
		note("cannot append to dev/kmsg: %s", strerror(errno));
	else
		g_kmsg_seq++;
	close(fd);
}

/*
 * The driver's kernel log line for a create it refused (cubecos: EIO and
 * "NVRM: Failed to add vgpu create request: 0x38"), a record of dev/kmsg
 * (level 3, KERN_ERR), for vgpuctl's cause: line.
 */
static void kmsg_nvrm(const char *status)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "NVRM: Failed to add vgpu create request: %s", status);
	kmsg_add(3, msg);
}

static int fault(unsigned int op, const char *r, const char *r2)
{
	int i, err = 0;

	for (i = 0; i < nrules; i++) {
		struct rule *ru = &rules[i];

		if (ru->kind != R_FAIL || !(ru->ops & op) ||
		    !(glob_hit(ru->arg, r) || (r2 && glob_hit(ru->arg, r2))))
			continue;
		if (++ru->seen <= ru->after || (ru->count >= 0 && ru->fired >= ru->count) || err)
			continue;
		ru->fired++;
		err = -ru->err;
		if (ru->nvrm[0])
			kmsg_nvrm(ru->nvrm);
	}
	return err;
}

static long delay_of(const char *r)
{
	long ms = 0;
	int i;

	for (i = 0; i < nrules; i++)
		if (rules[i].kind == R_DELAY && glob_hit(rules[i].arg, r))
			ms += rules[i].ms;
	return ms;
}

static bool is_open(const char *id)
{
	int i;

	for (i = 0; i < nrules; i++)
		if (rules[i].kind == R_OPEN && !strcasecmp(rules[i].arg, id))
			return true;
	return false;
}

/* entry checks of every operation: vanish, then (OP != 0) the fail rules */
/*
 * Mixed-size mode, kept where the NVML stand-in keeps it (var/lib/fake-nvidia/hetero-<PF>,
 * tests/nvml/README.md): "1" is on. Read again when the file changed; a GPU whose mode
 * changed gets its lists rewritten. The stand-in refuses a change while a VF holds a vGPU
 * (NVML_ERROR_IN_USE), as the driver does (vgpu-host.md 5.1).
 */
static void hetero_poll(void)
{
	char r[PATH_MAX], v[16];
	struct stat st;
	bool on;
	int g;

	for (g = 0; g < ngpus; g++) {
		struct gpu *gp = &gpus[g];

		if (pathf(r, sizeof(r), "var/lib/fake-nvidia/hetero-%s", base(gp->dir)))
			continue;
		if (fstatat(g_bfd, r, &st, 0) < 0)
			memset(&st, 0, sizeof(st));
		if (st.st_ino == gp->hetero_st.st_ino && st.st_size == gp->hetero_st.st_size &&
		    st.st_mtim.tv_sec == gp->hetero_st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == gp->hetero_st.st_mtim.tv_nsec &&
		    st.st_ctim.tv_sec == gp->hetero_st.st_ctim.tv_sec &&
		    st.st_ctim.tv_nsec == gp->hetero_st.st_ctim.tv_nsec)
			continue;
		gp->hetero_st = st;
		on = st.st_ino && slurp(r, v, sizeof(v)) >= 0 && v[0] == '1';
		if (on == gp->hetero)
			continue;
		gp->hetero = on;
		gpu_apply(g);
	}
}

static int gate(unsigned int op, const char *r, const char *r2)
{
	int e = 0;

	lock();
	rules_refresh();
	hetero_poll();
	if (vanished(r) || (r2 && vanished(r2)))
		e = -ENOENT;
	else if (op)
		e = fault(op, r, r2);
	unlock();
	return e;
}

/* ------------------------------------------------------------------------------------ */
/* driver files */

enum skind { SK_NONE, SK_VFIO, SK_CREATE, SK_REMOVE, SK_GONE, SK_PARAMS };

/* which driver file R is (g_lock held); *a is the parent, *b the type id or instance */
static enum skind special(const char *r, int *a, int *b)
{
	const char *s = strrchr(r, '/'), *t;
	size_t l;
	int p, i, id;

	if (!s || strncmp(r, "sys/", 4))
		return SK_NONE;
	l = (size_t)(s - r);
	if (!strcmp(s, "/current_vgpu_type") && l > 7 && !strncmp(s - 7, "/nvidia", 7)) {
		p = parent_find(r, l - 7);
		if (p >= 0 && parents[p].vfio) {
			*a = p;
			return SK_VFIO;
		}
		return SK_NONE;
	}
	/* a vGPU's nvidia/vgpu_params: a VF's (vendor VFIO) or an mdev's */
	if (!strcmp(s, "/vgpu_params") && l > 7 && !strncmp(s - 7, "/nvidia", 7)) {
		size_t d = l - 7;

		p = parent_find(r, d);
		if (p >= 0 && parents[p].vfio) {
			*a = p;
			*b = -1;
			return SK_PARAMS;
		}
		if (p < 0 && d > UUID_LEN + 1 && r[d - UUID_LEN - 1] == '/') {
			char uuid[UUID_LEN + 1];

			memcpy(uuid, r + d - UUID_LEN, UUID_LEN);
			uuid[UUID_LEN] = '\0';
			i = uuid_name(uuid) ? inst_by_uuid(uuid) : -1;
			if (i >= 0) {
				*a = insts[i].parent;
				*b = i;
				return SK_PARAMS;
			}
		}
		return SK_NONE;
	}
	if (!strcmp(s, "/create")) {
		for (t = s - 1; t > r && *t != '/'; t--)
			;
		if (sscanf(t, "/nvidia-%d", &id) != 1 || t - r < 21 ||
		    strncmp(t - 21, "/mdev_supported_types", 21))
			return SK_NONE;
		p = parent_find(r, (size_t)(t - 21 - r));
		if (p < 0 || parents[p].vfio)
			return SK_NONE;
		*a = p;
		*b = id;
		return SK_CREATE;
	}
	if (!strcmp(s, "/remove") && l > UUID_LEN + 1 && r[l - UUID_LEN - 1] == '/') {
		char uuid[UUID_LEN + 1];

		memcpy(uuid, r + l - UUID_LEN, UUID_LEN);
		uuid[UUID_LEN] = '\0';
		if (!uuid_name(uuid))
			return SK_NONE;
		p = parent_find(r, l - UUID_LEN - 1);
		if (p < 0 || parents[p].vfio)
			return SK_NONE;
		i = inst_by_uuid(uuid);
		*a = p;
		if (i < 0 || insts[i].parent != p)
			return SK_GONE;
		*b = i;
		return SK_REMOVE;
	}
	return SK_NONE;
}

static void vfio_gi_files(const char *dir, int gi)
{
	char r[PATH_MAX], v[32];

	if (pathf(r, sizeof(r), "%s/nvidia/gpu_instance_id", dir))
		return;
	if (gi < 0) {
		unlinkat(g_bfd, r, 0);
		if (!pathf(r, sizeof(r), "%s/nvidia/placement_id", dir))
			unlinkat(g_bfd, r, 0);
		return;
	}
	snprintf(v, sizeof(v), "%d\n", gi);
	put(r, v, 0444);
	if (!pathf(r, sizeof(r), "%s/nvidia/placement_id", dir))
		put(r, "0\n", 0444);
}

/* current_vgpu_type_store of the shipped driver (g_lock held) */
static int vfio_store(int p, const char *buf)
{
	struct parent *pa = &parents[p];
	char r[PATH_MAX], v[32];
	const struct vtype *t;
	long long val;
	int e, i, gi;

	e = k_kstrtoll(buf, 10, &val);
	if (e)
		return e;
	i = inst_of_parent(p);
	if (pathf(r, sizeof(r), "%s/nvidia/current_vgpu_type", pa->dir))
		return -EIO;
	if (!val) {
		if (i < 0 || is_open(base(pa->dir)))
			return -EPERM;
		if (insts[i].gi >= 0)
			gi_give(pa->gpu, insts[i].gi);
		insts[i].live = false;
		put(r, "0\n", 0644);
		vfio_gi_files(pa->dir, -1);
		gpu_apply(pa->gpu);
		return 0;
	}
	if (i >= 0)
		return -EPERM;
	if (val < 0 || val > INT_MAX || avail(p, (int)val) <= 0)
		return -EIO;
	t = type_get((int)val);
	gi = gi_take(pa->gpu, t);
	if (gi == -1)
		return -EIO;
	if (inst_new(p, (int)val, gi < 0 ? -1 : gi, NULL) < 0) {
		if (gi >= 0)
			gi_give(pa->gpu, gi);
		return -EIO;
	}
	snprintf(v, sizeof(v), "%lld\n", val);
	put(r, v, 0644);
	vfio_gi_files(pa->dir, gi);
	gpu_apply(pa->gpu);
	return 0;
}

static int link_to(const char *target, const char *at)
{
	char dir[PATH_MAX], lnk[PATH_MAX];
	char *s;

	copy(dir, sizeof(dir), at);
	s = strrchr(dir, '/');
	if (!s)
		return -EINVAL;
	*s = '\0';
	if (relpath(dir, target, lnk, sizeof(lnk)))
		return -ENAMETOOLONG;
	return symlinkat(lnk, g_bfd, at) ? -errno : 0;
}

/* directories the emulator made: removed again once empty, so BACKING can match the fixture */
static char made[64][REL_MAX];
static int nmade;

static void mkdir_made(const char *r)
{
	if (!mkdirat(g_bfd, r, 0755) && nmade < 64)
		copy(made[nmade++], REL_MAX, r);
}

static void made_prune(void)
{
	int i;

	for (i = nmade - 1; i >= 0; i--)
		if (!unlinkat(g_bfd, made[i], AT_REMOVEDIR) || errno == ENOENT) {
			memmove(made[i], made[i + 1], (size_t)(nmade - i - 1) * REL_MAX);
			nmade--;
		}
}

static void mkdir_p(const char *r)
{
	char p[PATH_MAX], *s;

	copy(p, sizeof(p), r);
	for (s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir_made(p);
		*s = '/';
	}
	mkdir_made(p);
}

static int new_group(void)
{
	char r[PATH_MAX];
	struct dirent *de;
	int max = -1, v;
	DIR *d;

	if (pathf(r, sizeof(r), "%s/sys/kernel/iommu_groups", g_backing))
		return 0;
	d = opendir(r);
	if (d) {
		while ((de = readdir(d)))
			if (sscanf(de->d_name, "%d", &v) == 1 && v > max)
				max = v;
		closedir(d);
	}
	return max + 1;
}

/* mdev create_store and NVIDIA's create (g_lock held) */
static int mdev_create(int p, int id, const char *buf, size_t len)
{
	struct parent *pa = &parents[p];
	char uuid[UUID_LEN + 1], dir[PATH_MAX], r[PATH_MAX], tgt[PATH_MAX], v[32];
	const struct vtype *t;
	int i, gi, grp;

	if (len < UUID_LEN || len > UUID_LEN + 1 || !uuid_valid(buf))
		return -EINVAL;
	for (i = 0; i < UUID_LEN; i++)
		uuid[i] = (char)tolower((unsigned char)buf[i]);
	uuid[UUID_LEN] = '\0';
	if (pathf(dir, sizeof(dir), "%s/%s", pa->dir, uuid) ||
	    pathf(r, sizeof(r), "sys/bus/mdev/devices/%s", uuid))
		return -EINVAL;
	if (inst_by_uuid(uuid) >= 0 || exists(r))
		return -EEXIST;
	for (i = 0; i < nparents; i++)
		if (!pathf(tgt, sizeof(tgt), "%s/%s", parents[i].dir, uuid) && exists(tgt))
			return -EEXIST;
	if (!ids_has(pa->types, pa->ntypes, id) || avail(p, id) <= 0)
		return -EIO;
	t = type_get(id);
	gi = gi_take(pa->gpu, t);
	if (gi == -1)
		return -EIO;
	i = inst_new(p, id, gi < 0 ? -1 : gi, uuid);
	if (i < 0) {
		if (gi >= 0)
			gi_give(pa->gpu, gi);
		return -EIO;
	}
	if (mkdirat(g_bfd, dir, 0755)) {
		insts[i].live = false;
		if (gi >= 0)
			gi_give(pa->gpu, gi);
		return -EIO;
	}
	pathf(r, sizeof(r), "%s/mdev_type", dir);
	pathf(tgt, sizeof(tgt), "%s/mdev_supported_types/nvidia-%d", pa->dir, id);
	link_to(tgt, r);
	pathf(r, sizeof(r), "%s/remove", dir);
	put(r, "", 0200);
	pathf(r, sizeof(r), "%s/nvidia", dir);
	mkdirat(g_bfd, r, 0755);
	pathf(r, sizeof(r), "%s/nvidia/vgpu_params", dir);
	put(r, "", 0644);
	if (gi >= 0) {
		pathf(r, sizeof(r), "%s/nvidia/gpu_instance_id", dir);
		snprintf(v, sizeof(v), "%d\n", gi);
		put(r, v, 0444);
	}
	grp = new_group();
	pathf(r, sizeof(r), "sys/kernel/iommu_groups/%d/devices", grp);
	mkdir_p(r);
	pathf(r, sizeof(r), "sys/kernel/iommu_groups/%d/devices/%s", grp, uuid);
	link_to(dir, r);
	pathf(r, sizeof(r), "%s/iommu_group", dir);
	pathf(tgt, sizeof(tgt), "sys/kernel/iommu_groups/%d", grp);
	link_to(tgt, r);
	/* the iommufd cdev (CONFIG_VFIO_DEVICE_CDEV): /dev/vfio/devices/vfioN */
	pathf(r, sizeof(r), "%s/vfio-dev/vfio%d", dir, grp);
	mkdir_p(r);
	pathf(r, sizeof(r), "%s/vfio-dev/vfio%d/dev", dir, grp);
	snprintf(v, sizeof(v), "511:%d\n", grp);
	put(r, v, 0444);
	mkdir_p("sys/bus/mdev/devices");
	pathf(r, sizeof(r), "sys/bus/mdev/devices/%s", uuid);
	link_to(dir, r);
	pathf(r, sizeof(r), "%s/mdev_supported_types/nvidia-%d/devices", pa->dir, id);
	mkdir_made(r);
	pathf(r, sizeof(r), "%s/mdev_supported_types/nvidia-%d/devices/%s", pa->dir, id, uuid);
	link_to(dir, r);
	pathf(tgt, sizeof(tgt), "sys/bus/mdev/devices/%s", uuid);
	alias_add(dir, tgt);
	gpu_apply(pa->gpu);
	return 0;
}

/* the device is gone: its directory, links and (if only it was in it) its IOMMU group */
static void mdev_destroy(int i)
{
	struct inst *in = &insts[i];
	struct parent *pa = &parents[in->parent];
	char dir[PATH_MAX], r[PATH_MAX], grp[REL_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	pathf(dir, sizeof(dir), "%s/%s", pa->dir, in->uuid);
	if (!pathf(r, sizeof(r), "%s/iommu_group", dir) && !canon(r, grp, sizeof(grp)) &&
	    !strncmp(grp, "sys/kernel/iommu_groups/", 24) &&
	    !pathf(r, sizeof(r), "%s/%s/devices", g_backing, grp) && (d = opendir(r))) {
		while ((de = readdir(d)))
			n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			     strcmp(de->d_name, in->uuid);
		closedir(d);
		if (!n)
			rm_rf(g_bfd, grp);
	}
	if (!pathf(r, sizeof(r), "sys/bus/mdev/devices/%s", in->uuid))
		unlinkat(g_bfd, r, 0);
	if (!pathf(r, sizeof(r), "%s/mdev_supported_types/nvidia-%d/devices/%s", pa->dir, in->type,
		   in->uuid))
		unlinkat(g_bfd, r, 0);
	rm_rf(g_bfd, dir);
	made_prune();
	alias_del(dir);
	if (in->gi >= 0)
		gi_give(pa->gpu, in->gi);
	in->live = false;
	in->removing = false;
	gpu_apply(pa->gpu);
}

/* mdev remove_store: blocks while the device is open (g_lock held, dropped while waiting) */
static int mdev_remove(int i, const char *buf)
{
	char r[PATH_MAX], uuid[UUID_LEN + 1];
	unsigned long long v;
	long start;
	int e, p;
	bool open;

	e = k_kstrtoull(buf, 0, &v);
	if (e)
		return e;
	if (!v)
		return 0;
	if (insts[i].removing)
		return -EAGAIN;
	copy(uuid, sizeof(uuid), insts[i].uuid);
	p = insts[i].parent;
	pathf(r, sizeof(r), "%s/%s/remove", parents[p].dir, uuid);
	/* the kernel deletes the remove attribute first */
	unlinkat(g_bfd, r, 0);
	if (!is_open(uuid)) {
		mdev_destroy(i);
		return 0;
	}
	insts[i].removing = true;
	start = now_ms();
	for (;;) {
		unlock();
		msleep(20);
		lock();
		rules_refresh();
		open = is_open(uuid);
		if (!open || now_ms() - start >= g_block_ms || fuse_interrupted())
			break;
	}
	if (!open) {
		mdev_destroy(i);
		return 0;
	}
	/* given up: the device stays, with its remove file */
	insts[i].removing = false;
	put(r, "", 0200);
	return fuse_interrupted() ? -EINTR : -EBUSY;
}

/* ------------------------------------------------------------------------------------ */
/* FUSE operations */

/* an open file or directory: the path it was opened by (nullpath_ok: FUSE gives none) */
struct fh {
	int fd;
	DIR *dir;
	char r[];
};

static struct fh *fh_new(const char *r)
{
	struct fh *h = malloc(sizeof(*h) + strlen(r) + 1);

	if (h) {
		h->fd = -1;
		h->dir = NULL;
		strcpy(h->r, r);
	}
	return h;
}

static struct fh *FH(const struct fuse_file_info *fi)
{
	return (struct fh *)(uintptr_t)fi->fh;
}

/* SIGUSR1: libfuse's interrupt of a worker whose client went away */
static void intr_noop(int sig)
{
	(void)sig;
}

static void *e_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->hard_remove = 1;
	cfg->nullpath_ok = 1;
	cfg->use_ino = 0;
	cfg->intr = 1;
	return NULL;
}

static int e_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	const char *r;
	int e;

	if (!path)
		return fstat(FH(fi)->fd, st) ? -errno : 0;
	r = rel(path);
	e = gate(0, r, NULL);
	if (e)
		return e;
	return fstatat(g_bfd, r, st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int e_access(const char *path, int mask)
{
	const char *r = rel(path);
	int e = gate(0, r, NULL);

	if (e)
		return e;
	return faccessat(g_bfd, r, mask, 0) ? -errno : 0;
}

static int e_readlink(const char *path, char *buf, size_t size)
{
	const char *r = rel(path);
	ssize_t k;
	int e = gate(0, r, NULL);

	if (e)
		return e;
	k = readlinkat(g_bfd, r, buf, size - 1);
	if (k < 0)
		return -errno;
	buf[k] = '\0';
	return 0;
}

static int e_opendir(const char *path, struct fuse_file_info *fi)
{
	const char *r = rel(path);
	int fd, e = gate(0, r, NULL);
	struct fh *h;
	DIR *d;

	if (e)
		return e;
	h = fh_new(r);
	if (!h)
		return -ENOMEM;
	fd = openat(g_bfd, r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		free(h);
		return e;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		free(h);
		return -ENOMEM;
	}
	h->dir = d;
	h->fd = fd;
	fi->fh = (uint64_t)(uintptr_t)h;
	return 0;
}

static int e_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		     struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	DIR *d = FH(fi)->dir;
	char child[PATH_MAX];
	struct dirent *de;
	struct stat st;
	const char *r = FH(fi)->r;
	bool hide;

	(void)path;
	(void)off;
	(void)flags;
	rewinddir(d);
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !pathf(child, sizeof(child), "%s/%s", r, de->d_name)) {
			lock();
			rules_refresh();
			hide = vanished(strcmp(r, ".") ? child : de->d_name);
			unlock();
			if (hide)
				continue;
		}
		memset(&st, 0, sizeof(st));
		st.st_ino = de->d_ino;
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		if (fill(buf, de->d_name, &st, 0, 0))
			break;
	}
	return 0;
}

static int e_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	closedir(FH(fi)->dir);
	free(FH(fi));
	return 0;
}

static int e_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	const char *r = FH(fi)->r;
	int e = gate(OP_FSYNC, r, NULL);

	(void)path;
	if (!e && (datasync ? fdatasync(FH(fi)->fd) : fsync(FH(fi)->fd)))
		e = -errno;
	journal(e, "fsync %s", r);
	return e;
}

static int e_mkdir(const char *path, mode_t mode)
{
	const char *r = rel(path);
	int e = gate(OP_MKDIR, r, NULL);

	if (!e && in_kernel_tree(r))
		e = -EPERM;
	if (!e && mkdirat(g_bfd, r, mode))
		e = -errno;
	if (!e && !geteuid())
		fchownat(g_bfd, r, fuse_get_context()->uid, fuse_get_context()->gid,
			 AT_SYMLINK_NOFOLLOW);
	journal(e, "mkdir %s", r);
	return e;
}

static int e_unlink(const char *path)
{
	const char *r = rel(path);
	int e = gate(OP_UNLINK, r, NULL);

	if (!e && in_kernel_tree(r))
		e = -EPERM;
	if (!e && unlinkat(g_bfd, r, 0))
		e = -errno;
	journal(e, "unlink %s", r);
	return e;
}

static int e_rmdir(const char *path)
{
	const char *r = rel(path);
	int e = gate(OP_RMDIR, r, NULL);

	if (!e && in_kernel_tree(r))
		e = -EPERM;
	if (!e && unlinkat(g_bfd, r, AT_REMOVEDIR))
		e = -errno;
	journal(e, "rmdir %s", r);
	return e;
}

static int e_symlink(const char *target, const char *path)
{
	const char *r = rel(path);
	int e = gate(OP_SYMLINK, r, NULL);

	if (!e && in_kernel_tree(r))
		e = -EPERM;
	if (!e && symlinkat(target, g_bfd, r))
		e = -errno;
	if (!e && !geteuid())
		fchownat(g_bfd, r, fuse_get_context()->uid, fuse_get_context()->gid,
			 AT_SYMLINK_NOFOLLOW);
	journal(e, "symlink %s %s", r, target);
	return e;
}

static int e_rename(const char *from, const char *to, unsigned int flags)
{
	char a[PATH_MAX];
	const char *b = rel(to);
	int e;

	copy(a, sizeof(a), rel(from));
	e = gate(OP_RENAME, a, b);
	if (!e && (in_kernel_tree(a) || in_kernel_tree(b)))
		e = -EPERM;
	if (!e && renameat2(g_bfd, a, g_bfd, b, flags))
		e = -errno;
	journal(e, "rename %s %s", a, b);
	return e;
}

static int e_link(const char *from, const char *to)
{
	char a[PATH_MAX];
	const char *b = rel(to);
	int e;

	copy(a, sizeof(a), rel(from));
	e = gate(OP_LINK, a, b);
	if (!e && (in_kernel_tree(a) || in_kernel_tree(b)))
		e = -EPERM;
	if (!e && linkat(g_bfd, a, g_bfd, b, 0))
		e = -errno;
	journal(e, "link %s %s", a, b);
	return e;
}

static int e_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	const char *r = path ? rel(path) : fi ? FH(fi)->r : "?";
	int e = gate(OP_SETATTR, r, NULL);

	if (!e && (fi ? fchmod(FH(fi)->fd, mode) : fchmodat(g_bfd, r, mode, 0)))
		e = -errno;
	journal(e, "chmod %s %04o", r, (unsigned int)mode & 07777);
	return e;
}

static int e_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	const char *r = path ? rel(path) : fi ? FH(fi)->r : "?";
	int e = gate(OP_SETATTR, r, NULL);

	if (!e &&
	    (fi ? fchown(FH(fi)->fd, uid, gid) : fchownat(g_bfd, r, uid, gid, AT_SYMLINK_NOFOLLOW)))
		e = -errno;
	journal(e, "chown %s %d:%d", r, (int)uid, (int)gid);
	return e;
}

static int e_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	const char *r = path ? rel(path) : fi ? FH(fi)->r : "?";
	int e = gate(OP_SETATTR, r, NULL);

	if (!e && (fi ? futimens(FH(fi)->fd, tv) : utimensat(g_bfd, r, tv, AT_SYMLINK_NOFOLLOW)))
		e = -errno;
	journal(e, "utimens %s", r);
	return e;
}

static bool is_special(const char *r)
{
	int a, b;
	enum skind k;

	lock();
	k = special(r, &a, &b);
	unlock();
	return k != SK_NONE;
}

static int e_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	const char *r = path ? rel(path) : fi ? FH(fi)->r : "?";
	int fd, e = gate(OP_TRUNCATE, r, NULL);

	/* sysfs ignores truncation: the driver files keep their state */
	if (!e && is_special(r))
		goto out;
	if (!e && fi) {
		if (ftruncate(FH(fi)->fd, size))
			e = -errno;
	} else if (!e) {
		fd = openat(g_bfd, r, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || ftruncate(fd, size))
			e = -errno;
		if (fd >= 0)
			close(fd);
	}
out:
	journal(e, "truncate %s %lld", r, (long long)size);
	return e;
}

static int e_open(const char *path, struct fuse_file_info *fi)
{
	const char *r = rel(path);
	int flags = fi->flags, e = gate(0, r, NULL);
	struct fh *h;

	if (e)
		return e;
	if (in_kernel_tree(r)) {
		fi->direct_io = 1;
		if (is_special(r))
			flags &= ~O_TRUNC;
	}
	if (is_kmsg(r))
		fi->direct_io = 1; /* a record per read */
	h = fh_new(r);
	if (!h)
		return -ENOMEM;
	h->fd = openat(g_bfd, r, flags | O_CLOEXEC);
	if (h->fd < 0) {
		e = -errno;
		free(h);
		return e;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	return 0;
}

static int e_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	const char *r = rel(path);
	int fd, e = gate(OP_CREATE, r, NULL);
	struct fh *h = NULL;

	/* a kernfs directory has no ->create */
	if (!e && in_kernel_tree(r))
		e = -EACCES;
	if (!e && !(h = fh_new(r)))
		e = -ENOMEM;
	if (!e) {
		fd = openat(g_bfd, r, fi->flags | O_CREAT | O_CLOEXEC, mode);
		if (fd < 0) {
			e = -errno;
			free(h);
		} else {
			h->fd = fd;
			fi->fh = (uint64_t)(uintptr_t)h;
			if (!geteuid())
				fchown(fd, fuse_get_context()->uid, fuse_get_context()->gid);
		}
	}
	journal(e, "create %s", r);
	return e;
}

static int e_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	const char *r = FH(fi)->r;
	int fd = FH(fi)->fd, e = gate(OP_READ, r, NULL);
	ssize_t k;

	(void)path;
	if (e)
		return e;
	if (is_kmsg(r))
		return kmsg_read(fd, buf, size, off, fi->flags);
	if (in_kernel_tree(r)) {
		/* no torn reads while the model rewrites a state file */
		lock();
		k = pread(fd, buf, size, off);
		e = errno;
		unlock();
	} else {
		k = pread(fd, buf, size, off);
		e = errno;
	}
	return k < 0 ? -e : (int)k;
}

/*
 * A write to a vGPU's vgpu_params (parent @p, mdev instance @i or -1 for a
 * VF): the whole set at once, replacing the file (blanks only: cleared, as
 * "a space clears it"); refused while the vGPU is open (`open ID` rule) with
 * EBUSY.  NVIDIA documents no errno for that: the parameters are read when
 * the vGPU is opened, and EBUSY is what the driver returns for its other
 * writes to a device in use.
 */
static int params_store(const char *r, int p, int i, const char *val, size_t n)
{
	char out[SYSFS_MAX + 2];
	const char *id = i >= 0 ? insts[i].uuid : base(parents[p].dir);
	size_t k = n;

	if (is_open(id))
		return -EBUSY;
	while (k && (val[k - 1] == '\n' || val[k - 1] == ' ' || val[k - 1] == '\t'))
		k--;
	if (strspn(val, " \t\n") >= k)
		k = 0;
	memcpy(out, val, k);
	out[k] = '\n';
	out[k + 1] = '\0';
	return put(r, k ? out : "", 0644);
}

static int e_write(const char *path, const char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	const char *r = FH(fi)->r;
	char val[SYSFS_MAX + 1], esc[VALUE_MAX * 4 + 8];
	size_t n = size > SYSFS_MAX ? SYSFS_MAX : size;
	enum skind k = SK_NONE;
	ssize_t w;
	long ms = 0;
	int e = 0, a = -1, b = -1;

	(void)path;
	e = gate(0, r, NULL);
	if (!e) {
		lock();
		ms = delay_of(r);
		unlock();
		if (ms)
			msleep(ms);
		e = gate(OP_WRITE, r, NULL);
	}
	escape(buf, size, esc, sizeof(esc));
	if (e)
		goto out;
	{
		lock();
		k = special(r, &a, &b);
		if (k != SK_NONE) {
			memcpy(val, buf, n);
			val[n] = '\0';
		}
		switch (k) {
		case SK_VFIO:
			e = vfio_store(a, val);
			break;
		case SK_CREATE:
			e = mdev_create(a, b, val, n);
			break;
		case SK_REMOVE:
			e = mdev_remove(b, val);
			break;
		case SK_GONE:
			e = -ENODEV;
			break;
		case SK_PARAMS:
			e = params_store(r, a, b, val, n);
			break;
		case SK_NONE:
			break;
		}
		unlock();
		if (k != SK_NONE)
			goto out;
	}
	w = pwrite(FH(fi)->fd, buf, size, off);
	if (w < 0)
		e = -errno;
	else
		size = (size_t)w;
out:
	journal(e, "write %s %s", r, esc);
	return e ? e : (int)size;
}

static int e_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int e_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close(FH(fi)->fd);
	free(FH(fi));
	return 0;
}

static int e_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	const char *r = FH(fi)->r;
	int e = gate(OP_FSYNC, r, NULL);

	(void)path;
	if (!e && (datasync ? fdatasync(FH(fi)->fd) : fsync(FH(fi)->fd)))
		e = -errno;
	journal(e, "fsync %s", r);
	return e;
}

static int e_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	return fstatvfs(g_bfd, st) ? -errno : 0;
}

static const struct fuse_operations ops = {
	.init = e_init,
	.getattr = e_getattr,
	.access = e_access,
	.readlink = e_readlink,
	.opendir = e_opendir,
	.readdir = e_readdir,
	.releasedir = e_releasedir,
	.fsyncdir = e_fsyncdir,
	.mkdir = e_mkdir,
	.unlink = e_unlink,
	.rmdir = e_rmdir,
	.symlink = e_symlink,
	.rename = e_rename,
	.link = e_link,
	.chmod = e_chmod,
	.chown = e_chown,
	.utimens = e_utimens,
	.truncate = e_truncate,
	.open = e_open,
	.create = e_create,
	.read = e_read,
	.write = e_write,
	.flush = e_flush,
	.release = e_release,
	.fsync = e_fsync,
	.statfs = e_statfs,
	/* no .lock/.flock: the kernel keeps POSIX and flock locks locally, across processes */
};

/* ------------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fputs("Usage: vgpu-emu [--control FILE] [--log FILE] [--type ID=NAME]... [--per-gi ID=N]...\n"
	      "                [--mixed-max ID=N]... [--board-types] [--block-timeout SECONDS]\n"
	      "                BACKING MOUNTPOINT [FUSE options]\n"
	      "       vgpu-emu --check [--type ID=NAME]... [--per-gi ID=N]... [--mixed-max ID=N]...\n"
	      "                [--board-types] BACKING\n"
	      "Mounts BACKING at MOUNTPOINT (in the foreground) with the kernel and NVIDIA vGPU\n"
	      "driver behaviour of tests/emu/README.md. Unmount (fusermount3 -u) or send\n"
	      "SIGTERM to stop. --check only builds the model and reports (exit 1) where it\n"
	      "disagrees with BACKING.\n",
	      f);
}

static char *absolute(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return strdup(p);
	out = malloc(strlen(cwd) + strlen(p) + 2);
	if (out)
		sprintf(out, "%s/%s", cwd, p);
	return out;
}

/* fuse_main() without daemonizing (and without libfuse 3.14's max_threads warning) */
static int run(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_loop_config lc = { .clone_fd = 0, .max_idle_threads = 16 };
	struct fuse_cmdline_opts o;
	struct fuse *f;
	int r = 1;

	if (fuse_parse_cmdline(&args, &o))
		return 2;
	if (!o.mountpoint) {
		usage(stderr);
		goto out;
	}
	/*
	 * e_init() turns interrupts on (cfg->intr) after fuse_new(), where
	 * libfuse would have installed its SIGUSR1 handler: a client killed
	 * mid-request makes libfuse signal the worker, and without a handler
	 * SIGUSR1 killed the emulator (exit 138).  A handler that does nothing
	 * (no SA_RESTART) only interrupts the worker's wait, as libfuse's does.
	 */
	{
		struct sigaction sa = { .sa_handler = intr_noop };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	f = fuse_new(&args, &ops, sizeof(ops), NULL);
	if (!f)
		goto out;
	if (!fuse_mount(f, o.mountpoint)) {
		if (!fuse_set_signal_handlers(fuse_get_session(f))) {
			r = o.singlethread ? fuse_loop(f) : fuse_loop_mt(f, &lc);
			/* stopped by a signal: the loop returns its number */
			if (r == SIGTERM || r == SIGINT || r == SIGHUP)
				r = 0;
			fuse_remove_signal_handlers(fuse_get_session(f));
		}
		fuse_unmount(f);
	}
	fuse_destroy(f);
out:
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *fargv[64], *log = NULL, *eq, *end;
	int i = 1, fargc = 0, check = 0;
	struct vtype *t;
	long id, k;

	while (i < argc && argv[i][0] == '-' && argv[i][1] == '-') {
		const char *o = argv[i];

		if (!strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(o, "--check")) {
			check = 1;
			i++;
			continue;
		}
		if (!strcmp(o, "--board-types")) {
			g_board_types = true;
			i++;
			continue;
		}
		if (i + 1 >= argc)
			break;
		if (!strcmp(o, "--control")) {
			g_control = absolute(argv[i + 1]);
		} else if (!strcmp(o, "--log")) {
			log = argv[i + 1];
		} else if (!strcmp(o, "--block-timeout")) {
			g_block_ms = (long)(strtod(argv[i + 1], &end) * 1000);
			if (*end || g_block_ms < 0) {
				usage(stderr);
				return 2;
			}
		} else if (!strcmp(o, "--type")) {
			eq = strchr(argv[i + 1], '=');
			id = eq ? strtol(argv[i + 1], &end, 10) : 0;
			if (!eq || end != eq || id <= 0 || id > INT_MAX ||
			    !type_add((int)id, eq + 1)->named) {
				note("--type %s: want ID=NAME with a vGPU type name", argv[i + 1]);
				return 2;
			}
		} else if (!strcmp(o, "--per-gi")) {
			eq = strchr(argv[i + 1], '=');
			id = eq ? strtol(argv[i + 1], &end, 10) : 0;
			if (!eq || end != eq || id <= 0 || id > INT_MAX)
				k = 0;
			else
				k = strtol(eq + 1, &end, 10);
			if (k <= 0 || k > 1024 || *end || end == eq + 1 ||
			    !(t = type_add((int)id, NULL))) {
				note("--per-gi %s: want ID=N, N vGPUs of type ID per GI (1-1024)",
				     argv[i + 1]);
				return 2;
			}
			t->per_gi = (int)k;
			t->per_gi_opt = true;
		} else if (!strcmp(o, "--mixed-max")) {
			eq = strchr(argv[i + 1], '=');
			id = eq ? strtol(argv[i + 1], &end, 10) : 0;
			if (!eq || end != eq || id <= 0 || id > INT_MAX)
				k = 0;
			else
				k = strtol(eq + 1, &end, 10);
			if (k <= 0 || k > 1024 || *end || end == eq + 1 ||
			    !(t = type_add((int)id, NULL))) {
				note("--mixed-max %s: want ID=N, at most N vGPUs of type ID per GPU "
				     "in mixed-size mode (1-1024)",
				     argv[i + 1]);
				return 2;
			}
			t->mixed_max = (int)k;
		} else {
			break;
		}
		i += 2;
	}
	if (argc - i < 2 - check) {
		usage(stderr);
		return 2;
	}
	if (!realpath(argv[i], g_backing) ||
	    (g_bfd = open(g_backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		note("backing '%s': %s", argv[i], strerror(errno));
		return 1;
	}
	if (log && (g_logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		note("log '%s': %s", log, strerror(errno));
		return 1;
	}
	umask(0);
	scan_host();
	if (check)
		return g_notes ? 1 : 0;
	kmsg_init();
	lock();
	rules_refresh();
	unlock();
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[i + 1];
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=vgpu-emu,subtype=vgpu-emu";
	for (i += 2; i < argc && fargc < 63; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc] = NULL;
	return run(fargc, fargv);
}
