#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The eBPF backend's own cost (the `observer` map, `latsplit record`'s
# "observer" section) against oracles nobody here wrote, natively on the
# host kernel, with the tp_btf programs and with the raw_tp fallback.
#
# The accounting (Documentation/ebpf.rst, "The observer's own cost"):
# every run counts a hit; one run in W = 2^LS_EBPF_OBS_SAMPLE_SHIFT
# (ebpf/latsplit_bpf.h), drawn at random, and the first run of each
# (CPU, handler) cell are timed, and ns grows by a timed run's exclusive
# time times its weight (W, or 1 for a first run): an estimate. The map
# keeps its basis, timed (runs sampled) and timed_ns (their time, not
# scaled); the test reads the map itself (M) besides record's JSON (F).
#
# 1. The kernel's BPF accounting. With kernel.bpf_stats_enabled=1 (set
#    before the programs load, restored on exit) every run of a program adds
#    one to its run_cnt and the sched_clock() time around the call to its
#    run_time_ns, the kernel's own view of what the observer costs. The
#    recorded command, while the programs are attached, (a) starts a holder
#    that takes a reference on each of record's programs (their ids from
#    /proc/<record>/fdinfo, BPF_PROG_GET_FD_BY_ID), so they outlive record's
#    detach; (b) reads `bpftool prog show` (A); runs a load; sleeps; reads it
#    again (B). Record reads its observer (F) after the command exits, then
#    detaches; after that the held programs no longer run and a last read
#    (Z) gives every run there was, and a dump of the observer map (M, the
#    map the held programs use) every hit. For each handler, over the one
#    program of it that is attached:
#      A.run_cnt <= B.run_cnt <= F.hits <= M.hits == Z.run_cnt
#    exactly: a program adds its hit before it returns, the kernel counts
#    the run after it returns, F is read after B and before the detach, and
#    after the detach both M and Z hold every run, one hit per run (the
#    statistics stay on throughout; the test says so when someone switched
#    them off). Counting too little (an early return of a body not counted)
#    breaks B <= F and M == Z; counting twice breaks F <= M == Z. A handler
#    whose program is not loaded has no hits in F or M.
#      M.timed_ns <= Z.run_time_ns * 1.001 + 1 us
#    exactly: the timed runs are some of the runs, each one's span (its
#    first to its last clock read) lies inside the kernel's interval around
#    its call, and its time excludes the runs nested in it, which the
#    kernel's includes; 0.1 %: the two clocks (CLOCK_MONOTONIC, NTP-slewed
#    by at most 500 ppm, and sched_clock). A span too wide or a unit off by
#    1,000 fails (a nested run's time left in the run around it does not:
#    the kernel's interval holds both, as it did when every run was timed).
#      per CPU: timed <= hits; timed >= 1 and timed_ns > 0 where hits > 0;
#      timed_ns <= ns <= W * timed_ns
#    exactly: a cell's first run is always timed (weight 1), the others
#    count W times or not at all. A scale missing or applied twice, or a
#    cell's first run not timed, fails.
#      F.ns <= M.ns; F.ns > 0 where F.hits > 0
#    exactly: F is an earlier reading of what only grows (record reports
#    the map's estimate as it is; scaled again on the way, it fails), and a
#    run stores its time before its hit, so a reading that has a cell's
#    first hit has its time.
#      for the handlers the load drives (>= 10,000 runs), the mean per hit
#      F.ns / F.hits >= 15 % of the kernel's per run
#    what the kernel times beyond the span is a fixed stretch per run (the
#    call, its two sched_clock() reads, our draw, hit and lookups; in a
#    timed run halves of our two clock reads and the bookkeeping after the
#    second), plus interrupts and hypervisor steal landing in it: ours is
#    25-80 % of the kernel's here. The estimate is an unbiased sum over
#    >= 1,250 timed runs (relative error ~3-8 %, and outliers only push it
#    up), so only time lost (ns ~ 0, the scale missing: 1/W of the truth, a
#    span around a fraction of the program) falls below 15 %. No upper
#    bound on the estimate: one timed run stretched by a long interrupt
#    counts W times in ours and once in the kernel's; the exact bounds on
#    timed_ns and on the scale stand in for it.
#      for the handlers with >= 2,000 runs: |timed - E| <= 6 sigma + 1, E =
#      cells + (hits - cells) / W, sigma^2 = (hits - cells) (1/W) (1 - 1/W)
#    the draws are independent 1-in-W trials besides each cell's first run
#    (a binomial count; 6 sigma: a false failure about once in 10^8 runs
#    of this test): timing every run, none, or at another rate fails.
# 2. /proc/softirqs. Its counter and trace_softirq_entry are adjacent in
#    handle_softirqs(), and the command reads it before and after 20,000
#    loopback datagrams (each raises NET_RX), inside the attached window, so
#      F.hits(softirq_entry), F.hits(softirq_exit) >= the delta of every
#      vector summed over CPUs (>= 20,000)
# 3. Reset (SIGUSR1 zeroes the observer with the histograms; record then
#    reports the map minus its reading at the reset): the command reads A,
#    sends SIGUSR1, sleeps 0.5 s (record acts on it within 10 ms), reads C,
#    runs a load, reads B. Every run up to A came before the reset and
#    every run between C and B after it, so per handler
#      B.run_cnt - C.run_cnt <= F.hits <= Z.run_cnt - A.run_cnt
#    and, as the reset makes each cell's next run a timed one,
#      F.ns > 0 where F.hits > nr_cpus
#    (at most one run per CPU and handler can straddle the reset, its draw
#    before obs_gen moved and its hit after the reading record subtracts;
#    the next one is the cell's first after it, timed).
# 4. The text output: the observer section's handler rows (only those with
#    hits) add up to its total row, and its per-CPU rows to the same hits.
# 5. A backend that cannot load (not root; -b kmod without latsplit.ko):
#    exit 2, the reason on stderr, nothing on stdout (no half document).
. "$(dirname "$0")/../lib.sh"

ebpf_host_require "the holder, the load and the checks"
command -v bpftool >/dev/null || skip_all "bpftool missing (the kernel's run_cnt/run_time_ns are read with it)"
STATS=/proc/sys/kernel/bpf_stats_enabled
[ -w "$STATS" ] || skip_all "$STATS not writable (kernel without BPF run-time statistics)"
case $(uname -m) in
x86_64) NR_BPF=321 ;;
aarch64) NR_BPF=280 ;;
*) skip_all "bpf(2) syscall number for $(uname -m) unknown to the holder" ;;
esac

WORK=$(mktemp -d)
OLD_STATS=$(cat "$STATS")
# cleanup: stop every holder, restore the statistics switch, remove WORK.
cleanup() {
	local p
	for p in "$WORK"/holder.*.pid; do
		[ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	wait 2>/dev/null
	echo "$OLD_STATS" > "$STATS"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo 1 > "$STATS"

# The holder: takes a reference on every program record holds, writes
# their ids, then waits for SIGTERM.
cat > "$WORK/hold.py" <<EOF
import ctypes, json, os, signal, sys
pid, out = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
ids = set()
for fd in os.listdir("/proc/%d/fdinfo" % pid):
    try:
        text = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
    except OSError:
        continue
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if key == "prog_id":
            ids.add(int(val))
if not ids:
    sys.exit("no BPF program among pid %d's files" % pid)
held = []
for i in sorted(ids):
    attr = (ctypes.c_uint32 * 3)(i, 0, 0)     # prog_id, next_id, open_flags
    fd = libc.syscall($NR_BPF, 13, ctypes.byref(attr), ctypes.sizeof(attr))  # BPF_PROG_GET_FD_BY_ID
    if fd < 0:
        sys.exit("BPF_PROG_GET_FD_BY_ID %d: %s" % (i, os.strerror(ctypes.get_errno())))
    held.append(fd)
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
with open(out + ".tmp", "w") as f:
    json.dump(sorted(ids), f)
os.rename(out + ".tmp", out)
while True:
    signal.pause()
EOF

cat > "$WORK/udp.py" <<'EOF'
import socket, sys
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = r.getsockname()
for i in range(n):
    s.sendto(b"x", a)
    try:
        while True:
            r.recv(64)
    except BlockingIOError:
        pass
EOF

# The recorded command: in.sh WORK TAG RESET. $PPID is latsplit record.
cat > "$WORK/in.sh" <<'EOF'
W=$1 T=$2 RESET=$3
python3 "$W/hold.py" "$PPID" "$W/ids.$T" > "$W/hold.$T.err" 2>&1 < /dev/null &
echo $! > "$W/holder.$T.pid"
for _ in $(seq 100); do [ -e "$W/ids.$T" ] && break; sleep 0.1; done
[ -e "$W/ids.$T" ] || { echo "holder did not start: $(cat "$W/hold.$T.err")" > "$W/in.$T.err"; exit 3; }
bpftool prog show -j > "$W/A.$T.json" || exit 3
if [ "$RESET" = 1 ]; then
	kill -USR1 "$PPID"
	sleep 0.5
	bpftool prog show -j > "$W/C.$T.json" || exit 3
	python3 "$W/udp.py" 5000
else
	cat /proc/softirqs > "$W/sirq.a.$T"
	python3 "$W/udp.py" 20000
	cat /proc/softirqs > "$W/sirq.b.$T"
fi
sleep 0.2
bpftool prog show -j > "$W/B.$T.json" || exit 3
EOF

# Shared by the checks: the kernel's readings per handler, and F.
cat > "$WORK/obs.py" <<'EOF'
import json
HANDLERS = ["irq_handler_entry", "irq_handler_exit", "softirq_raise", "softirq_entry",
            "softirq_exit", "napi_poll", "sched_switch", "sched_waking", "sched_wakeup",
            "netif_receive_skb", "comp_handler_entry", "comp_handler_return"]
# program name (without btf_/raw_) -> handler, as ebpf/latsplit.bpf.c names them
PROG = {"irq_entry": "irq_handler_entry", "irq_exit": "irq_handler_exit",
        "softirq_raise": "softirq_raise", "softirq_entry": "softirq_entry",
        "softirq_exit": "softirq_exit", "napi_poll": "napi_poll",
        "sched_switch": "sched_switch", "sched_waking": "sched_waking",
        "sched_wakeup": "sched_wakeup", "rx_skb": "netif_receive_skb"}
FULL = {"btf_" + k: v for k, v in PROG.items()}
FULL.update({"raw_" + k: v for k, v in PROG.items()})
FULL.update({"kp_comp_handler": "comp_handler_entry", "kr_comp_handler": "comp_handler_return"})

def handler_of(name):
    # bpftool prints the BTF name, or the kernel's 15-character one
    for full, h in FULL.items():
        if name == full or (len(name) == 15 and full.startswith(name)):
            return h
    return None

def kernel(path, ids):
    """{handler: [run_cnt, run_time_ns, programs]} over the programs in ids."""
    out = {}
    for p in json.load(open(path)):
        if p["id"] not in ids:
            continue
        h = handler_of(p["name"])
        if h is None:
            raise SystemExit("%s: program %d '%s' is no handler of ours" % (path, p["id"], p["name"]))
        c = out.setdefault(h, [0, 0, 0])
        c[0] += p.get("run_cnt", 0)
        c[1] += p.get("run_time_ns", 0)
        c[2] += 1
    return out

def obsmap(path):
    """{handler: [per-CPU struct ls_ebpf_obs as a dict]} from the map dump."""
    out = {}
    for e in json.load(open(path)):
        f = e["formatted"]
        out[HANDLERS[f["key"]]] = [v["value"] for v in f["values"]]
    return out

def sample_weight(top):
    """W = 1 << LS_EBPF_OBS_SAMPLE_SHIFT, from ebpf/latsplit_bpf.h."""
    import re
    m = re.search(r"^#define\s+LS_EBPF_OBS_SAMPLE_SHIFT\s+(\d+)\s*$",
                  open(top + "/ebpf/latsplit_bpf.h").read(), re.M)
    if not m:
        raise SystemExit("no LS_EBPF_OBS_SAMPLE_SHIFT in ebpf/latsplit_bpf.h")
    return 1 << int(m.group(1))

def observer(path):
    """record's observer object; the handler list checked against the ABI's."""
    d = json.load(open(path))
    o = d["observer"]
    if o is None:
        raise SystemExit("observer is null")
    names = [h["name"] for h in o["handlers"]]
    if names != HANDLERS:
        raise SystemExit("handlers %s, want %s" % (names, HANDLERS))
    return d, o, {h["name"]: h for h in o["handlers"]}
EOF

cat > "$WORK/check.py" <<'EOF'
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
from obs import *
w, t = sys.argv[1], sys.argv[2]
ids = set(json.load(open("%s/ids.%s" % (w, t))))
A, B, Z = (kernel("%s/%s.%s.json" % (w, r, t), ids) for r in "ABZ")
d, o, F = observer("%s/rec.%s.json" % (w, t))
M = obsmap("%s/M.%s.json" % (w, t))
W = sample_weight(os.environ["LS_TOP"])
what = sys.argv[3]
def msum(h, k):
    return sum(c[k] for c in M[h])
bad, lines = [], []
if what == "consistent":
    for k in ("hits", "ns"):
        hs, cs = sum(h[k] for h in o["handlers"]), sum(c[k] for c in o["cpus"])
        if not (hs == cs == o[k]):
            bad.append("%s: handlers sum %d, cpus sum %d, total %d" % (k, hs, cs, o[k]))
    cpus = [c["cpu"] for c in o["cpus"]]
    if cpus != sorted(set(cpus)) or any(c["hits"] == 0 or c["cpu"] >= d["nr_cpus"] for c in o["cpus"]):
        bad.append("cpus list %s (want ascending, with hits, below nr_cpus %d)" % (o["cpus"], d["nr_cpus"]))
    lines.append("loaded: %s; with hits: %s" % (" ".join(sorted(Z, key=HANDLERS.index)),
                 " ".join(h for h in HANDLERS if F[h]["hits"])))
    for h in HANDLERS:
        if h not in Z and F[h]["hits"]:
            bad.append("%s: %d hits but its program is not loaded" % (h, F[h]["hits"]))
    if not {"softirq_entry", "softirq_exit", "sched_switch", "netif_receive_skb"} <= set(Z):
        bad.append("attached programs %s lack softirq_entry/exit, sched_switch or netif_receive_skb" % sorted(Z))
elif what == "hits":
    for h in sorted(Z, key=HANDLERS.index):
        a, b, z, f = A.get(h, [0])[0], B.get(h, [0])[0], Z[h][0], F[h]["hits"]
        m = msum(h, "hits")
        ok = a <= b <= f <= m == z and Z[h][2] == 1
        lines.append("%-20s A %9d <= B %9d <= F %9d <= M %9d == Z %9d%s" %
                     (h, a, b, f, m, z, "" if ok else "  <-- wrong"))
        if not ok:
            bad.append(h)
    for h in HANDLERS:
        if h not in Z and msum(h, "hits"):
            bad.append("%s: %d hits in the map but its program is not loaded" % (h, msum(h, "hits")))
    if sum(Z[h][0] for h in Z) < 20000:
        bad.append("only %d runs in all: the load did not run" % sum(Z[h][0] for h in Z))
elif what == "ns":
    for h in sorted(Z, key=HANDLERS.index):
        f, fh, zn, zc = F[h]["ns"], F[h]["hits"], Z[h][1], Z[h][0]
        tn, tc, mn = msum(h, "timed_ns"), msum(h, "timed"), msum(h, "ns")
        why = []
        if tn > zn * 1.001 + 1000:
            why.append("timed_ns above the kernel's")
        for cpu, c in enumerate(M[h]):
            if not (c["timed"] <= c["hits"] and c["timed_ns"] <= c["ns"] <= W * c["timed_ns"] and
                    (c["hits"] == 0 or (c["timed"] >= 1 and c["timed_ns"] > 0))):
                why.append("CPU %d: %s" % (cpu, c))
        if not (f <= mn and (fh == 0 or f > 0)):
            why.append("F.ns %d vs M.ns %d, F.hits %d" % (f, mn, fh))
        mean_f = f / fh if fh else 0
        mean_z = zn / zc if zc else 0
        if zc >= 10000 and mean_f < 0.15 * mean_z:
            why.append("mean below 15 % of the kernel's")
        lines.append("%-20s timed %7d runs %11d ns <= kernel %11d; estimate %11d (F %11d), mean %7.1f ns per hit, kernel %7.1f per run (%.0f %%)%s" %
                     (h, tc, tn, zn, mn, f, mean_f, mean_z, 100 * mean_f / mean_z if mean_z else 0,
                      "" if not why else "  <-- wrong: " + "; ".join(why)))
        if why:
            bad.append(h)
elif what == "sampling":
    lines.append("W = %d" % W)
    for h in sorted(Z, key=HANDLERS.index):
        n, tc = msum(h, "hits"), msum(h, "timed")
        cells = sum(1 for c in M[h] if c["hits"])
        p = 1.0 / W
        e = cells + (n - cells) * p
        sigma = math.sqrt((n - cells) * p * (1 - p))
        judged = n >= 2000
        ok = not judged or abs(tc - e) <= 6 * sigma + 1
        lines.append("%-20s timed %7d of %9d runs, expected %9.1f +- %6.1f (6 sigma + 1)%s" %
                     (h, tc, n, e, 6 * sigma + 1, "" if judged else " (not judged: < 2,000 runs)")
                     + ("" if ok else "  <-- wrong"))
        if not ok:
            bad.append(h)
    if not any(msum(h, "hits") >= 2000 for h in Z):
        bad.append("no handler ran 2,000 times: cannot judge")
elif what == "softirqs":
    def sirq(path):
        rows = open(path).read().splitlines()[1:]
        return sum(int(x) for r in rows for x in r.split()[1:])
    delta = sirq("%s/sirq.b.%s" % (w, t)) - sirq("%s/sirq.a.%s" % (w, t))
    for h in ("softirq_entry", "softirq_exit"):
        ok = F[h]["hits"] >= delta
        lines.append("%s: %d hits >= /proc/softirqs delta %d (all vectors, all CPUs)%s" %
                     (h, F[h]["hits"], delta, "" if ok else "  <-- wrong"))
        if not ok:
            bad.append(h)
    if delta < 20000:
        bad.append("the load raised only %d softirqs (< 20000): cannot judge" % delta)
elif what == "reset":
    C = kernel("%s/C.%s.json" % (w, t), ids)
    for h in sorted(Z, key=HANDLERS.index):
        lo = B.get(h, [0])[0] - C.get(h, [0])[0]
        hi = Z[h][0] - A.get(h, [0])[0]
        f = F[h]["hits"]
        ok = lo <= f <= hi and (f <= d["nr_cpus"] or F[h]["ns"] > 0)
        lines.append("%-20s B-C %9d <= F %9d <= Z-A %9d; ns %11d%s" %
                     (h, lo, f, hi, F[h]["ns"], "" if ok else "  <-- wrong"))
        if not ok:
            bad.append(h)
    total_before = sum(A[h][0] for h in A)
    if total_before == 0 or sum(F[h]["hits"] for h in F) >= sum(Z[h][0] for h in Z):
        bad.append("the reset zeroed nothing (runs before it %d)" % total_before)
print("\n".join(lines + ["wrong: " + ", ".join(bad)] if bad else lines))
sys.exit(1 if bad else 0)
EOF

# The observer map of the held programs (while they are held): mapdump.py
# IDS OUT.
cat > "$WORK/mapdump.py" <<'EOF'
import json, subprocess, sys
def bpftool(*a):
    return json.loads(subprocess.run(["bpftool", "-j"] + list(a), check=True,
                                     capture_output=True, text=True).stdout)
maps = set()
for i in json.load(open(sys.argv[1])):
    maps.update(bpftool("prog", "show", "id", str(i)).get("map_ids", []))
obs = [m for m in maps if bpftool("map", "show", "id", str(m)).get("name") == "observer"]
if len(obs) != 1:
    sys.exit("the held programs use %d maps named observer: %s" % (len(obs), obs))
json.dump(bpftool("map", "dump", "id", str(obs[0])), open(sys.argv[2], "w"))
EOF

# record_held TAG RESET [RECORD ARGS...]: record --json around in.sh, then
# with the programs detached but held, the last kernel reading Z and the
# observer map M.
record_held() {
	local t=$1 reset=$2 rc
	shift 2
	"$LS_BIN" record --backend ebpf --json "$@" -- bash "$WORK/in.sh" "$WORK" "$t" "$reset" \
		> "$WORK/rec.$t.json" 2> "$WORK/rec.$t.err"
	rc=$?
	[ "$rc" = 0 ] && [ -e "$WORK/ids.$t" ] && bpftool prog show -j > "$WORK/Z.$t.json" &&
		python3 "$WORK/mapdump.py" "$WORK/ids.$t" "$WORK/M.$t.json" 2> "$WORK/M.$t.err" || rc=1
	[ -e "$WORK/holder.$t.pid" ] && kill "$(cat "$WORK/holder.$t.pid")" 2>/dev/null
	return $rc
}

# judge TAG WHAT DESC: one check.py assertion.
judge() {
	local out
	if out=$(LS_TOP=$LS_TOP python3 "$WORK/check.py" "$WORK" "$1" "$2" 2>&1); then
		ok "$3"; diag "$out"
	else
		not_ok "$3" "$out"
	fi
}

plan 16
for mode in tp_btf raw_tp; do
	if LS_EBPF_ATTACH=$mode record_held "$mode" 0 --pid $$ --records "$WORK/recs.$mode"; then
		ok "$mode: record ran the load with the programs held"
	else
		not_ok "$mode: record ran the load with the programs held" \
			"$(cat "$WORK/rec.$mode.err" "$WORK/in.$mode.err" "$WORK/hold.$mode.err" 2>/dev/null)"
		for d in "observer JSON" "hits" "ns" "sampling" "softirqs"; do not_ok "$mode: $d (not judged)"; done
		continue
	fi
	judge "$mode" consistent "$mode: observer JSON: 12 handlers in ABI order, handler and CPU sums = totals, hits only on loaded programs"
	judge "$mode" hits "$mode: per handler A.run_cnt <= B.run_cnt <= our hits <= the map's after detach == run_cnt after detach"
	judge "$mode" ns "$mode: per handler timed ns <= the kernel's run_time_ns, timed <= estimate <= W x timed, > 0 with hits, mean >= 15 % of the kernel's (>= 10,000 runs)"
	judge "$mode" sampling "$mode: per handler (>= 2,000 runs) the timed runs number 1 in W, each CPU's first one besides, within 6 sigma"
	judge "$mode" softirqs "$mode: softirq_entry and softirq_exit hits >= the /proc/softirqs delta in the window"
done

if record_held reset 1; then
	judge reset reset "SIGUSR1 zeroes the observer: B-C <= hits <= Z-A per handler, ns > 0 above nr_cpus hits"
else
	not_ok "SIGUSR1 zeroes the observer: B-C <= hits <= Z-A per handler, ns > 0 above nr_cpus hits" \
		"$(cat "$WORK/rec.reset.err" "$WORK/in.reset.err" "$WORK/hold.reset.err" 2>/dev/null)"
fi
[ "$(cat "$STATS")" = 1 ] || diag "kernel.bpf_stats_enabled was switched off during the test by someone else: the kernel's counts are short"

# Text: the observer section adds up.
if "$LS_BIN" record --backend ebpf -D 1 > "$WORK/text" 2> "$WORK/text.err"; then
	check "text: observer rows (handlers with hits) add up to the total row, CPU rows to its hits" \
		python3 - "$WORK/text" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
i = lines.index("# observer: the backend's own cost (hits, time inside its handlers)")
assert lines[i + 1].split() == ["handler", "hits", "total_us", "mean_ns"], lines[i + 1]
rows, j = [], i + 2
while not lines[j].startswith("total "):
    rows.append(lines[j].split()); j += 1
total = lines[j].split()
assert rows and all(int(r[1]) > 0 for r in rows), rows
assert sum(int(r[1]) for r in rows) == int(total[1]), (rows, total)
assert abs(sum(float(r[2]) for r in rows) - float(total[2])) <= 0.001 * len(rows) + 0.001, (rows, total)
for r in rows + [total]:
    assert abs(float(r[2]) * 1000 / int(r[1]) - float(r[3])) <= 0.05 + 0.5 * int(r[1]) ** -1, r
assert lines[j + 1].split() == ["cpu", "hits", "total_us", "%window"], lines[j + 1]
cpus = [l.split() for l in lines[j + 2:] if l.startswith("CPU-")]
assert cpus and sum(int(c[1]) for c in cpus) == int(total[1]), (cpus, total)
print("ok: %d handlers, %d CPUs" % (len(rows), len(cpus)))
EOF
else
	not_ok "text: observer rows (handlers with hits) add up to the total row, CPU rows to its hits" "$(cat "$WORK/text.err")"
fi

# A backend that cannot load: exit 2, a reason, no document.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$LS_BIN" record --backend ebpf --json -D 1 2> "$WORK/err")
rc=$?
if [ "$rc" = 2 ] && [ -z "$out" ] && grep -q "needs root" "$WORK/err"; then
	ok "not root: exit 2 saying it needs root, nothing on stdout"
else
	not_ok "not root: exit 2 saying it needs root, nothing on stdout" "rc=$rc" "stdout: $out" "$(cat "$WORK/err")"
fi
if [ -e /sys/kernel/debug/latsplit ]; then
	skip "kmod without latsplit.ko: exit 2, nothing on stdout" "latsplit.ko is loaded here"
else
	out=$("$LS_BIN" record --backend kmod --json -D 1 2> "$WORK/err")
	rc=$?
	if [ "$rc" = 2 ] && [ -z "$out" ] && grep -q "latsplit.ko" "$WORK/err"; then
		ok "kmod without latsplit.ko: exit 2 naming the module, nothing on stdout"
	else
		not_ok "kmod without latsplit.ko: exit 2 naming the module, nothing on stdout" "rc=$rc" "stdout: $out" "$(cat "$WORK/err")"
	fi
fi
done_testing
