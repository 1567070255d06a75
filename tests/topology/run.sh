#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl topology over the real-machine sysfs dumps in ../shared/peer/topology-dumps
# (never copied into the repository; extracted to a temporary directory).
#   run.sh VGPUCTL SRCDIR [NAME-SUBSTRING...]   (VGPU_TOPOLOGY_DUMPS=DIR overrides the path)
# Exit 77 (skip) when the dumps are not there.
set -u
bin=$(realpath "$1") src=$2
shift 2
dumps=${VGPU_TOPOLOGY_DUMPS:-$src/../shared/peer/topology-dumps}
exec python3 "$src/tests/topology/check.py" "$bin" "$dumps" "$@"
