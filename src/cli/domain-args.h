/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The options shared by xml, plan, assign and release (domain-args.c). */
#ifndef VGPUCTL_DOMAIN_ARGS_H
#define VGPUCTL_DOMAIN_ARGS_H

#include "cli.h"
#include "domxml.h"
#include "fabric.h"
#include "plan.h"

struct xml_args {
	struct vgpu_request req;
	struct vgpu_domain_opts dom;
	const char *vcpus_arg, *memory_arg, *template, *from, *uri;
	struct vgpu_cpuset emulator;
	char *vgpu_list; /* strdup'ed --vgpu, split in place */
	char uuid[VGPU_UUID_LEN];
	char mdev[VGPU_MAX_VGPUS][VGPU_UUID_LEN];
	size_t n_mdev;
	/* assign / release */
	bool live; /* set by the caller: accept the options below and DOMAIN */
	bool dry_run;
	const char *domain, *output;
	struct vgpu_fabric fabric; /* xml_fabric(): the partitions, on a fabric in vGPU mode */
};

/*
 * Options of xml/plan (and assign/release when a->live), parsed only: the
 * caller checks the combination.  Return: 0, CLI_HELP for --help, or an
 * exit code (EXIT_USAGE, said).
 */
int xml_parse_args(struct cli *c, const char *cmd, int argc, char **argv, struct xml_args *a);
/* The template, or the domain given with --from, parsed. */
int xml_load_template(struct cli *c, const struct xml_args *a, struct _xmlDoc **doc);
/*
 * The way out of the failure in @ctx, in this CLI's options (the library
 * names no option): "; give another with --mdev-uuid or none", or "" when
 * the failure has none.  Printed right after vgpu_ctx_error().
 */
const char *xml_error_hint(const struct vgpu_ctx *ctx);
/*
 * On a host whose Fabric Manager runs in vGPU mode (an HGX board), the
 * partitions into a->fabric (Fabric Manager through --nvfm, their GPUs by
 * NVML's module IDs), named in a->req for the plan; elsewhere nothing.
 * Return: 0, or -errno with the message in c->ctx.  Clear a->fabric with
 * vgpu_fabric_clear().
 */
int xml_fabric(struct cli *c, struct xml_args *a);
#endif
