// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the NCCL topology file of a guest with vGPUs (NCCL_TOPO_FILE), in
 * the format NCCL's own dump writes (src/graph/xml.cc: <system version="1">,
 * <cpu>, <pci>, <gpu>, <nvlink>): the guest's cells and PCI addresses from
 * its domain XML, each GPU's class, IDs and link from the host's sysfs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlsave.h>

#include "cleanup.h"
#include "domxml.h"
#include "model.h"
#include "nccl-topo.h"
#include "nvml.h"
#include "sysfs.h"
#include "util.h"

#define X(s) ((const xmlChar *)(s))
#define MAX_CTRL 256 /* PCI controller indexes the guest can have (a bus number each) */

unsigned vgpu_nccl_sm(uint16_t device)
{
	/* by chip, the device ID's high byte (PCI ID table: TU10x .. GB20x) */
	static const struct {
		uint8_t hi;
		uint8_t sm;
	} chips[] = {
		{ 0x1e, 75 }, { 0x1f, 75 }, { 0x20, 80 },  { 0x22, 86 },
		{ 0x23, 90 }, { 0x24, 86 }, { 0x25, 86 },  { 0x26, 89 },
		{ 0x27, 89 }, { 0x28, 89 }, { 0x29, 100 }, { 0x2b, 120 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(chips); i++)
		if (chips[i].hi == device >> 8)
			return chips[i].sm;
	return 0;
}

/* ---- the guest's side: cells, controllers, bus numbers ------------------ */

static xmlNodePtr el_child(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !n->ns && xmlStrEqual(n->name, X(name)))
			return n;
	return NULL;
}

static char *attr(xmlNodePtr n, const char *name)
{
	return n ? (char *)xmlGetProp(n, X(name)) : NULL;
}

/* A number attribute of @n (decimal or 0x hex, as libvirt writes them); -1 when none. */
static long num_attr(xmlNodePtr n, const char *name)
{
	VGPU_AUTOFREE char *v = attr(n, name);
	char *end = NULL;
	long x;

	if (!v)
		return -1;
	errno = 0;
	x = strtol(v, &end, 0);
	return errno || end == v || *end || x < 0 ? -1 : x;
}

/* One PCI controller of the guest, by index. */
struct ctrl {
	bool present;
	bool expander; /* pcie-expander-bus / pci-expander-bus: its bus number is busNr */
	bool has_bus; /* it gives a bus (every PCI controller does) */
	long parent, slot, function; /* its own address; parent -1: none (a root, or unassigned) */
	long bus_nr; /* an expander's busNr */
	long cell; /* an expander's <target><node>; -1 none */
	int number; /* the guest's bus number, -1 not yet counted */
};

struct guest {
	struct ctrl c[MAX_CTRL];
};

static int read_controllers(struct vgpu_ctx *ctx, xmlNodePtr devices, struct guest *g)
{
	for (xmlNodePtr n = devices ? devices->children : NULL; n; n = n->next) {
		VGPU_AUTOFREE char *type = NULL, *model = NULL;
		xmlNodePtr addr, target;
		long index;
		struct ctrl *c;

		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("controller")))
			continue;
		type = attr(n, "type");
		if (!type || strcmp(type, "pci") != 0)
			continue;
		index = num_attr(n, "index");
		model = attr(n, "model");
		if (index < 0)
			index = 0; /* libvirt's default: the root */
		if (index >= MAX_CTRL)
			return vgpu_error(ctx, -EINVAL, "PCI controller index %ld is out of range",
					  index);
		c = &g->c[index];
		c->present = true;
		c->has_bus = true;
		c->number = -1;
		c->cell = -1;
		c->expander = model && strstr(model, "expander-bus");
		addr = el_child(n, "address");
		c->parent = addr ? num_attr(addr, "bus") : -1;
		c->slot = addr ? num_attr(addr, "slot") : -1;
		c->function = addr ? num_attr(addr, "function") : -1;
		target = el_child(n, "target");
		c->bus_nr = num_attr(target, "busNr");
		if (c->expander && target && el_child(target, "node")) {
			VGPU_AUTOFREE char *t = (char *)xmlNodeGetContent(el_child(target, "node"));
			long cell;

			if (t && vgpu_parse_long(vgpu_strip(t), &cell) == 0 && cell >= 0)
				c->cell = cell;
		}
		if (index == 0 || c->expander)
			c->parent = -1;
	}
	return 0;
}

/*
 * Number the buses below @root from *@next, as the firmware does: the
 * controllers on @root's bus in slot and function order, each taking the
 * next number before those below it.
 */
static void number_below(struct guest *g, int root, int *next)
{
	for (;;) {
		int best = -1;

		for (int i = 0; i < MAX_CTRL; i++) {
			const struct ctrl *c = &g->c[i];

			if (!c->present || c->parent != root || c->number >= 0 || c->expander)
				continue;
			if (best < 0 || c->slot < g->c[best].slot ||
			    (c->slot == g->c[best].slot && c->function < g->c[best].function))
				best = i;
		}
		if (best < 0)
			return;
		g->c[best].number = (*next)++;
		number_below(g, best, next);
	}
}

static void number_buses(struct guest *g)
{
	int next = 1;

	if (g->c[0].present) {
		g->c[0].number = 0;
		number_below(g, 0, &next);
	}
	for (int i = 1; i < MAX_CTRL; i++) {
		if (!g->c[i].present || !g->c[i].expander || g->c[i].bus_nr < 0)
			continue;
		g->c[i].number = (int)g->c[i].bus_nr;
		next = (int)g->c[i].bus_nr + 1;
		number_below(g, i, &next);
	}
}

/* The guest cell of bus @index: the expander it is behind; 0 without one. */
static long cell_of(const struct guest *g, long index)
{
	for (int hops = 0; index >= 0 && index < MAX_CTRL && hops < MAX_CTRL; hops++) {
		if (g->c[index].expander)
			return g->c[index].cell >= 0 ? g->c[index].cell : 0;
		index = g->c[index].parent;
	}
	return 0;
}

/* The hostdev of our metadata's vGPU @v in @devices. */
static xmlNodePtr hostdev_of(xmlNodePtr devices, const struct vgpu_meta_vgpu *v)
{
	for (xmlNodePtr hd = devices ? devices->children : NULL; hd; hd = hd->next) {
		xmlNodePtr a;

		if (hd->type != XML_ELEMENT_NODE || !xmlStrEqual(hd->name, X("hostdev")))
			continue;
		a = el_child(el_child(hd, "source"), "address");
		if (v->mdev_uuid[0]) {
			VGPU_AUTOFREE char *u = attr(a, "uuid");
			char norm[VGPU_UUID_LEN];

			if (u && vgpu_uuid_normalize(u, norm) && strcmp(norm, v->mdev_uuid) == 0)
				return hd;
		} else if (a) {
			char bdf[VGPU_BDF_LEN];

			snprintf(bdf, sizeof(bdf), "%04lx:%02lx:%02lx.%lx",
				 (unsigned long)num_attr(a, "domain"),
				 (unsigned long)num_attr(a, "bus"),
				 (unsigned long)num_attr(a, "slot"),
				 (unsigned long)num_attr(a, "function"));
			if (strcmp(bdf, v->vf) == 0)
				return hd;
		}
	}
	return NULL;
}

/* A guest cell: its id and vCPUs (from <cpu><numa><cell>). */
struct cell {
	long id;
	struct vgpu_cpuset cpus;
};

/* The cells of @dom; none: one cell 0 with every vCPU (<vcpu>, 1 without). */
static size_t read_cells(xmlNodePtr dom, struct cell *cells, size_t max, unsigned *n_vcpus)
{
	xmlNodePtr numa = el_child(el_child(dom, "cpu"), "numa");
	VGPU_AUTOFREE char *vcpu = (char *)xmlNodeGetContent(el_child(dom, "vcpu"));
	long nv = 1;
	size_t n = 0;

	if (vcpu && (vgpu_parse_long(vgpu_strip(vcpu), &nv) < 0 || nv < 1))
		nv = 1;
	*n_vcpus = (unsigned)nv;
	for (xmlNodePtr c = numa ? numa->children : NULL; c && n < max; c = c->next) {
		VGPU_AUTOFREE char *cpus = NULL;

		if (c->type != XML_ELEMENT_NODE || !xmlStrEqual(c->name, X("cell")))
			continue;
		cells[n].id = num_attr(c, "id") >= 0 ? num_attr(c, "id") : (long)n;
		cpus = attr(c, "cpus");
		if (!cpus || vgpu_cpulist_parse(cpus, &cells[n].cpus) < 0)
			vgpu_cpuset_zero(&cells[n].cpus);
		n++;
	}
	if (n == 0) {
		cells[0].id = 0;
		vgpu_cpuset_zero(&cells[0].cpus);
		for (unsigned i = 0; i < *n_vcpus; i++)
			vgpu_cpuset_set(&cells[0].cpus, i);
		n = 1;
	}
	return n;
}

/* NCCL's affinity: the cell's vCPUs as a kernel cpumask ("00000000,0000000f"). */
static void format_affinity(const struct vgpu_cpuset *cpus, unsigned n_vcpus, char *buf, size_t len)
{
	unsigned words = (n_vcpus + 31) / 32;
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned w = words; w-- > 0 && at + 10 < len;) {
		unsigned long word = 0;

		for (unsigned b = 0; b < 32; b++)
			if (vgpu_cpuset_has(cpus, w * 32 + b))
				word |= 1ul << b;
		at += (size_t)snprintf(buf + at, len - at, "%s%08lx", w + 1 < words ? "," : "",
				       word);
	}
}

static void set_hex(xmlNodePtr n, const char *name, unsigned long v, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%0*lx", width, v);
	xmlSetProp(n, X(name), X(buf));
}

static void set_num(xmlNodePtr n, const char *name, long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%ld", v);
	xmlSetProp(n, X(name), X(buf));
}

/* One vGPU as the guest has it. */
struct ggpu {
	size_t meta; /* its index in the metadata (and in the host's facts) */
	char busid[VGPU_BDF_LEN];
	long cell;
};

static int cmp_busid(const void *a, const void *b)
{
	return strcmp(((const struct ggpu *)a)->busid, ((const struct ggpu *)b)->busid);
}

/*
 * Each vGPU of @meta as the guest has it (@gg, sorted by bus ID): its bus ID
 * from its hostdev's guest address and the numbered buses of @g, and its cell.
 */
static int guest_gpus(struct vgpu_ctx *ctx, xmlNodePtr devices, const struct guest *g,
		      const struct vgpu_meta *meta, struct ggpu *gg)
{
	for (size_t i = 0; i < meta->n_vgpus; i++) {
		xmlNodePtr hd = hostdev_of(devices, &meta->vgpus[i]), a;
		long bus, slot, fn;

		if (!hd)
			return vgpu_error(ctx, -ENOENT,
					  "vGPU %zu (%s) has no hostdev in the domain", i + 1,
					  meta->vgpus[i].profile);
		a = el_child(hd, "address");
		bus = num_attr(a, "bus");
		slot = num_attr(a, "slot");
		fn = num_attr(a, "function");
		if (bus < 0 || slot < 0 || slot > 0x1f || fn < 0 || fn > 7 || bus >= MAX_CTRL ||
		    !g->c[bus].present || g->c[bus].number < 0)
			return vgpu_error(
				ctx, -EINVAL,
				"vGPU %zu (%s) has no guest PCI address yet (libvirt assigns them when it defines the domain): read the domain from libvirt",
				i + 1, meta->vgpus[i].profile);
		gg[i].meta = i;
		gg[i].cell = cell_of(g, bus);
		snprintf(gg[i].busid, sizeof(gg[i].busid), "0000:%02x:%02x.%x",
			 (unsigned)g->c[bus].number & 0xffu, (unsigned)slot & 0x1fu,
			 (unsigned)fn & 7u);
	}
	qsort(gg, meta->n_vgpus, sizeof(gg[0]), cmp_busid);
	return 0;
}

/* A cell's <cpu>: its NUMA ID, its vCPUs as NCCL's affinity mask, the host CPU's kind. */
static xmlNodePtr new_cpu(xmlNodePtr sys, const struct cell *c, unsigned n_vcpus, const char *arch,
			  const struct vgpu_nccl_host *h)
{
	xmlNodePtr cpu = xmlNewChild(sys, NULL, X("cpu"), NULL);
	char aff[VGPU_MAX_CPUS / 4 + VGPU_MAX_CPUS / 32 + 1];

	set_num(cpu, "numaid", c->id);
	format_affinity(&c->cpus, n_vcpus, aff, sizeof(aff));
	xmlSetProp(cpu, X("affinity"), X(aff));
	xmlSetProp(cpu, X("arch"), X(arch ? arch : "x86_64"));
	if (h->cpu_vendor)
		xmlSetProp(cpu, X("vendor"), X(h->cpu_vendor));
	if (h->cpu_family >= 0 && h->cpu_model >= 0) {
		set_num(cpu, "familyid", h->cpu_family);
		set_num(cpu, "modelid", h->cpu_model);
	}
	return cpu;
}

/*
 * vGPU @d of @gg (n of them) under @cpu: its <pci> with the host GPU's IDs and
 * link, its <gpu>, and an <nvlink> to each peer and to the NVSwitches it reaches.
 */
static void add_gpu(xmlNodePtr cpu, const struct ggpu *gg, size_t n, size_t d,
		    const struct vgpu_nccl_host *h)
{
	const struct ggpu *x = &gg[d];
	const struct vgpu_nccl_gpu *hg = x->meta < h->n_gpus ? &h->gpus[x->meta] : NULL;
	xmlNodePtr pci = xmlNewChild(cpu, NULL, X("pci"), NULL), gpu;

	xmlSetProp(pci, X("busid"), X(x->busid));
	if (hg) {
		set_hex(pci, "class", hg->class_code ? hg->class_code : 0x030200, 6);
		set_hex(pci, "vendor", hg->vendor, 4);
		set_hex(pci, "device", hg->device, 4);
		if (hg->subsystem_vendor || hg->subsystem_device) {
			set_hex(pci, "subsystem_vendor", hg->subsystem_vendor, 4);
			set_hex(pci, "subsystem_device", hg->subsystem_device, 4);
		}
		xmlSetProp(pci, X("link_speed"), X(hg->link_speed));
		set_num(pci, "link_width", hg->link_width);
	}
	gpu = xmlNewChild(pci, NULL, X("gpu"), NULL);
	set_num(gpu, "dev", (long)d);
	set_num(gpu, "sm", hg ? hg->sm : 0);
	set_num(gpu, "rank", (long)d);
	set_num(gpu, "gdr", hg && hg->gdr);
	for (size_t p = 0; p < n; p++) {
		unsigned count = h->nvlinks[x->meta][gg[p].meta];
		xmlNodePtr l;

		if (p == d || !count)
			continue;
		l = xmlNewChild(gpu, NULL, X("nvlink"), NULL);
		xmlSetProp(l, X("target"), X(gg[p].busid));
		set_num(l, "count", count);
		xmlSetProp(l, X("tclass"), X("0x030200"));
	}
	if (hg && hg->nvswitch_links && h->nvswitch[0]) {
		xmlNodePtr l = xmlNewChild(gpu, NULL, X("nvlink"), NULL);

		xmlSetProp(l, X("target"), X(h->nvswitch));
		set_num(l, "count", hg->nvswitch_links);
		xmlSetProp(l, X("tclass"), X("0x068000"));
	}
}

int vgpu_nccl_topo_format(struct vgpu_ctx *ctx, xmlDocPtr doc, const struct vgpu_nccl_host *h,
			  char **out)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc), devices = el_child(dom, "devices");
	VGPU_AUTOFREE struct guest *g = vgpu_xcalloc(1, sizeof(*g));
	VGPU_AUTOFREE char *arch = attr(el_child(el_child(dom, "os"), "type"), "arch");
	struct cell cells[VGPU_MAX_CPUS / 64];
	struct ggpu gg[VGPU_MAX_VGPUS];
	struct vgpu_meta meta = { 0 };
	xmlDocPtr topo = NULL;
	xmlNodePtr sys;
	xmlBufferPtr buf = NULL;
	xmlSaveCtxtPtr save;
	unsigned n_vcpus = 1;
	size_t n_cells;
	int r;

	if ((r = vgpu_domain_read_meta(ctx, doc, &meta)) < 0)
		return r;
	if ((r = read_controllers(ctx, devices, g)) < 0)
		goto out;
	number_buses(g);
	if ((r = guest_gpus(ctx, devices, g, &meta, gg)) < 0)
		goto out;
	n_cells = read_cells(dom, cells, ARRAY_SIZE(cells), &n_vcpus);

	topo = xmlNewDoc(X("1.0"));
	sys = xmlNewDocNode(topo, NULL, X("system"), NULL);
	xmlDocSetRootElement(topo, sys);
	xmlSetProp(sys, X("version"), X("1"));
	for (size_t k = 0; k < n_cells; k++) {
		xmlNodePtr cpu = NULL;

		for (size_t d = 0; d < meta.n_vgpus; d++) {
			if (gg[d].cell != cells[k].id)
				continue;
			if (!cpu)
				cpu = new_cpu(sys, &cells[k], n_vcpus, arch, h);
			add_gpu(cpu, gg, meta.n_vgpus, d, h);
		}
	}
	buf = xmlBufferCreate();
	save = xmlSaveToBuffer(buf, "UTF-8", XML_SAVE_FORMAT | XML_SAVE_NO_DECL);
	xmlSaveDoc(save, topo);
	xmlSaveClose(save);
	*out = vgpu_xstrdup((const char *)xmlBufferContent(buf));
	r = 0;
out:
	xmlBufferFree(buf);
	xmlFreeDoc(topo);
	vgpu_meta_clear(&meta);
	return r;
}

/* ---- the host's side ------------------------------------------------------ */

/* The CPU's vendor, family and model from proc/cpuinfo's first processor. */
static void read_cpuinfo(struct vgpu_sysdir *root, struct vgpu_nccl_host *h, char *vendor,
			 size_t len)
{
	VGPU_AUTOFREE char *text = NULL;
	char *save = NULL;

	h->cpu_family = h->cpu_model = -1;
	if (vgpu_sysfs_read_file(root, 1u << 20, &text, NULL, "proc/cpuinfo") < 0)
		return;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		long v;

		if (!*line)
			break; /* the first processor's block only */
		if (!colon)
			continue;
		*colon = '\0';
		vgpu_strip(line);
		if (strcmp(line, "vendor_id") == 0 && !h->cpu_vendor) {
			snprintf(vendor, len, "%s", vgpu_strip(colon + 1));
			h->cpu_vendor = vendor;
		} else if (strcmp(line, "cpu family") == 0 &&
			   vgpu_parse_long(vgpu_strip(colon + 1), &v) == 0) {
			h->cpu_family = (int)v;
		} else if (strcmp(line, "model") == 0 &&
			   vgpu_parse_long(vgpu_strip(colon + 1), &v) == 0) {
			h->cpu_model = (int)v;
		}
	}
}

static unsigned long hex_or_zero(struct vgpu_sysdir *root, const char *bdf, const char *name)
{
	unsigned long v = 0;

	if (vgpu_sysfs_read_hex(root, &v, 0xffffff, "sys/bus/pci/devices/%s/%s", bdf, name) < 0)
		return 0;
	return v;
}

/* The host's first NVSwitch (NVIDIA, PCI class 0x0680: bridge, other) into @out; "" none. */
static void find_nvswitch(struct vgpu_sysdir *root, char *out, size_t len)
{
	VGPU_AUTOSTRV devs = { 0 };

	out[0] = '\0';
	if (vgpu_sysfs_list_dir(root, &devs, "sys/bus/pci/devices") < 0)
		return;
	for (size_t i = 0; i < devs.n; i++)
		if (hex_or_zero(root, devs.items[i], "vendor") == VGPU_PCI_VENDOR_NVIDIA &&
		    hex_or_zero(root, devs.items[i], "class") >> 8 == 0x0680) {
			snprintf(out, len, "%s", devs.items[i]);
			return;
		}
}

int vgpu_nccl_topo(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_nvml *nvml,
		   xmlDocPtr doc, char **out)
{
	VGPU_AUTOFREE struct vgpu_nccl_host *h = vgpu_xcalloc(1, sizeof(*h));
	struct vgpu_meta meta = { 0 };
	struct vgpu_sysdir root;
	char vendor[64];
	int r;

	if ((r = vgpu_domain_read_meta(ctx, doc, &meta)) < 0)
		return r;
	vgpu_sysdir_root(fs, &root);
	read_cpuinfo(&root, h, vendor, sizeof(vendor));
	find_nvswitch(&root, h->nvswitch, sizeof(h->nvswitch));
	for (size_t i = 0; i < meta.n_vgpus; i++) {
		struct vgpu_nccl_gpu *gpu = &h->gpus[i];
		const char *bdf = meta.vgpus[i].gpu;
		long width = 0;

		gpu->class_code = (uint32_t)hex_or_zero(&root, bdf, "class");
		gpu->vendor = (uint16_t)hex_or_zero(&root, bdf, "vendor");
		gpu->device = (uint16_t)hex_or_zero(&root, bdf, "device");
		gpu->subsystem_vendor = (uint16_t)hex_or_zero(&root, bdf, "subsystem_vendor");
		gpu->subsystem_device = (uint16_t)hex_or_zero(&root, bdf, "subsystem_device");
		if (vgpu_sysfs_read_str(&root, gpu->link_speed, sizeof(gpu->link_speed),
					"sys/bus/pci/devices/%s/max_link_speed", bdf) < 0)
			gpu->link_speed[0] = '\0';
		if (vgpu_sysfs_read_long(&root, &width, 0, 64,
					 "sys/bus/pci/devices/%s/max_link_width", bdf) == 0)
			gpu->link_width = (unsigned)width;
		gpu->sm = vgpu_nccl_sm(gpu->device);
		if (h->nvswitch[0] && vgpu_nvml_nvlinks(nvml, bdf, &gpu->nvswitch_links) < 0)
			gpu->nvswitch_links = 0;
		/* GPUDirect RDMA: compute (C-series) vGPUs (vGPU user guide, "GPUDirect") */
		gpu->gdr = meta.vgpus[i].profile && strlen(meta.vgpus[i].profile) > 0 &&
			   meta.vgpus[i].profile[strlen(meta.vgpus[i].profile) - 1] == 'C';
		h->n_gpus = i + 1;
	}
	vgpu_meta_clear(&meta);
	return vgpu_nccl_topo_format(ctx, doc, h, out);
}
