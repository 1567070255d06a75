#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what vgpuctl needs to build and test on Debian 12 (run as root).
#   install-deps.sh [--bench]   --bench adds the benchmark tools
set -euo pipefail
pkgs=(meson ninja-build gcc pkg-config libvirt-dev libxml2-dev libcmocka-dev
	libvirt-clients libxml2-utils libvirt-daemon-driver-qemu qemu-system-x86 python3 clang-format)
[ "${1:-}" = --bench ] && pkgs+=(mdevctl hyperfine strace virtinst util-linux)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi
# the embedded QEMU driver runs guests as libvirt-qemu, as the system daemon would
getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
getent passwd libvirt-qemu >/dev/null ||
	useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
# ...and, as Debian's libvirt-daemon-system sets it up, may open /dev/kvm. Without
# that, libvirt finds KVM "enabled when probing but not available now" and
# re-probes QEMU's capabilities (seconds each) on every lookup.
# The group is whichever owns /dev/kvm (it may have no name in a bare chroot).
if [ -c /dev/kvm ]; then
	gid=$(stat -c %g /dev/kvm)
	grp=$(getent group "$gid" | cut -d: -f1 || :) # getent exits 2 when there is none
	if [ -z "$grp" ]; then
		grp=kvm
		getent group kvm >/dev/null && grp=kvm-dev
		groupadd -r -g "$gid" "$grp"
	fi
	id -nG libvirt-qemu | grep -qw "$grp" || usermod -aG "$grp" libvirt-qemu
fi
