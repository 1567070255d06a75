#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every documented synopsis form runs without a usage error (exit 2): the
# forms of README.md's command list, vgpuctl(8)'s SYNOPSIS and COMMANDS, "vgpuctl --help",
# "vgpuctl help COMMAND" for every command, and the vgpuctl command lines of
# contrib/prometheus (README.md and the alert texts of vgpuctl.rules.yml).
# Each form is expanded: every optional [...] with and without it, every
# alternative of a|b, placeholders given a value of the bundled dual-A30 host
# (a copy, --sysroot), so "why PROFILE [--gpu BDF]" runs as "why A30-1-6C" and
# "why A30-1-6C --gpu 0000:3b:00.0".  A form may fail (exit 1: no such
# domain, no nvidia-smi); it may not be refused as a command line.
# libvirt is the test driver and apply/assert get stand-in tools that do not
# exist, so nothing outside the copy is touched.
#   synopsis.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a tests/data/hosts/a30-dual-mdev "$tmp/host"
mkdir "$tmp/prom"
# "vgpuctl help COMMAND" for each command of "vgpuctl --help"
for cmd in $("$bin" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
	"$bin" help "$cmd" | sed -n 's/^\(Usage:\)\? *\(vgpuctl .*\)/\2/p' >"$tmp/help-$cmd"
done
# and "vgpuctl --help"'s own
"$bin" --help | sed -n 's/^Usage: \(vgpuctl .*\)/\1/p' >"$tmp/help-0"
cat "$tmp"/help-* >"$tmp/help.txt"
[ -s "$tmp/help.txt" ] || { echo "FAIL: no Usage lines from vgpuctl help"; exit 1; }

python3 - "$tmp" >"$tmp/forms" <<'PY' || exit 1
import itertools, re, sys

tmp = sys.argv[1]
forms = []  # (where, synopsis)


def add(where, text):
    text = ' '.join(text.split())
    if text:
        forms.append((where, text))


# README.md: the command list, the first fenced block with "vgpuctl " lines
lines = open('README.md').read().split('\n')
i = next(k for k, l in enumerate(lines) if l.startswith('```'))
for k in range(i + 1, len(lines)):
    if lines[k].startswith('```'):
        break
    if lines[k].startswith('vgpuctl '):
        add('README.md:%d' % (k + 1), lines[k])


def unroff(s):
    s = re.sub(r'\\f[BIRP]', '', s).replace('\\-', '-').replace('\\&', '')
    return s


# vgpuctl(8): SYNOPSIS, and the .TP headings of COMMANDS
man = open('docs/vgpuctl.8').read().split('\n')
sec, syn, prev = None, [], ''
for k, l in enumerate(man):
    if l.startswith('.SH '):
        sec = l[4:].strip()
        continue
    if sec == 'SYNOPSIS':
        syn.append(re.sub(r'^\.[A-Z]+ ?', '', l).replace('"', ''))
    elif sec == 'COMMANDS' and prev == '.TP' and re.match(r'\.BR? [a-z]', l):
        words = re.sub(r'^\.BR? ', '', l)
        add('vgpuctl.8:%d' % (k + 1), 'vgpuctl ' + unroff(words.replace('"', '')))
    prev = l
add('vgpuctl.8 SYNOPSIS', unroff(' '.join(syn)))

# vgpuctl help COMMAND
for k, l in enumerate(open(tmp + '/help.txt').read().split('\n')):
    add('vgpuctl help (line %d)' % (k + 1), l)

# contrib/prometheus: `vgpuctl ...` with arguments, alert texts joined over their lines
for f in ['contrib/prometheus/README.md', 'contrib/prometheus/vgpuctl.rules.yml']:
    text = ' '.join(open(f).read().split())
    for m in re.finditer(r'`(vgpuctl [^`]*)`', text):
        if len(m.group(1).split()) > 2:
            add(f, m.group(1))

# ---- expansion
VALUES = {  # the value of an option's argument, whatever the form calls it
    '--sysroot': tmp + '/host', '--nvml': tmp + '/none/libnvidia-ml.so.1',
    '--nvfm': tmp + '/none/libnvfm.so.1',
    '-c': 'test:///default', '--connect': 'test:///default',
    '--gpu': '0000:3b:00.0', '--vf': '0000:3b:00.4', '--board': 'A30',
    '--lgi': 'tests/data/mig/lgi-a30-one.txt', '--name': 'vm1', '--vgpu': 'A30-1-6C',
    '--vcpus': '2', '--memory': '1G', '--uuid': '2b4e5ffa-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    '--mdev-uuid': '3c5f6ffa-1c2d-4e5f-8a9b-0c1d2e3f4a5b', '--template': 'templates/domain.xml',
    '--from': 'tests/data/domains/plain.xml', '--exclude-cpus': '0', '--emulator-cpus': '1',
    '--virt-type': 'kvm', '-f': 'tests/data/configs/vgpu-device-manager-example.yaml',
    '--file': 'tests/data/configs/vgpu-device-manager-example.yaml', '--config': 'A30-1-6C',
    '--nvidia-smi': tmp + '/none/nvidia-smi', '--sriov-manage': tmp + '/none/sriov-manage',
    '--textfile': tmp + '/prom', '--bandwidth': '10000', '--since': '2h',
    '--timeslice': '3', '--grace': '0', '--average-factor': '60', '--frequency': '960',
}
CMD_VALUES = {  # where one option name takes another value per command
    'scheduler': {'--set': 'equal-share'},  # params' --set KEY=VALUE stays as the form says
}
POSITIONAL = {  # a placeholder that is an argument of its own
    'PROFILE': 'A30-1-6C', 'GPU': '0000:3b:00.0', 'BDF': '0000:3b:00.0', 'DOMAIN': 'vm-none',
    'command': 'gpus', 'COMMAND': 'gpus', 'OPERATION': 'prepare', 'SUB-OPERATION': 'begin',
    'EXTRA': '-', 'ID': '3',
}
LABELS = {'profile': 'A30-1-6C', 'gpu': '0000:3b:00.0', 'domain': 'vm-none',
          'config': 'A30-1-6C', 'instance': 'localhost'}
XML_REQUIRED = '--name NAME --vgpu PROFILE --vcpus N --memory SIZE'


def tokens(s):
    s = re.sub(r'\{\{ *\$labels\.(\w+) *\}\}', lambda m: LABELS[m.group(1)], s)
    s = s.replace('...', '')
    s = re.sub(r'\[,[^\]]*\]', '', s)  # PROFILE[,PROFILE...]: one is enough
    s = re.sub(r'\[x[A-Z]\]', '', s)  # PROFILE[xN]
    return re.findall(r'[\[\]()|]|[^\s\[\]()|]+', s)


def parse(toks, i, close):
    """alternatives until @close: a list of sequences; each item a word or ('opt'|'grp', alts)"""
    alts, seq = [], []
    while i < len(toks) and toks[i] != close:
        t = toks[i]
        if t == '|':
            alts.append(seq)
            seq = []
            i += 1
        elif t in '[(':
            sub, i = parse(toks, i + 1, ']' if t == '[' else ')')
            i += 1
            words = [w for a in sub for w in a if isinstance(w, str)]
            if t == '(' and len(sub) == 1:
                continue  # (a description)
            if t == '[' and ('options' in words or 'ARGS' in words):
                continue  # [options], [xml options]: the command's other options
            seq.append(('opt' if t == '[' else 'grp', sub))
        else:
            seq.append(t)
            i += 1
    alts.append(seq)
    return alts, i


def expand_seq(seq):
    parts = []
    for item in seq:
        if isinstance(item, str):
            parts.append([[item]])
        else:
            kind, alts = item
            choices = [w for a in alts for w in expand_seq(a)]
            parts.append(([[]] if kind == 'opt' else []) + choices)
    out = []
    for combo in itertools.product(*parts):
        out.append([w for p in combo for w in p])
        if len(out) > 256:
            break
    return out


def instantiate(words):
    words = ['gpus' if w in ('COMMAND', 'command') else w for w in words]
    cmd = next((w for w in words[1:] if re.match(r'^[a-z]+$', w)), '')
    if cmd == 'plan' and '--name' not in words:
        words = words + XML_REQUIRED.split()  # plan (same options as xml)
    out = []
    for k, w in enumerate(words):
        prev = out[-1] if out else ''
        if prev in ('-o', '--output'):
            # assign/release: a file; a listing: LIST is a column it has, a name stays
            if cmd in ('assign', 'release'):
                out.append(tmp + '/out.xml')
            elif w == 'LIST':
                out.append({'gpus': 'ADDRESS', 'vfs': 'ADDRESS', 'topology': 'NODE'}.get(cmd, 'GPU'))
            else:
                out.append(w)
        elif prev in CMD_VALUES.get(cmd, {}) and not w.startswith('-'):
            out.append(CMD_VALUES[cmd][prev])
        elif prev in VALUES and not w.startswith('-'):
            out.append(VALUES[prev])
        elif w in POSITIONAL:
            out.append('1g.6gb' if w == 'PROFILE' and 'mig' in out and 'plan' in out
                       else POSITIONAL[w])
        else:
            out.append(w)
    return out


seen = set()
for where, text in forms:
    alts, _ = parse(tokens(text), 0, None)
    for seq in alts:
        for words in expand_seq(seq):
            if not words or words[0] != 'vgpuctl':
                words = ['vgpuctl'] + words
            line = ' '.join(instantiate(words))
            if line not in seen:
                seen.add(line)
                print('%s\t%s\t%s' % (where, text, line))
PY

n=0 fail=0
while IFS=$'\t' read -r where text line; do
	read -r -a argv <<<"$line"
	argv=("${argv[@]:1}")
	# apply and assert: tools that do not exist, never the host's
	case " ${argv[*]} " in
	*" apply "* | *" assert "*)
		argv+=(--nvidia-smi "$tmp/none/nvidia-smi" --sriov-manage "$tmp/none/sriov-manage") ;;
	esac
	n=$((n + 1))
	rc=0
	LIBVIRT_DEFAULT_URI=test:///default timeout 60 "$bin" --sysroot "$tmp/host" "${argv[@]}" \
		</dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ $rc = 2 ] || grep -q "^Try 'vgpuctl" "$tmp/err"; then
		echo "FAIL: $where: '$text' as: vgpuctl ${argv[*]}"
		head -3 "$tmp/err"
		fail=1
	fi
done <"$tmp/forms"
[ $n -gt 100 ] || { echo "FAIL: only $n forms (the extraction broke)"; fail=1; }
echo "$n command lines from the documented forms"
exit $fail
