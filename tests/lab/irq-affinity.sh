#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: 6.1
# lab-smp: 2
# Proving an IRQ-affinity change helped, end to end on the pair. On node1
# (responder) an application (a duty-cycled SCHED_FIFO CPU hog: 2 ms spin,
# 2 ms sleep) runs on CPU 1.
#   A: node1's NIC IRQs pinned to CPU 1, beside the application;
#   B: the same IRQs moved to CPU 0.
# `latsplit irq --cpus 1` warns in A and not in B. A and B alternate in
# short blocks (A B A B A B); `latsplit compare` of each adjacent A/B pair
# finds processing significantly better in B in at least 2 of the 3 pairs;
# with the application gone, three pairs of consecutive quiet blocks (A/A)
# show no significant change in at least 2 of 3. Both comparisons count only changes of
# at least 25 % (compare --min-change): consecutive quiet runs under the
# emulator drift by up to ~16 % (significant at n = 600), the fault moves
# processing 2-10x. With the hog running, the guest's two vCPUs share one
# TCG thread with it and consecutive runs of one setup drift 30 %-2.4x, so
# the A/A pair is the quiet one. Busy polling,
# so the QP timeout can be short (-u 16: 268 ms a retry): the hog makes
# node1 drop packets now and then, and each drop costs one retry.
. "$(dirname "$0")/../lib.sh"
plan_none

B=$LS_BIN
N=${IRQ_E2E_ITERS:-300}
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
	lab_exec 1 "pkill -f $W/hog.py; pkill -f 'latsplit (breakdown|irq)'" >/dev/null 2>&1
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

lab_bg 1 "python3 $W/hog.py" >/dev/null
# The interpreter takes seconds to start under the emulator: wait for SCHED_FIFO.
for _ in $(seq 300); do [ -e "$W/hog.ready" ] && break; sleep 0.1; done
[ -e "$W/hog.ready" ] || diag "the hog did not report SCHED_FIFO within 30 s"
# Short blocks, A B A B A B: each A/B pair is seconds apart, so the
# emulator's drift between runs minutes apart cannot decide the comparison.
for k in 1 2 3; do
	check "A$k: NIC IRQs pinned to the application's CPU 1" pin_irqs 1
	run_breakdown "A$k" && ok "A$k: breakdown ran" || not_ok "A$k: breakdown ran" "$(cat "$W/A$k.err" "$W/A$k.resp")"
	check "B$k: NIC IRQs moved to CPU 0" pin_irqs 0
	run_breakdown "B$k" && ok "B$k: breakdown ran" || not_ok "B$k: breakdown ran" "$(cat "$W/B$k.err")"
done
# The A/A false-positive control on the quiet pair, the application gone:
# consecutive quiet blocks, paired the same way.
lab_exec 1 "pkill -f $W/hog.py" >/dev/null 2>&1
for k in 1 2 3 4 5 6; do
	run_breakdown "Q$k" && ok "quiet Q$k: breakdown ran" || not_ok "quiet Q$k: breakdown ran" "$(cat "$W/Q$k.err")"
done

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

# direction FILE SERIES: p50_direction and regression of one compare row.
direction() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [s for s in d["series"] if s["name"] == sys.argv[2]][0]
print(r["p50_direction"], r["p50_a_ns"], r["p50_b_ns"], r["mwu_p_adj"])' "$1" "$2"
}
# pairs X Y...: compare each block pair (--min-change 25); prints the directions.
pairs() {
	local x y dir pa pb padj out=
	while [ $# -ge 2 ]; do
		x=$1 y=$2
		shift 2
		"$B" compare --json --min-change 25 "$W/$x.json" "$W/$y.json" > "$W/$x$y.cmp" 2> "$W/$x$y.err"
		read -r dir pa pb padj < <(direction "$W/$x$y.cmp" parts.processing 2>/dev/null)
		diag "compare $x $y: processing p50 $pa -> $pb ns, direction ${dir:-?}, p_adj $padj"
		out="$out ${dir:-x}"
	done
	echo "$out"
}
ab=$(pairs A1 B1 A2 B2 A3 B3)
nb=$(tr ' ' '\n' <<< "$ab" | grep -c '^-1$')
if [ "$nb" -ge 2 ]; then ok "A/B block pairs: processing significantly better in B in $nb of 3 ($ab)"
else not_ok "A/B block pairs: processing significantly better in B in at least 2 of 3" "directions:$ab"; fi
aa=$(pairs Q1 Q2 Q3 Q4 Q5 Q6)
n0=$(tr ' ' '\n' <<< "$aa" | grep -c '^0$')
if [ "$n0" -ge 2 ]; then ok "quiet A/A block pairs: no significant change in processing in $n0 of 3 ($aa)"
else not_ok "quiet A/A block pairs: no significant change in at least 2 of 3" "directions:$aa"; fi
check "dmesg clean on node1" dmesg_clean 1
done_testing
