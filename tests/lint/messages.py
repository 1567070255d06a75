#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Messages stay greppable: no string literal is continued on the next line.

    messages.py SRCDIR [--fix]

A message split as "cannot open " <newline> "the file" cannot be found with
grep.  In src/, two string literals joined across a line break fail, unless
the first ends a line of output ("...\\n"), as help texts do.  --fix joins
them in place (clang-format then re-indents the call).
"""
import pathlib
import re
import sys

# a C string literal, then blanks with a line break, then the next literal
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|\'(?:[^\'\\\n]|\\.)*\'', re.S)


def splits(text):
    """(offset of the first literal's end, offset of the second's start) per split."""
    out = []
    prev = None  # end of the last string literal, if only blanks followed it
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            if prev is not None:
                gap = text[prev[1]:m.start()]
                if gap.strip() == '' and '\n' in gap and not prev[0].endswith('\\n"'):
                    out.append((prev[1], m.start()))
            prev = (tok, m.end())
        else:
            prev = None
    # literals separated by anything but blanks do not join
    return [s for s in out if text[s[0]:s[1]].strip() == '']


def main():
    src = pathlib.Path(sys.argv[1]) / 'src'
    fix = '--fix' in sys.argv[2:]
    bad = 0
    for path in sorted(src.rglob('*.[ch]')):
        text = path.read_text()
        found = splits(text)
        if not found:
            continue
        if fix:
            for end, start in reversed(found):
                # drop the closing quote, the break and the opening quote
                text = text[:end - 1] + text[start + 1:]
            path.write_text(text)
            continue
        for end, _ in found:
            line = text.count('\n', 0, end) + 1
            print(f'{path.relative_to(src.parent)}:{line}: string literal split across lines '
                  '(keep a message on one line so grep finds it)')
            bad += 1
    if bad:
        print(f'{bad} split string literals', file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
