#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fleet runs between the lab nodes: `probe --peers` and `breakdown --peers`
# measure every host of the list one after another (the second pair starts
# after the first finished: a responder is never probed twice at once), print
# one JSON line per pair (an unreachable host gets an ok:false line and exit
# status 1), and write one Prometheus file with a peer label per pair that
# `promtool check metrics` accepts and whose figures are the JSON's.
# For probe, node1's --forever responder answers under two names (192.0.2.2
# and "node1" in node0's /etc/hosts); a breakdown responder serves one
# session per run, so breakdown's list is node1 once. 192.0.2.3 is nobody.
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || skip_all "promtool not installed (Debian package prometheus)"
. "$(dirname "$0")/breakdown.inc"
stop_all() { touch "$W/stop"; lab_exec 1 "pkill -f '$B '; true" >/dev/null 2>&1; }
trap 'stop_all; bd_cleanup' EXIT
plan_none
PORT=19631
lab_exec 0 "grep -q ' node1\$' /etc/hosts || echo '192.0.2.2 node1' >> /etc/hosts"
printf '192.0.2.2\n# the same responder under another name\nnode1\n192.0.2.3   # nobody\n' > "$W/peers"
printf '192.0.2.2\n\n192.0.2.3   # nobody\n' > "$W/peers1"

# judge KIND JSONL PROM: the lines and the file agree; prints what is wrong.
judge() {
	python3 - "$@" <<'PYEOF'
import json, re, sys
kind, jl, prom = sys.argv[1:4]
lines = [json.loads(l) for l in open(jl) if l.strip()]
want_n = 3 if kind == "probe" else 2
assert len(lines) == want_n, "want %d JSON lines, got %d" % (want_n, len(lines))
good, bad = lines[:-1], lines[-1]
assert bad == {"schema": 1, "kind": kind, "peer": "192.0.2.3:%s" % sys.argv[4], "ok": False,
               "exit_status": 2}, bad
if kind == "probe":
    runs = [d.get("runs") or [d] for d in good]
    spans = [(r[0]["begin_ns"], r[-1]["finish_ns"]) for r in runs]
    p50 = [r[0]["summary"]["p50_ns"] for r in runs]
    assert all(d["count"] == int(sys.argv[5]) for d in good), [d["count"] for d in good]
    metric = r'latsplit_probe_seconds\{peer="([^"]+)",size="4",quantile="0.5"\} (\S+)'
else:
    spans = [(d["run"]["begin_ns"], d["run"]["finish_ns"]) for d in good]
    p50 = [d["total"]["p50_ns"] for d in good]
    metric = r'latsplit_breakdown_seconds\{peer="([^"]+)",part="total",quantile="0.5"\} (\S+)'
# One after another: the second pair began after the first had finished.
assert len(spans) < 2 or spans[0][1] <= spans[1][0], ("overlap", spans)
text = open(prom).read()
up = dict(re.findall(r'latsplit_%s_up\{peer="([^"]+)"\} (\S+)' % kind, text))
want = {"192.0.2.2:%s" % sys.argv[4]: "1", "192.0.2.3:%s" % sys.argv[4]: "0"}
if kind == "probe":
    want["node1:%s" % sys.argv[4]] = "1"
assert up == want, up
got = dict(re.findall(metric, text))
assert len(got) == len(good), got
for (peer, v), ref in zip(sorted(got.items(), key=lambda kv: kv[0] != "192.0.2.2:%s" % sys.argv[4]), p50):
    assert abs(float(v) * 1e9 - ref) <= 1e-6 * ref + 1, (peer, v, ref)
print("spans %s, p50 %s" % (spans, p50))
PYEOF
}

# probe --peers against a --forever responder.
lab_bg 1 "timeout 300 $B probe -p $PORT -u 20 --forever > $W/presp.log 2>&1" >/dev/null
for _ in $(seq 100); do grep -q listening "$W/presp.log" 2>/dev/null && break; sleep 0.2; done
lab_exec_t 300 0 "$B probe -p $PORT -u 20 -n 200 --connect-timeout 2 --peers $W/peers --json --prom $W/p.prom > $W/p.jsonl 2> $W/p.err"
rc=$?
[ "$rc" = 1 ] && grep -q "1 of 3 pairs failed" "$W/p.err" && ok "probe --peers: one host unreachable: exit 1, named" ||
	not_ok "probe --peers exit status" "rc=$rc" "$(cat "$W/p.err")"
if out=$(promtool check metrics < "$W/p.prom" 2>&1); then ok "probe --prom passes promtool check metrics"
else not_ok "probe --prom promtool" "$out"; fi
if out=$(judge probe "$W/p.jsonl" "$W/p.prom" $PORT 200 2>&1); then ok "probe --peers: JSON lines, sequential pairs, up/p50 per peer label: $out"
else not_ok "probe --peers lines and file agree" "$out" "$(cut -c1-300 "$W/p.jsonl")" "$(grep -v '^#' "$W/p.prom" | head -20)"; fi
lab_exec 1 "pkill -f '$B probe'; true"

# breakdown --peers: a responder serves one session per run, so a loop.
lab_bg 1 "$B breakdown -p $PORT -u 20 -b $BD_BACKEND --listen-timeout 120 > $W/bresp.log 2>&1" >/dev/null
for _ in $(seq 100); do grep -q listening "$W/bresp.log" 2>/dev/null && break; sleep 0.2; done
lab_exec_t 600 0 "$B breakdown -p $PORT -u 20 -b $BD_BACKEND -n 200 --connect-timeout 2 --peers $W/peers1 --json --prom $W/b.prom > $W/b.jsonl 2> $W/b.err"
rc=$?
[ "$rc" = 1 ] && grep -q "1 of 2 pairs failed" "$W/b.err" && ok "breakdown --peers: one host unreachable: exit 1, named" ||
	not_ok "breakdown --peers exit status" "rc=$rc" "$(cat "$W/b.err")"
if out=$(promtool check metrics < "$W/b.prom" 2>&1); then ok "breakdown --prom of a fleet run passes promtool check metrics"
else not_ok "breakdown --prom promtool" "$out"; fi
if out=$(judge breakdown "$W/b.jsonl" "$W/b.prom" $PORT 2>&1); then ok "breakdown --peers: JSON lines, sequential pairs, up/p50 per peer label: $out"
else not_ok "breakdown --peers lines and file agree" "$out" "$(cut -c1-300 "$W/b.jsonl")" "$(grep -v '^#' "$W/b.prom" | head -20)"; fi
n=$(grep -c '^latsplit_breakdown_level{peer=' "$W/b.prom")
[ "$n" = 1 ] && ok "a verdict (level) for the measured pair, none for the failed one" || not_ok "verdict per pair" "$n level samples"
check "dmesg clean on node0" dmesg_clean 0
check "dmesg clean on node1" dmesg_clean 1
done_testing
