// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-nccl-topo - the NCCL topology file of a guest (src/lib/nccl-topo.c):
 * guest bus IDs counted as the firmware numbers buses (behind expander
 * buses and on the root complex, depth first in slot order), one <cpu> per
 * guest cell with its vCPU mask, GPUs numbered in bus ID order, NVLinks
 * named by the peer's guest bus ID, and the refusals.
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

#include "domxml.h"
#include "nccl-topo.h"

#define META                                                                                             \
	"<metadata><vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' "                                 \
	"owner='7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f' node='0'>"                                         \
	"<vgpuctl:vgpu profile='H100-80C' type-id='1061' interface='vendor-vfio' backing='time-sliced' " \
	"gpu='0000:1b:00.0' vf='0000:1b:00.4'/>"                                                         \
	"<vgpuctl:vgpu profile='H100-80C' type-id='1061' interface='vendor-vfio' backing='time-sliced' " \
	"gpu='0000:9a:00.0' vf='0000:9a:00.4'/>"                                                         \
	"</vgpuctl:vgpus></metadata>"

#define HOSTDEV(src, bus)                                                                          \
	"<hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000' "      \
	"bus='0x" src "' slot='0x00' function='0x4'/></source>"                                    \
	"<address type='pci' domain='0x0000' bus='" bus "' slot='0x00' function='0x0'/></hostdev>"

/* A mirrored guest: 40 vCPUs in two cells, vGPU 2 (cell 1) listed first in <devices>. */
static const char mirrored[] =
	"<domain type='kvm'><name>g</name><uuid>7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f</uuid>" META
	"<memory>1048576</memory><vcpu>40</vcpu><os><type arch='x86_64' machine='q35'>hvm</type></os>"
	"<cpu><numa><cell id='0' cpus='0-19' memory='524288'/><cell id='1' cpus='20-39' "
	"memory='524288'/></numa></cpu><devices>"
	"<controller type='pci' index='0' model='pcie-root'/>"
	"<controller type='pci' index='1' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x00' slot='0x02' function='0x0'/></controller>"
	"<controller type='pci' index='2' model='pcie-expander-bus'><target busNr='144'>"
	"<node>1</node></target><address type='pci' domain='0x0000' bus='0x00' slot='0x04' "
	"function='0x0'/></controller>"
	"<controller type='pci' index='3' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x02' slot='0x00' function='0x0'/></controller>"
	"<controller type='pci' index='4' model='pcie-expander-bus'><target busNr='128'>"
	"<node>0</node></target></controller>"
	"<controller type='pci' index='5' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x04' slot='0x01' function='0x0'/></controller>"
	"<controller type='pci' index='6' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x04' slot='0x00' function='0x0'/></controller>" HOSTDEV("9a", "0x03")
		HOSTDEV("1b", "0x05") "</devices></domain>";

/* No cells, no expander: both on the root complex, the second behind a switch. */
static const char flat[] =
	"<domain type='kvm'><name>g</name><uuid>7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f</uuid>" META
	"<memory>1048576</memory><vcpu>4</vcpu><os><type arch='x86_64' machine='q35'>hvm</type></os>"
	"<devices><controller type='pci' index='0' model='pcie-root'/>"
	"<controller type='pci' index='3' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x00' slot='0x03' function='0x0'/></controller>"
	"<controller type='pci' index='1' model='pcie-root-port'><address type='pci' "
	"domain='0x0000' bus='0x00' slot='0x02' function='0x0'/></controller>"
	"<controller type='pci' index='2' model='pcie-switch-upstream-port'><address type='pci' "
	"domain='0x0000' bus='0x01' slot='0x00' function='0x0'/></controller>"
	"<controller type='pci' index='4' model='pcie-switch-downstream-port'><address type='pci' "
	"domain='0x0000' bus='0x02' slot='0x00' function='0x0'/></controller>" HOSTDEV("1b", "0x04")
		HOSTDEV("9a", "0x03") "</devices></domain>";

static struct vgpu_nccl_host host(void)
{
	struct vgpu_nccl_host h = { .cpu_vendor = "GenuineIntel",
				    .cpu_family = 6,
				    .cpu_model = 143 };

	for (size_t i = 0; i < 2; i++) {
		h.gpus[i] = (struct vgpu_nccl_gpu){ .class_code = 0x030200,
						    .vendor = 0x10de,
						    .device = 0x2330,
						    .link_width = 16,
						    .sm = 90,
						    .gdr = true };
		snprintf(h.gpus[i].link_speed, sizeof(h.gpus[i].link_speed), "32.0 GT/s PCIe");
	}
	h.n_gpus = 2;
	h.nvlinks[0][1] = h.nvlinks[1][0] = 18;
	return h;
}

static char *topo_of(const char *xml, const struct vgpu_nccl_host *h, int *r)
{
	struct vgpu_ctx ctx = { 0 };
	struct _xmlDoc *doc = NULL;
	char *out = NULL;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_domain_parse(&ctx, xml, strlen(xml), "t", &doc), 0);
	*r = vgpu_nccl_topo_format(&ctx, doc, h, &out);
	vgpu_xml_doc_free(doc);
	vgpu_ctx_clear(&ctx);
	return out;
}

static void mirrored_guest(void **state __attribute__((unused)))
{
	struct vgpu_nccl_host h = host();
	int r;
	char *out = topo_of(mirrored, &h, &r);
	static const char want[] =
		"<system version=\"1\">\n"
		"  <cpu numaid=\"0\" affinity=\"00000000,000fffff\" arch=\"x86_64\" "
		"vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
		"    <pci busid=\"0000:82:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
		"device=\"0x2330\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
		"      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
		"        <nvlink target=\"0000:91:00.0\" count=\"18\" tclass=\"0x030200\"/>\n"
		"      </gpu>\n"
		"    </pci>\n"
		"  </cpu>\n"
		"  <cpu numaid=\"1\" affinity=\"000000ff,fff00000\" arch=\"x86_64\" "
		"vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
		"    <pci busid=\"0000:91:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
		"device=\"0x2330\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
		"      <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\">\n"
		"        <nvlink target=\"0000:82:00.0\" count=\"18\" tclass=\"0x030200\"/>\n"
		"      </gpu>\n"
		"    </pci>\n"
		"  </cpu>\n"
		"</system>\n";

	/* vGPU 1 sits behind the second port of busNr 128 by slot (0x81 is slot 0's) */
	assert_int_equal(r, 0);
	assert_string_equal(out, want);
	free(out);
}

static void flat_guest(void **state __attribute__((unused)))
{
	struct vgpu_nccl_host h = host();
	int r;
	char *out;

	h.nvlinks[0][1] = h.nvlinks[1][0] = 0;
	snprintf(h.nvswitch, sizeof(h.nvswitch), "0000:05:00.0");
	h.gpus[1].nvswitch_links = 18;
	out = topo_of(flat, &h, &r);
	assert_int_equal(r, 0);
	/* port slot 2 -> bus 1, its switch's upstream 2, downstream 3; port slot 3 -> bus 4 */
	assert_non_null(strstr(out, "<cpu numaid=\"0\" affinity=\"0000000f\""));
	assert_non_null(strstr(out, "<pci busid=\"0000:03:00.0\""));
	assert_non_null(strstr(out, "<pci busid=\"0000:04:00.0\""));
	/* dev follows the guest bus ID: bus 3 (vGPU 1, behind the switch) is dev 0 */
	assert_true(strstr(out, "0000:03:00.0") < strstr(out, "0000:04:00.0"));
	/* vGPU 2 (bus 4) reaches the NVSwitches, vGPU 1 has no NVLink */
	assert_non_null(strstr(out, "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>"));
	assert_non_null(strstr(out, "<gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\">\n"
				    "        <nvlink target=\"0000:05:00.0\" count=\"18\" "
				    "tclass=\"0x068000\"/>"));
	assert_null(strstr(out, "<cpu numaid=\"1\""));
	free(out);
}

static void refusals(void **state __attribute__((unused)))
{
	struct vgpu_nccl_host h = host();
	char *xml = vgpu_xstrdup(mirrored), *p;
	int r;

	/* a hostdev libvirt has not given an address yet */
	p = strstr(xml, "<address type='pci' domain='0x0000' bus='0x05'");
	assert_non_null(p);
	memcpy(p + 1, "xxxxxxx", 7);
	assert_null(topo_of(xml, &h, &r));
	assert_int_equal(r, -EINVAL);
	free(xml);
	/* no vGPU of ours */
	assert_null(topo_of("<domain><name>g</name><devices/></domain>", &h, &r));
	assert_int_equal(r, -ENOENT);
}

static void sm_by_device(void **state __attribute__((unused)))
{
	assert_int_equal(vgpu_nccl_sm(0x20b7), 80); /* A30 */
	assert_int_equal(vgpu_nccl_sm(0x2330), 90); /* H100 SXM */
	assert_int_equal(vgpu_nccl_sm(0x26b9), 89); /* L40S */
	assert_int_equal(vgpu_nccl_sm(0x1eb8), 75); /* T4 */
	assert_int_equal(vgpu_nccl_sm(0x2bb5), 120); /* RTX PRO 6000 Blackwell */
	assert_int_equal(vgpu_nccl_sm(0x1234), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mirrored_guest),
		cmocka_unit_test(flat_guest),
		cmocka_unit_test(refusals),
		cmocka_unit_test(sm_by_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
