// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook: the cheap part, in the binary.  libvirt calls every hook
 * for every domain and operation.  This file decides nothing: it reads
 * stdin when the library asks for it (vgpu_hook_run(), hook.c, whose cheap
 * pass takes no lock and only ever concludes "nothing to do"), and loads
 * the XML module (cmd_hook_live(), libxml2, hardened) only when the library
 * says the XML must be parsed; the module calls the same library entry
 * with the parsed domain.  Operations and domains that are not ours exit 0
 * without reading stdin or loading libxml2, and so do the calls of every
 * start and stop of an assigned domain that have nothing to change.
 * migrate begin reads stdin (the domain comes from another host, no record
 * here names it) and loads the module only when the XML names our metadata.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hook.h"

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* Does @buf hold a whole document: the root's end tag, then only blanks? */
static bool complete(const char *buf, size_t len)
{
	while (len && strchr(" \t\r\n", buf[len - 1]))
		len--;
	return len >= 9 && memcmp(buf + len - 9, "</domain>", 9) == 0;
}

/*
 * The domain XML on stdin, read once for the whole hook: bounded in size
 * and time, and done when the document is (libvirt writes it and closes;
 * a writer that keeps the pipe open does not hold up a start).
 */
static int read_stdin(struct cli *c)
{
	size_t cap = VGPU_HOOK_XML_MAX + 1;
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->hook_xml = vgpu_xmalloc(cap + 1);
	while (c->hook_xml_len < cap && !complete(c->hook_xml, c->hook_xml_len)) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = VGPU_HOOK_STDIN_MS -
		       ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return vgpu_error(&c->ctx, -ETIMEDOUT,
					  "no whole domain XML on stdin after %d ms",
					  VGPU_HOOK_STDIN_MS);
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return vgpu_error(&c->ctx, -errno,
					  "cannot read the domain XML on stdin: %s",
					  strerror(errno));
		}
		if (!pfd.revents)
			continue;
		n = read(STDIN_FILENO, c->hook_xml + c->hook_xml_len, cap - c->hook_xml_len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return vgpu_error(&c->ctx, -errno,
					  "cannot read the domain XML on stdin: %s",
					  strerror(errno));
		if (n == 0)
			break;
		c->hook_xml_len += (size_t)n;
	}
	c->hook_xml[c->hook_xml_len] = '\0';
	return 0;
}

/* vgpu_hook_input.read_xml: stdin, read once for the whole hook (the module parses the same text)
 */
static int give_xml(void *data, struct vgpu_ctx *ctx, const char **xml, size_t *len)
{
	struct cli *c = data;
	int e;

	(void)ctx; /* read_stdin() reports in c->ctx, which it is */
	if (!c->hook_xml && (e = read_stdin(c)) < 0)
		return e;
	*xml = c->hook_xml;
	*len = c->hook_xml_len;
	return 0;
}

static int hook_fail(struct cli *c, const char *op, const char *dom)
{
	cli_error(c, "hook %s %s: %s", op, dom, vgpu_ctx_error(&c->ctx));
	return EXIT_FAILURE;
}

int cmd_hook(struct cli *c, int argc, char **argv)
{
	const char *op = argc > 2 ? argv[2] : NULL, *sub = argc > 3 ? argv[3] : NULL;
	struct vgpu_hook_input in = { .name = argc > 1 ? argv[1] : NULL,
				      .read_xml = give_xml,
				      .xml_data = c,
				      .lock_wait_ms = VGPU_HOOK_LOCK_WAIT_MS,
				      /* EXTRA: release's shut-off reason (libvirt 10.5 and later)
				       */
				      .reason = argc > 4 ? argv[4] : NULL };
	struct vgpu_hook_result res;
	enum vgpu_hook_phase phase;

	if (argc == 2 && (is(argv[1], "--help") || is(argv[1], "-h")))
		return CLI_HELP;
	if (argc < 3)
		return cli_usage_error(c, "hook", "DOMAIN and OPERATION are required");
	if (!vgpu_hook_phase_of(argv[1], op, sub, &phase))
		return 0;
	if (vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0 ||
	    vgpu_hook_run(&c->ctx, c->fs, phase, &in, &res) < 0)
		return hook_fail(c, op, argv[1]);
	return res.next == VGPU_HOOK_PARSE_XML ? cli_run_module(c, "hook_live", argc, argv) : 0;
}
