#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-domain vgpu_params on the kernel emulator (tests/emu):
#   - params keeps the set in the domain's metadata, validated (--raw for the
#     undocumented), and the set survives assign run again on the definition;
#   - the hook's prepare writes it whole right after it creates the vGPU, before
#     the (emulated) open, and to a vGPU that was there already;
#   - a write that fails undoes the create and fails the start with one line;
#   - the driver refuses the write while the vGPU is open (EBUSY: an assumption, tests/emu/README.md);
#   - enable_profiling is refused beside another running domain's on one GPU.
#   params.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015,SC2119 # "A && B || fail": fail when either check fails; emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
A30=$SRC/tests/data/hosts/a30-dual-mdev
L40S=$SRC/tests/data/hosts/vfio-ts-l40s
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
hook() { # DOMAIN OP SUB < stdin
	"$B" --sysroot "$EMU_ROOT" hook "$1" "$2" "$3" -
}
domain() { # NAME UUID
	cat <<EOF
<domain type='kvm'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
EOF
}
validate() { # FILE
	command -v virt-xml-validate >/dev/null || return 0
	virt-xml-validate "$1" domain >/dev/null 2>&1 || fail "$1 does not validate: $(virt-xml-validate "$1" domain 2>&1)"
}
U1=11111111-2222-4333-8444-555555555555
U2=22222222-2222-4333-8444-555555555555
M=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f
MP=sys/bus/mdev/devices/$M/nvidia/vgpu_params

# ---- mdev: the set in the metadata, validated, kept by assign run again
emu_start "$A30"
W=$EMU_DIR
domain m1 $U1 >"$W/d.xml"
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu A30-6C --mdev-uuid $M 2>"$W/err" ||
	fail "assign: $(cat "$W/err")"
v params --from "$W/a.xml" -o "$W/p.xml" --set frame_rate_limiter=0 --set disable_vnc=1 >"$W/out" 2>"$W/err" ||
	fail "params --set: $(cat "$W/err")"
grep -q '^disable_vnc  *1$' "$W/out" && grep -q '^frame_rate_limiter  *0$' "$W/out" ||
	fail "params printed: $(cat "$W/out")"
validate "$W/p.xml"
v params --from "$W/p.xml" --json >"$W/json" || fail "params --json"
grep -q '"vgpu_params":"disable_vnc=1,frame_rate_limiter=0"' "$W/json" || fail "json: $(cat "$W/json")"
v params --from "$W/p.xml" --set frame_rate_limiter=2 >/dev/null 2>"$W/err"
[ $? = 1 ] && grep -q "frame_rate_limiter takes 0 or 1, not '2'" "$W/err" || fail "a bad value: $(cat "$W/err")"
v params --from "$W/p.xml" --set loglevel=5 >/dev/null 2>"$W/err"
[ $? = 1 ] && grep -q -- "--raw" "$W/err" || fail "an undocumented key without --raw: $(cat "$W/err")"
v params --from "$W/p.xml" -o "$W/raw.xml" --raw --set loglevel=5 --set enable_uvm=1 >"$W/out" ||
	fail "params --raw"
grep -q '^loglevel  *5  *undocumented' "$W/out" && grep -q '^enable_uvm .*blocks live migration' "$W/out" ||
	fail "the notes: $(cat "$W/out")"
# a redefinition: assign run again on the definition keeps the set
v assign --from "$W/p.xml" -o "$W/p2.xml" --vgpu A30-6C 2>"$W/err" || fail "assign again: $(cat "$W/err")"
validate "$W/p2.xml"
[ "$(v params --from "$W/p2.xml" --json)" = "$(v params --from "$W/p.xml" --json)" ] ||
	fail "assign again lost the set: $(v params --from "$W/p2.xml")"
# and libvirt's: defined and dumped again by the test driver (one virsh process)
if command -v virsh >/dev/null; then
	virsh -q -c test:///default "define $W/p2.xml; dumpxml m1" >"$W/rt.xml" 2>"$W/err" ||
		fail "virsh define/dumpxml: $(cat "$W/err")"
	[ "$(v params --from "$W/rt.xml" --json)" = "$(v params --from "$W/p.xml" --json)" ] ||
		fail "libvirt's round trip lost the set: $(v params --from "$W/rt.xml")"
	cp "$W/rt.xml" "$W/p2.xml"
fi

# ---- the hook: after a reboot it creates the mdev and writes the set before the open
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$M/remove" || fail "remove by hand"
emu_clear_journal
hook m1 prepare begin <"$W/p2.xml" 2>"$W/err" || fail "prepare: $(cat "$W/err")"
[ "$(cat "$EMU_ROOT/$MP")" = "disable_vnc=1,frame_rate_limiter=0" ] ||
	fail "the file after prepare: '$(cat "$EMU_ROOT/$MP" 2>&1)'"
emu_writes | sed -n 's/^write [^ ]*\/\([a-z_]*\) .*-> \(.*\)/\1 \2/p' >"$W/order"
printf 'create 0\nvgpu_params 0\n' | diff -u - "$W/order" || fail "prepare's writes are not create, then vgpu_params"
hook m1 started begin </dev/null || fail "started"
# QEMU has it open now: the driver refuses the write
emu_open $M
echo "enable_uvm=1" >"$EMU_ROOT/$MP" 2>/dev/null && fail "a write to an open vGPU's vgpu_params went through"
emu_close $M
# a vGPU that is there gets the set at the next prepare (for its next open)
v params --from "$W/p2.xml" -o "$W/p3.xml" --clear --set enable_debugging=1 >/dev/null || fail "params --clear --set"
# vgpus: the configured set beside what the file reads (JSON only: the text listing stays)
v vgpus --json | tr -d ' \n' >"$W/vg"
grep -q '"params":"enable_debugging=1","params_file":"disable_vnc=1,frame_rate_limiter=0"' "$W/vg" ||
	fail "vgpus --json: $(cat "$W/vg")"
v vgpus | grep -q PARAMS && fail "vgpus shows a PARAMS column by default"
hook m1 prepare begin <"$W/p3.xml" 2>"$W/err" || fail "prepare, mdev there: $(cat "$W/err")"
v vgpus --json | tr -d ' \n' | grep -q '"params":"enable_debugging=1","params_file":"enable_debugging=1"' ||
	fail "vgpus --json after prepare: $(v vgpus --json)"
[ "$(cat "$EMU_ROOT/$MP")" = "enable_debugging=1" ] || fail "the set was not written to the mdev there"
# --clear keeps an empty set: a space clears the file
v params --from "$W/p3.xml" -o "$W/p4.xml" --clear >/dev/null || fail "params --clear"
hook m1 prepare begin <"$W/p4.xml" 2>"$W/err" || fail "prepare, cleared: $(cat "$W/err")"
[ ! -s "$EMU_ROOT/$MP" ] || fail "a cleared set left '$(cat "$EMU_ROOT/$MP")'"

# ---- an injected failure: the create is undone, the start fails with one line
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$M/remove" || fail "remove by hand (2)"
emu_fault 'fail write sys/*/vgpu_params EIO'
hook m1 prepare begin <"$W/p3.xml" 2>"$W/err" && fail "prepare went on after a failed vgpu_params write"
[ "$(wc -l <"$W/err")" = 1 ] || fail "not one line: $(cat "$W/err")"
grep -q "vgpu_params.*Input/output error.*the domain cannot start.*rolled back" "$W/err" ||
	fail "the reason: $(cat "$W/err")"
[ ! -e "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "the create was not undone"
emu_fault -r
emu_stop

# ---- vendor VFIO: the VF's file; profiling on two running domains of one GPU refused
emu_start "$L40S"
W=$EMU_DIR
VP=sys/bus/pci/devices/0000:c1:00.4/nvidia/vgpu_params
domain v1 $U1 >"$W/d1.xml"
domain v2 $U2 >"$W/d2.xml"
v assign --from "$W/d1.xml" -o "$W/a1.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" || fail "assign v1: $(cat "$W/err")"
v assign --from "$W/d2.xml" -o "$W/a2.xml" --vgpu L40S-8Q --vf c1:00.5 2>"$W/err" || fail "assign v2: $(cat "$W/err")"
v params --from "$W/a1.xml" -o "$W/p1.xml" --set enable_profiling=1 >/dev/null 2>"$W/err" ||
	fail "params v1: $(cat "$W/err")"
hook v1 prepare begin <"$W/p1.xml" 2>"$W/err" || fail "prepare v1: $(cat "$W/err")"
[ "$(cat "$EMU_ROOT/$VP")" = "enable_profiling=1" ] || fail "the VF's file: '$(cat "$EMU_ROOT/$VP")'"
v params --from "$W/a2.xml" -o "$W/p2.xml" --set enable_profiling=1 >/dev/null 2>"$W/err" &&
	fail "profiling on a second domain of GPU c1 was accepted"
grep -q "domain 'v1' ($U1) has profiling on GPU 0000:c1:00.0" "$W/err" || fail "the refusal: $(cat "$W/err")"
[ ! -e "$W/p2.xml" ] || fail "the refused set was written"
# the hook refuses it too, for a definition edited by hand: the start fails, nothing is written
sed 's|</vgpuctl:vgpus>|<vgpuctl:params><vgpuctl:param name="enable_profiling" value="1"/></vgpuctl:params></vgpuctl:vgpus>|' \
	"$W/a2.xml" >"$W/h2.xml"
emu_clear_journal
hook v2 prepare begin <"$W/h2.xml" 2>"$W/err" && fail "prepare of a second profiling domain went on"
grep -q "domain 'v1' ($U1) has profiling on GPU 0000:c1:00.0.*the domain cannot start" "$W/err" ||
	fail "the hook's refusal: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "the refused prepare wrote: $(emu_writes)"
# with libvirt (-c): the domain is read from the connection and redefined there
if command -v virsh >/dev/null; then
	{ echo '<node>'; sed 's/<domain type=.kvm.>/<domain type="test">/' "$W/p1.xml"; echo '</node>'; } >"$W/node.xml"
	v params v1 -c "test://$W/node.xml" --set disable_vnc=1 >"$W/out" 2>"$W/err" ||
		fail "params -c: $(cat "$W/err")"
	grep -q '^disable_vnc  *1$' "$W/out" && grep -q '^enable_profiling  *1 ' "$W/out" ||
		fail "params -c printed: $(cat "$W/out")"
fi
emu_stop

[ $EMU_FAILS = 0 ] && echo "ok: params (metadata, validation, redefinition, written before the open, failure undone, EBUSY, profiling)"
exit $((EMU_FAILS > 0))
