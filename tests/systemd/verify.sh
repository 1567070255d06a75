#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The boot unit passes systemd-analyze verify with no complaint at all (it
# exits 0 on unknown keys too: any output fails), and orders apply after
# the NVIDIA vGPU daemons and before libvirt.
#   verify.sh BUILT-UNIT VGPUCTL
set -euo pipefail
unit=$1 vgpuctl=$(realpath "$2")
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (tests/install-deps.sh)"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# ExecStart must name an executable: the built binary instead of the install path
sed "s|^ExecStart=[^ ]*/vgpuctl |ExecStart=$vgpuctl |" "$unit" >"$t/vgpuctl-apply@.service"
grep -q "^ExecStart=$vgpuctl apply -f /etc/vgpuctl/host.yaml --config %i$" "$t/vgpuctl-apply@.service" ||
	fail "ExecStart is not 'vgpuctl apply -f /etc/vgpuctl/host.yaml --config %i'"
check() { # FILE: output of verify, empty when the unit is clean
	cp "$1" "$t/vgpuctl-apply@default.service"
	(cd "$t" && systemd-analyze verify --man=no "$t/vgpuctl-apply@default.service" 2>&1) || echo "exit $?"
}
out=$(check "$t/vgpuctl-apply@.service")
[ -z "$out" ] || fail "systemd-analyze verify: $out"
# the check sees a bad unit (an unknown key prints a warning with exit 0)
sed 's/^RemainAfterExit=/RemainAfterExitt=/' "$t/vgpuctl-apply@.service" >"$t/bad"
[ -n "$(check "$t/bad")" ] || fail "verify did not notice an unknown key"
for want in "^After=.*nvidia-vgpu-mgr.service" "^After=.*nvidia-vgpud.service" \
	"^Before=.*libvirtd.service" "^Before=.*virtqemud.service" "^Before=.*libvirt-guests.service" \
	"^Type=oneshot$" "^RemainAfterExit=yes$" "^TimeoutStartSec="; do
	grep -q "$want" "$unit" || fail "the unit lacks $want"
done
# installed, never enabled: no unit may be linked into a .wants directory by meson
echo "ok: the boot unit verifies and is ordered between the vGPU Manager and libvirt"
