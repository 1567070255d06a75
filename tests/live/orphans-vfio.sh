#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Orphans and the reaper on a vendor-VFIO host (tests/emu, vfio-ts-l40s), where a vGPU is a VF
# named by its address (orphans.sh has the mdev host):
#   - the classes of VFs: an orphan (the fixture's 41:00.5), foreign (a domain names it);
#   - evidence that changes between the reaper's scan and a vGPU's write (a process opens its
#     VFIO device, a record or a wedged marker appears) keeps that vGPU, the others are freed;
#   - a wedge line in the kernel log for a VF makes it wedged: the reaper marks it and leaves
#     it, release --clear-wedged clears it and the log's lines so far; a wedge record in
#     dev/kmsg (the kernel's log stream, diagnose's reader) too;
#   - a real process holding a VF's device node, seen through the host's /proc bind-mounted
#     over ROOT/proc (unshare -m; skipped where that is not allowed): in-use, not freed.
#   - NVML's VM ID of an active instance (the stand-in): in-use when tied to a vGPU, else no
#     vGPU of its type is concluded stale or an orphan;
#   orphans-vfio.sh VGPUCTL SRCDIR [NVML_STANDIN]     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
NVML=${3:-} # the NVML stand-in, libnvidia-ml.so.1 (tests/nvml)
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }

# ---- a VF is named by its address; the fixture's 41:00.5 holds a type, no record
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:00.6/nvidia/current_vgpu_type" || fail "type on 41:00.6"
cat >"$W/node.xml" <<EOF2
<node><domain type='test'><name>pci</name><uuid>44444444-2222-4333-8444-555555555555</uuid>
<memory unit='MiB'>1024</memory><os><type arch='x86_64'>hvm</type></os><devices>
<hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000' bus='0x41' slot='0x00' function='0x6'/></source></hostdev>
</devices></domain></node>
EOF2
C=test://$W/node.xml
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "vfio --orphans: $(cat "$W/err")"
grep -q '^0000:41:00.0 0000:41:00.5  *orphan ' "$W/o" && grep -q '^0000:41:00.0 0000:41:00.6  *foreign  *none  *pci ' "$W/o" ||
	fail "vfio classes: $(cat "$W/o")"
# ---- the evidence changes between the scan and each write: each candidate's own evidence is
# read again right before its write.  Four more orphans; while the first one's write is under
# way a process opens 41:00.7's VFIO device, a record appears for 41:01.0, a wedged marker for
# 41:01.1: those three are left, 41:01.2 is freed with the first.
for f in 0000:41:00.7 0000:41:01.0 0000:41:01.1 0000:41:01.2; do
	echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/$f/nvidia/current_vgpu_type" || fail "type on $f"
done
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err"
[ "$(grep -c ' orphan ' "$W/o")" = 5 ] || fail "five orphans: $(cat "$W/o" "$W/err")"
emu_fault "delay sys/bus/pci/devices/0000:41:00.5/nvidia/current_vgpu_type 500"
(
	for _ in $(seq 200); do
		L=$EMU_ROOT/run/vgpuctl/gpu/0000:41:00.0/lock
		[ -e "$L" ] && ! flock -n "$L" true 2>/dev/null && break
		sleep 0.02
	done
	mkdir -p "$EMU_BACKING/proc/4545/fd"
	ln -s "/dev/vfio/devices/$(ls "$EMU_ROOT/sys/bus/pci/devices/0000:41:00.7/vfio-dev")" "$EMU_BACKING/proc/4545/fd/9"
	printf '%s\n' domain=mig domain_uuid=55555555-2222-4333-8444-555555555555 gpu=0000:41:00.0 \
		parent=0000:41:01.0 interface=vendor-vfio type_id=1149 profile=L40S-4Q mdev_uuid= \
		lifetime=persistent >"$EMU_BACKING/var/lib/vgpuctl/owners/.new" &&
		mv "$EMU_BACKING/var/lib/vgpuctl/owners/.new" "$EMU_BACKING/var/lib/vgpuctl/owners/0000:41:01.0"
	mkdir -p "$EMU_BACKING/var/lib/vgpuctl/wedged"
	echo parent=0000:41:01.1 >"$EMU_BACKING/var/lib/vgpuctl/wedged/0000:41:01.1"
) &
HP=$!
mkdir -p "$EMU_BACKING/var/lib/vgpuctl/owners"
v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err"
RC=$?
wait $HP
emu_fault -r
[ $RC = 0 ] && grep -q '^freed 2 vGPUs$' "$W/o" || fail "vfio release: $(cat "$W/o" "$W/err")"
grep -q 'left VF 0000:41:00.7: it is in-use now' "$W/err" && grep -q 'left VF 0000:41:01.0: its owner record changed' "$W/err" &&
	grep -q 'left VF 0000:41:01.1: it is wedged now' "$W/err" || fail "not read again before each write: $(cat "$W/err")"
ty() { cat "$EMU_ROOT/sys/bus/pci/devices/$1/nvidia/current_vgpu_type"; }
[ "$(ty 0000:41:00.5)" = 0 ] && [ "$(ty 0000:41:01.2)" = 0 ] && [ "$(ty 0000:41:00.6)" = 1149 ] &&
	[ "$(ty 0000:41:00.7)" = 1149 ] && [ "$(ty 0000:41:01.0)" = 1149 ] && [ "$(ty 0000:41:01.1)" = 1149 ] ||
	fail "vfio: the orphans are not free or a foreign, held, claimed or wedged one is"

# ---- a wedge line in the kernel log (a teardown that never finished) names a VF: wedged, with
# no marker yet; the reaper marks it (plan and assign skip it) and leaves it; once cleared, its
# lines so far no longer count
echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:01.3/nvidia/current_vgpu_type" || fail "type on 41:01.3"
mkdir -p "$EMU_BACKING/var/log"
echo "Nov 28 21:02:11 host kernel: NVRM: GPU at PCI:0000:41:01.3: RmInitAdapter failed! (0x22:0x65:1422)" >>"$EMU_BACKING/var/log/kern.log"
v -c "$C" vgpus --orphans --grace 0 --json >"$W/j" 2>"$W/err"
grep -q '"vf": *"0000:41:01.3",.*"class": *"wedged",.*"wedged": *"log"' <(tr -d '\n' <"$W/j" | sed 's/}/}\n/g') ||
	fail "log wedge: $(cat "$W/j")"
v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err" && grep -q 'marked VF 0000:41:01.3 wedged: the kernel log says so' "$W/err" &&
	[ -e "$EMU_ROOT/var/lib/vgpuctl/wedged/0000:41:01.3" ] && [ "$(ty 0000:41:01.3)" = 1149 ] ||
	fail "log wedge reaped or not marked: $(cat "$W/o" "$W/err")"
v release --clear-wedged 41:01.3 2>"$W/err" || fail "clear 41:01.3: $(cat "$W/err")"
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err"
grep -q '^0000:41:00.0 0000:41:01.3  *orphan ' "$W/o" || fail "still wedged after clearing: $(cat "$W/o")"
# ---- the same through the kernel's log stream dev/kmsg (a record now: TS_USEC from this host's
# uptime, and its btime in proc/stat, as the emulator makes them with its first record):
# wedged; cleared, its record no longer counts
echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:00.4/nvidia/current_vgpu_type" || fail "type on 41:00.4"
mkdir -p "$EMU_BACKING/dev" && touch "$EMU_BACKING/dev/kmsg" || fail "no dev/kmsg"
[ -e "$EMU_BACKING/proc/stat" ] || grep '^btime ' /proc/stat >"$EMU_BACKING/proc/stat" || fail "no btime"
read -r UP _ </proc/uptime
printf '3,%s,%s,-;NVRM: GPU at PCI:0000:41:00.4: RmInitAdapter failed! (0x22:0x65:1422)\n' \
	"$(wc -l <"$EMU_BACKING/dev/kmsg")" "${UP%.*}000000" >>"$EMU_BACKING/dev/kmsg"
v -c "$C" vgpus --orphans --grace 0 --json >"$W/j" 2>"$W/err"
grep -q '"vf": *"0000:41:00.4",.*"class": *"wedged",.*"wedged": *"log"' <(tr -d '\n' <"$W/j" | sed 's/}/}\n/g') ||
	fail "dev/kmsg wedge: $(cat "$W/j" "$W/err")"
v release --clear-wedged 0000:41:00.4 2>"$W/err" || fail "clear 41:00.4: $(cat "$W/err")"
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err"
grep -q '^0000:41:00.0 0000:41:00.4  *orphan ' "$W/o" || fail "dev/kmsg: still wedged after clearing: $(cat "$W/o")"
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:00.4/nvidia/current_vgpu_type" || fail "free 41:00.4"
# ---- NVML's VM ID of an active instance (the stand-in's vgpus-BDF): one whose VM is the UUID of
# 41:01.0's record's domain is 41:01.0's (in-use, not stale); one of another VM could be any
# untied L40S-4Q's, so none of those is concluded stale or an orphan
if [ -n "$NVML" ]; then
	mkdir -p "$EMU_BACKING/var/lib/fake-nvidia"
	printf '%s\n' "7 55555555-2222-4333-8444-555555555555 1149" "8 66666666-2222-4333-8444-555555555555 1149" \
		>"$EMU_BACKING/var/lib/fake-nvidia/vgpus-0000:41:00.0"
	nv() { FAKE_NV_ROOT=$EMU_ROOT v --nvml "$NVML" -c "$C" "$@"; }
	nv vgpus --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "vgpus with NVML: $(cat "$W/err")"
	grep -q '^0000:41:00.0 0000:41:01.0  *in-use  *mig  *none  *none  *[0-9]*  *55555555-2222-4333-8444-555555555555' "$W/o" &&
		grep -q '^0000:41:00.0 0000:41:01.3  *unknown  *none  *none  *none  *[0-9]*  *maybe' "$W/o" ||
		fail "NVML's VM IDs: $(cat "$W/o" "$W/err")"
	nv vgpus --orphans --grace 0 --json >"$W/j" 2>"$W/err"
	grep -q '"nvml_vm": *"55555555-2222-4333-8444-555555555555"' "$W/j" || fail "NVML json: $(cat "$W/j")"
	nv release --orphans --stale --grace 0 >"$W/o" 2>"$W/err" && grep -q '^freed 0 vGPUs$' "$W/o" ||
		fail "freed with an NVML instance on it: $(cat "$W/o" "$W/err")"
	rm "$EMU_BACKING/var/lib/fake-nvidia/vgpus-0000:41:00.0"
	nv vgpus --orphans --grace 0 >"$W/o" 2>"$W/err"
	grep -q '^0000:41:00.0 0000:41:01.0  *stale  *mig  *none  *none  *[0-9]*  *none' "$W/o" || fail "no instance: $(cat "$W/o" "$W/err")"
fi

# ---- a real process holding a VF's VFIO device node: the host's own /proc bind-mounted over
# ROOT/proc in a private mount namespace, where its link is the real path ROOT/dev/vfio/devices/N
if unshare -m true 2>/dev/null; then
	echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:01.2/nvidia/current_vgpu_type" || fail "type on 41:01.2"
	N=$(ls "$EMU_ROOT/sys/bus/pci/devices/0000:41:01.2/vfio-dev")
	mkdir -p "$EMU_BACKING/dev/vfio/devices" && : >"$EMU_BACKING/dev/vfio/devices/$N"
	# shellcheck disable=SC2217 # it holds the node open as its stdin, what QEMU would do
	sleep 30 <"$EMU_ROOT/dev/vfio/devices/$N" &
	SP=$!
	trap 'kill $SP 2>/dev/null; _emu_exit' EXIT
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_ns() { unshare -m sh -c 'mount --bind /proc "$1/proc" && shift && exec "$@"' x "$EMU_ROOT" "$B" --sysroot "$EMU_ROOT" -c "$C" "$@"; }
	in_ns vgpus --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "vgpus in a namespace: $(cat "$W/err")"
	grep -q "^0000:41:00.0 0000:41:01.2  *in-use  *none  *none  *$SP " "$W/o" || fail "the real holder: $(cat "$W/o" "$W/err")"
	in_ns release --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "release in a namespace: $(cat "$W/err")"
	[ "$(ty 0000:41:01.2)" = 1149 ] || fail "freed a VF a real process holds: $(cat "$W/err")"
	kill $SP
	wait $SP 2>/dev/null
fi

emu_stop

[ $EMU_FAILS = 0 ] && echo "ok: orphans-vfio (classes, evidence changed before each write, kernel-log wedge, clear)"
exit $((EMU_FAILS > 0))
