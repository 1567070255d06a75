// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the library's failure channel (ctx.h): errors, hints and logs,
 * and the policies under them (errno texts, out of memory aborts, an
 * interrupt flag).  The steps of a plan, which go through the same ctx, are
 * steps.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h"

void vgpu_ctx_init(struct vgpu_ctx *ctx, vgpu_log_fn fn, void *data)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->log_fn = fn;
	ctx->log_data = data;
	ctx->log_priority = LOG_INFO;
}

void vgpu_ctx_clear(struct vgpu_ctx *ctx)
{
	free(ctx->err);
	ctx->err = NULL;
	ctx->hints = 0;
}

void vgpu_ctx_hint(struct vgpu_ctx *ctx, enum vgpu_hint hint)
{
	ctx->hints |= (unsigned)hint;
}

unsigned vgpu_ctx_hints(const struct vgpu_ctx *ctx)
{
	return ctx->hints;
}

void vgpu_ctx_set_priority(struct vgpu_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

/*
 * Control characters (a newline in a sysfs name, an escape sequence in a
 * file name) become \xNN, so one message stays one line and a terminal
 * shows what is there.  Other bytes pass through unchanged.
 */
char *vgpu_escape_controls(char *s)
{
	size_t n = 0, len = 0;
	char *r, *o;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++, len++)
		n += *p < 0x20 || *p == 0x7f;
	if (!n)
		return s;
	r = o = vgpu_xmalloc(len + 3 * n + 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			o += sprintf(o, "\\x%02x", *p);
		else
			*o++ = (char)*p;
	}
	*o = '\0';
	free(s);
	return r;
}

int vgpu_error(struct vgpu_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	/* formatted before the old message goes: it may be an argument */
	msg = vgpu_escape_controls(vgpu_vasprintf(fmt, ap));
	va_end(ap);
	free(ctx->err);
	ctx->err = msg;
	if (err == 0)
		err = EIO;
	return err < 0 ? err : -err;
}

void vgpu_error_append(struct vgpu_ctx *ctx, const char *fmt, ...)
{
	char *more, *all;
	va_list ap;

	va_start(ap, fmt);
	more = vgpu_escape_controls(vgpu_vasprintf(fmt, ap));
	va_end(ap);
	all = vgpu_asprintf("%s; %s", ctx->err ? ctx->err : "unknown error", more);
	free(more);
	free(ctx->err);
	ctx->err = all;
}

const char *vgpu_ctx_error(const struct vgpu_ctx *ctx)
{
	return ctx->err ? ctx->err : "unknown error";
}

void vgpu_logv(struct vgpu_ctx *ctx, int priority, const char *fmt, va_list ap)
{
	char *msg;

	if (!ctx->log_fn || priority > ctx->log_priority)
		return;
	msg = vgpu_escape_controls(vgpu_vasprintf(fmt, ap));
	ctx->n_logged++;
	ctx->log_fn(ctx->log_data, priority, msg);
	free(msg);
}

void vgpu_log(struct vgpu_ctx *ctx, int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vgpu_logv(ctx, priority, fmt, ap);
	va_end(ap);
}

const char *vgpu_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case VGPU_ENOTREG:
		return "not a regular file";
	case VGPU_ERANGE_VALUE:
		return "value out of range";
	case VGPU_EESCAPE:
		return "leads outside the root";
	case VGPU_EDANGLING:
		return "a link to nothing";
	default:
		return strerror(err);
	}
}

static void oom(void)
{
	static const char msg[] = "vgpuctl: out of memory\n";

	/* write(2), not stdio: stdio may itself need memory */
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		abort();
	abort();
}

void *vgpu_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *vgpu_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *vgpu_xrealloc(void *p, size_t size)
{
	void *r = realloc(p, size ? size : 1);

	if (!r)
		oom();
	return r;
}

void *vgpu_xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		oom();
	return vgpu_xrealloc(p, n * size);
}

char *vgpu_xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");

	if (!r)
		oom();
	return r;
}

char *vgpu_xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		oom();
	return r;
}

char *vgpu_vasprintf(const char *fmt, va_list ap)
{
	char *r = NULL;

	if (vasprintf(&r, fmt, ap) < 0)
		oom();
	return r;
}

char *vgpu_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *r;

	va_start(ap, fmt);
	r = vgpu_vasprintf(fmt, ap);
	va_end(ap);
	return r;
}

void vgpu_append(char **s, const char *fmt, ...)
{
	size_t had = *s ? strlen(*s) : 0;
	va_list ap;
	char *more;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	*s = vgpu_xrealloc(*s, had + (size_t)n + 1);
	memcpy(*s + had, more, (size_t)n + 1);
	free(more);
}

/*
 * The one process-wide state of the library: a signal handler can only
 * leave a flag, and every step of this process must see it.
 */
static volatile sig_atomic_t interrupted;

void vgpu_interrupt(int sig)
{
	interrupted = sig ? sig : SIGTERM;
}

int vgpu_interrupted(void)
{
	return interrupted;
}
