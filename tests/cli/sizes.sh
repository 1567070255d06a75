#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sizes in text tables (topology's MEMORY, types' FB) are human-readable as
# lsblk prints them (powers of 1024, one decimal unless it is 0: 251.6G, 4G,
# 512M), in bytes with -b/--bytes (MiB x 1048576), the same with --raw; the
# JSON keeps its MiB (memory_mib, framebuffer_mib) with and without -b.
# --bytes also follows the command; -o takes the old header FB-MIB for FB.
#   sizes.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
host=tests/data/hosts/a30-dual-mdev
exp=tests/data/expected/a30-dual-mdev
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME ARGS...: vgpuctl --sysroot HOST ARGS > $tmp/NAME, exit 0 and no stderr
run() {
	local name=$1
	shift
	if ! "$bin" --sysroot "${root:-$host}" "$@" >"$tmp/$name" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
		echo "FAIL: vgpuctl $* (exit or stderr):"
		cat "$tmp/err"
		fail=1
	fi
}
# same NAME WANT: $tmp/NAME is WANT
same() {
	if [ "$(cat "$tmp/$1")" != "$2" ]; then
		echo "FAIL: $1: got"
		cat "$tmp/$1"
		echo "want"
		echo "$2"
		fail=1
	fi
}
# mib KEY FILE: the values of KEY in a JSON document, one a line ("-" for null)
mib() { sed -n "s/.*\"$1\": \([0-9]*\|null\),\{0,1\}\$/\1/p" "$2" | sed 's/^null$/-/'; }
# bytes: each MiB value on stdin in bytes ("-" stays)
bytes() { while read -r v; do if [ "$v" = - ]; then echo -; else echo $((v * 1048576)); fi; done; }

# text: human-readable
run topo -n -r -o NODE,MEMORY topology
same topo $'0 251.6G\n1 252G'
run topo-aligned -o NODE,MEMORY topology
same topo-aligned $'NODE MEMORY\n   0 251.6G\n   1   252G'
run types -n -r -o PROFILE,FB types --gpu 0000:3b:00.0
grep -q '^A30-4C 4G$' "$tmp/types" || { echo "FAIL: A30-4C is not 4G:"; cat "$tmp/types"; fail=1; }
grep -q '^A30-24C 24G$' "$tmp/types" || { echo "FAIL: A30-24C is not 24G"; fail=1; }
run types-all -n -r -o FB types --per-vf
if grep -Evq '^([0-9]+(\.[0-9])?[KMGTPE]|0B)$' "$tmp/types-all"; then
	echo "FAIL: a FB cell is not a human-readable size:"
	grep -Ev '^([0-9]+(\.[0-9])?[KMGTPE]|0B)$' "$tmp/types-all" | head -3
	fail=1
fi
run header types
head -1 "$tmp/header" | grep -Eq ' FB ' || { echo "FAIL: types header has no FB column"; fail=1; }
if head -1 "$tmp/header" | grep -q 'MIB'; then
	echo "FAIL: types header still says MIB"
	fail=1
fi
run inventory inventory
grep -q ' 251\.6G ' "$tmp/inventory" || { echo "FAIL: inventory's topology is not human-readable"; fail=1; }

# -b/--bytes: MiB x 1048576, from the JSON's numbers, before or after the command
run topo-json --json topology
run types-json --json types --per-vf
run topo-b -b -n -r -o MEMORY topology
same topo-b "$(mib memory_mib "$tmp/topo-json" | bytes)"
same topo-b $'270188675072\n270532608000'
run topo-bytes --bytes -n -r -o MEMORY topology
same topo-bytes "$(cat "$tmp/topo-b")"
run topo-after topology --bytes --noheadings --raw --output=MEMORY
same topo-after "$(cat "$tmp/topo-b")"
run types-b -b -n -r -o FB types --per-vf
same types-b "$(mib framebuffer_mib "$tmp/types-json" | bytes)"
run types-after types --per-vf --bytes --raw --noheadings --output FB
same types-after "$(cat "$tmp/types-b")"
run topo-b-aligned -b -o NODE,MEMORY topology
same topo-b-aligned $'NODE       MEMORY\n   0 270188675072\n   1 270532608000'

# --raw: human unless -b, as lsblk -r
run raw -r -o NODE,MEMORY topology
same raw $'NODE MEMORY\n0 251.6G\n1 252G'
run raw-b -r -b -o NODE,MEMORY topology
same raw-b $'NODE MEMORY\n0 270188675072\n1 270532608000'

# JSON: MiB, the committed goldens, with -b before or after the command
for args in "--json topology" "-b --json topology" "--json topology --bytes"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run json $args
	cmp -s "$tmp/json" "$exp/topology-json.json" || { echo "FAIL: $args: JSON differs"; fail=1; }
done
for args in "--json types" "-b --json types" "--json types --bytes" "-b -r --json types"; do
	# shellcheck disable=SC2086
	run json $args
	cmp -s "$tmp/json" "$exp/types-json.json" || { echo "FAIL: $args: JSON differs"; fail=1; }
done
grep -q '"memory_mib": 257672,' "$tmp/topo-json" || { echo "FAIL: memory_mib changed"; fail=1; }

# -o: FB-MIB, the old header, still names FB (any case); the header printed is FB
run alias -n -r -o PROFILE,FB-MIB types --gpu 0000:3b:00.0
same alias "$(cat "$tmp/types")"
run alias2 -o profile,fb-mib types --gpu 0000:3b:00.0
head -1 "$tmp/alias2" | grep -Eq '^PROFILE +FB$' || { echo "FAIL: -o FB-MIB header"; fail=1; }
if "$bin" --sysroot "$host" -o FB-MIBS types >/dev/null 2>&1; then
	echo "FAIL: -o FB-MIBS accepted"
	fail=1
fi

# the rounding, on a copy of the host whose nodes say MemTotal (kB): KIB:WANT
cp -a "$host" "$tmp/host"
root=$tmp/host
for c in 524288:512M 1572864:1.5G 1100800:1G 1125376:1.1G 1073740800:1024G 4294967296:4T \
	1024:1M 263856484:251.6G 1048576:1G 1049600:1G; do
	kib=${c%%:*} want=${c#*:}
	b=$(((kib >> 10) * 1048576)) # whole MiB, as the JSON has them
	for n in 0 1; do
		sed -i "s/^Node $n MemTotal: *[0-9]* kB/Node $n MemTotal: $kib kB/" \
			"$root/sys/devices/system/node/node$n/meminfo"
	done
	run round -n -r -o MEMORY topology
	same round "$want"$'\n'"$want"
	run round-b -b -n -r -o MEMORY topology
	same round-b "$b"$'\n'"$b"
done
exit $fail
