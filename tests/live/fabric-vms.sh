#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-GPU VMs in fabric partitions on the kernel emulator (tests/emu), host
# hgx-h100-8 (Fabric Manager in vGPU mode; module IDs 1b:1 2a:2 5d:3 3d:4
# db:5 bd:6 9b:7 ab:8, so half 1 is 1b 2a 5d 3d on node 0), with the
# stand-in libnvfm (tests/nvfm):
#   - #30's "done when": a 4-vGPU VM and four 1-vGPU VMs start (hook prepare,
#     started), each in its own active partition on its own GPUs, and stop
#     (release) with each partition deactivated;
#   - a restarted Fabric Manager (fm-restarted: nothing active, out of sync)
#     is resynced from the records.
#   fabric-vms.sh VGPUCTL SRCDIR NVML NVFM     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
NVML=$3
NVFM=$4
# shellcheck source=tests/live/fabric-lib.sh
. "$SRC/tests/live/fabric-lib.sh"

# ---- done when: a 4-vGPU VM and four 1-vGPU VMs start and stop, each in its partition
assign vm4 4 || fail "assign vm4: $(cat "$W/err")"
expect vm4 1 0000:1b:00.0 0000:2a:00.0 0000:3d:00.0 0000:5d:00.0
# best fit: the singles of half 2, each breaking no free pair it need not break
while read -r name part gpu; do
	assign "$name" 1 || fail "assign $name: $(cat "$W/err")"
	expect "$name" "$part" "$gpu"
done <<EOF
vm1a 11 0000:db:00.0
vm1b 12 0000:bd:00.0
vm1c 13 0000:9b:00.0
vm1d 14 0000:ab:00.0
EOF
for d in vm4 vm1a vm1b vm1c vm1d; do
	v hook "$d" prepare begin - <"$W/$d.xml" 2>"$W/err" || fail "prepare $d: $(cat "$W/err")"
	v hook "$d" started begin - <"$W/$d.xml" 2>"$W/err" || fail "started $d: $(cat "$W/err")"
	line="nvfm fmActivateFabricPartitionWithVFs $(part_of "$d")$(field_of "$d" parent)"
	# the VFs in the order of the partition's GPUs (modules 1 2 3 4: 1b 2a 5d 3d), not PCI order
	[ "$d" = vm4 ] && line="nvfm fmActivateFabricPartitionWithVFs 1 0000:1b:00.4 0000:2a:00.4 0000:5d:00.4 0000:3d:00.4"
	grep -qxF "${line% }" "$FM/calls" ||
		fail "$d: activated with its VFs: $(grep fmActivate "$FM/calls")"
done
[ "$(active)" = "1 11 12 13 14 " ] || fail "active while the five run: $(active)"
v metrics >"$W/metrics" 2>"$W/err" || fail "metrics: $(cat "$W/err")"
grep -qx 'vgpuctl_fabric_partitions{state="active"} 5' "$W/metrics" &&
	grep -qx 'vgpuctl_fabric_partitions{state="free"} 0' "$W/metrics" &&
	grep -qx 'vgpuctl_fabric_partition_active{partition="1",gpus="4",domain="vm4"} 1' "$W/metrics" ||
	fail "metrics: $(grep fabric "$W/metrics")"

# ---- a restarted Fabric Manager knows nothing: resynced from the hook's notes
touch "$FM/fm-restarted"
v fabric resync >/dev/null 2>"$W/err" || fail "fabric resync: $(cat "$W/err")"
grep -qx "nvfm fmSetActivatedFabricPartitions 1 11 12 13 14" "$FM/calls" ||
	fail "resync told: $(grep fmSetActivated "$FM/calls")"
[ "$(active)" = "1 11 12 13 14 " ] || fail "active after the resync: $(active)"

for d in vm4 vm1a vm1b vm1c vm1d; do
	p=$(part_of "$d")
	v hook "$d" release end - <"$W/$d.xml" 2>"$W/err" || fail "release $d: $(cat "$W/err")"
	grep -q "nvfm fmDeactivateFabricPartition ${p% }$" "$FM/calls" || fail "$d: not deactivated"
	grep -qx "${p% }" "$FM/fm-active" && fail "$d: partition ${p% } still active"
done
[ -z "$(active)" ] || fail "active after the five stopped: $(active)"

emu_stop || fail "the emulator did not exit cleanly"
[ "$EMU_FAILS" = 0 ] || exit 1
echo "fabric VMs: five VMs started and stopped, resync: ok"
