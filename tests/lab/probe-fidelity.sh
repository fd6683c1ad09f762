#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fidelity against perftest: latsplit probe (A) and ib_write_lat (B) in
# short alternated blocks A B A B ... (9 of each by default, same size,
# iterations, QP timeout) between the lab nodes. Judged on block pairs: the
# median over adjacent pairs of the ratio of their typical one-way latency
# (latsplit p50 of RTT/2, perftest t_typical) must lie within [0.8, 1.25].
# Adjacent blocks are seconds apart, so the emulator's drift (2-3x between
# runs minutes apart) cancels in each ratio; the ratio of the medians over
# all blocks and the host load are printed as diagnostics.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"

B=$LS_BIN
N=${PROBE_FIDELITY_ITERS:-300}
SIZE=4
ROUNDS=${PROBE_FIDELITY_ROUNDS:-9}
PORT=19631
PPORT=18531
SH=$(lab_shared)
W=$SH/probe-fidelity.$$
mkdir -p "$W"
command -v ib_write_lat >/dev/null || skip_all "perftest (ib_write_lat) is not installed"
plan_none
lab_exec 0 "echo 3 > /proc/sys/vm/drop_caches"; lab_exec 1 "echo 3 > /proc/sys/vm/drop_caches"

cleanup() {
	[ -s "$W/srv.pid" ] && lab_exec 1 "kill $(cat "$W/srv.pid") 2>/dev/null; true"
	rm -rf "$W"
}
trap cleanup EXIT

# server CMD: start CMD on node1 in the background, pid in $W/srv.pid.
server() {
	rm -f "$W/srv.pid" "$W/srv.log"
	lab_bg 1 "$* > $W/srv.log 2>&1 & echo \$! > $W/srv.pid; wait" >/dev/null
	for _ in $(seq 25); do [ -s "$W/srv.pid" ] && break; sleep 0.2; done
}

# run_a: one latsplit round; prints its typical one-way latency in us.
run_a() {
	server "$B probe --insecure -p $PORT --listen-timeout 60"
	for _ in $(seq 50); do lab_exec 1 "grep -q listening $W/srv.log" 2>/dev/null && break; sleep 0.2; done
	lab_exec_t 300 0 "$B probe -p $PORT -u 20 -s $SIZE -n $N --json 192.0.2.2 2>/dev/null" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["complete"]; print(d["summary"]["p50_ns"]/1e3)'
}

# run_b: one ib_write_lat round; prints t_typical in us.
run_b() {
	local out
	server "ib_write_lat -d rxe0 -x 1 -u 20 -s $SIZE -n $N -F -p $PPORT"
	for _ in $(seq 10); do
		sleep 0.5
		out=$(lab_exec_t 300 0 "ib_write_lat -d rxe0 -x 1 -u 20 -s $SIZE -n $N -F -p $PPORT 192.0.2.2 2>&1") &&
			break
	done
	echo "$out" | awk -v s=$SIZE '$1 == s && NF >= 5 { print $5; found=1 } END { exit !found }'
}

a=() b=()
for r in $(seq "$ROUNDS"); do
	if x=$(run_a); then a+=("$x"); diag "round $r A latsplit probe p50 one-way: $x us"
	else not_ok "round $r: latsplit probe ran" "$x"; fi
	if y=$(run_b); then b+=("$y"); diag "round $r B ib_write_lat t_typical: $y us"
	else not_ok "round $r: ib_write_lat ran" "$y"; fi
done
if [ ${#a[@]} -eq "$ROUNDS" ] && [ ${#b[@]} -eq "$ROUNDS" ]; then
	ok "$ROUNDS alternated rounds of each ran"
	res=$(python3 - "${a[*]}" "${b[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
pair = statistics.median([x / y for x, y in zip(a, b)])
print("%.3f %.1f %.1f %.3f" % (ma / mb, ma, mb, pair))
EOF
)
	read -r ratio ma mb pair <<< "$res"
	diag "median of the adjacent pairs' ratios latsplit/ib_write_lat: $pair" \
		"(median typical one-way over all blocks: latsplit $ma us, ib_write_lat $mb us, ratio $ratio; host load: $(cut -d' ' -f1-3 /proc/loadavg))"
	if python3 -c "import sys; sys.exit(not (0.8 <= $pair <= 1.25))"; then
		ok "median adjacent-pair ratio latsplit/ib_write_lat $pair within [0.8, 1.25]"
	else
		not_ok "median adjacent-pair ratio latsplit/ib_write_lat $pair within [0.8, 1.25]" "A: ${a[*]}" "B: ${b[*]}"
	fi
else
	not_ok "$ROUNDS alternated rounds of each ran" "A: ${a[*]}" "B: ${b[*]}"
fi
done_testing
