#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Each command's --help lists every option it takes, one line each, as
# util-linux's do; "vgpuctl help COMMAND" prints the same.  The option
# names are read from the commands' getopt tables in src/cli/, so a new
# option without a help line fails here.
#   help.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the long options of the getopt table(s) in FILE... ("help" and "json" are everywhere)
opts_of() { grep -ho '{ "[a-z-]*", \(required\|no\)_argument' "$@" | cut -d'"' -f2 | sort -u; }

check() { # COMMAND EXCLUDED FILE... (EXCLUDED: options of the table the command refuses)
	local cmd=$1 skip=" $2 " o
	shift 2
	"$bin" "$cmd" --help >"$tmp/help" 2>&1 || { echo "FAIL: $cmd --help exit $?"; fail=1; }
	"$bin" help "$cmd" >"$tmp/help2" 2>&1
	cmp -s "$tmp/help" "$tmp/help2" || { echo "FAIL: help $cmd differs from $cmd --help"; fail=1; }
	for o in $(opts_of "$@"); do
		[[ $skip == *" $o "* ]] && continue
		grep -Eq -- "^ +(-[a-zA-Z], )?(plan |show )?--$o( |$)" "$tmp/help" ||
			{ echo "FAIL: $cmd --help does not list --$o"; fail=1; }
	done
}
check types "" "$src/src/cli/cmd-types.c"
check why "" "$src/src/cli/cmd-why.c"
# xml shares the table of assign/release, whose live options it refuses
check xml "no-pin per-start dry-run output" "$src/src/cli/domain-args.c"
check apply "" "$src/src/cli/cmd-apply.c"
check assert "dry-run" "$src/src/cli/cmd-apply.c"
check mig "" "$src/src/cli/cmd-mig.c" "$src/src/cli/cmd-mig-show.c"
check migrate "" "$src/src/cli/cmd-migrate-run.c"
check fabric "" "$src/src/cli/cmd-fabric.c"
check nccl-topo "" "$src/src/cli/cmd-nccl-topo.c"
# plan takes xml's options; assign and release the live ones too
"$bin" plan --help >"$tmp/plan" 2>&1
for o in $(opts_of "$src/src/cli/domain-args.c" | grep -v -x -e no-pin -e per-start -e dry-run -e output); do
	grep -q -- "--$o" "$tmp/plan" || { echo "FAIL: plan --help does not list --$o"; fail=1; }
done
"$bin" assign --help >"$tmp/assign" 2>&1
for o in no-pin per-start dry-run output; do
	grep -q -- "--$o" "$tmp/assign" || { echo "FAIL: assign --help does not list --$o"; fail=1; }
done
# a listing's --help names each of its columns with a description, as lsblk --help
# does; the columns are those -o says it has (its error lists them)
host=$src/tests/data/hosts/a30-dual-mdev
for cmd in gpus vfs types topology why vgpus "mig show"; do
	args=$cmd
	[ "$cmd" = why ] && args="why A30-6C"
	# shellcheck disable=SC2086 # "mig show" is two words
	cols=$("$bin" --sysroot "$host" -o NOPE $args 2>&1 >/dev/null | sed -n 's/.*(columns: \(.*\))$/\1/p')
	[ -n "$cols" ] || { echo "FAIL: $cmd -o NOPE lists no columns"; fail=1; }
	# shellcheck disable=SC2086
	"$bin" $cmd --help >"$tmp/help" 2>&1
	for col in ${cols//,/ }; do
		grep -Eq "^  $col +[^ ]" "$tmp/help" ||
			{ echo "FAIL: $cmd --help does not describe column $col"; fail=1; }
	done
	# and the table options, after the command
	for o in -o -n -r -b; do
		grep -Eq -- "^  $o, --" "$tmp/help" || { echo "FAIL: $cmd --help does not list $o"; fail=1; }
	done
done
# where -o is a file (assign, release), the help says so
for cmd in assign release; do
	"$bin" help $cmd | grep -A1 -- "-o, --output OUT" | grep -q "not table columns" ||
		{ echo "FAIL: $cmd --help: -o is not said to be a file"; fail=1; }
done
# every command of main.c's table answers --help itself (CLI_HELP, cli.h):
# its usage on stdout, nothing on stderr, exit 0 -- the hook included
while read -r cmd; do
	rc=0
	"$bin" "$cmd" --help >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [[ $rc != 0 || -s $tmp/err ]] || ! grep -q "^Usage: vgpuctl \[global options\] $cmd" "$tmp/out"; then
		echo "FAIL: $cmd --help: exit $rc, stderr '$(cat "$tmp/err")'"
		fail=1
	fi
done < <(grep -o '^	{ "[a-z-]*", ' "$src/src/cli/main.c" | cut -d'"' -f2)
exit $fail
