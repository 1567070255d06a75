#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh machine -> lint and the whole test suite over a build matrix: gcc and
# clang, each debug and debugoptimized, plus AddressSanitizer +
# UndefinedBehaviorSanitizer. Every build starts in a fresh directory
# (build-ci-*), so a stale configuration cannot hide a failure.
# Exits non-zero on any failure; lint failures are reported at the end, after
# the builds, so one run shows everything that is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
src=$PWD
shopt -s globstar nullglob

# ---- lint
lint_failed=()
# shell: every test script and the CI entry point; -x follows sourced files
if ! shellcheck -x tests/**/*.sh .ci/run; then lint_failed+=(shellcheck); fi
# house style: kernel-style C, 100 columns (.clang-format), library, CLI and tests
if ! clang-format --dry-run --Werror src/**/*.[ch]; then lint_failed+=("clang-format src/"); fi
if ! clang-format --dry-run --Werror tests/**/*.[ch]; then lint_failed+=("clang-format tests/"); fi

# ---- build matrix
# The fixture-tree check (suite 'fixtures') does not depend on the build: the
# first build runs it, the others skip it (it takes ~45 s on 2 cores).  The
# damaged-host suite (suite 'damage', ~40 s) runs in the first build and under
# ASan/UBSan, where a memory error on a damaged file would show.  The live
# suite (assign/release/hook on the FUSE emulator, ~1 min) and the emulator's
# own selftest (suite 'emu', the same test binary in every build) run in the
# first build, as does the selftest of the nvidia-smi/sriov-manage stand-ins
# (suite 'fakes', shell only).  apply/assert end to end (suite 'apply') runs
# in the first build and under ASan/UBSan.
test_args=()
run() { # NAME MESON-ARGS...  (CC from the environment picks the compiler)
	local dir=build-ci-$1
	shift
	echo "==== $dir: meson setup $* (CC=${CC:-cc})"
	rm -rf "$dir"
	meson setup "$dir" "$@"
	ninja -C "$dir"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${test_args[@]}"
	test_args=(--no-suite fixtures --no-suite damage --no-suite live --no-suite emu --no-suite oom
		--no-suite fakes --no-suite apply --no-suite pkg)
}
rm -rf build-ci-*
for cc in gcc clang; do
	for bt in debug debugoptimized; do
		CC=$cc run "$cc-$bt" --buildtype="$bt"
	done
done
# meson install puts the binary, the man page, the default template, the
# completion, the docs and the example config under the prefix (/usr/local)
d=build-ci-gcc-debugoptimized
meson install -C "$d" --destdir "$src/$d/destdir" >/dev/null
for f in sbin/vgpuctl share/man/man8/vgpuctl.8 share/vgpuctl/domain.xml \
	lib/x86_64-linux-gnu/vgpuctl/vgpuctl-xml.so share/bash-completion/completions/vgpuctl \
	share/doc/vgpuctl/README.md share/doc/vgpuctl/examples/host.yaml share/vgpuctl/inventory.schema.json; do
	[ -e "$d/destdir/usr/local/$f" ] || { echo "meson install: $f missing" >&2; exit 1; }
done
# the boot unit is installed where systemd looks under the prefix, and never
# enabled (no .wants link)
[ -e "$d/destdir/usr/local/lib/systemd/system/vgpuctl-apply@.service" ] ||
	{ echo "meson install: vgpuctl-apply@.service missing" >&2; exit 1; }
if find "$d/destdir" -path '*.wants*' | grep -q .; then
	echo "meson install enabled a unit" >&2
	exit 1
fi
# libvirt and glib keep process-lifetime allocations; ours must not leak
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$src/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# a loaded machine makes the sanitized damaged-host suite (1,345 hosts x 6
# commands, LeakSanitizer at every exit) slow: give it twice the time
test_args=(--no-suite fixtures --no-suite live --no-suite emu --no-suite fakes --no-suite oom --no-suite pkg
	--timeout-multiplier 2)
CC=gcc run asan -Db_sanitize=address,undefined -Db_lundef=false
# vgpuctl talking to real libvirt daemons (the remote driver's XDR, which ASan
# intercepts: src/meson.build), the hook under a daemon, assign through one
meson test -C build-ci-asan --print-errorlogs --timeout-multiplier 2 libvirt-remote \
	libvirt-assign libvirt-hook-daemon
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
# libFuzzer targets (clang, ASan/UBSan): seeds and kept crashers, then a fixed
# short budget per target; tests/fuzz/run runs them long
echo "==== build-ci-fuzz"
rm -rf build-ci-fuzz
CC=clang meson setup build-ci-fuzz -Dfuzz=true -Dtests=false -Db_lundef=false
FUZZ_SECONDS=${FUZZ_SECONDS:-10} sh tests/fuzz/ci.sh build-ci-fuzz

if [ ${#lint_failed[@]} -gt 0 ]; then
	printf 'FAILED lint: %s (see its output above)\n' "${lint_failed[*]}" >&2
	exit 1
fi
echo "all tests passed (gcc and clang, debug and debugoptimized, ASan/UBSan; lint clean)"
