#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit.ko against the kernel's own counters: over a traffic window (ping
# flood and rxe ib_write_lat between the nodes), the module's per-CPU
# hardirq counts for each NIC IRQ equal the /proc/interrupts deltas, and its
# NET_RX/NET_TX softirq run counts equal the /proc/softirqs deltas, on both
# nodes. Tolerance: 2 events per counter, for events that race the window
# edges (the /proc snapshot and `enable` are separate syscalls; the NIC is
# quiet at the edges because traffic starts after and stops before them).
# The module's own cost (its `observer` file) against the same counters:
# per CPU, irq_handler_entry hits = the /proc/interrupts delta over every
# numbered IRQ and softirq_entry hits = the /proc/softirqs delta over every
# vector (never more on any CPU; over all CPUs less by at most 5 % + 300:
# what came between a /proc read and enable/disable), exits
# match entries, nothing counts while tracing is off, reset zeroes it.
# lab-kernels: all
# lab-smp: 2
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kmod-common.inc"

TOL=2
plan_none
kmod_require

cleanup() {
	lab_exec 0 "pkill -x ib_write_lat; pkill -x ping" >/dev/null 2>&1
	lab_exec 1 "pkill -x ib_write_lat" >/dev/null 2>&1
	kmod_unload 0; kmod_unload 1
}
trap cleanup EXIT

# window_start/window_end: guest shell lines; /proc snapshot and `enable`
# back to back (no Python start-up between them).
W=/tmp/kmod-oracle
window_start="cat /proc/interrupts > $W/a.int && cat /proc/softirqs > $W/a.soft && echo enable > $KMOD_DIR/control"
window_end="echo disable > $KMOD_DIR/control && cat /proc/interrupts > $W/b.int && cat /proc/softirqs > $W/b.soft && cat $KMOD_DIR/hist > $W/hist.bin && cat $KMOD_DIR/observer > $W/obs.1"

for n in 0 1; do
	irqs=$(lab_exec $n "rmmod latsplit 2>/dev/null; insmod $KMOD_KO ring_kib=0 &&
		rm -rf $W && mkdir -p $W && $KMOD_TOOL nic-irqs eth0") ||
		{ not_ok "node$n: insmod latsplit.ko, find eth0's IRQs" "$irqs"; done_testing; }
	ok "node$n: insmod latsplit.ko (histograms only); eth0 IRQs $irqs"
	check "node$n: watch eth0's IRQs, start the window (snapshot, enable)" \
		lab_exec $n "printf 'irqs $irqs\nreset\n' > $KMOD_DIR/control && $window_start"
done
check "ping flood node0 -> node1 (1000 packets)" \
	lab_exec_t 120 0 "ping -f -q -c 1000 -W 2 192.0.2.2"
lab_bg 1 "ib_write_lat -d rxe0 -n 300 -u 20 > $W/srv.log 2>&1" >/dev/null
sleep 1
check "rxe traffic: ib_write_lat node0 -> node1 (300 iterations)" \
	lab_exec_t 120 0 "ib_write_lat -d rxe0 -n 300 -u 20 192.0.2.2"
sleep 1
for n in 0 1; do
	check "node$n: window end (disable, snapshot)" lab_exec $n "$window_end"
done

# traffic while tracing is off: the observer must not count it
check "ping node0 -> node1 after the window (200 packets, tracing off)" \
	lab_exec_t 120 0 "ping -f -q -c 200 -W 2 192.0.2.2"
for n in 0 1; do
	check "node$n: observer after the traffic, then after reset" \
		lab_exec $n "cat $KMOD_DIR/observer > $W/obs.2 && echo reset > $KMOD_DIR/control && cat $KMOD_DIR/observer > $W/obs.3"
done

for n in 0 1; do
	kmod_tap $n oracle $W --tol $TOL
	kmod_tap $n observer $W --tol 300
	check "node$n: rmmod latsplit" lab_exec $n "rmmod latsplit"
	kmod_dmesg_ok $n
done
done_testing
