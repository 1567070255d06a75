// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: the host actions of apply's steps on the real host (struct
 * vgpu_apply_ops): MIG mode, VFs and GPU instances through NVML or
 * nvidia-smi and sriov-manage, vGPUs created in a transaction, the host read
 * again between steps.  The command that drives them is apply-host.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-priv.h"
#include "apply.h"
#include "catalog.h"
#include "cleanup.h"
#include "exec.h"
#include "gpu-runner.h"
#include "read-host.h"
#include "sysfs-lock.h"
#include "txn.h"
#include "virt.h"

/*
 * The last GI listing nvidia-smi gave is kept until one of our calls may
 * change that GPU's GIs (MIG mode, VFs: their rebind destroys GIs, -cgi,
 * -dgi) or the host lock is taken again: the reads of the model after
 * steps 3 and 4 use the listing make_gis() checked, not two more runs of
 * nvidia-smi (each starts NVML: a few hundred ms).
 */
void apply_lgi_forget(struct apply_host *h)
{
	free(h->lgi);
	h->lgi = NULL;
	h->n_lgi = 0;
	h->lgi_gpu[0] = '\0';
}

static int lgi_read(struct apply_host *h, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
		    const char *gpu, struct vgpu_mig_gi **gis, size_t *n)
{
	int e = vgpu_nv_gis(ctx, h->tools, board, gpu, gis, n);

	apply_lgi_forget(h);
	if (e == 0) {
		h->lgi = vgpu_xcalloc(*n + 1, sizeof(*h->lgi));
		if (*n)
			memcpy(h->lgi, *gis, *n * sizeof(*h->lgi));
		h->n_lgi = *n;
		snprintf(h->lgi_gpu, sizeof(h->lgi_gpu), "%s", gpu);
	}
	return e;
}

static int op_mig_mode(void *data, struct vgpu_ctx *ctx, const char *gpu, int *current,
		       int *pending)
{
	struct apply_host *h = data;

	return vgpu_nv_mig_mode(ctx, h->tools, gpu, current, pending);
}

static int op_set_mig(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct apply_host *h = data;

	apply_lgi_forget(h);
	return vgpu_nv_set_mig(ctx, h->tools, gpu, on);
}

static int op_set_vfs(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct apply_host *h = data;

	apply_lgi_forget(h);
	return on ? vgpu_nv_enable_vfs(ctx, h->tools, gpu) :
		    vgpu_nv_disable_vfs(ctx, h->tools, gpu);
}

static int op_list_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
		       const char *gpu, struct vgpu_mig_gi **gis, size_t *n)
{
	struct apply_host *h = data;

	if (h->nvml)
		return vgpu_nvml_gis(ctx, h->nvml, board, gpu, gis, n);
	return lgi_read(h, ctx, board, gpu, gis, n);
}

void apply_say_fallback(struct apply_host *h, struct vgpu_ctx *ctx)
{
	if (h->said_fallback)
		return;
	vgpu_log(
		ctx, LOG_NOTICE,
		"NVML cannot place GPU instances here (not loaded, or too old): they are created with nvidia-smi, which takes no placement (asked for in an order that places them as planned, and checked after)");
	h->said_fallback = true;
}

/*
 * Without NVML's placement, nvidia-smi lets the driver place each GI.  Ask
 * in an order whose first-fit placement is the plan (make_gis() then checks
 * where they went); say once that this is the fallback.
 */
static int create_gis_smi(struct apply_host *h, struct vgpu_ctx *ctx, const char *gpu,
			  const struct vgpu_mig_board *board, const struct vgpu_mig_gi *have,
			  size_t n_have, const struct vgpu_mig_gi *gis, size_t n)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *ordered = NULL;
	VGPU_AUTOFREE size_t *order = vgpu_xcalloc(n + 1, sizeof(*order));

	apply_say_fallback(h, ctx);
	if (vgpu_mig_first_fit_order(board, have, n_have, gis, n, order) < 0)
		return vgpu_error(
			ctx, -ENOSPC,
			"GPU %s: nvidia-smi cannot be made to place these GPU instances as planned; install NVML (libnvidia-ml.so.1) to place them",
			gpu);
	ordered = vgpu_xcalloc(n + 1, sizeof(*ordered));
	for (size_t i = 0; i < n; i++)
		ordered[i] = gis[order[i]];
	return vgpu_nv_create_gis(ctx, h->tools, gpu, ordered, n);
}

static int op_create_gis(void *data, struct vgpu_ctx *ctx, const struct vgpu_mig_board *board,
			 const char *gpu, const struct vgpu_mig_gi *have, size_t n_have,
			 const struct vgpu_mig_gi *gis, size_t n)
{
	struct apply_host *h = data;

	apply_lgi_forget(h);
	if (!vgpu_nvml_can_place(h->nvml))
		return create_gis_smi(h, ctx, gpu, board, have, n_have, gis, n);
	if (h->tools->dry_run) {
		for (size_t i = 0; i < n; i++) {
			const struct vgpu_step s = { .kind = VGPU_STEP_GI_CREATE,
						     .object = VGPU_OBJECT_GPU_INSTANCE,
						     .gpu = gpu,
						     .profile = gis[i].profile->name,
						     .count = 1 };

			vgpu_step_reportf(ctx, &s, "create a %s GPU instance at slice %u on GPU %s",
					  gis[i].profile->name, gis[i].start, gpu);
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int id, e = vgpu_nvml_create_gi(ctx, h->nvml, gpu, gis[i].profile, gis[i].start,
						&id);

		if (e < 0)
			return e;
		vgpu_log(ctx, LOG_INFO, "GPU instances: GPU %s: %s at slice %u: GI %d", gpu,
			 gis[i].profile->name, gis[i].start, id);
	}
	return 0;
}

static int op_set_hetero(void *data, struct vgpu_ctx *ctx, const char *gpu, bool on)
{
	struct apply_host *h = data;

	if (h->nvml)
		return vgpu_nvml_set_hetero(ctx, h->nvml, gpu, on);
	return vgpu_nv_set_hetero(ctx, h->tools, gpu, on);
}

static int op_destroy_gis(void *data, struct vgpu_ctx *ctx, const char *gpu)
{
	struct apply_host *h = data;

	apply_lgi_forget(h);
	return vgpu_nv_destroy_gis(ctx, h->tools, gpu);
}

/*
 * Keep each GPU's types while its lists show them: the lists shrink as the
 * GPU fills (a vendor-VFIO GPU whose VFs all hold a vGPU lists nothing) and
 * follow MIG mode and GPU instances, so each reading of a run adds what it
 * sees (after step 3 the new GIs' types are listed, before step 5 uses them
 * up); assert and the next apply still know the config's types.
 */
static void keep_catalog(struct apply_host *h, struct vgpu_ctx *ctx, const struct vgpu_model *m)
{
	for (size_t i = 0; h->keep_catalog && i < m->n_gpus; i++) {
		if (h->gpu && strcmp(h->gpu, m->gpus[i].addr) != 0)
			continue; /* another process's GPU, its lists in flux */
		if (vgpu_catalog_save_gpu(ctx, h->fs, &m->gpus[i]) < 0)
			vgpu_warn(ctx, "%s", vgpu_ctx_error(ctx));
	}
}

/*
 * Without NVML, the GIs' profiles and starts from nvidia-smi mig -lgi, the
 * tool that makes them: procfs names GIs without either, and the driver's
 * lists may leave several layouts (3 x 2g.20gb beside a 1g.10gb), where
 * the free GIs of unknown profile counted as one.  GPUs whose GIs procfs
 * does not name have nothing to ask about; a GPU's own process asks about
 * its GPU only.  A listing that fails is said, and the GIs stay unknown.
 */
static void fill_gis_smi(struct apply_host *h, struct vgpu_ctx *ctx, struct vgpu_model *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		struct vgpu_gpu *g = &m->gpus[i];
		const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);
		VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
		size_t n = 0;

		if (!b || !g->n_gis || (h->gpu && strcmp(h->gpu, g->addr) != 0))
			continue;
		if (strcmp(h->lgi_gpu, g->addr) == 0) {
			vgpu_host_set_gis(h->fs, m, g, h->lgi, h->n_lgi);
			continue;
		}
		if (lgi_read(h, ctx, b, g->addr, &gis, &n) < 0) {
			vgpu_warn(
				ctx,
				"GPU %s: the profiles of its GPU instances are not known (%s); what fits on them is what the driver's lists tell",
				g->addr, vgpu_ctx_error(ctx));
			continue;
		}
		vgpu_host_set_gis(h->fs, m, g, gis, n);
	}
}

/*
 * The host as it is, with what NVML knows (GI placements, types per GI, MIG
 * mode), else with the GIs nvidia-smi lists.
 */
int apply_read_host(struct apply_host *h, struct vgpu_ctx *ctx, struct vgpu_model **out)
{
	struct vgpu_ctx quiet;
	int e;

	if (!h->one_gpu) {
		e = vgpu_host_read(ctx, h->fs, VGPU_READ_TYPES, out, NULL);
		if (e == 0 && h->nvml)
			vgpu_nvml_fill(ctx, h->nvml, *out);
		else if (e == 0)
			fill_gis_smi(h, ctx, *out);
		if (e == 0)
			keep_catalog(h, ctx, *out);
		return e;
	}
	/*
	 * A GPU's own process reads the whole host while other GPUs' VFs come
	 * and go under it: what it would warn about is theirs, and the first
	 * read (before the processes) said what was damaged.  Errors still count.
	 */
	vgpu_ctx_init(&quiet, NULL, NULL);
	e = vgpu_host_read(&quiet, h->fs, VGPU_READ_TYPES, out, NULL);
	if (e < 0)
		e = vgpu_error(ctx, e, "%s", vgpu_ctx_error(&quiet));
	else if (h->nvml)
		vgpu_nvml_fill(&quiet, h->nvml, *out);
	vgpu_ctx_clear(&quiet);
	if (e == 0 && !h->nvml)
		fill_gis_smi(h, ctx, *out); /* its own GPU: what fails there counts */
	if (e == 0)
		keep_catalog(h, ctx, *out);
	return e;
}

static int op_read_host(void *data, struct vgpu_ctx *ctx, struct vgpu_model **out)
{
	return apply_read_host(data, ctx, out);
}

static int op_create_vgpu(void *data, struct vgpu_ctx *ctx, const struct vgpu_record *r)
{
	struct apply_host *h = data;

	(void)ctx; /* the transaction reports into its own context, the same one */
	return vgpu_txn_create(&h->txn, r);
}

const struct vgpu_apply_ops apply_host_ops = {
	.mig_mode = op_mig_mode,
	.set_mig = op_set_mig,
	.set_vfs = op_set_vfs,
	.list_gis = op_list_gis,
	.create_gis = op_create_gis,
	.destroy_gis = op_destroy_gis,
	.read_host = op_read_host,
	.create_vgpu = op_create_vgpu,
	.set_hetero = op_set_hetero,
};
