// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl migrate-offer: the target's side of a live migration check.  It
 * reads the source's manifest on stdin and answers with the offer: this
 * host's versions and, per vGPU, the GPU the capacity model would give or
 * why none (docs/migration.md).  It writes nothing.
 *
 * vgpuctl migrate-check DOMAIN --to URI: the source's side.  It builds the
 * manifest of the domain's vGPUs (its owner records), sends it to the
 * target's migrate-offer (--offer-command, or ssh for a qemu+ssh URI), runs
 * the checks and prints one line each, then the verdict.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "exec.h"
#include "json.h"
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

#define OFFER_TIMEOUT_MS 60000
#define OFFER_MAX_WORDS 64

/*
 * The argv that reaches the target's migrate-offer: @cmd split at blanks
 * (no quoting, no shell), else ssh for a qemu+ssh:// URI; NULL (n = 0)
 * when there is no way.  The words point into @buf.
 */
static int offer_argv(struct cli *c, const char *uri, const char *cmd, char *buf, size_t len,
		      const char **argv)
{
	size_t n = 0;
	char *save = NULL;

	if (cmd) {
		snprintf(buf, len, "%s", cmd);
		for (char *w = strtok_r(buf, " \t", &save); w && n < OFFER_MAX_WORDS;
		     w = strtok_r(NULL, " \t", &save))
			argv[n++] = w;
		if (!n)
			return cli_usage_error(c, "migrate-check", "--offer-command is empty");
	} else if (!strncmp(uri, "qemu+ssh://", 11)) {
		char *host = buf, *port;

		snprintf(buf, len, "%s", uri + 11);
		host[strcspn(host, "/?")] = '\0';
		if (!*host || *host == '-')
			return cli_usage_error(c, "migrate-check", "--to '%s': no host to reach",
					       uri);
		argv[n++] = "ssh";
		argv[n++] = "-o";
		argv[n++] = "BatchMode=yes";
		/* HOST, HOST:PORT, [V6], [V6]:PORT; user@ stays with the host for ssh */
		port = strrchr(host, ':');
		if (port && strchr(host, '[') && (!strchr(host, ']') || port < strchr(host, ']')))
			port = NULL;
		if (port) {
			*port++ = '\0';
			argv[n++] = "-p";
			argv[n++] = port;
		}
		if (strchr(host, '[') && host[strlen(host) - 1] == ']') {
			host[strlen(host) - 1] = '\0';
			memmove(strchr(host, '['), strchr(host, '[') + 1,
				strlen(strchr(host, '[')));
		}
		argv[n++] = "--";
		argv[n++] = host;
		argv[n++] = "vgpuctl";
		argv[n++] = "migrate-offer";
	}
	argv[n] = NULL;
	return 0;
}

/* Ask the target; 0 with *dst filled, or -1 (said on stderr) when it gave no offer. */
static int ask_target(struct cli *c, const char *const *argv, const char *manifest,
		      struct vgpu_mig_host *dst)
{
	struct vgpu_exec_result res;
	int r = vgpu_exec_input(&c->ctx, argv, manifest, strlen(manifest), OFFER_TIMEOUT_MS, &res);

	if (r == 0 && res.status != 0)
		r = vgpu_exec_failed(&c->ctx, argv, &res);
	if (r == 0)
		r = vgpu_mig_manifest_parse(&c->ctx, res.out, res.out_len, dst);
	if (r == 0 && !dst->reasons && dst->n_vgpus) {
		vgpu_mig_offer_clear(dst);
		r = vgpu_error(&c->ctx, -EINVAL, "the target's answer is a manifest, not an offer");
	}
	vgpu_exec_clear(&res);
	if (r < 0) {
		fprintf(c->err, "vgpuctl: migrate-check: the target gave no offer: %s\n",
			vgpu_ctx_error(&c->ctx));
		return -1;
	}
	return 0;
}

static const char *verdict_name(enum vgpu_mig_verdict v)
{
	return v == VGPU_MIG_GO ? "go" : v == VGPU_MIG_NO_GO ? "no-go" : "unknown";
}

/* One line per check, `STATUS ID what: source vs target — next`, then the verdict. */
static void print_text(struct cli *c, const struct vgpu_mig_results *res,
		       enum vgpu_mig_verdict verdict)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct vgpu_mig_result *x = &res->items[i];

		fprintf(c->out, "%s %s %s: %s vs %s%s%s\n", vgpu_mig_status_name(x->status), x->id,
			x->what, x->source, x->target, x->next[0] ? " \u2014 " : "", x->next);
	}
	fprintf(c->out, "%s\n", verdict_name(verdict));
}

/* {"checks": [{"id", "status", "what", "source", "target", "next"}, ...], "verdict": ...} */
static void print_json(struct cli *c, const struct vgpu_mig_results *res,
		       enum vgpu_mig_verdict verdict)
{
	fputs("{\"checks\": [", c->out);
	for (size_t i = 0; i < res->n; i++) {
		const struct vgpu_mig_result *x = &res->items[i];
		const char *keys[] = { "id", "status", "what", "source", "target", "next" };
		const char *vals[] = { x->id,	  vgpu_mig_status_name(x->status),
				       x->what,	  x->source,
				       x->target, x->next };

		fputs(i ? ",\n  {" : "\n  {", c->out);
		for (size_t k = 0; k < 6; k++) {
			fprintf(c->out, "%s\"%s\": ", k ? ", " : "", keys[k]);
			cli_json_str(c->out, vals[k]);
		}
		fputs("}", c->out);
	}
	fprintf(c->out, "\n],\n\"verdict\": \"%s\"}\n", verdict_name(verdict));
}

int cmd_migrate_check(struct cli *c, int argc, char **argv)
{
	return cli_migrate_check(c, argc, argv, NULL);
}

int cli_migrate_check(struct cli *c, int argc, char **argv, struct vgpu_mig_results *keep)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "offer-command", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_opts go = { .cmd = "migrate-check", .own = opts, .own_short = "h" };
	const char *to = NULL, *cmd = NULL, *domain, *target_argv[OFFER_MAX_WORDS + 1];
	VGPU_AUTOFREE char *manifest = NULL;
	VGPU_AUTOFREE char *buf = NULL;
	struct vgpu_mig_host src = { 0 }, dst = { 0 };
	struct vgpu_mig_results res;
	enum vgpu_mig_verdict verdict;
	bool asked = false;
	int o, r;

	while ((o = cli_getopt(c, &go, argc, argv)) != -1) {
		switch (o) {
		case 't':
			to = optarg;
			break;
		case 'O':
			cmd = optarg;
			break;
		case 'h':
			return CLI_HELP;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind >= argc)
		return cli_usage_error(c, "migrate-check",
				       "which domain? (DOMAIN: a name or UUID)");
	domain = argv[optind++];
	if (optind < argc)
		return cli_usage_error(c, "migrate-check", "unexpected argument '%s'",
				       argv[optind]);
	if (!to)
		return cli_usage_error(c, "migrate-check", "where to? (--to URI)");
	buf = vgpu_xmalloc(strlen(to) + (cmd ? strlen(cmd) : 0) + 1);
	r = offer_argv(c, to, cmd, buf, strlen(to) + (cmd ? strlen(cmd) : 0) + 1, target_argv);
	if (r)
		return r;
	r = cli_read_host(c, VGPU_READ_TYPES | CLI_READ_NVML);
	if (r)
		return r;
	vgpu_mig_manifest_of(c->model, &c->recs, domain, &src);
	vgpu_host_vgpu_params(c->fs, &c->recs, domain, &src);
	vgpu_host_versions(c->fs, &src.kernel, src.driver_version, sizeof(src.driver_version));
	manifest = vgpu_mig_manifest_format(&src);
	if (!target_argv[0])
		fprintf(c->err,
			"vgpuctl: migrate-check: no way to reach '%s' (a qemu+ssh:// URI, or --offer-command): its checks are UNKNOWN\n",
			to);
	else
		asked = ask_target(c, target_argv, manifest, &dst) == 0;
	vgpu_mig_check(&src, asked ? &dst : NULL, &res);
	verdict = vgpu_mig_verdict_of(&res);
	if (c->json)
		print_json(c, &res, verdict);
	else
		print_text(c, &res, verdict);
	if (keep) /* vgpuctl migrate reads them */
		*keep = res;
	else
		vgpu_mig_results_free(&res);
	vgpu_mig_offer_clear(&src);
	vgpu_mig_offer_clear(&dst);
	return verdict == VGPU_MIG_GO ? EXIT_SUCCESS : verdict == VGPU_MIG_NO_GO ? 3 : EXIT_FAILURE;
}

int cli_migrate_ssh_argv(struct cli *c, const char *uri, const char *what, char *buf, size_t len,
			 const char **argv)
{
	int r = offer_argv(c, uri, NULL, buf, len, argv);
	size_t n = 0;

	while (r == 0 && argv[n])
		n++;
	if (n) /* "ssh ... HOST vgpuctl migrate-offer": the last word is @what */
		argv[n - 1] = what;
	return r;
}
