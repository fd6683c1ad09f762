#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A latsplit probe responder against hostile probers (build/tests/hostile_peer
# on node0): huge sizes, a huge capacity, a huge READ count, READ and
# silence, a RUN/END storm (small and over the session's limit), a frame
# dribbled one byte per second, random bytes and 50 idle connections at once.
# The responder runs under a memory limit (ulimit -v) with small limits of its
# own; after each attack it has logged the refusal or drop with the peer and
# a reason, its peak RSS (VmHWM) stays under its start-up peak plus what its
# limits allow, and an honest prober gets a complete result. A prober that
# connects during another's run is refused "busy" at once, the refusal is
# logged and the running session completes.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"

B=$LS_BIN
HP=$LS_TOP/build/tests/hostile_peer
PORT=19631
N=40
# The responder's limits: 1 MiB messages, 1M samples per run, 2M per session
# (32 MiB of samples), runs of 10 s; waits of 3 s.
LIMITS="--max-size 1048576 --max-samples 1000000 --max-session-samples 2000000 --max-run-time 10s --wait-timeout 3s"
VLIMIT_KIB=614400	# ulimit -v of the responder: 600 MiB of address space
SLACK_KIB=40960		# 32 MiB of samples + 2 x 1 MiB buffers + 6 MiB
[ -x "$HP" ] || skip_all "$HP not built (make lab)"
lab_workdir probe-hostile
plan_none
lab_drop_caches

# start_responder [EXTRA...]: the --forever responder on node1 under the
# memory limit, pid in $W/resp.pid, log in $W/resp.log.
start_responder() {
	lab_responder_start "(ulimit -v $VLIMIT_KIB; exec $B probe -p $PORT --insecure --forever --listen-timeout 300 $LIMITS $*)"
}
stop_responder() { lab_responder_stop; }
cleanup() { stop_responder; rm -rf "$W"; }
trap cleanup EXIT

# hwm: the responder's peak RSS in KiB (VmHWM), empty when it is gone.
hwm() { lab_exec 1 "awk '/^VmHWM/ {print \$2}' /proc/$(cat "$W/resp.pid")/status 2>/dev/null"; }

# honest NAME: an honest prober afterwards gets a complete result of $N samples.
honest() {
	local out
	out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n $N --json 192.0.2.2 > $W/h.json 2> $W/h.err; echo rc=\$?; cat $W/h.err")
	if echo "$out" | grep -q '^rc=0$' && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is True and d["count"] == int(sys.argv[2]) == len(d["samples_ns"])
assert d["responder"]["count"] == int(sys.argv[2])' "$W/h.json" $N 2>/dev/null; then
		ok "$1: an honest prober afterwards gets $N samples"
	else not_ok "$1: an honest prober afterwards gets $N samples" "$out"; fi
}

# logged NAME PATTERN: the responder's log has a line matching PATTERN (ERE).
logged() {
	if grep -qE -- "$2" "$W/resp.log"; then ok "$1: responder logs it ($(grep -E -- "$2" "$W/resp.log" | tail -1 | cut -c1-160))"
	else not_ok "$1: responder logs /$2/" "$(tail -5 "$W/resp.log")"; fi
}

# bounded NAME: the responder is alive and its VmHWM is under the bound.
bounded() {
	local h
	h=$(hwm)
	if [ -n "$h" ] && [ "$h" -le $((BASE_HWM + SLACK_KIB)) ]; then
		ok "$1: responder alive, VmHWM $h KiB <= $BASE_HWM + $SLACK_KIB KiB"
	else not_ok "$1: responder alive, VmHWM ${h:-gone} KiB <= $BASE_HWM + $SLACK_KIB KiB" "$(tail -5 "$W/resp.log")"; fi
}

# attack NAME EXPECT LOGPAT [ARGS...]: run hostile_peer ATTACK ARGS on node0;
# its report matches EXPECT, the responder logs LOGPAT, stays bounded, and
# serves an honest prober.
attack() {
	local name=$1 want=$2 logpat=$3 out
	shift 3
	out=$(lab_exec_t 180 0 "$HP -p $PORT $* 192.0.2.2 $name 2>&1; echo rc=\$?")
	if echo "$out" | grep -q '^rc=0$' && echo "$out" | grep -qE -- "$want"; then
		ok "$name $*: $(echo "$out" | grep -E -- "$want" | head -1 | cut -c1-160)"
	else not_ok "$name $*: report matches /$want/" "$out"; fi
	logged "$name" "$logpat"
	bounded "$name"
	honest "$name"
}

start_responder || { not_ok "responder starts on node1 under ulimit -v $VLIMIT_KIB" "$(lab_exec 1 "cat $W/resp.log")"; done_testing; }
ok "responder starts on node1 under ulimit -v $VLIMIT_KIB"
BASE_HWM=$(hwm)
diag "responder VmHWM at start: $BASE_HWM KiB"
honest "before any attack"
BASE_HWM=$(hwm)
diag "responder VmHWM after an honest session: $BASE_HWM KiB"

P='refused prober 192\.0\.2\.1:[0-9]+: '
attack huge-size "refused .*size 1073741824 exceeds the responder's limit of 1048576 bytes \(raise it with --max-size\)" \
	"$P.*--max-size"
attack huge-capacity "refused .*capacity of 8388608 samples exceeds .*--max-samples" "$P.*capacity of 8388608.*--max-samples"
attack read-silence "refused .*8388608 iterations exceed the responder's limit of 1000000 .*--max-samples" \
	"$P.*8388608 iterations.*--max-samples"
attack run-storm "refused .*32 runs of 100000 samples exceed .*--max-session-samples" \
	"$P.*32 runs of 100000.*--max-session-samples" --count 100000
attack run-storm "storm of 32 RUN/END pairs served" "session with 192\.0\.2\.1:[0-9]+ done \(32 runs\)" --count 1000
# READ then silence: dropped after the run's length plus slack, capped at
# --max-run-time + 2 waits = 16 s; never the 2^23 x 3 s a plain count allows.
attack read-silence "refused after (1[0-9]|2[0-9])\.[0-9] s .*no END from the prober within 16 s" \
	"session with 192\.0\.2\.1:[0-9]+ failed: no END from the prober within 16 s" --count 1000
attack slow-frame "closed after [0-9]\.[0-9] s|refused after [0-9]\.[0-9] s" \
	"session with 192\.0\.2\.1:[0-9]+ failed: handshake"
attack random "refused after [0-9.]+ s" "session with 192\.0\.2\.1:[0-9]+ failed: handshake"
# 50 idle connections: the first holds the session slot until the connect
# timeout (5 s) drops it; the others are refused busy at once.
attack many-conns "50 of 50 connected, (4[0-9]|49) refused busy" "${P}busy serving 192\.0\.2\.1"
logged "many-conns: the idle connection" "session with 192\.0\.2\.1:[0-9]+ failed: handshake: .*"

# busy WHAT [-R]: a prober during another's 8 s run is refused busy at once
# (well under the run), the refusal is logged, and the running session completes.
busy() {
	local what=$1 out ms
	shift
	rm -f "$W/long.rc"
	lab_bg 0 "$B probe -p $PORT $* -u 20 -D 8 --max-samples 500000 --json 192.0.2.2 > $W/long.json 2> $W/long.err; echo \$? > $W/long.rc" >/dev/null
	sleep 3
	out=$(lab_exec_t 60 0 "s=\$(date +%s%N); $B probe -p $PORT $* -u 20 -n $N 192.0.2.2 > /dev/null 2> $W/b.err; echo rc=\$? ms=\$(( (\$(date +%s%N) - s) / 1000000 )); cat $W/b.err")
	ms=$(echo "$out" | sed -n 's/^rc=[0-9]* ms=\([0-9]*\)$/\1/p')
	if echo "$out" | grep -qE '^rc=[1-9]' && echo "$out" | grep -q 'busy: another prober (192\.0\.2\.1:[0-9]*) is being served' &&
	   [ -n "$ms" ] && [ "$ms" -lt 4000 ]; then
		ok "$what: a second prober during an 8 s run is refused busy in $ms ms"
	else not_ok "$what: a second prober during an 8 s run is refused busy promptly (< 4 s)" "$out" \
		"first prober: $(cat "$W/long.err" 2>/dev/null)" "$(tail -5 "$W/resp.log")"; fi
	for _ in $(seq 60); do [ -s "$W/long.rc" ] && break; sleep 1; done
	if [ "$(cat "$W/long.rc" 2>/dev/null)" = 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is True and d["count"] > 0 and d["responder"]["count"] == d["count"]' "$W/long.json" 2>/dev/null; then
		ok "$what: the running session completes ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["count"])' "$W/long.json") samples)"
	else not_ok "$what: the running session completes" "rc $(cat "$W/long.rc" 2>/dev/null)" "$(cat "$W/long.err" 2>/dev/null)"; fi
	logged "$what: busy" "${P}busy serving 192\.0\.2\.1"
}

busy "verbs"
bounded "after all attacks"
diag "responder VmHWM at the end: $(hwm) KiB (bound $((BASE_HWM + SLACK_KIB)) KiB)"
diag "responder log:"
diag "$(cut -c1-200 "$W/resp.log")"
stop_responder

# rdma_cm: the same; the refused prober's CM request does not spoil the next session.
start_responder -R || not_ok "rdma_cm responder starts" "$(lab_exec 1 "cat $W/resp.log")"
busy "rdma_cm" -R
out=$(lab_exec_t 120 0 "$B probe -p $PORT -R -u 20 -n $N --json 192.0.2.2 > $W/h.json 2>&1; echo rc=\$?; cat $W/h.json | head -c 600")
if echo "$out" | grep -q '^rc=0$'; then ok "rdma_cm: the next session completes"
else not_ok "rdma_cm: the next session completes" "$out" "$(tail -5 "$W/resp.log")"; fi
diag "rdma_cm responder log:"
diag "$(cut -c1-200 "$W/resp.log")"
stop_responder

check "node0 dmesg clean" dmesg_clean 0
check "node1 dmesg clean" dmesg_clean 1
done_testing
