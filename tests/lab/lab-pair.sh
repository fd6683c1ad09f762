#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: all
# lab-smp: any
# The lab itself: the right kernel booted on both nodes, guest exit status
# and timeouts reach the host, both Soft-RoCE ports are ACTIVE, and perftest's
# ib_write_lat completes between the nodes at 4 B and 4096 B.
. "$(dirname "$0")/../lib.sh"
plan 13

rel=$(lab_kver)
short=${LS_KVER_SHORT:-6.1}
case "$short" in
6.1) pat='^6\.1\.[0-9]+-[0-9]+-amd64$' ;;
6.12) pat='^6\.12\.[0-9.]+\+deb[0-9]+-amd64$' ;;
6.1-rt) pat='^6\.1\.[0-9]+-[0-9]+-rt-amd64$' ;;
*) pat='.' ;;
esac
for n in 0 1; do
	got=$(lab_exec "$n" uname -r)
	if [ "$got" = "$rel" ] && [[ "$got" =~ $pat ]]; then
		ok "node$n runs $got ($short)"
	else
		not_ok "node$n runs the $short kernel" "expected $rel matching $pat, got '$got'"
	fi
done
if [ "$short" = 6.1-rt ]; then
	check "PREEMPT_RT kernel reports realtime" lab_exec 0 'test "$(cat /sys/kernel/realtime)" = 1'
else
	check "non-RT kernel is not realtime" lab_exec 0 'test ! -e /sys/kernel/realtime'
fi

# The guests' clock is the TSC, as on real hosts (tools/lab/lab boots them
# with tsc=reliable; two-CPU guests would otherwise time everything by the
# emulated HPET).
tsc_both() {
	local n cs
	for n in 0 1; do
		cs=$(lab_exec "$n" cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
		[ "$cs" = tsc ] || { echo "node$n: clocksource '$cs'"; return 1; }
	done
}
check "both nodes time by the TSC clocksource, not an emulated device" tsc_both

lab_exec 1 'exit 7' >/dev/null 2>&1
rc=$?
[ "$rc" = 7 ] && ok "a failing guest command fails the lab call with its status" ||
	not_ok "guest exit status reaches the host" "expected 7, got $rc"
out=$(lab_exec 0 'echo to-stdout; echo to-stderr >&2' 2>/dev/null)
[ "$out" = to-stdout ] && ok "guest stdout comes back separately from stderr" ||
	not_ok "guest stdout" "got '$out'"

t0=$(date +%s)
out=$(lab_exec_t 2 0 'sleep 60' 2>&1)
rc=$?
dt=$(($(date +%s) - t0))
if [ "$rc" = 124 ] && [ "$dt" -lt 20 ] && [[ "$out" == *"timed out"* ]]; then
	ok "a hung guest command is stopped at its timeout with a clear message (${dt}s)"
else
	not_ok "guest command timeout" "rc=$rc after ${dt}s: $out"
fi
check "node0 still serves commands after a timeout" lab_exec 0 true

for n in 0 1; do
	check "node$n rxe0 port is ACTIVE" lab_exec "$n" 'grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state'
done
check "node0 reaches node1 over the lab wire" lab_exec 0 'ping -c 2 -W 2 192.0.2.2'

# ib_write_lat SIZE ITERS: run the perftest pair and check its result line.
perftest_pair() {
	local size=$1 iters=$2 out line
	lab_bg 1 "timeout 120 ib_write_lat -d rxe0 -s $size -n $iters -u 20 > /dev/null 2>&1" >/dev/null
	sleep 1
	out=$(lab_exec_t 150 0 "timeout 120 ib_write_lat -d rxe0 -s $size -n $iters -u 20 192.0.2.2" 2>&1)
	line=$(echo "$out" | awk -v s="$size" '$1 == s && NF >= 8 { print }')
	# columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
	if [ -n "$line" ] && [ "$(echo "$line" | awk '{print $2}')" = "$iters" ] &&
	   echo "$line" | awk '{ exit !($3 > 0 && $5 >= $3 && $4 >= $5) }'; then
		ok "ib_write_lat -s $size -n $iters completes: $(echo "$line" | awk '{print "typical", $5, "us"}')"
	else
		not_ok "ib_write_lat -s $size -n $iters completes" "$out"
	fi
}
perftest_pair 4 300
perftest_pair 4096 300
done_testing
