#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Domains from vgpuctl define on the embedded QEMU driver
# (qemu:///embed?root=DIR, persisted on disk, no daemon) in one process and
# read back in another with hostdev, pinning and metadata intact; then -c
# URI makes the next VM avoid the CPUs those domains pinned.
#   embed.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
uri="qemu:///embed?root=$tmp/root"
# The embedded driver reads ROOT/etc/qemu.conf. As root, guests run as root:
# libvirt then checks /dev/kvm as the user that probed QEMU, so the cached
# capabilities stay valid (no re-probe on every call, which cost minutes when
# libvirt-qemu could not open /dev/kvm), and no system account needs new rights.
# stdio_handler "file": there is no virtlogd.
mkdir -p "$tmp/root/etc"
cat >"$tmp/root/etc/qemu.conf" <<'EOF'
user = "root"
group = "root"
stdio_handler = "file"
EOF
virt=qemu
[ -w /dev/kvm ] && virt=kvm
fail=0
U1=7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e01
U2=7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e02
M1=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f

define() { # NAME FILE
	virt-xml-validate "$2" domain >/dev/null 2>&1 || { echo "FAIL: $2 does not validate"; fail=1; }
	if ! virsh -q -c "$uri" define "$2" >"$tmp/define.log" 2>&1; then
		echo "FAIL: define $1 on $uri:"
		cat "$tmp/define.log"
		fail=1
	fi
}

h=tests/data/hosts
tpl=$PWD/templates/domain.xml # never the installed or built-in default
"$bin" --sysroot $h/a30-dual-mdev xml --template "$tpl" --name vm1 --vgpu A30-6C --vcpus 12 --memory 4G --uuid $U1 \
	--mdev-uuid $M1 --virt-type $virt >"$tmp/vm1.xml" || fail=1
define vm1 "$tmp/vm1.xml"
"$bin" --sysroot $h/vfio-mig-h100 xml --template "$tpl" --name h1 --vgpu H100-2-20C --vcpus 4 --memory 4G --uuid $U2 \
	--virt-type $virt >"$tmp/h1.xml" || fail=1
define h1 "$tmp/h1.xml"

# a second process reads them back from disk
virsh -q -c "$uri" dumpxml --inactive vm1 >"$tmp/vm1.back" 2>&1 || { echo "FAIL: dumpxml vm1"; cat "$tmp/vm1.back"; fail=1; }
virsh -q -c "$uri" dumpxml --inactive h1 >"$tmp/h1.back" 2>&1 || { echo "FAIL: dumpxml h1"; cat "$tmp/h1.back"; fail=1; }
need() { # FILE PATTERN
	grep -Fq -- "$2" "$1" || { echo "FAIL: $1 lacks: $2"; fail=1; }
}
need "$tmp/vm1.back" "<address uuid='$M1'/>"
need "$tmp/vm1.back" "type='mdev' managed='no' model='vfio-pci' display='off'"
need "$tmp/vm1.back" "<vcpupin vcpu='1' cpuset='48'/>"
need "$tmp/vm1.back" "<emulatorpin cpuset='0-5,48-53'/>"
need "$tmp/vm1.back" "<memory mode='strict' nodeset='0'/>"
need "$tmp/vm1.back" "<topology sockets='1' dies='1' cores='6' threads='2'/>"
need "$tmp/vm1.back" 'vgpu profile="A30-6C" type-id="684" interface="mdev"'
need "$tmp/h1.back" "<hostdev mode='subsystem' type='pci' managed='no'>"
need "$tmp/h1.back" "<address domain='0x0000' bus='0xca' slot='0x00' function='0x5'/>"
need "$tmp/h1.back" 'gi-profile="2g.20gb"'
virsh -q -c "$uri" metadata vm1 urn:vgpuctl:domain:1 --config >"$tmp/md" 2>&1
need "$tmp/md" 'vf="0000:3b:00.4"'

# -c URI: CPUs pinned by defined domains are never reused
"$bin" --sysroot $h/a30-dual-mdev --json plan -c "$uri" --name vm2 --vgpu A30-6C --vcpus 12 \
	--memory 4G >"$tmp/plan.json" 2>&1 || { echo "FAIL: plan -c"; cat "$tmp/plan.json"; fail=1; }
need "$tmp/plan.json" '"cpus": "6-11,54-59"'
# re-planning vm1 itself does not count its own pins, but h1's (CPUs 0,1,16,17,
# pinned on the H100 host) take cores {0,48} {1,49} {16,64} {17,65} here
"$bin" --sysroot $h/a30-dual-mdev --json plan -c "$uri" --name vm1 --vgpu A30-6C --vcpus 12 \
	--memory 4G >"$tmp/plan.json" 2>&1
need "$tmp/plan.json" '"cpus": "2-7,50-55"'
# definitions libvirt's own tests hold, made from templates (defined, then undefined: they
# pin nothing the checks above and below count): a DIMM needs the template's <maxMemory>
# (the QEMU driver checks it, the test driver does not); SMBIOS names the new <uuid>
for t in memory-devices smbios; do
	"$bin" --sysroot $h/a30-dual-mdev xml --template "tests/data/templates/$t.xml" --name "$t" \
		--vgpu A30-6C --vcpus 2 --memory 2G --virt-type $virt >"$tmp/$t.xml" || fail=1
	define "$t" "$tmp/$t.xml"
	virsh -q -c "$uri" undefine "$t" >/dev/null 2>&1
done
# -c URI: a VF another defined domain's hostdev names (h1's 0000:ca:00.5) is taken, even
# though no vGPU is on it on this host
"$bin" --sysroot $h/vfio-mig-h100 plan --name x --vgpu H100-2-20C --vcpus 2 --memory 1G \
	>"$tmp/plan.txt" 2>&1
need "$tmp/plan.txt" "on VF 0000:ca:00.5 "
"$bin" --sysroot $h/vfio-mig-h100 plan -c "$uri" --name x --vgpu H100-2-20C --vcpus 2 --memory 1G \
	>"$tmp/plan.txt" 2>&1 || { echo "FAIL: plan -c on the H100"; cat "$tmp/plan.txt"; fail=1; }
if grep -q "on VF 0000:ca:00.5 " "$tmp/plan.txt"; then
	echo "FAIL: plan -c chose the VF h1's hostdev names:"
	cat "$tmp/plan.txt"
	fail=1
fi
"$bin" --sysroot $h/a30-dual-mdev plan -c "test:///nonexistent-driver-xyz" --name x --vgpu A30-6C \
	--vcpus 2 --memory 1G >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc != 1 ] || ! grep -q "^vgpuctl: cannot connect to 'test:///nonexistent-driver-xyz'" "$tmp/err"; then
	echo "FAIL: bad URI:"
	cat "$tmp/err"
	fail=1
fi
# migrate-check -c: the QEMU driver reports the installed QEMU's version (the test
# driver's is its own); engine fails on the end below QEMU 8.1
"$bin" --sysroot $h/a30-dual-mdev -c "$uri" migrate-check vm1 --to x >"$tmp/mc" 2>&1
qv=$(qemu-system-x86_64 --version | sed -n '1s/^QEMU emulator version \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p')
need "$tmp/mc" "engine libvirt, QEMU, kernel: libvirt $(virsh -c "$uri" version | sed -n 's/^Using library: libvirt //p'), QEMU $qv,"
if [ "$(printf '%s\n' "$qv" 8.1.0 | sort -V | head -1)" != 8.1.0 ]; then
	need "$tmp/mc" "FAIL engine "
	need "$tmp/mc" "upgrade the source to at least QEMU 8.1.0"
fi
exit $fail
