#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Parallel starts after a reboot, on the kernel emulator: 15 domains hold
# persistent vGPUs on both L40S of the fixture (7 + 8 VFs), the host
# reboots (no vGPU left), and all 15 hooks' prepares run at once while the
# driver takes 0.7 s per create.  One host lock for everything would make
# the last wait 10.5 s, past the hook's 10 s budget; with the writes under
# per-GPU locks all start (the larger GPU's eight take 5.6 s).  Prints how
# many failed and the slowest.
#   parallel.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
for i in $(seq 10 24); do
	cat >"$W/d$i.xml" <<XML
<domain type='kvm'>
  <name>s$i</name>
  <uuid>$(printf '%08d-4444-4333-8444-555555555555' "$i")</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
XML
	v assign --from "$W/d$i.xml" -o "$W/a$i.xml" --vgpu L40S-4Q --no-pin 2>"$W/err" ||
		fail "assign s$i: $(cat "$W/err")"
done
# the reboot: every vGPU of ours is gone (the records stay)
for f in "$EMU_ROOT"/sys/bus/pci/devices/0000:*/nvidia/current_vgpu_type; do
	case $f in */0000:41:00.5/*) continue ;; esac # not ours: stays
	[ "$(cat "$f")" = 0 ] || echo 0 >"$f"
done
[ "$(v vgpus | grep -c ' missing$')" = 15 ] || fail "not 15 missing after the reboot: $(v vgpus)"
emu_fault "delay sys/*/current_vgpu_type 700" # the driver's create is slow (0.7 s here)
pids=()
for i in $(seq 10 24); do
	(
		s=$(date +%s%N)
		"$B" --sysroot "$EMU_ROOT" hook "s$i" prepare begin - <"$W/a$i.xml" 2>"$W/hook$i.err"
		rc=$?
		echo "$rc $((($(date +%s%N) - s) / 1000000))" >"$W/hook$i.rc"
	) &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
emu_fault -r
failed=0 slowest=0
for i in $(seq 10 24); do
	read -r rc ms <"$W/hook$i.rc"
	[ "$rc" = 0 ] || { failed=$((failed + 1)); echo "s$i: $(cat "$W/hook$i.err")" >&2; }
	[ "$ms" -gt "$slowest" ] && slowest=$ms
done
echo "15 parallel prepares, 0.7 s per create: $failed failed, the slowest took $slowest ms"
[ "$failed" = 0 ] || fail "$failed of 15 parallel starts failed"
[ "$(v vgpus | grep -c ' active$')" = 15 ] || fail "not 15 active after the starts: $(v vgpus)"
emu_stop
[ $EMU_FAILS = 0 ] && echo "ok: parallel starts after a reboot"
exit $((EMU_FAILS > 0))
