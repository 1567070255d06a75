// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NVML through dlopen(): every entry point is resolved by name, with the
 * prototypes of nvml-abi.h, so vgpuctl builds and runs where NVIDIA's
 * library is absent.  Read-only but for GPU instance creation and the
 * mixed-size mode switch.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stddef.h>
#include <strings.h>

#include "migrate-check.h"
#include "mig-tables.h"
#include "mig.h"
#include "nvml-abi.h"
#include "nvml.h"
#include "records.h"
#include "scheduler.h"

struct vgpu_nvml {
	void *dl;
#define X(ret, name, params) ret(*name) params;
	VGPU_NVML_REQUIRED(X)
	VGPU_NVML_OPTIONAL(X)
#undef X
};

/* Types NVML lists per GPU, at most (a board has a few dozen). */
#define NVML_TYPES_MAX 512
#define NVML_PLACEMENTS_MAX 256
/* GIs of one profile, at most (a MIG GPU has 8 memory slices) */
#define NVML_GIS_MAX 16

static const char *nv_err(const struct vgpu_nvml *n, nvmlReturn_t r)
{
	const char *s = n->nvmlErrorString ? n->nvmlErrorString(r) : NULL;

	return s && *s ? s : "unknown error";
}

static int nv_errno(nvmlReturn_t r)
{
	switch (r) {
	case NVML_ERROR_INSUFFICIENT_RESOURCES:
		return -ENOSPC;
	case NVML_ERROR_IN_USE:
		return -EBUSY;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return -ENOSYS;
	case NVML_ERROR_NOT_FOUND:
		return -ENOENT;
	case NVML_ERROR_NO_PERMISSION:
		return -EPERM;
	case NVML_ERROR_INVALID_ARGUMENT:
		return -EINVAL;
	default:
		return -EIO;
	}
}

int vgpu_nvml_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_nvml **out)
{
	struct vgpu_nvml *n;
	const char *lib = path ? path : VGPU_NVML_SONAME;
	nvmlReturn_t r;

	*out = NULL;
	n = vgpu_xcalloc(1, sizeof(*n));
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		const char *e = dlerror();

		free(n);
		return vgpu_error(ctx, -ENOENT, "NVML '%s' cannot be loaded: %s", lib,
				  e ? e : "unknown error");
	}
#define X(ret, name, params)                                                                       \
	*(void **)&n->name = dlsym(n->dl, #name);                                                  \
	if (!n->name) {                                                                            \
		dlclose(n->dl);                                                                    \
		free(n);                                                                           \
		return vgpu_error(ctx, -ENOSYS, "NVML '%s' has no %s (driver too old)", lib,       \
				  #name);                                                          \
	}
	VGPU_NVML_REQUIRED(X)
#undef X
#define X(ret, name, params) *(void **)&n->name = dlsym(n->dl, #name);
	VGPU_NVML_OPTIONAL(X)
#undef X
	r = n->nvmlInit_v2();
	if (r != NVML_SUCCESS) {
		int e = vgpu_error(ctx, -EIO, "NVML '%s' cannot start: %s", lib, nv_err(n, r));

		dlclose(n->dl);
		free(n);
		return e;
	}
	*out = n;
	return 0;
}

void vgpu_nvml_close(struct vgpu_nvml *n)
{
	if (!n)
		return;
	n->nvmlShutdown();
	dlclose(n->dl);
	free(n);
}

bool vgpu_nvml_can_place(const struct vgpu_nvml *n)
{
	return n && n->nvmlDeviceCreateGpuInstanceWithPlacement;
}

static nvmlReturn_t device(struct vgpu_nvml *n, const char *bus, nvmlDevice_t *dev)
{
	return n->nvmlDeviceGetHandleByPciBusId_v2(bus, dev);
}

static const struct vgpu_mig_profile *board_profile(const struct vgpu_mig_board *b, unsigned id)
{
	for (size_t i = 0; b && i < b->n_profiles; i++)
		if (b->profiles[i].id >= 0 && (unsigned)b->profiles[i].id == id)
			return &b->profiles[i];
	return NULL;
}

/*
 * Every GI of the GPU, over every profile index NVML knows, into @out (heap).
 * Return: false when one could not be read or is not in @b's table.
 */
static bool list_gis(struct vgpu_nvml *n, nvmlDevice_t dev, const struct vgpu_mig_board *b,
		     struct vgpu_mig_gi **out, size_t *n_out)
{
	bool whole = true;

	*out = NULL;
	*n_out = 0;
	for (unsigned idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
		nvmlGpuInstance_t gis[NVML_GIS_MAX];
		unsigned count = NVML_GIS_MAX;

		if (n->nvmlDeviceGetGpuInstanceProfileInfoV(dev, idx, &info) != NVML_SUCCESS)
			continue;
		if (n->nvmlDeviceGetGpuInstances(dev, info.id, gis, &count) != NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < count && k < NVML_GIS_MAX; k++) {
			nvmlGpuInstanceInfo_t gi;
			const struct vgpu_mig_profile *p;

			if (n->nvmlGpuInstanceGetInfo(gis[k], &gi) != NVML_SUCCESS ||
			    *n_out >= VGPU_GIS_MAX || !(p = board_profile(b, gi.profileId))) {
				whole = false;
				continue;
			}
			*out = vgpu_xreallocarray(*out, *n_out + 1, sizeof(**out));
			(*out)[(*n_out)++] =
				(struct vgpu_mig_gi){ p, gi.placement.start, (int)gi.id };
		}
	}
	return whole;
}

int vgpu_nvml_gis(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const struct vgpu_mig_board *b,
		  const char *bus, struct vgpu_mig_gi **gis, size_t *n_gis)
{
	nvmlDevice_t dev;
	nvmlReturn_t r = device(n, bus, &dev);

	*gis = NULL;
	*n_gis = 0;
	if (r != NVML_SUCCESS)
		return vgpu_error(ctx, nv_errno(r), "GPU '%s': NVML does not know it: %s", bus,
				  nv_err(n, r));
	if (!list_gis(n, dev, b, gis, n_gis)) {
		free(*gis);
		*gis = NULL;
		*n_gis = 0;
		return vgpu_error(
			ctx, -EIO,
			"GPU '%s': NVML lists a GPU instance of a profile the %s table lacks", bus,
			b ? b->model : "board's");
	}
	return 0;
}

static void fill_gis(struct vgpu_nvml *n, nvmlDevice_t dev, const struct vgpu_mig_board *b,
		     struct vgpu_gpu *g)
{
	VGPU_AUTOFREE struct vgpu_mig_gi *gis = NULL;
	size_t n_gis;
	bool exact = list_gis(n, dev, b, &gis, &n_gis);

	for (size_t i = 0; i < n_gis; i++)
		vgpu_gpu_add_gi(g, gis[i].id, gis[i].profile, (int)gis[i].start);
	/* a GI procfs lists that NVML does not: the picture is not whole */
	for (size_t i = 0; i < g->n_gis; i++)
		exact &= g->gis[i].profile && g->gis[i].start >= 0;
	g->gis_exact = exact;
}

/*
 * How many vGPUs of a time-sliced type the GPU takes in mixed-size mode: the
 * count of the type's placements NVML gives for that mode; -1 unknown
 */
static long mixed_max(struct vgpu_nvml *n, nvmlDevice_t dev, nvmlVgpuTypeId_t id)
{
	unsigned ids[NVML_PLACEMENTS_MAX];
	nvmlVgpuPlacementList_v2_t pl = { .version = nvmlVgpuPlacementList_v2,
					  .count = NVML_PLACEMENTS_MAX,
					  .placementIds = ids,
					  .mode = NVML_VGPU_PGPU_HETEROGENEOUS_MODE };

	if (!n->nvmlDeviceGetVgpuTypeSupportedPlacements ||
	    n->nvmlDeviceGetVgpuTypeSupportedPlacements(dev, id, &pl) != NVML_SUCCESS ||
	    !pl.count || pl.count > NVML_PLACEMENTS_MAX)
		return -1;
	return pl.count;
}

static void fill_types(struct vgpu_nvml *n, nvmlDevice_t dev, const struct vgpu_mig_board *b,
		       struct vgpu_gpu *g)
{
	VGPU_AUTOFREE nvmlVgpuTypeId_t *ids = NULL;
	unsigned count = 0;

	if (n->nvmlDeviceGetSupportedVgpus(dev, &count, NULL) != NVML_ERROR_INSUFFICIENT_SIZE &&
	    count == 0)
		return;
	if (count == 0 || count > NVML_TYPES_MAX)
		return;
	ids = vgpu_xcalloc(count, sizeof(*ids));
	if (n->nvmlDeviceGetSupportedVgpus(dev, &count, ids) != NVML_SUCCESS)
		return;
	g->types_whole = true;
	for (unsigned i = 0; i < count && i < NVML_TYPES_MAX; i++) {
		char name[NVML_VGPU_NAME_BUFFER_SIZE + 1] = "";
		unsigned size = NVML_VGPU_NAME_BUFFER_SIZE, v;
		struct vgpu_type *t;
		const struct vgpu_mig_profile *p;

		if (n->nvmlVgpuTypeGetName(ids[i], name, &size) != NVML_SUCCESS || !name[0])
			continue;
		name[NVML_VGPU_NAME_BUFFER_SIZE] = '\0';
		t = vgpu_gpu_add_type(g, ids[i], name);
		t->from_driver = true;
		if (n->nvmlVgpuTypeGetMaxInstances(dev, ids[i], &v) == NVML_SUCCESS)
			t->max_instances = v;
		if (t->info.backing == VGPU_BACKING_TIME_SLICED)
			t->max_mixed = mixed_max(n, dev, ids[i]);
		if (n->nvmlVgpuTypeGetGpuInstanceProfileId(ids[i], &v) == NVML_SUCCESS &&
		    v != NVML_INVALID_GPU_INSTANCE_PROFILE_ID && (p = board_profile(b, v))) {
			snprintf(t->info.gi_profile, sizeof(t->info.gi_profile), "%s", p->name);
			t->info.gi_profile_id = p->id;
		}
		if (n->nvmlVgpuTypeGetMaxInstancesPerGpuInstance &&
		    t->info.backing == VGPU_BACKING_MIG) {
			nvmlVgpuTypeMaxInstance_v1_t mi = { .version = nvmlVgpuTypeMaxInstance_v1,
							    .vgpuTypeId = ids[i] };

			if (n->nvmlVgpuTypeGetMaxInstancesPerGpuInstance(&mi) == NVML_SUCCESS &&
			    mi.maxInstancePerGI > 0)
				t->per_gi = mi.maxInstancePerGI;
		}
	}
}

/* The GPU's module ID (HGX: Fabric Manager's physical ID), -1 when NVML cannot tell. */
static int module_id(struct vgpu_nvml *n, nvmlDevice_t dev)
{
	unsigned id;

	if (!n->nvmlDeviceGetModuleId || n->nvmlDeviceGetModuleId(dev, &id) != NVML_SUCCESS ||
	    id > 0xffff)
		return -1;
	return (int)id;
}

void vgpu_nvml_fill(struct vgpu_ctx *ctx, struct vgpu_nvml *n, struct vgpu_model *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		struct vgpu_gpu *g = &m->gpus[i];
		const struct vgpu_mig_board *b = vgpu_mig_board_for_gpu(g);
		unsigned cur, pend;
		nvmlMemory_t mem;
		nvmlDevice_t dev;
		nvmlReturn_t r = device(n, g->addr, &dev);

		if (r != NVML_SUCCESS) {
			vgpu_log(ctx, LOG_WARNING, "GPU '%s': NVML does not know it: %s", g->addr,
				 nv_err(n, r));
			continue;
		}
		r = n->nvmlDeviceGetMigMode(dev, &cur, &pend);
		if (r == NVML_SUCCESS) {
			g->mig_current = cur == NVML_DEVICE_MIG_ENABLE ? VGPU_ON : VGPU_OFF;
			g->mig_pending = pend == NVML_DEVICE_MIG_ENABLE ? VGPU_ON : VGPU_OFF;
		} else if (r == NVML_ERROR_NOT_SUPPORTED) {
			g->mig_current = g->mig_pending = VGPU_OFF; /* a GPU without MIG */
		}
		g->mig_source = "nvml";
		if (n->nvmlDeviceGetMemoryInfo(dev, &mem) == NVML_SUCCESS && mem.total)
			g->fb_mib = mem.total >> 20;
		if (n->nvmlDeviceGetVgpuHeterogeneousMode) {
			nvmlVgpuHeterogeneousMode_v1_t h = { .version =
								     nvmlVgpuHeterogeneousMode_v1 };

			if (n->nvmlDeviceGetVgpuHeterogeneousMode(dev, &h) == NVML_SUCCESS)
				g->hetero = h.mode ? VGPU_ON : VGPU_OFF;
		}
		if (g->mig_current == VGPU_ON)
			fill_gis(n, dev, b, g);
		fill_types(n, dev, b, g);
		g->module_id = module_id(n, dev);
	}
}

int vgpu_nvml_create_gi(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const char *bus,
			const struct vgpu_mig_profile *p, unsigned start, int *id)
{
	nvmlGpuInstancePlacement_t pl = { start, p->size };
	int profile_id = p->id;
	nvmlComputeInstanceProfileInfo_t ci_info;
	nvmlGpuInstanceInfo_t info;
	nvmlComputeInstance_t ci;
	nvmlGpuInstance_t gi;
	nvmlDevice_t dev;
	nvmlReturn_t r;

	if (!vgpu_nvml_can_place(n))
		return vgpu_error(ctx, -ENOSYS, "GPU '%s': this NVML cannot place GPU instances",
				  bus);
	r = device(n, bus, &dev);
	if (r != NVML_SUCCESS)
		return vgpu_error(ctx, nv_errno(r), "GPU '%s': NVML does not know it: %s", bus,
				  nv_err(n, r));
	r = n->nvmlDeviceCreateGpuInstanceWithPlacement(dev, (unsigned)profile_id, &pl, &gi);
	if (r != NVML_SUCCESS)
		return vgpu_error(
			ctx, nv_errno(r),
			"GPU '%s': cannot create a GPU instance of profile %d at slice %u: %s", bus,
			profile_id, start, nv_err(n, r));
	r = n->nvmlGpuInstanceGetInfo(gi, &info);
	if (r != NVML_SUCCESS)
		return vgpu_error(ctx, nv_errno(r),
				  "GPU '%s': the new GPU instance cannot be read back: %s", bus,
				  nv_err(n, r));
	*id = (int)info.id;
	/* the full compute instance: the profile whose slices are the GI's */
	for (int idx = NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE; idx >= 0; idx--) {
		r = n->nvmlGpuInstanceGetComputeInstanceProfileInfo(
			gi, (unsigned)idx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ci_info);
		if (r != NVML_SUCCESS)
			continue;
		r = n->nvmlGpuInstanceCreateComputeInstance(gi, ci_info.id, &ci);
		if (r == NVML_SUCCESS)
			return 0;
		return vgpu_error(
			ctx, nv_errno(r),
			"GPU '%s': GPU instance %d: cannot create its compute instance: %s", bus,
			*id, nv_err(n, r));
	}
	return vgpu_error(ctx, -EIO, "GPU '%s': GPU instance %d has no compute instance profile",
			  bus, *id);
}

int vgpu_nvml_set_hetero(struct vgpu_ctx *ctx, struct vgpu_nvml *n, const char *bus, bool on)
{
	nvmlVgpuHeterogeneousMode_v1_t h = { .version = nvmlVgpuHeterogeneousMode_v1, .mode = on };
	nvmlDevice_t dev;
	nvmlReturn_t r;

	if (!n->nvmlDeviceSetVgpuHeterogeneousMode)
		return vgpu_error(ctx, -ENOSYS, "GPU '%s': this NVML cannot set mixed-size mode",
				  bus);
	r = device(n, bus, &dev);
	if (r == NVML_SUCCESS)
		r = n->nvmlDeviceSetVgpuHeterogeneousMode(dev, &h);
	if (r != NVML_SUCCESS)
		return vgpu_error(ctx, nv_errno(r), "GPU '%s': cannot turn mixed-size mode %s: %s",
				  bus, on ? "on" : "off", nv_err(n, r));
	return 0;
}

/* ---- live migration (#28): what migrate-check and migrate-offer ask NVML ------------------ */

/* vGPU instances of one GPU, at most (more than a board takes) */
#define NVML_VGPUS_MAX 64
/* pGPU metadata, at most (nvml.h: 256 bytes of opaque data after the header) */
#define NVML_PGPU_META_MAX 4096

union vgpu_meta {
	nvmlVgpuMetadata_t m;
	uint8_t b[VGPU_MIG_NV_METADATA_MAX];
};

union pgpu_meta {
	nvmlVgpuPgpuMetadata_t m;
	uint8_t b[NVML_PGPU_META_MAX];
};

/* The GPU's ECC mode: NOT_SUPPORTED is a board without ECC (off), else unknown. */
static enum vgpu_tristate ecc_of(struct vgpu_nvml *n, nvmlDevice_t dev)
{
	nvmlEnableState_t cur, pend;
	nvmlReturn_t r;

	if (!n->nvmlDeviceGetEccMode)
		return VGPU_UNKNOWN;
	r = n->nvmlDeviceGetEccMode(dev, &cur, &pend);
	if (r == NVML_ERROR_NOT_SUPPORTED)
		return VGPU_OFF;
	if (r != NVML_SUCCESS)
		return VGPU_UNKNOWN;
	return cur == NVML_FEATURE_ENABLED ? VGPU_ON : VGPU_OFF;
}

/*
 * The GPU's active NVLinks into @v (topology).  A link NVML does not have
 * (NOT_SUPPORTED: a board without NVLink, INVALID_ARGUMENT: past the
 * board's links) is not counted; any other error leaves the count unknown.
 */
static void nvlinks_of(struct vgpu_nvml *n, nvmlDevice_t dev, struct vgpu_mig_vgpu *v)
{
	unsigned active = 0;

	if (!n->nvmlDeviceGetNvLinkState)
		return;
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t on = NVML_FEATURE_DISABLED;
		nvmlReturn_t r = n->nvmlDeviceGetNvLinkState(dev, l, &on);

		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (r != NVML_SUCCESS)
			return;
		active += on == NVML_FEATURE_ENABLED;
	}
	v->has_nvlinks = true;
	v->nvlinks = active;
}

/* The GPU's vGPU metadata into @pm; false when NVML gives none. */
static bool pgpu_meta(struct vgpu_nvml *n, nvmlDevice_t dev, union pgpu_meta *pm)
{
	unsigned size = sizeof(pm->b);

	memset(pm, 0, sizeof(*pm));
	return n->nvmlDeviceGetVgpuMetadata &&
	       n->nvmlDeviceGetVgpuMetadata(dev, &pm->m, &size) == NVML_SUCCESS;
}

/* AND one GPU's (or vGPU's) migration bit into @h's driver build, as NVML's. */
static void build_and(struct vgpu_mig_host *h, bool migrates)
{
	if (strcmp(h->driver_build_from, "nvml") != 0) {
		snprintf(h->driver_build_from, sizeof(h->driver_build_from), "nvml");
		h->driver_build = VGPU_ON;
	}
	if (!migrates)
		h->driver_build = VGPU_OFF;
}

/*
 * The instance on @dev of the domain @uuid with type @type_id not in @taken
 * (the domain's vGPUs found before); 0 when there is none.
 */
static nvmlVgpuInstance_t find_instance(struct vgpu_nvml *n, nvmlDevice_t dev, const char *uuid,
					unsigned type_id, const nvmlVgpuInstance_t *taken,
					size_t n_taken)
{
	nvmlVgpuInstance_t ids[NVML_VGPUS_MAX];
	unsigned count = NVML_VGPUS_MAX;

	if (!n->nvmlDeviceGetActiveVgpus || !n->nvmlVgpuInstanceGetVmID ||
	    n->nvmlDeviceGetActiveVgpus(dev, &count, ids) != NVML_SUCCESS)
		return 0;
	for (unsigned i = 0; i < count && i < NVML_VGPUS_MAX; i++) {
		char vm[NVML_DEVICE_UUID_BUFFER_SIZE + 1] = "";
		nvmlVgpuVmIdType_t kind;
		nvmlVgpuTypeId_t t;
		bool used = false;

		for (size_t k = 0; k < n_taken; k++)
			used |= taken[k] == ids[i];
		if (used || !ids[i] ||
		    n->nvmlVgpuInstanceGetVmID(ids[i], vm, NVML_DEVICE_UUID_BUFFER_SIZE, &kind) !=
			    NVML_SUCCESS ||
		    kind != NVML_VGPU_VM_ID_UUID || strcasecmp(vm, uuid) != 0)
			continue;
		if (n->nvmlVgpuInstanceGetType &&
		    n->nvmlVgpuInstanceGetType(ids[i], &t) == NVML_SUCCESS && type_id &&
		    t != type_id)
			continue;
		return ids[i];
	}
	return 0;
}

/* One vGPU instance's metadata, runtime state size and migration bit into @v. */
static void instance_info(struct vgpu_nvml *n, nvmlVgpuInstance_t id, struct vgpu_mig_vgpu *v,
			  struct vgpu_mig_host *h)
{
	union vgpu_meta vm;
	unsigned size = sizeof(vm.b);

	memset(&vm, 0, sizeof(vm));
	if (n->nvmlVgpuInstanceGetMetadata &&
	    n->nvmlVgpuInstanceGetMetadata(id, &vm.m, &size) == NVML_SUCCESS &&
	    size >= offsetof(nvmlVgpuMetadata_t, opaqueData) && size <= sizeof(vm.b)) {
		memcpy(v->nv_metadata, vm.b, size);
		v->nv_metadata_len = size;
		build_and(h,
			  vm.m.vgpuVirtualizationCaps & NVML_VGPU_VIRTUALIZATION_CAP_MIGRATION_YES);
	}
	if (n->nvmlVgpuInstanceGetRuntimeStateSize) {
		nvmlVgpuRuntimeState_v1_t st = { .version = nvmlVgpuRuntimeState_v1 };

		if (n->nvmlVgpuInstanceGetRuntimeStateSize(id, &st) == NVML_SUCCESS)
			v->runtime_state_bytes = st.size;
	}
}

void vgpu_nvml_mig_source(struct vgpu_nvml *n, const struct vgpu_records *recs, const char *domain,
			  struct vgpu_mig_host *h)
{
	VGPU_AUTOFREE nvmlVgpuInstance_t *taken = NULL;
	size_t k = 0;

	if (!n || !h->n_vgpus)
		return;
	taken = vgpu_xcalloc(h->n_vgpus, sizeof(*taken));
	for (size_t i = 0; i < recs->n && k < h->n_vgpus; i++) {
		const struct vgpu_record *r = &recs->v[i];
		struct vgpu_mig_vgpu *v = &h->vgpus[k];
		union pgpu_meta pm;
		nvmlDevice_t dev;
		nvmlVgpuInstance_t id;

		if (!vgpu_mig_record_is(r, domain))
			continue;
		k++;
		if (device(n, r->gpu, &dev) != NVML_SUCCESS)
			continue;
		v->ecc = ecc_of(n, dev);
		nvlinks_of(n, dev, v);
		if (pgpu_meta(n, dev, &pm))
			build_and(h, pm.m.pgpuVirtualizationCaps &
					     NVML_VGPU_PGPU_VIRTUALIZATION_CAP_MIGRATION_YES);
		id = find_instance(n, dev, r->domain_uuid, r->type_id, taken, k - 1);
		if (!id)
			continue;
		taken[k - 1] = id;
		instance_info(n, id, v, h);
	}
}

/* The GPU of @m that is @addr or has it as a VF; NULL when none. */
static const struct vgpu_gpu *gpu_of(const struct vgpu_model *m, const char *addr)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		const struct vgpu_gpu *g = &m->gpus[i];

		if (!strcmp(g->addr, addr))
			return g;
		for (size_t p = 0; p < g->n_parents; p++)
			if (!strcmp(g->parents[p].addr, addr))
				return g;
	}
	return NULL;
}

void vgpu_nvml_mig_target(struct vgpu_nvml *n, const struct vgpu_model *m,
			  const struct vgpu_mig_host *src, struct vgpu_mig_host *dst)
{
	if (!n || !dst->reasons || !dst->devices)
		return;
	for (size_t i = 0; i < dst->n_vgpus && i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i];
		struct vgpu_mig_vgpu *t = &dst->vgpus[i];
		const struct vgpu_gpu *g = gpu_of(m, dst->devices[i]);
		union pgpu_meta pm;
		nvmlDevice_t dev;

		if (dst->reasons[i] != VGPU_CAP_OK || !g ||
		    device(n, g->addr, &dev) != NVML_SUCCESS)
			continue;
		t->ecc = ecc_of(n, dev);
		nvlinks_of(n, dev, t);
		if (!pgpu_meta(n, dev, &pm))
			continue;
		build_and(dst, pm.m.pgpuVirtualizationCaps &
				       NVML_VGPU_PGPU_VIRTUALIZATION_CAP_MIGRATION_YES);
		if (s->nv_metadata_len >= offsetof(nvmlVgpuMetadata_t, opaqueData) &&
		    n->nvmlGetVgpuCompatibility) {
			union vgpu_meta vm;
			nvmlVgpuPgpuCompatibility_t c = { 0 };

			memset(&vm, 0, sizeof(vm));
			memcpy(vm.b, s->nv_metadata, s->nv_metadata_len);
			if (n->nvmlGetVgpuCompatibility(&vm.m, &pm.m, &c) == NVML_SUCCESS) {
				t->has_nv_compat = true;
				t->nv_compat = (uint32_t)c.vgpuVmCompatibility;
				t->nv_limit = c.compatibilityLimitCode;
			}
		}
	}
}

int vgpu_nvml_sched(struct vgpu_nvml *n, const char *bus, struct vgpu_sched *out)
{
	nvmlVgpuSchedulerGetState_t st;
	struct vgpu_sched s = { 0 };
	nvmlDevice_t dev;
	nvmlReturn_t r;
	unsigned ns;

	if (!n || !n->nvmlDeviceGetVgpuSchedulerState)
		return -ENOSYS;
	r = device(n, bus, &dev);
	if (r == NVML_SUCCESS) {
		memset(&st, 0, sizeof(st));
		r = n->nvmlDeviceGetVgpuSchedulerState(dev, &st);
	}
	if (r != NVML_SUCCESS)
		return nv_errno(r);
	switch (st.schedulerPolicy) {
	case NVML_VGPU_SCHEDULER_POLICY_BEST_EFFORT:
		s.policy = VGPU_SCHED_BEST_EFFORT;
		break;
	case NVML_VGPU_SCHEDULER_POLICY_EQUAL_SHARE:
		s.policy = VGPU_SCHED_EQUAL_SHARE;
		break;
	case NVML_VGPU_SCHEDULER_POLICY_FIXED_SHARE:
		s.policy = VGPU_SCHED_FIXED_SHARE;
		break;
	default:
		return -ENOENT; /* no active scheduling */
	}
	if (s.policy != VGPU_SCHED_BEST_EFFORT && st.isEnabledARR) {
		s.adaptive = true;
		s.avg_factor = st.schedulerParams.vgpuSchedDataWithARR.avgFactor;
		ns = st.schedulerParams.vgpuSchedDataWithARR.timeslice;
	} else {
		ns = st.schedulerParams.vgpuSchedData.timeslice;
	}
	if (s.policy != VGPU_SCHED_BEST_EFFORT && !s.adaptive)
		s.timeslice_ms = (ns + 500000u) / 1000000u;
	*out = s;
	return 0;
}

/* ---- HGX boards (#30): module IDs, Fabric Manager's physical IDs -------------------------- */

void vgpu_nvml_module_ids(struct vgpu_ctx *ctx, struct vgpu_nvml *n, struct vgpu_model *m)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		struct vgpu_gpu *g = &m->gpus[i];
		nvmlDevice_t dev;
		nvmlReturn_t r = device(n, g->addr, &dev);

		if (r != NVML_SUCCESS) {
			vgpu_log(ctx, LOG_WARNING, "GPU '%s': NVML does not know it: %s", g->addr,
				 nv_err(n, r));
			continue;
		}
		g->module_id = module_id(n, dev);
	}
}

int vgpu_nvml_nvlinks(struct vgpu_nvml *n, const char *bus, unsigned *out)
{
	struct vgpu_mig_vgpu v = { 0 };
	nvmlDevice_t dev;

	if (!n || !n->nvmlDeviceGetNvLinkState)
		return -ENOSYS;
	if (device(n, bus, &dev) != NVML_SUCCESS)
		return -ENOENT;
	nvlinks_of(n, dev, &v);
	if (!v.has_nvlinks)
		return -EIO;
	*out = v.nvlinks;
	return 0;
}

int vgpu_nvml_active_vgpus(struct vgpu_nvml *n, const char *bus, struct vgpu_nvml_vgpu *out,
			   size_t max)
{
	nvmlVgpuInstance_t ids[NVML_VGPUS_MAX];
	unsigned count = NVML_VGPUS_MAX;
	nvmlDevice_t dev;
	size_t k = 0;

	if (!n || !n->nvmlDeviceGetActiveVgpus || !n->nvmlVgpuInstanceGetVmID)
		return -ENOSYS;
	if (device(n, bus, &dev) != NVML_SUCCESS ||
	    n->nvmlDeviceGetActiveVgpus(dev, &count, ids) != NVML_SUCCESS)
		return -EIO;
	for (unsigned i = 0; i < count && i < NVML_VGPUS_MAX && k < max; i++) {
		struct vgpu_nvml_vgpu *v = &out[k++];
		nvmlVgpuVmIdType_t kind = NVML_VGPU_VM_ID_DOMAIN_ID;
		nvmlVgpuTypeId_t t = 0;

		memset(v, 0, sizeof(*v));
		if (n->nvmlVgpuInstanceGetVmID(ids[i], v->vm, NVML_DEVICE_UUID_BUFFER_SIZE,
					       &kind) == NVML_SUCCESS) {
			v->vm[NVML_DEVICE_UUID_BUFFER_SIZE] = '\0';
			v->vm_is_uuid = kind == NVML_VGPU_VM_ID_UUID;
		} else {
			v->vm[0] = '\0';
		}
		if (n->nvmlVgpuInstanceGetType &&
		    n->nvmlVgpuInstanceGetType(ids[i], &t) == NVML_SUCCESS)
			v->type_id = t;
	}
	return (int)k;
}
