#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench-listing.sh - what the type listing costs: `vgpuctl --sysroot REF
# types --per-vf --json` on the reference host (8x16x20, 2,560 types, built
# by mksynth.sh) against floor.c, the bare loop that makes the same reads
# and nothing else.  Two figures, each against its goal:
#
#   wall time vgpuctl/floor  <= 1.25x  (hyperfine -N, both in one run: means)
#   syscalls per type        <= 5      (strace -c -f total / types)
#
# The tree is read the way a host's /sys is: from a mount that cannot hold
# a device.  sysfs cannot, so vgpuctl reads it without an fstat() per file
# (see sysfs.h); a tmpfs tree that could hold one costs that fstat() again.
# So the script bind-mounts the tree on itself with nodev, in a private
# mount namespace (unshare -m as root, unshare -r -m otherwise), and
# measures there; the syscalls per type on the tree's own mount (/dev/shm
# or $TMPDIR, which may allow devices) are printed too, for information.
# Where no namespace can be made, everything runs on the tree's own mount
# and the script says so.
#
# A benchmark: PASS/MISS is informational and the exit status is 0 unless a
# tool is missing or a command fails.  If vgpuctl and the floor no longer
# make the same system calls, the counts are marked and a note is printed
# (floor.c needs updating: the ratio then compares unlike work).
#
# Environment: VGPUCTL, CC (default cc), BENCH_REF (8x16x20), BENCH_RUNS
# (60), BENCH_WARMUP (5), BENCH_NODEV (1; 0 measures on the tree's own
# mount only), BENCH_VERBOSE=1 for hyperfine's output.

set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${BENCH_RUNS:-60}
WARMUP=${BENCH_WARMUP:-5}
REF=${BENCH_REF:-8x16x20}
NODEV=${BENCH_NODEV:-1}
VERBOSE=${BENCH_VERBOSE:-0}
CC=${CC:-cc}

die() {
	echo "bench-listing: $*" >&2
	exit 1
}

for tool in hyperfine strace awk "$CC"; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
[[ $REF =~ ^([0-9]+)x([0-9]+)x([0-9]+)$ ]] || die "BENCH_REF=$REF is not GxVxT"
NTYPES=$((BASH_REMATCH[1] * BASH_REMATCH[2] * BASH_REMATCH[3]))
[ "$NTYPES" -gt 0 ] || die "BENCH_REF=$REF has no types"

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMP=$(mktemp -d /dev/shm/vgpuctl-listing.XXXXXX)
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/vgpuctl-listing.XXXXXX")
fi
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
case $TMP in *"'"*) die "temporary path with a single quote: $TMP" ;; esac

"$CC" -O2 -Wall -Wextra -Werror -o "$TMP/floor" "$HERE/floor.c" || die "cannot build floor.c"
ROOT=$TMP/ref
"$HERE/mksynth.sh" "$ROOT" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
n=$("$VGPUCTL" --sysroot "$ROOT" types --per-vf --json | { grep -oE '"type_id"[[:space:]]*:' || :; } | wc -l)
[ "$n" -eq "$NTYPES" ] || die "vgpuctl lists $n types on $REF, expected $NTYPES"
"$TMP/floor" "$ROOT" || die "floor failed"

# measure DIR: strace counts and one hyperfine run of both, into DIR.
# Exported for the namespace's shell.
measure() {
	local out=$1 style=none
	strace -c -f -o "$out/vg.strace" "$VGPUCTL" --sysroot "$ROOT" types --per-vf --json \
		>/dev/null || return 1
	strace -c -f -o "$out/fl.strace" "$TMP/floor" "$ROOT" || return 1
	[ "$VERBOSE" = 1 ] && style=basic
	hyperfine -N --style "$style" --warmup "$WARMUP" --runs "$RUNS" \
		--export-json "$out/hf.json" \
		-n vgpuctl "'$VGPUCTL' --sysroot '$ROOT' types --per-vf --json" \
		-n floor "'$TMP/floor' '$ROOT'" >&2
}
case $VGPUCTL in *"'"*) die "vgpuctl path with a single quote: $VGPUCTL" ;; esac

# strace -c columns: % time, seconds, usecs/call, calls, [errors], syscall
calls() { awk -v s="$2" '$NF == s { print $4; f = 1 } END { if (!f) print 0 }' "$1"; }

# The tree's own mount: syscalls only (what a device-capable tree costs).
mkdir "$TMP/own"
strace -c -f -o "$TMP/own/vg.strace" "$VGPUCTL" --sysroot "$ROOT" types --per-vf --json \
	>/dev/null || die "strace vgpuctl failed"
own_total=$(calls "$TMP/own/vg.strace" total)
own_fs=$(findmnt -no FSTYPE,OPTIONS -T "$ROOT" 2>/dev/null | awk '{ print $1 " (" $2 ")" }' || :)

mkdir "$TMP/m"
where="the tree's own mount${own_fs:+, $own_fs}"
ns=0
if [ "$NODEV" = 1 ] && command -v unshare >/dev/null 2>&1 && command -v mount >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ]; then UNSHARE=(unshare -m); else UNSHARE=(unshare -r -m); fi
	export -f measure
	export VGPUCTL TMP ROOT RUNS WARMUP VERBOSE
	# shellcheck disable=SC2016 # expanded by the inner bash
	if "${UNSHARE[@]}" -- bash -c '
		{ mount --bind "$ROOT" "$ROOT" && mount -o remount,bind,nodev "$ROOT"; } \
			2>"$TMP/ns.err" || exit 1
		: >"$TMP/ns.ok"
		measure "$TMP/m"'; then
		ns=1
		where="a nodev bind mount of the tree in a private mount namespace (as /sys: no device can be opened)"
	elif [ -e "$TMP/ns.ok" ]; then
		cat "$TMP/ns.err" >&2
		die "measuring in the mount namespace failed"
	else
		echo "note: no nodev mount namespace here ($(head -c 300 "$TMP/ns.err" | tr '\n' ' '));" \
			"measuring on the tree's own mount" >&2
	fi
fi
if [ "$ns" = 0 ]; then
	measure "$TMP/m" || die "measuring failed"
fi

echo "vgpuctl:   $VGPUCTL"
echo "hyperfine: $(hyperfine --version | head -n1), -N, warmup $WARMUP, runs $RUNS"
echo "host:      $(uname -srm), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tree:      $REF ($NTYPES types), measured on $where"
echo
echo "syscalls (strace -c -f):"
printf '  %-12s %8s %8s\n' syscall vgpuctl floor
differs=0
for s in openat2 newfstatat fstatfs pread64 read readlinkat getdents64 close total; do
	a=$(calls "$TMP/m/vg.strace" "$s") b=$(calls "$TMP/m/fl.strace" "$s") mark=
	case $s in
	total) ;;
	close) [ "$a" -eq $((b + 1)) ] || { mark=' <- differs'; differs=1; } ;; # vgpuctl closes stdout
	*) [ "$a" -eq "$b" ] || { mark=' <- differs'; differs=1; } ;;
	esac
	printf '  %-12s %8d %8d%s\n' "$s" "$a" "$b" "$mark"
done
echo "  (vgpuctl's one extra close is stdout)"
[ "$differs" = 0 ] ||
	echo "NOTE: the floor no longer makes vgpuctl's reads (update floor.c); the wall ratio compares unlike work"
vg_total=$(calls "$TMP/m/vg.strace" total)

paste <(hf_stat "$TMP/m/hf.json" mean) <(hf_stat "$TMP/m/hf.json" stddev) \
	<(hf_stat "$TMP/m/hf.json" user) <(hf_stat "$TMP/m/hf.json" system) |
	awk -v types="$NTYPES" -v sc="$vg_total" -v own="$own_total" -v ns="$ns" -v runs="$RUNS" '
	BEGIN { split("vgpuctl floor", name, " ") }
	{ i++; mean[name[i]] = $1; sd[name[i]] = $2; usr[name[i]] = $3; sys[name[i]] = $4 }
	END {
		printf "\none hyperfine run, %d runs each (ms; user and system are means):\n", runs
		printf "  %-8s %9s %8s %9s %9s\n", "command", "mean", "stddev", "user", "system"
		for (j = 1; j <= 2; j++) {
			k = name[j]
			printf "  %-8s %9.3f %8.3f %9.3f %9.3f\n", k, mean[k] * 1e3, sd[k] * 1e3,
				usr[k] * 1e3, sys[k] * 1e3
		}
		r = mean["floor"] > 0 ? mean["vgpuctl"] / mean["floor"] : 0
		ru = usr["floor"] > 0 ? usr["vgpuctl"] / usr["floor"] : 0
		spt = sc / types
		printf "\nwall time above the floor: %.3f ms (%.3f us/type); user time vgpuctl/floor %.2fx\n",
			(mean["vgpuctl"] - mean["floor"]) * 1e3,
			(mean["vgpuctl"] - mean["floor"]) * 1e6 / types, ru
		if (ns)
			printf "on the tree'"'"'s own mount (devices possible: an fstat() per file): %.2f syscalls/type (information)\n",
				own / types
		printf "\ntargets:\n"
		printf "  %-44s %7.2fx  %s\n", "wall time vgpuctl/floor <= 1.25x", r,
			(r <= 1.25 ? "PASS" : "MISS")
		printf "  %-44s %7.2f   %s\n", "syscalls per type <= 5", spt,
			(spt <= 5 ? "PASS" : "MISS")
		printf "(benchmark only: PASS/MISS is informational, exit status is 0)\n"
	}'
exit 0
