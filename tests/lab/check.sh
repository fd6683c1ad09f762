#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: 6.1
# latsplit check on the pair: every row is there with the port's own facts;
# a link rate below --expect-gbps fails; with a peer, RDMA latency is judged
# against the thresholds (the lab's emulated µs are far above the seed's, so
# the defaults FAIL and generous ones PASS); ICMP dropped on node1 while RDMA
# still works fails the ping row naming the pitfall; injected packet loss
# on node0's egress makes its retransmit counters move.
. "$(dirname "$0")/../lib.sh"
plan_none

B=$LS_BIN
PORT=19621
lab_workdir check
RELAX=(--normal-us 1-1000000 --abnormal-us 2000000 --hurts-us 5000000)
lab_cleanup_at_exit 0 "tc qdisc del dev eth0 root" 1 "tc qdisc del dev eth0 root" \
	1 "pkill -f 'latsplit probe -d rxe0 -p $PORT'"

# row FILE ID: "STATUS evidence" of one row of a check JSON document.
row() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["rows"] if r["id"] == sys.argv[2]]
print(r[0]["status"], r[0]["evidence"]) if r else print("MISSING")' "$1" "$2"
}

lab_exec 0 "$B check -d rxe0 --window 1 --json > $W/plain.json"; rc=$?
ids=$(python3 -c 'import json,sys; print(" ".join(r["id"] for r in json.load(open(sys.argv[1]))["rows"]))' "$W/plain.json" 2>&1)
want="port-state link-rate phys-errors pfc ecn-cnp oos-retrans rdma-latency ping-vs-rdma irq-spread"
[ "$ids" = "$want" ] && ok "every layer has its row, in the seed's order" || not_ok "rows" "got '$ids'"
[ "$rc" = 0 ] && ok "no peer, healthy port: exit 0" || not_ok "healthy port exit 0" "rc=$rc" "$(cat "$W/plain.json")"
rate=$(lab_exec 0 "cat /sys/class/infiniband/rxe0/ports/1/rate")
r=$(row "$W/plain.json" port-state)
[[ "$r" == "PASS state 4: ACTIVE"* ]] && ok "port-state PASS from sysfs: $r" || not_ok "port-state" "$r"
r=$(row "$W/plain.json" link-rate)
[[ "$r" == "PASS $rate"* ]] && ok "link-rate shows the port's rate file: $r" || not_ok "link-rate" "$r vs '$rate'"
r=$(row "$W/plain.json" rdma-latency)
[[ "$r" == SKIP* ]] && ok "rdma-latency skipped without a peer" || not_ok "rdma-latency without peer" "$r"

gbps=${rate%% *}
hi=$(python3 -c "print(float('$gbps') * 4)")
lab_exec 0 "$B check -d rxe0 --window 0.5 --expect-gbps $hi --json > $W/rate.json"; rc=$?
r=$(row "$W/rate.json" link-rate)
[ "$rc" = 1 ] && [[ "$r" == FAIL* ]] && ok "rate below --expect-gbps $hi: FAIL, exit 1" ||
	not_ok "downgraded link detected" "rc=$rc $r"
lab_exec 0 "$B check -d rxe0 --window 0.5 --expect-gbps $gbps --json > $W/rate2.json"; rc=$?
r=$(row "$W/rate2.json" link-rate)
[ "$rc" = 0 ] && [[ "$r" == PASS* ]] && ok "rate equal to --expect-gbps $gbps: PASS" || not_ok "expected rate" "rc=$rc $r"

lab_bg 1 "timeout 900 $B probe -d rxe0 -p $PORT --insecure --forever -u 14 > $W/resp.log 2>&1" >/dev/null
for _ in $(seq 300); do grep -q listening "$W/resp.log" 2>/dev/null && break; sleep 0.1; done

lab_exec_t 300 0 "$B check -d rxe0 -p $PORT -u 14 -n 300 -c 10 --json 192.0.2.2 > $W/peer.json"; rc=$?
r=$(row "$W/peer.json" rdma-latency); p=$(row "$W/peer.json" ping-vs-rdma)
if [ "$rc" = 1 ] && [[ "$r" == FAIL* ]] && [[ "$p" == "FAIL ping fine"* ]]; then
	ok "default thresholds: the lab's latency FAILs, and ping fine / RDMA not is named"
else
	not_ok "default thresholds with a peer" "rc=$rc" "$r" "$p"
fi
lab_exec_t 300 0 "$B check -d rxe0 -p $PORT -u 14 -n 300 -c 10 ${RELAX[*]} --json 192.0.2.2 > $W/relaxed.json"; rc=$?
r=$(row "$W/relaxed.json" rdma-latency); p=$(row "$W/relaxed.json" ping-vs-rdma)
n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rdma_one_way"]["count"], d["ping_sent"], d["ping_received"])' "$W/relaxed.json" 2>&1)
if [ "$rc" = 0 ] && [[ "$r" == PASS* ]] && [[ "$p" == PASS* ]] && [ "$n" = "300 10 10" ]; then
	ok "generous thresholds: RDMA and ping PASS (300 probe samples, 10/10 echoes)"
else
	not_ok "generous thresholds with a peer" "rc=$rc counts '$n'" "$r" "$p"
fi

# ICMP dropped on node1's egress, RDMA (UDP 4791) untouched.
lab_exec 1 "tc qdisc add dev eth0 root handle 1: prio &&
	tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip protocol 1 0xff action drop" ||
	not_ok "tc filter dropping ICMP on node1"
lab_exec_t 300 0 "$B check -d rxe0 -p $PORT -u 14 -n 200 -c 5 ${RELAX[*]} --json 192.0.2.2 > $W/noicmp.json"; rc=$?
p=$(row "$W/noicmp.json" ping-vs-rdma); r=$(row "$W/noicmp.json" rdma-latency)
if [ "$rc" = 1 ] && [[ "$p" == "FAIL ICMP loss 100.0%"*"although RDMA works"* ]] && [[ "$r" == PASS* ]]; then
	ok "ICMP dropped, RDMA fine: ping row FAILs and says RDMA works"
else
	not_ok "ICMP dropped while RDMA works" "rc=$rc" "$p" "$r"
fi
check "ICMP filter removed from node1 eth0" lab_exec 1 "tc qdisc del dev eth0 root"

# 10 % loss on node0's own egress: its lost WRITEs are seen by nobody, so
# only node0's retransmit timer recovers them (completer retries), and its
# lost ACKs make node1 resend (duplicate requests at node0). Loss on node1's
# egress would not do: a later cumulative ACK covers a lost one, and node1's
# own retransmits are counted on node1, which check does not read.
# "replace": a root qdisc left by anything before still gives way to netem;
# netem's own drop count says the loss was really there.
check "netem loss 10% on node0 eth0" lab_exec 0 "tc qdisc replace dev eth0 root netem loss 10%"
lab_exec_t 300 0 "$B check -d rxe0 -p $PORT -u 14 -n 200 -c 5 ${RELAX[*]} --json 192.0.2.2 > $W/loss.json"
o=$(row "$W/loss.json" oos-retrans)
q=$(lab_exec 0 "tc -s qdisc show dev eth0" 2>&1)
dropped=$(sed -n 's/.*(dropped \([0-9]*\).*/\1/p' <<<"$q" | head -n 1)
if [ "${dropped:-0}" -gt 0 ] && [[ "$o" == "WARN moved during the window"* ]]; then
	ok "injected loss ($dropped packets dropped by netem) moves the retransmit counters: ${o:0:160}"
else
	not_ok "injected loss shows in oos-retrans" "$o" "node0 eth0 qdisc: $q"
fi
check "netem removed from node0 eth0" lab_exec 0 "tc qdisc del dev eth0 root"
check "dmesg clean on node0" dmesg_clean 0
done_testing
