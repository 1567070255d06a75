#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench-inventory.sh - what a fleet collector pays per host: `vgpuctl
# inventory --json` (one reading of the host, every section) against the
# five listings it replaces run one after another (gpus, vfs, types, vgpus,
# topology, each --json), and `metrics`, on the reference host (8x16x20,
# built by mksynth.sh).  One ratio, against its goal:
#
#   wall time inventory / (sum of the five listings)  <= 0.5x
#
# A benchmark: PASS/MISS is informational and the exit status is 0 unless a
# tool is missing or a command fails.
# Environment: VGPUCTL, BENCH_REF (8x16x20), BENCH_RUNS (40), BENCH_WARMUP (3).

set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RUNS=${BENCH_RUNS:-40}
WARMUP=${BENCH_WARMUP:-3}
REF=${BENCH_REF:-8x16x20}
command -v hyperfine >/dev/null || { echo "bench-inventory: hyperfine is missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
IFS=x read -r ngpu nvf ntype <<<"$REF"
bash "$HERE/mksynth.sh" "$tmp/host" "$ngpu" "$nvf" "$ntype" >/dev/null
v="$VGPUCTL --sysroot $tmp/host"
five="$v gpus --json >/dev/null; $v vfs --json >/dev/null; $v types --json >/dev/null; \
$v vgpus --json >/dev/null; $v topology --json >/dev/null"
# the document holds what the listings hold: check before timing
"$VGPUCTL" --sysroot "$tmp/host" inventory --json >"$tmp/doc.json"
for c in gpus vfs types vgpus topology; do
	"$VGPUCTL" --sysroot "$tmp/host" "$c" --json >"$tmp/$c.json"
done
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/doc.json"))
for c in ("gpus", "vfs", "types", "vgpus", "topology"):
    assert d[c] == json.load(open("%s/%s.json" % (sys.argv[1], c)))[c], c
PY
hyperfine -N --runs "$RUNS" --warmup "$WARMUP" --export-json "$tmp/inv.json" \
	"$v inventory --json" "$v metrics" >/dev/null 2>&1
hyperfine --runs "$RUNS" --warmup "$WARMUP" --export-json "$tmp/five.json" "$five" >/dev/null 2>&1
mapfile -t inv < <(hf_stat "$tmp/inv.json" mean)
mapfile -t sh < <(hf_stat "$tmp/five.json" mean)
# the five through a shell: take the shell's own start out (an empty command, measured)
hyperfine --runs "$RUNS" --warmup "$WARMUP" --export-json "$tmp/shell.json" ":" >/dev/null 2>&1
mapfile -t empty < <(hf_stat "$tmp/shell.json" mean)
awk -v inv="${inv[0]}" -v met="${inv[1]}" -v five="${sh[0]}" -v sh="${empty[0]}" -v ref="$REF" 'BEGIN {
	five -= sh
	r = inv / five
	printf "host %s: inventory --json %.1f ms, the five listings %.1f ms, metrics %.1f ms\n",
		ref, inv * 1000, five * 1000, met * 1000
	printf "inventory / five listings: %.2fx (goal <= 0.5x) %s\n", r, r <= 0.5 ? "PASS" : "MISS"
}'
