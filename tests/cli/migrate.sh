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

# migrate-check: a domain on the source with one A30-4C owner record
cp -a tests/data/hosts/a30-dual-mdev "$tmp/src"
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
line PASS topology
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
check "--json" 'o["verdict"] == "no-go" and [x["status"] for x in o["checks"] if x["id"] == "capacity"] == ["FAIL"] and len(o["checks"]) == 10'
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
exit $fail
