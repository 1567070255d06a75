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
};

static void add_record(struct cli *c, struct cli_table *t, const struct vgpu_record *r)
{
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
	cli_cell_str(ln, 9, vgpu_state_str(vgpu_host_record_state(&c->ctx, c->fs, r)));
}

/* A vGPU on the host that no record claims. */
static void add_orphan(struct cli *c, struct cli_table *t, const struct vgpu_orphan *o)
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
	cli_cell_str(ln, 9, vgpu_state_str(VGPU_STATE_ORPHAN));
}

int cmd_vgpus(struct cli *c, int argc, char **argv)
{
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOFREE struct vgpu_orphan *orphans = NULL;
	size_t n_orphans;
	struct cli_table *t;
	int r;

	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
			return -1;
		return cli_usage_error(c, "vgpus", "unexpected argument '%s'", argv[1]);
	}
	r = cli_read_host(c, VGPU_READ_TYPES);
	if (r)
		return r;
	if (vgpu_records_read(&c->ctx, c->fs, &recs) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	t = cli_table(c, "vgpus", vgpu_cols, sizeof(vgpu_cols) / sizeof(vgpu_cols[0]));
	if (!t)
		return EXIT_FAILURE;
	for (size_t i = 0; i < recs.n; i++)
		add_record(c, t, &recs.v[i]);
	n_orphans = vgpu_host_orphans(c->model, &recs, &orphans);
	for (size_t i = 0; i < n_orphans; i++)
		add_orphan(c, t, &orphans[i]);
	return cli_table_print(c, t);
}
