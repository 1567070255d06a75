/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vgpus.h - the host's vGPUs as one list of rows: every owner record with
 * its state, every record that cannot be read, and every vGPU no record
 * claims (made by a host config's apply, or an orphan).  `vgpuctl vgpus`,
 * the inventory's vgpus and reservations sections and the metrics all
 * render this one list, so they cannot disagree on what is there.
 */
#ifndef VGPU_VGPUS_H
#define VGPU_VGPUS_H

#include <stddef.h>

#include "read-host.h"
#include "model.h"
#include "records.h"
#include "runs.h"

/* One row: an owner record (@rec), a vGPU no record claims (@orphan), or a damaged record. */
struct vgpu_row {
	enum vgpu_state state; /* records: read fresh; DAMAGED; CONFIG or ORPHAN */
	const struct vgpu_record *rec; /* an owner record (in the records), else NULL */
	/* the record's file name under VGPU_RECORDS_DIR (owned); NULL for an unclaimed vGPU */
	char *key;
	/* a damaged record: the parent its file name claims, "" for none */
	char claimed_parent[VGPU_BDF_LEN];
	/* a damaged record: the UUID its file name carries when it is one, else NULL (in @key) */
	const char *damaged_mdev;
	const struct vgpu_orphan *orphan; /* a vGPU no record claims, else NULL */
	/* damaged or unclaimed: the parent in the model, or NULL (a damaged record's is gone) */
	const struct vgpu_parent *parent;
	const struct vgpu_type *type; /* unclaimed: the type it holds, NULL when no list names it */
	const char *config; /* unclaimed and CONFIG: the config label whose apply made it */
	/* a record's: the vgpu_params set `params` last configured (owned), NULL: none */
	char *params;
	/* a record's: what its vgpu_params file reads, as "k=v,..." (owned), NULL: no file */
	char *params_file;
};

struct vgpu_rows {
	struct vgpu_row *v;
	size_t n;
	struct vgpu_orphan *orphans; /* what the unclaimed rows point to */
	struct vgpu_run *runs_read; /* the runs read here (@read_runs) */
	size_t n_runs_read;
};

/**
 * vgpu_rows_read() - every row, in listing order: the records (each state
 * read fresh from the host), the damaged records (their file names sorted),
 * then the vGPUs no record claims (parents in model order).
 * @ctx: warnings (a record whose parent cannot be read, a run that cannot be read)
 * @fs: the host root
 * @m: the host, read with VGPU_READ_TYPES (a held type's profile comes from the
 *     catalogue of its GPU or a sibling of the same model)
 * @recs: its owner records, damaged ones included
 * @runs: the last runs (vgpu_runs_read()), which tell a config's vGPUs from
 *        orphans; ignored when @read_runs
 * @n_runs: how many
 * @read_runs: the caller has not read the runs: read them from @fs here, and
 *             only when some vGPU is unclaimed (a listing that needs them for
 *             nothing else)
 * @out: the rows; free with vgpu_rows_clear().  They point into @m and @recs,
 *       which must outlive them.
 */
void vgpu_rows_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
		    const struct vgpu_records *recs, const struct vgpu_run *runs, size_t n_runs,
		    bool read_runs, struct vgpu_rows *out);

/**
 * vgpu_rows_clear() - free what @rows holds and zero it.
 * @rows: from vgpu_rows_read() (a zeroed one is fine)
 */
void vgpu_rows_clear(struct vgpu_rows *rows);

/**
 * vgpu_row_gpu() - the address of the GPU a row is on.
 * @row: a row
 * Return: the address (borrowed), or NULL for a damaged record whose parent
 * is not on the host.
 */
const char *vgpu_row_gpu(const struct vgpu_row *row);

/**
 * vgpu_row_profile() - the profile of the type a row holds or reserves.
 * @row: a row
 * Return: the profile (borrowed), or NULL when it is not known (a damaged
 * record; a held type no list names).
 */
const char *vgpu_row_profile(const struct vgpu_row *row);

#endif
