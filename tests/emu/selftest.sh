#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The emulator's own behaviour, on copies of the fixture hosts: selftest.sh SRCDIR
# (VGPU_EMU names the binary). Exit 77 (skip) when /dev/fuse cannot be used.
set -u
src=$(realpath "${1:-.}")
hosts=$src/tests/data/hosts
# shellcheck source=tests/emu/lib.sh
. "$src/tests/emu/lib.sh"
if [ -z "${VGPU_EMU:-}" ]; then
	echo "SKIP: vgpu-emu was not built (no libfuse3)"
	exit 77
fi
if ! emu_available; then
	echo "SKIP: /dev/fuse is not usable here"
	exit 77
fi

fails=0
section=
fail() {
	echo "FAIL [$section]: $*"
	fails=$((fails + 1))
}
# eq WHAT WANT GOT
eq() {
	[ "$2" = "$3" ] || fail "$1: want '$2', got '$3'"
}
# ok WHAT COMMAND...: COMMAND must succeed
ok() {
	local what=$1
	shift
	"$@" || fail "$what"
}
# no WHAT COMMAND...: COMMAND must fail
no() {
	local what=$1
	shift
	! "$@" || fail "$what"
}
errno_of() {
	case $1 in
	*"Operation not permitted") echo EPERM ;;
	*"No such file or directory") echo ENOENT ;;
	*"Input/output error") echo EIO ;;
	*"Invalid argument") echo EINVAL ;;
	*"Numerical result out of range") echo ERANGE ;;
	*"File exists") echo EEXIST ;;
	*"Device or resource busy") echo EBUSY ;;
	*"Permission denied") echo EACCES ;;
	*"No such device") echo ENODEV ;;
	*"No space left on device") echo ENOSPC ;;
	*"Read-only file system") echo EROFS ;;
	*"Disk quota exceeded") echo EDQUOT ;;
	*) echo "?$1" ;;
	esac
}
# sysw FILE VALUE: VALUE in one write(2), without O_CREAT or O_TRUNC, as vgpuctl writes
# sysfs; prints 0 or the errno name
sysw() {
	local err
	if err=$(printf '%s' "$2" | dd of="$1" conv=notrunc,nocreat bs=4096 iflag=fullblock \
		status=none 2>&1); then
		echo 0
	else
		errno_of "$err"
	fi
}
# w WHAT WANT FILE VALUE: sysw must give WANT
w() {
	eq "$1: write '$4'" "$2" "$(sysw "$3" "$4")"
}
now_ms() { date +%s%3N; }
vf() { echo "$EMU_ROOT/sys/bus/pci/devices/$1/nvidia/$2"; }
ids() { # the type ids of a creatable list, space separated
	awk -F: '$1 ~ /^[0-9]+ *$/ { printf "%s%d", n++ ? " " : "", $1 } END { print "" }' "$1"
}
same_tree() { # WHAT A B: same files, contents and symlink targets
	local out
	out=$(diff -r --no-dereference "$2" "$3" 2>&1) || fail "$1: trees differ: $(head -5 <<<"$out")"
}

# ----------------------------------------------------------------------------------
section=model
for h in a30-dual-mdev vfio-mig-h100 vfio-mig-rtxpro6000 vfio-ts-l40s t4-legacy numa-unknown; do
	out=$("$VGPU_EMU" --check "$hosts/$h" 2>&1) || fail "$h: model disagrees: $out"
done
out=$("$VGPU_EMU" --check "$hosts/malformed" 2>&1) && fail "malformed: --check found nothing"
for o in 1222=0 1222 x=2 1222=2x; do
	"$VGPU_EMU" --check --per-gi "$o" "$hosts/vfio-mig-rtxpro6000" >/dev/null 2>&1
	eq "--per-gi $o refused" 2 $?
done

# ----------------------------------------------------------------------------------
section=passthrough
emu_start "$hosts/t4-legacy" || exit 1
same_tree "mount vs fixture" "$hosts/t4-legacy" "$EMU_ROOT"
u0=4b20d080-1b54-4048-85b3-a6a62d165c01
eq "readlink verbatim" "$(readlink "$hosts/t4-legacy/sys/bus/mdev/devices/$u0")" \
	"$(readlink "$EMU_ROOT/sys/bus/mdev/devices/$u0")"
eq "ls" "$(ls -a "$hosts/t4-legacy/sys/devices/pci0000:5e/0000:5e:00.0")" \
	"$(ls -a "$EMU_ROOT/sys/devices/pci0000:5e/0000:5e:00.0")"
f=sys/bus/pci/devices/0000:5e:00.0/mdev_supported_types/nvidia-232/description
eq "cat through links" "$(cat "$hosts/t4-legacy/$f")" "$(cat "$EMU_ROOT/$f")"
eq "st_size is the content size" "$(wc -c <"$EMU_ROOT/$f")" "$(stat -L -c %s "$EMU_ROOT/$f")"
ok "regular file" test -f "$EMU_ROOT/$f"
# a change made by the emulator in BACKING is visible at once
echo 7 >"$EMU_BACKING/sys/devices/pci0000:5e/0000:5e:00.0/numa_node"
eq "no stale cache" 7 "$(cat "$EMU_ROOT/sys/bus/pci/devices/0000:5e:00.0/numa_node")"
# sysfs attributes that are not driver files: plain files
w "plain sysfs attribute" 0 "$EMU_ROOT/sys/bus/pci/devices/0000:5e:00.0/numa_node" 3
eq "plain sysfs attribute written" 3 "$(cat "$EMU_BACKING/sys/devices/pci0000:5e/0000:5e:00.0/numa_node")"
# nothing is created, renamed or removed in sys/ by clients
eq "create in sys/" EACCES "$(errno_of "$( { : >"$EMU_ROOT/sys/new"; } 2>&1)")"
eq "mkdir in sys/" EPERM "$(errno_of "$(mkdir "$EMU_ROOT/sys/new" 2>&1)")"
eq "unlink in sys/" EPERM "$(errno_of "$(rm "$EMU_ROOT/$f" 2>&1)")"

# the rest of the tree: a plain file system
r=$EMU_ROOT
ok "mkdir -p" mkdir -p "$r/var/lib/vgpuctl/owners" "$r/run/vgpuctl"
ok "O_EXCL create" bash -c "set -C; echo one >'$r/var/lib/vgpuctl/owners/a'"
no "O_EXCL on an existing file" bash -c "set -C; echo two >'$r/var/lib/vgpuctl/owners/a'" 2>/dev/null
ok "write + fsync" dd if=/dev/zero of="$r/var/lib/vgpuctl/owners/.a.tmp" bs=10 count=1 \
	conv=fsync status=none
ok "rename over an existing file" mv -f "$r/var/lib/vgpuctl/owners/.a.tmp" "$r/var/lib/vgpuctl/owners/a"
eq "renamed content" 10 "$(stat -c %s "$r/var/lib/vgpuctl/owners/a")"
eq "backing follows" 10 "$(stat -c %s "$EMU_BACKING/var/lib/vgpuctl/owners/a")"
ok "append" bash -c "echo x >>'$r/var/lib/vgpuctl/owners/a'"
eq "appended" 12 "$(stat -c %s "$r/var/lib/vgpuctl/owners/a")"
ok "truncate" truncate -s 3 "$r/var/lib/vgpuctl/owners/a"
ok "utimens" touch -d @1000000000 "$r/var/lib/vgpuctl/owners/a"
eq "mtime set" 1000000000 "$(stat -c %Y "$EMU_BACKING/var/lib/vgpuctl/owners/a")"
eq "statfs" "$(stat -f -c %b "$EMU_BACKING")" "$(stat -f -c %b "$r")"
ok "symlink" ln -s owners/a "$r/var/lib/vgpuctl/l"
eq "symlink target" owners/a "$(readlink "$r/var/lib/vgpuctl/l")"
ok "unlink" rm "$r/var/lib/vgpuctl/l" "$r/var/lib/vgpuctl/owners/a"
ok "rmdir" rmdir "$r/var/lib/vgpuctl/owners"
ok "unlinked file stays usable" bash -c "exec 3>'$r/run/vgpuctl/t'; rm '$r/run/vgpuctl/t'; echo hi >&3"
# flock(2) between processes on the mount
: >"$r/run/vgpuctl/lock"
flock "$r/run/vgpuctl/lock" -c "touch '$EMU_DIR/held'; sleep 1.5" &
holder=$!
for ((i = 0; i < 100; i++)); do
	[ -e "$EMU_DIR/held" ] && break
	sleep 0.02
done
no "flock: a second process is refused while held" flock -n "$r/run/vgpuctl/lock" true
ok "flock: the holder waits for nobody" kill -0 "$holder"
wait "$holder"
ok "flock: free again after the holder exits" flock -n "$r/run/vgpuctl/lock" true
# journal of the plain operations
j=$(emu_writes --all)
for l in "mkdir var/lib/vgpuctl/owners -> 0" "create var/lib/vgpuctl/owners/a -> 0" \
	"fsync var/lib/vgpuctl/owners/.a.tmp -> 0" \
	"rename var/lib/vgpuctl/owners/.a.tmp var/lib/vgpuctl/owners/a -> 0" \
	"unlink var/lib/vgpuctl/owners/a -> 0" "rmdir var/lib/vgpuctl/owners -> 0" \
	"create sys/new -> EACCES" "mkdir sys/new -> EPERM" \
	"write sys/devices/pci0000:5e/0000:5e:00.0/numa_node 3 -> 0"; do
	grep -qxF "$l" <<<"$j" || fail "journal lacks '$l'"
done
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
section=vfio-ts
emu_start "$hosts/vfio-ts-l40s" || exit 1
w "junk" EINVAL "$(vf 0000:c1:00.4 current_vgpu_type)" abc
w "junk after digits" EINVAL "$(vf 0000:c1:00.4 current_vgpu_type)" 1149x
w "two newlines" EINVAL "$(vf 0000:c1:00.4 current_vgpu_type)" $'1149\n\n'
w "overflow" ERANGE "$(vf 0000:c1:00.4 current_vgpu_type)" 99999999999999999999
w "free a free VF" EPERM "$(vf 0000:c1:00.4 current_vgpu_type)" 0
w "type on a VF that holds one" EPERM "$(vf 0000:41:00.5 current_vgpu_type)" 1156
w "type not creatable on this VF" EIO "$(vf 0000:41:00.4 current_vgpu_type)" 1150
w "type of no catalogue" EIO "$(vf 0000:c1:00.4 current_vgpu_type)" 4242
same_tree "failed writes change nothing" "$hosts/vfio-ts-l40s" "$EMU_BACKING"
# the largest type fills the GPU
w "create L40S-48Q" 0 "$(vf 0000:c1:00.4 current_vgpu_type)" $'1155\n'
eq "current type" 1155 "$(cat "$(vf 0000:c1:00.4 current_vgpu_type)")"
eq "holder's list is empty" 0 "$(wc -c <"$(vf 0000:c1:00.4 creatable_vgpu_types)")"
eq "GPU full: header only" "ID    : vGPU Name" "$(cat "$(vf 0000:c1:01.3 creatable_vgpu_types)")"
eq "other GPU untouched" "1149 1156" "$(ids "$(vf 0000:41:00.4 creatable_vgpu_types)")"
w "create on a full GPU" EIO "$(vf 0000:c1:00.5 current_vgpu_type)" 1155
w "free" 0 "$(vf 0000:c1:00.4 current_vgpu_type)" 0
eq "freed" 0 "$(cat "$(vf 0000:c1:00.4 current_vgpu_type)")"
same_tree "lists restored" "$hosts/vfio-ts-l40s" "$EMU_BACKING"
# 24 GB types: two fit, of one framebuffer size
w "create L40S-24Q" 0 "$(vf 0000:c1:00.4 current_vgpu_type)" 1154
eq "same size only" "1154 1161" "$(ids "$(vf 0000:c1:00.5 creatable_vgpu_types)")"
w "other size refused" EIO "$(vf 0000:c1:00.5 current_vgpu_type)" 1153
w "create L40S-24C" 0 "$(vf 0000:c1:00.5 current_vgpu_type)" 1161
eq "48 GB used" "" "$(ids "$(vf 0000:c1:00.6 creatable_vgpu_types)")"
w "third 24 GB vGPU" EIO "$(vf 0000:c1:00.6 current_vgpu_type)" 1154
# open by QEMU
emu_open 0000:c1:00.4
w "free while open" EPERM "$(vf 0000:c1:00.4 current_vgpu_type)" 0
eq "still held" 1154 "$(cat "$(vf 0000:c1:00.4 current_vgpu_type)")"
emu_close 0000:c1:00.4
w "free after close" 0 "$(vf 0000:c1:00.4 current_vgpu_type)" 0
eq "one 24 GB left" "1154 1161" "$(ids "$(vf 0000:c1:00.4 creatable_vgpu_types)")"
# a shell redirect (O_TRUNC) works too: sysfs ignores the truncation
ok "echo >" bash -c "echo 0 >'$(vf 0000:c1:00.5 current_vgpu_type)'"
same_tree "all free again" "$hosts/vfio-ts-l40s" "$EMU_BACKING"
# the fixture's own vGPU
w "free the fixture's L40S-4Q" 0 "$(vf 0000:41:00.5 current_vgpu_type)" 0
for v in 0000:41:00.4 0000:41:00.5 0000:41:01.3; do
	eq "$v: catalogue of GPU 41" "1149 1156" "$(ids "$(vf $v creatable_vgpu_types)")"
done
w "4C now" 0 "$(vf 0000:41:00.6 current_vgpu_type)" 1156
eq "4Q beside 4C (same size)" "1149 1156" "$(ids "$(vf 0000:41:00.5 creatable_vgpu_types)")"
# the journal: exactly the sysfs writes, in order, with results
emu_clear_journal
sysw "$(vf 0000:41:00.6 current_vgpu_type)" 0 >/dev/null
sysw "$(vf 0000:41:00.6 current_vgpu_type)" 0 >/dev/null
sysw "$(vf 0000:41:00.5 current_vgpu_type)" $'1149\n' >/dev/null
eq "journal" "write sys/devices/pci0000:41/0000:41:00.6/nvidia/current_vgpu_type 0 -> 0
write sys/devices/pci0000:41/0000:41:00.6/nvidia/current_vgpu_type 0 -> EPERM
write sys/devices/pci0000:41/0000:41:00.5/nvidia/current_vgpu_type 1149 -> 0" "$(emu_writes)"
same_tree "back to the fixture" "$hosts/vfio-ts-l40s" "$EMU_BACKING"

# ----------------------------------------------------------------------------------
section=faults
cv=$(vf 0000:c1:00.4 current_vgpu_type)
emu_fault 'fail write sys/devices/*/nvidia/current_vgpu_type EIO after=1 count=2'
w "after=1: the first passes" 0 "$cv" 1149
w "then fails" EIO "$cv" 0
eq "a failed write changes nothing" 1149 "$(cat "$cv")"
w "count=2: fails twice" EIO "$cv" 0
w "then passes" 0 "$cv" 0
# counters survive a reload while the rule is unchanged; a new rule counts from now
emu_fault '# a comment' 'fail write *c1:00.5/nvidia/current_vgpu_type 28'
w "old rule stays spent" 0 "$cv" 1149
w "number as errno" ENOSPC "$(vf 0000:c1:00.5 current_vgpu_type)" 1149
emu_fault 'this is not a rule' 'fail write *c1:00.6/nvidia/current_vgpu_type EBUSY count=1'
w "a bad line does not stop the others" EBUSY "$(vf 0000:c1:00.6 current_vgpu_type)" 1149
w "count=1" 0 "$(vf 0000:c1:00.6 current_vgpu_type)" 1149
grep -q "ignoring bad rule 'this is not a rule'" "$EMU_DIR/emu.err" || fail "bad rule not reported"
emu_fault -r
w "rules cleared" 0 "$cv" 0
w "rules cleared" 0 "$(vf 0000:c1:00.6 current_vgpu_type)" 0
# the bus form of a path matches too
emu_fault 'fail write sys/bus/pci/devices/0000:c1:00.7/* EIO'
w "glob on the bus path" EIO "$(vf 0000:c1:00.7 current_vgpu_type)" 1149
emu_fault -r
# vanish
emu_fault 'vanish sys/bus/pci/devices/0000:c1:00.5'
no "vanished: not listed" grep -qx 0000:c1:00.5 <<<"$(ls "$EMU_ROOT/sys/bus/pci/devices")"
ok "others listed" grep -qx 0000:c1:00.6 <<<"$(ls "$EMU_ROOT/sys/bus/pci/devices")"
eq "vanished: read" ENOENT "$(errno_of "$(cat "$(vf 0000:c1:00.5 current_vgpu_type)" 2>&1)")"
eq "vanished: canonical path too" ENOENT \
	"$(errno_of "$(cat "$EMU_ROOT/sys/devices/pci0000:c1/0000:c1:00.5/nvidia/current_vgpu_type" 2>&1)")"
w "vanished: write" ENOENT "$EMU_ROOT/sys/devices/pci0000:c1/0000:c1:00.5/nvidia/current_vgpu_type" 1149
no "vanished: virtfn link dangles" test -e "$EMU_ROOT/sys/devices/pci0000:c1/0000:c1:00.0/virtfn1"
emu_fault -r
eq "back after the rule goes" 0 "$(cat "$(vf 0000:c1:00.5 current_vgpu_type)")"
# delay
emu_fault 'delay sys/devices/*/current_vgpu_type 1500'
t0=$(now_ms)
w "delayed write" 0 "$cv" 1149
t1=$(now_ms)
((t1 - t0 >= 1500)) || fail "delay: the write took $((t1 - t0)) ms"
t0=$(now_ms)
w "other files not delayed" 0 "$EMU_ROOT/sys/bus/pci/devices/0000:c1:00.4/nvidia/vgpu_params" x
t1=$(now_ms)
((t1 - t0 < 1500)) || fail "delay: an unrelated write took $((t1 - t0)) ms"
emu_fault -r
w "undelayed" 0 "$cv" 0
# the other operations
p=$EMU_ROOT/var/lib/vgpuctl
mkdir -p "$p"
echo a >"$p/rec"
emu_fault 'fail create var/lib/vgpuctl/* EDQUOT' 'fail rename var/lib/vgpuctl/rec2 EIO' \
	'fail unlink *rec EBUSY count=1' 'fail mkdir var/lib/vgpuctl/d EROFS' \
	'fail fsync var/lib/vgpuctl/rec EIO'
eq "fail create" EDQUOT "$(errno_of "$( { : >"$p/new"; } 2>&1)")"
no "failed create left nothing" test -e "$EMU_BACKING/var/lib/vgpuctl/new"
eq "fail rename (target matches)" EIO "$(errno_of "$(mv "$p/rec" "$p/rec2" 2>&1)")"
ok "failed rename left the source" test -e "$EMU_BACKING/var/lib/vgpuctl/rec"
eq "fail unlink" EBUSY "$(errno_of "$(rm "$p/rec" 2>&1)")"
eq "fail mkdir" EROFS "$(errno_of "$(mkdir "$p/d" 2>&1)")"
no "fail fsync" dd if=/dev/zero of="$p/rec" bs=1 count=0 conv=fsync,notrunc status=none 2>/dev/null
emu_fault -r 'fail any var/* EROFS'
eq "fail any: mkdir" EROFS "$(errno_of "$(mkdir "$p/e" 2>&1)")"
eq "fail any: unlink" EROFS "$(errno_of "$(rm "$p/rec" 2>&1)")"
eq "fail any: not reads" a "$(head -c1 "$p/rec")"
emu_fault -r 'fail read var/lib/vgpuctl/rec EIO'
eq "fail read" EIO "$(errno_of "$(cat "$p/rec" 2>&1)")"
emu_fault -r
ok "unlink once the rules are gone" rm "$p/rec"
printf 'a\tb\\c\001\n' >"$p/esc"
grep -qxF 'write var/lib/vgpuctl/esc a\tb\\c\x01 -> 0' "$EMU_LOG" || fail "journal: escaped value"
grep -qxF "create var/lib/vgpuctl/new -> EDQUOT" "$EMU_LOG" || fail "journal: failed create"
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
section=vfio-mig
emu_start "$hosts/vfio-mig-h100" --type '1059=NVIDIA H100-3-40C' || exit 1
# GIs: 3g (held by ca:00.4), 2g, 1g, 1g
w "1-10C" 0 "$(vf 0000:ca:00.5 current_vgpu_type)" 1056
ok "gpu_instance_id" test -f "$(vf 0000:ca:00.5 gpu_instance_id)"
eq "one 1g and the 2g left" "1056 1058" "$(ids "$(vf 0000:ca:00.6 creatable_vgpu_types)")"
w "second 1-10C" 0 "$(vf 0000:ca:00.6 current_vgpu_type)" 1056
eq "only the 2g left" 1058 "$(ids "$(vf 0000:ca:00.7 creatable_vgpu_types)")"
w "no 1g GI left" EIO "$(vf 0000:ca:00.7 current_vgpu_type)" 1056
w "2-20C" 0 "$(vf 0000:ca:00.7 current_vgpu_type)" 1058
eq "no GI left" "" "$(ids "$(vf 0000:ca:01.0 creatable_vgpu_types)")"
eq "distinct GIs" 4 "$(cat "$EMU_BACKING"/sys/devices/pci0000:ca/*/nvidia/gpu_instance_id | sort -u | wc -l)"
w "free the fixture's 3-40C" 0 "$(vf 0000:ca:00.4 current_vgpu_type)" 0
no "its gpu_instance_id goes" test -e "$(vf 0000:ca:00.4 gpu_instance_id)"
eq "its 3g GI is free" 1059 "$(ids "$(vf 0000:ca:01.0 creatable_vgpu_types)")"
for v in 0000:ca:00.5 0000:ca:00.6 0000:ca:00.7; do
	w "free $v" 0 "$(vf $v current_vgpu_type)" 0
done
eq "all GIs free" "1056 1058 1059" "$(ids "$(vf 0000:ca:00.4 creatable_vgpu_types)")"
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
emu_start "$hosts/vfio-mig-h100" || exit 1
w "without --type: free the unnamed 3-40C" 0 "$(vf 0000:ca:00.4 current_vgpu_type)" 0
eq "its GI fits no catalogue type" "1056 1058" "$(ids "$(vf 0000:ca:00.4 creatable_vgpu_types)")"
eq "others unchanged" "1056 1058" "$(ids "$(vf 0000:ca:01.3 creatable_vgpu_types)")"
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
section=vfio-mig-ts
# RTX PRO 6000: four 1g GIs; GI 1 holds three DC-1-8C (3 per GI: full), GI 2 one DC-1-12C
# (2 per GI), GIs 3 and 4 free; DC-1-4C takes 6 per GI, DC-1-24C 1
emu_start "$hosts/vfio-mig-rtxpro6000" || exit 1
gid() { cat "$(vf "$1" gpu_instance_id)"; }
eq "fixture: every 1g type" "1220 1221 1222 1223 1224" "$(ids "$(vf 0000:3d:01.0 creatable_vgpu_types)")"
w "DC-1-12C joins GI 2" 0 "$(vf 0000:3d:01.0 current_vgpu_type)" 1221
eq "GI shared" 2 "$(gid 0000:3d:01.0)"
eq "placement_id" 0 "$(cat "$(vf 0000:3d:01.0 placement_id)")"
eq "holder's list is empty" 0 "$(wc -c <"$(vf 0000:3d:01.0 creatable_vgpu_types)")"
eq "GIs 3 and 4 still free" "1220 1221 1222 1223 1224" "$(ids "$(vf 0000:3d:01.1 creatable_vgpu_types)")"
w "DC-1-4C: the lowest free GI" 0 "$(vf 0000:3d:01.1 current_vgpu_type)" 1224
eq "GI 3" 3 "$(gid 0000:3d:01.1)"
w "DC-1-24C: the last free GI" 0 "$(vf 0000:3d:01.2 current_vgpu_type)" 1220
eq "GI 4" 4 "$(gid 0000:3d:01.2)"
eq "no free GI: only DC-1-4C (GI 3, 5 seats)" 1224 "$(ids "$(vf 0000:3d:01.3 creatable_vgpu_types)")"
w "GI 1 full (3 x DC-1-8C)" EIO "$(vf 0000:3d:01.3 current_vgpu_type)" 1222
w "GI 2 full (2 x DC-1-12C)" EIO "$(vf 0000:3d:01.3 current_vgpu_type)" 1221
for v in 0000:3d:01.3 0000:3d:01.4 0000:3d:01.5 0000:3d:01.6 0000:3d:01.7; do
	w "DC-1-4C on $v" 0 "$(vf $v current_vgpu_type)" 1224
	eq "$v: GI 3" 3 "$(gid $v)"
done
eq "six vGPUs on GI 3" 6 "$(grep -lx 3 "$EMU_BACKING"/sys/devices/pci0000:3d/*/nvidia/gpu_instance_id | wc -l)"
eq "GPU full: header only" "ID    : vGPU Name" "$(cat "$(vf 0000:3d:02.0 creatable_vgpu_types)")"
w "seventh DC-1-4C" EIO "$(vf 0000:3d:02.0 current_vgpu_type)" 1224
w "free one DC-1-4C" 0 "$(vf 0000:3d:01.4 current_vgpu_type)" 0
eq "a seat on GI 3" 1224 "$(ids "$(vf 0000:3d:02.0 creatable_vgpu_types)")"
w "free a fixture DC-1-8C" 0 "$(vf 0000:3d:00.4 current_vgpu_type)" 0
no "its gpu_instance_id goes" test -e "$(vf 0000:3d:00.4 gpu_instance_id)"
eq "a seat on GI 1 too" "1222 1224" "$(ids "$(vf 0000:3d:02.0 creatable_vgpu_types)")"
w "free the second" 0 "$(vf 0000:3d:00.5 current_vgpu_type)" 0
w "free the third" 0 "$(vf 0000:3d:00.6 current_vgpu_type)" 0
eq "GI 1 free: every 1g type" "1220 1221 1222 1223 1224" "$(ids "$(vf 0000:3d:02.0 creatable_vgpu_types)")"
for v in 0000:3d:01.0 0000:3d:01.1 0000:3d:01.2 0000:3d:01.3 0000:3d:01.5 0000:3d:01.6 0000:3d:01.7; do
	w "free $v" 0 "$(vf $v current_vgpu_type)" 0
done
# the fixture's state again: the first DC-1-8C takes the lowest free GI, the others join it
for v in 0000:3d:00.4 0000:3d:00.5 0000:3d:00.6; do
	w "DC-1-8C on $v" 0 "$(vf $v current_vgpu_type)" 1222
done
same_tree "back to the fixture" "$hosts/vfio-mig-rtxpro6000" "$EMU_BACKING"
ok "vgpu-emu exits cleanly" emu_stop
# --per-gi overrides the derived count: DC-1-12C 1 per GI (GI 2 full), DC-1-8C 4 (GI 1 not)
emu_start "$hosts/vfio-mig-rtxpro6000" --per-gi 1221=1 --per-gi 1222=4 || exit 1
w "DC-1-24C on GI 3" 0 "$(vf 0000:3d:01.0 current_vgpu_type)" 1220
w "DC-1-24C on GI 4" 0 "$(vf 0000:3d:01.1 current_vgpu_type)" 1220
eq "only GI 1 has a seat" 1222 "$(ids "$(vf 0000:3d:01.2 creatable_vgpu_types)")"
w "fourth DC-1-8C" 0 "$(vf 0000:3d:01.2 current_vgpu_type)" 1222
eq "on GI 1" 1 "$(gid 0000:3d:01.2)"
eq "GPU full" "" "$(ids "$(vf 0000:3d:01.3 creatable_vgpu_types)")"
ok "vgpu-emu exits cleanly" emu_stop
# without GI directories the GPU counts slices; vGPUs still share their gpu_instance_id
cp -a "$hosts/vfio-mig-rtxpro6000" "$EMU_DIR/nogi"
rm -r "$EMU_DIR"/nogi/proc/driver/nvidia/capabilities/gpu0/mig/gi*
out=$("$VGPU_EMU" --check "$EMU_DIR/nogi" 2>&1) || fail "no GI directories: model disagrees: $out"
emu_start "$EMU_DIR/nogi" || exit 1
w "DC-1-12C joins GI 2" 0 "$(vf 0000:3d:01.0 current_vgpu_type)" 1221
eq "GI shared" 2 "$(gid 0000:3d:01.0)"
w "DC-1-24C: a new GI" 0 "$(vf 0000:3d:01.1 current_vgpu_type)" 1220
eq "next GI id" 3 "$(gid 0000:3d:01.1)"
w "DC-1-4C: the last slice" 0 "$(vf 0000:3d:01.2 current_vgpu_type)" 1224
eq "only DC-1-4C" 1224 "$(ids "$(vf 0000:3d:01.3 creatable_vgpu_types)")"
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
section=mdev-pf
emu_start "$hosts/t4-legacy" --block-timeout 30 || exit 1
pf=$EMU_ROOT/sys/devices/pci0000:5e/0000:5e:00.0
ty=$pf/mdev_supported_types
av() { cat "$ty/nvidia-$1/available_instances"; }
u1=11111111-2222-3333-4444-555555555555
u2=aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee
w "35 bytes" EINVAL "$ty/nvidia-232/create" "${u1:0:35}"
w "38 bytes" EINVAL "$ty/nvidia-232/create" "$u1"$'\n\n'
w "not a UUID" EINVAL "$ty/nvidia-232/create" "11111111-2222-3333-4444-55555555555g"
w "dashes misplaced" EINVAL "$ty/nvidia-232/create" "111111112-222-3333-4444-555555555555"
w "existing UUID" EEXIST "$ty/nvidia-232/create" "$u0"
w "existing UUID, other type" EEXIST "$ty/nvidia-231/create" "$u0"
w "type with 0 available" EIO "$ty/nvidia-231/create" "$u1"
same_tree "failed creates change nothing" "$hosts/t4-legacy" "$EMU_BACKING"
w "36 bytes" 0 "$ty/nvidia-232/create" "$u1"
eq "available" 2 "$(av 232)"
w "37 bytes, upper case" 0 "$ty/nvidia-232/create" "${u2^^}"$'\n'
eq "available" 1 "$(av 232)"
ok "lower-case directory" test -d "$pf/$u2"
eq "others stay 0" 0 "$(av 319)"
# layout of a new mdev
eq "mdev_type" ../mdev_supported_types/nvidia-232 "$(readlink "$pf/$u1/mdev_type")"
eq "bus link" "../../../devices/pci0000:5e/0000:5e:00.0/$u1" \
	"$(readlink "$EMU_ROOT/sys/bus/mdev/devices/$u1")"
eq "type's devices link" "../../../$u1" "$(readlink "$ty/nvidia-232/devices/$u1")"
eq "remove is write-only" 200 "$(stat -c %a "$pf/$u1/remove")"
g=$(readlink "$pf/$u1/iommu_group")
eq "iommu group" ../../../../kernel/iommu_groups/21 "$g"
eq "group lists the mdev" "$(realpath "$pf/$u1")" \
	"$(realpath "$EMU_ROOT/sys/kernel/iommu_groups/21/devices/$u1")"
eq "name through the bus" "GRID T4-4Q" "$(cat "$EMU_ROOT/sys/bus/mdev/devices/$u1/mdev_type/name")"
w "third" 0 "$ty/nvidia-232/create" 22222222-2222-3333-4444-555555555555
eq "T4-4Q: max_instance 4 reached" 0 "$(av 232)"
w "full" EIO "$ty/nvidia-232/create" 33333333-2222-3333-4444-555555555555
# remove
rm1=$EMU_ROOT/sys/bus/mdev/devices/$u1/remove
w "remove junk" EINVAL "$rm1" x
w "remove -1" EINVAL "$rm1" -1
w "remove 0 is a no-op" 0 "$rm1" 0
ok "still there" test -e "$pf/$u1"
w "remove 0x1 (base 0)" 0 "$rm1" 0x1
no "gone" test -e "$pf/$u1"
no "bus link gone" test -L "$EMU_ROOT/sys/bus/mdev/devices/$u1"
no "group gone" test -e "$EMU_ROOT/sys/kernel/iommu_groups/21"
w "second remove" ENOENT "$rm1" 1
eq "available again" 1 "$(av 232)"
# a remove while QEMU holds the device blocks until it lets go
emu_open "$u2"
exec 3>>"$pf/$u2/remove"
(sysw "$pf/$u2/remove" 1 >"$EMU_DIR/rm.out") &
bg=$!
for ((i = 0; i < 250; i++)); do
	[ -e "$pf/$u2/remove" ] || break
	sleep 0.02
done
no "the remove file goes first" test -e "$pf/$u2/remove"
sleep 0.3
ok "remove blocks while open" kill -0 "$bg"
ok "the mount answers meanwhile" test -d "$pf/$u2"
w "a new open meanwhile" ENOENT "$pf/$u2/remove" 1
w "other writes meanwhile" 0 "$pf/numa_node" 0
emu_close "$u2"
wait "$bg"
eq "released" 0 "$(cat "$EMU_DIR/rm.out")"
no "removed once closed" test -e "$pf/$u2"
eq "remove through an old descriptor" ENODEV "$(errno_of "$( { echo 1 >&3; } 2>&1)")"
exec 3>&-
u3=22222222-2222-3333-4444-555555555555
w "remove the third" 0 "$pf/$u3/remove" 1
w "the fixture's mdev" 0 "$EMU_ROOT/sys/bus/mdev/devices/$u0/remove" 1
no "its bus link is gone" test -L "$EMU_ROOT/sys/bus/mdev/devices/$u0"
for d in "$ty"/nvidia-*; do
	max=$(sed -n 's/.*max_instance=\([0-9]*\).*/\1/p' "$d/description")
	eq "idle GPU: ${d##*/} offers max_instance" "$max" "$(cat "$d/available_instances")"
done
w "another type now" 0 "$ty/nvidia-319/create" "$u1"
eq "T4-4Q now 0" 0 "$(av 232)"
eq "T4-4C 3 left" 3 "$(av 319)"
w "back to no mdev" 0 "$EMU_ROOT/sys/bus/mdev/devices/$u1/remove" 1
ok "vgpu-emu exits cleanly" emu_stop
# a remove of an open mdev gives up (EBUSY) after --block-timeout
emu_start "$hosts/t4-legacy" --block-timeout 1 || exit 1
rm0=$EMU_ROOT/sys/bus/mdev/devices/$u0/remove
emu_open "$u0"
t0=$(now_ms)
w "still open at the timeout" EBUSY "$rm0" 1
t1=$(now_ms)
((t1 - t0 >= 1000)) || fail "EBUSY after $((t1 - t0)) ms"
ok "device kept, with its remove file" test -f "$rm0"
emu_close "$u0"
w "remove once closed" 0 "$rm0" 1
ok "vgpu-emu exits cleanly" emu_stop

# ----------------------------------------------------------------------------------
section=mdev-vf
emu_start "$hosts/a30-dual-mdev" || exit 1
d=$EMU_ROOT/sys/bus/pci/devices
avf() { cat "$d/$1/mdev_supported_types/nvidia-$2/available_instances"; }
w "A30-6C on a VF" 0 "$d/0000:3b:00.4/mdev_supported_types/nvidia-684/create" "$u1"
for t in 683 684 685 686 687 689 690; do
	eq "holder VF: nvidia-$t" 0 "$(avf 0000:3b:00.4 $t)"
done
eq "sibling: same type" 1 "$(avf 0000:3b:00.5 684)"
eq "sibling: other time-sliced type" 0 "$(avf 0000:3b:00.5 683)"
eq "sibling: MIG type (MIG off)" 0 "$(avf 0000:3b:00.5 689)"
w "second vGPU on one VF" EIO "$d/0000:3b:00.4/mdev_supported_types/nvidia-684/create" "$u2"
w "UUID used on another parent" EEXIST "$d/0000:af:00.5/mdev_supported_types/nvidia-690/create" "$u1"
eq "other GPU untouched" 1 "$(avf 0000:af:00.4 690)"
w "free" 0 "$d/0000:3b:00.4/$u1/remove" 1
w "A30-24C fills the GPU" 0 "$d/0000:3b:00.6/mdev_supported_types/nvidia-687/create" "$u1"
eq "A30-24C: max_instance 1" 0 "$(avf 0000:3b:00.5 687)"
w "free" 0 "$d/0000:3b:00.6/$u1/remove" 1
# MIG on: two 2g GIs
w "A30-2-12C" 0 "$d/0000:af:00.4/mdev_supported_types/nvidia-690/create" "$u1"
eq "GI id" 1 "$(cat "$d/0000:af:00.4/$u1/nvidia/gpu_instance_id")"
eq "one GI left" 1 "$(avf 0000:af:00.5 690)"
eq "no 1g GI" 0 "$(avf 0000:af:00.5 689)"
w "second A30-2-12C" 0 "$d/0000:af:00.5/mdev_supported_types/nvidia-690/create" "$u2"
eq "GI id" 2 "$(cat "$d/0000:af:00.5/$u2/nvidia/gpu_instance_id")"
eq "no GI left" 0 "$(avf 0000:af:00.6 690)"
w "third" EIO "$d/0000:af:00.6/mdev_supported_types/nvidia-690/create" "$u3"
w "free" 0 "$EMU_ROOT/sys/bus/mdev/devices/$u1/remove" 1
w "free" 0 "$EMU_ROOT/sys/bus/mdev/devices/$u2/remove" 1
same_tree "post-mortem: backing equals the fixture" "$hosts/a30-dual-mdev" "$EMU_BACKING"
ok "vgpu-emu exits cleanly" emu_stop

if ((fails)); then
	echo "$fails failure(s)"
	exit 1
fi
echo "emu selftest: all passed"
