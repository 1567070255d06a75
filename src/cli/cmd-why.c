// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl why PROFILE: per GPU, how many more vGPUs of the type fit now, or
 * the first reason none does (the capacity model's closed list of codes).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "cleanup.h"
#include "cli.h"
#include "fabric-place.h"

static const struct col why_cols[] = {
	{ "GPU", "gpu", COL_STR, false },
	{ "PROFILE", "profile", COL_STR, false },
	{ "AVAILABLE", "available", COL_NUM, true },
	{ "REASON", "reason", COL_STR, false },
	{ "DETAIL", "detail", COL_STR, false },
	/* false: GI profiles or the framebuffer were inferred; available is what is sure */
	{ "EXACT", "exact", COL_NUM, COL_JSON_ONLY },
};

static const char *const why_desc[] = {
	"PCI address of the GPU",
	"the profile asked about",
	"how many more fit now",
	"when none fits: the first reason, a code from a closed list",
	"the reason in words, with the next step",
	"false: counted from inferred GPU instances (NVML did not answer)",
};

const struct cli_columns cli_why_columns = CLI_COLUMNS(why_cols, why_desc, NULL);

/* The sentence for one GPU's answer; allocated. */
static char *detail(const struct vgpu_capacity *cap)
{
	char *s;

	if (cap->reason == VGPU_CAP_OK)
		s = vgpu_xstrdup(
			cap->exact ?
				"" :
				"at least this many: GPU instance profiles or the framebuffer are inferred from the driver's lists (NVML did not answer)");
	else
		s = vgpu_xstrdup(vgpu_cap_reason_text(cap->reason));
	if (cap->domains && *cap->domains)
		vgpu_append(&s, " (domains: %s)", cap->domains);
	return s;
}

/*
 * On a fabric in vGPU mode: the partition, in use, that holds @bus (a VM
 * there needs a free partition of its own), in words (allocated); NULL
 * when none does.
 */
static char *fabric_detail(const struct vgpu_place_in *in, const struct vgpu_records *recs,
			   const char *bus)
{
	const char *holder = NULL;
	unsigned by;

	if (!in->fabric || !vgpu_fabric_gpu_taken(in, bus, &by))
		return NULL;
	for (size_t i = 0; i < recs->n && !holder; i++)
		if (recs->v[i].partitioned && recs->v[i].partition == by)
			holder = recs->v[i].domain;
	if (holder)
		return vgpu_asprintf(
			"in fabric partition %u, which domain '%s' holds: a VM on this GPU needs a free partition (vgpuctl fabric)",
			by, holder);
	return vgpu_asprintf(
		"in fabric partition %u, which Fabric Manager has active: a VM on this GPU needs a free partition (vgpuctl fabric)",
		by);
}

/* The profile of the host's types nearest to a mistyped @spec ("A30-6Q": "A30-6C"), or NULL. */
static const char *nearest_profile(const struct vgpu_model *m, const char *spec)
{
	VGPU_AUTOFREE const char **names = NULL;
	size_t n = 0, max = 0;

	for (size_t i = 0; i < m->n_gpus; i++)
		max += m->gpus[i].n_types;
	names = vgpu_xcalloc(max + 1, sizeof(*names));
	for (size_t i = 0; i < m->n_gpus; i++)
		for (size_t k = 0; k < m->gpus[i].n_types; k++)
			if (m->gpus[i].types[k]->info.profile[0])
				names[n++] = m->gpus[i].types[k]->info.profile;
	return vgpu_nearest(spec, names, n, true);
}

int cmd_why(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *gpu_arg = NULL, *spec;
	const struct vgpu_gpu *only = NULL;
	const struct vgpu_type *known = NULL;
	struct cli_table *tb;
	struct vgpu_fabric fab = { .mode = VGPU_FABRIC_NONE };
	VGPU_AUTOFREE unsigned *taken = NULL;
	struct vgpu_place_in in = { .fabric = NULL };
	char *fdetail;
	int o, r;

	struct cli_opts go = { .cmd = "why", .own = opts, .own_short = "h", .table = true };

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 'g':
			gpu_arg = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind >= argc)
		return cli_usage_error(c, "why", "which vGPU type? (PROFILE, e.g. A30-1-6C)");
	spec = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, "why", "unexpected argument '%s'", argv[optind]);
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r)
		return r;
	if (cli_find_gpu(c, NULL, gpu_arg, &only))
		return EXIT_FAILURE;
	for (size_t i = 0; i < c->model->n_gpus && !known; i++)
		known = vgpu_gpu_match_type(&c->model->gpus[i], spec);
	if (!known) {
		const struct vgpu_parent *p = vgpu_model_unnamed_holder(c->model, spec);
		const char *near;

		if (p)
			cli_error(
				c,
				"'%s': no list on this host names such a vGPU type now, but VF %s of GPU %s holds type %u, which no list names: it may be this one (NVML names it: --nvml LIB, or the catalogue 'vgpuctl apply' keeps)",
				spec, p->addr, p->gpu->addr,
				p->in_use ? p->current_type : p->reserved_type);
		else if ((near = nearest_profile(c->model, spec)))
			cli_error(
				c,
				"'%s': no GPU on this host offers such a vGPU type; did you mean '%s'?",
				spec, near);
		else
			cli_error(
				c,
				"'%s': no GPU on this host offers such a vGPU type (see 'vgpuctl types')",
				spec);
		return EXIT_FAILURE;
	}
	if (cli_fabric(c, &fab) < 0) {
		vgpu_warn(&c->ctx, "fabric partitions not minded: %s", vgpu_ctx_error(&c->ctx));
		vgpu_ctx_clear(&c->ctx);
	}
	if (fab.mode == VGPU_FABRIC_VGPU) {
		taken = vgpu_xcalloc(c->recs.n + 1, sizeof(*taken));
		for (size_t i = 0; i < c->recs.n; i++)
			if (c->recs.v[i].partitioned)
				taken[in.n_taken++] = c->recs.v[i].partition;
		in.fabric = &fab;
		in.taken = taken;
	}
	tb = cli_table(c, "why", why_cols, ARRAY_SIZE(why_cols));
	for (size_t i = 0; i < c->model->n_gpus; i++) {
		const struct vgpu_gpu *g = &c->model->gpus[i];
		const struct vgpu_type *t = vgpu_gpu_match_type(g, spec);
		struct vgpu_capacity cap;
		struct cli_line *ln;

		if (only && only != g)
			continue;
		vgpu_capacity_of(c->model, g, t ? t : known, &c->recs, &cap);
		fdetail = cap.reason ? NULL : fabric_detail(&in, &c->recs, g->addr);
		ln = cli_line_new(tb);
		cli_cell_str(ln, 0, g->addr);
		cli_cell_str(ln, 1, (t ? t : known)->info.profile);
		cli_cell_num(ln, 2, fdetail ? 0 : cap.available, true);
		if (cap.reason || fdetail)
			cli_cell_str(ln, 3,
				     fdetail ? "fabric-partition" :
					       vgpu_cap_reason_code(cap.reason));
		cli_cell(ln, 4, fdetail ? fdetail : detail(&cap));
		cli_cell_str(ln, 5, cap.exact ? "true" : "false");
		vgpu_capacity_clear(&cap);
	}
	vgpu_fabric_clear(&fab);
	return cli_table_print(c, tb);
}
