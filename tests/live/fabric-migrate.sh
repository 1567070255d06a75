#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live migration onto an HGX host whose Fabric Manager runs in vGPU mode,
# through the destination hook's inputs (as tests/live/migrate-hook.sh), on
# the kernel emulator (tests/emu) with the NVML and libnvfm stand-ins:
#   - migrate begin picks a free partition of the domain's vGPU count (the
#     choice assign makes) and writes it in the incoming records;
#   - prepare creates the vGPUs and activates that partition, the VFs in the
#     order of its GPUs; release deactivates it;
#   - with no free partition of that size migrate begin refuses with one line
#     ("no free partition of 2 GPUs") and records nothing, and migrate-offer's
#     plan-error says the same.
#   fabric-migrate.sh VGPUCTL SRCDIR NVML NVFM     (VGPU_EMU names the emulator)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
B=$1
SRC=$2
NVML=$3
NVFM=$4
# shellcheck source=tests/live/fabric-lib.sh
. "$SRC/tests/live/fabric-lib.sh"
U1=11111111-2222-4333-8444-555555555555
U2=22222222-2222-4333-8444-555555555555

# the domains as a source host's libvirt hands them to migrate begin: made by vgpuctl xml
# (nothing recorded here); the two-GPU partition it names on its source does not matter
v xml --name vmm --uuid $U1 --vcpus 4 --memory 4G --vgpu H100XM-20C,H100XM-20C >"$W/vmm.xml" 2>"$W/err" ||
	fail "xml vmm: $(cat "$W/err")"
sed -e "s/$U1/$U2/" -e 's|<name>vmm<|<name>vmn<|' "$W/vmm.xml" >"$W/vmn.xml"
[ -z "$(ls -A "$OWN" 2>/dev/null)" ] || fail "xml recorded: $(ls "$OWN")"

# ---- migrate begin: a free pair, in the incoming records
v hook vmm migrate begin - <"$W/vmm.xml" >"$W/vmm.out" 2>"$W/err" || fail "migrate begin: $(cat "$W/err")"
P=$(grep -h '^partition=' "$OWN"/* 2>/dev/null | sort -u)
[ "$(grep -l '^state=incoming$' "$OWN"/* | wc -l)" = 2 ] && [ "$(echo "$P" | wc -l)" = 1 ] &&
	[ "$(grep -l "^$P\$" "$OWN"/* | wc -l)" = 2 ] ||
	fail "the two incoming records name one partition: $(grep -h 'partition=\|state=' "$OWN"/*)"
P=${P#partition=}
case $P in 3 | 4 | 5 | 6) ;; *) fail "partition $P is not a pair" ;; esac
v fabric -r -o ID,GPUS >"$W/parts" 2>"$W/err" || fail "fabric: $(cat "$W/err")"
GPUS=$(awk -v p="$P" '$1 == p { print $2 }' "$W/parts")
[ "$(grep -h '^gpu=' "$OWN"/* | cut -d= -f2 | sort | tr '\n' ,)" = "$(echo "$GPUS" | tr , '\n' | sort | tr '\n' ,)" ] ||
	fail "the records' GPUs are not partition $P's ($GPUS): $(grep -h '^gpu=' "$OWN"/*)"
# the VFs in the partition's GPU order: each GPU's record's VF
WANT="nvfm fmActivateFabricPartitionWithVFs $P"
for g in ${GPUS//,/ }; do
	WANT="$WANT $(grep -l "^gpu=$g\$" "$OWN"/* | xargs grep -h '^parent=' | cut -d= -f2)"
done
# what libvirt starts here: the definition migrate begin printed, else the source's
[ -s "$W/vmm.out" ] && cp "$W/vmm.out" "$W/vmm.here" || cp "$W/vmm.xml" "$W/vmm.here"

# ---- prepare activates it; release deactivates it
v hook vmm prepare begin - <"$W/vmm.here" 2>"$W/err" || fail "prepare: $(cat "$W/err")"
[ "$(cat "$FM/fm-active" 2>/dev/null)" = "$P" ] || fail "after prepare, active: $(cat "$FM/fm-active" 2>&1)"
grep -qxF "$WANT" "$FM/calls" || fail "activated: $(grep fmActivate "$FM/calls"); want $WANT"
grep -q '^state=' "$OWN"/* && fail "prepare left incoming records"
v hook vmm started begin - <"$W/vmm.here" 2>"$W/err" || fail "started: $(cat "$W/err")"
v hook vmm release end - <"$W/vmm.here" 2>"$W/err" || fail "release: $(cat "$W/err")"
[ -s "$FM/fm-active" ] && fail "after release, still active: $(cat "$FM/fm-active")"
grep -qx "nvfm fmDeactivateFabricPartition $P" "$FM/calls" || fail "release did not deactivate $P"

# ---- no free pair: every GPU is in partition 0, active (another host's admin, say)
echo 0 >"$FM/fm-active"
v hook vmn migrate begin - <"$W/vmn.xml" >"$W/vmn.out" 2>"$W/err"
rc=$?
[ $rc != 0 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q 'no free partition of 2 GPUs' "$W/err" ||
	fail "no free pair: exit $rc: $(cat "$W/err")"
[ -s "$W/vmn.out" ] && fail "refused, yet it printed"
grep -l "^domain_uuid=$U2\$" "$OWN"/* 2>/dev/null && fail "refused, yet recorded"
# migrate-offer (what the source's migrate-check and migrate-xml are told) says the same
printf '%s' '{"vgpuctl-migrate": 1, "uuid": "'$U2'", "vcpus": 4, "memory-kib": 4194304, "pinned": false,
 "vgpus": [{"type": "H100XM-20C", "interface": "vf"}, {"type": "H100XM-20C", "interface": "vf"}]}' >"$W/manifest"
v migrate-offer <"$W/manifest" >"$W/offer" 2>"$W/err" || fail "migrate-offer: $(cat "$W/err")"
grep -q '"plan-error": ".*no free partition of 2 GPUs' "$W/offer" ||
	fail "migrate-offer with no free pair: $(cat "$W/offer")"
: >"$FM/fm-active"
v migrate-offer <"$W/manifest" >"$W/offer" 2>"$W/err" || fail "migrate-offer: $(cat "$W/err")"
grep -q '"plan-error"' "$W/offer" && fail "migrate-offer with free pairs: $(cat "$W/offer")"
grep -q '"plan": ' "$W/offer" || fail "migrate-offer has no plan: $(cat "$W/offer")"

emu_stop || fail "the emulator did not exit cleanly"
[ "$EMU_FAILS" = 0 ] || exit 1
echo "fabric migrate: the partition picked, recorded, activated, deactivated; refused when none: ok"
