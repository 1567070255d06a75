// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook: the cheap part, in the binary.  libvirt calls every hook
 * for every domain and operation; all but prepare/started/release of a
 * domain that owner records name exit 0 here without reading stdin or
 * loading libxml2.  So do the two calls of every start and stop of an
 * assigned domain that have nothing to change: prepare when each of its
 * vGPUs is there with its recorded type and parent, release when none is
 * per-start and no failed start left a note.  The rest is cmd_hook_live()
 * in the XML module, which parses stdin (libxml2, hardened) for the UUID,
 * takes the lock and reads everything again under it: what is decided here
 * without the lock only ever leads to "nothing to do", the answer the
 * module would give on the same host.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "records.h"

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* release: is there anything to free (a per-start vGPU, a failed start's note)? */
static bool release_has_work(struct cli *c, const struct vgpu_records *recs, const char *dom)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *note = NULL;
	size_t len;

	for (size_t i = 0; i < recs->n; i++)
		if (is(recs->v[i].domain, dom) && recs->v[i].lifetime == VGPU_LIFETIME_PER_START)
			return true;
	return vgpu_sysdir_open(c->fs, &d, CLI_PREPARED_DIR) == 0 &&
	       vgpu_sysfs_read_file(&d, 64 * 1024, &note, &len, "%s", dom) == 0;
}

/* prepare: is any vGPU of the domain missing, of another type, or elsewhere? */
static bool prepare_has_work(struct cli *c, const struct vgpu_records *recs, const char *dom)
{
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		struct vgpu_live_state st;

		if (!is(r->domain, dom))
			continue;
		if (vgpu_live_query(&c->ctx, c->fs, r, &st) < 0 || !vgpu_live_as_recorded(&st, r))
			return true; /* the module says what is wrong, or fixes it */
	}
	return false;
}

/* libvirt refuses '/' in names; a name that would be a path is not one of ours */
static bool plain_name(const char *s)
{
	return *s && !strchr(s, '/') && !is(s, ".") && !is(s, "..");
}

int cmd_hook(struct cli *c, int argc, char **argv)
{
	VGPU_AUTORECORDS recs = { 0 };
	const char *op = argc > 2 ? argv[2] : NULL, *sub = argc > 3 ? argv[3] : NULL;
	bool ours = false;

	if (argc == 2 && (is(argv[1], "--help") || is(argv[1], "-h")))
		return -1;
	if (argc < 3)
		return cli_usage_error(c, "hook", "DOMAIN and OPERATION are required");
	if (!(is(op, "prepare") && is(sub, "begin")) && !(is(op, "release") && is(sub, "end")) &&
	    !(is(op, "started") && is(sub, "begin")))
		return 0;
	if (!plain_name(argv[1]))
		return 0;
	if (vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) {
		cli_error(c, "hook %s %s: %s", op, argv[1], vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if (is(op, "started")) {
		VGPU_AUTOSYSDIR d = { .fd = -1 };

		/* the start went through: its release is a normal stop */
		if (vgpu_sysdir_open(c->fs, &d, CLI_PREPARED_DIR) == 0)
			vgpu_sysfs_unlink(&d, argv[1]);
		return 0;
	}
	if (vgpu_records_read(&c->ctx, c->fs, &recs) < 0) {
		cli_error(c, "hook %s %s: %s", op, argv[1], vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < recs.n && !ours; i++)
		ours = strcmp(recs.v[i].domain, argv[1]) == 0;
	if (!ours)
		return 0;
	if (is(op, "prepare") ? !prepare_has_work(c, &recs, argv[1]) :
				!release_has_work(c, &recs, argv[1]))
		return 0;
	return cli_run_module(c, "hook_live", argc, argv);
}
