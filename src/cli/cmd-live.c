// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl assign | release: the options and the report; the change itself
 * is the library's (vgpu_assign(), vgpu_release() in assign.c).  The domain
 * comes from libvirt (DOMAIN, -c URI) or a file (--from FILE, -o OUT).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "cleanup.h"
#include "domain-args.h"
#include "virt.h"

/* assign/release: the combination of DOMAIN, --from, -o, -c and --vgpu. */
static int check_args(struct cli *c, const char *cmd, struct xml_args *a)
{
	bool release = strcmp(cmd, "release") == 0;
	int e = cli_domain_source(c, cmd, a->domain, a->from, a->output, a->uri);

	if (e)
		return e;
	if (a->template)
		return cli_usage_error(c, cmd, "--template: %s works on an existing domain", cmd);
	if (release && (a->vgpu_list || a->dom.no_pin || a->dom.per_start))
		return cli_usage_error(c, cmd, "--vgpu, --no-pin and --per-start are for assign");
	if (release && a->req.mirror)
		return cli_usage_error(c, cmd, "--guest-topology is for assign");
	if (!release && !a->vgpu_list)
		return cli_usage_error(c, cmd, "--vgpu PROFILE is required");
	if (!a->from && !a->uri)
		a->uri = cli_default_uri();
	return 0;
}

/* One assign/release run: the domain, where it came from and goes to. */
struct live_run {
	struct cli *c;
	struct xml_args a;
	const char *cmd;
	struct vgpu_virt *virt; /* -c */
	bool active;
	struct _xmlDoc *doc;
	struct vgpu_domain_info dom; /* the domain as read, once */
	char name[VGPU_DOMAIN_NAME_MAX + 1];
};

static int fail(struct live_run *run)
{
	/* "assign vm1: ...", or "assign: ..." before the domain's name is known */
	cli_error(run->c, "%s%s%s: %s%s", run->cmd, run->name[0] ? " " : "", run->name,
		  vgpu_ctx_error(&run->c->ctx), xml_error_hint(&run->c->ctx));
	return EXIT_FAILURE;
}

/* Options, the domain (from libvirt or --from) and the host: all a run needs. */
static int start(struct live_run *run, int argc, char **argv)
{
	struct cli *c = run->c;
	VGPU_AUTOFREE char *old_xml = NULL;
	int r = xml_parse_args(c, run->cmd, argc, argv, &run->a);

	if (r == 0)
		r = check_args(c, run->cmd, &run->a);
	if (r)
		return r;
	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0)
		return fail(run);
	if (run->a.from) {
		r = xml_load_template(c, &run->a, &run->doc);
		if (r)
			return r;
	} else if (vgpu_virt_open_host(&c->ctx, run->a.uri, c->fs, &run->virt) < 0 ||
		   vgpu_virt_domain_xml(&c->ctx, run->virt, run->a.domain, &old_xml, &run->active) <
			   0 ||
		   vgpu_domain_parse(&c->ctx, old_xml, strlen(old_xml), run->a.domain, &run->doc) <
			   0) {
		return fail(run);
	}
	vgpu_domain_read(c->fs, run->doc, &run->dom);
	snprintf(run->name, sizeof(run->name), "%s", run->dom.name ? run->dom.name : "");
	return 0;
}

/* The result: the definition on stdout where it goes nowhere else; a running domain's note. */
static int report(struct live_run *run, int r, char *xml)
{
	struct cli *c = run->c;

	if (r < 0) {
		free(xml);
		return fail(run);
	}
	if (xml)
		fputs(xml, c->out);
	free(xml);
	if (vgpu_ctx_hints(&c->ctx) & VGPU_HINT_RELEASE_BY_UUID)
		vgpu_log(
			&c->ctx, LOG_NOTICE,
			"vGPUs recorded for a domain that is gone are released with a definition of its UUID: release --from FILE");
	if (run->active && !run->a.dry_run)
		vgpu_log(
			&c->ctx, LOG_NOTICE,
			"domain '%s' is running: the change is in its persistent definition and applies at its next start",
			run->name);
	return 0;
}

static void run_clear(struct live_run *run)
{
	vgpu_domain_info_clear(&run->dom);
	vgpu_xml_doc_free(run->doc);
	vgpu_virt_close(run->virt);
	free(run->a.vgpu_list);
	vgpu_fabric_clear(&run->a.fabric);
}

int cmd_assign(struct cli *c, int argc, char **argv)
{
	struct live_run run = { .c = c, .a = { .live = true }, .cmd = "assign" };
	int r = start(&run, argc, argv);

	if (!r && xml_fabric(c, &run.a) < 0)
		r = fail(&run);
	if (!r) {
		struct vgpu_domain_target t = { .virt = run.virt,
						.output = run.a.output,
						.dry_run = run.a.dry_run };
		char *xml = NULL;

		cli_catch_stops(); /* Ctrl-C undoes the claims and vGPUs made so far */
		r = vgpu_assign(&c->ctx, c->fs, run.doc, &run.dom, &run.a.req, &run.a.dom, &t,
				&xml);
		r = report(&run, r, xml);
	}
	run_clear(&run);
	cli_reraise_stop();
	return r;
}

int cmd_release(struct cli *c, int argc, char **argv)
{
	struct live_run run = { .c = c, .a = { .live = true }, .cmd = "release" };
	char vf[VGPU_BDF_LEN];
	int r;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (strcmp(argv[i], "--orphans") == 0 || strcmp(argv[i], "--stale") == 0 ||
		    strncmp(argv[i], "--clear-wedged", 14) == 0)
			return cmd_release_orphans(c, argc, argv);
	r = start(&run, argc, argv);

	if (!r && run.a.req.vf && vgpu_bdf_normalize(run.a.req.vf, vf) < 0)
		r = cli_usage_error(c, "release", "--vf '%s': not a PCI address", run.a.req.vf);
	if (!r) {
		struct vgpu_domain_target t = { .virt = run.virt,
						.output = run.a.output,
						.dry_run = run.a.dry_run };
		char *xml = NULL;

		cli_catch_stops();
		r = vgpu_release(&c->ctx, c->fs, run.doc, &run.dom, run.a.req.vf ? vf : NULL, &t,
				 &xml);
		r = report(&run, r, xml);
	}
	run_clear(&run);
	cli_reraise_stop();
	return r;
}
