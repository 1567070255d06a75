// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gpu-runner.c - apply's GPUs, one process each (gpu-runner.h).
 *
 * A child sends each log message through its pipe as one line, the
 * priority's digit first, then one status line ("\001ok" or "\001fail
 * MESSAGE"), then what its undo logs.  The parent keeps each child's lines
 * and, once every child is done, passes them to its own log callback one
 * GPU after the other: messages never carry a newline (vgpu_logv() escapes
 * control characters), so a line is a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu-runner.h"

#define STATUS_MARK '\001'

struct gpu_child {
	pid_t pid;
	int out; /* its log lines, then its status line */
	/*
	 * we send 'c' (commit) or 'r' (roll back); a socket, so that a child
	 * that is gone (a failed one does not wait) is no SIGPIPE here
	 */
	int verdict;
	char *log;
	size_t len;
	bool done, ok;
};

/* All of @len bytes of @s to @fd; a reader that is gone ends it. */
static void write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

/* @tag then @msg as one line on @fd. */
static void send_line(int fd, char tag, const char *msg)
{
	size_t len = strlen(msg);
	char *line = vgpu_xmalloc(len + 3);

	line[0] = tag;
	memcpy(line + 1, msg, len);
	line[len + 1] = '\n';
	line[len + 2] = '\0';
	write_all(fd, line, len + 2);
	free(line);
}

/* A child's log callback: the message to the parent, its priority first. */
static void child_log(void *data, int priority, const char *msg)
{
	const int *fd = data;

	send_line(*fd, (char)('0' + (priority & 7)), msg);
}

static void child_main(struct vgpu_apply *a, const struct vgpu_runner_ops *ops, void *data,
		       size_t i, int out, int verdict)
{
	bool commit;
	char v = 'r';
	int e;

	/*
	 * the context is this process's copy: its messages go to the parent,
	 * and so would a step (a dry run runs in one process: none is expected)
	 */
	a->ctx->log_fn = child_log;
	a->ctx->log_data = &out;
	a->ctx->step_fn = NULL;
	if (ops->start)
		ops->start(data, a, i);
	e = vgpu_apply_gpu_steps(a, i);
	if (e < 0) {
		char *st = vgpu_asprintf("fail %s", vgpu_ctx_error(a->ctx));

		send_line(out, STATUS_MARK, st);
		free(st);
	} else {
		send_line(out, STATUS_MARK, "ok");
	}
	commit = e == 0 && read(verdict, &v, 1) == 1 && v == 'c';
	if (ops->finish)
		ops->finish(data, a, i, commit);
	_exit(commit ? 0 : 1);
}

static void keep(struct gpu_child *c, const char *buf, size_t n)
{
	c->log = vgpu_xrealloc(c->log, c->len + n + 1);
	memcpy(c->log + c->len, buf, n);
	c->len += n;
	c->log[c->len] = '\0';
}

/* Read what is there from @c; done when its status line came (or it is gone). */
static void child_read(struct gpu_child *c)
{
	char buf[4096];
	ssize_t n = read(c->out, buf, sizeof(buf));

	if (n <= 0) {
		c->done = true; /* EOF or error: it is gone */
		return;
	}
	keep(c, buf, (size_t)n);
	for (const char *l = c->log; !c->done && l && *l;) {
		const char *nl = strchr(l, '\n');

		if (!nl)
			break;
		if (*l == STATUS_MARK) {
			c->done = true;
			c->ok = strncmp(l + 1, "ok", 2) == 0;
		}
		l = nl + 1;
	}
}

/* Read every child's pipe until each has said how it went. */
static void wait_status(struct gpu_child *kids, size_t n)
{
	struct pollfd *fds = vgpu_xcalloc(n, sizeof(*fds));
	bool told = false;

	for (;;) {
		size_t open_n = 0;

		/*
		 * A signal for this process alone (a service manager's SIGTERM;
		 * a terminal's Ctrl-C reaches the whole group): each GPU's
		 * process stops its program and rolls back as it would itself
		 */
		if (vgpu_interrupted() && !told) {
			for (size_t i = 0; i < n; i++)
				if (kids[i].pid > 0 && !kids[i].done)
					kill(kids[i].pid, vgpu_interrupted());
			told = true;
		}

		for (size_t i = 0; i < n; i++) {
			fds[i] = (struct pollfd){ .fd = kids[i].done ? -1 : kids[i].out,
						  .events = POLLIN };
			open_n += !kids[i].done;
		}
		if (!open_n)
			break;
		if (poll(fds, n, told ? -1 : 250) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t i = 0; i < n; i++)
			if (fds[i].revents)
				child_read(&kids[i]);
	}
	free(fds);
}

/* The rest of a child's log (its undo), until EOF. */
static void drain(struct gpu_child *c)
{
	for (;;) {
		char buf[4096];
		ssize_t n = read(c->out, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		keep(c, buf, (size_t)n);
	}
}

/* Each GPU's messages as one block to the log callback; the first failure's message into @ctx. */
static int report(struct vgpu_ctx *ctx, struct gpu_child *kids, size_t n)
{
	char *first = NULL;
	size_t failed = 0;
	int e = 0;

	for (size_t i = 0; i < n; i++) {
		char *line = kids[i].log, *nl;

		failed += !kids[i].ok;
		for (; line && *line; line = nl ? nl + 1 : line + strlen(line)) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (*line == STATUS_MARK) {
				if (strncmp(line + 1, "fail ", 5) == 0 && !first)
					first = vgpu_xstrdup(line + 6);
			} else if (*line >= '0' && *line <= '7') {
				vgpu_log(ctx, *line - '0', "%s", line + 1);
			} else if (*line) {
				vgpu_log(ctx, LOG_NOTICE, "%s", line); /* cut short: it died */
			}
		}
	}
	if (failed)
		e = vgpu_error(ctx, -EIO, "%s%s", first ? first : "a GPU's process died",
			       failed > 1 ? " (and other GPUs failed: above)" : "");
	free(first);
	return e;
}

int vgpu_runner_apply(struct vgpu_apply *a, const struct vgpu_runner_ops *ops, void *data)
{
	struct gpu_child *kids = vgpu_xcalloc(a->n_gpus + 1, sizeof(*kids));
	bool all_ok = true;
	int e = 0;

	/* a GPU whose process never started has nothing to wait for */
	for (size_t i = 0; i < a->n_gpus; i++)
		kids[i] = (struct gpu_child){ .pid = -1, .out = -1, .verdict = -1, .done = true };
	for (size_t i = 0; i < a->n_gpus; i++) {
		int out[2], verdict[2];

		if (pipe2(out, O_CLOEXEC) < 0) {
			e = vgpu_error(a->ctx, -errno, "apply: no pipe for GPU %s: %s",
				       a->gpus[i].addr, vgpu_strerror(errno));
			break;
		}
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, verdict) < 0) {
			e = vgpu_error(a->ctx, -errno, "apply: no pipe for GPU %s: %s",
				       a->gpus[i].addr, vgpu_strerror(errno));
			close(out[0]);
			close(out[1]);
			break;
		}
		kids[i].pid = fork();
		if (kids[i].pid == 0) {
			close(out[0]);
			close(verdict[1]);
			for (size_t k = 0; k < i; k++) {
				close(kids[k].out);
				close(kids[k].verdict);
			}
			child_main(a, ops, data, i, out[1], verdict[0]);
		}
		close(out[1]);
		close(verdict[0]);
		kids[i].out = out[0];
		kids[i].verdict = verdict[1];
		kids[i].done = false; /* until its status line, or EOF when it never ran */
		if (kids[i].pid < 0) {
			e = vgpu_error(a->ctx, -errno,
				       "apply: cannot start a process for GPU %s: %s",
				       a->gpus[i].addr, vgpu_strerror(errno));
			break;
		}
	}
	wait_status(kids, a->n_gpus);
	for (size_t i = 0; i < a->n_gpus; i++)
		all_ok &= kids[i].pid > 0 && kids[i].ok;
	all_ok &= e == 0;
	for (size_t i = 0; i < a->n_gpus; i++) {
		char v = all_ok ? 'c' : 'r';

		if (kids[i].verdict >= 0) {
			if (kids[i].pid > 0 && kids[i].ok &&
			    send(kids[i].verdict, &v, 1, MSG_NOSIGNAL) < 0)
				kill(kids[i].pid, SIGKILL);
			close(kids[i].verdict);
		}
	}
	for (size_t i = 0; i < a->n_gpus; i++) {
		int st;

		if (kids[i].out >= 0) {
			drain(&kids[i]);
			close(kids[i].out);
		}
		if (kids[i].pid > 0)
			while (waitpid(kids[i].pid, &st, 0) < 0 && errno == EINTR)
				;
	}
	if (e == 0)
		e = report(a->ctx, kids, a->n_gpus);
	for (size_t i = 0; i < a->n_gpus; i++)
		free(kids[i].log);
	free(kids);
	return e;
}
