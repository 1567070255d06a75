// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvml-probe - drive an NVML library from a command line, for the stand-in's
 * selftest: it dlopen()s LIB by path and resolves the entry points of
 * src/lib/nvml-abi.h the way vgpuctl does.
 *
 *   nvml-probe LIB - syms | init | uninit | errstr CODE
 *   nvml-probe LIB BUS handle | mig | mem | profiles | profile INDEX |
 *       profile-badversion INDEX | placements PROFILE_ID | placements-small PROFILE_ID |
 *       gis | create PROFILE_ID START [SIZE] | create-any PROFILE_ID | ci GI | dci GI |
 *       destroy GI | types | names | hetero | hetero-set MODE | hetero-badversion | sched |
 *       maxpergi-badversion TYPE_ID | handles |
 *       ecc | vgpus | vgpus-small | meta INSTANCE | meta-small INSTANCE | pmeta |
 *       compat INSTANCE | state INSTANCE | state-badversion INSTANCE | module
 *
 * An NVML call that fails prints "FUNCTION: STRING (CODE)" on stdout and exits
 * 1; usage errors and missing symbols exit 2.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml-abi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct {
#define FIELD(ret, name, args) ret(*name) args;
	VGPU_NVML_REQUIRED(FIELD)
	VGPU_NVML_OPTIONAL(FIELD)
#undef FIELD
	/* real NVML entry points the header does not list */
	nvmlReturn_t (*nvmlDeviceCreateGpuInstance)(nvmlDevice_t, unsigned int,
						    nvmlGpuInstance_t *);
	nvmlReturn_t (*nvmlGpuInstanceGetComputeInstances)(nvmlGpuInstance_t, unsigned int,
							   nvmlComputeInstance_t *, unsigned int *);
	nvmlReturn_t (*nvmlComputeInstanceDestroy)(nvmlComputeInstance_t);
} nv;

#define EXTRA(X)                                                                                   \
	X(nvmlDeviceCreateGpuInstance)                                                             \
	X(nvmlGpuInstanceGetComputeInstances) X(nvmlComputeInstanceDestroy)

static void *lib;

static void usage(void)
{
	fprintf(stderr, "usage: nvml-probe LIB BUS|- COMMAND [ARGS] (see the source)\n");
	exit(2);
}

/* an entry point, or exit 2 when the library lacks it */
#define NEED(fn)                                                                                   \
	do {                                                                                       \
		if (!nv.fn) {                                                                      \
			printf("missing symbol %s\n", #fn);                                        \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

/* call, and on failure print and exit 1 */
#define CALL(fn, ...)                                                                              \
	do {                                                                                       \
		nvmlReturn_t r_;                                                                   \
		NEED(fn);                                                                          \
		r_ = nv.fn(__VA_ARGS__);                                                           \
		if (r_ != NVML_SUCCESS)                                                            \
			fail(#fn, r_);                                                             \
	} while (0)

static void fail(const char *fn, nvmlReturn_t r)
{
	printf("%s: %s (%d)\n", fn, nv.nvmlErrorString ? nv.nvmlErrorString(r) : "?", r);
	exit(1);
}

/* print the code of a call expected to fail (or "ok") */
static void report(const char *fn, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		printf("%s: ok\n", fn);
	else
		printf("%s: %s (%d)\n", fn, nv.nvmlErrorString(r), r);
}

static unsigned int num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s || *end)
		usage();
	return (unsigned int)v;
}

static void resolve(void)
{
#define RESOLVE(ret, name, args) *(void **)(&nv.name) = dlsym(lib, #name);
	VGPU_NVML_REQUIRED(RESOLVE)
	VGPU_NVML_OPTIONAL(RESOLVE)
#undef RESOLVE
#define RESOLVE_EXTRA(name) *(void **)(&nv.name) = dlsym(lib, #name);
	EXTRA(RESOLVE_EXTRA)
#undef RESOLVE_EXTRA
}

static void syms(void)
{
#define SHOW(ret, name, args) printf("%s %s\n", #name, nv.name ? "yes" : "no");
	VGPU_NVML_REQUIRED(SHOW)
	VGPU_NVML_OPTIONAL(SHOW)
#undef SHOW
#define SHOW_EXTRA(name) printf("%s %s\n", #name, nv.name ? "yes" : "no");
	EXTRA(SHOW_EXTRA)
#undef SHOW_EXTRA
}

/* the size of profile @pid's placements and their starts ("0,4") */
static unsigned int placements(nvmlDevice_t dev, unsigned int pid, char *starts, size_t n)
{
	nvmlGpuInstancePlacement_t pl[16];
	unsigned int count = 0, size = 0;
	size_t off = 0;

	CALL(nvmlDeviceGetGpuInstancePossiblePlacements_v2, dev, pid, NULL, &count);
	if (count > ARRAY_SIZE(pl)) {
		printf("too many placements: %u\n", count);
		exit(1);
	}
	CALL(nvmlDeviceGetGpuInstancePossiblePlacements_v2, dev, pid, pl, &count);
	if (starts)
		starts[0] = '\0';
	for (unsigned int i = 0; i < count; i++) {
		size = pl[i].size;
		if (starts && off < n)
			off += (size_t)snprintf(starts + off, n - off, "%s%u", i ? "," : "",
						pl[i].start);
	}
	return size;
}

/* the GI with ID @id, by way of every profile's GetGpuInstances */
static nvmlGpuInstance_t find_gi(nvmlDevice_t dev, unsigned int id)
{
	for (unsigned int idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
		nvmlGpuInstance_t gis[64];
		unsigned int n = 0;

		if (nv.nvmlDeviceGetGpuInstanceProfileInfoV(dev, idx, &info) != NVML_SUCCESS)
			continue;
		CALL(nvmlDeviceGetGpuInstances, dev, info.id, gis, &n);
		for (unsigned int i = 0; i < n; i++) {
			nvmlGpuInstanceInfo_t gi;

			CALL(nvmlGpuInstanceGetInfo, gis[i], &gi);
			if (gi.id == id)
				return gis[i];
		}
	}
	printf("no GI %u\n", id);
	exit(1);
}

struct gi_line {
	unsigned int id, pid, start, size;
};

static int gi_cmp(const void *a, const void *b)
{
	const struct gi_line *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void list_gis(nvmlDevice_t dev)
{
	struct gi_line all[64];
	size_t na = 0;

	for (unsigned int idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
		nvmlGpuInstance_t gis[64];
		unsigned int n = 0;

		if (nv.nvmlDeviceGetGpuInstanceProfileInfoV(dev, idx, &info) != NVML_SUCCESS)
			continue;
		CALL(nvmlDeviceGetGpuInstances, dev, info.id, gis, &n);
		for (unsigned int i = 0; i < n && na < ARRAY_SIZE(all); i++) {
			nvmlGpuInstanceInfo_t gi;

			CALL(nvmlGpuInstanceGetInfo, gis[i], &gi);
			if (gi.device != dev || gi.profileId != info.id) {
				printf("GI %u: device %p profile %u, asked %p %u\n", gi.id,
				       (void *)gi.device, gi.profileId, (void *)dev, info.id);
				exit(1);
			}
			all[na++] = (struct gi_line){ gi.id, gi.profileId, gi.placement.start,
						      gi.placement.size };
		}
	}
	qsort(all, na, sizeof(all[0]), gi_cmp);
	for (size_t i = 0; i < na; i++)
		printf("%u %u %u:%u\n", all[i].id, all[i].pid, all[i].start, all[i].size);
}

/* the full CI profile of a GI: the one CI profile index the GI answers for */
static unsigned int full_ci(nvmlGpuInstance_t gi)
{
	for (unsigned int p = NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
	     p <= NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE; p++) {
		nvmlComputeInstanceProfileInfo_t info;

		if (nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
			    gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info) ==
		    NVML_SUCCESS)
			return info.id;
	}
	printf("no CI profile\n");
	exit(1);
}

static void types(nvmlDevice_t dev, bool names)
{
	nvmlVgpuTypeId_t ids[128];
	unsigned int n = 0;
	nvmlReturn_t r;

	NEED(nvmlDeviceGetSupportedVgpus);
	r = nv.nvmlDeviceGetSupportedVgpus(dev, &n, NULL);
	if (r != NVML_ERROR_INSUFFICIENT_SIZE && r != NVML_SUCCESS)
		fail("nvmlDeviceGetSupportedVgpus", r);
	if (n > ARRAY_SIZE(ids)) {
		printf("too many types: %u\n", n);
		exit(1);
	}
	CALL(nvmlDeviceGetSupportedVgpus, dev, &n, ids);
	for (unsigned int i = 0; i < n; i++) {
		char name[NVML_VGPU_NAME_BUFFER_SIZE], gi[16], per[16];
		unsigned int size = sizeof(name), pid, max;
		unsigned long long fb;
		const char *shortname;

		CALL(nvmlVgpuTypeGetName, ids[i], name, &size);
		if (names) {
			printf("%u %s\n", ids[i], name);
			continue;
		}
		CALL(nvmlVgpuTypeGetFramebufferSize, ids[i], &fb);
		CALL(nvmlVgpuTypeGetMaxInstances, dev, ids[i], &max);
		CALL(nvmlVgpuTypeGetGpuInstanceProfileId, ids[i], &pid);
		shortname = strrchr(name, ' ');
		shortname = shortname ? shortname + 1 : name;
		snprintf(gi, sizeof(gi), "-");
		snprintf(per, sizeof(per), "-");
		if (pid != NVML_INVALID_GPU_INSTANCE_PROFILE_ID) {
			snprintf(gi, sizeof(gi), "%u", pid);
			if (nv.nvmlVgpuTypeGetMaxInstancesPerGpuInstance) {
				nvmlVgpuTypeMaxInstance_v1_t m = {
					.version = nvmlVgpuTypeMaxInstance_v1,
					.vgpuTypeId = ids[i],
				};

				CALL(nvmlVgpuTypeGetMaxInstancesPerGpuInstance, &m);
				snprintf(per, sizeof(per), "%u", m.maxInstancePerGI);
			}
		}
		printf("%u %s %s %s %u %llu\n", ids[i], shortname, gi, per, max, fb >> 20);
	}
}

/* handles are stable: the same device and GI pointers on a second lookup */
static void handles(const char *bus, nvmlDevice_t dev)
{
	nvmlDevice_t again;

	CALL(nvmlDeviceGetHandleByPciBusId_v2, bus, &again);
	if (again != dev) {
		printf("device handle changed\n");
		exit(1);
	}
	for (unsigned int idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
		nvmlGpuInstance_t a[64], b[64];
		unsigned int na = 0, nb = 0;

		if (nv.nvmlDeviceGetGpuInstanceProfileInfoV(dev, idx, &info) != NVML_SUCCESS)
			continue;
		CALL(nvmlDeviceGetGpuInstances, dev, info.id, a, &na);
		CALL(nvmlDeviceGetGpuInstances, dev, info.id, b, &nb);
		if (na != nb || memcmp(a, b, na * sizeof(a[0])) != 0) {
			printf("GI handles of profile %u changed\n", info.id);
			exit(1);
		}
	}
	printf("stable\n");
}

/* the instance's metadata (and its size) into @m, @size bytes of room */
static unsigned int vgpu_meta(nvmlVgpuInstance_t id, nvmlVgpuMetadata_t *m, unsigned int size)
{
	CALL(nvmlVgpuInstanceGetMetadata, id, m, &size);
	return size;
}

/* the live-migration commands (#28); false for another command */
static bool migration(nvmlDevice_t dev, const char *cmd, char **arg, int nargs)
{
	static union {
		nvmlVgpuMetadata_t m;
		char b[1024];
	} vm;
	static union {
		nvmlVgpuPgpuMetadata_t m;
		char b[1024];
	} pm;
	unsigned int size = sizeof(pm.b);

	if (strcmp(cmd, "ecc") == 0) {
		nvmlEnableState_t cur, pend;

		CALL(nvmlDeviceGetEccMode, dev, &cur, &pend);
		printf("%d %d\n", cur, pend);
	} else if (strcmp(cmd, "vgpus") == 0 || strcmp(cmd, "vgpus-small") == 0) {
		nvmlVgpuInstance_t ids[16];
		unsigned int n = cmd[5] ? 0 : ARRAY_SIZE(ids);

		if (cmd[5]) {
			report("nvmlDeviceGetActiveVgpus",
			       nv.nvmlDeviceGetActiveVgpus(dev, &n, NULL));
			printf("count %u\n", n);
			return true;
		}
		CALL(nvmlDeviceGetActiveVgpus, dev, &n, ids);
		for (unsigned int i = 0; i < n; i++) {
			char vm_id[NVML_DEVICE_UUID_BUFFER_SIZE];
			nvmlVgpuVmIdType_t kind;
			nvmlVgpuTypeId_t t;

			CALL(nvmlVgpuInstanceGetVmID, ids[i], vm_id, sizeof(vm_id), &kind);
			CALL(nvmlVgpuInstanceGetType, ids[i], &t);
			printf("%u %s %d %u\n", ids[i], vm_id, kind, t);
		}
	} else if (strcmp(cmd, "meta") == 0 && nargs == 1) {
		size = vgpu_meta(num(arg[0]), &vm.m, sizeof(vm.b));
		printf("size %u guest %s host %s caps %u opaque %u '%s'\n", size,
		       vm.m.guestDriverVersion, vm.m.hostDriverVersion, vm.m.vgpuVirtualizationCaps,
		       vm.m.opaqueDataSize, vm.m.opaqueData);
	} else if (strcmp(cmd, "meta-small") == 0 && nargs == 1) {
		size = 0;
		report("nvmlVgpuInstanceGetMetadata",
		       nv.nvmlVgpuInstanceGetMetadata(num(arg[0]), NULL, &size));
		printf("size %u\n", size);
	} else if (strcmp(cmd, "pmeta") == 0) {
		CALL(nvmlDeviceGetVgpuMetadata, dev, &pm.m, &size);
		printf("size %u host %s caps %u range %#x-%#x '%s'\n", size, pm.m.hostDriverVersion,
		       pm.m.pgpuVirtualizationCaps, pm.m.hostSupportedVgpuRange.minVersion,
		       pm.m.hostSupportedVgpuRange.maxVersion, pm.m.opaqueData);
	} else if (strcmp(cmd, "compat") == 0 && nargs == 1) {
		nvmlVgpuPgpuCompatibility_t c;

		vgpu_meta(num(arg[0]), &vm.m, sizeof(vm.b));
		CALL(nvmlDeviceGetVgpuMetadata, dev, &pm.m, &size);
		CALL(nvmlGetVgpuCompatibility, &vm.m, &pm.m, &c);
		printf("vm %#x limit %#x\n", (unsigned int)c.vgpuVmCompatibility,
		       c.compatibilityLimitCode);
	} else if (strncmp(cmd, "state", 5) == 0 && nargs == 1) {
		nvmlVgpuRuntimeState_v1_t st = { .version = nvmlVgpuRuntimeState_v1 };

		if (cmd[5])
			st.version = NVML_STRUCT_VERSION(nvmlVgpuRuntimeState_v1_t, 2);
		CALL(nvmlVgpuInstanceGetRuntimeStateSize, num(arg[0]), &st);
		printf("%llu\n", st.size);
	} else {
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *bus, *cmd;
	nvmlDevice_t dev = NULL;
	char **arg;
	int nargs;

	if (argc < 4)
		usage();
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	resolve();
	bus = argv[2];
	cmd = argv[3];
	arg = argv + 4;
	nargs = argc - 4;
	if (strcmp(cmd, "syms") == 0) {
		syms();
		return 0;
	}
	if (strcmp(cmd, "errstr") == 0 && nargs == 1) {
		NEED(nvmlErrorString);
		printf("%s\n", nv.nvmlErrorString((nvmlReturn_t)strtol(arg[0], NULL, 0)));
		return 0;
	}
	if (strcmp(cmd, "uninit") == 0) {
		NEED(nvmlDeviceGetHandleByPciBusId_v2);
		report("nvmlDeviceGetHandleByPciBusId_v2",
		       nv.nvmlDeviceGetHandleByPciBusId_v2("0000:ca:00.0", &dev));
		return 0;
	}
	CALL(nvmlInit_v2);
	if (strcmp(cmd, "init") == 0) {
		printf("ok\n");
		CALL(nvmlShutdown);
		return 0;
	}
	if (strcmp(bus, "-") == 0)
		usage();
	CALL(nvmlDeviceGetHandleByPciBusId_v2, bus, &dev);
	if (strcmp(cmd, "handle") == 0) {
		printf("ok\n");
	} else if (strcmp(cmd, "mig") == 0) {
		unsigned int cur, pend;

		CALL(nvmlDeviceGetMigMode, dev, &cur, &pend);
		printf("%s %s\n", cur == NVML_DEVICE_MIG_ENABLE ? "Enabled" : "Disabled",
		       pend == NVML_DEVICE_MIG_ENABLE ? "Enabled" : "Disabled");
	} else if (strcmp(cmd, "mem") == 0) {
		nvmlMemory_t m;

		CALL(nvmlDeviceGetMemoryInfo, dev, &m);
		printf("%llu %llu %llu\n", m.total >> 20, m.free >> 20, m.used >> 20);
	} else if (strcmp(cmd, "profiles") == 0) {
		/* fake-nv-lib.sh fnv_profiles' format: ID NAME COMPUTE MEM STARTS MAX */
		for (unsigned int idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
			nvmlGpuInstanceProfileInfo_v2_t info = {
				.version = nvmlGpuInstanceProfileInfo_v2,
			};
			char starts[64];
			unsigned int size;
			nvmlReturn_t r = nv.nvmlDeviceGetGpuInstanceProfileInfoV(dev, idx, &info);

			if (r == NVML_ERROR_NOT_SUPPORTED)
				continue;
			if (r != NVML_SUCCESS)
				fail("nvmlDeviceGetGpuInstanceProfileInfoV", r);
			if (strncmp(info.name, "MIG ", 4) != 0) {
				printf("profile %u: name '%s'\n", idx, info.name);
				return 1;
			}
			size = placements(dev, info.id, starts, sizeof(starts));
			printf("%u %s %u %u %s %u\n", info.id, info.name + 4, info.sliceCount, size,
			       starts, info.instanceCount);
		}
	} else if ((strcmp(cmd, "profile") == 0 || strcmp(cmd, "profile-badversion") == 0) &&
		   nargs == 1) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };

		if (cmd[7])
			info.version = NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 1);
		CALL(nvmlDeviceGetGpuInstanceProfileInfoV, dev, num(arg[0]), &info);
		printf("id %u name %s slices %u instances %u memory %llu sm %u\n", info.id,
		       info.name, info.sliceCount, info.instanceCount, info.memorySizeMB,
		       info.multiprocessorCount);
	} else if (strcmp(cmd, "placements") == 0 && nargs == 1) {
		nvmlGpuInstancePlacement_t pl[16];
		unsigned int count = ARRAY_SIZE(pl);

		CALL(nvmlDeviceGetGpuInstancePossiblePlacements_v2, dev, num(arg[0]), pl, &count);
		for (unsigned int i = 0; i < count; i++)
			printf("%s%u:%u", i ? " " : "", pl[i].start, pl[i].size);
		printf("\n");
	} else if (strcmp(cmd, "placements-small") == 0 && nargs == 1) {
		nvmlGpuInstancePlacement_t pl[16];
		unsigned int count = 0, want;

		CALL(nvmlDeviceGetGpuInstancePossiblePlacements_v2, dev, num(arg[0]), NULL, &count);
		want = count;
		count = want - 1;
		report("nvmlDeviceGetGpuInstancePossiblePlacements_v2",
		       nv.nvmlDeviceGetGpuInstancePossiblePlacements_v2(dev, num(arg[0]), pl,
									&count));
		printf("count %u (want %u)\n", count, want);
	} else if (strcmp(cmd, "gis") == 0) {
		list_gis(dev);
	} else if (strcmp(cmd, "create") == 0 && (nargs == 2 || nargs == 3)) {
		nvmlGpuInstancePlacement_t pl = { .start = num(arg[1]) };
		nvmlGpuInstanceInfo_t info;
		nvmlGpuInstance_t gi;

		pl.size = nargs == 3 ? num(arg[2]) : placements(dev, num(arg[0]), NULL, 0);
		CALL(nvmlDeviceCreateGpuInstanceWithPlacement, dev, num(arg[0]), &pl, &gi);
		CALL(nvmlGpuInstanceGetInfo, gi, &info);
		printf("GI %u %u:%u\n", info.id, info.placement.start, info.placement.size);
	} else if (strcmp(cmd, "create-any") == 0 && nargs == 1) {
		nvmlGpuInstanceInfo_t info;
		nvmlGpuInstance_t gi;

		CALL(nvmlDeviceCreateGpuInstance, dev, num(arg[0]), &gi);
		CALL(nvmlGpuInstanceGetInfo, gi, &info);
		printf("GI %u %u:%u\n", info.id, info.placement.start, info.placement.size);
	} else if (strcmp(cmd, "ci") == 0 && nargs == 1) {
		nvmlGpuInstance_t gi = find_gi(dev, num(arg[0]));
		nvmlComputeInstance_t ci;
		unsigned int p = full_ci(gi);

		CALL(nvmlGpuInstanceCreateComputeInstance, gi, p, &ci);
		printf("CI profile %u\n", p);
	} else if (strcmp(cmd, "dci") == 0 && nargs == 1) {
		nvmlGpuInstance_t gi = find_gi(dev, num(arg[0]));
		nvmlComputeInstance_t cis[8];
		unsigned int n = 0;

		CALL(nvmlGpuInstanceGetComputeInstances, gi, full_ci(gi), cis, &n);
		for (unsigned int i = 0; i < n; i++)
			CALL(nvmlComputeInstanceDestroy, cis[i]);
		printf("destroyed %u\n", n);
	} else if (strcmp(cmd, "destroy") == 0 && nargs == 1) {
		CALL(nvmlGpuInstanceDestroy, find_gi(dev, num(arg[0])));
		printf("ok\n");
	} else if (strcmp(cmd, "types") == 0 || strcmp(cmd, "names") == 0) {
		types(dev, cmd[0] == 'n');
	} else if (strcmp(cmd, "hetero") == 0 || strcmp(cmd, "hetero-badversion") == 0) {
		nvmlVgpuHeterogeneousMode_v1_t m = { .version = nvmlVgpuHeterogeneousMode_v1 };

		if (cmd[6])
			m.version = NVML_STRUCT_VERSION(nvmlVgpuHeterogeneousMode_v1_t, 2);
		CALL(nvmlDeviceGetVgpuHeterogeneousMode, dev, &m);
		printf("%u\n", m.mode);
	} else if (strcmp(cmd, "module") == 0) {
		unsigned int id;

		CALL(nvmlDeviceGetModuleId, dev, &id);
		printf("module %u\n", id);
	} else if (strcmp(cmd, "sched") == 0) {
		nvmlVgpuSchedulerGetState_t st = { 0 };

		CALL(nvmlDeviceGetVgpuSchedulerState, dev, &st);
		printf("policy %u arr %u avg %u timeslice %u\n", st.schedulerPolicy,
		       st.isEnabledARR, st.schedulerParams.vgpuSchedDataWithARR.avgFactor,
		       st.isEnabledARR ? st.schedulerParams.vgpuSchedDataWithARR.timeslice :
					 st.schedulerParams.vgpuSchedData.timeslice);
	} else if (strcmp(cmd, "hetero-set") == 0 && nargs == 1) {
		nvmlVgpuHeterogeneousMode_v1_t m = { .version = nvmlVgpuHeterogeneousMode_v1,
						     .mode = num(arg[0]) };

		CALL(nvmlDeviceSetVgpuHeterogeneousMode, dev, &m);
		printf("ok\n");
	} else if (strcmp(cmd, "maxpergi-badversion") == 0 && nargs == 1) {
		nvmlVgpuTypeMaxInstance_v1_t m = { .version = 0, .vgpuTypeId = num(arg[0]) };

		CALL(nvmlVgpuTypeGetMaxInstancesPerGpuInstance, &m);
		printf("%u\n", m.maxInstancePerGI);
	} else if (strcmp(cmd, "handles") == 0) {
		handles(bus, dev);
	} else if (!migration(dev, cmd, arg, nargs)) {
		usage();
	}
	CALL(nvmlShutdown);
	return 0;
}
