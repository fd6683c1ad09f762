#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The seed's congestion case study on one booted pair, judged inside one
# run. The wire (tools/lab/labwire.c) is a 1 Gb/s link with strict-priority
# classes and ECN marking in class 0; the probe runs with
# --tclass 106 (DSCP 26, ECT(0)) on both sides. The storage flow
# (labwire_flow.c: one block always outstanding node0 -> node1, 1500-B
# frames, sizes spread over 0.1-1.9 blocks) is cycled by tests/lab/case-study.py
# through off (healthy), on in the probe's class (congested: a request
# waits for the rest of the block on the link; the spread keeps the
# closed-loop probe from locking to the blocks' boundaries, which would
# make every wait the same) and on in class 1 below the
# probe (fixed: at most one 12 us frame), while one breakdown runs. The
# block time is sized from the warm-up run so that neither the emulator's
# own spread nor the guests' own slow-down on a congested sample (they
# answer slower after the long gaps the queue makes, ~0.7 x the one-way
# p50 here) can hide the queue: the largest of 12 x its one-way p75-p25,
# 60 x its one-way p50 and 24 ms, at most 250 ms (a pair 10x slower than
# usual gets a 10x longer block, and longer phases); each sample is placed
# in the state its request met on the wire (by QPN and PSN in the wire's
# log; twice the block time after a switch, while a block left in class 0
# drains) and the states are compared cycle by cycle (adjacent blocks: the
# emulator's drift cancels). Asserted:
#  - congested: queuing's addition (median over cycles) is the wire's
#    added sojourn within 10 %, processing's is the hosts' own change (the
#    total's minus the wire's) within 10 % of the added p50, and queuing
#    carries at least 90 % of the added p50; per sample, queuing ranks as
#    the wire's own sojourn of the sample's frames (Spearman >= 0.8); a
#    request is CE-marked exactly when the backlog its wait on the link
#    shows was above the ECN threshold (within two frames);
#  - fixed: the total within 25 % of healthy and its queuing within 10 % of
#    the congested addition of healthy's; the wire's sojourn near zero;
#  - steady runs: a congested breakdown (flow on throughout) names
#    PFC/queues and cites ipext:InCEPkts, whose change on node1 equals the
#    CE-marked requests in the wire's log and its class-0 CE counter
#    exactly; a fixed run against the healthy one as --baseline names no
#    queuing fault; the wire's own counters over each steady run (reset
#    before it): congested, the flow's frames in class 0, most of the
#    class's frames waited 1 ms or more, depth above a tenth of a block;
#    fixed, the flow in class 1 alone, class 0 below the ECN threshold,
#    no CE, at most a tenth of its frames waited 1 ms or more.
# lab-kernels: 6.1 6.12
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap cs_cleanup EXIT
plan_none
CS=$(dirname "$0")/case-study.py
TC="--tclass 106"
bd_backend_setup

cs_cleanup() {
	wire flow ab off >/dev/null 2>&1
	wire link both rate=0 >/dev/null 2>&1
	wire class ab 0 ecn=0 limit=1048576 >/dev/null 2>&1
	wire class ab 1 limit=1048576 >/dev/null 2>&1
	bd_cleanup
}

wire link both rate=1000000000 >/dev/null && ok "wire: 1 Gb/s" || not_ok "wire setup"
bd_run warmup "$TC" "$TC" || diag "warm-up run failed: $(tail -n 3 "$W/warmup.err" 2>/dev/null)"
# The block (bytes at 1 Gb/s), the phase (s) and the run (s) from the warm-up.
read -r BLOCK PERIOD DUR GUARD < <(python3 - "$W/warmup.json" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    v = sorted(d["total"]["samples_ns"])
    p50, spread = v[len(v) // 2], v[len(v) * 3 // 4] - v[len(v) // 4]
except (OSError, ValueError, KeyError, IndexError):
    p50, spread = 1e6, 2e5
bt = min(max(12 * spread, 60 * p50, 24e6), 250e6)     # block time, ns
period = min(max(0.6, 40 * (2 * p50 + bt / 2) / 1e9), 6.0)
print(int(bt * 1e9 / 8 / 1e9), "%.2f" % period, int(30 * period + 2), int(max(50, 2 * bt / 1e6)))
PYEOF
)
FLOW="block=$BLOCK depth=1 frame=1500 spread=90"
diag "block $BLOCK B ($((BLOCK * 8 / 1000)) us at 1 Gb/s), phases of $PERIOD s, run of $DUR s, guard $GUARD ms"
# ECN above a twentieth of a block: the smallest block (0.1) is above it
wire class ab 0 limit=$((4 * BLOCK + 1048576)) ecn=$((BLOCK / 20)) >/dev/null
wire class ab 1 limit=$((4 * BLOCK + 1048576)) >/dev/null

# ---- one run, the flow cycled through its three states ---------------------
wire log "$W/cyc.wire" >/dev/null
ctl=$("$LS_LAB" info --name "$LAB_NAME" dir)/wire.sock
python3 "$CS" toggle --ctl "$ctl" --out "$W/cyc.states" --period "$PERIOD" --cycles 10 $FLOW \
	> "$W/toggle.err" 2>&1 &
tpid=$!
# a slow pair's run outlasts the responder's default 120 s limit: raise it
if BD_LEN="-D ${DUR}s" bd_run cyc "$TC --max-run-time $((DUR + 60))s" "$TC --samples $W/cyc.csv"
then ok "cycled run"
else not_ok "cycled run" "$(cat "$W/cyc.err")"; fi
wait "$tpid" && ok "the flow was cycled (30 switches)" || not_ok "toggler" "$(cat "$W/toggle.err")"
wire flush >/dev/null
wire log off >/dev/null
python3 "$CS" judge --samples "$W/cyc.csv" --bd "$W/cyc.json" --wire "$W/cyc.wire" \
	--states "$W/cyc.states" --guard-ms "$GUARD" --ecn-bytes $((BLOCK / 20)) \
	--rate-bps 1000000000 > "$W/cyc.judge" 2> "$W/judge.err" ||
	not_ok "judge the cycled run" "$(cat "$W/judge.err")"
j() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$W/cyc.judge" "$1"; }
diag "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); us=lambda x: "%.0f us" % (x/1e3)
print("cycles %d, placed %s; healthy p50 %s; congested +%s total, +%s queuing (share %.3f), +%s processing; wire +%s, hosts +%s; Spearman %.3f; fixed total x%.3f, queuing %+.0f us, wire %+.0f us; CE %s" % (
 r["cycles"], r["placed"], us(r["baseline_p50_ns"]), us(r["state1"]["total"]), us(r["state1"]["queuing"]),
 r["queuing_share"], us(r["state1"]["processing"]), us(r["state1"]["truth"]), us(r["state1"]["host"]),
 r["spearman_queuing_truth"], r["state2"]["total_ratio"],
 r["state2"]["queuing"]/1e3, r["state2"]["truth"]/1e3, r["ce"]))' "$W/cyc.judge" 2>&1)"
check "cycled: at least 6 whole cycles placed" j 'r["cycles"] >= 6'
check "congested: the wire added >= 1 ms one-way (its own log)" j 'r["state1"]["truth"] >= 1e6'
check "congested: queuing's addition is the wire's added sojourn (+-10 %)" \
	j 'abs(r["state1"]["queuing"] - r["state1"]["truth"]) <= 0.1 * r["state1"]["truth"]'
check "congested: processing's addition is the hosts' own (total - wire, +-10 % of the added p50)" \
	j 'abs(r["state1"]["processing"] - r["state1"]["host"]) <= 0.1 * r["state1"]["total"]'
check "congested: queuing carries >= 90 % of the added p50" j '0.90 <= r["queuing_share"] <= 1.1'
check "congested: per sample, queuing ranks as the wire's sojourn (Spearman >= 0.8)" \
	j 'r["spearman_queuing_truth"] >= 0.8'
check "congested: a request is CE-marked iff it met more than the ECN threshold of backlog (its wait on the wire's log), none when healthy or fixed" \
	j 'r["ce"]["1"][0] > 0.5 * r["ce"]["1"][1] and not r["ce_wrong"] and r["ce"]["0"][0] == r["ce"]["2"][0] == 0'
check "fixed: the total within 25 % of healthy" j 'r["state2"]["total_ratio"] <= 1.25'
check "fixed: queuing back within 10 % of the congested addition" \
	j 'abs(r["state2"]["queuing"]) <= 0.1 * r["state1"]["total"]'
check "fixed: the wire's sojourn near zero (under 5 % of the congested one)" \
	j 'abs(r["state2"]["truth"]) <= 0.05 * r["state1"]["truth"]'

# ---- steady runs: the verdicts and the ECN evidence ------------------------
bd_run healthy "$TC" "$TC" && ok "healthy run" || not_ok "healthy run" "$(cat "$W/healthy.err")"
wire flow ab class=0 $FLOW >/dev/null
wire log "$W/cong.wire" >/dev/null
wire reset >/dev/null
bd_run cong "$TC" "$TC --baseline $W/healthy.json" && ok "congested run" ||
	not_ok "congested run" "$(cat "$W/cong.err")"
wire stats > "$W/cong.stats"
wire flush >/dev/null
wire log off >/dev/null
wire flow ab off >/dev/null
sleep "$(python3 -c "print($GUARD / 1e3)")"	# the last class-0 block drains
wire flow ab class=1 $FLOW >/dev/null
wire reset >/dev/null
bd_run fixed "$TC" "$TC --baseline $W/healthy.json" && ok "fixed run" ||
	not_ok "fixed run" "$(cat "$W/fixed.err")"
wire stats > "$W/fixed.stats"
wire flow ab off >/dev/null
# wire_ctrs FILE cong|fixed: the wire's own counters of node0 -> node1 over
# one steady run (reset before it): class 0 (the probe's) and class 1.
wire_ctrs() {
	python3 - "$1" "$2" "$BLOCK" <<'PYEOF'
import json, sys
st, mode, block = json.load(open(sys.argv[1]))["ab"], sys.argv[2], int(sys.argv[3])
c0, c1 = st["classes"][0], st["classes"][1]
soj = c0["sojourn_us_log2"]          # bucket b: sojourn < 2^b us
tx, slow = sum(soj), sum(soj[11:])  # slow: 1.024 ms or more
print("class 0: %d frames, %d waited >= 1.024 ms, CE %d, max depth %d B, flow frames %d;"
      " class 1: flow frames %d; ECN threshold %d B" % (tx, slow, c0["ce_marked"],
      c0["max_queued_bytes"], c0["flow_tx_frames"], c1["flow_tx_frames"], block // 20))
if mode == "cong":
    ok = (tx > 0 and slow >= 0.5 * tx and c0["ce_marked"] > 0 and c0["flow_tx_frames"] > 0
          and c0["max_queued_bytes"] >= block // 10)
else:
    ok = (tx > 0 and slow <= 0.1 * tx and c0["ce_marked"] == 0 and c0["flow_tx_frames"] == 0
          and c0["max_queued_bytes"] < block // 20 and c1["flow_tx_frames"] > 0)
sys.exit(0 if ok else 1)
PYEOF
}
check_diag "wire counters, congested: the flow in class 0, most probe-class frames waited >= 1 ms, CE marks, depth above a tenth of a block" \
	wire_ctrs "$W/cong.stats" cong
check_diag "wire counters, fixed: the flow in class 1 only; class 0 below the ECN threshold, no CE, at most a tenth of its frames waited >= 1 ms" \
	wire_ctrs "$W/fixed.stats" fixed
bd_diag "$W/healthy.json"
bd_diag "$W/cong.json"
bd_diag "$W/fixed.json"
# verdict FILE WANT: WANT=queues: PFC/queues is named and cites InCEPkts;
# WANT=none: no PFC/queues finding.
verdict() {
	python3 - "$@" <<'PYEOF'
import json, sys
d, want = json.load(open(sys.argv[1])), sys.argv[2]
f = [x for x in d["verdict"]["findings"] if x["layer"] == "PFC/queues"]
print("findings:", [(x["layer"], x["text"]) for x in d["verdict"]["findings"]])
ok = (f and any("InCEPkts" in x["text"] for x in f)) if want == "queues" else not f
sys.exit(0 if ok else 1)
PYEOF
}
check "congested run: the verdict names PFC/queues and cites ipext:InCEPkts" verdict "$W/cong.json" queues
check "fixed run against healthy: no PFC/queues finding" verdict "$W/fixed.json" none
# ce_exact: node1's InCEPkts change (the responder host's counters in the
# JSON) equals the CE-marked ab RoCE frames in the wire's log and the
# wire's own class-0 CE counter.
ce_exact() {
	python3 - "$W/cong.json" "$W/cong.wire" "$W/cong.stats" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ctr = json.load(open(sys.argv[3]))["ab"]["classes"][0]["ce_marked"]
c = [x for x in d["counters"] if x["name"] == "ipext:InCEPkts" and x["host"] == "responder"]
cols, wire = None, 0
for line in open(sys.argv[2]):
    if line.startswith("#"):
        cols = line[1:].split() if "psn" in line else cols
        continue
    r = dict(zip(cols, line.split()))
    wire += r["dir"] == "ab" and r["action"] == "fwd" and r["ecn_out"] == "3" and r["ecn_in"] != "3"
print("responder InCEPkts delta %s, wire CE-marked ab frames %d (log), %d (counter)" %
      (c[0]["delta"] if c else None, wire, ctr))
sys.exit(0 if c and c[0]["delta"] == wire == ctr > 0 else 1)
PYEOF
}
check_diag "ECN evidence: node1's InCEPkts moved by exactly the wire's CE marks (log and counter)" ce_exact
for n in 0 1; do check "dmesg clean on node$n" dmesg_clean "$n" "${LS_DMESG_MARK:-}"; done
done_testing
