// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * migrate-plan.c - where a domain migrating here lands (see migrate-plan.h):
 * the hook's choice, made from plain data so that migrate-offer makes the
 * same one (pure: no I/O).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "migrate-plan.h"
#include "util.h"

/* Does record @r belong to the domain @uuid? */
static bool owned(const struct vgpu_record *r, const char *uuid)
{
	return strcasecmp(r->domain_uuid, uuid) == 0;
}

/* Is mdev @uuid on this host already, as a device or in another domain's record? */
static bool mdev_taken(const struct vgpu_model *m, const struct vgpu_records *recs,
		       const char *self, const char *uuid)
{
	for (size_t i = 0; i < recs->n; i++)
		if (!owned(&recs->v[i], self) && strcasecmp(recs->v[i].mdev_uuid, uuid) == 0)
			return true;
	for (size_t g = 0; g < m->n_gpus; g++)
		for (size_t p = 0; p < m->gpus[g].n_parents; p++)
			for (size_t k = 0; k < m->gpus[g].parents[p].mdevs.n; k++)
				if (strcasecmp(m->gpus[g].parents[p].mdevs.items[k], uuid) == 0)
					return true;
	return false;
}

/* The interface gate and the display refusal, for each vGPU of @plan. */
static int check_ifaces(struct vgpu_ctx *ctx, const struct vgpu_plan *plan,
			const struct vgpu_mplan_in *in)
{
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_mplan_vgpu *v = &in->vgpus[i];

		if (plan->vgpus[i].iface == v->iface)
			continue;
		if (!in->iface_change)
			return vgpu_error(
				ctx, -ENOTSUP,
				"vGPU %zu (%s) is %s on the source and would be %s here: %s", i + 1,
				v->profile, vgpu_iface_str(v->iface),
				vgpu_iface_str(plan->vgpus[i].iface),
				in->iface_change_why ?
					in->iface_change_why :
					"an interface change needs libvirt 11.0 or later on both ends");
		if (v->iface == VGPU_IFACE_MDEV && v->display)
			return vgpu_error(
				ctx, -ENOTSUP,
				"vGPU %zu (%s) is mdev on the source with a display or ramfb, and would be a VF here, whose hostdev has none: the guest would lose its display",
				i + 1, v->profile);
	}
	return 0;
}

int vgpu_mplan_make(struct vgpu_ctx *ctx, const struct vgpu_model *m,
		    const struct vgpu_records *recs, const struct vgpu_mplan_in *in,
		    struct vgpu_mplan *out)
{
	VGPU_AUTOPTR(plan) plan = NULL;
	struct vgpu_request req = { .vcpus = in->vcpus ? in->vcpus : 1,
				    .uuid = in->uuid,
				    .memory_kib = in->memory_kib };
	int e;

	if (in->n_vgpus > VGPU_MAX_VGPUS)
		return vgpu_error(ctx, -EINVAL, "%zu vGPUs: at most %d", in->n_vgpus,
				  VGPU_MAX_VGPUS);
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];

		if (owned(r, in->uuid) && r->state == VGPU_RECORD_ACTIVE)
			return vgpu_error(
				ctx, -EEXIST,
				"domain '%s' (%s) already holds %s on %s here; it cannot migrate here",
				r->domain, r->domain_uuid, r->profile, r->parent);
		if (!owned(r, in->uuid)) /* other domains' pinned CPUs are taken */
			vgpu_cpuset_or(&req.exclude, &r->cpus);
	}
	req.n_profiles = in->n_vgpus;
	for (size_t i = 0; i < in->n_vgpus; i++)
		req.profiles[i] = in->vgpus[i].profile;
	/* a fabric partition's GPUs, one vGPU on each */
	for (size_t i = 0; in->partitioned && i < in->n_vgpus; i++)
		snprintf(req.gpus[i], sizeof(req.gpus[i]), "%s", in->part_gpus[i]);
	if (in->partitioned)
		req.n_gpus = in->n_vgpus;
	e = vgpu_plan_make(ctx, m, &req, &plan);
	if (e == 0)
		e = check_ifaces(ctx, plan, in);
	if (e < 0)
		return e;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const struct vgpu_choice *c = &plan->vgpus[i];
		const struct vgpu_mplan_vgpu *v = &in->vgpus[i];
		struct vgpu_mplan_landing *l = &out->landing[i];
		const char *u = v->mdev_uuid;
		char norm[VGPU_UUID_LEN];
		bool keep = c->iface == VGPU_IFACE_MDEV && u && vgpu_uuid_normalize(u, norm) &&
			    !mdev_taken(m, recs, in->uuid, norm);

		/* the UUID the guest's hostdev names stays when nobody here has it */
		for (size_t k = 0; keep && k < i; k++)
			keep = strcmp(out->landing[k].mdev_uuid, norm) != 0;
		snprintf(l->parent, sizeof(l->parent), "%s", c->parent);
		snprintf(l->gpu, sizeof(l->gpu), "%s", c->gpu);
		snprintf(l->mdev_uuid, sizeof(l->mdev_uuid), "%s", keep ? norm : "");
		l->iface = c->iface;
		l->type_id = c->type_id;
		snprintf(l->profile, sizeof(l->profile), "%s", c->profile);
		if (c->iface != v->iface)
			l->changed = true;
		else if (c->iface == VGPU_IFACE_MDEV)
			l->changed = !keep || strcmp(u, norm) != 0;
		else
			l->changed = !v->vf || strcmp(v->vf, c->parent) != 0;
	}
	out->n_landing = plan->n_vgpus;
	out->partitioned = in->partitioned;
	out->partition = in->partition;
	out->node = plan->node;
	out->cpus = plan->cpus;
	/* every slot of the guest topology (cores x threads) has its CPU */
	out->n_pins = plan->cores * plan->threads;
	if (out->n_pins > VGPU_MAX_CPUS)
		out->n_pins = VGPU_MAX_CPUS;
	if (plan->pins)
		memcpy(out->pins, plan->pins, out->n_pins * sizeof(out->pins[0]));
	else
		out->n_pins = 0;
	return 0;
}
