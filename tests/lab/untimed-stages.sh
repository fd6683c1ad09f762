#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel work the backends cannot time is counted, never silent. Under a
# ping load into node0, `latsplit record` on node0 with each backend:
# - NAPI in NET_RX softirq (eth0's `threaded` 0, the default): no untimed
#   poll, and NAPI_POLL and COMPLETION are timed;
# - threaded NAPI (`threaded` 1): every poll of eth0 runs in a kthread
#   outside NET_RX, so the recording counts untimed polls, at least half the
#   eth0 interrupts it recorded, and times no NAPI_POLL; /proc/interrupts,
#   read before and after the whole command, bounds those interrupts from
#   above (the eBPF backend's load time falls outside the recording: with
#   it, /proc's count was 2.2x the untimed polls, so it cannot be the
#   denominator);
# - latsplit.ko loaded with completion_max_us=1: every pending COMPLETION is
#   older than the limit at its poll, so none is timed and the stale count
#   is at least half of the eth0 interrupts recorded (bounded the same way);
# and breakdown's JSON of a threaded-NAPI prober is marked incomplete
# naming the untimed polls. dmesg stays clean.
# lab-kernels: 6.1 6.12
# lab-smp: 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kmod-common.inc"

B=$LS_BIN
kmod_require
lab_workdir untimed-stages
lab_cleanup_at_exit 0 "echo 0 > /sys/class/net/eth0/threaded; ! grep -q '^latsplit ' /proc/modules || rmmod latsplit" \
	1 "pkill -x ping"
plan_none
kver=$(lab_kver)
lab_drop_caches
lab_nic_irqs
[ -e "/sys/class/net/eth0/threaded" ] || lab_exec 0 "test -e /sys/class/net/eth0/threaded" ||
	{ not_ok "$kver: /sys/class/net/eth0/threaded exists"; done_testing; }

# One recording on node0: "untimed stale polls completions irqdelta".
cat > "$W/rec.sh" <<EOF
set -e
be=\$1 threaded=\$2
echo \$threaded > /sys/class/net/eth0/threaded
irqsum() { awk -v l=",$irqs," 'index(l, "," substr(\$1, 1, length(\$1) - 1) ",") { s += \$2 } END { print s + 0 }' /proc/interrupts; }
a=\$(irqsum)
$B record -b \$be --irq $irqs -D 1.5 --json > $W/rec-\$be-\$threaded.json
b=\$(irqsum)
echo 0 > /sys/class/net/eth0/threaded
python3 - "$W/rec-\$be-\$threaded.json" \$((b - a)) <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = {"napi_poll": 0, "completion": 0, "hardirq": 0}
for c in d["cpus"]:
    for s in c["slots"]:
        if s["stage"] in n:
            n[s["stage"]] += s["count"]
print(d["napi_untimed"], d["completions_stale"], n["napi_poll"], n["completion"], sys.argv[2],
      n["hardirq"])
PY
EOF

check "$kver: insmod latsplit.ko" kmod_load 0
lab_bg 1 "ping -i 0.005 -q -w 300 192.0.2.1 > /dev/null 2>&1" > /dev/null
sleep 1
for be in kmod ebpf; do
	for th in 0 1; do
		if ! out=$(lab_exec 0 "sh $W/rec.sh $be $th" 2>&1); then
			not_ok "$kver $be threaded=$th: record" "$out"
			continue
		fi
		read -r untimed stale polls comps irqd hard <<<"$(tail -1 <<<"$out")"
		what="untimed $untimed, stale $stale, NAPI_POLL $polls, COMPLETION $comps, eth0 HARDIRQ $hard, /proc/interrupts $irqd"
		if [ "$th" = 0 ]; then
			check "$kver $be, NAPI in softirq: no untimed poll, NAPI_POLL and COMPLETION timed ($what)" \
				test "$untimed" = 0 -a "$polls" -gt 0 -a "$comps" -gt 0
		else
			check "$kver $be, threaded NAPI: untimed polls >= half the recorded interrupts, which /proc/interrupts bounds; no NAPI_POLL ($what)" \
				test "$hard" -gt 50 -a "$hard" -le "$irqd" -a $((2 * untimed)) -ge "$hard" -a "$polls" = 0
		fi
	done
done

check "$kver: reload latsplit.ko with completion_max_us=1" kmod_load 0 completion_max_us=1
if out=$(lab_exec 0 "sh $W/rec.sh kmod 0" 2>&1); then
	read -r untimed stale polls comps irqd hard <<<"$(tail -1 <<<"$out")"
	check "$kver kmod, completion_max_us=1: no COMPLETION timed, stale >= half the recorded interrupts, which /proc/interrupts bounds (stale $stale, COMPLETION $comps, NAPI_POLL $polls, eth0 HARDIRQ $hard, /proc/interrupts $irqd)" \
		test "$hard" -gt 50 -a "$hard" -le "$irqd" -a "$comps" = 0 -a $((2 * stale)) -ge "$hard"
else
	not_ok "$kver kmod, completion_max_us=1: record" "$out"
fi
check "$kver: reload latsplit.ko with the default limit" kmod_load 0

# breakdown: a prober whose NAPI is threaded loses its NAPI time.
PORT=19671
lab_bg 1 "$B breakdown -p $PORT -u 20 -b none --insecure --listen-timeout 120 > $W/resp.log 2>&1" > /dev/null
lab_exec 0 "echo 1 > /sys/class/net/eth0/threaded" >/dev/null
lab_wait_listening 1 "$W/resp.log" || diag "responder: $(cat "$W/resp.log")"
if out=$(lab_exec_t 600 0 "$B breakdown -p $PORT -u 20 -b kmod -n 200 --json 192.0.2.2 > $W/bd.json" 2>&1); then
	check "$kver breakdown: threaded NAPI on the prober marks the split incomplete, naming the untimed polls" \
		python3 -c "
import json, sys
d = json.load(open('$W/bd.json'))
v = d['verdict']
ok = v['complete'] is False and 'prober: ' in (v['losses'] or '') and 'NAPI polls outside NET_RX' in v['losses']
print(v['losses'])
sys.exit(0 if ok else 1)"
else
	not_ok "$kver breakdown with threaded NAPI on the prober" "$out"
fi
lab_exec 0 "echo 0 > /sys/class/net/eth0/threaded" >/dev/null
check "$kver: dmesg has no warnings" dmesg_clean 0
done_testing
