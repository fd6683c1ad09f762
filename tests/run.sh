#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsplit test runner: unit tests, host-kernel tests, then lab tests (one
# pair boot per kernel and CPU count serves every lab test for it). Every
# test prints TAP; this runner counts the assertions and ends with the line
#   N passed, N failed, N skipped
# and a non-zero exit status if anything failed. A lab test that fails is run
# once more (the emulator's speed drifts between runs); both attempts are
# reported, and the retried tests are listed at the end.
#
#   tests/run.sh [--only unit|host|lab|fuzz] [--kernels "6.1 6.12 6.1-rt"] [PATTERN]
#
# A lab test's header chooses its pairs: "# lab-kernels: 6.1 6.12" (or
# all, the default), "# lab-smp: 1|2|1 2|any" (CPUs per node; "1 2": on
# both pairs; any: one where the kernel has one-CPU tests anyway, else two), "# lab-tcg: single|multi".
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
LAB=$TOP/tools/lab/lab
LOGS=$TOP/build/test-logs
ONLY= PATTERN= KERNELS=${LS_KERNELS:-"6.1 6.12 6.1-rt"}
while [ $# -gt 0 ]; do
	case "$1" in
	--only) ONLY=$2; shift 2 ;;
	--kernels) KERNELS=$2; shift 2 ;;
	-h|--help) sed -n '3,9p' "$0"; exit 0 ;;
	*) PATTERN=$1; shift ;;
	esac
done
rm -rf "$LOGS"; mkdir -p "$LOGS"
pass=0 fail=0 skipped=0
failed_names=()
declare -A fail_detail=()
retried=()
t_start=$(date +%s)

# want FILE: true if FILE matches the optional name pattern.
want() { [ -z "$PATTERN" ] || [[ "$1" == *$PATTERN* ]]; }

# count_tap NAME LOG RC: add one test program's TAP result to the totals.
count_tap() {
	local name=$1 log=$2 rc=$3 p f s plan got
	p=$(grep -cE '^[[:space:]]*ok [0-9]+' "$log" | head -1)
	s=$(grep -cE '^[[:space:]]*ok [0-9]+.*# *(SKIP|skip)' "$log" | head -1)
	f=$(grep -cE '^[[:space:]]*not ok [0-9]+' "$log" | head -1)
	p=$((p - s))
	plan=$(grep -oE '^1\.\.[0-9]+' "$log" | tail -1 | cut -c4-)
	got=$((p + s + f))
	if [ "$rc" = 4 ] && [ "$f" = 0 ] && [ "$got" = 0 ]; then
		s=1
		echo "  SKIP $name: $(grep -m1 -oE 'SKIP.*' "$log")"
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "  FAIL $name: exited $rc without a failed assertion (see $log)"
		tail -n 15 "$log" | sed 's/^/    | /'
	elif [ -n "$plan" ] && [ "$plan" != "$got" ] && [ "$rc" != 4 ]; then
		f=$((f + 1))
		echo "  FAIL $name: planned $plan assertions, ran $got"
	fi
	if [ "$f" -gt 0 ]; then
		failed_names+=("$name")
		# kept for the summary too: a CI page may show only the tail
		fail_detail[$name]=$(grep -E '^[[:space:]]*not ok' -A8 "$log" | grep -vE '^[[:space:]]*ok ' |
			head -n 40 | sed 's/^/    | /')
		[ -n "${fail_detail[$name]}" ] && printf '%s\n' "${fail_detail[$name]}"
	fi
	echo "  $name: $p passed, $f failed, $s skipped ($4 s)"
	pass=$((pass + p)); fail=$((fail + f)); skipped=$((skipped + s))
}

# attempt NAME TIMEOUT LOG CMD...: run CMD into LOG under TIMEOUT; its status.
attempt() {
	local name=$1 to=$2 log=$3 rc
	shift 3
	rm -f "${log%.log}.times"
	LS_TAP_TIMES=${log%.log}.times timeout --kill-after=10 "$to" "$@" > "$log" 2>&1 < /dev/null
	rc=$?
	[ "$rc" = 124 ] && echo "not ok 999 - $name timed out after ${to}s" >> "$log"
	return "$rc"
}

# pair_rdma NAME: five RDMA WRITEs from node0 to node1 with perftest's
# ib_write_lat, an oracle of our own code's making: a pair whose Soft-RoCE
# is broken from boot (seen once on 6.12: rxe_modify_qp EINVAL on node0's
# first QP, and every RDMA test on the pair failed, retries included)
# must be booted again, not tested.
pair_rdma() {
	local name=$1 i
	"$LAB" exec --name "$name" --timeout 30 1 -- \
		"timeout 60 ib_write_lat -d rxe0 -s 4 -n 5 -p 18600 >/dev/null 2>&1 &" >/dev/null 2>&1 ||
		return 1
	for i in 1 2 3 4 5; do
		"$LAB" exec --name "$name" --timeout 30 0 -- \
			"timeout 20 ib_write_lat -d rxe0 -s 4 -n 5 -p 18600 192.0.2.2" >/dev/null 2>&1 &&
			return 0
		sleep 1
	done
	return 1
}

# pair_ok NAME: both nodes answer and RDMA works between them.
pair_ok() {
	"$LAB" exec --name "$1" --timeout 30 0 -- true >/dev/null 2>&1 &&
		"$LAB" exec --name "$1" --timeout 30 1 -- true >/dev/null 2>&1 && pair_rdma "$1"
}

# pair_keep NAME WHY: the pair's consoles and kernel logs, kept in $LOGS.
pair_keep() {
	local n
	"$LAB" info --name "$1" console > "$LOGS/console-$1-$2.log" 2>/dev/null
	for n in 0 1; do
		"$LAB" exec --name "$1" --timeout 30 "$n" -- "dmesg | tail -n 40" \
			> "$LOGS/dmesg-$1-$2-node$n.log" 2>&1
	done
}

# run_one NAME TIMEOUT CMD...: run a test program, log it, count it.
run_one() {
	local name=$1 to=$2 log t0 rc
	shift 2
	log=$LOGS/$(echo "$name" | tr '/ ' '__').log
	t0=$(date +%s)
	attempt "$name" "$to" "$log" "$@"
	rc=$?
	# Lab tests judge an emulator whose speed drifts from run to run: one
	# that failed runs once more, and both outcomes are reported (the
	# first attempt's log is kept as NAME.try1.log).
	# (Not after a timeout: the guest is likely stuck, the caller reboots it.)
	if [ "${LS_RETRY:-0}" = 1 ] && [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$rc" != 124 ] &&
	   [ "$rc" != 137 ]; then
		mv "$log" "${log%.log}.try1.log"
		mv -f "${log%.log}.times" "${log%.log}.try1.times" 2>/dev/null
		echo "  RETRY $name: failed (exit $rc, $(grep -cE '^[[:space:]]*not ok' "${log%.log}.try1.log") failed assertions; log ${log%.log}.try1.log), running it again"
		grep -E '^[[:space:]]*not ok' "${log%.log}.try1.log" | head -n 5 | sed 's/^/    | /'
		retried+=("$name")
		# a lab test's pair without working RDMA is booted again first
		[ -n "${LS_PAIR_UP:-}" ] && ! pair_ok "$LAB_PAIR" && {
			echo "    (pair $LAB_PAIR has no working RDMA: logs kept in $LOGS; booting it again)"
			pair_keep "$LAB_PAIR" "before-retry"
			"$LAB" down --name "$LAB_PAIR" >/dev/null 2>&1
			$LS_PAIR_UP >/dev/null 2>&1
		}
		attempt "$name" "$to" "$log" "$@"
		rc=$?
	fi
	count_tap "$name" "$log" "$rc" "$(($(date +%s) - t0))"
}

# header_of FILE KEY DEFAULT: value of a "# KEY: value" line in a test's header.
header_of() {
	local v
	# anywhere in the leading comment block
	v=$(awk -v k="# $2:" 'NR > 1 && !/^#/ { exit } index($0, k) == 1 { sub(/^# [a-z-]+: */, ""); print; exit }' "$1")
	echo "${v:-$3}"
}

if [ -z "$ONLY" ] || [ "$ONLY" = unit ]; then
	echo "== unit tests"
	for t in "$TOP"/build/tests/unit/*; do
		[ -x "$t" ] || continue
		want "unit/${t##*/}" || continue
		run_one "unit/${t##*/}" 300 "$t"
	done
fi

if [ -z "$ONLY" ] || [ "$ONLY" = fuzz ]; then
	if grep -q '^fuzz-short:' "$TOP/Makefile" && { [ -z "$PATTERN" ] || [[ fuzz == *$PATTERN* ]]; }; then
		echo "== fuzz (short)"
		run_one "fuzz-short" 900 make -s -C "$TOP" fuzz-short
	fi
fi

if [ -z "$ONLY" ] || [ "$ONLY" = host ]; then
	echo "== host-kernel tests ($(uname -r))"
	for t in "$TOP"/tests/host/*.sh; do
		[ -e "$t" ] || continue
		want "host/${t##*/}" || continue
		run_one "host/${t##*/}" 900 bash "$t"
	done
fi

if [ -z "$ONLY" ] || [ "$ONLY" = lab ]; then
	for k in $KERNELS; do
		# "lab-smp: any" runs with one CPU per node where this kernel has
		# tests that need one CPU, else on its two-CPU pair: a boot saved.
		has1=
		for t in "$TOP"/tests/lab/*.sh; do
			ks=$(header_of "$t" lab-kernels all)
			[ "$ks" = all ] && ks="6.1 6.12 6.1-rt"
			[[ " $ks " == *" $k "* ]] && want "lab/${t##*/}" &&
				[[ " $(header_of "$t" lab-smp 1) " == *" 1 "* ]] && has1=1
		done
		for mode in 1:single 2:single 2:multi; do
			smp=${mode%%:*} tcg=${mode#*:}
			tests=()
			for t in "$TOP"/tests/lab/*.sh; do
				[ -e "$t" ] || continue
				want "lab/${t##*/}" || continue
				ks=$(header_of "$t" lab-kernels all)
				[ "$ks" = all ] && ks="6.1 6.12 6.1-rt"
				[[ " $ks " == *" $k "* ]] || continue
				tsmp=$(header_of "$t" lab-smp 1)
				if [ "$tsmp" = any ]; then
					[ "$tcg" = single ] && { [ -n "$has1" ] && tsmp=1 || tsmp=2; }
				fi
				[[ " $tsmp " == *" $smp "* ]] || continue
				[ "$(header_of "$t" lab-tcg single)" = "$tcg" ] || continue
				tests+=("$t")
			done
			[ ${#tests[@]} -gt 0 ] || continue
			name=ci-$$-${k}-smp$smp-$tcg
			echo "== lab tests on $k, $smp CPU(s) per node, TCG $tcg-threaded"
			t0=$(date +%s)
			# A pair that booted but does not answer (seen with --tcg multi:
			# a guest stuck for good) is booted again, twice at most.
			up=0
			for try in 1 2 3; do
				"$LAB" up --name "$name" --kver "$k" --smp "$smp" --tcg "$tcg" > "$LOGS/lab-up-$k-$smp.log" 2>&1 || break
				pair_ok "$name" && { up=1; break; }
				echo "  (pair $name does not answer or has no working RDMA after boot, try $try: booting it again)"
				pair_keep "$name" "boot$try"
				"$LAB" down --name "$name" >/dev/null 2>&1
				[ "$try" = 3 ] && echo "lab: pair does not answer after 3 boots" > "$LOGS/lab-up-$k-$smp.log"
			done
			if [ "$up" = 0 ]; then
				echo "  FAIL lab up $k smp=$smp tcg=$tcg:"; sed 's/^/    | /' "$LOGS/lab-up-$k-$smp.log" | tail -n 30
				for t in "${tests[@]}"; do
					fail=$((fail + 1)); failed_names+=("lab/${t##*/}[$k]")
				done
				"$LAB" down --name "$name" >/dev/null 2>&1
				continue
			fi
			echo "  (pair booted in $(($(date +%s) - t0)) s)"
			for t in "${tests[@]}"; do
				tname="lab/${t##*/}[$k]"
				# a test for more than one CPU count is named by its pair's
				[[ "$(header_of "$t" lab-smp 1)" == *" "* ]] && tname="lab/${t##*/}[$k,smp$smp]"
				LS_RETRY=1 LAB_PAIR=$name \
				LS_PAIR_UP="$LAB up --name $name --kver $k --smp $smp --tcg $tcg" \
					run_one "$tname" 1200 env LAB_NAME="$name" LS_KVER_SHORT="$k" bash "$t"
				# A test that crashed a guest takes the pair down: boot it again.
				if ! "$LAB" exec --name "$name" --timeout 30 0 -- true >/dev/null 2>&1 ||
				   ! "$LAB" exec --name "$name" --timeout 30 1 -- true >/dev/null 2>&1; then
					echo "  (pair is gone after ${t##*/}: console kept in $LOGS; rebooting)"
					"$LAB" info --name "$name" console > "$LOGS/console-$k-$smp-$tcg-${t##*/}.log" 2>/dev/null
					"$LAB" down --name "$name" >/dev/null 2>&1
					"$LAB" up --name "$name" --kver "$k" --smp "$smp" --tcg "$tcg" >/dev/null 2>&1 || break
				fi
			done
			"$LAB" info --name "$name" console > "$LOGS/console-$k-smp$smp-$tcg.log" 2>/dev/null
			"$LAB" down --name "$name" >/dev/null 2>&1
		done
	done
fi

echo
echo "== $(($(date +%s) - t_start)) s; logs in $LOGS"
for n in "${retried[@]}"; do echo "retried after a failed first attempt: $n"; done
for n in "${failed_names[@]}"; do
	echo "failed: $n"
	[ -n "${fail_detail[$n]:-}" ] && printf '%s\n' "${fail_detail[$n]}" | head -n 12
done
echo "${#retried[@]} tests retried (a retried test counts with its second attempt; the first is in its .try1.log)"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
