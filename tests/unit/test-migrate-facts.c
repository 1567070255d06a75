// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-migrate-facts - what a domain's XML says that QEMU will not migrate
 * (vgpu_domain_mig_facts(), read for migrate-check's qemu-blockers): a guest
 * <iommu>, enable-migration=off the two ways libvirt passes it to QEMU,
 * ramfb and the machine type, and the VFIO devices, ours counted apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "domxml.h"
#include "migrate-check.h"

#define MDEV "aaaaaaaa-2222-4333-8444-555555555551"

/* A domain with one vGPU of ours (mdev MDEV) and @extra in <devices>, @tail after them. */
static void facts(const char *machine, const char *hostdev_attrs, const char *extra,
		  const char *tail, struct vgpu_mig_domain *out)
{
	char xml[4096];
	struct vgpu_ctx ctx;
	struct _xmlDoc *doc = NULL;
	struct vgpu_meta meta;

	snprintf(
		xml, sizeof(xml),
		"<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"
		"<name>vm1</name><uuid>11111111-2222-4333-8444-555555555551</uuid>"
		"<metadata><vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' owner='11111111-2222-4333-8444-555555555551' node='0'>"
		"<vgpuctl:vgpu profile='A30-4C' type-id='683' interface='mdev' backing='time-sliced' gpu='0000:3b:00.0' vf='0000:3b:00.4' mdev-uuid='" MDEV
		"'/></vgpuctl:vgpus></metadata>"
		"<memory>1048576</memory><os><type arch='x86_64' machine='%s'>hvm</type></os>"
		"<devices><hostdev mode='subsystem' type='mdev' model='vfio-pci' %s>"
		"<source><address uuid='" MDEV "'/></source></hostdev>%s</devices>%s</domain>",
		machine, hostdev_attrs, extra, tail);
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_domain_parse(&ctx, xml, strlen(xml), "test", &doc), 0);
	assert_int_equal(vgpu_domain_read_meta(&ctx, doc, &meta), 0);
	vgpu_domain_mig_facts(doc, &meta, out);
	vgpu_meta_clear(&meta);
	vgpu_xml_doc_free(doc);
	vgpu_ctx_clear(&ctx);
}

static void test_plain(void **state)
{
	struct vgpu_mig_domain d;

	(void)state;
	facts("pc-q35-8.2", "display='off'", "", "", &d);
	assert_string_equal(d.name, "vm1");
	assert_string_equal(d.machine, "pc-q35-8.2");
	assert_false(d.iommu);
	assert_false(d.migration_off);
	assert_false(d.ramfb);
	assert_int_equal(d.n_vfio, 1);
	assert_int_equal(d.n_vfio_other, 0);
}

static void test_iommu(void **state)
{
	struct vgpu_mig_domain d;

	(void)state;
	facts("pc-q35-8.2", "", "<iommu model='intel'/>", "", &d);
	assert_true(d.iommu);
}

/* enable-migration=off: a -set argument, or a property of qemu:override */
static void test_migration_off(void **state)
{
	struct vgpu_mig_domain d;

	(void)state;
	facts("pc-q35-8.2", "", "",
	      "<qemu:commandline><qemu:arg value='-set'/>"
	      "<qemu:arg value='device.hostdev0.enable-migration=off'/></qemu:commandline>",
	      &d);
	assert_true(d.migration_off);
	facts("pc-q35-8.2", "", "",
	      "<qemu:override><qemu:device alias='hostdev0'><qemu:frontend>"
	      "<qemu:property name='x-enable-migration' type='string' value='off'/>"
	      "</qemu:frontend></qemu:device></qemu:override>",
	      &d);
	assert_true(d.migration_off);
	/* turned on, or another property: nothing */
	facts("pc-q35-8.2", "", "",
	      "<qemu:commandline><qemu:arg value='-set'/>"
	      "<qemu:arg value='device.hostdev0.enable-migration=on'/></qemu:commandline>"
	      "<qemu:override><qemu:device alias='hostdev0'><qemu:frontend>"
	      "<qemu:property name='x-pre-copy-dirty-page-tracking' type='string' value='off'/>"
	      "</qemu:frontend></qemu:device></qemu:override>",
	      &d);
	assert_false(d.migration_off);
}

static void test_ramfb(void **state)
{
	struct vgpu_mig_domain d;

	(void)state;
	facts("pc-q35-7.2", "display='on' ramfb='on'", "", "", &d);
	assert_true(d.ramfb);
	assert_string_equal(d.machine, "pc-q35-7.2");
	facts("pc-q35-7.2", "display='on' ramfb='off'", "", "", &d);
	assert_false(d.ramfb);
	facts("pc-i440fx-7.2", "", "<video><model type='ramfb'/></video>", "", &d);
	assert_true(d.ramfb);
}

/* every VFIO device counts; those that are not our vGPUs apart */
static void test_vfio_count(void **state)
{
	struct vgpu_mig_domain d;

	(void)state;
	facts("pc-q35-8.2", "",
	      "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
	      "<address domain='0x0000' bus='0x5e' slot='0x00' function='0x2'/></source></hostdev>"
	      "<hostdev mode='subsystem' type='usb'><source><vendor id='0x1234'/>"
	      "<product id='0xbeef'/></source></hostdev>",
	      "", &d);
	assert_int_equal(d.n_vfio, 2);
	assert_int_equal(d.n_vfio_other, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),	      cmocka_unit_test(test_iommu),
		cmocka_unit_test(test_migration_off), cmocka_unit_test(test_ramfb),
		cmocka_unit_test(test_vfio_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
