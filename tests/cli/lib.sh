# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the CLI tests (sourced).

# tree_copy SRC DST: a copy of a fixture tree, hard links where DST is on the
# fixtures' file system (a copy costs ~2 s on a busy machine), else a real
# copy (CI puts the temporaries on tmpfs).  Hard links only suit tests that
# replace files (write a new one, rename) and never write through one.
tree_copy() {
	cp -al "$1" "$2" 2>/dev/null || {
		rm -rf "$2"
		cp -a "$1" "$2"
	}
}

# golden_cmp GOT WANT LABEL: byte-for-byte comparison with a golden file, or
# rewrite it under VGPU_TEST_REGENERATE=1 (review the diff). Sets fail=1.
# shellcheck disable=SC2034 # fail is the sourcing script's
golden_cmp() {
	if [ "${VGPU_TEST_REGENERATE:-0}" = 1 ]; then
		cp "$1" "$2"
	elif ! cmp -s "$1" "$2"; then
		echo "FAIL: $3 ($2)"
		diff -u "$2" "$1" | head -40
		fail=1
	fi
}
