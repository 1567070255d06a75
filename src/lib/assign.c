// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: assigning vGPUs to one domain (see assign.h): the domain read
 * and planned (vgpu_domain_plan(), also the xml and plan commands' plan),
 * the vGPUs claimed and created and the new definition put, one
 * transaction.  A failed write of the new definition is undone by
 * vgpu_release() (release.c), whose end (the definition put, the
 * transaction closed) assign shares through assign-priv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "assign-priv.h"
#include "assign.h"
#include "catalog.h"
#include "cleanup.h"
#include "fabric-place.h"
#include "read-host.h"
#include "live.h"
#include "outfile.h"
#include "records.h"
#include "sysfs-lock.h"
#include "txn.h"
#include "virt.h"

void vgpu_domain_read(struct vgpu_sysfs *fs, struct _xmlDoc *doc, struct vgpu_domain_info *out)
{
	char arch[64];

	vgpu_domain_info_read(doc, vgpu_host_arch(fs, arch, sizeof(arch)) == 0 ? arch : NULL, out);
}

/* The guest check vgpu_domain_info_read() made: a guest no vGPU can go to is refused. */
static int check_guest(struct vgpu_ctx *ctx, const struct vgpu_domain_info *dom)
{
	return dom->guest < 0 ? vgpu_error(ctx, dom->guest, "%s", dom->guest_error) : 0;
}

/* The domain's own <vcpu>, when the request gives no count. */
static int domain_vcpus(struct vgpu_ctx *ctx, const struct vgpu_domain_info *dom,
			struct vgpu_request *req)
{
	if (req->vcpus)
		return 0;
	if (dom->vcpus_bad)
		return vgpu_error(ctx, -EINVAL,
				  "the domain has no usable <vcpu>; give a vCPU count");
	req->vcpus = dom->vcpus ? dom->vcpus : 1; /* libvirt's default without <vcpu> */
	return 0;
}

/*
 * Fabric Manager in vGPU mode (an HGX board): the VM takes a free partition
 * of as many GPUs as it has vGPUs, one vGPU on each; the partitions active
 * or held by other domains' records are taken.  @req's GPUs are set.
 */
static int place_partition(struct vgpu_ctx *ctx, const struct vgpu_model *m,
			   const struct vgpu_records *recs, const char *self,
			   struct vgpu_request *req, struct vgpu_place *out)
{
	VGPU_AUTOFREE unsigned *taken = vgpu_xcalloc(recs->n + 1, sizeof(*taken));
	const struct vgpu_gpu *only = req->gpu ? vgpu_model_find_gpu_arg(m, req->gpu) : NULL;
	const struct vgpu_parent *vf = req->vf ? vgpu_model_find_parent(m, req->vf) : NULL;
	long long now = (long long)time(NULL);
	VGPU_AUTOSTRV fit = { 0 };
	struct vgpu_place_in in = { .fabric = req->fabric, .taken = taken, .fit = &fit };
	int r;

	for (size_t i = 0; i < recs->n; i++)
		if (recs->v[i].partitioned && strcmp(recs->v[i].domain_uuid, self) != 0 &&
		    !vgpu_record_expired(&recs->v[i], now))
			taken[in.n_taken++] = recs->v[i].partition;
	if (vf)
		only = vf->gpu;
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		bool ok = !only || only == g;

		for (size_t p = 0; ok && p < req->n_profiles; p++) {
			const struct vgpu_type *t = vgpu_gpu_match_type(g, req->profiles[p]);

			ok = t && vgpu_gpu_room(m, g, t) > 0;
		}
		if (ok)
			vgpu_strv_push(&fit, vgpu_xstrdup(g->addr));
	}
	in.ngpus = req->n_profiles;
	r = vgpu_fabric_place(ctx, &in, out);
	if (r < 0)
		return r;
	for (size_t i = 0; i < out->ngpus && i < VGPU_MAX_VGPUS; i++)
		snprintf(req->gpus[i], sizeof(req->gpus[i]), "%s", out->gpu[i]);
	req->n_gpus = out->ngpus;
	return 0;
}

/* vgpu_domain_plan(); @checked: the caller has made the domain's checks already. */
static int plan_domain(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_virt *virt,
		       const struct vgpu_domain_info *dom, bool existing, bool checked,
		       struct vgpu_request *req, const struct vgpu_domain_opts *o,
		       struct vgpu_model **model, struct vgpu_plan **out)
{
	VGPU_AUTOPTR(model) m = NULL;
	VGPU_AUTOPTR(plan) plan = NULL;
	const char *uuid = dom ? dom->uuid_text : NULL;
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOSTRV vfs = { 0 };
	char prev[VGPU_MAX_VGPUS][VGPU_UUID_LEN], self[VGPU_UUID_LEN] = "";
	struct vgpu_place part = { 0 };
	int r = vgpu_host_read(ctx, fs, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY, &m, &recs);

	if (r < 0)
		return r;
	vgpu_host_warn_unknown_types(ctx, m);
	if (o->emulator_cpus && !vgpu_cpuset_subset(o->emulator_cpus, &m->topo.online)) {
		char list[256];
		struct vgpu_cpuset off = *o->emulator_cpus;

		vgpu_cpuset_andnot(&off, &m->topo.online);
		return vgpu_error(ctx, -EINVAL, "emulator CPUs %s are not online on this host",
				  vgpu_cpulist_format(&off, list, sizeof(list)));
	}
	/* the one place the memory is decided: --memory, else the domain's */
	req->memory_kib = o->memory_kib ? o->memory_kib : dom ? dom->memory_kib : 0;
	req->hugepages = o->hugepages;
	/* a guest that cannot take a vGPU is said first, whatever else it lacks */
	if (dom && !checked && check_guest(ctx, dom) < 0)
		return -ENOTSUP;
	if (dom && existing && !checked && domain_vcpus(ctx, dom, req) < 0)
		return -EINVAL; /* --from: the file's <vcpu>, as assign takes it */
	if (!vgpu_uuid_normalize(req->uuid ? req->uuid : uuid ? uuid : "", self))
		self[0] = '\0';
	/* the CPUs other domains' records say they were pinned to are taken */
	for (size_t i = 0; i < recs.n; i++)
		if (strcmp(recs.v[i].domain_uuid, self) != 0)
			vgpu_cpuset_or(&req->exclude, &recs.v[i].cpus);
	if (virt) {
		const char *name = o->name || !dom ? NULL : dom->name;

		r = vgpu_virt_pinned_cpus(ctx, virt, o->name ? o->name : name,
					  req->uuid ? req->uuid : uuid, &req->exclude, &vfs);
		if (r < 0)
			return r;
		/* a VF another defined domain's hostdev names is taken, running or not */
		for (size_t i = 0; i < vfs.n; i++) {
			const struct vgpu_parent *p = vgpu_model_find_parent(m, vfs.items[i]);

			if (p && !p->in_use && !p->n_reserved)
				vgpu_model_reserve(m, vfs.items[i], 0);
		}
	}
	if (req->fabric && req->fabric->mode == VGPU_FABRIC_VGPU &&
	    (r = place_partition(ctx, m, &recs, self, req, &part)) < 0)
		return r;
	r = vgpu_plan_make(ctx, m, req, &plan);
	if (r < 0)
		return r;
	if (req->n_gpus && req->fabric && req->fabric->mode == VGPU_FABRIC_VGPU) {
		plan->partitioned = true;
		plan->partition = part.id;
		vgpu_append(&plan->reason,
			    "; fabric partition %u (%zu GPUs, one vGPU each) is free", part.id,
			    part.ngpus);
	}
	if (dom && existing)
		memcpy(prev, dom->prev_mdevs, sizeof(prev));
	r = vgpu_plan_set_ids(ctx, plan, req, existing ? uuid : NULL, prev,
			      dom && existing ? dom->n_prev_mdevs : 0);
	if (r < 0)
		return r;
	if (model)
		*model = vgpu_steal_ptr(&m);
	*out = vgpu_steal_ptr(&plan);
	return 0;
}

int vgpu_domain_plan(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_virt *virt,
		     const struct vgpu_domain_info *dom, bool existing, struct vgpu_request *req,
		     const struct vgpu_domain_opts *o, struct vgpu_model **model,
		     struct vgpu_plan **out)
{
	return plan_domain(ctx, fs, virt, dom, existing, false, req, o, model, out);
}

/* ---- assign --------------------------------------------------------------- */

/* A vendor-VFIO vGPU needs libvirt 10.0 to start: refuse before changing anything. */
static int check_libvirt(struct vgpu_ctx *ctx, const struct vgpu_domain_target *t,
			 const struct vgpu_plan *plan)
{
	unsigned long ver;
	bool vfio = false;

	for (size_t i = 0; i < plan->n_vgpus; i++)
		vfio |= plan->vgpus[i].iface == VGPU_IFACE_VENDOR_VFIO;
	if (!t->virt || !vfio)
		return 0;
	if (vgpu_virt_version(ctx, t->virt, &ver) < 0)
		return -EIO;
	if (ver < VGPU_LIBVIRT_VENDOR_VFIO)
		return vgpu_error(
			ctx, -ENOTSUP,
			"libvirt %lu.%lu.%lu refuses a vendor-specific VFIO vGPU (an unmanaged VF bound to nvidia) at start; it needs libvirt 10.0 or later, so the domain was not changed",
			ver / 1000000, ver / 1000 % 1000, ver % 1000);
	return 0;
}

/* The owner record of the plan's vGPU @i, for the domain named @name. */
static void record_from(struct vgpu_record *r, const char *name, const struct vgpu_plan *plan,
			size_t i, bool per_start, bool pinned)
{
	const struct vgpu_choice *c = &plan->vgpus[i];

	memset(r, 0, sizeof(*r));
	snprintf(r->domain, sizeof(r->domain), "%s", name);
	snprintf(r->domain_uuid, sizeof(r->domain_uuid), "%s", plan->uuid);
	snprintf(r->gpu, sizeof(r->gpu), "%s", c->gpu);
	snprintf(r->parent, sizeof(r->parent), "%s", c->parent);
	r->iface = c->iface;
	r->type_id = c->type_id;
	snprintf(r->profile, sizeof(r->profile), "%s", c->profile);
	snprintf(r->mdev_uuid, sizeof(r->mdev_uuid), "%s", c->mdev_uuid);
	r->lifetime = per_start ? VGPU_LIFETIME_PER_START : VGPU_LIFETIME_PERSISTENT;
	if (pinned)
		r->cpus = plan->cpus;
	r->partitioned = plan->partitioned;
	r->partition = plan->partition;
}

/* Claim each vGPU with its record: the decision, made under the host lock. */
static int claim_all(struct vgpu_txn *txn, const char *name, const struct vgpu_plan *plan,
		     bool per_start, bool pinned)
{
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		struct vgpu_record rec;
		int r;

		record_from(&rec, name, plan, i, per_start, pinned);
		r = vgpu_txn_record_put(txn, &rec, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Create each claimed vGPU: the driver's work, under the GPUs' locks only. */
static int create_all(struct vgpu_txn *txn, const char *name, const struct vgpu_plan *plan,
		      bool pinned)
{
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		struct vgpu_record rec;
		int r;

		record_from(&rec, name, plan, i, false, pinned);
		r = vgpu_txn_create(txn, &rec);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * An mdev UUID is one vGPU: another domain's record holding it refuses the
 * plan (this domain's own were kept or dropped by own_claims()).
 */
static int check_unique(struct vgpu_ctx *ctx, const struct vgpu_records *recs,
			const struct vgpu_plan *plan)
{
	for (size_t i = 0; i < plan->n_vgpus; i++) {
		const char *u = plan->vgpus[i].mdev_uuid;

		for (size_t k = 0; *u && k < recs->n; k++)
			if (strcmp(recs->v[k].mdev_uuid, u) == 0 &&
			    strcmp(recs->v[k].domain_uuid, plan->uuid) != 0) {
				/* another UUID, or none: the caller names its option */
				vgpu_ctx_hint(ctx, VGPU_HINT_OTHER_MDEV_UUID);
				return vgpu_error(
					ctx, -EEXIST,
					"mdev UUID %s is already domain '%s''s (%s), on %s", u,
					recs->v[k].domain, recs->v[k].domain_uuid,
					recs->v[k].parent);
			}
	}
	return 0;
}

/*
 * The domain the new definition will be: the UUID it gets (--uuid, else the
 * input's) and its name (--name, else the input's).  No UUID: a new one is
 * made, so no record can be its own.
 */
struct identity {
	char uuid[VGPU_UUID_LEN]; /* "" when a new one is made */
	char name[VGPU_DOMAIN_NAME_MAX + 1];
};

static void identity_of(const struct vgpu_domain_info *dom, const struct vgpu_request *req,
			const struct vgpu_domain_opts *o, struct identity *id)
{
	const char *uuid = req->uuid ? NULL : dom->uuid_text;
	const char *name = o->name ? NULL : dom->name;

	if (!vgpu_uuid_normalize(req->uuid ? req->uuid : uuid ? uuid : "", id->uuid))
		id->uuid[0] = '\0';
	snprintf(id->name, sizeof(id->name), "%s", o->name ? o->name : name ? name : "");
}

/*
 * Is a vGPU of type @type_id on GPU @gpu what @spec asks?  The one matcher
 * (vgpu_gpu_match_type()) resolves @spec to a type of that GPU in @m, and
 * the type IDs are compared.  A GPU @m does not list (or lists no types
 * of) is asked by the vGPU's own @profile, through the same rule.
 */
static bool spec_is_type(const struct vgpu_model *m, const char *gpu, const char *spec,
			 unsigned type_id, const char *profile)
{
	const struct vgpu_gpu *g = m ? vgpu_model_find_gpu(m, gpu) : NULL;
	const struct vgpu_type *t;

	if (!g || !g->n_types)
		return vgpu_type_spec_names(spec, type_id, profile, NULL);
	t = vgpu_gpu_match_type(g, spec);
	return t && t->id == type_id;
}

/*
 * Do the records @own (this domain's, the profiles' order unknown) hold
 * exactly what @req and @o ask, the types compared by ID on the host @m?
 * Then @pick[i] is the record of profile i.
 */
static bool claims_match(const struct vgpu_model *m, const struct vgpu_record *const *own, size_t n,
			 const struct vgpu_request *req, const struct vgpu_domain_opts *o,
			 const struct vgpu_record **pick)
{
	bool used[VGPU_MAX_VGPUS] = { false };
	char want[VGPU_BDF_LEN];

	if (n != req->n_profiles)
		return false;
	if (req->gpu && vgpu_bdf_normalize(req->gpu, want) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_record *r = own[i];

		if (r->lifetime !=
			    (o->per_start ? VGPU_LIFETIME_PER_START : VGPU_LIFETIME_PERSISTENT) ||
		    o->no_pin != vgpu_cpuset_empty(&r->cpus) || (req->gpu && strcmp(r->gpu, want)))
			return false;
	}
	for (size_t i = 0; i < n; i++) {
		char vf[VGPU_BDF_LEN], mdev[VGPU_UUID_LEN];

		pick[i] = NULL;
		if (i == 0 && req->vf && vgpu_bdf_normalize(req->vf, vf) < 0)
			return false;
		if (req->mdev_uuids[i] && !vgpu_uuid_normalize(req->mdev_uuids[i], mdev))
			return false;
		for (size_t k = 0; k < n && !pick[i]; k++) {
			const struct vgpu_record *r = own[k];

			if (used[k] ||
			    !spec_is_type(m, r->gpu, req->profiles[i], r->type_id, r->profile) ||
			    (i == 0 && req->vf && strcmp(r->parent, vf)) ||
			    (req->mdev_uuids[i] && strcmp(r->mdev_uuid, mdev)))
				continue;
			used[k] = true;
			pick[i] = r;
		}
		if (!pick[i])
			return false;
	}
	return true;
}

/*
 * The plan an earlier run of this same request made, from its records
 * @pick on the host *@mp: the same parents, mdev UUIDs and (re-derived,
 * lowest cores first) pins.  -errno when the host or the records no longer
 * give it (the caller then starts again).  On success *@model takes *@mp.
 */
static int plan_from_claims(struct vgpu_ctx *ctx, struct vgpu_model **mp, const char *uuid,
			    const struct vgpu_record *const *pick, const struct vgpu_request *req,
			    const struct vgpu_domain_opts *o, struct vgpu_model **model,
			    struct vgpu_plan **out)
{
	const struct vgpu_model *m = *mp;
	VGPU_AUTOPTR(plan) plan = vgpu_xcalloc(1, sizeof(*plan));
	struct vgpu_cpuset busy;
	const struct vgpu_gpu *g0 = NULL;

	for (size_t i = 0; i < req->n_profiles; i++) {
		const struct vgpu_parent *p = vgpu_model_find_parent(m, pick[i]->parent);
		const struct vgpu_type *t = p ? vgpu_model_find_type(m, p->gpu, pick[i]->type_id) :
						NULL;

		if (!t || strcmp(p->gpu->addr, pick[i]->gpu) != 0)
			return -ENOENT;
		vgpu_choice_set(&plan->vgpus[i], p, t);
		snprintf(plan->vgpus[i].mdev_uuid, VGPU_UUID_LEN, "%s", pick[i]->mdev_uuid);
		plan->n_vgpus = i + 1;
		g0 = g0 ? g0 : p->gpu;
	}
	/* pinned: the recorded CPUs are the only free ones; else any (none are written) */
	vgpu_cpuset_zero(&busy);
	if (!o->no_pin) {
		busy = m->topo.online;
		vgpu_cpuset_andnot(&busy, &pick[0]->cpus);
	}
	if (!g0 || g0->numa_node < 0 ||
	    (req->mirror ?
		     vgpu_plan_mirror_cpus(ctx, &m->topo, &busy, req->vcpus, plan) :
		     vgpu_plan_cpus(ctx, &m->topo, g0->numa_node, &busy, req->vcpus, plan)) < 0)
		return -ENOENT;
	plan->node = g0->numa_node;
	if (!o->no_pin && (!vgpu_cpuset_subset(&plan->cpus, &pick[0]->cpus) ||
			   !vgpu_cpuset_subset(&pick[0]->cpus, &plan->cpus)))
		return -ENOENT; /* another vCPU count: not the same request */
	snprintf(plan->uuid, sizeof(plan->uuid), "%s", uuid);
	*model = vgpu_steal_ptr(mp);
	*out = vgpu_steal_ptr(&plan);
	return 0;
}

/*
 * Records of the domain the new definition will be (@id) while the input
 * has no vGPUs of ours for it: an earlier assign of the same domain, cut
 * off before its definition was written, or finished and run again with
 * the same input (a template, as Ansible and Terraform do).  Records of the
 * UUID under another name are another domain's: refused, never touched.
 * What the request asks is kept as it is (*@plan: the plan those records
 * are); anything else is undone inside this run's transaction.
 */
static int own_claims(struct vgpu_txn *txn, struct vgpu_sysfs *fs, const struct vgpu_records *recs,
		      const struct identity *id, const struct vgpu_request *req,
		      const struct vgpu_domain_opts *o, struct vgpu_model **model,
		      struct vgpu_plan **plan)
{
	const struct vgpu_record *own[VGPU_MAX_VGPUS + 1], *pick[VGPU_MAX_VGPUS];
	VGPU_AUTOPTR(model) m = NULL;
	size_t n = 0;

	for (size_t i = 0; id->uuid[0] && i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];

		if (strcmp(r->domain_uuid, id->uuid) != 0)
			continue;
		if (strcmp(r->domain, id->name) != 0)
			return vgpu_error(
				txn->ctx, -EEXIST,
				"UUID %s is domain '%s''s (it holds %s on %s), not '%s''s; give this domain a UUID of its own",
				id->uuid, r->domain, r->profile, r->parent, id->name);
		if (n < VGPU_MAX_VGPUS + 1)
			own[n++] = r;
	}
	if (!n)
		return 0;
	if (vgpu_host_read(txn->ctx, fs, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY, &m, NULL) == 0 &&
	    claims_match(m, own, n, req, o, pick) &&
	    plan_from_claims(txn->ctx, &m, id->uuid, pick, req, o, model, plan) == 0) {
		vgpu_log(txn->ctx, LOG_NOTICE, "'%s' already holds %s%s on %s: kept", id->name,
			 pick[0]->profile, n > 1 ? " and more" : "", pick[0]->parent);
		return 0;
	}
	vgpu_ctx_clear(txn->ctx);
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		int e;

		if (strcmp(r->domain_uuid, id->uuid) != 0)
			continue;
		vgpu_log(txn->ctx, LOG_NOTICE,
			 "an earlier assign of '%s' did not finish: undoing its %s on %s",
			 r->domain, r->profile, r->parent);
		e = vgpu_txn_destroy(txn, r);
		if (e == -ESTALE)
			e = 0;
		if (e == 0)
			e = vgpu_txn_record_drop(txn, r);
		if (e < 0)
			return e;
	}
	return 0;
}

/*
 * Is the domain already what @req asks: our metadata names exactly these
 * types (compared by type ID on the host @host), in order, with the same
 * lifetime, on the --gpu/--vf asked for, and the owner records @recs still
 * give each vGPU to this domain?  Then
 * assign is a no-op (a configuration manager runs it on every pass).  An
 * mdev is found by its UUID: the hook may have moved it to another parent.
 */
static bool already_assigned(const struct vgpu_model *host, const struct vgpu_records *recs,
			     const struct vgpu_meta *m, const struct vgpu_request *req,
			     const struct vgpu_domain_opts *o)
{
	char want[VGPU_BDF_LEN];

	if (m->n_vgpus != req->n_profiles || m->per_start != o->per_start)
		return false;
	for (size_t i = 0; i < m->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *v = &m->vgpus[i];
		const struct vgpu_record *rec = vgpu_records_find_vgpu(recs, v->vf, v->mdev_uuid);

		/* the type asked is the one the record holds, by type ID */
		if (!rec || rec->type_id != v->type_id ||
		    !spec_is_type(host, v->gpu, req->profiles[i], rec->type_id, v->profile) ||
		    strcmp(rec->domain_uuid, m->owner) != 0)
			return false;
		if (req->vf && (vgpu_bdf_normalize(req->vf, want) < 0 || strcmp(want, v->vf)))
			return false;
		if (req->gpu && (vgpu_bdf_normalize(req->gpu, want) < 0 || strcmp(want, v->gpu)))
			return false;
	}
	return true;
}

/* A record of @id's UUID under another domain's name: that UUID is not @id's to use. */
static const struct vgpu_record *uuid_of_other(const struct vgpu_records *recs,
					       const struct identity *id)
{
	for (size_t i = 0; id->uuid[0] && i < recs->n; i++)
		if (strcmp(recs->v[i].domain_uuid, id->uuid) == 0 &&
		    strcmp(recs->v[i].domain, id->name) != 0)
			return &recs->v[i];
	return NULL;
}

/*
 * The domain has vGPUs of ours already: exactly those asked for is a no-op
 * (said; a file or stdout still gets the definition, libvirt's is left as it
 * is), others are refused.  Metadata another domain owns (a definition
 * copied as a template) is input, never an owner: it is dropped and the new
 * domain @id gets vGPUs of its own (*@dom is then @doc read again into
 * @fresh).  Return: 0 when it has none (now), 1 when assign has nothing to
 * do, or -errno with a message in @ctx.
 */
static int existing_vgpus(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
			  const struct vgpu_domain_info **dom, struct vgpu_domain_info *fresh,
			  const struct identity *id, const struct vgpu_request *req,
			  const struct vgpu_domain_opts *o, const struct vgpu_domain_target *t,
			  struct vgpu_outfile *of, char **xml, char **later)
{
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOPTR(model) host = NULL;
	const struct vgpu_record *other;
	const struct vgpu_meta *meta = &(*dom)->meta;
	char have[VGPU_PROFILE_MAX] = "";
	int r = (*dom)->meta_r;

	if (r == -ENOENT)
		return 0;
	if (r == 0 && strcmp(meta->owner, id->uuid) != 0) {
		vgpu_log(
			ctx, LOG_NOTICE,
			"the definition's %s%s belong%s to domain %s: not taken over; '%s' gets vGPUs of its own",
			meta->n_vgpus ? meta->vgpus[0].profile : "vGPU metadata",
			meta->n_vgpus > 1 ? " and more" : "", meta->n_vgpus > 1 ? "" : "s",
			meta->owner, id->name);
		/* the strip puts back what the other domain's assign replaced: read it anew */
		vgpu_domain_strip(doc, NULL);
		vgpu_domain_read(fs, doc, fresh);
		*dom = fresh;
		return 0;
	}
	/* the host's types, to compare by ID; without them, the records alone */
	if (r == 0 && vgpu_host_read(ctx, fs, VGPU_READ_TYPES, &host, &recs) < 0 &&
	    vgpu_records_read(ctx, fs, &recs) < 0)
		r = -EIO;
	if (r == 0 && (other = uuid_of_other(&recs, id)))
		return vgpu_error(
			ctx, -EEXIST,
			"UUID %s is domain '%s''s (it holds %s on %s), not '%s''s; give this domain a UUID of its own",
			id->uuid, other->domain, other->profile, other->parent, id->name);
	if (r == 0 && already_assigned(host, &recs, meta, req, o)) {
		const char *name = (*dom)->name;

		vgpu_log(ctx, LOG_NOTICE, "'%s' already has %s%s: nothing to do", name ? name : "",
			 meta->vgpus[0].profile, meta->n_vgpus > 1 ? " and more" : "");
		r = t->virt && !t->dry_run ? 0 : assign_put_domain(ctx, doc, t, of, xml, later);
		return r < 0 ? r : 1;
	}
	if (r == 0 && meta->n_vgpus)
		snprintf(have, sizeof(have), " (%s)", meta->vgpus[0].profile);
	return vgpu_error(ctx, -EEXIST,
			  "the domain already has other vGPUs from vgpuctl%s; release them first",
			  have);
}

/* The assign itself; *@made says whether it claimed anything (not a no-op, nothing kept). */
static int assign_locked(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
			 const struct vgpu_domain_info *dom, struct vgpu_request *req,
			 const struct vgpu_domain_opts *o, const struct vgpu_domain_target *t,
			 struct vgpu_outfile *of, char **xml, char **later, bool *made)
{
	VGPU_AUTOPTR(model) m = NULL;
	VGPU_AUTOPTR(plan) plan = NULL;
	VGPU_AUTORECORDS recs = { 0 };
	struct vgpu_gpu_locks gl = { .n = 0 };
	struct vgpu_domain_info fresh = { 0 };
	struct identity id;
	char own_name[sizeof(id.name)];
	const char *name;
	struct vgpu_txn txn;
	bool kept;
	int r;

	identity_of(dom, req, o, &id);
	/* the records get the name the definition has: --name, else its own, blanks stripped */
	snprintf(own_name, sizeof(own_name), "%s", id.name);
	name = vgpu_strip(own_name);
	r = existing_vgpus(ctx, fs, doc, &dom, &fresh, &id, req, o, t, of, xml, later);
	if (r == 0)
		r = check_guest(ctx, dom);
	if (r == 0)
		r = domain_vcpus(ctx, dom, req);
	/* a dry run writes nothing anywhere, not even the lock file */
	if (r == 0 && !t->dry_run)
		r = vgpu_sysfs_lock(ctx, fs, VGPU_ASSIGN_LOCK_WAIT_MS);
	if (r != 0) {
		vgpu_domain_info_clear(&fresh);
		return r < 0 ? r : 0;
	}
	vgpu_txn_init(&txn, ctx, fs, t->dry_run);
	if (t->ops)
		txn.ops = t->ops;
	r = vgpu_records_read(ctx, fs, &recs);
	if (r == 0) /* a writer drops what an expired migration held */
		r = vgpu_records_drop_expired(ctx, t->dry_run ? NULL : fs, &recs,
					      (long long)time(NULL));
	if (r >= 0)
		r = own_claims(&txn, fs, &recs, &id, req, o, &m, &plan);
	kept = plan != NULL;
	if (r == 0 && !kept)
		r = plan_domain(ctx, fs, t->virt, dom, true, true, req, o, &m, &plan);
	if (r == 0)
		r = check_unique(ctx, &recs, plan);
	if (r == 0) {
		struct vgpu_domain_opts keep = *o;

		keep.existing = true; /* release gives the definition back as it was */
		keep.read = dom;
		r = vgpu_domain_build(ctx, doc, plan, &keep);
	}
	if (r == 0)
		r = check_libvirt(ctx, t, plan);
	/* while the GPUs' catalogues are whole (before this assign uses VFs) */
	if (r == 0 && !t->dry_run && vgpu_catalog_save(ctx, fs, m) < 0)
		vgpu_warn(ctx, "%s", vgpu_ctx_error(ctx));
	/* kept: the records and vGPUs are there already */
	if (r == 0 && !kept) {
		r = claim_all(&txn, name, plan, o->per_start, !o->no_pin);
		*made = true;
	}
	/*
	 * The claims hold the VFs: every other run plans around them.  The host
	 * lock is for decisions, so it goes before waiting for a busy GPU, and
	 * the driver writes happen under their GPUs' locks, as the hook's do.
	 */
	for (size_t i = 0; r == 0 && i < plan->n_vgpus; i++)
		vgpu_gpu_locks_add(&gl, plan->vgpus[i].gpu);
	if (r == 0 && !t->dry_run) {
		vgpu_sysfs_unlock(fs);
		r = vgpu_gpu_locks_take(ctx, fs, &gl,
					vgpu_monotonic_ms() + VGPU_ASSIGN_LOCK_WAIT_MS);
	}
	if (r == 0 && !kept && !o->per_start)
		r = create_all(&txn, name, plan, !o->no_pin);
	if (r == 0)
		r = assign_put_domain(ctx, doc, t, of, xml, later);
	r = assign_finish(&txn, fs, r);
	vgpu_gpu_locks_release(&gl);
	vgpu_domain_info_clear(&fresh);
	return r;
}

int vgpu_assign(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
		const struct vgpu_domain_info *dom, struct vgpu_request *req,
		const struct vgpu_domain_opts *o, const struct vgpu_domain_target *t, char **xml)
{
	VGPU_AUTOFREE char *later = NULL;
	struct vgpu_outfile of;
	bool made = false;
	int r = assign_open_output(ctx, t, &of);

	*xml = NULL;
	if (r == 0)
		r = assign_locked(ctx, fs, doc, dom, req, o, t, &of, xml, &later, &made);
	/* a FIFO's reader takes its time with no lock held */
	if (r == 0 && later && vgpu_outfile_write(ctx, &of, later, strlen(later)) < 0) {
		VGPU_AUTOFREE char *why = vgpu_xstrdup(vgpu_ctx_error(ctx));
		const struct vgpu_domain_target back = { .ops = t->ops };
		VGPU_AUTOFREE char *junk = NULL;
		struct vgpu_domain_info now = { 0 };

		/* undo what this run made (never vGPUs the domain had before it) */
		if (made)
			vgpu_domain_read(fs, doc, &now); /* the definition as assign left it */
		if (!made)
			r = vgpu_error(ctx, -EPIPE, "%s", why);
		else if (vgpu_release(ctx, fs, doc, &now, NULL, &back, &junk) < 0)
			r = vgpu_error(ctx, -EIO, "%s; the assign could not be undone: run release",
				       why);
		else
			r = vgpu_error(ctx, -EPIPE, "%s; the assign is undone", why);
		vgpu_domain_info_clear(&now);
	}
	vgpu_outfile_close(&of);
	return r;
}
