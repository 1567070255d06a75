#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Prometheus examples under contrib/prometheus, and `vgpuctl metrics`:
#  - the alerting rules pass `promtool check rules` and their unit tests
#    (tests/prometheus/rules.test.yml: every alert fires with its labels when it
#    should, and not before its `for:` window is over);
#  - the timer and its service pass `systemd-analyze verify` with no complaint
#    (it exits 0 on unknown keys too: any output fails), as tests/systemd/verify.sh
#    checks the boot unit;
#  - once vgpuctl has a `metrics` command (skipped with a note until then): on
#    every fixture host but `malformed`, its output passes `promtool check metrics`,
#    every family is a gauge with (at least) the contract's labels, the families
#    that apply to the host are there and agree with `vgpuctl --json
#    gpus/vfs/types/vgpus` (what only adds to the contract is a note, not a failure),
#    and `--textfile DIR` writes the same document to DIR/vgpuctl.prom, readable by
#    node-exporter's user, with no temporary file left behind;
#  - the rules fire on real output: a host with a missing vGPU, a conflict and a
#    damaged owner record, and one that `assert` found drifted, each turned into
#    promtool unit-test series, fire VgpuctlVgpuMissing (not before 15 minutes),
#    VgpuctlVgpuConflict, VgpuctlVfBlocked and VgpuctlAssertDrift with the
#    labels of vgpuctl's own series.
# Exits 77 (skipped) without promtool (Debian: apt-get install prometheus).
# With NVML_STANDIN (tests/nvml's libnvidia-ml.so.1), MIG mode from NVML too.
#   run.sh VGPUCTL SRCDIR [NVML_STANDIN]
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
nvml=${3:+$(realpath "$3")}
command -v promtool >/dev/null || { echo "promtool missing (Debian: prometheus): skipped"; exit 77; }
contrib=$src/contrib/prometheus
rules=$contrib/vgpuctl.rules.yml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# ---- the rules and their unit tests
promtool check rules "$rules" >"$tmp/out" 2>&1 || bad "promtool check rules: $(cat "$tmp/out")"
(cd "$src/tests/prometheus" && promtool test rules rules.test.yml) >"$tmp/out" 2>&1 ||
	bad "promtool test rules rules.test.yml: $(cat "$tmp/out")"
# every alert of the rules file has a unit test that expects it to fire
while read -r alert; do
	grep -A2 "alertname: $alert\$" "$src/tests/prometheus/rules.test.yml" | grep -q "exp_alerts:" ||
		bad "rules.test.yml never expects $alert to fire"
done < <(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\) *$/\1/p' "$rules")

# ---- the units: ExecStart must name an executable, so the built binary stands in
if command -v systemd-analyze >/dev/null; then
	mkdir "$tmp/units"
	sed "s|^ExecStart=/usr/sbin/vgpuctl |ExecStart=$bin |" "$contrib/vgpuctl-metrics.service" \
		>"$tmp/units/vgpuctl-metrics.service"
	cp "$contrib/vgpuctl-metrics.timer" "$tmp/units/"
	grep -q "^ExecStart=$bin metrics --textfile /var/lib/prometheus/node-exporter$" \
		"$tmp/units/vgpuctl-metrics.service" ||
		bad "ExecStart is not '/usr/sbin/vgpuctl metrics --textfile /var/lib/prometheus/node-exporter'"
	verify() { # UNIT...: what systemd-analyze verify says, empty when they are clean
		(cd "$tmp/units" && systemd-analyze verify --man=no "$@" 2>&1) || echo "exit $?"
	}
	out=$(verify "$tmp/units/vgpuctl-metrics.service" "$tmp/units/vgpuctl-metrics.timer")
	[ -z "$out" ] || bad "systemd-analyze verify: $out"
	# the check sees a bad unit (an unknown key prints a warning with exit 0)
	cp "$tmp/units/vgpuctl-metrics.service" "$tmp/good"
	sed -i 's/^ProtectSystem=/ProtectSystemm=/' "$tmp/units/vgpuctl-metrics.service"
	[ -n "$(verify "$tmp/units/vgpuctl-metrics.service")" ] || bad "verify did not notice an unknown key"
	cp "$tmp/good" "$tmp/units/vgpuctl-metrics.service"
	for want in "^Type=oneshot$" "^Documentation=man:vgpuctl(8)$" "^ProtectSystem=strict$" \
		"^ReadWritePaths=/var/lib/prometheus/node-exporter$"; do
		grep -q "$want" "$contrib/vgpuctl-metrics.service" || bad "the service lacks $want"
	done
	for want in "^Documentation=man:vgpuctl(8)$" "^OnUnitActiveSec=1min$" "^WantedBy=timers.target$"; do
		grep -q "$want" "$contrib/vgpuctl-metrics.timer" || bad "the timer lacks $want"
	done
else
	echo "note: systemd-analyze missing: the units were not verified"
fi

# ---- vgpuctl metrics
if ! "$bin" metrics --help >/dev/null 2>&1; then
	echo "note: $bin has no 'metrics' command yet: its output was not checked"
	[ $fail = 0 ] && echo "ok: the rules, their tests and the units (metrics skipped)"
	exit $fail
fi

# The checks on a metrics document, in Python: contract MET [GPUS VFS TYPES VGPUS]
# (families, types, labels; with the JSON listings, what the host has), series MET,
# alerttest MET RULES OUT (a promtool unit test that feeds MET to the rules, and
# expects the alerts from MET's own series) and get MET NAME LABEL=VALUE...
cat >"$tmp/check.py" <<'PY'
import json, re, sys

CONTRACT = {
    "vgpuctl_vgpus": ["gpu", "profile", "state"],
    "vgpuctl_vgpu": ["gpu", "vf", "profile", "type_id", "domain", "domain_uuid", "lifetime",
                     "state"],
    "vgpuctl_vfs": ["gpu", "state"],
    "vgpuctl_vgpu_class": ["class"],
    "vgpuctl_blocked_vfs": ["gpu"],
    "vgpuctl_available": ["gpu", "profile", "type_id"],
    "vgpuctl_max_instances": ["gpu", "profile", "type_id"],
    "vgpuctl_mig_enabled": ["gpu"],
    "vgpuctl_mig_pending_enabled": ["gpu"],
    "vgpuctl_last_run_timestamp_seconds": ["command", "config"],
    "vgpuctl_last_run_exit_code": ["command", "config"],
    "vgpuctl_last_run_differences": ["command", "config"],
    "vgpuctl_metrics_timestamp_seconds": [],
    "vgpuctl_up": [],
}
STATES = {"active", "reserved", "missing", "conflict", "orphan", "unknown", "damaged", "config", "incoming"}
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')
failed = False


def bad(msg):
    global failed
    print("FAIL: " + msg)
    failed = True


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse(path):
    """[(name, {label: value}, value, selector text)], {name: type}, {name: help}"""
    samples, types, helps = [], {}, {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith("# TYPE "):
            name, typ = line[7:].split(" ", 1)
            types[name] = typ
            continue
        if line.startswith("# HELP "):
            name, text = (line[7:].split(" ", 1) + [""])[:2]
            helps[name] = text
            continue
        if line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+\S+)?$', line)
        if not m:
            bad("not a sample line: %r" % line)
            continue
        labels, body = {}, (m.group(2) or "{}")[1:-1]
        pos = 0
        while pos < len(body):
            lm = LABEL.match(body, pos)
            if not lm:
                bad("cannot read the labels of %r" % line)
                break
            labels[lm.group(1)] = unescape(lm.group(2))
            pos = lm.end()
        samples.append((m.group(1), labels, float(m.group(3)), m.group(1) + (m.group(2) or "")))
    return samples, types, helps


def num(v):
    return "%d" % v if v == int(v) else repr(v)


def select(samples, name, **want):
    return [s for s in samples if s[0] == name and all(s[1].get(k) == v for k, v in want.items())]


def note(msg, seen=set()):
    if msg not in seen:
        print("note: " + msg)
        seen.add(msg)


def contract(path, listings):
    """Incompatible with the contract (a family of another type, a label of the contract
    missing, values out of range, disagreeing with vgpuctl's listings) fails; what only
    adds to it (families, labels, states) is a note."""
    samples, types, helps = parse(path)
    names = {s[0] for s in samples}
    for name in sorted(names | set(types)):
        if name not in CONTRACT:
            note("%s is not a family of the contract" % name)
            continue
        if types.get(name) != "gauge":
            bad("%s is of type %s, not gauge" % (name, types.get(name)))
        if not helps.get(name):
            bad("%s has no HELP text" % name)
    for name, lab, val, sel in samples:
        if name not in CONTRACT:
            continue
        if not set(CONTRACT[name]) <= set(lab):
            bad("%s lacks labels %s of the contract"
                % (sel, sorted(set(CONTRACT[name]) - set(lab))))
        if set(lab) - set(CONTRACT[name]):
            note("%s has labels %s beyond the contract's"
                 % (name, sorted(set(lab) - set(CONTRACT[name]))))
        if "state" in lab and name in ("vgpuctl_vgpus", "vgpuctl_vgpu") and lab["state"] not in STATES:
            bad("%s: state %r is none of %s" % (sel, lab["state"], sorted(STATES)))
        if name == "vgpuctl_vfs" and lab.get("state") not in ("free", "used"):
            note('vgpuctl_vfs has state="%s" beyond the contract\'s free and used'
                 % lab.get("state"))
        if name in ("vgpuctl_vgpu", "vgpuctl_up", "vgpuctl_mig_enabled",
                    "vgpuctl_mig_pending_enabled") and val not in (0, 1):
            bad("%s is %g, not 0 or 1" % (sel, val))
        if name == "vgpuctl_vgpu" and val != 1:
            bad("%s is %g, not 1" % (sel, val))
        if name == "vgpuctl_last_run_exit_code" and val not in (0, 1, 3):
            bad("%s is %g, not 0, 1 or 3" % (sel, val))
        if name == "vgpuctl_last_run_timestamp_seconds" or name.endswith("_seconds"):
            if not 1e9 < val < 1e11:
                bad("%s is %g, not a Unix time in seconds" % (sel, val))
    if len(select(samples, "vgpuctl_up")) != 1 or select(samples, "vgpuctl_up")[0][2] != 1:
        bad("vgpuctl_up is not there once with value 1")
    if len(select(samples, "vgpuctl_metrics_timestamp_seconds")) != 1:
        bad("vgpuctl_metrics_timestamp_seconds is not there once")
    # the alert's description names the VFs from vgpuctl_blocked_vf, where it is there
    if "vgpuctl_blocked_vf" in types:
        for name, lab, val, sel in select(samples, "vgpuctl_blocked_vfs"):
            n = len(select(samples, "vgpuctl_blocked_vf", gpu=lab.get("gpu")))
            if n != val:
                bad("%s is %g, but %d vgpuctl_blocked_vf series name that GPU" % (sel, val, n))
    if not listings:
        return
    gpus, vfs, typ, vgpus = (json.load(open(p)) for p in listings)
    for g in gpus["gpus"]:
        a = g["address"]
        if len(select(samples, "vgpuctl_blocked_vfs", gpu=a)) != 1:
            bad("no vgpuctl_blocked_vfs for GPU %s" % a)
        # gpus: "unknown" without NVML, {"current": ..., "pending": ...} from NVML
        mig = g.get("mig_mode")
        for name, key in (("vgpuctl_mig_enabled", "current"),
                          ("vgpuctl_mig_pending_enabled", "pending")):
            have = [s[2] for s in select(samples, name, gpu=a)]
            if isinstance(mig, dict) and mig.get(key) in ("enabled", "disabled"):
                if have != [1 if mig[key] == "enabled" else 0]:
                    bad("%s{gpu=\"%s\"} is %s, `vgpuctl gpus` says MIG mode %s %s"
                        % (name, a, have or "absent", key, mig[key]))
            elif have:
                note("%s is there where `vgpuctl gpus` says MIG mode %s"
                     % (name, mig if not isinstance(mig, dict) else mig.get(key)))
        mine = [v for v in vfs["vfs"] if v["gpu"] == a and v["address"] != a]
        got = select(samples, "vgpuctl_vfs", gpu=a)
        # a GPU without SR-IOV (a T4: its PF is the vGPU parent) has no VFs, free or used
        if not mine and sum(s[2] for s in got):
            bad("vgpuctl_vfs of GPU %s: %s, but it has no VFs (`vgpuctl vfs` lists only the PF)"
                % (a, [(s[1]["state"], s[2]) for s in got]))
        free = [s[2] for s in got if s[1]["state"] == "free"]
        if mine and (sum(s[2] for s in got) != len(mine) or
                     free != [len([v for v in mine if v["state"] == "free"])]):
            bad("vgpuctl_vfs of GPU %s: %s; `vgpuctl vfs` lists %d VFs, %d free"
                % (a, [(s[1]["state"], s[2]) for s in got], len(mine),
                   len([v for v in mine if v["state"] == "free"])))
    for t in typ["types"]:
        key = dict(gpu=t["gpu"], profile=t["profile"] or "", type_id=str(t["type_id"]))
        for name, field in (("vgpuctl_available", "available"),
                            ("vgpuctl_max_instances", "max_instances")):
            got = select(samples, name, **key)
            if t[field] is None:
                continue
            if len(got) != 1 or got[0][2] != t[field]:
                bad("%s%s: %s, `vgpuctl types` says %s"
                    % (name, key, [s[2] for s in got] or "none", t[field]))
    counts = {}
    for v in vgpus["vgpus"]:
        want = dict(gpu=v["gpu"] or "", vf=v["vf"] or "", state=v["state"],
                    domain=v["domain"] or "", profile=v["profile"] or "")
        if len(select(samples, "vgpuctl_vgpu", **want)) != 1:
            bad("no vgpuctl_vgpu%s (a row of `vgpuctl vgpus`)" % want)
        if v["state"] == "damaged":
            continue  # its profile is not known: vgpuctl_blocked_vfs counts it
        k = (want["gpu"], want["profile"], want["state"])
        counts[k] = counts.get(k, 0) + 1
    if len(select(samples, "vgpuctl_vgpu")) != len(vgpus["vgpus"]):
        bad("%d vgpuctl_vgpu series, `vgpuctl vgpus` lists %d"
            % (len(select(samples, "vgpuctl_vgpu")), len(vgpus["vgpus"])))
    got = {(s[1]["gpu"], s[1]["profile"], s[1]["state"]): s[2]
           for s in select(samples, "vgpuctl_vgpus") if s[2]}
    if got != counts:
        bad("vgpuctl_vgpus %s, `vgpuctl vgpus` counts %s" % (sorted(got.items()), sorted(counts.items())))


def alerttest(path, rules, out):
    """A promtool unit test: MET's samples as series over 20 minutes, and the alerts the
    rules must fire on them, expected with the labels of vgpuctl's own series."""
    samples, _, _ = parse(path)
    host = {"instance": "gpuhost:9100", "job": "node"}
    series = []
    for name, lab, val, sel in samples:
        labels = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"')
                                       .replace("\n", "\\n"))
                          for k, v in sorted({**lab, **host}.items()))
        series.append({"series": "%s{%s}" % (name, labels), "values": num(val) + "x20"})

    def fired(name, severity, pred):
        return [{"exp_labels": {**lab, **host, "severity": severity}}
                for n, lab, val, _ in samples if n == name and pred(lab, val)]
    # missing and the hook could not re-create it (vgpuctl_vgpu_startable 0 or absent)
    can_start = {(lab.get("vf"), lab.get("domain_uuid")) for n, lab, val, _ in samples
                 if n == "vgpuctl_vgpu_startable" and val == 1}
    missing = fired("vgpuctl_vgpu", "warning", lambda l, v: l.get("state") == "missing" and
                    (l.get("vf"), l.get("domain_uuid")) not in can_start)
    conflict = fired("vgpuctl_vgpu", "critical", lambda l, v: l.get("state") == "conflict")
    blocked = fired("vgpuctl_blocked_vfs", "warning", lambda l, v: v > 0)
    drift = fired("vgpuctl_last_run_exit_code", "warning",
                  lambda l, v: l.get("command") == "assert" and v == 3)
    down = fired("vgpuctl_up", "warning", lambda l, v: v == 0)
    tests = [
        {"eval_time": "14m", "alertname": "VgpuctlVgpuMissing"},
        {"eval_time": "15m", "alertname": "VgpuctlVgpuMissing", "exp_alerts": missing},
        {"eval_time": "4m", "alertname": "VgpuctlVgpuConflict"},
        {"eval_time": "5m", "alertname": "VgpuctlVgpuConflict", "exp_alerts": conflict},
        {"eval_time": "5m", "alertname": "VgpuctlVfBlocked", "exp_alerts": blocked},
        {"eval_time": "5m", "alertname": "VgpuctlAssertDrift", "exp_alerts": drift},
        {"eval_time": "4m", "alertname": "VgpuctlHostUnreadable"},
        {"eval_time": "5m", "alertname": "VgpuctlHostUnreadable", "exp_alerts": down},
        {"eval_time": "20m", "alertname": "VgpuctlApplyFailed"},
        {"eval_time": "20m", "alertname": "VgpuctlAssertFailed"},
    ]
    doc = {"rule_files": [rules], "evaluation_interval": "1m",
           "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": tests}]}
    # JSON is YAML
    json.dump(doc, open(out, "w"), indent=1)
    print(" ".join("%s=%d" % (k, len(v)) for k, v in
                   (("missing", missing), ("conflict", conflict), ("blocked", blocked),
                    ("drift", drift), ("unreadable", down))))


def get(path, name, *want):
    """the values of NAME's series that have every LABEL=VALUE, one a line"""
    samples, _, _ = parse(path)
    for s in select(samples, name, **dict(w.split("=", 1) for w in want)):
        print(num(s[2]))


cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "contract":
    contract(args[0], args[1:])
    sys.exit(1 if failed else 0)
elif cmd == "alerttest":
    alerttest(*args)
    sys.exit(1 if failed else 0)
elif cmd == "get":
    get(*args)  # what it cannot read was said; the caller compares the values
PY
chk() { python3 "$tmp/check.py" "$@"; }

# metrics ROOT OUT: `vgpuctl --sysroot ROOT metrics` to OUT, then promtool's lint and
# the contract's checks (with the host's listings when the host is a fixture as is)
metrics() {
	local root=$1 out=$2 t0 t1 ts l
	shift 2
	t0=$(date +%s)
	"$bin" --sysroot "$root" "${glob[@]}" metrics >"$out" 2>"$tmp/err" ||
		{ bad "metrics on $root: exit $?: $(cat "$tmp/err")"; return 0; }
	t1=$(date +%s)
	promtool check metrics <"$out" >"$tmp/lint" 2>&1 ||
		bad "promtool check metrics on $root's metrics: $(cat "$tmp/lint")"
	ts=$(chk get "$out" vgpuctl_metrics_timestamp_seconds || true)
	if ! [[ $ts =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! python3 -c "import sys; sys.exit(not $t0 - 1 <= $ts <= $t1 + 1)"; then
		bad "metrics on $root: vgpuctl_metrics_timestamp_seconds '$ts' is not the time it ran ($t0-$t1)"
	fi
	if [ $# = 0 ]; then
		for l in gpus vfs types vgpus; do
			"$bin" --sysroot "$root" "${glob[@]}" --json $l >"$tmp/$l.json" 2>/dev/null ||
				bad "vgpuctl --json $l on $root failed"
		done
		set -- "$tmp/gpus.json" "$tmp/vfs.json" "$tmp/types.json" "$tmp/vgpus.json"
	else
		set --
	fi
	chk contract "$out" "$@" >"$tmp/contract" || bad "(below) metrics on $root"
	grep -v '^note: ' "$tmp/contract" || true
	grep '^note: ' "$tmp/contract" >>"$tmp/notes" || true
}
glob=() # global options before `metrics`
: >"$tmp/notes"

# textfile ROOT WANT: --textfile writes WANT's document (but its time), world-readable,
# and leaves nothing else in the directory; an older file there is replaced
textfile() {
	local root=$1 want=$2 d=$tmp/textfile left
	rm -rf "$d"
	mkdir "$d"
	echo "vgpuctl_up 0" >"$d/vgpuctl.prom"
	"$bin" --sysroot "$root" metrics --textfile "$d" >"$tmp/tf.out" 2>"$tmp/err" ||
		{ bad "metrics --textfile on $root: exit $?: $(cat "$tmp/err")"; return 0; }
	[ ! -s "$tmp/tf.out" ] || bad "metrics --textfile on $root wrote to stdout: $(head -3 "$tmp/tf.out")"
	left=$(find "$d" -mindepth 1 -printf '%f ')
	[ "$left" = "vgpuctl.prom " ] || bad "metrics --textfile on $root left: $left"
	[ -f "$d/vgpuctl.prom" ] || return 0
	(($(stat -c %#a "$d/vgpuctl.prom") & 4)) ||
		bad "$d/vgpuctl.prom is mode $(stat -c %a "$d/vgpuctl.prom"): node-exporter's user cannot read it"
	diff <(grep -v '^vgpuctl_metrics_timestamp_seconds ' "$want") \
		<(grep -v '^vgpuctl_metrics_timestamp_seconds ' "$d/vgpuctl.prom") >"$tmp/diff" ||
		bad "metrics --textfile on $root differs from its stdout: $(head -20 "$tmp/diff")"
}

n=0
for host in "$src"/tests/data/hosts/*/; do
	host=${host%/}
	[ "${host##*/}" != malformed ] || continue
	metrics "$host" "$tmp/${host##*/}.prom"
	[ -s "$tmp/${host##*/}.prom" ] && textfile "$host" "$tmp/${host##*/}.prom"
	n=$((n + 1))
done

# ---- the rules on real output.  A copy of the rules without annotations (their
# templates are rules.test.yml's business), so only the labels are compared.
sed '/^ *annotations:/,/^ *- alert:/{/^ *- alert:/!d}' "$rules" >"$tmp/rules.yml"
grep -q "^ *annotations:" "$tmp/rules.yml" && bad "could not strip the annotations from $rules"
[ "$(grep -c '^ *- alert:' "$tmp/rules.yml")" = "$(grep -c '^ *- alert:' "$rules")" ] ||
	bad "stripping the annotations lost an alert"
# alerts NAME MET: promtool runs the rules on MET's series
alerts() {
	local counts
	counts=$(chk alerttest "$2" "$tmp/rules.yml" "$tmp/$1.test.yml") || {
		bad "$1: cannot make a unit test of $2"
		return 0
	}
	echo "$1: $counts"
	promtool test rules "$tmp/$1.test.yml" >"$tmp/out" 2>&1 ||
		bad "$1: the rules on vgpuctl's metrics: $(cat "$tmp/out")"
}
OWN=var/lib/vgpuctl/owners
record() { # ROOT KEY DOMAIN UUID GPU VF TYPE PROFILE: a persistent vendor-VFIO owner record
	printf 'domain=%s\ndomain_uuid=%s\ngpu=%s\nparent=%s\ninterface=vendor-vfio\ntype_id=%s\nprofile=%s\nmdev_uuid=\nlifetime=persistent\n' \
		"$3" "$4" "$5" "$6" "$7" "$8" >"$1/$OWN/$2"
}
# vfio-ts-l40s: vm1's L40S-8Q on c1:00.4 is missing (after a reboot) and can be created
# again (no alert), vm3's L40S-8Q on 41:00.4 is missing and cannot (41 holds a 4 GB vGPU:
# its VFs offer no 8 GB type), the orphan on 41:00.5 is vm2's by its record, which says
# L40S-8Q (a conflict), c1:00.6's record is damaged
r=$tmp/broken
cp -a "$src/tests/data/hosts/vfio-ts-l40s" "$r"
rm -rf "$r/var/lib/vgpuctl/runs" # what an earlier assert on the tree left there
mkdir -p "$r/$OWN"
record "$r" 0000:c1:00.4 vm1 11111111-2222-4333-8444-555555555555 0000:c1:00.0 0000:c1:00.4 1151 L40S-8Q
record "$r" 0000:41:00.5 vm2 22222222-2222-4333-8444-555555555555 0000:41:00.0 0000:41:00.5 1151 L40S-8Q
record "$r" 0000:41:00.4 vm3 33333333-2222-4333-8444-555555555555 0000:41:00.0 0000:41:00.4 1151 L40S-8Q
echo garbage >"$r/$OWN/0000:c1:00.6"
metrics "$r" "$tmp/broken.prom" --no-listings
v() { chk get "$tmp/broken.prom" "$@" || true; }
[ "$(v vgpuctl_vgpu vf=0000:c1:00.4 state=missing domain=vm1 profile=L40S-8Q type_id=1151 \
	domain_uuid=11111111-2222-4333-8444-555555555555 lifetime=persistent gpu=0000:c1:00.0)" = 1 ] ||
	bad "broken host: vm1's vGPU on c1:00.4 is not vgpuctl_vgpu{state=\"missing\"}"
[ "$(v vgpuctl_vgpu_startable vf=0000:c1:00.4 domain=vm1)" = 1 ] ||
	bad "broken host: vm1's missing vGPU on a free c1:00.4 is not startable"
[ "$(v vgpuctl_vgpu_startable vf=0000:41:00.4 domain=vm3)" = 0 ] ||
	bad "broken host: vm3's L40S-8Q on 41:00.4 (a GPU with a 4 GB vGPU) is startable"
[ "$(v vgpuctl_vgpu vf=0000:41:00.5 state=conflict domain=vm2)" = 1 ] ||
	bad "broken host: vm2's vGPU on 41:00.5 is not vgpuctl_vgpu{state=\"conflict\"}"
[ "$(v vgpuctl_vgpu vf=0000:c1:00.6 state=damaged)" = 1 ] ||
	bad "broken host: the damaged record of c1:00.6 is not vgpuctl_vgpu{state=\"damaged\"}"
[ -z "$(v vgpuctl_vgpus gpu=0000:c1:00.0 state=damaged)" ] ||
	bad "broken host: the damaged record of c1:00.6 is counted in vgpuctl_vgpus (its profile is not known)"
[ "$(v vgpuctl_vgpus gpu=0000:c1:00.0 profile=L40S-8Q state=missing)" = 1 ] ||
	bad "broken host: vgpuctl_vgpus{gpu=\"0000:c1:00.0\",profile=\"L40S-8Q\",state=\"missing\"} is not 1"
for g in 0000:c1:00.0 0000:41:00.0; do
	b=$(v vgpuctl_blocked_vfs gpu=$g)
	if ! [[ $b =~ ^[0-9]+$ ]] || ((b < 1)); then
		bad "broken host: vgpuctl_blocked_vfs{gpu=\"$g\"} is '$b', not 1 or more"
	fi
done
[ ! -s "$tmp/broken.prom" ] || alerts broken "$tmp/broken.prom"

# a30-dual-mdev just booted, as tests/cli/examples.sh: assert finds drift (exit 3),
# which the metrics report as the last assert of its config
r=$tmp/booted
cp -a "$src/tests/data/hosts/a30-dual-mdev" "$r"
rm -rf "$r/var/lib/vgpuctl/runs"
"$src/tests/apply/fake-nv-boot" "$r"
rc=0
FAKE_NV_ROOT=$r "$bin" --sysroot "$r" assert -f "$src/docs/examples/host.yaml" --config a30-mixed \
	--nvidia-smi "$src/tests/apply/fake-nvidia-smi" --sriov-manage "$src/tests/apply/fake-sriov-manage" \
	>"$tmp/assert.out" 2>"$tmp/err" || rc=$?
[ $rc = 3 ] || bad "assert on the booted host: exit $rc (want 3): $(cat "$tmp/assert.out" "$tmp/err")"
metrics "$r" "$tmp/booted.prom" --no-listings
v() { chk get "$tmp/booted.prom" "$@" || true; }
[ "$(v vgpuctl_last_run_exit_code command=assert config=a30-mixed)" = 3 ] ||
	bad "booted host: vgpuctl_last_run_exit_code{command=\"assert\",config=\"a30-mixed\"} is not 3"
d=$(v vgpuctl_last_run_differences command=assert config=a30-mixed)
# assert prints each difference on a line of stdout
[ "$d" = "$(grep -c . "$tmp/assert.out")" ] ||
	bad "booted host: vgpuctl_last_run_differences of the assert is '$d', assert printed $(grep -c . "$tmp/assert.out") lines"
[ -n "$(v vgpuctl_last_run_timestamp_seconds command=assert config=a30-mixed)" ] ||
	bad "booted host: no vgpuctl_last_run_timestamp_seconds{command=\"assert\",config=\"a30-mixed\"}"
[ ! -s "$tmp/booted.prom" ] || alerts booted "$tmp/booted.prom"

# a host that cannot be read: exit 1, and still a document that says so (vgpuctl_up 0)
mkdir "$tmp/down"
rc=0
"$bin" --sysroot "$tmp/no-such-root" metrics --textfile "$tmp/down" 2>"$tmp/err" || rc=$?
[ $rc = 1 ] || bad "metrics on a sysroot that does not exist: exit $rc (want 1)"
if [ -f "$tmp/down/vgpuctl.prom" ]; then
	promtool check metrics <"$tmp/down/vgpuctl.prom" >"$tmp/lint" 2>&1 ||
		bad "promtool check metrics on the unreadable host's metrics: $(cat "$tmp/lint")"
	[ "$(chk get "$tmp/down/vgpuctl.prom" vgpuctl_up || true)" = 0 ] ||
		bad "the unreadable host's metrics do not say vgpuctl_up 0"
	alerts unreadable "$tmp/down/vgpuctl.prom"
else
	bad "metrics --textfile on a sysroot that does not exist wrote no vgpuctl.prom"
fi

# MIG mode from NVML (the stand-in of tests/nvml, when given): a booted H100, MIG off, then on
if [ -n "$nvml" ]; then
	r=$tmp/nvml
	cp -a "$src/tests/data/hosts/vfio-mig-h100" "$r"
	"$src/tests/apply/fake-nv-boot" "$r"
	export FAKE_NV_ROOT=$r
	glob=(--nvml "$nvml")
	metrics "$r" "$tmp/nvml.prom"
	v() { chk get "$tmp/nvml.prom" "$@" || true; }
	[ "$(v vgpuctl_mig_enabled gpu=0000:ca:00.0)/$(v vgpuctl_mig_pending_enabled gpu=0000:ca:00.0)" = 0/0 ] ||
		bad "NVML, MIG off: vgpuctl_mig_enabled/vgpuctl_mig_pending_enabled are not 0/0"
	"$src/tests/apply/fake-nvidia-smi" -i 0000:ca:00.0 -mig 1 >/dev/null
	metrics "$r" "$tmp/nvml.prom"
	[ "$(v vgpuctl_mig_enabled gpu=0000:ca:00.0)/$(v vgpuctl_mig_pending_enabled gpu=0000:ca:00.0)" = 1/1 ] ||
		bad "NVML, MIG on: vgpuctl_mig_enabled/vgpuctl_mig_pending_enabled are not 1/1"
	glob=()
	unset FAKE_NV_ROOT
else
	echo "note: no NVML stand-in given: MIG mode from NVML was not checked"
fi

sort -u "$tmp/notes"
[ $fail = 0 ] && echo "ok: the rules, their tests, the units, and metrics on $n fixture hosts"
exit $fail
