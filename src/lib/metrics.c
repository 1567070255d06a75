// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The metrics use case: the host's vGPU state as Prometheus gauges (vGPUs per
 * GPU, profile and state, one series per vGPU with its owner domain, VFs free
 * and used, what fits per type from the capacity model, MIG mode where it is
 * known, records that block a VF, the last apply/assert per config label) and
 * their text exposition format.  contrib/prometheus/vgpuctl.rules.yml alerts
 * on what breaks VM starts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capacity.h"
#include "cleanup.h"
#include "fabric-place.h"
#include "metrics.h"
#include "mig-tables.h"
#include "orphans-host.h"
#include "vgpus.h"

/* ---- building families ---------------------------------------------------------- */

static struct vgpu_metric_family *family(struct vgpu_metrics *mt, const char *name,
					 const char *help)
{
	struct vgpu_metric_family *f;

	mt->fams = vgpu_xreallocarray(mt->fams, mt->n + 1, sizeof(*mt->fams));
	f = &mt->fams[mt->n++];
	*f = (struct vgpu_metric_family){ .name = name, .help = help };
	return f;
}

/*
 * A series of @f with @value and the labels given as name/value pairs, ended
 * by a NULL name (a NULL value is "").
 */
static void sample(struct vgpu_metric_family *f, long long value, ...)
{
	struct vgpu_metric_sample *s;
	const char *name;
	va_list ap;

	f->samples = vgpu_xreallocarray(f->samples, f->n + 1, sizeof(*f->samples));
	s = &f->samples[f->n++];
	memset(s, 0, sizeof(*s));
	s->value = value;
	va_start(ap, value);
	while ((name = va_arg(ap, const char *)) && s->n_labels < VGPU_METRIC_LABELS_MAX) {
		const char *v = va_arg(ap, const char *);

		s->labels[s->n_labels].name = name;
		s->labels[s->n_labels++].value = vgpu_xstrdup(v);
	}
	va_end(ap);
}

void vgpu_metrics_clear(struct vgpu_metrics *mt)
{
	for (size_t i = 0; i < mt->n; i++) {
		for (size_t k = 0; k < mt->fams[i].n; k++)
			for (size_t l = 0; l < mt->fams[i].samples[k].n_labels; l++)
				free(mt->fams[i].samples[k].labels[l].value);
		free(mt->fams[i].samples);
	}
	free(mt->fams);
	memset(mt, 0, sizeof(*mt));
}

const struct vgpu_metric_family *vgpu_metrics_find(const struct vgpu_metrics *mt, const char *name)
{
	for (size_t i = 0; i < mt->n; i++)
		if (strcmp(mt->fams[i].name, name) == 0)
			return &mt->fams[i];
	return NULL;
}

const char *vgpu_metric_label(const struct vgpu_metric_sample *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (strcmp(s->labels[i].name, name) == 0)
			return s->labels[i].value;
	return NULL;
}

/* ---- the vGPUs and records ---------------------------------------------------------- */

/* One vGPU or record, as the vgpus listing has it, as label values. */
struct vrow {
	char gpu[VGPU_BDF_LEN], vf[VGPU_BDF_LEN];
	const char *profile, *domain, *domain_uuid, *lifetime;
	char *record; /* the record's path, "" for a vGPU without one */
	unsigned type_id; /* 0: unknown */
	enum vgpu_state state;
	const struct vgpu_record *rec; /* NULL: damaged or unclaimed */
};

static int by_gpu_profile_state(const void *x, const void *y)
{
	const struct vrow *a = x, *b = y;
	int r = strcmp(a->gpu, b->gpu);

	if (!r)
		r = strcmp(a->profile, b->profile);
	return r ? r : (int)a->state - (int)b->state;
}

/*
 * The label values of the rows vgpus lists (vgpus.h): a damaged record's
 * claimed VF is "" when the host has no such parent.
 */
static size_t vgpu_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			const struct vgpu_records *recs, const struct vgpu_run *runs, size_t n_runs,
			struct vrow **out)
{
	struct vgpu_rows rows;
	struct vrow *v;
	size_t n;

	vgpu_rows_read(ctx, fs, m, recs, runs, n_runs, false, &rows);
	v = vgpu_xcalloc(rows.n + 1, sizeof(*v));
	for (size_t i = 0; i < rows.n; i++) {
		const struct vgpu_row *row = &rows.v[i];
		const struct vgpu_record *r = row->rec;
		const char *gpu = vgpu_row_gpu(row), *profile = vgpu_row_profile(row);

		snprintf(v[i].gpu, sizeof(v[i].gpu), "%s", gpu ? gpu : "");
		if (r)
			snprintf(v[i].vf, sizeof(v[i].vf), "%s", r->parent);
		else if (row->parent)
			snprintf(v[i].vf, sizeof(v[i].vf), "%s", row->parent->addr);
		v[i].profile = profile ? profile : "";
		v[i].domain = r ? r->domain : "";
		v[i].domain_uuid = r ? r->domain_uuid : "";
		v[i].lifetime = r ? vgpu_lifetime_str(r->lifetime) : "";
		v[i].record = row->key ? vgpu_asprintf("%s/%s", VGPU_RECORDS_DIR, row->key) :
					 vgpu_xstrdup("");
		v[i].type_id = r ? r->type_id : row->orphan ? row->parent->current_type : 0;
		v[i].state = row->state;
		v[i].rec = r;
	}
	n = rows.n;
	vgpu_rows_clear(&rows);
	*out = v;
	return n;
}

/*
 * Could the hook create @r's vGPU now, at the domain's next start?  Its VF
 * is there, holds no vGPU (vendor VFIO) and lists the type with room; an
 * mdev may also move to another free VF of its GPU that does (hook.c).
 */
static bool startable(const struct vgpu_model *m, const struct vgpu_record *r)
{
	const struct vgpu_gpu *g = vgpu_model_find_gpu(m, r->gpu);

	for (size_t i = 0; g && i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		bool own = strcmp(p->addr, r->parent) == 0;

		if (!own && r->iface != VGPU_IFACE_MDEV)
			continue;
		/* another parent must be free of claims too; the own one is claimed by @r */
		if (p->state_unknown || (p->in_use && p->iface != VGPU_IFACE_MDEV) ||
		    (!own && (p->in_use || p->n_reserved)))
			continue;
		for (size_t k = 0; k < p->n_types; k++)
			if (p->types[k].type->id == r->type_id && p->types[k].available > 0)
				return true;
	}
	return false;
}

static bool blocks(const struct vrow *v)
{
	return v->state == VGPU_STATE_DAMAGED || v->state == VGPU_STATE_CONFLICT;
}

static void vgpu_families(struct vgpu_metrics *mt, const struct vgpu_model *m, struct vrow *v,
			  size_t n)
{
	struct vgpu_metric_family *f;

	f = family(mt, "vgpuctl_vgpu",
		   "A vGPU or owner record (1), with its owner domain and state (vgpuctl vgpus)");
	for (size_t i = 0; i < n; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%u", v[i].type_id);
		sample(f, 1, "gpu", v[i].gpu, "vf", v[i].vf, "profile", v[i].profile, "type_id",
		       v[i].type_id ? id : "", "domain", v[i].domain, "domain_uuid",
		       v[i].domain_uuid, "lifetime", v[i].lifetime, "state",
		       vgpu_state_str(v[i].state), "record", v[i].record, NULL);
	}
	/* a damaged record's profile is not known: it is counted in the blocked VFs only */
	f = family(
		mt, "vgpuctl_vgpus",
		"vGPUs and owner records per GPU, profile and state (damaged records: vgpuctl_blocked_vfs)");
	{
		struct vrow *sorted = vgpu_xcalloc(n + 1, sizeof(*sorted));
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (v[i].state != VGPU_STATE_DAMAGED)
				sorted[k++] = v[i];
		qsort(sorted, k, sizeof(*sorted), by_gpu_profile_state);
		for (size_t i = 0, run = 1; i < k; i++, run++) {
			if (i + 1 < k && by_gpu_profile_state(&sorted[i], &sorted[i + 1]) == 0)
				continue;
			sample(f, (long long)run, "gpu", sorted[i].gpu, "profile",
			       sorted[i].profile, "state", vgpu_state_str(sorted[i].state), NULL);
			run = 0;
		}
		free(sorted);
	}
	/* a VF a record claims but cannot have: its record is damaged, or another vGPU is there */
	f = family(
		mt, "vgpuctl_blocked_vf",
		"A VF an owner record blocks (1): the record is damaged, or another vGPU holds the VF");
	for (size_t i = 0; i < n; i++)
		if (blocks(&v[i]))
			sample(f, 1, "gpu", v[i].gpu, "vf", v[i].vf, "record", v[i].record, "state",
			       vgpu_state_str(v[i].state), NULL);
	f = family(mt, "vgpuctl_blocked_vfs", "VFs that owner records block, per GPU");
	for (size_t g = 0; g < m->n_gpus; g++) {
		long long blocked = 0;

		for (size_t i = 0; i < n; i++)
			blocked += blocks(&v[i]) && strcmp(v[i].gpu, m->gpus[g].addr) == 0;
		sample(f, blocked, "gpu", m->gpus[g].addr, NULL);
	}
	f = family(
		mt, "vgpuctl_vgpu_startable",
		"For an owner record whose vGPU is not there (reserved, missing, incoming): 1 when the hook can create it at the domain's next start, 0 when that start would fail");
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_record *r = v[i].rec;
		char id[16];

		if (!r || (v[i].state != VGPU_STATE_MISSING && v[i].state != VGPU_STATE_RESERVED &&
			   v[i].state != VGPU_STATE_INCOMING))
			continue;
		snprintf(id, sizeof(id), "%u", r->type_id);
		sample(f, startable(m, r), "gpu", r->gpu, "vf", r->parent, "profile", r->profile,
		       "type_id", id, "domain", r->domain, "domain_uuid", r->domain_uuid,
		       "lifetime", vgpu_lifetime_str(r->lifetime), "state",
		       vgpu_state_str(v[i].state), NULL);
	}
}

/* ---- GPUs, VFs and types ------------------------------------------------------------- */

/* A VF's state as vgpuctl_vfs counts it; -1 for a PF parent, which is no VF. */
static int vf_state(const struct vgpu_parent *p)
{
	if (p->index < 0)
		return -1;
	return p->state_unknown ? 3 : p->in_use ? 1 : p->n_reserved ? 2 : 0;
}

static void gpu_families(struct vgpu_metrics *mt, const struct vgpu_model *m)
{
	static const char *const vf_states[] = { "free", "used", "reserved", "unknown" };
	struct vgpu_metric_family *f;

	f = family(mt, "vgpuctl_gpu_info",
		   "An NVIDIA GPU (1), with its model, interface and NUMA node");
	for (size_t i = 0; i < m->n_gpus; i++) {
		char node[16];

		snprintf(node, sizeof(node), "%d", m->gpus[i].numa_node);
		sample(f, 1, "gpu", m->gpus[i].addr, "model", m->gpus[i].model, "interface",
		       vgpu_iface_str(m->gpus[i].iface), "numa_node",
		       m->gpus[i].numa_node >= 0 ? node : "", NULL);
	}
	/*
	 * MIG mode is NVML's to say (the driver's files do not): absent where
	 * NVML did not answer, and for a board without MIG (L40S, T4)
	 */
	f = family(
		mt, "vgpuctl_mig_enabled",
		"MIG mode now: 1 enabled, 0 disabled (NVML; absent when unknown or the board has no MIG)");
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if (g->mig_current != VGPU_UNKNOWN && vgpu_mig_board_for_gpu(g))
			sample(f, g->mig_current == VGPU_ON, "gpu", g->addr, NULL);
	}
	f = family(mt, "vgpuctl_mig_pending_enabled",
		   "MIG mode after the next GPU reset: 1 enabled, 0 disabled (NVML only)");
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if (g->mig_pending != VGPU_UNKNOWN && vgpu_mig_board_for_gpu(g))
			sample(f, g->mig_pending == VGPU_ON, "gpu", g->addr, NULL);
	}
	f = family(mt, "vgpuctl_vfs", "vGPU parents (SR-IOV VFs) per GPU and state");
	for (size_t i = 0; i < m->n_gpus; i++) {
		long long count[ARRAY_SIZE(vf_states)] = { 0 };

		for (size_t j = 0; j < m->gpus[i].n_parents; j++) {
			int s = vf_state(&m->gpus[i].parents[j]);

			if (s >= 0)
				count[s]++;
		}
		for (size_t s = 0; s < ARRAY_SIZE(vf_states); s++)
			sample(f, count[s], "gpu", m->gpus[i].addr, "state", vf_states[s], NULL);
	}
}

/* available and max_instances per GPU and type: one capacity pass per GPU */
static void type_families(struct vgpu_metrics *mt, const struct vgpu_model *m,
			  const struct vgpu_records *recs)
{
	struct vgpu_metric_family *avail = family(
		mt, "vgpuctl_available",
		"vGPUs of the type that can be created now (the capacity model: VFs, reservations, framebuffer, MIG)");
	size_t ai = mt->n - 1;
	struct vgpu_metric_family *max;

	max = family(mt, "vgpuctl_max_instances",
		     "vGPUs of the type the GPU takes at most (driver)");
	avail = &mt->fams[ai]; /* the array moved */
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		struct vgpu_capacity *caps = vgpu_xcalloc(g->n_types + 1, sizeof(*caps));

		vgpu_gpu_capacities(m, g, recs, caps);
		for (size_t k = 0; k < g->n_types; k++) {
			const struct vgpu_type *t = g->types[k];
			char id[16];

			snprintf(id, sizeof(id), "%u", t->id);
			if (caps[k].available >= 0)
				sample(avail, caps[k].available, "gpu", g->addr, "profile",
				       t->info.profile, "type_id", id, NULL);
			if (caps[k].max_instances >= 0)
				sample(max, caps[k].max_instances, "gpu", g->addr, "profile",
				       t->info.profile, "type_id", id, NULL);
			vgpu_capacity_clear(&caps[k]);
		}
		free(caps);
	}
}

/*
 * vGPUs per class of their orphan evidence (orphans.h), every class present (0 when none), from
 * the host already read: no libvirt here, so what the domains tell (owned, stale, foreign,
 * orphan) is not told apart, and a vGPU nobody holds counts as unknown (fail closed).
 */
static void class_family(struct vgpu_metrics *mt, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			 const struct vgpu_records *recs, const struct vgpu_catalogue *cat)
{
	struct vgpu_metric_family *f;
	long long count[VGPU_OCLASS_N];
	struct vgpu_ctx quiet; /* the listing warned already */

	vgpu_ctx_init(&quiet, NULL, NULL);
	vgpu_orphans_count(&quiet, fs, m, recs, cat, count);
	vgpu_ctx_clear(&quiet);
	f = family(
		mt, "vgpuctl_vgpu_class",
		"vGPUs per class of their orphan evidence, without libvirt: in-use, wedged, conflict and incoming are told; owned, stale, foreign and orphan need the libvirt domains, so a vGPU nobody holds counts as unknown");
	for (int c = 0; c < VGPU_OCLASS_N; c++)
		sample(f, count[c], "class", vgpu_oclass_str((enum vgpu_oclass)c), NULL);
}

static void run_families(struct vgpu_metrics *mt, const struct vgpu_run *runs, size_t n)
{
	struct vgpu_metric_family *f;

	f = family(mt, "vgpuctl_last_run_timestamp_seconds",
		   "When apply or assert last ran for the config label (Unix time)");
	for (size_t i = 0; i < n; i++)
		sample(f, (long long)runs[i].time, "command", runs[i].command, "config",
		       runs[i].label, NULL);
	f = family(
		mt, "vgpuctl_last_run_exit_code",
		"Exit status of the last apply or assert: 0 matches or done, 1 failed or could not check, 3 the host differs from the config (assert)");
	for (size_t i = 0; i < n; i++)
		sample(f, runs[i].exit_code, "command", runs[i].command, "config", runs[i].label,
		       NULL);
	f = family(mt, "vgpuctl_last_run_differences",
		   "Differences the last apply or assert found between the host and the config");
	for (size_t i = 0; i < n; i++)
		sample(f, runs[i].differences, "command", runs[i].command, "config", runs[i].label,
		       NULL);
}

void vgpu_metrics_collect(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_records *recs, const struct vgpu_run *runs,
			  size_t n_runs, time_t now, const struct vgpu_catalogue *cat,
			  struct vgpu_metrics *out)
{
	struct vgpu_metrics mt = { 0 };

	/* a host that cannot be read is still a document: vgpuctl_up 0 is what alerts see */
	sample(family(&mt, "vgpuctl_up", "1 when vgpuctl could read the host, 0 when it could not"),
	       m != NULL, NULL);
	sample(family(&mt, "vgpuctl_metrics_timestamp_seconds",
		      "When vgpuctl wrote these metrics (Unix time)"),
	       (long long)now, NULL);
	if (m) {
		struct vrow *v = NULL;
		size_t n = vgpu_rows(ctx, fs, m, recs, runs, n_runs, &v);

		gpu_families(&mt, m);
		type_families(&mt, m, recs);
		vgpu_families(&mt, m, v, n);
		class_family(&mt, fs, m, recs, cat);
		for (size_t i = 0; i < n; i++)
			free(v[i].record);
		free(v);
	}
	run_families(&mt, runs, n_runs);
	*out = mt;
}

/* ---- the fabric partitions (HGX) -------------------------------------------------------- */

/* The domain whose records hold partition @id, or NULL. */
static const char *holder(const struct vgpu_records *recs, unsigned id)
{
	long long now = (long long)time(NULL);

	for (size_t i = 0; i < recs->n; i++)
		if (recs->v[i].partitioned && recs->v[i].partition == id &&
		    !vgpu_record_expired(&recs->v[i], now))
			return recs->v[i].domain;
	return NULL;
}

void vgpu_metrics_add_fabric(struct vgpu_metrics *mt, const struct vgpu_fabric *fab,
			     const struct vgpu_records *recs)
{
	VGPU_AUTOFREE unsigned *held = vgpu_xcalloc(recs->n + 1, sizeof(*held));
	struct vgpu_place_in in = { .fabric = fab, .taken = held };
	long long active = 0, unsupported = 0, held_only = 0;
	struct vgpu_metric_family *f;

	for (size_t i = 0; i < recs->n; i++)
		if (recs->v[i].partitioned)
			held[in.n_taken++] = recs->v[i].partition;
	for (size_t i = 0; i < fab->n; i++) {
		active += fab->v[i].active;
		unsupported += !fab->v[i].supported;
		held_only += !fab->v[i].active && holder(recs, fab->v[i].id);
	}
	f = family(
		mt, "vgpuctl_fabric_partitions",
		"NVSwitch fabric partitions by state: active (Fabric Manager), held (owner records, not active), free (could be activated now), unsupported");
	sample(f, active, "state", "active", NULL);
	sample(f, held_only, "state", "held", NULL);
	sample(f, (long long)vgpu_fabric_free_count(&in), "state", "free", NULL);
	sample(f, unsupported, "state", "unsupported", NULL);
	f = family(
		mt, "vgpuctl_fabric_partition_active",
		"1 when Fabric Manager says the partition is active, with the domain whose owner records hold it");
	for (size_t i = 0; i < fab->n; i++) {
		char id[16], gpus[16];
		const char *dom = holder(recs, fab->v[i].id);

		snprintf(id, sizeof(id), "%u", fab->v[i].id);
		snprintf(gpus, sizeof(gpus), "%zu", fab->v[i].ngpus);
		sample(f, fab->v[i].active, "partition", id, "gpus", gpus, "domain", dom ? dom : "",
		       NULL);
	}
}

/* ---- the text format ------------------------------------------------------------------ */

/* A label value: backslash, double quote and newline escaped (the format's only escapes). */
static void label_value(FILE *f, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

char *vgpu_metrics_text(const struct vgpu_metrics *mt, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort(); /* no memory for a few KiB: the OOM policy */
	for (size_t i = 0; i < mt->n; i++) {
		const struct vgpu_metric_family *fam = &mt->fams[i];

		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", fam->name, fam->help, fam->name);
		for (size_t k = 0; k < fam->n; k++) {
			const struct vgpu_metric_sample *s = &fam->samples[k];

			fputs(fam->name, f);
			for (size_t l = 0; l < s->n_labels; l++) {
				fprintf(f, "%s%s=\"", l ? "," : "{", s->labels[l].name);
				label_value(f, s->labels[l].value);
				fputc('"', f);
			}
			fprintf(f, "%s %lld\n", s->n_labels ? "}" : "", s->value);
		}
	}
	if (fclose(f) != 0)
		abort();
	return buf;
}
