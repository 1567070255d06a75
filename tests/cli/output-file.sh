#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -o OUT replaces only a regular file, keeping its mode and owner; a symlink
# is followed; a FIFO or a device is written through and stays what it is; a
# FIFO nobody reads fails at once; a directory is refused.  release --from
# on a domain without vGPUs writes the domain and touches no vGPU.
#   output-file.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
release() { # OUT: release --from plain.xml -o OUT
	timeout 20 "$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml -o "$1" \
		>"$tmp/out" 2>"$tmp/err"
}
bad() {
	echo "FAIL: $*"
	cat "$tmp/err"
	fail=1
}

# a regular file: replaced, its 0600 mode and owner kept
echo secret >"$tmp/vm.xml"
chmod 0600 "$tmp/vm.xml"
release "$tmp/vm.xml" || bad "regular file"
[ "$(stat -c %a "$tmp/vm.xml")" = 600 ] || bad "mode not kept: $(stat -c %a "$tmp/vm.xml")"
grep -q "<name>plain</name>" "$tmp/vm.xml" || bad "regular file not written"
# a new file: created (0644 less the umask)
if ! release "$tmp/new.xml" || [ ! -f "$tmp/new.xml" ]; then bad "new file"; fi
# --from X -o X: an ordinary in-place edit
cp tests/data/domains/plain.xml "$tmp/same.xml"
timeout 20 "$bin" --sysroot "$tmp/host" release --from "$tmp/same.xml" -o "$tmp/same.xml" \
	2>"$tmp/err" || bad "in place"
grep -q "<name>plain</name>" "$tmp/same.xml" || bad "in-place edit lost the domain"
# a symlink: followed, the link stays a link
echo old >"$tmp/target.xml"
ln -s target.xml "$tmp/link.xml"
release "$tmp/link.xml" || bad "symlink"
[ -L "$tmp/link.xml" ] || bad "the symlink was replaced by a file"
grep -q "<name>plain</name>" "$tmp/target.xml" || bad "the symlink's target was not written"
# a FIFO with a reader: written through, still a FIFO
mkfifo "$tmp/fifo"
timeout 20 cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
sleep 0.2
release "$tmp/fifo" || bad "FIFO with a reader"
wait $reader
[ -p "$tmp/fifo" ] || bad "the FIFO was replaced"
grep -q "<name>plain</name>" "$tmp/fifo.out" || bad "the FIFO's reader got nothing"
# a FIFO nobody reads: fails at once, does not hang
if release "$tmp/fifo"; then bad "FIFO without a reader accepted"; fi
grep -q "^vgpuctl: release plain: cannot write '$tmp/fifo': nothing reads from it$" "$tmp/err" ||
	bad "FIFO without a reader: message"
[ -p "$tmp/fifo" ] || bad "the FIFO was replaced after a failure"
# a character device (as root): written through, still a device
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
	release "$tmp/null" || bad "character device"
	[ -c "$tmp/null" ] || bad "the device node was replaced by a file"
fi
# a directory: refused
mkdir "$tmp/dir"
if release "$tmp/dir"; then bad "directory accepted"; fi
grep -q "cannot write '$tmp/dir': Is a directory" "$tmp/err" || bad "directory: message"
# the long form --output OUT is release's own (not the listings' -o/--output
# COLUMNS), and those table options are refused before a command that prints no table
timeout 20 "$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml \
	--output "$tmp/long.xml" >"$tmp/out" 2>"$tmp/err" || bad "release --output"
grep -q "<name>plain</name>" "$tmp/long.xml" || bad "release --output OUT did not write OUT"
[ -s "$tmp/out" ] && bad "release --output OUT wrote to stdout too"
RC=0
"$bin" --sysroot "$tmp/host" -o VF plan --name a --vgpu A30-6C --vcpus 2 --memory 2G \
	>"$tmp/out" 2>"$tmp/err" || RC=$?
if [ $RC != 2 ] || ! grep -q "plan prints no table" "$tmp/err"; then bad "-o before plan: exit $RC"; fi
# no temporary file left behind anywhere
if find "$tmp" -maxdepth 1 -name '*.tmp' | grep -q .; then bad "a temporary file was left"; fi
[ $fail = 0 ] && echo "ok: -o OUT on regular files, symlinks, FIFOs, devices, directories"
exit $fail
