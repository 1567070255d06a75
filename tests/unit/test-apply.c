// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-apply - a host configuration resolved against hosts built in memory
 * (src/lib/apply.c: vgpu_apply_resolve), and the ordered steps
 * (vgpu_apply_steps) run against an in-memory host whose actions behave as
 * the driver's do: enabling VFs rebinds the GPU and destroys its GPU
 * instances, MIG-backed types are creatable only on a free GI of their
 * profile, time-sliced ones only with MIG off.  Every action is logged, so
 * the tests assert the order MIG mode -> VFs -> GIs -> vGPUs across GPUs,
 * that a second run changes nothing, and that assert changes nothing.
 *
 * The plan as data: a dry run of the whole command (vgpu_apply_host()) on
 * the committed fixture hosts returns its steps (kind, GPU, object, count)
 * as a list, and the per-GPU runner (gpu-runner.c) hands each GPU's log
 * messages on as one block per GPU in GPU order, with the first failure.
 *   test-apply SRCDIR
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "apply.h"
#include "gpu-runner.h"
#include "hostcfg.h"
#include "test-hosts.h"
#include "test-util.h"

#define MAX_GPUS 4
#define MAX_MADE 64

/* The in-memory host: what the driver holds now. */
struct sim {
	const char *host; /* a fixture of test-hosts.h */
	int mig[MAX_GPUS]; /* 0, 1 */
	bool vfs[MAX_GPUS];
	struct vgpu_mig_gi gis[MAX_GPUS][16];
	size_t n_gis[MAX_GPUS];
	struct vgpu_record made[MAX_MADE]; /* vGPUs created */
	size_t n_made;
	char log[8192]; /* one action a line */
	int fail_create_gis; /* -errno for create_gis, 0: works */
	const char *fail_gpu; /* with fail_create_gis: only this GPU's fails (NULL: every GPU's) */
	struct {
		const char *parent;
		unsigned type;
	} reserved[4]; /* owner records whose vGPU is not there (after a reboot) */
};

static void logf_(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct sim *s, const char *fmt, ...)
{
	size_t l = strlen(s->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->log + l, sizeof(s->log) - l, fmt, ap);
	va_end(ap);
	l = strlen(s->log);
	snprintf(s->log + l, sizeof(s->log) - l, "\n");
}

static const struct th_host *fixture(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(test_hosts); i++)
		if (strcmp(test_hosts[i].name, name) == 0)
			return &test_hosts[i];
	fail_msg("no fixture host %s", name);
	return NULL;
}

static int gpu_index(const struct sim *s, const char *addr)
{
	const struct th_host *h = fixture(s->host);

	for (size_t i = 0; i < h->n_gpus; i++)
		if (strcmp(h->gpus[i].addr, addr) == 0)
			return (int)i;
	fail_msg("no GPU %s", addr);
	return -1;
}

static const struct vgpu_record *made_on(const struct sim *s, const char *parent)
{
	for (size_t i = 0; i < s->n_made; i++)
		if (strcmp(s->made[i].parent, parent) == 0)
			return &s->made[i];
	return NULL;
}

/* GIs of @profile on GPU @g that no vGPU uses yet. */
static unsigned free_gis(const struct sim *s, const struct vgpu_gpu *g, int gi, const char *profile)
{
	unsigned n = 0, used = 0;

	for (size_t i = 0; i < s->n_gis[gi]; i++)
		n += strcmp(s->gis[gi][i].profile->name, profile) == 0;
	for (size_t i = 0; i < s->n_made; i++) {
		const struct vgpu_type *t = vgpu_gpu_find_type(g, s->made[i].type_id);

		used += strcmp(s->made[i].gpu, g->addr) == 0 && t &&
			strcmp(t->info.gi_profile, profile) == 0;
	}
	return n > used ? n - used : 0;
}

/* The host as the readers would see it now. */
static struct vgpu_model *build(const struct sim *s)
{
	const struct th_host *h = fixture(s->host);
	struct vgpu_model *m = vgpu_model_new();

	for (size_t i = 0; i < h->n_gpus; i++) {
		struct vgpu_gpu *g =
			vgpu_model_add_gpu(m, h->gpus[i].addr, (uint16_t)h->gpus[i].device_id);
		int total = 0;

		g->numa_node = h->gpus[i].node;
		th_add_types(g, h->gpus[i].types);
		for (size_t k = 0; k < h->n_parents; k++)
			total += strcmp(h->parents[k].gpu, g->addr) == 0;
		g->sriov_total_vfs = total;
		g->sriov_num_vfs = s->vfs[i] ? total : 0;
	}
	for (size_t k = 0; k < h->n_parents; k++) {
		const struct th_parent *tp = &h->parents[k];
		int gi = gpu_index(s, tp->gpu);
		struct vgpu_gpu *g = &m->gpus[gi];
		const struct vgpu_record *r = made_on(s, tp->addr);
		struct vgpu_parent *p;

		if (!s->vfs[gi])
			continue;
		p = vgpu_gpu_add_parent(g, tp->addr, tp->index);
		p->iface = tp->iface;
		g->iface = tp->iface;
		if (r) {
			p->in_use = true;
			p->current_type = r->type_id;
			if (r->mdev_uuid[0])
				vgpu_strv_push(&p->mdevs, vgpu_xstrdup(r->mdev_uuid));
		}
		for (size_t t = 0; t < g->n_types; t++) {
			const struct vgpu_type *ty = g->types[t];
			bool mig = ty->info.backing == VGPU_BACKING_MIG;
			bool ok = !r &&
				  (mig ? s->mig[gi] && free_gis(s, g, gi, ty->info.gi_profile) :
					 !s->mig[gi]);

			vgpu_parent_add_type(p, ty, ok ? 1 : 0);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(s->reserved) && s->reserved[i].parent; i++)
		vgpu_model_reserve(m, s->reserved[i].parent, s->reserved[i].type);
	return m;
}

static int op_mig_mode(void *data, struct vgpu_ctx *ctx, const char *gpu, int *cur, int *pend)
{
	struct sim *s = data;

	(void)ctx;
	*cur = *pend = s->mig[gpu_index(s, gpu)];
	return 0;
}

/*
 * The runner's tests make the second GPU's process run ahead of the first:
 * GPU 0000:3b:00.0 creates its GPU instances only after 0000:af:00.0 tried
 * (and a little later), so its last messages, and its failure, arrive after
 * the other's (-1: no waiting).
 */
static int ahead[2] = { -1, -1 };

static void ahead_wait(const char *gpu)
{
	struct pollfd p = { .fd = ahead[0], .events = POLLIN };
	char c;

	if (ahead[0] >= 0 && strcmp(gpu, "0000:3b:00.0") == 0 && poll(&p, 1, 10000) == 1) {
		(void)!read(ahead[0], &c, 1);
		usleep(100 * 1000);
	}
}

static void ahead_go(const char *gpu)
{
	if (ahead[1] >= 0 && strcmp(gpu, "0000:af:00.0") == 0)
		(void)!write(ahead[1], "g", 1);
}

static int op_set_mig(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct sim *s = data;

	(void)ctx;
	s->mig[gpu_index(s, gpu)] = on;
	logf_(s, "mig %s %s", gpu, on ? "on" : "off");
	return 0;
}

static int op_set_vfs(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct sim *s = data;
	int gi = gpu_index(s, gpu);

	(void)ctx;
	s->vfs[gi] = on;
	s->n_gis[gi] = 0; /* the rebind destroys the GPU instances */
	logf_(s, "vfs %s %s", gpu, on ? "on" : "off");
	return 0;
}

static int op_list_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
		       const char *gpu, struct vgpu_mig_gi **gis, size_t *n)
{
	struct sim *s = data;
	int gi = gpu_index(s, gpu);

	(void)ctx;
	(void)b;
	*n = s->n_gis[gi];
	*gis = vgpu_xcalloc(*n + 1, sizeof(**gis));
	memcpy(*gis, s->gis[gi], *n * sizeof(**gis));
	return 0;
}

static int op_create_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
			 const char *gpu, const struct vgpu_mig_gi *have, size_t n_have,
			 const struct vgpu_mig_gi *gis, size_t n)
{
	struct sim *s = data;

	assert_non_null(board);
	assert_int_equal(n_have, s->n_gis[gpu_index(s, gpu)]);
	(void)have;
	int gi = gpu_index(s, gpu);

	ahead_go(gpu);
	ahead_wait(gpu);
	if (s->fail_create_gis && (!s->fail_gpu || strcmp(s->fail_gpu, gpu) == 0))
		return vgpu_error(ctx, s->fail_create_gis, "Insufficient Resources on %s", gpu);
	for (size_t i = 0; i < n; i++) {
		s->gis[gi][s->n_gis[gi]] = gis[i];
		s->gis[gi][s->n_gis[gi]].id = (int)s->n_gis[gi] + 1;
		s->n_gis[gi]++;
		logf_(s, "gi %s %s@%u", gpu, gis[i].profile->name, gis[i].start);
	}
	return 0;
}

static int op_destroy_gis(void *data, struct vgpu_ctx *ctx, const char *gpu)
{
	struct sim *s = data;

	(void)ctx;
	s->n_gis[gpu_index(s, gpu)] = 0;
	logf_(s, "destroy gis %s", gpu);
	return 0;
}

static int op_read_host(void *data, struct vgpu_ctx *ctx, struct vgpu_model **out)
{
	(void)ctx;
	*out = build(data);
	return 0;
}

static int op_create_vgpu(void *data, struct vgpu_ctx *ctx, const struct vgpu_record *r)
{
	struct sim *s = data;

	(void)ctx;
	assert_true(s->n_made < MAX_MADE);
	assert_null(made_on(s, r->parent)); /* never two on one VF */
	s->made[s->n_made++] = *r;
	logf_(s, "vgpu %s %u", r->parent, r->type_id);
	return 0;
}

static int op_set_hetero(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct sim *s = data;

	(void)ctx;
	/* the driver refuses it while a vGPU exists: the step must come first */
	for (size_t i = 0; i < s->n_made; i++)
		assert_false(strncmp(s->made[i].gpu, gpu, strlen(gpu)) == 0);
	logf_(s, "hetero %s %s", gpu, on ? "on" : "off");
	return 0;
}

static const struct vgpu_apply_ops sim_ops = {
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

/* ---- helpers -------------------------------------------------------------------------- */

static struct vgpu_ctx ctx;

static void config(const char *yaml, const char *label, struct vgpu_hostcfg *cfg)
{
	int r = vgpu_hostcfg_parse(&ctx, "host.yaml", yaml, strlen(yaml), label, cfg);

	if (r < 0)
		fail_msg("config: %s", vgpu_ctx_error(&ctx));
}

/* One run of @label on @s: resolve then steps; the error code (0 on success). */
static int run(struct sim *s, const char *yaml, const char *label, bool check,
	       struct vgpu_steps *diffs)
{
	struct vgpu_hostcfg cfg = { 0 };
	struct vgpu_apply a = { .ctx = &ctx,
				.file = "host.yaml",
				.check = check,
				.ops = &sim_ops,
				.ops_data = s,
				.model = build(s) };
	int r;

	config(yaml, label, &cfg);
	r = vgpu_apply_resolve(&a, &cfg);
	if (r == 0)
		r = vgpu_apply_steps(&a);
	for (size_t i = 0; diffs && i < a.diffs.n; i++)
		vgpu_steps_push(diffs, &a.diffs.items[i]);
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
	return r;
}

/* resolve only: @a keeps the result; the config is cleared into @cfg for the caller */
static int resolve(const char *host, const char *yaml, const char *label, struct vgpu_apply *a,
		   struct vgpu_hostcfg *cfg)
{
	struct sim s = { .host = host };

	for (int i = 0; i < MAX_GPUS; i++)
		s.vfs[i] = true;
	*a = (struct vgpu_apply){ .ctx = &ctx, .file = "host.yaml", .model = build(&s) };
	config(yaml, label, cfg);
	return vgpu_apply_resolve(a, cfg);
}

static void expect_error(int r, const char *want)
{
	if (r >= 0 || !strstr(vgpu_ctx_error(&ctx), want))
		fail_msg("got %d '%s', expected an error with '%s'", r, vgpu_ctx_error(&ctx), want);
}

#define A30_MIG                                                                                    \
	"version: v1\n"                                                                            \
	"vgpu-configs:\n"                                                                          \
	"  a30-1-6c:\n"                                                                            \
	"    - devices: all\n"                                                                     \
	"      vgpu-devices:\n"                                                                    \
	"        \"A30-1-6C\": 4\n"

/* fewer vGPUs than A30_MIG's */
#define A30_MIG_TWO                                                                                \
	"version: v1\n"                                                                            \
	"vgpu-configs:\n"                                                                          \
	"  two:\n"                                                                                 \
	"    - devices: all\n"                                                                     \
	"      vgpu-devices:\n"                                                                    \
	"        \"A30-1-6C\": 2\n"

/* ---- resolution ------------------------------------------------------------------------- */

static void test_resolve_mig_backed_derives(void **state)
{
	struct vgpu_apply a;
	struct vgpu_hostcfg cfg = { 0 };

	(void)state;
	assert_int_equal(resolve("a30-dual-mdev", A30_MIG, "a30-1-6c", &a, &cfg), 0);
	assert_int_equal(a.n_gpus, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct vgpu_apply_gpu *w = &a.gpus[i];

		assert_string_equal(w->addr, i ? "0000:af:00.0" : "0000:3b:00.0");
		assert_non_null(w->board);
		assert_int_equal(w->mig, 1); /* MIG-backed vGPUs need MIG mode */
		assert_true(w->vfs); /* and VFs, on an SR-IOV GPU */
		assert_true(w->gis_set);
		assert_int_equal(w->n_gis, 1); /* one 1g.6gb GI per vGPU */
		assert_string_equal(w->gis[0].profile->name, "1g.6gb");
		assert_int_equal(w->gis[0].count, 4);
		assert_int_equal(w->n_vgpus, 1);
		assert_int_equal(w->vgpus[0].cfg->count, 4);
	}
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
}

static void test_resolve_time_sliced_mig_off(void **state)
{
	static const char yaml[] = "version: v1\n"
				   "vgpu-configs:\n"
				   "  ts:\n"
				   "    - devices: [1]\n"
				   "      vgpu-devices:\n"
				   "        \"A30-6C\": 4\n";
	struct vgpu_apply a;
	struct vgpu_hostcfg cfg = { 0 };

	(void)state;
	assert_int_equal(resolve("a30-dual-mdev", yaml, "ts", &a, &cfg), 0);
	assert_int_equal(a.n_gpus, 1); /* index 1: the second GPU by PCI address */
	assert_string_equal(a.gpus[0].addr, "0000:af:00.0");
	assert_int_equal(a.gpus[0].mig, 0); /* time-sliced types are not offered in MIG mode */
	assert_int_equal(a.gpus[0].n_gis, 0);
	assert_false(a.gpus[0].gis_set);
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
}

static void test_resolve_mig_configs_layout_wins(void **state)
{
	static const char yaml[] = "version: v1\n"
				   "mig-configs:\n"
				   "  l:\n"
				   "    - devices: [0]\n"
				   "      mig-enabled: true\n"
				   "      mig-devices:\n"
				   "        \"2g.12gb\": 2\n"
				   "vgpu-configs:\n"
				   "  l:\n"
				   "    - devices: [0]\n"
				   "      vgpu-devices:\n"
				   "        \"A30-2-12C\": 2\n";
	struct vgpu_apply a;
	struct vgpu_hostcfg cfg = { 0 };

	(void)state;
	assert_int_equal(resolve("a30-dual-mdev", yaml, "l", &a, &cfg), 0);
	assert_int_equal(a.n_gpus, 1);
	assert_int_equal(a.gpus[0].mig_line, 4);
	assert_int_equal(a.gpus[0].vgpu_line, 10);
	/* the layout is the mig-configs entry's, not derived a second time */
	assert_int_equal(a.gpus[0].n_gis, 1);
	assert_string_equal(a.gpus[0].gis[0].profile->name, "2g.12gb");
	assert_int_equal(a.gpus[0].gis[0].count, 2);
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
}

/*
 * The driver's maximum decides, not nominal sizes against the framebuffer:
 * an RTX PRO 6000 takes NVIDIA's 4 x DC-24C although 4 x 24576 MiB is more
 * than the 97887 MiB NVML reports; a fifth is refused by the maximum.
 */
static void test_resolve_max_instances_not_arithmetic(void **state)
{
	static const char yaml[] = "version: v1\n"
				   "vgpu-configs:\n"
				   "  dc:\n"
				   "    - devices: all\n"
				   "      vgpu-devices:\n"
				   "        \"DC-24C\": %u\n";
	char text[sizeof(yaml) + 8];

	(void)state;
	for (unsigned n = 4; n <= 5; n++) {
		struct vgpu_apply a = { .ctx = &ctx,
					.file = "host.yaml",
					.model = vgpu_model_new() };
		struct vgpu_hostcfg cfg = { 0 };
		struct vgpu_gpu *g = vgpu_model_add_gpu(a.model, "0000:3d:00.0", 0x2bb5);
		struct vgpu_type *t;
		int r;

		g->vendor_id = VGPU_PCI_VENDOR_NVIDIA;
		g->sriov_total_vfs = g->sriov_num_vfs = 16;
		g->fb_mib = 97887;
		t = vgpu_gpu_add_type(g, 1203, "NVIDIA RTX Pro 6000 Blackwell DC-24C");
		t->max_instances = 4;
		snprintf(text, sizeof(text), yaml, n);
		config(text, "dc", &cfg);
		r = vgpu_apply_resolve(&a, &cfg);
		if (n == 4)
			assert_int_equal(r, 0);
		else
			expect_error(r, "5 vGPUs of DC-24C do not fit: the GPU takes at most 4");
		vgpu_apply_clear(&a);
		vgpu_hostcfg_clear(&cfg);
	}
}

static void test_resolve_refusals(void **state)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{ "version: v1\nvgpu-configs:\n  x:\n    - devices: [2]\n      vgpu-devices:\n"
		  "        \"A30-6C\": 1\n",
		  "host.yaml:4: no GPU with index 2 (the host has 2 NVIDIA GPUs" },
		{ "version: v1\nvgpu-configs:\n  x:\n    - devices: [\"0000:99:00.0\"]\n"
		  "      vgpu-devices:\n        \"A30-6C\": 1\n",
		  "host.yaml:4: no NVIDIA GPU at 0000:99:00.0" },
		{ "version: v1\nvgpu-configs:\n  x:\n    - devices: all\n      vgpu-devices:\n"
		  "        \"A30-6C\": 1\n    - devices: [0]\n      vgpu-devices:\n"
		  "        \"A30-4C\": 1\n",
		  "host.yaml:7: GPU 0000:3b:00.0 is already selected by the vgpu-configs entry "
		  "at line 4" },
		{ "version: v1\nvgpu-configs:\n  x:\n    - devices: all\n      vgpu-devices:\n"
		  "        \"A30-6C\": 1\n        \"A30-1-6C\": 1\n",
		  "MIG-backed and time-sliced vGPUs cannot share a GPU" },
		{ "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: false\n"
		  "vgpu-configs:\n  x:\n    - devices: all\n      vgpu-devices:\n"
		  "        \"A30-1-6C\": 1\n",
		  "GPU instances or MIG-backed vGPUs with mig-enabled: false" },
		{ "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n"
		  "      mig-devices:\n        \"1g.5gb\": 1\n",
		  "host.yaml:7: GPU 0000:3b:00.0: " },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct vgpu_apply a;
		struct vgpu_hostcfg cfg = { 0 };

		expect_error(resolve("a30-dual-mdev", cases[i].yaml, "x", &a, &cfg), cases[i].want);
		vgpu_apply_clear(&a);
		vgpu_hostcfg_clear(&cfg);
	}
}

/* ---- steps ------------------------------------------------------------------------------- */

static void test_steps_cold_boot_order(void **state)
{
	struct sim s = { .host = "a30-dual-mdev" };
	struct vgpu_steps diffs = { 0 };
	/* each GPU in order, MIG mode to vGPUs (GPUs do not depend on each other) */
	const char *want = "mig 0000:3b:00.0 on\n"
			   "vfs 0000:3b:00.0 on\n"
			   "gi 0000:3b:00.0 1g.6gb@0\n"
			   "gi 0000:3b:00.0 1g.6gb@1\n"
			   "gi 0000:3b:00.0 1g.6gb@2\n"
			   "gi 0000:3b:00.0 1g.6gb@3\n"
			   "vgpu 0000:3b:00.4 689\n"
			   "vgpu 0000:3b:00.5 689\n"
			   "vgpu 0000:3b:00.6 689\n"
			   "vgpu 0000:3b:00.7 689\n"
			   "mig 0000:af:00.0 on\n"
			   "vfs 0000:af:00.0 on\n"
			   "gi 0000:af:00.0 1g.6gb@0\n"
			   "gi 0000:af:00.0 1g.6gb@1\n"
			   "gi 0000:af:00.0 1g.6gb@2\n"
			   "gi 0000:af:00.0 1g.6gb@3\n"
			   "vgpu 0000:af:00.4 689\n"
			   "vgpu 0000:af:00.5 689\n"
			   "vgpu 0000:af:00.6 689\n"
			   "vgpu 0000:af:00.7 689\n";

	(void)state;
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", false, &diffs), 0);
	assert_string_equal(s.log, want);
	assert_int_equal(diffs.n, 0);
	/* a second run finds the host as configured and changes nothing */
	s.log[0] = '\0';
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", false, &diffs), 0);
	assert_string_equal(s.log, "");
	assert_int_equal(diffs.n, 0);
	/* and assert agrees */
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", true, &diffs), 0);
	assert_int_equal(diffs.n, 0);
}

static void test_steps_wrong_order_repaired(void **state)
{
	/* GIs made before the VFs: enabling the VFs wipes them, step 3 makes them again */
	struct sim s = { .host = "a30-dual-mdev", .mig = { 1, 1 } };
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup("A30");

	(void)state;
	s.gis[0][0] = (struct vgpu_mig_gi){ &b->profiles[0], 0, 1 };
	s.n_gis[0] = 1;
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", false, NULL), 0);
	assert_non_null(strstr(s.log, "vfs 0000:3b:00.0 on\n"
				      "gi 0000:3b:00.0 1g.6gb@0\n"));
	assert_null(strstr(s.log, "mig ")); /* MIG mode was right */
	assert_int_equal(s.n_gis[0], 4);
	assert_int_equal(s.n_made, 8);
}

static void test_steps_assert_changes_nothing(void **state)
{
	struct sim s = { .host = "a30-dual-mdev" };
	struct vgpu_steps diffs = { 0 };
	static const char *const want[] = {
		"GPU 0000:3b:00.0: MIG mode is disabled, the config wants it enabled",
		"GPU 0000:3b:00.0: 0 of 4 VFs enabled",
		"GPU 0000:3b:00.0: GPU instances none, the config wants 1g.6gb x4",
		"GPU 0000:3b:00.0: 0 of 4 vGPUs of A30-1-6C",
		"GPU 0000:af:00.0: MIG mode is disabled, the config wants it enabled",
		"GPU 0000:af:00.0: 0 of 4 VFs enabled",
		"GPU 0000:af:00.0: GPU instances none, the config wants 1g.6gb x4",
		"GPU 0000:af:00.0: 0 of 4 vGPUs of A30-1-6C",
	};

	(void)state;
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", true, &diffs), 0);
	assert_string_equal(s.log, ""); /* no action, not even one that would change nothing */
	assert_int_equal(diffs.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < diffs.n; i++)
		assert_string_equal(diffs.items[i].text, want[i]);
	vgpu_steps_clear(&diffs);
}

/* One difference a line: "STEP OBJECT GPU PROFILE COUNT WANT/HAVE", "-" for none. */
static void diffs_str(const struct vgpu_steps *diffs, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < diffs->n; i++) {
		const struct vgpu_step *d = &diffs->items[i];
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, "%s %s %s %s %u %s/%s\n",
			 vgpu_step_kind_name(d->kind), vgpu_step_object_name(d->object),
			 d->gpu ? d->gpu : "-", d->profile ? d->profile : "-", d->count,
			 d->want ? d->want : "-", d->have ? d->have : "-");
	}
}

/*
 * assert's differences as data (what assert --json prints): each the step
 * that would fix it, on its GPU, with its count, what the config wants and
 * what the host has; no field read back out of the text.
 */
static void test_steps_assert_differences_as_data(void **state)
{
	struct sim s = { .host = "a30-dual-mdev", .vfs = { false, true } };
	struct vgpu_steps diffs = { 0 };
	char got[2048];
	const char *want = "mig-on gpu 0000:3b:00.0 - 1 enabled/disabled\n"
			   "vfs-on gpu 0000:3b:00.0 - 0 4/0\n"
			   "gi-create gpu-instance 0000:3b:00.0 1g.6gb 4 1g.6gb x4/none\n"
			   "vgpu-create vgpu 0000:3b:00.0 A30-1-6C 4 4/0\n"
			   "mig-on gpu 0000:af:00.0 - 1 enabled/disabled\n"
			   "gi-create gpu-instance 0000:af:00.0 1g.6gb 4 1g.6gb x4/none\n"
			   "vgpu-create vgpu 0000:af:00.0 A30-1-6C 4 4/0\n";

	(void)state;
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", true, &diffs), 0);
	diffs_str(&diffs, got, sizeof(got));
	assert_string_equal(got, want);
	vgpu_steps_clear(&diffs);
	/* more than the config wants: the step that would free them (apply frees none) */
	assert_int_equal(run(&s, A30_MIG, "a30-1-6c", false, NULL), 0);
	assert_int_equal(run(&s, A30_MIG_TWO, "two", true, &diffs), 0);
	diffs_str(&diffs, got, sizeof(got));
	assert_string_equal(got, "gi-destroy gpu-instance 0000:3b:00.0 - 0 1g.6gb x2/1g.6gb x4\n"
				 "vgpu-destroy vgpu 0000:3b:00.0 A30-1-6C 2 2/4\n"
				 "gi-destroy gpu-instance 0000:af:00.0 - 0 1g.6gb x2/1g.6gb x4\n"
				 "vgpu-destroy vgpu 0000:af:00.0 A30-1-6C 2 2/4\n");
	assert_string_equal(
		diffs.items[1].text,
		"GPU 0000:3b:00.0 holds 4 vGPUs of A30-1-6C, the config wants 2 (apply frees none)");
	vgpu_steps_clear(&diffs);
}

static void test_steps_failure_names_step(void **state)
{
	struct sim s = { .host = "a30-dual-mdev", .mig = { 1, 1 }, .vfs = { true, true } };

	(void)state;
	s.fail_create_gis = -ENOSPC;
	expect_error(run(&s, A30_MIG, "a30-1-6c", false, NULL),
		     "step 3 (GPU instances): Insufficient Resources");
	assert_int_equal(s.n_made, 0); /* no vGPU before its GI */
}

static void test_steps_time_sliced_fills_free_vfs(void **state)
{
	static const char yaml[] = "version: v1\n"
				   "vgpu-configs:\n"
				   "  ts:\n"
				   "    - devices: all\n"
				   "      vgpu-devices:\n"
				   "        \"A30-6C\": 2\n"
				   "        \"A30-4C\": 1\n";
	struct sim s = { .host = "a30-dual-mdev", .vfs = { true, true } };

	(void)state;
	assert_int_equal(run(&s, yaml, "ts", false, NULL), 0);
	/*
	 * two sizes on one GPU: mixed-size mode first (after the VFs, before any
	 * vGPU); each VF takes one vGPU, the second type goes to the next free VF
	 */
	assert_string_equal(s.log, "hetero 0000:3b:00.0 on\n"
				   "vgpu 0000:3b:00.4 684\n"
				   "vgpu 0000:3b:00.5 684\n"
				   "vgpu 0000:3b:00.6 683\n"
				   "hetero 0000:af:00.0 on\n"
				   "vgpu 0000:af:00.4 684\n"
				   "vgpu 0000:af:00.5 684\n"
				   "vgpu 0000:af:00.6 683\n");
}

/*
 * A domain's vGPU, there or reserved (after a reboot, per-start), is the
 * domain's: the config's count is of its own vGPUs, and the domain's still
 * take room.
 */
static void test_steps_reservations_count(void **state)
{
	static const char five[] = "version: v1\n"
				   "vgpu-configs:\n"
				   "  l:\n"
				   "    - devices: [\"0000:c1:00.0\"]\n"
				   "      vgpu-devices:\n"
				   "        \"L40S-8Q\": 5\n";
	static const char six[] = "version: v1\n"
				  "vgpu-configs:\n"
				  "  l:\n"
				  "    - devices: [\"0000:c1:00.0\"]\n"
				  "      vgpu-devices:\n"
				  "        \"L40S-8Q\": 6\n";
	static const char seven[] = "version: v1\n"
				    "vgpu-configs:\n"
				    "  l:\n"
				    "    - devices: [\"0000:c1:00.0\"]\n"
				    "      vgpu-devices:\n"
				    "        \"L40S-8Q\": 7\n";
	struct sim s = { .host = "vfio-ts-l40s", .vfs = { true, true } };

	(void)state;
	s.reserved[0].parent = "0000:c1:00.4";
	s.reserved[0].type = 1151; /* L40S-8Q of a domain, gone with the reboot */
	assert_int_equal(run(&s, five, "l", false, NULL), 0);
	/* five of its own; 00.4 stays the domain's, which its hook re-creates there */
	assert_string_equal(s.log, "vgpu 0000:c1:00.5 1151\n"
				   "vgpu 0000:c1:00.6 1151\n"
				   "vgpu 0000:c1:00.7 1151\n"
				   "vgpu 0000:c1:01.0 1151\n"
				   "vgpu 0000:c1:01.1 1151\n");
	/* six of its own do not fit beside the domain's */
	s = (struct sim){ .host = "vfio-ts-l40s", .vfs = { true, true } };
	s.reserved[0].parent = "0000:c1:00.4";
	s.reserved[0].type = 1151;
	expect_error(run(&s, six, "l", false, NULL),
		     "host.yaml:6: GPU 0000:c1:00.0: 6 more vGPUs of L40S-8Q do not fit: next to "
		     "the config's 0 there, it has room for 5");
	assert_int_equal(s.n_made, 0);
	/*
	 * seven 8 GiB vGPUs are more than a 48 GiB L40S holds: with no maximum
	 * from the driver, the capacity model refuses them before anything is made
	 */
	s = (struct sim){ .host = "vfio-ts-l40s", .vfs = { true, true } };
	expect_error(run(&s, seven, "l", false, NULL),
		     "host.yaml:6: GPU 0000:c1:00.0: 7 more vGPUs of L40S-8Q do not fit: next to "
		     "the config's 0 there, it has room for 6");
	assert_string_equal(s.log, "");
	/*
	 * six fit an empty GPU, but not next to a domain's reserved L40S-8C (same
	 * size, another type): refused at the vGPU step, nothing made
	 */
	s = (struct sim){ .host = "vfio-ts-l40s", .vfs = { true, true } };
	s.reserved[0].parent = "0000:c1:00.4";
	s.reserved[0].type = 1158;
	expect_error(
		run(&s, six, "l", false, NULL),
		"host.yaml:6: GPU 0000:c1:00.0: 6 more vGPUs of L40S-8Q do not fit: next to the "
		"config's 0 there, it has room for 5");
	assert_int_equal(s.n_made, 0);
}

/* ---- the plan as data: a dry run's steps ------------------------------------------------- */

static const char *srcdir;

/* One line per step: "STEP GPU OBJECT PROFILE PARENT COUNT", "-" for none. */
static char *steps_str(const struct vgpu_steps *steps)
{
	char *out = vgpu_xstrdup("");

	for (size_t i = 0; i < steps->n; i++) {
		const struct vgpu_step *st = &steps->items[i];
		const char *obj = vgpu_step_object_name(st->object);
		const char *verb = vgpu_step_verb(st);

		vgpu_append(&out, "%s %s %s %s %s %u\n", vgpu_step_kind_name(st->kind),
			    st->gpu ? st->gpu : "-", obj ? obj : "-",
			    st->profile ? st->profile : "-", st->parent ? st->parent : "-",
			    st->count);
		/* the text's first word is the step's verb, which --json's "kind" keeps */
		if (!verb || strncmp(st->text, verb, strlen(verb)) != 0 ||
		    !strchr(": ", st->text[strlen(verb)]))
			fail_msg("step %zu: verb '%s' is not the first word of '%s'", i,
				 verb ? verb : "(none)", st->text);
	}
	return out;
}

/*
 * A dry run of the whole command (vgpu_apply_host()) of @label of @yaml on
 * the committed fixture host @host, nothing written; @smi (NULL: none) is
 * the text of a stand-in nvidia-smi.  Its steps into @steps.
 */
static int dry_run(const char *host, const char *yaml, const char *label, const char *smi,
		   struct vgpu_steps *steps)
{
	char dir[PATH_MAX], root[PATH_MAX], file[PATH_MAX + 16], prog[PATH_MAX + 16];
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_steps diffs = { 0 };
	struct vgpu_apply_opts o = { .file = file,
				     .label = label,
				     .dry_run = true,
				     .tools = { .nvidia_smi = "/bin/false",
						.sriov_manage = "/bin/false",
						.dry_run = true },
				     .steps = steps };
	int r;

	tree_make(dir, sizeof(dir), "apply");
	tree_put(dir, "host.yaml", yaml);
	snprintf(file, sizeof(file), "%s/host.yaml", dir);
	if (smi) {
		tree_put(dir, "nvidia-smi", smi);
		snprintf(prog, sizeof(prog), "%s/nvidia-smi", dir);
		assert_int_equal(chmod(prog, 0755), 0);
		o.tools.nvidia_smi = prog;
	}
	fixture_host_path(root, sizeof(root), srcdir, host);
	if (vgpu_sysfs_open(&ctx, root, &fs) < 0)
		fail_msg("%s: %s", root, vgpu_ctx_error(&ctx));
	r = vgpu_apply_host(&ctx, fs, &o, &diffs);
	vgpu_steps_clear(&diffs);
	vgpu_sysfs_free(fs);
	tree_remove(dir);
	return r;
}

#define L40S_C1(devices)                                                                           \
	"version: v1\n"                                                                            \
	"vgpu-configs:\n"                                                                          \
	"  l:\n"                                                                                   \
	"    - devices: [\"0000:c1:00.0\"]\n"                                                      \
	"      vgpu-devices: " devices "\n"

/* Time-sliced vGPUs on free VFs: per vGPU the sysfs write, then the vGPU it makes. */
static void test_dry_run_steps_vgpus(void **state)
{
	struct vgpu_steps steps = { 0 }, seen = { 0 };
	VGPU_AUTOFREE char *got = NULL, *again = NULL;

	(void)state;
	assert_int_equal(dry_run("vfio-ts-l40s", L40S_C1("{\"L40S-8Q\": 2}"), "l", NULL, &steps),
			 0);
	got = steps_str(&steps);
	assert_string_equal(got, "write 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.4 1\n"
				 "vgpu-create 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.4 1\n"
				 "write 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.5 1\n"
				 "vgpu-create 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.5 1\n");
	assert_int_equal(steps.items[0].means, VGPU_STEP_BY_WRITE);
	assert_string_equal(steps.items[0].path,
			    "sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type");
	assert_string_equal(steps.items[0].value, "1151");
	assert_string_equal(
		steps.items[0].text,
		"write: 1151 > sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type");
	assert_string_equal(steps.items[1].text,
			    "create vGPU L40S-8Q (type 1151) on VF 0000:c1:00.4");
	/* the run's own collector is gone afterwards: the caller's callback is back */
	assert_null(ctx.step_fn);
	/* without a list, the same steps reach the context's step callback */
	ctx.step_fn = vgpu_steps_collect;
	ctx.step_data = &seen;
	assert_int_equal(dry_run("vfio-ts-l40s", L40S_C1("{\"L40S-8Q\": 2}"), "l", NULL, NULL), 0);
	ctx.step_fn = NULL;
	ctx.step_data = NULL;
	again = steps_str(&seen);
	assert_string_equal(again, got);
	vgpu_steps_clear(&steps);
	vgpu_steps_clear(&seen);
}

/* Two sizes on one GPU: mixed-size mode first, then each vGPU. */
static void test_dry_run_steps_mixed_size(void **state)
{
	struct vgpu_steps steps = { 0 };
	VGPU_AUTOFREE char *got = NULL;

	(void)state;
	assert_int_equal(dry_run("vfio-ts-l40s", L40S_C1("{\"L40S-8Q\": 1, \"L40S-4Q\": 1}"), "l",
				 NULL, &steps),
			 0);
	got = steps_str(&steps);
	assert_string_equal(got, "mixed-size-on 0000:c1:00.0 gpu - - 1\n"
				 "write 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.4 1\n"
				 "vgpu-create 0000:c1:00.0 vgpu L40S-8Q 0000:c1:00.4 1\n"
				 "write 0000:c1:00.0 vgpu L40S-4Q 0000:c1:00.5 1\n"
				 "vgpu-create 0000:c1:00.0 vgpu L40S-4Q 0000:c1:00.5 1\n");
	vgpu_steps_clear(&steps);
}

/* nvidia-smi for the dual A30: GPU 3b MIG off, af on, no GPU instance on either */
static const char smi_a30[] = "#!/bin/sh\n"
			      "case \"$*\" in\n"
			      "*--query-gpu*)\n"
			      "  case \"$2\" in\n"
			      "  0000:3b:00.0) echo '00000000:3B:00.0, Disabled, Disabled' ;;\n"
			      "  0000:af:00.0) echo '00000000:AF:00.0, Enabled, Enabled' ;;\n"
			      "  *) exit 2 ;;\n"
			      "  esac ;;\n"
			      "*-lgi*) echo 'No GPU instances found: Not Found'; exit 6 ;;\n"
			      "*) exit 2 ;;\n"
			      "esac\n";

/*
 * MIG-backed vGPUs: MIG mode where it is off, four GIs each (one program
 * run, count 4), then the vGPUs as one step of four, since their VFs' lists
 * only offer the type once the GIs are there.
 */
static void test_dry_run_steps_mig(void **state)
{
	struct vgpu_steps steps = { 0 };
	VGPU_AUTOFREE char *got = NULL;

	(void)state;
	assert_int_equal(dry_run("a30-dual-mdev", A30_MIG, "a30-1-6c", smi_a30, &steps), 0);
	got = steps_str(&steps);
	assert_string_equal(got,
			    "mig-on 0000:3b:00.0 gpu - - 1\n"
			    "gi-create 0000:3b:00.0 gpu-instance 1g.6gb,1g.6gb,1g.6gb,1g.6gb - 4\n"
			    "vgpu-create 0000:3b:00.0 vgpu A30-1-6C - 4\n"
			    "gi-create 0000:af:00.0 gpu-instance 1g.6gb,1g.6gb,1g.6gb,1g.6gb - 4\n"
			    "vgpu-create 0000:af:00.0 vgpu A30-1-6C - 4\n");
	assert_int_equal(steps.items[0].means, VGPU_STEP_BY_PROGRAM);
	assert_non_null(strstr(steps.items[0].path, "/nvidia-smi"));
	assert_non_null(strstr(steps.items[0].text, "/nvidia-smi -i 0000:3b:00.0 -mig 1"));
	assert_int_equal(steps.items[2].means, VGPU_STEP_BY_CALL);
	vgpu_steps_clear(&steps);
}

/* A step that fails: the steps before it are in the list, the error says which. */
static void test_dry_run_steps_before_failure(void **state)
{
	static const char smi[] =
		"#!/bin/sh\n"
		"case \"$*\" in\n"
		"*0000:3b:00.0*--query-gpu*) echo '00000000:3B:00.0, Disabled, Disabled' ;;\n"
		"*-lgi*) echo 'No GPU instances found: Not Found'; exit 6 ;;\n"
		"*) echo 'GPU is lost' >&2; exit 15 ;;\n"
		"esac\n";
	struct vgpu_steps steps = { 0 };
	VGPU_AUTOFREE char *got = NULL;

	(void)state;
	expect_error(dry_run("a30-dual-mdev", A30_MIG, "a30-1-6c", smi, &steps),
		     "step 1 (MIG mode): ");
	got = steps_str(&steps);
	assert_string_equal(got,
			    "mig-on 0000:3b:00.0 gpu - - 1\n"
			    "gi-create 0000:3b:00.0 gpu-instance 1g.6gb,1g.6gb,1g.6gb,1g.6gb - 4\n"
			    "vgpu-create 0000:3b:00.0 vgpu A30-1-6C - 4\n");
	vgpu_steps_clear(&steps);
}

/* Without a step callback a step is the log line it always was: "would TEXT", LOG_NOTICE. */
static void test_step_without_callback_is_logged(void **state)
{
	const struct vgpu_step st = { .kind = VGPU_STEP_VFS_ON,
				      .means = VGPU_STEP_BY_PROGRAM,
				      .object = VGPU_OBJECT_GPU,
				      .gpu = "0000:c1:00.0" };
	struct warnings w = { .n = 0 };
	struct vgpu_steps steps = { 0 };
	struct vgpu_ctx c;

	(void)state;
	vgpu_ctx_init(&c, warnings_collect, &w);
	vgpu_ctx_set_priority(&c, LOG_NOTICE);
	vgpu_step_reportf(&c, &st, "run: sriov-manage -e %s\t", "0000:c1:00.0");
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msgs[0], "would run: sriov-manage -e 0000:c1:00.0\\x09");
	/* with one, the step goes there (one line, as the log has it), and nothing is logged */
	c.step_fn = vgpu_steps_collect;
	c.step_data = &steps;
	vgpu_step_reportf(&c, &st, "run: sriov-manage -e %s\t", "0000:c1:00.0");
	assert_int_equal(w.n, 1);
	assert_int_equal(steps.n, 1);
	assert_string_equal(steps.items[0].text, "run: sriov-manage -e 0000:c1:00.0\\x09");
	assert_string_equal(steps.items[0].gpu, "0000:c1:00.0");
	assert_string_equal(vgpu_step_verb(&steps.items[0]), "run");
	vgpu_steps_clear(&steps);
	warnings_free(&w);
	vgpu_ctx_clear(&c);
}

/* ---- the per-GPU runner -------------------------------------------------------------------- */

/* What the runner passed on: "PRIORITY MESSAGE" a line. */
static void said_collect(void *data, int priority, const char *msg)
{
	char *said = data;
	size_t l = strlen(said);

	snprintf(said + l, 8192 - l, "%d %s\n", priority, msg);
}

/* In each GPU's process, after the verdict: say which it got. */
static void runner_finish(void *data, struct vgpu_apply *a, size_t i, bool commit)
{
	(void)data;
	vgpu_log(a->ctx, LOG_NOTICE, "GPU %s: %s", a->gpus[i].addr, commit ? "kept" : "undone");
}

static const struct vgpu_runner_ops runner_ops = { .finish = runner_finish };

/*
 * @label of @yaml on @s, each GPU in a process of its own, the second GPU's
 * ahead of the first; what they log goes to @said through @c.
 */
static int run_parallel(struct sim *s, const char *yaml, const char *label, struct vgpu_ctx *c,
			char *said)
{
	struct vgpu_hostcfg cfg = { 0 };
	struct vgpu_apply a = {
		.ctx = c, .file = "host.yaml", .ops = &sim_ops, .ops_data = s, .model = build(s)
	};
	int r;

	vgpu_ctx_init(c, said_collect, said);
	config(yaml, label, &cfg);
	assert_int_equal(vgpu_apply_resolve(&a, &cfg), 0);
	assert_int_equal(pipe(ahead), 0);
	r = vgpu_runner_apply(&a, &runner_ops, NULL);
	close(ahead[0]);
	close(ahead[1]);
	ahead[0] = ahead[1] = -1;
	vgpu_apply_clear(&a);
	vgpu_hostcfg_clear(&cfg);
	return r;
}

#define GPU_BLOCK(gpu, verdict)                                                                    \
	"6 MIG mode: GPU " gpu ": enabling\n"                                                      \
	"6 VFs: GPU " gpu ": enabling 4 VFs\n"                                                     \
	"6 GPU instances: GPU " gpu ": creating 4\n"                                               \
	"6 vGPUs: GPU " gpu ": creating 4 of A30-1-6C\n"                                           \
	"5 GPU " gpu ": " verdict "\n"

/* Each GPU's messages one block, in GPU order, though the second GPU ran ahead. */
static void test_runner_blocks_in_gpu_order(void **state)
{
	struct sim s = { .host = "a30-dual-mdev" };
	char said[8192] = "";
	struct vgpu_ctx c;

	(void)state;
	assert_int_equal(run_parallel(&s, A30_MIG, "a30-1-6c", &c, said), 0);
	assert_string_equal(said,
			    GPU_BLOCK("0000:3b:00.0", "kept") GPU_BLOCK("0000:af:00.0", "kept"));
	assert_int_equal(s.n_made, 0); /* the processes' hosts, not ours */
	vgpu_ctx_clear(&c);
}

/* Both GPUs fail, the second first: the message is the first GPU's, and both undo. */
static void test_runner_first_failure(void **state)
{
	struct sim s = { .host = "a30-dual-mdev", .fail_create_gis = -ENOSPC };
	char said[8192] = "";
	struct vgpu_ctx c;

	(void)state;
	assert_int_equal(run_parallel(&s, A30_MIG, "a30-1-6c", &c, said), -EIO);
	assert_string_equal(vgpu_ctx_error(&c),
			    "step 3 (GPU instances): Insufficient Resources on 0000:3b:00.0 (and "
			    "other GPUs failed: above)");
	assert_string_equal(said, "6 MIG mode: GPU 0000:3b:00.0: enabling\n"
				  "6 VFs: GPU 0000:3b:00.0: enabling 4 VFs\n"
				  "6 GPU instances: GPU 0000:3b:00.0: creating 4\n"
				  "5 GPU 0000:3b:00.0: undone\n"
				  "6 MIG mode: GPU 0000:af:00.0: enabling\n"
				  "6 VFs: GPU 0000:af:00.0: enabling 4 VFs\n"
				  "6 GPU instances: GPU 0000:af:00.0: creating 4\n"
				  "5 GPU 0000:af:00.0: undone\n");
	vgpu_ctx_clear(&c);
}

/* One GPU fails: the other, which succeeded, undoes its work too (all or none). */
static void test_runner_one_failure_undoes_all(void **state)
{
	struct sim s = { .host = "a30-dual-mdev",
			 .fail_create_gis = -ENOSPC,
			 .fail_gpu = "0000:af:00.0" };
	char said[8192] = "";
	struct vgpu_ctx c;

	(void)state;
	assert_int_equal(run_parallel(&s, A30_MIG, "a30-1-6c", &c, said), -EIO);
	assert_string_equal(vgpu_ctx_error(&c),
			    "step 3 (GPU instances): Insufficient Resources on 0000:af:00.0");
	assert_string_equal(said,
			    GPU_BLOCK("0000:3b:00.0",
				      "undone") "6 MIG mode: GPU 0000:af:00.0: enabling\n"
						"6 VFs: GPU 0000:af:00.0: enabling 4 VFs\n"
						"6 GPU instances: GPU 0000:af:00.0: creating 4\n"
						"5 GPU 0000:af:00.0: undone\n");
	vgpu_ctx_clear(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_mig_backed_derives),
		cmocka_unit_test(test_resolve_time_sliced_mig_off),
		cmocka_unit_test(test_resolve_mig_configs_layout_wins),
		cmocka_unit_test(test_resolve_max_instances_not_arithmetic),
		cmocka_unit_test(test_resolve_refusals),
		cmocka_unit_test(test_steps_cold_boot_order),
		cmocka_unit_test(test_steps_wrong_order_repaired),
		cmocka_unit_test(test_steps_assert_changes_nothing),
		cmocka_unit_test(test_steps_assert_differences_as_data),
		cmocka_unit_test(test_steps_failure_names_step),
		cmocka_unit_test(test_steps_time_sliced_fills_free_vfs),
		cmocka_unit_test(test_steps_reservations_count),
		cmocka_unit_test(test_dry_run_steps_vgpus),
		cmocka_unit_test(test_dry_run_steps_mixed_size),
		cmocka_unit_test(test_dry_run_steps_mig),
		cmocka_unit_test(test_dry_run_steps_before_failure),
		cmocka_unit_test(test_step_without_callback_is_logged),
		cmocka_unit_test(test_runner_blocks_in_gpu_order),
		cmocka_unit_test(test_runner_first_failure),
		cmocka_unit_test(test_runner_one_failure_undoes_all),
	};
	int r;

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 2;
	vgpu_ctx_init(&ctx, NULL, NULL);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	vgpu_ctx_clear(&ctx);
	return r;
}
