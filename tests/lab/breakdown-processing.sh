#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for processing: on the responder, the NIC's IRQs are pinned to
# CPU 1, the probe runs on CPU 1, and a known amount of softirq work is added
# to every packet that CPU receives: an nftables input chain of N rules that
# never match (each packet walks all N in the NET_RX softirq, before rxe gets
# it). The delay is deterministic and hits every sample alike (a duty-cycled
# CPU hog delays only the samples that meet its busy phase, and the median
# then lands on either side of the step). Baseline A, healthy run H and
# loaded run F (both against --baseline A): at least 70 % of the growth of
# the total p50 from H to F is processing, the growth is well above the
# healthy run's own drift, and the verdict names the responder's CPU 1.
# N is scaled to the lab: the loaded p50 must rise by at least half the
# baseline p50 (a second, longer chain is tried when the first adds less).
# On 6.1 only. 6.12: rxe works in an unbound workqueue whose kworker shares
# CPU 1 with the busy-polling responder; the baseline itself swings between
# 0.4 and 6 ms. 6.1-rt: the kernel-attributed growth matches 6.1's, but the
# total grows by 1.0-1.8x that from run to run (processing share 56-100 %).
# lab-kernels: 6.1
# lab-smp: 2
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

AFF_SAVED=$W/affinity.saved
NFT_TABLE=latsplit_proc
cleanup() {
	lab_exec 1 "nft delete table ip $NFT_TABLE 2>/dev/null; true" >/dev/null 2>&1
	[ -s "$AFF_SAVED" ] && lab_exec 1 "while read -r irq cpus; do echo \$cpus > /proc/irq/\$irq/smp_affinity_list; done < $AFF_SAVED" >/dev/null 2>&1
	bd_cleanup
}
trap cleanup EXIT
[ "$(lab_exec 1 nproc)" -ge 2 ] || skip_all "needs a 2-CPU lab (lab up --smp 2)"
lab_exec 1 "command -v nft" >/dev/null 2>&1 || skip_all "nft (Debian package nftables) missing: make deps"
plan 6
bd_backend_setup

# the NIC's IRQs on the responder: virtio-net input/output queues of eth0
IRQS=$(lab_exec 1 "grep -E 'virtio[0-9]+-(input|output)' /proc/interrupts | cut -d: -f1 | tr -d ' '" | tr '\n' ' ')
lab_exec 1 "for i in $IRQS; do echo \"\$i \$(cat /proc/irq/\$i/smp_affinity_list)\"; done > $AFF_SAVED; for i in $IRQS; do echo 1 > /proc/irq/\$i/smp_affinity_list; done"
diag "responder NIC IRQs $IRQS pinned to CPU 1"

# nft_load N: an input chain of N rules that match nothing (TEST-NET-3 source).
nft_load() {
	python3 - "$1" "$NFT_TABLE" > "$W/rules.nft" <<'PYEOF'
import sys
n, t = int(sys.argv[1]), sys.argv[2]
print("table ip %s {\n  chain input {\n    type filter hook input priority 0; policy accept;" % t)
for _ in range(n):
    print("    ip saddr 203.0.113.7 counter")
print("  }\n}")
PYEOF
	lab_exec 1 "nft delete table ip $NFT_TABLE 2>/dev/null; nft -f $W/rules.nft && nft list chain ip $NFT_TABLE input | grep -c counter"
}

# A first run on a fresh pair is slow (the emulator translates every new
# code path once): warm up, unjudged, so the baseline's floor is not inflated.
bd_run warmup "--cpu 1" "--cpu 0" || diag "warm-up run failed: $(tail -n 3 "$W/warmup.err" 2>/dev/null)"
if bd_run base "--cpu 1" "--cpu 0"; then ok "baseline run"; else not_ok "baseline run" "$(cat "$W/base.err")"; fi
bd_diag "$W/base.json"
p50=$(bd_get "$W/base.json" 'd["total"]["p50_ns"]') || p50=200000

if bd_run healthy "--cpu 1" "--cpu 0 --baseline $W/base.json"; then ok "healthy run"
else not_ok "healthy run" "$(cat "$W/healthy.err")"; fi
bd_diag "$W/healthy.json"

loaded=
for n in 10000 25000; do
	got=$(nft_load $n) || { diag "nft -f with $n rules failed: $got"; break; }
	diag "responder input chain: $got rules that never match"
	loaded=$got
	bd_run fault "--cpu 1" "--cpu 0 --baseline $W/base.json" || break
	f50=$(bd_get "$W/fault.json" 'd["total"]["p50_ns"]') || break
	python3 -c "import sys; sys.exit(0 if $f50 - $p50 >= $p50 / 2 else 1)" && break
	diag "$n rules added $(( (${f50%.*} - ${p50%.*}) / 1000 )) us to p50 $(( ${p50%.*} / 1000 )) us: a longer chain"
done
if [ -s "$W/fault.json" ] && [ -n "$loaded" ]; then
	ok "run with $loaded extra rules walked in the responder's softirq on CPU 1"
else
	not_ok "run with extra softirq work on the responder's IRQ CPU" "$(cat "$W/fault.err" 2>/dev/null)"
fi
lab_exec 1 "nft delete table ip $NFT_TABLE"
bd_diag "$W/fault.json"

# judge CHECK: processing share of the growth; growth vs drift; the CPU named.
judge() {
	python3 - "$W/base.json" "$W/healthy.json" "$W/fault.json" "$1" <<'PYEOF'
import json, sys
a, h, f = (json.load(open(p)) for p in sys.argv[1:4])
dt = f["total"]["p50_ns"] - h["total"]["p50_ns"]
dp = f["parts"]["processing"]["p50_ns"] - h["parts"]["processing"]["p50_ns"]
drift = abs(h["total"]["p50_ns"] - a["total"]["p50_ns"])
if sys.argv[4] == "share":
    print("total p50 grew by %.0f us, processing p50 by %.0f us (%.0f %%)" % (dt / 1e3, dp / 1e3, 100 * dp / dt if dt > 0 else 0))
    sys.exit(0 if dt > 0 and dp >= 0.7 * dt else 1)
if sys.argv[4] == "drift":
    print("growth %.0f us, healthy-vs-baseline drift %.0f us" % (dt / 1e3, drift / 1e3))
    sys.exit(0 if dt >= 3 * drift and dt > 0 else 1)
print("verdict cpu:", f["verdict"]["cpu"], "findings:", [x["text"] for x in f["verdict"]["findings"]])
c = f["verdict"]["cpu"]
sys.exit(0 if c and c["host"] == "responder" and c["cpu"] == 1 else 1)
PYEOF
}
check "the growth is at least 3x the healthy run's drift from the baseline" judge drift
check "at least 70 % of the added p50 is processing" judge share
check "the verdict names the responder's CPU 1" judge cpu
done_testing
