#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mkhosts.sh - (re)create the fixture host trees used by vgpuctl's tests.
#
# Usage: tests/data/mkhosts.sh [DEST]     (DEST defaults to tests/data/hosts)
#
# Each case DEST/<case>/ is deleted and rebuilt as a miniature sysroot: plain
# files and relative symlinks laid out the way the Linux kernel and the NVIDIA
# driver lay out sysfs/procfs.  Every attribute file ends with a newline.
# The output is deterministic (no clocks, no randomness).  The committed trees
# must match it, empty directories aside (git cannot store them): the test
# tests/data/check-fixtures.sh regenerates every case and compares.
# See tests/data/hosts/README.md for what each case models, and
# the project's vGPU host reference (sections 1-4 and 9) for the facts used.
set -euo pipefail
export LC_ALL=C
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DEST=${1:-$HERE/hosts}
ROOT=     # sysroot of the host being built
NCPU=0    # number of CPUs of that host (width of hex cpumasks)
declare -A TYPENAME=()   # vGPU type id -> full name (vendor-VFIO hosts)

# ----------------------------------------------------------------------------
# Generic helpers

# mkd DIR: mkdir -p, without a fork when DIR exists (most calls: keeps the run short).
mkd() { [[ -d $1 ]] || mkdir -p "$1"; }
# put FILE [LINE...]: write each LINE followed by '\n' (no LINE: a lone '\n').
put() { local f=$1; shift; mkd "${f%/*}"; printf '%s\n' "$@" >"$f"; }
# empty FILE: zero-byte file (write-only sysfs attributes such as create).
empty() { mkd "${1%/*}"; : >"$1"; }
# lnk TARGET LINK: relative symlink.
lnk() { mkd "${2%/*}"; ln -sfn "$1" "$2"; }

# cpulist_expand "0-3,8": one CPU number per line.
cpulist_expand() {
	local part a b i IFS=,
	for part in $1; do
		a=${part%-*} b=${part#*-}
		for ((i = a; i <= b; i++)); do echo "$i"; done
	done
}

# list_compress N...: sorted CPU numbers -> kernel list format "0-23,48-71".
list_compress() {
	local out='' s=-1 p=-1 n
	for n in "$@"; do
		if ((s < 0)); then
			s=$n
		elif ((n != p + 1)); then
			out+=${out:+,}$(range "$s" "$p")
			s=$n
		fi
		p=$n
	done
	if ((s >= 0)); then out+=${out:+,}$(range "$s" "$p"); fi
	echo "$out"
}
range() { if (($1 == $2)); then echo "$1"; else echo "$1-$2"; fi; }

# cpumask NBITS CPULIST: hex mask as the kernel prints it ("%*pb"): 32-bit
# words, most significant first, comma separated; the leading word only has
# as many hex digits as its bits need (16 CPUs -> "ffff").
cpumask() {
	local nbits=$1 nw=$((($1 + 31) / 32)) c i chunk out=''
	local -a w=()
	for ((i = 0; i < nw; i++)); do w[i]=0; done
	for c in $(cpulist_expand "$2"); do
		w[c / 32]=$((w[c / 32] | (1 << (c % 32))))
	done
	chunk=$((nbits % 32))
	if ((chunk == 0)); then chunk=32; fi
	for ((i = nw - 1; i >= 0; i--)); do
		out+=${out:+,}$(printf '%0*x' $(((chunk + 3) / 4)) "${w[i]}")
		chunk=32
	done
	echo "$out"
}

# new_host NAME: start a fresh sysroot.
new_host() {
	ROOT=$DEST/$1
	rm -rf "$ROOT"
	mkdir -p "$ROOT"
	NCPU=0
}

# ----------------------------------------------------------------------------
# CPU and NUMA topology

# mk_cpus NCPU NSOCKETS: NCPU/2 cores, SMT siblings n and n+NCPU/2, cores split
# evenly over sockets, one NUMA node per socket (node == package).
mk_cpus() {
	local n=$1 nsock=$2 cores=$(($1 / 2)) cps c core pkg k d f sib list
	local sys=$ROOT/sys/devices/system
	local -a nodecpus=()
	cps=$((cores / nsock))
	NCPU=$n
	for f in online present possible; do put "$sys/cpu/$f" "0-$((n - 1))"; done
	for ((c = 0; c < n; c++)); do
		core=$((c % cores)) pkg=$((c % cores / cps))
		d=$sys/cpu/cpu$c/topology
		sib=$(list_compress "$core" $((core + cores)))
		put "$d/thread_siblings_list" "$sib"
		put "$d/core_cpus_list" "$sib"
		put "$d/core_id" $((core % cps))
		put "$d/physical_package_id" "$pkg"
		put "$d/die_id" 0
		lnk "../../node/node$pkg" "$sys/cpu/cpu$c/node$pkg"
		nodecpus[pkg]+=" $c"
	done
	for f in online possible; do put "$sys/node/$f" "$(range 0 $((nsock - 1)))"; done
	for ((k = 0; k < nsock; k++)); do
		# shellcheck disable=SC2086 # word splitting wanted
		list=$(list_compress ${nodecpus[k]})
		put "$sys/node/node$k/cpulist" "$list"
		put "$sys/node/node$k/cpumap" "$(cpumask "$n" "$list")"
	done
}

# mk_node N MEMTOTAL_KB BASEUSED_KB HP1G_NR HP1G_FREE HP2M_NR HP2M_FREE
# meminfo uses the kernel's format (drivers/base/node.c); HugePages_* lines
# count default-size (2 MiB) pages; MemUsed includes reserved hugepages.
mk_node() {
	local k=$1 total=$2 used d
	d=$ROOT/sys/devices/system/node/node$1
	used=$(($3 + $4 * 1048576 + $6 * 2048))
	mkdir -p "$d"
	{
		printf 'Node %d MemTotal:       %8d kB\n' "$k" "$total"
		printf 'Node %d MemFree:        %8d kB\n' "$k" $((total - used))
		printf 'Node %d MemUsed:        %8d kB\n' "$k" "$used"
		printf 'Node %d Active:         %8d kB\n' "$k" $(($3 / 2))
		printf 'Node %d Inactive:       %8d kB\n' "$k" $(($3 / 4))
		printf 'Node %d HugePages_Total: %5d\n' "$k" "$6"
		printf 'Node %d HugePages_Free:  %5d\n' "$k" "$7"
		printf 'Node %d HugePages_Surp:  %5d\n' "$k" 0
	} >"$d/meminfo"
	put "$d/hugepages/hugepages-1048576kB/nr_hugepages" "$4"
	put "$d/hugepages/hugepages-1048576kB/free_hugepages" "$5"
	put "$d/hugepages/hugepages-2048kB/nr_hugepages" "$6"
	put "$d/hugepages/hugepages-2048kB/free_hugepages" "$7"
}

# ----------------------------------------------------------------------------
# PCI devices

# devdir BDF: device directory; the root bus is named after the device's bus.
devdir() { echo "$ROOT/sys/devices/pci0000:${1:5:2}/$1"; }

# vf_bdf PF_BDF N: VF N at routing id PF + offset 4 + N (stride 1).
vf_bdf() {
	local rid=$((4 + $2))
	printf '%s:%02x.%x' "${1%:*}" $((rid / 8)) $((rid % 8))
}

# mk_pcidev BDF VENDOR DEVICE CLASS NUMA CPULIST GROUP [DRIVER]
mk_pcidev() {
	local bdf=$1 d
	d=$(devdir "$bdf")
	put "$d/vendor" "$2"
	put "$d/device" "$3"
	put "$d/class" "$4"
	put "$d/numa_node" "$5"
	put "$d/local_cpulist" "$6"
	put "$d/local_cpus" "$(cpumask "$NCPU" "$6")"
	lnk "../../../kernel/iommu_groups/$7" "$d/iommu_group"
	lnk "../../../../devices/pci0000:${bdf:5:2}/$bdf" \
		"$ROOT/sys/kernel/iommu_groups/$7/devices/$bdf"
	lnk "../../../devices/pci0000:${bdf:5:2}/$bdf" "$ROOT/sys/bus/pci/devices/$bdf"
	if [[ -n ${8:-} ]]; then
		local drv=$ROOT/sys/bus/pci/drivers/$8
		empty "$drv/bind"
		empty "$drv/unbind"
		lnk "../../../bus/pci/drivers/$8" "$d/driver"
	fi
}

# mk_hostbridge VENDOR DEVICE CPULIST: the non-NVIDIA device every host has.
mk_hostbridge() { mk_pcidev 0000:00:00.0 "$1" "$2" 0x060000 0 "$3" 0; }

# mk_pf BDF DEVICE SUBSYS_DEVICE NUMA CPULIST GROUP [TOTALVFS NUMVFS]
# NVIDIA PF bound to nvidia; with TOTALVFS also the SR-IOV attributes, the
# virtfn links and NUMVFS VFs (VF n: iommu group GROUP+1+n).
mk_pf() {
	local bdf=$1 dev=$2 sub=$3 numa=$4 cpus=$5 grp=$6 total=${7:-} num=${8:-} d n vf
	d=$(devdir "$bdf")
	mk_pcidev "$bdf" 0x10de "$dev" 0x030200 "$numa" "$cpus" "$grp" nvidia
	put "$d/subsystem_vendor" 0x10de
	put "$d/subsystem_device" "$sub"
	[[ -n $total ]] || return 0
	put "$d/sriov_totalvfs" "$total"
	put "$d/sriov_numvfs" "$num"
	put "$d/sriov_offset" 4
	put "$d/sriov_stride" 1
	for ((n = 0; n < num; n++)); do
		vf=$(vf_bdf "$bdf" "$n")
		lnk "../$vf" "$d/virtfn$n"
		mk_pcidev "$vf" 0x10de "$dev" 0x030200 "$numa" "$cpus" $((grp + 1 + n)) nvidia
		lnk "../$bdf" "$(devdir "$vf")/physfn"
	done
}

# ----------------------------------------------------------------------------
# mdev interface

# mdev_desc SHORT_NAME FB_GB MAX: description line in NVIDIA's format.
mdev_desc() {
	local s=${1%ME} heads frl res
	[[ $s =~ ([ABCQ])[0-9]*$ ]] || { echo "mdev_desc: no series in $1" >&2; return 1; }
	case ${BASH_REMATCH[1]} in
	A) heads=1 frl=60 res=1280x1024 ;;
	B) heads=4 frl=45 res=5120x2880 ;;
	C) heads=1 frl=60 res=4096x2160 ;;
	Q) heads=4 frl=60 res=7680x4320 ;;
	esac
	echo "num_heads=$heads, frl_config=$frl, framebuffer=$(($2 * 1024))M, max_resolution=$res, max_instance=$3"
}

# is_mig SHORT_NAME: MIG-backed per NVIDIA's grammar (<GPU>-<G>-<GB><S>...).
is_mig() { [[ $1 =~ ^[A-Z0-9]+-[1-9]-[0-9]+[ABCQ] ]]; }

# avail_of SPEC ID SHORT: SPEC is "ID=N ... mig=N ts=N"; an ID entry wins.
avail_of() {
	local tok kind=ts
	for tok in $1; do [[ $tok == "$2="* ]] && { echo "${tok#*=}"; return; }; done
	if is_mig "$3"; then kind=mig; fi
	for tok in $1; do [[ $tok == "$kind="* ]] && { echo "${tok#*=}"; return; }; done
	echo 0
}

# mk_mdev_type PARENT_BDF ID NAME DESCRIPTION AVAILABLE
mk_mdev_type() {
	local t
	t=$(devdir "$1")/mdev_supported_types/nvidia-$2
	put "$t/name" "$3"
	put "$t/description" "$4"
	put "$t/available_instances" "$5"
	put "$t/device_api" vfio-pci
	empty "$t/create"
	# as in sysfs, but git does not keep it while empty: check-fixtures.sh
	# ignores empty directories, and readers take a missing devices/ as empty
	mkdir -p "$t/devices"
}

# mk_mdev_types PARENT_BDF PREFIX "ID:SHORT:FB_GB:MAX ..." AVAIL_SPEC
# Registers PARENT as an mdev parent and creates every listed type.
mk_mdev_types() {
	local p=$1 e id short gb max
	lnk "../../devices/pci0000:${p:5:2}/$p" "$ROOT/sys/class/mdev_bus/$p"
	for e in $3; do
		IFS=: read -r id short gb max <<<"$e"
		mk_mdev_type "$p" "$id" "$2$short" "$(mdev_desc "$short" "$gb" "$max")" \
			"$(avail_of "$4" "$id" "$short")"
	done
}

# mk_mdev_instance PARENT_BDF UUID TYPE_ID
mk_mdev_instance() {
	local p=$1 u=$2 d
	d=$(devdir "$p")/$u
	lnk "../mdev_supported_types/nvidia-$3" "$d/mdev_type"
	empty "$d/remove"
	put "$d/nvidia/vgpu_params" ""
	lnk "../../../devices/pci0000:${p:5:2}/$p/$u" "$ROOT/sys/bus/mdev/devices/$u"
	lnk "../../../$u" "$(devdir "$p")/mdev_supported_types/nvidia-$3/devices/$u"
}

# ----------------------------------------------------------------------------
# Vendor-specific VFIO interface

# def_types PREFIX "ID:SHORT ...": remember type names for creatable lists.
def_types() {
	local e
	for e in $2; do TYPENAME[${e%%:*}]="$1${e#*:}"; done
}

# mk_vfio_vf VF_BDF VFIO_INDEX CURRENT_TYPE [CREATABLE_ID...]
# No CREATABLE_ID: creatable_vgpu_types is a zero-byte file.
mk_vfio_vf() {
	local d id
	d=$(devdir "$1")
	put "$d/nvidia/current_vgpu_type" "$3"
	put "$d/nvidia/vgpu_params" ""
	put "$d/vfio-dev/vfio$2/dev" "511:$2"
	shift 3
	if (($# == 0)); then
		empty "$d/nvidia/creatable_vgpu_types"
		return
	fi
	{
		echo "ID    : vGPU Name"
		for id in "$@"; do printf '%-6s: %s\n' "$id" "${TYPENAME[$id]}"; done
	} >"$d/nvidia/creatable_vgpu_types"
}

# ----------------------------------------------------------------------------
# NVIDIA procfs

P_NV=proc/driver/nvidia

# mk_nvidia_proc VERSION_LINE GCC_LINE: version file plus the global MIG
# capability files (present whenever the driver is loaded).
mk_nvidia_proc() {
	put "$ROOT/$P_NV/version" "$1" "$2"
	cap_access "$ROOT/$P_NV/capabilities/mig/config" 1 256
	cap_access "$ROOT/$P_NV/capabilities/mig/monitor" 2 292
}

# cap_access FILE MINOR [MODE]
cap_access() {
	mkdir -p "${1%/*}"
	printf 'DeviceFileMinor: %d\nDeviceFileMode: %d\nDeviceFileModify: 1\n' \
		"$2" "${3:-292}" >"$1"
}

# mk_gpu_info BDF MODEL IRQ UUID VBIOS MINOR: layout of nv-procfs.c.
mk_gpu_info() {
	local f=$ROOT/$P_NV/gpus/$1/information
	mkdir -p "${f%/*}"
	{
		printf 'Model: \t\t %s\n' "$2"
		printf 'IRQ:   \t\t %s\n' "$3"
		printf 'GPU UUID: \t %s\n' "$4"
		printf 'Video BIOS: \t %s\n' "$5"
		printf 'Bus Type: \t %s\n' PCIe
		printf 'DMA Size: \t %s\n' "47 bits"
		printf 'DMA Mask: \t %s\n' 0x7fffffffffff
		printf 'Bus Location: \t %s\n' "$1"
		printf 'Device Minor: \t %s\n' "$6"
		printf 'GPU Excluded:\t %s\n' No
	} >"$f"
}

# mk_mig GPU_MINOR [GI...]: MIG mode on; one access file per GI and its CI 0.
# Minors follow /proc/driver/nvidia-caps/mig-minors: config 1, monitor 2,
# gpu<g>/gi<i>/access 3+135g+9i, .../ci<c>/access one past that plus c.
mk_mig() {
	local g=$1 gi m d
	d=$ROOT/$P_NV/capabilities/gpu$g/mig
	mkdir -p "$d"
	shift
	for gi in "$@"; do
		m=$((3 + 135 * g + 9 * gi))
		cap_access "$d/gi$gi/access" "$m"
		cap_access "$d/gi$gi/ci0/access" $((m + 1))
	done
}

# ----------------------------------------------------------------------------
# vGPU type tables: ID:SHORT:FB_GB:MAX_PER_GPU (mdev) or ID:SHORT (VFIO)

A30_TYPES="689:A30-1-6C:6:4 690:A30-2-12C:12:2 691:A30-4-24C:24:1
	708:A30-1-6CME:6:1 683:A30-4C:4:6 684:A30-6C:6:4 685:A30-8C:8:3
	686:A30-12C:12:2 687:A30-24C:24:1"
A100D_TYPES="699:A100D-1-10C:10:7 700:A100D-2-20C:20:3 701:A100D-3-40C:40:2
	702:A100D-4-40C:40:1 703:A100D-7-80C:80:1 692:A100D-8C:8:10
	693:A100D-10C:10:8 694:A100D-16C:16:5 695:A100D-20C:20:4
	696:A100D-40C:40:2 697:A100D-80C:80:1"
T4_TYPES="222:T4-1B:1:16 223:T4-2B:2:8 224:T4-2B4:2:8 225:T4-1A:1:16
	226:T4-2A:2:8 227:T4-4A:4:4 228:T4-8A:8:2 229:T4-16A:16:1
	230:T4-1Q:1:16 231:T4-2Q:2:8 232:T4-4Q:4:4 233:T4-8Q:8:2
	234:T4-16Q:16:1 319:T4-4C:4:4 320:T4-8C:8:2 321:T4-16C:16:1"
H100_TYPES="1056:H100-1-10C 1057:H100-1-20C 1058:H100-2-20C 1059:H100-3-40C
	1060:H100-4-40C 1061:H100-7-80C 1062:H100-1-10CME"
L40S_TYPES="1145:L40S-1B 1146:L40S-2B 1147:L40S-1Q 1148:L40S-2Q 1149:L40S-4Q
	1150:L40S-6Q 1151:L40S-8Q 1152:L40S-12Q 1153:L40S-16Q 1154:L40S-24Q
	1155:L40S-48Q 1156:L40S-4C 1157:L40S-6C 1158:L40S-8C 1159:L40S-12C
	1160:L40S-16C 1161:L40S-24C 1162:L40S-48C 1163:L40S-1A 1164:L40S-2A"
L40S_IDS=$(seq 1145 1164)
# RTX PRO 6000 Blackwell Server Edition (board token DC), C series: time-sliced,
# then MIG-backed on GI profiles 47 (1g.24gb+gfx), 35 (2g.48gb+gfx) and
# 32 (4g.96gb+gfx), time-sliced inside the GI (DC-1-8C: 3 per GI); the same
# table as tests/nvml/dc-types.txt (vgpu-host.md section 4.3).
DC_TYPES="1200:DC-96C 1201:DC-48C 1202:DC-32C 1203:DC-24C 1204:DC-16C
	1205:DC-12C 1206:DC-8C 1207:DC-6C 1208:DC-4C
	1220:DC-1-24C 1221:DC-1-12C 1222:DC-1-8C 1223:DC-1-6C 1224:DC-1-4C
	1230:DC-2-48C 1231:DC-2-24C 1232:DC-2-16C 1240:DC-4-96C 1241:DC-4-48C"
# H100 NVL (board token H100L, 94 GB), time-sliced C series.  The IDs are a
# test range (1300-1306: the reference names no real ones); names, sizes and
# maxima from vgpu-host.md section 5.2, the same table as tests/nvml's
# types_h100l (equal-size max = 96256 MiB / size; mixed-size max lower).
H100L_TYPES="1300:H100L-94C 1301:H100L-47C 1302:H100L-23C 1303:H100L-15C
	1304:H100L-11C 1305:H100L-6C 1306:H100L-4C"
H100L_IDS=$(seq 1300 1306)
# H100 SXM5 80GB (board token H100XM), time-sliced C series.  The IDs are a
# test range (1310-1317: the reference names no real ones); sizes those of
# every 80 GB board's C series (vgpu-host.md section 5).
H100XM_TYPES="1310:H100XM-80C 1311:H100XM-40C 1312:H100XM-20C 1313:H100XM-16C
	1314:H100XM-10C 1315:H100XM-8C 1316:H100XM-5C 1317:H100XM-4C"
H100XM_IDS=$(seq 1310 1317)
def_types "NVIDIA " "$H100_TYPES"
def_types "NVIDIA " "$H100XM_TYPES"
def_types "NVIDIA " "$H100L_TYPES"
def_types "NVIDIA " "$L40S_TYPES"
def_types "NVIDIA RTX Pro 6000 Blackwell " "$DC_TYPES"

NV_550="NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.16  Release Build  (dvs-builder@U16-I3-B03-4-1)  Thu Feb 22 01:28:38 UTC 2024"
GCC_DEB12="GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)"
GCC_U2404="GCC version:  gcc version 13.2.0 (Ubuntu 13.2.0-23ubuntu4)"

# ----------------------------------------------------------------------------
# 1. Dual-socket A30 host, mdev on VFs (vGPU 17.0, kernel 6.5).
#    GPU 3b: MIG off.  GPU af: MIG on with two 2g.12gb GIs.  No instances.
new_host a30-dual-mdev
mk_cpus 96 2
mk_node 0 263856484 3145728 8 8 0 0
mk_node 1 264192000 2097152 0 0 0 0
mk_hostbridge 0x8086 0x09a2 0-23,48-71
mk_pf 0000:3b:00.0 0x20b7 0x1532 0 0-23,48-71 40 4 4
mk_pf 0000:af:00.0 0x20b7 0x1532 1 24-47,72-95 140 4 4
for n in 0 1 2 3; do
	mk_mdev_types "$(vf_bdf 0000:3b:00.0 $n)" "NVIDIA " "$A30_TYPES" "ts=1 mig=0"
	mk_mdev_types "$(vf_bdf 0000:af:00.0 $n)" "NVIDIA " "$A30_TYPES" "690=1"
done
mk_nvidia_proc "$NV_550" "$GCC_DEB12"
mk_gpu_info 0000:3b:00.0 "NVIDIA A30" 220 GPU-5e3b5a4a-1f7e-8a9c-2d3b-1c2d3e4f5a6b 92.00.66.00.01 0
mk_gpu_info 0000:af:00.0 "NVIDIA A30" 284 GPU-9c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f 92.00.66.00.01 1
mk_mig 1 1 2

# 2. H100 PCIe, vendor VFIO, MIG on: GIs 3g.40gb, 2g.20gb, 2 x 1g.10gb;
#    VF ca:00.4 holds H100-3-40C on GI 1, the others can still take 1056/1058.
new_host vfio-mig-h100
mk_cpus 32 1
mk_node 0 527712596 4194304 64 48 0 0
mk_hostbridge 0x8086 0x09a2 0-31
mk_pf 0000:ca:00.0 0x2331 0x1626 0 0-31 60 8 8
mk_vfio_vf 0000:ca:00.4 0 1059
put "$(devdir 0000:ca:00.4)/nvidia/gpu_instance_id" 1
put "$(devdir 0000:ca:00.4)/nvidia/placement_id" 0
for n in 1 2 3 4 5 6 7; do
	mk_vfio_vf "$(vf_bdf 0000:ca:00.0 $n)" "$n" 0 1056 1058
done
mk_nvidia_proc "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri May 31 09:31:46 UTC 2024" "$GCC_U2404"
mk_gpu_info 0000:ca:00.0 "NVIDIA H100 PCIe" 186 GPU-2f7c1a9e-6b3d-4e58-9a0c-7d1e2b3c4f50 96.00.99.00.01 0
mk_mig 0 1 2 3 4

# 3. Two L40S, vendor VFIO, time-sliced.  GPU 41: VF 41:00.5 holds L40S-4Q,
#    so its siblings only offer 4 GB types.  GPU c1: all VFs free.
new_host vfio-ts-l40s
mk_cpus 64 1
mk_node 0 263847220 3145728 32 24 0 0
mk_hostbridge 0x1022 0x14a4 0-63
mk_pf 0000:41:00.0 0x26b9 0x1851 0 0-63 30 8 8
mk_pf 0000:c1:00.0 0x26b9 0x1851 0 0-63 90 8 8
for n in 0 1 2 3 4 5 6 7; do
	if ((n == 1)); then
		mk_vfio_vf 0000:41:00.5 1 1149
	else
		mk_vfio_vf "$(vf_bdf 0000:41:00.0 $n)" "$n" 0 1149 1156
	fi
	# shellcheck disable=SC2086 # one argument per id
	mk_vfio_vf "$(vf_bdf 0000:c1:00.0 $n)" $((8 + n)) 0 $L40S_IDS
done
mk_nvidia_proc "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri May 31 09:31:46 UTC 2024" "$GCC_U2404"
mk_gpu_info 0000:41:00.0 "NVIDIA L40S" 146 GPU-7a4e0c2b-3d91-5f86-b2a7-c4d5e6f70812 95.02.66.00.02 0
mk_gpu_info 0000:c1:00.0 "NVIDIA L40S" 210 GPU-b83f5d6e-0a12-4c3b-8d9e-f0a1b2c3d4e6 95.02.66.00.02 1

# 4. Legacy Tesla T4 (no SR-IOV): mdev types on the PF, one T4-4Q instance.
new_host t4-legacy
mk_cpus 16 1
mk_node 0 131600012 2097152 0 0 4096 2048
mk_hostbridge 0x8086 0x2020 0-15
mk_pf 0000:5e:00.0 0x1eb8 0x12a2 0 0-15 20
mk_mdev_types 0000:5e:00.0 "GRID " "$T4_TYPES" "232=3"
mk_mdev_instance 0000:5e:00.0 4b20d080-1b54-4048-85b3-a6a62d165c01 232
mk_nvidia_proc "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.05  Tue Mar  5 22:39:45 UTC 2024" "$GCC_DEB12"
mk_gpu_info 0000:5e:00.0 "Tesla T4" 94 GPU-3c8a5f21-7e4d-9b06-1a2c-3d4e5f607182 90.04.96.00.02 0

# 5. A100 80GB, mdev on VFs, numa_node -1 on a single-node host, MIG off,
#    and no /proc/driver/nvidia at all.
new_host numa-unknown
mk_cpus 8 1
mk_node 0 65536000 1048576 0 0 0 0
mk_hostbridge 0x8086 0x2020 0-7
mk_pf 0000:17:00.0 0x20b5 0x1533 -1 0-7 15 4 4
for n in 0 1 2 3; do
	mk_mdev_types "$(vf_bdf 0000:17:00.0 $n)" "NVIDIA " "$A100D_TYPES" "ts=1 mig=0"
done

# 6. RTX PRO 6000 Blackwell Server Edition, vendor VFIO on 16 VFs, MIG on with
#    four 1g.24gb+gfx GIs (profile 47).  MIG-backed vGPUs are time-sliced inside
#    a GI, one type per GI: GI 1 holds three DC-1-8C (VFs 0-2, full), GI 2 one
#    DC-1-12C (VF 3, one seat left), GIs 3 and 4 are free, so the free VFs offer
#    every 1g type.
new_host vfio-mig-rtxpro6000
mk_cpus 32 1
mk_node 0 395872148 4194304 32 32 0 0
mk_hostbridge 0x8086 0x09a2 0-31
mk_pf 0000:3d:00.0 0x2bb5 0x204e 0 0-31 70 16 16
for n in 0 1 2 3; do
	d=$(devdir "$(vf_bdf 0000:3d:00.0 $n)")
	if ((n < 3)); then
		mk_vfio_vf "$(vf_bdf 0000:3d:00.0 $n)" "$n" 1222
		put "$d/nvidia/gpu_instance_id" 1
	else
		mk_vfio_vf "$(vf_bdf 0000:3d:00.0 $n)" "$n" 1221
		put "$d/nvidia/gpu_instance_id" 2
	fi
	put "$d/nvidia/placement_id" 0
done
for ((n = 4; n < 16; n++)); do
	mk_vfio_vf "$(vf_bdf 0000:3d:00.0 $n)" "$n" 0 1220 1221 1222 1223 1224
done
mk_nvidia_proc "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.05  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Sun Jul 27 06:54:38 UTC 2025" "$GCC_U2404"
mk_gpu_info 0000:3d:00.0 "NVIDIA RTX PRO 6000 Blackwell Server Edition" 198 GPU-d4c1e7a2-58b3-4f09-a6e2-3b7c9d0e1f24 98.02.52.00.02 0
mk_mig 0 1 2 3 4

# 7. H100 NVL, vendor VFIO on all 32 VFs, MIG off, no vGPU: every VF lists
#    the seven time-sliced H100L-*C types (mixed-size mode is NVML's state,
#    var/lib/fake-nvidia/hetero-<PF>, not a file of this tree).
new_host vfio-ts-h100l
mk_cpus 32 1
mk_node 0 527712596 4194304 64 64 0 0
mk_hostbridge 0x8086 0x09a2 0-31
mk_pf 0000:4b:00.0 0x2321 0x1839 0 0-31 80 32 32
for ((n = 0; n < 32; n++)); do
	# shellcheck disable=SC2086 # one argument per id
	mk_vfio_vf "$(vf_bdf 0000:4b:00.0 $n)" "$n" 0 $H100L_IDS
done
mk_nvidia_proc "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri May 31 09:31:46 UTC 2024" "$GCC_U2404"
mk_gpu_info 0000:4b:00.0 "NVIDIA H100 NVL" 202 GPU-6e1b9d4c-2a7f-4c35-b8d0-95e4f3a2c1b7 96.00.a5.00.01 0

# 8. HGX H100 8-GPU board (#30): 2 sockets, 64 CPUs; 8 H100 SXM5 80GB with
#    vendor-specific VFIO (4 of 32 VFs enabled each), MIG off, no vGPU; GPUs
#    1b 2a 3d 5d on node 0, 9b ab bd db on node 1; four NVSwitches (bridges,
#    class 0680: not GPUs).  NVML's module IDs (Fabric Manager's physical IDs)
#    are NVML state the tree carries, var/lib/fake-nvidia/module-<BDF>, out of
#    PCI order as on real boards; every GPU has 18 active NVLinks
#    (nvlinks-<BDF>).  Fabric Manager in vGPU mode: fabricmanager.cfg with
#    FABRIC_MODE=2 (the stand-in libnvfm's own state, fm-*, is not part of it).
new_host hgx-h100-8
mk_cpus 64 2
mk_node 0 1056721380 4194304 256 256 0 0
mk_node 1 1056964608 4194304 256 256 0 0
mk_hostbridge 0x8086 0x09a2 0-15,32-47
HGX_GPUS="0000:1b:00.0:0:1 0000:2a:00.0:0:2 0000:3d:00.0:0:4 0000:5d:00.0:0:3
	0000:9b:00.0:1:7 0000:ab:00.0:1:8 0000:bd:00.0:1:6 0000:db:00.0:1:5"
k=0
for e in $HGX_GPUS; do
	pf=${e:0:12} rest=${e:13}
	node=${rest%%:*} module=${rest#*:}
	if ((node == 0)); then cpus=0-15,32-47; else cpus=16-31,48-63; fi
	mk_pf "$pf" 0x2330 0x16c1 "$node" "$cpus" $((20 + 10 * k)) 32 4
	for n in 0 1 2 3; do
		# shellcheck disable=SC2086 # one argument per id
		mk_vfio_vf "$(vf_bdf "$pf" $n)" $((4 * k + n)) 0 $H100XM_IDS
	done
	mk_gpu_info "$pf" "NVIDIA H100 80GB HBM3" $((300 + k)) \
		"GPU-8a1c3e5f-$k$k$k$k-4b6d-9e0f-1a2b3c4d5e6$k" 96.00.74.00.0$((k % 4 + 1)) "$k"
	put "$ROOT/var/lib/fake-nvidia/module-$pf" "$module"
	put "$ROOT/var/lib/fake-nvidia/nvlinks-$pf" 18
	k=$((k + 1))
done
for sw in 0000:05:00.0 0000:06:00.0 0000:07:00.0 0000:08:00.0; do
	mk_pcidev "$sw" 0x10de 0x22a3 0x068000 0 0-15,32-47 $((100 + ${sw:6:1})) nvidia
done
mk_nvidia_proc "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri May 31 09:31:46 UTC 2024" "$GCC_U2404"
put "$ROOT/usr/share/nvidia/nvswitch/fabricmanager.cfg" \
	"# NVIDIA Fabric Manager configuration file." \
	"LOG_LEVEL=4" \
	"LOG_FILE_NAME=/var/log/fabricmanager.log" \
	"LOG_APPEND_TO_LOG=1" \
	"DAEMONIZE=1" \
	"BIND_INTERFACE_IP=127.0.0.1" \
	"STARTING_TCP_PORT=16000" \
	"# 0: bare metal or full pass-through, 1: shared NVSwitch, 2: vGPU" \
	"FABRIC_MODE=2" \
	"FABRIC_MODE_RESTART=0" \
	"STATE_FILE_NAME=/tmp/fabricmanager.state" \
	"FM_CMD_BIND_INTERFACE=127.0.0.1" \
	"FM_CMD_PORT_NUMBER=6666" \
	"FM_STAY_RESIDENT_ON_FAILURES=0" \
	"ACCESS_LINK_FAILURE_MODE=0" \
	"TRUNK_LINK_FAILURE_MODE=0" \
	"NVSWITCH_FAILURE_MODE=0" \
	"ABORT_CUDA_JOBS_ON_FM_EXIT=1" \
	"TOPOLOGY_FILE_PATH=/usr/share/nvidia/nvswitch" \
	"DATABASE_PATH=/usr/share/nvidia/nvswitch"

# 9. Broken inputs a reader must survive (see README.md for the list).
new_host malformed
mk_cpus 16 2
mk_node 0 32768000 1048576 0 0 0 0
mk_node 1 32768000 1048576 0 0 0 0
mk_hostbridge 0x8086 0x2020 0-3,8-11
# GPU A: A30, numa_node -1 on a 2-node host, numvfs 3 but VF 2 is missing.
mk_pf 0000:3b:00.0 0x20b7 0x1532 -1 0-3,8-11 40 4 3
rm -rf "$(devdir 0000:3b:00.6)" "$ROOT/sys/bus/pci/devices/0000:3b:00.6" \
	"$ROOT/sys/kernel/iommu_groups/43"
mk_mdev_types 0000:3b:00.4 "NVIDIA " "689:A30-1-6C:6:4 684:A30-6C:6:4 690:A30-2-12C:12:2" "ts=1 mig=1"
put "$(devdir 0000:3b:00.4)/mdev_supported_types/nvidia-684/available_instances" lots
rm "$(devdir 0000:3b:00.4)/mdev_supported_types/nvidia-690/name"
mk_mdev_type 0000:3b:00.4 999 "NVIDIA A30-BOGUS" \
	"num_heads=1, frl_config=60, framebuffer=1024M, max_resolution=4096x2160, max_instance=24" 1
# A name with a quote, a backslash and a tab: JSON output must escape them.
mk_mdev_type 0000:3b:00.4 998 $'NVIDIA A30 "lab\\build"\tX' \
	"num_heads=1, frl_config=60, framebuffer=1024M, max_resolution=4096x2160, max_instance=24" 1
mk_mdev_types 0000:3b:00.5 "NVIDIA " "689:A30-1-6C:6:4 684:A30-6C:6:4" "ts=1 mig=1"
t=$(devdir 0000:3b:00.5)/mdev_supported_types/nvidia-689/available_instances
# A directory where sysfs has a file: unreadable even as root (EISDIR).
# It holds a file so that git keeps it.
rm "$t" && mkdir "$t" && put "$t/stray" 1
# GPU B: L40S, vendor VFIO, node 1; odd creatable list, garbage current type.
mk_pf 0000:41:00.0 0x26b9 0x1851 1 4-7,12-15 50 2 2
mk_vfio_vf 0000:41:00.4 0 0
printf 'ID    : vGPU Name\n1145  : NVIDIA L40S-1B\nthis is not a type\n1147\t:\tNVIDIA L40S-1Q\n\n' \
	>"$(devdir 0000:41:00.4)/nvidia/creatable_vgpu_types"
mk_vfio_vf 0000:41:00.5 1 abc
mk_nvidia_proc "$NV_550" "$GCC_DEB12"
mk_gpu_info 0000:3b:00.0 "NVIDIA A30" 220 GPU-0d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6 92.00.66.00.01 0
