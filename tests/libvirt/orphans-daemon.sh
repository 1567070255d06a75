#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpus --orphans and release --orphans through a real libvirt daemon: libvirtd runs privately
# in a mount namespace (tmpfs over its config, run, state and log directories; as
# hook-daemon.sh, live-and-hooks.md 2.4) over the kernel emulator, and vgpuctl reads its
# domains through libvirt's remote driver (RPC on the daemon's socket).  The daemon loads no
# driver module (LIBVIRT_DRIVER_DIR empty), so it serves the built-in test driver and starts in
# a fraction of a second: the QEMU driver's capability probe took 9 s.  A domain defined there,
# of no manager of ours, names a VF that holds a vGPU no record claims: it is foreign and
# left; the VF nobody names is an orphan and freed.
#   orphans-daemon.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator; root)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
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
fail() { emu_fail "$@"; }
emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
daemon=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	_emu_exit
}
trap cleanup EXIT
for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
	mount -t tmpfs tmpfs "$d" || exit 1
done
: >/etc/libvirt/libvirtd.conf
mkdir "$W/no-drivers"
# its own pid file: /run itself is shared with the host (and any other libvirtd)
LIBVIRT_DRIVER_DIR=$W/no-drivers libvirtd --timeout 60 --pid-file "$W/libvirtd.pid" >"$W/libvirtd.log" 2>&1 &
daemon=$!
# the daemon's test driver reads its node from a file at each connection (test:///default
# would forget a domain defined once the defining connection closed)
U="test+unix://$W/node.xml?socket=/run/libvirt/libvirt-sock"
cat >"$W/node.xml" <<EOF2
<node><domain type='test'><name>other</name><uuid>77777777-2222-4333-8444-555555555555</uuid>
<memory unit='MiB'>64</memory><vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>
<devices><hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000' bus='0x41' slot='0x00' function='0x6'/></source></hostdev>
</devices></domain></node>
EOF2
for ((i = 0; i < 100; i++)); do
	virsh -q -c "$U" version >/dev/null 2>&1 && break
	sleep 0.05
done
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
