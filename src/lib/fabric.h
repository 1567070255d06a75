/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric.h - NVSwitch fabric partitions on HGX boards, through NVIDIA
 * Fabric Manager's library (libnvfm), loaded with dlopen() like NVML: the
 * few types and calls vgpuctl uses are declared in fabric.c, never linked.
 * In vGPU mode (FABRIC_MODE=2) a partition must be active before a vGPU
 * VM starts, even one with a single vGPU.
 */
#ifndef VGPU_FABRIC_H
#define VGPU_FABRIC_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "util.h"

struct vgpu_sysfs;

/* The library's soname, as Fabric Manager's packages install it. */
#define VGPU_NVFM_SONAME "libnvfm.so.1"
/* Fabric Manager's configuration, relative to the host root. */
#define VGPU_FABRIC_CFG "usr/share/nvidia/nvswitch/fabricmanager.cfg"
/* At most this many GPUs in a partition (Fabric Manager's FM_MAX_NUM_GPUS). */
#define VGPU_FABRIC_MAX_GPUS 16

enum vgpu_fabric_mode {
	VGPU_FABRIC_NONE = -1, /* no Fabric Manager configuration on this host */
	VGPU_FABRIC_BAREMETAL = 0, /* FABRIC_MODE=0: bare metal or full pass-through */
	VGPU_FABRIC_SHARED = 1, /* FABRIC_MODE=1: shared NVSwitch multitenancy */
	VGPU_FABRIC_VGPU = 2, /* FABRIC_MODE=2: vGPU multitenancy */
};

struct vgpu_fabric_gpu {
	unsigned module_id; /* Fabric Manager's physical ID: NVML's module ID */
	char bus[VGPU_BDF_LEN]; /* the GPU with that module ID; "" when none is known */
	unsigned nvlinks, max_nvlinks; /* NVLinks available / at most */
};

struct vgpu_fabric_part {
	unsigned id;
	bool active; /* as Fabric Manager says */
	bool supported; /* false: listed among the unsupported partitions */
	size_t ngpus;
	struct vgpu_fabric_gpu gpu[VGPU_FABRIC_MAX_GPUS];
};

struct vgpu_fabric {
	enum vgpu_fabric_mode mode;
	struct vgpu_fabric_part *v; /* sorted by id: supported and unsupported */
	size_t n;
	struct vgpu_strv failed; /* NVLink-failed devices: a GPU's bus, else "module N", or "switch
				    N" */
};

/**
 * vgpu_fabric_clear() - free what @f holds; it is empty and reusable after.
 * @f: the fabric
 */
void vgpu_fabric_clear(struct vgpu_fabric *f);

/**
 * vgpu_fabric_mode_read() - FABRIC_MODE from Fabric Manager's configuration.
 * @ctx: the message when the file cannot be read or parsed
 * @fs: the host root
 * @mode: VGPU_FABRIC_NONE when the file is not there
 * Return: 0; -errno with a one-line message naming the file.
 */
int vgpu_fabric_mode_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_fabric_mode *mode);

/* Where Fabric Manager listens for its SDK (fmConnect's addressInfo). */
struct vgpu_fabric_addr {
	char addr[256]; /* "IP:PORT", or a Unix socket's path */
	bool unix_socket;
};

/**
 * vgpu_fabric_address() - where Fabric Manager listens, from its
 * configuration: FM_CMD_UNIX_SOCKET_PATH when set, else
 * FM_CMD_BIND_INTERFACE:FM_CMD_PORT_NUMBER (defaults 127.0.0.1 and 6666).
 * @ctx: the message when the file cannot be read or the port is bad
 * @fs: the host root (NULL: the defaults)
 * @out: the address
 * Return: 0; -errno with a one-line message naming the file.
 */
int vgpu_fabric_address(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_fabric_addr *out);

struct vgpu_fm;

/**
 * vgpu_fm_open() - load libnvfm, initialise it and connect to Fabric Manager
 * where its configuration says it listens (vgpu_fabric_address()).
 * @ctx: where the reason goes when it cannot be used
 * @path: the library (a path, or a soname the loader looks up); NULL: VGPU_NVFM_SONAME
 * @fs: the host root, for fabricmanager.cfg (NULL: Fabric Manager's default address)
 * @out: the handle, on success; free with vgpu_fm_close()
 * Return: 0; -ENOENT when the library is not there, -ENOSYS when it lacks
 * an entry point, -ECONNREFUSED when Fabric Manager is not running; each
 * with a one-line message in @ctx.
 */
int vgpu_fm_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_sysfs *fs,
		 struct vgpu_fm **out);

/**
 * vgpu_fm_close() - disconnect, shut the library down and unload it (NULL is fine).
 * @fm: the handle
 */
void vgpu_fm_close(struct vgpu_fm *fm);

struct vgpu_model;

/**
 * vgpu_fm_read() - the partitions, their state and the NVLink-failed devices.
 * @ctx: the message on failure
 * @fm: the handle
 * @m: the host, each GPU's module ID filled from NVML: maps module IDs to buses
 * @out: filled, mode included; clear with vgpu_fabric_clear()
 * Return: 0; -errno as vgpu_fm_activate() with a one-line message.
 */
int vgpu_fm_read(struct vgpu_ctx *ctx, struct vgpu_fm *fm, const struct vgpu_model *m,
		 struct vgpu_fabric *out);

/**
 * vgpu_fm_activate() - activate partition @id.
 * @ctx: the message on failure
 * @fm: the handle
 * @id: the partition
 * @vfs: in vGPU mode, one VF per GPU of the partition (fmActivateFabricPartitionWithVFs);
 *       NULL with @nvfs 0 otherwise (fmActivateFabricPartition)
 * @nvfs: how many
 * Return: 0; -ECONNREFUSED Fabric Manager not running, -EAGAIN fabric not
 * ready, -EBUSY partition in use, -ESTALE out of sync (a restarted Fabric
 * Manager not told which partitions are active), -EINVAL no such
 * partition, -EIO anything else; each with a one-line message naming the
 * partition and Fabric Manager's status.
 */
int vgpu_fm_activate(struct vgpu_ctx *ctx, struct vgpu_fm *fm, unsigned id,
		     const char (*vfs)[VGPU_BDF_LEN], size_t nvfs);

/**
 * vgpu_fm_deactivate() - deactivate partition @id.
 * @ctx: the message on failure
 * @fm: the handle
 * @id: the partition
 * Return: 0; -errno as vgpu_fm_activate().
 */
int vgpu_fm_deactivate(struct vgpu_ctx *ctx, struct vgpu_fm *fm, unsigned id);

/**
 * vgpu_fm_set_activated() - tell a restarted Fabric Manager which partitions are active.
 * @ctx: the message on failure
 * @fm: the handle
 * @ids: the partitions
 * @n: how many (0 is fine)
 * Return: 0; -errno as vgpu_fm_activate().
 */
int vgpu_fm_set_activated(struct vgpu_ctx *ctx, struct vgpu_fm *fm, const unsigned *ids, size_t n);

#endif /* VGPU_FABRIC_H */
