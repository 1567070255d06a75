/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvml-abi.h - the few NVML types and entry points vgpuctl uses, declared
 * here because NVIDIA's nvml.h is not packaged.  NVML's ABI is versioned and
 * stable: names carry their version (nvmlInit_v2), and versioned structures
 * carry sizeof | version << 24 in their first member.  Layouts and values are
 * those of nvml.h (CUDA 12.x); nvtop and go-nvml declare them the same way.
 *
 * Only function pointer types are declared: src/lib/nvml.c resolves every
 * entry point with dlsym() and never links against libnvidia-ml.  The
 * test-only stand-in (tests/nvml/) implements the same entry points from
 * this header.
 */
#ifndef VGPU_NVML_ABI_H
#define VGPU_NVML_ABI_H

typedef int nvmlReturn_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef unsigned int nvmlVgpuTypeId_t;

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* GPU instance profile indexes (not the profile IDs nvidia-smi -cgi takes) */
#define NVML_GPU_INSTANCE_PROFILE_COUNT 17
/* nvmlVgpuTypeGetGpuInstanceProfileId() for a time-sliced type */
#define NVML_INVALID_GPU_INSTANCE_PROFILE_ID 0xFFFFFFFFu
/* compute instance profile index of the full CI of a GI, per compute slices */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 4
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_VGPU_NAME_BUFFER_SIZE 64

#define NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24U)))

typedef struct {
	unsigned int start;
	unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct {
	unsigned int version; /* nvmlGpuInstanceProfileInfo_v2 */
	unsigned int id; /* the profile ID (nvidia-smi's) */
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2)

typedef struct {
	nvmlDevice_t device;
	unsigned int id;
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct {
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct {
	unsigned int version;
	nvmlVgpuTypeId_t vgpuTypeId;
	unsigned int maxInstancePerGI;
} nvmlVgpuTypeMaxInstance_v1_t;
#define nvmlVgpuTypeMaxInstance_v1 NVML_STRUCT_VERSION(nvmlVgpuTypeMaxInstance_v1_t, 1)

typedef struct {
	unsigned int version;
	unsigned int mode; /* 0 equal-size, 1 mixed-size */
} nvmlVgpuHeterogeneousMode_v1_t;
#define nvmlVgpuHeterogeneousMode_v1 NVML_STRUCT_VERSION(nvmlVgpuHeterogeneousMode_v1_t, 1)

/* the placements of a time-sliced type in one mode: their count is the mode's maximum */
#define NVML_VGPU_PGPU_HETEROGENEOUS_MODE 0
#define NVML_VGPU_PGPU_HOMOGENEOUS_MODE 1
typedef struct {
	unsigned int version;
	unsigned int placementSize; /* OUT: slots one vGPU of the type takes */
	unsigned int count; /* IN: room in placementIds; OUT: placements */
	unsigned int *placementIds;
	unsigned int mode; /* IN: NVML_VGPU_PGPU_*_MODE */
} nvmlVgpuPlacementList_v2_t;
#define nvmlVgpuPlacementList_v2 NVML_STRUCT_VERSION(nvmlVgpuPlacementList_v2_t, 2)

typedef struct {
	unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;

/* ---- live migration (#28): ECC, a GPU's vGPU instances, their metadata, compatibility ---- */

typedef int nvmlEnableState_t; /* NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1 */
#define NVML_FEATURE_DISABLED 0
#define NVML_FEATURE_ENABLED 1

typedef unsigned int nvmlVgpuInstance_t; /* 0 is never an instance */
typedef int nvmlVgpuVmIdType_t;
#define NVML_VGPU_VM_ID_DOMAIN_ID 0
#define NVML_VGPU_VM_ID_UUID 1 /* KVM: the domain's UUID */
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

/* bit 0 of vgpuVirtualizationCaps / pgpuVirtualizationCaps ("0 : 0" in nvml.h) */
#define NVML_VGPU_VIRTUALIZATION_CAP_MIGRATION_YES 0x1
#define NVML_VGPU_PGPU_VIRTUALIZATION_CAP_MIGRATION_YES 0x1

typedef int nvmlVgpuGuestInfoState_t;
typedef struct {
	unsigned int version;
	unsigned int revision;
	nvmlVgpuGuestInfoState_t guestInfoState;
	char guestDriverVersion[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	char hostDriverVersion[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	unsigned int reserved[6];
	unsigned int vgpuVirtualizationCaps;
	unsigned int guestVgpuVersion;
	unsigned int opaqueDataSize;
	char opaqueData[4]; /* opaqueDataSize bytes: *bufferSize says the whole size */
} nvmlVgpuMetadata_t;

typedef struct {
	unsigned int minVersion;
	unsigned int maxVersion;
} nvmlVgpuVersion_t;

typedef struct {
	unsigned int version;
	unsigned int revision;
	char hostDriverVersion[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	unsigned int pgpuVirtualizationCaps;
	unsigned int reserved[5];
	nvmlVgpuVersion_t hostSupportedVgpuRange;
	unsigned int opaqueDataSize;
	char opaqueData[4];
} nvmlVgpuPgpuMetadata_t;

/* vgpuVmCompatibility: bits NONE 0, COLD 1, HIBERNATE 2, SLEEP 4, LIVE 8 */
typedef int nvmlVgpuVmCompatibility_t;
#define NVML_VGPU_VM_COMPATIBILITY_LIVE 0x8
/* compatibilityLimitCode: NONE 0, HOST_DRIVER 1, GUEST_DRIVER 2, GPU 4, OTHER 0x80000000 */
typedef unsigned int nvmlVgpuPgpuCompatibilityLimitCode_t;
typedef struct {
	nvmlVgpuVmCompatibility_t vgpuVmCompatibility;
	nvmlVgpuPgpuCompatibilityLimitCode_t compatibilityLimitCode;
} nvmlVgpuPgpuCompatibility_t;

typedef struct {
	unsigned int version;
	unsigned long long size; /* bytes of runtime state besides the framebuffer */
} nvmlVgpuRuntimeState_v1_t;
#define nvmlVgpuRuntimeState_v1 NVML_STRUCT_VERSION(nvmlVgpuRuntimeState_v1_t, 1)

/* NVLink (migrate-check's topology): links 0 .. NVML_NVLINK_MAX_LINKS - 1 (nvml.h, CUDA 12.x) */
#define NVML_NVLINK_MAX_LINKS 18

/*
 * The vGPU scheduler state (nvml.h, NVML 12.x and later; NVIDIA's layout):
 * the policy NVML_VGPU_SCHEDULER_POLICY_*, whether adaptive round robin is
 * on, and the time slice in ns (with the averaging factor in ARR mode).
 */
#define NVML_VGPU_SCHEDULER_POLICY_UNKNOWN 0
#define NVML_VGPU_SCHEDULER_POLICY_BEST_EFFORT 1
#define NVML_VGPU_SCHEDULER_POLICY_EQUAL_SHARE 2
#define NVML_VGPU_SCHEDULER_POLICY_FIXED_SHARE 3
#define NVML_VGPU_SCHEDULER_ARR_DEFAULT 0
#define NVML_VGPU_SCHEDULER_ARR_DISABLE 1
#define NVML_VGPU_SCHEDULER_ARR_ENABLE 2

typedef union {
	struct {
		unsigned int avgFactor; /* averaging factor of adaptive round robin */
		unsigned int timeslice; /* ns */
	} vgpuSchedDataWithARR;
	struct {
		unsigned int timeslice; /* ns */
	} vgpuSchedData;
} nvmlVgpuSchedulerParams_t;

typedef struct nvmlVgpuSchedulerGetState_st {
	unsigned int schedulerPolicy;
	unsigned int isEnabledARR;
	nvmlVgpuSchedulerParams_t schedulerParams;
} nvmlVgpuSchedulerGetState_t;

/*
 * The entry points, as function types: X(return, name, parameters).  nvml.c
 * expands the list into a table of pointers filled by dlsym(); the stand-in
 * into definitions.  Required ones first; the rest may be missing in an
 * older driver (CreateGpuInstanceWithPlacement: R470 and later,
 * MaxInstancesPerGpuInstance: 575 and later, heterogeneous mode and
 * vGPU placements: 550 and later); vgpuctl then falls back to nvidia-smi or
 * to the tables.  The migration calls (ECC mode, vGPU instances, metadata,
 * compatibility: CUDA 9 era; the runtime state size: recent drivers only; NVLink
 * state: CUDA 8 era) only feed migrate-check's checks, which are UNKNOWN
 * without them.
 */
#define VGPU_NVML_REQUIRED(X)                                                                      \
	X(nvmlReturn_t, nvmlInit_v2, (void))                                                       \
	X(nvmlReturn_t, nvmlShutdown, (void))                                                      \
	X(const char *, nvmlErrorString, (nvmlReturn_t r))                                         \
	X(nvmlReturn_t, nvmlDeviceGetHandleByPciBusId_v2, (const char *bus, nvmlDevice_t *dev))    \
	X(nvmlReturn_t, nvmlDeviceGetMigMode,                                                      \
	  (nvmlDevice_t dev, unsigned int *current, unsigned int *pending))                        \
	X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t dev, nvmlMemory_t * mem))           \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfoV,                                      \
	  (nvmlDevice_t dev, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *info))         \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstancePossiblePlacements_v2,                             \
	  (nvmlDevice_t dev, unsigned int profileId, nvmlGpuInstancePlacement_t *placements,       \
	   unsigned int *count))                                                                   \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstances,                                                 \
	  (nvmlDevice_t dev, unsigned int profileId, nvmlGpuInstance_t *gis, unsigned int *count)) \
	X(nvmlReturn_t, nvmlGpuInstanceGetInfo,                                                    \
	  (nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t * info))                                    \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,                              \
	  (nvmlGpuInstance_t gi, unsigned int profile, unsigned int engProfile,                    \
	   nvmlComputeInstanceProfileInfo_t *info))                                                \
	X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance,                                      \
	  (nvmlGpuInstance_t gi, unsigned int profileId, nvmlComputeInstance_t *ci))               \
	X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gi))                            \
	X(nvmlReturn_t, nvmlDeviceGetSupportedVgpus,                                               \
	  (nvmlDevice_t dev, unsigned int *count, nvmlVgpuTypeId_t *ids))                          \
	X(nvmlReturn_t, nvmlVgpuTypeGetName,                                                       \
	  (nvmlVgpuTypeId_t id, char *name, unsigned int *size))                                   \
	X(nvmlReturn_t, nvmlVgpuTypeGetFramebufferSize,                                            \
	  (nvmlVgpuTypeId_t id, unsigned long long *bytes))                                        \
	X(nvmlReturn_t, nvmlVgpuTypeGetMaxInstances,                                               \
	  (nvmlDevice_t dev, nvmlVgpuTypeId_t id, unsigned int *count))                            \
	X(nvmlReturn_t, nvmlVgpuTypeGetGpuInstanceProfileId,                                       \
	  (nvmlVgpuTypeId_t id, unsigned int *profileId))

#define VGPU_NVML_OPTIONAL(X)                                                                      \
	X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,                                  \
	  (nvmlDevice_t dev, unsigned int profileId, const nvmlGpuInstancePlacement_t *placement,  \
	   nvmlGpuInstance_t *gi))                                                                 \
	X(nvmlReturn_t, nvmlVgpuTypeGetMaxInstancesPerGpuInstance,                                 \
	  (nvmlVgpuTypeMaxInstance_v1_t * max))                                                    \
	X(nvmlReturn_t, nvmlDeviceGetVgpuHeterogeneousMode,                                        \
	  (nvmlDevice_t dev, nvmlVgpuHeterogeneousMode_v1_t * mode))                               \
	X(nvmlReturn_t, nvmlDeviceSetVgpuHeterogeneousMode,                                        \
	  (nvmlDevice_t dev, const nvmlVgpuHeterogeneousMode_v1_t *mode))                          \
	X(nvmlReturn_t, nvmlDeviceGetVgpuTypeSupportedPlacements,                                  \
	  (nvmlDevice_t dev, nvmlVgpuTypeId_t id, nvmlVgpuPlacementList_v2_t * list))              \
	X(nvmlReturn_t, nvmlDeviceGetEccMode,                                                      \
	  (nvmlDevice_t dev, nvmlEnableState_t * current, nvmlEnableState_t * pending))            \
	X(nvmlReturn_t, nvmlDeviceGetActiveVgpus,                                                  \
	  (nvmlDevice_t dev, unsigned int *count, nvmlVgpuInstance_t *instances))                  \
	X(nvmlReturn_t, nvmlVgpuInstanceGetVmID,                                                   \
	  (nvmlVgpuInstance_t vgpu, char *vmId, unsigned int size, nvmlVgpuVmIdType_t *type))      \
	X(nvmlReturn_t, nvmlVgpuInstanceGetType, (nvmlVgpuInstance_t vgpu, nvmlVgpuTypeId_t * id)) \
	X(nvmlReturn_t, nvmlVgpuInstanceGetMetadata,                                               \
	  (nvmlVgpuInstance_t vgpu, nvmlVgpuMetadata_t * meta, unsigned int *bufferSize))          \
	X(nvmlReturn_t, nvmlDeviceGetVgpuMetadata,                                                 \
	  (nvmlDevice_t dev, nvmlVgpuPgpuMetadata_t * meta, unsigned int *bufferSize))             \
	X(nvmlReturn_t, nvmlGetVgpuCompatibility,                                                  \
	  (nvmlVgpuMetadata_t * vgpuMeta, nvmlVgpuPgpuMetadata_t * pgpuMeta,                       \
	   nvmlVgpuPgpuCompatibility_t * compat))                                                  \
	X(nvmlReturn_t, nvmlVgpuInstanceGetRuntimeStateSize,                                       \
	  (nvmlVgpuInstance_t vgpu, nvmlVgpuRuntimeState_v1_t * state))                            \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkState,                                                  \
	  (nvmlDevice_t dev, unsigned int link, nvmlEnableState_t *isActive))                      \
	X(nvmlReturn_t, nvmlDeviceGetVgpuSchedulerState,                                           \
	  (nvmlDevice_t dev, nvmlVgpuSchedulerGetState_t * state))                                 \
	X(nvmlReturn_t, nvmlDeviceGetModuleId, (nvmlDevice_t dev, unsigned int *moduleId))

#endif
