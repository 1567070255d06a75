// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook DOMAIN OPERATION SUB-OPERATION EXTRA: the part of the libvirt
 * qemu hook that runs once the library's cheap pass (called by cmd_hook(),
 * hook-filter.c, no libxml2) asked for the hardened parse.  It parses the
 * XML the filter read from stdin (untrusted: size cap, no entities, no
 * network) and calls the same library entry with the parsed domain, which
 * decides under the lock (hook.c).  Never connects to libvirt.  Writes to
 * stdout only for migrate begin, and only a definition that changed:
 * libvirt takes what it prints as the domain XML there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cleanup.h"
#include "cli.h"
#include "domxml.h"
#include "hook.h"
#include "virt.h"

/* Errors and warnings: stderr (libvirt shows it to whoever started the VM) and syslog. */
static void hook_log(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	syslog(priority, "%s", msg);
	if (priority <= LOG_WARNING)
		fprintf(c->err, "vgpuctl: warning: %s\n", msg);
}

/* The domain's UUID and hostdevs from the XML the filter read from stdin: the hardened parser. */
static int parse_domain(struct vgpu_ctx *ctx, const struct cli *c, char uuid[VGPU_UUID_LEN],
			struct vgpu_strv *mdevs, struct vgpu_strv *vfs, struct _xmlDoc **out)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *field = NULL;

	if (vgpu_domain_parse(ctx, c->hook_xml ? c->hook_xml : "", c->hook_xml_len,
			      "the domain XML on stdin", &doc) < 0)
		return -EINVAL;
	field = vgpu_domain_field(doc, "uuid");
	if (!field || !vgpu_uuid_normalize(field, uuid))
		return vgpu_error(ctx, -EINVAL, "the domain XML on stdin has no usable <uuid>");
	vgpu_domain_hostdevs(doc, mdevs, vfs);
	*out = vgpu_steal_ptr(&doc);
	return 0;
}

#define LIBVIRT_IFACE_CHANGE 11000000ul /* mdev <-> VF migrates from libvirt 11.0 on */

bool cli_iface_change_allowed(struct vgpu_ctx *ctx, char *why, size_t len)
{
	unsigned long v = 0;

	if (vgpu_virt_local_version(ctx, &v) < 0) {
		snprintf(
			why, len,
			"this host's libvirt version is unknown (%s), and an interface change needs libvirt 11.0 or later on both ends",
			vgpu_ctx_error(ctx));
		vgpu_ctx_clear(ctx);
		return false;
	}
	snprintf(
		why, len,
		"this host's libvirt is %lu.%lu.%lu, and an interface change needs libvirt 11.0 or later on both ends",
		v / 1000000, v / 1000 % 1000, v % 1000);
	return v >= LIBVIRT_IFACE_CHANGE;
}

int cli_migrate_size(struct vgpu_ctx *ctx, struct _xmlDoc *doc, unsigned *vcpus,
		     uint64_t *memory_kib)
{
	VGPU_AUTOFREE char *vcpu = vgpu_domain_field(doc, "vcpu");
	long n = 1;

	/* every <vcpu> slot is pinned (the offline spare siblings too): all get a CPU there */
	if (vcpu && (vgpu_parse_long(vcpu, &n) < 0 || n < 1 || n > VGPU_MAX_CPUS))
		return vgpu_error(ctx, -EINVAL, "the domain's <vcpu> '%s' is not a vCPU count",
				  vcpu);
	*vcpus = (unsigned)n;
	if (vgpu_domain_memory_kib(ctx, doc, memory_kib) < 0) {
		vgpu_ctx_clear(ctx); /* not checked against the node */
		*memory_kib = 0;
	}
	return 0;
}

/* migrate: what the hook needs of our metadata and the definition (@m read from @doc). */
static int migrate_inputs(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_meta *m,
			  struct vgpu_hook_vgpu *v, struct vgpu_hook_domain *d)
{
	int e = cli_migrate_size(ctx, doc, &d->vcpus, &d->memory_kib);

	if (e < 0)
		return e;
	for (size_t i = 0; i < m->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *mv = &m->vgpus[i];

		v[i] = (struct vgpu_hook_vgpu){
			.profile = mv->profile,
			.iface = mv->iface,
			.mdev_uuid = mv->iface == VGPU_IFACE_MDEV ? mv->mdev_uuid : NULL,
			.vf = mv->iface == VGPU_IFACE_MDEV ? NULL : mv->vf,
			.display = vgpu_domain_hostdev_display(doc, mv),
		};
	}
	d->vgpus = v;
	d->n_vgpus = m->n_vgpus;
	d->per_start = m->per_start;
	d->pinned = m->pinned;
	return 0;
}

/*
 * migrate, after the locked pass chose and recorded: the definition with the
 * hostdevs (and, pinned by us, the pinning) pointed here, on @c->out, only
 * when something changed.  Printing nothing leaves libvirt's XML as it is.
 */
static int migrate_print(struct cli *c, struct _xmlDoc *doc, const struct vgpu_meta *m,
			 const struct vgpu_hook_domain *d, const struct vgpu_hook_result *res)
{
	struct vgpu_choice to[VGPU_MAX_VGPUS];
	const struct vgpu_retarget_opts o = { .iface_change = d->iface_change,
					      .node = res->node,
					      .cpus = &res->cpus,
					      .pins = res->pins,
					      .n_pins = res->n_pins };
	VGPU_AUTOFREE char *text = NULL;
	int r;

	memset(to, 0, sizeof(to));
	for (size_t i = 0; i < res->n_landing; i++) {
		const struct vgpu_hook_landing *l = &res->landing[i];

		snprintf(to[i].gpu, sizeof(to[i].gpu), "%s", l->gpu);
		snprintf(to[i].parent, sizeof(to[i].parent), "%s", l->parent);
		snprintf(to[i].mdev_uuid, sizeof(to[i].mdev_uuid), "%s", l->mdev_uuid);
		to[i].iface = l->iface;
		to[i].type_id = l->type_id;
	}
	r = vgpu_domain_retarget(&c->ctx, doc, m, to, res->n_landing, &o);
	if (r > 0)
		r = vgpu_domain_format(&c->ctx, doc, &text);
	if (r < 0)
		return r;
	if (text && (fputs(text, c->out) < 0 || fflush(c->out) != 0))
		return vgpu_error(&c->ctx, -EIO, "cannot write the domain XML on stdout");
	return 0;
}

/* migrate begin on the destination: choose, record incoming, print the rewritten XML. */
static int migrate(struct cli *c, struct _xmlDoc *doc, struct vgpu_hook_domain *d,
		   const struct vgpu_hook_input *in)
{
	struct vgpu_hook_vgpu v[VGPU_MAX_VGPUS];
	struct vgpu_meta m = { .n_vgpus = 0 };
	char why[512];
	VGPU_AUTOFREE struct vgpu_hook_result *res = vgpu_xcalloc(1, sizeof(*res));
	int e = vgpu_domain_read_meta(&c->ctx, doc, &m);

	if (e == -ENOENT) { /* the namespace is named, but not as our metadata: not ours */
		vgpu_ctx_clear(&c->ctx);
		return 0;
	}
	if (e == 0)
		e = migrate_inputs(&c->ctx, doc, &m, v, d);
	if (e == 0 && m.n_vgpus) {
		d->iface_change = cli_iface_change_allowed(&c->ctx, why, sizeof(why));
		d->iface_change_why = why;
	}
	if (e == 0 && !c->fs)
		e = vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs);
	if (e == 0)
		e = vgpu_hook_run(&c->ctx, c->fs, VGPU_HOOK_MIGRATE, in, res);
	if (e == 0 && res->n_landing && (e = migrate_print(c, doc, &m, d, res)) < 0) {
		/* libvirt gets no definition: the migration will not come, its records go */
		struct vgpu_ctx undo;

		vgpu_ctx_init(&undo, NULL, NULL);
		if (vgpu_hook_migrate_abandon(&undo, c->fs, in->name, d->uuid,
					      VGPU_HOOK_LOCK_WAIT_MS) < 0)
			vgpu_error_append(&c->ctx,
					  "its incoming records stay until their deadline");
		vgpu_ctx_clear(&undo);
	}
	vgpu_meta_clear(&m);
	return e;
}

int cmd_hook_live(struct cli *c, int argc, char **argv)
{
	VGPU_AUTOSTRV mdevs = { 0 };
	VGPU_AUTOSTRV vfs = { 0 };
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	char uuid[VGPU_UUID_LEN];
	struct vgpu_hook_domain d = { .uuid = uuid, .mdevs = &mdevs, .vfs = &vfs };
	const struct vgpu_hook_input in = { .name = argv[1],
					    .parsed = &d,
					    .lock_wait_ms = VGPU_HOOK_LOCK_WAIT_MS,
					    .reason = argc > 4 ? argv[4] : NULL, /* EXTRA */
					    .nvfm = c->nvfm_path,
					    .nvml = c->nvml_path };
	const char *op = argv[2];
	struct vgpu_hook_result res;
	enum vgpu_hook_phase phase;
	VGPU_AUTOFREE struct vgpu_params *params = vgpu_xcalloc(1, sizeof(*params));
	bool has_params = false;
	int e = -EINVAL;

	openlog("vgpuctl", LOG_PID, LOG_DAEMON);
	c->ctx.log_fn = hook_log;
	c->ctx.log_data = c;
	/* cmd_hook() (the core) got here only for a phase of ours, with stdin read */
	if (!vgpu_hook_phase_of(argv[1], op, argc > 3 ? argv[3] : NULL, &phase))
		vgpu_error(&c->ctx, -EINVAL, "not a call the hook acts on");
	else
		e = parse_domain(&c->ctx, c, uuid, &mdevs, &vfs, &doc);
	/* prepare: the vgpu_params set our metadata keeps, written after the creates */
	if (e == 0 && phase == VGPU_HOOK_PREPARE) {
		e = vgpu_domain_read_params(&c->ctx, doc, params, &has_params);
		d.params = has_params ? params : NULL;
	}
	if (e == 0 && phase == VGPU_HOOK_MIGRATE) {
		e = migrate(c, doc, &d, &in);
	} else {
		if (e == 0 && !c->fs)
			e = vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs);
		if (e == 0)
			e = vgpu_hook_run(&c->ctx, c->fs, phase, &in, &res);
	}
	if (e < 0) {
		const char *msg = vgpu_ctx_error(&c->ctx);

		syslog(LOG_ERR, "%s %s: %s", op, in.name, msg);
		cli_error(c, "%s %s: %s", op, in.name, msg);
	}
	closelog();
	return e < 0 ? EXIT_FAILURE : 0;
}
