#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Random create/free sequences on the emulator, vgpuctl's `available` against what the
# emulated driver accepts after every step (sequences.py):
#   sequences.sh VGPUCTL SRCDIR [--seed N|random] [--steps N] [--budget SECONDS]
# (VGPU_EMU names the emulator binary; the options, VGPU_SEQ_HOSTS...: see sequences.py).
# Exit 77 (skip) where the emulator was not built or /dev/fuse cannot be used.
set -u
vgpuctl=${1:?usage: sequences.sh VGPUCTL SRCDIR}
src=$(realpath "${2:-.}")
# shellcheck source=tests/emu/lib.sh
. "$src/tests/emu/lib.sh"
if [ -z "${VGPU_EMU:-}" ]; then
	echo "SKIP: vgpu-emu was not built (no libfuse3)"
	exit 77
fi
if ! emu_available; then
	echo "SKIP: /dev/fuse is not usable here"
	exit 77
fi
exec python3 "$src/tests/emu/sequences.py" "$vgpuctl" "$src" "${@:3}"
