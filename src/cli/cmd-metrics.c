// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl metrics [--textfile DIR]: the host's vGPU state in Prometheus's
 * text exposition format (version 0.0.4), for node-exporter's textfile
 * collector (--textfile: DIR/vgpuctl.prom, replaced atomically, so the
 * collector never reads half a file) or any scraper of stdout.  Every series
 * is a gauge of what is true now: vGPUs per GPU, profile and state, one
 * series per vGPU with its owner domain as a label, VFs free and used, what
 * fits per type (the capacity model), MIG mode, records that block a VF, and
 * the last apply/assert result per config label (runs.h).
 * contrib/prometheus/vgpuctl.rules.yml alerts on what breaks VM starts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capacity.h"
#include "cleanup.h"
#include "cli.h"
#include "records.h"
#include "runs.h"
#include "sysfs-state.h"

#define PROM_FILE "vgpuctl.prom"

/* A label value: backslash, double quote and newline escaped (the format's only escapes). */
static void label(FILE *f, const char *name, const char *v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One vGPU or record, as the vgpus listing has it. */
struct vrow {
	const char *gpu, *vf, *profile, *domain, *domain_uuid, *lifetime, *record;
	long type_id; /* 0: unknown */
	enum vgpu_state state;
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
 * The rows as the vgpus listing has them (cli_vgpus_read()), as label values;
 * @keys holds the record paths they point to (free each, then the array).
 */
static size_t vgpu_rows(struct cli *c, const struct cli_vgpus *vg, struct vrow **out, char ***keys)
{
	struct vrow *v = vgpu_xcalloc(vg->n + 1, sizeof(*v));

	*keys = vgpu_xcalloc(vg->n + 1, sizeof(**keys));
	for (size_t i = 0; i < vg->n; i++) {
		const struct cli_vgpu *x = &vg->v[i];
		const struct vgpu_record *r = x->rec;
		const struct vgpu_parent *p = x->parent;
		char key[VGPU_RECORD_KEY_LEN];

		if (r) {
			vgpu_record_key(r, key);
			(*keys)[i] = vgpu_asprintf("%s/%s", VGPU_RECORDS_DIR, key);
			v[i] = (struct vrow){ r->gpu,	      r->parent,
					      r->profile,     r->domain,
					      r->domain_uuid, vgpu_lifetime_str(r->lifetime),
					      (*keys)[i],     r->type_id,
					      x->state };
		} else if (x->damaged_key) {
			(*keys)[i] = vgpu_asprintf("%s/%s", VGPU_RECORDS_DIR, x->damaged_key);
			v[i] = (struct vrow){ p ? p->gpu->addr : "",
					      p ? p->addr : "",
					      "",
					      "",
					      "",
					      "",
					      (*keys)[i],
					      0,
					      x->state };
		} else {
			const struct vgpu_type *t =
				vgpu_model_find_type(c->model, p->gpu, p->current_type);

			v[i] = (struct vrow){ p->gpu->addr,
					      p->addr,
					      t && t->info.profile[0] ? t->info.profile : "",
					      "",
					      "",
					      "",
					      "",
					      p->current_type,
					      x->state };
		}
	}
	*out = v;
	return vg->n;
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

/* vgpuctl_vgpu_startable: the records whose vGPU is not there (reserved, missing) */
static void startable_series(struct cli *c, FILE *f, const struct cli_vgpus *vg)
{
	family(f, "vgpuctl_vgpu_startable",
	       "For an owner record whose vGPU is not there (reserved, missing): 1 when the hook "
	       "can create it at the domain's next start, 0 when that start would fail");
	for (size_t i = 0; i < vg->n; i++) {
		const struct vgpu_record *r = vg->v[i].rec;
		enum vgpu_state st = vg->v[i].state;
		char id[16];

		if (!r)
			continue;

		if (st != VGPU_STATE_MISSING && st != VGPU_STATE_RESERVED)
			continue;
		snprintf(id, sizeof(id), "%u", r->type_id);
		fputs("vgpuctl_vgpu_startable{", f);
		label(f, "gpu", r->gpu, true);
		label(f, "vf", r->parent, false);
		label(f, "profile", r->profile, false);
		label(f, "type_id", id, false);
		label(f, "domain", r->domain, false);
		label(f, "domain_uuid", r->domain_uuid, false);
		label(f, "lifetime", vgpu_lifetime_str(r->lifetime), false);
		label(f, "state", vgpu_state_str(st), false);
		fprintf(f, "} %d\n", startable(c->model, r));
	}
}

static void vgpu_series(struct cli *c, FILE *f, const struct cli_vgpus *vg)
{
	VGPU_AUTOFREE struct vrow *v = NULL;
	char **keys = NULL;
	size_t n = vgpu_rows(c, vg, &v, &keys);

	family(f, "vgpuctl_vgpu",
	       "A vGPU or owner record (1), with its owner domain and state (vgpuctl vgpus)");
	for (size_t i = 0; i < n; i++) {
		char id[24];

		snprintf(id, sizeof(id), "%ld", v[i].type_id);
		fputs("vgpuctl_vgpu{", f);
		label(f, "gpu", v[i].gpu, true);
		label(f, "vf", v[i].vf, false);
		label(f, "profile", v[i].profile, false);
		label(f, "type_id", v[i].type_id ? id : "", false);
		label(f, "domain", v[i].domain, false);
		label(f, "domain_uuid", v[i].domain_uuid, false);
		label(f, "lifetime", v[i].lifetime, false);
		label(f, "state", vgpu_state_str(v[i].state), false);
		label(f, "record", v[i].record, false);
		fputs("} 1\n", f);
	}
	qsort(v, n, sizeof(*v), by_gpu_profile_state);
	family(f, "vgpuctl_vgpus", "vGPUs and owner records per GPU, profile and state");
	for (size_t i = 0, run = 1; i < n; i++, run++) {
		if (i + 1 < n && by_gpu_profile_state(&v[i], &v[i + 1]) == 0)
			continue;
		fputs("vgpuctl_vgpus{", f);
		label(f, "gpu", v[i].gpu, true);
		label(f, "profile", v[i].profile, false);
		label(f, "state", vgpu_state_str(v[i].state), false);
		fprintf(f, "} %zu\n", run);
		run = 0;
	}
	/* a VF a record claims but cannot have: its record is damaged, or another vGPU is there */
	family(f, "vgpuctl_blocked_vf",
	       "A VF an owner record blocks (1): the record is damaged, or another vGPU holds the "
	       "VF");
	for (size_t i = 0; i < n; i++) {
		if (v[i].state != VGPU_STATE_DAMAGED && v[i].state != VGPU_STATE_CONFLICT)
			continue;
		fputs("vgpuctl_blocked_vf{", f);
		label(f, "gpu", v[i].gpu, true);
		label(f, "vf", v[i].vf, false);
		label(f, "record", v[i].record, false);
		label(f, "state", vgpu_state_str(v[i].state), false);
		fputs("} 1\n", f);
	}
	family(f, "vgpuctl_blocked_vfs", "VFs that owner records block, per GPU");
	for (size_t g = 0; g < c->model->n_gpus; g++) {
		const char *addr = c->model->gpus[g].addr;
		size_t blocked = 0;

		for (size_t i = 0; i < n; i++)
			if ((v[i].state == VGPU_STATE_DAMAGED ||
			     v[i].state == VGPU_STATE_CONFLICT) &&
			    strcmp(v[i].gpu, addr) == 0)
				blocked++;
		fputs("vgpuctl_blocked_vfs{", f);
		label(f, "gpu", addr, true);
		fprintf(f, "} %zu\n", blocked);
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static void gpu_series(struct cli *c, FILE *f)
{
	static const char *const vf_states[] = { "free", "used", "reserved", "unknown" };
	const struct vgpu_model *m = c->model;

	family(f, "vgpuctl_gpu_info", "An NVIDIA GPU (1), with its model, interface and NUMA node");
	for (size_t i = 0; i < m->n_gpus; i++) {
		char node[16];

		snprintf(node, sizeof(node), "%d", m->gpus[i].numa_node);
		fputs("vgpuctl_gpu_info{", f);
		label(f, "gpu", m->gpus[i].addr, true);
		label(f, "model", m->gpus[i].model, false);
		label(f, "interface", vgpu_iface_str(m->gpus[i].iface), false);
		label(f, "numa_node", m->gpus[i].numa_node >= 0 ? node : "", false);
		fputs("} 1\n", f);
	}
	family(f, "vgpuctl_mig_enabled",
	       "MIG mode now: 1 enabled, 0 disabled (NVML, else what GPU instances and vGPUs "
	       "show; absent when unknown)");
	for (size_t i = 0; i < m->n_gpus; i++) {
		enum vgpu_tristate t = vgpu_gpu_mig_mode(&m->gpus[i]);

		if (t == VGPU_UNKNOWN)
			continue;
		fputs("vgpuctl_mig_enabled{", f);
		label(f, "gpu", m->gpus[i].addr, true);
		fprintf(f, "} %d\n", t == VGPU_ON);
	}
	family(f, "vgpuctl_mig_pending_enabled",
	       "MIG mode after the next GPU reset: 1 enabled, 0 disabled (NVML only)");
	for (size_t i = 0; i < m->n_gpus; i++) {
		if (m->gpus[i].mig_pending == VGPU_UNKNOWN)
			continue;
		fputs("vgpuctl_mig_pending_enabled{", f);
		label(f, "gpu", m->gpus[i].addr, true);
		fprintf(f, "} %d\n", m->gpus[i].mig_pending == VGPU_ON);
	}
	family(f, "vgpuctl_vfs", "vGPU parents (SR-IOV VFs) per GPU and state");
	for (size_t i = 0; i < m->n_gpus; i++) {
		size_t count[4] = { 0 };

		for (size_t j = 0; j < m->gpus[i].n_parents; j++) {
			const struct vgpu_parent *p = &m->gpus[i].parents[j];

			count[p->state_unknown ? 3 : p->in_use ? 1 : p->n_reserved ? 2 : 0]++;
		}
		for (size_t s = 0; s < ARRAY_SIZE(vf_states); s++) {
			fputs("vgpuctl_vfs{", f);
			label(f, "gpu", m->gpus[i].addr, true);
			label(f, "state", vf_states[s], false);
			fprintf(f, "} %zu\n", count[s]);
		}
	}
}

/* available and max_instances per GPU and type: one capacity pass per GPU */
static void type_series(struct cli *c, FILE *f)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
		{ .name = "vgpuctl_available",
		  .help = "vGPUs of the type that can be created now (the capacity model: VFs, "
			  "reservations, framebuffer, MIG)" },
		{ .name = "vgpuctl_max_instances",
		  .help = "vGPUs of the type the GPU takes at most (driver)" },
	};
	const struct vgpu_model *m = c->model;
	struct vgpu_capacity **caps = vgpu_xcalloc(m->n_gpus + 1, sizeof(*caps));

	for (size_t i = 0; i < m->n_gpus; i++) {
		caps[i] = vgpu_xcalloc(m->gpus[i].n_types + 1, sizeof(**caps));
		vgpu_gpu_capacities(m, &m->gpus[i], &c->recs, caps[i]);
	}
	for (size_t which = 0; which < 2; which++) {
		family(f, fams[which].name, fams[which].help);
		for (size_t i = 0; i < m->n_gpus; i++)
			for (size_t k = 0; k < m->gpus[i].n_types; k++) {
				const struct vgpu_type *t = m->gpus[i].types[k];
				long v = which ? caps[i][k].max_instances : caps[i][k].available;
				char id[16];

				if (v < 0)
					continue;
				snprintf(id, sizeof(id), "%u", t->id);
				fprintf(f, "%s{", fams[which].name);
				label(f, "gpu", m->gpus[i].addr, true);
				label(f, "profile", t->info.profile, false);
				label(f, "type_id", id, false);
				fprintf(f, "} %ld\n", v);
			}
	}
	for (size_t i = 0; i < m->n_gpus; i++) {
		for (size_t k = 0; k < m->gpus[i].n_types; k++)
			vgpu_capacity_clear(&caps[i][k]);
		free(caps[i]);
	}
	free(caps);
}

static void run_series(FILE *f, const struct vgpu_run *runs, size_t n)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
		{ .name = "vgpuctl_last_run_timestamp_seconds",
		  .help = "When apply or assert last ran for the config label (Unix time)" },
		{ .name = "vgpuctl_last_run_exit_code",
		  .help = "Exit status of the last apply or assert: 0 matches or done, 1 failed "
			  "or could not check, 3 the host differs from the config (assert)" },
		{ .name = "vgpuctl_last_run_differences",
		  .help = "Differences the last apply or assert found between the host and the "
			  "config" },
	};

	for (size_t which = 0; which < ARRAY_SIZE(fams); which++) {
		family(f, fams[which].name, fams[which].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s{", fams[which].name);
			label(f, "command", runs[i].command, true);
			label(f, "config", runs[i].label, false);
			if (which == 0)
				fprintf(f, "} %lld\n", (long long)runs[i].time);
			else
				fprintf(f, "} %ld\n",
					which == 1 ? (long)runs[i].exit_code : runs[i].differences);
		}
	}
}

/* DIR/vgpuctl.prom, written whole or not at all: the collector reads *.prom only */
static int write_textfile(struct cli *c, const char *dir, const char *data, size_t len)
{
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_sysdir d;
	int r;

	struct stat st;

	if (stat(dir, &st) < 0) {
		cli_error(c, "--textfile '%s': %s", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error(c, "--textfile '%s': not a directory", dir);
		return EXIT_FAILURE;
	}
	if (vgpu_sysfs_open(&c->ctx, dir, &fs) < 0) {
		cli_error(c, "--textfile '%s': %s", dir, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	vgpu_sysdir_root(fs, &d);
	r = vgpu_sysfs_replace(&d, PROM_FILE, data, len);
	vgpu_sysfs_free(fs);
	if (r < 0) {
		cli_error(c, "--textfile '%s': cannot write %s: %s", dir, PROM_FILE, strerror(-r));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int cmd_metrics(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = NULL;
	char *buf = NULL;
	size_t len = 0;
	struct vgpu_run *runs = NULL;
	size_t n_runs = 0;
	FILE *f;
	int o, up, rc;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 't':
			dir = optarg;
			break;
		case 'h':
			return -1;
		default:
			return cli_bad_option(c, "metrics", opts, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(c, "metrics", "unexpected argument '%s'", argv[optind]);
	if (c->json)
		return cli_usage_error(c, "metrics",
				       "--json: metrics are Prometheus's text format");
	/* a host that cannot be read is still a document: vgpuctl_up 0 is what alerts see */
	up = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML) == 0;
	f = open_memstream(&buf, &len);
	if (!f)
		abort(); /* no memory for a few KiB: the OOM policy */
	family(f, "vgpuctl_up", "1 when vgpuctl could read the host, 0 when it could not");
	fprintf(f, "vgpuctl_up %d\n", up);
	family(f, "vgpuctl_metrics_timestamp_seconds",
	       "When vgpuctl wrote these metrics (Unix time)");
	fprintf(f, "vgpuctl_metrics_timestamp_seconds %lld\n", (long long)time(NULL));
	if (c->fs)
		n_runs = vgpu_runs_read(&c->ctx, c->fs, &runs);
	if (up) {
		struct cli_vgpus vg;

		gpu_series(c, f);
		type_series(c, f);
		cli_vgpus_read(c, runs, n_runs, &vg);
		vgpu_series(c, f, &vg);
		startable_series(c, f, &vg);
		cli_vgpus_clear(&vg);
	}
	run_series(f, runs, n_runs);
	vgpu_runs_free(runs, n_runs);
	if (fclose(f) != 0)
		abort();
	if (dir)
		rc = write_textfile(c, dir, buf, len);
	else
		rc = fwrite(buf, 1, len, c->out) == len ? EXIT_SUCCESS : EXIT_FAILURE;
	free(buf);
	return up ? rc : EXIT_FAILURE;
}
