// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-runs - the last result of apply and assert per command and label
 * (src/lib/runs.c), kept under ROOT/var/lib/vgpuctl/runs/ for `vgpuctl
 * metrics` and for `vgpus`, which lists a config's vGPUs as the config's
 * rather than as orphans.  Each test works in a root of its own in $TMPDIR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "test-util.h"

static int setup(void **state)
{
	struct root_fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	root_fixture_open(f, "runs");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	root_fixture_close(*state);
	free(*state);
	return 0;
}

static struct vgpu_run result(const char *command, const char *label, int exit_code, int64_t time,
			      long differences)
{
	struct vgpu_run r = { .exit_code = exit_code, .time = time, .differences = differences };

	snprintf(r.command, sizeof(r.command), "%s", command);
	snprintf(r.label, sizeof(r.label), "%s", label);
	return r;
}

static void save_ok(struct root_fixture *f, const struct vgpu_run *r, const char *file)
{
	if (vgpu_runs_save(&f->ctx, f->fs, r, file) < 0)
		fail_msg("vgpu_runs_save(%s@%s): %s", r->command, r->label,
			 vgpu_ctx_error(&f->ctx));
}

/* The content of ROOT/var/lib/vgpuctl/runs/@name, or NULL when there is none. */
static char *kept(struct root_fixture *f, const char *name)
{
	char path[PATH_MAX * 2];
	char *s = NULL;
	size_t cap = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s/%s", f->root, VGPU_RUNS_DIR, name);
	fp = fopen(path, "r");
	if (!fp)
		return NULL;
	if (getdelim(&s, &cap, '\0', fp) < 0) {
		free(s);
		s = vgpu_xstrdup("");
	}
	fclose(fp);
	return s;
}

/* What apply keeps, read back as it was: the vGPUs, the counts, the time. */
static void test_save_read_round_trip(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run r = result("apply", "l40s-8q", 0, 1700000000, 0);
	struct vgpu_run *got = NULL;
	VGPU_AUTOFREE char *text = NULL;
	size_t n;

	vgpu_strv_push(&r.vgpus, vgpu_xstrdup("0000:c1:00.4 1151"));
	vgpu_strv_push(&r.vgpus,
		       vgpu_xstrdup("0000:3b:00.4 684 1b2f0c38-0f5b-4b4e-9a52-7a3e3f7c2a11"));
	save_ok(f, &r, "/etc/vgpuctl/host.yaml");
	text = kept(f, "apply@l40s-8q");
	assert_non_null(text);
	assert_string_equal(text, "exit=0\ntime=1700000000\ndifferences=0\n"
				  "file=/etc/vgpuctl/host.yaml\n"
				  "vgpu=0000:c1:00.4 1151\n"
				  "vgpu=0000:3b:00.4 684 1b2f0c38-0f5b-4b4e-9a52-7a3e3f7c2a11\n");
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].command, "apply");
	assert_string_equal(got[0].label, "l40s-8q");
	assert_int_equal(got[0].exit_code, 0);
	assert_int_equal(got[0].time, 1700000000);
	assert_int_equal(got[0].differences, 0);
	assert_int_equal(got[0].vgpus.n, 2);
	assert_string_equal(got[0].vgpus.items[1],
			    "0000:3b:00.4 684 1b2f0c38-0f5b-4b4e-9a52-7a3e3f7c2a11");
	assert_no_warnings(&f->warn);
	vgpu_runs_free(got, n);
	vgpu_strv_clear(&r.vgpus);
}

/* One file per command and label: a later run replaces the earlier one, assert is apart. */
static void test_one_result_per_command_and_label(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run a1 = result("apply", "x", 1, 100, 2);
	struct vgpu_run a2 = result("apply", "x", 0, 200, 0);
	struct vgpu_run as = result("assert", "x", 3, 150, 5);
	struct vgpu_run *got = NULL;
	size_t n;

	save_ok(f, &a1, "c.yaml");
	save_ok(f, &as, "c.yaml");
	save_ok(f, &a2, "c.yaml");
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 2);
	/* sorted by file name: apply@x, assert@x */
	assert_string_equal(got[0].command, "apply");
	assert_int_equal(got[0].time, 200);
	assert_int_equal(got[0].exit_code, 0);
	assert_string_equal(got[1].command, "assert");
	assert_int_equal(got[1].exit_code, 3);
	assert_int_equal(got[1].differences, 5);
	vgpu_runs_free(got, n);
}

/*
 * A label is any text in a config: bytes outside [A-Za-z0-9._-] go into the
 * file name as %XX (a '/' would be a directory, a newline a second key),
 * and come back as they were.
 */
static void test_label_escaped_in_file_name(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run r = result("assert", "a b/c%\n\xc3\xa9", 0, 1, 0);
	struct vgpu_run *got = NULL;
	VGPU_AUTOFREE char *text = NULL;
	size_t n;

	save_ok(f, &r, "c.yaml");
	text = kept(f, "assert@a%20b%2Fc%25%0A%C3%A9");
	assert_non_null(text);
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].label, "a b/c%\n\xc3\xa9");
	vgpu_runs_free(got, n);
}

/*
 * A label whose file name would be longer than a file name may be is
 * refused with the label named, before anything is written; so is a result
 * without a command.
 */
static void test_label_too_long(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run r = result("apply", "", 0, 1, 0);
	struct vgpu_run *got = NULL;
	size_t n;

	/* "apply@" and 79 "%2F": 243 bytes, and ".NAME.PID.tmp" beside it more than NAME_MAX */
	memset(r.label, '/', 79);
	assert_int_equal(vgpu_runs_save(&f->ctx, f->fs, &r, "c.yaml"), -ENAMETOOLONG);
	assert_non_null(strstr(vgpu_ctx_error(&f->ctx), "is too long to keep its result"));
	r.label[78] = '\0'; /* 240 bytes: fits */
	save_ok(f, &r, "c.yaml");
	r = result("", "x", 0, 1, 0);
	assert_int_equal(vgpu_runs_save(&f->ctx, f->fs, &r, "c.yaml"), -ENAMETOOLONG);
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 1);
	assert_int_equal(strlen(got[0].label), 78);
	vgpu_runs_free(got, n);
}

/* A config path with a newline would start a key of its own: it is not kept. */
static void test_file_with_newline_not_kept(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run r = result("apply", "x", 0, 1, 0);
	VGPU_AUTOFREE char *text = NULL;

	save_ok(f, &r, "evil\nexit=0");
	text = kept(f, "apply@x");
	assert_non_null(text);
	assert_string_equal(text, "exit=0\ntime=1\ndifferences=0\nfile=\n");
}

/* No result kept yet: none, and nothing said. */
static void test_read_none(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run *got = NULL;
	size_t n = vgpu_runs_read(&f->ctx, f->fs, &got);

	assert_int_equal(n, 0);
	assert_non_null(got);
	assert_no_warnings(&f->warn);
	vgpu_runs_free(got, n);
}

/*
 * What vgpuctl did not write is skipped with a warning, the rest still read:
 * a writer's temporary file (silently), a name without '@', a bad %XX, a
 * body without its keys, an exit code out of range.
 */
static void test_read_skips_damage(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run ok = result("apply", "good", 0, 5, 0);
	struct vgpu_run *got = NULL;
	size_t n;

	save_ok(f, &ok, "c.yaml");
	tree_put(f->root, VGPU_RUNS_DIR "/.apply@good.123.tmp", "exit=0\ntime=1\ndifferences=0\n");
	tree_put(f->root, VGPU_RUNS_DIR "/no-at-sign", "exit=0\ntime=1\ndifferences=0\n");
	tree_put(f->root, VGPU_RUNS_DIR "/apply@bad%zz", "exit=0\ntime=1\ndifferences=0\n");
	tree_put(f->root, VGPU_RUNS_DIR "/apply@nokeys", "exit=0\n");
	tree_put(f->root, VGPU_RUNS_DIR "/assert@range", "exit=256\ntime=1\ndifferences=0\n");
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].label, "good");
	assert_int_equal(f->warn.n, 4);
	for (size_t i = 0; i < f->warn.n; i++)
		assert_non_null(strstr(f->warn.msgs[i], "not a result vgpuctl kept (unexpected "
							"content); skipped"));
	assert_non_null(strstr(f->warn.msgs[0], "apply@bad%zz"));
	vgpu_runs_free(got, n);
}

/*
 * Which config made a vGPU: the newest apply that lists it (parent, type
 * and, for mdev, the UUID), whatever the order of the files; assert results
 * and other vGPUs are no answer.
 */
static void test_config_of(void **state)
{
	struct root_fixture *f = *state;
	struct vgpu_run a = result("apply", "a", 0, 200, 0);
	struct vgpu_run b = result("apply", "b", 0, 100, 0);
	struct vgpu_run c = result("apply", "c", 0, 300, 0);
	struct vgpu_run chk = result("assert", "chk", 0, 400, 0);
	struct vgpu_run *got = NULL;
	size_t n;

	vgpu_strv_push(&a.vgpus, vgpu_xstrdup("0000:c1:00.4 1151"));
	vgpu_strv_push(&b.vgpus, vgpu_xstrdup("0000:c1:00.4 1151"));
	vgpu_strv_push(&b.vgpus, vgpu_xstrdup("0000:3b:00.4 684 UUID-A"));
	vgpu_strv_push(&b.vgpus, vgpu_xstrdup("0000:c1:00.6 1151"));
	vgpu_strv_push(&c.vgpus, vgpu_xstrdup("0000:c1:00.6 1151"));
	vgpu_strv_push(&chk.vgpus, vgpu_xstrdup("0000:c1:00.5 1151"));
	vgpu_strv_push(&chk.vgpus, vgpu_xstrdup("0000:c1:00.6 1151"));
	save_ok(f, &a, "c.yaml");
	save_ok(f, &b, "c.yaml");
	save_ok(f, &c, "c.yaml");
	save_ok(f, &chk, "c.yaml");
	n = vgpu_runs_read(&f->ctx, f->fs, &got);
	assert_int_equal(n, 4);
	/* read in name order (a, b, c): the newer is first once, last once */
	assert_string_equal(vgpu_runs_config_of(got, n, "0000:c1:00.4", 1151, NULL), "a");
	assert_string_equal(vgpu_runs_config_of(got, n, "0000:c1:00.6", 1151, NULL), "c");
	assert_string_equal(vgpu_runs_config_of(got, n, "0000:3b:00.4", 684, "UUID-A"), "b");
	assert_null(vgpu_runs_config_of(got, n, "0000:3b:00.4", 684, "UUID-B"));
	assert_null(vgpu_runs_config_of(got, n, "0000:3b:00.4", 684, NULL));
	assert_null(vgpu_runs_config_of(got, n, "0000:c1:00.4", 1152, NULL));
	assert_null(vgpu_runs_config_of(got, n, "0000:c1:00.5", 1151, NULL)); /* assert's */
	vgpu_runs_free(got, n);
	vgpu_strv_clear(&a.vgpus);
	vgpu_strv_clear(&b.vgpus);
	vgpu_strv_clear(&c.vgpus);
	vgpu_strv_clear(&chk.vgpus);
}

#define runs_test(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		runs_test(test_save_read_round_trip),
		runs_test(test_one_result_per_command_and_label),
		runs_test(test_label_escaped_in_file_name),
		runs_test(test_label_too_long),
		runs_test(test_file_with_newline_not_kept),
		runs_test(test_read_none),
		runs_test(test_read_skips_damage),
		runs_test(test_config_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
