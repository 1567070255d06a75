#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A waiter's ticket in the host lock's queue lives exactly as long as its
# waiter, whatever PID namespace it runs in, and a waiter that does not run
# (Ctrl-Z) loses its turn instead of keeping a free lock from everybody:
#  - a waiter killed in its own PID namespace (where it was PID 1) leaves a
#    ticket whose PID names a live host process: the next run is not blocked;
#  - a waiter in a PID namespace does not remove a live host waiter's ticket
#    (its PID is not visible there);
#  - a ticket that names a reused PID (no waiter behind it) blocks nobody;
#  - a waiter stopped with SIGSTOP is passed by those behind it, and still
#    finishes when it is continued;
#  - the hook gives up after its 10 s budget, once (not a second 10 s);
#  - assign, release and the hook's release queued for a busy GPU's lock do
#    not hold the host lock meanwhile: an assign on the other GPU goes through.
# A holder (flock(1) on run/vgpuctl/lock) keeps the lock while waiters queue.
#   lock-liveness.sh VGPUCTL SRCDIR       (as root: unshare -p needs it)
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
holder=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	pkill -CONT -f "$tmp/" 2>/dev/null
	pkill -KILL -f "vgpuctl --sysroot $tmp/" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
lock=$tmp/host/run/vgpuctl/lock
queue=$tmp/host/run/vgpuctl/queue
mkdir -p "$queue"
: >"$lock"
hold() { # SECONDS: keep the host lock from vgpuctl in the background
	flock -o "$lock" sleep "$1" & # -o: the lock is flock's own, not sleep's
	holder=$!
	sleep 0.2
}
unhold() {
	pkill -P "$holder" sleep
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	holder=
}
release() { # N [PREFIX...]: a release that needs the host lock, its output in out.N
	local n=$1
	shift
	"$@" "$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml \
		-o "$tmp/out.$n" 2>"$tmp/err.$n"
}
vpid() { pgrep -f -- "-o $tmp/out.$1\$" | head -1; } # N: release N's vgpuctl
tickets() { find "$queue" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l; }
wait_tickets() { # N: until N tickets are queued (5 s at most)
	for _ in $(seq 50); do
		[ "$(tickets)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
pidns=false
unshare -p -f true 2>/dev/null && pidns=true

# ---- a waiter killed in its own PID namespace, where it was PID 1
if $pidns; then
	hold 30
	release 1 unshare -p -f &
	w1=$!
	wait_tickets 1 || bad "the namespace waiter never queued"
	[ -n "$(find "$queue" -name '*.1')" ] || bad "the namespace waiter's ticket does not name PID 1: $(ls "$queue")"
	pkill -KILL -f -- "-o $tmp/out.1\$"
	wait $w1 2>/dev/null
	unhold
	# PID 1 is alive on the host (init): a ticket read by its PID alone blocks forever
	release 2 timeout 20 ||
		bad "a dead namespace waiter's ticket blocks the lock: $(cat "$tmp/err.2")"
	[ "$(tickets)" = 0 ] || bad "the dead waiter's ticket stayed: $(ls "$queue")"
fi

# ---- a ticket whose PID is alive but has no waiter behind it (a reused PID)
sleep 300 &
reused=$!
printf '' >"$queue/00000000000000000001.$reused"
release 3 timeout 20 ||
	bad "a reused PID's ticket blocks the lock: $(cat "$tmp/err.3")"
kill $reused
wait $reused 2>/dev/null
[ "$(tickets)" = 0 ] || bad "the reused PID's ticket stayed: $(ls "$queue")"

# ---- a waiter in a PID namespace leaves a live host waiter's ticket alone
if $pidns; then
	hold 3
	release 4 &
	w4=$!
	wait_tickets 1 || bad "the host waiter never queued"
	release 5 unshare -p -f &
	w5=$!
	wait_tickets 2 || bad "the namespace waiter never queued"
	sleep 0.5 # it polls the queue meanwhile
	[ "$(tickets)" = 2 ] || bad "a namespace waiter removed a live host waiter's ticket: $(ls "$queue")"
	wait $w4 || bad "the host waiter failed: $(cat "$tmp/err.4")"
	wait $w5 || bad "the namespace waiter failed: $(cat "$tmp/err.5")"
	# (equal when both land in one tick of the file system's clock)
	[ ! "$(stat -c %.9Y "$tmp/out.5")" \< "$(stat -c %.9Y "$tmp/out.4")" ] ||
		bad "the namespace waiter went before the host waiter that came first"
	unhold
fi

# ---- a stopped waiter (Ctrl-Z) loses its turn, and finishes once continued
hold 30
release 6 &
w6=$!
wait_tickets 1 || bad "the first waiter never queued"
v6=$(vpid 6)
kill -STOP "$v6"
release 7 &
w7=$!
wait_tickets 2 || bad "the second waiter never queued"
unhold
# the second goes as soon as the first is seen not to run (1 s), well within its 30 s
timeout 20 tail --pid=$w7 -f /dev/null || bad "a stopped waiter keeps a free lock from everybody"
wait $w7 || bad "the waiter behind a stopped one failed: $(cat "$tmp/err.7")"
kill -CONT "$v6"
wait $w6 || bad "the stopped waiter failed once continued: $(cat "$tmp/err.6")"
grep -q "<name>plain</name>" "$tmp/out.6" || bad "the stopped waiter wrote nothing once continued"
[ "$(tickets)" = 0 ] || bad "tickets left: $(ls "$queue")"

# ---- the hook's budget is 10 s for the whole start, not 10 s per path it tries
"$bin" --sysroot "$tmp/host" assign --from tests/data/domains/plain.xml -o "$tmp/a.xml" \
	--vgpu A30-6C --per-start 2>"$tmp/err" || bad "assign --per-start: $(cat "$tmp/err")"
hold 60
s=$(date +%s%N)
if "$bin" --sysroot "$tmp/host" hook plain prepare begin - <"$tmp/a.xml" 2>"$tmp/err"; then
	bad "the hook started while the host lock was held"
fi
ms=$((($(date +%s%N) - s) / 1000000))
unhold
grep -q "another vgpuctl holds the host lock .* (waited 10[0-9][0-9][0-9] ms" "$tmp/err" ||
	bad "the hook's lock message: $(cat "$tmp/err")"
# 10 s plus the start of a process; the broken hook took 20 s
[ "$ms" -lt 16000 ] || bad "the hook blocked the start $ms ms, past its 10 s budget"

# ---- runs queued for a busy GPU hold no host lock: the other GPU's start goes on
gpulock=$tmp/host/run/vgpuctl/gpu/0000:3b:00.0/lock
dom() { # NAME UUID-DIGIT: a domain definition without vGPUs
	sed -e "s|<name>plain</name>|<name>$1</name>|" \
		-e "s|<uuid>[^<]*</uuid>|<uuid>$2$2$2$2$2$2$2$2-1111-4111-8111-111111111111</uuid>|" \
		tests/data/domains/plain.xml >"$tmp/$1.xml"
}
dom held 1
dom busy 2
dom idle 3
"$bin" --sysroot "$tmp/host" assign --from "$tmp/held.xml" -o "$tmp/held.a.xml" --vgpu A30-6C \
	--gpu 0000:3b:00.0 --per-start 2>"$tmp/err" || bad "assign held: $(cat "$tmp/err")"
mkdir -p "${gpulock%/lock}"
: >"$gpulock"
flock -o "$gpulock" sleep 60 & # a slow create or remove on 0000:3b:00.0
gpuholder=$!
sleep 0.2
queued() { # WHAT CMD...: CMD waits for the busy GPU; an assign on the other GPU must not
	local what=$1
	shift
	"$@" 2>"$tmp/queued.err" &
	local q=$!
	sleep 0.5
	kill -0 $q 2>/dev/null || bad "$what did not wait for the busy GPU: $(cat "$tmp/queued.err")"
	timeout 20 "$bin" --sysroot "$tmp/host" assign --from "$tmp/idle.xml" --vgpu A30-2-12C \
		--gpu 0000:af:00.0 --per-start >/dev/null 2>"$tmp/err" ||
		bad "an assign on an idle GPU waited for $what queued on a busy GPU: $(cat "$tmp/err")"
	"$bin" --sysroot "$tmp/host" release --from "$tmp/idle.xml" >/dev/null 2>&1
	kill $q 2>/dev/null
	wait $q 2>/dev/null
}
queued assign "$bin" --sysroot "$tmp/host" assign --from "$tmp/busy.xml" --vgpu A30-6C \
	--gpu 0000:3b:00.0 --per-start
queued release "$bin" --sysroot "$tmp/host" release --from "$tmp/held.a.xml"
# (a job in the background reads /dev/null unless told otherwise: sh -c gives it the definition)
# shellcheck disable=SC2016 # expanded by the inner shell
queued "the hook's release" sh -c 'exec "$0" --sysroot "$1" hook held release end - <"$2"' \
	"$bin" "$tmp/host" "$tmp/held.a.xml"
pkill -P $gpuholder sleep
kill $gpuholder 2>/dev/null
wait $gpuholder 2>/dev/null

[ $fail = 0 ] && echo "ok: tickets live as long as their waiters; a stopped waiter loses its turn"
exit $fail
