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

/*
 * The plan as data.  A dry run reports each change it would make as a
 * struct vgpu_step (kmod's action callback, not a log line to parse): what
 * it does, to which GPU and object, how many, and the line a person reads.
 */
enum vgpu_step_kind {
	VGPU_STEP_MIG_ON, /* MIG mode switched on */
	VGPU_STEP_MIG_OFF,
	VGPU_STEP_VFS_ON, /* every SR-IOV VF of a GPU enabled */
	VGPU_STEP_VFS_OFF,
	VGPU_STEP_GI_CREATE, /* GPU instances (with their compute instances) created */
	VGPU_STEP_CI_DESTROY, /* every compute instance of a GPU destroyed */
	VGPU_STEP_GI_DESTROY, /* every GPU instance of a GPU destroyed */
	VGPU_STEP_MIXED_ON, /* mixed-size time-sliced mode switched on */
	VGPU_STEP_MIXED_OFF,
	VGPU_STEP_VGPU_CREATE, /* vGPUs created */
	VGPU_STEP_WRITE, /* a sysfs file written: how the vGPU step after it is made */
	VGPU_STEP_VGPU_DESTROY, /* a vGPU freed */
	VGPU_STEP_RECORD_WRITE, /* an owner record written */
	VGPU_STEP_RECORD_DROP, /* an owner record removed */
	VGPU_STEP_DOMAIN_START, /* a domain started */
	VGPU_STEP_OTHER, /* a transaction's step of none of these kinds */
};

/* How a step is carried out; it decides the first word of the text (vgpu_step_verb()). */
enum vgpu_step_means {
	VGPU_STEP_BY_CALL, /* a library call (NVML, libvirt) or a transaction's step */
	VGPU_STEP_BY_PROGRAM, /* a program is run: "run: ARGV" */
	VGPU_STEP_BY_WRITE, /* a file is written: "write: VALUE > PATH" */
};

/* What a step changes. */
enum vgpu_step_object {
	VGPU_OBJECT_NONE,
	VGPU_OBJECT_GPU, /* a GPU: its MIG mode, VFs or mixed-size mode */
	VGPU_OBJECT_GPU_INSTANCE, /* GPU or compute instances of a GPU */
	VGPU_OBJECT_VGPU,
	VGPU_OBJECT_RECORD, /* an owner record */
	VGPU_OBJECT_DOMAIN,
};

/* One step; strings borrowed (a callback copies what it keeps), NULL where none. */
struct vgpu_step {
	enum vgpu_step_kind kind;
	enum vgpu_step_means means;
	enum vgpu_step_object object;
	const char *gpu; /* the GPU's PCI address; NULL for a domain */
	const char *profile; /* the vGPU or GPU-instance profile(s), comma-separated */
	const char *parent; /* a vGPU's VF (or PF) */
	const char *domain; /* the domain started, or the one a vGPU or record is for */
	const char *path; /* the program run, the file written (relative to the root) */
	const char *value; /* what is written to @path */
	unsigned count; /* GIs or vGPUs made or removed, 1 for one object; 0: all there are */
	const char *want; /* assert's difference: what the config wants ("enabled", "4") */
	const char *have; /* assert's difference: what the host has ("disabled", "1") */
	const char *text; /* for people: "run: nvidia-smi -i 0000:ca:00.0 -mig 1" */
};

/* Step callback: each step in the order it would be done. */
typedef void (*vgpu_step_fn)(void *data, const struct vgpu_step *step);

/* A list of steps that owns its strings (vgpu_steps_push()). */
struct vgpu_steps {
	struct vgpu_step *items;
	size_t n;
};

/*
 * A way out of a failure (or a warning) that the caller names in its own
 * words: the library says what is wrong, a CLI adds the option that helps.
 */
enum vgpu_hint {
	VGPU_HINT_NONE = 0,
	VGPU_HINT_OTHER_MDEV_UUID = 1u << 0, /* the mdev UUID asked is taken: another, or none */
	VGPU_HINT_NO_PIN = 1u << 1, /* the pinning is what the domain cannot take: pin nothing */
	VGPU_HINT_RELEASE_BY_UUID = 1u << 2, /* vGPUs of another UUID: release by its definition */
};

struct vgpu_ctx {
	vgpu_log_fn log_fn;
	void *log_data;
	vgpu_step_fn step_fn; /* NULL: each step is logged as "would TEXT" at LOG_NOTICE */
	void *step_data;
	int log_priority; /* messages above this (less urgent) are dropped */
	unsigned long n_logged; /* messages passed to log_fn so far */
	char *err; /* the last failure's message, heap; NULL when none */
	unsigned hints; /* enum vgpu_hint bits set since vgpu_ctx_init()/vgpu_ctx_clear() */
};

/**
 * vgpu_ctx_init() - set up a context that logs through @fn (may be NULL).
 * @ctx: the context, overwritten (no message recorded)
 * @fn: the log callback, or NULL to drop every log message
 * @data: passed to @fn as its first argument
 *
 * Messages up to LOG_INFO are passed on; see vgpu_ctx_set_priority().
 */
void vgpu_ctx_init(struct vgpu_ctx *ctx, vgpu_log_fn fn, void *data);
/**
 * vgpu_ctx_clear() - free the recorded message; the context may be reused.
 * @ctx: the context; its log callback and priority are kept
 */
void vgpu_ctx_clear(struct vgpu_ctx *ctx);
/**
 * vgpu_ctx_set_priority() - pass on messages of @priority and more urgent ones.
 * @ctx: the context
 * @priority: a syslog priority (LOG_DEBUG passes everything on, LOG_ERR only errors)
 */
void vgpu_ctx_set_priority(struct vgpu_ctx *ctx, int priority);

/**
 * vgpu_error() - record why the current operation fails.
 * @ctx: the context that keeps the message
 * @err: the error code, either sign (0 is taken as EIO)
 * @fmt: printf format of one whole-sentence message; control characters are escaped
 * @...: arguments for @fmt (the old message may be one of them)
 *
 * Replaces an earlier message: the message names the failure point.
 * Return: -|@err| (so `return vgpu_error(ctx, -ENOENT, ...)` propagates).
 */
int vgpu_error(struct vgpu_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_error_append() - add "; <text>" to the recorded message: after a
 * failed multi-step change, what the undo did follows the first error.
 * @ctx: the context; with no message recorded the text follows "unknown error"
 * @fmt: printf format of the text; control characters are escaped
 * @...: arguments for @fmt
 */
void vgpu_error_append(struct vgpu_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/**
 * vgpu_ctx_hint() - add a way out the caller may name with its own option.
 * @ctx: the context; the hint stays until vgpu_ctx_clear()
 * @hint: an enum vgpu_hint bit
 */
void vgpu_ctx_hint(struct vgpu_ctx *ctx, enum vgpu_hint hint);
/**
 * vgpu_ctx_hints() - the ways out added since the context was set up or cleared.
 * @ctx: the context
 * Return: the enum vgpu_hint bits, 0 when none.
 */
unsigned vgpu_ctx_hints(const struct vgpu_ctx *ctx);
/**
 * vgpu_ctx_error() - the recorded message; "unknown error" when none was set.
 * @ctx: the context
 * Return: the message, owned by @ctx: valid until the next vgpu_error*() or
 * vgpu_ctx_clear().
 */
const char *vgpu_ctx_error(const struct vgpu_ctx *ctx);

/**
 * vgpu_log() - pass a message of @priority to the log callback.
 * @ctx: the context; nothing happens without a callback or above its priority
 * @priority: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG
 * @fmt: printf format of the message; control characters are escaped
 * @...: arguments for @fmt
 */
void vgpu_log(struct vgpu_ctx *ctx, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_logv() - vgpu_log() with a va_list.
 * @ctx: the context; nothing happens without a callback or above its priority
 * @priority: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG
 * @fmt: printf format of the message; control characters are escaped
 * @ap: arguments for @fmt
 */
void vgpu_logv(struct vgpu_ctx *ctx, int priority, const char *fmt, va_list ap);
#define vgpu_warn(ctx, ...) vgpu_log(ctx, LOG_WARNING, __VA_ARGS__)
#define vgpu_info(ctx, ...) vgpu_log(ctx, LOG_INFO, __VA_ARGS__)

/**
 * vgpu_step_report() - a dry run's step: to the step callback, else logged
 * as "would TEXT" at LOG_NOTICE.
 * @ctx: the context
 * @step: the step; @step->text is what a person reads (control characters
 *        reach the callback escaped, as in a log message)
 */
void vgpu_step_report(struct vgpu_ctx *ctx, const struct vgpu_step *step);
/**
 * vgpu_step_reportf() - vgpu_step_report() with the text formatted here.
 * @ctx: the context
 * @step: the step; its text is replaced by the formatted one
 * @fmt: printf format of the text; control characters are escaped
 * @...: arguments for @fmt
 */
void vgpu_step_reportf(struct vgpu_ctx *ctx, const struct vgpu_step *step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * vgpu_step_verb() - the first word of a step's text: "run" or "write" for
 * a program or a file, else what the kind does ("create", "free", "start",
 * "turn", ...).
 * @step: the step
 * Return: a static string; NULL for VGPU_STEP_OTHER done by a call.
 */
const char *vgpu_step_verb(const struct vgpu_step *step);
/**
 * vgpu_step_kind_name() - a kind's stable name for machines ("mig-on", "vgpu-create").
 * @kind: the kind
 * Return: a static string.
 */
const char *vgpu_step_kind_name(enum vgpu_step_kind kind);
/**
 * vgpu_step_object_name() - an object type's stable name ("gpu", "gpu-instance", "vgpu").
 * @object: the object type
 * Return: a static string; NULL for VGPU_OBJECT_NONE.
 */
const char *vgpu_step_object_name(enum vgpu_step_object object);
/**
 * vgpu_steps_push() - append a copy of @step (its strings too) to @list.
 * @list: the list; caller frees with vgpu_steps_clear()
 * @step: the step, borrowed
 */
void vgpu_steps_push(struct vgpu_steps *list, const struct vgpu_step *step);
/**
 * vgpu_steps_collect() - a step callback that appends to the struct
 * vgpu_steps given as its data: ctx->step_fn = vgpu_steps_collect.
 * @data: a struct vgpu_steps
 * @step: the step, copied
 */
void vgpu_steps_collect(void *data, const struct vgpu_step *step);
/**
 * vgpu_steps_clear() - free every step of @list; the list is empty after.
 * @list: the list (empty is fine)
 */
void vgpu_steps_clear(struct vgpu_steps *list);

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
 * @s: a heap string; freed, or returned as it is when it has nothing to escape
 *
 * Control characters are bytes below 0x20 and 0x7f; other bytes pass unchanged.
 * Return: the escaped heap string (@s itself when nothing needed escaping);
 * caller frees.
 */
char *vgpu_escape_controls(char *s);
/**
 * vgpu_strerror() - text for -errno or one of our codes (sign ignored).
 * @err: an errno value or VGPU_E*, either sign
 * Return: a static string (strerror()'s for errno values).
 */
const char *vgpu_strerror(int err);

/* Allocators that never return NULL: on failure, one line on stderr and abort(). */
/**
 * vgpu_xmalloc() - allocate @size bytes; never NULL.
 * @size: the size in bytes (0 allocates one byte)
 * Return: uninitialised memory; caller frees.  Out of memory: one line on
 * stderr and abort().
 */
void *vgpu_xmalloc(size_t size);
/**
 * vgpu_xcalloc() - zeroed @n x @size bytes (overflow checked); never NULL.
 * @n: the number of elements (0 is taken as 1)
 * @size: the size of one element (0 is taken as 1)
 * Return: zeroed memory; caller frees.  Out of memory or overflow: abort().
 */
void *vgpu_xcalloc(size_t n, size_t size);
/**
 * vgpu_xrealloc() - resize @p to @size bytes; never NULL.
 * @p: a heap block, or NULL for a new one
 * @size: the new size in bytes (0 is taken as 1)
 * Return: the block, possibly moved (@p is then invalid); caller frees.
 * Out of memory: abort().
 */
void *vgpu_xrealloc(void *p, size_t size);
/**
 * vgpu_xreallocarray() - grow @p to hold @n elements of @size (n * size
 * checked for overflow); never NULL.
 * @p: a heap block, or NULL for a new one
 * @n: the number of elements
 * @size: the size of one element
 * Return: the block, possibly moved; caller frees.  Out of memory or
 * overflow: abort().
 */
void *vgpu_xreallocarray(void *p, size_t n, size_t size);
/**
 * vgpu_xstrdup() - copy of @s ("" for NULL); never NULL.
 * @s: the string, or NULL
 * Return: a heap copy; caller frees.  Out of memory: abort().
 */
char *vgpu_xstrdup(const char *s);
/**
 * vgpu_xstrndup() - copy of at most @n bytes of @s; never NULL.
 * @s: the string (not NULL)
 * @n: the most bytes copied; the copy is always NUL-terminated
 * Return: a heap copy; caller frees.  Out of memory: abort().
 */
char *vgpu_xstrndup(const char *s, size_t n);
/**
 * vgpu_asprintf() - formatted string on the heap; never NULL.
 * @fmt: printf format
 * @...: arguments for @fmt
 * Return: the text; caller frees.  Out of memory: abort().
 */
char *vgpu_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/**
 * vgpu_append() - append the formatted text to the heap string *@s (NULL
 * starts one); for messages and lists built piece by piece.
 * @s: the string, reallocated in place; caller frees *@s
 * @fmt: printf format of the text appended
 * @...: arguments for @fmt
 */
void vgpu_append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * vgpu_vasprintf() - vgpu_asprintf() with a va_list.
 * @fmt: printf format
 * @ap: arguments for @fmt
 * Return: the text; caller frees.  Out of memory: abort().
 */
char *vgpu_vasprintf(const char *fmt, va_list ap);

/**
 * vgpu_interrupt() - say that the process was asked to stop (SIGINT,
 * SIGTERM, SIGHUP): async-signal-safe, for the caller's signal handler.
 * Nothing new starts after it: programs being run are stopped
 * (vgpu_exec()), lock waits end, a transaction's next step fails with
 * -EINTR and the caller rolls back and unlocks.
 * @sig: the signal number (0 counts as SIGTERM)
 */
void vgpu_interrupt(int sig);
/**
 * vgpu_interrupted() - the signal vgpu_interrupt() was given, 0 none.
 * Return: the signal number, or 0.
 */
int vgpu_interrupted(void);

#endif
