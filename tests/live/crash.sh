#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash consistency on the kernel emulator (tests/emu): every write of assign,
# release and the hook is slowed down, and the run is killed (SIGKILL) at
# every moment of it in turn (SIGKILL, then SIGINT as Ctrl-C sends it).  The emulator survives the killed client, and
# the next run repairs what the killed one left: afterwards the domain holds
# exactly its vGPU (or none after release), no record or temporary file is
# left over, and the lock's queue is empty.
#   crash.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }
U1=11111111-2222-4333-8444-555555555555
OWN=var/lib/vgpuctl/owners
ATTR=sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type
SLOW=("delay var/lib/* 150" "delay sys/* 150" "delay run/* 150")

emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
cat >"$W/d.xml" <<XML
<domain type='kvm'>
  <name>vm1</name>
  <uuid>$U1</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
XML
clean() { # LABEL: no vGPU, no record, no temporary file, no ticket
	[ "$(cat "$EMU_ROOT/$ATTR")" = 0 ] || fail "$1: a vGPU is left on c1:00.4"
	[ -z "$(find "$EMU_ROOT/$OWN" -mindepth 1 2>/dev/null)" ] ||
		fail "$1: left in owners/: $(ls -A "$EMU_ROOT/$OWN")"
	[ -z "$(find "$EMU_ROOT/run/vgpuctl/queue" -mindepth 1 2>/dev/null)" ] ||
		fail "$1: tickets left: $(ls -A "$EMU_ROOT/run/vgpuctl/queue")"
}
sig=KILL
killed() { # MS ARGS...: run vgpuctl ARGS with slow writes, kill it after MS ms
	local ms=$1 pid
	shift
	emu_fault "${SLOW[@]}"
	v "$@" >/dev/null 2>&1 &
	pid=$!
	sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
	# SIGKILL, or SIGINT as Ctrl-C sends it (the kernel interrupts the FUSE request)
	kill -$sig $pid 2>/dev/null
	wait $pid 2>/dev/null
	emu_fault -r
	kill -0 "$EMU_PID" 2>/dev/null || fail "the emulator died with its client (${ms} ms)"
}
runs=0
for ms in 20 100 200 300 400 500 600 700 900 1200 20 100 200 300 400 500 600 700 900 1200; do
	[ $runs -lt 30 ] || sig=INT
	# assign killed: the next assign (or release, if it finished) repairs
	rm -f "$W/a.xml"
	killed $ms assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4
	if [ -s "$W/a.xml" ]; then
		v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "assign killed at $ms ms, finished: release: $(cat "$W/err")"
	else
		v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" ||
			fail "assign killed at $ms ms: the next assign: $(cat "$W/err")"
		[ "$(v vgpus | grep -c ' vm1 ')" = 1 ] || fail "assign killed at $ms ms: vm1 holds not one vGPU: $(v vgpus)"
		v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "after a killed assign: release: $(cat "$W/err")"
	fi
	clean "assign killed at $ms ms"
	# release killed: the next release repairs
	v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" || fail "assign: $(cat "$W/err")"
	killed $ms release --from "$W/a.xml" -o "$W/r.xml"
	v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "release killed at $ms ms: the next release: $(cat "$W/err")"
	clean "release killed at $ms ms"
	# the hook's prepare killed after a reboot: the next prepare makes the vGPU, release frees
	v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 --per-start 2>"$W/err" ||
		fail "assign --per-start: $(cat "$W/err")"
	killed $ms hook vm1 prepare begin - <"$W/a.xml"
	v hook vm1 prepare begin - <"$W/a.xml" 2>"$W/err" || fail "prepare killed at $ms ms: the next prepare: $(cat "$W/err")"
	[ "$(cat "$EMU_ROOT/$ATTR")" = 1151 ] || fail "prepare killed at $ms ms: no vGPU after the next prepare"
	v hook vm1 started begin - </dev/null && v hook vm1 release end - <"$W/a.xml" ||
		fail "started/release after a killed prepare"
	v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "release (per-start): $(cat "$W/err")"
	clean "prepare killed at $ms ms"
	runs=$((runs + 3))
done
# Ctrl-C (SIGINT to the whole process group, as a terminal sends it) during an assign
# or a release: the run undoes what it did and dies of SIGINT; the host is as before
# it at once, with no repairing run (a killed run leaves a claim listed as active)
interrupted() { # MS ARGS...: run vgpuctl ARGS with slow writes in a group of its own, Ctrl-C after MS ms
	local ms=$1 pid rc
	shift
	emu_fault "${SLOW[@]}"
	setsid "$B" --sysroot "$EMU_ROOT" "$@" >/dev/null 2>"$W/int.err" &
	pid=$!
	sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
	kill -INT -- -$pid 2>/dev/null
	wait $pid
	rc=$?
	emu_fault -r
	[ $rc = 0 ] || [ $rc = 130 ] || fail "Ctrl-C at $ms ms: exit $rc, not by SIGINT: $(cat "$W/int.err")"
}
for ms in 50 200 400 700 1000; do
	rm -f "$W/a.xml"
	interrupted $ms assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4
	if [ -s "$W/a.xml" ]; then # it finished before the signal
		v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "release: $(cat "$W/err")"
	fi
	v vgpus | grep -q ' vm1 ' && fail "assign interrupted at $ms ms: vm1 still holds: $(v vgpus)"
	clean "assign interrupted at $ms ms"
	v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q --vf c1:00.4 2>"$W/err" || fail "assign: $(cat "$W/err")"
	interrupted $ms release --from "$W/a.xml" -o "$W/r.xml"
	if [ -s "$W/r.xml" ]; then
		clean "release finished before Ctrl-C at $ms ms"
	else # undone: vm1 keeps its vGPU, as before the release
		[ "$(v vgpus | grep -c ' vm1 .* active$')" = 1 ] ||
			fail "release interrupted at $ms ms: vm1 does not hold its vGPU: $(v vgpus)"
		[ "$(cat "$EMU_ROOT/$ATTR")" = 1151 ] || fail "release interrupted at $ms ms: the vGPU is gone"
		v release --from "$W/a.xml" -o "$W/r.xml" 2>"$W/err" || fail "release: $(cat "$W/err")"
	fi
	rm -f "$W/r.xml"
	runs=$((runs + 2))
done
# a client that handles a signal while its write waits: the kernel sends FUSE_INTERRUPT
# and libfuse signals the emulator's worker (SIGUSR1), which must not kill the emulator
emu_fault "delay sys/* 500"
python3 - "$EMU_ROOT/$ATTR" <<'PY' 2>/dev/null
import signal, sys
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.1)
try:
    with open(sys.argv[1], "w") as f:
        f.write("0")
except OSError:
    pass
PY
emu_fault -r
sleep 0.6
kill -0 "$EMU_PID" 2>/dev/null || fail "the emulator died when a client's write was interrupted"
emu_stop
[ $EMU_FAILS = 0 ] && echo "ok: $runs runs killed (SIGKILL, SIGINT) at every moment of their writes, each repaired by the next"
exit $((EMU_FAILS > 0))
