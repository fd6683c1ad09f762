#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fleet-facing outputs on real runs between the lab nodes: breakdown's
# --prom file passes `promtool check metrics` (the Prometheus project's own
# linter) and carries the pair's figures; `latsplit model --from` takes the
# run's total p50/p99; `latsplit compare` of a run against itself finds no
# change, and two runs of the same healthy setup (A/A) are judged with the
# family-wise alpha (the outcome is reported; an A/A flag here is a lab
# drift finding, counted against alpha by tests/host/compare-cli.sh).
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || skip_all "promtool not installed (Debian package prometheus)"
. "$(dirname "$0")/breakdown.inc"
trap bd_cleanup EXIT
plan_none
bd_backend_setup

if bd_run a "" "--prom $W/a.prom"; then ok "breakdown run A with --prom"
else not_ok "breakdown run A with --prom" "$(cat "$W/a.err")"; done_testing; fi
bd_diag "$W/a.json"
if out=$(promtool check metrics <"$W/a.prom" 2>&1); then ok "promtool check metrics accepts breakdown's --prom file"
else not_ok "promtool check metrics" "$out" "$(head -20 "$W/a.prom")"; fi
p99=$(bd_get "$W/a.json" 'd["total"]["p99_ns"]')
prom99=$(awk '/^latsplit_breakdown_seconds\{.*part="total".*quantile="0.99"/ {print $2}' "$W/a.prom")
if python3 -c "import sys; sys.exit(0 if abs($prom99 * 1e9 - $p99) <= 1e-6 * $p99 + 1 else 1)" 2>/dev/null; then
	ok "the --prom total p99 ($prom99 s) is the JSON's ($p99 ns)"
else
	not_ok "--prom total p99 matches the JSON" "prom '$prom99' json '$p99'"
fi

out=$("$LS_BIN" model --from "$W/a.json" --json 2>&1)
if python3 -c '
import json, sys
d = json.loads(sys.stdin.read()); a = json.load(open(sys.argv[1]))
r = d["algorithms"][0]["results"]
assert d["inputs"]["from_key"] == "total", d["inputs"]
assert abs(r[0]["latency_ns"] - a["total"]["p50_ns"]) < 1e-3 and abs(r[1]["latency_ns"] - a["total"]["p99_ns"]) < 1e-3
assert r[1]["t_sync_ns"] >= r[0]["t_sync_ns"]
' "$W/a.json" <<<"$out"; then ok "model --from a real breakdown: its total p50 and p99"
else not_ok "model --from a real breakdown" "$out"; fi

out=$("$LS_BIN" compare --max-regress 0 "$W/a.json" "$W/a.json" 2>&1); rc=$?
if [ "$rc" = 0 ] && grep -q "parts.processing .*no significant change" <<<"$out" &&
   ! grep -qE " (slower|faster|mixed)" <<<"$out"; then
	ok "compare of a real run with itself: no significant change anywhere, exit 0"
else
	not_ok "compare A A (same file)" "rc=$rc" "$out"
fi

if bd_run b "" ""; then ok "breakdown run B, same setup"
else not_ok "breakdown run B" "$(cat "$W/b.err")"; done_testing; fi
bd_diag "$W/b.json"
out=$("$LS_BIN" compare --max-regress 0 "$W/a.json" "$W/b.json" 2>&1); rc=$?
diag "$out"
if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then ok "compare of two real runs (A/A) ran, exit $rc"
else not_ok "compare A/A of two runs" "rc=$rc"; fi
done_testing
