// SPDX-License-Identifier: GPL-2.0-or-later
/* vgpuctl types: vGPU types per GPU (default) or per VF (--per-vf). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "cleanup.h"
#include "cli.h"

enum {
	C_GPU,
	C_VF,
	C_TYPE,
	C_MDEV,
	C_NAME,
	C_PROFILE,
	C_BACKING,
	C_SLICES,
	C_GI,
	C_FB,
	C_SERIES,
	C_ATTR,
	C_MAX,
	C_AVAIL,
	C_PERGI,
	C_REASON,
	C_EXACT,
	C_NCOLS
};

static const struct col type_cols[C_NCOLS] = {
	[C_GPU] = { "GPU", "gpu", COL_STR, false },
	[C_VF] = { "VF", "vf", COL_STR, false },
	[C_TYPE] = { "TYPE", "type_id", COL_NUM, true },
	/* the name mdevctl, libvirt nodedev and mdev_supported_types/ use */
	[C_MDEV] = { "MDEVTYPE", "mdev_type", COL_STR, COL_JSON_ONLY },
	[C_NAME] = { "NAME", "name", COL_STR, false },
	[C_PROFILE] = { "PROFILE", "profile", COL_STR, false },
	[C_BACKING] = { "BACKING", "backing", COL_STR, false },
	[C_SLICES] = { "SLICES", "slices", COL_NUM, true },
	[C_GI] = { "GI", "gpu_instance_profile", COL_STR, false },
	[C_FB] = { "FB", "framebuffer_mib", COL_SIZE_MIB, true },
	[C_SERIES] = { "SERIES", "series", COL_STR, false },
	[C_ATTR] = { "ATTR", "attribute", COL_STR, false },
	[C_MAX] = { "MAX", "max_instances", COL_NUM, true },
	[C_AVAIL] = { "AVAILABLE", "available", COL_NUM, true },
	[C_PERGI] = { "PER-GI", "per_gpu_instance", COL_NUM, COL_JSON_ONLY },
	[C_REASON] = { "REASON", "reason", COL_STR, COL_JSON_ONLY },
	/* false: GI profiles or the framebuffer were inferred; available is what is sure */
	[C_EXACT] = { "EXACT", "exact", COL_NUM, COL_JSON_ONLY },
};

static const char *const type_desc[C_NCOLS] = {
	[C_GPU] = "PCI address of the GPU",
	[C_VF] = "PCI address of the VF (--per-vf, --vf)",
	[C_TYPE] = "vGPU type ID",
	[C_MDEV] = "mdev type name (nvidia-ID)",
	[C_NAME] = "the driver's name of the type",
	[C_PROFILE] = "profile: the name without its \"GRID \" or \"NVIDIA \" prefix",
	[C_BACKING] = "mig (on a GPU instance) or time-sliced",
	[C_SLICES] = "compute slices of a MIG-backed type",
	[C_GI] = "GPU instance profile it needs",
	[C_FB] = "framebuffer (-b: bytes)",
	[C_SERIES] = "series: Q, C, B or A",
	[C_ATTR] = "attribute: ME (media engines), GFX, ...",
	[C_MAX] = "most vGPUs of the type one GPU takes",
	[C_AVAIL] = "how many more fit now",
	[C_PERGI] = "vGPUs one GPU instance holds",
	[C_REASON] = "when none fits: the first reason (see why)",
	[C_EXACT] = "false: counted from inferred GPU instances (NVML did not answer)",
};

const struct cli_columns cli_types_columns =
	CLI_COLUMNS(type_cols, type_desc, "VF only with --per-vf or --vf.");

static void type_cells(struct cli_line *ln, const struct vgpu_type *t, int off,
		       enum vgpu_iface iface, const struct vgpu_capacity *cap, long avail)
{
	const struct vgpu_type_info *i = &t->info;
	bool parsed = i->backing != VGPU_BACKING_UNKNOWN;
	char s[2] = { i->series, 0 };

	cli_cell_num(ln, C_TYPE + off, t->id, true);
	if (iface == VGPU_IFACE_MDEV)
		cli_cell_num_after(ln, C_MDEV + off, "nvidia-", t->id);
	cli_cell_str(ln, C_NAME + off, t->name);
	cli_cell_str(ln, C_PROFILE + off, i->profile);
	cli_cell_str(ln, C_BACKING + off, vgpu_backing_str(i->backing));
	cli_cell_num(ln, C_SLICES + off, i->slices, i->backing == VGPU_BACKING_MIG);
	if (i->gi_profile[0])
		cli_cell_str(ln, C_GI + off, i->gi_profile);
	cli_cell_num(ln, C_FB + off, i->fb_mib, parsed);
	if (parsed)
		cli_cell_str(ln, C_SERIES + off, s);
	if (i->attribute[0])
		cli_cell_str(ln, C_ATTR + off, i->attribute);
	cli_cell_num(ln, C_MAX + off, cap->max_instances, cap->max_instances >= 0);
	cli_cell_num(ln, C_AVAIL + off, avail, true);
	cli_cell_num(ln, C_PERGI + off, cap->per_gi, cap->per_gi > 0);
	/* per-VF rows: a VF that cannot take it on a GPU that can has no GPU reason */
	if (!avail && cap->reason)
		cli_cell_str(ln, C_REASON + off, vgpu_cap_reason_code(cap->reason));
	cli_cell_str(ln, C_EXACT + off, cap->exact ? "true" : "false");
}

int cmd_types(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' }, { "vf", required_argument, NULL, 'v' },
		{ "available", no_argument, NULL, 'a' }, { "per-vf", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },	 { 0 },
	};
	const char *gpu_arg = NULL, *vf_arg = NULL;
	const struct vgpu_gpu *g, *only_gpu = NULL;
	const struct vgpu_parent *only_vf = NULL;
	bool avail_only = false, per_vf = false;
	struct col cols[C_NCOLS];
	struct cli_table *tb;
	size_t n, ncols = 0;
	int o, r;

	struct cli_opts go = { .cmd = "types", .own = opts, .own_short = "h", .table = true };

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 'g':
			gpu_arg = optarg;
			break;
		case 'v':
			vf_arg = optarg;
			break;
		case 'a':
			avail_only = true;
			break;
		case 'p':
			per_vf = true;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind < argc)
		return cli_usage_error(c, "types", "unexpected argument '%s'", argv[optind]);
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML | CLI_READ_GPUS);
	if (r)
		return r;
	if (cli_find_gpu(c, NULL, gpu_arg, &only_gpu))
		return EXIT_FAILURE;
	if (vf_arg && !(only_vf = vgpu_model_find_parent(c->model, vf_arg))) {
		cli_error(c, "--vf '%s': no such vGPU parent (see 'vgpuctl vfs')", vf_arg);
		return EXIT_FAILURE;
	}
	if (only_vf && only_gpu && only_vf->gpu != only_gpu) {
		cli_error(c, "--vf '%s' is not a VF of --gpu '%s'", vf_arg, gpu_arg);
		return EXIT_FAILURE;
	}
	if (only_vf)
		per_vf = true; /* one VF's types are per-VF rows by nature */

	for (int i = 0; i < C_NCOLS; i++)
		if (per_vf || i != C_VF)
			cols[ncols++] = type_cols[i];
	tb = cli_table(c, "types", cols, ncols);
	g = c->model->gpus;
	n = c->model->n_gpus;
	for (size_t i = 0; i < n; i++) {
		VGPU_AUTOFREE struct vgpu_capacity *cap = NULL;

		if (only_gpu && only_gpu != &g[i])
			continue;
		if (only_vf && only_vf->gpu != &g[i])
			continue;
		/* once per type of the GPU: the per-VF rows share it */
		cap = vgpu_xcalloc(g[i].n_types + 1, sizeof(*cap));
		vgpu_gpu_capacities(c->model, &g[i], &c->recs, cap);
		if (per_vf) {
			for (size_t j = 0; j < g[i].n_parents; j++) {
				const struct vgpu_parent *vf = &g[i].parents[j];

				if (only_vf && only_vf != vf)
					continue;
				for (size_t k = 0; k < vf->n_types; k++) {
					const struct vgpu_type *t = vf->types[k].type;
					const struct vgpu_capacity *tc =
						&cap[vgpu_gpu_type_index(&g[i], t->id)];
					long avail = vf->types[k].available;
					struct cli_line *ln;

					/* what the VF's list says, within what the GPU takes */
					if (avail > tc->available)
						avail = tc->available;
					if (avail < 0)
						avail = 0;
					if (avail_only && avail <= 0)
						continue;
					vgpu_host_warn_unknown_type(&c->ctx, t);
					ln = cli_line_new(tb);
					cli_cell_str(ln, C_GPU, g[i].addr);
					cli_cell_str(ln, C_VF, vf->addr);
					type_cells(ln, t, 0, vf->iface, tc, avail);
				}
			}
		} else {
			for (size_t k = 0; k < g[i].n_types; k++) {
				const struct vgpu_type *t = g[i].types[k];
				struct cli_line *ln;

				if (avail_only && cap[k].available <= 0)
					continue;
				vgpu_host_warn_unknown_type(&c->ctx, t);
				ln = cli_line_new(tb);
				cli_cell_str(ln, C_GPU, g[i].addr);
				type_cells(ln, t, -1, g[i].iface, &cap[k], cap[k].available);
			}
		}
		for (size_t k = 0; k < g[i].n_types; k++)
			vgpu_capacity_clear(&cap[k]);
	}
	if (!only_vf)
		cli_hint_vfs_off(c, only_gpu);
	return cli_table_print(c, tb);
}
