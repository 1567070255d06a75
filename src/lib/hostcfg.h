/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostcfg.h - the host configuration file, in NVIDIA's own formats.
 *
 * One YAML file may hold, beside `version: v1`:
 *   mig-configs:  {LABEL: [ENTRY...]}   as NVIDIA mig-parted reads it
 *   vgpu-configs: {LABEL: [ENTRY...]}   as NVIDIA vgpu-device-manager reads it
 *   start-domains: {LABEL: [NAME...]}   vgpuctl's own: domains started last
 *   scheduler:    {LABEL: [SCHED...]}   vgpuctl's own: the vGPU scheduler (RmPVMRL)
 * and an admin picks one LABEL (`--config LABEL`); a label may be in any of
 * the three maps.  An ENTRY holds `devices` (`all`, or a list of GPU indexes
 * and, a vgpuctl extension, PCI addresses: indexes move when a GPU is added
 * or fails), `device-filter` (PCI ids "0x20B710DE", device << 16 | vendor),
 * and `mig-enabled` + `mig-devices` (mig-configs) or `vgpu-devices`
 * (vgpu-configs).  A SCHED holds `policy` (best-effort, equal-share,
 * fixed-share), optionally `timeslice` (ms) or `average-factor` and
 * `frequency` (adaptive round robin), and `devices` (`all` or PCI addresses;
 * left out: every GPU); at most one SCHED is for every GPU, a GPU in one SCHED.
 *
 * The whole file is validated, not only the selected label: a typo in any
 * label is found the first time the file is used, not on the day that label
 * is picked.  Types are strict: integers are plain decimal scalars, booleans
 * are YAML 1.1's plain true/false, yes/no, on/off or y/n in any case (as
 * NVIDIA's tools read them; never quoted), unknown and duplicate keys
 * are errors, and YAML anchors and aliases are refused (no YAML bomb can
 * expand).  Every error is one line:
 * "FILE:LINE: what, where", LINE 1-based.
 *
 * Pure except vgpu_hostcfg_load(), which reads the file with
 * vgpu_file_read().  Needs libyaml: it lives in libvgpu-cfg, outside the
 * core that the vgpuctl binary carries.
 */
#ifndef VGPU_HOSTCFG_H
#define VGPU_HOSTCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "scheduler.h"
#include "util.h"

#define VGPU_CFG_MAX_BYTES (16u << 20) /* larger files are refused unread */
#define VGPU_CFG_MAX_DEPTH 32 /* nesting of YAML collections */
#define VGPU_CFG_MAX_COUNT 1024 /* a mig-devices or vgpu-devices count */
#define VGPU_CFG_MAX_INDEX 1023 /* a GPU index in devices */

/* Which of NVIDIA's maps an entry came from. */
enum vgpu_cfg_section {
	VGPU_CFG_MIG, /* mig-configs */
	VGPU_CFG_VGPU, /* vgpu-configs */
};

/* One "name: count" of mig-devices or vgpu-devices. */
struct vgpu_cfg_count {
	char *name; /* "1g.6gb", "A30-1-6C" */
	unsigned count; /* 0..VGPU_CFG_MAX_COUNT */
	unsigned line;
};

/* One entry of a label's list. */
struct vgpu_cfg_entry {
	enum vgpu_cfg_section section;
	unsigned line; /* of the entry, for messages */
	bool is_all; /* devices: all */
	int *indexes; /* devices: [0, 1] */
	size_t n_indexes;
	char (*addrs)[VGPU_BDF_LEN]; /* devices: ["0000:3b:00.0"], normalized */
	size_t n_addrs;
	uint32_t *device_filter; /* device-filter: "0x20B710DE" -> 0x20b710de */
	size_t n_filter;
	int mig_enabled; /* -1 not given (vgpu-configs), 0, 1 */
	struct vgpu_cfg_count *mig; /* mig-devices, in file order */
	size_t n_mig;
	struct vgpu_cfg_count *vgpu; /* vgpu-devices, in file order */
	size_t n_vgpu;
};

/* One entry of scheduler[label]: a setting for every GPU or for some. */
struct vgpu_cfg_sched {
	unsigned line;
	struct vgpu_sched s;
	char (*addrs)[VGPU_BDF_LEN]; /* devices, normalized; none: every GPU */
	size_t n_addrs;
};

/* The selected label of one file. */
struct vgpu_hostcfg {
	char *file; /* as named in messages */
	char *label; /* NULL when none was selected */
	struct vgpu_cfg_entry *entries; /* mig-configs[label], then vgpu-configs[label] */
	size_t n_entries;
	char **domains; /* start-domains[label] */
	size_t n_domains;
	struct vgpu_cfg_sched *sched; /* scheduler[label] */
	size_t n_sched;
	char **labels; /* every label of the file, sorted, once each */
	size_t n_labels;
};

/**
 * vgpu_hostcfg_parse() - validate the configuration text @buf (@len bytes,
 * need not be NUL-terminated) and select @label.
 * @ctx: where errors go, each one line "FILE:LINE: what, where"
 * @name: names the file in messages (NULL: "(config)")
 * @buf: the YAML text, UTF-8
 * @len: the length of @buf in bytes
 * @label: the label to select, or NULL to validate only
 * @out: the selected label's entries and domains, and every label of the file
 *
 * @label NULL validates only (then *out holds the labels and no entries).
 * A @label in none of the maps is an error that lists the labels.
 * Return: 0 or -EINVAL (-EFBIG past VGPU_CFG_MAX_BYTES; -ENOMEM if libyaml
 * cannot set up its parser) with a message in @ctx; *out is written only on
 * success, clear it with vgpu_hostcfg_clear().
 */
int vgpu_hostcfg_parse(struct vgpu_ctx *ctx, const char *name, const char *buf, size_t len,
		       const char *label, struct vgpu_hostcfg *out);
/**
 * vgpu_hostcfg_load() - vgpu_hostcfg_parse() of the file at @path: a regular
 * file of at most VGPU_CFG_MAX_BYTES (FIFOs, devices and directories are
 * refused without blocking).
 * @ctx: where errors go
 * @path: the file, as the user gave it; it names the file in messages
 * @label: the label to select, or NULL to validate only
 * @out: the parsed configuration, written only on success
 * Return: 0 or -errno with a message in @ctx (vgpu_file_read()'s or
 * vgpu_hostcfg_parse()'s); caller clears *out with vgpu_hostcfg_clear().
 */
int vgpu_hostcfg_load(struct vgpu_ctx *ctx, const char *path, const char *label,
		      struct vgpu_hostcfg *out);
/**
 * vgpu_hostcfg_clear() - free what *@c holds; it is zeroed and reusable.
 * @c: the configuration (a zeroed one is fine)
 */
void vgpu_hostcfg_clear(struct vgpu_hostcfg *c);

#endif
