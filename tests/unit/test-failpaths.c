// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-failpaths - every failure path of every public library function, one
 * table row each (issue #11: "every library failure path has a message").
 *
 * A row names the function, the path in words, a runner that forces it and
 * the -errno it must return.  Functions that take a struct vgpu_ctx must
 * also leave a message that is non-empty, one line, not the one left by an
 * earlier failure (each row starts with a stale message in the context) and
 * contains the row's `names`: the file, argument or value that failed
 * ("ROOT" stands for the row's temporary tree).  Functions without a
 * context (the sysfs readers, the pure parsers) report by code alone: the
 * code must be the row's and vgpu_strerror() must know it; out-parameters
 * are checked untouched where the header promises it.
 *
 * Paths nothing outside can reach are listed in comments where their rows
 * would be: out of memory aborts by policy (ctx.h), and a few system calls
 * cannot fail on an open descriptor.
 *
 * Faults the host cannot be made to give are injected: getrandom() and the
 * openat2 syscall through the linker's --wrap (see meson.build), libvirt
 * through a stand-in libvirt.so.0 (fake-libvirt/) found first through the
 * executable's DT_RPATH (searched before LD_LIBRARY_PATH).
 * Each row runs as its own cmocka test with a fresh tree and context.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "domxml.h"
#include "nccl-topo.h"
#include "live.h"
#include "plan.h"
#include "catalog.h"
#include "records.h"
#include "read-host.h"
#include "read-topo.h"
#include "outfile.h"
#include "sysfs-lock.h"
#include "sysfs-state.h"
#include "sysfs.h"
#include "test-hosts.h"
#include "test-util.h"
#include "vgputype.h"
#include "virt.h"

#define STALE "stale message from an earlier failure"
#define VM_UUID "7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f"
#define MDEV_UUID "11111111-2222-4333-8444-555555555555"

/* An out-parameter's value before the call: a failing call must leave it. */
static char stale_text[] = STALE;

/* ---- injected faults ----------------------------------------------------------------- */

static struct {
	int openat2; /* errno for the openat2 syscall, 0: pass through */
	int getrandom; /* errno for getrandom(), 0: pass through */
	ssize_t getrandom_short; /* > 0: getrandom() returns this many bytes, errno untouched */
} faults;

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);
ssize_t __real_getrandom(void *buf, size_t len, unsigned flags);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags);

/* The library calls syscall() for openat2 alone: four arguments. */
long __wrap_syscall(long nr, ...)
{
	long a[4];
	va_list ap;

	va_start(ap, nr);
	for (size_t i = 0; i < ARRAY_SIZE(a); i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_openat2 && faults.openat2) {
		errno = faults.openat2;
		return -1;
	}
	return __real_syscall(nr, a[0], a[1], a[2], a[3]);
}

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned flags)
{
	if (faults.getrandom) {
		errno = faults.getrandom;
		return -1;
	}
	if (faults.getrandom_short > 0 && (size_t)faults.getrandom_short < len) {
		memset(buf, 0x5a, (size_t)faults.getrandom_short);
		return faults.getrandom_short;
	}
	return __real_getrandom(buf, len, flags);
}

/* ---- the table ------------------------------------------------------------------------- */

struct env;

/* What a sysfs-reader row does (run_sysdir) or which pure parser it calls (run_pure). */
enum op {
	OP_NONE,
	OP_SYSDIR_OPEN,
	OP_SYSDIR_OPEN_AT,
	OP_READ_STR,
	OP_READ_LONG,
	OP_READ_HEX,
	OP_READ_CPULIST,
	OP_READ_CPUMASK,
	OP_READ_FILE,
	OP_READ_TAIL,
	OP_READLINK,
	OP_LINK_BASENAME,
	OP_STAT,
	OP_LSTAT,
	OP_LIST_DIR,
	OP_WRITE,
	OP_PARSE_LONG,
	OP_PARSE_HEX,
	OP_BDF,
	OP_CPULIST,
	OP_CPUMASK,
	OP_TYPE_PARSE,
	OP_SIZE_KIB,
};

struct fail_case {
	const char *fn; /* the public function */
	const char *path; /* the failure path, in words */
	int (*run)(struct env *e);
	int want; /* what it returns */
	const char *names; /* the message names this ("ROOT": the tree); NULL: no context */
	enum op op; /* run_sysdir, run_pure: what to call */
	const char *arg; /* run_sysdir: the path below ROOT/dev; run_pure: the input */
};

struct env {
	const struct fail_case *c;
	char base[512]; /* the mkdtemp() directory */
	char root[600]; /* base/root: the host tree rows build */
	struct vgpu_ctx ctx;
	struct warnings warn;
};

/* ---- helpers ----------------------------------------------------------------------------- */

static void put(struct env *e, const char *rel, const char *content)
{
	tree_put(e->root, rel, content);
}

/* @n copies of @c and a newline, at ROOT/@rel. */
static void put_run(struct env *e, const char *rel, char c, size_t n)
{
	char *s = malloc(n + 2);

	assert_non_null(s);
	memset(s, c, n);
	strcpy(s + n, "\n");
	put(e, rel, s);
	free(s);
}

/* "1" and 2048 zero digits: CPU 8192, one past the last a set can hold. */
static char *mask_8192(void)
{
	char *s = malloc(2050);

	assert_non_null(s);
	s[0] = '1';
	memset(s + 1, '0', 2048);
	s[2049] = '\0';
	return s;
}

/* A name or path of @n times @c (heap). */
static char *long_string(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static struct vgpu_sysfs *open_root(struct env *e, const char *root)
{
	struct vgpu_sysfs *fs = NULL;
	int r = vgpu_sysfs_open(&e->ctx, root, &fs);

	if (r < 0)
		fail_msg("vgpu_sysfs_open('%s') = %d: %s", root ? root : "/", r,
			 vgpu_ctx_error(&e->ctx));
	return fs;
}

/*
 * The tree the sysfs-reader rows look at, below ROOT/dev (opened as a
 * directory: RESOLVE_BENEATH), and a file beside it.
 */
static void std_tree(struct env *e)
{
	char *p = long_string('p', 250), *q = long_string('q', 250), rel[600];
	char *mask = mask_8192();

	put(e, "outside", "0\n");
	put(e, "dev/attr", "1\n");
	put(e, "dev/empty", "");
	put(e, "dev/nan", "abc\n");
	put(e, "dev/neg", "-1\n");
	put(e, "dev/huge", "99999999999999999999\n");
	put(e, "dev/hex", "0x10000\n");
	put(e, "dev/hex-huge", "0x1ffffffffffffffff\n");
	put(e, "dev/cpus", "0-x\n");
	put(e, "dev/cpus-range", "9000\n");
	put(e, "dev/mask", "1,0\n");
	put(e, "dev/mask-range", mask);
	put_run(e, "dev/big", '7', 100);
	put_run(e, "dev/cpus-big", '0', 30000);
	tree_put_len(e->root, "dev/nul", "a\0b\n", 4);
	tree_fifo(e->root, "dev/fifo");
	tree_dir(e->root, "dev/dir");
	tree_link(e->root, "dev/gone", "nowhere");
	tree_link(e->root, "dev/up", "../outside");
	tree_link(e->root, "dev/loop", "loop");
	tree_link(e->root, "dev/driver", "../../bus/pci/drivers/nvidia");
	tree_link(e->root, "dev/slash", "devices/");
	/* ROOT/dev/P/Q/R: dev/P and Q/R fit a path, joined they do not */
	snprintf(rel, sizeof(rel), "dev/%s/%s/rrrrrrrrrr", p, q);
	tree_dir(e->root, rel);
	free(p);
	free(q);
	free(mask);
}

/* ---- rows: the context itself ------------------------------------------------------------ */

static int run_error(struct env *e)
{
	/* a failure code of 0 is not success: -EIO */
	return vgpu_error(&e->ctx, 0, "cannot read '%s'", "x");
}

/* ---- rows: vgpu_sysfs_open, vgpu_file_read ------------------------------------------------ */

/* vgpu_sysfs_open(@root): must fail and leave *out alone. */
static int open_fails(struct env *e, const char *root)
{
	struct vgpu_sysfs *fs = (struct vgpu_sysfs *)&fs;
	int r = vgpu_sysfs_open(&e->ctx, root, &fs);

	if (r == 0)
		vgpu_sysfs_free(fs);
	else if (fs != (struct vgpu_sysfs *)&fs)
		fail_msg("vgpu_sysfs_open() failed and wrote *out");
	return r;
}

static int run_open_empty(struct env *e)
{
	return open_fails(e, "");
}

static int run_open_missing(struct env *e)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/no-root", e->root);
	return open_fails(e, path);
}

static int run_open_file(struct env *e)
{
	char path[700];

	put(e, "file", "x\n");
	snprintf(path, sizeof(path), "%s/file", e->root);
	return open_fails(e, path);
}

static int run_open_loop(struct env *e)
{
	char path[700];

	tree_link(e->root, "loop", "loop");
	snprintf(path, sizeof(path), "%s/loop", e->root);
	return open_fails(e, path);
}

/* Linux before 5.6: no openat2, so no jail for a tree. */
static int run_open_no_openat2(struct env *e)
{
	faults.openat2 = ENOSYS;
	return open_fails(e, e->root);
}

/* openat2 there but refusing (a seccomp filter): even "/" is not opened blind. */
static int run_open_openat2_refused(struct env *e)
{
	faults.openat2 = EPERM;
	return open_fails(e, NULL);
}

static int file_read_fails(struct env *e, const char *path, size_t cap)
{
	char *out = stale_text;
	size_t len = 12345;
	int r = vgpu_file_read(&e->ctx, path, cap, &out, &len);

	if (r == 0)
		free(out);
	else if (out != stale_text || len != 12345)
		fail_msg("vgpu_file_read() failed and wrote *out or *len");
	return r;
}

static int run_file_missing(struct env *e)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/absent.xml", e->root);
	return file_read_fails(e, path, 100);
}

static int run_file_dir(struct env *e)
{
	return file_read_fails(e, e->root, 100);
}

static int run_file_fifo(struct env *e)
{
	char path[700];

	tree_fifo(e->root, "pipe.xml");
	snprintf(path, sizeof(path), "%s/pipe.xml", e->root);
	return file_read_fails(e, path, 100);
}

static int run_file_big(struct env *e)
{
	char path[700];

	put(e, "big.xml", "<domain/>\n");
	snprintf(path, sizeof(path), "%s/big.xml", e->root);
	return file_read_fails(e, path, 9);
}

/* Reading our own memory at address 0 (never mapped): read(2) itself fails. */
static int run_file_read_error(struct env *e)
{
	return file_read_fails(e, "/proc/self/mem", 100);
}

/* ---- rows: the sysfs readers (no context: the code says it) -------------------------------- */

static int run_sysdir(struct env *e)
{
	const struct fail_case *c = e->c;
	const char *rel = c->arg;
	VGPU_AUTOPTR(sysfs) fs = NULL;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSYSDIR sub = { .fd = -1 };
	VGPU_AUTOFREE char *owned = NULL;
	VGPU_AUTOSTRV v = { 0 };
	struct vgpu_cpuset cpus, sentinel;
	struct stat st = { .st_ino = 4242 };
	char buf[8], *text = stale_text;
	unsigned long h = 4242;
	long n = 4242;
	int r = 0, reader = -1;
	struct rlimit old;

	std_tree(e);
	if (strncmp(rel, "host:", 5) == 0) {
		/* on the real root: /proc files the tree cannot have */
		fs = open_root(e, NULL);
		vgpu_sysdir_root(fs, &d);
		rel += 5;
	} else {
		fs = open_root(e, e->root);
		assert_int_equal(vgpu_sysdir_open(fs, &d, "dev"), 0);
	}
	if (strcmp(rel, "LONG") == 0) /* longer than VGPU_PATH_MAX */
		rel = owned = long_string('l', VGPU_PATH_MAX + 10);
	vgpu_cpuset_zero(&sentinel);
	vgpu_cpuset_set(&sentinel, 42);
	cpus = sentinel;
	vgpu_strv_push(&v, vgpu_xstrdup(STALE));
	switch (c->op) {
	case OP_SYSDIR_OPEN:
		/* root-relative: below dev/ like the other rows */
		r = vgpu_sysdir_open(fs, &sub, "%s%s", *rel == '/' ? "" : "dev/", rel);
		break;
	case OP_SYSDIR_OPEN_AT:
		if (strcmp(rel, "JOINED") == 0) {
			char *p = long_string('p', 250), *q = long_string('q', 250);
			VGPU_AUTOSYSDIR parent = { .fd = -1 };

			assert_int_equal(vgpu_sysdir_open_at(&d, &parent, "%s", p), 0);
			r = vgpu_sysdir_open_at(&parent, &sub, "%s/rrrrrrrrrr", q);
			free(p);
			free(q);
		} else {
			r = vgpu_sysdir_open_at(&d, &sub, "%s", rel);
		}
		break;
	case OP_READ_STR:
		r = vgpu_sysfs_read_str(&d, buf, sizeof(buf), "%s", rel);
		break;
	case OP_READ_LONG:
		r = vgpu_sysfs_read_long(&d, &n, 0, 10, "%s", rel);
		break;
	case OP_READ_HEX:
		r = vgpu_sysfs_read_hex(&d, &h, 0xffff, "%s", rel);
		break;
	case OP_READ_CPULIST:
		r = vgpu_sysfs_read_cpulist(&d, &cpus, "%s", rel);
		break;
	case OP_READ_CPUMASK:
		r = vgpu_sysfs_read_cpumask(&d, &cpus, "%s", rel);
		break;
	case OP_READ_FILE:
		r = vgpu_sysfs_read_file(&d, 16, &text, NULL, "%s", rel);
		break;
	case OP_READ_TAIL:
		r = vgpu_sysfs_read_tail(&d, 16, &text, NULL, "%s", rel);
		break;
	case OP_READLINK:
		r = vgpu_sysfs_readlink(&d, buf, sizeof(buf), "%s", rel);
		break;
	case OP_LINK_BASENAME:
		r = vgpu_sysfs_link_basename(&d, buf, 4, "%s", rel);
		break;
	case OP_STAT:
		r = vgpu_sysfs_stat(&d, &st, "%s", rel);
		break;
	case OP_LSTAT:
		r = vgpu_sysfs_lstat(&d, &st, "%s", rel);
		break;
	case OP_LIST_DIR:
		r = vgpu_sysfs_list_dir(&d, &v, "%s", rel);
		break;
	case OP_WRITE:
		if (strcmp(rel, "FIFO-READER") == 0) {
			char path[700];

			snprintf(path, sizeof(path), "%s/dev/fifo", e->root);
			reader = open(path, O_RDONLY | O_NONBLOCK);
			assert_true(reader >= 0);
			rel = "fifo";
		}
		if (strcmp(rel, "FSIZE") == 0) {
			/* a file size limit of 0: the write itself fails (-EFBIG, SIGXFSZ ignored)
			 */
			struct rlimit none = { 0, 0 };

			assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
			none.rlim_max = old.rlim_max;
			signal(SIGXFSZ, SIG_IGN);
			assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
			r = vgpu_sysfs_write(&d, "1", "empty");
			assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
			signal(SIGXFSZ, SIG_DFL);
		} else {
			r = vgpu_sysfs_write(&d, "1", "%s", rel);
		}
		if (reader >= 0) {
			char ch;

			if (read(reader, &ch, 1) > 0)
				fail_msg("a write refused as VGPU_ENOTREG reached the FIFO");
			close(reader);
		}
		break;
	default:
		fail_msg("row without an operation");
	}
	if (r < 0) {
		/* out-parameters are written only on success */
		assert_int_equal(n, 4242);
		assert_int_equal(h, 4242);
		assert_int_equal(st.st_ino, 4242);
		assert_ptr_equal(text, stale_text);
		assert_true(memcmp(&cpus, &sentinel, sizeof(cpus)) == 0);
		assert_int_equal(v.n, 1);
		assert_string_equal(v.items[0], STALE);
	} else if (text != stale_text) {
		free(text);
	}
	return r;
}

/* ---- rows: the pure parsers (no context) ------------------------------------------------- */

static int run_pure(struct env *e)
{
	const struct fail_case *c = e->c;
	VGPU_AUTOFREE char *owned = NULL;
	const char *in = c->arg;
	char bdf[VGPU_BDF_LEN] = "sentinel";
	struct vgpu_cpuset s, sentinel;
	struct vgpu_type_info info;
	unsigned long h = 4242;
	uint64_t kib = 4242;
	long n = 4242;
	int r = 0;

	if (strcmp(in, "MASK8192") == 0)
		in = owned = mask_8192();
	else if (strcmp(in, "LONGNAME") == 0) /* a short name longer than VGPU_PROFILE_MAX */
		in = owned = long_string('A', VGPU_PROFILE_MAX + 10);
	else if (strcmp(in, "LONGSIZE") == 0) /* more digits than a size has */
		in = owned = long_string('1', 70);
	vgpu_cpuset_zero(&sentinel);
	vgpu_cpuset_set(&sentinel, 42);
	s = sentinel;
	switch (c->op) {
	case OP_PARSE_LONG:
		r = vgpu_parse_long(in, &n);
		break;
	case OP_PARSE_HEX:
		r = vgpu_parse_hex(in, &h);
		break;
	case OP_BDF:
		r = vgpu_bdf_normalize(in, bdf);
		break;
	case OP_CPULIST:
		r = vgpu_cpulist_parse(in, &s);
		break;
	case OP_CPUMASK:
		r = vgpu_cpumask_parse(in, &s);
		break;
	case OP_TYPE_PARSE:
		/* the one exception: @out is filled on every return */
		r = vgpu_type_parse(in, &info);
		break;
	case OP_SIZE_KIB:
		r = vgpu_parse_size_kib(in, &kib);
		break;
	default:
		fail_msg("row without a parser");
	}
	assert_int_equal(n, 4242);
	assert_int_equal(h, 4242);
	assert_int_equal(kib, 4242);
	assert_string_equal(bdf, "sentinel");
	assert_true(memcmp(&s, &sentinel, sizeof(s)) == 0);
	return r;
}

/* ---- rows: reading a host into a model ------------------------------------------------------ */

static int model_read_fails(struct env *e, unsigned what)
{
	VGPU_AUTOPTR(sysfs) fs = open_root(e, e->root);
	struct vgpu_model *m = (struct vgpu_model *)&m;
	int r = vgpu_model_read(&e->ctx, fs, what, &m);

	if (r == 0)
		vgpu_model_free(m);
	else if (m != (struct vgpu_model *)&m)
		fail_msg("vgpu_model_read() failed and wrote *out");
	return r;
}

static int run_model_pci_file(struct env *e)
{
	put(e, "sys/bus/pci/devices", "not a directory\n");
	return model_read_fails(e, VGPU_READ_TYPES);
}

static int run_model_pci_dangling(struct env *e)
{
	tree_link(e->root, "sys/bus/pci/devices", "../../devices/pci0000:00");
	return model_read_fails(e, VGPU_READ_TYPES);
}

static int run_model_topology(struct env *e)
{
	tree_dir(e->root, "sys/bus/pci/devices");
	return model_read_fails(e, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY);
}

/* Not asked for, but a GPU with numa_node -1 needs the topology: it fails the same way. */
static int run_model_topology_for_gpu(struct env *e)
{
	put(e, "sys/bus/pci/devices/0000:3b:00.0/vendor", "0x10de\n");
	put(e, "sys/bus/pci/devices/0000:3b:00.0/class", "0x030200\n");
	put(e, "sys/bus/pci/devices/0000:3b:00.0/device", "0x20b7\n");
	put(e, "sys/bus/pci/devices/0000:3b:00.0/numa_node", "-1\n");
	put(e, "sys/bus/pci/devices/0000:3b:00.0/local_cpulist", "0-3\n");
	return model_read_fails(e, 0);
}

static int topology_fails(struct env *e)
{
	VGPU_AUTOPTR(sysfs) fs = open_root(e, e->root);
	struct vgpu_topology t = { .n_cpus = 4242 };
	int r = vgpu_model_read_topology(&e->ctx, fs, &t);

	if (r == 0)
		vgpu_topology_clear(&t);
	else if (t.n_cpus != 4242 || t.nodes || t.core_of)
		fail_msg("vgpu_model_read_topology() failed and wrote *out");
	return r;
}

static int run_topo_no_cpu_dir(struct env *e)
{
	tree_dir(e->root, "sys/devices/system");
	return topology_fails(e);
}

static int run_topo_cpu_dangling(struct env *e)
{
	tree_link(e->root, "sys/devices/system/cpu", "nowhere");
	return topology_fails(e);
}

static int run_topo_no_cpus(struct env *e)
{
	put(e, "sys/devices/system/cpu/online", "\n"); /* empty: warned, then the directories */
	put(e, "sys/devices/system/cpu/kernel_max", "8191\n");
	return topology_fails(e);
}

static int run_topo_node_file(struct env *e)
{
	put(e, "sys/devices/system/cpu/online", "0-3\n");
	put(e, "sys/devices/system/node", "not a directory\n");
	return topology_fails(e);
}

/* ---- rows: planning -------------------------------------------------------------------------- */

static struct vgpu_model *host(const char *name, bool topology)
{
	struct vgpu_model *m = th_build(test_hosts, ARRAY_SIZE(test_hosts), name, topology);

	if (!m)
		fail_msg("no fixture host '%s'", name);
	return m;
}

/* vgpu_plan_make() on @m (freed): must fail and leave *out alone. */
static int plan_fails(struct env *e, struct vgpu_model *m, const struct vgpu_request *req)
{
	struct vgpu_plan *p = (struct vgpu_plan *)&p;
	int r = vgpu_plan_make(&e->ctx, m, req, &p);

	if (r == 0)
		vgpu_plan_free(p);
	else if (p != (struct vgpu_plan *)&p)
		fail_msg("vgpu_plan_make() failed and wrote *out");
	vgpu_model_free(m);
	return r;
}

#define REQ(...)                                                                                   \
	{                                                                                          \
		.profiles = { __VA_ARGS__ },                                                       \
		.n_profiles = ARRAY_SIZE(((const char *[]){ __VA_ARGS__ })), .vcpus = 2            \
	}

static int run_plan_no_topology(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	return plan_fails(e, host("a30-dual-mdev", false), &req);
}

static int run_plan_no_profiles(struct env *e)
{
	struct vgpu_request req = { .vcpus = 2 };

	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_too_many(struct env *e)
{
	struct vgpu_request req =
		REQ("A30-4C", "A30-4C", "A30-4C", "A30-4C", "A30-4C", "A30-4C", "A30-4C", "A30-4C");

	req.n_profiles = VGPU_MAX_VGPUS + 1;
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_gpu_unknown(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.gpu = "0000:99:00.0";
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_vf_unknown(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.vf = "0000:99:00.4";
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_vf_other_gpu(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.gpu = "0000:3b:00.0";
	req.vf = "0000:af:00.4";
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

/* A GPU with an empty catalogue on a one-node, four-CPU host. */
static int run_plan_no_types(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");
	struct vgpu_model *m = vgpu_model_new();
	struct vgpu_topology t = { 0 };

	vgpu_model_add_gpu(m, "0000:3b:00.0", 0x20b7)->numa_node = 0;
	t.nodes = vgpu_xcalloc(1, sizeof(*t.nodes));
	t.n_nodes = 1;
	parse_cpus("0-3", &t.nodes[0].cpus);
	t.online = t.nodes[0].cpus;
	t.n_cpus = 4;
	t.core_of = vgpu_xcalloc(4, sizeof(*t.core_of));
	for (int c = 0; c < 4; c++)
		t.core_of[c] = c;
	vgpu_model_set_topology(m, &t);
	return plan_fails(e, m, &req);
}

static int run_plan_profile_unknown(struct env *e)
{
	struct vgpu_request req = REQ("A30-99C");

	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_vf_in_use(struct env *e)
{
	struct vgpu_request req = REQ("L40S-4Q");

	req.vf = "0000:41:00.5";
	return plan_fails(e, host("vfio-ts-l40s", true), &req);
}

static int run_plan_vf_not_offered(struct env *e)
{
	struct vgpu_request req = REQ("A30-1-6C");

	req.vf = "0000:3b:00.4";
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

/* 0000:41:00.5 holds an L40S-4Q: no other time-sliced size on that GPU. */
static int run_plan_vf_gpu_full(struct env *e)
{
	/* its GPU holds a 4 GB vGPU: another size is not offered (equal-size mode) */
	struct vgpu_request req = REQ("L40S-8C");

	req.vf = "0000:41:00.4";
	return plan_fails(e, host("vfio-ts-l40s", true), &req);
}

static int run_plan_none_free(struct env *e)
{
	struct vgpu_request req = REQ("A30-1-6C");

	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_none_free_on_gpu(struct env *e)
{
	struct vgpu_request req = REQ("A30-2-12C"); /* free on 0000:af:00.0 only */

	req.gpu = "0000:3b:00.0";
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_node_unknown(struct env *e)
{
	struct vgpu_request req = REQ("A100D-8C");
	struct vgpu_model *m = host("numa-unknown", true);

	m->gpus[0].numa_node = -1;
	return plan_fails(e, m, &req);
}

/* One A30-24C fills GPU 0000:3b:00.0; the other A30 is on node 1. */
static int run_plan_second_vgpu(struct env *e)
{
	struct vgpu_request req = REQ("A30-24C", "A30-24C");

	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_zero_vcpus(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.vcpus = 0;
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_node_full(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.vcpus = 1000;
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

static int run_plan_node_missing(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");
	struct vgpu_model *m = host("a30-dual-mdev", true);

	m->gpus[0].numa_node = 7; /* a node the topology does not have */
	req.gpu = "0000:3b:00.0";
	return plan_fails(e, m, &req);
}

static int run_plan_memory(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	req.memory_kib = 1ULL << 40;
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

/* vgpu_plan_cpus() on the A30 host's topology: must fail and leave @out alone. */
static int plan_cpus_fails(struct env *e, int node, const char *busy, unsigned vcpus)
{
	VGPU_AUTOPTR(model) m = host("a30-dual-mdev", true);
	struct vgpu_plan out = { .node = 4242 };
	struct vgpu_cpuset b;
	int r;

	parse_cpus(busy, &b);
	r = vgpu_plan_cpus(&e->ctx, &m->topo, node, &b, vcpus, &out);
	if (r == 0)
		free(out.pins);
	else if (out.pins || out.vcpus || out.node != 4242)
		fail_msg("vgpu_plan_cpus() failed and wrote @out");
	return r;
}

static int run_cpus_zero(struct env *e)
{
	return plan_cpus_fails(e, 0, "", 0);
}

static int run_cpus_too_many(struct env *e)
{
	return plan_cpus_fails(e, 0, "", VGPU_MAX_CPUS + 1);
}

static int run_cpus_no_node(struct env *e)
{
	return plan_cpus_fails(e, 9, "", 2);
}

static int run_cpus_none_left(struct env *e)
{
	return plan_cpus_fails(e, 0, "0-95", 2);
}

static int run_cpus_too_few(struct env *e)
{
	return plan_cpus_fails(e, 0, "0-21,48-69", 6);
}

/* ---- rows: domain XML ------------------------------------------------------------------------ */

static xmlDocPtr parse_ok(struct env *e, const char *xml)
{
	xmlDocPtr doc = NULL;
	int r = vgpu_domain_parse(&e->ctx, xml, strlen(xml), "test.xml", &doc);

	if (r < 0)
		fail_msg("cannot parse %s: %s", xml, vgpu_ctx_error(&e->ctx));
	vgpu_error(&e->ctx, -EIO, STALE); /* the row's failure must replace it */
	return doc;
}

static int parse_fails(struct env *e, const char *xml, size_t len)
{
	xmlDocPtr doc = (xmlDocPtr)&doc;
	int r = vgpu_domain_parse(&e->ctx, xml, len, "tpl.xml", &doc);

	if (r == 0)
		xmlFreeDoc(doc);
	else if (doc != (xmlDocPtr)&doc)
		fail_msg("vgpu_domain_parse() failed and wrote *out");
	return r;
}

static int run_parse_too_big(struct env *e)
{
	size_t len = VGPU_XML_MAX_SIZE + 1;
	char *big = malloc(len);
	int r;

	assert_non_null(big);
	memset(big, ' ', len);
	r = parse_fails(e, big, len);
	free(big);
	return r;
}

static int run_parse_not_xml(struct env *e)
{
	return parse_fails(e, "<domain><name>x</name>", 22);
}

static int run_parse_empty(struct env *e)
{
	return parse_fails(e, "", 0);
}

static int run_parse_not_domain(struct env *e)
{
	return parse_fails(e, "<network/>", 10);
}

static int run_parse_namespace(struct env *e)
{
	return parse_fails(e, "<domain xmlns='urn:x'/>", 23);
}

static int run_parse_dtd(struct env *e)
{
	static const char xml[] = "<!DOCTYPE domain [<!ENTITY a 'b'>]><domain/>";

	return parse_fails(e, xml, sizeof(xml) - 1);
}

static int run_pinned_not_xml(struct env *e)
{
	struct vgpu_cpuset out, sentinel;
	int r;

	vgpu_cpuset_zero(&sentinel);
	vgpu_cpuset_set(&sentinel, 42);
	out = sentinel;
	r = vgpu_domain_pinned_cpus(&e->ctx, "<domain><vcpu cpuset='1'>", &out);
	assert_true(memcmp(&out, &sentinel, sizeof(out)) == 0);
	return r;
}

static int memory_fails(struct env *e, const char *xml)
{
	VGPU_AUTOPTR(xmldoc) doc = parse_ok(e, xml);
	uint64_t kib = 4242;
	int r = vgpu_domain_memory_kib(&e->ctx, doc, &kib);

	assert_int_equal(kib, 4242);
	return r;
}

static int run_memory_none(struct env *e)
{
	return memory_fails(e, "<domain><name>x</name></domain>");
}

static int run_memory_unit(struct env *e)
{
	return memory_fails(e, "<domain><memory unit='parsecs'>4</memory></domain>");
}

static int run_memory_zero(struct env *e)
{
	return memory_fails(e, "<domain><memory unit='KiB'>0</memory></domain>");
}

static int run_memory_fraction(struct env *e)
{
	return memory_fails(e, "<domain><memory>1.5</memory></domain>");
}

/* vgpu_domain_read_meta() on @xml: must fail and leave *out alone. */
static int meta_fails(struct env *e, const char *vgpus, const char *owner)
{
	char xml[4096];
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	struct vgpu_meta m = { .owner = "S", .node = 4242 };
	int r;

	snprintf(xml, sizeof(xml),
		 "<domain><name>x</name><metadata><v:vgpus xmlns:v='" VGPU_XML_NS
		 "' %s node='0'>%s</v:vgpus></metadata></domain>",
		 owner, vgpus);
	doc = parse_ok(e, xml);
	r = vgpu_domain_read_meta(&e->ctx, doc, &m);
	if (r == 0)
		vgpu_meta_clear(&m);
	else if (strcmp(m.owner, "S") || m.node != 4242 || m.n_vgpus)
		fail_msg("vgpu_domain_read_meta() failed and wrote *out");
	return r;
}

#define OWNER "owner='" VM_UUID "'"
#define VGPU_OK                                                                                    \
	"<v:vgpu profile='A30-6C' type-id='684' interface='mdev' gpu='0000:3b:00.0' "              \
	"vf='0000:3b:00.4' mdev-uuid='" MDEV_UUID "'/>"

static int run_meta_none(struct env *e)
{
	VGPU_AUTOPTR(xmldoc) doc = parse_ok(e, "<domain><name>x</name><metadata/></domain>");
	struct vgpu_meta m = { .owner = "S" };
	int r = vgpu_domain_read_meta(&e->ctx, doc, &m);

	assert_string_equal(m.owner, "S");
	return r;
}

static int run_meta_no_owner(struct env *e)
{
	return meta_fails(e, VGPU_OK, "");
}

static int run_meta_bad_owner(struct env *e)
{
	return meta_fails(e, VGPU_OK, "owner='xyz'");
}

static int run_meta_too_many(struct env *e)
{
	char vgpus[2048] = "";

	for (int i = 0; i <= VGPU_MAX_VGPUS; i++)
		strcat(vgpus, VGPU_OK);
	return meta_fails(e, vgpus, OWNER);
}

static int run_meta_no_profile(struct env *e)
{
	return meta_fails(e, "<v:vgpu type-id='684'/>", OWNER);
}

static int run_meta_type_id(struct env *e)
{
	return meta_fails(e, "<v:vgpu profile='A30-6C' type-id='0x2ac'/>", OWNER);
}

static int run_meta_interface(struct env *e)
{
	return meta_fails(e, "<v:vgpu profile='A30-6C' type-id='684' interface='pci'/>", OWNER);
}

static int run_meta_gpu(struct env *e)
{
	return meta_fails(e,
			  "<v:vgpu profile='A30-6C' type-id='684' interface='mdev' gpu='nope' "
			  "vf='0000:3b:00.4'/>",
			  OWNER);
}

static int run_meta_vf(struct env *e)
{
	return meta_fails(e,
			  "<v:vgpu profile='A30-6C' type-id='684' interface='mdev' "
			  "gpu='0000:3b:00.0'/>",
			  OWNER);
}

static int run_meta_mdev_uuid(struct env *e)
{
	return meta_fails(e,
			  "<v:vgpu profile='A30-6C' type-id='684' interface='mdev' "
			  "gpu='0000:3b:00.0' vf='0000:3b:00.4' mdev-uuid='zzz'/>",
			  OWNER);
}

static int run_meta_mdev_missing(struct env *e)
{
	return meta_fails(e,
			  "<v:vgpu profile='A30-6C' type-id='684' interface='mdev' "
			  "gpu='0000:3b:00.0' vf='0000:3b:00.4'/>",
			  OWNER);
}

static int uuid_fails(struct env *e)
{
	char out[VGPU_UUID_LEN] = "S";
	int r;

	errno = ENOENT; /* whatever an earlier call left: not the cause */
	r = vgpu_uuid_generate(&e->ctx, out);
	assert_string_equal(out, "S");
	return r;
}

static int run_uuid_fails(struct env *e)
{
	faults.getrandom = ENOSYS;
	return uuid_fails(e);
}

static int run_uuid_short(struct env *e)
{
	faults.getrandom_short = 8;
	return uuid_fails(e);
}

/* A plan made by the planner on fixture host @name: must succeed. */
static struct vgpu_plan *plan_ok(struct env *e, const char *name, struct vgpu_request *req)
{
	VGPU_AUTOPTR(model) m = host(name, true);
	struct vgpu_plan *p = NULL;
	int r = vgpu_plan_make(&e->ctx, m, req, &p);

	if (r < 0)
		fail_msg("no plan on %s: %s", name, vgpu_ctx_error(&e->ctx));
	return p;
}

/*
 * vgpu_plan_set_ids(@plan, @ids) as for an existing domain @xml, then
 * vgpu_domain_build(@xml, @plan, @o): the plan is freed.
 */
static int build_fails(struct env *e, const char *xml, struct vgpu_plan *plan,
		       const struct vgpu_domain_opts *o, const struct vgpu_request *ids)
{
	VGPU_AUTOPTR(xmldoc) doc = parse_ok(e, xml);
	VGPU_AUTOFREE char *uuid = vgpu_domain_field(doc, "uuid");
	char prev[VGPU_MAX_VGPUS][VGPU_UUID_LEN];
	size_t n_prev = vgpu_domain_prev_mdevs(doc, prev);
	int r;

	vgpu_error(&e->ctx, -EIO, STALE);
	r = vgpu_plan_set_ids(&e->ctx, plan, ids, uuid, prev, n_prev);
	if (r == 0)
		r = vgpu_domain_build(&e->ctx, doc, plan, o);
	vgpu_plan_free(plan);
	return r;
}

static struct vgpu_plan *a30_plan(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C");

	return plan_ok(e, "a30-dual-mdev", &req);
}

#define DOMAIN "<domain><name>vm</name><memory unit='KiB'>4194304</memory></domain>"

static int run_build_name_arg(struct env *e)
{
	struct vgpu_domain_opts o = { .name = "a/b" };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, DOMAIN, a30_plan(e), &o, &ids);
}

static int run_build_no_name(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, "<domain><memory>1048576</memory></domain>", a30_plan(e), &o, &ids);
}

static int run_build_name_doc(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, "<domain><name>a/b</name><memory>1048576</memory></domain>",
			   a30_plan(e), &o, &ids);
}

static int run_build_uuid_arg(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = "not-a-uuid" };

	return build_fails(e, DOMAIN, a30_plan(e), &o, &ids);
}

static int run_build_uuid_doc(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { 0 };

	return build_fails(e, "<domain><name>vm</name><uuid>xyz</uuid></domain>", a30_plan(e), &o,
			   &ids);
}

static int run_build_uuid_random(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .mdev_uuids = { MDEV_UUID } };
	struct vgpu_plan *plan = a30_plan(e);

	faults.getrandom = ENOSYS;
	return build_fails(e, DOMAIN, plan, &o, &ids);
}

static int run_build_no_memory(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, "<domain><name>vm</name></domain>", a30_plan(e), &o, &ids);
}

static int run_build_bad_memory(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, "<domain><name>vm</name><memory>lots</memory></domain>", a30_plan(e),
			   &o, &ids);
}

static int run_build_hugepages(struct env *e)
{
	struct vgpu_domain_opts o = { .memory_kib = 1536 * 1024, .hugepages = true };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, DOMAIN, a30_plan(e), &o, &ids);
}

static int run_build_mdev_arg(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID, .mdev_uuids = { "zzz" } };

	return build_fails(e, DOMAIN, a30_plan(e), &o, &ids);
}

static int run_build_mdev_random(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };
	struct vgpu_plan *plan = a30_plan(e);

	faults.getrandom = EAGAIN;
	return build_fails(e, DOMAIN, plan, &o, &ids);
}

static int run_build_mdev_shared(struct env *e)
{
	struct vgpu_request req = REQ("A30-6C", "A30-6C");
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID, .mdev_uuids = { MDEV_UUID, MDEV_UUID } };

	return build_fails(e, DOMAIN, plan_ok(e, "a30-dual-mdev", &req), &o, &ids);
}

static int run_build_foreign_mdev(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID, .mdev_uuids = { MDEV_UUID } };

	return build_fails(e,
			   "<domain><name>vm</name><memory>1048576</memory><devices>"
			   "<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source>"
			   "<address uuid='" MDEV_UUID "'/></source></hostdev></devices></domain>",
			   a30_plan(e), &o, &ids);
}

/* --guest-topology mirror: 2 vGPUs on the dual-A30 host's two nodes */
static struct vgpu_plan *a30_mirror_plan(struct env *e)
{
	struct vgpu_request req = REQ("A30-24C", "A30-2-12C");

	req.mirror = true;
	return plan_ok(e, "a30-dual-mdev", &req);
}

#define Q35 "<os><type arch='x86_64' machine='q35'>hvm</type></os>"

static int run_build_mirror_machine(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, DOMAIN, a30_mirror_plan(e), &o, &ids);
}

static int run_build_mirror_no_pin(struct env *e)
{
	struct vgpu_domain_opts o = { .no_pin = true };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(e, DOMAIN, a30_mirror_plan(e), &o, &ids);
}

static int run_build_mirror_cell(struct env *e)
{
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };

	return build_fails(
		e,
		"<domain><name>vm</name><maxMemory slots='4' unit='KiB'>8388608</maxMemory>"
		"<memory>1048576</memory>" Q35
		"<devices><memory model='dimm'><target><size>1024</size><node>2</node>"
		"</target></memory></devices></domain>",
		a30_mirror_plan(e), &o, &ids);
}

static int run_plan_mirror_vcpus(struct env *e)
{
	struct vgpu_request req = REQ("A30-24C", "A30-2-12C");

	req.mirror = true;
	req.vcpus = 1;
	return plan_fails(e, host("a30-dual-mdev", true), &req);
}

/* vgpu_nccl_topo_format() of @xml (a domain with our metadata, its hostdevs as given). */
static int nccl_fails(struct env *e, const char *devices)
{
	struct vgpu_nccl_host h = { .n_gpus = 1 };
	VGPU_AUTOFREE char *xml = vgpu_asprintf(
		"<domain><name>vm</name><metadata><vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' "
		"owner='" VM_UUID "' node='0'><vgpuctl:vgpu profile='L40S-4Q' type-id='1' "
		"interface='vendor-vfio' backing='time-sliced' gpu='0000:41:00.0' vf='0000:41:00.4'/>"
		"</vgpuctl:vgpus></metadata><devices>%s</devices></domain>",
		devices);
	VGPU_AUTOPTR(xmldoc) doc = parse_ok(e, xml);
	char *out = NULL;
	int r;

	vgpu_error(&e->ctx, -EIO, STALE);
	r = vgpu_nccl_topo_format(&e->ctx, doc, &h, &out);
	assert_null(out);
	return r;
}

static int run_nccl_no_hostdev(struct env *e)
{
	return nccl_fails(e, "");
}

static int run_nccl_no_address(struct env *e)
{
	return nccl_fails(
		e, "<hostdev mode='subsystem' type='pci' managed='no'><source><address "
		   "domain='0x0000' bus='0x41' slot='0x00' function='0x4'/></source></hostdev>");
}

static int run_build_foreign_vf(struct env *e)
{
	struct vgpu_request req = REQ("L40S-4Q");
	struct vgpu_domain_opts o = { 0 };
	struct vgpu_request ids = { .uuid = VM_UUID };
	struct vgpu_plan *plan = plan_ok(e, "vfio-ts-l40s", &req);
	unsigned d, b, s, fn;
	char xml[1024];

	/* a hand-written hostdev for the very VF the plan chose */
	assert_int_equal(sscanf(plan->vgpus[0].parent, "%x:%x:%x.%x", &d, &b, &s, &fn), 4);
	snprintf(xml, sizeof(xml),
		 "<domain><name>vm</name><memory>1048576</memory><devices>"
		 "<hostdev mode='subsystem' type='pci' managed='no'><source><address "
		 "domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/></source>"
		 "</hostdev></devices></domain>",
		 d, b, s, fn);
	return build_fails(e, xml, plan, &o, &ids);
}

/* A document without a root element has nothing to write. */
static int run_format_no_root(struct env *e)
{
	xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
	char *out = stale_text;
	int r = vgpu_domain_format(&e->ctx, doc, &out);

	xmlFreeDoc(doc);
	if (r == 0)
		free(out);
	else
		assert_ptr_equal(out, stale_text);
	return r;
}

/* ---- rows: libvirt (the stand-in from fake-libvirt/) ------------------------------------------
 */

/* The libvirt.so.0 virt.c will load is the stand-in, not a real libvirt. */
static void assert_stand_in(void)
{
	void *dl = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL);
	bool ok = dl && dlsym(dl, "fake_libvirt_stand_in");

	if (dl)
		dlclose(dl);
	if (!ok)
		fail_msg("libvirt.so.0 is not the stand-in from tests/unit/fake-libvirt: %s",
			 dl ? "a real libvirt is found first" : dlerror());
}

static int virt_open_fails(struct env *e, const char *fail)
{
	struct vgpu_virt *v = (struct vgpu_virt *)&v;
	int r;

	assert_stand_in();
	setenv("FAKE_LIBVIRT_FAIL", fail, 1);
	r = vgpu_virt_open(&e->ctx, "test:///fake", &v);
	if (r == 0)
		vgpu_virt_close(v);
	else if (v != (struct vgpu_virt *)&v)
		fail_msg("vgpu_virt_open() failed and wrote *out");
	return r;
}

static int run_virt_event(struct env *e)
{
	return virt_open_fails(e, "event");
}

static int run_virt_connect(struct env *e)
{
	return virt_open_fails(e, "connect");
}

static int pinned_fails(struct env *e, const char *fail)
{
	VGPU_AUTOPTR(virt) v = NULL;
	struct vgpu_cpuset out;
	int r;

	assert_stand_in();
	unsetenv("FAKE_LIBVIRT_FAIL");
	if ((r = vgpu_virt_open(&e->ctx, "test:///fake", &v)) < 0)
		fail_msg("vgpu_virt_open: %s", vgpu_ctx_error(&e->ctx));
	/* the stand-in, not a real libvirt: its two domains pin CPUs 3 and 5 */
	vgpu_cpuset_zero(&out);
	assert_int_equal(vgpu_virt_pinned_cpus(&e->ctx, v, NULL, NULL, &out, NULL), 0);
	assert_cpus(&out, "3,5");
	vgpu_error(&e->ctx, -EIO, STALE);
	setenv("FAKE_LIBVIRT_FAIL", fail, 1);
	return vgpu_virt_pinned_cpus(&e->ctx, v, NULL, NULL, &out, NULL);
}

static int run_virt_list(struct env *e)
{
	return pinned_fails(e, "list");
}

static int run_virt_xml(struct env *e)
{
	return pinned_fails(e, "xml");
}

/* The failure to read one domain is the error, not a later domain's bad XML (a warning). */
static int run_virt_xml_then_garbage(struct env *e)
{
	int r = pinned_fails(e, "xml-then-garbage");

	assert_int_equal(e->warn.n, 1);
	assert_non_null(strstr(e->warn.msgs[0], "a domain's pinned CPUs are not known: "
						"'domain XML from libvirt' is not well-formed"));
	return r;
}

/* migrate-check's reads: the domain's migratable XML, the versions */
static int migratable_fails(struct env *e, const char *fail, const char *domain)
{
	VGPU_AUTOPTR(virt) v = NULL;
	char *xml = (char *)&xml;
	unsigned long long ms = 7;
	bool active = true;
	int r;

	assert_stand_in();
	unsetenv("FAKE_LIBVIRT_FAIL");
	if ((r = vgpu_virt_open(&e->ctx, "test:///fake", &v)) < 0)
		fail_msg("vgpu_virt_open: %s", vgpu_ctx_error(&e->ctx));
	if (fail)
		setenv("FAKE_LIBVIRT_FAIL", fail, 1);
	vgpu_error(&e->ctx, -EIO, STALE);
	r = vgpu_virt_domain_migratable(&e->ctx, v, domain, &xml, &active, &ms);
	if (r == 0)
		free(xml);
	else if (xml != (char *)&xml)
		fail_msg("vgpu_virt_domain_migratable() failed and wrote *xml");
	return r;
}

static int run_virt_migratable_lookup(struct env *e)
{
	return migratable_fails(e, NULL, "nope");
}

static int run_virt_migratable_xml(struct env *e)
{
	return migratable_fails(e, "xml", "fake1");
}

static int run_virt_versions(struct env *e)
{
	VGPU_AUTOPTR(virt) v = NULL;
	unsigned long lv = 0, qv = 1;
	int r;

	assert_stand_in();
	unsetenv("FAKE_LIBVIRT_FAIL");
	if ((r = vgpu_virt_open(&e->ctx, "test:///fake", &v)) < 0)
		fail_msg("vgpu_virt_open: %s", vgpu_ctx_error(&e->ctx));
	/* the stand-in is the "Test" driver: its hypervisor version is not QEMU's */
	assert_int_equal(vgpu_virt_versions(&e->ctx, v, &lv, &qv), 0);
	assert_int_equal(lv, 9000000);
	assert_int_equal(qv, 0);
	setenv("FAKE_LIBVIRT_FAIL", "version", 1);
	vgpu_error(&e->ctx, -EIO, STALE);
	return vgpu_virt_versions(&e->ctx, v, &lv, &qv);
}

/* virt-xml-validate (the system's, as migrate-xml runs it) refuses a domain without a name */
static int run_virt_validate(struct env *e)
{
	assert_int_equal(
		vgpu_virt_validate(
			&e->ctx,
			"<domain type='kvm'><name>x</name><memory>1024</memory><os><type>hvm</type></os></domain>"),
		0);
	vgpu_error(&e->ctx, -EIO, STALE);
	return vgpu_virt_validate(&e->ctx, "<domain type='kvm'><bogus/></domain>");
}

/* ---- rows: the write side (records.h, live.h, state files in sysfs.h) ---------------------- */

static int with_root(struct env *e, int (*fn)(struct env *e, struct vgpu_sysfs *fs))
{
	struct vgpu_sysfs *fs = open_root(e, e->root);
	int r = fn(e, fs);

	vgpu_sysfs_free(fs);
	return r;
}

static int records_read_notdir(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_records rs;
	int r;

	put(e, "var/lib/vgpuctl/owners", "a file\n");
	r = vgpu_records_read(&e->ctx, fs, &rs);
	if (r == 0)
		vgpu_records_clear(&rs);
	return r;
}

static int run_records_read(struct env *e)
{
	return with_root(e, records_read_notdir);
}

static int run_record_parse(struct env *e)
{
	struct vgpu_record r;

	return vgpu_record_parse(&e->ctx, "domain=vm1\nparent=../../etc\n", "x", &r);
}

static void sample(struct vgpu_record *r, enum vgpu_iface iface)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->domain, "vm1");
	strcpy(r->domain_uuid, "11111111-2222-4333-8444-555555555555");
	strcpy(r->gpu, "0000:c1:00.0");
	strcpy(r->parent, "0000:c1:00.4");
	r->iface = iface;
	r->type_id = 1151;
	strcpy(r->profile, "L40S-8Q");
	if (iface == VGPU_IFACE_MDEV)
		strcpy(r->mdev_uuid, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
}

static int record_write_blocked(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;

	sample(&r, VGPU_IFACE_VENDOR_VFIO);
	put(e, "var/lib/vgpuctl", "a file\n");
	return vgpu_record_write(&e->ctx, fs, &r);
}

static int run_record_write(struct env *e)
{
	return with_root(e, record_write_blocked);
}

static int record_remove_dir(struct env *e, struct vgpu_sysfs *fs)
{
	put(e, "var/lib/vgpuctl/owners/0000:c1:00.4/x", "a directory in its place\n");
	return vgpu_record_remove(&e->ctx, fs, "0000:c1:00.4");
}

static int run_record_remove(struct env *e)
{
	return with_root(e, record_remove_dir);
}

static int catalog_blocked(struct env *e, struct vgpu_sysfs *fs)
{
	VGPU_AUTOPTR(model) m = host("vfio-ts-l40s", false);

	put(e, "var/lib/vgpuctl/catalog", "a file\n");
	return vgpu_catalog_save(&e->ctx, fs, m);
}

static int run_catalog_save(struct env *e)
{
	return with_root(e, catalog_blocked);
}

static int lock_blocked(struct env *e, struct vgpu_sysfs *fs)
{
	put(e, "run/vgpuctl", "a file\n");
	return vgpu_sysfs_lock(&e->ctx, fs, 0);
}

static int run_lock_blocked(struct env *e)
{
	return with_root(e, lock_blocked);
}

static int lock_held(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_sysfs *other = open_root(e, e->root);
	struct vgpu_ctx ctx = { 0 };
	int r;

	assert_int_equal(vgpu_sysfs_lock(&ctx, other, 0), 0);
	r = vgpu_sysfs_lock(&e->ctx, fs, 20);
	vgpu_sysfs_free(other);
	vgpu_ctx_clear(&ctx);
	return r;
}

static int run_lock_held(struct env *e)
{
	return with_root(e, lock_held);
}

static int run_file_replace(struct env *e)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/no-dir/out.xml", e->root);
	return vgpu_file_replace(&e->ctx, path, "x", 1);
}

/* A vendor-VFIO VF whose current_vgpu_type holds @cur. */
static void vf_attr(struct env *e, const char *cur)
{
	put(e, "sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type", cur);
}

static int live_bad_parent(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	(void)e;
	sample(&r, VGPU_IFACE_VENDOR_VFIO);
	strcpy(r.parent, "../../x");
	return vgpu_live_create(&e->ctx, fs, &r, &done);
}

static int run_live_bad_parent(struct env *e)
{
	return with_root(e, live_bad_parent);
}

static int live_create_with(struct env *e, struct vgpu_sysfs *fs, const char *cur)
{
	struct vgpu_record r;
	bool done;

	sample(&r, VGPU_IFACE_VENDOR_VFIO);
	if (cur)
		vf_attr(e, cur);
	return vgpu_live_create(&e->ctx, fs, &r, &done);
}

static int live_no_attr(struct env *e, struct vgpu_sysfs *fs)
{
	return live_create_with(e, fs, NULL);
}

static int live_busy(struct env *e, struct vgpu_sysfs *fs)
{
	return live_create_with(e, fs, "1158\n");
}

/* a plain file keeps what was there beyond the new value: reads back 1151000 */
static int live_readback(struct env *e, struct vgpu_sysfs *fs)
{
	return live_create_with(e, fs, "0000000");
}

static int run_live_no_attr(struct env *e)
{
	return with_root(e, live_no_attr);
}

static int run_live_busy(struct env *e)
{
	return with_root(e, live_busy);
}

static int run_live_readback(struct env *e)
{
	return with_root(e, live_readback);
}

static int live_free_other(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	sample(&r, VGPU_IFACE_VENDOR_VFIO);
	vf_attr(e, "1158\n");
	return vgpu_live_destroy(&e->ctx, fs, &r, &done);
}

static int run_live_free_other(struct env *e)
{
	return with_root(e, live_free_other);
}

static int live_free_open(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	sample(&r, VGPU_IFACE_MDEV);
	put(e, "sys/devices/p/0000:c1:00.4/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/remove", "");
	put(e, "sys/devices/p/0000:c1:00.4/mdev_supported_types/nvidia-1151/name", "x\n");
	put(e, "sys/kernel/iommu_groups/77/x", "");
	tree_link(e->root,
		  "sys/devices/p/0000:c1:00.4/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/mdev_type",
		  "../mdev_supported_types/nvidia-1151");
	tree_link(e->root,
		  "sys/devices/p/0000:c1:00.4/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/iommu_group",
		  "../../../../kernel/iommu_groups/77");
	tree_link(e->root, "sys/bus/mdev/devices/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
		  "../../../devices/p/0000:c1:00.4/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
	put(e, "proc/4242/fd/x", "");
	tree_link(e->root, "proc/4242/fd/7", "/dev/vfio/77");
	return vgpu_live_destroy(&e->ctx, fs, &r, &done);
}

static int run_live_free_open(struct env *e)
{
	return with_root(e, live_free_open);
}

/* An mdev of @r's UUID and type on @parent, in IOMMU group 77 with the cdev vfio3. */
static void mdev_on(struct env *e, const char *parent)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "sys/devices/p/%s/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/remove",
		 parent);
	put(e, rel, "");
	snprintf(rel, sizeof(rel),
		 "sys/devices/p/%s/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/vfio-dev/vfio3/dev",
		 parent);
	put(e, rel, "511:3\n");
	snprintf(rel, sizeof(rel), "sys/devices/p/%s/mdev_supported_types/nvidia-1151/name",
		 parent);
	put(e, rel, "x\n");
	put(e, "sys/kernel/iommu_groups/77/x", "");
	snprintf(rel, sizeof(rel),
		 "sys/devices/p/%s/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/mdev_type", parent);
	tree_link(e->root, rel, "../mdev_supported_types/nvidia-1151");
	snprintf(rel, sizeof(rel),
		 "sys/devices/p/%s/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee/iommu_group", parent);
	tree_link(e->root, rel, "../../../../kernel/iommu_groups/77");
	snprintf(rel, sizeof(rel), "../../../devices/p/%s/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
		 parent);
	tree_link(e->root, "sys/bus/mdev/devices/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", rel);
}

static int live_free_cdev(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	sample(&r, VGPU_IFACE_MDEV);
	mdev_on(e, "0000:c1:00.4");
	put(e, "proc/4242/fd/x", "");
	tree_link(e->root, "proc/4242/fd/9", "/dev/vfio/devices/vfio3");
	return vgpu_live_destroy(&e->ctx, fs, &r, &done);
}

static int run_live_free_cdev(struct env *e)
{
	return with_root(e, live_free_cdev);
}

static int live_free_elsewhere(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	sample(&r, VGPU_IFACE_MDEV);
	mdev_on(e, "0000:c1:00.5");
	return vgpu_live_destroy(&e->ctx, fs, &r, &done);
}

static int run_live_free_elsewhere(struct env *e)
{
	return with_root(e, live_free_elsewhere);
}

static int live_free_gone(struct env *e, struct vgpu_sysfs *fs)
{
	struct vgpu_record r;
	bool done;

	(void)e;
	sample(&r, VGPU_IFACE_VENDOR_VFIO);
	return vgpu_live_destroy(&e->ctx, fs, &r, &done);
}

static int run_live_free_gone(struct env *e)
{
	return with_root(e, live_free_gone);
}

/* ---- the table ------------------------------------------------------------------------------ */

#define ROW(fn, path, run, want, names)                                                            \
	{                                                                                          \
		fn, path, run, want, names, OP_NONE, NULL                                          \
	}
#define SYS(fn, path, op, arg, want)                                                               \
	{                                                                                          \
		fn, path, run_sysdir, want, NULL, op, arg                                          \
	}
#define PURE(fn, path, op, arg, want)                                                              \
	{                                                                                          \
		fn, path, run_pure, want, NULL, op, arg                                            \
	}

static const struct fail_case cases[] = {
	/* ctx.h: vgpu_error() is the channel; the allocators abort on OOM (policy, no row) */
	ROW("vgpu_error", "a failure code of 0", run_error, -EIO, "cannot read 'x'"),

	/* sysfs.h, with a context */
	ROW("vgpu_sysfs_open", "an empty root", run_open_empty, -EINVAL, "sysroot ''"),
	ROW("vgpu_sysfs_open", "the root is missing", run_open_missing, -ENOENT,
	    "cannot open sysroot 'ROOT/no-root'"),
	ROW("vgpu_sysfs_open", "the root is a file", run_open_file, -ENOTDIR,
	    "sysroot 'ROOT/file' is not a directory"),
	ROW("vgpu_sysfs_open", "the root is a link loop", run_open_loop, -ELOOP,
	    "cannot open sysroot 'ROOT/loop'"),
	ROW("vgpu_sysfs_open", "no openat2 (Linux < 5.6) for a tree", run_open_no_openat2, -ENOSYS,
	    "cannot confine paths to sysroot 'ROOT'"),
	ROW("vgpu_sysfs_open", "openat2 refused on /", run_open_openat2_refused, -EPERM,
	    "cannot confine paths to sysroot '/'"),
	ROW("vgpu_file_read", "a missing file", run_file_missing, -ENOENT,
	    "cannot read 'ROOT/absent.xml'"),
	ROW("vgpu_file_read", "a directory", run_file_dir, -EISDIR, "cannot read 'ROOT'"),
	ROW("vgpu_file_read", "a FIFO", run_file_fifo, -VGPU_ENOTREG,
	    "cannot read 'ROOT/pipe.xml': not a regular file"),
	ROW("vgpu_file_read", "larger than the cap", run_file_big, -EFBIG,
	    "'ROOT/big.xml' is larger than 9 bytes"),
	/* fstat() of the descriptor just opened cannot fail: no row */
	ROW("vgpu_file_read", "read(2) fails", run_file_read_error, -EIO,
	    "cannot read '/proc/self/mem'"),

	/*
	 * sysfs.h readers: no context (the caller decides whether a file is
	 * optional).  The path formatting (vformat), the opening (open_in) and
	 * the regular-file check (open_regular) are shared: every way they fail
	 * is forced through vgpu_sysfs_read_str, one through each other reader.
	 */
	SYS("vgpu_sysdir_open", "a path too long", OP_SYSDIR_OPEN, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysdir_open", "an absolute path", OP_SYSDIR_OPEN, "/dev", -VGPU_EESCAPE),
	SYS("vgpu_sysdir_open", "missing", OP_SYSDIR_OPEN, "absent", -ENOENT),
	SYS("vgpu_sysdir_open", "a file", OP_SYSDIR_OPEN, "attr", -ENOTDIR),
	SYS("vgpu_sysdir_open", "a dangling link", OP_SYSDIR_OPEN, "gone", -VGPU_EDANGLING),
	SYS("vgpu_sysdir_open", "a link loop", OP_SYSDIR_OPEN, "loop", -ELOOP),
	SYS("vgpu_sysdir_open_at", "'..' leaves the parent", OP_SYSDIR_OPEN_AT, "..",
	    -VGPU_EESCAPE),
	SYS("vgpu_sysdir_open_at", "a link leaves the parent", OP_SYSDIR_OPEN_AT, "up",
	    -VGPU_EESCAPE),
	SYS("vgpu_sysdir_open_at", "the joined path is too long", OP_SYSDIR_OPEN_AT, "JOINED",
	    -ENAMETOOLONG),
	SYS("vgpu_sysfs_read_str", "a path too long", OP_READ_STR, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_read_str", "an absolute path", OP_READ_STR, "/attr", -VGPU_EESCAPE),
	SYS("vgpu_sysfs_read_str", "'..' leaves the directory", OP_READ_STR, "../outside",
	    -VGPU_EESCAPE),
	SYS("vgpu_sysfs_read_str", "a link leaves the directory", OP_READ_STR, "up", -VGPU_EESCAPE),
	SYS("vgpu_sysfs_read_str", "missing", OP_READ_STR, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_str", "a dangling link", OP_READ_STR, "gone", -VGPU_EDANGLING),
	SYS("vgpu_sysfs_read_str", "a link loop", OP_READ_STR, "loop", -ELOOP),
	SYS("vgpu_sysfs_read_str", "a FIFO", OP_READ_STR, "fifo", -VGPU_ENOTREG),
	SYS("vgpu_sysfs_read_str", "a directory", OP_READ_STR, "dir", -EISDIR),
	SYS("vgpu_sysfs_read_str", "longer than the buffer", OP_READ_STR, "big", -EFBIG),
	SYS("vgpu_sysfs_read_str", "a NUL inside", OP_READ_STR, "nul", -EINVAL),
	SYS("vgpu_sysfs_read_str", "read(2) fails", OP_READ_STR, "host:proc/self/mem", -EIO),
	/* the second read(2) that tells "full" from "longer" fails only where the first did */
	SYS("vgpu_sysfs_read_long", "missing", OP_READ_LONG, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_long", "not a number", OP_READ_LONG, "nan", -EINVAL),
	SYS("vgpu_sysfs_read_long", "below the minimum", OP_READ_LONG, "neg", -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_long", "does not fit a long", OP_READ_LONG, "huge",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_long", "longer than any number", OP_READ_LONG, "big",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_hex", "missing", OP_READ_HEX, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_hex", "not hex", OP_READ_HEX, "neg", -EINVAL),
	SYS("vgpu_sysfs_read_hex", "above the maximum", OP_READ_HEX, "hex", -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_hex", "does not fit a long", OP_READ_HEX, "hex-huge",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_hex", "longer than any number", OP_READ_HEX, "big",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_cpulist", "missing", OP_READ_CPULIST, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_cpulist", "not a list", OP_READ_CPULIST, "cpus", -EINVAL),
	SYS("vgpu_sysfs_read_cpulist", "a CPU past VGPU_MAX_CPUS", OP_READ_CPULIST, "cpus-range",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_cpulist", "longer than any list", OP_READ_CPULIST, "cpus-big", -EFBIG),
	SYS("vgpu_sysfs_read_cpumask", "missing", OP_READ_CPUMASK, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_cpumask", "not a mask", OP_READ_CPUMASK, "mask", -EINVAL),
	SYS("vgpu_sysfs_read_cpumask", "a CPU past VGPU_MAX_CPUS", OP_READ_CPUMASK, "mask-range",
	    -VGPU_ERANGE_VALUE),
	SYS("vgpu_sysfs_read_file", "a path too long", OP_READ_FILE, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_read_file", "missing", OP_READ_FILE, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_file", "a FIFO", OP_READ_FILE, "fifo", -VGPU_ENOTREG),
	SYS("vgpu_sysfs_read_file", "larger than the cap", OP_READ_FILE, "big", -EFBIG),
	SYS("vgpu_sysfs_read_file", "read(2) fails", OP_READ_FILE, "host:proc/self/mem", -EIO),
	SYS("vgpu_sysfs_read_tail", "a path too long", OP_READ_TAIL, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_read_tail", "missing", OP_READ_TAIL, "absent", -ENOENT),
	SYS("vgpu_sysfs_read_tail", "a FIFO", OP_READ_TAIL, "fifo", -VGPU_ENOTREG),
	SYS("vgpu_sysfs_read_tail", "a directory", OP_READ_TAIL, "dir", -EISDIR),
	SYS("vgpu_sysfs_read_tail", "read(2) fails", OP_READ_TAIL, "host:proc/self/mem", -EIO),
	SYS("vgpu_sysfs_readlink", "a path too long", OP_READLINK, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_readlink", "missing", OP_READLINK, "absent", -ENOENT),
	SYS("vgpu_sysfs_readlink", "'..' leaves the directory", OP_READLINK, "../outside",
	    -VGPU_EESCAPE),
	SYS("vgpu_sysfs_readlink", "not a link", OP_READLINK, "attr", -EINVAL),
	SYS("vgpu_sysfs_readlink", "longer than the buffer", OP_READLINK, "driver", -ENAMETOOLONG),
	SYS("vgpu_sysfs_link_basename", "a path too long", OP_LINK_BASENAME, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_link_basename", "missing", OP_LINK_BASENAME, "absent", -ENOENT),
	SYS("vgpu_sysfs_link_basename", "not a link", OP_LINK_BASENAME, "attr", -EINVAL),
	SYS("vgpu_sysfs_link_basename", "the target ends in '/'", OP_LINK_BASENAME, "slash",
	    -EINVAL),
	SYS("vgpu_sysfs_link_basename", "the name is longer than the buffer", OP_LINK_BASENAME,
	    "driver", -ENAMETOOLONG),
	/* fstat() of an O_PATH descriptor just opened cannot fail: no row */
	SYS("vgpu_sysfs_stat", "a path too long", OP_STAT, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_stat", "missing", OP_STAT, "absent", -ENOENT),
	SYS("vgpu_sysfs_stat", "a dangling link", OP_STAT, "gone", -VGPU_EDANGLING),
	SYS("vgpu_sysfs_stat", "a link leaves the directory", OP_STAT, "up", -VGPU_EESCAPE),
	SYS("vgpu_sysfs_lstat", "a path too long", OP_LSTAT, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_lstat", "missing", OP_LSTAT, "absent", -ENOENT),
	SYS("vgpu_sysfs_lstat", "'..' leaves the directory", OP_LSTAT, "../outside", -VGPU_EESCAPE),
	/* getdents64() on a directory just opened fails only on I/O errors: no row */
	SYS("vgpu_sysfs_list_dir", "a path too long", OP_LIST_DIR, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_list_dir", "missing", OP_LIST_DIR, "absent", -ENOENT),
	SYS("vgpu_sysfs_list_dir", "a file", OP_LIST_DIR, "attr", -ENOTDIR),
	SYS("vgpu_sysfs_list_dir", "a dangling link", OP_LIST_DIR, "gone", -VGPU_EDANGLING),
	SYS("vgpu_sysfs_list_dir", "'..' leaves the directory", OP_LIST_DIR, "..", -VGPU_EESCAPE),
	SYS("vgpu_sysfs_write", "a path too long", OP_WRITE, "LONG", -ENAMETOOLONG),
	SYS("vgpu_sysfs_write", "missing (never created)", OP_WRITE, "absent", -ENOENT),
	SYS("vgpu_sysfs_write", "a link leaves the directory", OP_WRITE, "up", -VGPU_EESCAPE),
	SYS("vgpu_sysfs_write", "a dangling link", OP_WRITE, "gone", -VGPU_EDANGLING),
	SYS("vgpu_sysfs_write", "a directory", OP_WRITE, "dir", -EISDIR),
	SYS("vgpu_sysfs_write", "a FIFO without a reader", OP_WRITE, "fifo", -ENXIO),
	SYS("vgpu_sysfs_write", "a FIFO with a reader", OP_WRITE, "FIFO-READER", -VGPU_ENOTREG),
	SYS("vgpu_sysfs_write", "write(2) fails", OP_WRITE, "FSIZE", -EFBIG),
	/* a short write(2) (-EIO) does not happen on a regular file: no row */

	/* model.h: damage below the PCI bus is warned and skipped; these fail the read */
	ROW("vgpu_model_read", "the PCI bus is a file", run_model_pci_file, -ENOTDIR,
	    "cannot list 'ROOT/sys/bus/pci/devices'"),
	ROW("vgpu_model_read", "the PCI bus is a dangling link", run_model_pci_dangling,
	    -VGPU_EDANGLING, "cannot list 'ROOT/sys/bus/pci/devices': a link to nothing"),
	ROW("vgpu_model_read", "the topology asked for cannot be read", run_model_topology, -ENOENT,
	    "cannot list 'ROOT/sys/devices/system/cpu'"),
	ROW("vgpu_model_read", "a GPU's node is unknown and the topology cannot be read",
	    run_model_topology_for_gpu, -ENOENT, "cannot list 'ROOT/sys/devices/system/cpu'"),
	/* vgpu_read_mdevs() and vgpu_read_types() warn and return 0: no row */
	ROW("vgpu_model_read_topology", "no CPU directory", run_topo_no_cpu_dir, -ENOENT,
	    "cannot list 'ROOT/sys/devices/system/cpu'"),
	ROW("vgpu_model_read_topology", "the CPU directory is a dangling link",
	    run_topo_cpu_dangling, -VGPU_EDANGLING, "cannot list 'ROOT/sys/devices/system/cpu'"),
	ROW("vgpu_model_read_topology", "no cpu<N> directories", run_topo_no_cpus, -ENOENT,
	    "no CPUs found below 'ROOT/sys/devices/system/cpu'"),
	ROW("vgpu_model_read_topology", "the node directory is a file", run_topo_node_file,
	    -ENOTDIR, "cannot list 'ROOT/sys/devices/system/node'"),
	/* the builders cannot fail (OOM aborts): no rows */

	/* plan.h */
	ROW("vgpu_plan_make", "no topology", run_plan_no_topology, -EINVAL,
	    "host topology has not been read"),
	ROW("vgpu_plan_make", "no profiles", run_plan_no_profiles, -EINVAL,
	    "between 1 and 8 vGPUs per VM"),
	ROW("vgpu_plan_make", "more than 8 profiles", run_plan_too_many, -EINVAL,
	    "between 1 and 8 vGPUs per VM"),
	ROW("vgpu_plan_make", "--gpu unknown", run_plan_gpu_unknown, -ENOENT,
	    "GPU '0000:99:00.0': no such NVIDIA GPU"),
	ROW("vgpu_plan_make", "--vf unknown", run_plan_vf_unknown, -ENOENT,
	    "VF '0000:99:00.4': no such VF"),
	ROW("vgpu_plan_make", "--vf of another --gpu", run_plan_vf_other_gpu, -EINVAL,
	    "VF '0000:af:00.4' is not a VF of GPU '0000:3b:00.0'"),
	ROW("vgpu_plan_make", "no types anywhere", run_plan_no_types, -ENOENT,
	    "this host offers no NVIDIA vGPU types (1 NVIDIA GPUs"),
	ROW("vgpu_plan_make", "an unknown profile", run_plan_profile_unknown, -ENOENT,
	    "unknown vGPU profile 'A30-99C'; available now: A30-4C"),
	ROW("vgpu_plan_make", "--vf in use", run_plan_vf_in_use, -EBUSY,
	    "VF '0000:41:00.5' cannot take 'L40S-4Q' now (it holds a vGPU)"),
	ROW("vgpu_plan_make", "--vf does not offer it", run_plan_vf_not_offered, -EBUSY,
	    "VF '0000:3b:00.4' cannot take 'A30-1-6C' now (not offered there)"),
	ROW("vgpu_plan_make", "--vf's GPU holds another size", run_plan_vf_gpu_full, -EBUSY,
	    "VF '0000:41:00.4' cannot take 'L40S-8C' now (not offered there)"),
	ROW("vgpu_plan_make", "no parent free", run_plan_none_free, -EBUSY,
	    "no free VF can take 'A30-1-6C' now"),
	ROW("vgpu_plan_make", "no parent free on --gpu", run_plan_none_free_on_gpu, -EBUSY,
	    "no free VF on that GPU can take 'A30-2-12C' now"),
	ROW("vgpu_plan_make", "the GPU's node is unknown", run_plan_node_unknown, -EINVAL,
	    "GPU 0000:17:00.0 offers 'A100D-8C' but its NUMA node is unknown"),
	ROW("vgpu_plan_make", "no parent for the second vGPU", run_plan_second_vgpu, -EBUSY,
	    "no free VF on NUMA node 0 can take 'A30-24C' as vGPU 2 of this VM"),
	ROW("vgpu_plan_make", "0 vCPUs", run_plan_zero_vcpus, -EINVAL, "invalid vCPU count 0"),
	ROW("vgpu_plan_make", "the node has too few CPUs", run_plan_node_full, -ENOSPC,
	    "NUMA node 0 cannot hold 1000 vCPUs"),
	ROW("vgpu_plan_make", "the GPU's node is not in the topology", run_plan_node_missing,
	    -ENOENT, "NUMA node 7 does not exist on this host"),
	ROW("vgpu_plan_make", "the node has too little memory", run_plan_memory, -ENOSPC,
	    "NUMA node 0 cannot hold 1073741824 MiB of guest memory"),
	ROW("vgpu_plan_cpus", "0 vCPUs", run_cpus_zero, -EINVAL, "invalid vCPU count 0"),
	ROW("vgpu_plan_cpus", "more vCPUs than CPUs can exist", run_cpus_too_many, -EINVAL,
	    "invalid vCPU count 8193"),
	ROW("vgpu_plan_cpus", "no such node", run_cpus_no_node, -ENOENT,
	    "NUMA node 9 does not exist"),
	ROW("vgpu_plan_cpus", "every core taken", run_cpus_none_left, -ENOSPC,
	    "NUMA node 0 cannot hold 2 vCPUs: 0 CPUs on whole free cores (none)"),
	ROW("vgpu_plan_cpus", "too few cores left", run_cpus_too_few, -ENOSPC,
	    "NUMA node 0 cannot hold 6 vCPUs: 4 CPUs on whole free cores (22-23,70-71)"),

	/* domxml.h */
	ROW("vgpu_domain_parse", "larger than 4 MiB", run_parse_too_big, -EFBIG,
	    "'tpl.xml' is larger than 4194304 bytes"),
	ROW("vgpu_domain_parse", "not well-formed", run_parse_not_xml, -EINVAL,
	    "'tpl.xml' is not well-formed XML: "),
	ROW("vgpu_domain_parse", "empty", run_parse_empty, -EINVAL,
	    "'tpl.xml' is not well-formed XML"),
	ROW("vgpu_domain_parse", "not a <domain>", run_parse_not_domain, -EINVAL,
	    "'tpl.xml' is not a libvirt domain definition (<domain> root)"),
	ROW("vgpu_domain_parse", "<domain> in a namespace", run_parse_namespace, -EINVAL,
	    "'tpl.xml' is not a libvirt domain definition (<domain> root in no namespace)"),
	ROW("vgpu_domain_parse", "a DTD", run_parse_dtd, -EINVAL,
	    "'tpl.xml' is not a libvirt domain definition (<domain> root, no DTD)"),
	ROW("vgpu_domain_pinned_cpus", "not well-formed", run_pinned_not_xml, -EINVAL,
	    "'domain.xml' is not well-formed XML"),
	ROW("vgpu_domain_memory_kib", "no <memory>", run_memory_none, -ENOENT,
	    "the domain has no <memory>"),
	ROW("vgpu_domain_memory_kib", "an unknown unit", run_memory_unit, -EINVAL,
	    "the domain's <memory> '4 parsecs' is not a size"),
	ROW("vgpu_domain_memory_kib", "zero", run_memory_zero, -EINVAL,
	    "the domain's <memory> '0 KiB' is not a size"),
	ROW("vgpu_domain_memory_kib", "a fraction", run_memory_fraction, -EINVAL,
	    "the domain's <memory> '1.5' is not a size"),
	ROW("vgpu_domain_read_meta", "no metadata of ours", run_meta_none, -ENOENT,
	    "the domain has no vgpuctl metadata"),
	ROW("vgpu_domain_read_meta", "no owner", run_meta_no_owner, -EINVAL,
	    "vgpuctl metadata: 'owner' is not a UUID"),
	ROW("vgpu_domain_read_meta", "the owner is not a UUID", run_meta_bad_owner, -EINVAL,
	    "vgpuctl metadata: 'owner' is not a UUID"),
	ROW("vgpu_domain_read_meta", "more than 8 vGPUs", run_meta_too_many, -EINVAL,
	    "vgpuctl metadata: more than 8 vGPUs"),
	ROW("vgpu_domain_read_meta", "a vGPU without a profile", run_meta_no_profile, -EINVAL,
	    "vgpuctl metadata: a vgpu has no 'profile'"),
	ROW("vgpu_domain_read_meta", "a bad type-id", run_meta_type_id, -EINVAL,
	    "vgpuctl metadata: 'type-id' of 'A30-6C' is not a type id"),
	ROW("vgpu_domain_read_meta", "an unknown interface", run_meta_interface, -EINVAL,
	    "vgpuctl metadata: 'interface' of 'A30-6C' is 'pci'"),
	ROW("vgpu_domain_read_meta", "a bad gpu", run_meta_gpu, -EINVAL,
	    "vgpuctl metadata: 'gpu' or 'vf' of 'A30-6C' is not a PCI address"),
	ROW("vgpu_domain_read_meta", "no vf", run_meta_vf, -EINVAL,
	    "vgpuctl metadata: 'gpu' or 'vf' of 'A30-6C' is not a PCI address"),
	ROW("vgpu_domain_read_meta", "a bad mdev-uuid", run_meta_mdev_uuid, -EINVAL,
	    "vgpuctl metadata: 'mdev-uuid' 'zzz' is not a UUID"),
	ROW("vgpu_domain_read_meta", "an mdev vGPU without mdev-uuid", run_meta_mdev_missing,
	    -EINVAL, "vgpuctl metadata: mdev vGPU 'A30-6C' has no 'mdev-uuid'"),
	ROW("vgpu_uuid_generate", "getrandom() fails", run_uuid_fails, -ENOSYS,
	    "cannot generate a UUID: Function not implemented"),
	ROW("vgpu_uuid_generate", "getrandom() returns short", run_uuid_short, -EIO,
	    "cannot generate a UUID: Input/output error"),
	ROW("vgpu_domain_build", "a bad --name", run_build_name_arg, -EINVAL,
	    "domain name 'a/b': contains '/'"),
	ROW("vgpu_domain_build", "no name anywhere", run_build_no_name, -EINVAL,
	    "the domain has no <name>"),
	ROW("vgpu_domain_build", "a bad <name>", run_build_name_doc, -EINVAL,
	    "the domain's <name> 'a/b': contains '/'"),
	ROW("vgpu_plan_set_ids", "a bad --uuid", run_build_uuid_arg, -EINVAL,
	    "'not-a-uuid' is not a UUID"),
	ROW("vgpu_plan_set_ids", "a bad <uuid>", run_build_uuid_doc, -EINVAL,
	    "the domain's <uuid> 'xyz' is not a UUID"),
	ROW("vgpu_plan_set_ids", "no random domain UUID", run_build_uuid_random, -ENOSYS,
	    "cannot generate a UUID"),
	ROW("vgpu_domain_build", "no memory anywhere", run_build_no_memory, -EINVAL,
	    "the domain has no usable <memory>"),
	ROW("vgpu_domain_build", "a bad <memory>", run_build_bad_memory, -EINVAL,
	    "the domain has no usable <memory>"),
	ROW("vgpu_domain_build", "hugepages for a part of a GiB", run_build_hugepages, -EINVAL,
	    "1572864 KiB is not a whole number of GiB"),
	ROW("vgpu_plan_set_ids", "a bad mdev UUID", run_build_mdev_arg, -EINVAL,
	    "mdev UUID 'zzz' is not a UUID"),
	ROW("vgpu_plan_set_ids", "no random mdev UUID", run_build_mdev_random, -EAGAIN,
	    "cannot generate a UUID"),
	ROW("vgpu_plan_set_ids", "two vGPUs, one mdev UUID", run_build_mdev_shared, -EINVAL,
	    "vGPUs 1 and 2 would share mdev UUID " MDEV_UUID),
	ROW("vgpu_domain_build", "a hostdev of someone else's for the mdev", run_build_foreign_mdev,
	    -EEXIST, "the domain already has a hostdev for mdev " MDEV_UUID),
	ROW("vgpu_domain_build", "a hostdev of someone else's for the VF", run_build_foreign_vf,
	    -EEXIST, "the domain already has a hostdev for VF 0000:"),
	ROW("vgpu_domain_build", "a mirrored guest on a machine without PCI Express",
	    run_build_mirror_machine, -ENOTSUP,
	    "the guest's machine type '' has no PCI Express root for expander buses"),
	ROW("vgpu_domain_build", "a mirrored guest left unpinned", run_build_mirror_no_pin, -EINVAL,
	    "a guest that mirrors the host's NUMA nodes is pinned to them"),
	ROW("vgpu_domain_build", "a device on a cell the mirrored guest lacks",
	    run_build_mirror_cell, -EINVAL,
	    "the domain's <memory> is on guest NUMA cell 2, and the mirrored layout gives the guest 2 cells"),
	ROW("vgpu_plan_make", "fewer vCPUs than a mirrored guest's cells", run_plan_mirror_vcpus,
	    -EINVAL, "1 vCPUs cannot give each of the guest's 2 NUMA cells one"),
	ROW("vgpu_nccl_topo_format", "a vGPU without its hostdev", run_nccl_no_hostdev, -ENOENT,
	    "vGPU 1 (L40S-4Q) has no hostdev in the domain"),
	ROW("vgpu_nccl_topo_format", "a hostdev without a guest PCI address", run_nccl_no_address,
	    -EINVAL, "vGPU 1 (L40S-4Q) has no guest PCI address yet"),
	/* xmlBufferCreate() and xmlSaveToBuffer() fail only out of memory: no rows */
	ROW("vgpu_domain_format", "no root element", run_format_no_root, -EINVAL,
	    "cannot format the domain XML"),

	/* domxml.h and friends without a context */
	PURE("vgpu_parse_size_kib", "empty", OP_SIZE_KIB, "", -EINVAL),
	PURE("vgpu_parse_size_kib", "more digits than a size", OP_SIZE_KIB, "LONGSIZE", -EINVAL),
	PURE("vgpu_parse_size_kib", "zero", OP_SIZE_KIB, "0G", -EINVAL),
	PURE("vgpu_parse_size_kib", "an unknown unit", OP_SIZE_KIB, "12Q", -EINVAL),
	PURE("vgpu_parse_size_kib", "two points", OP_SIZE_KIB, "1.5.5G", -EINVAL),
	PURE("vgpu_parse_size_kib", "less than a MiB", OP_SIZE_KIB, "1k", -ERANGE),
	PURE("vgpu_parse_size_kib", "beyond 1e15 KiB", OP_SIZE_KIB, "99999999999T", -ERANGE),
	PURE("vgpu_parse_size_kib", "16 EiB, past 1e15 KiB", OP_SIZE_KIB, "16E", -ERANGE),
	PURE("vgpu_parse_size_kib", "40 digits", OP_SIZE_KIB,
	     "1234567890123456789012345678901234567890", -ERANGE),
	/* vgpu_domain_name_check() and vgpu_uuid_normalize() answer, they do not fail */

	/* util.h, cpuset.h, vgputype.h: pure, no context */
	PURE("vgpu_parse_long", "empty", OP_PARSE_LONG, " ", -EINVAL),
	PURE("vgpu_parse_long", "trailing garbage", OP_PARSE_LONG, "4x", -EINVAL),
	PURE("vgpu_parse_long", "does not fit a long", OP_PARSE_LONG, "99999999999999999999",
	     -ERANGE),
	PURE("vgpu_parse_hex", "no digits", OP_PARSE_HEX, "0x", -EINVAL),
	PURE("vgpu_parse_hex", "a second 0x", OP_PARSE_HEX, "0x0x1", -EINVAL),
	PURE("vgpu_parse_hex", "trailing garbage", OP_PARSE_HEX, "12g", -EINVAL),
	PURE("vgpu_parse_hex", "does not fit a long", OP_PARSE_HEX, "1ffffffffffffffff", -ERANGE),
	PURE("vgpu_bdf_normalize", "no ':'", OP_BDF, "3b00.0", -EINVAL),
	PURE("vgpu_bdf_normalize", "a domain of 9 digits", OP_BDF, "000000000:3b:00.0", -EINVAL),
	PURE("vgpu_bdf_normalize", "a trailing blank", OP_BDF, "3b:00.0 ", -EINVAL),
	PURE("vgpu_bdf_normalize", "device past 0x1f", OP_BDF, "3b:20.0", -EINVAL),
	PURE("vgpu_bdf_normalize", "domain past 0xffff", OP_BDF, "10000:3b:00.0", -EINVAL),
	PURE("vgpu_cpulist_parse", "not a number", OP_CPULIST, "0-x", -EINVAL),
	PURE("vgpu_cpulist_parse", "a range downwards", OP_CPULIST, "3-1", -EINVAL),
	PURE("vgpu_cpulist_parse", "a stride of 0", OP_CPULIST, "0-7:0", -EINVAL),
	PURE("vgpu_cpulist_parse", "a stride not a number", OP_CPULIST, "0-7:x", -EINVAL),
	PURE("vgpu_cpulist_parse", "a stray character", OP_CPULIST, "0;1", -EINVAL),
	PURE("vgpu_cpulist_parse", "garbage after a blank", OP_CPULIST, "0-3 x", -EINVAL),
	PURE("vgpu_cpulist_parse", "a CPU past VGPU_MAX_CPUS", OP_CPULIST, "8192", -ERANGE),
	PURE("vgpu_cpulist_parse", "a range end past VGPU_MAX_CPUS", OP_CPULIST, "0-8192", -ERANGE),
	PURE("vgpu_cpulist_parse", "a stride past VGPU_MAX_CPUS", OP_CPULIST, "0-7:8192", -ERANGE),
	PURE("vgpu_cpumask_parse", "empty", OP_CPUMASK, " ", -EINVAL),
	PURE("vgpu_cpumask_parse", "a short word", OP_CPUMASK, "1,0", -EINVAL),
	PURE("vgpu_cpumask_parse", "a leading comma", OP_CPUMASK, ",00000001", -EINVAL),
	PURE("vgpu_cpumask_parse", "a trailing comma", OP_CPUMASK, "00000001,", -EINVAL),
	PURE("vgpu_cpumask_parse", "not hex", OP_CPUMASK, "g", -EINVAL),
	PURE("vgpu_cpumask_parse", "a CPU past VGPU_MAX_CPUS", OP_CPUMASK, "MASK8192", -ERANGE),
	PURE("vgpu_type_parse", "outside the grammar", OP_TYPE_PARSE, "NVIDIA A30-lots", -EINVAL),
	PURE("vgpu_type_parse", "a short name too long", OP_TYPE_PARSE, "LONGNAME", -ENAMETOOLONG),

	/* virt.h, through the stand-in libvirt.so.0 (fake-libvirt/) */
	/*
	 * "cannot load libvirt" and "libvirt.so.0 lacks SYMBOL" need a host
	 * without a (complete) libvirt.so.0: the stand-in is always found
	 * first here.
	 */
	ROW("vgpu_virt_open", "no event loop", run_virt_event, -EIO,
	    "cannot set up libvirt's event loop: fake libvirt: no event loop"),
	ROW("vgpu_virt_open", "the connection is refused", run_virt_connect, -EIO,
	    "cannot connect to 'test:///fake': fake libvirt: no such driver"),
	ROW("vgpu_virt_pinned_cpus", "the domains cannot be listed", run_virt_list, -EIO,
	    "cannot list domains: fake libvirt: connection lost"),
	ROW("vgpu_virt_pinned_cpus", "a domain's XML cannot be read", run_virt_xml, -EIO,
	    "cannot read a domain's XML: fake libvirt: domain vanished"),
	ROW("vgpu_virt_pinned_cpus", "one domain unreadable, a later one not XML",
	    run_virt_xml_then_garbage, -EIO,
	    "cannot read a domain's XML: fake libvirt: domain vanished"),
	ROW("vgpu_virt_domain_migratable", "no such domain", run_virt_migratable_lookup, -ENOENT,
	    "domain 'nope': fake libvirt: domain not found"),
	ROW("vgpu_virt_domain_migratable", "its XML cannot be read", run_virt_migratable_xml, -EIO,
	    "cannot read domain 'fake1': fake libvirt: domain vanished"),
	ROW("vgpu_virt_versions", "libvirt does not say its version", run_virt_versions, -EIO,
	    "cannot ask libvirt its version: fake libvirt: no version"),
	ROW("vgpu_virt_validate", "the XML does not validate", run_virt_validate, -EINVAL,
	    "the domain XML does not validate: -:1: element domain: Relax-NG validity error"),
	/* records.h, live.h and the state files of sysfs.h (the write side) */
	ROW("vgpu_records_read", "the records directory is a file", run_records_read, -ENOTDIR,
	    "cannot read owner records in 'ROOT/var/lib/vgpuctl/owners'"),
	ROW("vgpu_record_parse", "a value that is not what its key holds", run_record_parse,
	    -EINVAL, "owner record 'x': bad or repeated 'parent'"),
	ROW("vgpu_record_write", "its directory cannot be made", run_record_write, -ENOTDIR,
	    "cannot create 'ROOT/var/lib/vgpuctl/owners'"),
	ROW("vgpu_record_remove", "a directory in the record's place", run_record_remove, -EISDIR,
	    "cannot remove owner record 'ROOT/var/lib/vgpuctl/owners/0000:c1:00.4'"),
	ROW("vgpu_catalog_save", "its directory cannot be made", run_catalog_save, -ENOTDIR,
	    "cannot create 'ROOT/var/lib/vgpuctl/catalog'"),
	ROW("vgpu_sysfs_lock", "run/vgpuctl cannot be made", run_lock_blocked, -ENOTDIR,
	    "cannot create 'ROOT/run/vgpuctl/queue'"),
	ROW("vgpu_sysfs_lock", "another holder, past the wait", run_lock_held, -EWOULDBLOCK,
	    "another vgpuctl holds the host lock 'ROOT/run/vgpuctl/lock' (waited "),
	ROW("vgpu_file_replace", "the directory is missing", run_file_replace, -ENOENT,
	    "cannot write 'ROOT/no-dir/out.xml'"),
	ROW("vgpu_live_create", "a parent that is not a PCI address", run_live_bad_parent, -EINVAL,
	    "'../../x' is not a PCI address"),
	ROW("vgpu_live_create", "no current_vgpu_type", run_live_no_attr, -ENOENT,
	    "cannot read 'ROOT/sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type'"),
	ROW("vgpu_live_create", "the VF holds another vGPU", run_live_busy, -EBUSY,
	    "VF 0000:c1:00.4 already holds vGPU type 1158"),
	ROW("vgpu_live_create", "the read-back differs", run_live_readback, -EIO,
	    "wrote type 1151 to current_vgpu_type, reads 1151000"),
	ROW("vgpu_live_destroy", "the VF holds another type than recorded", run_live_free_other,
	    -ESTALE, "VF 0000:c1:00.4 holds vGPU type 1158, not 1151 as recorded"),
	ROW("vgpu_live_destroy", "the VF is gone", run_live_free_gone, -ESTALE,
	    "VF 0000:c1:00.4 is gone; nothing freed"),
	ROW("vgpu_live_destroy", "the mdev UUID lives on another parent", run_live_free_elsewhere,
	    -ESTALE,
	    "mdev aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee is on 0000:c1:00.5, not on 0000:c1:00.4"),
	ROW("vgpu_live_destroy", "a process holds the mdev's iommufd cdev", run_live_free_cdev,
	    -EBUSY,
	    "mdev aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee is still open (/dev/vfio/devices/vfio3)"),
	ROW("vgpu_live_destroy", "a process holds the mdev's VFIO group", run_live_free_open,
	    -EBUSY, "mdev aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee is still open (/dev/vfio/77)"),
};

/* ---- running a row ------------------------------------------------------------------------- */

static int setup(void **state)
{
	const struct fail_case *c = *state;
	struct env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->c = c;
	tree_make(e->base, sizeof(e->base), "failpaths");
	snprintf(e->root, sizeof(e->root), "%s/root", e->base);
	tree_mkdirs(e->root);
	vgpu_ctx_init(&e->ctx, warnings_collect, &e->warn);
	memset(&faults, 0, sizeof(faults));
	unsetenv("FAKE_LIBVIRT_FAIL");
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	memset(&faults, 0, sizeof(faults));
	unsetenv("FAKE_LIBVIRT_FAIL");
	vgpu_ctx_clear(&e->ctx);
	warnings_free(&e->warn);
	tree_remove(e->base);
	free(e);
	return 0;
}

/* @names with "ROOT" replaced by the row's tree. */
static char *expand(const struct env *e, const char *names)
{
	const char *at = strstr(names, "ROOT");

	if (!at)
		return vgpu_xstrdup(names);
	return vgpu_asprintf("%.*s%s%s", (int)(at - names), names, e->root, at + 4);
}

static void run_case(void **state)
{
	struct env *e = *state;
	const struct fail_case *c = e->c;
	VGPU_AUTOFREE char *want = NULL;
	const char *msg;
	int r;

	/* an earlier failure's message: the row's failure must replace it */
	vgpu_error(&e->ctx, -EIO, STALE);
	r = c->run(e);
	if (r != c->want)
		fail_msg("%s (%s): %d (%s), expected %d (%s); message: %s", c->fn, c->path, r,
			 vgpu_strerror(r), c->want, vgpu_strerror(c->want),
			 vgpu_ctx_error(&e->ctx));
	assert_true(r < 0);
	if (strncmp(vgpu_strerror(r), "Unknown error", 13) == 0)
		fail_msg("%s (%s): vgpu_strerror(%d) does not know the code", c->fn, c->path, r);
	if (!c->names)
		return;
	msg = vgpu_ctx_error(&e->ctx);
	if (strcmp(msg, STALE) == 0)
		fail_msg("%s (%s) returned %d and left the earlier message", c->fn, c->path, r);
	if (!*msg || strcmp(msg, "unknown error") == 0 || strchr(msg, '\n'))
		fail_msg("%s (%s): message '%s' is empty or not one line", c->fn, c->path, msg);
	want = expand(e, c->names);
	if (!strstr(msg, want))
		fail_msg("%s (%s): message '%s' does not name '%s'", c->fn, c->path, msg, want);
}

int main(void)
{
	struct CMUnitTest *tests = calloc(ARRAY_SIZE(cases), sizeof(*tests));
	int r;

	if (!tests)
		return 2;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		tests[i].name = vgpu_asprintf("%s: %s", cases[i].fn, cases[i].path);
		tests[i].test_func = run_case;
		tests[i].setup_func = setup;
		tests[i].teardown_func = teardown;
		tests[i].initial_state = (void *)&cases[i];
	}
	r = _cmocka_run_group_tests("failpaths", tests, ARRAY_SIZE(cases), NULL, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		free((char *)tests[i].name);
	free(tests);
	return r;
}
