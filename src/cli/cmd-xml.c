// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl xml | plan: choose a VF for each requested vGPU profile, pin the
 * VM's vCPUs to whole cores of the GPU's NUMA node and write the libvirt
 * domain (xml) or explain the decision (plan).  Dry run: nothing changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "cleanup.h"
#include "domain-args.h"
#include "virt.h"

/* What xml and plan cannot do without. */
static int xml_required(struct cli *c, const char *cmd, const struct xml_args *a)
{
	if (!a->vgpu_list)
		return cli_usage_error(c, cmd, "--vgpu PROFILE is required");
	if (!a->from && !a->dom.name)
		return cli_usage_error(c, cmd, "--name is required (or --from DOMAIN.xml)");
	if (!a->vcpus_arg && !a->from)
		return cli_usage_error(c, cmd, "--vcpus N is required (or --from DOMAIN.xml)");
	if (!a->memory_arg && !a->from)
		return cli_usage_error(c, cmd, "--memory SIZE is required");
	return 0;
}

/*
 * Plan with everything the host and the libvirt connection say is taken.
 * @doc (may be NULL) is the domain being edited (--from: an existing one),
 * read into *@dom once for the plan and the edit.
 */
static int make_plan(struct cli *c, struct xml_args *a, struct _xmlDoc *doc,
		     struct vgpu_domain_info *dom, struct vgpu_plan **plan)
{
	VGPU_AUTOPTR(virt) v = NULL;

	if ((!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) ||
	    (a->uri && vgpu_virt_open_host(&c->ctx, a->uri, c->fs, &v) < 0)) {
		cli_error(c, "%s%s", vgpu_ctx_error(&c->ctx), xml_error_hint(&c->ctx));
		return EXIT_FAILURE;
	}
	if (doc)
		vgpu_domain_read(c->fs, doc, dom);
	if (xml_fabric(c, a) < 0 ||
	    vgpu_domain_plan(&c->ctx, c->fs, v, doc ? dom : NULL, a->from != NULL, &a->req, &a->dom,
			     NULL, plan) < 0) {
		cli_error(c, "%s%s", vgpu_ctx_error(&c->ctx), xml_error_hint(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

/* The options, checked for what xml and plan need. */
static int parse_args(struct cli *c, const char *cmd, int argc, char **argv, struct xml_args *a)
{
	int r = xml_parse_args(c, cmd, argc, argv, a);

	return r ? r : xml_required(c, cmd, a);
}

int cmd_xml(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { 0 };
	VGPU_AUTOPTR(plan) plan = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *out = NULL;
	struct vgpu_domain_info dom = { 0 };
	int r;

	r = parse_args(c, "xml", argc, argv, &a);
	if (!r)
		r = xml_load_template(c, &a, &doc);
	if (!r)
		r = make_plan(c, &a, doc, &dom, &plan);
	a.dom.existing = a.from != NULL; /* --from edits a domain: keep what it replaces */
	a.dom.read = &dom;
	if (!r && (vgpu_domain_build(&c->ctx, doc, plan, &a.dom) < 0 ||
		   vgpu_domain_format(&c->ctx, doc, &out) < 0)) {
		cli_error(c, "%s%s", vgpu_ctx_error(&c->ctx), xml_error_hint(&c->ctx));
		r = EXIT_FAILURE;
	}
	if (!r)
		fputs(out, c->out);
	vgpu_domain_info_clear(&dom);
	free(a.vgpu_list);
	vgpu_fabric_clear(&a.fabric);
	return r;
}
static const struct col plan_cols[] = {
	{ "VF", "vf", COL_STR, false },
	{ "GPU", "gpu", COL_STR, false },
	{ "PROFILE", "profile", COL_STR, false },
	{ "TYPE", "type_id", COL_NUM, true },
	{ "INTERFACE", "interface", COL_STR, false },
	{ "BACKING", "backing", COL_STR, false },
	{ "NODE", "numa_node", COL_NUM, true },
	{ "CPUS", "cpus", COL_STR, false },
	{ "VCPUS", "vcpus", COL_NUM, true },
	{ "TOPOLOGY", "topology", COL_STR, false },
	{ "PINS", "pins", COL_STR, false },
	{ "REASON", "reason", COL_STR, false },
};

int cmd_plan(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { 0 };
	VGPU_AUTOPTR(plan) plan = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *cpus = vgpu_xmalloc(VGPU_CPULIST_LEN);
	struct vgpu_domain_info dom = { 0 };
	char topo[64];
	int r;

	r = parse_args(c, "plan", argc, argv, &a);
	if (!r && a.from)
		r = xml_load_template(c, &a, &doc);
	if (!r)
		r = make_plan(c, &a, doc, &dom, &plan);
	vgpu_domain_info_clear(&dom);
	free(a.vgpu_list);
	vgpu_fabric_clear(&a.fabric);
	if (r)
		return r;
	vgpu_cpulist_format(&plan->cpus, cpus, VGPU_CPULIST_LEN);
	snprintf(topo, sizeof(topo), "%ux%u", plan->cores, plan->threads);
	if (!c->json) {
		for (size_t i = 0; i < plan->n_vgpus; i++) {
			const struct vgpu_choice *v = &plan->vgpus[i];

			if (strcmp(v->parent, v->gpu) == 0) /* no SR-IOV: the PF is the parent */
				fprintf(c->out, "vGPU %zu: %s (type %u, %s, %s) on GPU %s itself\n",
					i + 1, v->profile, v->type_id, vgpu_backing_str(v->backing),
					vgpu_iface_str(v->iface), v->gpu);
			else
				fprintf(c->out,
					"vGPU %zu: %s (type %u, %s, %s) on VF %s of GPU %s\n",
					i + 1, v->profile, v->type_id, vgpu_backing_str(v->backing),
					vgpu_iface_str(v->iface), v->parent, v->gpu);
		}
		if (plan->n_cells) /* a mirrored guest: one cell per node of its GPUs */
			for (size_t k = 0; k < plan->n_cells; k++) {
				const struct vgpu_plan_cell *cl = &plan->cells[k];

				fprintf(c->out,
					"Guest cell %zu: NUMA node %d (memory strict), vCPUs %u-%u, %u vGPU%s\n",
					k, cl->node, cl->first, cl->first + cl->slots - 1,
					cl->n_vgpus, cl->n_vgpus == 1 ? "" : "s");
			}
		else
			fprintf(c->out, "NUMA node: %d (memory strict)\n", plan->node);
		fprintf(c->out, "CPUs: %s (%u vCPUs as %u cores x %u threads)\n", cpus, plan->vcpus,
			plan->cores, plan->threads);
		fputs("Pinning:", c->out);
		for (unsigned i = 0; i < plan->vcpus; i++)
			fprintf(c->out, " %u->%u", i, plan->pins[i]);
		fprintf(c->out, "\nWhy: %s\n", plan->reason);
		return 0;
	}
	struct cli_table *tb = cli_table(c, "plan", plan_cols, ARRAY_SIZE(plan_cols));

	if (!tb)
		return EXIT_FAILURE;
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_choice *v = &plan->vgpus[i];
		struct cli_line *ln = cli_line_new(tb);
		char *pins = vgpu_xstrdup("");

		for (unsigned k = 0; k < plan->vcpus; k++)
			vgpu_append(&pins, "%s%u", k ? "," : "", plan->pins[k]);
		cli_cell_str(ln, 0, v->parent);
		cli_cell_str(ln, 1, v->gpu);
		cli_cell_str(ln, 2, v->profile);
		cli_cell_num(ln, 3, v->type_id, true);
		cli_cell_str(ln, 4, vgpu_iface_str(v->iface));
		cli_cell_str(ln, 5, vgpu_backing_str(v->backing));
		cli_cell_num(ln, 6, plan->node, true);
		cli_cell_str(ln, 7, cpus);
		cli_cell_num(ln, 8, plan->vcpus, true);
		cli_cell_str(ln, 9, topo);
		cli_cell(ln, 10, pins);
		cli_cell_str(ln, 11, plan->reason);
	}
	return cli_table_print(c, tb);
}
