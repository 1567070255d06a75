#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# corpus.sh - put a corpus of real-world libvirt domain definitions through
# `assign --from` and `release --from` on an emulated dual-A30 mdev host and
# count what came back different.
#
# A measurement by hand, not a test: it prints counts and examples and exits
# 0 whatever they are; non-zero only when a tool is missing or the emulator
# cannot start.  The corpus is not in the tree; libvirt's own test domains
# are one (tests/bench/README.md says how to get them).
#
#   corpus.sh VGPUCTL SRCDIR CORPUS_DIR
#
# On a FUSE-emulated copy of tests/data/hosts/a30-dual-mdev (VGPU_EMU names
# the emulator binary), for each CORPUS_DIR/*.xml F:
#   vgpuctl assign --from F -o A.xml --vgpu A30-6C      (creates an mdev)
#   vgpuctl release --from A.xml -o R.xml
# and reports:
#   (a) assign refusals (exit status, stderr), counted by message;
#   (b) R.xml against F, both canonicalised the same way (python
#       xml.etree: attributes sorted, blank text and comments dropped, text
#       stripped), with the differing elements grouped (cpu, numatune,
#       cputune, vcpu, memory, currentMemory, maxMemory, devices/hostdev,
#       metadata, other), and the elements assign itself changed in A.xml;
#   (c) virt-xml-validate of A.xml (and of F, to tell the corpus's own
#       invalid files apart);
#   (d) virsh define of F and of A.xml on one qemu:///embed driver (batch,
#       one virsh process): outputs refused where F defines;
#   (e) the host after each release (and after each refused assign): no
#       mdev, owner record or queue entry left, `vgpus` and
#       `types --available` as before;
#   (f) `vgpuctl xml --template F --name x --vgpu A30-6C --vcpus 2
#       --memory 2G` must not keep F's <uuid>.
#
# Environment:
#   VGPU_EMU          the vgpu-emu binary (required)
#   CORPUS_STEP       take every Nth file (default 1: all)
#   CORPUS_LIMIT      stop after this many files (default: no limit)
#   CORPUS_DEFINE     0: skip (d) (default 1 where virsh is present)
#   CORPUS_EXAMPLES   examples printed per category (default 3)
#   CORPUS_KEEP       1: keep the work directory (F/A/R files, stderr)
#   CORPUS_PROFILE    vGPU profile (default A30-6C)
set -u

die() {
	echo "corpus: $*" >&2
	exit 1
}
[ $# = 3 ] || die "usage: corpus.sh VGPUCTL SRCDIR CORPUS_DIR"
bin=$(realpath "$1") || die "no binary $1"
src=$(realpath "$2") || die "no source tree $2"
corpus=$(realpath "$3") || die "no corpus $3"
[ -x "$bin" ] || die "$bin is not executable"
[ -d "$src/tests/data/hosts/a30-dual-mdev" ] || die "$src is not a vgpuctl source tree"
for tool in python3 virt-xml-validate fusermount3 mountpoint; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
STEP=${CORPUS_STEP:-1}
LIMIT=${CORPUS_LIMIT:-0}
DEFINE=${CORPUS_DEFINE:-1}
EXAMPLES=${CORPUS_EXAMPLES:-3}
PROFILE=${CORPUS_PROFILE:-A30-6C}
if [ "$DEFINE" = 1 ] && ! command -v virsh >/dev/null 2>&1; then
	echo "corpus: no virsh: (d) skipped" >&2
	DEFINE=0
fi

# shellcheck source=tests/emu/lib.sh
. "$src/tests/emu/lib.sh"
emu_available || die "no usable /dev/fuse or VGPU_EMU (${VGPU_EMU:-unset})"

W=$(mktemp -d "${TMPDIR:-/tmp}/vgpu-corpus.XXXXXX") || die "mktemp"
# a short root for the embedded driver (its sockets have a 108-byte limit)
E=$(mktemp -d /tmp/vc.XXXXXX) || die "mktemp"
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	_emu_exit
	rm -rf "$E"
	if [ "${CORPUS_KEEP:-0}" = 1 ]; then
		echo "corpus: kept $W" >&2
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

fixture=$src/tests/data/hosts/a30-dual-mdev
v() { "$bin" --sysroot "$EMU_ROOT" "$@"; }
# what must be as before after a release: mdevs, owner records, queue
# entries, the vGPU listing and what fits
host_state() {
	echo "## mdevs"
	ls -A "$EMU_ROOT/sys/bus/mdev/devices" 2>/dev/null
	echo "## owners"
	ls -A "$EMU_ROOT/var/lib/vgpuctl/owners" 2>/dev/null
	echo "## run"
	[ -d "$EMU_ROOT/run/vgpuctl" ] && find "$EMU_ROOT/run/vgpuctl" -type f ! -name lock -printf '%P\n'
	echo "## vgpus"
	v vgpus 2>&1
	echo "## types"
	v types --available 2>&1
}
start_host() {
	emu_start "$fixture" || die "emulator did not start"
	host_state >"$W/baseline"
}

files=()
i=0
for f in "$corpus"/*.xml; do
	[ -f "$f" ] || continue
	if [ $((i % STEP)) = 0 ]; then
		files+=("$f")
	fi
	i=$((i + 1))
	[ "$LIMIT" != 0 ] && [ ${#files[@]} -ge "$LIMIT" ] && break
done
[ ${#files[@]} -gt 0 ] || die "no *.xml in $corpus"
sample=""
[ "$STEP" = 1 ] || sample=" (every ${STEP}th: a sample)"
echo "corpus: ${#files[@]} of $i definitions in $corpus$sample, profile $PROFILE"
echo "corpus: vgpuctl $("$bin" --version 2>&1 | head -1), emulator $VGPU_EMU"

t0=$(date +%s)
start_host
# emu_start set its own EXIT trap the first time: this one stops the emulators too
trap cleanup EXIT
restarts=0
# one line per definition; the python at the end reads it and the files
printf 'n\tfile\tassign\trelease\tvalid_a\tvalid_f\tclean\tlisted\ttemplate\tbase\n' >"$W/runs.tsv"
n=0
for f in "${files[@]}"; do
	n=$((n + 1))
	p=$W/$n
	cp "$f" "$p.F.xml"
	# vgpuctl's own formatting of F, no vGPU involved (release of a domain without one)
	v release --from "$f" -o "$p.B.xml" >/dev/null 2>"$p.berr"
	base=$?
	v assign --from "$f" -o "$p.A.xml" --vgpu "$PROFILE" >"$p.aout" 2>"$p.aerr"
	ar=$?
	rr=- va=- vf=- listed=- clean=1
	if virt-xml-validate "$f" domain >/dev/null 2>&1; then vf=0; else vf=1; fi
	if [ $ar = 0 ] && [ -s "$p.A.xml" ]; then
		if virt-xml-validate "$p.A.xml" domain >"$p.vaerr" 2>&1; then va=0; else va=1; fi
		# the domain's vGPU is listed, active, while assigned
		m=$(sed -n 's/.*<vgpuctl:vgpu .*mdev-uuid="\([^"]*\)".*/\1/p' "$p.A.xml" | head -1)
		if [ -n "$m" ] && v vgpus 2>/dev/null | grep -q "$m .*active"; then
			listed=1
		else
			listed=0
		fi
		v release --from "$p.A.xml" -o "$p.R.xml" >/dev/null 2>"$p.rerr"
		rr=$?
	fi
	host_state >"$p.state"
	if ! cmp -s "$W/baseline" "$p.state"; then
		clean=0
		diff "$W/baseline" "$p.state" >"$p.statediff"
		# start again from a fresh host, so that one leak does not change the rest
		emu_stop
		start_host
		restarts=$((restarts + 1))
	else
		rm -f "$p.state"
	fi
	v xml --template "$f" --name x --vgpu "$PROFILE" --vcpus 2 --memory 2G >"$p.T.xml" 2>"$p.terr"
	tr=$?
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$(basename "$f")" "$ar" "$rr" "$va" "$vf" \
		"$clean" "$listed" "$tr" "$base" >>"$W/runs.tsv"
	[ $((n % 200)) = 0 ] && echo "corpus: $n done, $(($(date +%s) - t0)) s"
done
emu_stop
t1=$(date +%s)
echo "corpus: assign/release/validate/template of $n definitions: $((t1 - t0)) s ($restarts fresh hosts after a leak)"

# (d): one virsh process, one embedded driver; each document defined and its
# name undefined again (the corpus reuses names and UUIDs)
if [ "$DEFINE" = 1 ]; then
	mkdir -p "$E/root/etc"
	printf 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n' >"$E/root/etc/qemu.conf"
	python3 - "$W" >"$W/virsh.cmds" <<'PY'
import csv, os, sys, xml.etree.ElementTree as ET
w = sys.argv[1]
def q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
for r in csv.DictReader(open(os.path.join(w, "runs.tsv")), delimiter="\t"):
    if r["assign"] != "0":
        continue
    for k in ("F", "A"):
        p = os.path.join(w, "%s.%s.xml" % (r["n"], k))
        try:
            name = ET.parse(p).getroot().findtext("name") or ""
        except ET.ParseError:
            name = ""
        print("echo @@ %s %s" % (r["n"], k))
        print("define %s" % q(p))
        if name:
            print("undefine --nvram %s" % q(name))
print("echo @@ end")
PY
	timeout 1200 virsh -c "qemu:///embed?root=$E/root" <"$W/virsh.cmds" >"$W/virsh.out" 2>&1
	echo "corpus: virsh define of F and A.xml: $(($(date +%s) - t1)) s"
fi

python3 - "$W" "$EXAMPLES" "$DEFINE" "$PROFILE" <<'PY'
import collections, csv, os, re, sys, xml.etree.ElementTree as ET

w, nex, define, profile = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
rows = list(csv.DictReader(open(os.path.join(w, "runs.tsv")), delimiter="\t"))
VG = "{urn:vgpuctl:domain:1}"


def path(r, k):
    return os.path.join(w, "%s.%s" % (r["n"], k))


def parse(p):
    try:
        return ET.parse(p).getroot()
    except (ET.ParseError, OSError):
        return None


def canon(e):
    """an element as a comparable value: tag, sorted attributes, stripped text, children"""
    return (e.tag, tuple(sorted(e.attrib.items())), (e.text or "").strip(),
            tuple(canon(c) for c in e if isinstance(c.tag, str)))


def short(e, limit=600):
    if e is None:
        return "(absent)"
    if isinstance(e, tags):
        return "top level: " + e.s
    for x in e.iter():
        x.tail = None
    s = ET.tostring(e, encoding="unicode")
    s = re.sub(r"\s*\n\s*", " ", s.replace("ns0:", "").replace(":ns0", "")).strip()
    return s if len(s) <= limit else s[:limit] + " ..."


GROUPS = ("cpu", "numatune", "cputune", "vcpu", "memory", "currentMemory", "maxMemory",
          "memoryBacking", "devices/hostdev", "devices/other", "metadata")


def groups(root):
    """top-level elements by group: {group: [elements]}; tags outside GROUPS go to other:TAG"""
    g = collections.defaultdict(list)
    for c in root:
        if not isinstance(c.tag, str):
            continue
        if c.tag == "devices":
            for d in c:
                if isinstance(d.tag, str):
                    g["devices/hostdev" if d.tag == "hostdev" else "devices/other"].append(d)
        elif c.tag in GROUPS:
            g[c.tag].append(c)
        else:
            g["other:" + c.tag].append(c)
    return g


def differ(a, b):
    """the groups whose elements differ between roots a and b; 'order' if only the order does"""
    ga, gb = groups(a), groups(b)
    out = [k for k in sorted(set(ga) | set(gb))
           if [canon(x) for x in ga.get(k, [])] != [canon(x) for x in gb.get(k, [])]]
    if not out and canon(a) != canon(b):
        if a.tag != b.tag or sorted(a.attrib.items()) != sorted(b.attrib.items()):
            out = ["other:<domain> attributes"]
        else:
            out = ["order"]
            ga["order"] = [tags(a)]
            gb["order"] = [tags(b)]
    return out, ga, gb


class tags:
    """the top-level element names of a domain, for an 'order' example"""
    def __init__(self, root):
        self.s = " ".join(c.tag.replace(VG, "vgpuctl:") for c in root if isinstance(c.tag, str))


def gname(k):
    return k if not k.startswith("other:") else "other"


def message(r, err):
    """stderr as a category: vgpuctl's lines, the domain's name and numbers made general"""
    try:
        lines = [l for l in open(err, errors="replace").read().splitlines() if l.strip()]
    except OSError:
        return "(no stderr)"
    if not lines:
        return "(no message)"
    f = parse(path(r, "F.xml"))
    name = f.findtext("name") if f is not None else None
    out = []
    for l in lines:
        if name:
            for cmd in ("assign", "release"):
                l = l.replace("%s %s:" % (cmd, name), "%s NAME:" % cmd)
        l = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", l)
        l = re.sub(r"(?<![A-Za-z0-9_.-])\d+(?![0-9])", "N", l)
        out.append(l)
    return " | ".join(out)


def arch(root):
    t = root.find("os/type") if root is not None else None
    return (t.get("arch") if t is not None else None) or "(none)"


def head(title):
    print()
    print("== " + title)


def show(counter, ex, indent="  "):
    for k, c in counter.most_common():
        print("%s%5d  %s" % (indent, c, k))
        for e in ex.get(k, [])[:nex]:
            print("%s       e.g. %s" % (indent, e))


total = len(rows)
assigned = [r for r in rows if r["assign"] == "0"]
refused = [r for r in rows if r["assign"] != "0"]

head("(a) assign --from F -o A.xml --vgpu %s: %d definitions" % (profile, total))
print("  %d assigned, %d refused" % (len(assigned), len(refused)))
rc = collections.Counter(r["assign"] for r in refused)
print("  exit status of refusals: " + ", ".join("%s: %d" % kv for kv in sorted(rc.items())))
by = collections.Counter()
ex = collections.defaultdict(list)
for r in refused:
    m = message(r, path(r, "aerr"))
    by[m] += 1
    ex[m].append(r["file"])
print("  refusals by message (domain name -> NAME, numbers -> N):")
show(by, ex)
# architecture and domain type against the outcome
ar = collections.Counter()
for r in rows:
    f = parse(path(r, "F.xml"))
    ar[(arch(f), f.get("type") if f is not None else "?", "assigned" if r["assign"] == "0" else "refused")] += 1
print("  by guest architecture, domain type and outcome:")
for (a, t, o), c in sorted(ar.items()):
    print("    %-10s %-5s %-9s %5d" % (a, t, o, c))
bad_arch = [r["file"] for r in assigned if arch(parse(path(r, "F.xml"))) not in ("x86_64", "aarch64", "(none)")]
print("  guests other than x86_64/aarch64 accepted: %d%s" % (len(bad_arch), (" e.g. " + ", ".join(bad_arch[:nex])) if bad_arch else ""))
warn = collections.Counter()
wex = collections.defaultdict(list)
for r in assigned:
    if os.path.getsize(path(r, "aerr")):
        m = message(r, path(r, "aerr"))
        warn[m] += 1
        wex[m].append(r["file"])
print("  assigned with something on stderr: %d" % sum(warn.values()))
show(warn, wex)

head("(b) release --from A.xml -o R.xml against F (canonical XML)")
rel_fail = [r for r in assigned if r["release"] != "0"]
print("  release failed: %d" % len(rel_fail))
rx = collections.Counter()
rex = collections.defaultdict(list)
for r in rel_fail:
    m = message(r, path(r, "rerr"))
    rx[m] += 1
    rex[m].append(r["file"])
show(rx, rex)
same = 0
diffs = collections.Counter()
sets = collections.Counter()
dex = collections.defaultdict(list)
others = collections.Counter()
for r in assigned:
    f, rr = parse(path(r, "F.xml")), parse(path(r, "R.xml"))
    if rr is None:
        continue
    out, gf, gr = differ(f, rr)
    if not out:
        same += 1
        continue
    sets[" ".join(sorted(set(map(gname, out))))] += 1
    for k in out:
        diffs[gname(k)] += 1
        if k.startswith("other:"):
            others[k[6:]] += 1
        if len(dex[gname(k)]) < nex:
            before = "; ".join(short(x) for x in gf.get(k, [])) or "(absent)"
            after = "; ".join(short(x) for x in gr.get(k, [])) or "(absent)"
            dex[gname(k)].append("%s [%s]\n           F: %s\n           R: %s" % (r["file"], k, before, after))
compared = sum(1 for r in assigned if parse(path(r, "R.xml")) is not None)
print("  R.xml identical to F: %d of %d released (%d differ)" % (same, compared, compared - same))
if diffs:
    print("  definitions with a difference, by element group:")
    for k in list(GROUPS) + ["other", "order"]:
        if diffs[k]:
            print("    %5d  %s%s" % (diffs[k], k, (" (" + ", ".join("%s %d" % kv for kv in others.most_common()) + ")") if k == "other" else ""))
            for e in dex[k]:
                print("           e.g. " + e)
    print("  combinations:")
    for k, c in sets.most_common():
        print("    %5d  %s" % (c, k))

# what the assigned definitions had that assign replaces, and how many of them came back
FEATURES = (
    ("guest NUMA cells", lambda f: f.find("cpu/numa/cell") is not None),
    ("<numatune>", lambda f: f.find("numatune") is not None),
    ("<cputune>", lambda f: f.find("cputune") is not None),
    ("<vcpu cpuset>", lambda f: f.find("vcpu") is not None and f.find("vcpu").get("cpuset") is not None),
    ("placement='auto'", lambda f: any(e.get("placement") == "auto" for e in f.iter())),
    ("<vcpu current>", lambda f: f.find("vcpu") is not None and f.find("vcpu").get("current") is not None),
    ("<vcpus>", lambda f: f.find("vcpus") is not None),
    ("<cpu><model>", lambda f: f.find("cpu/model") is not None),
    ("<cpu><topology>", lambda f: f.find("cpu/topology") is not None),
    ("<maxMemory>", lambda f: f.find("maxMemory") is not None),
    ("<currentMemory>", lambda f: f.find("currentMemory") is not None),
    ("hugepages", lambda f: f.find("memoryBacking/hugepages") is not None),
    ("memAccess on a cell", lambda f: any(c.get("memAccess") for c in f.findall("cpu/numa/cell"))),
    ("type qemu (TCG)", lambda f: f.get("type") == "qemu"),
)
cov = collections.Counter()
cov_ok = collections.Counter()
for r in assigned:
    f, rr = parse(path(r, "F.xml")), parse(path(r, "R.xml"))
    same_r = rr is not None and canon(f) == canon(rr)
    for k, fn in FEATURES:
        if fn(f):
            cov[k] += 1
            cov_ok[k] += same_r
print("  assigned definitions with ... (came back identical):")
for k, _ in FEATURES:
    print("    %5d  %-20s (%d)" % (cov[k], k, cov_ok[k]))

# vgpuctl's formatting alone (release of F, no vGPU): does it lose anything?
fmt_same = fmt_fail = 0
fmt = collections.Counter()
fex = collections.defaultdict(list)
for r in rows:
    if r["base"] != "0":
        fmt_fail += 1
        m = "release fails: " + message(r, path(r, "berr"))
        fmt[m] += 1
        fex[m].append(r["file"])
        continue
    f, b = parse(path(r, "F.xml")), parse(path(r, "B.xml"))
    out, gf, gb = differ(f, b)
    if not out:
        fmt_same += 1
        continue
    for k in out:
        fmt[k] += 1
        if len(fex[k]) < nex:
            fex[k].append("%s\n           F: %s\n           B: %s" % (r["file"], "; ".join(short(x) for x in gf.get(k, [])) or "(absent)", "; ".join(short(x) for x in gb.get(k, [])) or "(absent)"))
print("  formatting alone (release --from F, no vGPU): %d of %d identical to F, %d refused" % (fmt_same, total, fmt_fail))
show(fmt, fex, "    ")

# what assign changed in A.xml beyond the documented edits
head("(b') assign: A.xml against F")
EXPECTED = {"vcpu", "cputune", "numatune", "cpu", "devices/hostdev", "metadata", "memoryBacking"}
chg = collections.Counter()
cex = collections.defaultdict(list)
for r in assigned:
    f, a = parse(path(r, "F.xml"), ), parse(path(r, "A.xml"))
    if a is None:
        continue
    out, gf, ga = differ(f, a)
    for k in out:
        chg[k] += 1
        if len(cex[k]) < nex:
            cex[k].append("%s\n           F: %s\n           A: %s" % (r["file"], "; ".join(short(x, 300) for x in gf.get(k, [])) or "(absent)", "; ".join(short(x, 300) for x in ga.get(k, [])) or "(absent)"))
print("  elements assign changed (expected: %s):" % ", ".join(sorted(EXPECTED)))
for k, c in chg.most_common():
    note = ""
    if k == "other:uuid":
        note = "   <- F had none: 'the domain always has a <uuid>'"
    elif k not in EXPECTED:
        note = "   <- not a documented edit"
    print("    %5d  %s%s" % (c, k, note))
    if k not in EXPECTED or k == "memoryBacking":
        for e in cex[k]:
            print("           e.g. " + e)
# a CPU model the domain has is kept; TCG never gets host-passthrough
lost_model = []
tcg_pt = []
no_hostdev = []
for r in assigned:
    f, a = parse(path(r, "F.xml")), parse(path(r, "A.xml"))
    if a is None:
        continue
    fm, am = f.find("cpu/model"), a.find("cpu/model")
    if fm is not None and (fm.text or "").strip() and (am is None or (am.text or "").strip() != (fm.text or "").strip()):
        lost_model.append("%s: %s -> %s" % (r["file"], short(fm), short(am)))
    if a.get("type") == "qemu" and a.find("cpu") is not None and a.find("cpu").get("mode") == "host-passthrough":
        tcg_pt.append(r["file"])
    if a.find("devices/hostdev[@type='mdev']") is None:
        no_hostdev.append(r["file"])
print("  CPU model of F lost or changed in A.xml: %d" % len(lost_model))
for e in lost_model[:nex]:
    print("           e.g. " + e)
print("  TCG (type qemu) given host-passthrough: %d%s" % (len(tcg_pt), (" e.g. " + ", ".join(tcg_pt[:nex])) if tcg_pt else ""))
print("  A.xml without an mdev hostdev: %d%s" % (len(no_hostdev), (" e.g. " + ", ".join(no_hostdev[:nex])) if no_hostdev else ""))
listed = collections.Counter(r["listed"] for r in assigned)
print("  vGPU listed active by `vgpus` while assigned: %d of %d" % (listed["1"], len(assigned)))

head("(c) virt-xml-validate A.xml domain")
va = [r for r in assigned if r["valid_a"] == "0"]
vbad = [r for r in assigned if r["valid_a"] != "0"]
vreg = [r for r in vbad if r["valid_f"] == "0"]
print("  %d of %d outputs validate; %d do not, %d of them where F validates" % (len(va), len(assigned), len(vbad), len(vreg)))
print("  (the corpus itself: %d of %d F validate)" % (sum(r["valid_f"] == "0" for r in rows), total))
vm = collections.Counter()
vmx = collections.defaultdict(list)
for r in vreg:
    try:
        txt = open(path(r, "vaerr"), errors="replace").read().splitlines()
    except OSError:
        txt = []
    m = next((re.sub(r"^.*?\.xml:\d+: ", "", l) for l in txt if "element" in l or "error" in l.lower()), "(no message)")
    vm[m] += 1
    vmx[m].append(r["file"])
show(vm, vmx)

if define:
    head("(d) virsh define on qemu:///embed (one driver, F then A.xml)")
    res = collections.defaultdict(dict)
    cur = None
    buf = []
    txt = open(os.path.join(w, "virsh.out"), errors="replace").read()
    for l in txt.splitlines():
        m = re.match(r"^(?:virsh # )?@@ (\S+)(?: (\S+))?$", l)
        if m:
            if cur:
                res[cur[0]][cur[1]] = buf
            cur = (m.group(1), m.group(2)) if m.group(1) != "end" else None
            buf = []
        elif cur:
            buf.append(re.sub(r"^virsh # ", "", l))
    def outcome(lines):
        err = [l for l in lines if l.startswith("error:")]
        ok = any(l.startswith("Domain ") and " defined from " in l for l in lines)
        if ok:
            undef_err = [l for l in err if "undefine" in l.lower() or "Failed to undefine" in l]
            return True, undef_err
        return False, [l for l in err if not l.startswith("error: Failed to define domain from")] or err or ["(no output)"]
    byn = {r["n"]: r for r in assigned}
    both = fonly = aonly = neither = nobin = 0
    reg = collections.Counter()
    regx = collections.defaultdict(list)
    fixed = collections.Counter()
    fixedx = collections.defaultdict(list)
    other = collections.Counter()
    otherx = collections.defaultdict(list)
    undef = 0
    missing = 0
    for n, r in byn.items():
        if "F" not in res.get(n, {}) or "A" not in res.get(n, {}):
            missing += 1
            continue
        okf, ef = outcome(res[n]["F"])
        oka, ea = outcome(res[n]["A"])
        undef += (okf and bool(ef)) + (oka and bool(ea))
        if okf and oka:
            both += 1
        elif okf and not oka:
            fonly += 1
            m = re.sub(r"\d+", "N", " | ".join(l for l in ea if "failed to get domain" not in l))
            reg[m] += 1
            regx[m].append(r["file"])
        elif oka:
            aonly += 1
            m = re.sub(r"\d+", "N", " | ".join(l for l in ef if "failed to get domain" not in l))
            fixed[m] += 1
            fixedx[m].append(r["file"])
        else:
            neither += 1
            if any("Cannot check QEMU binary" in l for l in ef):
                nobin += 1
            if [l for l in ef if "failed to get domain" not in l] != [l for l in ea if "failed to get domain" not in l]:
                m = re.sub(r"\d+", "N", " | ".join(l for l in ea if "failed to get domain" not in l))
                other[m] += 1
                otherx[m].append("%s (F: %s)" % (r["file"], " | ".join(l for l in ef if "failed to get domain" not in l)))
    print("  of %d assigned: both define %d; F defines, A.xml refused %d; F refused, A.xml defines %d; both refused %d (%d of them: no QEMU binary for the guest)%s" % (
        len(byn), both, fonly, aonly, neither, nobin, ("; no answer %d" % missing) if missing else ""))
    if undef:
        print("  (undefine errors: %d)" % undef)
    print("  A.xml refused where F defines:")
    show(reg, regx, "    ")
    print("  both refused, A.xml for another reason than F: %d" % sum(other.values()))
    show(other, otherx, "    ")
    print("  F refused, A.xml defines (assign replaced what libvirt refused): %d" % sum(fixed.values()))
    show(fixed, fixedx, "    ")

head("(e) the host after each release (or refused assign)")
dirty = [r for r in rows if r["clean"] != "1"]
print("  left as before: %d of %d; not: %d" % (total - len(dirty), total, len(dirty)))
for r in dirty[:nex]:
    try:
        d = open(path(r, "statediff")).read().strip().replace("\n", " / ")
    except OSError:
        d = ""
    print("           e.g. %s (assign %s, release %s): %s" % (r["file"], r["assign"], r["release"], d[:400]))

head("(f) xml --template F --name x --vgpu %s --vcpus 2 --memory 2G" % profile)
kept = fresh = nouuid = 0
kex = []
tre = collections.Counter()
trx = collections.defaultdict(list)
for r in rows:
    if r["template"] != "0":
        m = message(r, path(r, "terr"))
        tre[m] += 1
        trx[m].append(r["file"])
        continue
    f, t = parse(path(r, "F.xml")), parse(path(r, "T.xml"))
    fu = (f.findtext("uuid") or "").strip().lower() if f is not None else ""
    tu = (t.findtext("uuid") or "").strip().lower() if t is not None else ""
    if not fu:
        nouuid += 1
    elif fu == tu:
        kept += 1
        kex.append(r["file"])
    else:
        fresh += 1
ok = total - sum(tre.values())
print("  %d printed a domain, %d refused; of those printed: %d kept F's <uuid>, %d got a fresh one, %d from an F without <uuid>" % (
    ok, sum(tre.values()), kept, fresh, nouuid))
for e in kex[:nex]:
    print("           kept: " + e)
show(tre, trx)
PY
echo
echo "corpus: total $(($(date +%s) - t0)) s"
exit 0
