#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xml --guest-topology mirror and nccl-topo: a 2-vGPU guest on the two NUMA
# nodes of the dual-A30 host gets one guest cell per node (vCPUs pinned and
# memory bound there), a pcie-expander-bus on each cell and its vGPU behind a
# root port on it; goldens byte for byte (stderr included), every XML
# validated and defined on libvirt's test driver; the NCCL topology file of
# that guest against its golden; release gives an existing definition back;
# the refusals say why.  On the HGX board (hgx-h100-8, 4 GPUs a node), an
# 8-vGPU guest gets two cells of four and an NCCL file whose GPUs reach the
# NVSwitches over their NVLinks (the NVML stand-in's).
#   guest-topology.sh VGPUCTL SRCDIR NVML_STANDIN NVFM_STANDIN  (VGPU_TEST_REGENERATE=1 rewrites the goldens)
set -u
bin=$(realpath "$1") src=$2 nvml=$(realpath "$3") nvfm=$(realpath "$4")
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/guest-topology
host=tests/data/hosts/a30-dual-mdev
tpl=templates/domain.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
U=7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f
M1=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f
M2=5d6e7f80-9a1b-4c2d-8e3f-405162738495
v() { "$bin" --sysroot "$host" "$@"; }
bad() {
	echo "FAIL: $*"
	fail=1
}

# golden NAME ARGS...: xml's output and stderr against the goldens; the XML validates
golden() {
	local name=$1
	shift
	v xml --template $tpl --uuid $U --mdev-uuid $M1 --mdev-uuid $M2 --guest-topology mirror "$@" \
		>"$tmp/$name.xml" 2>"$tmp/$name.err"
	echo "exit $?" >>"$tmp/$name.err"
	for ext in xml err; do
		golden_cmp "$tmp/$name.$ext" "$exp/$name.$ext" "xml --guest-topology mirror $*"
	done
	virt-xml-validate "$tmp/$name.xml" domain >"$tmp/v" 2>&1 || bad "$name: virt-xml-validate: $(cat "$tmp/v")"
}

# two vGPUs that only fit on two nodes (node 1's A30 is in MIG mode): two cells
golden two-nodes --name mirror --vgpu A30-24C,A30-2-12C --vcpus 8 --memory 32G
# 1 GiB pages back both cells, each its share in whole GiB
golden two-nodes-hugepages --name mirror --vgpu A30-24C,A30-2-12C --vcpus 4 --memory 6G --hugepages
# two vGPUs of one node: one cell, one expander bus with two root ports
golden one-node --name mirror --vgpu A30-6C,A30-6C --vcpus 6 --memory 16G
# an odd vCPU count per cell: no spare sibling between the cells, single-threaded cores
golden odd-vcpus --name mirror --vgpu A30-24C,A30-2-12C --vcpus 5 --memory 8G

# Grace: the GPU's memory is a NUMA node without CPUs (the driver's numa_status, as
# POWER9 and Grace hosts have it): a memory-less guest cell that the hostdev's
# <acpi nodeset> (libvirt >= 11.8) names; the host here is the dual-A30 tree
# with node 2 as GPU af's memory
tree_copy $host "$tmp/grace" # hard links if it can: a file changed below is replaced, never written
rm "$tmp/grace/sys/devices/system/node/online" "$tmp/grace/sys/devices/system/node/possible"
mkdir "$tmp/grace/sys/devices/system/node/node2"
echo >"$tmp/grace/sys/devices/system/node/node2/cpulist"
printf 'Node 2 MemTotal:       100663296 kB\nNode 2 MemFree:        100663296 kB\n' \
	>"$tmp/grace/sys/devices/system/node/node2/meminfo"
echo 0-2 >"$tmp/grace/sys/devices/system/node/online"
echo 0-2 >"$tmp/grace/sys/devices/system/node/possible"
printf 'Node:      2\nStatus:    online\nAddress:   40000000000\nSize:      3f0000000\n' \
	>"$tmp/grace/proc/driver/nvidia/gpus/0000:af:00.0/numa_status"
"$bin" --sysroot "$tmp/grace" xml --template $tpl --uuid $U --mdev-uuid $M1 --mdev-uuid $M2 \
	--guest-topology mirror --name mirror --vgpu A30-24C,A30-2-12C --vcpus 4 --memory 8G \
	>"$tmp/grace.out" 2>"$tmp/grace.err"
echo "exit $?" >>"$tmp/grace.err"
golden_cmp "$tmp/grace.out" "$exp/grace.xml" "xml --guest-topology mirror on a Grace-like host"
golden_cmp "$tmp/grace.err" "$exp/grace.err" "xml --guest-topology mirror on a Grace-like host (stderr)"
grep -q '<cell id="2" memory="0" unit="KiB"/>' "$tmp/grace.out" || bad "Grace: no memory-less cell 2"
grep -q '<acpi nodeset="2"/>' "$tmp/grace.out" || bad "Grace: the hostdev does not name cell 2"
[ "$(grep -c '<acpi nodeset' "$tmp/grace.out")" = 1 ] || bad "Grace: GPU 3b has no memory node, yet an <acpi>"
# libvirt here may predate <acpi nodeset> on a hostdev (11.8): the rest validates
sed '/<acpi nodeset=/d' "$tmp/grace.out" >"$tmp/grace-noacpi.out"
virt-xml-validate "$tmp/grace-noacpi.out" domain >"$tmp/v" 2>&1 || bad "Grace: virt-xml-validate: $(cat "$tmp/v")"

# the cells as the XML says them (a golden hides nothing, but say what matters)
grep -q '<memnode cellid="1" mode="strict" nodeset="1"/>' "$tmp/two-nodes.xml" || bad "cell 1's memory is not on node 1"
grep -q '<cell id="1" cpus="4-7" memory="16777216" unit="KiB"/>' "$tmp/two-nodes.xml" || bad "cell 1 lacks its vCPUs and memory"
grep -q '<vcpupin vcpu="4" cpuset="24"/>' "$tmp/two-nodes.xml" || bad "cell 1's vCPU 4 is not on node 1's first core"

# each XML defines on the test driver (one virsh for all, its own test:///default)
{
	for f in "$tmp"/*.xml; do echo "define $f"; done
	echo "list --all --name"
} >"$tmp/cmds"
virsh -q -c test:///default <"$tmp/cmds" >"$tmp/define.log" 2>&1
if [ "$(grep -c '^mirror$' "$tmp/define.log")" != 1 ] || grep -qi error "$tmp/define.log"; then
	bad "define on test:///default: $(cat "$tmp/define.log")"
fi

# the guest's NCCL topology file
v nccl-topo --from "$tmp/two-nodes.xml" >"$tmp/two-nodes.nccl.xml" 2>"$tmp/nccl.err" || bad "nccl-topo: $(cat "$tmp/nccl.err")"
golden_cmp "$tmp/two-nodes.nccl.xml" "$exp/two-nodes.nccl.xml" "nccl-topo --from two-nodes.xml"
xmllint --noout "$tmp/two-nodes.nccl.xml" 2>/dev/null || bad "the NCCL file is not XML"
v nccl-topo --from "$tmp/one-node.xml" -o "$tmp/one-node.nccl.xml" 2>"$tmp/nccl.err" || bad "nccl-topo -o: $(cat "$tmp/nccl.err")"
golden_cmp "$tmp/one-node.nccl.xml" "$exp/one-node.nccl.xml" "nccl-topo --from one-node.xml -o"

# an existing definition: mirrored, mirrored again (no second set of buses), released
f=tests/data/domains/corpus/numa-cells.xml
# release takes the host lock (it may free vGPUs): on a copy of the host, never the tree's fixture
tree_copy $host "$tmp/host" # hard links if it can: release and assign write only new files
r() { "$bin" --sysroot "$tmp/host" "$@"; }
r release --from $f -o "$tmp/orig.xml" 2>/dev/null || bad "release of the original"
v xml --from $f --vgpu A30-24C,A30-2-12C --vcpus 4 --guest-topology mirror >"$tmp/m1.xml" 2>/dev/null || bad "xml --from"
v xml --from "$tmp/m1.xml" --vgpu A30-24C,A30-2-12C --vcpus 4 --guest-topology mirror >"$tmp/m2.xml" 2>/dev/null || bad "xml --from again"
cmp -s "$tmp/m1.xml" "$tmp/m2.xml" || { bad "mirrored twice differs from once"; diff "$tmp/m1.xml" "$tmp/m2.xml" | head; }
[ "$(grep -c pcie-expander-bus "$tmp/m2.xml")" = 2 ] || bad "mirrored twice: not two expander buses"
r release --from "$tmp/m2.xml" -o "$tmp/back.xml" 2>/dev/null || bad "release"
cmp -s "$tmp/orig.xml" "$tmp/back.xml" || { bad "release did not give the definition back"; diff -u "$tmp/orig.xml" "$tmp/back.xml" | head -20; }
# assign run again with the same request keeps its claims, cells and buses (the copy)
for i in 1 2; do
	r assign --from $f --vgpu A30-24C,A30-2-12C --vcpus 4 --guest-topology mirror \
		--per-start -o "$tmp/assign$i.xml" 2>"$tmp/assign.err" || bad "assign $i: $(cat "$tmp/assign.err")"
done
cmp -s "$tmp/assign1.xml" "$tmp/assign2.xml" || bad "assign again changed the mirrored definition"
grep -q "kept" "$tmp/assign.err" || bad "assign again did not keep its claims: $(cat "$tmp/assign.err")"
# without the option nothing of it: no expander bus, one cell
v xml --from $f --vgpu A30-6C --vcpus 4 >"$tmp/plain.xml" 2>/dev/null
grep -q 'expander\|guest-topology' "$tmp/plain.xml" && bad "a guest without --guest-topology got the mirrored layout"

# the HGX board: 8 vGPUs, 4 per node, the partition Fabric Manager (its stand-in) offers;
# NVLinks from NVML (the stand-in speaks for the tree)
hgx=tests/data/hosts/hgx-h100-8
if [ -d $hgx ]; then
	# the stand-ins keep state (their calls) under their root: the tree read-only, its state copied
	mkdir -p "$tmp/hgx/var/lib"
	cp -a $hgx/var/lib/fake-nvidia "$tmp/hgx/var/lib/"
	ln -s "$PWD/$hgx/sys" "$PWD/$hgx/proc" "$tmp/hgx/"
	# Fabric Manager in vGPU mode: 8 vGPUs take the 8-GPU partition, in its (module) order
	p=H100XM-80C
	FAKE_NV_ROOT=$tmp/hgx "$bin" --sysroot $hgx --nvml "$nvml" --nvfm "$nvfm" xml --template $tpl \
		--uuid $U --guest-topology mirror --name hgx --vgpu $p,$p,$p,$p,$p,$p,$p,$p --vcpus 16 \
		--memory 64G >"$tmp/hgx.xml" 2>"$tmp/hgx.err"
	echo "exit $?" >>"$tmp/hgx.err"
	golden_cmp "$tmp/hgx.xml" "$exp/hgx.xml" "xml --guest-topology mirror on $hgx"
	golden_cmp "$tmp/hgx.err" "$exp/hgx.err" "xml --guest-topology mirror on $hgx (stderr)"
	virt-xml-validate "$tmp/hgx.xml" domain >"$tmp/v" 2>&1 || bad "hgx: virt-xml-validate: $(cat "$tmp/v")"
	echo "define $tmp/hgx.xml" | virsh -q -c test:///default >"$tmp/define.log" 2>&1
	grep -qi error "$tmp/define.log" && bad "hgx: define on test:///default: $(cat "$tmp/define.log")"
	FAKE_NV_ROOT=$tmp/hgx "$bin" --sysroot $hgx --nvml "$nvml" nccl-topo --from "$tmp/hgx.xml" \
		>"$tmp/hgx.nccl.xml" 2>"$tmp/nccl.err" || bad "hgx: nccl-topo: $(cat "$tmp/nccl.err")"
	golden_cmp "$tmp/hgx.nccl.xml" "$exp/hgx.nccl.xml" "nccl-topo on $hgx"
	[ "$(grep -c 'count="18" tclass="0x068000"' "$tmp/hgx.nccl.xml")" = 8 ] ||
		bad "hgx: not 8 GPUs with 18 NVLinks into the NVSwitches"
else
	echo "note: $hgx is not in this tree: the HGX case is skipped"
fi

# refusals: one line each, with the reason
err() { # WANT ARGS...: the command fails with exactly this stderr
	local want=$1
	shift
	v "$@" >/dev/null 2>"$tmp/err" && echo "exit 0" >>"$tmp/err"
	[ "$(cat "$tmp/err")" = "$want" ] || bad "$*: got '$(cat "$tmp/err")', want '$want'"
}
err "vgpuctl: --guest-topology 'flat': use mirror
Try 'vgpuctl xml --help' for more information." \
	xml --name x --vgpu A30-6C --vcpus 2 --memory 4G --guest-topology flat
err "vgpuctl: --guest-topology mirror pins the guest: not with --no-pin
Try 'vgpuctl assign --help' for more information." \
	assign --from $f --vgpu A30-6C --no-pin --guest-topology mirror --dry-run
err "vgpuctl: --guest-topology is for assign
Try 'vgpuctl release --help' for more information." \
	release --from $f --guest-topology mirror
err "vgpuctl: the guest's machine type 'pc' has no PCI Express root for expander buses: a guest that mirrors the host needs q35 (or virt on aarch64)" \
	xml --from tests/data/domains/corpus/tcg.xml --vgpu A30-6C --vcpus 2 --guest-topology mirror
err "vgpuctl: no free VF on any NUMA node can take 'A30-24C' as vGPU 3 of this VM" \
	xml --template $tpl --name x --vgpu A30-24C,A30-2-12C,A30-24C --vcpus 6 --memory 8G --guest-topology mirror
err "vgpuctl: nccl-topo $tmp/plain.xml: vGPU 1 (A30-6C) has no guest PCI address yet (libvirt assigns them when it defines the domain): read the domain from libvirt" \
	nccl-topo --from "$tmp/plain.xml"
err "vgpuctl: nccl-topo $f: the domain has no vgpuctl metadata (<vgpuctl:vgpus> in urn:vgpuctl:domain:1)" nccl-topo --from $f
exit $fail
