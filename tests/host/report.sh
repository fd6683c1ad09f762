#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit report` on documents measured in the lab (tests/data/report/,
# made by make-docs.sh there): every report validates as HTML5 with inline
# SVG (html-validate and the W3C Nu checker, vnu-jar), names no external resource, and loads in Debian's
# chromium (playwright-core) without console errors or network requests,
# with the plots each kind should have, a screenshot that is not blank,
# other colours in dark mode and one column in print. The CDF's p50/p99
# markers stand at the documents' own p50_ns/p99_ns, the heatmap's cells
# carry the documents' mean_ns and its outlined cell is the verdict's CPU,
# and the A/B table has one row per distribution in both. Bad input (missing
# file, not JSON, a kind the report does not draw, an unwritable -o) exits
# 2 with a message naming the problem and leaves no file behind; so do
# breakdown --report on a responder and with --peers. Robustness, on
# documents built here from the stored ones: hostile stage, host, peer,
# counter and histogram names are text, never markup (no <img in the file,
# no element or dialog in chromium); null samples and an empty samples
# array exit 2 with no file; one sample and three samples draw without
# nan/inf (whole-number sample ticks); a fleet file is one section per pair
# and its failed pair is shown, exit 0; irq's warning messages are listed;
# five A/B results are each told apart in the CDF and its legend; print
# keeps the light palette under a dark preference. Every Python oracle must
# exit 0 or the test fails.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "checks the reports against the documents"

WEB=$LS_TOP/tests/web
D=$LS_TOP/tests/data/report
command -v node >/dev/null || { not_ok "node installed" "run 'make deps' (nodejs)"; done_testing; }
command -v chromium >/dev/null || { not_ok "chromium installed" "run 'make deps' (chromium)"; done_testing; }
command -v java >/dev/null || { not_ok "java installed" "run 'make deps' (openjdk-17-jre-headless)"; done_testing; }
if [ ! -d "$WEB/node_modules/playwright-core" ] || [ ! -d "$WEB/node_modules/html-validate" ] ||
   [ ! -f "$WEB/node_modules/vnu-jar/build/dist/vnu.jar" ]; then
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

# tap_lines FILE: each line "ok|DESC|DETAIL" or "not_ok|DESC|DETAIL" as an assertion.
tap_lines() {
	local st desc detail
	[ -s "$1" ] || { not_ok "the checker ran" "empty $1"; return; }
	while IFS='|' read -r st desc detail; do
		if [ "$st" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
	done <"$1"
}

# oracle NAME: the Python on stdin, run with $T, its lines as assertions; a
# non-zero exit (a crash part-way drops the assertions after it) fails.
oracle() {
	local rc
	python3 - "$T" >"$T/$1.txt" 2>"$T/$1.err"
	rc=$?
	tap_lines "$T/$1.txt"
	if [ "$rc" = 0 ]; then ok "oracle $1 ran to its end"
	else not_ok "oracle $1 ran to its end" "exit $rc" "$(tail -5 "$T/$1.err")"; fi
}

# Robustness inputs, from the stored documents.
oracle make-inputs <<'PY'
import copy, json, sys
T = sys.argv[1]
H = "<img src=x onerror=alert(1)>"
Q = "q\"'&<b>"
a = json.load(open(f"{T}/breakdown-a.json"))
b = json.load(open(f"{T}/breakdown-b.json"))
irq = [json.loads(l) for l in open(f"{T}/irq.json")]
probe = json.load(open(f"{T}/probe.json"))
def dump(name, d):
    json.dump(d, open(f"{T}/{name}.json", "w"))
    print(f"ok|input {name}.json written|")
h = copy.deepcopy(a)
h["stages"][0]["stage"] = H
h["stages"][1]["host"] = Q
h["inputs"]["peer"] = H
h["counters"][0]["name"] = H
h["counters"][0]["moved"] = True
h["verdict"]["next_why"] = H + Q
dump("hostile", h)
hi = copy.deepcopy(irq)
c0 = hi[0]["cpus"][0]
c0[H] = {"count": 3, "sum_ns": 3000, "p50_ns": 1000, "p99_ns": 1000, "max_ns": 1000,
         "samples_ns": [1000, 1000, 1000]}
hi[0]["warnings"] = [{"code": H, "message": Q}]
open(f"{T}/hostile-irq.json", "w").write("".join(json.dumps(x) + "\n" for x in hi))
print("ok|input hostile-irq.json written|")
n = copy.deepcopy(a)
n["total"]["samples_ns"][3] = None
dump("null", n)
def cut(d, k):
    d = copy.deepcopy(d)
    for s in [d["total"]] + [d["parts"][p] for p in ("transmission", "queuing", "processing")]:
        s["samples_ns"] = s["samples_ns"][:k]
        s["count"] = k
    return d
one = cut(a, 1)
one["stages"].append({"host": "prober", "cpu": 0, "stage": "zero_stage", "mean_ns": 0,
                      "window_total_ns": 0, "tail_mean_ns": 0, "samples": 1, "max_one_way_ns": 0})
one["inputs"]["iters"] = 1000000
one["inputs"]["qp"]["req_psn0"] = 16777215
dump("one", one)
dump("few", cut(a, 3))
dump("empty", cut(a, 0))
pb = copy.deepcopy(b)
pb["inputs"]["peer"] = "192.0.2.3:19631"
fail = {"schema": a["schema"], "kind": "breakdown", "peer": "192.0.2.9", "ok": False, "exit_status": 1}
open(f"{T}/fleet.json", "w").write("".join(json.dumps(x) + "\n" for x in (a, pb, fail)))
print("ok|input fleet.json written|")
w = copy.deepcopy(irq)
w[0]["warnings"] = [{"code": "irq_on_probe_cpu", "message": "IRQ 42 (eth0) fires on CPU 0, the probe's CPU"}]
open(f"{T}/irqw.json", "w").write("".join(json.dumps(x) + "\n" for x in w))
print("ok|input irqw.json written|")
for k in range(5):
    dump(f"ab5-{k}", a if k % 2 == 0 else b)
# two intervals whose NET_RX_wait sums (each finite) add up past the largest double
o = [copy.deepcopy(irq[0]) for _ in range(2)]
for x in o:
    x["cpus"][0]["NET_RX_wait"]["sum_ns"] = 1.5e308
open(f"{T}/overflow.json", "w").write("".join(json.dumps(x) + "\n" for x in o))
print("ok|input overflow.json written|")
# heatmaps past the old fixed sizes (8 hosts, 32 stages, 256 CPUs, 31-byte names)
def stages(d, cells, vh, vc, vs):
    d = copy.deepcopy(d)
    d["stages"] = [{"host": h, "cpu": c, "stage": s, "mean_ns": 100.0 + i, "window_total_ns": 0,
                    "tail_mean_ns": 0, "samples": 1, "max_one_way_ns": 0} for i, (h, c, s) in enumerate(cells)]
    d["verdict"]["cpu"] = {"host": vh, "cpu": vc, "stage": vs}
    return d
dump("wide", stages(a, [(f"h{h}", 0, f"s{k}") for h in range(10) for k in range(40)], "h9", 0, "s39"))
dump("cpus300", stages(a, [("prober", c, "napi_poll") for c in range(300)], "prober", 299, "napi_poll"))
L = "a_stage_name_longer_than_thirty_one_bytes_"
dump("longstage", stages(a, [("responder", 0, L + str(k)) for k in range(3)], "responder", 0, "napi_poll"))
# a control character in a stage name (and, below, a byte 0xff in a file name)
dump("ctl", stages(a, [("prober", 0, "bad\x01stage"), ("prober", 0, "ok")], "prober", 0, "ok"))
# plots without data: every sample 0, a probe without samples, a comparison of nothing
z = copy.deepcopy(a)
for sr in [z["total"]] + [z["parts"][p] for p in ("transmission", "queuing", "processing")]:
    sr["samples_ns"] = [0] * len(sr["samples_ns"])
dump("zero", z)
zp = copy.deepcopy(a)
zp["parts"]["queuing"]["samples_ns"] = [0] * len(zp["parts"]["queuing"]["samples_ns"])
dump("zpart", zp)
p0 = copy.deepcopy(probe)
p0["samples_ns"] = []
p0["count"] = 0
dump("probe0", p0)
c0 = json.load(open(f"{T}/compare.json"))
c0["series"] = []
dump("cempty", c0)
PY
cp "$T/ctl.json" "$T/bad$(printf '\xff')name.json"
report hostile "$T/hostile.json"
report hostile-irq "$T/hostile-irq.json"
report one "$T/one.json"
report few "$T/few.json"
report fleet "$T/fleet.json"
report irqw "$T/irqw.json"
report ab5 "$T"/ab5-{0,1,2,3,4}.json
report overflow "$T/overflow.json"
HTML+=(hostile hostile-irq one few fleet irqw ab5 overflow)
# other kinds among A/B results: each kind's 2..8 results still overlaid,
# the others alone, and the page and stderr say which and why
"$LS_BIN" report -o "$T/abmix.html" "$T/breakdown-a.json" "$T/breakdown-b.json" "$T/probe.json" 2>"$T/abmix.err"
check "abmix (two breakdowns and a probe): stderr says the probe is shown alone and why" \
	grep -q "probe.json: shown alone, not in an A/B overlay: the only probe result that can be overlaid" "$T/abmix.err"
cp "$T/probe.json" "$T/probe2.json"
"$LS_BIN" report -o "$T/abmix2.html" "$T/compare.json" "$T/breakdown-a.json" "$T/probe.json" \
	"$T/breakdown-b.json" "$T/probe2.json" 2>"$T/abmix2.err"
check "abmix2 (compare, two breakdowns, two probes): stderr says the compare is shown alone and why" \
	grep -q "compare.json: shown alone, not in an A/B overlay: a compare result is a comparison already" "$T/abmix2.err"
for k in 0 1 2 3; do cp "$T/ab5-$k.json" "$T/ab9-$k.json"; done
"$LS_BIN" report -o "$T/ab9.html" "$T"/ab5-{0,1,2,3,4}.json "$T"/ab9-{0,1,2,3}.json 2>"$T/ab9.err"
check "ab9 (nine breakdowns): stderr says each is shown alone, at most 8 are overlaid" \
	test "$(grep -c 'shown alone, not in an A/B overlay: 9 breakdown results: an A/B view overlays at most 8' "$T/ab9.err")" = 9
HTML+=(abmix abmix2 ab9)
report wide "$T/wide.json"
report cpus300 "$T/cpus300.json"
report longstage "$T/longstage.json"
report ctl "$T/bad$(printf '\xff')name.json"
HTML+=(wide cpus300 longstage ctl)
report zero "$T/zero.json"
report probe0 "$T/probe0.json"
report cempty "$T/cempty.json"
report zpart "$T/zpart.json"
HTML+=(zero probe0 cempty zpart)
check "overflow: the heatmap's caption says one value was not a finite number" \
	grep -q 'Note: 1 value of this plot was not a finite number' "$T/overflow.html"

expect_rc "null samples: exit 2, names the sample" 2 "null.json:1:[0-9]+: total: samples_ns\[3\] is null" \
	"$LS_BIN" report -o "$T/null.html" "$T/null.json"
check "null samples: no file written" test ! -e "$T/null.html"
expect_rc "empty samples_ns: exit 2, says there are no samples" 2 "empty.json: a breakdown without samples cannot be drawn" \
	"$LS_BIN" report -o "$T/empty.html" "$T/empty.json"
check "empty samples_ns: no file written" test ! -e "$T/empty.html"
out=$(grep -il '<img' $(printf "$T/%s.html " "${HTML[@]}"))
if [ -z "$out" ]; then ok "no report holds an unescaped <img (hostile names are text)"
else not_ok "no report holds an unescaped <img (hostile names are text)" "$out"; fi
out=$(grep -ioE '="[^"]*\b(nan|-?inf(inity)?)\b[^"]*"|>[^<]*\b(nan|inf)\b[^<]*<' $(printf "$T/%s.html " "${HTML[@]}") | head -5)
if [ -z "$out" ]; then ok "no report holds nan or inf in an attribute or a text"
else not_ok "no report holds nan or inf in an attribute or a text" "$out"; fi

# stdout: the same page as -o writes
"$LS_BIN" report "$T/breakdown-a.json" >"$T/stdout.html" 2>/dev/null
check "report without -o: the page on stdout, the same as -o writes" cmp -s "$T/stdout.html" "$T/breakdown.html"

out=$(cd "$WEB" && node_modules/.bin/html-validate --config .htmlvalidate.json \
	$(printf "$T/%s.html " "${HTML[@]}") 2>&1)
if [ -z "$out" ]; then ok "html-validate (recommended rules): every report is valid HTML5 with inline SVG"
else not_ok "html-validate (recommended rules): every report is valid HTML5 with inline SVG" "$out"; fi
out=$(java -jar "$WEB/node_modules/vnu-jar/build/dist/vnu.jar" --errors-only \
	$(printf "$T/%s.html " "${HTML[@]}") 2>&1)
rc=$?
if [ "$rc" = 0 ] && [ -z "$out" ]; then ok "W3C Nu checker (vnu-jar): no error in any report (HTML, SVG and CSS)"
else not_ok "W3C Nu checker (vnu-jar): no error in any report (HTML, SVG and CSS)" "rc=$rc" "$out"; fi
# src= and href= as attribute names, quoted values left out: the hostile
# documents' names hold "<img src=x" as escaped text, in text and in values
out=$(grep -noE 'https?:|url\(|@import' $(printf "$T/%s.html " "${HTML[@]}")
	for f in "${HTML[@]}"; do
		sed -E 's/"[^"]*"/""/g' "$T/$f.html" | grep -noE '<[^>]*[[:space:]](src|href)=' | sed "s|^|$f.html:|"
	done)
if [ -z "$out" ]; then ok "no external reference (http:, https:, src= or href= in a tag, url(, @import)"
else not_ok "no external reference (http:, https:, src= or href= in a tag, url(, @import)" "$out"; fi

node "$WEB/browse.js" --shot "$T" $(printf "$T/%s.html " "${HTML[@]}") >"$T/browse.jsonl" 2>"$T/browse.err"
rc=$?
if [ "$rc" = 0 ]; then ok "chromium loaded every report (playwright-core)"
else not_ok "chromium loaded every report (playwright-core)" "$(cat "$T/browse.err")"; fi

# The oracle: the JSON documents themselves (their summaries, cells and verdict).
oracle verdicts <<'PY'
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

# every report: nothing injected, no dialog, print keeps the light palette under a dark preference
for name, r in res.items():
    out(not r["injected"] and not r["dialogs"], f"{name}: no element or dialog injected", (r["injected"], r["dialogs"]))
    out(r["printDark"]["bg"] == r["light"]["bg"] and r["printDark"]["line"] == r["light"]["line"] and
        r["printDark"]["sw"] == r["light"]["sw"],
        f"{name}: printing with a dark preference uses the light palette (plot lines, legend)", (r["printDark"], r["light"]))
    if name in ("hostile", "hostile-irq", "one", "few", "fleet", "irqw", "ab5", "overflow"):
        out(not r["errors"] and not r["requests"], f"{name}: no console errors or requests", r["errors"])
# hostile names are shown as text
H = "<img src=x onerror=alert(1)>"
Q = "q\"'&<b>"
txt = " ".join(s["text"] for s in res["hostile"]["sections"])
out(H in txt and Q in txt, "hostile: the hostile names are shown as text", txt[:200])
txt = " ".join(s["text"] for s in res["hostile-irq"]["sections"])
out(H in txt, "hostile-irq: the hostile histogram key and warning code are shown as text", txt[:200])
# a fleet file: one section per pair, the failed pair shown, no A/B
sec = res["fleet"]["sections"]
out(len(sec) == 3 and all(s["docs"] == 1 for s in sec) and res["fleet"]["tables"] == 0,
    "fleet: one section per pair, no A/B overlay", [(s["title"], s["docs"]) for s in sec])
out(len(sec) == 3 and [s["failed"] for s in sec] == [False, False, True] and "192.0.2.9" in sec[2]["title"] and
    "exited with status 1" in sec[2]["text"], "fleet: the failed pair is a section naming its peer and exit status",
    sec[-1:] and sec[-1]["text"][:300])
out(len(sec) == 3 and "192.0.2.3" in sec[1]["title"], "fleet: each pair's section names its peer", [s["title"] for s in sec])
# irq warnings: their message
out(res["irqw"]["warnings"] == ["irq_on_probe_cpu: IRQ 42 (eth0) fires on CPU 0, the probe's CPU"],
    "irqw: the warning's code and message are listed", res["irqw"]["warnings"])
# five A/B results: every line and legend entry told apart
c = res["ab5"]["cdfs"][0]
lines = {(l["stroke"], l["dash"]) for l in c["lines"]}
legend = {(l["color"], l["bg"]) for l in c["legend"]}
labels = [l["label"].split(" (")[0] for l in c["legend"]]
want = [f"{k}: {p}" for k in "ABCDE" for p in ("total", "transmission", "queuing", "processing")]
out(len(c["lines"]) == 20 and len(lines) == 20, "ab5: the CDF's 20 lines differ in colour or dash", sorted(lines))
out(labels == want and len(legend) == 20, "ab5: the legend lists all 20 lines of A..E, each swatch different",
    (labels, len(legend)))
m = marks(res["ab5"], "E: total", 4)
out(close(m.get(0.5), doc["breakdown-a"]["total"]["p50_ns"]) and close(m.get(0.999), doc["breakdown-a"]["total"]["p999_ns"]),
    "ab5: E's total markers carry document 4 and stand at E's (breakdown-a's) p50_ns and p999_ns", m)
out(res["ab5"]["tables"] == 4, "ab5: a significance table for each of B..E against A", res["ab5"]["tables"])
# plots without data keep their title, axes with units and caption
for name in ("one", "few", "zero", "probe0", "cempty"):
    r = res[name]
    out(r["titled"] and r["labelled"], f"{name}: every plot has a title, an axis label and a caption")
# other kinds among the results: each kind's group overlaid, the rest alone and listed
sec = res["abmix"]["sections"]
out([(s["kind"], s["docs"]) for s in sec] == [("breakdown", 2), ("probe", 1)] and res["abmix"]["tables"] == 1,
    "abmix: the two breakdowns are one A/B section with its significance table, the probe alone",
    ([(s["kind"], s["docs"]) for s in sec], res["abmix"]["tables"]))
out(len(res["abmix"]["alone"]) == 1 and res["abmix"]["alone"][0].endswith(
    "probe.json: the only probe result that can be overlaid"), "abmix: the page says the probe is alone and why",
    res["abmix"]["alone"])
sec = res["abmix2"]["sections"]
out([(s["kind"], s["docs"]) for s in sec] == [("compare", 1), ("breakdown", 2), ("probe", 2)] and
    res["abmix2"]["tables"] == 2, "abmix2: compare alone, then the breakdowns' A/B and the probes' A/B (a table each)",
    ([(s["kind"], s["docs"]) for s in sec], res["abmix2"]["tables"]))
out(len(res["abmix2"]["alone"]) == 1 and "compare.json: a compare result" in res["abmix2"]["alone"][0],
    "abmix2: the page lists the compare as alone, and nothing else", res["abmix2"]["alone"])
out(len(res["ab9"]["sections"]) == 9 and res["ab9"]["tables"] == 0 and len(res["ab9"]["alone"]) == 9 and
    all(a.endswith("9 breakdown results: an A/B view overlays at most 8") for a in res["ab9"]["alone"]),
    "ab9: nine sections, no overlay, the page says why for each", (len(res["ab9"]["sections"]), res["ab9"]["alone"][:1]))
for n in ("ab", "ab5", "fleet", "mixed", "breakdown"):
    out(res[n]["alone"] == [], f"{n}: no 'shown alone' list (all overlaid, or none could be)", res[n]["alone"])
PY

# heatmap cells and A/B rows in the page text, against the documents
oracle verdicts2 <<'PY'
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
# one sample: a 0 cell is the lightest; whole numbers exact in the facts
one = open(f"{T}/one.html").read()
ops = {s: float(o) for o, s in re.findall(r'<rect class="cell[^"]*"[^>]*fill-opacity="([^"]*)"[^>]*data-stage="([^"]*)"', one)}
others = [o for s, o in ops.items() if s != "zero_stage"]
print(("ok" if "zero_stage" in ops and others and ops["zero_stage"] < min(others) else "not_ok") +
      f"|one: a heatmap cell of 0 is lighter than every other cell|{ops}")
print(("ok" if "<td>1000000</td>" in one and "<td>16777215</td>" in one else "not_ok") +
      "|one: whole numbers in the facts are printed with every digit (iters 1000000, req_psn0 16777215)|")
# three samples: the sample-number axis has whole-number ticks
few = open(f"{T}/few.html").read()
fig = re.search(r'<figure class="plot" data-plot="time">.*?</figure>', few, re.S)
ticks = re.findall(r'<text class="tick" x="[^"]*" y="[^"]*" text-anchor="middle">([^<]*)</text>', fig.group(0)) if fig else []
print(("ok" if ticks and all(re.fullmatch(r"\d+", t) for t in ticks) and "2" in ticks else "not_ok") +
      f"|few: three samples get sample ticks 0, 1, 2 only|{ticks}")
# five A/B results: each result's stacked bars look different (opacity, then outline)
ab5 = open(f"{T}/ab5.html").read()
looks = {}
for cls, bar in re.findall(r'<rect class="seg s1 ([^"]*)"[^>]*data-bar="p50 ([A-E])"', ab5):
    looks[bar] = cls
print(("ok" if len(looks) == 5 and len(set(looks.values())) == 5 else "not_ok") +
      f"|ab5: the stacked bars of A..E each have their own look|{looks}")

# plots without data say why: no samples, one sample (drawn as a dot), every sample 0
def nodata(name, plot):
    pg = open(f"{T}/{name}.html").read()
    f = re.search(r'<figure class="plot" data-plot="%s">(.*?)</figure>' % plot, pg, re.S)
    g = f.group(1) if f else ""
    return re.findall(r'<text class="nodata"[^>]*>([^<]*)</text>', g), len(re.findall(r'<circle class="dot ', g)), g
n = len(json.load(open(f"{T}/zero.json"))["total"]["samples_ns"])
for plot, want in (("cdf", [f"all {n} samples are 0 ns: a log axis has no place for 0"]),
                   ("stack", ["every part is 0 ns at every percentile"]), ("time", ["every sample is 0 ns"])):
    got, _, g = nodata("zero", plot)
    print(("ok" if got == want and 'class="label"' in g and "(ns" in g else "not_ok") +
          f"|zero: the {plot} plot keeps its axes in ns and says {want}|{got}")
for plot in ("cdf", "time"):
    got, _, g = nodata("probe0", plot)
    print(("ok" if got == ["no samples"] and 'class="label"' in g else "not_ok") +
          f"|probe0: the {plot} plot keeps its axes and says there are no samples|{got}")
got, dots, g = nodata("one", "time")
print(("ok" if got == [] and dots == 4 else "not_ok") +
      f"|one: one sample is a time plot with a dot per line, no 'no data' message|{got} {dots} dots")
got, _, g = nodata("zpart", "cdf")
zl = re.findall(r'<text class="tick zero-lines"[^>]*>([^<]*)</text>', g)
print(("ok" if zl == ["not drawn (every sample 0 ns): queuing"] and got == [] and
       'data-series="total"' in g else "not_ok") +
      f"|zpart: the CDF draws the other lines and names the all-zero part it cannot draw|{zl} {got}")
got, _, g = nodata("cempty", "changes")
print(("ok" if got == ["no distributions in this comparison"] and "change of B against A (%)" in g else "not_ok") +
      f"|cempty: the changes plot keeps its axis and says the comparison is empty|{got}")

# heatmaps: every stages[] entry a cell, keyed on full names, the verdict's outlined
def cells(name):
    pg = open(f"{T}/{name}.html").read()
    return pg, re.findall(r'<rect class="cell( verdict)?" x="([^"]*)"[^>]*data-host="([^"]*)" data-cpu="(\d+)" data-stage="([^"]*)"', pg)
for name, n, v in (("wide", 400, ("h9", "0", "s39")), ("cpus300", 300, ("prober", "299", "napi_poll"))):
    pg, c = cells(name)
    got = {(h, cpu, st) for _, _, h, cpu, st in c}
    ver = [(h, cpu, st) for vv, _, h, cpu, st in c if vv]
    print(("ok" if len(c) == n and len(got) == n and ver == [v] else "not_ok") +
          f"|{name}: all {n} cells drawn, the verdict's cell {v} outlined|{len(c)} cells, {len(got)} distinct, outlined {ver}")
    print(("ok" if "(outlined in the heatmap)" in pg else "not_ok") + f"|{name}: the verdict text says its cell is outlined|")
pg, c = cells("longstage")
L = "a_stage_name_longer_than_thirty_one_bytes_"
print(("ok" if sorted(st for *_, st in c) == [L + "0", L + "1", L + "2"] and len({x for _, x, *_ in c}) == 3 else "not_ok") +
      f"|longstage: three stages sharing 42 bytes are three columns, keyed on their full names|{[(x, st) for _, x, _, _, st in c]}")
print(("ok" if "stage napi_poll (not in the heatmap: no stages entry for it)" in pg and "(outlined in the heatmap)" not in pg
       and not any(vv for vv, *_ in c) else "not_ok") +
      "|longstage: a verdict CPU with no stages entry is not claimed to be outlined|")
ctl = open(f"{T}/ctl.html", "rb").read()
print(("ok" if b"\x01" not in ctl and b"\xff" not in ctl and "bad\ufffdstage".encode() in ctl and
       "bad\ufffdname.json".encode() in ctl else "not_ok") +
      "|ctl: a control character (stage) and a byte 0xff (file name) are shown as U+FFFD|")
PY

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
python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))
a["schema"] = 99
json.dump(a, open(sys.argv[2], "w"))
del a["schema"]
json.dump(a, open(sys.argv[3], "w"))' "$T/breakdown-a.json" "$T/schema99.json" "$T/noschema.json"
expect_rc "schema 99: exit 2, the schema is named" 2 "schema99.json: schema 99: this latsplit reads schema 1 documents" \
	$R "$T/schema99.json"
out=$($R "$T/noschema.json" 2>&1)
if [ "$(grep -o 'noschema.json' <<<"$out" | wc -l)" = 1 ] && grep -q 'no numeric "schema"' <<<"$out"; then
	ok "no schema: the message names the file once and says what is missing"
else not_ok "no schema: the message names the file once and says what is missing" "$out"; fi
check "bad schemas: the old output is untouched" no_file_left
expect_rc "a bad file after a good one: exit 2" 2 "bad.json" $R "$T/breakdown-a.json" "$T/bad.json"
check "after a bad file: the old output is untouched" no_file_left
expect_rc "unwritable -o (no such directory): exit 2" 2 "create temporary file for $T/no/dir/r.html" \
	"$LS_BIN" report -o "$T/no/dir/r.html" "$T/breakdown-a.json"
check "unwritable -o: nothing created" test ! -e "$T/no"

# -o on what is not a plain new file: a device or FIFO is written to, never
# replaced; a symlink's target is replaced and the link stays; an existing
# file keeps its mode; an input file, a directory and "" are refused.
O=$T/o; mkdir -p "$O"
if mknod "$O/fakenull" c 1 3 2>/dev/null; then
	check "-o a character device (a copy of /dev/null): exit 0" \
		"$LS_BIN" report -o "$O/fakenull" "$T/breakdown-a.json"
	check "-o a character device: still that device, not replaced by a file" \
		test -c "$O/fakenull"
	expect_rc "-o a character device, bad input: exit 2" 2 "bad.json:1:1" \
		"$LS_BIN" report -o "$O/fakenull" "$T/bad.json"
	check "-o a character device, bad input: still that device" test -c "$O/fakenull"
else
	skip "-o a character device is written to, not replaced" "mknod not permitted here"
fi
mkfifo "$O/fifo"
timeout 30 cat "$O/fifo" >"$O/fifo.out" & reader=$!
check "-o a FIFO: exit 0" timeout 20 "$LS_BIN" report -o "$O/fifo" "$T/breakdown-a.json"
wait "$reader"
check "-o a FIFO: still a FIFO, its reader got the whole page" \
	bash -c "test -p '$O/fifo' && cmp -s '$O/fifo.out' '$T/breakdown.html'"
# as /dev/stdout is, but in $O: a regression replaces this link, not /dev's
ln -s /proc/self/fd/1 "$O/stdout"
"$LS_BIN" report -o "$O/stdout" "$T/breakdown-a.json" 2>/dev/null | cat >"$O/stdout.out"
check "-o a link to /proc/self/fd/1 (as /dev/stdout) into a pipe: the whole page, the link stays" \
	bash -c "test -L '$O/stdout' && cmp -s '$O/stdout.out' '$T/breakdown.html'"
echo old >"$O/real.html"; ln -s real.html "$O/link.html"
check "-o a symlink: exit 0" "$LS_BIN" report -o "$O/link.html" "$T/breakdown-a.json"
check "-o a symlink: the link stays, its target holds the page" \
	bash -c "test -L '$O/link.html' && cmp -s '$O/real.html' '$T/breakdown.html'"
mkdir "$O/sub"; ln -s sub/new.html "$O/dangling.html"
check "-o a dangling symlink: the file it names is created with the page" \
	bash -c "'$LS_BIN' report -o '$O/dangling.html' '$T/breakdown-a.json' 2>/dev/null &&
		test -L '$O/dangling.html' && cmp -s '$O/sub/new.html' '$T/breakdown.html'"
echo old >"$O/mode.html"; chmod 600 "$O/mode.html"
"$LS_BIN" report -o "$O/mode.html" "$T/breakdown-a.json" 2>/dev/null
check "-o an existing file of mode 600: replaced, mode still 600" \
	bash -c "[ \"\$(stat -c %a '$O/mode.html')\" = 600 ] && cmp -s '$O/mode.html' '$T/breakdown.html'"
cp "$T/breakdown-a.json" "$O/in.json"; ln -s in.json "$O/in-link.json"
expect_rc "-o an input file: exit 2, refused" 2 "-o $O/in.json is the input $O/in.json: refusing" \
	"$LS_BIN" report -o "$O/in.json" "$T/breakdown-b.json" "$O/in.json"
expect_rc "-o a symlink to an input file: exit 2, refused" 2 "is the input $O/in.json: refusing" \
	"$LS_BIN" report -o "$O/in-link.json" "$O/in.json"
check "-o an input file: the input is untouched" cmp -s "$O/in.json" "$T/breakdown-a.json"
expect_rc "-o \"\": exit 2, the name is empty" 2 "the output file name is empty" \
	"$LS_BIN" report -o "" "$T/breakdown-a.json"
expect_rc "-o a directory: exit 2, says so" 2 "$O is a directory, not a file to write" \
	"$LS_BIN" report -o "$O" "$T/breakdown-a.json"
out=$(ls -A "$O" "$O/sub" | grep -E '\.[A-Za-z0-9]{6}$')
if [ -z "$out" ]; then ok "-o: no temporary file (NAME.XXXXXX) left beside any target"
else not_ok "-o: no temporary file (NAME.XXXXXX) left beside any target" "$out"; fi

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
