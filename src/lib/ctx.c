// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error and log channel, and the one out-of-memory policy. */
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

void vgpu_step_report(struct vgpu_ctx *ctx, const struct vgpu_step *step)
{
	struct vgpu_step s = *step;
	char *text;

	if (!ctx->step_fn) {
		vgpu_log(ctx, LOG_NOTICE, "would %s", step->text);
		return;
	}
	/* one line, as the log would have it: a name read from sysfs may hold a tab */
	text = vgpu_escape_controls(vgpu_xstrdup(step->text));
	s.text = text;
	ctx->step_fn(ctx->step_data, &s);
	free(text);
}

void vgpu_step_reportf(struct vgpu_ctx *ctx, const struct vgpu_step *step, const char *fmt, ...)
{
	struct vgpu_step s = *step;
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = vgpu_vasprintf(fmt, ap);
	va_end(ap);
	s.text = text;
	vgpu_step_report(ctx, &s);
	free(text);
}

const char *vgpu_step_verb(const struct vgpu_step *step)
{
	if (step->means == VGPU_STEP_BY_PROGRAM)
		return "run";
	if (step->means == VGPU_STEP_BY_WRITE)
		return "write";
	switch (step->kind) {
	case VGPU_STEP_MIG_ON:
	case VGPU_STEP_MIG_OFF:
	case VGPU_STEP_MIXED_ON:
	case VGPU_STEP_MIXED_OFF:
		return "turn";
	case VGPU_STEP_VFS_ON:
		return "enable";
	case VGPU_STEP_VFS_OFF:
		return "disable";
	case VGPU_STEP_GI_CREATE:
	case VGPU_STEP_VGPU_CREATE:
		return "create";
	case VGPU_STEP_CI_DESTROY:
	case VGPU_STEP_GI_DESTROY:
		return "destroy";
	case VGPU_STEP_VGPU_DESTROY:
		return "free";
	case VGPU_STEP_RECORD_WRITE:
	case VGPU_STEP_WRITE:
		return "write";
	case VGPU_STEP_RECORD_DROP:
		return "drop";
	case VGPU_STEP_DOMAIN_START:
		return "start";
	case VGPU_STEP_OTHER:
		break;
	}
	return NULL;
}

const char *vgpu_step_kind_name(enum vgpu_step_kind kind)
{
	static const char *const names[] = {
		[VGPU_STEP_MIG_ON] = "mig-on",
		[VGPU_STEP_MIG_OFF] = "mig-off",
		[VGPU_STEP_VFS_ON] = "vfs-on",
		[VGPU_STEP_VFS_OFF] = "vfs-off",
		[VGPU_STEP_GI_CREATE] = "gi-create",
		[VGPU_STEP_CI_DESTROY] = "ci-destroy",
		[VGPU_STEP_GI_DESTROY] = "gi-destroy",
		[VGPU_STEP_MIXED_ON] = "mixed-size-on",
		[VGPU_STEP_MIXED_OFF] = "mixed-size-off",
		[VGPU_STEP_VGPU_CREATE] = "vgpu-create",
		[VGPU_STEP_WRITE] = "write",
		[VGPU_STEP_VGPU_DESTROY] = "vgpu-destroy",
		[VGPU_STEP_RECORD_WRITE] = "record-write",
		[VGPU_STEP_RECORD_DROP] = "record-drop",
		[VGPU_STEP_DOMAIN_START] = "domain-start",
		[VGPU_STEP_OTHER] = "other",
	};

	if ((size_t)kind >= sizeof(names) / sizeof(names[0]) || !names[kind])
		return "other";
	return names[kind];
}

const char *vgpu_step_object_name(enum vgpu_step_object object)
{
	switch (object) {
	case VGPU_OBJECT_GPU:
		return "gpu";
	case VGPU_OBJECT_GPU_INSTANCE:
		return "gpu-instance";
	case VGPU_OBJECT_VGPU:
		return "vgpu";
	case VGPU_OBJECT_RECORD:
		return "record";
	case VGPU_OBJECT_DOMAIN:
		return "domain";
	case VGPU_OBJECT_NONE:
		break;
	}
	return NULL;
}

static const char *dup_or_null(const char *s)
{
	return s ? vgpu_xstrdup(s) : NULL;
}

void vgpu_steps_push(struct vgpu_steps *list, const struct vgpu_step *step)
{
	struct vgpu_step *s;

	list->items = vgpu_xreallocarray(list->items, list->n + 1, sizeof(*list->items));
	s = &list->items[list->n++];
	*s = *step;
	s->gpu = dup_or_null(step->gpu);
	s->profile = dup_or_null(step->profile);
	s->parent = dup_or_null(step->parent);
	s->domain = dup_or_null(step->domain);
	s->path = dup_or_null(step->path);
	s->value = dup_or_null(step->value);
	s->text = vgpu_xstrdup(step->text);
}

void vgpu_steps_collect(void *data, const struct vgpu_step *step)
{
	vgpu_steps_push(data, step);
}

void vgpu_steps_clear(struct vgpu_steps *list)
{
	/* the list's own copies (vgpu_steps_push()): const only to the callbacks */
	for (size_t i = 0; i < list->n; i++) {
		struct vgpu_step *s = &list->items[i];

		free((char *)s->gpu);
		free((char *)s->profile);
		free((char *)s->parent);
		free((char *)s->domain);
		free((char *)s->path);
		free((char *)s->value);
		free((char *)s->text);
	}
	free(list->items);
	list->items = NULL;
	list->n = 0;
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
