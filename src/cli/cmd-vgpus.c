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
static void add_damaged(struct cli *c, struct cli_table *t, const char *key)
{
	struct cli_line *ln = cli_line_new(t);
	char parent[VGPU_BDF_LEN];
	const char *mdev = strchr(key, '_');
	const struct vgpu_parent *p;

	snprintf(parent, sizeof(parent), "%.*s", (int)strcspn(key, "_"), key);
	p = vgpu_model_find_parent(c->model, parent);
	cli_cell_str(ln, 0, p ? p->gpu->addr : NULL);
	cli_cell_str(ln, 1, parent);
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

int cli_list_vgpus(struct cli *c, const char *name, unsigned states)
{
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOFREE struct vgpu_orphan *orphans = NULL;
	struct vgpu_run *runs = NULL;
	size_t n_orphans, n_runs;
	struct cli_table *t;

	if (vgpu_records_read(&c->ctx, c->fs, &recs) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	t = cli_table(c, name, vgpu_cols, sizeof(vgpu_cols) / sizeof(vgpu_cols[0]));
	for (size_t i = 0; i < recs.n; i++) {
		enum vgpu_state st = vgpu_host_record_state(&c->ctx, c->fs, &recs.v[i]);

		if (states & (1u << st))
			add_record(c, t, &recs.v[i], st);
	}
	for (size_t i = 0; (states & (1u << VGPU_STATE_DAMAGED)) && i < recs.damaged_keys.n; i++)
		add_damaged(c, t, recs.damaged_keys.items[i]);
	n_orphans = vgpu_host_orphans(c->model, &recs, &orphans);
	n_runs = n_orphans ? vgpu_runs_read(&c->ctx, c->fs, &runs) : 0;
	for (size_t i = 0; i < n_orphans; i++) {
		const struct vgpu_parent *p = orphans[i].parent;
		const char *label = vgpu_runs_config_of(runs, n_runs, p->addr, p->current_type,
							orphans[i].mdev);

		if (states & (1u << (label ? VGPU_STATE_CONFIG : VGPU_STATE_ORPHAN)))
			add_orphan(c, t, &orphans[i], label);
	}
	vgpu_runs_free(runs, n_runs);
	return cli_table_print(c, t);
}

int cmd_vgpus(struct cli *c, int argc, char **argv)
{
	int r;

	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
			return -1;
		return cli_usage_error(c, "vgpus", "unexpected argument '%s'", argv[1]);
	}
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_GPUS);
	if (r)
		return r;
	cli_name_held_types(c);
	return cli_list_vgpus(c, "vgpus", ~0u);
}
