// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-migrate-manifest - the migration manifest and offer as JSON
 * (src/lib/migrate-manifest.c): what is written reads back the same, keys a
 * newer vgpuctl adds are skipped, and damaged or oversized text is refused
 * with a message, never half read.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrate-manifest.h"
#include "test-util.h"

/* The manifest's vGPU: one vgpu_params flag not known. */
static struct vgpu_mig_vgpu h100(void)
{
	struct vgpu_mig_vgpu v = test_h100_20c();

	v.enable_debugging = VGPU_UNKNOWN;
	return v;
}

static int parse(const char *text, struct vgpu_mig_host *h)
{
	struct vgpu_ctx ctx;
	int r;

	vgpu_ctx_init(&ctx, NULL, NULL);
	r = vgpu_mig_manifest_parse(&ctx, text, strlen(text), h);
	if (r)
		assert_non_null(strstr(vgpu_ctx_error(&ctx), "migration manifest"));
	vgpu_ctx_clear(&ctx);
	return r;
}

static void assert_vgpu_equal(const struct vgpu_mig_vgpu *a, const struct vgpu_mig_vgpu *b)
{
	assert_int_equal(a->type_id, b->type_id);
	assert_string_equal(a->type_name, b->type_name);
	assert_int_equal(a->iface, b->iface);
	assert_int_equal(a->pci_device, b->pci_device);
	assert_int_equal(a->pci_subsystem, b->pci_subsystem);
	assert_int_equal(a->fb_mib, b->fb_mib);
	assert_int_equal(a->ecc, b->ecc);
	assert_int_equal(a->enable_uvm, b->enable_uvm);
	assert_int_equal(a->enable_debugging, b->enable_debugging);
	assert_int_equal(a->enable_profiling, b->enable_profiling);
}

static void test_manifest_round_trip(void **state)
{
	struct vgpu_mig_vgpu v[2] = { h100(), h100() };
	struct vgpu_mig_host src = { .libvirt = 10000000,
				     .qemu = 8002002,
				     .kernel = 6008000,
				     .driver_version = "550.90.05 \"x\"",
				     .vgpus = v,
				     .n_vgpus = 2 },
			     back;
	char *text;

	(void)state;
	v[1].iface = VGPU_IFACE_MDEV;
	v[1].pci_subsystem = 0;
	v[1].ecc = VGPU_OFF;
	text = vgpu_mig_manifest_format(&src);
	assert_non_null(strstr(text, "\"vgpuctl-migrate\": 1,"));
	assert_non_null(strstr(text, "\"pci-subsystem\": \"10de:1626\""));
	assert_int_equal(parse(text, &back), 0);
	assert_int_equal(back.libvirt, 10000000);
	assert_int_equal(back.qemu, 8002002);
	assert_int_equal(back.kernel, 6008000);
	assert_string_equal(back.driver_version, "550.90.05 \"x\"");
	assert_int_equal(back.n_vgpus, 2);
	assert_null(back.reasons); /* a manifest, not an offer */
	assert_vgpu_equal(&back.vgpus[0], &v[0]);
	assert_vgpu_equal(&back.vgpus[1], &v[1]);
	vgpu_mig_offer_clear(&back);
	free(text);
}

static void test_offer_round_trip(void **state)
{
	struct vgpu_mig_vgpu v[2] = { h100(), h100() };
	enum vgpu_cap_reason reasons[2] = { VGPU_CAP_OK, VGPU_CAP_FB_FULL };
	char devices[2][32] = { "0000:4e:00.0", "" };
	struct vgpu_mig_host dst = { .vgpus = v,
				     .n_vgpus = 2,
				     .reasons = reasons,
				     .devices = devices },
			     back;
	char *text;

	(void)state;
	text = vgpu_mig_manifest_format(&dst);
	assert_non_null(strstr(text, "\"libvirt\": null"));
	assert_int_equal(parse(text, &back), 0);
	assert_int_equal(back.libvirt, 0);
	assert_string_equal(back.driver_version, "");
	assert_non_null(back.reasons);
	assert_int_equal(back.reasons[0], VGPU_CAP_OK);
	assert_string_equal(back.devices[0], "0000:4e:00.0");
	assert_int_equal(back.reasons[1], VGPU_CAP_FB_FULL);
	vgpu_mig_offer_clear(&back);
	free(text);
}

/* A newer vgpuctl's keys are skipped; null and absent stay unknown. */
static void test_unknown_keys(void **state)
{
	struct vgpu_mig_host h;

	(void)state;
	assert_int_equal(
		parse("{\"future\": {\"a\": [1, 2.5e3, -1, true, null, \"\\u00e9\"]}, \"vgpuctl-migrate\": 1,"
		      " \"vgpus\": [{\"type\": \"A30-4C\", \"nvlink\": [], \"ecc\": null}], \"kernel\": \"6.8.0-45-generic\"}",
		      &h),
		0);
	assert_int_equal(h.n_vgpus, 1);
	assert_string_equal(h.vgpus[0].type_name, "A30-4C");
	assert_int_equal(h.vgpus[0].ecc, VGPU_UNKNOWN);
	assert_int_equal(h.vgpus[0].enable_uvm, VGPU_UNKNOWN);
	assert_int_equal(h.vgpus[0].iface, VGPU_IFACE_NONE);
	assert_int_equal(h.kernel, 6008000);
	assert_int_equal(h.libvirt, 0);
	vgpu_mig_offer_clear(&h);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"vgpuctl-migrate\": 1}", /* no vgpus */
		"{\"vgpuctl-migrate\": 2, \"vgpus\": []}", /* another format */
		"{\"vgpus\": []}", /* no format */
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": []} x",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"type\": 5}]}",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"type-id\": -1}]}",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"pci-device\": \"23\"}]}",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"pci-subsystem\": \"10de\"}]}",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"reason\": \"tired\"}]}",
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"device\": \"a\"}, {}]}", /* half an offer
										   */
		"{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"type\": \"A30\x01\"}]}",
	};
	struct vgpu_mig_host h = { .libvirt = 42 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i], &h);

		if (r != -EINVAL)
			fail_msg("accepted or misread #%zu: %s (%d)", i, bad[i], r);
		assert_int_equal(h.libvirt, 42); /* @out untouched */
	}
}

static void test_bounds(void **state)
{
	struct vgpu_mig_host h = { 0 };
	struct vgpu_ctx ctx;
	char *text = NULL;

	(void)state;
	vgpu_append(&text, "{\"vgpuctl-migrate\": 1, \"vgpus\": [{}");
	for (int i = 1; i <= VGPU_MIG_MANIFEST_MAX_VGPUS; i++)
		vgpu_append(&text, ", {}");
	vgpu_append(&text, "]}");
	assert_int_equal(parse(text, &h), -E2BIG);
	free(text);
	/* nested 16 deep is read, 17 is refused */
	for (int depth = 16; depth <= 17; depth++) {
		text = NULL;
		vgpu_append(&text, "{\"vgpuctl-migrate\": 1, \"vgpus\": [], \"x\": %*s%*s}", depth,
			    "", depth, "");
		memset(strstr(text, "\"x\": ") + 5, '[', (size_t)depth);
		memset(strstr(text, "\"x\": ") + 5 + depth, ']', (size_t)depth);
		assert_int_equal(parse(text, &h), depth == 16 ? 0 : -EINVAL);
		if (depth == 16)
			vgpu_mig_offer_clear(&h);
		free(text);
	}
	text = vgpu_xcalloc(VGPU_MIG_MANIFEST_MAX + 2, 1);
	memset(text, ' ', VGPU_MIG_MANIFEST_MAX + 1);
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_mig_manifest_parse(&ctx, text, VGPU_MIG_MANIFEST_MAX + 1, &h),
			 -E2BIG);
	vgpu_ctx_clear(&ctx);
	free(text);
}

/* libvirt's keys: downtime's sizes and the device migrate-xml retargets to. */
static void test_libvirt_keys(void **state)
{
	struct vgpu_mig_vgpu v = h100();
	struct vgpu_mig_host h = { .vgpus = &v, .n_vgpus = 1 }, back;
	enum vgpu_cap_reason ok = VGPU_CAP_OK;
	char dev[1][32] = { "0000:3b:00.0" };
	char *text;

	(void)state;
	v.type_fb_mib = 20480;
	v.runtime_state_bytes = 123456789;
	strcpy(v.mdev_uuid, "aaaaaaaa-2222-4333-8444-555555555551");
	strcpy(v.parent, "0000:3b:00.5");
	v.numa_node = 1;
	strcpy(v.cpus, "12-23,60-71");
	h.reasons = &ok;
	h.devices = dev;
	text = vgpu_mig_manifest_format(&h);
	assert_non_null(strstr(
		text,
		"\"type-framebuffer-mib\": 20480, \"mdev-uuid\": \"aaaaaaaa-2222-4333-8444-555555555551\", \"parent\": \"0000:3b:00.5\", \"numa-node\": 1, \"cpus\": \"12-23,60-71\""));
	assert_non_null(strstr(text, "\"runtime-state-bytes\": 123456789"));
	assert_int_equal(parse(text, &back), 0);
	assert_int_equal(back.vgpus[0].type_fb_mib, 20480);
	assert_int_equal(back.vgpus[0].runtime_state_bytes, 123456789);
	assert_string_equal(back.vgpus[0].mdev_uuid, v.mdev_uuid);
	assert_string_equal(back.vgpus[0].parent, "0000:3b:00.5");
	assert_int_equal(back.vgpus[0].numa_node, 1);
	assert_string_equal(back.vgpus[0].cpus, "12-23,60-71");
	vgpu_mig_offer_clear(&back);
	free(text);
	/* not given: unknown (node -1); a parent in another spelling is normalized */
	assert_int_equal(
		parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"parent\": \"3B:00.5\", \"numa-node\": null}, {}]}",
		      &back),
		0);
	assert_string_equal(back.vgpus[0].parent, "0000:3b:00.5");
	assert_int_equal(back.vgpus[0].numa_node, -1);
	assert_int_equal(back.vgpus[1].numa_node, -1);
	assert_int_equal(back.vgpus[1].mdev_uuid[0], '\0');
	vgpu_mig_offer_clear(&back);
	/* values that would become paths are checked */
	assert_int_equal(parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"mdev-uuid\": \"../x\"}]}",
			       &back),
			 -EINVAL);
	assert_int_equal(parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"parent\": \"../../x\"}]}",
			       &back),
			 -EINVAL);
}

/* The shared plan's keys (migrate-plan.h): the manifest's domain, the offer's landing and plan. */
static void test_plan_keys(void **state)
{
	struct vgpu_mig_vgpu v[2] = { h100(), h100() };
	enum vgpu_cap_reason ok[2] = { VGPU_CAP_OK, VGPU_CAP_OK };
	char dev[2][32] = { "0000:4e:00.0", "0000:4e:00.0" };
	struct vgpu_mplan *plan = calloc(1, sizeof(*plan));
	struct vgpu_mig_host src = { .vgpus = v,
				     .n_vgpus = 2,
				     .vcpus = 4,
				     .memory_kib = 4194304,
				     .pinned = true },
			     dst, back;
	char *text;

	(void)state;
	assert_non_null(plan);
	strcpy(src.uuid, "11111111-2222-4333-8444-555555555551");
	v[0].display = true;
	text = vgpu_mig_manifest_format(&src);
	assert_non_null(strstr(
		text,
		"\"uuid\": \"11111111-2222-4333-8444-555555555551\",\n  \"vcpus\": 4,\n  \"memory-kib\": 4194304,\n  \"pinned\": true,\n"));
	assert_int_equal(parse(text, &back), 0);
	free(text);
	assert_string_equal(back.uuid, src.uuid);
	assert_int_equal(back.vcpus, 4);
	assert_int_equal(back.memory_kib, 4194304);
	assert_true(back.pinned);
	assert_true(back.vgpus[0].display);
	assert_false(back.vgpus[1].display);
	assert_null(back.plan);
	vgpu_mig_offer_clear(&back);
	/* the offer: a landing per vGPU ("" mdev UUID: a new one), the node, CPUs and pins */
	plan->n_landing = 2;
	plan->node = 1;
	assert_int_equal(vgpu_cpulist_parse("24-25,72-73", &plan->cpus), 0);
	plan->n_pins = 4;
	memcpy(plan->pins, (unsigned[]){ 24, 72, 25, 73 }, 4 * sizeof(unsigned));
	for (size_t i = 0; i < 2; i++) {
		struct vgpu_mplan_landing *l = &plan->landing[i];

		strcpy(l->gpu, "0000:4e:00.0");
		snprintf(l->parent, sizeof(l->parent), "0000:4e:00.%zu", 4 + i);
		l->iface = i ? VGPU_IFACE_MDEV : VGPU_IFACE_VENDOR_VFIO;
		l->type_id = 1023;
		strcpy(l->profile, "H100-20C");
		l->changed = i == 1;
	}
	strcpy(plan->landing[1].mdev_uuid, "");
	dst = (struct vgpu_mig_host){
		.vgpus = v, .n_vgpus = 2, .reasons = ok, .devices = dev, .plan = plan
	};
	text = vgpu_mig_manifest_format(&dst);
	assert_non_null(strstr(
		text,
		"\"plan\": { \"node\": 1, \"cpus\": \"24-25,72-73\", \"pins\": [24, 72, 25, 73] },\n"));
	assert_non_null(strstr(
		text,
		"\"landing\": { \"gpu\": \"0000:4e:00.0\", \"parent\": \"0000:4e:00.5\", \"interface\": \"mdev\", \"type-id\": 1023, \"type\": \"H100-20C\", \"mdev-uuid\": \"\", \"changed\": true }"));
	assert_int_equal(parse(text, &back), 0);
	free(text);
	assert_non_null(back.plan);
	assert_int_equal(back.plan->n_landing, 2);
	assert_int_equal(back.plan->node, 1);
	assert_cpus(&back.plan->cpus, "24-25,72-73");
	assert_int_equal(back.plan->n_pins, 4);
	assert_int_equal(back.plan->pins[3], 73);
	assert_memory_equal(&back.plan->landing[0], &plan->landing[0], sizeof(plan->landing[0]));
	assert_memory_equal(&back.plan->landing[1], &plan->landing[1], sizeof(plan->landing[1]));
	vgpu_mig_offer_clear(&back);
	assert_null(back.plan);
	/* refused: the hook's one line instead of a plan */
	dst.plan = NULL;
	strcpy(dst.plan_error, "vGPU 1 (H100-20C) is vf on the source and would be mdev here: no");
	text = vgpu_mig_manifest_format(&dst);
	assert_null(strstr(text, "landing"));
	assert_int_equal(parse(text, &back), 0);
	free(text);
	assert_null(back.plan);
	assert_string_equal(back.plan_error, dst.plan_error);
	vgpu_mig_offer_clear(&back);
	free(plan);
	/* a landing for one vGPU of two, a bad pin, a landing's path-like value: refused */
	assert_int_equal(parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"landing\": {}}, {}]}",
			       &back),
			 -EINVAL);
	assert_int_equal(
		parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [], \"plan\": {\"pins\": [-1]}}", &back),
		-EINVAL);
	assert_int_equal(
		parse("{\"vgpuctl-migrate\": 1, \"vgpus\": [{\"landing\": {\"parent\": \"../x\"}}]}",
		      &back),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_round_trip),
		cmocka_unit_test(test_libvirt_keys),
		cmocka_unit_test(test_plan_keys),
		cmocka_unit_test(test_offer_round_trip),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
