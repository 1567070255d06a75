// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: a libvirt domain definition as a document, read: the one hardened
 * parser, the formatter, and what a definition holds (its fields, guest
 * checks, hostdevs, vgpuctl's metadata, pinned CPUs), on libxml2's tree API
 * with no I/O.  The edits are domxml-build.c (assign) and domxml-strip.c
 * (release); what they share is domxml-priv.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>

#include "domxml-priv.h"
#include "domxml.h"
#include "migrate-check.h"

void vgpu_xml_doc_free(xmlDocPtr doc)
{
	xmlFreeDoc(doc);
}

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

void domxml_quiet(void)
{
	static bool done;

	if (done)
		return;
	xmlMemSetup(free, xml_malloc, xml_realloc, xml_strdup);
	xmlSetStructuredErrorFunc(NULL, xml_silent);
	xmlSetGenericErrorFunc(NULL, xml_silent_generic);
	done = true;
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

	domxml_quiet();
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
	domxml_quiet();
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
xmlNodePtr domxml_our_metadata(xmlNodePtr dom)
{
	xmlNodePtr md = child(dom, "metadata");

	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns &&
		    xmlStrEqual(n->ns->href, X(VGPU_XML_NS)))
			return n;
	return NULL;
}

xmlNodePtr domxml_saved_of(xmlNodePtr md)
{
	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns && xmlStrEqual(n->name, X("saved")))
			return n;
	return NULL;
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

xmlNodePtr domxml_params_of(xmlNodePtr md)
{
	for (xmlNodePtr n = md ? md->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && n->ns && xmlStrEqual(n->name, X("params")))
			return n;
	return NULL;
}

int vgpu_domain_read_params(struct vgpu_ctx *ctx, xmlDocPtr doc, struct vgpu_params *out,
			    bool *present)
{
	xmlNodePtr ps = domxml_params_of(domxml_our_metadata(xmlDocGetRootElement(doc)));
	struct vgpu_params set = { .n = 0 };

	for (xmlNodePtr n = ps ? ps->children : NULL; n; n = n->next) {
		VGPU_AUTOFREE char *name = NULL, *value = NULL;
		int r;

		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("param")))
			continue;
		name = get_attr(n, "name");
		value = get_attr(n, "value");
		/* what the file may hold: undocumented names too (params --raw wrote them) */
		r = vgpu_params_set(ctx, &set, name ? name : "", value ? value : "", true);
		if (r < 0) {
			vgpu_error_append(ctx, "in the vgpuctl metadata");
			return r;
		}
	}
	*out = set;
	*present = ps != NULL;
	return 0;
}

int vgpu_domain_read_meta(struct vgpu_ctx *ctx, xmlDocPtr doc, struct vgpu_meta *out)
{
	xmlNodePtr md = domxml_our_metadata(xmlDocGetRootElement(doc));
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
	r = vgpu_domain_read_params(ctx, doc, &m.params, &m.has_params);
	if (r < 0) {
		vgpu_meta_clear(&m);
		return r;
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

bool domxml_hostdev_matches(xmlNodePtr hd, const char *mdev_uuid, const char *vf)
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

size_t vgpu_domain_prev_mdevs(xmlDocPtr doc, char (*out)[VGPU_UUID_LEN])
{
	xmlNodePtr md = domxml_our_metadata(xmlDocGetRootElement(doc));
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

#define QEMU_XML_NS "http://libvirt.org/schemas/domain/qemu/1.0"

/* "off", "false", "no" or "0": a QEMU property turned off */
static bool qemu_off(const char *v)
{
	return v && (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
		     !strcmp(v, "0"));
}

/*
 * enable-migration=off (or x-enable-migration, QEMU 7) anywhere below @n in
 * libvirt's QEMU namespace: a <qemu:arg value='...enable-migration=off'/>
 * of <qemu:commandline>, or a <qemu:property name='enable-migration'
 * value='off'/> of <qemu:override>'s frontend.
 */
static bool migration_off(xmlNodePtr n)
{
	for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (c->ns && xmlStrEqual(c->ns->href, X(QEMU_XML_NS))) {
			VGPU_AUTOFREE char *name = get_attr(c, "name");
			VGPU_AUTOFREE char *value = get_attr(c, "value");
			const char *p;

			if (xmlStrEqual(c->name, X("arg")) && value &&
			    (p = strstr(value, "enable-migration=")) &&
			    qemu_off(p + strlen("enable-migration=")))
				return true;
			if (xmlStrEqual(c->name, X("property")) && name &&
			    (!strcmp(name, "enable-migration") ||
			     !strcmp(name, "x-enable-migration")) &&
			    qemu_off(value))
				return true;
		}
		if (migration_off(c))
			return true;
	}
	return false;
}

void vgpu_domain_mig_facts(xmlDocPtr doc, const struct vgpu_meta *meta, struct vgpu_mig_domain *out)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc);
	xmlNodePtr devices = child(dom, "devices");
	VGPU_AUTOFREE char *name = vgpu_domain_field(doc, "name");
	VGPU_AUTOFREE char *machine = get_attr(child(child(dom, "os"), "type"), "machine");

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name ? name : "");
	snprintf(out->machine, sizeof(out->machine), "%s", machine ? machine : "");
	out->migration_off = migration_off(dom);
	for (xmlNodePtr d = devices ? devices->children : NULL; d; d = d->next) {
		if (d->type != XML_ELEMENT_NODE || d->ns)
			continue;
		if (xmlStrEqual(d->name, X("iommu"))) {
			out->iommu = true;
		} else if (xmlStrEqual(d->name, X("video"))) {
			VGPU_AUTOFREE char *model = get_attr(child(d, "model"), "type");

			if (model && !strcmp(model, "ramfb"))
				out->ramfb = true;
		} else if (xmlStrEqual(d->name, X("hostdev"))) {
			VGPU_AUTOFREE char *mode = get_attr(d, "mode");
			VGPU_AUTOFREE char *type = get_attr(d, "type");
			VGPU_AUTOFREE char *ramfb = get_attr(d, "ramfb");
			bool ours = false;

			if ((mode && strcmp(mode, "subsystem")) || !type ||
			    (strcmp(type, "mdev") && strcmp(type, "pci")))
				continue;
			out->n_vfio++;
			if (ramfb && !strcmp(ramfb, "on"))
				out->ramfb = true;
			for (size_t i = 0; meta && i < meta->n_vgpus && !ours; i++) {
				const struct vgpu_meta_vgpu *v = &meta->vgpus[i];

				ours = domxml_hostdev_matches(
					d, v->iface == VGPU_IFACE_MDEV ? v->mdev_uuid : NULL,
					v->iface == VGPU_IFACE_MDEV ? NULL : v->vf);
			}
			if (!ours)
				out->n_vfio_other++;
		}
	}
}
