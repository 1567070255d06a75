// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A fabric partition for a VM's vGPUs (see fabric-place.h): best fit, so
 * the free larger partitions stay whole as long as they can.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "fabric-place.h"
#include "model.h"
#include "plan.h"
#include "records.h"

bool vgpu_fabric_taken(const struct vgpu_place_in *in, unsigned id)
{
	for (size_t i = 0; i < in->fabric->n; i++)
		if (in->fabric->v[i].id == id && in->fabric->v[i].active)
			return true;
	for (size_t i = 0; i < in->n_taken; i++)
		if (in->taken[i] == id)
			return true;
	return false;
}

static bool part_has(const struct vgpu_fabric_part *p, const char *bus)
{
	for (size_t k = 0; k < p->ngpus; k++)
		if (p->gpu[k].bus[0] && strcmp(p->gpu[k].bus, bus) == 0)
			return true;
	return false;
}

bool vgpu_fabric_gpu_taken(const struct vgpu_place_in *in, const char *bus, unsigned *by)
{
	for (size_t i = 0; i < in->fabric->n; i++) {
		const struct vgpu_fabric_part *p = &in->fabric->v[i];

		if (vgpu_fabric_taken(in, p->id) && part_has(p, bus)) {
			if (by)
				*by = p->id;
			return true;
		}
	}
	return false;
}

static bool fits(const struct vgpu_place_in *in, const char *bus)
{
	for (size_t i = 0; in->fit && i < in->fit->n; i++)
		if (strcmp(in->fit->items[i], bus) == 0)
			return true;
	return false;
}

/*
 * Why partition @p cannot be activated now (static text or into @buf), or
 * NULL when it can; @need_fit: its GPUs must also take the type.
 */
static const char *blocked(const struct vgpu_place_in *in, const struct vgpu_fabric_part *p,
			   bool need_fit, char *buf, size_t len)
{
	unsigned by;

	if (!p->supported)
		return "unsupported";
	if (vgpu_fabric_taken(in, p->id))
		return "in use";
	for (size_t k = 0; k < p->ngpus; k++) {
		const char *bus = p->gpu[k].bus;

		if (!bus[0]) {
			snprintf(buf, len, "no GPU is known with module ID %u",
				 p->gpu[k].module_id);
			return buf;
		}
		if (vgpu_fabric_gpu_taken(in, bus, &by)) {
			snprintf(buf, len, "GPU %s is in partition %u, in use", bus, by);
			return buf;
		}
		if (need_fit && !fits(in, bus)) {
			snprintf(buf, len, "GPU %s cannot take the type now", bus);
			return buf;
		}
	}
	return NULL;
}

size_t vgpu_fabric_free_count(const struct vgpu_place_in *in)
{
	size_t n = 0;
	char buf[96];

	for (size_t i = 0; i < in->fabric->n; i++)
		n += !blocked(in, &in->fabric->v[i], false, buf, sizeof(buf));
	return n;
}

static bool overlap(const struct vgpu_fabric_part *a, const struct vgpu_fabric_part *b)
{
	for (size_t k = 0; k < a->ngpus; k++)
		if (a->gpu[k].bus[0] && part_has(b, a->gpu[k].bus))
			return true;
	return false;
}

/* How many free partitions larger than @p taking @p would break. */
static size_t breaks(const struct vgpu_place_in *in, const struct vgpu_fabric_part *p)
{
	size_t n = 0;
	char buf[96];

	for (size_t i = 0; i < in->fabric->n; i++) {
		const struct vgpu_fabric_part *q = &in->fabric->v[i];

		n += q->ngpus > p->ngpus && overlap(p, q) &&
		     !blocked(in, q, false, buf, sizeof(buf));
	}
	return n;
}

static int cmp_bus(const void *a, const void *b)
{
	return strcmp(a, b);
}

int vgpu_fabric_place(struct vgpu_ctx *ctx, const struct vgpu_place_in *in, struct vgpu_place *out)
{
	const struct vgpu_fabric_part *best = NULL;
	VGPU_AUTOFREE char *why = NULL;
	size_t best_breaks = 0, candidates = 0;

	for (size_t i = 0; i < in->fabric->n; i++) {
		const struct vgpu_fabric_part *p = &in->fabric->v[i];
		const char *no;
		char buf[96];
		size_t b;

		if (p->ngpus != in->ngpus)
			continue;
		candidates++;
		no = blocked(in, p, true, buf, sizeof(buf));
		if (no) {
			vgpu_append(&why, "%s%u: %s", why ? "; " : "", p->id, no);
			continue;
		}
		b = breaks(in, p);
		if (!best || b < best_breaks || (b == best_breaks && p->id < best->id)) {
			best = p;
			best_breaks = b;
		}
	}
	if (!candidates)
		return vgpu_error(ctx, -EINVAL, "no partition of the fabric has %zu GPUs",
				  in->ngpus);
	if (!best)
		return vgpu_error(ctx, -ENOSPC, "no free partition of %zu GPUs (%s)", in->ngpus,
				  why);
	memset(out, 0, sizeof(*out));
	out->id = best->id;
	out->ngpus = best->ngpus;
	for (size_t k = 0; k < best->ngpus; k++)
		snprintf(out->gpu[k], sizeof(out->gpu[k]), "%s", best->gpu[k].bus);
	qsort(out->gpu, out->ngpus, sizeof(out->gpu[0]), cmp_bus);
	return 0;
}

int vgpu_fabric_place_vgpus(struct vgpu_ctx *ctx, const struct vgpu_model *m,
			    const struct vgpu_records *recs, const char *self,
			    const char *const *profiles, size_t n, const struct vgpu_fabric *fabric,
			    struct vgpu_place *out)
{
	VGPU_AUTOFREE unsigned *taken = vgpu_xcalloc(recs->n + 1, sizeof(*taken));
	VGPU_AUTOSTRV fit = { 0 };
	struct vgpu_place_in in = { .fabric = fabric, .taken = taken, .fit = &fit, .ngpus = n };

	for (size_t i = 0; i < recs->n; i++)
		if (recs->v[i].partitioned && strcasecmp(recs->v[i].domain_uuid, self) != 0)
			taken[in.n_taken++] = recs->v[i].partition;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		bool ok = true;

		for (size_t p = 0; ok && p < n; p++) {
			const struct vgpu_type *t = vgpu_gpu_match_type(g, profiles[p]);

			ok = t && vgpu_gpu_room(m, g, t) > 0;
		}
		if (ok)
			vgpu_strv_push(&fit, vgpu_xstrdup(g->addr));
	}
	return vgpu_fabric_place(ctx, &in, out);
}
