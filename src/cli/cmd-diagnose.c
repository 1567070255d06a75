// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl diagnose [DOMAIN|UUID|BDF] [--since TIME] [--json]: the timeline
 * of the log lines the catalogue knows about one vGPU or VM (or the whole
 * host), then the verdict: the first root cause, its cause and next step.
 * vgpuctl diagnose --catalogue [--json]: the catalogue itself.
 *
 * The catalogue is data/catalogue.tsv, installed beside the templates
 * (VGPUCTL_TEMPLATE_DIRS); a binary run from its build tree reads the build
 * tree's copy, a relocated one the copy in ../share/vgpuctl beside it.
 * Reading and matching are the library's (diagnose.h).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalogue.h"
#include "cleanup.h"
#include "cli.h"
#include "diagnose.h"
#include "records.h"

#ifndef VGPUCTL_TEMPLATE_DIRS
#define VGPUCTL_TEMPLATE_DIRS "/usr/share/vgpuctl"
#endif
#define CATALOGUE_FILE "catalogue.tsv"
#define CATALOGUE_MAX (1u << 20)
#define JOURNALCTL "/usr/bin/journalctl"

static const struct col cat_cols[] = {
	{ "ID", "id", COL_STR, false },		{ "KIND", "kind", COL_STR, false },
	{ "DECODE", "decode", COL_STR, false }, { "CAUSE", "cause", COL_STR, false },
	{ "NEXT", "next", COL_STR, false },	{ "SOURCE", "source", COL_STR, false },
	{ "REGEX", "regex", COL_STR, false },
};
static const char *const cat_desc[] = {
	"the row's name",
	"cause (a root cause), symptom, info or noise (never a cause on its own)",
	"what the line carries: an NVIDIA status code, an Xid, or -",
	"what the line means",
	"the next step",
	"the public source the row was learned from",
	"the POSIX extended regular expression a line must match",
};
const struct cli_columns cli_diagnose_columns =
	CLI_COLUMNS(cat_cols, cat_desc, "(with --catalogue)");

/*
 * The catalogue beside the executable: EXEDIR/../share/vgpuctl (an install
 * moved to another prefix, or a package run through its own loader, whose
 * /proc/self/exe is PKG/lib/ld-linux*: PKG/share/vgpuctl), or NULL.
 */
static char *catalogue_beside_exe(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash, *p;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	p = vgpu_asprintf("%s/../share/vgpuctl/" CATALOGUE_FILE, exe);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/*
 * The build tree's catalogue for a binary run from there, else the one
 * beside the executable, else the installed one.
 */
static int catalogue_load(struct cli *c, struct vgpu_catalogue *cat, bool quiet)
{
	VGPU_AUTOFREE char *found = NULL;
	VGPU_AUTOFREE char *buf = NULL;
	char dirs[] = VGPUCTL_TEMPLATE_DIRS;
	char *save = NULL;
	size_t len = 0;

	if (cli_from_build_tree() && access(VGPUCTL_BUILD_DATA_DIR "/" CATALOGUE_FILE, R_OK) == 0)
		found = vgpu_xstrdup(VGPUCTL_BUILD_DATA_DIR "/" CATALOGUE_FILE);
	if (!found)
		found = catalogue_beside_exe();
	for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = vgpu_asprintf("%s/" CATALOGUE_FILE, d);

		if (access(p, R_OK) == 0)
			found = p;
		else
			free(p);
	}
	if (!found) {
		if (quiet)
			return EXIT_FAILURE;
		cli_error(
			c,
			"the message catalogue %s is not in %s nor in ../share/vgpuctl beside the executable",
			CATALOGUE_FILE, VGPUCTL_TEMPLATE_DIRS);
		return EXIT_FAILURE;
	}
	if (vgpu_file_read(&c->ctx, found, CATALOGUE_MAX, &buf, &len) < 0 ||
	    vgpu_catalogue_parse(&c->ctx, buf, found, cat) < 0) {
		if (!quiet)
			cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

const struct vgpu_catalogue *cli_catalogue(struct cli *c)
{
	if (!c->cat_tried) {
		c->cat_tried = true;
		c->cat = vgpu_xcalloc(1, sizeof(*c->cat));
		if (catalogue_load(c, c->cat, true)) {
			vgpu_catalogue_clear(c->cat);
			free(c->cat);
			c->cat = NULL;
		}
	}
	return c->cat;
}

static const char *decode_str(enum vgpu_cat_decode d)
{
	return d == VGPU_CAT_DECODE_STATUS ? "status" : d == VGPU_CAT_DECODE_XID ? "xid" : "-";
}

static int list_catalogue(struct cli *c, const struct vgpu_catalogue *cat)
{
	struct cli_table *tb = cli_table(c, "catalogue", cat_cols, ARRAY_SIZE(cat_cols));

	for (size_t i = 0; i < cat->n; i++) {
		const struct vgpu_cat_row *r = &cat->rows[i];
		struct cli_line *ln = cli_line_new(tb);

		cli_cell_str(ln, 0, r->id);
		cli_cell_str(ln, 1, vgpu_cat_kind_str(r->kind));
		cli_cell_str(ln, 2, decode_str(r->decode));
		cli_cell_str(ln, 3, r->cause);
		cli_cell_str(ln, 4, r->next);
		cli_cell_str(ln, 5, r->source);
		cli_cell_str(ln, 6, r->regex);
	}
	return cli_table_print(c, tb);
}

/* "status 0x38 INVALID_OPERATION" or "Xid 79: GPU has fallen off the bus; NVIDIA's bucket
 * RESTART_BM" */
static char *decoded(const struct vgpu_diag_entry *e)
{
	const char *name, *bucket = NULL;

	if (!e->has_code)
		return NULL;
	if (e->row->decode == VGPU_CAT_DECODE_STATUS) {
		name = vgpu_status_name(e->code);
		return vgpu_asprintf("status 0x%lx: %s", e->code,
				     name ? name : "not in vgpuctl's table (nvstatuscodes.h)");
	}
	name = vgpu_xid_info(e->code, &bucket);
	if (!name)
		return vgpu_asprintf("Xid %lu: see NVIDIA's Xid catalogue", e->code);
	return vgpu_asprintf("Xid %lu: %s; resolution bucket %s", e->code, name, bucket);
}

static void print_text(struct cli *c, const struct vgpu_diag *d)
{
	FILE *f = c->out;
	const struct vgpu_diag_entry *v = d->verdict;

	for (size_t i = 0; i < d->n; i++) {
		const struct vgpu_diag_entry *e = &d->v[i];
		VGPU_AUTOFREE char *dec = decoded(e);

		fprintf(f, "%s:%zu  %s (%s)", e->source, e->lineno, e->row->id,
			vgpu_cat_kind_str(e->row->kind));
		if (e->count > 1) /* a boot loop: the same line again and again */
			fprintf(f, ", %zu times, the last at %s:%zu", e->count, e->last_source,
				e->last_lineno);
		fprintf(f, "\n  %s\n", e->text);
		if (dec)
			fprintf(f, "  %s\n", dec);
	}
	if (d->n)
		fputc('\n', f);
	if (!v && d->symptom) {
		fprintf(f, "verdict: no root cause in the logs; the first symptom is %s (%s:%zu)\n",
			d->symptom->row->id, d->symptom->source, d->symptom->lineno);
		fprintf(f, "cause: %s\nnext: %s\n", d->symptom->row->cause, d->symptom->row->next);
		return;
	}
	if (!d->logs.n) {
		fputs("verdict: none: no log could be read (dev/kmsg, var/log/kern.log, messages, syslog, the domain's QEMU log; not root?)\n",
		      f);
		return;
	}
	if (!v) {
		fprintf(f, "verdict: no root cause in %zu log%s (%zu line%s matched)\n", d->logs.n,
			d->logs.n == 1 ? "" : "s", d->n, d->n == 1 ? "" : "s");
		return;
	}
	fprintf(f, "verdict: %s (%s:%zu)\ncause: %s\nnext: %s\nsource: %s\n", v->row->id, v->source,
		v->lineno, v->row->cause, v->row->next, v->row->source);
}

static void json_entry_fields(FILE *f, const struct vgpu_diag_entry *e)
{
	VGPU_AUTOFREE char *dec = decoded(e);

	fputs("\"row\": ", f);
	cli_json_str(f, e->row->id);
	fputs(", \"kind\": ", f);
	cli_json_str(f, vgpu_cat_kind_str(e->row->kind));
	fputs(", \"log\": ", f);
	cli_json_str(f, e->source);
	fprintf(f, ", \"line\": %zu, \"time\": ", e->lineno);
	if (e->when)
		fprintf(f, "%lld", e->when);
	else
		fputs("null", f);
	fputs(", \"text\": ", f);
	cli_json_str(f, e->text);
	fputs(", \"decoded\": ", f);
	cli_json_str(f, dec);
	fprintf(f, ", \"count\": %zu, \"last\": ", e->count);
	if (e->count < 2) {
		fputs("null", f);
		return;
	}
	fputs("{\"log\": ", f);
	cli_json_str(f, e->last_source);
	fprintf(f, ", \"line\": %zu, \"time\": ", e->last_lineno);
	if (e->last_when)
		fprintf(f, "%lld}", e->last_when);
	else
		fputs("null}", f);
}

static void print_json(struct cli *c, const struct vgpu_diag *d)
{
	FILE *f = c->out;
	const struct vgpu_diag_entry *v = d->verdict;

	fputs("{\"identities\": [", f);
	for (size_t i = 0; i < d->identities.n; i++) {
		fputs(i ? ", " : "", f);
		cli_json_str(f, d->identities.items[i]);
	}
	fputs("], \"logs\": [", f);
	for (size_t i = 0; i < d->logs.n; i++) {
		fputs(i ? ", " : "", f);
		cli_json_str(f, d->logs.items[i]);
	}
	fputs("], \"timeline\": [", f);
	for (size_t i = 0; i < d->n; i++) {
		fputs(i ? ",\n  {" : "\n  {", f);
		json_entry_fields(f, &d->v[i]);
		fputc('}', f);
	}
	fputs("],\n \"verdict\": ", f);
	if (!v) {
		fputs("null", f);
	} else {
		fputc('{', f);
		json_entry_fields(f, v);
		fputs(", \"cause\": ", f);
		cli_json_str(f, v->row->cause);
		fputs(", \"next\": ", f);
		cli_json_str(f, v->row->next);
		fputs(", \"source\": ", f);
		cli_json_str(f, v->row->source);
		fputc('}', f);
	}
	fputs("}\n", f);
}

/* --since: a time as logs write it (2026-11-28 19:02, 2026-11-28T19:02:11Z), or N[smhd] ago */
static int parse_since(const char *s, long long now, long long *out)
{
	char *end;
	long long n;

	if (*s && vgpu_diag_parse_time(s, now, out) == strlen(s))
		return 0;
	if (*s == '-')
		s++;
	n = strtoll(s, &end, 10);
	if (end == s || !isdigit((unsigned char)*s) || n < 0 || n > 100000000 ||
	    !strchr("smhd", *end) || !*end || (end[1] && strcmp(end + 1, " ago")))
		return -EINVAL;
	*out = now - n * (*end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : 86400);
	return 0;
}

int cmd_diagnose(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "catalogue", no_argument, NULL, 'C' },
		{ "journalctl", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "diagnose", .own = opts, .own_short = "h", .table = true };
	struct vgpu_catalogue cat = { 0 };
	struct vgpu_records recs = { 0 };
	struct vgpu_diag d = { 0 };
	struct vgpu_diag_query q = { .now = (long long)time(NULL) };
	const char *since = NULL, *journalctl = NULL;
	bool list = false;
	int o, rc;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		if (o == 's')
			since = optarg;
		else if (o == 'C')
			list = true;
		else if (o == 'j')
			journalctl = optarg;
		else
			return o == 'h' ? CLI_HELP : EXIT_USAGE;
	}
	if (optind < argc)
		q.target = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, "diagnose", "unexpected argument '%s'", argv[optind]);
	if (list && (q.target || since))
		return cli_usage_error(c, "diagnose", "--catalogue lists the catalogue: no %s",
				       q.target ? "DOMAIN, UUID or BDF" : "--since");
	if (since && parse_since(since, q.now, &q.since) < 0)
		return cli_usage_error(
			c, "diagnose",
			"--since '%s': not a time (2026-11-28 19:02[:SS], 2026-11-28T19:02:11Z) or an age (30m, 2h, 1d)",
			since);
	/*
	 * The journal of this host, where systemd's journalctl is installed;
	 * another tree's (--sysroot) only through the program named.
	 */
	if (journalctl)
		q.journalctl = journalctl;
	else if ((!c->sysroot || !strcmp(c->sysroot, "/")) && access(JOURNALCTL, X_OK) == 0)
		q.journalctl = JOURNALCTL;
	rc = catalogue_load(c, &cat, false);
	if (rc)
		return rc;
	if (list) {
		rc = list_catalogue(c, &cat);
		vgpu_catalogue_clear(&cat);
		return rc;
	}
	if (c->sysroot && !*c->sysroot) {
		vgpu_catalogue_clear(&cat);
		cli_error(c, "--sysroot '': an empty root is not a directory");
		return EXIT_FAILURE;
	}
	if ((!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) ||
	    vgpu_records_read(&c->ctx, c->fs, &recs) < 0 ||
	    vgpu_diagnose(&c->ctx, c->fs, &recs, &cat, &q, &d) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		rc = EXIT_FAILURE;
	} else {
		if (c->json)
			print_json(c, &d);
		else
			print_text(c, &d);
		rc = EXIT_SUCCESS;
	}
	vgpu_diag_clear(&d);
	vgpu_records_clear(&recs);
	vgpu_catalogue_clear(&cat);
	return rc;
}

void cli_explain_failure(struct cli *c, long long since)
{
	struct vgpu_catalogue cat = { 0 };
	struct vgpu_records none = { 0 };
	struct vgpu_diag d = { 0 };
	/* syslog stamps whole seconds, and a log line may precede the failure by a moment */
	struct vgpu_diag_query q = { .since = since - 2,
				     .now = (long long)time(NULL),
				     .timed_only = true };
	struct vgpu_ctx ctx;

	if (catalogue_load(c, &cat, true))
		return;
	vgpu_ctx_init(&ctx, NULL, NULL);
	if ((c->fs || vgpu_sysfs_open(&ctx, c->sysroot, &c->fs) == 0) &&
	    vgpu_diagnose(&ctx, c->fs, &none, &cat, &q, &d) == 0 && d.verdict) {
		VGPU_AUTOFREE char *dec = decoded(d.verdict);

		fprintf(c->err, "vgpuctl: cause: %s%s%s (%s:%zu: %s)\nvgpuctl: next: %s\n",
			d.verdict->row->cause, dec ? "; " : "", dec ? dec : "", d.verdict->source,
			d.verdict->lineno, d.verdict->row->id, d.verdict->row->next);
	}
	vgpu_diag_clear(&d);
	vgpu_ctx_clear(&ctx);
	vgpu_catalogue_clear(&cat);
}
