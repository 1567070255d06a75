#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench-types.sh - benchmark `vgpuctl types --per-vf --json` against
# `mdevctl types --dumpjson` on synthetic vGPU hosts (see mksynth.sh).
#
# This is a benchmark, not a test: it prints numbers, ratios and PASS/MISS
# against the targets, and exits 0 either way.  It exits non-zero only when
# a tool is missing, a command fails, or the two tools disagree on the
# number of types.
#
# Trees (GPUs x VFs/GPU x types/VF), all built on tmpfs:
#   0x0x0      empty host (NUMA/CPU topology only): startup-only cost
#   8x16x20    2,560 types  <- the reference host for the ratio and
#                               syscalls/type targets
#   series     1x8x20, 4x8x20, 16x8x20, 64x8x20: 160, 640, 2,560, 10,240
#              types, every point the same GPU shape (8 VFs x 20 types),
#              so a flat per-type cost means nothing grows faster than
#              the host
# Override with BENCH_SERIES="GxVxT ..." and BENCH_REF=GxVxT.
#
# Both tools run under one hyperfine, inside one private mount namespace
# (unshare -m) in which ROOT/sys is bind-mounted on /sys: mdevctl reads
# /sys/class/mdev_bus, vgpuctl reads ROOT through --sysroot, so neither is
# charged for unshare/mount/sh start-up.  hyperfine runs with -N (no
# intermediate shell) and discards both outputs.
#
# Environment:
#   VGPUCTL        binary (default: build/src/vgpuctl under the repo root)
#   BENCH_RUNS     hyperfine runs per command (default 30)
#   BENCH_WARMUP   hyperfine warmup runs (default 3)
#   BENCH_SERIES   series, default "1x8x20 4x8x20 16x8x20 64x8x20"
#   BENCH_REF      reference host, default "8x16x20"
#   BENCH_VERBOSE  1: also show hyperfine's own output

set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${BENCH_RUNS:-30}
WARMUP=${BENCH_WARMUP:-3}
read -r -a SERIES <<<"${BENCH_SERIES:-1x8x20 4x8x20 16x8x20 64x8x20}"
REF=${BENCH_REF:-8x16x20}
VERBOSE=${BENCH_VERBOSE:-0}

die() {
	echo "bench-types: $*" >&2
	exit 1
}

for tool in hyperfine strace mdevctl unshare mount awk; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
[ -x "$VGPUCTL" ] || die "vgpuctl binary not found at $VGPUCTL (build it or set VGPUCTL)"

# A private mount namespace needs CAP_SYS_ADMIN; without root, fall back to
# a user namespace.
if [ "$(id -u)" -eq 0 ]; then
	UNSHARE=(unshare -m)
else
	UNSHARE=(unshare -r -m)
fi

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMP=$(mktemp -d /dev/shm/vgpuctl-bench.XXXXXX)
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/vgpuctl-bench.XXXXXX")
fi
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# in_ns ROOT CMD...: run CMD with ROOT/sys bind-mounted on /sys.
in_ns() {
	local root=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner bash
	"${UNSHARE[@]}" -- bash -c 'mount --bind "$1/sys" /sys || exit 1; shift; exec "$@"' \
		in_ns "$root" "$@"
}

# sq STRING: single-quote STRING for hyperfine's -N command splitting.
sq() {
	case $1 in *"'"*) die "path with a single quote not supported: $1" ;; esac
	printf "'%s'" "$1"
}


# strace_total FILE: total number of syscalls from `strace -c` output.
strace_total() {
	awk '$NF == "total" { print $4 }' "$1"
}

# count_mdevctl FILE / count_vgpuctl FILE: number of types in each JSON.
# (grep exits 1 on zero matches; that is a valid count here)
count_mdevctl() { { grep -oE '"nvidia-[^"]*"[[:space:]]*:' "$1" || :; } | wc -l; }
count_vgpuctl() { { grep -oE '"type_id"[[:space:]]*:' "$1" || :; } | wc -l; }

VG_Q=$(sq "$VGPUCTL")

# bench_tree NAME G V T: build the tree, check counts, time, count syscalls.
# Sets R_* associative entries for NAME.
declare -A R_TYPES R_VG R_VGSD R_MD R_MDSD R_SC R_MDSC R_CPU
bench_tree() {
	local name=$1 g=$2 v=$3 t=$4
	local root=$TMP/$name
	local expect=$((g * v * t))
	local t0 t1 ign=()

	t0=$(date +%s%N)
	"$HERE/mksynth.sh" "$root" "$g" "$v" "$t"
	t1=$(date +%s%N)
	printf '  %-8s %6d types: tree built in %.2f s\n' "$name" "$expect" \
		"$(awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e9 }')" >&2

	# One run of each, outputs kept, to check they agree.
	local vg_rc=0
	"$VGPUCTL" --sysroot "$root" types --per-vf --json >"$TMP/$name.vg.json" \
		2>"$TMP/$name.vg.err" || vg_rc=$?
	if [ "$vg_rc" -ne 0 ]; then
		if [ "$expect" -eq 0 ]; then
			echo "  note: vgpuctl exits $vg_rc on the empty host" \
				"($(head -c 200 "$TMP/$name.vg.err")); timing it with -i" >&2
			ign=(-i)
		else
			cat "$TMP/$name.vg.err" >&2
			die "vgpuctl --sysroot $root types --per-vf --json failed (rc $vg_rc)"
		fi
	fi
	in_ns "$root" mdevctl types --dumpjson >"$TMP/$name.md.json" ||
		die "mdevctl types --dumpjson failed on $name"
	local n_vg n_md
	n_vg=$(count_vgpuctl "$TMP/$name.vg.json")
	n_md=$(count_mdevctl "$TMP/$name.md.json")
	if [ "$n_vg" -ne "$n_md" ] || [ "$n_md" -ne "$expect" ]; then
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
		echo "!! TYPE COUNT MISMATCH on $name: expected $expect," >&2
		echo "!! vgpuctl lists $n_vg (\"type_id\": keys), mdevctl lists $n_md (\"nvidia-*\": keys)" >&2
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
		exit 1
	fi

	# Timing: both commands under one hyperfine in one namespace.
	local style=none
	if [ "$VERBOSE" = 1 ]; then style=basic; fi
	in_ns "$root" hyperfine -N --style "$style" "${ign[@]}" \
		--warmup "$WARMUP" --runs "$RUNS" \
		--export-json "$TMP/$name.hf.json" \
		-n vgpuctl "$VG_Q --sysroot $(sq "$root") types --per-vf --json" \
		-n mdevctl "mdevctl types --dumpjson" >&2 ||
		die "hyperfine failed on $name"
	local means sds users syss
	mapfile -t means < <(hf_stat "$TMP/$name.hf.json" mean)
	mapfile -t sds < <(hf_stat "$TMP/$name.hf.json" stddev)
	mapfile -t users < <(hf_stat "$TMP/$name.hf.json" user)
	mapfile -t syss < <(hf_stat "$TMP/$name.hf.json" system)
	[ "${#means[@]}" -eq 2 ] || die "could not read means from $TMP/$name.hf.json"

	# Syscalls.
	strace -c -f -o "$TMP/$name.strace" \
		"$VGPUCTL" --sysroot "$root" types --per-vf --json >/dev/null 2>&1 ||
		[ "${#ign[@]}" -gt 0 ] || die "strace vgpuctl failed on $name"
	in_ns "$root" strace -c -f -o "$TMP/$name.md.strace" \
		mdevctl types --dumpjson >/dev/null || die "strace mdevctl failed on $name"

	R_TYPES[$name]=$expect
	R_VG[$name]=${means[0]}
	R_VGSD[$name]=${sds[0]:-0}
	R_MD[$name]=${means[1]}
	R_MDSD[$name]=${sds[1]:-0}
	R_SC[$name]=$(strace_total "$TMP/$name.strace")
	R_MDSC[$name]=$(strace_total "$TMP/$name.md.strace")
	R_CPU[$name]="${users[0]:-0} ${syss[0]:-0} ${users[1]:-0} ${syss[1]:-0}"
	rm -rf "$root"
}

echo "vgpuctl:  $VGPUCTL"
echo "mdevctl:  $(mdevctl --version 2>&1 | head -n1)"
echo "hyperfine: $(hyperfine --version | head -n1), -N, warmup $WARMUP, runs $RUNS"
echo "host:     $(uname -srm), $(nproc) CPUs; trees on $(df -P "$TMP" | awk 'NR == 2 { print $1 }') ($TMP)"
echo "series:   ${SERIES[*]} (GPUs x VFs/GPU x types/VF); reference host $REF"
echo "building and measuring trees..." >&2

NAMES=(empty)
bench_tree empty 0 0 0
ref_seen=0
for s in "${SERIES[@]}"; do
	[[ $s =~ ^([0-9]+)x([0-9]+)x([0-9]+)$ ]] || die "bad series point '$s' (want GxVxT)"
	bench_tree "$s" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
	NAMES+=("$s")
	if [ "$s" = "$REF" ]; then ref_seen=1; fi
done
if [ "$ref_seen" = 0 ]; then
	[[ $REF =~ ^([0-9]+)x([0-9]+)x([0-9]+)$ ]] || die "bad BENCH_REF '$REF'"
	bench_tree "$REF" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
fi

# ---------------------------------------------------------------------------
# Report.  Everything below is awk arithmetic on the numbers collected above.
{
	for n in "${NAMES[@]}"; do
		echo "$n ${R_TYPES[$n]} ${R_VG[$n]} ${R_VGSD[$n]} ${R_MD[$n]} ${R_MDSD[$n]} ${R_SC[$n]} ${R_MDSC[$n]} ${R_CPU[$n]}"
	done
	if [ "$ref_seen" = 0 ]; then
		n=$REF
		echo "REF:$n ${R_TYPES[$n]} ${R_VG[$n]} ${R_VGSD[$n]} ${R_MD[$n]} ${R_MDSD[$n]} ${R_SC[$n]} ${R_MDSC[$n]} ${R_CPU[$n]}"
	fi
} | awk -v ref="$REF" '
function pm(x, sd) { return sprintf("%8.3f ±%6.3f", x * 1e3, sd * 1e3) }
{
	name = $1; isref = 0
	if (name ~ /^REF:/) { name = substr(name, 5); isref = 1 }
	if (!isref) { order[++n] = name }
	types[name] = $2; vg[name] = $3; vgsd[name] = $4
	md[name] = $5; mdsd[name] = $6; sc[name] = $7; mdsc[name] = $8
	vgu[name] = $9; vgs[name] = $10; mdu[name] = $11; mds[name] = $12
}
END {
	printf "\n"
	printf "%-8s %6s  %-17s  %-17s %7s  %8s %7s %8s  %9s %9s  %10s\n",
		"tree", "types", "vgpuctl ms", "mdevctl ms", "ratio",
		"syscalls", "sc/type", "us/type", "dsc/dtype", "dus/dtype", "mdevctl sc"
	nm = 0
	for (i = 1; i <= n; i++) {
		k = order[i]; t = types[k]
		ratio = vg[k] > 0 ? md[k] / vg[k] : 0
		if (t > 0) {
			scpt = sprintf("%7.2f", sc[k] / t)
			uspt = sprintf("%8.3f", vg[k] * 1e6 / t)
		} else {
			scpt = sprintf("%7s", "-"); uspt = sprintf("%8s", "-")
		}
		dsc = sprintf("%9s", "-"); dus = sprintf("%9s", "-")
		if (i > 1) {
			p = order[i - 1]; dt = t - types[p]
			if (dt > 0) {
				dsc = sprintf("%9.2f", (sc[k] - sc[p]) / dt)
				m = (vg[k] - vg[p]) * 1e6 / dt
				dus = sprintf("%9.3f", m)
				# marginal costs between series points (not empty->first)
				if (i > 2) { marg[++nm] = m; mlabel[nm] = p "->" k }
			}
		}
		printf "%-8s %6d  %s  %s %6.1fx  %8d %s %s  %s %s  %10d\n",
			k, t, pm(vg[k], vgsd[k]), pm(md[k], mdsd[k]), ratio,
			sc[k], scpt, uspt, dsc, dus, mdsc[k]
	}
	printf "\nCPU time per run, ms (user + system; hyperfine means):\n"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "  %-8s vgpuctl %8.3f + %8.3f   mdevctl %8.3f + %8.3f\n",
			k, vgu[k] * 1e3, vgs[k] * 1e3, mdu[k] * 1e3, mds[k] * 1e3
	}
	printf "\n"
	printf "startup (empty host): vgpuctl %.3f ms, %d syscalls; mdevctl %.3f ms, %d syscalls\n",
		vg["empty"] * 1e3, sc["empty"], md["empty"] * 1e3, mdsc["empty"]
	r = ref; rt = types[r]
	printf "reference host %s (%d types): vgpuctl %.3f ms, mdevctl %.3f ms; excluding startup: vgpuctl %.3f us/type, mdevctl %.3f us/type\n",
		r, rt, vg[r] * 1e3, md[r] * 1e3,
		(vg[r] - vg["empty"]) * 1e6 / rt, (md[r] - md["empty"]) * 1e6 / rt

	# Per-type cost at each series point, start-up (empty host) taken out:
	# flat means the cost of a type does not grow with the size of the host.
	npc = 0
	for (i = 1; i <= n; i++) {
		k = order[i]
		if (types[k] > 0) { pc[++npc] = (vg[k] - vg["empty"]) * 1e6 / types[k]; plabel[npc] = k }
	}
	if (npc > 0) {
		sum = 0
		for (j = 1; j <= npc; j++) sum += pc[j]
		mean = sum / npc
		printf "per-type cost without start-up (us/type):"
		for (j = 1; j <= npc; j++) printf " %s %.3f;", plabel[j], pc[j]
		printf " mean %.3f\n", mean
		dev = 0
		for (j = 1; j <= npc; j++) {
			d = (pc[j] - mean) / mean * 100; if (d < 0) d = -d
			if (d > dev) dev = d
		}
		printf "flatness: max |x-mean|/mean = %.1f%%\n", dev
	}
	# The marginal cost between points, for information (noisier: a difference of two means).
	if (nm > 0) {
		printf "marginal cost between points (us/type):"
		for (j = 1; j <= nm; j++) printf " %s %.3f;", mlabel[j], marg[j]
		printf "\n"
	}

	ratio = md[r] / vg[r]
	scpt = sc[r] / rt
	printf "\ntargets (reference host %s unless noted):\n", r
	printf "  %-48s %8.1fx  %s\n", "mdevctl/vgpuctl ratio >= 20x", ratio,
		(ratio >= 20 ? "PASS" : "MISS")
	printf "  %-48s %8.2f   %s\n", "syscalls/type <= 10", scpt,
		(scpt <= 10 ? "PASS" : "MISS")
	if (npc > 0)
		printf "  %-48s %8.1f%%  %s\n",
			"per-type cost flat within +-25% (series)", dev,
			(dev <= 25 ? "PASS" : "MISS")
	printf "(benchmark only: PASS/MISS is informational, exit status is 0)\n"
}'
exit 0
