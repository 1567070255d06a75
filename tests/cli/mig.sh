#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl mig plan on fixture hosts and bare boards: stdout (text and JSON) and
# stderr + exit code compared byte for byte with tests/data/expected/mig/.
# VGPU_TEST_REGENERATE=1 rewrites the goldens; review the diff.
#   mig.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
exp=tests/data/expected/mig
hosts=tests/data/hosts
lgi=tests/data/mig
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() { # NAME ARGS...
	local name=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	echo "exit $?" >>"$tmp/err"
	local ext=txt
	case " $* " in *" --json "*) ext=json ;; esac
	golden_cmp "$tmp/out" "$exp/$name.$ext" "vgpuctl $*"
	golden_cmp "$tmp/err" "$exp/$name.err" "vgpuctl $* (stderr)"
}

# mig show on another host's tree: this host's nvidia-smi is not asked (as NVML is
# not loaded), unless --nvidia-smi names one; the answer is what sysfs tells
check show-sysroot --sysroot $hosts/vfio-mig-h100 mig show
for json in "" --json; do
	sfx=${json:+-json}
	# A30 with MIG off (GPU 3b): 2g first, then the 1g pair beside it
	check "a30-mixed$sfx" --sysroot $hosts/a30-dual-mdev $json mig plan --gpu 0000:3b:00.0 \
		2g.12gb 1g.6gbx2
	# vGPU profiles stand for their GI profile
	check "a30-vgpu$sfx" --sysroot $hosts/a30-dual-mdev $json mig plan --gpu 3b:00.0 A30-1-6Cx4
	# no host: a board by model name
	check "board-a100-80$sfx" $json mig plan --board "A100 80GB" 1g.10gb 2g.20gb 3g.40gb 1g.10gb
	# an existing 1g.6gb at 1 leaves 2g.12gb only at 2
	check "board-a30-existing$sfx" $json mig plan --board A30 --lgi $lgi/lgi-a30-one.txt \
		2g.12gb 1g.6gb
	# --lgi overrides the GI count procfs gives
	check "h100-mig-off$sfx" --sysroot $hosts/vfio-mig-h100 $json mig plan --gpu ca:00.0 \
		--lgi $lgi/lgi-mig-off.txt H100-3-40C
done
# errors: one line, exit 1 (2 for usage)
check a30-too-big --sysroot $hosts/a30-dual-mdev mig plan --gpu 3b:00.0 4g.24gb 1g.6gb
check h100-full --sysroot $hosts/vfio-mig-h100 mig plan --gpu ca:00.0 \
	--lgi $lgi/lgi-h100-full.txt 1g.10gb
# 1g.6gb at 0 and 3: two free slices, but not where a 2g.12gb may start
check a30-no-placement mig plan --board A30 --lgi $lgi/lgi-a30-ends.txt 2g.12gb
# GIs counted in procfs but no --lgi: planned on an empty GPU, with a warning
check h100-gis-unknown --sysroot $hosts/vfio-mig-h100 mig plan --gpu ca:00.0 7g.80gb
check bad-profile mig plan --board A30 3g.20gb
check bad-board mig plan --board L40S 1g.5gb
check not-mig --sysroot $hosts/vfio-ts-l40s mig plan --gpu 41:00.0 1g.12gb
check bad-lgi mig plan --board A30 --lgi $lgi/lgi-h100-full.txt 1g.6gb
check no-target mig plan 1g.6gb
check no-subcommand mig
# JSON parses
if command -v python3 >/dev/null; then
	for f in "$exp"/*-json.json; do
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" ||
			{ echo "FAIL: $f is not JSON"; fail=1; }
	done
fi
exit $fail
