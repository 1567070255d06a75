# SPDX-License-Identifier: GPL-2.0-or-later
"""Damaged-host suite: every file kind vgpuctl reads, on every fixture host,
under every kind of damage.

  damage.py VGPUCTL SRCDIR [-v] [FILTER...]

FILTER keeps cases whose id ("host kind damage") contains it.  With
VGPU_DAMAGE_ONE_HOST=1 each (file kind, damage) pair runs on one host only,
the hosts taken in turn (the sanitizer build: every reader under every
damage, without repeating it on each host).  For each
(host, file kind) one representative path is damaged in a private copy of the
host, the commands below run with --json under a 10 s timeout, and the path is
restored.  Per command run it asserts:
  - no crash: exit 0, 1 or 2 (no signal, no timeout), no sanitizer report;
  - stdout is valid JSON when the exit is 0;
  - every stderr line starts with 'vgpuctl: ';
  - output unchanged (exit code and stdout equal to the undamaged host's), or
    a stderr line names the damaged file (its last three path components);
  - 'escape' damage (a relative link that climbs out of the root): the target
    outside the root is never opened (its atime is watched), and its canary
    value never shows in the output.
Exit 0 if every case passes, 1 otherwise.
"""
import concurrent.futures
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

TIMEOUT = 10
BLOCKED = 2
HOSTS = ['a30-dual-mdev', 'numa-unknown', 't4-legacy', 'vfio-mig-h100', 'vfio-ts-l40s']
# one request per host that plans on the undamaged host
PLAN = {'a30-dual-mdev': 'A30-6C', 'numa-unknown': 'A100D-8C', 't4-legacy': 'T4-4Q',
        'vfio-mig-h100': 'H100-1-10C', 'vfio-ts-l40s': 'L40S-4Q'}
CANARY = '31337'

# Legitimately optional entries: their absence is normal, so a damage that
# reads as "absent" (a dangling link: ENOENT) may be skipped silently.
#   driver        link on an unbound device
#   iommu_group   link without an IOMMU
#   sriov_*       on non-SR-IOV devices
#   mdev_devices  sys/bus/mdev/devices, absent until an mdev exists
#   hugepages_*   hugepages-1048576kB/* on hosts without 1 GiB pages
#   information   proc/driver/nvidia/* when the NVIDIA driver is not loaded
# Every other kind is always provided by the kernel: any damage must change
# nothing or be reported naming the file.
OPTIONAL = {'driver', 'iommu_group', 'sriov_totalvfs', 'sriov_numvfs', 'mdev_devices',
            'hugepages_nr', 'hugepages_free', 'information'}
ABSENT_LIKE = {'dangling'}
# Legitimately empty: a real host can have these empty, so an empty one may
# change the output in silence.
#   pci_devices           a machine or VM without PCI functions
#   node_cpulist          a CPU-less node (memory only, CXL)
#   mdev_devices          no mdev exists yet
#   creatable_vgpu_types  a vendor-VFIO VF of a GPU with no free capacity
LEGIT_EMPTY = {'pci_devices', 'node_cpulist', 'mdev_devices', 'creatable_vgpu_types'}

GARBAGE = b'\xff\xfe\x00garb\xc3\x28age\x01\x1b[31m\x7f\n\xe2\x82\n'
FILE_DAMAGE = ['empty', 'garbage', 'huge32', 'huge64', 'negative', 'loop', 'fifo', 'dir',
               'dangling', 'escape', 'socket', 'unreadable']
LINK_DAMAGE = ['empty', 'garbage', 'huge64', 'loop', 'fifo', 'dir', 'dangling', 'escape',
               'socket']
DIR_DAMAGE = ['empty', 'garbage', 'loop', 'fifo', 'dangling', 'escape', 'socket',
              'unreadable']


def is_nvidia_pf(dev):
    try:
        vendor = open(os.path.join(dev, 'vendor')).read().strip()
        cls = open(os.path.join(dev, 'class')).read().strip()
    except OSError:
        return False
    return vendor == '0x10de' and cls.startswith('0x03') and \
        not os.path.lexists(os.path.join(dev, 'physfn'))


def representatives(root):
    """-> [(kind, relpath, 'file'|'link'|'dir')]: one path per file kind on this host."""
    out = []

    def add(kind, rel, what=None):
        p = os.path.join(root, rel)
        if not os.path.lexists(p):
            return
        if what is None:
            what = 'link' if os.path.islink(p) else 'dir' if os.path.isdir(p) else 'file'
        out.append((kind, rel, what))

    pci = 'sys/bus/pci/devices'
    devs = sorted(os.listdir(os.path.join(root, pci)))
    pfs = [d for d in devs if is_nvidia_pf(os.path.join(root, pci, d))]
    pf = pfs[0]
    pfp = os.path.join(pci, pf)
    add('pci_devices', pci, 'dir')
    for a in ['vendor', 'device', 'class', 'numa_node', 'local_cpulist', 'sriov_totalvfs',
              'sriov_numvfs', 'driver', 'iommu_group', 'virtfn0']:
        add(a, os.path.join(pfp, a))
    vf = None
    if os.path.lexists(os.path.join(root, pfp, 'virtfn0')):
        vf = os.path.basename(os.readlink(os.path.join(root, pfp, 'virtfn0')))
        add('physfn', os.path.join(pci, vf, 'physfn'))
        add('vf_driver', os.path.join(pci, vf, 'driver'))
    parents = [vf] if vf else []
    parents.append(pf)
    for par in parents:
        mst = os.path.join(pci, par, 'mdev_supported_types')
        if os.path.isdir(os.path.join(root, mst)):
            add('mdev_supported_types', mst, 'dir')
            t = sorted(os.listdir(os.path.join(root, mst)))[0]
            add('mdev_type_dir', os.path.join(mst, t), 'dir')
            for a in ['name', 'description', 'available_instances', 'device_api']:
                add(a, os.path.join(mst, t, a))
            break
    # vendor VFIO: the first VF with the nvidia/ directory, and an in-use one
    vfs = sorted(os.path.basename(os.readlink(os.path.join(root, pfp, e)))
                 for e in os.listdir(os.path.join(root, pfp)) if e.startswith('virtfn'))
    inuse = None
    for v in vfs:
        cur = os.path.join(root, pci, v, 'nvidia/current_vgpu_type')
        if os.path.exists(cur) and inuse is None and open(cur).read().strip() not in ('', '0'):
            inuse = v
    for v in [vf] + ([inuse] if inuse and inuse != vf else []):
        if v and os.path.isdir(os.path.join(root, pci, v, 'nvidia')):
            sfx = '' if v == vf else '_inuse'
            add('current_vgpu_type' + sfx, os.path.join(pci, v, 'nvidia/current_vgpu_type'))
            add('creatable_vgpu_types' + sfx,
                os.path.join(pci, v, 'nvidia/creatable_vgpu_types'))
    mdevs = 'sys/bus/mdev/devices'
    if os.path.isdir(os.path.join(root, mdevs)):
        add('mdev_devices', mdevs, 'dir')
        for m in sorted(os.listdir(os.path.join(root, mdevs)))[:1]:
            add('mdev_entry', os.path.join(mdevs, m))
            add('mdev_type', os.path.join(mdevs, m, 'mdev_type'))
    node = 'sys/devices/system/node'
    add('node_online', node + '/online')
    add('node_cpulist', node + '/node0/cpulist')
    add('node_meminfo', node + '/node0/meminfo')
    hp = node + '/node0/hugepages/hugepages-1048576kB'
    add('hugepages_nr', hp + '/nr_hugepages')
    add('hugepages_free', hp + '/free_hugepages')
    cpu = 'sys/devices/system/cpu'
    add('cpu_online', cpu + '/online')
    add('cpu_present', cpu + '/present')
    add('thread_siblings_list', cpu + '/cpu0/topology/thread_siblings_list')
    add('information', 'proc/driver/nvidia/gpus/%s/information' % pf)
    return out


def real_of(root, rel):
    """The path the entry really lives at (parents resolved, not the entry)."""
    return os.path.join(os.path.realpath(os.path.join(root, os.path.dirname(rel))),
                        os.path.basename(rel))


def make_socket(path):
    # sun_path is 108 bytes: bind in a short directory, then move the inode
    short = tempfile.mkdtemp(prefix='vgd')
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(os.path.join(short, 's'))
        os.rename(os.path.join(short, 's'), path)
    finally:
        s.close()
        os.rmdir(short)


def damage(path, what, kind, escape_target):
    """Replace PATH (already moved aside) by damage KIND."""
    if kind == 'empty':
        if what == 'dir':
            os.mkdir(path)
        else:
            open(path, 'wb').close()
    elif kind == 'garbage':
        if what == 'link':
            os.symlink('\x01garb\x1b[31m\u00e9', path)
        else:
            open(path, 'wb').write(GARBAGE)
    elif kind in ('huge32', 'huge64', 'negative'):
        val = {'huge32': '4294967297', 'huge64': '99999999999999999999',
               'negative': '-5'}[kind]
        if what == 'link':
            os.symlink('../' + val, path)
        else:
            open(path, 'w').write(val + '\n')
    elif kind == 'loop':
        os.symlink(os.path.basename(path), path)
    elif kind == 'fifo':
        os.mkfifo(path)
    elif kind == 'dir':
        os.mkdir(path)
    elif kind == 'dangling':
        os.symlink('does-not-exist', path)
    elif kind == 'escape':
        os.symlink(escape_target, path)
    elif kind == 'socket':
        make_socket(path)
    elif kind == 'unreadable':
        if what == 'dir':
            os.mkdir(path)
        else:
            open(path, 'w').write('1\n')
        os.chmod(path, 0)
    else:
        raise ValueError(kind)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o755)
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def commands(host):
    return [('gpus', ['gpus']), ('vfs', ['vfs']), ('types', ['types', '--per-vf']),
            ('topology', ['topology']),
            ('plan', ['plan', '--name', 'vm', '--vgpu', PLAN[host], '--vcpus', '4', '--memory',
                      '4G', '--template', 'templates/domain.xml',
                      '--uuid', '11111111-2222-3333-4444-555555555555',
                      '--mdev-uuid', '66666666-7777-8888-9999-000000000000'])]


def blocked(pid):
    """Sleeping in the kernel (a FIFO open or read): vgpuctl never waits on purpose."""
    try:
        return open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[0] in 'SD'
    except (OSError, IndexError):
        return False


def run_many(vgpuctl, srcdir, root, argvs):
    """Run the commands side by side -> [(rc, stdout, stderr) or (None, why, '')]."""
    procs = []
    for args in argvs:
        fo, fe = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        procs.append((subprocess.Popen([vgpuctl, '--sysroot', root, '--json'] + args,
                                       cwd=srcdir, stdout=fo, stderr=fe), fo, fe))
    out = []
    for p, fo, fe in procs:
        why = None
        try:
            p.wait(timeout=BLOCKED)
        except subprocess.TimeoutExpired:
            if blocked(p.pid):
                why = 'blocked in the kernel for %d s (state S; FIFO?)' % BLOCKED
            else:
                try:
                    p.wait(timeout=TIMEOUT - BLOCKED)
                except subprocess.TimeoutExpired:
                    why = 'no exit within %d s' % TIMEOUT
        if why:
            p.kill()
            p.wait()
            out.append((None, why, ''))
        else:
            res = []
            for f in (fo, fe):
                f.seek(0)
                res.append(f.read().decode('utf-8', 'replace').replace(root, '@ROOT@'))
            out.append((p.returncode, res[0], res[1]))
        fo.close()
        fe.close()
    return out


def run(vgpuctl, srcdir, root, args):
    return run_many(vgpuctl, srcdir, root, [args])[0]


class Worker:
    def __init__(self, srcdir, base, idx):
        self.dir = os.path.join(base, 'w%d' % idx)
        self.roots = {}
        for h in HOSTS:
            # each host sits at a different depth so that escape links differ
            r = os.path.join(self.dir, h, 'root')
            shutil.copytree(os.path.join(srcdir, 'tests/data/hosts', h), r, symlinks=True)
            self.roots[h] = r
        self.aside = os.path.join(self.dir, 'aside')
        os.mkdir(self.aside)


def escape_setup(root, real):
    """A canary outside ROOT and a relative link text that climbs to it from REAL."""
    case = os.path.dirname(root)
    target = os.path.join(case, 'proc/meminfo')
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not os.path.exists(target):
        open(target, 'w').write('MemTotal:       %s00000 kB\n%s\n' % (CANARY, CANARY))
    os.utime(target, (1, 1))
    depth = os.path.relpath(os.path.dirname(real), case).count('/') + 1
    return target, '../' * depth + 'proc/meminfo'


def atime_works(base):
    p = os.path.join(base, 'atime-probe')
    open(p, 'w').write('x')
    os.utime(p, (1, 1))
    open(p).read()
    ok = os.stat(p).st_atime > 1
    os.unlink(p)
    return ok


def check_case(ctx, worker, host, kind, rel, what, dmg):
    vgpuctl, srcdir, baseline, atime_ok = ctx
    root = worker.roots[host]
    real = real_of(root, rel)
    aside = os.path.join(worker.aside, 'saved')
    os.rename(real, aside)
    target, link = escape_setup(root, real)
    problems = []
    try:
        damage(real, what, dmg, link)
        suffix = '/'.join(rel.split('/')[-3:])
        rsuffix = '/'.join(os.path.relpath(real, root).split('/')[-3:])
        strict = (kind not in OPTIONAL or dmg not in ABSENT_LIKE) and \
            not (kind in LEGIT_EMPTY and dmg == 'empty')
        cmds = commands(host)
        for (name, args), res in zip(cmds, run_many(vgpuctl, srcdir, root,
                                                    [a for n, a in cmds])):
            rc, out, err = res
            if rc is None:
                problems.append('%s: hang (%s)' % (name, out))
                continue
            if rc < 0:
                problems.append('%s: killed by signal %d' % (name, -rc))
            elif rc not in (0, 1, 2):
                problems.append('%s: exit %d' % (name, rc))
            if 'Sanitizer' in err or 'runtime error:' in err:
                problems.append('%s: sanitizer report: %s' % (name, err.strip()[:200]))
            bad = [l for l in err.splitlines() if not l.startswith('vgpuctl: ')]
            if bad:
                problems.append('%s: stderr line without "vgpuctl: ": %r' % (name, bad[0][:120]))
            if rc == 0:
                try:
                    json.loads(out)
                except ValueError as e:
                    problems.append('%s: exit 0 but stdout is not JSON (%s)' % (name, e))
            named = suffix in err or rsuffix in err
            if strict and (rc, out) != baseline[host][name][:2] and not named:
                first = err.strip().splitlines()[:1]
                problems.append('%s: output changed (exit %d, was %d) and no message names %s%s'
                                % (name, rc, baseline[host][name][0], suffix,
                                   ' (stderr: %s)' % first[0][:160] if first else ''))
            if dmg == 'escape' and (CANARY in out or CANARY in err):
                problems.append('%s: value from outside the sysroot in the output' % name)
        if dmg == 'escape' and atime_ok and os.stat(target).st_atime > 1:
            problems.append('read %s outside the sysroot through the link' % 'proc/meminfo')
    finally:
        remove(real)
        os.rename(aside, real)
    return problems


def main():
    args = sys.argv[1:]
    verbose = '-v' in args
    args = [a for a in args if a != '-v']
    vgpuctl, srcdir = os.path.abspath(args[0]), os.path.abspath(args[1])
    filters = args[2:]
    base = tempfile.mkdtemp(prefix='vgpuctl-damage-')
    jobs = int(os.environ.get('VGPU_TEST_JOBS', '0')) or max(2, 2 * (os.cpu_count() or 1))
    try:
        pristine = Worker(srcdir, base, 99)
        baseline = {h: {n: run(vgpuctl, srcdir, pristine.roots[h], a) for n, a in commands(h)}
                    for h in HOSTS}
        for h in HOSTS:
            for n, r in baseline[h].items():
                if r[0] != 0:
                    print('FAIL: undamaged %s: %s does not succeed: %s' % (h, n, r))
                    return 1
        cases = []
        for h in HOSTS:
            for kind, rel, what in representatives(pristine.roots[h]):
                dmgs = {'file': FILE_DAMAGE, 'link': LINK_DAMAGE, 'dir': DIR_DAMAGE}[what]
                for d in dmgs:
                    if d == 'unreadable' and os.geteuid() == 0:
                        continue  # root reads mode-0 files; 'socket' covers non-regular
                    cid = '%s %s %s' % (h, kind, d)
                    if filters and not any(f in cid for f in filters):
                        continue
                    cases.append((h, kind, rel, what, d))
        if os.environ.get('VGPU_DAMAGE_ONE_HOST') == '1':
            seen, kept = {}, []
            for c in cases:
                seen.setdefault((c[1], c[4]), []).append(c)
            for i, group in enumerate(seen.values()):
                kept.append(group[i % len(group)])
            kept_set = set(kept)
            cases = [c for c in cases if c in kept_set]
        atime_ok = atime_works(base)
        if not atime_ok:
            print('note: no atime updates under %s; escape reads detected by value only' % base)
        workers = [Worker(srcdir, base, i) for i in range(jobs)]
        ctx = (vgpuctl, srcdir, baseline, atime_ok)
        chunks = [cases[i::jobs] for i in range(jobs)]

        def work(i):
            return [(c, check_case(ctx, workers[i], c[0], c[1], c[2], c[3], c[4]))
                    for c in chunks[i]]

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            results = [r for part in ex.map(work, range(jobs)) for r in part]
    finally:
        for dp, dn, fn in os.walk(base):
            for d in dn:
                p = os.path.join(dp, d)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
        shutil.rmtree(base, ignore_errors=True)
    order = {c: i for i, c in enumerate(cases)}
    results.sort(key=lambda r: order[r[0]])
    failed = 0
    for (h, kind, rel, what, d), problems in results:
        if problems:
            failed += 1
            print('FAIL %s %s %s (%s): %s' % (h, kind, d, rel, '; '.join(problems)))
        elif verbose:
            print('PASS %s %s %s (%s)' % (h, kind, d, rel))
    print('damage: %d cases (%d host/file pairs), %d passed, %d failed'
          % (len(cases), len({(c[0], c[1]) for c in cases}), len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
