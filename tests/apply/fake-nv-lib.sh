# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by fake-nvidia-smi, fake-sriov-manage and fake-nv-boot: test-only
# stand-ins that change a fixture host tree (a vgpuctl --sysroot) the way
# NVIDIA's tools change a real host.  Sourced, never run.
#
# State lives in $R/var/lib/fake-nvidia/ (R = the sysroot):
#   calls              one line per invocation: "nvidia-smi ARGS" / "sriov-manage ARGS"
#   mig-<BDF>          "CURRENT PENDING" MIG mode (Enabled|Disabled)
#   gis-<BDF>          one GI a line: "GI_ID PROFILE_ID NAME START SIZE CI" (CI: 1 = ci0 exists)
#   busy-<BDF>         fault: exists -> "-mig 1" only goes pending
#   unbindlock-<BDF>   fault: a number N -> the next N "sriov-manage -e" fail
#   stash/<BDF>/       the PF's VFs while they are disabled (items + tree/)
#   delays             optional "KIND SECONDS" lines: time a change takes (fnv_delay)
#   lock               flock(1) serialising the fakes
# <BDF> is the 4-digit-domain, lower-case PCI address (0000:ca:00.0).

FNV_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

fnv_die() { # EXIT MESSAGE
	echo "$FNV_PROG: $2" >&2
	exit "$1"
}

# fnv_root ROOT: set R and ST, take the lock.
fnv_root() {
	[[ -n ${1:-} ]] || fnv_die 2 "FAKE_NV_ROOT is not set (the fixture sysroot to act on); refusing to run"
	[[ -d $1/sys/bus/pci/devices ]] || fnv_die 2 "'$1' is not a host tree (no sys/bus/pci/devices)"
	R=$(cd "$1" && pwd -P)
	ST=$R/var/lib/fake-nvidia
	mkdir -p "$ST"
	exec 9>"$ST/lock"
	flock 9
	trap fnv_exit EXIT
}

# Time a change takes on a real host, from $ST/delays (optional): one
# "KIND SECONDS" a line (SECONDS as sleep(1) takes it: 3, 0.5), KIND one of
#   sriov-enable   sriov-manage -e that enabled the VFs (fnv_unstash_vfs)
#   sriov-disable  sriov-manage -d that disabled them (fnv_stash_vfs)
#   mig            nvidia-smi -mig 0|1 that changed the current mode (fnv_mig_set)
#   gi-create      each GPU instance -cgi created (fnv_caps_mk_gi; -cgi 9,14,19: 3 times)
# fnv_delay KIND [N] owes N times KIND's seconds; fnv_exit sleeps what is owed
# after releasing the lock, so that slow steps of different GPUs overlap, as
# they do with the real tools (the state is already changed when the sleep
# starts; the caller sees the command end only after it).  No file, or no
# line for KIND: no delay.  fake-nv-boot never sleeps.
FNV_SLEEP=()
fnv_delay() {
	local k v n=${2:-1} i
	[[ $FNV_PROG != fake-nv-boot && -r $ST/delays ]] || return 0
	while read -r k v _; do
		[[ $k == "$1" ]] || continue
		if [[ ! $v =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
			echo "$FNV_PROG: $ST/delays: '$k $v': not a number of seconds; ignored" >&2
			continue
		fi
		for ((i = 0; i < n; i++)); do FNV_SLEEP+=("$v"); done
	done <"$ST/delays"
}

# fnv_exit (the EXIT trap): release the lock, sleep what fnv_delay owes, then
# kill the caller if the kill-after fault fired in this call.
fnv_exit() {
	local rc=$?
	if ((${#FNV_SLEEP[@]})); then
		flock -u 9 2>/dev/null || true
		exec 9>&-
		sleep "${FNV_SLEEP[@]}" # GNU sleep sums its arguments
	fi
	if [[ -n ${FNV_KILL:-} ]]; then kill -KILL "$FNV_KILL"; fi
	exit "$rc"
}

fnv_log() { # NAME ARGS...
	local IFS=' ' n
	echo "$*" >>"$ST/calls"
	# fault kill-after (a number N): the caller is killed (SIGKILL) as soon as the
	# Nth changing call has done its work, as if the host lost power between steps
	case " $* " in
	*" -mig "* | *" -cgi "* | *" -dgi"* | *" -dci"* | " sriov-manage -e "* | " sriov-manage -d "*)
		[[ -s $ST/kill-after ]] || return 0
		n=$(($(fnv_read "$ST/kill-count" 0) + 1))
		echo "$n" >"$ST/kill-count"
		[[ $n != "$(cat "$ST/kill-after")" ]] || FNV_KILL=$PPID # by fnv_exit
		;;
	esac
}

# fnv_norm_bus TEXT: 0000:ca:00.0 for "0000:CA:00.0" / "00000000:ca:00.0"; fails otherwise.
fnv_norm_bus() {
	local b=${1,,}
	[[ $b =~ ^([0-9a-f]{4}|0000[0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$ ]] || return 1
	local dom=${BASH_REMATCH[1]}
	echo "${dom: -4}:${BASH_REMATCH[2]}:${BASH_REMATCH[3]}.${BASH_REMATCH[4]}"
}

fnv_disp_bus() { local b=$1; echo "0000${b^^}"; } # 00000000:CA:00.0

# fnv_get VAR FILE [DEFAULT]: VAR = FILE's first line, trimmed; DEFAULT when
# unreadable.  No fork: the fakes read many small files.
fnv_get() {
	local _fnv_v=
	if [[ -r $2 ]]; then
		IFS= read -r _fnv_v <"$2" || true
		_fnv_v=${_fnv_v#"${_fnv_v%%[![:space:]]*}"}
		_fnv_v=${_fnv_v%"${_fnv_v##*[![:space:]]}"}
	else
		_fnv_v=${3:-}
	fi
	printf -v "$1" '%s' "$_fnv_v"
}

fnv_read() { local _fnv_r; fnv_get _fnv_r "$@"; echo "$_fnv_r"; } # FILE [DEFAULT]

# fnv_is_gpu BDF: an NVIDIA display controller (class 0300/0302) that is not a VF.
fnv_is_gpu() {
	local d=$R/sys/bus/pci/devices/$1 cls ven
	[[ -d $d && ! -e $d/physfn && ! -L $d/physfn ]] || return 1
	fnv_get ven "$d/vendor"
	[[ $ven == 0x10de ]] || return 1
	fnv_get cls "$d/class"
	[[ $cls == 0x0300?? || $cls == 0x0302?? ]]
}

fnv_gpus() { # every NVIDIA GPU, sorted
	local p b
	for p in "$R"/sys/bus/pci/devices/*; do
		b=${p##*/}
		if fnv_is_gpu "$b"; then echo "$b"; fi
	done
}

fnv_info() { # BDF KEY: a value of proc/driver/nvidia/gpus/<BDF>/information
	local f=$R/proc/driver/nvidia/gpus/$1/information k v
	[[ -r $f ]] || return 0
	while IFS=: read -r k v; do
		if [[ $k == "$2" ]]; then
			v=${v#"${v%%[![:space:]]*}"}
			echo "${v%"${v##*[![:space:]]}"}"
			return 0
		fi
	done <"$f"
}

fnv_minor() { local m; m=$(fnv_info "$1" "Device Minor"); echo "${m:-0}"; }

# fnv_family BDF: h100-80, a100-80, a100-40, a30, dc (RTX PRO 6000 Blackwell
# Server Edition), or nothing (MIG not modelled).
fnv_family() {
	local m dev
	m=$(fnv_info "$1" Model)
	if [[ -z $m ]]; then
		dev=$(fnv_read "$R/sys/bus/pci/devices/$1/device")
		case $dev in
		0x2330 | 0x2331) m="H100 80GB" ;;
		0x20b5 | 0x20b2) m="A100 80GB" ;;
		0x20f1 | 0x20b0) m="A100 40GB" ;;
		0x20b7) m="A30" ;;
		0x2bb5) m="RTX PRO 6000 Blackwell" ;;
		esac
	fi
	case ${m^^} in
	*RTX\ PRO\ 6000*) echo dc ;;
	*H100*NVL* | *H100*94GB* | *H100L*) ;;
	*H100*) echo h100-80 ;;
	*A100*80GB*) echo a100-80 ;;
	*A100*) echo a100-40 ;;
	*A30*) echo a30 ;;
	esac
}

fnv_compute_slices() { case $1 in a30 | dc) echo 4 ;; *) echo 7 ;; esac; }

# fnv_profiles FAMILY: "ID NAME COMPUTE_SLICES MEM_SLICES STARTS MAX" per profile (MIG UG; section 4.2).
fnv_profiles() {
	local s1 s1l s2 s3 s4 s7
	case $1 in
	a30)
		cat <<-'EOF'
			14 1g.6gb 1 1 0,1,2,3 4
			21 1g.6gb+me 1 1 0,1,2,3 1
			5 2g.12gb 2 2 0,2 2
			6 2g.12gb+me 2 2 0,2 1
			0 4g.24gb 4 4 0 1
		EOF
		return 0
		;;
	dc) # MIG UG r580; IDs from -lgip samples; placements as the A30 (src/lib/mig-tables.c mig_dc)
		cat <<-'EOF'
			14 1g.24gb 1 1 0,1,2,3 4
			21 1g.24gb+me 1 1 0,1,2,3 1
			47 1g.24gb+gfx 1 1 0,1,2,3 4
			65 1g.24gb+me.all 1 1 0,1,2,3 1
			67 1g.24gb-me 1 1 0,1,2,3 4
			5 2g.48gb 2 2 0,2 2
			35 2g.48gb+gfx 2 2 0,2 2
			64 2g.48gb+me.all 2 2 0,2 1
			66 2g.48gb-me 2 2 0,2 2
			0 4g.96gb 4 4 0 1
			32 4g.96gb+gfx 4 4 0 1
		EOF
		return 0
		;;
	a100-40) s1=1g.5gb s1l=1g.10gb s2=2g.10gb s3=3g.20gb s4=4g.20gb s7=7g.40gb ;;
	a100-80 | h100-80) s1=1g.10gb s1l=1g.20gb s2=2g.20gb s3=3g.40gb s4=4g.40gb s7=7g.80gb ;;
	*) return 0 ;;
	esac
	cat <<-EOF
		19 $s1 1 1 0,1,2,3,4,5,6 7
		20 $s1+me 1 1 0,1,2,3,4,5,6 1
		15 $s1l 1 2 0,2,4,6 4
		14 $s2 2 2 0,2,4 3
		9 $s3 3 4 0,4 2
		5 $s4 4 4 0 1
		0 $s7 7 8 0 1
	EOF
}

# fnv_vgpu_types FAMILY: the vGPU types of the fake's driver (vendor VFIO), one a line:
# "ID SHORT GI_PROFILE_ID PER_GI MAX FB_MIB" (GI_PROFILE_ID and PER_GI "-" for a
# time-sliced type).  IDs as tests/data/mkhosts.sh; the NVML stand-in
# (tests/nvml/nvml-standin.c) has the same tables and its selftest compares them.
fnv_vgpu_types() {
	case $1 in
	h100-80)
		cat <<-'EOF'
			1056 H100-1-10C 19 1 7 10240
			1057 H100-1-20C 15 1 4 20480
			1058 H100-2-20C 14 1 3 20480
			1059 H100-3-40C 9 1 2 40960
			1060 H100-4-40C 5 1 1 40960
			1061 H100-7-80C 0 1 1 81920
			1062 H100-1-10CME 20 1 1 10240
		EOF
		;;
	dc) cat "$FNV_LIB_DIR/../nvml/dc-types.txt" ;;
	esac
}

# fnv_vgpu_prefix FAMILY: what the driver's type names put between "NVIDIA " and SHORT.
fnv_vgpu_prefix() { case $1 in dc) echo "RTX Pro 6000 Blackwell " ;; esac; }

# MIG mode: sets CUR and PEND (globals the callers read).  Without a state
# file: Enabled when the capability tree has gpu<minor>/mig (an un-booted
# fixture), else Disabled.
# shellcheck disable=SC2034
fnv_mig_get() {
	local f=$ST/mig-$1
	if [[ -r $f ]]; then
		read -r CUR PEND <"$f"
	elif [[ -d $R/proc/driver/nvidia/capabilities/gpu$(fnv_minor "$1")/mig ]]; then
		CUR=Enabled PEND=Enabled
	else
		CUR=Disabled PEND=Disabled
	fi
}

fnv_mig_set() { # BDF CURRENT PENDING
	local was=
	if [[ -r $ST/mig-$1 ]]; then read -r was _ <"$ST/mig-$1"; fi
	if [[ $was != "$2" ]]; then fnv_delay mig; fi
	echo "$2 $3" >"$ST/mig-$1"
}

fnv_capdir() { echo "$R/proc/driver/nvidia/capabilities/gpu$(fnv_minor "$1")/mig"; }

# fnv_check_state BDF: a tree with GIs but no GI state (a fixture that was
# not booted) is refused: their profiles cannot be known.
fnv_check_state() {
	local d
	[[ ! -e $ST/gis-$1 ]] || return 0
	d=$(fnv_capdir "$1")
	if compgen -G "$d/gi[0-9]*" >/dev/null; then
		fnv_die 2 "$d has GPU instances the fake did not create (profiles unknown); run fake-nv-boot on the tree first"
	fi
	: >"$ST/gis-$1"
}

fnv_gis() { if [[ -r $ST/gis-$1 ]]; then cat "$ST/gis-$1"; fi; } # BDF: the GI state lines

fnv_cap_access() { # FILE MINOR
	mkdir -p "${1%/*}"
	printf 'DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n' "$2" >"$1"
}

# capability minors as /proc/driver/nvidia-caps/mig-minors numbers them
fnv_gi_minor() { echo $((3 + 135 * $(fnv_minor "$1") + 9 * $2)); }

fnv_caps_mk_gi() { # BDF GI: a GI was created
	fnv_cap_access "$(fnv_capdir "$1")/gi$2/access" "$(fnv_gi_minor "$1" "$2")"
	fnv_delay gi-create
}
fnv_caps_mk_ci() { fnv_cap_access "$(fnv_capdir "$1")/gi$2/ci0/access" $(($(fnv_gi_minor "$1" "$2") + 1)); }

# fnv_load_vfs BDF: the live VFs of a PF (virtfn<N> links, numeric order)
# into VF_N (N) and VF_B (address), and GI_USER[GI] = the (last) VF whose vGPU
# sits on that GI (nvidia/current_vgpu_type non-zero, nvidia/gpu_instance_id),
# GI_COUNT[GI] how many vGPUs do, GI_TYPE[GI] the type of the last one.
fnv_load_vfs() {
	local d=$R/sys/bus/pci/devices/$1 l t n vf cur gi
	VF_N=() VF_B=()
	declare -gA GI_USER=() GI_COUNT=() GI_TYPE=()
	while read -r n vf; do
		VF_N+=("$n") VF_B+=("$vf")
		fnv_get cur "$R/sys/bus/pci/devices/$vf/nvidia/current_vgpu_type" 0
		[[ $cur != 0 ]] || continue
		fnv_get gi "$R/sys/bus/pci/devices/$vf/nvidia/gpu_instance_id"
		if [[ -n $gi ]]; then
			# shellcheck disable=SC2034 # GI_USER: read by fake-nvidia-smi
			GI_USER[$gi]=$vf GI_TYPE[$gi]=$cur
			GI_COUNT[$gi]=$((${GI_COUNT[$gi]:-0} + 1))
		fi
	done < <(
		for l in "$d"/virtfn*; do
			[[ -L $l ]] || continue
			t=$(readlink "$l")
			echo "${l##*/virtfn} ${t##*/}"
		done | sort -n
	)
}

fnv_numvfs() { fnv_read "$R/sys/bus/pci/devices/$1/sriov_numvfs" 0; }

# fnv_refresh_creatable BDF: rewrite every live VF's nvidia/creatable_vgpu_types
# as the driver would: a VF holding a vGPU lists nothing; otherwise, with MIG
# on, each MIG-backed type that has a GI of its GI profile where it fits: a GI
# no vGPU uses, or (types time-sliced inside a GI, PER_GI > 1) a GI whose
# vGPUs have the type's framebuffer size and are fewer than PER_GI.
# Time-sliced types (MIG off) are not modelled: the list is empty.  A family
# without a type table keeps whatever the fixture wrote.
fnv_refresh_creatable() {
	local fam prefix vf f gi pid t id short tpid per fb cur n
	local -a types gis list=()
	local -A fb_of=()
	fam=$(fnv_family "$1")
	mapfile -t types < <(fnv_vgpu_types "$fam")
	((${#types[@]})) || return 0
	prefix=$(fnv_vgpu_prefix "$fam")
	fnv_mig_get "$1"
	fnv_load_vfs "$1"
	gis=()
	if [[ $CUR == Enabled ]]; then
		while read -r gi pid _; do gis+=("$gi $pid"); done < <(fnv_gis "$1")
	fi
	for t in "${types[@]}"; do
		read -r id _ _ _ _ fb <<<"$t"
		fb_of[$id]=$fb
	done
	for t in "${types[@]}"; do
		read -r id short tpid per _ fb <<<"$t"
		[[ $tpid != - ]] || continue
		for gi in "${gis[@]}"; do
			[[ ${gi#* } == "$tpid" ]] || continue
			gi=${gi%% *}
			n=${GI_COUNT[$gi]:-0}
			if ((n == 0)) || { [[ ${fb_of[${GI_TYPE[$gi]}]:-} == "$fb" ]] && ((n < per)); }; then
				list+=("$id:$short")
				break
			fi
		done
	done
	for vf in "${VF_B[@]}"; do
		f=$R/sys/bus/pci/devices/$vf/nvidia
		[[ -d $f ]] || continue
		fnv_get cur "$f/current_vgpu_type" 0
		if [[ $cur != 0 || ${#list[@]} == 0 ]]; then
			: >"$f/creatable_vgpu_types"
			continue
		fi
		{
			echo "ID    : vGPU Name"
			for t in "${list[@]}"; do printf '%-6s: NVIDIA %s%s\n' "${t%%:*}" "$prefix" "${t#*:}"; done
		} >"$f/creatable_vgpu_types"
	done
}

# fnv_destroy_all_gis BDF: the PF rebind of sriov-manage -e (GIs, CIs gone; MIG mode stays).
fnv_destroy_all_gis() {
	local d
	d=$(fnv_capdir "$1")
	rm -rf "$d"/gi[0-9]*
	: >"$ST/gis-$1"
}

fnv_rel() { printf '%s\n' "${1#"$R"/}"; }

# fnv_stash_vfs BDF: make the PF's VFs disappear: each VF's device directory,
# its sys/bus/pci/devices link, the PF's virtfn<N> link, driver links to it
# and its IOMMU group (the whole group when the VF is its only member) move to
# stash/<BDF>/tree/ and are listed, in order, in stash/<BDF>/items.
fnv_stash_vfs() {
	local s=$ST/stash/$1 pf i n vf vfdir g gdir l rel
	pf=$(readlink -f "$R/sys/bus/pci/devices/$1")
	mkdir -p "$s/tree"
	local items=()
	fnv_load_vfs "$1"
	for i in "${!VF_B[@]}"; do
		n=${VF_N[i]} vf=${VF_B[i]}
		vfdir=${pf%/*}/$vf
		[[ -d $vfdir ]] || vfdir=$(readlink -f "$pf/virtfn$n")
		items+=("$(fnv_rel "$pf")/virtfn$n" "sys/bus/pci/devices/$vf")
		if [[ -L $vfdir/iommu_group ]]; then
			g=$(readlink "$vfdir/iommu_group")
			gdir=sys/kernel/iommu_groups/${g##*/}
			if [[ -d $R/$gdir ]]; then
				local m alone=1
				for m in "$R/$gdir/devices"/*; do
					if [[ ${m##*/} != "$vf" && ( -e $m || -L $m ) ]]; then alone=0; fi
				done
				if ((alone)); then
					items+=("$gdir")
				else
					items+=("$gdir/devices/$vf")
				fi
			fi
		fi
		for l in "$R"/sys/bus/pci/drivers/*/"$vf"; do
			if [[ -L $l ]]; then items+=("$(fnv_rel "$l")"); fi
		done
		items+=("$(fnv_rel "$vfdir")")
	done
	for rel in "${items[@]}"; do
		mkdir -p "$s/tree/${rel%/*}"
		mv "$R/$rel" "$s/tree/$rel"
		echo "$rel" >>"$s/items"
	done
	echo 0 >"$pf/sriov_numvfs"
	fnv_delay sriov-disable
}

# fnv_unstash_vfs BDF: put them back (fails when nothing is stashed): the
# VFs' device directories first, then the links and IOMMU groups in stash
# order, so that no link dangles meanwhile (the kernel adds a device before
# its bus, group and virtfn links; a reader walking the tree while another
# GPU's VFs come back must not see a link to nothing).
fnv_unstash_vfs() {
	local s=$ST/stash/$1 rel pass
	[[ -s $s/items ]] || return 1
	for pass in dirs rest; do
		while read -r rel; do
			if [[ $rel == sys/devices/* && ! -L $s/tree/$rel ]]; then
				[[ $pass == dirs ]] || continue
			else
				[[ $pass == rest ]] || continue
			fi
			mkdir -p "$R/${rel%/*}"
			mv "$s/tree/$rel" "$R/$rel"
		done <"$s/items"
	done
	rm -rf "$s"
	fnv_delay sriov-enable
}

# fnv_clear_vgpus BDF: every live VF back to no vGPU.
fnv_clear_vgpus() {
	local vf d
	fnv_load_vfs "$1"
	for vf in "${VF_B[@]}"; do
		d=$R/sys/bus/pci/devices/$vf/nvidia
		[[ -d $d ]] || continue
		echo 0 >"$d/current_vgpu_type"
		rm -f "$d/gpu_instance_id" "$d/placement_id"
	done
}

# PFs sriov-manage ALL acts on: NVIDIA GPUs with sriov_totalvfs > 0.
fnv_sriov_pfs() {
	local b t
	for b in $(fnv_gpus); do
		t=$(fnv_read "$R/sys/bus/pci/devices/$b/sriov_totalvfs" 0)
		if [[ $t =~ ^[0-9]+$ ]] && ((t > 0)); then echo "$b"; fi
	done
}
