#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit probe under bad input and faults, in the lab pair: unknown device
# (lists the existing ones), unknown GID index, size over the device max,
# peer unreachable (refused, and a silent address: error within the stated
# timeout), port in use, garbage / truncated / stalled / wrong-version
# handshakes to the responder (rejected, logged, the responder keeps serving
# and then completes a real session), the responder killed mid-run (clear
# error, exit 1, the samples so far flushed to the file and the JSON), and a
# completion that never arrives (responder stopped: the wait times out and
# the error names the QP's retry/duplicate counters), in poll and event mode.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"

B=$LS_BIN
PORT=19621
lab_workdir probe-faults
plan_none
lab_drop_caches

# start_responder TAG EXTRA...: responder on node1, pid in $W/TAG.pid, log in $W/TAG.log.
start_responder() {
	local tag=$1; shift
	lab_bg 1 "$B probe --insecure $* > $W/$tag.log 2>&1 & echo \$! > $W/$tag.pid; wait \$!; echo rc=\$? >> $W/$tag.log" >/dev/null
	lab_wait_listening 1 "$W/$tag.log"
}
# stop TAG: kill the responder we started (SIGCONT first in case it is stopped).
stop() {
	[ -s "$W/$1.pid" ] || return 0
	lab_exec 1 "p=$(cat "$W/$1.pid"); kill -CONT \$p 2>/dev/null; kill \$p 2>/dev/null; true"
	rm -f "$W/$1.pid"
}
cleanup() { for f in "$W"/*.pid; do [ -e "$f" ] && stop "$(basename "$f" .pid)"; done; rm -rf "$W"; }
trap cleanup EXIT

# when_connected: a guest command prefix that waits until a prober is connected to PORT.
when_connected() {
	echo "for i in \$(seq 300); do ss -Htn state established '( sport = :$PORT )' | grep -q . && break; sleep 0.1; done;"
}

# expect_fail DESC RC PATTERN NODE CMD: CMD exits RC and its stderr matches PATTERN.
expect_fail() {
	local desc=$1 want=$2 pat=$3 node=$4 cmd=$5 out rc
	out=$(lab_exec_t 120 "$node" "$cmd 2>&1; echo rc=\$?")
	rc=$(echo "$out" | sed -n 's/^rc=//p' | tail -n 1)
	if [ "$rc" = "$want" ] && echo "$out" | grep -Eq -- "$pat"; then ok "$desc"
	else not_ok "$desc" "want exit $want and /$pat/" "$out"; fi
}

# --- bad input -----------------------------------------------------------
expect_fail "unknown device: exit 2, lists the existing devices" 2 \
	"unknown RDMA device 'nosuch' \(devices: rxe0\)" 0 "$B probe -d nosuch 192.0.2.2"
expect_fail "unknown GID index (beyond the table): exit 2, lists valid GIDs" 2 \
	"rxe0 port 1: GID index 4000 is beyond the GID table \(valid: .*RoCE v2" 0 \
	"$B probe -x 4000 192.0.2.2"
expect_fail "unknown GID index (empty entry): exit 2" 2 "rxe0 port 1: GID index 30 is (empty|beyond)" 0 \
	"$B probe -x 30 192.0.2.2"
expect_fail "responder with an unknown GID index fails at once" 2 "GID index 4000" 1 \
	"timeout 10 $B probe --insecure -x 4000 -p $PORT"
expect_fail "unknown port: exit 2" 2 "rxe0 port 2" 0 "$B probe -i 2 192.0.2.2"
expect_fail "size over the device max: exit 2" 2 "size 16777216 exceeds rxe0's max message size 8388608" 0 \
	"$B probe -s 16777216 192.0.2.2"
expect_fail "-m with -R is a usage error" 2 "-m cannot be combined with -R" 0 "$B probe -R -m 1024 192.0.2.2"
expect_fail "prober-only options on the responder are a usage error" 2 "are the prober's" 1 "$B probe -n 10"

# --- unreachable peers -----------------------------------------------------
expect_fail "peer not listening: exit 2, connection refused" 2 "unreachable.*Connection refused" 0 \
	"$B probe -p 19699 192.0.2.2"
expect_fail "silent peer: exit 2 naming the timeout" 2 "192.0.2.77:$PORT unreachable \(timeout 2 s\)" 0 \
	"$B probe -p $PORT --connect-timeout 2s 192.0.2.77"
# Elapsed time in the guest. With -R (and no -d) the prober opens no device
# before the control connection, so the time is the connect timeout itself.
# A fresh silent address: 192.0.2.77's failed neighbour entry from the check
# above would let the kernel report it unreachable at once.
el=$(lab_exec_t 60 0 "t0=\$(date +%s%N); $B probe -R -p $PORT --connect-timeout 2s 192.0.2.78 2>/dev/null
	echo \$(( (\$(date +%s%N) - t0) / 1000000 ))")
if [ -n "$el" ] && [ "$el" -ge 1900 ] && [ "$el" -lt 3000 ]; then ok "silent peer: gave up within the stated timeout (${el} ms for 2 s)"
else not_ok "silent peer: gave up within the stated timeout" "took ${el} ms for 2 s"; fi

# --- port in use -----------------------------------------------------------
start_responder a -p $PORT --listen-timeout 60 || not_ok "responder a starts" "$(cat "$W/a.log")"
expect_fail "second responder on the same port: exit 2, port in use" 2 "port $PORT: port already in use" 1 \
	"$B probe --insecure -p $PORT --listen-timeout 5"

# --- hostile handshakes to responder a (handshake timeout 5 s default) -----
HDR='\x4c\x53\x50\x42\x00\x02\x00\x01\x00\x00\x00\x00\x00\x00\x00\x64'	# HELLO, 100 bytes
# hostile CMD: connect, read the responder's AUTH frame (52 bytes: a peer
# that closes with it unread resets the connection, and the reset can
# overtake what it sent), send CMD's output, close.
hostile() {
	lab_exec_t 30 0 "exec 3<>/dev/tcp/192.0.2.2/$PORT; timeout 10 head -c 52 <&3 >/dev/null; $1 >&3; exec 3>&-" >/dev/null 2>&1
}
hostile "head -c 200 /dev/urandom"
hostile "printf '$HDR\x01\x00\x00\x00\x0e\x00'"
hostile "printf '\x4c\x53\x50\x42\x00\x07\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00'"
lab_exec_t 30 0 "exec 3<>/dev/tcp/192.0.2.2/$PORT; printf '$HDR' >&3; sleep 7; exec 3>&-" >/dev/null 2>&1
out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n 20 192.0.2.2 >/dev/null 2>&1; echo rc=\$?")
if [ "$out" = rc=0 ]; then ok "responder still serves a real prober after four bad handshakes"
else not_ok "responder still serves a real prober after four bad handshakes" "$out"; fi
sleep 1
log=$(lab_exec 1 "cat $W/a.log")
n=$(echo "$log" | grep -c 'failed: handshake')
if [ "$n" = 4 ] && echo "$log" | grep -q 'bad magic' && echo "$log" | grep -q 'truncated message' &&
   echo "$log" | grep -q 'protocol version 7' && echo "$log" | grep -q 'timed out'; then
	ok "each bad handshake was rejected and logged (garbage, truncated, version, stalled)"
else not_ok "each bad handshake was rejected and logged" "$log"; fi
if echo "$log" | grep -q '^rc=0$'; then ok "responder exited 0 after the completed session"
else not_ok "responder exited 0 after the completed session" "$log"; fi
rm -f "$W/a.pid"

# --- the responder dies mid-run ------------------------------------------
start_responder b -p $PORT --listen-timeout 60 || not_ok "responder b starts" "$(cat "$W/b.log")"
lab_bg 1 "$(when_connected) sleep 3; kill -9 $(cat "$W/b.pid")" >/dev/null
t0=$(date +%s)
out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n 100000 --json --samples $W/dies.csv 192.0.2.2 > $W/dies.json 2> $W/dies.err; echo rc=\$?; cat $W/dies.err")
el=$(($(date +%s) - t0))
rm -f "$W/b.pid"
if echo "$out" | grep -q '^rc=1$' && echo "$out" | grep -Eq 'responder gone mid-run.*closed the control connection'; then
	ok "responder killed mid-run: exit 1 with a clear error (${el}s)"
else not_ok "responder killed mid-run: exit 1 with a clear error" "$out"; fi
if python3 - "$W/dies.json" "$W/dies.csv" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = sum(1 for _ in open(sys.argv[2])) - 1
assert d["complete"] is False and "closed the control connection" in d["fault"], d["fault"]
assert 0 < d["count"] < 100000 and rows == d["count"] == len(d["samples_ns"]), (rows, d["count"])
EOF
then ok "samples measured before the fault are flushed (JSON count = file rows > 0)"
else not_ok "samples measured before the fault are flushed" "$(head -c 600 "$W/dies.json")"; fi

# --- a completion that never arrives (responder stopped) ------------------
for mode in poll events; do
	e=; what=answer; [ $mode = events ] && { e="-e --verb send"; what="completion event"; }
	start_responder c -p $PORT --listen-timeout 60 || not_ok "responder c starts" "$(cat "$W/c.log")"
	lab_bg 1 "$(when_connected) sleep 3; kill -STOP $(cat "$W/c.pid")" >/dev/null
	out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n 100000 --wait-timeout 3s $e 192.0.2.2 2>&1 >/dev/null; echo rc=\$?")
	stop c
	if echo "$out" | grep -q '^rc=1$' && echo "$out" | grep -q "no $what for iteration [0-9]* within 3 s" &&
	   echo "$out" | grep -q 'counters since start:.*duplicate_request' &&
	   echo "$out" | grep -q 'retry_exceeded_err' && echo "$out" | grep -q 'state RTS'; then
		ok "$mode: lost answer times out, naming the QP state and retry/duplicate counters"
	else not_ok "$mode: lost answer times out, naming the QP state and retry/duplicate counters" "$out"; fi
done

check "node0 dmesg clean" dmesg_clean 0
check "node1 dmesg clean" dmesg_clean 1
done_testing
