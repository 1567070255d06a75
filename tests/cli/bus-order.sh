#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPUs are listed, and numbered for config indexes, in bus order: on an HGX
# host with buses 18 2a 3a 5d 9a ab ba db, version order put 18 after 9a and
# "devices: [0]" picked the wrong GPU.
#   bus-order.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tests/bench/mkboot.sh "$tmp/host" 8 >/dev/null || { echo "FAIL: mkboot.sh"; exit 1; }
got=$("$bin" --sysroot "$tmp/host" gpus | awk 'NR > 1 { printf "%s ", $1 }')
want="0000:18:00.0 0000:2a:00.0 0000:3a:00.0 0000:5d:00.0 0000:9a:00.0 0000:ab:00.0 0000:ba:00.0 0000:db:00.0 "
[[ $got == "$want" ]] || { echo "FAIL: gpus order: $got"; fail=1; }
printf '%s\n' "version: v1" "vgpu-configs:" "  first:" "    - devices: [0]" \
	'      vgpu-devices: {"H100-1-10C": 1}' >"$tmp/cfg.yaml"
tests/apply/fake-nv-boot "$tmp/host"
FAKE_NV_ROOT=$tmp/host "$bin" --sysroot "$tmp/host" apply --dry-run -f "$tmp/cfg.yaml" \
	--config first --nvidia-smi "$src/tests/apply/fake-nvidia-smi" \
	--sriov-manage "$src/tests/apply/fake-sriov-manage" >"$tmp/out" 2>&1
if ! grep -q "0000:18:00.0" "$tmp/out" || grep -q "0000:2a:00.0" "$tmp/out"; then
	echo "FAIL: devices: [0] is not the lowest bus:"
	cat "$tmp/out"
	fail=1
fi
exit $fail
