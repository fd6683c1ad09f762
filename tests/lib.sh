# SPDX-License-Identifier: GPL-2.0
# Shared helpers for latsplit's shell tests: TAP output and lab access.
#
# A test script sources this file, calls `plan N` (or `plan_none` when it
# counts as it goes and calls `done_testing` at the end), then ok/not_ok/skip
# per assertion. Exit status: 0 all passed, 1 any failed, 4 (KSFT_SKIP) only
# when a prerequisite is truly absent (say which, with skip_all).

LS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LS_BIN=$LS_TOP/build/latsplit
LS_LAB=$LS_TOP/tools/lab/lab
KSFT_SKIP=4

_tap_n=0
_tap_fail=0

# plan N: announce how many assertions follow.
plan() { echo "TAP version 13"; echo "1..$1"; }
# plan_none: count as we go; call done_testing at the end.
plan_none() { echo "TAP version 13"; _tap_late_plan=1; }
# done_testing: print the late plan and exit with the right status.
done_testing() {
	[ -n "${_tap_late_plan:-}" ] && echo "1..$_tap_n"
	[ "$_tap_fail" -eq 0 ] && exit 0
	exit 1
}
# _tap_time LINE: with LS_TAP_TIMES set (tests/run.sh does), append LINE
# and the seconds since the test started to that file: where a test spends
# its time.
_tap_time() { [ -z "${LS_TAP_TIMES:-}" ] || echo "$SECONDS s: $1" >> "$LS_TAP_TIMES"; }
# ok DESC: a passed assertion.
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; _tap_time "ok $_tap_n - $*"; }
# not_ok DESC [DIAG...]: a failed assertion, with diagnostics after it.
not_ok() {
	_tap_n=$((_tap_n + 1)); _tap_fail=$((_tap_fail + 1))
	echo "not ok $_tap_n - $1"; _tap_time "not ok $_tap_n - $1"; shift
	local l
	for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done
}
# skip DESC REASON: an assertion that could not run; REASON says what is absent.
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; _tap_time "skip $_tap_n - $1"; }
# check DESC CMD...: ok when CMD succeeds, not_ok with its output otherwise.
check() {
	local desc=$1 out; shift
	if out=$("$@" 2>&1); then ok "$desc"; else not_ok "$desc" "command: $*" "$out"; fi
}
# check_diag DESC CMD...: check, with CMD's output shown (as a diagnostic)
# whether it passes or not: for checks whose margin is worth reading.
check_diag() {
	local desc=$1 out; shift
	if out=$("$@" 2>&1); then ok "$desc"; diag "$out"; else not_ok "$desc" "command: $*" "$out"; fi
}
# check_fails DESC CMD...: ok when CMD exits non-zero.
check_fails() {
	local desc=$1 out; shift
	if out=$("$@" 2>&1); then not_ok "$desc" "command unexpectedly succeeded: $*" "$out"; else ok "$desc"; fi
}
# skip_all REASON: the whole script cannot run here.
skip_all() { echo "TAP version 13"; echo "1..0 # SKIP $*"; exit $KSFT_SKIP; }
# diag MSG: a TAP comment.
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# Lab helpers: LAB_NAME is set by tests/run.sh for tests under tests/lab/.
# lab_exec NODE CMD...: run a shell command line in guest NODE (0 or 1).
lab_exec() { local n=$1; shift; "$LS_LAB" exec --name "${LAB_NAME:?LAB_NAME unset}" "$n" -- "$*"; }
# lab_exec_t SECS NODE CMD...: lab_exec with a timeout in seconds.
lab_exec_t() { local t=$1 n=$2; shift 2; "$LS_LAB" exec --name "${LAB_NAME:?}" --timeout "$t" "$n" -- "$*"; }
# lab_bg NODE CMD...: start CMD in the background in guest NODE (returns at once).
lab_bg() { local n=$1; shift; "$LS_LAB" exec --name "${LAB_NAME:?}" --background "$n" -- "$*"; }
# lab_shared: a directory both the host and the guests see read-write.
lab_shared() { "$LS_LAB" shared --name "${LAB_NAME:?}"; }
# lab_primary: true on the suite's primary kernel (6.1, or LS_KVER_SHORT
# unset), where robustness loops and diagnostics run in full; the other
# kernels run the same code paths in a shorter form. LS_LAB_FULL=1: full
# everywhere.
lab_primary() { [ "${LS_LAB_FULL:-0}" = 1 ] || [ "${LS_KVER_SHORT:-6.1}" = 6.1 ]; }
# lab_reps FULL SHORT: FULL when lab_primary, SHORT otherwise.
lab_reps() { if lab_primary; then echo "$1"; else echo "$2"; fi; }
# lab_kver: the running guest kernel release.
lab_kver() { "$LS_LAB" info --name "${LAB_NAME:?}" kver; }

# dmesg_clean NODE SINCE_MARK: no WARNING/BUG/Oops/lockdep in the guest's log.
dmesg_clean() {
	local n=$1 out
	out=$(lab_exec "$n" "dmesg" 2>&1) || { echo "$out"; return 1; }
	if echo "$out" | grep -E 'WARNING:|BUG:|Oops|general protection|possible circular locking|lockdep|Call Trace|UBSAN|KASAN|refcount_t'; then
		return 1
	fi
	return 0
}

# ebpf_host_require WHAT_PYTHON_DOES: skip unless the eBPF backend can run
# natively here (root, the CLI built, kernel BTF) and python3 is present.
ebpf_host_require() {
	[ "$(id -u)" = 0 ] || skip_all "needs root to load BPF programs"
	[ -x "$LS_BIN" ] || skip_all "$LS_BIN not built (make tools)"
	[ -r /sys/kernel/btf/vmlinux ] || skip_all "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	command -v python3 >/dev/null || skip_all "python3 missing ($1)"
}

# cli_test_setup WHAT_PYTHON_DOES: start a host test of the CLI: python3 and
# the built CLI present, TAP counted as it goes, a scratch directory $T
# removed at exit.
cli_test_setup() {
	command -v python3 >/dev/null || skip_all "python3 not installed ($1)"
	[ -x "$LS_BIN" ] || skip_all "build/latsplit not built (make tools)"
	plan_none
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
}

# expect_rc DESC RC PATTERN CMD...: CMD exits RC and its output matches PATTERN.
expect_rc() {
	local desc=$1 want=$2 pat=$3 out rc; shift 3
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$out"; then ok "$desc"
	else not_ok "$desc" "rc=$rc (want $want), want /$pat/" "$out"; fi
}

# lab_workdir NAME: the lab's shared directory into $SH (skip the script
# without one) and a scratch directory $W=$SH/NAME.PID in it, made.
lab_workdir() {
	SH=$(lab_shared) || skip_all "no lab shared directory (LAB_NAME=${LAB_NAME:-unset})"
	W=$SH/$1.$$
	_lab_workdir=$W
	mkdir -p "$W"
}

# lab_nic_irqs: node0's eth0 MSI IRQs, comma-separated, into $irqs; without
# any, a failed test and the end of the script.
lab_nic_irqs() {
	irqs=$(lab_exec 0 "ls /sys/class/net/eth0/device/../msi_irqs 2>/dev/null | sort -n | paste -sd, -")
	[ -n "$irqs" ] || { not_ok "node0: find eth0's MSI IRQs"; done_testing; }
}

# lab_drop_caches: drop both guests' page caches (a running lab may serve a
# stale page-cached binary over 9p after a rebuild).
lab_drop_caches() {
	lab_exec 0 "echo 3 > /proc/sys/vm/drop_caches"
	lab_exec 1 "echo 3 > /proc/sys/vm/drop_caches"
}

# lab_cleanup_at_exit NODE CMD [NODE CMD...]: at exit, run each CMD in its
# guest NODE (output and failure ignored), then remove the directory
# lab_workdir made, if it made one.
lab_cleanup_at_exit() {
	_lab_cleanup=("$@")
	trap _lab_run_cleanup EXIT
}
_lab_run_cleanup() {
	local i
	for ((i = 0; i + 1 < ${#_lab_cleanup[@]}; i += 2)); do
		lab_exec "${_lab_cleanup[i]}" "${_lab_cleanup[i + 1]}" >/dev/null 2>&1
	done
	[ -z "${_lab_workdir:-}" ] || rm -rf "$_lab_workdir"
}

# ebpf_lab_setup NAME NODE [CMD]: start a lab test of the eBPF backend:
# $BIN (LS_EBPF_BIN or the CLI; skip the script without it), the work
# directory $W (lab_workdir NAME) removed at exit after CMD (default: stop
# the ping load) ran in guest NODE, TAP counted as it goes, the guest
# kernel release in $kver.
ebpf_lab_setup() {
	BIN=${LS_EBPF_BIN:-$LS_BIN}
	[ -x "$BIN" ] || skip_all "$BIN not built (make tools)"
	lab_workdir "$1"
	lab_cleanup_at_exit "$2" "${3:-pkill -x ping}"
	plan_none
	kver=$(lab_kver)
}

# wait_listening FILE TRIES PAUSE: true once FILE (a responder's log the
# host sees) says "listening"; polls TRIES times, PAUSE seconds apart.
wait_listening() {
	local i
	for i in $(seq "$2"); do
		grep -q listening "$1" 2>/dev/null && return 0
		sleep "$3"
	done
	return 1
}

# lab_responder_start CMD: run the responder command line CMD in guest 1
# in the background, its pid in $W/resp.pid and its log (a fresh one) in
# $W/resp.log; true once it says it listens.
lab_responder_start() {
	rm -f "$W/resp.log"
	lab_bg 1 "$1 > $W/resp.log 2>&1 & echo \$! > $W/resp.pid; wait" >/dev/null
	lab_wait_listening 1 "$W/resp.log"
}

# lab_responder_stop: end the responder lab_responder_start started.
lab_responder_stop() {
	[ -s "$W/resp.pid" ] && lab_exec 1 "kill $(cat "$W/resp.pid") 2>/dev/null; true"
	rm -f "$W/resp.pid"
}

# lab_wait_listening NODE FILE: the same, read in guest NODE (150 x 0.2 s:
# a responder's first start after a boot loads its libraries cold over 9p).
lab_wait_listening() {
	local i
	for i in $(seq 150); do
		lab_exec "$1" "grep -q listening $2" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# blk_msi_irqs DIR: the MSI IRQs (comma-separated) of the block device
# holding DIR (virtio: the PCI parent's msi_irqs); empty when none.
blk_msi_irqs() {
	local src dev sys d irqs=
	src=$(findmnt -n -o SOURCE --target "$1" | head -1)
	dev=$(basename "$(readlink -f "$src")")
	sys=$(readlink -f "/sys/class/block/$dev")
	[ -e "$sys/partition" ] && sys=$(dirname "$sys")
	for d in "$sys/device/msi_irqs" "$sys/device/../msi_irqs"; do
		[ -d "$d" ] && { irqs=$(ls "$d" | sort -n | tr '\n' ',' | sed 's/,$//'); break; }
	done
	echo "$irqs"
}

# udp_load_py FILE: write a Python load to FILE: `python3 FILE N` sends N
# loopback UDP datagrams, the socket drained after each (a NET_RX softirq
# and a napi_poll each); with a third argument "time" it prints the
# nanoseconds the loop took.
udp_load_py() {
	cat > "$1" <<'PYEOF'
import socket, sys, time
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = r.getsockname()
t0 = time.monotonic_ns()
for i in range(n):
    s.sendto(b"x", a)
    try:
        while True:
            r.recv(64)
    except BlockingIOError:
        pass
if sys.argv[2:] == ["time"]:
    print(time.monotonic_ns() - t0)
PYEOF
}

# bench_build NAME: build the CLI's libraries, then tests/bench/NAME.c into
# $w/NAME, $w a scratch directory removed at exit.
bench_build() {
	make -s -C "$LS_TOP" tools >/dev/null
	w=$(mktemp -d)
	trap 'rm -rf "$w"' EXIT
	cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$LS_TOP" $(printf -- '-I%s ' "$LS_TOP"/tools "$LS_TOP"/tools/*/) \
		-o "$w/$1" "$LS_TOP/tests/bench/$1.c" "$LS_TOP/build/libls-core.a" -lm
}
