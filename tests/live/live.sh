#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# assign / release / vgpus / hook against the kernel emulator (tests/emu):
# real writes that the emulated driver accepts or refuses, faults injected
# from outside vgpuctl, concurrent runs.
#   live.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015,SC2119 # "A && B || fail": fail when either check fails; emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_available || {
	echo "no usable /dev/fuse: skipped"
	exit 77
}
L40S=$SRC/tests/data/hosts/vfio-ts-l40s
A30=$SRC/tests/data/hosts/a30-dual-mdev
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }

# A defined domain without vGPUs: NAME UUID > file
domain() {
	cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
  </os>
  <devices>
    <console type='pty'/>
  </devices>
</domain>
EOF
}
U1=11111111-2222-4333-8444-555555555555
VF_ATTR=sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type
REAL_ATTR=sys/devices/pci0000:c1/0000:c1:00.4/nvidia/current_vgpu_type # as the journal names it

# ---- vendor VFIO: assign, vgpus, release; the writes are the golden list
emu_start "$L40S"
W=$EMU_DIR
domain vm1 $U1 >"$W/d.xml"
emu_clear_journal
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign vendor VFIO"
[ "$(emu_writes)" = "write $REAL_ATTR 1151 -> 0" ] || fail "assign's sysfs writes: $(emu_writes)"
[ "$(cat "$EMU_ROOT/$VF_ATTR")" = 1151 ] || fail "the VF does not hold L40S-8Q"
grep -q "managed=\"no\"" "$W/a.xml" || fail "no vendor-VFIO hostdev in the domain"
v vgpus --json | grep -q '"domain": "vm1".*"state": "active"\|"state": "active"' ||
	fail "vgpus does not show vm1's vGPU active"
v vgpus | grep -q "0000:c1:00.4 .*vm1 .*persistent active" || fail "vgpus text: $(v vgpus)"
# the VF is taken now: a second domain gets another one
domain vm2 22222222-2222-4333-8444-555555555555 >"$W/d2.xml"
v assign --from "$W/d2.xml" -o "$W/a2.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" &&
	fail "a second assign took a VF that is taken"
v assign --from "$W/d2.xml" --dry-run -o "$W/never.xml" --vgpu L40S-8Q >"$W/dry.xml" 2>"$W/err" ||
	fail "dry run: $(cat "$W/err")"
[ ! -e "$W/never.xml" ] && grep -q "would create vGPU L40S-8Q" "$W/err" &&
	! grep -q 'vf="0000:c1:00.4"' "$W/dry.xml" || fail "dry run changed or chose badly"
emu_clear_journal
v release --from "$W/a.xml" -o "$W/r.xml" || fail "release"
[ "$(emu_writes)" = "write $REAL_ATTR 0 -> 0" ] || fail "release's sysfs writes: $(emu_writes)"
[ "$(cat "$EMU_ROOT/$VF_ATTR")" = 0 ] || fail "release left the vGPU"
! grep -q "hostdev\|vgpuctl\|vcpupin\|numatune" "$W/r.xml" || fail "release left our parts"
[ -z "$(ls "$EMU_ROOT/var/lib/vgpuctl/owners")" ] || fail "release left owner records"
# a stale release of a domain whose VF went to another domain frees nothing
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign again"
v release --from "$W/a.xml" -o "$W/r.xml" || fail "release again"
v assign --from "$W/d2.xml" -o "$W/a2.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign vm2"
emu_clear_journal
v release --from "$W/a.xml" -o "$W/r2.xml" 2>"$W/err" || fail "stale release"
[ -z "$(emu_writes)" ] && grep -q "belongs to domain 'vm2'" "$W/err" ||
	fail "a stale release touched vm2's vGPU: $(emu_writes) $(cat "$W/err")"
emu_stop

# ---- every step of assign fails once: afterwards host, records and output are as before
for ((n = 0; n < 60; n++)); do
	emu_start "$L40S"
	W=$EMU_DIR
	domain vm1 $U1 >"$W/d.xml"
	mkdir "$EMU_ROOT/out"
	# the host before the run is the fixture itself (emu_start copies it unchanged; out/,
	# var/ and run/ are not compared): no copy of it per step
	emu_fault "fail any * EIO after=$n count=1"
	if v assign --from "$W/d.xml" -o "$EMU_ROOT/out/a.xml" --vgpu L40S-8Q 2>"$W/err"; then
		emu_stop
		# the fault hit a cache (the type catalogue): tolerated with a warning
		grep -q -- "-> EIO" "$EMU_LOG" || break # n steps, none left to fail
		# a directory fsync after a rename is not a failure (vgpu_sysfs_replace)
		grep -- "-> EIO" "$EMU_LOG" | grep -qv "^fsync" && ! grep -q "warning: cannot" "$W/err" &&
			fail "step $n: EIO passed in silence: $(grep -- "-> EIO" "$EMU_LOG")"
		continue
	fi
	grep -q "rolled back\|Input/output error" "$W/err" || fail "step $n: message: $(cat "$W/err")"
	[ "$(wc -l <"$W/err")" = 1 ] || fail "step $n: not one line: $(cat "$W/err")"
	emu_fault -r
	[ -z "$(ls -A "$EMU_ROOT/out")" ] || fail "step $n: output left behind"
	[ -z "$(ls -A "$EMU_ROOT/var/lib/vgpuctl/owners" 2>/dev/null)" ] ||
		fail "step $n: owner record left behind"
	diff -r --no-dereference --exclude=var --exclude=run --exclude=out "$L40S" "$EMU_BACKING" >/dev/null ||
		fail "step $n: host changed: $(diff -r --no-dereference --exclude=var --exclude=run \
			--exclude=out "$L40S" "$EMU_BACKING" 2>&1 | head -3)"
	emu_stop
done
[ "$n" -ge 3 ] && [ "$n" -lt 60 ] || fail "fault loop ended after $n steps"
echo "assign: $n mutating steps, each failed once, all rolled back"

# ---- release while QEMU still holds the VF: 0 is retried until the driver lets go
emu_start "$L40S"
W=$EMU_DIR
domain vm1 $U1 >"$W/d.xml"
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign for retry"
emu_open 0000:c1:00.4
(sleep 1 && emu_close 0000:c1:00.4) &
v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "release did not retry: $(cat "$W/err")"
wait $!
[ "$(grep -c "current_vgpu_type 0 -> EPERM" "$EMU_LOG")" -ge 1 ] &&
	[ "$(cat "$EMU_ROOT/$VF_ATTR")" = 0 ] || fail "no EPERM then success: $(emu_writes)"
# held for good: a bounded wait, then one line, and the record stays
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign again"
emu_open 0000:c1:00.4
v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" && fail "release freed an open VF"
grep -q "still holds the VF; retried" "$W/err" && [ "$(wc -l <"$W/err")" = 1 ] ||
	fail "open VF: $(cat "$W/err")"
[ -n "$(find "$EMU_ROOT/var/lib/vgpuctl/owners" -type f)" ] || fail "the record went with a failed free"
emu_close 0000:c1:00.4
# reserved VFs are taken for xml and plan too
domain vm2 22222222-2222-4333-8444-555555555555 >"$W/d2.xml"
v plan --name x --vgpu L40S-8Q --vcpus 2 --memory 1G --vf c1:00.5 >/dev/null 2>&1 ||
	fail "plan refused a free VF"
v assign --from "$W/d2.xml" -o "$W/a2.xml" --vgpu L40S-8Q --vf c1:00.5 --per-start ||
	fail "assign --per-start vm2"
v plan --name x --vgpu L40S-8Q --vcpus 2 --memory 1G --vf c1:00.5 >/dev/null 2>&1 &&
	fail "plan chose a reserved VF"
emu_stop

# ---- mdev: create, list, remove
emu_start "$A30"
W=$EMU_DIR
domain vm1 $U1 >"$W/d.xml"
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu A30-6C || fail "assign mdev: $(cat "$EMU_DIR/emu.err")"
M=$(sed -n 's/.*mdev-uuid="\([^"]*\)".*/\1/p' "$W/a.xml")
[ -n "$M" ] && [ -d "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "no mdev $M"
v vgpus | grep -q "$M vm1 .*active" || fail "vgpus mdev: $(v vgpus)"
# a process holds the mdev's VFIO group: remove is never written (it would block)
G=$(basename "$(readlink "$EMU_ROOT/sys/bus/mdev/devices/$M/iommu_group")")
mkdir -p "$EMU_BACKING/proc/4242/fd"
ln -s "/dev/vfio/$G" "$EMU_BACKING/proc/4242/fd/7"
emu_clear_journal
v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" && fail "release removed an open mdev"
grep -q "still open (/dev/vfio/$G)" "$W/err" || fail "open mdev: $(cat "$W/err")"
[ -z "$(emu_writes)" ] || fail "remove written to an open mdev: $(emu_writes)"
rm -r "$EMU_BACKING/proc/4242"
v release --from "$W/a.xml" -o "$W/r.xml" || fail "release mdev"
[ ! -e "$EMU_ROOT/sys/bus/mdev/devices/$M" ] || fail "mdev $M not removed"
emu_stop

# ---- the hook: reboot, prepare, failed start, per-start, foreign and hostile input
emu_start "$L40S"
W=$EMU_DIR
hook() { # DOMAIN OP SUB < stdin; stdout must stay empty
	local out
	out=$("$B" --sysroot "$EMU_ROOT" hook "$1" "$2" "$3" -)
	[ -z "$out" ] || fail "hook $1 $2 wrote to stdout: $out"
}
state() { v vgpus | awk -v d="$1" '$0 ~ " " d " " {print $NF}' | sort -u; }
domain vm1 $U1 >"$W/d.xml"
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 || fail "assign for hook"
echo 0 >"$EMU_ROOT/$VF_ATTR" # a reboot: the vGPU is gone, the record stays
[ "$(state vm1)" = missing ] || fail "after a reboot: $(state vm1)"
hook vm1 prepare begin <"$W/a.xml" || fail "prepare"
[ "$(state vm1)" = active ] || fail "prepare did not re-create: $(state vm1)"
hook vm1 release end <"$W/a.xml" || fail "release after a failed start"
[ "$(state vm1)" = missing ] || fail "a failed start kept what prepare made: $(state vm1)"
hook vm1 prepare begin <"$W/a.xml" && hook vm1 started begin </dev/null &&
	hook vm1 release end <"$W/a.xml" || fail "a normal start and stop"
[ "$(state vm1)" = active ] || fail "a normal stop freed a persistent vGPU: $(state vm1)"
# other domains and operations, and the start and stop of vm1 whose persistent vGPU is
# there (nothing to do): exit 0 at once and without writing, from a FIFO whose writer
# never closes.  Operations that need no XML do not read stdin (the FIFO stays empty);
# prepare and release read the domain XML the writer put there, up to its end tag, and
# match records by the UUID in it; migrate begin reads it too (a domain from elsewhere)
# and, without our metadata, prints nothing
domain other 44444444-2222-4333-8444-555555555555 >"$W/other.xml"
mkfifo "$W/fifo"
exec 7<>"$W/fifo"
emu_clear_journal
for call in "other prepare begin:other" "vm1 start begin:" "other migrate begin:other" \
	"vm1 reconnect begin:" "vm1 prepare begin:a" "vm1 release end:a"; do
	xml=${call#*:} call=${call%%:*}
	[ -z "$xml" ] || cat "$W/$xml.xml" >&7
	# shellcheck disable=SC2086 # the call is three words
	timeout 5 "$B" --sysroot "$EMU_ROOT" hook $call - <"$W/fifo" >"$W/out" ||
		fail "hook $call: exit $? (read stdin?)"
	[ ! -s "$W/out" ] || fail "hook $call wrote to stdout"
done
exec 7>&-
[ -z "$(emu_writes)" ] || fail "hooks with nothing to do wrote: $(emu_writes)"
[ "$(state vm1)" = active ] || fail "vm1 after start/stop with nothing to do: $(state vm1)"
# virsh domrename while shut off: the records follow the UUID, not the name
sed 's|<name>vm1</name>|<name>vm1-renamed</name>|' "$W/a.xml" >"$W/renamed.xml"
echo 0 >"$EMU_ROOT/$VF_ATTR" # and a reboot
hook vm1-renamed prepare begin <"$W/renamed.xml" || fail "prepare after a rename"
[ "$(cat "$EMU_ROOT/$VF_ATTR")" = 1151 ] || fail "prepare after a rename re-created nothing"
hook vm1-renamed started begin </dev/null && hook vm1-renamed release end <"$W/renamed.xml" ||
	fail "started/release after a rename"
# hostile stdin for a domain with records: refused, nothing created
echo 0 >"$EMU_ROOT/$VF_ATTR"
printf '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
<domain><name>&b;</name><uuid>%s</uuid></domain>' $U1 >"$W/ent.xml"
printf '<domain xmlns="urn:evil"><name>vm1</name><uuid>%s</uuid></domain>' $U1 >"$W/ns.xml"
for f in ent ns; do
	"$B" --sysroot "$EMU_ROOT" hook vm1 prepare begin - <"$W/$f.xml" 2>"$W/err" &&
		fail "hostile stdin '$f' accepted"
	[ "$(state vm1)" = missing ] || fail "hostile stdin '$f' created a vGPU"
done
head -c 100M /dev/zero | "$B" --sysroot "$EMU_ROOT" hook vm1 prepare begin - 2>"$W/err"
[ "${PIPESTATUS[1]}" = 1 ] || fail "100 MB of stdin accepted"
grep -q "larger\|4 MiB\|too big\|bytes" "$W/err" || fail "100 MB: $(cat "$W/err")"
# per-start: reserved until the hook creates it, freed at each stop
domain vm3 33333333-2222-4333-8444-555555555555 >"$W/d3.xml"
v assign --from "$W/d3.xml" -o "$W/a3.xml" --vgpu L40S-8Q --vf c1:00.5 --per-start ||
	fail "assign --per-start"
[ "$(state vm3)" = reserved ] || fail "per-start after assign: $(state vm3)"
hook vm3 prepare begin <"$W/a3.xml" && hook vm3 started begin </dev/null
[ "$(state vm3)" = active ] || fail "per-start after prepare: $(state vm3)"
hook vm3 release end <"$W/a3.xml"
[ "$(state vm3)" = reserved ] || fail "per-start after release: $(state vm3)"
emu_stop

# ---- 32 concurrent assigns on 15 free VFs: 15 win, 17 fail cleanly, no VF twice
emu_start "$L40S"
W=$EMU_DIR
for i in $(seq 10 41); do
	domain "c$i" "$(printf '%08d-2222-4333-8444-555555555555' "$i")" >"$W/c$i.xml"
done
pids=()
for i in $(seq 10 41); do
	v assign --from "$W/c$i.xml" -o "$W/c$i.out" --vgpu L40S-4Q >/dev/null 2>"$W/c$i.err" &
	pids+=($!)
done
wait "${pids[@]}" # not a bare wait: the emulator is a child too
ok=$(find "$W" -name 'c*.out' | wc -l)
[ "$ok" = 15 ] || fail "concurrent assigns: $ok succeeded, not 15"
for i in $(seq 10 41); do
	if [ -e "$W/c$i.out" ]; then continue; fi
	grep -q "no free VF" "$W/c$i.err" && [ "$(wc -l <"$W/c$i.err")" = 1 ] ||
		fail "c$i failed unclearly: $(cat "$W/c$i.err")"
done
[ "$(find "$EMU_ROOT/var/lib/vgpuctl/owners" -type f | wc -l)" = 15 ] || fail "not 15 owner records"
[ "$(grep -h '^parent=' "$EMU_ROOT"/var/lib/vgpuctl/owners/* | sort | uniq -d)" = "" ] ||
	fail "a VF has two owners"
[ "$(v vgpus | grep -c ' active$')" = 15 ] || fail "not 15 active vGPUs: $(v vgpus)"
emu_stop

# ---- prepare when the recorded VF holds a vGPU nobody recorded: an mdev moves
# (its hostdev names only the UUID) and its record follows; vendor VFIO fails the start
emu_start "$A30"
W=$EMU_DIR
domain m1 44444444-2222-4333-8444-555555555555 >"$W/m1.xml"
v assign --from "$W/m1.xml" -o "$W/m1.out" --vgpu A30-6C --vf 3b:00.4 --per-start ||
	fail "assign m1 --per-start"
T=$(sed -n 's/.*type-id="\([0-9]*\)".*/\1/p' "$W/m1.out")
echo aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee \
	>"$EMU_ROOT/sys/bus/pci/devices/0000:3b:00.4/mdev_supported_types/nvidia-$T/create" ||
	fail "could not plant an orphan mdev"
"$B" --sysroot "$EMU_ROOT" hook m1 prepare begin - <"$W/m1.out" 2>"$W/err" ||
	fail "prepare did not move the mdev: $(cat "$W/err")"
v vgpus | grep -q "0000:3b:00.[567] .* m1 .*active" || fail "m1 not active elsewhere: $(v vgpus)"
v vgpus | grep -q "0000:3b:00.4 .*orphan" || fail "the orphan is gone: $(v vgpus)"
[ -z "$(find "$EMU_ROOT/var/lib/vgpuctl/owners" -name '0000:3b:00.4_*')" ] ||
	fail "the record did not follow the mdev"
emu_stop
emu_start "$L40S"
W=$EMU_DIR
domain f1 55555555-2222-4333-8444-555555555555 >"$W/f1.xml"
v assign --from "$W/f1.xml" -o "$W/f1.out" --vgpu L40S-8Q --vf c1:00.6 --per-start ||
	fail "assign f1 --per-start"
echo 1158 >"$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.6/nvidia/current_vgpu_type" # L40S-8C
"$B" --sysroot "$EMU_ROOT" hook f1 prepare begin - <"$W/f1.out" 2>"$W/err" &&
	fail "prepare took a VF that holds a vGPU"
grep -q "already holds vGPU type 1158; the domain cannot start" "$W/err" ||
	fail "prepare's message: $(cat "$W/err")"
[ "$(wc -l <"$W/err")" = 1 ] || fail "prepare's message is not one line"
emu_stop

# ---- 32 concurrent hook prepares of --per-start domains (each twice): one vGPU each
emu_start "$L40S"
W=$EMU_DIR
for i in $(seq 10 24); do
	domain "p$i" "$(printf '%08d-3333-4333-8444-555555555555' "$i")" >"$W/p$i.xml"
	v assign --from "$W/p$i.xml" -o "$W/p$i.out" --vgpu L40S-4Q --per-start 2>"$W/err" ||
		fail "assign --per-start p$i: $(cat "$W/err")"
done
[ "$(v vgpus | grep -c ' reserved$')" = 15 ] || fail "not 15 reservations: $(v vgpus)"
pids=()
for i in $(seq 10 24) $(seq 10 24) 98 99; do
	in=$W/p$i.out
	[ -e "$in" ] || in=/dev/null # p98, p99: no records, stdin never read
	"$B" --sysroot "$EMU_ROOT" hook "p$i" prepare begin - <"$in" >>"$W/hook.out" 2>>"$W/hook.err" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ "$rc" = 0 ] || fail "a concurrent prepare failed: $(cat "$W/hook.err")"
[ ! -s "$W/hook.out" ] || fail "the hook wrote to stdout"
[ "$(v vgpus | grep -c ' active$')" = 15 ] || fail "not 15 active after prepare: $(v vgpus)"
[ "$(grep -c "current_vgpu_type 1149 -> 0" "$EMU_LOG")" = 15 ] ||
	fail "not one create per domain: $(grep -c "current_vgpu_type 1149" "$EMU_LOG")"
emu_stop

[ "$fails" = 0 ] || exit 1
echo "live: all passed"
