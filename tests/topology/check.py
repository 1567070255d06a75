# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare 'vgpuctl --json topology' with what real-machine sysfs dumps say.

  check.py VGPUCTL DUMPSDIR [NAME-SUBSTRING...]

Each dump (hwloc *.tar.bz2, util-linux *.tar.gz or directory) is extracted
into a temporary directory, vgpuctl runs on it with a 10 s timeout, and the
NUMA nodes, their CPUs, core counts and thread-sibling sets are recomputed
here, independently of the C code, from the dump's own files:

  nodes    node/online, else the nodeN directories, else one node 0
  cpus     nodeN/cpulist, else nodeN/cpumap (hex mask); a lone node with
           neither holds every online CPU
  online   cpu/online, else cpu/present, else the cpuN directories that are
           online per cpuN/online (no such file, or an empty one: online)
  siblings cpuN/topology/thread_siblings_list, else thread_siblings (mask);
           missing: the CPU is its own core
everything restricted to online CPUs.  Node cpulists that overlap must also
produce a 'vgpuctl: warning:' naming one of the overlapping cpulist files.
Exit 0 if all pass, 1 otherwise, 77 if DUMPSDIR is missing.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 10


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read().replace(b'\0', b'').decode('ascii', 'replace').strip()
    except OSError:
        return None


def parse_cpulist(text):
    cpus = set()
    for part in text.replace('\n', ',').split(','):
        part = part.strip()
        if not part:
            continue
        stride = 1
        if ':' in part:
            part, s = part.split(':', 1)
            stride = int(s)
        if '-' in part:
            a, b = part.split('-', 1)
            cpus.update(range(int(a), int(b) + 1, stride))
        else:
            cpus.add(int(part))
    return cpus


def parse_mask(text):
    """Kernel cpumask: 32-bit hex words, most significant first, comma-separated."""
    words = [w.strip() for w in text.replace('\n', '').split(',') if w.strip()]
    value = 0
    for w in words:
        value = (value << 32) | int(w, 16)
    return {i for i in range(value.bit_length()) if value >> i & 1}


def read_set(listpath, maskpath):
    """(set, file used) from a cpulist file, else a mask file, else (None, None)."""
    t = read(listpath)
    if t is not None:
        return parse_cpulist(t), listpath
    t = read(maskpath) if maskpath else None
    if t is not None:
        return parse_mask(t), maskpath
    return None, None


def numbered(dirpath, prefix):
    try:
        names = os.listdir(dirpath)
    except OSError:
        return []
    rx = re.compile(re.escape(prefix) + r'([0-9]+)$')
    return sorted(int(m.group(1)) for m in map(rx.match, names) if m and
                  os.path.isdir(os.path.join(dirpath, m.group(0))))


def fmt(cpus):
    out, c = [], sorted(cpus)
    i = 0
    while i < len(c):
        j = i
        while j + 1 < len(c) and c[j + 1] == c[j] + 1:
            j += 1
        out.append(str(c[i]) if i == j else '%d-%d' % (c[i], c[j]))
        i = j + 1
    return ','.join(out)


def expected(root):
    """-> ({node id: [(cpus, [sibling sets])...]} (accepted answers, first preferred),
    overlapping cpulist paths relative to root, notes)"""
    sysd = os.path.join(root, 'sys/devices/system')
    cpud, noded = os.path.join(sysd, 'cpu'), os.path.join(sysd, 'node')
    notes = []
    t = read(os.path.join(cpud, 'online'))
    if t is None:
        t = read(os.path.join(cpud, 'present'))
    if t is not None:
        online = parse_cpulist(t)
    else:
        online = set()
        for c in numbered(cpud, 'cpu'):
            o = read(os.path.join(cpud, 'cpu%d' % c, 'online'))
            # no file: not hot-pluggable, online; an empty or unparsable one
            # (some dumps hold empty files) is damage, warned about: online
            if o != '0':
                online.add(c)
    t = read(os.path.join(noded, 'online'))
    if t is not None:
        node_ids = sorted(parse_cpulist(t))
    else:
        node_ids = numbered(noded, 'node') or [0]
    raw, files = {}, {}
    for n in node_ids:
        s, used = read_set(os.path.join(noded, 'node%d' % n, 'cpulist'),
                           os.path.join(noded, 'node%d' % n, 'cpumap'))
        if s is None:
            s = set(online) if len(node_ids) == 1 else set()
        raw[n] = s
        files[n] = os.path.relpath(used, root) if used else None
    overlap = set()
    for a in node_ids:
        for b in node_ids:
            if a < b and raw[a] & raw[b]:
                overlap.update(f for f in (files[a], files[b]) if f)
    nodes = {n: raw[n] & online for n in node_ids}
    # overlapping nodes: also accept "the lowest node keeps a shared CPU"
    alt, seen = {}, set()
    for n in node_ids:
        alt[n] = nodes[n] - seen
        seen |= nodes[n]
    sib = {}
    for c in sorted(online):
        tdir = os.path.join(cpud, 'cpu%d' % c, 'topology')
        s, _ = read_set(os.path.join(tdir, 'thread_siblings_list'),
                        os.path.join(tdir, 'thread_siblings'))
        if s is None or c not in s:
            s = {c}
        sib[c] = frozenset(s & online)

    def cores_of(cpus):
        cores = {}
        for c in sorted(cpus):
            key = sib[c] & cpus
            cores.setdefault(min(key), key)
        return [set(cores[k]) for k in sorted(cores)]

    want = {n: [(nodes[n], cores_of(nodes[n]))] for n in node_ids}
    for n in node_ids:
        if alt[n] != nodes[n]:
            want[n].append((alt[n], cores_of(alt[n])))
    for c, s in sib.items():
        for d in s:
            if sib.get(d, s) != s:
                notes.append('inconsistent thread siblings: cpu%d %s vs cpu%d %s'
                             % (c, fmt(s), d, fmt(sib[d])))
                break
        if notes:
            break
    return want, sorted(overlap), notes


def extract(archive, dest):
    os.makedirs(dest)
    if os.path.isdir(archive):
        return archive
    flag = '-xjf' if archive.endswith('.bz2') else '-xzf'
    subprocess.run(['tar', flag, archive, '-C', dest], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    entries = [e for e in os.listdir(dest) if os.path.isdir(os.path.join(dest, e))]
    # the archive holds one directory, not always named like the archive
    return os.path.join(dest, entries[0]) if len(entries) == 1 and \
        not os.path.isdir(os.path.join(dest, 'sys')) else dest


def check(vgpuctl, archive, workdir):
    name = os.path.relpath(archive, os.path.dirname(os.path.dirname(archive)))
    dest = os.path.join(workdir, name.replace('/', '_'))
    try:
        return check_root(vgpuctl, name, extract(archive, dest))
    finally:
        # each dump's tree goes once checked: the 79 hold ~170k files (500 MB of
        # blocks), and removing them all at the end took longer than the checks
        shutil.rmtree(dest, ignore_errors=True)


def check_root(vgpuctl, name, root):
    errs = []
    try:
        p = subprocess.run([vgpuctl, '--sysroot', root, '--json', 'topology'],
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return name, ['hang: no exit within %d s' % TIMEOUT]
    stderr = p.stderr.decode('utf-8', 'replace')
    if p.returncode != 0:
        errs.append('exit %d: %s' % (p.returncode, stderr.strip()[:300]))
    for line in stderr.splitlines():
        if not line.startswith('vgpuctl: '):
            errs.append('stderr line without "vgpuctl: ": %r' % line[:200])
    nodes, overlap, notes = expected(root)
    if overlap:
        warns = [l for l in stderr.splitlines() if l.startswith('vgpuctl: warning:')]
        if not any(f in l for l in warns for f in overlap):
            errs.append('node cpulists overlap (%s) but no "vgpuctl: warning:" names them'
                        % ', '.join(overlap))
    if p.returncode != 0:
        return name, errs
    try:
        got = json.loads(p.stdout)['topology']
    except (ValueError, KeyError, TypeError) as e:
        return name, errs + ['invalid JSON: %s' % e]
    try:
        gnodes = {r['node']: r for r in got}
        if sorted(gnodes) != sorted(nodes) or len(gnodes) != len(got):
            errs.append('nodes %s, want %s' % ([r['node'] for r in got], sorted(nodes)))
        for n in sorted(nodes):
            r = gnodes.get(n)
            if r is None:
                continue
            gc = parse_cpulist(r['cpus'] or '')
            cpus, ws = next((w for w in nodes[n] if w[0] == gc), nodes[n][0])
            if gc != cpus:
                errs.append('node %d cpus "%s", want "%s"' % (n, r['cpus'], fmt(cpus)))
            if r['cores'] != len(ws):
                errs.append('node %d cores %s, want %d' % (n, r['cores'], len(ws)))
            gs = sorted((parse_cpulist(x) for x in r['siblings']), key=min)
            if gs != ws:
                diff = [fmt(s) for s in gs if s not in ws][:4]
                want = [fmt(s) for s in ws if s not in gs][:4]
                errs.append('node %d siblings differ: got %s.. want %s..' % (n, diff, want))
    except (KeyError, TypeError, ValueError) as e:
        errs.append('unexpected JSON shape: %r' % e)
    if errs and notes:
        errs.append('note: ' + notes[0])
    return name, errs


def main():
    vgpuctl, dumps = os.path.abspath(sys.argv[1]), sys.argv[2]
    filters = sys.argv[3:]
    if not os.path.isdir(dumps):
        print('SKIP: no topology dumps at %s' % dumps)
        return 77
    archives = []
    for sub in sorted(os.listdir(dumps)):
        d = os.path.join(dumps, sub)
        if not os.path.isdir(d):
            continue
        for e in sorted(os.listdir(d)):
            p = os.path.join(d, e)
            if e.endswith(('.tar.bz2', '.tar.gz')) or (os.path.isdir(p) and
                                                        os.path.isdir(os.path.join(p, 'sys'))):
                archives.append(p)
    if filters:
        archives = [a for a in archives if any(f in a for f in filters)]
    workdir = tempfile.mkdtemp(prefix='vgpuctl-topo-')
    failed = 0
    try:
        jobs = int(os.environ.get('VGPU_TEST_JOBS', '0')) or 2 * (os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            for name, errs in ex.map(lambda a: check(vgpuctl, a, workdir), archives):
                if errs:
                    failed += 1
                    print('FAIL %s' % name)
                    for e in errs:
                        print('     %s' % e)
                else:
                    print('PASS %s' % name)
                sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print('topology dumps: %d checked, %d passed, %d failed'
          % (len(archives), len(archives) - failed, failed))
    return 1 if failed or not archives else 0


if __name__ == '__main__':
    sys.exit(main())
