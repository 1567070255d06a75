#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ansible-test sanity on the modules of contrib/ansible/library, copied into a collection
# (vgpuctl.host) in a temporary git tree, offline:
#  - every sanity test without Python requirements;
#  - validate-modules, pep8, pylint, yamllint, ansible-doc, runtime-metadata and import,
#    whose requirements ansible-test installs with pip into a virtual environment of its
#    own: offline, that environment is made here from the python that runs ansible-test
#    with its system site packages, where Debian's packages provide them (python3-voluptuous,
#    pycodestyle, pylint, yamllint); without them the test is skipped and named.
#   sanity.sh SRCDIR      (exit 77 without ansible-test)
set -euo pipefail
SRC=$(realpath "$1")
command -v ansible-test >/dev/null || {
	echo "no ansible-test: skipped"
	exit 77
}
# the python that runs ansible-test, first in PATH so that --python X.Y names it
PY=$(sed -n '1s/^#! *\([^ ]*\).*/\1/p' "$(command -v ansible-test)")
[ -x "$PY" ] || PY=$(command -v python3)
PYV=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
T=$(mktemp -d "${TMPDIR:-/tmp}/vgpu-sanity.XXXXXX")
trap 'rm -rf "$T"' EXIT
PATH=$(dirname "$PY"):$PATH
export HOME=$T/home LC_ALL=C.UTF-8 PATH
C=$T/ansible_collections/vgpuctl/host
mkdir -p "$HOME" "$C/plugins/modules" "$C/meta"
cp "$SRC"/contrib/ansible/library/*.py "$C/plugins/modules/"
cp "$SRC/contrib/ansible/README.md" "$C/README.md"
cat >"$C/galaxy.yml" <<'EOF'
namespace: vgpuctl
name: host
version: 1.0.0
readme: README.md
authors: [vgpuctl maintainers]
description: Modules over vgpuctl for NVIDIA vGPU hypervisors
license: [GPL-2.0-or-later]
EOF
printf -- '---\nrequires_ansible: ">=2.14.0"\n' >"$C/meta/runtime.yml"
cd "$C"
git init -q . && git add -A
fails=0
sanity() { ansible-test sanity --color no --python "$PYV" "$@" >"$T/out" 2>&1; }

# the tests without requirements, in one run
REQ=(validate-modules pep8 pylint yamllint ansible-doc runtime-metadata import)
skip=()
for t in "${REQ[@]}"; do skip+=(--skip-test "$t"); done
if ! sanity "${skip[@]}"; then
	echo "FAIL: ansible-test sanity:" >&2
	cat "$T/out" >&2
	fails=1
fi
# each test with requirements: where pip is missing, ansible-test names the environment
# it wanted; make it from the system python and run again
skipped=()
for t in "${REQ[@]}"; do
	if ! sanity --test "$t"; then
		venv=$(sed -n 's/^FATAL: Python .* at "\(.*\)\/bin\/python" does not have pip available\.$/\1/p' "$T/out")
		if [ -n "$venv" ]; then
			rm -rf "$venv"
			"$PY" -m venv --system-site-packages --without-pip "$venv"
			echo '[]' >"$venv/meta.install.json"
			echo 'true' >"$venv/meta.yaml.json"
			: >"$venv/marker.txt"
			if sanity --test "$t"; then continue; fi
			# a requirement the system does not have either
			if grep -q "No module named\|ModuleNotFoundError" "$T/out"; then
				skipped+=("$t")
				continue
			fi
		fi
		echo "FAIL: ansible-test sanity --test $t:" >&2
		cat "$T/out" >&2
		fails=1
	fi
done
[ ${#skipped[@]} = 0 ] || echo "skipped (requirements not installed): ${skipped[*]}"
exit $fails
