#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit compare` end to end on synthetic documents: bad input exits 2
# with a message naming the problem; A/A comparisons of documents drawn
# from one distribution (fixed seed) come out "no significant change" at
# the stated alpha rate; a known slowdown is a regression (exit 1) only
# above --max-regress; an improvement is "faster" and exit 0; 100,000
# series are joined by name whatever their order.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "generates the synthetic documents"

# gen SPEC...: one breakdown-like document, three parts, per SPEC
# OUT:SEED:SCALE_PROCESSING[:KIND[:N]] (one python for them all).
gen() {
	python3 - "$@" <<'PY'
import json, random, sys
for spec in sys.argv[1:]:
    f = spec.split(":")
    out, seed, scale = f[0], int(f[1]), float(f[2])
    kind = f[3] if len(f) > 3 else "breakdown"
    n = int(f[4]) if len(f) > 4 else 1000
    r = random.Random(seed)
    def draw(mu, s, k=1.0):
        return [float(round(r.lognormvariate(mu, s) * k)) for _ in range(n)]
    doc = {"schema": 1, "kind": kind,
           "parts": {"transmission": {"samples_ns": draw(6, 0.05)},
                     "queuing": {"samples_ns": draw(8, 0.8)},
                     "processing": {"samples_ns": draw(9, 0.4, scale)}},
           "total": {"count": n, "p50_ns": 1.0, "p99_ns": 2.0}}
    json.dump(doc, open(out, "w"))
PY
}

gen "$T/a.json:1:1.0" "$T/a2.json:2:1.0" "$T/slow.json:3:1.3" "$T/irq.json:4:1.0:irq"
printf '{"schema": 1, "kind": "breakdown", "parts": {"queuing": {"samples_ns": [1, 2,\n  3, ]}}}' >"$T/malformed.json"
head -c 3000 "$T/a.json" >"$T/truncated.json"
sed 's/"schema": 1/"schema": 2/' "$T/a.json" >"$T/schema2.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["parts"]["queuing"]["samples_ns"]=[]; json.dump(d,open(sys.argv[2],"w"))' "$T/a.json" "$T/empty1.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [p.update(samples_ns=[]) for p in d["parts"].values()]; json.dump(d,open(sys.argv[2],"w"))' "$T/a.json" "$T/empty.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["parts"]["queuing"]["samples_ns"][7]="x"; json.dump(d,open(sys.argv[2],"w"))' "$T/a.json" "$T/string.json"
echo '[1, 2]' >"$T/array.json"
"$LS_BIN" model --json >"$T/model.json"

C="$LS_BIN compare"
expect_rc "malformed JSON: exit 2 with file:line:col" 2 "malformed.json:2:6: trailing comma in array" $C "$T/malformed.json" "$T/a.json"
expect_rc "truncated JSON: exit 2, says truncated" 2 "truncated.json:1:[0-9]+: unexpected end of input.*truncated" $C "$T/a.json" "$T/truncated.json"
expect_rc "different schema versions: exit 2" 2 "different schema versions" $C "$T/a.json" "$T/schema2.json"
expect_rc "schema this latsplit cannot read: exit 2" 2 "schema 2, this latsplit reads schema 1" $C "$T/schema2.json" "$T/schema2.json"
expect_rc "different kinds: exit 2" 2 "different kinds: .* is 'breakdown', .* is 'irq'" $C "$T/a.json" "$T/irq.json"
expect_rc "empty sample sets everywhere: exit 2, nothing could be tested" 2 "nothing could be tested: .*empty sample sets" $C "$T/a.json" "$T/empty.json"
expect_rc "one empty distribution (no events in B): reported, not an error" 0 "parts.queuing .*not tested \(no samples in B\)" $C "$T/a.json" "$T/empty1.json"
expect_rc "a sample that is not a number: exit 2 with line:col" 2 "string.json:1:[0-9]+: parts.queuing: samples_ns\[7\] is string" $C "$T/a.json" "$T/string.json"
expect_rc "not a latsplit document: exit 2" 2 "not a latsplit document" $C "$T/array.json" "$T/a.json"
expect_rc "nothing to compare (model output): exit 2" 2 "nothing to compare" $C "$T/model.json" "$T/model.json"
expect_rc "missing file: exit 2" 2 "open $T/nope.json: No such file" $C "$T/nope.json" "$T/a.json"
expect_rc "one file only: usage error" 2 "need two files" $C "$T/a.json"
expect_rc "unknown option: usage error" 2 "unknown option '--frobnicate'" $C --frobnicate "$T/a.json" "$T/a.json"
expect_rc "--alpha out of range: usage error" 2 "--alpha" $C --alpha 2 "$T/a.json" "$T/a.json"
expect_rc "--help: exit 0 with the option list" 0 "--max-regress PCT" $C --help

# A/A: 40 independent pairs of documents drawn from one distribution.
# 3 distributions x 2 tests each, Holm at family-wise alpha 0.05: expected
# at most 2 of 40 comparisons flag anything; allow 2 + 4 sd (binomial) = 7.
fp=0 bad_rc=0
specs=()
for i in $(seq 1 40); do
	specs+=("$T/x$i.json:$((1000 + 2 * i)):1.0" "$T/y$i.json:$((1001 + 2 * i)):1.0")
done
gen "${specs[@]}"
for i in $(seq 1 40); do
	out=$($C --alpha 0.05 --max-regress 0 "$T/x$i.json" "$T/y$i.json" 2>&1); rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || bad_rc=$((bad_rc + 1))
	grep -qE ' (slower|faster|mixed)' <<<"$out" && fp=$((fp + 1))
done
diag "A/A: $fp of 40 comparisons flagged a significant change at family-wise alpha 0.05"
[ "$bad_rc" = 0 ] && ok "A/A: every comparison ran (exit 0 or 1)" || not_ok "A/A exit codes" "$bad_rc runs exited with neither 0 nor 1"
[ "$fp" -le 7 ] && ok "A/A: false positives ($fp/40) within the alpha-0.05 bound (7)" ||
	not_ok "A/A false positives" "$fp of 40 comparisons flagged, bound 7"
expect_rc "A/A of two runs: no significant change, exit 0 with --max-regress 0" 0 \
	"parts.processing .* no significant change" $C --max-regress 0 "$T/a.json" "$T/a2.json"

# A known slowdown: processing x1.3.
expect_rc "30 % slower processing: regression, exit 1 with --max-regress 10" 1 \
	"parts.processing .*slower  REGRESSION" $C --max-regress 10 "$T/a.json" "$T/slow.json"
expect_rc "30 % slower processing is below --max-regress 50: exit 0" 0 \
	"parts.processing .*slower" $C --max-regress 50 "$T/a.json" "$T/slow.json"
expect_rc "without --max-regress compare only reports: exit 0" 0 "slower" $C "$T/a.json" "$T/slow.json"
# --min-change: a significant 30 % shift is a change at 25 %, none at 40 %.
expect_rc "30 % slower with --min-change 25: still slower, a regression" 1 \
	"parts.processing .*slower  REGRESSION" $C --min-change 25 --max-regress 10 "$T/a.json" "$T/slow.json"
expect_rc "30 % slower with --min-change 40: no significant change, exit 0" 0 \
	"parts.processing .* no significant change" $C --min-change 40 --max-regress 10 "$T/a.json" "$T/slow.json"
expect_usage_c() { expect_rc "$1" 2 "$2" $C "${@:3}"; }
expect_usage_c "--min-change -5 is a usage error" "min-change" --min-change -5 "$T/a.json" "$T/a2.json"
expect_rc "the improvement direction: faster, exit 0" 0 "parts.processing .*faster" \
	$C --max-regress 10 "$T/slow.json" "$T/a.json"
out=$($C --json --max-regress 10 "$T/a.json" "$T/slow.json" 2>&1)
if python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
s = {x["name"]: x for x in d["series"]}
p = s["parts.processing"]
assert d["kind"] == "compare" and d["schema"] == 1 and d["regressions"] == 1, d
assert p["regression"] and p["p50_direction"] == 1 and p["mwu_p_adj"] < 0.01, p
assert 25 < p["p50_change_pct"] < 35, p
assert not s["total"]["tested"] and not s["parts.queuing"]["regression"]
' <<<"$out"; then ok "--json: kind compare, the regression and its figures"
else not_ok "--json output" "$out"; fi
# JSON lines (irq --json with several intervals): documents are pooled.
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/a.json"))
q = d["parts"]["queuing"]["samples_ns"]
with open(t + "/lines.json", "w") as f:
    for half in (q[:500], q[500:]):
        e = {"schema": 1, "kind": "breakdown", "parts": {"queuing": {"samples_ns": half}}}
        f.write(json.dumps(e) + "\n")
with open(t + "/mixed.json", "w") as f:
    f.write(json.dumps({"schema": 1, "kind": "breakdown", "x": {"samples_ns": [1]}}) + "\n")
    f.write(json.dumps({"schema": 1, "kind": "irq", "x": {"samples_ns": [1]}}) + "\n")
PY
out=$($C --json "$T/lines.json" "$T/a.json" 2>&1)
if python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
s = {x["name"]: x for x in d["series"]}["parts.queuing"]
assert d["documents_a"] == 2 and d["documents_b"] == 1, d
assert s["count_a"] == s["count_b"] == 1000 and s["p50_a_ns"] == s["p50_b_ns"], s
assert s["mwu_p"] == 1 and s["verdict"] == "no significant change", s
' <<<"$out"; then ok "JSON lines: two documents pool into the same 1000 samples"
else not_ok "JSON lines pooled" "$out"; fi
expect_rc "JSON lines of different kinds: exit 2 naming the document" 2 \
	"mixed.json:2:1: document 2 is schema 1 kind 'irq', the first is schema 1 kind 'breakdown'" \
	$C "$T/mixed.json" "$T/mixed.json"
expect_rc "--only restricts the distributions" 0 "parts.queuing" $C --only parts.queuing "$T/a.json" "$T/slow.json"
out=$($C --only parts.queuing "$T/a.json" "$T/slow.json" 2>&1)
grep -q processing <<<"$out" && not_ok "--only hides the others" "$out" || ok "--only hides the others"

# 100,000 series joined by name, not by position: B lists them in reverse
# and changes one; every series pairs with its own (counts, p50s) and only
# that one moved.
python3 - "$T" <<'PY'
import json, sys
t, n = sys.argv[1], 100000
def cpu(i, base):
    return {"cpu": i, "count": 4, "p50_ns": base, "p99_ns": base + 300,
            "samples_ns": [base + i % 97 + k * 100 for k in range(4)]}
json.dump({"schema": 1, "kind": "irq", "cpus": [cpu(i, 1000) for i in range(n)]},
          open(t + "/big-a.json", "w"))
b = [cpu(i, 3000 if i == 77777 else 1000) for i in reversed(range(n))]
json.dump({"schema": 1, "kind": "irq", "cpus": b}, open(t + "/big-b.json", "w"))
PY
if out=$($C --json "$T/big-a.json" "$T/big-b.json" 2>&1) && python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
s = d["series"]
assert len(s) == 100000, len(s)
moved = [x["name"] for x in s if x["p50_change_pct"] != 0]
assert moved == ["cpus[cpu=77777]"], moved[:5]
assert all(x["count_a"] == x["count_b"] == 4 and (x["p50_a_ns"] == x["p50_b_ns"]) == (x["name"] != "cpus[cpu=77777]") for x in s)
' <<<"$out"; then ok "100,000 series: each joined with its own by name, only cpu 77777 moved"
else not_ok "100,000 series joined by name" "$(head -c 2000 <<<"$out")"; fi
done_testing
