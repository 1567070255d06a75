#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl why: every reason code of the capacity model (src/lib/capacity.h), and
# a GPU that takes more, each on a host state where it is the answer.  stdout
# (text and --json) and stderr are compared byte for byte with
# tests/data/expected/why/CASE.{txt,json,err} (the host root in stderr reads
# ROOT); the JSON is also checked to give the expected code on the GPU the case
# is about, so a regenerated golden cannot bless another answer.
# VGPU_TEST_REGENERATE=1 rewrites the goldens; review the diff.
# max-instances needs the FUSE emulator (tests/emu): without it that case is
# skipped and the script exits 77 once the others pass.
#   why.sh VGPUCTL SRCDIR NVML_STANDIN
set -u
bin=$(realpath "$1") src=$(realpath "$2") nvml=$(realpath "$3")
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
# shellcheck source=tests/emu/lib.sh
. tests/emu/lib.sh
fakes=$src/tests/apply
hosts=tests/data/hosts
exp=tests/data/expected/why
tmp=$(mktemp -d)
# our trap stops the emulators too (emu_start would otherwise replace it)
trap '_emu_exit; rm -rf "$tmp"' EXIT
# shellcheck disable=SC2034 # read by tests/emu/lib.sh
_emu_trap=1
fail=0
skipped=0
mkdir -p "$exp"
bad() {
	echo "FAIL: $*"
	fail=1
}

# global options before 'why' (--nvml for the cases that need NVML's answers)
glob=()

# check CASE ROOT GPU WANT WHY-ARGS...: `vgpuctl --sysroot ROOT [glob] [--json] why
# WHY-ARGS`, both outputs against the goldens, and GPU's answer in the JSON: reason
# WANT with nothing available, or (WANT "ok") a positive count and no reason.
check() {
	local name=$1 root=$2 gpu=$3 want=$4 json ext rc
	shift 4
	for json in "" --json; do
		ext=txt
		[[ -n $json ]] && ext=json
		rc=0
		"$bin" --sysroot "$root" "${glob[@]}" $json why "$@" >"$tmp/out.$ext" 2>"$tmp/err" ||
			rc=$?
		echo "exit $rc" >>"$tmp/err"
		sed "s|$root|ROOT|g" "$tmp/err" >"$tmp/err.$ext"
		golden_cmp "$tmp/out.$ext" "$exp/$name.$ext" "why $name: vgpuctl ${glob[*]} $json why $*"
	done
	golden_cmp "$tmp/err.txt" "$exp/$name.err" "why $name: stderr"
	cmp -s "$tmp/err.txt" "$tmp/err.json" ||
		bad "why $name: stderr differs with --json: $(diff "$tmp/err.txt" "$tmp/err.json")"
	python3 - "$tmp/out.json" "$gpu" "$want" <<'PY' || bad "why $name: not '$want' on $gpu"
import json, sys
path, gpu, want = sys.argv[1:]
rows = [r for r in json.load(open(path))["why"] if r["gpu"] == gpu]
assert len(rows) == 1, rows
r = rows[0]
if want == "ok":
    assert r["reason"] is None and r["available"] > 0, r
else:
    assert r["reason"] == want and r["available"] == 0, r
PY
}

# boot FIXTURE DIR: a just-booted copy (VFs off, no GIs, MIG off) for the fakes
boot() {
	cp -a "$hosts/$1" "$2"
	"$fakes/fake-nv-boot" "$2"
}

# domain NAME N: tests/data/domains/plain.xml renamed, with its own UUID
domain() {
	sed -e "s|<name>plain</name>|<name>$1</name>|" \
		-e "s|<uuid>.*</uuid>|<uuid>0f1e2d3c-4b5a-4697-8887-7665544332$(printf %02d "$2")</uuid>|" \
		tests/data/domains/plain.xml >"$tmp/$1.xml"
}

# ---- a GPU that takes more: vfio-ts-l40s, L40S-4Q (41 holds one, c1 is free)
check available "$hosts/vfio-ts-l40s" 0000:c1:00.0 ok L40S-4Q
# the count is a lower bound where the GIs' profiles come from the driver's lists
check available-inexact "$hosts/vfio-mig-h100" 0000:ca:00.0 ok H100-1-10C
# a type a VF holds is never "not offered": no list names 1059 there (no NVML, no catalogue)
out=$("$bin" --sysroot "$hosts/vfio-mig-h100" why H100-3-40C 2>&1)
[[ $out == *"VF 0000:ca:00.4 of GPU 0000:ca:00.0 holds type 1059, which no list names: it may be this one"* ]] ||
	bad "why H100-3-40C on vfio-mig-h100 does not name the VF that may hold it: $out"

# ---- not-supported: the damaged host's L40S has no A30 type
check not-supported "$hosts/malformed" 0000:41:00.0 not-supported A30-6C

# ---- vfs-disabled: a booted H100 (VFs off); only NVML names the types then
boot vfio-mig-h100 "$tmp/vfs-off"
glob=(--nvml "$nvml")
FAKE_NV_ROOT=$tmp/vfs-off check vfs-disabled "$tmp/vfs-off" 0000:ca:00.0 vfs-disabled H100-1-10C
glob=()

# ---- mig-mode-unknown: without NVML the A30 host's MIG mode is not known (gpus says
# unknown), whatever its lists show: a MIG-backed type on 3b, a time-sliced one on af
check mig-mode-unknown "$hosts/a30-dual-mdev" 0000:3b:00.0 mig-mode-unknown A30-1-6C
check mig-mode-unknown-ts "$hosts/a30-dual-mdev" 0000:af:00.0 mig-mode-unknown A30-6C
# no-room-for-gpu-instance (af: two 2g.12gb GIs fill the A30)
check no-room-for-gpu-instance "$hosts/a30-dual-mdev" 0000:af:00.0 no-room-for-gpu-instance \
	--gpu 0000:af:00.0 A30-1-6C
# ---- mig-mode-off (3b) and mig-mode-on (af), as NVML says them: a booted A30 host
# with its VFs on and MIG turned on on af
r=$tmp/a30-nvml
boot a30-dual-mdev "$r"
for g in 0000:3b:00.0 0000:af:00.0; do
	FAKE_NV_ROOT=$r "$fakes/fake-sriov-manage" -e $g >/dev/null
done
FAKE_NV_ROOT=$r "$fakes/fake-nvidia-smi" -i 0000:af:00.0 -mig 1 >/dev/null
glob=(--nvml "$nvml")
FAKE_NV_ROOT=$r check mig-mode-off "$r" 0000:3b:00.0 mig-mode-off --gpu 0000:3b:00.0 A30-1-6C
FAKE_NV_ROOT=$r check mig-mode-on "$r" 0000:af:00.0 mig-mode-on --gpu 0000:af:00.0 A30-6C
glob=()

# ---- no-gpu-instance: a booted H100 with MIG on and VFs enabled, no GI yet
r=$tmp/no-gi
boot vfio-mig-h100 "$r"
FAKE_NV_ROOT=$r "$fakes/fake-nvidia-smi" -i 0000:ca:00.0 -mig 1 >/dev/null
FAKE_NV_ROOT=$r "$fakes/fake-sriov-manage" -e 0000:ca:00.0 >/dev/null
glob=(--nvml "$nvml")
FAKE_NV_ROOT=$r check no-gpu-instance "$r" 0000:ca:00.0 no-gpu-instance H100-2-20C
glob=()

# ---- other-size-present: GPU 41 holds an L40S-4Q, mixed-size mode is off
check other-size-present "$hosts/vfio-ts-l40s" 0000:41:00.0 other-size-present L40S-8Q

# ---- framebuffer-full: a domain takes an L40S-48Q (the only GPU that offers it is
# c1: VF c1:00.4); the driver then lists nothing on c1's free VFs (the plain tree
# needs a hand for that), and the catalogue assign stored still names the types.
# L40S-48C is another type of the same size: no other-size, no maximum reached
r=$tmp/fb-full
cp -a "$hosts/vfio-ts-l40s" "$r"
domain big 1
"$bin" --sysroot "$r" assign --from "$tmp/big.xml" -o "$tmp/big.out.xml" --vgpu L40S-48Q \
	>/dev/null 2>"$tmp/assign.err" || bad "framebuffer-full: assign: $(cat "$tmp/assign.err")"
vf=$r/sys/bus/pci/devices/0000:c1:00.4/nvidia
[[ $(<"$vf/current_vgpu_type") == 1155 ]] ||
	bad "framebuffer-full: L40S-48Q (1155) not on c1:00.4: $(<"$vf/current_vgpu_type")"
: >"$vf/creatable_vgpu_types"
for vf in "$r"/sys/bus/pci/devices/0000:c1:*/nvidia; do
	[[ $(<"$vf/current_vgpu_type") == 0 ]] && : >"$vf/creatable_vgpu_types"
done
check framebuffer-full "$r" 0000:c1:00.0 framebuffer-full L40S-48C

# ---- max-instances: the emulator on an A30 host whose A30-6C says max_instance=2,
# two A30-6C created on GPU 3b: 12 of 24 GiB used, so not framebuffer-full
if emu_available; then
	r=$tmp/a30-max2
	cp -a "$hosts/a30-dual-mdev" "$r"
	for f in "$r"/sys/bus/pci/devices/*/mdev_supported_types/nvidia-684/description; do
		sed -i 's/max_instance=4/max_instance=2/' "$f"
	done
	if emu_start "$r"; then
		devs=$EMU_ROOT/sys/bus/pci/devices
		echo 11111111-1111-4111-8111-111111111111 \
			>"$devs/0000:3b:00.4/mdev_supported_types/nvidia-684/create" ||
			bad "max-instances: first A30-6C not created"
		echo 22222222-2222-4222-8222-222222222222 \
			>"$devs/0000:3b:00.5/mdev_supported_types/nvidia-684/create" ||
			bad "max-instances: second A30-6C not created"
		check max-instances "$EMU_ROOT" 0000:3b:00.0 max-instances A30-6C
		emu_stop || bad "max-instances: the emulator failed"
	else
		bad "max-instances: the emulator did not start"
	fi
else
	echo "SKIP: max-instances (no usable FUSE emulator)"
	skipped=1
fi

# ---- reserved: two --per-start domains claim the two free 2g.12gb GIs' VFs of af
r=$tmp/reserved
cp -a "$hosts/a30-dual-mdev" "$r"
for n in 1 2; do
	domain "d$n" "$((n + 1))"
	"$bin" --sysroot "$r" assign --from "$tmp/d$n.xml" -o "$tmp/d$n.out.xml" --vgpu A30-2-12C \
		--per-start >/dev/null 2>"$tmp/assign.err" ||
		bad "reserved: assign d$n: $(cat "$tmp/assign.err")"
done
[[ -z $(find "$r/sys/bus/mdev/devices" -mindepth 1 2>/dev/null) ]] ||
	bad "reserved: --per-start created a vGPU"
check reserved "$r" 0000:af:00.0 reserved A30-2-12C

# ---- all-vfs-held: the RTX PRO 6000 applied with DC-1-4C x16 (6 per 1g.24gb+gfx GI:
# three GIs, 18 seats, 16 VFs)
r=$tmp/all-held
boot vfio-mig-rtxpro6000 "$r"
printf '%s\n' "version: v1" "vgpu-configs:" "  dc4:" "    - devices: all" \
	'      vgpu-devices: {"DC-1-4C": 16}' >"$tmp/dc4.yaml"
FAKE_NV_ROOT=$r "$bin" --sysroot "$r" --nvml "$nvml" apply -f "$tmp/dc4.yaml" --config dc4 \
	--nvidia-smi "$fakes/fake-nvidia-smi" --sriov-manage "$fakes/fake-sriov-manage" \
	>/dev/null 2>"$tmp/apply.err" || bad "all-vfs-held: apply: $(cat "$tmp/apply.err")"
held=0
for f in "$r"/sys/bus/pci/devices/0000:3d:*/nvidia/current_vgpu_type; do
	[[ $(<"$f") == 1224 ]] && held=$((held + 1))
done
[[ $held == 16 ]] || bad "all-vfs-held: $held VFs hold DC-1-4C, not 16"
glob=(--nvml "$nvml")
FAKE_NV_ROOT=$r check all-vfs-held "$r" 0000:3d:00.0 all-vfs-held DC-1-4C
glob=()

# every code of the closed list has a case here
for code in not-supported vfs-disabled mig-mode-off mig-mode-on mig-mode-unknown \
	no-room-for-gpu-instance no-gpu-instance other-size-present framebuffer-full max-instances reserved all-vfs-held; do
	[[ -f $exp/$code.json ]] || bad "no golden for $code"
done
if [[ $fail == 0 && $skipped == 1 ]]; then
	exit 77
fi
[[ $fail == 0 ]] && echo "ok: why"
exit $fail
