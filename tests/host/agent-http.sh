#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit agent`'s HTTP server on the host, the real agent run with an
# LD_PRELOAD shim (tests/host/fakedev.c) that lists one RDMA device whose
# open fails, so the agent starts and every session fails. One client's
# idle connections cannot block a scrape: 16 idle connections from
# 127.0.0.2 (the default --max-connections) leave a scrape from 127.0.0.1
# answered (a per-client limit equal to the total refused it), at most a
# quarter of them are kept, and those are closed once idle for 3 s. The
# live page passes `promtool check metrics` (when promtool is installed),
# and SIGTERM ends the agent with status 0.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "make deps"
B=$LS_BIN
command -v cc >/dev/null || skip_all "no C compiler for the device shim"
if ! out=$(cc -shared -fPIC -O2 -o "$T/fakedev.so" "$LS_TOP/tests/host/fakedev.c" 2>&1); then
	skip_all "cannot build the device shim: $out"
fi
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'node0\n127.0.0.9\n' > "$T/peers"
LD_PRELOAD=$T/fakedev.so "$B" agent --peers "$T/peers" --self node0 --metrics "127.0.0.1:$PORT" \
	--insecure --slot 1s > "$T/agent.log" 2>&1 &
APID=$!
trap 'kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; rm -rf "$T"' EXIT

# page: the live /metrics page from 127.0.0.1
page() {
	python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$PORT/metrics', timeout=5).read().decode())"
}
for _ in $(seq 50); do page >/dev/null 2>&1 && break; sleep 0.2; done
if page 2>/dev/null | grep -q '^latsplit_agent_build_info{'; then
	ok "the agent (device shim) serves /metrics on 127.0.0.1:$PORT"
else
	not_ok "agent up" "$(cat "$T/agent.log")"
	done_testing
fi

python3 - "$PORT" > "$T/idle.out" 2>&1 <<'PYEOF'
import socket, sys, time, urllib.request
port = int(sys.argv[1])
conns = []
for _ in range(16):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    conns.append(s)
time.sleep(0.5)
t0 = time.time()
try:
    page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
    print("scrape 200" if "latsplit_agent_build_info{" in page else "scrape without the page")
except Exception as e:
    print("scrape failed: %s" % e)
# open: the server has not closed it (recv would return b"" at EOF)
def open_conns():
    n = 0
    for s in conns:
        s.setblocking(False)
        try:
            n += s.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            n += 1
        except OSError:
            pass
    return n
print("kept %d" % open_conns())
time.sleep(6)
print("after idle %d" % open_conns())
PYEOF
diag "$(cat "$T/idle.out")"
grep -qx "scrape 200" "$T/idle.out" && ok "16 idle connections from 127.0.0.2 leave a scrape from 127.0.0.1 answered" ||
	not_ok "scrape with one client's idle connections" "$(cat "$T/idle.out")"
kept=$(awk '$1 == "kept" { print $2 }' "$T/idle.out")
[ -n "$kept" ] && [ "$kept" -ge 1 ] && [ "$kept" -le 4 ] &&
	ok "one client holds at most a quarter of the 16 connections ($kept kept)" ||
	not_ok "per-client limit" "kept ${kept:-?} of 16 (want 1..4)"
[ "$(awk '$1 == "after" { print $3 }' "$T/idle.out")" = 0 ] &&
	ok "idle connections are closed after 3 s" ||
	not_ok "idle timeout" "$(cat "$T/idle.out")"

if command -v promtool >/dev/null; then
	if out=$(page | promtool check metrics 2>&1); then
		ok "promtool check metrics: the live page is clean"
	else
		not_ok "promtool check metrics on the live page" "$out"
	fi
else
	skip "promtool check metrics on the live page" "promtool not installed (make deps)"
fi

kill -TERM "$APID"
rc=0
for _ in $(seq 50); do kill -0 "$APID" 2>/dev/null || break; sleep 0.2; done
wait "$APID" || rc=$?
[ "$rc" = 0 ] && ok "SIGTERM: exit status 0" || not_ok "SIGTERM" "rc=$rc" "$(tail -n 5 "$T/agent.log")"
done_testing
