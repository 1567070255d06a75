#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/device/pack.sh BUILD PKG: vgpuctl of BUILD with its module, nvml-probe,
# every library `ldd` names and the loader, into PKG, for gpu-host.sh on a
# host that has none of our libraries (see gpu-host.sh); and diagnose's
# catalogue in PKG/share/vgpuctl, where vgpuctl run through PKG/lib's loader
# finds it (../share/vgpuctl beside /proc/self/exe).
set -euo pipefail
build=${1:?usage: pack.sh BUILD PKG}
pkg=${2:?usage: pack.sh BUILD PKG}
rm -rf "$pkg"
mkdir -p "$pkg/lib"
cp "$build/src/vgpuctl" "$build/tests/nvml/nvml-probe" "$pkg/"
cp "$build/src/vgpuctl-xml.so" "$pkg/lib/"
for f in "$build/src/vgpuctl" "$build/src/vgpuctl-xml.so" "$build/tests/nvml/nvml-probe"; do
	ldd "$f" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}'
done | sort -u | while read -r l; do cp -L "$l" "$pkg/lib/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$pkg/lib/"
mkdir -p "$pkg/share/vgpuctl"
cp "$build/data/catalogue.tsv" "$pkg/share/vgpuctl/"
du -sh "$pkg"
