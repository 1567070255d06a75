#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl migrate-check's NVML and board checks (driver-build, nvidia-compatibility,
# board, ecc, topology's NVLinks) between two dual-A30 fixture hosts (copies), each with the NVML
# stand-in speaking for its own tree (FAKE_NV_ROOT, --nvml) and the target reached
# through --offer-command.  Each check gets a pair of hosts that fails it, and the
# one FAIL line must be that check's.  With every setting alike the four pass, and
# the manifest carries the vGPU's metadata and runtime state size.  Without NVML,
# driver-build reads the kernel log (var/log/kern.log), and fails on
# "vGPU migration disabled" there.
#   migrate-nvml.sh VGPUCTL SRCDIR NVML_STANDIN
set -u
bin=$(realpath "$1") src=$(realpath "$2") nvml=$(realpath "$3")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
dom=11111111-2222-4333-8444-555555555551
gpus="0000:3b:00.0 0000:af:00.0"

# a source and a target, copied once (a copy takes a second or two on a loaded machine)
cp -a tests/data/hosts/a30-dual-mdev "$tmp/src"
cp -a tests/data/hosts/a30-dual-mdev "$tmp/dst"

# fresh: the source with vm1's A30-4C running as NVML instance 7, the target like it;
# what a case changed is put back
fresh() {
	local g
	rm -rf "$tmp/src/var/lib/fake-nvidia" "$tmp/dst/var/lib/fake-nvidia" "$tmp/src/var/log" \
		"$tmp/dst/var/log"
	for g in $gpus; do
		echo 0x1532 >"$tmp/dst/sys/devices/pci0000:${g:5:2}/$g/subsystem_device"
	done
	mkdir -p "$tmp/src/var/lib/vgpuctl/owners" "$tmp/src/var/lib/fake-nvidia" \
		"$tmp/dst/var/lib/fake-nvidia"
	printf 'domain=vm1\ndomain_uuid=%s\ngpu=0000:3b:00.0\nparent=0000:3b:00.4\ninterface=mdev\ntype_id=683\nprofile=A30-4C\nmdev_uuid=aaaaaaaa-2222-4333-8444-555555555551\nlifetime=persistent\n' \
		"$dom" >"$tmp/src/var/lib/vgpuctl/owners/0000:3b:00.4_aaaaaaaa-2222-4333-8444-555555555551"
	echo "7 $dom 683" >"$tmp/src/var/lib/fake-nvidia/vgpus-0000:3b:00.0"
	echo "runtime-state 41943040" >"$tmp/src/var/lib/fake-nvidia/vgpu-7"
}

# the target's migrate-offer, its manifest on stdin kept in $tmp/manifest
cat >"$tmp/offer" <<EOF
#!/bin/bash
tee "$tmp/manifest" | FAKE_NV_ROOT=\$1 exec "$bin" --sysroot "\$1" \${2:+--nvml "\$2"} migrate-offer
EOF
chmod +x "$tmp/offer"

# mcheck [--no-nvml]: migrate-check vm1 on the source, output in $tmp/out
mcheck() {
	local lib=$nvml
	[ "${1:-}" = --no-nvml ] && lib=
	FAKE_NV_ROOT=$tmp/src "$bin" --sysroot "$tmp/src" ${lib:+--nvml "$lib"} migrate-check vm1 \
		--to qemu+ssh://dst/system --offer-command "$tmp/offer $tmp/dst $lib" \
		>"$tmp/out" 2>"$tmp/err"
	echo "exit $?" >>"$tmp/out"
}

# only_fail ID WORDS: the one FAIL line is ID's, and says WORDS; the verdict no-go (3)
only_fail() {
	if [ "$(grep -c '^FAIL ' "$tmp/out")" != 1 ] || ! grep -q "^FAIL $1 .*$2" "$tmp/out" ||
		[ "$(tail -n 2 "$tmp/out" | tr '\n' ' ')" != "no-go exit 3 " ]; then
		echo "FAIL: want only '$1' to fail, saying '$2':"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

# line STATUS ID [WORDS]
line() {
	if ! grep -q "^$1 $2 .*${3:-}" "$tmp/out"; then
		echo "FAIL: no '$1 $2 ... ${3:-}' line:"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

# every setting alike: the four pass; the manifest carries NVML's metadata and state size
fresh
mcheck
line PASS driver-build "migration on (nvml) vs migration on (nvml)"
line PASS nvidia-compatibility "metadata vs live+sleep+hibernate+cold"
line PASS board "10de:20b7 10de:1532 24576MiB vs 10de:20b7 10de:1532 24576MiB"
line PASS ecc "on vs on"
line PASS topology "1 vGPUs, NVLinks 0 vs 1 vGPUs, NVLinks 0"
grep -q '^FAIL ' "$tmp/out" && { echo "FAIL: a check fails between alike hosts:"; cat "$tmp/out"; fail=1; }
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
v = m["vgpus"][0]
sys.exit(0 if v["runtime-state-bytes"] == 41943040 and len(v["vgpu-metadata"]) > 100
         and m["driver-build"] is True and m["driver-build-from"] == "nvml" else 1)' "$tmp/manifest" ||
	{ echo "FAIL: the manifest lacks NVML's keys:"; cat "$tmp/manifest"; fail=1; }

# driver-build: the target's GPUs say migration is off (their compatibility answer set
# to live, so that only this check fails)
fresh
for g in $gpus; do printf 'migration 0\ncompat live\n' >"$tmp/dst/var/lib/fake-nvidia/pgpu-$g"; done
mcheck
only_fail driver-build "migration on (nvml) vs migration off (nvml) — the target's vGPU manager"

# driver-build without NVML: the kernel log's last word on each end
fresh
mkdir -p "$tmp/src/var/log" "$tmp/dst/var/log"
printf 'Nov 28 10:00:01 src kernel: NVRM: vGPU migration enabled\n' >"$tmp/src/var/log/kern.log"
printf 'Nov 27 09:00:00 dst kernel: NVRM: vGPU migration enabled\nNov 28 10:00:02 dst kernel: NVRM: vGPU migration disabled\n' \
	>"$tmp/dst/var/log/kern.log"
mcheck --no-nvml
only_fail driver-build "migration on (kernel log) vs migration off (kernel log)"
line UNKNOWN nvidia-compatibility
line UNKNOWN ecc
line UNKNOWN topology "NVLinks ? vs 1 vGPUs, NVLinks ?"

# nvidia-compatibility: NVIDIA's answer on the target is cold only, limited by the guest driver
fresh
for g in $gpus; do printf 'compat cold\nlimit guest-driver\n' >"$tmp/dst/var/lib/fake-nvidia/pgpu-$g"; done
mcheck
only_fail nvidia-compatibility "metadata vs cold (limit: guest driver) — NVIDIA refuses a live migration, limited by the guest driver"

# board: the same device ID and framebuffer, another subsystem (another maker's board)
fresh
for g in $gpus; do
	echo 0x1600 >"$tmp/dst/sys/devices/pci0000:${g:5:2}/$g/subsystem_device"
done
mcheck
only_fail board "10de:1532 24576MiB vs 10de:20b7 10de:1600 24576MiB — choose a target with the same board"

# ecc: off on the target's GPUs
fresh
for g in $gpus; do echo 0 >"$tmp/dst/var/lib/fake-nvidia/ecc-$g"; done
mcheck
only_fail ecc "on vs off — set the target's ECC mode"
# topology: as many active NVLinks on both ends pass (the manifest says how many);
# the target's GPUs without NVLink (a PCIe board) fail
fresh
for g in $gpus; do echo 4 >"$tmp/src/var/lib/fake-nvidia/nvlinks-$g"; echo 4 >"$tmp/dst/var/lib/fake-nvidia/nvlinks-$g"; done
mcheck
line PASS topology "1 vGPUs, NVLinks 4 vs 1 vGPUs, NVLinks 4"
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["vgpus"][0]["nvlinks"] != 4)' "$tmp/manifest" ||
	{ echo "FAIL: the manifest lacks nvlinks 4:"; cat "$tmp/manifest"; fail=1; }
rm -f "$tmp"/dst/var/lib/fake-nvidia/nvlinks-*
mcheck
only_fail topology "NVLinks 4 vs 1 vGPUs, NVLinks 0 — vGPU 1's GPU has 4 active NVLinks here and 0 on the target: choose a target GPU with the same NVLink width"
exit $fail
