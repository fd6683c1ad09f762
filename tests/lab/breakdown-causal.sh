#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Causal attribution with two CPUs per node: the probe pinned to CPU 1 on
# both sides, the NIC's IRQs either all on CPU 0 ("away": every NAPI poll
# on the CPU that does not run the probe; as booted, the effective
# affinity is CPU 0 too) or all on CPU 1 ("beside" the probe: the receive
# path is the probe CPU's interference as well), or spread over both
# ("spread": node N's receive IRQ on CPU N, its transmit IRQ on the other:
# the prober receives away from its probe, the responder beside it; a lab
# NIC has one queue pair, so no further spread exists). The
# host wire holds half of the probe answers (psn=hash) 6 ms, so those
# samples' one-way latency grows by 3 ms. Per sample, judged against the
# wire's own log (tests/lab/paired.py) and contrasted with unfaulted
# neighbours inside one run: queuing minus the truth, and processing minus
# the hosts' own change, must both be consistent with 0 +-10 % of the truth
# (99.9 % interval reaching the band, measured to +-15 %), with each
# backend. Counted by overlap, the polls on CPU 0 that ran while an answer
# sat on the wire made that hold "processing" (0.6-0.8 of it); counted by
# path they are concurrent context. Each backend's RX_PKT records must
# name 95 % of the samples on both hosts, and a run without a fault must
# have under 1 % clamped samples (the fidelity alarm stays silent).
# "Away", the hosts' own change (the probe's total beyond the wire's
# hold) is partly time no guest clock sees: the emulator runs one vCPU at a
# time, so while CPU 0 works (path or not) the busy-polling probe's CPU 1
# does not run. Measured from -1.1 to +1.1 ms on a 3 ms hold, shown as
# processing in one run and left in the residual in another; there each
# part must lie within that change of its ideal (+-10 % of the hold,
# measured to +-20 %; processing as processing minus the change, pair by
# pair, because the change itself spreads the raw processing), and the
# hold itself never in processing (the overlap rule put 0.6-0.8 of it
# there). The two checks are one identity (the parts add up to the total);
# both stay because the issue names both. "Beside", the change is visible and judged exactly as above.
# "Spread" is judged as "away" (the prober's receive path is on CPU 0).
# Both backends and all three IRQ placements on 6.1 and 6.12; runs
# without a fault on the first placement only (the suite's time budget).
# On 6.12 Soft-RoCE runs its send and receive work in a workqueue
# (tasklets on 6.1): a message waits 1.5-3.5 ms for a CPU before it leaves,
# and the held samples' own change swings by a millisecond between runs
# (+1.1 ms "beside", -1.3 ms "spread"). The responder's clock offset then
# has to come from the packets (the responder_clock_offset_from check):
# taken from the application stamps it was off by up to 0.87 ms, and
# 0.11-0.15 of the hold read as processing in some runs ("away", "spread",
# "beside" alike).
# The hold is one-way
# 3 ms: with two vCPUs on one emulator thread neighbouring samples differ
# by milliseconds, and a 1 ms step would need thousands of samples to be
# measured to +-15 %.
# lab-kernels: 6.1 6.12
# lab-smp: 2
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

trap bd_cleanup EXIT
[ "$(lab_exec 1 nproc)" -ge 2 ] || skip_all "needs a 2-CPU lab (lab up --smp 2)"
plan_none
BD_ITERS=${BD_CAUSAL_ITERS:-800}
BD_CHUNKS=${BD_CAUSAL_CHUNKS:-3}
HOLD_NS=${BD_CAUSAL_HOLD_NS:-6000000}
bd_backend_setup
[ ${#BD_KMOD_LOADED[@]} -eq 2 ] || diag "latsplit.ko not loaded on both nodes: kmod cases fail"
PLACEMENTS=${BD_CAUSAL_PLACEMENTS:-away beside spread}

bd_irqs_save

# place NAME: the NIC's IRQs on CPU 0 (away), on CPU 1 (beside the probe)
# or spread over both.
place() {
	case $1 in
	away) bd_irqs_place 0 ;;
	beside) bd_irqs_place 1 ;;
	spread) bd_irqs_spread ;;
	esac
}

# placed NAME: the NIC's IRQs really are where NAME puts them (x86 moves
# an MSI's effective affinity at its next interrupt: call after traffic).
placed() {
	local n want got bad=
	for n in 0 1; do
		got=$(lab_exec "$n" "grep -E 'virtio[0-9]+-(input|output)' /proc/interrupts | while read -r irq rest; do
			irq=\${irq%:}; echo -n \"\${rest##* }:\$(cat /proc/irq/\$irq/effective_affinity_list) \"; done")
		case $1 in
		away) want="input.0:0 output.0:0" ;;
		beside) want="input.0:1 output.0:1" ;;
		spread) want="input.0:$n output.0:$((1 - n))" ;;
		esac
		for w in $want; do [[ " $got" == *"-$w "* ]] || bad+=" node$n:$w"; done
		diag "node$n: NIC IRQs $1: $got"
	done
	[ -z "$bad" ] && ok "NIC IRQs placed $1 on both nodes" ||
		not_ok "NIC IRQs placed $1 on both nodes" "not where wanted:$bad"
}

# healthy NAME: a run without a fault; the fidelity alarm stays silent.
healthy() {
	local name=$1 BD_ITERS=400
	if bd_run "$name" "--cpu 1" "--cpu 1"; then
		check "$name: no fault: clamped samples under 1 %, attribution reliable, verdict given" \
			bd_get "$W/$name.json" \
			"(d['attribution']['clamped'] * 100 < d['total']['count'] and d['attribution']['reliable'] and not d['verdict']['withheld']) or sys.exit(1)"
		diag "$name: clamped $(bd_get "$W/$name.json" "d['attribution']['clamped']") of $(bd_get "$W/$name.json" "d['total']['count']")"
	else
		not_ok "$name: run without a fault" "$(cat "$W/$name.err")"
	fi
}

# one PLACEMENT BACKEND: wire-held answers, judged per sample.
one() {
	# Runs are added until the parts judged below are precise.
	local name=c$1$2 BD_BACKEND=$2 BD_GATE_PARTS="queuing-truth processing-host"
	wire rule ba 0 roce=1 op=req psn=hash delay=$HOLD_NS >/dev/null
	bd_wire_chunks "$name" 0.15 "--cpu 1" "--cpu 1" "half the answers held $((HOLD_NS / 1000)) us ($2)"
	wire norule ba >/dev/null
	[ "$BD_K" -gt 0 ] || return
	bd_pair_diag "$name"
	bd_diag "$W/$name.json"
	check "$name: 95 % matched, exactly the answers whose PSN hashes to 1 held" bd_pair_get "$name" \
		'(r["matched"] >= 0.95 * r["n"] and r["faulted"] == r["hashed"]["ans"]) or sys.exit(1)'
	check "$name: RX_PKT records named 95 % of the samples on both hosts" bd_get "$W/$name.json" \
		"all(h['samples_matched'] >= 0.95 * h['samples'] for h in d['attribution']['hosts']) and len(d['attribution']['hosts']) == 2 or sys.exit(1)"
	check "$name: TX_PKT records ended the SEND of 95 % of the samples on both hosts, RX_PKT began their DELIVER" bd_get "$W/$name.json" \
		"all(min(h['samples_sent'], h['samples_delivered']) >= 0.95 * h['samples'] for h in d['attribution']['hosts']) or sys.exit(1)"
	check "$name: the responder's clock offset came from the packets' records, not the application stamps" bd_get "$W/$name.json" \
		"d['responder_clock_offset_from'] == 'packets' or sys.exit(1)"
	if [ "$1" = beside ]; then
		check "$name: queuing difference = the wire's hold +-10 % (measured to +-15 %)" \
			bd_pair_within "$name" queuing-truth 0 0.1 0.15
		check "$name: processing difference = the hosts' own change +-10 % of the hold (measured to +-15 %)" \
			bd_pair_within "$name" processing-host 0 0.1 0.15
	else
		check "$name: queuing difference = the wire's hold, within the hosts' own change +-10 % of it (measured to +-20 %)" \
			bd_pair_span "$name" queuing-truth 0.1 0.2
		# Processing is judged per pair against the hosts' change
		# (processing-host): the raw difference carries that change's
		# whole spread (+-23 % after three runs, where processing-host
		# was +-6 %).
		check "$name: processing difference = 0, within the hosts' own change +-10 % of the hold (measured to +-20 %)" \
			bd_pair_span "$name" processing-host 0.1 0.2 -1
	fi
}

for pl in $PLACEMENTS; do
	place "$pl"
	# A fresh placement's first run is slow (the emulator translates new code once).
	BD_ITERS=200 bd_run "warm$pl" "--cpu 1" "--cpu 1" >/dev/null 2>&1 || diag "warm-up run failed: $(tail -n 3 "$W/warm$pl.err" 2>/dev/null)"
	placed "$pl"
	for be in kmod ebpf; do
		# Healthy runs on the first placement (the suite's time budget).
		[ "$pl" = "${PLACEMENTS%% *}" ] && BD_BACKEND=$be healthy "h$pl$be"
		one "$pl" "$be"
	done
done
for n in 0 1; do check "node$n: dmesg clean" dmesg_clean "$n"; done
done_testing
