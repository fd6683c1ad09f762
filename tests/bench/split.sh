#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attribution at 1 M samples x 10 M kernel records on one core (goal < 5 s),
# with ratios against references measured in the same run (the record
# generation pass and a qsort of the sample totals). Exit 1 over the goal.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build split_bench
echo "# bench split: ${1:-1000000} samples x ${2:-10000000} records, pinned to one CPU"
taskset -c "$(( $(nproc) - 1 ))" "$w/split_bench" "${1:-1000000}" "${2:-10000000}"
