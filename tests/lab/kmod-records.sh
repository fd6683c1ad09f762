#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit.ko interval records: with traffic (ping flood, rxe event-mode
# `latsplit probe -e --verb send` whose responder is the named task) and a reader attached, every
# record is valid (end >= start, cpu < nr_cpu_ids, stage/id/flags valid,
# per-CPU time order), the histograms count exactly the records read, NAPI
# polls sit inside their NET_RX run, completions end with a poll, nested
# hardirqs are counted in SOFTIRQ_RUN's aux, WAKEUP/PREEMPT appear for the
# named task and split by cause match its context-switch counters in
# /proc/PID/status, IRQ_THREAD appears on PREEMPT_RT only. Then poll()/read()
# semantics, and a tiny ring: drops rise, reads still succeed, and
# histogram events == records written + drops.
# lab-kernels: all
# lab-smp: 2
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kmod-common.inc"

kmod_node_test kmod-records

lab_cleanup_at_exit 0 "pkill -f '$LS_BIN probe'; pkill -x ping" \
	$N "pkill -f '$LS_BIN probe'; pkill -f 'cat $KMOD_DIR/records'" $N "! grep -q '^latsplit ' /proc/modules || rmmod latsplit"

rt=no
case $(lab_kver) in *-rt-*) rt=yes ;; esac

kmod_node_irqs $N ring_kib=4096

# The event-mode responder is the named task: it sleeps for completion
# events. (The project's probe, not perftest's ib_send_lat -e: rxe can lose a
# completion event, and perftest then waits for ever; the probe's waits end.)
lab_bg $N "$LS_BIN probe --insecure -d rxe0 -p 19641 --forever --listen-timeout 120 > $W/srv.log 2>&1 & echo \$! > $W/srv.pid; wait" >/dev/null
pid=
for _ in $(seq 20); do
	pid=$(lab_exec $N "cat $W/srv.pid 2>/dev/null") && [ -n "$pid" ] && break
	sleep 0.5
done
[ -n "$pid" ] || { not_ok "start the event-mode responder on node$N" "no pid"; done_testing; }
for _ in $(seq 100); do lab_exec $N "grep -q listening $W/srv.log" 2>/dev/null && break; sleep 0.2; done
diag "named task: latsplit probe responder pid $pid"

check "node$N: configure (irqs, cpus 0-1, tasks $pid), reset, enable, attach a reader" \
	lab_exec $N "cat /proc/$pid/status > $W/cs.0 &&
		printf 'irqs $irqs\ncpus 0-1\ntasks $pid\nreset\nenable\n' > $KMOD_DIR/control &&
		(cat $KMOD_DIR/records > $W/rec.bin &) && sleep 1 && cat $KMOD_DIR/config"
check "ping flood node0 -> node$N (500 packets)" \
	lab_exec_t 120 0 "ping -f -q -c 500 -W 2 192.0.2.2"
# A lost completion event ends the run early (exit 1): 100 event-mode
# iterations or more are enough traffic for the WAKEUP checks below.
out=$(lab_exec_t 180 0 "$LS_BIN probe -d rxe0 -p 19641 -e --verb send -n 300 -u 20 --wait-timeout 5s --json 192.0.2.2 2>&1 >/tmp/kmod-ev.json; echo rc=\$?")
n=$(lab_exec 0 "python3 -c 'import json; print(json.load(open(\"/tmp/kmod-ev.json\"))[\"count\"])'" 2>/dev/null)
if [[ "$out" == *rc=0* ]] || { [[ "$out" == *rc=1* ]] && [ "${n:-0}" -ge 100 ]; }; then
	ok "rxe event mode: probe -e --verb send node0 -> node$N (${n:-?} of 300 iterations)"
else
	not_ok "rxe event mode: probe -e --verb send node0 -> node$N" "$out" "count ${n:-none}"
fi
# `disable` ends the stream: the reader drains and exits on end of file.
check "node$N: disable; the reader drains and exits; save hist" \
	lab_exec_t 60 $N "echo disable > $KMOD_DIR/control && cat /proc/$pid/status > $W/cs.1 &&
		for i in \$(seq 100); do pgrep -f 'cat $KMOD_DIR/records' >/dev/null || break; sleep 0.2; done &&
		! pgrep -f 'cat $KMOD_DIR/records' >/dev/null && cat $KMOD_DIR/hist > $W/hist.bin"
kmod_tap $N records $W $W/rec.bin --tasks $pid --expect-nodrops --rt $rt --ctxsw

# poll()/read() semantics. A ring wakes its reader at a quarter full: with
# 1 KiB per CPU (32 records) that is 8, which pings from node0 fill.
check "node$N: ring 1 KiB per CPU (wake mark 8 records)" kmod_ctl $N "ring 1\n"
lab_bg 0 "ping -q -c 100 -i 0.05 192.0.2.2 >/dev/null 2>&1" >/dev/null
kmod_tap $N poll-check

# A tiny ring without a reader overflows: drops rise, reads still succeed.
check "node$N: ring 1 KiB per CPU (32 records), reset, enable" \
	kmod_ctl $N "tasks none\nring 1\nreset\nenable\n"
check "ping flood node0 -> node$N (300 packets)" \
	lab_exec_t 120 0 "ping -f -q -c 300 -W 2 192.0.2.2"
check "node$N: disable; read the tiny rings; save hist" \
	lab_exec $N "echo disable > $KMOD_DIR/control && cat $KMOD_DIR/hist > $W/hist.bin &&
		timeout 20 cat $KMOD_DIR/records > $W/tiny.bin"
out=$(lab_exec $N "stat -c %s $W/tiny.bin; grep -o 'drops [0-9]*' $KMOD_DIR/stats")
size=$(echo "$out" | head -1); drops=$(echo "$out" | sed -n 's/drops //p')
if [ -n "$size" ] && [ "$size" -gt 0 ] && [ $((size % 32)) -eq 0 ] && [ "$size" -le $((2 * 32 * 32)) ]; then
	ok "tiny ring: read $((size / 32)) whole records, at most 32 per CPU"
else
	not_ok "tiny ring: read whole records, at most 32 per CPU" "$out"
fi
if [ -n "$drops" ] && [ "$drops" -gt 0 ]; then
	ok "tiny ring: the drop counter rose ($drops)"
else
	not_ok "tiny ring: the drop counter rose" "$out"
fi
kmod_tap $N records $W $W/tiny.bin

# `hist off` (records only, as breakdown runs the module): the records flow
# as before, no histogram counts, the header and config say so; `hist on`
# counts again.
check "node$N: ring 64 KiB, hist off, reset, enable, attach a reader" \
	lab_exec $N "printf 'ring 64\nhist off\nreset\nenable\n' > $KMOD_DIR/control &&
		grep -qx 'hist off' $KMOD_DIR/config && (cat $KMOD_DIR/records > $W/nohist.bin &) && sleep 1"
check "ping flood node0 -> node$N (300 packets)" \
	lab_exec_t 120 0 "ping -f -q -c 300 -W 2 192.0.2.2"
check "node$N: disable; the reader drains and exits; save hist" \
	lab_exec_t 60 $N "echo disable > $KMOD_DIR/control &&
		for i in \$(seq 100); do pgrep -f 'cat $KMOD_DIR/records' >/dev/null || break; sleep 0.2; done &&
		! pgrep -f 'cat $KMOD_DIR/records' >/dev/null && cat $KMOD_DIR/hist > $W/hist.bin"
check "node$N: hist on, reset, enable; ping (100 packets); disable; save hist" \
	lab_exec_t 120 $N "printf 'hist on\nreset\nenable\n' > $KMOD_DIR/control &&
		grep -qx 'hist on' $KMOD_DIR/config && ping -q -c 100 -i 0.01 192.0.2.1 >/dev/null &&
		echo disable > $KMOD_DIR/control && cat $KMOD_DIR/hist > $W/hist-on.bin"
kmod_tap $N nohist $W $W/nohist.bin $W/hist-on.bin

# The benchmark's A/A control (parameter inert, read at each enable): an
# enabled module whose probes were given nothing counts, records and times
# nothing, and says so in `config`; inert=N and the next enable count again.
for v in Y N; do
	check "node$N: inert=$v, ring 64, hist on, reset, enable; ping (200 packets); disable" \
		lab_exec_t 120 $N "echo $v > /sys/module/latsplit/parameters/inert &&
			printf 'ring 64\nhist on\nreset\nenable\n' > $KMOD_DIR/control &&
			grep -qx 'inert $([ $v = Y ] && echo 1 || echo 0)' $KMOD_DIR/config &&
			cat /proc/interrupts > $W/a.int.$v && ping -q -c 200 -i 0.01 192.0.2.1 >/dev/null &&
			cat /proc/interrupts > $W/b.int.$v && cat $KMOD_DIR/hist > $W/hist.$v &&
			cat $KMOD_DIR/observer > $W/obs.$v && echo disable > $KMOD_DIR/control &&
			grep -qx 'inert 0' $KMOD_DIR/config"
done
kmod_tap $N inert $W
check "node$N: latsplit record on an inert module says so on stderr" \
	lab_exec_t 60 $N "echo Y > /sys/module/latsplit/parameters/inert &&
		$LS_BIN record -b kmod -i eth0 -D 1s > /dev/null 2> $W/inert.err;
		echo N > /sys/module/latsplit/parameters/inert && grep -q 'inert=Y' $W/inert.err"
check "node$N: inert takes only Y/N-like values" \
	lab_exec $N "! echo maybe > /sys/module/latsplit/parameters/inert 2>/dev/null &&
		grep -qx N /sys/module/latsplit/parameters/inert"

check "node$N: rmmod latsplit" lab_exec $N "rmmod latsplit"
kmod_dmesg_ok $N
done_testing
