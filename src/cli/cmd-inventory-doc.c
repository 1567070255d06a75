// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl inventory [--json]: the whole host in one document, read once:
 * its GPUs, VFs, vGPU types with what fits now, GPU instances, vGPUs with
 * their owners, the reservations that hold capacity, and the NUMA
 * topology.  The JSON document is versioned ("schema_version": 1,
 * docs/inventory.schema.json): within a version fields are only added;
 * renaming or removing one makes a new version.  Each array is what the
 * command of the same name prints with --json, so a script written against
 * one reads the other.
 */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "read-host.h"
#include "mig.h"
#include "vgpus.h"

#ifndef VGPUCTL_VERSION
#define VGPUCTL_VERSION "0"
#endif

#define INVENTORY_SCHEMA_VERSION 1

static const struct col gi_cols[] = {
	{ "GPU", "gpu", COL_STR, 0 },
	{ "GI", "gi", COL_NUM, COL_RIGHT },
	{ "PROFILE", "profile", COL_STR, 0 },
	{ "ID", "profile_id", COL_NUM, COL_RIGHT },
	{ "START", "start", COL_NUM, COL_RIGHT },
	{ "SIZE", "size", COL_NUM, COL_RIGHT },
	{ "VGPUS", "vgpus", COL_ARRAY, 0 },
	/* false: profile and start were inferred from sysfs, not told by NVML */
	{ "EXACT", "exact", COL_NUM, COL_JSON_ONLY },
};

static const char *const gi_desc[] = {
	"PCI address of the GPU",
	"GPU instance ID",
	"GPU instance profile",
	"its profile ID",
	"first memory slice of its placement",
	"memory slices it spans",
	"the vGPUs on it",
	"false: profile and start inferred from sysfs (NVML did not answer)",
};

const struct cli_columns cli_inventory_columns = CLI_COLUMNS(
	gi_cols, gi_desc,
	"(GPU instances; the other sections are the tables of gpus, vfs, types, vgpus and topology)");

/* The GIs the model holds (NVML's, else what sysfs and procfs tell): no tool is run. */
static int list_gis(struct cli *c)
{
	struct cli_table *t = cli_table(c, "gpu_instances", gi_cols, ARRAY_SIZE(gi_cols));
	const char *sep = c->json ? "\n" : ",";

	for (size_t i = 0; i < c->model->n_gpus; i++) {
		const struct vgpu_gpu *g = &c->model->gpus[i];
		VGPU_AUTOFREE struct vgpu_gi_user *users = NULL;
		size_t n_users = g->n_gis ? vgpu_host_gi_users(c->fs, c->model, g, &users) : 0;

		for (size_t k = 0; k < g->n_gis; k++) {
			const struct vgpu_gi *gi = &g->gis[k];
			struct cli_line *ln = cli_line_new(t);
			char *who = vgpu_xstrdup("");
			bool first = true;

			cli_cell_str(ln, 0, g->addr);
			cli_cell_num(ln, 1, gi->id, true);
			if (gi->profile) {
				cli_cell_str(ln, 2, gi->profile->name);
				cli_cell_num(ln, 3, gi->profile->id, true);
				cli_cell_num(ln, 5, gi->profile->size, true);
			}
			cli_cell_num(ln, 4, gi->start, gi->start >= 0);
			for (size_t u = 0; u < n_users; u++)
				if (users[u].gi == gi->id) {
					vgpu_append(&who, "%s%s", first ? "" : sep, users[u].who);
					first = false;
				}
			cli_cell(ln, 6, who);
			cli_cell_str(ln, 7, g->gis_exact ? "true" : "false");
		}
	}
	return cli_table_print(c, t);
}

/* "host": who answered, for a fleet's collector: host name, root read, our version */
static void host_member(struct cli *c)
{
	VGPU_AUTOFREE char *name = cli_host_name(c);

	fprintf(c->out, "{\n   \"schema_version\": %d,\n   \"host\": {\n      \"hostname\": ",
		INVENTORY_SCHEMA_VERSION);
	cli_json_str(c->out, name);
	fputs(",\n      \"sysroot\": ", c->out);
	cli_json_str(c->out, c->sysroot ? c->sysroot : "/");
	fputs(",\n      \"vgpuctl_version\": ", c->out);
	cli_json_str(c->out, VGPUCTL_VERSION);
	fputs(",\n      \"nvml\": ", c->out);
	fputs(c->nvml ? "true" : "false", c->out);
	fputs("\n   }", c->out);
}

enum section { S_GPUS, S_VFS, S_TYPES, S_GIS, S_VGPUS, S_RESERVATIONS, S_TOPOLOGY, S_N };

static int section(struct cli *c, const struct vgpu_rows *vg, enum section s)
{
	static char gpus[] = "gpus", vfs[] = "vfs", types[] = "types", topology[] = "topology";
	char *argv[2] = { NULL, NULL };

	switch (s) {
	case S_GPUS:
		argv[0] = gpus;
		return cmd_gpus(c, 1, argv);
	case S_VFS:
		argv[0] = vfs;
		return cmd_vfs(c, 1, argv);
	case S_TYPES:
		argv[0] = types;
		return cmd_types(c, 1, argv);
	case S_GIS:
		return list_gis(c);
	case S_VGPUS:
		return cli_list_vgpus(c, vg, "vgpus", ~0u);
	case S_RESERVATIONS:
		/* records whose vGPU is not there: capacity held for their owner */
		return cli_list_vgpus(c, vg, "reservations",
				      1u << VGPU_STATE_RESERVED | 1u << VGPU_STATE_MISSING |
					      1u << VGPU_STATE_INCOMING);
	case S_TOPOLOGY:
		argv[0] = topology;
		return cmd_topology(c, 1, argv);
	case S_N:
		break;
	}
	return EXIT_FAILURE;
}

int cmd_inventory(struct cli *c, int argc, char **argv)
{
	static const char *const titles[S_N] = { "GPUs",	  "VFs",   "vGPU types",
						 "GPU instances", "vGPUs", "Reservations",
						 "NUMA topology" };
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct cli_opts go = { .cmd = "inventory", .own = opts, .own_short = "h", .table = true };
	struct vgpu_rows vg;
	int r;

	while ((r = cli_getopt(c, &go, argc, argv)) != -1)
		return r == 'h' ? CLI_HELP : EXIT_USAGE;
	if (optind < argc)
		return cli_usage_error(c, "inventory", "unexpected argument '%s'", argv[optind]);
	if (c->columns)
		return cli_usage_error(
			c, "inventory",
			"--output: the inventory has several tables; name the columns of one command (gpus, vfs, types, vgpus, ...)");
	r = cli_read_host(c, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY | CLI_READ_NVML | CLI_READ_GPUS);
	if (r)
		return r;
	c->model_ready = true; /* one reading of the host for every section */
	if (c->json) {
		host_member(c);
		c->json_member = true;
	}
	/* the vgpus and reservations sections are two views of one set of rows */
	cli_vgpus_read(c, &vg);
	for (int s = 0; r == 0 && s < S_N; s++) {
		if (!c->json)
			fprintf(c->out, "%s%s:\n", s ? "\n" : "", titles[s]);
		r = section(c, &vg, (enum section)s);
	}
	vgpu_rows_clear(&vg);
	if (r)
		return r;
	if (c->json)
		fputs("\n}\n", c->out);
	return EXIT_SUCCESS;
}
