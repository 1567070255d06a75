// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: a domain's placement, where its vGPUs and vCPUs go (the GPU, its
 * parents, the pinned cores of its node); pure functions over a const host
 * model.
 *
 * A VM goes where its GPU is: vCPUs on whole cores of the GPU's NUMA node
 * (docs/design.md, "Capacity is the GPU's"), never spilling to another node.  The steps are
 * separate: validate the request, choose the GPU, pick parents, pin CPUs,
 * check the node, explain.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "plan.h"

void vgpu_plan_free(struct vgpu_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_vgpus; i++) {
		free(p->vgpus[i].profile);
		free(p->vgpus[i].gi_profile);
	}
	free(p->pins);
	free(p->reason);
	free(p);
}

void vgpu_choice_set(struct vgpu_choice *c, const struct vgpu_parent *p, const struct vgpu_type *t)
{
	free(c->profile);
	free(c->gi_profile);
	memset(c, 0, sizeof(*c));
	snprintf(c->gpu, sizeof(c->gpu), "%s", p->gpu->addr);
	snprintf(c->parent, sizeof(c->parent), "%s", p->addr);
	c->iface = p->iface;
	c->type_id = t->id;
	c->profile = vgpu_xstrdup(t->info.profile);
	c->backing = t->info.backing;
	c->node = p->gpu->numa_node;
	c->mem_node = p->gpu->mem_node;
	c->gi_profile = t->info.gi_profile[0] ? vgpu_xstrdup(t->info.gi_profile) : NULL;
}

void vgpu_node_free_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
			 struct vgpu_cpuset *out)
{
	const struct vgpu_node *n = vgpu_topology_node(t, node);

	vgpu_cpuset_zero(out);
	if (!n)
		return;
	vgpu_topology_for_each_core(t, &n->cpus, c)
	{
		struct vgpu_cpuset core;

		vgpu_topology_core_cpus(t, c, &core);
		/* a core is usable only if no thread of it is taken: never split a core */
		if (!vgpu_cpuset_intersects(&core, busy) && vgpu_cpuset_subset(&core, &n->cpus))
			vgpu_cpuset_or(out, &core);
	}
}

/* Threads per core on @avail: the largest sibling set; *uniform if all cores have it. */
static unsigned threads_per_core(const struct vgpu_topology *t, const struct vgpu_cpuset *avail)
{
	unsigned threads = 1;

	vgpu_topology_for_each_core(t, avail, c)
	{
		struct vgpu_cpuset core;

		vgpu_topology_core_cpus(t, c, &core);
		if (vgpu_cpuset_count(&core) > threads)
			threads = vgpu_cpuset_count(&core);
	}
	return threads;
}

int vgpu_plan_cpus(struct vgpu_ctx *ctx, const struct vgpu_topology *t, int node,
		   const struct vgpu_cpuset *busy, unsigned vcpus, struct vgpu_plan *out)
{
	struct vgpu_cpuset avail, used;
	unsigned threads, placed = 0, guest_threads = 1, slots;
	VGPU_AUTOFREE unsigned *pins = NULL;
	bool uniform = true;

	if (vcpus == 0 || vcpus > VGPU_MAX_CPUS)
		return vgpu_error(ctx, -EINVAL, "invalid vCPU count %u", vcpus);
	if (!vgpu_topology_node(t, node))
		return vgpu_error(ctx, -ENOENT, "NUMA node %d does not exist on this host", node);
	vgpu_node_free_cpus(t, node, busy, &avail);
	threads = threads_per_core(t, &avail);
	if (vgpu_cpuset_count(&avail) < vcpus) {
		VGPU_AUTOFREE char *list = vgpu_xmalloc(VGPU_CPULIST_LEN);

		return vgpu_error(
			ctx, -ENOSPC,
			"NUMA node %d cannot hold %u vCPUs: %u CPUs on whole free cores (%s) are left after exclusions",
			node, vcpus, vgpu_cpuset_count(&avail),
			vgpu_cpuset_empty(&avail) ?
				"none" :
				vgpu_cpulist_format(&avail, list, VGPU_CPULIST_LEN));
	}
	/* a core is filled whole: a spare sibling gets a slot of its own (below) */
	pins = vgpu_xcalloc(vcpus + threads, sizeof(*pins));
	vgpu_cpuset_zero(&used);
	vgpu_topology_for_each_core(t, &avail, c)
	{
		struct vgpu_cpuset core;

		if (placed >= vcpus)
			break;
		vgpu_topology_core_cpus(t, c, &core);
		/* vCPUs 2i and 2i+1 on the siblings of one core (QEMU numbers threads fastest) */
		for (int s = vgpu_cpuset_next(&core, 0); s >= 0;
		     s = vgpu_cpuset_next(&core, (unsigned)s + 1))
			pins[placed++] = (unsigned)s;
		vgpu_cpuset_or(&used, &core);
		uniform &= vgpu_cpuset_count(&core) == threads;
	}
	/*
	 * Guest threads per core g: guest core k is vCPUs k*g..k*g+g-1, which
	 * sit on one host core only if every core used has the same number of
	 * threads T and g divides both T and the vCPU count.  A count no such g
	 * divides (5 vCPUs on 2-thread cores) gets g = T and one slot per
	 * spare sibling, offline: 3 cores x 2 threads, 5 of them started, so
	 * the topology the guest sees is the pinning.  Cores of unequal
	 * threads (an offline sibling) give single-thread cores.
	 */
	for (unsigned g = threads; uniform && g > 1; g--) {
		if (threads % g == 0 && vcpus % g == 0) {
			guest_threads = g;
			break;
		}
	}
	if (uniform && guest_threads == 1 && threads > 1 && vcpus > 1)
		guest_threads = threads; /* one vCPU is one thread of its own: nothing to match */
	slots = (vcpus + guest_threads - 1) / guest_threads * guest_threads;
	free(out->pins);
	out->pins = vgpu_steal_ptr(&pins);
	out->vcpus = vcpus;
	out->cpus = used;
	out->threads = guest_threads;
	out->cores = slots / guest_threads;
	out->node = node;
	return 0;
}

/* ---- capacity ----------------------------------------------------------- */

/* What one GPU holds (existing vGPUs and those planned so far). */
struct gpu_load {
	unsigned fb_total; /* MiB; 0 unknown */
	unsigned fb_used;
	const struct vgpu_type *ts; /* the time-sliced type on it, NULL none */
	enum vgpu_iface iface; /* which sizes may share it (vgpu_type_same_size()) */
	bool mixed; /* mixed-size mode is on: any sizes may */
	bool mig; /* MIG-backed vGPUs on it */
};

static void load_add(struct gpu_load *l, const struct vgpu_type *t, unsigned n)
{
	l->fb_used += t->info.fb_mib * n;
	if (t->info.backing == VGPU_BACKING_TIME_SLICED)
		l->ts = t;
	else if (t->info.backing == VGPU_BACKING_MIG)
		l->mig = true;
}

/*
 * The GPU's framebuffer as the capacity model knows it (NVML, or a whole type
 * table: A30-24C, T4-16Q, one vGPU owning the whole GPU; 0 unknown), and what
 * its vGPUs hold now.  Not the largest type its lists name: on vendor VFIO a
 * GPU in use drops its larger types out of them (two H100L-23C leave only
 * H100L-23C listed), and 23 GB would then refuse a third the driver takes.
 */
static void load_init(const struct vgpu_model *m, const struct vgpu_gpu *g, struct gpu_load *l)
{
	memset(l, 0, sizeof(*l));
	l->iface = g->iface;
	l->mixed = g->hetero == VGPU_ON;
	l->fb_total = (unsigned)vgpu_gpu_framebuffer_mib(m, g);
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		const struct vgpu_type *t = p->in_use && p->current_type ?
						    vgpu_model_find_type(m, g, p->current_type) :
						    NULL;

		if (t)
			load_add(l, t, p->mdevs.n ? (unsigned)p->mdevs.n : 1);
		t = p->reserved_type ? vgpu_model_find_type(m, g, p->reserved_type) : NULL;
		if (t)
			load_add(l, t, p->n_reserved);
	}
}

/* Can the GPU take one more vGPU of @t next to what it holds? */
static bool load_takes(const struct gpu_load *l, const struct vgpu_type *t)
{
	if (t->info.backing == VGPU_BACKING_TIME_SLICED &&
	    (l->mig || (l->ts && !l->mixed && !vgpu_type_same_size(l->ts, t, l->iface))))
		return false; /* one size unless mixed-size mode; no time-slicing beside MIG */
	if (t->info.backing == VGPU_BACKING_MIG && l->ts)
		return false;
	return !l->fb_total || !t->info.fb_mib || l->fb_used + t->info.fb_mib <= l->fb_total;
}

unsigned vgpu_gpu_room(const struct vgpu_model *m, const struct vgpu_gpu *g,
		       const struct vgpu_type *t)
{
	struct vgpu_capacity c;
	unsigned room;

	vgpu_capacity_of(m, g, t, NULL, &c);
	room = !c.exact && !c.available ? UINT_MAX : (unsigned)c.available;
	vgpu_capacity_clear(&c);
	return room;
}

/* ---- parents ------------------------------------------------------------ */

/* A VF holds one vGPU; a legacy PF parent holds several, as available_instances says. */
static bool parent_full(const struct vgpu_parent *p)
{
	return p->state_unknown || ((p->in_use || p->n_reserved) && p->index >= 0);
}

/* How many vGPUs matching @spec @p can create now (0 when none); sets *type. */
static long parent_offers(const struct vgpu_parent *p, const char *spec,
			  const struct vgpu_type **type)
{
	if (parent_full(p))
		return 0;
	for (size_t k = 0; k < p->n_types; k++) {
		long left = p->types[k].available - (long)p->n_reserved;

		if (left > 0 && vgpu_type_matches(p->types[k].type, spec)) {
			*type = p->types[k].type;
			return left;
		}
	}
	return 0;
}

/* Unknown sizes (no meminfo, no request) do not block. */
static bool node_holds_memory(const struct vgpu_topology *t, int node, uint64_t kib)
{
	const struct vgpu_node *n = vgpu_topology_node(t, node);

	return !kib || !n || !n->mem_total_kib || kib <= n->mem_total_kib;
}

static unsigned gpu_used(const struct vgpu_gpu *g)
{
	unsigned n = 0;

	for (size_t i = 0; i < g->n_parents; i++)
		n += g->parents[i].in_use || g->parents[i].n_reserved;
	return n;
}

static bool known_anywhere(const struct vgpu_model *m, const char *spec)
{
	for (size_t i = 0; i < m->n_gpus; i++)
		if (vgpu_gpu_match_type(&m->gpus[i], spec))
			return true;
	return false;
}

struct seen_item {
	const char *s;
	size_t pos;
};

static int cmp_seen(const void *a, const void *b)
{
	const struct seen_item *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_pos(const void *a, const void *b)
{
	const struct seen_item *x = a, *y = b;

	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* ---- the steps ---------------------------------------------------------- */

struct planner {
	struct vgpu_ctx *ctx;
	const struct vgpu_model *m;
	const struct vgpu_request *req;
	const struct vgpu_gpu *want_gpu;
	const struct vgpu_parent *want_vf;
	const struct vgpu_gpu *best;
	bool best_fits;
	struct gpu_load *loads; /* per GPU of m */
	const struct vgpu_parent *picked[VGPU_MAX_VGPUS];
};

/* How messages name the request's GPU and VF: the caller's option, else the value's kind. */
static const char *gpu_arg(const struct vgpu_request *req)
{
	return req->gpu_arg ? req->gpu_arg : "GPU";
}

static const char *vf_arg(const struct vgpu_request *req)
{
	return req->vf_arg ? req->vf_arg : "VF";
}

/*
 * "A30-4C, A30-6C, ...": profiles that could be planned now on @only (NULL:
 * anywhere on the host), each once, in host order, @except (the one just
 * refused) left out.  A profile counts where a free parent lists it and the
 * GPU's load and the capacity model take it, as the planner decides.
 * Sorting makes the de-duplication n log n.
 */
static char *list_available(const struct planner *pl, const struct vgpu_gpu *only,
			    const char *except)
{
	const struct vgpu_model *m = pl->m;
	struct seen_item *items = NULL;
	size_t n = 0, cap = 0, k = 0;
	char *out = NULL;

	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if (only && g != only)
			continue;
		for (size_t j = 0; j < g->n_parents; j++) {
			const struct vgpu_parent *p = &g->parents[j];

			for (size_t t = 0; !parent_full(p) && t < p->n_types; t++) {
				const struct vgpu_type *ty = p->types[t].type;

				if (p->types[t].available <= 0 || !load_takes(&pl->loads[i], ty) ||
				    (except && vgpu_type_matches(ty, except)) ||
				    vgpu_gpu_room(m, g, ty) <= 0)
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					items = vgpu_xreallocarray(items, cap, sizeof(*items));
				}
				items[n].s = ty->info.profile;
				items[n].pos = n;
				n++;
			}
		}
	}
	if (n)
		qsort(items, n, sizeof(*items), cmp_seen);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(items[i].s, items[i - 1].s) != 0)
			items[k++] = items[i];
	if (k)
		qsort(items, k, sizeof(*items), cmp_pos);
	for (size_t i = 0; i < k; i++)
		vgpu_append(&out, "%s%s", i ? ", " : "", items[i].s);
	if (!k)
		out = vgpu_xstrdup("none");
	free(items);
	return out;
}

static int validate_request(struct planner *pl)
{
	const struct vgpu_model *m = pl->m;
	const struct vgpu_request *req = pl->req;
	size_t n_types = 0;

	if (!m->has_topology)
		return vgpu_error(pl->ctx, -EINVAL, "host topology has not been read");
	if (req->n_profiles == 0 || req->n_profiles > VGPU_MAX_VGPUS)
		return vgpu_error(pl->ctx, -EINVAL, "between 1 and %d vGPUs per VM",
				  VGPU_MAX_VGPUS);
	if (req->n_gpus && req->n_gpus != req->n_profiles)
		return vgpu_error(pl->ctx, -EINVAL, "%zu GPUs for %zu vGPUs: one vGPU per GPU",
				  req->n_gpus, req->n_profiles);
	if (req->gpu && !(pl->want_gpu = vgpu_model_find_gpu_arg(m, req->gpu)))
		return vgpu_error(pl->ctx, -ENOENT, "%s '%s': no such NVIDIA GPU", gpu_arg(req),
				  req->gpu);
	if (req->vf && !(pl->want_vf = vgpu_model_find_parent(m, req->vf)))
		return vgpu_error(pl->ctx, -ENOENT, "%s '%s': no such VF", vf_arg(req), req->vf);
	if (pl->want_vf && pl->want_gpu && pl->want_vf->gpu != pl->want_gpu)
		return vgpu_error(pl->ctx, -EINVAL, "%s '%s' is not a VF of %s '%s'", vf_arg(req),
				  req->vf, gpu_arg(req), req->gpu);
	for (size_t i = 0; i < m->n_gpus; i++)
		n_types += m->gpus[i].n_types;
	if (!n_types)
		return vgpu_error(
			pl->ctx, -ENOENT,
			"this host offers no NVIDIA vGPU types (%zu NVIDIA GPUs; see 'vgpuctl gpus' and 'vgpuctl types')",
			m->n_gpus);
	for (size_t p = 0; p < req->n_profiles; p++) {
		if (!known_anywhere(m, req->profiles[p])) {
			VGPU_AUTOFREE char *avail = list_available(pl, NULL, NULL);

			return vgpu_error(pl->ctx, -ENOENT,
					  "unknown vGPU profile '%s'; available now: %s",
					  req->profiles[p], avail);
		}
	}
	return 0;
}

/* Does @g have a parent that can take @spec now, within the GPU's capacity? */
static bool gpu_offers(const struct planner *pl, const struct vgpu_gpu *g, const char *spec)
{
	const struct gpu_load *l = &pl->loads[g - pl->m->gpus];

	for (size_t j = 0; j < g->n_parents; j++) {
		const struct vgpu_type *t;

		/* and the capacity model agrees (maxima, GIs, reservations) */
		if (parent_offers(&g->parents[j], spec, &t) > 0 && load_takes(l, t) &&
		    vgpu_gpu_room(pl->m, g, t) > 0)
			return true;
	}
	return false;
}

/*
 * Rank GPUs offering the first profile: a node with room for the VM first,
 * then the least-used GPU, then the lowest address.
 */
static int choose_gpu(struct planner *pl)
{
	const struct vgpu_model *m = pl->m;
	const struct vgpu_request *req = pl->req;
	const struct vgpu_gpu *nodeless = NULL;

	if (req->n_gpus && !pl->want_vf) {
		/* a fabric partition's GPUs: the first decides the node the CPUs go to */
		pl->best = vgpu_model_find_gpu(m, req->gpus[0]);
		if (!pl->best || !gpu_offers(pl, pl->best, req->profiles[0]))
			return vgpu_error(pl->ctx, -EBUSY, "GPU %s cannot take '%s' now",
					  req->gpus[0], req->profiles[0]);
		pl->best_fits = true;
		return 0;
	}
	if (pl->want_vf) {
		const struct vgpu_type *t;
		const struct gpu_load *l = &pl->loads[pl->want_vf->gpu - m->gpus];

		if (!parent_offers(pl->want_vf, req->profiles[0], &t))
			return vgpu_error(pl->ctx, -EBUSY, "%s '%s' cannot take '%s' now (%s)",
					  vf_arg(req), req->vf, req->profiles[0],
					  pl->want_vf->in_use ? "it holds a vGPU" :
								"not offered there");
		if (!load_takes(l, t))
			return vgpu_error(
				pl->ctx, -EBUSY,
				"%s '%s' cannot take '%s' now (its GPU holds vGPUs of another type or has no framebuffer left)",
				vf_arg(req), req->vf, req->profiles[0]);
		pl->best = pl->want_vf->gpu;
		return 0;
	}
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		struct vgpu_cpuset fr;
		bool fits;

		if ((pl->want_gpu && pl->want_gpu != g) || !gpu_offers(pl, g, req->profiles[0]))
			continue;
		if (g->numa_node < 0) {
			nodeless = nodeless ? nodeless : g;
			continue;
		}
		vgpu_node_free_cpus(&m->topo, g->numa_node, &req->exclude, &fr);
		fits = vgpu_cpuset_count(&fr) >= req->vcpus &&
		       node_holds_memory(&m->topo, g->numa_node, req->memory_kib);
		if (!pl->best || (fits && !pl->best_fits) ||
		    (fits == pl->best_fits && gpu_used(g) < gpu_used(pl->best))) {
			pl->best = g;
			pl->best_fits = fits;
		}
	}
	if (!pl->best)
		pl->best = nodeless; /* refused below, with the reason */
	if (!pl->best) {
		/* what else fits where the caller asked; and whether the refused one fits elsewhere
		 */
		VGPU_AUTOFREE char *avail = list_available(pl, pl->want_gpu, req->profiles[0]);
		const struct vgpu_gpu *elsewhere = NULL;

		for (size_t i = 0; pl->want_gpu && !elsewhere && i < m->n_gpus; i++)
			if (&m->gpus[i] != pl->want_gpu &&
			    gpu_offers(pl, &m->gpus[i], req->profiles[0]))
				elsewhere = &m->gpus[i];
		if (elsewhere)
			return vgpu_error(
				pl->ctx, -EBUSY,
				"no free VF on that GPU can take '%s' now (GPU %s can); available there now: %s",
				req->profiles[0], elsewhere->addr, avail);
		return vgpu_error(pl->ctx, -EBUSY,
				  "no free VF %scan take '%s' now; available %snow: %s",
				  pl->want_gpu ? "on that GPU " : "", req->profiles[0],
				  pl->want_gpu ? "there " : "", avail);
	}
	if (pl->best->numa_node < 0)
		return vgpu_error(
			pl->ctx, -EINVAL,
			"GPU %s offers '%s' but its NUMA node is unknown (numa_node -1 and local_cpulist spans nodes); nothing can be pinned next to it",
			pl->best->addr, req->profiles[0]);
	return 0;
}

/* vGPUs of the request before @p planned on @g (the capacity model sees only the host). */
static unsigned planned_on(const struct planner *pl, size_t p, const struct vgpu_gpu *g)
{
	unsigned n = 0;

	for (size_t q = 0; q < p; q++)
		n += pl->picked[q]->gpu == g;
	return n;
}

/* A parent of a GPU on the chosen node that can take vGPU @p of the request. */
static const struct vgpu_parent *pick_one(struct planner *pl, size_t p, const struct vgpu_type **ty)
{
	const struct vgpu_model *m = pl->m;

	/* the chosen GPU, its node, then (a mirrored guest only) the GPUs of other nodes */
	for (int pass = 0; pass < (pl->req->mirror ? 3 : 2); pass++) {
		for (size_t i = 0; i < m->n_gpus; i++) {
			const struct vgpu_gpu *g = &m->gpus[i];
			bool here = g->numa_node == pl->best->numa_node;

			if (pl->req->n_gpus ?
				    pass > 0 || p >= pl->req->n_gpus ||
					    strcmp(g->addr, pl->req->gpus[p]) != 0 :
				    (pass == 0) != (g == pl->best) || (pass < 2 && !here) ||
					    (pass == 2 && (here || g->numa_node < 0)) ||
					    (pl->want_gpu && g != pl->want_gpu))
				continue;
			for (size_t j = 0; j < g->n_parents; j++) {
				const struct vgpu_parent *vf = &g->parents[j];
				long n = parent_offers(vf, pl->req->profiles[p], ty), uses = 0;

				/* a VF holds one vGPU; a legacy PF as many as it offers */
				for (size_t q = 0; q < p; q++)
					uses += pl->picked[q] == vf;
				if (n > 0 && (vf->index >= 0 ? uses == 0 : uses < n) &&
				    load_takes(&pl->loads[i], *ty) &&
				    vgpu_gpu_room(m, g, *ty) > planned_on(pl, p, g))
					return vf;
			}
		}
	}
	return NULL;
}

static void warn_combination(struct planner *pl, size_t p, const struct vgpu_type *ty)
{
	const struct vgpu_request *req = pl->req;

	if (req->n_profiles > 1 && (ty->info.series == 'A' || ty->info.series == 'B'))
		vgpu_warn(
			pl->ctx,
			"NVIDIA supports several vGPUs in one VM only for C- and Q-series profiles; '%s' is not one",
			ty->info.profile);
	if (req->n_profiles > 1 && ty->info.backing == VGPU_BACKING_TIME_SLICED &&
	    ty->max_instances > 1 && p > 0 && pl->picked[0]->gpu == pl->picked[p]->gpu)
		vgpu_warn(
			pl->ctx,
			"'%s': several time-sliced vGPUs of one GPU in one VM need vGPU software 16 or later",
			ty->info.profile);
}

/* Each vGPU on its own parent: the first on the chosen GPU, more on the same node. */
static int pick_parents(struct planner *pl, struct vgpu_plan *out)
{
	for (size_t p = 0; p < pl->req->n_profiles; p++) {
		const struct vgpu_type *ty = NULL;
		const struct vgpu_parent *pick = NULL;
		struct vgpu_choice *c = &out->vgpus[p];

		if (p == 0 && pl->want_vf) {
			parent_offers(pl->want_vf, pl->req->profiles[0], &ty);
			pick = pl->want_vf;
		} else {
			pick = pick_one(pl, p, &ty);
		}
		if (!pick && pl->req->n_gpus)
			return vgpu_error(
				pl->ctx, -EBUSY,
				"no free VF of GPU %s can take '%s' as vGPU %zu of this VM",
				p < pl->req->n_gpus ? pl->req->gpus[p] : "-", pl->req->profiles[p],
				p + 1);
		if (!pick && pl->req->mirror)
			return vgpu_error(
				pl->ctx, -EBUSY,
				"no free VF on any NUMA node can take '%s' as vGPU %zu of this VM",
				pl->req->profiles[p], p + 1);
		if (!pick)
			return vgpu_error(
				pl->ctx, -EBUSY,
				"no free VF on NUMA node %d can take '%s' as vGPU %zu of this VM",
				pl->best->numa_node, pl->req->profiles[p], p + 1);
		pl->picked[p] = pick;
		load_add(&pl->loads[pick->gpu - pl->m->gpus], ty, 1);
		vgpu_choice_set(c, pick, ty);
		out->n_vgpus = p + 1;
		warn_combination(pl, p, ty);
	}
	return 0;
}

/* Memory is bound strictly to the node: more than it has can never start. */
static int check_node(struct planner *pl, const struct vgpu_plan *plan)
{
	const struct vgpu_node *nd = vgpu_topology_node(&pl->m->topo, plan->node);
	uint64_t kib = pl->req->memory_kib;
	unsigned long long need = kib / (1024 * 1024);

	const char *typed = pl->req->memory_arg;
	char want[32], has[32];

	if (!node_holds_memory(&pl->m->topo, plan->node, kib))
		return vgpu_error(pl->ctx, -ENOSPC,
				  "NUMA node %d cannot hold %s of guest memory: it has %s in all",
				  plan->node, vgpu_size_text(want, sizeof(want), kib, typed),
				  vgpu_size_text(has, sizeof(has), nd->mem_total_kib, typed));
	if (kib && nd && !nd->mem_total_kib)
		vgpu_warn(
			pl->ctx,
			"the memory of NUMA node %d is unknown (see the warning about its meminfo): %s of guest memory are not checked against it",
			plan->node, vgpu_size_text(want, sizeof(want), kib, typed));
	if (pl->req->hugepages && nd && nd->hugepages_1g_free >= 0 &&
	    (unsigned long long)nd->hugepages_1g_free < need)
		vgpu_warn(
			pl->ctx,
			"NUMA node %d has %ld free 1 GiB hugepages, the VM needs %llu; it will not start until they are reserved",
			plan->node, nd->hugepages_1g_free, need);
	return 0;
}

/* ---- a guest that mirrors the host: one cell per node of its GPUs ------- */

uint64_t vgpu_plan_cell_memory(const struct vgpu_plan *plan, size_t k, uint64_t mem_kib,
			       uint64_t unit_kib)
{
	uint64_t units = mem_kib / unit_kib, given = 0, mine = 0;

	for (size_t i = 0; i < plan->n_cells; i++) {
		uint64_t share = units * plan->cells[i].n_vgpus / plan->n_vgpus;

		given += share;
		if (i == k)
			mine = share * unit_kib;
	}
	/* what the division left (and what is not a whole unit) goes to cell 0 */
	return k == 0 ? mine + mem_kib - given * unit_kib : mine;
}

int vgpu_plan_mirror_cpus(struct vgpu_ctx *ctx, const struct vgpu_topology *t,
			  const struct vgpu_cpuset *busy, unsigned vcpus, struct vgpu_plan *plan)
{
	unsigned unit = 1, units, given = 0, threads = 0;
	unsigned per[VGPU_MAX_VGPUS] = { 0 }, placed = 0;
	VGPU_AUTOFREE unsigned *pins = NULL;
	struct vgpu_cpuset avail, all;
	bool spare = false;
	size_t n = 0;

	/* the cells: the nodes of the vGPUs' GPUs, lowest node first */
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		int node = plan->vgpus[i].node;
		size_t k = 0;

		while (k < n && plan->cells[k].node < node)
			k++;
		if (k < n && plan->cells[k].node == node) {
			plan->cells[k].n_vgpus++;
			continue;
		}
		memmove(&plan->cells[k + 1], &plan->cells[k], (n - k) * sizeof(plan->cells[0]));
		memset(&plan->cells[k], 0, sizeof(plan->cells[k]));
		plan->cells[k].node = node;
		plan->cells[k].n_vgpus = 1;
		n++;
	}
	if (n == 0 || plan->cells[0].node < 0)
		return vgpu_error(ctx, -EINVAL, "the guest's GPUs have no known NUMA node");
	vgpu_node_free_cpus(t, plan->cells[0].node, busy, &avail);
	unit = threads_per_core(t, &avail);
	if (vcpus % unit || vcpus / unit < n)
		unit = 1;
	units = vcpus / unit;
	if (vcpus == 0 || units < n)
		return vgpu_error(ctx, -EINVAL,
				  "%u vCPUs cannot give each of the guest's %zu NUMA cells one",
				  vcpus, n);
	for (size_t k = 0; k < n; k++) {
		per[k] = units * plan->cells[k].n_vgpus / (unsigned)plan->n_vgpus;
		per[k] = per[k] ? per[k] : 1;
		given += per[k];
	}
	/* the rest to the cells with the most vGPUs first (the first of equals) */
	while (given != units) {
		size_t best = 0;

		for (size_t k = 1; k < n; k++)
			if (given < units ? plan->cells[k].n_vgpus > plan->cells[best].n_vgpus :
					    per[k] > per[best])
				best = k;
		if (given < units) {
			per[best]++;
			given++;
		} else {
			per[best]--;
			given--;
		}
	}
	pins = vgpu_xcalloc(vcpus, sizeof(*pins));
	vgpu_cpuset_zero(&all);
	for (size_t k = 0; k < n; k++) {
		struct vgpu_plan one = { 0 };
		int r = vgpu_plan_cpus(ctx, t, plan->cells[k].node, busy, per[k] * unit, &one);

		if (r < 0) {
			free(one.pins);
			return r;
		}
		spare |= one.cores * one.threads != one.vcpus ||
			 (threads && threads != one.threads);
		threads = one.threads;
		plan->cells[k].first = placed;
		plan->cells[k].slots = one.vcpus;
		plan->cells[k].cpus = one.cpus;
		memcpy(&pins[placed], one.pins, one.vcpus * sizeof(*pins));
		placed += one.vcpus;
		vgpu_cpuset_or(&all, &one.cpus);
		free(one.pins);
	}
	free(plan->pins);
	plan->pins = vgpu_steal_ptr(&pins);
	plan->vcpus = vcpus;
	plan->threads = spare ? 1 : threads;
	plan->cores = vcpus / plan->threads;
	plan->cpus = all;
	plan->n_cells = n;
	return 0;
}

/* Each cell's share of the memory, bound strictly to its node: no more than it has. */
static int check_cells(struct planner *pl, const struct vgpu_plan *plan)
{
	uint64_t unit = pl->req->hugepages ? 1024 * 1024 : 1024;

	for (size_t k = 0; k < plan->n_cells; k++) {
		const struct vgpu_node *nd = vgpu_topology_node(&pl->m->topo, plan->cells[k].node);
		uint64_t kib = vgpu_plan_cell_memory(plan, k, pl->req->memory_kib, unit);
		char want[32], has[32];

		if (!node_holds_memory(&pl->m->topo, plan->cells[k].node, kib))
			return vgpu_error(
				pl->ctx, -ENOSPC,
				"NUMA node %d cannot hold %s of guest memory (guest NUMA cell %zu): it has %s in all",
				plan->cells[k].node,
				vgpu_size_text(want, sizeof(want), kib, pl->req->memory_arg), k,
				vgpu_size_text(has, sizeof(has), nd->mem_total_kib,
					       pl->req->memory_arg));
		if (pl->req->hugepages && nd && nd->hugepages_1g_free >= 0 &&
		    (uint64_t)nd->hugepages_1g_free < kib / (1024 * 1024))
			vgpu_warn(
				pl->ctx,
				"NUMA node %d has %ld free 1 GiB hugepages, guest NUMA cell %zu needs %" PRIu64
				"; it will not start until they are reserved",
				plan->cells[k].node, nd->hugepages_1g_free, k, kib / (1024 * 1024));
	}
	return 0;
}

static char *explain(const struct planner *pl, const struct vgpu_plan *plan)
{
	const struct vgpu_gpu *best = pl->best;
	const char *how = pl->want_vf || pl->want_gpu ? ", as asked with " :
			  pl->best_fits ? " which has room for the VM's vCPUs and memory" :
					  "";
	const char *opt = pl->want_vf ? vf_arg(pl->req) : pl->want_gpu ? gpu_arg(pl->req) : "";

	/* a GPU without SR-IOV is its own parent: it holds several vGPUs, never "free" */
	if (pl->picked[0]->index < 0)
		return vgpu_asprintf(
			"GPU %s (no SR-IOV: the GPU itself is the mdev parent; vGPUs on it now: %zu) offers %s now and is on NUMA node %d%s%s",
			best->addr, pl->picked[0]->mdevs.n, plan->vgpus[0].profile, best->numa_node,
			how, opt);
	return vgpu_asprintf(
		"%s is free and offers %s now; GPU %s (%u of %zu vGPU parents in use) is on NUMA node %d%s%s",
		plan->vgpus[0].parent, plan->vgpus[0].profile, best->addr, gpu_used(best),
		best->n_parents, best->numa_node, how, opt);
}

int vgpu_plan_make(struct vgpu_ctx *ctx, const struct vgpu_model *m, const struct vgpu_request *req,
		   struct vgpu_plan **out)
{
	VGPU_AUTOPTR(plan) plan = vgpu_xcalloc(1, sizeof(*plan));
	struct planner pl = { .ctx = ctx, .m = m, .req = req };
	int r;

	pl.loads = vgpu_xcalloc(m->n_gpus, sizeof(*pl.loads));
	for (size_t i = 0; i < m->n_gpus; i++)
		load_init(m, &m->gpus[i], &pl.loads[i]);
	r = validate_request(&pl);
	if (r == 0)
		r = choose_gpu(&pl);
	if (r == 0)
		r = pick_parents(&pl, plan);
	if (r == 0 && req->mirror) {
		plan->node = pl.best->numa_node;
		r = vgpu_plan_mirror_cpus(ctx, &m->topo, &req->exclude, req->vcpus, plan);
	} else if (r == 0)
		r = vgpu_plan_cpus(ctx, &m->topo, pl.best->numa_node, &req->exclude, req->vcpus,
				   plan);
	if (r == 0)
		r = req->mirror ? check_cells(&pl, plan) : check_node(&pl, plan);
	free(pl.loads);
	if (r < 0)
		return r;
	plan->reason = explain(&pl, plan);
	*out = vgpu_steal_ptr(&plan);
	return 0;
}

int vgpu_plan_set_ids(struct vgpu_ctx *ctx, struct vgpu_plan *plan, const struct vgpu_request *req,
		      const char *existing, char (*prev)[VGPU_UUID_LEN], size_t n_prev)
{
	char uuid[VGPU_UUID_LEN], mdevs[VGPU_MAX_VGPUS][VGPU_UUID_LEN];
	int r;

	if (req->uuid) {
		if (!vgpu_uuid_normalize(req->uuid, uuid))
			return vgpu_error(ctx, -EINVAL, "'%s' is not a UUID", req->uuid);
	} else if (existing && *existing) {
		/* keep an existing identity, in libvirt's canonical form */
		if (!vgpu_uuid_normalize(existing, uuid))
			return vgpu_error(ctx, -EINVAL, "the domain's <uuid> '%s' is not a UUID",
					  existing);
	} else if ((r = vgpu_uuid_generate(ctx, uuid)) < 0) {
		return r;
	}
	for (size_t i = 0, k = 0; i < plan->n_vgpus; i++) {
		mdevs[i][0] = '\0';
		if (plan->vgpus[i].iface != VGPU_IFACE_MDEV)
			continue;
		if (req->mdev_uuids[i]) {
			if (!vgpu_uuid_normalize(req->mdev_uuids[i], mdevs[i]))
				return vgpu_error(ctx, -EINVAL, "mdev UUID '%s' is not a UUID",
						  req->mdev_uuids[i]);
		} else if (k < n_prev) {
			snprintf(mdevs[i], VGPU_UUID_LEN, "%s", prev[k++]);
		} else if ((r = vgpu_uuid_generate(ctx, mdevs[i])) < 0) {
			return r;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(mdevs[i], mdevs[j]) == 0)
				return vgpu_error(ctx, -EINVAL,
						  "vGPUs %zu and %zu would share mdev UUID %s",
						  j + 1, i + 1, mdevs[i]);
	}
	memcpy(plan->uuid, uuid, sizeof(uuid));
	for (size_t i = 0; i < plan->n_vgpus; i++)
		memcpy(plan->vgpus[i].mdev_uuid, mdevs[i], VGPU_UUID_LEN);
	return 0;
}
