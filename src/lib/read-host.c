// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host read: the readers below (read-pci.c, read-types.c, read-topo.c)
 * fill one model; the owner records and the stored catalogues complete it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "capacity.h"
#include "catalog.h"
#include "cleanup.h"
#include "read-host.h"
#include "read-live.h"
#include "mig-tables.h"
#include "mig.h"
#include "migrate-check.h"
#include "read-priv.h"
#include "read-topo.h"

/*
 * numa_node -1 is normal on single-node hosts.  On a multi-node host derive
 * the node from local_cpulist (the CPUs are the node's: docs/design.md) and say so.
 */
static void resolve_numa(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_topology *t,
			 struct vgpu_gpu *g)
{
	struct vgpu_sysdir root;
	char rel[VGPU_PATH_MAX], show[VGPU_SHOW_LEN];
	int found = -1, hits = 0;

	if (g->numa_node >= 0 || !t->n_nodes)
		return;
	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/numa_node", g->addr);
	if (t->n_nodes == 1) {
		g->numa_node = t->nodes[0].id;
	} else {
		for (size_t i = 0; g->has_cpus && i < t->n_nodes; i++) {
			if (vgpu_cpuset_subset(&g->cpus, &t->nodes[i].cpus)) {
				found = t->nodes[i].id;
				hits++;
			}
		}
		if (hits != 1) {
			vgpu_warn(
				ctx,
				"'%s' is -1 on a %zu-node host and local_cpulist spans nodes; NUMA node unknown",
				VGPU_SHOW(&root, rel, show), t->n_nodes);
			return;
		}
		vgpu_warn(ctx, "'%s' is -1 on a %zu-node host; using node %d from local_cpulist",
			  VGPU_SHOW(&root, rel, show), t->n_nodes, found);
		g->numa_node = found;
	}
	for (size_t i = 0; i < g->n_parents; i++)
		if (g->parents[i].numa_node < 0)
			g->parents[i].numa_node = g->numa_node;
}

int vgpu_model_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned what,
		    struct vgpu_model **out)
{
	VGPU_AUTOPTR(model) m = vgpu_model_new();
	bool need_topo = what & VGPU_READ_TOPOLOGY;
	int r = vgpu_read_gpus(ctx, fs, m);

	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n_gpus; i++)
		need_topo |= m->gpus[i].numa_node < 0;
	if (need_topo) {
		struct vgpu_topology t = { 0 };

		r = vgpu_model_read_topology(ctx, fs, &t);
		if (r < 0)
			return r;
		vgpu_model_set_topology(m, &t);
		for (size_t i = 0; i < m->n_gpus; i++)
			resolve_numa(ctx, fs, &m->topo, &m->gpus[i]);
	}
	r = vgpu_read_mdevs(ctx, fs, m);
	if (r < 0)
		return r;
	for (size_t i = 0; (what & VGPU_READ_TYPES) && i < m->n_gpus; i++) {
		r = vgpu_read_types(ctx, fs, &m->gpus[i]);
		if (r < 0)
			return r;
	}
	*out = vgpu_steal_ptr(&m);
	return 0;
}

/* The profiles of MIG types free parents offer now, but for GIs with seats left. */
static size_t offered_profiles(const struct vgpu_mig_board *b, const struct vgpu_gpu *g,
			       const struct vgpu_mig_profile **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		for (size_t k = 0; k < p->n_types; k++) {
			const struct vgpu_type *t = p->types[k].type;
			const struct vgpu_mig_profile *prof = NULL;
			bool seen = false, seated = false;

			if (t->info.backing != VGPU_BACKING_MIG || p->types[k].available <= 0)
				continue;
			for (size_t j = 0; j < b->n_profiles; j++)
				if (strcmp(b->profiles[j].name, t->info.gi_profile) == 0)
					prof = &b->profiles[j];
			for (size_t j = 0; j < g->n_gis; j++)
				seated |= g->gis[j].used_type == t->id &&
					  (long)g->gis[j].used < vgpu_type_per_gi(t);
			for (size_t j = 0; j < n; j++)
				seen |= out[j] == prof;
			if (!prof || seen || seated)
				continue;
			if (n == max)
				return max + 1;
			out[n++] = prof;
		}
	}
	return n;
}

/*
 * Give the free GIs whose profile is unknown the only profiles the driver's
 * lists allow: every offered profile is on at least one free GI, and the
 * whole layout must be one the board can place.  Kept only when exactly one
 * multiset of profiles passes.  Small by construction: at most
 * VGPU_INFER_GIS unknown GIs over at most VGPU_INFER_PROFILES profiles
 * (C(11, 8) = 165 layouts, each solved exactly).
 */
#define VGPU_INFER_GIS 8
#define VGPU_INFER_PROFILES 4
static void infer_free_gis(const struct vgpu_mig_board *b, struct vgpu_gpu *g)
{
	const struct vgpu_mig_profile *offer[VGPU_INFER_PROFILES];
	const struct vgpu_mig_profile *known[VGPU_GIS_MAX];
	size_t unknown[VGPU_INFER_GIS], n_unknown = 0, n_known = 0, n_offer, found = 0;
	unsigned pick[VGPU_INFER_GIS] = { 0 }, keep[VGPU_INFER_GIS] = { 0 };

	for (size_t i = 0; i < g->n_gis; i++) {
		if (g->gis[i].profile) {
			known[n_known++] = g->gis[i].profile;
		} else if (g->gis[i].used || n_unknown == VGPU_INFER_GIS) {
			return; /* a held GI of unknown profile, or too many */
		} else {
			unknown[n_unknown++] = i;
		}
	}
	n_offer = offered_profiles(b, g, offer, VGPU_INFER_PROFILES);
	if (!n_unknown || !n_offer || n_offer > VGPU_INFER_PROFILES || n_offer > n_unknown)
		return;
	/* multisets as non-decreasing index sequences into offer[] */
	for (;;) {
		struct vgpu_mig_request req[VGPU_GIS_MAX + VGPU_INFER_GIS];
		struct vgpu_mig_gi *out = NULL;
		struct vgpu_ctx quiet;
		size_t n_out = 0, n_req = 0;
		bool all = true;
		int r;

		for (size_t o = 0; o < n_offer && all; o++) {
			bool used = false;

			for (size_t j = 0; j < n_unknown; j++)
				used |= pick[j] == o;
			all = used;
		}
		if (all) {
			for (size_t j = 0; j < n_known; j++)
				req[n_req++] = (struct vgpu_mig_request){ known[j], 1 };
			for (size_t j = 0; j < n_unknown; j++)
				req[n_req++] = (struct vgpu_mig_request){ offer[pick[j]], 1 };
			vgpu_ctx_init(&quiet, NULL, NULL);
			r = vgpu_mig_solve(&quiet, b, NULL, 0, req, n_req, &out, &n_out);
			vgpu_ctx_clear(&quiet);
			free(out);
			if (r == 0) {
				if (found++)
					return; /* two layouts fit: the lists do not tell */
				memcpy(keep, pick, sizeof(keep));
			}
		}
		/* next multiset */
		size_t j = n_unknown;
		while (j > 0 && pick[j - 1] == n_offer - 1)
			j--;
		if (j == 0)
			break;
		pick[j - 1]++;
		for (size_t k = j; k < n_unknown; k++)
			pick[k] = pick[j - 1];
	}
	if (found != 1)
		return;
	for (size_t j = 0; j < n_unknown; j++)
		g->gis[unknown[j]].profile = offer[keep[j]];
}

/*
 * The GIs' users (vGPUs naming their gpu_instance_id), the profiles they
 * tell, and the profiles of free GIs where the driver's lists leave one
 * answer.  Counted afresh each time: vgpu_host_set_gis() runs it again once
 * another source has added GIs.
 */
static void read_gis(struct vgpu_sysfs *fs, const struct vgpu_model *m, struct vgpu_gpu *g)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);
	VGPU_AUTOFREE struct vgpu_gi_user *users = NULL;
	size_t n;

	if (!g->n_gis)
		return;
	for (size_t i = 0; i < g->n_gis; i++) {
		g->gis[i].used = 0;
		g->gis[i].used_type = 0;
	}
	n = vgpu_host_gi_users(fs, m, g, &users);
	for (size_t i = 0; i < n; i++) {
		struct vgpu_gi *gi = vgpu_gpu_find_gi(g, (int)users[i].gi);
		const struct vgpu_type *t = users[i].type;

		if (!gi)
			continue; /* names a GI procfs does not list: counted nowhere */
		for (size_t j = 0; j < g->n_parents; j++) {
			struct vgpu_parent *p = &g->parents[j];
			bool his = strcmp(p->addr, users[i].who) == 0;

			for (size_t k = 0; k < p->mdevs.n && !his; k++)
				his = strcmp(p->mdevs.items[k], users[i].who) == 0;
			if (his)
				p->gi_id = gi->id;
		}
		gi->used++;
		gi->used_type = t ? t->id : 0;
		if (!gi->profile && b && t)
			for (size_t j = 0; j < b->n_profiles; j++)
				if (strcmp(b->profiles[j].name, t->info.gi_profile) == 0)
					gi->profile = &b->profiles[j];
	}
	if (b && !g->gis_exact)
		infer_free_gis(b, g);
}

void vgpu_host_set_gis(struct vgpu_sysfs *fs, const struct vgpu_model *m, struct vgpu_gpu *g,
		       const struct vgpu_mig_gi *gis, size_t n)
{
	bool exact = true;

	for (size_t i = 0; i < n; i++)
		vgpu_gpu_add_gi(g, gis[i].id, gis[i].profile, (int)gis[i].start);
	/* a GI procfs names that the listing does not: the picture is not whole */
	for (size_t i = 0; i < g->n_gis; i++)
		exact &= g->gis[i].profile && g->gis[i].start >= 0;
	g->gis_exact = exact;
	read_gis(fs, m, g);
}

int vgpu_host_arch(struct vgpu_sysfs *fs, char *buf, size_t len)
{
	struct vgpu_sysdir root;
	struct utsname u;

	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_read_str(&root, buf, len, "proc/sys/kernel/arch") == 0 && *buf)
		return 0;
	if (strcmp(vgpu_sysfs_root(fs), "/") != 0 || uname(&u) < 0 || strlen(u.machine) >= len)
		return -ENOENT;
	memcpy(buf, u.machine, strlen(u.machine) + 1);
	return 0;
}

void vgpu_host_versions(struct vgpu_sysfs *fs, unsigned long *kernel, char *driver, size_t len)
{
	struct vgpu_sysdir root;
	char buf[512];
	const char *p;

	vgpu_sysdir_root(fs, &root);
	*kernel = 0;
	if (vgpu_sysfs_read_str(&root, buf, sizeof(buf), "proc/sys/kernel/osrelease") == 0)
		*kernel = vgpu_mig_version_parse(buf);
	if (len)
		*driver = '\0';
	/* "NVRM version: NVIDIA UNIX ... Kernel Module for x86_64  550.54.16  Release Build ..." */
	if (vgpu_sysfs_read_str(&root, buf, sizeof(buf), "proc/driver/nvidia/version") &&
	    vgpu_sysfs_read_str(&root, buf, sizeof(buf), "sys/module/nvidia/version"))
		return;
	p = strncmp(buf, "NVRM version:", 13) ? buf : buf + 13;
	while (*p && *p != '\n') {
		size_t n = strspn(p, "0123456789.");

		if (n > 2 && p[0] != '.' && strchr(p, '.') && memchr(p, '.', n) &&
		    (p[n] == ' ' || p[n] == '\n' || !p[n]) && (p == buf || p[-1] == ' ')) {
			if (n < len) {
				memcpy(driver, p, n);
				driver[n] = '\0';
			}
			return;
		}
		p += n ? n : 1;
	}
}

/* The last bytes of a log that are read: a few days of a busy host's kernel log. */
#define LOG_TAIL_MAX (4u << 20)

void vgpu_host_driver_build(struct vgpu_sysfs *fs, struct vgpu_mig_host *h)
{
	/* the kernel's and the vGPU manager's syslog: Debian, then RHEL, then both in one */
	static const char *const logs[] = { "var/log/kern.log", "var/log/messages",
					    "var/log/syslog" };
	struct vgpu_sysdir root;

	if (h->driver_build_from[0] && h->driver_build != VGPU_UNKNOWN)
		return; /* NVML said */
	vgpu_sysdir_root(fs, &root);
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		VGPU_AUTOFREE char *text = NULL;
		const char *on, *off, *p;

		if (vgpu_sysfs_read_tail(&root, LOG_TAIL_MAX, &text, NULL, "%s", logs[i]) < 0)
			continue;
		/* the last line that says either is the build running now */
		on = off = NULL;
		for (p = text; (p = strstr(p, "vGPU migration enabled")); p++)
			on = p;
		for (p = text; (p = strstr(p, "vGPU migration disabled")); p++)
			off = p;
		if (!on && !off)
			continue;
		h->driver_build = on && (!off || on > off) ? VGPU_ON : VGPU_OFF;
		snprintf(h->driver_build_from, sizeof(h->driver_build_from), "kernel log");
		return;
	}
}

void vgpu_host_vgpu_params(struct vgpu_sysfs *fs, const struct vgpu_records *recs,
			   const char *domain, struct vgpu_mig_host *h)
{
	struct vgpu_sysdir root;
	size_t n = 0;
	char buf[4096];

	vgpu_sysdir_root(fs, &root);
	for (size_t i = 0; i < recs->n && n < h->n_vgpus; i++) {
		const struct vgpu_record *r = &recs->v[i];
		int e;

		if (!vgpu_mig_record_is(r, domain))
			continue;
		if (r->iface == VGPU_IFACE_MDEV)
			e = vgpu_sysfs_read_str(&root, buf, sizeof(buf),
						"sys/bus/mdev/devices/%s/nvidia/vgpu_params",
						r->mdev_uuid);
		else
			e = vgpu_sysfs_read_str(&root, buf, sizeof(buf),
						"sys/bus/pci/devices/%s/nvidia/vgpu_params",
						r->parent);
		if (e == 0)
			vgpu_mig_params_parse(buf, &h->vgpus[n]);
		n++;
	}
}

int vgpu_host_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned what,
		   struct vgpu_model **out, struct vgpu_records *recs)
{
	VGPU_AUTOPTR(model) m = NULL;
	VGPU_AUTORECORDS rs = { 0 };
	int r = vgpu_model_read(ctx, fs, what, &m);

	if (r < 0)
		return r;
	r = vgpu_records_read(ctx, fs, &rs);
	if (r < 0)
		return r;
	vgpu_records_apply(&rs, m);
	vgpu_wedged_apply(fs, m);
	if (what & VGPU_READ_TYPES) {
		vgpu_catalog_load(ctx, fs, m);
		for (size_t i = 0; i < m->n_gpus; i++)
			read_gis(fs, m, &m->gpus[i]);
	}
	*out = vgpu_steal_ptr(&m);
	if (recs) {
		*recs = rs;
		memset(&rs, 0, sizeof(rs));
	}
	return 0;
}

void vgpu_host_warn_unknown_type(struct vgpu_ctx *ctx, const struct vgpu_type *t)
{
	if (t->info.backing == VGPU_BACKING_UNKNOWN)
		vgpu_warn(
			ctx,
			"'%s': type name '%s' is outside NVIDIA's naming grammar; listed with backing 'unknown'",
			t->source ? t->source : "(in memory)", t->name);
}

void vgpu_host_warn_unknown_types(struct vgpu_ctx *ctx, const struct vgpu_model *m)
{
	for (size_t i = 0; i < m->n_gpus; i++)
		for (size_t k = 0; k < m->gpus[i].n_types; k++)
			vgpu_host_warn_unknown_type(ctx, m->gpus[i].types[k]);
}

/* ---- vGPUs and their owners ---------------------------------------------- */

const char *vgpu_state_str(enum vgpu_state s)
{
	static const char *const names[] = { "active",	"reserved", "missing", "conflict", "orphan",
					     "unknown", "damaged",  "config",  "incoming" };

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

enum vgpu_state vgpu_host_record_state(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
				       const struct vgpu_record *r)
{
	struct vgpu_live_state st;

	if (vgpu_live_query(ctx, fs, r, &st) < 0) {
		vgpu_warn(ctx, "%s", vgpu_ctx_error(ctx));
		return VGPU_STATE_UNKNOWN;
	}
	if (!st.exists && r->state == VGPU_RECORD_INCOMING)
		return VGPU_STATE_INCOMING;
	if (!st.exists)
		return r->lifetime == VGPU_LIFETIME_PER_START ? VGPU_STATE_RESERVED :
								VGPU_STATE_MISSING;
	if (!vgpu_live_as_recorded(&st, r))
		return VGPU_STATE_CONFLICT;
	return VGPU_STATE_ACTIVE;
}

static void add_orphan(struct vgpu_orphan **out, size_t *n, const struct vgpu_parent *p,
		       const char *mdev)
{
	*out = vgpu_xreallocarray(*out, *n + 1, sizeof(**out));
	(*out)[(*n)++] = (struct vgpu_orphan){ p, mdev };
}

size_t vgpu_host_orphans(const struct vgpu_model *m, const struct vgpu_records *recs,
			 struct vgpu_orphan **out)
{
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		for (size_t j = 0; j < g->n_parents; j++) {
			const struct vgpu_parent *p = &g->parents[j];

			if (p->iface == VGPU_IFACE_MDEV) {
				for (size_t k = 0; k < p->mdevs.n; k++)
					if (!vgpu_records_find(recs, p->addr, p->mdevs.items[k]))
						add_orphan(out, &n, p, p->mdevs.items[k]);
			} else if (p->in_use && !vgpu_records_find(recs, p->addr, NULL)) {
				add_orphan(out, &n, p, NULL);
			}
		}
	}
	return n;
}

static void add_user(struct vgpu_gi_user **out, size_t *n, long gi, const char *who,
		     const struct vgpu_type *t)
{
	*out = vgpu_xreallocarray(*out, *n + 1, sizeof(**out));
	(*out)[(*n)++] = (struct vgpu_gi_user){ gi, who, t ? t->info.profile : NULL, t };
}

size_t vgpu_host_gi_users(struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_gpu *g, struct vgpu_gi_user **out)
{
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		const struct vgpu_type *t = vgpu_model_find_type(m, g, p->current_type);
		VGPU_AUTOSYSDIR d = { .fd = -1 };
		long gi;

		if (!p->current_type || vgpu_sysdir_open(fs, &d, "sys/bus/pci/devices/%s", p->addr))
			continue;
		if (p->iface == VGPU_IFACE_VENDOR_VFIO &&
		    vgpu_sysfs_read_long(&d, &gi, 0, 0xffff, "nvidia/gpu_instance_id") == 0)
			add_user(out, &n, gi, p->addr, t);
		for (size_t k = 0; k < p->mdevs.n; k++)
			if (vgpu_sysfs_read_long(&d, &gi, 0, 0xffff, "%s/nvidia/gpu_instance_id",
						 p->mdevs.items[k]) == 0)
				add_user(out, &n, gi, p->mdevs.items[k], t);
	}
	return n;
}
