// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Type catalogues: each GPU's list of vGPU types (id and name), kept while
 * it is whole and merged back when the host is read (see catalog.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "sysfs.h"

#define CATALOG_MAX (256 * 1024)

static size_t stored_lines(const struct vgpu_sysdir *d, const char *name)
{
	VGPU_AUTOFREE char *text = NULL;
	size_t len, n = 0;

	if (vgpu_sysfs_read_file(d, CATALOG_MAX, &text, &len, "%s", name) < 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

int vgpu_catalog_save(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char show[VGPU_SHOW_LEN];
	int r = vgpu_sysfs_mkdirs_ctx(ctx, fs, &d, VGPU_CATALOG_DIR);

	for (size_t i = 0; r == 0 && i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];
		VGPU_AUTOFREE char *text = NULL;

		if (!g->n_types || stored_lines(&d, g->addr) >= g->n_types)
			continue;
		for (size_t k = 0; k < g->n_types; k++)
			vgpu_append(&text, "%u %s\n", g->types[k]->id, g->types[k]->name);
		r = vgpu_sysfs_replace(&d, g->addr, text, strlen(text));
		if (r < 0)
			return vgpu_error(ctx, r, "cannot write '%s': %s",
					  vgpu_sysdir_show(&d, g->addr, show, sizeof(show)),
					  vgpu_strerror(r));
	}
	return r;
}

void vgpu_catalog_load(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	char show[VGPU_SHOW_LEN];

	if (vgpu_sysdir_open(fs, &d, VGPU_CATALOG_DIR) < 0)
		return;
	for (size_t i = 0; i < m->n_gpus; i++) {
		VGPU_AUTOFREE char *text = NULL;
		char *save = NULL;
		size_t len;

		if (vgpu_sysfs_read_file(&d, CATALOG_MAX, &text, &len, "%s", m->gpus[i].addr) < 0)
			continue;
		m->gpus[i].types_whole = true; /* kept while every VF listed every type */
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *sp = strchr(l, ' ');
			long id;

			if (sp)
				*sp = '\0';
			if (!sp || vgpu_parse_long(l, &id) < 0 || id <= 0 || id > 0xffffff ||
			    !sp[1] || !vgpu_utf8_valid(sp + 1)) {
				vgpu_warn(ctx, "'%s': a line is not 'ID NAME'; skipped",
					  vgpu_sysdir_show(&d, m->gpus[i].addr, show,
							   sizeof(show)));
				continue;
			}
			vgpu_gpu_add_type(&m->gpus[i], (unsigned)id, sp + 1);
		}
	}
}
