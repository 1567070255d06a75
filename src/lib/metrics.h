/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.h - the host's vGPU state as Prometheus gauges: which series
 * exist, with which labels and values (what counts as a free VF, which vGPUs
 * and records are exported, where MIG mode is known, the last runs), and the
 * text exposition format (version 0.0.4) they are written in.  A use case
 * beside the inventory: `vgpuctl metrics` parses its options, calls
 * vgpu_metrics_collect() and vgpu_metrics_text(), and writes the text.
 */
#ifndef VGPU_METRICS_H
#define VGPU_METRICS_H

#include <stddef.h>
#include <time.h>

#include "read-host.h"
#include "model.h"
#include "records.h"
#include "runs.h"

struct vgpu_catalogue;

/* The most labels one series carries (vgpuctl_vgpu's nine) */
#define VGPU_METRIC_LABELS_MAX 10

struct vgpu_metric_label {
	const char *name; /* static text */
	char *value; /* owned */
};

/* One series of a family: its labels, in the order they are written, and its value. */
struct vgpu_metric_sample {
	struct vgpu_metric_label labels[VGPU_METRIC_LABELS_MAX];
	size_t n_labels;
	long long value;
};

/* A family: every series is a gauge of what is true now. */
struct vgpu_metric_family {
	const char *name, *help; /* static text */
	struct vgpu_metric_sample *samples;
	size_t n;
};

struct vgpu_metrics {
	struct vgpu_metric_family *fams;
	size_t n;
};

/**
 * vgpu_metrics_collect() - every family for the host, in the order they are written.
 * @ctx: warnings (a record whose parent cannot be read)
 * @fs: the host root (the records' vGPUs are looked at), or NULL when @m is NULL
 * @m: the host read with VGPU_READ_TYPES, or NULL when it could not be read:
 *     then vgpuctl_up is 0 and only the runs follow
 * @recs: its owner records (damaged ones included); ignored when @m is NULL
 * @runs: the last apply/assert per config label (vgpu_runs_read()), or NULL
 * @n_runs: how many
 * @now: the time the metrics are written (vgpuctl_metrics_timestamp_seconds)
 * @cat: the message catalogue, for the kernel log's wedge lines (NULL: none)
 * @out: the families; clear with vgpu_metrics_clear()
 *
 * A VF is free when it holds no vGPU, no record reserves it and its state
 * can be read; a GPU without SR-IOV (its PF the one parent) has no VFs.
 * MIG mode is exported only where it is known (NVML) and only for boards
 * with MIG.  A damaged record is a vgpuctl_vgpu series (state "damaged")
 * and blocks its VF, but is not counted in vgpuctl_vgpus: its profile is
 * not known.
 */
void vgpu_metrics_collect(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_records *recs, const struct vgpu_run *runs,
			  size_t n_runs, time_t now, const struct vgpu_catalogue *cat,
			  struct vgpu_metrics *out);

struct vgpu_fabric;

/**
 * vgpu_metrics_add_fabric() - the fabric partitions of an HGX board, after
 * vgpu_metrics_collect()'s families: vgpuctl_fabric_partitions by state
 * (active per Fabric Manager; held by owner records but not active; free:
 * supported, inactive and of GPUs in no active or held partition;
 * unsupported), and vgpuctl_fabric_partition_active per partition (1
 * active, 0 not), labelled with its GPU count and the domain whose records
 * hold it ("" none).
 * @mt: the families
 * @f: the fabric (vgpu_fm_read())
 * @recs: the owner records
 */
void vgpu_metrics_add_fabric(struct vgpu_metrics *mt, const struct vgpu_fabric *f,
			     const struct vgpu_records *recs);

/**
 * vgpu_metrics_clear() - free what @mt holds and zero it.
 * @mt: families from vgpu_metrics_collect() (a zeroed one is fine)
 */
void vgpu_metrics_clear(struct vgpu_metrics *mt);

/**
 * vgpu_metrics_find() - the family named @name.
 * @mt: the families
 * @name: "vgpuctl_vfs", ...
 * Return: the family (borrowed), or NULL when @mt has none of that name.
 */
const struct vgpu_metric_family *vgpu_metrics_find(const struct vgpu_metrics *mt, const char *name);

/**
 * vgpu_metric_label() - the value of label @name of @s.
 * @s: a series
 * @name: the label's name
 * Return: the value (borrowed), or NULL when @s has no such label.
 */
const char *vgpu_metric_label(const struct vgpu_metric_sample *s, const char *name);

/**
 * vgpu_metrics_text() - @mt in Prometheus's text exposition format: per
 * family a HELP and a TYPE gauge line, then its series, label values escaped
 * (backslash, double quote, newline).
 * @mt: the families
 * @len: the text's length, on return
 * Return: the text (NUL-terminated); caller frees it.
 */
char *vgpu_metrics_text(const struct vgpu_metrics *mt, size_t *len);

#endif
