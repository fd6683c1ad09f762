#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for queuing: `tc qdisc add dev eth0 root netem delay D` on the
# responder's egress delays every answer by D, so the one-way latency
# (RTT/2) grows by D/2. Three runs in one pair boot: a healthy baseline A,
# a healthy run B and the faulted run F, both split with --baseline A (its
# median residual is the floor). Then queuing p50 of F exceeds B's by D/2
# within +-25 %, processing p50 moves by less than 20 % of D/2, and the
# verdict names PFC/queues. D is scaled to the lab's own latency (8x the
# baseline p50, at least 64 ms) so emulation noise stays small against it:
# the guests' delayed packets leave on a timer of the emulated clock, and
# with D = 4 ms the one-way growth measured 3.7 ms instead of 2 ms (D = 24 ms
# came out within the bound), an error of a few ms whatever D is.
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

QDISC=0
cleanup() {
	[ "$QDISC" = 1 ] && lab_exec 1 "tc qdisc del dev eth0 root" >/dev/null 2>&1
	bd_cleanup
}
trap cleanup EXIT
plan 6
bd_backend_setup

if bd_run base "" ""; then ok "baseline run"; else not_ok "baseline run" "$(cat "$W/base.err")"; fi
bd_diag "$W/base.json"
p50=$(bd_get "$W/base.json" 'd["total"]["p50_ns"]') || p50=1000000
D_MS=$(python3 -c "import math; print(max(64, math.ceil(8 * $p50 / 1e6)))")
diag "delay D = $D_MS ms (D/2 = $((D_MS * 500)) us one-way)"

if bd_run healthy "" "--baseline $W/base.json"; then ok "healthy run against the baseline"
else not_ok "healthy run against the baseline" "$(cat "$W/healthy.err")"; fi
bd_diag "$W/healthy.json"

lab_exec 1 "tc qdisc add dev eth0 root netem delay ${D_MS}ms limit 10000" && QDISC=1
if bd_run fault "" "--baseline $W/base.json"; then ok "run with netem delay $D_MS ms on the responder"
else not_ok "run with netem delay $D_MS ms on the responder" "$(cat "$W/fault.err")"; fi
lab_exec 1 "tc qdisc del dev eth0 root" && QDISC=0
bd_diag "$W/fault.json"

# judge CHECK: the three relations, from the two documents.
judge() {
	python3 - "$W/healthy.json" "$W/fault.json" "$D_MS" "$1" <<'PYEOF'
import json, sys
h = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
half = float(sys.argv[3]) * 1e6 / 2
p = lambda d, k: d["parts"][k]["p50_ns"]
dq = p(f, "queuing") - p(h, "queuing")
dp = p(f, "processing") - p(h, "processing")
what = sys.argv[4]
if what == "queuing":
    print("queuing p50 rose by %.0f us, D/2 = %.0f us (ratio %.2f)" % (dq / 1e3, half / 1e3, dq / half))
    sys.exit(0 if 0.75 * half <= dq <= 1.25 * half else 1)
if what == "processing":
    print("processing p50 moved by %.0f us, limit %.0f us" % (dp / 1e3, 0.2 * half / 1e3))
    sys.exit(0 if abs(dp) < 0.2 * half else 1)
layers = [x["layer"] for x in f["verdict"]["findings"]]
print("findings:", layers, "next:", f["verdict"]["next_layer"])
sys.exit(0 if "PFC/queues" in layers else 1)
PYEOF
}
check "queuing p50 rises by D/2 +-25 %" judge queuing
check "processing p50 moves by less than 20 % of D/2" judge processing
check "the verdict names PFC/queues" judge verdict
done_testing
