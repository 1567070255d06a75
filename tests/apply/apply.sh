#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl apply / assert end to end on a booted copy of vfio-mig-h100, with
# the stand-ins for nvidia-smi and sriov-manage (tests/apply/README.md)
# changing the host as NVIDIA's tools do: the exact order of operations,
# --dry-run, idempotence, a host made in the wrong order, a run killed
# between any two steps, a GPU held by a client, MIG mode off again, and
# config errors.   apply.sh VGPUCTL SRCDIR
# shellcheck disable=SC2119 # emu_writes takes no arguments here
set -euo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
fakes=$src/tests/apply
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/host
export FAKE_NV_ROOT=$root
pf=0000:ca:00.0
st=$root/var/lib/fake-nvidia
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
smi=$fakes/fake-nvidia-smi
tools=(--nvidia-smi "$smi" --sriov-manage "$fakes/fake-sriov-manage")
boot() { # [FIXTURE]: a just-booted copy (default vfio-mig-h100)
	rm -rf "$root"
	cp -a "$src/tests/data/hosts/${1:-vfio-mig-h100}" "$root"
	"$fakes/fake-nv-boot" "$root"
}
v() { "$bin" --sysroot "$root" "$@"; }
# run CMD...: vgpuctl with the tools; OUT, ERR, RC
run() {
	RC=0
	v "$@" "${tools[@]}" >"$tmp/out" 2>"$tmp/err" || RC=$?
	OUT=$(<"$tmp/out") ERR=$(<"$tmp/err")
}
same() { # WHAT GOT WANT
	[[ $2 == "$3" ]] && return 0
	bad "$1:"
	diff -u <(printf '%s\n' "$3") <(printf '%s\n' "$2") | tail -n +3 | sed 's/^/    /'  || true
}
changing() { grep -E -- ' -mig | -cgi | -dci| -dgi|^sriov-manage -[ed] ' "$st/calls" || true; }
# the host as apply leaves it: MIG mode, GIs, each VF's vGPU type
state() {
	"$smi" -i $pf --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader
	"$smi" mig -i $pf -lgi | grep MIG || true
	cat "$root/sys/bus/pci/devices/$pf/sriov_numvfs"
	for f in "$root"/sys/bus/pci/devices/*/nvidia/current_vgpu_type; do
		f=${f%/nvidia/current_vgpu_type}
		echo "${f##*/} $(<"$f/nvidia/current_vgpu_type")"
	done
}
Q="nvidia-smi -i $pf --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader"

cat >"$tmp/host.yaml" <<'Y'
version: v1
mig-configs:
  h100-mixed:
    - devices: ["0000:ca:00.0"]
      mig-enabled: true
      mig-devices:
        "3g.40gb": 1
        "2g.20gb": 1
        "1g.10gb": 1
  all-disabled:
    - devices: all
      mig-enabled: false
      mig-devices: {}
vgpu-configs:
  h100-mixed:
    - devices: ["0000:ca:00.0"]
      vgpu-devices:
        "H100-3-40C": 1
        "H100-2-20C": 1
Y
cfg=(-f "$tmp/host.yaml" --config h100-mixed)

# ---- a booted host: assert lists every difference
boot
run assert "${cfg[@]}"
same "assert on a booted host (exit $RC)" "$RC:$OUT" "3:GPU $pf: MIG mode is disabled, the config wants it enabled
GPU $pf: 0 of 8 VFs enabled
GPU $pf: GPU instances none, the config wants 1g.10gb, 2g.20gb, 3g.40gb
GPU $pf: 0 of 1 vGPUs of H100-3-40C (no parent offers the type now)
GPU $pf: 0 of 1 vGPUs of H100-2-20C (no parent offers the type now)"
assert_text=$OUT
[[ -z $(changing) ]] || bad "assert changed something: $(changing)"

# ---- --dry-run: the ordered plan, argv by argv, and nothing changes
boot
cp -a "$root" "$tmp/before"
run apply --dry-run "${cfg[@]}"
same "apply --dry-run (exit $RC)" "$RC:$OUT" "0:run: $smi -i $pf -mig 1
run: $fakes/fake-sriov-manage -e $pf
run: $smi mig -i $pf -cgi 9,14,19 -C
create 1 vGPUs of H100-3-40C on GPU $pf's VFs once enabled (each: a write of its type id to current_vgpu_type or of a UUID to the type's mdev create, as the VFs offer)
create 1 vGPUs of H100-2-20C on GPU $pf's VFs once enabled (each: a write of its type id to current_vgpu_type or of a UUID to the type's mdev create, as the VFs offer)"
[[ -z $(changing) ]] || bad "--dry-run ran: $(changing)"
# no progress lines that read as done ("enabling 8 VFs", "creating 1 of ..."): the plan says it
grep -Eq "enabling|creating" <<<"$ERR" && bad "--dry-run printed progress as if done: $ERR"
diff -r --no-dereference -x calls -x lock -x run "$tmp/before" "$root" >/dev/null ||
	bad "--dry-run changed the host: $(diff -r --no-dereference -x calls -x lock -x run "$tmp/before" "$root" | head -5)"

# --json: the same plan, one {"kind", "text"} a line, for Ansible's check mode
text_plan=$OUT
run apply --dry-run --json "${cfg[@]}"
same "apply --dry-run --json: the text plan's lines (exit $RC)" "$RC:$(printf '%s' "$OUT" |
	python3 -c 'import json,sys; [print(s["text"]) for s in json.load(sys.stdin)["steps"]]')" "0:$text_plan"
same "apply --dry-run --json: kinds" "$(printf '%s' "$OUT" |
	python3 -c 'import json,sys; print(" ".join(s["kind"] for s in json.load(sys.stdin)["steps"]))')" \
	"run run run create create"
# and what each step does, to which GPU and object, how many: the plan as data
same "apply --dry-run --json: steps" "$(printf '%s' "$OUT" | python3 -c 'import json,sys
for s in json.load(sys.stdin)["steps"]: print(s["step"], s["gpu"], s["object"], s["profile"], s["count"])')" \
	"mig-on $pf gpu None 1
vfs-on $pf gpu None 0
gi-create $pf gpu-instance 3g.40gb,2g.20gb,1g.10gb 3
vgpu-create $pf vgpu H100-3-40C 1
vgpu-create $pf vgpu H100-2-20C 1"
run assert --json "${cfg[@]}"
same "assert --json: one difference a line (exit $RC)" "$RC:$(printf '%s' "$OUT" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["differences"]))')" "3:5"
# each difference as data: what differs, the step that fixes it (as --dry-run --json names
# it), its GPU, object, profile, count, and what the config wants and the host has
same "assert --json: differences" "$(printf '%s' "$OUT" | python3 -c 'import json,sys
for d in json.load(sys.stdin)["differences"]:
	print(d["kind"], d["step"], d["gpu"], d["object"], d["profile"], d["count"], d["want"], d["have"], sep="|")')" \
	"mig-mode|mig-on|$pf|gpu|None|1|enabled|disabled
vfs|vfs-on|$pf|gpu|None|0|8|0
gpu-instances|gi-create|$pf|gpu-instance|1g.10gb,2g.20gb,3g.40gb|3|1g.10gb, 2g.20gb, 3g.40gb|none
vgpus|vgpu-create|$pf|vgpu|H100-3-40C|1|1|0
vgpus|vgpu-create|$pf|vgpu|H100-2-20C|1|1|0"
same "assert --json: the text output's lines" "$(printf '%s' "$OUT" |
	python3 -c 'import json,sys; [print(d["text"]) for d in json.load(sys.stdin)["differences"]]')" "$assert_text"
# the result is kept for `vgpuctl metrics` (a dry run keeps none)
same "assert's kept result" "$(grep -v '^time=' "$root/var/lib/vgpuctl/runs/assert@h100-mixed")" \
	"exit=3
differences=5
file=$tmp/host.yaml"
[[ ! -e $root/var/lib/vgpuctl/runs/apply@h100-mixed ]] || bad "a dry run kept a result"
run apply --json "${cfg[@]}"
same "apply --json without --dry-run is refused (exit $RC)" "$RC:$ERR" \
	"2:vgpuctl: --json: the plan of --dry-run, or assert's differences
Try 'vgpuctl apply --help' for more information."

# ---- apply: the order is MIG mode, VFs, GPU instances, vGPUs; each change read back
boot
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "apply: exit $RC: $ERR"
same "apply's calls" "$(cat "$st/calls")" "$Q
nvidia-smi -i $pf -mig 1
$Q
sriov-manage -e $pf
nvidia-smi mig -i $pf -lgi
nvidia-smi mig -i $pf -cgi 9,14,19 -C
nvidia-smi mig -i $pf -lgi"
state >"$tmp/want-state"
if ! grep -q "^0000:ca:00.4 1059$" "$tmp/want-state" || ! grep -q "^0000:ca:00.5 1058$" "$tmp/want-state"; then
	bad "the vGPUs are not on the first free VFs: $(cat "$tmp/want-state")"
fi
grep -q "VFs: GPU $pf: enabling 8 VFs" "$tmp/err" || bad "no progress on stderr: $ERR"
# not a terminal (the boot journal): the plain lines, no step counter
grep -q "step [0-9]/" "$tmp/err" && bad "step counter without a terminal: $ERR"
[[ -z $OUT ]] || bad "apply wrote to stdout: $OUT"
run assert "${cfg[@]}"
same "assert after apply (exit $RC)" "$RC:$OUT" "0:"
grep -qx "exit=0" "$root/var/lib/vgpuctl/runs/apply@h100-mixed" || bad "apply's result: $(cat "$root/var/lib/vgpuctl/runs/apply@h100-mixed")"
# the vGPUs apply made are the config's, not orphans: kept with its result, listed as such
same "apply's vGPUs in its result" "$(grep '^vgpu=' "$root/var/lib/vgpuctl/runs/apply@h100-mixed")" \
	"vgpu=0000:ca:00.4 1059
vgpu=0000:ca:00.5 1058"
same "vgpus after apply" "$(v vgpus --json | python3 -c 'import json,sys
for r in json.load(sys.stdin)["vgpus"]: print(r["vf"], r["state"], r["config"], r["record"])')" \
	"0000:ca:00.4 config h100-mixed var/lib/vgpuctl/runs/apply@h100-mixed
0000:ca:00.5 config h100-mixed var/lib/vgpuctl/runs/apply@h100-mixed"
run apply --dry-run --json "${cfg[@]}"
same "apply --dry-run --json on a matching host (exit $RC)" "$RC:$OUT" '0:{
   "steps": []
}'

# ---- mig show: the GIs apply made, by placement, and the vGPU on each (the driver
# writes a MIG-backed vGPU's nvidia/gpu_instance_id; the plain tree needs a hand)
echo 1 >"$root/sys/bus/pci/devices/0000:ca:00.4/nvidia/gpu_instance_id"
RC=0
v mig show --nvidia-smi "$smi" >"$tmp/out" 2>"$tmp/err" || RC=$?
same "mig show (exit $RC)" "$RC:$(cat "$tmp/out" "$tmp/err")" "0:GPU          MIG     GI PROFILE ID START SIZE VGPU         VGPU_PROFILE
$pf enabled  1 3g.40gb  9     0    4 0000:ca:00.4 H100-3-40C
$pf enabled  2 2g.20gb 14     4    2
$pf enabled  3 1g.10gb 19     6    1"
RC=0
v --json mig show --gpu $pf --nvidia-smi "$smi" >"$tmp/out" 2>&1 || RC=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["gpu_instances"]; assert [(g["gi"], g["start"], g["vgpu"]) for g in d] == [(1, 0, "0000:ca:00.4"), (2, 4, None), (3, 6, None)], d' "$tmp/out" ||
	bad "mig show --json: $(cat "$tmp/out")"

# ---- a second run changes nothing
: >"$st/calls"
run apply "${cfg[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "second apply: exit $RC, changed: $(changing)"
same "state after a second apply" "$(state)" "$(cat "$tmp/want-state")"

# ---- the wrong order: GPU instances made before the VFs (sriov-manage will wipe them)
boot
"$smi" -i $pf -mig 1 >/dev/null
"$smi" mig -i $pf -cgi 19,19 -C >/dev/null
: >"$st/calls"
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "apply on a host made in the wrong order: exit $RC: $ERR"
same "calls on a host made in the wrong order" "$(changing)" "sriov-manage -e $pf
nvidia-smi mig -i $pf -cgi 9,14,19 -C"
same "state after the wrong order" "$(state)" "$(cat "$tmp/want-state")"

# ---- killed after each changing step: the next run completes the job
for k in 1 2 3; do # after -mig 1, sriov-manage -e, -cgi
	boot
	echo $k >"$st/kill-after"
	run apply "${cfg[@]}"
	[[ $RC == 137 ]] || bad "kill after step $k: apply exited $RC, not 137 (SIGKILL)"
	rm "$st/kill-after"
	run apply "${cfg[@]}"
	[[ $RC == 0 ]] || bad "apply after a kill after step $k: exit $RC: $ERR"
	same "state after a kill after step $k" "$(state)" "$(cat "$tmp/want-state")"
done

# ---- a client holds the GPU: sriov-manage's unbindLock is retried, then named
boot
echo 2 >"$st/unbindlock-$pf"
run apply "${cfg[@]}"
[[ $RC == 0 && $(grep -c "^sriov-manage -e" "$st/calls") == 3 ]] ||
	bad "unbindLock twice: exit $RC, $(grep -c "^sriov-manage -e" "$st/calls") tries: $ERR"
boot
echo 99 >"$st/unbindlock-$pf"
run apply "${cfg[@]}"
same "unbindLock for ever (exit $RC)" "$RC:$ERR" "1:vgpuctl: MIG mode: GPU $pf: enabling
vgpuctl: running: $smi -i $pf -mig 1
vgpuctl: VFs: GPU $pf: enabling 8 VFs
vgpuctl: running: $fakes/fake-sriov-manage -e $pf
vgpuctl: GPU $pf is held by a client (unbindLock); try 2 of 5
vgpuctl: GPU $pf is held by a client (unbindLock); try 3 of 5
vgpuctl: GPU $pf is held by a client (unbindLock); try 4 of 5
vgpuctl: GPU $pf is held by a client (unbindLock); try 5 of 5
vgpuctl: apply: step 2 (VFs): cannot enable the VFs of GPU $pf: a client holds the GPU (sriov-manage could not take its unbindLock 5 times; stop DCGM, nvsm or other NVML users and run again)"

# ---- MIG mode off again: GPU instances and VFs go first (the driver refuses otherwise)
boot
run apply "${cfg[@]}"
echo 0 >"$root/sys/bus/pci/devices/0000:ca:00.4/nvidia/current_vgpu_type"
echo 0 >"$root/sys/bus/pci/devices/0000:ca:00.5/nvidia/current_vgpu_type"
: >"$st/calls"
run apply -f "$tmp/host.yaml" --config all-disabled
[[ $RC == 0 ]] || bad "apply all-disabled: exit $RC: $ERR"
same "calls to turn MIG off" "$(changing)" "nvidia-smi mig -i $pf -dci
nvidia-smi mig -i $pf -dgi
sriov-manage -d $pf
nvidia-smi -i $pf -mig 0"
run assert -f "$tmp/host.yaml" --config all-disabled
same "assert all-disabled (exit $RC)" "$RC:$OUT" "0:"
# with a vGPU on the GPU, MIG mode is not touched
boot
run apply "${cfg[@]}"
run apply -f "$tmp/host.yaml" --config all-disabled
same "MIG off with vGPUs (exit $RC)" "$RC:$(tail -1 <<<"$ERR")" "1:vgpuctl: apply: step 1 (MIG mode): GPU $pf: cannot turn MIG mode off while it holds vGPUs or owner records reserve some (VF 0000:ca:00.4 (a vGPU); see 'vgpuctl vgpus'); release them first"

# ---- the config's domains start last, through -c URI (libvirt's test driver:
# vm-off is defined shut off, vm-on runs; every connection starts afresh)
cat >"$tmp/node.xml" <<'X'
<node>
  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>
    <name>vm-off</name><memory>1048576</memory><os><type>hvm</type></os>
    <test:runstate>5</test:runstate>
  </domain>
  <domain type='test'><name>vm-on</name><memory>1048576</memory><os><type>hvm</type></os></domain>
</node>
X
{ cat "$tmp/host.yaml"; printf 'start-domains:\n  h100-mixed: [vm-on, vm-off]\n'; } >"$tmp/vms.yaml"
uri=test://$tmp/node.xml
boot
run apply --dry-run -f "$tmp/vms.yaml" --config h100-mixed -c "$uri"
same "dry run with domains" "$(tail -1 <<<"$OUT")" "start domain 'vm-off' ($uri)"
run apply -f "$tmp/vms.yaml" --config h100-mixed -c "$uri"
same "apply with domains (exit $RC)" "$RC:$(grep domains: <<<"$ERR")" "0:vgpuctl: domains: started 'vm-off'"
run assert -f "$tmp/vms.yaml" --config h100-mixed -c "$uri"
same "assert with a domain shut off (exit $RC)" "$RC:$OUT" "3:domain 'vm-off' is not running"
sed 's/vm-off]/vm-gone]/' "$tmp/vms.yaml" >"$tmp/gone.yaml"
run apply -f "$tmp/gone.yaml" --config h100-mixed -c "$uri"
[[ $RC == 1 && $ERR == *"domain 'vm-gone'"* ]] || bad "a missing domain: exit $RC: $ERR"

# ---- NVIDIA's own example files, unchanged, on the dual-A30 host
boot a30-dual-mdev
run apply --dry-run -f "$src/tests/data/configs/vgpu-device-manager-example.yaml" --config A30-1-6C
same "vgpu-device-manager's A30-1-6C, dry run (exit $RC)" "$RC:$(grep -v '^create' <<<"$OUT")" "0:run: $smi -i 0000:3b:00.0 -mig 1
run: $fakes/fake-sriov-manage -e 0000:3b:00.0
run: $smi mig -i 0000:3b:00.0 -cgi 14,14,14,14 -C
run: $smi -i 0000:af:00.0 -mig 1
run: $fakes/fake-sriov-manage -e 0000:af:00.0
run: $smi mig -i 0000:af:00.0 -cgi 14,14,14,14 -C"
# one GPU already as asked, the other just booted: the plan touches only the second
# (enabling VFs on one GPU says nothing of the other's GPU instances)
FAKE_NV_ROOT=$root "$fakes/fake-sriov-manage" -e 0000:3b:00.0 >/dev/null
"$smi" -i 0000:3b:00.0 -mig 1 >/dev/null
"$smi" mig -i 0000:3b:00.0 -cgi 14,14,14,14 -C >/dev/null
printf '%s\n' "version: v1" "mig-configs:" "  a30-4x1g:" "    - devices: all" \
	"      mig-enabled: true" '      mig-devices: {"1g.6gb": 4}' "vgpu-configs:" "  a30-4x1g:" \
	"    - devices: all" "      vgpu-devices: {}" >"$tmp/a30.yaml"
run apply --dry-run -f "$tmp/a30.yaml" --config a30-4x1g
same "GIs on two A30s, one done, dry run (exit $RC)" "$RC:$OUT" "0:run: $smi -i 0000:af:00.0 -mig 1
run: $fakes/fake-sriov-manage -e 0000:af:00.0
run: $smi mig -i 0000:af:00.0 -cgi 14,14,14,14 -C"
# ---- two GPUs for real: one process each (a boot waits for the slowest GPU, not
# the sum), their lines one block per GPU in order; one GPU failing undoes both
boot a30-dual-mdev
run apply -f "$tmp/a30.yaml" --config a30-4x1g
[[ $RC == 0 ]] || bad "two GPUs: exit $RC: $ERR"
gpu_order=$(grep -oE 'GPU 0000:(3b|af):00\.0' <<<"$ERR" | uniq | tr '\n' ' ')
same "two GPUs: one block each, in order" "$gpu_order" "GPU 0000:3b:00.0 GPU 0000:af:00.0 "
run assert -f "$tmp/a30.yaml" --config a30-4x1g
same "assert after two GPUs (exit $RC)" "$RC:$OUT" "0:"
boot a30-dual-mdev
echo 99 >"$st/unbindlock-0000:af:00.0"
run apply -f "$tmp/a30.yaml" --config a30-4x1g
[[ $RC == 1 && $ERR == *"apply: step 2 (VFs): cannot enable the VFs of GPU 0000:af:00.0"* ]] ||
	bad "one of two GPUs failing: exit $RC: $ERR"
[[ $(grep -c '^vgpuctl: apply:' <<<"$ERR") == 1 ]] || bad "more than one failure line: $ERR"
rm -f "$st/unbindlock-0000:af:00.0"

run apply --dry-run -f "$src/tests/data/configs/mig-parted-example.yaml" --config all-balanced
same "mig-parted's all-balanced (A100 profiles) on A30s (exit $RC)" "$RC:$ERR" "1:vgpuctl: apply: $src/tests/data/configs/mig-parted-example.yaml:53: GPU 0000:3b:00.0: '1g.5gb': not a MIG profile of A30 24GB (profiles: 1g.6gb (14), 1g.6gb+me (21), 2g.12gb (5), 2g.12gb+me (6), 4g.24gb (0))"

# ---- config errors: one line naming the file
boot
run apply -f "$tmp/host.yaml" --config nope
same "missing label (exit $RC)" "$RC:$ERR" "1:vgpuctl: apply: no config 'nope' in $tmp/host.yaml; labels: all-disabled, h100-mixed"
run assert -f "$tmp/host.yaml" --config nope
same "missing label, assert (exit $RC)" "$RC:$ERR" "1:vgpuctl: assert: no config 'nope' in $tmp/host.yaml; labels: all-disabled, h100-mixed"
run assert -f "$tmp/nofile.yaml" --config h100-mixed
[[ $RC == 1 ]] || bad "assert of a missing file: exit $RC"
# a mistyped label or file keeps no result: nothing would ever replace it, and
# `vgpuctl metrics` would show a failed run (and an alert fire) for good
runs=$(ls -A "$root/var/lib/vgpuctl/runs" 2>/dev/null || true)
same "results kept for labels the config does not have" "$runs" ""
sed 's/0000:ca:00.0/0000:99:00.0/' "$tmp/host.yaml" >"$tmp/other.yaml"
run apply -f "$tmp/other.yaml" --config h100-mixed
same "a GPU that is not there (exit $RC)" "$RC:$ERR" "1:vgpuctl: apply: $tmp/other.yaml:4: no NVIDIA GPU at 0000:99:00.0"
sed 's/devices: \["0000:ca:00.0"\]/devices: [1]/' "$tmp/host.yaml" >"$tmp/index.yaml"
run apply -f "$tmp/index.yaml" --config h100-mixed
same "an index past the GPUs (exit $RC)" "$RC:$ERR" "1:vgpuctl: apply: $tmp/index.yaml:4: no GPU with index 1 (the host has 1 NVIDIA GPUs, indexed by PCI address from 0)"
cat >"$tmp/twice.yaml" <<'Y'
version: v1
vgpu-configs:
  x:
    - devices: all
      vgpu-devices: {"H100-3-40C": 1}
    - devices: [0]
      vgpu-devices: {"H100-3-40C": 2}
Y
run apply -f "$tmp/twice.yaml" --config x
same "a GPU in two entries (exit $RC)" "$RC:$ERR" "1:vgpuctl: apply: $tmp/twice.yaml:6: GPU $pf is already selected by the vgpu-configs entry at line 4"
[[ -z $(changing) ]] || bad "a failed config check changed the host: $(changing)"
run assert --dry-run "${cfg[@]}"
[[ $RC == 2 ]] || bad "assert --dry-run: exit $RC"

# ---- mdev vGPUs on the kernel emulator (tests/emu): a T4 whose PF is the parent of
# several mdevs; no MIG, no VFs, so no external program runs.  One T4-4Q is there and
# three more fit: asking for four creates three; asking for six is refused before any
# write (its 16 GiB framebuffer holds four 4 GiB vGPUs in all)
# shellcheck source=tests/emu/lib.sh
. "$src/tests/emu/lib.sh"
if emu_available; then
	emu_start "$src/tests/data/hosts/t4-legacy"
	printf 'version: v1\nvgpu-configs:\n  t4:\n    - devices: all\n      vgpu-devices: {"T4-4Q": %s}\n' 4 \
		>"$tmp/t4.yaml"
	sed 's/"T4-4Q": 4/"T4-4Q": 6/' "$tmp/t4.yaml" >"$tmp/t4-6.yaml"
	t4() { "$bin" --sysroot "$EMU_ROOT" "$@" --nvidia-smi /nonexistent --sriov-manage /nonexistent; }
	mdevs() { find "$EMU_ROOT/sys/bus/mdev/devices" -mindepth 1 -maxdepth 1 | wc -l; }
	emu_clear_journal
	RC=0
	t4 apply -f "$tmp/t4-6.yaml" --config t4 >"$tmp/out" 2>"$tmp/err" || RC=$?
	[[ $RC == 1 && $(mdevs) == 1 ]] || bad "T4-4Q x6: exit $RC, $(mdevs) mdevs: $(cat "$tmp/err")"
	# six never fit a T4 (max 4): refused before anything runs
	grep -q "t4-6.yaml:5: GPU 0000:5e:00.0: 6 vGPUs of T4-4Q do not fit: the GPU takes at most 4" \
		"$tmp/err" || bad "T4-4Q x6: $(cat "$tmp/err")"
	[[ -z $(emu_writes) ]] || bad "T4-4Q x6: written before the refusal: $(emu_writes)"
	RC=0
	t4 apply -f "$tmp/t4.yaml" --config t4 >"$tmp/out" 2>"$tmp/err" || RC=$?
	[[ $RC == 0 && $(mdevs) == 4 ]] || bad "T4-4Q x4: exit $RC, $(mdevs) mdevs: $(cat "$tmp/err")"
	RC=0
	t4 assert -f "$tmp/t4.yaml" --config t4 >"$tmp/out" 2>&1 || RC=$?
	[[ $RC == 0 ]] || bad "assert T4-4Q x4 after apply: exit $RC: $(cat "$tmp/out")"
	emu_clear_journal
	t4 apply -f "$tmp/t4.yaml" --config t4 2>/dev/null || bad "second T4 apply failed"
	[[ -z $(emu_writes) ]] || bad "a second T4 apply wrote: $(emu_writes)"
	emu_stop || bad "the emulator failed"

	# a vendor-VFIO GPU whose VFs all hold a vGPU lists no type any more: apply
	# keeps the whole table (var/lib/vgpuctl/catalog) before filling it, so
	# assert and a second apply still know the config's type
	emu_start "$src/tests/data/hosts/vfio-ts-l40s"
	printf '%s\n' "version: v1" "vgpu-configs:" "  full:" '    - devices: ["0000:c1:00.0"]' \
		'      vgpu-devices: {"L40S-6Q": 8}' >"$tmp/l40s.yaml"
	l40s() { "$bin" --sysroot "$EMU_ROOT" "$@" --nvidia-smi /nonexistent --sriov-manage /nonexistent; }
	RC=0
	l40s apply -f "$tmp/l40s.yaml" --config full >"$tmp/out" 2>"$tmp/err" || RC=$?
	[[ $RC == 0 ]] || bad "L40S-6Q x8: exit $RC: $(cat "$tmp/err")"
	[[ $(grep -c . "$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.4/nvidia/creatable_vgpu_types") == 0 ]] ||
		bad "the emulator still lists types on a full GPU"
	RC=0
	l40s assert -f "$tmp/l40s.yaml" --config full >"$tmp/out" 2>&1 || RC=$?
	[[ $RC == 0 ]] || bad "assert on a full vendor-VFIO GPU: exit $RC: $(cat "$tmp/out")"
	emu_clear_journal
	RC=0
	l40s apply -f "$tmp/l40s.yaml" --config full >"$tmp/out" 2>&1 || RC=$?
	[[ $RC == 0 && -z $(emu_writes) ]] || bad "second apply on a full GPU: exit $RC: $(cat "$tmp/out") $(emu_writes)"
	emu_stop || bad "the emulator failed"
else
	echo "SKIP: mdev apply (no usable FUSE emulator)"
fi

# ---- on a terminal: "step N/M (NAME) done in S s" after each step that did something
if command -v script >/dev/null; then
	boot
	script -qec "$(printf '%q ' "$bin" --sysroot "$root" apply "${cfg[@]}" "${tools[@]}")" /dev/null |
		tr -d '\r' >"$tmp/tty" 2>&1
	same "steps on a terminal" "$(grep -o 'step [0-9]/5 ([A-Za-z -]*)' "$tmp/tty")" "step 1/5 (MIG mode)
step 2/5 (VFs)
step 3/5 (GPU instances)
step 5/5 (vGPUs)"
	grep -Eq "GPU $pf: step 2/5 \(VFs\) done in [0-9]+\.[0-9] s$" "$tmp/tty" || bad "no elapsed time: $(cat "$tmp/tty")"
fi

[[ $fail == 0 ]] && echo "ok: apply and assert"
exit $fail
