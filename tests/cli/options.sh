#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Options go anywhere, as in every getopt tool: after a command's arguments
# ("why PROFILE --gpu BDF"), the table options after the command as lsblk
# takes them ("gpus -n -r -o ADDRESS"), "--" ends the options; a mistyped
# option or profile gets the nearest one; a GPU is named by its address or
# by NVIDIA's index.
#   options.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
host=tests/data/hosts/a30-dual-mdev

# run WANT_EXIT ARGS...: stdout in $tmp/out, stderr in $tmp/err
run() {
	local want=$1
	shift
	"$bin" --sysroot "$host" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: vgpuctl $* -> exit $rc (want $want):"
		cat "$tmp/err"
		fail=1
	fi
}

# out WANT: stdout was exactly WANT
out() {
	if [ "$(cat "$tmp/out")" != "$1" ]; then
		echo "FAIL: printed [$(cat "$tmp/out")], want [$1]"
		fail=1
	fi
}

# err REGEX: stderr matches
err() {
	grep -Eq -- "$1" "$tmp/err" || { echo "FAIL: stderr [$(cat "$tmp/err")] !~ /$1/"; fail=1; }
}

# ---- options after the arguments
run 0 why A30-1-6C --gpu 0000:af:00.0 -n -r -o GPU,PROFILE
out "0000:af:00.0 A30-1-6C"
run 0 why --gpu 0000:af:00.0 A30-1-6C -n -r -o GPU
out "0000:af:00.0"
run 0 mig plan 2g.12gb --board A30 --json
grep -q '"board": "A30 24GB"' "$tmp/out" || { echo "FAIL: mig plan PROFILE --board"; fail=1; }
run 0 mig plan 1g.6gb --board=A30 1g.6gb
run 0 vfs 0000:af:00.0 -n -o ADDRESS
out "0000:af:00.4
0000:af:00.5
0000:af:00.6
0000:af:00.7"
run 0 mig show --json
# and before the sub-command
run 0 mig --json --board A30 plan 1g.6gb
grep -q '"board": "A30 24GB"' "$tmp/out" || { echo "FAIL: mig --json --board A30 plan"; fail=1; }
run 0 mig -n --gpu 1 show -r -o GPU
out "0000:af:00.0
0000:af:00.0"
# "--" ends the options: what follows is an argument, even "--json"
run 1 why --gpu 0000:af:00.0 -- --json
err "^vgpuctl: '--json': no GPU on this host offers such a vGPU type"
run 2 types -- --gpu
err "unexpected argument '--gpu'"

# ---- the table options after the command, short and long, as lsblk takes them
run 0 gpus -n -r -o ADDRESS
out "0000:3b:00.0
0000:af:00.0"
run 0 gpus -nro ADDRESS,NODE
out "0000:3b:00.0 0
0000:af:00.0 1"
run 0 types -o GPU,PROFILE,FB -b -n --gpu 0000:af:00.0 --available
grep -qx '0000:af:00.0 A30-2-12C 12884901888' "$tmp/out" ||
	{ echo "FAIL: types -o -b -n: $(cat "$tmp/out")"; fail=1; }
run 0 topology --noheadings --raw --output NODE,MEMORY
run 0 vgpus -J
run 0 inventory -n
# a command that prints no table refuses them, and says which do
run 2 -n xml --name x --vgpu A30-6C --vcpus 2 --memory 1G
err "xml prints no table"
# mig plan prints no table: -n is an option it does not know
run 2 mig plan -n --board A30 1g.6gb
err "unknown option '-n'"

run 2 gpus -o
err "^vgpuctl: option '-o' needs an argument$"
run 2 why A30-6C --gpu
err "^vgpuctl: option '--gpu' needs an argument$"

# ---- the nearest option or profile
run 2 types --jsno
err "^vgpuctl: unknown option '--jsno'; did you mean '--json'\?$"
run 2 gpus --noheadigns
err "did you mean '--noheadings'\?$"
run 2 why A30-1-6C --gpuu 0000:af:00.0
err "did you mean '--gpu'\?$"
run 1 why A30-6Q
err "^vgpuctl: 'A30-6Q': no GPU on this host offers such a vGPU type; did you mean 'A30-6C'\?$"
run 1 why a30-1-6cm
err "did you mean 'A30-1-6C'\?$"
run 1 why H100-80C
err "^vgpuctl: 'H100-80C': no GPU on this host offers such a vGPU type \(see 'vgpuctl types'\)$"

# ---- NVIDIA's index: the INDEX column, and --gpu INDEX as config devices: [1] takes it
run 0 gpus -r -o INDEX,ADDRESS
out "INDEX ADDRESS
0 0000:3b:00.0
1 0000:af:00.0"
run 0 why A30-1-6C --gpu 1 -n -r -o GPU
out "0000:af:00.0"
run 0 types --gpu 0 -n -r -o GPU --available
[ "$(sort -u "$tmp/out")" = 0000:3b:00.0 ] || { echo "FAIL: types --gpu 0: $(sort -u "$tmp/out")"; fail=1; }
run 0 vfs 1 -n -r -o GPU
[ "$(sort -u "$tmp/out")" = 0000:af:00.0 ] || { echo "FAIL: vfs 1: $(sort -u "$tmp/out")"; fail=1; }
run 0 mig show --gpu 1 -n -r -o GPU
run 1 types --gpu 2
err "^vgpuctl: --gpu '2': no such NVIDIA GPU"
exit $fail
