/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exec.h - run an external program (nvidia-smi, sriov-manage) the one way
 * vgpuctl does: an argv, never a shell; stdin /dev/null; stdout and stderr
 * captured up to a cap; a deadline after which the whole process group is
 * killed.  The environment is the caller's.
 */
#ifndef VGPU_EXEC_H
#define VGPU_EXEC_H

#include <stddef.h>

#include "ctx.h"

/* Each of stdout and stderr is kept up to this; the rest is read and dropped. */
#define VGPU_EXEC_OUTPUT_MAX (1024 * 1024)

/* vgpu_exec_result.status of a program killed by a signal: above every exit status (0-255) */
#define VGPU_EXEC_SIGNALED 256

struct vgpu_exec_result {
	int status; /* exit status 0-255, or VGPU_EXEC_SIGNALED + the signal */
	char *out; /* stdout, NUL-terminated (embedded NULs kept in out_len) */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
	long elapsed_ms;
};

/**
 * vgpu_exec() - run @argv[0] (a name without '/' is looked up in /usr/local/sbin, /usr/local/bin,
 * /usr/sbin, /usr/bin, /sbin and /bin only, never in $PATH) with
 * @argv, wait at most @timeout_ms.
 * @ctx: where errors go
 * @argv: the program and its arguments, NULL-terminated; never a shell
 * @timeout_ms: the deadline for the run, the output and the exit together
 * @res: overwritten: the exit status, the captured stdout and stderr (each
 *       up to VGPU_EXEC_OUTPUT_MAX, NUL-terminated, "" when empty) and the
 *       time taken; the output is filled even on failure
 * Return: 0 when the program ran and exited (any status, in @res), or
 * -errno with a message in @ctx: it could not be started (-ENOENT, -EACCES)
 * or it ran past @timeout_ms (-ETIMEDOUT; its process group was killed).
 * vgpu_exec_clear() @res in every case.
 */
int vgpu_exec(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
	      struct vgpu_exec_result *res);
/**
 * vgpu_exec_input() - vgpu_exec() with @input on the program's stdin (a
 * memory file, so a program that reads it late or not at all never blocks).
 * @ctx: where errors go
 * @argv: the program and its arguments, NULL-terminated; looked up as vgpu_exec() does
 * @input: the bytes
 * @len: how many
 * @timeout_ms: the deadline, as for vgpu_exec()
 * @res: the result, as for vgpu_exec()
 * Return: as vgpu_exec(); also -errno when the input could not be stored.
 * vgpu_exec_clear() @res in every case.
 */
int vgpu_exec_input(struct vgpu_ctx *ctx, const char *const *argv, const char *input, size_t len,
		    long timeout_ms, struct vgpu_exec_result *res);
/* How long an interrupted program has to end after SIGTERM before SIGKILL. */
#define VGPU_EXEC_STOP_MS 5000

/*
 * Interrupts (vgpu_interrupt() in ctx.h): a program vgpu_exec() is running
 * then gets SIGTERM in its whole process group (it runs in one of its own,
 * so a terminal's Ctrl-C never reaches it), has VGPU_EXEC_STOP_MS to end
 * before SIGKILL, and is waited for; vgpu_exec() then fails with -EINTR,
 * and so does every later call, so the caller unwinds (rolls back, unlocks)
 * without starting anything new.
 */

/**
 * vgpu_exec_ok() - vgpu_exec() where a non-zero exit is an error too: the
 * message names the command and its exit status and quotes the last
 * non-empty line of stderr, or of stdout when stderr is empty (nvidia-smi
 * reports on stdout).
 * @ctx: where errors go
 * @argv: the program and its arguments, NULL-terminated
 * @timeout_ms: the deadline, as for vgpu_exec()
 * @res: the result, as for vgpu_exec()
 * Return: 0 when the program exited 0; vgpu_exec()'s -errno, or -EIO for a
 * non-zero exit or a signal, with a message in @ctx.  vgpu_exec_clear() @res
 * in every case.
 */
int vgpu_exec_ok(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
		 struct vgpu_exec_result *res);
/**
 * vgpu_exec_failed() - the message vgpu_exec_ok() gives for @res's non-zero exit.
 * @ctx: gets "'CMD' failed (exit N): LINE" or "'CMD' was killed by signal N: LINE"
 * @argv: the command that ran, for the message
 * @res: its result from vgpu_exec(); left as it is
 * Return: -EIO.
 */
int vgpu_exec_failed(struct vgpu_ctx *ctx, const char *const *argv,
		     const struct vgpu_exec_result *res);
/**
 * vgpu_exec_clear() - free @res's output and zero it.
 * @res: a result from vgpu_exec() (a zeroed one is fine)
 */
void vgpu_exec_clear(struct vgpu_exec_result *res);
/**
 * vgpu_argv_str() - @argv as one line for messages and --dry-run ("a b 'c d'"); heap.
 * @argv: the arguments, NULL-terminated; any but plain words are single-quoted
 *        as a shell would take them ('it'\''s')
 * Return: the line; caller frees.
 */
char *vgpu_argv_str(const char *const *argv);
/**
 * vgpu_last_line() - the last non-empty line of @s, trimmed, in @buf.
 * @s: the text (a program's output), or NULL
 * @buf: where the line goes; truncated to fit, "" when there is none
 * @len: the size of @buf (at least 1)
 * Return: @buf.
 */
const char *vgpu_last_line(const char *s, char *buf, size_t len);

#endif
