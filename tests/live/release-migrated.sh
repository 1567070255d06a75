#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The source's hook at `release end REASON` (#28): since libvirt 10.5 the 4th
# argument is the shut-off reason.  After a plain `virsh migrate --live` the
# source gets `release end migrated`: the domain runs elsewhere now, so its
# vGPUs here are freed and its owner records dropped, persistent ones too,
# as `vgpuctl release` does; the source's hook then takes the domain back
# (`migrate begin` writes incoming records).  `release end -` (libvirt
# before 10.5) and `release end shutdown` keep a persistent vGPU and its
# record.  A free that fails keeps the record and the vGPU.
#   release-migrated.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
U1=11111111-4444-4333-8444-555555555555
VF=0000:c1:00.4

emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
ATTR=$EMU_ROOT/sys/bus/pci/devices/$VF/nvidia/current_vgpu_type
cat >"$W/vm1.xml" <<XML
<domain type='kvm'>
  <name>vm1</name>
  <uuid>$U1</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
</domain>
XML
# records: the states of vm1's owner records ("state=active " each without a state line),
# "" when none
records() {
	local f
	grep -l "^domain_uuid=$U1\$" "$EMU_ROOT"/var/lib/vgpuctl/owners/* 2>/dev/null |
		while read -r f; do grep -h '^state=' "$f" || echo state=active; done | tr '\n' ' '
}
# hook OP SUB EXTRA: vm1's hook call as libvirt makes it; stderr in $W/err
hook() { v hook vm1 "$@" <"$W/vm1.a.xml" 2>"$W/err"; }

v assign --from "$W/vm1.xml" -o "$W/vm1.a.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" ||
	fail "assign vm1: $(cat "$W/err")"
# a start, then stops whose reason is not a migration: the persistent vGPU stays
for reason in - shutdown destroyed; do
	hook prepare begin - || fail "prepare vm1: $(cat "$W/err")"
	hook started begin - || fail "started vm1: $(cat "$W/err")"
	[ "$(cat "$ATTR")" != 0 ] || fail "prepare did not create vm1's vGPU"
	hook release end "$reason" || fail "release end $reason: $(cat "$W/err")"
	[ "$(cat "$ATTR")" != 0 ] || fail "release end $reason freed vm1's persistent vGPU"
	[ -n "$(records)" ] || fail "release end $reason dropped vm1's record"
done
# the domain migrated away, and the free fails: an error, the vGPU and the record stay
emu_fault 'fail write sys/devices/*/nvidia/current_vgpu_type EIO count=1'
hook release end migrated && fail "release end migrated: the free failed, yet exit 0"
[ -s "$W/err" ] || fail "release end migrated: a failed free, nothing said"
if [ "$(cat "$ATTR")" = 0 ] || [ -z "$(records)" ]; then
	fail "a failed free lost the vGPU ($(cat "$ATTR")) or the record ($(records))"
fi
emu_fault -r
# the domain migrated away: its vGPU here is freed and its record dropped
hook release end migrated || fail "release end migrated: $(cat "$W/err")"
[ "$(cat "$ATTR")" = 0 ] || fail "release end migrated kept vm1's vGPU (type $(cat "$ATTR"))"
[ -z "$(records)" ] || fail "release end migrated kept vm1's records: $(records)"
v vgpus | grep -q ' vm1 ' && fail "vgpus still lists vm1: $(v vgpus)"
# and the domain can come back: the source's hook takes it as incoming
v hook vm1 migrate begin - <"$W/vm1.a.xml" >"$W/out" 2>"$W/err" ||
	fail "migrate begin of vm1 back here: $(cat "$W/err")"
[ "$(records)" = "state=incoming " ] || fail "vm1 back: records '$(records)'"
emu_stop
[ "$EMU_FAILS" = 0 ] && echo "ok: release end migrated frees and forgets; other reasons keep"
exit $((EMU_FAILS > 0))
