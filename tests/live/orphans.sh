#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Orphans with evidence and the reaper, on the kernel emulator (tests/emu), on a
# mixed host:
#   - vgpus --orphans classes each vGPU: in-use (a process holds its VFIO group),
#     foreign (another domain names it, no record), stale (its record's domain is
#     gone), orphan (nobody names or holds it), owned (its domain names it);
#   - without a connection the domain evidence is unknown and nothing is an
#     orphan or stale;
#   - release --orphans --stale frees exactly the orphan and the stale one;
#   - evidence that changes after a dry run (a process opens the orphan) keeps it;
#   - /proc that cannot be read whole refuses the run, nothing freed;
#   - a vGPU whose free failed is wedged: left, plan and assign skip its parent until
#     release --clear-wedged (orphans-vfio.sh: the rest on a vendor-VFIO host).
#   orphans.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015,SC2119 # "A && B || fail": fail when either check fails; emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
A30=$SRC/tests/data/hosts/a30-dual-mdev
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
domain() { # NAME UUID [MDEV]
	echo "<domain type='kvm'><name>$1</name><uuid>$2</uuid><memory unit='MiB'>1024</memory><vcpu>2</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
	[ -z "${3:-}" ] || echo "<devices><hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='$3'/></source></hostdev></devices>"
	echo "</domain>"
}
mk() { # PARENT TYPE UUID: an mdev no record claims
	echo "$3" >"$EMU_ROOT/sys/bus/pci/devices/$1/mdev_supported_types/$2/create" || fail "create $3 on $1"
}
hold() { # PID UUID: the process holds the mdev's VFIO group open
	local g
	g=$(basename "$(readlink "$EMU_ROOT/sys/bus/mdev/devices/$2/iommu_group")")
	mkdir -p "$EMU_BACKING/proc/$1/fd"
	ln -s "/dev/vfio/$g" "$EMU_BACKING/proc/$1/fd/5"
}
U1=11111111-2222-4333-8444-555555555551
U2=11111111-2222-4333-8444-555555555552
U3=11111111-2222-4333-8444-555555555553
MS=aaaaaaaa-0000-4000-8000-000000000001 # stale: its record's domain is gone
MU=aaaaaaaa-0000-4000-8000-000000000002 # in use
MO=aaaaaaaa-0000-4000-8000-000000000003 # owned: its domain names it
MF=bbbbbbbb-0000-4000-8000-000000000001 # foreign
MX=bbbbbbbb-0000-4000-8000-000000000002 # orphan
MR=bbbbbbbb-0000-4000-8000-000000000003 # orphan, opened after the dry run

emu_start "$A30"
W=$EMU_DIR
for d in "gone $U1 $MS 0000:3b:00.4" "busy $U2 $MU 0000:3b:00.5" "own $U3 $MO 0000:3b:00.6"; do
	# shellcheck disable=SC2086 # the words of one line
	set -- $d
	domain "$1" "$2" >"$W/$1.xml"
	v assign --from "$W/$1.xml" -o "$W/$1-a.xml" --vgpu A30-6C --vf "$4" --mdev-uuid "$3" 2>"$W/err" ||
		fail "assign $1: $(cat "$W/err")"
done
T=$(basename "$(readlink "$EMU_ROOT/sys/bus/mdev/devices/$MS/mdev_type")")
mk 0000:3b:00.7 "$T" $MF
mk 0000:af:00.4 nvidia-690 $MX
mk 0000:af:00.5 nvidia-690 $MR
hold 4242 $MU
# the test driver's node: the owned domain as assign made it, and another manager's
{
	echo "<node>"
	sed -e '/^<?xml/d' -e "s/<domain type=.kvm./<domain type='test'/" "$W/own-a.xml"
	domain other 22222222-2222-4333-8444-555555555555 $MF | sed "s/type='kvm'/type='test'/"
} >"$W/node0.xml"
{
	cat "$W/node0.xml"
	domain late 33333333-2222-4333-8444-555555555555 $MR | sed "s/type='kvm'/type='test'/"
	echo "</node>"
} >"$W/node-late.xml"
echo "</node>" >>"$W/node0.xml"
cp "$W/node0.xml" "$W/node.xml"
C=test://$W/node.xml
cls() { # OUT MDEV CLASS: the row of MDEV in OUT has CLASS
	grep -q "$2 $3 " "$1" || fail "$2 is not $3: $(cat "$1")"
}
gone() { [ ! -e "$EMU_ROOT/sys/bus/mdev/devices/$1" ]; }

# ---- the evidence and the classes
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err" || fail "vgpus --orphans: $(cat "$W/err")"
cls "$W/o" $MS "stale  *gone  *none  *none"
cls "$W/o" $MU "in-use  *busy  *none  *4242"
cls "$W/o" $MO "owned  *own  *own"
cls "$W/o" $MF "foreign  *none  *other"
cls "$W/o" $MX "orphan  *none  *none  *none"
v -c "$C" vgpus --orphans --grace 0 --json >"$W/j" || fail "vgpus --orphans --json"
grep -q '"class": *"orphan"' "$W/j" && grep -q '"holder_pid": *"4242"' "$W/j" || fail "json: $(cat "$W/j")"
# younger than the default grace: not an orphan yet
v -c "$C" vgpus --orphans >"$W/o" 2>&1
cls "$W/o" $MX young
# no connection: the domain evidence is unknown, nothing is stale or an orphan
v vgpus --orphans >"$W/o" 2>"$W/err"
grep -q 'domains that name vGPUs are unknown' "$W/err" || fail "no notice: $(cat "$W/err")"
! grep -q ' orphan \| stale ' "$W/o" && cls "$W/o" $MS unknown || fail "unknown evidence: $(cat "$W/o")"

# ---- dry run, then the evidence changes: a domain defined meanwhile names an orphan the
# dry run listed (the reaper reads the evidence again), a process opens another
emu_clear_journal
v -c "$C" release --orphans --stale --grace 0 --dry-run >"$W/o" 2>"$W/err" || fail "dry run: $(cat "$W/err")"
grep -q '^would free 3 vGPUs$' "$W/o" && grep -q "would free orphan mdev $MR on 0000:af:00.5" "$W/err" ||
	fail "dry run: $(cat "$W/o" "$W/err")"
[ -z "$(emu_writes)" ] || fail "the dry run wrote: $(emu_writes)"
cp "$W/node-late.xml" "$W/node.xml"
# and while the stale one's free is under way, a process opens the orphan: read again before
# its write, it is left
emu_fault "delay sys/bus/mdev/devices/$MS/remove 500"
# the vgpu_params notes of the stale one's domain and the owned one's (as params keeps them)
mkdir -p "$EMU_ROOT/var/lib/vgpuctl/params"
for u in $U1 $U3; do echo "enable_uvm=1" >"$EMU_ROOT/var/lib/vgpuctl/params/$u"; done
(
	# once the reaper holds the stale one's GPU lock (its scan and delayed write under way)
	for _ in $(seq 200); do
		flock -n "$EMU_ROOT/run/vgpuctl/gpu/0000:3b:00.0/lock" true 2>/dev/null || break
		sleep 0.02
	done
	hold 4343 $MX
) &
HP=$!
v -c "$C" release --orphans --stale --grace 0 >"$W/o" 2>"$W/err" || fail "release --orphans --stale: $(cat "$W/err")"
wait $HP
emu_fault -r
grep -q "left mdev $MX on 0000:af:00.4: it is in-use now" "$W/err" || fail "not read again: $(cat "$W/err")"
grep -q '^freed 1 vGPU$' "$W/o" || fail "freed: $(cat "$W/o" "$W/err")"
gone $MS || fail "the stale one is still there"
for m in $MU $MO $MF $MR $MX; do
	[ -e "$EMU_ROOT/sys/bus/mdev/devices/$m" ] || fail "$m was freed: $(cat "$W/err")"
done
[ ! -e "$EMU_ROOT/var/lib/vgpuctl/owners/0000:3b:00.4_$MS" ] || fail "the stale record stays"
[ -e "$EMU_ROOT/var/lib/vgpuctl/owners/0000:3b:00.6_$MO" ] || fail "the owned record went"
[ ! -e "$EMU_ROOT/var/lib/vgpuctl/params/$U1" ] || fail "the stale domain's vgpu_params note stays"
[ -e "$EMU_ROOT/var/lib/vgpuctl/params/$U3" ] || fail "the owned domain's vgpu_params note went"

# ---- the orphan let go: freed; the domain gone again, the other one is an orphan again
rm -r "$EMU_BACKING/proc/4343"
v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err" && grep -q '^freed 1 vGPU$' "$W/o" && gone $MX ||
	fail "the orphan: $(cat "$W/o" "$W/err")"
cp "$W/node0.xml" "$W/node.xml"

# ---- fail closed: a process whose open files cannot be read refuses the whole run
if [ "$(id -u)" != 0 ]; then
	mkdir -p "$EMU_BACKING/proc/777/fd" && chmod 000 "$EMU_BACKING/proc/777/fd"
	v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err"
	[ $? = 1 ] && grep -q 'cannot all be read.*nothing freed' "$W/err" || fail "not closed: $(cat "$W/o" "$W/err")"
	[ -e "$EMU_ROOT/sys/bus/mdev/devices/$MR" ] || fail "freed with /proc unreadable"
	chmod 755 "$EMU_BACKING/proc/777/fd" && rm -r "$EMU_BACKING/proc/777"
	# proc mounted with hidepid: other users' processes are not even listed
	echo "proc /proc proc rw,nosuid,nodev,noexec,relatime,hidepid=invisible 0 0" >"$EMU_BACKING/proc/mounts"
	v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err"
	[ $? = 1 ] && grep -q 'hidepid.*nothing freed' "$W/err" || fail "hidepid: $(cat "$W/o" "$W/err")"
	v -c "$C" vgpus --orphans --grace 0 >"$W/o"
	cls "$W/o" $MR "unknown  *none  *none  *unknown"
	rm "$EMU_BACKING/proc/mounts"
fi

# ---- a free that fails marks the vGPU wedged; it is never tried again
emu_fault "fail write sys/bus/mdev/devices/$MR/remove EIO"
v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err"
[ $? = 1 ] && grep -q "did not clear; marked wedged" "$W/err" || fail "wedged: $(cat "$W/o" "$W/err")"
[ -e "$EMU_ROOT/var/lib/vgpuctl/wedged/$MR" ] || fail "no wedged marker"
v -c "$C" vgpus --orphans --grace 0 >"$W/o" 2>"$W/err"
cls "$W/o" $MR wedged
grep -q "$MR is wedged; .*vgpuctl release --clear-wedged $MR" "$W/err" || fail "no hint: $(cat "$W/err")"
# metrics (no libvirt): what the host tells, the rest (the owned one, the foreign one) unknown
v metrics >"$W/m"
grep -q '^vgpuctl_vgpu_class{class="wedged"} 1$' "$W/m" && grep -q '^vgpuctl_vgpu_class{class="in-use"} 1$' "$W/m" &&
	grep -q '^vgpuctl_vgpu_class{class="orphan"} 0$' "$W/m" && grep -q '^vgpuctl_vgpu_class{class="unknown"} 2$' "$W/m" &&
	grep -q '^# HELP vgpuctl_vgpu_class .*need the libvirt domains' "$W/m" || fail "metrics: $(grep class "$W/m")"
emu_fault -r
emu_clear_journal
v -c "$C" release --orphans --grace 0 >"$W/o" 2>"$W/err" && grep -q '^freed 0 vGPUs$' "$W/o" ||
	fail "a wedged vGPU: $(cat "$W/o" "$W/err")"
[ -z "$(emu_writes)" ] || fail "wrote to a wedged vGPU: $(emu_writes)"
# its parent stays taken for plan and assign until the marker is cleared, even once it cleared
echo 1 >"$EMU_ROOT/sys/bus/mdev/devices/$MR/remove" || fail "remove $MR"
domain late2 33333333-2222-4333-8444-555555555556 >"$W/l2.xml"
v plan --from "$W/l2.xml" --vgpu A30-2-12C --vf 0000:af:00.5 >/dev/null 2>"$W/err" &&
	fail "plan took the wedged vGPU's parent"
v assign --from "$W/l2.xml" -o "$W/l2-a.xml" --vgpu A30-2-12C --vf 0000:af:00.5 >/dev/null 2>"$W/err" &&
	fail "assign took the wedged vGPU's parent"
# under the host lock: it waits while another vgpuctl holds it
exec 8>"$EMU_ROOT/run/vgpuctl/lock" && flock 8 || fail "take the host lock"
v release --clear-wedged "${MR^^}" >"$W/o" 2>"$W/err" 8>&- &
CP=$!
sleep 0.3
[ -e "$EMU_ROOT/var/lib/vgpuctl/wedged/$MR" ] || fail "cleared without the host lock"
exec 8>&-
wait $CP && grep -q "cleared the wedged marker of $MR" "$W/err" || fail "clear-wedged: $(cat "$W/o" "$W/err")"
[ ! -e "$EMU_ROOT/var/lib/vgpuctl/wedged/$MR" ] || fail "the marker stays"
v release --clear-wedged "$MR" >/dev/null 2>"$W/err"
[ $? = 1 ] && grep -q "nothing marks $MR wedged" "$W/err" || fail "cleared twice: $(cat "$W/err")"
v plan --from "$W/l2.xml" --vgpu A30-2-12C --vf 0000:af:00.5 >/dev/null 2>"$W/err" ||
	fail "plan after the marker was cleared: $(cat "$W/err")"
v assign --from "$W/l2.xml" -o "$W/l2-a.xml" --vgpu A30-2-12C --vf 0000:af:00.5 >/dev/null 2>"$W/err" ||
	fail "assign after the marker was cleared: $(cat "$W/err")"
emu_stop

[ $EMU_FAILS = 0 ] && echo "ok: orphans (evidence, classes, reaper, changed evidence, fail closed, wedged)"
exit $((EMU_FAILS > 0))
