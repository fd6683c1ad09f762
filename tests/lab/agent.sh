#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit agent` on both lab nodes, scraped by a real Prometheus server
# (Debian's prometheus) on the host through the lab's --hostfwd port (a
# restricted user-network NIC per node: the host reaches each guest's
# /metrics port on 127.0.0.1). The test boots a lab of its own with that
# NIC (the suite's lab has none) and asks Prometheus' HTTP API:
#   - both targets are up (up == 1), each node has a non-empty one-way
#     latency series for its peer, /metrics answers 404 elsewhere, and the
#     live page passes `promtool check metrics`;
#   - a fault on the wire: every RDMA WRITE frame node0 -> node1 held a
#     time drawn uniformly from 0..2J (node0 probes with WRITE, so its
#     one-way time grows by a median J/2; node1 probes with READ, whose
#     requests go node1 -> node0 and whose answers are READ responses, so
#     nothing of its own is held; and the two never share the wire's queue:
#     the fleet's list has a third host, 192.0.2.3, that does not exist, so
#     the schedule puts node0 -> node1 and node1 -> node0 in alternate
#     slots, the other slot of each going to the absent host). A varying
#     hold, not a constant one: a delay every sample pays lands in the
#     split's inferred base floor (Documentation/methodology.rst), not in
#     queuing. The queuing series (latsplit_breakdown_seconds) moves with
#     every kernel-recorded breakdown; the agents' slot (5 s: a round of 2
#     slots), a breakdown round every 2 rounds and Prometheus' scrape
#     interval (30 s) are chosen so that a breakdown round and its session
#     fit in one scrape interval. A second job scrapes the same pages every
#     2 s (job "keepwarm", never judged); whether it matters is not known:
#     runs of this test have read 0.06-0.2 ms of breakdown queuing before
#     the fault and others 2-3.6 ms (the hold then lost) with the same code,
#     and the cause is still being looked for. The judged series are
#     job="latsplit"'s: timed from the injection by
#     Prometheus' own sample timestamps, node0's queuing p50 series shows a
#     breakdown that ended after the injection more than 0.5 x J/2 above
#     its own pre-fault median within two scrape intervals (a relation,
#     never absolute microseconds). node1's series is not
#     judged: comparing it before and after the fault tests the emulator's
#     queues more than latsplit, and under emulation it is too noisy to
#     judge that way (pre-fault p50s of 524-848 us with a 9 ms outlier;
#     moves of -0.72, -0.28 and +0.31 ms in three runs, about +2 ms in a
#     fourth, which failed the old check); its move is printed only;
#   - robustness: a peer whose agent stops is reported down (peer_up 0,
#     failures counted) and up again once it returns; a changed peers file
#     is taken on SIGHUP (a new host appears, the old one keeps its
#     counters) and a bad one keeps the list (reload counted as failed);
#     SIGTERM while a session is in flight ends the agent with status 0
#     within its grace, leaves no latsplit process behind and closes the
#     /metrics port.
# lab-kernels: 6.1
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"

command -v prometheus >/dev/null || skip_all "prometheus not installed (make deps)"
command -v python3 >/dev/null || skip_all "python3 not installed (make deps)"
[ -x "$LS_BIN" ] || skip_all "build/latsplit not built (make tools)"
plan_none

B=$LS_BIN
GPORT=9851		# the agents' /metrics port in the guests
SCRAPE=30		# s: a breakdown round (every 20 s) and its session fit in it
J_US=${AGENT_JITTER_US:-2000}
SLOT_S=5		# s: a round of the 3-host list is 2 slots (shorter slots load
			# the emulated guests into milliseconds of queuing of their own)
BD_EVERY=2		# a breakdown round every 2 rounds (20 s; breakdowns every
			# round kept the guests busy into milliseconds of queuing)
OWN=agent-$$
H=$(mktemp -d)
PROM_PID=

cleanup() {
	[ -z "$PROM_PID" ] || kill "$PROM_PID" 2>/dev/null
	[ -z "$PROM_PID" ] || wait "$PROM_PID" 2>/dev/null
	"$LS_LAB" down --name "$OWN" >/dev/null 2>&1
	rm -rf "$H"
}
trap cleanup EXIT

# Our own lab, with the host-forwarded port.
if ! out=$("$LS_LAB" up --name "$OWN" --kver "${LS_KVER_SHORT:-6.1}" --smp 1 --hostfwd "$GPORT" 2>&1); then
	not_ok "lab up --hostfwd $GPORT" "$out"
	done_testing
fi
LAB_NAME=$OWN
S=$(lab_shared)
HP0=$("$LS_LAB" info --name "$OWN" hostfwd | awk '$1 == "node0" { print $2 }')
HP1=$("$LS_LAB" info --name "$OWN" hostfwd | awk '$1 == "node1" { print $2 }')
ok "lab up with --hostfwd: node0's /metrics on 127.0.0.1:$HP0, node1's on 127.0.0.1:$HP1"
for n in 0 1; do
	# the forwarded NIC is the one with the lab's 52:54:00:4c:54:0N address
	lab_exec "$n" "for i in /sys/class/net/*; do [ \"\$(cat \$i/address)\" = 52:54:00:4c:54:0$n ] || continue;
		ip link set \${i##*/} up && ip addr add 10.0.2.15/24 dev \${i##*/}; done" >/dev/null
done
ko=$LS_TOP/build/kmod/$(lab_kver)/kmod/latsplit.ko
if [ -r "$ko" ]; then
	lab_exec 0 "insmod $ko" >/dev/null 2>&1
	lab_exec 1 "insmod $ko" >/dev/null 2>&1
fi

# 192.0.2.3 is absent: node0 and node1 probe each other in alternate slots
printf '# the lab fleet\n192.0.2.1\n192.0.2.2\n192.0.2.3\n' > "$S/peers0"
cp "$S/peers0" "$S/peers1"
# start_agent NODE VERB: the agent in guest NODE; its log in $S/agentN.log,
# its pid in $S/agentN.pid and, once it ended, its exit status in $S/agentN.rc.
start_agent() {
	rm -f "$S/agent$1.rc" "$S/agent$1.pid"
	lab_bg "$1" "cd $S && ( $B agent --peers $S/peers$1 --self 192.0.2.$(($1 + 1)) --metrics 10.0.2.15:$GPORT \
		--insecure --slot ${SLOT_S}s --breakdown-every $BD_EVERY -n 100 --verb $2 --max-sessions 2 >> $S/agent$1.log 2>&1 & echo \$! > $S/agent$1.pid;
		wait \$!; echo \$? > $S/agent$1.rc )" >/dev/null
}
start_agent 0 write
start_agent 1 read

# metric HOSTPORT NAME LABELS: the value of one sample of an agent's page, straight from it.
metric() {
	python3 - "$@" <<'EOF'
import re, sys, urllib.request
port, name, labels = sys.argv[1], sys.argv[2], sys.argv[3]
page = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
for line in page.splitlines():
    if line.startswith(name + "{" + labels + "}") or line.startswith(name + " ") and not labels:
        print(line.rsplit(" ", 1)[1]); sys.exit(0)
sys.exit(1)
EOF
}
# wait_for SECONDS CMD...: poll CMD once a second until it succeeds.
wait_for() {
	local t=$1; shift
	for _ in $(seq "$t"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
	return 1
}
# at_least HOSTPORT NAME LABELS V: the sample is >= V.
at_least() { local v; v=$(metric "$1" "$2" "$3") && python3 -c "import sys; sys.exit(not float('$v') >= float('$4'))"; }

if wait_for 120 at_least "$HP0" latsplit_agent_probes_total 'peer="192.0.2.2"' 1 &&
   wait_for 60 at_least "$HP1" latsplit_agent_probes_total 'peer="192.0.2.1"' 1; then
	ok "both agents serve /metrics through the forwarded port and probed their peer"
else
	not_ok "agents up" "$(cat "$S/agent0.log" "$S/agent1.log" 2>&1 | tail -n 30)"
	done_testing
fi
code=$(python3 -c "
import urllib.request, urllib.error
try: urllib.request.urlopen('http://127.0.0.1:$HP0/other', timeout=5); print(200)
except urllib.error.HTTPError as e: print(e.code)")
[ "$code" = 404 ] && ok "/other is 404" || not_ok "/other" "HTTP $code"
# page HOSTPORT: an agent's live /metrics page
page() {
	python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$1/metrics', timeout=5).read().decode())"
}
if command -v promtool >/dev/null; then
	for hp in "$HP0" "$HP1"; do
		if out=$(page "$hp" 2>&1 | promtool check metrics 2>&1); then
			ok "promtool check metrics: the live page of 127.0.0.1:$hp is clean"
		else
			not_ok "promtool check metrics on 127.0.0.1:$hp" "$out"
		fi
	done
else
	skip "promtool check metrics on the live pages" "promtool not installed (make deps)"
fi

# Prometheus on the host, scraping both.
PP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$H/prometheus.yml" <<EOF
global:
  scrape_interval: ${SCRAPE}s
  evaluation_interval: ${SCRAPE}s
scrape_configs:
  - job_name: latsplit
    static_configs:
      - targets: ['127.0.0.1:$HP0']
        labels: { node: node0 }
      - targets: ['127.0.0.1:$HP1']
        labels: { node: node1 }
  - job_name: keepwarm
    scrape_interval: 2s
    static_configs:
      - targets: ['127.0.0.1:$HP0']
        labels: { node: node0 }
      - targets: ['127.0.0.1:$HP1']
        labels: { node: node1 }
EOF
prometheus --config.file="$H/prometheus.yml" --storage.tsdb.path="$H/tsdb" \
	--web.listen-address="127.0.0.1:$PP" > "$H/prometheus.log" 2>&1 &
PROM_PID=$!

# q EXPR: an instant query; one "node peer value" line per series.
q() {
	python3 - "$PP" "$1" <<'EOF'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
r = json.load(urllib.request.urlopen(u, timeout=10))
assert r["status"] == "success", r
for s in r["data"]["result"]:
    print(s["metric"].get("node", "-"), s["metric"].get("peer", "-"), s["value"][1])
EOF
}
# q_has EXPR N: the query returns N series at least.
q_has() { [ "$(q "$1" | wc -l)" -ge "$2" ]; }

if wait_for 60 q_has 'up{job="latsplit"} == 1' 2; then
	ok "Prometheus scrapes both agents: up == 1 for node0 and node1"
else
	not_ok "up" "$(q 'up' 2>&1)" "$(tail -n 20 "$H/prometheus.log")"
	done_testing
fi
diag "$(q 'up{job="latsplit"}')"
if wait_for 60 q_has 'latsplit_agent_oneway_seconds{quantile="0.5",node="node0",peer="192.0.2.2"} > 0' 1 &&
   wait_for 60 q_has 'latsplit_agent_oneway_seconds{quantile="0.5",node="node1",peer="192.0.2.1"} > 0' 1; then
	ok "each node has a non-empty one-way latency series for its peer"
	diag "$(q 'latsplit_agent_oneway_seconds{quantile="0.5"}')"
else
	not_ok "one-way series" "$(q 'latsplit_agent_oneway_seconds' 2>&1)"
fi
check "the breakdown series carry the verdict as labels" \
	wait_for 60 q_has 'latsplit_breakdown_level{node="node0",next_layer!="",dominant_p50!=""}' 1

# --pause-idle: each agent's breakdown responder owns latsplit.ko (backend
# auto; the node's own breakdown prober falls back to eBPF) and keeps it
# disabled while it waits for a prober. 20 samples 1 s apart on node1: with
# a breakdown round every 2 rounds of 2 slots (20 s; node0's breakdown of
# node1 takes seconds under emulation), at least a quarter see the module
# owned and disabled; a responder that recorded while idle shows enabled 1
# in every sample.
if lab_exec 1 "test -r /sys/kernel/debug/latsplit/config" 2>/dev/null; then
	idle=$(lab_exec 1 "n=0; for i in \$(seq 20); do c=\$(cat /sys/kernel/debug/latsplit/config);
		echo \"\$c\" | grep -qx 'enabled 0' && ! echo \"\$c\" | grep -qx 'owner none' && n=\$((n + 1));
		sleep 1; done; echo \$n")
	if [ "${idle:-0}" -ge 5 ]; then
		ok "the breakdown responder keeps latsplit.ko owned and disabled while idle ($idle of 20 samples)"
	else
		not_ok "breakdown responder paused while idle" "owned and disabled in ${idle:-?} of 20 samples (want >= 5)"
	fi
else
	skip "breakdown responder paused while idle" "latsplit.ko not loaded in the guest"
fi

# The fault: node0 -> node1 WRITE frames held 0..2J. First the baseline.
QQ='latsplit_breakdown_seconds{job="latsplit",part="queuing",quantile="0.5"}'
QQ0='latsplit_breakdown_seconds{job="latsplit",part="queuing",quantile="0.5",node="node0",peer="192.0.2.2"}'
# history NODE: the queuing p50 series' distinct values over the last 2 min (diagnostics)
history() {
	python3 - "$PP" "latsplit_breakdown_seconds{job=\"latsplit\",part=\"queuing\",quantile=\"0.5\",node=\"$1\"}[3m]" <<'EOF'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
r = json.load(urllib.request.urlopen(u, timeout=10))
for s in r["data"]["result"]:
    v = [x[1] for x in s["values"]]
    print(" ".join("%.0f" % (float(x) * 1e6) for i, x in enumerate(v) if i == 0 or v[i - 1] != x), "us")
EOF
}
# the baseline: the median of the last 150 s, once 5 breakdowns warmed the pair up
wait_for 150 at_least "$HP0" latsplit_agent_breakdowns_total 'peer="192.0.2.2"' 5 ||
	diag "fewer than 5 breakdowns of node0 with node1 before the fault"
sleep $((2 * SCRAPE))
diag "queuing p50 before the fault: node0 $(history node0); node1 $(history node1)"
base=$(q "quantile_over_time(0.5, ${QQ}[150s])")
diag "pre-fault queuing p50 medians (node peer s): $base"
# bval NODE: this node's pre-fault median, s
bval() { echo "$base" | awk -v n="$1" '$1 == n { print $3 }'; }
wire() { "$LS_LAB" wire --name "$OWN" "$@"; }
t0=$(date +%s.%N)
if ! out=$(wire rule ab 0 roce=1 op=req delay=$((J_US * 1000)) jitter=$((J_US * 1000)) 2>&1); then
	not_ok "wire rule" "$out"
	done_testing
fi
# the scrapes up to 2 intervals after the injection, and time for their ingestion
sleep $((2 * SCRAPE + 2))
half=$(python3 -c "print($J_US * 1e-6 / 2)")
# moved: node0's queuing p50 and last-session time as Prometheus scraped
# them in (t0, t0 + 2 x SCRAPE]; the first scrape showing a session that
# ended after t0 with queuing above base + 0.5 x J/2, and its delay.
moved=$(python3 - "$PP" "$t0" "$SCRAPE" "$(bval node0)" "$half" "$QQ0" <<'EOF'
import json, sys, urllib.parse, urllib.request
pp, t0, scrape, base, half, qq = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
end = t0 + 2 * scrape
def raw(expr):
    u = "http://127.0.0.1:%s/api/v1/query?query=%s&time=%.3f" % (pp, urllib.parse.quote("%s[%ds]" % (expr, 2 * scrape)), end)
    r = json.load(urllib.request.urlopen(u, timeout=10))["data"]["result"]
    return {float(t): float(v) for t, v in r[0]["values"]} if r else {}
q = raw(qq)
last = raw('latsplit_breakdown_last_timestamp_seconds{job="latsplit",node="node0",peer="192.0.2.2"}')
rows = ["%+.2f s: queuing p50 %.0f us, last breakdown ended %+.2f s" % (t - t0, v * 1e6, last.get(t, 0) - t0)
        for t, v in sorted(q.items())]
print("\n".join(rows) if rows else "no scrape of the series after the injection")
hit = [t for t, v in sorted(q.items()) if t > t0 and last.get(t, 0) > t0 and v - base > 0.5 * half]
print("MOVED %.2f" % (hit[0] - t0) if hit else "NOT MOVED")
EOF
)
wire norule ab >/dev/null
diag "node0's queuing p50 after the injection (pre-fault median $(bval node0) s, J/2 = $half s):" "$moved"
diag "queuing p50 through the fault: node0 $(history node0); node1 $(history node1)"
if echo "$moved" | grep -q '^MOVED'; then
	ok "node0 (its WRITEs held 0..$((2 * J_US)) us): queuing p50 more than 0.5 x J/2 above its pre-fault median $(echo "$moved" | awk '/^MOVED/ { print $2 }') s after the injection (within 2 scrapes, $((2 * SCRAPE)) s)"
else
	not_ok "node0's queuing p50 moved within 2 scrapes ($((2 * SCRAPE)) s) of the injection" "$moved"
fi
diag "node1 (nothing of its own held, not judged): queuing p50 now $(q "$QQ" | awk '$1 == "node1" { print $3 }') s, pre-fault median $(bval node1) s"

# A peer that disappears and returns.
f0=$(metric "$HP0" latsplit_agent_probe_failures_total 'peer="192.0.2.2"')
lab_exec 1 "kill -TERM \$(cat $S/agent1.pid)"
wait_for 30 test -s "$S/agent1.rc"
if wait_for 60 at_least "$HP0" latsplit_agent_probe_failures_total 'peer="192.0.2.2"' $((f0 + 1)) &&
   [ "$(metric "$HP0" latsplit_agent_peer_up 'peer="192.0.2.2"')" = 0 ]; then
	ok "node1's agent stopped: node0 reports it down (peer_up 0, failures counted)"
else
	not_ok "peer down" "$(tail -n 5 "$S/agent0.log")"
fi
grep -q "peer 192.0.2.2 down" "$S/agent0.log" && ok "node0 logged the peer going down once" ||
	not_ok "down logged" "$(tail -n 5 "$S/agent0.log")"
start_agent 1 read
if wait_for 90 at_least "$HP0" latsplit_agent_peer_up 'peer="192.0.2.2"' 1; then
	ok "node1's agent is back: node0 reports it up again"
else
	not_ok "peer up again" "$(tail -n 5 "$S/agent0.log")"
fi

# The peers file changes: a host added, then a bad file.
p0=$(metric "$HP0" latsplit_agent_probes_total 'peer="192.0.2.2"')
printf '192.0.2.1\n192.0.2.2\n192.0.2.3\n192.0.2.77\n' > "$S/peers0.new" && mv "$S/peers0.new" "$S/peers0"
lab_exec 0 "kill -HUP \$(cat $S/agent0.pid)"
if wait_for 20 at_least "$HP0" latsplit_agent_peers '' 3 &&
   wait_for 60 at_least "$HP0" latsplit_agent_probe_failures_total 'peer="192.0.2.77"' 1 &&
   at_least "$HP0" latsplit_agent_probes_total 'peer="192.0.2.2"' "$p0"; then
	ok "SIGHUP takes the new list: 192.0.2.77 is probed (and fails), 192.0.2.2 keeps its counters"
else
	not_ok "reload" "$(tail -n 5 "$S/agent0.log")"
fi
printf '192.0.2.1\nnot a host\n' > "$S/peers0.new" && mv "$S/peers0.new" "$S/peers0"
lab_exec 0 "kill -HUP \$(cat $S/agent0.pid)"
if wait_for 20 at_least "$HP0" latsplit_agent_peers_reloads_total 'result="failed"' 1 &&
   [ "$(metric "$HP0" latsplit_agent_peers '')" = 3 ] &&
   grep -q "keeping the 3 peers of the old list" "$S/agent0.log"; then
	ok "a bad peers file keeps the old list, says why, counts the failed reload"
else
	not_ok "bad reload" "$(tail -n 5 "$S/agent0.log")"
fi

# SIGTERM with a session in flight: the agent has 2 responders and a session child.
inflight() { lab_exec 0 "p=\$(cat $S/agent0.pid); [ \$(cat /proc/\$p/task/\$p/children | wc -w) -ge 3 ]"; }
if wait_for 60 inflight; then
	lab_exec 0 "kill -TERM \$(cat $S/agent0.pid)"
	if wait_for 15 test -s "$S/agent0.rc" && [ "$(cat "$S/agent0.rc")" = 0 ]; then
		ok "SIGTERM with a session in flight: exit status 0 within the grace"
	else
		not_ok "SIGTERM exit" "rc=$(cat "$S/agent0.rc" 2>&1)" "$(tail -n 5 "$S/agent0.log")"
	fi
	left=$(lab_exec 0 "ps -eo comm | grep -c '^latsplit' || true")
	[ "$left" = 0 ] && ok "no latsplit process left on node0" || not_ok "processes left" "$left"
	tail -n 1 "$S/agent0.log" | grep -q "latsplit agent: stopped" && ok "its log ends with 'stopped'" ||
		not_ok "log end" "$(tail -n 3 "$S/agent0.log")"
	metric "$HP0" latsplit_agent_peers '' >/dev/null 2>&1 && not_ok "/metrics closed" "still answers" ||
		ok "/metrics is closed"
else
	not_ok "a session in flight" "no session child seen in 60 s"
fi
lab_exec 1 "kill -TERM \$(cat $S/agent1.pid)" >/dev/null
wait_for 15 test -s "$S/agent1.rc"
[ "$(cat "$S/agent1.rc" 2>/dev/null)" = 0 ] && ok "node1's agent stops with status 0" ||
	not_ok "node1 stop" "$(tail -n 5 "$S/agent1.log")"
done_testing
