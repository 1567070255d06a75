// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small string and number helpers. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu-priv.h"

char *vgpu_strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int vgpu_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno)
		return -errno;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int vgpu_parse_hex(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	/* strtoul would accept a second "0x" (or a sign) here */
	if (!isxdigit((unsigned char)*s) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno)
		return -errno;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

char *vgpu_xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");

	if (!r)
		abort(); /* out of memory on a few bytes: nothing sensible left to do */
	return r;
}

char *vgpu_asprintf(const char *fmt, ...)
{
	char *r = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&r, fmt, ap) < 0)
		abort();
	va_end(ap);
	return r;
}

int vgpu_bdf_normalize(const char *in, char out[VGPU_BDF_LEN])
{
	unsigned dom = 0, bus, dev, fn;
	char tail;
	const char *p = in;
	size_t colons = 0;

	for (const char *c = in; *c; c++) {
		if (isspace((unsigned char)*c))
			return -EINVAL; /* sscanf's %x would skip them */
		colons += *c == ':';
	}
	if (colons == 1) {
		if (sscanf(p, "%2x:%2x.%1x%c", &bus, &dev, &fn, &tail) != 3)
			return -EINVAL;
	} else if (colons == 2) {
		/* nvidia-smi prints an 8-digit domain: 00000000:3D:00.0 */
		const char *c = strchr(p, ':');

		if (c - p > 8 || c == p)
			return -EINVAL;
		if (sscanf(p, "%x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, VGPU_BDF_LEN, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}
