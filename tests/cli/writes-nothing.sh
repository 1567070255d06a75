#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A dry run, and a config refused before anything runs, write nothing under
# the root: no lock file, no records, no catalogue.  The refused apply keeps
# only its result for `vgpuctl metrics` (var/lib/vgpuctl/runs/apply@LABEL,
# exit=1): a boot with a broken config must show up in monitoring.
#   writes-nothing.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
find "$tmp/host" | sort >"$tmp/before"
check() { # LABEL: nothing under the root changed
	find "$tmp/host" | sort >"$tmp/after"
	if ! cmp -s "$tmp/before" "$tmp/after"; then
		echo "FAIL: $1 wrote under the root:"
		diff "$tmp/before" "$tmp/after"
		fail=1
	fi
}
v() { timeout 20 "$bin" --sysroot "$tmp/host" "$@" >"$tmp/out" 2>"$tmp/err"; }

v assign --from tests/data/domains/plain.xml --vgpu A30-6C --dry-run ||
	{ echo "FAIL: assign --dry-run"; cat "$tmp/err"; fail=1; }
grep -q "<hostdev" "$tmp/out" || { echo "FAIL: assign --dry-run printed no domain"; fail=1; }
check "assign --dry-run"
v release --from tests/data/domains/existing.xml --dry-run ||
	{ echo "FAIL: release --dry-run"; cat "$tmp/err"; fail=1; }
check "release --dry-run"
cat >"$tmp/cfg.yaml" <<'YAML'
version: v1
vgpu-configs:
  bad:
    - devices: [7]
      vgpu-devices:
        "A30-6C": 1
YAML
if v apply -f "$tmp/cfg.yaml" --config bad --nvidia-smi /bin/false --sriov-manage /bin/false; then
	echo "FAIL: a config for GPU index 7 was applied"
	fail=1
fi
grep -q "cfg.yaml:4: no GPU with index 7" "$tmp/err" || { echo "FAIL: refusal:"; cat "$tmp/err"; fail=1; }
grep -qx "exit=1" "$tmp/host/var/lib/vgpuctl/runs/apply@bad" 2>/dev/null ||
	{ echo "FAIL: the refused apply's result was not kept (exit=1)"; fail=1; }
rm -r "$tmp/host/var/lib/vgpuctl/runs" && rmdir "$tmp/host/var/lib/vgpuctl" "$tmp/host/var/lib" "$tmp/host/var" 2>/dev/null
check "apply of a refused config"
# started with stdin, stdout and stderr closed, a warning after the lock is
# taken (metadata naming a vGPU no record holds) must not land in the lock file
timeout 20 "$bin" --sysroot "$tmp/host" release --from tests/data/domains/existing.xml \
	-o "$tmp/released.xml" 0<&- 1>&- 2>&-
if [ -s "$tmp/host/run/vgpuctl/lock" ]; then
	echo "FAIL: with fds 0-2 closed, output went into the lock file:"
	cat "$tmp/host/run/vgpuctl/lock"
	fail=1
fi
grep -q "<name>db01</name>" "$tmp/released.xml" || { echo "FAIL: fds 0-2 closed: no output"; fail=1; }
[ $fail = 0 ] && echo "ok: dry runs and refused configs write nothing; fds 0-2 closed are safe"
exit $fail
