#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench-boot.sh - a cold-boot `vgpuctl apply` on an 8-GPU H100 host against
# the same apply on each GPU alone.  Goal: the whole host takes <= 1.3x the
# time of its slowest GPU alone (GPUs are independent once MIG mode and VFs
# are known, so their slow steps can overlap).
#
# The host is built by mkboot.sh (8 copies of vfio-mig-h100's GPU) and booted
# by tests/apply/fake-nv-boot; every run gets a fresh copy.  The fake
# nvidia-smi and sriov-manage (tests/apply) take the time the real tools take,
# from their delays file (outside their lock, so two GPUs' steps overlap):
# 3 s per sriov-manage -e, 1 s per MIG mode change, 1 s per GPU instance.
# vGPU creation is vgpuctl's own sysfs write: where the FUSE emulator
# (tests/emu) can run, the tree is mounted through it with the rule
# `delay sys/devices/*/nvidia/current_vgpu_type 200` (0.2 s per vGPU; the VFs
# appear under the mount when the fake enables them and the write passes
# through to the tree, after the delay).  Without the emulator the runs use a
# plain tree and vGPU creation takes no time: the script says so.
#
# Config, every GPU: MIG on, GIs 3g.40gb, 2g.20gb, 2 x 1g.10gb, and vGPUs
# H100-3-40C, H100-2-20C, 2 x H100-1-10C (one per GI).  Per GPU that is
# 1 + 3 + 4 x 1 + 4 x 0.2 = 8.8 s of modelled tool time.
#
# Prints each run's wall time (and CPU time: vgpuctl and the fakes), the
# whole host against the slowest single GPU (target <= 1.3x; the GPUs are
# alike, so the ratio to the median single GPU follows, for information),
# the whole host and the first single GPU again without any delay (what the
# stand-ins, vgpuctl and the machine cost by themselves: the fakes serialise
# their bookkeeping on one lock and are bash, so on a small loaded machine
# they, not vgpuctl, may be what keeps 8 GPUs from overlapping), and whether
# apply's output (stdout and stderr together) stays in order: either one
# block per GPU (the lines naming a GPU, those of each GPU contiguous) or
# every line naming a GPU starts with it ("vgpuctl: " aside; "GPU ADDR",
# "ADDR" or "[ADDR"); lines naming no GPU count as headers.
#
# A benchmark: PASS/MISS is informational, the exit status is 0 unless a
# tool is missing or a command fails (an apply that exits non-zero or does
# not create every vGPU).
#
# Environment: VGPUCTL; VGPU_EMU (default: tests/vgpu-emu in VGPUCTL's build
# directory; BENCH_EMU=0 uses plain trees); BENCH_SINGLES (GPU indexes to time
# alone, default "0 1 2 3 4 5 6 7", about 10 s each; "0 7" for a shorter run); BENCH_SRIOV (3),
# BENCH_MIG (1), BENCH_GI (1), BENCH_VGPU_MS (200); BENCH_VERBOSE=1 prints
# the whole-host apply's output.

set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FAKES=$REPO/tests/apply
NGPU=8
BUSES=(18 2a 3a 5d 9a ab ba db) # as mkboot.sh
SINGLES=${BENCH_SINGLES:-0 1 2 3 4 5 6 7}
D_SRIOV=${BENCH_SRIOV:-3} D_MIG=${BENCH_MIG:-1} D_GI=${BENCH_GI:-1} VGPU_MS=${BENCH_VGPU_MS:-200}
NGI=4 NVGPU=4 # per GPU, as the config below
VERBOSE=${BENCH_VERBOSE:-0}

die() {
	echo "bench-boot: $*" >&2
	exit 1
}

for tool in awk flock sleep; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
for g in $SINGLES; do
	[[ $g =~ ^[0-7]$ ]] || die "BENCH_SINGLES: '$g' is not a GPU index 0-7"
done
[[ -n ${SINGLES// /} ]] || die "BENCH_SINGLES is empty"
for v in "$D_SRIOV" "$D_MIG" "$D_GI"; do
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "a delay '$v' is not a number of seconds"
done
[[ $VGPU_MS =~ ^[0-9]+$ ]] || die "BENCH_VGPU_MS=$VGPU_MS is not a number of milliseconds"

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMP=$(mktemp -d /dev/shm/vgpuctl-boot.XXXXXX)
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/vgpuctl-boot.XXXXXX")
fi
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if declare -F _emu_exit >/dev/null; then _emu_exit; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the emulator, where it can run
EMU=0
if [[ ${BENCH_EMU:-1} != 0 ]]; then
	export VGPU_EMU=${VGPU_EMU:-$(dirname "$VGPUCTL")/../tests/vgpu-emu}
	# shellcheck source=tests/emu/lib.sh
	. "$REPO/tests/emu/lib.sh"
	if emu_available; then EMU=1; fi
fi

# ---- the host, booted (each run writes the delays into its copy)
HOST=$TMP/host
"$HERE/mkboot.sh" "$HOST" "$NGPU" || die "mkboot.sh failed"
"$FAKES/fake-nv-boot" "$HOST" || die "fake-nv-boot failed"
n=$("$VGPUCTL" --sysroot "$HOST" gpus | grep -c "H100 PCIe") || true
[[ $n == "$NGPU" && -z $("$VGPUCTL" --sysroot "$HOST" vfs) ]] ||
	die "the booted host shows $n GPUs (expected $NGPU) or has VFs left"

config() { # DEVICES (YAML): the config for those GPUs
	cat <<-EOF
		version: v1
		mig-configs:
		  boot:
		    - devices: $1
		      mig-enabled: true
		      mig-devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
		vgpu-configs:
		  boot:
		    - devices: $1
		      vgpu-devices: {"H100-3-40C": 1, "H100-2-20C": 1, "H100-1-10C": 2}
	EOF
}
config all >"$TMP/all.yaml"
for ((g = 0; g < NGPU; g++)); do config "[\"0000:${BUSES[g]}:00.0\"]" >"$TMP/gpu$g.yaml"; done

# run NAME CONFIG NGPUS: apply CONFIG on a fresh copy of the booted host,
# with the delays (NODELAY=1: none); sets WALL, CPU (seconds) and OUT
# (apply's output file); dies when apply fails or leaves fewer than
# NGPUS x NVGPU vGPUs.
NODELAY=0
run() {
	local name=$1 cfg=$2 want=$(($3 * NVGPU)) root back t rc=0 made
	OUT=$TMP/$name.out
	if ((EMU)); then
		TMPDIR=$TMP emu_start "$HOST" || die "$name: the emulator did not start"
		trap cleanup EXIT # emu_start set its own
		((NODELAY)) || emu_fault "delay sys/devices/*/nvidia/current_vgpu_type $VGPU_MS"
		root=$EMU_ROOT back=$EMU_BACKING
	else
		rm -rf "$TMP/run"
		cp -a "$HOST" "$TMP/run"
		root=$TMP/run back=$TMP/run
	fi
	if ((!NODELAY)); then
		printf '%s\n' "sriov-enable $D_SRIOV" "mig $D_MIG" "gi-create $D_GI" \
			>"$back/var/lib/fake-nvidia/delays"
	fi
	local TIMEFORMAT='%3R %3U %3S'
	{ time FAKE_NV_ROOT=$back "$VGPUCTL" --sysroot "$root" apply -f "$cfg" --config boot \
		--nvidia-smi "$FAKES/fake-nvidia-smi" --sriov-manage "$FAKES/fake-sriov-manage" \
		>"$OUT" 2>&1 || rc=$?; } 2>"$TMP/time"
	read -r WALL t CPU <"$TMP/time"
	CPU=$(awk -v u="$t" -v s="$CPU" 'BEGIN { printf "%.3f", u + s }')
	made=0
	for t in "$back"/sys/bus/pci/devices/*/nvidia/current_vgpu_type; do
		[[ -e $t ]] || continue
		read -r t <"$t" || true # vgpuctl writes no newline
		if [[ $t != 0 ]]; then made=$((made + 1)); fi
	done
	cp "$back/var/lib/fake-nvidia/calls" "$TMP/$name.calls"
	if ((EMU)); then
		grep -c "current_vgpu_type .* -> 0$" "$EMU_LOG" >"$TMP/$name.writes" || true
		emu_stop || die "$name: the emulator failed"
		rm -rf "$EMU_DIR"
	fi
	if ((rc != 0 || made != want)); then
		sed 's/^/    /' "$OUT" >&2
		die "$name: apply exited $rc, $made of $want vGPUs made"
	fi
}

floor1=$(awk -v m="$D_MIG" -v s="$D_SRIOV" -v g="$D_GI" -v v="$VGPU_MS" -v ng=$NGI -v nv=$NVGPU \
	'BEGIN { printf "%.1f", m + s + ng * g + nv * v / 1000 }')
echo "host: $NGPU x H100 PCIe (mkboot.sh), booted; per GPU: MIG on, $NGI GIs, $NVGPU vGPUs"
echo "delays: sriov-manage -e ${D_SRIOV} s, MIG mode ${D_MIG} s, GPU instance ${D_GI} s, vGPU $((VGPU_MS)) ms"
if ((EMU)); then
	echo "vGPU creation: through the FUSE emulator (delay ${VGPU_MS} ms per current_vgpu_type write)"
else
	echo "vGPU creation: NOT timed (no usable FUSE emulator: plain tree, the writes take no time);"
	echo "  the modelled floor below still counts ${VGPU_MS} ms per vGPU"
fi
read -r load _ </proc/loadavg || load='?'
echo "machine: $(nproc 2>/dev/null || echo ?) CPUs, load average $load at the start"
echo "modelled tool time per GPU: $floor1 s (one GPU after another: $(awk -v f="$floor1" -v n=$NGPU 'BEGIN { printf "%.1f", f * n }') s)"
echo

run all "$TMP/all.yaml" "$NGPU"
whole=$WALL whole_cpu=$CPU
cp "$OUT" "$TMP/whole.out"
printf '%-24s %7.2f s wall  %6.2f s CPU\n' "whole host ($NGPU GPUs)" "$whole" "$whole_cpu"
if ((EMU)); then
	[[ $(<"$TMP/all.writes") == $((NGPU * NVGPU)) ]] ||
		echo "  note: $(<"$TMP/all.writes") vGPU writes went through the emulator, expected $((NGPU * NVGPU))"
fi

slow=0 slow_g='' singles=()
for g in $SINGLES; do
	run "gpu$g" "$TMP/gpu$g.yaml" 1
	printf '%-24s %7.2f s wall  %6.2f s CPU\n' "GPU $g (0000:${BUSES[g]}:00.0) alone" "$WALL" "$CPU"
	others=$(grep -E -- ' -mig | -cgi | -dci| -dgi|^sriov-manage -[ed] ' "$TMP/gpu$g.calls" |
		grep -vc "0000:${BUSES[g]}:00.0" || true)
	((others == 0)) || echo "  note: $others changing calls on other GPUs"
	if awk -v a="$WALL" -v b="$slow" 'BEGIN { exit !(a > b) }'; then slow=$WALL slow_g=$g; fi
	singles+=("$WALL")
done

echo
ratio=$(awk -v w="$whole" -v s="$slow" 'BEGIN { printf "%.2f", w / s }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.3 ? "PASS" : "MISS") }')
printf 'whole host %.2f s / slowest GPU alone %.2f s (GPU %s) = %sx   target <= 1.3x: %s\n' \
	"$whole" "$slow" "$slow_g" "$ratio" "$verdict"
# the GPUs are alike, so the slowest of several is partly noise: the median, for information
median=$(printf '%s\n' "${singles[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
awk -v w="$whole" -v m="$median" -v n=${#singles[@]} 'BEGIN {
	printf "(against the median of the %d single-GPU times, %.2f s: %.2fx)\n", n, m, w / m }'
# what the stand-ins and this machine cost by themselves: the same runs without delays
NODELAY=1
g0=${SINGLES%% *}
run bare-all "$TMP/all.yaml" "$NGPU"
bare_whole=$WALL
run bare-one "$TMP/gpu$g0.yaml" 1
printf 'without delays (the stand-ins, vgpuctl and this machine alone): whole host %.2f s, GPU %s alone %.2f s\n' \
	"$bare_whole" "$g0" "$WALL"
ncpu=$(nproc 2>/dev/null || echo 1)
awk -v c="$whole_cpu" -v n="$ncpu" -v w="$whole" -v f="$floor1" 'BEGIN {
	printf "whole host: %.1f s of CPU (vgpuctl and the fakes) on %d CPUs: >= %.1f s of wall time on CPU alone; modelled tool time %.1f s\n", c, n, c / n, f }'

# ---- order of the whole-host output
mapfile -t LINES <"$TMP/whole.out"
declare -A seen=()
prev='' runs=0 prefixed=1 named=0 headers=0 first_bad=''
for line in "${LINES[@]}"; do
	gpu=
	for b in "${BUSES[@]}"; do
		if [[ $line == *"0000:$b:"* ]]; then gpu=$b; break; fi
	done
	if [[ -z $gpu ]]; then
		headers=$((headers + 1))
		continue
	fi
	named=$((named + 1))
	if [[ $gpu != "$prev" ]]; then
		runs=$((runs + 1))
		if [[ -n ${seen[$gpu]:-} && -z $first_bad ]]; then first_bad=$line; fi
		seen[$gpu]=1
		prev=$gpu
	fi
	rest=${line#vgpuctl: }
	rest=${rest#\[}
	rest=${rest#GPU }
	[[ $rest == "0000:$gpu:"* ]] || prefixed=0
done
blocks=0
[[ -n $first_bad || $named == 0 ]] || blocks=1
how=
((blocks)) && how="one block per GPU ($runs blocks)"
((prefixed && named)) && how="${how:+$how, }every line prefixed by its GPU"
if [[ -n $how ]]; then
	echo "output: $named lines name a GPU, $headers headers: $how: PASS"
else
	echo "output: $named lines name a GPU, $headers headers: $runs runs of one GPU's lines for ${#seen[@]} GPUs, and not every line starts with its GPU: MISS"
	echo "  first line of a GPU seen before: $first_bad"
fi
if [[ $VERBOSE == 1 ]]; then
	echo
	sed "s|$FAKES/||" "$TMP/whole.out"
fi
exit 0
