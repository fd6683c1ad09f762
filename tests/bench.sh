#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: every benchmark under tests/bench/*.sh, one after another (they
# measure ratios against a reference in the same run, so they must not share
# the CPUs with each other). Each prints its figures; a benchmark that misses
# its goal exits 1 and is listed at the end.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
missed=()
for b in "$TOP"/tests/bench/*.sh; do
	[ -e "$b" ] || continue
	[ -z "${1:-}" ] || [[ "$b" == *$1* ]] || continue
	echo "== ${b#$TOP/}"
	bash "$b"
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || missed+=("${b#$TOP/} (exit $rc)")
done
echo
if [ ${#missed[@]} -gt 0 ]; then
	printf 'missed goal: %s\n' "${missed[@]}"
	exit 1
fi
echo "all benchmarks met their goals"
