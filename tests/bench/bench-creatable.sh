#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-creatable.sh: `types` on a vendor-VFIO host whose VF lists 12,500,
# 25,000 and 50,000 types (ids in descending order, the worst case for a
# sorted insert), best of 3 runs each.  Prints the seconds and the ratio of
# each size to the smallest: linear work gives about 2 and 4, quadratic 4 and 16.
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$REPO/tests/data/hosts/vfio-ts-l40s" "$tmp/host"
list=$tmp/host/sys/devices/pci0000:c1/0000:c1:00.4/nvidia/creatable_vgpu_types
best() { # best wall time of 3 runs of types, in seconds
	local b=999 t
	for _ in 1 2 3; do
		/usr/bin/time -f %e -o "$tmp/t" "$VGPUCTL" --sysroot "$tmp/host" types >/dev/null 2>&1
		t=$(cat "$tmp/t")
		b=$(awk -v a="$b" -v c="$t" 'BEGIN { print (c < a ? c : a) }')
	done
	echo "$b"
}
base=
for n in 12500 25000 50000; do
	awk -v n=$n 'BEGIN { print "ID    : vGPU Name"; for (i = n; i > 0; i--) printf "%d : NVIDIA L40S-%dQ\n", 100000 + i, i % 48 + 1 }' >"$list"
	s=$(best)
	base=${base:-$s}
	awk -v n=$n -v s="$s" -v b="$base" 'BEGIN { printf "%6d types: %6.3f s  ratio to 12,500: %5.1f\n", n, s, (b > 0 ? s / b : 0) }'
done
