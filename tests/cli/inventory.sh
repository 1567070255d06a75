#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vgpuctl inventory: on every bundled host, the JSON document validates against
# the schema that ships (docs/inventory.schema.json, JSON Schema 2020-12), says
# "schema_version": 1, and each of its arrays is what the command of that name
# prints with --json (one reading, the same answers).  On a copy of the L40S
# host with owner records, the records whose vGPU is not there are the
# reservations.  The text form heads each table.
#   inventory.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() {
	echo "FAIL: $*"
	fail=1
}
python3 -c 'import jsonschema' 2>/dev/null || { echo "python3-jsonschema is missing"; exit 77; }
# check.py SCHEMA DOC: validate; then "KEY COMMAND-JSON-FILE" pairs on stdin are compared
cat >"$tmp/check.py" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
doc = json.load(open(sys.argv[2]))
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:5]:
    print("schema: %s: %s" % ("/".join(map(str, e.path)), e.message[:200]))
bad = bool(errors)
for line in sys.stdin:
    key, path = line.split()
    want = json.load(open(path))[key]
    if doc.get(key) != want:
        print("'%s' differs from the command's --json" % key)
        bad = True
sys.exit(1 if bad else 0)
PY
check() { # HOST-DIR NAME
	local h=$1 name=$2 cmd
	if ! "$bin" --sysroot "$h" inventory --json >"$tmp/doc.json" 2>"$tmp/err"; then
		bad "$name: inventory --json failed: $(cat "$tmp/err")"
		return
	fi
	: >"$tmp/pairs"
	for cmd in gpus vfs types vgpus topology; do
		"$bin" --sysroot "$h" "$cmd" --json >"$tmp/$cmd.json" 2>/dev/null
		echo "$cmd $tmp/$cmd.json" >>"$tmp/pairs"
	done
	python3 "$tmp/check.py" "$src/docs/inventory.schema.json" "$tmp/doc.json" <"$tmp/pairs" \
		>"$tmp/why" 2>&1 || bad "$name: $(cat "$tmp/why")"
}
n=0
for h in "$src"/tests/data/hosts/*/; do
	check "$h" "$(basename "$h")"
	n=$((n + 1))
done

# owner records: a persistent one whose vGPU is gone (missing), a per-start one
# (reserved), and one whose vGPU is there (active, not a reservation)
cp -a "$src/tests/data/hosts/vfio-ts-l40s" "$tmp/host"
mkdir -p "$tmp/host/var/lib/vgpuctl/owners"
record() { # VF DOMAIN UUID LIFETIME TYPE PROFILE
	printf 'domain=%s\ndomain_uuid=%s\ngpu=0000:c1:00.0\nparent=%s\ninterface=vendor-vfio\ntype_id=%s\nprofile=%s\nmdev_uuid=\nlifetime=%s\n' \
		"$2" "$3" "$1" "$5" "$6" "$4" >"$tmp/host/var/lib/vgpuctl/owners/$1"
}
record 0000:c1:00.4 vm-missing 11111111-2222-4333-8444-555555555551 persistent 1151 L40S-8Q
record 0000:c1:00.5 vm-reserved 11111111-2222-4333-8444-555555555552 per-start 1151 L40S-8Q
check "$tmp/host" "L40S with records"
got=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%s:%s:%s" % (r["vf"], r["domain"], r["state"]) for r in d["reservations"])))' "$tmp/doc.json")
[[ $got == "0000:c1:00.4:vm-missing:missing 0000:c1:00.5:vm-reserved:reserved" ]] ||
	bad "reservations: got '$got'"
got=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["schema_version"], d["host"]["sysroot"] == sys.argv[2], d["host"]["nvml"])' "$tmp/doc.json" "$tmp/host")
[[ $got == "1 True False" ]] || bad "schema_version/host: got '$got'"

# text: one headed table after another
"$bin" --sysroot "$src/tests/data/hosts/a30-dual-mdev" inventory >"$tmp/text" 2>&1 || bad "inventory (text) failed"
got=$(grep -E '^[A-Za-z][A-Za-z -]*:$' "$tmp/text" | tr '\n' '|')
[[ $got == "GPUs:|VFs:|vGPU types:|GPU instances:|vGPUs:|Reservations:|NUMA topology:|" ]] ||
	bad "inventory text sections: $got"
RC=0
"$bin" --sysroot "$src/tests/data/hosts/a30-dual-mdev" -o GPU inventory >"$tmp/out" 2>&1 || RC=$?
[[ $RC == 2 ]] || bad "inventory -o: exit $RC, want 2 (several tables): $(cat "$tmp/out")"
[[ $fail == 0 ]] && echo "ok: inventory --json on $n bundled hosts and one with records matches the schema and the commands"
exit $fail
