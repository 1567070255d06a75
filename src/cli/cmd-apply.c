// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl apply -f FILE --config LABEL [--dry-run]: bring the host to a
 * config's state in the one order that works (reference vgpu-host.md 6.2):
 *   1. MIG mode          nvidia-smi -i BUS -mig 0|1, read back
 *   2. SR-IOV VFs        sriov-manage -e BUS (rebinding the GPU destroys its
 *                        GPU instances: nothing that must survive comes before)
 *   3. GPU instances     nvidia-smi mig -i BUS -cgi IDS -C (largest first)
 *   4. vGPUs             current_vgpu_type / mdev create, read back
 *   5. domains           started through -c URI, last
 * Each step compares before it acts, so a second run changes nothing and a
 * run killed between two steps is completed by the next one.  A host made
 * in the wrong order (GPU instances before VFs) is repaired by the order
 * itself: enabling the VFs wipes the instances, step 3 makes them again.
 *
 * vgpuctl assert -f FILE --config LABEL: the same reads, no change; every
 * difference on one line, exit 1 when there is any.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cleanup.h"
#include "cli.h"
#include "hostcfg.h"
#include "live.h"
#include "txn.h"
#include "mig.h"
#include "nvtools.h"
#include "records.h"
#include "vgputype.h"
#include "virt.h"

#define LOCK_WAIT_MS 30000
#define MAX_WANT_GIS 64

/* What the config asks of one GPU. */
struct want {
	char addr[VGPU_BDF_LEN];
	const struct vgpu_mig_board *board;
	unsigned line; /* the entry that selected it first */
	unsigned mig_line, vgpu_line; /* the mig-configs / vgpu-configs entry that set it */
	int mig; /* -1 not said, 0, 1 */
	bool vfs; /* SR-IOV VFs enabled */
	bool vgpu_section; /* selected by a vgpu-configs entry */
	bool gis_set; /* the GI layout is given (or derived from MIG-backed vGPUs) */
	bool vfs_changed; /* this run enables or disables its VFs (a dry run predicts from it) */
	struct vgpu_mig_request gis[MAX_WANT_GIS];
	size_t n_gis;
	const struct vgpu_cfg_count **vgpus;
	size_t n_vgpus;
};

struct apply {
	struct cli *c;
	const char *file, *label, *uri;
	bool dry_run, check; /* check: assert */
	struct vgpu_nvtools tools;
	struct vgpu_hostcfg cfg;
	struct want *w;
	size_t n_w;
	struct vgpu_strv diffs; /* assert: what differs; apply: what is left */
	struct vgpu_txn txn;
};

/* ---- the config, resolved against the host ------------------------------------ */

static bool is_nvidia_gpu(const struct vgpu_gpu *g)
{
	return g->vendor_id == 0x10de;
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

static struct want *want_for(struct apply *a, const struct vgpu_gpu *g, unsigned line)
{
	for (size_t i = 0; i < a->n_w; i++)
		if (strcmp(a->w[i].addr, g->addr) == 0)
			return &a->w[i];
	a->w = vgpu_xreallocarray(a->w, a->n_w + 1, sizeof(*a->w));
	a->w[a->n_w] = (struct want){ .mig = -1, .line = line };
	snprintf(a->w[a->n_w].addr, sizeof(a->w[a->n_w].addr), "%s", g->addr);
	a->w[a->n_w].board = vgpu_mig_board_for_gpu(g);
	return &a->w[a->n_w++];
}

static int add_gi(struct apply *a, struct want *w, const char *name, unsigned count, unsigned line)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	struct vgpu_mig_request r;

	if (!w->board)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%u: GPU %s has no MIG, but the config gives it "
				  "'%s'",
				  a->file, line, w->addr, name);
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
	if (w->n_gis == MAX_WANT_GIS)
		return vgpu_error(ctx, -E2BIG, "%s:%u: too many GPU-instance profiles", a->file,
				  line);
	if (r.count)
		w->gis[w->n_gis++] = r;
	return 0;
}

/* One entry of each map per GPU: two would leave which counts unclear. */
static int once(struct apply *a, const struct want *w, unsigned *seen, unsigned line,
		const char *map)
{
	if (*seen)
		return vgpu_error(&a->c->ctx, -EINVAL,
				  "%s:%u: GPU %s is already selected by the %s entry at line %u",
				  a->file, line, w->addr, map, *seen);
	*seen = line;
	return 0;
}

static int merge_entry(struct apply *a, const struct vgpu_cfg_entry *e, struct want *w)
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
		w->vgpus[w->n_vgpus++] = &e->vgpu[i];
	}
	return 0;
}

/* MIG-backed vGPUs need MIG mode and one GI each; time-sliced ones need it off. */
static int derive(struct apply *a, struct want *w, const struct vgpu_gpu *g)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	bool mig_types = false, ts_types = false, derive_gis = !w->gis_set;

	for (size_t i = 0; i < w->n_vgpus; i++) {
		struct vgpu_type_info info;

		vgpu_type_parse(w->vgpus[i]->name, &info);
		if (info.backing == VGPU_BACKING_MIG) {
			mig_types = true;
			if (derive_gis && w->vgpus[i]->count &&
			    add_gi(a, w, w->vgpus[i]->name, w->vgpus[i]->count, w->vgpus[i]->line) <
				    0)
				return -EINVAL;
		} else if (w->vgpus[i]->count) {
			ts_types = true;
		}
	}
	if (derive_gis && mig_types)
		w->gis_set = true;
	if (mig_types && ts_types)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%u: GPU %s: MIG-backed and time-sliced vGPUs "
				  "cannot share a GPU",
				  a->file, w->line, w->addr);
	if ((mig_types || w->n_gis) && w->mig == 0)
		return vgpu_error(ctx, -EINVAL,
				  "%s:%u: GPU %s: GPU instances or MIG-backed vGPUs "
				  "with mig-enabled: false",
				  a->file, w->line, w->addr);
	if (mig_types || w->n_gis)
		w->mig = 1;
	else if (ts_types && w->board)
		w->mig = 0; /* time-sliced types are not offered in MIG mode */
	/* vGPUs of SR-IOV GPUs live on VFs: a vgpu-configs entry wants them enabled */
	w->vfs = w->vgpu_section && g->sriov_total_vfs > 0;
	return 0;
}

static int resolve(struct apply *a)
{
	const struct vgpu_model *m = a->c->model;
	int index = 0;

	for (size_t k = 0; k < m->n_gpus; k++) {
		const struct vgpu_gpu *g = &m->gpus[k];
		struct want *w = NULL;

		if (!is_nvidia_gpu(g))
			continue;
		for (size_t i = 0; i < a->cfg.n_entries; i++) {
			const struct vgpu_cfg_entry *e = &a->cfg.entries[i];

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
	for (size_t i = 0; i < a->cfg.n_entries; i++) {
		const struct vgpu_cfg_entry *e = &a->cfg.entries[i];

		for (size_t k = 0; k < e->n_addrs; k++)
			if (!vgpu_model_find_gpu(m, e->addrs[k]))
				return vgpu_error(&a->c->ctx, -ENODEV, "%s:%u: no NVIDIA GPU at %s",
						  a->file, e->line, e->addrs[k]);
		for (size_t k = 0; k < e->n_indexes; k++)
			if (e->indexes[k] >= index)
				return vgpu_error(&a->c->ctx, -ENODEV,
						  "%s:%u: no GPU with index %d (the host has %d "
						  "NVIDIA GPUs, indexed by PCI address from 0)",
						  a->file, e->line, e->indexes[k], index);
	}
	return 0;
}

/* ---- steps -------------------------------------------------------------------- */

static void differs(struct apply *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void differs(struct apply *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vgpu_strv_push(&a->diffs, vgpu_vasprintf(fmt, ap));
	va_end(ap);
}

static const struct vgpu_gpu *gpu_of(struct apply *a, const struct want *w)
{
	return vgpu_model_find_gpu(a->c->model, w->addr);
}

/* a parent in use holds a vGPU (a VF's current type, or an mdev) */
static bool has_vgpus(const struct vgpu_gpu *g)
{
	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].in_use)
			return true;
	return false;
}

static int reread(struct apply *a)
{
	if (a->dry_run || a->check)
		return 0;
	return cli_read_host(a->c, VGPU_READ_TYPES) ? -EIO : 0;
}

/* Turning MIG off needs the VFs and GPU instances gone first (the driver refuses). */
static int mig_off_prepare(struct apply *a, struct want *w, const struct vgpu_gpu *g)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	struct vgpu_mig_gi *gis = NULL;
	size_t n = 0;
	int e;

	if (has_vgpus(g))
		return vgpu_error(ctx, -EBUSY,
				  "GPU %s: cannot turn MIG mode off while it holds "
				  "vGPUs; release them first",
				  w->addr);
	e = vgpu_nv_gis(ctx, &a->tools, w->board, w->addr, &gis, &n);
	free(gis);
	if (e == 0 && n)
		e = vgpu_nv_destroy_gis(ctx, &a->tools, w->addr);
	if (e == 0 && g->sriov_num_vfs > 0) {
		e = vgpu_nv_disable_vfs(ctx, &a->tools, w->addr);
		w->vfs_changed = true;
	}
	return e;
}

static int step_mig(struct apply *a, struct want *w)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	int cur, pend, e;

	if (w->mig < 0 || !w->board || !g)
		return 0;
	e = vgpu_nv_mig_mode(ctx, &a->tools, w->addr, &cur, &pend);
	if (e < 0)
		return e;
	if (cur == w->mig)
		return 0;
	if (a->check) {
		differs(a, "GPU %s: MIG mode is %s, the config wants it %s", w->addr,
			cur == 1 ? "enabled" : "disabled", w->mig ? "enabled" : "disabled");
		return 0;
	}
	vgpu_log(ctx, LOG_INFO, "MIG mode: GPU %s: %s", w->addr, w->mig ? "enabling" : "disabling");
	if (!w->mig && (e = mig_off_prepare(a, w, g)) < 0)
		return e;
	return vgpu_nv_set_mig(ctx, &a->tools, w->addr, w->mig);
}

static int step_vfs(struct apply *a, struct want *w)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	int e;

	if (!w->vfs || !g || g->sriov_num_vfs == g->sriov_total_vfs)
		return 0;
	if (a->check) {
		differs(a, "GPU %s: %d of %d VFs enabled", w->addr, g->sriov_num_vfs,
			g->sriov_total_vfs);
		return 0;
	}
	vgpu_log(ctx, LOG_INFO, "VFs: GPU %s: enabling %d VFs", w->addr, g->sriov_total_vfs);
	e = vgpu_nv_enable_vfs(ctx, &a->tools, w->addr);
	w->vfs_changed = true;
	if (e < 0 || a->dry_run)
		return e;
	if ((e = reread(a)) < 0)
		return e;
	g = gpu_of(a, w);
	if (!g || g->sriov_num_vfs != g->sriov_total_vfs)
		return vgpu_error(ctx, -EIO,
				  "GPU %s: sriov-manage -e succeeded but %d of %d VFs "
				  "are enabled",
				  w->addr, g ? g->sriov_num_vfs : 0, g ? g->sriov_total_vfs : 0);
	return 0;
}

/* ---- GPU instances -------------------------------------------------------------- */

/*
 * The GIs there are and those the config asks for, counted per profile of
 * the board (@have, @want: heap, n_profiles each).  True when they agree.
 */
static bool tally_gis(const struct want *w, const struct vgpu_mig_gi *gis, size_t n,
		      unsigned **have, unsigned **want)
{
	const struct vgpu_mig_board *b = w->board;

	*have = vgpu_xcalloc(b->n_profiles, sizeof(**have));
	*want = vgpu_xcalloc(b->n_profiles, sizeof(**want));
	for (size_t i = 0; i < n; i++)
		if (gis[i].profile)
			(*have)[gis[i].profile - b->profiles]++;
	for (size_t i = 0; i < w->n_gis; i++)
		(*want)[w->gis[i].profile - b->profiles] += w->gis[i].count;
	return memcmp(*have, *want, b->n_profiles * sizeof(**have)) == 0;
}

/* "3g.40gb, 2g.20gb x2" or "none" */
static char *counts_str(const struct vgpu_mig_board *b, const unsigned *counts)
{
	char *s = NULL;

	for (size_t i = 0; i < b->n_profiles; i++) {
		if (!counts[i])
			continue;
		vgpu_append(&s, "%s%s", s ? ", " : "", b->profiles[i].name);
		if (counts[i] > 1)
			vgpu_append(&s, " x%u", counts[i]);
	}
	return s ? s : vgpu_xstrdup("none");
}

/* The GIs still to make so that @have becomes @want; false when @have has one too many. */
static bool missing_gis(const struct vgpu_mig_board *b, const unsigned *have, const unsigned *want,
			struct vgpu_mig_request *req, size_t *n_req)
{
	*n_req = 0;
	for (size_t i = 0; i < b->n_profiles; i++) {
		if (have[i] > want[i])
			return false;
		if (want[i] > have[i])
			req[(*n_req)++] =
				(struct vgpu_mig_request){ &b->profiles[i], want[i] - have[i] };
	}
	return true;
}

/* Create the solver's new GIs (@plan, creation order), then read back that all are there. */
static int make_gis(struct apply *a, struct want *w, const struct vgpu_mig_gi *plan, size_t n_plan)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
	VGPU_AUTOFREE unsigned *have = NULL, *want = NULL;
	size_t n;
	int e;

	vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: creating %zu", w->addr, n_plan);
	e = vgpu_nv_create_gis(ctx, &a->tools, w->addr, plan, n_plan);
	if (e < 0 || a->dry_run || !n_plan)
		return e;
	if ((e = vgpu_nv_gis(ctx, &a->tools, w->board, w->addr, &gis, &n)) < 0)
		return e;
	if (!tally_gis(w, gis, n, &have, &want)) {
		VGPU_AUTOFREE char *h = counts_str(w->board, have), *x = counts_str(w->board, want);

		return vgpu_error(ctx, -EIO,
				  "GPU %s: GPU instances are %s after creating "
				  "them, not %s",
				  w->addr, h, x);
	}
	return 0;
}

/* The GIs as they are; in a dry run, as they would be after steps 1 and 2. */
static int current_gis(struct apply *a, struct want *w, struct vgpu_mig_gi **gis, size_t *n)
{
	*gis = NULL;
	*n = 0;
	if (a->dry_run && w->vfs_changed)
		return 0; /* enabling VFs wipes them */
	return vgpu_nv_gis(&a->c->ctx, &a->tools, w->board, w->addr, gis, n);
}

static int step_gis(struct apply *a, struct want *w)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL, *plan = NULL;
	VGPU_AUTOFREE unsigned *have = NULL, *want = NULL;
	struct vgpu_mig_request req[MAX_WANT_GIS];
	size_t n = 0, n_req, n_plan = 0;
	int e;

	if (!w->gis_set || !w->board || w->mig != 1 || !g)
		return 0;
	if ((e = current_gis(a, w, &gis, &n)) < 0)
		return e;
	if (tally_gis(w, gis, n, &have, &want))
		return 0;
	if (a->check) {
		VGPU_AUTOFREE char *h = counts_str(w->board, have), *x = counts_str(w->board, want);

		differs(a, "GPU %s: GPU instances %s, the config wants %s", w->addr, h, x);
		return 0;
	}
	if (missing_gis(w->board, have, want, req, &n_req)) {
		struct vgpu_ctx quiet = { 0 };

		e = vgpu_mig_solve(&quiet, w->board, gis, n, req, n_req, &plan, &n_plan);
		vgpu_ctx_clear(&quiet);
		if (e == 0) /* the ones there stay: add the rest around them */
			return make_gis(a, w, plan, n_plan);
	}
	/* the layout must change: only while no vGPU can be on an instance */
	if (has_vgpus(g))
		return vgpu_error(ctx, -EBUSY,
				  "GPU %s: its GPU instances differ from the config "
				  "and vGPUs use the GPU; release them first",
				  w->addr);
	memset(have, 0, w->board->n_profiles * sizeof(*have));
	missing_gis(w->board, have, want, req, &n_req);
	/* a layout that cannot be made fails before anything is destroyed */
	if ((e = vgpu_mig_solve(ctx, w->board, NULL, 0, req, n_req, &plan, &n_plan)) < 0)
		return vgpu_error(ctx, e, "GPU %s: %s", w->addr, vgpu_ctx_error(ctx));
	vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: destroying %zu", w->addr, n);
	if ((e = vgpu_nv_destroy_gis(ctx, &a->tools, w->addr)) < 0)
		return e;
	return make_gis(a, w, plan, n_plan);
}

/* ---- vGPUs -------------------------------------------------------------------- */

static const struct vgpu_type *find_type(const struct vgpu_gpu *g, const char *name)
{
	struct vgpu_type_info want;

	vgpu_type_parse(name, &want);
	for (size_t i = 0; i < g->n_types; i++)
		if (strcmp(g->types[i]->info.profile, want.profile) == 0)
			return g->types[i];
	return NULL;
}

static unsigned count_type(const struct vgpu_gpu *g, unsigned id)
{
	unsigned n = 0;

	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].current_type == id)
			n += g->parents[i].mdevs.n ? (unsigned)g->parents[i].mdevs.n : 1;
	return n;
}

/* One vGPU of @t on @p, as assign makes it, but owned by the host config (no record). */
static int create_on(struct apply *a, const struct vgpu_gpu *g, struct vgpu_parent *p,
		     const struct vgpu_type *t)
{
	struct vgpu_record r = { .iface = p->iface,
				 .type_id = t->id,
				 .lifetime = VGPU_LIFETIME_PERSISTENT };

	snprintf(r.gpu, sizeof(r.gpu), "%s", g->addr);
	snprintf(r.parent, sizeof(r.parent), "%s", p->addr);
	snprintf(r.profile, sizeof(r.profile), "%s", t->info.profile);
	if (p->iface == VGPU_IFACE_MDEV && vgpu_uuid_generate(&a->c->ctx, r.mdev_uuid) < 0)
		return -EIO;
	if (a->dry_run && p->iface == VGPU_IFACE_MDEV)
		vgpu_log(
			&a->c->ctx, LOG_NOTICE,
			"would write: %s > sys/bus/pci/devices/%s/mdev_supported_types/nvidia-%u/create",
			r.mdev_uuid, p->addr, t->id);
	else if (a->dry_run)
		vgpu_log(&a->c->ctx, LOG_NOTICE,
			 "would write: %u > sys/bus/pci/devices/%s/nvidia/current_vgpu_type", t->id,
			 p->addr);
	return vgpu_txn_create(&a->txn, &r);
}

/*
 * How many vGPUs of type k @p can take now: a VF one, when free; a non-SR-IOV
 * PF what its available_instances says, less its reservations (-1: unknown,
 * the driver decides).
 */
static long room(const struct vgpu_parent *p, size_t k)
{
	long avail = p->types[k].available;

	if (p->state_unknown)
		return 0;
	if (p->index >= 0)
		return p->in_use || p->n_reserved || avail == 0 ? 0 : 1;
	if (avail < 0)
		return -1;
	return avail > (long)p->n_reserved ? avail - (long)p->n_reserved : 0;
}

static int make_vgpus(struct apply *a, const struct vgpu_gpu *g, const struct vgpu_type *t,
		      unsigned need)
{
	for (size_t i = 0; need && i < g->n_parents; i++) {
		struct vgpu_parent *p = (struct vgpu_parent *)&g->parents[i];

		for (size_t k = 0; need && k < p->n_types; k++) {
			long n = p->types[k].type == t ? room(p, k) : 0;

			for (; need && n != 0; n--) {
				int e = create_on(a, g, p, t);

				if (e < 0)
					return e;
				need--;
				if (p->types[k].available > 0)
					p->types[k].available--;
				p->in_use = true;
			}
		}
	}
	if (need)
		return vgpu_error(&a->c->ctx, -ENOSPC,
				  "GPU %s: %u more vGPUs of %s are needed and "
				  "no free parent offers that type",
				  g->addr, need, t->info.profile);
	return 0;
}

static int step_vgpus(struct apply *a, struct want *w)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	const struct vgpu_gpu *g = gpu_of(a, w);

	if (!w->n_vgpus || !g)
		return 0;
	if (a->dry_run && w->vfs_changed) {
		for (size_t i = 0; i < w->n_vgpus; i++)
			vgpu_log(
				ctx, LOG_NOTICE,
				"would create %u vGPUs of %s on GPU %s's VFs once enabled (each: a "
				"write of its type id to current_vgpu_type or of a UUID to the "
				"type's mdev create, as the VFs offer)",
				w->vgpus[i]->count, w->vgpus[i]->name, w->addr);
		return 0;
	}
	for (size_t i = 0; i < w->n_vgpus; i++) {
		const struct vgpu_cfg_count *want = w->vgpus[i];
		const struct vgpu_type *t = find_type(g, want->name);
		unsigned have;
		int e;

		if (!t) {
			if (a->check) {
				differs(a,
					"GPU %s: 0 of %u vGPUs of %s (no parent offers the type now)",
					w->addr, want->count, want->name);
				continue;
			}
			return vgpu_error(ctx, -ENOENT, "%s:%u: GPU %s offers no vGPU type %s",
					  a->file, want->line, w->addr, want->name);
		}
		have = count_type(g, t->id);
		if (have > want->count)
			differs(a,
				"GPU %s holds %u vGPUs of %s, the config wants %u (apply frees none)",
				w->addr, have, t->info.profile, want->count);
		if (have >= want->count)
			continue;
		if (a->check) {
			differs(a, "GPU %s: %u of %u vGPUs of %s", w->addr, have, want->count,
				t->info.profile);
			continue;
		}
		vgpu_log(ctx, LOG_INFO, "vGPUs: GPU %s: creating %u of %s", w->addr,
			 want->count - have, t->info.profile);
		if ((e = make_vgpus(a, g, t, want->count - have)) < 0)
			return e;
	}
	return 0;
}

/* ---- domains, last -------------------------------------------------------------- */

static int step_domains(struct apply *a)
{
	struct vgpu_ctx *ctx = &a->c->ctx;
	struct vgpu_virt *v = NULL;
	const char *uri = a->uri;
	int e = 0;

	if (!a->cfg.n_domains)
		return 0;
	if (!uri)
		uri = cli_default_uri();
	if (vgpu_virt_open(ctx, uri, &v) < 0)
		return -EIO;
	for (size_t i = 0; e == 0 && i < a->cfg.n_domains; i++) {
		bool off;

		e = vgpu_virt_domain_start(ctx, v, a->cfg.domains[i], a->dry_run || a->check, &off);
		if (e == 0 && off && a->check)
			differs(a, "domain '%s' is not running", a->cfg.domains[i]);
		else if (e == 0 && off && a->dry_run)
			vgpu_log(ctx, LOG_NOTICE, "would start domain '%s' (%s)", a->cfg.domains[i],
				 uri);
		else if (e == 0 && off)
			vgpu_log(ctx, LOG_INFO, "domains: started '%s'", a->cfg.domains[i]);
	}
	vgpu_virt_close(v);
	return e;
}

/* ---- the command ---------------------------------------------------------------- */

static const char *const step_names[] = { "MIG mode", "VFs", "GPU instances", "vGPUs" };

static int run_steps(struct apply *a)
{
	static int (*const steps[])(struct apply *, struct want *) = { step_mig, step_vfs, step_gis,
								       step_vgpus };
	struct vgpu_ctx *ctx = &a->c->ctx;

	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		for (size_t i = 0; i < a->n_w; i++) {
			int e = steps[s](a, &a->w[i]);

			if (e < 0)
				return vgpu_error(ctx, e, "step %zu (%s): %s", s + 1, step_names[s],
						  vgpu_ctx_error(ctx));
		}
		/* what the next step reads changed: VFs came, GIs make types creatable */
		if ((s == 0 || s == 2) && reread(a) < 0)
			return -EIO;
	}
	return 0;
}

/* apply --dry-run: the plan ("would ...") on stdout, the rest as usual */
static void apply_log(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	if (priority == LOG_NOTICE && strncmp(msg, "would ", 6) == 0) {
		fprintf(c->out, "%s\n", msg + 6);
		return;
	}
	cli_log_cb(data, priority, msg);
}

static int parse_args(struct apply *a, int argc, char **argv)
{
	enum { OPT_NVSMI = 256, OPT_SRIOV, OPT_DRY };
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, OPT_DRY },
		{ "nvidia-smi", required_argument, NULL, OPT_NVSMI },
		{ "sriov-manage", required_argument, NULL, OPT_SRIOV },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = a->check ? "assert" : "apply";
	int o;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+f:l:c:h", opts, NULL)) != -1) {
		switch (o) {
		case 'f':
			a->file = optarg;
			break;
		case 'l':
			a->label = optarg;
			break;
		case 'c':
			a->uri = optarg;
			break;
		case OPT_DRY:
			if (a->check)
				return cli_usage_error(a->c, cmd,
						       "--dry-run: assert changes nothing");
			a->dry_run = true;
			break;
		case OPT_NVSMI:
			a->tools.nvidia_smi = optarg;
			break;
		case OPT_SRIOV:
			a->tools.sriov_manage = optarg;
			break;
		case 'h':
			return -1;
		default:
			return cli_usage_error(a->c, cmd, "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error(a->c, cmd, "unexpected argument '%s'", argv[optind]);
	if (!a->file || !a->label)
		return cli_usage_error(a->c, cmd, "-f FILE and --config LABEL are required");
	a->tools.dry_run = a->dry_run;
	return 0;
}

static void report(struct apply *a)
{
	for (size_t i = 0; i < a->diffs.n; i++)
		fprintf(a->c->out, "%s\n", a->diffs.items[i]);
}

static int run(struct apply *a)
{
	struct cli *c = a->c;
	const char *cmd = a->check ? "assert" : "apply";
	int e;

	if (vgpu_hostcfg_load(&c->ctx, a->file, a->label, &a->cfg) < 0) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if ((!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) ||
	    (!a->check && !a->dry_run && vgpu_sysfs_lock(&c->ctx, c->fs, LOCK_WAIT_MS) < 0)) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (cli_read_host(c, VGPU_READ_TYPES))
		return EXIT_FAILURE;
	vgpu_txn_init(&a->txn, &c->ctx, c->fs, a->dry_run);
	e = resolve(a);
	if (e == 0)
		e = run_steps(a);
	if (e == 0)
		e = step_domains(a);
	if (e < 0) {
		vgpu_txn_rollback(&a->txn);
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	vgpu_txn_commit(&a->txn);
	report(a);
	if (a->check && a->diffs.n)
		return EXIT_FAILURE;
	if (!a->check && a->diffs.n) {
		cli_error(c, "apply: the host still differs from '%s' (above)", a->label);
		return EXIT_FAILURE;
	}
	if (!a->dry_run)
		vgpu_log(&c->ctx, LOG_INFO, "%s: the host matches '%s' of %s", cmd, a->label,
			 a->file);
	return EXIT_SUCCESS;
}

static int apply_main(struct cli *c, int argc, char **argv, bool check)
{
	struct apply a = { .c = c, .check = check };
	int r;

	a.tools.nvidia_smi = VGPU_NVIDIA_SMI_DEFAULT;
	a.tools.sriov_manage = VGPU_SRIOV_MANAGE_DEFAULT;
	r = parse_args(&a, argc, argv);
	if (r == 0) {
		if (a.dry_run)
			c->ctx.log_fn = apply_log;
		r = run(&a);
	}
	vgpu_hostcfg_clear(&a.cfg);
	for (size_t i = 0; i < a.n_w; i++)
		free(a.w[i].vgpus);
	free(a.w);
	vgpu_strv_clear(&a.diffs);
	return r;
}

int cmd_apply(struct cli *c, int argc, char **argv)
{
	return apply_main(c, argc, argv, false);
}

int cmd_assert(struct cli *c, int argc, char **argv)
{
	return apply_main(c, argc, argv, true);
}
