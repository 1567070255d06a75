// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in for libvirt.so.0 that answers virGetVersion() alone, with the
 * version VGPU_TEST_LIBVIRT_VERSION names (major * 1000000 + minor * 1000 +
 * micro): the hook asks the library's version without a connection, and
 * tests/live/migrate-hook.sh needs both sides of libvirt 11.0 (mdev <-> VF)
 * whatever libvirt this machine has.  Put where dlopen("libvirt.so.0")
 * finds it first (LD_LIBRARY_PATH, a link named libvirt.so.0).
 */
#include <stdlib.h>

int virGetVersion(unsigned long *lib, const char *type, unsigned long *type_ver);

int virGetVersion(unsigned long *lib, const char *type, unsigned long *type_ver)
{
	const char *v = getenv("VGPU_TEST_LIBVIRT_VERSION");

	(void)type;
	if (!v || !*v)
		return -1; /* as libvirt does when it cannot tell */
	if (lib)
		*lib = strtoul(v, NULL, 10);
	if (type_ver)
		*type_ver = 0; /* no driver named: none asked of it */
	return 0;
}
