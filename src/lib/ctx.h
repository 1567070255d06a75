/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ctx.h - the library's one error and log channel.
 *
 * Every library call that can fail takes a struct vgpu_ctx.  At the failure
 * point the callee records one whole-sentence message (vgpu_error()) and
 * returns -errno; callers propagate the code and print vgpu_ctx_error() once.
 * Warnings and notes go to the log callback with a syslog priority, so the
 * CLI prints them, the hook sends them to syslog and tests collect them.
 * Messages never carry raw control characters: they are escaped as \xNN.
 *
 * Out of memory: the vgpu_x*() allocators print one line and abort(), as
 * GLib does.  A tool that cannot allocate a few hundred bytes has nothing
 * sensible left to do, and no half-made output is ever left behind with exit 0.
 */
#ifndef VGPU_CTX_H
#define VGPU_CTX_H

#include <stdarg.h>
#include <stddef.h>
#include <syslog.h>

/* Log callback: @priority is LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG. */
typedef void (*vgpu_log_fn)(void *data, int priority, const char *msg);

struct vgpu_ctx {
	vgpu_log_fn log_fn;
	void *log_data;
	int log_priority; /* messages above this (less urgent) are dropped */
	char *err; /* the last failure's message, heap; NULL when none */
};

/**
 * vgpu_ctx_init() - set up a context that logs through @fn (may be NULL).
 * Messages up to LOG_INFO are passed on; see vgpu_ctx_set_priority().
 */
void vgpu_ctx_init(struct vgpu_ctx *ctx, vgpu_log_fn fn, void *data);
/** vgpu_ctx_clear() - free the recorded message; the context may be reused. */
void vgpu_ctx_clear(struct vgpu_ctx *ctx);
/** vgpu_ctx_set_priority() - pass on messages of @priority and more urgent ones. */
void vgpu_ctx_set_priority(struct vgpu_ctx *ctx, int priority);

/**
 * vgpu_error() - record why the current operation fails.
 * Replaces an earlier message: the message names the failure point.
 * Return: -|@err| (so `return vgpu_error(ctx, -ENOENT, ...)` propagates).
 */
int vgpu_error(struct vgpu_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_error_append() - add "; <text>" to the recorded message: after a
 * failed multi-step change, what the undo did follows the first error.
 */
void vgpu_error_append(struct vgpu_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** vgpu_ctx_error() - the recorded message; "unknown error" when none was set. */
const char *vgpu_ctx_error(const struct vgpu_ctx *ctx);

/** vgpu_log() - pass a message of @priority to the log callback. */
void vgpu_log(struct vgpu_ctx *ctx, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** vgpu_logv() - vgpu_log() with a va_list. */
void vgpu_logv(struct vgpu_ctx *ctx, int priority, const char *fmt, va_list ap);
#define vgpu_warn(ctx, ...) vgpu_log(ctx, LOG_WARNING, __VA_ARGS__)
#define vgpu_info(ctx, ...) vgpu_log(ctx, LOG_INFO, __VA_ARGS__)

/*
 * Error codes of our own, beside errno values, for conditions errno cannot
 * name; vgpu_strerror() knows both.
 */
enum {
	VGPU_ENOTREG = 4096, /* not a regular file (a FIFO, a device); a directory is -EISDIR */
	VGPU_ERANGE_VALUE, /* a number outside the range the attribute can hold */
	VGPU_EESCAPE, /* a path or link leaves the root */
	VGPU_EDANGLING, /* the entry is a symlink to nothing (not merely absent) */
};
/**
 * vgpu_escape_controls() - @s (heap, consumed) with control characters as
 * \xNN, so one message is one line and shows what is there; a new heap string.
 */
char *vgpu_escape_controls(char *s);
/** vgpu_strerror() - text for -errno or one of our codes (sign ignored). */
const char *vgpu_strerror(int err);

/* Allocators that never return NULL: on failure, one line on stderr and abort(). */
void *vgpu_xmalloc(size_t size);
/** vgpu_xcalloc() - zeroed @n x @size bytes (overflow checked); never NULL. */
void *vgpu_xcalloc(size_t n, size_t size);
/** vgpu_xrealloc() - resize @p to @size bytes; never NULL. */
void *vgpu_xrealloc(void *p, size_t size);
/* Grow @p to hold @n elements of @size (n * size checked for overflow). */
void *vgpu_xreallocarray(void *p, size_t n, size_t size);
/** vgpu_xstrdup() - copy of @s ("" for NULL); never NULL. */
char *vgpu_xstrdup(const char *s);
/** vgpu_xstrndup() - copy of at most @n bytes of @s; never NULL. */
char *vgpu_xstrndup(const char *s, size_t n);
/** vgpu_asprintf() - formatted string on the heap; never NULL. */
char *vgpu_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/**
 * vgpu_append() - append the formatted text to the heap string *@s (NULL
 * starts one); for messages and lists built piece by piece.
 */
void vgpu_append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** vgpu_vasprintf() - vgpu_asprintf() with a va_list. */
char *vgpu_vasprintf(const char *fmt, va_list ap);

#endif
