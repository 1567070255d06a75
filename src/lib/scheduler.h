/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scheduler.h - the time-sliced vGPU scheduler as data: NVIDIA's RmPVMRL
 * registry value (encoder and decoder), the modprobe.d lines that carry it
 * (NVreg_RegistryDwords for every GPU, NVreg_RegistryDwordsPerDevice per
 * GPU, the per-device entry beating the global one), the kernel log's
 * report of the live policy, and the file vgpuctl writes.  Pure: the
 * callers read and write the files (scheduler-host.c).
 */
#ifndef VGPU_SCHEDULER_H
#define VGPU_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "util.h"

/* The scheduler policies; NONE: not known (not configured, not reported). */
enum vgpu_sched_policy {
	VGPU_SCHED_NONE = 0,
	VGPU_SCHED_BEST_EFFORT,
	VGPU_SCHED_EQUAL_SHARE,
	VGPU_SCHED_FIXED_SHARE,
};

/* Strict round robin: a time slice of 1 to 30 ms (0x01-0x1E), 0 the driver's default. */
#define VGPU_SCHED_TIMESLICE_MAX 0x1e
/* Adaptive round robin: averaging factor 1 to 60 (0: the driver's default, 33), frequency 63 to 960
 * Hz. */
#define VGPU_SCHED_AVG_MAX 0x3c
#define VGPU_SCHED_AVG_DEFAULT 33
#define VGPU_SCHED_FREQ_MIN 0x3f
#define VGPU_SCHED_FREQ_MAX 0x3c0

/* One scheduler setting, as RmPVMRL or the driver says it. */
struct vgpu_sched {
	enum vgpu_sched_policy policy;
	bool adaptive; /* adaptive round robin with its own avg_factor, frequency_hz */
	bool legacy; /* adaptive round robin off (RmPVMRL bit 1): the time slice scheduler */
	unsigned timeslice_ms; /* legacy: 0 the driver's default (2 ms up to 8 vGPUs, else 1 ms) */
	unsigned avg_factor; /* adaptive: 0 the driver's default (33) */
	unsigned frequency_hz; /* adaptive: 0 the driver's default; below 63 the driver raises it */
};

/**
 * vgpu_sched_decode() - an RmPVMRL value as a setting.
 * @v: the value, laid out as the driver reads it (scheduler.c): 0x00 best
 *     effort; 0x01 / 0x11 equal / fixed share with the driver's defaults;
 *     0xAAFFF001 / 0xAAFFF011 adaptive round robin with averaging factor AA
 *     and frequency FFF Hz; 0x00TT0003 / 0x00TT0013 the legacy scheduler
 *     (bit 1) with a TT ms time slice
 * @out: the setting, written only on success
 * Return: 0, or -EINVAL for a value NVIDIA does not document.
 */
int vgpu_sched_decode(uint32_t v, struct vgpu_sched *out);

/**
 * vgpu_sched_encode() - the RmPVMRL value of a setting (vgpu_sched_decode()'s inverse).
 * @s: the setting (best effort takes no time slice; a time slice sets bit 1,
 *     the legacy scheduler, the only one that reads it)
 * @out: the value, written only on success
 * Return: 0, or -EINVAL (no policy, best effort with parameters) or
 * -ERANGE (a time slice, averaging factor or frequency out of NVIDIA's range).
 */
int vgpu_sched_encode(const struct vgpu_sched *s, uint32_t *out);

/**
 * vgpu_sched_policy_name() - "best-effort", "equal-share", "fixed-share".
 * @p: the policy
 * Return: the name; NULL for VGPU_SCHED_NONE.
 */
const char *vgpu_sched_policy_name(enum vgpu_sched_policy p);

/**
 * vgpu_sched_policy_parse() - a policy by name.
 * @s: "best-effort", "equal-share" or "fixed-share" (NVIDIA's BEST_EFFORT,
 *     EQUAL_SHARE, FIXED_SHARE too)
 * @out: the policy, written only on success
 * Return: 0 or -EINVAL.
 */
int vgpu_sched_policy_parse(const char *s, enum vgpu_sched_policy *out);

/**
 * vgpu_sched_text() - a setting in words: "equal-share", "fixed-share 24ms",
 * "equal-share adaptive 60/960Hz"; "" for no policy.
 * @s: the setting
 * @buf: where the text goes
 * @len: the size of @buf
 */
void vgpu_sched_text(const struct vgpu_sched *s, char *buf, size_t len);

/**
 * vgpu_sched_differs() - would a driver load with @want give another scheduler than @live?
 * @want: the configured setting
 * @live: what the driver reports (a default time slice there is the
 *        number it chose, so a configured default time slice matches any)
 * Return: true when the policy, an explicit time slice or the round-robin kind differ.
 */
bool vgpu_sched_differs(const struct vgpu_sched *want, const struct vgpu_sched *live);

/* One GPU's RmPVMRL in NVreg_RegistryDwordsPerDevice. */
struct vgpu_sched_dev {
	char bdf[VGPU_BDF_LEN];
	uint32_t value;
};

/* The scheduler's registry keys, as the modprobe.d files read so far set them. */
struct vgpu_sched_conf {
	char *dwords; /* the last NVreg_RegistryDwords of an "options nvidia" line, NULL none */
	char *dwords_from; /* its file */
	char *per_device; /* the last NVreg_RegistryDwordsPerDevice, NULL none */
	char *per_device_from;
	bool has_global; /* dwords has RmPVMRL */
	uint32_t global;
	struct vgpu_sched_dev *devs; /* per_device's RmPVMRL entries */
	size_t n_devs;
};

/**
 * vgpu_sched_conf_parse() - add one modprobe.d file's "options nvidia" lines
 * (backslash continuations joined, comments skipped); a parameter given again
 * replaces the earlier value, as the kernel takes the last one.
 * @ctx: where the error goes
 * @c: the keys so far (a zeroed struct to start)
 * @file: the file's name, for messages and the *_from fields
 * @text: its contents
 * Return: 0, or -EINVAL with "FILE:LINE: ..." in @ctx (an unterminated quote,
 * a malformed RmPVMRL or pci= value, RmPVMRL before any pci=); @c is then unchanged.
 */
int vgpu_sched_conf_parse(struct vgpu_ctx *ctx, struct vgpu_sched_conf *c, const char *file,
			  const char *text);

/**
 * vgpu_sched_conf_clear() - free what @c holds; it is zeroed after.
 * @c: the keys
 */
void vgpu_sched_conf_clear(struct vgpu_sched_conf *c);

/**
 * vgpu_sched_conf_of() - the RmPVMRL a GPU gets at the next driver load:
 * its NVreg_RegistryDwordsPerDevice entry, else the NVreg_RegistryDwords one.
 * @c: the keys
 * @bdf: the GPU's address ("0000:3b:00.0")
 * @value: the value, written when there is one
 * @from: the file that sets it, written when there is one
 * Return: 0, or -ENOENT when neither names one (the driver's default, best effort).
 */
int vgpu_sched_conf_of(const struct vgpu_sched_conf *c, const char *bdf, uint32_t *value,
		       const char **from);

/**
 * vgpu_sched_conf_render() - the text of vgpuctl's modprobe.d file after a change.
 * @all: the keys of every file (what the driver gets now)
 * @ours: the keys of vgpuctl's file alone
 * @global: the new RmPVMRL for every GPU (NVreg_RegistryDwords); NULL: unchanged
 * @gpus: GPUs given their own (normalized addresses, NVreg_RegistryDwordsPerDevice)
 * @values: their values, one per GPU
 * @n_gpus: how many; 0: per device unchanged
 *
 * A changed parameter starts from its value in @all, so the other registry
 * keys and the other GPUs' entries the driver gets now are kept; an unchanged
 * one stays as @ours has it.
 * Return: the file's text (heap).
 */
char *vgpu_sched_conf_render(const struct vgpu_sched_conf *all, const struct vgpu_sched_conf *ours,
			     const uint32_t *global, const char *const *gpus,
			     const uint32_t *values, size_t n_gpus);

/* The live scheduler of a GPU as the kernel log reports it. */
struct vgpu_sched_log {
	char bdf[VGPU_BDF_LEN];
	struct vgpu_sched s;
};

/**
 * vgpu_sched_log_parse() - the last "NVRM: GPU at ADDR has software scheduler
 * ENABLED|DISABLED with policy NAME." line per GPU, with the "NVRM: Software
 * scheduler timeslice set to N ms." line after it (before the next GPU's).
 * @text: the log
 * @out: one entry per GPU (heap; NULL when none)
 * Return: how many.
 */
size_t vgpu_sched_log_parse(const char *text, struct vgpu_sched_log **out);

#endif
