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
# shellcheck source=tests/live/fabric-lib.sh
. "$SRC/tests/live/fabric-lib.sh"
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
