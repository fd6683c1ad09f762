#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: 6.1
# The regression suite itself (tests/regress.sh, behind `make -C tests
# run_tests`): it stores a baseline, passes against it when nothing changed,
# and fails with "regressed" when a delay of known size (netem 20 ms on the
# responder's egress: +10 ms one-way, ~40x the lab's typical latency) is
# injected. --max-regress 300: two runs of one setup in the lab differ by up
# to +55 % in p50 (seen), so only a change far beyond that is a regression.
. "$(dirname "$0")/../lib.sh"
plan_none

base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
R=$LS_TOP/tests/regress.sh
DUR=6

out=$(bash "$R" record --lab "$LAB_NAME" --baseline "$base" --name ci --duration $DUR 2>&1); rc=$?
if [ "$rc" = 0 ] && [ -s "$base/ci/breakdown.json" ] && [ -s "$base/ci/irq.json" ]; then
	ok "baseline recorded (breakdown + irq profile)"
else
	not_ok "baseline recorded" "rc=$rc" "$out"
fi
out=$(bash "$R" run --lab "$LAB_NAME" --baseline "$base" --name ci --duration $DUR --max-regress 300 2>&1); rc=$?
if [ "$rc" = 0 ] && ! echo "$out" | grep -q '^not ok'; then
	ok "same setup against its baseline: no regression"
else
	not_ok "same setup against its baseline" "rc=$rc" "$out"
fi
out=$(bash "$R" run --lab "$LAB_NAME" --baseline "$base" --name ci --duration $DUR --max-regress 300 --netem 20ms 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q '^not ok .* - breakdown regressed'; then
	ok "injected 20 ms delay: the suite fails with a breakdown regression"
else
	not_ok "injected delay is caught" "rc=$rc" "$out"
fi
out=$(bash "$R" run --lab "$LAB_NAME" --baseline "$base" --name missing --duration 6 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q "no baseline"; then
	ok "a missing baseline is a failure that says how to make one"
else
	not_ok "missing baseline" "rc=$rc" "$out"
fi
done_testing
