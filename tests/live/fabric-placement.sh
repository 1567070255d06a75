#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Placement of multi-GPU VMs in fabric partitions on the kernel emulator (tests/emu), host
# hgx-h100-8 (Fabric Manager in vGPU mode; module IDs 1b:1 2a:2 5d:3 3d:4
# db:5 bd:6 9b:7 ab:8, so half 1 is 1b 2a 5d 3d on node 0), with the
# stand-in libnvfm (tests/nvfm):
#   - a 2-, a 4- and a 2-GPU VM side by side fill the board without
#     splitting a partition, each recorded with its partition;
#   - an 8-GPU VM (and a 1-GPU plan) then finds no free partition and says
#     what blocks it, recording nothing; why says each GPU's partition and
#     its holder; once they are released it takes the board.
#   fabric-placement.sh VGPUCTL SRCDIR NVML NVFM     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
NVML=$3
NVFM=$4
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
release() { v release --from "$W/$1.xml" -o "$W/$1.out.xml" 2>"$W/err" || fail "release $1: $(cat "$W/err")"; }

# ---- placement: 2, 4, 2 fill the board; 8 then has no room
assign p2a 2 || fail "assign p2a: $(cat "$W/err")"
expect p2a 3 0000:1b:00.0 0000:2a:00.0
assign p4 4 || fail "assign p4: $(cat "$W/err")"
expect p4 2 0000:9b:00.0 0000:ab:00.0 0000:bd:00.0 0000:db:00.0
if command -v virt-xml-validate >/dev/null; then
	virt-xml-validate "$W/p4.xml" domain >/dev/null 2>&1 ||
		fail "p4.xml does not validate: $(virt-xml-validate "$W/p4.xml" domain 2>&1)"
fi
[ "$(grep -c "<hostdev " "$W/p4.xml")" = 4 ] || fail "p4.xml: not 4 hostdevs"
assign p2b 2 || fail "assign p2b: $(cat "$W/err")"
expect p2b 4 0000:3d:00.0 0000:5d:00.0
assign p8 8 && fail "an 8-GPU VM on a full board"
grep -q "no free partition of 8 GPUs (0: GPU 0000:1b:00.0 is in partition 3, in use)" "$W/err" ||
	fail "8 GPUs refused: $(cat "$W/err")"
[ -z "$(records_of p8)" ] || fail "the refused VM has records"
v plan --from "$W/p8.in.xml" --vgpu $P >/dev/null 2>"$W/err" && fail "a 1-GPU plan on a full board"
grep -q "no free partition of 1 GPUs" "$W/err" || fail "1 GPU refused: $(cat "$W/err")"
# why: every GPU is in a partition in use, and says whose
v why $P >"$W/why" 2>"$W/err" || fail "why: $(cat "$W/err")"
[ "$(grep -c ' 0 *fabric-partition ' "$W/why")" = 8 ] &&
	grep -q "^0000:3d:00.0 .*in fabric partition 4, which domain 'p2b' holds" "$W/why" ||
	fail "why on the full board: $(cat "$W/why")"
release p2a
release p4
release p2b
v why $P >"$W/why" 2>"$W/err" || fail "why: $(cat "$W/err")"
grep -q 'fabric-partition' "$W/why" && fail "why on the empty board: $(cat "$W/why")"
assign p8 8 || fail "assign p8 on the empty board: $(cat "$W/err")"
expect p8 0 0000:1b:00.0 0000:2a:00.0 0000:3d:00.0 0000:5d:00.0 0000:9b:00.0 0000:ab:00.0 0000:bd:00.0 0000:db:00.0
release p8

emu_stop || fail "the emulator did not exit cleanly"
[ "$EMU_FAILS" = 0 ] || exit 1
echo "fabric placement: 2, 4, 2 side by side, 8 refused then placed: ok"
