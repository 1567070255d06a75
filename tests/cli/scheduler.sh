#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl scheduler on a copy of the L40S fixture host (0000:41:00.0, 0000:c1:00.0):
# live from the NVML stand-in (sched-<BDF>) or the kernel log, configured from
# etc/modprobe.d (per-device beating global), pending when they differ; --set
# writes etc/modprobe.d/vgpuctl-scheduler.conf keeping the other keys and GPUs,
# --dry-run writes nothing, fixed share is refused in mixed-size mode, a
# malformed line is named with its file and line.  stdout and stderr + exit
# compared byte for byte with tests/data/expected/scheduler/.
# VGPU_TEST_REGENERATE=1 rewrites the goldens; review the diff.
#   scheduler.sh VGPUCTL SRCDIR NVML_STANDIN
set -u
bin=$(realpath "$1") src=$2 nvml=$(realpath "$3")
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/scheduler
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
h=$tmp/h
cp -a tests/data/hosts/vfio-ts-l40s "$h"
st=$h/var/lib/fake-nvidia
conf=$h/etc/modprobe.d
mkdir -p "$st" "$h/var/log"

check() { # NAME ARGS... (vgpuctl's, after --sysroot and --nvml)
	local name=$1
	shift
	FAKE_NV_ROOT=$h "$bin" --sysroot "$h" --nvml "$nvml" "$@" >"$tmp/out" 2>"$tmp/err"
	echo "exit $?" >>"$tmp/err"
	sed -i "s|$tmp|TMP|g" "$tmp/out" "$tmp/err"
	local ext=txt
	case " $* " in *" --json "*) ext=json ;; esac
	golden_cmp "$tmp/out" "$exp/$name.$ext" "vgpuctl $*"
	golden_cmp "$tmp/err" "$exp/$name.err" "vgpuctl $* (stderr)"
}

# nothing configured, nothing said: the driver's default
check default scheduler

# 41: global equal share, live in the kernel log (NVML does not answer for it);
# c1: its per-device fixed share 24 ms beats the global one, live from NVML
mkdir -p "$conf"
cat >"$conf/nvidia.conf" <<'CONF'
# site settings
options nvidia NVreg_RegistryDwords="PerfLevelSrc=0x2222;RmPVMRL=0x01" \
	NVreg_RegistryDwordsPerDevice="pci=0000:c1:00.0;RmPVMRL=0x00180013"
CONF
cat >"$h/var/log/kern.log" <<'LOG'
Nov 28 09:00:01 host kernel: [   14.655022] NVRM: GPU at 0000:41:00.0 has software scheduler ENABLED with policy BEST_EFFORT.
Nov 28 10:00:01 host kernel: [   14.655022] NVRM: GPU at 0000:41:00.0 has software scheduler ENABLED with policy EQUAL_SHARE.
Nov 28 10:00:01 host kernel: [   14.655029] NVRM: Software scheduler timeslice set to 2000uS.
LOG
# the stand-in answers the time slice in ns, as NVML documents it (nvmlVgpuSchedulerParams_t
# "The timeslice in ns for each software run list", docs.nvidia.com/deploy/nvml-api): 24 ms
printf 'policy fixed-share\ntimeslice 24\n' >"$st/sched-0000:c1:00.0"
check live scheduler
check live-json scheduler --json
check one-gpu scheduler c1:00.0
# NVML says equal share on c1: the configured fixed share waits for a reload
printf 'policy equal-share\ntimeslice 2\n' >"$st/sched-0000:c1:00.0"
check pending scheduler

# --dry-run prints the file and writes nothing
check dry-run-global scheduler --set equal-share --timeslice 3 --dry-run
[ -e "$conf/vgpuctl-scheduler.conf" ] && { echo "FAIL: --dry-run wrote the file"; fail=1; }
# per device: c1's entry (from nvidia.conf) kept, 41's added; the file is what --dry-run said
check dry-run-41 scheduler --set fixed-share 0000:41:00.0 --dry-run
check set-41 scheduler --set fixed-share 0000:41:00.0
golden_cmp "$conf/vgpuctl-scheduler.conf" "$exp/dry-run-41.txt" "the file --set wrote"
check set-41-again scheduler --set fixed-share 41:00.0
check after-set scheduler
# every GPU: the other registry key kept; c1 and 41 keep their own (warnings)
check set-global scheduler --set equal-share --timeslice 3
golden_cmp "$conf/vgpuctl-scheduler.conf" "$exp/set-global.conf" "the file --set wrote"
check set-json scheduler --json --set equal-share --average-factor 60 --frequency 960 --dry-run

# a later file overrides ours: said
printf 'options nvidia NVreg_RegistryDwordsPerDevice="pci=0000:41:00.0;RmPVMRL=0x01"\n' \
	>"$conf/zz-local.conf"
check later-file scheduler --set equal-share c1:00.0 --dry-run
rm "$conf/zz-local.conf"

# mixed-size mode: fixed share refused on that GPU and for every GPU; equal share is fine
echo 1 >"$st/hetero-0000:c1:00.0"
cp "$conf/vgpuctl-scheduler.conf" "$tmp/before"
check hetero-one scheduler --set fixed-share c1:00.0
check hetero-all scheduler --set fixed-share
cmp -s "$tmp/before" "$conf/vgpuctl-scheduler.conf" || { echo "FAIL: a refused --set wrote"; fail=1; }
check hetero-es scheduler --set equal-share c1:00.0 --dry-run
rm "$st/hetero-0000:c1:00.0"

# a malformed line: one error naming the file and line, for show and --set
printf '# x\noptions nvidia NVreg_RegistryDwords="RmPVMRL=0x5"\n' >"$conf/bad.conf"
check malformed scheduler
check malformed-set scheduler --set best-effort
printf 'options nvidia NVreg_RegistryDwordsPerDevice="RmPVMRL=0x11"\n' >"$conf/bad.conf"
check malformed-pci scheduler
rm "$conf/bad.conf"

# apply's scheduler: key on a fresh copy: a write step when the file differs, none when
# it is the same; assert says when it differs; fixed share where the config makes
# mixed sizes is refused before anything changes
h=$tmp/a
cp -a tests/data/hosts/vfio-ts-l40s "$h"
st=$h/var/lib/fake-nvidia
mkdir -p "$st"
cat >"$tmp/host.yaml" <<'Y'
version: v1
vgpu-configs:
  ts:
    - devices: ["0000:41:00.0"]
      vgpu-devices: {}
  mixed:
    - devices: ["0000:c1:00.0"]
      vgpu-devices: {"L40S-4Q": 1, "L40S-8Q": 1}
scheduler:
  ts:
    - policy: equal-share
      timeslice: 3
    - devices: ["0000:c1:00.0"]
      policy: fixed-share
  mixed:
    - policy: fixed-share
Y
apply=(-f "$tmp/host.yaml" --nvidia-smi /nonexistent)
check apply-dry apply "${apply[@]}" --config ts --dry-run
check apply-dry-json apply "${apply[@]}" --config ts --dry-run --json
check apply apply "${apply[@]}" --config ts
golden_cmp "$h/etc/modprobe.d/vgpuctl-scheduler.conf" "$exp/apply.conf" "the file apply wrote"
check apply-same apply "${apply[@]}" --config ts --dry-run --json
check assert-same assert "${apply[@]}" --config ts
sed -i 's/timeslice: 3/timeslice: 4/' "$tmp/host.yaml"
check assert-differs assert "${apply[@]}" --config ts
check apply-mixed apply "${apply[@]}" --config mixed --dry-run

# the directories modprobe reads: a distribution's lib/modprobe.d file counts (named
# after ours, its per-device value replaces ours whole), and a file of the same name
# in etc/modprobe.d hides it
mkdir -p "$h/lib/modprobe.d"
printf 'options nvidia NVreg_RegistryDwordsPerDevice="pci=0000:41:00.0;RmPVMRL=0x11"\n' \
	>"$h/lib/modprobe.d/zz-distro.conf"
check lib-dir scheduler
printf '# nothing for nvidia here\n' >"$h/etc/modprobe.d/zz-distro.conf"
check lib-dir-hidden scheduler

# arguments
check bad-timeslice scheduler --set equal-share --timeslice 31
check bad-policy scheduler --set round-robin
check timeslice-alone scheduler --timeslice 3
check be-timeslice scheduler --set best-effort --timeslice 3
check both-kinds scheduler --set equal-share --timeslice 3 --average-factor 2 --frequency 100
check bad-gpu scheduler 0000:99:00.0
exit $fail
