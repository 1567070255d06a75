#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mksynth.sh ROOT NGPU NVF NTYPE
#
# Build a synthetic NVIDIA vGPU (SR-IOV + mdev) host sysfs tree under ROOT,
# suitable for `vgpuctl --sysroot ROOT ...` and for `mdevctl` after
# `mount --bind ROOT/sys /sys` in a private mount namespace.
#
#   NGPU   number of NVIDIA A30 physical functions (PFs), 0 allowed
#   NVF    SR-IOV virtual functions (VFs) per PF
#   NTYPE  mdev types per VF (nvidia-600, nvidia-601, ...)
#
# Layout (BB = 0x10 + g in hex, g = 0..NGPU-1; VFs share their PF's bus):
#   sys/devices/pci0000:BB/0000:BB:00.0        PF (vendor/device/class/numa_node,
#                                              local_cpulist, sriov_*, virtfnN,
#                                              driver, iommu_group)
#   sys/devices/pci0000:BB/0000:BB:SS.F        VF n at routing id PF+4+n:
#                                              SS = (4+n)/8, F = (4+n)%8
#                                              (physfn, driver, iommu_group,
#                                              mdev_supported_types/nvidia-*)
#   sys/bus/pci/devices/<BDF>                  -> ../../../devices/pci0000:BB/<BDF>
#   sys/bus/pci/drivers/nvidia/<BDF>           -> ../../../../devices/pci0000:BB/<BDF>
#   sys/class/mdev_bus/<VF>                    -> ../../devices/pci0000:BB/<VF>
#   sys/kernel/iommu_groups/N/devices/<BDF>    -> ../../../../devices/pci0000:BB/<BDF>
#   sys/devices/pci0000:00/0000:00:00.0        Intel host bridge (not NVIDIA)
#   sys/devices/system/node/{online,node0,node1}, sys/devices/system/cpu/...
#     2 NUMA nodes, 16 CPUs: node0 = cpus 0-7, node1 = cpus 8-15; each core
#     has 2 threads, thread siblings are n and n+4 inside a node
#     (0,4 1,5 2,6 3,7 | 8,12 9,13 10,14 11,15).  PFs alternate node 0/1.
#     No hugepages configured.
#   proc/driver/nvidia/version, capabilities/mig/{config,monitor} and
#     gpus/<PF>/information (Device Minor g); MIG is off on every GPU
#     (no capabilities/gpu<g>), every type has 1 available instance.
#
# Type names cycle through the real A30 names for t = 0..8 (A30-1-6C,
# A30-2-12C, A30-4-24C, A30-1-6CME, A30-4C, A30-6C, A30-8C, A30-12C,
# A30-24C); from t = 9 on they are "A30-<t+16>C" (A30-25C, A30-26C, ...),
# offset so that they never collide with the real names (A30-12C, A30-24C)
# and every VF keeps unique type names.
#
# Speed: files are written with printf redirections (bash builtins),
# directories are created with a few batched `mkdir -p` calls and all
# symlinks are created by one perl process (falls back to `ln -s` per link
# if perl is missing).  The tree is built from scratch: ROOT must not exist
# or be empty.

set -euo pipefail

usage() {
	echo "usage: $0 ROOT NGPU NVF NTYPE" >&2
	exit 2
}

[ $# -eq 4 ] || usage
ROOT=$1 NGPU=$2 NVF=$3 NTYPE=$4
for v in "$NGPU" "$NVF" "$NTYPE"; do
	[[ $v =~ ^[0-9]+$ ]] || usage
done
if [ $((0x10 + NGPU - 1)) -gt 255 ] || [ $((4 + NVF - 1)) -gt 255 ]; then
	echo "$0: NGPU=$NGPU or NVF=$NVF too large (bus 0x10+g and routing id 4+n must be <= 0xff)" >&2
	exit 2
fi
if [ $((4 + NVF - 1)) -gt 255 ]; then
	echo "$0: NVF=$NVF too large (routing id PF+4+n must fit in devfn)" >&2
	exit 2
fi
if [ -e "$ROOT" ] && [ -n "$(ls -A "$ROOT")" ]; then
	echo "$0: $ROOT exists and is not empty" >&2
	exit 1
fi

S=$ROOT/sys
VENDOR=0x10de
DEVICE=0x20b7          # NVIDIA A30
SUBVENDOR=0x10de
SUBDEVICE=0x1532
CLASS=0x030200         # 3D controller
DESC="num_heads=1, frl_config=60, framebuffer=6144M, max_resolution=4096x2160, max_instance=4"
REAL_NAMES=(A30-1-6C A30-2-12C A30-4-24C A30-1-6CME A30-4C A30-6C A30-8C A30-12C A30-24C)
NODE_CPUS=(0-7 8-15)
NODE_MASK=(00ff ff00)

# ---------------------------------------------------------------------------
# Type names (same set on every VF)
TYPE_IDS=() TYPE_NAMES=()
for ((t = 0; t < NTYPE; t++)); do
	TYPE_IDS+=("nvidia-$((600 + t))")
	if ((t < ${#REAL_NAMES[@]})); then
		TYPE_NAMES+=("NVIDIA ${REAL_NAMES[t]}")
	else
		TYPE_NAMES+=("NVIDIA A30-$((t + 16))C")
	fi
done

# ---------------------------------------------------------------------------
# Pass 1: compute device names, collect directories and symlinks.
PF_BDF=() PF_DIR=()           # per GPU
VF_BDF=() VF_DIR=() VF_GPU=() # flat over all VFs
LINKS=()                      # pairs: target linkpath
DIRS=("$S/bus/pci/devices" "$S/bus/pci/drivers/nvidia" "$S/class/mdev_bus"
	"$S/bus/mdev/devices" "$S/kernel/iommu_groups" "$S/module/nvidia"
	"$S/devices/system/node/node0" "$S/devices/system/node/node1"
	"$S/devices/pci0000:00/0000:00:00.0" "$S/kernel/iommu_groups/0/devices"
	"$ROOT/proc/driver/nvidia/capabilities/mig")
for node in 0 1; do
	for hp in 1048576 2048; do
		DIRS+=("$S/devices/system/node/node$node/hugepages/hugepages-${hp}kB")
	done
done
# Host bridge: iommu group 0.
HB=0000:00:00.0
LINKS+=("../../../kernel/iommu_groups/0" "$S/devices/pci0000:00/$HB/iommu_group"
	"../../../../devices/pci0000:00/$HB" "$S/kernel/iommu_groups/0/devices/$HB"
	"../../../devices/pci0000:00/$HB" "$S/bus/pci/devices/$HB")

grp=1
for ((g = 0; g < NGPU; g++)); do
	printf -v bus '%02x' $((0x10 + g))
	host="pci0000:$bus"
	pf="0000:$bus:00.0"
	pfdir="$S/devices/$host/$pf"
	PF_BDF+=("$pf") PF_DIR+=("$pfdir")
	DIRS+=("$pfdir" "$S/kernel/iommu_groups/$grp/devices"
		"$ROOT/proc/driver/nvidia/gpus/$pf")
	LINKS+=("../../../bus/pci/drivers/nvidia" "$pfdir/driver"
		"../../../kernel/iommu_groups/$grp" "$pfdir/iommu_group"
		"../../../../devices/$host/$pf" "$S/kernel/iommu_groups/$grp/devices/$pf"
		"../../../devices/$host/$pf" "$S/bus/pci/devices/$pf"
		"../../../../devices/$host/$pf" "$S/bus/pci/drivers/nvidia/$pf")
	grp=$((grp + 1))
	for ((n = 0; n < NVF; n++)); do
		devfn=$((4 + n))
		printf -v vf '0000:%s:%02x.%x' "$bus" $((devfn / 8)) $((devfn % 8))
		vfdir="$S/devices/$host/$vf"
		VF_BDF+=("$vf") VF_DIR+=("$vfdir") VF_GPU+=("$g")
		DIRS+=("$S/kernel/iommu_groups/$grp/devices")
		for tid in "${TYPE_IDS[@]}"; do
			DIRS+=("$vfdir/mdev_supported_types/$tid/devices")
		done
		# No types: still create the VF directory itself.
		[ "$NTYPE" -gt 0 ] || DIRS+=("$vfdir")
		LINKS+=("../$vf" "$pfdir/virtfn$n"
			"../$pf" "$vfdir/physfn"
			"../../../bus/pci/drivers/nvidia" "$vfdir/driver"
			"../../../kernel/iommu_groups/$grp" "$vfdir/iommu_group"
			"../../../../devices/$host/$vf" "$S/kernel/iommu_groups/$grp/devices/$vf"
			"../../../devices/$host/$vf" "$S/bus/pci/devices/$vf"
			"../../../../devices/$host/$vf" "$S/bus/pci/drivers/nvidia/$vf"
			"../../devices/$host/$vf" "$S/class/mdev_bus/$vf")
		grp=$((grp + 1))
	done
done
for ((c = 0; c < 16; c++)); do
	DIRS+=("$S/devices/system/cpu/cpu$c/topology")
done

# ---------------------------------------------------------------------------
# Pass 2: directories (batched; xargs splits if the list exceeds ARG_MAX).
printf '%s\0' "${DIRS[@]}" | xargs -0 mkdir -p

# ---------------------------------------------------------------------------
# Pass 3: files (bash builtins only).
w() { printf '%s\n' "$2" >"$1"; }

# NUMA / CPU topology
w "$S/devices/system/node/online" "0-1"
w "$S/devices/system/node/possible" "0-1"
w "$S/devices/system/node/has_cpu" "0-1"
w "$S/devices/system/node/has_memory" "0-1"
for node in 0 1; do
	nd="$S/devices/system/node/node$node"
	w "$nd/cpulist" "${NODE_CPUS[node]}"
	w "$nd/cpumap" "${NODE_MASK[node]}"
	{
		printf 'Node %d MemTotal:       16384000 kB\n' "$node"
		printf 'Node %d MemFree:        15360000 kB\n' "$node"
		printf 'Node %d MemUsed:         1024000 kB\n' "$node"
		printf 'Node %d HugePages_Total:     0\n' "$node"
		printf 'Node %d HugePages_Free:      0\n' "$node"
		printf 'Node %d HugePages_Surp:      0\n' "$node"
	} >"$nd/meminfo"
	for hp in 1048576 2048; do
		w "$nd/hugepages/hugepages-${hp}kB/nr_hugepages" 0
		w "$nd/hugepages/hugepages-${hp}kB/free_hugepages" 0
	done
done
w "$S/devices/system/cpu/online" "0-15"
w "$S/devices/system/cpu/possible" "0-15"
w "$S/devices/system/cpu/present" "0-15"
for ((c = 0; c < 16; c++)); do
	node=$((c / 8)) in=$((c % 8))
	core=$((in % 4)) first=$((node * 8 + in % 4))
	td="$S/devices/system/cpu/cpu$c/topology"
	w "$td/thread_siblings_list" "$first,$((first + 4))"
	w "$td/core_cpus_list" "$first,$((first + 4))"
	w "$td/die_id" 0
	w "$td/core_siblings_list" "${NODE_CPUS[node]}"
	w "$td/core_id" "$core"
	w "$td/physical_package_id" "$node"
	w "$S/devices/system/cpu/cpu$c/online" "1"
done
w "$S/module/nvidia/version" "550.54.16"

# NVIDIA procfs (driver loaded, MIG capability files, per-GPU information)
P=$ROOT/proc/driver/nvidia
printf '%s\n' "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.16  Release Build  (dvs-builder@U16-I3-B03-4-1)  Thu Feb 22 01:28:38 UTC 2024" \
	"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)" >"$P/version"
printf 'DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n' >"$P/capabilities/mig/config"
printf 'DeviceFileMinor: 2\nDeviceFileMode: 292\nDeviceFileModify: 1\n' >"$P/capabilities/mig/monitor"
for ((g = 0; g < NGPU; g++)); do
	{
		printf 'Model: \t\t %s\n' "NVIDIA A30"
		printf 'IRQ:   \t\t %s\n' $((200 + g))
		printf 'GPU UUID: \t GPU-%08x-0000-4000-8000-%012x\n' $((0x5e3b0000 + g)) "$g"
		printf 'Video BIOS: \t %s\n' 92.00.66.00.01
		printf 'Bus Type: \t %s\n' PCIe
		printf 'DMA Size: \t %s\n' "47 bits"
		printf 'DMA Mask: \t %s\n' 0x7fffffffffff
		printf 'Bus Location: \t %s\n' "${PF_BDF[g]}"
		printf 'Device Minor: \t %s\n' "$g"
		printf 'GPU Excluded:\t %s\n' No
	} >"$P/gpus/${PF_BDF[g]}/information"
done

# Host bridge
w "$S/devices/pci0000:00/$HB/vendor" 0x8086
w "$S/devices/pci0000:00/$HB/device" 0x09a2
w "$S/devices/pci0000:00/$HB/class" 0x060000
w "$S/devices/pci0000:00/$HB/numa_node" 0
w "$S/devices/pci0000:00/$HB/local_cpulist" "${NODE_CPUS[0]}"
w "$S/devices/pci0000:00/$HB/local_cpus" "${NODE_MASK[0]}"

# PCI functions
pci_common() { # dir node
	w "$1/vendor" "$VENDOR"
	w "$1/device" "$DEVICE"
	w "$1/subsystem_vendor" "$SUBVENDOR"
	w "$1/subsystem_device" "$SUBDEVICE"
	w "$1/class" "$CLASS"
	w "$1/numa_node" "$2"
	w "$1/local_cpulist" "${NODE_CPUS[$2]}"
	w "$1/local_cpus" "${NODE_MASK[$2]}"
}
for ((g = 0; g < NGPU; g++)); do
	pci_common "${PF_DIR[g]}" $((g % 2))
	w "${PF_DIR[g]}/sriov_totalvfs" "$NVF"
	w "${PF_DIR[g]}/sriov_numvfs" "$NVF"
	w "${PF_DIR[g]}/sriov_offset" "4"
	w "${PF_DIR[g]}/sriov_stride" "1"
done
for ((i = 0; i < ${#VF_DIR[@]}; i++)); do
	d=${VF_DIR[i]}
	pci_common "$d" $((VF_GPU[i] % 2))
	for ((t = 0; t < NTYPE; t++)); do
		td="$d/mdev_supported_types/${TYPE_IDS[t]}"
		printf '%s\n' "${TYPE_NAMES[t]}" >"$td/name"
		printf '%s\n' "$DESC" >"$td/description"
		printf '1\n' >"$td/available_instances"
		printf 'vfio-pci\n' >"$td/device_api"
		: >"$td/create"
	done
done

# ---------------------------------------------------------------------------
# Pass 4: symlinks (one perl process for all of them).
if ((${#LINKS[@]})); then
	if command -v perl >/dev/null 2>&1; then
		printf '%s\0' "${LINKS[@]}" | perl -0 -e '
			while (defined(my $t = <STDIN>)) {
				my $l = <STDIN>;
				chomp $t; chomp $l;
				symlink($t, $l) or die "symlink $l -> $t: $!\n";
			}'
	else
		for ((i = 0; i < ${#LINKS[@]}; i += 2)); do
			ln -s "${LINKS[i]}" "${LINKS[i + 1]}"
		done
	fi
fi
