#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit probe between the two lab nodes: every verb (write, send, read) x
# 4 B and 4096 B x busy-poll and event mode completes; the JSON document has
# the schema's keys and types (kind "probe", samples_ns of exactly -n values,
# a nearest-rank p50 that is one of the samples); the samples file (CSV and
# NDJSON) has exactly -n rows whose latency column matches the JSON and whose
# responder turnaround (seen -> answered) lies inside the prober's RTT; a size
# sweep (-a), a duration run (-D), rdma_cm (-R) and --rtt work.
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"

B=$LS_BIN
N=40
PORT=19611
lab_workdir probe-basic
plan_none
lab_drop_caches

# start_responder EXTRA...: a --forever responder on node1 (lab_responder_start).
start_responder() { lab_responder_start "$B probe --insecure -p $PORT --forever --listen-timeout 120 $*"; }
stop_responder() { lab_responder_stop; }
cleanup() { stop_responder; rm -rf "$W"; }
trap cleanup EXIT

# validate JSON NROWS MODE: schema checks of a probe document (python3, explicit keys).
validate() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
n, verb = int(sys.argv[2]), sys.argv[3]
def need(o, k, t):
    assert k in o, "missing key %s" % k
    assert isinstance(o[k], t) and not isinstance(o[k], bool) or t is bool and isinstance(o[k], bool), \
        "key %s has type %s" % (k, type(o[k]).__name__)
for k, t in [("schema", int), ("kind", str), ("role", str), ("verb", str), ("mode", str),
             ("latency", str), ("rtt_divisor", int), ("clock", str), ("hw_clock", str),
             ("rdma_cm", bool), ("peer", str), ("mtu", int), ("qp_timeout", int),
             ("device", dict), ("complete", bool), ("size", int), ("count", int),
             ("samples_ns", list), ("summary", dict), ("rtt_summary", dict),
             ("responder", dict)]:
    need(doc, k, t)
assert doc["schema"] == 1 and doc["kind"] == "probe" and doc["role"] == "prober"
assert doc["verb"] == verb, doc["verb"]
assert doc["clock"] == "CLOCK_MONOTONIC" and doc["hw_clock"] in ("none", "hca", "wallclock")
assert doc["complete"] is True and doc["fault"] is None
assert doc["rtt_divisor"] == (1 if verb == "read" else 2)
assert doc["latency"] == ("read" if verb == "read" else "one_way")
assert abs(doc["rtt_summary"]["p50_ns"] - doc["rtt_divisor"] * doc["summary"]["p50_ns"]) < 1e-3
for k, t in [("name", str), ("port", int), ("gid_index", int), ("gid", str),
             ("active_mtu", int), ("max_msg_sz", int), ("link_gbps", (int, float))]:
    need(doc["device"], k, t)
assert doc["count"] == n == len(doc["samples_ns"]), (doc["count"], len(doc["samples_ns"]))
s = doc["summary"]
for k in ("count", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
          "mean_ns", "stdev_ns"):
    need(s, k, (int, float))
v = sorted(doc["samples_ns"])
assert s["count"] == n and s["min_ns"] == v[0] and s["max_ns"] == v[-1]
assert s["p50_ns"] == v[(n + 1) // 2 - 1], "p50 is not the nearest-rank median"
assert all(x > 0 for x in v)
r = doc["responder"]
want = 0 if verb == "read" else n
assert r["count"] == want, ("responder stamps", r["count"], want)
EOF
}

# rows FILE: data rows of a samples file (CSV minus its header, or NDJSON lines).
rows() {
	case "$1" in
	*.csv) echo $(($(wc -l < "$1") - 1)) ;;
	*) wc -l < "$1" ;;
	esac
}

# samples_match JSON FILE: the file's latency column equals samples_ns.
samples_match() {
	python3 - "$1" "$2" <<'EOF'
import csv, json, sys
doc = json.load(open(sys.argv[1]))
f = sys.argv[2]
if f.endswith(".csv"):
    rows = [{k: (int(v) if v and k != "latency_ns" else float(v) if v else None)
             for k, v in r.items()} for r in csv.DictReader(open(f))]
else:
    rows = [json.loads(l) for l in open(f)]
lat = [r["latency_ns"] for r in rows]
assert len(lat) == len(doc["samples_ns"])
assert all(abs(a - b) < 1 for a, b in zip(lat, doc["samples_ns"])), "latency column differs"
# The responder's turnaround happens inside the prober's round trip (its own clock,
# but a duration): answered - seen < end - start, for every iteration.
for r in rows:
    assert r["end_ns"] - r["start_ns"] == r["rtt_ns"] > 0
    if doc["verb"] != "read":
        t = r["peer_answered_ns"] - r["peer_seen_ns"]
        assert 0 <= t < r["rtt_ns"], ("turnaround", t, "rtt", r["rtt_ns"])
    else:
        assert r.get("peer_seen_ns") is None
EOF
}

start_responder || { not_ok "responder starts on node1" "$(lab_exec 1 "cat $W/resp.log")"; done_testing; }
ok "responder starts on node1"

ext=csv
for verb in write send read; do
	for size in 4 4096; do
		for mode in poll events; do
			e=; [ $mode = events ] && e=-e
			name="$verb ${size} B $mode"
			f=$W/s-$verb-$size-$mode.$ext
			if out=$(lab_exec_t 300 0 "$B probe -p $PORT -u 20 -n $N --verb $verb -s $size $e --json --samples $f 192.0.2.2 > $W/j 2> $W/err; echo rc=\$?; cat $W/err"); then :; fi
			if ! echo "$out" | grep -q '^rc=0$'; then
				not_ok "$name: completes" "$out"
				continue
			fi
			ok "$name: completes"
			if msg=$(validate "$W/j" $N $verb 2>&1); then ok "$name: JSON matches the schema"
			else not_ok "$name: JSON matches the schema" "$msg"; fi
			r=$(rows "$f")
			if [ "$r" = $N ] && msg=$(samples_match "$W/j" "$f" 2>&1); then
				ok "$name: samples file ($ext) has exactly $N rows matching the JSON"
			else
				not_ok "$name: samples file ($ext) has exactly $N rows matching the JSON" "rows $r" "${msg:-}"
			fi
			[ $ext = csv ] && ext=ndjson || ext=csv
		done
	done
done

# Human output: header states clock, verb, size, MTU, mode, CPU, and one-way = RTT/2.
out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n $N --cpu 0 192.0.2.2" 2>&1)
if echo "$out" | grep -q 'clock: CLOCK_MONOTONIC' && echo "$out" | grep -q 'RDMA WRITE' &&
   echo "$out" | grep -q '# size 4 B, MTU 1024' && echo "$out" | grep -q 'mode busy poll' &&
   echo "$out" | grep -q 'CPU pinned 0' && echo "$out" | grep -q 'one-way = RTT/2' &&
   echo "$out" | grep -Eq "^ +4 +$N "; then
	ok "human header states clock, verb, size, MTU, mode, CPU and one-way = RTT/2"
else
	not_ok "human header states clock, verb, size, MTU, mode, CPU and one-way = RTT/2" "$out"
fi
# Piped output has no progress line (no carriage returns).
if echo "$out" | grep -q $'\r'; then not_ok "no progress output when piped" "$out"
else ok "no progress output when piped"; fi

# --rtt: the table shows round trips; JSON keeps one-way samples plus rtt_summary.
out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -n $N --rtt 192.0.2.2 2>$W/err")
if echo "$out" | grep -q '# latency: round-trip time (--rtt)'; then ok "--rtt reports round trips"
else not_ok "--rtt reports round trips" "$out"; fi

# Duration mode: iters null, some samples, all within the window.
out=$(lab_exec_t 120 0 "$B probe -p $PORT -u 20 -D 2 --json 192.0.2.2 2>$W/err")
if echo "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["iters"] is None and d["duration_ns"]==2000000000 and d["count"]>0
assert d["finish_ns"]-d["begin_ns"] < 2000000000 + 10**10'; then
	ok "-D 2 runs for a duration"
else not_ok "-D 2 runs for a duration" "$out"; fi

# Size sweep: one run per power of two from 2 B to 64 KiB (the full 8 MiB
# sweep takes minutes under emulation and loses packets at 4 MiB).
out=$(lab_exec_t 600 0 "$B probe -p $PORT -u 20 -a --sweep-max 65536 -n 3 --json 192.0.2.2 2>$W/err")
if echo "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
sz=[r["size"] for r in d["runs"]]
assert sz==[2**k for k in range(1,17)], sz
assert all(r["count"]==3 and r["complete"] for r in d["runs"])'; then
	ok "-a sweeps 2 B .. 64 KiB"
else not_ok "-a sweeps 2 B .. 64 KiB" "$(echo "$out" | tail -c 2000)"; fi
stop_responder

# rdma_cm: the same ping-pong with the QP connected by rdma_cm.
start_responder -R || not_ok "rdma_cm responder starts" "$(lab_exec 1 "cat $W/resp.log")"
out=$(lab_exec_t 120 0 "$B probe -p $PORT -R -u 20 -n $N --json 192.0.2.2 > $W/j; echo rc=\$?" 2>&1)
if echo "$out" | grep -q '^rc=0$' && validate "$W/j" $N write >/dev/null 2>&1 &&
   grep -q '"rdma_cm":true' "$W/j"; then
	ok "-R (rdma_cm) completes with a valid document"
else not_ok "-R (rdma_cm) completes with a valid document" "$out"; fi
stop_responder

check "node0 dmesg clean" dmesg_clean 0
check "node1 dmesg clean" dmesg_clean 1
done_testing
