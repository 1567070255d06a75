#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Placement is what makes apply succeed: on booted copies of vfio-mig-h100, the
# layout 3g.40gb + 2g.20gb + 2 x 1g.10gb fits only with the 3g at slice 4.
# nvidia-smi's first fit in the naive order fails; vgpuctl apply places the GIs
# through the NVML stand-in, or, with the old stand-in (no placement call),
# asks nvidia-smi in an order whose first fit is the plan.  Also: gpus' MIG
# column from NVML, commands that never load NVML, an NVML that is not there,
# and the Blackwell RTX PRO 6000 (DC-1-8C, three per GI).
#   apply.sh VGPUCTL SRCDIR LIB OLD_LIB
set -euo pipefail
bin=$(realpath "$1") src=$(realpath "$2") lib=$(realpath "$3") oldlib=$(realpath "$4")
fakes=$src/tests/apply
smi=$fakes/fake-nvidia-smi
tools=(--nvidia-smi "$smi" --sriov-manage "$fakes/fake-sriov-manage")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/host
export FAKE_NV_ROOT=$root
pf=0000:ca:00.0
calls=$root/var/lib/fake-nvidia/calls
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
boot() { # [FIXTURE]: a just-booted copy at $root (default vfio-mig-h100)
	rm -rf "$root"
	cp -a "$src/tests/data/hosts/${1:-vfio-mig-h100}" "$root"
	"$fakes/fake-nv-boot" "$root"
}
# run ARGS...: vgpuctl --sysroot $root ARGS; OUT, ERR, RC
run() {
	RC=0
	"$bin" --sysroot "$root" "$@" >"$tmp/out" 2>"$tmp/err" || RC=$?
	OUT=$(<"$tmp/out") ERR=$(<"$tmp/err")
}
same() { # WHAT GOT WANT
	[[ $2 == "$3" ]] && return 0
	bad "$1:"
	diff -u <(printf '%s\n' "$3") <(printf '%s\n' "$2") | tail -n +3 | sed 's/^/    /' || true
}
# the calls that change the host, from the fakes and the stand-in
changing() {
	grep -E -- ' -mig | -cgi | -dci| -dgi|^sriov-manage -[ed] |^nvml nvml(DeviceCreate|GpuInstanceCreate|ComputeInstanceDestroy|GpuInstanceDestroy|DeviceSetVgpu)' \
		"$calls" || true
}
# the GIs as nvidia-smi lists them: "PROFILE START:SIZE", by start (GI IDs left out)
gis() {
	"$smi" mig -i "${1:-$pf}" -lgi | awk '/MIG/ { print $4, $(NF - 1) }' | sort -t' ' -k2n
}
# VFs of GPU $1 holding type $2
holding() {
	local f n=0
	for f in "$root/sys/bus/pci/devices/$1"/virtfn*/nvidia/current_vgpu_type; do
		[[ -f $f && $(<"$f") == "$2" ]] && n=$((n + 1))
	done
	echo $n
}

cat >"$tmp/h100.yaml" <<'Y'
version: v1
mig-configs:
  mixed:
    - devices: ["0000:ca:00.0"]
      mig-enabled: true
      mig-devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
vgpu-configs:
  mixed:
    - devices: ["0000:ca:00.0"]
      vgpu-devices: {"H100-3-40C": 1, "H100-1-10C": 2}
Y
cfg=(-f "$tmp/h100.yaml" --config mixed)
# the plan: the 3g at slice 4, the 2g at 0, the 1g at 2 and 3
want_gis="2g.20gb 0:2
1g.10gb 2:1
1g.10gb 3:1
3g.40gb 4:4"

# ---- first fit alone cannot make it: the naive order leaves no room for the last 1g
boot
"$smi" -i $pf -mig 1 >/dev/null
RC=0
OUT=$("$smi" mig -i $pf -cgi 9,14,19,19 -C 2>&1) || RC=$?
[[ $RC != 0 && $OUT == *"Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources"* ]] ||
	bad "the naive order -cgi 9,14,19,19 did not fail with Insufficient Resources (exit $RC): $OUT"

# ---- with NVML: each GI where the plan puts it, no nvidia-smi -cgi
boot
run --nvml "$lib" apply "${cfg[@]}" "${tools[@]}"
[[ $RC == 0 ]] || bad "apply with the stand-in: exit $RC: $ERR"
grep -qx "nvml nvmlDeviceCreateGpuInstanceWithPlacement $pf 9 4" "$calls" ||
	bad "no 3g.40gb (profile 9) placed at slice 4: $(grep Placement "$calls" || true)"
[[ $(grep -c '^nvml nvmlDeviceCreateGpuInstanceWithPlacement ' "$calls") == 4 ]] ||
	bad "not 4 placed GIs: $(grep Placement "$calls" || true)"
! grep -q -- ' -cgi ' "$calls" || bad "nvidia-smi -cgi ran beside NVML: $(grep -- -cgi "$calls")"
same "GIs after apply with the stand-in" "$(gis)" "$want_gis"
[[ $(holding $pf 1059) == 1 && $(holding $pf 1056) == 2 ]] ||
	bad "vGPUs: $(holding $pf 1059) H100-3-40C, $(holding $pf 1056) H100-1-10C"
run --nvml "$lib" assert "${cfg[@]}" "${tools[@]}"
same "assert after apply (exit $RC)" "$RC:$OUT" "0:"
: >"$calls"
run --nvml "$lib" apply "${cfg[@]}" "${tools[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "second apply: exit $RC, changed: $(changing) $ERR"
same "GIs after a second apply" "$(gis)" "$want_gis"

# ---- a held type no list names (the driver lists a type only where it fits now; the
# fake's lists do not shrink, so its lines go by hand), without the catalogue apply
# keeps: vfs and vgpus ask NVML for its name, and only then
rm -rf "$root/var/lib/vgpuctl/catalog"
sed -i '/^1059 /d' "$root"/sys/bus/pci/devices/*/nvidia/creatable_vgpu_types
: >"$calls"
run --nvml "$lib" vfs
held=$(awk '$7 == "in-use" && $8 == 1059 { print $9 }' <<<"$OUT")
same "vfs names a held type through NVML" "$held" "H100-3-40C"
grep -q '^nvml nvmlInit_v2' "$calls" || bad "vfs did not ask NVML for the unnamed type"
run --nvml "$lib" --json vgpus
[[ $OUT == *'"profile": "H100-3-40C"'* ]] || bad "vgpus did not name type 1059: $OUT"
run vfs
[[ -z $(awk '$7 == "in-use" && $8 == 1059 { print $9 }' <<<"$OUT") ]] ||
	bad "vfs without --nvml under --sysroot named type 1059 (from where?)"

# ---- gpus: MIG mode from NVML; unknown without it under --sysroot (and no NVML loaded)
run --nvml "$lib" gpus
[[ $RC == 0 && $(awk 'NR == 2 { print $NF }' <<<"$OUT") == enabled ]] ||
	bad "gpus with the stand-in, MIG on (exit $RC): $OUT"
run --nvml "$lib" --json gpus
[[ $OUT == *'"mig_mode": {"current": "enabled", "pending": "enabled"}'* ]] ||
	bad "gpus --json with the stand-in, MIG on: $OUT"
: >"$calls"
run gpus
[[ $RC == 0 && $(awk 'NR == 2 { print $NF }' <<<"$OUT") == unknown ]] ||
	bad "gpus without --nvml under --sysroot (exit $RC): $OUT"
run --json gpus
[[ $OUT == *'"mig_mode": "unknown"'* ]] || bad "gpus --json without --nvml: $OUT"
! grep -q '^nvml nvmlInit_v2' "$calls" || bad "gpus without --nvml under --sysroot loaded NVML"
boot
run --nvml "$lib" gpus
[[ $RC == 0 && $(awk 'NR == 2 { print $NF }' <<<"$OUT") == disabled ]] ||
	bad "gpus with the stand-in on a booted host (exit $RC): $OUT"
run --nvml "$lib" --json gpus
[[ $OUT == *'"mig_mode": {"current": "disabled", "pending": "disabled"}'* ]] ||
	bad "gpus --json with the stand-in on a booted host: $OUT"
# one answer per question: mig show and metrics say what gpus says, from the same NVML
run --nvml "$lib" mig show
[[ $RC == 0 && $(awk 'NR == 2 { print $2 }' <<<"$OUT") == disabled ]] ||
	bad "mig show with the stand-in on a booted host, where gpus says disabled (exit $RC): $OUT"
run --nvml "$lib" metrics
[[ $OUT == *$'\nvgpuctl_mig_enabled{gpu="0000:ca:00.0"} 0\n'* ]] ||
	bad "metrics with the stand-in on a booted host: no vgpuctl_mig_enabled 0: $OUT"
run mig show
[[ $(awk 'NR == 2 { print $2 }' <<<"$OUT") == unknown ]] ||
	bad "mig show without --nvml under --sysroot, where gpus says unknown (exit $RC): $OUT"
# mig plan --gpu plans on top of the GIs NVML reports: a 3g.40gb at slice 0 leaves 4
"$smi" -i $pf -mig 1 >/dev/null
"$smi" mig -i $pf -cgi 9 -C >/dev/null
run --nvml "$lib" --json mig plan --gpu $pf 3g.40gb
[[ $RC == 0 && $OUT == *'{"profile": "3g.40gb", "profile_id": 9, "start": 4, "size": 4}'* &&
	$OUT == *'"largest_free_block": 0'* && -z $ERR ]] ||
	bad "mig plan --gpu with the stand-in did not plan beside NVML's 3g.40gb at 0 (exit $RC): $OUT $ERR"

# ---- vfs never loads NVML: not with --nvml, not on the real host (read only) with the
# stand-in first on the library path, where gpus does load it.  types does: what fits
# is NVML's answer where it has one (mixed-size mode, its maxima), as for why and metrics
: >"$calls"
"$bin" --sysroot "$root" --nvml "$lib" vfs >/dev/null 2>&1 || true
LD_LIBRARY_PATH=${lib%/*} "$bin" vfs >/dev/null 2>&1 || true
! grep -q '^nvml nvmlInit_v2' "$calls" || bad "vfs loaded NVML: $(cat "$calls")"
"$bin" --sysroot "$root" --nvml "$lib" types >/dev/null 2>&1 || true
grep -q '^nvml nvmlInit_v2' "$calls" || bad "types --nvml did not ask NVML what fits"
LD_LIBRARY_PATH=${lib%/*} "$bin" gpus >/dev/null 2>&1 || true
grep -q '^nvml nvmlInit_v2' "$calls" ||
	bad "gpus on the host did not load the stand-in from LD_LIBRARY_PATH (the check above proves nothing)"

# ---- an NVML that is not there: one warning naming it, and the command works
run --nvml /nonexistent/libnvidia-ml.so.1 gpus
[[ $RC == 0 && $(wc -l <"$tmp/err") == 1 && $ERR == *warning*/nonexistent/libnvidia-ml.so.1* ]] ||
	bad "--nvml /nonexistent: exit $RC, stderr: $ERR"
[[ $(awk 'NR == 2 { print $1, $NF }' <<<"$OUT") == "$pf unknown" ]] ||
	bad "gpus with --nvml /nonexistent: $OUT"

# ---- an NVML too old to place: nvidia-smi in an order whose first fit is the plan
boot
run --nvml "$oldlib" apply "${cfg[@]}" "${tools[@]}"
[[ $RC == 0 ]] || bad "apply with the old stand-in: exit $RC: $ERR"
grep -q "^nvidia-smi mig -i $pf -cgi [0-9,]* -C$" "$calls" ||
	bad "no nvidia-smi -cgi with the old stand-in: $(cat "$calls")"
! grep -q '^nvml nvmlDeviceCreateGpuInstance' "$calls" ||
	bad "the old stand-in created GIs: $(grep '^nvml nvmlDeviceCreate' "$calls")"
same "GIs after apply with the old stand-in" "$(gis)" "$want_gis"
[[ $(grep -c "NVML cannot place GPU instances" "$tmp/err") == 1 ]] ||
	bad "the old NVML is not said once on stderr: $ERR"
run --nvml "$oldlib" assert "${cfg[@]}" "${tools[@]}"
same "assert after apply with the old stand-in (exit $RC)" "$RC:$OUT" "0:"
: >"$calls"
run --nvml "$oldlib" apply "${cfg[@]}" "${tools[@]}"
[[ $RC == 0 && -z $(changing) ]] || bad "second apply, old stand-in: exit $RC, changed: $(changing)"

# ---- Blackwell: DC-1-8C x12, three per 1g.24gb+gfx GI, makes four GIs, not twelve
bw=0000:3d:00.0
boot vfio-mig-rtxpro6000
printf '%s\n' "version: v1" "vgpu-configs:" "  dc8:" "    - devices: all" \
	'      vgpu-devices: {"DC-1-8C": 12}' >"$tmp/dc8.yaml"
run --nvml "$lib" apply -f "$tmp/dc8.yaml" --config dc8 "${tools[@]}"
[[ $RC == 0 ]] || bad "Blackwell apply: exit $RC: $ERR"
same "Blackwell placed GIs" "$(grep -c "^nvml nvmlDeviceCreateGpuInstanceWithPlacement $bw 47 " "$calls")" 4
! grep -q -- ' -cgi ' "$calls" || bad "Blackwell: nvidia-smi -cgi ran: $(grep -- -cgi "$calls")"
same "Blackwell GIs" "$(gis $bw)" "1g.24gb+gfx 0:1
1g.24gb+gfx 1:1
1g.24gb+gfx 2:1
1g.24gb+gfx 3:1"
same "Blackwell VFs holding DC-1-8C (1222)" "$(holding $bw 1222)" 12
run --nvml "$lib" --json why DC-1-8C
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["why"]; assert len(r)==1 and r[0]["available"]==0 and r[0]["reason"], r' \
	"$OUT" || bad "why DC-1-8C after DC-1-8C x12 (exit $RC): $OUT"
run --nvml "$lib" --json types --gpu $bw
python3 -c 'import json,sys; r=[t for t in json.loads(sys.argv[1])["types"] if t["profile"]=="DC-1-8C"]; assert len(r)==1 and r[0]["per_gpu_instance"]==3, r' \
	"$OUT" || bad "types --json: DC-1-8C per_gpu_instance (exit $RC): $OUT"

[[ $fail == 0 ]] && echo "ok: apply places GPU instances through NVML"
exit $fail
