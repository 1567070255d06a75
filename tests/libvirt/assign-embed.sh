#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# assign / release through libvirt (-c URI) on the embedded QEMU driver,
# over the kernel emulator: another process then sees the hostdev, the pins
# and the metadata, and after release sees them gone; a vendor-VFIO vGPU is
# refused on libvirt < 10.0 before anything changes.
#   assign-embed.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015,SC2119 # "A && B || fail"; emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
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
domain() { # NAME UUID
	cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='MiB'>256</memory>
  <vcpu>2</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
  </os>
  <devices>
    <console type='pty'/>
  </devices>
</domain>
EOF
}

emu_start "$SRC/tests/data/hosts/a30-dual-mdev"
W=$EMU_DIR
# a short root: QEMU's monitor socket lives below it (108-byte limit)
R=$(mktemp -d /tmp/ve.XXXXXX)
trap '_emu_exit; rm -rf "$R"' EXIT
mkdir -p "$R/etc"
printf 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n' >"$R/etc/qemu.conf"
U="qemu:///embed?root=$R"
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
domain e1 11111111-2222-4333-8444-555555555551 >"$W/e1.xml"
virsh -q -c "$U" define "$W/e1.xml" >/dev/null || fail "define e1"

v assign -c "$U" e1 --vgpu A30-6C 2>"$W/err" || fail "assign -c: $(cat "$W/err")"
virsh -q -c "$U" dumpxml --inactive e1 >"$W/back.xml" || fail "dumpxml"
M=$(sed -n "s/.*<address uuid='\([^']*\)'.*/\1/p" "$W/back.xml")
[ -n "$M" ] && [ -d "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "no mdev behind the hostdev ($M)"
grep -q "<vcpupin vcpu='1'" "$W/back.xml" || fail "no vCPU pins in the definition"
grep -q 'vgpu profile="A30-6C"' "$W/back.xml" || fail "no metadata in the definition"
virt-xml-validate "$W/back.xml" domain >/dev/null 2>&1 || fail "the definition does not validate"
v vgpus | grep -q "$M e1 .*active" || fail "vgpus: $(v vgpus)"

v release -c "$U" e1 2>"$W/err" || fail "release -c: $(cat "$W/err")"
virsh -q -c "$U" dumpxml --inactive e1 >"$W/back2.xml" || fail "dumpxml after release"
! grep -q "hostdev\|vgpuctl\|vcpupin" "$W/back2.xml" || fail "release left our parts in e1"
[ ! -e "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "release left mdev $M"
emu_stop

# vendor VFIO on libvirt 9.0 (Debian 12): refused before any change
if virsh -c "$U" version 2>/dev/null | grep -q "libvirt 9\.\|library: libvirt 9"; then
	emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
	W=$EMU_DIR
	domain e2 11111111-2222-4333-8444-555555555552 >"$W/e2.xml"
	virsh -q -c "$U" define "$W/e2.xml" >/dev/null || fail "define e2"
	emu_clear_journal
	v assign -c "$U" e2 --vgpu L40S-8Q 2>"$W/err" && fail "vendor VFIO accepted on libvirt 9"
	grep -q "needs libvirt 10.0" "$W/err" || fail "vendor VFIO message: $(cat "$W/err")"
	[ -z "$(emu_writes)" ] || fail "the refused assign wrote: $(emu_writes)"
	[ -z "$(find "$EMU_ROOT/var/lib/vgpuctl/owners" -type f 2>/dev/null)" ] ||
		fail "the refused assign left a record"
	virsh -q -c "$U" dumpxml --inactive e2 | grep -q hostdev && fail "e2 changed"
	emu_stop
fi
[ "$fails" = 0 ] || exit 1
echo "assign-embed: all passed"
