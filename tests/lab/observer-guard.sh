#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The observer must not move what it observes: a loose guard, judged inside
# one run. On node0, `latsplit record --ab` runs the backend configured as a
# breakdown prober configures it (the NIC's IRQs, the probe's CPU for
# interference, the probe task named, records on and no histograms
# (--no-hist: what the eBPF programs skip for breakdown), drained off the
# probe's CPU where there is another) around
# `latsplit probe`, and switches recording off and on every PHASE: the
# probe's samples in neighbouring phases differ only by the recording, so
# the emulator's drift (2-3x over minutes, slow spells of seconds) cancels.
# tests/lab/observer_ab.py takes one log-ratio of the phases' median round
# trips per neighbouring (on, off) pair. Asserted, per backend (latsplit.ko
# and eBPF): at least 10 pairs, their ratio not surely above 2 (the 99 %
# interval's lower end <= 2: eBPF on 6.1-rt with two CPUs reads 1.4-2.1; the benchmark,
# tests/bench/observer-cost.sh, holds the tight goals), the backend ran in
# the on phases and no record starts inside an off phase (pausing really
# stops it), the probe completed, dmesg stays clean.
# lab-kernels: all
# lab-smp: any
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kmod-common.inc"

N=${OBS_GUARD_ITERS:-4000}
PHASE=${OBS_GUARD_PHASE:-150ms}
PORT=19641
SH=$(lab_shared)
W=$SH/observer-guard.$$
mkdir -p "$W"
cp "$LS_BIN" "$W/latsplit"
B=$W/latsplit
plan_none
kmod_require
loaded=
# As breakdown keeps its drain thread off the probe's CPU when there is
# another, record (which drains in its main thread) runs on CPU 1 then; the
# probe pins itself to CPU 0.
PIN=
[ "$(lab_exec 0 nproc)" -gt 1 ] && PIN="taskset -c 1"

cleanup() {
	[ -s "$W/srv.pid" ] && lab_exec 1 "kill $(cat "$W/srv.pid") 2>/dev/null; true"
	[ -n "$loaded" ] && kmod_unload 0
	rm -rf "$W"
}
trap cleanup EXIT

# one BACKEND: an A/B run on node0 with BACKEND, judged; the responder on node1 unrecorded.
one() {
	local be=$1 out
	rm -f "$W/srv.pid" "$W/srv.log"
	lab_bg 1 "$B probe --insecure -p $PORT -u 20 --listen-timeout 120 > $W/srv.log 2>&1 & echo \$! > $W/srv.pid; wait" >/dev/null
	for _ in $(seq 50); do grep -q listening "$W/srv.log" 2>/dev/null && break; sleep 0.2; done
	check "$be: record --ab $PHASE around $N probe samples (probe on CPU 0, recorded as breakdown records)" \
		lab_exec_t 900 0 "$PIN $B record -b $be -i eth0 -c 0 --pid-command --no-hist --records $W/$be.rec --ab $PHASE --json -- \
			sh -c 'exec $B probe -p $PORT -u 20 -n $N --cpu 0 --samples $W/$be.csv 192.0.2.2 > $W/$be.probe' \
			> $W/$be.json 2> $W/$be.err"
	[ -s "$W/srv.pid" ] && lab_exec 1 "kill $(cat "$W/srv.pid") 2>/dev/null; true"
	rm -f "$W/srv.pid"
	if [ ! -s "$W/$be.json" ] || [ ! -s "$W/$be.csv" ]; then
		not_ok "$be: the A/B run left its record JSON and samples" "$(tail -5 "$W/$be.err" 2>/dev/null)"
		return
	fi
	out=$(python3 "$LS_TOP/tests/lab/observer_ab.py" "$W/$be.json" "$W/$be.csv" --records "$W/$be.rec" 2>&1)
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "$be: ${line#PASS }" ;;
		FAIL\ *) not_ok "$be: ${line#FAIL }" ;;
		SUMMARY\ *) diag "$be: ${line#SUMMARY }" ;;
		*) [ -n "$line" ] && diag "$line" ;;
		esac
	done <<< "$out"
	case $out in *Traceback*|'') not_ok "$be: observer_ab.py ran" "$out" ;; esac
}

check "node0: insmod latsplit.ko" kmod_load 0
loaded=1
one kmod
kmod_unload 0
loaded=
one ebpf
if out=$(dmesg_clean 0); then ok "node0: dmesg has no WARNING/BUG/Oops/lockdep"; else not_ok "node0: dmesg clean" "$out"; fi
done_testing
