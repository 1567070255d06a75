#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Existing VMs keep their configuration (tests/data/domains/corpus): for each
# definition, vGPUs added to it (xml --from: an existing domain, as assign
# edits it) and released again (release --from) give back the definition it
# started from, byte for byte after the same formatting; the edited one is a
# valid domain; and assign --no-pin (dry run) leaves every memory and CPU
# element as it was.  An aarch64 guest is accepted, a ppc64 one refused.
#   roundtrip.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0 nopin=()
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
v() { "$bin" --sysroot "$tmp/host" "$@"; }
bad() {
	echo "FAIL: $*"
	fail=1
}
# What the checks below compare, read by one python3 for all files (a start
# of python3 costs more than a vgpuctl run, ~1 s on a loaded 2-core machine):
# FILE.el, the memory and CPU elements of FILE, one per line in document
# order; FILE.top, "PATH [attributes] text" for each element at the paths
# the checks name.  parse FILE...
parse() {
	python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
PATHS = ("vcpu", "vcpus/vcpu", "memoryBacking/hugepages/page", "cpu/numa/cell")
for f in sys.argv[1:]:
    try:
        root = ET.parse(f).getroot()
    except ET.ParseError as e:
        for ext in (".el", ".top"):
            with open(f + ext, "w") as out:
                print("unparsable:", e, file=out)
        continue
    with open(f + ".el", "w") as out:
        for el in root:
            if el.tag in ("vcpu", "cputune", "numatune", "cpu", "memory", "currentMemory",
                          "maxMemory", "memoryBacking"):
                print(ET.tostring(el, encoding="unicode").strip(), file=out)
    with open(f + ".top", "w") as out:
        for path in PATHS:
            for e in root.findall(path):
                print(path, sorted(e.attrib.items()), (e.text or "").strip(), file=out)
PY
}
elements() { cat "$1.el"; }
# top FILE PATH...: FILE's elements at each PATH, as parse wrote them
top() {
	local f=$1 p
	shift
	for p in "$@"; do awk -v p="$p [" 'index($0, p) == 1' "$f.top"; done
}
for f in tests/data/domains/corpus/*.xml; do
	b=$(basename "$f" .xml)
	n=$((n + 1))
	# the original, formatted as vgpuctl writes (release of a domain without vGPUs)
	v release --from "$f" -o "$tmp/$b.orig.xml" 2>/dev/null || { bad "$b: release of the original"; continue; }
	if ! v xml --from "$f" --vgpu A30-6C --vcpus 4 >"$tmp/$b.vgpu.xml" 2>"$tmp/err"; then
		bad "$b: xml --from: $(cat "$tmp/err")"
		continue
	fi
	virt-xml-validate "$tmp/$b.vgpu.xml" domain >/dev/null 2>&1 || bad "$b: the edited domain does not validate"
	grep -q "<hostdev" "$tmp/$b.vgpu.xml" || bad "$b: no hostdev"
	v release --from "$tmp/$b.vgpu.xml" -o "$tmp/$b.back.xml" 2>/dev/null || bad "$b: release"
	if ! cmp -s "$tmp/$b.orig.xml" "$tmp/$b.back.xml"; then
		bad "$b: release did not give the definition back"
		diff -u "$tmp/$b.orig.xml" "$tmp/$b.back.xml" | head -30
	fi
	# --no-pin: no memory or CPU element changes
	v assign --from "$f" --vgpu A30-6C --no-pin --dry-run >"$tmp/$b.nopin.xml" 2>"$tmp/err" ||
		bad "$b: assign --no-pin --dry-run: $(cat "$tmp/err")"
	nopin+=("$b")
done
# a TCG guest never gets host-passthrough (libvirt refuses to start it)
grep -q 'mode="host-passthrough"' "$tmp/tcg.vgpu.xml" && bad "tcg: host-passthrough under TCG"
grep -q 'mode="maximum"' "$tmp/tcg.vgpu.xml" || bad "tcg: no CPU model that TCG runs"
# a custom CPU model and the admin's guest NUMA cells' distances survive the round trip,
# and the model stays while the vGPU is there
grep -q "Cascadelake-Server" "$tmp/numa-cells.vgpu.xml" || bad "numa-cells: the CPU model was dropped"
# a DIMM on guest NUMA cell 1: the pinning (one cell) would leave libvirt a definition it
# refuses, so it is refused by name; --no-pin is the way out
sed 's|<node>0</node>|<node>1</node>|' tests/data/domains/corpus/hotplug-dimm.xml >"$tmp/dimm1.xml"
v xml --from "$tmp/dimm1.xml" --vgpu A30-6C --vcpus 2 >/dev/null 2>"$tmp/err" && bad "a DIMM on cell 1 was accepted"
grep -q "^vgpuctl: the domain's <memory> is on guest NUMA cell 1, and the pinning leaves the guest one cell (0): move it to cell 0, or give --no-pin$" \
	"$tmp/err" || bad "DIMM on cell 1: $(cat "$tmp/err")"
v assign --from "$tmp/dimm1.xml" --vgpu A30-6C --no-pin --dry-run >/dev/null 2>"$tmp/err" ||
	bad "DIMM on cell 1 with --no-pin: $(cat "$tmp/err")"
# hugepages meant for cell 1 back cell 0 while the vGPU is there (said), and come back
sed "s|<page size='2' unit='MiB'/>|<page size='2' unit='MiB' nodeset='1'/>|" \
	tests/data/domains/corpus/hugepages.xml >"$tmp/hp1.xml"
v release --from "$tmp/hp1.xml" -o "$tmp/hp1.orig.xml" 2>/dev/null
v xml --from "$tmp/hp1.xml" --vgpu A30-6C --vcpus 2 >"$tmp/hp1.vgpu.xml" 2>"$tmp/err" || bad "hugepages on cell 1: $(cat "$tmp/err")"
grep -q "hugepages for guest NUMA cells 1 now back cell 0" "$tmp/err" || bad "hugepages on cell 1: nothing said"
grep -q 'nodeset="0"' "$tmp/hp1.vgpu.xml" || bad "hugepages still name cell 1"
v release --from "$tmp/hp1.vgpu.xml" -o "$tmp/hp1.back.xml" 2>/dev/null
cmp -s "$tmp/hp1.orig.xml" "$tmp/hp1.back.xml" || bad "release did not give the hugepages' cell back"
# a domain without <vcpu> has libvirt's one vCPU
sed '/<vcpu>/d' tests/data/domains/corpus/minimal.xml >"$tmp/novcpu.xml"
v xml --from "$tmp/novcpu.xml" --vgpu A30-6C >"$tmp/novcpu.vgpu.xml" 2>"$tmp/err" || bad "no <vcpu>: $(cat "$tmp/err")"
parse "$tmp"/*.xml
for b in "${nopin[@]}"; do
	if [ "$(elements "$tmp/$b.orig.xml")" != "$(elements "$tmp/$b.nopin.xml")" ]; then
		bad "$b: assign --no-pin changed a memory or CPU element"
		diff <(elements "$tmp/$b.orig.xml") <(elements "$tmp/$b.nopin.xml") | head -10
	fi
done
# vCPU hotplug stays while the count does (every vCPU pinned), and comes back
if [ "$(top "$tmp/vcpu-hotplug.vgpu.xml" vcpu vcpus/vcpu | grep -c .)" != 5 ] ||
	! top "$tmp/vcpu-hotplug.vgpu.xml" vcpu | grep -q "('current', '2')"; then
	bad "vcpu-hotplug: current or <vcpus> lost while the vGPU is there"
fi
# two hugepage sizes for two cells: one cell now, so one size (libvirt refuses two for one cell)
[ "$(top "$tmp/hugepages-two-sizes.vgpu.xml" memoryBacking/hugepages/page)" = \
	"memoryBacking/hugepages/page [('nodeset', '0'), ('size', '1'), ('unit', 'GiB')] " ] ||
	bad "hugepages-two-sizes: $(top "$tmp/hugepages-two-sizes.vgpu.xml" memoryBacking/hugepages/page)"
# the one cell keeps its memory's access and discard (vhost-user needs shared memory)
top "$tmp/vhostuser-shared.vgpu.xml" cpu/numa/cell | grep -q "('discard', 'yes'), ('id', '0'), ('memAccess', 'shared')" ||
	bad "vhostuser-shared: $(top "$tmp/vhostuser-shared.vgpu.xml" cpu/numa/cell)"
# (a domain without <vcpu>)
[ "$(top "$tmp/novcpu.vgpu.xml" vcpu)" = "vcpu [('placement', 'static')] 1" ] || bad "no <vcpu>: $(top "$tmp/novcpu.vgpu.xml" vcpu)"
# a machine without a PCI bus cannot take the hostdev
sed 's|machine=.pc.|machine="isapc"|' tests/data/domains/corpus/tcg.xml >"$tmp/isapc.xml"
v xml --from "$tmp/isapc.xml" --vgpu A30-6C --vcpus 2 >/dev/null 2>"$tmp/err" && bad "an isapc guest was accepted"
grep -q "^vgpuctl: machine type 'isapc' has no PCI bus for a vGPU hostdev: use q35 or pc$" "$tmp/err" ||
	bad "isapc: $(cat "$tmp/err")"
# guest architectures
sed 's|<type arch=.x86_64. machine=.pc.>hvm</type>|<type arch="ppc64" machine="pseries">hvm</type>|' \
	tests/data/domains/corpus/tcg.xml >"$tmp/ppc.xml"
v xml --from "$tmp/ppc.xml" --vgpu A30-6C --vcpus 2 >/dev/null 2>"$tmp/err" && bad "a ppc64 guest was accepted"
grep -q "^vgpuctl: guest architecture 'ppc64' is not supported: vGPUs go to x86_64 and aarch64 guests$" \
	"$tmp/err" || bad "ppc64: $(cat "$tmp/err")"
# the architecture is said first, before what else such a guest lacks (here <vcpu>)
sed '/<vcpu/d' "$tmp/ppc.xml" >"$tmp/ppc-novcpu.xml"
v xml --from "$tmp/ppc-novcpu.xml" --vgpu A30-6C >/dev/null 2>"$tmp/err"
grep -q "guest architecture 'ppc64' is not supported" "$tmp/err" || bad "ppc64 without <vcpu>: $(cat "$tmp/err")"
[ $fail = 0 ] && echo "ok: $n definitions: assign then release gives each back; --no-pin touches no memory or CPU"
exit $fail
