#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl migrate-offer: the target's side of a migration check, on fixture
# hosts (a copy, --sysroot).  A manifest's A30-4C gets a GPU of the dual-A30
# host and the board it would run on; a type the host lacks gets why's
# reason code; the host tree is left as it was; a damaged or oversized
# manifest exits 1 with one message and prints nothing on stdout.
#   migrate.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a tests/data/hosts/a30-dual-mdev "$tmp/a30"
cp -a tests/data/hosts/vfio-ts-l40s "$tmp/l40s"
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
	check "versions it cannot read are null" 'o["libvirt"] is None and o["qemu"] is None'
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
exit $fail
