#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ground truth for queuing, judged inside one run: the host wire
# (tools/lab/labwire.c) holds half of the probe answers (node1 -> node0 RDMA
# WRITE requests whose PSN hashes to 1: psn=hash, a pseudo-random half not
# tied to the sample's parity) for 2D, so those samples' one-way latency
# (RTT/2) grows by D; once more with half the probe requests (node0 ->
# node1) held instead. Each sample is matched to the wire's own log by QPN
# and PSN (tests/lab/paired.py): the truth per sample is the time its two
# frames really spent on the wire. The median difference between a faulted
# sample and its unfaulted neighbours, per part, must give queuing = truth
# +-10 %; the emulator's drift is slow against one round trip and cancels.
# What the probe's total moved beyond the wire's hold is the hosts' own
# change (a held request can meet a responder that went idle):
# processing must equal that change within 10 % of the truth (15 % at
# 0.3 ms: a held sample's longer window overlaps more unrelated kernel
# work, which the split still counts as processing, 3-10 % of D in CI
# runs: the causal-attribution issue). D = 1, 0.3 and 0.1 ms one-way on
# the answers, 1 and 0.1 ms on the requests. At 0.1 ms, 3200 samples
# measure to about +-20 us (the 99.9 % interval of the median), too coarse
# for +-10 %: there queuing must move by 0.5-1.2 of the hold and
# processing by less than 30 % of it (measured 0.86-1.03 and -0.01-0.27).
# lab-kernels: 6.1 6.12
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
plan_none
BD_ITERS=${BD_QUEUING_ITERS:-800}
bd_backend_setup

# one DIR D_US: a run with half the probe frames in DIR held 2 x D_US, judged.
one() {
	local dir=$1 d_us=$2 name=q$1$2 BD_ITERS=$BD_ITERS
	# smaller holds: more samples for the precision (0.1 ms: a looser bound, see above)
	[ "$d_us" -ge 1000 ] || BD_ITERS=$((BD_ITERS * 3))
	[ "$d_us" -ge 300 ] || BD_ITERS=$((BD_ITERS * 4 / 3))
	wire rule "$dir" 0 roce=1 op=req psn=hash delay=$((2 * d_us * 1000)) >/dev/null
	wire log "$W/$name.wire" >/dev/null
	if bd_run "$name" "" "--samples $W/$name.csv"; then ok "$name: run with half the $dir probe frames held $((2 * d_us)) us"
	else not_ok "$name: run with half the $dir probe frames held" "$(cat "$W/$name.err")"; fi
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
	if [ "$d_us" -ge 300 ]; then
		local tol=10
		[ "$d_us" -ge 1000 ] || tol=15
		check "$name: queuing difference = truth +-$tol %" bd_pair_get "$name" \
			"abs(r['parts']['queuing']['median_ns'] - r['truth']['median_ns']) <= $tol / 100 * r['truth']['median_ns'] or sys.exit(1)"
		check "$name: processing difference = the hosts' own change +-$tol % of the truth" bd_pair_get "$name" \
			"abs(r['parts']['processing']['median_ns'] - r['host']['median_ns']) <= $tol / 100 * r['truth']['median_ns'] or sys.exit(1)"
	else
		check "$name: queuing difference within [0.5, 1.2] of the truth" bd_pair_get "$name" \
			"0.5 <= r['parts']['queuing']['ratio'] <= 1.2 or sys.exit(1)"
		check "$name: processing difference within +-30 % of the truth (the hold is not called processing)" bd_pair_get "$name" \
			"abs(r['parts']['processing']['ratio']) <= 0.3 or sys.exit(1)"
	fi
}

for c in ${BD_QUEUING_CASES:-ba:1000 ba:300 ba:100 ab:1000 ab:100}; do
	one "${c%%:*}" "${c#*:}"
done
done_testing
