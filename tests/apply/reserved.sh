#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stopped per-start domain's vGPU is its owner record's reservation only: on
# a MIG GPU it needs a GPU instance at the domain's next start, so a runtime
# apply must treat the reservation as a vGPU and neither rebuild the GPU
# instances nor turn MIG mode off.  It used to see a free GPU and destroy
# them (fbc9050), and the domain could no longer start.  End to end on a
# booted vfio-mig-h100 with the stand-ins for nvidia-smi and sriov-manage
# (tests/apply/README.md).   reserved.sh VGPUCTL SRCDIR
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
v() { "$bin" --sysroot "$root" "$@"; }
run() { # vgpuctl apply ARGS... with the stand-ins: ERR, RC
	RC=0
	v apply "$@" "${tools[@]}" >/dev/null 2>"$tmp/err" || RC=$?
	ERR=$(<"$tmp/err")
}
changing() { grep -E -- ' -mig | -cgi | -dci| -dgi|^sriov-manage -[ed] ' "$st/calls" || true; }
# MIG mode, the GPU instances (ID, profile, placement), the VFs and their vGPUs
state() {
	"$smi" -i $pf --query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader
	cat "$st/gis-$pf"
	cat "$root/sys/bus/pci/devices/$pf/sriov_numvfs"
	for f in "$root/sys/bus/pci/devices/0000:ca:"*/nvidia/current_vgpu_type; do
		echo "$f $(<"$f")"
	done
}

cat >"$tmp/c.yaml" <<'Y'
version: v1
mig-configs:
  whole:
    - devices: all
      mig-enabled: true
      mig-devices: {"7g.80gb": 1}
  off:
    - devices: all
      mig-enabled: false
      mig-devices: {}
vgpu-configs:
  whole:
    - devices: all
      vgpu-devices: {}
  off:
    - devices: all
      vgpu-devices: {}
Y
cat >"$tmp/d.xml" <<'X'
<domain type='kvm'>
  <name>vm-per-start</name>
  <uuid>11111111-2222-4333-8444-555555555555</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
</domain>
X

# a booted host made by hand: MIG on, VFs on, GIs 2g.20gb, 3g.40gb and 2 x 1g.10gb
cp -a "$src/tests/data/hosts/vfio-mig-h100" "$root"
"$fakes/fake-nv-boot" "$root"
"$smi" -i $pf -mig 1 >/dev/null
"$fakes/fake-sriov-manage" -e $pf >/dev/null
"$smi" mig -i $pf -cgi 14,9,19,19 -C >/dev/null

# the per-start domain claims a VF for H100-3-40C: a record, no vGPU (the
# domain is stopped); without that the rest says nothing
v assign --from "$tmp/d.xml" -o "$tmp/a.xml" --vgpu H100-3-40C --per-start 2>"$tmp/err" || {
	echo "FAIL: assign --per-start: $(cat "$tmp/err")"
	exit 1
}
if ! grep -q '^domain=vm-per-start$' "$root/var/lib/vgpuctl/owners/"* 2>/dev/null ||
	grep -qvx 0 "$root/sys/bus/pci/devices/0000:ca:"*/nvidia/current_vgpu_type; then
	echo "FAIL: assign --per-start: want a record and no vGPU: $(v vgpus 2>&1)"
	exit 1
fi
state >"$tmp/before"

# ---- GPU instances that differ from the config (one 7g.80gb): refused, none destroyed
: >"$st/calls"
run -f "$tmp/c.yaml" --config whole
[[ $RC == 1 ]] || bad "apply 'whole' beside a per-start domain's record: exit $RC, not 1"
[[ $(tail -1 <<<"$ERR") == "vgpuctl: apply: step 3 (GPU instances): GPU $pf: its GPU instances differ from the config and vGPUs use the GPU or owner records reserve some (VF 0000:ca:00."[0-9]" (an owner record: a stopped per-start domain); see 'vgpuctl vgpus'); release them first" ]] ||
	bad "apply 'whole' beside a record: message: $ERR"
[[ -z $(changing) ]] || bad "apply 'whole' beside a record changed: $(changing)"
state >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >"$tmp/diff" || bad "apply 'whole' beside a record changed the host: $(cat "$tmp/diff")"

# ---- MIG mode off: refused, MIG mode, GPU instances and VFs stay
: >"$st/calls"
run -f "$tmp/c.yaml" --config off
[[ $RC == 1 ]] || bad "apply 'off' beside a per-start domain's record: exit $RC, not 1"
[[ $(tail -1 <<<"$ERR") == "vgpuctl: apply: step 1 (MIG mode): GPU $pf: cannot turn MIG mode off while it holds vGPUs or owner records reserve some (VF 0000:ca:00."[0-9]" (an owner record: a stopped per-start domain); see 'vgpuctl vgpus'); release them first" ]] ||
	bad "apply 'off' beside a record: message: $ERR"
[[ -z $(changing) ]] || bad "apply 'off' beside a record changed: $(changing)"
state >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >"$tmp/diff" || bad "apply 'off' beside a record changed the host: $(cat "$tmp/diff")"

# ---- the record was what blocked: once the domain is released, apply rebuilds them
v release --from "$tmp/a.xml" -o "$tmp/r.xml" 2>"$tmp/err" || bad "release of the per-start domain: $(cat "$tmp/err")"
run -f "$tmp/c.yaml" --config whole
[[ $RC == 0 ]] || bad "apply 'whole' once the record is gone: exit $RC: $ERR"
[[ $(cut -d' ' -f3 "$st/gis-$pf") == 7g.80gb ]] || bad "apply 'whole' once the record is gone: GIs $(cat "$st/gis-$pf")"

[[ $fail == 0 ]] && echo "ok: a per-start domain's record keeps its GPU instances and MIG mode"
exit $fail
