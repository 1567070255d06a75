/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * params.h - a domain's NVIDIA vgpu_params set (pure: no I/O).
 *
 * The driver's file (sys/bus/mdev/devices/UUID/nvidia/vgpu_params, or
 * sys/bus/pci/devices/VF/nvidia/vgpu_params) holds comma-separated
 * name=value pairs that take effect the next time the vGPU is opened; it
 * is written whole, and a single space clears it (vGPU UG 17.0 §2.10.5).
 * vgpuctl keeps the set in the domain's metadata (<vgpuctl:params>) and the
 * hook's prepare writes it right after the create, before QEMU opens the
 * vGPU.  Keys are kept sorted, so the set formats the same however it was
 * made.
 */
#ifndef VGPU_PARAMS_H
#define VGPU_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "records.h"

#define VGPU_PARAMS_MAX 32
#define VGPU_PARAM_KEY_MAX 48
#define VGPU_PARAM_VALUE_MAX 128
/* the file's longest text: every pair, its '=' and ',' */
#define VGPU_PARAMS_TEXT_MAX (VGPU_PARAMS_MAX * (VGPU_PARAM_KEY_MAX + VGPU_PARAM_VALUE_MAX + 2))

struct vgpu_param {
	char key[VGPU_PARAM_KEY_MAX];
	char value[VGPU_PARAM_VALUE_MAX];
};

/* A set, sorted by key, each key once. */
struct vgpu_params {
	struct vgpu_param v[VGPU_PARAMS_MAX];
	size_t n;
};

/**
 * vgpu_param_documented() - is @key one of NVIDIA's documented parameters
 * (frame_rate_limiter, disable_vnc, enable_uvm, enable_debugging,
 * enable_profiling), whose values are 0 or 1?
 * @key: the parameter's name
 * Return: true when it is.
 */
bool vgpu_param_documented(const char *key);
/**
 * vgpu_param_blocks_migration() - does @p keep the vGPU from migrating
 * live (enable_uvm, enable_debugging or enable_profiling not 0; vGPU UG 17.0
 * §6.5)?
 * @p: one parameter
 * Return: true when it does.
 */
bool vgpu_param_blocks_migration(const struct vgpu_param *p);
/**
 * vgpu_params_get() - the value of @key in @set.
 * @set: the set
 * @key: the parameter's name
 * Return: the value (borrowed), or NULL when @key is not set.
 */
const char *vgpu_params_get(const struct vgpu_params *set, const char *key);
/**
 * vgpu_params_set() - set @key to @value in @set (replacing its value).  A
 * key must be letters, digits, '_' or '-', a value printable ASCII without
 * blanks, ',' or '='.  A documented key takes 0 or 1 only; any other needs
 * @raw (the driver's undocumented parameters).
 * @ctx: where errors go
 * @set: the set, changed only on success
 * @key: the parameter's name
 * @value: its value
 * @raw: accept a key NVIDIA does not document
 * Return: 0 or -EINVAL (a bad key or value, an undocumented key without
 * @raw) or -E2BIG (more than VGPU_PARAMS_MAX keys), with a message in @ctx.
 */
int vgpu_params_set(struct vgpu_ctx *ctx, struct vgpu_params *set, const char *key,
		    const char *value, bool raw);
/**
 * vgpu_params_unset() - drop @key from @set.
 * @set: the set
 * @key: the parameter's name
 * Return: true when it was set.
 */
bool vgpu_params_unset(struct vgpu_params *set, const char *key);
/**
 * vgpu_params_parse() - a set from the driver's text ("k=v,k=v"; blanks,
 * a trailing newline and empty items ignored; blank text is the empty set).
 * Undocumented keys are accepted (the file may hold anything).
 * @ctx: where errors go
 * @text: the text
 * @out: the set, on success
 * Return: 0 or -EINVAL (an item that is not name=value, or a bad name or
 * value, quoted) with a message in @ctx.
 */
int vgpu_params_parse(struct vgpu_ctx *ctx, const char *text, struct vgpu_params *out);
/**
 * vgpu_params_format() - @set as the driver's text, "k=v,k=v" ("" for the
 * empty set).
 * @set: the set
 * @buf: where the text goes (VGPU_PARAMS_TEXT_MAX bytes always suffice)
 * @len: its size
 * Return: @buf.
 */
char *vgpu_params_format(const struct vgpu_params *set, char *buf, size_t len);
/**
 * vgpu_params_file_text() - what is written to the file for @set: its
 * text, or a single space for the empty set (a space clears the file).
 * @set: the set
 * @buf: where the text goes (VGPU_PARAMS_TEXT_MAX bytes always suffice)
 * @len: its size
 * Return: @buf.
 */
char *vgpu_params_file_text(const struct vgpu_params *set, char *buf, size_t len);
/**
 * vgpu_params_equal() - do @a and @b hold the same keys with the same values?
 * @a: a set
 * @b: another
 * Return: true when they do.
 */
bool vgpu_params_equal(const struct vgpu_params *a, const struct vgpu_params *b);
/**
 * vgpu_params_profiling() - does @set turn NVIDIA's profiler on
 * (enable_profiling not 0)?
 * @set: the set
 * Return: true when it does.
 */
bool vgpu_params_profiling(const struct vgpu_params *set);
/**
 * vgpu_params_check_profiling() - refuse profiling for the domain @uuid
 * when another domain that runs on one of its GPUs (an active record) or
 * is migrating there (an incoming record) has it on: NVIDIA's profiler
 * works for one VM per GPU at a time.
 * @ctx: where errors go
 * @recs: the host's owner records
 * @uuid: the domain's UUID (its records say which GPUs it uses)
 * @set: the domain's set; without profiling nothing is refused
 * @profiling_of: whether another domain's vGPU (its record) has profiling
 *                on, as its vgpu_params file reads
 * @data: for @profiling_of
 * Return: 0 or -EBUSY naming the other domain and the GPU, with a message
 * in @ctx.
 */
int vgpu_params_check_profiling(struct vgpu_ctx *ctx, const struct vgpu_records *recs,
				const char *uuid, const struct vgpu_params *set,
				bool (*profiling_of)(void *data, const struct vgpu_record *r),
				void *data);

#endif
