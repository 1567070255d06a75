#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A slow free does not hold its GPU: the driver takes 12 s to remove vm1's mdev
# (the clean-up after a stop), longer than a start may wait (the hook's 10 s).
# release waits VGPU_LIVE_FREE_WAIT_MS (3 s) for it, then lets the write go on
# in a process of its own, fails with the reason and keeps vm1's record; vm2's
# start on the same GPU meanwhile creates its vGPU.  Once the driver is done,
# the next release drops the record.  The same for vendor-specific VFIO (`0`
# written to current_vgpu_type) through the hook's release of a per-start vGPU.
#   slow-free.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
dom() { # NAME N: a domain definition without vGPUs
	cat >"$W/$1.xml" <<XML
<domain type='kvm'>
  <name>$1</name>
  <uuid>$(printf '%08d-4444-4333-8444-555555555555' "$2")</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
XML
}
# slow_free LABEL GPU TYPE RELEASE-CMD...: vm1 holds a vGPU on GPU; its free takes 12 s
# shellcheck disable=SC2086 # $PER_START: no option, or one
slow_free() {
	local label=$1 gpu=$2 type=$3 rel rc s ms
	shift 3
	v assign --from "$W/vm1.xml" -o "$W/vm1.a.xml" --vgpu "$type" --gpu "$gpu" $PER_START \
		2>"$W/err" || fail "$label: assign vm1: $(cat "$W/err")"
	[ -z "$PER_START" ] || v hook vm1 prepare begin - <"$W/vm1.a.xml" 2>"$W/err" ||
		fail "$label: prepare vm1: $(cat "$W/err")"
	v assign --from "$W/vm2.xml" -o "$W/vm2.a.xml" --vgpu "$type" --gpu "$gpu" --per-start \
		2>"$W/err" || fail "$label: assign vm2: $(cat "$W/err")"
	emu_fault "$(fault)"
	s=$(date +%s%N)
	"$@" >/dev/null 2>"$W/rel.err" &
	rel=$!
	sleep 0.5
	# vm2 starts on the same GPU while vm1's vGPU is being freed
	v hook vm2 prepare begin - <"$W/vm2.a.xml" 2>"$W/err" ||
		fail "$label: vm2's start waited for vm1's slow free: $(cat "$W/err")"
	wait $rel
	rc=$?
	ms=$((($(date +%s%N) - s) / 1000000))
	echo "$label: the release returned after $ms ms (exit $rc), the driver takes 12 s"
	[ $rc != 0 ] || fail "$label: the release said done while the driver still frees"
	grep -q "the driver is still freeing .* after 3 s; that goes on without vgpuctl's locks" \
		"$W/rel.err" || fail "$label: the release's message: $(cat "$W/rel.err")"
	[ "$(v vgpus | grep -c ' vm1 ')" = 1 ] || fail "$label: vm1's record went before its vGPU: $(v vgpus)"
	emu_fault -r
	# the write goes on without vgpuctl; once the driver is done, release drops the record
	for _ in $(seq 200); do
		gone && break
		sleep 0.1
	done
	gone || fail "$label: the driver's free never finished"
	"$@" >/dev/null 2>"$W/err" || fail "$label: the release after the free: $(cat "$W/err")"
	v release --from "$W/vm1.a.xml" >/dev/null 2>"$W/err" || fail "$label: release vm1: $(cat "$W/err")"
	v vgpus | grep -q ' vm1 ' && fail "$label: vm1's record stayed: $(v vgpus)"
	v hook vm2 release end - <"$W/vm2.a.xml" 2>/dev/null
	v release --from "$W/vm2.a.xml" >/dev/null 2>"$W/err" || fail "$label: release vm2: $(cat "$W/err")"
}

# ---- mdev: `remove` is slow; release of a persistent vGPU
emu_start "$SRC/tests/data/hosts/a30-dual-mdev"
W=$EMU_DIR
dom vm1 1
dom vm2 2
PER_START=
fault() { echo "delay sys/bus/mdev/devices/*/remove 12000"; }
gone() { [ -z "$(ls "$EMU_ROOT/sys/bus/mdev/devices" 2>/dev/null)" ] || ! v vgpus | grep -q ' vm1 .* active'; }
slow_free mdev 0000:3b:00.0 A30-6C v release --from "$W/vm1.a.xml"
emu_stop

# ---- vendor VFIO: `0` is slow; the hook's release of a per-start vGPU
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
dom vm1 1
dom vm2 2
PER_START=--per-start
# vm1's VF only: vm2's create on the same GPU is as fast as ever
fault() {
	local rec
	rec=$(grep -l '^domain=vm1$' "$EMU_ROOT"/var/lib/vgpuctl/owners/*)
	echo "delay sys/bus/pci/devices/${rec##*/}/nvidia/current_vgpu_type 12000"
}
gone() { ! v vgpus | grep -q ' vm1 .* active'; }
slow_free vfio 0000:c1:00.0 L40S-8Q sh -c "exec \"$B\" --sysroot \"$EMU_ROOT\" hook vm1 release end - <\"$W/vm1.a.xml\""
emu_stop
[ $EMU_FAILS = 0 ] && echo "ok: a slow free holds no lock: the next start on its GPU goes on"
exit $((EMU_FAILS > 0))
