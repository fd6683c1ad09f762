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

# fleet_run CMD T SECS RESPONDER PEERS FAILED PROM_DESC [JUDGE ARGS...]: a
# fleet run of `latsplit CMD --peers PEERS` on node0 (within SECS; output
# in $W/T.jsonl, $W/T.prom, $W/T.err) against RESPONDER (a command line
# started on node1, its log in $W/Tresp.log): it exits 1 naming FAILED
# ("1 of N pairs failed"), its Prometheus file passes promtool (ok
# PROM_DESC), and judge CMD agrees with the JSON lines and the file.
fleet_run() {
	local cmd=$1 t=$2 secs=$3 resp=$4 peers=$5 failed=$6 prom_desc=$7 rc out
	shift 7
	lab_bg 1 "$resp > $W/${t}resp.log 2>&1" >/dev/null
	wait_listening "$W/${t}resp.log" 100 0.2
	lab_exec_t "$secs" 0 "$B $cmd -n 200 --connect-timeout 2 --peers $W/$peers --json --prom $W/$t.prom > $W/$t.jsonl 2> $W/$t.err"
	rc=$?
	[ "$rc" = 1 ] && grep -q "$failed" "$W/$t.err" && ok "${cmd%% *} --peers: one host unreachable: exit 1, named" ||
		not_ok "${cmd%% *} --peers exit status" "rc=$rc" "$(cat "$W/$t.err")"
	if out=$(promtool check metrics < "$W/$t.prom" 2>&1); then ok "$prom_desc"
	else not_ok "${cmd%% *} --prom promtool" "$out"; fi
	if out=$(judge "${cmd%% *}" "$W/$t.jsonl" "$W/$t.prom" $PORT "$@" 2>&1); then
		ok "${cmd%% *} --peers: JSON lines, sequential pairs, up/p50 per peer label: $out"
	else
		not_ok "${cmd%% *} --peers lines and file agree" "$out" "$(cut -c1-300 "$W/$t.jsonl")" "$(grep -v '^#' "$W/$t.prom" | head -20)"
	fi
}

# probe --peers against a --forever responder.
fleet_run "probe -p $PORT -u 20" p 300 "timeout 300 $B probe --insecure -p $PORT -u 20 --forever" peers \
	"1 of 3 pairs failed" "probe --prom passes promtool check metrics" 200
lab_exec 1 "pkill -f '$B probe'; true"

# breakdown --peers: a responder serves one session per run, so a loop.
fleet_run "breakdown -p $PORT -u 20 -b $BD_BACKEND" b 600 "$B breakdown --insecure -p $PORT -u 20 -b $BD_BACKEND --listen-timeout 120" peers1 \
	"1 of 2 pairs failed" "breakdown --prom of a fleet run passes promtool check metrics"
n=$(grep -c '^latsplit_breakdown_level{peer=' "$W/b.prom")
[ "$n" = 1 ] && ok "a verdict (level) for the measured pair, none for the failed one" || not_ok "verdict per pair" "$n level samples"
check "dmesg clean on node0" dmesg_clean 0
check "dmesg clean on node1" dmesg_clean 1
done_testing
