// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The module loader: the commands that need libxml2, libyaml or libvirt
 * (xml, plan, assign, release, apply, assert, the hook's work) are
 * vgpuctl-xml.so, loaded on first use, so the inventory commands and the
 * hook's no-op calls never load those libraries.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

#ifndef VGPUCTL_MODULE_DIR
#define VGPUCTL_MODULE_DIR "/usr/lib/vgpuctl"
#endif
#define XML_MODULE "vgpuctl-xml.so"

/*
 * The commands that need libxml2 (xml, plan) live in a module: loading
 * libxml2 and ICU costs more than the inventory commands themselves.  The
 * module sits next to the binary in a build tree, in VGPUCTL_MODULE_DIR
 * once installed.
 */
int cli_run_module(struct cli *c, const char *name, int argc, char **argv)
{
	char exe[PATH_MAX], path[PATH_MAX + sizeof(XML_MODULE) + 1];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *dl = NULL;
	char sym[32];
	int (*run)(struct cli *, int, char **);

	if (n > 0) {
		exe[n] = '\0';
		snprintf(path, sizeof(path), "%s/" XML_MODULE, dirname(exe));
		if (access(path, R_OK) == 0)
			dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!dl)
		dl = dlopen(VGPUCTL_MODULE_DIR "/" XML_MODULE, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		cli_error(c, "cannot load the '%s' command (%s): %s", name,
			  VGPUCTL_MODULE_DIR "/" XML_MODULE, dlerror());
		return EXIT_FAILURE;
	}
	snprintf(sym, sizeof(sym), "cmd_%s", name);
	for (char *p = sym; *p; p++) /* migrate-check: cmd_migrate_check */
		if (*p == '-')
			*p = '_';
	*(void **)&run = dlsym(dl, sym);
	if (!run) {
		cli_error(c, "%s lacks %s", XML_MODULE, sym);
		return EXIT_FAILURE;
	}
	/* not dlclose()d: its cleanup (libxml2's) may run at exit */
	return run(c, argc, argv);
}
