# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benchmarks: the repository root and the vgpuctl binary
# ($VGPUCTL, default build/src/vgpuctl under the repository root).
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VGPUCTL=${VGPUCTL:-build/src/vgpuctl}
case $VGPUCTL in /*) ;; *) VGPUCTL=$REPO/$VGPUCTL ;; esac
[ -x "$VGPUCTL" ] || { echo "$(basename "$0"): $VGPUCTL not built (meson setup build && ninja -C build)" >&2; exit 1; }
