// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl params DOMAIN [--set K=V]... [--unset K]... [--clear] [--raw]:
 * the vgpu_params set a domain's metadata keeps (params.h), changed and
 * printed.  The domain comes from libvirt (DOMAIN, -c URI; redefined) or a
 * file (--from FILE, -o OUT), as for assign.  The hook's prepare writes the
 * set to the vGPUs at the next start.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "domxml.h"
#include "live.h"
#include "outfile.h"
#include "params.h"
#include "records.h"
#include "virt.h"

struct params_args {
	const char *domain, *from, *output, *uri;
	struct vgpu_strv sets, unsets;
	bool clear, raw;
};

static int parse_args(struct cli *c, int argc, char **argv, struct params_args *a)
{
	enum { O_SET = 256, O_UNSET, O_CLEAR, O_RAW, O_FROM };
	static const struct option opts[] = {
		{ "set", required_argument, NULL, O_SET },
		{ "unset", required_argument, NULL, O_UNSET },
		{ "clear", no_argument, NULL, O_CLEAR },
		{ "raw", no_argument, NULL, O_RAW },
		{ "from", required_argument, NULL, O_FROM },
		{ "output", required_argument, NULL, 'o' },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "params", .own = opts, .own_short = "c:o:h" };
	int o;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case O_SET:
			if (!strchr(optarg, '='))
				return cli_usage_error(c, "params", "--set '%s': not KEY=VALUE",
						       optarg);
			vgpu_strv_push(&a->sets, vgpu_xstrdup(optarg));
			break;
		case O_UNSET:
			vgpu_strv_push(&a->unsets, vgpu_xstrdup(optarg));
			break;
		case O_CLEAR:
			a->clear = true;
			break;
		case O_RAW:
			a->raw = true;
			break;
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
		return cli_usage_error(c, "params", "unexpected argument '%s'", argv[optind]);
	o = cli_domain_source(c, "params", a->domain, a->from, a->output, a->uri);
	if (o)
		return o;
	if (!a->from && !a->uri)
		a->uri = cli_default_uri();
	return 0;
}

/* --clear, then --unset, then --set, in that order: "--clear --set K=V" is the set K=V. */
static int edit(struct cli *c, const struct params_args *a, struct vgpu_params *set)
{
	if (a->clear)
		set->n = 0;
	for (size_t i = 0; i < a->unsets.n; i++)
		vgpu_params_unset(set, a->unsets.items[i]);
	for (size_t i = 0; i < a->sets.n; i++) {
		VGPU_AUTOFREE char *kv = vgpu_xstrdup(a->sets.items[i]);
		char *eq = strchr(kv, '=');
		int e;

		*eq = '\0';
		e = vgpu_params_set(&c->ctx, set, kv, eq + 1, a->raw);
		if (e < 0) {
			if (e == -EINVAL && !a->raw && !vgpu_param_documented(kv))
				vgpu_error_append(&c->ctx, "give --raw to set it anyway");
			cli_error(c, "params: --set '%s': %s", a->sets.items[i],
				  vgpu_ctx_error(&c->ctx));
			return EXIT_FAILURE;
		}
	}
	return 0;
}

struct peers {
	struct vgpu_sysfs *fs;
};

/* Does another domain's vGPU have profiling on, as its vgpu_params reads? */
static bool profiling_of(void *data, const struct vgpu_record *r)
{
	struct peers *p = data;
	struct vgpu_params got;
	struct vgpu_ctx quiet;
	bool on = false;

	vgpu_ctx_init(&quiet, NULL, NULL);
	if (vgpu_live_params_read(&quiet, p->fs, r, &got) == 0)
		on = vgpu_params_profiling(&got);
	vgpu_ctx_clear(&quiet);
	return on;
}

static void print_set(struct cli *c, const char *name, const struct vgpu_params *set)
{
	char text[VGPU_PARAMS_TEXT_MAX];

	if (c->json) {
		fputs("{\"domain\":", c->out);
		cli_json_str(c->out, name);
		fputs(",\"vgpu_params\":", c->out);
		cli_json_str(c->out, vgpu_params_format(set, text, sizeof(text)));
		fputs(",\"params\":[", c->out);
		for (size_t i = 0; i < set->n; i++) {
			fputs(i ? ",{\"name\":" : "{\"name\":", c->out);
			cli_json_str(c->out, set->v[i].key);
			fputs(",\"value\":", c->out);
			cli_json_str(c->out, set->v[i].value);
			fprintf(c->out, ",\"documented\":%s,\"blocks_migration\":%s}",
				vgpu_param_documented(set->v[i].key) ? "true" : "false",
				vgpu_param_blocks_migration(&set->v[i]) ? "true" : "false");
		}
		fputs("]}\n", c->out);
		return;
	}
	if (!set->n) {
		fprintf(c->out, "%s: no vgpu_params\n", name);
		return;
	}
	fprintf(c->out, "%-20s %-10s %s\n", "PARAM", "VALUE", "NOTE");
	for (size_t i = 0; i < set->n; i++) {
		const struct vgpu_param *p = &set->v[i];
		const char *doc = vgpu_param_documented(p->key) ? "" : "undocumented";
		const char *mig = vgpu_param_blocks_migration(p) ? "blocks live migration" : "";

		if (!*doc && !*mig)
			fprintf(c->out, "%-20s %s\n", p->key, p->value);
		else
			fprintf(c->out, "%-20s %-10s %s%s%s\n", p->key, p->value, doc,
				*doc && *mig ? ", " : "", mig);
	}
}

/* The definition with the set: redefined in libvirt, or written to -o OUT (else stdout). */
static int store(struct cli *c, const struct params_args *a, struct vgpu_virt *virt,
		 struct _xmlDoc *doc)
{
	VGPU_AUTOFREE char *xml = NULL;
	struct vgpu_outfile of;
	int e = vgpu_domain_format(&c->ctx, doc, &xml);

	if (e < 0)
		return e;
	if (virt)
		return vgpu_virt_define(&c->ctx, virt, xml);
	if (!a->output) {
		fputs(xml, c->out);
		return 0;
	}
	e = vgpu_outfile_open(&c->ctx, a->output, &of);
	if (e == 0)
		e = vgpu_outfile_write(&c->ctx, &of, xml, strlen(xml));
	vgpu_outfile_close(&of);
	return e;
}

static int run(struct cli *c, struct params_args *a)
{
	VGPU_AUTOPTR(virt) virt = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *xml = NULL, *name = NULL, *uuid_text = NULL;
	VGPU_AUTOFREE struct vgpu_params *set = vgpu_xcalloc(1, sizeof(*set));
	VGPU_AUTORECORDS recs = { 0 };
	bool present = false, active = false;
	bool change = a->clear || a->sets.n || a->unsets.n;
	char uuid[VGPU_UUID_LEN] = "";
	struct peers peers;
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
		e = vgpu_domain_read_params(&c->ctx, doc, set, &present);
	if (e < 0)
		return e;
	name = vgpu_domain_field(doc, "name");
	uuid_text = vgpu_domain_field(doc, "uuid");
	if (uuid_text)
		vgpu_uuid_normalize(uuid_text, uuid);
	if (!change) {
		print_set(c, name ? name : "?", set);
		return 0;
	}
	e = edit(c, a, set);
	if (e)
		return e;
	/* profiling: one VM per GPU, among the domains whose vGPUs are active here */
	peers.fs = c->fs;
	e = vgpu_records_read(&c->ctx, c->fs, &recs);
	if (e == 0)
		e = vgpu_params_check_profiling(&c->ctx, &recs, uuid, set, profiling_of, &peers);
	if (e == 0)
		e = vgpu_domain_set_params(&c->ctx, doc, set);
	if (e == 0)
		e = store(c, a, virt, doc);
	if (e < 0)
		return e;
	/* a domain with vGPUs here: vgpus shows the set beside what the files read */
	for (size_t i = 0; i < recs.n; i++)
		if (strcmp(recs.v[i].domain_uuid, uuid) == 0) {
			if (vgpu_live_params_note(&c->ctx, c->fs, uuid, set) < 0) {
				vgpu_warn(&c->ctx, "%s", vgpu_ctx_error(&c->ctx));
				vgpu_ctx_clear(&c->ctx);
			}
			break;
		}
	if (virt || a->output)
		print_set(c, name ? name : "?", set);
	if (active)
		vgpu_log(
			&c->ctx, LOG_NOTICE,
			"domain '%s' is running: its vGPUs take the vgpu_params set at its next start",
			name ? name : a->domain);
	return 0;
}

int cmd_params(struct cli *c, int argc, char **argv)
{
	struct params_args a = { .clear = false };
	int r = parse_args(c, argc, argv, &a);

	if (r == 0) {
		r = run(c, &a);
		if (r < 0) {
			cli_error(c, "params %s: %s", a.domain ? a.domain : a.from,
				  vgpu_ctx_error(&c->ctx));
			r = EXIT_FAILURE;
		}
	}
	vgpu_strv_clear(&a.sets);
	vgpu_strv_clear(&a.unsets);
	return r;
}
