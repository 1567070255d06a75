#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A plain `virsh migrate --live` through the hook (#28): libvirt calls the
# destination's hook with `NAME migrate begin -` and the migratable XML on
# stdin, takes what it prints as the definition there, and cancels on a
# non-zero exit.  Recorded XML stands for libvirt's: domains made by
# `vgpuctl xml` on a source fixture host, with what libvirt adds to a running
# hostdev (the guest's <address>, <alias>, <rom>) and a pxb on guest node 0.
#   - mdev -> mdev, the UUID free here: kept, nothing printed; prepare makes
#     the incoming record active (vgpus shows it);
#   - mdev -> mdev, the UUID taken here: a new one, the hostdev, our metadata
#     and the pinning rewritten, what the guest sees byte-identical;
#   - VF -> VF: the target's VF; release after a failed incoming start frees;
#   - mdev <-> VF: gated on this host's libvirt library (>= 11.0): refused
#     with one line and nothing written below it (the real library here, and
#     a virGetVersion() stand-in saying 10.2.0); with the stand-in saying
#     11.0.0 the hostdev takes the other form, the guest's children kept;
#   - a domain that is not ours: exit 0, nothing printed;
#   - two migrations racing for the last slot: one wins, the other is
#     refused with one line and has no record;
#   - an incoming record past its deadline is dropped by the next writer.
#   migrate-hook.sh VGPUCTL SRCDIR STANDIN  (VGPU_EMU names the emulator; STANDIN is
#   tests/live/libvirt-version.c built)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
STANDIN=$3
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
for p in xmllint virt-xml-validate; do
	command -v "$p" >/dev/null || {
		echo "no $p: skipped"
		exit 77
	}
done
A30=$SRC/tests/data/hosts/a30-dual-mdev
L40S=$SRC/tests/data/hosts/vfio-ts-l40s
OWN=var/lib/vgpuctl/owners
fail() { emu_fail "$@"; }
U1=11111111-2222-4333-8444-555555555555
U2=22222222-2222-4333-8444-555555555555
U3=33333333-2222-4333-8444-555555555555
U4=44444444-2222-4333-8444-555555555555
U5=55555555-2222-4333-8444-555555555555
U6=66666666-2222-4333-8444-555555555555
U7=77777777-2222-4333-8444-555555555555
M1=aaaaaaaa-0000-4000-8000-000000000001
W=$(mktemp -d)
mkdir "$W/lib"
ln -s "$(realpath "$STANDIN")" "$W/lib/libvirt.so.0" # what dlopen("libvirt.so.0") finds first

# source HOST NAME UUID xml-options...: the domain as libvirt gives it to the destination's hook
source_xml() {
	local host=$1 name=$2 uuid=$3
	shift 3
	"$B" --sysroot "$host" xml --name "$name" --uuid "$uuid" --vcpus 4 --memory 4G "$@" \
		>"$W/$name.made" || fail "xml $name on the source: $*"
	# what a running domain's hostdev has besides its source; a pxb on guest node 0
	sed -e 's|^      </source>|&\n      <alias name="hostdev0"/>\n      <rom bar="off"/>\n      <address type="pci" domain="0x0000" bus="0x05" slot="0x00" function="0x0"/>|' \
		-e 's|^    <controller type="pci" model="pcie-root"/>|&\n    <controller type="pci" index="1" model="pcie-expander-bus">\n      <target busNr="254">\n        <node>0</node>\n      </target>\n    </controller>|' \
		"$W/$name.made" >"$W/$name.xml"
	grep -q 'alias name="hostdev0"' "$W/$name.xml" && grep -q 'pcie-expander-bus' "$W/$name.xml" ||
		fail "$name: the recorded XML lacks what libvirt adds"
}

# hook ROOT NAME [VERSION]: the destination's hook on NAME's recorded XML (VERSION: the
# stand-in's libvirt, major * 1000000 + minor * 1000 + micro); *.out, *.err, *.rc
hook() {
	if [ $# -gt 2 ]; then
		LD_LIBRARY_PATH=$W/lib VGPU_TEST_LIBVIRT_VERSION=$3 \
			"$B" --sysroot "$1" hook "$2" migrate begin - <"$W/$2.xml" >"$W/$2.out" 2>"$W/$2.err"
	else
		"$B" --sysroot "$1" hook "$2" migrate begin - <"$W/$2.xml" >"$W/$2.out" 2>"$W/$2.err"
	fi
	echo $? >"$W/$2.rc"
}

# refused NAME ROOT UUID WHY: exit non-zero, one line naming WHY, nothing printed or recorded
refused() {
	[ "$(cat "$W/$1.rc")" != 0 ] && [ "$(wc -l <"$W/$1.err")" = 1 ] && grep -q "$4" "$W/$1.err" ||
		fail "$1: want one line saying '$4': rc $(cat "$W/$1.rc"): $(cat "$W/$1.err")"
	[ ! -s "$W/$1.out" ] || fail "$1: refused, yet it printed"
	[ -z "$(record "$2" "$3")" ] || fail "$1: refused, yet recorded $(record "$2" "$3")"
}

# guest FILE [display]: what the guest sees, serialized by xmllint (quotes normalized); the
# hostdev's display and ramfb too unless the interface changes (a VF's hostdev has none;
# the mdevs here have display='off')
guest() {
	local show='| /domain/devices/hostdev/@display | /domain/devices/hostdev/@ramfb'

	[ $# -gt 1 ] && show=
	xmllint --xpath "/domain/vcpu | /domain/cpu | /domain/devices/controller | /domain/devices/video |
		/domain/devices/hostdev/address | /domain/devices/hostdev/alias | /domain/devices/hostdev/rom |
		//*[local-name()='vgpu']/@profile $show" "$1"
}

# rewritten NAME [iface]: printed, valid, the guest's view unchanged
rewritten() {
	[ "$(cat "$W/$1.rc")" = 0 ] || fail "$1: migrate begin refused: $(cat "$W/$1.err")"
	[ -s "$W/$1.out" ] || fail "$1: nothing printed, though its devices changed"
	virt-xml-validate "$W/$1.out" domain >/dev/null 2>"$W/$1.valid" ||
		fail "$1: the printed XML does not validate: $(cat "$W/$1.valid")"
	[ "$(guest "$W/$1.xml" "$@")" = "$(guest "$W/$1.out" "$@")" ] ||
		fail "$1: what the guest sees changed: $(diff <(guest "$W/$1.xml" "$@") <(guest "$W/$1.out" "$@"))"
}

# record ROOT UUID: the states of the domain's records ("" none)
record() { grep -l "^domain_uuid=$2\$" "$1/$OWN"/* 2>/dev/null | xargs -r grep -h '^state=' | sort | tr '\n' ' '; }

# ---- mdev -> mdev on an A30 host --------------------------------------------------
source_xml "$A30" vm1 $U1 --vgpu A30-6C --mdev-uuid $M1
source_xml "$A30" vm2 $U2 --vgpu A30-6C --mdev-uuid $M1 # the same UUID: taken once vm1 is there
emu_start "$A30"
trap 'rm -rf "$W"; _emu_exit' EXIT
DST=$EMU_ROOT
hook "$DST" vm1
[ "$(cat "$W/vm1.rc")" = 0 ] || fail "vm1 (UUID free here): $(cat "$W/vm1.err")"
[ ! -s "$W/vm1.out" ] || fail "vm1: the same devices here, yet it printed: $(head -c 300 "$W/vm1.out")"
[ "$(record "$DST" $U1)" = "state=incoming " ] || fail "vm1: records $(record "$DST" $U1)"
grep -qx "mdev_uuid=$M1" "$DST/$OWN"/*"$M1" 2>/dev/null || fail "vm1: its UUID was not kept"
# the ordinary prepare creates the vGPU and makes the record active
"$B" --sysroot "$DST" hook vm1 prepare begin - <"$W/vm1.xml" 2>"$W/err" || fail "prepare vm1: $(cat "$W/err")"
"$B" --sysroot "$DST" hook vm1 started begin - </dev/null || fail "started vm1"
[ -e "$DST/sys/bus/mdev/devices/$M1" ] || fail "prepare did not create mdev $M1"
"$B" --sysroot "$DST" vgpus | grep -q "vm1 .*active" || fail "vgpus: $("$B" --sysroot "$DST" vgpus)"
hook "$DST" vm2
rewritten vm2
NEW=$(xmllint --xpath 'string(/domain/devices/hostdev/source/address/@uuid)' "$W/vm2.out" 2>/dev/null)
[ -n "$NEW" ] && [ "$NEW" != $M1 ] || fail "vm2: the hostdev's UUID is '$NEW', not a new one"
grep -q "mdev-uuid=\"$NEW\"" "$W/vm2.out" || fail "vm2: our metadata does not name $NEW"
grep -q "cpuset=\"0-1,48-49\"" "$W/vm2.out" && fail "vm2: pinned to vm1's CPUs"
[ "$(record "$DST" $U2)" = "state=incoming " ] || fail "vm2: records $(record "$DST" $U2)"
# vm7: a VF A30-6C on its source (no fixture has one: vm1's made into the VF form)
sed -e "s/$U1/$U7/g" -e 's|<name>vm1<|<name>vm7<|' -e "s| mdev-uuid=\"$M1\"||" \
	-e 's|interface="mdev"|interface="vendor-vfio"|' \
	-e 's|type="mdev" model="vfio-pci" display="off"|type="pci" managed="no"|' \
	-e "s|<address uuid=\"$M1\"/>|<address domain=\"0x0000\" bus=\"0x3b\" slot=\"0x00\" function=\"0x4\"/>|" \
	"$W/vm1.xml" >"$W/vm7.xml"
hook "$DST" vm7 10002000
refused vm7 "$DST" $U7 'libvirt is 10.2.0'
hook "$DST" vm7 11000000
rewritten vm7 iface
grep -q '<hostdev mode="subsystem" type="mdev" model="vfio-pci" display="off">' "$W/vm7.out" ||
	fail "vm7: the hostdev is not an mdev's: $(grep -A3 '<hostdev' "$W/vm7.out")"
NEW=$(xmllint --xpath 'string(/domain/devices/hostdev/source/address/@uuid)' "$W/vm7.out" 2>/dev/null)
grep -q "interface=\"mdev\".* mdev-uuid=\"$NEW\"" "$W/vm7.out" || fail "vm7: our metadata does not say mdev $NEW"
[ "$(record "$DST" $U7)" = "state=incoming " ] || fail "vm7: records $(record "$DST" $U7)"

# ---- VF -> VF on an L40S host; mdev -> VF gated on libvirt 11.0 -------------------
source_xml "$L40S" vm3 $U3 --vgpu L40S-8Q --vf c1:00.4
# vm4: an mdev L40S-8Q on its source (no fixture has one: vm3's made into the mdev form)
sed -e "s/$U3/$U4/g" -e 's|<name>vm3<|<name>vm4<|' \
	-e 's|interface="vendor-vfio"\(.*\)vf="0000:c1:00.4"|interface="mdev"\1vf="0000:c1:00.4" mdev-uuid="'$M1'"|' \
	-e 's|type="pci" managed="no"|type="mdev" model="vfio-pci" display="off"|' \
	-e 's|<address domain="0x0000" bus="0xc1" slot="0x00" function="0x4"/>|<address uuid="'$M1'"/>|' \
	"$W/vm3.xml" >"$W/vm4.xml"
emu_start "$L40S"
DST=$EMU_ROOT
printf '<domain type="kvm"><name>other</name><uuid>%s</uuid><memory unit="GiB">1</memory><vcpu>2</vcpu><os><type arch="x86_64" machine="q35">hvm</type></os></domain>\n' $U6 >"$W/other.xml"
"$B" --sysroot "$DST" assign --from "$W/other.xml" -o "$W/other.a.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" ||
	fail "assign other on c1:00.4: $(cat "$W/err")"
hook "$DST" vm3
rewritten vm3
VF=$(xmllint --xpath 'string(/domain/devices/hostdev/source/address/@function)' "$W/vm3.out" 2>/dev/null)
[ -n "$VF" ] && [ "$VF" != 0x4 ] || fail "vm3: still on c1:00.4, which 'other' holds"
# a failed incoming start: prepare created the vGPU, release without started frees it all
"$B" --sysroot "$DST" hook vm3 prepare begin - <"$W/vm3.out" 2>"$W/err" || fail "prepare vm3: $(cat "$W/err")"
"$B" --sysroot "$DST" vgpus | grep -q "vm3 .*active" || fail "vgpus after prepare: $("$B" --sysroot "$DST" vgpus)"
"$B" --sysroot "$DST" hook vm3 release end - <"$W/vm3.out" 2>"$W/err" || fail "release vm3: $(cat "$W/err")"
[ -z "$(record "$DST" $U3)" ] || fail "vm3: records after a failed incoming start: $(record "$DST" $U3)"
"$B" --sysroot "$DST" vgpus | grep -q "vm3" && fail "vgpus still lists vm3"
# mdev -> VF: libvirt >= 11.0 here, else refused with one line and nothing written
hook "$DST" vm4
LIBVIRT=$(virsh --version 2>/dev/null || echo 0)
if [ "${LIBVIRT%%.*}" -ge 11 ] 2>/dev/null; then
	rewritten vm4 iface
else
	refused vm4 "$DST" $U4 '11\.0 or later'
fi
hook "$DST" vm4 10002000
refused vm4 "$DST" $U4 'libvirt is 10.2.0'
hook "$DST" vm4 11000000
rewritten vm4 iface
grep -q '<hostdev mode="subsystem" type="pci" managed="no">' "$W/vm4.out" ||
	fail "vm4: the hostdev is not a VF's: $(grep -A3 '<hostdev' "$W/vm4.out")"
grep -q 'interface="vendor-vfio"' "$W/vm4.out" && ! grep -q "$M1" "$W/vm4.out" ||
	fail "vm4: our metadata still says mdev"
[ "$(record "$DST" $U4)" = "state=incoming " ] || fail "vm4: records $(record "$DST" $U4)"
# not ours: no metadata, exit 0, nothing printed, nothing written
printf '<domain type="kvm"><name>plain</name><uuid>%s</uuid><memory unit="GiB">1</memory><os><type arch="x86_64">hvm</type></os></domain>\n' $U5 >"$W/plain.xml"
hook "$DST" plain
[ "$(cat "$W/plain.rc")" = 0 ] && [ ! -s "$W/plain.out" ] && [ -z "$(record "$DST" $U5)" ] ||
	fail "a domain that is not ours: rc $(cat "$W/plain.rc"), $(cat "$W/plain.err")"

# ---- the last slot: an expired claim dropped, then two migrations race -------------
# (migrate begin writes only records: plain copies of the fixture, no emulator)
source_xml "$L40S" vm5 $U5 --vgpu L40S-48Q
source_xml "$L40S" vm6 $U6 --vgpu L40S-48Q
cp -a "$L40S" "$W/race"
mkdir -p "$W/race/$OWN"
# a migration that never came, written as src/lib/records.c writes one, its deadline long past
cat >"$W/race/$OWN/0000:c1:00.7" <<EOF
domain=ghost
domain_uuid=$U4
gpu=0000:c1:00.0
parent=0000:c1:00.7
interface=vendor-vfio
type_id=1155
profile=L40S-48Q
mdev_uuid=
lifetime=persistent
state=incoming
deadline=1000
EOF
hook "$W/race" vm5
[ "$(cat "$W/vm5.rc")" = 0 ] || fail "vm5 behind an expired claim: $(cat "$W/vm5.err")"
[ ! -e "$W/race/$OWN/0000:c1:00.7" ] || fail "the expired incoming record is still there"
rm -f "$W/race/$OWN"/*
hook "$W/race" vm5 &
p5=$!
hook "$W/race" vm6 &
wait $p5 $! # not the emulator's
won=0
for d in vm5 vm6; do
	if [ "$(cat "$W/$d.rc")" = 0 ]; then
		won=$((won + 1))
	else
		[ "$(wc -l <"$W/$d.err")" = 1 ] || fail "$d refused with more than one line: $(cat "$W/$d.err")"
		u=$U5
		[ $d = vm6 ] && u=$U6
		[ -z "$(record "$W/race" $u)" ] || fail "$d refused, yet recorded $(record "$W/race" $u)"
	fi
done
[ $won = 1 ] || fail "$won of two migrations got the last L40S-48Q slot"
[ "$(find "$W/race/$OWN" -type f | wc -l)" = 1 ] || fail "records after the race: $(ls "$W/race/$OWN")"

emu_stop || fail "the emulator failed"
[ "$EMU_FAILS" = 0 ] && echo "ok: migrate begin on every interface pair, the race, an expired claim"
exit $((EMU_FAILS > 0))
