#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for transmission: the model's figure is computed here
# independently (awk, from the header sizes of the RoCEv2 annex) and must
# equal the breakdown's transmission part to the ns: once with the rate the
# guest's rxe port reports (/sys/class/infiniband/rxe0/ports/1/rate, which
# follows the QEMU NIC's speed, lab up --speed), once with --link-gbps,
# --cable-m, --hops and store-and-forward switches.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
plan 4
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
done_testing
