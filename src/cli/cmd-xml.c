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

#include <libxml/tree.h>

#include "cleanup.h"
#include "cli.h"
#include "vgpu-priv.h"

#ifndef VGPUCTL_TEMPLATE_DIRS
#define VGPUCTL_TEMPLATE_DIRS "/usr/share/vgpuctl"
#endif

struct xml_args {
	struct vgpu_request req;
	struct vgpu_domain_opts dom;
	const char *vcpus_arg, *memory_arg, *template, *from, *uri;
	struct vgpu_cpuset emulator;
	char *vgpu_list; /* strdup'ed --vgpu, split in place */
	size_t n_mdev;
};

static int load_template(struct cli *c, const struct xml_args *a, xmlDocPtr *doc)
{
	VGPU_AUTOFREE char *buf = NULL;
	VGPU_AUTOFREE char *found = NULL;
	const char *path = a->from ? a->from : a->template;
	char err[1024];
	size_t len = 0;
	int r;

	if (!path) {
		/* installed copy first, then the source tree this binary was built from */
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
	r = vgpu_read_file_at(AT_FDCWD, path, &buf, &len);
	if (r < 0) {
		cli_error(c, "cannot read '%s': %s", path, strerror(-r));
		return EXIT_FAILURE;
	}
	if (vgpu_domain_parse(buf, len, path, doc, err, sizeof(err)) < 0) {
		cli_error(c, "%s", err);
		return EXIT_FAILURE;
	}
	return 0;
}

static int parse_args(struct cli *c, const char *cmd, int argc, char **argv, struct xml_args *a)
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
		O_VIRT
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
		{ 0 },
	};
	struct vgpu_cpuset s;
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (o) {
		case O_NAME:
			if (!*optarg || strlen(optarg) > 200 || strchr(optarg, '/'))
				return cli_usage_error(
					c, cmd, "--name '%s': not a usable domain name", optarg);
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
			if (!vgpu_uuid_valid(optarg))
				return cli_usage_error(c, cmd, "--uuid '%s': not a UUID", optarg);
			a->dom.uuid = optarg;
			break;
		case O_MDEV:
			if (!vgpu_uuid_valid(optarg))
				return cli_usage_error(c, cmd, "--mdev-uuid '%s': not a UUID",
						       optarg);
			if (a->n_mdev == VGPU_MAX_VGPUS)
				return cli_usage_error(c, cmd, "too many --mdev-uuid");
			a->dom.mdev_uuids[a->n_mdev++] = optarg;
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
	if (optind < argc)
		return cli_usage_error(c, cmd, "unexpected argument '%s'", argv[optind]);
	if (a->template && a->from)
		return cli_usage_error(c, cmd, "--template and --from exclude each other");
	if (!a->vgpu_list)
		return cli_usage_error(c, cmd, "--vgpu PROFILE is required");
	if (!a->from && !a->dom.name)
		return cli_usage_error(c, cmd, "--name is required (or --from DOMAIN.xml)");
	if (!a->vcpus_arg)
		return cli_usage_error(c, cmd, "--vcpus N is required");
	{
		long v;

		if (vgpu_parse_long(a->vcpus_arg, &v) < 0 || v < 1 || v > 4096)
			return cli_usage_error(c, cmd, "--vcpus '%s': not a vCPU count (1-4096)",
					       a->vcpus_arg);
		a->req.vcpus = (unsigned)v;
	}
	if (!a->memory_arg && !a->from)
		return cli_usage_error(c, cmd, "--memory SIZE is required");
	if (a->memory_arg && vgpu_parse_size_kib(a->memory_arg, &a->dom.memory_kib) < 0)
		return cli_usage_error(c, cmd, "--memory '%s': not a size (e.g. 32G, 4096M)",
				       a->memory_arg);
	for (char *save = NULL, *p = strtok_r(a->vgpu_list, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		if (a->req.n_profiles == VGPU_MAX_VGPUS)
			return cli_usage_error(c, cmd, "--vgpu: at most %d vGPUs", VGPU_MAX_VGPUS);
		a->req.profiles[a->req.n_profiles++] = p;
	}
	if (!a->req.n_profiles)
		return cli_usage_error(c, cmd, "--vgpu '': no profile given");
	if (a->n_mdev > a->req.n_profiles)
		return cli_usage_error(c, cmd, "more --mdev-uuid than vGPUs");
	return 0;
}

/* Text of <domain>'s child @name, or NULL. Caller frees. */
static char *domain_field(xmlDocPtr doc, const char *name)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);

	for (xmlNodePtr n = root ? root->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !n->ns && xmlStrEqual(n->name, BAD_CAST name)) {
			xmlChar *c = xmlNodeGetContent(n);
			char *r = c ? vgpu_xstrdup(vgpu_strip((char *)c)) : NULL;

			xmlFree(c);
			return r;
		}
	return NULL;
}

/*
 * Plan with everything the host and the libvirt connection say is taken.
 * @doc (may be NULL) is the domain being edited: with -c, a domain of the
 * same name or UUID is the one being re-planned and its pins do not count.
 */
static int make_plan(struct cli *c, struct xml_args *a, xmlDocPtr doc, struct vgpu_plan *plan)
{
	int r = cli_scan_host(c, CLI_SCAN_TYPES | CLI_SCAN_TOPOLOGY);

	if (r)
		return r;
	a->req.memory_kib = a->dom.memory_kib;
	if (!a->req.memory_kib && doc && vgpu_domain_memory_kib(doc, &a->req.memory_kib) < 0)
		a->req.memory_kib = 0; /* unusable <memory>: the build says so */
	if (a->uri) {
		VGPU_AUTOFREE char *name = a->dom.name || !doc ? NULL : domain_field(doc, "name");
		VGPU_AUTOFREE char *uuid = a->dom.uuid || !doc ? NULL : domain_field(doc, "uuid");
		struct vgpu_virt *v = NULL;
		char err[1024];

		if (vgpu_virt_open(a->uri, &v, err, sizeof(err)) < 0 ||
		    vgpu_virt_pinned_cpus(v, a->dom.name ? a->dom.name : name,
					  a->dom.uuid ? a->dom.uuid : uuid, &a->req.exclude, err,
					  sizeof(err)) < 0) {
			vgpu_virt_close(v);
			cli_error(c, "%s", err);
			return EXIT_FAILURE;
		}
		vgpu_virt_close(v);
	}
	if (vgpu_plan_make(c->host, &a->req, plan) < 0) {
		cli_error(c, "%s", vgpu_last_error(c->host));
		return EXIT_FAILURE;
	}
	for (char *w = plan->warnings, *save = NULL, *l = strtok_r(w, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		cli_warn_cb(c, l);
	if (a->dom.hugepages) {
		const struct vgpu_node *nd =
			vgpu_topology_node(vgpu_host_topology(c->host), plan->node);
		unsigned long long need = a->dom.memory_kib / (1024 * 1024);

		if (nd && nd->hugepages_1g_free >= 0 &&
		    (unsigned long long)nd->hugepages_1g_free < need) {
			char msg[256];

			snprintf(msg, sizeof(msg),
				 "NUMA node %d has %ld free 1 GiB hugepages, the VM needs %llu; it "
				 "will not start until they are reserved",
				 plan->node, nd->hugepages_1g_free, need);
			cli_warn_cb(c, msg);
		}
	}
	return 0;
}

int cmd_xml(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { 0 };
	VGPU_AUTOFREE struct vgpu_plan *plan = calloc(1, sizeof(*plan));
	VGPU_AUTOFREE char *out = NULL;
	xmlDocPtr doc = NULL;
	char err[1024];
	int r;

	if (!plan)
		return EXIT_FAILURE;
	r = parse_args(c, "xml", argc, argv, &a);
	if (r)
		goto done;
	r = load_template(c, &a, &doc);
	if (r)
		goto done;
	r = make_plan(c, &a, doc, plan);
	if (r)
		goto done;
	if (vgpu_domain_build(doc, plan, &a.dom, err, sizeof(err)) < 0) {
		cli_error(c, "%s", err);
		r = EXIT_FAILURE;
		goto done;
	}
	if (vgpu_domain_format(doc, &out) < 0) {
		r = EXIT_FAILURE;
		goto done;
	}
	fputs(out, c->out);
done:
	xmlFreeDoc(doc);
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
	VGPU_AUTOFREE struct vgpu_plan *plan = calloc(1, sizeof(*plan));
	char cpus[VGPU_CPULIST_LEN], topo[64];
	int r;

	if (!plan)
		return EXIT_FAILURE;
	xmlDocPtr doc = NULL;

	r = parse_args(c, "plan", argc, argv, &a);
	if (!r && a.from)
		r = load_template(c, &a, &doc);
	if (!r)
		r = make_plan(c, &a, doc, plan);
	xmlFreeDoc(doc);
	free(a.vgpu_list);
	if (r)
		return r;
	vgpu_cpulist_format(&plan->cpus, cpus, sizeof(cpus));
	snprintf(topo, sizeof(topo), "%ux%u", plan->cores, plan->threads);
	if (!c->json) {
		for (size_t i = 0; i < plan->n_vgpus; i++) {
			const struct vgpu_vf *vf = plan->vgpus[i].vf;
			const struct vgpu_type *t = plan->vgpus[i].type;

			fprintf(c->out, "vGPU %zu: %s (type %u, %s, %s) on VF %s of GPU %s\n",
				i + 1, t->info.profile, t->id, vgpu_backing_str(t->info.backing),
				vgpu_iface_str(vf->iface), vf->addr, vf->gpu->addr);
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
	struct cli_table *tb =
		cli_table(c, "plan", plan_cols, sizeof(plan_cols) / sizeof(plan_cols[0]));

	if (!tb)
		return EXIT_FAILURE;
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_vf *vf = plan->vgpus[i].vf;
		const struct vgpu_type *t = plan->vgpus[i].type;
		struct cli_line *ln = cli_line_new(tb);
		char *pins = NULL;
		size_t pl = 0;
		FILE *pf = open_memstream(&pins, &pl);

		if (!pf)
			return EXIT_FAILURE;
		for (unsigned k = 0; k < plan->vcpus; k++)
			fprintf(pf, "%s%u", k ? "," : "", plan->pins[k]);
		fclose(pf);
		cli_cell_str(ln, 0, vf->addr);
		cli_cell_str(ln, 1, vf->gpu->addr);
		cli_cell_str(ln, 2, t->info.profile);
		cli_cell_num(ln, 3, t->id, true);
		cli_cell_str(ln, 4, vgpu_iface_str(vf->iface));
		cli_cell_str(ln, 5, vgpu_backing_str(t->info.backing));
		cli_cell_num(ln, 6, plan->node, true);
		cli_cell_str(ln, 7, cpus);
		cli_cell_num(ln, 8, plan->vcpus, true);
		cli_cell_str(ln, 9, topo);
		cli_cell(ln, 10, pins);
		cli_cell_str(ln, 11, plan->reason);
	}
	return cli_table_print(c, tb);
}
