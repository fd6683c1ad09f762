#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input and degraded setups: a responder without a kernel backend (the
# split still runs, that side's processing marked unmeasured); an unreadable
# counter (a sysfs counter file shadowed by /dev/null: named, split goes on);
# invalid thresholds, a negative cable length, an unusable baseline (exit 2);
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
