#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Paired in-run contrasts: judge a split against an oracle's own log.

A lab test puts a fault on every other sample (the wire delays every other
answer, the fault injector adds softirq work to every other request) and
runs one `latsplit breakdown --samples S.csv --json > BD.json`. The
faulted half is chosen by a hash of the PSN (psn=hash), not by parity, so
it cannot line up with any alternation of the ping-pong itself (odd and
even samples read 15-40 us apart with nothing injected, measured with a
since-replaced contrast whose median was biased; see contrast()). This script
matches every sample to the oracle's per-packet log by QPN and PSN (the
breakdown's JSON gives the run's first PSNs, see inputs.qp), so each sample
knows the fault it really got, and compares every faulted sample with its
unfaulted neighbours: the emulator's drift, slow against one round trip,
cancels in the difference. Per part, the median of those neighbour
differences is the measured effect; the median of the oracle's own
differences is the truth.

  paired.py wire     --samples S --bd BD --wire LOG           (the host wire)
  paired.py faultinj --samples S --bd BD --log LOG --at responder|prober
  paired.py nofault  --samples S --bd BD     (the psn=hash half vs the rest)
  paired.py concurrent --samples S --bd BD --log LOG
                     (injector on another flow's packets at the prober)
  paired.py phases   --samples S --bd BD --wire LOG [--marker PORT]
                     (blocks between a toggler's marker datagrams)

Each option may repeat (one run per --samples, matched in order): the
contrasts stay inside their run and are pooled, so a test can add runs
until its interval is narrow enough.

Prints one JSON object: n, matched, faulted, pairs, truth (median one-way
ns and the oracle's figures), host (the probe's total minus the oracle's
figure, per sample: what the hosts themselves gained or lost), and per part (total, transmission, queuing,
processing, kernel) the median difference with a distribution-free 99.9 %
confidence interval and its ratio to the truth; per host and stage that
held time (stages) the mean difference of its round-trip kernel time. With an oracle, the
errors of the split are contrasted per sample too (queuing-truth and
processing-host for the wire, processing-truth for the injector): a
test judges the interval of what the split got wrong, not the
difference of two noisy medians.
"""
import argparse
import bisect
import csv
import json
import math
import sys

PSN_MASK = 0xffffff
PARTS = ("total", "transmission", "queuing", "processing", "kernel")
STAGE_HOSTS = ("prober_", "responder_")   # --samples columns HOST_STAGE_ns


def die(msg):
    print("paired.py: " + msg, file=sys.stderr)
    sys.exit(2)


def load_samples(path):
    """The --samples CSV as a list of dicts of numbers."""
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        die("%s: %s" % (path, e))
    if not rows or "req_psn" not in rows[0]:
        die("%s: no samples, or no req_psn column (latsplit too old?)" % path)
    stages = [k for k in rows[0] if k.startswith(STAGE_HOSTS) and k.endswith("_ns")]
    out = []
    for r in rows:
        st = {k[:-3]: float(r[k]) for k in stages}
        out.append({**st, "total": float(r["total_ns"]),
                    "transmission": float(r["transmission_ns"]),
                    "queuing": float(r["queuing_ns"]),
                    "processing": float(r["processing_ns"]),
                    "kernel": float(r["kernel_ns"]),
                    "req_psn": int(r["req_psn"]), "ans_psn": int(r["ans_psn"]),
                    "start_ns": int(r["start_ns"]), "end_ns": int(r["end_ns"])})
    return out


def load_bd(path):
    """The breakdown JSON: its QPs and the one-way divisor."""
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        die("%s: %s" % (path, e))
    qp = d["inputs"]["qp"]
    div = 2 if d["inputs"].get("one_way", "rtt/2") == "rtt/2" else 1
    return qp, div


def load_table(path, cols=None):
    """A whitespace table (header line '# col col ...' or COLS): list of dicts."""
    rows = []
    try:
        f = open(path)
    except OSError as e:
        die("%s: %s" % (path, e))
    with f:
        for line in f:
            if line.startswith("#"):
                words = line[1:].split()
                if "psn" in words:
                    cols = words
                continue
            if not line.strip():
                continue
            if cols is None:
                die("%s: no header line naming the columns" % path)
            v = line.split()
            if len(v) != len(cols):
                continue        # a torn line at the end of a live log
            rows.append(dict(zip(cols, v)))
    return rows


def num(s):
    """An int from a log field: decimal, 0x hex, or -1."""
    return int(s, 0)


def ci_median(v, conf=0.999):
    """Median of v and a distribution-free CI from order statistics.

    The differences are not independent (each faulted sample gives up to
    two, each unfaulted neighbour serves up to two): the interval is
    computed for half as many values, sqrt(2) wider."""
    v = sorted(v)
    n = len(v)
    if n == 0:
        return None, None, None
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    z = {0.95: 1.96, 0.99: 2.576, 0.999: 3.291}[conf]
    k = int(math.floor((n - z * math.sqrt(2 * n)) / 2))
    if k < 1:
        return med, v[0], v[-1]
    return med, v[k - 1], v[min(n - 1, n - k)]


def contrast(samples, faulted, key, reach=3):
    """Per faulted sample, its value minus each of its nearest unfaulted
    neighbours (one on each side, within reach samples), one difference
    per neighbour. Under no fault each difference is symmetric about 0, so
    their median is unbiased; against the mean of the two neighbours it is
    not: on right-skewed latencies (the lab's) a spike in either neighbour
    pulls that difference down, and the median with it (-69 on synthetic
    lognormal data with no shift, 51 for a shift of 100)."""
    out = []
    n = len(samples)
    for i in range(n):
        if not faulted[i]:
            continue
        for step in (-1, 1):
            j = i + step
            while 0 <= j < n and abs(j - i) <= reach:
                if faulted[j] is False:
                    out.append(samples[i][key] - samples[j][key])
                    break
                j += step
    return out


def judge(runs, extra, errors=()):
    """The report over one or more runs, each (samples, faulted, truth):
    the truth and every part's median neighbour difference, and for each
    ERRORS entry (name, part, reference) the contrast of part minus
    reference per sample: what the split got wrong, with its interval."""
    for samples, faulted, truth in runs:
        for i, s in enumerate(samples):
            s["truth"] = truth[i] if truth[i] is not None else 0.0
            # What the probe measured beyond the oracle's figure: time the hosts
            # gained or lost (the part of the total no oracle holds).
            s["host"] = s["total"] - s["truth"]
            for name, part, ref in errors:
                s[name] = s[part] - s[ref]

    def pooled(key):
        out = []
        for samples, faulted, _ in runs:
            out += contrast(samples, faulted, key)
        return out

    usable = [f for _, faulted, _ in runs for f in faulted if f is not None]
    rep = {"n": sum(len(r[0]) for r in runs), "runs": len(runs), "matched": len(usable),
           "faulted": sum(1 for f in usable if f)}
    # How many of the matched samples' request and answer PSNs psn=hash
    # selects: a psn=hash fault on one direction faulted exactly those
    # (one packet per message; a pseudo-random half, 400 +-14 of 800).
    rep["hashed"] = {
        d: sum(1 for samples, faulted, _ in runs for s, f in zip(samples, faulted)
               if f is not None and psn_hash_bit(s[d + "_psn"]))
        for d in ("req", "ans")}
    t = pooled("truth")
    rep["pairs"] = len(t)          # differences: up to two per faulted sample
    tmed, tlo, thi = ci_median(t)
    rep["truth"] = dict(extra, median_ns=tmed, lo_ns=tlo, hi_ns=thi)
    hmed, hlo, hhi = ci_median(pooled("host"))
    rep["host"] = {"median_ns": hmed, "lo_ns": hlo, "hi_ns": hhi}
    # Where the kernel part's difference came from: each host's stage (the
    # --samples columns HOST_STAGE_ns of the round trip), by the mean of
    # the neighbour differences (the means add up; mostly-zero columns'
    # medians say nothing), for the stages that held any time.
    rep["stages"] = {}
    keys = [k for k in runs[0][0][0] if k.startswith(STAGE_HOSTS)] if runs[0][0] else []
    for k in keys:
        d = pooled(k)
        if d and any(s[k] for samples, _, _ in runs for s in samples):
            rep["stages"][k] = {"mean_ns": sum(d) / len(d)}
    rep["parts"] = {}
    for p in PARTS + tuple(e[0] for e in errors):
        med, lo, hi = ci_median(pooled(p))
        r = {"median_ns": med, "lo_ns": lo, "hi_ns": hi}
        if tmed:
            r["ratio"] = med / tmed if med is not None else None
        rep["parts"][p] = r
    return rep


def index_log(rows, dqpn, key_dir=None):
    """First log row per PSN for frames to one QP (retransmits kept apart)."""
    first, dups = {}, 0
    for r in rows:
        if key_dir and r.get("dir") != key_dir:
            continue
        if num(r["psn"]) < 0 or num(r["dqpn"]) != dqpn:
            continue
        psn = num(r["psn"])
        if psn in first:
            dups += 1
            continue
        first[psn] = r
    return first, dups


def runs_of(a, oracle_arg=None):
    """The (samples, qp, divisor, oracle file) of every run given, in order."""
    n = len(a.samples)
    if len(a.bd) != n or (oracle_arg is not None and len(oracle_arg) != n):
        die("give one --bd%s per --samples" % ("" if oracle_arg is None else " and one oracle log"))
    out = []
    for i in range(n):
        qp, div = load_bd(a.bd[i])
        out.append((load_samples(a.samples[i]), qp, div,
                    None if oracle_arg is None else oracle_arg[i]))
    return out


WIRE_ERRORS = (("queuing-truth", "queuing", "truth"), ("processing-host", "processing", "host"))
FAULTINJ_ERRORS = (("processing-truth", "processing", "truth"),)
# what processing took beyond the sample's own growth (the total's)
CONCURRENT_ERRORS = (("processing-total", "processing", "total"),)


def cmd_wire(a):
    """Oracle: the host wire's log (hold = depart - arrive, both directions)."""
    runs, dups, divs = [], 0, set()
    for samples, qp, div, log in runs_of(a, a.wire):
        rows = [r for r in load_table(log) if r.get("action") == "fwd"]
        req, d1 = index_log(rows, qp["peer_qpn"], "ab")
        ans, d2 = index_log(rows, qp["qpn"], "ba")
        dups += d1 + d2
        divs.add(div)
        faulted, truth = [], []
        for s in samples:
            fr, fa = req.get(s["req_psn"]), ans.get(s["ans_psn"])
            if fr is None or fa is None:
                faulted.append(None)
                truth.append(None)
                continue
            hold = sum(num(f["depart_ns"]) - num(f["arrive_ns"]) for f in (fr, fa))
            faulted.append(num(fr["rule"]) >= 0 or num(fa["rule"]) >= 0)
            truth.append(hold / div)
        runs.append((samples, faulted, truth))
    extra = {"oracle": "wire", "retransmits": dups, "divisor": sorted(divs)}
    print(json.dumps(judge(runs, extra, WIRE_ERRORS), indent=1))


def cmd_faultinj(a):
    """Oracle: the fault injector's log on the node that received the packets."""
    runs, dups, divs, cpus = [], 0, set(), {}
    for samples, qp, div, log in runs_of(a, a.log):
        rows = load_table(log, ["cpu", "start_ns", "end_ns", "psn", "dqpn", "opcode"])
        # The responder receives the requests (to the responder's QP), the
        # prober the answers (to its own QP).
        if a.at == "responder":
            inj, d = index_log(rows, qp["peer_qpn"])
            key = "req_psn"
        else:
            inj, d = index_log(rows, qp["qpn"])
            key = "ans_psn"
        dups += d
        divs.add(div)
        faulted, truth = [], []
        for s in samples:
            e = inj.get(s[key])
            faulted.append(e is not None)
            if e is None:
                truth.append(0.0)
                continue
            truth.append((num(e["end_ns"]) - num(e["start_ns"])) / div)
            cpus[e["cpu"]] = cpus.get(e["cpu"], 0) + 1
        runs.append((samples, faulted, truth))
    extra = {"oracle": "faultinj", "at": a.at, "cpus": cpus, "repeats": dups,
             "divisor": sorted(divs)}
    print(json.dumps(judge(runs, extra, FAULTINJ_ERRORS), indent=1))


def psn_hash_bit(psn):
    """psn=hash of the wire and the injector: low bit of murmur3's finalizer."""
    h = psn & 0xffffffff
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h & 1 == 1


def cmd_nofault(a):
    """No oracle: the psn=hash half of the samples against the rest, truth 0."""
    runs = []
    for samples, _, _, _ in runs_of(a):
        runs.append((samples, [psn_hash_bit(s["req_psn"]) for s in samples],
                     [0.0] * len(samples)))
    print(json.dumps(judge(runs, {"oracle": "none"}), indent=1))


def cmd_concurrent(a):
    """Oracle: the fault injector's log of work on another flow's packets
    (roce=0, another UDP port) on the prober, the node whose clock the
    samples are in (both CLOCK_MONOTONIC). A sample is faulted when an
    injection overlapped its round trip [start, end], unfaulted when none
    came within MARGIN of it; the truth is the overlap (what the old
    rule, every record overlapping the window, would have called
    processing). The work is not the sample's: processing may grow only
    by what it really delayed the sample (the total's growth: the error
    contrasted is processing-total), never by the overlap alone. The
    report's truth.overlap_ns holds each run's overlap summed over its
    samples (round trip)."""
    runs, n_inj, overlaps = [], 0, []
    margin = a.margin_us * 1e3
    for samples, qp, div, log in runs_of(a, a.log):
        rows = load_table(log, ["cpu", "start_ns", "end_ns", "psn", "dqpn", "opcode"])
        inj = sorted((num(r["start_ns"]), num(r["end_ns"])) for r in rows)
        n_inj += len(inj)
        starts = [x[0] for x in inj]
        faulted, truth = [], []
        for s in samples:
            t0, t1 = s["start_ns"], s["end_ns"]
            k = bisect.bisect_left(starts, t1 + margin)
            ov, near = 0, False
            for j in range(k - 1, -1, -1):
                b, e = inj[j]
                if e + margin < t0:
                    if e + margin + 20e6 < t0:   # no injection lasts 20 ms
                        break
                    continue
                near = True
                ov += max(0, min(e, t1) - max(b, t0))
            faulted.append(True if ov > 0 else (None if near else False))
            truth.append(ov / div)
        runs.append((samples, faulted, truth))
        overlaps.append(sum(truth) * div)
    extra = {"oracle": "concurrent", "injections": n_inj, "margin_us": a.margin_us,
             "overlap_ns": overlaps}
    print(json.dumps(judge(runs, extra, CONCURRENT_ERRORS), indent=1))


def sign_p(k, n):
    """Two-sided binomial sign-test p-value of k successes in n (p = 1/2)."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2 * tail)


def cmd_phases(a):
    """Oracle: the wire's log of the toggler's marker datagrams. A setting
    switched on node1 is followed at once by one UDP datagram to port
    MARKER + state; the wire logs it on the host clock in line with the
    probe's own frames, so each sample falls between two markers with no
    clock to align. Blocks of samples between markers (a guard before the
    next marker, where the switch may already have happened) are compared
    with their neighbours, in both orders: per pair, the ratio state 1 /
    state 0 and the difference of their medians of PART and of the total
    (the probe's own figure, which says what the setting really did)."""
    samples = load_samples(a.samples[0])
    qp, _ = load_bd(a.bd[0])
    rows = load_table(a.wire[0])
    marks = sorted((num(r["arrive_ns"]), num(r["dport"]) - a.marker) for r in rows
                   if r.get("dir") == "ba" and a.marker <= num(r["dport"]) <= a.marker + 1)
    fwd = [r for r in rows if r.get("action") == "fwd"]
    req, _ = index_log(fwd, qp["peer_qpn"], "ab")
    ans, _ = index_log(fwd, qp["qpn"], "ba")
    guard = a.guard_ms * 1e6
    blocks = [[] for _ in marks]
    placed = 0
    for s in samples:
        fr, fa = req.get(s["req_psn"]), ans.get(s["ans_psn"])
        if fr is None or fa is None:
            continue
        t0, t1 = num(fr["depart_ns"]), num(fa["arrive_ns"])
        k = None
        for i, (t, _) in enumerate(marks):
            if t <= t0:
                k = i
        if k is None:
            continue
        nxt = marks[k + 1][0] if k + 1 < len(marks) else float("inf")
        if t1 <= nxt - guard:
            blocks[k].append(s)
            placed += 1

    def med(v):
        v = sorted(v)
        return v[len(v) // 2]

    keys = PARTS
    bm = [None if len(b) < a.min_block else
          (marks[k][1], {p: med([x[p] for x in b]) for p in keys})
          for k, b in enumerate(blocks)]
    pairs = []           # (state 0 medians, state 1 medians) of adjacent blocks
    for x, y in zip(bm, bm[1:]):
        if x is None or y is None or x[0] == y[0]:
            continue
        pairs.append((x[1], y[1]) if x[0] == 0 else (y[1], x[1]))
    rep = {"n": len(samples), "markers": len(marks), "placed": placed,
           "blocks": sum(1 for m in bm if m is not None), "pairs": len(pairs),
           "part": a.part}
    for p in keys:
        ratios = sorted(s1[p] / s0[p] for s0, s1 in pairs if s0[p] > 0)
        diffs = sorted(s1[p] - s0[p] for s0, s1 in pairs)
        up = sum(1 for r in ratios if r > 1)
        rep[p] = {"median_ratio": ratios[len(ratios) // 2] if ratios else None,
                  "median_diff_ns": diffs[len(diffs) // 2] if diffs else None,
                  "state1_higher": up, "sign_p": sign_p(up, len(ratios)),
                  "ratios": [round(r, 3) for r in ratios]}
    print(json.dumps(rep, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("wire", "faultinj", "nofault", "concurrent"):
        p = sub.add_parser(name)
        # repeatable: one run per --samples, in the same order as --bd and
        # the oracle's logs; contrasts stay inside their run, then pool
        p.add_argument("--samples", required=True, action="append")
        p.add_argument("--bd", required=True, action="append")
        if name == "wire":
            p.add_argument("--wire", required=True, action="append")
        if name in ("faultinj", "concurrent"):
            p.add_argument("--log", required=True, action="append")
        if name == "faultinj":
            p.add_argument("--at", choices=("responder", "prober"), required=True)
        if name == "concurrent":
            p.add_argument("--margin-us", type=float, default=200.0,
                           help="an unfaulted sample has no injection this near")
    p = sub.add_parser("phases")
    p.add_argument("--samples", required=True, action="append")
    p.add_argument("--bd", required=True, action="append")
    p.add_argument("--wire", required=True, action="append")
    p.add_argument("--marker", type=int, default=40000, help="UDP port of state 0")
    p.add_argument("--part", default="processing", choices=PARTS)
    p.add_argument("--guard-ms", type=float, default=2.0)
    p.add_argument("--min-block", type=int, default=10)
    a = ap.parse_args()
    {"wire": cmd_wire, "faultinj": cmd_faultinj, "nofault": cmd_nofault,
     "concurrent": cmd_concurrent, "phases": cmd_phases}[a.cmd](a)


if __name__ == "__main__":
    main()
