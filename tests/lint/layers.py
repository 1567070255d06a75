#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The call and include graphs of src/ have no circle of files, and the library never calls the CLI.

    layers.py SRCDIR BUILDDIR [-v]

Calls: every object file the build made from src/ (nm: which file defines
each symbol, which files use it).  Includes: every #include "..." of src/.
A circle is a strongly connected component of more than one file.  -v
prints the call graph, file by file.
"""
import collections
import pathlib
import re
import subprocess
import sys


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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def source_of(obj):
    # meson names objects <target>.p/<dir>_<file>.c.o: lib_read-pci.c.o -> lib/read-pci.c
    name = obj.name[:-2]
    d, _, f = name.partition("_")
    return "%s/%s" % (d, f)


def call_graph(build):
    defs, uses = {}, collections.defaultdict(set)
    objs = [o for o in (build / "src").glob("*.p/*.o")]
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
    graph = collections.defaultdict(set)
    for f, syms in uses.items():
        graph.setdefault(f, set())
        for s in syms:
            if s in defs and defs[s] != f:
                graph[f].add(defs[s])
    return graph


def include_graph(src):
    graph = collections.defaultdict(set)
    files = {p.name: p for p in (src / "src").glob("*/*.[ch]")}
    for name, p in files.items():
        graph.setdefault(name, set())
        for inc in re.findall(r'^#include "([^"]+)"', p.read_text(), re.M):
            if inc in files and inc != name:
                graph[name].add(inc)
    return graph


def main():
    src, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    bad = 0
    calls = call_graph(build)
    for comp in sccs(calls):
        print("circle of calls: %s" % " <-> ".join(comp))
        bad += 1
    for f, to in sorted(calls.items()):
        for t in sorted(to):
            if f.startswith("lib/") and t.startswith("cli/"):
                print("layer: %s calls %s (the library never calls the CLI)" % (f, t))
                bad += 1
    incs = include_graph(src)
    for comp in sccs(incs):
        print("circle of includes: %s" % " <-> ".join(comp))
        bad += 1
    if "-v" in sys.argv:
        for f, to in sorted(calls.items()):
            print("%s -> %s" % (f, " ".join(sorted(to))))
    edges = sum(len(v) for v in calls.values())
    print("%d files, %d call edges, %d include edges: %s" %
          (len(calls), edges, sum(len(v) for v in incs.values()),
           "no circle" if not bad else "%d problems" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
