#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lab's bad-input paths on the host: unknown kernels name the package to
# install, a lab that is not up is refused, bad options are usage errors, and
# `lab run` with a failing guest command fails with that status, and a
# checkout under /tmp (which the guests mount their own) is refused.
. "$(dirname "$0")/../lib.sh"
plan 10

out=$("$LS_LAB" up --name errs-$$ --kver 9.99 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *linux-image* ]] && ok "unknown kernel: exit 2 naming the package" ||
	not_ok "unknown kernel" "rc=$rc: $out"
out=$("$LS_LAB" exec --name not-up-$$ 0 -- true 2>&1); rc=$?
[ "$rc" != 0 ] && [[ "$out" == *"not up"* ]] && ok "exec on a lab that is not up is refused" ||
	not_ok "exec on a lab that is not up" "rc=$rc: $out"
out=$("$LS_LAB" up --name errs-$$ --nodes 3 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *nodes* ]] && ok "--nodes 3 is a usage error" || not_ok "--nodes 3" "rc=$rc: $out"
out=$("$LS_LAB" up --name errs-$$ --tcg many 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"--tcg must be single or multi"* ]] && ok "--tcg many is a usage error" || not_ok "--tcg many" "rc=$rc: $out"
out=$("$LS_LAB" up --name errs-$$ --icount 3 --tcg multi 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"--icount needs --tcg single"* ]] && ok "--icount with --tcg multi is a usage error" || not_ok "--icount with multi" "rc=$rc: $out"
out=$("$LS_LAB" up --name 'bad/name' 2>&1); rc=$?
[ "$rc" = 2 ] && ok "a lab name with a slash is refused" || not_ok "bad lab name" "rc=$rc: $out"
out=$("$LS_LAB" frobnicate 2>&1); rc=$?
[ "$rc" = 2 ] && ok "unknown subcommand is a usage error" || not_ok "unknown subcommand" "rc=$rc: $out"
out=$("$LS_LAB" run --nodes 1 -- 'uname -r; exit 5' 2>&1); rc=$?
if [ "$rc" = 5 ] && [[ "$out" == 6.1.* ]]; then
	ok "lab run boots one node, runs the command and returns its status"
else
	not_ok "lab run" "rc=$rc: $out"
fi
t=$(mktemp -d)
mkdir -p "$t/tools/lab" && cp "$LS_LAB" "$t/tools/lab/lab"
out=$(LS_LAB_ROOT=$t/root bash "$t/tools/lab/lab" up --name intmp 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"clone it elsewhere"* ]] && [ ! -e "$t/root/intmp" ] &&
	ok "a checkout under /tmp is refused before anything boots" || not_ok "checkout under /tmp" "rc=$rc: $out"
rm -rf "$t"
left=$(pgrep -af 'latsplit-run-' ; find /tmp/latsplit-lab -maxdepth 1 -type d -name 'run-*' 2>/dev/null)
[ -z "$left" ] && ok "lab run leaves no guest or state behind" || not_ok "lab run leaves nothing behind" "$left"
done_testing
