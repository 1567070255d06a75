#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Remote libvirt: a second private libvirtd, in its own mount and UTS
# namespaces (host name hv-remote), answers on a UNIX socket of its own, so
# qemu+unix:///system?socket=... goes through libvirt's remote driver as
# qemu+ssh:// and qemu+tls:// do.  vgpuctl's sysfs work stays local: on a
# host tree that names itself hv-remote (the emulated host that libvirt
# runs on), assign, xml and release work through the remote URI; on a tree
# that names another host, every command that plans with sysfs is refused
# before any change, naming both hosts, and so is apply with start-domains.
#   remote.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator; root)
# shellcheck disable=SC2119 # emu_writes takes no arguments here
set -uo pipefail
if [ "$(id -u)" != 0 ] || ! command -v libvirtd >/dev/null || ! command -v unshare >/dev/null; then
	echo "needs root, libvirtd and unshare: skipped"
	exit 77
fi
if [ -z "${VGPU_IN_NS:-}" ]; then
	for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
		mkdir -p "$d"
	done
	VGPU_IN_NS=1 exec unshare -m -u --propagation private "$0" "$@"
fi
B=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
hostname hv-remote
emu_start "$SRC/tests/data/hosts/a30-dual-mdev"
THERE=$EMU_ROOT THERE_DIR=$EMU_DIR
mkdir -p "$EMU_BACKING/proc/sys/kernel" && echo hv-remote >"$EMU_BACKING/proc/sys/kernel/hostname"
emu_start "$SRC/tests/data/hosts/a30-dual-mdev"
HERE=$EMU_ROOT
mkdir -p "$EMU_BACKING/proc/sys/kernel" && echo hv-local >"$EMU_BACKING/proc/sys/kernel/hostname"
W=$THERE_DIR
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	_emu_exit
}
trap cleanup EXIT
for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
	mount -t tmpfs tmpfs "$d" || exit 1
done
mkdir -p "$W/sock"
printf 'user = "root"\ngroup = "root"\n' >/etc/libvirt/qemu.conf
printf 'unix_sock_dir = "%s"\n' "$W/sock" >/etc/libvirt/libvirtd.conf
URI="qemu+unix:///system?socket=$W/sock/libvirt-sock"
libvirtd --timeout 300 --pid-file "$W/libvirtd.pid" >"$W/libvirtd.log" 2>&1 &
daemon=$!
for ((i = 0; i < 300; i++)); do
	virsh -q -c "$URI" version >/dev/null 2>&1 && break
	sleep 0.2
done
[ "$(virsh -q -c "$URI" hostname 2>&1)" = hv-remote ] ||
	{ fail "the remote libvirtd does not answer as hv-remote: $(tail -3 "$W/libvirtd.log")"; exit 1; }
V() { virsh -q -c "$URI" "$@"; }
cat >"$W/vm1.xml" <<'XML'
<domain type='kvm'>
  <name>vm1</name>
  <uuid>77777777-2222-4333-8444-555555555551</uuid>
  <memory unit='MiB'>2048</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices><memballoon model='none'/></devices>
</domain>
XML
V define "$W/vm1.xml" >/dev/null || fail "define vm1 on the remote libvirtd"

# ---- the tree of the host libvirt runs on: the remote URI is only libvirt's part
RC=0
"$B" --sysroot "$THERE" -c "$URI" assign vm1 --vgpu A30-6C >"$W/out" 2>&1 || RC=$?
[ $RC = 0 ] || fail "assign through $URI: exit $RC: $(cat "$W/out")"
V dumpxml vm1 | grep -q "<hostdev" || fail "assign did not define vm1's hostdev on the remote libvirtd"
held=$("$B" --sysroot "$THERE" vgpus | awk '$0 ~ / vm1 / {print $2}')
[ -n "$held" ] || fail "vgpus does not list vm1's vGPU"
# xml plans beside the remote domain: vm1's VF is taken
"$B" --sysroot "$THERE" -c "$URI" xml --name vm2 --vgpu A30-6C --vcpus 2 --memory 2G \
	>"$W/vm2.xml" 2>"$W/err" || fail "xml through $URI: $(cat "$W/err")"
if [ -n "$held" ]; then
	bus=${held#0000:} && bus=${bus%%:*}
	slot=${held##*:} && slot=${slot%.*}
	fn=${held##*.}
	grep -q "bus='0x$bus' slot='0x$slot' function='0x$fn'" "$W/vm2.xml" &&
		fail "xml through $URI chose vm1's VF $held"
fi
"$B" --sysroot "$THERE" -c "$URI" release vm1 >"$W/out" 2>&1 || fail "release through $URI: $(cat "$W/out")"
V dumpxml vm1 | grep -q "<hostdev" && fail "release left vm1's hostdev on the remote libvirtd"

# ---- a tree of another host: refused before anything changes, both hosts named
V dumpxml vm1 >"$W/vm1.before"
emu_clear_journal
want="is libvirt on host 'hv-remote', but the VFs, vGPUs and CPUs vgpuctl plans with are read from this host's sysfs ('hv-local')"
for cmd in "assign vm1 --vgpu A30-6C" "release vm1" "xml --name vm3 --vgpu A30-6C --vcpus 2 --memory 2G"; do
	RC=0
	# shellcheck disable=SC2086 # the command's words
	"$B" --sysroot "$HERE" -c "$URI" $cmd >"$W/out" 2>&1 || RC=$?
	[ $RC = 1 ] || fail "$cmd with another host's URI: exit $RC, want 1"
	grep -qF "$want" "$W/out" || fail "$cmd with another host's URI: $(cat "$W/out")"
done
cat >"$W/host.yaml" <<'YAML'
version: v1
vgpu-configs:
  l40s:
    - devices: ["0000:3b:00.0"]
      vgpu-devices: {"A30-6C": 1}
start-domains:
  l40s: [vm1]
YAML
RC=0
"$B" --sysroot "$HERE" -c "$URI" apply -f "$W/host.yaml" --config l40s --nvidia-smi /bin/false \
	--sriov-manage /bin/false >"$W/out" 2>&1 || RC=$?
if [ $RC != 1 ] || ! grep -qF "$want" "$W/out"; then
	fail "apply with another host's start-domains URI: exit $RC: $(cat "$W/out")"
fi
[ -z "$(emu_writes)" ] || fail "refused commands wrote to the host: $(emu_writes)"
V dumpxml vm1 | cmp -s - "$W/vm1.before" || fail "refused commands changed vm1 on the remote libvirtd"
[ $EMU_FAILS = 0 ] && echo "ok: remote libvirt through qemu+unix; another host's URI refused before any change"
[ $EMU_FAILS = 0 ]
