// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl assign | release: create or free a domain's vGPUs and edit its
 * definition, as one transaction under the host lock.  The domain comes
 * from libvirt (DOMAIN, -c URI) or a file (--from FILE, -o OUT).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "cmd-xml.h"
#include "catalog.h"
#include "live.h"
#include "txn.h"
#include "records.h"
#include "virt.h"

#define LOCK_WAIT_MS 30000
/* libvirt accepts an unmanaged VF on a variant driver (nvidia) from 10.0.0 */
#define LIBVIRT_VENDOR_VFIO 10000000UL

int live_check_args(struct cli *c, const char *cmd, struct xml_args *a)
{
	bool release = strcmp(cmd, "release") == 0;

	if (a->from && a->domain)
		return cli_usage_error(c, cmd, "give DOMAIN or --from FILE, not both");
	if (!a->from && !a->domain)
		return cli_usage_error(c, cmd, "DOMAIN (or --from FILE) is required");
	if (a->output && !a->from)
		return cli_usage_error(c, cmd, "-o OUT goes with --from FILE");
	if (a->from && a->uri)
		return cli_usage_error(c, cmd, "--from FILE works without libvirt: drop -c");
	if (a->template)
		return cli_usage_error(c, cmd, "--template: %s works on an existing domain", cmd);
	if (release && (a->vgpu_list || a->dom.no_pin || a->dom.per_start))
		return cli_usage_error(c, cmd, "--vgpu, --no-pin and --per-start are for assign");
	if (!release && !a->vgpu_list)
		return cli_usage_error(c, cmd, "--vgpu PROFILE is required");
	if (a->domain && vgpu_domain_name_check(a->domain))
		return cli_usage_error(c, cmd, "'%s': not a domain name (%s)", a->domain,
				       vgpu_domain_name_check(a->domain));
	if (!a->from && !a->uri)
		a->uri = cli_default_uri();
	return 0;
}

/* One assign/release run: the domain, where it came from and goes to. */
struct live_run {
	struct cli *c;
	struct xml_args *a;
	const char *cmd;
	struct vgpu_virt *virt; /* -c */
	char *old_xml; /* the definition before, for the undo of a redefine */
	bool active;
	struct _xmlDoc *doc;
	char name[VGPU_DOMAIN_NAME_MAX + 1];
	char uuid[VGPU_UUID_LEN];
	struct vgpu_txn txn;
};

static int fail(struct live_run *run)
{
	/* "assign vm1: ...", or "assign: ..." before the domain's name is known */
	cli_error(run->c, "%s%s%s: %s", run->cmd, run->name[0] ? " " : "", run->name,
		  vgpu_ctx_error(&run->c->ctx));
	return EXIT_FAILURE;
}

static int load_domain(struct live_run *run)
{
	struct cli *c = run->c;
	VGPU_AUTOFREE char *name = NULL;
	int r;

	if (run->a->from) {
		r = xml_load_template(c, run->a, &run->doc);
		if (r)
			return r;
	} else {
		if (vgpu_virt_open(&c->ctx, run->a->uri, &run->virt) < 0 ||
		    vgpu_virt_domain_xml(&c->ctx, run->virt, run->a->domain, &run->old_xml,
					 &run->active) < 0 ||
		    vgpu_domain_parse(&c->ctx, run->old_xml, strlen(run->old_xml), run->a->domain,
				      &run->doc) < 0)
			return fail(run);
	}
	name = vgpu_domain_field(run->doc, "name");
	snprintf(run->name, sizeof(run->name), "%s", name ? name : "");
	return 0;
}

/* Host and lock: everything after this sees what other vgpuctl runs did. */
static int lock_host(struct live_run *run)
{
	struct cli *c = run->c;

	if ((!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) ||
	    vgpu_sysfs_lock(&c->ctx, c->fs, LOCK_WAIT_MS) < 0)
		return fail(run);
	vgpu_txn_init(&run->txn, &c->ctx, c->fs, run->a->dry_run);
	return 0;
}

/* The last step: the new definition goes where the old one came from. */
static int put_domain(struct live_run *run)
{
	struct cli *c = run->c;
	VGPU_AUTOFREE char *xml = NULL;

	if (vgpu_domain_format(&c->ctx, run->doc, &xml) < 0)
		return -1;
	if (run->a->dry_run || (!run->virt && !run->a->output)) {
		fputs(xml, c->out);
		return 0;
	}
	if (run->a->output)
		return vgpu_file_replace(&c->ctx, run->a->output, xml, strlen(xml));
	return vgpu_virt_define(&c->ctx, run->virt, xml);
}

static int finish(struct live_run *run, int r)
{
	struct cli *c = run->c;

	if (r < 0) {
		vgpu_txn_rollback(&run->txn);
		return fail(run);
	}
	vgpu_txn_commit(&run->txn);
	if (run->active && !run->a->dry_run)
		vgpu_log(&c->ctx, LOG_NOTICE,
			 "domain '%s' is running: the change is in its persistent definition "
			 "and applies at its next start",
			 run->name);
	return 0;
}

static void run_clear(struct live_run *run)
{
	vgpu_txn_commit(&run->txn);
	vgpu_xml_doc_free(run->doc);
	vgpu_virt_close(run->virt);
	free(run->old_xml);
	free(run->a->vgpu_list);
}

/* ---- assign --------------------------------------------------------------- */

/* --vcpus defaults to the domain's own <vcpu>. */
static int domain_vcpus(struct live_run *run)
{
	VGPU_AUTOFREE char *v = NULL;
	long n;

	if (run->a->vcpus_arg)
		return 0;
	v = vgpu_domain_field(run->doc, "vcpu");
	if (!v || vgpu_parse_long(v, &n) < 0 || n < 1 || n > 4096)
		return vgpu_error(&run->c->ctx, -EINVAL,
				  "the domain has no usable <vcpu>; give --vcpus N");
	run->a->req.vcpus = (unsigned)n;
	return 0;
}

static int check_libvirt(struct live_run *run, const struct vgpu_meta *m)
{
	unsigned long ver;
	bool vfio = false;

	for (size_t i = 0; i < m->n_vgpus; i++)
		vfio |= m->vgpus[i].iface == VGPU_IFACE_VENDOR_VFIO;
	if (!run->virt || !vfio)
		return 0;
	if (vgpu_virt_version(&run->c->ctx, run->virt, &ver) < 0)
		return -EIO;
	if (ver < LIBVIRT_VENDOR_VFIO)
		return vgpu_error(
			&run->c->ctx, -ENOTSUP,
			"libvirt %lu.%lu.%lu refuses a vendor-specific VFIO vGPU "
			"(an unmanaged VF bound to nvidia) at start; it needs libvirt 10.0 "
			"or later, so the domain was not changed",
			ver / 1000000, ver / 1000 % 1000, ver % 1000);
	return 0;
}

static void record_from(struct vgpu_record *r, const struct live_run *run,
			const struct vgpu_meta *m, const struct vgpu_meta_vgpu *v)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->domain, sizeof(r->domain), "%s", run->name);
	snprintf(r->domain_uuid, sizeof(r->domain_uuid), "%s", m->owner);
	snprintf(r->gpu, sizeof(r->gpu), "%s", v->gpu);
	snprintf(r->parent, sizeof(r->parent), "%s", v->vf);
	r->iface = v->iface;
	r->type_id = v->type_id;
	snprintf(r->profile, sizeof(r->profile), "%s", v->profile);
	snprintf(r->mdev_uuid, sizeof(r->mdev_uuid), "%s", v->mdev_uuid);
	r->lifetime = m->per_start ? VGPU_LIFETIME_PER_START : VGPU_LIFETIME_PERSISTENT;
}

/* Claim each vGPU with its record, then create it (unless --per-start). */
static int assign_vgpus(struct live_run *run, const struct vgpu_meta *m)
{
	for (size_t i = 0; i < m->n_vgpus; i++) {
		struct vgpu_record rec;
		int r;

		record_from(&rec, run, m, &m->vgpus[i]);
		r = vgpu_txn_record_put(&run->txn, &rec, NULL);
		if (r == 0 && !m->per_start)
			r = vgpu_txn_create(&run->txn, &rec);
		if (r < 0)
			return r;
	}
	return 0;
}

int cmd_assign(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { .live = true };
	struct live_run run = { .c = c, .a = &a, .cmd = "assign" };
	VGPU_AUTOPTR(plan) plan = NULL;
	struct vgpu_meta m = { 0 };
	int r;

	r = xml_parse_args(c, "assign", argc, argv, &a);
	if (!r)
		r = load_domain(&run);
	if (!r && vgpu_domain_read_meta(&c->ctx, run.doc, &m) != -ENOENT) {
		vgpu_meta_clear(&m);
		vgpu_error(&c->ctx, -EEXIST,
			   "the domain already has vGPUs from vgpuctl; release them first");
		r = fail(&run);
	}
	if (!r && domain_vcpus(&run) < 0)
		r = fail(&run);
	if (!r)
		r = lock_host(&run);
	if (!r)
		r = xml_make_plan(c, &a, run.doc, &plan);
	if (!r) {
		int e = vgpu_domain_build(&c->ctx, run.doc, plan, &a.dom);

		if (e == 0)
			e = vgpu_domain_read_meta(&c->ctx, run.doc, &m);
		if (e == 0)
			e = check_libvirt(&run, &m);
		/* while the GPUs' catalogues are whole (before this assign uses VFs) */
		if (e == 0 && !a.dry_run && vgpu_catalog_save(&c->ctx, c->fs, c->model) < 0)
			vgpu_warn(&c->ctx, "%s", vgpu_ctx_error(&c->ctx));
		if (e == 0)
			e = assign_vgpus(&run, &m);
		if (e == 0)
			e = put_domain(&run);
		r = finish(&run, e);
	}
	vgpu_meta_clear(&m);
	run_clear(&run);
	return r;
}

/* ---- release -------------------------------------------------------------- */

/* Free and forget what the records say this domain owns (on --vf only, if given). */
static int release_vgpus(struct live_run *run, const struct vgpu_records *recs, const char *vf)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *rec = &recs->v[i];
		int r;

		if (strcmp(rec->domain_uuid, run->uuid) != 0 || (vf && strcmp(rec->parent, vf)))
			continue;
		r = vgpu_txn_destroy(&run->txn, rec);
		if (r == 0)
			r = vgpu_txn_record_drop(&run->txn, rec);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Our metadata names a vGPU whose record is gone or another domain's: say so, free nothing. */
static void warn_foreign(struct live_run *run, const struct vgpu_records *recs,
			 const struct vgpu_meta *m, const char *vf)
{
	for (size_t i = 0; i < m->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *v = &m->vgpus[i];
		const struct vgpu_record *rec =
			vgpu_records_find(recs, v->vf, v->mdev_uuid[0] ? v->mdev_uuid : NULL);

		if (vf && strcmp(v->vf, vf) != 0)
			continue;
		if (!rec)
			vgpu_warn(&run->c->ctx, "%s on %s has no owner record; not freed",
				  v->profile, v->vf);
		else if (strcmp(rec->domain_uuid, run->uuid) != 0)
			vgpu_warn(&run->c->ctx,
				  "%s on %s belongs to domain '%s' (%s) now; not freed", v->profile,
				  v->vf, rec->domain, rec->domain_uuid);
	}
}

int cmd_release(struct cli *c, int argc, char **argv)
{
	struct xml_args a = { .live = true };
	struct live_run run = { .c = c, .a = &a, .cmd = "release" };
	VGPU_AUTORECORDS recs = { 0 };
	VGPU_AUTOFREE char *uuid = NULL;
	char vf[VGPU_BDF_LEN];
	struct vgpu_meta m = { 0 };
	int r;

	r = xml_parse_args(c, "release", argc, argv, &a);
	if (!r && a.req.vf && vgpu_bdf_normalize(a.req.vf, vf) < 0)
		r = cli_usage_error(c, "release", "--vf '%s': not a PCI address", a.req.vf);
	if (!r)
		r = load_domain(&run);
	if (!r) {
		uuid = vgpu_domain_field(run.doc, "uuid");
		if (!uuid || !vgpu_uuid_normalize(uuid, run.uuid)) {
			vgpu_error(&c->ctx, -EINVAL, "the domain has no usable <uuid>");
			r = fail(&run);
		}
	}
	if (!r && vgpu_domain_read_meta(&c->ctx, run.doc, &m) == -EINVAL)
		r = fail(&run);
	if (!r)
		r = lock_host(&run);
	if (!r && vgpu_records_read(&c->ctx, c->fs, &recs) < 0)
		r = fail(&run);
	if (!r) {
		int e;

		warn_foreign(&run, &recs, &m, a.req.vf ? vf : NULL);
		e = release_vgpus(&run, &recs, a.req.vf ? vf : NULL);
		if (e == 0) {
			vgpu_domain_strip(run.doc, a.req.vf ? vf : NULL);
			e = put_domain(&run);
		}
		r = finish(&run, e);
	}
	vgpu_meta_clear(&m);
	run_clear(&run);
	return r;
}
