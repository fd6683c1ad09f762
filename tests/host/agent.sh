#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit agent` on the host, where it cannot measure: bad input is a
# clear message and exit 2 before anything starts (options, key, peers
# file, --self not listed or this node listed twice, listen address), a
# host without an RDMA device is told so, --help
# lists the options, --backend kmod with breakdowns is refused (the
# breakdown responder would own the module), breakdown's --pause-idle is
# the responder's. The alerting rules (packaging/latsplit.rules.yml)
# pass `promtool check rules` and the committed `promtool test rules` cases
# (tests/host/agent-rules.test.yml: each alert fires on the series above
# its threshold and not below, also in a 100-node fleet); the cases would
# catch a wrong threshold (the rules with the hurts threshold moved fail
# them), a breakdown judged at any age, and a peer down after one failed
# session; without promtool only these checks are skipped.
. "$(dirname "$0")/../lib.sh"
cli_test_setup "none"
B=$LS_BIN

printf '# fleet\nnode0\nnode1\n' > "$T/peers"
printf 'node0\nbad host\n' > "$T/bad-peers"
printf 'node0\n' > "$T/alone"
head -c 32 /dev/urandom > "$T/key"; chmod 600 "$T/key"
: > "$T/empty-key"; chmod 600 "$T/empty-key"
A=(agent --peers "$T/peers" --self node0 --metrics 127.0.0.1:19851)

expect_rc "--help lists the options and exits 0" 0 "--metrics ADDR:PORT.*" "$B" agent --help
expect_rc "no --peers / --metrics" 2 "--peers FILE and --metrics ADDR:PORT are required" "$B" agent --insecure
expect_rc "neither --key nor --insecure" 2 "give --key FILE .* or --insecure" "$B" "${A[@]}"
expect_rc "both --key and --insecure" 2 "give --key FILE .* or --insecure" "$B" "${A[@]}" --insecure --key "$T/key"
expect_rc "an extra argument" 2 "takes no argument \('node1'\)" "$B" "${A[@]}" --insecure node1
expect_rc "a slot below 100ms" 2 "--slot must be at least 100ms" "$B" "${A[@]}" --insecure --slot 50ms
expect_rc "a slot above 24h" 2 "--slot must be at most 86400s" "$B" "${A[@]}" --insecure --slot 86401s
expect_rc "an unknown schedule" 2 "schedule" "$B" "${A[@]}" --insecure --schedule sometimes
expect_rc "an unknown verb" 2 "verb" "$B" "${A[@]}" --insecure --verb jump
expect_rc "--max-sessions 0" 2 "max-sessions" "$B" "${A[@]}" --insecure --max-sessions 0
expect_rc "an empty key file" 2 "--key" "$B" "${A[@]}" --key "$T/empty-key"
expect_rc "a missing key file" 2 "--key.*No such file" "$B" "${A[@]}" --key "$T/nokey"
expect_rc "the same port for probe and breakdown" 2 "--breakdown-port must differ from --port \(19515\)" \
	"$B" "${A[@]}" --insecure --breakdown-port 19515
expect_rc "--backend kmod with breakdowns" 2 "--backend kmod with --breakdown-every: the breakdown responder owns latsplit.ko" \
	"$B" "${A[@]}" --insecure --backend kmod --breakdown-every 3
expect_rc "breakdown --pause-idle is the responder's" 2 "--pause-idle belongs to the responder" \
	"$B" breakdown --pause-idle node1
expect_rc "a missing peers file" 2 "nopeers.*No such file" "$B" agent --peers "$T/nopeers" --metrics 127.0.0.1:1 --insecure
expect_rc "a bad line in the peers file" 2 "bad-peers:2: 'bad host' is not a host name" \
	"$B" agent --peers "$T/bad-peers" --self node0 --metrics 127.0.0.1:1 --insecure
expect_rc "a list with only this node" 2 "no peer besides this node \(node0\)" \
	"$B" agent --peers "$T/alone" --self node0 --metrics 127.0.0.1:1 --insecure
expect_rc "--self not in the list" 2 "--self node7 is not in .*/peers" \
	"$B" agent --peers "$T/peers" --self node7 --metrics 127.0.0.1:1 --insecure
printf 'node0\nnode1\n127.0.0.1\n' > "$T/twice"
expect_rc "this node listed twice: --self and one of its addresses" 2 \
	"lists this node twice: node0 \(--self\) and 127.0.0.1 \(an address of this host\)" \
	"$B" agent --peers "$T/twice" --self node0 --metrics 127.0.0.1:1 --insecure
expect_rc "--metrics without a port" 2 "'127.0.0.1' is not ADDR:PORT" \
	"$B" agent --peers "$T/peers" --self node0 --metrics 127.0.0.1 --insecure
expect_rc "--metrics with a bad port" 2 "port '99999' is not 1-65535" \
	"$B" agent --peers "$T/peers" --self node0 --metrics 127.0.0.1:99999 --insecure
expect_rc "--metrics with a host name" 2 "not a numeric address" \
	"$B" agent --peers "$T/peers" --self node0 --metrics localhost:9851 --insecure
expect_rc "--metrics with a bare IPv6 address" 2 "write an IPv6 address as \[ADDR\]:PORT" \
	"$B" agent --peers "$T/peers" --self node0 --metrics ::1:9851 --insecure
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	expect_rc "no RDMA device: told so, exit 2" 2 "no RDMA device on this host" "$B" "${A[@]}" --insecure
else
	skip "no RDMA device: told so" "this host has an RDMA device"
fi

if ! command -v promtool >/dev/null; then
	skip "the alerting rules" "promtool not installed (Debian package prometheus: make deps)"
	done_testing
fi
R=$LS_TOP/packaging/latsplit.rules.yml
RT=$LS_TOP/tests/host/agent-rules.test.yml
expect_rc "promtool check rules: the rules file is valid" 0 "SUCCESS: 6 rules found" promtool check rules "$R"
expect_rc "promtool test rules: every alert case passes" 0 "SUCCESS" promtool test rules "$RT"
# The same cases against the rules with the hurts threshold at 20 us: they must fail.
mkdir -p "$T/packaging" "$T/tests/host"
sed 's/> 10e-6$/> 20e-6/' "$R" > "$T/packaging/latsplit.rules.yml"
cp "$RT" "$T/tests/host/"
if cmp -s "$R" "$T/packaging/latsplit.rules.yml"; then
	not_ok "the mutated rules differ" "sed changed nothing in $R"
else
	check_fails "the cases catch a wrong threshold (hurts at 20 us)" promtool test rules "$T/tests/host/agent-rules.test.yml"
fi
# ... and against the rules whose PartDominates takes a breakdown of any age: n4's and pd's old ones fire.
sed 's/^\( *\)latsplit_agent_breakdown_stale_after_seconds$/\1(latsplit_agent_breakdown_stale_after_seconds * 0 + 1e12)/' "$R" > "$T/packaging/latsplit.rules.yml"
if cmp -s "$R" "$T/packaging/latsplit.rules.yml"; then
	not_ok "the rules without the freshness condition differ" "sed changed nothing in $R"
else
	check_fails "the cases catch a breakdown alert without freshness" promtool test rules "$T/tests/host/agent-rules.test.yml"
fi
# ... and against the rules with a peer down after one failed session:
# the 100-node fleet's pb, whose one session failed, pages.
sed 's/^        expr: latsplit_agent_peer_consecutive_failures >= 3$/        expr: latsplit_agent_peer_consecutive_failures > 0/' "$R" > "$T/packaging/latsplit.rules.yml"
if cmp -s "$R" "$T/packaging/latsplit.rules.yml"; then
	not_ok "the rules with a peer down after one failure differ" "sed changed nothing in $R"
else
	check_fails "the cases catch a peer down after one failed session" promtool test rules "$T/tests/host/agent-rules.test.yml"
fi
done_testing
