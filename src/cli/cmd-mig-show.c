// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl mig show [--gpu BDF] [--nvidia-smi PATH]: the GPU instances that
 * exist now on every MIG GPU (nvidia-smi: procfs names GIs but not their
 * profile or placement), and which vGPU uses each (the vGPU's
 * nvidia/gpu_instance_id).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "mig.h"
#include "nvtools.h"

static const struct col show_cols[] = {
	{ "GPU", "gpu", COL_STR, 0 },
	{ "MIG", "mig_mode", COL_STR, 0 },
	{ "GI", "gi", COL_NUM, COL_RIGHT },
	{ "PROFILE", "profile", COL_STR, 0 },
	{ "ID", "profile_id", COL_NUM, COL_RIGHT },
	{ "START", "start", COL_NUM, COL_RIGHT },
	{ "SIZE", "size", COL_NUM, COL_RIGHT },
	{ "VGPU", "vgpu", COL_STR, 0 },
	{ "VGPU_PROFILE", "vgpu_profile", COL_STR, 0 },
};

static const struct vgpu_gi_user *user_of(const struct vgpu_gi_user *u, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (u[i].gi == id)
			return &u[i];
	return NULL;
}

static int by_start(const void *x, const void *y)
{
	const struct vgpu_mig_gi *a = x, *b = y;

	return a->start != b->start ? (a->start > b->start) - (a->start < b->start) :
				      (a->id > b->id) - (a->id < b->id);
}

static int show_gpu(struct cli *c, struct cli_table *t, const struct vgpu_nvtools *tools,
		    const struct vgpu_gpu *g, const struct vgpu_mig_board *b)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
	VGPU_AUTOFREE struct vgpu_gi_user *users = NULL;
	const char *mode;
	size_t n = 0, n_users;
	int cur, pend;

	if (vgpu_nv_mig_mode(&c->ctx, tools, g->addr, &cur, &pend) < 0)
		return -1;
	mode = cur == 1 ? (pend == 0 ? "enabled (disable pending)" : "enabled") :
			  (pend == 1 ? "disabled (enable pending)" : "disabled");
	if (cur == 1 && vgpu_nv_gis(&c->ctx, tools, b, g->addr, &gis, &n) < 0)
		return -1;
	if (!n) {
		struct cli_line *ln = cli_line_new(t);

		cli_cell_str(ln, 0, g->addr);
		cli_cell_str(ln, 1, mode);
		return 0;
	}
	qsort(gis, n, sizeof(*gis), by_start);
	n_users = vgpu_host_gi_users(c->fs, c->model, g, &users);
	for (size_t i = 0; i < n; i++) {
		struct cli_line *ln = cli_line_new(t);
		const struct vgpu_gi_user *u = user_of(users, n_users, gis[i].id);

		cli_cell_str(ln, 0, g->addr);
		cli_cell_str(ln, 1, mode);
		cli_cell_num(ln, 2, gis[i].id, true);
		cli_cell_str(ln, 3, gis[i].profile ? gis[i].profile->name : NULL);
		cli_cell_num(ln, 4, gis[i].profile ? gis[i].profile->id : 0, gis[i].profile);
		cli_cell_num(ln, 5, gis[i].start, true);
		cli_cell_num(ln, 6, gis[i].profile ? (long)gis[i].profile->size : 0,
			     gis[i].profile);
		cli_cell_str(ln, 7, u ? u->who : NULL);
		cli_cell_str(ln, 8, u ? u->profile : NULL);
	}
	return 0;
}

int cmd_mig_show(struct cli *c, int argc, char **argv)
{
	enum { OPT_NVSMI = 256 };
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "nvidia-smi", required_argument, NULL, OPT_NVSMI },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vgpu_nvtools tools = { .nvidia_smi = VGPU_NVIDIA_SMI_DEFAULT };
	const struct vgpu_gpu *only;
	const char *gpu = NULL;
	struct cli_table *t;
	bool any = false;
	int o;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 'g':
			gpu = optarg;
			break;
		case OPT_NVSMI:
			tools.nvidia_smi = optarg;
			break;
		case 'h':
			return -1;
		default:
			return cli_usage_error(c, "mig show", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error(c, "mig show", "unexpected argument '%s'", argv[optind]);
	if (cli_read_host(c, VGPU_READ_TYPES))
		return EXIT_FAILURE;
	only = gpu ? vgpu_model_find_gpu(c->model, gpu) : NULL;
	if (gpu && !only)
		return cli_usage_error(c, "mig show", "--gpu %s: no such GPU", gpu);
	t = cli_table(c, "gpu_instances", show_cols, ARRAY_SIZE(show_cols));
	for (size_t i = 0; i < c->model->n_gpus; i++) {
		const struct vgpu_gpu *g = &c->model->gpus[i];
		const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);

		if (!b || (only && g != only))
			continue;
		any = true;
		if (show_gpu(c, t, &tools, g, b) < 0) {
			cli_table_discard(t);
			cli_error(c, "mig show: %s", vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
	}
	if (!any && gpu)
		vgpu_warn(&c->ctx, "GPU %s has no MIG", gpu);
	return cli_table_print(c, t);
}
