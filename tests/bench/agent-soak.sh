#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The agent's memory over a long run: `latsplit agent` on both lab nodes,
# probing each other every slot with a breakdown every other round, for
# LS_BENCH_SOAK_MIN minutes (default 30, the issue's figure); node0's
# agent's VmRSS (/proc/PID/status, the agent process itself: its sessions
# run in children that exit) and that of its probe responder child (its
# oldest child: `probe --forever`, which serves every peer's probe for the
# whole run) are sampled every 10 s. Goals: flat memory for both, the
# largest RSS of the last third of the run at most the largest of the
# first third plus LS_BENCH_SOAK_SLACK_KIB (default 256 KiB: allocator
# noise, not growth); and the run measured: more than 90 % of the probe
# sessions that were not refused as busy succeeded, and more than 90 % of
# the breakdowns (flat memory of an agent whose sessions all fail proves
# little). Exit 1 when missed, 4 when no lab boots.
#
#   LS_BENCH_SOAK_MIN=30 LS_BENCH_SOAK_SLACK_KIB=256 LS_BENCH_SOAK_SLOT=2s
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
LAB=$LS_TOP/tools/lab/lab
BIN=$LS_BIN
MIN=${LS_BENCH_SOAK_MIN:-30}
SLACK=${LS_BENCH_SOAK_SLACK_KIB:-256}
SLOT=${LS_BENCH_SOAK_SLOT:-2s}
NAME=agentsoak$$

[ -x "$BIN" ] || { echo "# bench agent-soak: $BIN not built (make)"; exit 2; }
trap '"$LAB" down --name "$NAME" >/dev/null 2>&1' EXIT
if ! "$LAB" up --name "$NAME" --kver 6.1 --smp 1 >/dev/null 2>&1; then
	echo "# bench agent-soak: the lab did not boot"
	exit 4
fi
S=$("$LAB" shared --name "$NAME")
ko=$LS_TOP/build/kmod/$("$LAB" info --name "$NAME" kver)/kmod/latsplit.ko
printf '192.0.2.1\n192.0.2.2\n' > "$S/peers"
for n in 0 1; do
	[ -r "$ko" ] && "$LAB" exec --name "$NAME" "$n" -- "insmod $ko" >/dev/null 2>&1
	"$LAB" exec --name "$NAME" --background "$n" -- "$BIN agent --peers $S/peers --self 192.0.2.$((n + 1)) \
		--metrics 127.0.0.1:9851 --insecure --slot $SLOT --breakdown-every 2 -n 200 \
		> $S/agent$n.log 2>&1 & echo \$! > $S/agent$n.pid; wait" >/dev/null
done
sleep 5
pid=$(cat "$S/agent0.pid")
: > "$S/rss"
: > "$S/rss-resp"
end=$((SECONDS + MIN * 60))
while [ $SECONDS -lt $end ]; do
	"$LAB" exec --name "$NAME" 0 -- "awk '/^VmRSS/ { print \$2 }' /proc/$pid/status" >> "$S/rss" 2>/dev/null ||
		{ echo "# bench agent-soak: node0's agent ended: $(tail -n 3 "$S/agent0.log")"; exit 1; }
	# the oldest child (start time, field 22 of /proc/PID/stat): the probe responder; "PID KIB"
	"$LAB" exec --name "$NAME" 0 -- "c=\$(cat /proc/[0-9]*/stat 2>/dev/null | awk '\$4 == $pid { print \$22, \$1 }' |
		sort -n | head -n 1 | cut -d' ' -f2);
		[ -n \"\$c\" ] && echo \$c \$(awk '/^VmRSS/ { print \$2 }' /proc/\$c/status)" >> "$S/rss-resp" 2>/dev/null
	sleep 10
done
"$LAB" exec --name "$NAME" 0 -- "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:9851/metrics\").read().decode())'" > "$S/page" 2>/dev/null
python3 - "$S/rss" "$S/rss-resp" "$SLACK" "$MIN" "$S/page" <<'PY'
import re, sys
page = open(sys.argv[5]).read()
def total(name):
    return sum(float(m.group(1)) for m in re.finditer(r"^%s\{[^}]*\} (\S+)$" % name, page, re.M))
probes, failures, busy = (total("latsplit_agent_probe%s_total" % s) for s in ("s", "_failures", "_busy"))
bds, bd_failures = total("latsplit_agent_breakdowns_total"), total("latsplit_agent_breakdown_failures_total")
rss = [int(x) for x in open(sys.argv[1]).read().split()]
resp = [l.split() for l in open(sys.argv[2]) if len(l.split()) == 2]
slack, minutes = int(sys.argv[3]), sys.argv[4]
ok = True
def flat(what, v):
    global ok
    if not v:
        print("agent-soak: no %s RSS sample" % what)
        ok = False
        return
    k = max(1, len(v) // 3)
    first, last = max(v[:k]), max(v[-k:])
    print("agent-soak: %s: %d RSS samples: first third max %d KiB, last third max %d KiB, "
          "growth %+d KiB (goal <= %d)" % (what, len(v), first, last, last - first, slack))
    ok = ok and last <= first + slack
flat("the agent", rss)
pids = {p for p, _ in resp}
if len(pids) > 1:
    print("agent-soak: the probe responder was restarted (pids %s): its RSS judged over the last one" % " ".join(sorted(pids)))
flat("its probe responder", [int(r) for p, r in resp if p == resp[-1][0]] if resp else [])
tried = probes - busy
share = (probes - failures - busy) / tried if tried else 0
bd_share = (bds - bd_failures) / bds if bds else 0
print("agent-soak: %s min: %d probe sessions (%d busy), %.1f %% measured (goal > 90 %%); "
      "%d breakdowns, %.1f %% measured (goal > 90 %%)" % (minutes, probes, busy, 100 * share, bds, 100 * bd_share))
ok = ok and share > 0.9 and bd_share > 0.9
sys.exit(0 if ok else 1)
PY
