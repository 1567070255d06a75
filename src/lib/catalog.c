// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Type catalogues: each GPU's list of vGPU types (id and name), kept while
 * it is whole and merged back when the host is read (see catalog.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "mig.h"
#include "sysfs-state.h"

#define CATALOG_MAX (256 * 1024)

/* Is type @id a line of the stored text @text ("ID NAME\n" lines)? */
static bool stored_has(const char *text, unsigned id)
{
	char key[16];
	size_t n = (size_t)snprintf(key, sizeof(key), "%u ", id);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, n) == 0)
			return true;
	return false;
}

int vgpu_catalog_save_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_gpu *g)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	char show[VGPU_SHOW_LEN];
	size_t len = 0, added = 0;
	int r;

	if (!g->n_types)
		return 0;
	r = vgpu_sysfs_mkdirs_ctx(ctx, fs, &d, VGPU_CATALOG_DIR);
	if (r < 0)
		return r;
	/*
	 * A union: a list names what fits now (a MIG GPU's the GIs there, or
	 * none in MIG mode off), so what one reading lacks stays known
	 */
	if (vgpu_sysfs_read_file(&d, CATALOG_MAX, &text, &len, "%s", g->addr) < 0) {
		free(text);
		text = NULL;
	}
	if (text && len && text[len - 1] != '\n')
		vgpu_append(&text, "\n");
	for (size_t k = 0; k < g->n_types; k++)
		if (!stored_has(text, g->types[k]->id)) {
			vgpu_append(&text, "%u %s\n", g->types[k]->id, g->types[k]->name);
			added++;
		}
	if (!added)
		return 0;
	r = vgpu_sysfs_replace(&d, g->addr, text, strlen(text));
	if (r < 0)
		return vgpu_error(ctx, r, "cannot write '%s': %s",
				  vgpu_sysdir_show(&d, g->addr, show, sizeof(show)),
				  vgpu_strerror(r));
	return 0;
}

int vgpu_catalog_save(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < m->n_gpus; i++)
		r = vgpu_catalog_save_gpu(ctx, fs, &m->gpus[i]);
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
		/*
		 * kept while every VF listed every type; a MIG board's lists name
		 * only what fits its mode and GIs, so its union is no whole table
		 */
		if (!vgpu_mig_board_for_gpu(&m->gpus[i]))
			m->gpus[i].types_whole = true;
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
