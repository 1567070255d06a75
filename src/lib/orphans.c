// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * orphans.c - the class of a vGPU from its evidence (pure).
 */
#include <stdlib.h>

#include "orphans.h"

const char *vgpu_oclass_str(enum vgpu_oclass c)
{
	static const char *const names[VGPU_OCLASS_N] = {
		[VGPU_OCLASS_IN_USE] = "in-use",     [VGPU_OCLASS_FOREIGN] = "foreign",
		[VGPU_OCLASS_WEDGED] = "wedged",     [VGPU_OCLASS_STALE] = "stale",
		[VGPU_OCLASS_ORPHAN] = "orphan",     [VGPU_OCLASS_OWNED] = "owned",
		[VGPU_OCLASS_CONFIG] = "config",     [VGPU_OCLASS_YOUNG] = "young",
		[VGPU_OCLASS_INCOMING] = "incoming", [VGPU_OCLASS_CONFLICT] = "conflict",
		[VGPU_OCLASS_UNKNOWN] = "unknown",
	};

	return (unsigned)c < VGPU_OCLASS_N ? names[c] : "unknown";
}

void vgpu_odoms_free(struct vgpu_odom *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++) {
		free(d[i].name);
		vgpu_strv_clear(&d[i].mdevs);
		vgpu_strv_clear(&d[i].vfs);
	}
	free(d);
}

enum vgpu_oclass vgpu_oclass_of(const struct vgpu_evidence *e, long long grace_s)
{
	if (e->holder > 0 || e->nvml_vm[0])
		return VGPU_OCLASS_IN_USE;
	if (e->other_domain_names)
		return VGPU_OCLASS_FOREIGN;
	if (e->wedged)
		return VGPU_OCLASS_WEDGED;
	if (e->record && e->conflict)
		return VGPU_OCLASS_CONFLICT;
	/* below: the absence of a holder or a domain matters, so both must be known */
	if (!e->holders_known || !e->domains_known)
		return VGPU_OCLASS_UNKNOWN;
	if (e->nvml_maybe && !e->record_domain_names)
		return VGPU_OCLASS_UNKNOWN;
	if (e->record && e->record_domain_names)
		return VGPU_OCLASS_OWNED;
	if (e->record)
		return e->incoming ? VGPU_OCLASS_INCOMING : VGPU_OCLASS_STALE;
	if (e->config)
		return VGPU_OCLASS_CONFIG;
	if (e->age_s < 0)
		return VGPU_OCLASS_UNKNOWN;
	return e->age_s >= grace_s ? VGPU_OCLASS_ORPHAN : VGPU_OCLASS_YOUNG;
}
