#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One ownership model, on the kernel emulator (tests/emu): the owner records
# are the one truth, and every run repairs what an interrupted one left.
#   - an mdev UUID is one domain's: a second claim is refused, naming the owner;
#   - release drops its claim when the hardware no longer matches (VF gone,
#     another vGPU there), frees only what matches and says what it left;
#   - an mdev is never removed from a parent its record does not name, nor
#     while its iommufd cdev is open;
#   - a damaged record is listed, with its file;
#   - temporary files of killed writers do not stay;
#   - an assign killed after its claims is repaired by the next one;
#   - assign again with what the domain has is a no-op (exit 0), not an error.
#   ownership.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015,SC2119 # "A && B || fail": fail when either check fails; emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
L40S=$SRC/tests/data/hosts/vfio-ts-l40s
A30=$SRC/tests/data/hosts/a30-dual-mdev
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
domain() { # NAME UUID
	cat <<EOF
<domain type='kvm'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
EOF
}
U1=11111111-2222-4333-8444-555555555555
U2=22222222-2222-4333-8444-555555555555
M=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f
OWN=var/lib/vgpuctl/owners

# ---- one mdev UUID, two domains: the second claim is refused, naming the first
emu_start "$A30"
W=$EMU_DIR
domain m1 $U1 >"$W/m1.xml"
domain m2 $U2 >"$W/m2.xml"
v assign --from "$W/m1.xml" -o "$W/m1a.xml" --vgpu A30-6C --mdev-uuid $M ||
	fail "assign m1: $(cat "$EMU_DIR/emu.err")"
v assign --from "$W/m2.xml" -o "$W/m2a.xml" --vgpu A30-6C --mdev-uuid $M 2>"$W/err" &&
	fail "a second domain claimed mdev $M"
grep -q "mdev UUID $M is already domain 'm1''s ($U1)" "$W/err" || fail "claim twice: $(cat "$W/err")"
[ "$(find "$EMU_ROOT/$OWN" -name "*_$M" | wc -l)" = 1 ] || fail "two records name $M"
[ ! -e "$W/m2a.xml" ] || fail "m2's definition was written"
# the mdev moved by hand to another parent (same UUID): release frees nothing there
P=$(sed -n 's/.*vf="\([^"]*\)".*/\1/p' "$W/m1a.xml")
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$M/remove" ||
	fail "could not remove mdev $M by hand"
echo $M >"$EMU_ROOT/sys/bus/pci/devices/0000:3b:00.7/mdev_supported_types/nvidia-684/create" ||
	fail "could not make mdev $M on 0000:3b:00.7 by hand"
[ "$P" != 0000:3b:00.7 ] || fail "the test needs m1 on another VF than 3b:00.7"
emu_clear_journal
v release --from "$W/m1a.xml" -o "$W/m1r.xml" 2>"$W/err" || fail "release m1: $(cat "$W/err")"
grep -q "mdev $M is on 0000:3b:00.7, not on $P as recorded; not freed" "$W/err" ||
	fail "moved mdev: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "release wrote to an mdev it does not own: $(emu_writes)"
[ -d "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "the moved mdev was removed"
[ -z "$(ls -A "$EMU_ROOT/$OWN")" ] || fail "m1's record was kept: $(ls -A "$EMU_ROOT/$OWN")"
grep -q vgpuctl:vgpus "$W/m1r.xml" && fail "release left our metadata in m1"
v vgpus | grep -q "0000:3b:00.7 .*$M .*orphan$" || fail "the moved mdev is not an orphan: $(v vgpus)"
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$M/remove"
# an mdev whose iommufd cdev is open is never removed
v assign --from "$W/m1.xml" -o "$W/m1a.xml" --vgpu A30-6C --mdev-uuid $M || fail "assign m1 again"
C=$(find "$EMU_ROOT/sys/bus/mdev/devices/$M/vfio-dev/" -mindepth 1 -maxdepth 1 -printf "%f\n" 2>/dev/null | head -1)
if [ -n "$C" ]; then
	mkdir -p "$EMU_BACKING/proc/4343/fd"
	ln -s "/dev/vfio/devices/$C" "$EMU_BACKING/proc/4343/fd/5"
	emu_clear_journal
	v release --from "$W/m1a.xml" -o "$W/m1r.xml" 2>"$W/err" && fail "released an open mdev"
	grep -q "is still open (/dev/vfio/devices/$C); not freed" "$W/err" || fail "cdev open: $(cat "$W/err")"
	[ -z "$(emu_writes)" ] || fail "remove written to an mdev open through its cdev"
	rm -r "$EMU_BACKING/proc/4343"
else
	echo "note: the emulator gives mdevs no vfio-dev/ (iommufd cdev): that check is skipped"
fi
v release --from "$W/m1a.xml" -o "$W/m1r.xml" || fail "release m1 after the cdev closed"
# two assign --from runs without -c: the second avoids the CPUs the first one's record holds
v assign --from "$W/m1.xml" -o "$W/p1.xml" --vgpu A30-6C --gpu 3b:00.0 || fail "assign m1 pinned"
v assign --from "$W/m2.xml" -o "$W/p2.xml" --vgpu A30-6C --gpu 3b:00.0 || fail "assign m2 pinned"
grep -q "^cpus=" "$EMU_ROOT/$OWN"/*_* || fail "no record holds the CPUs it pinned"
pins() { sed -n 's/.*<vcpupin vcpu=.[0-9]*. cpuset=.\([0-9]*\)..*/\1/p' "$1" | sort; }
both=$(comm -12 <(pins "$W/p1.xml" | sort) <(pins "$W/p2.xml" | sort))
[ -n "$(pins "$W/p1.xml")" ] && [ -z "$both" ] || fail "m1 and m2 share CPUs: $both"
emu_stop

# ---- vendor VFIO: release when the VF is gone, or holds a vGPU that is not ours
emu_start "$L40S"
W=$EMU_DIR
domain vm1 $U1 >"$W/vm1.xml"
domain vm2 $U2 >"$W/vm2.xml"
v assign --from "$W/vm1.xml" -o "$W/vm1a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign vm1"
v assign --from "$W/vm2.xml" -o "$W/vm2a.xml" --vgpu L40S-8Q --vf c1:00.5 || fail "assign vm2"
# someone frees vm2's vGPU by hand and makes another type there
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type"
echo 1158 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type"
emu_clear_journal
v release --from "$W/vm2a.xml" -o "$W/vm2r.xml" 2>"$W/err" || fail "release vm2: $(cat "$W/err")"
grep -q "VF 0000:c1:00.5 holds vGPU type 1158, not 1151 as recorded; not freed; the record is dropped" \
	"$W/err" || fail "foreign vGPU: $(cat "$W/err")"
[ "$(cat "$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type")" = 1158 ] ||
	fail "the foreign vGPU was freed"
[ ! -e "$EMU_ROOT/$OWN/0000:c1:00.5" ] || fail "vm2's record blocks the VF"
echo 0 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type"
# the VF of vm1 disappears (VFs disabled): release still drops the claim
link=$(readlink "$EMU_BACKING/sys/bus/pci/devices/0000:c1:00.4")
mv "$EMU_BACKING/sys/devices/pci0000:c1/0000:c1:00.4" "$W/vf-away"
rm -f "$EMU_BACKING/sys/bus/pci/devices/0000:c1:00.4"
v release --from "$W/vm1a.xml" -o "$W/vm1r.xml" 2>"$W/err" || fail "release vm1: $(cat "$W/err")"
grep -q "VF 0000:c1:00.4 is gone; nothing freed; the record is dropped" "$W/err" ||
	fail "VF gone: $(cat "$W/err")"
[ ! -e "$EMU_ROOT/$OWN/0000:c1:00.4" ] || fail "vm1's record stayed"
mv "$W/vf-away" "$EMU_BACKING/sys/devices/pci0000:c1/0000:c1:00.4" # the VF is back, free
echo 0 >"$EMU_BACKING/sys/devices/pci0000:c1/0000:c1:00.4/nvidia/current_vgpu_type"
ln -s "$link" "$EMU_BACKING/sys/bus/pci/devices/0000:c1:00.4"

# ---- a definition that still names a VF another domain owns does not start with it
v assign --from "$W/vm1.xml" -o "$W/vm1b.xml" --vgpu L40S-8Q --vf c1:00.7 || fail "assign vm1 (again)"
# a copy of vm1's definition under another name and UUID: its hostdev is vm1's VF
sed -e 's|<name>vm1</name>|<name>copy</name>|' -e "s|$U1|66666666-2222-4333-8444-555555555555|g" \
	"$W/vm1b.xml" >"$W/copy.xml"
"$B" --sysroot "$EMU_ROOT" hook copy prepare begin - <"$W/copy.xml" 2>"$W/err" &&
	fail "a domain started with another domain's VF"
grep -q "prepare copy: its definition names VF 0000:c1:00.7, which domain 'vm1' ($U1) holds" \
	"$W/err" || fail "stale hostdev: $(cat "$W/err")"
"$B" --sysroot "$EMU_ROOT" hook vm1 prepare begin - <"$W/vm1b.xml" || fail "vm1's own prepare"
v release --from "$W/vm1b.xml" -o "$W/vm1r.xml" || fail "release vm1 (again)"

# ---- a damaged record: listed with its state and file, and its VF stays taken
echo garbage >"$EMU_ROOT/$OWN/0000:c1:00.6"
v vgpus >"$W/vgpus" 2>"$W/err"
grep -q "^0000:c1:00.0 0000:c1:00.6 vendor-vfio .*damaged$" "$W/vgpus" || fail "damaged: $(cat "$W/vgpus")"
v --json vgpus 2>/dev/null | grep -q "\"record\": \"$EMU_ROOT/$OWN/0000:c1:00.6\"" ||
	fail "vgpus --json does not name the damaged record's file"
v plan --name p --vgpu L40S-8Q --vcpus 2 --memory 1G --vf c1:00.6 >/dev/null 2>&1 &&
	fail "a VF whose record is damaged was planned"
rm "$EMU_ROOT/$OWN/0000:c1:00.6"

# ---- temporary files of killed writers go with the next write once a minute old; a
# live writer's stay, and so does a fresh one whose PID names nothing here (a writer
# in another PID namespace)
touch -d '2 minutes ago' "$EMU_ROOT/$OWN/.0000:c1:00.7.2147483646.tmp"
: >"$EMU_ROOT/$OWN/.0000:c1:00.5.2147483645.tmp"
sleep 1000 &
live=$!
: >"$EMU_ROOT/$OWN/.0000:c1:01.0.$live.tmp"
v assign --from "$W/vm1.xml" -o "$W/vm1a.xml" --vgpu L40S-8Q --vf c1:00.6 || fail "assign vm1 on c1:00.6"
[ ! -e "$EMU_ROOT/$OWN/.0000:c1:00.7.2147483646.tmp" ] || fail "a dead writer's temporary file stayed"
[ -e "$EMU_ROOT/$OWN/.0000:c1:00.5.2147483645.tmp" ] ||
	fail "a fresh temporary file of a PID not seen here was removed"
rm -f "$EMU_ROOT/$OWN/.0000:c1:00.5.2147483645.tmp"
[ -e "$EMU_ROOT/$OWN/.0000:c1:01.0.$live.tmp" ] || fail "a live writer's temporary file was removed"
kill $live
rm -f "$EMU_ROOT/$OWN/.0000:c1:01.0.$live.tmp"

# ---- an assign killed after its claim and create, before the definition was written:
# the next assign of that domain keeps what it asks for, undoes anything else, so the
# domain never holds two
v assign --from "$W/vm2.xml" -o "$W/lost.xml" --vgpu L40S-8Q || fail "assign vm2 (to be lost)"
rm "$W/lost.xml" # the run "died" before -o: vm2.xml has no vGPU of ours
emu_clear_journal
v assign --from "$W/vm2.xml" -o "$W/vm2a.xml" --vgpu L40S-8Q 2>"$W/err" || fail "assign vm2 again"
grep -q "'vm2' already holds L40S-8Q on .*: kept" "$W/err" || fail "keep: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "the same request again wrote: $(emu_writes)"
[ "$(v vgpus | grep -c " vm2 ")" = 1 ] || fail "vm2 holds more than one vGPU: $(v vgpus)"
rm "$W/vm2a.xml"
v assign --from "$W/vm2.xml" -o "$W/vm2a.xml" --vgpu L40S-4Q 2>"$W/err" || fail "assign vm2 4Q"
grep -q "an earlier assign of 'vm2' did not finish: undoing its L40S-8Q" "$W/err" ||
	fail "repair: $(cat "$W/err")"
[ "$(v vgpus | grep -c " vm2 ")" = 1 ] || fail "vm2 holds more than one vGPU: $(v vgpus)"
emu_stop

# ---- assign is idempotent: the same profiles again change nothing and exit 0;
# other profiles, or a claim the records no longer back, are refused
emu_start "$A30"
U3=33333333-2222-4333-8444-555555555555
domain vm3 $U3 >"$EMU_DIR/vm3.xml"
v assign --from "$EMU_DIR/vm3.xml" -o "$EMU_DIR/vm3.a" --vgpu A30-6C 2>/dev/null || fail "assign vm3"
emu_clear_journal
v assign --from "$EMU_DIR/vm3.a" -o "$EMU_DIR/vm3.b" --vgpu a30-6c 2>"$EMU_DIR/err" ||
	fail "assign with the profile vm3 has: $(cat "$EMU_DIR/err")"
cmp -s "$EMU_DIR/vm3.a" "$EMU_DIR/vm3.b" || fail "assign with what vm3 has changed its definition"
grep -q "'vm3' already has A30-6C: nothing to do" "$EMU_DIR/err" || fail "no-op not said: $(cat "$EMU_DIR/err")"
[ -z "$(emu_writes)" ] || fail "the no-op assign wrote: $(emu_writes)"
# every spelling that names the type is the same request (one matcher, type IDs compared)
for spec in "GRID A30-6C" "NVIDIA A30-6C" 684 nvidia-684; do
	v assign --from "$EMU_DIR/vm3.a" -o "$EMU_DIR/vm3.b" --vgpu "$spec" 2>"$EMU_DIR/err" ||
		fail "assign again as '$spec': $(cat "$EMU_DIR/err")"
done
[ -z "$(emu_writes)" ] || fail "a no-op assign wrote: $(emu_writes)"
v assign --from "$EMU_DIR/vm3.a" -o "$EMU_DIR/vm3.c" --vgpu A30-4C 2>"$EMU_DIR/err" &&
	fail "assign of another profile over vm3's was accepted"
grep -q "already has other vGPUs from vgpuctl (A30-6C); release them first" "$EMU_DIR/err" ||
	fail "refusal: $(cat "$EMU_DIR/err")"
rm -f "$EMU_ROOT/$OWN"/*
v assign --from "$EMU_DIR/vm3.a" -o "$EMU_DIR/vm3.d" --vgpu A30-6C 2>/dev/null &&
	fail "assign over metadata no record backs was taken for a no-op"
emu_stop

# ---- a definition used as a template is input, never an owner
emu_start "$A30"
W=$EMU_DIR
U4=44444444-2222-4333-8444-555555555555
domain vm1 $U1 >"$W/vm1.xml"
v assign --from "$W/vm1.xml" -o "$W/vm1a.xml" --vgpu A30-6C 2>/dev/null || fail "assign vm1"
M1=$(sed -n 's/.*mdev-uuid="\([^"]*\)".*/\1/p' "$W/vm1a.xml")
held() { # DOMAIN UUID MDEV: its one record, and the mdev there
	[ "$(grep -l "^domain_uuid=$2$" "$EMU_ROOT/$OWN"/* 2>/dev/null | wc -l)" = 1 ] &&
		grep -q "^domain=$1$" "$(grep -l "^domain_uuid=$2$" "$EMU_ROOT/$OWN"/*)" &&
		[ -d "$EMU_ROOT/sys/bus/mdev/devices/$3" ]
}
# cloned from the plain template vm1 was assigned from: vm1 keeps its vGPU
v assign --from "$W/vm1.xml" --name vm2 --uuid $U2 -o "$W/vm2a.xml" --vgpu A30-6C 2>"$W/err" ||
	fail "clone vm2 from vm1's template: $(cat "$W/err")"
held vm1 $U1 "$M1" || fail "the clone took vm1's vGPU: $(cat "$W/err"; v vgpus)"
M2=$(sed -n 's/.*mdev-uuid="\([^"]*\)".*/\1/p' "$W/vm2a.xml")
[ -n "$M2" ] && [ "$M2" != "$M1" ] && held vm2 $U2 "$M2" || fail "vm2 has no vGPU of its own"
# cloned from vm1's assigned definition: vm4 gets its own name, UUID and vGPU
v assign --from "$W/vm1a.xml" --name vm4 --uuid $U4 -o "$W/vm4a.xml" --vgpu A30-6C 2>"$W/err" ||
	fail "clone vm4 from vm1's definition: $(cat "$W/err")"
grep -q "<name>vm4</name>" "$W/vm4a.xml" && grep -q "<uuid>$U4</uuid>" "$W/vm4a.xml" &&
	grep -q "owner=\"$U4\"" "$W/vm4a.xml" || fail "vm4 was written as vm1: $(cat "$W/vm4a.xml")"
grep -q "$M1" "$W/vm4a.xml" && fail "vm4's definition names vm1's mdev $M1"
M4=$(sed -n 's/.*mdev-uuid="\([^"]*\)".*/\1/p' "$W/vm4a.xml")
held vm4 $U4 "$M4" && held vm1 $U1 "$M1" || fail "clone of an assigned definition: $(v vgpus)"
# a clone that keeps the template's UUID is another domain with vm1's UUID: refused
v assign --from "$W/vm1.xml" --name vm5 -o "$W/vm5a.xml" --vgpu A30-6C 2>"$W/err" &&
	fail "a clone with vm1's UUID was assigned"
grep -q "UUID $U1 is domain 'vm1''s" "$W/err" || fail "same UUID: $(cat "$W/err")"
held vm1 $U1 "$M1" || fail "a clone with vm1's UUID took its vGPU"
# the same clone run again (Ansible, Terraform) while vm2 runs: nothing changes
emu_fault "open $M2"
emu_clear_journal
v assign --from "$W/vm1.xml" --name vm2 --uuid $U2 -o "$W/vm2b.xml" --vgpu A30-6C 2>"$W/err" ||
	fail "the clone again: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "the clone again wrote: $(emu_writes)"
cmp -s "$W/vm2a.xml" "$W/vm2b.xml" || fail "the clone again: $(diff "$W/vm2a.xml" "$W/vm2b.xml")"
held vm2 $U2 "$M2" || fail "the clone again changed vm2's vGPU"
emu_fault -r
# vm1 redefined under its name with a new UUID (its definition copied): release frees
# what its former UUID holds; from a fresh definition it says what it leaves
U7=77777777-2222-4333-8444-555555555555
sed "s|<uuid>$U1</uuid>|<uuid>$U7</uuid>|" "$W/vm1a.xml" >"$W/vm1-new.xml"
v release --from "$W/vm1-new.xml" -o "$W/vm1r.xml" 2>"$W/err" || fail "release redefined vm1: $(cat "$W/err")"
grep -q "'vm1' was redefined with UUID $U7" "$W/err" || fail "redefined: $(cat "$W/err")"
grep -q "^domain_uuid=$U1$" "$EMU_ROOT/$OWN"/* && fail "vm1's former record stayed"
[ ! -d "$EMU_ROOT/sys/bus/mdev/devices/$M1" ] || fail "vm1's former vGPU stayed"
grep -q vgpuctl:vgpus "$W/vm1r.xml" && fail "release left our metadata in the redefined vm1"
domain vm2 $U7 >"$W/vm2-new.xml"
v release --from "$W/vm2-new.xml" -o "$W/vm2r.xml" 2>"$W/err" || fail "release fresh vm2: $(cat "$W/err")"
grep -q "A30-6C on .* is recorded for a domain 'vm2' with UUID $U2, not this one's $U7; not freed" \
	"$W/err" || fail "a namesake's records were passed over in silence: $(cat "$W/err")"
held vm2 $U2 "$M2" || fail "release of a namesake without proof freed vm2's vGPU"
emu_stop

# ---- the hook moves an mdev whose parent was taken after a reboot: the record follows it,
# never lost on the way, and assign and release still know the vGPU by its mdev UUID
emu_start "$A30"
W=$EMU_DIR
X=abababab-2222-4333-8444-555555555555
hook() { "$B" --sysroot "$EMU_ROOT" hook vm1 prepare begin - <"$W/vm1a.xml"; }
recs_of() { grep -l "^mdev_uuid=$1$" "$EMU_ROOT/$OWN"/* 2>/dev/null | wc -l; }
domain vm1 $U1 >"$W/vm1.xml"
v assign --from "$W/vm1.xml" -o "$W/vm1a.xml" --vgpu A30-6C --mdev-uuid $M 2>/dev/null ||
	fail "assign vm1"
P=$(sed -n 's/.*vf="\([^"]*\)".*/\1/p' "$W/vm1a.xml")
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$M/remove" # a reboot
echo $X >"$EMU_ROOT/sys/bus/pci/devices/$P/mdev_supported_types/nvidia-684/create" ||
	fail "could not take $P by hand"
# the new record cannot be written (ENOSPC): the old one stays
emu_fault "fail create var/lib/vgpuctl/owners/* ENOSPC"
hook 2>"$W/err" && fail "prepare moved the mdev without writing its record"
[ "$(recs_of $M)" = 1 ] || fail "a failed move left $(recs_of $M) records of $M: $(cat "$W/err")"
emu_fault -r
hook 2>"$W/err" || fail "prepare vm1 (move): $(cat "$W/err")"
Q=$(sed -n 's/^parent=//p' "$(grep -l "^mdev_uuid=$M$" "$EMU_ROOT/$OWN"/*)")
[ "$(recs_of $M)" = 1 ] && [ -n "$Q" ] && [ "$Q" != "$P" ] || fail "after the move: $(v vgpus)"
# a move killed between its new record and dropping the old: the next prepare keeps one
sed "s/^parent=.*/parent=$P/" "$EMU_ROOT/$OWN/${Q}_$M" >"$EMU_ROOT/$OWN/${P}_$M"
hook 2>"$W/err" || fail "prepare with two records of $M: $(cat "$W/err")"
[ "$(recs_of $M)" = 1 ] && [ -e "$EMU_ROOT/$OWN/${Q}_$M" ] ||
	fail "two records of $M after prepare: $(ls "$EMU_ROOT/$OWN")"
[ -d "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "the moved mdev is gone"
# assign again is the no-op it was before the move
emu_clear_journal
v assign --from "$W/vm1a.xml" -o "$W/vm1b.xml" --vgpu A30-6C 2>"$W/err" ||
	fail "assign after the move: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "assign after the move wrote: $(emu_writes)"
# release --vf with the VF the definition names frees the vGPU where it is now
v release --from "$W/vm1a.xml" --vf "$P" -o "$W/vm1r.xml" 2>"$W/err" ||
	fail "release --vf $P: $(cat "$W/err")"
[ ! -d "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "release --vf $P left mdev $M on $Q"
[ "$(recs_of $M)" = 0 ] || fail "release --vf $P left the claim on $Q"
grep -q "$M" "$W/vm1r.xml" && fail "release --vf $P left the hostdev of $M"
emu_stop

[ $EMU_FAILS = 0 ] && echo "ok: ownership (mdev UUIDs, stale claims, damaged records, temp files, repair, templates, moved mdevs, redefined domains)"
exit $((EMU_FAILS > 0))
