#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# assign takes a GPU's framebuffer from the capacity model, not from the types
# its lists name now (e6d3122).  On vendor VFIO a GPU in use drops its larger
# types out of its lists: an H100 NVL (94 GB) holding two H100L-23C lists
# only H100L-23C, and without NVML or a stored catalogue assign took 23 GB
# for the whole GPU and said "available now: none" where the driver takes
# two more.  On the kernel emulator (tests/emu) the driver decides: the third
# and fourth H100L-23C are created, a fifth finds nothing to create it on.
#   framebuffer.sh VGPUCTL SRCDIR     (VGPU_EMU names the emulator)
# shellcheck disable=SC2119 # emu_writes takes no arguments here
set -uo pipefail
B=$1
SRC=$2
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
v() { "$B" --sysroot "$EMU_ROOT" "$@"; } # --sysroot: no NVML unless --nvml names one
dom() { # NAME N: a domain definition without vGPUs
	cat >"$W/$1.xml" <<XML
<domain type='kvm'>
  <name>$1</name>
  <uuid>$(printf '%08d-4444-4333-8444-555555555555' "$2")</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
XML
}
DEVS=sys/bus/pci/devices
held() { grep -lx 1302 "$EMU_ROOT/$DEVS/0000:4b:"*/nvidia/current_vgpu_type 2>/dev/null | wc -l; }
assign() { v assign --from "$W/$1.xml" -o "$W/$1.a.xml" --vgpu H100L-23C 2>"$W/err"; }

emu_start "$SRC/tests/data/hosts/vfio-ts-h100l"
W=$EMU_DIR
for i in 1 2 3 4 5; do dom "vm$i" "$i"; done
# two H100L-23C (the first assign keeps the whole type table as the catalogue):
# the free VFs now list H100L-23C alone; without that the rest says nothing
for i in 1 2; do
	assign "vm$i" || {
		fail "assign vm$i on a free GPU: $(cat "$W/err")"
		exit 1
	}
done
lists=$(grep -hv '^ID' "$EMU_ROOT/$DEVS/0000:4b:00.7/nvidia/creatable_vgpu_types")
if [ "$(held)" != 2 ] || [ "$lists" != "1302  : NVIDIA H100L-23C" ]; then
	fail "want two H100L-23C and a free VF listing H100L-23C alone: $(held) held; it lists: $lists"
	exit 1
fi
# the third and the fourth fit the 94 GB: the driver takes them.  No stored
# catalogue serves (a host that never kept one): the lists are all assign has
for i in 3 4; do
	rm -rf "$EMU_ROOT/var/lib/vgpuctl/catalog"
	emu_clear_journal
	assign "vm$i" || fail "assign vm$i beside $(held) H100L-23C (no NVML, no catalogue): $(cat "$W/err")"
	[ "$(emu_writes | grep -c 'current_vgpu_type 1302 -> 0$')" = 1 ] ||
		fail "assign vm$i: the driver did not create its vGPU: $(emu_writes)"
	grep -q 'managed="no"' "$W/vm$i.a.xml" 2>/dev/null || fail "assign vm$i: no hostdev in the definition"
done
[ "$(held)" = 4 ] || fail "four assigns made $(held) H100L-23C, not 4"
# a fifth does not fit: refused before any write
rm -rf "$EMU_ROOT/var/lib/vgpuctl/catalog"
emu_clear_journal
assign vm5 && fail "a fifth H100L-23C (115 GB on a 94 GB GPU) was assigned"
[ -z "$(emu_writes)" ] || fail "the fifth assign wrote: $(emu_writes)"
[ "$(held)" = 4 ] || fail "after the fifth assign $(held) H100L-23C, not 4"
emu_stop || fail "the emulator failed"
[ "$EMU_FAILS" = 0 ] && echo "ok: assign fills an H100 NVL with H100L-23C without NVML or a catalogue"
exit $((EMU_FAILS > 0))
