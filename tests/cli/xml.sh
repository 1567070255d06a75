#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl xml / plan: golden domain XML per fixture host and case (byte for
# byte, stderr included), virt-xml-validate on every XML, the A30 article's
# four-VM pinning layout, and one-line errors.
#   xml.sh VGPUCTL SRCDIR       (VGPU_TEST_REGENERATE=1 rewrites the goldens)
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/xml
hosts=tests/data/hosts
tpl=templates/domain.xml # explicit: the binary has no source-tree fallback (the build tree's copy: below)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$exp"
U=7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f
M1=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f
M2=5d6e7f80-9a1b-4c2d-8e3f-405162738495

golden() { # CASE HOST ARGS...
	local name=$1 host=$2
	shift 2
	"$bin" --sysroot "$hosts/$host" xml "$@" >"$tmp/$name.xml" 2>"$tmp/$name.err"
	echo "exit $?" >>"$tmp/$name.err"
	for ext in xml err; do
		golden_cmp "$tmp/$name.$ext" "$exp/$name.$ext" "vgpuctl --sysroot $hosts/$host xml $*"
	done
	if ! virt-xml-validate "$tmp/$name.xml" domain >"$tmp/v" 2>&1; then
		echo "FAIL: $name: virt-xml-validate:"
		cat "$tmp/v"
		fail=1
	fi
}

golden a30-mdev a30-dual-mdev --template $tpl --name vm1 --vgpu A30-6C --vcpus 12 --memory 32G --uuid $U --mdev-uuid $M1
# a binary run from its build tree finds the build tree's copy of the template
# (meson.build): the README's examples work after ninja -C build
"$bin" --sysroot "$hosts/a30-dual-mdev" xml --name vm1 --vgpu A30-6C --vcpus 12 --memory 32G --uuid $U \
	--mdev-uuid $M1 >"$tmp/notpl.xml" 2>"$tmp/notpl.err"
if ! cmp -s "$tmp/notpl.xml" "$exp/a30-mdev.xml"; then
	echo "FAIL: xml without --template from the build tree: $(cat "$tmp/notpl.err")"
	fail=1
fi
golden a30-mig-hugepages a30-dual-mdev --template $tpl --name mig1 --vgpu "NVIDIA A30-2-12C" --vcpus 8 --memory 16G \
	--uuid $U --mdev-uuid $M1 --hugepages
golden a30-exclusions a30-dual-mdev --template $tpl --name vm2 --vgpu nvidia-684 --vcpus 12 --memory 32G --uuid $U \
	--mdev-uuid $M1 --exclude-cpus 0-5,48-53 --emulator-cpus 23,71
golden a30-odd-vcpus a30-dual-mdev --template $tpl --name odd --vgpu A30-4C --vcpus 3 --memory 4G --uuid $U --mdev-uuid $M1
golden a30-template a30-dual-mdev --name tpl --vgpu A30-6C --vcpus 2 --memory 2G --uuid $U --mdev-uuid $M1 \
	--template tests/data/templates/minimal.xml
# a template's memory devices keep its <maxMemory> (libvirt refuses them without),
# which must then hold the memory; its SMBIOS system UUID follows the new <uuid>
golden a30-template-dimm a30-dual-mdev --name dimm --vgpu A30-6C --vcpus 2 --memory 2G --uuid $U \
	--mdev-uuid $M1 --template tests/data/templates/memory-devices.xml
"$bin" --sysroot $hosts/a30-dual-mdev xml --template tests/data/templates/memory-devices.xml --name dimm \
	--vgpu A30-6C --vcpus 2 --memory 9G >/dev/null 2>"$tmp/err" && echo "exit 0" >>"$tmp/err"
if ! grep -qx "vgpuctl: the template's <maxMemory> (8388608 KiB) is less than the memory (9437184 KiB): raise it, or remove the template's memory devices" "$tmp/err"; then
	echo "FAIL: memory over the template's <maxMemory>: $(cat "$tmp/err")"
	fail=1
fi
golden a30-template-smbios a30-dual-mdev --name smbios --vgpu A30-6C --vcpus 2 --memory 2G --uuid $U \
	--mdev-uuid $M1 --template tests/data/templates/smbios.xml
golden a30-from a30-dual-mdev --from tests/data/domains/existing.xml --vgpu A30-2-12C --vcpus 8 \
	--mdev-uuid $M2
# without --mdev-uuid an edited domain keeps the mdev UUID it had
golden a30-from-keep-mdev a30-dual-mdev --from tests/data/domains/existing.xml --vgpu A30-2-12C --vcpus 8
golden h100-vfio-mig vfio-mig-h100 --template $tpl --name h1 --vgpu 1058 --vcpus 4 --memory 8G --uuid $U --virt-type qemu
golden l40s-multi vfio-ts-l40s --template $tpl --name l1 --vgpu L40S-4Q,L40S-4Q --vcpus 4 --memory 8G --uuid $U
golden l40s-multi-b vfio-ts-l40s --template $tpl --name l2 --vgpu L40S-1B,L40S-1B --vcpus 2 --memory 4G --uuid $U \
	--gpu 0000:c1:00.0
golden t4-legacy t4-legacy --template $tpl --name t4 --vgpu T4-4Q --vcpus 4 --memory 8G --uuid $U --mdev-uuid $M1
golden numa-unknown numa-unknown --template $tpl --name a100 --vgpu A100D-8C --vcpus 4 --memory 8G --uuid $U --mdev-uuid $M1

# Our own output fed back with --from and the same request is a fixed point.
"$bin" --sysroot $hosts/a30-dual-mdev xml --template $tpl --name fp --vgpu A30-6C --vcpus 12 --memory 32G --hugepages \
	>"$tmp/fp1.xml" 2>/dev/null
"$bin" --sysroot $hosts/a30-dual-mdev xml --from "$tmp/fp1.xml" --vgpu A30-6C --vcpus 12 --hugepages \
	>"$tmp/fp2.xml" 2>/dev/null
cmp -s "$tmp/fp1.xml" "$tmp/fp2.xml" || { echo "FAIL: --from of our own output is not a fixed point"; diff -u "$tmp/fp1.xml" "$tmp/fp2.xml"; fail=1; }
virt-xml-validate "$tmp/fp2.xml" domain >/dev/null 2>&1 || { echo "FAIL: fp2.xml does not validate"; fail=1; }

# The A30 article's layout: four 12-vCPU VMs on the node-0 GPU, each made
# with the earlier ones' CPUs excluded.
ex=
for want in 0-5,48-53 6-11,54-59 12-17,60-65 18-23,66-71; do
	"$bin" --sysroot $hosts/a30-dual-mdev --json plan --name v --vgpu A30-6C --vcpus 12 --memory 32G \
		${ex:+--exclude-cpus $ex} >"$tmp/plan.json" 2>&1
	got=$(sed -n 's/.*"cpus": "\(.*\)",/\1/p' "$tmp/plan.json")
	if [ "$got" != "$want" ]; then
		echo "FAIL: A30 layout: got '$got', want '$want' (excluded '$ex')"
		cat "$tmp/plan.json"
		fail=1
	fi
	grep -q '"gpu": "0000:3b:00.0"' "$tmp/plan.json" || { echo "FAIL: A30 layout left GPU 3b"; fail=1; }
	ex=${ex:+$ex,}$want
done

expect_err() { # HOST STDERR_REGEX ARGS...   exit 1, one line, nothing on stdout
	local host=$1 re=$2
	shift 2
	"$bin" --sysroot "$hosts/$host" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc != 1 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -Eq -- "$re" "$tmp/err"; then
		echo "FAIL: vgpuctl $* -> exit $rc, stdout $(wc -c <"$tmp/out") bytes, stderr:"
		cat "$tmp/err"
		fail=1
	fi
}
expect_err a30-dual-mdev "unknown vGPU profile 'A30-7C'; available now: A30-4C, A30-6C, A30-8C, A30-12C, A30-24C, A30-2-12C$" \
	xml --template $tpl --name x --vgpu A30-7C --vcpus 2 --memory 1G
expect_err a30-dual-mdev "no free VF can take 'A30-1-6C' now; available now: A30-4C" \
	xml --template $tpl --name x --vgpu A30-1-6C --vcpus 2 --memory 1G
expect_err a30-dual-mdev "NUMA node 0 cannot hold 4 vCPUs: 2 CPUs on whole free cores \(23,71\)" \
	xml --template $tpl --name x --vgpu A30-6C --vcpus 4 --memory 1G --exclude-cpus 0-22,48-70
expect_err vfio-mig-h100 "--vf '0000:ca:00.4' cannot take '1058' now \(it holds a vGPU\)" \
	plan --name x --vgpu 1058 --vf 0000:ca:00.4 --vcpus 2 --memory 1G
expect_err a30-dual-mdev "^vgpuctl: 1 GiB hugepages back the memory: 1572864 KiB is not a whole number of GiB$" \
	xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory 1536M --hugepages
# time-sliced vGPUs of one vendor-VFIO GPU share one size (no mixed sizes): 41:00.0
# holds a 4 GB type already, so an 8C beside the 4Q on c1:00.0 has nowhere to go
expect_err vfio-ts-l40s "^vgpuctl: no free VF on NUMA node 0 can take 'L40S-8C' as vGPU 2 of this VM$" \
	xml --template $tpl --name x --vgpu L40S-4Q,L40S-8C --vcpus 2 --memory 1G
# with --gpu: what else fits there, and where the refused type would fit
expect_err vfio-ts-l40s "^vgpuctl: no free VF on that GPU can take 'L40S-48Q' now \(GPU 0000:c1:00.0 can\); available there now: L40S-4Q, L40S-4C$" \
	xml --template $tpl --name x --vgpu L40S-48Q --gpu 41:00.0 --vcpus 2 --memory 1G
# the same when the size comes from the edited domain (existing.xml has 16 GiB; 1.5 GiB here)
sed "s|<memory unit='GiB'>16</memory>|<memory unit='MiB'>1536</memory>|" tests/data/domains/existing.xml >"$tmp/odd.xml"
expect_err a30-dual-mdev "1572864 KiB is not a whole number of GiB$" \
	xml --from "$tmp/odd.xml" --vgpu A30-6C --vcpus 2 --hugepages
expect_err a30-dual-mdev "cannot read 'tests/data/nope.xml': No such file or directory" \
	xml --from tests/data/nope.xml --vgpu A30-6C --vcpus 2
printf '<domain><name>x</name>' >"$tmp/broken.xml"
expect_err a30-dual-mdev "'$tmp/broken.xml' is not well-formed XML" \
	xml --from "$tmp/broken.xml" --vgpu A30-6C --vcpus 2
printf '<!DOCTYPE domain [<!ENTITY x SYSTEM "file:///etc/passwd">]><domain><name>&x;</name></domain>' >"$tmp/xxe.xml"
expect_err a30-dual-mdev "is not a libvirt domain definition" \
	xml --from "$tmp/xxe.xml" --vgpu A30-6C --vcpus 2 --memory 1G
# a GPU whose node cannot be told (numa_node -1, local_cpulist over both nodes) is refused
cp -a $hosts/malformed "$tmp/nodeless"
echo 0-15 >"$tmp/nodeless/sys/devices/pci0000:3b/0000:3b:00.0/local_cpulist"
"$bin" --sysroot "$tmp/nodeless" xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory 1G >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc != 1 ] || [ -s "$tmp/out" ] ||
	! grep -q "^vgpuctl: GPU 0000:3b:00.0 offers 'A30-6C' but its NUMA node is unknown" "$tmp/err" ||
	! grep -q "numa_node' is -1 on a 2-node host and local_cpulist spans nodes" "$tmp/err"; then
	echo "FAIL: GPU without a NUMA node:"
	cat "$tmp/err"
	fail=1
fi

# memory is bound to the node: a node too small for the VM is passed over for a GPU on a
# node that can hold it, and when none can, the error says what the node has
cp -a $hosts/a30-dual-mdev "$tmp/small"
sed -i 's/MemTotal: *[0-9]*/MemTotal:        8388608/' "$tmp/small/sys/devices/system/node/node0/meminfo"
# GPU af time-sliced like 3b: MIG's GPU instances gone, A30-6C offered instead of A30-2-12C
rm -rf "$tmp"/small/proc/driver/nvidia/capabilities/gpu1/mig/gi*
for f in "$tmp"/small/sys/devices/pci0000:af/0000:af:00.*/mdev_supported_types/nvidia-684/available_instances; do
	echo 1 >"$f"
done
for f in "$tmp"/small/sys/devices/pci0000:af/0000:af:00.*/mdev_supported_types/nvidia-690/available_instances; do
	echo 0 >"$f"
done
"$bin" --sysroot "$tmp/small" --json plan --name m --vgpu A30-6C --vcpus 2 --memory 16G >"$tmp/out" 2>&1
if ! grep -q '"gpu": "0000:af:00.0"' "$tmp/out" || ! grep -q '"numa_node": 1' "$tmp/out"; then
	echo "FAIL: memory-bound choice:"
	cat "$tmp/out"
	fail=1
fi
expect_err a30-dual-mdev "^vgpuctl: NUMA node 0 cannot hold 300G of guest memory: it has 251.6G in all$" \
	xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory 300G
# sizes in the unit the user typed: M when M, MiB for a bare number
expect_err a30-dual-mdev "^vgpuctl: NUMA node 0 cannot hold 307200M of guest memory: it has 257672.3M in all$" \
	xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory 307200M
expect_err a30-dual-mdev "^vgpuctl: NUMA node 0 cannot hold 307200 MiB of guest memory: it has 257672.3 MiB in all$" \
	xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory 307200

# usage errors exit 2
"$bin" --sysroot $hosts/a30-dual-mdev xml --template $tpl --name x --vgpu A30-6C --vcpus 2 --memory lots >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc != 2 ] || ! grep -q -- "--memory 'lots': not a size" "$tmp/err"; then
	echo "FAIL: --memory lots"
	cat "$tmp/err"
	fail=1
fi
"$bin" --sysroot $hosts/a30-dual-mdev xml --template $tpl --vgpu A30-6C --vcpus 2 --memory 1G >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc != 2 ] || ! grep -q -- "--name is required" "$tmp/err"; then
	echo "FAIL: missing --name"
	cat "$tmp/err"
	fail=1
fi
# without --uuid/--mdev-uuid every run makes fresh, valid UUIDs
a=$("$bin" --sysroot $hosts/a30-dual-mdev xml --template $tpl --name r --vgpu A30-6C --vcpus 2 --memory 1G | grep -o '<uuid>.*</uuid>')
b=$("$bin" --sysroot $hosts/a30-dual-mdev xml --template $tpl --name r --vgpu A30-6C --vcpus 2 --memory 1G | grep -o '<uuid>.*</uuid>')
if ! [[ $a =~ ^\<uuid\>[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\</uuid\>$ ]] ||
	[ "$a" = "$b" ]; then
	echo "FAIL: generated UUIDs '$a' '$b'"
	fail=1
fi
# a template with a <uuid> (virsh dumpxml of another VM) does not hand it on: only
# --from edits an existing domain and keeps its identity
sed 's|<name>|<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid><name>|' $tpl >"$tmp/tpl-uuid.xml"
c=$("$bin" --sysroot $hosts/a30-dual-mdev xml --template "$tmp/tpl-uuid.xml" --name r --vgpu A30-6C --vcpus 2 --memory 1G | grep -o '<uuid>.*</uuid>')
if [ "$c" = "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>" ] || [ -z "$c" ]; then
	echo "FAIL: xml --template kept the template's UUID: '$c'"
	fail=1
fi
d=$("$bin" --sysroot $hosts/a30-dual-mdev xml --from tests/data/domains/existing.xml --vgpu A30-6C --vcpus 2 | grep -o '<uuid>.*</uuid>')
if [ "$d" != "<uuid>3f2c1d4e-5b6a-4789-9abc-def012345678</uuid>" ]; then
	echo "FAIL: xml --from did not keep the domain's UUID: '$d'"
	fail=1
fi
# a guest of another architecture than the host's is refused, naming the file: the host's
# is the tree's proc/sys/kernel/arch (a fixture without it does not say, and is not compared)
A64=tests/data/templates/aarch64.xml
for arch in x86_64 aarch64; do
	cp -a $hosts/a30-dual-mdev "$tmp/$arch"
	mkdir -p "$tmp/$arch/proc/sys/kernel"
	echo $arch >"$tmp/$arch/proc/sys/kernel/arch"
done
arch_refused() { # HOST-ARCH GUEST-ARCH TEMPLATE COMMAND...
	local host=$1 guest=$2 f=$3
	shift 3
	"$bin" --sysroot "$tmp/$host" "$@" >/dev/null 2>"$tmp/err" && echo "exit 0" >>"$tmp/err"
	if ! grep -q "'$f': guest architecture '$guest' is not the host's ($host): a vGPU goes to a guest of the host's architecture$" "$tmp/err"; then
		echo "FAIL: guest $guest on host $host, $1: $(cat "$tmp/err")"
		fail=1
	fi
}
arch_refused x86_64 aarch64 $A64 xml --template $A64 --name a --vgpu A30-6C --vcpus 2 --memory 1G
arch_refused x86_64 aarch64 $A64 assign --from $A64 --vgpu A30-6C --vcpus 2 --dry-run
arch_refused aarch64 x86_64 $tpl xml --template $tpl --name a --vgpu A30-6C --vcpus 2 --memory 1G
for arch in x86_64 aarch64; do
	t=$tpl
	[ $arch = aarch64 ] && t=$A64
	if ! "$bin" --sysroot "$tmp/$arch" xml --template $t --name a --vgpu A30-6C --vcpus 2 --memory 1G \
		>"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: guest $arch on host $arch: $(cat "$tmp/err")"
		fail=1
	fi
done
# a node whose meminfo is damaged (a negative MemTotal): said twice, never silent
cp -a $hosts/a30-dual-mdev "$tmp/negmem"
sed -i 's/MemTotal: *[0-9]*/MemTotal:       -257672/' "$tmp/negmem/sys/devices/system/node/node0/meminfo"
"$bin" --sysroot "$tmp/negmem" xml --template $tpl --name x --vgpu A30-6C --gpu 3b:00.0 --vcpus 2 \
	--memory 900000G >/dev/null 2>"$tmp/err"
if ! grep -q "node0/meminfo': MemTotal is not a size in kB" "$tmp/err" ||
	! grep -q "the memory of NUMA node 0 is unknown .*: 900000G of guest memory are not checked" "$tmp/err"; then
	echo "FAIL: negative MemTotal:"
	cat "$tmp/err"
	fail=1
fi
exit $fail
