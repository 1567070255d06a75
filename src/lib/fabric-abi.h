/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric-abi.h - the few Fabric Manager SDK types and entry points vgpuctl
 * uses, declared here because NVIDIA's SDK headers (nv_fm_agent.h,
 * nv_fm_types.h, package nvidia-fabricmanager-dev) are not on a build host.
 * Names, layouts, version words and return values are those headers'; the
 * ABI is versioned: each structure passed by pointer carries
 * MAKE_FM_PARAM_VERSION(type, ver) = sizeof(type) | ver << 24 in its first
 * member, and a library answers FM_ST_VERSION_MISMATCH to a version it
 * does not know.
 *
 * Only function pointer types are declared: src/lib/fabric.c resolves every
 * entry point with dlsym() and never links against libnvfm.  The test-only
 * stand-in (tests/nvfm/) implements the same entry points from this header.
 */
#ifndef VGPU_FABRIC_ABI_H
#define VGPU_FABRIC_ABI_H

/* nv_fm_types.h: enum fmReturn_enum (R535 and later; older libraries stop at -10) */
typedef int fmReturn_t;
enum {
	FM_ST_SUCCESS = 0,
	FM_ST_BADPARAM = -1,
	FM_ST_GENERIC_ERROR = -2,
	FM_ST_NOT_SUPPORTED = -3,
	FM_ST_UNINITIALIZED = -4,
	FM_ST_TIMEOUT = -5,
	FM_ST_VERSION_MISMATCH = -6,
	FM_ST_IN_USE = -7,
	FM_ST_NOT_CONFIGURED = -8,
	FM_ST_CONNECTION_NOT_VALID = -9,
	FM_ST_NVLINK_ERROR = -10,
	FM_ST_RESOURCE_BAD = -11,
	FM_ST_RESOURCE_IN_USE = -12,
	FM_ST_RESOURCE_NOT_IN_USE = -13,
	FM_ST_RESOURCE_EXHAUSTED = -14,
	FM_ST_RESOURCE_NOT_READY = -15,
	FM_ST_PARTITION_EXISTS = -16,
	FM_ST_PARTITION_ID_IN_USE = -17,
	FM_ST_PARTITION_ID_NOT_IN_USE = -18,
	FM_ST_PARTITION_NAME_IN_USE = -19,
	FM_ST_PARTITION_NAME_NOT_IN_USE = -20,
	FM_ST_PARTITION_ID_NAME_MISMATCH = -21,
	FM_ST_NOT_READY = -22,
	FM_ST_RESOURCE_USED_IN_THIS_PARTITION = -23,
	FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION = -24,
	FM_ST_PARTITION_MISWIRED_TRUNKS = -25,
	FM_ST_PARTITION_INSUFFICIENT_TRUNKS = -26,
	FM_ST_PARTITION_MISSING_SWITCHES = -27,
	FM_ST_PARTITION_NETWORK_CONFIG_ERROR = -28,
	FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR = -29,
};

typedef void *fmHandle_t;
typedef unsigned int fmFabricPartitionId_t;

#define FM_MAX_STR_LENGTH 256
#define FM_UUID_BUFFER_SIZE 80
#define FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define FM_MAX_NUM_GPUS 16
#define FM_MAX_NUM_NVSWITCHES 12
#define FM_MAX_FABRIC_PARTITIONS 64
#define FM_MAX_NUM_NVLINK_PORTS 64
#define FM_CMD_PORT_NUMBER 6666

#define MAKE_FM_PARAM_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24U)))

typedef struct {
	unsigned int version;
	char addressInfo[FM_MAX_STR_LENGTH]; /* "127.0.0.1:6666", or a socket path */
	unsigned int timeoutMs;
	unsigned int addressIsUnixSocket;
} fmConnectParams_v1;
#define fmConnectParams_version1 MAKE_FM_PARAM_VERSION(fmConnectParams_v1, 1)

enum nvFmApiAddrTypes {
	NV_FM_API_ADDR_TYPE_UNKNOWN = 0,
	NV_FM_API_ADDR_TYPE_INET = 1,
	NV_FM_API_ADDR_TYPE_UNIX = 2,
	NV_FM_API_ADDR_TYPE_VSOCK = 3,
};

typedef struct {
	unsigned int version;
	char addressInfo[FM_MAX_STR_LENGTH];
	unsigned int timeoutMs;
	unsigned int addressIsUnixSocket; /* deprecated: addressType */
	enum nvFmApiAddrTypes addressType;
} fmConnectParams_v2;
#define fmConnectParams_version2 MAKE_FM_PARAM_VERSION(fmConnectParams_v2, 2)

typedef struct {
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int function;
} fmPciDevice_t;

typedef struct {
	unsigned int physicalId; /* the GPU's module ID, as NVML's nvmlDeviceGetModuleId */
	char uuid[FM_UUID_BUFFER_SIZE];
	char pciBusId[FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	unsigned int numNvLinksAvailable;
	unsigned int maxNumNvLinks;
	unsigned int nvlinkLineRateMBps;
} fmFabricPartitionGpuInfo_t;

typedef struct {
	fmFabricPartitionId_t partitionId;
	unsigned int isActive;
	unsigned int numGpus;
	fmFabricPartitionGpuInfo_t gpuInfo[FM_MAX_NUM_GPUS];
} fmFabricPartitionInfo_t;

typedef struct {
	unsigned int version;
	unsigned int numPartitions;
	unsigned int maxNumPartitions;
	fmFabricPartitionInfo_t partitionInfo[FM_MAX_FABRIC_PARTITIONS];
} fmFabricPartitionList_v2;
/* sic: the headers give the _v2 structure version 1 */
#define fmFabricPartitionList_version2 MAKE_FM_PARAM_VERSION(fmFabricPartitionList_v2, 1)

typedef struct {
	unsigned int version;
	unsigned int numPartitions;
	fmFabricPartitionId_t partitionIds[FM_MAX_FABRIC_PARTITIONS];
} fmActivatedFabricPartitionList_v1;
#define fmActivatedFabricPartitionList_version1                                                    \
	MAKE_FM_PARAM_VERSION(fmActivatedFabricPartitionList_v1, 1)

typedef struct {
	char uuid[FM_UUID_BUFFER_SIZE];
	char pciBusId[FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	unsigned int numPorts;
	unsigned int portNum[FM_MAX_NUM_NVLINK_PORTS];
} fmNvlinkFailedDeviceInfo_t;

typedef struct {
	unsigned int version;
	unsigned int numGpus;
	unsigned int numSwitches;
	fmNvlinkFailedDeviceInfo_t gpuInfo[FM_MAX_NUM_GPUS];
	fmNvlinkFailedDeviceInfo_t switchInfo[FM_MAX_NUM_NVSWITCHES];
} fmNvlinkFailedDevices_v1;
#define fmNvlinkFailedDevices_version1 MAKE_FM_PARAM_VERSION(fmNvlinkFailedDevices_v1, 1)

typedef struct {
	fmFabricPartitionId_t partitionId;
	unsigned int numGpus;
	unsigned int gpuPhysicalIds[FM_MAX_NUM_GPUS];
} fmUnsupportedFabricPartitionInfo_t;

typedef struct {
	unsigned int version;
	unsigned int numPartitions;
	fmUnsupportedFabricPartitionInfo_t partitionInfo[FM_MAX_FABRIC_PARTITIONS];
} fmUnsupportedFabricPartitionList_v1;
#define fmUnsupportedFabricPartitionList_version1                                                  \
	MAKE_FM_PARAM_VERSION(fmUnsupportedFabricPartitionList_v1, 1)

/*
 * The entry points (nv_fm_agent.h), as function types: X(return, name,
 * parameters).  fabric.c expands the list into a table of pointers filled
 * by dlsym(); the stand-in into definitions.  fmConnect takes a
 * fmConnectParams_v2 (fmConnectParams_t of R535 and later) or, through a
 * cast, a v1 for an older library.  Optional: the VF activation (vGPU mode,
 * R460 and later), the unsupported partitions and the NVLink-failed devices.
 */
#define VGPU_NVFM_REQUIRED(X)                                                                      \
	X(fmReturn_t, fmLibInit, (void))                                                           \
	X(fmReturn_t, fmLibShutdown, (void))                                                       \
	X(fmReturn_t, fmConnect, (fmConnectParams_v2 * params, fmHandle_t * handle))               \
	X(fmReturn_t, fmDisconnect, (fmHandle_t handle))                                           \
	X(fmReturn_t, fmGetSupportedFabricPartitions,                                              \
	  (fmHandle_t handle, fmFabricPartitionList_v2 * list))                                    \
	X(fmReturn_t, fmActivateFabricPartition, (fmHandle_t handle, fmFabricPartitionId_t id))    \
	X(fmReturn_t, fmDeactivateFabricPartition, (fmHandle_t handle, fmFabricPartitionId_t id))  \
	X(fmReturn_t, fmSetActivatedFabricPartitions,                                              \
	  (fmHandle_t handle, fmActivatedFabricPartitionList_v1 * list))

#define VGPU_NVFM_OPTIONAL(X)                                                                      \
	X(fmReturn_t, fmActivateFabricPartitionWithVFs,                                            \
	  (fmHandle_t handle, fmFabricPartitionId_t id, fmPciDevice_t * vfs, unsigned int n))      \
	X(fmReturn_t, fmGetUnsupportedFabricPartitions,                                            \
	  (fmHandle_t handle, fmUnsupportedFabricPartitionList_v1 * list))                         \
	X(fmReturn_t, fmGetNvlinkFailedDevices,                                                    \
	  (fmHandle_t handle, fmNvlinkFailedDevices_v1 * list))

#endif
