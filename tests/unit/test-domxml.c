// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-domxml - the domain XML builder without the CLI (src/lib/domxml.c).
 *
 * Templates are parsed from strings with vgpu_domain_parse(), edited with
 * vgpu_domain_build() for a plan made by hand (GPU, VF and type structs
 * filled here, the A30 article's VM1 pinning from reference vgpu-host.md
 * section 9) and fixed UUIDs, then serialised with vgpu_domain_format().
 * Also: the safe parser's rejections, vgpu_parse_size_kib and the UUID
 * helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "domxml.h"
#include "plan.h"
#include "test-util.h"

/* MAX_XML_SIZE in domxml.c: the cap on a domain definition we parse */
#define XML_CAP (4u << 20)

#define VM_UUID "7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f"
#define MDEV_UUID "11111111-2222-4333-8444-555555555555"
#define MDEV_UUID2 "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"

/* A template with something of everything we must keep. */
static const char template_xml[] =
	"<domain type='kvm'>\n"
	"  <name>vm1</name>\n"
	"  <title>GPU VM</title>\n"
	"  <metadata>\n"
	"    <app:owner xmlns:app='http://example.org/app/1'>team-db</app:owner>\n"
	"  </metadata>\n"
	"  <memory unit='GiB'>32</memory>\n"
	"  <vcpu>2</vcpu>\n"
	"  <cputune>\n"
	"    <shares>2048</shares>\n"
	"  </cputune>\n"
	"  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
	"  <cpu mode='custom' match='exact'>\n"
	"    <model fallback='allow'>Skylake-Server</model>\n"
	"    <feature policy='require' name='invtsc'/>\n"
	"  </cpu>\n"
	"  <devices>\n"
	"    <disk type='file' device='disk'>\n"
	"      <source file='/var/lib/libvirt/images/vm1.qcow2'/>\n"
	"      <target dev='vda' bus='virtio'/>\n"
	"    </disk>\n"
	"  </devices>\n"
	"</domain>\n";

/* The whole result for template_xml, the mdev plan, fixed UUIDs and hugepages. */
static const char expected_mdev_xml[] =
	"<domain type=\"kvm\">\n"
	"  <name>vm1</name>\n"
	"  <uuid>" VM_UUID "</uuid>\n"
	"  <title>GPU VM</title>\n"
	"  <metadata>\n"
	"    <app:owner xmlns:app=\"http://example.org/app/1\">team-db</app:owner>\n"
	"    <vgpuctl:vgpus xmlns:vgpuctl=\"urn:vgpuctl:domain:1\" owner=\"" VM_UUID
	"\" node=\"0\">\n"
	"      <vgpuctl:vgpu profile=\"A30-6C\" type-id=\"684\" interface=\"mdev\" "
	"backing=\"time-sliced\" gpu=\"0000:3b:00.0\" vf=\"0000:3b:00.4\" mdev-uuid=\"" MDEV_UUID
	"\"/>\n"
	"    </vgpuctl:vgpus>\n"
	"  </metadata>\n"
	"  <memory unit=\"KiB\">33554432</memory>\n"
	"  <currentMemory unit=\"KiB\">33554432</currentMemory>\n"
	"  <memoryBacking>\n"
	"    <hugepages>\n"
	"      <page size=\"1\" unit=\"GiB\" nodeset=\"0\"/>\n"
	"    </hugepages>\n"
	"  </memoryBacking>\n"
	"  <vcpu placement=\"static\">12</vcpu>\n"
	"  <cputune>\n"
	"    <vcpupin vcpu=\"0\" cpuset=\"0\"/>\n"
	"    <vcpupin vcpu=\"1\" cpuset=\"48\"/>\n"
	"    <vcpupin vcpu=\"2\" cpuset=\"1\"/>\n"
	"    <vcpupin vcpu=\"3\" cpuset=\"49\"/>\n"
	"    <vcpupin vcpu=\"4\" cpuset=\"2\"/>\n"
	"    <vcpupin vcpu=\"5\" cpuset=\"50\"/>\n"
	"    <vcpupin vcpu=\"6\" cpuset=\"3\"/>\n"
	"    <vcpupin vcpu=\"7\" cpuset=\"51\"/>\n"
	"    <vcpupin vcpu=\"8\" cpuset=\"4\"/>\n"
	"    <vcpupin vcpu=\"9\" cpuset=\"52\"/>\n"
	"    <vcpupin vcpu=\"10\" cpuset=\"5\"/>\n"
	"    <vcpupin vcpu=\"11\" cpuset=\"53\"/>\n"
	"    <emulatorpin cpuset=\"0-5,48-53\"/>\n"
	"    <shares>2048</shares>\n"
	"  </cputune>\n"
	"  <numatune>\n"
	"    <memory mode=\"strict\" nodeset=\"0\"/>\n"
	"    <memnode cellid=\"0\" mode=\"strict\" nodeset=\"0\"/>\n"
	"  </numatune>\n"
	"  <os>\n"
	"    <type arch=\"x86_64\" machine=\"q35\">hvm</type>\n"
	"  </os>\n"
	"  <cpu mode=\"host-passthrough\" check=\"none\">\n"
	"    <topology sockets=\"1\" dies=\"1\" cores=\"6\" threads=\"2\"/>\n"
	"    <feature policy=\"require\" name=\"invtsc\"/>\n"
	"    <numa>\n"
	"      <cell id=\"0\" cpus=\"0-11\" memory=\"33554432\" unit=\"KiB\"/>\n"
	"    </numa>\n"
	"  </cpu>\n"
	"  <devices>\n"
	"    <disk type=\"file\" device=\"disk\">\n"
	"      <source file=\"/var/lib/libvirt/images/vm1.qcow2\"/>\n"
	"      <target dev=\"vda\" bus=\"virtio\"/>\n"
	"    </disk>\n"
	"    <hostdev mode=\"subsystem\" type=\"mdev\" model=\"vfio-pci\" display=\"off\">\n"
	"      <source>\n"
	"        <address uuid=\"" MDEV_UUID "\"/>\n"
	"      </source>\n"
	"    </hostdev>\n"
	"  </devices>\n"
	"</domain>\n";

/* ---- a hand-made host and plan ------------------------------------------------- */

struct fixture {
	/* A30 GPU 3b (mdev) with VF 3b:00.4; H100 GPU ca (vendor VFIO) with VF ca:00.5 */
	struct vgpu_gpu gpu_a30, gpu_h100;
	struct vgpu_parent vf_mdev, vf_mdev2, vf_vfio;
	struct vgpu_type type_a30, type_h100;
	struct vgpu_plan *plan;
	struct vgpu_domain_opts opts;
	struct vgpu_request ids; /* the identities given: uuid, mdev_uuids */
	struct _xmlDoc *doc;
	char *out;
	char *out2;
	struct vgpu_ctx ctx;
};

static struct vgpu_ctx test_ctx; /* for calls whose message is not checked */

static void fill_type(struct vgpu_type *t, unsigned id, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->name = (char *)name;
	t->max_instances = -1;
	assert_int_equal(vgpu_type_parse(name, &t->info), 0);
}

static void fill_vf(struct vgpu_parent *vf, struct vgpu_gpu *g, const char *addr, int index,
		    enum vgpu_iface iface)
{
	memset(vf, 0, sizeof(*vf));
	snprintf(vf->addr, sizeof(vf->addr), "%s", addr);
	vf->gpu = g;
	vf->index = index;
	vf->iface = iface;
	vf->iommu_group = -1;
}

/* VM1 of the A30 article: 12 vCPUs on cores 0-5 of node 0, siblings +48. */
static void plan_vm1(struct vgpu_plan *p, const struct vgpu_parent *vf, const struct vgpu_type *t)
{
	p->node = 0;
	vgpu_choice_set(&p->vgpus[0], vf, t);
	p->n_vgpus = 1;
	free(p->pins);
	p->pins = calloc(VGPU_MAX_CPUS, sizeof(*p->pins));
	p->vcpus = 12;
	p->cores = 6;
	p->threads = 2;
	for (unsigned i = 0; i < 6; i++) {
		p->pins[2 * i] = i;
		p->pins[2 * i + 1] = i + 48;
	}
	parse_cpus("0-5,48-53", &p->cpus);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->plan = calloc(1, sizeof(*f->plan)))) {
		free(f);
		return -1;
	}
	vgpu_ctx_init(&f->ctx, NULL, NULL);
	snprintf(f->gpu_a30.addr, sizeof(f->gpu_a30.addr), "0000:3b:00.0");
	f->gpu_a30.iface = VGPU_IFACE_MDEV;
	f->gpu_a30.numa_node = 0;
	snprintf(f->gpu_h100.addr, sizeof(f->gpu_h100.addr), "0000:ca:00.0");
	f->gpu_h100.iface = VGPU_IFACE_VENDOR_VFIO;
	f->gpu_h100.numa_node = 0;
	fill_vf(&f->vf_mdev, &f->gpu_a30, "0000:3b:00.4", 0, VGPU_IFACE_MDEV);
	fill_vf(&f->vf_mdev2, &f->gpu_a30, "0000:3b:00.5", 1, VGPU_IFACE_MDEV);
	fill_vf(&f->vf_vfio, &f->gpu_h100, "0000:ca:00.5", 1, VGPU_IFACE_VENDOR_VFIO);
	fill_type(&f->type_a30, 684, "NVIDIA A30-6C");
	fill_type(&f->type_h100, 1058, "NVIDIA H100-1-10C");
	plan_vm1(f->plan, &f->vf_mdev, &f->type_a30);
	f->ids.uuid = VM_UUID;
	f->ids.mdev_uuids[0] = MDEV_UUID;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->doc)
		xmlFreeDoc(f->doc);
	free(f->out);
	free(f->out2);
	vgpu_plan_free(f->plan);
	vgpu_ctx_clear(&f->ctx);
	free(f);
	return 0;
}

static struct _xmlDoc *parse_ok(struct fixture *f, const char *xml)
{
	struct _xmlDoc *doc = NULL;
	int r = vgpu_domain_parse(&f->ctx, xml, strlen(xml), "template.xml", &doc);

	if (r != 0)
		fail_msg("vgpu_domain_parse = %d: %s", r, vgpu_ctx_error(&f->ctx));
	assert_non_null(doc);
	return doc;
}

/*
 * The plan's identities as vgpu_domain_plan() chooses them for an existing
 * domain (given, else kept from @doc, else new), then the build.
 */
static int build(struct fixture *f, struct _xmlDoc *doc)
{
	char prev[VGPU_MAX_VGPUS][VGPU_UUID_LEN];
	size_t n_prev = vgpu_domain_prev_mdevs(doc, prev);
	char *uuid = vgpu_domain_field(doc, "uuid");
	int r = vgpu_plan_set_ids(&f->ctx, f->plan, &f->ids, uuid, prev, n_prev);

	free(uuid);
	return r < 0 ? r : vgpu_domain_build(&f->ctx, doc, f->plan, &f->opts);
}

static void build_ok(struct fixture *f, struct _xmlDoc *doc)
{
	int r = build(f, doc);

	if (r != 0)
		fail_msg("vgpu_domain_build = %d: %s", r, vgpu_ctx_error(&f->ctx));
}

static char *format_ok(struct _xmlDoc *doc)
{
	char *s = NULL;

	assert_int_equal(vgpu_domain_format(&test_ctx, doc, &s), 0);
	assert_non_null(s);
	return s;
}

/* Build f->doc (again) and format it into f->out, replacing what was there. */
static const char *rebuild(struct fixture *f)
{
	build_ok(f, f->doc);
	free(f->out);
	f->out = format_ok(f->doc);
	return f->out;
}

/* Parse @xml into f->doc, build, format into f->out. */
static const char *run(struct fixture *f, const char *xml)
{
	if (f->doc)
		xmlFreeDoc(f->doc);
	free(f->out);
	f->doc = NULL;
	f->out = NULL;
	f->doc = parse_ok(f, xml);
	return rebuild(f);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The document goes to stderr whole: cmocka's message buffer is short. */
static void dump(const char *out)
{
	fputs("--- output ---\n", stderr);
	fputs(out, stderr);
	fputs("--------------\n", stderr);
}

static void assert_has(const char *out, const char *needle)
{
	if (!strstr(out, needle)) {
		dump(out);
		fail_msg("output lacks\n  %s", needle);
	}
}

static void assert_once(const char *out, const char *needle)
{
	size_t n = count(out, needle);

	if (n != 1) {
		dump(out);
		fail_msg("%zu occurrences of\n  %s\n(expected 1)", n, needle);
	}
}

static void assert_lacks(const char *out, const char *needle)
{
	if (strstr(out, needle)) {
		dump(out);
		fail_msg("output has\n  %s", needle);
	}
}

/* The text of <uuid> in @out (36 characters) into @buf. */
static void domain_uuid(const char *out, char buf[37])
{
	const char *p = strstr(out, "<uuid>");

	if (!p) {
		dump(out);
		fail_msg("no <uuid>");
	}
	p += strlen("<uuid>");
	if (strlen(p) < 36 + 7 || strncmp(p + 36, "</uuid>", 7) != 0) {
		dump(out);
		fail_msg("<uuid> does not hold 36 characters");
	}
	memcpy(buf, p, 36);
	buf[36] = '\0';
}

/* RFC 4122 version 4: xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx, lowercase hex. */
static void assert_uuid_v4(const char *u)
{
	assert_int_equal(strlen(u), 36);
	assert_true(vgpu_uuid_valid(u));
	assert_int_equal(u[14], '4');
	if (!strchr("89ab", u[19]))
		fail_msg("UUID %s: variant digit '%c', expected one of 8 9 a b", u, u[19]);
	for (size_t i = 0; i < 36; i++)
		if (u[i] != '-' && !strchr("0123456789abcdef", u[i]))
			fail_msg("UUID %s: '%c' at %zu is not lowercase hex", u, u[i], i);
}

/* ---- the whole document ---------------------------------------------------------- */

static void test_full_output(void **state)
{
	struct fixture *f = *state;

	f->opts.hugepages = true;
	assert_string_equal(run(f, template_xml), expected_mdev_xml);
}

/* Same input, same UUIDs: byte-identical output from two independent runs. */
static void test_deterministic(void **state)
{
	struct fixture *f = *state;
	struct _xmlDoc *doc2;

	run(f, template_xml);
	doc2 = parse_ok(f, template_xml);
	build_ok(f, doc2);
	f->out2 = format_ok(doc2);
	xmlFreeDoc(doc2);
	assert_string_equal(f->out, f->out2);
}

/* ---- hostdevs -------------------------------------------------------------------- */

static void test_mdev_hostdev(void **state)
{
	struct fixture *f = *state;
	const char *out = run(f, template_xml);

	assert_once(out, "<hostdev ");
	assert_once(out, "<hostdev mode=\"subsystem\" type=\"mdev\" model=\"vfio-pci\" "
			 "display=\"off\">\n"
			 "      <source>\n"
			 "        <address uuid=\"" MDEV_UUID "\"/>\n"
			 "      </source>\n"
			 "    </hostdev>\n");
	assert_lacks(out, "managed=");
}

/* Without a given mdev UUID one is generated, and metadata names the same one. */
static void test_mdev_uuid_generated(void **state)
{
	struct fixture *f = *state;
	const char *out, *p;
	char uuid[37], want[128];

	f->ids.mdev_uuids[0] = NULL;
	out = run(f, template_xml);
	p = strstr(out, "<address uuid=\"");
	assert_non_null(p);
	p += strlen("<address uuid=\"");
	memcpy(uuid, p, 36);
	uuid[36] = '\0';
	assert_int_equal(p[36], '"');
	assert_uuid_v4(uuid);
	snprintf(want, sizeof(want), "mdev-uuid=\"%s\"", uuid);
	assert_once(out, want);
}

static void test_vfio_hostdev(void **state)
{
	struct fixture *f = *state;
	const char *out;

	plan_vm1(f->plan, &f->vf_vfio, &f->type_h100);
	out = run(f, template_xml);
	assert_once(out, "<hostdev ");
	/* NVIDIA: vendor-VFIO vGPUs only in unmanaged mode */
	assert_once(out, "<hostdev mode=\"subsystem\" type=\"pci\" managed=\"no\">\n"
			 "      <source>\n"
			 "        <address domain=\"0x0000\" bus=\"0xca\" slot=\"0x00\" "
			 "function=\"0x5\"/>\n"
			 "      </source>\n"
			 "    </hostdev>\n");
	assert_lacks(out, "type=\"mdev\"");
	assert_lacks(out, "mdev-uuid=");
	assert_once(out, "<vgpuctl:vgpu profile=\"H100-1-10C\" type-id=\"1058\" "
			 "interface=\"vendor-vfio\" backing=\"mig\" gi-profile=\"1g.10gb\" "
			 "gpu=\"0000:ca:00.0\" vf=\"0000:ca:00.5\"/>");
}

/* Two vGPUs: two hostdevs in plan order and two metadata entries. */
static void test_two_vgpus(void **state)
{
	struct fixture *f = *state;
	const char *out, *a, *b;

	vgpu_choice_set(&f->plan->vgpus[1], &f->vf_mdev2, &f->type_a30);
	f->plan->n_vgpus = 2;
	f->ids.mdev_uuids[1] = MDEV_UUID2;
	out = run(f, template_xml);
	assert_int_equal(count(out, "<hostdev "), 2);
	assert_int_equal(count(out, "<vgpuctl:vgpu "), 2);
	a = strstr(out, "<address uuid=\"" MDEV_UUID "\"/>");
	b = strstr(out, "<address uuid=\"" MDEV_UUID2 "\"/>");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_once(out, "vf=\"0000:3b:00.5\" mdev-uuid=\"" MDEV_UUID2 "\"/>");
}

/* ---- CPUs, memory, NUMA -------------------------------------------------------------- */

static void test_vcpupin(void **state)
{
	struct fixture *f = *state;
	const char *out = run(f, template_xml);
	char line[96];

	assert_once(out, "<vcpu placement=\"static\">12</vcpu>");
	assert_int_equal(count(out, "<vcpupin "), 12);
	for (unsigned i = 0; i < 12; i++) {
		snprintf(line, sizeof(line), "<vcpupin vcpu=\"%u\" cpuset=\"%u\"/>", i,
			 i % 2 ? i / 2 + 48 : i / 2);
		assert_once(out, line);
	}
	/* the emulator threads share the VM's own CPUs */
	assert_once(out, "<emulatorpin cpuset=\"0-5,48-53\"/>");
	/* the template's <shares> survives */
	assert_once(out, "<shares>2048</shares>");
}

static void test_emulatorpin_override(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset hk;
	const char *out;

	parse_cpus("23,71", &hk);
	f->opts.emulator_cpus = &hk;
	out = run(f, template_xml);
	assert_once(out, "<emulatorpin ");
	assert_once(out, "<emulatorpin cpuset=\"23,71\"/>");
	assert_int_equal(count(out, "<vcpupin "), 12);
}

/* Memory strictly on the plan's node, for the whole VM and its only cell. */
static void test_numatune(void **state)
{
	struct fixture *f = *state;
	const char *out;

	f->plan->node = 1;
	out = run(f, template_xml);
	assert_once(out, "<numatune>\n"
			 "    <memory mode=\"strict\" nodeset=\"1\"/>\n"
			 "    <memnode cellid=\"0\" mode=\"strict\" nodeset=\"1\"/>\n"
			 "  </numatune>\n");
	assert_once(out, "node=\"1\">");
}

static void test_cpu_topology(void **state)
{
	struct fixture *f = *state;
	const char *out = run(f, template_xml);

	assert_once(out, "<cpu mode=\"host-passthrough\" check=\"none\">");
	assert_once(out, "<topology sockets=\"1\" dies=\"1\" cores=\"6\" threads=\"2\"/>");
	assert_once(out, "<cell id=\"0\" cpus=\"0-11\" memory=\"33554432\" unit=\"KiB\"/>");
	/* host-passthrough takes no model; the template's feature stays */
	assert_lacks(out, "<model fallback");
	assert_lacks(out, "match=");
	assert_once(out, "<feature policy=\"require\" name=\"invtsc\"/>");
}

/* 3 vCPUs on single-thread cores, one vCPU: cores x threads follow the plan. */
static void test_cpu_topology_small(void **state)
{
	struct fixture *f = *state;
	const char *out;

	f->plan->vcpus = 3;
	f->plan->cores = 3;
	f->plan->threads = 1;
	out = run(f, template_xml);
	assert_once(out, "<vcpu placement=\"static\">3</vcpu>");
	assert_once(out, "<topology sockets=\"1\" dies=\"1\" cores=\"3\" threads=\"1\"/>");
	assert_once(out, "<cell id=\"0\" cpus=\"0-2\" memory=\"33554432\" unit=\"KiB\"/>");
	assert_int_equal(count(out, "<vcpupin "), 3);

	f->plan->vcpus = 1;
	f->plan->cores = 1;
	out = run(f, template_xml);
	assert_once(out, "<vcpu placement=\"static\">1</vcpu>");
	assert_once(out, "<topology sockets=\"1\" dies=\"1\" cores=\"1\" threads=\"1\"/>");
	assert_once(out, "<cell id=\"0\" cpus=\"0\" memory=\"33554432\" unit=\"KiB\"/>");
	assert_once(out, "<vcpupin vcpu=\"0\" cpuset=\"0\"/>");
	assert_int_equal(count(out, "<vcpupin "), 1);
}

/* --memory wins over the template; memory and currentMemory agree. */
static void test_memory_option(void **state)
{
	struct fixture *f = *state;
	const char *out;

	f->opts.memory_kib = 16777216;
	out = run(f, template_xml);
	assert_once(out, "<memory unit=\"KiB\">16777216</memory>");
	assert_once(out, "<currentMemory unit=\"KiB\">16777216</currentMemory>");
	assert_once(out, "memory=\"16777216\" unit=\"KiB\"/>");
	assert_lacks(out, "33554432");
}

/*
 * <memory unit=...> is read with libvirt's units (formatdomain "Memory
 * Allocation"): "b"/"bytes", "KB"/"MB"/"GB"/"TB" are powers of 1000, "k"/"KiB",
 * "M"/"MiB", "G"/"GiB", "T"/"TiB" powers of 1024; no unit means KiB.
 */
static void test_template_memory_units(void **state)
{
	static const struct {
		const char *unit, *value, *kib;
	} cases[] = {
		{ NULL, "1048576", "1048576" },	      { "k", "1048576", "1048576" },
		{ "KiB", "1048576", "1048576" },      { "M", "4096", "4194304" },
		{ "MiB", "4096", "4194304" },	      { "G", "32", "33554432" },
		{ "GiB", "32", "33554432" },	      { "T", "1", "1073741824" },
		{ "TiB", "1", "1073741824" },	      { "b", "1073741824", "1048576" },
		{ "bytes", "2147483648", "2097152" }, { "KB", "1024000", "1000000" },
		{ "MB", "4096", "4000000" },	      { "GB", "32", "31250000" },
		{ "TB", "1", "976562500" },
	};
	struct fixture *f = *state;
	char failures[4096] = "";
	size_t off = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char xml[256], want[96], got[640] = "";
		struct _xmlDoc *doc;
		char *out = NULL;
		const char *p;
		int r;

		if (cases[i].unit)
			snprintf(xml, sizeof(xml),
				 "<domain><name>m</name><memory unit='%s'>%s</memory></domain>",
				 cases[i].unit, cases[i].value);
		else
			snprintf(xml, sizeof(xml),
				 "<domain><name>m</name><memory>%s</memory></domain>",
				 cases[i].value);
		doc = parse_ok(f, xml);
		r = build(f, doc);
		if (r == 0 && vgpu_domain_format(&test_ctx, doc, &out) == 0 && out) {
			p = strstr(out, "<memory unit=\"KiB\">");
			if (p)
				sscanf(p + strlen("<memory unit=\"KiB\">"), "%50[0-9]", got);
			strcat(got, " KiB");
		} else {
			snprintf(got, sizeof(got), "error %d: %s", r, vgpu_ctx_error(&f->ctx));
		}
		snprintf(want, sizeof(want), "%s KiB", cases[i].kib);
		if (strcmp(got, want) != 0)
			off += (size_t)snprintf(failures + off, sizeof(failures) - off,
						"\n  <memory unit='%s'>%s: %s, expected %s",
						cases[i].unit ? cases[i].unit : "(none)",
						cases[i].value, got, want);
		free(out);
		xmlFreeDoc(doc);
		if (off >= sizeof(failures))
			break;
	}
	if (failures[0])
		fail_msg("template memory read wrongly:%s", failures);
}

static void test_no_memory_no_name(void **state)
{
	struct fixture *f = *state;
	struct _xmlDoc *doc;

	doc = parse_ok(f, "<domain><name>m</name></domain>");
	assert_int_equal(build(f, doc), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "the domain has no usable <memory>");
	xmlFreeDoc(doc);

	doc = parse_ok(f, "<domain><memory unit='GiB'>4</memory></domain>");
	assert_int_equal(build(f, doc), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "the domain has no <name>");
	xmlFreeDoc(doc);

	/* --name fills it in; no type on <domain> means kvm */
	f->opts.name = "named";
	doc = parse_ok(f, "<domain><memory unit='GiB'>4</memory></domain>");
	build_ok(f, doc);
	f->out = format_ok(doc);
	xmlFreeDoc(doc);
	assert_once(f->out, "<name>named</name>");
	assert_once(f->out, "<domain type=\"kvm\">");
	assert_once(f->out, "<memory unit=\"KiB\">4194304</memory>");
}

/*
 * A device on guest NUMA cell 1 refuses the pinning (one guest cell): the
 * message names the device and cell, and pinning nothing is left to the
 * caller as a hint (the CLI says --no-pin), never named in the library.
 */
static void test_device_on_cell_refused(void **state)
{
	struct fixture *f = *state;
	struct _xmlDoc *doc;

	doc = parse_ok(f, "<domain><name>m</name><maxMemory slots='2' unit='GiB'>8</maxMemory>"
			  "<memory unit='GiB'>4</memory><devices>"
			  "<memory model='dimm'><target><size unit='GiB'>1</size><node>1</node>"
			  "</target></memory></devices></domain>");
	assert_int_equal(build(f, doc), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "<memory> is on guest NUMA cell 1"));
	assert_null(strstr(vgpu_ctx_error(&f->ctx), "--"));
	assert_true(vgpu_ctx_hints(&f->ctx) & VGPU_HINT_NO_PIN);
	xmlFreeDoc(doc);
}

/* Hugepages only when asked, once however often we run. */
static void test_hugepages(void **state)
{
	struct fixture *f = *state;
	const char *out;

	out = run(f, template_xml);
	assert_lacks(out, "<memoryBacking");
	assert_lacks(out, "<hugepages");

	f->opts.hugepages = true;
	out = run(f, template_xml);
	assert_once(out, "<memoryBacking>\n"
			 "    <hugepages>\n"
			 "      <page size=\"1\" unit=\"GiB\" nodeset=\"0\"/>\n"
			 "    </hugepages>\n"
			 "  </memoryBacking>\n");
	out = rebuild(f);
	assert_once(out, "<hugepages>");
	assert_once(out, "<page size=\"1\" unit=\"GiB\" nodeset=\"0\"/>");
}

/* ---- UUID ------------------------------------------------------------------------------ */

static void test_uuid_generated(void **state)
{
	struct fixture *f = *state;
	char uuid[37], owner[128];
	const char *out;

	f->ids.uuid = NULL;
	out = run(f, template_xml);
	assert_once(out, "<uuid>");
	domain_uuid(out, uuid);
	assert_uuid_v4(uuid);
	/* the metadata owner is the VM's UUID */
	snprintf(owner, sizeof(owner), "owner=\"%s\"", uuid);
	assert_once(out, owner);
	/* <uuid> right after <name>, where libvirt writes it */
	assert_has(out, "<name>vm1</name>\n  <uuid>");
}

static void test_uuid_kept_or_replaced(void **state)
{
	static const char with_uuid[] = "<domain type='kvm'><name>u</name>"
					"<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>"
					"<memory unit='GiB'>1</memory></domain>";
	static const char bad_uuid[] = "<domain type='kvm'><name>u</name><uuid>not-a-uuid</uuid>"
				       "<memory unit='GiB'>1</memory></domain>";
	struct fixture *f = *state;
	char uuid[37];
	const char *out;

	/* an existing valid UUID is kept: the VM's identity must not change */
	f->ids.uuid = NULL;
	out = run(f, with_uuid);
	assert_once(out, "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>");
	assert_once(out, "owner=\"3f2c1d4e-5b6a-4789-9abc-def012345678\"");

	/* the option wins over the existing one */
	f->ids.uuid = VM_UUID;
	out = run(f, with_uuid);
	assert_once(out, "<uuid>" VM_UUID "</uuid>");
	assert_lacks(out, "3f2c1d4e");

	/* padding around an existing UUID does not change the VM's identity */
	f->ids.uuid = NULL;
	out = run(f, "<domain type='kvm'><name>u</name>"
		     "<uuid>\n  3f2c1d4e-5b6a-4789-9abc-def012345678\n</uuid>"
		     "<memory unit='GiB'>1</memory></domain>");
	assert_once(out, "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>");

	/* garbage is an error, not a silently new identity */
	{
		xmlDocPtr doc = parse_ok(f, bad_uuid);

		assert_int_equal(build(f, doc), -EINVAL);
		assert_string_equal(vgpu_ctx_error(&f->ctx),
				    "the domain's <uuid> 'not-a-uuid' is not a UUID");
		xmlFreeDoc(doc);
	}

	/* no <uuid> at all: a fresh v4 one */
	out = run(f, "<domain type='kvm'><name>u</name><memory unit='GiB'>1</memory></domain>");
	domain_uuid(out, uuid);
	assert_uuid_v4(uuid);
}

/* ---- metadata ------------------------------------------------------------------------ */

static const char *attr(xmlNodePtr n, const char *name, char *buf, size_t len)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);

	snprintf(buf, len, "%s", v ? (const char *)v : "(none)");
	xmlFree(v);
	return buf;
}

/* Read the output back: one element in VGPU_XML_NS under <metadata>, as the hook reads it. */
static void test_metadata_namespace(void **state)
{
	struct fixture *f = *state;
	const char *out = run(f, template_xml);
	xmlDocPtr doc = xmlReadMemory(out, (int)strlen(out), "out.xml", NULL, XML_PARSE_NONET);
	xmlNodePtr md = NULL, ours = NULL, v = NULL;
	size_t n_ours = 0, n_foreign = 0, n_vgpu = 0;
	char buf[128];

	assert_non_null(doc);
	for (xmlNodePtr c = xmlDocGetRootElement(doc)->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    xmlStrEqual(c->name, (const xmlChar *)"metadata"))
			md = c;
	assert_non_null(md);
	for (xmlNodePtr c = md->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (c->ns && xmlStrEqual(c->ns->href, (const xmlChar *)VGPU_XML_NS)) {
			ours = c;
			n_ours++;
		} else {
			n_foreign++;
		}
	}
	assert_int_equal(n_ours, 1);
	assert_int_equal(n_foreign, 1);
	assert_string_equal((const char *)ours->name, "vgpus");
	assert_string_equal(attr(ours, "owner", buf, sizeof(buf)), VM_UUID);
	assert_string_equal(attr(ours, "node", buf, sizeof(buf)), "0");
	for (xmlNodePtr c = ours->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		v = c;
		n_vgpu++;
	}
	assert_int_equal(n_vgpu, 1);
	assert_string_equal((const char *)v->name, "vgpu");
	assert_non_null(v->ns);
	assert_string_equal((const char *)v->ns->href, VGPU_XML_NS);
	assert_string_equal(attr(v, "profile", buf, sizeof(buf)), "A30-6C");
	assert_string_equal(attr(v, "type-id", buf, sizeof(buf)), "684");
	assert_string_equal(attr(v, "vf", buf, sizeof(buf)), "0000:3b:00.4");
	assert_string_equal(attr(v, "gpu", buf, sizeof(buf)), "0000:3b:00.0");
	assert_string_equal(attr(v, "interface", buf, sizeof(buf)), "mdev");
	assert_string_equal(attr(v, "backing", buf, sizeof(buf)), "time-sliced");
	assert_string_equal(attr(v, "mdev-uuid", buf, sizeof(buf)), MDEV_UUID);
	/* a time-sliced type has no GI profile */
	assert_string_equal(attr(v, "gi-profile", buf, sizeof(buf)), "(none)");
	xmlFreeDoc(doc);
}

/* A template without <metadata> gets one at libvirt's place (after <title>). */
static void test_metadata_created(void **state)
{
	struct fixture *f = *state;
	const char *out = run(f, "<domain type='kvm'><name>n</name><title>t</title>"
				 "<memory unit='GiB'>1</memory></domain>");

	assert_once(out, "<metadata>");
	assert_has(out, "  <title>t</title>\n"
			"  <metadata>\n"
			"    <vgpuctl:vgpus xmlns:vgpuctl=\"urn:vgpuctl:domain:1\" owner=\"" VM_UUID
			"\" node=\"0\">\n");
}

/* ---- re-planning ------------------------------------------------------------------------ */

/* Building again on the same document replaces our hostdev and metadata. */
static void test_replan_same_doc(void **state)
{
	struct fixture *f = *state;
	const char *out;

	run(f, template_xml);
	/* in the hostdev and in the metadata */
	assert_int_equal(count(f->out, MDEV_UUID), 2);

	/* second plan: another VF, another mdev */
	plan_vm1(f->plan, &f->vf_mdev2, &f->type_a30);
	f->ids.mdev_uuids[0] = MDEV_UUID2;
	out = rebuild(f);
	assert_once(out, "<vgpuctl:vgpus ");
	assert_once(out, "<vgpuctl:vgpu ");
	assert_once(out, "<hostdev ");
	assert_lacks(out, MDEV_UUID);
	assert_once(out, "<address uuid=\"" MDEV_UUID2 "\"/>");
	assert_once(out, "vf=\"0000:3b:00.5\" mdev-uuid=\"" MDEV_UUID2 "\"/>");

	/* third plan: the vendor-VFIO VF; the mdev hostdev goes */
	plan_vm1(f->plan, &f->vf_vfio, &f->type_h100);
	out = rebuild(f);
	assert_once(out, "<vgpuctl:vgpus ");
	assert_once(out, "<hostdev ");
	assert_lacks(out, "type=\"mdev\"");
	assert_once(out, "bus=\"0xca\" slot=\"0x00\" function=\"0x5\"");

	/* and back: the VFIO hostdev is found by its address and removed */
	plan_vm1(f->plan, &f->vf_mdev, &f->type_a30);
	f->ids.mdev_uuids[0] = MDEV_UUID;
	out = rebuild(f);
	assert_once(out, "<hostdev ");
	assert_lacks(out, "0xca");
	assert_once(out, "<address uuid=\"" MDEV_UUID "\"/>");
}

/* An existing definition (our earlier output, read back) is re-planned in place. */
static void test_replan_existing(void **state)
{
	static const char existing[] =
		"<domain type='kvm'>\n"
		"  <name>db01</name>\n"
		"  <uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>\n"
		"  <metadata>\n"
		"    <app:owner xmlns:app='http://example.org/app/1'>team-db</app:owner>\n"
		"    <vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' "
		"owner='3f2c1d4e-5b6a-4789-9abc-def012345678' node='1'>\n"
		"      <vgpuctl:vgpu profile='A30-2-12C' type-id='690' interface='mdev' "
		"backing='mig' gi-profile='2g.12gb' gpu='0000:af:00.0' vf='0000:af:00.4' "
		"mdev-uuid='99999999-2222-4333-8444-555555555555'/>\n"
		"    </vgpuctl:vgpus>\n"
		"  </metadata>\n"
		"  <memory unit='GiB'>16</memory>\n"
		"  <vcpu placement='static' cpuset='24-31'>8</vcpu>\n"
		"  <cputune><vcpupin vcpu='0' cpuset='24'/>"
		"<emulatorpin cpuset='24-31'/></cputune>\n"
		"  <numatune><memory mode='preferred' nodeset='1'/></numatune>\n"
		"  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
		"  <cpu mode='host-passthrough'><topology sockets='1' dies='1' cores='4' "
		"threads='2'/><numa><cell id='0' cpus='0-7' memory='16' unit='GiB'/></numa></cpu>\n"
		"  <devices>\n"
		"    <hostdev mode='subsystem' type='pci' managed='yes'>\n"
		"      <source><address domain='0x0000' bus='0x5e' slot='0x00' "
		"function='0x0'/></source>\n"
		"    </hostdev>\n"
		"    <hostdev mode='subsystem' type='mdev' model='vfio-pci' display='off'>\n"
		"      <source><address uuid='99999999-2222-4333-8444-555555555555'/></source>\n"
		"    </hostdev>\n"
		"  </devices>\n"
		"</domain>\n";
	struct fixture *f = *state;
	const char *out;

	f->ids.uuid = NULL;
	out = run(f, existing);
	/* identity kept */
	assert_once(out, "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>");
	assert_once(out, "<name>db01</name>");
	/* exactly one of our metadata elements, describing the new plan */
	assert_once(out, "<vgpuctl:vgpus ");
	assert_once(out, "<vgpuctl:vgpu ");
	assert_once(out, "owner=\"3f2c1d4e-5b6a-4789-9abc-def012345678\" node=\"0\"");
	assert_lacks(out, "A30-2-12C");
	/* the old mdev hostdev is gone, the user's own PCI passthrough stays */
	assert_lacks(out, "99999999-2222-4333-8444-555555555555");
	assert_int_equal(count(out, "<hostdev "), 2);
	assert_once(out, "<hostdev mode=\"subsystem\" type=\"pci\" managed=\"yes\">");
	assert_once(out, "bus=\"0x5e\"");
	assert_once(out, "<address uuid=\"" MDEV_UUID "\"/>");
	/* the old pinning is replaced, not added to */
	assert_int_equal(count(out, "<vcpupin "), 12);
	assert_lacks(out, "cpuset=\"24");
	assert_once(out, "<emulatorpin cpuset=\"0-5,48-53\"/>");
	assert_once(out, "<vcpu placement=\"static\">12</vcpu>");
	assert_lacks(out, "preferred");
	assert_once(out, "<numatune>\n"
			 "    <memory mode=\"strict\" nodeset=\"0\"/>\n"
			 "    <memnode cellid=\"0\" mode=\"strict\" nodeset=\"0\"/>\n"
			 "  </numatune>\n");
	assert_int_equal(count(out, "<topology "), 1);
	assert_int_equal(count(out, "<cell "), 1);
	assert_once(out, "<cell id=\"0\" cpus=\"0-11\" memory=\"16777216\" unit=\"KiB\"/>");
	assert_once(out, "<app:owner xmlns:app=\"http://example.org/app/1\">team-db</app:owner>");
}

/* The same plan twice: the second build changes nothing. */
static void test_replan_idempotent(void **state)
{
	struct fixture *f = *state;

	f->opts.hugepages = true;
	run(f, template_xml);
	build_ok(f, f->doc);
	f->out2 = format_ok(f->doc);
	assert_string_equal(f->out2, f->out);
	assert_string_equal(f->out2, expected_mdev_xml);
}

/* ---- what is not ours is kept ----------------------------------------------------------- */

static void test_foreign_kept(void **state)
{
	static const char xml[] =
		"<domain type='qemu'>\n"
		"  <name>keep</name>\n"
		"  <title>kept title</title>\n"
		"  <description>kept description</description>\n"
		"  <metadata>\n"
		"    <app:owner xmlns:app='http://example.org/app/1'>team-db</app:owner>\n"
		"  </metadata>\n"
		"  <memory unit='MiB'>2048</memory>\n"
		"  <memoryBacking><nosharepages/></memoryBacking>\n"
		"  <cputune><shares>4096</shares><period>100000</period></cputune>\n"
		"  <os><type arch='x86_64' machine='q35'>hvm</type><boot dev='hd'/></os>\n"
		"  <features><acpi/><apic/></features>\n"
		"  <on_poweroff>destroy</on_poweroff>\n"
		"  <devices>\n"
		"    <disk type='file' device='disk'>\n"
		"      <source file='/var/lib/libvirt/images/keep.qcow2'/>\n"
		"      <target dev='vda' bus='virtio'/>\n"
		"    </disk>\n"
		"    <interface type='network'><source network='default'/></interface>\n"
		"    <video><model type='none'/></video>\n"
		"  </devices>\n"
		"</domain>\n";
	struct fixture *f = *state;
	const char *out;

	f->opts.hugepages = true;
	out = run(f, xml);
	/* virt type kept when none is asked for */
	assert_once(out, "<domain type=\"qemu\">");
	assert_once(out, "<title>kept title</title>");
	assert_once(out, "<description>kept description</description>");
	assert_once(out, "<app:owner xmlns:app=\"http://example.org/app/1\">team-db</app:owner>");
	assert_once(out, "<shares>4096</shares>");
	assert_once(out, "<period>100000</period>");
	assert_once(out, "<nosharepages/>");
	assert_once(out, "<boot dev=\"hd\"/>");
	assert_once(out, "<acpi/>");
	assert_once(out, "<on_poweroff>destroy</on_poweroff>");
	assert_once(out, "<source file=\"/var/lib/libvirt/images/keep.qcow2\"/>");
	assert_once(out, "<interface type=\"network\">");
	assert_once(out, "<model type=\"none\"/>");
	assert_once(out, "<hugepages>");
	assert_once(out, "<memory unit=\"KiB\">2097152</memory>");

	/* --virt-type replaces it */
	f->opts.virt_type = "kvm";
	out = run(f, xml);
	assert_once(out, "<domain type=\"kvm\">");
}

/* ---- vgpu_domain_parse rejections ------------------------------------------------------- */

static int n_loads;
static char last_load[512];

/* Counts every external entity libxml2 tries to load, and loads none. */
static xmlParserInputPtr counting_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
	(void)id;
	(void)ctxt;
	n_loads++;
	snprintf(last_load, sizeof(last_load), "%s", url ? url : "(null)");
	return NULL;
}

static void expect_reject(struct fixture *f, const char *xml, size_t len, int want_r,
			  const char *want_err)
{
	struct _xmlDoc *doc = NULL;
	int r = vgpu_domain_parse(&f->ctx, xml, len, "in.xml", &doc);

	if (r != want_r)
		fail_msg("vgpu_domain_parse = %d (%s), expected %d for\n%.200s", r,
			 vgpu_ctx_error(&f->ctx), want_r, xml);
	assert_null(doc);
	if (strncmp(vgpu_ctx_error(&f->ctx), want_err, strlen(want_err)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", vgpu_ctx_error(&f->ctx),
			 want_err);
}

static void test_parse_not_well_formed(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"<domain><name>x</name>", "<domain><name>x</nam></domain>", "not xml at all", "",
		"<domain a='1' a='2'/>",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_reject(f, bad[i], strlen(bad[i]), -EINVAL,
			      "'in.xml' is not well-formed XML");
}

static void test_parse_wrong_root(void **state)
{
	struct fixture *f = *state;
	static const char xml[] = "<network><name>default</name></network>";

	expect_reject(f, xml, strlen(xml), -EINVAL, "");
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "'in.xml' is not a libvirt domain definition (<domain> root)");
}

/*
 * A DOCTYPE is refused, and nothing it names is loaded: not an external
 * general entity, not an external parameter entity, not an external DTD.
 */
static void test_parse_doctype(void **state)
{
	struct fixture *f = *state;
	char path[512];
	char xml[3][1024];
	xmlExternalEntityLoader old = xmlGetExternalEntityLoader();
	int fd;

	snprintf(path, sizeof(path), "%s/vgpu-domxml-secret-XXXXXX", test_tmpdir());
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "SECRET-MARKER", 13), 13);
	close(fd);
	snprintf(xml[0], sizeof(xml[0]),
		 "<?xml version='1.0'?>\n<!DOCTYPE domain [<!ENTITY xxe SYSTEM 'file://%s'>]>\n"
		 "<domain><name>&xxe;</name></domain>",
		 path);
	snprintf(xml[1], sizeof(xml[1]),
		 "<!DOCTYPE domain [<!ENTITY %% pe SYSTEM 'file://%s'> %%pe;]>\n"
		 "<domain><name>x</name></domain>",
		 path);
	snprintf(xml[2], sizeof(xml[2]),
		 "<!DOCTYPE domain SYSTEM 'file://%s'>\n<domain><name>x</name></domain>", path);

	xmlSetExternalEntityLoader(counting_loader);
	n_loads = 0;
	for (size_t i = 0; i < ARRAY_SIZE(xml); i++) {
		struct _xmlDoc *doc = NULL;
		int r = vgpu_domain_parse(&f->ctx, xml[i], strlen(xml[i]), "in.xml", &doc);

		if (r != -EINVAL || doc || n_loads != 0 ||
		    strstr(vgpu_ctx_error(&f->ctx), "SECRET-MARKER")) {
			xmlSetExternalEntityLoader(old);
			unlink(path);
			fail_msg("case %zu: r = %d, %d load(s) (last '%s'), error \"%s\"", i, r,
				 n_loads, last_load, vgpu_ctx_error(&f->ctx));
		}
		assert_string_equal(vgpu_ctx_error(&f->ctx),
				    "'in.xml' is not a libvirt domain definition "
				    "(<domain> root, no DTD)");
	}

	/* the counting loader does see loads when a parser asks for them */
	{
		char url[600];
		xmlDocPtr doc =
			xmlReadMemory(xml[0], (int)strlen(xml[0]), "in.xml", NULL,
				      XML_PARSE_NOENT | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);

		if (doc)
			xmlFreeDoc(doc);
		snprintf(url, sizeof(url), "file://%s", path);
		xmlSetExternalEntityLoader(old);
		unlink(path);
		assert_int_equal(n_loads, 1);
		assert_string_equal(last_load, url);
	}
}

/* Internal entities (billion laughs) are refused too, quickly. */
static void test_parse_entity_bomb(void **state)
{
	static const char no_dtd[] =
		"'in.xml' is not a libvirt domain definition (<domain> root, no DTD)";
	struct fixture *f = *state;
	static const char xml[] = "<!DOCTYPE domain [\n"
				  " <!ENTITY a 'aaaaaaaaaa'>\n"
				  " <!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>\n"
				  " <!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>\n"
				  " <!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>\n"
				  " <!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>\n"
				  " <!ENTITY g '&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;'>\n"
				  "]>\n"
				  "<domain><name>&g;</name></domain>";

	expect_reject(f, xml, strlen(xml), -EINVAL, "'in.xml' is not ");
	/* libxml2 stops at the amplification itself; were it to parse it, the DTD is refused */
	if (strncmp(vgpu_ctx_error(&f->ctx), "'in.xml' is not well-formed XML: ", 33) != 0 &&
	    strcmp(vgpu_ctx_error(&f->ctx), no_dtd) != 0)
		fail_msg("unexpected error \"%s\"", vgpu_ctx_error(&f->ctx));
}

static void test_parse_size_cap(void **state)
{
	struct fixture *f = *state;
	static const char head[] = "<domain><name>big</name><!--";
	static const char tail[] = "--></domain>";
	char *buf = malloc(XML_CAP + 2);
	struct _xmlDoc *doc = NULL;
	char want[128];

	assert_non_null(buf);
	/* exactly at the cap: accepted */
	memset(buf, 'a', XML_CAP + 1);
	memcpy(buf, head, strlen(head));
	memcpy(buf + XML_CAP - strlen(tail), tail, strlen(tail));
	buf[XML_CAP] = '\0';
	assert_int_equal(vgpu_domain_parse(&f->ctx, buf, XML_CAP, "big.xml", &doc), 0);
	assert_non_null(doc);
	xmlFreeDoc(doc);
	doc = NULL;

	/* one byte more: refused before parsing */
	memcpy(buf + XML_CAP + 1 - strlen(tail), tail, strlen(tail));
	buf[XML_CAP - strlen(tail)] = 'a';
	buf[XML_CAP + 1] = '\0';
	assert_int_equal(vgpu_domain_parse(&f->ctx, buf, XML_CAP + 1, "big.xml", &doc), -EFBIG);
	assert_null(doc);
	snprintf(want, sizeof(want), "'big.xml' is larger than %u bytes", XML_CAP);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want);
	free(buf);
}

/* ---- vgpu_parse_size_kib ---------------------------------------------------------------- */

/* Each of @bad fails with @want_r and leaves the output alone. */
static void check_size_rejects(const char *const *bad, size_t n, int want_r)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 7;
		int r = vgpu_parse_size_kib(bad[i], &v);

		if (r != want_r || v != 7)
			fail_msg("vgpu_parse_size_kib(\"%s\") = %d, out %llu; expected %d (%s), "
				 "out untouched",
				 bad[i], r, (unsigned long long)v, want_r, strerror(-want_r));
	}
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *in;
		uint64_t kib;
	} good[] = {
		{ "32G", 33554432 },
		{ "4096M", 4194304 },
		{ "1.5G", 1572864 },
		{ "512", 524288 },
		{ "1T", 1073741824 },
		{ "2GiB", 2097152 },
		{ "1.5GiB", 1572864 },
		{ "2gib", 2097152 },
		{ "1024K", 1024 },
		{ "8MiB", 8192 },
		{ "16g", 16777216 },
		/* libvirt's units: KB, MB, GB are powers of 1000, rounded up to KiB */
		{ "2GB", 1953125 },
		{ "2gb", 1953125 },
		{ "1500MB", 1464844 },
		{ "2147483648b", 2097152 },
		{ "4096mib", 4194304 },
		/* integer rounding: up to the next KiB, exact where a double is not */
		{ "0.1G", 104858 },
		{ "1.0000000000000000001G", 1048577 },
		{ "1.00000000000000000000G", 1048576 },
		{ "1P", 1099511627776 },
		{ "953674G", 999999668224 },
	};
	static const char *const bad[] = { "",	  "G",	 "-1G", "1X", "1GiBs", "G1",   " 1G",
					   "1G ", "1 G", ".5G", "0",  "0G",    "1KiBB" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint64_t v = 7;
		int r = vgpu_parse_size_kib(good[i].in, &v);

		if (r != 0 || v != good[i].kib)
			fail_msg("vgpu_parse_size_kib(\"%s\") = %d, %llu KiB; expected 0, %llu KiB",
				 good[i].in, r, (unsigned long long)v,
				 (unsigned long long)good[i].kib);
	}
	check_size_rejects(bad, ARRAY_SIZE(bad), -EINVAL);
}

/* Sizes that are not a whole number of KiB, or absurdly large, are out of range. */
static void test_parse_size_range(void **state)
{
	/* a guest needs a MiB at least: "1K" was accepted before */
	static const char *const bad[] = { "1.0001K", "1.5K", "0.1K", "2000000T", "1K", "1000KB" };

	(void)state;
	check_size_rejects(bad, ARRAY_SIZE(bad), -ERANGE);
}

/* ---- UUID helpers ------------------------------------------------------------------------ */

static void test_uuid_valid(void **state)
{
	static const char *const good[] = {
		"7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f",
		"7C1F4B2E-3D5A-4E8B-9F60-1A2B3C4D5E6F",
		"00000000-0000-0000-0000-000000000000",
	};
	static const char *const bad[] = {
		"",
		"7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6",
		"7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f0",
		"7c1f4b2e3d5a-4e8b-9f60-1a2b3c4d5e6f0",
		"7c1f4b2e-3d5a-4e8b-9f60_1a2b3c4d5e6f",
		"7c1f4b2g-3d5a-4e8b-9f60-1a2b3c4d5e6f",
		"{c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6}",
		"7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6 ",
		"7c1f4b2e3d5a4e8b9f601a2b3c4d5e6f",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		if (!vgpu_uuid_valid(good[i]))
			fail_msg("'%s' is not valid", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (vgpu_uuid_valid(bad[i]))
			fail_msg("'%s' is valid", bad[i]);
}

static void test_uuid_generate(void **state)
{
	char a[37], b[37];

	(void)state;
	memset(a, 'x', sizeof(a));
	memset(b, 'x', sizeof(b));
	assert_int_equal(vgpu_uuid_generate(&test_ctx, a), 0);
	assert_int_equal(vgpu_uuid_generate(&test_ctx, b), 0);
	assert_int_equal(a[36], '\0');
	assert_uuid_v4(a);
	assert_uuid_v4(b);
	assert_string_not_equal(a, b);
}

/* What -c URI counts as taken in another domain's definition. */
static void test_domain_pinned_cpus(void **state)
{
	struct vgpu_cpuset s;

	(void)state;
	vgpu_cpuset_zero(&s);
	assert_int_equal(vgpu_domain_pinned_cpus(
				 &test_ctx,
				 "<domain><name>a</name><vcpu cpuset='90-91'>2</vcpu>"
				 "<cputune><vcpupin vcpu='0' cpuset='3'/>"
				 "<vcpupin vcpu='1' cpuset='4-5,52'/><emulatorpin cpuset='7'/>"
				 "<iothreadpin iothread='1' cpuset='8'/>"
				 /* libvirt's "^N" takes CPU 15 out of the range */
				 "<vcpupin vcpu='2' cpuset='10-20,^15'/><shares>10</shares>"
				 "</cputune></domain>",
				 &s),
			 0);
	assert_cpus(&s, "3-5,7-8,10-14,16-20,52,90-91");
	/* unpinned domains take nothing; malformed XML is an error, set untouched */
	vgpu_cpuset_zero(&s);
	assert_int_equal(vgpu_domain_pinned_cpus(&test_ctx, "<domain><vcpu>4</vcpu></domain>", &s),
			 0);
	assert_true(vgpu_cpuset_empty(&s));
	assert_int_equal(vgpu_domain_pinned_cpus(&test_ctx, "<domain><cputune>", &s), -EINVAL);
	assert_true(vgpu_cpuset_empty(&s));
}

/* Every XML printed with success validates: a <name> with a newline or a control character is
 * refused. */
static void test_bad_names_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = { "a\nb", "a\001b", "a/b", "", "a\377b" };
	xmlDocPtr doc;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_non_null(vgpu_domain_name_check(bad[i]));
	assert_null(vgpu_domain_name_check("vm-1 ok"));
	f->opts.name = "a\nb";
	doc = parse_ok(f, "<domain><name>x</name><memory>1048576</memory></domain>");
	assert_int_equal(build(f, doc), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "domain name 'a\\x0ab': contains a control character");
	xmlFreeDoc(doc);
	/* the same when the name comes from --from's document */
	f->opts.name = NULL;
	doc = parse_ok(f, "<domain><name>a&#10;b</name><memory>1048576</memory></domain>");
	assert_int_equal(build(f, doc), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "the domain's <name>"));
	xmlFreeDoc(doc);
}

/* A root element in another namespace is not a domain (it would get a second <name>). */
static void test_foreign_root_namespace(void **state)
{
	struct fixture *f = *state;
	static const char xml[] = "<d:domain xmlns:d='urn:x'><name>x</name></d:domain>";
	xmlDocPtr doc = NULL;

	assert_int_equal(vgpu_domain_parse(&f->ctx, xml, strlen(xml), "in.xml", &doc), -EINVAL);
	assert_null(doc);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "'in.xml' is not a libvirt domain definition "
						     "(<domain> root in no namespace)");
}

/* Two vGPUs never share an mdev UUID. */
static void test_duplicate_mdev_uuid(void **state)
{
	struct fixture *f = *state;
	xmlDocPtr doc = parse_ok(f, "<domain><name>x</name><memory>1048576</memory></domain>");

	vgpu_choice_set(&f->plan->vgpus[1], &f->vf_mdev2, &f->type_a30);
	f->plan->n_vgpus = 2;
	f->ids.mdev_uuids[1] = MDEV_UUID;
	assert_int_equal(build(f, doc), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "vGPUs 1 and 2 would share mdev UUID " MDEV_UUID);
	xmlFreeDoc(doc);
}

/* libvirt accepts a UUID without dashes and units in any case: so do we. */
static void test_libvirt_spellings(void **state)
{
	struct fixture *f = *state;
	const char *out;
	char u[VGPU_UUID_LEN];

	assert_true(vgpu_uuid_normalize("3F2C1D4E5B6A47899ABCDEF012345678", u));
	assert_string_equal(u, "3f2c1d4e-5b6a-4789-9abc-def012345678");
	assert_false(vgpu_uuid_normalize("3f2c1d4e5b6a47899abcdef01234567", u));
	f->ids.uuid = NULL;
	out = run(f, "<domain><name>x</name><uuid>3f2c1d4e5b6a47899abcdef012345678</uuid>"
		     "<memory unit='gib'>2</memory></domain>");
	assert_once(out, "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>");
	assert_once(out, "<memory unit=\"KiB\">2097152</memory>");
	out = run(f, "<domain><name>x</name><memory unit='kb'>2000000</memory></domain>");
	assert_once(out, "<memory unit=\"KiB\">1953125</memory>");
}

/* The hook's reader gives back what the builder wrote. */
static void test_read_meta(void **state)
{
	struct fixture *f = *state;
	struct vgpu_meta m;
	xmlDocPtr doc;

	run(f, "<domain><name>x</name><memory>1048576</memory></domain>");
	assert_int_equal(vgpu_domain_read_meta(&f->ctx, f->doc, &m), 0);
	assert_string_equal(m.owner, VM_UUID);
	assert_int_equal(m.node, 0);
	assert_int_equal(m.n_vgpus, 1);
	assert_string_equal(m.vgpus[0].profile, "A30-6C");
	assert_int_equal(m.vgpus[0].type_id, 684);
	assert_int_equal(m.vgpus[0].iface, VGPU_IFACE_MDEV);
	assert_string_equal(m.vgpus[0].vf, "0000:3b:00.4");
	assert_string_equal(m.vgpus[0].mdev_uuid, MDEV_UUID);
	vgpu_meta_clear(&m);
	doc = parse_ok(f, "<domain><name>x</name></domain>");
	assert_int_equal(vgpu_domain_read_meta(&f->ctx, doc, &m), -ENOENT);
	xmlFreeDoc(doc);
	doc = parse_ok(f, "<domain><name>x</name><metadata><v:vgpus xmlns:v='" VGPU_XML_NS
			  "' owner='" VM_UUID "'><v:vgpu profile='A30-6C' type-id='x'/></v:vgpus>"
			  "</metadata></domain>");
	assert_int_equal(vgpu_domain_read_meta(&f->ctx, doc, &m), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "vgpuctl metadata: 'type-id' of 'A30-6C' is not a type id");
	xmlFreeDoc(doc);
}

/* A domain as libvirt gives it to the migrate hook: an mdev and a VF vGPU, guest-side details. */
static const char retarget_xml[] =
	"<domain type='kvm'><name>x</name><uuid>" VM_UUID "</uuid><memory>1048576</memory>"
	"<metadata><v:vgpus xmlns:v='" VGPU_XML_NS "' owner='" VM_UUID "' node='0'>"
	"<v:vgpu profile='A30-6C' type-id='684' interface='mdev' backing='time-sliced'"
	" gpu='0000:3b:00.0' vf='0000:3b:00.4' mdev-uuid='" MDEV_UUID "'/>"
	"<v:vgpu profile='L40S-8Q' type-id='1151' interface='vendor-vfio' backing='time-sliced'"
	" gpu='0000:c1:00.0' vf='0000:c1:00.5'/></v:vgpus></metadata><devices>"
	"<hostdev mode='subsystem' type='mdev' model='vfio-pci' display='off'>"
	"<source><address uuid='" MDEV_UUID "'/></source><alias name='hostdev0'/>"
	"<rom bar='off'/><address type='pci' domain='0x0000' bus='0x06' slot='0x00'"
	" function='0x0'/></hostdev>"
	"<hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000'"
	" bus='0xc1' slot='0x00' function='0x5'/></source><alias name='hostdev1'/>"
	"<address type='pci' domain='0x0000' bus='0x07' slot='0x00' function='0x0'/></hostdev>"
	"</devices></domain>";

/* The guest's side of the two hostdevs, as formatted. */
static const char *const guest_parts[] = {
	"<alias name=\"hostdev0\"/>",
	"<rom bar=\"off\"/>",
	"<address type=\"pci\" domain=\"0x0000\" bus=\"0x06\" slot=\"0x00\" function=\"0x0\"/>",
	"<alias name=\"hostdev1\"/>",
	"<address type=\"pci\" domain=\"0x0000\" bus=\"0x07\" slot=\"0x00\" function=\"0x0\"/>",
	"<hostdev mode=\"subsystem\" type=\"mdev\" model=\"vfio-pci\" display=\"off\">",
	"<hostdev mode=\"subsystem\" type=\"pci\" managed=\"no\">",
};

static void set_choice(struct vgpu_choice *c, enum vgpu_iface iface, const char *gpu,
		       const char *parent, const char *mdev)
{
	memset(c, 0, sizeof(*c));
	c->iface = iface;
	snprintf(c->gpu, sizeof(c->gpu), "%s", gpu);
	snprintf(c->parent, sizeof(c->parent), "%s", parent);
	snprintf(c->mdev_uuid, sizeof(c->mdev_uuid), "%s", mdev);
}

/*
 * A migration's rewrite: the same devices change nothing; a new mdev UUID
 * and another VF change only the hostdevs' sources and our metadata; what
 * the guest sees stays byte-identical; an interface change is refused.
 */
static void test_retarget(void **state)
{
	struct fixture *f = *state;
	struct _xmlDoc *doc = parse_ok(f, retarget_xml);
	const char *mdev2 = "aaaaaaaa-0000-4000-8000-000000000002";
	struct vgpu_choice to[2];
	struct vgpu_meta m;
	char *before, *after;

	assert_int_equal(vgpu_domain_read_meta(&f->ctx, doc, &m), 0);
	before = format_ok(doc);
	set_choice(&to[0], VGPU_IFACE_MDEV, "0000:3b:00.0", "0000:3b:00.4", MDEV_UUID);
	set_choice(&to[1], VGPU_IFACE_VENDOR_VFIO, "0000:c1:00.0", "0000:c1:00.5", "");
	assert_int_equal(vgpu_domain_retarget(&f->ctx, doc, &m, to, 2, NULL), 0);
	after = format_ok(doc);
	assert_string_equal(before, after);
	free(after);

	set_choice(&to[0], VGPU_IFACE_MDEV, "0000:af:00.0", "0000:af:00.4", mdev2);
	set_choice(&to[1], VGPU_IFACE_VENDOR_VFIO, "0000:41:00.0", "0000:41:00.6", "");
	assert_int_equal(vgpu_domain_retarget(&f->ctx, doc, &m, to, 2, NULL), 2);
	after = format_ok(doc);
	assert_once(after,
		    "<source>\n        <address uuid=\"aaaaaaaa-0000-4000-8000-000000000002\"/>");
	assert_once(after,
		    "<address domain=\"0x0000\" bus=\"0x41\" slot=\"0x00\" function=\"0x6\"/>");
	assert_lacks(after, MDEV_UUID);
	assert_lacks(after, "bus=\"0xc1\"");
	assert_once(
		after,
		"gpu=\"0000:af:00.0\" vf=\"0000:af:00.4\" mdev-uuid=\"aaaaaaaa-0000-4000-8000-000000000002\"");
	assert_once(after, "gpu=\"0000:41:00.0\" vf=\"0000:41:00.6\"");
	for (size_t i = 0; i < ARRAY_SIZE(guest_parts); i++) {
		assert_once(before, guest_parts[i]);
		assert_once(after, guest_parts[i]);
	}
	free(after);
	free(before);

	/* mdev <-> VF is not the rewrite's to do: refused before any edit */
	vgpu_meta_clear(&m);
	xmlFreeDoc(doc);
	doc = parse_ok(f, retarget_xml);
	assert_int_equal(vgpu_domain_read_meta(&f->ctx, doc, &m), 0);
	before = format_ok(doc);
	set_choice(&to[1], VGPU_IFACE_MDEV, "0000:41:00.0", "0000:41:00.6", mdev2);
	assert_int_equal(vgpu_domain_retarget(&f->ctx, doc, &m, to, 2, NULL), -EINVAL);
	assert_int_equal(vgpu_domain_retarget(&f->ctx, doc, &m, to, 1, NULL), -EINVAL);
	after = format_ok(doc);
	assert_string_equal(before, after);
	free(after);
	free(before);
	vgpu_meta_clear(&m);
	xmlFreeDoc(doc);
}

/* One reading of a domain: every field, and each check's result kept, not acted on. */
static void test_domain_info_read(void **state)
{
	struct fixture *f = *state;
	struct vgpu_domain_info info;
	VGPU_AUTOFREE char *vcpu = NULL;
	xmlDocPtr doc;

	run(f, "<domain><name> vm1 </name><uuid>" VM_UUID "</uuid><memory unit='GiB'>2</memory>"
	       "<vcpu>4</vcpu></domain>");
	vgpu_domain_info_read(f->doc, "x86_64", &info);
	vcpu = vgpu_domain_field(f->doc, "vcpu"); /* the plan's, as built */
	assert_string_equal(info.name, "vm1");
	assert_string_equal(info.uuid, VM_UUID);
	assert_int_equal(info.vcpus, atoi(vcpu));
	assert_false(info.vcpus_bad);
	assert_int_equal(info.memory_kib, 2 * 1024 * 1024);
	assert_int_equal(info.guest, 0);
	assert_null(info.guest_error);
	assert_int_equal(info.meta_r, 0);
	assert_int_equal(info.meta.n_vgpus, 1);
	assert_int_equal(info.meta.vgpus[0].type_id, 684);
	assert_int_equal(info.n_prev_mdevs, 1);
	assert_string_equal(info.prev_mdevs[0], MDEV_UUID);
	vgpu_domain_info_clear(&info);
	assert_null(info.name);

	doc = parse_ok(
		f, "<domain><uuid>not-a-uuid</uuid><memory>lots</memory><vcpu>0</vcpu>"
		   "<os><type arch='ppc64'>hvm</type></os><metadata><v:vgpus xmlns:v='" VGPU_XML_NS
		   "' owner='" VM_UUID "'><v:vgpu profile='A30-6C' type-id='x'/></v:vgpus>"
		   "</metadata></domain>");
	vgpu_domain_info_read(doc, "x86_64", &info);
	assert_null(info.name);
	assert_string_equal(info.uuid_text, "not-a-uuid");
	assert_string_equal(info.uuid, "");
	assert_int_equal(info.vcpus, 0);
	assert_true(info.vcpus_bad);
	assert_int_equal(info.memory_kib, 0);
	assert_int_equal(info.guest, -ENOTSUP);
	assert_non_null(strstr(info.guest_error, "ppc64"));
	assert_int_equal(info.meta_r, -EINVAL);
	assert_string_equal(info.meta_error,
			    "vgpuctl metadata: 'type-id' of 'A30-6C' is not a type id");
	vgpu_domain_info_clear(&info);
	xmlFreeDoc(doc);

	doc = parse_ok(f, "<domain><name>x</name></domain>");
	vgpu_domain_info_read(doc, NULL, &info);
	assert_int_equal(info.vcpus, 0);
	assert_false(info.vcpus_bad);
	assert_int_equal(info.meta_r, -ENOENT);
	assert_null(info.meta_error);
	assert_null(info.uuid_text);
	vgpu_domain_info_clear(&info);
	xmlFreeDoc(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_root_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_mdev_uuid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_on_cell_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libvirt_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_meta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retarget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_domain_info_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mdev_hostdev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mdev_uuid_generated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vfio_hostdev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_vgpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vcpupin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emulatorpin_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numatune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_topology, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_topology_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_template_memory_units, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_memory_no_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hugepages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uuid_generated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uuid_kept_or_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_created, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replan_same_doc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replan_existing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replan_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_not_well_formed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_wrong_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_doctype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_entity_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_size_cap, setup, teardown),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_size_range),
		cmocka_unit_test(test_uuid_valid),
		cmocka_unit_test(test_uuid_generate),
		cmocka_unit_test(test_domain_pinned_cpus),
	};

	return cmocka_run_group_tests_name("domxml", tests, NULL, NULL);
}
