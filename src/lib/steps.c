// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the plan as data (see ctx.h): a step's stable names and the
 * sentence a person reads, reported through the ctx's step callback (or
 * logged as "would ..."), and the lists that collect steps.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"

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
	s->want = dup_or_null(step->want);
	s->have = dup_or_null(step->have);
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
		free((char *)s->want);
		free((char *)s->have);
		free((char *)s->text);
	}
	free(list->items);
	list->items = NULL;
	list->n = 0;
}
