// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpu_mplan_make(): where a domain migrating here lands, the one decision
 * of the destination's hook and of migrate-offer.  Over the fixture hosts
 * as read (not written): the dual A30 (mdev, 3b:00.0 on node 0, CPUs 0-23
 * and 48-71, SMT siblings c and c + 48) and the L40S (vendor VFIO).  Each
 * branch: the mdev UUID kept (its case normalized), taken by another
 * domain's record or mdev (""), a record of the domain itself (an earlier
 * attempt) not counted, no room, the interface gate, the display refusal,
 * an active record of the domain, and the pins on whole free cores with
 * other domains' CPUs left out.
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

#include "migrate-plan.h"
#include "read-host.h"
#include "sysfs.h"
#include "test-util.h"

#define DOM "11111111-2222-4333-8444-555555555551"
#define OTHER "11111111-2222-4333-8444-555555555559"
#define M1 "aaaaaaaa-2222-4333-8444-555555555551"

static const char *srcdir;

struct fx {
	struct vgpu_ctx ctx;
	struct vgpu_sysfs *fs;
	struct vgpu_model *m;
	struct vgpu_records recs; /* as read: the fixture's (none) */
	struct vgpu_record extra[4]; /* the test's, in memory */
	struct vgpu_records with; /* extra[0..n) */
	struct vgpu_mplan *out;
};

static int open_host(void **state, const char *host)
{
	struct fx *f = calloc(1, sizeof(*f));
	char root[1024];

	if (!f)
		return -1;
	vgpu_ctx_init(&f->ctx, NULL, NULL);
	fixture_host_path(root, sizeof(root), srcdir, host);
	if (vgpu_sysfs_open(&f->ctx, root, &f->fs) < 0 ||
	    vgpu_host_read(&f->ctx, f->fs, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY, &f->m, &f->recs) <
		    0)
		return -1;
	f->out = calloc(1, sizeof(*f->out));
	f->with.v = f->extra;
	*state = f;
	return f->out ? 0 : -1;
}

static int a30_setup(void **state)
{
	return open_host(state, "a30-dual-mdev");
}

static int l40s_setup(void **state)
{
	return open_host(state, "vfio-ts-l40s");
}

static int teardown(void **state)
{
	struct fx *f = *state;

	free(f->out);
	vgpu_records_clear(&f->recs);
	vgpu_model_free(f->m);
	vgpu_sysfs_free(f->fs);
	vgpu_ctx_clear(&f->ctx);
	free(f);
	return 0;
}

/* Another record in memory: domain @uuid holds mdev @mdev (or none) and CPUs @cpus (or none). */
static void add_record(struct fx *f, const char *uuid, const char *mdev, const char *cpus,
		       enum vgpu_record_state state)
{
	struct vgpu_record *r = &f->extra[f->with.n++];

	memset(r, 0, sizeof(*r));
	snprintf(r->domain, sizeof(r->domain), "%s", strcmp(uuid, DOM) ? "other" : "vm1");
	snprintf(r->domain_uuid, sizeof(r->domain_uuid), "%s", uuid);
	snprintf(r->mdev_uuid, sizeof(r->mdev_uuid), "%s", mdev ? mdev : "");
	snprintf(r->profile, sizeof(r->profile), "A30-4C");
	snprintf(r->parent, sizeof(r->parent), "0000:3b:00.4");
	r->state = state;
	if (cpus)
		assert_int_equal(vgpu_cpulist_parse(cpus, &r->cpus), 0);
}

static int make(struct fx *f, const struct vgpu_mplan_vgpu *v, size_t n, unsigned vcpus,
		bool iface_change)
{
	const struct vgpu_mplan_in in = { .uuid = DOM,
					  .vgpus = v,
					  .n_vgpus = n,
					  .vcpus = vcpus,
					  .pinned = true,
					  .iface_change = iface_change,
					  .iface_change_why = iface_change ? NULL :
									     "the gate says no" };

	vgpu_ctx_clear(&f->ctx);
	return vgpu_mplan_make(&f->ctx, f->m, &f->with, &in, f->out);
}

/* The source's UUID is free here: kept (lower case), nothing changes; pinned on node 0's cores. */
static void test_uuid_kept(void **state)
{
	struct fx *f = *state;
	const struct vgpu_mplan_vgpu v = { .profile = "A30-4C",
					   .iface = VGPU_IFACE_MDEV,
					   .mdev_uuid = "AAAAAAAA-2222-4333-8444-555555555551" };
	const struct vgpu_mplan_vgpu same = { .profile = "A30-4C",
					      .iface = VGPU_IFACE_MDEV,
					      .mdev_uuid = M1 };
	const unsigned pins[] = { 0, 48, 1, 49 };

	assert_int_equal(make(f, &v, 1, 4, false), 0);
	assert_int_equal(f->out->n_landing, 1);
	assert_string_equal(f->out->landing[0].mdev_uuid, M1);
	assert_string_equal(f->out->landing[0].gpu, "0000:3b:00.0");
	assert_int_equal(f->out->landing[0].iface, VGPU_IFACE_MDEV);
	assert_int_equal(f->out->landing[0].type_id, 683);
	assert_string_equal(f->out->landing[0].profile, "A30-4C");
	assert_true(f->out->landing[0].changed); /* the hostdev's text is upper case: rewritten */
	assert_int_equal(f->out->node, 0);
	assert_cpus(&f->out->cpus, "0-1,48-49");
	assert_int_equal(f->out->n_pins, 4);
	assert_memory_equal(f->out->pins, pins, sizeof(pins));
	/* as the hostdev names it already: nothing to rewrite */
	assert_int_equal(make(f, &same, 1, 4, false), 0);
	assert_false(f->out->landing[0].changed);
	/* an earlier attempt of the same domain holds it: not counted (the hook replaces it) */
	add_record(f, DOM, M1, "0-1,48-49", VGPU_RECORD_INCOMING);
	assert_int_equal(make(f, &same, 1, 4, false), 0);
	assert_string_equal(f->out->landing[0].mdev_uuid, M1);
	assert_cpus(&f->out->cpus, "0-1,48-49");
}

/* Another domain's record holds the UUID: "" (a new one), changed; two vGPUs never share one. */
static void test_uuid_taken(void **state)
{
	struct fx *f = *state;
	const struct vgpu_mplan_vgpu v = { .profile = "A30-4C",
					   .iface = VGPU_IFACE_MDEV,
					   .mdev_uuid = M1 };
	const struct vgpu_mplan_vgpu two[2] = { v, v };

	assert_int_equal(make(f, two, 2, 2, false), 0);
	assert_string_equal(f->out->landing[0].mdev_uuid, M1);
	assert_string_equal(f->out->landing[1].mdev_uuid, "");
	assert_true(f->out->landing[1].changed);
	add_record(f, OTHER, M1, NULL, VGPU_RECORD_ACTIVE);
	assert_int_equal(make(f, &v, 1, 2, false), 0);
	assert_string_equal(f->out->landing[0].mdev_uuid, "");
	assert_true(f->out->landing[0].changed);
}

/* Other domains' pinned CPUs are left out; the pins stay on whole cores. */
static void test_pins_whole_cores(void **state)
{
	struct fx *f = *state;
	const struct vgpu_mplan_vgpu v = { .profile = "A30-4C", .iface = VGPU_IFACE_MDEV };
	const unsigned pins[] = { 2, 50, 4, 52, 5, 53 };

	add_record(f, OTHER, NULL, "0-1,48-49", VGPU_RECORD_ACTIVE);
	add_record(f, OTHER, NULL, "3", VGPU_RECORD_INCOMING); /* core 3 is busy: 51 is not free */
	assert_int_equal(make(f, &v, 1, 5, false), 0);
	assert_int_equal(f->out->n_pins, 6); /* 5 vCPUs on 3 whole cores: a spare sibling slot */
	assert_cpus(&f->out->cpus, "2,4-5,50,52-53");
	assert_memory_equal(f->out->pins, pins, sizeof(pins));
}

/* No room: the plan's message and error. */
static void test_no_room(void **state)
{
	struct fx *f = *state;
	struct vgpu_mplan_vgpu v[3];

	for (size_t i = 0; i < 3; i++)
		v[i] = (struct vgpu_mplan_vgpu){ .profile = "A30-12C", .iface = VGPU_IFACE_MDEV };
	assert_int_equal(make(f, v, 3, 2, false), -EBUSY);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "no free VF on NUMA node 0 can take 'A30-12C' as vGPU 3 of this VM");
}

/* An active record of the domain here: it cannot migrate here. */
static void test_active_here(void **state)
{
	struct fx *f = *state;
	const struct vgpu_mplan_vgpu v = { .profile = "A30-4C", .iface = VGPU_IFACE_MDEV };

	add_record(f, DOM, M1, NULL, VGPU_RECORD_ACTIVE);
	assert_int_equal(make(f, &v, 1, 2, false), -EEXIST);
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "domain 'vm1' (" DOM
			    ") already holds A30-4C on 0000:3b:00.4 here; it cannot migrate here");
}

/* mdev on the source, a VF here: refused with the caller's why unless allowed; a display never. */
static void test_iface_gate(void **state)
{
	struct fx *f = *state;
	struct vgpu_mplan_vgpu v = { .profile = "L40S-8Q",
				     .iface = VGPU_IFACE_MDEV,
				     .mdev_uuid = M1 };

	assert_int_equal(make(f, &v, 1, 2, false), -ENOTSUP);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "vGPU 1 (L40S-8Q) is mdev on the source"));
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), ": the gate says no"));
	assert_int_equal(make(f, &v, 1, 2, true), 0);
	assert_int_equal(f->out->landing[0].iface, VGPU_IFACE_VENDOR_VFIO);
	assert_string_equal(f->out->landing[0].mdev_uuid, "");
	assert_true(f->out->landing[0].changed);
	assert_true(f->out->landing[0].parent[0]);
	v.display = true;
	assert_int_equal(make(f, &v, 1, 2, true), -ENOTSUP);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "the guest would lose its display"));
}

/* VF to VF: the source's VF address is not this host's device; changed unless the same. */
static void test_vf(void **state)
{
	struct fx *f = *state;
	struct vgpu_mplan_vgpu v = { .profile = "L40S-8Q",
				     .iface = VGPU_IFACE_VENDOR_VFIO,
				     .vf = "0000:99:00.4" };
	char vf[VGPU_BDF_LEN];

	assert_int_equal(make(f, &v, 1, 2, false), 0);
	assert_true(f->out->landing[0].changed);
	assert_string_equal(f->out->landing[0].mdev_uuid, "");
	snprintf(vf, sizeof(vf), "%s", f->out->landing[0].parent);
	v.vf = vf;
	assert_int_equal(make(f, &v, 1, 2, false), 0);
	assert_false(f->out->landing[0].changed);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_uuid_kept, a30_setup, teardown),
		cmocka_unit_test_setup_teardown(test_uuid_taken, a30_setup, teardown),
		cmocka_unit_test_setup_teardown(test_pins_whole_cores, a30_setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_room, a30_setup, teardown),
		cmocka_unit_test_setup_teardown(test_active_here, a30_setup, teardown),
		cmocka_unit_test_setup_teardown(test_iface_gate, l40s_setup, teardown),
		cmocka_unit_test_setup_teardown(test_vf, l40s_setup, teardown),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
