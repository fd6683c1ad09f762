#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The congestion case study (tests/lab/case-study.sh), judged inside one run.

  case-study.py toggle --ctl SOCK --out STATES --period S --cycles N FLOWARGS...
      Cycle the wire's storage flow through three states while a breakdown
      runs: 0 off (healthy), 1 on in the probe's class (congested), 2 on in
      class 1, a lower strict priority (fixed). Each switch is written as
      "t_begin t_end state": host CLOCK_MONOTONIC (the clock of the wire's
      log) before the first and after the last command of the switch, so
      a state ends where the next switch began.
  case-study.py judge --samples S --bd BD --wire LOG --states STATES --guard-ms G
                     --ecn-bytes B --rate-bps R [--frame-bytes F]
      Place every sample in the state its request met on the wire (its
      frames G ms after a switch ended and before the next one began), compare the
      states cycle by cycle (the medians of adjacent blocks; the emulator's
      drift cancels), check each congested request's CE mark against the
      backlog its wait on the link says it met (more than B bytes of F-byte
      flow frames at R bit/s, within two frames), and print one JSON object.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired  # noqa: E402


def toggle(a):
    """Switch the flow through 0, 1, 2 every period; log each switch."""
    wire = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../build/lab/labwire")

    def ctl(*words):
        r = subprocess.run([wire, "ctl", a.ctl] + list(words), capture_output=True, text=True,
                           timeout=10)
        if r.returncode:
            sys.exit("case-study.py: labwire ctl %s: %s" % (" ".join(words), r.stdout + r.stderr))

    with open(a.out, "w") as out:
        for _ in range(a.cycles):
            for state in (0, 1, 2):
                t = time.monotonic_ns()
                ctl("flow", "ab", "off")
                if state:
                    ctl("flow", "ab", "class=%d" % (state - 1), *a.flow)
                out.write("%d %d %d\n" % (t, time.monotonic_ns(), state))
                out.flush()
                time.sleep(a.period)
        t = time.monotonic_ns()
        ctl("flow", "ab", "off")
        out.write("%d %d -1\n" % (t, time.monotonic_ns()))


def med(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


def spearman(x, y):
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r
    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((p - mx) * (q - my) for p, q in zip(rx, ry))
    sxx = sum((p - mx) ** 2 for p in rx)
    syy = sum((q - my) ** 2 for q in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else None


def judge(a):
    """Per state and cycle: the parts' medians, the wire's truth, the contrasts."""
    samples = paired.load_samples(a.samples)
    qp, div = paired.load_bd(a.bd)
    rows = [r for r in paired.load_table(a.wire) if r.get("action") == "fwd"]
    req, _ = paired.index_log(rows, qp["peer_qpn"], "ab")
    ans, _ = paired.index_log(rows, qp["qpn"], "ba")
    sw, begins = [], []
    for line in open(a.states):
        b, t, s = line.split()
        sw.append((int(t), int(s)))
        begins.append(int(b))
    guard = a.guard_ms * 1e6
    # a flow frame of F bytes takes (F + 24) bytes' time on the link (FCS,
    # preamble, gap): the ECN threshold's worth of flow frames, in link time
    frame_ns = (a.frame_bytes + 24) * 8e9 / a.rate_bps
    edge = a.ecn_bytes / a.frame_bytes * frame_ns
    ce_wrong = []
    blocks = [[] for _ in sw]        # block k: samples after switch k
    for s in samples:
        fr, fa = req.get(s["req_psn"]), ans.get(s["ans_psn"])
        if fr is None or fa is None:
            continue
        t0, t1 = paired.num(fr["arrive_ns"]), paired.num(fa["depart_ns"])
        k = None
        for i, (t, _) in enumerate(sw):
            if t + guard <= t0:
                k = i
        if k is None or sw[k][1] < 0 or (k + 1 < len(sw) and t1 >= begins[k + 1]):
            continue
        s["truth"] = sum(paired.num(f["depart_ns"]) - paired.num(f["arrive_ns"])
                         for f in (fr, fa)) / div
        s["host"] = s["total"] - s["truth"]    # what the hosts themselves took
        s["ce"] = int(fr["ecn_out"]) == 3
        # the request's wait for the link says what backlog it met (FIFO)
        w = paired.num(fr["due_ns"]) - paired.num(fr["arrive_ns"]) - paired.num(fr["ser_ns"])
        if sw[k][1] == 1 and abs(w - edge) > 2 * frame_ns and s["ce"] != (w > edge):
            ce_wrong.append((s["req_psn"], w, s["ce"]))
        blocks[k].append(s)
    keys = ("total", "queuing", "processing", "transmission", "truth", "host")
    cyc = []          # per cycle: {state: {key: median}}
    for k in range(0, len(sw) - 2, 3):
        c = {}
        for j in range(3):
            b = blocks[k + j]
            if len(b) >= a.min_block:
                c[sw[k + j][1]] = {p: med([x[p] for x in b]) for p in keys}
        if len(c) == 3:
            cyc.append(c)
    rep = {"n": len(samples), "switches": len(sw), "cycles": len(cyc),
           "placed": {st: sum(len(blocks[k]) for k in range(len(sw)) if sw[k][1] == st)
                      for st in (0, 1, 2)}}
    for st in (1, 2):
        rep["state%d" % st] = {p: med([c[st][p] - c[0][p] for c in cyc]) for p in keys}
        rep["state%d" % st]["total_ratio"] = med([c[st]["total"] / c[0]["total"] for c in cyc])
    d1 = rep["state1"]
    rep["queuing_share"] = d1["queuing"] / d1["total"] if d1["total"] else None
    rep["processing_share"] = d1["processing"] / d1["total"] if d1["total"] else None
    cong = [s for k, b in enumerate(blocks) if sw[k][1] == 1 for s in b]
    rep["spearman_queuing_truth"] = spearman([s["queuing"] for s in cong],
                                             [s["truth"] for s in cong])
    rep["ce"] = {st: [sum(s["ce"] for k, b in enumerate(blocks) if sw[k][1] == st for s in b),
                      rep["placed"][st]] for st in (0, 1, 2)}
    rep["ce_wrong"] = ce_wrong[:20]
    rep["ce_wrong_n"] = len(ce_wrong)
    rep["baseline_p50_ns"] = med([c[0]["total"] for c in cyc])
    print(json.dumps(rep, indent=1))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("toggle")
    t.add_argument("--ctl", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--period", type=float, default=0.6)
    t.add_argument("--cycles", type=int, default=8)
    t.add_argument("flow", nargs="*")
    j = sub.add_parser("judge")
    j.add_argument("--samples", required=True)
    j.add_argument("--bd", required=True)
    j.add_argument("--wire", required=True)
    j.add_argument("--states", required=True)
    j.add_argument("--guard-ms", type=float, default=50)
    j.add_argument("--min-block", type=int, default=5)
    j.add_argument("--ecn-bytes", type=float, required=True)
    j.add_argument("--rate-bps", type=float, required=True)
    j.add_argument("--frame-bytes", type=float, default=1500)
    a = ap.parse_args()
    (toggle if a.cmd == "toggle" else judge)(a)


if __name__ == "__main__":
    main()
