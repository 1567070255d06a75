// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-migrate-check - the checks of a live migration (src/lib/migrate-check.c):
 * a source and a target that pass every check, then for each check one change
 * that fails it, and the check that fails must be that one (and only that one).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "migrate-check.h"
#include "migrate-manifest.h"
#include "records.h"
#include "test-util.h"

struct pair {
	struct vgpu_mig_host src, dst;
	struct vgpu_mig_vgpu sv[2], tv[2];
	enum vgpu_cap_reason reasons[2];
	char devices[2][32];
	struct vgpu_mig_domain dom; /* the source domain's XML, as qemu-blockers reads it */
};

/* The H100-20C of both hosts, with NVML's and NVLink's answers. */
static struct vgpu_mig_vgpu h100(void)
{
	struct vgpu_mig_vgpu v = test_h100_20c();

	/* NVML's: the source's metadata, the target's answer (each end reads its own) */
	memcpy(v.nv_metadata, "standin-metadata", 16);
	v.nv_metadata_len = 16;
	v.has_nv_compat = true;
	v.nv_compat = VGPU_MIG_NV_COMPAT_LIVE | VGPU_MIG_NV_COMPAT_COLD;
	v.runtime_state_bytes = 64 << 20;
	v.type_fb_mib = 20480; /* H100-20C */
	/* NVLink's (topology): an SXM board's 18 links, all active */
	v.has_nvlinks = true;
	v.nvlinks = 18;
	return v;
}

/* Two hosts on which one H100-20C migrates: every check passes. */
static void good(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->sv[0] = p->tv[0] = h100();
	p->reasons[0] = VGPU_CAP_OK;
	strcpy(p->devices[0], "0000:4e:00.5");
	p->src = (struct vgpu_mig_host){ .libvirt = 10000000,
					 .qemu = 9000000,
					 .kernel = 6008000,
					 .driver_version = "550.90.05",
					 .driver_build = VGPU_ON,
					 .driver_build_from = "nvml",
					 .vgpus = p->sv,
					 .n_vgpus = 1 };
	/* libvirt's: a domain QEMU migrates, a max downtime above the need (17235 ms a vGPU) */
	p->dom = (struct vgpu_mig_domain){ .name = "vm1", .machine = "pc-q35-9.0", .n_vfio = 1 };
	p->src.domain = &p->dom;
	p->src.max_downtime_ms = 60000;
	p->dst = p->src;
	p->dst.domain = NULL;
	p->dst.vgpus = p->tv;
	p->dst.reasons = p->reasons;
	p->dst.devices = p->devices;
}

/* Run the checks; the one FAIL must be @id (NULL: none fails, the verdict is go). */
static void expect_fail(struct pair *p, const char *id)
{
	struct vgpu_mig_results r;

	vgpu_mig_check(&p->src, &p->dst, &r);
	for (size_t i = 0; i < r.n; i++) {
		if (id && !strcmp(r.items[i].id, id))
			assert_string_equal(vgpu_mig_status_name(r.items[i].status), "FAIL");
		else
			assert_string_equal(vgpu_mig_status_name(r.items[i].status), "PASS");
	}
	assert_non_null(vgpu_mig_result_find(&r, id ? id : "engine"));
	assert_int_equal(vgpu_mig_verdict_of(&r), id ? VGPU_MIG_NO_GO : VGPU_MIG_GO);
	vgpu_mig_results_free(&r);
}

static void test_all_pass(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;

	(void)state;
	good(&p);
	expect_fail(&p, NULL);
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(r.n, 13);
	assert_string_equal(vgpu_mig_result_find(&r, "capacity")->target, "0000:4e:00.5");
	assert_string_equal(vgpu_mig_result_find(&r, "engine")->source,
			    "libvirt 10.0.0, QEMU 9.0.0, kernel 6.8.0");
	vgpu_mig_results_free(&r);
}

static void test_versions(void **state)
{
	(void)state;
	assert_int_equal(vgpu_mig_version_parse("8.6.0"), 8006000);
	assert_int_equal(vgpu_mig_version_parse("6.8.0-45-generic"), 6008000);
	assert_int_equal(vgpu_mig_version_parse("11.0"), 11000000);
	assert_int_equal(vgpu_mig_version_parse("5.18"), 5018000);
	assert_int_equal(vgpu_mig_version_parse("v8"), 0);
	assert_int_equal(vgpu_mig_version_parse("8.1000"), 0);
	assert_int_equal(vgpu_mig_version_parse(""), 0);
}

static void test_engine(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.dst.libvirt = 8005000; /* below 8.6 */
	expect_fail(&p, "engine");
	good(&p);
	p.src.qemu = 8000000; /* below 8.1 */
	expect_fail(&p, "engine");
	/* 6.5 is enough for mdev, not for vendor-specific VFIO */
	good(&p);
	p.dst.kernel = 6005000;
	expect_fail(&p, "engine");
	p.sv[0].iface = p.tv[0].iface = VGPU_IFACE_MDEV;
	p.src.kernel = 6005000;
	expect_fail(&p, NULL);
	p.dst.kernel = 5015000;
	expect_fail(&p, "engine");
}

static void test_interface(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.tv[0].iface = VGPU_IFACE_MDEV; /* VF -> mdev on libvirt 10 */
	expect_fail(&p, "interface");
	p.dst.libvirt = p.src.libvirt = 11000000; /* both ends 11.0: allowed */
	expect_fail(&p, NULL);
	p.src.libvirt = 10009000;
	expect_fail(&p, "interface");
}

static void test_driver_version(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	strcpy(p.dst.driver_version, "550.90.07"); /* same branch, still refused */
	expect_fail(&p, "driver-version");
}

static void test_board(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.tv[0].pci_device = 0x2335; /* H200 */
	expect_fail(&p, "board");
	good(&p);
	p.tv[0].pci_subsystem = 0x10de1809;
	expect_fail(&p, "board");
	good(&p);
	p.tv[0].fb_mib = 95830; /* 94 GB NVL */
	expect_fail(&p, "board");
}

static void test_ecc(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.tv[0].ecc = VGPU_OFF;
	expect_fail(&p, "ecc");
}

static void test_topology(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.src.n_vgpus = 2; /* the target answered for one of two */
	p.sv[1] = h100();
	{
		struct vgpu_mig_results r;

		vgpu_mig_check(&p.src, &p.dst, &r);
		for (size_t i = 0; i < r.n; i++)
			assert_int_equal(r.items[i].status == VGPU_MIG_FAIL,
					 !strcmp(r.items[i].id, "topology"));
		assert_int_equal(vgpu_mig_verdict_of(&r), VGPU_MIG_NO_GO);
		vgpu_mig_results_free(&r);
	}
}

/* The check's answer for @id, after running every check on @p. */
static enum vgpu_mig_status status_of(struct pair *p, const char *id)
{
	struct vgpu_mig_results r;
	enum vgpu_mig_status st;

	vgpu_mig_check(&p->src, &p->dst, &r);
	st = vgpu_mig_result_find(&r, id)->status;
	vgpu_mig_results_free(&r);
	return st;
}

/* topology's NVLinks: another width fails, an unknown one is UNKNOWN, a count mismatch wins */
static void test_topology_nvlinks(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;
	const struct vgpu_mig_result *t;

	(void)state;
	good(&p);
	p.tv[0].nvlinks = 0; /* the target's GPU: a PCIe board */
	expect_fail(&p, "topology");
	vgpu_mig_check(&p.src, &p.dst, &r);
	t = vgpu_mig_result_find(&r, "topology");
	assert_string_equal(t->source, "1 vGPUs, NVLinks 18");
	assert_string_equal(t->target, "1 vGPUs, NVLinks 0");
	assert_non_null(strstr(t->next, "choose a target GPU with the same NVLink width"));
	vgpu_mig_results_free(&r);

	/* no NVLink on either end is a width too: both 0 passes */
	p.sv[0].nvlinks = 0;
	expect_fail(&p, NULL);

	/* either end not knowing (no NVML) is UNKNOWN, never PASS */
	good(&p);
	p.tv[0].has_nvlinks = false;
	assert_int_equal(status_of(&p, "topology"), VGPU_MIG_UNKNOWN);
	good(&p);
	p.sv[0].has_nvlinks = false;
	assert_int_equal(status_of(&p, "topology"), VGPU_MIG_UNKNOWN);
	/* no device offered for the vGPU: its target width is not known */
	good(&p);
	p.reasons[0] = VGPU_CAP_FB_FULL;
	assert_int_equal(status_of(&p, "topology"), VGPU_MIG_UNKNOWN);

	/* two vGPUs: the second's width differs while the first's is unknown: FAIL wins */
	good(&p);
	p.src.n_vgpus = p.dst.n_vgpus = 2;
	p.sv[1] = p.tv[1] = h100();
	p.reasons[1] = VGPU_CAP_OK;
	strcpy(p.devices[1], "0000:4e:00.6");
	p.tv[0].has_nvlinks = false;
	p.tv[1].nvlinks = 12;
	vgpu_mig_check(&p.src, &p.dst, &r);
	t = vgpu_mig_result_find(&r, "topology");
	assert_int_equal(t->status, VGPU_MIG_FAIL);
	assert_string_equal(t->target, "2 vGPUs, NVLinks ?,12");
	assert_non_null(strstr(t->next, "vGPU 2's GPU has 18 active NVLinks here and 12"));
	vgpu_mig_results_free(&r);

	/* the count fails even when every width is unknown */
	good(&p);
	p.src.n_vgpus = 2;
	p.sv[1] = h100();
	p.sv[0].has_nvlinks = p.sv[1].has_nvlinks = false;
	assert_int_equal(status_of(&p, "topology"), VGPU_MIG_FAIL);
}

static void test_capacity(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;

	(void)state;
	good(&p);
	p.reasons[0] = VGPU_CAP_ALL_VFS_HELD;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "capacity")->status, VGPU_MIG_FAIL);
	assert_string_equal(vgpu_mig_result_find(&r, "capacity")->target, "all-vfs-held");
	assert_non_null(strstr(vgpu_mig_result_find(&r, "capacity")->next, "all-vfs-held: "));
	/* no device: the board and ECC of the target are not known, never PASS */
	assert_int_equal(vgpu_mig_result_find(&r, "board")->status, VGPU_MIG_UNKNOWN);
	assert_int_equal(vgpu_mig_result_find(&r, "ecc")->status, VGPU_MIG_UNKNOWN);
	assert_int_equal(vgpu_mig_verdict_of(&r), VGPU_MIG_NO_GO);
	vgpu_mig_results_free(&r);
}

static void test_vgpu_params(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.sv[0].enable_uvm = VGPU_ON;
	expect_fail(&p, "vgpu-params");
	good(&p);
	p.sv[0].enable_profiling = VGPU_ON;
	expect_fail(&p, "vgpu-params");
	good(&p);
	p.sv[0].enable_debugging = VGPU_ON;
	expect_fail(&p, "vgpu-params");
}

/* driver-build: off on either end fails and names that end; not said on one end is UNKNOWN. */
static void test_driver_build(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;

	(void)state;
	good(&p);
	p.dst.driver_build = VGPU_OFF;
	strcpy(p.dst.driver_build_from, "kernel log");
	expect_fail(&p, "driver-build");
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_string_equal(vgpu_mig_result_find(&r, "driver-build")->target,
			    "migration off (kernel log)");
	assert_non_null(strstr(vgpu_mig_result_find(&r, "driver-build")->next, "target's"));
	vgpu_mig_results_free(&r);
	good(&p);
	p.src.driver_build = VGPU_OFF;
	expect_fail(&p, "driver-build");
	/* nobody said (a zeroed host): UNKNOWN, never PASS or FAIL */
	good(&p);
	p.dst.driver_build_from[0] = '\0';
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "driver-build")->status, VGPU_MIG_UNKNOWN);
	assert_int_equal(vgpu_mig_verdict_of(&r), VGPU_MIG_UNSURE);
	vgpu_mig_results_free(&r);
}

/* nvidia-compatibility: the live bit passes; without it the limit code is named. */
static void test_nvidia_compat(void **state)
{
	static const struct {
		uint32_t limit;
		const char *name, *next;
	} lim[] = {
		{ VGPU_MIG_NV_LIMIT_HOST_DRIVER, "host driver", "vGPU manager version" },
		{ VGPU_MIG_NV_LIMIT_GUEST_DRIVER, "guest driver", "guest's NVIDIA driver" },
		{ VGPU_MIG_NV_LIMIT_GPU, "GPU", "same board" },
		{ VGPU_MIG_NV_LIMIT_OTHER, "other", "log" },
	};
	struct pair p;
	struct vgpu_mig_results r;

	(void)state;
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		const struct vgpu_mig_result *x;

		good(&p);
		p.tv[0].nv_compat = VGPU_MIG_NV_COMPAT_COLD | VGPU_MIG_NV_COMPAT_SLEEP;
		p.tv[0].nv_limit = lim[i].limit;
		expect_fail(&p, "nvidia-compatibility");
		vgpu_mig_check(&p.src, &p.dst, &r);
		x = vgpu_mig_result_find(&r, "nvidia-compatibility");
		assert_non_null(strstr(x->target, lim[i].name));
		assert_non_null(strstr(x->target, "sleep+cold"));
		assert_non_null(strstr(x->next, lim[i].name));
		assert_non_null(strstr(x->next, lim[i].next));
		vgpu_mig_results_free(&r);
	}
	/* no metadata from the source, or no answer from the target: UNKNOWN */
	good(&p);
	p.sv[0].nv_metadata_len = 0;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "nvidia-compatibility")->status,
			 VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
	good(&p);
	p.tv[0].has_nv_compat = false;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "nvidia-compatibility")->status,
			 VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
}

static int parse(const char *text, struct vgpu_mig_host *h)
{
	struct vgpu_ctx ctx;
	int r;

	vgpu_ctx_init(&ctx, NULL, NULL);
	r = vgpu_mig_manifest_parse(&ctx, text, strlen(text), h);
	vgpu_ctx_clear(&ctx);
	return r;
}

/* NVML's keys survive the manifest: metadata (base64), runtime state, the answer, the build. */
static void test_manifest_nvml(void **state)
{
	struct pair p;
	struct vgpu_mig_host h = { 0 };
	char *text;

	(void)state;
	good(&p);
	for (size_t i = 0; i < 5; i++) { /* every length mod 3 and a NUL byte */
		p.tv[0].nv_metadata_len = 13 + i;
		p.tv[0].nv_metadata[3] = 0;
		p.dst.driver_build = i % 2 ? VGPU_ON : VGPU_OFF;
		text = vgpu_mig_manifest_format(&p.dst);
		assert_int_equal(parse(text, &h), 0);
		assert_int_equal(h.vgpus[0].nv_metadata_len, 13 + i);
		assert_memory_equal(h.vgpus[0].nv_metadata, p.tv[0].nv_metadata, 13 + i);
		assert_int_equal(h.vgpus[0].runtime_state_bytes, 64 << 20);
		assert_true(h.vgpus[0].has_nv_compat);
		assert_int_equal(h.vgpus[0].nv_compat, p.tv[0].nv_compat);
		assert_int_equal(h.driver_build, p.dst.driver_build);
		assert_string_equal(h.driver_build_from, "nvml");
		vgpu_mig_offer_clear(&h);
		free(text);
	}
	/* a subsystem ID and none of NVML's keys: unknown, not zero answers */
	good(&p);
	p.sv[0].nv_metadata_len = 0;
	p.sv[0].has_nv_compat = false;
	p.sv[0].runtime_state_bytes = 0;
	p.src.driver_build_from[0] = '\0';
	text = vgpu_mig_manifest_format(&p.src);
	assert_non_null(strstr(text, "\"pci-subsystem\": \"10de:1626\""));
	assert_non_null(strstr(text, "\"driver-build\": null"));
	assert_int_equal(parse(text, &h), 0);
	assert_int_equal(h.vgpus[0].nv_metadata_len, 0);
	assert_false(h.vgpus[0].has_nv_compat);
	assert_string_equal(h.driver_build_from, "");
	assert_int_equal(h.vgpus[0].pci_subsystem, 0x10de1626);
	vgpu_mig_offer_clear(&h);
	free(text);
}

static void test_qemu_blockers(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;
	const struct vgpu_mig_result *x;

	(void)state;
	good(&p);
	p.dom.iommu = true; /* QEMU refuses VFIO migration behind a vIOMMU */
	expect_fail(&p, "qemu-blockers");
	good(&p);
	p.dom.migration_off = true;
	expect_fail(&p, "qemu-blockers");
	/* ramfb: on a machine type before 8.1 it fails, from 8.1 on it passes */
	good(&p);
	p.dom.ramfb = true;
	strcpy(p.dom.machine, "pc-q35-8.0");
	expect_fail(&p, "qemu-blockers");
	strcpy(p.dom.machine, "pc-q35-8.1");
	expect_fail(&p, NULL);
	strcpy(p.dom.machine, "q35"); /* unversioned: the newest */
	expect_fail(&p, NULL);
	/* several VFIO devices: a warning (P2P), not a failure */
	good(&p);
	p.dom.n_vfio = 2;
	vgpu_mig_check(&p.src, &p.dst, &r);
	x = vgpu_mig_result_find(&r, "qemu-blockers");
	assert_int_equal(x->status, VGPU_MIG_WARN);
	assert_string_equal(x->source, "2 VFIO devices");
	assert_non_null(strstr(x->next, "P2P"));
	assert_int_equal(vgpu_mig_verdict_of(&r), VGPU_MIG_GO);
	vgpu_mig_results_free(&r);
	/* a passed-through device of another kind: it must migrate by itself */
	p.dom.n_vfio_other = 1;
	vgpu_mig_check(&p.src, &p.dst, &r);
	x = vgpu_mig_result_find(&r, "qemu-blockers");
	assert_int_equal(x->status, VGPU_MIG_WARN);
	assert_non_null(strstr(x->next, "1 not vgpuctl's"));
	vgpu_mig_results_free(&r);
	/* the domain's XML not read (no libvirt): UNKNOWN, never PASS */
	good(&p);
	p.src.domain = NULL;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "qemu-blockers")->status, VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
}

static void test_machine_before(void **state)
{
	(void)state;
	assert_true(vgpu_mig_machine_before("pc-q35-8.0", 8001));
	assert_true(vgpu_mig_machine_before("pc-i440fx-7.2", 8001));
	assert_true(vgpu_mig_machine_before("virt-6.2", 8001));
	assert_false(vgpu_mig_machine_before("pc-q35-8.1", 8001));
	assert_false(vgpu_mig_machine_before("pc-q35-10.0", 8001));
	assert_false(vgpu_mig_machine_before("q35", 8001));
	assert_false(vgpu_mig_machine_before("pc-q35-rhel9.2.0", 8001));
	assert_false(vgpu_mig_machine_before("", 8001));
}

static void test_downtime(void **state)
{
	struct pair p;
	struct vgpu_mig_results r;
	const struct vgpu_mig_result *x;
	bool known;

	(void)state;
	good(&p);
	/* (20480 MiB + 64 MiB) at 1192 MiB/s: 17235 ms; advice + 1/4, to 100 ms: 21600 */
	assert_int_equal(vgpu_mig_downtime_need_ms(&p.src, &known), 17235);
	assert_true(known);
	assert_int_equal(vgpu_mig_downtime_advice_ms(17235), 21600);
	assert_int_equal(vgpu_mig_downtime_advice_ms(10), 300);
	p.src.max_downtime_ms = 17000;
	expect_fail(&p, "downtime");
	vgpu_mig_check(&p.src, &p.dst, &r);
	x = vgpu_mig_result_find(&r, "downtime");
	assert_string_equal(x->next,
			    "virsh migrate-setmaxdowntime vm1 21600 (before the migration)");
	assert_string_equal(x->target, "max downtime 17000ms");
	/* the value vgpuctl migrate sets first, as data */
	assert_int_equal(r.downtime_advice_ms, 21600);
	vgpu_mig_results_free(&r);
	/* a faster link: the same max downtime is enough, and nothing is to be set */
	p.src.bandwidth_mib_s = 11920;
	assert_int_equal(vgpu_mig_downtime_need_ms(&p.src, &known), 1724);
	expect_fail(&p, NULL);
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(r.downtime_advice_ms, 0);
	vgpu_mig_results_free(&r);
	/* the runtime state not known: counted 0, a warning when the rest fits */
	good(&p);
	p.sv[0].runtime_state_bytes = 0;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "downtime")->status, VGPU_MIG_WARN);
	assert_int_equal(r.downtime_advice_ms, 21500);
	vgpu_mig_results_free(&r);
	/* the type's framebuffer not known, or the max downtime: UNKNOWN */
	good(&p);
	p.sv[0].type_fb_mib = 0;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "downtime")->status, VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
	good(&p);
	p.src.max_downtime_ms = 0;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "downtime")->status, VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
}

static void test_postcopy(void **state)
{
	struct pair p;

	(void)state;
	good(&p);
	p.src.postcopy = true;
	expect_fail(&p, "post-copy");
}

/* A target that was not asked: every check that compares is UNKNOWN, never PASS. */
static void test_no_target(void **state)
{
	static const char *const both[] = {
		"engine", "interface", "driver-build", "driver-version", "nvidia-compatibility",
		"board",  "ecc",       "topology",     "capacity"
	};
	struct pair p;
	struct vgpu_mig_results r;

	(void)state;
	good(&p);
	vgpu_mig_check(&p.src, NULL, &r);
	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++)
		assert_int_equal(vgpu_mig_result_find(&r, both[i])->status, VGPU_MIG_UNKNOWN);
	assert_int_equal(vgpu_mig_result_find(&r, "vgpu-params")->status, VGPU_MIG_PASS);
	assert_int_equal(vgpu_mig_verdict_of(&r), VGPU_MIG_UNSURE);
	vgpu_mig_results_free(&r);
	/* a version not known on one end is UNKNOWN too */
	p.dst.kernel = 0;
	vgpu_mig_check(&p.src, &p.dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "engine")->status, VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
}

/* An A30 on mdev whose four VFs offer A30-4C, one each. */
static struct vgpu_model *a30(void)
{
	struct vgpu_model *m = vgpu_model_new();
	struct vgpu_gpu *g = vgpu_model_add_gpu(m, "0000:3b:00.0", 0x20b7);
	struct vgpu_parent *p;
	struct vgpu_type *t;

	g->iface = VGPU_IFACE_MDEV;
	g->sriov_total_vfs = g->sriov_num_vfs = 4;
	g->mig_current = g->mig_pending = VGPU_OFF;
	g->fb_mib = 24576;
	g->subsystem = 0x10de1532;
	t = vgpu_gpu_add_type(g, 683, "NVIDIA A30-4C");
	t->max_instances = 6;
	for (int i = 0; i < 4; i++) {
		char addr[16];

		snprintf(addr, sizeof(addr), "0000:3b:00.%d", 4 + i);
		p = vgpu_gpu_add_parent(g, addr, i);
		p->iface = VGPU_IFACE_MDEV;
		vgpu_parent_add_type(p, t, 1);
	}
	return m;
}

/* The target's offer: a slot per vGPU, the slots given counted, the reason when none. */
static void test_offer(void **state)
{
	struct vgpu_model *m = a30();
	struct vgpu_mig_vgpu v[5];
	struct vgpu_mig_host src = { .vgpus = v, .n_vgpus = 2 }, dst = { 0 };
	struct vgpu_mig_results r;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		v[i] = (struct vgpu_mig_vgpu){ .type_name = "A30-4C",
					       .iface = VGPU_IFACE_MDEV,
					       .pci_device = 0x20b7,
					       .fb_mib = 24576 };
	vgpu_mig_offer(m, NULL, &src, &dst);
	assert_int_equal(dst.n_vgpus, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(dst.reasons[i], VGPU_CAP_OK);
		assert_string_equal(dst.devices[i], "0000:3b:00.0");
		assert_int_equal(dst.vgpus[i].pci_device, 0x20b7);
		assert_int_equal(dst.vgpus[i].fb_mib, 24576);
		assert_int_equal(dst.vgpus[i].pci_subsystem, 0x10de1532); /* the board's */
		assert_int_equal(dst.vgpus[i].iface, VGPU_IFACE_MDEV);
	}
	vgpu_mig_check(&src, &dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "capacity")->status, VGPU_MIG_PASS);
	/* the model knows no NVLinks (NVML's): topology cannot pass */
	assert_int_equal(vgpu_mig_result_find(&r, "topology")->status, VGPU_MIG_UNKNOWN);
	vgpu_mig_results_free(&r);
	vgpu_mig_offer_clear(&dst);

	/* five where four fit: the fifth has none, and capacity fails */
	src.n_vgpus = 5;
	vgpu_mig_offer(m, NULL, &src, &dst);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(dst.reasons[i], VGPU_CAP_OK);
	assert_int_not_equal(dst.reasons[4], VGPU_CAP_OK);
	vgpu_mig_check(&src, &dst, &r);
	assert_int_equal(vgpu_mig_result_find(&r, "capacity")->status, VGPU_MIG_FAIL);
	vgpu_mig_results_free(&r);
	vgpu_mig_offer_clear(&dst);

	/* a type the target has not */
	src.n_vgpus = 1;
	strcpy(v[0].type_name, "H100-20C");
	vgpu_mig_offer(m, NULL, &src, &dst);
	assert_int_equal(dst.reasons[0], VGPU_CAP_NOT_SUPPORTED);
	vgpu_mig_check(&src, &dst, &r);
	assert_string_equal(vgpu_mig_result_find(&r, "capacity")->target, "not-supported");
	vgpu_mig_results_free(&r);
	vgpu_mig_offer_clear(&dst);
	vgpu_model_free(m);
}

/* The source's side: the board of each record's GPU, its subsystem ID included. */
static void test_manifest_of(void **state)
{
	struct vgpu_model *m = a30();
	struct vgpu_record rec[2] = {
		{ .domain = "vm1",
		  .domain_uuid = "11111111-2222-4333-8444-555555555551",
		  .gpu = "0000:3b:00.0",
		  .iface = VGPU_IFACE_MDEV,
		  .type_id = 683,
		  .profile = "A30-4C" },
		{ .domain = "vm2", .gpu = "0000:3b:00.0" },
	};
	struct vgpu_records recs = { .v = rec, .n = 2 };
	struct vgpu_mig_host h = { 0 };

	(void)state;
	assert_int_equal(vgpu_mig_manifest_of(m, &recs, "vm1", &h), 1);
	assert_int_equal(h.vgpus[0].pci_device, 0x20b7);
	assert_int_equal(h.vgpus[0].pci_subsystem, 0x10de1532);
	assert_int_equal(h.vgpus[0].ecc, VGPU_UNKNOWN); /* NVML's, not the model's */
	assert_int_equal(h.vgpus[0].nv_metadata_len, 0);
	vgpu_mig_offer_clear(&h);
	vgpu_model_free(m);
}

/* The device the offer names per vGPU: a parent each, the mdev UUID kept when free. */
static void test_offer_devices(void **state)
{
	struct vgpu_model *m = a30();
	struct vgpu_mig_vgpu v[2];
	struct vgpu_mig_host src = { .vgpus = v, .n_vgpus = 2 }, dst = { 0 };
	struct vgpu_record rec = { .domain = "other",
				   .parent = "0000:3b:00.4",
				   .gpu = "0000:3b:00.0",
				   .iface = VGPU_IFACE_MDEV,
				   .mdev_uuid = "aaaaaaaa-2222-4333-8444-555555555551" };
	struct vgpu_records recs = { .v = &rec, .n = 1 };

	(void)state;
	m->gpus[0].numa_node = 1;
	vgpu_cpulist_parse("12-23,60-71", &m->gpus[0].cpus);
	m->gpus[0].has_cpus = true;
	for (size_t i = 0; i < 2; i++)
		v[i] = (struct vgpu_mig_vgpu){ .type_name = "A30-4C", .iface = VGPU_IFACE_MDEV };
	strcpy(v[0].mdev_uuid, "aaaaaaaa-2222-4333-8444-555555555551");
	strcpy(v[1].mdev_uuid, "bbbbbbbb-2222-4333-8444-555555555552");
	/* nobody here holds them: both UUIDs kept, one VF each, the GPU's node and CPUs */
	vgpu_mig_offer(m, NULL, &src, &dst);
	assert_string_equal(dst.vgpus[0].parent, "0000:3b:00.4");
	assert_string_equal(dst.vgpus[1].parent, "0000:3b:00.5");
	assert_string_equal(dst.vgpus[0].mdev_uuid, v[0].mdev_uuid);
	assert_string_equal(dst.vgpus[1].mdev_uuid, v[1].mdev_uuid);
	assert_int_equal(dst.vgpus[0].numa_node, 1);
	assert_string_equal(dst.vgpus[0].cpus, "12-23,60-71");
	assert_int_equal(dst.vgpus[0].type_id, 683);
	vgpu_mig_offer_clear(&dst);
	/* a record here holds the first UUID and its VF: a new UUID ("") and the next VFs */
	vgpu_mig_offer(m, &recs, &src, &dst);
	assert_string_equal(dst.vgpus[0].mdev_uuid, "");
	assert_string_equal(dst.vgpus[1].mdev_uuid, v[1].mdev_uuid);
	assert_string_equal(dst.vgpus[0].parent, "0000:3b:00.5");
	assert_string_equal(dst.vgpus[1].parent, "0000:3b:00.6");
	vgpu_mig_offer_clear(&dst);
	/* an mdev of the target's has the UUID: taken too */
	vgpu_strv_push(&m->gpus[0].parents[3].mdevs,
		       vgpu_xstrdup("BBBBBBBB-2222-4333-8444-555555555552"));
	vgpu_mig_offer(m, NULL, &src, &dst);
	assert_string_equal(dst.vgpus[1].mdev_uuid, "");
	vgpu_mig_offer_clear(&dst);
	vgpu_model_free(m);
}

/* vgpu_params: comma-separated name=value; what is not named is off. */
static void test_params_parse(void **state)
{
	struct vgpu_mig_vgpu v;

	(void)state;
	vgpu_mig_params_parse("", &v);
	assert_int_equal(v.enable_uvm, VGPU_OFF);
	assert_int_equal(v.enable_debugging, VGPU_OFF);
	assert_int_equal(v.enable_profiling, VGPU_OFF);
	vgpu_mig_params_parse("frame_rate_limiter=0,enable_uvm=1\n", &v);
	assert_int_equal(v.enable_uvm, VGPU_ON);
	assert_int_equal(v.enable_debugging, VGPU_OFF);
	vgpu_mig_params_parse(" enable_debugging=1, enable_profiling=0 ,enable_uvm_x=1", &v);
	assert_int_equal(v.enable_uvm, VGPU_OFF);
	assert_int_equal(v.enable_debugging, VGPU_ON);
	assert_int_equal(v.enable_profiling, VGPU_OFF);
	vgpu_mig_params_parse("enable_profiling=2", &v);
	assert_int_equal(v.enable_profiling, VGPU_ON);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_pass),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_interface),
		cmocka_unit_test(test_driver_version),
		cmocka_unit_test(test_board),
		cmocka_unit_test(test_ecc),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_topology_nvlinks),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_vgpu_params),
		cmocka_unit_test(test_qemu_blockers),
		cmocka_unit_test(test_machine_before),
		cmocka_unit_test(test_downtime),
		cmocka_unit_test(test_postcopy),
		cmocka_unit_test(test_no_target),
		cmocka_unit_test(test_offer),
		cmocka_unit_test(test_offer_devices),
		cmocka_unit_test(test_params_parse),
		/* NVML's checks and keys: driver-build, nvidia-compatibility, the manifest */
		cmocka_unit_test(test_driver_build),
		cmocka_unit_test(test_nvidia_compat),
		cmocka_unit_test(test_manifest_nvml),
		cmocka_unit_test(test_manifest_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
