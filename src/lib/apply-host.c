// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * apply on the real host: the host actions of the steps (NVIDIA's
 * nvidia-smi and sriov-manage, sysfs writes in a transaction), the domains
 * started last through libvirt, and the whole command (see apply.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "catalog.h"
#include "cleanup.h"
#include "exec.h"
#include "gpu-runner.h"
#include "read-host.h"
#include "sysfs-lock.h"
#include "txn.h"
#include "virt.h"

/* What the real actions work with. */
struct host_ops {
	struct vgpu_sysfs *fs;
	const struct vgpu_nvtools *tools;
	struct vgpu_nvml *nvml; /* NULL: nvidia-smi alone */
	bool said_fallback;
	bool one_gpu; /* a GPU's own process: other GPUs may be half-made under it */
	const char *gpu; /* the GPU of that process */
	bool keep_catalog; /* under the lock: each reading adds to the stored catalogues */
	/* nvidia-smi mig -lgi of lgi_gpu, read since our last change to its GIs */
	char lgi_gpu[VGPU_BDF_LEN];
	struct vgpu_mig_gi *lgi;
	size_t n_lgi;
	struct vgpu_txn txn; /* the vGPUs created, destroyed again on failure */
};

/*
 * The last GI listing nvidia-smi gave is kept until one of our calls may
 * change that GPU's GIs (MIG mode, VFs: their rebind destroys GIs, -cgi,
 * -dgi) or the host lock is taken again: the reads of the model after
 * steps 3 and 4 use the listing make_gis() checked, not two more runs of
 * nvidia-smi (each starts NVML: a few hundred ms).
 */
static void lgi_forget(struct host_ops *h)
{
	free(h->lgi);
	h->lgi = NULL;
	h->n_lgi = 0;
	h->lgi_gpu[0] = '\0';
}

static int lgi_read(struct host_ops *h, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
		    const char *gpu, struct vgpu_mig_gi **gis, size_t *n)
{
	int e = vgpu_nv_gis(ctx, h->tools, board, gpu, gis, n);

	lgi_forget(h);
	if (e == 0) {
		h->lgi = vgpu_xcalloc(*n + 1, sizeof(*h->lgi));
		if (*n)
			memcpy(h->lgi, *gis, *n * sizeof(*h->lgi));
		h->n_lgi = *n;
		snprintf(h->lgi_gpu, sizeof(h->lgi_gpu), "%s", gpu);
	}
	return e;
}

static int op_mig_mode(void *data, struct vgpu_ctx *ctx, const char *gpu, int *current,
		       int *pending)
{
	struct host_ops *h = data;

	return vgpu_nv_mig_mode(ctx, h->tools, gpu, current, pending);
}

static int op_set_mig(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct host_ops *h = data;

	lgi_forget(h);
	return vgpu_nv_set_mig(ctx, h->tools, gpu, on);
}

static int op_set_vfs(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct host_ops *h = data;

	lgi_forget(h);
	return on ? vgpu_nv_enable_vfs(ctx, h->tools, gpu) :
		    vgpu_nv_disable_vfs(ctx, h->tools, gpu);
}

static int op_list_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
		       const char *gpu, struct vgpu_mig_gi **gis, size_t *n)
{
	struct host_ops *h = data;

	if (h->nvml)
		return vgpu_nvml_gis(ctx, h->nvml, board, gpu, gis, n);
	return lgi_read(h, ctx, board, gpu, gis, n);
}

static void say_fallback(struct host_ops *h, struct vgpu_ctx *ctx)
{
	if (h->said_fallback)
		return;
	vgpu_log(ctx, LOG_NOTICE,
		 "NVML cannot place GPU instances here (not loaded, or too old): they are "
		 "created with nvidia-smi, which takes no placement (asked for in an order "
		 "that places them as planned, and checked after)");
	h->said_fallback = true;
}

/*
 * Without NVML's placement, nvidia-smi lets the driver place each GI.  Ask
 * in an order whose first-fit placement is the plan (make_gis() then checks
 * where they went); say once that this is the fallback.
 */
static int create_gis_smi(struct host_ops *h, struct vgpu_ctx *ctx, const char *gpu,
			  const struct vgpu_mig_board *board, const struct vgpu_mig_gi *have,
			  size_t n_have, const struct vgpu_mig_gi *gis, size_t n)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *ordered = NULL;
	VGPU_AUTOFREE size_t *order = vgpu_xcalloc(n + 1, sizeof(*order));

	say_fallback(h, ctx);
	if (vgpu_mig_first_fit_order(board, have, n_have, gis, n, order) < 0)
		return vgpu_error(ctx, -ENOSPC,
				  "GPU %s: nvidia-smi cannot be made to place these GPU "
				  "instances as planned; install NVML (libnvidia-ml.so.1) to "
				  "place them",
				  gpu);
	ordered = vgpu_xcalloc(n + 1, sizeof(*ordered));
	for (size_t i = 0; i < n; i++)
		ordered[i] = gis[order[i]];
	return vgpu_nv_create_gis(ctx, h->tools, gpu, ordered, n);
}

static int op_create_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
			 const char *gpu, const struct vgpu_mig_gi *have, size_t n_have,
			 const struct vgpu_mig_gi *gis, size_t n)
{
	struct host_ops *h = data;

	lgi_forget(h);
	if (!vgpu_nvml_can_place(h->nvml))
		return create_gis_smi(h, ctx, gpu, board, have, n_have, gis, n);
	if (h->tools->dry_run) {
		for (size_t i = 0; i < n; i++) {
			const struct vgpu_step s = { .kind = VGPU_STEP_GI_CREATE,
						     .object = VGPU_OBJECT_GPU_INSTANCE,
						     .gpu = gpu,
						     .profile = gis[i].profile->name,
						     .count = 1 };

			vgpu_step_reportf(ctx, &s, "create a %s GPU instance at slice %u on GPU %s",
					  gis[i].profile->name, gis[i].start, gpu);
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int id, e = vgpu_nvml_create_gi(ctx, h->nvml, gpu, gis[i].profile, gis[i].start,
						&id);

		if (e < 0)
			return e;
		vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: %s at slice %u: GI %d", gpu,
			 gis[i].profile->name, gis[i].start, id);
	}
	return 0;
}

static int op_set_hetero(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct host_ops *h = data;

	if (h->nvml)
		return vgpu_nvml_set_hetero(ctx, h->nvml, gpu, on);
	return vgpu_nv_set_hetero(ctx, h->tools, gpu, on);
}

static int op_destroy_gis(void *data, struct vgpu_ctx *ctx, const char *gpu)
{
	struct host_ops *h = data;

	lgi_forget(h);
	return vgpu_nv_destroy_gis(ctx, h->tools, gpu);
}

/*
 * Keep each GPU's types while its lists show them: the lists shrink as the
 * GPU fills (a vendor-VFIO GPU whose VFs all hold a vGPU lists nothing) and
 * follow MIG mode and GPU instances, so each reading of a run adds what it
 * sees (after step 3 the new GIs' types are listed, before step 5 uses them
 * up); assert and the next apply still know the config's types.
 */
static void keep_catalog(struct host_ops *h, struct vgpu_ctx *ctx, const struct vgpu_model *m)
{
	for (size_t i = 0; h->keep_catalog && i < m->n_gpus; i++) {
		if (h->gpu && strcmp(h->gpu, m->gpus[i].addr) != 0)
			continue; /* another process's GPU, its lists in flux */
		if (vgpu_catalog_save_gpu(ctx, h->fs, &m->gpus[i]) < 0)
			vgpu_warn(ctx, "%s", vgpu_ctx_error(ctx));
	}
}

/*
 * Without NVML, the GIs' profiles and starts from nvidia-smi mig -lgi, the
 * tool that makes them: procfs names GIs without either, and the driver's
 * lists may leave several layouts (3 x 2g.20gb beside a 1g.10gb), where
 * the free GIs of unknown profile counted as one.  GPUs whose GIs procfs
 * does not name have nothing to ask about; a GPU's own process asks about
 * its GPU only.  A listing that fails is said, and the GIs stay unknown.
 */
static void fill_gis_smi(struct host_ops *h, struct vgpu_ctx *ctx, struct vgpu_model *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		struct vgpu_gpu *g = &m->gpus[i];
		const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);
		VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
		size_t n = 0;

		if (!b || !g->n_gis || (h->gpu && strcmp(h->gpu, g->addr) != 0))
			continue;
		if (strcmp(h->lgi_gpu, g->addr) == 0) {
			vgpu_host_set_gis(h->fs, m, g, h->lgi, h->n_lgi);
			continue;
		}
		if (lgi_read(h, ctx, b, g->addr, &gis, &n) < 0) {
			vgpu_warn(ctx,
				  "GPU %s: the profiles of its GPU instances are not known (%s); "
				  "what fits on them is what the driver's lists tell",
				  g->addr, vgpu_ctx_error(ctx));
			continue;
		}
		vgpu_host_set_gis(h->fs, m, g, gis, n);
	}
}

/*
 * The host as it is, with what NVML knows (GI placements, types per GI, MIG
 * mode), else with the GIs nvidia-smi lists.
 */
static int read_host(struct host_ops *h, struct vgpu_ctx *ctx, struct vgpu_model **out)
{
	struct vgpu_ctx quiet;
	int e;

	if (!h->one_gpu) {
		e = vgpu_host_read(ctx, h->fs, VGPU_READ_TYPES, out, NULL);
		if (e == 0 && h->nvml)
			vgpu_nvml_fill(ctx, h->nvml, *out);
		else if (e == 0)
			fill_gis_smi(h, ctx, *out);
		if (e == 0)
			keep_catalog(h, ctx, *out);
		return e;
	}
	/*
	 * A GPU's own process reads the whole host while other GPUs' VFs come
	 * and go under it: what it would warn about is theirs, and the first
	 * read (before the processes) said what was damaged.  Errors still count.
	 */
	vgpu_ctx_init(&quiet, NULL, NULL);
	e = vgpu_host_read(&quiet, h->fs, VGPU_READ_TYPES, out, NULL);
	if (e < 0)
		e = vgpu_error(ctx, e, "%s", vgpu_ctx_error(&quiet));
	else if (h->nvml)
		vgpu_nvml_fill(&quiet, h->nvml, *out);
	vgpu_ctx_clear(&quiet);
	if (e == 0 && !h->nvml)
		fill_gis_smi(h, ctx, *out); /* its own GPU: what fails there counts */
	if (e == 0)
		keep_catalog(h, ctx, *out);
	return e;
}

static int op_read_host(void *data, struct vgpu_ctx *ctx, struct vgpu_model **out)
{
	return read_host(data, ctx, out);
}

static int op_create_vgpu(void *data, struct vgpu_ctx *ctx, const struct vgpu_record *r)
{
	struct host_ops *h = data;

	(void)ctx; /* the transaction reports into its own context, the same one */
	return vgpu_txn_create(&h->txn, r);
}

static const struct vgpu_apply_ops host_ops = {
	.mig_mode = op_mig_mode,
	.set_mig = op_set_mig,
	.set_vfs = op_set_vfs,
	.list_gis = op_list_gis,
	.create_gis = op_create_gis,
	.destroy_gis = op_destroy_gis,
	.read_host = op_read_host,
	.create_vgpu = op_create_vgpu,
	.set_hetero = op_set_hetero,
};

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
		if (e == 0 && off && a->check)
			vgpu_strv_push(&a->diffs,
				       vgpu_asprintf("domain '%s' is not running", name));
		else if (e == 0 && off && a->dry_run)
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

/* The config's vGPUs after a successful apply (vgpu_apply_opts.owned). */
static void config_vgpus(struct vgpu_apply *a, struct host_ops *h, struct vgpu_strv *out)
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
	struct host_ops *h = data;

	h->one_gpu = true;
	h->gpu = a->gpus[i].addr;
	vgpu_txn_init(&h->txn, a->ctx, h->fs, false);
}

static void gpu_finish(void *data, struct vgpu_apply *a, size_t i, bool commit)
{
	struct host_ops *h = data;

	(void)a;
	(void)i;
	if (commit)
		vgpu_txn_commit(&h->txn);
	else
		vgpu_txn_rollback(&h->txn);
}

static const struct vgpu_runner_ops gpu_ops = { .start = gpu_start, .finish = gpu_finish };

static int run_parallel(struct vgpu_apply *a, struct host_ops *h)
{
	if (!vgpu_nvml_can_place(h->nvml)) {
		/* said here once, not once per GPU's process */
		for (size_t i = 0; i < a->n_gpus && !h->said_fallback; i++)
			if (a->gpus[i].gis_set && a->gpus[i].n_gis)
				say_fallback(h, a->ctx);
	}
	return vgpu_runner_apply(a, &gpu_ops, h);
}

/* What apply decides on under the host lock, read again each time it is taken. */
struct apply_view {
	struct vgpu_apply *a;
	struct host_ops *h;
	const struct vgpu_hostcfg *cfg;
};

/* Under the host lock: the host as it is now, the config resolved on it, its GPUs. */
static int apply_gpus(void *arg, struct vgpu_gpu_locks *want)
{
	struct apply_view *v = arg;
	int e;

	vgpu_apply_clear(v->a);
	lgi_forget(v->h); /* read before the lock: another run may have changed the GIs */
	v->h->keep_catalog = true;
	e = read_host(v->h, v->a->ctx, &v->a->model);
	if (e == 0)
		e = vgpu_apply_resolve(v->a, v->cfg);
	for (size_t i = 0; e == 0 && i < v->a->n_gpus; i++)
		vgpu_gpu_locks_add(want, v->a->gpus[i].addr);
	return e;
}

static int apply_host(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_apply_opts *o,
		      struct vgpu_strv *diffs)
{
	struct host_ops h = { .fs = fs, .tools = &o->tools, .nvml = o->nvml };
	struct vgpu_apply a = { .ctx = ctx,
				.file = o->file,
				.dry_run = o->dry_run,
				.check = o->check,
				.ops = &host_ops,
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
	e = read_host(&h, ctx, &a.model);
	if (e == 0)
		e = vgpu_apply_resolve(&a, &cfg);
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
		e = start_domains(&a, &cfg, o->uri, v);
	for (size_t i = 0; e == 0 && i < a.diffs.n; i++)
		vgpu_strv_push(diffs, vgpu_xstrdup(a.diffs.items[i]));
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
	lgi_forget(&h);
	return e;
}

int vgpu_apply_host(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_apply_opts *o,
		    struct vgpu_strv *diffs)
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
