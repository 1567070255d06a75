# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for tests that run against the kernel/driver emulator (vgpu-emu, README.md here).
# Source from bash:
#   . tests/emu/lib.sh
#   emu_available || exit 77                  # no usable /dev/fuse: skip
#   emu_start tests/data/hosts/t4-legacy      # sets EMU_ROOT EMU_BACKING EMU_CTL EMU_LOG EMU_DIR
#   vgpuctl --sysroot "$EMU_ROOT" ...
#   emu_fault 'fail write sys/devices/*/create EIO count=1'
#   emu_writes                                # the sysfs writes so far, one per line
#   emu_stop
# VGPU_EMU names the binary (meson's test() sets it). EMU_KEEP=1 keeps the temporary
# directories (backing copy, journal, emulator stderr) for a post-mortem.

_emu_dirs=()
_emu_trap=0

_emu_bin() {
	if [ -n "${VGPU_EMU:-}" ] && [ -x "$VGPU_EMU" ]; then
		printf '%s\n' "$VGPU_EMU"
	else
		echo "emu: set VGPU_EMU to the vgpu-emu binary" >&2
		return 1
	fi
}

_emu_mounted() { # DIR
	mountpoint -q "$1" 2>/dev/null
}

# emu_available: 0 if /dev/fuse can be opened and a FUSE file system mounted here.
emu_available() {
	local bin dir pid i ok=1
	bin=$(_emu_bin) || return 1
	[ -c /dev/fuse ] || return 1
	{ : <>/dev/fuse; } 2>/dev/null || return 1
	dir=$(mktemp -d "${TMPDIR:-/tmp}/vgpu-emu-probe.XXXXXX") || return 1
	mkdir "$dir/b" "$dir/m"
	"$bin" "$dir/b" "$dir/m" 2>/dev/null &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		if _emu_mounted "$dir/m"; then
			ok=0
			break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	_emu_mounted "$dir/m" && fusermount3 -u -z "$dir/m" 2>/dev/null
	rm -rf "$dir"
	return $ok
}

# emu_start FIXTURE_DIR [vgpu-emu options...]: copy FIXTURE_DIR (cp -a) and mount it.
# Exports EMU_DIR (the temporary directory), EMU_ROOT (the mount point: the --sysroot),
# EMU_BACKING (the copy, changed in place), EMU_CTL (control file, empty), EMU_LOG (journal)
# and EMU_PID. Options such as --type ID=NAME or --block-timeout SEC go to vgpu-emu;
# EMU_FUSE_OPTS (words) is added after the mount point. Several may run at once: the
# EMU_* variables name the last one; all are stopped and removed at exit.
emu_start() {
	local fixture=${1:?emu_start FIXTURE_DIR [options]} bin dir pid i
	shift
	bin=$(_emu_bin) || return 1
	if [ ! -d "$fixture" ]; then
		echo "emu_start: '$fixture' is not a directory" >&2
		return 1
	fi
	dir=$(mktemp -d "${TMPDIR:-/tmp}/vgpu-emu.XXXXXX") || return 1
	_emu_dirs+=("$dir")
	if [ $_emu_trap = 0 ]; then
		trap _emu_exit EXIT
		_emu_trap=1
	fi
	cp -a "$fixture" "$dir/backing" || return 1
	mkdir "$dir/mnt" || return 1
	: >"$dir/control"
	: >"$dir/journal"
	# shellcheck disable=SC2086 # EMU_FUSE_OPTS is a list of words
	"$bin" --control "$dir/control" --log "$dir/journal" "$@" "$dir/backing" "$dir/mnt" \
		${EMU_FUSE_OPTS:-} 2>"$dir/emu.err" &
	pid=$!
	echo "$pid" >"$dir/pid"
	for ((i = 0; i < 200; i++)); do
		_emu_mounted "$dir/mnt" && break
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "emu_start: vgpu-emu exited:" >&2
			cat "$dir/emu.err" >&2
			return 1
		fi
		sleep 0.05
	done
	if ! _emu_mounted "$dir/mnt"; then
		echo "emu_start: $dir/mnt not mounted after 10 s" >&2
		return 1
	fi
	export EMU_DIR=$dir EMU_ROOT=$dir/mnt EMU_BACKING=$dir/backing EMU_CTL=$dir/control \
		EMU_LOG=$dir/journal EMU_PID=$pid
}

# emu_stop [EMU_DIR]: unmount and stop an emulator (default: the last started). Its
# files stay until the script exits, so the backing tree can still be compared. Returns
# 1, with the emulator's stderr, if it did not exit 0 (a crash, a sanitizer report).
emu_stop() {
	local dir=${1:-${EMU_DIR:-}} pid i rc=0
	[ -n "$dir" ] && [ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	rm -f "$dir/pid"
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 200; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null
			rc=1
		fi
	fi
	# the exit status, where this shell started it
	wait "$pid" 2>/dev/null
	i=$?
	[ $i = 127 ] || [ $i = 0 ] || rc=1
	if _emu_mounted "$dir/mnt"; then
		fusermount3 -u -z "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt" 2>/dev/null
	fi
	if [ $rc != 0 ]; then
		echo "emu_stop: vgpu-emu (pid $pid) did not exit cleanly; its stderr:" >&2
		cat "$dir/emu.err" >&2
	fi
	return $rc
}

_emu_exit() {
	local dir
	for dir in "${_emu_dirs[@]}"; do
		emu_stop "$dir"
		if [ -n "${EMU_KEEP:-}" ]; then
			echo "emu: kept $dir" >&2
		else
			rm -rf "$dir"
		fi
	done
}

# emu_fault [-r] RULE...: append RULEs to the control file (-r: replace its content;
# `emu_fault -r` alone clears it). The file is replaced atomically.
emu_fault() {
	local keep=1 tmp
	if [ "${1:-}" = -r ]; then
		keep=0
		shift
	fi
	tmp=$EMU_CTL.new.$$
	{
		[ $keep = 0 ] || cat "$EMU_CTL"
		[ $# = 0 ] || printf '%s\n' "$@"
	} >"$tmp" && mv -f "$tmp" "$EMU_CTL"
}

# emu_unfault RULE...: remove the lines equal to RULE from the control file.
emu_unfault() {
	local tmp=$EMU_CTL.new.$$ r args=()
	for r in "$@"; do args+=(-e "$r"); done
	grep -vxF "${args[@]}" "$EMU_CTL" >"$tmp"
	mv -f "$tmp" "$EMU_CTL"
}

# emu_open ID / emu_close ID: mark a vGPU (VF BDF or mdev UUID) as open by QEMU, or not.
emu_open() { emu_fault "open $1"; }
emu_close() { emu_unfault "open $1"; }

# emu_writes [--all]: the journal's writes under sys/ (--all: every journal line).
emu_writes() {
	if [ "${1:-}" = --all ]; then
		cat "$EMU_LOG"
	else
		grep '^write sys/' "$EMU_LOG" || true
	fi
}

# emu_clear_journal: forget the journal so far (the emulator appends).
emu_clear_journal() {
	: >"$EMU_LOG"
}

# emu_require: exit 77 (meson's "skipped") where the emulator cannot run here.
emu_require() {
	emu_available && return 0
	echo "no usable /dev/fuse: skipped"
	exit 77
}

# emu_fail MESSAGE: count one failure (EMU_FAILS) and say it on stderr.
EMU_FAILS=0
emu_fail() {
	echo "FAIL: $*" >&2
	EMU_FAILS=$((EMU_FAILS + 1))
}
