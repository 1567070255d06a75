# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2015 # "A && B || C": C when either fails
# A private libvirtd serving libvirt's test driver, for tests/libvirt/*.sh (sourced):
# it runs in a mount namespace with tmpfs over its config, run, state, log and cache
# directories (live-and-hooks.md 2.4), loads no driver module (LIBVIRT_DRIVER_DIR empty), so
# it serves the built-in test driver and answers in a fraction of a second (the QEMU
# driver's capability probe took 9 s).
#   daemon_require "$0" "$@"   root, libvirtd and unshare, else exit 77; then re-executes the
#                              script in a private mount namespace (the mounts do not leak)
#   daemon_start DIR           the mounts, then libvirtd (pid in DAEMON_PID, its log
#                              DIR/libvirtd.log); returns once its socket answers, 1 if not
#   daemon_stop                ends the daemon (an EXIT trap calls it)
#   DAEMON_SOCK                the daemon's socket: test+unix://NODE.xml?socket=$DAEMON_SOCK
# The test driver reads its node file at each connection: what a connection defines is gone
# once it closes, so a test defines and reads back in one virsh session.

DAEMON_DIRS="/run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt"
DAEMON_SOCK=/run/libvirt/libvirt-sock
DAEMON_PID=

daemon_require() {
	[ "$(id -u)" = 0 ] && command -v libvirtd >/dev/null && command -v unshare >/dev/null || {
		echo "needs root, libvirtd and unshare: skipped"
		exit 77
	}
	[ -n "${VGPU_IN_NS:-}" ] && return 0
	local d
	for d in $DAEMON_DIRS; do
		mkdir -p "$d" # an empty mount point where the host has none
	done
	VGPU_IN_NS=1 exec unshare -m --propagation private "$@"
}

daemon_start() {
	local dir=$1 d i
	for d in $DAEMON_DIRS; do
		mount -t tmpfs tmpfs "$d" || return 1
	done
	: >/etc/libvirt/libvirtd.conf
	mkdir -p "$dir/no-drivers"
	# its own pid file: /run itself is shared with the host (and any other libvirtd)
	LIBVIRT_DRIVER_DIR=$dir/no-drivers libvirtd --timeout 60 --pid-file "$dir/libvirtd.pid" \
		>"$dir/libvirtd.log" 2>&1 &
	DAEMON_PID=$!
	for ((i = 0; i < 100; i++)); do
		virsh -q -c "test+unix:///default?socket=$DAEMON_SOCK" version >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

daemon_stop() {
	[ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
