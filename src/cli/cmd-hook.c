// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook DOMAIN OPERATION SUB-OPERATION EXTRA: the part of the libvirt
 * qemu hook that runs once cmd_hook() (hook-filter.c, no libxml2) found
 * work for the domain.  It reads the domain's UUID from the XML on stdin
 * (untrusted: size cap, no entities, no network) and hands the decisions
 * to the library (hook.c).  Never calls libvirt, never writes to stdout
 * (libvirt parses it for migrate/restore).
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
	struct vgpu_hook_domain d = { .name = argv[1], .uuid = uuid, .mdevs = &mdevs, .vfs = &vfs };
	const char *op = argv[2];
	int e;

	(void)argc;
	openlog("vgpuctl", LOG_PID, LOG_DAEMON);
	c->ctx.log_fn = hook_log;
	c->ctx.log_data = c;
	/* cmd_hook (the core) read stdin and saw work for the domain, or could not tell */
	e = parse_domain(&c->ctx, c, uuid, &mdevs, &vfs);
	if (e == 0 && !c->fs)
		e = vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs);
	if (e == 0 && strcmp(op, "started") == 0)
		vgpu_hook_started(c->fs, uuid);
	else if (e == 0)
		e = strcmp(op, "prepare") == 0 ? vgpu_hook_prepare(&c->ctx, c->fs, &d) :
						 vgpu_hook_release(&c->ctx, c->fs, &d);
	if (e < 0) {
		const char *msg = vgpu_ctx_error(&c->ctx);

		syslog(LOG_ERR, "%s %s: %s", op, d.name, msg);
		cli_error(c, "%s %s: %s", op, d.name, msg);
	}
	closelog();
	return e < 0 ? EXIT_FAILURE : 0;
}
