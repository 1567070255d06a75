#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hook driven by a real libvirt daemon: libvirtd runs privately in a
# mount namespace (tmpfs over its config, run, state and log directories,
# the hook installed before it starts; live-and-hooks.md 2.4), over the
# kernel emulator.  A --per-start domain starts and stops (prepare creates,
# release frees); a start that fails after prepare frees exactly what
# prepare made; a prepare refused because the VF holds another vGPU fails
# the start with our message; a daemon restart (reconnect) changes nothing;
# 16 domains started at once after a reboot all run, each with its vGPU.
#   hook-daemon.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator; root)
# shellcheck disable=SC2015,SC2119 # "A && B || fail"; emu_writes takes no arguments here
set -uo pipefail
[ "$(id -u)" = 0 ] && command -v libvirtd >/dev/null && command -v unshare >/dev/null || {
	echo "needs root, libvirtd and unshare: skipped"
	exit 77
}
if [ -z "${VGPU_IN_NS:-}" ]; then
	# the mounts below must not leak into the host: a private mount namespace
	for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
		mkdir -p "$d" # an empty mount point where the host has none
	done
	VGPU_IN_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
B=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_available || {
	echo "no usable /dev/fuse: skipped"
	exit 77
}
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
daemon=
cleanup() {
	for d in $(virsh -q -c qemu:///system list --name 2>/dev/null); do
		virsh -q -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	_emu_exit
}
trap cleanup EXIT

for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
	mount -t tmpfs tmpfs "$d" || exit 1
done
printf 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n' >/etc/libvirt/qemu.conf
: >/etc/libvirt/libvirtd.conf
mkdir -p /etc/libvirt/hooks/qemu.d
# no custom environment reaches a hook: the file names the build and the sysroot
printf '#!/bin/sh\nexec %s --sysroot %s hook "$@"\n' "$B" "$EMU_ROOT" \
	>/etc/libvirt/hooks/qemu.d/50-vgpuctl
chmod +x /etc/libvirt/hooks/qemu.d/50-vgpuctl
start_daemon() {
	# its own pid file: /run itself is shared with the host (and any other libvirtd)
	libvirtd --timeout 300 --pid-file "$W/libvirtd.pid" >"$W/libvirtd.log" 2>&1 &
	daemon=$!
	for ((i = 0; i < 300; i++)); do
		virsh -q -c qemu:///system version >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "libvirtd did not answer: $(tail -3 "$W/libvirtd.log")"
	exit 1
}
start_daemon
V() { virsh -q -c qemu:///system "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
state() { v vgpus | awk -v d="$1" '$0 ~ " " d " " {print $NF}'; }
domain() { # NAME UUID: a guest that starts without KVM, disk or display
	cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
  </os>
  <devices>
    <video><model type='none'/></video>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}
nohostdev() { sed '/<hostdev/,/<\/hostdev>/d' "$1"; }

# ---- --per-start: prepare creates, release frees (the domain has our metadata,
# not the hostdev: libvirt 9 cannot start a vendor-VFIO hostdev anyway)
domain p1 66666666-2222-4333-8444-555555555551 >"$W/p1.xml"
v assign --from "$W/p1.xml" -o "$W/p1.out" --vgpu L40S-8Q --vf c1:00.4 --per-start --no-pin ||
	fail "assign p1"
nohostdev "$W/p1.out" >"$W/p1.def"
V define "$W/p1.def" >/dev/null || fail "define p1"
if V start p1 >"$W/start.log" 2>&1; then
	[ "$(state p1)" = active ] || fail "p1 runs but its vGPU is $(state p1)"
	# ---- a daemon restart: reconnect must exit 0 and change nothing
	kill "$daemon" && wait "$daemon"
	start_daemon
	[ "$(V domstate p1)" = running ] || fail "p1 did not survive a daemon restart"
	[ "$(state p1)" = active ] || fail "reconnect changed p1's vGPU: $(state p1)"
	V destroy p1 >/dev/null || fail "destroy p1"
else
	# QEMU cannot run in this sandbox: prepare and release still ran
	grep -q "vgpuctl" "$W/start.log" && fail "our hook refused p1: $(cat "$W/start.log")"
	echo "note: QEMU did not start here ($(tail -1 "$W/start.log")); prepare/release checked only"
fi
[ "$(state p1)" = reserved ] || fail "after p1 stopped its vGPU is $(state p1), not reserved"

# ---- a start that fails after prepare (libvirt 9 refuses the VF): release undoes prepare
domain p2 66666666-2222-4333-8444-555555555552 >"$W/p2.xml"
v assign --from "$W/p2.xml" -o "$W/p2.out" --vgpu L40S-8Q --vf c1:00.5 --no-pin || fail "assign p2"
V define "$W/p2.out" >/dev/null || fail "define p2"
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type" # a reboot
emu_clear_journal
V start p2 >"$W/start.log" 2>&1 && fail "p2 started with a vendor-VFIO hostdev on libvirt 9"
[ "$(state p2)" = missing ] || fail "after p2's failed start its vGPU is $(state p2)"
[ "$(emu_writes | grep -c current_vgpu_type)" = 2 ] ||
	fail "prepare/release did not create then free: $(emu_writes)"

# ---- prepare refused: the VF holds a vGPU nobody recorded; our line reaches virsh
domain p3 66666666-2222-4333-8444-555555555553 >"$W/p3.xml"
v assign --from "$W/p3.xml" -o "$W/p3.out" --vgpu L40S-8Q --vf c1:00.6 --per-start --no-pin ||
	fail "assign p3"
nohostdev "$W/p3.out" >"$W/p3.def"
V define "$W/p3.def" >/dev/null || fail "define p3"
echo 1158 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.6/nvidia/current_vgpu_type"
V start p3 >"$W/start.log" 2>&1 && fail "p3 started on a VF that holds another vGPU"
grep -q "already holds vGPU type 1158; the domain cannot start" "$W/start.log" ||
	fail "virsh start did not show our message: $(cat "$W/start.log")"
[ "$(cat "$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.6/nvidia/current_vgpu_type")" = 1158 ] ||
	fail "the release after the refusal touched the other vGPU"

# ---- apply with start-domains after a reboot: the domain's hook re-creates its vGPU
# while apply starts it (apply holds no lock across the start: the hook takes it)
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.6/nvidia/current_vgpu_type" # p3's intruder goes
domain p4 66666666-2222-4333-8444-555555555554 >"$W/p4.xml"
v assign --from "$W/p4.xml" -o "$W/p4.out" --vgpu L40S-8Q --vf c1:00.7 --no-pin || fail "assign p4"
nohostdev "$W/p4.out" >"$W/p4.def"
V define "$W/p4.def" >/dev/null || fail "define p4"
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.7/nvidia/current_vgpu_type" # a reboot
cat >"$W/boot.yaml" <<'Y'
version: v1
vgpu-configs:
  boot:
    - devices: ["0000:c1:00.0"]
      vgpu-devices: {}
start-domains:
  boot: [p4]
Y
s=$(date +%s)
v apply -c qemu:///system -f "$W/boot.yaml" --config boot --nvidia-smi /bin/false \
	--sriov-manage /bin/false >"$W/apply.out" 2>"$W/apply.err"
rc=$?
grep -q "holds the host lock" "$W/apply.err" &&
	fail "apply's own lock failed its domain's start: $(cat "$W/apply.err")"
[ $(($(date +%s) - s)) -lt 10 ] || fail "apply with start-domains took $(($(date +%s) - s)) s"
if [ $rc = 0 ]; then
	[ "$(V domstate p4)" = running ] || fail "apply reported p4 started, it is $(V domstate p4)"
	[ "$(state p4)" = active ] || fail "p4 started without its vGPU: $(state p4)"
	V destroy p4 >/dev/null
else
	# QEMU cannot run in this sandbox: the hook's prepare still re-created the vGPU
	echo "note: QEMU did not start p4 here ($(tail -1 "$W/apply.err"))"
fi

# ---- 16 domains started at once after a reboot, through the daemon: every
# prepare re-creates its domain's vGPU (the driver takes 0.3 s per create; the
# creates queue on per-GPU locks), all 16 run, each with exactly its own vGPU
for d in p1 p2 p3 p4; do
	V domstate "$d" 2>/dev/null | grep -q running && V destroy "$d" >/dev/null
	v -c qemu:///system release "$d" >/dev/null 2>&1
	V undefine "$d" >/dev/null 2>&1
done
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:00.5/nvidia/current_vgpu_type" # the foreign vGPU goes
n=0
for i in $(seq 10 25); do
	domain "q$i" "$(printf '88888888-2222-4333-8444-5555555555%02d' "$i")" >"$W/q$i.xml"
	v assign --from "$W/q$i.xml" -o "$W/q$i.out" --vgpu L40S-4Q --no-pin 2>"$W/err" ||
		fail "assign q$i: $(cat "$W/err")"
	nohostdev "$W/q$i.out" >"$W/q$i.def"
	V define "$W/q$i.def" >/dev/null && n=$((n + 1))
done
[ $n = 16 ] || fail "only $n of 16 domains defined"
for f in "$EMU_ROOT"/sys/bus/pci/devices/0000:*/nvidia/current_vgpu_type; do
	[ "$(cat "$f")" = 0 ] || echo 0 >"$f" # the reboot: no vGPU left, the records stay
done
[ "$(v vgpus | grep -c ' missing$')" = 16 ] || fail "not 16 missing after the reboot: $(v vgpus)"
emu_fault "delay sys/*/current_vgpu_type 300"
starts=()
for i in $(seq 10 25); do
	(
		s=$(date +%s%N)
		timeout 60 virsh -q -c qemu:///system start "q$i" >"$W/start$i.log" 2>&1
		echo "$? $((($(date +%s%N) - s) / 1000000))" >"$W/start$i.rc"
	) &
	starts+=($!)
done
for p in "${starts[@]}"; do wait "$p"; done # not the daemon, also our child
emu_fault -r
failed=0 slowest=0 running=0
for i in $(seq 10 25); do
	read -r rc ms <"$W/start$i.rc"
	[ "$rc" = 0 ] || { failed=$((failed + 1)); echo "q$i: $(cat "$W/start$i.log")" >&2; }
	[ "$ms" -gt "$slowest" ] && slowest=$ms
	[ "$(V domstate "q$i")" = running ] && running=$((running + 1))
	[ "$(state "q$i")" = active ] || fail "q$i's vGPU is $(state "q$i") after its start"
done
echo "16 domains started at once after a reboot: $failed failed, $running running, the slowest start took $slowest ms"
[ $failed = 0 ] && [ $running = 16 ] || fail "$failed of 16 parallel starts failed, $running running"
[ "$(v vgpus | grep -c ' active$')" = 16 ] || fail "not 16 active vGPUs: $(v vgpus)"
# each VF holds exactly one vGPU of its domain's type, and no VF two domains'
[ "$(v vgpus --json | python3 -c 'import json,sys
r = json.load(sys.stdin)["vgpus"]
print(len({x["vf"] for x in r if x["state"] == "active"}))')" = 16 ] || fail "two domains share a VF"
# the 16 QEMUs stop side by side (one after another took 2 s each, 32 s in all)
stops=()
for i in $(seq 10 25); do
	V destroy "q$i" >/dev/null 2>&1 &
	stops+=($!)
done
wait "${stops[@]}"

[ "$fails" = 0 ] || exit 1
echo "hook-daemon: all passed"
