// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl vgpus --orphans and release --orphans|--stale (module: libvirt
 * names the domains).  The evidence and the reaper are the library's
 * (orphans-host.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cleanup.h"
#include "orphans-host.h"
#include "virt.h"

static const struct col orphan_cols[] = {
	{ "GPU", "gpu", COL_STR, 0 },
	{ "VF", "vf", COL_STR, 0 },
	{ "MDEV", "mdev_uuid", COL_STR, 0 },
	{ "CLASS", "class", COL_STR, 0 },
	{ "RECORD", "record_domain", COL_STR, 0 },
	{ "DOMAIN", "domain", COL_STR, 0 },
	{ "HOLDER", "holder_pid", COL_STR, COL_RIGHT },
	{ "AGE", "age_s", COL_NUM, COL_RIGHT },
	{ "NVML-VM", "nvml_vm", COL_STR, 0 },
	{ "WEDGED", "wedged", COL_STR, COL_JSON_ONLY },
};

/* The grace in seconds: a decimal of 0 to ten years. */
static int parse_grace(struct cli *c, const char *cmd, const char *s, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 315360000)
		return cli_usage_error(c, cmd, "--grace '%s': not a number of seconds", s);
	*out = v;
	return 0;
}

/* The domains, read from the connection each time the library asks. */
static int read_domains(struct vgpu_ctx *ctx, void *arg, struct vgpu_odom **out, size_t *n)
{
	return vgpu_virt_domains(ctx, arg, out, n);
}

static int open_host(struct cli *c, const char *uri, struct vgpu_virt **v)
{
	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0)
		return -1;
	if (uri && vgpu_virt_open_host(&c->ctx, uri, c->fs, v) < 0)
		return -1;
	return 0;
}

static void add_row(struct cli_table *t, const struct vgpu_orow *o)
{
	struct cli_line *ln = cli_line_new(t);
	const struct vgpu_evidence *e = &o->ev;

	cli_cell_str(ln, 0, o->gpu);
	cli_cell_str(ln, 1, o->parent);
	cli_cell_str(ln, 2, o->mdev[0] ? o->mdev : NULL);
	cli_cell_str(ln, 3, vgpu_oclass_str(o->cls));
	cli_cell_str(ln, 4, o->rec_domain[0] ? o->rec_domain : e->config ? "(config)" : "none");
	cli_cell_str(ln, 5, !e->domains_known ? "unknown" : e->domain[0] ? e->domain : "none");
	if (e->holder > 0)
		cli_cell_num_after(ln, 6, "", e->holder);
	else
		cli_cell_str(ln, 6, e->holders_known ? "none" : "unknown");
	cli_cell_num(ln, 7, (long)e->age_s, e->age_s >= 0);
	/* NVML's VM ID of its active instance; "maybe": one of its type is not tied to a vGPU */
	cli_cell_str(ln, 8,
		     e->nvml_vm[0] ? e->nvml_vm :
		     e->nvml_maybe ? "maybe" :
		     e->nvml_known ? "none" :
				     "unknown");
	cli_cell_str(ln, 9, e->wedged_log ? "log" : e->wedged ? "yes" : "no");
}

int cmd_vgpus_orphans(struct cli *c, int argc, char **argv)
{
	enum { O_ORPHANS = 256, O_GRACE };
	static const struct option opts[] = {
		{ "orphans", no_argument, NULL, O_ORPHANS },
		{ "grace", required_argument, NULL, O_GRACE },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "vgpus", .own = opts, .own_short = "c:h", .table = true };
	const char *uri = c->connect;
	long long grace = VGPU_ORPHAN_GRACE_S;
	VGPU_AUTOPTR(virt) v = NULL;
	struct vgpu_orow *rows = NULL;
	struct cli_table *t;
	size_t n = 0;
	struct vgpu_odom_source src = { read_domains, NULL };
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		if (o == O_GRACE && parse_grace(c, "vgpus", optarg, &grace))
			return EXIT_USAGE;
		else if (o == 'c')
			uri = optarg;
		else if (o == 'h')
			return CLI_HELP;
		else if (o != O_ORPHANS && o != O_GRACE)
			return EXIT_USAGE;
	}
	if (optind < argc)
		return cli_usage_error(c, "vgpus", "unexpected argument '%s'", argv[optind]);
	if (open_host(c, uri, &v) == 0)
		src.arg = v;
	if (!c->fs || (uri && !v) ||
	    vgpu_orphans_scan(&c->ctx, c->fs, v ? &src : NULL, cli_nvml(c), cli_catalogue(c), grace,
			      &rows, &n) < 0) {
		cli_error(c, "vgpus: %s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (!uri)
		vgpu_log(&c->ctx, LOG_NOTICE,
			 "no libvirt connection (-c URI): the domains that name vGPUs are unknown");
	t = cli_table(c, "vgpus", orphan_cols, ARRAY_SIZE(orphan_cols));
	for (size_t i = 0; i < n; i++) {
		add_row(t, &rows[i]);
		if (rows[i].cls == VGPU_OCLASS_WEDGED)
			vgpu_log(
				&c->ctx, LOG_NOTICE,
				"%s is wedged; once it is clear (freed, or the host rebooted): vgpuctl release --clear-wedged %s",
				rows[i].mdev[0] ? rows[i].mdev : rows[i].parent,
				rows[i].mdev[0] ? rows[i].mdev : rows[i].parent);
	}
	free(rows);
	return cli_table_print(c, t);
}

int cmd_release_orphans(struct cli *c, int argc, char **argv)
{
	enum { O_ORPHANS = 256, O_STALE, O_GRACE, O_DRY, O_CLEAR };
	static const struct option opts[] = {
		{ "orphans", no_argument, NULL, O_ORPHANS },
		{ "clear-wedged", required_argument, NULL, O_CLEAR },
		{ "stale", no_argument, NULL, O_STALE },
		{ "grace", required_argument, NULL, O_GRACE },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "release", .own = opts, .own_short = "c:h" };
	const char *uri = c->connect;
	long long grace = VGPU_ORPHAN_GRACE_S;
	VGPU_AUTOPTR(virt) v = NULL;
	unsigned what = 0;
	const char *clear = NULL;
	bool dry = false;
	size_t freed = 0;
	int o, r;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case O_ORPHANS:
			what |= VGPU_REAP_ORPHANS;
			break;
		case O_STALE:
			what |= VGPU_REAP_STALE;
			break;
		case O_GRACE:
			if (parse_grace(c, "release", optarg, &grace))
				return EXIT_USAGE;
			break;
		case O_DRY:
			dry = true;
			break;
		case O_CLEAR:
			clear = optarg;
			break;
		case 'c':
			uri = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(
			c, "release", "--orphans, --stale and --clear-wedged take no DOMAIN ('%s')",
			argv[optind]);
	if (clear && (what || dry))
		return cli_usage_error(
			c, "release",
			"--clear-wedged goes alone (not with --orphans, --stale or --dry-run)");
	if (clear) {
		if (open_host(c, NULL, &v) < 0 ||
		    vgpu_orphans_clear_wedged(&c->ctx, c->fs, cli_catalogue(c), clear) < 0) {
			cli_error(c, "release: %s", vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
		return 0;
	}
	if (!uri)
		uri = cli_default_uri();
	cli_catch_stops();
	r = open_host(c, uri, &v);
	if (r == 0) {
		struct vgpu_odom_source src = { read_domains, v };

		r = vgpu_orphans_reap(&c->ctx, c->fs, &src, cli_nvml(c), cli_catalogue(c), what,
				      grace, dry, &freed);
	}
	cli_reraise_stop();
	if (r < 0) {
		cli_error(c, "release: %s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	fprintf(c->out, "%s %zu vGPU%s\n", dry ? "would free" : "freed", freed,
		freed == 1 ? "" : "s");
	return 0;
}
