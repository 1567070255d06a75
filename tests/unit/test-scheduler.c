// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scheduler.c: the RmPVMRL codec against every example NVIDIA documents
 * (decode -> fields -> encode gives the same value, and the fields say what
 * the documentation's sentence says), the modprobe.d lines (per-device
 * beating global, a later file beating an earlier one, malformed lines named
 * with file and line), the file vgpuctl writes (other keys and GPUs kept)
 * and the kernel log's scheduler lines; --set's write under the host lock.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler-host.h"
#include "scheduler.h"
#include "sysfs-lock.h"
#include "test-util.h"
#include <sys/wait.h>

/*
 * Every RmPVMRL example of NVIDIA's documentation, with its sentence, read
 * as the driver reads the value.
 *  - The layout: NVIDIA/open-gpu-kernel-modules
 *    src/nvidia/interface/nvrm_registry.h, NV_REG_STR_RM_PVMRL: "BIT 0:0 -
 *    Overall PVMRL enable/disable", "BIT 1:1 - Adaptive Round Robin
 *    Scheduler: 0 - Enable / Default, 1 - Disable - Use Legacy PVMRL",
 *    "BIT 7:4 - PVMRL scheduler to run: 0 - equal share, 1 - fixed share",
 *    "BIT 21:12 - PVMRL Scheduling frequency", "BIT 23:16 - PVMRL timeslice
 *    in ms", "BIT 31:24 - ARR Average Factor".
 *  - The examples: NVIDIA AI Enterprise 5.0 user guide §7.3 "RmPVMRL
 *    Registry Key" (docs.nvidia.com/ai-enterprise/5.0/user-guide, the same
 *    text as vGPU 17 §8): RmPVMRL=0x01 "equal share scheduler with a strict
 *    round-robin scheduling policy and the default time slice length,
 *    scheduling frequency, and averaging factor"; 0x00030003 "equal share
 *    scheduler without a strict round-robin scheduling policy and with a time
 *    slice that is 3 ms long"; 0x11 the same for fixed share; 0x00180011
 *    "fixed share scheduler without a strict round-robin scheduling policy
 *    and with a time slice that is 24 (0x18) ms long"; 0x3c3c0001 and
 *    0x3c3c0011 "an averaging factor of 60 (0x3C), and a scheduling frequency
 *    of 960 (0x3C0) Hz"; TT "0x01 to 0x1E", AA "0x01 to 0x3C", FFF "0x3F to
 *    0x3C0", "If FFF is greater than 000 but less than 0x3F, the scheduling
 *    frequency is raised to 0x3F".
 *  - 0x00180011 lacks bit 1, unlike the guide's own 0x00030003: the driver
 *    reads it as fixed share, adaptive, frequency 0x180 (384 Hz), not as a
 *    24 ms slice.  vgpuctl reads it as the driver does; 24 ms of the legacy
 *    scheduler is 0x00180013.
 *  - 0x00030001 "3 ms" and 0x00120001 "18 ms" come from secondary sources
 *    and older guides (before 15.0 had no bit 1): today's driver reads their
 *    TT as the frequency FFF (0x030, 48 Hz, raised to 63; 0x120, 288 Hz).
 */
static const struct example {
	uint32_t value;
	enum vgpu_sched_policy policy;
	unsigned timeslice_ms;
	bool adaptive, legacy;
	unsigned avg_factor, frequency_hz;
	const char *text; /* vgpu_sched_text(): the sentence in vgpuctl's words */
	const char *doc; /* NVIDIA's sentence */
} examples[] = {
	{ 0x00, VGPU_SCHED_BEST_EFFORT, 0, false, false, 0, 0, "best-effort",
	  "Best effort scheduler" },
	{ 0x01, VGPU_SCHED_EQUAL_SHARE, 0, false, false, 0, 0, "equal-share",
	  "equal share scheduler with a strict round-robin scheduling policy and the default time slice length, scheduling frequency, and averaging factor" },
	{ 0x11, VGPU_SCHED_FIXED_SHARE, 0, false, false, 0, 0, "fixed-share",
	  "fixed share scheduler with a strict round-robin scheduling policy and the default time slice length, scheduling frequency, and averaging factor" },
	{ 0x00030003, VGPU_SCHED_EQUAL_SHARE, 3, false, true, 0, 0, "equal-share 3ms",
	  "equal share scheduler without a strict round-robin scheduling policy and with a time slice that is 3 ms long" },
	{ 0x00180011, VGPU_SCHED_FIXED_SHARE, 0, true, false, 0, 0x180,
	  "fixed-share adaptive 33/384Hz",
	  "fixed share scheduler without a strict round-robin scheduling policy and with a time slice that is 24 (0x18) ms long (bit 1 clear: the driver reads FFF 0x180)" },
	{ 0x3c3c0001, VGPU_SCHED_EQUAL_SHARE, 0, true, false, 60, 960,
	  "equal-share adaptive 60/960Hz",
	  "equal share scheduler with a strict round-robin scheduling policy, an averaging factor of 60 (0x3C), and a scheduling frequency of 960 (0x3C0) Hz" },
	{ 0x3c3c0011, VGPU_SCHED_FIXED_SHARE, 0, true, false, 60, 960,
	  "fixed-share adaptive 60/960Hz",
	  "fixed share scheduler with a strict round-robin scheduling policy, an averaging factor of 60 (0x3C), and a scheduling frequency of 960 (0x3C0) Hz" },
	{ 0x00180013, VGPU_SCHED_FIXED_SHARE, 24, false, true, 0, 0, "fixed-share 24ms",
	  "0x00TT0013: the legacy fixed share scheduler, TT = 0x18 (24 ms)" },
	{ 0x00010003, VGPU_SCHED_EQUAL_SHARE, 1, false, true, 0, 0, "equal-share 1ms",
	  "0x00TT0003 with the shortest time slice, TT = 0x01" },
	{ 0x001e0013, VGPU_SCHED_FIXED_SHARE, 30, false, true, 0, 0, "fixed-share 30ms",
	  "0x00TT0013 with the longest time slice, TT = 0x1E" },
	{ 0x03, VGPU_SCHED_EQUAL_SHARE, 0, false, true, 0, 0, "equal-share",
	  "the legacy equal share scheduler with the default time slice (TT 00)" },
	{ 0x0103f011, VGPU_SCHED_FIXED_SHARE, 0, true, false, 1, 63, "fixed-share adaptive 1/63Hz",
	  "0xAAFFF011 at the low ends: AA 0x01, FFF 0x3F" },
};

static void test_documented_examples(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		const struct example *e = &examples[i];
		struct vgpu_sched s;
		uint32_t back = 0xdeadbeef;
		char text[64];

		print_message("RmPVMRL=0x%08x: %s\n", e->value, e->doc);
		assert_int_equal(vgpu_sched_decode(e->value, &s), 0);
		assert_int_equal(s.policy, e->policy);
		assert_int_equal(s.timeslice_ms, e->timeslice_ms);
		assert_int_equal(s.adaptive, e->adaptive);
		assert_int_equal(s.legacy, e->legacy);
		assert_int_equal(s.avg_factor, e->avg_factor);
		assert_int_equal(s.frequency_hz, e->frequency_hz);
		vgpu_sched_text(&s, text, sizeof(text));
		assert_string_equal(text, e->text);
		assert_int_equal(vgpu_sched_encode(&s, &back), 0);
		assert_int_equal(back, e->value);
	}
}

/* values NVIDIA does not document are refused, not guessed at */
static void test_decode_refuses(void **state)
{
	static const uint32_t bad[] = {
		0x10, /* bit 0 clear: best effort with more bits */
		0x00030000, /* best effort with a time slice */
		0x05,	    0x09, /* bits 2, 3 */
		0x21, /* policy 2 in bits 7:4 */
		0x001f0003, /* TT above 0x1E */
		0x00ff0013, /* TT above 0x1E */
		0x3d3c0001, /* AA above 0x3C */
		0x3c3d0001, /* FFF above 0x3C0 */
		0x3c000001, /* AA without a frequency */
		0x3c3c0101, /* bits 8-11 set */
		0x00000101, /* bit 8 */
		0x00c3f001, /* bits 23:22 with adaptive round robin */
		0x3c030003, /* AA with the legacy scheduler */
		0x0003f003, /* FFF bits 15:12 with the legacy scheduler */
	};
	struct vgpu_sched s = { .policy = VGPU_SCHED_FIXED_SHARE, .timeslice_ms = 7 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("0x%08x\n", bad[i]);
		assert_int_equal(vgpu_sched_decode(bad[i], &s), -EINVAL);
	}
	assert_int_equal(s.policy, VGPU_SCHED_FIXED_SHARE); /* untouched */
	assert_int_equal(s.timeslice_ms, 7);
}

/*
 * The values of the older guides and secondary sources: read as today's
 * driver reads them (adaptive, TT as the frequency), never written.
 */
static void test_decode_pre15(void **state)
{
	struct vgpu_sched s;
	uint32_t v = 0;
	char text[64];

	(void)state;
	assert_int_equal(vgpu_sched_decode(0x00030001, &s), 0);
	assert_true(s.adaptive);
	assert_false(s.legacy);
	assert_int_equal(s.timeslice_ms, 0);
	assert_int_equal(s.frequency_hz, 0x30);
	vgpu_sched_text(&s, text, sizeof(text));
	assert_string_equal(text, "equal-share adaptive 33/63Hz"); /* raised to 63 Hz */
	assert_int_equal(vgpu_sched_encode(&s, &v), -ERANGE); /* 48 Hz is not written */
	assert_int_equal(vgpu_sched_decode(0x00120001, &s), 0);
	assert_true(s.adaptive);
	assert_int_equal(s.frequency_hz, 0x120);
	vgpu_sched_text(&s, text, sizeof(text));
	assert_string_equal(text, "equal-share adaptive 33/288Hz");
}

static void test_encode(void **state)
{
	struct vgpu_sched s = { .policy = VGPU_SCHED_EQUAL_SHARE, .timeslice_ms = 31 };
	uint32_t v = 0;

	(void)state;
	assert_int_equal(vgpu_sched_encode(&s, &v), -ERANGE);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_BEST_EFFORT, .timeslice_ms = 3 };
	assert_int_equal(vgpu_sched_encode(&s, &v), -EINVAL);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_NONE };
	assert_int_equal(vgpu_sched_encode(&s, &v), -EINVAL);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_FIXED_SHARE, .adaptive = true };
	assert_int_equal(vgpu_sched_encode(&s, &v), -ERANGE); /* no frequency */
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_FIXED_SHARE,
				 .adaptive = true,
				 .avg_factor = 61,
				 .frequency_hz = 960 };
	assert_int_equal(vgpu_sched_encode(&s, &v), -ERANGE);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_FIXED_SHARE,
				 .adaptive = true,
				 .timeslice_ms = 3,
				 .frequency_hz = 960 };
	assert_int_equal(vgpu_sched_encode(&s, &v), -EINVAL);
	/* a time slice is the legacy scheduler's: bit 1 is set for it (the driver reads TT only
	 * then) */
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_EQUAL_SHARE, .timeslice_ms = 3 };
	assert_int_equal(vgpu_sched_encode(&s, &v), 0);
	assert_int_equal(v, 0x00030003);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_FIXED_SHARE, .timeslice_ms = 24 };
	assert_int_equal(vgpu_sched_encode(&s, &v), 0);
	assert_int_equal(v, 0x00180013);
	/* AA 00: the driver's default, kept as 00 */
	assert_int_equal(vgpu_sched_decode(0x0003f001, &s), 0);
	assert_true(s.adaptive);
	assert_int_equal(s.avg_factor, 0);
	assert_int_equal(s.frequency_hz, 63);
	assert_int_equal(vgpu_sched_encode(&s, &v), 0);
	assert_int_equal(v, 0x0003f001);
	s = (struct vgpu_sched){ .policy = VGPU_SCHED_EQUAL_SHARE,
				 .adaptive = true,
				 .frequency_hz = 0x100 };
	assert_int_equal(vgpu_sched_encode(&s, &v), 0);
	assert_int_equal(v, 0x00100001);
}

static void test_policy_names(void **state)
{
	enum vgpu_sched_policy p = VGPU_SCHED_NONE;

	(void)state;
	assert_int_equal(vgpu_sched_policy_parse("fixed-share", &p), 0);
	assert_int_equal(p, VGPU_SCHED_FIXED_SHARE);
	assert_int_equal(vgpu_sched_policy_parse("EQUAL_SHARE", &p), 0);
	assert_int_equal(p, VGPU_SCHED_EQUAL_SHARE);
	assert_int_equal(vgpu_sched_policy_parse("round-robin", &p), -EINVAL);
	assert_null(vgpu_sched_policy_name(VGPU_SCHED_NONE));
	assert_string_equal(vgpu_sched_policy_name(VGPU_SCHED_BEST_EFFORT), "best-effort");
}

static void test_differs(void **state)
{
	struct vgpu_sched want = { .policy = VGPU_SCHED_EQUAL_SHARE };
	struct vgpu_sched live = { .policy = VGPU_SCHED_EQUAL_SHARE, .timeslice_ms = 2 };

	(void)state;
	assert_false(vgpu_sched_differs(&want, &live)); /* the default is what the driver chose */
	want.timeslice_ms = 3;
	assert_true(vgpu_sched_differs(&want, &live));
	want.timeslice_ms = 2;
	assert_false(vgpu_sched_differs(&want, &live));
	live.policy = VGPU_SCHED_FIXED_SHARE;
	assert_true(vgpu_sched_differs(&want, &live));
	/* 0x01, the driver's defaults: adaptive round robin since 15.0, as NVML says */
	want = (struct vgpu_sched){ .policy = VGPU_SCHED_EQUAL_SHARE };
	live = (struct vgpu_sched){ .policy = VGPU_SCHED_EQUAL_SHARE, .adaptive = true };
	assert_false(vgpu_sched_differs(&want, &live));
	/* 0x03, the legacy scheduler: not what an adaptive driver runs */
	want.legacy = true;
	assert_true(vgpu_sched_differs(&want, &live));
}

static void parse_ok(struct vgpu_sched_conf *c, const char *file, const char *text)
{
	struct vgpu_ctx ctx;

	vgpu_ctx_init(&ctx, NULL, NULL);
	if (vgpu_sched_conf_parse(&ctx, c, file, text) != 0)
		fail_msg("%s: %s", file, vgpu_ctx_error(&ctx));
	vgpu_ctx_clear(&ctx);
}

static void test_conf_per_device_beats_global(void **state)
{
	struct vgpu_sched_conf c = { 0 };
	const char *from = NULL;
	uint32_t v = 0;

	(void)state;
	parse_ok(
		&c, "a.conf",
		"# a comment\n"
		"options nouveau modeset=0\n"
		"options nvidia NVreg_EnablePCIeGen3=0 NVreg_RegistryDwords=\"PerfLevelSrc=0x2222;RmPVMRL=0x01\"\n"
		"options nvidia NVreg_RegistryDwordsPerDevice=\\\n"
		"\"pci=0000:86:00.0;RmPVMRL=0x11;pci=3B:00.0;RmPVMRL=0x00180011\"\n");
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:86:00.0", &v, &from), 0);
	assert_int_equal(v, 0x11);
	assert_string_equal(from, "a.conf");
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:3b:00.0", &v, &from), 0);
	assert_int_equal(v, 0x00180011);
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:af:00.0", &v, &from), 0);
	assert_int_equal(v, 0x01);
	/* a later file's parameter replaces the earlier one, as the kernel keeps the last */
	parse_ok(&c, "b.conf", "options nvidia NVreg_RegistryDwords=RmPVMRL=0x00030001\n");
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:af:00.0", &v, &from), 0);
	assert_int_equal(v, 0x00030001);
	assert_string_equal(from, "b.conf");
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:86:00.0", &v, &from), 0);
	assert_int_equal(v, 0x11);
	/* a global value without RmPVMRL: nothing for every GPU */
	parse_ok(&c, "c.conf", "options nvidia NVreg_RegistryDwords=\"PerfLevelSrc=0x2222\"\n");
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:af:00.0", &v, &from), -ENOENT);
	vgpu_sched_conf_clear(&c);
	assert_int_equal(vgpu_sched_conf_of(&c, "0000:86:00.0", &v, &from), -ENOENT);
}

static void test_conf_malformed(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "\noptions nvidia NVreg_RegistryDwords=\"RmPVMRL=0x5\"\n",
		  "x.conf:2: NVreg_RegistryDwords: RmPVMRL=0x5 is not a scheduler value NVIDIA documents" },
		{ "options nvidia NVreg_RegistryDwords=RmPVMRL=fast\n",
		  "x.conf:1: NVreg_RegistryDwords: RmPVMRL=fast is not" },
		{ "options nvidia NVreg_RegistryDwords=RmPVMRL=\n",
		  "x.conf:1: NVreg_RegistryDwords: RmPVMRL= is not" },
		{ "options nvidia NVreg_RegistryDwordsPerDevice=\"RmPVMRL=0x11\"\n",
		  "x.conf:1: NVreg_RegistryDwordsPerDevice: RmPVMRL=0x11 comes before any pci=ADDR" },
		{ "options nvidia NVreg_RegistryDwordsPerDevice=\"pci=zz;RmPVMRL=0x11\"\n",
		  "x.conf:1: NVreg_RegistryDwordsPerDevice: pci=zz is not a PCI address" },
		{ "options nvidia NVreg_RegistryDwords=\"RmPVMRL=0x11\n",
		  "x.conf:1: a quote is not closed" },
	};
	struct vgpu_ctx ctx;
	struct vgpu_sched_conf c = { 0 };
	const char *from;
	uint32_t v;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	parse_ok(&c, "ok.conf", "options nvidia NVreg_RegistryDwords=RmPVMRL=0x11\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vgpu_sched_conf_parse(&ctx, &c, "x.conf", bad[i].text), -EINVAL);
		if (strncmp(vgpu_ctx_error(&ctx), bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("got '%s', want '%s...'", vgpu_ctx_error(&ctx), bad[i].msg);
		/* the file is refused whole: what was read before stays */
		assert_int_equal(vgpu_sched_conf_of(&c, "0000:01:00.0", &v, &from), 0);
		assert_int_equal(v, 0x11);
	}
	vgpu_sched_conf_clear(&c);
	vgpu_ctx_clear(&ctx);
}

static void test_render(void **state)
{
	struct vgpu_sched_conf all = { 0 }, ours = { 0 };
	const char *gpus[] = { "0000:3b:00.0", "0000:af:00.0" };
	const uint32_t fs2[] = { 0x11, 0x11 }, es[] = { 0x01 }, mix[] = { 0x00, 0x00180011 };
	const uint32_t all_es = 0x01;
	char *s;

	(void)state;
	parse_ok(
		&all, "nvidia.conf",
		"options nvidia NVreg_RegistryDwords=\"PerfLevelSrc=0x2222;RmPVMRL=0x01\"\n"
		"options nvidia NVreg_RegistryDwordsPerDevice=\"pci=0000:86:00.0;RmPVMRL=0x11;pci=0000:3b:00.0;Other=1;RmPVMRL=0x01\"\n");
	/* every GPU: the other key kept, RmPVMRL replaced */
	{
		const uint32_t v = 0x00030001;

		s = vgpu_sched_conf_render(&all, &ours, &v, NULL, NULL, 0);
	}
	assert_non_null(strstr(
		s,
		"options nvidia NVreg_RegistryDwords=\"PerfLevelSrc=0x2222;RmPVMRL=0x00030001\"\n"));
	assert_null(strstr(s, "PerDevice"));
	free(s);
	/* two GPUs: 86 kept, 3b's entry replaced in its group, af added */
	s = vgpu_sched_conf_render(&all, &ours, NULL, gpus, fs2, 2);
	assert_non_null(strstr(
		s,
		"options nvidia NVreg_RegistryDwordsPerDevice=\"pci=0000:86:00.0;RmPVMRL=0x11;pci=0000:3b:00.0;Other=1;RmPVMRL=0x11;pci=0000:af:00.0;RmPVMRL=0x11\"\n"));
	assert_null(strstr(s, "NVreg_RegistryDwords="));
	free(s);
	/* our own global line stays when a GPU is set */
	parse_ok(&ours, "vgpuctl-scheduler.conf",
		 "options nvidia NVreg_RegistryDwords=RmPVMRL=0x00\n");
	s = vgpu_sched_conf_render(&all, &ours, NULL, gpus, es, 1);
	assert_non_null(strstr(s, "NVreg_RegistryDwords=\"RmPVMRL=0x00\"\n"));
	assert_non_null(strstr(s, "pci=0000:3b:00.0;Other=1;RmPVMRL=0x01\"\n"));
	free(s);
	/* both at once (apply), one value per GPU */
	s = vgpu_sched_conf_render(&all, &ours, &all_es, gpus, mix, 2);
	assert_non_null(strstr(s, "NVreg_RegistryDwords=\"PerfLevelSrc=0x2222;RmPVMRL=0x01\"\n"));
	assert_non_null(strstr(
		s,
		"pci=0000:3b:00.0;Other=1;RmPVMRL=0x00;pci=0000:af:00.0;RmPVMRL=0x00180011\"\n"));
	free(s);
	vgpu_sched_conf_clear(&all);
	vgpu_sched_conf_clear(&ours);
}

static void test_log(void **state)
{
	struct vgpu_sched_log *v = NULL;
	size_t n;

	(void)state;
	n = vgpu_sched_log_parse(
		"Nov 28 10:00:00 h kernel: NVRM: GPU at 0000:3b:00.0 has software scheduler ENABLED with policy EQUAL_SHARE.\n"
		"Nov 28 10:00:00 h kernel: NVRM: Software scheduler timeslice set to 3 ms.\n"
		"Nov 28 10:00:00 h kernel: NVRM: GPU at PCI:0000:af:00: GPU-1 has software scheduler DISABLED with policy BEST_EFFORT.\n"
		"Nov 28 11:00:00 h kernel: NVRM: GPU at 0000:3b:00.0 has software scheduler ENABLED with policy FIXED_SHARE.\n"
		"Nov 28 11:00:00 h kernel: NVRM: GPU at 0000:3c:00.0 has software scheduler ENABLED with policy ROUND_ROBIN.\n"
		"Nov 28 11:00:00 h kernel: NVRM: Software scheduler timeslice set to 9000uS.\n",
		&v);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].bdf, "0000:3b:00.0");
	assert_int_equal(v[0].s.policy, VGPU_SCHED_FIXED_SHARE); /* the last load's */
	assert_int_equal(v[0].s.timeslice_ms, 0); /* 9 ms is the unknown policy's */
	assert_string_equal(v[1].bdf, "0000:af:00.0");
	assert_int_equal(v[1].s.policy, VGPU_SCHED_BEST_EFFORT);
	free(v);
	n = vgpu_sched_log_parse(
		"NVRM: GPU at 0000:3b:00.0 has software scheduler ENABLED with policy EQUAL_SHARE.\n"
		"NVRM: Software scheduler timeslice set to 3 ms.",
		&v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].s.timeslice_ms, 3);
	free(v);
	/* the driver's own form, in microseconds (objsched.c: "%uuS.") */
	n = vgpu_sched_log_parse(
		"NVRM: GPU at 0000:3b:00.0 has software scheduler ENABLED with policy EQUAL_SHARE.\n"
		"NVRM: Software scheduler timeslice set to 2000uS.\n",
		&v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].s.timeslice_ms, 2);
	free(v);
	assert_int_equal(vgpu_sched_log_parse("nothing here\n", &v), 0);
	assert_null(v);
}

/*
 * vgpu_sched_set() reads and replaces vgpuctl's modprobe.d file under the
 * host lock, as every writer does: while another run holds it the write
 * waits (a dry run, which writes nothing, does not), and the lock is let go
 * after.
 */
static void test_set_waits_for_host_lock(void **state)
{
	const struct vgpu_sched_want w = { .s = { .policy = VGPU_SCHED_EQUAL_SHARE } };
	struct vgpu_model m = { .n_gpus = 0 };
	struct vgpu_sysfs *fs = NULL, *other = NULL;
	char root[1024], path[1200], *text = NULL, c;
	struct vgpu_ctx ctx;
	uint64_t t0, waited;
	bool changed;
	int held[2], st;
	pid_t pid;

	(void)state;
	tree_make(root, sizeof(root), "sched-lock");
	tree_dir(root, "etc/modprobe.d");
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_sysfs_open(&ctx, root, &fs), 0);
	assert_int_equal(pipe(held), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* another run: holds the host lock for 300 ms */
		if (vgpu_sysfs_open(&ctx, root, &other) < 0 || vgpu_sysfs_lock(&ctx, other, 0) < 0)
			_exit(1);
		if (write(held[1], "h", 1) != 1)
			_exit(1);
		usleep(300000);
		_exit(0);
	}
	assert_int_equal(read(held[0], &c, 1), 1);
	t0 = vgpu_monotonic_ms();
	assert_int_equal(vgpu_sched_set(&ctx, fs, &m, &w, 1, true, &text, &changed), 0);
	assert_true(vgpu_monotonic_ms() - t0 < 250);
	free(text);
	t0 = vgpu_monotonic_ms();
	assert_int_equal(vgpu_sched_set(&ctx, fs, &m, &w, 1, false, &text, &changed), 0);
	waited = vgpu_monotonic_ms() - t0;
	print_message("waited %llu ms for the holder\n", (unsigned long long)waited);
	assert_true(waited >= 250);
	assert_true(changed);
	assert_non_null(strstr(text, "RmPVMRL=0x01"));
	free(text);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof(path), "%s/%s/%s", root, VGPU_SCHED_DIR, VGPU_SCHED_FILE);
	assert_int_equal(access(path, F_OK), 0);
	/* let go after: another run takes it at once */
	assert_int_equal(vgpu_sysfs_open(&ctx, root, &other), 0);
	assert_int_equal(vgpu_sysfs_lock(&ctx, other, 0), 0);
	vgpu_sysfs_free(other);
	vgpu_sysfs_free(fs);
	vgpu_ctx_clear(&ctx);
	close(held[0]);
	close(held[1]);
	tree_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_documented_examples),
		cmocka_unit_test(test_decode_refuses),
		cmocka_unit_test(test_decode_pre15),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_differs),
		cmocka_unit_test(test_conf_per_device_beats_global),
		cmocka_unit_test(test_conf_malformed),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_set_waits_for_host_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
