#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One golden test per catalogue row: tests/diagnose/rows/ID.log holds the
# row's test lines (after '#' lines that say where they were taken from),
# put alone in a fixture's var/log/kern.log; vgpuctl diagnose's text for it
# is compared byte for byte with rows/ID.golden (VGPU_TEST_REGENERATE=1
# rewrites them), and every line must be reported as row ID.  A row without
# its .log or .golden, or a .log without a row, fails.  One line per row:
# "PASS: ID" or "FAIL: ID ...".
#   rows.sh VGPUCTL SRCDIR
set -u
shopt -s extglob
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
export TZ=UTC LC_ALL=C
dir=tests/diagnose/rows
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$tmp/root/var/log"
ids=$(awk -F '\t' '!/^#/ && NF { print $1 }' data/catalogue.tsv)
[ -n "$ids" ] || {
	echo "FAIL: no rows in data/catalogue.tsv"
	exit 1
}
for id in $ids; do
	log=$dir/$id.log
	if [ ! -f "$log" ]; then
		echo "FAIL: $id: no $log"
		fail=1
		continue
	fi
	# the row's lines (after its '#' lines), and how many (no fork per row but vgpuctl's and cmp's)
	n=0
	while IFS= read -r l; do
		[[ $l == \#* ]] && continue
		printf '%s\n' "$l"
		n=$((n + 1))
	done <"$log" >"$tmp/root/var/log/kern.log"
	"$bin" --sysroot "$tmp/root" diagnose >"$tmp/out" 2>&1
	echo "exit $?" >>"$tmp/out"
	bad=
	# each line reported once, as this row
	got=0 all=0
	while IFS= read -r l; do
		[[ $l == var/log/kern.log:+([0-9])\ \ * ]] || continue
		all=$((all + 1))
		[[ $l == *"  $id ("* ]] && got=$((got + 1))
	done <"$tmp/out"
	[ "$n" -gt 0 ] || bad="no test line"
	[ -z "$bad" ] && { [ "$got" != "$n" ] || [ "$all" != "$n" ]; } &&
		bad="$got of $n lines reported as $id ($all matched)"
	if [ -z "$bad" ] && [ "${VGPU_TEST_REGENERATE:-0}" != 1 ] && [ ! -f "$dir/$id.golden" ]; then
		bad="no $dir/$id.golden"
	fi
	if [ -z "$bad" ]; then
		was=$fail
		fail=0
		golden_cmp "$tmp/out" "$dir/$id.golden" "$id"
		[ $fail = 1 ] && bad="differs from $id.golden"
		fail=$((was | fail))
	fi
	if [ -n "$bad" ]; then
		echo "FAIL: $id: $bad"
		sed 's/^/  | /' "$tmp/out"
		fail=1
	else
		echo "PASS: $id"
	fi
done
# no case without its row
for f in "$dir"/*.log "$dir"/*.golden; do
	[ -e "$f" ] || continue
	id=$(basename "$f")
	id=${id%.*}
	grep -qx -- "$id" <<<"$ids" || {
		echo "FAIL: $f: no catalogue row '$id'"
		fail=1
	}
done
exit $fail
