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

static void add_record(struct cli *c, struct cli_table *t, const struct vgpu_record *r,
		       enum vgpu_state state)
{
	char key[VGPU_RECORD_KEY_LEN];

	struct cli_line *ln = cli_line_new(t);

	vgpu_record_key(r, key);
	cli_cell_str(ln, 0, r->gpu);
	cli_cell_str(ln, 1, r->parent);
	cli_cell_str(ln, 2, vgpu_iface_str(r->iface));
	cli_cell_num(ln, 3, r->type_id, true);
	cli_cell_str(ln, 4, r->profile);
	cli_cell_str(ln, 5, r->mdev_uuid[0] ? r->mdev_uuid : NULL);
	cli_cell_str(ln, 6, r->domain);
	cli_cell_str(ln, 7, r->domain_uuid);
	cli_cell_str(ln, 8, vgpu_lifetime_str(r->lifetime));
	cli_cell_str(ln, 9, vgpu_state_str(state));
	cli_cell(ln, 10, record_path(c, key));
}

/* A record that cannot be read: its parent stays blocked until someone looks at the file. */
static void add_damaged(struct cli *c, struct cli_table *t, const struct cli_vgpu *v)
{
	struct cli_line *ln = cli_line_new(t);
	const char *key = v->damaged_key, *mdev = strchr(key, '_');
	const struct vgpu_parent *p = v->parent;

	cli_cell_str(ln, 0, p ? p->gpu->addr : NULL);
	cli_cell_str(ln, 1, v->damaged_parent);
	cli_cell_str(ln, 2, p ? vgpu_iface_str(p->iface) : NULL);
	cli_cell_str(ln, 5, mdev && vgpu_uuid_valid(mdev + 1) ? mdev + 1 : NULL);
	cli_cell_str(ln, 9, vgpu_state_str(VGPU_STATE_DAMAGED));
	cli_cell(ln, 10, record_path(c, key));
}

/*
 * A vGPU on the host that no record claims: the host config's when its
 * last apply made it (@label), else an orphan.
 */
static void add_orphan(struct cli *c, struct cli_table *t, const struct vgpu_orphan *o,
		       const char *label)
{
	const struct vgpu_parent *p = o->parent;
	const struct vgpu_type *ty = vgpu_model_find_type(c->model, p->gpu, p->current_type);
	struct cli_line *ln = cli_line_new(t);

	cli_cell_str(ln, 0, p->gpu->addr);
	cli_cell_str(ln, 1, p->addr);
	cli_cell_str(ln, 2, vgpu_iface_str(p->iface));
	cli_cell_num(ln, 3, p->current_type, p->current_type != 0);
	cli_cell_str(ln, 4, ty ? ty->info.profile : NULL);
	cli_cell_str(ln, 5, o->mdev);
	cli_cell_str(ln, 9, vgpu_state_str(label ? VGPU_STATE_CONFIG : VGPU_STATE_ORPHAN));
	if (label) {
		char rel[VGPU_PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/apply@%s", VGPU_RUNS_DIR, label);
		cli_cell_str(ln, 10, rel);
		cli_cell_str(ln, 11, label);
	}
}

void cli_vgpus_read(struct cli *c, const struct vgpu_run *runs, size_t n_runs,
		    struct cli_vgpus *out)
{
	const struct vgpu_records *recs = &c->recs;
	size_t n_orphans = vgpu_host_orphans(c->model, recs, &out->orphans);
	struct cli_vgpu *v =
		vgpu_xcalloc(recs->n + recs->damaged_keys.n + n_orphans + 1, sizeof(*v));
	size_t n = 0;

	out->runs_read = NULL;
	out->n_runs_read = 0;
	if (!runs && n_orphans) {
		out->n_runs_read = vgpu_runs_read(&c->ctx, c->fs, &out->runs_read);
		runs = out->runs_read;
		n_runs = out->n_runs_read;
	}
	for (size_t i = 0; i < recs->n; i++, n++) {
		v[n].rec = &recs->v[i];
		v[n].state = vgpu_host_record_state(&c->ctx, c->fs, v[n].rec);
	}
	for (size_t i = 0; i < recs->damaged_keys.n; i++, n++) {
		/* the file name starts with the parent it claims (records.h) */
		const char *key = recs->damaged_keys.items[i];

		v[n].damaged_key = key;
		snprintf(v[n].damaged_parent, sizeof(v[n].damaged_parent), "%.*s",
			 (int)strcspn(key, "_"), key);
		v[n].parent = vgpu_model_find_parent(c->model, v[n].damaged_parent);
		v[n].state = VGPU_STATE_DAMAGED;
	}
	for (size_t i = 0; i < n_orphans; i++, n++) {
		const struct vgpu_parent *p = out->orphans[i].parent;

		v[n].orphan = &out->orphans[i];
		v[n].parent = p;
		v[n].config = vgpu_runs_config_of(runs, n_runs, p->addr, p->current_type,
						  out->orphans[i].mdev);
		v[n].state = v[n].config ? VGPU_STATE_CONFIG : VGPU_STATE_ORPHAN;
	}
	out->v = v;
	out->n = n;
}

void cli_vgpus_clear(struct cli_vgpus *vg)
{
	free(vg->v);
	free(vg->orphans);
	vgpu_runs_free(vg->runs_read, vg->n_runs_read);
	memset(vg, 0, sizeof(*vg));
}

int cli_list_vgpus(struct cli *c, const struct cli_vgpus *vg, const char *name, unsigned states)
{
	struct cli_table *t = cli_table(c, name, vgpu_cols, ARRAY_SIZE(vgpu_cols));

	for (size_t i = 0; i < vg->n; i++) {
		const struct cli_vgpu *v = &vg->v[i];

		if (!(states & (1u << v->state)))
			continue;
		if (v->rec)
			add_record(c, t, v->rec, v->state);
		else if (v->damaged_key)
			add_damaged(c, t, v);
		else
			add_orphan(c, t, v->orphan, v->config);
	}
	return cli_table_print(c, t);
}

int cmd_vgpus(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct cli_opts go = { .cmd = "vgpus", .own = opts, .own_short = "h", .table = true };
	struct cli_vgpus vg;
	int r;

	while ((r = cli_getopt(c, &go, argc, argv)) != -1)
		return r == 'h' ? -1 : EXIT_USAGE;
	if (optind < argc)
		return cli_usage_error(c, "vgpus", "unexpected argument '%s'", argv[optind]);
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_GPUS);
	if (r)
		return r;
	cli_name_held_types(c);
	cli_vgpus_read(c, NULL, 0, &vg);
	r = cli_list_vgpus(c, &vg, "vgpus", ~0u);
	cli_vgpus_clear(&vg);
	return r;
}
