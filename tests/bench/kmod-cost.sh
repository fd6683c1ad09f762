#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit.ko cost per tracepoint event, against the same workload without
# any backend and with the eBPF backend, measured in the same run.
#
# Boots a one-node lab (one vCPU: workload, softirqs and probes share it)
# with QEMU's instruction counting (--icount 0): the guest's clock advances
# 1 ns per instruction executed, so a guest-timed batch is its instruction
# count, free of the host's scheduling noise and of the emulator's uneven
# cost per instruction (a 'ns' below is one guest instruction). Two
# micro-workloads (tests/bench/kmod_cost.c), each the minimum over short
# batches (a timer tick lands in some):
#   udp    loopback UDP send+recv: 1 NET_RX softirq = 4 tracepoint hits
#          (softirq_raise, softirq_entry, napi_poll, softirq_exit)
#   pipe   two threads on one CPU passing a byte through two pipes: per
#          context switch 3 hits (sched_waking and sched_wakeup of the
#          woken thread, sched_switch), both threads named (--pid): each
#          wakeup starts a PREEMPT, each switch ends one
# Modes alternate each round: none, kmod, ebpf; the backends run under
# `latsplit record --backend X --irq <eth0's IRQs> -c 0 --pid <workload>`,
# CPU 0 being an INTERFERENCE CPU, so every stage that can fire does.
#
# cost/hit = (instructions per iteration with the backend - without) /
# tracepoint hits per iteration (counted from /proc/softirqs and /proc/stat
# in the run). Goal: kmod <= half of eBPF's cost.
# Exit 1 when a ratio misses the goal, 4 when no lab can boot here.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$TOP/tools/lab/lab
BIN=$TOP/build/latsplit
NAME=kmodcost$$
KVER=${LS_BENCH_KVER:-6.1}
ROUNDS=${LS_BENCH_ROUNDS:-3}
BATCHES=${LS_BENCH_BATCHES:-40}
ITERS=${LS_BENCH_ITERS:-200}
ICOUNT=${LS_BENCH_ICOUNT:-0}

make -s -C "$TOP" tools >/dev/null 2>&1 || [ -x "$BIN" ] || { echo "# bench kmod-cost: cannot build $BIN"; exit 2; }
make -s -C "$TOP" kmod KVER="$KVER" >/dev/null || exit 2
if ! "$LAB" up --name "$NAME" --nodes 1 --smp 1 --kver "$KVER" --icount "$ICOUNT" --timeout 600 >/dev/null 2>&1; then
	echo "# bench kmod-cost: SKIP: the lab does not boot here (tools/lab/lab up)"
	exit 4
fi
trap '"$LAB" down --name "$NAME" >/dev/null 2>&1' EXIT
SH=$("$LAB" shared --name "$NAME")
cc -O2 -std=gnu11 -D_GNU_SOURCE -pthread -o "$SH/kmod_cost" "$TOP/tests/bench/kmod_cost.c" || exit 2
rel=$("$LAB" info --name "$NAME" kver)
KO=$TOP/build/kmod/$rel/kmod/latsplit.ko

cat > "$SH/run.sh" <<EOF
set -u
insmod $KO || exit 2
irqs=\$(ls /sys/class/net/eth0/device/../msi_irqs | sort -n | paste -sd, -)
R=/tmp/kmod-cost
ebpf=1
$BIN record --backend ebpf --irq \$irqs -c 0 -- true > /dev/null 2>&1 || ebpf=0
# one MODE WORKLOAD: prints "MODE WORKLOAD ns_per_iter hits_per_iter".
# The workload publishes its thread ids and waits; the backend (if any)
# attaches naming them, lets it go and ends when it closes DONE.
one() {
	rm -f \$R \$R.tids \$R.go \$R.done
	mkfifo \$R.go \$R.done
	$SH/kmod_cost \$2 $BATCHES $ITERS \$R.go \$R.done \$R.tids > \$R &
	kp=\$!
	while [ ! -s \$R.tids ] && kill -0 \$kp 2>/dev/null; do sleep 0.1; done
	go="echo go > \$R.go; cat \$R.done"
	case \$1 in
	none) sh -c "\$go" ;;
	*) $BIN record --backend \$1 --irq \$irqs -c 0 --pid \$(cat \$R.tids) -- sh -c "\$go" > /dev/null 2>&1 ;;
	esac
	wait \$kp
	[ -s \$R ] && echo "\$1 \$2 \$(cat \$R)"
}
# Warm-up: the emulator translates each new code path on first use.
for w in udp pipe; do one none \$w > /dev/null; one kmod \$w > /dev/null; done
for r in \$(seq $ROUNDS); do
	for w in udp pipe; do
		one none \$w; one kmod \$w
		[ \$ebpf = 0 ] || one ebpf \$w
	done
done
rmmod latsplit
EOF

echo "# bench kmod-cost: lab $rel, 1 vCPU (TCG; icount shift $ICOUNT: each guest instruction advances the guest clock $((1 << ICOUNT)) ns), $ROUNDS rounds of $BATCHES x $ITERS iterations (min per batch)"
out=$("$LAB" exec --name "$NAME" --timeout 1800 0 -- "sh $SH/run.sh" 2>&1) || {
	echo "# bench kmod-cost: the run failed:"
	echo "$out" | sed 's/^/#   /'
	exit 2
}
echo "$out" | sed 's/^/#   /'

# best MODE WORKLOAD FIELD: min of field 3 (ns/iteration), median of field 4 (hits/iteration).
best() {
	echo "$out" | awk -v m="$1" -v w="$2" -v f="$3" '$1 == m && $2 == w && NF == 4 { print $f }' |
		sort -g | awk -v f="$3" '{ v[NR] = $1 }
			END { if (!NR) print ""; else if (f == 3) print v[1]; else print v[int((NR + 1) / 2)] }'
}
status=0
for w in udp pipe; do
	per=3
	[ $w = udp ] && per=4
	t0=$(best none $w 3)
	h=$(best none $w 4)
	[ -n "$t0" ] || { echo "# bench kmod-cost: no $w baseline"; exit 2; }
	hits=$(awk -v h="$h" -v p="$per" 'BEGIN { printf("%.3f", h * p) }')
	echo "$w: no backend $t0 ns/iteration, $hits tracepoint hits/iteration"
	ck=
	for m in kmod ebpf; do
		t=$(best $m $w 3)
		[ -n "$t" ] || { echo "$w: $m not available"; continue; }
		c=$(awk -v t="$t" -v b="$t0" -v e="$hits" 'BEGIN { printf("%.1f", (t - b) / e) }')
		echo "$w: $m $t ns/iteration, $c ns per tracepoint hit"
		[ $m = kmod ] && ck=$c
		if [ $m = ebpf ] && [ -n "$ck" ]; then
			r=$(awk -v k="$ck" -v e="$c" 'BEGIN { printf("%.2f", (e > 0) ? k / e : 99) }')
			echo "$w: kmod/ebpf cost ratio $r (goal <= 0.50)"
			awk -v r="$r" 'BEGIN { exit !(r <= 0.5) }' || status=1
		fi
	done
done
exit $status
