#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# apply where it could destroy or could not converge (issue 26), end to end on
# booted copies of the fixture hosts with the stand-ins for nvidia-smi and
# sriov-manage (tests/apply/README.md): a MIG-backed type spelt in lower case
# or as a type ID, a dry run on a half-built host, Ctrl-C while sriov-manage
# runs, and the counts that decide what fits.   converge.sh VGPUCTL SRCDIR
# shellcheck disable=SC2119,SC2120 # boot's fixture is optional
set -euo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
fakes=$src/tests/apply
smi=$fakes/fake-nvidia-smi
tools=(--nvidia-smi "$smi" --sriov-manage "$fakes/fake-sriov-manage")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/host
export FAKE_NV_ROOT=$root
st=$root/var/lib/fake-nvidia
pf=0000:ca:00.0
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
boot() { # [FIXTURE]: a just-booted copy (default vfio-mig-h100)
	rm -rf "$root"
	cp -a "$src/tests/data/hosts/${1:-vfio-mig-h100}" "$root"
	"$fakes/fake-nv-boot" "$root"
}
run() { # vgpuctl ARGS... with the stand-ins: OUT, ERR, RC
	RC=0
	"$bin" --sysroot "$root" "$@" "${tools[@]}" >"$tmp/out" 2>"$tmp/err" || RC=$?
	OUT=$(<"$tmp/out") ERR=$(<"$tmp/err")
}
changing() { grep -E -- ' -mig | -cgi | -dci| -dgi|^sriov-manage -[ed] ' "$st/calls" || true; }
gis() { "$smi" mig -i $pf -lgi | awk '/MIG/ { print $4 }' | sort | tr '\n' ' '; }
# a config of one vgpu-configs label "x" for every GPU: TYPE COUNT [TYPE COUNT...]
config() {
	local kv=()
	while (($# >= 2)); do
		kv+=("\"$1\": $2")
		shift 2
	done
	local IFS=,
	printf 'version: v1\nvgpu-configs:\n  x:\n    - devices: all\n      vgpu-devices: {%s}\n' \
		"${kv[*]}" >"$tmp/c.yaml"
}
cfg=(-f "$tmp/c.yaml" --config x)

# ---- a MIG-backed type in lower case or as a type ID is the same type: on a
# host with MIG on, VFs on and two 1g.10gb GPU instances nothing is torn down
for name in h100-1-10c 1056 nvidia-1056; do
	boot
	"$smi" -i $pf -mig 1 >/dev/null
	"$fakes/fake-sriov-manage" -e $pf >/dev/null
	"$smi" mig -i $pf -cgi 19,19 -C >/dev/null
	: >"$st/calls"
	config "$name" 2
	run apply "${cfg[@]}"
	[[ $RC == 0 ]] || bad "'$name' x2 on a MIG host: exit $RC: $ERR"
	[[ -z $(changing) ]] || bad "'$name' x2 on a MIG host changed MIG, GIs or VFs: $(changing)"
	[[ $(gis) == "1g.10gb 1g.10gb " ]] || bad "'$name': GIs now $(gis)"
	run assert "${cfg[@]}"
	[[ $RC == 0 ]] || bad "assert '$name' after apply: exit $RC: $OUT"
done
# on a booted host the lower-case name builds the same host as NVIDIA's spelling
boot
config h100-1-10c 2
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "'h100-1-10c' x2 on a booted host: exit $RC: $ERR"
[[ $(gis) == "1g.10gb 1g.10gb " ]] || bad "'h100-1-10c' on a booted host: GIs $(gis)"
# a type ID that no list names yet (VFs off, no NVML, no catalogue) is refused
# before anything runs, and the message says why, not "no such type"
boot
config 1056 2
run apply "${cfg[@]}"
[[ $RC == 1 && $ERR == *"no list names vGPU type ID '1056' now"* ]] ||
	bad "type ID on a booted host: exit $RC: $ERR"
[[ -z $(changing) ]] || bad "type ID on a booted host changed: $(changing)"

# ---- a dry run plans on the host as the earlier steps would leave it: after an
# apply killed once the VFs were on (GPU instances still to make), the dry run
# says what the real run then does, and exits 0 as it does
boot
config H100-3-40C 1 H100-2-20C 1
echo 2 >"$st/kill-after" # after sriov-manage -e
run apply "${cfg[@]}"
[[ $RC == 137 ]] || bad "apply killed after sriov-manage: exit $RC"
rm "$st/kill-after"
: >"$st/calls"
run apply --dry-run "${cfg[@]}"
[[ $RC == 0 ]] || bad "dry run on a half-built host: exit $RC: $ERR"
[[ $OUT == *"run: $smi mig -i $pf -cgi 9,14 -C"* && $OUT == *"create 1 vGPUs of H100-3-40C on GPU $pf's VFs once its GPU instances are made"* ]] ||
	bad "dry run on a half-built host: plan $OUT"
[[ -z $(changing) ]] || bad "the dry run changed: $(changing)"
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "apply on a half-built host: exit $RC: $ERR"
run apply --dry-run "${cfg[@]}"
[[ $RC == 0 && -z $OUT ]] || bad "dry run on the built host: exit $RC: $OUT"

# ---- without NVML the lists of a MIG GPU name only what fits its GPU instances:
# a host half built by hand (MIG on, VFs on, one 1g.10gb GI) lists only the 1g
# types, which says nothing against H100-3-40C
boot
"$smi" -i $pf -mig 1 >/dev/null
"$fakes/fake-sriov-manage" -e $pf >/dev/null
"$smi" mig -i $pf -cgi 19 -C >/dev/null
config H100-3-40C 1 H100-1-10C 1
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "apply on a half-built MIG host without NVML: exit $RC: $ERR"
[[ $(gis) == "1g.10gb 3g.40gb " ]] || bad "half-built MIG host: GIs $(gis)"
# a GPU filled by apply lists nothing once its vGPU runs on the one GI (the plain
# tree needs a hand: the driver empties the lists); the types the lists showed
# between steps 3 and 5 were kept, so assert and a second apply still know them
boot
config H100-7-80C 1
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "H100-7-80C: exit $RC: $ERR"
for f in "$root/sys/bus/pci/devices/0000:ca:"*/nvidia/creatable_vgpu_types; do
	head -1 "$f" >"$f.new" && mv "$f.new" "$f"
done
run assert "${cfg[@]}"
[[ $RC == 0 ]] || bad "assert on a full MIG GPU without NVML: exit $RC: $OUT"
: >"$st/calls"
run apply "${cfg[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "second apply on a full MIG GPU: exit $RC: $ERR $(changing)"

# ---- without NVML, the GPU instances apply made with nvidia-smi are read back
# with nvidia-smi (mig -lgi): procfs names them without a profile, and the
# driver's lists (2g and 1g types) leave more than one layout, so 3 x H100-2-20C
# beside 1 x H100-1-10C (as 3 x H100L-2-24C + 1 x H100L-1-12C on an H100 NVL)
# counted the three free 2g GIs as one: "room for 1"
vgpus_of() { grep -lx "$1" "$root/sys/bus/pci/devices/0000:ca:"*/nvidia/current_vgpu_type | wc -l; }
boot
config H100-2-20C 3 H100-1-10C 1
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "3 x H100-2-20C + 1 x H100-1-10C without NVML: exit $RC: $ERR"
[[ $(gis) == "1g.10gb 2g.20gb 2g.20gb 2g.20gb " ]] || bad "3 x 2g + 1 x 1g: GIs $(gis)"
[[ $(vgpus_of 1058) == 3 && $(vgpus_of 1056) == 1 ]] ||
	bad "3 x 2g + 1 x 1g: $(vgpus_of 1058) vGPUs of H100-2-20C, $(vgpus_of 1056) of H100-1-10C"
run assert "${cfg[@]}"
[[ $RC == 0 ]] || bad "assert after 3 x 2g + 1 x 1g: exit $RC: $OUT"
: >"$st/calls"
run apply "${cfg[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "second apply of 3 x 2g + 1 x 1g: exit $RC: $ERR $(changing)"
# the same GIs made by hand before apply (MIG on, VFs on): read, not made again
boot
"$smi" -i $pf -mig 1 >/dev/null
"$fakes/fake-sriov-manage" -e $pf >/dev/null
"$smi" mig -i $pf -cgi 14,14,14,19 -C >/dev/null
: >"$st/calls"
run apply "${cfg[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "3 x 2g + 1 x 1g made by hand: exit $RC: $ERR $(changing)"
[[ $(vgpus_of 1058) == 3 && $(vgpus_of 1056) == 1 ]] ||
	bad "3 x 2g + 1 x 1g made by hand: $(vgpus_of 1058) + $(vgpus_of 1056) vGPUs"

# ---- the host lock is for decisions: while sriov-manage rebinds one GPU (3 s
# here) apply holds that GPU's lock only, so a domain starts on any other GPU
boot
config H100-3-40C 1
echo "sriov-enable 3" >"$st/delays"
"$bin" --sysroot "$root" apply "${cfg[@]}" "${tools[@]}" >/dev/null 2>"$tmp/err" &
apid=$!
for _ in $(seq 100); do
	grep -q "^sriov-manage -e" "$st/calls" && break
	sleep 0.1
done
sleep 0.5
flock -n "$root/run/vgpuctl/lock" true || bad "apply holds the host lock while sriov-manage runs"
flock -n "$root/run/vgpuctl/gpu/$pf/lock" true && bad "apply does not hold GPU $pf's lock while sriov-manage runs"
wait $apid || bad "apply with a slow sriov-manage: $(cat "$tmp/err")"
rm "$st/delays"

# ---- Ctrl-C while sriov-manage rebinds the GPU (6 s here): the terminal's
# SIGINT reaches vgpuctl's process group, not sriov-manage's own; vgpuctl stops
# it, waits for it, dies of SIGINT, and the next run completes the host
boot
config H100-3-40C 1
echo "sriov-enable 6" >"$st/delays"
python3 - "$bin" "$root" "$tmp" "${cfg[@]}" "${tools[@]}" >"$tmp/int" <<'P' || bad "Ctrl-C: $(cat "$tmp/int")"
import fcntl, os, signal, subprocess, sys, time
bin, root, tmp, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
calls = root + "/var/lib/fake-nvidia/calls"
# a session of its own: its process group is the terminal's foreground group
p = subprocess.Popen([bin, "--sysroot", root, "apply"] + args, start_new_session=True,
                     stderr=open(tmp + "/err", "w"))
numvfs = root + "/sys/bus/pci/devices/0000:ca:00.0/sriov_numvfs"
# the stand-in changes the state first, then sleeps (fake-nv-lib.sh): interrupt
# it in its sleep, not halfway through its change (a loaded machine is slow)
for _ in range(600):
    if "sriov-manage -e" in open(calls).read() and open(numvfs).read().strip() != "0":
        with open(root + "/var/lib/fake-nvidia/lock", "a") as lk:
            try:
                fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)  # it let go: it sleeps
                fcntl.flock(lk, fcntl.LOCK_UN)
                break
            except BlockingIOError:
                pass
    time.sleep(0.05)
time.sleep(0.2)
os.killpg(p.pid, signal.SIGINT)
t = time.monotonic()
rc = p.wait()
print("rc=%d waited=%.1f" % (rc, time.monotonic() - t))
sys.exit(0 if rc == -signal.SIGINT else 1)
P
# what is left running on this host tree: any process the stand-ins started
left=
for d in /proc/[0-9]*; do
	[[ ${d#/proc/} != "$$" && ${d#/proc/} != "$BASHPID" ]] || continue
	grep -qzx "FAKE_NV_ROOT=$root" "$d/environ" 2>/dev/null && left+=" $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)"
done
[[ -z $left ]] || bad "Ctrl-C left running:$left"
grep -q "interrupted (signal 2): '$fakes/fake-sriov-manage -e $pf' was stopped" "$tmp/err" ||
	bad "Ctrl-C: $(cat "$tmp/err")"
rm "$st/delays"
run apply "${cfg[@]}"
[[ $RC == 0 ]] || bad "apply after Ctrl-C: exit $RC: $ERR"

[[ $fail == 0 ]] && echo "ok: apply converges"
exit $fail
