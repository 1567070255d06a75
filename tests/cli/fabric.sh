#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl fabric against the stand-in libnvfm.so.1 (tests/nvfm) and the NVML
# stand-in on the HGX H100 8-GPU fixture: module IDs mapped to PCI addresses
# out of PCI order, the domain of an active partition from the owner records,
# activation with the domain's VFs (else the first free ones, else --vf),
# each injected Fabric Manager error's one line and exit status, resync after
# fm-restarted makes fm-active what the records say, the calls in order, the
# JSON against docs/fabric.schema.json; a PCIe host says there is no Fabric
# Manager.  Listings compared byte for byte with tests/data/expected/fabric/.
# VGPU_TEST_REGENERATE=1 rewrites the goldens; review the diff.
#   fabric.sh VGPUCTL SRCDIR NVFM_STANDIN NVML_STANDIN
set -u
bin=$(realpath "$1") src=$2 nvfm=$(realpath "$3") nvml=$(realpath "$4")
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/fabric
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# The host: hard links (fabric writes no sysfs file; a VF whose type a case sets is
# unlinked first), var/ (the stand-ins' state, the records) a real copy.
h=$tmp/h
tree_copy tests/data/hosts/hgx-h100-8 "$h"
rm -rf "${h:?}/var"
cp -a tests/data/hosts/hgx-h100-8/var "$h/var"
st=$h/var/lib/fake-nvidia
own=$h/var/lib/vgpuctl/owners
mkdir -p "$own"

v() { # vgpuctl ARGS...: stdout in $tmp/out, stderr in $tmp/err, the status in $rc
	rc=0
	FAKE_NV_ROOT=$h "$bin" --sysroot "$h" --nvfm "$nvfm" --nvml "$nvml" "$@" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
}
expect() { # WHAT STATUS STDERR-LINE: the status and stderr, exactly
	if [[ $rc != "$2" || $(cat "$tmp/err") != "$3" ]]; then
		bad "$1: exit $rc, stderr '$(cat "$tmp/err")'; want exit $2, '$3'"
	fi
}
golden() { # NAME: stdout against the golden file
	sed -i "s|$tmp|TMP|g" "$tmp/out"
	golden_cmp "$tmp/out" "$exp/$1" "$1"
}
record() { # VF DOMAIN N PARTITION: an owner record of an H100XM-80C on VF, its vGPU there
	local gpu=${1%.*}.0 f
	printf 'domain=%s\ndomain_uuid=11111111-2222-4333-8444-55555555555%s\ngpu=%s\nparent=%s\ninterface=vendor-vfio\ntype_id=1310\nprofile=H100XM-80C\nmdev_uuid=\nlifetime=persistent\npartition=%s\n' \
		"$2" "$3" "$gpu" "$1" "$4" >"$own/$1"
	f=$h/sys/bus/pci/devices/$1/nvidia/current_vgpu_type
	rm -f "$f" && echo 1310 >"$f"
}
calls_since() { # N: the calls file from line N+1
	tail -n +"$(($1 + 1))" "$st/calls" | grep '^nvfm'
}
ncalls() { wc -l <"$st/calls" 2>/dev/null || echo 0; }

# ---- a PCIe host: no Fabric Manager, exit 0 (read in place: nothing is written)
rc=0
"$bin" --sysroot tests/data/hosts/a30-dual-mdev fabric >"$tmp/out" 2>"$tmp/err" || rc=$?
expect "PCIe host" 0 ""
golden pcie.txt
rc=0
"$bin" --sysroot tests/data/hosts/a30-dual-mdev fabric --json >"$tmp/out" 2>"$tmp/err" || rc=$?
expect "PCIe host --json" 0 ""
golden pcie.json

# ---- where Fabric Manager cannot be asked
rc=0
FAKE_NV_ROOT=$h "$bin" --sysroot "$h" fabric >"$tmp/out" 2>"$tmp/err" || rc=$?
expect "no --nvfm with --sysroot" 1 "vgpuctl: fabric: '$h' is another host's root: name its Fabric Manager SDK library with --nvfm LIB"
rc=0
# (meson puts the stand-in's directory on LD_LIBRARY_PATH)
env -u LD_LIBRARY_PATH FAKE_NV_ROOT="$h" "$bin" --sysroot "$h" --nvfm libnvfm.so.1 fabric \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
expect "not installed" 1 "vgpuctl: libnvfm.so.1 is not installed: Fabric Manager's SDK library"
echo '* not-running' >"$st/fm-fail"
v fabric
expect "not running" 1 "vgpuctl: Fabric Manager is not running (no answer at 127.0.0.1:6666)"
echo 'fmGetSupportedFabricPartitions not-ready' >"$st/fm-fail"
v fabric
expect "not ready" 1 "vgpuctl: Fabric Manager's partitions cannot be read: the fabric is not ready (FM_ST_NOT_READY)"
rm "$st/fm-fail"

# ---- where Fabric Manager listens: fabricmanager.cfg's FM_CMD_* (defaults 127.0.0.1:6666)
cfg=$h/usr/share/nvidia/nvswitch/fabricmanager.cfg
cp "$cfg" "$tmp/cfg"
v fabric
[[ $(cat "$st/fm-address") == "inet 127.0.0.1:6666" ]] || bad "the fixture's address: $(cat "$st/fm-address")"
sed -e 's/^FM_CMD_BIND_INTERFACE=.*/FM_CMD_BIND_INTERFACE=10.0.0.7/' \
	-e 's/^FM_CMD_PORT_NUMBER=.*/FM_CMD_PORT_NUMBER = 16666  # moved/' "$tmp/cfg" >"$cfg"
v fabric
[[ $rc == 0 && $(cat "$st/fm-address") == "inet 10.0.0.7:16666" ]] ||
	bad "FM_CMD_BIND_INTERFACE, FM_CMD_PORT_NUMBER: $rc $(cat "$st/fm-address" "$tmp/err")"
grep -v '^FM_CMD_' "$tmp/cfg" >"$cfg"
v fabric
[[ $(cat "$st/fm-address") == "inet 127.0.0.1:6666" ]] || bad "the defaults: $(cat "$st/fm-address")"
{ cat "$tmp/cfg"; echo 'FM_CMD_UNIX_SOCKET_PATH=/run/nvidia-fabricmanager/socket'; } >"$cfg"
v fabric
[[ $(cat "$st/fm-address") == "unix /run/nvidia-fabricmanager/socket" ]] ||
	bad "FM_CMD_UNIX_SOCKET_PATH: $(cat "$st/fm-address")"
echo '* not-running' >"$st/fm-fail"
v fabric
expect "not running at the socket" 1 "vgpuctl: Fabric Manager is not running (no answer at /run/nvidia-fabricmanager/socket)"
rm "$st/fm-fail"
sed 's/^FM_CMD_PORT_NUMBER=.*/FM_CMD_PORT_NUMBER=66666/' "$tmp/cfg" >"$cfg"
v fabric
expect "a bad port" 1 "vgpuctl: '$cfg': FM_CMD_PORT_NUMBER '66666' is not a TCP port"
cp "$tmp/cfg" "$cfg"

# ---- the board: modules 1 2 4 3 7 8 6 5 in PCI order
v fabric
expect "listing" 0 ""
golden board.txt
v fabric -o ID,GPUS -r
[[ $(grep '^4 ' "$tmp/out") == "4 0000:5d:00.0,0000:3d:00.0" ]] ||
	bad "partition 4 (modules 3, 4) is not 5d, 3d: $(grep '^4 ' "$tmp/out")"

# ---- activation: the domain's VFs, then the first free VF; refusals
record 0000:5d:00.5 vm-pair 1 4
record 0000:3d:00.6 vm-pair 1 4
record 0000:9b:00.5 vm-one 2 13
n0=$(ncalls)
v fabric activate 4
expect "activate 4" 0 ""
[[ $(cat "$tmp/out") == "fabric partition 4 activated with VFs 0000:5d:00.5 0000:3d:00.6" ]] ||
	bad "activate 4: $(cat "$tmp/out")"
v fabric activate 13
expect "activate 13" 0 ""
v fabric activate 12
expect "activate 12 (no domain)" 0 ""
[[ $(cat "$tmp/out") == "fabric partition 12 activated with VFs 0000:bd:00.4" ]] ||
	bad "activate 12 takes the first free VF: $(cat "$tmp/out")"
v fabric activate 9
expect "activate 9 (GPU 3 in 4)" 1 "vgpuctl: fabric partition 9 cannot be activated: the partition or its GPUs are in use (FM_ST_IN_USE)"
v fabric activate 99
expect "activate 99" 1 "vgpuctl: fabric: no partition 99 (see 'vgpuctl fabric')"
v fabric activate 5 --vf 0000:db:00.4
expect "one --vf for two GPUs" 1 "vgpuctl: fabric: partition 5 has 2 GPUs: give one --vf for each, not 1"
v fabric activate 3 --vf 0000:2a:00.7 --vf 0000:1b:00.7
expect "--vf in the partition's order" 0 ""
v fabric deactivate 3
expect "deactivate 3" 0 ""
v fabric deactivate 3
expect "deactivate 3 again" 1 "vgpuctl: fabric partition 3 is not active (FM_ST_UNINITIALIZED)"
[[ $(cat "$st/fm-active") == $'4\n13\n12' ]] || bad "fm-active: $(cat "$st/fm-active")"
calls_since "$n0" >"$tmp/calls"
cat >"$tmp/want" <<'EOF'
nvfm fmActivateFabricPartitionWithVFs 4 0000:5d:00.5 0000:3d:00.6
nvfm fmActivateFabricPartitionWithVFs 13 0000:9b:00.5
nvfm fmActivateFabricPartitionWithVFs 12 0000:bd:00.4
nvfm fmActivateFabricPartitionWithVFs 9 0000:5d:00.4
nvfm fmActivateFabricPartitionWithVFs 3 0000:1b:00.7 0000:2a:00.7
nvfm fmDeactivateFabricPartition 3
nvfm fmDeactivateFabricPartition 3
EOF
cmp -s "$tmp/calls" "$tmp/want" || bad "calls: $(diff "$tmp/want" "$tmp/calls")"

# ---- each injected error: its words, exit 1, nothing activated
for e in "not-ready:the fabric is not ready (FM_ST_NOT_READY)" \
	"in-use:the partition or its GPUs are in use (FM_ST_IN_USE)" \
	"out-of-sync:Fabric Manager is out of sync (restarted and not told which partitions are active) (FM_ST_NOT_CONFIGURED)" \
	"not-running:Fabric Manager is not running (FM_ST_CONNECTION_NOT_VALID)" \
	"-10:Fabric Manager failed (FM_ST_NVLINK_ERROR)"; do
	echo "fmActivateFabricPartitionWithVFs ${e%%:*}" >"$st/fm-fail"
	v fabric activate 14
	expect "activate 14 with ${e%%:*}" 1 "vgpuctl: fabric partition 14 cannot be activated: ${e#*:}"
done
rm "$st/fm-fail"

# ---- the listing: active partitions with the domains whose records name them (partition=),
# an incoming migration's included; unsupported, NVLink-failed
printf 'domain=vm-mig\ndomain_uuid=11111111-2222-4333-8444-555555555559\ngpu=0000:db:00.0\nparent=0000:db:00.5\ninterface=vendor-vfio\ntype_id=1310\nprofile=H100XM-80C\nmdev_uuid=\nlifetime=persistent\npartition=5\nstate=incoming\ndeadline=4102444800\n' >"$own/0000:db:00.5"
echo 0 >"$st/fm-unsupported"
echo 8 >"$st/fm-failed"
v fabric
expect "listing with state" 0 ""
golden active.txt
v fabric --json
expect "--json" 0 ""
golden active.json
if python3 -c 'import jsonschema' 2>/dev/null; then
	python3 - docs/fabric.schema.json "$tmp/out" "$exp/pcie.json" <<'PY' || bad "fabric --json does not match docs/fabric.schema.json"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for f in sys.argv[2:]:
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(f))))
    for e in errors:
        print("schema: %s: %s: %s" % (f, "/".join(map(str, e.path)), e.message[:200]))
    if errors:
        sys.exit(1)
PY
else
	echo "SKIP: python3-jsonschema is missing: the schema check"
fi
v fabric activate 0
expect "activate unsupported 0" 1 "vgpuctl: fabric: partition 0 is unsupported on this board"

# ---- a restarted Fabric Manager: resync tells what the hook's notes say is active: 4 (vm-pair,
# noted by 'fabric activate' as prepare would); not 13: vm-one stopped (its note dropped by
# 'fabric deactivate' as by release) and its persistent vGPU stays; not 12 (no domain's)
[[ $(cat "$h/run/vgpuctl/partitions/vm-pair" 2>&1) == 4 && $(cat "$h/run/vgpuctl/partitions/vm-one" 2>&1) == 13 ]] ||
	bad "activate notes the partition for its domain: $(grep -r . "$h/run/vgpuctl/partitions" 2>&1)"
v fabric deactivate 13
expect "deactivate 13" 0 ""
[[ -e $h/run/vgpuctl/partitions/vm-one ]] && bad "deactivate 13 left vm-one's note"
[[ -e $h/sys/bus/pci/devices/0000:9b:00.5/nvidia/current_vgpu_type && $(cat "$h/sys/bus/pci/devices/0000:9b:00.5/nvidia/current_vgpu_type") == 1310 ]] ||
	bad "vm-one's persistent vGPU is gone"
touch "$st/fm-restarted"
v fabric activate 14
expect "activate while out of sync" 1 "vgpuctl: fabric partition 14 cannot be activated: Fabric Manager is out of sync (restarted and not told which partitions are active) (FM_ST_NOT_CONFIGURED)"
n0=$(ncalls)
v fabric resync
expect "resync" 0 ""
[[ $(cat "$tmp/out") == "Fabric Manager told the active partitions: 4" ]] ||
	bad "resync: $(cat "$tmp/out")"
[[ $(cat "$st/fm-active") == 4 && ! -e $st/fm-restarted ]] ||
	bad "after resync fm-active is '$(cat "$st/fm-active")' (want 4), fm-restarted $(ls "$st/fm-restarted" 2>&1)"
[[ $(calls_since "$n0") == "nvfm fmSetActivatedFabricPartitions 4" ]] ||
	bad "resync calls: $(calls_since "$n0")"

# ---- shared NVSwitch mode: no VFs
sed -i 's/^FABRIC_MODE=2/FABRIC_MODE=1/' "$h/usr/share/nvidia/nvswitch/fabricmanager.cfg" 2>/dev/null ||
	bad "cannot set FABRIC_MODE=1"
echo 1 >"$st/fm-mode"
v fabric activate 11
expect "mode 1 activate" 0 ""
[[ $(tail -1 "$st/calls") == "nvfm fmActivateFabricPartition 11" ]] || bad "mode 1: $(tail -1 "$st/calls")"
v fabric activate 14 --vf 0000:ab:00.4
expect "mode 1 --vf" 1 "vgpuctl: fabric activate: --vf is for vGPU mode (FABRIC_MODE=2), not shared-nvswitch mode"

# ---- usage errors: exit 2
for args in "activate" "activate x" "deactivate 1 2" "resync 1" "bogus" "--vf 0000:db:00.4"; do
	# shellcheck disable=SC2086 # one word each
	v fabric $args
	[[ $rc == 2 ]] || bad "fabric $args: exit $rc, want 2 ($(cat "$tmp/err"))"
done
exit $fail
