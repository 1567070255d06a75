#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The example host config that ships (docs/examples/host.yaml, installed under
# the doc dir, walked through in vgpuctl(8) BOOT) is one vgpuctl takes: a dry
# run on the dual-A30 host it describes, just booted, plans what its comments
# say, and assert reports that host as drift (exit 3), not as an error.
#   examples.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$src/tests/data/hosts/a30-dual-mdev" "$tmp/host"
"$src/tests/apply/fake-nv-boot" "$tmp/host"
v() {
	FAKE_NV_ROOT=$tmp/host "$bin" --sysroot "$tmp/host" "$@" -f "$src/docs/examples/host.yaml" \
		--config a30-mixed --nvidia-smi "$src/tests/apply/fake-nvidia-smi" \
		--sriov-manage "$src/tests/apply/fake-sriov-manage"
}
v apply --dry-run >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: dry run: $(cat "$tmp/err")"; fail=1; }
for want in "fake-nvidia-smi -i 0000:af:00.0 -mig 1" "fake-nvidia-smi mig -i 0000:af:00.0 -cgi 5,14,14 -C" \
	"create 4 vGPUs of A30-6C on GPU 0000:3b:00.0" "create 1 vGPUs of A30-2-12C on GPU 0000:af:00.0" \
	"create 2 vGPUs of A30-1-6C on GPU 0000:af:00.0" \
	"write: the vGPU scheduler (RmPVMRL) > /etc/modprobe.d/vgpuctl-scheduler.conf"; do
	grep -qF -- "$want" "$tmp/out" || { echo "FAIL: dry run lacks '$want':"; cat "$tmp/out"; fail=1; }
done
RC=0
v assert >"$tmp/out" 2>&1 || RC=$?
[[ $RC == 3 ]] || { echo "FAIL: assert on the booted host: exit $RC (want 3, drift)"; fail=1; }
exit $fail
