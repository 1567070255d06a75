// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl migrate-offer: the target's side of a live migration check.  It
 * reads the source's manifest on stdin and answers with the offer: this
 * host's versions (libvirt and QEMU from its libvirt connection), per vGPU
 * the GPU the capacity model would give or why none, and the decision this
 * host's hook would make at migrate begin (vgpu_mplan_make(): each vGPU's
 * landing, the node, CPUs and pins, or the hook's refusal;
 * docs/migration.md).  It writes nothing and reserves nothing.
 *
 * vgpuctl migrate-check DOMAIN --to URI: the source's side.  It reads the
 * domain from libvirt (its migratable XML and vgpuctl's metadata, the
 * versions, the max downtime; owner records only without a connection),
 * sends the manifest to the target's migrate-offer (--offer-command, or ssh
 * for a qemu+ssh URI), runs the checks and prints one line each, then the
 * verdict.
 *
 * vgpuctl migrate-xml DOMAIN --to URI: the domain XML the target's hook
 * would produce, from the offer's decision and retargeted as the hook does
 * (the same options), validated, with its changes on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "cli.h"
#include "cpuset.h"
#include "domxml.h"
#include "fabric-place.h"
#include "exec.h"
#include "json.h"
#include "migrate-manifest.h"
#include "migrate-plan.h"
#include "nvml.h"
#include "outfile.h"
#include "read-host.h"
#include "records.h"
#include "virt.h"

/*
 * The libvirt connection of a migrate command: -c URI, else the default
 * URI unless --sysroot names another tree (its libvirt is not this one's).
 * *v stays NULL when there is none; an explicit -c that fails is an error
 * (1), an implicit one that fails is said on stderr when @say.
 */
static int connect_libvirt(struct cli *c, const char *cmd, bool say, struct vgpu_virt **v)
{
	const char *uri = c->connect ? c->connect : c->sysroot ? NULL : cli_default_uri();

	*v = NULL;
	if (!uri)
		return 0;
	if (vgpu_virt_open_host(&c->ctx, uri, c->fs, v) == 0)
		return 0;
	if (c->connect) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (say)
		fprintf(c->err, "vgpuctl: %s: %s\n", cmd, vgpu_ctx_error(&c->ctx));
	return 0;
}

/* Does @p give a vGPU of @src another interface? */
static bool iface_changes(const struct vgpu_mig_host *src, const struct vgpu_mplan *p)
{
	for (size_t i = 0; i < p->n_landing && i < src->n_vgpus; i++)
		if (p->landing[i].iface != src->vgpus[i].iface)
			return true;
	return false;
}

/* An HGX board in vGPU mode: the free partition the hook's migrate begin would take. */
static int offer_partition(struct cli *c, const struct vgpu_mig_host *src,
			   const struct vgpu_records *live, const struct vgpu_fabric *fab,
			   struct vgpu_mplan_in *in)
{
	const char *profiles[VGPU_MAX_VGPUS];
	struct vgpu_place part;
	int e;

	for (size_t i = 0; i < src->n_vgpus && i < VGPU_MAX_VGPUS; i++)
		profiles[i] = src->vgpus[i].type_name;
	e = vgpu_fabric_place_vgpus(&c->ctx, c->model, live, src->uuid, profiles, in->n_vgpus, fab,
				    &part);
	if (e < 0)
		return e;
	in->partitioned = true;
	in->partition = part.id;
	for (size_t i = 0; i < part.ngpus && i < VGPU_MAX_VGPUS; i++)
		snprintf(in->part_gpus[i], sizeof(in->part_gpus[i]), "%s", part.gpu[i]);
	return 0;
}

/*
 * The hook's decision for the source's domain (vgpu_mplan_make(), as its
 * migrate begin would make it now): in @dst->plan, or why not in
 * @dst->plan_error.  An older source's manifest (no domain UUID) gets none.
 */
static void offer_plan(struct cli *c, const struct vgpu_mig_host *src, struct vgpu_mig_host *dst)
{
	struct vgpu_mplan_vgpu v[VGPU_MAX_VGPUS];
	struct vgpu_records live = { 0 };
	struct vgpu_mplan_in in = { .uuid = src->uuid,
				    .vgpus = v,
				    .n_vgpus = src->n_vgpus,
				    .vcpus = src->vcpus,
				    .memory_kib = src->memory_kib,
				    .pinned = src->pinned };
	long long now = (long long)time(NULL);
	struct vgpu_fabric fab = { .mode = VGPU_FABRIC_NONE };
	char why[512];

	if (!src->uuid[0] || !src->n_vgpus)
		return;
	/* what the hook's writer sees: expired incoming records dropped */
	live.v = vgpu_xcalloc(c->recs.n + 1, sizeof(*live.v));
	for (size_t i = 0; i < c->recs.n; i++)
		if (!vgpu_record_expired(&c->recs.v[i], now))
			live.v[live.n++] = c->recs.v[i];
	for (size_t i = 0; i < src->n_vgpus && i < VGPU_MAX_VGPUS; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i];
		bool mdev = s->iface == VGPU_IFACE_MDEV;

		v[i] = (struct vgpu_mplan_vgpu){
			.profile = s->type_name,
			.iface = s->iface,
			.mdev_uuid = mdev && s->mdev_uuid[0] ? s->mdev_uuid : NULL,
			.vf = !mdev && s->parent[0] ? s->parent : NULL,
			.display = s->display,
		};
	}
	dst->plan = vgpu_xcalloc(1, sizeof(*dst->plan));
	/* an HGX board in vGPU mode: the hook takes a free partition (Fabric Manager's) */
	if (cli_fabric(c, &fab) < 0 ||
	    (fab.mode == VGPU_FABRIC_VGPU && offer_partition(c, src, &live, &fab, &in) < 0)) {
		snprintf(dst->plan_error, sizeof(dst->plan_error), "%s", vgpu_ctx_error(&c->ctx));
		vgpu_ctx_clear(&c->ctx);
		vgpu_fabric_clear(&fab);
		free(live.v);
		return;
	}
	/* without an interface change the gate does not matter: libvirt is not loaded */
	in.iface_change = true;
	if (vgpu_mplan_make(&c->ctx, c->model, &live, &in, dst->plan) == 0 &&
	    !iface_changes(src, dst->plan)) {
		vgpu_fabric_clear(&fab);
		free(live.v);
		return;
	}
	vgpu_ctx_clear(&c->ctx);
	/* the hook's gate is this host's libvirt; the source's is in its manifest */
	in.iface_change = cli_iface_change_allowed(&c->ctx, why, sizeof(why));
	if (in.iface_change && src->libvirt < VGPU_MIG_MIN_LIBVIRT_CROSS) {
		in.iface_change = false;
		if (src->libvirt)
			snprintf(
				why, sizeof(why),
				"the source's libvirt is %lu.%lu.%lu, and an interface change needs libvirt 11.0 or later on both ends",
				src->libvirt / 1000000, src->libvirt / 1000 % 1000,
				src->libvirt % 1000);
		else
			snprintf(
				why, sizeof(why),
				"the source's libvirt version is unknown, and an interface change needs libvirt 11.0 or later on both ends");
	}
	in.iface_change_why = why;
	if (vgpu_mplan_make(&c->ctx, c->model, &live, &in, dst->plan) < 0) {
		snprintf(dst->plan_error, sizeof(dst->plan_error), "%s", vgpu_ctx_error(&c->ctx));
		vgpu_ctx_clear(&c->ctx);
	}
	vgpu_fabric_clear(&fab);
	free(live.v);
}

int cmd_migrate_offer(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "migrate-offer", .own = opts, .own_short = "h" };
	VGPU_AUTOFREE char *text = vgpu_xmalloc(VGPU_MIG_MANIFEST_MAX + 1);
	VGPU_AUTOFREE char *answer = NULL;
	VGPU_AUTOPTR(virt) v = NULL;
	struct vgpu_mig_host src = { 0 }, dst = { 0 };
	size_t len;
	int o, r;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		if (o == 'h')
			return CLI_HELP;
		return EXIT_USAGE; /* cli_getopt() said why */
	}
	if (optind < argc)
		return cli_usage_error(c, "migrate-offer", "unexpected argument '%s'",
				       argv[optind]);
	len = fread(text, 1, VGPU_MIG_MANIFEST_MAX + 1, stdin);
	if (ferror(stdin)) {
		cli_error(c, "migrate-offer: cannot read the manifest on stdin");
		return EXIT_FAILURE;
	}
	if (vgpu_mig_manifest_parse(&c->ctx, text, len, &src) < 0) {
		cli_error(c, "migrate-offer: %s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	r = cli_read_host(c, VGPU_READ_TYPES | VGPU_READ_TOPOLOGY | CLI_READ_NVML);
	if (r == 0)
		r = connect_libvirt(c, "migrate-offer", true, &v);
	if (r) {
		vgpu_mig_offer_clear(&src);
		return r;
	}
	vgpu_mig_offer(c->model, &c->recs, &src, &dst);
	vgpu_nvml_mig_target(c->nvml, c->model, &src, &dst);
	vgpu_host_driver_build(c->fs, &dst);
	offer_plan(c, &src, &dst);
	vgpu_host_versions(c->fs, &dst.kernel, dst.driver_version, sizeof(dst.driver_version));
	if (v && vgpu_virt_versions(&c->ctx, v, &dst.libvirt, &dst.qemu) < 0)
		fprintf(c->err, "vgpuctl: migrate-offer: %s\n", vgpu_ctx_error(&c->ctx));
	answer = vgpu_mig_manifest_format(&dst);
	fputs(answer, c->out);
	vgpu_mig_offer_clear(&dst);
	vgpu_mig_offer_clear(&src);
	return EXIT_SUCCESS;
}

#define OFFER_TIMEOUT_MS 60000

int cli_migrate_target_argv(struct cli *c, const char *name, const char *uri, const char *cmd,
			    const char *opt, const char *what, char *buf, size_t len,
			    const char **argv)
{
	size_t n = 0;
	char *save = NULL;

	if (cmd) {
		snprintf(buf, len, "%s", cmd);
		for (char *w = strtok_r(buf, " \t", &save); w && n < CLI_TARGET_WORDS;
		     w = strtok_r(NULL, " \t", &save))
			argv[n++] = w;
		if (!n)
			return cli_usage_error(c, name, "%s is empty", opt);
	} else if (!strncmp(uri, "qemu+ssh://", 11)) {
		char *host = buf, *port;

		snprintf(buf, len, "%s", uri + 11);
		host[strcspn(host, "/?")] = '\0';
		if (!*host || *host == '-')
			return cli_usage_error(c, name, "--to '%s': no host to reach", uri);
		argv[n++] = "ssh";
		argv[n++] = "-o";
		argv[n++] = "BatchMode=yes";
		/* HOST, HOST:PORT, [V6], [V6]:PORT; user@ stays with the host for ssh */
		port = strrchr(host, ':');
		if (port && strchr(host, '[') && (!strchr(host, ']') || port < strchr(host, ']')))
			port = NULL;
		if (port) {
			*port++ = '\0';
			argv[n++] = "-p";
			argv[n++] = port;
		}
		if (strchr(host, '[') && host[strlen(host) - 1] == ']') {
			host[strlen(host) - 1] = '\0';
			memmove(strchr(host, '['), strchr(host, '[') + 1,
				strlen(strchr(host, '[')));
		}
		argv[n++] = "--";
		argv[n++] = host;
		argv[n++] = "vgpuctl";
		argv[n++] = what;
	}
	argv[n] = NULL;
	return 0;
}

/* Ask the target; 0 with *dst filled, or -1 (said on stderr) when it gave no offer. */
static int ask_target(struct cli *c, const char *name, const char *const *argv,
		      const char *manifest, struct vgpu_mig_host *dst)
{
	struct vgpu_exec_result res;
	int r = vgpu_exec_input(&c->ctx, argv, manifest, strlen(manifest), OFFER_TIMEOUT_MS, &res);

	if (r == 0 && res.status != 0)
		r = vgpu_exec_failed(&c->ctx, argv, &res);
	if (r == 0)
		r = vgpu_mig_manifest_parse(&c->ctx, res.out, res.out_len, dst);
	if (r == 0 && !dst->reasons && dst->n_vgpus) {
		vgpu_mig_offer_clear(dst);
		r = vgpu_error(&c->ctx, -EINVAL, "the target's answer is a manifest, not an offer");
	}
	vgpu_exec_clear(&res);
	if (r < 0) {
		fprintf(c->err, "vgpuctl: %s: the target gave no offer: %s\n", name,
			vgpu_ctx_error(&c->ctx));
		return -1;
	}
	return 0;
}

/* The source domain as the migrate commands read it. */
struct source {
	struct vgpu_virt *virt; /* NULL: no connection, the owner records speak */
	struct _xmlDoc *doc; /* its migratable XML; NULL without a connection */
	struct vgpu_meta meta; /* our metadata in it (n_vgpus 0: none) */
	struct vgpu_mig_domain facts;
};

static void source_clear(struct source *s)
{
	vgpu_meta_clear(&s->meta);
	vgpu_xml_doc_free(s->doc);
	vgpu_virt_close(s->virt);
	memset(s, 0, sizeof(*s));
}

/*
 * The source's side of @domain's vGPUs as @recs name them: their boards, vgpu_params,
 * NVML's metadata and runtime state, and whether the driver build migrates.
 */
static void source_of(struct cli *c, const struct vgpu_records *recs, const char *domain,
		      struct vgpu_mig_host *src)
{
	vgpu_mig_manifest_of(c->model, recs, domain, src);
	vgpu_host_vgpu_params(c->fs, recs, domain, src);
	vgpu_nvml_mig_source(c->nvml, recs, domain, src);
	vgpu_host_driver_build(c->fs, src);
}

/*
 * The vgpu_params set our metadata keeps (`params`) is what the vGPUs take at
 * their next open, the target's at its prepare too: a blocker on there counts
 * as on, whatever the running vGPU's file reads.
 */
static void source_params(const struct vgpu_params *set, struct vgpu_mig_host *src)
{
	for (size_t k = 0; k < set->n; k++) {
		const struct vgpu_param *p = &set->v[k];

		if (!vgpu_param_blocks_migration(p))
			continue;
		for (size_t i = 0; i < src->n_vgpus; i++) {
			struct vgpu_mig_vgpu *v = &src->vgpus[i];

			if (strcmp(p->key, "enable_uvm") == 0)
				v->enable_uvm = VGPU_ON;
			else if (strcmp(p->key, "enable_debugging") == 0)
				v->enable_debugging = VGPU_ON;
			else
				v->enable_profiling = VGPU_ON;
		}
	}
}

/*
 * The shared plan's keys of the manifest (migrate-plan.h): the domain's UUID,
 * size and pinning, and per vGPU its source VF and display, as the target's
 * hook reads them from the migratable XML.  0 or -errno (said in the ctx).
 */
static int source_plan_facts(struct cli *c, const struct source *s, struct vgpu_mig_host *src)
{
	VGPU_AUTOFREE char *uuid = vgpu_domain_field(s->doc, "uuid");

	if (uuid && !vgpu_uuid_normalize(uuid, src->uuid))
		src->uuid[0] = '\0';
	src->pinned = s->meta.pinned;
	for (size_t i = 0; i < src->n_vgpus && i < s->meta.n_vgpus; i++) {
		const struct vgpu_meta_vgpu *m = &s->meta.vgpus[i];

		snprintf(src->vgpus[i].parent, sizeof(src->vgpus[i].parent), "%s", m->vf);
		src->vgpus[i].display = vgpu_domain_hostdev_display(s->doc, m);
	}
	return cli_migrate_size(&c->ctx, s->doc, &src->vcpus, &src->memory_kib) < 0;
}

/*
 * Fill @src, the manifest of @domain: from libvirt when there is a
 * connection (its migratable XML, our metadata in it, the versions, the
 * max downtime), else from the owner records (said on stderr).  @need_xml:
 * a connection is required.  Return: 0 or an exit status (said).
 */
static int read_source(struct cli *c, const char *cmd, const char *domain, bool need_xml,
		       struct source *s, struct vgpu_mig_host *src)
{
	VGPU_AUTOFREE char *xml = NULL;
	struct vgpu_records recs = { 0 };
	unsigned long long downtime = 0;
	bool active = false;
	int r = connect_libvirt(c, cmd, !need_xml, &s->virt);

	if (r)
		return r;
	if (!s->virt) {
		if (need_xml) {
			cli_error(c, "%s: the domain is read from libvirt: give -c URI%s", cmd,
				  c->sysroot ? " with --sysroot" : "");
			return EXIT_FAILURE;
		}
		fprintf(c->err,
			"vgpuctl: %s: no libvirt connection%s: the domain's vGPUs come from its owner records; qemu-blockers is UNKNOWN\n",
			cmd, c->sysroot ? " (--sysroot without -c)" : "");
		source_of(c, &c->recs, domain, src);
		return 0;
	}
	if (vgpu_virt_versions(&c->ctx, s->virt, &src->libvirt, &src->qemu) < 0 ||
	    vgpu_virt_domain_migratable(&c->ctx, s->virt, domain, &xml, &active, &downtime) < 0 ||
	    vgpu_domain_parse(&c->ctx, xml, strlen(xml), "the domain's migratable XML", &s->doc) <
		    0) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	r = vgpu_domain_read_meta(&c->ctx, s->doc, &s->meta);
	if (r == -EINVAL) {
		cli_error(c, "%s: domain '%s': %s", cmd, domain, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (r < 0)
		memset(&s->meta, 0, sizeof(s->meta)); /* no vGPU of ours: topology says so */
	/* the metadata's vGPUs as records, so the manifest is built as from records */
	recs.v = vgpu_xcalloc(s->meta.n_vgpus + 1, sizeof(*recs.v));
	for (size_t i = 0; i < s->meta.n_vgpus; i++) {
		const struct vgpu_meta_vgpu *m = &s->meta.vgpus[i];
		struct vgpu_record *rec = &recs.v[recs.n++];

		snprintf(rec->domain, sizeof(rec->domain), "%s", domain);
		snprintf(rec->domain_uuid, sizeof(rec->domain_uuid), "%s", s->meta.owner);
		snprintf(rec->gpu, sizeof(rec->gpu), "%s", m->gpu);
		snprintf(rec->parent, sizeof(rec->parent), "%s", m->vf);
		snprintf(rec->profile, sizeof(rec->profile), "%s", m->profile);
		snprintf(rec->mdev_uuid, sizeof(rec->mdev_uuid), "%s", m->mdev_uuid);
		rec->iface = m->iface;
		rec->type_id = m->type_id;
	}
	source_of(c, &recs, domain, src);
	source_params(&s->meta.params, src);
	free(recs.v);
	r = source_plan_facts(c, s, src);
	if (r) {
		cli_error(c, "%s: domain '%s': %s", cmd, domain, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	vgpu_domain_mig_facts(s->doc, s->meta.n_vgpus ? &s->meta : NULL, &s->facts);
	src->domain = &s->facts;
	/* not running, or a driver that does not say: QEMU starts with its default */
	src->max_downtime_ms = downtime ? downtime : VGPU_MIG_QEMU_DEFAULT_DOWNTIME_MS;
	src->max_downtime_default = !downtime;
	if (!active)
		fprintf(c->err,
			"vgpuctl: %s: domain '%s' does not run: a live migration needs it running (its max downtime is QEMU's default until then)\n",
			cmd, domain);
	return 0;
}

static const char *verdict_name(enum vgpu_mig_verdict v)
{
	return v == VGPU_MIG_GO ? "go" : v == VGPU_MIG_NO_GO ? "no-go" : "unknown";
}

/* One line per check, `STATUS ID what: source vs target — next`, then the verdict. */
static void print_text(struct cli *c, const struct vgpu_mig_results *res,
		       enum vgpu_mig_verdict verdict)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct vgpu_mig_result *x = &res->items[i];

		fprintf(c->out, "%s %s %s: %s vs %s%s%s\n", vgpu_mig_status_name(x->status), x->id,
			x->what, x->source, x->target, x->next[0] ? " \u2014 " : "", x->next);
	}
	fprintf(c->out, "%s\n", verdict_name(verdict));
}

/* {"checks": [{"id", "status", "what", "source", "target", "next"}, ...], "verdict": ...} */
static void print_json(struct cli *c, const struct vgpu_mig_results *res,
		       enum vgpu_mig_verdict verdict)
{
	fputs("{\"checks\": [", c->out);
	for (size_t i = 0; i < res->n; i++) {
		const struct vgpu_mig_result *x = &res->items[i];
		const char *keys[] = { "id", "status", "what", "source", "target", "next" };
		const char *vals[] = { x->id,	  vgpu_mig_status_name(x->status),
				       x->what,	  x->source,
				       x->target, x->next };

		fputs(i ? ",\n  {" : "\n  {", c->out);
		for (size_t k = 0; k < 6; k++) {
			fprintf(c->out, "%s\"%s\": ", k ? ", " : "", keys[k]);
			cli_json_str(c->out, vals[k]);
		}
		fputs("}", c->out);
	}
	fprintf(c->out, "\n],\n\"verdict\": \"%s\"}\n", verdict_name(verdict));
}

/* Every migrate command's options, each with the CLI_MIG_* that brings it (0: all). */
static const struct mig_opt {
	struct option o;
	unsigned kind;
} mig_opts[] = {
	{ { "to", required_argument, NULL, 't' }, 0 },
	{ { "offer-command", required_argument, NULL, 'O' }, 0 },
	{ { "postcopy", no_argument, NULL, 'P' }, CLI_MIG_POSTCOPY },
	{ { "bandwidth", required_argument, NULL, 'B' }, CLI_MIG_POSTCOPY },
	{ { "output", required_argument, NULL, 'o' }, CLI_MIG_OUTPUT },
	{ { "target-command", required_argument, NULL, 'T' }, CLI_MIG_RUN },
	{ { "migrate-uri", required_argument, NULL, 'U' }, CLI_MIG_RUN },
	{ { "force", no_argument, NULL, 'f' }, CLI_MIG_RUN },
	{ { "help", no_argument, NULL, 'h' }, 0 },
};

/* One option of @a's command (cli_getopt()'s answer @o): 0, CLI_HELP or EXIT_USAGE. */
static int mig_opt(struct cli *c, const char *name, int o, struct cli_mig_args *a)
{
	char *end;

	switch (o) {
	case 't':
		a->to = optarg;
		return 0;
	case 'O':
		a->cmd = optarg;
		return 0;
	case 'o':
		a->output = optarg;
		return 0;
	case 'P':
		a->postcopy = true;
		return 0;
	case 'B':
		a->bandwidth = strtoul(optarg, &end, 10);
		if (*end || !a->bandwidth || a->bandwidth > 1000000000UL || *optarg == '-')
			return cli_usage_error(
				c, name, "--bandwidth '%s': MiB/s, a whole number above 0", optarg);
		return 0;
	case 'T':
		a->target_cmd = optarg;
		return 0;
	case 'U':
		a->migrate_uri = optarg;
		return 0;
	case 'f':
		a->force = true;
		return 0;
	case 'h':
		return CLI_HELP;
	default:
		return EXIT_USAGE; /* cli_getopt() said why */
	}
}

int cli_migrate_args(struct cli *c, const char *name, unsigned opts, int argc, char **argv,
		     struct cli_mig_args *a)
{
	struct option own[ARRAY_SIZE(mig_opts) + 1];
	struct cli_opts go = { .cmd = name,
			       .own = own,
			       .own_short = opts & CLI_MIG_OUTPUT ? "ho:" : "h" };
	size_t n = 0;
	int o, r;

	for (size_t i = 0; i < ARRAY_SIZE(mig_opts); i++)
		if (!mig_opts[i].kind || (mig_opts[i].kind & opts))
			own[n++] = mig_opts[i].o;
	memset(&own[n], 0, sizeof(own[n]));
	while ((o = cli_getopt(c, &go, argc, argv)) != -1)
		if ((r = mig_opt(c, name, o, a)) != 0)
			return r;
	if (optind >= argc)
		return cli_usage_error(c, name, "which domain? (DOMAIN: a name or UUID)");
	a->domain = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, name, "unexpected argument '%s'", argv[optind]);
	if (!a->to)
		return cli_usage_error(c, name, "where to? (--to URI)");
	return 0;
}

/* The options migrate-check and migrate-xml share, and what they read. */
struct mig_args {
	struct cli_mig_args o;
	const char *target_argv[CLI_TARGET_WORDS + 1];
	char *buf;
};

static int parse_args(struct cli *c, const char *name, bool xml, int argc, char **argv,
		      struct mig_args *a)
{
	size_t len;
	int r = cli_migrate_args(c, name, xml ? CLI_MIG_OUTPUT : CLI_MIG_POSTCOPY, argc, argv,
				 &a->o);

	if (r)
		return r;
	len = strlen(a->o.to) + (a->o.cmd ? strlen(a->o.cmd) : 0) + 1;
	a->buf = vgpu_xmalloc(len);
	return cli_migrate_target_argv(c, name, a->o.to, a->o.cmd, "--offer-command",
				       "migrate-offer", a->buf, len, a->target_argv);
}

int cmd_migrate_check(struct cli *c, int argc, char **argv)
{
	return cli_migrate_check(c, argc, argv, NULL);
}

int cli_migrate_check(struct cli *c, int argc, char **argv, struct vgpu_mig_results *keep)
{
	struct mig_args a = { 0 };
	VGPU_AUTOFREE char *manifest = NULL;
	struct source s = { 0 };
	struct vgpu_mig_host src = { 0 }, dst = { 0 };
	struct vgpu_mig_results res;
	enum vgpu_mig_verdict verdict;
	bool asked = false;
	int r = parse_args(c, "migrate-check", false, argc, argv, &a);

	if (r == 0)
		r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r == 0)
		r = read_source(c, "migrate-check", a.o.domain, false, &s, &src);
	if (r) {
		free(a.buf);
		vgpu_mig_offer_clear(&src);
		source_clear(&s);
		return r;
	}
	src.postcopy = a.o.postcopy;
	src.bandwidth_mib_s = a.o.bandwidth;
	vgpu_host_versions(c->fs, &src.kernel, src.driver_version, sizeof(src.driver_version));
	manifest = vgpu_mig_manifest_format(&src);
	if (!a.target_argv[0])
		fprintf(c->err,
			"vgpuctl: migrate-check: no way to reach '%s' (a qemu+ssh:// URI, or --offer-command): its checks are UNKNOWN\n",
			a.o.to);
	else
		asked = ask_target(c, "migrate-check", a.target_argv, manifest, &dst) == 0;
	vgpu_mig_check(&src, asked ? &dst : NULL, &res);
	verdict = vgpu_mig_verdict_of(&res);
	if (c->json)
		print_json(c, &res, verdict);
	else
		print_text(c, &res, verdict);
	if (keep) /* vgpuctl migrate reads them */
		*keep = res;
	else
		vgpu_mig_results_free(&res);
	vgpu_mig_offer_clear(&src);
	vgpu_mig_offer_clear(&dst);
	source_clear(&s);
	free(a.buf);
	return verdict == VGPU_MIG_GO ? EXIT_SUCCESS : verdict == VGPU_MIG_NO_GO ? 3 : EXIT_FAILURE;
}

/* "vGPU 1 (A30-4C): FIELD OLD -> NEW" on stderr when they differ. */
static void say_change(struct cli *c, size_t i, const char *profile, const char *field,
		       const char *old, const char *new)
{
	if (strcasecmp(old, new))
		fprintf(c->err, "vGPU %zu (%s): %s %s -> %s\n", i + 1, profile, field,
			*old ? old : "-", *new ? new : "-");
}

/*
 * The offer's landings (the target hook's decision) as the retarget takes
 * them, a new mdev UUID made where the offer names "" (as the hook makes
 * one), @fresh[i] set for it; 0 or an exit status (said).
 */
static int offer_choices(struct cli *c, const struct source *s, const struct vgpu_mig_host *dst,
			 struct vgpu_choice *to, bool *fresh)
{
	if (dst->n_vgpus != s->meta.n_vgpus) {
		cli_error(c, "migrate-xml: the target answered for %zu vGPUs, the domain has %zu",
			  dst->n_vgpus, s->meta.n_vgpus);
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < dst->n_vgpus; i++) {
		const struct vgpu_meta_vgpu *m = &s->meta.vgpus[i];

		if (dst->reasons[i] != VGPU_CAP_OK) {
			cli_error(c,
				  "migrate-xml: the target has no room for vGPU %zu (%s): %s: %s",
				  i + 1, m->profile, vgpu_cap_reason_code(dst->reasons[i]),
				  vgpu_cap_reason_text(dst->reasons[i]));
			return EXIT_FAILURE;
		}
	}
	if (dst->plan_error[0]) {
		cli_error(c, "migrate-xml: the target's hook would refuse: %s", dst->plan_error);
		return EXIT_FAILURE;
	}
	if (!dst->plan || dst->plan->n_landing != dst->n_vgpus) {
		cli_error(
			c,
			"migrate-xml: the target names no landing for the domain's vGPUs: run the same vgpuctl on both hosts");
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < dst->n_vgpus; i++) {
		const struct vgpu_mplan_landing *l = &dst->plan->landing[i];

		snprintf(to[i].gpu, sizeof(to[i].gpu), "%s", l->gpu);
		snprintf(to[i].parent, sizeof(to[i].parent), "%s", l->parent);
		snprintf(to[i].mdev_uuid, sizeof(to[i].mdev_uuid), "%s", l->mdev_uuid);
		to[i].iface = l->iface;
		to[i].type_id = l->type_id;
		to[i].backing = s->meta.vgpus[i].backing;
		fresh[i] = l->iface == VGPU_IFACE_MDEV && !l->mdev_uuid[0];
		if (fresh[i] && vgpu_uuid_generate(&c->ctx, to[i].mdev_uuid) < 0) {
			cli_error(c, "migrate-xml: %s", vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
	}
	return 0;
}

/* One line per host-side field the rewrite changed, on stderr. */
static void summarize(struct cli *c, const struct source *s, const struct vgpu_choice *to,
		      const bool *fresh, const struct vgpu_cpuset *before, struct _xmlDoc *doc)
{
	struct vgpu_cpuset after;
	char b[VGPU_CPULIST_LEN], a[VGPU_CPULIST_LEN];

	for (size_t i = 0; i < s->meta.n_vgpus; i++) {
		const struct vgpu_meta_vgpu *m = &s->meta.vgpus[i];
		bool mdev = m->iface == VGPU_IFACE_MDEV;

		say_change(c, i, m->profile, "GPU", m->gpu, to[i].gpu);
		say_change(c, i, m->profile, mdev ? "parent" : "VF", m->vf, to[i].parent);
		if (mdev && to[i].iface == VGPU_IFACE_MDEV)
			say_change(c, i, m->profile, "mdev UUID", m->mdev_uuid, to[i].mdev_uuid);
		if (m->iface != to[i].iface)
			fprintf(c->err, "vGPU %zu (%s): interface %s -> %s\n", i + 1, m->profile,
				vgpu_iface_str(m->iface), vgpu_iface_str(to[i].iface));
		if (fresh[i])
			fprintf(c->err,
				"vGPU %zu (%s): the mdev UUID is new (the source's is taken there), made here as the target's hook would make one\n",
				i + 1, m->profile);
	}
	vgpu_cpuset_zero(&after);
	vgpu_domain_doc_pinned_cpus(doc, &after);
	if (!(vgpu_cpuset_subset(before, &after) && vgpu_cpuset_subset(&after, before)))
		fprintf(c->err, "host CPUs: %s -> %s\n", vgpu_cpulist_format(before, b, sizeof(b)),
			vgpu_cpulist_format(&after, a, sizeof(a)));
}

int cmd_migrate_xml(struct cli *c, int argc, char **argv)
{
	struct mig_args a = { 0 };
	VGPU_AUTOFREE char *manifest = NULL, *out = NULL;
	struct source s = { 0 };
	struct vgpu_mig_host src = { 0 }, dst = { 0 };
	struct vgpu_choice to[VGPU_MAX_VGPUS];
	bool fresh[VGPU_MAX_VGPUS] = { false };
	struct vgpu_cpuset before;
	struct vgpu_outfile of = { .fd = -1, .dirfd = -1 };
	int r = parse_args(c, "migrate-xml", true, argc, argv, &a), changed = 0;

	memset(to, 0, sizeof(to));
	if (r == 0 && !a.target_argv[0]) {
		cli_error(
			c,
			"migrate-xml: no way to reach '%s': a qemu+ssh:// URI, or --offer-command CMD",
			a.o.to);
		r = EXIT_FAILURE;
	}
	/* the output file is checked before anything else is asked */
	if (r == 0 && a.o.output && vgpu_outfile_open(&c->ctx, a.o.output, &of) < 0) {
		cli_error(c, "migrate-xml: %s", vgpu_ctx_error(&c->ctx));
		r = EXIT_FAILURE;
	}
	if (r == 0)
		r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r == 0)
		r = read_source(c, "migrate-xml", a.o.domain, true, &s, &src);
	if (r == 0 && !s.meta.n_vgpus) {
		cli_error(
			c,
			"migrate-xml: domain '%s' has no vGPU in vgpuctl's metadata: nothing to retarget",
			a.o.domain);
		r = EXIT_FAILURE;
	}
	if (r == 0) {
		vgpu_host_versions(c->fs, &src.kernel, src.driver_version,
				   sizeof(src.driver_version));
		manifest = vgpu_mig_manifest_format(&src);
		r = ask_target(c, "migrate-xml", a.target_argv, manifest, &dst) ? EXIT_FAILURE : 0;
	}
	if (r == 0)
		r = offer_choices(c, &s, &dst, to, fresh);
	if (r == 0) {
		/* as the target's hook retargets (cmd-hook.c migrate_print) */
		const struct vgpu_retarget_opts o = {
			.iface_change = src.libvirt >= VGPU_MIG_MIN_LIBVIRT_CROSS &&
					dst.libvirt >= VGPU_MIG_MIN_LIBVIRT_CROSS,
			.node = dst.plan->node,
			.cpus = &dst.plan->cpus,
			.pins = dst.plan->pins,
			.n_pins = dst.plan->n_pins
		};

		vgpu_cpuset_zero(&before);
		vgpu_domain_doc_pinned_cpus(s.doc, &before);
		changed = vgpu_domain_retarget(&c->ctx, s.doc, &s.meta, to, s.meta.n_vgpus, &o);
		if (changed < 0 || vgpu_domain_format(&c->ctx, s.doc, &out) < 0) {
			cli_error(c, "migrate-xml: %s", vgpu_ctx_error(&c->ctx));
			r = EXIT_FAILURE;
		}
	}
	if (r == 0) {
		int v = vgpu_virt_validate(&c->ctx, out);

		if (v == -ENOENT) {
			fprintf(c->err, "vgpuctl: migrate-xml: warning: %s\n",
				vgpu_ctx_error(&c->ctx));
		} else if (v < 0) {
			cli_error(c, "migrate-xml: %s", vgpu_ctx_error(&c->ctx));
			r = EXIT_FAILURE;
		}
	}
	if (r == 0) {
		summarize(c, &s, to, fresh, &before, s.doc);
		if (!changed)
			fprintf(c->err, "the target gives the same devices: nothing changes\n");
		if (a.o.output) {
			if (vgpu_outfile_write(&c->ctx, &of, out, strlen(out)) < 0) {
				cli_error(c, "migrate-xml: %s", vgpu_ctx_error(&c->ctx));
				r = EXIT_FAILURE;
			}
		} else {
			fputs(out, c->out);
		}
	}
	vgpu_outfile_close(&of);
	vgpu_mig_offer_clear(&src);
	vgpu_mig_offer_clear(&dst);
	source_clear(&s);
	free(a.buf);
	return r;
}
