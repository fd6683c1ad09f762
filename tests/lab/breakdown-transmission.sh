#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for transmission.
# 1. The model, computed here independently (awk, from the header sizes of
#    the RoCEv2 annex), equals the breakdown's transmission part to the ns,
#    once with the rate the guest's rxe port reports and once with
#    --link-gbps, --cable-m, --hops and store-and-forward switches.
# 2. The host wire serializes both directions at R = 1 Mb/s (well below what
#    the guests push, so a 4 KiB message spends ~34 ms on it). Three rounds
#    of 64 B and 4096 B at R, then 64 B and 4096 B with no rate. With
#    --link-gbps R the transmission part equals the wire's own
#    serialization figure of the sample's answer frames (its log, per
#    sample, matched by PSN). The growth of the total p50 from 64 B to
#    4096 B at R, less the same growth without a rate (the hosts' own cost
#    of the larger message, up to 1.5 ms in the emulator), equals the growth
#    of the wire's figure within 5 %, as the median of the three rounds. At
#    a rate the receiver also handles the four packets of a 4 KiB message
#    one by one as they trickle in, 0.5-1.7 ms more than back to back (at
#    2 Mb/s single rounds read 1.035-1.101): at 1 Mb/s that is half as much
#    of the growth.
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

cleanup() {
	wire link ab rate=0 >/dev/null 2>&1
	wire link ba rate=0 >/dev/null 2>&1
	bd_cleanup
}
trap cleanup EXIT
plan_none
BD_ITERS=30
bd_backend_setup

# expect_ns GBPS CABLE HOPS: 4-byte RDMA WRITE over IPv4, one packet:
# Eth 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload 4 + ICRC 4 + FCS 4
# + preamble/IFG 20 = 102 bytes per link; store-and-forward re-serializes it
# on every link; 5 ns per metre of cable on every link.
expect_ns() {
	awk -v g="$1" -v m="$2" -v h="$3" 'BEGIN { printf "%.3f", h * (102 * 8 / g + m * 5) }'
}

rate=$(lab_exec 0 "cat /sys/class/infiniband/rxe0/ports/1/rate")
gbps=$(echo "$rate" | awk '{ print $1 }')
diag "rxe0 port rate: $rate"
if bd_run port "" ""; then ok "run with the port's rate"; else not_ok "run with the port's rate" "$(cat "$W/port.err")"; fi
want=$(expect_ns "$gbps" 0 1)
got=$(bd_get "$W/port.json" '"%.3f" % d["parts"]["transmission"]["p50_ns"]')
if [ "$(printf '%.0f' "$want")" = "$(printf '%.0f' "$got")" ]; then ok "transmission $got ns = model $want ns at $gbps Gb/s"
else not_ok "transmission equals the model at the port's rate" "got $got ns, want $want ns"; fi

if bd_run link "" "--link-gbps 100 --cable-m 3 --hops 2 --switch sf"; then ok "run with --link-gbps 100 --cable-m 3 --hops 2"
else not_ok "run with --link-gbps 100 --cable-m 3 --hops 2" "$(cat "$W/link.err")"; fi
want=$(expect_ns 100 3 2)
got=$(bd_get "$W/link.json" '"%.3f" % d["parts"]["transmission"]["p50_ns"]')
if [ "$(printf '%.0f' "$want")" = "$(printf '%.0f' "$got")" ]; then ok "transmission $got ns = model $want ns"
else not_ok "transmission equals the model with --link-gbps" "got $got ns, want $want ns"; fi

# The wire at R: every sample's answer serialization from the wire's log.
# Each round runs 64 B and 4096 B at R, then both again with no rate: the
# hosts' own cost of a larger message (ICRC, copies, four packets instead
# of one) grows the total too, and cancels in the difference of growths.
R_BPS=1000000
BD_ITERS=60
sizes=() rates=()
for _ in 1 2 3; do sizes+=(64 4096 64 4096); rates+=($R_BPS $R_BPS 0 0); done
for k in "${!sizes[@]}"; do
	s=${sizes[$k]} r=${rates[$k]} name=t$k
	wire link ab rate="$r" >/dev/null
	wire link ba rate="$r" >/dev/null
	wire log "$W/$name.wire" >/dev/null
	if bd_run "$name" "" "-s $s --link-gbps $(awk -v r="${r/#0/$R_BPS}" 'BEGIN { print r / 1e9 }') --samples $W/$name.csv"; then
		ok "$name: $s B messages through the wire at rate $r b/s (0: none)"
	else
		not_ok "$name: $s B messages through the wire at rate $r b/s" "$(cat "$W/$name.err")"
	fi
	wire flush >/dev/null
	wire log off >/dev/null
done

# judge: per run, transmission vs the wire's serialization of the answers;
# the growth between adjacent runs of total p50 vs the wire's growth.
res=$(python3 - "$W" "${#sizes[@]}" <<'PYEOF'
import csv, json, statistics, sys
w, runs = sys.argv[1], int(sys.argv[2])
med = statistics.median
bad, fig = [], []
for k in range(runs):
    d = json.load(open("%s/t%d.json" % (w, k)))
    qp = d["inputs"]["qp"]
    cols, ser = None, {}
    for line in open("%s/t%d.wire" % (w, k)):
        if line.startswith("#"):
            if "psn" in line:
                cols = line[1:].split()
            continue
        f = dict(zip(cols, line.split()))
        if f.get("dir") != "ba" or int(f["dqpn"], 0) != qp["qpn"] or f.get("action") != "fwd":
            continue
        ser.setdefault(int(f["psn"], 0), int(f["ser_ns"], 0))
    pk = qp["packets_per_message"]
    rows = list(csv.DictReader(open("%s/t%d.csv" % (w, k))))
    wire_t, model_t, tot = [], [], []
    for r in rows:
        a = int(r["ans_psn"])
        psns = [(a + j) & 0xffffff for j in range(pk)]
        if all(p in ser for p in psns):
            wire_t.append(sum(ser[p] for p in psns))
        model_t.append(float(r["transmission_ns"]))
        tot.append(float(r["total_ns"]))
    if len(wire_t) < 0.9 * len(rows):
        bad.append("t%d: only %d of %d samples found in the wire log" % (k, len(wire_t), len(rows)))
        continue
    wt, mt = med(wire_t), med(model_t)
    fig.append((d["inputs"]["size"], med(tot), wt))
    print("t%d: %d B, total p50 %.1f us, transmission %.1f us, wire serialization %.1f us"
          % (k, d["inputs"]["size"], med(tot) / 1e3, mt / 1e3, wt / 1e3))
    if k % 4 < 2 and abs(mt - wt) > 0.001 * wt + 2:
        bad.append("t%d: transmission %.0f ns != wire %.0f ns" % (k, mt, wt))
ratios = []
for k in range(0, len(fig) - 3, 4):
    (_, a0, w0), (_, a1, w1), (_, b0, _), (_, b1, _) = fig[k:k + 4]
    g, gh, gw = a1 - a0, b1 - b0, w1 - w0
    ratios.append((g - gh) / gw)
    print("round %d: total grew %.1f us at R, %.1f us without a rate; the difference %.1f us "
          "vs the wire's serialization growth %.1f us (ratio %.3f)"
          % (k // 4 + 1, g / 1e3, gh / 1e3, (g - gh) / 1e3, gw / 1e3, ratios[-1]))
if len(ratios) < 3:
    bad.append("only %d complete rounds" % len(ratios))
elif not 0.95 <= statistics.median(ratios) <= 1.05:
    bad.append("median growth ratio %.3f outside [0.95, 1.05]" % statistics.median(ratios))
for b in bad:
    print("BAD " + b)
PYEOF
)
diag "$res"
if ! grep -q "transmission" <<< "$res"; then not_ok "the wire runs were judged" "$res"
elif grep -q "^BAD" <<< "$res"; then not_ok "transmission = the wire's serialization; growth with size within 5 %" "$(grep '^BAD' <<< "$res")"
else ok "transmission = the wire's serialization per run; total grows with size as the wire's figure within 5 %"; fi
done_testing
