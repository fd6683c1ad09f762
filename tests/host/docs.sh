#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Documentation checks: every Documentation/*.rst parses with docutils
# without a single warning; `make doc` builds every man page and groff
# (-ww) and man(1) accept them; for every command that has both a
# Documentation/latsplit-CMD.rst and `latsplit CMD --help`, the two option
# lists are the same set; latsplit.rst's COMMANDS are `latsplit --help`'s;
# every man page names a command that exists; the
# numbers Documentation/abi.rst states match include/uapi/latsplit.h.
. "$(dirname "$0")/../lib.sh"
python3 -c 'import docutils' 2>/dev/null || skip_all "python3-docutils not installed"
command -v groff >/dev/null || skip_all "groff not installed"
[ -x "$LS_BIN" ] || skip_all "build/latsplit not built (make tools)"
plan_none
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DOC=$LS_TOP/Documentation

# rst_warnings FILE: docutils' warnings and errors for FILE (empty = clean).
rst_warnings() {
	python3 - "$1" <<'PY'
import io, sys
import docutils.core
path = sys.argv[1]
stream = io.StringIO()
try:
    docutils.core.publish_doctree(open(path, encoding="utf-8").read(), source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream,
                            "file_insertion_enabled": False, "raw_enabled": False})
except Exception as e:
    stream.write("%s: %s\n" % (path, e))
sys.stdout.write(stream.getvalue())
PY
}

# same_lines RST HELP OK_DESC BAD_DESC: ok OK_DESC when the sorted files
# RST (from a man page) and HELP (from --help) hold the same lines, else
# not_ok BAD_DESC naming the lines only in each.
same_lines() {
	if diff -q "$1" "$2" >/dev/null; then
		ok "$3"
	else
		not_ok "$4" \
			"only in the man page: $(comm -23 "$1" "$2" | tr '\n' ' ')" \
			"only in --help: $(comm -13 "$1" "$2" | tr '\n' ' ')"
	fi
}

# rst_options FILE: the option names (-x, --long) of the OPTIONS section, one per line.
rst_options() {
	python3 - "$1" <<'PY'
import re, sys
import docutils.core, docutils.nodes as n
doc = docutils.core.publish_doctree(open(sys.argv[1], encoding="utf-8").read(),
    settings_overrides={"report_level": 5})
opts = set()
for sec in doc.traverse(n.section):
    if sec[0].astext().strip().upper() != "OPTIONS":
        continue
    for o in sec.traverse(n.option_string):
        opts.add(o.astext())
    for t in sec.traverse(n.term):
        opts.update(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", t.astext()))
print("\n".join(sorted(opts)))
PY
}

# help_options CMD: the option names in `latsplit CMD --help`, one per line.
help_options() {
	"$LS_BIN" "$1" --help 2>/dev/null | python3 -c '
import re, sys
opts = set()
for line in sys.stdin:
    m = re.match(r"^ {1,8}(-[A-Za-z0-9])?(?:, *)?(--[A-Za-z0-9][\w-]*)?", line)
    if m and (m.group(1) or m.group(2)):
        opts.update(g for g in m.groups() if g)
print("\n".join(sorted(opts)))'
}

shopt -s nullglob
rsts=("$DOC"/*.rst)
[ ${#rsts[@]} -gt 0 ] || { not_ok "Documentation/ has RST files"; done_testing; }

for f in "${rsts[@]}"; do
	w=$(rst_warnings "$f")
	[ -z "$w" ] && ok "${f#$LS_TOP/}: no docutils warnings" || not_ok "${f#$LS_TOP/}: docutils warnings" "$w"
done

if out=$(make -s -C "$LS_TOP" doc 2>&1); then ok "make doc builds every man page (rst2man --halt=warning)"
else not_ok "make doc" "$out"; fi
for f in "$DOC"/latsplit*.rst; do
	name=$(basename "$f" .rst)
	man=$LS_TOP/build/man/$name.8
	if [ ! -s "$man" ]; then not_ok "$name.8 built" "missing $man"; continue; fi
	w=$(groff -man -z -ww "$man" 2>&1)
	[ -z "$w" ] && ok "$name.8: groff -man -ww clean" || not_ok "$name.8: groff warnings" "$w"
	if out=$(MANWIDTH=80 man -l "$man" 2>&1 >"$T/page") && grep -q "^NAME" "$T/page" &&
	   grep -q "^SYNOPSIS" "$T/page"; then
		ok "$name.8: man -l renders NAME and SYNOPSIS"
	else
		not_ok "$name.8: man -l" "$out" "$(head -5 "$T/page")"
	fi
done

# Commands: the top-level usage lists them as "  NAME  summary" after "commands:".
cmds=$("$LS_BIN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && /^  [a-z]/ {print $1}')
[ -n "$cmds" ] && ok "latsplit --help lists the commands" || not_ok "latsplit --help lists the commands"
for f in "$DOC"/latsplit-*.rst; do
	cmd=$(basename "$f" .rst); cmd=${cmd#latsplit-}
	if ! grep -qx "$cmd" <<<"$cmds"; then
		not_ok "latsplit-$cmd.rst documents a command that exists" "'$cmd' is not in latsplit --help"
		continue
	fi
	if ! "$LS_BIN" "$cmd" --help >/dev/null 2>&1; then
		not_ok "latsplit $cmd --help exits 0"
		continue
	fi
	rst_options "$f" >"$T/rst"
	help_options "$cmd" >"$T/help"
	if [ ! -s "$T/help" ]; then
		not_ok "latsplit $cmd --help lists options" "no option lines found"
	else
		same_lines "$T/rst" "$T/help" "latsplit-$cmd.rst OPTIONS = latsplit $cmd --help ($(wc -l <"$T/help") options)" \
			"latsplit-$cmd.rst OPTIONS differ from latsplit $cmd --help"
	fi
done
missing=
for c in $cmds; do
	[ "$c" = version ] || [ -f "$DOC/latsplit-$c.rst" ] || missing="$missing $c"
done
[ -z "$missing" ] || diag "commands without a man page:$missing"
if [ -f "$DOC/latsplit.rst" ]; then
	# latsplit(8): the first word of each COMMANDS term, as a set, = latsplit --help's list.
	python3 - "$DOC/latsplit.rst" >"$T/rstcmds" <<'PY'
import sys
import docutils.core, docutils.nodes as n
doc = docutils.core.publish_doctree(open(sys.argv[1], encoding="utf-8").read(),
    settings_overrides={"report_level": 5})
for sec in doc.traverse(n.section):
    if sec[0].astext().strip().upper() == "COMMANDS":
        for t in sec.traverse(n.term):
            print(t.astext().split()[0])
PY
	sort -u "$T/rstcmds" -o "$T/rstcmds"
	sort -u <<<"$cmds" >"$T/helpcmds"
	same_lines "$T/rstcmds" "$T/helpcmds" "latsplit.rst COMMANDS = latsplit --help commands ($(wc -l <"$T/helpcmds"))" \
		"latsplit.rst COMMANDS differ from latsplit --help"
fi

# abi.rst: every ``NAME`` of the header it puts in a table row next to a
# number must have that value, and the sizes it states must hold.
if [ -f "$DOC/abi.rst" ]; then
	hdr=$LS_TOP/include/uapi/latsplit.h
	names=$(grep -oE '^``(LS|LATSPLIT)_[A-Z0-9_]+``' "$DOC/abi.rst" | tr -d '`' | sort -u)
	{
		echo '#include <stdio.h>'
		echo '#include <stddef.h>'
		echo "#include \"$hdr\""
		echo "#include \"jsonr.h\""
		echo 'int main(void) {'
		for nm in $names; do echo "printf(\"$nm %llu\\n\", (unsigned long long)($nm));"; done
		echo 'printf("sizeof(struct_ls_record) %zu\n", sizeof(struct ls_record));'
		echo 'printf("sizeof(struct_ls_hist) %zu\n", sizeof(struct ls_hist));'
		echo 'return 0; }'
	} >"$T/abi.c"
	if ! out=$(cc -I"$LS_TOP/tools" -I"$LS_TOP/tools/core" -o "$T/abi" "$T/abi.c" 2>&1); then
		not_ok "abi.rst: its names compile against the header" "$out"
	else
		bad=
		while read -r nm val; do
			case "$nm" in
			sizeof*) pat="${nm#sizeof(}"; pat="${pat%)}"; pat=${pat/_/ }
				grep -qE "sizeof\($pat\) *(=|is) *$val\b" "$DOC/abi.rst" || bad="$bad $nm=$val(not stated)" ;;
			*) grep -E "^\`\`$nm\`\`" "$DOC/abi.rst" | grep -qE "(^|[[:space:]])$val([[:space:]]|$)" ||
				bad="$bad $nm=$val" ;;
			esac
		done < <("$T/abi")
		n=$(wc -w <<<"$names")
		[ -z "$bad" ] && ok "abi.rst: $n constants and the struct sizes match the header" ||
			not_ok "abi.rst disagrees with include/uapi/latsplit.h" "header values:$bad"
	fi
fi
done_testing
