#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The NVML stand-in (libnvidia-ml.so.1) side by side with the fake nvidia-smi on
# booted copies of vfio-mig-h100 (one of them made an RTX PRO 6000), through
# nvml-probe: selftest.sh PROBE LIB OLD_LIB SRCDIR
set -euo pipefail
probe=$(realpath "$1") lib=$(realpath "$2") oldlib=$(realpath "$3") src=$(realpath "$4")
fakes=$src/tests/apply
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gpu=0000:ca:00.0
fail=0
LIB=$lib

bad() {
	echo "FAIL: $*"
	fail=1
}

# host DIR: a booted copy of vfio-mig-h100 at DIR, FAKE_NV_ROOT and the globals set
host() {
	root=$1
	cp -a "$src/tests/data/hosts/vfio-mig-h100" "$root"
	"$fakes/fake-nv-boot" "$root"
	use "$root"
}

use() { # ROOT
	root=$1 st=$1/var/lib/fake-nvidia
	calls=$st/calls caps=$root/proc/driver/nvidia/capabilities/gpu0/mig
	info=$root/proc/driver/nvidia/gpus/$gpu/information
	export FAKE_NV_ROOT=$root
}

# p BUS|- CMD ARGS...: nvml-probe on $LIB; OUT, RC
p() {
	RC=0
	OUT=$("$probe" "$LIB" "$@" 2>"$tmp/err") || RC=$?
	if [[ -s $tmp/err ]]; then bad "nvml-probe $* wrote on stderr: $(<"$tmp/err")"; fi
}

# smi ARGS...: the fake nvidia-smi; OUT, RC
smi() {
	RC=0
	OUT=$("$fakes/fake-nvidia-smi" "$@" 2>&1) || RC=$?
}

expect() { # WHAT WANT_RC WANT_STDOUT
	if [[ $RC != "$2" || $OUT != "$3" ]]; then
		bad "$1: exit $RC (want $2), stdout:"
		printf '%s\n' "$OUT" | sed 's/^/    /'
		echo "  want:"
		printf '%s\n' "$3" | sed 's/^/    /'
	fi
}

# fnv FUNCTION ARGS...: a function of fake-nv-lib.sh on $root (the lock taken)
fnv() {
	(
		# shellcheck disable=SC2034 # read by fnv_die
		FNV_PROG=selftest
		# shellcheck source-path=SCRIPTDIR source=../apply/fake-nv-lib.sh
		. "$fakes/fake-nv-lib.sh"
		fnv_root "$root"
		"$@"
	)
}

# the GIs as fake-nvidia-smi -lgi lists them: "GI PROFILE START:SIZE", by GI
lgi() {
	{ "$fakes/fake-nvidia-smi" mig -i "$gpu" -lgi || true; } | awk '$3 == "MIG" { print $6, $5, $7 }' | sort -n
}

creatable() { # every VF's creatable list, with its name
	local f
	for f in "$root"/sys/bus/pci/devices/*/nvidia/creatable_vgpu_types; do
		echo "== ${f#"$root"/}"
		cat "$f"
	done
}

# agree WHAT: the stand-in's GIs are -lgi's, and the creatable lists it wrote are the
# ones fake-nv-lib.sh writes from the same state
agree() {
	local want
	p "$gpu" gis
	want=$(lgi)
	[[ $RC == 0 && $OUT == "$want" ]] || bad "$1: nvml-probe gis (exit $RC): '$OUT', -lgi: '$want'"
	creatable >"$tmp/c-nvml"
	fnv fnv_refresh_creatable "$gpu"
	creatable >"$tmp/c-bash"
	cmp -s "$tmp/c-nvml" "$tmp/c-bash" ||
		bad "$1: creatable lists differ (< stand-in, > fake-nv-lib): $(diff "$tmp/c-nvml" "$tmp/c-bash" | head -8)"
}

vgpu() { # VF TYPE GI: a vGPU as vgpuctl's sysfs write leaves it (TYPE 0: none)
	local d=$root/sys/bus/pci/devices/$1/nvidia
	echo "$2" >"$d/current_vgpu_type"
	if [[ $2 == 0 ]]; then rm -f "$d/gpu_instance_id"; else echo "$3" >"$d/gpu_instance_id"; fi
}

set_model() { # MODEL: rewrite the GPU's Model: line
	sed -i "s/^Model:.*/Model: \t\t $1/" "$info"
}

# --- symbols ------------------------------------------------------------------
host "$tmp/h100"
p - syms
[[ $RC == 0 && $(grep -c ' yes$' <<<"$OUT") == 37 && $OUT != *' no'* ]] ||
	bad "the stand-in lacks entry points: $OUT"
missing=$("$probe" "$oldlib" - syms | awk '$2 == "no" { print $1 }' | sort | tr '\n' ' ')
want="nvmlDeviceCreateGpuInstanceWithPlacement nvmlDeviceGetModuleId nvmlDeviceGetVgpuHeterogeneousMode nvmlDeviceGetVgpuSchedulerState nvmlDeviceGetVgpuTypeSupportedPlacements nvmlDeviceSetVgpuHeterogeneousMode nvmlVgpuInstanceGetRuntimeStateSize nvmlVgpuTypeGetMaxInstancesPerGpuInstance "
[[ $missing == "$want" ]] || bad "old/ lacks '$missing', want '$want'"

# --- init, errors, handles -------------------------------------------------------
RC=0
OUT=$(env -u FAKE_NV_ROOT "$probe" "$lib" - init) || RC=$?
expect "init without FAKE_NV_ROOT" 1 "nvmlInit_v2: Driver Not Loaded (9)"
RC=0
OUT=$(FAKE_NV_ROOT=$tmp "$probe" "$lib" - init) || RC=$?
expect "init on a directory that is no host tree" 1 "nvmlInit_v2: Driver Not Loaded (9)"
p - uninit
expect "a call before nvmlInit_v2" 0 "nvmlDeviceGetHandleByPciBusId_v2: Uninitialized (1)"
for e in "0 Success" "2 Invalid Argument" "3 Not Supported" "6 Not Found" "7 Insufficient Size" \
	"9 Driver Not Loaded" "19 In use by another client" "23 Insufficient Resources" "999 Unknown Error"; do
	p - errstr "${e%% *}"
	expect "nvmlErrorString(${e%% *})" 0 "${e#* }"
done
p 00000000:CA:00.0 handle
expect "the 8-digit domain, upper case" 0 ok
p 0000:ca:00.4 handle
expect "a VF" 1 "nvmlDeviceGetHandleByPciBusId_v2: Not Found (6)"
p 0000:00:00.0 handle
expect "the host bridge" 1 "nvmlDeviceGetHandleByPciBusId_v2: Not Found (6)"
p 0000:cb:00.0 handle
expect "no such device" 1 "nvmlDeviceGetHandleByPciBusId_v2: Not Found (6)"
p ca:00.0 handle
expect "no domain" 1 "nvmlDeviceGetHandleByPciBusId_v2: Invalid Argument (2)"

# --- MIG mode off: profiles, placements, types -------------------------------------
p "$gpu" mig
expect "mig (boot)" 0 "Disabled Disabled"
smi -i "$gpu" --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader
[[ $OUT == "00000000:CA:00.0, Disabled, Disabled" ]] || bad "fake query: $OUT"
p "$gpu" mem
expect "memory" 0 "81559 81559 0"
p "$gpu" profiles
got=$(sort -n <<<"$OUT") want=$(fnv fnv_profiles h100-80 | sort -n)
[[ $RC == 0 && $got == "$want" ]] || bad "H100 profiles (exit $RC): $(diff <(echo "$got") <(echo "$want"))"
p "$gpu" profile 0
expect "profile index 0" 0 "id 19 name MIG 1g.10gb slices 1 instances 7 memory 9984 sm 16"
p "$gpu" profile 9
expect "profile index 9 (1 slice rev 2)" 0 "id 15 name MIG 1g.20gb slices 1 instances 4 memory 20224 sm 26"
p "$gpu" profile 5
expect "profile index 5 (8 slices)" 1 "nvmlDeviceGetGpuInstanceProfileInfoV: Not Supported (3)"
p "$gpu" profile 17
expect "profile index 17" 1 "nvmlDeviceGetGpuInstanceProfileInfoV: Invalid Argument (2)"
p "$gpu" profile-badversion 0
expect "profile info, version 1" 1 "nvmlDeviceGetGpuInstanceProfileInfoV: Invalid Argument (2)"
p "$gpu" placements 9
expect "placements of 9" 0 "0:4 4:4"
p "$gpu" placements 15
expect "placements of 15" 0 "0:2 2:2 4:2 6:2"
p "$gpu" placements 19
expect "placements of 19" 0 "0:1 1:1 2:1 3:1 4:1 5:1 6:1"
p "$gpu" placements 47
expect "placements of a profile the H100 lacks" 1 \
	"nvmlDeviceGetGpuInstancePossiblePlacements_v2: Not Supported (3)"
p "$gpu" placements-small 19
expect "placements, room for 6 of 7" 0 "nvmlDeviceGetGpuInstancePossiblePlacements_v2: Insufficient Size (7)
count 7 (want 7)"
p "$gpu" create 9 0
expect "create with MIG off" 1 "nvmlDeviceCreateGpuInstanceWithPlacement: Not Supported (3)"
p "$gpu" create-any 9
expect "create-any with MIG off" 1 "nvmlDeviceCreateGpuInstance: Not Supported (3)"
p "$gpu" gis
expect "GIs with MIG off" 1 "nvmlDeviceGetGpuInstances: Not Supported (3)"
p "$gpu" types
want=$(fnv fnv_vgpu_types h100-80)
[[ $RC == 0 && $OUT == "$want" ]] || bad "H100 types (exit $RC): $(diff <(echo "$OUT") <(echo "$want"))"
p "$gpu" names
[[ $(head -1 <<<"$OUT") == "1056 NVIDIA H100-1-10C" ]] || bad "type names: $OUT"
p "$gpu" maxpergi-badversion 1056
expect "per-GI maximum, version 0" 1 \
	"nvmlVgpuTypeGetMaxInstancesPerGpuInstance: Argument version mismatch (25)"

# --- heterogeneous mode (MIG off, VFs on) ---------------------------------------
"$fakes/fake-sriov-manage" -e "$gpu" >/dev/null
p "$gpu" hetero
expect "hetero (boot)" 0 0
p "$gpu" hetero-set 1
expect "hetero-set 1" 0 ok
p "$gpu" hetero
expect "hetero after set" 0 1
[[ $(cat "$st/hetero-$gpu") == 1 ]] || bad "hetero-$gpu: $(cat "$st/hetero-$gpu")"
vgpu 0000:ca:00.6 1056 0
p "$gpu" hetero-set 0
expect "hetero-set with a vGPU" 1 "nvmlDeviceSetVgpuHeterogeneousMode: In use by another client (19)"
vgpu 0000:ca:00.6 0
p "$gpu" hetero-set 0
expect "hetero-set 0" 0 ok
p "$gpu" hetero-set 2
expect "hetero-set 2" 1 "nvmlDeviceSetVgpuHeterogeneousMode: Invalid Argument (2)"
p "$gpu" hetero-badversion
expect "hetero, version 2" 1 "nvmlDeviceGetVgpuHeterogeneousMode: Argument version mismatch (25)"

# --- MIG on: first fit ----------------------------------------------------------
smi -i "$gpu" -mig 1
p "$gpu" mig
expect "mig (-mig 1)" 0 "Enabled Enabled"
p "$gpu" hetero-set 1
expect "hetero-set with MIG on" 1 "nvmlDeviceSetVgpuHeterogeneousMode: Not Supported (3)"
agree "no GIs"
# 3g.40gb + 2g.20gb + 2 x 1g.10gb: the lowest free start puts the 3g at 0, the 2g at
# 4 and the first 1g at 6, and slice 7 is no 1g start: the second 1g has no room
p "$gpu" create-any 9
expect "create-any 9" 0 "GI 1 0:4"
agree "first fit: 9"
p "$gpu" create-any 14
expect "create-any 14" 0 "GI 2 4:2"
agree "first fit: 9 14"
p "$gpu" create-any 19
expect "create-any 19" 0 "GI 3 6:1"
agree "first fit: 9 14 19"
p "$gpu" create-any 19
expect "create-any 19, second" 1 "nvmlDeviceCreateGpuInstance: Insufficient Resources (23)"
agree "first fit: 9 14 19 19"
smi mig -i "$gpu" -dgi
[[ $RC == 0 && -z $(lgi) ]] || bad "-dgi of the first-fit GIs: exit $RC, $OUT"
agree "after -dgi"

# --- MIG on: explicit placements ------------------------------------------------
p "$gpu" create 9 4
expect "create 9 at 4" 0 "GI 1 4:4"
agree "9@4"
p "$gpu" create 14 0
expect "create 14 at 0" 0 "GI 2 0:2"
agree "9@4 14@0"
p "$gpu" create 19 7
expect "create 19 at 7 (no such start)" 1 \
	"nvmlDeviceCreateGpuInstanceWithPlacement: Insufficient Resources (23)"
p "$gpu" create 14 1
expect "create 14 at 1 (no such start)" 1 \
	"nvmlDeviceCreateGpuInstanceWithPlacement: Insufficient Resources (23)"
p "$gpu" create 14 4
expect "create 14 at 4 (taken)" 1 \
	"nvmlDeviceCreateGpuInstanceWithPlacement: Insufficient Resources (23)"
p "$gpu" create 19 2 2
expect "create 19 at 2:2 (wrong size)" 1 \
	"nvmlDeviceCreateGpuInstanceWithPlacement: Invalid Argument (2)"
p "$gpu" create 99 2 1
expect "create profile 99" 1 "nvmlDeviceCreateGpuInstanceWithPlacement: Invalid Argument (2)"
p "$gpu" create 19 2
expect "create 19 at 2" 0 "GI 3 2:1"
agree "9@4 14@0 19@2"
p "$gpu" create 19 3
expect "create 19 at 3" 0 "GI 4 3:1"
agree "9@4 14@0 19@2 19@3"
p "$gpu" create-any 20
expect "create-any 20 (compute slices exhausted)" 1 \
	"nvmlDeviceCreateGpuInstance: Insufficient Resources (23)"
smi mig -i "$gpu" -lgi
[[ $OUT == *"|   0  MIG 3g.40gb          9        1          4:4     |"* ]] || bad "-lgi: $OUT"
p "$gpu" handles
expect "handles" 0 stable

# --- CIs, GIs in use ------------------------------------------------------------
p "$gpu" ci 1
expect "CI on GI 1" 0 "CI profile 2"
[[ $(grep '^1 ' "$st/gis-$gpu") == "1 9 3g.40gb 4 4 1" ]] || bad "gis-$gpu: $(cat "$st/gis-$gpu")"
[[ $(cat "$caps/gi1/ci0/access") == $'DeviceFileMinor: 13\nDeviceFileMode: 292\nDeviceFileModify: 1' ]] ||
	bad "gi1/ci0/access: $(cat "$caps/gi1/ci0/access" 2>&1)"
p "$gpu" ci 1
expect "a second CI on GI 1" 1 "nvmlGpuInstanceCreateComputeInstance: Insufficient Resources (23)"
p "$gpu" destroy 1
expect "destroy a GI with a CI" 1 "nvmlGpuInstanceDestroy: In use by another client (19)"
smi mig -i "$gpu" -dgi -gi 1
[[ $RC == 2 && $OUT == *"In use by another client" ]] || bad "-dgi of GI 1 with a CI: $RC, $OUT"
smi mig -i "$gpu" -cgi 15 -C
[[ $RC == 2 && $OUT == *"Insufficient Resources" ]] || bad "-cgi 15 on a full GPU: $RC, $OUT"
smi mig -i "$gpu" -dgi -gi 4
expect "-dgi -gi 4" 0 "Successfully destroyed GPU instance ID  4 from GPU  0"
smi mig -i "$gpu" -cgi 19 -C
[[ $RC == 0 && $OUT == *"GPU instance ID  4 "* ]] || bad "-cgi 19 -C: $RC, $OUT"
agree "GI 4 back through the fake"
p "$gpu" ci 4
expect "CI on a GI the fake gave a CI" 1 \
	"nvmlGpuInstanceCreateComputeInstance: Insufficient Resources (23)"
vgpu 0000:ca:00.5 1059 1
p "$gpu" dci 1
expect "dci under a vGPU" 1 "nvmlComputeInstanceDestroy: In use by another client (19)"
p "$gpu" create 20 4
[[ $RC == 1 ]] || bad "create 20 at 4: $RC $OUT"
p "$gpu" destroy 3
expect "destroy GI 3" 0 ok
agree "a vGPU on GI 1, GI 3 gone"
grep -q 1056 "$root/sys/bus/pci/devices/0000:ca:01.0/nvidia/creatable_vgpu_types" ||
	bad "VF 01.0 does not offer 1056 with GI 3 gone: $(cat "$root/sys/bus/pci/devices/0000:ca:01.0/nvidia/creatable_vgpu_types")"
! grep -q 1059 "$root/sys/bus/pci/devices/0000:ca:01.0/nvidia/creatable_vgpu_types" ||
	bad "VF 01.0 offers 1059 (3g.40gb) while a vGPU sits on the only 3g GI"
[[ ! -s $root/sys/bus/pci/devices/0000:ca:00.5/nvidia/creatable_vgpu_types ]] ||
	bad "the VF holding a vGPU offers types"
vgpu 0000:ca:00.5 0
p "$gpu" dci 1
expect "dci 1" 0 "destroyed 1"
[[ ! -e $caps/gi1/ci0 && -e $caps/gi1/access ]] || bad "dci 1 left $caps/gi1 wrong"
p "$gpu" destroy 1
expect "destroy GI 1" 0 ok
[[ ! -e $caps/gi1 ]] || bad "$caps/gi1 left behind"
agree "GI 1 gone"
smi mig -i "$gpu" -dci
smi mig -i "$gpu" -dgi
agree "all gone through the fake"

# --- per-profile maximum, the calls log ----------------------------------------------
: >"$calls"
p "$gpu" create-any 20
expect "create-any 20" 0 "GI 1 0:1"
p "$gpu" create-any 20
expect "create-any 20, second (max 1)" 1 "nvmlDeviceCreateGpuInstance: Insufficient Resources (23)"
smi mig -i "$gpu" -lgi
p "$gpu" ci 1
p "$gpu" dci 1
p "$gpu" destroy 1
p "$gpu" gis
expect "no GIs" 0 ""
want="nvml nvmlInit_v2
nvml nvmlDeviceCreateGpuInstance $gpu 20
nvml nvmlInit_v2
nvml nvmlDeviceCreateGpuInstance $gpu 20
nvidia-smi mig -i $gpu -lgi
nvml nvmlInit_v2
nvml nvmlGpuInstanceCreateComputeInstance $gpu 1 0
nvml nvmlInit_v2
nvml nvmlComputeInstanceDestroy $gpu 1 0
nvml nvmlInit_v2
nvml nvmlGpuInstanceDestroy $gpu 1
nvml nvmlInit_v2"
[[ $(<"$calls") == "$want" ]] || bad "calls: $(diff <(echo "$want") "$calls")"

# --- faults -------------------------------------------------------------------
echo "nvmlDeviceGetMigMode NVML_ERROR_UNKNOWN" >"$st/nvml-fail"
p "$gpu" mig
expect "nvml-fail GetMigMode" 1 "nvmlDeviceGetMigMode: Unknown Error (999)"
printf 'nvmlInit_v2 9\nnvmlDeviceCreateGpuInstanceWithPlacement 19\n' >"$st/nvml-fail"
p - init
expect "nvml-fail nvmlInit_v2" 1 "nvmlInit_v2: Driver Not Loaded (9)"
sed -i 1d "$st/nvml-fail"
p "$gpu" create 19 0
expect "nvml-fail create" 1 "nvmlDeviceCreateGpuInstanceWithPlacement: In use by another client (19)"
tail -1 "$calls" | grep -qx "nvml nvmlDeviceCreateGpuInstanceWithPlacement $gpu 19 0" ||
	bad "the failed create is not logged: $(tail -1 "$calls")"
[[ -z $(lgi) ]] || bad "a failed create made a GI"
rm "$st/nvml-fail"
echo 1 >"$st/kill-after"
p "$gpu" create-any 19
[[ $RC == 137 && $(lgi) == "1 19 0:1" ]] || bad "kill-after 1: exit $RC, GIs $(lgi)"
rm "$st/kill-after" "$st/kill-count"

# --- an old driver ----------------------------------------------------------------
LIB=$oldlib
p "$gpu" create 19 1
expect "old: create with a placement" 2 "missing symbol nvmlDeviceCreateGpuInstanceWithPlacement"
p "$gpu" create-any 19
expect "old: create-any" 0 "GI 2 1:1"
p "$gpu" hetero
expect "old: hetero" 2 "missing symbol nvmlDeviceGetVgpuHeterogeneousMode"
p "$gpu" types
[[ $RC == 0 && $(head -1 <<<"$OUT") == "1056 H100-1-10C 19 - 7 10240" ]] || bad "old: types: $OUT"
agree "old: two 1g"
LIB=$lib

# --- other models: family, profiles and memory agree with fake-nv-lib.sh ------------
host "$tmp/models"
for m in "NVIDIA A100 80GB PCIe:a100-80:81920" "NVIDIA A100-PCIE-40GB:a100-40:40960" \
	"NVIDIA A30:a30:24576" "NVIDIA RTX PRO 6000 Blackwell Server Edition:dc:98304" \
	"NVIDIA H100 NVL::" "NVIDIA L40S::49152"; do
	IFS=: read -r model fam mem <<<"$m"
	set_model "$model"
	got=$(fnv fnv_family "$gpu")
	[[ $got == "$fam" ]] || bad "$model: fnv_family says '$got'"
	p "$gpu" mem
	if [[ -n $mem ]]; then
		expect "$model: memory" 0 "$mem $mem 0"
	else
		expect "$model: memory" 1 "nvmlDeviceGetMemoryInfo: Not Supported (3)"
	fi
	p "$gpu" profiles
	got=$(sort -n <<<"$OUT") want=$(fnv fnv_profiles "$fam" | sort -n)
	[[ $RC == 0 && $got == "$want" ]] || bad "$model: profiles (exit $RC): $(diff <(echo "$got") <(echo "$want"))"
	if [[ -z $fam ]]; then
		p "$gpu" mig
		expect "$model: mig" 1 "nvmlDeviceGetMigMode: Not Supported (3)"
	fi
done
mv "$info" "$info.away" # the PCI device ID instead of the model
echo 0x2bb5 >"$root/sys/bus/pci/devices/$gpu/device"
p "$gpu" mem
expect "device 0x2bb5" 0 "98304 98304 0"
[[ $(fnv fnv_family "$gpu") == dc ]] || bad "fnv_family of device 0x2bb5: $(fnv fnv_family "$gpu")"

# --- RTX PRO 6000 Blackwell: MIG-backed types time-sliced inside a GI ---------------
host "$tmp/dc"
set_model "NVIDIA RTX PRO 6000 Blackwell Server Edition"
echo 0x2bb5 >"$root/sys/bus/pci/devices/$gpu/device"
p "$gpu" types
want=$(cat "$src/tests/nvml/dc-types.txt")
[[ $RC == 0 && $OUT == "$want" ]] || bad "DC types vs dc-types.txt: $(diff <(echo "$OUT") <(echo "$want"))"
p "$gpu" names
[[ $(sed -n 10p <<<"$OUT") == "1220 NVIDIA RTX Pro 6000 Blackwell DC-1-24C" ]] || bad "DC names: $OUT"
p "$gpu" profile 10
expect "DC profile index 10" 0 "id 47 name MIG 1g.24gb+gfx slices 1 instances 4 memory 24320 sm 46"
"$fakes/fake-sriov-manage" -e "$gpu" >/dev/null
smi -i "$gpu" -mig 1
for gi in 1 2 3 4; do
	p "$gpu" create-any 47
	expect "DC create-any 47 #$gi" 0 "GI $gi $((gi - 1)):1"
done
p "$gpu" create-any 47
expect "DC fifth 1g" 1 "nvmlDeviceCreateGpuInstance: Insufficient Resources (23)"
agree "DC four 1g.24gb+gfx"
vf_list() { cat "$root/sys/bus/pci/devices/0000:ca:01.0/nvidia/creatable_vgpu_types"; }
want="ID    : vGPU Name
1220  : NVIDIA RTX Pro 6000 Blackwell DC-1-24C
1221  : NVIDIA RTX Pro 6000 Blackwell DC-1-12C
1222  : NVIDIA RTX Pro 6000 Blackwell DC-1-8C
1223  : NVIDIA RTX Pro 6000 Blackwell DC-1-6C
1224  : NVIDIA RTX Pro 6000 Blackwell DC-1-4C"
[[ $(vf_list) == "$want" ]] || bad "DC creatable: $(vf_list)"
# GI 1 full with three DC-1-8C, GI 2 half full with one DC-1-12C, GIs 3 and 4 go
vgpu 0000:ca:00.4 1222 1
vgpu 0000:ca:00.5 1222 1
vgpu 0000:ca:00.6 1222 1
vgpu 0000:ca:00.7 1221 2
p "$gpu" destroy 4
expect "DC destroy 4" 0 ok
agree "DC GIs 1-3, four vGPUs"
[[ $(vf_list) == "$want" ]] || bad "DC creatable with GI 3 free: $(vf_list)"
p "$gpu" destroy 3
expect "DC destroy 3" 0 ok
agree "DC GIs 1-2, four vGPUs"
[[ $(vf_list) == $'ID    : vGPU Name\n1221  : NVIDIA RTX Pro 6000 Blackwell DC-1-12C' ]] ||
	bad "DC creatable with GI 2 half full: $(vf_list)"
p "$gpu" destroy 2
expect "DC destroy GI 2 under a vGPU" 1 "nvmlGpuInstanceDestroy: In use by another client (19)"

# --- a GPU without MIG or vGPU tables -----------------------------------------------
cp -a "$src/tests/data/hosts/vfio-ts-l40s" "$tmp/l40s"
use "$tmp/l40s"
p 0000:41:00.0 mem
expect "L40S memory" 0 "49152 49152 0"
p 0000:41:00.0 profile 0
expect "L40S profile" 1 "nvmlDeviceGetGpuInstanceProfileInfoV: Not Supported (3)"
p 0000:41:00.0 types
expect "L40S types" 1 "nvmlDeviceGetSupportedVgpus: Not Supported (3)"

# --- live migration: ECC, vGPU instances, metadata, compatibility, runtime state -----
use "$tmp/h100"
p "$gpu" ecc
expect "ECC by default" 0 "1 1"
echo 0 >"$st/ecc-$gpu"
p "$gpu" ecc
expect "ECC off" 0 "0 0"
# module ID (#30: Fabric Manager's physical ID on HGX boards): module-<BDF>, else none
p "$gpu" module
expect "no module ID" 1 "nvmlDeviceGetModuleId: Not Supported (3)"
echo 4 >"$st/module-$gpu"
p "$gpu" module
expect "module ID" 0 "module 4"
p "$gpu" vgpus
expect "no vGPU instances" 0 ""
printf '7 11111111-2222-4333-8444-555555555551 1058\n9 22222222-2222-4333-8444-555555555552 1056\n' \
	>"$st/vgpus-$gpu"
p "$gpu" vgpus
expect "two vGPU instances" 0 $'7 11111111-2222-4333-8444-555555555551 1 1058\n9 22222222-2222-4333-8444-555555555552 1 1056'
p "$gpu" vgpus-small
expect "vGPU instances, no room" 0 $'nvmlDeviceGetActiveVgpus: Insufficient Size (7)\ncount 2'
p "$gpu" meta-small 7
expect "metadata, no room" 0 $'nvmlVgpuInstanceGetMetadata: Insufficient Size (7)\nsize 272'
p "$gpu" meta 0
expect "metadata of instance 0" 1 "nvmlVgpuInstanceGetMetadata: Invalid Argument (2)"
p "$gpu" meta 8
expect "metadata of no instance" 1 "nvmlVgpuInstanceGetMetadata: Not Found (6)"
printf 'migration 0\nguest-driver 535.1\nruntime-state 4096\n' >"$st/vgpu-9"
p "$gpu" meta 9
expect "metadata, set" 0 "size 272 guest 535.1 host 550.90.05 caps 0 opaque 64 'nvml-standin vgpu $gpu 9 1056'"
p "$gpu" pmeta
expect "GPU metadata" 0 "size 188 host 550.90.05 caps 1 range 0x120001-0x120004 'nvml-standin pgpu $gpu'"
p "$gpu" compat 7
expect "compatibility, alike" 0 "vm 0xf limit 0"
p "$gpu" compat 9
expect "compatibility, the vGPU's migration bit off" 0 "vm 0 limit 0x80000000"
printf 'compat sleep,cold\nlimit guest-driver\n' >"$st/pgpu-$gpu"
p "$gpu" compat 7
expect "compatibility, set" 0 "vm 0x5 limit 0x2"
p "$gpu" state 7
expect "runtime state by default" 0 16777216
p "$gpu" state 9
expect "runtime state, set" 0 4096
p "$gpu" state-badversion 9
expect "runtime state, wrong version" 1 "nvmlVgpuInstanceGetRuntimeStateSize: Argument version mismatch (25)"
LIB=$oldlib p "$gpu" state 9
expect "runtime state, old driver" 2 "missing symbol nvmlVgpuInstanceGetRuntimeStateSize"

if ((fail)); then exit 1; fi
echo "nvml-standin selftest: all checks passed"
