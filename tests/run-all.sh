#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh machine -> lint and the whole test suite over a build matrix: gcc debug
# and debugoptimized, clang debugoptimized, plus AddressSanitizer +
# UndefinedBehaviorSanitizer. Every build starts in a fresh directory
# (build-ci-*), so a stale configuration cannot hide a failure.
# Every build runs even when an earlier one fails, and the summary at the end
# gives each build's result (and how long it took), so one run shows
# everything that is wrong; the exit status is non-zero when anything failed.
# An error outside a build's steps (installing the dependencies, the
# directories) still stops the script at once (set -e).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
src=$PWD
shopt -s globstar nullglob
# Test temporaries (the emulator's backing trees, fixture copies, extracted topology
# dumps: ~100k small files written and removed per build) go to a RAM file system when
# there is one: on the disk, creates, removals and the fsyncs vgpuctl does on records
# under load made live 105 s instead of 47 and topology-dumps 6 min instead of 20 s.
# Only where it is mounted without noexec and nodev (tests run scripts and make device
# nodes there), has 2 GiB free (a container's /dev/shm is often 64 MiB: the trees
# would not fit) and user xattrs and ACLs work (output-file.sh checks that they are
# kept); otherwise the disk, as before.
shm_opts=,$(findmnt -n -o OPTIONS --target /dev/shm 2>/dev/null | head -1),
shm_free=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)
if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs && $shm_opts != *,noexec,* &&
	$shm_opts != *,nodev,* && ${shm_free// /} -ge $((2 * 1024 * 1024)) ]] && ci_tmp=$(mktemp -d /dev/shm/vgpuctl-ci.XXXXXX 2>/dev/null); then
	if : >"$ci_tmp/probe" && setfattr -n user.probe -v 1 "$ci_tmp/probe" 2>/dev/null &&
		setfacl -m u:65534:rw "$ci_tmp/probe" 2>/dev/null; then
		rm -f "$ci_tmp/probe"
		# like /tmp: output-file.sh plants other users' files there (mktemp made it 0700)
		chmod 1777 "$ci_tmp"
		export TMPDIR=$ci_tmp
		trap 'rm -rf "$ci_tmp"' EXIT
		echo "==== test temporaries under $TMPDIR (tmpfs)"
	else
		rm -rf "$ci_tmp"
	fi
fi

# ---- lint
lint_failed=()
results=() # "PASS|FAIL NAME: detail", in order, for the summary
failed=0
# note PASS|FAIL NAME DETAIL: one line of the summary
note() {
	results+=("$1 $2: $3")
	if [[ $1 == FAIL ]]; then failed=1; fi
}
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
# A build's steps are checked one by one: the first that fails ends that
# build (noted, with the step), and the next build runs.
test_args=()
run() { # NAME MESON-ARGS...  (CC from the environment picks the compiler)
	local dir=build-ci-$1 start=$SECONDS
	shift
	echo "==== $dir: meson setup $* (CC=${CC:-cc})"
	rm -rf "$dir"
	if ! meson setup "$dir" "$@"; then
		note FAIL "$dir" "meson setup"
	elif ! ninja -C "$dir"; then
		note FAIL "$dir" "ninja (compile)"
	elif ! meson test -C "$dir" --print-errorlogs --num-processes 2 "${test_args[@]}"; then
		note FAIL "$dir" "meson test ($((SECONDS - start)) s; the failures are above)"
	else
		note PASS "$dir" "$((SECONDS - start)) s"
	fi
	test_args=(--no-suite fixtures --no-suite damage --no-suite live --no-suite emu --no-suite oom
		--no-suite fakes --no-suite apply --no-suite pkg)
}
built() { [[ -x build-ci-$1/src/vgpuctl ]]; } # NAME: its build compiled
rm -rf build-ci-*
# gcc in both build types; clang optimized only (its warnings, -Wstring-concatenation
# and friends, show at any level, and a second debug build found nothing the
# first did not: it cost two minutes of the twenty CI has)
CC=gcc run gcc-debug --buildtype=debug
CC=gcc run gcc-debugoptimized --buildtype=debugoptimized
CC=clang run clang-debugoptimized --buildtype=debugoptimized
# meson install puts the binary, the man page, the default template, the
# completion, the docs and the example config under the prefix (/usr/local)
check_install() { # DIR: what meson install put under the prefix; the first problem
	local d=$1 f
	if ! meson install -C "$d" --destdir "$src/$d/destdir" >/dev/null; then
		echo "meson install failed"
		return
	fi
	for f in sbin/vgpuctl share/man/man8/vgpuctl.8 share/vgpuctl/domain.xml \
		lib/x86_64-linux-gnu/vgpuctl/vgpuctl-xml.so share/bash-completion/completions/vgpuctl \
		share/doc/vgpuctl/README.md share/doc/vgpuctl/examples/host.yaml share/vgpuctl/inventory.schema.json \
		lib/systemd/system/vgpuctl-apply@.service; do
		[ -e "$d/destdir/usr/local/$f" ] || { echo "$f missing"; return; }
	done
	# the boot unit is installed where systemd looks under the prefix, and never
	# enabled (no .wants link)
	if find "$d/destdir" -path '*.wants*' | grep -q .; then echo "a unit was enabled"; fi
}
if built gcc-debugoptimized; then
	why=$(check_install build-ci-gcc-debugoptimized)
	if [[ -n $why ]]; then note FAIL "meson install" "$why"; else note PASS "meson install" "layout"; fi
else
	note FAIL "meson install" "not tried: build-ci-gcc-debugoptimized did not compile"
fi
# libvirt and glib keep process-lifetime allocations; ours must not leak
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$src/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# a loaded machine makes the sanitized damaged-host suite (1,345 hosts x 6
# commands, LeakSanitizer at every exit) slow: give it twice the time.  Under
# the sanitizers it damages each (file kind, damage) pair on one host, the
# hosts in turn (every reader under every damage; the first build runs all
# hosts): 175 s of the 20 minutes CI has went to repeating them per host
test_args=(--no-suite fixtures --no-suite live --no-suite emu --no-suite fakes --no-suite oom --no-suite pkg
	--timeout-multiplier 2)
VGPU_DAMAGE_ONE_HOST=1 CC=gcc run asan -Db_sanitize=address,undefined -Db_lundef=false
# vgpuctl talking to real libvirt daemons (the remote driver's XDR, which ASan
# intercepts: src/meson.build), the hook under a daemon, assign through one
if ! built asan; then
	note FAIL "build-ci-asan daemons" "not run: build-ci-asan did not compile"
elif meson test -C build-ci-asan --print-errorlogs --timeout-multiplier 2 libvirt-remote \
	libvirt-assign libvirt-hook-daemon; then
	note PASS "build-ci-asan daemons" "libvirt-remote libvirt-assign libvirt-hook-daemon"
else
	note FAIL "build-ci-asan daemons" "meson test (the failures are above)"
fi
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
# libFuzzer targets (clang, ASan/UBSan): seeds and kept crashers, then a fixed
# short budget per target; tests/fuzz/run runs them long
echo "==== build-ci-fuzz"
rm -rf build-ci-fuzz
start=$SECONDS
if ! CC=clang meson setup build-ci-fuzz -Dfuzz=true -Dtests=false -Db_lundef=false; then
	note FAIL build-ci-fuzz "meson setup"
elif ! FUZZ_SECONDS=${FUZZ_SECONDS:-6} sh tests/fuzz/ci.sh build-ci-fuzz; then
	note FAIL build-ci-fuzz "tests/fuzz/ci.sh ($((SECONDS - start)) s; its output is above)"
else
	note PASS build-ci-fuzz "$((SECONDS - start)) s"
fi

if [ ${#lint_failed[@]} -gt 0 ]; then
	note FAIL lint "${lint_failed[*]} (see its output above)"
else
	note PASS lint "shellcheck, clang-format"
fi
echo "==== summary ($SECONDS s in all)"
printf '%s\n' "${results[@]}"
if ((failed)); then
	echo "FAILED: see the FAIL lines above" >&2
	exit 1
fi
echo "all tests passed (gcc debug and debugoptimized, clang debugoptimized, ASan/UBSan; lint clean)"
