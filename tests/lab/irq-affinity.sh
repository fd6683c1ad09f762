#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: 6.1
# lab-smp: 2
# IRQ affinity end to end on the pair (the A/B proof is not judged yet, see below). On node1
# (responder) an application (a duty-cycled SCHED_FIFO CPU hog: 2 ms spin,
# 2 ms sleep) runs on CPU 1.
#   A: node1's NIC IRQs pinned to CPU 1, beside the application;
#   B: the same IRQs moved to CPU 0.
# `latsplit irq --cpus 1` warns in A and not in B. Then IRQ placements
# alternate inside one breakdown run: node1 moves its NIC IRQs between
# CPU 0 (beside the busy-polling responder) and CPU 1 (beside the
# application) every 0.3 s and logs each switch in its CLOCK_MONOTONIC;
# samples are matched to the switches through the responder's clock offset
# (2 ms kept clear of each switch). Adjacent blocks are compared by their
# processing medians and the ratios reported. Not judged yet: the
# direction followed the toggle's phase, not the CPU (see below). Separate
# A and B runs are no proof either: they judged the emulator's drift. With the application gone, the same
# alternation between two identical settings (A/A) gives a median ratio
# within [0.8, 1.25]. Separate runs minutes, even seconds, apart are no
# control here: quiet runs of this pair were seen 0.6 to 3.2 ms apart in
# processing p50, one after another. Busy polling,
# so the QP timeout can be short (-u 16: 268 ms a retry): the hog makes
# node1 drop packets now and then, and each drop costs one retry.
. "$(dirname "$0")/../lib.sh"
plan_none

B=$LS_BIN
N=${IRQ_E2E_ITERS:-300}
NALT=${IRQ_E2E_ALT_ITERS:-3000}
TOGGLE_S=${IRQ_E2E_TOGGLE_S:-0.3}
SH=$(lab_shared)
W=$SH/irq-e2e.$$
mkdir -p "$W"
cat > "$W/hog.py" <<'PY'
import os, time
os.sched_setaffinity(0, {1})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
open(os.path.join(os.path.dirname(__file__), "hog.ready"), "w").close()
end = time.monotonic() + 900
while time.monotonic() < end:
    t = time.monotonic()
    while time.monotonic() - t < 0.002:
        pass
    time.sleep(0.002)
PY

irqs=$(lab_exec 1 "$B irq -i eth0 -b none -j 0.1" |
	python3 -c 'import json,sys; print(" ".join(str(i["irq"]) for i in json.load(sys.stdin)["irqs"]))')
orig=
cleanup() {
	lab_exec 1 "pkill -f $W/hog.py; pkill -f $W/toggle.py; pkill -f 'latsplit (breakdown|irq)'" >/dev/null 2>&1
	for i in $irqs; do lab_exec 1 "echo 0-1 > /proc/irq/$i/smp_affinity_list" >/dev/null 2>&1; done
	for n in 0 1; do lab_exec "$n" "rmmod latsplit" >/dev/null 2>&1; done
	rm -rf "$W"
}
trap cleanup EXIT
[ -n "$irqs" ] && ok "node1's eth0 IRQs: $irqs" || { not_ok "node1's eth0 IRQs found"; done_testing; }
rel=$(lab_kver)
ko=$LS_TOP/build/kmod/$rel/kmod/latsplit.ko
if lab_exec 0 "insmod $ko" && lab_exec 1 "insmod $ko"; then
	ok "latsplit.ko loaded on both nodes"
else
	not_ok "latsplit.ko loaded on both nodes" "$ko"
fi

# pin_irqs CPU: every NIC IRQ of node1 to CPU.
pin_irqs() {
	local i
	for i in $irqs; do lab_exec 1 "echo $1 > /proc/irq/$i/smp_affinity_list" || return 1; done
}
# run_breakdown NAME: responder on node1 (CPU 0), prober on node0; irq profile in the middle.
run_breakdown() {
	local name=$1
	lab_bg 1 "taskset -c 0 timeout 600 $B breakdown -d rxe0 -u 16 --wait-timeout 60s --cpu 0 --listen-timeout 120s > $W/$name.resp 2>&1" >/dev/null
	for _ in $(seq 300); do grep -q listening "$W/$name.resp" 2>/dev/null && break; sleep 0.1; done
	lab_bg 1 "sleep 1; $B irq -i eth0 --cpus 1 --json 2 1 > $W/$name.irq.json 2> $W/$name.irq.err; echo \$? > $W/$name.irq.rc" >/dev/null
	lab_exec_t 600 0 "$B breakdown -d rxe0 -u 16 --wait-timeout 60s -n $N --json 192.0.2.2 > $W/$name.json 2> $W/$name.err"
	local rc=$?
	for _ in $(seq 100); do [ -s "$W/$name.irq.rc" ] && break; sleep 0.1; done
	return $rc
}
# warnings FILE: the warning codes of an irq JSON document.
warnings() { python3 -c 'import json,sys; print(" ".join(w["code"] for w in json.load(open(sys.argv[1]))["warnings"]))' "$1"; }

# The toggler: NIC IRQs of node1 alternate between two CPUs every PERIOD
# seconds during one breakdown, each switch logged in node1's
# CLOCK_MONOTONIC (the samples are matched to it through the responder's
# clock offset): A and B alternate inside one run, a few hundred ms apart.
cat > "$W/toggle.py" <<'PY'
import os, sys, time
irqs, cpus, period, out, stop = sys.argv[1].split(), sys.argv[2].split(","), float(sys.argv[3]), sys.argv[4], sys.argv[5]
log = open(out, "w")
end = time.monotonic() + 600
k = 0
while time.monotonic() < end and not os.path.exists(stop):
    for i in irqs:
        with open("/proc/irq/%s/smp_affinity_list" % i, "w") as f:
            f.write(cpus[k % 2])
    log.write("%d %d\n" % (time.monotonic_ns(), k % 2))
    log.flush()
    k += 1
    time.sleep(period)
PY

lab_bg 1 "python3 $W/hog.py" >/dev/null
# The interpreter takes seconds to start under the emulator: wait for SCHED_FIFO.
for _ in $(seq 300); do [ -e "$W/hog.ready" ] && break; sleep 0.1; done
[ -e "$W/hog.ready" ] || diag "the hog did not report SCHED_FIFO within 30 s"
check "A: NIC IRQs pinned to the application's CPU 1" pin_irqs 1
run_breakdown A1 && ok "A: breakdown ran" || not_ok "A: breakdown ran" "$(cat "$W/A1.err" "$W/A1.resp")"
check "B: NIC IRQs moved to CPU 0" pin_irqs 0
run_breakdown B1 && ok "B: breakdown ran" || not_ok "B: breakdown ran" "$(cat "$W/B1.err")"

wa=$(warnings "$W/A1.irq.json" 2>&1); wb=$(warnings "$W/B1.irq.json" 2>&1)
if [[ " $wa " == *" irq-on-app-cpu "* ]] && [ "$(cat "$W/A1.irq.rc")" = 1 ]; then
	ok "irq warned in A: $wa"
else
	not_ok "irq warned in A" "warnings '$wa', exit $(cat "$W/A1.irq.rc" 2>/dev/null)" "$(cat "$W/A1.irq.err" 2>/dev/null)"
fi
if [ -z "$wb" ] && [ "$(cat "$W/B1.irq.rc")" = 0 ]; then
	ok "irq did not warn in B"
else
	not_ok "irq did not warn in B" "warnings '$wb', exit $(cat "$W/B1.irq.rc" 2>/dev/null)"
fi

# alternate NAME CPUS: one long breakdown while the toggler alternates the
# IRQs between the two CPUs of CPUS ("1,0": A then B; "0,0": A/A).
alternate() {
	local name=$1 cpus=$2 rc
	rm -f "$W/$name.stop" "$W/$name.tog"
	lab_bg 1 "taskset -c 0 timeout 600 $B breakdown -d rxe0 -u 16 --wait-timeout 60s --cpu 0 --listen-timeout 120s > $W/$name.resp 2>&1" >/dev/null
	for _ in $(seq 300); do grep -q listening "$W/$name.resp" 2>/dev/null && break; sleep 0.1; done
	lab_bg 1 "python3 $W/toggle.py '$irqs' $cpus $TOGGLE_S $W/$name.tog $W/$name.stop" >/dev/null
	for _ in $(seq 300); do [ -s "$W/$name.tog" ] && break; sleep 0.1; done
	lab_exec_t 900 0 "$B breakdown -d rxe0 -u 16 --wait-timeout 60s -n $NALT --json --samples $W/$name.csv 192.0.2.2 > $W/$name.json 2> $W/$name.err"
	rc=$?
	: > "$W/$name.stop"
	sleep 1
	return $rc
}

# blocks NAME: per pair of adjacent blocks (A, then B), the ratio of their
# processing medians; prints "pairs median_ratio a_higher" and diagnostics.
blocks() {
	python3 - "$W/$1.csv" "$W/$1.json" "$W/$1.tog" "$TOGGLE_S" <<'PYEOF'
import csv, json, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
theta = json.load(open(sys.argv[2])).get("responder_clock_offset_ns", 0)
tog = [tuple(int(x) for x in l.split()) for l in open(sys.argv[3]) if l.strip()]
guard = 2e6
blocks = []      # (state, [processing]) per toggle interval, in the prober's clock
for k, (t, st) in enumerate(tog):
    t0 = t - theta
    t1 = (tog[k + 1][0] - theta) if k + 1 < len(tog) else float("inf")
    v = [float(r["processing_ns"]) for r in rows
         if t0 + guard <= int(r["start_ns"]) and int(r["end_ns"]) <= t1 - guard]
    if len(v) >= 10:
        blocks.append((st, k, statistics.median(v)))
ratios = []
for x, y in zip(blocks, blocks[1:]):
    if x[0] == 0 and y[0] == 1 and y[1] == x[1] + 1:
        ratios.append(x[2] / y[2])
if not ratios:
    print("0 0 0")
    sys.exit(0)
print("%d %.3f %d" % (len(ratios), statistics.median(ratios), sum(r > 1 for r in ratios)))
print("# %d toggles, %d blocks of >= 10 samples; A/B ratios: %s" % (
    len(tog), len(blocks), " ".join("%.2f" % r for r in ratios)), file=sys.stderr)
PYEOF
}

# judge_alt NAME CPUS WHAT COND: alternate, then judge the block pairs;
# COND is a python condition over np (pairs), med (median A/B ratio) and
# hi (pairs with A above B).
judge_alt() {
	local name=$1 cpus=$2 what=$3 cond=$4 np med hi
	if alternate "$name" "$cpus"; then ok "$name: placements alternated inside one run ($NALT samples)"
	else not_ok "$name: placements alternated inside one run" "$(cat "$W/$name.err")"; fi
	read -r np med hi < <(blocks "$name" 2> "$W/$name.diag")
	diag "$(cat "$W/$name.diag")"
	if [ "${np:-0}" -ge 5 ] &&
	   python3 -c "import sys; np, med, hi = $np, $med, $hi; sys.exit(not ($cond))"; then
		ok "$name: $what (A above B in $hi of $np block pairs, median ratio $med)"
	else
		not_ok "$name: $what" "pairs ${np:-0}, A above B in ${hi:-0}, median ratio ${med:-?}"
	fi
}

# With the application running: A (IRQs on CPU 0, beside the busy-polling
# responder) against B (CPU 1), adjacent blocks TOGGLE_S apart. Reported,
# not judged: the direction followed the toggle's phase rather than the
# CPU (0.66 with CPU 1 first, 0.79-0.81 with CPU 0 first), so the
# sample-to-switch alignment is not trusted yet; the condition only asks
# that the run produced its block pairs.
judge_alt AB 0,1 "placements alternated, block pairs measured (ratio reported, not judged)" \
	"np >= 5"
# The A/A control on the quiet pair, the application gone: the same
# alternation between two identical settings.
lab_exec 1 "pkill -f $W/hog.py" >/dev/null 2>&1
judge_alt AA 0,0 "identical settings: median ratio of adjacent blocks within [0.8, 1.25]" \
	"0.8 <= med <= 1.25"
check "dmesg clean on node1" dmesg_clean 1
done_testing
