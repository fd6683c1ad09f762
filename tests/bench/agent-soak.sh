#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The agent's memory over a long run: `latsplit agent` on both lab nodes,
# probing each other every slot with a breakdown every other round, for
# LS_BENCH_SOAK_MIN minutes (default 30, the issue's figure); node0's
# agent's VmRSS (/proc/PID/status, the agent process itself: its sessions
# run in children that exit) is sampled every 10 s. Goal: flat memory, the
# largest RSS of the last third of the run at most the largest of the
# first third plus LS_BENCH_SOAK_SLACK_KIB (default 256 KiB: allocator
# noise, not growth). Exit 1 when missed, 4 when no lab boots.
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
end=$((SECONDS + MIN * 60))
while [ $SECONDS -lt $end ]; do
	"$LAB" exec --name "$NAME" 0 -- "awk '/^VmRSS/ { print \$2 }' /proc/$pid/status" >> "$S/rss" 2>/dev/null ||
		{ echo "# bench agent-soak: node0's agent ended: $(tail -n 3 "$S/agent0.log")"; exit 1; }
	sleep 10
done
sessions=$("$LAB" exec --name "$NAME" 0 -- "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:9851/metrics\").read().decode())'" 2>/dev/null |
	awk '/^latsplit_agent_(probes|breakdowns)_total/ { n += $2 } END { print n + 0 }')
python3 - "$S/rss" "$SLACK" "$MIN" "$sessions" <<'PY'
import sys
rss = [int(x) for x in open(sys.argv[1]).read().split()]
slack, minutes, sessions = int(sys.argv[2]), sys.argv[3], sys.argv[4]
k = max(1, len(rss) // 3)
first, last = max(rss[:k]), max(rss[-k:])
print("agent-soak: %s min, %s sessions, %d RSS samples: first third max %d KiB, last third max %d KiB, "
      "growth %+d KiB (goal <= %d)" % (minutes, sessions, len(rss), first, last, last - first, slack))
sys.exit(0 if last <= first + slack else 1)
PY
