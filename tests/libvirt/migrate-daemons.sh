#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live migration between two real libvirt daemons (issue #28): a source and a
# destination libvirtd, each in its own mount namespace (bind mounts over its
# config, run, state and log directories; live-and-hooks.md 2.4) with its own
# host UUID (host_uuid in libvirtd.conf) and its own emulated host (tests/emu:
# vgpuctl's hook is installed with that host's --sysroot), answering on its
# own UNIX socket.  QEMU's migration stream goes over a UNIX socket too.
#
# A small TCG guest that names an L40S-8Q vGPU in vgpuctl's metadata (not as
# a hostdev: QEMU cannot open an emulated VF, and libvirt 9 refuses a
# vendor-VFIO hostdev anyway) runs on the source, its --per-start vGPU made
# by the source's hook.  `virsh migrate --live --p2p` then moves it: libvirt
# calls `migrate begin` on the destination's hook, which writes incoming
# records and prints the domain with our metadata pointed at the VF it chose
# (the source's VF is taken there, so it changes: the destination's dumpxml
# shows the hook's output); the destination's prepare makes the records
# active, the source's release frees its vGPU.  `vgpuctl migrate` does the
# same in one command and takes the domain back.  Where the daemons refuse
# the migration, libvirt's error is printed and the test is skipped (77)
# after the parts that do not need a migration passed.
# The mdev variant does the same with an A30-6C mdev on a30-dual-mdev: the
# source's mdev UUID is taken on the destination (an mdev made there with that
# UUID), so the destination's hook names a new one in our metadata, and its
# prepare creates that; the refusals of `vgpuctl migrate` run in the VF
# variant only.
#   migrate-daemons.sh VGPUCTL SRCDIR [vf|mdev]  (VGPU_EMU names the emulator; root)
set -uo pipefail
if [ "$(id -u)" != 0 ] || ! command -v libvirtd >/dev/null || ! command -v unshare >/dev/null; then
	echo "needs root, libvirtd and unshare: skipped"
	exit 77
fi
B=$(realpath "$1")
SRC=$(realpath "$2")
VARIANT=${3:-vf}
case $VARIANT in
vf | mdev) ;;
*)
	echo "migrate-daemons.sh: variant '$VARIANT': vf or mdev" >&2
	exit 2
	;;
esac
# shellcheck source=tests/emu/lib.sh
. "$SRC/tests/emu/lib.sh"
emu_require
fail() { emu_fail "$@"; }
t0=$(date +%s%N)
ms() { echo $((($(date +%s%N) - t0) / 1000000)); }

if [ "$VARIANT" = vf ]; then
	HOST=$SRC/tests/data/hosts/vfio-ts-l40s PROFILE=L40S-8Q SVF=0000:c1:00.4
else
	HOST=$SRC/tests/data/hosts/a30-dual-mdev PROFILE=A30-6C SVF=0000:3b:00.4
fi
emu_start "$HOST"
SROOT=$EMU_ROOT
emu_start "$HOST"
DROOT=$EMU_ROOT
W=$EMU_DIR # the destination emulator's directory: the daemons' files too
# VF: the source's VF is taken on the destination by a vGPU of another domain, the hook must
# choose another VF there (mdev: the source's UUID is taken there, once the source has one)
if [ "$VARIANT" = vf ]; then
	echo 1158 >"$DROOT/sys/bus/pci/devices/$SVF/nvidia/current_vgpu_type" ||
		{ fail "cannot take $SVF on the destination"; exit 1; }
fi

pids=()
cleanup() {
	local u
	for u in "${URIS[@]}"; do
		for d in $(virsh -q -c "$u" list --name 2>/dev/null); do
			virsh -q -c "$u" destroy "$d" >/dev/null 2>&1
		done
	done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	_emu_exit
}
URIS=()
trap cleanup EXIT
for d in /run/libvirt /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
	mkdir -p "$d" # an empty mount point where the host has none
done
mkdir -p "$W/cache" # one capability cache: the second daemon finds it warm

# daemon NAME SYSROOT HOST-UUID: a private libvirtd, its socket $W/NAME/sock/libvirt-sock
daemon() {
	local d=$W/$1 i
	mkdir -p "$d"/{run,etc/hooks/qemu.d,lib,log,sock}
	printf 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n' >"$d/etc/qemu.conf"
	printf 'unix_sock_dir = "%s"\nhost_uuid = "%s"\n' "$d/sock" "$3" >"$d/etc/libvirtd.conf"
	# no custom environment reaches a hook: the file names the build and the sysroot; each
	# call is logged (never stdout: libvirt reads the migrate call's stdout as the domain)
	# shellcheck disable=SC2016 # "$*", "$2" and "$@" are the hook's
	printf '#!/bin/sh\necho "$*" >>%s/hook.log\n[ "$2" != prepare ] || %s --sysroot %s vgpus -n -r -o DOMAIN,STATE >>%s/at-prepare 2>&1\nexec %s --sysroot %s hook "$@"\n' \
		"$d" "$B" "$2" "$d" "$B" "$2" >"$d/etc/hooks/qemu.d/50-vgpuctl"
	chmod +x "$d/etc/hooks/qemu.d/50-vgpuctl"
	: >"$d/hook.log"
	: >"$d/at-prepare"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c '
		for m in run:/run/libvirt etc:/etc/libvirt lib:/var/lib/libvirt log:/var/log/libvirt; do
			mount --bind "$0/${m%%:*}" "${m#*:}" || exit 1
		done
		mount --bind "$1" /var/cache/libvirt || exit 1
		exec libvirtd --timeout 300 --pid-file "$0/libvirtd.pid"' "$d" "$W/cache" \
		>"$d/libvirtd.log" 2>&1 &
	pids+=($!)
	URIS+=("qemu+unix:///system?socket=$d/sock/libvirt-sock")
	for ((i = 0; i < 300; i++)); do
		virsh -q -c "${URIS[-1]}" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "libvirtd $1 did not answer: $(tail -3 "$d/libvirtd.log")"
	exit 1
}
daemon src "$SROOT" 5a1c0e2e-1111-4222-8333-00000000000a
daemon dst "$DROOT" 5a1c0e2e-1111-4222-8333-00000000000b
SURI=${URIS[0]} DURI=${URIS[1]}
echo "two daemons up after $(ms) ms"
S() { virsh -q -c "$SURI" "$@"; }
D() { virsh -q -c "$DURI" "$@"; }
vs() { "$B" --sysroot "$SROOT" "$@"; }
vd() { "$B" --sysroot "$DROOT" "$@"; }
# STATE SYSROOT DOMAIN: the state of the domain's vGPU(s) there, one per line
state() { "$B" --sysroot "$1" vgpus -n -r -o DOMAIN,STATE | awk -v d="$2" '$1 == d {print $2}'; }
vf_of() { "$B" --sysroot "$1" vgpus -n -r -o DOMAIN,VF | awk -v d="$2" '$1 == d {print $2}'; }
mdev_of() { "$B" --sysroot "$1" vgpus -n -r -o DOMAIN,MDEV | awk -v d="$2" '$1 == d {print $2}'; }

[ "$(S capabilities | grep -o '<uuid>[^<]*' | head -1)" != "$(D capabilities | grep -o '<uuid>[^<]*' | head -1)" ] ||
	fail "the two daemons report the same host UUID"

# ---- the guest: TCG, no disk, no display; the vGPU in our metadata only
cat >"$W/m1.xml" <<'EOF'
<domain type='qemu'>
  <name>m1</name>
  <uuid>5a1c0e2e-2222-4333-8444-555555555501</uuid>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
  </os>
  <devices>
    <video><model type='none'/></video>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
vs assign --from "$W/m1.xml" -o "$W/m1.out" --vgpu "$PROFILE" --vf "$SVF" --per-start --no-pin \
	2>"$W/err" || fail "assign m1: $(cat "$W/err")"
if [ "$VARIANT" = mdev ]; then
	# the source's mdev UUID, made on the destination (no record there: a device nobody
	# owns) on the same parent, as the kernel's create does: the hook must choose another
	smdev=$(mdev_of "$SROOT" m1)
	[ -n "$smdev" ] || { fail "assign m1 recorded no mdev UUID"; exit 1; }
	echo "$smdev" >"$DROOT/sys/bus/pci/devices/$SVF/mdev_supported_types/nvidia-684/create" ||
		{ fail "cannot create mdev $smdev on the destination"; exit 1; }
	[ -e "$DROOT/sys/bus/mdev/devices/$smdev" ] || fail "no mdev $smdev on the destination"
fi
sed '/<hostdev/,/<\/hostdev>/d' "$W/m1.out" >"$W/m1.def"
S define "$W/m1.def" >/dev/null || fail "define m1 on the source"
if ! S start m1 >"$W/start.log" 2>&1; then
	fail "m1 does not start on the source: $(cat "$W/start.log")"
	exit 1
fi
[ "$(state "$SROOT" m1)" = active ] || fail "m1 runs on the source, its vGPU is $(state "$SROOT" m1)"
echo "m1 runs on the source after $(ms) ms"

# ---- plain virsh migrate --live --p2p, the stream on a UNIX socket
: >"$W/dst/at-prepare"
s=$(date +%s%N)
S migrate --live --p2p --persistent --undefinesource m1 "$DURI" --migrateuri "unix://$W/mig.sock" \
	>"$W/migrate.log" 2>&1
rc=$?
echo "virsh migrate: exit $rc after $((($(date +%s%N) - s) / 1000000)) ms"
if [ $rc != 0 ]; then
	# the question the issue leaves open: do two daemons on one machine migrate to each other?
	echo "libvirt refused the migration between the two daemons: $(cat "$W/migrate.log")"
	[ "$EMU_FAILS" = 0 ] || exit 1
	exit 77
fi
[ "$(D domstate m1)" = running ] || fail "m1 is $(D domstate m1) on the destination"
S dominfo m1 >/dev/null 2>&1 && fail "m1 is still defined on the source"
# libvirt called the destination's hook with migrate begin, before prepare
[ "$(head -1 "$W/dst/hook.log")" = "m1 migrate begin -" ] ||
	fail "the destination's first hook call is not migrate begin: $(cat "$W/dst/hook.log")"
grep -qx "m1 release end -\|m1 release end migrated" "$W/src/hook.log" ||
	fail "the source's hook saw no release: $(cat "$W/src/hook.log")"
# records: incoming when prepare ran there, active after it; the VF is the destination's own
grep -qx "m1 incoming" "$W/dst/at-prepare" ||
	fail "m1's record on the destination was not incoming at prepare: $(cat "$W/dst/at-prepare")"
[ "$(state "$DROOT" m1)" = active ] || fail "m1's vGPU on the destination is '$(state "$DROOT" m1)'"
D dumpxml m1 >"$W/m1.dst.xml"
dvf=$(vf_of "$DROOT" m1)
if [ "$VARIANT" = vf ]; then
	if [ -z "$dvf" ] || [ "$dvf" = "$SVF" ]; then
		fail "m1 got VF '$dvf' on the destination, where $SVF holds another vGPU"
	fi
	[ "$(cat "$DROOT/sys/bus/pci/devices/$dvf/nvidia/current_vgpu_type" 2>/dev/null)" = 1151 ] ||
		fail "the destination's prepare did not make L40S-8Q (1151) on $dvf"
	# libvirt used the hook's output: the destination's definition names that VF in our metadata
	grep -q "vf=\"$dvf\"" "$W/m1.dst.xml" ||
		fail "the destination's dumpxml does not name $dvf: $(grep 'vgpuctl:vgpu ' "$W/m1.dst.xml")"
	# the source: its per-start vGPU freed by its release
	[ "$(cat "$SROOT/sys/bus/pci/devices/$SVF/nvidia/current_vgpu_type")" = 0 ] ||
		fail "the source's release did not free m1's vGPU on $SVF"
else
	# the source's UUID is taken here: the hook chose a new one, and prepare created it
	dmdev=$(mdev_of "$DROOT" m1)
	if [ -z "$dmdev" ] || [ "$dmdev" = "$smdev" ]; then
		fail "m1 got mdev '$dmdev' on the destination, where $smdev is taken"
	fi
	[ -e "$DROOT/sys/bus/mdev/devices/$dmdev" ] || fail "the destination's prepare did not create mdev $dmdev"
	[ "$(basename "$(readlink "$DROOT/sys/bus/mdev/devices/$dmdev/mdev_type")")" = nvidia-684 ] ||
		fail "mdev $dmdev on the destination is not an A30-6C (nvidia-684)"
	[ -e "$DROOT/sys/bus/mdev/devices/$smdev" ] || fail "the other mdev $smdev on the destination is gone"
	# libvirt used the hook's output: our metadata names the new UUID, not the source's
	grep -q "interface=\"mdev\".* mdev-uuid=\"$dmdev\"" "$W/m1.dst.xml" ||
		fail "the destination's dumpxml does not name mdev $dmdev: $(grep 'vgpuctl:vgpu ' "$W/m1.dst.xml")"
	grep -q "$smdev" "$W/m1.dst.xml" && fail "the destination's dumpxml still names the source's mdev $smdev"
	# the source: its per-start mdev removed by its release
	[ -e "$SROOT/sys/bus/mdev/devices/$smdev" ] && fail "the source's release did not remove m1's mdev $smdev"
fi
# libvirt >= 10.5 says `release end migrated` and the hook drops the source's record too;
# before, the record stays (the domain left, undefined): release --from its definition frees
# it, as docs/migration.md says
if grep -qx "m1 release end migrated" "$W/src/hook.log"; then
	[ -z "$(state "$SROOT" m1)" ] || fail "release end migrated left m1's record on the source"
else
	[ "$(state "$SROOT" m1)" = reserved ] || fail "m1's source record is '$(state "$SROOT" m1)'"
	vs release --from "$W/m1.def" -o /dev/null 2>"$W/err" || fail "release m1 on the source: $(cat "$W/err")"
	[ -z "$(state "$SROOT" m1)" ] || fail "release left m1's record on the source"
fi
echo "virsh migrate: m1 on $dvf${dmdev:+ (mdev $dmdev)} at the destination, the source freed, after $(ms) ms"

# ---- vgpuctl migrate, back to the source: the checks first, through both daemons
back=(-c "$DURI" migrate m1 --to "$SURI" --migrate-uri "unix://$W/mig2.sock"
	--offer-command "$B --sysroot $SROOT -c $SURI migrate-offer"
	--target-command "$B --sysroot $SROOT vgpus --json")
# no-go: a target without the L40S type (an A30 host's offer) is refused, nothing moves (VF only)
if [ "$VARIANT" = vf ]; then
	rc=0
	vd -c "$DURI" migrate m1 --to "$SURI" --target-command /bin/false \
		--offer-command "$B --sysroot $SRC/tests/data/hosts/a30-dual-mdev migrate-offer" >"$W/out" 2>&1 || rc=$?
	[ $rc = 3 ] || fail "migrate to a target without room: exit $rc, want 3: $(cat "$W/out")"
	grep -q "^FAIL capacity " "$W/out" || fail "migrate to a target without room: no FAIL capacity: $(cat "$W/out")"
	grep -q "^vgpuctl: migrate m1: refused: a check failed (FAIL above); nothing moved$" "$W/out" ||
		fail "migrate to a target without room: $(cat "$W/out")"
	[ "$(D domstate m1)" = running ] || fail "a refused migrate moved m1"
fi
rc=0
vd "${back[@]}" >"$W/out" 2>&1 || rc=$?
if [ $rc = 3 ] && grep -q "^FAIL engine .*QEMU [0-7]\." "$W/out"; then
	# QEMU before 8.1 cannot migrate a vGPU: engine refuses, rightly, before anything moves
	grep -q "^no-go$" "$W/out" || fail "engine failed without the verdict no-go: $(cat "$W/out")"
	[ "$(D domstate m1)" = running ] || fail "a migrate refused by engine moved m1"
	[ "$(state "$DROOT" m1)" = active ] || fail "a refused migrate changed m1's vGPU"
	echo "note: vgpuctl migrate refused by engine here ($(grep '^FAIL engine' "$W/out" | cut -d: -f2-)); its migration needs QEMU >= 8.1"
	D destroy m1 >/dev/null
	[ "$EMU_FAILS" = 0 ] && echo "migrate-daemons: all passed in $(ms) ms"
	[ "$EMU_FAILS" = 0 ]
	exit
fi
if [ $rc = 1 ] && grep -q "the verdict is unknown (UNKNOWN above); nothing moved; --force migrates anyway" "$W/out"; then
	# a check cannot be answered here (the emulated hosts' kernel, ECC): without --force, nothing moves
	[ "$(D domstate m1)" = running ] || fail "migrate with an unknown verdict moved m1"
	rc=0
	vd "${back[@]}" --force >"$W/out" 2>&1 || rc=$?
fi
[ $rc = 0 ] || fail "vgpuctl migrate m1 back: exit $rc: $(cat "$W/out")"
grep -q "^migrated: m1 runs on $SURI with 1 vGPU active there" "$W/out" ||
	fail "vgpuctl migrate said: $(cat "$W/out")"
[ "$(S domstate m1)" = running ] || fail "after vgpuctl migrate, m1 is $(S domstate m1) on the source"
D dominfo m1 >/dev/null 2>&1 && fail "vgpuctl migrate left m1 defined on the destination"
[ "$(state "$SROOT" m1)" = active ] || fail "m1's vGPU on the source is '$(state "$SROOT" m1)'"
[ -z "$(state "$DROOT" m1)" ] || fail "vgpuctl migrate left m1's record on the destination"
if [ "$VARIANT" = vf ]; then
	[ "$(cat "$DROOT/sys/bus/pci/devices/$dvf/nvidia/current_vgpu_type")" = 0 ] ||
		fail "the destination still holds m1's vGPU on $dvf"
else
	[ -e "$DROOT/sys/bus/mdev/devices/$dmdev" ] && fail "the destination still holds m1's mdev $dmdev"
fi
echo "vgpuctl migrate: m1 back on the source, the destination freed, after $(ms) ms"
S destroy m1 >/dev/null
[ "$EMU_FAILS" = 0 ] && echo "migrate-daemons: all passed in $(ms) ms"
[ "$EMU_FAILS" = 0 ]
