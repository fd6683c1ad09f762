#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input and degraded setups: a responder without a kernel backend (the
# split still runs, that side's processing marked unmeasured); an unreadable
# counter (a sysfs counter file shadowed by /dev/null: named, split goes on);
# invalid thresholds, a negative cable length, an unusable baseline (exit 2);
# a responder whose first prober was killed mid-run serves the next one
# from a clean slate (its own backend, records and counter snapshots);
# a responder that cannot drain its rings has its drops counted and the
# split marked incomplete in JSON and --prom;
# output files appear whole or not at all (no temp files left behind).
# lab-kernels: 6.1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/breakdown.inc"

CTR=/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts
MOUNTED=0
cleanup() {
	[ "$MOUNTED" = 1 ] && lab_exec 0 "umount $CTR" >/dev/null 2>&1
	bd_cleanup
}
trap cleanup EXIT
plan_none
BD_ITERS=30
bd_backend_setup

# responder without a kernel backend
if bd_run nobackend "-b none" "--samples $W/s.csv --prom $W/p.prom"; then ok "split runs with an unmeasured responder"
else not_ok "split runs with an unmeasured responder" "$(cat "$W/nobackend.err")"; fi
check "responder marked unmeasured, with the reason" \
	bd_get "$W/nobackend.json" '1/0 if d["hosts"][1]["measured"] or "none" not in d["hosts"][1]["unmeasured_why"] else 0'
check "the samples file has one row per sample" \
	bash -c "[ \$(( \$(wc -l < $W/s.csv) - 1 )) = $BD_ITERS ]"
check "the Prometheus file has the per-part quantiles" grep -qE '^latsplit_breakdown_seconds\{peer="192\.0\.2\.2[^"]*",part="queuing",quantile="0\.5"\} ' "$W/p.prom"
if command -v promtool >/dev/null; then
	check "promtool accepts the Prometheus file" bash -c "promtool check metrics < $W/p.prom"
fi

# an unreadable counter on the prober
if lab_exec 0 "mount --bind /dev/null $CTR"; then
	MOUNTED=1
	if bd_run ctr "" ""; then ok "split runs with an unreadable counter"
	else not_ok "split runs with an unreadable counter" "$(cat "$W/ctr.err")"; fi
	check "the unreadable counter is named with its reason" \
		bd_get "$W/ctr.json" '0 if [c for c in d["counters"] if c["name"] == "hw:rcvd_pkts" and not c["ok"] and c["error"]] else 1/0'
	lab_exec 0 "umount $CTR" && MOUNTED=0
else
	skip "unreadable counter" "cannot bind-mount over $CTR in the guest"
fi

# A prober killed mid-run, then an honest one, against one responder: the
# second session starts from nothing (backend reopened, counter snapshots
# of its own), so the responder's packet counts over the run match the
# prober's (a stale "before" from the killed session would add its
# thousands of packets), and it is measured with records of its own.
rm -f "$W/again.resp" "$W/again.json"
lab_bg 1 "$B breakdown --insecure -p $BD_PORT -u 20 -b $BD_BACKEND --listen-timeout 120 > $W/again.resp 2>&1 & echo \$! > $W/resp.pid; wait" >/dev/null
for _ in $(seq 100); do grep -q listening "$W/again.resp" 2>/dev/null && break; sleep 0.2; done
lab_exec_t 60 0 "timeout -s KILL 4 $B breakdown -p $BD_PORT -u 20 -b $BD_BACKEND -n 1000000 192.0.2.2 >/dev/null 2>&1; true"
for _ in $(seq 150); do grep -q "failed" "$W/again.resp" 2>/dev/null && break; sleep 0.2; done
lab_exec_t 900 0 "$B breakdown -p $BD_PORT -u 20 -b $BD_BACKEND -n $BD_ITERS --json 192.0.2.2 > $W/again.json 2> $W/again.err"
rc=$?
bd_stop_responder
diag "$(grep -E 'session|served' "$W/again.resp")"
if [ "$rc" = 0 ] && grep -q "failed" "$W/again.resp"; then
	ok "a session after a killed prober's runs and splits"
else
	not_ok "a session after a killed prober's runs and splits" "exit $rc" "$(cat "$W/again.err" "$W/again.resp")"
fi
check "that session's responder is measured, with records of its own" \
	bd_get "$W/again.json" '0 if d["hosts"][1]["measured"] and d["hosts"][1]["records_used"] > 0 else 1/0'
diag "$(bd_get "$W/again.json" '"counters: " + ", ".join("%s %s %+d" % (x["host"], x["name"], x["delta"]) for x in d["counters"] if x["ok"] and x["name"] in ("hw:sent_pkts", "hw:rcvd_pkts"))')"
check "its responder counted the packets of this session only (sent = prober's received, +-20)" \
	bd_get "$W/again.json" '0 if (lambda c: abs(c[("responder", "hw:sent_pkts")] - c[("prober", "hw:rcvd_pkts")]) <= 20)({(x["host"], x["name"]): x["delta"] for x in d["counters"] if x["ok"]}) else 1/0'

# Losses are never silent: the responder, stopped for 0.3 s (SIGSTOP) while
# a ping flood keeps its NIC busy, cannot drain its 4 KiB rings: its drops
# are counted and the split is marked incomplete (JSON verdict.complete
# false with the losses named, --prom latsplit_breakdown_complete 0 and
# the responder's dropped_records equal to its JSON drops).
rm -f "$W/lossy.resp" "$W/lossy.json" "$W/lossy.prom"
lab_bg 1 "$B breakdown --insecure -p $BD_PORT -u 20 -b $BD_BACKEND --ring-kib 4 --listen-timeout 120 > $W/lossy.resp 2>&1 & echo \$! > $W/resp.pid; wait" >/dev/null
for _ in $(seq 100); do grep -q listening "$W/lossy.resp" 2>/dev/null && break; sleep 0.2; done
lab_bg 0 "$B breakdown -p $BD_PORT -u 20 -b $BD_BACKEND -D 6s --json --prom $W/lossy.prom 192.0.2.2 > $W/lossy.json 2> $W/lossy.err; echo \$? > $W/lossy.rc" >/dev/null
sleep 2
lab_bg 0 "ping -f -q -w 1 192.0.2.2 >/dev/null 2>&1" >/dev/null
lab_exec 1 "sleep 0.2; kill -STOP $(cat "$W/resp.pid"); sleep 0.3; kill -CONT $(cat "$W/resp.pid")"
for _ in $(seq 300); do [ -s "$W/lossy.rc" ] && break; sleep 0.2; done
bd_stop_responder
if [ "$(cat "$W/lossy.rc" 2>/dev/null)" = 0 ]; then ok "a run whose responder was stopped under a ping flood completes"
else not_ok "a run whose responder was stopped under a ping flood completes" "$(cat "$W/lossy.err" "$W/lossy.resp")"; fi
drops=$(bd_get "$W/lossy.json" 'd["hosts"][1]["drops"]' 2>/dev/null)
diag "responder drops: $drops; losses: $(bd_get "$W/lossy.json" 'd["verdict"]["losses"]' 2>/dev/null)"
check "the responder counted its drops" bd_get "$W/lossy.json" '0 if d["hosts"][1]["drops"] > 0 else 1/0'
check "the split is marked incomplete, the responder's drops named" bd_get "$W/lossy.json" \
	'0 if not d["verdict"]["complete"] and "responder: %d kernel records dropped" % d["hosts"][1]["drops"] in d["verdict"]["losses"] else 1/0'
check "--prom: complete 0, the responder's dropped_records = its drops ($drops)" bash -c \
	"grep -qE '^latsplit_breakdown_complete\{peer=\"[^\"]*\"\} 0$' $W/lossy.prom &&
	 grep -qE '^latsplit_breakdown_dropped_records\{peer=\"[^\"]*\",host=\"responder\"\} $drops$' $W/lossy.prom"
if command -v promtool >/dev/null; then
	check "promtool accepts it" bash -c "promtool check metrics < $W/lossy.prom"
fi
check "a healthy run of this test (nobackend) is complete" bd_get "$W/nobackend.json" '0 if d["verdict"]["complete"] and d["verdict"]["losses"] is None else 1/0'

# usage errors: exit 2, nothing written
for args in "--normal-us 3-1.5" "--abnormal-us 0" "--hurts-us 2" "--share 1.5" \
	    "--cable-m -1" "--hops 0" "--switch xx" "--link-gbps 0" "--baseline $W/nobackend.err"; do
	lab_exec 0 "$B breakdown $args --samples $W/bad.csv 192.0.2.2 >/dev/null 2>$W/usage.err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -e "$W/bad.csv" ] && grep -q . "$W/usage.err"; then ok "'$args': exit 2 with a message, no file"
	else not_ok "'$args': exit 2 with a message, no file" "exit $rc" "$(cat "$W/usage.err")"; fi
done
# a baseline of another size is refused before measuring
lab_exec 0 "$B breakdown -s 64 --baseline $W/nobackend.json 192.0.2.2 >/dev/null 2>$W/usage.err"
rc=$?
if [ "$rc" = 2 ] && grep -q "compare like with like" "$W/usage.err"; then ok "baseline of another size refused"
else not_ok "baseline of another size refused" "exit $rc" "$(cat "$W/usage.err")"; fi
# no responder: the run fails before measuring, no output file appears
lab_exec_t 60 0 "$B breakdown -p 19699 --connect-timeout 2s --samples $W/none.csv --prom $W/none.prom 192.0.2.2 >/dev/null 2>$W/usage.err"
rc=$?
left=$(ls -a "$W" | grep -cE '^\.?(none\.(csv|prom)|.*\.tmp)' || true)
if [ "$rc" = 2 ] && [ "$left" = 0 ]; then ok "unreachable responder: exit 2, no file or temp file left"
else not_ok "unreachable responder: exit 2, no file or temp file left" "exit $rc, $left files" "$(ls -a "$W")"; fi
done_testing
