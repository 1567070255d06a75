#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/ansible with a real ansible-playbook against three emulated hosts (tests/emu),
# each ansible_connection=local with a sysroot of its own: site.yml's apply in check mode
# (changed, the planned steps as the diff, no write), for real (converged, changed) and
# again (changed=0), failures carrying vgpuctl's message, the facts module and the local
# fact, and site.yml's placement: the first host with room for a profile, by the facts.
#   run.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator; exit 77 without
#                              ansible-playbook or a usable /dev/fuse)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -euo pipefail
B=$(realpath "$1")
SRC=$(realpath "$2")
command -v ansible-playbook >/dev/null || {
	echo "no ansible-playbook: skipped"
	exit 77
}
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
SITE=$SRC/contrib/ansible/examples/site.yml
CONF=$SRC/contrib/ansible/examples/host.yaml
TOOLS=(--nvidia-smi /bin/false --sriov-manage /bin/false)
T=$(mktemp -d "${TMPDIR:-/tmp}/vgpu-ans.XXXXXX")
ROOTS=()
# EMU_KEEP=1 keeps the emulators' directories and this one (the playbooks' output)
cleanup() {
	_emu_exit
	if [ -n "${EMU_KEEP:-}" ]; then
		echo "kept $T ${ROOTS[*]}" >&2
	else
		rm -rf "$T" "${ROOTS[@]}"
	fi
}
trap cleanup EXIT
mkdir "$T/home" "$T/tmp"
# a private Ansible: no ~/.ansible, no ansible.cfg of the machine or the working directory
export HOME=$T/home ANSIBLE_HOME=$T/home/.ansible ANSIBLE_LOCAL_TEMP=$T/tmp \
	ANSIBLE_REMOTE_TEMP=$T/tmp ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_NOCOLOR=1 \
	ANSIBLE_LIBRARY=$SRC/contrib/ansible/library ANSIBLE_STDOUT_CALLBACK=default \
	ANSIBLE_COLLECTIONS_PATH=$T/home/collections ANSIBLE_RETRY_FILES_ENABLED=0 \
	LC_ALL=C.UTF-8 # Ansible wants a UTF-8 locale (meson's tests run in C)
unset ANSIBLE_FORCE_COLOR ANSIBLE_VERBOSITY
printf '[defaults]\n' >"$T/ansible.cfg"
# the python that runs ansible-playbook runs the modules too
PY=$(ansible-playbook --version | sed -n 's/^  python version = .*(\(\/[^()]*\))$/\1/p') || true
[ -x "$PY" ] || PY=$(command -v python3)
export ANSIBLE_PYTHON_INTERPRETER=$PY

# play NAME ARGS...: ansible-playbook ARGS in $T, output in $T/NAME.out, exit status in RC
play() {
	local name=$1
	shift
	RC=0
	(cd "$T" && ansible-playbook "$@") >"$T/$name.out" 2>&1 || RC=$?
}
# show NAME: a run's output, for a failure (once)
declare -A SHOWN
show() {
	[ -z "${SHOWN[$1]:-}" ] || return 0
	SHOWN[$1]=1
	sed 's/^/    /' "$T/$1.out" >&2
}
# recap NAME HOST KEY: the count KEY (ok, changed, failed...) in HOST's PLAY RECAP line
recap() { sed -n "/^PLAY RECAP/,\$ s/^$2 *:.* $3=\([0-9]*\).*/\1/p" "$T/$1.out"; }
# expect NAME KEY=N HOST...: every HOST's recap has KEY=N
expect() {
	local name=$1 key=${2%=*} want=${2#*=} h got bad=0
	shift 2
	for h in "$@"; do
		got=$(recap "$name" "$h" "$key")
		[ "$got" = "$want" ] || {
			fail "$name: $h has $key=${got:-none}, want $want"
			bad=1
		}
	done
	[ $bad = 0 ] || show "$name"
}
inventory() { # FILE HOST=SYSROOT... [-- VAR=VALUE...]: the group hypervisors, run here
	local file=$1 arg
	shift
	{
		echo "[hypervisors]"
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			echo "${1%%=*} vgpuctl_sysroot=${1#*=}"
			shift
		done
		[ $# = 0 ] || shift
		echo "[hypervisors:vars]"
		echo "ansible_connection=local"
		echo "ansible_python_interpreter=$PY"
		echo "vgpuctl_bin=$B"
		for arg in "$@"; do echo "$arg"; done
	} >"$T/$file"
}

# ---- three L40S hosts: site.yml applies label l40s-8q of examples/host.yaml
L40S=$SRC/tests/data/hosts/vfio-ts-l40s
H=(h1 h2 h3)
declare -A ROOT LOG
for h in "${H[@]}"; do
	emu_start "$L40S"
	ROOT[$h]=$EMU_ROOT LOG[$h]=$EMU_LOG
done
trap cleanup EXIT # emu_start put its own
inventory l40s.ini h1="${ROOT[h1]}" h2="${ROOT[h2]}" h3="${ROOT[h3]}" -- \
	"vgpuctl_config=$CONF" vgpuctl_label=l40s-8q \
	vgpuctl_nvidia_smi=/bin/false vgpuctl_sriov_manage=/bin/false
v() { # HOST ARGS...: vgpuctl on HOST
	local h=$1
	shift
	"$B" --sysroot "${ROOT[$h]}" "$@"
}
writes() { grep '^write sys/' "${LOG[$1]}" || true; }
for h in "${H[@]}"; do v "$h" vgpus >"$T/$h.before"; done

# (1) check mode: changed on every host, the plan as the diff, nothing written
play check -i l40s.ini "$SITE" --tags apply --check --diff
[ "$RC" = 0 ] || { fail "check run: exit $RC"; show check; }
expect check changed=1 "${H[@]}"
for want in "+create vGPU L40S-8Q (type 1151) on VF 0000:c1:00.4" \
	"+create vGPU L40S-8Q (type 1151) on VF 0000:c1:00.5" \
	"+write: 1151 > sys/bus/pci/devices/0000:c1:00.5/nvidia/current_vgpu_type"; do
	n=$(grep -cxF -- "$want" "$T/check.out" || true)
	[ "$n" = 3 ] || { fail "check run: '$want' $n times in the diff, want 3 (one per host)"; show check; }
done
for h in "${H[@]}"; do
	[ -z "$(writes "$h")" ] || fail "check run wrote on $h: $(writes "$h")"
	v "$h" vgpus | cmp -s - "$T/$h.before" || fail "check run changed $h's vGPUs: $(v "$h" vgpus)"
done

# (2) the real run: changed, the two L40S-8Q on c1 of every host, assert agrees
play apply -i l40s.ini "$SITE" --tags apply -v
[ "$RC" = 0 ] || { fail "apply run: exit $RC"; show apply; }
expect apply changed=1 "${H[@]}"
grep -q '"steps": \[' "$T/apply.out" || { fail "apply run: no steps in the module's result"; show apply; }
# the plan as data: each step's kind, GPU and object, not only its text
grep -q '"step": "vgpu-create"' "$T/apply.out" && grep -q '"gpu": "0000:c1:00.0"' "$T/apply.out" &&
	grep -q '"object": "vgpu"' "$T/apply.out" ||
	{ fail "apply run: the plan's steps have no kind, GPU or object"; show apply; }
for h in "${H[@]}"; do
	[ "$(v "$h" vgpus | grep -c '^0000:c1:00.0 .* L40S-8Q ')" = 2 ] ||
		fail "$h after apply: $(v "$h" vgpus)"
	v "$h" assert -f "$CONF" --config l40s-8q "${TOOLS[@]}" >"$T/assert" 2>&1 ||
		fail "$h: assert after apply: $(cat "$T/assert")"
done

# (3) again: nothing to do, changed=0 everywhere, nothing written; so in check mode
for h in "${H[@]}"; do : >"${LOG[$h]}"; done
play again -i l40s.ini "$SITE" --tags apply
[ "$RC" = 0 ] || { fail "second run: exit $RC"; show again; }
expect again changed=0 "${H[@]}"
play again-check -i l40s.ini "$SITE" --tags apply --check --diff
expect again-check changed=0 "${H[@]}"
for h in "${H[@]}"; do
	[ -z "$(writes "$h")" ] || fail "the second runs wrote on $h: $(writes "$h")"
done

# (4) failures carry vgpuctl's message: h1 a label the file lacks, h2 a type its GPU does not
# have (both refused before any write), h3 a vGPU the driver refuses (undone: not changed)
cat >"$T/bad.yaml" <<'EOF'
version: v1
vgpu-configs:
  l40s-8q:
    - devices: ["0000:c1:00.0"]
      vgpu-devices: {"L40S-8Q": 2}
  a30-on-l40s:
    - devices: ["0000:c1:00.0"]
      vgpu-devices: {"A30-6C": 1}
  four:
    - devices: ["0000:c1:00.0"]
      vgpu-devices: {"L40S-8Q": 4}
EOF
cp "$T/l40s.ini" "$T/bad.ini"
sed -i -e "s|^h1 .*|& vgpuctl_label=no-such-label|" \
	-e "s|^h2 .*|& vgpuctl_config=$T/bad.yaml vgpuctl_label=a30-on-l40s|" \
	-e "s|^h3 .*|& vgpuctl_config=$T/bad.yaml vgpuctl_label=four|" "$T/bad.ini"
emu_fault -r "fail write sys/devices/*/current_vgpu_type EIO" # h3: the last started
play bad -i bad.ini "$SITE" --tags apply
emu_fault -r
[ "$RC" != 0 ] || fail "failing run: exit 0"
expect bad failed=1 "${H[@]}"
expect bad changed=0 "${H[@]}"
for want in "vgpuctl: apply: no config 'no-such-label' in $CONF; labels: l40s-8q" \
	"has no vGPU type 'A30-6C'" "vgpuctl: apply: step 5 (vGPUs): cannot create vGPU L40S-8Q"; do
	grep -qF -- "$want" "$T/bad.out" || { fail "failing run: no '$want'"; show bad; }
done
grep -qF -- "fatal: [h1]: FAILED! => {" "$T/bad.out" && grep -q '"msg": "vgpuctl: apply: no config' "$T/bad.out" ||
	{ fail "failing run: the message is not the task's msg"; show bad; }
for h in "${H[@]}"; do
	! writes "$h" | grep -qv ' -> EIO$' || fail "the failing run wrote on $h: $(writes "$h")"
	[ "$(v "$h" vgpus | grep -c '^0000:c1:00.0 .* L40S-8Q ')" = 2 ] || fail "$h after the failing run: $(v "$h" vgpus)"
done

# (5, 6) the facts: the module, and the local fact through setup; the script alone
play facts -i l40s.ini "$SRC/tests/ansible/facts.yml" -e "fact_path=$SRC/contrib/ansible/facts.d"
[ "$RC" = 0 ] || { fail "facts run: exit $RC"; show facts; }
expect facts failed=0 "${H[@]}"
VGPUCTL=$B VGPUCTL_SYSROOT=${ROOT[h1]} "$SRC/contrib/ansible/facts.d/vgpuctl.fact" >"$T/fact.json" ||
	fail "vgpuctl.fact: exit $?"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["schema_version"] != 1
  or not all(isinstance(d[k], list) for k in ("gpus", "vfs", "types", "vgpus")))' "$T/fact.json" ||
	fail "vgpuctl.fact printed no inventory: $(head -c 300 "$T/fact.json")"
# and the document is the one docs/inventory.schema.json describes (where jsonschema is)
if "$PY" -c 'import jsonschema' 2>/dev/null && [ -f "$SRC/docs/inventory.schema.json" ]; then
	"$PY" -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
		"$T/fact.json" "$SRC/docs/inventory.schema.json" 2>"$T/err" ||
		fail "vgpuctl.fact: not the schema's document: $(tail -5 "$T/err")"
fi
for h in "${H[@]}"; do emu_stop "${LOG[$h]%/journal}" || fail "the emulator of $h"; done

# ---- placement: three dual-A30 hosts (mdev: libvirt 9 assigns it), each with an embedded
# libvirt where the domains are defined; a1 full of A30-6C, so a2 is the first with room
A30=$SRC/tests/data/hosts/a30-dual-mdev
command -v virsh >/dev/null && command -v qemu-system-x86_64 >/dev/null || {
	echo "no virsh or qemu-system-x86_64: placement not tested"
	[ "$EMU_FAILS" = 0 ] || exit 1
	exit 0
}
domain() { # NAME UUID
	printf '<domain type="qemu"><name>%s</name><uuid>%s</uuid><memory unit="MiB">256</memory>' "$1" "$2"
	printf '<vcpu>2</vcpu><os><type arch="x86_64" machine="pc">hvm</type></os></domain>\n'
}
domain vm-a 11111111-2222-4333-8444-5555555555a1 >"$T/vm-a.xml"
domain vm-b 11111111-2222-4333-8444-5555555555b1 >"$T/vm-b.xml"
domain vm-c 11111111-2222-4333-8444-5555555555c1 >"$T/vm-c.xml"
A=(a1 a2 a3)
declare -A URI
pids=()
for h in "${A[@]}"; do
	emu_start "$A30"
	ROOT[$h]=$EMU_ROOT LOG[$h]=$EMU_LOG
	# a short root: QEMU's monitor socket lives below it (108-byte limit)
	r=$(mktemp -d /tmp/ve.XXXXXX)
	ROOTS+=("$r")
	mkdir "$r/etc"
	printf 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n' >"$r/etc/qemu.conf"
	URI[$h]="qemu:///embed?root=$r"
	# one virsh for all three (each start of the embedded driver takes seconds)
	virsh -q -c "${URI[$h]}" "define $T/vm-a.xml; define $T/vm-b.xml; define $T/vm-c.xml" \
		>"$T/define-$h" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "virsh define: $(cat "$T"/define-*)"; done
for i in 1 2 3 4; do # fill a1's time-sliced GPU; its MIG GPU takes no A30-6C
	domain "fill$i" "11111111-2222-4333-8444-55555555550$i" >"$T/fill$i.xml"
	v a1 assign --from "$T/fill$i.xml" -o "$T/fill$i.out.xml" --vgpu A30-6C 2>"$T/err" ||
		fail "filling a1: $(cat "$T/err")"
done
v a1 types --available | grep -q ' A30-6C ' && fail "a1 still has room: $(v a1 types --available)"
inventory a30.ini a1="${ROOT[a1]}" a2="${ROOT[a2]}" a3="${ROOT[a3]}"
for h in "${A[@]}"; do sed -i "s|^$h .*|& vgpuctl_connect=\"${URI[$h]}\"|" "$T/a30.ini"; done
owner() { v "$1" vgpus | awk -v d="$2" '$7 == d {print $5 "/" $NF}'; } # HOST DOMAIN: profile/state

# check mode: picks a2, assign --dry-run there, changes nothing
for h in "${A[@]}"; do : >"${LOG[$h]}"; done
play place-check -i a30.ini "$SITE" --tags place --check -e vm_name=vm-a -e vm_profile=A30-6C
[ "$RC" = 0 ] || { fail "placement in check mode: exit $RC"; show place-check; }
expect place-check changed=1 localhost
grep -qF "changed: [localhost -> a2]" "$T/place-check.out" ||
	{ fail "placement in check mode: not a2"; show place-check; }
for h in "${A[@]}"; do
	[ -z "$(writes "$h")" ] || fail "placement in check mode wrote on $h: $(writes "$h")"
done
# for real: a2, vm-a's vGPU there and nowhere else
play place -i a30.ini "$SITE" --tags place -e vm_name=vm-a -e vm_profile=A30-6C
[ "$RC" = 0 ] || { fail "placement: exit $RC"; show place; }
expect place changed=1 localhost
[ "$(owner a2 vm-a)" = A30-6C/active ] || { fail "vm-a not on a2: $(v a2 vgpus)"; show place; }
[ -z "$(owner a1 vm-a)$(owner a3 vm-a)" ] || fail "vm-a elsewhere too"
# again: it stays where it is
play place-again -i a30.ini "$SITE" --tags place -e vm_name=vm-a -e vm_profile=A30-6C
[ "$RC" = 0 ] || { fail "placement again: exit $RC"; show place-again; }
expect place-again changed=0 localhost
grep -q "vm-a already has a vGPU on a2" "$T/place-again.out" || { fail "placement again"; show place-again; }
# even where no host has room for the profile asked now
play place-again2 -i a30.ini "$SITE" --tags place -e vm_name=vm-a -e vm_profile=A30-1-6C
[ "$RC" = 0 ] || { fail "placement again, no room: exit $RC"; show place-again2; }
grep -q "vm-a already has a vGPU on a2" "$T/place-again2.out" || { fail "placement again, no room"; show place-again2; }
# a profile no host has room for (A30-1-6C: GPU instances of 2 slices only, or MIG mode
# off) fails, naming each host's reason, and changes nothing
play place-none -i a30.ini "$SITE" --tags place -e vm_name=vm-b -e vm_profile=A30-1-6C
[ "$RC" != 0 ] || fail "placement without room: exit 0"
expect place-none failed=1 localhost
grep -qF "No host of group 'hypervisors' has room for one more A30-1-6C vGPU, for vm-b (a1: 0000:3b:00.0 mig-mode-unknown, 0000:af:00.0 no-room-for-gpu-instance; a2:" \
	"$T/place-none.out" || { fail "placement without room: the message"; show place-none; }
[ -z "$(owner a1 vm-b)$(owner a2 vm-b)$(owner a3 vm-b)" ] || fail "vm-b placed somewhere"
# a2 full too: vm-c goes to a3
for i in 5 6 7; do
	domain "fill$i" "11111111-2222-4333-8444-55555555550$i" >"$T/fill$i.xml"
	v a2 assign --from "$T/fill$i.xml" -o "$T/fill$i.out.xml" --vgpu A30-6C 2>"$T/err" ||
		fail "filling a2: $(cat "$T/err")"
done
# the profile in lower case: vgpuctl takes any case, and so does the playbook
play place-c -i a30.ini "$SITE" --tags place -e vm_name=vm-c -e vm_profile=a30-6c
[ "$RC" = 0 ] || { fail "placement of vm-c: exit $RC"; show place-c; }
[ "$(owner a3 vm-c)" = A30-6C/active ] || { fail "vm-c not on a3: $(v a3 vgpus)"; show place-c; }
for h in "${A[@]}"; do emu_stop "${LOG[$h]%/journal}" || fail "the emulator of $h"; done

[ "$EMU_FAILS" = 0 ] || exit 1
