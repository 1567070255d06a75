#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh machine -> the whole test suite, twice: a normal build and one under
# AddressSanitizer + UndefinedBehaviorSanitizer.  Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
src=$PWD
# house style: kernel-style C, 100 columns (.clang-format)
clang-format --dry-run --Werror src/lib/*.[ch] src/cli/*.[ch]
run() { # BUILDDIR MESON-ARGS...
	local dir=$1
	shift
	[ -d "$dir" ] || meson setup "$dir" "$@"
	ninja -C "$dir"
	meson test -C "$dir" --print-errorlogs --num-processes 2
}
run build
# meson install puts the binary, the man page and the default template in place
rm -rf build/destdir
meson install -C build --destdir "$src/build/destdir" >/dev/null
for f in sbin/vgpuctl share/man/man8/vgpuctl.8 share/vgpuctl/domain.xml; do
	[ -e "build/destdir/usr/local/$f" ] || { echo "meson install: $f missing" >&2; exit 1; }
done
# libvirt and glib keep process-lifetime allocations; ours must not leak
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$src/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run build-asan -Db_sanitize=address,undefined -Db_lundef=false
echo "all tests passed (normal and ASan/UBSan builds)"
