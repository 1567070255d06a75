#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exit codes and one-line errors for bad input: errors.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect() { # WANT_EXIT STDERR_REGEX ARGS... ("" = stderr must be empty)
	local want=$1 re=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	local ok=1
	if [ -z "$re" ]; then [ -s "$tmp/err" ] && ok=0; else grep -Eq -- "$re" "$tmp/err" || ok=0; fi
	if [ "$rc" != "$want" ] || [ $ok = 0 ]; then
		echo "FAIL: vgpuctl $* -> exit $rc (want $want), stderr:"
		cat "$tmp/err"
		fail=1
	fi
}

: >"$tmp/file"
expect 1 "^vgpuctl: sysroot '$tmp/file' is not a directory$" --sysroot "$tmp/file" gpus
expect 1 "^vgpuctl: cannot open sysroot '$tmp/nope': No such file or directory$" --sysroot "$tmp/nope" gpus
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "Try 'vgpuctl types --help'" types --bogus
expect 2 "unexpected argument 'extra'" gpus extra
expect 2 "Usage: vgpuctl" --sysroot tests/data/hosts/t4-legacy
expect 1 "^vgpuctl: --gpu '0000:99:00.0': no such NVIDIA GPU" --sysroot tests/data/hosts/a30-dual-mdev types --gpu 0000:99:00.0
expect 1 "^vgpuctl: GPU 'zz' not found" --sysroot tests/data/hosts/a30-dual-mdev vfs zz
# an empty root (a mistyped path) is an error naming it, not a host without GPUs
mkdir "$tmp/empty"
for c in gpus vfs types vgpus "mig show" inventory; do
	# shellcheck disable=SC2086 # "mig show" is two words
	expect 1 "^vgpuctl: --sysroot '$tmp/empty': no sys/bus/pci below it: not a host's root$" \
		--sysroot "$tmp/empty" $c
done
# an empty --sysroot is a mistake, not the real host
expect 1 "^vgpuctl: --sysroot '': an empty root is not a directory$" --sysroot '' gpus
# a host without GPUs: an empty GPU list per node, and xml says why it cannot plan
ng=$tmp/nogpu/sys/devices/system
mkdir -p "$ng/node/node0" "$ng/cpu/cpu0/topology" "$ng/cpu/cpu1/topology"
echo 0 >"$ng/node/online"
echo 0-1 >"$ng/node/node0/cpulist"
echo 0-1 >"$ng/cpu/online"
echo 0 >"$ng/cpu/cpu0/topology/thread_siblings_list"
echo 1 >"$ng/cpu/cpu1/topology/thread_siblings_list"
"$bin" --sysroot "$tmp/nogpu" --json topology >"$tmp/out" 2>&1
grep -q '"gpus": \[\],' "$tmp/out" || { echo "FAIL: node without GPUs:"; cat "$tmp/out"; fail=1; }
expect 1 "^vgpuctl: this host offers no NVIDIA vGPU types \(0 NVIDIA GPUs; see 'vgpuctl gpus' and 'vgpuctl types'\)$" \
	--sysroot "$tmp/nogpu" xml --template templates/domain.xml --name x --vgpu A30-6C --vcpus 1 --memory 1G

# a vendor-VFIO GPU with no free capacity lists no types at all; the VF in use is
# still named from the other L40S's catalogue
cp -a tests/data/hosts/vfio-ts-l40s "$tmp/full"
for f in "$tmp"/full/sys/devices/pci0000:41/0000:41:*/nvidia/creatable_vgpu_types; do : >"$f"; done
"$bin" --sysroot "$tmp/full" --json vfs 0000:41:00.0 >"$tmp/out" 2>&1
grep -A10 '"address": "0000:41:00.5"' "$tmp/out" | grep -q '"profile": "L40S-4Q"' ||
	{ echo "FAIL: in-use VF of a full GPU not named:"; cat "$tmp/out"; fail=1; }

# SR-IOV VFs off: vfs and types have nothing to list, and say why in one line
cp -a tests/data/hosts/a30-dual-mdev "$tmp/off"
for g in 3b af; do
	rm -f "$tmp/off/sys/devices/pci0000:$g/0000:$g:00.0/"virtfn*
	echo 0 >"$tmp/off/sys/devices/pci0000:$g/0000:$g:00.0/sriov_numvfs"
	rm -rf "$tmp/off/sys/devices/pci0000:$g/0000:$g:00."[4-7] "$tmp/off/sys/bus/pci/devices/0000:$g:00."[4-7]
done
hint="^vgpuctl: hint: SR-IOV VFs are off on GPU"
for c in vfs types inventory; do
	expect 0 "$hint 0000:3b:00.0, 0000:af:00.0: no VFs and no vGPU types to list; .*'sriov-manage -e ALL'$" \
		--sysroot "$tmp/off" $c
	[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: $c with VFs off: $(cat "$tmp/err")"; fail=1; }
done
expect 0 "$hint 0000:af:00.0: .*'sriov-manage -e 0000:af:00.0'$" --sysroot "$tmp/off" types --gpu 1
expect 0 "$hint 0000:af:00.0: " --sysroot "$tmp/off" vfs 0000:af:00.0
# ... and no hint where the VFs are on
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev types

# nvidia-smi style addresses are accepted
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev vfs 00000000:AF:00.0
[ "$(wc -l <"$tmp/out")" = 5 ] || { echo "FAIL: vfs 00000000:AF:00.0 lists $(wc -l <"$tmp/out") lines"; fail=1; }

# a host without NVIDIA GPUs: every GPU listing says so on stderr (as nvidia-smi's
# "No devices were found"), prints an empty listing and exits 0
mkdir -p "$tmp/nogpu/sys/bus/pci/devices" "$tmp/nogpu/sys/devices/system/cpu"
echo 0 >"$tmp/nogpu/sys/devices/system/cpu/online"
for c in gpus vfs types vgpus "mig show"; do
	# shellcheck disable=SC2086 # "mig show" is two words
	expect 0 "^vgpuctl: no NVIDIA GPU found$" --sysroot "$tmp/nogpu" $c
	[ -s "$tmp/out" ] && { echo "FAIL: $c on a host without GPUs printed: $(cat "$tmp/out")"; fail=1; }
done
# ... and a config that selects nothing there is an error naming the line, not "matches"
printf '%s\n' "version: v1" "vgpu-configs:" "  x:" "    - devices: all" \
	'      vgpu-devices: {"A30-6C": 1}' >"$tmp/cfg.yaml"
expect 1 "^vgpuctl: assert: $tmp/cfg.yaml:4: config 'x' selects no NVIDIA GPU of this host \(0 found\)$" \
	--sysroot "$tmp/nogpu" assert -f "$tmp/cfg.yaml" --config x
expect 1 "selects no NVIDIA GPU of this host \(0 found\)$" \
	--sysroot "$tmp/nogpu" apply -f "$tmp/cfg.yaml" --config x
# profiles in any case: NVIDIA writes them upper case, a hand types them lower
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev why a30-6c
grep -q "^0000:3b:00.0 A30-6C *4" "$tmp/out" || { echo "FAIL: why a30-6c: $(cat "$tmp/out")"; fail=1; }
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev plan --name x --vgpu a30-6c --vcpus 2 --memory 1G

# -c before the command, as virsh takes it: the URI is the command's connection
expect 1 "^vgpuctl: cannot connect to 'test:///nonexistent'" \
	--sysroot tests/data/hosts/a30-dual-mdev -c test:///nonexistent plan --name x --vgpu A30-6C \
	--vcpus 2 --memory 1G
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev --connect test:///default plan --name x \
	--vgpu A30-6C --vcpus 2 --memory 1G
# a bare --memory number is MiB, and a tiny one is almost certainly a typo
expect 0 "^vgpuctl: warning: --memory '8' is 8 MiB \(a bare number is MiB\); .*did you mean 8G\?$" \
	--sysroot tests/data/hosts/a30-dual-mdev plan --name x --vgpu A30-6C --vcpus 2 --memory 8

# xml/plan --from take the vCPU count from the file, as assign --from does
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev plan --from tests/data/domains/plain.xml --vgpu A30-6C
grep -q "^CPUs: .*(2 vCPUs" "$tmp/out" || { echo "FAIL: plan --from: $(cat "$tmp/out")"; fail=1; }
expect 2 "^vgpuctl: --vcpus N is required \(or --from DOMAIN.xml\)$" \
	--sysroot tests/data/hosts/a30-dual-mdev xml --name x --vgpu A30-6C --memory 1G

# a GPU without SR-IOV is its own parent: plan does not call it a VF, nor "free"
expect 0 "" --sysroot tests/data/hosts/t4-legacy plan --name x --vgpu T4-4Q --vcpus 2 --memory 1G
if ! grep -q "^vGPU 1: T4-4Q (type 232, time-sliced, mdev) on GPU 0000:5e:00.0 itself$" "$tmp/out" ||
	! grep -q "^Why: GPU 0000:5e:00.0 (no SR-IOV: the GPU itself is the mdev parent; vGPUs on it now: 1) offers T4-4Q" "$tmp/out"; then
	echo "FAIL: plan on the T4: $(cat "$tmp/out")"
	fail=1
fi

# util-linux's table options: -o columns by header (any case, in that order),
# -n no header, -r raw (one space, blanks escaped, '-' for none); JSON is unchanged
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev -o gpu,Profile,AVAILABLE types
[ "$(head -2 "$tmp/out")" = "GPU          PROFILE    AVAILABLE
0000:3b:00.0 A30-4C             4" ] || { echo "FAIL: -o: $(head -2 "$tmp/out")"; fail=1; }
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev -n -r types --gpu 0000:af:00.0
[ "$(head -1 "$tmp/out")" = "0000:af:00.0 683 NVIDIA\x20A30-4C A30-4C time-sliced - - 4G C - 6 0" ] ||
	{ echo "FAIL: -n -r: $(head -1 "$tmp/out")"; fail=1; }
expect 0 "" --sysroot tests/data/hosts/a30-dual-mdev gpus --noheadings --output=ADDRESS
[ "$(cat "$tmp/out")" = "0000:3b:00.0
0000:af:00.0" ] || { echo "FAIL: --noheadings --output=: $(cat "$tmp/out")"; fail=1; }
expect 2 "^vgpuctl: --output: no column 'NOPE' here \(columns: ADDRESS,INDEX,MODEL," \
	--sysroot tests/data/hosts/a30-dual-mdev -o ADDRESS,NOPE gpus

# typos get the nearest command or option, with one "vgpuctl:" prefix (opterr off)
expect 2 "^vgpuctl: unknown command 'tpyes'; did you mean 'types'\?$" tpyes
expect 2 "^vgpuctl: unknown option '--vpgu'; did you mean '--vgpu'\?$" \
	--sysroot tests/data/hosts/a30-dual-mdev xml --vpgu A30-6C
expect 2 "^vgpuctl: option '--gpu' needs an argument$" --sysroot tests/data/hosts/a30-dual-mdev types --gpu
expect 2 "^vgpuctl: unknown option '--bogus'$" --bogus gpus
grep -q "^types: \|unrecognized" "$tmp/err" && { echo "FAIL: getopt's own message: $(cat "$tmp/err")"; fail=1; }
# vgpuctl help COMMAND, as git and virsh take it
expect 0 "" help types
grep -q "^Usage: vgpuctl \[global options\] types " "$tmp/out" || { echo "FAIL: help types: $(cat "$tmp/out")"; fail=1; }
expect 2 "^vgpuctl: help: unknown command 'nope'$" help nope

# a closed pipe ends the program quietly
set -o pipefail
out=$("$bin" --sysroot tests/data/hosts/a30-dual-mdev types --per-vf 2>"$tmp/err" | head -1)
[ -s "$tmp/err" ] && { echo "FAIL: closed pipe printed:"; cat "$tmp/err"; fail=1; }
case $out in GPU*) ;; *) echo "FAIL: head -1 got '$out'"; fail=1 ;; esac

# nothing in the inventory writes to the host
before=$(find tests/data/hosts -newer "$tmp/file" | wc -l)
for c in gpus vfs types topology; do "$bin" --sysroot tests/data/hosts/malformed $c >/dev/null 2>&1; done
after=$(find tests/data/hosts -newer "$tmp/file" | wc -l)
[ "$before" = "$after" ] || { echo "FAIL: the fixture tree changed"; fail=1; }
exit $fail
