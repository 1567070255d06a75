#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# capture-host.sh keeps what vgpuctl reads: capture fixture hosts through
# ROOT and compare vgpuctl's inventory of the capture with the original's
# (stdout, stderr and exit status, text and JSON).
#   check-capture.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
inventory() { # ROOT OUTFILE
	local c json
	for json in "" --json; do
		for c in gpus vfs types "types --per-vf" topology; do
			echo "== $json $c"
			# shellcheck disable=SC2086 # one word per argument
			# from inside ROOT, so that messages name the same paths
			(cd "$1" && "$bin" --sysroot . $json $c 2>&1)
			echo "exit $?"
		done
	done >"$2"
}
for host in a30-dual-mdev vfio-mig-h100 vfio-ts-l40s t4-legacy numa-unknown; do
	if ! bash tests/data/capture-host.sh "$tmp/$host" "tests/data/hosts/$host" >"$tmp/log" 2>&1; then
		echo "FAIL: capture-host.sh $host:"
		cat "$tmp/log"
		fail=1
		continue
	fi
	inventory "tests/data/hosts/$host" "$tmp/$host.want"
	inventory "$tmp/$host" "$tmp/$host.got"
	if ! cmp -s "$tmp/$host.want" "$tmp/$host.got"; then
		echo "FAIL: vgpuctl sees the capture of $host differently:"
		diff -u "$tmp/$host.want" "$tmp/$host.got" | head -40
		fail=1
	fi
done
# links resolve inside the capture, and it can be a tarball
[ -d "$tmp/a30-dual-mdev/sys/bus/pci/devices/0000:3b:00.4/mdev_supported_types" ] ||
	{ echo "FAIL: sys/bus/pci/devices/0000:3b:00.4 does not resolve in the capture"; fail=1; }
if ! bash tests/data/capture-host.sh "$tmp/t4.tar.gz" tests/data/hosts/t4-legacy ||
	! tar -tzf "$tmp/t4.tar.gz" | grep -q '^./sys/bus/mdev/devices/4b20d080-1b54-4048-85b3-a6a62d165c01$'; then
	echo "FAIL: tarball capture"
	fail=1
fi
exit $fail
