#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ls_faultinj.ko (tests/lab/faultinj/), the in-guest processing fault, against
# its own oracle: on node1, armed with `delay_ns=200000 op=req psn=even`, an
# ib_write_lat run from node0 gets a busy wait on exactly the even-PSN RDMA
# WRITE requests node1 receives: injected = half (+-2) of the matched
# requests, the log holds one line per injection (even, distinct PSNs, req
# opcodes), every wait lasts >= delay_ns and 90 % of them < delay_ns + 5 ms
# (the host may deschedule a vCPU mid-wait), and the logged durations sum to
# the `ns` counter. `op=ack` waits on ACKs (0x11) only; `off` injects
# nothing; `roce=0` on another port selects plain UDP datagrams by the
# parity of their per-CPU count; malformed config writes fail with EINVAL
# and change nothing; the module unloads while traffic flows, after log
# readers ran against it; node1's dmesg stays clean. The typical latency
# with a 1 ms wait on every request vs none (same boot) is printed as a
# diagnostic only. op=ack, off, roce=0 and the diagnostic run on the
# primary kernel only (lab_primary: the suite's time budget). Built for all three lab kernels (make faultinj-all);
# tested here on 6.1 and 6.12 (the suite's time budget), used on 6.1.
# lab-kernels: 6.1 6.12
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"

D=/sys/kernel/debug/ls_faultinj
DELAY=200000
ITERS=200
PORT=18541
command -v ib_write_lat >/dev/null || skip_all "perftest (ib_write_lat) is not installed"
KVER=$(lab_kver)
KO=$LS_TOP/build/faultinj/$KVER/ls_faultinj.ko
[ -r "$KO" ] || { echo "Bail out! $KO missing: run 'make faultinj-all' on the host"; exit 1; }
lab_workdir faultinj
plan_none

lab_cleanup_at_exit 0 "pkill -x ib_write_lat" 1 "pkill -x ib_write_lat" \
	1 "! grep -q '^ls_faultinj ' /proc/modules || rmmod ls_faultinj"

# fi_cfg LINE: write one config line on node1 (fails as the write fails).
fi_cfg() { lab_exec 1 "echo '$1' > $D/config"; }
# fi_reset: zero node1's counters and log.
fi_reset() { lab_exec 1 "echo reset > $D/stats"; }
# fi_total: "seen matched injected ns" from node1's stats total line.
fi_total() { lab_exec 1 "cat $D/stats" | awk '$1 == "total" { print $3, $5, $7, $9 }'; }

# lat [N]: one ib_write_lat run, responder on node1, client on node0;
# prints the client's t_typical (us). Fails if either side fails.
lat() {
	local n=${1:-$ITERS} out
	local args="-d rxe0 -x 1 -u 20 -s 4 -n $n -F -p $PORT"
	rm -f "$W/srv.pid" "$W/srv.log" "$W/srv.rc"
	lab_bg 1 "ib_write_lat $args > $W/srv.log 2>&1 & echo \$! > $W/srv.pid; wait \$!; echo \$? > $W/srv.rc" >/dev/null
	for _ in $(seq 25); do [ -s "$W/srv.pid" ] && break; sleep 0.2; done
	for _ in $(seq 10); do
		sleep 0.5
		out=$(lab_exec_t 300 0 "ib_write_lat $args 192.0.2.2 2>&1") && break
	done
	for _ in $(seq 50); do [ -s "$W/srv.rc" ] && break; sleep 0.2; done
	[ "$(cat "$W/srv.rc" 2>/dev/null)" = 0 ] || { echo "$out"; cat "$W/srv.log"; return 1; }
	echo "$out" | awk '$1 == 4 && NF >= 5 { print $5; found = 1 } END { exit !found }'
}

# --- load -------------------------------------------------------------------
lab_exec 1 "echo 3 > /proc/sys/vm/drop_caches" >/dev/null 2>&1
if out=$(lab_exec 1 "rmmod ls_faultinj 2>/dev/null; insmod $KO && cat $D/config"); then
	ok "node1 ($KVER): insmod ls_faultinj.ko"
else
	not_ok "node1 ($KVER): insmod ls_faultinj.ko" "$out"; done_testing
fi
case $out in
armed=0\ *) ok "loads disarmed: $out" ;;
*) not_ok "loads disarmed" "$out" ;;
esac

# --- arm, then malformed writes must change nothing ---------------------------
check "arm: delay_ns=$DELAY op=req psn=even" fi_cfg "delay_ns=$DELAY op=req psn=even"
want="armed=1 delay_ns=$DELAY op=req psn=even dqpn=0 dport=4791 roce=1"
got=$(lab_exec 1 "cat $D/config")
if [ "$got" = "$want" ]; then ok "config reads back '$want'"; else not_ok "config reads back" "want: $want" "got:  $got"; fi

# Run in node1 (the guest's stdin is not the host's: the script travels inline).
BADW=$(cat <<'EOF'
import errno, os, sys
path = sys.argv[1]
bad = [
    ("delay_ns=-1", b"delay_ns=-1\n"),
    ("psn=maybe", b"psn=maybe\n"),
    ("unknown key foo=1", b"foo=1\n"),
    ("10 KB line", b"delay_ns=1 " + b"x" * 10240 + b"\n"),
    ("binary bytes 0..255", bytes(range(256))),
    ("binary with NUL", b"\x01\xff\x00delay_ns=1\n"),
    ("delay over 10 ms", b"delay_ns=10000001\n"),
    ("delay hex", b"delay_ns=0x10\n"),
    ("op=req with roce=0", b"op=req roce=0\n"),
    ("dqpn with roce=0", b"dqpn=17 dport=5000\n"),
    ("repeated key", b"psn=even psn=odd\n"),
    ("off with more", b"off now\n"),
    ("OFF uppercase", b"OFF\n"),
    ("empty value", b"delay_ns=\n"),
    ("no value", b"delay_ns\n"),
    ("dport=0", b"dport=0\n"),
    ("dport=65536", b"dport=65536\n"),
    ("dqpn over 24 bits", b"dqpn=16777216\n"),
    ("armed=2", b"armed=2\n"),
    ("partial word", b"delay_ns=20 op=re"),
    ("two lines", b"delay_ns=100\nop=req\n"),
    ("newline only", b"\n"),
    ("blanks only", b"   \t \n"),
]
def cfg():
    with open(path) as f:
        return f.read()
before = cfg()
for desc, data in bad:
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            n = os.write(fd, data)
            res = "wrote %d" % n
        finally:
            os.close(fd)
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    after = cfg()
    if res == "EINVAL" and after == before:
        print("PASS bad write (%s): EINVAL, config unchanged" % desc)
    else:
        print("FAIL bad write (%s): %s, config %r -> %r" % (desc, res, before, after))
# A zero-byte write must change nothing either (the VFS may not call us).
fd = os.open(path, os.O_WRONLY)
try:
    os.write(fd, b"")
    res = "ok"
except OSError as e:
    res = errno.errorcode.get(e.errno, str(e.errno))
os.close(fd)
print(("PASS" if cfg() == before else "FAIL") + " empty write (%s): config unchanged" % res)
EOF
)
out=$(lab_exec 1 "python3 - $D/config <<'PYEOF'
$BADW
PYEOF" 2>&1)
while IFS= read -r line; do
	case $line in
	PASS\ *) ok "${line#PASS }" ;;
	FAIL\ *) not_ok "${line#FAIL }" ;;
	*) [ -n "$line" ] && diag "$line" ;;
	esac
done <<< "$out"
case $out in *PASS*) ;; *) not_ok "bad-write checks ran" "$out" ;; esac

# --- the main run: even-PSN requests --------------------------------------
fi_reset
if typ=$(lat); then ok "ib_write_lat -n $ITERS with the fault armed (typical $typ us)"; else not_ok "ib_write_lat -n $ITERS with the fault armed" "$typ"; fi
read -r seen matched injected ns <<< "$(fi_total)"
lab_exec 1 "cat $D/log" > "$W/log.txt"
diag "node1 stats: seen $seen matched(req) $matched injected $injected ns $ns; log lines $(wc -l < "$W/log.txt")"
res=$(python3 - "$W/log.txt" "$DELAY" "$seen" "$matched" "$injected" "$ns" "$ITERS" <<'EOF'
import sys
path, delay, seen, matched, injected, ns, iters = sys.argv[1], *map(int, sys.argv[2:])
rows = [list(map(int, l.split())) for l in open(path) if l.strip()]
def res(ok, desc, *diag):
    print(("PASS " if ok else "FAIL ") + desc)
    for d in diag:
        print("# " + d)
res(matched >= iters, "node1 matched >= %d WRITE requests (%d)" % (iters, matched))
res(abs(injected - matched / 2) <= 2,
    "injected %d = half of %d requests (+-2)" % (injected, matched))
res(len(rows) == injected, "log lines %d = injected %d" % (len(rows), injected))
res(all(len(r) == 6 for r in rows), "every log line has 6 fields")
odd = [r for r in rows if r[3] % 2]
res(not odd, "every logged PSN is even", *map(str, odd[:5]))
nonreq = [r for r in rows if not ((r[5] & 0x1f) <= 0x0c or 0x13 <= (r[5] & 0x1f) <= 0x17)]
res(not nonreq, "every logged opcode is a request (RDMA WRITE ONLY 0x0a: %d of %d)"
    % (sum(r[5] == 0x0a for r in rows), len(rows)), *map(str, nonreq[:5]))
psns = [r[3] for r in rows]
res(len(set(psns)) >= len(psns) - 2, "logged PSNs distinct (%d of %d)" % (len(set(psns)), len(psns)))
d = sorted(r[2] - r[1] for r in rows) or [0]
q = lambda f: d[min(len(d) - 1, int(f * len(d)))]
short = [x for x in d if x < delay]
res(rows and not short, "every wait lasts >= %d ns (min %d ns)" % (delay, d[0]), *map(str, short[:5]))
# The upper tail is the host descheduling the guest's vCPU thread mid-wait
# (guest time runs on; 4.9 and 7.5 ms seen at host load 5 on 2 cores): a
# bound on every wait fails on a busy host, so it holds for 90 % of them.
late = [x for x in d if x >= delay + 5000000]
res(len(late) <= len(d) // 10,
    "90 %% of waits end within delay + 5 ms (%d over; p50 %d p90 %d p99 %d max %d ns)"
    % (len(late), q(.5), q(.9), q(.99), d[-1]))
res(sum(r[2] - r[1] for r in rows) == ns, "logged durations sum to the ns counter (%d vs %d)" % (sum(d), ns))
res(seen >= matched, "seen %d >= matched %d" % (seen, matched))
EOF
)
while IFS= read -r line; do
	case $line in
	PASS\ *) ok "${line#PASS }" ;;
	FAIL\ *) not_ok "${line#FAIL }" ;;
	\#\ *) diag "${line#\# }" ;;
	*) [ -n "$line" ] && diag "$line" ;;
	esac
done <<< "$res"

# op=ack, off and roce=0 exercise selection code the kernel does not
# change: on the primary kernel only (lab_primary).
if lab_primary; then
	# --- op=ack ----------------------------------------------------------------
	check "arm: delay_ns=50000 op=ack" fi_cfg "delay_ns=50000 op=ack"
	fi_reset
	if typ=$(lat); then ok "ib_write_lat with op=ack (typical $typ us)"; else not_ok "ib_write_lat with op=ack" "$typ"; fi
	read -r seen matched injected ns <<< "$(fi_total)"
	ops=$(lab_exec 1 "cat $D/log" | awk '{ print $6 }' | sort -n | uniq -c | tr -s ' \n' ' ')
	diag "op=ack: seen $seen matched $matched injected $injected; logged opcodes (count opcode): $ops"
	if [ "${injected:-0}" -gt 0 ] && [ "$injected" = "$matched" ]; then
		ok "op=ack: every matched ACK injected ($injected)"
	else
		not_ok "op=ack: every matched ACK injected" "matched $matched injected $injected"
	fi
	if [[ "$ops" =~ ^\ ?[0-9]+\ 17\ ?$ ]]; then ok "op=ack: only opcode 17 (0x11) logged"; else not_ok "op=ack: only opcode 17 (0x11) logged" "$ops"; fi

	# --- off -------------------------------------------------------------------
	check "disarm: off" fi_cfg off
	got=$(lab_exec 1 "cat $D/config")
	case $got in armed=0\ delay_ns=50000\ op=ack\ *) ok "off keeps the settings, disarmed: $got" ;; *) not_ok "off keeps the settings, disarmed" "$got" ;; esac
	fi_reset
	if typ_off=$(lat); then ok "ib_write_lat disarmed (typical $typ_off us)"; else not_ok "ib_write_lat disarmed" "$typ_off"; fi
	read -r seen matched injected ns <<< "$(fi_total)"
	nlog=$(lab_exec 1 "cat $D/log | wc -l")
	if [ "$seen $matched $injected $ns $nlog" = "0 0 0 0 0" ]; then
		ok "disarmed: nothing seen, injected or logged"
	else
		not_ok "disarmed: nothing seen, injected or logged" "seen $seen matched $matched injected $injected ns $ns log $nlog"
	fi

	# --- roce=0: plain UDP, parity of the per-CPU match count -------------------
	check "arm: delay_ns=0 dport=5001 psn=even (roce=0 by default off 4791)" fi_cfg "delay_ns=0 dport=5001 psn=even"
	fi_reset
	check "node0 sends 101 UDP datagrams to node1:5001" lab_exec 0 "python3 -c \"
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(101):
    s.sendto(b'x', ('192.0.2.2', 5001)); time.sleep(0.002)
\""
	sleep 1
	read -r seen matched injected ns <<< "$(fi_total)"
	psns=$(lab_exec 1 "cat $D/log" | awk '{ print $4 }' | sort -n | tr '\n' ' ')
	want_psns=$(seq 0 2 100 | tr '\n' ' ')
	if [ "$seen $matched $injected" = "101 101 51" ] && [ "$psns" = "$want_psns" ]; then
		ok "roce=0: 101 seen and matched, 51 injected, logged counts 0 2 ... 100"
	else
		not_ok "roce=0: 101 seen and matched, 51 injected, logged counts 0 2 ... 100" \
			"seen $seen matched $matched injected $injected" "logged: $psns"
	fi
	check "disarm: off" fi_cfg off
fi

# --- sanity figure (diagnostic): 1 ms on every request vs off ----------------
if lab_primary; then
	fi_cfg "delay_ns=1000000 op=req" >/dev/null
	fi_reset
	typ_1ms=$(lat) || typ_1ms="(failed)"
	read -r seen matched injected ns <<< "$(fi_total)"
	fi_cfg off >/dev/null
	diag "typical one-way: off $typ_off us, 1 ms on every request at node1 $typ_1ms us" \
		"(expected about +500 us: RTT/2; injected $injected, mean wait $((ns / (injected > 0 ? injected : 1))) ns)"
fi

# --- rmmod while traffic flows (after log/stats readers ran against it) -------
check "arm: delay_ns=100000 (every RoCE packet)" fi_cfg "delay_ns=100000"
fi_reset
# Traffic that outlasts any reader: stopped below, after the unload.
lat 10000000 > "$W/long.out" 2>&1 &
lat_pid=$!
for _ in $(seq 150); do
	read -r seen matched injected ns <<< "$(fi_total)"
	[ "${injected:-0}" -gt 100 ] && break
	sleep 0.2
done
# Readers hold a module reference while a file is open: they finish first.
check "read log and stats 10 times while armed under traffic" \
	lab_exec_t 300 1 "for i in \$(seq 10); do cat $D/log > /dev/null && cat $D/stats > /dev/null || exit 1; done"
mid=$(fi_total)
check "rmmod ls_faultinj while traffic flows (seen/matched/injected/ns so far: $mid)" \
	lab_exec 1 "rmmod ls_faultinj && ! grep -q '^ls_faultinj ' /proc/modules"
# rcvd: RoCE packets node1's rxe0 has received (its own counter).
rcvd() { lab_exec 1 "cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts"; }
r0=$(rcvd)
sleep 1
r1=$(rcvd)
if lab_exec 0 "pgrep -x ib_write_lat" >/dev/null && [ "${r1:-0}" -gt $(( ${r0:-0} + 10 )) ]; then
	ok "traffic kept flowing after the unload (node1 received $((r1 - r0)) RoCE packets in the next second)"
else
	not_ok "traffic kept flowing after the unload" "ib_write_lat running: $(lab_exec 0 "pgrep -x ib_write_lat" >/dev/null && echo yes || echo no); rcvd_pkts $r0 -> $r1" "$(cat "$W/long.out")"
fi
# End lat's retry loop first: a killed client is not to be started again.
kill "$lat_pid" 2>/dev/null
lab_exec 0 "pkill -x ib_write_lat" >/dev/null 2>&1
lab_exec 1 "pkill -x ib_write_lat" >/dev/null 2>&1
wait $lat_pid 2>/dev/null
if out=$(dmesg_clean 1); then ok "node1: dmesg has no WARNING/BUG/Oops/lockdep"; else not_ok "node1: dmesg has no WARNING/BUG/Oops/lockdep" "$out"; fi
done_testing
