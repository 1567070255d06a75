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
# plan takes xml's options; assign and release the live ones too
"$bin" plan --help >"$tmp/plan" 2>&1
for o in $(opts_of "$src/src/cli/domain-args.c" | grep -v -x -e no-pin -e per-start -e dry-run -e output); do
	grep -q -- "--$o" "$tmp/plan" || { echo "FAIL: plan --help does not list --$o"; fail=1; }
done
"$bin" assign --help >"$tmp/assign" 2>&1
for o in no-pin per-start dry-run output; do
	grep -q -- "--$o" "$tmp/assign" || { echo "FAIL: assign --help does not list --$o"; fail=1; }
done
exit $fail
