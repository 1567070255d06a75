#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A create the emulated driver refuses with EIO and its NVRM line
# ("Failed to add vgpu create request: 0x38", tests/emu nvrm=, a record of the
# tree's kernel log stream dev/kmsg): assign fails with the write's error,
# then a cause: line (the row, the decoded status, dev/kmsg) and a next: line.
# An older NVRM line of var/log/kern.log is not blamed, and an EIO the driver
# logged nothing for adds no cause.
#   eio.sh VGPUCTL SRCDIR
set -uo pipefail
B=$(realpath "$1")
SRC=$2
export TZ=UTC
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_available || {
	echo "no usable /dev/fuse: skipped"
	exit 77
}
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
v() { "$B" --sysroot "$EMU_ROOT" "$@"; }

emu_start "$SRC/tests/data/hosts/vfio-ts-l40s"
W=$EMU_DIR
cat >"$W/d.xml" <<XML
<domain type='qemu'>
  <name>vm1</name>
  <uuid>11111111-2222-4333-8444-555555555555</uuid>
  <memory unit='MiB'>1024</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
</domain>
XML
mkdir -p "$EMU_BACKING/var/log"
# a day-old refusal: outside the seconds of this write
echo "$(date -d yesterday '+%b %e %H:%M:%S') host kernel: NVRM: Failed to add vgpu create request: 0x1a" \
	>"$EMU_BACKING/var/log/kern.log"

# an EIO the driver logged nothing for: the error alone
emu_fault 'fail write sys/devices/*/nvidia/current_vgpu_type EIO count=1'
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q 2>"$W/err" && fail "assign passed a failed create"
grep -q "Input/output error" "$W/err" || fail "no EIO said: $(cat "$W/err")"
grep -q "cause:" "$W/err" && fail "a cause without a driver line: $(cat "$W/err")"

# the driver's line: cause and next step, its status decoded
emu_fault 'fail write sys/devices/*/nvidia/current_vgpu_type EIO count=1 nvrm=0x38'
v assign --from "$W/d.xml" -o "$W/a.xml" --vgpu L40S-8Q 2>"$W/err" && fail "assign passed a failed create"
grep -q "^vgpuctl: .*Input/output error" "$W/err" || fail "no EIO said: $(cat "$W/err")"
grep -q "^vgpuctl: cause: the driver refused the create .*; status 0x38: INVALID_OPERATION (dev/kmsg:1: add-vgpu-request)$" "$W/err" ||
	fail "no cause line: $(cat "$W/err")"
grep -q "^vgpuctl: next: re-create the GPU instances after enabling the VFs" "$W/err" ||
	fail "no next line: $(cat "$W/err")"
grep -q "^3,[0-9]*,[0-9]*,-;NVRM: Failed to add vgpu create request: 0x38$" "$EMU_BACKING/dev/kmsg" ||
	fail "no dev/kmsg record: $(cat "$EMU_BACKING/dev/kmsg")"
# the stream reads as the kernel's does: a record per read, EINVAL for a short buffer, EAGAIN at the end
python3 -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
try:
    os.read(fd, 8)
    sys.exit("a short read did not fail")
except OSError as e:
    assert e.errno == errno.EINVAL, e
r = os.read(fd, 8192)
assert r.startswith(b"3,") and r.endswith(b": 0x38\n") and r.count(b"\n") == 1, r
try:
    os.read(fd, 8192)
    sys.exit("no EAGAIN at the end")
except BlockingIOError:
    pass' "$EMU_ROOT/dev/kmsg" || fail "dev/kmsg does not read as a kernel log stream"
# and diagnose of the host tells the same story (the line names no vGPU: no object joins it);
# its time is the record's boot-relative one made a wall-clock time
v diagnose --since 10m --json >"$W/out" 2>&1 || fail "diagnose: $(cat "$W/out")"
python3 -c 'import json, sys, time
d = json.load(open(sys.argv[1]))
v = d["verdict"]
assert v["row"] == "add-vgpu-request" and v["log"] == "dev/kmsg", v
assert abs(v["time"] - time.time()) < 60, v
assert [e["log"] for e in d["timeline"]] == ["dev/kmsg"], d["timeline"]' "$W/out" || fail "diagnose: $(cat "$W/out")"
emu_stop
exit $((fails > 0))
