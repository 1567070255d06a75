// SPDX-License-Identifier: LGPL-2.1-or-later
/* Error recording and warnings: the library never prints. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vgpu-priv.h"

int vgpu_set_error(struct vgpu_host *h, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

void vgpu_warn(struct vgpu_host *h, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (!h->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h->warn(h->warn_data, msg);
}

const char *vgpu_last_error(const struct vgpu_host *h)
{
	return h->err[0] ? h->err : "unknown error";
}

const char *vgpu_path_show(const struct vgpu_host *h, const char *rel, char *buf, size_t len)
{
	if (strcmp(h->root, "/") == 0)
		snprintf(buf, len, "/%s", rel);
	else
		snprintf(buf, len, "%s/%s", h->root, rel);
	return buf;
}
