#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh machine -> `vgpuctl apply` and NVML tried on a bundled host, with no GPU:
# a copy of tests/data/hosts/vfio-mig-h100 (vendor-specific VFIO H100 with MIG)
# just booted (tests/apply/fake-nv-boot: VFs off, MIG off, no GPU instance),
# NVIDIA's tools played by the test stand-ins (tests/apply/fake-nvidia-smi,
# fake-sriov-manage) and NVML by tests/nvml's stand-in libnvidia-ml.so.1, all
# acting on the copy.  It applies a host config (MIG mode on, four GPU
# instances placed by NVML, three MIG-backed vGPUs), asserts it, and shows the
# GPU as NVML sees it.  Nothing outside the temporary copy is changed.
#   try-apply.sh            install the dependencies, build in build/, run
#   try-apply.sh BUILDDIR   run with what BUILDDIR holds (the test suite's way)
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# == 0)); then
	bash tests/install-deps.sh >&2
	[ -d build ] || meson setup build >&2
	ninja -C build >&2
	set -- build
fi
b=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a tests/data/hosts/vfio-mig-h100 "$tmp/host"
tests/apply/fake-nv-boot "$tmp/host"
cat >"$tmp/host.yaml" <<'EOF'
version: v1
mig-configs:
  mixed:
    - devices: ["0000:ca:00.0"]
      mig-enabled: yes
      mig-devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
vgpu-configs:
  mixed:
    - devices: ["0000:ca:00.0"]
      vgpu-devices: {"H100-3-40C": 1, "H100-1-10C": 2}
EOF
export FAKE_NV_ROOT=$tmp/host # where the stand-ins act
v() {
	echo "\$ vgpuctl $*"
	"$b/src/vgpuctl" --sysroot "$tmp/host" --nvml "$b/tests/nvml/libnvidia-ml.so.1" "$@"
}
tools=(--nvidia-smi tests/apply/fake-nvidia-smi --sriov-manage tests/apply/fake-sriov-manage)
v apply --dry-run -f "$tmp/host.yaml" --config mixed "${tools[@]}"
v apply -f "$tmp/host.yaml" --config mixed "${tools[@]}"
v assert -f "$tmp/host.yaml" --config mixed "${tools[@]}"
v gpus
v mig show
v -o GPU,PROFILE,GI,MAX,AVAILABLE types --available
