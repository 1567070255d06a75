/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nccl-topo.h - an NCCL topology file (NCCL_TOPO_FILE) for a guest with
 * vGPUs: the guest's NUMA cells and PCI addresses, from its domain XML, with
 * what the host knows of each vGPU's GPU.  A VM's virtual PCIe tree hides the
 * real one, so NCCL in the guest would otherwise guess.
 */
#ifndef VGPU_NCCL_TOPO_H
#define VGPU_NCCL_TOPO_H

#include <stdint.h>

#include "ctx.h"
#include "plan.h"

/* The host's GPU under one vGPU, as the guest's NCCL should see it. */
struct vgpu_nccl_gpu {
	uint32_t class_code; /* PCI class (0x030200: 3D controller); 0 unknown */
	uint16_t vendor, device;
	uint16_t subsystem_vendor, subsystem_device; /* 0: unknown, not written */
	char link_speed[32]; /* "16.0 GT/s PCIe"; "" unknown */
	unsigned link_width; /* lanes; 0 unknown */
	unsigned sm; /* compute capability x 10 (80: Ampere GA100); 0 unknown */
	bool gdr; /* GPUDirect RDMA */
	unsigned nvswitch_links; /* its active NVLinks into the host's NVSwitches; 0 none */
};

/* What the host says, per vGPU of the domain's metadata, in its order. */
struct vgpu_nccl_host {
	const char *cpu_vendor; /* "GenuineIntel"; NULL unknown (not written) */
	char nvswitch[VGPU_BDF_LEN]; /* an NVSwitch of the host (NVLink targets); "" none */
	int cpu_family, cpu_model; /* x86 only; -1 unknown */
	struct vgpu_nccl_gpu gpus[VGPU_MAX_VGPUS];
	size_t n_gpus;
	/* nvlinks[i][j]: NVLinks between the GPUs of vGPUs i and j (0: none) */
	unsigned nvlinks[VGPU_MAX_VGPUS][VGPU_MAX_VGPUS];
};

struct _xmlDoc;
struct vgpu_sysfs;

/**
 * vgpu_nccl_sm() - the compute capability of an NVIDIA GPU by its PCI device
 * ID, times ten, for the GPUs vGPU runs on (Turing to Blackwell).
 * @device: the PCI device ID
 * Return: 75, 80, 86, 89, 90, 100 or 120; 0 when the ID is not known.
 */
unsigned vgpu_nccl_sm(uint16_t device);

/**
 * vgpu_nccl_topo_format() - the NCCL topology file of the domain @doc:
 * <system version="1"> with one <cpu numaid= affinity= arch=...> per guest
 * NUMA cell that holds a vGPU (the cell of the expander bus it is behind;
 * cell 0 without one), and in it per vGPU a <pci busid=...> with the guest's
 * bus address and @h's class, IDs and link, holding <gpu dev= sm= rank=
 * gdr=> and an <nvlink target= count= tclass=> per GPU it has NVLinks to, and
 * one to the NVSwitches (tclass 0x068000: NCCL makes them one NVSwitch node,
 * whatever the target's bus ID) when it has links into them.
 * GPUs are numbered (dev, rank) in the order of their guest bus addresses,
 * as CUDA does with CUDA_DEVICE_ORDER=PCI_BUS_ID.  Guest bus numbers are
 * counted as the firmware does: an expander bus starts at its busNr, and
 * each bridge or port takes the next number, depth first in slot order.
 * @ctx: where errors go
 * @doc: the domain (its PCI addresses assigned: libvirt's, or ours)
 * @h: the host's facts, per vGPU of the domain's metadata
 * @out: the text, on success; caller frees
 * Return: 0 or -errno with a message in @ctx: -ENOENT (no vGPU of vgpuctl,
 * or a vGPU without its hostdev), -EINVAL (a hostdev or controller without a
 * PCI address: define the domain first, or a bus that no controller gives).
 */
int vgpu_nccl_topo_format(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_nccl_host *h,
			  char **out);

struct vgpu_nvml;

/**
 * vgpu_nccl_topo() - vgpu_nccl_topo_format() with the host's facts read below
 * @fs: each vGPU's GPU (class, IDs, max_link_speed and max_link_width in
 * sysfs), the CPU (proc/cpuinfo: vendor, family, model), the NVSwitches
 * (PCI class 0x0680 of NVIDIA: an HGX board) and, with @nvml, each GPU's
 * active NVLinks, which go to the NVSwitches when the host has them.
 * @ctx: where errors go; files missing are left out of the file
 * @fs: the host root
 * @nvml: NVML, or NULL (no NVLinks are written)
 * @doc: the domain
 * @out: the text, on success; caller frees
 * Return: 0 or -errno with a message in @ctx (also vgpu_nccl_topo_format()'s).
 */
int vgpu_nccl_topo(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_nvml *nvml,
		   struct _xmlDoc *doc, char **out);

#endif
