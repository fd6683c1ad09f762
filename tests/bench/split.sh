#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attribution at 1 M samples x 10 M kernel records on one core (goal < 5 s),
# with ratios against references measured in the same run (the record
# generation pass and a qsort of the sample totals). Exit 1 over the goal.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
make -s -C "$TOP" tools >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$TOP" $(printf -- '-I%s ' "$TOP"/tools "$TOP"/tools/*/) \
	-o "$w/split_bench" "$TOP/tests/bench/split_bench.c" "$B/libls-core.a" -lm
echo "# bench split: ${1:-1000000} samples x ${2:-10000000} records, pinned to one CPU"
taskset -c "$(( $(nproc) - 1 ))" "$w/split_bench" "${1:-1000000}" "${2:-10000000}"
