#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/bash-completion/vgpuctl: commands, options, GPU and VF addresses and
# profile names from a fixture host (--sysroot), with bash-completion's
# _init_completion and with the plain-bash fallback. The built binary is first
# on PATH as "vgpuctl". Skipped (77) without bash-completion.
#   completion.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$2
cd "$src" || exit 1
bc=/usr/share/bash-completion/bash_completion
if [ ! -r "$bc" ]; then
	echo "SKIP: $bc is absent (apt-get install bash-completion)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$bin" "$tmp/vgpuctl"
PATH=$tmp:$PATH
export PATH
host=tests/data/hosts/a30-dual-mdev
fail=0

# comp LINE: COMPREPLY for the cursor at the end of LINE, one a line, sorted.
# COMP_WORDS is split as bash splits it: at blanks, and ':' and '=' are words.
comp() {
	local line=$1 w rest
	local -a cw=()
	for w in $line; do
		while [[ $w == *[:=]* ]]; do
			rest=${w#*[:=]}
			[ -n "${w%%[:=]*}" ] && cw+=("${w%%[:=]*}")
			cw+=("${w:${#w}-${#rest}-1:1}")
			w=$rest
		done
		[ -n "$w" ] && cw+=("$w")
	done
	[[ $line == *" " ]] && cw+=("")
	COMP_WORDS=("${cw[@]}")
	COMP_CWORD=$((${#cw[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
	COMPREPLY=()
	_vgpuctl vgpuctl "${cw[COMP_CWORD]}" "${cw[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

# noise MODE LINE: the completion wrote nothing to stderr
noise() {
	if [ -s "$tmp/err" ]; then
		echo "FAIL ($1): '$2<TAB>' wrote to stderr:"
		head -5 "$tmp/err"
		fail=1
	fi
}

# expect MODE LINE WORD...: the completions are exactly WORDs
expect() {
	local mode=$1 line=$2 got want
	shift 2
	got=$(comp "$line" 2>"$tmp/err")
	noise "$mode" "$line"
	want=$(printf '%s\n' "$@" | sort)
	if [ "$got" != "$want" ]; then
		echo "FAIL ($mode): '$line<TAB>': got [${got//$'\n'/ }], want [$*]"
		fail=1
	fi
}

# has MODE LINE WORD...: the completions include each WORD
has() {
	local mode=$1 line=$2 got w
	shift 2
	got=$(comp "$line" 2>"$tmp/err")
	noise "$mode" "$line"
	for w in "$@"; do
		if ! grep -qxF -- "$w" <<<"$got"; then
			echo "FAIL ($mode): '$line<TAB>': no '$w' in [${got//$'\n'/ }]"
			fail=1
		fi
	done
}

checks() { # MODE
	local m=$1 s="vgpuctl --sysroot $host"
	expect "$m" "vgpuctl ty" types
	expect "$m" "vgpuctl mi" mig migrate migrate-check migrate-offer migrate-xml
	has "$m" "vgpuctl " gpus vfs types topology xml plan assign release mig apply assert why \
		vgpus hook help
	expect "$m" "vgpuctl --s" --sysroot
	has "$m" "vgpuctl -" -c --connect --sysroot --nvml -J --json -h --help -V --version
	has "$m" "vgpuctl -J --sysroot $host " types gpus
	expect "$m" "$s types --gpu " 0000:3b:00.0 0000:af:00.0
	expect "$m" "$s types --gpu 0000:a" af:00.0 # bash's word starts after the last ':'
	expect "$m" "$s types --gpu=0000:a" af:00.0
	has "$m" "$s types --vf " 0000:3b:00.4 0000:3b:00.5
	expect "$m" "$s vfs 0000:3" 3b:00.0
	expect "$m" "$s xml --vgpu A30-1" A30-1-6C A30-1-6CME A30-12C
	expect "$m" "$s xml --vgpu A30-1-" A30-1-6C A30-1-6CME
	expect "$m" "$s xml --vgpu A30-4C,A30-1-" A30-4C,A30-1-6C A30-4C,A30-1-6CME
	has "$m" "$s why " A30-6C A30-1-6C A30-24C
	expect "$m" "$s why A30-6C --gpu 0000:3" 3b:00.0
	has "$m" "$s types --" --gpu --vf --available --per-vf --help --json
	has "$m" "$s release --" --orphans --stale --grace --dry-run --clear-wedged
	has "$m" "$s vgpus --" --orphans --grace --output --connect
	has "$m" "$s xml --" --name --vgpu --vcpus --memory --template --from --hugepages
	has "$m" "$s assign --" --no-pin --per-start --dry-run --output
	expect "$m" "$s xml --guest-topology " mirror
	has "$m" "$s assign --" --guest-topology
	expect "$m" "vgpuctl nccl-topo --f" --from
	expect "$m" "vgpuctl mig " plan show
	expect "$m" "vgpuctl fab" fabric
	expect "$m" "vgpuctl fabric " activate deactivate resync
	has "$m" "vgpuctl fabric activate 3 --" --vf --json
	has "$m" "vgpuctl --nv" --nvml --nvfm
	expect "$m" "vgpuctl mig plan --b" --board
	has "$m" "vgpuctl mig show --" --gpu --nvidia-smi
	has "$m" "vgpuctl apply --" --config --dry-run --nvidia-smi --sriov-manage
	has "$m" "vgpuctl diagnose --" --since --catalogue --journalctl --json
	# -o: a listing's columns (LIST[,LIST...]), assign's and release's file
	has "$m" "$s gpus -o " ADDRESS INDEX MODEL MIG
	expect "$m" "$s gpus -n -o ADDRESS,IND" ADDRESS,INDEX
	expect "$m" "$s types --output=PRO" PROFILE
	expect "$m" "$s mig show -o VGPU_" VGPU_PROFILE
	has "$m" "$s why A30-6C -o " GPU AVAILABLE REASON
	expect "$m" "$s assign --from x -o tests/data/hos" tests/data/hosts
	expect "$m" "vgpuctl release -o tests/data/hos" tests/data/hosts
	has "$m" "$s gpus -" -o --output -n --noheadings -r --raw -b --bytes
	has "$m" "$s mig show -" -o --output -n --noheadings
	expect "$m" "vgpuctl help ty" types
	expect "$m" "vgpuctl --sysroot tests/data/hos" tests/data/hosts
	has "$m" "vgpuctl apply -f tests/data/configs/vgpu-device-manager-example.yaml --config " \
		A2-1Q A2-16Q
	# no host there: nothing (and nothing on stderr, checked for every line)
	expect "$m" "vgpuctl --sysroot /nonexistent types --gpu "
}

# with bash-completion
(
	# shellcheck source=/dev/null
	. "$bc"
	# shellcheck source=contrib/bash-completion/vgpuctl
	. contrib/bash-completion/vgpuctl
	declare -F _init_completion >/dev/null || { echo "FAIL: no _init_completion"; exit 1; }
	checks bash-completion
	exit "$fail"
) || fail=1
# plain bash
(
	# shellcheck source=contrib/bash-completion/vgpuctl
	. contrib/bash-completion/vgpuctl
	checks fallback
	exit "$fail"
) || fail=1
[ "$fail" = 0 ] && echo "completion: all passed"
exit "$fail"
