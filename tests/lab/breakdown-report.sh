#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# breakdown --report FILE in a real run: the prober writes the HTML report at
# the end, and it is the very page `latsplit report` draws from the --json
# document of the same run (byte for byte, once the input's name, "this
# run" against the file's path, is the same). An --report path that cannot
# be written fails before the run (exit 2, nothing measured, no file).
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
plan_none
BD_ITERS=${BD_REPORT_ITERS:-200}
bd_backend_setup

if bd_run rep "" "--report $W/run.html"; then ok "run with --json and --report"
else not_ok "run with --json and --report" "$(cat "$W/rep.err")"; fi
check "--report wrote the page" test -s "$W/run.html"
check "the prober said where" grep -q "wrote the report $W/run.html" "$W/rep.err"
if "$LS_BIN" report -o "$W/file.html" "$W/rep.json" 2>"$W/file.err"; then
	sed "s|$W/rep.json|this run|g" "$W/file.html" >"$W/file-named.html"
	check "--report's page is latsplit report's page of the run's --json" cmp "$W/run.html" "$W/file-named.html"
else
	not_ok "latsplit report of the run's --json" "$(cat "$W/file.err")"
fi
out=$(cd "$LS_TOP/tests/web" && node_modules/.bin/html-validate --config .htmlvalidate.json "$W/run.html" 2>&1)
if [ -z "$out" ]; then ok "the page is valid HTML5 (html-validate)"; else not_ok "the page is valid HTML5 (html-validate)" "$out"; fi

# a path that cannot be written: refused before anything runs
out=$(lab_exec_t 120 0 "$B breakdown -p $BD_PORT -u 20 -n 10 --report $W/no/dir/r.html 192.0.2.2" 2>&1); rc=$?
if [ "$rc" = 2 ] && grep -q -- "--report: create temporary file for $W/no/dir/r.html" <<<"$out"; then
	ok "unwritable --report: exit 2 before the run, names the path"
else
	not_ok "unwritable --report: exit 2 before the run, names the path" "rc=$rc" "$out"
fi
check "unwritable --report: nothing created" test ! -e "$W/no"
done_testing
