// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpu_plan_make() on a host generated in memory from the input bytes: GPUs
 * with real NVIDIA type names, VF or PF parents offering types with some
 * availability, parents in use, a NUMA topology of 1-4 nodes and up to 64
 * CPUs with thread siblings, and a request of 1-4 profiles.  A plan that
 * comes out never exceeds what the host can give; a refusal says why.
 */
#include <errno.h>

#include "fuzz-common.h"
#include "capacity.h"
#include "plan.h"

#define MAX_INPUT 1024
#define MAX_GPUS 4
#define MAX_NODES 4
#define MAX_CPUS 64

static const struct {
	const char *name;
	uint16_t device;
} type_table[] = {
	{ "NVIDIA A30-6C", 0x20b7 },   { "NVIDIA A30-24C", 0x20b7 },
	{ "NVIDIA A30-1-6C", 0x20b7 }, { "NVIDIA A30-2-12C", 0x20b7 },
	{ "NVIDIA A30-12C", 0x20b7 },  { "GRID T4-16Q", 0x1eb8 },
	{ "GRID T4-8Q", 0x1eb8 },      { "GRID T4-4Q", 0x1eb8 },
	{ "NVIDIA L40S-48Q", 0x26b9 }, { "NVIDIA L40S-24Q", 0x26b9 },
	{ "NVIDIA L40S-12A", 0x26b9 }, { "NVIDIA A30-4-24C", 0x20b7 },
};
#define N_TYPES (sizeof(type_table) / sizeof(type_table[0]))
#define TYPE_ID(i) (100u + (unsigned)(i))

struct rd {
	const uint8_t *p;
	size_t n;
};

/* One input byte modulo @mod (0 once the input is used up). */
static unsigned take(struct rd *r, unsigned mod)
{
	unsigned v;

	if (!r->n)
		return 0;
	v = *r->p++;
	r->n--;
	return mod ? v % mod : v;
}

struct host {
	struct vgpu_model *m;
	int node_ids[MAX_NODES];
	unsigned n_nodes;
	char gpu_addrs[MAX_GPUS][VGPU_BDF_LEN];
	size_t n_gpus;
};

static void gen_topology(struct rd *r, struct host *h)
{
	struct vgpu_topology t = { 0 };
	unsigned n_cpus = 1 + take(r, MAX_CPUS), step = 1 + take(r, 2), max_online = 0;
	int node_of[MAX_CPUS], last_core = -1;
	bool online[MAX_CPUS];

	h->n_nodes = 1 + take(r, MAX_NODES);
	t.n_nodes = h->n_nodes;
	t.nodes = calloc(t.n_nodes, sizeof(*t.nodes));
	if (!t.nodes)
		abort();
	for (unsigned i = 0; i < h->n_nodes; i++) {
		h->node_ids[i] = (int)(i * step);
		t.nodes[i].id = h->node_ids[i];
		t.nodes[i].mem_total_kib = (uint64_t)take(r, 4) * 16 * 1024 * 1024;
		t.nodes[i].hugepages_1g_total = (long)take(r, 8) - 1;
		t.nodes[i].hugepages_1g_free = t.nodes[i].hugepages_1g_total;
	}
	for (unsigned c = 0; c < n_cpus; c++) {
		unsigned b = take(r, 0);

		online[c] = b % 8 != 7;
		node_of[c] = (int)(b / 8 % h->n_nodes);
		if (online[c])
			max_online = c + 1;
	}
	t.n_cpus = max_online;
	t.core_of = malloc((max_online ? max_online : 1) * sizeof(*t.core_of));
	if (!t.core_of)
		abort();
	for (unsigned c = 0; c < max_online; c++) {
		if (!online[c]) {
			t.core_of[c] = -1;
			continue;
		}
		vgpu_cpuset_set(&t.online, c);
		vgpu_cpuset_set(&t.nodes[node_of[c]].cpus, c);
		/* a sibling of the previous online CPU's core, or a core of its own */
		if (last_core >= 0 && take(r, 3) == 0)
			t.core_of[c] = last_core;
		else
			t.core_of[c] = last_core = (int)c;
	}
	vgpu_model_set_topology(h->m, &t);
}

static void gen_gpu(struct rd *r, struct host *h, size_t gi)
{
	struct vgpu_gpu *g;
	unsigned model = take(r, 3), n_types = 1 + take(r, 5), nn = take(r, h->n_nodes + 2);
	uint16_t dev = model == 0 ? 0x20b7 : model == 1 ? 0x1eb8 : 0x26b9;
	const struct vgpu_type *cat[N_TYPES];
	size_t n_cat = 0;
	bool sriov = take(r, 2);
	unsigned n_parents = sriov ? 1 + take(r, 4) : 1;
	enum vgpu_iface iface = sriov && take(r, 2) ? VGPU_IFACE_VENDOR_VFIO : VGPU_IFACE_MDEV;

	snprintf(h->gpu_addrs[gi], VGPU_BDF_LEN, "0000:%02x:00.0", (unsigned)(0x10 * (gi + 1)));
	g = vgpu_model_add_gpu(h->m, h->gpu_addrs[gi], dev);
	g->numa_node = nn < h->n_nodes ? h->node_ids[nn] : nn == h->n_nodes ? -1 : 9;
	g->iface = iface;
	g->sriov_total_vfs = sriov ? 4 : -1;
	g->sriov_num_vfs = sriov ? (int)n_parents : -1;
	for (unsigned k = 0; k < n_types; k++) {
		/* mostly the model's own types, now and then another model's */
		unsigned i = take(r, N_TYPES);
		struct vgpu_type *t;

		if ((type_table[i].device != dev && take(r, 4)) ||
		    vgpu_gpu_find_type(g, TYPE_ID(i)))
			continue;
		t = vgpu_gpu_add_type(g, TYPE_ID(i), type_table[i].name);
		t->max_instances = (long)take(r, 5) - 1;
		cat[n_cat++] = t;
	}
	for (unsigned j = 0; j < n_parents; j++) {
		char addr[VGPU_BDF_LEN];
		struct vgpu_parent *p;
		unsigned state = take(r, 8);

		if (sriov)
			snprintf(addr, sizeof(addr), "0000:%02x:00.%u", (unsigned)(0x10 * (gi + 1)),
				 4 + j);
		else
			snprintf(addr, sizeof(addr), "%s", h->gpu_addrs[gi]);
		p = vgpu_gpu_add_parent(g, addr, sriov ? (int)j : -1);
		p->iface = iface;
		for (size_t k = 0; k < n_cat; k++)
			if (take(r, 4))
				vgpu_parent_add_type(p, cat[k], (long)take(r, 4) - 1);
		if (state == 0 || state == 1) {
			/* in use: with a type of the catalogue, an unknown one or none */
			unsigned pick = take(r, (unsigned)n_cat + 2);

			p->in_use = true;
			p->current_type = pick < n_cat ? cat[pick]->id : pick == n_cat ? 999 : 0;
			if (iface == VGPU_IFACE_MDEV) {
				unsigned n_mdevs = 1 + (sriov ? 0 : take(r, 3));

				for (unsigned q = 0; q < n_mdevs; q++)
					vgpu_strv_push(
						&p->mdevs,
						vgpu_asprintf("00000000-0000-4000-8000-%012x",
							      (unsigned)(gi * 64 + j * 8 + q)));
			}
		} else if (state == 2) {
			p->state_unknown = true;
		}
	}
}

static const char *spec_for(struct rd *r, char buf[32])
{
	unsigned i = take(r, N_TYPES + 1), form = take(r, 4);
	const char *name, *sp;

	if (i == N_TYPES)
		return "NVIDIA B200-180C"; /* known nowhere */
	name = type_table[i].name;
	sp = strrchr(name, ' ');
	switch (form) {
	case 0:
		return sp + 1;
	case 1:
		return name;
	case 2:
		snprintf(buf, 32, "nvidia-%u", TYPE_ID(i));
		return buf;
	default:
		snprintf(buf, 32, "%u", TYPE_ID(i));
		return buf;
	}
}

/* What a GPU holds: as the driver would count it, from the model itself. */
struct load {
	unsigned fb, fb_total, ts_type, n_ts_types;
	bool mig;
};

static void load_add(struct load *l, const struct vgpu_type *t, unsigned n)
{
	l->fb += t->info.fb_mib * n;
	if (t->info.backing == VGPU_BACKING_TIME_SLICED && l->ts_type != t->id) {
		l->n_ts_types++;
		l->ts_type = t->id;
	}
	if (t->info.backing == VGPU_BACKING_MIG)
		l->mig = true;
}

static bool load_ok(const struct load *l)
{
	return l->n_ts_types <= 1 && !(l->n_ts_types && l->mig) &&
	       (!l->fb_total || l->fb <= l->fb_total);
}

static void existing_load(const struct vgpu_model *m, const struct vgpu_gpu *g, struct load *l)
{
	memset(l, 0, sizeof(*l));
	/*
	 * The GPU's framebuffer as the capacity model knows it (NVML, or a
	 * whole type table; 0 unknown): a plan never goes past what is known.
	 * Not the largest type listed: a GPU in use lists only what still fits.
	 */
	l->fb_total = (unsigned)vgpu_gpu_framebuffer_mib(m, g);
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		const struct vgpu_type *t;

		if (!p->in_use || !p->current_type)
			continue;
		t = vgpu_model_find_type(m, g, p->current_type);
		if (t)
			load_add(l, t, p->mdevs.n ? (unsigned)p->mdevs.n : 1);
	}
}

/* VGPU_FUZZ_DUMP=1: print the generated host, request and plan (to read a finding). */
static void dump(const struct host *h, const struct vgpu_request *req, const struct vgpu_plan *plan)
{
	const struct vgpu_model *m = h->m;
	static char list[VGPU_CPULIST_LEN];

	for (size_t i = 0; i < m->topo.n_nodes; i++)
		fprintf(stderr, "node %d cpus %s mem %llu KiB\n", m->topo.nodes[i].id,
			vgpu_cpulist_format(&m->topo.nodes[i].cpus, list, sizeof(list)),
			(unsigned long long)m->topo.nodes[i].mem_total_kib);
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		fprintf(stderr, "gpu %s dev %04x node %d types:", g->addr, g->device_id,
			g->numa_node);
		for (size_t k = 0; k < g->n_types; k++)
			fprintf(stderr, " %u=%s", g->types[k]->id, g->types[k]->name);
		fputc('\n', stderr);
		for (size_t j = 0; j < g->n_parents; j++) {
			const struct vgpu_parent *p = &g->parents[j];

			fprintf(stderr,
				"  parent %s index %d %s%s current %u mdevs %zu offers:", p->addr,
				p->index, p->in_use ? "in-use" : "free",
				p->state_unknown ? " unknown" : "", p->current_type, p->mdevs.n);
			for (size_t k = 0; k < p->n_types; k++)
				fprintf(stderr, " %u(%ld)", p->types[k].type->id,
					p->types[k].available);
			fputc('\n', stderr);
		}
	}
	fprintf(stderr, "request: vcpus %u gpu %s vf %s profiles:", req->vcpus,
		req->gpu ? req->gpu : "-", req->vf ? req->vf : "-");
	for (size_t i = 0; i < req->n_profiles; i++)
		fprintf(stderr, " '%s'", req->profiles[i]);
	fputc('\n', stderr);
	if (plan)
		for (size_t i = 0; i < plan->n_vgpus; i++)
			fprintf(stderr, "plan: vGPU %zu type %u on %s (gpu %s)\n", i + 1,
				plan->vgpus[i].type_id, plan->vgpus[i].parent, plan->vgpus[i].gpu);
}

static void check_plan(const struct host *h, const struct vgpu_request *req,
		       const struct vgpu_plan *plan)
{
	const struct vgpu_model *m = h->m;
	const struct vgpu_node *node = vgpu_topology_node(&m->topo, plan->node);
	struct vgpu_cpuset seen;
	struct load loads[MAX_GPUS];
	bool touched[MAX_GPUS] = { false }, was_ok[MAX_GPUS];

	FUZZ_ASSERT(node != NULL, "plan on node %d, not in the topology", plan->node);
	FUZZ_ASSERT(plan->vcpus == req->vcpus, "%u vCPUs planned, %u asked", plan->vcpus,
		    req->vcpus);
	/* whole guest cores: an odd count leaves spare sibling slots, fewer than one core's */
	FUZZ_ASSERT(plan->threads >= 1 && plan->cores * plan->threads >= plan->vcpus &&
			    plan->cores * plan->threads - plan->vcpus < plan->threads,
		    "%u cores x %u threads for %u", plan->cores, plan->threads, plan->vcpus);
	vgpu_cpuset_zero(&seen);
	/* every slot, spare siblings too, is pinned (domxml-build.c pins them all) */
	for (unsigned i = 0; i < plan->cores * plan->threads; i++) {
		unsigned c = plan->pins[i];

		FUZZ_ASSERT(c < VGPU_MAX_CPUS && !vgpu_cpuset_has(&seen, c), "CPU %u pinned twice",
			    c);
		vgpu_cpuset_set(&seen, c);
		FUZZ_ASSERT(vgpu_cpuset_has(&node->cpus, c), "CPU %u not on node %d", c,
			    plan->node);
		FUZZ_ASSERT(!vgpu_cpuset_has(&req->exclude, c), "excluded CPU %u pinned", c);
		FUZZ_ASSERT(vgpu_cpuset_has(&plan->cpus, c), "CPU %u pinned outside the VM's set",
			    c);
	}
	FUZZ_ASSERT(vgpu_cpuset_subset(&plan->cpus, &node->cpus), "VM CPUs leave node %d",
		    plan->node);
	FUZZ_ASSERT(!vgpu_cpuset_intersects(&plan->cpus, &req->exclude), "VM CPUs excluded");

	FUZZ_ASSERT(plan->n_vgpus == req->n_profiles, "%zu vGPUs planned, %zu asked", plan->n_vgpus,
		    req->n_profiles);
	for (size_t gi = 0; gi < m->n_gpus; gi++) {
		existing_load(m, &m->gpus[gi], &loads[gi]);
		was_ok[gi] = load_ok(&loads[gi]);
	}
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_choice *c = &plan->vgpus[i];
		const struct vgpu_parent *p = vgpu_model_find_parent(m, c->parent);
		const struct vgpu_parent_type *pt = NULL;
		size_t uses = 0, gi;

		FUZZ_ASSERT(p != NULL, "vGPU %zu on unknown parent %s", i, c->parent);
		FUZZ_ASSERT(strcmp(p->gpu->addr, c->gpu) == 0, "parent %s is not on GPU %s",
			    c->parent, c->gpu);
		FUZZ_ASSERT(p->gpu->numa_node == plan->node, "GPU %s on node %d, VM on node %d",
			    c->gpu, p->gpu->numa_node, plan->node);
		if (req->gpu)
			FUZZ_ASSERT(strcmp(c->gpu, req->gpu) == 0, "vGPU %zu on %s, --gpu %s", i,
				    c->gpu, req->gpu);
		if (req->vf && i == 0)
			FUZZ_ASSERT(strcmp(c->parent, req->vf) == 0, "vGPU 1 on %s, --vf %s",
				    c->parent, req->vf);
		FUZZ_ASSERT(!p->state_unknown, "parent %s in an unknown state chosen", p->addr);
		FUZZ_ASSERT(p->index < 0 || !p->in_use, "VF %s in use chosen", p->addr);
		for (size_t k = 0; k < p->n_types; k++)
			if (p->types[k].type->id == c->type_id && p->types[k].available > 0)
				pt = &p->types[k];
		FUZZ_ASSERT(pt != NULL, "parent %s does not offer type %u", p->addr, c->type_id);
		FUZZ_ASSERT(vgpu_type_matches(pt->type, req->profiles[i]), "type %u for spec '%s'",
			    c->type_id, req->profiles[i]);
		FUZZ_ASSERT(c->iface == p->iface, "interface of %s", p->addr);
		for (size_t q = 0; q < plan->n_vgpus; q++)
			uses += strcmp(plan->vgpus[q].parent, c->parent) == 0;
		if (p->index >= 0)
			FUZZ_ASSERT(uses == 1, "VF %s used %zu times", p->addr, uses);
		else
			FUZZ_ASSERT((long)uses <= pt->available, "PF %s used %zu times, offers %ld",
				    p->addr, uses, pt->available);
		gi = (size_t)(p->gpu - m->gpus);
		touched[gi] = true;
		load_add(&loads[gi], pt->type, 1);
	}
	for (size_t gi = 0; gi < m->n_gpus; gi++) {
		if (touched[gi] && was_ok[gi])
			FUZZ_ASSERT(load_ok(&loads[gi]),
				    "GPU %s over capacity: %u of %u MiB, %u time-sliced types%s",
				    m->gpus[gi].addr, loads[gi].fb, loads[gi].fb_total,
				    loads[gi].n_ts_types, loads[gi].mig ? " and MIG" : "");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size };
	struct host h = { 0 };
	struct vgpu_request req = { 0 };
	struct vgpu_ctx ctx;
	struct vgpu_plan *plan = NULL;
	char specs[VGPU_MAX_VGPUS][32], vf[VGPU_BDF_LEN];
	unsigned n_excl;
	int ret;

	if (size > MAX_INPUT)
		return 0;
	vgpu_ctx_init(&ctx, NULL, NULL);
	h.m = vgpu_model_new();
	gen_topology(&r, &h);
	h.n_gpus = 1 + take(&r, MAX_GPUS);
	for (size_t gi = 0; gi < h.n_gpus; gi++)
		gen_gpu(&r, &h, gi);

	req.n_profiles = 1 + take(&r, 4);
	for (size_t i = 0; i < req.n_profiles; i++)
		req.profiles[i] = spec_for(&r, specs[i]);
	req.vcpus = take(&r, 13);
	switch (take(&r, 4)) {
	case 1:
		req.gpu = h.gpu_addrs[take(&r, (unsigned)h.n_gpus)];
		break;
	case 2:
		req.gpu = "0000:ee:00.0";
		break;
	}
	if (take(&r, 4) == 1) {
		const struct vgpu_gpu *g = &h.m->gpus[take(&r, (unsigned)h.n_gpus)];

		snprintf(vf, sizeof(vf), "%s", g->parents[take(&r, (unsigned)g->n_parents)].addr);
		req.vf = vf;
	}
	n_excl = take(&r, 4);
	for (unsigned i = 0; i < n_excl; i++)
		vgpu_cpuset_set(&req.exclude, take(&r, MAX_CPUS));
	req.memory_kib = (uint64_t)take(&r, 4) * 8 * 1024 * 1024;
	req.hugepages = take(&r, 2);

	ret = vgpu_plan_make(&ctx, h.m, &req, &plan);
	if (getenv("VGPU_FUZZ_DUMP"))
		dump(&h, &req, ret == 0 ? plan : NULL);
	if (ret == 0) {
		FUZZ_ASSERT(plan != NULL, "success without a plan");
		FUZZ_ASSERT(plan->reason && *plan->reason, "plan without a reason");
		check_plan(&h, &req, plan);
		vgpu_plan_free(plan);
	} else {
		FUZZ_ASSERT(ret < 0, "ret=%d", ret);
		FUZZ_ASSERT(strcmp(vgpu_ctx_error(&ctx), "unknown error") != 0,
			    "vgpu_plan_make failed (%d) without a message", ret);
	}
	vgpu_ctx_clear(&ctx);
	vgpu_model_free(h.m);
	return 0;
}
