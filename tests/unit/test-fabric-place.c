// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-fabric-place - which fabric partition a VM takes (src/lib/fabric-place.c)
 * on the published HGX H100 8-GPU table: id 0 all eight, 1-2 the halves,
 * 3-6 the pairs, 7-14 the singles; module IDs out of PCI order.
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

#include "fabric-place.h"

/* module ID 1..8 -> PCI address: not in PCI order */
static const char *const bus_of[9] = { "",
				       "0000:9b:00.0",
				       "0000:1b:00.0",
				       "0000:cb:00.0",
				       "0000:2a:00.0",
				       "0000:db:00.0",
				       "0000:5d:00.0",
				       "0000:bb:00.0",
				       "0000:4c:00.0" };

struct board {
	struct vgpu_fabric f;
	struct vgpu_fabric_part parts[15];
	unsigned taken[16];
	size_t n_taken;
	struct vgpu_strv fit;
	struct vgpu_place_in in;
};

static void part(struct vgpu_fabric_part *p, unsigned id, unsigned first, unsigned n)
{
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->supported = true;
	p->ngpus = n;
	for (unsigned k = 0; k < n; k++) {
		p->gpu[k].module_id = first + k;
		snprintf(p->gpu[k].bus, sizeof(p->gpu[k].bus), "%s", bus_of[first + k]);
	}
}

static void board(struct board *b)
{
	memset(b, 0, sizeof(*b));
	part(&b->parts[0], 0, 1, 8);
	part(&b->parts[1], 1, 1, 4);
	part(&b->parts[2], 2, 5, 4);
	for (unsigned i = 0; i < 4; i++)
		part(&b->parts[3 + i], 3 + i, 1 + 2 * i, 2);
	for (unsigned i = 0; i < 8; i++)
		part(&b->parts[7 + i], 7 + i, 1 + i, 1);
	b->f.mode = VGPU_FABRIC_VGPU;
	b->f.v = b->parts;
	b->f.n = 15;
	for (unsigned m = 1; m <= 8; m++)
		vgpu_strv_push(&b->fit, strdup(bus_of[m]));
	b->in = (struct vgpu_place_in){ .fabric = &b->f, .taken = b->taken, .fit = &b->fit };
}

static void board_clear(struct board *b)
{
	vgpu_strv_clear(&b->fit);
}

/* Place a VM of @n GPUs; its partition is taken from now on. */
static unsigned place(struct board *b, size_t n)
{
	struct vgpu_ctx ctx = { 0 };
	struct vgpu_place pl;
	int r;

	b->in.ngpus = n;
	b->in.n_taken = b->n_taken;
	r = vgpu_fabric_place(&ctx, &b->in, &pl);
	if (r < 0)
		fail_msg("%zu GPUs: %s", n, vgpu_ctx_error(&ctx));
	assert_int_equal(pl.ngpus, n);
	b->taken[b->n_taken++] = pl.id;
	vgpu_ctx_clear(&ctx);
	return pl.id;
}

/* @n GPUs do not fit: the message says so and names @blocker. */
static void refused(struct board *b, size_t n, int err, const char *msg, const char *blocker)
{
	struct vgpu_ctx ctx = { 0 };
	struct vgpu_place pl;

	b->in.ngpus = n;
	b->in.n_taken = b->n_taken;
	assert_int_equal(vgpu_fabric_place(&ctx, &b->in, &pl), err);
	if (!strstr(vgpu_ctx_error(&ctx), msg) ||
	    (blocker && !strstr(vgpu_ctx_error(&ctx), blocker)))
		fail_msg("want '%s' and '%s' in '%s'", msg, blocker ? blocker : "",
			 vgpu_ctx_error(&ctx));
	vgpu_ctx_clear(&ctx);
}

/* Every GPU of the board is in exactly one taken partition. */
static void assert_full(struct board *b)
{
	b->in.n_taken = b->n_taken;
	for (unsigned m = 1; m <= 8; m++)
		if (!vgpu_fabric_gpu_taken(&b->in, bus_of[m], NULL))
			fail_msg("GPU %s (module %u) left free", bus_of[m], m);
	assert_int_equal(vgpu_fabric_free_count(&b->in), 0);
}

/* A 2-, a 4- and another 2-GPU VM fill the board: the 4 does not land across the first pair. */
static void test_two_four_two(void **state)
{
	struct board b;

	(void)state;
	board(&b);
	assert_int_equal(vgpu_fabric_free_count(&b.in), 15);
	assert_int_equal(place(&b, 2), 3); /* lowest id of four equal pairs */
	assert_int_equal(place(&b, 4), 2); /* half 1 holds pair 3 */
	assert_int_equal(place(&b, 2), 4); /* the pair left in half 1, not half 2's */
	assert_full(&b);
	refused(&b, 1, -ENOSPC, "no free partition of 1 GPUs", "in use");
	board_clear(&b);
}

/* A 4 first, then 2s and 1s: the small VMs keep to the broken half. */
static void test_four_then_small(void **state)
{
	struct board b;

	(void)state;
	board(&b);
	assert_int_equal(place(&b, 4), 1);
	assert_int_equal(place(&b, 1), 11); /* module 5: half 2 is broken, the pair 5-6 too */
	assert_int_equal(place(&b, 2), 6); /* 7-8: pair 5 is broken by the single */
	assert_int_equal(place(&b, 1), 12); /* module 6, the last */
	assert_full(&b);
	board_clear(&b);
}

/* One 8-GPU VM takes the whole board; then nothing is free, and why. */
static void test_eight(void **state)
{
	struct board b;

	(void)state;
	board(&b);
	assert_int_equal(place(&b, 8), 0);
	assert_full(&b);
	refused(&b, 2, -ENOSPC, "no free partition of 2 GPUs",
		"3: GPU 0000:9b:00.0 is in partition 0, in use");
	board_clear(&b);
}

/* After a single, the next single stays in the pair it broke; eight singles fill the board. */
static void test_singles(void **state)
{
	struct board b;

	(void)state;
	board(&b);
	assert_int_equal(place(&b, 1), 7);
	assert_int_equal(place(&b, 1), 8);
	assert_int_equal(place(&b, 2), 4); /* the half already broken */
	assert_int_equal(place(&b, 1), 11);
	assert_int_equal(place(&b, 1), 12);
	assert_int_equal(place(&b, 1), 13);
	assert_int_equal(place(&b, 1), 14);
	assert_full(&b);
	board_clear(&b);
}

/*
 * Best fit, not lowest id: with pair 5 (modules 5-6) taken, a 2-GPU VM takes
 * the pair left in that half (lowest id would split half 1), so a 4 fits.
 */
static void test_best_fit(void **state)
{
	struct board b;

	(void)state;
	board(&b);
	b.taken[b.n_taken++] = 5;
	assert_int_equal(place(&b, 1), 13); /* module 7: pair 6 goes, half 1 stays whole */
	assert_int_equal(place(&b, 1), 14);
	assert_int_equal(place(&b, 4), 1);
	assert_full(&b);
	board_clear(&b);
	board(&b);
	b.taken[b.n_taken++] = 5;
	assert_int_equal(place(&b, 2), 6);
	assert_int_equal(place(&b, 4), 1);
	assert_full(&b);
	board_clear(&b);
}

/* Active per Fabric Manager, unsupported, a GPU that cannot take the type, an unknown module. */
static void test_blocked(void **state)
{
	struct board b;
	struct vgpu_ctx ctx = { 0 };
	struct vgpu_place pl;

	(void)state;
	board(&b);
	b.parts[3].active = true; /* pair 3 (modules 1-2) active: a VM we do not know of */
	b.parts[4].supported = false; /* pair 4 (3-4) unsupported */
	free(b.fit.items[4]); /* module 5 cannot take the type */
	b.fit.items[4] = strdup("0000:00:00.0");
	assert_int_equal(place(&b, 2), 6); /* pair 5 holds module 5 */
	refused(&b, 2, -ENOSPC, "no free partition of 2 GPUs",
		"3: in use; 4: unsupported; 5: GPU 0000:db:00.0 cannot take the type now; 6: in use");
	refused(&b, 4, -ENOSPC, "no free partition of 4 GPUs",
		"1: GPU 0000:9b:00.0 is in partition 3");
	refused(&b, 3, -EINVAL, "no partition of the fabric has 3 GPUs", NULL);
	b.n_taken = 0;
	b.parts[9].gpu[0].bus[0] = '\0'; /* module 3 unknown to NVML */
	b.in.ngpus = 1;
	b.in.n_taken = 0;
	assert_int_equal(vgpu_fabric_place(&ctx, &b.in, &pl), 0);
	assert_int_equal(pl.id, 10); /* 7 and 8 are in active pair 3, 9 has no GPU */
	assert_string_equal(pl.gpu[0], "0000:2a:00.0");
	vgpu_ctx_clear(&ctx);
	board_clear(&b);
}

/* The partition's GPUs come out sorted by PCI address (vGPU i on GPU i). */
static void test_gpus_sorted(void **state)
{
	struct board b;
	struct vgpu_ctx ctx = { 0 };
	struct vgpu_place pl;

	(void)state;
	board(&b);
	b.in.ngpus = 4;
	assert_int_equal(vgpu_fabric_place(&ctx, &b.in, &pl), 0);
	assert_int_equal(pl.id, 1);
	assert_string_equal(pl.gpu[0], "0000:1b:00.0");
	assert_string_equal(pl.gpu[1], "0000:2a:00.0");
	assert_string_equal(pl.gpu[2], "0000:9b:00.0");
	assert_string_equal(pl.gpu[3], "0000:cb:00.0");
	board_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_four_two), cmocka_unit_test(test_four_then_small),
		cmocka_unit_test(test_eight),	     cmocka_unit_test(test_singles),
		cmocka_unit_test(test_best_fit),     cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_gpus_sorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
