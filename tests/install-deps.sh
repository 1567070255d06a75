#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what vgpuctl needs to build and test on Debian 12 (run as root).
#   install-deps.sh [--bench]   --bench adds the benchmark tools
# No system account gets new rights. The embedded QEMU driver
# of the libvirt tests runs guests as root through its own qemu.conf
# (tests/libvirt/embed.sh), so libvirt-qemu needs no access to /dev/kvm.
set -euo pipefail
pkgs=(meson ninja-build gcc pkg-config libvirt-dev libxml2-dev libyaml-dev libcmocka-dev
	# the fleet engines the tests drive: inventory schema, Ansible, Prometheus
	python3-jsonschema ansible-core prometheus
	# ansible-test sanity's linters, offline (tests/ansible/sanity.sh)
	python3-voluptuous pycodestyle pylint yamllint
	# tests/pkg/deb.sh: dpkg-buildpackage -us -uc -b and lintian
	dpkg-dev debhelper lintian
	libvirt-clients libxml2-utils libvirt-daemon-driver-qemu qemu-system-x86 python3
	# libvirtd (not libvirt-daemon-system: no users, no services) for the hook test
	libvirt-daemon
	clang clang-format shellcheck
	# tests/cli/completion.sh loads bash-completion's _init_completion
	bash-completion
	# tests/cli/output-file.sh: -o keeps ACLs and extended attributes
	acl attr
	# the kernel/driver emulator of tests/emu (FUSE); no group or setuid change is needed
	libfuse3-dev fuse3
	# systemd-analyze verify for the boot unit
	systemd
	# libFuzzer for clang 14 (libclang_rt.fuzzer*.a): the -Dfuzz=true build
	libclang-rt-14-dev)
if [ "${1:-}" = --bench ]; then pkgs+=(mdevctl hyperfine strace virtinst util-linux); fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi
# The QEMU driver resolves its compiled-in user libvirt-qemu before it reads
# qemu.conf ("Failed to parse user 'libvirt-qemu'" without it), as
# libvirt-daemon-system would create it: a locked system account, no groups.
getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
getent passwd libvirt-qemu >/dev/null ||
	useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
