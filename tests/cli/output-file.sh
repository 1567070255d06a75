#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -o OUT replaces only a regular file, keeping its mode, owner, ACL and
# extended attributes; a symlink is followed; a FIFO or a device is written
# through and stays what it is; a FIFO nobody reads fails at once; a directory
# is refused.  In a sticky world-writable directory (/tmp), a link or a file
# another user planted is neither followed nor written (as root: the planting
# is done by an unprivileged user through setpriv).  A bind-mounted file is
# written in place; a FIFO whose reader is slow holds no lock while it waits.
# release --from on a domain without vGPUs writes the domain and touches no vGPU.
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
# ---- files other users planted in a shared sticky directory (as root only)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 0755 "$tmp"
	mkdir -m 1777 "$tmp/shared"
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	echo precious >"$tmp/rootfile"
	chmod 0600 "$tmp/rootfile"
	# another user's symlink to root's file: not followed, nothing written
	as_nobody ln -s "$tmp/rootfile" "$tmp/shared/vm.xml"
	if release "$tmp/shared/vm.xml"; then bad "another user's symlink in /tmp was followed"; fi
	grep -q "^vgpuctl: release plain: cannot write '$tmp/shared/vm.xml': '$tmp/shared/vm.xml' is a symbolic link that another user (uid 65534) owns in a shared sticky directory; it is not followed$" \
		"$tmp/err" || bad "planted symlink: message"
	[ "$(cat "$tmp/rootfile")" = precious ] || bad "the planted symlink's target was overwritten"
	[ "$(stat -c %a "$tmp/rootfile")" = 600 ] || bad "the planted symlink's target changed mode"
	[ -L "$tmp/shared/vm.xml" ] || bad "the planted symlink was replaced"
	# another user's 0666 file: not written (he could rewrite it before it is defined)
	as_nobody sh -c "umask 0; echo his >'$tmp/shared/his.xml'"
	if release "$tmp/shared/his.xml"; then bad "another user's file in /tmp was written"; fi
	grep -q "cannot write '$tmp/shared/his.xml': '$tmp/shared/his.xml' belongs to another user (uid 65534) in a shared sticky directory" \
		"$tmp/err" || bad "planted file: message"
	[ "$(cat "$tmp/shared/his.xml")" = his ] || bad "the planted file was overwritten"
	[ "$(stat -c %u "$tmp/shared/his.xml")" = 65534 ] || bad "the planted file changed owner"
	# a FIFO another user made there: refused too (fs.protected_fifos)
	as_nobody mkfifo -m 0666 "$tmp/shared/his.fifo"
	if release "$tmp/shared/his.fifo"; then bad "another user's FIFO in /tmp was written"; fi
	# root's own symlink there is followed, as before
	ln -s "$tmp/mine.xml" "$tmp/shared/mine.xml"
	release "$tmp/shared/mine.xml" || bad "root's own symlink in /tmp"
	grep -q "<name>plain</name>" "$tmp/mine.xml" || bad "root's own symlink was not followed"
	# another user's symlink in his own (not sticky) directory is followed, like the kernel does
	mkdir "$tmp/his" && chown 65534:65534 "$tmp/his"
	as_nobody ln -s "$tmp/mine2.xml" "$tmp/his/link.xml"
	release "$tmp/his/link.xml" || bad "a link in a private directory"
	grep -q "<name>plain</name>" "$tmp/mine2.xml" || bad "a link in a private directory was not followed"
fi

# ---- ACL and extended attributes are kept (a SELinux label is one of them)
if command -v setfacl >/dev/null && echo x >"$tmp/acl.xml" &&
	setfattr -n user.vgpuctl -v kept "$tmp/acl.xml" 2>/dev/null &&
	setfacl -m u:65534:rw "$tmp/acl.xml" 2>/dev/null; then
	release "$tmp/acl.xml" || bad "a file with an ACL"
	grep -q "<name>plain</name>" "$tmp/acl.xml" || bad "a file with an ACL was not written"
	[ "$(getfattr --only-values -n user.vgpuctl "$tmp/acl.xml" 2>/dev/null)" = kept ] ||
		bad "user.vgpuctl was dropped"
	getfacl -cn "$tmp/acl.xml" 2>/dev/null | grep -q "^user:65534:rw-$" || bad "the ACL was dropped"
else
	echo "SKIP: no ACL/xattr support on $tmp (acl, attr packages)"
fi

# ---- a bind-mounted file (a container's output): written in place, still mounted
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	echo old >"$tmp/outside.xml"
	: >"$tmp/bound.xml"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c '
		mount --bind "$1/outside.xml" "$1/bound.xml" || exit 3
		timeout 20 "$2" --sysroot "$1/host" release --from tests/data/domains/plain.xml \
			-o "$1/bound.xml" 2>"$1/err" || exit 1
		findmnt "$1/bound.xml" >/dev/null || exit 2' sh "$tmp" "$bin"
	RC=$?
	[ $RC = 0 ] || bad "bind-mounted file: exit $RC"
	grep -q "<name>plain</name>" "$tmp/outside.xml" || bad "the bind-mounted file was not written"
fi

# ---- a FIFO whose reader is slow: the write waits with no lock held, so
# another run that needs the host lock goes through meanwhile
mkfifo "$tmp/slow"
exec 7<>"$tmp/slow"
head -c 65536 /dev/zero >&7 # the pipe is full: the next write waits for the reader
timeout 60 "$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml \
	-o "$tmp/slow" 2>"$tmp/slow.err" &
writer=$!
waiting() { # is vgpuctl (timeout's child) blocked writing to the pipe?
	local child
	child=$(pgrep -P $writer) && [[ "$(cat "/proc/$child/wchan" 2>/dev/null)" = *pipe_write ]]
}
for _ in $(seq 100); do
	waiting && break
	sleep 0.1
done
waiting || bad "the FIFO's writer never waited"
timeout 20 "$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml \
	-o "$tmp/meanwhile.xml" 2>"$tmp/err" || bad "a run waited for the slow FIFO's reader"
kill -0 $writer 2>/dev/null || bad "the FIFO's writer did not wait for its reader"
"$bin" --sysroot "$tmp/host" release --from tests/data/domains/plain.xml >"$tmp/expect" 2>/dev/null
head -c $((65536 + $(wc -c <"$tmp/expect"))) <&7 | tail -c +65537 >"$tmp/got"
wait $writer || bad "the slow FIFO's writer failed: $(cat "$tmp/slow.err")"
cmp -s "$tmp/expect" "$tmp/got" || bad "the slow FIFO's reader got another text"
exec 7<&-

# ---- a FIFO whose reader goes away while assign writes: what this assign
# claimed is undone; a no-op assign (the domain has its vGPUs) keeps them
assign_fifo() { # FROM: assign --per-start into the full FIFO $tmp/gone
	timeout 60 "$bin" --sysroot "$tmp/host" assign --from "$1" -o "$tmp/gone" --vgpu A30-6C \
		--per-start >/dev/null 2>"$tmp/err" 8<&- & # not a reader itself
	writer=$!
	for _ in $(seq 100); do
		waiting && break
		sleep 0.1
	done
	waiting || bad "the FIFO's writer never waited ($1)"
	exec 8<&- # the reader goes away
	wait $writer && bad "a write to a FIFO whose reader went away succeeded ($1)"
}
mkfifo "$tmp/gone"
exec 8<>"$tmp/gone"
head -c 65536 /dev/zero >&8
assign_fifo tests/data/domains/plain.xml
grep -q "cannot write '$tmp/gone': its reader went away; the assign is undone$" "$tmp/err" ||
	bad "reader gone: message: $(cat "$tmp/err")"
"$bin" --sysroot "$tmp/host" vgpus 2>/dev/null | grep -q plain && bad "the undone assign left a record"
"$bin" --sysroot "$tmp/host" assign --from tests/data/domains/plain.xml -o "$tmp/plain.a.xml" \
	--vgpu A30-6C --per-start 2>"$tmp/err" || bad "assign plain: $(cat "$tmp/err")"
exec 8<>"$tmp/gone"
head -c 65536 /dev/zero >&8
assign_fifo "$tmp/plain.a.xml"
grep -q "cannot write '$tmp/gone': its reader went away$" "$tmp/err" ||
	bad "reader gone on a no-op: message: $(cat "$tmp/err")"
"$bin" --sysroot "$tmp/host" vgpus 2>/dev/null | grep -q plain ||
	bad "a no-op assign whose FIFO reader went away released the domain's vGPU"

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
