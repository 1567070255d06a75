// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-txn - a change as a transaction (src/lib/txn.c) against an in-memory
 * host: the steps' create, destroy and record writes are stand-ins
 * (struct vgpu_txn_ops) that log each call and fail where a test says.
 * Covered: commit keeps every change and undoes none; a rollback undoes in
 * reverse and says "rolled back: undid ..."; an undo that fails makes it
 * "rollback incomplete: ... FAILED to undo ..." and -EIO; a vGPU created but
 * not confirmed is still undone; one there already is no step; a failed
 * record write is undone at once; a dry run calls nothing; an interrupted
 * run starts no step.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"
#include "txn.h"

/* The in-memory host: every call the steps made, one a line, and what fails. */
static struct sim {
	char log[4096];
	int fail_create; /* -errno: create fails */
	bool created_anyway; /* with fail_create: the write took effect all the same */
	bool already; /* create: the vGPU is there (created false, 0) */
	int fail_destroy; /* -errno: every destroy fails (undo of a create too) */
	bool gone; /* destroy: nothing there (freed false, 0) */
	int fail_write; /* -errno: record_write fails */
	int fail_remove; /* -errno: record_remove fails */
} sim;

static void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sim_log(const char *fmt, ...)
{
	size_t l = strlen(sim.log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sim.log + l, sizeof(sim.log) - l, fmt, ap);
	va_end(ap);
	l = strlen(sim.log);
	snprintf(sim.log + l, sizeof(sim.log) - l, "\n");
}

static int sim_create(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		      bool *created)
{
	(void)fs;
	*created = false;
	sim_log("create %s", r->parent);
	if (sim.fail_create) {
		*created = sim.created_anyway;
		return vgpu_error(ctx, sim.fail_create, "create on %s failed", r->parent);
	}
	*created = !sim.already;
	return 0;
}

static int sim_destroy(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r,
		       bool *freed)
{
	(void)fs;
	*freed = false;
	sim_log("destroy %s", r->parent);
	if (sim.fail_destroy)
		return vgpu_error(ctx, sim.fail_destroy, "destroy on %s failed", r->parent);
	*freed = !sim.gone;
	return 0;
}

static int sim_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_record *r)
{
	(void)fs;
	sim_log("write %s %s", r->parent, r->domain);
	if (sim.fail_write)
		return vgpu_error(ctx, sim.fail_write, "record of %s not written", r->parent);
	return 0;
}

static int sim_remove(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *key)
{
	(void)fs;
	sim_log("remove %s", key);
	if (sim.fail_remove)
		return vgpu_error(ctx, sim.fail_remove, "record %s not removed", key);
	return 0;
}

static const struct vgpu_txn_ops sim_ops = {
	.create = sim_create,
	.destroy = sim_destroy,
	.record_write = sim_write,
	.record_remove = sim_remove,
};

/* A vendor-VFIO vGPU's record on VF @vf for domain @domain. */
static struct vgpu_record rec(const char *vf, const char *domain)
{
	return test_record(domain, "a1b2c3d4-0000-4000-8000-000000000001", "0000:41:00.0", vf, 1056,
			   "L40S-12Q");
}

struct fx {
	struct vgpu_ctx ctx;
	struct warnings warn;
	struct vgpu_txn txn;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	memset(&sim, 0, sizeof(sim));
	vgpu_ctx_init(&f->ctx, warnings_collect, &f->warn);
	vgpu_txn_init(&f->txn, &f->ctx, NULL, false);
	f->txn.ops = &sim_ops;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	vgpu_txn_commit(&f->txn);
	vgpu_ctx_clear(&f->ctx);
	warnings_free(&f->warn);
	free(f);
	return 0;
}

#define txn_test(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

static void test_defaults_to_live_ops(void **state)
{
	struct vgpu_txn t;

	(void)state;
	vgpu_txn_init(&t, NULL, NULL, false);
	assert_ptr_equal(t.ops, &vgpu_txn_live_ops);
	assert_non_null(vgpu_txn_live_ops.create);
	assert_non_null(vgpu_txn_live_ops.destroy);
	assert_non_null(vgpu_txn_live_ops.record_write);
	assert_non_null(vgpu_txn_live_ops.record_remove);
}

/* commit: the changes stay; no inverse runs, and the steps are forgotten. */
static void test_commit_keeps(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, NULL), 0);
	assert_int_equal(vgpu_txn_create(&f->txn, &a), 0);
	assert_int_equal(f->txn.n, 2);
	vgpu_txn_commit(&f->txn);
	assert_int_equal(f->txn.n, 0);
	assert_null(f->txn.steps);
	assert_string_equal(sim.log, "write 0000:41:00.4 vm1\ncreate 0000:41:00.4\n");
	/* a rollback after the commit has nothing left to undo */
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "write 0000:41:00.4 vm1\ncreate 0000:41:00.4\n");
}

/* rollback: every step undone, the last first, and the message says so after the cause. */
static void test_rollback_reverse_order(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1"), b = rec("0000:41:00.5", "vm1");

	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, NULL), 0);
	assert_int_equal(vgpu_txn_record_put(&f->txn, &b, NULL), 0);
	assert_int_equal(vgpu_txn_create(&f->txn, &a), 0);
	assert_int_equal(vgpu_txn_create(&f->txn, &b), 0);
	sim.log[0] = '\0';
	vgpu_error(&f->ctx, -EIO, "define failed");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_int_equal(f->txn.n, 0);
	assert_string_equal(sim.log, "destroy 0000:41:00.5\ndestroy 0000:41:00.4\n"
				     "remove 0000:41:00.5\nremove 0000:41:00.4\n");
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "define failed; rolled back: "
			    "undid 'create vGPU L40S-12Q (type 1056) on VF 0000:41:00.5', "
			    "undid 'create vGPU L40S-12Q (type 1056) on VF 0000:41:00.4', "
			    "undid 'write owner record 0000:41:00.5 (domain vm1)', "
			    "undid 'write owner record 0000:41:00.4 (domain vm1)'");
}

/* An undo that fails is said with its cause; the others are still undone; -EIO. */
static void test_rollback_incomplete(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, NULL), 0);
	assert_int_equal(vgpu_txn_create(&f->txn, &a), 0);
	sim.log[0] = '\0';
	sim.fail_destroy = -EBUSY;
	vgpu_error(&f->ctx, -EIO, "define failed");
	assert_int_equal(vgpu_txn_rollback(&f->txn), -EIO);
	assert_string_equal(sim.log, "destroy 0000:41:00.4\nremove 0000:41:00.4\n");
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "define failed; rollback incomplete: FAILED to undo 'create vGPU "
			    "L40S-12Q (type 1056) on VF 0000:41:00.4' (destroy on 0000:41:00.4 "
			    "failed), undid 'write owner record 0000:41:00.4 (domain vm1)'");
}

/* No step: the message is the first error alone. */
static void test_rollback_nothing(void **state)
{
	struct fx *f = *state;

	vgpu_error(&f->ctx, -EIO, "plan failed");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "plan failed");
	assert_string_equal(sim.log, "");
}

/* A create that took effect but was not confirmed is still freed by the rollback. */
static void test_create_unconfirmed_undone(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	sim.fail_create = -EIO;
	sim.created_anyway = true;
	assert_int_equal(vgpu_txn_create(&f->txn, &a), -EIO);
	assert_int_equal(f->txn.n, 1);
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "create 0000:41:00.4\ndestroy 0000:41:00.4\n");
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "create on 0000:41:00.4 failed; rolled "
							"back: undid 'create vGPU"));
}

/* A create that failed before taking effect is no step: nothing to free. */
static void test_create_failed_no_step(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	sim.fail_create = -EBUSY;
	assert_int_equal(vgpu_txn_create(&f->txn, &a), -EBUSY);
	assert_int_equal(f->txn.n, 0);
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "create 0000:41:00.4\n");
}

/* A vGPU there already is no step: a rollback must not free what it did not make. */
static void test_create_already_there(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	sim.already = true;
	assert_int_equal(vgpu_txn_create(&f->txn, &a), 0);
	assert_int_equal(f->txn.n, 0);
}

/* destroy: its inverse creates the vGPU again; gone already is no step. */
static void test_destroy_undone_by_create(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1"), b = rec("0000:41:00.5", "vm1");

	assert_int_equal(vgpu_txn_destroy(&f->txn, &a), 0);
	sim.gone = true;
	assert_int_equal(vgpu_txn_destroy(&f->txn, &b), 0);
	assert_int_equal(f->txn.n, 1);
	vgpu_error(&f->ctx, -EIO, "later step failed");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log,
			    "destroy 0000:41:00.4\ndestroy 0000:41:00.5\ncreate 0000:41:00.4\n");
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx),
			       "rolled back: undid 'free vGPU L40S-12Q (type 1056) on VF"));
}

/* A failed destroy is no step and returns the driver's error. */
static void test_destroy_fails(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	sim.fail_destroy = -EBUSY;
	assert_int_equal(vgpu_txn_destroy(&f->txn, &a), -EBUSY);
	assert_int_equal(f->txn.n, 0);
	assert_string_equal(vgpu_ctx_error(&f->ctx), "destroy on 0000:41:00.4 failed");
}

/* A record write that fails is undone at once: the new one removed; no step. */
static void test_record_put_fails_new(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	sim.fail_write = -ENOSPC;
	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, NULL), -ENOSPC);
	assert_int_equal(f->txn.n, 0);
	assert_string_equal(sim.log, "write 0000:41:00.4 vm1\nremove 0000:41:00.4\n");
	assert_string_equal(vgpu_ctx_error(&f->ctx), "record of 0000:41:00.4 not written");
}

/* ... or the old record put back when it replaced one. */
static void test_record_put_fails_old_back(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm2"), old = rec("0000:41:00.4", "vm1");

	sim.fail_write = -ENOSPC;
	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, &old), -ENOSPC);
	assert_int_equal(f->txn.n, 0);
	assert_string_equal(sim.log, "write 0000:41:00.4 vm2\nwrite 0000:41:00.4 vm1\n");
}

/* A put that replaced a record is undone by writing the old one again. */
static void test_record_put_undo_restores_old(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm2"), old = rec("0000:41:00.4", "vm1");

	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, &old), 0);
	vgpu_error(&f->ctx, -EIO, "x");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "write 0000:41:00.4 vm2\nwrite 0000:41:00.4 vm1\n");
}

/* drop: undone by writing the record again; a failed remove is no step. */
static void test_record_drop(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1"), b = rec("0000:41:00.5", "vm1");

	assert_int_equal(vgpu_txn_record_drop(&f->txn, &a), 0);
	sim.fail_remove = -EACCES;
	assert_int_equal(vgpu_txn_record_drop(&f->txn, &b), -EACCES);
	assert_int_equal(f->txn.n, 1);
	vgpu_error(&f->ctx, -EIO, "x");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "remove 0000:41:00.4\nremove 0000:41:00.5\n"
				     "write 0000:41:00.4 vm1\n");
	assert_string_equal(vgpu_ctx_error(&f->ctx),
			    "x; rolled back: undid 'drop owner record 0000:41:00.4 (domain vm1)'");
}

/* A dry run calls nothing, and its rollback undoes nothing and says nothing. */
static void test_dry_run_changes_nothing(void **state)
{
	struct fx *f = *state;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	vgpu_txn_init(&f->txn, &f->ctx, NULL, true);
	f->txn.ops = &sim_ops;
	sim.fail_create = sim.fail_destroy = sim.fail_write = sim.fail_remove = -EIO;
	assert_int_equal(vgpu_txn_record_put(&f->txn, &a, NULL), 0);
	assert_int_equal(vgpu_txn_create(&f->txn, &a), 0);
	assert_int_equal(vgpu_txn_destroy(&f->txn, &a), 0);
	assert_int_equal(vgpu_txn_record_drop(&f->txn, &a), 0);
	assert_int_equal(f->txn.n, 4); /* each step is still said */
	vgpu_error(&f->ctx, -EIO, "x");
	assert_int_equal(vgpu_txn_rollback(&f->txn), 0);
	assert_string_equal(sim.log, "");
	assert_string_equal(vgpu_ctx_error(&f->ctx), "x");
}

/*
 * Interrupted: no step starts (-EINTR), and the rollback undoes what was
 * done before.  In a child: the interruption cannot be taken back.
 */
static void interrupted_child(bool dry_run)
{
	struct vgpu_ctx ctx;
	struct vgpu_txn t;
	struct vgpu_record a = rec("0000:41:00.4", "vm1");

	vgpu_ctx_init(&ctx, NULL, NULL);
	vgpu_txn_init(&t, &ctx, NULL, dry_run);
	t.ops = &sim_ops;
	if (vgpu_txn_record_put(&t, &a, NULL) != 0)
		_exit(10);
	vgpu_interrupt(SIGINT);
	if (dry_run) {
		/* a dry run changes nothing, so it runs to its end */
		_exit(vgpu_txn_create(&t, &a) == 0 && strcmp(sim.log, "") == 0 ? 0 : 11);
	}
	if (vgpu_txn_create(&t, &a) != -EINTR || vgpu_txn_destroy(&t, &a) != -EINTR ||
	    vgpu_txn_record_put(&t, &a, NULL) != -EINTR || vgpu_txn_record_drop(&t, &a) != -EINTR)
		_exit(12);
	if (!strstr(vgpu_ctx_error(&ctx), "interrupted (signal 2)"))
		_exit(13);
	if (vgpu_txn_rollback(&t) != 0)
		_exit(14);
	_exit(strcmp(sim.log, "write 0000:41:00.4 vm1\nremove 0000:41:00.4\n") == 0 ? 0 : 15);
}

static void test_interrupted(void **state)
{
	(void)state;
	for (int dry = 0; dry < 2; dry++) {
		int st;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			interrupted_child(dry);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		txn_test(test_defaults_to_live_ops),
		txn_test(test_commit_keeps),
		txn_test(test_rollback_reverse_order),
		txn_test(test_rollback_incomplete),
		txn_test(test_rollback_nothing),
		txn_test(test_create_unconfirmed_undone),
		txn_test(test_create_failed_no_step),
		txn_test(test_create_already_there),
		txn_test(test_destroy_undone_by_create),
		txn_test(test_destroy_fails),
		txn_test(test_record_put_fails_new),
		txn_test(test_record_put_fails_old_back),
		txn_test(test_record_put_undo_restores_old),
		txn_test(test_record_drop),
		txn_test(test_dry_run_changes_nothing),
		txn_test(test_interrupted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
