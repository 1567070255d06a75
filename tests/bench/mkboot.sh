#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mkboot.sh ROOT [NGPU]
#
# Build an NGPU-GPU (default 8, at most 8) H100 PCIe host under ROOT (which
# must not exist or be empty) for bench-boot.sh: every GPU is a copy of the
# one GPU of tests/data/hosts/vfio-mig-h100 (device 0x2331, vendor-specific
# VFIO, 8 VFs, MIG on with four GIs, VF 0 holding H100-3-40C on GI 1), with
#
#   bus           18 2a 3a 5d 9a ab ba db (GPU g, as on an 8-GPU HGX board):
#                 every path and link naming 0000:ca / pci0000:ca renamed
#   IOMMU groups  PF 60+10g, VF n 61+10g+n (the fixture's 60..68 for g = 0)
#   vfio-dev      vfio(8g+n), dev 511:(8g+n)
#   Device Minor  g in proc/driver/nvidia/gpus/<BDF>/information (and Bus
#                 Location, IRQ, a distinct UUID); capabilities/gpu<g>/mig
#                 with the minors mig-minors gives (3 + 135g + 9i)
#   NUMA          GPUs 0-3 on node 0, 4-7 on node 1 (numa_node, local_cpulist,
#                 local_cpus of the PF and its VFs)
#
# The rest of the fixture (host bridge, /proc/driver/nvidia/version, the
# global MIG capability files, the nvidia driver directory) is copied as it
# is, and the CPU topology becomes 2 sockets of 8 cores x 2 threads (32 CPUs:
# node 0 = 0-7,16-23, node 1 = 8-15,24-31; siblings n and n+16), each node
# with half the fixture's memory.  Run tests/apply/fake-nv-boot ROOT on it
# to get a host that has just booted (VFs disabled, MIG off, no GIs).
set -euo pipefail
export LC_ALL=C
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIX=${MKBOOT_FIXTURE:-$HERE/../data/hosts/vfio-mig-h100}
BUSES=(18 2a 3a 5d 9a ab ba db)
OLD=ca OLDGRP=60

usage() {
	echo "usage: $0 ROOT [NGPU (1-8, default 8)]" >&2
	exit 2
}
(($# == 1 || $# == 2)) || usage
ROOT=$1 NGPU=${2:-8}
[[ $NGPU =~ ^[1-8]$ ]] || usage
[[ -d $FIX/sys/devices/pci0000:$OLD ]] || { echo "$0: no fixture at $FIX" >&2; exit 1; }
if [[ -e $ROOT && -n $(ls -A "$ROOT") ]]; then
	echo "$0: $ROOT exists and is not empty" >&2
	exit 1
fi
mkdir -p "$ROOT"
ROOT=$(cd "$ROOT" && pwd)

put() { local f=$1; shift; [[ -d ${f%/*} ]] || mkdir -p "${f%/*}"; printf '%s\n' "$@" >"$f"; }

# ---- everything but the GPU and the CPU topology, as in the fixture
cp -a "$FIX/." "$ROOT"
rm -rf "$ROOT/sys/devices/pci0000:$OLD" "$ROOT"/sys/bus/pci/devices/0000:$OLD:* \
	"$ROOT"/sys/kernel/iommu_groups/6[0-8] "$ROOT/proc/driver/nvidia/gpus/0000:$OLD:00.0" \
	"$ROOT/proc/driver/nvidia/capabilities/gpu0" "$ROOT/sys/devices/system"

# ---- CPU and NUMA topology: 2 sockets x 8 cores x 2 threads
NCPU=32
sys=$ROOT/sys/devices/system
for f in online present possible; do put "$sys/cpu/$f" "0-$((NCPU - 1))"; done
for ((c = 0; c < NCPU; c++)); do
	core=$((c % 16)) pkg=$((c % 16 / 8))
	d=$sys/cpu/cpu$c/topology
	put "$d/thread_siblings_list" "$core,$((core + 16))"
	put "$d/core_cpus_list" "$core,$((core + 16))"
	put "$d/core_id" $((core % 8))
	put "$d/physical_package_id" "$pkg"
	put "$d/die_id" 0
	ln -s "../../node/node$pkg" "$sys/cpu/cpu$c/node$pkg"
done
for f in online possible; do put "$sys/node/$f" 0-1; done
NODE_CPUS=("0-7,16-23" "8-15,24-31")
NODE_MASK=(00ff00ff ff00ff00)
for k in 0 1; do
	d=$sys/node/node$k
	put "$d/cpulist" "${NODE_CPUS[k]}"
	put "$d/cpumap" "${NODE_MASK[k]}"
	# half of the fixture's node: 263856298 kB, 2 GiB in use, 32 1 GiB pages (24 free)
	total=263856298 used=$((2097152 + 32 * 1048576))
	{
		printf 'Node %d MemTotal:       %8d kB\n' "$k" "$total"
		printf 'Node %d MemFree:        %8d kB\n' "$k" $((total - used))
		printf 'Node %d MemUsed:        %8d kB\n' "$k" "$used"
		printf 'Node %d Active:         %8d kB\n' "$k" 1048576
		printf 'Node %d Inactive:       %8d kB\n' "$k" 524288
		printf 'Node %d HugePages_Total: %5d\n' "$k" 0
		printf 'Node %d HugePages_Free:  %5d\n' "$k" 0
		printf 'Node %d HugePages_Surp:  %5d\n' "$k" 0
	} >"$d/meminfo"
	put "$d/hugepages/hugepages-1048576kB/nr_hugepages" 32
	put "$d/hugepages/hugepages-1048576kB/free_hugepages" 24
	put "$d/hugepages/hugepages-2048kB/nr_hugepages" 0
	put "$d/hugepages/hugepages-2048kB/free_hugepages" 0
done

# ---- the GPUs
# the fixture's GPU entries, relative to the fixture: "f PATH" or "l PATH TARGET"
mapfile -t ENTRIES < <(
	cd "$FIX"
	find "sys/devices/pci0000:$OLD" sys/bus/pci/devices/0000:$OLD:* \
		sys/kernel/iommu_groups/6[0-8] "proc/driver/nvidia/gpus/0000:$OLD:00.0" \
		proc/driver/nvidia/capabilities/gpu0 \( -type f -printf 'f %p\n' \) -o \( -type l -printf 'l %p %l\n' \) |
		sort
)

# rename TEXT: REPLY = a fixture path or link target renamed for GPU g
# (globals B, G, g); no fork, the loop below runs it ~1,200 times
rename() {
	local t=${1//0000:$OLD/0000:$B}
	# iommu_groups/6N -> iommu_groups/G+N
	if [[ $t =~ ^(.*iommu_groups/)([0-9]+)(.*)$ ]]; then
		t=${BASH_REMATCH[1]}$((BASH_REMATCH[2] - OLDGRP + G))${BASH_REMATCH[3]}
	fi
	if [[ $t =~ ^(.*vfio-dev/vfio)([0-9]+)(.*)$ ]]; then
		t=${BASH_REMATCH[1]}$((8 * g + BASH_REMATCH[2]))${BASH_REMATCH[3]}
	fi
	REPLY=${t/capabilities\/gpu0\//capabilities\/gpu$g\/}
}

declare -A made=()
links=()
for ((g = 0; g < NGPU; g++)); do
	B=${BUSES[g]} G=$((OLDGRP + 10 * g)) node=$((g < 4 ? 0 : 1))
	for x in "${ENTRIES[@]}"; do
		read -r kind e target <<<"$x"
		rename "$e"
		new=$ROOT/$REPLY
		if [[ -z ${made[${new%/*}]:-} ]]; then
			mkdir -p "${new%/*}"
			made[${new%/*}]=1
		fi
		if [[ $kind == l ]]; then
			rename "$target"
			links+=("$REPLY" "$new")
			continue
		fi
		case $e in
		*/numa_node) put "$new" "$node" ;;
		*/local_cpulist) put "$new" "${NODE_CPUS[node]}" ;;
		*/local_cpus) put "$new" "${NODE_MASK[node]}" ;;
		*/vfio-dev/vfio*/dev)
			n=${e##*/vfio-dev/vfio}
			n=${n%%/*}
			put "$new" "511:$((8 * g + n))"
			;;
		*/capabilities/gpu0/mig/gi*/access)
			i=${e##*/mig/gi}
			i=${i%%/*}
			m=$((3 + 135 * g + 9 * i))
			if [[ $e == */ci0/access ]]; then m=$((m + 1)); fi
			printf 'DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n' "$m" >"$new"
			;;
		*/information)
			while IFS= read -r line; do
				case $line in
				"IRQ:"*) printf 'IRQ:   \t\t %s\n' $((186 + 8 * g)) ;;
				"GPU UUID:"*) printf 'GPU UUID: \t GPU-2f7c1a9e-6b3d-4e58-9a0c-7d1e2b3c4f%02x\n' $((0x50 + g)) ;;
				"Bus Location:"*) printf 'Bus Location: \t %s\n' "0000:$B:00.0" ;;
				"Device Minor:"*) printf 'Device Minor: \t %s\n' "$g" ;;
				*) printf '%s\n' "$line" ;;
				esac
			done <"$FIX/$e" >"$new"
			;;
		*) # a copy, without a fork (empty files stay empty)
			content=
			IFS= read -r -d '' content <"$FIX/$e" || true
			printf '%s' "$content" >"$new"
			;;
		esac
	done
done
# the links: one perl process, else ln per link
if command -v perl >/dev/null 2>&1; then
	printf '%s\0' "${links[@]}" | perl -0 -ne 'chomp; push @a, $_; END { while (@a) { my ($t, $l) = splice(@a, 0, 2); symlink($t, $l) or die "symlink $l: $!\n" } }'
else
	for ((i = 0; i < ${#links[@]}; i += 2)); do ln -s "${links[i]}" "${links[i + 1]}"; done
fi
