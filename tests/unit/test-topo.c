// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-topo - host roots and NUMA/CPU topology (src/lib/sysfs.c, read-topo.c).
 *
 * Most tests build a small host in a mkdtemp() directory: 2 NUMA nodes,
 * 8 CPUs, SMT siblings n and n+4 (node 0 = 0-1,4-5, node 1 = 2-3,6-7), the
 * layout tests/data/mkhosts.sh uses for real hosts.  The last one reads the
 * committed a30-dual-mdev fixture.
 *
 * Usage: test-topo SRCDIR (or VGPU_SRCDIR in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "read-topo.h"
#include "test-util.h"

static const char *srcdir;

/* ---- a host tree in a temporary directory --------------------------------- */

/* put(f, "sys/devices/system/cpu/online", "0-7\n"): write a file, parents made. */
static void put(struct host_fixture *f, const char *rel, const char *content)
{
	tree_put(f->root, rel, content);
}

static void putf(struct host_fixture *f, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void putf(struct host_fixture *f, const char *rel, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(f, rel, buf);
}

static void drop(struct host_fixture *f, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	if (unlink(path) < 0)
		fail_msg("unlink '%s': %s", path, strerror(errno));
}

/* The standard 2-node, 8-CPU host. */
static void build_host(struct host_fixture *f)
{
	/* a host with a PCI bus and no GPUs: the topology is the subject here */
	tree_dir(f->root, "sys/bus/pci/devices");
	put(f, "sys/devices/system/node/online", "0-1\n");
	put(f, "sys/devices/system/node/possible", "0-1\n");
	put(f, "sys/devices/system/node/node0/cpulist", "0-1,4-5\n");
	put(f, "sys/devices/system/node/node1/cpulist", "2-3,6-7\n");
	put(f, "sys/devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:       16384000 kB\n"
	    "Node 0 MemFree:        12000000 kB\n"
	    "Node 0 MemUsed:         4384000 kB\n"
	    "Node 0 HugePages_Total:     0\n");
	put(f, "sys/devices/system/node/node1/meminfo",
	    "Node 1 MemTotal:        8192000 kB\n"
	    "Node 1 MemFree:         8000000 kB\n");
	put(f, "sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "4\n");
	put(f, "sys/devices/system/node/node0/hugepages/hugepages-1048576kB/free_hugepages", "2\n");
	put(f, "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "512\n");
	put(f, "sys/devices/system/cpu/online", "0-7\n");
	put(f, "sys/devices/system/cpu/present", "0-7\n");
	for (int c = 0; c < 8; c++) {
		char rel[128];

		snprintf(rel, sizeof(rel),
			 "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		putf(f, rel, "%d,%d\n", c % 4, c % 4 + 4);
	}
}

static int setup(void **state)
{
	struct host_fixture *f;

	if (host_fixture_setup(state) < 0)
		return -1;
	f = *state;
	snprintf(f->root, sizeof(f->root), "%s/vgpu-topo-XXXXXX", test_tmpdir());
	if (!mkdtemp(f->root)) {
		host_fixture_teardown(state);
		return -1;
	}
	return 0;
}

/* Close the host, then delete its tree. */
static int teardown(void **state)
{
	struct host_fixture *f = *state;
	char root[sizeof(f->root)];

	memcpy(root, f->root, sizeof(root));
	host_fixture_teardown(state);
	tree_remove(root);
	return 0;
}

/* Open the fixture's root and read its topology; warnings are collected. */
static const struct vgpu_topology *open_and_read(struct host_fixture *f)
{
	host_read_ok(f, f->root, VGPU_READ_TOPOLOGY);
	assert_true(f->m->has_topology);
	return &f->m->topo;
}

static void assert_core_of(const struct vgpu_topology *t, const int *want, unsigned n)
{
	assert_int_equal(t->n_cpus, n);
	for (unsigned c = 0; c < n; c++)
		if (t->core_of[c] != want[c])
			fail_msg("core_of[%u] = %d, expected %d", c, t->core_of[c], want[c]);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_two_nodes(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	const struct vgpu_node *n0, *n1;
	static const int core_of[8] = { 0, 1, 2, 3, 0, 1, 2, 3 };

	build_host(f);
	t = open_and_read(f);
	assert_int_equal(t->n_nodes, 2);
	assert_cpus(&t->online, "0-7");

	n0 = vgpu_topology_node(t, 0);
	n1 = vgpu_topology_node(t, 1);
	assert_non_null(n0);
	assert_non_null(n1);
	assert_null(vgpu_topology_node(t, 2));
	assert_null(vgpu_topology_node(t, -1));
	assert_int_equal(n0->id, 0);
	assert_int_equal(n1->id, 1);
	assert_cpus(&n0->cpus, "0-1,4-5");
	assert_cpus(&n1->cpus, "2-3,6-7");

	assert_core_of(t, core_of, 8);
	assert_int_equal(t->core_of[5], 1);

	assert_int_equal(n0->mem_total_kib, 16384000);
	assert_int_equal(n1->mem_total_kib, 8192000);
	assert_int_equal(n0->hugepages_1g_total, 4);
	assert_int_equal(n0->hugepages_1g_free, 2);
	/* no hugepages-1048576kB directory: unknown */
	assert_int_equal(n1->hugepages_1g_total, -1);
	assert_int_equal(n1->hugepages_1g_free, -1);

	assert_no_warnings(&f->warn);

	/* reading again (as after a write) gives the same answer */
	host_read_ok(f, f->root, VGPU_READ_TOPOLOGY);
	assert_int_equal(f->m->topo.n_nodes, 2);
	assert_cpus(&vgpu_topology_node(&f->m->topo, 1)->cpus, "2-3,6-7");
}

/* No thread_siblings_list (older kernels, odd VMs): each CPU is its own core. */
static void test_missing_siblings(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	static const int core_of[8] = { 0, 1, 2, 3, 0, 1, 2, 7 };

	build_host(f);
	drop(f, "sys/devices/system/cpu/cpu3/topology/thread_siblings_list");
	drop(f, "sys/devices/system/cpu/cpu7/topology/thread_siblings_list");
	t = open_and_read(f);
	assert_core_of(t, core_of, 8);
	/* a missing file is a normal situation: no warning */
	assert_no_warnings(&f->warn);
}

/* A sibling list that leaves out its own CPU is wrong: warn, own core. */
static void test_siblings_without_self(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	char want[PATH_MAX];
	static const int core_of[8] = { 0, 1, 2, 3, 0, 5, 2, 3 };

	build_host(f);
	put(f, "sys/devices/system/cpu/cpu1/topology/thread_siblings_list", "2\n");
	put(f, "sys/devices/system/cpu/cpu5/topology/thread_siblings_list", "5\n");
	t = open_and_read(f);
	assert_core_of(t, core_of, 8);
	assert_int_equal(f->warn.n, 1);
	snprintf(want, sizeof(want),
		 "'%s/sys/devices/system/cpu/cpu1/topology/thread_siblings_list'", f->root);
	if (!strstr(f->warn.msgs[0], want))
		fail_msg("warning \"%s\" does not name %s", f->warn.msgs[0], want);
	assert_non_null(strstr(f->warn.msgs[0], "CPU 1"));
}

/* An offline CPU is in no node and has no core. */
static void test_offline_cpu(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	static const int core_of[7] = { 0, 1, 2, 3, 0, 1, 2 };

	build_host(f);
	put(f, "sys/devices/system/cpu/online", "0-6\n");
	t = open_and_read(f);
	assert_cpus(&t->online, "0-6");
	assert_cpus(&vgpu_topology_node(t, 1)->cpus, "2-3,6");
	assert_core_of(t, core_of, 7);
}

/* A kernel without NUMA: one implicit node 0 holding every online CPU. */
static void test_no_numa(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	static const int core_of[4] = { 0, 1, 0, 1 };

	put(f, "sys/bus/pci/devices/.keep", "");
	drop(f, "sys/bus/pci/devices/.keep");
	put(f, "sys/devices/system/cpu/online", "0-3\n");
	put(f, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,2\n");
	put(f, "sys/devices/system/cpu/cpu1/topology/thread_siblings_list", "1,3\n");
	put(f, "sys/devices/system/cpu/cpu2/topology/thread_siblings_list", "0,2\n");
	put(f, "sys/devices/system/cpu/cpu3/topology/thread_siblings_list", "1,3\n");
	t = open_and_read(f);
	assert_int_equal(t->n_nodes, 1);
	assert_int_equal(t->nodes[0].id, 0);
	assert_cpus(&t->nodes[0].cpus, "0-3");
	assert_int_equal(t->nodes[0].mem_total_kib, 0);
	assert_int_equal(t->nodes[0].hugepages_1g_total, -1);
	assert_core_of(t, core_of, 4);
	assert_no_warnings(&f->warn);
}

/* cpu/online missing: cpu/present is used instead. */
static void test_present_fallback(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;

	build_host(f);
	drop(f, "sys/devices/system/cpu/online");
	t = open_and_read(f);
	assert_cpus(&t->online, "0-7");
	assert_int_equal(t->n_cpus, 8);
}

/*
 * Neither cpu/online nor cpu/present (old kernels): the cpu<N> directories
 * say which CPUs there are, cpu<N>/online which are online.
 */
static void test_no_cpu_list(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	char want[PATH_MAX];
	int r;

	build_host(f);
	drop(f, "sys/devices/system/cpu/online");
	drop(f, "sys/devices/system/cpu/present");
	put(f, "sys/devices/system/cpu/cpu7/online", "0\n");
	t = open_and_read(f);
	assert_cpus(&t->online, "0-6");
	assert_no_warnings(&f->warn);

	/* and no cpu<N> at all: an error naming the directory */
	for (int c = 0; c < 8; c++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d", f->root, c);
		tree_remove(path);
	}
	vgpu_model_free(f->m);
	f->m = NULL;
	r = vgpu_model_read(&f->ctx, f->fs, VGPU_READ_TOPOLOGY, &f->m);
	assert_int_equal(r, -ENOENT);
	assert_null(f->m);
	snprintf(want, sizeof(want), "no CPUs found below '%s/sys/devices/system/cpu'", f->root);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);
}

/* A garbled node/online is named, and the node<N> directories say what nodes there are. */
static void test_bad_node_online(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;

	build_host(f);
	put(f, "sys/devices/system/node/online", "zero\n");
	t = open_and_read(f);
	assert_int_equal(t->n_nodes, 2);
	assert_true(f->warn.n >= 1);
	assert_non_null(strstr(f->warn.msgs[0], "sys/devices/system/node/online"));
}

/* ---- vgpu_sysfs_open ---------------------------------------------------------- */

static void test_open_regular_file(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_sysfs *fs = NULL;
	char path[PATH_MAX], want[PATH_MAX + 64];

	put(f, "not-a-dir", "x\n");
	snprintf(path, sizeof(path), "%s/not-a-dir", f->root);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), -ENOTDIR);
	assert_null(fs);
	snprintf(want, sizeof(want), "sysroot '%s' is not a directory", path);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);
}

static void test_open_missing(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_sysfs *fs = NULL;
	char path[PATH_MAX], want[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/no-such-root", f->root);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), -ENOENT);
	assert_null(fs);
	snprintf(want, sizeof(want), "cannot open sysroot '%s': %s", path, strerror(ENOENT));
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);
}

static void test_open_root_name(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_sysfs *fs = NULL;
	char path[PATH_MAX + 4];

	/* trailing slashes are dropped so messages read ROOT/sys/... */
	snprintf(path, sizeof(path), "%s//", f->root);
	assert_int_equal(vgpu_sysfs_open(&f->ctx, path, &fs), 0);
	assert_string_equal(vgpu_sysfs_root(fs), f->root);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "unknown error");
	vgpu_sysfs_free(fs);
	fs = NULL;
	/* NULL means the real host; "" is a mistake, not the real host */
	assert_int_equal(vgpu_sysfs_open(&f->ctx, NULL, &fs), 0);
	assert_string_equal(vgpu_sysfs_root(fs), "/");
	vgpu_sysfs_free(fs);
	fs = NULL;
	assert_int_equal(vgpu_sysfs_open(&f->ctx, "", &fs), -EINVAL);
	assert_null(fs);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "sysroot '': an empty root is not a directory");
	/* free accepts NULL */
	vgpu_sysfs_free(NULL);
}

/* Paths given as a literal, as "%s" and as another format read the same file. */
static void test_read_paths(void **state)
{
	struct host_fixture *f = *state;
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_sysdir root, d = { .fd = -1 };
	char buf[64], rel[VGPU_PATH_MAX + 8];
	long v;

	put(f, "sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
	assert_int_equal(vgpu_sysfs_open(&f->ctx, f->root, &fs), 0);
	vgpu_sysdir_root(fs, &root);
	assert_int_equal(vgpu_sysfs_read_str(&root, buf, sizeof(buf),
					     "sys/bus/pci/devices/0000:3b:00.0/numa_node"),
			 0);
	assert_string_equal(buf, "1");
	assert_int_equal(vgpu_sysfs_read_long(&root, &v, -1, 8, "%s",
					      "sys/bus/pci/devices/0000:3b:00.0/numa_node"),
			 0);
	assert_int_equal(v, 1);
	assert_int_equal(vgpu_sysdir_open(fs, &d, "sys/bus/pci/devices/%s", "0000:3b:00.0"), 0);
	assert_string_equal(d.path, "sys/bus/pci/devices/0000:3b:00.0");
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "%s", "numa_node"), 0);
	assert_string_equal(buf, "1");
	/* a literal "%%" is a format, not a name */
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "numa%%node"), -ENOENT);
	/* absolute paths are refused however they are given */
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "/numa_node"), -VGPU_EESCAPE);
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "%s", "/numa_node"),
			 -VGPU_EESCAPE);
	/* too long: refused, never cut to another name */
	memset(rel, 'a', sizeof(rel) - 1);
	rel[sizeof(rel) - 1] = '\0';
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "%s", rel), -ENAMETOOLONG);
	assert_int_equal(vgpu_sysfs_read_str(&d, buf, sizeof(buf), "%s/x", rel), -ENAMETOOLONG);
	vgpu_sysdir_close(&d);
	vgpu_sysfs_free(fs);
}

/* ---- the committed dual-socket A30 fixture ---------------------------------- */

static void test_fixture_a30_dual(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_topology *t;
	const struct vgpu_node *n0, *n1;

	fixture_host_path(f->root, sizeof(f->root), srcdir, "a30-dual-mdev");
	t = open_and_read(f);
	assert_int_equal(t->n_nodes, 2);
	assert_int_equal(t->n_cpus, 96);
	n0 = vgpu_topology_node(t, 0);
	n1 = vgpu_topology_node(t, 1);
	assert_non_null(n0);
	assert_non_null(n1);
	assert_cpus(&n0->cpus, "0-23,48-71");
	assert_cpus(&n1->cpus, "24-47,72-95");
	assert_int_equal(t->core_of[0], 0);
	assert_int_equal(t->core_of[48], 0);
	assert_int_equal(t->core_of[71], 23);
	assert_int_equal(t->core_of[95], 47);
	assert_int_equal(n0->mem_total_kib, 263856484);
	assert_int_equal(n1->mem_total_kib, 264192000);
	assert_int_equal(n0->hugepages_1g_total, 8);
	assert_int_equal(n0->hugepages_1g_free, 8);
	assert_int_equal(n1->hugepages_1g_total, 0);
	assert_no_warnings(&f->warn);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_siblings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_siblings_without_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offline_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_numa, setup, teardown),
		cmocka_unit_test_setup_teardown(test_present_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_cpu_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_node_online, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_root_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_paths, setup, teardown),
		/* no temporary tree: teardown must not delete the committed one */
		host_unit_test(test_fixture_a30_dual),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
