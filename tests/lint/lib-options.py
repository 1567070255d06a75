#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No CLI option names in the library's strings.

    lib-options.py SRCDIR

The library names values; the caller adds its own option names (vgpuctl's
CLI maps a vgpu_ctx_hint() to "give --no-pin" and the like).  Fails, naming
file and line, on a string literal of src/lib/*.[ch] holding an option-like
token (" --x" or "--x" at its start).  The argv of an external program is
not a message: ALLOWED lists those tokens, file by file.
"""
import pathlib
import re
import sys

# file -> the options of programs it runs (and names in what it says about them)
ALLOWED = {
    "nvtools.c": {"--query-gpu", "--format"},  # nvidia-smi's argv
    "diagnose.c": {"--no-pager", "--since"},  # journalctl's argv
    "mig-smi.c": {"--query-gpu"},  # "nvidia-smi --query-gpu=...": what its parser reads
}
OPTION = re.compile(r"(?:^|(?<=[\s(\"'`]))(--[a-z][a-z0-9-]*)")


def literals(text):
    """(line, content) of each string literal, comments and char literals skipped."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j, start = i + 1, line
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    line += 1
                j += 1
            if c == '"':
                yield start, text[i + 1:j]
            i = j + 1
        else:
            if c == "\n":
                line += 1
            i += 1


def main():
    src = pathlib.Path(sys.argv[1]) / "src" / "lib"
    bad = 0
    for p in sorted(src.glob("*.[ch]")):
        allowed = ALLOWED.get(p.name, set())
        for line, s in literals(p.read_text()):
            for opt in OPTION.findall(s):
                if opt not in allowed:
                    print("src/lib/%s:%d: \"%s\" names an option (%s): the library names values, "
                          "the caller adds its options (vgpu_ctx_hint())" % (p.name, line, s, opt))
                    bad += 1
    print("%s: %d option names in library strings" % (src, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
