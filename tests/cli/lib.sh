# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the CLI tests (sourced).

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
