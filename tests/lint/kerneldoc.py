#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every public function of the library has kernel-doc with its arguments and return.

    kerneldoc.py SRCDIR [-v]

A public function is one declared in a header of src/lib/ (read-priv.h, the
readers' private header, included).  Its comment must be a /** block directly
above the declaration, open with "NAME() - summary", describe every named
parameter as "@param:" and, unless the function returns void, say "Return:".
Prints each miss and "N/M public library functions documented"; exits 1 on
any miss.
"""
import pathlib
import re
import sys

DECL = re.compile(
    r"^(?P<ret>(?:const\s+|unsigned\s+|struct\s+|enum\s+)*[A-Za-z_][A-Za-z0-9_]*[\s\*]+)"
    r"(?P<name>vgpu_[A-Za-z0-9_]+)\s*\((?P<args>[^;{]*)\)\s*(?:__attribute__\s*\(\(.*\)\))?\s*;",
    re.S)


def params(args):
    out = []
    depth = 0
    cur = ""
    for ch in args:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    names = []
    for p in out:
        p = p.strip()
        if not p or p == "void" or p == "...":
            continue
        m = re.search(r"\(\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)", p)  # function pointer
        if m:
            names.append(m.group(1))
            continue
        p = re.sub(r"\[[^\]]*\]", "", p).strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", p)
        if m:
            names.append(m.group(1))
    return names


def check(path):
    text = path.read_text()
    lines = text.split("\n")
    results = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith((" ", "\t", "#", "/", "*", "}", "typedef", "static")) or "(" not in line:
            i += 1
            continue
        j = i
        decl = line
        while ";" not in decl and "{" not in decl and j + 1 < len(lines):
            j += 1
            decl += "\n" + lines[j]
        m = DECL.match(decl)
        if not m:
            i = j + 1
            continue
        name = m.group("name")
        void = re.fullmatch(r"\s*void\s*", m.group("ret")) is not None
        # the comment block that ends right above
        k = i - 1
        problems = []
        if k < 0 or not lines[k].rstrip().endswith("*/"):
            problems.append("no kernel-doc comment")
        else:
            start = k
            while start >= 0 and not lines[start].lstrip().startswith("/*"):
                start -= 1
            block = "\n".join(lines[start:k + 1])
            if not lines[start].lstrip().startswith("/**"):
                problems.append("comment is not /** kernel-doc")
            if not re.search(r"\b" + re.escape(name) + r"\(\)\s+-\s+\S", block):
                problems.append("no '%s() - summary'" % name)
            for p in params(m.group("args")):
                if not re.search(r"@" + re.escape(p) + r"\b", block):
                    problems.append("@%s undocumented" % p)
            if not void and "Return:" not in block:
                problems.append("no 'Return:'")
        results.append((name, problems))
        i = j + 1
    return results


def main():
    src = pathlib.Path(sys.argv[1])
    verbose = "-v" in sys.argv
    total = ok = 0
    for h in sorted((src / "src" / "lib").glob("*.h")):
        for name, problems in check(h):
            total += 1
            if problems:
                print("%s: %s: %s" % (h.name, name, "; ".join(problems)))
            else:
                ok += 1
                if verbose:
                    print("%s: %s: ok" % (h.name, name))
    print("%d/%d public library functions documented" % (ok, total))
    return 0 if ok == total and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
