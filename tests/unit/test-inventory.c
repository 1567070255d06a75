// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-inventory - vgpu_model_read() against the committed fixture hosts
 * under tests/data/hosts (see README.md there; built by mkhosts.sh).
 *
 * Usage: test-inventory SRCDIR (or VGPU_SRCDIR in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "test-util.h"

static const char *srcdir;

/* f->root = SRCDIR/tests/data/hosts/@name */
static void set_root(struct host_fixture *f, const char *name)
{
	fixture_host_path(f->root, sizeof(f->root), srcdir, name);
}

/* Open tests/data/hosts/@name, collect warnings, scan with types. */
static void scan(struct host_fixture *f, const char *name)
{
	set_root(f, name);
	host_read_ok(f, f->root, VGPU_READ_TYPES);
}

/* How many GPUs the scan found. */
static size_t n_gpus(const struct host_fixture *f)
{
	return f->m->n_gpus;
}

static const struct vgpu_gpu *gpu(const struct host_fixture *f, const char *bdf)
{
	const struct vgpu_gpu *g = vgpu_model_find_gpu(f->m, bdf);

	if (!g)
		fail_msg("no GPU %s", bdf);
	return g;
}

static const struct vgpu_parent *vf(const struct host_fixture *f, const char *bdf)
{
	const struct vgpu_parent *v = vgpu_model_find_parent(f->m, bdf);

	if (!v)
		fail_msg("no vGPU parent %s", bdf);
	return v;
}

/* What a parent can create of type @id now; -2 when the parent does not list it. */
static long avail(const struct vgpu_parent *v, unsigned id)
{
	for (size_t i = 0; i < v->n_types; i++)
		if (v->types[i].type->id == id)
			return v->types[i].available;
	return -2;
}

/* ---- healthy hosts ------------------------------------------------------------ */

static void test_a30_dual_mdev(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *gpus, *g3b, *gaf;
	const struct vgpu_parent *v;
	const struct vgpu_type *t;
	size_t n;

	scan(f, "a30-dual-mdev");
	assert_no_warnings(&f->warn);
	gpus = f->m->gpus;
	n = f->m->n_gpus;
	assert_int_equal(n, 2);
	assert_string_equal(gpus[0].addr, "0000:3b:00.0");
	assert_string_equal(gpus[1].addr, "0000:af:00.0");

	g3b = gpu(f, "0000:3b:00.0");
	gaf = gpu(f, "AF:00.0");
	assert_ptr_equal(gaf, &gpus[1]);
	assert_int_equal(g3b->vendor_id, 0x10de);
	assert_int_equal(g3b->device_id, 0x20b7);
	assert_string_equal(g3b->model, "NVIDIA A30");
	assert_string_equal(g3b->driver, "nvidia");
	assert_int_equal(g3b->iface, VGPU_IFACE_MDEV);
	assert_int_equal(g3b->numa_node, 0);
	assert_int_equal(gaf->numa_node, 1);
	assert_int_equal(g3b->iommu_group, 40);
	assert_int_equal(g3b->sriov_total_vfs, 4);
	assert_int_equal(g3b->sriov_num_vfs, 4);
	assert_int_equal(g3b->minor, 0);
	assert_int_equal(gaf->minor, 1);
	/* GPU af runs MIG with two GIs; 3b has no MIG capability tree */
	assert_int_equal(gaf->mig_instances, 2);
	assert_int_equal(g3b->mig_instances, -1);
	assert_true(g3b->has_cpus);
	assert_cpus(&g3b->cpus, "0-23,48-71");

	assert_int_equal(g3b->n_parents, 4);
	assert_int_equal(gaf->n_parents, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(g3b->parents[i].index, (int)i);
		assert_ptr_equal(g3b->parents[i].gpu, g3b);
		assert_int_equal(g3b->parents[i].iface, VGPU_IFACE_MDEV);
		assert_int_equal(g3b->parents[i].numa_node, 0);
		assert_int_equal(gaf->parents[i].numa_node, 1);
		assert_int_equal(g3b->parents[i].iommu_group, 41 + (int)i);
		assert_false(g3b->parents[i].in_use);
		assert_int_equal(g3b->parents[i].n_types, 9);
	}
	assert_string_equal(g3b->parents[0].addr, "0000:3b:00.4");
	assert_string_equal(g3b->parents[3].addr, "0000:3b:00.7");

	/* MIG off on 3b: time-sliced types free, MIG-backed ones not */
	v = vf(f, "3b:00.4");
	assert_ptr_equal(v, &g3b->parents[0]);
	assert_int_equal(avail(v, 684), 1);
	assert_int_equal(avail(v, 689), 0);
	assert_int_equal(avail(v, 708), 0);
	assert_string_equal(vgpu_parent_state_str(v), "free");
	/* MIG on af with 2g.12gb GIs: only A30-2-12C */
	v = vf(f, "0000:af:00.4");
	assert_int_equal(avail(v, 690), 1);
	assert_int_equal(avail(v, 684), 0);
	assert_int_equal(avail(v, 689), 0);

	/* the catalogue: sorted, read once per GPU, classified */
	assert_int_equal(g3b->n_types, 9);
	for (size_t i = 1; i < g3b->n_types; i++)
		assert_true(g3b->types[i - 1]->id < g3b->types[i]->id);
	t = vgpu_gpu_find_type(g3b, 689);
	assert_non_null(t);
	assert_string_equal(t->name, "NVIDIA A30-1-6C");
	assert_string_equal(t->device_api, "vfio-pci");
	assert_int_equal(t->max_instances, 4);
	assert_int_equal(t->info.backing, VGPU_BACKING_MIG);
	assert_string_equal(t->info.gi_profile, "1g.6gb");
	assert_int_equal(t->info.gi_profile_id, 14);
	t = vgpu_gpu_find_type(g3b, 684);
	assert_non_null(t);
	assert_string_equal(t->name, "NVIDIA A30-6C");
	assert_int_equal(t->info.backing, VGPU_BACKING_TIME_SLICED);
	assert_int_equal(t->max_instances, 4);
	assert_string_equal(t->description, "num_heads=1, frl_config=60, framebuffer=6144M, "
					    "max_resolution=4096x2160, max_instance=4");
	assert_null(vgpu_gpu_find_type(g3b, 1));
	assert_null(vgpu_gpu_find_type(g3b, 688));

	/* lookups by address */
	assert_null(vgpu_model_find_gpu(f->m, "0000:3b:00.4"));
	assert_null(vgpu_model_find_parent(f->m, "0000:3b:01.0"));
	assert_null(vgpu_model_find_parent(f->m, "not an address"));
}

/* Scanning without types reads the same devices and no type directories. */
static void test_scan_without_types(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *gpus;
	size_t n;

	set_root(f, "a30-dual-mdev");
	host_read_ok(f, f->root, 0);
	gpus = f->m->gpus;
	n = f->m->n_gpus;
	assert_int_equal(n, 2);
	assert_int_equal(gpus[0].n_parents, 4);
	assert_int_equal(gpus[0].n_types, 0);
	assert_int_equal(gpus[0].parents[0].n_types, 0);
	/* reading again (as after a write) gives a new model with the types */
	host_read_ok(f, f->root, VGPU_READ_TYPES);
	assert_int_equal(f->m->n_gpus, 2);
	assert_int_equal(f->m->gpus[0].parents[0].n_types, 9);
}

static void test_vfio_ts_l40s(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *g41, *gc1;
	const struct vgpu_parent *busy;

	scan(f, "vfio-ts-l40s");
	assert_no_warnings(&f->warn);
	assert_int_equal(n_gpus(f), 2);
	g41 = gpu(f, "0000:41:00.0");
	gc1 = gpu(f, "0000:c1:00.0");
	assert_int_equal(g41->iface, VGPU_IFACE_VENDOR_VFIO);
	assert_int_equal(g41->device_id, 0x26b9);
	assert_string_equal(g41->model, "NVIDIA L40S");
	assert_int_equal(g41->n_parents, 8);
	assert_int_equal(gc1->n_parents, 8);
	/* no MIG capability directories on this host */
	assert_int_equal(g41->mig_instances, -1);

	busy = vf(f, "0000:41:00.5");
	assert_int_equal(busy->index, 1);
	assert_int_equal(busy->iface, VGPU_IFACE_VENDOR_VFIO);
	assert_true(busy->in_use);
	assert_false(busy->state_unknown);
	assert_int_equal(busy->current_type, 1149);
	assert_int_equal(busy->mdevs.n, 0);
	assert_string_equal(vgpu_parent_state_str(busy), "in-use");
	assert_string_equal(vgpu_gpu_find_type(g41, 1149)->name, "NVIDIA L40S-4Q");
	/* its own list is empty: nothing more can be created there */
	assert_int_equal(avail(busy, 1149), 0);
	assert_int_equal(avail(busy, 1156), 0);

	/*
	 * Siblings only offer the 4 GB types, so GPU 41's catalogue (the union
	 * of its VFs' creatable lists) holds just those two.
	 */
	assert_int_equal(g41->n_types, 2);
	assert_string_equal(vgpu_gpu_find_type(g41, 1156)->name, "NVIDIA L40S-4C");
	for (size_t i = 0; i < g41->n_parents; i++) {
		const struct vgpu_parent *v = &g41->parents[i];

		if (v == busy)
			continue;
		assert_false(v->in_use);
		assert_int_equal(v->current_type, 0);
		assert_int_equal(v->n_types, 2);
		assert_int_equal(avail(v, 1149), 1);
		assert_int_equal(avail(v, 1156), 1);
		assert_int_equal(avail(v, 1145), -2);
	}
	/* GPU c1 is free: all 20 types on every VF */
	assert_int_equal(gc1->n_types, 20);
	for (size_t i = 0; i < gc1->n_parents; i++) {
		assert_int_equal(gc1->parents[i].n_types, 20);
		assert_int_equal(avail(&gc1->parents[i], 1145), 1);
		assert_int_equal(avail(&gc1->parents[i], 1164), 1);
	}
	assert_string_equal(gc1->parents[7].addr, "0000:c1:01.3");
	assert_int_equal(vgpu_gpu_find_type(gc1, 1155)->info.fb_mib, 49152);
}

static void test_t4_legacy(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *g;
	const struct vgpu_parent *pf;
	const struct vgpu_type *t;
	char want[PATH_MAX + 128];

	scan(f, "t4-legacy");
	assert_int_equal(n_gpus(f), 1);
	g = gpu(f, "0000:5e:00.0");
	assert_int_equal(g->device_id, 0x1eb8);
	assert_string_equal(g->model, "Tesla T4");
	assert_int_equal(g->sriov_total_vfs, -1);
	assert_int_equal(g->iface, VGPU_IFACE_MDEV);

	/* no SR-IOV: the PF is its own mdev parent */
	assert_int_equal(g->n_parents, 1);
	pf = vf(f, "0000:5e:00.0");
	assert_ptr_equal(pf, &g->parents[0]);
	assert_int_equal(pf->index, -1);
	assert_string_equal(pf->addr, g->addr);
	assert_int_equal(pf->iommu_group, 20);
	assert_true(pf->in_use);
	assert_string_equal(vgpu_parent_state_str(pf), "in-use");
	assert_int_equal(pf->mdevs.n, 1);
	assert_string_equal(pf->mdevs.items[0], "4b20d080-1b54-4048-85b3-a6a62d165c01");
	assert_int_equal(pf->current_type, 232);
	assert_int_equal(avail(pf, 232), 3);
	assert_int_equal(avail(pf, 230), 0);
	assert_int_equal(pf->n_types, 16);

	t = vgpu_gpu_find_type(g, 232);
	assert_string_equal(t->name, "GRID T4-4Q");
	assert_int_equal(t->info.backing, VGPU_BACKING_TIME_SLICED);
	/* the legacy B4 name: time-sliced B-series 2 GB, like T4-2B; its file is kept */
	t = vgpu_gpu_find_type(g, 224);
	assert_non_null(t);
	assert_string_equal(t->name, "GRID T4-2B4");
	assert_int_equal(t->info.backing, VGPU_BACKING_TIME_SLICED);
	assert_int_equal(t->info.series, 'B');
	assert_int_equal(t->info.fb_mib, 2048);
	assert_string_equal(t->info.profile, "T4-2B4");
	assert_int_equal(t->info.gi_profile_id, -1);
	snprintf(want, sizeof(want),
		 "%s/sys/bus/pci/devices/0000:5e:00.0/mdev_supported_types/nvidia-224/name",
		 f->root);
	assert_string_equal(t->source, want);
	assert_no_warnings(&f->warn);
}

/* numa_node -1 on a single-node host resolves to that node, silently. */
static void test_numa_unknown(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *g;

	scan(f, "numa-unknown");
	assert_no_warnings(&f->warn);
	assert_int_equal(n_gpus(f), 1);
	g = gpu(f, "0000:17:00.0");
	assert_int_equal(g->numa_node, 0);
	assert_int_equal(g->n_parents, 4);
	for (size_t i = 0; i < g->n_parents; i++)
		assert_int_equal(g->parents[i].numa_node, 0);
	/* no /proc/driver/nvidia: model from the PCI ID table, no minor */
	assert_string_equal(g->model, "NVIDIA A100 80GB PCIe");
	assert_int_equal(g->minor, -1);
	assert_int_equal(g->mig_instances, -1);
	assert_int_equal(vgpu_gpu_find_type(g, 703)->info.gi_profile_id, 0);
	assert_string_equal(vgpu_gpu_find_type(g, 703)->info.gi_profile, "7g.80gb");
	assert_int_equal(avail(&g->parents[0], 697), 1);
	assert_int_equal(avail(&g->parents[0], 703), 0);
}

/* ---- the malformed host -------------------------------------------------------- */

/* How many warnings name '@root/@rel' and contain @phrase. */
static size_t count_warnings(const struct host_fixture *f, const char *rel, const char *phrase)
{
	char path[PATH_MAX + 256];
	size_t n = 0;

	snprintf(path, sizeof(path), "'%s/%s'", f->root, rel);
	for (size_t i = 0; i < f->warn.n; i++)
		if (strstr(f->warn.msgs[i], path) && strstr(f->warn.msgs[i], phrase))
			n++;
	return n;
}

static void test_malformed_warnings(void **state)
{
	static const struct {
		const char *rel, *phrase;
	} damage[] = {
		{ "sys/bus/pci/devices/0000:3b:00.0/virtfn2", "dangling link" },
		{ "sys/bus/pci/devices/0000:3b:00.0/numa_node", "-1 on a 2-node host" },
		{ "sys/bus/pci/devices/0000:3b:00.4/mdev_supported_types/nvidia-684/"
		  "available_instances",
		  "not a count" },
		{ "sys/bus/pci/devices/0000:3b:00.4/mdev_supported_types/nvidia-690/name",
		  "No such file or directory" },
		{ "sys/bus/pci/devices/0000:3b:00.5/mdev_supported_types/nvidia-689/"
		  "available_instances",
		  "Is a directory" },
		{ "sys/bus/pci/devices/0000:41:00.4/nvidia/creatable_vgpu_types",
		  "line 3: cannot parse 'this is not a type'" },
		{ "sys/bus/pci/devices/0000:41:00.5/nvidia/current_vgpu_type", "not a type id" },
	};
	struct host_fixture *f = *state;

	scan(f, "malformed");
	for (size_t i = 0; i < ARRAY_SIZE(damage); i++) {
		size_t n = count_warnings(f, damage[i].rel, damage[i].phrase);

		if (n != 1)
			fail_msg("%zu warnings about '%s' (\"%s\"), expected 1", n, damage[i].rel,
				 damage[i].phrase);
	}
	/* and nothing else */
	if (f->warn.n != ARRAY_SIZE(damage)) {
		for (size_t i = 0; i < f->warn.n; i++)
			print_message("warning: %s\n", f->warn.msgs[i]);
		fail_msg("%zu warnings, expected %zu", f->warn.n, ARRAY_SIZE(damage));
	}
}

static void test_malformed_survivors(void **state)
{
	struct host_fixture *f = *state;
	const struct vgpu_gpu *a30, *l40s;
	const struct vgpu_parent *v;

	scan(f, "malformed");
	assert_int_equal(n_gpus(f), 2);

	/* A30: node from local_cpulist; the dangling VF 2 is left out */
	a30 = gpu(f, "0000:3b:00.0");
	assert_int_equal(a30->numa_node, 0);
	assert_int_equal(a30->sriov_num_vfs, 3);
	assert_int_equal(a30->n_parents, 2);
	assert_string_equal(a30->parents[0].addr, "0000:3b:00.4");
	assert_string_equal(a30->parents[1].addr, "0000:3b:00.5");
	assert_null(vgpu_model_find_parent(f->m, "0000:3b:00.6"));
	assert_int_equal(a30->parents[0].numa_node, 0);
	assert_int_equal(a30->parents[1].numa_node, 0);

	/*
	 * catalogue: 684, 689 and the out-of-grammar 998 and 999 (named by the
	 * commands that list types, from t->source); 690 has no name
	 */
	assert_non_null(strstr(vgpu_gpu_find_type(a30, 999)->source, "nvidia-999/name"));
	assert_int_equal(a30->n_types, 4);
	assert_string_equal(vgpu_gpu_find_type(a30, 998)->name, "NVIDIA A30 \"lab\\build\"\tX");
	assert_non_null(vgpu_gpu_find_type(a30, 684));
	assert_non_null(vgpu_gpu_find_type(a30, 689));
	assert_null(vgpu_gpu_find_type(a30, 690));
	assert_string_equal(vgpu_gpu_find_type(a30, 999)->name, "NVIDIA A30-BOGUS");
	assert_int_equal(vgpu_gpu_find_type(a30, 999)->info.backing, VGPU_BACKING_UNKNOWN);
	assert_int_equal(vgpu_gpu_find_type(a30, 999)->max_instances, 24);

	v = vf(f, "0000:3b:00.4");
	assert_int_equal(v->n_types, 3);
	assert_int_equal(avail(v, 998), 1);
	assert_int_equal(avail(v, 689), 1);
	assert_int_equal(avail(v, 999), 1);
	assert_int_equal(avail(v, 684), -2); /* "lots" */
	assert_int_equal(avail(v, 690), -2); /* no name */
	v = vf(f, "0000:3b:00.5");
	assert_int_equal(v->n_types, 1);
	assert_int_equal(avail(v, 684), 1);
	assert_int_equal(avail(v, 689), -2); /* a directory */

	/* L40S: the valid and the tab-separated lines survive the garbage */
	l40s = gpu(f, "0000:41:00.0");
	assert_int_equal(l40s->numa_node, 1);
	assert_int_equal(l40s->iface, VGPU_IFACE_VENDOR_VFIO);
	assert_int_equal(l40s->minor, -1);
	assert_string_equal(l40s->model, "NVIDIA L40S");
	assert_int_equal(l40s->n_types, 2);
	assert_string_equal(vgpu_gpu_find_type(l40s, 1145)->name, "NVIDIA L40S-1B");
	assert_string_equal(vgpu_gpu_find_type(l40s, 1147)->name, "NVIDIA L40S-1Q");
	v = vf(f, "0000:41:00.4");
	assert_false(v->state_unknown);
	assert_false(v->in_use);
	assert_int_equal(avail(v, 1145), 1);
	assert_int_equal(avail(v, 1147), 1);
	/* current_vgpu_type "abc": state unknown, not "free" */
	v = vf(f, "0000:41:00.5");
	assert_true(v->state_unknown);
	assert_string_equal(vgpu_parent_state_str(v), "unknown");
	assert_int_equal(v->current_type, 0);
	assert_int_equal(avail(v, 1145), 0);
}

/* Without a warn callback damage is skipped silently, with the same result. */
static void test_malformed_no_callback(void **state)
{
	struct host_fixture *f = *state;

	set_root(f, "malformed");
	vgpu_ctx_init(&f->ctx, NULL, NULL);
	host_read_ok(f, f->root, VGPU_READ_TYPES);
	assert_int_equal(n_gpus(f), 2);
	assert_int_equal(vf(f, "0000:3b:00.4")->n_types, 3);
}

/* A root without sys/bus/pci is a host without GPUs, not an error, but it is said. */
static void test_empty_root(void **state)
{
	struct host_fixture *f = *state;
	char want[1200];

	set_root(f, "a30-dual-mdev/proc");
	host_read_ok(f, f->root, 0);
	assert_null(f->m->gpus);
	assert_int_equal(f->m->n_gpus, 0);
	assert_int_equal(f->warn.n, 1);
	snprintf(want, sizeof(want), "'%s/sys/bus/pci/devices' does not exist; no GPUs listed",
		 f->root);
	assert_string_equal(f->warn.msgs[0], want);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		host_unit_test(test_a30_dual_mdev),
		host_unit_test(test_scan_without_types),
		host_unit_test(test_vfio_ts_l40s),
		host_unit_test(test_t4_legacy),
		host_unit_test(test_numa_unknown),
		host_unit_test(test_malformed_warnings),
		host_unit_test(test_malformed_survivors),
		host_unit_test(test_malformed_no_callback),
		host_unit_test(test_empty_root),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	return cmocka_run_group_tests_name("inventory", tests, NULL, NULL);
}
