// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl nccl-topo ([-c URI] DOMAIN | --from FILE) [-o FILE]: the NCCL
 * topology file (NCCL_TOPO_FILE) for a guest with vGPUs, from its domain
 * (libvirt's, or a definition file as assign and params take it) and the
 * host's GPUs (vgpu_nccl_topo()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "domxml.h"
#include "nccl-topo.h"
#include "outfile.h"
#include "virt.h"

struct topo_args {
	const char *domain, *from, *output, *uri;
};

static int parse_args(struct cli *c, int argc, char **argv, struct topo_args *a)
{
	enum { O_FROM = 256 };
	static const struct option opts[] = {
		{ "from", required_argument, NULL, O_FROM },
		{ "output", required_argument, NULL, 'o' },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "nccl-topo", .own = opts, .own_short = "c:o:h" };
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case O_FROM:
			a->from = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'c':
			a->uri = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		a->domain = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, "nccl-topo", "unexpected argument '%s'", argv[optind]);
	o = cli_domain_source(c, "nccl-topo", a->domain, a->from, NULL, a->uri);
	if (o)
		return o;
	if (!a->uri)
		a->uri = c->connect ? c->connect : cli_default_uri();
	return 0;
}

static int run(struct cli *c, const struct topo_args *a)
{
	VGPU_AUTOPTR(virt) virt = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *xml = NULL, *topo = NULL;
	struct vgpu_outfile of;
	bool active = false;
	size_t len = 0;
	int e;

	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0)
		return -EIO;
	if (a->from)
		e = vgpu_file_read(&c->ctx, a->from, VGPU_XML_MAX_SIZE + 1, &xml, &len);
	else if ((e = vgpu_virt_open_host(&c->ctx, a->uri, c->fs, &virt)) == 0 &&
		 (e = vgpu_virt_domain_xml(&c->ctx, virt, a->domain, &xml, &active)) == 0)
		len = strlen(xml);
	if (e == 0)
		e = vgpu_domain_parse(&c->ctx, xml, len, a->from ? a->from : a->domain, &doc);
	if (e == 0)
		e = vgpu_nccl_topo(&c->ctx, c->fs, cli_nvml(c), doc, &topo);
	if (e < 0)
		return e;
	if (!a->output) {
		fputs(topo, c->out);
		return 0;
	}
	e = vgpu_outfile_open(&c->ctx, a->output, &of);
	if (e == 0)
		e = vgpu_outfile_write(&c->ctx, &of, topo, strlen(topo));
	vgpu_outfile_close(&of);
	return e;
}

int cmd_nccl_topo(struct cli *c, int argc, char **argv)
{
	struct topo_args a = { 0 };
	int r = parse_args(c, argc, argv, &a);

	if (r == 0 && run(c, &a) < 0) {
		cli_error(c, "nccl-topo %s: %s", a.domain ? a.domain : a.from,
			  vgpu_ctx_error(&c->ctx));
		r = EXIT_FAILURE;
	}
	return r;
}
