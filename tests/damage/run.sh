#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Damaged-host suite: every file kind vgpuctl reads, on every fixture host (except
# 'malformed'), under every kind of damage; see damage.py for what is asserted.
#   run.sh VGPUCTL SRCDIR [-v] [FILTER...]   (VGPU_TEST_JOBS=N sets the parallelism)
set -u
bin=$(realpath "$1") src=$(realpath "$2")
shift 2
exec python3 "$src/tests/damage/damage.py" "$bin" "$src" "$@"
