#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Probe bookkeeping cost per sample (two CLOCK_MONOTONIC reads + one fixed
# 16-byte record, goal < 50 ns) against a reference loop measured in the same
# run, and memory: one preallocated record per sample. Exit 1 over the goal.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
make -s -C "$TOP" tools >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$TOP" $(printf -- '-I%s ' "$TOP"/tools "$TOP"/tools/*/) \
	-o "$w/probe_bench" "$TOP/tests/bench/probe_bench.c" "$B/libls-core.a" -lm
echo "# bench probe: ${1:-4000000} samples, pinned to one CPU, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"
taskset -c "$(( $(nproc) - 1 ))" "$w/probe_bench" "${1:-4000000}"
