#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot the two-node Soft-RoCE lab and run the main job in it:
# `latsplit breakdown` between node1 (responder) and node0 (prober), with
# the kernel module loaded on both nodes. Prints the split and the verdict,
# and writes the run's HTML report (latsplit breakdown --report) to
# build/demo/breakdown.html, printing its path.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
LAB=$TOP/tools/lab/lab
BIN=$TOP/build/latsplit
KVER=${KVER:-6.1}
NAME=demo-$$

cleanup() { "$LAB" down --name "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT

echo "== booting the lab pair (kernel $KVER, QEMU TCG, Soft-RoCE on virtio-net)"
"$LAB" up --name "$NAME" --kver "$KVER" >/dev/null
rel=$("$LAB" info --name "$NAME" kver)
ko=$TOP/build/kmod/$rel/kmod/latsplit.ko
for n in 0 1; do
	"$LAB" exec --name "$NAME" "$n" -- "[ -r $ko ] && insmod $ko || true" >/dev/null
done
if "$BIN" --help 2>/dev/null | grep -q '^  breakdown'; then
	echo "== latsplit breakdown node0 -> node1 (4 B RDMA WRITE)"
	resp=$("$LAB" shared --name "$NAME")/responder.log
	"$LAB" exec --name "$NAME" --background 1 -- "timeout 300 $BIN breakdown --insecure -d rxe0 -u 20 > $resp 2>&1" >/dev/null
	# The prober does not retry a refused connection: wait for the listener.
	for _ in $(seq 150); do grep -q listening "$resp" 2>/dev/null && break; sleep 0.2; done
	grep -q listening "$resp" 2>/dev/null || { echo "demo: the responder did not start:" >&2; cat "$resp" >&2; exit 1; }
	rep=$("$LAB" shared --name "$NAME")/breakdown.html
	"$LAB" exec --name "$NAME" --timeout 300 0 -- "$BIN breakdown -d rxe0 -u 20 -n 1000 --report $rep 192.0.2.2"
	mkdir -p "$TOP/build/demo"
	cp "$rep" "$TOP/build/demo/breakdown.html"
	echo "== report: $TOP/build/demo/breakdown.html"
else
	echo "== ib_write_lat node0 -> node1 (latsplit breakdown is not built yet)"
	"$LAB" exec --name "$NAME" --background 1 -- "timeout 120 ib_write_lat -d rxe0 -s 4 -n 1000 -u 20 > /dev/null 2>&1" >/dev/null
	sleep 1
	"$LAB" exec --name "$NAME" --timeout 150 0 -- "ib_write_lat -d rxe0 -s 4 -n 1000 -u 20 192.0.2.2"
fi
