// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-hostcfg - the host configuration file (src/lib/hostcfg.c): NVIDIA's
 * own published example files, vgpuctl's extensions (PCI addresses,
 * start-domains), and every refusal with its exact one-line message.
 *
 * Usage: test-hostcfg SRCDIR (or VGPU_SRCDIR in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostcfg.h"
#include "test-util.h"

static const char *srcdir;
static struct vgpu_ctx ctx;

static int parse(const char *text, const char *label, struct vgpu_hostcfg *c)
{
	vgpu_ctx_clear(&ctx);
	return vgpu_hostcfg_parse(&ctx, "t.yaml", text, strlen(text), label, c);
}

/* @text (with @label) is refused with -EINVAL and exactly @msg. */
static void assert_refused(const char *text, const char *label, const char *msg)
{
	struct vgpu_hostcfg c = { 0 };
	int r = parse(text, label, &c);

	if (r != -EINVAL || strcmp(vgpu_ctx_error(&ctx), msg) != 0)
		fail_msg("for:\n%s\ngot %d '%s'\nwanted '%s'", text, r, vgpu_ctx_error(&ctx), msg);
	assert_null(c.entries);
}

static void load_example(const char *name, const char *label, struct vgpu_hostcfg *c)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/tests/data/configs/%s", srcdir, name);
	vgpu_ctx_clear(&ctx);
	r = vgpu_hostcfg_load(&ctx, path, label, c);
	if (r < 0)
		fail_msg("%s: %s", path, vgpu_ctx_error(&ctx));
}

/* ---- NVIDIA's own examples ---------------------------------------------------- */

static void test_mig_parted_example(void **state)
{
	struct vgpu_hostcfg c = { 0 };
	const struct vgpu_cfg_entry *e;

	(void)state;
	load_example("mig-parted-example.yaml", "custom-config", &c);
	assert_int_equal(c.n_labels, 9);
	assert_string_equal(c.labels[0], "all-1g.10gb"); /* sorted */
	assert_string_equal(c.label, "custom-config");
	assert_int_equal(c.n_entries, 5);
	assert_int_equal(c.n_domains, 0);
	e = &c.entries[0];
	assert_int_equal(e->section, VGPU_CFG_MIG);
	assert_int_equal(e->line, 58);
	assert_false(e->is_all);
	assert_int_equal(e->n_indexes, 4);
	assert_int_equal(e->indexes[3], 3);
	assert_int_equal(e->mig_enabled, 0);
	assert_int_equal(e->n_mig, 0);
	e = &c.entries[4];
	assert_int_equal(e->n_indexes, 1);
	assert_int_equal(e->indexes[0], 7);
	assert_int_equal(e->mig_enabled, 1);
	assert_int_equal(e->n_mig, 3);
	assert_string_equal(e->mig[0].name, "1g.5gb");
	assert_int_equal(e->mig[0].count, 2);
	assert_string_equal(e->mig[2].name, "3g.20gb");
	assert_int_equal(e->mig[2].count, 1);
	vgpu_hostcfg_clear(&c);

	load_example("mig-parted-example.yaml", "all-enabled", &c);
	assert_int_equal(c.n_entries, 1);
	assert_true(c.entries[0].is_all);
	assert_int_equal(c.entries[0].mig_enabled, 1);
	assert_int_equal(c.entries[0].n_mig, 0); /* mig-devices: {} */
	vgpu_hostcfg_clear(&c);

	load_example("mig-parted-example.yaml", "all-1g.5gb.me", &c);
	assert_string_equal(c.entries[0].mig[0].name, "1g.5gb+me");
	vgpu_hostcfg_clear(&c);
}

static void test_vgpu_device_manager_example(void **state)
{
	struct vgpu_hostcfg c = { 0 };
	const struct vgpu_cfg_entry *e;

	(void)state;
	load_example("vgpu-device-manager-example.yaml", "A30-1-6C", &c);
	assert_int_equal(c.n_labels, 546);
	assert_int_equal(c.n_entries, 1);
	e = &c.entries[0];
	assert_int_equal(e->section, VGPU_CFG_VGPU);
	assert_int_equal(e->line, 126);
	assert_true(e->is_all);
	assert_int_equal(e->mig_enabled, -1);
	assert_int_equal(e->n_vgpu, 1);
	assert_string_equal(e->vgpu[0].name, "A30-1-6C");
	assert_int_equal(e->vgpu[0].count, 4);
	assert_int_equal(e->vgpu[0].line, 128);
	vgpu_hostcfg_clear(&c);

	/* "default": one entry per board, selected by PCI id (device-filter) */
	load_example("vgpu-device-manager-example.yaml", "default", &c);
	assert_int_equal(c.n_entries, 52);
	e = &c.entries[0];
	assert_int_equal(e->line, 2190);
	assert_int_equal(e->n_filter, 1);
	assert_int_equal(e->device_filter[0], 0x1db110de);
	assert_string_equal(e->vgpu[0].name, "V100X-8Q");
	e = &c.entries[39];
	assert_int_equal(e->device_filter[0], 0x233a10de);
	assert_string_equal(e->vgpu[0].name, "H800L-47C");
	assert_int_equal(e->vgpu[0].count, 2);
	vgpu_hostcfg_clear(&c);
}

/* ---- vgpuctl's extensions ------------------------------------------------------ */

static void test_addresses_and_domains(void **state)
{
	static const char text[] = "version: v1\n"
				   "vgpu-configs:\n"
				   "  lab:\n"
				   "    - devices: [\"0000:3B:00.0\", 3b:00.1, 2]\n"
				   "      device-filter: [\"0x20B710DE\", 0x20b910de]\n"
				   "      vgpu-devices: {A30-4C: 6}\n"
				   "mig-configs:\n"
				   "  lab:\n"
				   "    - devices: [\"0000:af:00.0\"]\n"
				   "      mig-enabled: True\n"
				   "      mig-devices: {1g.6gb: 4}\n"
				   "    - devices: all\n"
				   "      mig-enabled: FALSE\n"
				   "start-domains:\n"
				   "  lab: [vm1, \"vm 2\"]\n"
				   "  other: []\n";
	struct vgpu_hostcfg c = { 0 };
	const struct vgpu_cfg_entry *e;

	(void)state;
	assert_int_equal(parse(text, "lab", &c), 0);
	assert_string_equal(c.file, "t.yaml");
	assert_int_equal(c.n_labels, 2);
	assert_int_equal(c.n_entries, 3);
	/* mig-configs first, whatever the order in the file */
	e = &c.entries[0];
	assert_int_equal(e->section, VGPU_CFG_MIG);
	assert_int_equal(e->line, 9);
	assert_int_equal(e->n_addrs, 1);
	assert_string_equal(e->addrs[0], "0000:af:00.0");
	assert_int_equal(e->mig_enabled, 1);
	assert_int_equal(c.entries[1].mig_enabled, 0);
	e = &c.entries[2];
	assert_int_equal(e->section, VGPU_CFG_VGPU);
	assert_int_equal(e->n_addrs, 2);
	assert_string_equal(e->addrs[0], "0000:3b:00.0");
	assert_string_equal(e->addrs[1], "0000:3b:00.1");
	assert_int_equal(e->n_indexes, 1);
	assert_int_equal(e->indexes[0], 2);
	assert_int_equal(e->n_filter, 2);
	assert_int_equal(e->device_filter[1], 0x20b910de);
	assert_int_equal(c.n_domains, 2);
	assert_string_equal(c.domains[1], "vm 2");
	vgpu_hostcfg_clear(&c);

	/* a label with domains only; no label: validation only */
	assert_int_equal(parse(text, "other", &c), 0);
	assert_int_equal(c.n_entries, 0);
	assert_int_equal(c.n_domains, 0);
	vgpu_hostcfg_clear(&c);
	assert_int_equal(parse(text, NULL, &c), 0);
	assert_null(c.label);
	assert_int_equal(c.n_labels, 2);
	assert_int_equal(c.n_entries, 0);
	vgpu_hostcfg_clear(&c);
}

/* ---- refusals ------------------------------------------------------------------- */

#define HEAD "version: v1\nmig-configs:\n  a:\n    - devices: all\n"
#define VHEAD "version: v1\nvgpu-configs:\n  v:\n    - devices: all\n"

/*
 * YAML 1.1 booleans, as NVIDIA's tools (go-yaml v2) read mig-enabled: a file
 * that mig-parted accepts is accepted here, with the same meaning.
 */
static void test_yaml11_booleans(void **state)
{
	static const struct {
		const char *word;
		int value;
	} cases[] = {
		{ "yes", 1 }, { "Yes", 1 }, { "YES", 1 }, { "on", 1 },	  { "On", 1 },
		{ "ON", 1 },  { "y", 1 },   { "Y", 1 },	  { "true", 1 },  { "TRUE", 1 },
		{ "no", 0 },  { "No", 0 },  { "NO", 0 },  { "off", 0 },	  { "Off", 0 },
		{ "OFF", 0 }, { "n", 0 },   { "N", 0 },	  { "false", 0 }, { "False", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vgpu_hostcfg c = { 0 };
		char text[256];

		snprintf(text, sizeof(text), HEAD "      mig-enabled: %s\n%s", cases[i].word,
			 cases[i].value ? "      mig-devices: {1g.6gb: 4}\n" : "");
		if (parse(text, "a", &c) != 0)
			fail_msg("mig-enabled: %s refused: %s", cases[i].word,
				 vgpu_ctx_error(&ctx));
		assert_int_equal(c.n_entries, 1);
		if (c.entries[0].mig_enabled != cases[i].value)
			fail_msg("mig-enabled: %s read as %d", cases[i].word,
				 c.entries[0].mig_enabled);
		vgpu_hostcfg_clear(&c);
	}
}

static void test_unknown_keys(void **state)
{
	(void)state;
	assert_refused(
		HEAD "      mig-enabled: false\nfoo: 1\n", NULL,
		"t.yaml:6: unknown key 'foo' at the top level (expected version, mig-configs, "
		"vgpu-configs, start-domains, scheduler)");
	assert_refused(HEAD "      mig-enabled: true\n      mig-device: {}\n", "a",
		       "t.yaml:6: unknown key 'mig-device' in mig-configs.a[0] (expected devices, "
		       "device-filter, mig-enabled, mig-devices)");
	assert_refused(
		VHEAD "      vgpu-devices: {A30-4C: 6}\n      mig-enabled: true\n", NULL,
		"t.yaml:6: unknown key 'mig-enabled' in vgpu-configs.v[0] (expected devices, "
		"device-filter, vgpu-devices)");
}

/* Each key with a value of the wrong type, or out of range. */
static void test_wrong_types(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ HEAD "      mig-enabled: \"yes\"\n",
		  "t.yaml:5: 'mig-enabled' in mig-configs.a[0] must be true or false, not the "
		  "quoted string \"yes\"" },
		{ HEAD "      mig-enabled: enabled\n",
		  "t.yaml:5: 'mig-enabled' in mig-configs.a[0] must be true or false, not "
		  "'enabled'" },
		{ HEAD "      mig-enabled: 1\n",
		  "t.yaml:5: 'mig-enabled' in mig-configs.a[0] must be true or false, not '1'" },
		{ "version: v1\nmig-configs:\n  a:\n    - devices: 3\n      mig-enabled: false\n",
		  "t.yaml:4: 'devices' in mig-configs.a[0] must be all or a list of GPU indexes and "
		  "PCI addresses, not '3'" },
		{ "version: v1\nmig-configs:\n  a:\n    - devices: {x: 1}\n      mig-enabled: false\n",
		  "t.yaml:4: 'devices' in mig-configs.a[0] must be all or a list of GPU indexes and "
		  "PCI addresses, not a mapping" },
		{ "version: v1\nmig-configs:\n  a:\n    - devices: [0, zz]\n      mig-enabled: false\n",
		  "t.yaml:4: 'zz' in 'devices' in mig-configs.a[0] is neither a GPU index nor a PCI "
		  "address such as 0000:3b:00.0" },
		{ "version: v1\nmig-configs:\n  a:\n    - devices: [1024]\n      mig-enabled: false\n",
		  "t.yaml:4: GPU index 1024 in 'devices' in mig-configs.a[0] is out of 0..1023" },
		{ HEAD "      mig-enabled: true\n      mig-devices: [1g.5gb]\n",
		  "t.yaml:6: 'mig-devices' in mig-configs.a[0] must be a mapping of profile names to "
		  "counts, not a list" },
		{ HEAD "      mig-enabled: true\n      mig-devices: {1g.5gb: -1}\n",
		  "t.yaml:6: '1g.5gb' in 'mig-devices' in mig-configs.a[0] is -1, out of 0..1024" },
		{ HEAD "      mig-enabled: true\n      mig-devices: {1g.5gb: 1025}\n",
		  "t.yaml:6: '1g.5gb' in 'mig-devices' in mig-configs.a[0] is 1025, out of 0..1024" },
		{ HEAD "      mig-enabled: true\n      mig-devices: {1g.5gb: \"4\"}\n",
		  "t.yaml:6: '1g.5gb' in 'mig-devices' in mig-configs.a[0] must be an integer from 0 "
		  "to 1024, not the quoted string \"4\"" },
		{ HEAD "      mig-enabled: true\n      mig-devices: {1g.5gb: 010}\n",
		  "t.yaml:6: '1g.5gb' in 'mig-devices' in mig-configs.a[0] must be an integer from 0 "
		  "to 1024, not '010'" },
		{ VHEAD "      vgpu-devices: {A30-4C: 1.5}\n",
		  "t.yaml:5: 'A30-4C' in 'vgpu-devices' in vgpu-configs.v[0] must be an integer from "
		  "0 to 1024, not '1.5'" },
		{ VHEAD "      vgpu-devices: {\"A30 4C\": 1}\n",
		  "t.yaml:5: 'A30 4C' in 'vgpu-devices' in vgpu-configs.v[0] is not a profile name "
		  "(1 to 63 printable characters, no blanks)" },
		{ VHEAD "      vgpu-devices: {A30-4C: !!str 1}\n",
		  "t.yaml:5: 'A30-4C' in 'vgpu-devices' in vgpu-configs.v[0] must be an integer from "
		  "0 to 1024, not the quoted string \"1\"" },
		{ VHEAD "      vgpu-devices: {A30-4C: 1}\n      device-filter: 42\n",
		  "t.yaml:6: 'device-filter' in vgpu-configs.v[0] must be a PCI id such as "
		  "\"0x20B710DE\" (device, vendor), not '42'" },
		{ VHEAD "      vgpu-devices: {A30-4C: 1}\n      device-filter: {a: b}\n",
		  "t.yaml:6: 'device-filter' in vgpu-configs.v[0] must be a PCI id or a list of PCI "
		  "ids, not a mapping" },
		{ "version: [v1]\nmig-configs: {}\n",
		  "t.yaml:1: 'version' at the top level must be v1, not a list" },
		{ "version: v1\nmig-configs: []\n",
		  "t.yaml:2: 'mig-configs' at the top level must be a mapping of labels to lists of "
		  "entries, not a list" },
		{ "version: v1\nmig-configs:\n  a: {devices: all}\n",
		  "t.yaml:3: 'a' in mig-configs must be a non-empty list of entries, not a mapping" },
		{ "version: v1\nmig-configs:\n  a: []\n",
		  "t.yaml:3: 'a' in mig-configs must be a non-empty list of entries, not a list" },
		{ "version: v1\nmig-configs:\n  a:\n    - all\n",
		  "t.yaml:4: the entry in mig-configs.a[0] must be a mapping, not 'all'" },
		{ VHEAD "      vgpu-devices: {A30-4C: 1}\nstart-domains:\n  v: vm1\n",
		  "t.yaml:7: 'v' in start-domains must be a list of domain names, not 'vm1'" },
		{ VHEAD "      vgpu-devices: {A30-4C: 1}\nstart-domains:\n  v: [vm1, a/b]\n",
		  "t.yaml:7: item 1 of start-domains.v is not a domain name: contains '/'" },
		{ "version: v1\n? [a]\n: 1\n", "t.yaml:2: a mapping key must be a string" },
		{ "- version: v1\n",
		  "t.yaml:1: the configuration must be a mapping (version, mig-configs, "
		  "vgpu-configs), not a list" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_refused(cases[i].text, NULL, cases[i].msg);
}

/* What mig-parted and vgpu-device-manager require of an entry. */
static void test_missing_keys(void **state)
{
	(void)state;
	assert_refused("version: v1\nmig-configs:\n  a:\n    - mig-enabled: false\n", NULL,
		       "t.yaml:4: no devices in mig-configs.a[0]");
	assert_refused(HEAD "      mig-devices: {}\n", NULL,
		       "t.yaml:4: no mig-enabled in mig-configs.a[0]");
	assert_refused(HEAD "      mig-enabled: true\n", NULL,
		       "t.yaml:4: no mig-devices (mig-enabled is true) in mig-configs.a[0]");
	assert_refused(HEAD "      mig-enabled: false\n      mig-devices: {1g.5gb: 1}\n", NULL,
		       "t.yaml:4: mig-devices in mig-configs.a[0] but mig-enabled is false");
	assert_refused(VHEAD, NULL, "t.yaml:4: no vgpu-devices in vgpu-configs.v[0]");
	assert_refused("version: v1\nstart-domains: {}\n", NULL,
		       "t.yaml:1: neither mig-configs nor vgpu-configs");
	assert_refused("mig-configs: {}\n", NULL, "t.yaml:1: no 'version: v1'");
	assert_refused("version: v2\nmig-configs: {}\n", NULL,
		       "t.yaml:1: unsupported version 'v2' (expected v1)");
}

static void test_missing_label(void **state)
{
	char *text = vgpu_xstrdup("version: v1\n"
				  "mig-configs:\n  c:\n    - {devices: all, mig-enabled: false}\n"
				  "vgpu-configs:\n  b:\n    - {devices: all, vgpu-devices: {}}\n"
				  "start-domains:\n  a: [vm]\n");
	char *big = vgpu_xstrdup("version: v1\nmig-configs:\n");

	(void)state;
	assert_refused(text, "foo", "no config 'foo' in t.yaml; labels: a, b, c");
	for (int i = 0; i < 25; i++) {
		char *more =
			vgpu_asprintf("%s  l%02d: [{devices: all, mig-enabled: false}]\n", big, i);

		free(big);
		big = more;
	}
	assert_refused(big, "l",
		       "no config 'l' in t.yaml; labels: l00, l01, l02, l03, l04, l05, "
		       "l06, l07, l08, l09, l10, l11, l12, l13, l14, l15, l16, l17, l18, "
		       "l19, ... (5 more)");
	free(text);
	free(big);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	assert_refused("version: v1\nversion: v1\nmig-configs: {}\n", NULL,
		       "t.yaml:2: duplicate key 'version' at the top level (first at line 1)");
	assert_refused(HEAD "      mig-enabled: false\n  a:\n    - devices: all\n", NULL,
		       "t.yaml:6: duplicate key 'a' in mig-configs (first at line 3)");
	assert_refused(HEAD "      mig-enabled: false\n      devices: [0]\n", NULL,
		       "t.yaml:6: duplicate key 'devices' in mig-configs.a[0] (first at line 4)");
	assert_refused(HEAD "      mig-enabled: true\n      mig-devices: {1g.5gb: 1, 1g.5gb: 2}\n",
		       NULL,
		       "t.yaml:6: duplicate key '1g.5gb' in 'mig-devices' in mig-configs.a[0] "
		       "(first at line 6)");
}

/* ---- hostile input ---------------------------------------------------------------- */

/* CPU time, not wall time: the test machine may be shared. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A generated valid file of about @mb MB: its label count, and the CPU seconds a parse took. */
static unsigned parse_generated(size_t mb, double *secs)
{
	size_t cap = (mb + 1) << 20, len = 0;
	char *text = vgpu_xmalloc(cap);
	struct vgpu_hostcfg c = { 0 };
	unsigned n = 0;
	int r;

	len += (size_t)sprintf(text, "version: v1\nvgpu-configs:\n");
	while (len < mb << 20) {
		len += (size_t)sprintf(text + len,
				       "  label-%07u:\n"
				       "    - devices: [0, \"0000:3b:00.0\"]\n"
				       "      device-filter: \"0x20B710DE\"\n"
				       "      vgpu-devices:\n"
				       "        A30-1-6C: 4\n",
				       n);
		n++;
	}
	vgpu_ctx_clear(&ctx);
	*secs = cpu_now();
	r = vgpu_hostcfg_parse(&ctx, "big.yaml", text, len, "label-0000007", &c);
	*secs = cpu_now() - *secs;
	free(text);
	if (r < 0)
		fail_msg("%zu MB: %s", mb, vgpu_ctx_error(&ctx));
	assert_int_equal(c.n_labels, n);
	assert_int_equal(c.n_entries, 1);
	assert_int_equal(c.entries[0].line, 7 * 5 + 4);
	vgpu_hostcfg_clear(&c);
	return n;
}

/*
 * A valid 10 MB file (~80,000 labels) parses, in linear time: ten times the
 * text costs about ten times a 1 MB parse, not a hundred.  Measured in the
 * debugoptimized build on a shared 2-CPU machine: 0.4 to 0.9 s CPU for 10 MB,
 * of which libyaml's own event scan is ~0.3 s.
 * The ratio, not a time, is asserted: sanitizers and valgrind slow both alike.
 */
static void test_ten_megabytes(void **state)
{
	double t1, t10;
	unsigned n;

	(void)state;
	parse_generated(1, &t1);
	n = parse_generated(10, &t10);
	print_message("1 MB: %.3f s CPU; 10 MB, %u labels: %.3f s CPU\n", t1, n, t10);
	assert_true(t10 < 30 * t1 + 0.05);
}

/* "Billion laughs": refused at the first anchor, before anything expands. */
static void test_yaml_bomb(void **state)
{
	static const char bomb[] =
		"version: v1\n"
		"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
		"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
		"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
		"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
		"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
		"i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
		"mig-configs: *i\n";

	(void)state;
	assert_refused(bomb, NULL, "t.yaml:2: YAML anchors and aliases are not supported");
	/* an alias alone (no anchor to refuse first) */
	assert_refused("version: v1\nmig-configs: *x\n", NULL,
		       "t.yaml:2: YAML anchors and aliases are not supported");
	assert_refused("version: v1\nmig-configs: &x {}\n", NULL,
		       "t.yaml:2: YAML anchors and aliases are not supported");
}

static void test_deep_nesting(void **state)
{
	char text[256] = "version: v1\nmig-configs: ";
	size_t len = strlen(text);

	(void)state;
	for (int i = 0; i < 40; i++)
		text[len++] = '[';
	memset(text + len, ']', 40);
	text[len + 40] = '\0';
	assert_refused(text, NULL, "t.yaml:2: YAML nested deeper than 32 levels");
}

static void test_syntax(void **state)
{
	struct vgpu_hostcfg c = { 0 };

	(void)state;
	assert_refused("", NULL, "t.yaml:1: empty configuration (expected version: v1)");
	assert_refused("# nothing\n\n", NULL,
		       "t.yaml:1: empty configuration (expected version: v1)");
	assert_refused("version: v1\n---\nversion: v1\n", NULL,
		       "t.yaml:2: more than one YAML document");
	assert_refused("version: !!python/object:os.system v1\n", NULL,
		       "t.yaml:1: YAML tag 'tag:yaml.org,2002:python/object:os.system' is not "
		       "supported here");
	assert_refused("version: v1\nmig-configs: {a: \"x\\0y\"}\n", NULL,
		       "t.yaml:2: a NUL character in a string");
	/* libyaml's own words follow the prefix */
	assert_int_equal(parse("version: v1\n\xff\xfe\x80 garbage\n", NULL, &c), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&ctx),
			    "t.yaml:2: invalid YAML: invalid leading UTF-8 octet");
	assert_int_equal(parse("version: v1\nmig-configs: [\n", NULL, &c), -EINVAL);
	assert_true(strncmp(vgpu_ctx_error(&ctx), "t.yaml:3: invalid YAML: ", 24) == 0);
	assert_int_equal(parse("version: v1\n  bad: indent\n", NULL, &c), -EINVAL);
	assert_true(strncmp(vgpu_ctx_error(&ctx), "t.yaml:2: invalid YAML: ", 24) == 0);
}

/* The reader: FIFOs and directories refused without blocking, size capped. */
/* scheduler: {LABEL: [SCHED...]}: every GPU and per PCI address, checked as NVIDIA documents
 * RmPVMRL */
static void test_scheduler(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "      bogus: 1\n",
		  "t.yaml:8: unknown key 'bogus' in scheduler.v[0] (expected policy, timeslice, average-factor, frequency, devices)" },
		{ "      timeslice: 3\n", "t.yaml:8: no 'policy' in scheduler.v[0]" },
		{ "      policy: round-robin\n",
		  "t.yaml:8: 'policy' in scheduler.v[0] must be best-effort, equal-share or fixed-share, not 'round-robin'" },
		{ "      policy: equal-share\n      timeslice: 31\n",
		  "t.yaml:9: 'timeslice' in scheduler.v[0] is 31, out of 0..30" },
		{ "      policy: best-effort\n      timeslice: 3\n",
		  "t.yaml:8: no such scheduler in scheduler.v[0]: best effort takes no time slice, a time slice (1-30 ms) and adaptive round robin (average-factor 0-60 with frequency 63-960 Hz) exclude each other" },
		{ "      policy: equal-share\n      average-factor: 60\n",
		  "t.yaml:8: no such scheduler in scheduler.v[0]: best effort takes no time slice, a time slice (1-30 ms) and adaptive round robin (average-factor 0-60 with frequency 63-960 Hz) exclude each other" },
		{ "      policy: equal-share\n    - policy: fixed-share\n",
		  "t.yaml:9: a second setting for every GPU in scheduler.v[1]" },
		{ "      policy: equal-share\n      devices: [\"3b:00.0\"]\n    - policy: fixed-share\n      devices: [\"0000:3b:00.0\"]\n",
		  "t.yaml:10: GPU 0000:3b:00.0 has a scheduler setting twice in scheduler.v[1]" },
		{ "      policy: equal-share\n      devices: [0]\n",
		  "t.yaml:9: GPU index 0 in 'devices' in scheduler.v[0]: the scheduler is set per PCI address (0000:3b:00.0), which does not move" },
	};
	struct vgpu_hostcfg c = { 0 };
	char text[1024];

	(void)state;
	assert_int_equal(parse(VHEAD "      vgpu-devices: {A30-4C: 6}\n"
				     "scheduler:\n"
				     "  v:\n"
				     "    - policy: equal-share\n"
				     "      timeslice: 3\n"
				     "    - devices: [\"af:00.0\", \"0000:3b:00.0\"]\n"
				     "      policy: equal-share\n"
				     "      average-factor: 60\n"
				     "      frequency: 960\n"
				     "  other:\n"
				     "    - policy: fixed-share\n"
				     "      devices: all\n",
			       "v", &c),
			 0);
	assert_int_equal(c.n_sched, 2);
	assert_int_equal(c.sched[0].n_addrs, 0);
	assert_int_equal(c.sched[0].s.policy, VGPU_SCHED_EQUAL_SHARE);
	assert_int_equal(c.sched[0].s.timeslice_ms, 3);
	assert_int_equal(c.sched[1].n_addrs, 2);
	assert_string_equal(c.sched[1].addrs[0], "0000:af:00.0");
	assert_true(c.sched[1].s.adaptive);
	assert_int_equal(c.sched[1].s.avg_factor, 60);
	assert_int_equal(c.sched[1].s.frequency_hz, 960);
	vgpu_hostcfg_clear(&c);
	/* another label's: not selected, still checked */
	assert_int_equal(
		parse(VHEAD
		      "      vgpu-devices: {A30-4C: 6}\nscheduler:\n  w:\n    - policy: best-effort\n",
		      "v", &c),
		0);
	assert_int_equal(c.n_sched, 0);
	vgpu_hostcfg_clear(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s%s", VHEAD "      vgpu-devices: {A30-4C: 6}\n",
			 "scheduler:\n  v:\n    - ", bad[i].text + 6);
		assert_refused(text, "v", bad[i].msg);
	}
}

static void test_load_files(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct vgpu_hostcfg c = { 0 };
	int fd;

	(void)state;
	tree_make(dir, sizeof(dir), "hostcfg");
	vgpu_ctx_clear(&ctx);
	assert_int_equal(vgpu_hostcfg_load(&ctx, dir, NULL, &c), -EISDIR);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(vgpu_hostcfg_load(&ctx, path, NULL, &c), -VGPU_ENOTREG);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(vgpu_hostcfg_load(&ctx, path, NULL, &c), -ENOENT);
	snprintf(path, sizeof(path), "%s/huge.yaml", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, VGPU_CFG_MAX_BYTES + 1), 0);
	close(fd);
	assert_int_equal(vgpu_hostcfg_load(&ctx, path, NULL, &c), -EFBIG);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "is larger than 16777216 bytes"));
	assert_null(c.entries);
	tree_remove(dir);
	/* the parser has the same cap for text given to it directly */
	assert_int_equal(vgpu_hostcfg_parse(&ctx, "t.yaml", "", VGPU_CFG_MAX_BYTES + 1, NULL, &c),
			 -EFBIG);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mig_parted_example),
		cmocka_unit_test(test_vgpu_device_manager_example),
		cmocka_unit_test(test_addresses_and_domains),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_yaml11_booleans),
		cmocka_unit_test(test_missing_keys),
		cmocka_unit_test(test_missing_label),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_ten_megabytes),
		cmocka_unit_test(test_yaml_bomb),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_load_files),
		cmocka_unit_test(test_scheduler),
	};
	int r;

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	vgpu_ctx_init(&ctx, NULL, NULL);
	r = cmocka_run_group_tests_name("hostcfg", tests, NULL, NULL);
	vgpu_ctx_clear(&ctx);
	return r;
}
