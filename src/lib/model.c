// SPDX-License-Identifier: LGPL-2.1-or-later
/* The host model: builders, look-ups and freeing (no I/O). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"

struct vgpu_model *vgpu_model_new(void)
{
	return vgpu_xcalloc(1, sizeof(struct vgpu_model));
}

static void gpu_clear(struct vgpu_gpu *g)
{
	free(g->model);
	free(g->driver);
	for (size_t i = 0; i < g->n_parents; i++) {
		vgpu_strv_clear(&g->parents[i].mdevs);
		free(g->parents[i].types);
	}
	free(g->parents);
	for (size_t i = 0; i < g->n_types; i++) {
		free(g->types[i]->name);
		free(g->types[i]->description);
		free(g->types[i]->device_api);
		free(g->types[i]->source);
		free(g->types[i]);
	}
	free(g->types);
	free(g->gis);
}

void vgpu_topology_clear(struct vgpu_topology *t)
{
	free(t->nodes);
	free(t->core_of);
	memset(t, 0, sizeof(*t));
}

void vgpu_model_free(struct vgpu_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_gpus; i++)
		gpu_clear(&m->gpus[i]);
	free(m->gpus);
	vgpu_topology_clear(&m->topo);
	free(m);
}

struct vgpu_gpu *vgpu_model_add_gpu(struct vgpu_model *m, const char *addr, uint16_t device_id)
{
	struct vgpu_gpu *g;

	m->gpus = vgpu_xreallocarray(m->gpus, m->n_gpus + 1, sizeof(*m->gpus));
	/* parents point at their GPU: the array moved */
	for (size_t i = 0; i < m->n_gpus; i++)
		for (size_t j = 0; j < m->gpus[i].n_parents; j++)
			m->gpus[i].parents[j].gpu = &m->gpus[i];
	g = &m->gpus[m->n_gpus++];
	memset(g, 0, sizeof(*g));
	snprintf(g->addr, sizeof(g->addr), "%s", addr);
	g->vendor_id = VGPU_PCI_VENDOR_NVIDIA;
	g->device_id = device_id;
	g->numa_node = -1;
	g->iommu_group = -1;
	g->sriov_total_vfs = -1;
	g->sriov_num_vfs = -1;
	g->minor = -1;
	g->mem_node = -1;
	g->mig_instances = -1;
	g->mig_current = g->mig_pending = g->hetero = VGPU_UNKNOWN;
	g->module_id = -1;
	return g;
}

struct vgpu_parent *vgpu_gpu_add_parent(struct vgpu_gpu *g, const char *addr, int index)
{
	struct vgpu_parent *p;

	g->parents = vgpu_xreallocarray(g->parents, g->n_parents + 1, sizeof(*g->parents));
	p = &g->parents[g->n_parents++];
	memset(p, 0, sizeof(*p));
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
	p->gpu = g;
	p->index = index;
	p->numa_node = g->numa_node;
	p->iommu_group = -1;
	p->gi_id = -1;
	return p;
}

/* Binary search in the sorted catalogue; *pos gets the insertion point. */
static struct vgpu_type *catalog_find(const struct vgpu_gpu *g, unsigned id, size_t *pos)
{
	size_t lo = 0, hi = g->n_types;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->types[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return lo < g->n_types && g->types[lo]->id == id ? g->types[lo] : NULL;
}

struct vgpu_type *vgpu_gpu_add_type(struct vgpu_gpu *g, unsigned id, const char *name)
{
	struct vgpu_type *t;
	size_t pos;

	t = catalog_find(g, id, &pos);
	if (t)
		return t;
	/* the capacity doubles: n_types is the capacity exactly when it is a power of two */
	if (!(g->n_types & (g->n_types - 1)))
		g->types = vgpu_xreallocarray(g->types, g->n_types ? g->n_types * 2 : 1,
					      sizeof(*g->types));
	t = vgpu_xcalloc(1, sizeof(*t));
	memmove(&g->types[pos + 1], &g->types[pos], (g->n_types - pos) * sizeof(*g->types));
	g->types[pos] = t;
	g->n_types++;
	t->id = id;
	t->name = vgpu_xstrdup(name);
	t->max_instances = -1;
	t->max_mixed = -1;
	t->per_gi = -1;
	vgpu_type_parse(t->name, &t->info);
	return t;
}

static struct vgpu_type *type_new(unsigned id, const char *name)
{
	struct vgpu_type *t = vgpu_xcalloc(1, sizeof(*t));

	t->id = id;
	t->name = vgpu_xstrdup(name);
	t->max_instances = -1;
	t->max_mixed = -1;
	t->per_gi = -1;
	vgpu_type_parse(t->name, &t->info);
	return t;
}

/* Entries of a list by id, then by their place in it (the first of an id wins). */
struct by_id {
	unsigned id;
	size_t at;
};

static int cmp_by_id(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

void vgpu_gpu_add_types(struct vgpu_gpu *g, const unsigned *ids, char *const *names, size_t n,
			struct vgpu_type **added)
{
	struct by_id *order = vgpu_xcalloc(n ? n : 1, sizeof(*order));
	struct vgpu_type **merged;
	size_t k = 0, nf = 0, i = 0, j = 0, m = 0, cap = 1;

	for (size_t x = 0; x < n; x++) {
		added[x] = NULL;
		if (!catalog_find(g, ids[x], NULL))
			order[k++] = (struct by_id){ ids[x], x };
	}
	qsort(order, k, sizeof(*order), cmp_by_id);
	for (size_t x = 0; x < k; x++)
		if (!nf || order[nf - 1].id != order[x].id)
			order[nf++] = order[x];
	/* one merge of two sorted lists: linear in the catalogue and the list */
	/* capacity: the power of two vgpu_gpu_add_type() assumes */
	while (cap < g->n_types + nf)
		cap *= 2;
	merged = vgpu_xcalloc(cap, sizeof(*merged));
	while (i < g->n_types || j < nf) {
		if (j == nf || (i < g->n_types && g->types[i]->id < order[j].id)) {
			merged[m++] = g->types[i++];
			continue;
		}
		merged[m] = added[order[j].at] = type_new(order[j].id, names[order[j].at]);
		m++;
		j++;
	}
	free(order);
	free(g->types);
	g->types = merged;
	g->n_types = m;
}

void vgpu_parent_add_type(struct vgpu_parent *p, const struct vgpu_type *t, long available)
{
	if (!(p->n_types & (p->n_types - 1)))
		p->types = vgpu_xreallocarray(p->types, p->n_types ? p->n_types * 2 : 1,
					      sizeof(*p->types));
	p->types[p->n_types].type = t;
	p->types[p->n_types++].available = available;
}

void vgpu_model_set_topology(struct vgpu_model *m, struct vgpu_topology *t)
{
	vgpu_topology_clear(&m->topo);
	m->topo = *t;
	m->has_topology = true;
	memset(t, 0, sizeof(*t));
}

const struct vgpu_gpu *vgpu_model_find_gpu(const struct vgpu_model *m, const char *bdf)
{
	char addr[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(bdf, addr) < 0)
		return NULL;
	for (size_t i = 0; i < m->n_gpus; i++)
		if (strcmp(m->gpus[i].addr, addr) == 0)
			return &m->gpus[i];
	return NULL;
}

int vgpu_model_gpu_index(const struct vgpu_model *m, const struct vgpu_gpu *g)
{
	int index = 0;

	for (size_t i = 0; i < m->n_gpus; i++) {
		if (m->gpus[i].vendor_id != VGPU_PCI_VENDOR_NVIDIA)
			continue;
		if (&m->gpus[i] == g)
			return index;
		index++;
	}
	return -1;
}

const struct vgpu_gpu *vgpu_model_find_gpu_arg(const struct vgpu_model *m, const char *arg)
{
	long want;

	/* digits only: "0" or "12" (a BDF always has a ':') */
	if (*arg && strspn(arg, "0123456789") == strlen(arg) && vgpu_parse_long(arg, &want) == 0) {
		for (size_t i = 0; i < m->n_gpus; i++)
			if (vgpu_model_gpu_index(m, &m->gpus[i]) == want)
				return &m->gpus[i];
		return NULL;
	}
	return vgpu_model_find_gpu(m, arg);
}

const struct vgpu_parent *vgpu_model_find_parent(const struct vgpu_model *m, const char *bdf)
{
	char addr[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(bdf, addr) < 0)
		return NULL;
	for (size_t i = 0; i < m->n_gpus; i++)
		for (size_t j = 0; j < m->gpus[i].n_parents; j++)
			if (strcmp(m->gpus[i].parents[j].addr, addr) == 0)
				return &m->gpus[i].parents[j];
	return NULL;
}

bool vgpu_model_reserve(struct vgpu_model *m, const char *bdf, unsigned type_id)
{
	struct vgpu_parent *p = (struct vgpu_parent *)vgpu_model_find_parent(m, bdf);

	if (!p)
		return false;
	p->n_reserved++;
	p->reserved_type = type_id;
	return true;
}

bool vgpu_model_claim(struct vgpu_model *m, const char *bdf)
{
	struct vgpu_parent *p = (struct vgpu_parent *)vgpu_model_find_parent(m, bdf);

	if (!p)
		return false;
	p->n_claimed++;
	return true;
}

const struct vgpu_type *vgpu_gpu_find_type(const struct vgpu_gpu *g, unsigned id)
{
	return catalog_find(g, id, NULL);
}

const struct vgpu_type *vgpu_model_find_type(const struct vgpu_model *m, const struct vgpu_gpu *g,
					     unsigned id)
{
	const struct vgpu_type *t = catalog_find(g, id, NULL);

	for (size_t i = 0; !t && i < m->n_gpus; i++)
		if (m->gpus[i].device_id == g->device_id)
			t = catalog_find(&m->gpus[i], id, NULL);
	return t;
}

const char *vgpu_parent_state_str(const struct vgpu_parent *p)
{
	if (p->state_unknown)
		return "unknown";
	if (p->in_use)
		return "in-use";
	return p->n_reserved ? "reserved" : "free";
}

bool vgpu_type_matches(const struct vgpu_type *t, const char *spec)
{
	return vgpu_type_spec_names(spec, t->id, t->name ? t->info.profile : NULL, t->name);
}

const struct vgpu_type *vgpu_gpu_match_type(const struct vgpu_gpu *g, const char *spec)
{
	for (size_t k = 0; k < g->n_types; k++)
		if (vgpu_type_matches(g->types[k], spec))
			return g->types[k];
	return NULL;
}

const struct vgpu_node *vgpu_topology_node(const struct vgpu_topology *t, int id)
{
	for (size_t i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}

int vgpu_topology_next_core(const struct vgpu_topology *t, const struct vgpu_cpuset *within,
			    int from)
{
	for (int c = vgpu_cpuset_next(within, (unsigned)from); c >= 0 && (unsigned)c < t->n_cpus;
	     c = vgpu_cpuset_next(within, (unsigned)c + 1))
		if (t->core_of[c] == c)
			return c;
	return -1;
}

void vgpu_topology_core_cpus(const struct vgpu_topology *t, int core, struct vgpu_cpuset *out)
{
	vgpu_cpuset_zero(out);
	for (unsigned s = (unsigned)core; s < t->n_cpus; s++)
		if (t->core_of[s] == core)
			vgpu_cpuset_set(out, s);
}

void vgpu_gpu_available(const struct vgpu_gpu *g, long *out)
{
	for (size_t k = 0; k < g->n_types; k++)
		out[k] = 0;
	for (size_t j = 0; j < g->n_parents; j++)
		for (size_t m = 0; m < g->parents[j].n_types; m++) {
			const struct vgpu_parent_type *pt = &g->parents[j].types[m];
			size_t pos;

			if (pt->available > 0 && catalog_find(g, pt->type->id, &pos) == pt->type)
				out[pos] += pt->available;
		}
}

struct vgpu_gi *vgpu_gpu_find_gi(const struct vgpu_gpu *g, int id)
{
	for (size_t i = 0; i < g->n_gis; i++)
		if (g->gis[i].id == id)
			return &g->gis[i];
	return NULL;
}

struct vgpu_gi *vgpu_gpu_add_gi(struct vgpu_gpu *g, int id, const struct vgpu_mig_profile *profile,
				int start)
{
	struct vgpu_gi *gi = vgpu_gpu_find_gi(g, id);
	size_t pos = 0;

	if (!gi) {
		while (pos < g->n_gis && g->gis[pos].id < id)
			pos++;
		g->gis = vgpu_xreallocarray(g->gis, g->n_gis + 1, sizeof(*g->gis));
		memmove(&g->gis[pos + 1], &g->gis[pos], (g->n_gis - pos) * sizeof(*g->gis));
		g->n_gis++;
		gi = &g->gis[pos];
		*gi = (struct vgpu_gi){ .id = id, .start = -1 };
	}
	if (profile)
		gi->profile = profile;
	if (start >= 0)
		gi->start = start;
	return gi;
}

size_t vgpu_gpu_type_index(const struct vgpu_gpu *g, unsigned id)
{
	size_t pos;

	return catalog_find(g, id, &pos) ? pos : g->n_types;
}
