// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the ordered steps that bring each GPU to its resolved config
 * (apply-resolve.c): MIG mode, VFs, GPU instances, vGPUs, each compared
 * before it acts, run or only predicted on a copy of the model (see
 * apply.h).  Pure over the model: every host action goes through struct
 * vgpu_apply_ops.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "apply.h"
#include "capacity.h"
#include "cleanup.h"
#include "exec.h"
#include "plan.h"
#include "vgputype.h"

/* ---- steps -------------------------------------------------------------------- */

/*
 * A difference: @fix is the step that would fix it (its want and have where
 * known); the line for people is formatted here into its text.
 */
static void differs(struct vgpu_apply *a, const struct vgpu_step *fix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void differs(struct vgpu_apply *a, const struct vgpu_step *fix, const char *fmt, ...)
{
	struct vgpu_step s = *fix;
	VGPU_AUTOFREE char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	text = vgpu_vasprintf(fmt, ap);
	va_end(ap);
	s.text = text;
	vgpu_steps_push(&a->diffs, &s);
}

static const struct vgpu_gpu *gpu_of(struct vgpu_apply *a, const struct vgpu_apply_gpu *w)
{
	return vgpu_model_find_gpu(a->model, w->addr);
}

/*
 * a parent in use holds a vGPU (a VF's current type, or an mdev), or an
 * owner record reserves one there: a stopped per-start domain's vGPU is made
 * at its start, on the GPU instance it needs then
 */
static bool has_vgpus(const struct vgpu_gpu *g)
{
	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].in_use || g->parents[i].n_reserved)
			return true;
	return false;
}

/* Where has_vgpus() found one, for a message: "VF 0000:ca:00.4 (a vGPU)". */
static const char *held_where(const struct vgpu_gpu *g, char *buf, size_t len)
{
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		if (p->in_use || p->n_reserved) {
			snprintf(buf, len, "VF %s (%s)", p->addr,
				 p->in_use ? "a vGPU" :
					     "an owner record: a stopped per-start domain");
			return buf;
		}
	}
	return "";
}

/* The host again, after a step that changed what the next one reads. */
static int reread(struct vgpu_apply *a)
{
	struct vgpu_model *m = NULL;
	int e;

	if (a->dry_run || a->check)
		return 0;
	e = a->ops->read_host(a->ops_data, a->ctx, &m);
	if (e < 0)
		return e;
	vgpu_model_free(a->model);
	a->model = m;
	return 0;
}

/*
 * The model's GPU, to change as a dry run's step would have changed the
 * host: the later steps of a dry run plan on the host the earlier ones leave.
 */
static struct vgpu_gpu *sim_gpu(struct vgpu_apply *a, const struct vgpu_apply_gpu *w)
{
	for (size_t i = 0; i < a->model->n_gpus; i++)
		if (strcmp(a->model->gpus[i].addr, w->addr) == 0)
			return &a->model->gpus[i];
	return NULL; /* gpu_of() found it: not reached */
}

/* Turning MIG off needs the VFs and GPU instances gone first (the driver refuses). */
static int mig_off_prepare(struct vgpu_apply *a, struct vgpu_apply_gpu *w, const struct vgpu_gpu *g)
{
	char where[VGPU_BDF_LEN + 64];
	struct vgpu_ctx *ctx = a->ctx;
	struct vgpu_mig_gi *gis = NULL;
	size_t n = 0;
	int e;

	if (has_vgpus(g))
		return vgpu_error(
			ctx, -EBUSY,
			"GPU %s: cannot turn MIG mode off while it holds vGPUs or owner records reserve some (%s; see 'vgpuctl vgpus'); release them first",
			w->addr, held_where(g, where, sizeof(where)));
	e = a->ops->list_gis(a->ops_data, ctx, w->board, w->addr, &gis, &n);
	free(gis);
	if (e == 0 && n)
		e = a->ops->destroy_gis(a->ops_data, ctx, w->addr);
	if (e == 0 && g->sriov_num_vfs > 0) {
		e = a->ops->set_vfs(a->ops_data, ctx, w->addr, false);
		w->vfs_changed = true;
		/* a dry run reads on as the host would be: step 2 enables them again */
		if (e == 0 && a->dry_run)
			sim_gpu(a, w)->sriov_num_vfs = 0;
	}
	return e;
}

static int step_mig(struct vgpu_apply *a, struct vgpu_apply_gpu *w)
{
	struct vgpu_ctx *ctx = a->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	int cur, pend, e;

	if (w->mig < 0 || !w->board || !g)
		return 0;
	e = a->ops->mig_mode(a->ops_data, ctx, w->addr, &cur, &pend);
	if (e < 0)
		return e;
	if (cur == w->mig)
		return 0;
	if (a->check) {
		const char *have = cur == 1 ? "enabled" : "disabled";
		const char *want = w->mig ? "enabled" : "disabled";

		differs(a,
			&(const struct vgpu_step){ .kind = w->mig ? VGPU_STEP_MIG_ON :
								    VGPU_STEP_MIG_OFF,
						   .object = VGPU_OBJECT_GPU,
						   .gpu = w->addr,
						   .count = 1,
						   .want = want,
						   .have = have },
			"GPU %s: MIG mode is %s, the config wants it %s", w->addr, have, want);
		return 0;
	}
	vgpu_log(ctx, LOG_INFO, "MIG mode: GPU %s: %s", w->addr, w->mig ? "enabling" : "disabling");
	if (!w->mig && (e = mig_off_prepare(a, w, g)) < 0)
		return e;
	return a->ops->set_mig(a->ops_data, ctx, w->addr, w->mig == 1);
}

static int step_vfs(struct vgpu_apply *a, struct vgpu_apply_gpu *w)
{
	struct vgpu_ctx *ctx = a->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	int e;

	if (!w->vfs || !g || g->sriov_num_vfs == g->sriov_total_vfs)
		return 0;
	if (a->check) {
		char want[16], have[16];

		snprintf(want, sizeof(want), "%d", g->sriov_total_vfs);
		snprintf(have, sizeof(have), "%d", g->sriov_num_vfs);
		differs(a,
			&(const struct vgpu_step){ .kind = VGPU_STEP_VFS_ON,
						   .object = VGPU_OBJECT_GPU,
						   .gpu = w->addr,
						   .want = want,
						   .have = have },
			"GPU %s: %d of %d VFs enabled", w->addr, g->sriov_num_vfs,
			g->sriov_total_vfs);
		return 0;
	}
	vgpu_log(ctx, LOG_INFO, "VFs: GPU %s: enabling %d VFs", w->addr, g->sriov_total_vfs);
	e = a->ops->set_vfs(a->ops_data, ctx, w->addr, true);
	w->vfs_changed = true;
	if (e < 0 || a->dry_run)
		return e;
	if ((e = reread(a)) < 0)
		return e;
	g = gpu_of(a, w);
	if (!g || g->sriov_num_vfs != g->sriov_total_vfs)
		return vgpu_error(ctx, -EIO,
				  "GPU %s: sriov-manage -e succeeded but %d of %d VFs are enabled",
				  w->addr, g ? g->sriov_num_vfs : 0, g ? g->sriov_total_vfs : 0);
	return 0;
}

/* ---- GPU instances -------------------------------------------------------------- */

/*
 * The GIs there are and those the config asks for, counted per profile of
 * the board (@have, @want: heap, n_profiles each).  True when they agree.
 */
static bool tally_gis(const struct vgpu_apply_gpu *w, const struct vgpu_mig_gi *gis, size_t n,
		      unsigned **have, unsigned **want)
{
	const struct vgpu_mig_board *b = w->board;

	*have = vgpu_xcalloc(b->n_profiles, sizeof(**have));
	*want = vgpu_xcalloc(b->n_profiles, sizeof(**want));
	for (size_t i = 0; i < n; i++)
		if (gis[i].profile)
			(*have)[gis[i].profile - b->profiles]++;
	for (size_t i = 0; i < w->n_gis; i++)
		(*want)[w->gis[i].profile - b->profiles] += w->gis[i].count;
	return memcmp(*have, *want, b->n_profiles * sizeof(**have)) == 0;
}

/* "3g.40gb, 2g.20gb x2" or "none" */
static char *counts_str(const struct vgpu_mig_board *b, const unsigned *counts)
{
	char *s = NULL;

	for (size_t i = 0; i < b->n_profiles; i++) {
		if (!counts[i])
			continue;
		vgpu_append(&s, "%s%s", s ? ", " : "", b->profiles[i].name);
		if (counts[i] > 1)
			vgpu_append(&s, " x%u", counts[i]);
	}
	return s ? s : vgpu_xstrdup("none");
}

/* The GIs still to make so that @have becomes @want; false when @have has one too many. */
static bool missing_gis(const struct vgpu_mig_board *b, const unsigned *have, const unsigned *want,
			struct vgpu_mig_request *req, size_t *n_req)
{
	*n_req = 0;
	for (size_t i = 0; i < b->n_profiles; i++) {
		if (have[i] > want[i])
			return false;
		if (want[i] > have[i])
			req[(*n_req)++] =
				(struct vgpu_mig_request){ &b->profiles[i], want[i] - have[i] };
	}
	return true;
}

/* Create the solver's new GIs (@plan, creation order), then read back that all are there. */
static int make_gis(struct vgpu_apply *a, struct vgpu_apply_gpu *w, const struct vgpu_mig_gi *there,
		    size_t n_there, const struct vgpu_mig_gi *plan, size_t n_plan)
{
	struct vgpu_ctx *ctx = a->ctx;
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
	VGPU_AUTOFREE unsigned *have = NULL, *want = NULL;
	size_t n;
	int e;

	vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: creating %zu", w->addr, n_plan);
	e = a->ops->create_gis(a->ops_data, ctx, w->board, w->addr, there, n_there, plan, n_plan);
	w->gis_changed = n_plan > 0;
	if (e < 0 || a->dry_run || !n_plan)
		return e;
	if ((e = a->ops->list_gis(a->ops_data, ctx, w->board, w->addr, &gis, &n)) < 0)
		return e;
	if (!tally_gis(w, gis, n, &have, &want)) {
		VGPU_AUTOFREE char *h = counts_str(w->board, have), *x = counts_str(w->board, want);

		return vgpu_error(ctx, -EIO,
				  "GPU %s: GPU instances are %s after creating them, not %s",
				  w->addr, h, x);
	}
	/* and where the plan put them: a layout placed elsewhere may not take the rest */
	for (size_t i = 0; i < n_plan; i++) {
		bool there = false;

		for (size_t k = 0; k < n && !there; k++)
			there = gis[k].profile == plan[i].profile && gis[k].start == plan[i].start;
		if (!there)
			return vgpu_error(
				ctx, -EIO,
				"GPU %s: the driver did not place the %s GPU instance at memory slice %u as planned",
				w->addr, plan[i].profile->name, plan[i].start);
	}
	return 0;
}

/* The GIs as they are; in a dry run, as they would be after steps 1 and 2. */
static int current_gis(struct vgpu_apply *a, struct vgpu_apply_gpu *w, struct vgpu_mig_gi **gis,
		       size_t *n)
{
	*gis = NULL;
	*n = 0;
	if (a->dry_run && w->vfs_changed)
		return 0; /* enabling VFs wipes them */
	return a->ops->list_gis(a->ops_data, a->ctx, w->board, w->addr, gis, n);
}

static int step_gis(struct vgpu_apply *a, struct vgpu_apply_gpu *w)
{
	char where[VGPU_BDF_LEN + 64];
	struct vgpu_ctx *ctx = a->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL, *plan = NULL;
	VGPU_AUTOFREE unsigned *have = NULL, *want = NULL;
	struct vgpu_mig_request req[VGPU_APPLY_MAX_GIS];
	size_t n = 0, n_req, n_plan = 0;
	int e;

	if (!w->gis_set || !w->board || w->mig != 1 || !g)
		return 0;
	if ((e = current_gis(a, w, &gis, &n)) < 0)
		return e;
	if (tally_gis(w, gis, n, &have, &want))
		return 0;
	if (a->check) {
		VGPU_AUTOFREE char *h = counts_str(w->board, have), *x = counts_str(w->board, want);
		VGPU_AUTOFREE char *names = NULL;
		struct vgpu_step fix = { .kind = VGPU_STEP_GI_DESTROY, /* all, then made again */
					 .object = VGPU_OBJECT_GPU_INSTANCE,
					 .gpu = w->addr,
					 .want = x,
					 .have = h };

		if (missing_gis(w->board, have, want, req, &n_req)) {
			fix.kind = VGPU_STEP_GI_CREATE;
			for (size_t i = 0; i < n_req; i++) {
				vgpu_append(&names, "%s%s", names ? "," : "", req[i].profile->name);
				fix.count += req[i].count;
			}
			fix.profile = names;
		}
		differs(a, &fix, "GPU %s: GPU instances %s, the config wants %s", w->addr, h, x);
		return 0;
	}
	if (missing_gis(w->board, have, want, req, &n_req)) {
		struct vgpu_ctx quiet = { 0 };

		e = vgpu_mig_solve(&quiet, w->board, gis, n, req, n_req, &plan, &n_plan);
		vgpu_ctx_clear(&quiet);
		if (e == 0) /* the ones there stay: add the rest around them */
			return make_gis(a, w, gis, n, plan, n_plan);
	}
	/* the layout must change: only while no vGPU can be on an instance */
	if (has_vgpus(g))
		return vgpu_error(
			ctx, -EBUSY,
			"GPU %s: its GPU instances differ from the config and vGPUs use the GPU or owner records reserve some (%s; see 'vgpuctl vgpus'); release them first",
			w->addr, held_where(g, where, sizeof(where)));
	memset(have, 0, w->board->n_profiles * sizeof(*have));
	missing_gis(w->board, have, want, req, &n_req);
	/* a layout that cannot be made fails before anything is destroyed */
	if ((e = vgpu_mig_solve(ctx, w->board, NULL, 0, req, n_req, &plan, &n_plan)) < 0)
		return vgpu_error(ctx, e, "GPU %s: %s", w->addr, vgpu_ctx_error(ctx));
	vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: destroying %zu", w->addr, n);
	if ((e = a->ops->destroy_gis(a->ops_data, ctx, w->addr)) < 0)
		return e;
	return make_gis(a, w, NULL, 0, plan, n_plan);
}

/* ---- vGPUs -------------------------------------------------------------------- */

/*
 * The configuration's vGPUs of type @id on @g: those there now that no
 * owner record claims.  A domain's vGPU, there or reserved (per-start, or
 * after a reboot), is the domain's: counting it as the config's left the
 * config one short, and short again once the domain released it.  The
 * capacity check still counts it as taken.
 */
static unsigned count_type(const struct vgpu_gpu *g, unsigned id)
{
	unsigned n = 0;

	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		unsigned there = p->mdevs.n ? (unsigned)p->mdevs.n : 1;

		if (p->current_type == id && there > p->n_claimed)
			n += there - p->n_claimed;
	}
	return n;
}

/* One vGPU of @t on @p, as assign makes it, but owned by the host config (no record). */
static int create_on(struct vgpu_apply *a, const struct vgpu_gpu *g, const struct vgpu_parent *p,
		     const struct vgpu_type *t)
{
	struct vgpu_record r = { .iface = p->iface,
				 .type_id = t->id,
				 .lifetime = VGPU_LIFETIME_PERSISTENT };

	snprintf(r.gpu, sizeof(r.gpu), "%s", g->addr);
	snprintf(r.parent, sizeof(r.parent), "%s", p->addr);
	snprintf(r.profile, sizeof(r.profile), "%s", t->info.profile);
	if (p->iface == VGPU_IFACE_MDEV && vgpu_uuid_generate(a->ctx, r.mdev_uuid) < 0)
		return -EIO;
	if (a->dry_run) {
		/*
		 * the one write that makes it (a UUID to the type's create, or the
		 * type id); the transaction's step after it is the vGPU's
		 */
		VGPU_AUTOFREE char *path = NULL, *value = NULL;
		struct vgpu_step s = { .kind = VGPU_STEP_WRITE,
				       .means = VGPU_STEP_BY_WRITE,
				       .object = VGPU_OBJECT_VGPU,
				       .gpu = g->addr,
				       .profile = t->info.profile,
				       .parent = p->addr,
				       .count = 1 };

		if (p->iface == VGPU_IFACE_MDEV) {
			path = vgpu_asprintf(
				"sys/bus/pci/devices/%s/mdev_supported_types/nvidia-%u/create",
				p->addr, t->id);
			value = vgpu_xstrdup(r.mdev_uuid);
		} else {
			path = vgpu_asprintf("sys/bus/pci/devices/%s/nvidia/current_vgpu_type",
					     p->addr);
			value = vgpu_asprintf("%u", t->id);
		}
		s.path = path;
		s.value = value;
		vgpu_step_reportf(a->ctx, &s, "write: %s > %s", value, path);
	}
	return a->ops->create_vgpu(a->ops_data, a->ctx, &r);
}

/*
 * How many vGPUs of type k @p can take now: a VF one, when free; a non-SR-IOV
 * PF what its available_instances says, less its reservations (-1: unknown,
 * the driver decides).
 */
static long room(const struct vgpu_parent *p, size_t k)
{
	long avail = p->types[k].available;

	if (p->state_unknown)
		return 0;
	if (p->index >= 0)
		return p->in_use || p->n_reserved || avail == 0 ? 0 : 1;
	if (avail < 0)
		return -1;
	return avail > (long)p->n_reserved ? avail - (long)p->n_reserved : 0;
}

/*
 * Create @need vGPUs of @t on @g's free parents, lowest first.  @made counts
 * what this step created on each parent so far (the model is not read again
 * inside the step): a VF takes one, a PF what it offers less that.
 */
static int make_vgpus(struct vgpu_apply *a, const struct vgpu_gpu *g, const struct vgpu_type *t,
		      unsigned need, unsigned *made)
{
	for (size_t i = 0; need && i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		for (size_t k = 0; need && k < p->n_types; k++) {
			long n = p->types[k].type == t ? room(p, k) : 0, of_t = 0;

			if (p->index >= 0 && made[i])
				n = 0;
			for (; need && n != 0 && (n < 0 || of_t < n); of_t++) {
				int e = create_on(a, g, p, t);

				if (e < 0)
					return e;
				need--;
				made[i]++;
			}
		}
	}
	if (need)
		return vgpu_error(
			a->ctx, -ENOSPC,
			"GPU %s: %u more vGPUs of %s are needed and no free parent offers that type",
			g->addr, need, t->info.profile);
	return 0;
}

/* A vGPU difference's fix: @n vGPUs of @profile on @w's GPU made or freed. */
static struct vgpu_step vgpu_fix(const struct vgpu_apply_gpu *w, enum vgpu_step_kind kind,
				 const char *profile, unsigned n, const char *want,
				 const char *have)
{
	return (struct vgpu_step){ .kind = kind,
				   .object = VGPU_OBJECT_VGPU,
				   .gpu = w->addr,
				   .profile = profile,
				   .count = n,
				   .want = want,
				   .have = have };
}

static int step_vgpus(struct vgpu_apply *a, struct vgpu_apply_gpu *w)
{
	struct vgpu_ctx *ctx = a->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	VGPU_AUTOFREE unsigned *made = NULL;

	if (!w->n_vgpus || !g)
		return 0;
	/*
	 * A dry run has not made the VFs or GPU instances that make the types
	 * creatable: what the lists say now is not what step 5 will read
	 */
	if (a->dry_run && (w->vfs_changed || w->gis_changed)) {
		for (size_t i = 0; i < w->n_vgpus; i++) {
			const struct vgpu_apply_vgpu *v = &w->vgpus[i];
			unsigned have = w->vfs_changed || !v->id ? 0 : count_type(g, v->id);
			const struct vgpu_step s = { .kind = VGPU_STEP_VGPU_CREATE,
						     .object = VGPU_OBJECT_VGPU,
						     .gpu = w->addr,
						     .profile = v->info.profile,
						     .count = v->cfg->count - have };

			if (have >= v->cfg->count)
				continue;
			vgpu_step_reportf(
				ctx, &s,
				"create %u vGPUs of %s on GPU %s's VFs once %s (each: a write of its type id to current_vgpu_type or of a UUID to the type's mdev create, as the VFs offer)",
				v->cfg->count - have, v->info.profile, w->addr,
				w->vfs_changed ? "enabled" : "its GPU instances are made");
		}
		return 0;
	}
	made = vgpu_xcalloc(g->n_parents, sizeof(*made));
	for (size_t i = 0; i < w->n_vgpus; i++) {
		const struct vgpu_cfg_count *want = w->vgpus[i].cfg;
		const struct vgpu_type *t = vgpu_gpu_match_type(g, want->name);
		struct vgpu_step fix;
		char nw[16], nh[16];
		unsigned have;
		int e;

		if (!t) {
			if (a->check) {
				snprintf(nw, sizeof(nw), "%u", want->count);
				fix = vgpu_fix(w, VGPU_STEP_VGPU_CREATE, want->name, want->count,
					       nw, "0");
				differs(a, &fix,
					"GPU %s: 0 of %u vGPUs of %s (no parent offers the type now)",
					w->addr, want->count, want->name);
				continue;
			}
			return vgpu_error(ctx, -ENOENT, "%s:%u: GPU %s offers no vGPU type %s",
					  a->file, want->line, w->addr, want->name);
		}
		have = count_type(g, t->id);
		snprintf(nw, sizeof(nw), "%u", want->count);
		snprintf(nh, sizeof(nh), "%u", have);
		if (have > want->count) {
			fix = vgpu_fix(w, VGPU_STEP_VGPU_DESTROY, t->info.profile,
				       have - want->count, nw, nh);
			differs(a, &fix,
				"GPU %s holds %u vGPUs of %s, the config wants %u (apply frees none)",
				w->addr, have, t->info.profile, want->count);
		}
		if (have >= want->count)
			continue;
		if (a->check) {
			fix = vgpu_fix(w, VGPU_STEP_VGPU_CREATE, t->info.profile,
				       want->count - have, nw, nh);
			differs(a, &fix, "GPU %s: %u of %u vGPUs of %s", w->addr, have, want->count,
				t->info.profile);
			continue;
		}
		if (want->count - have > vgpu_gpu_room(a->model, g, t))
			return vgpu_error(
				ctx, -ENOSPC,
				"%s:%u: GPU %s: %u more vGPUs of %s do not fit: next to the config's %u there, it has room for %u",
				a->file, want->line, w->addr, want->count - have, t->info.profile,
				have, vgpu_gpu_room(a->model, g, t));
		vgpu_log(ctx, LOG_INFO, "vGPUs: GPU %s: creating %u of %s", w->addr,
			 want->count - have, t->info.profile);
		if ((e = make_vgpus(a, g, t, want->count - have, made)) < 0)
			return e;
	}
	return 0;
}

/*
 * Mixed-size mode: after the VFs (their rebind clears it) and before the
 * first vGPU (the driver refuses it while one exists).
 */
static int step_hetero(struct vgpu_apply *a, struct vgpu_apply_gpu *w)
{
	const struct vgpu_gpu *g = gpu_of(a, w);

	if (!w->hetero || !g || a->check)
		return 0;
	if (g->hetero == VGPU_ON)
		return 0;
	if (a->dry_run) {
		const struct vgpu_step s = { .kind = VGPU_STEP_MIXED_ON,
					     .object = VGPU_OBJECT_GPU,
					     .gpu = w->addr,
					     .count = 1 };

		vgpu_step_reportf(
			a->ctx, &s,
			"turn mixed-size mode on for GPU %s (time-sliced vGPUs of several sizes)",
			w->addr);
		return 0;
	}
	if (!a->ops->set_hetero)
		return vgpu_error(
			a->ctx, -ENOSYS,
			"GPU %s: the config asks for time-sliced vGPUs of several sizes, and mixed-size mode cannot be set here",
			w->addr);
	vgpu_log(a->ctx, LOG_INFO, "mixed-size mode: GPU %s: on", w->addr);
	return a->ops->set_hetero(a->ops_data, a->ctx, w->addr, true);
}

static const char *const step_names[] = { "MIG mode", "VFs", "GPU instances", "mixed-size mode",
					  "vGPUs" };

int vgpu_apply_gpu_steps(struct vgpu_apply *a, size_t i)
{
	static int (*const steps[])(struct vgpu_apply *,
				    struct vgpu_apply_gpu *) = { step_mig, step_vfs, step_gis,
								 step_hetero, step_vgpus };
	struct vgpu_apply_gpu *w = &a->gpus[i];
	struct vgpu_ctx *ctx = a->ctx;

	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		unsigned long said = ctx->n_logged;
		uint64_t t0 = vgpu_monotonic_ms(), ms;
		int e;

		/* asked to stop (Ctrl-C): no next step; what is done the next run completes */
		if (vgpu_interrupted())
			return vgpu_error(ctx, -EINTR,
					  "interrupted (signal %d) before step %zu (%s)",
					  vgpu_interrupted(), s + 1, step_names[s]);
		e = steps[s](a, w);

		if (e < 0)
			return vgpu_error(ctx, e, "step %zu (%s): %s", s + 1, step_names[s],
					  vgpu_ctx_error(ctx));
		/* a step that did (or said) nothing is no progress worth a line */
		ms = vgpu_monotonic_ms() - t0;
		if (a->progress && (ctx->n_logged != said || ms >= 1000))
			vgpu_log(ctx, LOG_INFO, "GPU %s: step %zu/%zu (%s) done in %.1f s", w->addr,
				 s + 1, ARRAY_SIZE(steps), step_names[s], (double)ms / 1000.0);
		/* what the next step reads changed: VFs came, GIs make types creatable */
		if ((s == 0 || s == 2 || s == 3) && reread(a) < 0)
			return -EIO;
	}
	return 0;
}

int vgpu_apply_steps(struct vgpu_apply *a)
{
	for (size_t i = 0; i < a->n_gpus; i++) {
		int e = vgpu_apply_gpu_steps(a, i);

		if (e < 0)
			return e;
	}
	return 0;
}
