// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-orphans - the class of a vGPU from its evidence (src/lib/orphans.c):
 * every class, their precedence, the grace period, and missing evidence
 * that never makes a vGPU freeable (stale or orphan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "orphans.h"

/* Everything known, nobody names or holds it, no record, an hour old: an orphan. */
static struct vgpu_evidence bare(void)
{
	struct vgpu_evidence e;

	memset(&e, 0, sizeof(e));
	e.domains_known = true;
	e.holders_known = true;
	e.age_s = 3600;
	return e;
}

static void test_each_class(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_ORPHAN);
	e.holder = 42;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_IN_USE);
	e = bare();
	e.other_domain_names = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_FOREIGN);
	e = bare();
	e.wedged = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_WEDGED);
	e = bare();
	e.record = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_STALE);
	e.record_domain_names = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_OWNED);
	e = bare();
	e.config = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_CONFIG);
	assert_string_equal(vgpu_oclass_str(VGPU_OCLASS_IN_USE), "in-use");
	assert_string_equal(vgpu_oclass_str(VGPU_OCLASS_STALE), "stale");
	assert_string_equal(vgpu_oclass_str(VGPU_OCLASS_N), "unknown");
}

/* in-use > foreign > wedged > stale: a held vGPU is in use whatever else is true. */
static void test_precedence(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	e.record = true; /* stale */
	e.wedged = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_WEDGED);
	e.other_domain_names = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_FOREIGN);
	e.holder = 7;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_IN_USE);
	/* a record whose domain names it, but another domain names it too: foreign */
	e = bare();
	e.record = true;
	e.record_domain_names = true;
	e.other_domain_names = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_FOREIGN);
}

static void test_grace(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	e.age_s = 299;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_YOUNG);
	e.age_s = 300;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_ORPHAN);
	e.age_s = 0;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_ORPHAN);
	/* the grace does not protect a stale vGPU: its record says whose it was */
	e.record = true;
	assert_int_equal(vgpu_oclass_of(&e, 300), VGPU_OCLASS_STALE);
}

/* Missing evidence is never the absence of a holder or a domain. */
static void test_fail_closed(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	e.domains_known = false;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e.record = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e = bare();
	e.holders_known = false;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e.record = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e = bare();
	e.age_s = -1;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	/* what is known still counts: a holder seen is in use */
	e = bare();
	e.domains_known = false;
	e.holder = 9;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_IN_USE);
}

/* A record's vGPU that its domain does not name: stale, unless held for an incoming migration. */
static void test_incoming_conflict(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	e.record = true;
	e.incoming = true; /* its deadline is ahead: the domain is not here yet */
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_INCOMING);
	e.record_domain_names = true; /* it has arrived */
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_OWNED);
	e.record_domain_names = false;
	e.incoming = false; /* expired: like any other record */
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_STALE);
	e.conflict = true; /* something else is where the record's vGPU should be */
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_CONFLICT);
	e.holder = 3;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_IN_USE);
	assert_string_equal(vgpu_oclass_str(VGPU_OCLASS_INCOMING), "incoming");
	assert_string_equal(vgpu_oclass_str(VGPU_OCLASS_CONFLICT), "conflict");
}

/* NVML's VM ID: an instance tied to the vGPU is a VM on it; one that may be its own is no proof. */
static void test_nvml(void **state)
{
	struct vgpu_evidence e = bare();

	(void)state;
	strcpy(e.nvml_vm, "55555555-2222-4333-8444-555555555555");
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_IN_USE);
	e = bare();
	e.nvml_maybe = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e.record = true;
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_UNKNOWN);
	e.record_domain_names = true; /* its own domain's instance, most likely: owned */
	assert_int_equal(vgpu_oclass_of(&e, 0), VGPU_OCLASS_OWNED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_class),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_grace),
		cmocka_unit_test(test_fail_closed),
		cmocka_unit_test(test_incoming_conflict),
		cmocka_unit_test(test_nvml),
	};

	return cmocka_run_group_tests_name("orphans", tests, NULL, NULL);
}
