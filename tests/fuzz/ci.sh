#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/ci.sh BUILDDIR: every target for a fixed 20 s under ASan/UBSan
# (about 2.5 minutes on 2 cores), after replaying the seed corpora and kept
# crashers.  Exit non-zero on any finding; the logs are printed then.
set -u
[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR (configured with -Dfuzz=true)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(cd "$1" && pwd) || exit 2
ninja -C "$builddir" >/dev/null || exit 2
meson test -C "$builddir" --suite fuzz --print-errorlogs || exit 1
work=$(mktemp -d /tmp/vgpu-fuzz-ci.XXXXXX)
if BUILDDIR=$builddir WORK=$work JOBS=${JOBS:-2} "$here/run" "${FUZZ_SECONDS:-20}"; then
	rm -rf "$work"
	exit 0
fi
for log in "$work"/*/log; do
	rc=$(cat "$(dirname "$log")/rc")
	[ "$rc" = 0 ] && continue
	echo "==== $log" >&2
	tail -n 60 "$log" >&2
done
echo "fuzzing found something; inputs kept in $work" >&2
exit 1
