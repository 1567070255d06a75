#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl migrate-offer and migrate-check, on fixture hosts (copies, --sysroot).
# migrate-offer, the target's side:  A manifest's A30-4C gets a GPU of the dual-A30
# host and the board it would run on; a type the host lacks gets why's
# reason code; the host tree is left as it was; a damaged or oversized
# manifest exits 1 with one message and prints nothing on stdout.
# migrate-check, the source's side, for a domain whose owner record holds an
# A30-4C: to another dual-A30 host (--offer-command) capacity and vgpu-params
# pass and the verdict is unknown (libvirt and QEMU versions are not read yet:
# engine is UNKNOWN); with enable_uvm=1 in its vgpu_params vgpu-params fails; to the L40S host capacity and driver-version fail, no-go (exit 3);
# with no way to reach the target every compared check is UNKNOWN (exit 1).
# With a libvirt connection (-c, the test driver over a node file): the domain's
# vGPUs come from its migratable XML and vgpuctl's metadata; each of engine,
# qemu-blockers, downtime and post-copy gets a source/target pair that fails it,
# and it alone.  migrate-xml: the target's device (UUID kept, or taken and
# replaced), validated, its guest-visible lines byte-identical to the source's;
# for a domain pinned on node 1 landing on node 0 and for a taken mdev UUID,
# byte for byte the XML the target's hook prints (the new UUID normalized).
#   migrate.sh VGPUCTL SRCDIR
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -u
bin=$(realpath "$1") src=$(realpath "$2")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# hard links where /tmp is on the fixtures' file system (a copy costs ~2 s on a busy
# machine): the test only adds files to these trees, and vgpuctl writes nothing there
copy() { cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2"; cp -a "$1" "$2"; }; }
copy tests/data/hosts/a30-dual-mdev "$tmp/a30"
# copies cost ~2 s each here: the L40S host is only read (migrate-offer writes nothing)
ln -s "$src/tests/data/hosts/vfio-ts-l40s" "$tmp/l40s"
# the tree's every path, kind, size, link target and mtime
snap() { (cd "$1" && find . -printf '%p %y %s %l %T@\n' | sort); }
snap "$tmp/a30" >"$tmp/a30.before"
fail=0

manifest='{"vgpuctl-migrate": 1, "kernel": "6.8.0", "future-key": [1],
 "vgpus": [{"type": "A30-4C", "interface": "mdev", "pci-device": "20b7"},
           {"type": "H100-20C", "interface": "vf"}]}'

# offer HOST: the offer for $manifest on stdout, its exit status checked
offer() {
	printf '%s' "$manifest" | "$bin" --sysroot "$tmp/$1" migrate-offer >"$tmp/out" 2>"$tmp/err"
}

# check WHAT PYTHON-EXPRESSION over the offer o
check() {
	if ! python3 -c 'import json, sys; o = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$tmp/out" "$2"; then
		echo "FAIL: $1: $2 does not hold for:"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

if offer a30; then
	check "A30-4C gets a GPU" 'o["vgpus"][0]["device"] == "0000:3b:00.0"'
	check "the board it would run on" 'o["vgpus"][0]["pci-device"] == "20b7" and o["vgpus"][0]["interface"] == "mdev"'
	check "a type the host lacks" 'o["vgpus"][1]["reason"] == "not-supported" and "device" not in o["vgpus"][1]'
	check "the target's driver version" 'o["driver-version"] == "550.54.16" and o["vgpuctl-migrate"] == 1'
	# the capacity check's device and node; no domain UUID in this manifest: no landing
	check "versions it cannot read are null; the device" 'o["libvirt"] is None and o["qemu"] is None and o["vgpus"][0]["parent"] == "0000:3b:00.4" and o["vgpus"][0]["numa-node"] == 0 and "landing" not in o["vgpus"][0] and "plan" not in o'
else
	echo "FAIL: migrate-offer on the dual-A30 host exited $?"; cat "$tmp/err"; fail=1
fi
if ! snap "$tmp/a30" | cmp -s - "$tmp/a30.before"; then
	echo "FAIL: migrate-offer changed the host tree"; fail=1
fi
if offer l40s; then
	check "no A30 on an L40S host" 'o["vgpus"][0]["reason"] == "not-supported"'
else
	echo "FAIL: migrate-offer on the L40S host exited $?"; cat "$tmp/err"; fail=1
fi

# damaged and oversized manifests: exit 1, one message, nothing on stdout
{ printf '{"vgpuctl-migrate": 1, "vgpus": [], "pad": "'; head -c 70000 /dev/zero | tr '\0' x; printf '"}'; } >"$tmp/big"
for m in '{' '{"vgpuctl-migrate": 9, "vgpus": []}' '[]' "@$tmp/big"; do
	if [ "${m:0:1}" = @ ]; then
		"$bin" --sysroot "$tmp/a30" migrate-offer <"${m:1}" >"$tmp/out" 2>"$tmp/err"
	else
		printf '%s' "$m" | "$bin" --sysroot "$tmp/a30" migrate-offer >"$tmp/out" 2>"$tmp/err"
	fi
	rc=$?
	if [ "$rc" != 1 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
		! grep -q '^vgpuctl: migrate-offer: migration manifest' "$tmp/err"; then
		echo "FAIL: manifest '${m:0:40}': exit $rc, stdout $(wc -c <"$tmp/out") bytes, stderr:"
		cat "$tmp/err"
		fail=1
	fi
done

# migrate-check: a domain on the source with one A30-4C owner record
copy tests/data/hosts/a30-dual-mdev "$tmp/src"
mkdir -p "$tmp/src/var/lib/vgpuctl/owners"
printf 'domain=vm1\ndomain_uuid=11111111-2222-4333-8444-555555555551\ngpu=0000:3b:00.0\nparent=0000:3b:00.4\ninterface=mdev\ntype_id=683\nprofile=A30-4C\nmdev_uuid=aaaaaaaa-2222-4333-8444-555555555551\nlifetime=persistent\n' \
	>"$tmp/src/var/lib/vgpuctl/owners/0000:3b:00.4_aaaaaaaa-2222-4333-8444-555555555551"

# mcheck WANT-EXIT WANT-VERDICT TARGET-ARGS...: run migrate-check vm1, check exit and last line
mcheck() {
	local want=$1 verdict=$2 rc
	shift 2
	"$bin" --sysroot "$tmp/src" migrate-check vm1 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ] || [ "$(tail -n 1 "$tmp/out")" != "$verdict" ]; then
		echo "FAIL: migrate-check vm1 $*: exit $rc (want $want), verdict '$(tail -n 1 "$tmp/out")' (want $verdict):"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}
# line STATUS ID: the check's line says so
line() {
	if ! grep -q "^$1 $2 " "$tmp/out"; then
		echo "FAIL: migrate-check: no '$1 $2' line in:"; cat "$tmp/out"; fail=1
	fi
}
# its mdev's vgpu_params: nothing that blocks a migration
params=$tmp/src/sys/bus/mdev/devices/aaaaaaaa-2222-4333-8444-555555555551/nvidia/vgpu_params
mkdir -p "$(dirname "$params")"
echo 'frame_rate_limiter=0' >"$params"
mcheck 1 unknown --to qemu+ssh://a30/system --offer-command "$bin --sysroot $tmp/a30 migrate-offer"
line PASS vgpu-params
line PASS capacity
line PASS driver-version
line UNKNOWN topology # no NVML under --sysroot: the NVLink widths are not known
line UNKNOWN engine
if grep -q '^FAIL ' "$tmp/out"; then echo "FAIL: a check fails between two dual-A30 hosts:"; cat "$tmp/out"; fail=1; fi
# UVM on: vgpu-params fails, and only it
echo 'frame_rate_limiter=0,enable_uvm=1' >"$params"
mcheck 3 no-go --to qemu+ssh://a30/system --offer-command "$bin --sysroot $tmp/a30 migrate-offer"
line FAIL vgpu-params
if [ "$(grep -c '^FAIL ' "$tmp/out")" != 1 ]; then echo "FAIL: more than vgpu-params fails:"; cat "$tmp/out"; fail=1; fi
grep -q '^FAIL vgpu-params .*enable_uvm=1 vs - — set enable_uvm=0' "$tmp/out" ||
	{ echo "FAIL: vgpu-params does not name enable_uvm:"; cat "$tmp/out"; fail=1; }
echo 'frame_rate_limiter=0' >"$params"
mcheck 3 no-go --to qemu+ssh://l40s/system --offer-command "$bin --sysroot $tmp/l40s migrate-offer"
line FAIL capacity
line FAIL driver-version
grep -q '^FAIL capacity a slot per vGPU: A30-4C vs not-supported — not-supported: ' "$tmp/out" ||
	{ echo "FAIL: capacity does not name why's reason:"; cat "$tmp/out"; fail=1; }
# --json: the same answers as one document
"$bin" --sysroot "$tmp/src" migrate-check vm1 --json --to x --offer-command "$bin --sysroot $tmp/l40s migrate-offer" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] || { echo "FAIL: --json exit $rc"; fail=1; }
check "--json" 'o["verdict"] == "no-go" and [x["status"] for x in o["checks"] if x["id"] == "capacity"] == ["FAIL"] and len(o["checks"]) == 13'
# no way to reach the target: never PASS for a check that compares
mcheck 1 unknown --to qemu:///system
for id in engine interface driver-build driver-version nvidia-compatibility board ecc topology capacity; do line UNKNOWN "$id"; done
grep -q "no way to reach 'qemu:///system'" "$tmp/err" || { echo "FAIL: no word on stderr"; cat "$tmp/err"; fail=1; }
# a target whose command fails: UNKNOWN, and its error on stderr
mcheck 1 unknown --to x --offer-command "$bin --sysroot $tmp/nonexistent migrate-offer"
line UNKNOWN capacity
grep -q "the target gave no offer" "$tmp/err" || { echo "FAIL: no word about the target"; cat "$tmp/err"; fail=1; }
# a domain without vGPU records: no-go, topology says why
"$bin" --sysroot "$tmp/src" migrate-check vm2 --to x --offer-command "$bin --sysroot $tmp/a30 migrate-offer" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" != 3 ] || ! grep -q '^FAIL topology ' "$tmp/out"; then
	echo "FAIL: vm2 (no records): exit $rc"; cat "$tmp/out"; fail=1
fi

# ---- the source domain from libvirt: the test driver over a node file ----
M1=aaaaaaaa-2222-4333-8444-555555555551
# dom NAME MACHINE HOSTDEV-ATTRIBUTES [MORE-DEVICES]: $tmp/NAME.xml holds vm1, an A30-4C
# mdev vGPU in vgpuctl's metadata with its hostdev (the records above say the same)
dom() {
	cat >"$tmp/$1.xml" <<EOF
<node>
<domain type='test'>
  <name>vm1</name>
  <uuid>11111111-2222-4333-8444-555555555551</uuid>
  <metadata>
    <vgpuctl:vgpus xmlns:vgpuctl="urn:vgpuctl:domain:1" owner="11111111-2222-4333-8444-555555555551" node="0">
      <vgpuctl:vgpu profile="A30-4C" type-id="683" interface="mdev" backing="time-sliced" gpu="0000:3b:00.0" vf="0000:3b:00.4" mdev-uuid="$M1"/>
    </vgpuctl:vgpus>
  </metadata>
  <memory unit='KiB'>4194304</memory>
  <vcpu placement='static'>2</vcpu>
  <os><type arch='x86_64' machine='$2'>hvm</type></os>
  <devices>
    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci' $3>
      <source><address uuid='$M1'/></source>
      <alias name='ua-vgpu0'/>
      <address type='pci' domain='0x0000' bus='0x06' slot='0x00' function='0x0'/>
    </hostdev>
    ${4-}
  </devices>
</domain>
</node>
EOF
}
# the target without libvirt (its versions null: loading libvirt costs each run); the
# first run below has it (-c test:///default), to show the target's libvirt version
offer_cmd="$bin --sysroot $tmp/a30 migrate-offer"
# lcheck NODE-FILE WANT-EXIT WANT-VERDICT [ARGS...]: migrate-check vm1 read through -c
lcheck() {
	local node=$1 want=$2 verdict=$3 rc
	shift 3
	"$bin" --sysroot "$tmp/src" -c "test://$tmp/$node.xml" migrate-check vm1 --to x "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ] || [ "$(tail -n 1 "$tmp/out")" != "$verdict" ]; then
		echo "FAIL: migrate-check ($node) $*: exit $rc (want $want), verdict '$(tail -n 1 "$tmp/out")' (want $verdict):"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}
# only ID: the one FAIL line is ID's
only() {
	if [ "$(grep -c '^FAIL ' "$tmp/out")" != 1 ] || ! grep -q "^FAIL $1 " "$tmp/out"; then
		echo "FAIL: not only $1 fails:"; cat "$tmp/out"; fail=1
	fi
}
# a fast link (100000 MiB/s: 41 ms for 4 GiB) so that only the check under test fails
fast=(--bandwidth 100000)
dom good pc-q35-8.2 "display='off'"
lcheck good 1 unknown --offer-command "$bin --sysroot $tmp/a30 -c test:///default migrate-offer" "${fast[@]}"
line PASS qemu-blockers
line WARN downtime # the runtime state is not known without NVML
line PASS post-copy
line PASS capacity
line UNKNOWN engine # the test driver has no QEMU version
grep -q '^UNKNOWN engine .*: libvirt [0-9]*\.[0-9]*\.[0-9]*, QEMU ?, kernel ? vs libvirt [0-9]' "$tmp/out" ||
	{ echo "FAIL: engine does not show libvirt's versions:"; cat "$tmp/out"; fail=1; }
# (the mdev directory made for its vgpu_params above is not the kernel's link: warned about)
if grep -q '^FAIL ' "$tmp/out" || grep -v 'warning: cannot read link' "$tmp/err"; then
	echo "FAIL: a check fails, or a word on stderr:"; cat "$tmp/out"; fail=1
fi
# qemu-blockers: a guest IOMMU; ramfb on a machine type before 8.1 (8.1 is fine); a second VFIO device warns
dom iommu pc-q35-8.2 "display='off'" "<iommu model='intel'/>"
lcheck iommu 3 no-go --offer-command "$offer_cmd" "${fast[@]}"
only qemu-blockers
grep -q '^FAIL qemu-blockers .*: <iommu> vs - — remove the guest <iommu>' "$tmp/out" || { echo "FAIL: iommu not named:"; cat "$tmp/out"; fail=1; }
dom ramfb pc-q35-7.2 "display='on' ramfb='on'"
lcheck ramfb 3 no-go --offer-command "$offer_cmd" "${fast[@]}"
only qemu-blockers
grep -q '^FAIL qemu-blockers .*: ramfb on pc-q35-7.2 vs' "$tmp/out" || { echo "FAIL: ramfb not named:"; cat "$tmp/out"; fail=1; }
dom ramfb81 pc-q35-8.1 "display='on' ramfb='on'"
lcheck ramfb81 1 unknown --offer-command "$offer_cmd" "${fast[@]}"
line PASS qemu-blockers
dom two pc-q35-8.2 "display='off'" "<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x5e' slot='0x00' function='0x2'/></source></hostdev>"
lcheck two 1 unknown --offer-command "$offer_cmd" "${fast[@]}"
line WARN qemu-blockers
# downtime: 4 GiB at 10 Gbit/s is 3437 ms; the domain runs with QEMU's default of 300 ms
lcheck good 3 no-go --offer-command "$offer_cmd"
only downtime
grep -q '^FAIL downtime .*: 4096MiB + state ? at 1192MiB/s = 3437ms vs max downtime 300ms (QEMU.s default) — virsh migrate-setmaxdowntime vm1 4300 ' "$tmp/out" ||
	{ echo "FAIL: downtime's numbers:"; cat "$tmp/out"; fail=1; }
# post-copy: refused
lcheck good 3 no-go --offer-command "$offer_cmd" "${fast[@]}" --postcopy
only post-copy
# engine: a target on kernel 5.10 (the a30 copy, for this run only)
mkdir -p "$tmp/a30/proc/sys/kernel"
echo 5.10.0-28-amd64 >"$tmp/a30/proc/sys/kernel/osrelease"
lcheck good 3 no-go --offer-command "$offer_cmd" "${fast[@]}"
rm "$tmp/a30/proc/sys/kernel/osrelease"
only engine
grep -q '^FAIL engine .*kernel 5.10.0 — upgrade the target to at least kernel 5.18.0' "$tmp/out" || { echo "FAIL: engine's line:"; cat "$tmp/out"; fail=1; }
# vgpu-params: UVM on in the set vgpuctl params keeps (the file reads it off)
sed 's|</vgpuctl:vgpus>|<vgpuctl:params><vgpuctl:param name="enable_uvm" value="1"/></vgpuctl:params></vgpuctl:vgpus>|' \
	"$tmp/good.xml" >"$tmp/uvm.xml"
lcheck uvm 3 no-go --offer-command "$offer_cmd" "${fast[@]}"
only vgpu-params
# a domain without vgpuctl's metadata (its vGPUs are not ours to move): topology fails, and
# the owner records the fixture holds for vm1 are not used with a connection
sed '/<metadata>/,/<\/metadata>/d' "$tmp/good.xml" >"$tmp/nometa.xml"
lcheck nometa 3 no-go --offer-command "$offer_cmd" "${fast[@]}"
only topology
# a -c that cannot connect, a domain libvirt does not have: exit 1, our one message
for c in "test://$tmp/none.xml" test:///default; do
	"$bin" --sysroot "$tmp/src" -c "$c" migrate-check vm1 --to x --offer-command "$offer_cmd" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != 1 ] || [ -s "$tmp/out" ] || [ "$(grep -c '^vgpuctl: migrate-check: ' "$tmp/err")" != 1 ]; then
		echo "FAIL: -c $c: exit $rc:"; cat "$tmp/out" "$tmp/err"; fail=1
	fi
done

# ---- migrate-xml: the XML the target's hook would give ----
# xmlrun NAME TARGET [ARGS]: migrate-xml vm1 into $tmp/NAME.out, stderr $tmp/NAME.err
xmlrun() {
	local name=$1 target=$2
	shift 2
	"$bin" --sysroot "$tmp/src" -c "test://$tmp/good.xml" migrate-xml vm1 --to x \
		--offer-command "$bin --sysroot $tmp/$target migrate-offer" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}
valid() {
	virt-xml-validate "$1" domain >"$tmp/v" 2>&1 || { echo "FAIL: $1 does not validate:"; cat "$tmp/v"; fail=1; }
}
# the UUID is free on the target: nothing changes
xmlrun same a30 || { echo "FAIL: migrate-xml to a30: exit $?"; cat "$tmp/same.err"; fail=1; }
valid "$tmp/same.out"
grep -q 'nothing changes' "$tmp/same.err" || { echo "FAIL: no word that nothing changes:"; cat "$tmp/same.err"; fail=1; }
# another domain holds the UUID and its VF on the target (the a30 copy from now on):
# a new UUID, the next VF
ln -s a30 "$tmp/taken"
mkdir -p "$tmp/taken/var/lib/vgpuctl/owners"
printf 'domain=other\ndomain_uuid=11111111-2222-4333-8444-555555555559\ngpu=0000:3b:00.0\nparent=0000:3b:00.4\ninterface=mdev\ntype_id=683\nprofile=A30-4C\nmdev_uuid=%s\nlifetime=persistent\n' "$M1" \
	>"$tmp/taken/var/lib/vgpuctl/owners/0000:3b:00.4_$M1"
if xmlrun new taken; then
	valid "$tmp/new.out"
	new=$(sed -n "s/^vGPU 1 (A30-4C): mdev UUID $M1 -> \([0-9a-f-]*\)$/\1/p" "$tmp/new.err")
	if [ "${#new}" != 36 ] || [ "$new" = "$M1" ] ||
		! grep -qx 'vGPU 1 (A30-4C): parent 0000:3b:00.4 -> 0000:3b:00.5' "$tmp/new.err" ||
		! grep -q '^vGPU 1 (A30-4C): the mdev UUID is new ' "$tmp/new.err" ||
		[ "$(grep -vc 'warning: cannot read link' "$tmp/new.err")" != 3 ]; then
		echo "FAIL: migrate-xml's summary:"; cat "$tmp/new.err"; fail=1
	fi
	# the source's XML with the host side retargeted (the hostdev's source UUID, our
	# metadata's vGPU), and nothing else, byte for byte
	sed -e "s|<address uuid=\"$M1\"/>|<address uuid=\"$new\"/>|" \
		-e "/<vgpuctl:vgpu /{s|$M1|$new|;s|vf=\"0000:3b:00.4\"|vf=\"0000:3b:00.5\"|}" \
		"$tmp/same.out" >"$tmp/want.out"
	if ! cmp -s "$tmp/want.out" "$tmp/new.out" || cmp -s "$tmp/same.out" "$tmp/new.out"; then
		echo "FAIL: migrate-xml's output is not the source's with the host side retargeted:"
		diff "$tmp/same.out" "$tmp/new.out"; fail=1
	fi
	# -o FILE: the XML in the file, nothing on stdout
	xmlrun file taken -o "$tmp/file.xml"
	if [ -s "$tmp/file.out" ] || ! grep -q 'mdev UUID' "$tmp/file.err" || ! [ -s "$tmp/file.xml" ]; then
		echo "FAIL: migrate-xml -o:"; cat "$tmp/file.err"; fail=1
	fi
	valid "$tmp/file.xml"
else
	echo "FAIL: migrate-xml to a target holding the UUID: exit $?"; cat "$tmp/new.err"; fail=1
fi
# no room on the target (an L40S host): exit 1, why, and no XML
xmlrun none l40s
rc=$?
if [ "$rc" != 1 ] || [ -s "$tmp/none.out" ] || ! grep -q 'no room for vGPU 1 (A30-4C): not-supported' "$tmp/none.err"; then
	echo "FAIL: migrate-xml to the L40S host: exit $rc"; cat "$tmp/none.out" "$tmp/none.err"; fail=1
fi
# the domain comes from libvirt only: --sysroot without -c is refused
"$bin" --sysroot "$tmp/src" migrate-xml vm1 --to x --offer-command "$offer_cmd" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" != 1 ] || ! grep -q 'give -c URI' "$tmp/err"; then echo "FAIL: migrate-xml without -c: exit $rc"; cat "$tmp/err"; fail=1; fi

# ---- migrate-xml prints what the target's hook prints (one decision, migrate-plan.c) ----
# Domains made by `vgpuctl xml` on a source whose A30 3b:00.0 sits on node 1 (pinned there),
# read through the test driver; the target (the a30 copy: 'other' holds $M1 on 3b:00.4)
# puts them on node 0.  vmp: its UUID free there (kept), re-pinned; vmt: its UUID $M1 taken
# (a new one: the one difference, normalized), and the CPUs vmp's incoming record holds
# are left out.  migrate-xml's XML equals, byte for byte, what `hook NAME migrate begin -`
# prints for the same migratable XML (virsh dumpxml --migratable: the hook's stdin).
if command -v virsh >/dev/null; then
	copy tests/data/hosts/a30-dual-mdev "$tmp/psrc"
	for f in "$tmp"/psrc/sys/devices/pci0000:3b/0000:3b:00.*/numa_node; do
		rm -f "$f" && echo 1 >"$f" # a new file: the fixture's is hard-linked
	done
	echo '<node>' >"$tmp/pin.xml"
	for d in vmp:11111111-2222-4333-8444-555555555556:aaaaaaaa-2222-4333-8444-555555555552 \
		vmt:11111111-2222-4333-8444-555555555557:$M1; do
		IFS=: read -r name uuid mdev <<<"$d"
		"$bin" --sysroot "$tmp/psrc" xml --name "$name" --uuid "$uuid" --vcpus 4 --memory 4G \
			--vgpu A30-4C --mdev-uuid "$mdev" 2>"$tmp/err" | sed 's|<domain type="kvm"|<domain type="test"|' >>"$tmp/pin.xml" ||
			{ echo "FAIL: xml $name on the source:"; cat "$tmp/err"; fail=1; }
	done
	echo '</node>' >>"$tmp/pin.xml"
	grep -q 'emulatorpin cpuset="24-25,72-73"' "$tmp/pin.xml" || { echo "FAIL: the source does not pin to node 1:"; grep cpuset "$tmp/pin.xml"; fail=1; }
	for name in vmp vmt; do
		virsh -c "test://$tmp/pin.xml" dumpxml --migratable "$name" >"$tmp/$name.mig" 2>"$tmp/err" ||
			{ echo "FAIL: virsh dumpxml $name:"; cat "$tmp/err"; fail=1; }
		"$bin" --sysroot "$tmp/psrc" -c "test://$tmp/pin.xml" migrate-xml "$name" --to x \
			--offer-command "$bin --sysroot $tmp/a30 migrate-offer" >"$tmp/$name.x" 2>"$tmp/$name.xerr" ||
			{ echo "FAIL: migrate-xml $name: exit $?"; cat "$tmp/$name.xerr"; fail=1; }
		"$bin" --sysroot "$tmp/a30" hook "$name" migrate begin - <"$tmp/$name.mig" >"$tmp/$name.h" 2>"$tmp/err" ||
			{ echo "FAIL: the target's hook on $name: exit $?"; cat "$tmp/err"; fail=1; }
		valid "$tmp/$name.x"
	done
	grep -qx 'host CPUs: 24-25,72-73 -> 0-1,48-49' "$tmp/vmp.xerr" && ! grep -q 'mdev UUID' "$tmp/vmp.xerr" ||
		{ echo "FAIL: vmp's summary (re-pinned to node 0, its UUID kept):"; cat "$tmp/vmp.xerr"; fail=1; }
	grep -q 'nodeset="0"' "$tmp/vmp.x" && ! grep -q 'nodeset="1"' "$tmp/vmp.x" ||
		{ echo "FAIL: vmp not re-pinned to node 0:"; grep nodeset "$tmp/vmp.x"; fail=1; }
	cmp "$tmp/vmp.x" "$tmp/vmp.h" || { echo "FAIL: migrate-xml vmp is not the hook's:"; diff "$tmp/vmp.x" "$tmp/vmp.h"; fail=1; }
	grep -qx 'host CPUs: 24-25,72-73 -> 2-3,50-51' "$tmp/vmt.xerr" && grep -q '^vGPU 1 (A30-4C): the mdev UUID is new' "$tmp/vmt.xerr" ||
		{ echo "FAIL: vmt's summary (a new UUID, vmp's CPUs left out):"; cat "$tmp/vmt.xerr"; fail=1; }
	new=$(sed -n 's|.*<address uuid="\([0-9a-f-]*\)"/>.*|\1|p' "$tmp/vmt.h")
	mine=$(sed -n 's|.*<address uuid="\([0-9a-f-]*\)"/>.*|\1|p' "$tmp/vmt.x")
	[ "${#new}" = 36 ] && [ "$new" != "$M1" ] && [ "$new" != "$mine" ] ||
		{ echo "FAIL: vmt's new UUIDs: hook '$new', migrate-xml '$mine'"; fail=1; }
	sed "s|$mine|$new|g" "$tmp/vmt.x" | cmp - "$tmp/vmt.h" ||
		{ echo "FAIL: migrate-xml vmt is not the hook's (but its new UUID):"; diff <(sed "s|$mine|$new|g" "$tmp/vmt.x") "$tmp/vmt.h"; fail=1; }
else
	echo "no virsh: migrate-xml against the hook's output skipped"
fi
exit $fail
