// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl vgpus: every vGPU and reservation on the host, with its owner
 * (from the owner records) and its state.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cleanup.h"
#include "records.h"
#include "runs.h"
#include "vgpus.h"

static const struct col vgpu_cols[] = {
	{ "GPU", "gpu", COL_STR, 0 },
	{ "VF", "vf", COL_STR, 0 },
	{ "INTERFACE", "interface", COL_STR, 0 },
	{ "TYPE", "type_id", COL_NUM, COL_RIGHT },
	{ "PROFILE", "profile", COL_STR, 0 },
	{ "MDEV", "mdev_uuid", COL_STR, 0 },
	{ "DOMAIN", "domain", COL_STR, 0 },
	{ "DOMAIN_UUID", "domain_uuid", COL_STR, COL_JSON_ONLY },
	{ "LIFETIME", "lifetime", COL_STR, 0 },
	{ "STATE", "state", COL_STR, 0 },
	{ "RECORD", "record", COL_STR, COL_JSON_ONLY },
	/* state config: the host config label whose apply made it (runs.h) */
	{ "CONFIG", "config", COL_STR, COL_JSON_ONLY },
	/* vgpu_params: what `params` configured, what the file reads (the next start's) */
	{ "PARAMS", "params", COL_STR, COL_JSON_ONLY },
	{ "PARAMS_FILE", "params_file", COL_STR, COL_JSON_ONLY },
};

static const char *const vgpu_desc[] = {
	"PCI address of the GPU",
	"the VF (or PF) the vGPU is on",
	"vGPU interface: mdev or vendor-vfio",
	"vGPU type ID",
	"profile of the type",
	"mdev UUID",
	"the owner domain's name",
	"the owner domain's UUID (records are keyed by it)",
	"persistent, or per-start (made at each start)",
	"present, reserved, missing, damaged, orphan or config",
	"the owner record's file",
	"the host config whose apply made it",
	"the domain's vgpu_params set, as params keeps it (k=v,...)",
	"what the vGPU's vgpu_params file reads (what its next open takes)",
};

const struct cli_columns cli_vgpus_columns = CLI_COLUMNS(vgpu_cols, vgpu_desc, NULL);

/* The record file, as messages name it ("ROOT/var/lib/vgpuctl/owners/KEY"). */
static char *record_path(struct cli *c, const char *key)
{
	char rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN];
	struct vgpu_sysdir root;

	vgpu_sysdir_root(c->fs, &root);
	snprintf(rel, sizeof(rel), "%s/%s", VGPU_RECORDS_DIR, key);
	return vgpu_xstrdup(vgpu_sysdir_show(&root, rel, show, sizeof(show)));
}

static void add_record(struct cli *c, struct cli_table *t, const struct vgpu_row *v)
{
	const struct vgpu_record *r = v->rec;
	struct cli_line *ln = cli_line_new(t);

	cli_cell_str(ln, 0, r->gpu);
	cli_cell_str(ln, 1, r->parent);
	cli_cell_str(ln, 2, vgpu_iface_str(r->iface));
	cli_cell_num(ln, 3, r->type_id, true);
	cli_cell_str(ln, 4, r->profile);
	cli_cell_str(ln, 5, r->mdev_uuid[0] ? r->mdev_uuid : NULL);
	cli_cell_str(ln, 6, r->domain);
	cli_cell_str(ln, 7, r->domain_uuid);
	cli_cell_str(ln, 8, vgpu_lifetime_str(r->lifetime));
	cli_cell_str(ln, 9, vgpu_state_str(v->state));
	cli_cell(ln, 10, record_path(c, v->key));
	cli_cell_str(ln, 12, v->params);
	cli_cell_str(ln, 13, v->params_file);
}

/* A record that cannot be read: its parent stays blocked until someone looks at the file. */
static void add_damaged(struct cli *c, struct cli_table *t, const struct vgpu_row *v)
{
	struct cli_line *ln = cli_line_new(t);
	const struct vgpu_parent *p = v->parent;

	cli_cell_str(ln, 0, vgpu_row_gpu(v));
	cli_cell_str(ln, 1, v->claimed_parent);
	cli_cell_str(ln, 2, p ? vgpu_iface_str(p->iface) : NULL);
	cli_cell_str(ln, 5, v->damaged_mdev);
	cli_cell_str(ln, 9, vgpu_state_str(v->state));
	cli_cell(ln, 10, record_path(c, v->key));
}

/*
 * A vGPU on the host that no record claims: the host config's when its
 * last apply made it (the run's file in RECORD, its label in CONFIG), else
 * an orphan.
 */
static void add_unclaimed(struct cli_table *t, const struct vgpu_row *v)
{
	const struct vgpu_parent *p = v->parent;
	struct cli_line *ln = cli_line_new(t);

	cli_cell_str(ln, 0, vgpu_row_gpu(v));
	cli_cell_str(ln, 1, p->addr);
	cli_cell_str(ln, 2, vgpu_iface_str(p->iface));
	cli_cell_num(ln, 3, p->current_type, p->current_type != 0);
	cli_cell_str(ln, 4, vgpu_row_profile(v));
	cli_cell_str(ln, 5, v->orphan->mdev);
	cli_cell_str(ln, 9, vgpu_state_str(v->state));
	if (v->config) {
		char rel[VGPU_PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/apply@%s", VGPU_RUNS_DIR, v->config);
		cli_cell_str(ln, 10, rel);
		cli_cell_str(ln, 11, v->config);
	}
}

void cli_vgpus_read(struct cli *c, struct vgpu_rows *out)
{
	vgpu_rows_read(&c->ctx, c->fs, c->model, &c->recs, NULL, 0, true, out);
}

int cli_list_vgpus(struct cli *c, const struct vgpu_rows *rows, const char *name, unsigned states)
{
	struct cli_table *t = cli_table(c, name, vgpu_cols, ARRAY_SIZE(vgpu_cols));

	for (size_t i = 0; i < rows->n; i++) {
		const struct vgpu_row *v = &rows->v[i];

		if (!(states & (1u << v->state)))
			continue;
		if (v->rec)
			add_record(c, t, v);
		else if (v->orphan)
			add_unclaimed(t, v);
		else
			add_damaged(c, t, v);
	}
	return cli_table_print(c, t);
}

int cmd_vgpus(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct cli_opts go = { .cmd = "vgpus", .own = opts, .own_short = "h", .table = true };
	struct vgpu_rows vg;
	int r;

	/* the evidence names libvirt's domains: the module's */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (strcmp(argv[i], "--orphans") == 0)
			return cli_run_module(c, "vgpus_orphans", argc, argv);
	while ((r = cli_getopt(c, &go, argc, argv)) != -1)
		return r == 'h' ? CLI_HELP : EXIT_USAGE;
	if (optind < argc)
		return cli_usage_error(c, "vgpus", "unexpected argument '%s'", argv[optind]);
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_GPUS);
	if (r)
		return r;
	cli_name_held_types(c);
	cli_vgpus_read(c, &vg);
	r = cli_list_vgpus(c, &vg, "vgpus", ~0u);
	vgpu_rows_clear(&vg);
	return r;
}
