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

struct vgpu_exec_result {
	int status; /* exit status, or 128 + signal */
	char *out; /* stdout, NUL-terminated (embedded NULs kept in out_len) */
	size_t out_len;
	char *err; /* stderr, NUL-terminated */
	size_t err_len;
	long elapsed_ms;
};

/**
 * vgpu_exec() - run @argv[0] (looked up in PATH when it has no '/') with
 * @argv, wait at most @timeout_ms.
 * Return: 0 when the program ran and exited (any status, in @res), or
 * -errno with a message in @ctx: it could not be started (-ENOENT, -EACCES)
 * or it ran past @timeout_ms (-ETIMEDOUT; its process group was killed).
 * vgpu_exec_clear() @res in every case.
 */
int vgpu_exec(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
	      struct vgpu_exec_result *res);
/**
 * vgpu_exec_ok() - vgpu_exec() where a non-zero exit is an error too: the
 * message names the command and its exit status and quotes the last
 * non-empty line of stderr, or of stdout when stderr is empty (nvidia-smi
 * reports on stdout).
 */
int vgpu_exec_ok(struct vgpu_ctx *ctx, const char *const *argv, long timeout_ms,
		 struct vgpu_exec_result *res);
/** vgpu_exec_failed() - the message vgpu_exec_ok() gives for @res's non-zero exit. */
int vgpu_exec_failed(struct vgpu_ctx *ctx, const char *const *argv,
		     const struct vgpu_exec_result *res);
void vgpu_exec_clear(struct vgpu_exec_result *res);
/** vgpu_argv_str() - @argv as one line for messages and --dry-run ("a b 'c d'"); heap. */
char *vgpu_argv_str(const char *const *argv);
/** vgpu_last_line() - the last non-empty line of @s, trimmed, in @buf. */
const char *vgpu_last_line(const char *s, char *buf, size_t len);

#endif
