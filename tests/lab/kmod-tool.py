#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Helpers for the latsplit.ko lab tests (tests/lab/kmod-*.sh).

Runs inside a lab guest (plain python3, no third-party modules). It parses
the module's binary files independently of the C tools, so a layout bug in
either shows up as a mismatch. Results are printed one per line as
"PASS <desc>" or "FAIL <desc> :: <detail>" for the shell test to turn into
TAP.

  kmod-tool.py nic-irqs IFACE            IRQs of IFACE's device (comma list)
  kmod-tool.py window-start DIR          snapshot /proc, then `enable`
  kmod-tool.py window-end DIR            `disable`, snapshot /proc and hist
  kmod-tool.py oracle DIR [--tol N]      hist vs /proc/interrupts, /proc/softirqs
  kmod-tool.py observer DIR              the probes' own cost (DIR/obs.*) vs /proc
  kmod-tool.py records DIR REC [--tasks P,..] [--expect-nodrops] [--rt yes|no]
                  [--ctxsw]             (DIR/cs.0, cs.1: the task's /proc status around it)
  kmod-tool.py hist FILE                 summary of a hist file (JSON)
  kmod-tool.py inert DIR                 inert=Y: enabled, nothing counted; N: counts
  kmod-tool.py poll-check                poll()/read() semantics of `records`
  kmod-tool.py bad-inputs NIC_IRQ        malformed control writes are refused
  kmod-tool.py concurrent WRITERS ROUNDS racing control writers
  kmod-tool.py write TEXT                write TEXT to control, print errno name
  kmod-tool.py owner                     `own`: others refused, release quiesces
"""
import bisect
import errno
import json
import os
import struct
import sys

from passfail import result, status

D = "/sys/kernel/debug/latsplit"
MAGIC = 0x3148534C
HDR_FMT = "<8I32I5Q"
HDR_SIZE = struct.calcsize(HDR_FMT)
NR_BUCKETS = (36 - 4 + 1) * 16
HIST_FMT = "<%dQ" % (3 + NR_BUCKETS)
HIST_SIZE = struct.calcsize(HIST_FMT)
REC_FMT = "<QQIHHII"
REC_SIZE = struct.calcsize(REC_FMT)
MAX_IRQS, NR_SOFTIRQS = 32, 10
S_HARDIRQ, S_SWAIT, S_SRUN, S_NAPI, S_COMP, S_WAKE, S_INTF, S_PREEMPT, S_THREAD, S_RXPKT = range(10)
S_DELIVER, S_TXPKT, S_SEND = 10, 11, 12     # DELIVER and SEND: never recorded
NR_STAGES = 13
STAGE = ["hardirq", "softirq_wait", "softirq_run", "napi_poll", "completion",
         "wakeup", "interference", "preempt", "irq_thread", "rx_pkt",
         "deliver", "tx_pkt", "send"]
SLOT_HARDIRQ, SLOT_COMP, SLOT_THREAD = 0, 32, 64
SLOT_SWAIT, SLOT_SRUN = 96, 106
SLOT_NAPI, SLOT_WAKE, SLOT_INTF, SLOT_PREEMPT, NR_SLOTS = 116, 117, 118, 119, 120
WATCHED_VECS = {2, 3, 5, 6}     # NET_TX, NET_RX, IRQ_POLL, TASKLET
NET_TX, NET_RX = 2, 3
SOFTIRQ_BASE = 0x40000000
F_NESTED, F_THREAD, F_PREEMPTED = 1, 2, 4
HDR_F_NO_HIST = 8
F_INTF = 8          # on HARDIRQ/SOFTIRQ_RUN: INTERFERENCE too (one record for two)


def check_count(what, got, src, want, tol):
    """PASS when the module's count GOT is within TOL of the kernel's WANT (from SRC)."""
    result(abs(got - want) <= tol, "%s: module %d, %s %d (tolerance %d)" % (what, got, src, want, tol),
           "differs by %d" % (got - want))

def read_hist(path):
    """Parse a hist file: (header dict, {(cpu, slot): (count, sum, max, buckets)})."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HDR_SIZE:
        raise SystemExit("hist: %d bytes, shorter than the header" % len(data))
    v = struct.unpack_from(HDR_FMT, data, 0)
    h = dict(magic=v[0], abi=v[1], hdr_size=v[2], hist_size=v[3], nr_cpus=v[4],
             nr_slots=v[5], nr_irqs=v[6], flags=v[7], irqs=list(v[8:8 + v[6]]),
             records=v[40], drops=v[41], snapshot_ns=v[42],
             comp_stale=v[43], napi_untimed=v[44])
    want = h["hdr_size"] + h["nr_cpus"] * h["nr_slots"] * h["hist_size"]
    h["size_ok"] = (len(data) == want and h["magic"] == MAGIC and
                    h["hist_size"] == HIST_SIZE and h["nr_slots"] == NR_SLOTS)
    hist = {}
    if not h["size_ok"]:
        return h, hist
    for cpu in range(h["nr_cpus"]):
        for slot in range(NR_SLOTS):
            off = h["hdr_size"] + (cpu * NR_SLOTS + slot) * HIST_SIZE
            q = struct.unpack_from(HIST_FMT, data, off)
            if q[0] or any(q[3:]):
                hist[(cpu, slot)] = (q[0], q[1], q[2], q[3:])
    return h, hist


def read_proc_interrupts(path):
    """{irq: [per-cpu counts]} from a /proc/interrupts copy."""
    out = {}
    with open(path) as f:
        ncpu = len(f.readline().split())
        for line in f:
            parts = line.split()
            if not parts or not parts[0].endswith(":"):
                continue
            key = parts[0][:-1]
            if not key.isdigit():
                continue
            out[int(key)] = [int(x) for x in parts[1:1 + ncpu]]
    return out


def read_proc_softirqs(path):
    """{name: [per-cpu counts]} from a /proc/softirqs copy."""
    out = {}
    with open(path) as f:
        f.readline()
        for line in f:
            parts = line.split()
            if parts:
                out[parts[0].rstrip(":")] = [int(x) for x in parts[1:]]
    return out


def control(text):
    """Write text to the control file in one write(); returns errno or 0."""
    try:
        fd = os.open(D + "/control", os.O_WRONLY)
    except OSError as e:
        return e.errno
    try:
        os.write(fd, text.encode() if isinstance(text, str) else text)
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def copy(src, dst):
    """Copy a (pseudo) file whole."""
    with open(src, "rb") as f, open(dst, "wb") as g:
        g.write(f.read())


def cmd_nic_irqs(iface):
    """IRQs of the interface's PCI function that have a handler."""
    dev = os.path.realpath("/sys/class/net/%s/device" % iface)
    irqs = []
    for d in (dev, os.path.dirname(dev)):
        p = os.path.join(d, "msi_irqs")
        if os.path.isdir(p):
            irqs = sorted(int(x) for x in os.listdir(p))
            break
    live = read_proc_interrupts("/proc/interrupts")
    irqs = [i for i in irqs if i in live]
    if not irqs:
        raise SystemExit("no IRQs found for %s" % iface)
    print(",".join(str(i) for i in irqs))


def cmd_window_start(d):
    """Snapshot /proc counters, then enable tracing (nothing in between)."""
    copy("/proc/interrupts", d + "/a.int")
    copy("/proc/softirqs", d + "/a.soft")
    e = control("enable")
    if e:
        raise SystemExit("enable: %s" % errno.errorcode[e])


def cmd_window_end(d):
    """Disable tracing, then snapshot /proc counters and the histograms."""
    e = control("disable")
    if e:
        raise SystemExit("disable: %s" % errno.errorcode[e])
    copy("/proc/interrupts", d + "/b.int")
    copy("/proc/softirqs", d + "/b.soft")
    copy(D + "/hist", d + "/hist.bin")


def cmd_oracle(d, tol):
    """Module counts against the kernel's own counters over the window."""
    h, hist = read_hist(d + "/hist.bin")
    result(h["size_ok"], "hist file layout (magic, sizes)", str(h))
    a, b = read_proc_interrupts(d + "/a.int"), read_proc_interrupts(d + "/b.int")
    total = 0
    for idx, irq in enumerate(h["irqs"]):
        for cpu in range(min(h["nr_cpus"], len(b.get(irq, [])))):
            want = b[irq][cpu] - a.get(irq, [0] * 64)[cpu]
            got = hist.get((cpu, SLOT_HARDIRQ + idx), (0,))[0]
            total += want
            check_count("hardirq count irq %d cpu %d" % (irq, cpu), got,
                        "/proc/interrupts", want, tol)
    result(total >= 100, "the window saw NIC interrupts (%d >= 100)" % total,
           "too little traffic to judge")
    sa, sb = read_proc_softirqs(d + "/a.soft"), read_proc_softirqs(d + "/b.soft")
    netrx = 0
    for name, vec in (("NET_TX", NET_TX), ("NET_RX", NET_RX)):
        for cpu in range(min(h["nr_cpus"], len(sb[name]))):
            want = sb[name][cpu] - sa[name][cpu]
            got = hist.get((cpu, SLOT_SRUN + vec), (0,))[0]
            if vec == NET_RX:
                netrx += want
            check_count("%s softirq count cpu %d" % (name, cpu), got,
                        "/proc/softirqs", want, tol)
    result(netrx >= 100, "the window saw NET_RX softirqs (%d >= 100)" % netrx,
           "too little traffic to judge")


HANDLERS = ["irq_handler_entry", "irq_handler_exit", "softirq_raise",
            "softirq_entry", "softirq_exit", "napi_poll", "sched_switch",
            "sched_waking", "sched_wakeup", "netif_receive_skb",
            "comp_handler_entry", "comp_handler_return", "net_dev_start_xmit"]


def read_observer(path):
    """Parse an `observer` copy: ({(cpu, handler name): (hits, ns)}, problems)."""
    cells, bad = {}, []
    with open(path) as f:
        lines = f.read().splitlines()
    head = lines[0].split() if lines else []
    if head[:2] != ["#", "nr_cpus"] or head[3:5] != ["handlers", str(len(HANDLERS))]:
        bad.append("header %r" % (lines[:1],))
    for line in lines[1:]:
        if line.startswith("#"):
            continue
        p = line.split()
        if (len(p) != 5 or not p[1].isdigit() or int(p[1]) >= len(HANDLERS) or
                HANDLERS[int(p[1])] != p[2] or (int(p[0]), p[2]) in cells):
            bad.append("line %r" % line)
            continue
        cells[(int(p[0]), p[2])] = (int(p[3]), int(p[4]))
    return cells, bad


def per_cpu(cells, name):
    """{cpu: hits} of one handler."""
    return {c: v[0] for (c, n), v in cells.items() if n == name}


def cmd_observer(d, tol):
    """The module's own cost against the kernel's counters over the window.

    The probes count every tracepoint hit while tracing is on, for every
    IRQ and every softirq vector, so per CPU the irq_handler_entry hits are
    the window's /proc/interrupts delta over all numbered IRQs (one action
    per IRQ in the guests) and softirq_entry hits its /proc/softirqs delta
    over all vectors. The /proc reads bracket the traced window, so the
    module can never count more on any CPU (+2 for a read racing an event);
    it counts less by what came between a /proc read and `enable`/`disable`
    (an exec of cat over 9p, timer and RCU softirqs: up to ~130 events on
    one CPU in the lab), judged over all CPUs: 5 % of the delta plus tol.
    """
    cells, bad = read_observer(d + "/obs.1")
    result(not bad and cells, "observer file: one line per (cpu, handler), names match the ABI",
           "; ".join(bad[:3]))
    ia, ib = read_proc_interrupts(d + "/a.int"), read_proc_interrupts(d + "/b.int")
    sa, sb = read_proc_softirqs(d + "/a.soft"), read_proc_softirqs(d + "/b.soft")
    ent, ext = per_cpu(cells, "irq_handler_entry"), per_cpu(cells, "irq_handler_exit")
    sent, sext = per_cpu(cells, "softirq_entry"), per_cpu(cells, "softirq_exit")
    cpus = sorted(c for c in ent if any(cells[(c, n)][0] for n in HANDLERS)) or [0]
    tot = {"irq_handler": [0, 0], "softirq": [0, 0]}
    for cpu in cpus:
        want_irq = sum(v[cpu] - ia.get(irq, [0] * 64)[cpu] for irq, v in ib.items() if cpu < len(v))
        want_soft = sum(v[cpu] - sa[name][cpu] for name, v in sb.items() if cpu < len(v))
        for what, want, src, entry, leave in (
                ("irq_handler", want_irq, "/proc/interrupts", ent, ext),
                ("softirq", want_soft, "/proc/softirqs", sent, sext)):
            got = entry.get(cpu, 0)
            tot[what][0] += got
            tot[what][1] += want
            result(got <= want + 2,
                   "cpu %d: %s_entry hits %d <= %s delta %d (+2)" % (cpu, what, got, src, want),
                   "counted %d more than the kernel did" % (got - want))
            result(abs(got - leave.get(cpu, 0)) <= 1,
                   "cpu %d: %s_exit hits %d = entry hits %d (+-1 in flight)" % (cpu, what, leave.get(cpu, 0), got))
    for what, (got, want) in tot.items():
        slack = tol + want // 20
        result(want >= 500 and got >= want - slack,
               "all CPUs: %s_entry hits %d >= delta %d - %d (the edges; >= 500 events)" % (what, got, want, slack),
               "missed %d" % (want - got))
    timed = [(k, v) for k, v in cells.items() if v[0]]
    odd = [(k, v) for k, v in timed if not (0 < v[1] and v[1] / v[0] < 1e6)]
    result(timed and not odd, "every handler with hits took 0 < mean < 1 ms per hit (%d cells)" % len(timed),
           repr(odd[:3]))
    nrx = sum(v[0] for (c, n), v in cells.items() if n == "netif_receive_skb")
    result(nrx >= 100, "netif_receive_skb hits %d >= 100 (the window's RoCE and ping traffic)" % nrx)
    later, bad2 = read_observer(d + "/obs.2")
    result(not bad2 and later == cells, "nothing counted while tracing is off (traffic after disable)",
           "cells changed: %r" % [(k, cells.get(k), v) for k, v in later.items() if cells.get(k) != v][:3])
    zero, bad3 = read_observer(d + "/obs.3")
    result(not bad3 and zero and not any(v[0] or v[1] for v in zero.values()),
           "reset zeroes every cell")


def slot_of(rec, irqs):
    """Histogram slot a record belongs in, or None when its id is invalid."""
    st, rid = rec["stage"], rec["id"]
    if st in (S_HARDIRQ, S_COMP, S_THREAD):
        if rid not in irqs:
            return None
        base = {S_HARDIRQ: SLOT_HARDIRQ, S_COMP: SLOT_COMP, S_THREAD: SLOT_THREAD}[st]
        return base + irqs.index(rid)
    if st in (S_SWAIT, S_SRUN):
        if rid not in WATCHED_VECS:
            return None
        return (SLOT_SWAIT if st == S_SWAIT else SLOT_SRUN) + rid
    return {S_NAPI: SLOT_NAPI, S_WAKE: SLOT_WAKE, S_INTF: SLOT_INTF,
            S_PREEMPT: SLOT_PREEMPT}.get(st)


def read_records(path):
    """List of record dicts, in stream order, and the stray bytes. A record
    written once for two stages (F_INTF on HARDIRQ or SOFTIRQ_RUN) becomes
    the two, the flag clear and the INTERFERENCE copy marked twin=True, as
    the tool's reader hands them on; F_INTF on another stage stays (invalid)."""
    with open(path, "rb") as f:
        data = f.read()
    recs = []
    for off in range(0, len(data) - len(data) % REC_SIZE, REC_SIZE):
        s, e, cpu, st, fl, rid, aux = struct.unpack_from(REC_FMT, data, off)
        r = dict(start=s, end=e, cpu=cpu, stage=st, flags=fl, id=rid, aux=aux)
        recs.append(r)
        if fl & F_INTF and st in (S_HARDIRQ, S_SRUN):
            r["flags"] = fl & ~F_INTF
            recs.append(dict(r, stage=S_INTF, twin=True,
                             id=rid if st == S_HARDIRQ else SOFTIRQ_BASE + rid))
    return recs, len(data) % REC_SIZE


def written(recs):
    """Records as the module wrote them: twins count once."""
    return sum(1 for r in recs if not r.get("twin"))


def contains(outer, inner):
    """inner's interval lies within outer's."""
    return outer["start"] <= inner["start"] and inner["end"] <= outer["end"]


_starts = {}


def enclosing(runs, t):
    """The run (sorted by start, non-overlapping) with the latest start <= t."""
    c = _starts.get(id(runs))
    if c is None or c[0] is not runs:
        c = _starts[id(runs)] = (runs, [r["start"] for r in runs])
    i = bisect.bisect_right(c[1], t)
    return runs[i - 1] if i else None


def read_ctxsw(path):
    """voluntary and nonvoluntary context switches from a saved /proc/PID/status."""
    v = {}
    for l in open(path):
        k, _, x = l.partition(":")
        v[k.strip()] = x.strip()
    return int(v["voluntary_ctxt_switches"]), int(v["nonvoluntary_ctxt_switches"])


def cmd_records(d, rec_path, tasks, expect_nodrops, rt, ctxsw=False):
    """Sanity of every record, and records against histograms."""
    h, hist = read_hist(d + "/hist.bin")
    recs, tail = read_records(rec_path)
    result(tail == 0, "the records stream holds whole records", "%d stray bytes" % tail)
    result(len(recs) > 0, "records were read (%d)" % len(recs), "none")
    irqs = h["irqs"]
    bad, counts, last = [], {}, {}
    for i, r in enumerate(recs):
        why = None
        if r["end"] < r["start"]:
            why = "end < start"
        elif r["cpu"] >= h["nr_cpus"]:
            why = "cpu >= nr_cpu_ids"
        elif r["stage"] >= NR_STAGES:
            why = "bad stage"
        elif r["flags"] & ~(F_NESTED | F_THREAD | F_PREEMPTED):
            why = "unknown flags"
        elif r["flags"] & F_PREEMPTED and r["stage"] != S_PREEMPT:
            why = "PREEMPTED flag on a stage other than PREEMPT"
        elif r["stage"] == S_INTF:
            if r["id"] >= SOFTIRQ_BASE and r["id"] - SOFTIRQ_BASE >= NR_SOFTIRQS:
                why = "bad softirq interference id"
        elif r["stage"] in (S_WAKE, S_PREEMPT):
            if r["id"] not in tasks:
                why = "task id not named"
        elif r["stage"] in (S_RXPKT, S_TXPKT):
            if r["start"] != r["end"] or r["flags"] or r["id"] >= 1 << 24:
                why = "%s not an instant with a 24-bit QPN" % STAGE[r["stage"]]
        elif r["stage"] in (S_DELIVER, S_SEND):
            why = "a derived stage recorded"
        elif slot_of(r, irqs) is None:
            why = "id not valid for stage"
        if r["stage"] == S_SRUN and bool(r["flags"] & F_NESTED) != (r["aux"] > 0):
            why = "NESTED flag disagrees with aux"
        if r["cpu"] in last and r["end"] < last[r["cpu"]]:
            why = "out of time order on its CPU"
        last[r["cpu"]] = r["end"]
        if why:
            bad.append("#%d %s: %s" % (i, why, r))
        s = slot_of(r, irqs)
        if s is not None:
            counts[(r["cpu"], s)] = counts.get((r["cpu"], s), 0) + 1
    result(not bad, "every record valid (end>=start, cpu, stage, id, flags, per-CPU order)",
           "; ".join(bad[:5]) + (" (+%d more)" % (len(bad) - 5) if len(bad) > 5 else ""))
    nraw = written(recs)
    result(h["records"] == nraw,
           "hist header counts the records read (%d == %d, %d of them for two stages)"
           % (h["records"], nraw, len(recs) - nraw),
           "header %d, read %d" % (h["records"], nraw))
    # RX_PKT and TX_PKT records have no histogram: written = histogram
    # events written + packet instants written; drops may hold instants too
    # (then only bounds hold).
    hist_total = sum(v[0] for v in hist.values())
    rx = sum(1 for r in recs if r["stage"] in (S_RXPKT, S_TXPKT))
    # a record written for two stages is two histogram events
    twins = len(recs) - nraw
    result(h["records"] + twins <= hist_total + rx <= h["records"] + twins + 2 * h["drops"] and
           (h["drops"] or hist_total + rx == h["records"] + twins),
           "every histogram event was written or dropped (%d + %d RX_PKT/TX_PKT vs %d + %d twins + %d)"
           % (hist_total, rx, h["records"], twins, h["drops"]), "mismatch")
    badb = ["cpu %d slot %d: buckets %d count %d" % (k[0], k[1], sum(v[3]), v[0])
            for k, v in sorted(hist.items()) if sum(v[3]) != v[0]]
    result(not badb, "every histogram's buckets sum to its count (%d histograms)" % len(hist),
           "; ".join(badb[:5]))
    if expect_nodrops:
        result(h["drops"] == 0, "no drops with a large ring and a reader", "%d drops" % h["drops"])
    if h["drops"] == 0:
        mism = ["cpu %d slot %d: hist %d records %d" % (k[0], k[1], hist.get(k, (0,))[0],
                                                       counts.get(k, 0))
                for k in set(hist) | set(counts) if hist.get(k, (0,))[0] != counts.get(k, 0)]
        result(not mism, "histogram counts equal record counts per CPU and slot",
               "; ".join(mism[:6]))
    # Structure: NAPI polls inside their NET_RX run, first poll starts at entry,
    # completions end with a poll, nested hardirqs counted in aux.
    by_cpu = {}
    for r in recs:
        by_cpu.setdefault(r["cpu"], []).append(r)
    napi_out, napi_first, comp_nopoll, nest_bad, n_nested = 0, 0, 0, 0, 0
    for cpu, rs in by_cpu.items():
        runs = sorted((r for r in rs if r["stage"] == S_SRUN and r["id"] == NET_RX),
                      key=lambda r: r["start"])
        allruns = sorted((r for r in rs if r["stage"] == S_SRUN), key=lambda r: r["start"])
        polls = [r for r in rs if r["stage"] == S_NAPI]
        poll_ends = {r["end"] for r in polls}
        first_poll = {}
        for p in polls:
            r = enclosing(runs, p["start"])
            if r is None or not contains(r, p):
                napi_out += 1
            elif p["start"] < first_poll.get(id(r), (1 << 64, None))[0]:
                first_poll[id(r)] = (p["start"], r)
        napi_first = sum(1 for st, r in first_poll.values() if st != r["start"])
        nested = {}
        for x in (r for r in rs if r["stage"] == S_HARDIRQ):
            r = enclosing(allruns, x["start"])
            if r is not None and contains(r, x):
                nested[id(r)] = nested.get(id(r), 0) + 1
                n_nested += 1
        nest_bad += sum(1 for r in allruns if nested.get(id(r), 0) > r["aux"])
        for c in (r for r in rs if r["stage"] == S_COMP):
            r = enclosing(runs, c["end"])
            if r is not None and r["start"] <= c["end"] <= r["end"] and \
                    c["end"] not in poll_ends:
                comp_nopoll += 1
    if len(recs) and h["drops"] == 0:
        result(napi_out == 0, "every NAPI_POLL lies inside a NET_RX run on its CPU",
               "%d outside" % napi_out)
        result(napi_first == 0, "the first poll of a NET_RX run starts at softirq entry",
               "%d runs differ" % napi_first)
        result(comp_nopoll == 0, "every COMPLETION inside a NET_RX run ends with a NAPI poll",
               "%d without" % comp_nopoll)
        result(nest_bad == 0, "SOFTIRQ_RUN aux counts its nested hardirqs (%d seen nested)"
               % n_nested, "%d runs undercount" % nest_bad)
    if tasks:
        wk = [r for r in recs if r["stage"] == S_WAKE]
        pre = {(r["cpu"], r["end"], r["id"]): r for r in recs if r["stage"] == S_PREEMPT}
        result(len(pre) > 0, "PREEMPT records for the named task (%d)" % len(pre), "none")
        if h["flags"] & 4:
            result(len(wk) > 0, "WAKEUP records for the named task (%d)" % len(wk),
                   "none although the ib_uverbs hook is armed")
            # A woken task waits for a CPU from its wakeup, which the handler
            # precedes; one preempted before the handler woke it waits from
            # the preemption (LS_REC_F_PREEMPTED), before or after the entry.
            pairs = [(r, pre.get((r["cpu"], r["end"], r["id"]))) for r in wk]
            odd = [w for w, p in pairs if p is None]
            late = [(w, p) for w, p in pairs if p is not None and
                    not p["flags"] & F_PREEMPTED and p["start"] < w["start"]]
            result(not odd, "each WAKEUP (comp handler -> running) ends with a PREEMPT "
                   "(runnable -> running) of its task on its CPU",
                   "%d do not, e.g. %s" % (len(odd), odd[:2]))
            result(not late, "a PREEMPT begun at a wakeup starts no earlier than the "
                   "WAKEUP ending with it", "%d do not, e.g. %s" % (len(late), late[:2]))
        else:
            print("# ib_uverbs hook not armed: WAKEUP not checked")
        if ctxsw and len(tasks) == 1:
            # The kernel's own counters over a window that contains the
            # enabled one (read just before enable and just after disable,
            # while the task sleeps): each switch-out runnable is one
            # PREEMPTED record, each sleep one woken PREEMPT. At the edges:
            # the last switch-out, if its switch-in came after disable, and
            # one in the read -> enable and disable -> read gaps (-2); a
            # sleep begun before the first read that ends inside (+1).
            (v0, n0), (v1, n1) = read_ctxsw(d + "/cs.0"), read_ctxsw(d + "/cs.1")
            mine = [r for r in recs if r["stage"] == S_PREEMPT and r["id"] == tasks[0]]
            npre = sum(1 for r in mine if r["flags"] & F_PREEMPTED)
            nwoke = len(mine) - npre
            result(n1 - n0 - 2 <= npre <= n1 - n0 and v1 - v0 - 2 <= nwoke <= v1 - v0 + 1
                   and n1 - n0 + v1 - v0 >= 50,
                   "PREEMPT records by cause match the task's context-switch deltas "
                   "(preempted %d, nonvoluntary %d; woken %d, voluntary %d)"
                   % (npre, n1 - n0, nwoke, v1 - v0), "outside the edge tolerance "
                   "or fewer than 50 switches")
    thr = sum(1 for r in recs if r["stage"] == S_THREAD)
    hard_n = sum(1 for r in recs if r["stage"] == S_HARDIRQ)
    if rt is None:
        pass
    elif rt:
        result(thr > 0 and thr <= hard_n,
               "PREEMPT_RT: IRQ_THREAD records (%d) exist, at most one per hardirq (%d)"
               % (thr, hard_n), "irq_thread %d hardirq %d" % (thr, hard_n))
        result(all(r["flags"] & F_THREAD for r in recs if r["stage"] in (S_SRUN, S_SWAIT)),
               "PREEMPT_RT: softirq records carry the thread flag", "some do not")
    else:
        result(thr == 0, "no IRQ_THREAD records without threaded IRQs", "%d" % thr)


def cmd_poll_check():
    """poll()/read() semantics of `records` while enabled and after disable."""
    import select
    import threading
    fd = os.open(D + "/records", os.O_RDONLY | os.O_NONBLOCK)
    try:
        try:
            os.open(D + "/records", os.O_RDONLY)
            result(False, "a second reader is refused", "second open succeeded")
        except OSError as e:
            result(e.errno == errno.EBUSY, "a second reader is refused (EBUSY)",
                   errno.errorcode.get(e.errno))
        try:
            os.read(fd, REC_SIZE - 1)
            result(False, "a read shorter than one record fails", "succeeded")
        except OSError as e:
            result(e.errno == errno.EINVAL, "a read shorter than one record fails (EINVAL)",
                   errno.errorcode.get(e.errno))
        e = control("ring 8")
        result(e == errno.EBUSY, "resizing the ring under an open reader is refused (EBUSY)",
               errno.errorcode.get(e, "OK"))
        result(control("enable") == 0, "enable", "")
        p = select.poll()
        p.register(fd, select.POLLIN)
        ev = p.poll(10000)
        result(ev and ev[0][1] & select.POLLIN, "poll() reports records once a ring is a quarter full",
               str(ev))
        n = len(os.read(fd, 64 * REC_SIZE))
        result(n > 0 and n % REC_SIZE == 0, "read() returns whole records (%d bytes)" % n, "")
    finally:
        os.close(fd)
    # A reader blocked in read() is woken by `disable` and sees end of file.
    fd = os.open(D + "/records", os.O_RDONLY)
    got = []

    def reader():
        while True:
            b = os.read(fd, 4096 * REC_SIZE)
            got.append(len(b))
            if not b:
                return
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(1.0)
    control("disable")
    t.join(20.0)
    result(not t.is_alive() and got and got[-1] == 0,
           "disable wakes a blocked reader, which drains and gets end of file", str(got[-5:]))
    p = select.poll()
    p.register(fd, select.POLLIN)
    ev = p.poll(2000)
    result(ev and ev[0][1] & select.POLLHUP, "poll() reports HUP when disabled", str(ev))
    os.close(fd)


def read_config():
    """The config file's text."""
    with open(D + "/config") as f:
        return f.read()


def cmd_bad_inputs(nic_irq):
    """Every malformed control write is refused with its errno; nothing changes."""
    live = read_proc_interrupts("/proc/interrupts")
    unused = next(i for i in range(1, 1000) if i not in live)
    ncpu = os.cpu_count()
    cases = [
        (b"irqs 99999", errno.EINVAL), (b"irqs 5000000000", errno.EINVAL),
        (b"irqs -1", errno.EINVAL), (b"irqs abc", errno.EINVAL),
        (b"irqs ", errno.EINVAL), (b"irqs", errno.EINVAL), (b"irqs 1,,2", errno.EINVAL),
        (b"irqs %d" % unused, errno.EINVAL),
        (b"irqs %d,%d" % (nic_irq, nic_irq), errno.EINVAL),
        (b"irqs " + b",".join(b"%d" % i for i in range(33)), errno.EINVAL),
        (b"cpus %d" % ncpu, errno.EINVAL), (b"cpus 300", errno.EINVAL),
        (b"cpus 0-", errno.EINVAL), (b"cpus abc", errno.EINVAL), (b"cpus ", errno.EINVAL),
        (b"cpus 0-9999", errno.EINVAL),
        (b"tasks 999999", errno.EINVAL), (b"tasks 0", errno.EINVAL),
        (b"tasks abc", errno.EINVAL), (b"tasks 1,1", errno.EINVAL),
        (b"tasks " + b",".join(b"1" for _ in range(17)), errno.EINVAL),
        (b"ring 65537", errno.EINVAL), (b"ring -1", errno.EINVAL), (b"ring x", errno.EINVAL),
        (b"ring", errno.EINVAL), (b"enable now", errno.EINVAL), (b"reset 1", errno.EINVAL),
        (b"hist", errno.EINVAL), (b"hist maybe", errno.EINVAL), (b"hist OFF", errno.EINVAL),
        (b"hist off on", errno.EINVAL), (b"hist 0", errno.EINVAL),
        (b"ring 0\nhist off", errno.EINVAL), (b"hist off\nring 0", errno.EINVAL),
        (b"frobnicate", errno.EINVAL), (b"\x00", errno.EINVAL),
        (b"irqs %d\x00cpus 0" % nic_irq, errno.EINVAL),
        (b"\xff\xfe\x01garbage", errno.EINVAL), (b"", errno.EINVAL),
        (b"x" * 5000, errno.E2BIG), (b"cpus 0\n" * 1000, errno.E2BIG),
        (b"cpus 0\nring 8\nirqs 99999\nenable\n", errno.EINVAL),
    ]
    before = read_config()
    for text, want in cases:
        e = control(text)
        shown = repr(text if len(text) < 40 else text[:30] + b"...")
        after = read_config()
        result(e == want and after == before,
               "control %s refused with %s, config unchanged"
               % (shown, errno.errorcode[want]),
               "got %s; config %s" % (errno.errorcode.get(e, "OK"),
                                       "unchanged" if after == before else "CHANGED:\n" + after))


def cmd_concurrent(writers, rounds):
    """Writers race on control: each write is applied whole or refused with EBUSY."""
    r, w = os.pipe()
    pids = []
    for k in range(writers):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            errs = {}
            for i in range(rounds):
                a = (k + i) % 2
                e = control(b"cpus %d\nring %d\n" % (a, 4 + 4 * a))
                errs[e] = errs.get(e, 0) + 1
                c = read_config()
                ok = ("cpus 0\n" in c and "ring_kib 4\n" in c) or \
                     ("cpus 1\n" in c and "ring_kib 8\n" in c)
                if not ok:
                    errs[-1] = errs.get(-1, 0) + 1
            os.write(w, (json.dumps(errs) + "\n").encode())
            os._exit(0)
        pids.append(pid)
    os.close(w)
    data = b""
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        data += b
    for pid in pids:
        os.waitpid(pid, 0)
    tot = {}
    for line in data.decode().splitlines():
        for k, v in json.loads(line).items():
            tot[int(k)] = tot.get(int(k), 0) + v
    result(set(tot) <= {0, errno.EBUSY},
           "concurrent writers: only success or EBUSY", str(tot))
    result(tot.get(errno.EBUSY, 0) > 0 and tot.get(0, 0) > 0,
           "concurrent writers: some writes collided (EBUSY %d, ok %d)"
           % (tot.get(errno.EBUSY, 0), tot.get(0, 0)), str(tot))
    result(tot.get(-1, 0) == 0, "concurrent writers: config always whole (cpus and ring agree)",
           "%d torn reads" % tot.get(-1, 0))


def config_map():
    """The module's config as {key: value}."""
    return dict(line.split(" ", 1) for line in read_config().splitlines() if " " in line)


def write_fd(fd, text):
    """write() text on an open control fd; errno or 0."""
    try:
        os.write(fd, text.encode())
        return 0
    except OSError as e:
        return e.errno


def cmd_owner():
    """The file that wrote `own` owns the module: other writers get EBUSY,
    config names the owner; its release disables tracing and frees the
    rings, after the records reader if one is still open."""
    online = sum(1 for c in range(os.cpu_count() or 1)
                 if c == 0 or open("/sys/devices/system/cpu/cpu%d/online" % c).read().strip() == "1")
    c = config_map()
    result(c.get("owner") == "none", "unowned to begin with", str(c.get("owner")))
    a = os.open(D + "/control", os.O_WRONLY)
    b = os.open(D + "/control", os.O_WRONLY)
    result(write_fd(a, "own") == 0, "own: accepted")
    result(write_fd(a, "own") == 0, "own again by the owner: accepted")
    result(config_map().get("owner") == str(os.getpid()), "config names the owner's pid",
           str(config_map().get("owner")))
    before = read_config()
    e1, e2 = write_fd(b, "disable"), write_fd(b, "own")
    result(e1 == errno.EBUSY and e2 == errno.EBUSY, "another open file: disable and own refused with EBUSY",
           "%s, %s" % (errno.errorcode.get(e1, e1), errno.errorcode.get(e2, e2)))
    e3 = control("reset")
    result(e3 == errno.EBUSY, "a fresh writer: refused with EBUSY", errno.errorcode.get(e3, str(e3)))
    result(read_config() == before, "config unchanged by the refused writes")
    result(write_fd(a, "ring 16\nhist off\nenable") == 0, "the owner configures: ring 16, hist off, enable")
    c = config_map()
    result(c.get("enabled") == "1" and c.get("ring_kib") == "16" and c.get("rings") == str(online),
           "enabled with a ring on each of the %d online CPUs" % online, str(c))
    r = os.open(D + "/records", os.O_RDONLY | os.O_NONBLOCK)
    os.close(a)
    c = config_map()
    result(c.get("owner") == "none" and c.get("enabled") == "0",
           "owner closed: tracing off, unowned", str(c))
    result(c.get("ring_kib") == "16" and c.get("rings") == str(online),
           "rings kept while the reader has records open", str(c))
    n = 0
    while True:
        try:
            got = os.read(r, REC_SIZE * 256)
        except BlockingIOError:
            got = None
        if not got:
            break
        n += len(got) // REC_SIZE
    os.close(r)
    c = config_map()
    result(c.get("ring_kib") == "0" and c.get("rings") == "0" and c.get("hist") == "on",
           "reader closed (%d records drained): rings freed, histograms back on" % n, str(c))
    result(write_fd(b, "disable") == 0, "unowned again: any writer is accepted")
    a = os.open(D + "/control", os.O_WRONLY)
    result(write_fd(a, "own\nring 8\nenable") == 0, "own, ring 8, enable in one write")
    os.close(a)
    c = config_map()
    result(c.get("owner") == "none" and c.get("enabled") == "0" and c.get("ring_kib") == "0"
           and c.get("rings") == "0", "owner closed without a reader: off, rings freed at once", str(c))
    os.close(b)


def cmd_nohist(d, rec_path, on_path):
    """`hist off`: the records flow as with histograms, none is counted, the
    header says so; `hist on` again counts (DIR/hist.bin off, ON_PATH on)."""
    h, hist = read_hist(d + "/hist.bin")
    recs, tail = read_records(rec_path)
    result(h["size_ok"] and h["flags"] & HDR_F_NO_HIST,
           "hist off: the hist header has LS_HDR_F_NO_HIST (flags %#x)" % h["flags"])
    result(h["size_ok"] and not hist, "hist off: no histogram counted an event",
           "%d non-empty, e.g. %r" % (len(hist), sorted(hist)[:3]))
    stages = {r["stage"] for r in recs}
    result(not tail and h["records"] == written(recs) and h["drops"] == 0 and len(recs) >= 300 and
           {S_HARDIRQ, S_SRUN, S_NAPI} <= stages,
           "hist off: %d records written, %d read, no drops, HARDIRQ/SOFTIRQ_RUN/NAPI_POLL among them"
           % (h["records"], written(recs)), "drops %d, stages %s" % (h["drops"], sorted(stages)))
    h2, hist2 = read_hist(on_path)
    n = sum(v[0] for v in hist2.values())
    result(h2["size_ok"] and not h2["flags"] & HDR_F_NO_HIST and n >= 100,
           "hist on again: the header flag is gone and the histograms count (%d events)" % n,
           "flags %#x" % h2["flags"])


def cmd_inert(d):
    """The A/A control: with inert=Y an enabled module counts, records and
    times nothing while its NIC IRQs fire (/proc/interrupts in DIR/a.int.Y
    and b.int.Y around the window, hist.Y, obs.Y); with inert=N the same
    traffic is counted (the .N files)."""
    for v in ("Y", "N"):
        h, hist = read_hist("%s/hist.%s" % (d, v))
        cells, bad = read_observer("%s/obs.%s" % (d, v))
        a = read_proc_interrupts("%s/a.int.%s" % (d, v))
        b = read_proc_interrupts("%s/b.int.%s" % (d, v))
        irqs = sum(sum(b.get(i, [])) - sum(a.get(i, [])) for i in h["irqs"])
        n = sum(c[0] for c in hist.values())
        hits = sum(c[0] for c in cells.values())
        if v == "Y":
            result(h["size_ok"] and not bad and irqs >= 100 and n == 0 and hits == 0 and h["records"] == 0,
                   "inert=Y: %d NIC interrupts, no histogram event, no record, no observer hit" % irqs,
                   "%d events, %d records, %d hits%s" % (n, h["records"], hits, "; " + bad[0] if bad else ""))
        else:
            result(h["size_ok"] and not bad and irqs >= 100 and n >= irqs and hits >= irqs,
                   "inert=N: %d NIC interrupts, %d histogram events and %d observer hits" % (irqs, n, hits),
                   "%s" % (bad[0] if bad else ""))


def cmd_hist(path):
    """Print a JSON summary of a hist file."""
    h, hist = read_hist(path)
    h["slots"] = {"%d:%d" % k: {"count": v[0], "sum_ns": v[1], "max_ns": v[2]}
                  for k, v in sorted(hist.items())}
    print(json.dumps(h))


def main(argv):
    """Dispatch the subcommand."""
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "nic-irqs":
        cmd_nic_irqs(args[0])
    elif cmd == "window-start":
        cmd_window_start(args[0])
    elif cmd == "window-end":
        cmd_window_end(args[0])
    elif cmd == "oracle":
        tol = int(args[args.index("--tol") + 1]) if "--tol" in args else 0
        cmd_oracle(args[0], tol)
    elif cmd == "inert":
        cmd_inert(args[0])
    elif cmd == "observer":
        cmd_observer(args[0], int(args[args.index("--tol") + 1]) if "--tol" in args else 0)
    elif cmd == "records":
        tasks = []
        if "--tasks" in args:
            tasks = [int(x) for x in args[args.index("--tasks") + 1].split(",") if x]
        rt = None
        if "--rt" in args:
            rt = args[args.index("--rt") + 1] == "yes"
        cmd_records(args[0], args[1], tasks, "--expect-nodrops" in args, rt,
                    "--ctxsw" in args)
    elif cmd == "hist":
        cmd_hist(args[0])
    elif cmd == "nohist":
        cmd_nohist(args[0], args[1], args[2])
    elif cmd == "poll-check":
        cmd_poll_check()
    elif cmd == "bad-inputs":
        cmd_bad_inputs(int(args[0]))
    elif cmd == "concurrent":
        cmd_concurrent(int(args[0]), int(args[1]))
    elif cmd == "owner":
        cmd_owner()
    elif cmd == "write":
        e = control(args[0].encode().decode("unicode_escape"))
        print(errno.errorcode[e] if e else "OK")
    else:
        raise SystemExit("unknown subcommand %s" % cmd)
    return status()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
