#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for queuing, judged inside one run: the host wire
# (tools/lab/labwire.c) holds every other probe answer (node1 -> node0 RDMA
# WRITE requests of even PSN) for 2D, so those samples' one-way latency
# (RTT/2) grows by D; once more with every other probe request (node0 ->
# node1) held instead. Each sample is matched to the wire's own log by QPN
# and PSN (tests/lab/paired.py): the truth per sample is the time its two
# frames really spent on the wire. The median difference between a faulted
# sample and its unfaulted neighbours, per part, must give queuing = truth
# +-10 % and processing within +-10 % of the truth; the emulator's drift is
# slow against one round trip and cancels. D = 0.1, 0.3 and 1 ms one-way
# on the answers, 1 ms on the requests.
# lab-kernels: 6.1 6.12
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
plan_none
BD_ITERS=${BD_QUEUING_ITERS:-800}
bd_backend_setup

# one DIR D_US: a run with every other frame in DIR held 2 x D_US, judged.
one() {
	local dir=$1 d_us=$2 name=q$1$2
	wire rule "$dir" 0 roce=1 op=req psn=even delay=$((2 * d_us * 1000)) >/dev/null
	wire log "$W/$name.wire" >/dev/null
	if bd_run "$name" "" "--samples $W/$name.csv"; then ok "$name: run with every other $dir frame held $((2 * d_us)) us"
	else not_ok "$name: run with every other $dir frame held" "$(cat "$W/$name.err")"; fi
	wire flush >/dev/null
	wire log off >/dev/null
	wire norule "$dir" >/dev/null
	if bd_paired "$name" wire --wire "$W/$name.wire"; then ok "$name: samples matched to the wire's log"
	else not_ok "$name: samples matched to the wire's log"; return; fi
	bd_pair_diag "$name"
	check "$name: half the samples faulted, 95 % matched" bd_pair_get "$name" \
		'(r["matched"] >= 0.95 * r["n"] and abs(r["faulted"] - r["matched"] / 2) <= 0.05 * r["n"]) or sys.exit(1)'
	check "$name: the truth is ${d_us} us one-way +-10 % (the wire applied the delay)" bd_pair_get "$name" \
		"abs(r['truth']['median_ns'] - $d_us * 1e3) <= 0.1 * $d_us * 1e3 or sys.exit(1)"
	check "$name: queuing difference = truth +-10 %" bd_pair_get "$name" \
		'0.9 <= r["parts"]["queuing"]["ratio"] <= 1.1 or sys.exit(1)'
	check "$name: processing difference within +-10 % of the truth" bd_pair_get "$name" \
		'abs(r["parts"]["processing"]["ratio"]) <= 0.1 or sys.exit(1)'
}

one ba 1000
one ba 300
one ba 100
one ab 1000
done_testing
