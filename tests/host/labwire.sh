#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# labwire (tools/lab/labwire.c), the lab's wire, on the host alone: two
# python3 UDP endpoints on 127.0.0.1 play node0 and node1 and send synthetic
# Ethernet/IPv4/IPv6/UDP/BTH frames through it. Assertions are against the
# wire's own per-frame log, its counters and what the endpoints receive
# (bytes, order, CLOCK_MONOTONIC receive times); timing bounds are loose
# (a loaded 2-core host), except where the wire computes a schedule (the
# serialization spacing of due_ns, exact). The measured precision (delay
# error and the wire's own added latency, p50/p99) goes to the diagnostics.
# LABWIRE_SPIN=NS runs the wire with --spin NS (default: the wire's own).
. "$(dirname "$0")/../lib.sh"

WIRE=$LS_TOP/build/lab/labwire
[ -x "$WIRE" ] || skip_all "$WIRE not built (make lab)"
command -v python3 >/dev/null || skip_all "python3 missing (it plays the two guests)"

T=$(mktemp -d)
FG_PID=
# Stop what this script started (by pid) and remove the scratch directory.
cleanup() {
	[ -n "$FG_PID" ] && kill "$FG_PID" 2>/dev/null
	[ -s "$T/pid" ] && kill "$(cat "$T/pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

plan_none

# Four free UDP ports on 127.0.0.1 (held at once, so they are distinct).
read -r PA PAP PB PBP < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')

# ---- bad run options: exit 2 with a message --------------------------------
# run_bad DESC WORDS...: `labwire WORDS` exits 2 and says something.
run_bad() {
	local desc=$1 out rc; shift
	out=$("$WIRE" "$@" 2>&1); rc=$?
	if [ "$rc" = 2 ] && [[ "$out" == labwire:* ]]; then ok "$desc"; else not_ok "$desc" "rc=$rc: $out"; fi
}
run_bad "run without --ctl is a usage error" run --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP"
run_bad "port 0 is refused" run --a 0 --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/c"
run_bad "port 70000 is refused" run --a 70000 --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/c"
run_bad "a port that is not a number is refused" run --a 12x --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/c"
run_bad "the same port twice is refused" run --a "$PA" --a-peer "$PA" --b "$PB" --b-peer "$PBP" --ctl "$T/c"
run_bad "an unknown option is refused" run --frobnicate --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/c"
run_bad "an option without its value is refused" run --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl
run_bad "no subcommand is a usage error" frobnicate
[ ! -e "$T/c" ] && ok "refused runs leave no control socket" || not_ok "refused runs leave no control socket"

# ---- start the wire as a daemon --------------------------------------------
out=$("$WIRE" run --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/ctl" \
	--log "$T/start.log" --pidfile "$T/pid" --daemon ${LABWIRE_SPIN:+--spin "$LABWIRE_SPIN"} 2>&1); rc=$?
if [ "$rc" = 0 ] && [ -s "$T/pid" ] && kill -0 "$(cat "$T/pid")" 2>/dev/null &&
	"$WIRE" ctl "$T/ctl" ping >/dev/null; then
	ok "--daemon returns once the pidfile is written and the wire answers"
else
	not_ok "--daemon start" "rc=$rc: $out" "$(cat "$T/start.log.err" 2>/dev/null)"
	done_testing
fi
mode=$(stat -c %a "$T/ctl")
[ "$mode" = 600 ] && ok "control socket has mode 0600" || not_ok "control socket mode" "mode $mode"
diag "$(head -1 "$T/start.log")"
out=$("$WIRE" run --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/ctl-x" 2>&1); rc=$?
[ "$rc" = 1 ] && [[ "$out" == *"bind 127.0.0.1:$PA"* ]] && [ ! -e "$T/ctl-x" ] &&
	ok "a port in use: exit 1 naming the address" || not_ok "a port in use" "rc=$rc: $out"
out=$("$WIRE" run --a "$PAP" --a-peer "$PA" --b "$PBP" --b-peer "$PB" --ctl "$T/ctl" 2>&1); rc=$?
[ "$rc" = 1 ] && [[ "$out" == *"a running wire answers"* ]] &&
	ok "a control socket in use is not taken over" || not_ok "control socket in use" "rc=$rc: $out"

# ---- bad control commands: "error:", exit 1, nothing changes ---------------
bad_cmds=(
	"rule xy 0 delay=1" "rule ab 8 delay=1" "rule ab 0 delay=abc" "rule ab 0 delay=-5"
	"rule ab 0 foo=1" "rule ab 0 op=write" "rule ab 0 psn=3" "rule ab 0 dscp=64"
	"rule ab 0 loss=1000001" "rule ab 0 every=0" "rule ab 0 delay" "rule ab"
	"rule ab 0 roce=1 delay=5 foo=1" "norule ab 9" "link ab rate=-1" "link ab speed=5"
	"link ab" "class ab 8 limit=1" "class ab 0 colour=1" "class ab 0"
	"class ab 0 limit=99999999999" "dscp ab 64=1" "dscp ab 1=8" "dscp ab 1=1,x"
	"dscp ab" "log /nonexistent-dir-$$/x" "stats now" "bogus" "ping pong"
	"flow ab class=0" "flow ab" "flow xy off" "flow ab class=8" "flow ab block=1000"
	"flow ab class=0 frame=10" "flow ab class=0 depth=0" "flow ab class=0 colour=1"
	"flow ab class=0 spread=101"
)
fails=()
for c in "${bad_cmds[@]}"; do
	# shellcheck disable=SC2086
	out=$("$WIRE" ctl "$T/ctl" $c 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ "$out" == "error: "* ]] || fails+=("'$c' -> rc=$rc: $out")
done
[ ${#fails[@]} = 0 ] && ok "${#bad_cmds[@]} bad control commands: 'error: ...' and exit 1" ||
	not_ok "bad control commands" "${fails[@]}"
out=$("$WIRE" ctl "$T/ctl" stats)
[[ "$out" == *'"ab":{'* ]] && [[ "$out" != *'"index":'* ]] && [[ "$out" == *'"rate_bps":0'* ]] &&
	[[ "$out" == *'"dscp_map":[0,0,'* ]] && [[ "$out" != *'"on":true'* ]] &&
	ok "rejected commands changed nothing (no rule, no rate, default DSCP map)" ||
	not_ok "rejected commands changed nothing" "$out"
out=$(printf 'ping\n' | python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])
s.sendall(b"x" * 5000); print(s.recv(200).decode())' "$T/ctl" 2>&1)
[[ "$out" == "error: command longer"* ]] && ok "an overlong command line is refused" ||
	not_ok "overlong command line" "$out"
out=$("$WIRE" ctl "$T/nonexistent" ping 2>&1); rc=$?
[ "$rc" = 1 ] && [[ "$out" == *"connect $T/nonexistent"* ]] &&
	ok "ctl to a missing socket: exit 1 naming it" || not_ok "ctl to a missing socket" "rc=$rc: $out"

# ---- traffic: python3 plays node0 and node1 ---------------------------------
cat > "$T/drive.py" <<'EOF'
import json, os, random, socket, struct, subprocess, sys, threading, time, traceback

WIRE, CTL, TMP = sys.argv[1:4]
A, A_PEER, B, B_PEER = map(int, sys.argv[4:8])
sys.setswitchinterval(0.0001)

def emit(kind, desc, *diag):
    d = " | ".join(str(x).replace("\n", " | ").replace("\t", " ") for x in diag)
    print("%s\t%s\t%s" % (kind, desc, d), flush=True)

def ok(desc): emit("OK", desc)
def diag(text): emit("DIAG", text)
def check(cond, desc, *d):
    # a miss says how busy the host was (a timing bound's first suspect)
    load = "host load %.2f %.2f %.2f" % os.getloadavg()
    emit("OK" if cond else "NOK", desc, *([] if cond else list(d) + [load]))
    return cond

def ctl(*words):
    r = subprocess.run([WIRE, "ctl", CTL] + list(words), capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout + r.stderr

def must(*words):
    rc, out = ctl(*words)
    if rc != 0:
        raise RuntimeError("labwire ctl %s: rc=%d %s" % (" ".join(words), rc, out))
    return out

def stats():
    return json.loads(must("stats"))

# ---- frames
MAC0, MAC1 = bytes.fromhex("525400000001"), bytes.fromhex("525400000002")

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def eth(payload, et=0x0800, vlan=None):
    tag = struct.pack("!HH", 0x8100, vlan) if vlan is not None else b""
    return MAC1 + MAC0 + tag + struct.pack("!H", et) + payload

def ipv4(payload, proto=17, tos=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                    bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload

def ipv6(payload, nh=17, tc=0):
    a = b"\xfe\x80" + b"\0" * 13
    return struct.pack("!IHBB16s16s", (6 << 28) | (tc << 20), len(payload), nh, 64,
                       a + b"\x01", a + b"\x02") + payload

def udp(payload, dport, sport=0xc000):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload

def bth(op, dqpn, psn):
    return struct.pack("!BBHII", op, 0x40, 0xffff, dqpn & 0xffffff, psn & 0xffffff)

def roce(op, psn, dqpn, tag, tos=0, size=0, vlan=None, v6=False):
    body = bth(op, dqpn, psn) + struct.pack("!Q", tag)
    hdr = 14 + (4 if vlan is not None else 0) + (40 if v6 else 20) + 8 + 4
    body += b"\0" * max(0, size - hdr - len(body))
    body = udp(body + b"\0\0\0\0", 4791)
    if v6:
        return eth(ipv6(body, tc=tos), 0x86dd, vlan)
    return eth(ipv4(body, tos=tos), 0x0800, vlan)

def plain_udp(tag, dport=5000, tos=0, size=0):
    body = struct.pack("!Q", tag)
    body += b"\0" * max(0, size - 14 - 20 - 8 - len(body))
    return eth(ipv4(udp(body, dport), tos=tos))

# ---- endpoints
class Rx(threading.Thread):
    """Receives on one endpoint socket, keeping (CLOCK_MONOTONIC ns, bytes)."""
    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock, self.items, self.lock, self.stop = sock, [], threading.Lock(), False
    def run(self):
        while not self.stop:
            try:
                d = self.sock.recv(70000)
            except socket.timeout:
                continue
            t = time.monotonic_ns()
            with self.lock:
                self.items.append((t, d))
    def take(self, n=None, quiet=0.3, timeout=5.0):
        """Wait for n frames (or for quiet seconds without one) and return them."""
        end, last, seen = time.time() + timeout, time.time(), -1
        while time.time() < end:
            with self.lock:
                k = len(self.items)
            if n is not None and k >= n:
                break
            if k != seen:
                seen, last = k, time.time()
            elif n is None and time.time() - last >= quiet:
                break
            time.sleep(0.002)
        time.sleep(0.02 if n is not None else 0)
        with self.lock:
            x, self.items = self.items, []
        return x

def endpoint(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("127.0.0.1", port))
    s.settimeout(0.05)
    return s

n0, n1 = endpoint(A_PEER), endpoint(B_PEER)
rx0, rx1 = Rx(n0), Rx(n1)
rx0.start(); rx1.start()

def send(direction, frame):
    """Send one frame into the wire; the CLOCK_MONOTONIC time just before."""
    t = time.monotonic_ns()
    if direction == "ab":
        n0.sendto(frame, ("127.0.0.1", A))
    else:
        n1.sendto(frame, ("127.0.0.1", B))
    return t

def rx_of(direction):
    return rx1 if direction == "ab" else rx0

# ---- the wire's log
INTS = ("seq arrive_ns due_ns depart_ns len class roce psn dqpn dscp ecn_in ecn_out rule "
        "delay_ns ser_ns dport").split()

def start_log(name):
    path = os.path.join(TMP, name)
    must("log", path)
    must("reset")
    return path

def read_log(path):
    must("flush")
    cols, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("# seq "):
                cols = line[2:].split()
                continue
            if line.startswith("#"):
                continue
            r = dict(zip(cols, line.split()))
            for k in INTS:
                r[k] = int(r[k])
            r["opcode"] = -1 if r["opcode"] == "-1" else int(r["opcode"], 16)
            rows.append(r)
    return rows

def by_dir(rows, d):
    return sorted((r for r in rows if r["dir"] == d), key=lambda r: r["seq"])

def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(q * len(v) + 0.999999) - 1))]

def us(ns):
    return "%.1f us" % (ns / 1000.0)

def counts_match(name, rows, st):
    """The counters equal the log's line counts, per direction."""
    bad = []
    for d in ("ab", "ba"):
        rs = [r for r in rows if r["dir"] == d]
        want = {"rx_frames": len(rs), "tx_frames": sum(r["action"] == "fwd" for r in rs),
                "lost": sum(r["action"] == "loss" for r in rs),
                "dropped": sum(r["action"] == "drop" for r in rs),
                "ce_marked": sum(r["ecn_out"] == 3 and r["ecn_in"] != 3 for r in rs),
                "delayed": sum(r["delay_ns"] > 0 for r in rs)}
        for k, v in want.items():
            if st[d][k] != v:
                bad.append("%s %s: counter %d, log %d" % (d, k, st[d][k], v))
        if st[d]["inflight"] != 0:
            bad.append("%s: %d frames still in flight" % (d, st[d]["inflight"]))
    check(not bad, "%s: counters match the log line counts exactly" % name, *bad)

# ---- scenarios
def s_forward():
    path = start_log("fwd.log")
    sent = {"ab": [], "ba": []}
    want = {"ab": [], "ba": []}
    tag = 0
    for d in ("ab", "ba"):
        for i in range(6):
            tag += 1
            op = [0x04, 0x0a, 0x10, 0x11, 0x12, 0x64][i]
            sent[d].append(roce(op, 1000 + i, 0x1234 + i, tag, tos=(26 << 2) | 2))
            want[d].append(dict(roce=1, opcode=op, psn=1000 + i, dqpn=0x1234 + i, dscp=26,
                                ecn_in=2, kind="roce", dport=4791))
        tag += 1
        sent[d].append(roce(0x11, 77, 0xabcdef, tag, vlan=5))
        want[d].append(dict(roce=1, opcode=0x11, psn=77, dqpn=0xabcdef, kind="roce"))
        tag += 1
        sent[d].append(roce(0x0a, 0xfffffe, 9, tag, v6=True, tos=0x2e << 2))
        want[d].append(dict(roce=1, opcode=0x0a, psn=0xfffffe, dqpn=9, dscp=0x2e, kind="roce"))
        tag += 1
        sent[d].append(plain_udp(tag, dport=5001, tos=8 << 2))
        want[d].append(dict(roce=0, opcode=-1, psn=-1, dqpn=-1, dscp=8, kind="udp", dport=5001))
        tag += 1
        sent[d].append(eth(ipv4(b"\x08\x00" + b"\0" * 30, proto=1)))
        want[d].append(dict(roce=0, opcode=-1, psn=-1, dqpn=-1, kind="ip", dport=-1))
        tag += 1
        sent[d].append(eth(b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\0" * 20, 0x0806))
        want[d].append(dict(roce=0, opcode=-1, psn=-1, dqpn=-1, kind="other", dport=-1))
    for i in range(len(sent["ab"])):
        for d in ("ab", "ba"):
            send(d, sent[d][i])
            time.sleep(0.0002)
    got = {d: [x[1] for x in rx_of(d).take(len(sent[d]))] for d in ("ab", "ba")}
    for d in ("ab", "ba"):
        check(got[d] == sent[d], "forward %s: %d frames arrive byte-exact, in order" %
              (d, len(sent[d])), "got %d frames" % len(got[d]))
    rows = read_log(path)
    for d in ("ab", "ba"):
        rs, bad = by_dir(rows, d), []
        if [r["seq"] for r in rs] != list(range(len(sent[d]))):
            bad.append("seqs %s" % [r["seq"] for r in rs])
        for r, f, w in zip(rs, sent[d], want[d]):
            exp = dict(w, len=len(f), action="fwd", rule=-1, delay_ns=0, ser_ns=0, why="-")
            for k, v in exp.items():
                if r[k] != v:
                    bad.append("seq %d %s: log %r, want %r" % (r["seq"], k, r[k], v))
            if not (r["arrive_ns"] == r["due_ns"] <= r["depart_ns"]):
                bad.append("seq %d: arrive/due/depart %d %d %d" % (r["seq"], r["arrive_ns"],
                           r["due_ns"], r["depart_ns"]))
        check(not bad and len(rs) == len(sent[d]),
              "forward %s: one log line per frame, opcode/psn/dqpn/dscp/kind parsed" % d,
              "%d lines" % len(rs), *bad[:10])
    counts_match("forward", rows, stats())

def s_delay_rule():
    path = start_log("delay.log")
    must("rule", "ba", "0", "roce=1", "op=req", "psn=even", "delay=2000000")
    t_sent, expect, frames = {}, {}, []
    for i in range(40):
        op = (0x04, 0x0a, 0x11, 0x10)[i % 4]
        tag = 5000 + i
        f = roce(op, i // 2 * 2 + (i % 4 == 1), 0x42, tag)
        psn = struct.unpack("!I", f[14 + 20 + 8 + 8:14 + 20 + 8 + 12])[0]
        expect[tag] = op in (0x04, 0x0a) and psn % 2 == 0
        frames.append((tag, f))
    for tag, f in frames:
        t_sent[tag] = send("ba", f)
        send("ab", f)
        time.sleep(0.0005)
    got = rx_of("ba").take(len(frames))
    rx_of("ab").take(len(frames))
    lat = {struct.unpack("!Q", d[54:62])[0]: t - t_sent[struct.unpack("!Q", d[54:62])[0]]
           for t, d in got}
    dl = [lat[t] for t in lat if expect[t]]
    ul = [lat[t] for t in lat if not expect[t]]
    # Paired contrast at the receiver: each delayed frame against the
    # nearest undelayed frame sent before it (after it for the first), under
    # the same host load, so a stalled receiver shifts both sides alike.
    tags = [t for t, _ in frames]
    pair = []
    for i, t in enumerate(tags):
        near = [u for u in tags[:i] if not expect[u]][-1:] or \
            [u for u in tags[i + 1:] if not expect[u]][:1]
        if expect[t] and near and t in lat and near[0] in lat:
            pair.append(lat[t] - lat[near[0]])
    check(len(lat) == 40 and min(dl or [0]) >= 2000000 and len(pair) == 10 and
          1500000 <= pct(pair, 0.5) <= 20000000,
          "delay rule: even-PSN requests in ba arrive >= 2 ms after sending and, against the"
          " nearest undelayed frame, 1.5-20 ms later (p50 of 10 pairs; loose: a busy host)",
          "received %d; delayed min %s; pairs %d, p50 of the difference %s; undelayed p50 %s"
          % (len(lat), us(min(dl or [0])), len(pair), us(pct(pair, 0.5)), us(pct(ul, 0.5))))
    diag("delay rule 2 ms, receiver-measured: delayed min %s p50 %s; undelayed p50 %s max %s;"
         " paired difference p50 %s" % (us(min(dl or [0])), us(pct(dl, 0.5)), us(pct(ul, 0.5)),
         us(max(ul or [0])), us(pct(pair, 0.5))))
    rows = read_log(path)
    bad = []
    for r, (tag, f) in zip(by_dir(rows, "ba"), frames):
        want = (0, 2000000) if expect[tag] else (-1, 0)
        if (r["rule"], r["delay_ns"]) != want:
            bad.append("seq %d psn %d op 0x%02x: rule %d delay %d" % (r["seq"], r["psn"],
                       r["opcode"], r["rule"], r["delay_ns"]))
        if expect[tag] and r["depart_ns"] - r["arrive_ns"] < 2000000:
            bad.append("seq %d left after %d ns" % (r["seq"], r["depart_ns"] - r["arrive_ns"]))
    # the wire itself (SCHED_FIFO where it may) forwards the others at once
    held = [r["depart_ns"] - r["arrive_ns"] for r in by_dir(rows, "ba") if r["rule"] == -1]
    if len(held) != 30 or pct(held, 0.5) >= 500000:
        bad.append("undelayed frames: %d, held p50 %s (limit 500 us)" % (len(held),
                   us(pct(held, 0.5))))
    ab_hit = [r for r in by_dir(rows, "ab") if r["rule"] != -1]
    check(not bad and not ab_hit and len(by_dir(rows, "ba")) == 40,
          "delay rule: the log's rule/delay columns mark exactly the even-PSN requests, ab untouched",
          *(bad[:10] + ["ab lines with a rule: %d" % len(ab_hit)]))
    st = stats()
    r0 = st["ba"]["rules"][0] if st["ba"]["rules"] else {}
    check(r0.get("hits") == 10 and r0.get("delayed") == 10 and r0.get("index") == 0 and
          "psn=even" in r0.get("spec", ""), "stats: rule 0 in ba took 10 frames", json.dumps(r0))
    counts_match("delay rule", rows, st)
    must("norule", "ba")

def s_precision():
    path = start_log("prec.log")
    must("rule", "ab", "0", "dqpn=1", "delay=100000")
    must("rule", "ab", "1", "dqpn=2", "delay=1000000")
    t_sent, n = {}, 600
    for i in range(n):
        tag = 10000 + i
        t_sent[tag] = send("ab", roce(0x04, i, 1 + i % 3, tag))
        time.sleep(0.001)
    got = rx_of("ab").take(n)
    rows = by_dir(read_log(path), "ab")
    req = {1: 100000, 2: 1000000, 0: 0}
    res = {}
    for q in (1, 2, 0):
        rs = [r for r in rows if r["dqpn"] == (q if q else 3)]
        err = [r["depart_ns"] - r["arrive_ns"] - r["delay_ns"] for r in rs]
        res[q] = err
        rcv = [t - t_sent[struct.unpack("!Q", d[54:62])[0]] - req[q] for t, d in got
               if struct.unpack("!I", d[46:50])[0] & 0xffffff == (q if q else 3)]
        what = "delay %d us" % (req[q] // 1000) if q else "no delay (wire latency)"
        diag("precision, %s, %d frames: wire log depart-arrive-requested p50 %s p99 %s max %s;"
             " endpoint-measured extra p50 %s p99 %s" % (what, len(rs), us(pct(err, 0.5)),
             us(pct(err, 0.99)), us(max(err or [0])), us(pct(rcv, 0.5)), us(pct(rcv, 0.99))))
    check(len(rows) == n and all(r["delay_ns"] == req[r["dqpn"] % 3] for r in rows) and
          min(min(e) for e in res.values()) >= 0,
          "precision: every frame logged with its requested delay, none left early",
          "lines %d" % len(rows))
    check(pct(res[1], 0.5) < 200000 and pct(res[2], 0.5) < 200000,
          "precision: p50 delay error < 200 us at 100 us and 1 ms",
          "p50 %s / %s" % (us(pct(res[1], 0.5)), us(pct(res[2], 0.5))))
    st = stats()
    for k in ("delay_error_ns", "wire_latency_ns"):
        h = st["ab"][k]
        diag("stats ab %s: count %d mean %s p50 %s p99 %s max %s" % (k, h["count"], us(h["mean"]),
             us(h["p50"]), us(h["p99"]), us(h["max"])))
    check(st["ab"]["delay_error_ns"]["count"] == 400 and st["ab"]["wire_latency_ns"]["count"] == 200,
          "stats: delay error and wire latency summaries count the right frames",
          json.dumps(st["ab"]["delay_error_ns"]), json.dumps(st["ab"]["wire_latency_ns"]))
    must("norule", "ab")

def loss_run(path):
    must("rule", "ab", "0", "loss=500000", "seed=42")
    path = start_log(path)
    for i in range(400):
        send("ab", plain_udp(20000 + i))
        time.sleep(0.00005)
    got = rx_of("ab").take(None)
    rows = read_log(path)
    return got, rows, stats()

def s_loss():
    got, rows, st = loss_run("loss.log")
    rs = by_dir(rows, "ab")
    lost = [r["seq"] for r in rs if r["action"] == "loss"]
    fwd = [r for r in rs if r["action"] == "fwd"]
    check(len(rs) == 400 and 130 < len(lost) < 270 and len(fwd) == len(got) == 400 - len(lost) and
          all(r["rule"] == 0 and r["depart_ns"] == 0 for r in rs if r["action"] == "loss"),
          "loss=500000: about half lost (%d of 400), logged as loss, the rest received" % len(lost),
          "lines %d lost %d fwd %d received %d" % (len(rs), len(lost), len(fwd), len(got)))
    counts_match("loss", rows, st)
    r0 = st["ab"]["rules"][0]
    check(r0["hits"] == 400 and r0["lost"] == len(lost) and st["ab"]["rx_frames"] == 400,
          "loss: rule counters agree (hits 400, lost %d)" % len(lost), json.dumps(r0))
    got2, rows2, _ = loss_run("loss2.log")
    lost2 = [r["seq"] for r in by_dir(rows2, "ab") if r["action"] == "loss"]
    check(lost2 == lost, "loss: the same seed reloaded loses the same frames",
          "first %d, second %d lost" % (len(lost), len(lost2)))
    must("norule", "ab")

def s_rate():
    path = start_log("rate.log")
    rate = 10000000
    must("link", "ab", "rate=%d" % rate)
    frames = [roce(0x0a, i, 7, 30000 + i, size=1000) for i in range(50)]
    for f in frames:
        send("ab", f)
    got = rx_of("ab").take(50, timeout=10)
    rs = by_dir(read_log(path), "ab")
    ser = (max(1000 + 4, 64) + 20) * 8 * 10**9 // rate
    bad = [r["seq"] for r in rs if r["ser_ns"] != ser or r["len"] != 1000]
    check(len(rs) == 50 and not bad and len(got) == 50,
          "rate 10 Mb/s: ser_ns == (max(len+4,64)+20)*8/rate = %d ns for all 50 frames" % ser,
          "lines %d, received %d, wrong ser/len at seqs %s" % (len(rs), len(got), bad[:10]))
    back = [i for i in range(1, len(rs)) if rs[i]["arrive_ns"] <= rs[i - 1]["due_ns"]]
    due_bad = [i for i in back if rs[i]["due_ns"] - rs[i - 1]["due_ns"] != ser]
    check(len(back) >= 40 and not due_bad and rs[0]["due_ns"] == rs[0]["arrive_ns"] + ser,
          "rate: back-to-back frames are due exactly one serialization time apart (%d queued)" %
          len(back), "queued %d, wrong spacing at %s" % (len(back), due_bad[:10]))
    dev = [abs(rs[i]["depart_ns"] - rs[i - 1]["depart_ns"] - ser) for i in back]
    late = [r["depart_ns"] - r["due_ns"] for r in rs]
    diag("rate: actual departure spacing - ser: p50 %s p99 %s max %s; depart - due p50 %s p99 %s" %
         (us(pct(dev, 0.5)), us(pct(dev, 0.99)), us(max(dev or [0])), us(pct(late, 0.5)),
          us(pct(late, 0.99))))
    check(pct(dev, 0.5) < 200000, "rate: actual departures spaced by ser within 200 us (p50, loose)",
          "p50 %s" % us(pct(dev, 0.5)))
    gaps = [got[i][0] - got[i - 1][0] for i in range(1, len(got))]
    diag("rate: endpoint inter-arrival p50 %s (ser %s)" % (us(pct(gaps, 0.5)), us(ser)))
    must("link", "ab", "rate=0")

def ip_ok(f):
    return csum(f[14:34]) == 0

def s_prio_ecn():
    path = start_log("prio.log")
    must("link", "ab", "rate=10000000")
    must("dscp", "ab", "10=1,12=1")
    must("class", "ab", "1", "limit=20000", "ecn=5000")
    frames = []
    for k in range(30):
        ecn = 0 if k % 4 == 3 else 1 + k % 2
        frames.append(roce(0x0a, k, 1, 40000 + k, tos=(10 << 2) | ecn, size=1000))
    for k in range(5):
        frames.append(roce(0x0a, 100 + k, 0, 40100 + k, tos=2, size=1000))
    for f in frames:
        send("ab", f)
    got = rx_of("ab").take(None, quiet=0.3)
    rows = read_log(path)
    rs = by_dir(rows, "ab")
    c1 = [r for r in rs if r["dscp"] == 10]
    c0 = [r for r in rs if r["dscp"] == 0]
    check(len(rs) == 35 and all(r["class"] == 1 for r in c1) and all(r["class"] == 0 for r in c0),
          "priority: DSCP 10 frames are class 1, DSCP 0 frames class 0", "lines %d" % len(rs))
    viol = []
    for f1 in (r for r in c1 if r["action"] == "fwd"):
        start = f1["due_ns"] - f1["ser_ns"]
        viol += ["class-0 seq %d waited while class-1 seq %d went" % (f0["seq"], f1["seq"])
                 for f0 in c0 if f0["arrive_ns"] < start and f0["due_ns"] > f1["due_ns"]]
    last0 = max(r["due_ns"] for r in c0)
    after = sum(r["due_ns"] > last0 for r in c1 if r["action"] == "fwd")
    check(not viol and after >= 5 and all(r["action"] == "fwd" for r in c0),
          "priority: class 0 leaves first (strict priority; %d class-1 frames left after)" % after,
          *viol[:10])
    bad, queued_ok = [], True
    for k, r in enumerate(c1):
        q = sum(p["len"] for p in c1[:k] if p["action"] == "fwd" and p["due_ns"] > r["arrive_ns"])
        drop = q + r["len"] > 20000
        ce = not drop and q > 5000 and r["ecn_in"] in (1, 2)
        want = ("drop" if drop else "fwd", 3 if ce else r["ecn_in"])
        if (r["action"], r["ecn_out"]) != want:
            bad.append("seq %d queued %d ecn_in %d: log %s/%d, want %s/%d" % (r["seq"], q,
                       r["ecn_in"], r["action"], r["ecn_out"], want[0], want[1]))
    ce = [r for r in c1 if r["ecn_out"] == 3]
    drops = [r for r in c1 if r["action"] == "drop"]
    check(not bad and len(ce) >= 5 and len(drops) >= 1 and
          all(r["why"] == "qfull" for r in drops),
          "ECN/limit: CE exactly on ECT frames enqueued above 5000 B, tail drop above 20000 B"
          " (%d CE, %d dropped)" % (len(ce), len(drops)), *bad[:10])
    rcv_bad = []
    logged = {r["psn"]: r for r in c1}
    for t, d in got:
        tos, psn = d[15], struct.unpack("!I", d[50:54])[0]
        if not ip_ok(d):
            rcv_bad.append("psn %d: bad IPv4 checksum" % psn)
        if psn in logged and (tos & 3) != logged[psn]["ecn_out"]:
            rcv_bad.append("psn %d: ECN %d received, log %d" % (psn, tos & 3,
                           logged[psn]["ecn_out"]))
    n_ce = sum(d[15] & 3 == 3 for t, d in got)
    check(not rcv_bad and n_ce == len(ce) and len(got) == 35 - len(drops),
          "ECN: receivers see CE with a valid IPv4 checksum on exactly the logged frames",
          "received %d, CE %d" % (len(got), n_ce), *rcv_bad[:10])
    st = stats()
    k1 = st["ab"]["classes"][1]
    check(k1["dropped"] == len(drops) == k1["dropped_qfull"] and k1["ce_marked"] == len(ce) and
          k1["max_queued_bytes"] <= 20000 and st["ab"]["classes"][0]["rx_frames"] == 5,
          "class counters: tail drops, CE marks, max queued bytes <= limit",
          json.dumps({k: k1[k] for k in ("dropped", "ce_marked", "max_queued_bytes")}))
    counts_match("priority/ECN", rows, st)
    must("link", "ab", "rate=0")
    must("dscp", "ab", "reset")
    must("class", "ab", "1", "limit=1048576", "ecn=0")

def s_flow():
    """The storage flow: the queue it builds, strict priority around it, no delivery."""
    path = start_log("flow.log")
    rate, fr, blk_bytes, depth = 100000000, 1000, 20000, 3
    ser1 = (fr + 4 + 20) * 8 * 10**9 // rate
    blk = (blk_bytes // fr) * ser1
    rc, out = ctl("flow", "ab", "class=0", "block=%d" % blk_bytes)
    check(rc == 1 and "no link rate" in out, "flow: refused without a link rate", out)
    must("link", "ab", "rate=%d" % rate)
    must("class", "ab", "0", "ecn=30000")
    rc, out = ctl("flow", "ab", "class=0", "block=400000", "depth=3")
    check(rc == 1 and "exceeds class 0's limit" in out, "flow: depth x block over the limit is"
          " refused", out)
    must("flow", "ab", "class=0", "block=%d" % blk_bytes, "depth=%d" % depth, "frame=%d" % fr)
    rc, out = ctl("flow", "ab", "class=1")
    check(rc == 1 and "already has a flow" in out, "flow: a second flow is refused", out)
    # the flow alone wakes the wire up for nothing: its departures are caught up
    # when a frame arrives or the counters are read
    pid = open(os.path.join(TMP, "pid")).read().strip()
    def ctxsw():
        with open("/proc/%s/status" % pid) as f:
            return sum(int(l.split()[1]) for l in f if "ctxt_switches" in l)
    f0, c0 = stats()["ab"]["flow"]["frames"], ctxsw()
    time.sleep(0.5)
    c1 = ctxsw()
    f1 = stats()["ab"]["flow"]["frames"]
    check(c1 - c0 <= 5 and (f1 - f0) * ser1 >= 0.4e9,
          "flow: alone it costs the wire no wake-ups (%d context switches in 0.5 s) and is"
          " caught up when read (%.2f s of frames)" % (c1 - c0, (f1 - f0) * ser1 / 1e9))
    rnd = random.Random(3)
    phases = {}
    for ph, cls in (("shared", 0), ("own class", 1)):
        if cls:
            must("flow", "ab", "off")
            time.sleep(0.05)
            st = stats()["ab"]
            check(st["flow"]["outstanding"] == 0 and st["queued_bytes"] == 0,
                  "flow: off drains its blocks and takes no more", json.dumps(st["flow"]))
            must("flow", "ab", "class=1", "block=%d" % blk_bytes, "depth=%d" % depth,
                 "frame=%d" % fr)
            t_on, frames_on = time.monotonic_ns(), stats()["ab"]["flow"]["frames"]
        time.sleep(0.03)
        base = 50000 + 100 * cls
        for k in range(40):
            send("ab", roce(0x0a, base + k, 9, 60000 + base + k, tos=2 if k % 4 else 0,
                            size=200))
            time.sleep(0.006 + rnd.random() * 0.004)
        got = rx_of("ab").take(40, timeout=5)
        time.sleep(0.05)
        rs = [r for r in by_dir(read_log(path), "ab") if base <= r["psn"] < base + 40]
        phases[ph] = (got, rs)
    st = stats()["ab"]
    t_off = time.monotonic_ns()
    must("flow", "ab", "off")
    got, rs = phases["shared"]
    bad = []
    for r in rs:
        w = r["due_ns"] - r["arrive_ns"] - r["ser_ns"]
        if not (depth - 1) * blk < w <= depth * blk:
            bad.append("psn %d waited %d ns" % (r["psn"], w))
    check(len(rs) == 40 and len(got) == 40 and not bad,
          "flow, same class: every probe frame waits (depth-1, depth] blocks = (%s, %s] on the"
          " schedule" % (us((depth - 1) * blk), us(depth * blk)), "lines %d, received %d" %
          (len(rs), len(got)), *bad[:10])
    ce_bad = [r["psn"] for r in rs if r["ecn_out"] != (3 if r["ecn_in"] else 0)]
    check(not ce_bad, "flow, same class: ECT probe frames are CE (queue above 30000 B), the"
          " others untouched", "wrong at psn %s" % ce_bad[:10])
    got, rs = phases["own class"]
    bad = [r["psn"] for r in rs if not 0 <= r["due_ns"] - r["arrive_ns"] - r["ser_ns"] <= ser1]
    check(len(rs) == 40 and len(got) == 40 and not bad and
          all(r["ecn_out"] == r["ecn_in"] for r in rs),
          "flow, own class: a class-0 frame waits at most the flow frame in progress (%s),"
          " no CE" % us(ser1), "lines %d, received %d, late psn %s" % (len(rs), len(got), bad))
    fl = st["flow"]
    check(fl["preempted"] >= 30 and fl["marked"] > 0 and fl["dropped"] == 0 and
          fl["outstanding"] == depth,
          "flow counters: the higher class cut blocks at frame boundaries, marks, no drop",
          json.dumps(fl))
    busy = (fl["frames"] - frames_on) * ser1 / (t_off - t_on)
    check(0.85 <= busy <= 1.01, "flow: it kept the link busy (%.3f of the time; frames x ser)"
          % busy, json.dumps(fl))
    check(st["tx_frames"] == 80 and st["classes"][0]["tx_frames"] == 80,
          "flow: its frames are not delivered nor in the frame counters (80 probe frames sent)",
          "tx %d" % st["tx_frames"])
    must("flow", "ab", "class=0", "block=20000", "depth=2", "frame=1000", "spread=50", "seed=7")
    time.sleep(0.2)
    fl = stats()["ab"]["flow"]
    must("flow", "ab", "off")
    check(fl["blocks"] >= 50 and 10000 <= fl["block_min"] and fl["block_max"] <= 30000 and
          fl["block_max"] - fl["block_min"] >= 10000 and fl["bytes"] > 0,
          "flow spread=50: block sizes drawn within 20000 x [0.5, 1.5] (frame-padded), and"
          " they vary", json.dumps(fl))
    must("link", "ab", "rate=0")
    must("class", "ab", "0", "ecn=0")

def s_flow_backlog():
    """A flow block's frames leave one by one: only what is still to send is backlog."""
    path = start_log("backlog.log")
    rate, fr, blk, n = 100000000, 1000, 20000, 80
    ser1 = (fr + 4 + 20) * 8 * 10**9 // rate
    must("link", "ab", "rate=%d" % rate)
    must("class", "ab", "0", "ecn=5000")
    must("flow", "ab", "class=0", "block=%d" % blk, "depth=1", "frame=%d" % fr)
    rnd = random.Random(5)
    for k in range(n):
        send("ab", roce(0x0a, 70000 + k, 9, 70000 + k, tos=2, size=200))
        time.sleep(0.003 + rnd.random() * 0.003)
    got = rx_of("ab").take(n, timeout=5)
    time.sleep(0.02)
    rs = [r for r in by_dir(read_log(path), "ab") if 70000 <= r["psn"] < 70000 + n]
    # a frame waits for the rest of the block on the link (depth 1): more
    # than 5 frames' time left <=> more than 5000 B still to send
    edge, bad, want_n = 5 * ser1, [], {2: 0, 3: 0}
    for r in rs:
        w = r["due_ns"] - r["arrive_ns"] - r["ser_ns"]
        if abs(w - edge) < 1000 or w > blk // fr * ser1 + 1000:
            continue
        want = 3 if w > edge else 2
        want_n[want] += 1
        if r["ecn_out"] != want:
            bad.append("psn %d waited %s: ECN %d, want %d" % (r["psn"], us(w), r["ecn_out"], want))
    check(len(rs) == n and len(got) == n and not bad and want_n[3] >= 20 and want_n[2] >= 4,
          "flow backlog: an ECT frame is CE iff more than 5000 B of the block on the link are"
          " still to send (%d CE, %d not; the sent frames are no backlog)" %
          (want_n[3], want_n[2]), "lines %d, received %d" % (len(rs), len(got)), *bad[:10])
    must("flow", "ab", "off")
    time.sleep(0.01)
    must("class", "ab", "0", "limit=14000", "ecn=0")
    must("flow", "ab", "class=0", "block=10000", "depth=1", "frame=%d" % fr)
    rc, out = ctl("class", "ab", "0", "limit=9000")
    check(rc == 1 and "below the 10000 bytes" in out and stats()["ab"]["classes"][0]["limit"] ==
          14000, "class: a limit below the running flow's blocks is refused and kept", out)
    # guest frames behind a block fill the class: the next block does not fit
    for b in range(8):
        for k in range(10):
            send("ab", roce(0x0a, 80000 + 10 * b + k, 9, 80000 + 10 * b + k, size=1000))
        time.sleep(0.005 + rnd.random() * 0.003)
    time.sleep(0.05)
    st = stats()["ab"]
    fl, c0 = st["flow"], st["classes"][0]
    time.sleep(0.05)
    fl2 = stats()["ab"]["flow"]
    check(ctl("ping")[0] == 0 and fl["dropped"] >= 1 and c0["flow_dropped"] == 10 * fl["dropped"]
          and fl2["blocks"] > fl["blocks"] and fl2["outstanding"] == 1 and fl2["on"],
          "flow: a block that finds its class full of guest frames is dropped and issued again only"
          " when a frame leaves; the wire lives on (%d blocks dropped)" % fl["dropped"],
          json.dumps(fl), json.dumps({k: c0[k] for k in c0 if k.startswith("flow")}))
    check(c0["flow_tx_frames"] == fl["frames"] and c0["flow_tx_bytes"] == fl["bytes"] and
          st["classes"][1]["flow_tx_frames"] == 0,
          "class counters: the flow's frames are counted in its class alone",
          json.dumps({k: c0[k] for k in c0 if k.startswith("flow")}), json.dumps(fl))
    must("flow", "ab", "off")
    rx_of("ab").take(None, quiet=0.3)	# the guest frames of the bursts
    must("link", "ab", "rate=0")
    must("class", "ab", "0", "limit=1048576", "ecn=0")

def s_malformed():
    path = start_log("mal.log")
    must("rule", "both", "0", "roce=1", "op=req", "psn=even", "dqpn=5", "dscp=3", "dport=4791",
         "every=2", "delay=1000")
    must("rule", "both", "1", "op=ack", "jitter=500")
    rnd = random.Random(7)
    base = [roce(0x04, 2, 5, 1, tos=12), roce(0x11, 3, 5, 2, vlan=3), roce(0x0a, 4, 5, 3, v6=True),
            plain_udp(4)]
    frames = [b"", b"\x01", b"x" * 13, eth(b"", 0x0800), eth(b"\x45" + b"\0" * 8),
              eth(b"\x4f" + b"\0" * 19), eth(b"\x42" + b"\0" * 40), eth(b"\x65" + b"\0" * 40),
              eth(b"", 0x8100)[:16], eth(b"\x60" + b"\0" * 30, 0x86dd),
              base[0][:14 + 20 + 8 + 5], os.urandom(9000), b"\xff" * 60000]
    for i in range(400):
        f = bytearray(rnd.choice(base)[:rnd.randrange(0, 90)])
        for _ in range(rnd.randrange(0, 4)):
            if f:
                f[rnd.randrange(len(f))] = rnd.randrange(256)
        frames.append(bytes(f))
    for i, f in enumerate(frames):
        send("ab" if i % 2 == 0 else "ba", f)
        if i % 20 == 0:
            time.sleep(0.001)
    got = {d: sorted(x[1] for x in rx_of(d).take(None)) for d in ("ab", "ba")}
    want = {"ab": sorted(frames[0::2]), "ba": sorted(frames[1::2])}
    check(got == want, "malformed: %d short/garbage/mutated frames all forwarded byte-exact" %
          len(frames), "ab %d/%d, ba %d/%d" % (len(got["ab"]), len(want["ab"]), len(got["ba"]),
          len(want["ba"])))
    rows = read_log(path)
    st = stats()
    check(st["ab"]["other"] + st["ba"]["other"] >= 11 and ctl("ping")[0] == 0,
          "malformed: counted as other (%d), the wire still answers" %
          (st["ab"]["other"] + st["ba"]["other"]))
    counts_match("malformed", rows, st)
    must("norule", "both")

def main():
    t0 = time.time()
    for s in (s_forward, s_delay_rule, s_precision, s_loss, s_rate, s_prio_ecn, s_flow,
              s_flow_backlog, s_malformed):
        t = time.time()
        try:
            s()
        except Exception:
            emit("NOK", "%s raised" % s.__name__, traceback.format_exc())
        diag("%s took %.1f s" % (s.__name__, time.time() - t))
    diag("traffic scenarios took %.1f s" % (time.time() - t0))
    rx0.stop = rx1.stop = True

main()
EOF

DRIVE_OK=0
while IFS=$'\t' read -r kind desc rest; do
	case $kind in
	OK) ok "$desc" ;;
	NOK) not_ok "$desc" "$rest" ;;
	DIAG) diag "$desc" ;;
	DONE) DRIVE_RC=$desc; [ "$desc" = 0 ] && DRIVE_OK=1 ;;
	esac
done < <(timeout 300 python3 "$T/drive.py" "$WIRE" "$T/ctl" "$T" "$PA" "$PAP" "$PB" "$PBP"; echo "DONE	$?")
[ "$DRIVE_OK" = 1 ] && ok "the traffic driver ran to its end" ||
	not_ok "the traffic driver ran to its end" "exit status ${DRIVE_RC:-none} (124: timed out after 300 s)"

# ---- SIGTERM ----------------------------------------------------------------
out=$("$WIRE" ctl "$T/ctl" ping 2>&1)
[ "$out" = ok ] && ok "the wire survived all of it" || not_ok "the wire survived" "$out"
"$WIRE" ctl "$T/ctl" log "$T/last.log" >/dev/null
"$WIRE" ctl "$T/ctl" reset >/dev/null
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3): s.sendto(b"z" * 64, ("127.0.0.1", int(sys.argv[1])))' "$PA"
# SIGTERM only once the wire has taken the three frames (its counter says
# so): what is judged is the flush at exit, not how fast the host is.
for _ in $(seq 200); do
	"$WIRE" ctl "$T/ctl" stats | grep -q '"ab":{"rx_frames":3,' && break
	sleep 0.05
done
pid=$(cat "$T/pid")
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if ! kill -0 "$pid" 2>/dev/null && [ ! -e "$T/ctl" ] && [ ! -e "$T/pid" ]; then
	ok "SIGTERM: the daemon exits, control socket and pidfile removed"
else
	not_ok "SIGTERM on the daemon" "$(ls -l "$T")"
fi
n=$(grep -vc '^#' "$T/last.log")
[ "$n" = 3 ] && ok "SIGTERM: the log holds every frame (flushed at exit)" ||
	not_ok "log flushed at exit" "$n lines: $(cat "$T/last.log")"
"$WIRE" run --a "$PA" --a-peer "$PAP" --b "$PB" --b-peer "$PBP" --ctl "$T/ctl2" 2>"$T/fg.err" &
FG_PID=$!
for _ in $(seq 100); do "$WIRE" ctl "$T/ctl2" ping >/dev/null 2>&1 && break; sleep 0.05; done
kill -TERM "$FG_PID"
wait "$FG_PID"; rc=$?
FG_PID=
[ "$rc" = 0 ] && [ ! -e "$T/ctl2" ] && ok "SIGTERM: a foreground wire exits 0 and removes its socket" ||
	not_ok "SIGTERM exit status" "rc=$rc: $(cat "$T/fg.err")"

done_testing
