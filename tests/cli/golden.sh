#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run every inventory command on every fixture host and compare stdout (text
# and JSON) and stderr byte for byte with tests/data/expected/<host>/.
# VGPU_TEST_REGENERATE=1 rewrites the goldens; review the diff.
#   golden.sh VGPUCTL SRCDIR HOST
set -u
bin=$(realpath "$1") src=$2 host=$3
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/$host
root=tests/data/hosts/$host
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$exp"

check() { # NAME ARGS...
	local name=$1
	shift
	"$bin" --sysroot "$root" "$@" >"$tmp/out" 2>"$tmp/err"
	echo "exit $?" >>"$tmp/err"
	for kind in out err; do
		local ext=$kind
		[ "$kind" = out ] && { case " $* " in *" --json "*) ext=json ;; *) ext=txt ;; esac; }
		golden_cmp "$tmp/$kind" "$exp/$name.$ext" "vgpuctl --sysroot $root $*"
	done
}

for json in "" --json; do
	sfx=${json:+-json}
	check "gpus$sfx" $json gpus
	check "vfs$sfx" $json vfs
	check "types$sfx" $json types
	check "types-per-vf$sfx" $json types --per-vf
	check "types-available$sfx" $json types --per-vf --available
	check "topology$sfx" $json topology
done
# JSON must parse, with one top-level array named after the command
if command -v python3 >/dev/null; then
	for f in "$exp"/*-json.json; do
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==1 and isinstance(list(d.values())[0], list)' "$f" ||
			{ echo "FAIL: $f is not one JSON array"; fail=1; }
	done
fi
exit $fail
