// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-mig - MIG planning (src/lib/mig.c): board lookup, PROFILE[xN]
 * requests, the exact placement search and the nvidia-smi parsers.
 *
 * Expected placements are worked out by hand from the tables in reference
 * vgpu-host.md section 4.2, not from the code: a profile alone at its maximum
 * takes its lowest legal starts; mixed layouts are listed with why.
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

#include "mig.h"
#include "test-util.h"

#define END 99 /* ends a list of starts */

static const struct vgpu_mig_board *board(const char *token)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup(token);

	if (!b)
		fail_msg("no MIG table for '%s'", token);
	return b;
}

/* Parse @args (NULL-terminated) on @b and solve beside @existing. */
static int plan(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
		const struct vgpu_mig_gi *existing, size_t n_existing, const char *const *args,
		struct vgpu_mig_gi **out, size_t *n)
{
	struct vgpu_mig_request req[16];
	size_t n_req = 0;

	for (; *args; args++) {
		assert_true(n_req < 16);
		if (vgpu_mig_parse_request(ctx, b, *args, &req[n_req]) < 0)
			fail_msg("'%s': %s", *args, vgpu_ctx_error(ctx));
		n_req++;
	}
	return vgpu_mig_solve(ctx, b, existing, n_existing, req, n_req, out, n);
}

/* The plan for @args is @want: "name@start" in creation order. */
static void expect_layout(const char *token, const char *const *args, const char *const *want)
{
	const struct vgpu_mig_board *b = board(token);
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	size_t n = 0, k = 0;

	vgpu_ctx_init(&ctx, NULL, NULL);
	if (plan(&ctx, b, NULL, 0, args, &gi, &n) < 0)
		fail_msg("%s %s...: %s", token, args[0], vgpu_ctx_error(&ctx));
	for (; want[k]; k++) {
		char got[64];

		assert_true(k < n);
		snprintf(got, sizeof(got), "%s@%u", gi[k].profile->name, gi[k].start);
		assert_string_equal(got, want[k]);
		assert_int_equal(gi[k].id, -1);
	}
	assert_int_equal(n, k);
	free(gi);
	vgpu_ctx_clear(&ctx);
}

/* The plan for @args fails with @err and a message containing @msg. */
static void expect_fail(const char *token, const struct vgpu_mig_gi *existing, size_t n_existing,
			const char *const *args, int err, const char *msg)
{
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	size_t n = 0;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(plan(&ctx, board(token), existing, n_existing, args, &gi, &n), err);
	assert_null(gi);
	if (!strstr(vgpu_ctx_error(&ctx), msg))
		fail_msg("message '%s' lacks '%s'", vgpu_ctx_error(&ctx), msg);
	assert_null(strchr(vgpu_ctx_error(&ctx), '\n'));
	vgpu_ctx_clear(&ctx);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* ---- every profile alone at its maximum, on every board -------------------------- */

struct single {
	const char *profile;
	unsigned max;
	unsigned starts[8]; /* hand-checked, END-terminated */
};

/* A30 24GB: 4 slices; 1g {0,1,2,3}, 2g {0,2}, 4g {0} (MIG UG). */
static const struct single a30[] = {
	{ "1g.6gb", 4, { 0, 1, 2, 3, END } }, { "1g.6gb+me", 1, { 0, END } },
	{ "2g.12gb", 2, { 0, 2, END } },      { "2g.12gb+me", 1, { 0, END } },
	{ "4g.24gb", 1, { 0, END } },
};

/*
 * The 8-slice geometry, by slot in table order: 1g small {0..6} x7, +me x1 at
 * 0 (longest free run 1-7), 1g large {0,2,4,6} x4, 2g {0,2,4} x3, 3g {0,4}
 * x2, 4g {0} x1, 7g {0} x1.
 */
static const struct single slots8[] = {
	{ NULL, 7, { 0, 1, 2, 3, 4, 5, 6, END } },
	{ NULL, 1, { 0, END } },
	{ NULL, 4, { 0, 2, 4, 6, END } },
	{ NULL, 3, { 0, 2, 4, END } },
	{ NULL, 2, { 0, 4, END } },
	{ NULL, 1, { 0, END } },
	{ NULL, 1, { 0, END } },
};

/* RTX PRO 6000 Blackwell (DC): 4 slices, A30 placements, MIG UG r580 maxima. */
static const struct single dc[] = {
	{ "1g.24gb", 4, { 0, 1, 2, 3, END } },	   { "1g.24gb+me", 1, { 0, END } },
	{ "1g.24gb+gfx", 4, { 0, 1, 2, 3, END } }, { "1g.24gb+me.all", 1, { 0, END } },
	{ "1g.24gb-me", 4, { 0, 1, 2, 3, END } },  { "2g.48gb", 2, { 0, 2, END } },
	{ "2g.48gb+gfx", 2, { 0, 2, END } },	   { "2g.48gb+me.all", 1, { 0, END } },
	{ "2g.48gb-me", 2, { 0, 2, END } },	   { "4g.96gb", 1, { 0, END } },
	{ "4g.96gb+gfx", 1, { 0, END } },
};

/* One token per board of vgputype.c's table. */
static const char *const all_boards[] = {
	"A30", "A100", "A100D", "A800",	  "A800D", "H100",  "H800",  "H100L", "H800L",
	"H20", "H200", "H20X",	"GH200L", "B200X", "GB200", "B300X", "DC",
};

static void check_single(const struct vgpu_mig_board *b, const struct vgpu_mig_profile *p,
			 const struct single *s)
{
	struct vgpu_mig_request req = { p, s->max };
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	size_t n = 0, k;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(p->max, s->max);
	if (vgpu_mig_solve(&ctx, b, NULL, 0, &req, 1, &gi, &n) < 0)
		fail_msg("%s %s x%u: %s", b->model, p->name, s->max, vgpu_ctx_error(&ctx));
	for (k = 0; s->starts[k] != END; k++) {
		assert_true(k < n);
		assert_ptr_equal(gi[k].profile, p);
		if (gi[k].start != s->starts[k])
			fail_msg("%s %s x%u: instance %zu at %u, want %u", b->model, p->name,
				 s->max, k, gi[k].start, s->starts[k]);
	}
	assert_int_equal(n, k);
	free(gi);
	gi = NULL;
	/* one more is refused with the maximum in the message */
	req.count++;
	assert_int_equal(vgpu_mig_solve(&ctx, b, NULL, 0, &req, 1, &gi, &n), -ENOSPC);
	assert_null(gi);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "at most"));
	assert_non_null(strstr(vgpu_ctx_error(&ctx), p->name));
	vgpu_ctx_clear(&ctx);
}

static void test_single_max_every_board(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(all_boards); i++) {
		const struct vgpu_mig_board *b = board(all_boards[i]);
		const struct single *tbl = b->mem_slices == 8		     ? slots8 :
					   strcmp(all_boards[i], "A30") == 0 ? a30 :
									       dc;
		size_t n_tbl = b->mem_slices == 8 ? ARRAY_SIZE(slots8) :
			       tbl == a30	  ? ARRAY_SIZE(a30) :
						    ARRAY_SIZE(dc);

		assert_int_equal(b->n_profiles, n_tbl);
		for (size_t k = 0; k < n_tbl; k++) {
			if (tbl[k].profile)
				assert_string_equal(b->profiles[k].name, tbl[k].profile);
			check_single(b, &b->profiles[k], &tbl[k]);
		}
	}
}

/* ---- mixed layouts ---------------------------------------------------------------- */

static void test_mixed_layouts(void **state)
{
	(void)state;
	/* 2g first; 2g at 0 or at 2 both leave no free slice: the lower wins */
	expect_layout("A30", ARGS("2g.12gb", "1g.6gbx2"),
		      ARGS("2g.12gb@0", "1g.6gb@2", "1g.6gb@3"));
	/*
	 * 3-2-1-1: with 3g at 0, slices 4-7 hold 2g at 4 and 1g at 6 but no
	 * 1g small at 7, so 3g goes to 4 (the MIG UG's "create 3g.20gb first").
	 */
	expect_layout("A100", ARGS("1g.5gbx2", "2g.10gb", "3g.20gb"),
		      ARGS("3g.20gb@4", "2g.10gb@0", "1g.5gb@2", "1g.5gb@3"));
	expect_layout("A100", ARGS("3g.20gb", "4g.20gb"), ARGS("4g.20gb@0", "3g.20gb@4"));
	expect_layout("A100", ARGS("1g.10gb x4"),
		      ARGS("1g.10gb@0", "1g.10gb@2", "1g.10gb@4", "1g.10gb@6"));
	expect_layout("A100", ARGS("2g.10gbx3", "1g.5gb"),
		      ARGS("2g.10gb@0", "2g.10gb@2", "2g.10gb@4", "1g.5gb@6"));
	expect_layout("A100", ARGS("3g.20gb", "3g.20gb"), ARGS("3g.20gb@0", "3g.20gb@4"));
	/*
	 * 1g.10gb takes two memory slices but one compute slice: with three 2g
	 * (0, 2, 4) it still fits at 6:2 (8 of 8 memory, 7 of 7 compute).
	 */
	expect_layout("A100", ARGS("2g.10gbx3", "1g.10gb"),
		      ARGS("2g.10gb@0", "2g.10gb@2", "2g.10gb@4", "1g.10gb@6"));
	expect_layout("H100", ARGS("H100-3-40C", "H100-2-20C", "H100-1-10Cx2"),
		      ARGS("3g.40gb@4", "2g.20gb@0", "1g.10gb@2", "1g.10gb@3"));
	expect_layout("DC", ARGS("2g.48gb+gfx", "1g.24gb+gfxx2"),
		      ARGS("2g.48gb+gfx@0", "1g.24gb+gfx@2", "1g.24gb+gfx@3"));
	/* the same profile named twice is one request of the sum */
	expect_layout("A30", ARGS("1g.6gb", "1g.6gbx2"), ARGS("1g.6gb@0", "1g.6gb@1", "1g.6gb@2"));
}

/* The longest free run wins; between equal runs, the lowest starts. */
static void test_prefers_largest_free_block(void **state)
{
	(void)state;
	/* at 0 or at 3 both leave 3 free slices: the lower end */
	expect_layout("A30", ARGS("1g.6gb"), ARGS("1g.6gb@0"));
	/* at 0 leaves 1-7 free (7); anywhere in the middle splits the GPU */
	expect_layout("A100", ARGS("1g.5gb"), ARGS("1g.5gb@0"));
	expect_layout("A100", ARGS("1g.5gbx2"), ARGS("1g.5gb@0", "1g.5gb@1"));
	/* 2g at 0 leaves 2-7 (6) */
	expect_layout("H100L", ARGS("2g.24gb"), ARGS("2g.24gb@0"));
	/* 3g at 0 or 4 both leave 4 */
	expect_layout("H200", ARGS("3g.71gb"), ARGS("3g.71gb@0"));
	/* 1g large at 0 leaves 2-7 */
	expect_layout("B200X", ARGS("1g.45gb"), ARGS("1g.45gb@0"));
	/* 2g + 1g small: 2g at 0, 1g at 2 leaves 3-7 (5) */
	expect_layout("A100", ARGS("1g.5gb", "2g.10gb"), ARGS("2g.10gb@0", "1g.5gb@2"));
}

static void test_vgpu_profiles(void **state)
{
	(void)state;
	expect_layout("A30", ARGS("A30-1-6Cx4"),
		      ARGS("1g.6gb@0", "1g.6gb@1", "1g.6gb@2", "1g.6gb@3"));
	expect_layout("A30", ARGS("NVIDIA A30-1-6CME", "GRID A30-2-12C"),
		      ARGS("2g.12gb@0", "1g.6gb+me@2"));
	expect_layout("H100", ARGS("H100-3-40C"), ARGS("3g.40gb@0"));
	expect_layout("H100", ARGS("H100XM-7-80C"), ARGS("7g.80gb@0"));
	expect_layout("H100L", ARGS("H100L-1-24C"), ARGS("1g.24gb@0"));
	/*
	 * DC types run on +gfx GIs, time-sliced inside: DC-1-12C is a 1g.24gb+gfx
	 * holding two, so two need one GI and three need two; DC-1-8C x12 fills 4
	 */
	expect_layout("DC", ARGS("DC-1-12Cx2"), ARGS("1g.24gb+gfx@0"));
	expect_layout("DC", ARGS("DC-1-12Cx3"), ARGS("1g.24gb+gfx@0", "1g.24gb+gfx@1"));
	expect_layout("DC", ARGS("DC-1-8Cx12"),
		      ARGS("1g.24gb+gfx@0", "1g.24gb+gfx@1", "1g.24gb+gfx@2", "1g.24gb+gfx@3"));
	/* IDs and "MIG " names as nvidia-smi prints them */
	expect_layout("A30", ARGS("5", "MIG 1g.6gb"), ARGS("2g.12gb@0", "1g.6gb@2"));
	expect_layout("A100", ARGS("19x7"),
		      ARGS("1g.5gb@0", "1g.5gb@1", "1g.5gb@2", "1g.5gb@3", "1g.5gb@4", "1g.5gb@5",
			   "1g.5gb@6"));
}

static void expect_bad_request(const char *token, const char *arg, const char *msg)
{
	struct vgpu_mig_request r = { NULL, 0 };
	struct vgpu_ctx ctx;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_mig_parse_request(&ctx, board(token), arg, &r), -EINVAL);
	assert_null(r.profile);
	if (!strstr(vgpu_ctx_error(&ctx), msg))
		fail_msg("'%s': message '%s' lacks '%s'", arg, vgpu_ctx_error(&ctx), msg);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), arg));
	assert_null(strchr(vgpu_ctx_error(&ctx), '\n'));
	vgpu_ctx_clear(&ctx);
}

static void test_bad_requests(void **state)
{
	(void)state;
	expect_bad_request("A30", "3g.18gb",
			   "not a MIG profile of A30 24GB (profiles: 1g.6gb (14), 1g.6gb+me (21), "
			   "2g.12gb (5), 2g.12gb+me (6), 4g.24gb (0))");
	expect_bad_request("A30", "A30-6C", "time-sliced");
	expect_bad_request("A30", "A100-1-5C", "a vGPU type of A100 40GB, not of A30 24GB");
	expect_bad_request("H100", "H100L-1-24C", "not of H100 80GB");
	expect_bad_request("A30", "1g.6gbx0", "count '0' is outside 1..64");
	expect_bad_request("A30", "1g.6gbx65", "outside 1..64");
	expect_bad_request("A30", "1g.6gbx99999999999", "outside 1..64");
	expect_bad_request("A30", "99", "not a MIG profile");
	expect_bad_request("A30", "x4", "not a MIG profile");
	expect_bad_request("A30", "", "not a MIG profile");
	/* an attribute on DC names no GI (nothing says which one it runs on) */
	expect_bad_request("DC", "DC-1-24CME", "no GPU instance profile");
}

/* ---- impossible mixes -------------------------------------------------------------- */

static void test_impossible(void **state)
{
	(void)state;
	expect_fail("A30", NULL, 0, ARGS("4g.24gb", "1g.6gb"), -ENOSPC,
		    "4g.24gb + 1g.6gb do not fit on A30 24GB: 5 of 4 memory slices");
	expect_fail("A30", NULL, 0, ARGS("A30-1-6CME", "1g.6gb+me"), -ENOSPC,
		    "1g.6gb+me: at most 1 per GPU on A30 24GB (2 asked)");
	expect_fail("A100", NULL, 0, ARGS("4g.20gb", "4g.20gb"), -ENOSPC,
		    "4g.20gb: at most 1 per GPU");
	expect_fail("A100", NULL, 0, ARGS("3g.20gbx2", "1g.5gb"), -ENOSPC,
		    "3g.20gb x2 + 1g.5gb do not fit on A100 40GB: 9 of 8 memory slices");
	/* 8 of 8 memory slices but 8 of 7 compute */
	expect_fail("A100", NULL, 0, ARGS("1g.5gbx6", "2g.10gb"), -ENOSPC,
		    "2g.10gb + 1g.5gb x6 do not fit on A100 40GB: 8 of 7 compute slices");
	expect_fail("A100", NULL, 0, ARGS("7g.40gb", "1g.5gb"), -ENOSPC, "9 of 8 memory slices");
	expect_fail("A30", NULL, 0, ARGS("1g.6gbx64"), -ENOSPC, "1g.6gb: at most 4 per GPU");
}

/* ---- existing GIs ------------------------------------------------------------------- */

static void test_existing(void **state)
{
	const struct vgpu_mig_board *a30b = board("A30"), *a100 = board("A100");
	const struct vgpu_mig_profile *g1 = &a30b->profiles[0], *g2 = &a30b->profiles[2];
	struct vgpu_mig_gi one_at_1[] = { { g1, 1, 3 } };
	struct vgpu_mig_gi both_ends[] = { { g1, 0, 1 }, { g1, 3, 2 } };
	struct vgpu_mig_gi a100_1[] = { { &a100->profiles[0], 1, 7 } };
	struct vgpu_mig_gi bad_start[] = { { g2, 1, 1 } };
	struct vgpu_mig_gi overlap[] = { { g2, 0, 1 }, { g1, 1, 2 } };
	struct vgpu_mig_request req = { g2, 1 };
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	size_t n = 0;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	/* an existing 1g.6gb at 1 leaves 2g.12gb only at 2 */
	assert_int_equal(vgpu_mig_solve(&ctx, a30b, one_at_1, 1, &req, 1, &gi, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(gi[0].start, 2);
	assert_int_equal(vgpu_mig_largest_free(a30b, gi, n), 2);
	free(gi);
	gi = NULL;
	/* and the 1g.6gb beside it goes to 0, the only slice left */
	req = (struct vgpu_mig_request){ g1, 2 };
	assert_int_equal(vgpu_mig_solve(&ctx, a30b, one_at_1, 1, &req, 1, &gi, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gi[0].start, 0);
	assert_int_equal(gi[1].start, 2);
	free(gi);
	gi = NULL;
	vgpu_ctx_clear(&ctx);
	expect_fail("A30", both_ends, 2, ARGS("2g.12gb"), -ENOSPC,
		    "2g.12gb on A30 24GB: no placement (2g.12gb starts only at 0 or 2; in use: "
		    "1g.6gb at 0, 1g.6gb at 3)");
	expect_fail("A30", one_at_1, 1, ARGS("1g.6gbx4"), -ENOSPC,
		    "1g.6gb: at most 4 per GPU on A30 24GB (4 asked, more exist)");
	expect_fail("A30", one_at_1, 1, ARGS("2g.12gbx2"), -ENOSPC,
		    "2g.12gb x2 do not fit on A30 24GB: 5 of 4 memory slices (1 in use)");
	expect_fail("A100", a100_1, 1, ARGS("2g.10gbx3"), -ENOSPC,
		    "2g.10gb x3 on A100 40GB: no placement (2g.10gb starts only at 0, 2 or 4; "
		    "in use: 1g.5gb at 1)");
	expect_fail("A30", bad_start, 1, ARGS("1g.6gb"), -EINVAL, "2g.12gb cannot start at 1");
	expect_fail("A30", overlap, 2, ARGS("1g.6gb"), -EINVAL, "overlaps");
	expect_fail("A30", a100_1, 1, ARGS("1g.6gb"), -EINVAL, "is not one of A30 24GB");
}

/* ---- which table ---------------------------------------------------------------------- */

static void test_board_lookup(void **state)
{
	(void)state;
	assert_ptr_equal(vgpu_mig_board_lookup("A30"), board("A30"));
	assert_ptr_equal(vgpu_mig_board_lookup("a30"), board("A30"));
	assert_ptr_equal(vgpu_mig_board_lookup("A100 80GB"), board("A100D"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA A100-PCIE-40GB"), board("A100"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA A100 80GB PCIe"), board("A100D"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA H100 PCIe"), board("H100"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA H100 80GB HBM3"), board("H100"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA H100 NVL"), board("H100L"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA H200 NVL"), board("H200"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA B200"), board("B200X"));
	assert_ptr_equal(vgpu_mig_board_lookup("NVIDIA RTX PRO 6000 Blackwell Server Edition"),
			 board("DC"));
	/* another memory size is another part: no table rather than a wrong one */
	assert_null(vgpu_mig_board_lookup("NVIDIA A100-SXM-64GB"));
	assert_null(vgpu_mig_board_lookup("NVIDIA L40S"));
	assert_null(vgpu_mig_board_lookup("NVIDIA A30X"));
	assert_null(vgpu_mig_board_lookup(""));
}

static void test_board_for_gpu(void **state)
{
	VGPU_AUTOPTR(model) m = vgpu_model_new();
	struct vgpu_gpu *g;

	(void)state;
	/* a MIG-backed type names the board, whatever the device ID says */
	g = vgpu_model_add_gpu(m, "0000:3b:00.0", 0x2331);
	vgpu_gpu_add_type(g, 1, "NVIDIA H100L-4Q");
	vgpu_gpu_add_type(g, 2, "NVIDIA A30-1-6C");
	assert_ptr_equal(vgpu_mig_board_for_gpu(g), board("A30"));
	/* a time-sliced type only */
	g = vgpu_model_add_gpu(m, "0000:3c:00.0", 0);
	vgpu_gpu_add_type(g, 1, "NVIDIA H100L-94C");
	assert_ptr_equal(vgpu_mig_board_for_gpu(g), board("H100L"));
	/* the PCI device ID */
	g = vgpu_model_add_gpu(m, "0000:3d:00.0", 0x2331);
	assert_ptr_equal(vgpu_mig_board_for_gpu(g), board("H100"));
	g = vgpu_model_add_gpu(m, "0000:3e:00.0", 0x20b5);
	assert_ptr_equal(vgpu_mig_board_for_gpu(g), board("A100D"));
	/* the model string */
	g = vgpu_model_add_gpu(m, "0000:3f:00.0", 0x1234);
	g->model = vgpu_xstrdup("NVIDIA A30");
	assert_ptr_equal(vgpu_mig_board_for_gpu(g), board("A30"));
	/* not a MIG GPU */
	g = vgpu_model_add_gpu(m, "0000:40:00.0", 0x26b9);
	g->model = vgpu_xstrdup("NVIDIA L40S");
	vgpu_gpu_add_type(g, 1, "NVIDIA L40S-4Q");
	assert_null(vgpu_mig_board_for_gpu(g));
}

/* ---- nvidia-smi output ------------------------------------------------------------------- */

/* An A30 after `nvidia-smi mig -cgi 5,14,14 -C` (format: reference section 4.4). */
static const char lgi_a30[] = "+-------------------------------------------------------+\n"
			      "| GPU instances:                                        |\n"
			      "| GPU   Name             Profile  Instance   Placement  |\n"
			      "|                          ID       ID       Start:Size |\n"
			      "|=======================================================|\n"
			      "|   0  MIG 2g.12gb          5        1          0:2     |\n"
			      "+-------------------------------------------------------+\n"
			      "|   0  MIG 1g.6gb          14        5          2:1     |\n"
			      "+-------------------------------------------------------+\n"
			      "|   0  MIG 1g.6gb          14        6          3:1     |\n"
			      "+-------------------------------------------------------+\n";

/* The same rows with other spacing, tabs and CRLF: spaces are collapsed. */
static const char lgi_a30_odd[] = "| GPU instances: |\r\n"
				  "|0 MIG 2g.12gb 5 1 0:2|\r\n"
				  "|\t0\tMIG   1g.6gb\t14  5   2:1   |\n"
				  "|   0  MIG 1g.6gb          14        6          3:1";

/* An H100 80GB with 3g.40gb, 2g.20gb and two 1g.10gb (fixture vfio-mig-h100). */
static const char lgi_h100[] = "+---------------------------------------------------------+\n"
			       "| GPU instances:                                          |\n"
			       "| GPU   Name               Profile  Instance   Placement  |\n"
			       "|                            ID       ID       Start:Size |\n"
			       "|=========================================================|\n"
			       "|   0  MIG 3g.40gb            9        2          4:4     |\n"
			       "+---------------------------------------------------------+\n"
			       "|   0  MIG 2g.20gb           14        3          0:2     |\n"
			       "+---------------------------------------------------------+\n"
			       "|   0  MIG 1g.10gb           19        9          2:1     |\n"
			       "+---------------------------------------------------------+\n"
			       "|   0  MIG 1g.10gb           19       10          3:1     |\n"
			       "+---------------------------------------------------------+\n";

/*
 * An H100 NVL with the GIs of 3 x H100L-2-24C + 1 x H100L-1-12C (issue 26), rows as -lgi
 * orders them (profile ID descending, then GI ID): apply counts what fits from these.
 */
static const char lgi_h100l[] = "+-------------------------------------------------------+\n"
				"| GPU instances:                                        |\n"
				"| GPU   Name             Profile  Instance   Placement  |\n"
				"|                          ID       ID       Start:Size |\n"
				"|=======================================================|\n"
				"|   0  MIG 1g.12gb         19        4          6:1     |\n"
				"+-------------------------------------------------------+\n"
				"|   0  MIG 2g.24gb         14        1          0:2     |\n"
				"+-------------------------------------------------------+\n"
				"|   0  MIG 2g.24gb         14        2          2:2     |\n"
				"+-------------------------------------------------------+\n"
				"|   0  MIG 2g.24gb         14        3          4:2     |\n"
				"+-------------------------------------------------------+\n";

static void expect_lgi(const char *token, const char *text, const char *want)
{
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	char got[256] = "";
	size_t n = 99;

	vgpu_ctx_init(&ctx, NULL, NULL);
	if (vgpu_mig_parse_lgi(&ctx, board(token), text, &gi, &n) < 0)
		fail_msg("%s", vgpu_ctx_error(&ctx));
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s#%d@%u", i ? " " : "",
			 gi[i].profile->name, gi[i].id, gi[i].start);
	assert_string_equal(got, want);
	free(gi);
	vgpu_ctx_clear(&ctx);
}

static void expect_lgi_fail(const char *token, const char *text, const char *msg)
{
	struct vgpu_mig_gi *gi = NULL;
	struct vgpu_ctx ctx;
	size_t n = 99;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_mig_parse_lgi(&ctx, board(token), text, &gi, &n), -EINVAL);
	assert_null(gi);
	assert_int_equal(n, 99);
	if (!strstr(vgpu_ctx_error(&ctx), msg))
		fail_msg("message '%s' lacks '%s'", vgpu_ctx_error(&ctx), msg);
	vgpu_ctx_clear(&ctx);
}

static void test_parse_lgi(void **state)
{
	(void)state;
	expect_lgi("A30", lgi_a30, "2g.12gb#1@0 1g.6gb#5@2 1g.6gb#6@3");
	expect_lgi("A30", lgi_a30_odd, "2g.12gb#1@0 1g.6gb#5@2 1g.6gb#6@3");
	expect_lgi("H100", lgi_h100, "3g.40gb#2@4 2g.20gb#3@0 1g.10gb#9@2 1g.10gb#10@3");
	expect_lgi("H100L", lgi_h100l, "1g.12gb#4@6 2g.24gb#1@0 2g.24gb#2@2 2g.24gb#3@4");
	/* MIG mode off: the message and exit 0 (reference 4.4) */
	expect_lgi("H100", "No MIG-enabled devices found.\n", "");
	expect_lgi("A30", "No GPU instances found: Not Found\n", "");
	expect_lgi("A30",
		   "+------------------+\n| GPU instances:   |\n| GPU Name Profile |\n"
		   "+------------------+\n",
		   "");
	expect_lgi_fail("A30", "", "not the output of nvidia-smi mig -lgi");
	expect_lgi_fail("A30", "No devices were found\n", "not the output");
	expect_lgi_fail("A30", "|   0  MIG 3g.20gb     9    1    0:4  |\n", "'3g.20gb' (ID 9)");
	expect_lgi_fail("A30", "|   0  MIG 1g.6gb     5    1    0:1  |\n", "(ID 5)");
	expect_lgi_fail("A30", "|   0  MIG 2g.12gb    5    1    1:2  |\n", "cannot be at 1:2");
	expect_lgi_fail("A30", "|   0  MIG 2g.12gb    5    1    0:1  |\n", "cannot be at 0:1");
	expect_lgi_fail("A30", "|   0  MIG 2g.12gb    5    1    0-2  |\n", "cannot read the row");
	expect_lgi_fail("A30", "|   0  2g.12gb    5    1    0:2  |\n", "cannot read the row");
	expect_lgi_fail("A30", "|   0  MIG 1g.6gb 14 1 0:1 |\n|   1  MIG 1g.6gb 14 1 0:1 |\n",
			"rows of GPUs 0 and 1");
	expect_lgi_fail("A30",
			"|0 MIG 1g.6gb 14 1 0:1|\n|0 MIG 1g.6gb 14 2 1:1|\n"
			"|0 MIG 1g.6gb 14 3 2:1|\n|0 MIG 1g.6gb 14 4 3:1|\n"
			"|0 MIG 1g.6gb 14 5 3:1|\n",
			"more than 4 GIs");
}

/* Parsed GIs are the solver's existing ones: the fixture H100's four GIs fill all 8 slices. */
static void test_lgi_then_plan(void **state)
{
	const struct vgpu_mig_board *b = board("H100");
	struct vgpu_mig_gi *gi = NULL, *out = NULL;
	struct vgpu_mig_request req;
	struct vgpu_ctx ctx;
	size_t n = 0, n_out = 0;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_mig_parse_lgi(&ctx, b, lgi_h100, &gi, &n), 0);
	assert_int_equal(vgpu_mig_parse_request(&ctx, b, "1g.10gb", &req), 0);
	assert_int_equal(vgpu_mig_solve(&ctx, b, gi, n, &req, 1, &out, &n_out), -ENOSPC);
	assert_string_equal(vgpu_ctx_error(&ctx),
			    "1g.10gb does not fit on H100 80GB: 9 of 8 memory slices (8 in use)");
	free(gi);
	vgpu_ctx_clear(&ctx);
}

static void test_parse_mode(void **state)
{
	static const struct {
		const char *text;
		int cur, pend;
	} ok[] = {
		{ "00000000:36:00.0, Enabled, Enabled\n", 1, 1 },
		{ "00000000:36:00.0, Enabled, Disabled\n", 1, 0 },
		{ "00000000:3B:00.0, Disabled, Enabled", 0, 1 },
		{ "  00000000:3B:00.0 ,Disabled ,  Disabled \r\n\n", 0, 0 },
		{ "00000000:41:00.0, [N/A], [N/A]\n", -1, -1 },
	};
	static const char *const bad[] = {
		"",
		"No devices were found\n",
		"00000000:36:00.0, Enabled\n",
		"00000000:36:00.0, Enabled, Enabled, Enabled\n",
		"00000000:36:00.0, enabled, Enabled\n",
		"00000000:36:00.0, Enabled, Enabled\n00000000:37:00.0, Enabled, Enabled\n",
	};
	struct vgpu_ctx ctx;
	int cur = 7, pend = 7;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		if (vgpu_mig_parse_mode(&ctx, ok[i].text, &cur, &pend) < 0)
			fail_msg("'%s': %s", ok[i].text, vgpu_ctx_error(&ctx));
		assert_int_equal(cur, ok[i].cur);
		assert_int_equal(pend, ok[i].pend);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cur = pend = 7;
		if (vgpu_mig_parse_mode(&ctx, bad[i], &cur, &pend) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(cur, 7);
		assert_int_equal(pend, 7);
		assert_null(strchr(vgpu_ctx_error(&ctx), '\n'));
	}
	vgpu_ctx_clear(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_max_every_board),
		cmocka_unit_test(test_mixed_layouts),
		cmocka_unit_test(test_prefers_largest_free_block),
		cmocka_unit_test(test_vgpu_profiles),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_impossible),
		cmocka_unit_test(test_existing),
		cmocka_unit_test(test_board_lookup),
		cmocka_unit_test(test_board_for_gpu),
		cmocka_unit_test(test_parse_lgi),
		cmocka_unit_test(test_lgi_then_plan),
		cmocka_unit_test(test_parse_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
