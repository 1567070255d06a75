#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in README.md and vgpuctl(8) runs and prints what the docs
# show, so the docs cannot drift from the program.
#
# README.md: in each ```console block a line "$ COMMAND" is a command, and the
# lines after it, up to the next "$ " line or the closing fence, are its
# output (stdout and stderr together: an example should not need both, as a
# terminal may show them in another order); the fence's own
# indentation is stripped. docs/vgpuctl.8: the same in every .EX/.EE and
# .nf/.fi block (those of EXAMPLES), roff escapes undone (\- \e \(aq \& ...;
# one it does not know is an error, as is a bare "-", which man may show as a
# hyphen) and control lines such as .RS skipped. A command line ending in a
# backslash goes on on the next line.
#
# Each command runs with bash -o pipefail -c from SRCDIR (pipes are fine),
# with "vgpuctl" the binary under test, stdin empty, LC_ALL=C, COLUMNS=80,
# TZ=UTC, and must exit 0 and print exactly the documented output. Examples
# that cannot run here (they change a real host, need libvirt or NVIDIA's
# tools) are shown without the "$ " prompt (```sh blocks in README.md) and
# are not run; a "$ " line in a README block not marked console is an error,
# so nothing that looks checked is skipped. A file without examples fails.
#   doc-examples.sh VGPUCTL SRCDIR
set -u
bin=$(realpath "$1") src=$(realpath "$2")
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/ex"
# a link, not a copy: the binary finds vgpuctl-xml.so next to itself (/proc/self/exe)
ln -s "$bin" "$tmp/bin/vgpuctl"
fail=0

# What both extractors share: an error names the line; begin() starts example N.
# shellcheck disable=SC2016 # awk code, not shell
common='
	function err(msg) { printf "FAIL: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1 }
	function begin(cmd) {
		n++
		base = sprintf("%s/%s-%03d", dir, tag, n)
		printf "%s:%d\n", FILENAME, FNR > (base ".where"); close(base ".where")
		printf "" > (base ".want"); close(base ".want")
		printf "%s\n", cmd > (base ".cmd")
		cont = cmd ~ /\\$/
	}'

# Markdown: console blocks. Writes DIR/TAG-N.{where,cmd,want}; prints N.
extract_md() { # FILE DIR TAG
	awk -v dir="$2" -v tag="$3" "$common"'
	function unindent(s) { return substr(s, 1, ind) ~ /^ *$/ ? substr(s, ind + 1) : s }
	!fence && /^ *```/ {
		fence = 1
		match($0, /^ */)
		ind = RLENGTH
		info = substr($0, ind + 4)
		sub(/[ \t]+$/, "", info)
		console = info == "console"
		started = 0
		next
	}
	fence && /^ *```[ \t]*$/ {
		if (console && !started)
			err("a console block without a \"$ \" command")
		if (cont)
			err("the block ends inside a command (its last line ends in a backslash)")
		close(base ".cmd"); close(base ".want")
		fence = 0; cont = 0
		next
	}
	!fence { next }
	{ line = unindent($0) }
	!console {
		if (line ~ /^\$ /)
			err("a \"$ \" command outside a ```console block: mark the block console, or drop the prompt")
		next
	}
	cont {
		printf "%s\n", line > (base ".cmd")
		cont = line ~ /\\$/
		next
	}
	line ~ /^\$ / { close(base ".cmd"); close(base ".want"); begin(substr(line, 3)); started = 1; next }
	line ~ /^\$[ \t]*$/ { err("a prompt without a command"); next }
	!started { err("output before the first \"$ \" command of a console block"); next }
	{ printf "%s\n", line > (base ".want") }
	END {
		if (fence)
			err("the file ends inside a fenced block")
		print n + 0
		exit bad
	}' "$1"
}

# roff: .EX/.EE and .nf/.fi blocks. Writes DIR/TAG-N.{where,cmd,want}; prints N.
extract_roff() { # FILE DIR TAG
	awk -v dir="$2" -v tag="$3" "$common"'
	function glyph(name) {
		if (name in glyphs)
			return glyphs[name]
		err("roff glyph \\(" name " is not known here: use one of aq dq ga ti ha rs")
		return ""
	}
	# Undo the escapes a man page example uses; anything else is an error, so
	# what the test compares is what man shows.
	function unroff(s,   out, i, c, e, j, name) {
		out = ""
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c != "\\") { out = out c; continue }
			e = substr(s, ++i, 1)
			if (e == "-") out = out "-"
			else if (e == "e" || e == "\\") out = out "\\"
			else if (e == "&" || e == ")") continue
			else if (e == " " || e == "~" || e == "0") out = out " "
			else if (e == "\"") break
			else if (e == "(") { out = out glyph(substr(s, i + 1, 2)); i += 2 }
			else if (e == "[") {
				j = index(substr(s, i + 1), "]")
				if (!j) { err("unterminated \\["); break }
				out = out glyph(substr(s, i + 1, j - 1))
				i += j
			} else if (e == "f") {
				e = substr(s, ++i, 1)
				if (e == "(") i += 2
				else if (e == "[") i += index(substr(s, i + 1), "]")
			} else
				err("roff escape \\" e " in an example: not undone by this test")
		}
		return out
	}
	BEGIN {
		glyphs["aq"] = "\047"; glyphs["dq"] = "\""; glyphs["ga"] = "`"; glyphs["ti"] = "~"
		glyphs["ha"] = "^"; glyphs["rs"] = "\\"
	}
	!block && /^\.(EX|nf)([ \t]|$)/ { block = 1; started = 0; next }
	block && /^\.(EE|fi)([ \t]|$)/ {
		if (cont)
			err("the block ends inside a command (its last line ends in a backslash)")
		close(base ".cmd"); close(base ".want")
		block = 0; cont = 0
		next
	}
	!block || /^[.\047]/ { next }
	{
		raw = $0
		line = unroff(raw)
	}
	# what man would show differently from what a shell reads
	(started || line ~ /^\$ /) && raw ~ /(^|[^\\])-/ && raw !~ /^\\"/ {
		err("a bare - in an example: write \\- (man may show a hyphen)")
	}
	cont {
		printf "%s\n", line > (base ".cmd")
		cont = line ~ /\\$/
		next
	}
	line ~ /^\$ / { close(base ".cmd"); close(base ".want"); begin(substr(line, 3)); started = 1; next }
	started { printf "%s\n", line > (base ".want") }
	END {
		if (block)
			err("the file ends inside an .EX or .nf block")
		print n + 0
		exit bad
	}' "$1"
}

total=0
for file in README.md docs/vgpuctl.8; do
	tag=$(basename "$file")
	case $file in
	*.md) n=$(extract_md "$file" "$tmp/ex" "$tag") || fail=1 ;;
	*) n=$(extract_roff "$file" "$tmp/ex" "$tag") || fail=1 ;;
	esac
	n=${n:-0}
	if [ "$n" = 0 ]; then
		echo "FAIL: $file: no \"\$ \" examples found (the extraction or the docs broke)"
		fail=1
	fi
	echo "$file: $n examples"
	total=$((total + n))
done

for cmd in "$tmp"/ex/*.cmd; do
	[ -e "$cmd" ] || break
	base=${cmd%.cmd}
	where=$(cat "$base.where")
	rc=0
	PATH="$tmp/bin:$PATH" LC_ALL=C COLUMNS=80 TZ=UTC BASH_ENV='' \
		timeout 60 bash -o pipefail -c "$(cat "$cmd")" </dev/null >"$base.got" 2>&1 || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$base.want" "$base.got"; then
		echo "FAIL: $where: $(head -1 "$cmd")"
		[ $rc != 0 ] && echo "exit status $rc, want 0"
		diff -u --label "documented" --label "printed" "$base.want" "$base.got" | head -80
		fail=1
	fi
done

if [ $fail = 0 ]; then
	echo "ok: $total examples from README.md and vgpuctl.8"
else
	echo "FAIL: of $total examples from README.md and vgpuctl.8, those above"
fi
exit $fail
