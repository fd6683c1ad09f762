#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit model` end to end: the defaults reproduce the seed's example,
# --json carries the same figures, --from takes p50 and p99 from a probe or
# breakdown document (summary or samples_ns), and bad input exits 2.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "checks the JSON"

# json_check DESC PYTHON-ASSERTS CMD...: run CMD, feed its stdout to the asserts as d.
json_check() {
	local desc=$1 py=$2 out; shift 2
	out=$("$@" 2>&1) || { not_ok "$desc" "exit $?" "$out"; return; }
	if python3 -c "import json,sys; d=json.loads(sys.stdin.read()); $py" <<<"$out" 2>"$T/err"; then ok "$desc"
	else not_ok "$desc" "$(cat "$T/err")" "$out"; fi
}

M="$LS_BIN model"
expect_rc "defaults are the seed's example: T_sync 79.7 ms, utilization 90.94 %" 0 \
	"2.000 us \(given\) +79.688 ms +16.000 us +79.70[34] ms +90.94%" $M
expect_rc "sensitivity row at 200 us: 81.287 ms (the formula, not the seed's 96 ms)" 0 \
	"^  200.000 us +81.287 ms .* 90.78%" $M
expect_rc "tree variant is named and has its own formula" 0 \
	"2 D / B \+ 2 ceil\(log2 N\) \* latency +\(double binary tree" $M --algo tree
json_check "--json: kind model, seed figures" '
a = d["algorithms"][0]; r = a["results"][0]
assert d["kind"] == "model" and d["schema"] == 1 and a["name"] == "ring"
assert abs(r["t_sync_ns"] - 79703500) < 1 and abs(r["utilization"] - 0.8/0.8797035) < 1e-12
assert len(a["sensitivity"]) == 5 * 4' $M --json
json_check "--algo all: three algorithms" '
assert [a["name"] for a in d["algorithms"]] == ["ring", "ring-steps", "tree"]' $M --algo all --json

cat >"$T/bd.json" <<'J'
{"schema": 1, "kind": "breakdown",
 "parts": {"queuing": {"count": 3, "p50_ns": 1000, "p99_ns": 9000}},
 "total": {"count": 100, "p50_ns": 20000, "p99_ns": 200000}}
J
json_check "--from a breakdown: p50 and p99 of 'total' evaluated separately" '
r = d["algorithms"][0]["results"]
assert d["inputs"]["from_key"] == "total"
assert [x["latency_source"] for x in r] == ["measured p50", "measured p99"]
assert r[0]["latency_ns"] == 20000 and r[1]["latency_ns"] == 200000
assert abs(r[1]["t_lat_ns"] - 8 * 200000) < 1e-6' $M --from "$T/bd.json" --json
python3 -c 'import json; json.dump({"schema":1,"kind":"probe","one_way":{"samples_ns":[float(i) for i in range(1,101)]}}, open("'"$T"'/probe.json","w"))'
json_check "--from a probe with samples_ns: nearest-rank p50 50 ns, p99 99 ns" '
r = d["algorithms"][0]["results"]
assert r[0]["latency_ns"] == 50 and r[1]["latency_ns"] == 99, r' $M --from "$T/probe.json" --json
cat >"$T/probe2.json" <<'J'
{"schema": 1, "kind": "probe", "samples_ns": [5, 6, 7],
 "summary": {"count": 3, "p50_ns": 6, "p99_ns": 7},
 "responder": {"count": 3, "turnaround": {"count": 3, "p50_ns": 1, "p99_ns": 2}}}
J
json_check "--from the probe's layout: the one-way summary, not the responder turnaround" '
assert d["inputs"]["from_key"] == "summary"
assert d["algorithms"][0]["results"][1]["latency_ns"] == 7' $M --from "$T/probe2.json" --json
cat >"$T/two.json" <<'J'
{"schema": 1, "kind": "breakdown", "a": {"p50_ns": 1, "p99_ns": 2}, "b": {"p50_ns": 3, "p99_ns": 4}}
J
expect_rc "--from with several distributions and no total: exit 2 listing them" 2 \
	"several distributions, choose one with --from-key: a, b" $M --from "$T/two.json"
json_check "--from-key picks one" '
assert d["algorithms"][0]["results"][1]["latency_ns"] == 4' $M --from "$T/two.json" --from-key b --json
expect_rc "--from-key that does not exist: exit 2" 2 "no distribution 'c'; it has: a, b" $M --from "$T/two.json" -k c
printf '{"schema": 1, "kind": "probe", "one_way": {"p50_ns": 1,' >"$T/trunc.json"
expect_rc "--from a truncated file: exit 2 with line:col" 2 "trunc.json:1:[0-9]+: unexpected end of input" $M --from "$T/trunc.json"
expect_rc "--from a missing file: exit 2" 2 "No such file" $M --from "$T/nope.json"
expect_rc "--latency without a unit: exit 2" 2 "'2' needs a unit" $M --latency 2
expect_rc "--gpus 0: exit 2" 2 "--gpus: 0 is out of range" $M --gpus 0
expect_rc "--bandwidth with an unknown unit: exit 2" 2 "unknown unit" $M --bandwidth 10furlongs
expect_rc "--latency and --from together: exit 2" 2 "give one" $M --latency 2us --from "$T/bd.json"
expect_rc "stray argument: exit 2" 2 "unexpected argument 'x'" $M x
expect_rc "--help: exit 0" 0 "--grad-bytes SIZE" $M --help
done_testing
