// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: assign's edit of a domain definition (vgpu_domain_build()): the
 * sections vgpuctl owns (identity, memory, vCPU pinning, numatune, guest
 * topology, the vGPU hostdevs, our metadata) written from a plan; everything
 * else in a template or an existing definition is kept, and the originals of
 * what is replaced are saved for release (domxml-strip.c) to put back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/tree.h>

#include "domxml-priv.h"
#include "domxml.h"

/*
 * The <domain> children assign may rewrite.  On an existing domain their
 * originals go into our metadata (<vgpuctl:saved>: a copy of each, or
 * <vgpuctl:absent name="..."/>), and release puts them back: assign then
 * release gives back the definition it started from, element for element.
 */
static const char *const kept_elements[] = { "vcpu",	      "vcpus",	   "cputune",
					     "numatune",      "cpu",	   "memory",
					     "currentMemory", "maxMemory", "memoryBacking" };

/* Copies of the kept elements of @dom as they are now (unattached; ns set when attached). */
static xmlNodePtr snapshot(xmlNodePtr dom)
{
	/* of the document: its copies' names come from the document's dictionary */
	xmlNodePtr saved = xmlNewDocNode(dom->doc, NULL, X("saved"), NULL);

	for (size_t i = 0; i < ARRAY_SIZE(kept_elements); i++) {
		xmlNodePtr n = child(dom, kept_elements[i]);

		if (n) {
			xmlAddChild(saved, xmlDocCopyNode(n, dom->doc, 1));
		} else {
			xmlNodePtr a = xmlNewDocNode(dom->doc, NULL, X("absent"), NULL);

			set_attr(a, "name", kept_elements[i]);
			xmlAddChild(saved, a);
		}
	}
	if (!child(dom, "devices")) { /* the hostdevs' home, created for them */
		xmlNodePtr a = xmlNewDocNode(dom->doc, NULL, X("absent"), NULL);

		set_attr(a, "name", "devices");
		xmlAddChild(saved, a);
	}
	return saved;
}

/* Re-running on our own output replaces the vGPUs we added last time. */
static void drop_previous_vgpus(xmlNodePtr dom, xmlNodePtr devices)
{
	xmlNodePtr md = domxml_our_metadata(dom);

	for (xmlNodePtr v = md ? md->children : NULL; v; v = v->next)
		if (v->type == XML_ELEMENT_NODE && xmlStrEqual(v->name, X("vgpu")))
			domxml_drop_hostdevs_of(devices, v);
	domxml_drop_controllers_of(devices, md);
	drop_node(md);
}

/* Set the VF @bdf on <source><address> @addr: add_hostdev() and the migrate retarget. */
static void set_pci_address(xmlNodePtr addr, const char *bdf)
{
	unsigned d = 0, b = 0, s = 0, f = 0;
	char buf[16];

	sscanf(bdf, "%x:%x:%x.%x", &d, &b, &s, &f);
	snprintf(buf, sizeof(buf), "0x%04x", d);
	set_attr(addr, "domain", buf);
	snprintf(buf, sizeof(buf), "0x%02x", b);
	set_attr(addr, "bus", buf);
	snprintf(buf, sizeof(buf), "0x%02x", s);
	set_attr(addr, "slot", buf);
	snprintf(buf, sizeof(buf), "0x%x", f);
	set_attr(addr, "function", buf);
}

static xmlNodePtr add_hostdev(xmlNodePtr devices, const struct vgpu_choice *c,
			      const char *mdev_uuid)
{
	xmlNodePtr hd = xmlNewNode(NULL, X("hostdev")), addr, before = NULL;

	set_attr(hd, "mode", "subsystem");
	if (c->iface == VGPU_IFACE_VENDOR_VFIO) {
		/* NVIDIA: "a vGPU is supported only in unmanaged libvirt mode" */
		set_attr(hd, "type", "pci");
		set_attr(hd, "managed", "no");
		addr = add_el(add_el(hd, "source"), "address");
		set_pci_address(addr, c->parent);
	} else {
		set_attr(hd, "type", "mdev");
		set_attr(hd, "model", "vfio-pci");
		set_attr(hd, "display", "off");
		addr = add_el(add_el(hd, "source"), "address");
		set_attr(addr, "uuid", mdev_uuid);
	}
	/* keep device groups together: after the last existing hostdev, else at the end */
	for (xmlNodePtr n = devices->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, X("hostdev")))
			before = n;
	if (before)
		xmlAddNextSibling(before, hd);
	else
		xmlAddChild(devices, hd);
	return hd;
}

/* ---- a guest that mirrors the host: expander buses per cell -------------- */

/*
 * The memory-less guest cell of vGPU @i of a mirrored @plan: its GPU's memory
 * node (Grace) in the guest, one cell per host node after the CPU cells, in
 * the vGPUs' order; -1 when its GPU has none.
 */
static long acpi_cell_of(const struct vgpu_plan *plan, size_t i)
{
	long id = (long)plan->n_cells;

	if (plan->vgpus[i].mem_node < 0)
		return -1;
	for (size_t j = 0; j < i; j++) {
		bool first = plan->vgpus[j].mem_node >= 0;

		for (size_t k = 0; k < j && first; k++)
			first = plan->vgpus[k].mem_node != plan->vgpus[j].mem_node;
		if (plan->vgpus[j].mem_node == plan->vgpus[i].mem_node)
			return id;
		id += first;
	}
	return id;
}

/* The first bus number of cell @k's expander bus: 16 buses each from 0x80, the root's below. */
#define MIRROR_BUS_NR(k) (0x80u + 0x10u * (unsigned)(k))

/* The next free index of a PCI controller in @devices (one without an index counts too). */
static unsigned next_pci_index(xmlNodePtr devices)
{
	unsigned next = 0, count = 0;

	for (xmlNodePtr n = devices->children; n; n = n->next) {
		VGPU_AUTOFREE char *type = NULL, *index = NULL;
		long i;

		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("controller")))
			continue;
		type = get_attr(n, "type");
		if (!type || strcmp(type, "pci") != 0)
			continue;
		count++;
		index = get_attr(n, "index");
		if (index && vgpu_parse_long(index, &i) == 0 && i >= 0 && (unsigned)i >= next)
			next = (unsigned)i + 1;
	}
	return next > count ? next : count;
}

/* A <controller type='pci'> of @model with @index, after the last controller of @devices. */
static xmlNodePtr add_controller(xmlNodePtr devices, const char *model, unsigned index)
{
	xmlNodePtr c = xmlNewNode(NULL, X("controller")), last = NULL;

	set_attr(c, "type", "pci");
	set_attr_u(c, "index", index);
	set_attr(c, "model", model);
	for (xmlNodePtr n = devices->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, X("controller")))
			last = n;
	return last ? xmlAddNextSibling(last, c) : add_first(devices, c);
}

/* <address type='pci'> on bus (controller index) @bus, slot @slot, as libvirt writes it. */
static void add_guest_address(xmlNodePtr dev, unsigned bus, unsigned slot)
{
	xmlNodePtr a = add_el(dev, "address");
	char buf[16];

	set_attr(a, "type", "pci");
	set_attr(a, "domain", "0x0000");
	snprintf(buf, sizeof(buf), "0x%02x", bus);
	set_attr(a, "bus", buf);
	snprintf(buf, sizeof(buf), "0x%02x", slot);
	set_attr(a, "slot", buf);
	set_attr(a, "function", "0x0");
}

/*
 * Per guest cell a pcie-expander-bus on that cell (<target busNr><node>),
 * a pcie-root-port behind it for each of the cell's vGPUs, and the vGPU's
 * hostdev (@hds, in the plan's order) behind its port: the guest sees each
 * GPU on the NUMA node of its CPUs and memory, as the host has it.  The
 * controllers' indexes go into @ours for release.
 */
static void build_mirror_devices(xmlNodePtr devices, const struct vgpu_plan *plan, xmlNodePtr *hds,
				 struct vgpu_cpuset *ours)
{
	unsigned index = next_pci_index(devices);

	vgpu_cpuset_zero(ours);
	for (size_t k = 0; k < plan->n_cells; k++) {
		unsigned pxb = index++, slot = 0;
		xmlNodePtr c = add_controller(devices, "pcie-expander-bus", pxb), t;
		char buf[32];

		vgpu_cpuset_set(ours, pxb);
		t = add_el(c, "target");
		set_attr_u(t, "busNr", MIRROR_BUS_NR(k));
		snprintf(buf, sizeof(buf), "%zu", k);
		xmlNewTextChild(t, NULL, X("node"), X(buf));
		for (size_t i = 0; i < plan->n_vgpus; i++) {
			unsigned port;

			if (plan->vgpus[i].node != plan->cells[k].node)
				continue;
			port = index++;
			vgpu_cpuset_set(ours, port);
			c = add_controller(devices, "pcie-root-port", port);
			add_guest_address(c, pxb, slot++);
			add_guest_address(hds[i], port, 0);
			if (acpi_cell_of(plan, i) >= 0)
				set_attr_u(add_el(hds[i], "acpi"), "nodeset",
					   (unsigned long long)acpi_cell_of(plan, i));
		}
	}
}

/* ---- the sections we own -------------------------------------------------- */

/*
 * SMBIOS system entries naming a UUID other than @uuid get @uuid: libvirt
 * refuses a definition whose <sysinfo type='smbios'><system><entry
 * name='uuid'> differs from <uuid> ("UUID mismatch between <uuid> and
 * <sysinfo>"), and a template copied from a VM carries that VM's.  An entry
 * that already names @uuid, in any spelling, is left as it is.
 */
static void sync_sysinfo_uuid(xmlNodePtr dom, const char *uuid)
{
	for (xmlNodePtr si = dom->children; si; si = si->next) {
		VGPU_AUTOFREE char *type = NULL;

		if (si->type != XML_ELEMENT_NODE || !xmlStrEqual(si->name, X("sysinfo")))
			continue;
		type = get_attr(si, "type");
		if (!type || strcmp(type, "smbios") != 0)
			continue;
		for (xmlNodePtr e = child(si, "system") ? child(si, "system")->children : NULL; e;
		     e = e->next) {
			VGPU_AUTOFREE char *name = NULL;
			VGPU_AUTOPTR(xmlchar) text = NULL;
			char norm[VGPU_UUID_LEN];

			if (e->type != XML_ELEMENT_NODE || !xmlStrEqual(e->name, X("entry")))
				continue;
			name = get_attr(e, "name");
			if (!name || strcmp(name, "uuid") != 0)
				continue;
			text = xmlNodeGetContent(e);
			if (!text || !vgpu_uuid_normalize((const char *)text, norm) ||
			    strcmp(norm, uuid) != 0)
				set_text(e, uuid);
		}
	}
}

/* <name>, type, <uuid> (the plan's: the vGPU manager needs the VM UUID). */
static int build_identity(struct vgpu_ctx *ctx, xmlNodePtr dom, const struct vgpu_plan *plan,
			  const struct vgpu_domain_opts *o)
{
	VGPU_AUTOFREE char *own = NULL;
	const char *name, *why;

	if (o->name) {
		if ((why = vgpu_domain_name_check(o->name)))
			return vgpu_error(ctx, -EINVAL, "domain name '%s': %s", o->name, why);
		set_text(domain_child(dom, "name"), o->name);
	}
	/* the name the domain has now: the one just set, else the one read */
	if (o->name || !o->read)
		name = own = vgpu_domain_field(dom->doc, "name");
	else
		name = o->read->name;
	if (!name)
		return vgpu_error(ctx, -EINVAL, "the domain has no <name>");
	if ((why = vgpu_domain_name_check(name)))
		return vgpu_error(ctx, -EINVAL, "the domain's <name> '%s': %s", name, why);
	if (!vgpu_uuid_valid(plan->uuid))
		return vgpu_error(ctx, -EINVAL, "the plan has no domain UUID");
	if (o->virt_type)
		set_attr(dom, "type", o->virt_type);
	else if (!xmlHasProp(dom, X("type")))
		set_attr(dom, "type", "kvm");
	set_text(domain_child(dom, "uuid"), plan->uuid);
	sync_sysinfo_uuid(dom, plan->uuid);
	return 0;
}

/*
 * A template kept its <maxMemory> for its memory devices: the memory must
 * fit under it, or libvirt refuses the definition ("maximum memory size
 * must be equal or greater than the actual memory size").
 */
static int check_max_memory(struct vgpu_ctx *ctx, xmlNodePtr dom, uint64_t mem_kib)
{
	xmlNodePtr max = child(dom, "maxMemory");
	VGPU_AUTOPTR(xmlchar) c = max ? xmlNodeGetContent(max) : NULL;
	VGPU_AUTOPTR(xmlchar) u = max ? xmlGetProp(max, X("unit")) : NULL;
	uint64_t max_kib = 0;

	if (!c)
		return vgpu_error(
			ctx, -EINVAL,
			"the template has memory devices but no <maxMemory>, which libvirt needs for them");
	if (vgpu_parse_scaled_kib(vgpu_strip((char *)c), (const char *)u, 1024, false, &max_kib))
		return vgpu_error(ctx, -EINVAL, "the template's <maxMemory> '%s' is not a size",
				  vgpu_strip((char *)c));
	if (max_kib < mem_kib)
		return vgpu_error(ctx, -EINVAL,
				  "the template's <maxMemory> (%" PRIu64
				  " KiB) is less than the memory (%" PRIu64
				  " KiB): raise it, or remove the template's memory devices",
				  max_kib, mem_kib);
	return 0;
}

/* <memory>, <currentMemory> and 1 GiB hugepage backing; *mem_kib gets the size. */
static int build_memory(struct vgpu_ctx *ctx, xmlNodePtr dom, const struct vgpu_plan *plan,
			const struct vgpu_domain_opts *o, uint64_t *mem_kib)
{
	char cells[32];

	char buf[32];
	xmlNodePtr n, mb, hp;
	int r;

	*mem_kib = o->memory_kib;
	if (!*mem_kib && o->read)
		*mem_kib = o->read->memory_kib; /* 0: none, or unusable */
	else if (!*mem_kib && vgpu_domain_memory_kib(ctx, dom->doc, mem_kib) < 0)
		*mem_kib = 0;
	if (!*mem_kib)
		return vgpu_error(ctx, -EINVAL, "the domain has no usable <memory>");
	/*
	 * A template's memory is written in KiB; an existing domain's <memory>,
	 * <currentMemory> and hotplug ceiling stay unless a size is given.
	 */
	if (o->memory_kib || !o->existing || !child(dom, "memory")) {
		snprintf(buf, sizeof(buf), "%" PRIu64, *mem_kib);
		n = domain_child(dom, "memory");
		set_attr(n, "unit", "KiB");
		set_text(n, buf);
		n = domain_child(dom, "currentMemory");
		set_attr(n, "unit", "KiB");
		set_text(n, buf);
	}
	/*
	 * A template's hotplug ceiling was sized for its own memory; it goes,
	 * unless memory devices (dimm, nvdimm, virtio-mem...) stay, which
	 * libvirt refuses without one ("cannot use/hotplug a memory device
	 * when domain 'maxMemory' is not defined").
	 */
	if (!o->existing && !child(child(dom, "devices"), "memory"))
		drop_node(child(dom, "maxMemory"));
	else if (!o->existing && (r = check_max_memory(ctx, dom, *mem_kib)) < 0)
		return r;
	if (!o->hugepages)
		return 0;
	if (*mem_kib % (1024 * 1024))
		return vgpu_error(ctx, -EINVAL,
				  "1 GiB hugepages back the memory: %" PRIu64
				  " KiB is not a whole number of GiB",
				  *mem_kib);
	mb = domain_child(dom, "memoryBacking");
	remove_children(mb, "hugepages");
	hp = add_first(mb, xmlNewNode(NULL, X("hugepages")));
	n = add_el(hp, "page");
	set_attr(n, "size", "1");
	set_attr(n, "unit", "GiB");
	/* the guest's only cell, or every cell of a mirrored guest */
	if (plan->n_cells > 1)
		snprintf(cells, sizeof(cells), "0-%zu", plan->n_cells - 1);
	else
		snprintf(cells, sizeof(cells), "0");
	set_attr(n, "nodeset", cells);
	return 0;
}

/* <vcpu> and <cputune>: one vcpupin per vCPU, the emulator on the VM's CPUs. */
static void build_vcpus(xmlNodePtr dom, const struct vgpu_plan *plan,
			const struct vgpu_domain_opts *o)
{
	VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);
	xmlNodePtr n = domain_child(dom, "vcpu"), cputune, first;
	VGPU_AUTOPTR(xmlchar) old = xmlNodeGetContent(n);
	long was = 0;
	unsigned slots = plan->cores * plan->threads; /* more than vcpus: spare siblings */

	/*
	 * The same count as before: vCPU hotplug (current, <vcpus>) stays as the
	 * admin set it, every vCPU pinned; another count makes them meaningless.
	 */
	if (!old || vgpu_parse_long(vgpu_strip((char *)old), &was) < 0 || was != slots) {
		xmlUnsetProp(n, X("current"));
		drop_node(child(dom, "vcpus"));
	}
	set_attr(n, "placement", "static");
	xmlUnsetProp(n, X("cpuset"));
	if (slots > plan->vcpus)
		set_attr_u(n, "current", plan->vcpus);
	snprintf(list, VGPU_CPULIST_LEN, "%u", slots);
	set_text(n, list);

	cputune = domain_child(dom, "cputune");
	remove_children(cputune, "vcpupin");
	remove_children(cputune, "emulatorpin");
	first = cputune->children;
	for (unsigned i = 0; i < slots; i++) {
		xmlNodePtr p = xmlNewNode(NULL, X("vcpupin"));

		set_attr_u(p, "vcpu", i);
		set_attr_u(p, "cpuset", plan->pins[i]);
		if (first)
			xmlAddPrevSibling(first, p);
		else
			xmlAddChild(cputune, p);
	}
	n = xmlNewNode(NULL, X("emulatorpin"));
	set_attr(n, "cpuset",
		 vgpu_cpulist_format(o->emulator_cpus ? o->emulator_cpus : &plan->cpus, list,
				     VGPU_CPULIST_LEN));
	if (first)
		xmlAddPrevSibling(first, n);
	else
		xmlAddChild(cputune, n);
}

/* Memory strictly on the GPU's node, for the whole VM and its one guest cell. */
/*
 * The pinning gives the guest one NUMA cell (cell 0).  A device bound to a
 * cell above it (a DIMM's or a pxb controller's <target><node>) would leave
 * libvirt a definition it refuses: say which, with no pinning as the way out.
 * Hugepages meant for other cells now back cell 0 (memoryBacking is kept
 * and restored by release), and that is said too.
 */
/*
 * Hugepages per guest cell, when the pinning leaves one cell (0): the page
 * size meant for cell 0 (or for every cell) stays; pages for the other cells
 * go, since two sizes for one cell are refused by libvirt.  With none for
 * cell 0, the first size backs it.  release restores memoryBacking whole.
 */
static void one_page_size(struct vgpu_ctx *ctx, xmlNodePtr hp)
{
	xmlNodePtr keep = NULL, next;

	for (xmlNodePtr pg = hp ? hp->children : NULL; pg && !keep; pg = pg->next) {
		VGPU_AUTOFREE char *set = NULL;
		struct vgpu_cpuset cells;

		if (pg->type != XML_ELEMENT_NODE || !xmlStrEqual(pg->name, X("page")))
			continue;
		set = get_attr(pg, "nodeset");
		if (!set || (vgpu_cpulist_parse(set, &cells) == 0 && vgpu_cpuset_has(&cells, 0)))
			keep = pg;
	}
	for (xmlNodePtr pg = hp ? hp->children : NULL; pg; pg = next) {
		VGPU_AUTOFREE char *set = NULL;

		next = pg->next;
		if (pg->type != XML_ELEMENT_NODE || !xmlStrEqual(pg->name, X("page")))
			continue;
		set = get_attr(pg, "nodeset");
		if (!keep)
			keep = pg;
		if (pg != keep) {
			vgpu_log(
				ctx, LOG_NOTICE,
				"hugepages for guest NUMA cells %s are left out: the pinning leaves the guest one cell (release restores them)",
				set ? set : "");
			drop_node(pg);
		} else if (set && strcmp(set, "0") != 0) {
			vgpu_log(
				ctx, LOG_NOTICE,
				"hugepages for guest NUMA cells %s now back cell 0: the pinning leaves the guest one cell (release restores them)",
				set);
			set_attr(pg, "nodeset", "0");
		}
	}
}

static int check_cells(struct vgpu_ctx *ctx, xmlNodePtr dom, const struct vgpu_plan *plan)
{
	xmlNodePtr hp = child(child(dom, "memoryBacking"), "hugepages");
	long n_cells = plan->n_cells ? (long)plan->n_cells : 1;

	for (xmlNodePtr d = child(dom, "devices") ? child(dom, "devices")->children : NULL; d;
	     d = d->next) {
		xmlNodePtr node = child(child(d, "target"), "node");
		VGPU_AUTOPTR(xmlchar) text = node ? xmlNodeGetContent(node) : NULL;
		long cell;

		if (text && vgpu_parse_long(vgpu_strip((char *)text), &cell) == 0 &&
		    cell >= n_cells && plan->n_cells)
			return vgpu_error(
				ctx, -EINVAL,
				"the domain's <%s> is on guest NUMA cell %ld, and the mirrored layout gives the guest %ld cells: move it to one of them",
				(const char *)d->name, cell, n_cells);
		if (text && vgpu_parse_long(vgpu_strip((char *)text), &cell) == 0 && cell > 0 &&
		    !plan->n_cells) {
			/* pinning nothing is the other way out: the caller names its option */
			vgpu_ctx_hint(ctx, VGPU_HINT_NO_PIN);
			return vgpu_error(
				ctx, -EINVAL,
				"the domain's <%s> is on guest NUMA cell %ld, and the pinning leaves the guest one cell (0): move it to cell 0",
				(const char *)d->name, cell);
		}
	}
	if (!plan->n_cells)
		one_page_size(ctx, hp);
	return 0;
}

static void build_numatune(xmlNodePtr dom, const struct vgpu_plan *plan)
{
	xmlNodePtr numatune = domain_child(dom, "numatune"), n;

	remove_children(numatune, NULL);
	if (plan->n_cells) {
		/* a mirrored guest: each cell's memory strictly on its own host node */
		VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);
		struct vgpu_cpuset nodes;

		vgpu_cpuset_zero(&nodes);
		for (size_t k = 0; k < plan->n_cells; k++)
			vgpu_cpuset_set(&nodes, (unsigned)plan->cells[k].node);
		n = add_el(numatune, "memory");
		set_attr(n, "mode", "strict");
		set_attr(n, "nodeset", vgpu_cpulist_format(&nodes, list, VGPU_CPULIST_LEN));
		for (size_t k = 0; k < plan->n_cells; k++) {
			n = add_el(numatune, "memnode");
			set_attr_u(n, "cellid", k);
			set_attr(n, "mode", "strict");
			set_attr_u(n, "nodeset", (unsigned)plan->cells[k].node);
		}
		return;
	}
	n = add_el(numatune, "memory");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);
	n = add_el(numatune, "memnode");
	set_attr(n, "cellid", "0");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);
}

/*
 * A mirrored guest's topology and cells (@topo is the new <topology>): one
 * socket per cell when the cells are alike (a host node is a socket, most
 * often), each cell its vCPU slots and its share of the memory.
 */
static void build_cells(xmlNodePtr topo, const struct vgpu_plan *plan, uint64_t mem_kib,
			const struct vgpu_domain_opts *o, const char *access, bool discard)
{
	xmlNodePtr numa = add_el(topo->parent, "numa");
	bool alike = true;
	char buf[32];

	for (size_t k = 1; k < plan->n_cells; k++)
		alike &= plan->cells[k].slots == plan->cells[0].slots;
	alike &= plan->cells[0].slots % plan->threads == 0;
	set_attr_u(topo, "sockets", alike ? plan->n_cells : 1);
	set_attr(topo, "dies", "1");
	set_attr_u(topo, "cores", alike ? plan->cores / plan->n_cells : plan->cores);
	set_attr_u(topo, "threads", plan->threads);
	for (size_t k = 0; k < plan->n_cells; k++) {
		const struct vgpu_plan_cell *c = &plan->cells[k];
		xmlNodePtr n = add_el(numa, "cell");

		set_attr_u(n, "id", k);
		if (c->slots == 1)
			snprintf(buf, sizeof(buf), "%u", c->first);
		else
			snprintf(buf, sizeof(buf), "%u-%u", c->first, c->first + c->slots - 1);
		set_attr(n, "cpus", buf);
		set_attr_u(n, "memory",
			   vgpu_plan_cell_memory(plan, k, mem_kib,
						 o->hugepages ? 1024 * 1024 : 1024));
		set_attr(n, "unit", "KiB");
		if (access)
			set_attr(n, "memAccess", access);
		if (discard)
			set_attr(n, "discard", "yes");
	}
	/*
	 * Grace: each GPU memory node becomes a guest cell without CPUs or memory
	 * that the hostdev's <acpi nodeset> names (an ACPI Generic Initiator
	 * there, libvirt >= 11.8), where the guest driver onlines the GPU's memory.
	 */
	for (size_t i = 0, next = plan->n_cells; i < plan->n_vgpus; i++) {
		xmlNodePtr n;

		if (acpi_cell_of(plan, i) != (long)next)
			continue;
		n = add_el(numa, "cell");
		set_attr_u(n, "id", next++);
		set_attr(n, "memory", "0");
		set_attr(n, "unit", "KiB");
	}
}

/*
 * <cpu>: the guest topology follows the pinning (threads per core) with one
 * NUMA cell.  A CPU model the admin chose is kept; a domain without one gets
 * host-passthrough under KVM, and 'maximum' under TCG (type 'qemu', which
 * refuses host-passthrough).
 */
static void build_cpu(xmlNodePtr dom, const struct vgpu_plan *plan, uint64_t mem_kib,
		      const struct vgpu_domain_opts *o)
{
	xmlNodePtr cpu = domain_child(dom, "cpu"), n;
	VGPU_AUTOFREE char *type = get_attr(dom, "type");
	VGPU_AUTOFREE char *mode = get_attr(cpu, "mode");
	bool tcg = type && strcmp(type, "qemu") == 0;
	char buf[32];

	/* a template's CPU is the host's; an existing domain keeps the model its admin chose */
	bool keep = o->existing &&
		    (child(cpu, "model") || (mode && strcmp(mode, "host-passthrough")));

	if (tcg) {
		/* TCG cannot pass the host CPU through: its largest CPU model instead */
		if (!child(cpu, "model") && (!mode || strcmp(mode, "host-passthrough") == 0)) {
			set_attr(cpu, "mode", "maximum");
			set_attr(cpu, "check", "none");
		}
	} else if (!keep) {
		set_attr(cpu, "mode", "host-passthrough");
		set_attr(cpu, "check", "none");
		xmlUnsetProp(cpu, X("match")); /* host-passthrough takes no model match */
		remove_children(cpu, "model");
		remove_children(cpu, "vendor");
	}
	/*
	 * The guest cells become one: what they said about their memory stays
	 * (shared if any cell was, for vhost-user; discard if any cell had it).
	 */
	VGPU_AUTOFREE char *access = NULL;
	bool discard = false;

	for (xmlNodePtr c = child(child(cpu, "numa"), "cell"); c; c = c->next) {
		VGPU_AUTOFREE char *a = NULL, *d = NULL;

		if (c->type != XML_ELEMENT_NODE || !xmlStrEqual(c->name, X("cell")))
			continue;
		a = get_attr(c, "memAccess");
		d = get_attr(c, "discard");
		if (a && (!access || strcmp(a, "shared") == 0)) {
			free(access);
			access = vgpu_steal_ptr(&a);
		}
		discard |= d && strcmp(d, "yes") == 0;
	}
	remove_children(cpu, "topology");
	remove_children(cpu, "numa");
	n = add_first(cpu, xmlNewNode(NULL, X("topology")));
	/* <topology> goes after <model> and <vendor> when the admin has them */
	for (xmlNodePtr c = cpu->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    (xmlStrEqual(c->name, X("model")) || xmlStrEqual(c->name, X("vendor")))) {
			xmlUnlinkNode(n);
			xmlAddNextSibling(c, n);
			c = n;
		}
	if (plan->n_cells) {
		build_cells(n, plan, mem_kib, o, access, discard);
		return;
	}
	set_attr(n, "sockets", "1");
	set_attr(n, "dies", "1");
	set_attr_u(n, "cores", plan->cores);
	set_attr_u(n, "threads", plan->threads);
	n = add_el(add_el(cpu, "numa"), "cell");
	set_attr(n, "id", "0");
	snprintf(buf, sizeof(buf), "0-%u", plan->cores * plan->threads - 1);
	set_attr(n, "cpus", plan->cores * plan->threads == 1 ? "0" : buf);
	set_attr_u(n, "memory", mem_kib);
	set_attr(n, "unit", "KiB");
	if (access)
		set_attr(n, "memAccess", access);
	if (discard)
		set_attr(n, "discard", "yes");
}

/*
 * A hostdev we did not add (no metadata of ours names it) for the same mdev
 * or VF would make two devices of one: refuse rather than guess which wins.
 */
static int check_no_foreign_hostdev(struct vgpu_ctx *ctx, xmlNodePtr devices,
				    const struct vgpu_plan *plan)
{
	for (xmlNodePtr hd = devices->children; hd; hd = hd->next) {
		if (hd->type != XML_ELEMENT_NODE || !xmlStrEqual(hd->name, X("hostdev")))
			continue;
		for (size_t i = 0; i < plan->n_vgpus; i++) {
			const struct vgpu_choice *c = &plan->vgpus[i];

			if (domxml_hostdev_matches(hd, c->mdev_uuid,
						   c->iface == VGPU_IFACE_VENDOR_VFIO ? c->parent :
											NULL))
				return vgpu_error(
					ctx, -EEXIST,
					"the domain already has a hostdev for %s %s that vgpuctl did not add; remove it first",
					c->mdev_uuid[0] ? "mdev" : "VF",
					c->mdev_uuid[0] ? c->mdev_uuid : c->parent);
		}
	}
	return 0;
}

/* One element in our namespace carries what the hook needs without libvirt. */
static void build_metadata(xmlNodePtr dom, const struct vgpu_plan *plan,
			   const struct vgpu_domain_opts *o, xmlNodePtr saved, xmlNodePtr params,
			   const struct vgpu_cpuset *controllers)
{
	xmlNodePtr md = domain_child(dom, "metadata");
	xmlNodePtr root = xmlNewNode(NULL, X("vgpus"));
	xmlNsPtr ns = xmlNewNs(root, X(VGPU_XML_NS), X(VGPU_XML_NS_PREFIX));

	xmlSetNs(root, ns);
	xmlAddChild(md, root);
	set_attr(root, "owner", plan->uuid);
	set_attr_u(root, "node", (unsigned)plan->node);
	if (o->no_pin)
		set_attr(root, "pinned", "no");
	if (o->per_start)
		set_attr(root, "lifetime", "per-start");
	if (plan->n_cells) {
		VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);

		set_attr(root, "guest-topology", "mirror");
		set_attr(root, "controllers",
			 vgpu_cpulist_format(controllers, list, VGPU_CPULIST_LEN));
	}
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_choice *c = &plan->vgpus[i];
		xmlNodePtr n = xmlNewChild(root, ns, X("vgpu"), NULL);

		set_attr(n, "profile", c->profile);
		set_attr_u(n, "type-id", c->type_id);
		set_attr(n, "interface", vgpu_iface_str(c->iface));
		set_attr(n, "backing", vgpu_backing_str(c->backing));
		if (c->gi_profile)
			set_attr(n, "gi-profile", c->gi_profile);
		set_attr(n, "gpu", c->gpu);
		set_attr(n, "vf", c->parent);
		if (c->mdev_uuid[0])
			set_attr(n, "mdev-uuid", c->mdev_uuid);
	}
	if (params) { /* the vgpu_params set stays with the domain, whatever its vGPUs */
		xmlSetNs(params, ns);
		for (xmlNodePtr n = params->children; n; n = n->next)
			if (n->type == XML_ELEMENT_NODE)
				xmlSetNs(n, ns);
		xmlAddChild(root, params);
	}
	if (saved) {
		xmlSetNs(saved, ns);
		for (xmlNodePtr n = saved->children; n; n = n->next)
			if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, X("absent")))
				xmlSetNs(n, ns);
		xmlAddChild(root, saved);
	}
}

/* An expander bus needs PCI Express: the q35 machine (x86) or virt (aarch64). */
static int check_mirror_machine(struct vgpu_ctx *ctx, xmlNodePtr dom)
{
	VGPU_AUTOFREE char *machine = get_attr(child(child(dom, "os"), "type"), "machine");

	if (!machine || (!strstr(machine, "q35") && strncmp(machine, "virt", 4) != 0))
		return vgpu_error(
			ctx, -ENOTSUP,
			"the guest's machine type '%s' has no PCI Express root for expander buses: a guest that mirrors the host needs q35 (or virt on aarch64)",
			machine ? machine : "");
	return 0;
}

int vgpu_domain_build(struct vgpu_ctx *ctx, xmlDocPtr doc, const struct vgpu_plan *plan,
		      const struct vgpu_domain_opts *o)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc), devices, saved, params;
	xmlNodePtr hds[VGPU_MAX_VGPUS] = { NULL };
	struct vgpu_cpuset controllers;
	uint64_t mem_kib = 0;
	int r;

	domxml_quiet();
	for (size_t i = 0; i < plan->n_vgpus; i++)
		if ((plan->vgpus[i].iface == VGPU_IFACE_MDEV) !=
		    vgpu_uuid_valid(plan->vgpus[i].mdev_uuid))
			return vgpu_error(ctx, -EINVAL, "the plan has no mdev UUID for vGPU %zu",
					  i + 1);
	r = vgpu_domain_check_guest(ctx, doc, NULL); /* the host's: by the caller */
	if (r < 0)
		return r;
	if (plan->n_cells && o->no_pin)
		return vgpu_error(ctx, -EINVAL,
				  "a guest that mirrors the host's NUMA nodes is pinned to them");
	if (plan->n_cells && (r = check_mirror_machine(ctx, dom)) < 0)
		return r;
	/* our expander buses of an earlier build go first: their cells are ours to lay out */
	domxml_drop_controllers_of(child(dom, "devices"), domxml_our_metadata(dom));
	/* the originals: kept from our earlier build, or taken now from an existing domain */
	saved = domxml_saved_of(domxml_our_metadata(dom));
	if (saved)
		xmlUnlinkNode(saved);
	else if (o->existing && !domxml_our_metadata(dom))
		saved = snapshot(dom); /* our own output has nothing of the admin's to keep */
	r = build_identity(ctx, dom, plan, o);
	/* no pinning touches no memory or CPU element unless it is asked to */
	if (r == 0 && (!o->no_pin || o->memory_kib || o->hugepages))
		r = build_memory(ctx, dom, plan, o, &mem_kib);
	if (r < 0) {
		xmlFreeNode(saved);
		return r;
	}
	if (!o->no_pin && (r = check_cells(ctx, dom, plan)) < 0) {
		xmlFreeNode(saved);
		return r;
	}
	if (!o->no_pin) {
		build_vcpus(dom, plan, o);
		build_numatune(dom, plan);
		build_cpu(dom, plan, mem_kib, o);
	}
	devices = domain_child(dom, "devices");
	params = domxml_params_of(domxml_our_metadata(dom));
	if (params)
		xmlUnlinkNode(params);
	drop_previous_vgpus(dom, devices);
	r = check_no_foreign_hostdev(ctx, devices, plan);
	if (r < 0) {
		xmlFreeNode(saved);
		xmlFreeNode(params);
		return r;
	}
	for (size_t i = 0; i < plan->n_vgpus; i++)
		hds[i] = add_hostdev(devices, &plan->vgpus[i], plan->vgpus[i].mdev_uuid);
	if (plan->n_cells)
		build_mirror_devices(devices, plan, hds, &controllers);
	build_metadata(dom, plan, o, saved, params, &controllers);
	return 0;
}

int vgpu_domain_set_params(struct vgpu_ctx *ctx, xmlDocPtr doc, const struct vgpu_params *set)
{
	xmlNodePtr md = domxml_our_metadata(xmlDocGetRootElement(doc)), old, ps;

	if (!md)
		return vgpu_error(
			ctx, -ENOENT,
			"the domain has no vGPUs of vgpuctl (no <%s:vgpus> in its metadata)",
			VGPU_XML_NS_PREFIX);
	old = domxml_params_of(md);
	ps = xmlNewDocNode(md->doc, md->ns, X("params"), NULL);
	for (size_t i = 0; i < set->n; i++) {
		xmlNodePtr p = xmlNewChild(ps, md->ns, X("param"), NULL);

		set_attr(p, "name", set->v[i].key);
		set_attr(p, "value", set->v[i].value);
	}
	if (old) {
		xmlReplaceNode(old, ps);
		xmlFreeNode(old);
	} else {
		/* before <vgpuctl:saved>, after the vGPUs: the order assign writes */
		xmlNodePtr saved = domxml_saved_of(md);

		if (saved)
			xmlAddPrevSibling(saved, ps);
		else
			xmlAddChild(md, ps);
	}
	return 0;
}

/* ---- a migration: the same vGPUs on other host devices ---------------------------------- */

/* The vgpu element of our metadata @md naming the mdev @mdev_uuid or the VF @vf. */
static xmlNodePtr meta_vgpu_of(xmlNodePtr md, const struct vgpu_meta_vgpu *v)
{
	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next) {
		VGPU_AUTOFREE char *u = NULL, *vf = NULL;

		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("vgpu")))
			continue;
		u = get_attr(n, "mdev-uuid");
		vf = get_attr(n, "vf");
		if (v->mdev_uuid[0] ? u && strcasecmp(u, v->mdev_uuid) == 0 :
				      vf && strcmp(vf, v->vf) == 0)
			return n;
	}
	return NULL;
}

/* Is attribute @name of @n "on"? */
static bool attr_on(xmlNodePtr n, const char *name)
{
	VGPU_AUTOFREE char *v = get_attr(n, name);

	return v && strcmp(v, "on") == 0;
}

/* The hostdev of @devices that our metadata's vGPU @v names, or NULL. */
static xmlNodePtr hostdev_of(xmlNodePtr devices, const struct vgpu_meta_vgpu *v)
{
	bool mdev = v->iface == VGPU_IFACE_MDEV;

	for (xmlNodePtr hd = devices ? devices->children : NULL; hd; hd = hd->next)
		if (hd->type == XML_ELEMENT_NODE && xmlStrEqual(hd->name, X("hostdev")) &&
		    domxml_hostdev_matches(hd, mdev ? v->mdev_uuid : NULL, mdev ? NULL : v->vf))
			return hd;
	return NULL;
}

bool vgpu_domain_hostdev_display(xmlDocPtr doc, const struct vgpu_meta_vgpu *v)
{
	xmlNodePtr hd = hostdev_of(child(xmlDocGetRootElement(doc), "devices"), v);

	return hd && (attr_on(hd, "display") || attr_on(hd, "ramfb"));
}

/* Set attribute @name of @n to @value; true when that changed it. */
static bool update_attr(xmlNodePtr n, const char *name, const char *value)
{
	VGPU_AUTOFREE char *was = get_attr(n, name);

	if (was && strcmp(was, value) == 0)
		return false;
	set_attr(n, name, value);
	return true;
}

/*
 * The hostdev @hd becomes the other interface's form (add_hostdev()'s):
 * an mdev <hostdev type='mdev' model='vfio-pci'> with <source><address
 * uuid=...>, or a VF <hostdev type='pci' managed='no'> with its address.
 * Its other children (the guest's <address>, <alias>, <rom>, <boot>) stay.
 */
static void change_form(xmlNodePtr hd, const struct vgpu_choice *c)
{
	xmlNodePtr src = child(hd, "source"), addr;

	set_attr(hd, "type", c->iface == VGPU_IFACE_MDEV ? "mdev" : "pci");
	remove_children(src, NULL); /* a PCI source may carry more than the address */
	addr = add_el(src, "address");
	if (c->iface == VGPU_IFACE_MDEV) {
		xmlUnsetProp(hd, X("managed"));
		set_attr(hd, "model", "vfio-pci");
		set_attr(hd, "display", "off");
		set_attr(addr, "uuid", c->mdev_uuid);
		drop_node(child(hd, "driver")); /* a PCI hostdev's only */
	} else {
		xmlUnsetProp(hd, X("model"));
		xmlUnsetProp(hd, X("display"));
		xmlUnsetProp(hd, X("ramfb"));
		xmlUnsetProp(hd, X("managed"));
		/* NVIDIA: "a vGPU is supported only in unmanaged libvirt mode" */
		set_attr(hd, "managed", "no");
		set_pci_address(addr, c->parent);
	}
}

/* vCPU @vcpu's host CPU there: @o's pins, else the @vcpu-th CPU of @o->cpus; -1: none. */
static long pin_of(const struct vgpu_retarget_opts *o, unsigned long vcpu)
{
	int cpu = -1;

	if (o->pins)
		return vcpu < o->n_pins ? (long)o->pins[vcpu] : -1;
	for (unsigned long k = 0; o->cpus; k++) {
		cpu = vgpu_cpuset_next(o->cpus, cpu < 0 ? 0 : (unsigned)cpu + 1);
		if (cpu < 0 || k == vcpu)
			break;
	}
	return cpu;
}

/* Every vcpupin of @cputune has a CPU there (checked before any edit)? */
static int check_pins(struct vgpu_ctx *ctx, xmlNodePtr cputune, const struct vgpu_retarget_opts *o)
{
	for (xmlNodePtr p = cputune ? cputune->children : NULL; p; p = p->next) {
		VGPU_AUTOFREE char *vcpu = NULL;
		long i;

		if (p->type != XML_ELEMENT_NODE || !xmlStrEqual(p->name, X("vcpupin")))
			continue;
		vcpu = get_attr(p, "vcpu");
		if (!vcpu || vgpu_parse_long(vcpu, &i) < 0 || i < 0)
			return vgpu_error(ctx, -EINVAL, "a <vcpupin> has no usable 'vcpu': '%s'",
					  vcpu ? vcpu : "");
		if (pin_of(o, (unsigned long)i) < 0)
			return vgpu_error(ctx, -EINVAL, "vCPU %ld has no host CPU on NUMA node %d",
					  i, o->node);
	}
	return 0;
}

/*
 * Re-pin as vgpu_domain_build() pins, to the target's node: each vcpupin
 * on its vCPU's CPU, the emulator on the domain's CPUs, the memory (and
 * each guest cell's) strictly on the node.  Only the host-side nodesets and
 * cpusets change: <vcpu>, the guest topology and cells stay.  How many
 * attributes changed.
 */
static int repin(xmlNodePtr dom, const struct vgpu_retarget_opts *o)
{
	VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);
	xmlNodePtr cputune = child(dom, "cputune"), numatune = child(dom, "numatune");
	xmlNodePtr md = domxml_our_metadata(dom);
	char buf[32];
	int changed = 0;

	for (xmlNodePtr p = cputune ? cputune->children : NULL; p; p = p->next) {
		VGPU_AUTOFREE char *vcpu = NULL;
		long i;

		if (p->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrEqual(p->name, X("emulatorpin")) && o->cpus) {
			changed += update_attr(
				p, "cpuset", vgpu_cpulist_format(o->cpus, list, VGPU_CPULIST_LEN));
			continue;
		}
		if (!xmlStrEqual(p->name, X("vcpupin")))
			continue;
		vcpu = get_attr(p, "vcpu");
		if (!vcpu || vgpu_parse_long(vcpu, &i) < 0 || i < 0)
			continue; /* check_pins() refused it */
		snprintf(buf, sizeof(buf), "%ld", pin_of(o, (unsigned long)i));
		changed += update_attr(p, "cpuset", buf);
	}
	snprintf(buf, sizeof(buf), "%d", o->node);
	for (xmlNodePtr n = numatune ? numatune->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE &&
		    (xmlStrEqual(n->name, X("memory")) || xmlStrEqual(n->name, X("memnode"))) &&
		    xmlHasProp(n, X("nodeset")))
			changed += update_attr(n, "nodeset", buf);
	if (md)
		changed += update_attr(md, "node", buf);
	return changed;
}

int vgpu_domain_retarget(struct vgpu_ctx *ctx, xmlDocPtr doc, const struct vgpu_meta *from,
			 const struct vgpu_choice *to, size_t n, const struct vgpu_retarget_opts *o)
{
	static const struct vgpu_retarget_opts none = { .node = -1 };
	xmlNodePtr dom = xmlDocGetRootElement(doc);
	xmlNodePtr devices = child(dom, "devices");
	xmlNodePtr md = domxml_our_metadata(dom);
	xmlNodePtr hds[VGPU_MAX_VGPUS] = { NULL };
	bool repinning;
	int changed = 0;

	o = o ? o : &none;
	repinning = from->pinned && o->node >= 0;
	if (n != from->n_vgpus || n > VGPU_MAX_VGPUS)
		return vgpu_error(ctx, -EINVAL, "%zu devices for %zu vGPUs", n, from->n_vgpus);
	for (size_t i = 0; i < n; i++) { /* before any edit */
		const struct vgpu_meta_vgpu *v = &from->vgpus[i];

		/* none: the domain names the vGPU in our metadata only, which follows */
		hds[i] = hostdev_of(devices, v);
		if (to[i].iface == v->iface)
			continue;
		if (!o->iface_change)
			return vgpu_error(ctx, -EINVAL, "vGPU %zu (%s) would change its interface",
					  i + 1, v->profile);
		if (hds[i] && (attr_on(hds[i], "display") || attr_on(hds[i], "ramfb")))
			return vgpu_error(
				ctx, -ENOTSUP,
				"vGPU %zu (%s): its mdev hostdev has a display or ramfb, which a VF hostdev cannot have",
				i + 1, v->profile);
	}
	if (repinning && check_pins(ctx, child(dom, "cputune"), o) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_meta_vgpu *v = &from->vgpus[i];
		const struct vgpu_choice *c = &to[i];
		bool mdev = c->iface == VGPU_IFACE_MDEV;
		xmlNodePtr addr = child(child(hds[i], "source"), "address"), mv;

		if (c->iface == v->iface && strcmp(v->gpu, c->gpu) == 0 &&
		    strcmp(v->vf, c->parent) == 0 && strcmp(v->mdev_uuid, c->mdev_uuid) == 0)
			continue; /* the same device: nothing to say */
		mv = meta_vgpu_of(md, v); /* found by the source's device: before the edit */
		if (!hds[i])
			; /* in our metadata only */
		else if (c->iface != v->iface)
			change_form(hds[i], c);
		else if (mdev && strcmp(v->mdev_uuid, c->mdev_uuid) != 0)
			set_attr(addr, "uuid", c->mdev_uuid);
		else if (!mdev && addr)
			set_pci_address(addr, c->parent);
		if (mv) {
			set_attr(mv, "interface", vgpu_iface_str(c->iface));
			if (c->type_id)
				set_attr_u(mv, "type-id", c->type_id);
			set_attr(mv, "gpu", c->gpu);
			set_attr(mv, "vf", c->parent);
			if (mdev)
				set_attr(mv, "mdev-uuid", c->mdev_uuid);
			else
				xmlUnsetProp(mv, X("mdev-uuid"));
		}
		changed++;
	}
	if (repinning && md && xmlHasProp(md, X("guest-topology")))
		vgpu_log(
			ctx, LOG_NOTICE,
			"the guest mirrored its host's NUMA nodes; here its cells and expander buses stay, all on node %d",
			o->node);
	if (repinning && repin(dom, o) > 0)
		changed++;
	return changed;
}
