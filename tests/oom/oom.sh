#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every allocation of a run fails in turn (failmalloc.so, LD_PRELOAD): the run
# either succeeds with exactly the output of an undisturbed run, or exits
# non-zero and says why on stderr.  Never a truncated domain with exit 0,
# never a silent failure.  Skipped under the sanitizers (they own malloc).
#   oom.sh VGPUCTL FAILMALLOC.SO SRCDIR
set -u
bin=$(realpath "$1") shim=$(realpath "$2") src=$3
cd "$src" || exit 1
if ldd "$bin" | grep -q 'libasan\|libubsan'; then
	echo "sanitizer build: skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
h=tests/data/hosts/a30-dual-mdev
sweep() { # NAME ARGS...: fail each allocation of "vgpuctl ARGS" in turn
	local name=$1 n total bad=0 rc
	shift
	"$bin" "$@" >"$tmp/want" 2>/dev/null || { echo "FAIL: $name: the undisturbed run fails"; fail=1; return; }
	total=$(FAILMALLOC_COUNT=1 LD_PRELOAD=$shim "$bin" "$@" 2>&1 >/dev/null |
		sed -n 's/^failmalloc: \([0-9]*\) allocations$/\1/p')
	for ((n = 1; n <= total + 1; n++)); do
		# a subshell: the shell's own "Aborted" report goes nowhere
		(
			FAILMALLOC_AT=$n LD_PRELOAD=$shim "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
			exit $?
		) 2>/dev/null
		rc=$?
		if [ $rc = 0 ] && ! cmp -s "$tmp/out" "$tmp/want"; then
			echo "FAIL: $name: allocation $n failed, exit 0 with other output"
			bad=1
		elif [ $rc != 0 ] && [ ! -s "$tmp/err" ]; then
			echo "FAIL: $name: allocation $n failed, exit $rc with nothing on stderr"
			bad=1
		fi
		[ $bad = 0 ] || break
	done
	[ $bad = 0 ] && echo "ok: $name: $total allocations, each failed once"
	[ $bad = 0 ] || fail=1
}
sweep gpus --sysroot $h gpus
sweep topology --sysroot $h topology
sweep vfs --sysroot $h vfs
sweep types-json --sysroot $h --json types
sweep xml --sysroot $h xml --template templates/domain.xml --name v --vgpu A30-6C --vcpus 4 \
	--memory 4G --uuid 7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f --mdev-uuid 0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f
sweep plan-json --sysroot $h --json plan --name v --vgpu A30-6C --vcpus 4 --memory 4G
exit $fail
