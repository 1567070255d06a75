// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl mig SUBCOMMAND: MIG GPU instances.
 *   mig plan --gpu BDF | --board NAME  [--lgi FILE]  PROFILE[xN]...
 * Sub-commands dispatch on argv[1]; "show" is in cmd-mig-show.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "cleanup.h"
#include "cli.h"
#include "mig.h"

struct mig_plan_args {
	const char *gpu, *board, *lgi;
	char **profiles;
	int n_profiles;
};

static int plan_options(struct cli *c, int argc, char **argv, struct mig_plan_args *a)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "board", required_argument, NULL, 'b' },
		{ "lgi", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "mig", .own = opts, .own_short = "h" };
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 'g':
			a->gpu = optarg;
			break;
		case 'b':
			a->board = optarg;
			break;
		case 'l':
			a->lgi = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (!a->gpu == !a->board)
		return cli_usage_error(c, "mig", "mig plan: give one of --gpu BDF or --board NAME");
	if (optind >= argc)
		return cli_usage_error(c, "mig", "mig plan: no PROFILE[xN] given");
	a->profiles = argv + optind;
	a->n_profiles = argc - optind;
	return 0;
}

/* The existing GIs from a saved `nvidia-smi mig -i BUS -lgi` (FILE, or - for stdin). */
static int read_lgi(struct cli *c, const struct vgpu_mig_board *b, const char *path,
		    struct vgpu_mig_gi **gis, size_t *n)
{
	VGPU_AUTOFCLOSE FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "r");
	VGPU_AUTOFREE char *text = vgpu_xmalloc(VGPU_MIG_TEXT_MAX + 1);
	FILE *in = strcmp(path, "-") == 0 ? stdin : f;
	size_t len;

	if (!in) {
		cli_error(c, "mig plan: --lgi '%s': %s", path, strerror(errno));
		return EXIT_FAILURE;
	}
	len = fread(text, 1, VGPU_MIG_TEXT_MAX + 1, in);
	if (ferror(in) || len > VGPU_MIG_TEXT_MAX) {
		cli_error(c, "mig plan: --lgi '%s': %s", path,
			  ferror(in) ? "read error" : "over 1 MiB, not nvidia-smi mig -lgi output");
		return EXIT_FAILURE;
	}
	text[len] = '\0';
	if (vgpu_mig_parse_lgi(&c->ctx, b, text, gis, n) < 0) {
		cli_error(c, "mig plan: --lgi '%s': %s", path, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

/* The board for --gpu (from the host) or --board; *gpu is NULL for --board. */
static int plan_board(struct cli *c, const struct mig_plan_args *a, const struct vgpu_mig_board **b,
		      const struct vgpu_gpu **gpu)
{
	int r;

	*gpu = NULL;
	if (a->board) {
		*b = vgpu_mig_board_lookup(a->board);
		if (!*b) {
			cli_error(
				c,
				"mig plan: --board '%s': no MIG table (a board token such as A30 or H100L, or a model such as 'A100 80GB')",
				a->board);
			return EXIT_FAILURE;
		}
		return 0;
	}
	/* NVML, where it speaks for the host, lists the GIs there with their placements */
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r)
		return r;
	if (cli_find_gpu(c, "mig plan", a->gpu, gpu))
		return EXIT_FAILURE;
	*b = vgpu_mig_board_for_gpu(*gpu);
	if (!*b) {
		cli_error(c, "mig plan: --gpu '%s': %s is not a MIG GPU with a known table", a->gpu,
			  (*gpu)->model ? (*gpu)->model : "the GPU");
		return EXIT_FAILURE;
	}
	return 0;
}

/* "[2g.12gb 2g.12gb 1g.6gb .]": each memory slice's GI, '.' when free. */
static void print_slice_map(FILE *f, const struct vgpu_mig_board *b, const struct vgpu_mig_gi *e,
			    size_t n_e, const struct vgpu_mig_gi *gi, size_t n)
{
	fputs("slices: [", f);
	for (unsigned s = 0; s < b->mem_slices; s++) {
		const char *name = ".";

		for (size_t i = 0; i < n_e + n; i++) {
			const struct vgpu_mig_gi *g = i < n_e ? &e[i] : &gi[i - n_e];

			if (s >= g->start && s < g->start + g->profile->size)
				name = g->profile->name;
		}
		fprintf(f, "%s%s", s ? " " : "", name);
	}
	fputs("]\n", f);
}

static void print_text(struct cli *c, const struct vgpu_mig_board *b, const struct vgpu_gpu *gpu,
		       const struct vgpu_mig_gi *e, size_t n_e, const struct vgpu_mig_gi *gi,
		       size_t n, unsigned free_block)
{
	FILE *f = c->out;

	if (gpu)
		fprintf(f, "GPU %s (%s)\n", gpu->addr, b->model);
	else
		fprintf(f, "board %s\n", b->model);
	fprintf(f, "%-16s %4s  %s\n", "PROFILE", "ID", "START:SIZE");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-16s %4d  %u:%u\n", gi[i].profile->name, gi[i].profile->id,
			gi[i].start, gi[i].profile->size);
	print_slice_map(f, b, e, n_e, gi, n);
	fprintf(f, "largest free block: %u of %u memory slices\n", free_block, b->mem_slices);
	fprintf(f, "create: nvidia-smi mig -i %s -cgi ", gpu ? gpu->addr : "BUS");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", gi[i].profile->id);
	fputs(" -C\n", f);
}

static void print_json(struct cli *c, const struct vgpu_mig_board *b, const struct vgpu_gpu *gpu,
		       const struct vgpu_mig_gi *gi, size_t n, unsigned free_block)
{
	FILE *f = c->out;

	/* every string here comes from our tables or a normalised BDF: nothing to escape */
	fputs("{\n", f);
	if (gpu)
		fprintf(f, "  \"gpu\": \"%s\",\n", gpu->addr);
	else
		fputs("  \"gpu\": null,\n", f);
	fprintf(f, "  \"board\": \"%s\",\n  \"instances\": [", b->model);
	for (size_t i = 0; i < n; i++)
		fprintf(f,
			"%s\n    {\"profile\": \"%s\", \"profile_id\": %d, \"start\": %u, \"size\": %u}",
			i ? "," : "", gi[i].profile->name, gi[i].profile->id, gi[i].start,
			gi[i].profile->size);
	fprintf(f, "%s],\n  \"largest_free_block\": %u\n}\n", n ? "\n  " : "", free_block);
}

static int mig_plan(struct cli *c, int argc, char **argv)
{
	struct mig_plan_args a = { 0 };
	const struct vgpu_mig_board *b;
	const struct vgpu_gpu *gpu;
	VGPU_AUTOFREE struct vgpu_mig_request *req = NULL;
	VGPU_AUTOFREE struct vgpu_mig_gi *existing = NULL;
	VGPU_AUTOFREE struct vgpu_mig_gi *gi = NULL;
	VGPU_AUTOFREE struct vgpu_mig_gi *all = NULL;
	size_t n_existing = 0, n = 0;
	unsigned free_block;
	int r = plan_options(c, argc, argv, &a);

	if (r)
		return r;
	r = plan_board(c, &a, &b, &gpu);
	if (r)
		return r;
	if (a.lgi && (r = read_lgi(c, b, a.lgi, &existing, &n_existing)))
		return r;
	if (!a.lgi && gpu && gpu->n_gis && vgpu_gpu_known_gis(gpu, &existing, &n_existing) == 0) {
		/* planned on top of the GIs NVML reports */
	} else if (!a.lgi && gpu && gpu->mig_instances > 0)
		vgpu_warn(
			&c->ctx,
			"GPU %s has %d GPU instances; planned as if none existed (pass --lgi with the output of 'nvidia-smi mig -i %s -lgi')",
			gpu->addr, gpu->mig_instances, gpu->addr);
	req = vgpu_xcalloc((size_t)a.n_profiles, sizeof(*req));
	for (int i = 0; i < a.n_profiles; i++)
		if (vgpu_mig_parse_request(&c->ctx, b, a.profiles[i], &req[i]) < 0 ||
		    (i == a.n_profiles - 1 && vgpu_mig_solve(&c->ctx, b, existing, n_existing, req,
							     (size_t)a.n_profiles, &gi, &n) < 0)) {
			cli_error(c, "mig plan: %s", vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
	all = vgpu_xcalloc(n_existing + n, sizeof(*all));
	if (n_existing)
		memcpy(all, existing, n_existing * sizeof(*all));
	if (n)
		memcpy(all + n_existing, gi, n * sizeof(*all));
	free_block = vgpu_mig_largest_free(b, all, n_existing + n);
	if (c->json)
		print_json(c, b, gpu, gi, n, free_block);
	else
		print_text(c, b, gpu, existing, n_existing, gi, n, free_block);
	return EXIT_SUCCESS;
}

/*
 * Options may come before the sub-command too ("mig --json show"): move the
 * first argument that is neither an option nor an option's value to argv[1].
 */
static void subcommand_first(int argc, char **argv)
{
	static const char *const with_value[] = { "--gpu",     "--board", "--lgi", "--nvidia-smi",
						  "--sysroot", "--nvml",  "-o",	   "--output" };

	for (int i = 1; i < argc; i++) {
		bool value = false;

		if (strcmp(argv[i], "--") == 0)
			return;
		if (argv[i][0] != '-') {
			char *sub = argv[i];

			memmove(&argv[2], &argv[1], (size_t)(i - 1) * sizeof(*argv));
			argv[1] = sub;
			return;
		}
		for (size_t k = 0; k < ARRAY_SIZE(with_value); k++)
			value |= strcmp(argv[i], with_value[k]) == 0;
		i += value;
	}
}

int cmd_mig(struct cli *c, int argc, char **argv)
{
	subcommand_first(argc, argv);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return argc < 2 ? cli_usage_error(c, "mig", "mig: give a sub-command: plan, show") :
				  CLI_HELP;
	if (strcmp(argv[1], "plan") == 0)
		return mig_plan(c, argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return cmd_mig_show(c, argc - 1, argv + 1);
	return cli_usage_error(c, "mig", "mig: unknown sub-command '%s' (known: plan, show)",
			       argv[1]);
}
