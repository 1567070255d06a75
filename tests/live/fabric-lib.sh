#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests/live/fabric-*.sh, after they set B (vgpuctl), SRC, NVML and
# NVFM (the stand-ins): the emulated hgx-h100-8 host started, $W its work
# directory, $FM the stand-ins' state, $OWN the owner records, v() vgpuctl on
# it, and for the placement tests assign NAME N (a domain of N vGPUs of $P),
# part_of/field_of NAME (what its records say), active (Fabric Manager's
# active partitions) and expect NAME PARTITION GPUS...
# shellcheck disable=SC2034 # W, FM, OWN and P are the sourcing script's
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
emu_start "$SRC/tests/data/hosts/hgx-h100-8"
W=$EMU_DIR
export FAKE_NV_ROOT=$EMU_ROOT
FM=$EMU_ROOT/var/lib/fake-nvidia
OWN=$EMU_ROOT/var/lib/vgpuctl/owners
v() { "$B" --sysroot "$EMU_ROOT" --nvml "$NVML" --nvfm "$NVFM" "$@"; }
P=H100XM-20C
n=0
# assign NAME N: a domain of N vGPUs of $P, defined in $W/NAME.xml
assign() {
	local list=$P i
	n=$((n + 1))
	for ((i = 1; i < $2; i++)); do list+=,$P; done
	cat >"$W/$1.in.xml" <<EOF
<domain type='kvm'>
  <name>$1</name>
  <uuid>$(printf '%08d' $n)-2222-4333-8444-555555555555</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
EOF
	v assign --from "$W/$1.in.xml" -o "$W/$1.xml" --vgpu "$list" 2>"$W/err"
}
records_of() { grep -l "^domain=$1\$" "$OWN"/* 2>/dev/null; }
# the partitions the records of NAME name (one when they agree)
part_of() { records_of "$1" | xargs -r grep -h '^partition=' | cut -d= -f2 | sort -u | tr '\n' ' '; }
field_of() { records_of "$1" | xargs -r grep -h "^$2=" | cut -d= -f2 | sort | tr '\n' ' '; }
active() { sort -n "$FM/fm-active" 2>/dev/null | tr '\n' ' '; }
# expect NAME PARTITION GPUS...
expect() {
	local name=$1 part=$2
	shift 2
	[ "$(part_of "$name")" = "$part " ] || fail "$name: partition $(part_of "$name"), not $part"
	[ "$(field_of "$name" gpu)" = "$* " ] || fail "$name: GPUs $(field_of "$name" gpu), not $*"
}
