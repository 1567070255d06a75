#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hook and the fabric partition on the kernel emulator (tests/emu), host
# hgx-h100-8 (Fabric Manager in vGPU mode), with the stand-in libnvfm
# (tests/nvfm) keeping its state and its calls under the mount, so the
# emulator's journal holds the driver's writes and Fabric Manager's calls in
# the order they happened:
#   - the order: prepare creates the vGPUs, then activates the partition with
#     one VF per GPU; (start); release frees the vGPUs, then deactivates;
#   - an activation that fails (not running, not ready, in use, out of sync)
#     fails the start with the cause and leaves no vGPU, no note and the
#     records as they were; the release after it calls nothing;
#   - without NVML's module IDs a two-GPU partition is not activated (its VFs' order
#     would be a guess): the start fails saying so;
#   - off vGPU mode the hook does not load libnvfm at all.
#   fabric-hook.sh VGPUCTL SRCDIR NVML NVFM     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
NVML=$3
NVFM=$4
# shellcheck source=tests/live/fabric-lib.sh
. "$SRC/tests/live/fabric-lib.sh"
CFG=$EMU_BACKING/usr/share/nvidia/nvswitch/fabricmanager.cfg
hook() { # DOMAIN OP SUB < XML
	v hook "$1" "$2" "$3" -
}
U1=11111111-2222-4333-8444-555555555555
cat >"$W/d.xml" <<EOF
<domain type='kvm'>
  <name>vm2</name>
  <uuid>$U1</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
EOF
# per-start: the hook creates the vGPUs at each start and frees them at each stop
v assign --from "$W/d.xml" -o "$W/a.xml" --per-start --vgpu H100XM-20C,H100XM-20C 2>"$W/err" ||
	fail "assign: $(cat "$W/err")"
grep -qx 'partition=3' "$OWN"/* && [ "$(grep -l '^partition=3$' "$OWN"/* | wc -l)" = 2 ] ||
	fail "the two records name pair 3 (modules 1-2: 1b, 2a): $(grep -h partition= "$OWN"/*)"
VFS=$(grep -h '^parent=' "$OWN"/* | cut -d= -f2 | sort | tr '\n' ' ')
VFS=${VFS% }
[ "$(grep -h '^gpu=' "$OWN"/* | cut -d= -f2 | sort | tr '\n' ' ')" = "0000:1b:00.0 0000:2a:00.0 " ] ||
	fail "the GPUs of pair 3: $(grep -h '^gpu=' "$OWN"/*)"
cp -a "$OWN" "$W/owners.before"

# The journal's events, in order: "create VF", "free VF", "activate ID VF...", "deactivate ID".
events() {
	sed -n -e 's|^write sys/.*/\([0-9a-f:.]*\)/nvidia/current_vgpu_type 0 -> 0$|free \1|p' \
		-e 's|^write sys/.*/\([0-9a-f:.]*\)/nvidia/current_vgpu_type [1-9][0-9]* -> 0$|create \1|p' \
		-e 's|^write var/lib/fake-nvidia/calls nvfm fmActivateFabricPartitionWithVFs \(.*\) -> 0$|activate \1|p' \
		-e 's|^write var/lib/fake-nvidia/calls nvfm fmDeactivateFabricPartition \(.*\) -> 0$|deactivate \1|p' \
		"$EMU_LOG"
}
VF1=${VFS%% *} VF2=${VFS##* }

# ---- the order: vGPUs, activation, (start), frees, deactivation
emu_clear_journal
hook vm2 prepare begin <"$W/a.xml" 2>"$W/err" || fail "prepare: $(cat "$W/err")"
[ "$(cat "$FM/fm-active" 2>/dev/null)" = 3 ] || fail "after prepare, active: $(cat "$FM/fm-active" 2>&1)"
emu_open "$VF1"
emu_open "$VF2"
hook vm2 started begin <"$W/a.xml" 2>"$W/err" || fail "started: $(cat "$W/err")"
emu_close "$VF1"
emu_close "$VF2"
hook vm2 release end <"$W/a.xml" 2>"$W/err" || fail "release: $(cat "$W/err")"
[ -s "$FM/fm-active" ] && fail "after release, still active: $(cat "$FM/fm-active")"
printf '%s\n' "create $VF1" "create $VF2" "activate 3 $VF1 $VF2" "free $VF1" "free $VF2" \
	"deactivate 3" >"$W/want"
events >"$W/got"
diff -u "$W/want" "$W/got" >"$W/diff" || fail "the order: $(cat "$W/diff")"
[ -e "$EMU_ROOT/run/vgpuctl/partitions/vm2" ] && fail "release left its note of the partition"

# ---- a failed activation: the cause, nothing made, records as they were
for err in not-running not-ready in-use out-of-sync; do
	case $err in
	not-running) rule='* not-running' why='not running' ;;
	not-ready) rule="fmActivateFabricPartitionWithVFs $err" why='not ready' ;;
	in-use) rule="fmActivateFabricPartitionWithVFs $err" why='in use' ;;
	out-of-sync) rule="fmActivateFabricPartitionWithVFs $err" why='out of sync' ;;
	esac
	echo "$rule" >"$FM/fm-fail"
	emu_clear_journal
	hook vm2 prepare begin <"$W/a.xml" 2>"$W/err"
	rc=$?
	[ $rc = 1 ] && grep -q "$why" "$W/err" && grep -q 'partition 3' "$W/err" ||
		fail "$err: prepare exit $rc: $(cat "$W/err")"
	[ "$(wc -l <"$W/err")" = 1 ] || fail "$err: one line: $(cat "$W/err")"
	for vf in $VFS; do
		[ "$(cat "$EMU_ROOT/sys/bus/pci/devices/$vf/nvidia/current_vgpu_type")" = 0 ] ||
			fail "$err: VF $vf holds a vGPU after the failed start"
	done
	[ "$(events | grep -c '^create')" = 2 ] && [ "$(events | grep -c '^free')" = 2 ] ||
		fail "$err: created and freed again: $(events)"
	[ -e "$EMU_ROOT/run/vgpuctl/prepared/vm2" ] && fail "$err: a note of what prepare made"
	[ -e "$EMU_ROOT/run/vgpuctl/partitions/vm2" ] && fail "$err: a note of a partition"
	diff -r "$W/owners.before" "$OWN" >/dev/null || fail "$err: the records changed"
	[ -s "$FM/fm-active" ] && fail "$err: active: $(cat "$FM/fm-active")"
	# libvirt calls release after a failed prepare: nothing to deactivate
	emu_clear_journal
	hook vm2 release end <"$W/a.xml" 2>"$W/err" || fail "$err: release: $(cat "$W/err")"
	[ -s "$W/err" ] && fail "$err: release said: $(cat "$W/err")"
	grep -q 'fmDeactivate' "$EMU_LOG" && fail "$err: release deactivated a partition never active"
done
: >"$FM/fm-fail"
rm -f "$FM/fm-restarted"

# ---- the VFs go in the order of the partition's GPUs, which takes NVML's module IDs: without
# NVML (and no bus ID from Fabric Manager) a partition of two GPUs is not activated in a guessed
# order; the start fails saying so, nothing made
"$B" --sysroot "$EMU_ROOT" --nvml "$W/no-nvml.so" --nvfm "$NVFM" hook vm2 prepare begin - \
	<"$W/a.xml" 2>"$W/err" && fail "without NVML: the start went through"
grep -q "module ID 1 is not known .*order of the partition's GPUs.*partition 3 of 'vm2' is not active" "$W/err" &&
	[ "$(wc -l <"$W/err")" = 1 ] || fail "without NVML: $(cat "$W/err")"
for vf in $VFS; do
	[ "$(cat "$EMU_ROOT/sys/bus/pci/devices/$vf/nvidia/current_vgpu_type")" = 0 ] ||
		fail "without NVML: VF $vf holds a vGPU"
done
[ -s "$FM/fm-active" ] && fail "without NVML: active: $(cat "$FM/fm-active")"
v hook vm2 release end - <"$W/a.xml" 2>"$W/err" || fail "without NVML: release: $(cat "$W/err")"

# ---- off vGPU mode libnvfm is not loaded: a library that is not there does not matter
sed -i 's/^FABRIC_MODE=2$/FABRIC_MODE=1/' "$CFG"
for op in "prepare begin" "started begin" "release end"; do
	# shellcheck disable=SC2086 # OP SUB
	"$B" --sysroot "$EMU_ROOT" --nvfm "$W/no-libnvfm.so" hook vm2 $op - <"$W/a.xml" 2>"$W/err" ||
		fail "mode 1, $op: $(cat "$W/err")"
done
sed -i 's/^FABRIC_MODE=1$/FABRIC_MODE=2/' "$CFG"
# ... while in vGPU mode it is: the start fails, naming it
"$B" --sysroot "$EMU_ROOT" --nvfm "$W/no-libnvfm.so" hook vm2 prepare begin - <"$W/a.xml" 2>"$W/err" &&
	fail "mode 2 without libnvfm: the start went through"
grep -q "no-libnvfm.so" "$W/err" || fail "mode 2 without libnvfm: $(cat "$W/err")"
for vf in $VFS; do
	[ "$(cat "$EMU_ROOT/sys/bus/pci/devices/$vf/nvidia/current_vgpu_type")" = 0 ] ||
		fail "mode 2 without libnvfm: VF $vf holds a vGPU"
done

emu_stop || fail "the emulator did not exit cleanly"
[ "$EMU_FAILS" = 0 ] || exit 1
echo "fabric hook: the order, failed activations and mode 1: ok"
