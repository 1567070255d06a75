// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: release's edit of a domain definition (vgpu_domain_strip()), the
 * inverse of domxml-build.c: the vGPU hostdevs and metadata vgpuctl added are
 * taken out and the saved originals put back, element for element.
 */
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "domxml-priv.h"
#include "domxml.h"

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

/* Drop the hostdevs in @devices that are the vGPU @v of our metadata. */
void domxml_drop_hostdevs_of(xmlNodePtr devices, xmlNodePtr v)
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
		    domxml_hostdev_matches(hd, uuid, *addr ? addr : NULL))
			drop_node(hd);
	}
}

/* Drop the controllers our metadata @md says we added (its 'controllers' list). */
void domxml_drop_controllers_of(xmlNodePtr devices, xmlNodePtr md)
{
	VGPU_AUTOFREE char *list = md ? get_attr(md, "controllers") : NULL;
	struct vgpu_cpuset ours;

	if (!devices || !list || vgpu_cpulist_parse(list, &ours) < 0)
		return;
	for (xmlNodePtr n = devices->children, next; n; n = next) {
		VGPU_AUTOFREE char *type = NULL, *index = NULL;
		long i;

		next = n->next;
		if (n->type != XML_ELEMENT_NODE || !xmlStrEqual(n->name, X("controller")))
			continue;
		type = get_attr(n, "type");
		index = get_attr(n, "index");
		if (type && strcmp(type, "pci") == 0 && index && vgpu_parse_long(index, &i) == 0 &&
		    i >= 0 && vgpu_cpuset_has(&ours, (unsigned)i))
			drop_node(n);
	}
}

size_t vgpu_domain_strip(xmlDocPtr doc, const char *vf)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc), md = domxml_our_metadata(dom), saved;
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
		domxml_drop_hostdevs_of(child(dom, "devices"), v);
		drop_node(v);
		dropped++;
	}
	if (!md || left)
		return dropped;
	saved = domxml_saved_of(md);
	domxml_drop_controllers_of(child(dom, "devices"), md); /* a mirrored guest's buses */
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
