// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Placement and CPU pinning: pure functions over the in-memory host model.
 *
 * A VM goes where its GPU is: vCPUs on whole cores of the GPU's NUMA node
 * (reference section 9), never spilling to another node.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu-priv.h"

bool vgpu_type_matches(const struct vgpu_type *t, const char *spec)
{
	long id;

	if (strncmp(spec, "nvidia-", 7) == 0 && vgpu_parse_long(spec + 7, &id) == 0)
		return id > 0 && (unsigned long)id == t->id;
	if (vgpu_parse_long(spec, &id) == 0)
		return id > 0 && (unsigned long)id == t->id;
	if (!t->name)
		return false;
	return strcmp(spec, t->info.profile) == 0 || strcmp(spec, t->name) == 0;
}

void vgpu_node_free_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
			 struct vgpu_cpuset *out)
{
	const struct vgpu_node *n = vgpu_topology_node(t, node);

	vgpu_cpuset_zero(out);
	if (!n)
		return;
	for (int c = vgpu_cpuset_next(&n->cpus, 0); c >= 0;
	     c = vgpu_cpuset_next(&n->cpus, (unsigned)c + 1)) {
		struct vgpu_cpuset core;

		if ((unsigned)c >= t->n_cpus || t->core_of[c] != c)
			continue;
		vgpu_topology_core_cpus(t, c, &core);
		/* a core is usable only if no thread of it is taken: never split a core */
		if (!vgpu_cpuset_intersects(&core, busy) && vgpu_cpuset_subset(&core, &n->cpus))
			vgpu_cpuset_or(out, &core);
	}
}

int vgpu_plan_cpus(const struct vgpu_topology *t, int node, const struct vgpu_cpuset *busy,
		   unsigned vcpus, struct vgpu_plan *out, char *err, size_t errlen)
{
	struct vgpu_cpuset avail;
	unsigned threads = 0, placed = 0;
	bool uniform = true;
	char list[4096];

	if (vcpus == 0 || vcpus > VGPU_MAX_CPUS) {
		snprintf(err, errlen, "invalid vCPU count %u", vcpus);
		return -EINVAL;
	}
	if (!vgpu_topology_node(t, node)) {
		snprintf(err, errlen, "NUMA node %d does not exist on this host", node);
		return -ENOENT;
	}
	vgpu_node_free_cpus(t, node, busy, &avail);
	/* threads per core on this node: the largest sibling set */
	for (int c = vgpu_cpuset_next(&avail, 0); c >= 0;
	     c = vgpu_cpuset_next(&avail, (unsigned)c + 1)) {
		struct vgpu_cpuset core;

		if (t->core_of[c] != c)
			continue;
		vgpu_topology_core_cpus(t, c, &core);
		if (vgpu_cpuset_count(&core) > threads)
			threads = vgpu_cpuset_count(&core);
	}
	if (threads == 0)
		threads = 1;
	if (vgpu_cpuset_count(&avail) < vcpus) {
		snprintf(
			err, errlen,
			"NUMA node %d cannot hold %u vCPUs: %u CPUs on whole free cores (%s) are left "
			"after exclusions",
			node, vcpus, vgpu_cpuset_count(&avail),
			vgpu_cpuset_empty(&avail) ?
				"none" :
				vgpu_cpulist_format(&avail, list, sizeof(list)));
		return -ENOSPC;
	}
	vgpu_cpuset_zero(&out->cpus);
	for (int c = vgpu_cpuset_next(&avail, 0); c >= 0 && placed < vcpus;
	     c = vgpu_cpuset_next(&avail, (unsigned)c + 1)) {
		struct vgpu_cpuset core;

		if (t->core_of[c] != c)
			continue;
		vgpu_topology_core_cpus(t, c, &core);
		/* vCPUs 2i and 2i+1 on the siblings of one core (QEMU numbers threads fastest) */
		for (int s = vgpu_cpuset_next(&core, 0); s >= 0 && placed < vcpus;
		     s = vgpu_cpuset_next(&core, (unsigned)s + 1))
			out->pins[placed++] = (unsigned)s;
		vgpu_cpuset_or(&out->cpus, &core);
		uniform &= vgpu_cpuset_count(&core) == threads;
	}
	out->vcpus = vcpus;
	/*
	 * Guest threads per core g: guest core k is vCPUs k*g..k*g+g-1, which
	 * sit on one host core only if every core used has the same number of
	 * threads T and g divides both T and the vCPU count.  Otherwise (an odd
	 * count, a core with an offline sibling) the guest sees single-thread
	 * cores; a spare sibling stays with this VM so no core is shared.
	 */
	out->threads = 1;
	for (unsigned g = threads; uniform && g > 1; g--) {
		if (threads % g == 0 && vcpus % g == 0) {
			out->threads = g;
			break;
		}
	}
	out->cores = vcpus / out->threads;
	out->node = node;
	return 0;
}

/* A VF holds one vGPU; a legacy PF parent holds several, as available_instances says. */
static bool parent_full(const struct vgpu_vf *vf)
{
	return vf->state_unknown || (vf->in_use && vf->index >= 0);
}

/* How many vGPUs matching @spec @vf can create now (0 when none); sets *type. */
static long vf_offers_n(const struct vgpu_vf *vf, const char *spec, const struct vgpu_type **type)
{
	if (parent_full(vf))
		return 0;
	for (size_t k = 0; k < vf->n_types; k++) {
		if (vf->types[k].available > 0 && vgpu_type_matches(vf->types[k].type, spec)) {
			*type = vf->types[k].type;
			return vf->types[k].available;
		}
	}
	return 0;
}

static bool vf_offers(const struct vgpu_vf *vf, const char *spec, const struct vgpu_type **type)
{
	return vf_offers_n(vf, spec, type) > 0;
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

	for (size_t i = 0; i < g->n_vfs; i++)
		n += g->vfs[i].in_use;
	return n;
}

static bool known_anywhere(struct vgpu_host *h, const char *spec)
{
	for (size_t i = 0; i < h->n_gpus; i++)
		for (size_t k = 0; k < h->gpus[i].n_types; k++)
			if (vgpu_type_matches(h->gpus[i].types[k], spec))
				return true;
	return false;
}

static bool list_has(const char *list, const char *item)
{
	size_t l = strlen(item);

	for (const char *p = list; (p = strstr(p, item)); p += l)
		if ((p == list || p[-1] == ' ') && (p[l] == ',' || p[l] == '\0'))
			return true;
	return false;
}

/* "A30-4C, A30-6C, ...": profiles creatable now somewhere on the host, each once */
static void list_available(struct vgpu_host *h, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < h->n_gpus; i++) {
		const struct vgpu_gpu *g = &h->gpus[i];

		for (size_t j = 0; j < g->n_vfs; j++) {
			const struct vgpu_vf *vf = &g->vfs[j];

			if (parent_full(vf))
				continue;
			for (size_t m = 0; m < vf->n_types; m++) {
				const char *p = vf->types[m].type->info.profile;

				if (vf->types[m].available <= 0 || list_has(buf, p))
					continue;
				off += (size_t)snprintf(buf + off, len > off ? len - off : 0,
							"%s%s", off ? ", " : "", p);
				if (off >= len)
					return;
			}
		}
	}
}

static void add_warning(struct vgpu_plan *p, const char *fmt, const char *arg)
{
	size_t off = strlen(p->warnings);

	snprintf(p->warnings + off, sizeof(p->warnings) - off, "%s", off ? "\n" : "");
	off = strlen(p->warnings);
	snprintf(p->warnings + off, sizeof(p->warnings) - off, fmt, arg);
}

static int plan_make(struct vgpu_host *h, const struct vgpu_request *req, struct vgpu_plan *out)
{
	const struct vgpu_topology *t = vgpu_host_topology(h);
	const struct vgpu_gpu *want_gpu = NULL;
	const struct vgpu_vf *want_vf = NULL;
	const struct vgpu_gpu *best = NULL, *nodeless = NULL;
	const struct vgpu_type *first_type = NULL;
	bool best_fits = false;
	char err[1024];
	int r;

	if (!t)
		return vgpu_set_error(h, -EINVAL, "host topology has not been read");
	if (req->n_profiles == 0 || req->n_profiles > VGPU_MAX_VGPUS)
		return vgpu_set_error(h, -EINVAL, "between 1 and %d vGPUs per VM", VGPU_MAX_VGPUS);
	if (req->gpu && !(want_gpu = vgpu_host_find_gpu(h, req->gpu)))
		return vgpu_set_error(h, -ENOENT, "--gpu '%s': no such NVIDIA GPU", req->gpu);
	if (req->vf && !(want_vf = vgpu_host_find_vf(h, req->vf)))
		return vgpu_set_error(h, -ENOENT, "--vf '%s': no such VF", req->vf);
	if (want_vf && want_gpu && want_vf->gpu != want_gpu)
		return vgpu_set_error(h, -EINVAL, "--vf '%s' is not a VF of --gpu '%s'", req->vf,
				      req->gpu);
	{
		size_t n_types = 0;

		for (size_t i = 0; i < h->n_gpus; i++)
			n_types += h->gpus[i].n_types;
		if (!n_types)
			return vgpu_set_error(
				h, -ENOENT,
				"this host offers no NVIDIA vGPU types (%zu NVIDIA GPUs; see "
				"'vgpuctl gpus' and 'vgpuctl types')",
				h->n_gpus);
	}
	for (size_t p = 0; p < req->n_profiles; p++) {
		if (!known_anywhere(h, req->profiles[p])) {
			char avail[1024];

			list_available(h, avail, sizeof(avail));
			return vgpu_set_error(h, -ENOENT,
					      "unknown vGPU profile '%s'; available now: %s",
					      req->profiles[p], *avail ? avail : "none");
		}
	}
	if (want_vf) {
		if (!vf_offers(want_vf, req->profiles[0], &first_type))
			return vgpu_set_error(h, -EBUSY, "--vf '%s' cannot take '%s' now (%s)",
					      req->vf, req->profiles[0],
					      want_vf->in_use ? "it holds a vGPU" :
								"not offered there");
		best = want_vf->gpu;
	} else {
		/*
		 * Rank GPUs offering the first profile: a node with room for the
		 * VM first, then the least-used GPU, then the lowest address.
		 */
		for (size_t i = 0; i < h->n_gpus; i++) {
			const struct vgpu_gpu *g = &h->gpus[i];
			const struct vgpu_type *ty;
			struct vgpu_cpuset fr;
			bool offers = false, fits;

			if (want_gpu && want_gpu != g)
				continue;
			for (size_t j = 0; j < g->n_vfs && !offers; j++)
				offers = vf_offers(&g->vfs[j], req->profiles[0], &ty);
			if (offers && g->numa_node < 0 && !nodeless)
				nodeless = g;
			if (!offers || g->numa_node < 0)
				continue;
			vgpu_node_free_cpus(t, g->numa_node, &req->exclude, &fr);
			fits = vgpu_cpuset_count(&fr) >= req->vcpus &&
			       node_holds_memory(t, g->numa_node, req->memory_kib);
			if (!best || (fits && !best_fits) ||
			    (fits == best_fits && gpu_used(g) < gpu_used(best))) {
				best = g;
				best_fits = fits;
			}
		}
		if (!best && nodeless)
			best = nodeless; /* refused below, with the reason */
		if (!best) {
			char avail[1024];

			list_available(h, avail, sizeof(avail));
			return vgpu_set_error(h, -EBUSY,
					      "no free VF %scan take '%s' now; available now: %s",
					      want_gpu ? "on that GPU " : "", req->profiles[0],
					      *avail ? avail : "none");
		}
	}
	if (best->numa_node < 0)
		return vgpu_set_error(
			h, -EINVAL,
			"GPU %s offers '%s' but its NUMA node is unknown (numa_node -1 "
			"and local_cpulist spans nodes); nothing can be pinned next to it",
			best->addr, req->profiles[0]);

	/* each vGPU on its own VF: the first on the chosen GPU, more on the same node */
	for (size_t p = 0; p < req->n_profiles; p++) {
		const struct vgpu_vf *pick = NULL;
		const struct vgpu_type *ty = NULL;

		if (p == 0 && want_vf) {
			pick = want_vf;
			ty = first_type;
		}
		for (int pass = 0; pass < 2 && !pick; pass++) {
			for (size_t i = 0; i < h->n_gpus && !pick; i++) {
				const struct vgpu_gpu *g = &h->gpus[i];

				if ((pass == 0) != (g == best) || g->numa_node != best->numa_node)
					continue;
				if (want_gpu && g != want_gpu)
					continue;
				for (size_t j = 0; j < g->n_vfs && !pick; j++) {
					const struct vgpu_vf *vf = &g->vfs[j];
					long n = vf_offers_n(vf, req->profiles[p], &ty), uses = 0;

					/* a VF holds one vGPU; a legacy PF as many as it offers */
					for (size_t q = 0; q < out->n_vgpus; q++)
						uses += out->vgpus[q].vf == vf;
					if (n > 0 && (vf->index >= 0 ? uses == 0 : uses < n))
						pick = vf;
				}
			}
		}
		if (!pick)
			return vgpu_set_error(
				h, -EBUSY,
				"no free VF on NUMA node %d can take '%s' as vGPU %zu of "
				"this VM",
				best->numa_node, req->profiles[p], p + 1);
		out->vgpus[out->n_vgpus].vf = pick;
		out->vgpus[out->n_vgpus++].type = ty;
		if (req->n_profiles > 1 && (ty->info.series == 'A' || ty->info.series == 'B'))
			add_warning(
				out,
				"NVIDIA supports several vGPUs in one VM only for C- and Q-series "
				"profiles; '%s' is not one",
				ty->info.profile);
		if (req->n_profiles > 1 && ty->info.backing == VGPU_BACKING_TIME_SLICED &&
		    ty->max_instances > 1 && p > 0 && out->vgpus[0].vf->gpu == pick->gpu)
			add_warning(
				out,
				"'%s': several time-sliced vGPUs of one GPU in one VM need vGPU "
				"software 16 or later",
				ty->info.profile);
	}

	r = vgpu_plan_cpus(t, best->numa_node, &req->exclude, req->vcpus, out, err, sizeof(err));
	if (r < 0)
		return vgpu_set_error(h, r, "%s", err);
	/* memory is bound strictly to the node: more than it has can never start */
	if (!node_holds_memory(t, best->numa_node, req->memory_kib))
		return vgpu_set_error(h, -ENOSPC,
				      "NUMA node %d cannot hold %" PRIu64
				      " MiB of guest memory: it has "
				      "%" PRIu64 " MiB in all",
				      best->numa_node, req->memory_kib / 1024,
				      vgpu_topology_node(t, best->numa_node)->mem_total_kib / 1024);
	snprintf(out->reason, sizeof(out->reason),
		 "%s is free and offers %s now; GPU %s (%u of %zu vGPU parents in use) is on NUMA "
		 "node %d%s",
		 out->vgpus[0].vf->addr, out->vgpus[0].type->info.profile, best->addr,
		 gpu_used(best), best->n_vfs, best->numa_node,
		 want_vf   ? ", as asked with --vf" :
		 want_gpu  ? ", as asked with --gpu" :
		 best_fits ? " which has room for the VM's vCPUs and memory" :
			     "");
	return 0;
}

int vgpu_plan_make(struct vgpu_host *h, const struct vgpu_request *req, struct vgpu_plan *out)
{
	struct vgpu_plan *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return vgpu_set_error(h, -ENOMEM, "out of memory");
	/* *out is written only on success */
	r = plan_make(h, req, p);
	if (r == 0)
		*out = *p;
	free(p);
	return r;
}
