// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host read: the readers below (read-pci.c, read-types.c, read-topo.c)
 * fill one model; the owner records and the stored catalogues complete it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "host.h"
#include "live.h"
#include "read-priv.h"

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
			vgpu_warn(ctx,
				  "'%s' is -1 on a %zu-node host and local_cpulist spans nodes; "
				  "NUMA node unknown",
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
	if (what & VGPU_READ_TYPES)
		vgpu_catalog_load(ctx, fs, m);
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
		vgpu_warn(ctx,
			  "'%s': type name '%s' is outside NVIDIA's naming grammar; "
			  "listed with backing 'unknown'",
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
	static const char *const names[] = { "active", "reserved", "missing", "conflict",
					     "orphan", "unknown",  "damaged" };

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
		     const char *profile)
{
	*out = vgpu_xreallocarray(*out, *n + 1, sizeof(**out));
	(*out)[(*n)++] = (struct vgpu_gi_user){ gi, who, profile };
}

size_t vgpu_host_gi_users(struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_gpu *g, struct vgpu_gi_user **out)
{
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];
		const struct vgpu_type *t = vgpu_model_find_type(m, g, p->current_type);
		const char *profile = t ? t->info.profile : NULL;
		VGPU_AUTOSYSDIR d = { .fd = -1 };
		long gi;

		if (!p->current_type || vgpu_sysdir_open(fs, &d, "sys/bus/pci/devices/%s", p->addr))
			continue;
		if (p->iface == VGPU_IFACE_VENDOR_VFIO &&
		    vgpu_sysfs_read_long(&d, &gi, 0, 0xffff, "nvidia/gpu_instance_id") == 0)
			add_user(out, &n, gi, p->addr, profile);
		for (size_t k = 0; k < p->mdevs.n; k++)
			if (vgpu_sysfs_read_long(&d, &gi, 0, 0xffff, "%s/nvidia/gpu_instance_id",
						 p->mdevs.items[k]) == 0)
				add_user(out, &n, gi, p->mdevs.items[k], profile);
	}
	return n;
}
