# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Sourced by the benchmarks: the repository root and the vgpuctl binary
# ($VGPUCTL, default build/src/vgpuctl under the repository root).
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VGPUCTL=${VGPUCTL:-build/src/vgpuctl}
case $VGPUCTL in /*) ;; *) VGPUCTL=$REPO/$VGPUCTL ;; esac
[ -x "$VGPUCTL" ] || { echo "$(basename "$0"): $VGPUCTL not built (meson setup build && ninja -C build)" >&2; exit 1; }
# hf_stat JSON FIELD: print FIELD (mean/stddev, seconds) of each result.
hf_stat() {
	if command -v jq >/dev/null 2>&1; then
		jq -r ".results[].$2" "$1"
	else
		sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1"
	fi
}
