#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for processing: on the responder, the NIC's IRQs are pinned to
# CPU 1, the probe runs on CPU 1, and a duty-cycled SCHED_FIFO hog (spin S,
# sleep S) runs there too: a deterministic processing delay (the probe task
# preempted, softirqs deferred). Baseline A, healthy run H and hogged run F
# (both against --baseline A): at least 70 % of the growth of the total p50
# from H to F is processing, and the verdict names the responder's CPU 1.
# S is scaled to the lab's own latency (2x the baseline p50, at least 2 ms).
# The vCPUs must run side by side (--tcg multi): with one TCG thread for
# both, the hog stalls the whole guest and a 2-8 ms hog added 0-270 us.
# lab-kernels: 6.1
# lab-smp: 2
# lab-tcg: multi
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

HOG_PID=
AFF_SAVED=$W/affinity.saved
cleanup() {
	[ -n "$HOG_PID" ] && lab_exec 1 "kill $HOG_PID 2>/dev/null; true"
	[ -s "$AFF_SAVED" ] && lab_exec 1 "while read -r irq cpus; do echo \$cpus > /proc/irq/\$irq/smp_affinity_list; done < $AFF_SAVED" >/dev/null 2>&1
	bd_cleanup
}
trap cleanup EXIT
plan 5
[ "$(lab_exec 1 nproc)" -ge 2 ] || skip_all "needs a 2-CPU lab (lab up --smp 2)"
bd_backend_setup

# the NIC's IRQs on the responder: virtio-net input/output queues of eth0
IRQS=$(lab_exec 1 "grep -E 'virtio[0-9]+-(input|output)' /proc/interrupts | cut -d: -f1 | tr -d ' '" | tr '\n' ' ')
lab_exec 1 "for i in $IRQS; do echo \"\$i \$(cat /proc/irq/\$i/smp_affinity_list)\"; done > $AFF_SAVED; for i in $IRQS; do echo 1 > /proc/irq/\$i/smp_affinity_list; done"
diag "responder NIC IRQs $IRQS pinned to CPU 1"

# A first run on a fresh pair is slow (the emulator translates every new
# code path once): warm up, unjudged, so the baseline's floor is not inflated.
bd_run warmup "--cpu 1" "--cpu 0" || diag "warm-up run failed: $(tail -n 3 "$W/warmup.err" 2>/dev/null)"
if bd_run base "--cpu 1" "--cpu 0"; then ok "baseline run"; else not_ok "baseline run" "$(cat "$W/base.err")"; fi
bd_diag "$W/base.json"
p50=$(bd_get "$W/base.json" 'd["total"]["p50_ns"]') || p50=1000000
S_MS=$(python3 -c "import math; print(max(2, math.ceil(2 * $p50 / 1e6)))")
diag "hog: SCHED_FIFO spin $S_MS ms / sleep $S_MS ms on the responder's CPU 1"

if bd_run healthy "--cpu 1" "--cpu 0 --baseline $W/base.json"; then ok "healthy run"
else not_ok "healthy run" "$(cat "$W/healthy.err")"; fi
bd_diag "$W/healthy.json"

cat > "$W/hog.py" <<PYEOF
import os, time
os.sched_setaffinity(0, {1})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
s = $S_MS / 1000.0
open("$W/hog.ready", "w").close()
while True:
    end = time.monotonic() + s
    while time.monotonic() < end:
        pass
    time.sleep(s)
PYEOF
lab_bg 1 "python3 $W/hog.py > /dev/null 2>&1 & echo \$! > $W/hog.pid; wait"
# The interpreter takes seconds to start under the emulator, longer than a
# whole run: start measuring once the hog spins at SCHED_FIFO.
for _ in $(seq 300); do [ -s "$W/hog.pid" ] && [ -e "$W/hog.ready" ] && break; sleep 0.1; done
HOG_PID=$(cat "$W/hog.pid" 2>/dev/null)
[ -e "$W/hog.ready" ] || diag "the hog did not report SCHED_FIFO within 30 s"
if bd_run fault "--cpu 1" "--cpu 0 --baseline $W/base.json"; then ok "run with the hog on the responder's IRQ CPU"
else not_ok "run with the hog on the responder's IRQ CPU" "$(cat "$W/fault.err")"; fi
lab_exec 1 "kill $HOG_PID" && HOG_PID=
bd_diag "$W/fault.json"

# judge CHECK: processing share of the growth; the CPU the verdict names.
judge() {
	python3 - "$W/healthy.json" "$W/fault.json" "$1" <<'PYEOF'
import json, sys
h = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
dt = f["total"]["p50_ns"] - h["total"]["p50_ns"]
dp = f["parts"]["processing"]["p50_ns"] - h["parts"]["processing"]["p50_ns"]
if sys.argv[3] == "share":
    print("total p50 grew by %.0f us, processing p50 by %.0f us (%.0f %%)" % (dt / 1e3, dp / 1e3, 100 * dp / dt if dt > 0 else 0))
    sys.exit(0 if dt > 0 and dp >= 0.7 * dt else 1)
print("verdict cpu:", f["verdict"]["cpu"], "findings:", [x["text"] for x in f["verdict"]["findings"]])
c = f["verdict"]["cpu"]
sys.exit(0 if c and c["host"] == "responder" and c["cpu"] == 1 else 1)
PYEOF
}
check "at least 70 % of the added p50 is processing" judge share
check "the verdict names the responder's CPU 1" judge cpu
done_testing
