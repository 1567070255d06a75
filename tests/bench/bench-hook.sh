#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hook's latency as libvirt sees it, process start included (target:
# <= 3 ms for prepare with the vGPU present and for release), against an
# empty C program (/bin/true) and vgpuctl --version, with hyperfine -N.
# The host is a copy of vfio-ts-l40s (plain files: the cost is vgpuctl's,
# not the emulator's) where domain vm1 owns L40S-8Q on VF c1:00.4.
#   bench-hook.sh       (VGPUCTL=path/to/vgpuctl to measure another build)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
command -v hyperfine >/dev/null || { echo "hyperfine missing: tests/install-deps.sh --bench" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$REPO/tests/data/hosts/vfio-ts-l40s" "$tmp/host"
cat >"$tmp/d.xml" <<'X'
<domain type='qemu'><name>vm1</name><uuid>11111111-2222-4333-8444-555555555555</uuid>
<memory unit='MiB'>1024</memory><vcpu>2</vcpu><os><type>hvm</type></os><devices/></domain>
X
"$VGPUCTL" --sysroot "$tmp/host" assign --from "$tmp/d.xml" -o "$tmp/a.xml" --vgpu L40S-8Q \
	--vf c1:00.4 2>/dev/null
# libvirt feeds the XML on stdin; hyperfine 1.15 has no --input, so every
# command runs as bash -c 'exec CMD <FILE' and bash's own cost (the same
# around /bin/true) is taken out: hook = mean(cmd) - mean(shell) + mean(true).
h="$VGPUCTL --sysroot $tmp/host hook"
sh() { printf "bash -c 'exec %s <%s'" "$1" "$tmp/a.xml"; }
hyperfine -N -w 20 -r 300 --export-json "$tmp/r.json" \
	-n true "/bin/true" -n shell "$(sh /bin/true)" \
	-n "prepare (present)" "$(sh "$h vm1 prepare begin -")" \
	-n "release (persistent)" "$(sh "$h vm1 release end -")" \
	-n "other domain" "$(sh "$h vm9 prepare begin -")" \
	-n version "$(sh "$VGPUCTL --version")" >/dev/null 2>&1
mapfile -t means < <(hf_stat "$tmp/r.json" mean)
names=(true shell "prepare (present)" "release (persistent)" "other domain" version)
for i in 2 3 4 5; do
	awk -v n="${names[$i]}" -v m="${means[$i]}" -v s="${means[1]}" -v t="${means[0]}" \
		'BEGIN { c = m - s + t; printf "%-22s %7.3f ms (process start included)  %5.2fx /bin/true\n", n, c * 1000, c / t }'
done
