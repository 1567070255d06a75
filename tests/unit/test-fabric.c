// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-fabric - Fabric Manager through src/lib/fabric.c against the stand-in
 * libnvfm.so.1 (tests/nvfm) with tests/data/hosts/hgx-h100-8's GPUs:
 * FABRIC_MODE from fabricmanager.cfg, the partitions' physical IDs mapped to
 * PCI addresses through NVML's module IDs (out of PCI order), each Fabric
 * Manager status to its errno and one-line message, and resync.
 *   test-fabric SRCDIR LIBNVFM LIBNVML
 */
#include "test-util.h"

#include "fabric.h"
#include "nvml.h"

static const char *srcdir, *libnvfm, *libnvml;

struct fx {
	char root[1024];
	struct vgpu_ctx ctx;
	struct vgpu_model *m;
	struct vgpu_fm *fm;
};

static const char *const buses[] = {
	"0000:1b:00.0", "0000:2a:00.0", "0000:3d:00.0", "0000:5d:00.0",
	"0000:9b:00.0", "0000:ab:00.0", "0000:bd:00.0", "0000:db:00.0"
};

/* The file @rel of the stand-ins' state, "" when missing. */
static void state(const struct fx *f, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *fp;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/var/lib/fake-nvidia/%s", f->root, rel);
	buf[0] = '\0';
	fp = fopen(path, "r");
	if (!fp)
		return;
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

static void put_state(const struct fx *f, const char *rel, const char *text)
{
	char r[PATH_MAX + 32];

	snprintf(r, sizeof(r), "var/lib/fake-nvidia/%s", rel);
	tree_put(f->root, r, text);
}

static void rm_state(const struct fx *f, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/var/lib/fake-nvidia/%s", f->root, rel);
	unlink(path);
}

/* @rel of the committed HGX host into @root. */
static void copy_fixture_file(const char *root, const char *rel)
{
	char src[PATH_MAX], path[2 * PATH_MAX], buf[4096];
	size_t n;
	FILE *fp;

	fixture_host_path(src, sizeof(src), srcdir, "hgx-h100-8");
	snprintf(path, sizeof(path), "%s/%s", src, rel);
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot read '%s': %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	tree_put_len(root, rel, buf, n);
}

/*
 * The HGX host's GPUs as far as the stand-ins look (a copy of the whole tree
 * takes seconds): each PF's IDs and class, the module IDs the fixture carries,
 * fabricmanager.cfg; a model of the 8 GPUs with NVML's module IDs.
 */
static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct vgpu_nvml *nvml = NULL;

	tree_make(f->root, sizeof(f->root), "fabric");
	for (size_t i = 0; i < sizeof(buses) / sizeof(buses[0]); i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", buses[i]);
		tree_put(f->root, rel, "0x10de\n");
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/device", buses[i]);
		tree_put(f->root, rel, "0x2330\n");
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", buses[i]);
		tree_put(f->root, rel, "0x030200\n");
		snprintf(rel, sizeof(rel), "var/lib/fake-nvidia/module-%s", buses[i]);
		copy_fixture_file(f->root, rel);
	}
	copy_fixture_file(f->root, VGPU_FABRIC_CFG);
	setenv("FAKE_NV_ROOT", f->root, 1);
	vgpu_ctx_init(&f->ctx, NULL, NULL);
	f->m = vgpu_model_new();
	for (size_t i = 0; i < sizeof(buses) / sizeof(buses[0]); i++)
		vgpu_model_add_gpu(f->m, buses[i], 0x2330);
	assert_int_equal(vgpu_nvml_open(&f->ctx, libnvml, &nvml), 0);
	vgpu_nvml_module_ids(&f->ctx, nvml, f->m);
	vgpu_nvml_close(nvml);
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	vgpu_fm_close(f->fm);
	vgpu_model_free(f->m);
	vgpu_ctx_clear(&f->ctx);
	tree_remove(f->root);
	free(f);
	return 0;
}

static void fm_open_ok(struct fx *f)
{
	if (vgpu_fm_open(&f->ctx, libnvfm, NULL, &f->fm) < 0)
		fail_msg("vgpu_fm_open: %s", vgpu_ctx_error(&f->ctx));
}

static const struct vgpu_fabric_part *part(const struct vgpu_fabric *fab, unsigned id)
{
	for (size_t i = 0; i < fab->n; i++)
		if (fab->v[i].id == id)
			return &fab->v[i];
	fail_msg("no partition %u", id);
	return NULL;
}

/* FABRIC_MODE: missing file, the default, spaces and comments, refused values. */
static void test_mode(void **st)
{
	struct fx *f = *st;
	static const struct {
		const char *text;
		int rc, mode;
	} cases[] = {
		{ "FABRIC_MODE=2\n", 0, VGPU_FABRIC_VGPU },
		{ "# FABRIC_MODE=2\nLOG_LEVEL=4\n", 0, VGPU_FABRIC_BAREMETAL },
		{ "  FABRIC_MODE = 1  # shared\r\n", 0, VGPU_FABRIC_SHARED },
		{ "FABRIC_MODE_RESTART=1\nFABRIC_MODE=0\n", 0, VGPU_FABRIC_BAREMETAL },
		{ "FABRIC_MODE=3\n", -EINVAL, VGPU_FABRIC_NONE },
		{ "FABRIC_MODE=\n", -EINVAL, VGPU_FABRIC_NONE },
		{ "FABRIC_MODE=2x\n", -EINVAL, VGPU_FABRIC_NONE },
	};
	struct vgpu_sysfs *fs;
	enum vgpu_fabric_mode mode;
	char path[PATH_MAX];

	assert_int_equal(vgpu_sysfs_open(&f->ctx, f->root, &fs), 0);
	assert_int_equal(vgpu_fabric_mode_read(&f->ctx, fs, &mode), 0);
	assert_int_equal(mode, VGPU_FABRIC_VGPU); /* the fixture's */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tree_put(f->root, VGPU_FABRIC_CFG, cases[i].text);
		assert_int_equal(vgpu_fabric_mode_read(&f->ctx, fs, &mode), cases[i].rc);
		assert_int_equal(mode, cases[i].mode);
		if (cases[i].rc)
			assert_non_null(strstr(vgpu_ctx_error(&f->ctx),
					       "fabricmanager.cfg': FABRIC_MODE is not 0, 1 or 2"));
	}
	snprintf(path, sizeof(path), "%s/%s", f->root, VGPU_FABRIC_CFG);
	unlink(path);
	assert_int_equal(vgpu_fabric_mode_read(&f->ctx, fs, &mode), 0);
	assert_int_equal(mode, VGPU_FABRIC_NONE); /* a PCIe host */
	vgpu_sysfs_free(fs);
}

/* Where Fabric Manager listens: FM_CMD_* of fabricmanager.cfg, else its defaults. */
static void test_address(void **st)
{
	struct fx *f = *st;
	static const struct {
		const char *text;
		int rc;
		const char *addr;
		bool unix_socket;
	} cases[] = {
		{ "FABRIC_MODE=2\n", 0, "127.0.0.1:6666", false },
		{ "FM_CMD_BIND_INTERFACE=10.1.2.3\nFM_CMD_PORT_NUMBER=7000\n", 0, "10.1.2.3:7000",
		  false },
		{ "FM_CMD_PORT_NUMBER = 16000 # moved\nFM_CMD_BIND_INTERFACE=\n", 0,
		  "127.0.0.1:16000", false },
		/* a socket path wins over the TCP keys; an empty one means TCP */
		{ "FM_CMD_PORT_NUMBER=7000\nFM_CMD_UNIX_SOCKET_PATH=/run/fm.sock\n", 0,
		  "/run/fm.sock", true },
		{ "FM_CMD_UNIX_SOCKET_PATH=\nFM_CMD_PORT_NUMBER=7000\n", 0, "127.0.0.1:7000",
		  false },
		{ "FM_CMD_PORT_NUMBER=65536\n", -EINVAL, NULL, false },
		{ "FM_CMD_PORT_NUMBER=66x\n", -EINVAL, NULL, false },
	};
	struct vgpu_fabric_addr a;
	struct vgpu_sysfs *fs;
	char path[PATH_MAX];

	assert_int_equal(vgpu_fabric_address(&f->ctx, NULL, &a), 0);
	assert_string_equal(a.addr, "127.0.0.1:6666");
	assert_int_equal(vgpu_sysfs_open(&f->ctx, f->root, &fs), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tree_put(f->root, VGPU_FABRIC_CFG, cases[i].text);
		assert_int_equal(vgpu_fabric_address(&f->ctx, fs, &a), cases[i].rc);
		if (cases[i].rc) {
			assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "is not a TCP port"));
			continue;
		}
		assert_string_equal(a.addr, cases[i].addr);
		assert_int_equal(a.unix_socket, cases[i].unix_socket);
	}
	snprintf(path, sizeof(path), "%s/%s", f->root, VGPU_FABRIC_CFG);
	unlink(path);
	assert_int_equal(vgpu_fabric_address(&f->ctx, fs, &a), 0);
	assert_string_equal(a.addr, "127.0.0.1:6666");
	vgpu_sysfs_free(fs);
}

/* NVML's module IDs are the fixture's, out of PCI order. */
static void test_module_ids(void **st)
{
	struct fx *f = *st;
	static const int want[] = { 1, 2, 4, 3, 7, 8, 6, 5 };

	for (size_t i = 0; i < f->m->n_gpus; i++)
		assert_int_equal(f->m->gpus[i].module_id, want[i]);
}

/* The published table, sorted by id, physical IDs mapped to buses through the module IDs. */
static void test_read(void **st)
{
	struct fx *f = *st;
	struct vgpu_fabric fab = { .mode = VGPU_FABRIC_VGPU };
	const struct vgpu_fabric_part *p;

	put_state(f, "fm-unsupported", "0\n");
	put_state(f, "fm-failed", "5\n");
	put_state(f, "fm-active", "4\n");
	fm_open_ok(f);
	assert_int_equal(vgpu_fm_read(&f->ctx, f->fm, f->m, &fab), 0);
	assert_int_equal(fab.mode, VGPU_FABRIC_VGPU);
	assert_int_equal(fab.n, 15);
	for (size_t i = 0; i < fab.n; i++)
		assert_int_equal(fab.v[i].id, i);
	p = part(&fab, 0);
	assert_false(p->supported);
	assert_int_equal(p->ngpus, 8);
	p = part(&fab, 4); /* modules 3 and 4: 5d and 3d, in Fabric Manager's order */
	assert_true(p->supported);
	assert_true(p->active);
	assert_int_equal(p->ngpus, 2);
	assert_int_equal(p->gpu[0].module_id, 3);
	assert_string_equal(p->gpu[0].bus, "0000:5d:00.0");
	assert_string_equal(p->gpu[1].bus, "0000:3d:00.0");
	assert_int_equal(p->gpu[1].nvlinks, 18);
	p = part(&fab, 11); /* module 5: db */
	assert_false(p->active);
	assert_string_equal(p->gpu[0].bus, "0000:db:00.0");
	assert_int_equal(fab.failed.n, 1);
	assert_string_equal(fab.failed.items[0], "0000:db:00.0");
	vgpu_fabric_clear(&fab);
	assert_int_equal(fab.n, 0);
	assert_int_equal(fab.mode, VGPU_FABRIC_NONE);
	/* a GPU NVML gave no module ID: "" (the stand-in gives no bus of its own) */
	f->m->gpus[7].module_id = -1;
	fab.mode = VGPU_FABRIC_VGPU;
	assert_int_equal(vgpu_fm_read(&f->ctx, f->fm, f->m, &fab), 0);
	assert_string_equal(part(&fab, 11)->gpu[0].bus, "");
	vgpu_fabric_clear(&fab);
}

/* Activation in vGPU mode: one VF per GPU, logged, refused when in use or overlapping. */
static void test_activate(void **st)
{
	struct fx *f = *st;
	const char vfs[2][VGPU_BDF_LEN] = { "0000:1b:00.4", "0000:2a:00.4" };
	char buf[1024];

	fm_open_ok(f);
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 3, vfs, 2), 0);
	state(f, "fm-active", buf, sizeof(buf));
	assert_string_equal(buf, "3\n");
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 3, vfs, 2), -EBUSY);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "fabric partition 3 cannot be activated: "
							"the partition or its GPUs are in use "
							"(FM_ST_IN_USE)"));
	/* the half 1-4 holds GPUs 1 and 2 */
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 1, vfs, 2), -EINVAL); /* 2 VFs for 4 */
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 7, vfs, 1), -EBUSY);
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 99, vfs, 1), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "no such partition"));
	/* vGPU mode wants the VFs */
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 9, NULL, 0), -EOPNOTSUPP);
	assert_int_equal(vgpu_fm_deactivate(&f->ctx, f->fm, 3), 0);
	state(f, "fm-active", buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(vgpu_fm_deactivate(&f->ctx, f->fm, 3), -ENOENT);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "fabric partition 3 is not active"));
	state(f, "calls", buf, sizeof(buf));
	assert_string_equal(buf,
			    "nvml nvmlInit_v2\n"
			    "nvfm fmActivateFabricPartitionWithVFs 3 0000:1b:00.4 0000:2a:00.4\n"
			    "nvfm fmActivateFabricPartitionWithVFs 3 0000:1b:00.4 0000:2a:00.4\n"
			    "nvfm fmActivateFabricPartitionWithVFs 1 0000:1b:00.4 0000:2a:00.4\n"
			    "nvfm fmActivateFabricPartitionWithVFs 7 0000:1b:00.4\n"
			    "nvfm fmActivateFabricPartitionWithVFs 99 0000:1b:00.4\n"
			    "nvfm fmActivateFabricPartition 9\n"
			    "nvfm fmDeactivateFabricPartition 3\n"
			    "nvfm fmDeactivateFabricPartition 3\n");
	/* shared NVSwitch mode: no VFs */
	put_state(f, "fm-mode", "1\n");
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 9, NULL, 0), 0);
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 10, vfs, 1), -EOPNOTSUPP);
}

/* Each injected status: its errno and its words. */
static void test_errors(void **st)
{
	struct fx *f = *st;
	static const struct {
		const char *fail;
		int err;
		const char *words;
	} cases[] = {
		{ "fmActivateFabricPartitionWithVFs not-ready\n", -EAGAIN,
		  "the fabric is not ready (FM_ST_NOT_READY)" },
		{ "* in-use\n", -EBUSY, "in use (FM_ST_IN_USE)" },
		{ "fmActivateFabricPartitionWithVFs out-of-sync\n", -ESTALE,
		  "Fabric Manager is out of sync" },
		{ "fmActivateFabricPartitionWithVFs not-running\n", -ECONNREFUSED,
		  "Fabric Manager is not running" },
		{ "fmActivateFabricPartitionWithVFs -10\n", -EIO, "(FM_ST_NVLINK_ERROR)" },
	};
	const char vf[1][VGPU_BDF_LEN] = { "0000:9b:00.5" };
	char buf[256];

	fm_open_ok(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put_state(f, "fm-fail", cases[i].fail);
		assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 13, vf, 1), cases[i].err);
		assert_non_null(strstr(vgpu_ctx_error(&f->ctx), cases[i].words));
	}
	state(f, "fm-active", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* not running: fmConnect fails */
	vgpu_fm_close(f->fm);
	f->fm = NULL;
	put_state(f, "fm-fail", "* not-running\n");
	assert_int_equal(vgpu_fm_open(&f->ctx, libnvfm, NULL, &f->fm), -ECONNREFUSED);
	assert_null(f->fm);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "Fabric Manager is not running"));
	/* in-use for every call does not stop the connection */
	put_state(f, "fm-fail", "* in-use\n");
	fm_open_ok(f);
	vgpu_fm_close(f->fm);
	f->fm = NULL;
	rm_state(f, "fm-fail");
	/* no library */
	assert_int_equal(vgpu_fm_open(&f->ctx, "/nonexistent/libnvfm.so.1", NULL, &f->fm), -ENOENT);
	assert_non_null(
		strstr(vgpu_ctx_error(&f->ctx), "'/nonexistent/libnvfm.so.1' cannot be loaded"));
	/* not the SDK: a library without fmLibInit */
	assert_int_equal(vgpu_fm_open(&f->ctx, libnvml, NULL, &f->fm), -ENOSYS);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "has no fmLibInit"));
}

/* A restarted Fabric Manager: nothing active, out of sync until told the active partitions. */
static void test_resync(void **st)
{
	struct fx *f = *st;
	const char vf[1][VGPU_BDF_LEN] = { "0000:bd:00.4" };
	const unsigned ids[] = { 3, 12 };
	struct vgpu_fabric fab = { .mode = VGPU_FABRIC_VGPU };
	char buf[256], path[PATH_MAX];

	put_state(f, "fm-active", "3\n12\n");
	put_state(f, "fm-restarted", "");
	fm_open_ok(f);
	assert_int_equal(vgpu_fm_read(&f->ctx, f->fm, f->m, &fab), 0);
	for (size_t i = 0; i < fab.n; i++)
		assert_false(fab.v[i].active);
	vgpu_fabric_clear(&fab);
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 12, vf, 1), -ESTALE);
	assert_int_equal(vgpu_fm_set_activated(&f->ctx, f->fm, ids, 2), 0);
	snprintf(path, sizeof(path), "%s/var/lib/fake-nvidia/fm-restarted", f->root);
	assert_int_equal(access(path, F_OK), -1);
	state(f, "fm-active", buf, sizeof(buf));
	assert_string_equal(buf, "3\n12\n");
	fab.mode = VGPU_FABRIC_VGPU;
	assert_int_equal(vgpu_fm_read(&f->ctx, f->fm, f->m, &fab), 0);
	assert_true(part(&fab, 3)->active);
	assert_true(part(&fab, 12)->active);
	assert_false(part(&fab, 13)->active);
	vgpu_fabric_clear(&fab);
	assert_int_equal(vgpu_fm_activate(&f->ctx, f->fm, 12, vf, 1), -EBUSY);
	assert_int_equal(vgpu_fm_set_activated(&f->ctx, f->fm, NULL, 0), 0);
	state(f, "fm-active", buf, sizeof(buf));
	assert_string_equal(buf, "");
	state(f, "calls", buf, sizeof(buf));
	assert_non_null(strstr(buf, "nvfm fmSetActivatedFabricPartitions 3 12\n"
				    "nvfm fmActivateFabricPartitionWithVFs 12 0000:bd:00.4\n"
				    "nvfm fmSetActivatedFabricPartitions\n"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_activate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync, setup, teardown),
	};

	if (argc < 4) {
		fprintf(stderr, "usage: %s SRCDIR LIBNVFM LIBNVML\n", argv[0]);
		return 1;
	}
	srcdir = argv[1];
	libnvfm = argv[2];
	libnvml = argv[3];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
