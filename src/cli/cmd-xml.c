// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl xml | plan: choose a VF for each requested vGPU profile, pin the
 * VM's vCPUs to whole cores of the GPU's NUMA node and write the libvirt
 * domain (xml) or explain the decision (plan).  Dry run: nothing changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "domxml.h"
#include "plan.h"
#include "virt.h"
#include "cmd-xml.h"

#ifndef VGPUCTL_TEMPLATE_DIRS
#define VGPUCTL_TEMPLATE_DIRS "/usr/share/vgpuctl"
#endif

/* The template (--template, the installed default) or the domain given with --from. */
int xml_load_template(struct cli *c, const struct xml_args *a, struct _xmlDoc **doc)
{
	VGPU_AUTOFREE char *buf = NULL;
	VGPU_AUTOFREE char *found = NULL;
	const char *path = a->from ? a->from : a->template;
	size_t len = 0;

	if (!path) {
		/* the installed copy (tests and scripts pass --template) */
		char dirs[] = VGPUCTL_TEMPLATE_DIRS;
		char *save = NULL;

		for (char *d = strtok_r(dirs, ":", &save); d && !found;
		     d = strtok_r(NULL, ":", &save)) {
			char *p = vgpu_asprintf("%s/domain.xml", d);

			if (access(p, R_OK) == 0)
				found = p;
			else
				free(p);
		}
		if (!found) {
			cli_error(
				c,
				"default template domain.xml not found in %s; use --template FILE",
				VGPUCTL_TEMPLATE_DIRS);
			return EXIT_FAILURE;
		}
		path = found;
	}
	if (vgpu_file_read(&c->ctx, path, VGPU_XML_MAX_SIZE + 1, &buf, &len) < 0 ||
	    vgpu_domain_parse(&c->ctx, buf, len, path, doc) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

/* What xml and plan cannot do without. */
static int xml_required(struct cli *c, const char *cmd, const struct xml_args *a)
{
	if (!a->vgpu_list)
		return cli_usage_error(c, cmd, "--vgpu PROFILE is required");
	if (!a->from && !a->dom.name)
		return cli_usage_error(c, cmd, "--name is required (or --from DOMAIN.xml)");
	if (!a->vcpus_arg)
		return cli_usage_error(c, cmd, "--vcpus N is required");
	if (!a->memory_arg && !a->from)
		return cli_usage_error(c, cmd, "--memory SIZE is required");
	return 0;
}

int xml_parse_args(struct cli *c, const char *cmd, int argc, char **argv, struct xml_args *a)
{
	enum {
		O_NAME = 256,
		O_VGPU,
		O_VCPUS,
		O_MEMORY,
		O_UUID,
		O_MDEV,
		O_GPU,
		O_VF,
		O_TEMPLATE,
		O_FROM,
		O_EXCLUDE,
		O_EMULATOR,
		O_HUGE,
		O_VIRT,
		O_NOPIN,
		O_PERSTART,
		O_DRYRUN
	};
	static const struct option opts[] = {
		{ "name", required_argument, NULL, O_NAME },
		{ "vgpu", required_argument, NULL, O_VGPU },
		{ "vcpus", required_argument, NULL, O_VCPUS },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "uuid", required_argument, NULL, O_UUID },
		{ "mdev-uuid", required_argument, NULL, O_MDEV },
		{ "gpu", required_argument, NULL, O_GPU },
		{ "vf", required_argument, NULL, O_VF },
		{ "template", required_argument, NULL, O_TEMPLATE },
		{ "from", required_argument, NULL, O_FROM },
		{ "exclude-cpus", required_argument, NULL, O_EXCLUDE },
		{ "emulator-cpus", required_argument, NULL, O_EMULATOR },
		{ "hugepages", no_argument, NULL, O_HUGE },
		{ "virt-type", required_argument, NULL, O_VIRT },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		/* assign / release only */
		{ "no-pin", no_argument, NULL, O_NOPIN },
		{ "per-start", no_argument, NULL, O_PERSTART },
		{ "dry-run", no_argument, NULL, O_DRYRUN },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct vgpu_cpuset s;
	int o, r;

	optind = 0; /* 0: a full reset, so DOMAIN may come before the options */
	while ((o = getopt_long(argc, argv, a->live ? "c:ho:" : "c:h", opts, NULL)) != -1) {
		if (!a->live && (o == O_NOPIN || o == O_PERSTART || o == O_DRYRUN))
			return cli_usage_error(c, cmd, "invalid option");
		switch (o) {
		case O_NOPIN:
			a->dom.no_pin = true;
			break;
		case O_PERSTART:
			a->dom.per_start = true;
			break;
		case O_DRYRUN:
			a->dry_run = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case O_NAME:
			if (vgpu_domain_name_check(optarg))
				return cli_usage_error(c, cmd,
						       "--name '%s': not a usable domain name (%s)",
						       optarg, vgpu_domain_name_check(optarg));
			a->dom.name = optarg;
			break;
		case O_VGPU:
			free(a->vgpu_list);
			a->vgpu_list = vgpu_xstrdup(optarg);
			break;
		case O_VCPUS:
			a->vcpus_arg = optarg;
			break;
		case O_MEMORY:
			a->memory_arg = optarg;
			break;
		case O_UUID:
			if (!vgpu_uuid_normalize(optarg, a->uuid))
				return cli_usage_error(c, cmd, "--uuid '%s': not a UUID", optarg);
			a->dom.uuid = a->uuid;
			break;
		case O_MDEV:
			if (a->n_mdev == VGPU_MAX_VGPUS)
				return cli_usage_error(c, cmd, "too many --mdev-uuid");
			if (!vgpu_uuid_normalize(optarg, a->mdev[a->n_mdev]))
				return cli_usage_error(c, cmd, "--mdev-uuid '%s': not a UUID",
						       optarg);
			for (size_t k = 0; k < a->n_mdev; k++)
				if (strcmp(a->mdev[k], a->mdev[a->n_mdev]) == 0)
					return cli_usage_error(
						c, cmd, "--mdev-uuid '%s' is given twice", optarg);
			a->dom.mdev_uuids[a->n_mdev] = a->mdev[a->n_mdev];
			a->n_mdev++;
			break;
		case O_GPU:
			a->req.gpu = optarg;
			break;
		case O_VF:
			a->req.vf = optarg;
			break;
		case O_TEMPLATE:
			a->template = optarg;
			break;
		case O_FROM:
			a->from = optarg;
			break;
		case O_EXCLUDE:
			if (vgpu_cpulist_parse(optarg, &s) < 0)
				return cli_usage_error(
					c, cmd, "--exclude-cpus '%s': not a CPU list", optarg);
			vgpu_cpuset_or(&a->req.exclude, &s);
			break;
		case O_EMULATOR:
			if (vgpu_cpulist_parse(optarg, &a->emulator) < 0 ||
			    vgpu_cpuset_empty(&a->emulator))
				return cli_usage_error(
					c, cmd, "--emulator-cpus '%s': not a CPU list", optarg);
			a->dom.emulator_cpus = &a->emulator;
			break;
		case O_HUGE:
			a->dom.hugepages = true;
			break;
		case O_VIRT:
			if (strcmp(optarg, "kvm") != 0 && strcmp(optarg, "qemu") != 0)
				return cli_usage_error(c, cmd, "--virt-type '%s': use kvm or qemu",
						       optarg);
			a->dom.virt_type = optarg;
			break;
		case 'c':
			a->uri = optarg;
			break;
		case 'h':
			return -1;
		default:
			return cli_usage_error(c, cmd, "invalid option");
		}
	}
	if (a->live && optind < argc && !a->domain)
		a->domain = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, cmd, "unexpected argument '%s'", argv[optind]);
	if (a->template && a->from)
		return cli_usage_error(c, cmd, "--template and --from exclude each other");
	r = a->live ? live_check_args(c, cmd, a) : xml_required(c, cmd, a);
	if (r)
		return r;
	if (a->vcpus_arg) {
		long v;

		if (vgpu_parse_long(a->vcpus_arg, &v) < 0 || v < 1 || v > 4096)
			return cli_usage_error(c, cmd, "--vcpus '%s': not a vCPU count (1-4096)",
					       a->vcpus_arg);
		a->req.vcpus = (unsigned)v;
	}
	if (a->memory_arg && vgpu_parse_size_kib(a->memory_arg, &a->dom.memory_kib) < 0)
		return cli_usage_error(
			c, cmd, "--memory '%s': not a size of 1 MiB or more (e.g. 32G, 4096M)",
			a->memory_arg);
	for (char *save = NULL, *p = a->vgpu_list ? strtok_r(a->vgpu_list, ",", &save) : NULL; p;
	     p = strtok_r(NULL, ",", &save)) {
		if (a->req.n_profiles == VGPU_MAX_VGPUS)
			return cli_usage_error(c, cmd, "--vgpu: at most %d vGPUs", VGPU_MAX_VGPUS);
		a->req.profiles[a->req.n_profiles++] = p;
	}
	if (a->vgpu_list && !a->req.n_profiles)
		return cli_usage_error(c, cmd, "--vgpu '': no profile given");
	a->req.hugepages = a->dom.hugepages;
	if (a->n_mdev > a->req.n_profiles)
		return cli_usage_error(c, cmd, "more --mdev-uuid than vGPUs");
	return 0;
}

/*
 * Plan with everything the host and the libvirt connection say is taken.
 * @doc (may be NULL) is the domain being edited: with -c, a domain of the
 * same name or UUID is the one being re-planned and its pins do not count.
 */
int xml_make_plan(struct cli *c, struct xml_args *a, struct _xmlDoc *doc, struct vgpu_plan **plan)
{
	int r = cli_read_host(c, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY);

	if (r)
		return r;
	vgpu_host_warn_unknown_types(&c->ctx, c->model);
	if (a->dom.emulator_cpus &&
	    !vgpu_cpuset_subset(a->dom.emulator_cpus, &c->model->topo.online)) {
		char list[256];
		struct vgpu_cpuset off = *a->dom.emulator_cpus;

		vgpu_cpuset_andnot(&off, &c->model->topo.online);
		cli_error(c, "--emulator-cpus: CPUs %s are not online on this host",
			  vgpu_cpulist_format(&off, list, sizeof(list)));
		return EXIT_FAILURE;
	}
	a->req.memory_kib = a->dom.memory_kib;
	if (!a->req.memory_kib && doc &&
	    vgpu_domain_memory_kib(&c->ctx, doc, &a->req.memory_kib) < 0)
		a->req.memory_kib = 0; /* unusable <memory>: the build says so */
	if (a->uri) {
		VGPU_AUTOFREE char *name = a->dom.name || !doc ? NULL :
								 vgpu_domain_field(doc, "name");
		VGPU_AUTOFREE char *uuid = a->dom.uuid || !doc ? NULL :
								 vgpu_domain_field(doc, "uuid");
		VGPU_AUTOPTR(virt) v = NULL;

		if (vgpu_virt_open(&c->ctx, a->uri, &v) < 0 ||
		    vgpu_virt_pinned_cpus(&c->ctx, v, a->dom.name ? a->dom.name : name,
					  a->dom.uuid ? a->dom.uuid : uuid, &a->req.exclude) < 0) {
			cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
	}
	if (vgpu_plan_make(&c->ctx, c->model, &a->req, plan) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

int cmd_xml(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { 0 };
	VGPU_AUTOPTR(plan) plan = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *out = NULL;
	int r;

	r = xml_parse_args(c, "xml", argc, argv, &a);
	if (!r)
		r = xml_load_template(c, &a, &doc);
	if (!r)
		r = xml_make_plan(c, &a, doc, &plan);
	if (!r && (vgpu_domain_build(&c->ctx, doc, plan, &a.dom) < 0 ||
		   vgpu_domain_format(&c->ctx, doc, &out) < 0)) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		r = EXIT_FAILURE;
	}
	if (!r)
		fputs(out, c->out);
	free(a.vgpu_list);
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
	char topo[64];
	int r;

	r = xml_parse_args(c, "plan", argc, argv, &a);
	if (!r && a.from)
		r = xml_load_template(c, &a, &doc);
	if (!r)
		r = xml_make_plan(c, &a, doc, &plan);
	free(a.vgpu_list);
	if (r)
		return r;
	vgpu_cpulist_format(&plan->cpus, cpus, VGPU_CPULIST_LEN);
	snprintf(topo, sizeof(topo), "%ux%u", plan->cores, plan->threads);
	if (!c->json) {
		for (size_t i = 0; i < plan->n_vgpus; i++) {
			const struct vgpu_choice *v = &plan->vgpus[i];

			fprintf(c->out, "vGPU %zu: %s (type %u, %s, %s) on VF %s of GPU %s\n",
				i + 1, v->profile, v->type_id, vgpu_backing_str(v->backing),
				vgpu_iface_str(v->iface), v->parent, v->gpu);
		}
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
		char *pins = NULL;
		size_t pl = 0;
		FILE *pf = open_memstream(&pins, &pl);

		if (!pf)
			return EXIT_FAILURE;
		for (unsigned k = 0; k < plan->vcpus; k++)
			fprintf(pf, "%s%u", k ? "," : "", plan->pins[k]);
		fclose(pf);
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
