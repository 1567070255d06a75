// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the capacity model: how many more vGPUs of a type a GPU takes
 * now, or the first reason it takes none (pure over the model).  Sources of
 * each input, best first: NVML (filled into the model by the commands that
 * load it), the driver's files in sysfs, then the MIG and type tables.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capacity.h"
#include "mig.h"
#include "mig-tables.h"

static const struct {
	const char *code, *text;
} reasons[VGPU_CAP_N_REASONS] = {
	[VGPU_CAP_OK] = { "", "" },
	[VGPU_CAP_NOT_SUPPORTED] = { "not-supported",
				     "the board offers no such type; see 'vgpuctl types' for what it offers" },
	[VGPU_CAP_VFS_DISABLED] = { "vfs-disabled",
				    "the GPU's SR-IOV VFs are off; enable them ('vgpuctl apply', or sriov-manage -e)" },
	[VGPU_CAP_MIG_MODE_OFF] = { "mig-mode-off",
				    "MIG-backed types need MIG mode on; turn it on with 'vgpuctl apply' (mig-enabled: true in a mig-configs entry)" },
	[VGPU_CAP_MIG_MODE_ON] = { "mig-mode-on",
				   "time-sliced types need MIG mode off; turn it off with 'vgpuctl apply' once no GPU instance is in use" },
	[VGPU_CAP_MIG_MODE_UNKNOWN] = { "mig-mode-unknown",
					"MIG mode is not known without NVML, and the driver's lists show the other kind of type (MIG-backed types need MIG mode on, time-sliced ones off); read it with nvidia-smi -q, set it with 'vgpuctl apply' (mig-enabled in a mig-configs entry)" },
	[VGPU_CAP_NO_ROOM_FOR_GI] = { "no-room-for-gpu-instance",
				      "no free GPU instance of the type's profile and no room to create one; free a GPU instance ('vgpuctl mig show')" },
	[VGPU_CAP_NO_GI] = { "no-gpu-instance",
			     "no free GPU instance of the type's profile, but room to create one; create it (a mig-configs entry and 'vgpuctl apply', or nvidia-smi mig -cgi)" },
	[VGPU_CAP_OTHER_SIZE] = { "other-size-present",
				  "another time-sliced size is on the GPU and mixed-size mode is off; pick that size, or free it and set mixed-size mode" },
	[VGPU_CAP_FB_FULL] = { "framebuffer-full",
			       "not enough framebuffer is left; pick a smaller type or free a vGPU" },
	[VGPU_CAP_MAX_INSTANCES] = { "max-instances",
				     "the type's maximum per GPU is reached; use another GPU" },
	[VGPU_CAP_RESERVED] = { "reserved",
				"owner records hold what is left; release those domains' vGPUs ('vgpuctl release') to free it" },
	[VGPU_CAP_ALL_VFS_HELD] = { "all-vfs-held",
				    "every VF holds a vGPU; release one ('vgpuctl release')" },
};

const char *vgpu_cap_reason_code(enum vgpu_cap_reason r)
{
	return (unsigned)r < VGPU_CAP_N_REASONS ? reasons[r].code : "";
}

const char *vgpu_cap_reason_text(enum vgpu_cap_reason r)
{
	return (unsigned)r < VGPU_CAP_N_REASONS ? reasons[r].text : "";
}

void vgpu_capacity_clear(struct vgpu_capacity *c)
{
	free(c->domains);
	memset(c, 0, sizeof(*c));
}

/* The type of a parent's vGPU(s), in the GPU's catalogue or a sibling's. */
static const struct vgpu_type *held_type(const struct vgpu_model *m, const struct vgpu_gpu *g,
					 unsigned id)
{
	return id ? vgpu_model_find_type(m, g, id) : NULL;
}

bool vgpu_gpu_types_whole(const struct vgpu_gpu *g)
{
	if (g->types_whole)
		return true;
	if (!g->n_types || !g->n_parents)
		return false; /* VFs off, or nothing listed: nothing known */
	if (g->iface == VGPU_IFACE_MDEV)
		return true;
	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].in_use)
			return false;
	return true;
}

enum vgpu_tristate vgpu_gpu_mig_mode(const struct vgpu_gpu *g)
{
	bool mig = false, ts = false;

	if (g->mig_current != VGPU_UNKNOWN)
		return g->mig_current;
	if (g->n_gis)
		return VGPU_ON;
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		for (size_t k = 0; k < p->n_types; k++) {
			enum vgpu_backing b = p->types[k].type->info.backing;

			mig |= b == VGPU_BACKING_MIG && p->types[k].available > 0;
			ts |= b == VGPU_BACKING_TIME_SLICED && p->types[k].available > 0;
		}
		if (p->current_type) {
			const struct vgpu_type *t = vgpu_gpu_find_type(g, p->current_type);

			mig |= t && t->info.backing == VGPU_BACKING_MIG;
			ts |= t && t->info.backing == VGPU_BACKING_TIME_SLICED;
		}
	}
	if (mig != ts)
		return mig ? VGPU_ON : VGPU_OFF;
	return VGPU_UNKNOWN;
}

uint64_t vgpu_gpu_framebuffer_mib(const struct vgpu_model *m, const struct vgpu_gpu *g)
{
	uint64_t best = 0;

	if (g->fb_mib)
		return g->fb_mib;
	/*
	 * From every GPU of the same model: on vendor VFIO a GPU in use drops
	 * its larger types out of its creatable lists, but not its framebuffer.
	 */
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *o = &m->gpus[i];

		if (o != g && o->device_id != g->device_id)
			continue;
		if (o->fb_mib)
			return o->fb_mib;
		/*
		 * Only a whole table tells: vendor-VFIO lists of a GPU holding
		 * vGPUs name the sizes that still fit, not the board's
		 */
		if (!vgpu_gpu_types_whole(o))
			continue;
		for (size_t k = 0; k < o->n_types; k++) {
			const struct vgpu_type *t = o->types[k];
			uint64_t fb = t->info.fb_mib;

			if (t->info.backing != VGPU_BACKING_TIME_SLICED)
				continue;
			if (t->max_instances > 0)
				fb *= (uint64_t)t->max_instances;
			if (fb > best)
				best = fb;
		}
	}
	return best;
}

long vgpu_type_max_instances(const struct vgpu_gpu *g, const struct vgpu_type *t)
{
	/* mixed-size mode lowers some maxima: NVML's count for that mode wins */
	if (g->hetero == VGPU_ON && t->info.backing == VGPU_BACKING_TIME_SLICED &&
	    t->max_mixed >= 0 && (t->max_instances < 0 || t->max_mixed < t->max_instances))
		return t->max_mixed;
	return t->max_instances;
}

long vgpu_type_per_gi(const struct vgpu_type *t)
{
	if (t->info.backing != VGPU_BACKING_MIG)
		return -1;
	if (t->per_gi > 0)
		return t->per_gi;
	return vgpu_mig_type_per_gi(&t->info);
}

/* What a GPU holds now, counted once per question. */
struct usage {
	long same; /* vGPUs of the type asked about (reserved included) */
	long same_reserved;
	uint64_t fb_used, fb_reserved; /* time-sliced framebuffer, MiB */
	bool other_size; /* a time-sliced vGPU of another size (or type, mdev) */
	bool other_size_reserved_only;
	long free_parents; /* parents that can take one more now */
	long reserved_parents; /* parents free but for a reservation */
	/*
	 * seats on GIs of the type's profile taken by MIG-backed vGPUs whose GI
	 * is not known (reserved ones, or a driver that does not say)
	 */
	long mig_unplaced_seats;
	bool unknown_held; /* a vGPU whose type the catalogue does not name */
	long mig_reserved_seats; /* the reserved ones' part of it */
};

bool vgpu_type_same_size(const struct vgpu_type *a, const struct vgpu_type *b,
			 enum vgpu_iface iface)
{
	if (iface == VGPU_IFACE_MDEV)
		return a->id == b->id; /* mdev: one type per GPU */
	return a->info.fb_mib == b->info.fb_mib;
}

static void count_one(struct usage *u, const struct vgpu_type *held, const struct vgpu_type *t,
		      const struct vgpu_gpu *g, long n, bool reserved, bool placed)
{
	if (!held || n <= 0)
		return;
	if (held->id == t->id) {
		u->same += n;
		if (reserved)
			u->same_reserved += n;
	}
	if (held->info.backing == VGPU_BACKING_TIME_SLICED) {
		uint64_t fb = (uint64_t)held->info.fb_mib * (uint64_t)n;

		u->fb_used += fb;
		if (reserved)
			u->fb_reserved += fb;
		if (t->info.backing == VGPU_BACKING_TIME_SLICED &&
		    !vgpu_type_same_size(held, t, g->iface)) {
			if (!u->other_size)
				u->other_size_reserved_only = reserved;
			else if (!reserved)
				u->other_size_reserved_only = false;
			u->other_size = true;
		}
	} else if (held->info.backing == VGPU_BACKING_MIG && !placed &&
		   strcmp(held->info.gi_profile, t->info.gi_profile) == 0) {
		/* the same type shares GIs seat by seat; another fills whole GIs */
		long per = vgpu_type_per_gi(held);
		long seats = held->id == t->id ? n : (n + per - 1) / per * vgpu_type_per_gi(t);

		u->mig_unplaced_seats += seats;
		if (reserved)
			u->mig_reserved_seats += seats;
	}
}

static void count_usage(const struct vgpu_model *m, const struct vgpu_gpu *g,
			const struct vgpu_type *t, struct usage *u)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		long n = p->mdevs.n ? (long)p->mdevs.n : 1;

		if (p->in_use && !held_type(m, g, p->current_type))
			u->unknown_held = true;
		if (p->in_use)
			count_one(u, held_type(m, g, p->current_type), t, g, n, false,
				  p->gi_id >= 0);
		count_one(u, held_type(m, g, p->reserved_type), t, g, (long)p->n_reserved, true,
			  false);
		if (p->state_unknown)
			continue;
		if (p->index < 0) {
			u->free_parents++; /* a PF parent holds several */
			continue;
		}
		if (p->in_use)
			continue;
		if (p->n_reserved)
			u->reserved_parents++;
		else
			u->free_parents++;
	}
}

/* Profile of @t in @b's table, or NULL. */
static const struct vgpu_mig_profile *type_profile(const struct vgpu_mig_board *b,
						   const struct vgpu_type *t)
{
	if (!b || !t->info.gi_profile[0])
		return NULL;
	for (size_t i = 0; i < b->n_profiles; i++)
		if (strcmp(b->profiles[i].name, t->info.gi_profile) == 0)
			return &b->profiles[i];
	return NULL;
}

/*
 * What every question about one GPU shares, worked out once per GPU: a
 * listing asks it for every type of the catalogue.
 */
struct gpu_facts {
	const struct vgpu_gpu *g;
	enum vgpu_tristate mode; /* vgpu_gpu_mig_mode() */
	uint64_t fb_mib; /* vgpu_gpu_framebuffer_mib() */
	long *listed; /* per catalogue index: what the parents' lists offer, summed */
};

static void facts_init(const struct vgpu_model *m, const struct vgpu_gpu *g, struct gpu_facts *f)
{
	f->g = g;
	f->mode = vgpu_gpu_mig_mode(g);
	f->fb_mib = vgpu_gpu_framebuffer_mib(m, g);
	f->listed = vgpu_xcalloc(g->n_types + 1, sizeof(*f->listed));
	for (size_t i = 0; i < g->n_parents; i++)
		for (size_t k = 0; k < g->parents[i].n_types; k++)
			if (g->parents[i].types[k].available > 0)
				f->listed[vgpu_gpu_type_index(g, g->parents[i].types[k].type->id)] +=
					g->parents[i].types[k].available;
}

static void facts_clear(struct gpu_facts *f)
{
	free(f->listed);
	f->listed = NULL;
}

/* How many of @t the parents' lists offer now, summed (0: none offers it). */
static long listed(const struct gpu_facts *f, const struct vgpu_type *t)
{
	size_t k = vgpu_gpu_type_index(f->g, t->id);

	return k < f->g->n_types ? f->listed[k] : 0;
}

static bool offered(const struct gpu_facts *f, const struct vgpu_type *t)
{
	return listed(f, t) > 0;
}

/*
 * Could one more GI of @p be created beside @g's GIs?  1 yes, 0 no, -1 not
 * known.  Where the GIs' starts are unknown but their profiles are, a layout
 * that cannot hold them all even when freely placed says no for sure.
 */
static int room_for_gi(const struct vgpu_mig_board *b, const struct vgpu_gpu *g,
		       const struct vgpu_mig_profile *p)
{
	struct vgpu_mig_gi *have = vgpu_xcalloc(g->n_gis + 1, sizeof(*have));
	struct vgpu_mig_request *req = vgpu_xcalloc(g->n_gis + 1, sizeof(*req));
	struct vgpu_mig_gi *out = NULL;
	size_t n_out = 0, n_req = 0, n_have = 0;
	bool starts = true;
	struct vgpu_ctx quiet;
	int r = -1;

	for (size_t i = 0; i < g->n_gis; i++) {
		const struct vgpu_gi *gi = &g->gis[i];

		if (!gi->profile)
			goto out;
		starts &= gi->start >= 0;
		have[n_have++] = (struct vgpu_mig_gi){ gi->profile,
						       (unsigned)(gi->start >= 0 ? gi->start : 0),
						       gi->id };
		req[n_req++] = (struct vgpu_mig_request){ gi->profile, 1 };
	}
	vgpu_ctx_init(&quiet, NULL, NULL);
	if (starts) {
		struct vgpu_mig_request one = { p, 1 };

		r = vgpu_mig_solve(&quiet, b, have, n_have, &one, 1, &out, &n_out) == 0;
	} else {
		req[n_req++] = (struct vgpu_mig_request){ p, 1 };
		r = vgpu_mig_solve(&quiet, b, NULL, 0, req, n_req, &out, &n_out) == 0 ? -1 : 0;
	}
	vgpu_ctx_clear(&quiet);
	free(out);
out:
	free(req);
	free(have);
	return r;
}

/*
 * MIG-backed: seats on existing GIs of the type's profile.  Free GIs whose
 * profile nothing tells (no NVML, and the driver's lists leave several
 * layouts) count as one GI of the profile when the lists offer the type:
 * what is sure to be there (the answer is then not exact).
 */
static long mig_seats(const struct gpu_facts *f, const struct vgpu_type *t,
		      const struct vgpu_mig_profile *p, long per_gi, bool *exact)
{
	const struct vgpu_gpu *g = f->g;
	bool unknown_free = false;
	long seats = 0;

	if (!g->n_gis && g->mig_instances < 0 && g->mig_current == VGPU_UNKNOWN) {
		/* no capability tree and no NVML: the driver's lists are all there is */
		*exact = false;
		return listed(f, t);
	}

	for (size_t i = 0; i < g->n_gis; i++) {
		const struct vgpu_gi *gi = &g->gis[i];

		if (!gi->profile) {
			*exact = false;
			unknown_free |= !gi->used;
			continue;
		}
		if (gi->profile != p)
			continue;
		if (!gi->used)
			seats += per_gi;
		else if (gi->used_type == t->id && (long)gi->used < per_gi)
			seats += per_gi - (long)gi->used;
	}
	if (!seats && unknown_free && offered(f, t))
		seats = per_gi;
	return seats;
}

static void name_domains(const struct vgpu_gpu *g, const struct vgpu_records *recs, char **out)
{
	*out = vgpu_xstrdup("");
	if (!recs)
		return;
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		bool seen = false;

		if (strcmp(r->gpu, g->addr) != 0)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(recs->v[j].gpu, g->addr) == 0 &&
			       strcmp(recs->v[j].domain, r->domain) == 0;
		if (!seen)
			vgpu_append(out, "%s%s", **out ? "," : "", r->domain);
	}
}

static long min_l(long a, long b)
{
	return a < b ? a : b;
}

/*
 * MIG-backed: seats on the GIs of the type's profile, less those vGPUs of
 * unknown GI take; 0 with the reason when there are none.  *@max gets the
 * table's maximum where the driver gave none.
 */
static long fit_mig(const struct gpu_facts *f, const struct vgpu_type *t, const struct usage *u,
		    bool with_res, long *max, struct vgpu_capacity *c)
{
	const struct vgpu_gpu *g = f->g;
	const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);
	const struct vgpu_mig_profile *p = type_profile(b, t);
	long per_gi = vgpu_type_per_gi(t);
	long seats;

	if (f->mode == VGPU_OFF) {
		/* off as the lists show it is not off as NVML says it: one answer everywhere */
		c->reason = g->mig_current == VGPU_OFF ? VGPU_CAP_MIG_MODE_OFF :
							 VGPU_CAP_MIG_MODE_UNKNOWN;
		return 0;
	}
	seats = mig_seats(f, t, p, per_gi, &c->exact);
	seats -= u->mig_unplaced_seats - (with_res ? 0 : u->mig_reserved_seats);
	if (seats <= 0) {
		int room = b && p ? room_for_gi(b, g, p) : -1;

		c->reason = room == 0 ? VGPU_CAP_NO_ROOM_FOR_GI : VGPU_CAP_NO_GI;
		if (room < 0)
			c->exact = false;
		return 0;
	}
	if (*max < 0 && p)
		*max = (long)p->max * per_gi;
	return seats;
}

/*
 * Time-sliced: what the framebuffer left holds (LONG_MAX where nothing
 * bounds it); 0 with the reason when nothing fits.  *@max gets framebuffer
 * over size where the driver gave none.
 */
static long fit_ts(const struct gpu_facts *f, const struct vgpu_type *t, const struct usage *u,
		   bool with_res, long *max, struct vgpu_capacity *c)
{
	uint64_t fb = f->fb_mib;
	uint64_t used = u->fb_used - (with_res ? 0 : u->fb_reserved);

	if (f->mode == VGPU_ON) {
		c->reason = f->g->mig_current == VGPU_ON ? VGPU_CAP_MIG_MODE_ON :
							   VGPU_CAP_MIG_MODE_UNKNOWN;
		return 0;
	}
	if (u->other_size && f->g->hetero != VGPU_ON &&
	    (with_res || !u->other_size_reserved_only)) {
		c->reason = VGPU_CAP_OTHER_SIZE;
		return 0;
	}
	if (fb && t->info.fb_mib) {
		uint64_t left = used < fb ? fb - used : 0;

		if (left < t->info.fb_mib) {
			c->reason = VGPU_CAP_FB_FULL;
			return 0;
		}
		if (*max < 0)
			*max = (long)(fb / t->info.fb_mib);
		return (long)(left / t->info.fb_mib);
	}
	if (*max < 0 && u->fb_used) {
		/*
		 * The framebuffer is unknown (no NVML, no whole table) and vGPUs
		 * use some: the lists offer what fits, one VF at a time
		 */
		c->exact = false;
		if (!offered(f, t)) {
			c->reason = VGPU_CAP_FB_FULL;
			return 0;
		}
		return 1;
	}
	return LONG_MAX;
}

/*
 * The count and the first reason, with reservations counted as vGPUs
 * (@with_res) or left out (to tell "reserved" from the rest).
 */
static long fit(const struct gpu_facts *f, const struct vgpu_type *t, const struct usage *u,
		bool with_res, struct vgpu_capacity *c)
{
	const struct vgpu_gpu *g = f->g;
	long avail = LONG_MAX, max = vgpu_type_max_instances(g, t);
	long same = u->same - (with_res ? 0 : u->same_reserved);

	if (t->info.backing == VGPU_BACKING_MIG)
		avail = fit_mig(f, t, u, with_res, &max, c);
	else if (t->info.backing == VGPU_BACKING_TIME_SLICED)
		avail = fit_ts(f, t, u, with_res, &max, c);
	if (!avail)
		return 0;
	if (max >= 0) {
		if (same >= max) {
			c->reason = VGPU_CAP_MAX_INSTANCES;
			return 0;
		}
		avail = min_l(avail, max - same);
	}
	c->max_instances = max;
	if (g->sriov_total_vfs > 0 || (g->n_parents && g->parents[0].index >= 0)) {
		long parents = u->free_parents + (with_res ? 0 : u->reserved_parents);

		if (!parents) {
			c->reason = VGPU_CAP_ALL_VFS_HELD;
			return 0;
		}
		avail = min_l(avail, parents);
	} else if (!u->free_parents) {
		c->reason = VGPU_CAP_ALL_VFS_HELD;
		return 0;
	}
	if (avail == LONG_MAX) /* nothing bounds it but the parents: a PF parent */
		avail = 1;
	c->reason = VGPU_CAP_OK;
	return avail;
}

static void capacity_with(const struct vgpu_model *m, const struct gpu_facts *f,
			  const struct vgpu_type *t, const struct vgpu_records *recs,
			  struct vgpu_capacity *out)
{
	const struct vgpu_gpu *g = f->g;
	/* a sibling of the same model names what a full GPU's lists dropped */
	const struct vgpu_type *own = vgpu_model_find_type(m, g, t->id);
	struct vgpu_capacity spare = { 0 };
	struct usage u;

	memset(out, 0, sizeof(*out));
	out->exact = true;
	out->max_instances = t->max_instances;
	out->per_gi = vgpu_type_per_gi(t);
	if (!own) {
		out->reason = VGPU_CAP_NOT_SUPPORTED;
		return;
	}
	t = own;
	out->max_instances = vgpu_type_max_instances(g, t);
	if (t->info.backing == VGPU_BACKING_UNKNOWN) {
		/* a name outside the grammar: nothing to model, the lists say it */
		out->exact = false;
		out->available = listed(f, t);
		out->reason = out->available ? VGPU_CAP_OK : VGPU_CAP_ALL_VFS_HELD;
		return;
	}
	if (g->sriov_total_vfs > 0 && g->n_parents == 0) {
		out->reason = VGPU_CAP_VFS_DISABLED;
		return;
	}
	count_usage(m, g, t, &u);
	if (u.unknown_held && t->info.backing == VGPU_BACKING_TIME_SLICED) {
		/* a vGPU of a size nothing names: only the driver's lists can tell */
		out->exact = false;
		out->available = listed(f, t);
		out->reason = out->available ? VGPU_CAP_OK : VGPU_CAP_OTHER_SIZE;
		return;
	}
	out->available = fit(f, t, &u, true, out);
	if (out->available > 0 || out->reason == VGPU_CAP_MIG_MODE_OFF ||
	    out->reason == VGPU_CAP_MIG_MODE_ON)
		return;
	/* nothing left: would there be without the reservations? */
	spare.exact = true;
	if (u.same_reserved + u.reserved_parents + u.mig_reserved_seats > 0 &&
	    fit(f, t, &u, false, &spare) > 0) {
		out->reason = VGPU_CAP_RESERVED;
		name_domains(g, recs, &out->domains);
	} else if (out->reason == VGPU_CAP_ALL_VFS_HELD) {
		name_domains(g, recs, &out->domains);
	}
	vgpu_capacity_clear(&spare);
}

void vgpu_capacity_of(const struct vgpu_model *m, const struct vgpu_gpu *g,
		      const struct vgpu_type *t, const struct vgpu_records *recs,
		      struct vgpu_capacity *out)
{
	struct gpu_facts f;

	facts_init(m, g, &f);
	capacity_with(m, &f, t, recs, out);
	facts_clear(&f);
}

void vgpu_gpu_capacities(const struct vgpu_model *m, const struct vgpu_gpu *g,
			 const struct vgpu_records *recs, struct vgpu_capacity *out)
{
	struct gpu_facts f;

	facts_init(m, g, &f);
	for (size_t k = 0; k < g->n_types; k++)
		capacity_with(m, &f, g->types[k], recs, &out[k]);
	facts_clear(&f);
}

/* Is @g of @board: a type of its catalogue names that board token? */
static bool gpu_of_board(const struct vgpu_gpu *g, const char *board)
{
	for (size_t k = 0; k < g->n_types; k++)
		if (strcasecmp(g->types[k]->info.board, board) == 0)
			return true;
	return false;
}

const struct vgpu_parent *vgpu_model_unnamed_holder(const struct vgpu_model *m, const char *profile)
{
	char upper[VGPU_PROFILE_MAX];
	struct vgpu_type_info info;

	/* the grammar's letters are upper case; profiles match in any case */
	snprintf(upper, sizeof(upper), "%s", profile);
	for (char *s = upper; *s; s++)
		*s = (char)toupper((unsigned char)*s);
	vgpu_type_parse(upper, &info);
	if (!info.board[0])
		return NULL;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if (vgpu_gpu_types_whole(g) || !gpu_of_board(g, info.board))
			continue;
		for (size_t j = 0; j < g->n_parents; j++) {
			const struct vgpu_parent *p = &g->parents[j];

			if ((p->in_use && p->current_type && !held_type(m, g, p->current_type)) ||
			    (p->n_reserved && p->reserved_type &&
			     !held_type(m, g, p->reserved_type)))
				return p;
		}
	}
	return NULL;
}

int vgpu_gpu_known_gis(const struct vgpu_gpu *g, struct vgpu_mig_gi **out, size_t *n)
{
	struct vgpu_mig_gi *gis;

	if (g->n_gis && !g->gis_exact)
		return -ENOENT;
	if (!g->n_gis && g->mig_instances > 0)
		return -ENOENT; /* procfs counts GIs the model does not hold */
	gis = g->n_gis ? vgpu_xcalloc(g->n_gis, sizeof(*gis)) : NULL;
	for (size_t i = 0; i < g->n_gis; i++) {
		if (!g->gis[i].profile || g->gis[i].start < 0) {
			free(gis);
			return -ENOENT;
		}
		gis[i] = (struct vgpu_mig_gi){ g->gis[i].profile, (unsigned)g->gis[i].start,
					       g->gis[i].id };
	}
	*out = gis;
	*n = g->n_gis;
	return 0;
}
