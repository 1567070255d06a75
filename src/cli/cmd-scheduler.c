// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl scheduler [GPU...]: the time-sliced vGPU scheduler per GPU, live
 * (NVML, else the kernel log), configured (RmPVMRL in modprobe.d) and
 * pending (configured, not live: a driver reload applies it).
 * vgpuctl scheduler --set POLICY [--timeslice MS] [GPU...]: vgpuctl's one
 * modprobe.d file.  The decisions are scheduler.c's and scheduler-host.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "scheduler-host.h"

static const struct col sched_cols[] = {
	{ "GPU", "gpu", COL_STR, false },
	{ "LIVE", "live", COL_STR, false },
	{ "LIVE-FROM", "live_from", COL_STR, false },
	{ "CONFIGURED", "configured", COL_STR, false },
	{ "RMPVMRL", "rmpvmrl", COL_STR, false },
	{ "SOURCE", "source", COL_STR, false },
	{ "PENDING", "pending", COL_STR, false },
	{ "MIXED-SIZE", "mixed_size", COL_STR, COL_JSON_ONLY },
};

static const char *const sched_desc[] = {
	"PCI address of the GPU",
	"the scheduler the driver runs now: policy, time slice or adaptive factor/frequency",
	"who said: nvml, or the kernel log's scheduler lines",
	"the scheduler the next driver load gives (best-effort: the driver's default)",
	"the RmPVMRL value configured",
	"the modprobe.d file that sets it (default: none does)",
	"yes: configured but not live; a driver reload or reboot applies it",
	"the GPU's mixed-size mode (NVML): fixed share is refused there",
};

const struct cli_columns cli_scheduler_columns = CLI_COLUMNS(
	sched_cols, sched_desc,
	"Per-device RmPVMRL (NVreg_RegistryDwordsPerDevice) beats the global one (NVreg_RegistryDwords).");

static const char *tri(enum vgpu_tristate t)
{
	return t == VGPU_ON ? "yes" : t == VGPU_OFF ? "no" : NULL;
}

static int show(struct cli *c, const struct vgpu_gpu *const *only, size_t n_only)
{
	VGPU_AUTOFREE struct vgpu_sched_row *rows = NULL;
	struct cli_table *tb;
	bool pending = false;
	int rc;

	if (vgpu_sched_rows(&c->ctx, c->fs, cli_nvml(c), c->model, &rows) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	tb = cli_table(c, "scheduler", sched_cols, ARRAY_SIZE(sched_cols));
	for (size_t i = 0; i < c->model->n_gpus; i++) {
		const struct vgpu_sched_row *w = &rows[i];
		struct cli_line *ln;
		char buf[64];
		bool hit = !n_only;

		for (size_t k = 0; k < n_only; k++)
			hit |= only[k] == &c->model->gpus[i];
		if (!hit)
			continue;
		ln = cli_line_new(tb);
		cli_cell_str(ln, 0, w->gpu);
		vgpu_sched_text(&w->live, buf, sizeof(buf));
		cli_cell_str(ln, 1, *buf ? buf : NULL);
		cli_cell_str(ln, 2, w->live_from);
		vgpu_sched_text(&w->conf, buf, sizeof(buf));
		cli_cell_str(ln, 3, buf);
		if (w->conf_set) {
			snprintf(buf, sizeof(buf), "0x%0*x", w->conf_value > 0xff ? 8 : 2,
				 w->conf_value);
			cli_cell_str(ln, 4, buf);
		}
		cli_cell_str(ln, 5, w->conf_set ? w->conf_from : "default");
		cli_cell_str(ln, 6, tri(w->pending));
		cli_cell_str(ln, 7, tri(w->hetero));
		pending |= w->pending == VGPU_ON;
	}
	rc = cli_table_print(c, tb);
	if (rc == EXIT_SUCCESS && pending && !c->json)
		fprintf(c->out,
			"Pending: the configured scheduler takes effect when the nvidia module is loaded again (a driver reload or reboot).\n");
	return rc;
}

static int parse_uint(struct cli *c, const char *opt, const char *arg, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || !v || v > max)
		return cli_usage_error(c, "scheduler", "%s '%s': a number from 1 to %u", opt, arg,
				       max);
	*out = (unsigned)v;
	return 0;
}

static int set(struct cli *c, const struct vgpu_sched *s, const struct vgpu_gpu *const *only,
	       size_t n_only, bool dry_run)
{
	VGPU_AUTOFREE struct vgpu_sched_want *w = vgpu_xcalloc(n_only + 1, sizeof(*w));
	VGPU_AUTOFREE char *text = NULL;
	bool changed = false;

	for (size_t i = 0; i < n_only; i++)
		w[i] = (struct vgpu_sched_want){ .gpu = only[i]->addr, .s = *s };
	if (!n_only)
		w[0].s = *s; /* every GPU */
	if (vgpu_sched_set(&c->ctx, c->fs, c->model, w, n_only ? n_only : 1, dry_run, &text,
			   &changed) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (c->json) {
		fprintf(c->out, "{\"file\": ");
		cli_json_str(c->out, "/" VGPU_SCHED_DIR "/" VGPU_SCHED_FILE);
		fprintf(c->out, ", \"changed\": %s, \"written\": %s, \"text\": ",
			changed ? "true" : "false", changed && !dry_run ? "true" : "false");
		cli_json_str(c->out, text);
		fprintf(c->out, "}\n");
	} else if (dry_run) {
		fputs(text, c->out);
	} else {
		fprintf(c->out, "/%s/%s: %s\n", VGPU_SCHED_DIR, VGPU_SCHED_FILE,
			changed ?
				"written; the scheduler changes when the nvidia module is loaded again (a driver reload or reboot)" :
				"unchanged");
	}
	return EXIT_SUCCESS;
}

int cmd_scheduler(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "set", required_argument, NULL, 's' },
		{ "timeslice", required_argument, NULL, 't' },
		{ "average-factor", required_argument, NULL, 'a' },
		{ "frequency", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "scheduler", .own = opts, .own_short = "h", .table = true };
	VGPU_AUTOFREE const struct vgpu_gpu **only = NULL;
	const char *policy = NULL;
	struct vgpu_sched s = { 0 };
	bool dry_run = false, tuned = false;
	size_t n_only = 0;
	int o, r;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 's':
			policy = optarg;
			break;
		case 't':
			if (parse_uint(c, "--timeslice", optarg, VGPU_SCHED_TIMESLICE_MAX,
				       &s.timeslice_ms))
				return EXIT_USAGE;
			tuned = true;
			break;
		case 'a':
			if (parse_uint(c, "--average-factor", optarg, VGPU_SCHED_AVG_MAX,
				       &s.avg_factor))
				return EXIT_USAGE;
			s.adaptive = tuned = true;
			break;
		case 'f':
			if (parse_uint(c, "--frequency", optarg, VGPU_SCHED_FREQ_MAX,
				       &s.frequency_hz))
				return EXIT_USAGE;
			s.adaptive = tuned = true;
			break;
		case 'd':
			dry_run = true;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (!policy && (tuned || dry_run))
		return cli_usage_error(c, "scheduler", "%s needs --set POLICY",
				       dry_run && !tuned ? "--dry-run" :
				       s.adaptive	 ? "--average-factor/--frequency" :
							   "--timeslice");
	if (policy && vgpu_sched_policy_parse(policy, &s.policy) < 0)
		return cli_usage_error(c, "scheduler",
				       "--set '%s': best-effort, equal-share or fixed-share",
				       policy);
	if (policy && s.policy == VGPU_SCHED_BEST_EFFORT && tuned)
		return cli_usage_error(
			c, "scheduler",
			"--set best-effort takes no --timeslice, --average-factor or --frequency");
	if (s.adaptive && s.timeslice_ms)
		return cli_usage_error(
			c, "scheduler",
			"--timeslice is the legacy scheduler's; --average-factor and --frequency adaptive round robin's: one or the other");
	if (s.adaptive && !s.frequency_hz)
		return cli_usage_error(c, "scheduler",
				       "--average-factor needs --frequency HZ (%u to %u)",
				       VGPU_SCHED_FREQ_MIN, VGPU_SCHED_FREQ_MAX);
	if (s.adaptive && s.frequency_hz < VGPU_SCHED_FREQ_MIN)
		return cli_usage_error(c, "scheduler", "--frequency %u: %u to %u Hz",
				       s.frequency_hz, VGPU_SCHED_FREQ_MIN, VGPU_SCHED_FREQ_MAX);
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML | CLI_READ_GPUS);
	if (r)
		return r;
	only = vgpu_xcalloc((size_t)(argc - optind) + 1, sizeof(*only));
	for (; optind < argc; optind++) {
		const struct vgpu_gpu *g = vgpu_model_find_gpu_arg(c->model, argv[optind]);

		if (!g) {
			cli_error(c, "scheduler: GPU '%s': no such NVIDIA GPU (see 'vgpuctl gpus')",
				  argv[optind]);
			return EXIT_FAILURE;
		}
		only[n_only++] = g;
	}
	if (policy)
		return set(c, &s, only, n_only, dry_run);
	return show(c, only, n_only);
}
