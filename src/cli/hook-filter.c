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
#include "hook.h"
#include "records.h"

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
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
		vgpu_hook_started(c->fs, argv[1]);
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
	if (!vgpu_hook_has_work(&c->ctx, c->fs, op, &(struct vgpu_hook_domain){ .name = argv[1] },
				&recs))
		return 0;
	return cli_run_module(c, "hook_live", argc, argv);
}
