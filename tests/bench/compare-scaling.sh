#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `latsplit compare` must scale linearly in the number of distributions: a
# fleet's documents hold tens of thousands (per peer, CPU, IRQ, part). Two
# document pairs of N and 10 N summary-and-samples series (irq-like: a
# "cpus" array named by cpu, each with 4 samples) are compared, each five
# times, pinned to one CPU, in the same run; the goal is a median time ratio
# 10N / N under 20 (linear: 10; a name lookup by linear search makes it
# quadratic: ~100, and 40,000 summaries took 6.4 s). The absolute times are
# printed for the note, never judged. Exit 1 over the goal.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
N=${LS_BENCH_COMPARE_N:-8000}
[ -x "$LS_BIN" ] || { echo "# bench compare-scaling: $LS_BIN not built (make)"; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# doc FILE COUNT SHIFT: a document of COUNT series with samples shifted by SHIFT ns.
doc() {
	python3 - "$@" <<'EOF'
import json, sys
path, n, shift = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cpus = [{"cpu": i, "count": 4, "p50_ns": 1000 + shift, "p99_ns": 1300 + shift,
         "samples_ns": [1000 + shift + k * 100 for k in range(4)]} for i in range(n)]
json.dump({"schema": 1, "kind": "irq", "cpus": cpus}, open(path, "w"))
EOF
}
for n in "$N" "$((10 * N))"; do
	doc "$W/a$n.json" "$n" 0
	doc "$W/b$n.json" "$n" 50
done
CPU=$(($(nproc) - 1))
# secs N: the median of five timed compares of the N-series pair.
secs() {
	local i t ts=()
	for i in 1 2 3 4 5; do
		t=$( { /usr/bin/time -f %e taskset -c "$CPU" "$LS_BIN" compare --json \
			"$W/a$1.json" "$W/b$1.json" > "$W/out$1.json"; } 2>&1 | tail -1)
		[ -s "$W/out$1.json" ] || { echo "# compare of $1 series failed: $t" >&2; exit 2; }
		ts+=("$t")
	done
	printf '%s\n' "${ts[@]}" | sort -g | sed -n 3p
}
t1=$(secs "$N")
t10=$(secs "$((10 * N))")
python3 - "$N" "$t1" "$t10" <<'EOF'
import sys
n, t1, t10 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
ratio = t10 / max(t1, 0.01)
print("# bench compare-scaling: %d series %.2f s, %d series %.2f s (median of 5): ratio %.1f"
      " (linear 10, quadratic 100; goal < 20)" % (n, t1, 10 * n, t10, ratio))
sys.exit(0 if ratio < 20 else 1)
EOF
