// SPDX-License-Identifier: GPL-2.0-or-later
/* vgpuctl gpus | vfs | topology: host inventory. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"

/* Commands without options of their own still take -h and the table's. */
static int no_options(struct cli *c, int argc, char **argv, const char *cmd, int max_args)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct cli_opts g = { .cmd = cmd, .own = opts, .own_short = "h", .table = true };
	int o;

	while ((o = cli_getopt(c, &g, argc, argv)) != -1)
		return o == 'h' ? CLI_HELP : EXIT_USAGE;
	if (argc - optind > max_args)
		return cli_usage_error(c, cmd, "unexpected argument '%s'", argv[optind + max_args]);
	return 0;
}

static const struct col gpu_cols[] = {
	{ "ADDRESS", "address", COL_STR, false },
	{ "INDEX", "index", COL_NUM, true },
	{ "MODEL", "model", COL_STR, false },
	{ "VENDOR", "vendor_id", COL_STR, false },
	{ "DEVICE", "device_id", COL_STR, false },
	{ "NODE", "numa_node", COL_NUM, true },
	{ "CPUS", "cpus", COL_STR, false },
	{ "DRIVER", "driver", COL_STR, false },
	{ "GROUP", "iommu_group", COL_NUM, true },
	{ "TOTALVFS", "sriov_total_vfs", COL_NUM, true },
	{ "NUMVFS", "sriov_num_vfs", COL_NUM, true },
	{ "INTERFACE", "interface", COL_STR, false },
	{ "GIS", "mig_instances", COL_NUM, true },
	/* JSON: {"current": ..., "pending": ...} or "unknown", written whole (raw) */
	{ "MIG", "mig_mode", COL_NUM, false },
};

static const char *const gpu_desc[] = {
	"PCI address of the GPU (physical function)",
	"NVIDIA's index: the GPU's place in PCI bus order, as nvidia-smi numbers it",
	"model name (/proc/driver/nvidia, else a built-in table)",
	"PCI vendor ID",
	"PCI device ID",
	"NUMA node",
	"the node's CPUs (local_cpulist)",
	"kernel driver bound",
	"IOMMU group",
	"SR-IOV VFs the GPU has",
	"SR-IOV VFs enabled",
	"vGPU interface: mdev or vendor-vfio",
	"MIG GPU instances (the driver's capability tree)",
	"MIG mode as NVML says it, with a pending change; unknown without NVML",
};

const struct cli_columns cli_gpus_columns = CLI_COLUMNS(gpu_cols, gpu_desc, NULL);

static const char *mode_word(enum vgpu_tristate t)
{
	return t == VGPU_ON ? "enabled" : t == VGPU_OFF ? "disabled" : "unknown";
}

/* MIG mode as NVML says it: "enabled", "disabled (pending enabled)", "unknown" */
static void mig_cell(const struct cli *c, struct cli_line *ln, size_t col, const struct vgpu_gpu *g)
{
	char buf[80];

	if (g->mig_current == VGPU_UNKNOWN)
		snprintf(buf, sizeof(buf), c->json ? "\"unknown\"" : "unknown");
	else if (c->json)
		snprintf(buf, sizeof(buf), "{\"current\": \"%s\", \"pending\": \"%s\"}",
			 mode_word(g->mig_current), mode_word(g->mig_pending));
	else if (g->mig_pending != g->mig_current && g->mig_pending != VGPU_UNKNOWN)
		snprintf(buf, sizeof(buf), "%s (pending %s)", mode_word(g->mig_current),
			 mode_word(g->mig_pending));
	else
		snprintf(buf, sizeof(buf), "%s", mode_word(g->mig_current));
	cli_cell_str(ln, col, buf);
}

int cmd_gpus(struct cli *c, int argc, char **argv)
{
	struct cli_table *tb;
	const struct vgpu_gpu *g;
	size_t n;
	int r = no_options(c, argc, argv, "gpus", 0);

	if (r)
		return r;
	r = cli_read_host(c, CLI_READ_NVML | CLI_READ_GPUS);
	if (r)
		return r;
	g = c->model->gpus;
	n = c->model->n_gpus;
	tb = cli_table(c, "gpus", gpu_cols, ARRAY_SIZE(gpu_cols));
	if (!tb)
		return EXIT_FAILURE;
	for (size_t i = 0; i < n; i++) {
		struct cli_line *ln = cli_line_new(tb);
		char buf[VGPU_CPULIST_LEN];

		cli_cell_str(ln, 0, g[i].addr);
		cli_cell_num(ln, 1, vgpu_model_gpu_index(c->model, &g[i]),
			     vgpu_model_gpu_index(c->model, &g[i]) >= 0);
		cli_cell_str(ln, 2, g[i].model);
		snprintf(buf, sizeof(buf), "%04x", g[i].vendor_id);
		cli_cell_str(ln, 3, buf);
		snprintf(buf, sizeof(buf), "%04x", g[i].device_id);
		cli_cell_str(ln, 4, buf);
		cli_cell_num(ln, 5, g[i].numa_node, g[i].numa_node >= 0);
		if (g[i].has_cpus)
			cli_cell_str(ln, 6, vgpu_cpulist_format(&g[i].cpus, buf, sizeof(buf)));
		cli_cell_str(ln, 7, g[i].driver);
		cli_cell_num(ln, 8, g[i].iommu_group, g[i].iommu_group >= 0);
		cli_cell_num(ln, 9, g[i].sriov_total_vfs, g[i].sriov_total_vfs >= 0);
		cli_cell_num(ln, 10, g[i].sriov_num_vfs, g[i].sriov_num_vfs >= 0);
		cli_cell_str(ln, 11, vgpu_iface_str(g[i].iface));
		cli_cell_num(ln, 12, g[i].mig_instances, g[i].mig_instances >= 0);
		mig_cell(c, ln, 13, &g[i]);
	}
	return cli_table_print(c, tb);
}

static const struct col vf_cols[] = {
	{ "ADDRESS", "address", COL_STR, false },
	{ "GPU", "gpu", COL_STR, false },
	{ "INDEX", "index", COL_NUM, true },
	{ "NODE", "numa_node", COL_NUM, true },
	{ "GROUP", "iommu_group", COL_NUM, true },
	{ "INTERFACE", "interface", COL_STR, false },
	{ "STATE", "state", COL_STR, false },
	{ "TYPE", "type_id", COL_NUM, true },
	{ "MDEVTYPE", "mdev_type", COL_STR, COL_JSON_ONLY },
	{ "PROFILE", "profile", COL_STR, false },
	{ "MDEV", "mdev_uuid", COL_STR, false },
};

static const char *const vf_desc[] = {
	"PCI address of the VF (the PF itself on a GPU without SR-IOV)",
	"its GPU",
	"VF number (virtfnN); none for a PF",
	"NUMA node",
	"IOMMU group",
	"vGPU interface: mdev or vendor-vfio",
	"free, in-use or unknown",
	"vGPU type ID it holds",
	"mdev type name (nvidia-ID)",
	"profile of the type it holds",
	"mdev UUIDs on it",
};

const struct cli_columns cli_vfs_columns = CLI_COLUMNS(vf_cols, vf_desc, NULL);

void cli_hint_vfs_off(struct cli *c, const struct vgpu_gpu *only)
{
	char *list = NULL;
	size_t n = 0;

	for (size_t i = 0; i < c->model->n_gpus; i++) {
		const struct vgpu_gpu *g = &c->model->gpus[i];

		if ((only && g != only) || g->sriov_total_vfs <= 0 || g->sriov_num_vfs != 0 ||
		    g->n_parents)
			continue;
		vgpu_append(&list, "%s%s", n++ ? ", " : "", g->addr);
	}
	/* a notice through the log: said once, though inventory lists VFs and types */
	if (n)
		vgpu_log(
			&c->ctx, LOG_NOTICE,
			"hint: SR-IOV VFs are off on GPU %s: no VFs and no vGPU types to list; enable them with 'vgpuctl apply' (a vgpu-configs entry) or NVIDIA's 'sriov-manage -e %s'",
			list, n == 1 ? list : "ALL");
	free(list);
}

int cmd_vfs(struct cli *c, int argc, char **argv)
{
	struct cli_table *tb;
	const struct vgpu_gpu *g, *only = NULL;
	size_t n;
	int r = no_options(c, argc, argv, "vfs", 1);

	if (r)
		return r;
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_GPUS);
	if (r)
		return r;
	cli_name_held_types(c);
	if (optind < argc) {
		only = vgpu_model_find_gpu_arg(c->model, argv[optind]);
		if (!only) {
			cli_error(c, "GPU '%s' not found (see 'vgpuctl gpus')", argv[optind]);
			return EXIT_FAILURE;
		}
	}
	g = c->model->gpus;
	n = c->model->n_gpus;
	tb = cli_table(c, "vfs", vf_cols, ARRAY_SIZE(vf_cols));
	if (!tb)
		return EXIT_FAILURE;
	for (size_t i = 0; i < n; i++) {
		if (only && only != &g[i])
			continue;
		for (size_t j = 0; j < g[i].n_parents; j++) {
			const struct vgpu_parent *vf = &g[i].parents[j];
			const struct vgpu_type *t =
				vf->current_type ?
					vgpu_model_find_type(c->model, &g[i], vf->current_type) :
					NULL;
			struct cli_line *ln = cli_line_new(tb);

			cli_cell_str(ln, 0, vf->addr);
			cli_cell_str(ln, 1, g[i].addr);
			cli_cell_num(ln, 2, vf->index, vf->index >= 0);
			cli_cell_num(ln, 3, vf->numa_node, vf->numa_node >= 0);
			cli_cell_num(ln, 4, vf->iommu_group, vf->iommu_group >= 0);
			cli_cell_str(ln, 5, vgpu_iface_str(vf->iface));
			cli_cell_str(ln, 6, vgpu_parent_state_str(vf));
			cli_cell_num(ln, 7, vf->current_type, vf->current_type != 0);
			if (vf->current_type && vf->iface == VGPU_IFACE_MDEV)
				cli_cell(ln, 8, vgpu_asprintf("nvidia-%u", vf->current_type));
			if (t && t->name)
				cli_cell_str(ln, 9, t->info.profile);
			if (vf->mdevs.n) {
				char *list = NULL;

				for (size_t k = 0; k < vf->mdevs.n; k++)
					vgpu_append(&list, "%s%s", k ? "," : "",
						    vf->mdevs.items[k]);
				cli_cell(ln, 10, list);
			}
		}
	}
	cli_hint_vfs_off(c, only);
	return cli_table_print(c, tb);
}

static const struct col topo_cols[] = {
	{ "NODE", "node", COL_NUM, true },
	{ "CPUS", "cpus", COL_STR, false },
	{ "CORES", "cores", COL_NUM, true },
	{ "THREADS", "threads_per_core", COL_NUM, true },
	{ "MEMORY", "memory_mib", COL_SIZE_MIB, true },
	{ "HP1G", "hugepages_1g_total", COL_NUM, true },
	{ "HP1GFREE", "hugepages_1g_free", COL_NUM, true },
	{ "GPUS", "gpus", COL_ARRAY, false },
	{ "SIBLINGS", "siblings", COL_ARRAY, false },
};

static const char *const topo_desc[] = {
	"NUMA node",
	"its online CPUs",
	"its cores",
	"most threads of one core",
	"its memory (-b: bytes)",
	"1 GiB huge pages",
	"free 1 GiB huge pages",
	"GPUs on the node",
	"CPUs of each core (thread siblings)",
};

const struct cli_columns cli_topology_columns = CLI_COLUMNS(topo_cols, topo_desc, NULL);

int cmd_topology(struct cli *c, int argc, char **argv)
{
	const struct vgpu_topology *t;
	struct cli_table *tb;
	const struct vgpu_gpu *g;
	size_t ng;
	int r = no_options(c, argc, argv, "topology", 0);

	if (r)
		return r;
	r = cli_read_host(c, VGPU_READ_TOPOLOGY);
	if (r)
		return r;
	t = &c->model->topo;
	g = c->model->gpus;
	ng = c->model->n_gpus;
	tb = cli_table(c, "topology", topo_cols, ARRAY_SIZE(topo_cols));
	if (!tb)
		return EXIT_FAILURE;
	for (size_t i = 0; i < t->n_nodes; i++) {
		const struct vgpu_node *nd = &t->nodes[i];
		struct cli_line *ln = cli_line_new(tb);
		char *gpus = vgpu_xstrdup(""), *sib = vgpu_xstrdup("");
		unsigned cores = 0, maxthreads = 0;
		/* JSON arrays are split on newlines; text keeps one line per node */
		const char *sep = c->json ? "\n" : " ";
		char buf[VGPU_CPULIST_LEN];

		cli_cell_num(ln, 0, nd->id, true);
		cli_cell_str(ln, 1, vgpu_cpulist_format(&nd->cpus, buf, sizeof(buf)));
		vgpu_topology_for_each_core(t, &nd->cpus, cpu)
		{
			struct vgpu_cpuset core;
			unsigned nt;

			vgpu_topology_core_cpus(t, cpu, &core);
			nt = vgpu_cpuset_count(&core);
			if (nt > maxthreads)
				maxthreads = nt;
			vgpu_append(&sib, "%s%s", cores ? sep : "",
				    vgpu_cpulist_format(&core, buf, sizeof(buf)));
			cores++;
		}
		cli_cell_num(ln, 2, cores, true);
		cli_cell_num(ln, 3, maxthreads, maxthreads > 0);
		cli_cell_num(ln, 4, (long)(nd->mem_total_kib / 1024), nd->mem_total_kib > 0);
		cli_cell_num(ln, 5, nd->hugepages_1g_total, nd->hugepages_1g_total >= 0);
		cli_cell_num(ln, 6, nd->hugepages_1g_free, nd->hugepages_1g_free >= 0);
		for (size_t k = 0, first = 1; k < ng; k++)
			if (g[k].numa_node == nd->id) {
				vgpu_append(&gpus, "%s%s", first ? "" : sep, g[k].addr);
				first = 0;
			}
		cli_cell(ln, 7, gpus); /* a node without GPUs has an empty list, not none */
		cli_cell(ln, 8, sib);
	}
	return cli_table_print(c, tb);
}
