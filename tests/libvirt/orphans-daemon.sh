#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpus --orphans and release --orphans through a real libvirt daemon: a private libvirtd
# serving the test driver (daemon-lib.sh) over the kernel emulator, and vgpuctl reads its
# domains through libvirt's remote driver (RPC on the daemon's socket).  A domain defined there,
# of no manager of ours, names a VF that holds a vGPU no record claims: it is foreign and
# left; the VF nobody names is an orphan and freed.
#   orphans-daemon.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator; root)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
# shellcheck source=tests/libvirt/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"
daemon_require "$0" "$@"
B=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_available || {
	echo "no usable /dev/fuse: skipped"
	exit 77
}
fail() { emu_fail "$@"; }
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	daemon_stop
	_emu_exit
}
trap cleanup EXIT
daemon_start "$W" || fail "libvirtd did not answer: $(tail -3 "$W/libvirtd.log")"
# the daemon's test driver reads its node from a file at each connection (test:///default
# would forget a domain defined once the defining connection closed)
U="test+unix://$W/node.xml?socket=$DAEMON_SOCK"
cat >"$W/node.xml" <<EOF2
<node><domain type='test'><name>other</name><uuid>77777777-2222-4333-8444-555555555555</uuid>
<memory unit='MiB'>64</memory><vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>
<devices><hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000' bus='0x41' slot='0x00' function='0x6'/></source></hostdev>
</devices></domain></node>
EOF2
V() { virsh -q -c "$U" "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" -c "$U" "$@"; }

# 41:00.5 holds an L40S-4Q no record claims (the fixture); so does 41:00.6, which the daemon's
# domain (another manager's; the test driver runs it, with no process of its own) names
echo 1149 >"$EMU_ROOT/sys/bus/pci/devices/0000:41:00.6/nvidia/current_vgpu_type" || fail "type on 41:00.6"
[ "$(V list --all --name)" = other ] || fail "the daemon's domains: $(V list --all 2>&1; tail -3 "$W/libvirtd.log")"
v vgpus --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "vgpus --orphans: $(cat "$W/err")"
grep -q '^0000:41:00.0 0000:41:00.6  *foreign  *none  *other ' "$W/o" &&
	grep -q '^0000:41:00.0 0000:41:00.5  *orphan  *none  *none ' "$W/o" || fail "classes: $(cat "$W/o" "$W/err")"
v release --orphans --grace 0 >"$W/o" 2>"$W/err" && grep -q '^freed 1 vGPU$' "$W/o" || fail "release: $(cat "$W/o" "$W/err")"
ty() { cat "$EMU_ROOT/sys/bus/pci/devices/$1/nvidia/current_vgpu_type"; }
[ "$(ty 0000:41:00.5)" = 0 ] && [ "$(ty 0000:41:00.6)" = 1149 ] || fail "freed the foreign VF or not the orphan"
[ "$EMU_FAILS" = 0 ] && echo "ok: orphans-daemon (a private libvirtd's domain names a VF: foreign, left)"
exit $((EMU_FAILS > 0))
