#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Who may talk to a responder, between the two lab nodes: with --key on both
# sides the probe runs; a prober without the key, with another key, or
# speaking HELLO without the handshake is refused on both sides (the
# responder's log names the refusal and the prober's address) and the same
# responder then serves an honest prober; a prober with a key refuses an
# --insecure responder, which serves a prober without one. The responder
# listens on node1's RoCE address by default and on the wildcard with
# --bind any. The keys are guest-local files of mode 0600.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"

B=$LS_BIN
N=40
PORT=19651
lab_workdir probe-auth
plan_none
K=/tmp/probe-auth.$$

# start_responder ARGS...: a --forever responder on node1 (lab_responder_start).
start_responder() { lab_responder_start "$B probe -p $PORT --forever --listen-timeout 120 $*"; }
stop_responder() { lab_responder_stop; }
cleanup() {
	stop_responder
	for n in 0 1; do lab_exec $n "rm -rf $K" >/dev/null 2>&1; done
	rm -rf "$W"
}
trap cleanup EXIT

# prober DESC ARGS...: run a prober on node0 with ARGS; its JSON in $W/j,
# "rc=N" and its stderr on stdout.
prober() {
	lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n $N --json $* 192.0.2.2 > $W/j 2> $W/err; echo rc=\$?; cat $W/err"
}
# honest DESC ARGS...: a prober with ARGS completes with N samples.
honest() {
	local desc=$1 out
	shift
	out=$(prober "$@")
	if echo "$out" | grep -q '^rc=0$' &&
	   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] and d["count"] == int(sys.argv[2]) == len(d["samples_ns"])' "$W/j" $N 2>/dev/null; then
		ok "$desc"
	else not_ok "$desc" "$out" "$(lab_exec 1 "cat $W/resp.log")"; fi
}
# refused DESC PATTERN ARGS...: a prober with ARGS exits 2 and says PATTERN.
refused() {
	local desc=$1 pat=$2 out
	shift 2
	out=$(prober "$@")
	if echo "$out" | grep -q '^rc=2$' && echo "$out" | grep -Eq -- "$pat"; then ok "$desc"
	else not_ok "$desc" "want exit 2 and /$pat/" "$out"; fi
}
# resp_log DESC PATTERN COUNT: the responder's log has COUNT lines matching PATTERN.
resp_log() {
	local n
	sleep 0.5
	n=$(lab_exec 1 "grep -Ec -- '$2' $W/resp.log")
	if [ "$n" = "$3" ]; then ok "$1"
	else not_ok "$1" "$n lines match /$2/, want $3" "$(lab_exec 1 "cat $W/resp.log")"; fi
}
# listen_addr: the local address of node1's listener on PORT.
listen_addr() { lab_exec 1 "ss -ltnH '( sport = :$PORT )'" | awk '{print $4}' | sort -u | paste -sd' ' -; }

# The same key on both nodes, another on node0; guest-local, mode 0600.
key=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
other=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
for n in 0 1; do
	lab_exec $n "umask 077; mkdir -p $K && printf '%s' $key > $K/key && printf '%s' $other > $K/other" >/dev/null
done
modes=$(lab_exec 0 "stat -c %a $K/key $K/other" | paste -sd' ' -)
[ "$modes" = "600 600" ] && ok "key files of mode 0600 on both nodes" || not_ok "key files of mode 0600" "$modes"

# --- a keyed responder, default bind ------------------------------------------
start_responder --key $K/key || not_ok "keyed responder starts" "$(lab_exec 1 "cat $W/resp.log")"
a=$(listen_addr)
[ "$a" = "192.0.2.2:$PORT" ] && ok "default bind: listens on node1's RoCE address alone ($a)" ||
	not_ok "default bind: listens on node1's RoCE address alone" "ss: '$a'" "$(lab_exec 1 "cat $W/resp.log")"
lab_exec 1 "grep -q 'listening on 192.0.2.2 port $PORT, probers must prove the key' $W/resp.log" &&
	ok "the responder says where it listens and that probers must prove the key" ||
	not_ok "the responder's listening line" "$(lab_exec 1 "cat $W/resp.log")"
honest "the same key on both sides: the probe runs, $N samples" --key $K/key

refused "a prober without a key: exit 2, told to give --key" \
	"responder 192.0.2.2:$PORT requires a key: give --key FILE" 
resp_log "the responder logs the refusal with the prober's address" \
	"session with 192\.0\.2\.1:[0-9]+ failed: authentication failed" 1
honest "after it, the same responder serves an honest prober" --key $K/key

refused "a prober with another key: exit 2, authentication failed" \
	"authentication failed: the prober's proof does not match this responder's key" --key $K/other
resp_log "the responder refused the wrong key too, naming the prober" \
	"session with 192\.0\.2\.1:[0-9]+ failed: authentication failed: the prober.s proof does not match" 1
honest "after it, the same responder serves an honest prober" --key $K/key

# A HELLO frame (version 2, 100 bytes) without the handshake.
lab_exec_t 30 0 "exec 3<>/dev/tcp/192.0.2.2/$PORT; { printf '\x4c\x53\x50\x42\x00\x02\x00\x01\x00\x00\x00\x00\x00\x00\x00\x64'; head -c 100 /dev/zero; } >&3; sleep 1; exec 3>&-" >/dev/null 2>&1
resp_log "a HELLO without the handshake is refused" \
	"session with 192\.0\.2\.1:[0-9]+ failed: authentication failed: .*HELLO while AUTH_PROOF was expected" 1
honest "after it, the same responder serves an honest prober" --key $K/key
resp_log "the responder completed the four honest sessions" "session with 192\.0\.2\.1:[0-9]+ done" 4
stop_responder

# --- an insecure responder ----------------------------------------------------
start_responder --insecure || not_ok "insecure responder starts" "$(lab_exec 1 "cat $W/resp.log")"
refused "a prober with a key refuses an --insecure responder" \
	"responder 192.0.2.2:$PORT runs without a key \(--insecure\); refusing because --key was given" --key $K/key
honest "the insecure responder serves a prober without a key" 
stop_responder

# --- --bind any ----------------------------------------------------------------
start_responder --insecure --bind any || not_ok "--bind any responder starts" "$(lab_exec 1 "cat $W/resp.log")"
a=$(listen_addr)
case "$a" in
"*:$PORT"|"0.0.0.0:$PORT"|"[::]:$PORT") ok "--bind any: listens on the wildcard ($a)" ;;
*) not_ok "--bind any: listens on the wildcard" "ss: '$a'" ;;
esac
honest "--bind any: a prober is served"
stop_responder

check "node0 dmesg clean" dmesg_clean 0
check "node1 dmesg clean" dmesg_clean 1
done_testing
