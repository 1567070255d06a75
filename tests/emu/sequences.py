#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Random create/free sequences against the driver emulator (tests/emu/README.md).

    sequences.py VGPUCTL SRCDIR [--seed N|random] [--steps N] [--budget SECONDS]
                                       (VGPU_EMU names the emulator binary)

For each fixture host in HOSTS, on a fresh emulator mount: run N seeded random steps, each
creating a vGPU of a random type on a random parent or freeing a random vGPU (and now and
then a write the driver must refuse), through the mount only, taking the driver's refusals
as part of the sequence. After every step (and once before the first):

- for every GPU and every type `vgpuctl --json types` lists, `available` (read BEFORE the
  probe) must equal what the emulator accepts: the number of successive creates of that
  type that succeed, trying every free parent of the GPU before counting a refusal. The
  probe frees exactly what it created; the driver files (read in the backing) must be back
  as they were.
- a type that vgpuctl does not list for a GPU now, but that the host's sysfs named at mount
  or vgpuctl listed before, must be one the emulator takes none of.
- per VF (`types --per-vf`, a random sample of the rows): a row with `available` > 0 must
  be a VF where one create of that type succeeds.

Every mismatch is recorded and printed (capped) with the state and the writes that led
there, grouped in classes, with a summary line per host. Exit 0 when there is none, 1
otherwise (or when the emulator or a probe misbehaved), 77 when the emulator is not built.
The hosts run side by side, one thread and one emulator each.

A sequence ends after N steps or when its host's share of the time budget is spent,
whichever comes first: a step takes 0.3 s on an idle machine and several seconds on a
loaded one, so a count alone made the run take 1 minute or 6. Each host gets
BUDGET x JOBS / HOSTS seconds from its own start (a host queued behind others still gets
its share), and its summary line says where it stopped. The seed is fixed (DEFAULT_SEED)
unless one is given: the suite gives the same sequences every run, and a run that stops
early has checked a prefix of them. Explore with --seed random --steps 1000 --budget 0.

Options (each also from the environment):
  --seed N|random     VGPU_SEQ_SEED: the seed (default DEFAULT_SEED; printed, so a failure
                      can be rerun)
  --steps N           VGPU_SEQ_STEPS: steps per host, at most (default 60)
  --budget SECONDS    VGPU_SEQ_BUDGET: wall-clock time for the whole run (default 90; 0:
                      no limit, only the steps)

Environment:
  VGPU_SEQ_HOSTS      the hosts, space-separated (default HOSTS; also FIXTURE+catalog)
  VGPU_SEQ_PER_VF     per-VF rows checked after each step (default 8; 0: none)
  VGPU_SEQ_JOBS       hosts run at once (default: the CPUs, at most the hosts)
  VGPU_SEQ_MAX_SHOWN  mismatches printed one by one (default 40)
  VGPU_SEQ_KEEP=1     keep the temporary directories (backing, journal, emu.err)
  VGPU_NVML           the NVML stand-in (tests/nvml), for the "+nvml" hosts: vgpuctl runs
                      with --nvml and FAKE_NV_ROOT at the mount; unset, they are skipped
  VGPU_NVML_PROBE     tests/nvml's nvml-probe: mixed-size mode changes on the "+nvml" hosts

Steps: a create (mostly of a type vgpuctl says fits), a free, a write the driver must refuse,
a create the driver fails with EIO (an RM refusal, vgpu-host.md 1.3; the emulator's `fail`
rule: nothing changes), and on "+nvml" hosts a mixed-size mode change through NVML (refused
while the GPU holds a vGPU, or with MIG on, as the driver refuses it; vgpu-host.md 5.1).
"""

import argparse
import concurrent.futures
import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

# vfio-ts-l40s runs twice: with the catalogues vgpuctl stores before the first vGPU (as on
# any host it has worked on: answers must be exact and equal), and bare (both GPUs soon hold
# vGPUs and nothing says the framebuffer: answers flagged "exact": false must be lower
# bounds, never more than the driver takes)
# Every bundled host but `malformed` (broken on purpose: the emulator's model of it differs
# from its files, README.md --check). "FIXTURE+nvml": vgpuctl reads NVML (the stand-in, on the
# same tree) as on a host with the driver's library; on the L40S and the H100 NVL the steps
# also switch mixed-size mode. Two sets, so that each runs in about a minute on a loaded 2-core machine:
# HOSTS (the default) and HOSTS_NVML (meson's emu-sequences-nvml passes it in
# VGPU_SEQ_HOSTS). The MIG hosts with NVML ("vfio-mig-h100+nvml", "vfio-mig-rtxpro6000+nvml")
# run by name only: each costs as much as a host of the default set.
HOSTS = ["a30-dual-mdev", "vfio-mig-h100", "vfio-ts-l40s+catalog", "vfio-ts-l40s",
         "t4-legacy", "vfio-mig-rtxpro6000"]
HOSTS_NVML = ["numa-unknown", "vfio-ts-l40s+nvml", "vfio-ts-h100l+nvml"]

# vfio-ts-h100l: what the H100 NVL's driver takes of each time-sliced type in mixed-size mode
# (vgpu-host.md 5.2; the stand-in's types_h100l, whose placements NVML counts for that mode)
H100L_MIXED_MAX = {1300: 1, 1301: 2, 1302: 4, 1303: 4, 1304: 8, 1305: 8, 1306: 16}

# vfio-mig-h100: every type of the board the emulator knows (the fixture's lists name 1056
# and 1058; VF ca:00.4 holds 1059, which no list and no file of the fixture names).
H100_TYPES = [(1056, "NVIDIA H100-1-10C"), (1058, "NVIDIA H100-2-20C"),
              (1059, "NVIDIA H100-3-40C")]


def prepare_h100(backing):
    # A real host knows the held type's name: vgpuctl stores each GPU's catalogue ("ID NAME"
    # lines, src/lib/catalog.c) while every VF lists every type, i.e. before the first vGPU
    # is created, or NVML names it. The fixture is a snapshot taken after that, with 1059
    # already held: no list names it any more (a holder's list is empty, the free VFs list
    # what still fits), so from the lists alone vgpuctl cannot tell the held GI's profile,
    # hence not the free GIs' (3g held + 2g + 1g + 1g is the only layout once the 3g is
    # known) and answers a lower bound ("at least" 1 H100-1-10C where 2 fit), while the
    # emulator, told with --type, knows. Store what vgpuctl would have stored on that host.
    d = os.path.join(backing, "var/lib/vgpuctl/catalog")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "0000:ca:00.0"), "w") as f:
        for tid, name in H100_TYPES:
            f.write("%d %s\n" % (tid, name))


def prepare_catalogs(backing):
    # the "+catalog" variants: every vendor-VFIO GPU's catalogue stored as vgpuctl stores it
    # after an assign on a host whose lists were whole: the types the fixture's VFs list,
    # merged per PCI vendor:device (one driver type table per board)
    pci = os.path.join(backing, "sys/bus/pci/devices")
    per_gpu, per_dev = {}, {}
    for bdf in sorted(os.listdir(pci)):
        d = os.path.join(pci, bdf)
        lst = os.path.join(d, "nvidia/creatable_vgpu_types")
        if not os.path.islink(os.path.join(d, "physfn")) or not os.path.exists(lst):
            continue
        gpu = os.path.basename(os.readlink(os.path.join(d, "physfn")))
        dev = readf(os.path.join(pci, gpu, "vendor")) + readf(os.path.join(pci, gpu, "device"))
        per_gpu[gpu] = dev
        names = per_dev.setdefault(dev, {})
        for line in readf(lst).splitlines():
            tid, _, name = line.partition(":")
            if tid.strip().isdigit() and name.strip():
                names[int(tid)] = name.strip()
    d = os.path.join(backing, "var/lib/vgpuctl/catalog")
    os.makedirs(d, exist_ok=True)
    for gpu, dev in per_gpu.items():
        with open(os.path.join(d, gpu), "w") as f:
            for tid, name in sorted(per_dev[dev].items()):
                f.write("%d %s\n" % (tid, name))


def prepare_mixed(backing):
    # the "+nvml" H100 NVL starts in mixed-size mode (set through NVML before the first vGPU,
    # as `apply` does; the stand-in's hetero-<PF>): with one GPU, a mode change succeeds only
    # while it is empty, so a sequence starting in equal-size mode would seldom leave it
    d = os.path.join(backing, "var/lib/fake-nvidia")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "hetero-0000:4b:00.0"), "w") as f:
        f.write("1\n")


# the emulator's options and what the backing gets before the mount; a host name
# "FIXTURE+catalog" (not run by default) is FIXTURE with stored catalogues
HOST_SETUP = {
    "vfio-mig-h100": (["--type", "1059=NVIDIA H100-3-40C"], prepare_h100),
    # GPU 41 holds a vGPU at mount, so its lists name only the 4 GB types; once free, the
    # driver lists every type of the board again (vgpu-host.md 1.3), as GPU c1 does
    "vfio-ts-l40s": (["--board-types"], None),
    "vfio-ts-l40s+catalog": (["--board-types"], prepare_catalogs),
    "vfio-ts-l40s+nvml": (["--board-types"], None),
    "vfio-mig-h100+nvml": (["--type", "1059=NVIDIA H100-3-40C"], None),
    "vfio-ts-h100l+nvml": ([a for t, n in sorted(H100L_MIXED_MAX.items())
                            for a in ("--mixed-max", "%d=%d" % (t, n))], prepare_mixed),
}

SAFETY_CAP = 256  # successive creates of one probe, at most
DEFAULT_SEED = 1  # the suite's sequences (0 mismatches, every host, 60 steps)
DEFAULT_STEPS = 60
DEFAULT_BUDGET = 90.0  # seconds for the whole run; 0: the steps alone bound it


def errname(e):
    return errno.errorcode.get(e, str(e))


class Emu:
    """One emulator mount of a copy of a fixture (what lib.sh's emu_start does)."""

    def __init__(self, binary, fixture, opts, prepare, keep):
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix="vgpu-seq.", dir=os.environ.get("TMPDIR"))
        self.backing = os.path.join(self.dir, "backing")
        self.root = os.path.join(self.dir, "mnt")
        self.ctl = os.path.join(self.dir, "control")
        self.log = os.path.join(self.dir, "journal")
        shutil.copytree(fixture, self.backing, symlinks=True)
        if prepare:
            prepare(self.backing)
        os.mkdir(self.root)
        open(self.ctl, "w").close()
        open(self.log, "w").close()
        self.err = open(os.path.join(self.dir, "emu.err"), "w")
        self.proc = subprocess.Popen(
            [binary, "--control", self.ctl, "--log", self.log] + opts +
            [self.backing, self.root], stdout=self.err, stderr=self.err)
        for _ in range(200):
            if os.path.ismount(self.root):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("vgpu-emu did not mount %s: %s" % (self.root, self.stderr()))

    def stderr(self):
        self.err.flush()
        with open(os.path.join(self.dir, "emu.err")) as f:
            return f.read()

    def stop(self):
        """Stop and unmount; True if the emulator exited 0."""
        ok = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                ok = False
        ok &= self.proc.returncode == 0
        if os.path.ismount(self.root):
            subprocess.call(["fusermount3", "-u", "-z", self.root], stderr=subprocess.DEVNULL)
        return ok

    def cleanup(self):
        self.err.close()
        if self.keep:
            print("kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def sysw(path, value, dir_fd=None):
    """One write(2) without O_CREAT or O_TRUNC, as vgpuctl writes sysfs: 0 or errno name.
    PATH is relative to DIR_FD where given (fewer lookups through the mount)."""
    try:
        fd = os.open(path, os.O_WRONLY, dir_fd=dir_fd)
    except OSError as e:
        return errname(e.errno)
    try:
        os.write(fd, value.encode())
        return "0"
    except OSError as e:
        return errname(e.errno)
    finally:
        os.close(fd)


def set_rules(ctl, rules):
    """Replace the emulator's control file (renamed in place: never read half written)."""
    tmp = ctl + ".new"
    with open(tmp, "w") as f:
        f.write("".join(r + "\n" for r in rules))
    os.rename(tmp, ctl)


def readf(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return "<%s>" % errname(e.errno)


def short(bdf):
    return bdf[5:] if bdf.startswith("0000:") else bdf


def is_uuid(name):
    try:
        return len(name) == 36 and str(uuid.UUID(name)) == name
    except ValueError:
        return False


class Host:
    """The parents of a mounted host, found in sysfs (independently of vgpuctl), and what
    they hold: read from the mount by refresh(), kept up to date by create() and destroy()."""

    def __init__(self, root, backing):
        self.root = root
        self.backing = backing
        self.pci = os.path.join(root, "sys/bus/pci/devices")
        self.parents = {}  # bdf -> dict(gpu, kind 'vfio'|'mdev', pf: bool)
        for bdf in sorted(os.listdir(self.pci)):
            d = os.path.join(self.pci, bdf)
            physfn = os.path.join(d, "physfn")
            gpu = os.path.basename(os.readlink(physfn)) if os.path.islink(physfn) else bdf
            if os.path.exists(os.path.join(d, "nvidia/current_vgpu_type")):
                self.parents[bdf] = {"gpu": gpu, "kind": "vfio", "pf": False}
            elif os.path.isdir(os.path.join(d, "mdev_supported_types")):
                self.parents[bdf] = {"gpu": gpu, "kind": "mdev", "pf": gpu == bdf}
        self.gpus = sorted({p["gpu"] for p in self.parents.values()})
        # a descriptor of each parent's directory: creates and frees open their file
        # relative to it, one or three lookups through the mount instead of eight
        self.fds = {bdf: os.open(self.pdir(bdf), os.O_RDONLY | os.O_DIRECTORY)
                    for bdf in self.parents}
        self.state = {}
        self.refresh()

    def close(self):
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def pdir(self, bdf, root=None):
        return os.path.join(root or self.root, "sys/bus/pci/devices", bdf)

    def of_gpu(self, gpu):
        return [b for b in sorted(self.parents) if self.parents[b]["gpu"] == gpu]

    def mdevs(self, bdf, root=None):
        d = self.pdir(bdf, root)
        return sorted(n for n in os.listdir(d) if is_uuid(n) and os.path.isdir(os.path.join(d, n)))

    def read_held(self, bdf):
        """What the parent holds, read from the mount: [(handle, type id)], the handle
        being the VF's BDF (vendor VFIO) or the mdev's UUID."""
        p = self.parents[bdf]
        if p["kind"] == "vfio":
            t = readf(os.path.join(self.pdir(bdf), "nvidia/current_vgpu_type")).strip()
            return [(bdf, int(t))] if t not in ("", "0") and t.isdigit() else []
        out = []
        for u in self.mdevs(bdf):
            link = os.readlink(os.path.join(self.pdir(bdf), u, "mdev_type"))
            out.append((u, int(os.path.basename(link).split("-")[-1])))
        return out

    def sysfs_types(self):
        """Per GPU, the types its parents name: mdev type directories, vendor-VFIO lists."""
        out = {}
        for bdf, p in self.parents.items():
            names = out.setdefault(p["gpu"], {})
            if p["kind"] == "vfio":
                for line in readf(os.path.join(self.pdir(bdf),
                                               "nvidia/creatable_vgpu_types")).splitlines():
                    tid, _, name = line.partition(":")
                    if tid.strip().isdigit() and name.strip():
                        names[int(tid)] = name.strip().split()[-1]
                continue
            td = os.path.join(self.pdir(bdf), "mdev_supported_types")
            for t in os.listdir(td):
                if t.startswith("nvidia-") and t[7:].isdigit():
                    names[int(t[7:])] = readf(os.path.join(td, t, "name")).strip().split()[-1]
        return out

    def refresh(self):
        self.state = {bdf: self.read_held(bdf) for bdf in self.parents}

    def held(self, bdf):
        return self.state[bdf]

    def free(self, bdf):
        """Can the parent take one more (at all, whatever the type)?"""
        return self.parents[bdf]["pf"] or not self.state[bdf]

    def all_vgpus(self):
        return [(bdf, h, t) for bdf in sorted(self.parents) for h, t in self.state[bdf]]

    def create(self, bdf, tid, rng):
        """Create one vGPU of type tid on parent bdf: (result, handle)."""
        p = self.parents[bdf]
        if p["kind"] == "vfio":
            res = sysw("nvidia/current_vgpu_type", "%d\n" % tid, self.fds[bdf])
            h = bdf
        else:
            h = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            res = sysw("mdev_supported_types/nvidia-%d/create" % tid, h + "\n", self.fds[bdf])
        if res == "0":
            self.state[bdf] = self.state[bdf] + [(h, tid)]
        return res, h

    def destroy(self, bdf, handle):
        if self.parents[bdf]["kind"] == "vfio":
            res = sysw("nvidia/current_vgpu_type", "0\n", self.fds[bdf])
        else:
            res = sysw(handle + "/remove", "1\n", self.fds[bdf])
        if res == "0":
            self.state[bdf] = [x for x in self.state[bdf] if x[0] != handle]
        return res

    def snapshot(self):
        """Every driver file the model writes and every directory and link it makes, read
        in the backing (the emulator keeps it equal to the mount; reading it is faster)."""
        snap = {}
        root = self.backing
        for bdf, p in sorted(self.parents.items()):
            d = self.pdir(bdf, root)
            if p["kind"] == "vfio":
                for f in ("current_vgpu_type", "creatable_vgpu_types", "gpu_instance_id",
                          "placement_id"):
                    path = os.path.join(d, "nvidia", f)
                    snap[bdf + "/" + f] = readf(path) if os.path.exists(path) else None
            else:
                td = os.path.join(d, "mdev_supported_types")
                for t in sorted(os.listdir(td)):
                    snap[bdf + "/" + t] = readf(os.path.join(td, t, "available_instances"))
                    dv = os.path.join(td, t, "devices")
                    snap[bdf + "/" + t + "/devices"] = (sorted(os.listdir(dv))
                                                       if os.path.isdir(dv) else None)
                for u in self.mdevs(bdf, root):
                    snap[bdf + "/" + u] = (os.readlink(os.path.join(d, u, "mdev_type")),
                                           readf(os.path.join(d, u, "nvidia/gpu_instance_id")))
        for extra in ("sys/bus/mdev/devices", "sys/kernel/iommu_groups"):
            path = os.path.join(root, extra)
            snap[extra] = sorted(os.listdir(path)) if os.path.isdir(path) else None
        return snap

    def summary(self):
        """The vGPUs, per GPU: 'ca:00.0[ca:00.4=1059@gi1 ...]'."""
        parts = []
        for gpu in self.gpus:
            items = []
            for bdf in self.of_gpu(gpu):
                for h, t in self.held(bdf):
                    gi = readf(os.path.join(self.pdir(bdf), "nvidia/gpu_instance_id")
                               if h == bdf else
                               os.path.join(self.pdir(bdf), h, "nvidia/gpu_instance_id")).strip()
                    items.append("%s=%d%s" % (short(bdf), t,
                                              "@gi" + gi if gi.isdigit() else ""))
            parts.append("%s[%s]" % (short(gpu), " ".join(items)))
        return " ".join(parts)


class Run:
    def __init__(self, vgpuctl, emu_bin, src, seed, steps, host_budget, per_vf, max_shown,
                 keep):
        self.vgpuctl, self.emu_bin, self.src = vgpuctl, emu_bin, src
        self.seed, self.steps, self.per_vf = seed, steps, per_vf
        self.host_budget = host_budget  # seconds per host from its start; 0: no limit
        self.max_shown, self.keep = max_shown, keep
        self.nvml = os.environ.get("VGPU_NVML") or None
        self.nvml_probe = os.environ.get("VGPU_NVML_PROBE") or None
        self.nvml_roots = set()  # the mounts of the "+nvml" hosts
        self.mismatches = []
        self.problems = []  # the emulator or the probe misbehaving (not a capacity answer)
        self.stats = []

    def vg(self, root, *args):
        pre, env = [], dict(os.environ, LC_ALL="C")
        if root in self.nvml_roots:
            pre, env["FAKE_NV_ROOT"] = ["--nvml", self.nvml], root
        r = subprocess.run([self.vgpuctl, "--sysroot", root] + pre + ["--json"] + list(args),
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError("vgpuctl %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                            r.stderr.strip()))
        return json.loads(r.stdout)

    def why(self, root, profile, gpu):
        try:
            for row in self.vg(root, "why", "--gpu", gpu, profile).get("why", []):
                if row.get("gpu") == gpu:
                    return row.get("detail")
        except (RuntimeError, ValueError) as e:
            return "why failed: %s" % e
        return None

    def probe(self, host, gpu, tid, rng):
        """How many successive creates of tid the GPU accepts; frees them again."""
        created = []
        refusals = set()
        while len(created) < SAFETY_CAP:
            done = False
            for bdf in host.of_gpu(gpu):
                if not host.free(bdf):
                    continue
                res, h = host.create(bdf, tid, rng)
                if res == "0":
                    created.append((bdf, h))
                    done = True
                    break
                refusals.add(res)
            if not done:
                break
        for bdf, h in reversed(created):
            res = host.destroy(bdf, h)
            if res != "0":
                self.problems.append("free of a probe's vGPU %s on %s: %s" % (h, bdf, res))
        return len(created), refusals

    def host_run(self, name):
        t0 = time.time()
        if "+nvml" in name and not self.nvml:
            print("%s: skipped (VGPU_NVML unset: the NVML stand-in was not built)" % name)
            return 0.0
        opts, prepare = HOST_SETUP.get(name, ([], None))
        fixture = os.path.join(self.src, "tests/data/hosts", name.split("+")[0])
        emu = Emu(self.emu_bin, fixture, opts, prepare, self.keep)
        rng = random.Random("%d/%s" % (self.seed, name))
        st = {"host": name, "steps": 0, "creates": 0, "frees": 0, "refused": 0,
              "comparisons": 0, "inexact": 0, "per_vf": 0, "mismatches": 0, "max_vgpus": 0,
              "stopped": "", "over": 0, "under": 0, "eio": 0, "modes": 0}
        trace = []  # the writes of the sequence, for a reproduction
        host = None
        try:
            host = Host(emu.root, emu.backing)
            host.name = name
            host.ctl = emu.ctl
            if "+nvml" in name:
                self.nvml_roots.add(emu.root)
            # gpu -> {type id: name}: the types the host's sysfs names at mount, and every
            # type vgpuctl listed since
            known = host.sysfs_types()
            for step in range(self.steps + 1):
                if step and self.host_budget and time.time() - t0 >= self.host_budget:
                    st["stopped"] = " (the time budget stopped it after %d of %d steps)" % (
                        step - 1, self.steps)
                    break
                if step:
                    self.random_step(host, rng, known, step, trace, st)
                    st["steps"] += 1
                rows = self.check(name, host, rng, step, trace, st, known)
                for x in rows:
                    known.setdefault(x["gpu"], {})[x["type_id"]] = x["profile"]
                # what vgpuctl says is available now, for the next create
                host.avail = {(x["gpu"], x["type_id"]) for x in rows
                              if x["available"] and x["available"] > 0}
                st["max_vgpus"] = max(st["max_vgpus"], len(host.all_vgpus()))
        except Exception:  # pylint: disable=broad-except
            self.problems.append("%s: the run stopped at step %d: %s" %
                                 (name, st["steps"], traceback.format_exc()))
        finally:
            if host:
                host.close()
            if not emu.stop():
                self.problems.append("%s: vgpu-emu did not exit cleanly: %s" %
                                     (name, emu.stderr()[-2000:]))
            emu.cleanup()
        self.stats.append(st)
        return time.time() - t0

    def fail_create(self, host, rng, known, st):
        """A create the driver fails with EIO (RM refused it): one `fail` rule, gone after."""
        gpu = rng.choice(host.gpus)
        mine = known.get(gpu) or {t: p for g in known.values() for t, p in g.items()}
        good = sorted(t for t in mine if (gpu, t) in host.avail)
        tid = rng.choice(good or sorted(mine))
        free = [b for b in host.of_gpu(gpu) if host.free(b)]
        bdf = rng.choice(free or host.of_gpu(gpu))
        f = ("nvidia/current_vgpu_type" if host.parents[bdf]["kind"] == "vfio" else
             "mdev_supported_types/nvidia-%d/create" % tid)
        rule = "fail write sys/bus/pci/devices/%s/%s EIO count=1" % (bdf, f)
        set_rules(host.ctl, [rule])
        try:
            res, h = host.create(bdf, tid, rng)
        finally:
            set_rules(host.ctl, [])
        st["eio"] += res == "EIO"
        if res == "0":
            st["creates"] += 1
        return "create %d (%s) on %s with EIO injected" % (tid, mine[tid], short(bdf)), res

    def mode_change(self, host, rng):
        """Mixed-size mode on or off through NVML, mostly on a GPU without vGPUs."""
        empty = [g for g in host.gpus
                 if not any(host.held(b) for b in host.of_gpu(g))]
        gpu = rng.choice(empty if empty and rng.random() < 0.8 else host.gpus)
        mode = rng.choice((0, 1))
        r = subprocess.run([self.nvml_probe, self.nvml, gpu, "hetero-set", str(mode)],
                           capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C", FAKE_NV_ROOT=host.root))
        out = r.stdout.strip().splitlines()
        res = "0" if r.returncode == 0 else (out[-1] if out else "exit %d" % r.returncode)
        return "mixed-size mode %d on %s" % (mode, short(gpu)), res

    def random_step(self, host, rng, known, step, trace, st):
        vgpus = host.all_vgpus()
        r = rng.random()
        if 0.89 < r <= 0.95 and "+nvml" in host.name and self.nvml_probe:
            what, res = self.mode_change(host, rng)
            st["modes"] += res == "0"
        elif 0.85 < r <= 0.95:
            what, res = self.fail_create(host, rng, known, st)
        elif vgpus and r < 0.45:
            bdf, h, t = rng.choice(vgpus)
            res = host.destroy(bdf, h)
            what = "free %d on %s%s" % (t, short(bdf), "" if h == bdf else " (" + h + ")")
            st["frees"] += res == "0"
        elif r > 0.95:
            # a write the driver must refuse: VFIO a type on a held VF or 0 on a free one,
            # mdev a UUID that exists
            bdf = rng.choice(sorted(host.parents))
            held = host.held(bdf)
            if host.parents[bdf]["kind"] == "vfio":
                val = "0\n" if not held else "%d\n" % held[0][1]
                path = os.path.join(host.pdir(bdf), "nvidia/current_vgpu_type")
            else:
                mdevs = [h for _, h, _ in vgpus if is_uuid(h)]
                if not mdevs:
                    return self.random_step(host, rng, known, step, trace, st)
                ty = sorted(os.listdir(os.path.join(host.pdir(bdf), "mdev_supported_types")))
                val = rng.choice(mdevs) + "\n"
                path = os.path.join(host.pdir(bdf), "mdev_supported_types", rng.choice(ty),
                                    "create")
            res = sysw(path, val)
            what = "write %s to %s (a refusal expected)" % (val.strip(),
                                                            os.path.relpath(path, host.root))
            if res == "0":
                self.problems.append("%s step %d: %s was accepted" % (host.name, step, what))
        else:
            # a random GPU, and mostly a type vgpuctl says fits there, else any type
            # vgpuctl has listed for it (or for any GPU)
            gpu = rng.choice(host.gpus)
            mine = known.get(gpu) or {t: p for g in known.values() for t, p in g.items()}
            good = sorted(t for t in mine if (gpu, t) in host.avail)
            tid = rng.choice(good if good and rng.random() < 0.7 else sorted(mine))
            free = [b for b in host.of_gpu(gpu) if host.free(b)]
            bdf = rng.choice(free or host.of_gpu(gpu))
            res, h = host.create(bdf, tid, rng)
            what = "create %d (%s) on %s%s" % (tid, mine[tid], short(bdf),
                                               "" if h == bdf else " as " + h)
            st["creates"] += res == "0"
        st["refused"] += res != "0"
        trace.append("step %d: %s -> %s" % (step, what, res))

    def check(self, name, host, rng, step, trace, st, known):
        host.refresh()
        rows = self.vg(host.root, "types")["types"]
        vf_rows = self.vg(host.root, "types", "--per-vf")["types"] if self.per_vf else []
        before = host.snapshot()
        summary = host.summary()
        for row in rows:
            n, refusals = self.probe(host, row["gpu"], row["type_id"], rng)
            st["comparisons"] += 1
            if row.get("exact") is False:
                # vgpuctl says it inferred: what it promises must fit, and it must
                # promise something wherever the driver takes one
                st["inexact"] += 1
                ok = row["available"] <= n and (n == 0 or row["available"] > 0)
            else:
                ok = n == row["available"]
            if not ok:
                st["mismatches"] += 1
                st["over" if row["available"] > n else "under"] += 1
                self.mismatches.append({
                    "host": name, "step": step, "gpu": row["gpu"], "type": row["type_id"],
                    "profile": row["profile"], "available": row["available"],
                    "reason": row["reason"], "max_instances": row["max_instances"],
                    "per_gi": row["per_gpu_instance"], "emu": n,
                    "refusals": sorted(refusals), "state": summary,
                    "detail": self.why(host.root, row["profile"], row["gpu"]),
                    "trace": [t for t in trace if t.endswith("-> 0")],
                    "kind": "gpu"})
        # a type vgpuctl listed before (on any GPU of the host) but not now: the emulator
        # must take none of it
        listed = {(x["gpu"], x["type_id"]) for x in rows}
        every = {t: p for g in known.values() for t, p in g.items()}
        for gpu in host.gpus:
            for tid in sorted(t for t in every if (gpu, t) not in listed):
                n, refusals = self.probe(host, gpu, tid, rng)
                st["comparisons"] += 1
                if n:
                    st["mismatches"] += 1
                    st["under"] += 1
                    self.mismatches.append({
                        "host": name, "step": step, "gpu": gpu, "type": tid,
                        "profile": every[tid], "available": "(not listed)", "reason": None,
                        "max_instances": None, "per_gi": None, "emu": n,
                        "refusals": sorted(refusals), "state": summary, "detail": None,
                        "trace": [t for t in trace if t.endswith("-> 0")],
                        "kind": "unlisted"})
        claims = [r for r in vf_rows if r["available"] and r["available"] > 0]
        if len(claims) > self.per_vf:
            claims = rng.sample(claims, self.per_vf)
        for row in claims:
            st["per_vf"] += 1
            bdf = row["vf"]
            res, h = host.create(bdf, row["type_id"], rng)
            if res == "0":
                back = host.destroy(bdf, h)
                if back != "0":
                    self.problems.append("free of %s on %s: %s" % (h, bdf, back))
                continue
            st["mismatches"] += 1
            st["over"] += 1
            self.mismatches.append({
                "host": name, "step": step, "gpu": row["gpu"], "vf": bdf,
                "type": row["type_id"], "profile": row["profile"],
                "available": row["available"], "reason": row["reason"],
                "max_instances": row["max_instances"], "per_gi": row["per_gpu_instance"],
                "emu": 0, "refusals": [res], "state": summary, "detail": None,
                "trace": [t for t in trace if t.endswith("-> 0")], "kind": "vf"})
        after = host.snapshot()
        if after != before:
            diff = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            self.problems.append("%s step %d: the probes left the tree changed: %s" %
                                 (name, step, ", ".join(diff[:8])))
        return rows

    def report(self, hosts):
        shown = 0
        self.mismatches.sort(key=lambda m: (hosts.index(m["host"]), m["step"]))
        self.stats.sort(key=lambda s: hosts.index(s["host"]))
        classes = {}
        for m in self.mismatches:
            key = (m["host"], m["kind"], m["gpu"], m["type"], m["reason"],
                   "unlisted" if m["kind"] == "unlisted" else
                   "over" if m["available"] > m["emu"] else "under")
            c = classes.setdefault(key, {"n": 0, "first": m})
            c["n"] += 1
        if self.mismatches:
            print("\nmismatches (vgpuctl's available vs what the emulator accepts):")
        for m in self.mismatches:
            if shown >= self.max_shown:
                print("... %d more" % (len(self.mismatches) - shown))
                break
            shown += 1
            where = m["gpu"] + (" VF " + m["vf"] if m["kind"] == "vf" else "")
            print("MISMATCH %s step %d %s type %d (%s): vgpuctl available=%s reason=%s "
                  "max=%s per_gi=%s%s; emulator accepts %d (refusals %s); state: %s" %
                  (m["host"], m["step"], where, m["type"], m["profile"], m["available"],
                   m["reason"], m["max_instances"], m["per_gi"],
                   " detail=%r" % m["detail"] if m["detail"] else "", m["emu"],
                   ",".join(m["refusals"]) or "-", m["state"]))
        if classes:
            print("\nmismatch classes (host, check, GPU, type, vgpuctl's reason, direction): "
                  "count; first seen, with the successful writes that led there")
            order = sorted(classes.items(),
                           key=lambda kv: (hosts.index(kv[0][0]), kv[1]["first"]["step"]))
            for key, c in order:
                m = c["first"]
                print("CLASS %s %s %s %d(%s) reason=%s %s: %d times; first at step %d: "
                      "vgpuctl %s, emulator %d; state %s" %
                      (key[0], key[1], key[2], key[3], m["profile"], key[4], key[5], c["n"],
                       m["step"], m["available"], m["emu"], m["state"]))
                for t in m["trace"][-12:]:
                    print("    " + t)
        for p in self.problems[:self.max_shown]:
            print("PROBLEM " + p)
        print()
        for s in self.stats:
            print("%(host)s: %(steps)d steps (%(creates)d creates, %(frees)d frees, "
                  "%(refused)d refused), %(comparisons)d comparisons (%(inexact)d lower "
                  "bounds), %(per_vf)d per-VF "
                  "checks, %(eio)d failed creates (EIO), %(modes)d mode changes, at most "
                  "%(max_vgpus)d vGPUs, %(mismatches)d mismatches (%(over)d over-promises, "
                  "%(under)d under-promises)%(stopped)s" % s)
        total = sum(s["mismatches"] for s in self.stats)
        print("seed %d: %d mismatches, %d problems" % (self.seed, total, len(self.problems)))
        return 1 if total or self.problems else 0


def parse_args(argv):
    ap = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2].strip())
    ap.add_argument("vgpuctl")
    ap.add_argument("src")
    ap.add_argument("--seed", default=os.environ.get("VGPU_SEQ_SEED") or str(DEFAULT_SEED))
    ap.add_argument("--steps", type=int,
                    default=int(os.environ.get("VGPU_SEQ_STEPS") or DEFAULT_STEPS))
    ap.add_argument("--budget", type=float,
                    default=float(os.environ.get("VGPU_SEQ_BUDGET") or DEFAULT_BUDGET))
    a = ap.parse_args(argv)
    if a.seed == "random":
        a.seed = random.SystemRandom().randrange(1 << 31)
    else:
        try:
            a.seed = int(a.seed)
        except ValueError:
            ap.error("--seed: '%s' is not a number or 'random'" % a.seed)
    if a.steps < 0 or a.budget < 0:
        ap.error("--steps and --budget cannot be negative")
    return a


def main():
    args = parse_args(sys.argv[1:])
    vgpuctl, src = os.path.abspath(args.vgpuctl), os.path.abspath(args.src)
    emu_bin = os.environ.get("VGPU_EMU", "")
    if not emu_bin or not os.access(emu_bin, os.X_OK):
        print("SKIP: vgpu-emu was not built (VGPU_EMU unset)")
        return 77
    seed, steps = args.seed, args.steps
    hosts = (os.environ.get("VGPU_SEQ_HOSTS") or " ".join(HOSTS)).split()
    jobs = int(os.environ.get("VGPU_SEQ_JOBS") or min(len(hosts), os.cpu_count() or 1))
    # each host's share of the budget: the hosts run JOBS at a time
    host_budget = args.budget * min(jobs, len(hosts)) / len(hosts) if hosts else 0
    run = Run(vgpuctl, emu_bin, src, seed, steps, host_budget,
              int(os.environ.get("VGPU_SEQ_PER_VF") or 8),
              int(os.environ.get("VGPU_SEQ_MAX_SHOWN") or 40),
              bool(os.environ.get("VGPU_SEQ_KEEP")))
    print("seed %d (--seed %d reruns it), at most %d steps per host%s" %
          (seed, seed, steps, ", %.0f s each" % host_budget if host_budget else ""))
    t0 = time.time()
    # one emulator per host, each with its own random stream: the hosts run side by side
    # and give the same sequences whatever the interleaving
    if jobs <= 1:
        times = [run.host_run(h) for h in hosts]
    else:
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            times = list(ex.map(run.host_run, hosts))
    for h, secs in zip(hosts, times):
        print("%s: %.1f s" % (h, secs))
    rc = run.report(hosts)
    print("%.1f s in all" % (time.time() - t0))
    return rc


if __name__ == "__main__":
    sys.exit(main())
