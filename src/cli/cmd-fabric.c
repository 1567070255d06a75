// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl fabric: NVSwitch fabric partitions on an HGX board, as Fabric
 * Manager (libnvfm, --nvfm) has them, each GPU named by its PCI address
 * through NVML's module ID, with the domain whose vGPUs are on them (the
 * owner records).  fabric activate|deactivate ID and fabric resync change
 * Fabric Manager's state, under the host lock.  The calls are fabric.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "fabric.h"
#include "hook.h"
#include "nvml.h"
#include "records.h"
#include "release.h"
#include "sysfs-lock.h"
#include "sysfs-state.h"

static const struct col fabric_cols[] = {
	{ "ID", "id", COL_NUM, COL_RIGHT },	  { "SIZE", "size", COL_NUM, COL_RIGHT },
	{ "SUPPORTED", "supported", COL_STR, 0 }, { "ACTIVE", "active", COL_STR, 0 },
	{ "DOMAIN", "domain", COL_STR, 0 },	  { "MODULES", "modules", COL_STR, 0 },
	{ "GPUS", "gpus", COL_STR, 0 },
};

static const char *const fabric_desc[] = {
	"Fabric Manager's partition ID",
	"how many GPUs it joins",
	"no: listed among the unsupported partitions",
	"yes: Fabric Manager has it active",
	"the domains whose owner records hold the partition (their partition= line)",
	"the GPUs' module IDs (Fabric Manager's physical IDs)",
	"the GPUs' PCI addresses, from NVML's module IDs ('-': NVML does not say)",
};

const struct cli_columns cli_fabric_columns = CLI_COLUMNS(
	fabric_cols, fabric_desc,
	"The first line says Fabric Manager's mode; NVLink-failed devices follow the table.");

static const char *mode_name(enum vgpu_fabric_mode m)
{
	switch (m) {
	case VGPU_FABRIC_BAREMETAL:
		return "bare-metal";
	case VGPU_FABRIC_SHARED:
		return "shared-nvswitch";
	case VGPU_FABRIC_VGPU:
		return "vgpu";
	default:
		return "none";
	}
}

/* What the command works on: the host read, the mode, Fabric Manager's answer. */
struct fab {
	enum vgpu_fabric_mode mode;
	struct vgpu_fm *fm;
	struct vgpu_fabric f;
	bool modules; /* NVML gave module IDs */
};

static void fab_clear(struct fab *x)
{
	vgpu_fabric_clear(&x->f);
	vgpu_fm_close(x->fm);
	x->fm = NULL;
}

/*
 * The domains whose owner records hold partition @p (their partition= line;
 * records still incoming or expiring count: the partition is theirs), comma-joined
 * (heap), NULL when none.
 */
static char *owners(const struct vgpu_records *recs, const struct vgpu_fabric_part *p)
{
	char *out = NULL;

	for (size_t i = 0; i < recs->n; i++) {
		const char *d = recs->v[i].domain;
		bool seen = false;

		if (!recs->v[i].partitioned || recs->v[i].partition != p->id)
			continue;
		for (size_t j = 0; j < i; j++)
			seen |= recs->v[j].partitioned && recs->v[j].partition == p->id &&
				strcmp(recs->v[j].domain, d) == 0;
		if (seen)
			continue;
		if (out)
			vgpu_append(&out, ",%s", d);
		else
			out = vgpu_xstrdup(d);
	}
	return out;
}

static int cmp_id(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

static bool has_id(const unsigned *ids, size_t n, unsigned id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * The hook's notes (VGPU_ACTIVATED_DIR/DOMAIN: the partition prepare
 * activated for DOMAIN and release has not deactivated): @names and their
 * IDs in @ids (room for @max).  Return: how many.
 */
static size_t notes_read(struct cli *c, struct vgpu_strv *names, unsigned *ids, size_t max)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV all = { 0 };
	size_t n = 0;

	if (vgpu_sysdir_open(c->fs, &d, VGPU_ACTIVATED_DIR) < 0 ||
	    vgpu_sysfs_list_dir(&d, &all, ".") < 0)
		return 0;
	for (size_t i = 0; i < all.n && n < max; i++) {
		char text[32];
		long id;

		if (all.items[i][0] == '.' ||
		    vgpu_sysfs_read_str(&d, text, sizeof(text), "%s", all.items[i]) < 0)
			continue;
		text[strcspn(text, "\n")] = '\0';
		if (vgpu_parse_long(text, &id) < 0 || id < 0 || id > 0xffffffffL) {
			vgpu_warn(&c->ctx, "%s/%s: '%s' is not a partition ID", VGPU_ACTIVATED_DIR,
				  all.items[i], text);
			continue;
		}
		vgpu_strv_push(names, vgpu_xstrdup(all.items[i]));
		ids[n++] = (unsigned)id;
	}
	return n;
}

/*
 * The partitions to tell a restarted Fabric Manager are active, into @ids
 * (room for @max): exactly those the hook activated and has not deactivated
 * (its notes, which go with run/ at a reboot, as Fabric Manager's state
 * does).  Not the records: a stopped domain keeps its records and its
 * persistent vGPUs, and its partition is not active.  Return: how many.
 */
static size_t resync_ids(struct cli *c, const struct fab *x, unsigned *ids, size_t max)
{
	VGPU_AUTOSTRV names = { 0 };
	VGPU_AUTOFREE unsigned *noted = vgpu_xcalloc(max, sizeof(*noted));
	size_t nn = notes_read(c, &names, noted, max), n = 0;

	for (size_t i = 0; i < nn; i++) {
		bool known = false;

		for (size_t k = 0; k < x->f.n; k++)
			known |= x->f.v[k].id == noted[i] && x->f.v[k].supported;
		if (!known)
			vgpu_warn(
				&c->ctx,
				"%s/%s names partition %u, which Fabric Manager does not have: not told",
				VGPU_ACTIVATED_DIR, names.items[i], noted[i]);
		else if (!has_id(ids, n, noted[i]))
			ids[n++] = noted[i];
	}
	qsort(ids, n, sizeof(*ids), cmp_id);
	return n;
}

/*
 * After 'fabric activate' of a partition one domain's records hold: note it
 * for that domain, as prepare would (its release deactivates it, resync
 * tells it).  After 'fabric deactivate': drop every note naming it.
 */
static void notes_update(struct cli *c, const struct vgpu_fabric_part *p, bool active)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOSTRV names = { 0 };
	unsigned ids[256];
	size_t n;

	if (active) {
		VGPU_AUTOFREE char *dom = owners(&c->recs, p);
		char text[32];

		if (!dom || strchr(dom, ','))
			return;
		snprintf(text, sizeof(text), "%u\n", p->id);
		if (vgpu_sysfs_mkdirs(c->fs, &d, VGPU_ACTIVATED_DIR) < 0 ||
		    vgpu_sysfs_replace(&d, dom, text, strlen(text)) < 0)
			vgpu_warn(&c->ctx, "cannot note partition %u for '%s' in %s", p->id, dom,
				  VGPU_ACTIVATED_DIR);
		return;
	}
	n = notes_read(c, &names, ids, sizeof(ids) / sizeof(ids[0]));
	if (n && vgpu_sysdir_open(c->fs, &d, VGPU_ACTIVATED_DIR) == 0)
		for (size_t i = 0; i < n; i++)
			if (ids[i] == p->id)
				vgpu_sysfs_unlink(&d, names.items[i]);
}

/* fab_open(): no Fabric Manager configuration on this host (not an exit code) */
#define FAB_NONE (-1)

/*
 * Open what every form needs: the host (with types for activate), the mode,
 * Fabric Manager, NVML's module IDs and the partitions.  Return: 0, FAB_NONE
 * when there is no Fabric Manager configuration (said by the caller), or an
 * exit code after the error is said.
 */
static int fab_open(struct cli *c, struct fab *x, unsigned what)
{
	struct vgpu_nvml *nvml;
	int r = cli_read_host(c, what);

	if (r)
		return r;
	if (vgpu_fabric_mode_read(&c->ctx, c->fs, &x->mode) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (x->mode == VGPU_FABRIC_NONE)
		return FAB_NONE;
	if (cli_nvfm(c, &x->fm) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (!x->fm) {
		cli_error(
			c,
			"fabric: '%s' is another host's root: name its Fabric Manager SDK library with --nvfm LIB",
			c->sysroot);
		return EXIT_FAILURE;
	}
	nvml = cli_nvml(c);
	if (nvml)
		vgpu_nvml_module_ids(&c->ctx, nvml, c->model);
	for (size_t i = 0; i < c->model->n_gpus; i++)
		x->modules |= c->model->gpus[i].module_id >= 0;
	x->f.mode = x->mode;
	if (vgpu_fm_read(&c->ctx, x->fm, c->model, &x->f) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (!x->modules && x->f.n)
		fprintf(c->err,
			"vgpuctl: warning: NVML gave no module IDs: GPUs are named by module ID only%s\n",
			nvml ? "" : " (name NVML with --nvml LIB)");
	return 0;
}

static void json_part(struct cli *c, const struct vgpu_fabric_part *p, const char *domains)
{
	fprintf(c->out,
		"{\"id\": %u, \"size\": %zu, \"supported\": %s, \"active\": %s, \"domains\": [",
		p->id, p->ngpus, p->supported ? "true" : "false", p->active ? "true" : "false");
	for (const char *d = domains; d && *d;) {
		size_t len = strcspn(d, ",");
		VGPU_AUTOFREE char *one = vgpu_xstrndup(d, len);

		if (d != domains)
			fputs(", ", c->out);
		cli_json_str(c->out, one);
		d += len + (d[len] == ',');
	}
	fputs("], \"gpus\": [", c->out);
	for (size_t k = 0; k < p->ngpus; k++) {
		const struct vgpu_fabric_gpu *g = &p->gpu[k];

		fprintf(c->out, "%s{\"module_id\": %u, \"address\": ", k ? ", " : "", g->module_id);
		if (g->bus[0])
			cli_json_str(c->out, g->bus);
		else
			fputs("null", c->out);
		fprintf(c->out, ", \"nvlinks\": %u, \"max_nvlinks\": %u}", g->nvlinks,
			g->max_nvlinks);
	}
	fputs("]}", c->out);
}

static int show(struct cli *c)
{
	struct fab x = { 0 };
	struct cli_table *tb;
	int r = fab_open(c, &x, 0);

	if (r == FAB_NONE) {
		if (c->json)
			fputs("{\"schema_version\": 1, \"mode\": \"none\", \"fabric_mode\": null, \"partitions\": [], \"nvlink_failed\": []}\n",
			      c->out);
		else
			fprintf(c->out,
				"No Fabric Manager on this host: no /%s (not an NVSwitch system)\n",
				VGPU_FABRIC_CFG);
		return EXIT_SUCCESS;
	}
	if (r) {
		fab_clear(&x);
		return r;
	}
	if (c->json) {
		fprintf(c->out,
			"{\"schema_version\": 1, \"mode\": \"%s\", \"fabric_mode\": %d, \"partitions\": [",
			mode_name(x.mode), (int)x.mode);
		for (size_t i = 0; i < x.f.n; i++) {
			VGPU_AUTOFREE char *d = owners(&c->recs, &x.f.v[i]);

			fputs(i ? ", " : "", c->out);
			json_part(c, &x.f.v[i], d);
		}
		fputs("], \"nvlink_failed\": [", c->out);
		for (size_t i = 0; i < x.f.failed.n; i++) {
			fputs(i ? ", " : "", c->out);
			cli_json_str(c->out, x.f.failed.items[i]);
		}
		fputs("]}\n", c->out);
		fab_clear(&x);
		return EXIT_SUCCESS;
	}
	fprintf(c->out, "Fabric Manager: %s mode (FABRIC_MODE=%d)\n", mode_name(x.mode),
		(int)x.mode);
	tb = cli_table(c, "fabric", fabric_cols, ARRAY_SIZE(fabric_cols));
	for (size_t i = 0; i < x.f.n; i++) {
		const struct vgpu_fabric_part *p = &x.f.v[i];
		struct cli_line *ln = cli_line_new(tb);
		VGPU_AUTOFREE char *mods = NULL;
		VGPU_AUTOFREE char *gpus = NULL;

		for (size_t k = 0; k < p->ngpus; k++) {
			vgpu_append(&mods, "%s%u", k ? "," : "", p->gpu[k].module_id);
			vgpu_append(&gpus, "%s%s", k ? "," : "",
				    p->gpu[k].bus[0] ? p->gpu[k].bus : "-");
		}
		cli_cell_num(ln, 0, (long)p->id, true);
		cli_cell_num(ln, 1, (long)p->ngpus, true);
		cli_cell_str(ln, 2, p->supported ? "yes" : "no");
		cli_cell_str(ln, 3, p->active ? "yes" : "no");
		cli_cell(ln, 4, owners(&c->recs, p));
		cli_cell_str(ln, 5, mods);
		cli_cell_str(ln, 6, gpus);
	}
	r = cli_table_print(c, tb);
	for (size_t i = 0; r == EXIT_SUCCESS && i < x.f.failed.n; i++)
		fprintf(c->out, "NVLink-failed: %s\n", x.f.failed.items[i]);
	fab_clear(&x);
	return r;
}

/* Partition @id of @x, after its checks; NULL after saying why. */
static const struct vgpu_fabric_part *find_part(struct cli *c, const struct fab *x, unsigned id)
{
	for (size_t i = 0; i < x->f.n; i++) {
		if (x->f.v[i].id != id)
			continue;
		if (!x->f.v[i].supported) {
			cli_error(c, "fabric: partition %u is unsupported on this board", id);
			return NULL;
		}
		return &x->f.v[i];
	}
	cli_error(c, "fabric: no partition %u (see 'vgpuctl fabric')", id);
	return NULL;
}

/* Is VF @vf free: no vGPU on it, no record claims it? */
static bool vf_free(const struct vgpu_parent *vf)
{
	return vf->index >= 0 && !vf->in_use && !vf->state_unknown && !vf->current_type &&
	       !vf->mdevs.n && !vf->n_reserved && !vf->n_claimed;
}

/*
 * One VF per GPU of @p, in its order: @given (each a VF of one of its GPUs),
 * else the VFs of the domain whose records hold exactly these GPUs, else each
 * GPU's first free VF.  Return: 0, or EXIT_FAILURE after saying why.
 */
static int pick_vfs(struct cli *c, const struct vgpu_fabric_part *p, const struct vgpu_strv *given,
		    char (*vfs)[VGPU_BDF_LEN])
{
	VGPU_AUTOFREE char *dom = owners(&c->recs, p);

	if (given->n && given->n != p->ngpus) {
		cli_error(c, "fabric: partition %u has %zu GPUs: give one --vf for each, not %zu",
			  p->id, p->ngpus, given->n);
		return EXIT_FAILURE;
	}
	for (size_t k = 0; k < p->ngpus; k++) {
		const char *bus = p->gpu[k].bus;
		const struct vgpu_gpu *g = bus[0] ? vgpu_model_find_gpu(c->model, bus) : NULL;

		vfs[k][0] = '\0';
		if (!g) {
			cli_error(
				c,
				"fabric: partition %u: the GPU of module ID %u is not known (NVML gives no module IDs?)",
				p->id, p->gpu[k].module_id);
			return EXIT_FAILURE;
		}
		for (size_t i = 0; i < given->n; i++) {
			const struct vgpu_parent *vf =
				vgpu_model_find_parent(c->model, given->items[i]);

			if (vf && vf->gpu == g && vf->index >= 0)
				snprintf(vfs[k], VGPU_BDF_LEN, "%s", vf->addr);
		}
		if (given->n && !vfs[k][0]) {
			cli_error(c, "fabric: partition %u: no --vf is a VF of its GPU %s", p->id,
				  bus);
			return EXIT_FAILURE;
		}
		/* the domain's vGPU on this GPU: its record's VF */
		for (size_t i = 0; !given->n && dom && !strchr(dom, ',') && i < c->recs.n; i++)
			if (c->recs.v[i].partitioned && c->recs.v[i].partition == p->id &&
			    strcmp(c->recs.v[i].gpu, bus) == 0 && !vfs[k][0])
				snprintf(vfs[k], VGPU_BDF_LEN, "%s", c->recs.v[i].parent);
		for (size_t i = 0; !vfs[k][0] && i < g->n_parents; i++)
			if (vf_free(&g->parents[i]))
				snprintf(vfs[k], VGPU_BDF_LEN, "%s", g->parents[i].addr);
		if (!vfs[k][0]) {
			cli_error(c,
				  "fabric: partition %u: GPU %s has no free VF to activate it with",
				  p->id, bus);
			return EXIT_FAILURE;
		}
	}
	return 0;
}

static int lock_host(struct cli *c)
{
	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (vgpu_sysfs_lock(&c->ctx, c->fs, VGPU_ASSIGN_LOCK_WAIT_MS) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

/* A change: activate (@activate true) or deactivate @id, or resync (@id NULL). */
static int change(struct cli *c, const char *verb, const char *id_arg,
		  const struct vgpu_strv *given)
{
	struct fab x = { 0 };
	unsigned long id = 0;
	char *end;
	int r;

	if (id_arg) {
		errno = 0;
		id = strtoul(id_arg, &end, 10);
		if (errno || end == id_arg || *end || *id_arg == '-' || id > 0xffffffffUL)
			return cli_usage_error(c, "fabric", "%s '%s': not a partition ID", verb,
					       id_arg);
	}
	r = lock_host(c);
	if (!r)
		r = fab_open(c, &x, VGPU_READ_TYPES);
	if (r == FAB_NONE) {
		cli_error(c, "fabric %s: no Fabric Manager on this host (no /%s)", verb,
			  VGPU_FABRIC_CFG);
		return EXIT_FAILURE;
	}
	if (r) {
		fab_clear(&x);
		return r;
	}
	if (x.mode == VGPU_FABRIC_BAREMETAL) {
		cli_error(
			c,
			"fabric %s: Fabric Manager runs in bare-metal mode (FABRIC_MODE=0): no partitions",
			verb);
		fab_clear(&x);
		return EXIT_FAILURE;
	}
	if (strcmp(verb, "resync") == 0) {
		size_t max = x.f.n + c->recs.n + 64;
		VGPU_AUTOFREE unsigned *ids = vgpu_xcalloc(max, sizeof(*ids));
		size_t n = resync_ids(c, &x, ids, max);

		r = vgpu_fm_set_activated(&c->ctx, x.fm, ids, n);
		if (r == 0) {
			fprintf(c->out, "Fabric Manager told the active partitions:");
			for (size_t i = 0; i < n; i++)
				fprintf(c->out, " %u", ids[i]);
			fprintf(c->out, "%s\n", n ? "" : " none");
		}
	} else {
		const struct vgpu_fabric_part *p = find_part(c, &x, (unsigned)id);
		char vfs[VGPU_FABRIC_MAX_GPUS][VGPU_BDF_LEN];
		bool with_vfs = x.mode == VGPU_FABRIC_VGPU;

		if (!p) {
			fab_clear(&x);
			return EXIT_FAILURE;
		}
		if (strcmp(verb, "deactivate") == 0) {
			r = vgpu_fm_deactivate(&c->ctx, x.fm, p->id);
			/* not active (FM_ST_UNINITIALIZED) is what a note must not say either */
			if (r == 0 || r == -ENOENT)
				notes_update(c, p, false);
			if (r == 0)
				fprintf(c->out, "fabric partition %u deactivated\n", p->id);
		} else if (given->n && !with_vfs) {
			cli_error(
				c,
				"fabric activate: --vf is for vGPU mode (FABRIC_MODE=2), not %s mode",
				mode_name(x.mode));
			fab_clear(&x);
			return EXIT_FAILURE;
		} else {
			if (with_vfs && pick_vfs(c, p, given, vfs)) {
				fab_clear(&x);
				return EXIT_FAILURE;
			}
			r = vgpu_fm_activate(&c->ctx, x.fm, p->id,
					     with_vfs ? (const char(*)[VGPU_BDF_LEN])vfs : NULL,
					     with_vfs ? p->ngpus : 0);
			if (r == 0) {
				notes_update(c, p, true);
				fprintf(c->out, "fabric partition %u activated", p->id);
				for (size_t k = 0; with_vfs && k < p->ngpus; k++)
					fprintf(c->out, "%s%s", k ? " " : " with VFs ", vfs[k]);
				fputc('\n', c->out);
			}
		}
	}
	if (r < 0)
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
	fab_clear(&x);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cmd_fabric(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vf", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "fabric", .own = opts, .own_short = "h", .table = true };
	VGPU_AUTOSTRV given = { 0 };
	const char *verb;
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 'v':
			vgpu_strv_push(&given, vgpu_xstrdup(optarg));
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind >= argc) {
		if (given.n)
			return cli_usage_error(c, "fabric", "--vf is for 'fabric activate ID'");
		return show(c);
	}
	verb = argv[optind];
	if (strcmp(verb, "activate") == 0 || strcmp(verb, "deactivate") == 0) {
		if (argc - optind != 2)
			return cli_usage_error(c, "fabric", "%s takes one partition ID", verb);
		if (given.n && strcmp(verb, "activate") != 0)
			return cli_usage_error(c, "fabric", "--vf is for 'fabric activate ID'");
		return change(c, verb, argv[optind + 1], &given);
	}
	if (strcmp(verb, "resync") == 0) {
		if (argc - optind != 1 || given.n)
			return cli_usage_error(c, "fabric", "resync takes no argument");
		return change(c, verb, NULL, &given);
	}
	return cli_usage_error(c, "fabric",
			       "unknown subcommand '%s' (activate, deactivate, resync)", verb);
}
