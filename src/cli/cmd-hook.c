// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook DOMAIN OPERATION SUB-OPERATION EXTRA: the part of the libvirt
 * qemu hook that runs once the library's cheap pass (called by cmd_hook(),
 * hook-filter.c, no libxml2) asked for the hardened parse.  It parses the
 * XML the filter read from stdin (untrusted: size cap, no entities, no
 * network) and calls the same library entry with the parsed domain, which
 * decides under the lock (hook.c).  Never calls libvirt, never writes to
 * stdout (libvirt parses it for migrate/restore).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cleanup.h"
#include "cli.h"
#include "domxml.h"
#include "hook.h"

/* Errors and warnings: stderr (libvirt shows it to whoever started the VM) and syslog. */
static void hook_log(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	syslog(priority, "%s", msg);
	if (priority <= LOG_WARNING)
		fprintf(c->err, "vgpuctl: warning: %s\n", msg);
}

/* The domain's UUID and hostdevs from the XML the filter read from stdin: the hardened parser. */
static int parse_domain(struct vgpu_ctx *ctx, const struct cli *c, char uuid[VGPU_UUID_LEN],
			struct vgpu_strv *mdevs, struct vgpu_strv *vfs)
{
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *field = NULL;

	if (vgpu_domain_parse(ctx, c->hook_xml ? c->hook_xml : "", c->hook_xml_len,
			      "the domain XML on stdin", &doc) < 0)
		return -EINVAL;
	field = vgpu_domain_field(doc, "uuid");
	if (!field || !vgpu_uuid_normalize(field, uuid))
		return vgpu_error(ctx, -EINVAL, "the domain XML on stdin has no usable <uuid>");
	vgpu_domain_hostdevs(doc, mdevs, vfs);
	return 0;
}

int cmd_hook_live(struct cli *c, int argc, char **argv)
{
	VGPU_AUTOSTRV mdevs = { 0 };
	VGPU_AUTOSTRV vfs = { 0 };
	char uuid[VGPU_UUID_LEN];
	const struct vgpu_hook_domain d = { .uuid = uuid, .mdevs = &mdevs, .vfs = &vfs };
	const struct vgpu_hook_input in = { .name = argv[1],
					    .parsed = &d,
					    .lock_wait_ms = VGPU_HOOK_LOCK_WAIT_MS };
	const char *op = argv[2];
	struct vgpu_hook_result res;
	enum vgpu_hook_phase phase;
	int e = -EINVAL;

	openlog("vgpuctl", LOG_PID, LOG_DAEMON);
	c->ctx.log_fn = hook_log;
	c->ctx.log_data = c;
	/* cmd_hook() (the core) got here only for a phase of ours, with stdin read */
	if (!vgpu_hook_phase_of(argv[1], op, argc > 3 ? argv[3] : NULL, &phase))
		vgpu_error(&c->ctx, -EINVAL, "not a call the hook acts on");
	else
		e = parse_domain(&c->ctx, c, uuid, &mdevs, &vfs);
	if (e == 0 && !c->fs)
		e = vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs);
	if (e == 0)
		e = vgpu_hook_run(&c->ctx, c->fs, phase, &in, &res);
	if (e < 0) {
		const char *msg = vgpu_ctx_error(&c->ctx);

		syslog(LOG_ERR, "%s %s: %s", op, in.name, msg);
		cli_error(c, "%s %s: %s", op, in.name, msg);
	}
	closelog();
	return e < 0 ? EXIT_FAILURE : 0;
}
