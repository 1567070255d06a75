// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libvirt domain XML builder/editor on libxml2's tree API (no string
 * concatenation, no I/O).  Everything not ours in a template or an existing
 * definition is kept; what we own (vCPU pinning, numatune, guest topology,
 * the vGPU hostdevs, our metadata element) is replaced.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>

#include "cleanup.h"
#include "vgpu-priv.h"

#define MAX_XML_SIZE (4u << 20)
#define X(s) ((const xmlChar *)(s))

/* Canonical order of <domain> children, as libvirt writes them. */
static const char *const domain_order[] = {
	"name",	     "uuid",	"genid",	 "title",	    "description", "metadata",
	"maxMemory", "memory",	"currentMemory", "blkiotune",	    "memtune",	   "memoryBacking",
	"vcpu",	     "vcpus",	"iothreads",	 "iothreadids",	    "cputune",	   "numatune",
	"resource",  "sysinfo", "bootloader",	 "bootloader_args", "os",	   "idmap",
	"features",  "cpu",	"clock",	 "on_poweroff",	    "on_reboot",   "on_crash",
	"pm",	     "perf",	"devices",	 "seclabel",	    "keywrap",	   "launchSecurity",
	NULL,
};

static int order_of(const xmlChar *name)
{
	for (int i = 0; domain_order[i]; i++)
		if (xmlStrEqual(name, X(domain_order[i])))
			return i;
	return 1000; /* unknown elements stay where they are, sorting last */
}

static xmlNodePtr child(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, X(name)) && !n->ns)
			return n;
	return NULL;
}

/* The <domain> child @name, created at its canonical position if missing. */
static xmlNodePtr domain_child(xmlNodePtr dom, const char *name)
{
	xmlNodePtr n = child(dom, name);
	int want = order_of(X(name));

	if (n)
		return n;
	n = xmlNewNode(NULL, X(name));
	for (xmlNodePtr c = dom->children; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && order_of(c->name) > want &&
		    order_of(c->name) < 1000)
			return xmlAddPrevSibling(c, n);
	}
	return xmlAddChild(dom, n);
}

static void remove_children(xmlNodePtr parent, const char *name)
{
	xmlNodePtr n = parent->children;

	while (n) {
		xmlNodePtr next = n->next;

		if (n->type == XML_ELEMENT_NODE && (!name || xmlStrEqual(n->name, X(name)))) {
			xmlUnlinkNode(n);
			xmlFreeNode(n);
		}
		n = next;
	}
}

static void set_text(xmlNodePtr n, const char *text)
{
	xmlNodeSetContent(n, NULL);
	remove_children(n, NULL);
	xmlNodeAddContent(n, X(text));
}

static xmlNodePtr add_el(xmlNodePtr parent, const char *name)
{
	return xmlNewChild(parent, NULL, X(name), NULL);
}

static void set_attr(xmlNodePtr n, const char *name, const char *value)
{
	xmlSetProp(n, X(name), X(value));
}

static void set_attr_u(xmlNodePtr n, const char *name, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	xmlSetProp(n, X(name), X(buf));
}

int vgpu_uuid_generate(char out[37])
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -errno;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

bool vgpu_uuid_valid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

int vgpu_parse_size_kib(const char *s, uint64_t *out)
{
	char *end;
	double v;
	double mul = 1024; /* default unit: MiB */

	errno = 0;
	/* digits with an optional fraction: strtod alone would take "0x10G" or "1e3M" */
	end = (char *)s + strspn(s, "0123456789");
	if (end == s)
		return -EINVAL;
	if (*end == '.' && !isdigit((unsigned char)end[1]))
		return -EINVAL;
	if (*end == '.')
		end += 1 + strspn(end + 1, "0123456789");
	if (*end && !isalpha((unsigned char)*end))
		return -EINVAL;
	v = strtod(s, NULL);
	if (errno || v <= 0)
		return -EINVAL;
	if (*end) {
		char u = (char)toupper((unsigned char)*end);

		if (u == 'K')
			mul = 1;
		else if (u == 'M')
			mul = 1024;
		else if (u == 'G')
			mul = 1024.0 * 1024;
		else if (u == 'T')
			mul = 1024.0 * 1024 * 1024;
		else
			return -EINVAL;
		end++;
		if (strcmp(end, "") != 0 && strcmp(end, "iB") != 0 && strcmp(end, "B") != 0 &&
		    strcmp(end, "ib") != 0 && strcmp(end, "b") != 0)
			return -EINVAL;
	}
	v *= mul;
	if (v < 1 || v > 1e15 || v != floor(v))
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/*
 * A libvirt scaled integer (formatdomain "Memory Allocation"): b/bytes, then
 * KB, MB, GB, TB, PB, EB in powers of 1000 and k/KiB, M/MiB, ... in powers of
 * 1024; the default unit of <memory> is KiB.
 */
static int libvirt_size_kib(const char *value, const char *unit, uint64_t *out)
{
	static const struct {
		const char *names;
		double factor; /* bytes */
	} units[] = {
		{ " b bytes ", 1 },
		{ " KB ", 1e3 },
		{ " k K KiB ", 1024.0 },
		{ " MB ", 1e6 },
		{ " M MiB ", 1048576.0 },
		{ " GB ", 1e9 },
		{ " G GiB ", 1073741824.0 },
		{ " TB ", 1e12 },
		{ " T TiB ", 1099511627776.0 },
		{ " PB ", 1e15 },
		{ " P PiB ", 1125899906842624.0 },
		{ " EB ", 1e18 },
		{ " E EiB ", 1152921504606846976.0 },
	};
	char key[16];
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*value))
		return -EINVAL;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || *end)
		return -EINVAL;
	snprintf(key, sizeof(key), " %s ", unit && *unit ? unit : "KiB");
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strstr(units[i].names, key)) {
			/* libvirt rounds up to whole KiB */
			double kib = ceil((double)v * units[i].factor / 1024.0);

			if (kib < 1 || kib > 1e15)
				return -ERANGE;
			*out = (uint64_t)kib;
			return 0;
		}
	}
	return -EINVAL;
}

int vgpu_domain_memory_kib(xmlDocPtr doc, uint64_t *out)
{
	xmlNodePtr m = child(xmlDocGetRootElement(doc), "memory");
	xmlChar *c = m ? xmlNodeGetContent(m) : NULL;
	xmlChar *u = m ? xmlGetProp(m, X("unit")) : NULL;
	int r = c ? libvirt_size_kib(vgpu_strip((char *)c), (const char *)u, out) : -ENOENT;

	xmlFree(c);
	xmlFree(u);
	return r;
}

int vgpu_domain_parse(const char *buf, size_t len, const char *what, xmlDocPtr *out, char *err,
		      size_t errlen)
{
	xmlDocPtr doc;
	xmlNodePtr root;

	if (len > MAX_XML_SIZE) {
		snprintf(err, errlen, "'%s' is larger than %u bytes", what, MAX_XML_SIZE);
		return -EFBIG;
	}
	/* untrusted input: no network, no entity expansion, no DTD loading */
	doc = xmlReadMemory(buf, (int)len, what, NULL,
			    XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
				    XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlGetLastError();

		snprintf(err, errlen, "'%s' is not well-formed XML%s%.*s", what,
			 e && e->message ? ": " : "",
			 e && e->message ? (int)strcspn(e->message, "\n") : 0,
			 e && e->message ? e->message : "");
		return -EINVAL;
	}
	root = xmlDocGetRootElement(doc);
	if (!root || !xmlStrEqual(root->name, X("domain")) || doc->intSubset) {
		snprintf(err, errlen, "'%s' is not a libvirt domain definition (<domain> root%s)",
			 what, doc->intSubset ? ", no DTD" : "");
		xmlFreeDoc(doc);
		return -EINVAL;
	}
	*out = doc;
	return 0;
}

int vgpu_domain_format(xmlDocPtr doc, char **out)
{
	xmlBufferPtr buf = xmlBufferCreate();
	xmlSaveCtxtPtr ctx;

	if (!buf)
		return -ENOMEM;
	ctx = xmlSaveToBuffer(buf, "UTF-8", XML_SAVE_FORMAT | XML_SAVE_NO_DECL);
	if (!ctx) {
		xmlBufferFree(buf);
		return -ENOMEM;
	}
	xmlSaveTree(ctx, xmlDocGetRootElement(doc));
	xmlSaveClose(ctx);
	*out = vgpu_asprintf("%s\n", (const char *)xmlBufferContent(buf));
	xmlBufferFree(buf);
	return 0;
}

/* Our metadata element, if the domain has one. */
static xmlNodePtr our_metadata(xmlNodePtr dom)
{
	xmlNodePtr md = child(dom, "metadata");

	if (!md)
		return NULL;
	for (xmlNodePtr n = md->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns &&
		    xmlStrEqual(n->ns->href, X(VGPU_XML_NS)))
			return n;
	return NULL;
}

static bool hostdev_matches(xmlNodePtr hd, const char *mdev_uuid, const char *vf)
{
	xmlNodePtr src = child(hd, "source"), addr = src ? child(src, "address") : NULL;
	VGPU_AUTOFREE char *type = (char *)xmlGetProp(hd, X("type"));
	bool match = false;

	if (!addr || !type)
		return false;
	if (strcmp(type, "mdev") == 0 && mdev_uuid) {
		xmlChar *u = xmlGetProp(addr, X("uuid"));

		match = u && strcasecmp((const char *)u, mdev_uuid) == 0;
		xmlFree(u);
	} else if (strcmp(type, "pci") == 0 && vf) {
		xmlChar *d = xmlGetProp(addr, X("domain")), *b = xmlGetProp(addr, X("bus")),
			*s = xmlGetProp(addr, X("slot")), *f = xmlGetProp(addr, X("function"));
		char bdf[VGPU_BDF_LEN];

		if (d && b && s && f) {
			snprintf(bdf, sizeof(bdf), "%04lx:%02lx:%02lx.%lx",
				 strtoul((char *)d, NULL, 16), strtoul((char *)b, NULL, 16),
				 strtoul((char *)s, NULL, 16), strtoul((char *)f, NULL, 16));
			match = strcmp(bdf, vf) == 0;
		}
		xmlFree(d);
		xmlFree(b);
		xmlFree(s);
		xmlFree(f);
	}
	return match;
}

/*
 * Re-running on our own output replaces the vGPUs we added last time; their
 * mdev UUIDs, in order, go to @prev (a VM keeps its mdev identity).
 */
static void drop_previous_vgpus(xmlNodePtr dom, xmlNodePtr devices, char prev[VGPU_MAX_VGPUS][37],
				size_t *n_prev)
{
	xmlNodePtr md = our_metadata(dom);

	*n_prev = 0;
	if (!md)
		return;
	for (xmlNodePtr v = md->children; v; v = v->next) {
		xmlChar *u, *vf;

		if (v->type != XML_ELEMENT_NODE || !xmlStrEqual(v->name, X("vgpu")))
			continue;
		u = xmlGetProp(v, X("mdev-uuid"));
		vf = xmlGetProp(v, X("vf"));
		if (u && vgpu_uuid_valid((const char *)u) && *n_prev < VGPU_MAX_VGPUS)
			snprintf(prev[(*n_prev)++], 37, "%s", (const char *)u);
		for (xmlNodePtr hd = devices->children, next; hd; hd = next) {
			next = hd->next;
			if (hd->type == XML_ELEMENT_NODE && xmlStrEqual(hd->name, X("hostdev")) &&
			    hostdev_matches(hd, (char *)u, (char *)vf)) {
				xmlUnlinkNode(hd);
				xmlFreeNode(hd);
			}
		}
		xmlFree(u);
		xmlFree(vf);
	}
	xmlUnlinkNode(md);
	xmlFreeNode(md);
}

static void add_hostdev(xmlNodePtr devices, const struct vgpu_vf *vf, const char *mdev_uuid)
{
	xmlNodePtr hd = xmlNewNode(NULL, X("hostdev")), src, addr;
	xmlNodePtr before = NULL;

	set_attr(hd, "mode", "subsystem");
	if (vf->iface == VGPU_IFACE_VENDOR_VFIO) {
		unsigned d, b, s, f;

		/* NVIDIA: "a vGPU is supported only in unmanaged libvirt mode" */
		set_attr(hd, "type", "pci");
		set_attr(hd, "managed", "no");
		src = add_el(hd, "source");
		addr = add_el(src, "address");
		sscanf(vf->addr, "%x:%x:%x.%x", &d, &b, &s, &f);
		char buf[16];

		snprintf(buf, sizeof(buf), "0x%04x", d);
		set_attr(addr, "domain", buf);
		snprintf(buf, sizeof(buf), "0x%02x", b);
		set_attr(addr, "bus", buf);
		snprintf(buf, sizeof(buf), "0x%02x", s);
		set_attr(addr, "slot", buf);
		snprintf(buf, sizeof(buf), "0x%x", f);
		set_attr(addr, "function", buf);
	} else {
		set_attr(hd, "type", "mdev");
		set_attr(hd, "model", "vfio-pci");
		set_attr(hd, "display", "off");
		src = add_el(hd, "source");
		addr = add_el(src, "address");
		set_attr(addr, "uuid", mdev_uuid);
	}
	/* keep device groups together: after the last existing hostdev, else before <video> etc. */
	for (xmlNodePtr c = devices->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, X("hostdev")))
			before = c;
	if (before)
		xmlAddNextSibling(before, hd);
	else
		xmlAddChild(devices, hd);
}

int vgpu_domain_build(xmlDocPtr doc, const struct vgpu_plan *plan, const struct vgpu_domain_opts *o,
		      char *err, size_t errlen)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc);
	xmlNodePtr n, cputune, numatune, cpu, devices, md, mdroot;
	xmlNsPtr ns;
	char uuid[37], buf[4096];
	char mdevs[VGPU_MAX_VGPUS][37], prev[VGPU_MAX_VGPUS][37];
	size_t n_prev;
	uint64_t mem_kib = o->memory_kib;

	if (o->name) {
		set_text(domain_child(dom, "name"), o->name);
	} else if (!child(dom, "name")) {
		snprintf(err, errlen, "the domain has no <name>; give one with --name");
		return -EINVAL;
	}
	if (o->virt_type)
		set_attr(dom, "type", o->virt_type);
	else if (!xmlHasProp(dom, X("type")))
		set_attr(dom, "type", "kvm");

	/* The vGPU manager needs the VM UUID on QEMU's command line: always set one. */
	n = child(dom, "uuid");
	if (o->uuid) {
		snprintf(uuid, sizeof(uuid), "%s", o->uuid);
	} else if (n) {
		xmlChar *c = xmlNodeGetContent(n);

		/* keep an existing identity even when the file pads it with blanks */
		snprintf(uuid, sizeof(uuid), "%s", c ? vgpu_strip((char *)c) : "");
		xmlFree(c);
	} else {
		uuid[0] = '\0';
	}
	if (o->uuid && !vgpu_uuid_valid(uuid)) {
		snprintf(err, errlen, "'%s' is not a UUID", o->uuid);
		return -EINVAL;
	}
	if (n && !o->uuid && *uuid && !vgpu_uuid_valid(uuid)) {
		snprintf(err, errlen, "the domain's <uuid> '%s' is not a UUID", uuid);
		return -EINVAL;
	}
	if (!vgpu_uuid_valid(uuid) && vgpu_uuid_generate(uuid) < 0) {
		snprintf(err, errlen, "cannot generate a UUID: %s", strerror(errno));
		return -EIO;
	}
	set_text(domain_child(dom, "uuid"), uuid);

	if (!mem_kib) {
		if (vgpu_domain_memory_kib(doc, &mem_kib) < 0)
			mem_kib = 0;
		if (!mem_kib) {
			snprintf(err, errlen, "the domain has no usable <memory>; give --memory");
			return -EINVAL;
		}
	}
	n = domain_child(dom, "memory");
	set_attr(n, "unit", "KiB");
	snprintf(buf, sizeof(buf), "%" PRIu64, mem_kib);
	set_text(n, buf);
	n = domain_child(dom, "currentMemory");
	set_attr(n, "unit", "KiB");
	set_text(n, buf);
	n = child(dom, "maxMemory");
	if (n) {
		xmlUnlinkNode(n);
		xmlFreeNode(n);
	}

	if (o->hugepages) {
		xmlNodePtr mb, hp, pg;

		if (mem_kib % (1024 * 1024)) {
			snprintf(err, errlen,
				 "--hugepages backs memory with 1 GiB pages: %" PRIu64
				 " KiB is not a whole number of GiB",
				 mem_kib);
			return -EINVAL;
		}
		mb = domain_child(dom, "memoryBacking");
		remove_children(mb, "hugepages");
		hp = xmlNewNode(NULL, X("hugepages"));
		if (mb->children)
			xmlAddPrevSibling(mb->children, hp);
		else
			xmlAddChild(mb, hp);
		pg = add_el(hp, "page");
		set_attr(pg, "size", "1");
		set_attr(pg, "unit", "GiB");
		set_attr(pg, "nodeset", "0"); /* the guest's only cell */
	}

	n = domain_child(dom, "vcpu");
	set_attr(n, "placement", "static");
	xmlUnsetProp(n, X("cpuset"));
	xmlUnsetProp(n, X("current"));
	snprintf(buf, sizeof(buf), "%u", plan->vcpus);
	set_text(n, buf);
	n = child(dom, "vcpus");
	if (n) {
		xmlUnlinkNode(n);
		xmlFreeNode(n);
	}

	cputune = domain_child(dom, "cputune");
	remove_children(cputune, "vcpupin");
	remove_children(cputune, "emulatorpin");
	{
		xmlNodePtr first = cputune->children;

		for (unsigned i = 0; i < plan->vcpus; i++) {
			xmlNodePtr p = xmlNewNode(NULL, X("vcpupin"));

			set_attr_u(p, "vcpu", i);
			set_attr_u(p, "cpuset", plan->pins[i]);
			if (first)
				xmlAddPrevSibling(first, p);
			else
				xmlAddChild(cputune, p);
		}
		VGPU_AUTOFREE char *list = malloc(VGPU_CPULIST_LEN);

		if (!list) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		n = xmlNewNode(NULL, X("emulatorpin"));
		set_attr(n, "cpuset",
			 vgpu_cpulist_format(o->emulator_cpus ? o->emulator_cpus : &plan->cpus,
					     list, VGPU_CPULIST_LEN));
		if (first)
			xmlAddPrevSibling(first, n);
		else
			xmlAddChild(cputune, n);
	}

	numatune = domain_child(dom, "numatune");
	remove_children(numatune, NULL);
	n = add_el(numatune, "memory");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);
	n = add_el(numatune, "memnode");
	set_attr(n, "cellid", "0");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);

	cpu = domain_child(dom, "cpu");
	set_attr(cpu, "mode", "host-passthrough");
	set_attr(cpu, "check", "none");
	xmlUnsetProp(cpu, X("match")); /* host-passthrough takes no model match */
	remove_children(cpu, "model");
	remove_children(cpu, "vendor");
	remove_children(cpu, "topology");
	remove_children(cpu, "numa");
	n = xmlNewNode(NULL, X("topology"));
	set_attr(n, "sockets", "1");
	set_attr(n, "dies", "1");
	set_attr_u(n, "cores", plan->cores);
	set_attr_u(n, "threads", plan->threads);
	if (cpu->children)
		xmlAddPrevSibling(cpu->children, n);
	else
		xmlAddChild(cpu, n);
	n = add_el(add_el(cpu, "numa"), "cell");
	set_attr(n, "id", "0");
	snprintf(buf, sizeof(buf), "0-%u", plan->vcpus - 1);
	set_attr(n, "cpus", plan->vcpus == 1 ? "0" : buf);
	set_attr_u(n, "memory", mem_kib);
	set_attr(n, "unit", "KiB");

	devices = domain_child(dom, "devices");
	drop_previous_vgpus(dom, devices, prev, &n_prev);
	for (size_t i = 0, k = 0; i < plan->n_vgpus; i++) {
		if (plan->vgpus[i].vf->iface == VGPU_IFACE_MDEV) {
			if (o->mdev_uuids[i])
				snprintf(mdevs[i], sizeof(mdevs[i]), "%s", o->mdev_uuids[i]);
			else if (k < n_prev)
				snprintf(mdevs[i], sizeof(mdevs[i]), "%s", prev[k++]);
			else if (vgpu_uuid_generate(mdevs[i]) < 0) {
				snprintf(err, errlen, "cannot generate a UUID: %s",
					 strerror(errno));
				return -EIO;
			}
		} else {
			mdevs[i][0] = '\0';
		}
		add_hostdev(devices, plan->vgpus[i].vf, mdevs[i]);
	}

	/* One element in our namespace carries what the hook needs without libvirt. */
	md = domain_child(dom, "metadata");
	mdroot = xmlNewNode(NULL, X("vgpus"));
	ns = xmlNewNs(mdroot, X(VGPU_XML_NS), X(VGPU_XML_NS_PREFIX));
	xmlSetNs(mdroot, ns);
	xmlAddChild(md, mdroot);
	set_attr(mdroot, "owner", uuid);
	set_attr_u(mdroot, "node", (unsigned)plan->node);
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_vf *vf = plan->vgpus[i].vf;
		const struct vgpu_type *t = plan->vgpus[i].type;

		n = xmlNewChild(mdroot, ns, X("vgpu"), NULL);
		set_attr(n, "profile", t->info.profile);
		set_attr_u(n, "type-id", t->id);
		set_attr(n, "interface", vgpu_iface_str(vf->iface));
		set_attr(n, "backing", vgpu_backing_str(t->info.backing));
		if (t->info.gi_profile[0])
			set_attr(n, "gi-profile", t->info.gi_profile);
		set_attr(n, "gpu", vf->gpu->addr);
		set_attr(n, "vf", vf->addr);
		if (mdevs[i][0])
			set_attr(n, "mdev-uuid", mdevs[i]);
	}
	return 0;
}
