#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Latency regression suite: boot the lab on a kernel, record a breakdown
# (4 B RDMA WRITE, latsplit.ko on both nodes) and an irq profile of the
# responder's NIC during it, then either store them as the baseline or
# compare them with the stored one (latsplit compare --max-regress). TAP.
#
#   tests/regress.sh record|run [--kver K] [--baseline DIR] [--name NAME]
#                               [--max-regress PCT] [--duration SECS] [--lab NAME]
#                               [--netem DELAY]   (fault injection, for tests)
#
# --lab uses a lab that is already up (tests/run.sh's) instead of booting one.
. "$(dirname "$0")/lib.sh"

mode=${1:-}; shift || true
KVER=6.1 BASE=$LS_TOP/build/regress NAME= MAXR=25 DUR=8 LAB= NETEM=
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) KVER=$2; shift 2 ;;
	--baseline) BASE=$2; shift 2 ;;
	--name) NAME=$2; shift 2 ;;
	--max-regress) MAXR=$2; shift 2 ;;
	--duration) DUR=$2; shift 2 ;;
	--lab) LAB=$2; shift 2 ;;
	--netem) NETEM=$2; shift 2 ;;
	*) echo "regress: unknown option $1" >&2; exit 2 ;;
	esac
done
case "$mode" in record|run) ;; *) echo "usage: regress.sh record|run [options]" >&2; exit 2 ;; esac
[[ "$DUR" =~ ^[0-9]+$ ]] && [ "$DUR" -ge 6 ] || { echo "regress: --duration takes whole seconds, at least 6" >&2; exit 2; }

plan_none
own_lab=
if [ -z "$LAB" ]; then
	LAB=regress-$$
	own_lab=1
	if "$LS_LAB" up --name "$LAB" --kver "$KVER" > /dev/null; then
		ok "lab boots $KVER"
	else
		not_ok "lab boots $KVER"; done_testing
	fi
fi
export LAB_NAME=$LAB
rel=$(lab_kver)
NAME=${NAME:-$rel}
SH=$(lab_shared)
W=$SH/regress.$$
mkdir -p "$W"
cleanup() {
	[ -n "$NETEM" ] && lab_exec 1 "tc qdisc del dev eth0 root" >/dev/null 2>&1
	lab_exec 1 "pkill -f 'latsplit (irq|breakdown)'" >/dev/null 2>&1
	for n in 0 1; do lab_exec "$n" "rmmod latsplit" >/dev/null 2>&1; done
	rm -rf "$W"
	[ -n "$own_lab" ] && "$LS_LAB" down --name "$LAB" >/dev/null 2>&1
}
trap cleanup EXIT

dir=$BASE/$NAME
# Compare with nothing: say so before spending a run on it.
if [ "$mode" = run ]; then
	for f in breakdown irq; do
		[ -s "$dir/$f.json" ] && continue
		not_ok "compare $f with the baseline" "no baseline $dir/$f.json: run 'make -C tests baseline KVER=$KVER' first"
	done
	[ "$_tap_fail" = 0 ] || done_testing
fi

ko=$LS_TOP/build/kmod/$rel/kmod/latsplit.ko
if lab_exec 0 "insmod $ko" && lab_exec 1 "insmod $ko"; then
	ok "latsplit.ko loaded on both nodes ($rel)"
else
	not_ok "latsplit.ko loaded on both nodes" "$ko"; done_testing
fi
if [ -n "$NETEM" ]; then
	check "fault injected: netem delay $NETEM on node1 eth0" lab_exec 1 "tc qdisc add dev eth0 root netem delay $NETEM"
fi

# The breakdown runs for DUR seconds (a duration, not a count: the lab's
# speed varies, and the profile below must fall inside the run); the irq
# profile of the responder's NIC takes 3 s of it, from 1 s after the prober
# connected (port 19515, the default).
lab_bg 1 "timeout 600 $LS_BIN breakdown --insecure -d rxe0 -u 20 --listen-timeout 120s > $W/resp.log 2>&1" >/dev/null
for _ in $(seq 300); do grep -q listening "$W/resp.log" 2>/dev/null && break; sleep 0.1; done
lab_bg 1 "for i in \$(seq 300); do ss -Htn state established '( sport = :19515 )' | grep -q . && break; sleep 0.1; done;
	sleep 1; $LS_BIN irq -d rxe0 --json 3 1 > $W/irq.json 2> $W/irq.err" >/dev/null
if lab_exec_t 600 0 "$LS_BIN breakdown -d rxe0 -u 20 -D ${DUR}s --json 192.0.2.2 > $W/breakdown.json 2> $W/breakdown.err"; then
	ok "breakdown ran (${DUR} s)"
else
	not_ok "breakdown ran" "$(cat "$W/breakdown.err" "$W/resp.log" 2>/dev/null)"
fi
for _ in $(seq 100); do [ -s "$W/irq.json" ] && break; sleep 0.1; done
sleep 1
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"] == "irq" and d["irqs"]' "$W/irq.json" 2>/dev/null; then
	ok "irq profile of node1's NIC recorded"
else
	not_ok "irq profile recorded" "$(cat "$W/irq.json" "$W/irq.err" 2>/dev/null)"
fi

if [ "$mode" = record ]; then
	[ "$_tap_fail" = 0 ] || { not_ok "baseline not stored: the run failed"; done_testing; }
	mkdir -p "$dir" && cp "$W/breakdown.json" "$W/irq.json" "$dir/" &&
		ok "baseline stored in $dir" || not_ok "baseline stored in $dir"
	done_testing
fi
for f in breakdown irq; do
	out=$("$LS_BIN" compare --max-regress "$MAXR" "$dir/$f.json" "$W/$f.json" 2>&1); rc=$?
	case $rc in
	0) ok "no significant $f regression above ${MAXR}% against $NAME" ;;
	1) not_ok "$f regressed by more than ${MAXR}% against $NAME" "$out" ;;
	*) not_ok "compare $f with the baseline (exit $rc)" "$out" ;;
	esac
	diag "$(echo "$out" | head -n 12)"
done
done_testing
