#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The mirrored guests (xml --guest-topology mirror: guest-topology.sh's goldens, the 2-vGPU
# guest of the dual-A30 host and the HGX board's 8-vGPU guest) validate and are defined on a
# private libvirtd (daemon-lib.sh: its test driver, through the remote driver's RPC); read back
# with virsh dumpxml, libvirt kept what the mirror is made of: each pcie-expander-bus with its
# busNr and <node>, the root ports on them, the hostdevs' guest addresses behind those ports,
# and the guest NUMA cells with their pinning and memory nodes.
#   guest-topology-daemon.sh SRCDIR     (root)
# shellcheck disable=SC2015 # "A && B || fail": fail when either check fails
set -uo pipefail
# shellcheck source=tests/libvirt/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"
daemon_require "$0" "$@"
SRC=$(realpath "$1")
exp=$SRC/tests/data/expected/guest-topology
W=$(mktemp -d)
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	daemon_stop
	rm -rf "$W"
}
trap cleanup EXIT
daemon_start "$W" || {
	echo "FAIL: libvirtd did not answer: $(tail -3 "$W/libvirtd.log")"
	exit 1
}
echo '<node/>' >"$W/node.xml"
U="test+unix://$W/node.xml?socket=$DAEMON_SOCK"

# Each guest defined and dumped in one virsh session (the test driver forgets a definition when
# its connection closes: both goldens have the same UUID)
guests="two-nodes:mirror hgx:hgx"
for g in $guests; do
	n=${g%%:*}
	virt-xml-validate "$exp/$n.xml" domain >"$W/v" 2>&1 || fail "$n: virt-xml-validate: $(cat "$W/v")"
	virsh -q -c "$U" "define $exp/$n.xml; dumpxml ${g#*:}" >"$W/$n.dump.xml" 2>"$W/err" &&
		! grep -qi error "$W/err" || fail "$n: define on the daemon: $(cat "$W/err"; tail -3 "$W/libvirtd.log")"
done

# What the mirror is made of, one line each, as a golden says it and as libvirt kept it
parts() {
	python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET

d = ET.parse(sys.argv[1]).getroot()
def a(e, *keys):
    return " ".join("%s=%s" % (k, e.get(k)) for k in keys)
for c in d.iterfind("devices/controller[@type='pci']"):
    m = c.get("model")
    if m == "pcie-expander-bus":
        t = c.find("target")
        print("expander", c.get("index"), "busNr=%s" % t.get("busNr"), "node=%s" % t.findtext("node"))
    elif m == "pcie-root-port":
        print("root-port", c.get("index"), a(c.find("address"), "bus", "slot", "function"))
for h in d.iterfind("devices/hostdev"):
    s = h.find("source/address")
    print("hostdev", s.get("uuid") or a(s, "bus", "slot", "function"),
          a(h.find("address"), "bus", "slot", "function"))
for c in d.iterfind("cpu/numa/cell"):
    print("cell", a(c, "id", "cpus", "memory", "unit"))
for n in d.iterfind("numatune/memnode"):
    print("memnode", a(n, "cellid", "mode", "nodeset"))
for p in d.iterfind("cputune/vcpupin"):
    print("vcpupin", a(p, "vcpu", "cpuset"))
PY
}
for g in $guests; do
	n=${g%%:*}
	[ -s "$W/$n.dump.xml" ] || {
		fail "$n: virsh dumpxml gave nothing"
		continue
	}
	virt-xml-validate "$W/$n.dump.xml" domain >"$W/v" 2>&1 || fail "$n: libvirt's XML does not validate: $(cat "$W/v")"
	parts "$exp/$n.xml" >"$W/$n.want" && parts "$W/$n.dump.xml" >"$W/$n.got" ||
		fail "$n: cannot read the XML"
	# the golden has what is checked: expander buses with their node, root ports, hostdevs
	grep -q '^expander .* node=[0-9]' "$W/$n.want" && grep -q '^root-port ' "$W/$n.want" &&
		grep -q '^hostdev .* bus=0x' "$W/$n.want" && grep -q '^cell ' "$W/$n.want" ||
		fail "$n: the golden has no mirrored layout: $(cat "$W/$n.want")"
	diff -u "$W/$n.want" "$W/$n.got" >"$W/$n.diff" || fail "$n: libvirt did not keep the mirror: $(cat "$W/$n.diff")"
done
[ "$(grep -c '^expander ' "$W/hgx.got")" = 2 ] && [ "$(grep -c '^hostdev ' "$W/hgx.got")" = 8 ] &&
	[ "$(grep -c '^cell ' "$W/hgx.got")" = 2 ] || fail "hgx: not 2 expander buses, 8 vGPUs and 2 cells"
[ $fails = 0 ] && echo "ok: guest-topology-daemon (the mirrored guests defined on a private libvirtd, kept)"
exit $((fails > 0))
