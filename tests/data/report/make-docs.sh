#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How the stored lab documents beside this script were made (once; the
# host tests read them, the host has no RDMA). Run as root from the tree's
# top after `make modules-all tools`, holding the lab lock:
#   flock /work/lab.lock bash tests/data/report/make-docs.sh
# Writes breakdown-a.json (plain run), breakdown-b.json (the wire holds a
# pseudo-random half of the requests 300 us: queuing), probe.json and
# irq.json, gzipped, into tests/data/report/.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
LAB=$TOP/tools/lab/lab
NAME=rep
OUT=$TOP/tests/data/report
cleanup() { "$LAB" down --name "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT

"$LAB" up --name "$NAME" --kver 6.1 >/dev/null
SH=$("$LAB" shared --name "$NAME")
W=$SH/rep.$$
mkdir -p "$W"
cp "$TOP/build/latsplit" "$W/latsplit"
B=$W/latsplit
rel=$("$LAB" info --name "$NAME" kver)
ko=$TOP/build/kmod/$rel/kmod/latsplit.ko
for n in 0 1; do
	[ -r "$ko" ] && "$LAB" exec --name "$NAME" "$n" -- "insmod $ko" >/dev/null 2>&1 || true
done

# responder CMD LOG: start CMD on node1 and wait until it listens.
responder() {
	"$LAB" exec --name "$NAME" --background 1 -- "timeout 600 $1 > $2 2>&1" >/dev/null
	for _ in $(seq 150); do grep -q listening "$2" 2>/dev/null && break; sleep 0.2; done
	grep -q listening "$2"
}

# bd NAME: one breakdown session, the prober's JSON into $W/NAME.json.
bd() {
	responder "$B breakdown --insecure -p 19631 -u 20 --listen-timeout 120" "$W/$1.resp"
	"$LAB" exec --name "$NAME" --timeout 900 0 -- \
		"$B breakdown -p 19631 -u 20 -n 300 --json 192.0.2.2 > $W/$1.json 2> $W/$1.err"
	sleep 1
}

bd breakdown-a
"$LAB" wire --name "$NAME" rule ab 0 roce=1 op=req psn=hash delay=300000 >/dev/null
bd breakdown-b
"$LAB" wire --name "$NAME" norule ab >/dev/null

responder "$B probe --insecure -p 19632 -u 20" "$W/probe.resp"
"$LAB" exec --name "$NAME" --background 0 -- "$B irq -d rxe0 --json 3 1 > $W/irq.json 2> $W/irq.err" >/dev/null
"$LAB" exec --name "$NAME" --timeout 600 0 -- \
	"$B probe -p 19632 -u 20 -n 300 --json 192.0.2.2 > $W/probe.json 2> $W/probe.err"
sleep 4
for f in breakdown-a breakdown-b probe irq; do
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/$f.json"
	gzip -9n < "$W/$f.json" > "$OUT/$f.json.gz"
done
rm -rf "$W"
echo "wrote $OUT/{breakdown-a,breakdown-b,probe,irq}.json.gz"
