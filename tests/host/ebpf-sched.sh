#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# eBPF backend, natively on the host kernel: the named-task PREEMPT stage
# against the kernel's own context-switch counters. A worker pinned to one
# CPU with a CPU hog alternates 1 ms sleeps (voluntary switches) with 4 ms
# spins (the hog preempts it: involuntary switches) and reads
# voluntary_ctxt_switches / nonvoluntary_ctxt_switches from
# /proc/thread-self/status before and after, noting CLOCK_MONOTONIC just
# before the first read and just after the second. Every switch-out between
# the two reads is followed by a switch-in before the second read (the worker is
# running when it reads), so its records that begin between the two times:
#   PREEMPT flagged LS_REC_F_PREEMPTED (switched out runnable) = nonvoluntary delta
#   PREEMPT not flagged (woken -> switched in)                 = voluntary delta
# up to the switches in the microseconds between a time and its read,
# and a voluntary switch or two of 300 that leaves no wakeup record inside
# the window (298 of 300 seen on an idle host; the whole recording had
# hidden it with two wakeups from before the first read): within 4 either
# way. After the second read the worker sleeps on a FIFO until the
# recording is over.
. "$(dirname "$0")/../lib.sh"

ebpf_host_require "worker and checks"

WORK=$(mktemp -d); [ -n "${SCHED_KEEP:-}" ] && echo "# work dir $WORK"
HOG=
WORKER=
cleanup() {
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null
	[ -n "$WORKER" ] && kill "$WORKER" 2>/dev/null
	wait 2>/dev/null
	[ -n "${SCHED_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
CPU=$(($(nproc) - 1))

cat > "$WORK/worker.py" <<'EOF'
import sys, time
fifo, out, n, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def switches():
    d = {}
    for l in open("/proc/thread-self/status"):
        k, _, v = l.partition(":")
        d[k] = v.strip()
    return int(d["voluntary_ctxt_switches"]), int(d["nonvoluntary_ctxt_switches"])
with open(fifo) as f:
    f.read()
t1 = time.monotonic_ns()
a = switches()
for _ in range(n):
    time.sleep(0.001)
    t = time.monotonic() + 0.004
    while time.monotonic() < t:
        pass
b = switches()
t2 = time.monotonic_ns()
with open(out + ".tmp", "w") as f:
    f.write("%d %d %d %d\n" % (b[0] - a[0], b[1] - a[1], t1, t2))
import os
os.rename(out + ".tmp", out)
# Stay asleep until the recording has ended: the interpreter's exit beside
# the hog took tens of switches, recorded after the second read.
with open(end) as f:
    f.read()
EOF

cat > "$WORK/check.py" <<'EOF'
import json, sys
w, pid = sys.argv[1], int(sys.argv[2])
vol, invol, t1, t2 = [int(x) for x in open(w + "/delta").read().split()]
d = json.load(open(w + "/rec.json"))
recs = [l.split() for l in open(w + "/recs.txt") if not l.startswith("#")]
# Only what began between the two reads (CLOCK_MONOTONIC, as the records):
# on a loaded host the worker is preempted many times between the start
# of the recording and its first read.
mine = [r for r in recs if r[4] == "preempt" and int(r[5]) == pid and t1 <= int(r[0]) <= t2]
pre = sum(1 for r in mine if int(r[7], 16) & 4)
woke = len(mine) - pre
bad = [r for r in recs if int(r[7], 16) & 4 and r[4] != "preempt"]
print("worker pid %d: voluntary delta %d, PREEMPT at a wakeup %d; "
      "nonvoluntary delta %d, PREEMPT at a preemption %d; drops %d"
      % (pid, vol, woke, invol, pre, d["drops"]))
ok = d["drops"] == 0 and not bad
ok = ok and abs(woke - vol) <= 4 and abs(pre - invol) <= 4
if vol < 100 or invol < 20:
    print("the load moved the counters too little (voluntary %d < 100 or "
          "nonvoluntary %d < 20): cannot judge" % (vol, invol))
    ok = False
if bad:
    print("PREEMPTED flag on other stages: %s" % bad[:3])
sys.exit(0 if ok else 1)
EOF

plan 4
taskset -c "$CPU" sh -c 'while :; do :; done' &
HOG=$!
mkfifo "$WORK/go" "$WORK/end"
taskset -c "$CPU" python3 "$WORK/worker.py" "$WORK/go" "$WORK/delta" 300 "$WORK/end" &
WORKER=$!
sleep 0.5
if "$LS_BIN" record --backend ebpf --pid "$WORKER" --json --records "$WORK/recs.txt" \
	-- sh -c "echo go > '$WORK/go'; while [ ! -e '$WORK/delta' ]; do sleep 0.05; done" \
	> "$WORK/rec.json" 2> "$WORK/err"; then
	ok "record --pid ran while the worker slept and spun beside a hog on CPU $CPU"
else
	not_ok "record --pid ran while the worker slept and spun beside a hog on CPU $CPU" \
		"$(cat "$WORK/err")"
fi
WPID=$WORKER
echo end > "$WORK/end"
wait "$WORKER" 2>/dev/null
WORKER=
if out=$(python3 "$WORK/check.py" "$WORK" "$WPID" 2>&1); then
	ok "PREEMPT records split by cause equal the kernel's context-switch deltas"
	diag "$out"
else
	not_ok "PREEMPT records split by cause equal the kernel's context-switch deltas" "$out"
fi
kill "$HOG" 2>/dev/null
wait "$HOG" 2>/dev/null
HOG=

# The named task must exist; a bad pid list is a usage error.
check_fails "record --pid of a pid that is not running is refused" \
	"$LS_BIN" record --backend ebpf --pid 999999999 -D 1
check_fails "record --pid with a bad list is refused" \
	"$LS_BIN" record --backend ebpf --pid 12,x -D 1
done_testing
