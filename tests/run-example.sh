#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh machine -> a ready-to-define libvirt domain for the bundled dual-socket
# A30 host: a 12-vCPU VM with an A30-6C vGPU, pinned to whole cores of the
# GPU's NUMA node, memory bound there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh >&2
[ -d build ] || meson setup build >&2
ninja -C build >&2
exec build/src/vgpuctl --sysroot tests/data/hosts/a30-dual-mdev \
	xml --template templates/domain.xml --name gpu-vm1 --vgpu A30-6C --vcpus 12 --memory 32G
