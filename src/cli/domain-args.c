// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The options xml, plan, assign and release share, and the domain they
 * start from (a template, or --from FILE).  Parsing only: each command
 * checks the combination it needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "domain-args.h"

#ifndef VGPUCTL_TEMPLATE_DIRS
#define VGPUCTL_TEMPLATE_DIRS "/usr/share/vgpuctl"
#endif

const char *xml_error_hint(const struct vgpu_ctx *ctx)
{
	unsigned h = vgpu_ctx_hints(ctx);

	if (h & VGPU_HINT_OTHER_MDEV_UUID)
		return "; give another with --mdev-uuid or none";
	if (h & VGPU_HINT_NO_PIN)
		return ", or give --no-pin";
	return "";
}

/* The template (--template, the installed default) or the domain given with --from. */
int xml_fabric(struct cli *c, struct xml_args *a)
{
	enum vgpu_fabric_mode mode = VGPU_FABRIC_NONE;
	int r;

	if (!c->fs && (r = vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs)) < 0)
		return r;
	r = vgpu_fabric_mode_read(&c->ctx, c->fs, &mode);
	if (r < 0 || mode != VGPU_FABRIC_VGPU)
		return r;
	/* the GPUs only: NVML's module IDs map Fabric Manager's to PCI addresses */
	if (cli_read_host(c, 0))
		return vgpu_error(&c->ctx, -EIO, "cannot read the host for its fabric partitions");
	r = cli_fabric(c, &a->fabric);
	if (r == 0 && a->fabric.mode != VGPU_FABRIC_VGPU)
		return vgpu_error(
			&c->ctx, -ENOENT,
			"Fabric Manager runs in vGPU mode on this host (FABRIC_MODE=2): a VM needs a free fabric partition, and libnvfm is not loaded for another host's tree (--nvfm LIB)");
	if (r == 0)
		a->req.fabric = &a->fabric;
	return r;
}

int xml_load_template(struct cli *c, const struct xml_args *a, struct _xmlDoc **doc)
{
	VGPU_AUTOFREE char *buf = NULL;
	VGPU_AUTOFREE char *found = NULL;
	const char *path = a->from ? a->from : a->template;
	size_t len = 0;

	if (!path) {
		/* the installed copy; the build tree's for a binary run from there */
		char dirs[] = VGPUCTL_TEMPLATE_DIRS;
		char *save = NULL;

		if (cli_from_build_tree() &&
		    access(VGPUCTL_BUILD_TEMPLATE_DIR "/domain.xml", R_OK) == 0)
			found = vgpu_xstrdup(VGPUCTL_BUILD_TEMPLATE_DIR "/domain.xml");
		for (char *d = strtok_r(dirs, ":", &save); d && !found;
		     d = strtok_r(NULL, ":", &save)) {
			char *p = vgpu_asprintf("%s/domain.xml", d);

			if (access(p, R_OK) == 0)
				found = p;
			else
				free(p);
		}
		if (!found) {
			cli_error(
				c,
				"default template domain.xml not found in %s; use --template FILE",
				VGPUCTL_TEMPLATE_DIRS);
			return EXIT_FAILURE;
		}
		path = found;
	}
	if (vgpu_file_read(&c->ctx, path, VGPU_XML_MAX_SIZE + 1, &buf, &len) < 0 ||
	    vgpu_domain_parse(&c->ctx, buf, len, path, doc) < 0) {
		cli_error(c, "%s%s", vgpu_ctx_error(&c->ctx), xml_error_hint(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

int xml_parse_args(struct cli *c, const char *cmd, int argc, char **argv, struct xml_args *a)
{
	enum {
		O_NAME = 256,
		O_VGPU,
		O_VCPUS,
		O_MEMORY,
		O_UUID,
		O_MDEV,
		O_GPU,
		O_VF,
		O_TEMPLATE,
		O_FROM,
		O_EXCLUDE,
		O_EMULATOR,
		O_HUGE,
		O_VIRT,
		O_NOPIN,
		O_PERSTART,
		O_DRYRUN,
		O_GUESTTOPO
	};
	static const struct option opts[] = {
		{ "name", required_argument, NULL, O_NAME },
		{ "vgpu", required_argument, NULL, O_VGPU },
		{ "vcpus", required_argument, NULL, O_VCPUS },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "uuid", required_argument, NULL, O_UUID },
		{ "mdev-uuid", required_argument, NULL, O_MDEV },
		{ "gpu", required_argument, NULL, O_GPU },
		{ "vf", required_argument, NULL, O_VF },
		{ "template", required_argument, NULL, O_TEMPLATE },
		{ "from", required_argument, NULL, O_FROM },
		{ "exclude-cpus", required_argument, NULL, O_EXCLUDE },
		{ "emulator-cpus", required_argument, NULL, O_EMULATOR },
		{ "hugepages", no_argument, NULL, O_HUGE },
		{ "virt-type", required_argument, NULL, O_VIRT },
		{ "guest-topology", required_argument, NULL, O_GUESTTOPO },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		/* assign / release only */
		{ "no-pin", no_argument, NULL, O_NOPIN },
		{ "per-start", no_argument, NULL, O_PERSTART },
		{ "dry-run", no_argument, NULL, O_DRYRUN },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct vgpu_cpuset s;
	int o;

	a->req.gpu_arg = "--gpu";
	a->req.vf_arg = "--vf";
	optind = 0; /* 0: a full reset, so DOMAIN may come before the options */
	while ((o = getopt_long(argc, argv, a->live ? "c:ho:" : "c:h", opts, NULL)) != -1) {
		if (!a->live && (o == O_NOPIN || o == O_PERSTART || o == O_DRYRUN))
			return cli_usage_error(c, cmd, "option '%s' is for assign and release",
					       argv[optind - 1]);
		switch (o) {
		case O_NOPIN:
			a->dom.no_pin = true;
			break;
		case O_PERSTART:
			a->dom.per_start = true;
			break;
		case O_DRYRUN:
			a->dry_run = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case O_NAME:
			if (vgpu_domain_name_check(optarg))
				return cli_usage_error(c, cmd,
						       "--name '%s': not a usable domain name (%s)",
						       optarg, vgpu_domain_name_check(optarg));
			a->dom.name = optarg;
			break;
		case O_VGPU:
			free(a->vgpu_list);
			a->vgpu_list = vgpu_xstrdup(optarg);
			break;
		case O_VCPUS:
			a->vcpus_arg = optarg;
			break;
		case O_MEMORY:
			a->memory_arg = optarg;
			break;
		case O_UUID:
			if (!vgpu_uuid_normalize(optarg, a->uuid))
				return cli_usage_error(c, cmd, "--uuid '%s': not a UUID", optarg);
			a->req.uuid = a->uuid;
			break;
		case O_MDEV:
			if (a->n_mdev == VGPU_MAX_VGPUS)
				return cli_usage_error(c, cmd, "too many --mdev-uuid");
			if (!vgpu_uuid_normalize(optarg, a->mdev[a->n_mdev]))
				return cli_usage_error(c, cmd, "--mdev-uuid '%s': not a UUID",
						       optarg);
			for (size_t k = 0; k < a->n_mdev; k++)
				if (strcmp(a->mdev[k], a->mdev[a->n_mdev]) == 0)
					return cli_usage_error(
						c, cmd, "--mdev-uuid '%s' is given twice", optarg);
			a->req.mdev_uuids[a->n_mdev] = a->mdev[a->n_mdev];
			a->n_mdev++;
			break;
		case O_GPU:
			a->req.gpu = optarg;
			break;
		case O_VF:
			a->req.vf = optarg;
			break;
		case O_TEMPLATE:
			a->template = optarg;
			break;
		case O_FROM:
			a->from = optarg;
			break;
		case O_EXCLUDE:
			if (vgpu_cpulist_parse(optarg, &s) < 0)
				return cli_usage_error(
					c, cmd, "--exclude-cpus '%s': not a CPU list", optarg);
			vgpu_cpuset_or(&a->req.exclude, &s);
			break;
		case O_EMULATOR:
			if (vgpu_cpulist_parse(optarg, &a->emulator) < 0 ||
			    vgpu_cpuset_empty(&a->emulator))
				return cli_usage_error(
					c, cmd, "--emulator-cpus '%s': not a CPU list", optarg);
			a->dom.emulator_cpus = &a->emulator;
			break;
		case O_HUGE:
			a->dom.hugepages = true;
			break;
		case O_VIRT:
			if (strcmp(optarg, "kvm") != 0 && strcmp(optarg, "qemu") != 0)
				return cli_usage_error(c, cmd, "--virt-type '%s': use kvm or qemu",
						       optarg);
			a->dom.virt_type = optarg;
			break;
		case O_GUESTTOPO:
			if (strcmp(optarg, "mirror") != 0)
				return cli_usage_error(c, cmd, "--guest-topology '%s': use mirror",
						       optarg);
			a->req.mirror = true;
			break;
		case 'c':
			a->uri = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return cli_bad_option(c, cmd, opts, argv);
		}
	}
	if (a->live && optind < argc && !a->domain)
		a->domain = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, cmd, "unexpected argument '%s'", argv[optind]);
	if (a->template && a->from)
		return cli_usage_error(c, cmd, "--template and --from exclude each other");
	if (a->req.mirror && a->dom.no_pin)
		return cli_usage_error(c, cmd,
				       "--guest-topology mirror pins the guest: not with --no-pin");
	if (a->vcpus_arg) {
		long v;

		if (vgpu_parse_long(a->vcpus_arg, &v) < 0 || v < 1 || v > 4096)
			return cli_usage_error(c, cmd, "--vcpus '%s': not a vCPU count (1-4096)",
					       a->vcpus_arg);
		a->req.vcpus = (unsigned)v;
	}
	if (a->memory_arg && vgpu_parse_size_kib(a->memory_arg, &a->dom.memory_kib) < 0)
		return cli_usage_error(
			c, cmd, "--memory '%s': not a size of 1 MiB or more (e.g. 32G, 4096M)",
			a->memory_arg);
	a->req.memory_arg = a->memory_arg; /* messages give sizes in its unit */
	/* a bare number is MiB, as virt-install's --memory: "8" is a typo for 8G */
	if (a->memory_arg && a->dom.memory_kib < 256 * 1024)
		vgpu_warn(
			&c->ctx,
			"--memory '%s' is %llu MiB (a bare number is MiB); a VM with a vGPU needs far more: did you mean %sG?",
			a->memory_arg, (unsigned long long)(a->dom.memory_kib / 1024),
			a->memory_arg);
	/* the global -c URI (before the command, as virsh's) when the command has none */
	if (!a->uri && c->connect)
		a->uri = c->connect;
	for (char *save = NULL, *p = a->vgpu_list ? strtok_r(a->vgpu_list, ",", &save) : NULL; p;
	     p = strtok_r(NULL, ",", &save)) {
		if (a->req.n_profiles == VGPU_MAX_VGPUS)
			return cli_usage_error(c, cmd, "--vgpu: at most %d vGPUs", VGPU_MAX_VGPUS);
		a->req.profiles[a->req.n_profiles++] = p;
	}
	if (a->vgpu_list && !a->req.n_profiles)
		return cli_usage_error(c, cmd, "--vgpu '': no profile given");
	if (a->n_mdev > a->req.n_profiles)
		return cli_usage_error(c, cmd, "more --mdev-uuid than vGPUs");
	return 0;
}
