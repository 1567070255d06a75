// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl migrate DOMAIN --to URI: a live migration in one command (issue
 * #28).  It runs migrate-check (the same code and output), refuses on
 * no-go (exit 3) and on unknown unless --force (exit 1), sets the maximum
 * downtime the downtime check names, and has libvirt migrate the domain
 * live, peer to peer, persistent on the target and undefined here (never
 * post-copy: NVIDIA does not support it for vGPUs).  The target's hook
 * chooses its devices (migrate begin) and makes them (prepare).  Then it
 * asks the target for its vGPUs (`vgpuctl vgpus --json` over ssh for a
 * qemu+ssh:// URI, or --target-command CMD): each of the domain's must be
 * active there and held for its UUID.  Only then are the source's vGPUs and
 * records freed, as release does (the domain is no longer defined here).
 * Exit status as assert: 0 done, 3 refused by a check, 1 failed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "cleanup.h"
#include "cli.h"
#include "exec.h"
#include "migrate-check.h"
#include "records.h"
#include "release.h"
#include "virt.h"

#define TARGET_TIMEOUT_MS 60000

/*
 * The verdict migrate acts on: migrate-check's, except that the downtime
 * check is not held against it when it names a value (migrate sets it).
 */
static enum vgpu_mig_verdict migrate_verdict(const struct vgpu_mig_results *res,
					     unsigned long long downtime)
{
	enum vgpu_mig_verdict v = VGPU_MIG_GO;

	for (size_t i = 0; i < res->n; i++) {
		const struct vgpu_mig_result *x = &res->items[i];

		if (downtime && strcmp(x->id, "downtime") == 0)
			continue;
		if (x->status == VGPU_MIG_FAIL)
			return VGPU_MIG_NO_GO;
		if (x->status == VGPU_MIG_UNKNOWN)
			v = VGPU_MIG_UNSURE;
	}
	return v;
}

/*
 * In the target's `vgpus --json`: how many vGPUs held for @uuid are active
 * (*active) and how many are in another state (*other, the first named in
 * @state).  The document is vgpuctl's own: one key per line.
 */
static void count_target(const char *json, const char *uuid, size_t *active, size_t *other,
			 char *state, size_t len)
{
	char key[80];
	const char *p = json;

	*active = *other = 0;
	snprintf(key, sizeof(key), "\"domain_uuid\": \"%s\"", uuid);
	while ((p = strstr(p, key))) {
		const char *end = strchr(p, '}');
		const char *s = strstr(p, "\"state\": \"");

		p += strlen(key);
		if (!s || (end && s > end))
			continue;
		s += strlen("\"state\": \"");
		if (strncmp(s, "active\"", 7) == 0) {
			(*active)++;
		} else if ((*other)++ == 0) {
			snprintf(state, len, "%.*s", (int)strcspn(s, "\""), s);
		}
	}
}

struct migrate_run {
	struct cli_mig_args o; /* the domain, --to URI, --offer-command CMD and migrate's own */
	const char *connect;
};

static int parse_args(struct cli *c, int argc, char **argv, struct migrate_run *m)
{
	int r = cli_migrate_args(c, "migrate", CLI_MIG_RUN, argc, argv, &m->o);

	if (r)
		return r;
	if (c->json)
		return cli_usage_error(c, "migrate", "--json is for migrate-check");
	/* as migrate-check: -c before the command, else the default unless --sysroot */
	m->connect = c->connect ? c->connect : c->sysroot ? NULL : cli_default_uri();
	if (!m->connect) {
		cli_error(
			c,
			"migrate %s: the domain is migrated through libvirt: give -c URI with --sysroot; nothing moved",
			m->o.domain);
		return EXIT_FAILURE;
	}
	return 0;
}

/* Ask the target for its vGPUs: 0 when every one of @uuid's @want is active there. */
static int verify_target(struct cli *c, const char *const *argv, const struct migrate_run *m,
			 const char *uuid, size_t want)
{
	struct vgpu_exec_result res;
	size_t active, other;
	char state[32] = "";
	int r = vgpu_exec(&c->ctx, argv, TARGET_TIMEOUT_MS, &res);

	if (r == 0 && res.status != 0)
		r = vgpu_exec_failed(&c->ctx, argv, &res);
	if (r < 0) {
		vgpu_exec_clear(&res);
		cli_error(
			c,
			"migrate %s: it runs on '%s', but its vGPUs there are not known: %s; the source's vGPUs are kept",
			m->o.domain, m->o.to, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	count_target(res.out, uuid, &active, &other, state, sizeof(state));
	vgpu_exec_clear(&res);
	if (active != want || other) {
		cli_error(
			c,
			"migrate %s: it runs on '%s', but %zu of its %zu vGPUs are active there (%zu %s); the source's vGPUs are kept",
			m->o.domain, m->o.to, active, want, other, other ? state : "missing");
		return EXIT_FAILURE;
	}
	return 0;
}

/*
 * Does the domain still hold records here?  With libvirt >= 10.5 the
 * source's hook freed them at release end migrated; a records directory
 * that cannot be read counts as held (release then says why).
 */
static bool source_holds(struct cli *c, const char *domain)
{
	VGPU_AUTORECORDS recs = { 0 };
	bool held = false;

	if (vgpu_records_read(&c->ctx, c->fs, &recs) < 0)
		return true;
	for (size_t i = 0; i < recs.n && !held; i++)
		held = vgpu_mig_record_is(&recs.v[i], domain);
	return held;
}

/* After the migration: free what the domain held here (the definition went with it). */
static int release_source(struct cli *c, const struct migrate_run *m, struct _xmlDoc *doc,
			  const struct vgpu_domain_info *dom)
{
	struct vgpu_domain_target t = { 0 }; /* the edited definition is handed back, dropped */
	char *xml = NULL;
	int r = vgpu_release(&c->ctx, c->fs, doc, dom, NULL, &t, &xml);

	free(xml);
	if (r < 0) {
		cli_error(
			c,
			"migrate %s: it runs on '%s' with its vGPUs, but the source's were not freed: %s; free them with vgpuctl release --from FILE",
			m->o.domain, m->o.to, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	return 0;
}

/* The target's argv for `vgpuctl vgpus --json`, into @argv; 0 or an exit status (said). */
static int target_argv(struct cli *c, const struct migrate_run *m, char *buf, size_t len,
		       const char **argv)
{
	size_t n = 0;

	if (cli_migrate_target_argv(c, "migrate", m->o.to, m->o.target_cmd, "--target-command",
				    "vgpus", buf, len, argv))
		return EXIT_USAGE;
	while (argv[n])
		n++;
	if (!n) { /* as migrate-check's: not a usage error, but nothing can be verified */
		cli_error(
			c,
			"migrate %s: --to '%s': no way to ask the target for its vGPUs afterwards (a qemu+ssh:// URI, or --target-command CMD); nothing moved",
			m->o.domain, m->o.to);
		return EXIT_FAILURE;
	}
	if (!m->o.target_cmd) { /* CMD is the whole command; over ssh: vgpuctl vgpus --json */
		argv[n++] = "--json";
		argv[n] = NULL;
	}
	return 0;
}

int cmd_migrate(struct cli *c, int argc, char **argv)
{
	struct migrate_run m = { 0 };
	struct vgpu_mig_results res = { 0 };
	const char *check[8], *target[CLI_TARGET_WORDS + 2];
	VGPU_AUTOFREE char *buf = NULL;
	VGPU_AUTOFREE char *xml = NULL;
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	struct vgpu_domain_info dom = { 0 };
	unsigned long long downtime = 0;
	enum vgpu_mig_verdict verdict;
	size_t n = 0, want = 0;
	bool active = false;
	int r = parse_args(c, argc, argv, &m);

	if (r)
		return r;
	buf = vgpu_xmalloc(strlen(m.o.to) + (m.o.target_cmd ? strlen(m.o.target_cmd) : 0) + 16);
	r = target_argv(c, &m, buf,
			strlen(m.o.to) + (m.o.target_cmd ? strlen(m.o.target_cmd) : 0) + 16,
			target);
	if (r)
		return r;
	/* migrate-check, as its own command: its lines and verdict are ours */
	check[n++] = "migrate-check";
	check[n++] = m.o.domain;
	check[n++] = "--to";
	check[n++] = m.o.to;
	if (m.o.cmd) {
		check[n++] = "--offer-command";
		check[n++] = m.o.cmd;
	}
	check[n] = NULL;
	r = cli_migrate_check(c, (int)n, (char **)check, &res);
	if (!res.n) /* the checks did not run: migrate-check said why */
		return r ? r : EXIT_FAILURE;
	downtime = res.downtime_advice_ms;
	verdict = migrate_verdict(&res, downtime);
	if (downtime && vgpu_mig_result_find(&res, "downtime")->status != VGPU_MIG_PASS)
		fprintf(c->err,
			"vgpuctl: migrate %s: downtime is not held against it: migrate sets the maximum downtime to %llu ms first\n",
			m.o.domain, downtime);
	vgpu_mig_results_free(&res);
	if (verdict == VGPU_MIG_NO_GO) {
		cli_error(c, "migrate %s: refused: a check failed (FAIL above); nothing moved",
			  m.o.domain);
		return EXIT_DIFFERS;
	}
	if (verdict == VGPU_MIG_UNSURE && !m.o.force) {
		cli_error(
			c,
			"migrate %s: the verdict is unknown (UNKNOWN above); nothing moved; --force migrates anyway",
			m.o.domain);
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < c->recs.n; i++)
		want += vgpu_mig_record_is(&c->recs.v[i], m.o.domain);
	/* the source's definition, for the release here afterwards */
	if (vgpu_virt_open_host(&c->ctx, m.connect, c->fs, &v) < 0 ||
	    vgpu_virt_domain_xml(&c->ctx, v, m.o.domain, &xml, &active) < 0 ||
	    vgpu_domain_parse(&c->ctx, xml, strlen(xml), m.o.domain, &doc) < 0) {
		cli_error(c, "migrate %s: %s; nothing moved", m.o.domain, vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (!active) {
		cli_error(
			c,
			"migrate %s: the domain is not running; a live migration needs it running; nothing moved",
			m.o.domain);
		return EXIT_FAILURE;
	}
	vgpu_domain_read(c->fs, doc, &dom);
	if (vgpu_virt_migrate(&c->ctx, v, m.o.domain, m.o.to, m.o.migrate_uri, downtime) < 0) {
		cli_error(c, "migrate %s: %s", m.o.domain, vgpu_ctx_error(&c->ctx));
		vgpu_domain_info_clear(&dom);
		return EXIT_FAILURE;
	}
	r = verify_target(c, target, &m, dom.uuid, want);
	if (r == 0 && want && source_holds(c, m.o.domain))
		r = release_source(c, &m, doc, &dom);
	if (r == 0)
		fprintf(c->out,
			"migrated: %s runs on %s with %zu vGPU%s active there; the source's %s freed\n",
			m.o.domain, m.o.to, want, want == 1 ? "" : "s", want == 1 ? "is" : "are");
	vgpu_domain_info_clear(&dom);
	return r;
}
