#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# eBPF backend on the host kernel, natively, against the kernel's own
# counters: per-CPU hardirq counts of the root disk's virtio IRQs against
# /proc/interrupts deltas (driven by O_DIRECT|O_SYNC writes), and NET_RX
# softirq runs against /proc/softirqs deltas (driven by loopback UDP), with
# the tp_btf programs and with the raw_tp fallback.
#
# Window: `latsplit record -- CMD` attaches before CMD starts and detaches
# after it exits; CMD reads /proc first and last, so the record window
# contains the /proc window. Tolerance, per IRQ (vector) and CPU:
#   record - delta <= 10 + 0.2 % of delta   (events in the edge gaps: the
#     attach->first read and last read->detach gaps, a few ms, where other
#     disk/network activity on the host can land)
#   delta - record <= 2 + 0.1 % of delta    (on 6.18 /proc/interrupts counts
#     a few deliveries that never reach irq_handler_entry: measured 0-4 per
#     9,000 with bpftrace counting the same tracepoint, 0-6 per 11,900 with
#     this load in 16 runs of each attach mode; /proc/softirqs is
#     exact: its counter and softirq_entry are adjacent).
# The load must move the counters (>= 3,000 IRQs, >= 20,000 NET_RX), so
# the comparison cannot pass on an idle window. The observer's figures
# (the kernel's run-time statistics of the programs, held on by the
# backend; every CPU together) against /proc/softirqs: softirq_entry's
# program ran, or was skipped by the kernel's recursion protection and
# reported so (bpf_prog_info recursion_misses, the observer's "missed"),
# at least once per softirq the kernel counted in the window (-2; one
# fresh-clone run had 3 fewer runs than the count, before misses were
# read), at most 2 % + 500 more (the edge gaps; measured +8 to +49 on
# 20,000-40,000). With the statistics on (every program run then reads
# the clock twice) the hardirq counts stayed exact: 9 of 9 runs, as
# without them; a machine running the lab meanwhile loses 14-51 per
# 12,000 against /proc/interrupts either way.
. "$(dirname "$0")/../lib.sh"

ebpf_host_require "UDP load and JSON checks"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

IRQS=$(blk_msi_irqs "$WORK")
[ -n "$IRQS" ] || skip_all "no MSI IRQs found for the block device under $WORK"

udp_load_py "$WORK/udp.py"

# The load overwrites a file written once before the window: the first
# write of a new file (block allocation, journal) left /proc up to 27 IRQs
# per 11,900 ahead of irq_handler_entry on 6.18, in both attach modes and
# with no recursion miss on the programs; in-place overwrites left 0-1.
dd if=/dev/zero of="$WORK/f" bs=4k count=3000 2>/dev/null; sync
cat > "$WORK/load.sh" <<EOF
cat /proc/interrupts > "$WORK/irq.a"; cat /proc/softirqs > "$WORK/sirq.a"
dd if=/dev/zero of="$WORK/f" bs=4k count=3000 oflag=direct,sync 2>/dev/null
python3 "$WORK/udp.py" 20000
cat /proc/softirqs > "$WORK/sirq.b"; cat /proc/interrupts > "$WORK/irq.b"
EOF

cat > "$WORK/check.py" <<'EOF'
import json, sys
work, irqs = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
d = json.load(open(work + "/rec.json"))
ncpu = None
def proc_irq(path):
    global ncpu
    out = {}
    lines = open(path).read().splitlines()
    ncpu = len(lines[0].split())
    for l in lines[1:]:
        f = l.split()
        if f[0].rstrip(":").isdigit():
            out[int(f[0].rstrip(":"))] = [int(x) for x in f[1:1 + ncpu]]
    return out
def proc_sirq(path, vec):
    for l in open(path).read().splitlines()[1:]:
        f = l.split()
        if f[0] == vec + ":":
            return [int(x) for x in f[1:]]
a, b = proc_irq(work + "/irq.a"), proc_irq(work + "/irq.b")
rec = {}
for c in d["cpus"]:
    for s in c["slots"]:
        rec[(c["cpu"], s["stage"], s.get("id"))] = s
bad, total, lines = 0, 0, []
def cmp(what, cpu, got, want):
    global bad
    over, under = got - want, want - got
    ok = over <= 10 + 0.002 * want and under <= 2 + 0.001 * want
    lines.append("%s cpu%d: record %d, /proc delta %d%s" % (what, cpu, got, want, "" if ok else "  <-- outside tolerance"))
    if not ok:
        bad += 1
for irq in irqs:
    for cpu in range(ncpu):
        want = b[irq][cpu] - a[irq][cpu]
        got = rec.get((cpu, "hardirq", irq), {}).get("count", 0)
        total += want
        cmp("hardirq irq %d" % irq, cpu, got, want)
        s = rec.get((cpu, "hardirq", irq))
        if s and not (50 <= s["sum_ns"] / s["count"] <= 1e6 and s["max_ns"] >= s["p50_ns"]):
            bad += 1
            lines.append("hardirq irq %d cpu%d: implausible times %s" % (irq, cpu, s))
sa, sb = proc_sirq(work + "/sirq.a", "NET_RX"), proc_sirq(work + "/sirq.b", "NET_RX")
rx_total = 0
for cpu in range(len(sa)):
    want = sb[cpu] - sa[cpu]
    rx_total += want
    cmp("softirq NET_RX", cpu, rec.get((cpu, "softirq_run", 3), {}).get("count", 0), want)
    w = rec.get((cpu, "softirq_wait", 3), {}).get("count", 0)
    if w > rec.get((cpu, "softirq_run", 3), {}).get("count", 0) + 2:
        bad += 1
        lines.append("NET_RX cpu%d: more waits (%d) than runs" % (cpu, w))
# The observer (the kernel's run-time statistics of the programs, every
# CPU): softirq_entry's program ran once per softirq run the kernel
# counted, and the record window contains the /proc window (runs in the
# edge gaps only add); its time per run is plausible. Under load the
# kernel's run count has come out up to 6 in 32,000 below /proc's (cause
# not found; no recursion miss reported): the lower bound allows 0.1 %,
# as the hardirq and NET_RX counts above do.
o = d.get("observer") or {}
obs = {h["name"]: h for h in o.get("handlers", [])}
def sirq_total(path):
    return sum(int(x) for l in open(path).read().splitlines()[1:] for x in l.split()[1:])
want = sirq_total(work + "/sirq.b") - sirq_total(work + "/sirq.a")
got = obs.get("softirq_entry", {}).get("hits", 0)
ns = obs.get("softirq_entry", {}).get("ns", 0)
# runs the kernel skipped (its recursion protection) are reported, not lost
missed = obs.get("softirq_entry", {}).get("missed", -1)
ok = o.get("scope") == "all_cpus" and not o.get("cpus") and missed >= 0 \
    and want - 2 - 0.001 * want <= got + missed <= 1.02 * want + 500 \
    and 5 <= ns / max(got, 1) <= 100000
lines.append("observer: softirq_entry program runs %d (%.0f ns each) + %d skipped by the kernel, /proc/softirqs delta %d (all vectors, all CPUs)%s"
             % (got, ns / got if got else 0, missed, want, "" if ok else "  <-- outside [0.999 delta - 2, 1.02 delta + 500] or implausible"))
if not ok:
    bad += 1
print("\n".join(lines))
print("hardirq total delta %d, NET_RX total delta %d" % (total, rx_total))
if total < 3000:
    print("load produced only %d IRQs (< 3000): cannot judge" % total); bad += 1
if rx_total < 20000:
    print("load produced only %d NET_RX (< 20000): cannot judge" % rx_total); bad += 1
sys.exit(1 if bad else 0)
EOF

plan 14
for mode in tp_btf raw_tp; do
	rm -f "$WORK"/rec.json "$WORK"/*.a "$WORK"/*.b
	if LS_EBPF_ATTACH=$mode "$LS_BIN" record --backend ebpf --irq "$IRQS" --json \
		-- bash "$WORK/load.sh" > "$WORK/rec.json" 2> "$WORK/err"; then
		ok "$mode: record ran the load (irqs $IRQS)"
	else
		not_ok "$mode: record ran the load (irqs $IRQS)" "$(cat "$WORK/err")"
		continue
	fi
	if out=$(python3 "$WORK/check.py" "$WORK" "$IRQS" 2>&1); then
		ok "$mode: hardirq and NET_RX counts equal /proc deltas per CPU, the observer's softirq runs /proc's"
		diag "$out"
	else
		not_ok "$mode: hardirq and NET_RX counts equal /proc deltas per CPU, the observer's softirq runs /proc's" "$out"
	fi
done

# Records: one per histogram count, time-ordered windows on the monotonic clock.
if "$LS_BIN" record --backend ebpf --irq "$IRQS" --json --records "$WORK/recs.txt" \
	-- dd if=/dev/zero of="$WORK/g" bs=4k count=500 oflag=direct,sync > "$WORK/rec.json" 2>/dev/null; then
	check "records: one hardirq record per counted hardirq, none dropped, inside the window" \
		python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
d = json.load(open(w + "/rec.json"))
n = sum(s["count"] for c in d["cpus"] for s in c["slots"] if s["stage"] == "hardirq")
recs = [l.split() for l in open(w + "/recs.txt") if not l.startswith("#")]
hard = [r for r in recs if r[4] == "hardirq"]
assert d["drops"] == 0, "drops %d" % d["drops"]
assert len(recs) == d["records"], "file %d lines, backend says %d" % (len(recs), d["records"])
assert len(hard) == n and n >= 500, "hardirq records %d, histogram count %d" % (len(hard), n)
for r in recs:
    s, e = int(r[0]), int(r[1])
    assert e >= s and d["start_ns"] - 10**9 < s and e <= d["end_ns"], r
print("ok: %d records" % len(recs))
EOF
else
	not_ok "records: one hardirq record per counted hardirq, none dropped, inside the window"
fi

# --no-hist (breakdown's way of recording): the same records, no histograms.
if "$LS_BIN" record --backend ebpf --irq "$IRQS" --json --no-hist --records "$WORK/nh.txt" \
	-- dd if=/dev/zero of="$WORK/g" bs=4k count=500 oflag=direct,sync > "$WORK/nh.json" 2>/dev/null; then
	check "--no-hist: no histogram counts, one hardirq record per write or more, none dropped" \
		python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
d = json.load(open(w + "/nh.json"))
n = sum(s["count"] for c in d["cpus"] for s in c["slots"])
recs = [l.split() for l in open(w + "/nh.txt") if not l.startswith("#")]
hard = [r for r in recs if r[4] == "hardirq"]
assert d["histograms"] is False and n == 0, "histograms %r, counts %d" % (d["histograms"], n)
assert d["drops"] == 0 and len(recs) == d["records"], "drops %d, lines %d, records %d" % (
    d["drops"], len(recs), d["records"])
assert len(hard) >= 500, "hardirq records %d for 500 O_DIRECT|O_SYNC writes" % len(hard)
print("ok: %d records, %d hardirq" % (len(recs), len(hard)))
EOF
else
	not_ok "--no-hist: no histogram counts, one hardirq record per write or more, none dropped"
fi

# RX_PKT and TX_PKT: crafted RoCEv2 datagrams over loopback (IPv4 and
# IPv6) come back as one record each way with their BTH destination QP, PSN
# and opcode, each TX_PKT no later than its RX_PKT; a datagram to another
# port, or too short to hold a BTH, leaves none.
cat > "$WORK/roce_send.py" <<'EOF'
import socket, sys, time
time.sleep(float(sys.argv[1]))
def bth(op, qpn, psn):
    return bytes([op, 0, 0xff, 0xff, 0, qpn >> 16, (qpn >> 8) & 255, qpn & 255,
                  0x80, psn >> 16, (psn >> 8) & 255, psn & 255]) + b"p" * 20
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(40):
    s4.sendto(bth(0x0a, 0x12345, (0xfffff0 + i) & 0xffffff), ("127.0.0.1", 4791))
for i in range(10):
    s6.sendto(bth(0x11, 0xabcdef, i), ("::1", 4791))
s4.sendto(bth(0x0a, 0x12345, 7), ("127.0.0.1", 4792))
s4.sendto(b"short", ("127.0.0.1", 4791))
EOF
cat > "$WORK/rx_check.py" <<'EOF'
import sys
recs = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
want = sorted([(0x12345, (0xfffff0 + i) & 0xffffff, 0x0a) for i in range(40)] +
              [(0xabcdef, i, 0x11) for i in range(10)])
at = {}
for kind in ("rx_pkt", "tx_pkt"):
    rx = [r for r in recs if r[4] == kind]
    got = sorted((int(r[5]), int(r[6]) & 0xffffff, int(r[6]) >> 24) for r in rx)
    assert got == want, "%s: got %d records, first %s; want %d" % (kind, len(got), got[:3], len(want))
    assert all(r[0] == r[1] for r in rx), "a %s is an instant" % kind
    at[kind] = {(int(r[5]), int(r[6])): int(r[0]) for r in rx}
late = [k for k, t in at["tx_pkt"].items() if t > at["rx_pkt"][k]]
assert not late, "%d packets received before they were sent, e.g. %s" % (len(late), late[:2])
print("ok")
EOF
for mode in tp_btf raw_tp; do
	python3 "$WORK/roce_send.py" 1 &
	snd=$!
	LS_EBPF_ATTACH=$mode "$LS_BIN" record --backend ebpf --irq "$IRQS" \
		--records "$WORK/rx.$mode.txt" -D 3 > /dev/null 2> "$WORK/rx.$mode.err"
	rc=$?
	wait $snd
	check "RX_PKT and TX_PKT ($mode): 50 records each with the QPN, PSN and opcode sent, TX before RX, none for port 4792 or a short datagram (record rc $rc)" \
		python3 "$WORK/rx_check.py" "$WORK/rx.$mode.txt"
done

# Errors are clear and exit 2, never an empty result.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$LS_BIN" record --backend ebpf -D 1 2>&1)
rc=$?
if [ "$rc" = 2 ] && echo "$out" | grep -q "needs root"; then
	ok "not root: exit 2 saying it needs root"
else
	not_ok "not root: exit 2 saying it needs root" "rc=$rc" "$out"
fi
out=$(LS_EBPF_ATTACH=bogus "$LS_BIN" record --backend ebpf -D 1 2>&1); rc=$?
if [ "$rc" = 2 ] && echo "$out" | grep -q "LS_EBPF_ATTACH"; then
	ok "bad attach mode: exit 2"
else
	not_ok "bad attach mode: exit 2" "rc=$rc" "$out"
fi
check_fails "bad --irq list refused" "$LS_BIN" record --irq 1,x -D 1
check_fails "-D with a command refused" "$LS_BIN" record -D 1 -- true
out=$("$LS_BIN" record --backend ebpf --no-hist -D 1 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"--no-hist needs --records"* ]] &&
	ok "--no-hist without --records: exit 2 saying why" ||
	not_ok "--no-hist without --records" "rc=$rc" "$out"
out=$("$LS_BIN" record --backend ebpf --no-hist --buckets --records "$WORK/x" -D 1 2>&1); rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"no histograms to print"* ]] && [ ! -e "$WORK/x" ] &&
	ok "--no-hist with --buckets: exit 2, no records file" ||
	not_ok "--no-hist with --buckets" "rc=$rc" "$out"
done_testing
