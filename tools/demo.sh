#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the seed's congestion case study on the two-node Soft-RoCE lab
# (Documentation/case-study.rst). One booted pair, `latsplit breakdown`
# from node0 to node1 with the kernel module on both nodes, the probe
# marked DSCP 26 / ECT(0) (--tclass 106), over a 1 Gb/s wire with
# strict-priority classes and ECN marking above 100 kB, in three phases:
#   1. healthy: the probe alone;
#   2. congested: a storage flow (one block of 0.3-5.7 MB, 3 MB on average,
#      always outstanding node0 -> node1) shares the probe's queue;
#   3. fixed: the storage flow moved to its own, lower-priority class.
# Each phase's JSON (for `latsplit compare`) and HTML report (latsplit
# breakdown --report) are kept in DEMO_DIR (default build/demo); the last
# screen compares the three and names the reports.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
LAB=$TOP/tools/lab/lab
BIN=$TOP/build/latsplit
KVER=${KVER:-6.1}
ITERS=${DEMO_ITERS:-1000}
OUT=${DEMO_DIR:-$TOP/build/demo}
NAME=demo-$$
FLOW="block=3000000 depth=1 frame=1500 spread=90"

cleanup() { "$LAB" down --name "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT
mkdir -p "$OUT"

echo "== booting the lab pair (kernel $KVER, QEMU TCG, Soft-RoCE on virtio-net)"
"$LAB" up --name "$NAME" --kver "$KVER" >/dev/null
rel=$("$LAB" info --name "$NAME" kver)
ko=$TOP/build/kmod/$rel/kmod/latsplit.ko
for n in 0 1; do
	"$LAB" exec --name "$NAME" "$n" -- "[ -r $ko ] && insmod $ko || true" >/dev/null
done
SH=$("$LAB" shared --name "$NAME")
wire() { "$LAB" wire --name "$NAME" "$@" >/dev/null; }
echo "== the wire: 1 Gb/s each way, strict priority, ECN (CE) above 100 kB in class 0"
wire link both rate=1000000000
wire class ab 0 limit=16000000 ecn=100000	# room for the storage flow's largest block
wire class ab 1 limit=16000000

# phase NAME [BASELINE]: one breakdown node0 -> node1, its JSON kept in $OUT.
phase() {
	local name=$1 base=${2:+--baseline $2} resp=$SH/responder-$1.log
	"$LAB" exec --name "$NAME" --background 1 -- "timeout 300 $BIN breakdown --insecure -d rxe0 -u 20 --tclass 106 > $resp 2>&1" >/dev/null
	# The prober does not retry a refused connection: wait for the listener.
	for _ in $(seq 150); do grep -q listening "$resp" 2>/dev/null && break; sleep 0.2; done
	grep -q listening "$resp" 2>/dev/null || { echo "demo: the responder did not start:" >&2; cat "$resp" >&2; exit 1; }
	"$LAB" exec --name "$NAME" --timeout 300 0 -- "$BIN breakdown -d rxe0 -u 20 --tclass 106 -n $ITERS $base --json --report $SH/$name.html 192.0.2.2 > $SH/$name.json 2> $SH/$name.err" ||
		{ echo "demo: phase $name failed:" >&2; cat "$SH/$name.err" >&2; exit 1; }
	cp "$SH/$name.json" "$SH/$name.html" "$OUT/"
}

# A fresh pair's first run is slow (the emulator translates new code once).
echo "== warming up"
phase warmup
echo "== phase 1: healthy (the probe alone)"
phase healthy
echo "== phase 2: congested (a storage flow shares the probe's queue)"
wire flow ab class=0 $FLOW
phase congested "$OUT/healthy.json"
wire flow ab off
sleep 0.1
echo "== phase 3: fixed (the storage flow in its own, lower-priority class)"
wire flow ab class=1 $FLOW
phase fixed "$OUT/healthy.json"
wire flow ab off
rm -f "$OUT/warmup.json" "$OUT/warmup.html"

python3 - "$OUT" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
us = lambda ns: "%8.1f" % (ns / 1e3)
print("\n== the case study: one-way latency (us, RTT/2), split per phase")
print("%-10s %8s %8s %8s %8s %8s  %s" % ("phase", "p50", "p99", "transm.", "queuing",
                                         "process.", "finding"))
docs = {}
for ph in ("healthy", "congested", "fixed"):
    d = docs[ph] = json.load(open(os.path.join(out, ph + ".json")))
    v = d["verdict"]
    f = "; ".join("%s: %s" % (x["layer"], x["text"]) for x in v["findings"]) or "no fault named"
    print("%-10s %s %s %s %s %s  %s" % (ph, us(d["total"]["p50_ns"]), us(d["total"]["p99_ns"]),
          us(d["parts"]["transmission"]["p50_ns"]), us(d["parts"]["queuing"]["p50_ns"]),
          us(d["parts"]["processing"]["p50_ns"]), f))
h, c, x = (docs[p]["total"]["p50_ns"] for p in ("healthy", "congested", "fixed"))
print("\ncongested: +%.0f us at p50, %.0f %% of it queuing; fixed: %.2f x healthy" % (
    (c - h) / 1e3, 100 * (docs["congested"]["parts"]["queuing"]["p50_ns"] -
                          docs["healthy"]["parts"]["queuing"]["p50_ns"]) / (c - h) if c > h else 0,
    x / h))
print("JSON per phase: %s/{healthy,congested,fixed}.json (latsplit compare A.json B.json)" % out)
print("reports: " + ", ".join("%s/%s.html" % (out, p) for p in ("healthy", "congested", "fixed")))
PYEOF
