#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The host lock serves waiters in the order they came, and its wait is
# wall-clock time.  A holder (flock(1) on run/vgpuctl/lock) keeps it for a
# while eight releases queue up 200 ms apart; each writes
# its -o file once it has the lock, and the files' modification times must
# follow the order of arrival.
#   lock-order.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
mkdir -p "$tmp/host/run/vgpuctl"
: >"$tmp/host/run/vgpuctl/lock"
flock "$tmp/host/run/vgpuctl/lock" sleep 2.5 &
holder=$!
sleep 0.2
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml -o "$tmp/out.$i" 2>"$tmp/err.$i" &
	pids+=($!)
	sleep 0.2 # far apart: each has queued before the next starts, even on a loaded machine
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
wait $holder
[ $fail = 0 ] || { echo "FAIL: a release failed:"; cat "$tmp"/err.*; }
order=$(for i in 1 2 3 4 5 6 7 8; do printf '%s %s\n' "$(stat -c %.9Y "$tmp/out.$i")" $i; done |
	sort -n | awk '{printf "%s", $2}')
if [ "$order" != 12345678 ]; then
	echo "FAIL: waiters were served as $order, not in the order they came"
	fail=1
fi
[ -z "$(ls -A "$tmp/host/run/vgpuctl/queue")" ] || { echo "FAIL: tickets left in the queue"; fail=1; }
[ $fail = 0 ] && echo "ok: eight waiters served in the order they came"
exit $fail
