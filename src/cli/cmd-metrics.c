// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl metrics [--textfile DIR]: the host's vGPU state in Prometheus's
 * text exposition format (version 0.0.4), for node-exporter's textfile
 * collector (--textfile: DIR/vgpuctl.prom, replaced atomically, so the
 * collector never reads half a file) or any scraper of stdout.  What is
 * exported, and how it is counted, is the library's (metrics.h); this file
 * reads the host, asks for the families and writes their text.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cleanup.h"
#include "cli.h"
#include "fabric.h"
#include "metrics.h"
#include "runs.h"
#include "sysfs-state.h"

#define PROM_FILE "vgpuctl.prom"

/* DIR/vgpuctl.prom, written whole or not at all: the collector reads *.prom only */
static int write_textfile(struct cli *c, const char *dir, const char *data, size_t len)
{
	struct vgpu_sysfs *fs = NULL;
	struct vgpu_sysdir d;
	int r;

	struct stat st;

	if (stat(dir, &st) < 0) {
		cli_error(c, "--textfile '%s': %s", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error(c, "--textfile '%s': not a directory", dir);
		return EXIT_FAILURE;
	}
	if (vgpu_sysfs_open(&c->ctx, dir, &fs) < 0) {
		cli_error(c, "--textfile '%s': %s", dir, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	vgpu_sysdir_root(fs, &d);
	r = vgpu_sysfs_replace(&d, PROM_FILE, data, len);
	vgpu_sysfs_free(fs);
	if (r < 0) {
		cli_error(c, "--textfile '%s': cannot write %s: %s", dir, PROM_FILE, strerror(-r));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 * On an HGX board whose Fabric Manager runs in vGPU mode, the partitions
 * (NVML's module IDs, read with the host, name their GPUs); Fabric Manager
 * not there: a warning, and the other families stand.
 */
static void add_fabric(struct cli *c, struct vgpu_metrics *mt)
{
	struct vgpu_fabric f = { .mode = VGPU_FABRIC_NONE };

	if (cli_fabric(c, &f) < 0) {
		vgpu_warn(&c->ctx, "no fabric partitions in the metrics: %s",
			  vgpu_ctx_error(&c->ctx));
		vgpu_ctx_clear(&c->ctx);
	} else if (f.mode == VGPU_FABRIC_VGPU) {
		vgpu_metrics_add_fabric(mt, &f, &c->recs);
	}
	vgpu_fabric_clear(&f);
}

int cmd_metrics(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "metrics", .own = opts, .own_short = "h" };
	const char *dir = NULL;
	char *buf;
	size_t len = 0;
	struct vgpu_run *runs = NULL;
	size_t n_runs = 0;
	struct vgpu_metrics mt;
	int o, up, rc;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		if (o == 't')
			dir = optarg;
		else
			return o == 'h' ? CLI_HELP : EXIT_USAGE;
	}
	if (optind < argc)
		return cli_usage_error(c, "metrics", "unexpected argument '%s'", argv[optind]);
	if (c->json)
		return cli_usage_error(c, "metrics",
				       "--json: metrics are Prometheus's text format");
	/* a host that cannot be read is still a document: vgpuctl_up 0 is what alerts see */
	up = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML) == 0;
	if (c->fs)
		n_runs = vgpu_runs_read(&c->ctx, c->fs, &runs);
	vgpu_metrics_collect(&c->ctx, c->fs, up ? c->model : NULL, &c->recs, runs, n_runs,
			     time(NULL), up ? cli_catalogue(c) : NULL, &mt);
	vgpu_runs_free(runs, n_runs);
	if (up)
		add_fabric(c, &mt);
	buf = vgpu_metrics_text(&mt, &len);
	vgpu_metrics_clear(&mt);
	if (dir)
		rc = write_textfile(c, dir, buf, len);
	else
		rc = fwrite(buf, 1, len, c->out) == len ? EXIT_SUCCESS : EXIT_FAILURE;
	free(buf);
	return up ? rc : EXIT_FAILURE;
}
