#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fake nvidia-smi / sriov-manage against a booted copy of vfio-mig-h100,
# read back through vgpuctl: fakes-selftest.sh VGPUCTL SRCDIR
set -euo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
fakes=$src/tests/apply
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/host
cp -a "$src/tests/data/hosts/vfio-mig-h100" "$root"
export FAKE_NV_ROOT=$root
pf=0000:ca:00.0
pfdir=$root/sys/bus/pci/devices/$pf
caps=$root/proc/driver/nvidia/capabilities/gpu0/mig
calls=$root/var/lib/fake-nvidia/calls
fail=0
: >"$tmp/want-calls"

bad() {
	echo "FAIL: $*"
	fail=1
}

# run NAME ARGS...: one fake by path with an argv (no shell); OUT, ERR, RC
run() {
	local name=$1
	shift
	local IFS=' '
	echo "$name $*" >>"$tmp/want-calls"
	RC=0
	"$fakes/fake-$name" "$@" >"$tmp/out" 2>"$tmp/err" || RC=$?
	OUT=$(<"$tmp/out") ERR=$(<"$tmp/err")
}

expect() { # WHAT WANT_RC WANT_STDOUT
	if [[ $RC != "$2" || $OUT != "$3" ]]; then
		bad "$1: exit $RC (want $2), stdout:"
		printf '%s\n' "$OUT" | sed 's/^/    /'
		echo "  want:"
		printf '%s\n' "$3" | sed 's/^/    /'
		[[ -z $ERR ]] || printf '  stderr: %s\n' "$ERR"
	fi
}

# vgpuctl CMD...: stdout to VOUT, hints ("vgpuctl: hint: ...") to VHINT; any
# other stderr (a warning) is a failure
vgpuctl() {
	VOUT=$("$bin" --sysroot "$root" "$@" 2>"$tmp/verr") || bad "vgpuctl $* exited $?"
	VHINT=$(grep '^vgpuctl: hint: ' "$tmp/verr" || true)
	if grep -qv '^vgpuctl: hint: ' "$tmp/verr"; then bad "vgpuctl $* warned: $(<"$tmp/verr")"; fi
}

vf_count() { # NVF = the VFs of the PF that vgpuctl vfs lists (its output in VOUT)
	vgpuctl vfs
	NVF=$(grep -c " $pf " <<<"$VOUT" || true)
}

numvfs() { cat "$pfdir/sriov_numvfs"; }

query() { run nvidia-smi -i "$pf" --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader; }

tree_state() { # the tree as files and contents, for idempotence
	(cd "$root" && find . -path ./var/lib/fake-nvidia/lock -prune -o -print | sort &&
		find . -type f ! -name lock -exec md5sum {} + | sort)
}

# --- boot -----------------------------------------------------------------
"$fakes/fake-nv-boot" "$root"
tree_state >"$tmp/boot1"
"$fakes/fake-nv-boot" "$root"
tree_state >"$tmp/boot2"
cmp -s "$tmp/boot1" "$tmp/boot2" || bad "fake-nv-boot is not idempotent: $(diff "$tmp/boot1" "$tmp/boot2" | head -5)"
[[ $(numvfs) == 0 ]] || bad "after boot sriov_numvfs is $(numvfs)"
vf_count
[[ $NVF == 0 ]] || bad "after boot vgpuctl lists VFs: $VOUT"
[[ $VHINT == *"SR-IOV VFs are off on GPU $pf"* ]] || bad "after boot vfs gives no hint that VFs are off: '$VHINT'"
vgpuctl gpus --json
grep -q '"sriov_num_vfs": 0,' <<<"$VOUT" || bad "gpus --json after boot: $VOUT"
[[ ! -e $caps ]] || bad "after boot $caps exists"
[[ ! -e $root/var/lib/vgpuctl && ! -s $calls ]] || bad "after boot: records or calls left"
vgpuctl gpus

# --- refusals -------------------------------------------------------------
rc=0
env -u FAKE_NV_ROOT "$fakes/fake-nvidia-smi" -i "$pf" -mig 1 >/dev/null 2>&1 || rc=$?
[[ $rc != 0 ]] || bad "fake-nvidia-smi ran without FAKE_NV_ROOT"
run nvidia-smi -i 0000:cb:00.0 -mig 1
expect "unknown bus" 6 "No devices were found"

# --- VFs ------------------------------------------------------------------
run sriov-manage -e "$pf"
expect "sriov-manage -e" 0 "Enabling VFs on $pf"
[[ $(numvfs) == 8 ]] || bad "after -e sriov_numvfs is $(numvfs)"
vf_count
[[ $NVF == 8 ]] || bad "after -e vgpuctl lists: $VOUT"
grep -q "^0000:ca:01.3 $pf     7 .* free" <<<"$VOUT" || bad "VF 7 missing or not free: $VOUT"
vgpuctl gpus
vgpuctl types # MIG mode off: the fake offers no types (time-sliced ones are not modelled)
[[ $(wc -l <<<"$VOUT") -le 1 ]] || bad "types with MIG off: $VOUT"
run sriov-manage -e 00000000:CA:00.0
expect "second -e" 0 "GPU at $pf already has VFs enabled."

# --- MIG mode and GIs -------------------------------------------------------
query
expect "query (boot)" 0 "00000000:CA:00.0, Disabled, Disabled"
run nvidia-smi mig -i "$pf" -lgi
expect "-lgi with MIG off" 0 "No MIG-enabled devices found."
run nvidia-smi mig -i "$pf" -cgi 9
expect "-cgi with MIG off" 3 "Unable to create a GPU instance on GPU  0 using profile 9: Not Supported"
run nvidia-smi -i "$pf" -mig 1
expect "-mig 1" 0 "Enabled MIG Mode for GPU 00000000:CA:00.0
All done."
query
expect "query (-mig 1)" 0 "00000000:CA:00.0, Enabled, Enabled"
run nvidia-smi mig -i "$pf" -lgi
expect "-lgi, no GIs" 6 "No GPU instances found: Not Found"
run nvidia-smi mig -i "$pf" -cgi 9,14,19 -C
expect "-cgi 9,14,19 -C" 0 "Successfully created GPU instance ID  1 on GPU  0 using profile MIG 3g.40gb (ID  9)
Successfully created compute instance ID  0 on GPU  0 GPU instance ID  1 using profile MIG 3g.40gb (ID  2)
Successfully created GPU instance ID  2 on GPU  0 using profile MIG 2g.20gb (ID 14)
Successfully created compute instance ID  0 on GPU  0 GPU instance ID  2 using profile MIG 2g.20gb (ID  1)
Successfully created GPU instance ID  3 on GPU  0 using profile MIG 1g.10gb (ID 19)
Successfully created compute instance ID  0 on GPU  0 GPU instance ID  3 using profile MIG 1g.10gb (ID  0)"
lgi3="+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 1g.10gb         19        3          6:1     |
+-------------------------------------------------------+
|   0  MIG 2g.20gb         14        2          4:2     |
+-------------------------------------------------------+
|   0  MIG 3g.40gb          9        1          0:4     |
+-------------------------------------------------------+"
run nvidia-smi mig -i "$pf" -lgi
expect "-lgi, 3 GIs" 0 "$lgi3"
for gi in 1 2 3; do
	[[ -f $caps/gi$gi/access && -f $caps/gi$gi/ci0/access ]] || bad "no capability files for GI $gi"
done
[[ $(cat "$caps/gi2/access") == $'DeviceFileMinor: 21\nDeviceFileMode: 292\nDeviceFileModify: 1' ]] ||
	bad "gi2/access: $(cat "$caps/gi2/access")"
vgpuctl gpus --json
grep -q '"mig_instances": 3' <<<"$VOUT" || bad "vgpuctl does not count 3 GIs: $VOUT"
# every VF lists the three types, but one GI of each profile takes one vGPU each
vgpuctl types --per-vf
for t in 1056 1058 1059; do
	[[ $(grep -Ec "^$pf 0000:ca:0[01]\.[0-7] +$t .* 1\$" <<<"$VOUT") == 8 ]] ||
		bad "type $t not listed on 8 VFs: $VOUT"
done
vgpuctl types
for t in 1056 1058 1059; do
	grep -Eq "^$pf $t .* 1\$" <<<"$VOUT" || bad "type $t: not 1 available: $VOUT"
done
run nvidia-smi mig -i "$pf" -cgi "MIG 3g.40gb"
expect "-cgi with no room" 2 "Unable to create a GPU instance on GPU  0 using profile MIG 3g.40gb: Insufficient Resources"

# --- a GI in use by a vGPU --------------------------------------------------
vf=$root/sys/bus/pci/devices/0000:ca:00.5/nvidia
echo 1058 >"$vf/current_vgpu_type" # what vgpuctl's write does on a real host
echo 2 >"$vf/gpu_instance_id"
run nvidia-smi mig -i "$pf" -dgi -gi 2
[[ $RC != 0 && $OUT == "Unable to destroy GPU instance ID  2 from GPU  0: In use by another client" ]] ||
	bad "-dgi of a GI in use: exit $RC, $OUT"
run nvidia-smi mig -i "$pf" -dci -gi 2
[[ $RC != 0 && $OUT == *"In use by another client" ]] || bad "-dci of a GI in use: exit $RC, $OUT"
[[ -d $caps/gi2/ci0 ]] || bad "GI 2 lost its CI"
run sriov-manage -d "$pf"
[[ $RC == 1 && -n $ERR ]] || bad "-d with a vGPU: exit $RC, $OUT $ERR"
[[ $(numvfs) == 8 ]] || bad "-d with a vGPU changed sriov_numvfs"
echo 0 >"$vf/current_vgpu_type"
rm "$vf/gpu_instance_id"
run nvidia-smi mig -i "$pf" -dci -gi 2
expect "-dci -gi 2" 0 "Successfully destroyed compute instance ID  0 from GPU  0 GPU instance ID  2"
run nvidia-smi mig -i "$pf" -dgi -gi 2
expect "-dgi -gi 2" 0 "Successfully destroyed GPU instance ID  2 from GPU  0"
[[ ! -e $caps/gi2 ]] || bad "$caps/gi2 left behind"

# --- MIG off refused while VFs exist ----------------------------------------
run nvidia-smi -i "$pf" -mig 0
[[ $RC == 0 && $OUT == "Warning: MIG mode is in pending disable state for GPU 00000000:CA:00.0:
In use by another client"* && $OUT == *"All done." ]] || bad "-mig 0 with VFs: exit $RC, $OUT"
query
expect "query (pending disable)" 0 "00000000:CA:00.0, Enabled, Disabled"

# --- wrong order: GIs before sriov-manage -e are lost -------------------------
run sriov-manage -d "$pf"
expect "sriov-manage -d" 0 "Disabling VFs on $pf"
vf_count
[[ $(numvfs) == 0 && $NVF == 0 ]] || bad "after -d: sriov_numvfs $(numvfs), vfs: $VOUT"
vgpuctl gpus
run nvidia-smi mig -i "$pf" -lgi
[[ $RC == 0 && $OUT == *"MIG 3g.40gb"* && $OUT == *"MIG 1g.10gb"* ]] || bad "-d lost GIs: $OUT"
run sriov-manage -e ALL
expect "sriov-manage -e ALL" 0 "Enabling VFs on $pf"
vf_count
[[ $NVF == 8 ]] || bad "after re-enable vgpuctl lists: $VOUT"
run nvidia-smi mig -i "$pf" -lgi
expect "-lgi after the PF rebind" 6 "No GPU instances found: Not Found"
[[ -z $(find "$caps" -name 'gi*') ]] || bad "GI capability directories survived -e"
query
expect "query (MIG mode survives -e)" 0 "00000000:CA:00.0, Enabled, Disabled"
vgpuctl gpus --json
grep -q '"mig_instances": 0' <<<"$VOUT" || bad "vgpuctl after rebind: $VOUT"

# --- unbindLock held twice --------------------------------------------------
run sriov-manage -d "$pf"
echo 2 >"$root/var/lib/fake-nvidia/unbindlock-$pf"
for i in 1 2; do
	run sriov-manage -e "$pf"
	[[ $RC == 1 && $ERR == "Cannot obtain unbindLock for $pf" && $(numvfs) == 0 ]] ||
		bad "unbindLock try $i: exit $RC, $ERR, sriov_numvfs $(numvfs)"
done
run sriov-manage -e "$pf"
expect "-e once the lock is free" 0 "Enabling VFs on $pf"
[[ $(numvfs) == 8 ]] || bad "after the third -e sriov_numvfs is $(numvfs)"

# --- MIG mode change held by a client ---------------------------------------
touch "$root/var/lib/fake-nvidia/busy-$pf"
run nvidia-smi -i "$pf" -mig 1
[[ $RC == 0 && $OUT == "Warning: MIG mode is in pending enable state"* ]] || bad "busy -mig 1: $OUT"
query
expect "query (busy)" 0 "00000000:CA:00.0, Enabled, Enabled"

# --- the calls log ------------------------------------------------------------
cmp -s "$calls" "$tmp/want-calls" || bad "calls log differs: $(diff "$tmp/want-calls" "$calls" | head -10)"

if ((fail)); then exit 1; fi
echo "fakes-selftest: all checks passed"
