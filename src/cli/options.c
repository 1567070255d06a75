// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Options: each command's getopt with the options every command shares,
 * in any order around its arguments, and what a mistyped one was near.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"

enum { OPT_SYSROOT = 0x1000, OPT_NVML, OPT_JSON, OPT_BYTES, OPT_OUTPUT, OPT_NOHEAD, OPT_RAW };
enum { OPT_NVFM = OPT_RAW + 1 };

/* after the command: what global options a command takes there (cli_getopt()) */
static const struct option shared_opts[] = {
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "nvml", required_argument, NULL, OPT_NVML },
	{ "nvfm", required_argument, NULL, OPT_NVFM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "bytes", no_argument, NULL, OPT_BYTES },
	{ 0 },
};

/* and those of a listing's table */
static const struct option table_opts[] = {
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "noheadings", no_argument, NULL, OPT_NOHEAD },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ 0 },
};

const char *cli_nearest(const char *word, const char *const *names, size_t n)
{
	return vgpu_nearest(word, names, n, false);
}

/* Add the names of @opts to @names (at most @max in all). */
static void add_names(const char **names, size_t *n, size_t max, const struct option *opts)
{
	for (const struct option *o = opts; o && o->name && *n < max; o++)
		names[(*n)++] = o->name;
}

int cli_bad_option(struct cli *c, const char *cmd, const struct option *opts, char **argv)
{
	const char *bad = optind > 0 ? argv[optind - 1] : "";
	const char *names[96];
	size_t n = 0;

	if (strncmp(bad, "--", 2) == 0) {
		char name[64];
		const char *near;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(bad + 2, "="), bad + 2);
		for (const struct option *o = opts; o && o->name; o++)
			if (strcmp(o->name, name) == 0)
				return cli_usage_error(c, cmd, "option '--%s' needs an argument",
						       name);
		add_names(names, &n, ARRAY_SIZE(names), opts);
		/* every command takes these after its name (main.c, cli_getopt()) */
		add_names(names, &n, ARRAY_SIZE(names), shared_opts);
		near = cli_nearest(name, names, n);
		if (near)
			return cli_usage_error(
				c, cmd, "unknown option '--%s'; did you mean '--%s'?", name, near);
		return cli_usage_error(c, cmd, "unknown option '--%s'", name);
	}
	if (optopt)
		for (const struct option *o = opts; o && o->name; o++)
			if (o->val == optopt && o->has_arg == required_argument)
				return cli_usage_error(c, cmd, "option '-%c' needs an argument",
						       optopt);
	if (optopt)
		return cli_usage_error(c, cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(c, cmd, "unknown option '%s'", bad);
}

/* The merged tables, built on the first call: the command's, then the shared ones. */
static void merge(struct cli_opts *o)
{
	size_t n = 0, max = ARRAY_SIZE(o->all) - 1;
	const struct option *lists[] = { o->own, shared_opts, o->table ? table_opts : NULL };

	for (size_t k = 0; k < ARRAY_SIZE(lists); k++)
		for (const struct option *p = lists[k]; p && p->name && n < max; p++)
			o->all[n++] = *p;
	memset(&o->all[n], 0, sizeof(o->all[n]));
	/* short ones: -J always; -o LIST, -n, -r, -b for a table */
	snprintf(o->shorts, sizeof(o->shorts), "%sJ%s", o->own_short ? o->own_short : "",
		 o->table ? "o:nrb" : "");
	o->started = true;
}

int cli_getopt(struct cli *c, struct cli_opts *o, int argc, char **argv)
{
	int v;

	if (!o->started) {
		merge(o);
		optind = 0; /* a full reset: main's '+' (stop at the command) is not ours */
		opterr = 0; /* cli_bad_option() says what was wrong */
	}
	for (;;) {
		v = getopt_long(argc, argv, o->shorts, o->all, NULL);
		switch (v) {
		case OPT_SYSROOT:
			c->sysroot = optarg;
			continue;
		case OPT_NVML:
			c->nvml_path = optarg;
			continue;
		case OPT_NVFM:
			c->nvfm_path = optarg;
			continue;
		case 'J':
		case OPT_JSON:
			c->json = true;
			continue;
		case OPT_BYTES:
			c->bytes = true;
			continue;
		case OPT_OUTPUT:
			c->columns = optarg;
			continue;
		case OPT_NOHEAD:
			c->no_headings = true;
			continue;
		case OPT_RAW:
			c->raw = true;
			continue;
		case 'o':
		case 'n':
		case 'r':
		case 'b':
			if (o->table && !(o->own_short && strchr(o->own_short, v))) {
				if (v == 'o')
					c->columns = optarg;
				else if (v == 'n')
					c->no_headings = true;
				else if (v == 'r')
					c->raw = true;
				else
					c->bytes = true;
				continue;
			}
			return v;
		case '?': {
			/* a short option of ours without its argument (-o) */
			const char *p = optopt ? strchr(o->shorts, optopt) : NULL;

			if (p && p[1] == ':')
				cli_usage_error(c, o->cmd, "option '-%c' needs an argument",
						optopt);
			else
				cli_bad_option(c, o->cmd, o->all, argv);
			return '?';
		}
		default:
			return v;
		}
	}
}
