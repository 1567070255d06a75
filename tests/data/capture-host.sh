#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# capture-host.sh - copy the sysfs/procfs subset vgpuctl reads from a real
# host into a fixture tree, the way util-linux's tests/ts/lscpu/mk-input.sh
# captures a machine for lscpu, so a bug report's host can become a test case.
#
# Usage: capture-host.sh OUT [ROOT]
#   OUT   a new (or empty) directory; OUT.tar or OUT.tar.gz writes a tarball
#   ROOT  the host's root (default /); a fixture tree works too, which is how
#         tests/data/check-capture.sh tests this script
# Then: vgpuctl --sysroot OUT gpus   (and vfs, types, topology)
#
# What is copied: every NVIDIA PCI function (vendor 0x10de) with its ids,
# class, NUMA node, local_cpulist, SR-IOV counts, driver/iommu_group/physfn/
# virtfnN links, mdev types and the vendor-VFIO nvidia/ files; mdev devices;
# NUMA nodes (CPUs, meminfo, 1 GiB hugepages); CPU topology; the NVIDIA
# driver's per-GPU information and MIG GPU-instance capability files.
# Attribute contents become regular files; a symlink keeps the kernel's
# relative target and sits at its real place (sys/devices/...), so links
# such as sys/bus/pci/devices/<BDF> resolve inside OUT. Nothing is written
# under ROOT. Serial numbers are not read; GPU UUIDs in 'information' are
# copied: edit them before publishing a capture.
set -euo pipefail
export LC_ALL=C
umask 022

usage() { echo "usage: ${0##*/} OUT [ROOT]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
out=$1
root=$(realpath -e "${2:-/}")
P=${root%/} # prefix for absolute paths: "" for /

tarball=
case $out in
*.tar | *.tar.gz | *.tgz)
	tarball=$(realpath -m "$out")
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	out=$tmp/host
	;;
esac
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
	echo "${0##*/}: '$out' exists and is not empty" >&2
	exit 1
fi
mkdir -p "$out"
out=$(realpath "$out")

# The walk only records what to copy, with bash builtins: this runs a process
# per path otherwise, and sysfs trees are large. files/links are paths
# relative to ROOT without symlinks in their directories; dirs are made in OUT.
files=() links=()
declare -A dirs=()
file() { files+=("$1"); }
link() { if [ -L "$P/$1" ]; then links+=("$1"); fi; }

# canon REL...: each REL with every symlink resolved, relative to ROOT, one
# per line, in order ("" for one that is missing or lies outside ROOT).
canon() {
	local r
	for r in "$@"; do
		r=$(realpath -e -- "$P/$r" 2>/dev/null) || r=
		case $r in "$P"/*) echo "${r#"$P"/}" ;; *) echo ;; esac
	done
}

# ---------------------------------------------------------------- PCI
nvs=()
for l in "$P"/sys/bus/pci/devices/*; do
	v=
	{ IFS= read -r v <"$l/vendor" || :; } 2>/dev/null
	if [ "$v" = 0x10de ]; then nvs+=("${l##*/}"); fi
done
declare -A isdev=()
for bdf in "${nvs[@]}"; do
	link "sys/bus/pci/devices/$bdf"
	d=$(canon "sys/bus/pci/devices/$bdf")
	[ -n "$d" ] || continue
	isdev[$d]=1
	for f in vendor device class numa_node local_cpulist sriov_totalvfs sriov_numvfs \
		nvidia/creatable_vgpu_types nvidia/current_vgpu_type; do
		file "$d/$f"
	done
	{ read -r drv; read -r grp; } < <(canon "$d/driver" "$d/iommu_group")
	link "$d/driver"
	if [ -n "$drv" ]; then dirs[$drv]=1; fi
	link "$d/iommu_group"
	if [ -n "$grp" ]; then link "$grp/devices/$bdf"; fi
	link "$d/physfn"
	for v in "$P/$d"/virtfn*; do link "$d/${v##*/}"; done
	for t in "$P/$d"/mdev_supported_types/*/; do
		[ -d "$t" ] || continue
		t=${t%/}
		t=$d/mdev_supported_types/${t##*/}
		for f in name description available_instances device_api; do
			file "$t/$f"
		done
		for m in "$P/$t"/devices/*; do link "$t/devices/${m##*/}"; done
	done
done

# mdev devices of the NVIDIA parents recorded above
for m in "$P"/sys/bus/mdev/devices/*; do
	[ -L "$m" ] || continue
	d=$(canon "sys/bus/mdev/devices/${m##*/}")
	if [ -z "$d" ] || [ -z "${isdev[${d%/*}]:-}" ]; then continue; fi
	link "sys/bus/mdev/devices/${m##*/}"
	link "$d/mdev_type"
done

# ---------------------------------------------------------------- NUMA, CPUs
s=sys/devices/system
for f in node/online node/possible cpu/online cpu/present cpu/possible; do
	file "$s/$f"
done
for n in "$P/$s"/node/node[0-9]*; do
	[ -d "$n" ] || continue
	n=$s/node/${n##*/}
	for f in cpulist cpumap meminfo hugepages/hugepages-1048576kB/nr_hugepages \
		hugepages/hugepages-1048576kB/free_hugepages; do
		file "$n/$f"
	done
done
for c in "$P/$s"/cpu/cpu[0-9]*; do
	[ -d "$c/topology" ] || continue
	c=$s/cpu/${c##*/}/topology
	for f in thread_siblings_list core_siblings_list core_id physical_package_id; do
		file "$c/$f"
	done
done

# ---------------------------------------------------------------- NVIDIA procfs
nv=proc/driver/nvidia
for g in "$P/$nv"/gpus/*; do
	if [ -d "$g" ]; then file "$nv/gpus/${g##*/}/information"; fi
done
for g in "$P/$nv"/capabilities/gpu[0-9]*; do
	[ -d "$g/mig" ] || continue
	g=$nv/capabilities/${g##*/}/mig
	dirs[$g]=1 # MIG on, even with no GPU instance yet
	while IFS= read -r -d '' f; do
		file "${f#"$P"/}"
	done < <(find "$P/$g" -mindepth 1 -path "$P/$g/gi*" -type f -print0)
done

# ---------------------------------------------------------------- copy
# Attribute contents: sysfs reports a size of 4096 whatever the content, so
# read instead of copying. They are text (no NUL bytes): bash's read takes
# them whole. One that is unreadable (write-only, or fails) is left out.
declare -A want=()
for f in "${files[@]}"; do
	v=
	if [ ! -f "$P/$f" ] || [ ! -r "$P/$f" ]; then continue; fi
	{ IFS= read -r -d '' v <"$P/$f" || :; } 2>/dev/null
	if [ -z "$v" ] && [ -s "$P/$f" ]; then continue; fi
	want[$f]=$v
	dirs[${f%/*}]=1
done
for l in "${links[@]}"; do dirs[${l%/*}]=1; done
if [ ${#dirs[@]} -gt 0 ]; then (cd "$out" && mkdir -p -- "${!dirs[@]}"); fi
for f in "${!want[@]}"; do printf '%s' "${want[$f]}" >"$out/$f"; done
# symlinks as they are (the kernel's targets are relative) ...
if [ ${#links[@]} -gt 0 ]; then (cd "$P/" && cp -P --parents -t "$out" -- "${links[@]}"); fi
# ... but an absolute target would point out of OUT: make it relative
while IFS= read -r -d '' l; do
	r=${l#"$out"/}
	c=$(canon "$r")
	if [ -n "$c" ]; then ln -sfn "$(realpath -m --relative-to="${l%/*}" "$out/$c")" "$l"; fi
done < <(find "$out" -lname '/*' -print0)

if [ -n "$tarball" ]; then
	z=
	case $tarball in *gz) z=z ;; esac
	tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner -c${z}f "$tarball" .
fi
