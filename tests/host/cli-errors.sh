#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to the CLI's irq/check/dispatcher: a clear message and exit 2,
# never a crash; `irq` on a real interface runs and reports its IRQs.
. "$(dirname "$0")/../lib.sh"
plan_none

# expect_usage DESC PATTERN CMD...: exit 2 and stderr matching PATTERN.
expect_usage() {
	local desc=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" = 2 ] && echo "$out" | grep -qiE -e "$pat"; then
		ok "$desc"
	else
		not_ok "$desc" "rc=$rc (want 2), stderr: $out"
	fi
}

expect_usage "no command" "usage" "$LS_BIN"
expect_usage "unknown command" "unknown command" "$LS_BIN" frobnicate
expect_usage "irq without a device" "-i IF or -d DEV" "$LS_BIN" irq
expect_usage "irq on a missing interface lists the present ones" "present: .*lo" "$LS_BIN" irq -i nosuch0
expect_usage "irq on a missing RDMA device" "does not exist" "$LS_BIN" irq -d nosuch_ib0
expect_usage "irq with a negative interval" "interval" "$LS_BIN" irq -i lo -- -1
expect_usage "irq with a bad cpu list" "cpu list" "$LS_BIN" irq -i lo -c 1-0
expect_usage "irq with an unknown backend" "backend" "$LS_BIN" irq -i lo -b gpu
expect_usage "check without -d" "-d DEV is required" "$LS_BIN" check
expect_usage "check on a missing device" "does not exist" "$LS_BIN" check -d nosuch_ib0
expect_usage "check with inverted thresholds" "abnormal|normal" "$LS_BIN" check -d x --normal-us 1-9 --abnormal-us 5
expect_usage "check with a malformed normal range" "normal|range" "$LS_BIN" check -d x --normal-us 3-1
expect_usage "check with a port out of range" "ib-port" "$LS_BIN" check -d x -i 0

# --peers lists: bad files are refused before anything runs.
P=$(mktemp -d)
trap 'rm -rf "$P"' EXIT
printf 'h1\n  h2  # rack 2\nh1\n' > "$P/dup"
printf '# only a comment\n\n' > "$P/empty"
printf 'h1\nh 2\n' > "$P/space"
printf 'h1\n' > "$P/one"
for cmd in probe breakdown; do
	expect_usage "$cmd --peers: a missing file" "open .*nosuch" "$LS_BIN" $cmd --peers "$P/nosuch"
	expect_usage "$cmd --peers: a host listed twice (line 3)" "dup:3: h1 is listed twice" "$LS_BIN" $cmd --peers "$P/dup"
	expect_usage "$cmd --peers: no hosts" "no peers" "$LS_BIN" $cmd --peers "$P/empty"
	expect_usage "$cmd --peers: two words on a line" "space:2: 'h 2' is not a host" "$LS_BIN" $cmd --peers "$P/space"
	expect_usage "$cmd --peers: a directory" "Is a directory" "$LS_BIN" $cmd --peers "$P"
	expect_usage "$cmd: PEER and --peers" "PEER and --peers" "$LS_BIN" $cmd --peers "$P/one" h9
	expect_usage "$cmd --peers with --samples" "not with --peers" "$LS_BIN" $cmd --peers "$P/one" --samples "$P/s.csv"
done
expect_usage "probe --prom on the responder" "prober's" "$LS_BIN" probe --prom "$P/x.prom"

# Who may talk to a responder: a key or --insecure, checked with the options,
# before any device is opened (this host has no RDMA device: a message naming
# one would mean the check came too late).
# expect_refused DESC PATTERN CMD...: exit 2, PATTERN, no word of a device.
expect_refused() {
	local desc=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" = 2 ] && echo "$out" | grep -qE -e "$pat" && ! echo "$out" | grep -qi "rdma device"; then
		ok "$desc"
	else
		not_ok "$desc" "rc=$rc (want 2), stderr: $out"
	fi
}
head -c 32 /dev/urandom > "$P/key"; chmod 600 "$P/key"
head -c 32 /dev/urandom > "$P/key644"; chmod 644 "$P/key644"
head -c 32 /dev/urandom > "$P/key640"; chmod 640 "$P/key640"
head -c 15 /dev/urandom > "$P/short"; chmod 600 "$P/short"
head -c 4097 /dev/urandom > "$P/long"; chmod 600 "$P/long"
for cmd in probe breakdown; do
	expect_refused "$cmd responder without --key or --insecure: refused, saying why" \
		"a responder needs --key FILE .* or --insecure \(anyone who reaches TCP port 19515" "$LS_BIN" $cmd
	expect_refused "$cmd responder: --key and --insecure together" "exclude each other" \
		"$LS_BIN" $cmd --key "$P/key" --insecure
	expect_refused "$cmd --key: mode 0644 refused, naming the file and the mode" \
		"key file $P/key644 has mode 0644" "$LS_BIN" $cmd --key "$P/key644"
	expect_refused "$cmd --key: mode 0640 refused" "key file $P/key640 has mode 0640" \
		"$LS_BIN" $cmd --key "$P/key640" h9
	expect_refused "$cmd --key: a 15-byte key refused" "key file $P/short holds 15 bytes: a key has 16 to 4096" \
		"$LS_BIN" $cmd --key "$P/short"
	expect_refused "$cmd --key: a 4097-byte key refused" "holds 4097 bytes" "$LS_BIN" $cmd --key "$P/long" h9
	expect_refused "$cmd --key: a missing key file refused" "key file $P/nokey: No such file" \
		"$LS_BIN" $cmd --key "$P/nokey"
	expect_refused "$cmd --key: a directory refused" "not a regular file" "$LS_BIN" $cmd --key "$P"
	expect_refused "$cmd prober: --insecure is the responder's" "--insecure is the responder's" \
		"$LS_BIN" $cmd --insecure h9
	expect_refused "$cmd prober: --bind is the responder's" "--bind is the responder's" \
		"$LS_BIN" $cmd --bind 192.0.2.1 h9
done
expect_refused "check --key: a missing key file refused" "key file $P/nokey" \
	"$LS_BIN" check -d x --key "$P/nokey" h9
# The responder's limits: the responder's options, positive, in range.
for cmd in probe breakdown; do
	expect_usage "$cmd: --max-size on a prober" "are the responder's" "$LS_BIN" $cmd --max-size 4096 h9
	expect_usage "$cmd: --max-run-time on a prober" "are the responder's" "$LS_BIN" $cmd --max-run-time 5s h9
	expect_usage "$cmd: --max-samples on a prober without -D" "needs -D" "$LS_BIN" $cmd --max-samples 10 h9
	expect_usage "$cmd: --max-size 0" "max-size" "$LS_BIN" $cmd --insecure --max-size 0
	expect_usage "$cmd: --max-session-samples of letters" "max-session-samples" "$LS_BIN" $cmd --insecure --max-session-samples lots
	expect_usage "$cmd: --max-run-time 0" "--max-run-time must be positive" "$LS_BIN" $cmd --insecure --max-run-time 0
done
[ ! -e "$P/s.csv" ] && [ ! -e "$P/x.prom" ] && ok "refused runs wrote no file" || not_ok "refused runs wrote no file" "$(ls "$P")"

# A real interface with IRQs: the host's first non-loopback netdev with msi_irqs.
ifc=
for d in /sys/class/net/*; do
	n=${d##*/}
	[ "$n" = lo ] && continue
	[ -e "$d/device" ] || continue
	ifc=$n; break
done
if [ -z "$ifc" ]; then
	skip "irq on a real NIC" "no netdev backed by a device on this host"
else
	out=$("$LS_BIN" irq -i "$ifc" -b none -j 0.2 2>&1); rc=$?
	irqs_json=$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(str(i["irq"]) for i in d["irqs"]))' 2>&1)
	# Oracle: every IRQ the tool lists exists in /proc/interrupts, and the
	# device's msi_irqs (when it has them) are all listed.
	bad=
	for i in $irqs_json; do grep -qE "^ *$i:" /proc/interrupts || bad="$bad $i"; done
	msi=$(ls "$(readlink -f /sys/class/net/$ifc/device)/../msi_irqs" 2>/dev/null | sort -n | tr '\n' ' ')
	if [ "$rc" -le 1 ] && [ -n "$irqs_json" ] && [ -z "$bad" ] &&
	   { [ -z "$msi" ] || [ "$(echo $irqs_json | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "$msi" ]; }; then
		ok "irq -i $ifc lists its IRQs ($irqs_json) as /proc/interrupts and msi_irqs do"
	else
		not_ok "irq -i $ifc" "rc=$rc irqs='$irqs_json' msi='$msi' bad='$bad'" "$out"
	fi
fi
done_testing
