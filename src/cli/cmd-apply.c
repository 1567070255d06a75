// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl apply -f FILE --config LABEL [--dry-run]: bring the host to a
 * configuration's state in the one order that works (MIG mode, VFs, GPU
 * instances, vGPUs, domains; apply.h says why).  vgpuctl assert: the same
 * reads, no change; every difference on one line, exit 1 when there is
 * any.  The work is the library's (vgpu_apply_host()); this file holds the
 * options and the report.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "apply.h"
#include "cli.h"

/* apply --dry-run: the plan ("would ...") on stdout, the rest as usual */
static void apply_log(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	if (priority == LOG_NOTICE && strncmp(msg, "would ", 6) == 0) {
		fprintf(c->out, "%s\n", msg + 6);
		return;
	}
	cli_log_cb(data, priority, msg);
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
			return -1;
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
	return 0;
}

static int apply_main(struct cli *c, int argc, char **argv, bool check)
{
	struct vgpu_apply_opts o = { .check = check,
				     .tools = { .nvidia_smi = VGPU_NVIDIA_SMI_DEFAULT,
						.sriov_manage = VGPU_SRIOV_MANAGE_DEFAULT } };
	const char *cmd = check ? "assert" : "apply";
	VGPU_AUTOSTRV diffs = { 0 };
	int r = parse_args(c, &o, argc, argv);

	if (r)
		return r;
	if (o.dry_run)
		c->ctx.log_fn = apply_log;
	o.nvml = cli_nvml(c);
	if ((!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) ||
	    vgpu_apply_host(&c->ctx, c->fs, &o, &diffs) < 0) {
		cli_error(c, "%s: %s", cmd, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < diffs.n; i++)
		fprintf(c->out, "%s\n", diffs.items[i]);
	if (check && diffs.n)
		return EXIT_DIFFERS; /* drift, told apart from "could not check" (1) */
	if (!check && diffs.n) {
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
