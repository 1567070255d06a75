/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the domain XML files: domxml.c (parse, format, read),
 * domxml-build.c (assign's edit) and domxml-strip.c (release's edit), the
 * libxml2 node helpers and the finders of vgpuctl's own elements.  Nothing
 * else includes this.
 */
#ifndef VGPU_DOMXML_PRIV_H
#define VGPU_DOMXML_PRIV_H

#include <stdbool.h>
#include <stdio.h>

#include <libxml/tree.h>

#include "cleanup.h"

#define X(s) ((const xmlChar *)(s))

VGPU_DEFINE_AUTOPTR(xmlchar, xmlChar, xmlFree)

/* Where @name goes among <domain>'s children: libvirt's canonical order; 1000 when unknown. */
static inline int order_of(const xmlChar *name)
{
	static const char *const domain_order[] = {
		"name",
		"uuid",
		"genid",
		"title",
		"description",
		"metadata",
		"maxMemory",
		"memory",
		"currentMemory",
		"blkiotune",
		"memtune",
		"memoryBacking",
		"vcpu",
		"vcpus",
		"iothreads",
		"iothreadids",
		"cputune",
		"numatune",
		"resource",
		"sysinfo",
		"bootloader",
		"bootloader_args",
		"os",
		"idmap",
		"features",
		"cpu",
		"clock",
		"on_poweroff",
		"on_reboot",
		"on_crash",
		"pm",
		"perf",
		"devices",
		"seclabel",
		"keywrap",
		"launchSecurity",
		NULL,
	};

	for (int i = 0; domain_order[i]; i++)
		if (xmlStrEqual(name, X(domain_order[i])))
			return i;
	return 1000; /* unknown elements stay where they are, sorting last */
}

/* The first child element @name in no namespace: the one "find child" of this file. */
static inline xmlNodePtr child(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !n->ns && xmlStrEqual(n->name, X(name)))
			return n;
	return NULL;
}

/* The <domain> child @name, created at its canonical position if missing. */
static inline xmlNodePtr domain_child(xmlNodePtr dom, const char *name)
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

static inline void drop_node(xmlNodePtr n)
{
	if (n) {
		xmlUnlinkNode(n);
		xmlFreeNode(n);
	}
}

static inline void remove_children(xmlNodePtr parent, const char *name)
{
	xmlNodePtr n = parent->children;

	while (n) {
		xmlNodePtr next = n->next;

		if (n->type == XML_ELEMENT_NODE && (!name || xmlStrEqual(n->name, X(name))))
			drop_node(n);
		n = next;
	}
}

static inline void set_text(xmlNodePtr n, const char *text)
{
	xmlNodeSetContent(n, NULL);
	remove_children(n, NULL);
	xmlNodeAddContent(n, X(text));
}

static inline xmlNodePtr add_el(xmlNodePtr parent, const char *name)
{
	return xmlNewChild(parent, NULL, X(name), NULL);
}

/* Insert @n as @parent's first child. */
static inline xmlNodePtr add_first(xmlNodePtr parent, xmlNodePtr n)
{
	return parent->children ? xmlAddPrevSibling(parent->children, n) : xmlAddChild(parent, n);
}

static inline void set_attr(xmlNodePtr n, const char *name, const char *value)
{
	xmlSetProp(n, X(name), X(value));
}

static inline void set_attr_u(xmlNodePtr n, const char *name, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	xmlSetProp(n, X(name), X(buf));
}

static inline char *get_attr(xmlNodePtr n, const char *name)
{
	return (char *)xmlGetProp(n, X(name));
}

/* libxml2 silenced and on our allocators, once per process (domxml.c). */
void domxml_quiet(void);
/* Our metadata element (<vgpuctl:vgpus>), if the domain @dom has one (domxml.c). */
xmlNodePtr domxml_our_metadata(xmlNodePtr dom);
/* The <vgpuctl:saved> originals in our metadata @md (may be NULL), or NULL (domxml.c). */
xmlNodePtr domxml_saved_of(xmlNodePtr md);
/* The <vgpuctl:params> of our metadata @md, or NULL. */
xmlNodePtr domxml_params_of(xmlNodePtr md);
/* Is the hostdev @hd the mdev @mdev_uuid or the VF @vf (either may be NULL or "")? (domxml.c) */
bool domxml_hostdev_matches(xmlNodePtr hd, const char *mdev_uuid, const char *vf);
/* Drop the PCI controllers in @devices our metadata @md lists as added (domxml-strip.c). */
void domxml_drop_controllers_of(xmlNodePtr devices, xmlNodePtr md);
/* Drop the hostdevs in @devices that are the vGPU @v of our metadata (domxml-strip.c). */
void domxml_drop_hostdevs_of(xmlNodePtr devices, xmlNodePtr v);
#endif
