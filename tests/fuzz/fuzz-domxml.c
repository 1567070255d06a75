// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Domain XML: parse arbitrary bytes; when that works, apply a fixed small
 * plan with vgpu_domain_build(), format, parse the output again and build
 * it again with the same plan and options: the second output must be the
 * first (parse -> build is a fixed point on our own output).  The metadata
 * we wrote must read back as the plan.
 */
#include <errno.h>
#include <strings.h>

#include <libxml/tree.h>

#include "domxml.h"
#include "fuzz-common.h"

#define FUZZ_MAX_INPUT (64 * 1024)
#define MDEV_UUID "6f3c1a52-9b1e-4b8e-9d1c-2a1b3c4d5e6f"

static void fixed_plan(struct vgpu_plan *p, unsigned pins[2])
{
	memset(p, 0, sizeof(*p));
	p->node = 1;
	pins[0] = 2;
	pins[1] = 3;
	p->pins = pins;
	p->vcpus = 2;
	p->cores = 1;
	p->threads = 2;
	vgpu_cpuset_set(&p->cpus, 2);
	vgpu_cpuset_set(&p->cpus, 3);
	snprintf(p->vgpus[0].gpu, sizeof(p->vgpus[0].gpu), "0000:3b:00.0");
	snprintf(p->vgpus[0].parent, sizeof(p->vgpus[0].parent), "0000:3b:00.4");
	p->vgpus[0].iface = VGPU_IFACE_MDEV;
	p->vgpus[0].type_id = 689;
	p->vgpus[0].profile = (char *)"A30-6C";
	p->vgpus[0].backing = VGPU_BACKING_TIME_SLICED;
	p->n_vgpus = 1;
}

/*
 * Known bug: a <hostdev> not recorded in our metadata that already uses the
 * mdev UUID we assign is kept beside the one we add (two hostdevs, one UUID);
 * the next build drops both as ours, so the output is no fixed point.  How
 * many hostdevs of @doc use @uuid?  See regressions/domxml/.
 */
static size_t hostdevs_with_uuid(struct _xmlDoc *doc, const char *uuid)
{
	xmlNodePtr dom = xmlDocGetRootElement(doc);
	size_t n = 0;

	for (xmlNodePtr d = dom ? dom->children : NULL; d; d = d->next) {
		if (d->type != XML_ELEMENT_NODE || !xmlStrEqual(d->name, BAD_CAST "devices"))
			continue;
		for (xmlNodePtr hd = d->children; hd; hd = hd->next) {
			if (hd->type != XML_ELEMENT_NODE ||
			    !xmlStrEqual(hd->name, BAD_CAST "hostdev"))
				continue;
			for (xmlNodePtr src = hd->children; src; src = src->next) {
				if (src->type != XML_ELEMENT_NODE ||
				    !xmlStrEqual(src->name, BAD_CAST "source"))
					continue;
				for (xmlNodePtr a = src->children; a; a = a->next) {
					xmlChar *u;

					if (a->type != XML_ELEMENT_NODE ||
					    !xmlStrEqual(a->name, BAD_CAST "address"))
						continue;
					u = xmlGetProp(a, BAD_CAST "uuid");
					n += u && strcasecmp((const char *)u, uuid) == 0;
					xmlFree(u);
				}
			}
		}
	}
	return n;
}

/*
 * Known bug: a whitespace-only text node that XML_PARSE_NOBLANKS keeps (an
 * element holding only blanks, as "<devices>\n \n</devices>") makes the
 * element mixed content once we add children: libxml2 then writes it without
 * indentation, and the next parse drops the blank, so the second output is
 * indented differently.  Same text but for whitespace?  See regressions/domxml/.
 */
static int same_but_blanks(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' || *a == '\n')
			a++;
		while (*b == ' ' || *b == '\n')
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}

/* parse -> build -> format; 0 and *out, or the error (an invariant for a re-parse). */
static int build_once(struct vgpu_ctx *ctx, const char *buf, size_t len,
		      const struct vgpu_plan *plan, const struct vgpu_domain_opts *o, char **out)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	int r = vgpu_domain_parse(ctx, buf, len, "fuzz.xml", &doc);

	if (r < 0)
		return r;
	r = vgpu_domain_build(ctx, doc, plan, o);
	if (r < 0)
		return r;
	return vgpu_domain_format(ctx, doc, out);
}

static void check_meta(struct vgpu_ctx *ctx, const char *xml, const struct vgpu_plan *plan)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	struct vgpu_meta m;
	struct vgpu_cpuset pinned;
	int r;

	r = vgpu_domain_parse(ctx, xml, strlen(xml), "out.xml", &doc);
	FUZZ_ASSERT(r == 0, "output does not parse: %s", vgpu_ctx_error(ctx));
	r = vgpu_domain_read_meta(ctx, doc, &m);
	FUZZ_ASSERT(r == 0, "our metadata does not read back: %s", vgpu_ctx_error(ctx));
	FUZZ_ASSERT(m.n_vgpus == plan->n_vgpus && m.node == plan->node, "%zu vGPUs on node %d",
		    m.n_vgpus, m.node);
	FUZZ_ASSERT(strcmp(m.vgpus[0].mdev_uuid, MDEV_UUID) == 0 &&
			    strcmp(m.vgpus[0].vf, plan->vgpus[0].parent) == 0 &&
			    m.vgpus[0].type_id == plan->vgpus[0].type_id &&
			    m.vgpus[0].iface == plan->vgpus[0].iface,
		    "metadata vGPU differs from the plan");
	vgpu_meta_clear(&m);
	vgpu_cpuset_zero(&pinned);
	r = vgpu_domain_pinned_cpus(ctx, xml, &pinned);
	FUZZ_ASSERT(r == 0, "pinned CPUs of our output: %s", vgpu_ctx_error(ctx));
	/* <vcpu cpuset> is dropped and iothreadpins are kept: at least the plan's CPUs */
	FUZZ_ASSERT(vgpu_cpuset_subset(&plan->cpus, &pinned), "plan CPUs not pinned");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgpu_ctx ctx;
	struct vgpu_plan plan;
	unsigned pins[2];
	struct vgpu_domain_opts o = { 0 };
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	char *first = NULL, *second = NULL, *text;
	struct vgpu_cpuset pinned;
	struct vgpu_meta m;
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	vgpu_ctx_init(&ctx, NULL, NULL);
	fixed_plan(&plan, pins);
	/* the options vary with the length only, so the XML bytes stay free */
	o.name = size % 2 ? "fuzz-vm" : NULL;
	o.memory_kib = size % 4 >= 2 ? 4u << 20 : 0;
	o.hugepages = size % 8 >= 4;

	/* readers of other domains' XML take arbitrary text too */
	text = fuzz_cstr(data, size);
	vgpu_cpuset_zero(&pinned);
	(void)vgpu_domain_pinned_cpus(&ctx, text, &pinned);

	free(text);

	r = vgpu_domain_parse(&ctx, (const char *)data, size, "fuzz.xml", &doc);
	if (r == 0)
		(void)vgpu_domain_doc_is(doc, "fuzz-vm", MDEV_UUID);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -EFBIG, "parse r=%d", r);
		FUZZ_ASSERT(strcmp(vgpu_ctx_error(&ctx), "unknown error") != 0,
			    "parse failed without a message");
		goto out;
	}
	r = vgpu_domain_read_meta(&ctx, doc, &m);
	FUZZ_ASSERT(r == 0 || r == -ENOENT || r == -EINVAL, "read_meta r=%d", r);
	if (r == 0) {
		FUZZ_ASSERT(m.n_vgpus <= VGPU_MAX_VGPUS, "%zu vGPUs", m.n_vgpus);
		vgpu_meta_clear(&m);
	}
	{
		uint64_t kib;
		char *f = vgpu_domain_field(doc, "name");

		(void)vgpu_domain_memory_kib(&ctx, doc, &kib);
		free(f);
	}
	{
		/* the identities as vgpu_domain_plan() picks them for an existing domain */
		struct vgpu_request ids = { .mdev_uuids = { MDEV_UUID } };
		char *u = vgpu_domain_field(doc, "uuid");

		r = vgpu_plan_set_ids(&ctx, &plan, &ids, u, NULL, 0);
		free(u);
	}
	if (r == 0)
		r = vgpu_domain_build(&ctx, doc, &plan, &o);
	if (r < 0) {
		FUZZ_ASSERT(strcmp(vgpu_ctx_error(&ctx), "unknown error") != 0,
			    "build failed (%d) without a message", r);
		goto out;
	}
	r = vgpu_domain_format(&ctx, doc, &first);
	FUZZ_ASSERT(r == 0, "format: %s", vgpu_ctx_error(&ctx));
	FUZZ_ASSERT(hostdevs_with_uuid(doc, MDEV_UUID) == 1, "%zu hostdevs with mdev UUID %s",
		    hostdevs_with_uuid(doc, MDEV_UUID), MDEV_UUID);

	r = build_once(&ctx, first, strlen(first), &plan, &o, &second);
	FUZZ_ASSERT(r == 0, "our own output does not build again (%d): %s\n--- output ---\n%s", r,
		    vgpu_ctx_error(&ctx), first);
	if (!fuzz_strict() && strcmp(first, second) != 0 && same_but_blanks(first, second))
		goto out; /* the known blank-text indentation bug, above */
	FUZZ_ASSERT(strcmp(first, second) == 0,
		    "not a fixed point\n--- first ---\n%s--- second ---\n%s", first, second);
	check_meta(&ctx, first, &plan);
out:
	free(first);
	free(second);
	vgpu_ctx_clear(&ctx);
	return 0;
}
