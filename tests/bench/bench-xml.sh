#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench-xml.sh - benchmark `vgpuctl xml` against `virt-install --print-xml`
# producing an equivalent libvirt domain (12 vCPUs pinned to 6 cores + their
# SMT siblings, 32 GiB, strict NUMA node 0, one NVIDIA mdev hostdev).
#
# This is a benchmark, not a test: it prints means, the ratio and PASS/MISS
# against the target, and exits 0 either way.  It exits non-zero only when a
# tool is missing or one of the commands fails.
#
# virt-install runs against test:///default (no hypervisor needed).  That
# driver only offers i686 guests without machine types, and --hostdev has
# no sub-options for mdev devices, so the equivalent domain is built as:
#   - arch x86_64, machine q35 and domain type kvm: --xml xpath edits
#     (--machine q35 is rejected by the test driver's capabilities);
#   - the mdev hostdev: --hostdev type=mdev plus xpath edits for
#     mode=subsystem, model=vfio-pci and source/address/@uuid
#     (--hostdev name=... would need an mdev node device on the connection;
#     test:///default has none);
# everything else uses ordinary options.  virt-install's log goes to a
# tmpfs XDG_CACHE_HOME, which if anything favours virt-install.
#
# Environment:
#   VGPUCTL       binary (default: build/src/vgpuctl under the repo root)
#   XML_SYSROOT   host tree (default: tests/data/hosts/a30-dual-mdev)
#   BENCH_WARMUP  hyperfine warmup runs (default 3)
#   BENCH_RUNS_VGPUCTL / BENCH_RUNS_VIRTINSTALL  runs (default 30 / 10)
#   BENCH_VERBOSE 1: also show hyperfine's own output

set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SYSROOT=${XML_SYSROOT:-tests/data/hosts/a30-dual-mdev}
case $SYSROOT in /*) ;; *) SYSROOT=$REPO/$SYSROOT ;; esac
WARMUP=${BENCH_WARMUP:-3}
RUNS_VG=${BENCH_RUNS_VGPUCTL:-30}
RUNS_VI=${BENCH_RUNS_VIRTINSTALL:-10}
VERBOSE=${BENCH_VERBOSE:-0}

NAME=bench
UUID=7c1f4b2e-3d5a-4e8b-9f60-1a2b3c4d5e6f
MDEV_UUID=0b5f3e4c-1d2a-4b6c-8e7f-9a0b1c2d3e4f

die() {
	echo "bench-xml: $*" >&2
	exit 1
}

for tool in hyperfine virt-install virt-xml-validate awk; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
[ -x "$VGPUCTL" ] || die "vgpuctl binary not found at $VGPUCTL (build it or set VGPUCTL)"
[ -d "$SYSROOT/sys" ] || die "host tree $SYSROOT/sys not found (set XML_SYSROOT)"
case "$VGPUCTL$SYSROOT$REPO" in *"'"*) die "paths with single quotes are not supported" ;; esac

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMP=$(mktemp -d /dev/shm/vgpuctl-bench-xml.XXXXXX)
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/vgpuctl-bench-xml.XXXXXX")
fi
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
export XDG_CACHE_HOME=$TMP/cache
mkdir -p "$XDG_CACHE_HOME"

VG_CMD=("$VGPUCTL" --sysroot "$SYSROOT" xml --template "$REPO/templates/domain.xml"
	--name "$NAME" --vgpu A30-6C
	--vcpus 12 --memory 32G --uuid "$UUID" --mdev-uuid "$MDEV_UUID")

# The same domain with virt-install: vCPU 2i -> host CPU i, vCPU 2i+1 -> its
# SMT sibling 48+i (i = 0..5), emulator on all 12, one guest NUMA cell bound
# strictly to host node 0, and the devices/timers vgpuctl's template has.
# (vgpuctl's <metadata> has no virt-install counterpart.)
PINS=
for ((i = 0; i < 6; i++)); do
	PINS+="vcpupin$((2 * i)).vcpu=$((2 * i)),vcpupin$((2 * i)).cpuset=$i,"
	PINS+="vcpupin$((2 * i + 1)).vcpu=$((2 * i + 1)),vcpupin$((2 * i + 1)).cpuset=$((48 + i)),"
done
PINS+="emulatorpin.cpuset=0-5,48-53"
# shellcheck disable=SC2054 # commas belong to virt-install's option syntax
VI_CMD=(virt-install --connect test:///default --print-xml
	--name "$NAME" --uuid "$UUID" --memory 32768
	--vcpus 12,placement=static --cputune "$PINS"
	--cpu host-passthrough,check=none,migratable=off,topology.sockets=1,topology.dies=1,topology.cores=6,topology.threads=2,numa.cell0.id=0,numa.cell0.cpus=0-11,numa.cell0.memory=33554432,numa.cell0.unit=KiB
	--numatune memory.mode=strict,memory.nodeset=0,memnode0.cellid=0,memnode0.mode=strict,memnode0.nodeset=0
	--features acpi=on,apic=on,pae=off
	--clock offset=utc,rtc_tickpolicy=catchup,pit_tickpolicy=delay,hpet_present=no
	--events on_poweroff=destroy,on_reboot=restart,on_crash=destroy
	--controller usb,model=qemu-xhci --controller pci,model=pcie-root
	--serial pty --console pty
	--channel unix,target.type=virtio,target.name=org.qemu.guest_agent.0
	--video model.type=none --memballoon none --rng /dev/urandom
	--hostdev "type=mdev,xpath0.set=./@mode=subsystem,xpath1.set=./@model=vfio-pci,xpath2.set=./@display=off,xpath3.set=./source/address/@uuid=$MDEV_UUID"
	--osinfo detect=on,require=off
	--xml ./@type=kvm --xml ./os/type/@arch=x86_64 --xml ./os/type/@machine=q35
	--xml xpath.delete=./devices/emulator
	--boot hd --disk none --network none --graphics none --noautoconsole)

# hyperfine -N splits commands like a shell; quote every word.
hfq() {
	local out='' w
	for w in "$@"; do out+="'$w' "; done
	printf '%s' "${out% }"
}


echo "vgpuctl:      $VGPUCTL"
echo "sysroot:      $SYSROOT"
echo "virt-install: $(virt-install --version 2>&1) (test:///default)"
echo "hyperfine:    $(hyperfine --version | head -n1), -N, warmup $WARMUP, runs $RUNS_VG (vgpuctl) / $RUNS_VI (virt-install)"
echo
echo "note: test:///default has no x86_64/q35 guest and virt-install's --hostdev has"
echo "      no mdev sub-options, so arch/machine/domain type and the mdev hostdev's"
echo "      mode, model, display and UUID are set with virt-install's --xml /"
echo "      xpathN.set edits (and the test driver's <emulator> is deleted)."
echo

# --- run each once, keep and validate the XML ------------------------------
"${VG_CMD[@]}" >"$TMP/vgpuctl.xml" 2>"$TMP/vgpuctl.err" || {
	cat "$TMP/vgpuctl.err" >&2
	die "vgpuctl xml failed: ${VG_CMD[*]}"
}
"${VI_CMD[@]}" >"$TMP/virt-install.xml" 2>"$TMP/virt-install.err" || {
	cat "$TMP/virt-install.err" >&2
	die "virt-install failed: ${VI_CMD[*]}"
}
for f in vgpuctl virt-install; do
	[ -s "$TMP/$f.xml" ] || die "$f produced no XML"
	if virt-xml-validate "$TMP/$f.xml" domain >"$TMP/$f.val" 2>&1; then
		printf 'virt-xml-validate %-13s OK\n' "$f:"
	else
		cat "$TMP/$f.val" >&2
		die "virt-xml-validate rejects $f output (saved copy: see above)"
	fi
done

# --- compare the parts that make the two domains equivalent ----------------
if command -v xmllint >/dev/null 2>&1; then
	q() { # file xpath
		xmllint --xpath "$2" "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//' || :
	}
	kib() { # value unit -> KiB (libvirt units; no unit means KiB)
		awk -v v="$1" -v u="$2" 'BEGIN {
			m["b"] = 1 / 1024; m["bytes"] = 1 / 1024; m["KB"] = 1000 / 1024
			m[""] = 1; m["k"] = 1; m["KiB"] = 1
			m["MB"] = 1e6 / 1024; m["M"] = 1024; m["MiB"] = 1024
			m["GB"] = 1e9 / 1024; m["G"] = 1048576; m["GiB"] = 1048576
			m["TB"] = 1e12 / 1024; m["T"] = 1073741824; m["TiB"] = 1073741824
			if (v == "") { print ""; exit }
			if (!(u in m)) { print v " " u; exit }
			printf "%.0f\n", v * m[u]
		}'
	}
	facts() { # file
		local f=$1
		echo "vcpus|$(q "$f" 'string(/domain/vcpu)') placement=$(q "$f" 'string(/domain/vcpu/@placement)') cpuset=$(q "$f" 'string(/domain/vcpu/@cpuset)')"
		echo "memory KiB|$(kib "$(q "$f" 'string(/domain/memory)')" "$(q "$f" 'string(/domain/memory/@unit)')")"
		echo "vcpupin|$(q "$f" 'count(/domain/cputune/vcpupin)') pins: $(
			for ((v = 0; v < 12; v++)); do
				printf '%s ' "$(q "$f" "string(/domain/cputune/vcpupin[@vcpu='$v']/@cpuset)")"
			done | sed 's/ $//')"
		echo "emulatorpin|$(q "$f" 'string(/domain/cputune/emulatorpin/@cpuset)')"
		echo "numatune|$(q "$f" 'string(/domain/numatune/memory/@mode)') $(q "$f" 'string(/domain/numatune/memory/@nodeset)'); memnode $(q "$f" 'string(/domain/numatune/memnode/@cellid)')->$(q "$f" 'string(/domain/numatune/memnode/@nodeset)') $(q "$f" 'string(/domain/numatune/memnode/@mode)')"
		echo "cpu|$(q "$f" 'string(/domain/cpu/@mode)') $(q "$f" 'string(/domain/cpu/topology/@sockets)')s/$(q "$f" 'string(/domain/cpu/topology/@cores)')c/$(q "$f" 'string(/domain/cpu/topology/@threads)')t"
		echo "guest numa|cell $(q "$f" 'string(/domain/cpu/numa/cell/@id)') cpus $(q "$f" 'string(/domain/cpu/numa/cell/@cpus)') $(kib "$(q "$f" 'string(/domain/cpu/numa/cell/@memory)')" "$(q "$f" 'string(/domain/cpu/numa/cell/@unit)')") KiB"
		echo "hostdev|$(q "$f" 'string(//devices/hostdev/@type)') $(q "$f" 'string(//devices/hostdev/@model)') display=$(q "$f" 'string(//devices/hostdev/@display)') $(q "$f" 'string(//devices/hostdev/source/address/@uuid)')"
		echo "os|$(q "$f" 'string(/domain/os/type/@arch)') $(q "$f" 'string(/domain/os/type/@machine)')"
	}
	facts "$TMP/vgpuctl.xml" >"$TMP/vg.facts"
	facts "$TMP/virt-install.xml" >"$TMP/vi.facts"
	echo
	printf '%-11s %-42s %-42s\n' "element" "vgpuctl" "virt-install"
	paste -d'|' "$TMP/vg.facts" "$TMP/vi.facts" |
		awk -F'|' '{ printf "%-11s %-42s %-42s%s\n", $1, $2, $4, ($2 == $4 ? "" : "  <- differs") }'

	# Structure: element paths present in only one of the two documents.
	paths() { # file: sorted unique element paths (/domain/devices/hostdev/...)
		xmllint --format "$1" | awk '
			/^[[:space:]]*<!--/ || /^[[:space:]]*<\?/ { next }
			{
				line = $0; sub(/^[[:space:]]+/, "", line)
				if (line ~ /^<\//) { depth--; next }
				if (line !~ /^</) next
				name = line; sub(/^</, "", name); sub(/[[:space:]>\/].*$/, "", name)
				stack[++depth] = name
				p = ""; for (i = 1; i <= depth; i++) p = p "/" stack[i]
				print p
				if (line ~ /\/>[[:space:]]*$/ || line ~ ("</" name ">[[:space:]]*$")) depth--
			}' | sort -u
	}
	paths "$TMP/vgpuctl.xml" >"$TMP/vg.paths"
	paths "$TMP/virt-install.xml" >"$TMP/vi.paths"
	only_vg=$(comm -23 "$TMP/vg.paths" "$TMP/vi.paths" | tr '\n' ' ' | sed 's/ $//')
	only_vi=$(comm -13 "$TMP/vg.paths" "$TMP/vi.paths" | tr '\n' ' ' | sed 's/ $//')
	echo "elements only in vgpuctl:      ${only_vg:-(none)}"
	echo "elements only in virt-install: ${only_vi:-(none)}"
else
	echo "(xmllint not found: skipping the element comparison)"
fi
echo
echo "vgpuctl XML: $(wc -c <"$TMP/vgpuctl.xml") bytes, virt-install XML: $(wc -c <"$TMP/virt-install.xml") bytes"

# --- timing ------------------------------------------------------------------
style=none
if [ "$VERBOSE" = 1 ]; then style=basic; fi
hyperfine -N --style "$style" --warmup "$WARMUP" --runs "$RUNS_VG" \
	--export-json "$TMP/vg.json" -n vgpuctl "$(hfq "${VG_CMD[@]}")" >&2 ||
	die "hyperfine (vgpuctl) failed"
hyperfine -N --style "$style" --warmup "$WARMUP" --runs "$RUNS_VI" \
	--export-json "$TMP/vi.json" -n virt-install "$(hfq "${VI_CMD[@]}")" >&2 ||
	die "hyperfine (virt-install) failed"

vg_mean=$(hf_stat "$TMP/vg.json" mean)
vg_sd=$(hf_stat "$TMP/vg.json" stddev)
vi_mean=$(hf_stat "$TMP/vi.json" mean)
vi_sd=$(hf_stat "$TMP/vi.json" stddev)

awk -v vg="$vg_mean" -v vgsd="$vg_sd" -v vi="$vi_mean" -v visd="$vi_sd" 'BEGIN {
	printf "\n%-14s %12s %10s\n", "command", "mean ms", "stddev ms"
	printf "%-14s %12.3f %10.3f\n", "vgpuctl xml", vg * 1e3, vgsd * 1e3
	printf "%-14s %12.3f %10.3f\n", "virt-install", vi * 1e3, visd * 1e3
	ratio = vi / vg
	printf "\nratio virt-install/vgpuctl: %.1fx\n", ratio
	printf "target >= 50x: %s\n", (ratio >= 50 ? "PASS" : "MISS")
	printf "(benchmark only: PASS/MISS is informational, exit status is 0)\n"
}'
exit 0
