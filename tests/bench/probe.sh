#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Probe bookkeeping cost per sample (two CLOCK_MONOTONIC reads + one fixed
# 16-byte record, goal < 50 ns) against a reference loop measured in the same
# run, and memory: one preallocated record per sample. Exit 1 over the goal.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build probe_bench
echo "# bench probe: ${1:-4000000} samples, pinned to one CPU, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"
taskset -c "$(( $(nproc) - 1 ))" "$w/probe_bench" "${1:-4000000}"
