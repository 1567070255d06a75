// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * External programs: argv only, captured output with a cap, a deadline that
 * kills the whole process group, and one-line failure messages.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <unistd.h>

#include "exec.h"

static struct vgpu_ctx ctx;

static void test_exit_and_output(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo one >&2; echo two >&2; exit 3", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec(&ctx, argv, 5000, &r), 0);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "one\ntwo\n");
	vgpu_exec_clear(&r);
	assert_int_equal(vgpu_exec_ok(&ctx, argv, 5000, &r), -EIO);
	assert_string_equal(
		vgpu_ctx_error(&ctx),
		"'sh -c 'echo out; echo one >&2; echo two >&2; exit 3'' failed (exit 3): two");
	vgpu_exec_clear(&r);
}

/* nvidia-smi reports failures on stdout: the message quotes it when stderr is empty */
static void test_stdout_reason(void **state)
{
	const char *argv[] = { "sh", "-c", "echo 'No devices were found'; exit 6", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec_ok(&ctx, argv, 5000, &r), -EIO);
	assert_string_equal(vgpu_ctx_error(&ctx),
			    "'sh -c 'echo '\\''No devices were found'\\''; "
			    "exit 6'' failed (exit 6): No devices were found");
	vgpu_exec_clear(&r);
}

/* a program that never ends, with a child holding the pipes open: killed, group and all */
static void test_timeout_kills_group(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec(&ctx, argv, 300, &r), -ETIMEDOUT);
	assert_true(r.elapsed_ms < 10000);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "did not finish in 1 s; killed"));
	vgpu_exec_clear(&r);
}

/* gone, or a zombie its new parent has not reaped yet */
static bool dead(pid_t pid)
{
	char path[64], buf[256];
	FILE *f;
	char *p;
	bool z = false;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		z = p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return z;
}

static void interrupt_now(int sig)
{
	(void)sig;
	vgpu_interrupt(SIGINT);
}

/*
 * Ctrl-C while a program runs in its own process group: it and what it
 * started are stopped and waited for, and nothing starts after.  Last: the
 * flag is the process's for good.
 */
static void test_interrupt_stops_group(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 30 & echo $!; wait", NULL };
	char mark[] = "/tmp/vgpu-exec-XXXXXX";
	const char *after[] = { "touch", mark, NULL };
	struct itimerval t = { .it_value = { .tv_usec = 300000 } };
	struct vgpu_exec_result r;
	long grandchild;
	int fd = mkstemp(mark), gone = 0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(mark);
	signal(SIGALRM, interrupt_now);
	setitimer(ITIMER_REAL, &t, NULL);
	assert_int_equal(vgpu_exec(&ctx, argv, 60000, &r), -EINTR);
	assert_true(r.elapsed_ms < VGPU_EXEC_STOP_MS);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "interrupted (signal 2)"));
	grandchild = strtol(r.out, NULL, 10);
	assert_true(grandchild > 1);
	for (int i = 0; i < 100 && !gone; i++, usleep(20000))
		gone = dead((pid_t)grandchild);
	assert_true(gone);
	vgpu_exec_clear(&r);
	assert_int_equal(vgpu_exec(&ctx, after, 60000, &r), -EINTR);
	assert_int_equal(access(mark, F_OK), -1);
	vgpu_exec_clear(&r);
}

static void test_missing_program(void **state)
{
	const char *abs[] = { "/nonexistent/sriov-manage", "-e", "ALL", NULL };
	const char *path[] = { "vgpuctl-no-such-program", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec(&ctx, abs, 1000, &r), -ENOENT);
	assert_string_equal(vgpu_ctx_error(&ctx),
			    "cannot run '/nonexistent/sriov-manage': No such file or directory");
	vgpu_exec_clear(&r);
	assert_int_equal(vgpu_exec(&ctx, path, 1000, &r), -ENOENT);
	assert_string_equal(vgpu_ctx_error(&ctx),
			    "cannot run 'vgpuctl-no-such-program': not found in "
			    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	vgpu_exec_clear(&r);
}

/* a name is never looked up in $PATH: not in ".", not in a directory PATH names */
static void test_no_path_lookup(void **state)
{
	char dir[] = "/tmp/vgpu-exec-XXXXXX", prog[64], cwd[4096];
	const char *argv[] = { "vgpuctl-planted", NULL };
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	struct vgpu_exec_result r;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/vgpuctl-planted", dir);
	f = fopen(prog, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\necho planted\n", f);
	fclose(f);
	assert_int_equal(chmod(prog, 0755), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	setenv("PATH", ".:", 1);
	assert_int_equal(vgpu_exec(&ctx, argv, 1000, &r), -ENOENT);
	vgpu_exec_clear(&r);
	setenv("PATH", dir, 1);
	assert_int_equal(vgpu_exec(&ctx, argv, 1000, &r), -ENOENT);
	vgpu_exec_clear(&r);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	assert_int_equal(chdir(cwd), 0);
	unlink(prog);
	rmdir(dir);
}

/* output beyond the cap is read (the program is not blocked) and dropped */
static void test_output_cap(void **state)
{
	const char *argv[] = { "sh", "-c", "head -c 3000000 /dev/zero; echo done >&2", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec(&ctx, argv, 20000, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, VGPU_EXEC_OUTPUT_MAX);
	assert_string_equal(r.err, "done\n");
	vgpu_exec_clear(&r);
}

/* stdin is /dev/null: a program that reads it does not wait for us */
static void test_stdin_empty(void **state)
{
	const char *argv[] = { "cat", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec(&ctx, argv, 5000, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 0);
	vgpu_exec_clear(&r);
}

/* The input reaches stdin whole (larger than a pipe's buffer), and a program that does not read it
 * ends. */
static void test_stdin_input(void **state)
{
	const char *cat[] = { "cat", NULL }, *no[] = { "true", NULL };
	size_t len = 200000;
	char *in = vgpu_xmalloc(len);
	struct vgpu_exec_result r;

	(void)state;
	for (size_t i = 0; i < len; i++)
		in[i] = (char)('a' + i % 26);
	assert_int_equal(vgpu_exec_input(&ctx, cat, in, len, 5000, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, len);
	assert_memory_equal(r.out, in, len);
	vgpu_exec_clear(&r);
	assert_int_equal(vgpu_exec_input(&ctx, no, in, len, 5000, &r), 0);
	assert_int_equal(r.status, 0);
	vgpu_exec_clear(&r);
	free(in);
}

static void test_signal_status(void **state)
{
	const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec_ok(&ctx, argv, 5000, &r), -EIO);
	assert_int_equal(r.status, VGPU_EXEC_SIGNALED + 15);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "was killed by signal 15"));
	vgpu_exec_clear(&r);
}

/* ssh exits 255 when it cannot connect: an exit status, never "signal 127" */
static void test_high_exit_status(void **state)
{
	const char *argv[] = { "sh", "-c", "exit 255", NULL };
	struct vgpu_exec_result r;

	(void)state;
	assert_int_equal(vgpu_exec_ok(&ctx, argv, 5000, &r), -EIO);
	assert_int_equal(r.status, 255);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "failed (exit 255)"));
	vgpu_exec_clear(&r);
}

static void test_argv_str(void **state)
{
	const char *a[] = { "nvidia-smi", "mig", "-i", "0000:3b:00.0", "-cgi", "5,14", "-C", NULL };
	const char *b[] = { "x", "", "it's", "a b", NULL };
	char *s;

	(void)state;
	s = vgpu_argv_str(a);
	assert_string_equal(s, "nvidia-smi mig -i 0000:3b:00.0 -cgi 5,14 -C");
	free(s);
	s = vgpu_argv_str(b);
	assert_string_equal(s, "x '' 'it'\\''s' 'a b'");
	free(s);
}

static void test_last_line(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(vgpu_last_line("a\n  b c \n\n \n", buf, sizeof(buf)), "b c");
	assert_string_equal(vgpu_last_line("", buf, sizeof(buf)), "");
	assert_string_equal(vgpu_last_line(NULL, buf, sizeof(buf)), "");
	assert_string_equal(vgpu_last_line("0123456789abcdefghij", buf, sizeof(buf)),
			    "0123456789abcde");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_and_output),
		cmocka_unit_test(test_stdin_input),
		cmocka_unit_test(test_stdout_reason),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_no_path_lookup),
		cmocka_unit_test(test_output_cap),
		cmocka_unit_test(test_stdin_empty),
		cmocka_unit_test(test_signal_status),
		cmocka_unit_test(test_high_exit_status),
		cmocka_unit_test(test_argv_str),
		cmocka_unit_test(test_last_line),
		cmocka_unit_test(test_interrupt_stops_group), /* last: the flag stays */
	};

	vgpu_ctx_init(&ctx, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
