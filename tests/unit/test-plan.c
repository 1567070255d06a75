// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-plan - placement and CPU pinning (src/lib/plan.c).
 *
 * The CPU allocator runs over topologies built in memory (no files): the
 * A30 article's dual-socket host (reference vgpu-host.md section 9: 96 CPUs,
 * node 0 = 0-23,48-71, node 1 = 24-47,72-95, siblings n and n+48), an
 * SMT-off host and a 4-way SMT host.  VF choice runs against the fixture
 * hosts built in memory (test-hosts.h, generated from tests/data/hosts by
 * gen-hosts.py): no files are read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "test-util.h"
#include "test-hosts.h"

#define MAX_TEST_CPUS 128
#define MAX_TEST_NODES 4

/* ---- in-memory topologies ---------------------------------------------------- */

struct fixture {
	struct vgpu_node nodes[MAX_TEST_NODES];
	int core_of[MAX_TEST_CPUS];
	struct vgpu_topology t;
	struct vgpu_plan *plan; /* for vgpu_plan_cpus(); vgpu_plan_make() allocates its own */
	struct vgpu_model *m;
	struct vgpu_ctx ctx;
	struct warnings warn;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->plan = calloc(1, sizeof(*f->plan)))) {
		free(f);
		return -1;
	}
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	vgpu_model_free(f->m);
	vgpu_plan_free(f->plan);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
	free(f);
	return 0;
}

/*
 * A host of @n_cpus CPUs whose thread siblings are c, c + stride, c + 2 * stride...
 * (the numbering Linux gives Intel and AMD hosts), so core_of[c] = c % stride.
 * stride == n_cpus means SMT off.  @lists[i] is node i's cpulist.
 */
static const struct vgpu_topology *make_topo(struct fixture *f, unsigned n_cpus, unsigned stride,
					     const char *const *lists, size_t n_nodes)
{
	assert_true(n_cpus <= MAX_TEST_CPUS);
	assert_true(n_nodes <= MAX_TEST_NODES);
	memset(f->nodes, 0, sizeof(f->nodes));
	memset(&f->t, 0, sizeof(f->t));
	vgpu_cpuset_zero(&f->t.online);
	for (unsigned c = 0; c < n_cpus; c++) {
		f->core_of[c] = (int)(c % stride);
		vgpu_cpuset_set(&f->t.online, c);
	}
	for (size_t i = 0; i < n_nodes; i++) {
		f->nodes[i].id = (int)i;
		parse_cpus(lists[i], &f->nodes[i].cpus);
		f->nodes[i].hugepages_1g_total = -1;
		f->nodes[i].hugepages_1g_free = -1;
	}
	f->t.nodes = f->nodes;
	f->t.n_nodes = n_nodes;
	f->t.core_of = f->core_of;
	f->t.n_cpus = n_cpus;
	return &f->t;
}

/* The A30 article's host: 2 x Xeon Gold 6334Y, 2 x 24 cores x 2 threads. */
static const struct vgpu_topology *a30_topo(struct fixture *f)
{
	static const char *const nodes[] = { "0-23,48-71", "24-47,72-95" };

	return make_topo(f, 96, 48, nodes, ARRAY_SIZE(nodes));
}

static void assert_pins(const struct vgpu_plan *p, const unsigned *want, unsigned n)
{
	assert_int_equal(p->vcpus, n);
	for (unsigned i = 0; i < n; i++)
		if (p->pins[i] != want[i])
			fail_msg("vCPU %u pinned to CPU %u, expected %u", i, p->pins[i], want[i]);
}

/* The plan holds the CPUs @cpus, pins its vCPUs as @pins, and shows cores x threads. */
static void assert_plan(const struct vgpu_plan *p, const char *cpus, const unsigned *pins,
			unsigned n, unsigned cores, unsigned threads)
{
	assert_cpus(&p->cpus, cpus);
	assert_pins(p, pins, n);
	assert_int_equal(p->cores, cores);
	assert_int_equal(p->threads, threads);
}

/* vgpu_plan_cpus() that must succeed. */
static void plan_ok(struct fixture *f, int node, const struct vgpu_cpuset *busy, unsigned vcpus)
{
	int r = vgpu_plan_cpus(&f->ctx, &f->t, node, busy, vcpus, f->plan);

	if (r != 0)
		fail_msg("vgpu_plan_cpus(node %d, %u vCPUs) = %d: %s", node, vcpus, r,
			 vgpu_ctx_error(&f->ctx));
}

/* vgpu_plan_cpus() that must fail with @want_r and the message @want_err. */
static void plan_fails(struct fixture *f, int node, const struct vgpu_cpuset *busy, unsigned vcpus,
		       int want_r, const char *want_err)
{
	assert_int_equal(vgpu_plan_cpus(&f->ctx, &f->t, node, busy, vcpus, f->plan), want_r);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want_err);
}

/*
 * Fill the plan with a pattern so a failed call can be seen not to touch it
 * (its heap pointers stay NULL: a later success frees the old pins).
 */
static void poison_plan(struct vgpu_plan *p)
{
	free(p->pins);
	memset(p, 0xa5, sizeof(*p));
	p->pins = NULL;
	p->reason = NULL;
	p->n_vgpus = 0;
}

static void assert_plan_poisoned(const struct vgpu_plan *p)
{
	struct vgpu_plan *want = calloc(1, sizeof(*want));

	assert_non_null(want);
	poison_plan(want);
	assert_memory_equal(p, want, sizeof(*p));
	free(want);
}

/* ---- vgpu_plan_cpus: the A30 article layout ------------------------------------ */

/* Four 12-vCPU VMs fill node 0 exactly as the article lays them out. */
static void test_a30_four_vms(void **state)
{
	static const char *const want[4] = {
		"0-5,48-53",
		"6-11,54-59",
		"12-17,60-65",
		"18-23,66-71",
	};
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	a30_topo(f);
	vgpu_cpuset_zero(&busy);
	for (unsigned vm = 0; vm < 4; vm++) {
		unsigned pins[12];

		/* vCPU 2i on core i's first thread, 2i+1 on its sibling (i + 48) */
		for (unsigned i = 0; i < 6; i++) {
			pins[2 * i] = vm * 6 + i;
			pins[2 * i + 1] = vm * 6 + i + 48;
		}
		poison_plan(f->plan);
		plan_ok(f, 0, &busy, 12);
		assert_plan(f->plan, want[vm], pins, 12, 6, 2);
		assert_int_equal(f->plan->node, 0);
		vgpu_cpuset_or(&busy, &f->plan->cpus);
	}
	/* VM1 spelled out, as in reference section 7.1 */
	{
		static const unsigned vm1[12] = { 0, 48, 1, 49, 2, 50, 3, 51, 4, 52, 5, 53 };
		struct vgpu_cpuset none;

		vgpu_cpuset_zero(&none);
		plan_ok(f, 0, &none, 12);
		assert_pins(f->plan, vm1, 12);
	}

	/* node 0 is full: a fifth VM fails, says what is free and what was asked */
	assert_cpus(&busy, "0-23,48-71");
	poison_plan(f->plan);
	plan_fails(f, 0, &busy, 12, -ENOSPC,
		   "NUMA node 0 cannot hold 12 vCPUs: 0 CPUs on whole free cores (none) are left "
		   "after exclusions");
	assert_plan_poisoned(f->plan);
}

/* Not enough room left: the message lists the free CPUs. */
static void test_a30_partly_full(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	a30_topo(f);
	parse_cpus("0-17,48-65", &busy);
	poison_plan(f->plan);
	plan_fails(f, 0, &busy, 14, -ENOSPC,
		   "NUMA node 0 cannot hold 14 vCPUs: 12 CPUs on whole free cores (18-23,66-71) "
		   "are left after exclusions");
	assert_plan_poisoned(f->plan);
	/* exactly what is left still fits */
	plan_ok(f, 0, &busy, 12);
	assert_cpus(&f->plan->cpus, "18-23,66-71");
}

/* ---- whole cores only -------------------------------------------------------- */

/* CPU 49 taken (by another VM or --exclude-cpus) makes core {1,49} unusable. */
static void test_sibling_busy(void **state)
{
	static const unsigned pins[4] = { 0, 48, 2, 50 };
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	a30_topo(f);
	parse_cpus("49", &busy);
	plan_ok(f, 0, &busy, 4);
	assert_plan(f->plan, "0,2,48,50", pins, 4, 2, 2);
	assert_false(vgpu_cpuset_has(&f->plan->cpus, 1));
}

/* 3 vCPUs on SMT-2: two whole cores reserved, guest sees 3 single-thread cores. */
static void test_odd_vcpus(void **state)
{
	static const unsigned pins3[3] = { 0, 48, 1 };
	static const unsigned pins1[1] = { 2 };
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	a30_topo(f);
	vgpu_cpuset_zero(&busy);
	plan_ok(f, 0, &busy, 3);
	/*
	 * the spare sibling 49 stays with this VM: no core is shared.  vCPUs 0
	 * and 1 are siblings, so the guest sees 2 cores x 2 threads, the 4th
	 * slot (on 49) offline: not 3 single-thread cores
	 */
	assert_plan(f->plan, "0-1,48-49", pins3, 3, 2, 2);
	assert_int_equal(f->plan->pins[3], 49);

	/* the next VM starts on core 2, never on the spare CPU 49 */
	vgpu_cpuset_or(&busy, &f->plan->cpus);
	plan_ok(f, 0, &busy, 1);
	assert_plan(f->plan, "2,50", pins1, 1, 1, 1);
}

/* SMT off: every CPU its own core, threads = 1, nothing reserved beyond the vCPUs. */
static void test_smt_off(void **state)
{
	static const char *const nodes[] = { "0-7", "8-15" };
	static const unsigned pins4[4] = { 8, 9, 10, 11 };
	static const unsigned pins3[3] = { 8, 9, 10 };
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	make_topo(f, 16, 16, nodes, ARRAY_SIZE(nodes));
	vgpu_cpuset_zero(&busy);
	plan_ok(f, 1, &busy, 4);
	assert_plan(f->plan, "8-11", pins4, 4, 4, 1);
	assert_int_equal(f->plan->node, 1);

	plan_ok(f, 1, &busy, 3);
	assert_plan(f->plan, "8-10", pins3, 3, 3, 1);
}

/* 4-way SMT (siblings c, c+8, c+16, c+24): threads = 4, vCPUs 4i..4i+3 on core i. */
static void test_smt4(void **state)
{
	static const char *const nodes[] = { "0-3,8-11,16-19,24-27", "4-7,12-15,20-23,28-31" };
	static const unsigned pins8[8] = { 4, 12, 20, 28, 5, 13, 21, 29 };
	static const unsigned pins4[4] = { 6, 14, 22, 30 };
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	make_topo(f, 32, 8, nodes, ARRAY_SIZE(nodes));
	vgpu_cpuset_zero(&busy);
	plan_ok(f, 1, &busy, 8);
	assert_plan(f->plan, "4-5,12-13,20-21,28-29", pins8, 8, 2, 4);
	assert_int_equal(f->plan->node, 1);

	vgpu_cpuset_or(&busy, &f->plan->cpus);
	plan_ok(f, 1, &busy, 4);
	assert_plan(f->plan, "6,14,22,30", pins4, 4, 1, 4);
}

/* Excluded CPUs (a housekeeping core, a stray CPU) take their whole core out. */
static void test_exclusions(void **state)
{
	static const unsigned pins[12] = { 1, 49, 2, 50, 3, 51, 4, 52, 6, 54, 7, 55 };
	struct fixture *f = *state;
	struct vgpu_cpuset exclude;

	a30_topo(f);
	parse_cpus("0,5,48", &exclude);
	plan_ok(f, 0, &exclude, 12);
	assert_plan(f->plan, "1-4,6-7,49-52,54-55", pins, 12, 6, 2);
	assert_false(vgpu_cpuset_intersects(&f->plan->cpus, &exclude));
}

/* The whole node can be used, one CPU more cannot, and node 1 is never touched. */
static void test_exhaustion_no_spill(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset busy, node1;

	a30_topo(f);
	vgpu_cpuset_zero(&busy);
	plan_ok(f, 0, &busy, 48);
	assert_cpus(&f->plan->cpus, "0-23,48-71");
	assert_int_equal(f->plan->cores, 24);
	assert_int_equal(f->plan->threads, 2);
	for (unsigned i = 0; i < 48; i++)
		if (f->plan->pins[i] >= 24 && f->plan->pins[i] < 48)
			fail_msg("vCPU %u pinned to node 1's CPU %u", i, f->plan->pins[i]);
	assert_int_equal(f->plan->pins[47], 71);

	poison_plan(f->plan);
	plan_fails(f, 0, &busy, 49, -ENOSPC,
		   "NUMA node 0 cannot hold 49 vCPUs: 48 CPUs on whole free cores (0-23,48-71) are "
		   "left after exclusions");
	assert_plan_poisoned(f->plan);

	/* node 1 all taken, node 0 all free: still no room on node 1 */
	parse_cpus("24-47,72-95", &node1);
	plan_fails(f, 1, &node1, 2, -ENOSPC,
		   "NUMA node 1 cannot hold 2 vCPUs: 0 CPUs on whole free cores (none) are left "
		   "after exclusions");
	assert_plan_poisoned(f->plan);
}

/*
 * A core whose siblings straddle two nodes (core_of says {3,7}, node 0 = 0-3,
 * node 1 = 4-7) is used by neither node: that would put a vCPU off the node.
 */
static void test_core_across_nodes(void **state)
{
	static const char *const nodes[] = { "0-3", "4-7" };
	struct fixture *f = *state;
	struct vgpu_cpuset busy, fr;

	make_topo(f, 8, 8, nodes, ARRAY_SIZE(nodes));
	f->core_of[7] = 3;
	vgpu_cpuset_zero(&busy);
	vgpu_node_free_cpus(&f->t, 0, &busy, &fr);
	assert_cpus(&fr, "0-2");
	vgpu_node_free_cpus(&f->t, 1, &busy, &fr);
	assert_cpus(&fr, "4-6");
	plan_ok(f, 0, &busy, 3);
	assert_cpus(&f->plan->cpus, "0-2");
	plan_fails(f, 0, &busy, 4, -ENOSPC,
		   "NUMA node 0 cannot hold 4 vCPUs: 3 CPUs on whole free cores (0-2) are left "
		   "after exclusions");
}

/*
 * One sibling offline (CPU 5 of core {1,5}): core 1 has a single thread while
 * the others have two.  Whatever the plan, the guest topology must tell the
 * truth: the vCPUs of one guest core (threads consecutive vCPUs) sit on one
 * host core, cores x threads is the vCPU count, and the VM holds whole cores.
 */
static void test_offline_sibling(void **state)
{
	static const char *const nodes[] = { "0-4,6-7" };
	struct fixture *f = *state;
	struct vgpu_cpuset busy;

	make_topo(f, 8, 4, nodes, ARRAY_SIZE(nodes));
	vgpu_cpuset_clear(&f->t.online, 5);
	f->core_of[5] = -1;
	vgpu_cpuset_zero(&busy);
	plan_ok(f, 0, &busy, 4);
	assert_int_equal(f->plan->vcpus, 4);
	assert_int_equal(f->plan->cores * f->plan->threads, 4);
	assert_false(vgpu_cpuset_has(&f->plan->cpus, 5));
	for (unsigned i = 0; i < 4; i++) {
		const struct vgpu_plan *p = f->plan;
		unsigned first = i - i % p->threads;
		int want = f->core_of[p->pins[first]], got = f->core_of[p->pins[i]];

		assert_true(vgpu_cpuset_has(&p->cpus, p->pins[i]));
		if (got != want)
			fail_msg("guest core %u (threads=%u): vCPU %u on CPU %u (core %d), "
				 "vCPU %u on CPU %u (core %d)",
				 first / p->threads, p->threads, first, p->pins[first], want, i,
				 p->pins[i], got);
	}
	for (unsigned c = 0; c < 8; c++) {
		if (!vgpu_cpuset_has(&f->plan->cpus, c))
			continue;
		for (unsigned s = 0; s < 8; s++)
			if (f->core_of[s] == f->core_of[c] && !vgpu_cpuset_has(&f->plan->cpus, s))
				fail_msg("CPU %u is the VM's but its sibling %u is not", c, s);
	}
}

/* A call vgpu_plan_cpus() refuses, and its message. */
struct bad_call {
	int node;
	unsigned vcpus;
	const char *err;
};

/* On the A30 host with nothing busy each call fails with @want_r; the plan is untouched. */
static void check_bad_calls(struct fixture *f, const struct bad_call *calls, size_t n, int want_r)
{
	struct vgpu_cpuset busy;

	a30_topo(f);
	vgpu_cpuset_zero(&busy);
	poison_plan(f->plan);
	for (size_t i = 0; i < n; i++)
		plan_fails(f, calls[i].node, &busy, calls[i].vcpus, want_r, calls[i].err);
	assert_plan_poisoned(f->plan);
}

static void test_bad_node(void **state)
{
	static const struct bad_call calls[] = {
		{ 2, 4, "NUMA node 2 does not exist on this host" },
		{ -1, 4, "NUMA node -1 does not exist on this host" },
	};

	check_bad_calls(*state, calls, ARRAY_SIZE(calls), -ENOENT);
}

static void test_bad_vcpus(void **state)
{
	static const struct bad_call calls[] = {
		{ 0, 0, "invalid vCPU count 0" },
		{ 0, VGPU_MAX_CPUS + 1, "invalid vCPU count 8193" },
	};

	check_bad_calls(*state, calls, ARRAY_SIZE(calls), -EINVAL);
}

/* ---- vgpu_node_free_cpus -------------------------------------------------------- */

static void test_node_free_cpus(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset busy, fr;

	a30_topo(f);
	vgpu_cpuset_zero(&busy);
	vgpu_node_free_cpus(&f->t, 0, &busy, &fr);
	assert_cpus(&fr, "0-23,48-71");

	/* 2 and 49 half-busy cores on node 0, 30 on node 1: each loses its whole core */
	parse_cpus("2,30,49", &busy);
	vgpu_node_free_cpus(&f->t, 0, &busy, &fr);
	assert_cpus(&fr, "0,3-23,48,51-71");
	assert_int_equal(vgpu_cpuset_count(&fr), 44);
	vgpu_node_free_cpus(&f->t, 1, &busy, &fr);
	assert_cpus(&fr, "24-29,31-47,72-77,79-95");
	assert_int_equal(vgpu_cpuset_count(&fr), 46);

	/* a node that does not exist has no free CPUs */
	parse_cpus("0-95", &fr);
	vgpu_node_free_cpus(&f->t, 5, &busy, &fr);
	assert_true(vgpu_cpuset_empty(&fr));
}

/* ---- vgpu_type_matches --------------------------------------------------------- */

static void test_type_matches(void **state)
{
	static const char *const yes[] = { "A30-1-6C", "NVIDIA A30-1-6C", "nvidia-689", "689" };
	static const char *const no[] = {
		"nvidia-68",  "A30-6",		"",	   "0", "nvidia-0", "nvidia-690", "690",
		"A30-1-6CME", "NVIDIA A30-1-6", "nvidia-",
	};
	struct vgpu_type t = { .id = 689, .name = "NVIDIA A30-1-6C", .max_instances = 4 };
	struct vgpu_type anon = { .id = 689, .name = NULL, .max_instances = -1 };

	(void)state;
	assert_int_equal(vgpu_type_parse(t.name, &t.info), 0);
	assert_string_equal(t.info.profile, "A30-1-6C");
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (!vgpu_type_matches(&t, yes[i]))
			fail_msg("'%s' does not match type 689 NVIDIA A30-1-6C", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (vgpu_type_matches(&t, no[i]))
			fail_msg("'%s' matches type 689 NVIDIA A30-1-6C", no[i]);

	/* a type whose name could not be read answers to its id only */
	assert_true(vgpu_type_matches(&anon, "689"));
	assert_true(vgpu_type_matches(&anon, "nvidia-689"));
	assert_false(vgpu_type_matches(&anon, "A30-1-6C"));
	assert_false(vgpu_type_matches(&anon, ""));
}

/* ---- vgpu_plan_make on fixture hosts ------------------------------------------- */

/* Fixture host @name, built in memory with its topology. */
static void open_host(struct fixture *f, const char *name)
{
	vgpu_model_free(f->m);
	f->m = th_build(test_hosts, ARRAY_SIZE(test_hosts), name, true);
	if (!f->m)
		fail_msg("no in-memory host '%s'", name);
}

/* The warnings logged so far, '\n'-separated ("" when none). */
static const char *warnings_text(struct fixture *f)
{
	static char buf[2048];

	buf[0] = '\0';
	for (size_t i = 0; i < f->warn.n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? "\n" : "",
			 f->warn.msgs[i]);
	return buf;
}

static struct vgpu_request *new_request(unsigned vcpus, const char *profile)
{
	struct vgpu_request *req = calloc(1, sizeof(*req));

	assert_non_null(req);
	req->vcpus = vcpus;
	req->profiles[0] = profile;
	req->n_profiles = 1;
	vgpu_cpuset_zero(&req->exclude);
	return req;
}

static void make_ok(struct fixture *f, const struct vgpu_request *req)
{
	int r;

	vgpu_plan_free(f->plan);
	f->plan = NULL;
	warnings_free(&f->warn);
	r = vgpu_plan_make(&f->ctx, f->m, req, &f->plan);
	if (r != 0)
		fail_msg("vgpu_plan_make('%s') = %d: %s", req->profiles[0], r,
			 vgpu_ctx_error(&f->ctx));
}

/* vGPU @i of the plan is type @type on the VF (or PF) @vf. */
static void assert_vgpu(const struct vgpu_plan *p, size_t i, const char *vf, unsigned type)
{
	assert_string_equal(p->vgpus[i].parent, vf);
	assert_int_equal(p->vgpus[i].type_id, type);
}

/* vgpu_plan_make() that must fail with @want_r and the message @want_err. */
static void make_fails(struct fixture *f, const struct vgpu_request *req, int want_r,
		       const char *want_err)
{
	struct vgpu_plan *none = NULL;

	assert_int_equal(vgpu_plan_make(&f->ctx, f->m, req, &none), want_r);
	assert_null(none);
	assert_string_equal(vgpu_ctx_error(&f->ctx), want_err);
}

/*
 * Open fixture host @host and plan a @vcpus-vCPU VM with a vGPU of @p0 and, unless
 * @p1 is NULL, one of @p1: the plan must hold that many.  The caller frees the request.
 */
static struct vgpu_request *make_vm_ok(struct fixture *f, const char *host, unsigned vcpus,
				       const char *p0, const char *p1)
{
	struct vgpu_request *req = new_request(vcpus, p0);

	open_host(f, host);
	if (p1) {
		req->profiles[1] = p1;
		req->n_profiles = 2;
	}
	make_ok(f, req);
	assert_int_equal(f->plan->n_vgpus, req->n_profiles);
	return req;
}

/* On the A30 host a 4-vCPU VM with @profile cannot be planned. */
static void check_a30_profile_fails(struct fixture *f, const char *profile, int want_r,
				    const char *want_err)
{
	struct vgpu_request *req = new_request(4, profile);

	open_host(f, "a30-dual-mdev");
	make_fails(f, req, want_r, want_err);
	free(req);
}

static void test_make_a30_time_sliced(void **state)
{
	static const unsigned pins[12] = { 0, 48, 1, 49, 2, 50, 3, 51, 4, 52, 5, 53 };
	struct fixture *f = *state;
	struct vgpu_request *req = make_vm_ok(f, "a30-dual-mdev", 12, "A30-6C", NULL);

	assert_vgpu(f->plan, 0, "0000:3b:00.4", 684);
	assert_string_equal(f->plan->vgpus[0].gpu, "0000:3b:00.0");
	assert_string_equal(f->plan->vgpus[0].profile, "A30-6C");
	assert_int_equal(f->plan->node, 0);
	assert_plan(f->plan, "0-5,48-53", pins, 12, 6, 2);
	assert_string_equal(f->plan->reason,
			    "0000:3b:00.4 is free and offers A30-6C now; GPU 0000:3b:00.0 (0 of 4 "
			    "vGPU parents in use) is on NUMA node 0 which has room for the VM's "
			    "vCPUs and memory");
	assert_string_equal(warnings_text(f), "");
	free(req);
}

/* The MIG-backed profile is only free on GPU af, so the VM goes to node 1. */
static void test_make_a30_mig(void **state)
{
	static const unsigned pins[4] = { 24, 72, 25, 73 };
	struct fixture *f = *state;
	struct vgpu_request *req = make_vm_ok(f, "a30-dual-mdev", 4, "A30-2-12C", NULL);

	assert_string_equal(f->plan->vgpus[0].gpu, "0000:af:00.0");
	assert_vgpu(f->plan, 0, "0000:af:00.4", 690);
	assert_int_equal(f->plan->node, 1);
	assert_cpus(&f->plan->cpus, "24-25,72-73");
	assert_pins(f->plan, pins, 4);
	free(req);
}

/* The GPU's node has no room: fail rather than pin to node 1. */
static void test_make_a30_no_spill(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(12, "A30-6C");

	open_host(f, "a30-dual-mdev");
	parse_cpus("0-23,48-71", &req->exclude);
	make_fails(f, req, -ENOSPC,
		   "NUMA node 0 cannot hold 12 vCPUs: 0 CPUs on whole free cores (none) are left "
		   "after exclusions");
	free(req);
}

static void test_make_unknown_profile(void **state)
{
	check_a30_profile_fails(*state, "A30-5C", -ENOENT,
				"unknown vGPU profile 'A30-5C'; available now: A30-4C, A30-6C, "
				"A30-8C, A30-12C, A30-24C, A30-2-12C");
}

/* Known on the host but not creatable anywhere now. */
static void test_make_not_free(void **state)
{
	check_a30_profile_fails(*state, "A30-1-6C", -EBUSY,
				"no free VF can take 'A30-1-6C' now; available now: A30-4C, "
				"A30-6C, A30-8C, A30-12C, A30-24C, A30-2-12C");
}

static void test_make_no_topology(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(4, "A30-6C");

	f->m = th_build(test_hosts, ARRAY_SIZE(test_hosts), "a30-dual-mdev", false);
	make_fails(f, req, -EINVAL, "host topology has not been read");
	free(req);
}

/* GPU 41 has a VF in use, GPU c1 none: the least-used GPU wins over the lower address. */
static void test_make_l40s_least_used(void **state)
{
	static const unsigned pins[2] = { 0, 32 };
	struct fixture *f = *state;
	struct vgpu_request *req = make_vm_ok(f, "vfio-ts-l40s", 2, "L40S-4Q", NULL);

	assert_string_equal(f->plan->vgpus[0].gpu, "0000:c1:00.0");
	assert_vgpu(f->plan, 0, "0000:c1:00.4", 1149);
	assert_int_equal(f->plan->vgpus[0].iface, VGPU_IFACE_VENDOR_VFIO);
	assert_int_equal(f->plan->node, 0);
	assert_pins(f->plan, pins, 2);
	assert_string_equal(f->plan->reason,
			    "0000:c1:00.4 is free and offers L40S-4Q now; GPU 0000:c1:00.0 (0 of 8 "
			    "vGPU parents in use) is on NUMA node 0 which has room for the VM's "
			    "vCPUs and memory");
	free(req);
}

/* --vf on the VF that already holds L40S-4Q fails; a free sibling is honoured. */
static void test_make_pinned_vf(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(2, "L40S-4Q");

	open_host(f, "vfio-ts-l40s");
	req->vf = "0000:41:00.5";
	make_fails(f, req, -EBUSY, "VF '0000:41:00.5' cannot take 'L40S-4Q' now (it holds a vGPU)");

	req->vf = "41:00.6";
	make_ok(f, req);
	assert_int_equal(f->plan->n_vgpus, 1);
	assert_vgpu(f->plan, 0, "0000:41:00.6", 1149);
	assert_string_equal(f->plan->vgpus[0].gpu, "0000:41:00.0");

	req->vf = "0000:41:07.0";
	make_fails(f, req, -ENOENT, "VF '0000:41:07.0': no such VF");
	free(req);
}

/*
 * Two vGPUs in one VM: two different VFs of the chosen GPU.  Time-sliced
 * vGPUs of one vendor-VFIO GPU share one framebuffer size (equal-size
 * mode): 4Q beside 8C fits nowhere (GPU 41 holds a 4 GB type already), 4Q
 * beside 4C does, as the driver's lists say.
 */
static void test_make_two_profiles(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(4, "L40S-4Q");

	open_host(f, "vfio-ts-l40s");
	req->profiles[1] = "L40S-8C";
	req->n_profiles = 2;
	make_fails(f, req, -EBUSY,
		   "no free VF on NUMA node 0 can take 'L40S-8C' as vGPU 2 of this VM");
	req->profiles[1] = "L40S-4C";
	make_ok(f, req);
	assert_string_equal(f->plan->vgpus[0].gpu, f->plan->vgpus[1].gpu);

	/* the same profile twice takes two VFs */
	req->profiles[1] = "L40S-4Q";
	make_ok(f, req);
	assert_int_equal(f->plan->n_vgpus, 2);
	assert_vgpu(f->plan, 0, "0000:c1:00.4", 1149);
	assert_vgpu(f->plan, 1, "0000:c1:00.5", 1149);
	assert_string_not_equal(f->plan->vgpus[0].parent, f->plan->vgpus[1].parent);
	free(req);
}

/*
 * A fabric partition's GPUs (req->gpus): vGPU i on GPU i, whatever their
 * nodes; the CPUs on the first GPU's node.  Without them the second vGPU
 * must share the first one's node and cannot.
 */
static void test_make_partition_gpus(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(4, "A30-6C");

	open_host(f, "a30-dual-mdev");
	req->profiles[1] = "A30-2-12C";
	req->n_profiles = 2;
	make_fails(f, req, -EBUSY,
		   "no free VF on NUMA node 0 can take 'A30-2-12C' as vGPU 2 of this VM");
	snprintf(req->gpus[0], sizeof(req->gpus[0]), "0000:3b:00.0");
	snprintf(req->gpus[1], sizeof(req->gpus[1]), "0000:af:00.0");
	req->n_gpus = 2;
	make_ok(f, req);
	assert_vgpu(f->plan, 0, "0000:3b:00.4", 684);
	assert_vgpu(f->plan, 1, "0000:af:00.4", 690);
	assert_int_equal(f->plan->node, 0);
	/* the first GPU decides; one that cannot take the first profile is refused */
	snprintf(req->gpus[0], sizeof(req->gpus[0]), "0000:af:00.0");
	make_fails(f, req, -EBUSY, "GPU 0000:af:00.0 cannot take 'A30-6C' now");
	snprintf(req->gpus[0], sizeof(req->gpus[0]), "0000:3b:00.0");
	snprintf(req->gpus[1], sizeof(req->gpus[1]), "0000:3b:00.0");
	make_fails(f, req, -EBUSY,
		   "no free VF of GPU 0000:3b:00.0 can take 'A30-2-12C' as vGPU 2 of this VM");
	req->n_gpus = 1;
	make_fails(f, req, -EINVAL, "1 GPUs for 2 vGPUs: one vGPU per GPU");
	free(req);
}

/* Two time-sliced vGPUs of one GPU in one VM: planned, with a warning. */
static void test_make_two_time_sliced(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = make_vm_ok(f, "a30-dual-mdev", 4, "A30-6C", "nvidia-684");

	assert_string_equal(f->plan->vgpus[0].parent, "0000:3b:00.4");
	assert_vgpu(f->plan, 1, "0000:3b:00.5", 684);
	assert_int_equal(f->plan->node, 0);
	assert_string_equal(warnings_text(f), "'A30-6C': several time-sliced vGPUs of one GPU in "
					      "one VM need vGPU software 16 or later");
	free(req);
}

/* A legacy PF parent holds several mdevs: one in use still leaves 3 T4-4Q. */
static void test_make_t4_pf_parent(void **state)
{
	static const unsigned pins[4] = { 0, 8, 1, 9 };
	struct fixture *f = *state;
	struct vgpu_request *req = make_vm_ok(f, "t4-legacy", 4, "T4-4Q", NULL);

	assert_vgpu(f->plan, 0, "0000:5e:00.0", 232);
	assert_string_equal(f->plan->vgpus[0].gpu, "0000:5e:00.0"); /* the PF is the parent */
	assert_int_equal(f->plan->node, 0);
	assert_pins(f->plan, pins, 4);
	assert_cpus(&f->plan->cpus, "0-1,8-9");
	free(req);
}

/* A fresh 16 GB T4 (its own mdev parent) with @n types {name, available}. */
static void fresh_t4(struct fixture *f)
{
	static const struct {
		unsigned id;
		const char *name;
		long avail;
	} types[] = {
		{ 230, "GRID T4-1Q", 16 }, { 231, "GRID T4-2Q", 8 },  { 232, "GRID T4-4Q", 4 },
		{ 233, "GRID T4-8Q", 2 },  { 234, "GRID T4-16Q", 1 },
	};
	struct vgpu_model *t4 = th_build(test_hosts, ARRAY_SIZE(test_hosts), "t4-legacy", true);
	struct vgpu_gpu *g;
	struct vgpu_parent *p;

	/* the same machine and node, a new GPU with nothing on it */
	vgpu_model_free(f->m);
	f->m = vgpu_model_new();
	g = vgpu_model_add_gpu(f->m, "0000:5e:00.0", 0x1eb8);
	g->numa_node = 0;
	p = vgpu_gpu_add_parent(g, "0000:5e:00.0", -1);
	p->iface = g->iface = VGPU_IFACE_MDEV;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		vgpu_parent_add_type(p, vgpu_gpu_add_type(g, types[i].id, types[i].name),
				     types[i].avail);
	vgpu_model_set_topology(f->m, &t4->topo);
	vgpu_model_free(t4);
}

static struct vgpu_request *two(unsigned vcpus, const char *p0, const char *p1)
{
	struct vgpu_request *req = new_request(vcpus, p0);

	req->profiles[1] = p1;
	req->n_profiles = 2;
	return req;
}

/*
 * The GPU's capacity, not each type's availability on its own: a fresh 16 GB
 * T4 takes two T4-8Q but not T4-16Q beside T4-8Q (24 GB) nor two sizes at once.
 */
static void test_make_t4_capacity(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = two(2, "T4-16Q", "T4-8Q");

	fresh_t4(f);
	make_fails(f, req, -EBUSY,
		   "no free VF on NUMA node 0 can take 'T4-8Q' as vGPU 2 of this VM");
	req->profiles[0] = "T4-8Q";
	req->profiles[1] = "T4-4Q";
	make_fails(f, req, -EBUSY,
		   "no free VF on NUMA node 0 can take 'T4-4Q' as vGPU 2 of this VM");
	req->profiles[1] = "T4-8Q";
	make_ok(f, req);
	assert_vgpu(f->plan, 0, "0000:5e:00.0", 233);
	assert_vgpu(f->plan, 1, "0000:5e:00.0", 233);
	free(req);
}

/*
 * A T4-4Q that exists already keeps the GPU at that size: T4-8Q has no room
 * even where a parent's own list would offer it.
 */
static void test_make_t4_existing_type(void **state)
{
	struct fixture *f = *state;
	struct vgpu_request *req = new_request(2, "T4-8Q");
	struct vgpu_parent *p;

	open_host(f, "t4-legacy");
	p = &f->m->gpus[0].parents[0];
	for (size_t k = 0; k < p->n_types; k++)
		if (p->types[k].type->id == 233)
			p->types[k].available = 1;
	make_fails(f, req, -EBUSY, "no free VF can take 'T4-8Q' now; available now: T4-4Q");
	req->profiles[0] = "T4-4Q";
	make_ok(f, req);
	assert_vgpu(f->plan, 0, "0000:5e:00.0", 232);
	free(req);
}

/* A 200-character profile in "available now" is listed, not looped over. */
static void test_make_long_profile(void **state)
{
	struct fixture *f = *state;
	char name[240], want[512];
	struct vgpu_request *req = new_request(2, "T4-5Q");
	struct vgpu_gpu *g;
	struct vgpu_parent *p;

	fresh_t4(f);
	g = &f->m->gpus[0];
	p = &g->parents[0];
	memset(name, 'X', 200);
	strcpy(name + 200, "-4Q");
	vgpu_parent_add_type(p, vgpu_gpu_add_type(g, 999, name), 1);
	snprintf(want, sizeof(want),
		 "unknown vGPU profile 'T4-5Q'; available now: T4-1Q, T4-2Q, T4-4Q, T4-8Q, "
		 "T4-16Q, %s",
		 name);
	make_fails(f, req, -ENOENT, want);
	free(req);
}

/* ---- a mirrored guest: one cell per node of its GPUs (--guest-topology mirror) ---- */

static void mirror_plan(struct vgpu_plan *p, const int *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p->vgpus[i].node = nodes[i];
	p->n_vgpus = n;
}

static void test_mirror_cells(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset none;
	static const int nodes[] = { 1, 0, 0 };
	static const unsigned pins[] = { 0, 48, 1, 49, 2, 50, 3, 51, 24, 72, 25, 73 };

	vgpu_cpuset_zero(&none);
	a30_topo(f);
	mirror_plan(f->plan, nodes, 3);
	/* cells by node id, vCPUs by vGPUs in whole cores: 8 on node 0 (two vGPUs), 4 on 1 */
	assert_int_equal(vgpu_plan_mirror_cpus(&f->ctx, &f->t, &none, 12, f->plan), 0);
	assert_int_equal(f->plan->n_cells, 2);
	assert_int_equal(f->plan->cells[0].node, 0);
	assert_int_equal(f->plan->cells[0].n_vgpus, 2);
	assert_int_equal(f->plan->cells[0].first, 0);
	assert_int_equal(f->plan->cells[0].slots, 8);
	assert_int_equal(f->plan->cells[1].node, 1);
	assert_int_equal(f->plan->cells[1].first, 8);
	assert_int_equal(f->plan->cells[1].slots, 4);
	assert_plan(f->plan, "0-3,24-25,48-51,72-73", pins, 12, 6, 2);
	/* memory by vGPUs in MiB, what the division leaves to cell 0 */
	assert_int_equal(vgpu_plan_cell_memory(f->plan, 0, 10u << 20, 1024), 6827u * 1024);
	assert_int_equal(vgpu_plan_cell_memory(f->plan, 1, 10u << 20, 1024), 3413u * 1024);
}

static void test_mirror_odd_vcpus(void **state)
{
	struct fixture *f = *state;
	struct vgpu_cpuset none;
	static const int nodes[] = { 0, 1 };
	static const unsigned pins[] = { 0, 48, 1, 24, 72 };

	vgpu_cpuset_zero(&none);
	a30_topo(f);
	mirror_plan(f->plan, nodes, 2);
	/* 5 vCPUs: 3 and 2; cell 0's third vCPU would leave a spare sibling: one thread a core */
	assert_int_equal(vgpu_plan_mirror_cpus(&f->ctx, &f->t, &none, 5, f->plan), 0);
	assert_plan(f->plan, "0-1,24,48-49,72", pins, 5, 5, 1);
	assert_int_equal(f->plan->cells[1].first, 3);
	/* fewer vCPUs than cells */
	mirror_plan(f->plan, nodes, 2);
	assert_int_equal(vgpu_plan_mirror_cpus(&f->ctx, &f->t, &none, 1, f->plan), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "1 vCPUs cannot give each of the guest's 2 NUMA cells one");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a30_four_vms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a30_partly_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sibling_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_vcpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smt_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smt4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclusions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exhaustion_no_spill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_core_across_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offline_sibling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_vcpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_free_cpus, setup, teardown),
		cmocka_unit_test(test_type_matches),
		cmocka_unit_test_setup_teardown(test_make_a30_time_sliced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_a30_mig, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_a30_no_spill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_unknown_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_not_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_no_topology, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_l40s_least_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_pinned_vf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_two_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_partition_gpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_two_time_sliced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_t4_pf_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_t4_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_t4_existing_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_long_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mirror_cells, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mirror_odd_vcpus, setup, teardown),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
