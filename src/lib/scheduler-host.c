// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The vGPU scheduler on the host: the modprobe.d files read, the live
 * policy asked of NVML or read from the kernel log, and vgpuctl's one file
 * written atomically.  What the values mean is scheduler.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cleanup.h"
#include "nvml.h"
#include "scheduler-host.h"
#include "sysfs-lock.h"
#include "sysfs-state.h"

/* A modprobe.d file is a few lines: more is not one. */
#define CONF_MAX (1u << 20)
/* The last bytes of a log read: as vgpu_host_driver_build() reads them. */
#define LOG_TAIL_MAX (4u << 20)

/* by file name, bytewise, whatever the directory: the order modprobe reads them in */
static int base_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return strcmp(strrchr(x, '/') + 1, strrchr(y, '/') + 1);
}

static bool is_conf(const char *name)
{
	size_t l = strlen(name);

	return l > 5 && name[0] != '.' && strcmp(name + l - 5, ".conf") == 0;
}

/*
 * Every NAME.conf of the directories modprobe reads (kmod's list, the first
 * first): a name in an earlier directory hides the same name in a later one.
 * Root-relative paths with a leading '/' into @out, sorted by name.
 */
static int conf_files(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root, struct vgpu_strv *out)
{
	static const char *const dirs[] = { VGPU_SCHED_DIR, "run/modprobe.d",
					    "usr/local/lib/modprobe.d", "usr/lib/modprobe.d",
					    "lib/modprobe.d" };

	for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
		VGPU_AUTOSTRV names = { 0 };
		int r = vgpu_sysfs_list_dir(root, &names, "%s", dirs[d]);

		if (r == -ENOENT || r == -ENOTDIR)
			continue;
		if (r < 0)
			return vgpu_error(ctx, r, "cannot list '/%s': %s", dirs[d],
					  vgpu_strerror(r));
		for (size_t i = 0; i < names.n; i++) {
			bool hidden = false;

			if (!is_conf(names.items[i]))
				continue;
			for (size_t k = 0; k < out->n && !hidden; k++)
				hidden = strcmp(strrchr(out->items[k], '/') + 1, names.items[i]) ==
					 0;
			if (!hidden)
				vgpu_strv_push(out,
					       vgpu_asprintf("/%s/%s", dirs[d], names.items[i]));
		}
	}
	if (out->n) /* qsort() of no array: NULL is undefined (UBSan) */
		qsort(out->items, out->n, sizeof(*out->items), base_cmp);
	return 0;
}

int vgpu_sched_conf_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_sched_conf *all,
			 struct vgpu_sched_conf *ours)
{
	static const char mine[] = "/" VGPU_SCHED_DIR "/" VGPU_SCHED_FILE;
	VGPU_AUTOSTRV files = { 0 };
	struct vgpu_sysdir root;
	int r;

	memset(all, 0, sizeof(*all));
	if (ours)
		memset(ours, 0, sizeof(*ours));
	vgpu_sysdir_root(fs, &root);
	r = conf_files(ctx, &root, &files);
	for (size_t i = 0; r == 0 && i < files.n; i++) {
		VGPU_AUTOFREE char *text = NULL;
		const char *rel = files.items[i];

		r = vgpu_sysfs_read_file(&root, CONF_MAX, &text, NULL, "%s", rel + 1);
		if (r < 0) {
			r = vgpu_error(ctx, r, "cannot read '%s': %s", rel, vgpu_strerror(r));
			break;
		}
		r = vgpu_sched_conf_parse(ctx, all, rel, text);
		if (r == 0 && ours && strcmp(rel, mine) == 0)
			r = vgpu_sched_conf_parse(ctx, ours, rel, text);
	}
	if (r < 0) {
		vgpu_sched_conf_clear(all);
		if (ours)
			vgpu_sched_conf_clear(ours);
	}
	return r;
}

/* The scheduler lines of the first log that has any. */
static size_t read_log(struct vgpu_sysfs *fs, struct vgpu_sched_log **out)
{
	static const char *const logs[] = { "var/log/kern.log", "var/log/messages",
					    "var/log/syslog" };
	struct vgpu_sysdir root;

	*out = NULL;
	vgpu_sysdir_root(fs, &root);
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		VGPU_AUTOFREE char *text = NULL;
		size_t n;

		if (vgpu_sysfs_read_tail(&root, LOG_TAIL_MAX, &text, NULL, "%s", logs[i]) < 0)
			continue;
		n = vgpu_sched_log_parse(text, out);
		if (n)
			return n;
	}
	return 0;
}

int vgpu_sched_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_nvml *n,
		    const struct vgpu_model *m, struct vgpu_sched_row **rows)
{
	struct vgpu_sched_conf all;
	VGPU_AUTOFREE struct vgpu_sched_log *log = NULL;
	struct vgpu_sched_row *v;
	size_t n_log = 0;
	bool log_read = false;
	int r;

	*rows = NULL;
	r = vgpu_sched_conf_read(ctx, fs, &all, NULL);
	if (r < 0)
		return r;
	v = vgpu_xcalloc(m->n_gpus + 1, sizeof(*v));
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		struct vgpu_sched_row *w = &v[i];
		const char *from = NULL;

		snprintf(w->gpu, sizeof(w->gpu), "%s", g->addr);
		w->hetero = g->hetero;
		if (vgpu_nvml_sched(n, g->addr, &w->live) == 0) {
			w->live_from = "nvml";
		} else {
			if (!log_read) {
				n_log = read_log(fs, &log);
				log_read = true;
			}
			for (size_t k = 0; k < n_log; k++)
				if (strcmp(log[k].bdf, g->addr) == 0) {
					w->live = log[k].s;
					w->live_from = "kernel log";
				}
		}
		w->conf.policy = VGPU_SCHED_BEST_EFFORT;
		if (vgpu_sched_conf_of(&all, g->addr, &w->conf_value, &from) == 0) {
			w->conf_set = true;
			snprintf(w->conf_from, sizeof(w->conf_from), "%s", from);
			vgpu_sched_decode(w->conf_value, &w->conf); /* checked when read */
		}
		w->pending = !w->live.policy			    ? VGPU_UNKNOWN :
			     vgpu_sched_differs(&w->conf, &w->live) ? VGPU_ON :
								      VGPU_OFF;
	}
	vgpu_sched_conf_clear(&all);
	*rows = v;
	return 0;
}

/* Whether a file named later than vgpuctl's sets the parameter: it wins. */
static void warn_later(struct vgpu_ctx *ctx, const char *from, const char *param)
{
	static const char ours[] = "/" VGPU_SCHED_DIR "/" VGPU_SCHED_FILE;

	if (from && strcmp(strrchr(from, '/') + 1, VGPU_SCHED_FILE) > 0)
		vgpu_log(
			ctx, LOG_WARNING,
			"'%s' sets %s too and is read after '%s': its value is the one the driver gets",
			from, param, ours);
}

/* @w's value; the error says why NVIDIA has no such setting, or names the GPU in mixed-size mode.
 */
static int want_value(struct vgpu_ctx *ctx, const struct vgpu_model *m,
		      const struct vgpu_sched_want *w, uint32_t *value)
{
	int r = vgpu_sched_encode(&w->s, value);

	if (r == -ERANGE)
		return vgpu_error(
			ctx, r,
			"scheduler setting out of NVIDIA's range: time slice 1-%u ms, averaging factor 1-%u, frequency %u-%u Hz",
			VGPU_SCHED_TIMESLICE_MAX, VGPU_SCHED_AVG_MAX, VGPU_SCHED_FREQ_MIN,
			VGPU_SCHED_FREQ_MAX);
	if (r < 0)
		return vgpu_error(
			ctx, r,
			"no such scheduler setting: best effort takes no time slice, and a time slice and adaptive round robin exclude each other");
	for (size_t i = 0; w->s.policy == VGPU_SCHED_FIXED_SHARE && i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if ((!w->gpu || strcmp(w->gpu, g->addr) == 0) && g->hetero == VGPU_ON)
			return vgpu_error(
				ctx, -EINVAL,
				"GPU '%s' is in mixed-size mode: fixed share is not supported with vGPUs of several sizes (best effort or equal share are)",
				g->addr);
	}
	return 0;
}

/* Every GPU's setting, then one value per GPU named: @w's values, checked. */
struct sched_values {
	const char **gpus;
	uint32_t *values;
	size_t n_gpus;
	uint32_t global;
	bool has_global;
};

static int sched_values(struct vgpu_ctx *ctx, const struct vgpu_model *m,
			const struct vgpu_sched_want *w, size_t n, struct sched_values *v)
{
	v->gpus = vgpu_xcalloc(n + 1, sizeof(*v->gpus));
	v->values = vgpu_xcalloc(n + 1, sizeof(*v->values));
	for (size_t i = 0; i < n; i++) {
		uint32_t x;
		int r = want_value(ctx, m, &w[i], &x);

		if (r < 0)
			return r;
		if (!w[i].gpu) {
			v->global = x;
			v->has_global = true;
		} else {
			v->gpus[v->n_gpus] = w[i].gpu;
			v->values[v->n_gpus++] = x;
		}
	}
	return 0;
}

/* A new file's warnings: a later file's parameter wins, a GPU's own value beats every GPU's. */
static void warn_kept(struct vgpu_ctx *ctx, const struct vgpu_sched_conf *all,
		      const struct sched_values *v)
{
	if (v->n_gpus)
		warn_later(ctx, all->per_device_from, "NVreg_RegistryDwordsPerDevice");
	if (v->has_global)
		warn_later(ctx, all->dwords_from, "NVreg_RegistryDwords");
	for (size_t i = 0; v->has_global && i < all->n_devs; i++) {
		bool set_now = false;

		for (size_t k = 0; k < v->n_gpus; k++)
			set_now |= strcmp(v->gpus[k], all->devs[i].bdf) == 0;
		if (!set_now)
			vgpu_log(
				ctx, LOG_WARNING,
				"GPU '%s' keeps its own RmPVMRL=0x%0*x of NVreg_RegistryDwordsPerDevice ('%s'): it beats the one for every GPU",
				all->devs[i].bdf, all->devs[i].value > 0xff ? 8 : 2,
				all->devs[i].value, all->per_device_from);
	}
}

/* Read, render, compare and (unless @dry_run) replace vgpuctl's file. */
static int sched_write(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct sched_values *v,
		       bool dry_run, char **text, bool *changed)
{
	VGPU_AUTOFREE char *out = NULL;
	VGPU_AUTOFREE char *old = NULL;
	struct vgpu_sched_conf all, ours;
	struct vgpu_sysdir root, dir;
	int r = vgpu_sched_conf_read(ctx, fs, &all, &ours);

	if (r < 0)
		return r;
	out = vgpu_sched_conf_render(&all, &ours, v->has_global ? &v->global : NULL, v->gpus,
				     v->values, v->n_gpus);
	warn_kept(ctx, &all, v);
	vgpu_sched_conf_clear(&all);
	vgpu_sched_conf_clear(&ours);
	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_read_file(&root, CONF_MAX, &old, NULL, "%s/%s", VGPU_SCHED_DIR,
				 VGPU_SCHED_FILE);
	*changed = r < 0 || strcmp(old, out) != 0;
	if (!dry_run && *changed) {
		r = vgpu_sysfs_mkdirs_ctx(ctx, fs, &dir, VGPU_SCHED_DIR);
		if (r < 0)
			return r;
		r = vgpu_sysfs_replace(&dir, VGPU_SCHED_FILE, out, strlen(out));
		vgpu_sysdir_close(&dir);
		if (r < 0)
			return vgpu_error(ctx, r, "cannot write '/%s/%s': %s", VGPU_SCHED_DIR,
					  VGPU_SCHED_FILE, vgpu_strerror(r));
	}
	*text = vgpu_steal_ptr(&out);
	return 0;
}

int vgpu_sched_set(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
		   const struct vgpu_sched_want *w, size_t n, bool dry_run, char **text,
		   bool *changed)
{
	struct sched_values v = { .n_gpus = 0 };
	int r = sched_values(ctx, m, w, n, &v);

	/* the file is read and replaced under the host lock, as every writer's */
	if (r == 0 && !dry_run)
		r = vgpu_sysfs_lock(ctx, fs, VGPU_SCHED_LOCK_WAIT_MS);
	if (r == 0) {
		r = sched_write(ctx, fs, &v, dry_run, text, changed);
		if (!dry_run)
			vgpu_sysfs_unlock(fs);
	}
	free(v.gpus);
	free(v.values);
	return r;
}
