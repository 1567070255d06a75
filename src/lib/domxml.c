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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>

#include "domxml.h"

#define X(s) ((const xmlChar *)(s))

void vgpu_xml_doc_free(xmlDocPtr doc)
{
	xmlFreeDoc(doc);
}

VGPU_DEFINE_AUTOPTR(xmlchar, xmlChar, xmlFree)

/* libxml2 prints its own messages unless told not to: we report once, ours. */
static void xml_silent(void *data, xmlErrorPtr e)
{
	(void)data;
	(void)e;
}

static void xml_silent_generic(void *data, const char *msg, ...)
{
	(void)data;
	(void)msg;
}

/*
 * libxml2 allocates through our allocators, which follow the out-of-memory
 * policy (one line on stderr, abort): a failed allocation inside the parser
 * or the serialiser can never yield a truncated tree that is then printed
 * as a domain with exit 0.
 */
static void *xml_malloc(size_t size)
{
	return vgpu_xmalloc(size);
}

static void *xml_realloc(void *p, size_t size)
{
	return vgpu_xrealloc(p, size);
}

static char *xml_strdup(const char *s)
{
	return s ? vgpu_xstrdup(s) : NULL;
}

static void xml_quiet(void)
{
	static bool done;

	if (done)
		return;
	xmlMemSetup(free, xml_malloc, xml_realloc, xml_strdup);
	xmlSetStructuredErrorFunc(NULL, xml_silent);
	xmlSetGenericErrorFunc(NULL, xml_silent_generic);
	done = true;
}

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

/* The first child element @name in no namespace: the one "find child" of this file. */
static xmlNodePtr child(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !n->ns && xmlStrEqual(n->name, X(name)))
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

static void drop_node(xmlNodePtr n)
{
	if (n) {
		xmlUnlinkNode(n);
		xmlFreeNode(n);
	}
}

static void remove_children(xmlNodePtr parent, const char *name)
{
	xmlNodePtr n = parent->children;

	while (n) {
		xmlNodePtr next = n->next;

		if (n->type == XML_ELEMENT_NODE && (!name || xmlStrEqual(n->name, X(name))))
			drop_node(n);
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

/* Insert @n as @parent's first child. */
static xmlNodePtr add_first(xmlNodePtr parent, xmlNodePtr n)
{
	return parent->children ? xmlAddPrevSibling(parent->children, n) : xmlAddChild(parent, n);
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

static char *get_attr(xmlNodePtr n, const char *name)
{
	return (char *)xmlGetProp(n, X(name));
}

/* ---- UUIDs, names, sizes ------------------------------------------------- */

int vgpu_domain_memory_kib(struct vgpu_ctx *ctx, xmlDocPtr doc, uint64_t *out)
{
	xmlNodePtr m = child(xmlDocGetRootElement(doc), "memory");
	VGPU_AUTOPTR(xmlchar) c = m ? xmlNodeGetContent(m) : NULL;
	VGPU_AUTOPTR(xmlchar) u = m ? xmlGetProp(m, X("unit")) : NULL;
	int r;

	if (!c)
		return vgpu_error(ctx, -ENOENT, "the domain has no <memory>");
	r = vgpu_parse_scaled_kib(vgpu_strip((char *)c), (const char *)u, 1024, false, out);
	if (r < 0)
		return vgpu_error(ctx, -EINVAL, "the domain's <memory> '%s%s%s' is not a size",
				  vgpu_strip((char *)c), u ? " " : "", u ? (char *)u : "");
	return 0;
}

char *vgpu_domain_field(xmlDocPtr doc, const char *name)
{
	xmlNodePtr n = child(xmlDocGetRootElement(doc), name);
	VGPU_AUTOPTR(xmlchar) c = n ? xmlNodeGetContent(n) : NULL;

	return c ? vgpu_xstrdup(vgpu_strip((char *)c)) : NULL;
}

/* ---- parsing ------------------------------------------------------------ */

int vgpu_domain_parse(struct vgpu_ctx *ctx, const char *buf, size_t len, const char *what,
		      xmlDocPtr *out)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	xmlNodePtr root;

	xml_quiet();
	if (len > VGPU_XML_MAX_SIZE)
		return vgpu_error(ctx, -EFBIG, "'%s' is larger than %u bytes", what,
				  VGPU_XML_MAX_SIZE);
	xmlResetLastError();
	/* untrusted input: no network, no entity expansion, no DTD loading */
	doc = xmlReadMemory(buf, (int)len, what, NULL,
			    XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
				    XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlGetLastError();

		return vgpu_error(ctx, -EINVAL, "'%s' is not well-formed XML%s%.*s", what,
				  e && e->message ? ": " : "",
				  e && e->message ? (int)strcspn(e->message, "\n") : 0,
				  e && e->message ? e->message : "");
	}
	root = xmlDocGetRootElement(doc);
	if (!root || !xmlStrEqual(root->name, X("domain")) || root->ns || doc->intSubset)
		return vgpu_error(ctx, -EINVAL,
				  "'%s' is not a libvirt domain definition (<domain> root%s)", what,
				  doc->intSubset   ? ", no DTD" :
				  root && root->ns ? " in no namespace" :
						     "");
	*out = vgpu_steal_ptr(&doc);
	return 0;
}

int vgpu_domain_format(struct vgpu_ctx *ctx, xmlDocPtr doc, char **out)
{
	xmlBufferPtr buf = xmlBufferCreate();
	xmlSaveCtxtPtr save;
	long r;

	if (!buf)
		return vgpu_error(ctx, -ENOMEM, "out of memory formatting the domain XML");
	xml_quiet();
	save = xmlSaveToBuffer(buf, "UTF-8", XML_SAVE_FORMAT | XML_SAVE_NO_DECL);
	if (!save) {
		xmlBufferFree(buf);
		return vgpu_error(ctx, -ENOMEM, "out of memory formatting the domain XML");
	}
	r = xmlSaveTree(save, xmlDocGetRootElement(doc));
	/* closed whether or not the tree was written: it owns an output buffer */
	if (xmlSaveClose(save) < 0 || r < 0) {
		xmlBufferFree(buf);
		return vgpu_error(ctx, -EINVAL, "cannot format the domain XML");
	}
	*out = vgpu_asprintf("%s\n", (const char *)xmlBufferContent(buf));
	xmlBufferFree(buf);
	return 0;
}

/* ---- our metadata --------------------------------------------------------- */

/* Our metadata element, if the domain has one. */
static xmlNodePtr our_metadata(xmlNodePtr dom)
{
	xmlNodePtr md = child(dom, "metadata");

	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns &&
		    xmlStrEqual(n->ns->href, X(VGPU_XML_NS)))
			return n;
	return NULL;
}

/*
 * The <domain> children assign may rewrite.  On an existing domain their
 * originals go into our metadata (<vgpuctl:saved>: a copy of each, or
 * <vgpuctl:absent name="..."/>), and release puts them back: assign then
 * release gives back the definition it started from, element for element.
 */
static const char *const kept_elements[] = { "vcpu",	      "vcpus",	   "cputune",
					     "numatune",      "cpu",	   "memory",
					     "currentMemory", "maxMemory", "memoryBacking" };

static xmlNodePtr saved_of(xmlNodePtr md)
{
	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns && xmlStrEqual(n->name, X("saved")))
			return n;
	return NULL;
}

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

/* Put the saved elements back in place of what assign wrote. */
static void restore(xmlNodePtr dom, xmlNodePtr saved)
{
	for (xmlNodePtr s = saved->children; s; s = s->next) {
		VGPU_AUTOFREE char *name = NULL;
		xmlNodePtr place;

		if (s->type != XML_ELEMENT_NODE)
			continue;
		name = s->ns ? get_attr(s, "name") : vgpu_xstrdup((const char *)s->name);
		if (!name || order_of(X(name)) >= 1000)
			continue; /* not a <domain> child we know: left alone */
		if (s->ns && strcmp(name, "devices") == 0) {
			/* <devices> made for the hostdevs goes once nothing else is in it */
			if (!xmlFirstElementChild(child(dom, "devices")))
				drop_node(child(dom, "devices"));
			continue;
		}
		if (s->ns) {
			remove_children(dom, name); /* absent before assign */
			continue;
		}
		/*
		 * Where assign edited it in place (the admin's own order, <cpu>
		 * before <os> included); where assign made it, in libvirt's order.
		 */
		place = child(dom, name);
		if (!place)
			place = domain_child(dom, name);
		xmlReplaceNode(place, xmlDocCopyNode(s, dom->doc, 1));
		xmlFreeNode(place);
	}
}

void vgpu_meta_clear(struct vgpu_meta *m)
{
	for (size_t i = 0; i < m->n_vgpus; i++) {
		free(m->vgpus[i].profile);
		free(m->vgpus[i].gi_profile);
	}
	memset(m, 0, sizeof(*m));
}

static enum vgpu_iface iface_from(const char *s)
{
	if (s && strcmp(s, "mdev") == 0)
		return VGPU_IFACE_MDEV;
	if (s && strcmp(s, "vendor-vfio") == 0)
		return VGPU_IFACE_VENDOR_VFIO;
	return VGPU_IFACE_NONE;
}

static enum vgpu_backing backing_from(const char *s)
{
	if (s && strcmp(s, "time-sliced") == 0)
		return VGPU_BACKING_TIME_SLICED;
	if (s && strcmp(s, "mig") == 0)
		return VGPU_BACKING_MIG;
	return VGPU_BACKING_UNKNOWN;
}

/* One <vgpuctl:vgpu>: 0 or -EINVAL naming the attribute. */
static int read_meta_vgpu(struct vgpu_ctx *ctx, xmlNodePtr v, struct vgpu_meta_vgpu *out)
{
	VGPU_AUTOFREE char *type = get_attr(v, "type-id"), *iface = get_attr(v, "interface");
	VGPU_AUTOFREE char *backing = get_attr(v, "backing"), *gpu = get_attr(v, "gpu");
	VGPU_AUTOFREE char *vf = get_attr(v, "vf"), *mdev = get_attr(v, "mdev-uuid");
	long id;

	memset(out, 0, sizeof(*out));
	out->profile = get_attr(v, "profile");
	out->gi_profile = get_attr(v, "gi-profile");
	out->iface = iface_from(iface);
	out->backing = backing_from(backing);
	if (!out->profile)
		return vgpu_error(ctx, -EINVAL, "vgpuctl metadata: a vgpu has no 'profile'");
	if (!type || vgpu_parse_long(type, &id) < 0 || id <= 0 || id > 0xffffff)
		return vgpu_error(ctx, -EINVAL,
				  "vgpuctl metadata: 'type-id' of '%s' is not a type id",
				  out->profile);
	out->type_id = (unsigned)id;
	if (out->iface == VGPU_IFACE_NONE)
		return vgpu_error(ctx, -EINVAL, "vgpuctl metadata: 'interface' of '%s' is '%s'",
				  out->profile, iface ? iface : "");
	if (!gpu || vgpu_bdf_normalize(gpu, out->gpu) < 0 || !vf ||
	    vgpu_bdf_normalize(vf, out->vf) < 0)
		return vgpu_error(ctx, -EINVAL,
				  "vgpuctl metadata: 'gpu' or 'vf' of '%s' is not a PCI address",
				  out->profile);
	if (mdev && !vgpu_uuid_normalize(mdev, out->mdev_uuid))
		return vgpu_error(ctx, -EINVAL, "vgpuctl metadata: 'mdev-uuid' '%s' is not a UUID",
				  mdev);
	if (out->iface == VGPU_IFACE_MDEV && !mdev)
		return vgpu_error(ctx, -EINVAL,
				  "vgpuctl metadata: mdev vGPU '%s' has no 'mdev-uuid'",
				  out->profile);
	return 0;
}

int vgpu_domain_read_meta(struct vgpu_ctx *ctx, xmlDocPtr doc, struct vgpu_meta *out)
{
	xmlNodePtr md = our_metadata(xmlDocGetRootElement(doc));
	VGPU_AUTOFREE char *owner = NULL, *node = NULL, *pinned = NULL, *lifetime = NULL;
	struct vgpu_meta m = { .node = -1 };
	long v;
	int r;

	if (!md)
		return vgpu_error(ctx, -ENOENT,
				  "the domain has no vgpuctl metadata (<%s:vgpus> in %s)",
				  VGPU_XML_NS_PREFIX, VGPU_XML_NS);
	owner = get_attr(md, "owner");
	node = get_attr(md, "node");
	pinned = get_attr(md, "pinned");
	lifetime = get_attr(md, "lifetime");
	m.pinned = !pinned || strcmp(pinned, "no") != 0;
	m.per_start = lifetime && strcmp(lifetime, "per-start") == 0;
	if (!owner || !vgpu_uuid_normalize(owner, m.owner))
		return vgpu_error(ctx, -EINVAL, "vgpuctl metadata: 'owner' is not a UUID");
	if (node && vgpu_parse_long(node, &v) == 0 && v >= 0 && v <= 1023)
		m.node = (int)v;
	for (xmlNodePtr n = md->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("vgpu")))
			continue;
		if (m.n_vgpus == VGPU_MAX_VGPUS) {
			vgpu_meta_clear(&m);
			return vgpu_error(ctx, -EINVAL, "vgpuctl metadata: more than %d vGPUs",
					  VGPU_MAX_VGPUS);
		}
		r = read_meta_vgpu(ctx, n, &m.vgpus[m.n_vgpus++]);
		if (r < 0) {
			vgpu_meta_clear(&m);
			return r;
		}
	}
	*out = m;
	return 0;
}

/* ---- hostdevs ----------------------------------------------------------- */

/*
 * The PCI function a hostdev's <source><address> names, as "DDDD:BB:SS.F"
 * (a hostdev of type pci, or of no type); false when it names none.
 */
static bool hostdev_pci(xmlNodePtr hd, xmlNodePtr addr, char bdf[VGPU_BDF_LEN])
{
	VGPU_AUTOFREE char *type = get_attr(hd, "type");
	VGPU_AUTOFREE char *d = get_attr(addr, "domain"), *b = get_attr(addr, "bus");
	VGPU_AUTOFREE char *s = get_attr(addr, "slot"), *f = get_attr(addr, "function");

	if ((type && strcmp(type, "pci") != 0) || !d || !b || !s || !f)
		return false;
	snprintf(bdf, VGPU_BDF_LEN, "%04lx:%02lx:%02lx.%lx", strtoul(d, NULL, 16),
		 strtoul(b, NULL, 16), strtoul(s, NULL, 16), strtoul(f, NULL, 16));
	return true;
}

static bool hostdev_matches(xmlNodePtr hd, const char *mdev_uuid, const char *vf)
{
	xmlNodePtr addr = child(child(hd, "source"), "address");
	char bdf[VGPU_BDF_LEN];

	if (!addr)
		return false;
	if (mdev_uuid && *mdev_uuid) {
		/* whatever the type says (or if it says nothing): one UUID names one device */
		VGPU_AUTOFREE char *u = get_attr(addr, "uuid");

		if (u && strcasecmp(u, mdev_uuid) == 0)
			return true;
	}
	return vf && hostdev_pci(hd, addr, bdf) && strcmp(bdf, vf) == 0;
}

void vgpu_domain_hostdevs(xmlDocPtr doc, struct vgpu_strv *mdevs, struct vgpu_strv *vfs)
{
	xmlNodePtr devices = child(xmlDocGetRootElement(doc), "devices");

	for (xmlNodePtr hd = devices ? devices->children : NULL; hd; hd = hd->next) {
		xmlNodePtr addr;
		VGPU_AUTOFREE char *u = NULL;
		char norm[VGPU_UUID_LEN], bdf[VGPU_BDF_LEN];

		if (hd->type != XML_ELEMENT_NODE || !xmlStrEqual(hd->name, X("hostdev")))
			continue;
		addr = child(child(hd, "source"), "address");
		if (!addr)
			continue;
		u = get_attr(addr, "uuid");
		if (u && vgpu_uuid_normalize(u, norm))
			vgpu_strv_push(mdevs, vgpu_xstrdup(norm));
		if (hostdev_pci(hd, addr, bdf))
			vgpu_strv_push(vfs, vgpu_xstrdup(bdf));
	}
}

/* Drop the hostdevs in @devices that are the vGPU @v of our metadata. */
static void drop_hostdevs_of(xmlNodePtr devices, xmlNodePtr v)
{
	VGPU_AUTOFREE char *u = get_attr(v, "mdev-uuid"), *vf = get_attr(v, "vf");
	char uuid[VGPU_UUID_LEN] = "", addr[VGPU_BDF_LEN] = "";

	if (u && !vgpu_uuid_normalize(u, uuid))
		uuid[0] = '\0';
	if (vf && vgpu_bdf_normalize(vf, addr) < 0)
		addr[0] = '\0';
	for (xmlNodePtr hd = devices ? devices->children : NULL, next; hd; hd = next) {
		next = hd->next;
		if (hd->type == XML_ELEMENT_NODE && xmlStrEqual(hd->name, X("hostdev")) &&
		    hostdev_matches(hd, uuid, *addr ? addr : NULL))
			drop_node(hd);
	}
}

/* Re-running on our own output replaces the vGPUs we added last time. */
static void drop_previous_vgpus(xmlNodePtr dom, xmlNodePtr devices)
{
	xmlNodePtr md = our_metadata(dom);

	for (xmlNodePtr v = md ? md->children : NULL; v; v = v->next)
		if (v->type == XML_ELEMENT_NODE && xmlStrEqual(v->name, X("vgpu")))
			drop_hostdevs_of(devices, v);
	drop_node(md);
}

size_t vgpu_domain_prev_mdevs(xmlDocPtr doc, char (*out)[VGPU_UUID_LEN])
{
	xmlNodePtr md = our_metadata(xmlDocGetRootElement(doc));
	size_t n = 0;

	for (xmlNodePtr v = md ? md->children : NULL; v; v = v->next) {
		VGPU_AUTOFREE char *u = NULL;

		if (v->type != XML_ELEMENT_NODE || !xmlStrEqual(v->name, X("vgpu")))
			continue;
		u = get_attr(v, "mdev-uuid");
		if (u && n < VGPU_MAX_VGPUS && vgpu_uuid_normalize(u, out[n]))
			n++;
	}
	return n;
}

void vgpu_domain_info_read(xmlDocPtr doc, const char *host_arch, struct vgpu_domain_info *out)
{
	VGPU_AUTOFREE char *vcpu = vgpu_domain_field(doc, "vcpu");
	struct vgpu_ctx sub = { 0 };
	long n;

	memset(out, 0, sizeof(*out));
	out->name = vgpu_domain_field(doc, "name");
	out->uuid_text = vgpu_domain_field(doc, "uuid");
	if (!out->uuid_text || !vgpu_uuid_normalize(out->uuid_text, out->uuid))
		out->uuid[0] = '\0';
	if (vcpu && vgpu_parse_long(vcpu, &n) == 0 && n >= 1 && n <= 4096)
		out->vcpus = (unsigned)n;
	else
		out->vcpus_bad = vcpu != NULL;
	if (vgpu_domain_memory_kib(&sub, doc, &out->memory_kib) < 0)
		out->memory_kib = 0; /* unusable <memory>: the build says so */
	out->guest = vgpu_domain_check_guest(&sub, doc, host_arch);
	if (out->guest < 0)
		out->guest_error = vgpu_xstrdup(vgpu_ctx_error(&sub));
	vgpu_ctx_clear(&sub);
	out->meta_r = vgpu_domain_read_meta(&sub, doc, &out->meta);
	if (out->meta_r == -EINVAL)
		out->meta_error = vgpu_xstrdup(vgpu_ctx_error(&sub));
	vgpu_ctx_clear(&sub);
	out->n_prev_mdevs = vgpu_domain_prev_mdevs(doc, out->prev_mdevs);
}

void vgpu_domain_info_clear(struct vgpu_domain_info *info)
{
	free(info->name);
	free(info->uuid_text);
	free(info->guest_error);
	free(info->meta_error);
	vgpu_meta_clear(&info->meta);
	memset(info, 0, sizeof(*info));
}

size_t vgpu_domain_strip(xmlDocPtr doc, const char *vf)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc), md = our_metadata(dom), saved;
	VGPU_AUTOFREE char *pinned = md ? get_attr(md, "pinned") : NULL;
	size_t dropped = 0, left = 0;

	for (xmlNodePtr v = md ? md->children : NULL, next; v; v = next) {
		VGPU_AUTOFREE char *at = NULL;
		char addr[VGPU_BDF_LEN];

		next = v->next;
		if (v->type != XML_ELEMENT_NODE || !xmlStrEqual(v->name, X("vgpu")))
			continue;
		at = get_attr(v, "vf");
		if (vf && !(at && vgpu_bdf_normalize(at, addr) == 0 && strcmp(addr, vf) == 0)) {
			left++;
			continue;
		}
		drop_hostdevs_of(child(dom, "devices"), v);
		drop_node(v);
		dropped++;
	}
	if (!md || left)
		return dropped;
	saved = saved_of(md);
	if (saved)
		restore(dom, saved);
	drop_node(md);
	if (!xmlFirstElementChild(child(dom, "metadata")))
		drop_node(child(dom, "metadata"));
	if (!saved && (!pinned || strcmp(pinned, "no") != 0)) {
		xmlNodePtr cputune = child(dom, "cputune");

		if (cputune) {
			remove_children(cputune, "vcpupin");
			remove_children(cputune, "emulatorpin");
			if (!xmlFirstElementChild(cputune))
				drop_node(cputune);
		}
		drop_node(child(dom, "numatune"));
	}
	return dropped;
}

static void add_hostdev(xmlNodePtr devices, const struct vgpu_choice *c, const char *mdev_uuid)
{
	xmlNodePtr hd = xmlNewNode(NULL, X("hostdev")), addr, before = NULL;

	set_attr(hd, "mode", "subsystem");
	if (c->iface == VGPU_IFACE_VENDOR_VFIO) {
		unsigned d = 0, b = 0, s = 0, f = 0;
		char buf[16];

		/* NVIDIA: "a vGPU is supported only in unmanaged libvirt mode" */
		set_attr(hd, "type", "pci");
		set_attr(hd, "managed", "no");
		addr = add_el(add_el(hd, "source"), "address");
		sscanf(c->parent, "%x:%x:%x.%x", &d, &b, &s, &f);
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
static int build_memory(struct vgpu_ctx *ctx, xmlNodePtr dom, const struct vgpu_domain_opts *o,
			uint64_t *mem_kib)
{
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
	set_attr(n, "nodeset", "0"); /* the guest's only cell */
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

	/*
	 * The same count as before: vCPU hotplug (current, <vcpus>) stays as the
	 * admin set it, every vCPU pinned; another count makes them meaningless.
	 */
	if (!old || vgpu_parse_long(vgpu_strip((char *)old), &was) < 0 || was != plan->vcpus) {
		xmlUnsetProp(n, X("current"));
		drop_node(child(dom, "vcpus"));
	}
	set_attr(n, "placement", "static");
	xmlUnsetProp(n, X("cpuset"));
	snprintf(list, VGPU_CPULIST_LEN, "%u", plan->vcpus);
	set_text(n, list);

	cputune = domain_child(dom, "cputune");
	remove_children(cputune, "vcpupin");
	remove_children(cputune, "emulatorpin");
	first = cputune->children;
	for (unsigned i = 0; i < plan->vcpus; i++) {
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

static int check_cells(struct vgpu_ctx *ctx, xmlNodePtr dom)
{
	xmlNodePtr hp = child(child(dom, "memoryBacking"), "hugepages");

	for (xmlNodePtr d = child(dom, "devices") ? child(dom, "devices")->children : NULL; d;
	     d = d->next) {
		xmlNodePtr node = child(child(d, "target"), "node");
		VGPU_AUTOPTR(xmlchar) text = node ? xmlNodeGetContent(node) : NULL;
		long cell;

		if (text && vgpu_parse_long(vgpu_strip((char *)text), &cell) == 0 && cell > 0) {
			/* pinning nothing is the other way out: the caller names its option */
			vgpu_ctx_hint(ctx, VGPU_HINT_NO_PIN);
			return vgpu_error(
				ctx, -EINVAL,
				"the domain's <%s> is on guest NUMA cell %ld, and the pinning leaves the guest one cell (0): move it to cell 0",
				(const char *)d->name, cell);
		}
	}
	one_page_size(ctx, hp);
	return 0;
}

static void build_numatune(xmlNodePtr dom, const struct vgpu_plan *plan)
{
	xmlNodePtr numatune = domain_child(dom, "numatune"), n;

	remove_children(numatune, NULL);
	n = add_el(numatune, "memory");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);
	n = add_el(numatune, "memnode");
	set_attr(n, "cellid", "0");
	set_attr(n, "mode", "strict");
	set_attr_u(n, "nodeset", (unsigned)plan->node);
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
	set_attr(n, "sockets", "1");
	set_attr(n, "dies", "1");
	set_attr_u(n, "cores", plan->cores);
	set_attr_u(n, "threads", plan->threads);
	n = add_el(add_el(cpu, "numa"), "cell");
	set_attr(n, "id", "0");
	snprintf(buf, sizeof(buf), "0-%u", plan->vcpus - 1);
	set_attr(n, "cpus", plan->vcpus == 1 ? "0" : buf);
	set_attr_u(n, "memory", mem_kib);
	set_attr(n, "unit", "KiB");
	if (access)
		set_attr(n, "memAccess", access);
	if (discard)
		set_attr(n, "discard", "yes");
}

/*
 * NVIDIA's vGPU guest drivers and our pinning are for x86_64 and aarch64
 * guests, on a machine type with a PCI bus for the hostdev (not x86's isapc,
 * not Arm's board models: aarch64 takes virt), of the host's architecture
 * (@host_arch, NULL when unknown): KVM runs no other, and NVIDIA's vGPU
 * manager serves guests of its own platform only.
 */
static int check_arch(struct vgpu_ctx *ctx, xmlNodePtr dom, const char *host_arch)
{
	xmlNodePtr type = child(child(dom, "os"), "type");
	VGPU_AUTOFREE char *arch = type ? get_attr(type, "arch") : NULL;
	VGPU_AUTOFREE char *machine = type ? get_attr(type, "machine") : NULL;

	if (arch && strcmp(arch, "x86_64") != 0 && strcmp(arch, "aarch64") != 0)
		return vgpu_error(
			ctx, -ENOTSUP,
			"guest architecture '%s' is not supported: vGPUs go to x86_64 and aarch64 guests",
			arch);
	if (machine && ((strcmp(machine, "isapc") == 0) ||
			(arch && strcmp(arch, "aarch64") == 0 && strncmp(machine, "virt", 4) != 0)))
		return vgpu_error(ctx, -ENOTSUP,
				  "machine type '%s' has no PCI bus for a vGPU hostdev: use %s",
				  machine,
				  arch && strcmp(arch, "aarch64") == 0 ? "virt" : "q35 or pc");
	/* no arch: libvirt takes the host's */
	if (arch && host_arch && strcmp(arch, host_arch) != 0)
		return vgpu_error(
			ctx, -ENOTSUP,
			"'%s': guest architecture '%s' is not the host's (%s): a vGPU goes to a guest of the host's architecture",
			dom->doc->URL ? (const char *)dom->doc->URL : "the domain", arch,
			host_arch);
	return 0;
}

int vgpu_domain_check_guest(struct vgpu_ctx *ctx, xmlDocPtr doc, const char *host_arch)
{
	return check_arch(ctx, xmlDocGetRootElement(doc), host_arch);
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

			if (hostdev_matches(hd, c->mdev_uuid,
					    c->iface == VGPU_IFACE_VENDOR_VFIO ? c->parent : NULL))
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
			   const struct vgpu_domain_opts *o, xmlNodePtr saved)
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
	if (saved) {
		xmlSetNs(saved, ns);
		for (xmlNodePtr n = saved->children; n; n = n->next)
			if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, X("absent")))
				xmlSetNs(n, ns);
		xmlAddChild(root, saved);
	}
}

int vgpu_domain_build(struct vgpu_ctx *ctx, xmlDocPtr doc, const struct vgpu_plan *plan,
		      const struct vgpu_domain_opts *o)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc), devices, saved;
	uint64_t mem_kib = 0;
	int r;

	xml_quiet();
	for (size_t i = 0; i < plan->n_vgpus; i++)
		if ((plan->vgpus[i].iface == VGPU_IFACE_MDEV) !=
		    vgpu_uuid_valid(plan->vgpus[i].mdev_uuid))
			return vgpu_error(ctx, -EINVAL, "the plan has no mdev UUID for vGPU %zu",
					  i + 1);
	r = check_arch(ctx, dom, NULL); /* the host's: vgpu_domain_check_guest() */
	if (r < 0)
		return r;
	/* the originals: kept from our earlier build, or taken now from an existing domain */
	saved = saved_of(our_metadata(dom));
	if (saved)
		xmlUnlinkNode(saved);
	else if (o->existing && !our_metadata(dom))
		saved = snapshot(dom); /* our own output has nothing of the admin's to keep */
	r = build_identity(ctx, dom, plan, o);
	/* no pinning touches no memory or CPU element unless it is asked to */
	if (r == 0 && (!o->no_pin || o->memory_kib || o->hugepages))
		r = build_memory(ctx, dom, o, &mem_kib);
	if (r < 0) {
		xmlFreeNode(saved);
		return r;
	}
	if (!o->no_pin && (r = check_cells(ctx, dom)) < 0) {
		xmlFreeNode(saved);
		return r;
	}
	if (!o->no_pin) {
		build_vcpus(dom, plan, o);
		build_numatune(dom, plan);
		build_cpu(dom, plan, mem_kib, o);
	}
	devices = domain_child(dom, "devices");
	drop_previous_vgpus(dom, devices);
	r = check_no_foreign_hostdev(ctx, devices, plan);
	if (r < 0) {
		xmlFreeNode(saved);
		return r;
	}
	for (size_t i = 0; i < plan->n_vgpus; i++)
		add_hostdev(devices, &plan->vgpus[i], plan->vgpus[i].mdev_uuid);
	build_metadata(dom, plan, o, saved);
	return 0;
}

/* ---- reading other domains ------------------------------------------------ */

/* libvirt's cpuset syntax: a cpulist whose "^N" items remove CPUs ("0-20,^9"). */
static int parse_libvirt_cpuset(const char *str, struct vgpu_cpuset *out)
{
	struct vgpu_cpuset plus, minus, one;
	VGPU_AUTOFREE char *copy = vgpu_xstrdup(str);
	char *save = NULL;

	vgpu_cpuset_zero(&plus);
	vgpu_cpuset_zero(&minus);
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		bool neg = *item == '^';

		if (vgpu_cpulist_parse(item + neg, &one) < 0)
			return -EINVAL;
		vgpu_cpuset_or(neg ? &minus : &plus, &one);
	}
	vgpu_cpuset_andnot(&plus, &minus);
	*out = plus;
	return 0;
}

static void add_cpuset_attr(xmlNodePtr n, struct vgpu_cpuset *out)
{
	VGPU_AUTOFREE char *c = n ? get_attr(n, "cpuset") : NULL;
	struct vgpu_cpuset s;

	if (c && parse_libvirt_cpuset(c, &s) == 0)
		vgpu_cpuset_or(out, &s);
}

void vgpu_domain_doc_pinned_cpus(xmlDocPtr doc, struct vgpu_cpuset *out)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), cputune = child(root, "cputune");

	add_cpuset_attr(child(root, "vcpu"), out);
	for (xmlNodePtr p = cputune ? cputune->children : NULL; p; p = p->next)
		if (p->type == XML_ELEMENT_NODE &&
		    (xmlStrEqual(p->name, X("vcpupin")) || xmlStrEqual(p->name, X("emulatorpin")) ||
		     xmlStrEqual(p->name, X("iothreadpin"))))
			add_cpuset_attr(p, out);
}

int vgpu_domain_pinned_cpus(struct vgpu_ctx *ctx, const char *xml, struct vgpu_cpuset *out)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	int r = vgpu_domain_parse(ctx, xml, strlen(xml), "domain.xml", &doc);

	if (r == 0)
		vgpu_domain_doc_pinned_cpus(doc, out);
	return r;
}

bool vgpu_domain_doc_is(xmlDocPtr doc, const char *self_name, const char *self_uuid)
{
	VGPU_AUTOFREE char *name = vgpu_domain_field(doc, "name");
	VGPU_AUTOFREE char *uuid = vgpu_domain_field(doc, "uuid");
	char a[VGPU_UUID_LEN], b[VGPU_UUID_LEN];

	if (self_name && name && strcmp(name, self_name) == 0)
		return true;
	return self_uuid && uuid && vgpu_uuid_normalize(self_uuid, a) &&
	       vgpu_uuid_normalize(uuid, b) && strcmp(a, b) == 0;
}
