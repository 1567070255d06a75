// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: a host configuration resolved against a host model, GPU by GPU
 * (which entries select it, what it must have, checked against what it
 * offers), and freed again; the steps that bring it there are apply.c's
 * (see apply.h).  Pure over the model.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "apply.h"
#include "capacity.h"
#include "cleanup.h"
#include "exec.h"
#include "plan.h"
#include "vgputype.h"

/* ---- the config, resolved against the host ------------------------------------ */

static bool is_nvidia_gpu(const struct vgpu_gpu *g)
{
	return g->vendor_id == VGPU_PCI_VENDOR_NVIDIA;
}

static bool selected(const struct vgpu_cfg_entry *e, const struct vgpu_gpu *g, int index)
{
	bool hit = e->is_all;

	for (size_t i = 0; !hit && i < e->n_indexes; i++)
		hit = e->indexes[i] == index;
	for (size_t i = 0; !hit && i < e->n_addrs; i++)
		hit = strcmp(e->addrs[i], g->addr) == 0;
	if (hit && e->n_filter) {
		uint32_t id = (uint32_t)g->device_id << 16 | g->vendor_id;

		hit = false;
		for (size_t i = 0; !hit && i < e->n_filter; i++)
			hit = e->device_filter[i] == id;
	}
	return hit;
}

static struct vgpu_apply_gpu *want_for(struct vgpu_apply *a, const struct vgpu_gpu *g,
				       unsigned line)
{
	for (size_t i = 0; i < a->n_gpus; i++)
		if (strcmp(a->gpus[i].addr, g->addr) == 0)
			return &a->gpus[i];
	a->gpus = vgpu_xreallocarray(a->gpus, a->n_gpus + 1, sizeof(*a->gpus));
	a->gpus[a->n_gpus] = (struct vgpu_apply_gpu){ .mig = -1, .line = line };
	snprintf(a->gpus[a->n_gpus].addr, sizeof(a->gpus[a->n_gpus].addr), "%s", g->addr);
	a->gpus[a->n_gpus].board = vgpu_mig_board_for_gpu(g);
	return &a->gpus[a->n_gpus++];
}

static int add_gi(struct vgpu_apply *a, struct vgpu_apply_gpu *w, const char *name, unsigned count,
		  unsigned line)
{
	struct vgpu_ctx *ctx = a->ctx;
	struct vgpu_mig_request r;

	if (!w->board)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%u: GPU %s has no MIG, but the config gives it '%s'", a->file,
				  line, w->addr, name);
	/* vgpu_error() formats before it drops the old message: it may be an argument */
	if (vgpu_mig_parse_request(ctx, w->board, name, &r) < 0)
		return vgpu_error(ctx, -EINVAL, "%s:%u: GPU %s: %s", a->file, line, w->addr,
				  vgpu_ctx_error(ctx));
	r.count *= count;
	for (size_t i = 0; i < w->n_gis; i++)
		if (w->gis[i].profile == r.profile) {
			w->gis[i].count += r.count;
			return 0;
		}
	if (w->n_gis == VGPU_APPLY_MAX_GIS)
		return vgpu_error(ctx, -E2BIG, "%s:%u: too many GPU-instance profiles", a->file,
				  line);
	if (r.count)
		w->gis[w->n_gis++] = r;
	return 0;
}

/* One entry of each map per GPU: two would leave which counts unclear. */
static int once(struct vgpu_apply *a, const struct vgpu_apply_gpu *w, unsigned *seen, unsigned line,
		const char *map)
{
	if (*seen)
		return vgpu_error(a->ctx, -EINVAL,
				  "%s:%u: GPU %s is already selected by the %s entry at line %u",
				  a->file, line, w->addr, map, *seen);
	*seen = line;
	return 0;
}

static int merge_entry(struct vgpu_apply *a, const struct vgpu_cfg_entry *e,
		       struct vgpu_apply_gpu *w)
{
	if (e->section == VGPU_CFG_MIG) {
		if (once(a, w, &w->mig_line, e->line, "mig-configs") < 0)
			return -EINVAL;
		w->mig = e->mig_enabled;
		w->gis_set = true; /* mig-devices: {} means none */
	} else {
		if (once(a, w, &w->vgpu_line, e->line, "vgpu-configs") < 0)
			return -EINVAL;
		w->vgpu_section = true;
	}
	for (size_t i = 0; i < e->n_mig; i++)
		if (add_gi(a, w, e->mig[i].name, e->mig[i].count, e->mig[i].line) < 0)
			return -EINVAL;
	for (size_t i = 0; i < e->n_vgpu; i++) {
		w->vgpus = vgpu_xreallocarray(w->vgpus, w->n_vgpus + 1, sizeof(*w->vgpus));
		w->vgpus[w->n_vgpus++] = (struct vgpu_apply_vgpu){ .cfg = &e->vgpu[i] };
	}
	return 0;
}

/* A type of @g's board named @name: its catalogue, or a GPU's of the same model. */
static const struct vgpu_type *board_type(const struct vgpu_model *m, const struct vgpu_gpu *g,
					  const char *name)
{
	const struct vgpu_type *t = vgpu_gpu_match_type(g, name);

	for (size_t i = 0; !t && i < m->n_gpus; i++)
		if (&m->gpus[i] != g && m->gpus[i].device_id == g->device_id)
			t = vgpu_gpu_match_type(&m->gpus[i], name);
	return t;
}

/*
 * What @v's name means on @g, once: the type a catalogue names by it (a
 * name in any case, an ID, "nvidia-ID"), else the name by NVIDIA's grammar,
 * as written or in NVIDIA's upper case.  Every later decision reads this:
 * a name whose spelling one check accepts and another reads as time-sliced
 * turned MIG off under MIG-backed vGPUs.
 */
static void resolve_type(const struct vgpu_model *m, const struct vgpu_gpu *g,
			 struct vgpu_apply_vgpu *v)
{
	const struct vgpu_type *t = board_type(m, g, v->cfg->name);
	char up[VGPU_PROFILE_MAX * 2];
	size_t k;

	v->id = 0;
	if (t) {
		v->info = t->info;
		v->id = t->id;
		return;
	}
	if (vgpu_type_parse(v->cfg->name, &v->info) == 0)
		return;
	for (k = 0; v->cfg->name[k] && k + 1 < sizeof(up); k++)
		up[k] = (char)toupper((unsigned char)v->cfg->name[k]);
	up[k] = '\0';
	if (!v->cfg->name[k] && vgpu_type_parse(up, &v->info) == 0)
		return;
	vgpu_type_parse(v->cfg->name, &v->info); /* unknown: the name as written */
}

/*
 * GPU instances a number of MIG-backed vGPUs needs: one GI holds as many
 * vGPUs of one type as the driver says (Blackwell RTX PRO time-slices inside
 * a GI), so ceil(count / per GI).
 */
static unsigned gis_for(const struct vgpu_model *m, const struct vgpu_gpu *g,
			const struct vgpu_apply_vgpu *v)
{
	const struct vgpu_type *t = board_type(m, g, v->cfg->name);
	struct vgpu_type parsed = {
		.per_gi = -1, .max_instances = -1, .max_mixed = -1, .info = v->info
	};
	long per;

	if (!t)
		t = &parsed;
	per = vgpu_type_per_gi(t);
	if (per < 1)
		per = 1;
	return (unsigned)((v->cfg->count + (unsigned long)per - 1) / (unsigned long)per);
}

/* The type-name board token ("A30", "L40S") of @g's types, or NULL. */
static const char *board_token(const struct vgpu_gpu *g)
{
	for (size_t i = 0; i < g->n_types; i++)
		if (g->types[i]->info.board[0])
			return g->types[i]->info.board;
	return NULL;
}

/*
 * Is @board a type-name token of @g's board?  From its types where it lists
 * any, else from the MIG table of its model (VFs off: nothing is listed).
 * -1 when nothing tells.
 */
static int board_is(const struct vgpu_gpu *g, const char *board)
{
	const char *mine = board_token(g);
	const struct vgpu_mig_board *b;
	size_t len = strlen(board);

	if (mine)
		return strcasecmp(mine, board) == 0;
	b = vgpu_mig_board_for_gpu(g);
	if (!b || !len)
		return -1;
	for (const char *p = b->tokens; *p;) {
		size_t l = strcspn(p, " ");

		if (l == len && strncasecmp(p, board, len) == 0)
			return 1;
		p += l + strspn(p + l, " ");
	}
	return 0;
}

/*
 * Do @g's types name every type of its board, so that a name they lack is
 * not the board's?  On a MIG board only NVML says: the VFs list what fits
 * the MIG mode and the GPU instances there (a host half built, one GI made
 * by hand, lists only that GI's types), and a stored union of such lists
 * is no whole table either.
 */
static bool lists_whole(const struct vgpu_apply_gpu *w, const struct vgpu_gpu *g)
{
	if (w->board)
		return g->types_whole; /* NVML's: the catalogue does not say so here */
	return vgpu_gpu_types_whole(g);
}

/* "1056" or "nvidia-1056": a type named by its ID */
static bool is_type_id(const char *name)
{
	long id;

	if (strncmp(name, "nvidia-", 7) == 0)
		name += 7;
	return vgpu_parse_long(name, &id) == 0 && id > 0;
}

/*
 * The whole configuration against the host, before anything runs: every
 * vGPU type is one the GPU's board has, a type time-sliced vGPUs fit the
 * GPU's VFs, maxima and framebuffer, and the GPU instances fit the board.
 * Where a GPU's lists no longer name every type (vGPUs in use, nothing
 * stored), a name of the same board is left to the driver.
 */
static int validate(struct vgpu_apply *a, struct vgpu_apply_gpu *w, const struct vgpu_gpu *g)
{
	struct vgpu_ctx *ctx = a->ctx;
	long vgpus = 0;
	unsigned line = w->vgpu_line ? w->vgpu_line : w->line;

	for (size_t i = 0; i < w->n_vgpus; i++) {
		const struct vgpu_cfg_count *v = w->vgpus[i].cfg;
		const struct vgpu_type *t = board_type(a->model, g, v->name);
		const struct vgpu_type_info *info = &w->vgpus[i].info;
		long max;

		if (!v->count)
			continue;
		vgpus += v->count;
		if (!t && info->backing == VGPU_BACKING_UNKNOWN && !lists_whole(w, g) &&
		    is_type_id(v->name))
			return vgpu_error(
				ctx, -EINVAL,
				"%s:%u: GPU %s: no list names vGPU type ID '%s' now (its VFs are off or in use, and no NVML or saved catalogue says); write the type's name, e.g. 'A30-1-6C'",
				a->file, v->line, w->addr, v->name);
		if (!t) {
			int same = info->board[0] ? board_is(g, info->board) : 0;

			if (same == 0 || (same == 1 && lists_whole(w, g)) ||
			    info->backing == VGPU_BACKING_UNKNOWN)
				return vgpu_error(ctx, -EINVAL,
						  "%s:%u: GPU %s (%s) has no vGPU type '%s'%s%s%s",
						  a->file, v->line, w->addr,
						  g->model ? g->model : "NVIDIA GPU", v->name,
						  same == 0 && info->board[0] ? " (a type of " : "",
						  same == 0 && info->board[0] ? info->board : "",
						  same == 0 && info->board[0] ? " boards)" : "");
			continue; /* the board's, where the lists do not say all: the driver decides
				   */
		}
		if (t->info.backing != VGPU_BACKING_TIME_SLICED)
			continue;
		/*
		 * The driver's maximum, never the nominal size against the
		 * framebuffer reading: NVIDIA's sizes do not add up to what NVML
		 * reports (4 x DC-24C is 98304 MiB, an RTX PRO 6000 97887), and
		 * step 5 asks the driver's lists for the rest
		 */
		max = t->max_instances;
		if (max >= 0 && v->count > (unsigned long)max)
			return vgpu_error(
				ctx, -EINVAL,
				"%s:%u: GPU %s: %u vGPUs of %s do not fit: the GPU takes at most %ld",
				a->file, v->line, w->addr, v->count, t->info.profile, max);
	}
	if (g->sriov_total_vfs > 0 && vgpus > g->sriov_total_vfs)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%u: GPU %s: %ld vGPUs do not fit its %d VFs (one vGPU each)",
				  a->file, line, w->addr, vgpus, g->sriov_total_vfs);
	if (w->board && w->n_gis && w->mig == 1) {
		struct vgpu_mig_gi *out = NULL;
		size_t n_out = 0;
		int e = vgpu_mig_solve(ctx, w->board, NULL, 0, w->gis, w->n_gis, &out, &n_out);

		free(out);
		if (e < 0)
			return vgpu_error(ctx, e, "%s:%u: GPU %s: %s", a->file,
					  w->mig_line ? w->mig_line : line, w->addr,
					  vgpu_ctx_error(ctx));
	}
	return 0;
}

/*
 * MIG-backed vGPUs need MIG mode and ceil(count / per GI) GIs of their
 * profile; time-sliced ones need it off, and mixed-size mode where they
 * are of several sizes.
 */
static int derive(struct vgpu_apply *a, struct vgpu_apply_gpu *w, const struct vgpu_gpu *g)
{
	struct vgpu_ctx *ctx = a->ctx;
	bool mig_types = false, ts_types = false, derive_gis = !w->gis_set;
	unsigned ts_fb = 0;

	for (size_t i = 0; i < w->n_vgpus; i++)
		resolve_type(a->model, g, &w->vgpus[i]);
	for (size_t i = 0; i < w->n_vgpus; i++) {
		const struct vgpu_apply_vgpu *v = &w->vgpus[i];

		if (!v->cfg->count)
			continue;
		/*
		 * A type nothing classifies could be either: on a MIG board the
		 * guess decides whether MIG, its instances and the VFs are torn
		 * down, so nothing is guessed (validate() names it)
		 */
		if (v->info.backing == VGPU_BACKING_UNKNOWN && w->board) {
			int e = validate(a, w, g);

			return e < 0 ? e :
				       vgpu_error(
					       ctx, -EINVAL,
					       "%s:%u: GPU %s: cannot tell whether vGPU type '%s' is MIG-backed or time-sliced; write its name as NVIDIA spells it",
					       a->file, v->cfg->line, w->addr, v->cfg->name);
		}
		if (v->info.backing == VGPU_BACKING_MIG) {
			mig_types = true;
			if (derive_gis && add_gi(a, w, v->info.profile, gis_for(a->model, g, v),
						 v->cfg->line) < 0)
				return -EINVAL;
		} else {
			ts_types = true;
			if (ts_fb && v->info.fb_mib && v->info.fb_mib != ts_fb)
				w->hetero = true;
			if (v->info.fb_mib)
				ts_fb = v->info.fb_mib;
		}
	}
	if (derive_gis && mig_types)
		w->gis_set = true;
	if (mig_types && ts_types)
		return vgpu_error(
			ctx, -EINVAL,
			"%s:%u: GPU %s: MIG-backed and time-sliced vGPUs cannot share a GPU",
			a->file, w->line, w->addr);
	if ((mig_types || w->n_gis) && w->mig == 0)
		return vgpu_error(
			ctx, -EINVAL,
			"%s:%u: GPU %s: GPU instances or MIG-backed vGPUs with mig-enabled: false",
			a->file, w->line, w->addr);
	if (mig_types || w->n_gis)
		w->mig = 1;
	else if (ts_types && w->board)
		w->mig = 0; /* time-sliced types are not offered in MIG mode */
	/* vGPUs of SR-IOV GPUs live on VFs: a vgpu-configs entry wants them enabled */
	w->vfs = w->vgpu_section && g->sriov_total_vfs > 0;
	return validate(a, w, g);
}

int vgpu_apply_resolve(struct vgpu_apply *a, const struct vgpu_hostcfg *cfg)
{
	const struct vgpu_model *m = a->model;
	int index = 0;

	for (size_t k = 0; k < m->n_gpus; k++) {
		const struct vgpu_gpu *g = &m->gpus[k];
		struct vgpu_apply_gpu *w = NULL;

		if (!is_nvidia_gpu(g))
			continue;
		for (size_t i = 0; i < cfg->n_entries; i++) {
			const struct vgpu_cfg_entry *e = &cfg->entries[i];

			if (!selected(e, g, index))
				continue;
			w = want_for(a, g, e->line);
			if (merge_entry(a, e, w) < 0)
				return -EINVAL;
		}
		if (w && derive(a, w, g) < 0)
			return -EINVAL;
		index++;
	}
	/* what selects nothing is a mistake, not a no-op: indexes move, GPUs fail */
	for (size_t i = 0; i < cfg->n_entries; i++) {
		const struct vgpu_cfg_entry *e = &cfg->entries[i];

		for (size_t k = 0; k < e->n_addrs; k++)
			if (!vgpu_model_find_gpu(m, e->addrs[k]))
				return vgpu_error(a->ctx, -ENODEV, "%s:%u: no NVIDIA GPU at %s",
						  a->file, e->line, e->addrs[k]);
		for (size_t k = 0; k < e->n_indexes; k++)
			if (e->indexes[k] >= index)
				return vgpu_error(
					a->ctx, -ENODEV,
					"%s:%u: no GPU with index %d (the host has %d NVIDIA GPUs, indexed by PCI address from 0)",
					a->file, e->line, e->indexes[k], index);
	}
	/*
	 * One entry may match no GPU (a fleet file filters by model), but a label
	 * none of whose entries selects a GPU of this host is a mistake: on a host
	 * without NVIDIA GPUs it would otherwise "match"
	 */
	if (!a->n_gpus && cfg->n_entries)
		return vgpu_error(
			a->ctx, -ENODEV,
			"%s:%u: config '%s' selects no NVIDIA GPU of this host (%d found)", a->file,
			cfg->entries[0].line, cfg->label ? cfg->label : "", index);
	return 0;
}

void vgpu_apply_clear(struct vgpu_apply *a)
{
	vgpu_model_free(a->model);
	a->model = NULL;
	for (size_t i = 0; i < a->n_gpus; i++)
		free(a->gpus[i].vgpus);
	free(a->gpus);
	a->gpus = NULL;
	a->n_gpus = 0;
	vgpu_steps_clear(&a->diffs);
}
