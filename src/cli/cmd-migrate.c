// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl migrate-offer: the target's side of a live migration check.  It
 * reads the source's manifest on stdin and answers with the offer: this
 * host's versions and, per vGPU, the GPU the capacity model would give or
 * why none (docs/migration.md).  It writes nothing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "migrate-manifest.h"
#include "read-host.h"

int cmd_migrate_offer(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "migrate-offer", .own = opts, .own_short = "h" };
	VGPU_AUTOFREE char *text = vgpu_xmalloc(VGPU_MIG_MANIFEST_MAX + 1);
	VGPU_AUTOFREE char *answer = NULL;
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
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r) {
		vgpu_mig_offer_clear(&src);
		return r;
	}
	vgpu_mig_offer(c->model, &c->recs, &src, &dst);
	vgpu_host_versions(c->fs, &dst.kernel, dst.driver_version, sizeof(dst.driver_version));
	answer = vgpu_mig_manifest_format(&dst);
	fputs(answer, c->out);
	vgpu_mig_offer_clear(&dst);
	vgpu_mig_offer_clear(&src);
	return EXIT_SUCCESS;
}
