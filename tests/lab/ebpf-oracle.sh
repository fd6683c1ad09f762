#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# eBPF backend in the guests (one CO-RE build on 6.1, 6.12 and 6.1-rt)
# against the kernel's own counters: over a traffic window (ping flood
# node0 -> node1), node0's per-CPU hardirq counts for each eth0 (virtio-net)
# IRQ equal the /proc/interrupts deltas and the NET_RX / NET_TX softirq run
# counts equal the /proc/softirqs deltas, with the tp_btf programs and with
# the raw_tp fallback. On PREEMPT_RT, every watched IRQ's thread is seen
# woken (IRQ_THREAD count 80-100 % of the hardirq count).
#
# `latsplit record -- CMD` attaches before CMD starts and detaches after it
# exits; CMD reads /proc first and last, so the record window contains the
# /proc window. Tolerance per IRQ (vector) and CPU: record - delta <= 10 +
# 0.2 % (events between attach and the first read, or the last read and
# detach: the wire is quiet then, but TIMER-driven NET_TX/NET_RX can land);
# delta - record <= 2 + 0.1 % (deliveries /proc counts that never reach the
# handler tracepoint; see tests/host/ebpf-oracle.sh).
# lab-kernels: all
# lab-smp: any
. "$(dirname "$0")/../lib.sh"

ebpf_lab_setup ebpf-oracle 0
diag "guest kernel $kver"
lab_nic_irqs
diag "node0: eth0 IRQs $irqs"

cat > "$W/load.sh" <<EOF
cat /proc/interrupts > $W/irq.a; cat /proc/softirqs > $W/sirq.a
ping -f -q -c 1000 -W 2 192.0.2.2 > /dev/null
cat /proc/softirqs > $W/sirq.b; cat /proc/interrupts > $W/irq.b
EOF

for mode in tp_btf raw_tp; do
	rm -f "$W"/rec.json "$W"/*.a "$W"/*.b
	if lab_exec_t 300 0 "LS_EBPF_ATTACH=$mode $BIN record --backend ebpf --irq $irqs --json \
		-- sh $W/load.sh > $W/rec.json 2> $W/err"; then
		ok "$kver $mode: record attached and ran the ping flood"
	else
		not_ok "$kver $mode: record attached and ran the ping flood" "$(cat "$W/err")"
		continue
	fi
	rt=; case $kver in *-rt-*) rt=rt ;; esac
	if out=$(python3 "$LS_TOP/tests/lab/ebpf-check.py" oracle "$W" "$irqs" $rt 2>&1); then
		ok "$kver $mode: per-CPU hardirq and NET_RX/NET_TX counts equal the /proc deltas"
		diag "$out"
	else
		not_ok "$kver $mode: per-CPU hardirq and NET_RX/NET_TX counts equal the /proc deltas" "$out"
	fi
done
done_testing
