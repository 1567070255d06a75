#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The layer rows of docs/design.md, enforced on the files of src/.

    layers.py SRCDIR BUILDDIR [-v]

A file is a module: X.c with its header X.h (a header without a .c, such as
cleanup.h or read-priv.h, is one on its own).  Edges between modules are
calls (nm on every object file the build made from src/: which file defines
each symbol, which files use it) and includes (every #include "..." of src/).

Fails, naming the files, on:
  - a src/lib file in no row of ROWS below (add it to the row of its layer,
    here and in docs/design.md's picture), or a row naming a file that is gone;
  - a call or include into a higher row, or within a row whose files may not
    call each other;
  - a private header (*-priv.h) included from another row;
  - a pure file (rows marked pure) whose calls reach, directly or through
    other files, a file outside the pure rows and the base row (the disk, a
    program, libvirt);
  - any circle of files (calls and includes together);
  - docs/design.md's picture listing other files in a row than ROWS.
-v prints the module graph, file by file.
"""
import collections
import pathlib
import re
import subprocess
import sys

# Bottom to top: (name, files, calls within the row allowed, pure).  A file
# may call or include files of lower rows, and of its own row where allowed.
# The names are docs/design.md's row labels; its picture lists the same files.
ROWS = [
    ("base", ["ctx.c", "steps.c", "util.c", "cpuset.c", "cleanup.h"], True, True),
    ("model", ["mig-tables.c", "vgputype.c", "model.c", "mig.c", "mig-smi.c", "mig-priv.h"],
     True, True),
    ("host files", ["sysfs.c", "sysfs-state.c", "sysfs-lock.c", "sysfs-priv.h", "outfile.c"],
     True, False),
    ("state", ["records.c", "catalog.c", "runs.c"], False, False),
    ("decisions", ["capacity.c", "migrate-check.c", "migrate-manifest.c", "migrate-plan.c", "params.c", "orphans.c", "plan.c", "scheduler.c", "domxml.c", "domxml-build.c",
                   "domxml-strip.c", "domxml-priv.h", "catalogue.c"], True, True),
    ("host read", ["read-pci.c", "read-types.c", "read-topo.c", "read-live.c", "read-priv.h",
                   "read-host.c", "nvml.c", "nvml-abi.h", "fabric.c", "fabric-abi.h", "hostcfg.c", "hostcfg-yaml.c",
                   "hostcfg-priv.h"], True, False),
    ("actions", ["exec.c", "nvtools.c", "live.c", "txn.c", "virt.c", "scheduler-host.c"], True, False),
    ("use cases", ["apply.c", "apply-resolve.c", "apply-host.c", "apply-ops.c", "apply-priv.h",
                   "gpu-runner.c", "assign.c", "release.c", "assign-priv.h", "hook.c", "metrics.c",
                   "vgpus.c", "diagnose.c", "orphans-host.c", "fabric-place.c", "nccl-topo.c"],
     True, False),
]
CLI_ROW = ("src/cli", None, True, False)  # every file of src/cli/


def sccs(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph, comp):
    """One shortest circle through comp[0], as "a calls b -> b includes c.h -> a"."""
    inside, start = set(comp), comp[0]
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for v in todo:
            for w in sorted(graph[v]):
                if w == start:
                    steps, u = [(v, w)], v
                    while prev[u] is not None:
                        steps.append((prev[u], u))
                        u = prev[u]
                    return " -> ".join("%s %s" % (a, graph[a][b] if graph[a][b] != "calls"
                                                  else "calls " + b)
                                       for a, b in reversed(steps))
                if w in inside and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        todo = nxt
    return " <-> ".join(comp)


class Tree:
    """The files of src/lib and src/cli and the module each belongs to."""

    def __init__(self, src):
        self.files = {}  # "lib/x.c" -> path
        for p in sorted((src / "src").glob("*/*.[ch]")):
            self.files["%s/%s" % (p.parent.name, p.name)] = p

    def module(self, f):
        """lib/x.h -> lib/x.c when there is one; a header alone is its own module."""
        if f.endswith(".h"):
            c = f[:-2] + ".c"
            if c in self.files:
                return c
        return f


def source_of(obj):
    # meson names objects <target>.p/<dir>_<file>.c.o: lib_read-pci.c.o -> lib/read-pci.c
    name = obj.name[:-2]
    d, _, f = name.partition("_")
    return "%s/%s" % (d, f)


def call_edges(build):
    defs, uses = {}, collections.defaultdict(set)
    objs = sorted((build / "src").glob("*.p/*.o"))
    if not objs:
        sys.exit("layers.py: no object files under %s/src (build first)" % build)
    for o in objs:
        src = source_of(o)
        out = subprocess.run(["nm", str(o)], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defs[p[2]] = src
            elif len(p) == 2 and p[0] == "U":
                uses[src].add(p[1])
    edges = set()
    for f, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != f:
                edges.add((f, defs[s]))
    return edges


def include_edges(tree):
    by_name = collections.defaultdict(list)
    for f in tree.files:
        by_name[f.split("/", 1)[1]].append(f)
    edges = set()
    for f, p in tree.files.items():
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', p.read_text(), re.M):
            # "x.h" is found beside the includer first, then in src/lib
            d = f.split("/", 1)[0]
            cands = by_name.get(inc, [])
            t = "%s/%s" % (d, inc) if "%s/%s" % (d, inc) in cands else (
                "lib/" + inc if "lib/" + inc in cands else None)
            if t and t != f:
                edges.add((f, t))
    return edges


def doc_rows(src):
    """The file names of each row of docs/design.md's picture, bottom row first."""
    text = (src / "docs" / "design.md").read_text()
    m = re.search(r"## Layers.*?```\n(.*?)```", text, re.S)
    if not m:
        return None
    rows, cur = [], []
    for line in m.group(1).splitlines():
        if re.match(r"^\s*-{10,}\s*$", line):
            rows.append(cur)
            cur = []
        else:
            cur.append(line)
    rows.append(cur)
    out = []
    for r in rows:
        body = "\n".join(r)
        if "src/cli/" in body:
            continue
        names = re.findall(r"(?<![\w*-])([A-Za-z0-9_-]+\.[ch])\b", body)
        out.append(sorted(set(names)))
    return list(reversed(out))


def main():
    src, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    verbose = "-v" in sys.argv
    tree = Tree(src)
    problems = []

    def bad(msg):
        problems.append(msg)

    # every library module in a row, every row's file there
    row_of, rows = {}, ROWS + [CLI_ROW]
    for i, (name, files, _, _) in enumerate(ROWS):
        for f in files:
            if "lib/" + f not in tree.files:
                bad("row '%s' lists src/lib/%s, which does not exist: drop it from ROWS in "
                    "tests/lint/layers.py and from docs/design.md" % (name, f))
            if "lib/" + f in row_of:
                bad("src/lib/%s is in two rows" % f)
            row_of["lib/" + f] = i
    for f in tree.files:
        if f.startswith("cli/"):
            row_of[tree.module(f)] = len(ROWS)
    modules = sorted({tree.module(f) for f in tree.files})
    for m in modules:
        if m.startswith("lib/") and m not in row_of:
            bad("src/%s is in no layer row: add it to the row of its layer in ROWS "
                "(tests/lint/layers.py) and in docs/design.md's picture" % m)

    # the graph of modules, each edge with what makes it
    calls = call_edges(build)
    graph = collections.defaultdict(dict)
    for f, t in calls:
        a, b = tree.module(f), tree.module(t)
        if a != b:
            graph[a].setdefault(b, "calls")
    for f, t in include_edges(tree):
        a, b = tree.module(f), tree.module(t)
        if a != b and b not in graph[a]:
            graph[a][b] = "includes %s" % t.split("/", 1)[1]
        if t.endswith("-priv.h") and a != b and row_of.get(a) != row_of.get(b):
            bad("%s includes %s, a private header of the row '%s'" %
                (f, t, rows[row_of[b]][0] if b in row_of else "?"))
    for m in modules:
        graph.setdefault(m, {})

    # rows: only down, or across where the row allows it
    for a in sorted(graph):
        for b, how in sorted(graph[a].items()):
            if a not in row_of or b not in row_of:
                continue
            ra, rb = row_of[a], row_of[b]
            what = "calls " + b if how == "calls" else how
            if rb > ra:
                bad("layer: %s %s: row '%s' is above row '%s', its own" %
                    (a, what, rows[rb][0], rows[ra][0]))
            elif rb == ra and not rows[ra][2]:
                bad("layer: %s %s: the files of row '%s' do not use each other" %
                    (a, what, rows[ra][0]))

    # pure rows: no call path to the disk, a program or libvirt
    pure = {m for m in row_of if rows[row_of[m]][3]}
    call_graph = collections.defaultdict(set)
    for f, t in calls:
        if tree.module(f) != tree.module(t):
            call_graph[tree.module(f)].add(tree.module(t))
    for m in sorted(pure):
        seen, todo, via = {m}, [m], {}
        while todo:
            v = todo.pop()
            for w in sorted(call_graph.get(v, ())):
                if w not in seen:
                    seen.add(w)
                    via[w] = v
                    todo.append(w)
        for w in sorted(seen - pure):
            path = [w]
            while path[-1] != m:
                path.append(via[path[-1]])
            bad("pure: %s reaches %s (%s), which is not pure" %
                (m, w, " -> ".join(reversed(path))))

    # no circle of files at all
    for comp in sccs({a: set(b) for a, b in graph.items()}):
        bad("circle of files: %s (%d files in the circle: %s)" %
            (shortest_cycle(graph, comp), len(comp), " ".join(comp)))

    # the picture in docs/design.md lists the same rows
    doc = doc_rows(src)
    want = [sorted(f for f in files) for _, files, _, _ in ROWS]
    if doc is None:
        bad("docs/design.md: no picture of the layers under '## Layers'")
    elif doc != want:
        for i in range(max(len(doc), len(want))):
            d = doc[i] if i < len(doc) else []
            w = want[i] if i < len(want) else []
            if d != w:
                bad("docs/design.md: row %d from the bottom ('%s') lists %s; layers.py lists %s" %
                    (i + 1, ROWS[i][0] if i < len(ROWS) else "?", " ".join(d) or "nothing",
                     " ".join(w) or "nothing"))

    if verbose:
        for a in sorted(graph):
            print("%s [%s] -> %s" % (a, rows[row_of[a]][0] if a in row_of else "?",
                                     " ".join(sorted(graph[a]))))
    for p in problems:
        print(p)
    n_edges = sum(len(v) for v in graph.values())
    print("%d files in %d rows, %d edges (calls and includes): %s" %
          (len(graph), len(ROWS) + 1, n_edges,
           "every edge goes down, no circle" if not problems else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
