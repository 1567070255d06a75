// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host's vGPUs as one list of rows (vgpus.h): what `vgpuctl vgpus`, the
 * inventory and the metrics each render.
 */
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "vgpus.h"

/* A record's vgpu_params: configured (the note params keeps) and as the file reads. */
static void row_params(struct vgpu_sysfs *fs, struct vgpu_row *row)
{
	char text[VGPU_PARAMS_TEXT_MAX];
	struct vgpu_params set;
	struct vgpu_ctx quiet;

	vgpu_ctx_init(&quiet, NULL, NULL);
	if (vgpu_live_params_noted(&quiet, fs, row->rec->domain_uuid, &set) == 0)
		row->params = vgpu_xstrdup(vgpu_params_format(&set, text, sizeof(text)));
	if (row->state == VGPU_STATE_ACTIVE &&
	    vgpu_live_params_read(&quiet, fs, row->rec, &set) == 0)
		row->params_file = vgpu_xstrdup(vgpu_params_format(&set, text, sizeof(text)));
	vgpu_ctx_clear(&quiet);
}

void vgpu_rows_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
		    const struct vgpu_records *recs, const struct vgpu_run *runs, size_t n_runs,
		    bool read_runs, struct vgpu_rows *out)
{
	struct vgpu_rows rows = { 0 };
	size_t n_orphans = vgpu_host_orphans(m, recs, &rows.orphans);
	struct vgpu_row *v =
		vgpu_xcalloc(recs->n + recs->damaged_keys.n + n_orphans + 1, sizeof(*v));
	size_t n = 0;

	if (read_runs) {
		runs = NULL;
		n_runs = 0;
		if (n_orphans) {
			rows.n_runs_read = vgpu_runs_read(ctx, fs, &rows.runs_read);
			runs = rows.runs_read;
			n_runs = rows.n_runs_read;
		}
	}
	for (size_t i = 0; i < recs->n; i++, n++) {
		char key[VGPU_RECORD_KEY_LEN];

		v[n].rec = &recs->v[i];
		vgpu_record_key(v[n].rec, key);
		v[n].key = vgpu_xstrdup(key);
		v[n].state = vgpu_host_record_state(ctx, fs, v[n].rec);
		row_params(fs, &v[n]);
	}
	for (size_t i = 0; i < recs->damaged_keys.n; i++, n++) {
		/* the file name: the parent it claims, then "_MDEV" for an mdev (records.h) */
		const char *mdev;

		v[n].key = vgpu_xstrdup(recs->damaged_keys.items[i]);
		snprintf(v[n].claimed_parent, sizeof(v[n].claimed_parent), "%.*s",
			 (int)strcspn(v[n].key, "_"), v[n].key);
		v[n].parent = vgpu_model_find_parent(m, v[n].claimed_parent);
		mdev = strchr(v[n].key, '_');
		v[n].damaged_mdev = mdev && vgpu_uuid_valid(mdev + 1) ? mdev + 1 : NULL;
		v[n].state = VGPU_STATE_DAMAGED;
	}
	for (size_t i = 0; i < n_orphans; i++, n++) {
		const struct vgpu_orphan *o = &rows.orphans[i];
		const struct vgpu_parent *p = o->parent;

		v[n].orphan = o;
		v[n].parent = p;
		v[n].type = vgpu_model_find_type(m, p->gpu, p->current_type);
		v[n].config = vgpu_runs_config_of(runs, n_runs, p->addr, p->current_type, o->mdev);
		v[n].state = v[n].config ? VGPU_STATE_CONFIG : VGPU_STATE_ORPHAN;
	}
	rows.v = v;
	rows.n = n;
	*out = rows;
}

void vgpu_rows_clear(struct vgpu_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++) {
		free(rows->v[i].key);
		free(rows->v[i].params);
		free(rows->v[i].params_file);
	}
	free(rows->v);
	free(rows->orphans);
	vgpu_runs_free(rows->runs_read, rows->n_runs_read);
	memset(rows, 0, sizeof(*rows));
}

const char *vgpu_row_gpu(const struct vgpu_row *row)
{
	if (row->rec)
		return row->rec->gpu;
	return row->parent ? row->parent->gpu->addr : NULL;
}

const char *vgpu_row_profile(const struct vgpu_row *row)
{
	if (row->rec)
		return row->rec->profile;
	return row->type ? row->type->info.profile : NULL;
}
