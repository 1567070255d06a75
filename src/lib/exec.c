// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec.c - external programs with an argv, a deadline and captured output.
 *
 * posix_spawn() with the child in its own process group, so a timeout
 * kills what the program started too (sriov-manage runs nvidia-smi); stdin
 * is /dev/null; both pipes are drained with poll() until EOF and the child
 * reaped, every wait bounded by the one deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <limits.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "exec.h"
#include "util.h"

extern char **environ;

struct sink {
	int fd;
	char *buf;
	size_t len, cap;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void vgpu_exec_clear(struct vgpu_exec_result *res)
{
	free(res->out);
	free(res->err);
	*res = (struct vgpu_exec_result){ 0 };
}

static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%",
			    *s))
			return false;
	return true;
}

/* append @n bytes of @p to the buffer */
static void put(struct sink *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->buf = vgpu_xrealloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

char *vgpu_argv_str(const char *const *argv)
{
	struct sink b = { -1, NULL, 0, 0 };

	put(&b, "", 0);
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			put(&b, " ", 1);
		if (shell_safe(argv[i])) {
			put(&b, argv[i], strlen(argv[i]));
			continue;
		}
		/* 'it'\''s': readable, and pasteable into a shell */
		put(&b, "'", 1);
		for (const char *p = argv[i]; *p; p++)
			if (*p == '\'')
				put(&b, "'\\''", 4);
			else
				put(&b, p, 1);
		put(&b, "'", 1);
	}
	return b.buf;
}

const char *vgpu_last_line(const char *s, char *buf, size_t len)
{
	const char *end = s ? s + strlen(s) : NULL, *start;

	buf[0] = '\0';
	if (!s)
		return buf;
	while (end > s) {
		while (end > s &&
		       (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		start = end;
		while (start > s && start[-1] != '\n')
			start--;
		while (start < end && (*start == ' ' || *start == '\t'))
			start++;
		if (start < end) {
			size_t n = (size_t)(end - start) < len - 1 ? (size_t)(end - start) :
								     len - 1;

			memcpy(buf, start, n);
			buf[n] = '\0';
			return buf;
		}
		end = start;
	}
	return buf;
}

/* Read what is there; false at EOF or error (the pipe is done). */
static bool drain(struct sink *s)
{
	char tmp[16384];
	ssize_t n = read(s->fd, tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (s->len < VGPU_EXEC_OUTPUT_MAX)
		put(s, tmp,
		    (size_t)n < VGPU_EXEC_OUTPUT_MAX - s->len ? (size_t)n :
								VGPU_EXEC_OUTPUT_MAX - s->len);
	return true;
}

/* Both pipes to EOF, or the deadline. */
static bool collect(struct sink *out, struct sink *err, long deadline)
{
	bool open[2] = { true, true };

	while (open[0] || open[1]) {
		struct pollfd p[2] = { { open[0] ? out->fd : -1, POLLIN, 0 },
				       { open[1] ? err->fd : -1, POLLIN, 0 } };
		long left = deadline - now_ms();
		int r;

		if (left <= 0 || vgpu_interrupted())
			return false;
		/* short waits: a signal between the check and poll() is seen soon */
		r = poll(p, 2, (int)(left > 250 ? 250 : left));
		if (r < 0 && errno != EINTR)
			return false;
		if (p[0].revents && !drain(out))
			open[0] = false;
		if (p[1].revents && !drain(err))
			open[1] = false;
	}
	return true;
}

/* Reap @pid by the deadline; false if it is still running. */
static bool reap(pid_t pid, int *status, long deadline)
{
	for (long wait_ms = 1;; wait_ms = wait_ms < 50 ? wait_ms * 2 : 50) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return true;
		if (now_ms() >= deadline)
			return false;
		usleep((useconds_t)wait_ms * 1000);
	}
}

/*
 * A program named without a '/' is looked up in the system's directories
 * only: never through $PATH, whose relative or user-writable entries would
 * let the working directory pick the program a root tool runs.
 */
#define EXEC_SEARCH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool find_program(const char *name, char *out, size_t len)
{
	char dirs[] = EXEC_SEARCH;
	char *save = NULL;

	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (snprintf(out, len, "%s/%s", d, name) < (int)len && access(out, X_OK) == 0)
			return true;
	return false;
}

static int spawn(struct vgpu_ctx *ctx, const char *const *argv, int in_fd, int pout[2], int perr[2],
		 pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char found[PATH_MAX];
	const char *path = argv[0];
	int r;

	if (!strchr(path, '/')) {
		if (!find_program(path, found, sizeof(found)))
			return vgpu_error(ctx, -ENOENT, "cannot run '%s': not found in %s", path,
					  EXEC_SEARCH);
		path = found;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
	else
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, perr[1], STDERR_FILENO);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	{
		sigset_t none, all;

		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&at, &none);
		posix_spawnattr_setsigdefault(&at, &all);
	}
	r = posix_spawn(pid, path, &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r)
		return vgpu_error(ctx, -r, "cannot run '%s': %s", argv[0], strerror(r));
	return 0;
}

static int exec_fd(struct vgpu_ctx *ctx, const char *const *argv, int in_fd, long timeout_ms,
		   struct vgpu_exec_result *res)
{
	int pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, status = 0, e;
	struct sink out = { -1, NULL, 0, 0 }, err = { -1, NULL, 0, 0 };
	long start = now_ms(), deadline = start + timeout_ms;
	bool done;
	pid_t pid;

	*res = (struct vgpu_exec_result){ 0 };
	if (vgpu_interrupted()) { /* asked to stop: nothing new starts */
		VGPU_AUTOFREE char *cmd = vgpu_argv_str(argv);

		res->out = vgpu_xstrdup("");
		res->err = vgpu_xstrdup("");
		return vgpu_error(ctx, -EINTR, "interrupted (signal %d): '%s' was not run",
				  vgpu_interrupted(), cmd);
	}
	if (pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
		e = -errno;
		if (pout[0] >= 0) {
			close(pout[0]);
			close(pout[1]);
		}
		return vgpu_error(ctx, e, "cannot run '%s': %s", argv[0], strerror(-e));
	}
	e = spawn(ctx, argv, in_fd, pout, perr, &pid);
	close(pout[1]);
	close(perr[1]);
	out.fd = pout[0];
	err.fd = perr[0];
	fcntl(out.fd, F_SETFL, O_NONBLOCK);
	fcntl(err.fd, F_SETFL, O_NONBLOCK);
	if (e == 0 && vgpu_interrupted()) {
		/* asked to stop while it was being started: it goes at once */
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		done = false;
	} else {
		done = e == 0 && collect(&out, &err, deadline) && reap(pid, &status, deadline);
	}
	if (e == 0 && !done && vgpu_interrupted()) {
		/*
		 * Its own process group hears no Ctrl-C: stop what it started
		 * too, and wait, so no sriov-manage outlives us and races the
		 * next run
		 */
		kill(-pid, SIGTERM);
		if (!reap(pid, &status, now_ms() + VGPU_EXEC_STOP_MS)) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		kill(-pid, SIGKILL); /* what it left in its group */
	} else if (e == 0 && !done) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(out.fd);
	close(err.fd);
	res->out = out.buf ? out.buf : vgpu_xstrdup("");
	res->out[out.len] = '\0';
	res->out_len = out.len;
	res->err = err.buf ? err.buf : vgpu_xstrdup("");
	res->err[err.len] = '\0';
	res->err_len = err.len;
	res->elapsed_ms = now_ms() - start;
	if (e < 0)
		return e;
	if (!done && vgpu_interrupted()) {
		VGPU_AUTOFREE char *cmd = vgpu_argv_str(argv);

		return vgpu_error(ctx, -EINTR, "interrupted (signal %d): '%s' was stopped",
				  vgpu_interrupted(), cmd);
	}
	if (!done) {
		VGPU_AUTOFREE char *cmd = vgpu_argv_str(argv);

		return vgpu_error(ctx, -ETIMEDOUT, "'%s' did not finish in %ld s; killed", cmd,
				  (timeout_ms + 999) / 1000);
	}
	res->status = WIFEXITED(status) ? WEXITSTATUS(status) :
					  VGPU_EXEC_SIGNALED + WTERMSIG(status);
	return 0;
}

int vgpu_exec(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
	      struct vgpu_exec_result *res)
{
	return exec_fd(ctx, argv, -1, timeout_ms, res);
}

int vgpu_exec_input(struct vgpu_ctx *ctx, const char *const *argv, const char *input, size_t len,
		    long timeout_ms, struct vgpu_exec_result *res)
{
	/* a file, not a pipe: the child reads it at its pace, nothing to feed while collecting */
	VGPU_AUTOCLOSE int fd = memfd_create("vgpuctl-stdin", MFD_CLOEXEC);
	size_t done = 0;

	*res = (struct vgpu_exec_result){ 0 };
	while (fd >= 0 && done < len) {
		ssize_t n = write(fd, input + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			fd = -1;
			break;
		}
		done += (size_t)n;
	}
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		int e = -errno;

		res->out = vgpu_xstrdup("");
		res->err = vgpu_xstrdup("");
		return vgpu_error(ctx, e ? e : -EIO, "cannot run '%s': its input: %s", argv[0],
				  strerror(e ? -e : EIO));
	}
	return exec_fd(ctx, argv, fd, timeout_ms, res);
}

int vgpu_exec_failed(struct vgpu_ctx *ctx, const char *const *argv,
		     const struct vgpu_exec_result *res)
{
	VGPU_AUTOFREE char *cmd = vgpu_argv_str(argv);
	char line[512];

	vgpu_last_line(res->err, line, sizeof(line));
	if (!line[0])
		vgpu_last_line(res->out, line, sizeof(line));
	/* an exit status of 129-255 (ssh's 255) is not a signal: signals are kept apart */
	if (res->status >= VGPU_EXEC_SIGNALED)
		return vgpu_error(ctx, -EIO, "'%s' was killed by signal %d%s%s", cmd,
				  res->status - VGPU_EXEC_SIGNALED, line[0] ? ": " : "", line);
	return vgpu_error(ctx, -EIO, "'%s' failed (exit %d)%s%s", cmd, res->status,
			  line[0] ? ": " : "", line);
}

int vgpu_exec_ok(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
		 struct vgpu_exec_result *res)
{
	int e = vgpu_exec(ctx, argv, timeout_ms, res);

	if (e < 0 || res->status == 0)
		return e;
	return vgpu_exec_failed(ctx, argv, res);
}
