// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-capacity - what the capacity model (src/lib/capacity.c) says about MIG
 * mode and held types it cannot name, on in-memory hosts: MIG mode is named
 * as a reason only where NVML said it, and a type a VF holds is never "not
 * offered".
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "capacity.h"

/*
 * An A30 on mdev with MIG mode @mode (NVML's answer, or unknown): its one VF
 * offers A30-4C (4 available) and lists A30-1-6C with none, as a GPU with
 * MIG off does.
 */
static struct vgpu_model *a30(enum vgpu_tristate mode, const struct vgpu_type **mig_type)
{
	struct vgpu_model *m = vgpu_model_new();
	struct vgpu_gpu *g = vgpu_model_add_gpu(m, "0000:3b:00.0", 0x20b7);
	struct vgpu_type *ts, *mig;
	struct vgpu_parent *p;

	g->iface = VGPU_IFACE_MDEV;
	g->sriov_total_vfs = g->sriov_num_vfs = 1;
	g->mig_current = g->mig_pending = mode;
	ts = vgpu_gpu_add_type(g, 683, "NVIDIA A30-4C");
	mig = vgpu_gpu_add_type(g, 689, "NVIDIA A30-1-6C");
	p = vgpu_gpu_add_parent(g, "0000:3b:00.4", 0);
	p->iface = VGPU_IFACE_MDEV;
	vgpu_parent_add_type(p, ts, 4);
	vgpu_parent_add_type(p, mig, 0);
	*mig_type = mig;
	return m;
}

static enum vgpu_cap_reason reason(const struct vgpu_model *m, const struct vgpu_type *t)
{
	struct vgpu_capacity c;
	enum vgpu_cap_reason r;

	vgpu_capacity_of(m, &m->gpus[0], t, NULL, &c);
	assert_int_equal(c.available, 0);
	r = c.reason;
	vgpu_capacity_clear(&c);
	return r;
}

/* Without NVML the lists show MIG off, but the reason does not say "off". */
static void test_mig_mode_unknown(void **state)
{
	const struct vgpu_type *t;
	struct vgpu_model *m;

	(void)state;
	m = a30(VGPU_UNKNOWN, &t);
	assert_int_equal(reason(m, t), VGPU_CAP_MIG_MODE_UNKNOWN);
	assert_string_equal(vgpu_cap_reason_code(VGPU_CAP_MIG_MODE_UNKNOWN), "mig-mode-unknown");
	vgpu_model_free(m);
	m = a30(VGPU_OFF, &t);
	assert_int_equal(reason(m, t), VGPU_CAP_MIG_MODE_OFF);
	vgpu_model_free(m);
}

/* A time-sliced type on a GPU with GPU instances: on only where NVML says on. */
static void test_mig_mode_on_unknown(void **state)
{
	const struct vgpu_type *mig;
	struct vgpu_model *m;
	struct vgpu_gpu *g;

	(void)state;
	for (int known = 0; known < 2; known++) {
		m = a30(known ? VGPU_ON : VGPU_UNKNOWN, &mig);
		g = &m->gpus[0];
		vgpu_gpu_add_gi(g, 1, NULL, -1);
		g->parents[0].types[0].available = 0; /* the lists offer no time-sliced type */
		assert_int_equal(reason(m, g->types[0]),
				 known ? VGPU_CAP_MIG_MODE_ON : VGPU_CAP_MIG_MODE_UNKNOWN);
		vgpu_model_free(m);
	}
}

/*
 * A vendor-VFIO H100 whose VF holds type 1059, named by no list (a GPU in use
 * lists only what still fits): it may be H100-3-40C, in any case.
 */
static void test_unnamed_holder(void **state)
{
	struct vgpu_model *m = vgpu_model_new();
	struct vgpu_gpu *g = vgpu_model_add_gpu(m, "0000:ca:00.0", 0x2331);
	struct vgpu_type *small;
	struct vgpu_parent *p;

	(void)state;
	g->iface = VGPU_IFACE_VENDOR_VFIO;
	small = vgpu_gpu_add_type(g, 1056, "NVIDIA H100-1-10C");
	p = vgpu_gpu_add_parent(g, "0000:ca:00.4", 0);
	p->iface = VGPU_IFACE_VENDOR_VFIO;
	p->in_use = true;
	p->current_type = 1059;
	p = vgpu_gpu_add_parent(g, "0000:ca:00.5", 1);
	p->iface = VGPU_IFACE_VENDOR_VFIO;
	vgpu_parent_add_type(p, small, 1);

	p = (struct vgpu_parent *)vgpu_model_unnamed_holder(m, "H100-3-40C");
	assert_non_null(p);
	assert_string_equal(p->addr, "0000:ca:00.4");
	assert_ptr_equal(vgpu_model_unnamed_holder(m, "h100-3-40c"), p);
	/* another board's type is not held here */
	assert_null(vgpu_model_unnamed_holder(m, "A30-6C"));
	/* once a catalogue names 1059, nothing is nameless */
	vgpu_gpu_add_type(g, 1059, "NVIDIA H100-3-40C");
	assert_null(vgpu_model_unnamed_holder(m, "H100-3-40C"));
	vgpu_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mig_mode_unknown),
		cmocka_unit_test(test_mig_mode_on_unknown),
		cmocka_unit_test(test_unnamed_holder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
