// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Thin libvirt wrapper.  libvirt is loaded with dlopen() on first use:
 * linking it pulls ~55 shared libraries and ~12 ms into every start of
 * every command, while only those given -c URI talk to libvirt (and the
 * hook must never do so).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "cleanup.h"
#include "vgpu-priv.h"

#define X(s) ((const xmlChar *)(s))

struct virt_api {
	virConnectPtr (*connect_open)(const char *);
	int (*connect_close)(virConnectPtr);
	int (*list_all)(virConnectPtr, virDomainPtr **, unsigned int);
	char *(*get_xml)(virDomainPtr, unsigned int);
	int (*dom_free)(virDomainPtr);
	const char *(*last_error)(void);
	void (*set_error_func)(void *, virErrorFunc);
	int (*event_register_default)(void);
};

struct vgpu_virt {
	void *dl;
	struct virt_api api;
	virConnectPtr conn;
};

static void silent_error(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static int load_api(struct vgpu_virt *v, char *err, size_t errlen)
{
	static const struct {
		const char *sym;
		size_t off;
	} syms[] = {
		{ "virConnectOpen", offsetof(struct virt_api, connect_open) },
		{ "virConnectClose", offsetof(struct virt_api, connect_close) },
		{ "virConnectListAllDomains", offsetof(struct virt_api, list_all) },
		{ "virDomainGetXMLDesc", offsetof(struct virt_api, get_xml) },
		{ "virDomainFree", offsetof(struct virt_api, dom_free) },
		{ "virGetLastErrorMessage", offsetof(struct virt_api, last_error) },
		{ "virSetErrorFunc", offsetof(struct virt_api, set_error_func) },
		{ "virEventRegisterDefaultImpl",
		  offsetof(struct virt_api, event_register_default) },
	};

	v->dl = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!v->dl) {
		snprintf(err, errlen, "cannot load libvirt (libvirt.so.0): %s", dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(v->dl, syms[i].sym);

		if (!f) {
			snprintf(err, errlen, "libvirt.so.0 lacks %s", syms[i].sym);
			return -ENOENT;
		}
		memcpy((char *)&v->api + syms[i].off, &f, sizeof(f));
	}
	return 0;
}

int vgpu_virt_open(const char *uri, struct vgpu_virt **out, char *err, size_t errlen)
{
	struct vgpu_virt *v = calloc(1, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	r = load_api(v, err, errlen);
	if (r < 0) {
		vgpu_virt_close(v);
		return r;
	}
	v->api.set_error_func(NULL, silent_error);
	/* embedded drivers (qemu:///embed) refuse to open without an event loop impl */
	if (v->api.event_register_default() < 0) {
		snprintf(err, errlen, "cannot set up libvirt's event loop: %s",
			 v->api.last_error());
		vgpu_virt_close(v);
		return -EIO;
	}
	v->conn = v->api.connect_open(uri);
	if (!v->conn) {
		snprintf(err, errlen, "cannot connect to '%s': %s", uri, v->api.last_error());
		vgpu_virt_close(v);
		return -EIO;
	}
	*out = v;
	return 0;
}

void vgpu_virt_close(struct vgpu_virt *v)
{
	if (!v)
		return;
	if (v->conn)
		v->api.connect_close(v->conn);
	if (v->dl)
		dlclose(v->dl);
	free(v);
}

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
	xmlChar *c = xmlGetProp(n, X("cpuset"));
	struct vgpu_cpuset s;

	if (c && parse_libvirt_cpuset((const char *)c, &s) == 0)
		vgpu_cpuset_or(out, &s);
	xmlFree(c);
}

int vgpu_domain_pinned_cpus(const char *xml, struct vgpu_cpuset *out)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root;

	if (!doc)
		return -EINVAL;
	root = xmlDocGetRootElement(doc);
	for (xmlNodePtr n = root ? root->children : NULL; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrEqual(n->name, X("vcpu")))
			add_cpuset_attr(n, out);
		if (!xmlStrEqual(n->name, X("cputune")))
			continue;
		for (xmlNodePtr p = n->children; p; p = p->next)
			if (p->type == XML_ELEMENT_NODE &&
			    (xmlStrEqual(p->name, X("vcpupin")) ||
			     xmlStrEqual(p->name, X("emulatorpin")) ||
			     xmlStrEqual(p->name, X("iothreadpin"))))
				add_cpuset_attr(p, out);
	}
	xmlFreeDoc(doc);
	return 0;
}

static bool is_self(const char *xml, const char *self_name, const char *self_uuid)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	bool self = false;

	for (xmlNodePtr n = root ? root->children : NULL; n && !self; n = n->next) {
		xmlChar *c;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		c = xmlNodeGetContent(n);
		if (c && self_name && xmlStrEqual(n->name, X("name")))
			self = strcmp((const char *)c, self_name) == 0;
		if (c && self_uuid && xmlStrEqual(n->name, X("uuid")))
			self = strcasecmp((const char *)c, self_uuid) == 0;
		xmlFree(c);
	}
	xmlFreeDoc(doc);
	return self;
}

int vgpu_virt_pinned_cpus(struct vgpu_virt *v, const char *self_name, const char *self_uuid,
			  struct vgpu_cpuset *out, char *err, size_t errlen)
{
	virDomainPtr *doms = NULL;
	int n = v->api.list_all(v->conn, &doms, 0);
	int r = 0;

	if (n < 0) {
		snprintf(err, errlen, "cannot list domains: %s", v->api.last_error());
		return -EIO;
	}
	for (int i = 0; i < n; i++) {
		/* the persistent definition: what the domain will pin when it starts */
		char *xml = v->api.get_xml(doms[i], VIR_DOMAIN_XML_INACTIVE);

		if (!xml) {
			snprintf(err, errlen, "cannot read a domain's XML: %s",
				 v->api.last_error());
			r = -EIO;
		} else if (!is_self(xml, self_name, self_uuid)) {
			vgpu_domain_pinned_cpus(xml, out);
		}
		free(xml);
		v->api.dom_free(doms[i]);
	}
	free(doms);
	return r;
}
