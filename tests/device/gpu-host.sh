#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/device/gpu-host.sh PKG: on a real NVIDIA host (no vGPU manager needed),
# compare what vgpuctl and our NVML declarations read with nvidia-smi.  Read
# only: it never changes a GPU setting (no MIG, ECC, VF or vGPU change).
# PKG holds vgpuctl, and under PKG/lib its module, the libraries `ldd` names
# and the loader (tests/device/pack.sh makes it), so it runs on a host that
# has none of our libraries.  Output goes to $OUT (or ./device-out).
# Not part of the suite: CI has no GPU.
set -u
pkg=$(cd "${1:?usage: gpu-host.sh PKG}" && pwd)
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
V() { "$pkg/lib/ld-linux-x86-64.so.2" --library-path "$pkg/lib" "$pkg/vgpuctl" "$@"; }
P() { "$pkg/lib/ld-linux-x86-64.so.2" --library-path "$pkg/lib" "$pkg/nvml-probe" "$@"; }
run() { # NAME CMD...: stdout+stderr to $out/NAME, its exit status at the end
	local name=$1
	shift
	"$@" >"$out/$name" 2>&1
	echo "exit $?" >>"$out/$name"
}
nvml=$(ldconfig -p | awk '/libnvidia-ml.so.1 /{print $NF; exit}')
run uname uname -r
run smi-csv nvidia-smi --query-gpu=index,pci.bus_id,name,pci.device_id,pci.sub_device_id,ecc.mode.current,ecc.mode.pending,mig.mode.current,driver_version,memory.total --format=csv
run smi-q nvidia-smi -q
run gpus V gpus
run gpus-json V gpus --json
run topology V topology
run inventory V inventory --json
run types V types
run scheduler V scheduler
run scheduler-json V scheduler --json
# our declarations against the real library: read-only entry points only
run probe-syms P "$nvml" - syms
for bus in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
	b=$(echo "$bus" | tr 'A-F' 'a-f' | sed 's/^0000\(....\)/\1/; s/^\(....\):/0000:/')
	d=/sys/bus/pci/devices/$b
	n=${b//[:.]/-} # a file name without ':' (the device tool returns plain names only)
	run "sysfs-$n" cat "$d/vendor" "$d/device" "$d/subsystem_vendor" "$d/subsystem_device" "$d/numa_node"
	# module: NVML's module ID, Fabric Manager's physical ID on an HGX board
	for q in handle mig mem ecc types hetero pmeta vgpus sched module; do
		run "probe-$n-$q" P "$nvml" "$b" "$q"
	done
done
# Fabric Manager (#30): on a host without fabricmanager.cfg "no Fabric Manager", exit 0;
# with one, its partitions (libnvfm.so.1 as installed).  NVML's module IDs per GPU are in
# probe-*-module; compare them with nvidia-smi's "Module ID" lines (smi-module).
run fabric V fabric
run fabric-json V fabric --json
run smi-module sh -c 'nvidia-smi -q | grep -i -E "^GPU |module"'
run fm-cfg sh -c 'ls -l /usr/share/nvidia/nvswitch/fabricmanager.cfg; ldconfig -p | grep -i nvfm'
# the target's side of a migration on a host without a vGPU manager: no type, no slot
printf '%s\n' '{"vgpuctl-migrate": 1, "vgpus": [{"type": "H200-141C", "interface": "vf"}]}' >"$out/manifest.json"
run migrate-offer V migrate-offer <"$out/manifest.json"
# the host's own kernel log through the catalogue (read only)
run diagnose V diagnose
run kern-nvrm sh -c 'journalctl -k -b --no-pager 2>/dev/null | grep -E "NVRM|nvidia" | tail -40'
ls "$out"
