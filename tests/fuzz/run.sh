#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run libFuzzer targets for SECS seconds each, as TAP: one assertion per
# target (no crash, leak, sanitizer report or timeout). The corpus grows in
# build/fuzz/corpus/NAME, seeded from tests/fuzz/seeds/NAME; a crashing
# input is kept as build/fuzz/crash-NAME-*.
#   tests/fuzz/run.sh SECS BIN...
set -uo pipefail
secs=$1; shift
top=$(cd "$(dirname "$0")/../.." && pwd)
echo "TAP version 13"
echo "1..$#"
n=0 fail=0
for bin in "$@"; do
	n=$((n + 1))
	name=$(basename "$bin"); name=${name%_fuzz}
	corpus=$top/build/fuzz/corpus/$name
	seeds=$top/tests/fuzz/seeds/$name
	dict=$top/tests/fuzz/$name.dict
	log=$top/build/fuzz/$name.log
	mkdir -p "$corpus"
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536
	      -artifact_prefix="$top/build/fuzz/crash-$name-" -print_final_stats=1)
	[ -f "$dict" ] && args+=(-dict="$dict")
	dirs=("$corpus"); [ -d "$seeds" ] && dirs+=("$seeds")
	# libFuzzer's own time limit ends the run; the outer timeout only catches a hang.
	timeout $((secs + 120)) "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
	if [ "$rc" = 0 ]; then
		echo "ok $n - $name: ${runs:-?} inputs in ${secs} s, no crash"
	else
		fail=$((fail + 1))
		echo "not ok $n - $name: exit $rc (log $log)"
		grep -E 'ERROR|SUMMARY|==[0-9]+==|artifact' "$log" | head -n 15 | sed 's/^/# /'
	fi
done
[ "$fail" = 0 ]
