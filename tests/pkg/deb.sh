#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package (debian/): dpkg-buildpackage -us -uc -b builds it from a
# clean copy of the tree, lintian finds no error, the .deb carries the binary,
# the XML module, the man page, the completion, the hook link, the boot unit
# (not enabled), the metrics timer and its service (not enabled), the domain
# template and the example, the contrib files uncompressed (the fact script
# executable), and the packaged
# binary runs with its packaged module and template (dpkg -x, not installed).
#   deb.sh SRCDIR
# The copy is what git would commit now: tracked files as they are in the
# working tree and untracked files git does not ignore (never build/).
# Exit 77 (skip) without dpkg-buildpackage, debhelper or lintian.
set -euo pipefail
src=$(realpath "$1")
for t in dpkg-buildpackage dpkg-deb dh lintian git; do
	command -v "$t" >/dev/null || { echo "$t missing (tests/install-deps.sh)"; exit 77; }
done
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src" "$tmp/root" "$tmp/run"

# the clean copy: tracked (less those deleted in the working tree) and untracked-not-ignored
git -C "$src" ls-files -z --cached --others --exclude-standard |
	(cd "$src" && while IFS= read -r -d '' f; do
		if [[ -e $f || -L $f ]]; then printf '%s\0' "$f"; fi
	done) | tar -C "$src" --null --verbatim-files-from -T - -cf - | tar -C "$tmp/src" -xf -
[[ -x $tmp/src/debian/rules ]] || { echo "FAIL: no executable debian/rules in the copy"; exit 1; }

# the build: binary only, unsigned, on every CPU; its log is printed when it fails
start=$SECONDS
if ! (cd "$tmp/src" && dpkg-buildpackage -us -uc -b -Jauto) >"$tmp/build.log" 2>&1; then
	tail -60 "$tmp/build.log"
	echo "FAIL: dpkg-buildpackage -us -uc -b"
	exit 1
fi
echo "built in $((SECONDS - start)) s"
grep -E "^dpkg-shlibdeps: (warning|error)" "$tmp/build.log" || true

mapfile -t debs < <(find "$tmp" -maxdepth 1 -name 'vgpuctl_*.deb')
mapfile -t changes < <(find "$tmp" -maxdepth 1 -name 'vgpuctl_*.changes')
[[ ${#debs[@]} == 1 && ${#changes[@]} == 1 ]] ||
	{ echo "FAIL: want one vgpuctl .deb and one .changes, got: $(ls "$tmp")"; exit 1; }
deb=${debs[0]}

# lintian on the .changes (it checks the .deb it names): no error; warnings are printed
lintian --no-cfg --fail-on none --display-info "${changes[0]}" >"$tmp/lintian" 2>&1 || true
if grep -q '^E: ' "$tmp/lintian"; then
	echo "FAIL: lintian reports errors:"
	grep '^E: ' "$tmp/lintian"
	fail=1
fi
grep -E '^[WI]: ' "$tmp/lintian" | sed 's/^/lintian: /' || true

# the contents: each path (the hook is a link to the binary)
dpkg-deb -c "$deb" | awk '{ p = $6; for (i = 7; i <= NF; i++) p = p " " $i; print p }' |
	sed 's|^\./|/|' >"$tmp/list"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for want in /usr/sbin/vgpuctl "/usr/lib/$multiarch/vgpuctl/vgpuctl-xml.so" \
	/usr/share/man/man8/vgpuctl.8.gz /usr/share/bash-completion/completions/vgpuctl \
	"/etc/libvirt/hooks/qemu.d/50-vgpuctl -> /usr/sbin/vgpuctl" \
	"/usr/lib/systemd/system/vgpuctl-apply@.service" /usr/share/vgpuctl/domain.xml \
	/usr/share/doc/vgpuctl/examples/host.yaml /usr/share/doc/vgpuctl/copyright \
	/usr/lib/systemd/system/vgpuctl-metrics.service /usr/lib/systemd/system/vgpuctl-metrics.timer \
	/usr/share/doc/vgpuctl/contrib/ansible/library/vgpuctl_apply.py \
	/usr/share/doc/vgpuctl/contrib/ansible/library/vgpuctl_facts.py \
	/usr/share/doc/vgpuctl/contrib/ansible/examples/site.yml \
	/usr/share/doc/vgpuctl/contrib/ansible/facts.d/vgpuctl.fact \
	/usr/share/doc/vgpuctl/contrib/prometheus/vgpuctl.rules.yml; do
	grep -qxF -- "$want" "$tmp/list" || { echo "FAIL: the package lacks $want"; fail=1; }
done
# the contrib files are used by path (Ansible's library, the rules file): none gzipped
if grep -E '^/usr/share/doc/vgpuctl/contrib/.*\.gz$' "$tmp/list"; then
	echo "FAIL: the package compresses contrib files (above)"
	fail=1
fi
# Ansible runs facts.d/*.fact: the packaged fact script keeps its exec bit
fact_mode=$(dpkg-deb -c "$deb" | awk '$6 ~ /contrib\/ansible\/facts\.d\/vgpuctl\.fact$/ { print $1 }')
[[ $fact_mode == -rwxr-xr-x ]] ||
	{ echo "FAIL: the packaged vgpuctl.fact is '$fact_mode', not executable (-rwxr-xr-x)"; fail=1; }
# the unit is installed, never enabled: no .wants link, no enable in the maintainer scripts
if grep -E '^/(etc|lib|usr/lib)/systemd/(system|user)/[^/]*\.(wants|requires)/' "$tmp/list"; then
	echo "FAIL: the package enables a unit (above)"
	fail=1
fi
dpkg-deb -e "$deb" "$tmp/control"
for s in "$tmp"/control/{preinst,postinst,prerm,postrm}; do
	[[ -e $s ]] || continue
	if grep -nE 'deb-systemd-helper[[:space:]]+enable|systemctl[^#]*[[:space:]]enable|deb-systemd-invoke[[:space:]]+(start|restart)' "$s"; then
		echo "FAIL: $(basename "$s") enables or starts a unit (above)"
		fail=1
	fi
done

# the packaged files at work, unpacked, not installed: the binary looks for its
# module next to itself first, and takes the template by --template
dpkg-deb -x "$deb" "$tmp/root"
# the metrics service runs the packaged binary (README: systemctl enable --now vgpuctl-metrics.timer)
grep -qx 'ExecStart=/usr/sbin/vgpuctl metrics --textfile /var/lib/prometheus/node-exporter' \
	"$tmp/root/usr/lib/systemd/system/vgpuctl-metrics.service" ||
	{ echo "FAIL: the packaged vgpuctl-metrics.service does not run /usr/sbin/vgpuctl metrics"; fail=1; }
for f in usr/sbin/vgpuctl "usr/lib/$multiarch/vgpuctl/vgpuctl-xml.so" usr/share/vgpuctl/domain.xml; do
	[[ -f $tmp/root/$f ]] || { echo "FAIL: cannot run the packaged vgpuctl without /$f"; exit 1; }
done
cp "$tmp/root/usr/sbin/vgpuctl" "$tmp/root/usr/lib/$multiarch/vgpuctl/vgpuctl-xml.so" "$tmp/run/"
bin=$tmp/run/vgpuctl
host=$src/tests/data/hosts/a30-dual-mdev
v=$("$bin" --version 2>&1) || { echo "FAIL: vgpuctl --version: $v"; fail=1; }
want=$(dpkg-deb -f "$deb" Version)
[[ $v == *"$want"* ]] || { echo "FAIL: vgpuctl --version says '$v', the package (debian/changelog) is $want"; fail=1; }
if ! "$bin" --sysroot "$host" gpus >"$tmp/out" 2>&1 || ! grep -q '^0000:3b:00.0 .*NVIDIA A30' "$tmp/out"; then
	echo "FAIL: packaged vgpuctl gpus:"
	cat "$tmp/out"
	fail=1
fi
if ! "$bin" --sysroot "$host" xml --template "$tmp/root/usr/share/vgpuctl/domain.xml" --name pkg-vm \
	--vgpu A30-6C --vcpus 4 --memory 8G >"$tmp/out" 2>&1 || ! grep -q '<name>pkg-vm</name>' "$tmp/out"; then
	echo "FAIL: packaged vgpuctl xml (module and template):"
	head -20 "$tmp/out"
	fail=1
fi
exit $fail
