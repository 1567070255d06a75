// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl mig show [--gpu BDF] [--nvidia-smi PATH]: the GPU instances that
 * exist now on every MIG GPU (NVML, else nvidia-smi: procfs names GIs but
 * not their profile or placement; where neither answers, what sysfs
 * tells), and the vGPUs on each (the vGPU's nvidia/gpu_instance_id; several
 * share one GI where the type is time-sliced inside it).
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

static const char *const show_desc[] = {
	"PCI address of the GPU", "MIG mode",
	"GPU instance ID",	  "GPU instance profile",
	"its profile ID",	  "first memory slice of its placement",
	"memory slices it spans", "a vGPU on it (VF or mdev UUID)",
	"that vGPU's profile",
};

const struct cli_columns cli_mig_show_columns =
	CLI_COLUMNS(show_cols, show_desc, "(mig show; mig plan prints no table)");

/* One GI as one source saw it; profile NULL and start -1 where it could not tell. */
struct gi_row {
	int id;
	const struct vgpu_mig_profile *profile;
	int start;
};

static int by_start(const void *x, const void *y)
{
	const struct gi_row *a = x, *b = y;

	return a->start != b->start ? (a->start > b->start) - (a->start < b->start) :
				      (a->id > b->id) - (a->id < b->id);
}

/* @cur and @pend: vgpu_nv_mig_mode()'s VGPU_ON, VGPU_OFF, VGPU_UNKNOWN */
static const char *mode_str(int cur, int pend)
{
	if (cur == VGPU_UNKNOWN)
		return "unknown";
	return cur == VGPU_ON ? (pend == VGPU_OFF ? "enabled (disable pending)" : "enabled") :
				(pend == VGPU_ON ? "disabled (enable pending)" : "disabled");
}

/*
 * The GIs of @g: NVML's (the model has them when it answered), else
 * nvidia-smi's, else what sysfs and procfs tell (ids; profiles where the
 * driver's lists leave one answer), said once.  MIG mode is what NVML said
 * (as gpus and metrics have it), else nvidia-smi's answer, else unknown:
 * GPU instances in procfs or the driver's lists are not asked to stand in.
 */
static int gpu_gis(struct cli *c, const struct vgpu_nvtools *tools, const struct vgpu_gpu *g,
		   const struct vgpu_mig_board *b, const char **mode, struct gi_row **rows,
		   size_t *n)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
	size_t n_gis = 0;
	int cur, pend;

	*rows = NULL;
	*n = 0;
	*mode = mode_str(g->mig_current, g->mig_pending);
	if (g->mig_current != VGPU_UNKNOWN && g->gis_exact) {
		/* NVML answered: its mode and its GIs */
	} else if (!tools->nvidia_smi) {
		vgpu_warn(
			&c->ctx,
			"--sysroot: nvidia-smi is not asked about another host's tree (name one with --nvidia-smi); MIG mode and GPU instance profiles are what sysfs and the driver's lists tell");
	} else if (vgpu_nv_mig_mode(&c->ctx, tools, g->addr, &cur, &pend) == 0) {
		if (g->mig_current == VGPU_UNKNOWN)
			*mode = mode_str(cur, pend);
		if (cur == VGPU_ON && vgpu_nv_gis(&c->ctx, tools, b, g->addr, &gis, &n_gis) < 0)
			return -1;
		*rows = vgpu_xcalloc(n_gis + 1, sizeof(**rows));
		for (size_t i = 0; i < n_gis; i++)
			(*rows)[i] =
				(struct gi_row){ gis[i].id, gis[i].profile, (int)gis[i].start };
		*n = n_gis;
		return 0;
	} else {
		vgpu_warn(
			&c->ctx,
			"neither NVML nor nvidia-smi answered (%s): MIG mode and GPU instance profiles are what sysfs and the driver's lists tell",
			vgpu_ctx_error(&c->ctx));
	}
	*rows = vgpu_xcalloc(g->n_gis + 1, sizeof(**rows));
	for (size_t i = 0; i < g->n_gis; i++)
		(*rows)[i] = (struct gi_row){ g->gis[i].id, g->gis[i].profile, g->gis[i].start };
	*n = g->n_gis;
	return 0;
}

static void row(struct cli_table *t, const struct vgpu_gpu *g, const char *mode,
		const struct gi_row *gi, const struct vgpu_gi_user *u)
{
	struct cli_line *ln = cli_line_new(t);

	cli_cell_str(ln, 0, g->addr);
	cli_cell_str(ln, 1, mode);
	if (!gi)
		return;
	cli_cell_num(ln, 2, gi->id, true);
	cli_cell_str(ln, 3, gi->profile ? gi->profile->name : NULL);
	cli_cell_num(ln, 4, gi->profile ? gi->profile->id : 0, gi->profile);
	cli_cell_num(ln, 5, gi->start, gi->start >= 0);
	cli_cell_num(ln, 6, gi->profile ? (long)gi->profile->size : 0, gi->profile);
	cli_cell_str(ln, 7, u ? u->who : NULL);
	cli_cell_str(ln, 8, u ? u->profile : NULL);
}

/* One row per GI, and one per vGPU on it: several share a GI on time-sliced MIG types. */
static int show_gpu(struct cli *c, struct cli_table *t, const struct vgpu_nvtools *tools,
		    const struct vgpu_gpu *g, const struct vgpu_mig_board *b)
{
	VGPU_AUTOFREE struct gi_row *gis = NULL;
	VGPU_AUTOFREE struct vgpu_gi_user *users = NULL;
	const char *mode = "unknown";
	size_t n = 0, n_users;

	if (gpu_gis(c, tools, g, b, &mode, &gis, &n) < 0)
		return -1;
	if (!n) {
		row(t, g, mode, NULL, NULL);
		return 0;
	}
	qsort(gis, n, sizeof(*gis), by_start);
	n_users = vgpu_host_gi_users(c->fs, c->model, g, &users);
	for (size_t i = 0; i < n; i++) {
		bool any = false;

		for (size_t k = 0; k < n_users; k++) {
			if (users[k].gi != gis[i].id)
				continue;
			row(t, g, mode, &gis[i], &users[k]);
			any = true;
		}
		if (!any)
			row(t, g, mode, &gis[i], NULL);
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
	bool smi_named = false;
	struct cli_table *t;
	bool any = false;
	struct cli_opts go = { .cmd = "mig show", .own = opts, .own_short = "h", .table = true };
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 'g':
			gpu = optarg;
			break;
		case OPT_NVSMI:
			tools.nvidia_smi = optarg;
			smi_named = true;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind < argc)
		return cli_usage_error(c, "mig show", "unexpected argument '%s'", argv[optind]);
	if (cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML | CLI_READ_GPUS))
		return EXIT_FAILURE;
	if (cli_find_gpu(c, "mig show", gpu, &only))
		return EXIT_FAILURE;
	/*
	 * Another host's tree (--sysroot): this host's nvidia-smi does not speak
	 * for it, as NVML does not (cli_nvml()), unless --nvidia-smi names one.
	 */
	if (!smi_named && c->sysroot && strcmp(c->sysroot, "/") != 0)
		tools.nvidia_smi = NULL;
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
