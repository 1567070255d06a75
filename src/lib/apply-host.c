// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the apply and assert commands on the real host (see apply.h):
 * the host lock, the config resolved, the GPUs brought there (one process
 * each, gpu-runner.c) through the real actions of apply-ops.c, and the
 * domains started last through libvirt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-priv.h"
#include "apply.h"
#include "catalog.h"
#include "cleanup.h"
#include "exec.h"
#include "gpu-runner.h"
#include "read-host.h"
#include "scheduler-host.h"
#include "sysfs-lock.h"
#include "txn.h"
#include "virt.h"

/* Step 5: the configuration's domains, started last (assert: said when not running). */
static int start_domains(struct vgpu_apply *a, const struct vgpu_hostcfg *cfg, const char *uri,
			 struct vgpu_virt *v)
{
	struct vgpu_ctx *ctx = a->ctx;
	int e = 0;

	if (!cfg->n_domains)
		return 0;
	for (size_t i = 0; e == 0 && i < cfg->n_domains; i++) {
		const char *name = cfg->domains[i];
		bool off;

		e = vgpu_virt_domain_start(ctx, v, name, a->dry_run || a->check, &off);
		if (e == 0 && off && a->check) {
			VGPU_AUTOFREE char *text =
				vgpu_asprintf("domain '%s' is not running", name);

			vgpu_steps_push(&a->diffs,
					&(const struct vgpu_step){ .kind = VGPU_STEP_DOMAIN_START,
								   .object = VGPU_OBJECT_DOMAIN,
								   .domain = name,
								   .count = 1,
								   .want = "running",
								   .have = "not running",
								   .text = text });
		} else if (e == 0 && off && a->dry_run)
			vgpu_step_reportf(ctx,
					  &(const struct vgpu_step){ .kind = VGPU_STEP_DOMAIN_START,
								     .object = VGPU_OBJECT_DOMAIN,
								     .domain = name,
								     .count = 1 },
					  "start domain '%s' (%s)", name, uri);
		else if (e == 0 && off)
			vgpu_log(ctx, LOG_INFO, "domains: started '%s'", name);
	}
	return e;
}

/* The configuration's scheduler settings as vgpu_sched_set() takes them (*@w heap, *@n of them). */
static int sched_wants(struct vgpu_apply *a, const struct vgpu_hostcfg *cfg,
		       struct vgpu_sched_want **w, size_t *n)
{
	size_t max = 0;

	*n = 0;
	for (size_t i = 0; i < cfg->n_sched; i++)
		max += cfg->sched[i].n_addrs ? cfg->sched[i].n_addrs : 1;
	*w = max ? vgpu_xcalloc(max, sizeof(**w)) : NULL;
	for (size_t i = 0; i < cfg->n_sched; i++) {
		const struct vgpu_cfg_sched *c = &cfg->sched[i];

		if (!c->n_addrs)
			(*w)[(*n)++] = (struct vgpu_sched_want){ .s = c->s };
		for (size_t k = 0; k < c->n_addrs; k++) {
			const struct vgpu_gpu *g = vgpu_model_find_gpu(a->model, c->addrs[k]);

			if (!g)
				return vgpu_error(
					a->ctx, -ENODEV,
					"%s:%u: scheduler: GPU '%s' is not an NVIDIA GPU of this host",
					a->file, c->line, c->addrs[k]);
			(*w)[(*n)++] = (struct vgpu_sched_want){ .gpu = g->addr, .s = c->s };
		}
	}
	return 0;
}

/* Fixed share asked of a GPU in mixed-size mode as the configuration leaves it: refused. */
static int sched_probe(struct vgpu_apply *a, const struct vgpu_sched_want *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t g = 0; w[i].s.policy == VGPU_SCHED_FIXED_SHARE && g < a->model->n_gpus;
		     g++) {
			const char *addr = a->model->gpus[g].addr;
			bool mixed = a->model->gpus[g].hetero == VGPU_ON;

			for (size_t k = 0; k < a->n_gpus; k++)
				if (strcmp(a->gpus[k].addr, addr) == 0)
					mixed = a->gpus[k].hetero;
			if (mixed && (!w[i].gpu || strcmp(w[i].gpu, addr) == 0))
				return vgpu_error(
					a->ctx, -EINVAL,
					"%s: GPU '%s' has vGPUs of several sizes (mixed-size mode): fixed share is not supported there (best effort or equal share are)",
					a->file, addr);
		}
	return 0;
}

/* A changed file @text: a difference (--check), a step (--dry-run), or what was written. */
static void sched_report(struct vgpu_apply *a, const char *text)
{
	static const char path[] = VGPU_SCHED_DIR "/" VGPU_SCHED_FILE;
	const struct vgpu_step step = { .kind = VGPU_STEP_WRITE,
					.means = VGPU_STEP_BY_WRITE,
					.path = path,
					.value = text,
					.count = 1 };

	if (a->check) {
		struct vgpu_step diff = step;

		diff.want = "as configured";
		diff.have = "different";
		diff.text = "scheduler: /" VGPU_SCHED_DIR "/" VGPU_SCHED_FILE
			    " differs from the configuration";
		vgpu_steps_push(&a->diffs, &diff);
	} else if (a->dry_run) {
		vgpu_step_reportf(
			a->ctx, &step,
			"write: the vGPU scheduler (RmPVMRL) > /%s (read at the next load of the nvidia module)",
			path);
	} else {
		vgpu_log(
			a->ctx, LOG_INFO,
			"scheduler: wrote /%s; it takes effect at the next load of the nvidia module (a driver reload or reboot)",
			path);
	}
}

/*
 * The configuration's scheduler (scheduler: LABEL): vgpuctl's modprobe.d
 * file, written when it differs (the driver reads it at its next load);
 * nothing when it is the same.  @probe: only check, before any change, that
 * every GPU named is there and that fixed share is not asked of a GPU in
 * mixed-size mode as the configuration leaves it.
 */
static int set_scheduler(struct vgpu_apply *a, struct vgpu_sysfs *fs,
			 const struct vgpu_hostcfg *cfg, bool probe)
{
	VGPU_AUTOFREE struct vgpu_sched_want *w = NULL;
	VGPU_AUTOFREE char *text = NULL;
	bool changed = false;
	size_t n;
	int e = sched_wants(a, cfg, &w, &n);

	if (e < 0 || !n)
		return e;
	if (probe)
		return sched_probe(a, w, n);
	e = vgpu_sched_set(a->ctx, fs, a->model, w, n, a->dry_run || a->check, &text, &changed);
	if (e == 0 && changed)
		sched_report(a, text);
	return e;
}

/* The config's vGPUs after a successful apply (vgpu_apply_opts.owned). */
static void config_vgpus(struct vgpu_apply *a, struct apply_host *h, struct vgpu_strv *out)
{
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOFREE struct vgpu_orphan *orphans = NULL;
	struct vgpu_model *m = NULL;
	size_t n;

	if (vgpu_host_read(a->ctx, h->fs, VGPU_READ_TYPES, &m, &recs) < 0) {
		vgpu_warn(a->ctx, "%s", vgpu_ctx_error(a->ctx));
		return;
	}
	n = vgpu_host_orphans(m, &recs, &orphans);
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_parent *p = orphans[i].parent;
		const struct vgpu_type *t = vgpu_model_find_type(m, p->gpu, p->current_type);

		for (size_t g = 0; t && g < a->n_gpus; g++) {
			bool wanted = false;

			if (strcmp(a->gpus[g].addr, p->gpu->addr) != 0)
				continue;
			for (size_t k = 0; !wanted && k < a->gpus[g].n_vgpus; k++)
				wanted = vgpu_type_matches(t, a->gpus[g].vgpus[k].cfg->name);
			if (wanted)
				vgpu_strv_push(
					out, vgpu_asprintf("%s %u%s%s", p->addr, t->id,
							   orphans[i].mdev ? " " : "",
							   orphans[i].mdev ? orphans[i].mdev : ""));
		}
	}
	vgpu_model_free(m);
}

/* ---- one process per GPU (gpu-runner.c) ---------------------------------- */

/* In a GPU's own process: its vGPUs in a transaction of its own. */
static void gpu_start(void *data, struct vgpu_apply *a, size_t i)
{
	struct apply_host *h = data;

	h->one_gpu = true;
	h->gpu = a->gpus[i].addr;
	vgpu_txn_init(&h->txn, a->ctx, h->fs, false);
}

static void gpu_finish(void *data, struct vgpu_apply *a, size_t i, bool commit)
{
	struct apply_host *h = data;

	(void)a;
	(void)i;
	if (commit)
		vgpu_txn_commit(&h->txn);
	else
		vgpu_txn_rollback(&h->txn);
}

static const struct vgpu_runner_ops gpu_ops = { .start = gpu_start, .finish = gpu_finish };

static int run_parallel(struct vgpu_apply *a, struct apply_host *h)
{
	if (!vgpu_nvml_can_place(h->nvml)) {
		/* said here once, not once per GPU's process */
		for (size_t i = 0; i < a->n_gpus && !h->said_fallback; i++)
			if (a->gpus[i].gis_set && a->gpus[i].n_gis)
				apply_say_fallback(h, a->ctx);
	}
	return vgpu_runner_apply(a, &gpu_ops, h);
}

/* What apply decides on under the host lock, read again each time it is taken. */
struct apply_view {
	struct vgpu_apply *a;
	struct apply_host *h;
	const struct vgpu_hostcfg *cfg;
};

/* Under the host lock: the host as it is now, the config resolved on it, its GPUs. */
static int apply_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct apply_view *v = arg;
	int e;

	vgpu_apply_clear(v->a);
	apply_lgi_forget(v->h); /* read before the lock: another run may have changed the GIs */
	v->h->keep_catalog = true;
	e = apply_read_host(v->h, v->a->ctx, &v->a->model);
	if (e == 0)
		e = vgpu_apply_resolve(v->a, v->cfg);
	for (size_t i = 0; e == 0 && i < v->a->n_gpus; i++)
		vgpu_gpu_locks_add(want, v->a->gpus[i].addr);
	return e;
}

static int apply_host(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_apply_opts *o,
		      struct vgpu_steps *diffs)
{
	struct apply_host h = { .fs = fs, .tools = &o->tools, .nvml = o->nvml };
	struct vgpu_apply a = { .ctx = ctx,
				.file = o->file,
				.dry_run = o->dry_run,
				.check = o->check,
				.ops = &apply_host_ops,
				.ops_data = &h,
				.progress = o->progress };
	struct vgpu_hostcfg cfg = { 0 };
	struct vgpu_gpu_locks gl = { .n = 0 };
	VGPU_AUTOPTR(virt) v = NULL;
	bool locked = !o->check && !o->dry_run;
	int e = vgpu_hostcfg_load(ctx, o->file, o->label, &cfg);

	if (e < 0)
		return e;
	if (o->has_label)
		*o->has_label = true;
	/*
	 * The domains' libvirt is connected to first: one on another host
	 * (its sysfs is not the one read here) is refused before any change.
	 */
	if (cfg.n_domains && !o->uri)
		e = vgpu_error(ctx, -EINVAL, "%s: start-domains needs a libvirt URI", o->file);
	else if (cfg.n_domains && vgpu_virt_open_host(ctx, o->uri, fs, &v) < 0)
		e = -EIO;
	if (e < 0) {
		vgpu_hostcfg_clear(&cfg);
		return e;
	}
	/* the whole configuration is checked against the host before anything is locked */
	e = apply_read_host(&h, ctx, &a.model);
	if (e == 0)
		e = vgpu_apply_resolve(&a, &cfg);
	if (e == 0)
		e = set_scheduler(&a, fs, &cfg, true);
	if (e == 0 && locked) {
		/* under the lock, from what the host is now */
		/*
		 * Decisions under the host lock, slow work (sriov-manage, MIG
		 * mode, GIs: seconds each) under the locks of the GPUs it
		 * changes only, so domains start on every other GPU meanwhile.
		 * The host is read again under the host lock with the GPUs'
		 * locks held (never waited for under the host lock:
		 * vgpu_locks_take()): what another run was doing on them is done.
		 */
		struct apply_view view = { .a = &a, .h = &h, .cfg = &cfg };

		e = vgpu_locks_take(ctx, fs, vgpu_monotonic_ms() + VGPU_APPLY_LOCK_WAIT_MS,
				    apply_gpus, &view, &gl);
		if (e == 0)
			vgpu_sysfs_unlock(fs);
	}
	vgpu_txn_init(&h.txn, ctx, fs, o->dry_run);
	if (e == 0 && locked && a.n_gpus > 1)
		e = run_parallel(&a, &h);
	else if (e == 0)
		e = vgpu_apply_steps(&a);
	if (e < 0)
		vgpu_txn_rollback(&h.txn);
	else
		vgpu_txn_commit(&h.txn);
	/*
	 * Never across a libvirt call: starting a domain runs its hook, which
	 * takes this lock (a deadlock until the hook's wait ran out).  The
	 * vGPUs stay when a domain fails to start: the host is as configured.
	 */
	if (e == 0 && locked && o->owned)
		config_vgpus(&a, &h, o->owned);
	vgpu_gpu_locks_release(&gl);
	if (e == 0)
		e = set_scheduler(&a, fs, &cfg, false);
	if (e == 0)
		e = start_domains(&a, &cfg, o->uri, v);
	for (size_t i = 0; e == 0 && i < a.diffs.n; i++)
		vgpu_steps_push(diffs, &a.diffs.items[i]);
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
	apply_lgi_forget(&h);
	return e;
}

int vgpu_apply_host(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_apply_opts *o,
		    struct vgpu_steps *diffs)
{
	vgpu_step_fn fn = ctx->step_fn;
	void *data = ctx->step_data;
	int e;

	if (o->dry_run && o->steps) {
		ctx->step_fn = vgpu_steps_collect;
		ctx->step_data = o->steps;
	}
	e = apply_host(ctx, fs, o, diffs);
	ctx->step_fn = fn;
	ctx->step_data = data;
	return e;
}
