#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The committed fixture trees under tests/data/hosts/ must be exactly what
# tests/data/mkhosts.sh generates: regenerate them into a temporary directory
# and compare file contents, and symlinks as symlinks (their targets).
#   check-fixtures.sh SRCDIR
# The one difference allowed is an empty directory (such as an mdev type's
# devices/ with no instances): git cannot store one, so a checkout lacks what
# mkhosts.sh creates. Readers must treat a missing such directory as empty.
# After changing mkhosts.sh: tests/data/mkhosts.sh, then review 'git status'.
set -u
src=$1
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/data/mkhosts.sh "$tmp/hosts" >"$tmp/log" 2>&1 || {
	echo "FAIL: mkhosts.sh:"
	cat "$tmp/log"
	exit 1
}
cp tests/data/hosts/README.md "$tmp/hosts/" # documentation, not generated

# only_empty DIR: DIR holds nothing but (possibly nested) directories.
only_empty() { [ -d "$1" ] && [ -z "$(find "$1" ! -type d -print -quit)" ]; }

fail=0
diff -r --no-dereference tests/data/hosts "$tmp/hosts" >"$tmp/diff" 2>&1
while IFS= read -r line; do
	if [[ $line =~ ^Only\ in\ (.*):\ (.*)$ ]] && only_empty "${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"; then
		continue
	fi
	[ $fail = 1 ] || echo "FAIL: tests/data/hosts differs from what tests/data/mkhosts.sh makes ($tmp/hosts):"
	fail=1
	echo "$line"
done <"$tmp/diff"
exit $fail
