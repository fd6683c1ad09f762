#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: 6.1
# The regression suite itself (tests/regress.sh, behind `make -C tests
# run_tests`): it stores a baseline, passes against it when nothing changed,
# and fails with "regressed" when a delay of known size (netem on the
# responder's egress) is injected. The baseline is an earlier run, so this is judged across runs,
# and the emulator drifts between runs: +125 % in total p50 and +522 % in
# a softirq wait's p99 were seen between two runs minutes apart.
# --max-regress 1000 (11x) is beyond that drift, and the injected delay is
# sized from the baseline itself (netem = 40 x its one-way p50, at least
# 20 ms: +20x one-way), so it stays far beyond the bound on a slower lab.
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
out=$(bash "$R" run --lab "$LAB_NAME" --baseline "$base" --name ci --duration $DUR --max-regress 1000 2>&1); rc=$?
if [ "$rc" = 0 ] && ! echo "$out" | grep -q '^not ok'; then
	ok "same setup against its baseline: no regression"
else
	not_ok "same setup against its baseline" "rc=$rc" "$out"
fi
netem_ms=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(max(20, int(40 * d["total"]["p50_ns"] / 1e6) + 1))' "$base/ci/breakdown.json" 2>/dev/null) || netem_ms=20
diag "injected delay: netem ${netem_ms}ms on node1's egress"
out=$(bash "$R" run --lab "$LAB_NAME" --baseline "$base" --name ci --duration $DUR --max-regress 1000 --netem "${netem_ms}ms" 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q '^not ok .* - breakdown regressed'; then
	ok "injected ${netem_ms} ms delay: the suite fails with a breakdown regression"
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
