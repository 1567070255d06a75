// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl apply -f FILE --config LABEL [--dry-run]: bring the host to a
 * configuration's state in the one order that works (MIG mode, VFs, GPU
 * instances, vGPUs, domains; apply.h says why).  vgpuctl assert: the same
 * reads, no change; every difference on one line, exit 3 when there is
 * any.  The work is the library's (vgpu_apply_host(): the differences come
 * back as data, each the step that would fix it); this file holds the
 * options and the report.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "cleanup.h"
#include "cli.h"
#include "exec.h"
#include "runs.h"

/* apply --dry-run: progress ("vGPUs: GPU X: creating 2 of ...") would read as done */
static void dry_run_log(void *data, int priority, const char *msg)
{
	if (priority == LOG_INFO)
		return;
	cli_log_cb(data, priority, msg);
}

/* apply --dry-run: the plan, one step a line, as a person reads it */
static void print_steps(struct cli *c, const struct vgpu_steps *steps)
{
	for (size_t i = 0; i < steps->n; i++)
		fprintf(c->out, "%s\n", steps->items[i].text);
}

/*
 * apply --dry-run --json: {"steps": [...]}, empty when the host matches;
 * each step's fields: "kind" is the text's first word (run, write, create,
 * start, turn, ...), "text" the line the text output prints; "step" what it
 * does (mig-on, vfs-on, gi-create, vgpu-create, domain-start, ...), "gpu",
 * "object" (gpu, gpu-instance, vgpu, record, domain), "profile", "parent",
 * "domain", "path" (the program run or the file written), "value" (what is
 * written) and "count" (0: all there are), null where a step has none.
 */
static int print_steps_json(struct cli *c, const struct vgpu_steps *steps)
{
	static const struct col cols[] = {
		{ "KIND", "kind", COL_STR, 0 },		  { "TEXT", "text", COL_STR, 0 },
		{ "STEP", "step", COL_STR, 0 },		  { "GPU", "gpu", COL_STR, 0 },
		{ "OBJECT", "object", COL_STR, 0 },	  { "PROFILE", "profile", COL_STR, 0 },
		{ "PARENT", "parent", COL_STR, 0 },	  { "DOMAIN", "domain", COL_STR, 0 },
		{ "PATH", "path", COL_STR, 0 },		  { "VALUE", "value", COL_STR, 0 },
		{ "COUNT", "count", COL_NUM, COL_RIGHT },
	};
	struct cli_table *t = cli_table(c, "steps", cols, ARRAY_SIZE(cols));

	for (size_t i = 0; i < steps->n; i++) {
		const struct vgpu_step *s = &steps->items[i];
		struct cli_line *ln = cli_line_new(t);

		cli_cell_str(ln, 0, vgpu_step_verb(s));
		cli_cell_str(ln, 1, s->text);
		cli_cell_str(ln, 2, vgpu_step_kind_name(s->kind));
		cli_cell_str(ln, 3, s->gpu);
		cli_cell_str(ln, 4, vgpu_step_object_name(s->object));
		cli_cell_str(ln, 5, s->profile);
		cli_cell_str(ln, 6, s->parent);
		cli_cell_str(ln, 7, s->domain);
		cli_cell_str(ln, 8, s->path);
		cli_cell_str(ln, 9, s->value);
		cli_cell_num(ln, 10, (long)s->count, true);
	}
	return cli_table_print(c, t);
}

/*
 * What a difference of assert is, for machines, from the step that would
 * fix it: "mig-mode", "vfs", "gpu-instances", "vgpus", "domain".
 */
static const char *diff_kind(const struct vgpu_step *s)
{
	switch (s->object) {
	case VGPU_OBJECT_GPU:
		return s->kind == VGPU_STEP_VFS_ON || s->kind == VGPU_STEP_VFS_OFF ? "vfs" :
										     "mig-mode";
	case VGPU_OBJECT_GPU_INSTANCE:
		return "gpu-instances";
	case VGPU_OBJECT_VGPU:
		return "vgpus";
	case VGPU_OBJECT_DOMAIN:
		return "domain";
	default:
		return "other";
	}
}

/*
 * assert --json: {"differences": [...]}, empty when the host matches; each
 * difference's fields: "kind" what differs (mig-mode, vfs, gpu-instances,
 * vgpus, domain), "text" the line the text output prints, "step" the step
 * that would fix it (as apply --dry-run --json names it: mig-on, vfs-on,
 * gi-create, gi-destroy, vgpu-create, vgpu-destroy, domain-start), "gpu",
 * "object", "profile", "domain", "count" (0: all there are), "want" what
 * the config wants and "have" what the host has; null where none.
 */
static int print_diffs_json(struct cli *c, const struct vgpu_steps *diffs)
{
	static const struct col cols[] = {
		{ "KIND", "kind", COL_STR, 0 },	    { "TEXT", "text", COL_STR, 0 },
		{ "STEP", "step", COL_STR, 0 },	    { "GPU", "gpu", COL_STR, 0 },
		{ "OBJECT", "object", COL_STR, 0 }, { "PROFILE", "profile", COL_STR, 0 },
		{ "DOMAIN", "domain", COL_STR, 0 }, { "COUNT", "count", COL_NUM, COL_RIGHT },
		{ "WANT", "want", COL_STR, 0 },	    { "HAVE", "have", COL_STR, 0 },
	};
	struct cli_table *t = cli_table(c, "differences", cols, ARRAY_SIZE(cols));

	for (size_t i = 0; i < diffs->n; i++) {
		const struct vgpu_step *s = &diffs->items[i];
		struct cli_line *ln = cli_line_new(t);

		cli_cell_str(ln, 0, diff_kind(s));
		cli_cell_str(ln, 1, s->text);
		cli_cell_str(ln, 2, vgpu_step_kind_name(s->kind));
		cli_cell_str(ln, 3, s->gpu);
		cli_cell_str(ln, 4, vgpu_step_object_name(s->object));
		cli_cell_str(ln, 5, s->profile);
		cli_cell_str(ln, 6, s->domain);
		cli_cell_num(ln, 7, (long)s->count, true);
		cli_cell_str(ln, 8, s->want);
		cli_cell_str(ln, 9, s->have);
	}
	return cli_table_print(c, t);
}

static int parse_args(struct cli *c, struct vgpu_apply_opts *o, int argc, char **argv)
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
	const char *cmd = o->check ? "assert" : "apply";
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "+f:l:c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			o->file = optarg;
			break;
		case 'l':
			o->label = optarg;
			break;
		case 'c':
			o->uri = optarg;
			break;
		case OPT_DRY:
			if (o->check)
				return cli_usage_error(c, cmd, "--dry-run: assert changes nothing");
			o->dry_run = true;
			break;
		case OPT_NVSMI:
			o->tools.nvidia_smi = optarg;
			break;
		case OPT_SRIOV:
			o->tools.sriov_manage = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return cli_bad_option(c, cmd, opts, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(c, cmd, "unexpected argument '%s'", argv[optind]);
	if (!o->file || !o->label)
		return cli_usage_error(c, cmd, "-f FILE and --config LABEL are required");
	if (!o->uri)
		o->uri = c->connect ? c->connect : cli_default_uri();
	o->tools.dry_run = o->dry_run;
	/* a terminal gets each step's number and time; the boot journal the plain lines */
	o->progress = !o->dry_run && !o->check && isatty(fileno(c->err));
	return 0;
}

/*
 * The result for `vgpuctl metrics` (runs.h): not for a dry run, which
 * changes and checks nothing, and not for a label the config does not have
 * (or a config that cannot be read): a mistyped --config would leave its
 * record, and an alert on it, for good, since no later run has that label
 * to replace it.  A run that cannot keep it (not root, a
 * read-only /var) still did its work: said, and its exit status stands.
 */
static void keep_result(struct cli *c, const struct vgpu_apply_opts *o, int exit_code,
			size_t differences)
{
	struct vgpu_run r = { .exit_code = exit_code,
			      .time = (int64_t)time(NULL),
			      .differences = (long)differences };

	if (o->dry_run || !*o->has_label)
		return;
	if (o->owned) {
		r.vgpus = *o->owned; /* moved: the run frees it */
		*o->owned = (struct vgpu_strv){ 0 };
	}
	snprintf(r.command, sizeof(r.command), "%s", o->check ? "assert" : "apply");
	snprintf(r.label, sizeof(r.label), "%s", o->label);
	if (vgpu_runs_save(&c->ctx, c->fs, &r, o->file) < 0)
		vgpu_log(&c->ctx, LOG_NOTICE,
			 "%s: the result is not kept for 'vgpuctl metrics': %s", r.command,
			 vgpu_ctx_error(&c->ctx));
	vgpu_strv_clear(&r.vgpus);
}

static int apply_main(struct cli *c, int argc, char **argv, bool check)
{
	struct vgpu_apply_opts o = { .check = check,
				     .tools = { .nvidia_smi = VGPU_NVIDIA_SMI_DEFAULT,
						.sriov_manage = VGPU_SRIOV_MANAGE_DEFAULT } };
	const char *cmd = check ? "assert" : "apply";
	struct vgpu_steps diffs = { 0 }; /* assert: what differs; apply: what is left */
	VGPU_AUTOSTRV owned = { 0 }; /* apply: the config's vGPUs, kept with the result */
	struct vgpu_steps steps = { 0 }; /* --dry-run: the plan, printed at the end */
	bool has_label = false;
	size_t n_diffs;
	int r = parse_args(c, &o, argc, argv);

	if (r)
		return r;
	if (c->json && !check && !o.dry_run)
		return cli_usage_error(c, cmd,
				       "--json: the plan of --dry-run, or assert's differences");
	if (!check && !o.dry_run)
		o.owned = &owned;
	o.has_label = &has_label;
	if (o.dry_run) {
		o.steps = &steps;
		c->ctx.log_fn = dry_run_log;
	}
	o.nvml = cli_nvml(c);
	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	cli_catch_stops();
	if (vgpu_apply_host(&c->ctx, c->fs, &o, &diffs) < 0) {
		c->ctx.log_fn = cli_log_cb;
		/* the steps up to the failure, then why it stops (JSON: nothing) */
		if (!c->json)
			print_steps(c, &steps);
		vgpu_steps_clear(&steps);
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		keep_result(c, &o, EXIT_FAILURE, diffs.n);
		vgpu_steps_clear(&diffs);
		cli_reraise_stop();
		return EXIT_FAILURE;
	}
	c->ctx.log_fn = cli_log_cb;
	keep_result(c, &o, diffs.n ? (check ? EXIT_DIFFERS : EXIT_FAILURE) : EXIT_SUCCESS, diffs.n);
	if (c->json)
		r = check ? print_diffs_json(c, &diffs) : print_steps_json(c, &steps);
	else
		print_steps(c, &steps);
	vgpu_steps_clear(&steps);
	if (r) {
		vgpu_steps_clear(&diffs);
		return r;
	}
	for (size_t i = 0; !c->json && i < diffs.n; i++)
		fprintf(c->out, "%s\n", diffs.items[i].text);
	n_diffs = diffs.n;
	vgpu_steps_clear(&diffs);
	if (check && n_diffs)
		return EXIT_DIFFERS; /* drift, told apart from "could not check" (1) */
	if (!check && n_diffs) {
		cli_error(c, "apply: the host still differs from '%s' (above)", o.label);
		return EXIT_FAILURE;
	}
	if (!o.dry_run)
		vgpu_log(&c->ctx, LOG_INFO, "%s: the host matches '%s' of %s", cmd, o.label,
			 o.file);
	return EXIT_SUCCESS;
}

int cmd_apply(struct cli *c, int argc, char **argv)
{
	return apply_main(c, argc, argv, false);
}

int cmd_assert(struct cli *c, int argc, char **argv)
{
	return apply_main(c, argc, argv, true);
}
