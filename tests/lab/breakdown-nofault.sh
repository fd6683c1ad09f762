#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No fault injected: a healthy run split against a healthy baseline of the
# same pair has queuing p50 near 0 (at most 25 % of its total p50: the lab's
# emulation jitter is all it may show) and a verdict that names no queuing
# or CPU fault; any RDMA-path finding must cite counters that really moved.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
plan 4
bd_backend_setup
if bd_run base "" ""; then ok "baseline run"; else not_ok "baseline run" "$(cat "$W/base.err")"; fi
bd_diag "$W/base.json"
if bd_run again "" "--baseline $W/base.json"; then ok "healthy run against the baseline"
else not_ok "healthy run against the baseline" "$(cat "$W/again.err")"; fi
bd_diag "$W/again.json"

# judge CHECK
judge() {
	python3 - "$W/again.json" "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2] == "queuing":
    q, t = d["parts"]["queuing"]["p50_ns"], d["total"]["p50_ns"]
    print("queuing p50 %.0f us of total p50 %.0f us (%.0f %%)" % (q / 1e3, t / 1e3, 100 * q / t))
    sys.exit(0 if q <= 0.25 * t else 1)
bad = []
moved = {(c["host"], c["name"]) for c in d["counters"] if c.get("moved")}
for f in d["verdict"]["findings"]:
    if f["layer"] in ("PFC/queues", "CPU/IRQ affinity"):
        bad.append(f["text"])
    elif f["layer"] == "RDMA path":
        for host, name in moved:
            f["text"] = f["text"].replace("%s %s" % (host, name), "")
        if "hw:" in f["text"] or "port:" in f["text"] or "ethtool:" in f["text"]:
            bad.append("cites a counter that did not move: " + f["text"])
print("findings:", [f["layer"] for f in d["verdict"]["findings"]], "bad:", bad)
sys.exit(1 if bad else 0)
PYEOF
}
check "queuing p50 near 0 against the healthy baseline" judge queuing
check "the verdict names no fault that was not injected" judge verdict
done_testing
