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
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static int hook_fail(struct cli *c, const char *op, const char *dom)
{
	cli_error(c, "hook %s %s: %s", op, dom, vgpu_ctx_error(&c->ctx));
	return EXIT_FAILURE;
}

int cmd_hook(struct cli *c, int argc, char **argv)
{
	VGPU_AUTORECORDS recs = { 0 };
	const char *op = argc > 2 ? argv[2] : NULL, *sub = argc > 3 ? argv[3] : NULL;
	char uuid[VGPU_UUID_LEN];
	struct vgpu_hook_domain d = { .uuid = uuid };
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
	d.name = argv[1];
	if (vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0)
		return hook_fail(c, op, argv[1]);
	if (is(op, "started")) { /* notes are named by the domain: no stdin needed */
		vgpu_hook_started(c->fs, argv[1]);
		return 0;
	}
	if (vgpu_records_read(&c->ctx, c->fs, &recs) < 0)
		return hook_fail(c, op, argv[1]);
	/* a host without records: nothing of any domain is ours (stdin is not read) */
	if (!recs.n && is(op, "prepare"))
		return 0;
	if (!recs.n && !vgpu_hook_has_work(&c->ctx, c->fs, op, &d, &recs))
		return 0;
	if (read_stdin(c) < 0)
		return hook_fail(c, op, argv[1]);
	/* records are matched by UUID: a renamed domain keeps its vGPUs */
	if (vgpu_hook_scan_uuid(c->hook_xml, c->hook_xml_len, uuid) < 0) {
		/* no UUID to be had without the parser: by name, is the domain ours at all? */
		for (size_t i = 0; i < recs.n && !ours; i++)
			ours = is(recs.v[i].domain, argv[1]);
		/* ours: the hardened parser decides (and refuses hostile input) */
		return ours ? cli_run_module(c, "hook_live", argc, argv) : 0;
	}
	for (size_t i = 0; i < recs.n && !ours; i++)
		ours = vgpu_hook_owns(&d, &recs.v[i]);
	if (is(op, "prepare") && vgpu_hook_maybe_foreign(c->hook_xml, &recs, uuid))
		return cli_run_module(c, "hook_live", argc, argv);
	if (!ours || !vgpu_hook_has_work(&c->ctx, c->fs, op, &d, &recs))
		return 0;
	return cli_run_module(c, "hook_live", argc, argv);
}
