#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl diagnose over fixture copies:
#  - the negative corpus alone: no cause, no symptom, no verdict (each
#    catalogue row's own lines: rows.sh);
#  - a realistic failed start (kernel log + the domain's QEMU log; first without an owner
#    record: the QEMU log names the VM UUID and the mdev; then the owner
#    record written here): the timeline and verdict by domain, by mdev UUID
#    and by the VF's odd address form, compared byte for byte with
#    failed-start.golden (VGPU_TEST_REGENERATE=1 rewrites it);
#  - the kernel's stream dev/kmsg; the GPU's identities (parent, PF, GPU UUID)
#    and a VM UUID's domain without an owner record; a boot loop folded;
#  - --catalogue lists every row, also from a relocated copy; usage errors.
#   diagnose.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
export TZ=UTC
dir=tests/diagnose
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. the negative corpus alone: nothing to blame
mkdir -p "$tmp/neg/var/log"
grep -v '^#' $dir/negative >"$tmp/neg/var/log/kern.log"
"$bin" --sysroot "$tmp/neg" diagnose >"$tmp/out" 2>&1
if ! grep -q '^verdict: no root cause in 1 log' "$tmp/out" ||
	grep -Eq '\((cause|symptom)\)$' "$tmp/out"; then
	echo "FAIL: the negative corpus found a cause"
	cat "$tmp/out"
	fail=1
fi

# no log at all is said, not taken for a healthy host
mkdir "$tmp/empty"
"$bin" --sysroot "$tmp/empty" diagnose >"$tmp/out" 2>&1
grep -q '^verdict: none: no log could be read' "$tmp/out" || {
	echo "FAIL: no logs: $(cat "$tmp/out")"
	fail=1
}

# the kernel's log stream dev/kmsg (here a plain file: read to its end): its records' times
# are proc/stat's btime plus their microseconds since boot, continuation lines are no
# lines, and kern.log's copy of a record is left out while its older lines stay
mkdir -p "$tmp/km/dev" "$tmp/km/proc" "$tmp/km/var/log"
printf 'cpu  1 2 3 4\nbtime 1795881600\n' >"$tmp/km/proc/stat"
printf '%s\n' '6,0,1000000,-;Linux version 6.8.0' \
	'3,1,10811000000,-;NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)' \
	' SUBSYSTEM=pci' ' DEVICE=+pci:0000:01:00.0' >"$tmp/km/dev/kmsg"
printf '%s\n' '2026-11-27T10:00:00.000000+00:00 host kernel: NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.' \
	'2026-11-28T19:00:12.000000+00:00 host kernel: [10811.000000] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)' \
	>"$tmp/km/var/log/kern.log"
"$bin" --sysroot "$tmp/km" diagnose --json >"$tmp/out" 2>&1 || fail=1
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["logs"] == ["dev/kmsg", "var/log/kern.log"], d["logs"]
got = [(e["log"], e["line"], e["row"], e["time"]) for e in d["timeline"]]
assert got == [("var/log/kern.log", 1, "fallen-off-bus", 1795773600), ("dev/kmsg", 2, "rminit-failed", 1795892411)], got
assert d["timeline"][1]["text"] == "2026-11-28T19:00:11.000000Z kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)", d["timeline"][1]' "$tmp/out" || {
	echo "FAIL: dev/kmsg"
	cat "$tmp/out"
	fail=1
}
# without btime, proc/uptime dates the records (now - uptime + their time since boot)
rm "$tmp/km/proc/stat"
echo '100.50 180.00' >"$tmp/km/proc/uptime"
"$bin" --sysroot "$tmp/km" diagnose --json >"$tmp/out" 2>&1 || fail=1
python3 -c 'import json, sys, time
d = json.load(open(sys.argv[1]))
e = [e for e in d["timeline"] if e["log"] == "dev/kmsg"]
assert len(e) == 1 and abs(e[0]["time"] - (time.time() - 100 + 10811)) < 30, e' "$tmp/out" || {
	echo "FAIL: dev/kmsg dated by proc/uptime"
	cat "$tmp/out"
	fail=1
}

# 2. a failed start: the same story by domain, mdev UUID and the VF's odd address
cp -r $dir/failed-start "$tmp/fs"
# another manager's domain (no owner record): its QEMU log names the VM's UUID and the mdev
"$bin" --sysroot "$tmp/fs" diagnose vm1 --json >"$tmp/out" 2>&1 || fail=1
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"]["row"] == "slow-cleanup", d["verdict"]
assert "3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b" in d["identities"], d["identities"]
assert "11111111-2222-4333-8444-555555555551" in d["identities"], d["identities"]
assert "erestartsys-open" in [e["row"] for e in d["timeline"]]' "$tmp/out" || {
	echo "FAIL: diagnose vm1 without an owner record"
	fail=1
}
mkdir -p "$tmp/fs/var/lib/vgpuctl/owners"
printf 'domain=vm1\ndomain_uuid=11111111-2222-4333-8444-555555555551\ngpu=0000:3b:00.0\nparent=0000:3b:00.4\ninterface=mdev\ntype_id=683\nprofile=A30-4C\nmdev_uuid=3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b\nlifetime=persistent\n' \
	>"$tmp/fs/var/lib/vgpuctl/owners/0000:3b:00.4_3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b"
for who in vm1 3F6A1C2E-8D4B-4E6F-9A1B-2C3D4E5F6A7B 0:3b:0.4; do
	"$bin" --sysroot "$tmp/fs" diagnose "$who" >"$tmp/out" 2>&1
	echo "exit $?" >>"$tmp/out"
	golden_cmp "$tmp/out" $dir/failed-start.golden "diagnose $who"
done
"$bin" --sysroot "$tmp/fs" diagnose vm1 --json >"$tmp/out" 2>&1 || fail=1
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"]["row"] == "slow-cleanup", d["verdict"]
assert "0:3b:0.4" in d["identities"] and "11111111-2222-4333-8444-555555555551" in d["identities"]
assert [e["decoded"] for e in d["timeline"] if e["row"] == "xid"] == ["Xid 43: GPU stopped processing; resolution bucket IGNORE"]' "$tmp/out" || {
	echo "FAIL: diagnose vm1 --json"
	fail=1
}
# the vGPU manager's journal through a journalctl stand-in: its process 2314 named the
# vGPU, so its vmiop_log lines are the VM's; process 2290's (another VM's) are not
"$bin" --sysroot "$tmp/fs" diagnose vm1 --journalctl "$src/$dir/journalctl" >"$tmp/out" 2>&1
if ! grep -q '^journal:2  guest-driver-range (cause)$' "$tmp/out" ||
	grep -q 'error allocating framebuffer' "$tmp/out" ||
	! grep -q '^verdict: slow-cleanup' "$tmp/out" || grep -q 'warning' "$tmp/out"; then
	echo "FAIL: diagnose vm1 --journalctl"
	cat "$tmp/out"
	fail=1
fi
# --since after the start: only the Xid is left, and no cause before it
"$bin" --sysroot "$tmp/fs" diagnose vm1 --since '2026-11-28 19:03' >"$tmp/out" 2>&1
if [ "$(grep -c '^var/log' "$tmp/out")" != 1 ] || ! grep -q '^verdict: xid' "$tmp/out"; then
	echo "FAIL: --since"
	cat "$tmp/out"
	fail=1
fi

# the GPU's identities, for a domain without an owner record: the mdev's parent
# (sys/bus/mdev/devices' link), its PF (physfn) and the GPU's UUID (the driver's
# information file); a VM UUID finds its domain by the QEMU log that started it
cp -r $dir/failed-start "$tmp/gu"
(
	cd "$tmp/gu" || exit 1
	vf=sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.4
	mkdir -p "$vf/3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b" sys/bus/mdev/devices sys/bus/pci/devices \
		proc/driver/nvidia/gpus/0000:3b:00.0
	ln -s "../../../${vf#sys/}/3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b" sys/bus/mdev/devices/
	ln -s "../../../${vf#sys/}" sys/bus/pci/devices/0000:3b:00.4
	ln -s ../0000:3b:00.0 "$vf/physfn"
	printf 'Model: \t\t NVIDIA A30\nGPU UUID: \t GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\n' \
		>proc/driver/nvidia/gpus/0000:3b:00.0/information
	# a line that names the GPU by its UUID only (an NVML tool's)
	echo 'Nov 28 19:02:36 host gpu-check[777]: GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d: cuInit failed with error 802 (CUDA_ERROR_SYSTEM_NOT_READY)' >>var/log/kern.log
)
"$bin" --sysroot "$tmp/gu" diagnose 11111111-2222-4333-8444-555555555551 --json >"$tmp/out" 2>&1 || fail=1
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for i in ("vm1", "3f6a1c2e-8d4b-4e6f-9a1b-2c3d4e5f6a7b", "0000:3b:00.4", "0000:3b:00.0", "GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"):
    assert i in d["identities"], (i, d["identities"])
assert "var/log/libvirt/qemu/vm1.log" in d["logs"], d["logs"]
assert "cuda-not-ready" in [e["row"] for e in d["timeline"]], d["timeline"]' "$tmp/out" || {
	echo "FAIL: the GPU's UUID, the VM's domain"
	cat "$tmp/out"
	fail=1
}
# a boot loop's failure is one line with its count and last place
mkdir -p "$tmp/loop/var/log"
for t in 2720.206992 2731.5 2742.25; do
	echo "[ $t] [nvidia-vgpu-vfio] 00eac34d-8b67-401e-9faa-feb8f2456c29: start failed. status: 0x1"
done >"$tmp/loop/var/log/kern.log"
"$bin" --sysroot "$tmp/loop" diagnose >"$tmp/out" 2>&1
if ! grep -qx 'var/log/kern.log:1  start-failed-host-client (cause), 3 times, the last at var/log/kern.log:3' "$tmp/out" ||
	[ "$(grep -c '^var/log' "$tmp/out")" != 1 ]; then
	echo "FAIL: a boot loop's repeats"
	cat "$tmp/out"
	fail=1
fi

# 3. the catalogue, and usage errors
n=$(grep -Evc '^(#|$)' data/catalogue.tsv)
got=$("$bin" diagnose --catalogue --noheadings | wc -l)
[ "$got" = "$n" ] || {
	echo "FAIL: --catalogue lists $got rows, not $n"
	fail=1
}
# a relocated install (PREFIX/bin/vgpuctl) and a package run through its own loader
# (PKG/lib/ld-linux*, as tests/device/pack.sh lays it out) find the catalogue in
# ../share/vgpuctl beside the executable; without it, they say where they looked
mkdir -p "$tmp/rel/bin" "$tmp/rel/lib"
cp "$bin" "$tmp/rel/bin/vgpuctl"
cp -L /lib64/ld-linux-x86-64.so.2 "$tmp/rel/lib/"
"$tmp/rel/bin/vgpuctl" diagnose --catalogue >/dev/null 2>"$tmp/err" &&
	! [ -r /usr/share/vgpuctl/catalogue.tsv ] && ! [ -r /usr/local/share/vgpuctl/catalogue.tsv ] && {
	echo "FAIL: a relocated vgpuctl without a catalogue beside it found one"
	fail=1
}
grep -q "nor in ../share/vgpuctl beside the executable" "$tmp/err" || [ ! -s "$tmp/err" ] || {
	echo "FAIL: no catalogue, not said where: $(cat "$tmp/err")"
	fail=1
}
mkdir -p "$tmp/rel/share/vgpuctl"
cp data/catalogue.tsv "$tmp/rel/share/vgpuctl/"
for how in direct loader; do
	if [ $how = direct ]; then
		got=$("$tmp/rel/bin/vgpuctl" diagnose --catalogue --noheadings 2>"$tmp/err" | wc -l)
	else
		got=$("$tmp/rel/lib/ld-linux-x86-64.so.2" "$tmp/rel/bin/vgpuctl" diagnose --catalogue --noheadings 2>"$tmp/err" | wc -l)
	fi
	[ "$got" = "$n" ] || {
		echo "FAIL: relocated ($how): --catalogue lists $got rows, not $n: $(cat "$tmp/err")"
		fail=1
	}
done
"$bin" diagnose --catalogue vm1 >/dev/null 2>&1
[ $? = 2 ] || {
	echo "FAIL: --catalogue with a domain is no usage error"
	fail=1
}
for bad in yesterday '' -h 2x '2h later'; do
	"$bin" --sysroot "$tmp/fs" diagnose vm1 --since "$bad" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc != 2 ] || ! grep -q "since '$bad'" "$tmp/err"; then
		echo "FAIL: --since '$bad' (exit $rc)"
		fail=1
	fi
done
for good in 30m -2h '1d ago' 2026-11-28T19:02:11Z; do
	"$bin" --sysroot "$tmp/fs" diagnose vm1 --since "$good" >/dev/null 2>&1 || {
		echo "FAIL: --since '$good'"
		fail=1
	}
done
exit $fail
