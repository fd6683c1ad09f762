#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit report` on documents measured in the lab (tests/data/report/,
# made by make-docs.sh there): every report validates as HTML5 with inline
# SVG (html-validate), names no external resource, and loads in Debian's
# chromium (playwright-core) without console errors or network requests,
# with the plots each kind should have, a screenshot that is not blank,
# other colours in dark mode and one column in print. The CDF's p50/p99
# markers stand at the documents' own p50_ns/p99_ns, the heatmap's cells
# carry the documents' mean_ns and its outlined cell is the verdict's CPU,
# and the A/B table has one row per distribution in both. Bad input (missing
# file, not JSON, a kind the report does not draw, an unwritable -o) exits
# 2 with a message naming the problem and leaves no file behind; so do
# breakdown --report on a responder and with --peers.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "checks the reports against the documents"

WEB=$LS_TOP/tests/web
D=$LS_TOP/tests/data/report
command -v node >/dev/null || { not_ok "node installed" "run 'make deps' (nodejs)"; done_testing; }
command -v chromium >/dev/null || { not_ok "chromium installed" "run 'make deps' (chromium)"; done_testing; }
if [ ! -d "$WEB/node_modules/playwright-core" ] || [ ! -d "$WEB/node_modules/html-validate" ]; then
	make -C "$LS_TOP" --no-print-directory web-deps >"$T/npm.log" 2>&1 ||
		{ not_ok "npm packages installed (make web-deps)" "$(tail -5 "$T/npm.log")"; done_testing; }
fi

for f in breakdown-a breakdown-b probe irq; do
	gzip -dc "$D/$f.json.gz" >"$T/$f.json"
done
"$LS_BIN" compare --json "$T/breakdown-a.json" "$T/breakdown-b.json" >"$T/compare.json"
check "compare --json of the two stored breakdowns" test -s "$T/compare.json"

# report NAME FILE...: $T/NAME.html from the files.
report() {
	local name=$1 out rc; shift
	out=$("$LS_BIN" report -o "$T/$name.html" "$@" 2>&1); rc=$?
	if [ "$rc" = 0 ] && [ -s "$T/$name.html" ]; then ok "report $name: exit 0, file written"
	else not_ok "report $name: exit 0, file written" "rc=$rc" "$out"; fi
}
report breakdown "$T/breakdown-a.json"
report ab "$T/breakdown-a.json" "$T/breakdown-b.json"
report probe "$T/probe.json"
report irq "$T/irq.json"
report compare "$T/compare.json"
report mixed "$T/breakdown-a.json" "$T/probe.json" "$T/irq.json" "$T/compare.json"
HTML=(breakdown ab probe irq compare mixed)

# stdout: the same page as -o writes
"$LS_BIN" report "$T/breakdown-a.json" >"$T/stdout.html" 2>/dev/null
check "report without -o: the page on stdout, the same as -o writes" cmp -s "$T/stdout.html" "$T/breakdown.html"

out=$(cd "$WEB" && node_modules/.bin/html-validate --config .htmlvalidate.json \
	$(printf "$T/%s.html " "${HTML[@]}") 2>&1)
if [ -z "$out" ]; then ok "html-validate (recommended rules): every report is valid HTML5 with inline SVG"
else not_ok "html-validate (recommended rules): every report is valid HTML5 with inline SVG" "$out"; fi
out=$(grep -noE 'https?:|src=|href=|url\(|@import' $(printf "$T/%s.html " "${HTML[@]}"))
if [ -z "$out" ]; then ok "no external reference (http:, https:, src=, href=, url(, @import)"
else not_ok "no external reference (http:, https:, src=, href=, url(, @import)" "$out"; fi

node "$WEB/browse.js" --shot "$T" $(printf "$T/%s.html " "${HTML[@]}") >"$T/browse.jsonl" 2>"$T/browse.err"
rc=$?
if [ "$rc" = 0 ]; then ok "chromium loaded every report (playwright-core)"
else not_ok "chromium loaded every report (playwright-core)" "$(cat "$T/browse.err")"; fi

# tap_lines FILE: each line "ok|DESC|DETAIL" or "not_ok|DESC|DETAIL" as an assertion.
tap_lines() {
	local st desc detail
	[ -s "$1" ] || { not_ok "the checker ran" "empty $1"; return; }
	while IFS='|' read -r st desc detail; do
		if [ "$st" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
	done <"$1"
}

# The oracle: the JSON documents themselves (their summaries, cells and verdict).
python3 - "$T" >"$T/verdicts.txt" <<'PY' 
import json, sys
T = sys.argv[1]
res = {}
for line in open(f"{T}/browse.jsonl"):
    r = json.loads(line)
    res[r["file"].rsplit("/", 1)[-1][:-5]] = r
doc = {n: json.load(open(f"{T}/{n}.json")) for n in ("breakdown-a", "breakdown-b", "probe", "irq", "compare")}

def out(ok, desc, detail=""):
    print(("ok" if ok else "not_ok") + "|" + desc + "|" + str(detail).replace("\n", " "))

want = {"breakdown": {"cdf": 1, "stack": 1, "heatmap": 1, "time": 1},
        "ab": {"cdf": 1, "stack": 1, "heatmap": 2, "time": 2},
        "probe": {"cdf": 1, "time": 1}, "irq": {"cdf": 1, "heatmap": 1},
        "compare": {"changes": 1},
        "mixed": {"cdf": 3, "stack": 1, "heatmap": 2, "time": 2, "changes": 1}}
for name, plots in want.items():
    r = res.get(name)
    if not r:
        out(False, f"{name}: loaded", "no result")
        continue
    out(not r["errors"], f"{name}: no console errors", r["errors"])
    out(not r["requests"], f"{name}: no network requests", r["requests"])
    out(r["plots"] == plots and r["svgs"] == sum(plots.values()),
        f"{name}: plots in the DOM {plots}", (r["plots"], r["svgs"]))
    out(r["titled"] and r["labelled"], f"{name}: every plot has a title, an axis label and a caption")
    out(r["shot"]["colours"] > 50, f"{name}: screenshot not blank (> 50 colours)", r["shot"])
    out(r["light"]["bg"] != r["dark"]["bg"] and r["light"]["fg"] != r["dark"]["fg"] and
        (r["light"]["line"] is None or r["light"]["line"] != r["dark"]["line"]),
        f"{name}: prefers-color-scheme dark changes background, text and plot lines", (r["light"], r["dark"]))
    out(len(r["print"].split()) == 1, f"{name}: print media lays out one column", r["print"])

def marks(r, series, doc=0):
    return {m["q"]: m["value"] for m in r["marks"] if m["series"] == series and m["doc"] == doc}

def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))

# CDF markers against the documents' own summaries
bd = doc["breakdown-a"]
for s, j in [("total", bd["total"])] + [(p, bd["parts"][p]) for p in ("transmission", "queuing", "processing")]:
    m = marks(res["breakdown"], s)
    out(close(m.get(0.5), j["p50_ns"]) and close(m.get(0.99), j["p99_ns"]) and close(m.get(0.999), j["p999_ns"]),
        f"breakdown: CDF markers of {s} at the document's p50_ns, p99_ns and p999_ns", (m, j["p50_ns"]))
for k, n in ((0, "breakdown-a"), (1, "breakdown-b")):
    m = marks(res["ab"], ("A: " if k == 0 else "B: ") + "total", k)
    out(close(m.get(0.5), doc[n]["total"]["p50_ns"]) and close(m.get(0.999), doc[n]["total"]["p999_ns"]),
        f"ab: {'AB'[k]}'s total markers at {n}'s p50_ns and p999_ns", m)
m = marks(res["probe"], "one-way latency")
out(close(m.get(0.5), doc["probe"]["summary"]["p50_ns"]) and close(m.get(0.99), doc["probe"]["summary"]["p99_ns"]),
    "probe: CDF markers at summary.p50_ns and p99_ns", m)

# heatmap: the verdict's cell, outlined
v = bd["verdict"]["cpu"]
got = res["breakdown"]["verdict"]
out(got == [{"host": v["host"], "cpu": v["cpu"], "stage": v["stage"]}],
    "breakdown: the one outlined heatmap cell is the verdict's host, CPU and stage", (got, v))
out(len(res["ab"]["verdict"]) == 2, "ab: each document's heatmap outlines its verdict's cell", res["ab"]["verdict"])
out(res["ab"]["tables"] == 1 and res["breakdown"]["tables"] == 0,
    "A/B significance table in the A/B report only", (res["ab"]["tables"], res["breakdown"]["tables"]))
PY
tap_lines "$T/verdicts.txt"

# heatmap cells and A/B rows in the page text, against the documents
python3 - "$T" >"$T/verdicts2.txt" <<'PY' 
import json, re, sys, html
T = sys.argv[1]
page = open(f"{T}/breakdown.html").read()
bd = json.load(open(f"{T}/breakdown-a.json"))
cells = re.findall(r'<rect class="cell[^"]*"[^>]*data-host="([^"]*)" data-cpu="(\d+)" data-stage="([^"]*)" data-value="([^"]*)"', page)
got = sorted((h, int(c), s, float(v)) for h, c, s, v in cells)
want = sorted((c["host"], c["cpu"], c["stage"], c["mean_ns"]) for c in bd["stages"])
ok = len(got) == len(want) and all(g[:3] == w[:3] and abs(g[3] - w[3]) <= 1e-9 * w[3] for g, w in zip(got, want))
print(("ok" if ok else "not_ok") + f"|breakdown: one heatmap cell per stages[] entry ({len(want)}), value = its mean_ns|{got[:3]} vs {want[:3]}")
ab = open(f"{T}/ab.html").read()
rows = re.findall(r'<tr data-series="([^"]*)">', ab)
legend = dict(re.findall(r'B: (total|transmission|queuing|processing) \(vs A: ([^)<]*)\)', ab))
cmp = json.load(open(f"{T}/compare.json"))
names = [s["name"] for s in cmp["series"]]
print(("ok" if rows == names else "not_ok") + f"|ab: the significance table has compare's distributions, in its order|{rows} vs {names}")
want = {n.split(".")[-1]: s["verdict"] for s in cmp["series"] for n in [s["name"]]
        if n in ("total", "parts.transmission", "parts.queuing", "parts.processing")}
print(("ok" if legend == want and len(want) == 4 else "not_ok") +
      f"|ab: the CDF legend gives B's verdict against A per distribution, as latsplit compare does|{legend} vs {want}")
# stacked bars: the parts' means over the samples ranked within 0.5 % of n
# around each percentile of the total (narrowed to stay centred at the top)
t = bd["total"]["samples_ns"]
parts = {p: bd["parts"][p]["samples_ns"] for p in ("transmission", "queuing", "processing")}
n = len(t)
order = sorted(range(n), key=lambda i: (t[i], i))
segs = {(b, p): float(v) for b, p, v in re.findall(r'data-bar="([^"]*)" data-part="([^"]*)" data-value="([^"]*)"', page)}
bad = []
for q, lab in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")):
    r = max(int(-(-q * n // 1)) - 1, 0)
    w = min(n // 200, n - 1 - r)
    win = order[r - w:r + w + 1]
    for p, v in parts.items():
        want = sum(v[i] for i in win) / len(win)
        got = segs.get((lab, p))
        if got is None or abs(got - want) > 1e-6 * max(1.0, want):
            bad.append((lab, p, got, want))
print(("ok" if not bad and len(segs) == 12 else "not_ok") + f"|breakdown: stacked bars hold the mean parts of the samples around p50/p90/p99/p99.9|{bad[:3]} {len(segs)}")
moved = sum(1 for c in bd["counters"] if c.get("moved"))
m = re.search(r"(\d+) of (\d+) counters moved", page)
print(("ok" if m and int(m.group(1)) == moved and int(m.group(2)) == len(bd["counters"]) else "not_ok") +
      f"|breakdown: the counters that moved ({moved} of {len(bd['counters'])}) are listed|{m and m.group(0)}")
PY
tap_lines "$T/verdicts2.txt"

# Bad input: exit 2, a message naming the problem, no file left (an old one kept).
echo 'OLD' >"$T/keep.html"
no_file_left() { [ "$(cat "$T/keep.html")" = OLD ] && ! ls "$T"/keep.html.* >/dev/null 2>&1; }
printf 'not json\n' >"$T/bad.json"
"$LS_BIN" model --json >"$T/model.json"
R="$LS_BIN report -o $T/keep.html"
expect_rc "missing file: exit 2, names it" 2 "open $T/nope.json: No such file" $R "$T/nope.json"
check "missing file: the old output is untouched, no temporary file" no_file_left
expect_rc "not JSON: exit 2 with file:line:col" 2 "bad.json:1:1" $R "$T/bad.json"
check "not JSON: the old output is untouched" no_file_left
expect_rc "a model document: exit 2, the kind cannot be reported" 2 "model.json: a 'model' document cannot be reported" $R "$T/model.json"
expect_rc "a bad file after a good one: exit 2" 2 "bad.json" $R "$T/breakdown-a.json" "$T/bad.json"
check "after a bad file: the old output is untouched" no_file_left
expect_rc "unwritable -o (no such directory): exit 2" 2 "create temporary file for $T/no/dir/r.html" \
	"$LS_BIN" report -o "$T/no/dir/r.html" "$T/breakdown-a.json"
check "unwritable -o: nothing created" test ! -e "$T/no"
expect_rc "breakdown --report on a responder: exit 2, belongs to the prober" 2 \
	"--report and --baseline belong to the prober" "$LS_BIN" breakdown --insecure --report "$T/r.html"
echo 192.0.2.2 >"$T/peers"
expect_rc "breakdown --report with --peers: exit 2, one pair only" 2 \
	"--report and --baseline are of one pair: not with --peers" \
	"$LS_BIN" breakdown --peers "$T/peers" --report "$T/r.html"
check "breakdown --report refused: no file" test ! -e "$T/r.html"
expect_rc "no input: usage error" 2 "need at least one RESULT.json" "$LS_BIN" report
expect_rc "--help: exit 0 with the option list" 0 "--output FILE" "$LS_BIN" report --help
done_testing
