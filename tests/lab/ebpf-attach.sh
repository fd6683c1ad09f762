#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# eBPF backend: attach and detach under traffic (200 pings/s from node1
# into node0; a flood starves the emulated CPU), alternating tp_btf and
# raw_tp, every fifth run with the record ring: 12 times on 6.1, 8 on the
# other kernels (lab_reps); every run must succeed and see the traffic, and afterwards
# `bpftool prog show`, `map show` and `link show` list exactly what they
# listed before (no leaked programs, maps or links), with a clean dmesg.
# lab-kernels: all
# lab-smp: any
. "$(dirname "$0")/../lib.sh"

RUNS=$(lab_reps 12 8)
ebpf_lab_setup ebpf-attach 1
lab_nic_irqs

cat > "$W/loop.sh" <<EOF
fail=0 quiet=0
for i in \$(seq $RUNS); do
	mode=tp_btf; [ \$((i % 2)) = 0 ] && mode=raw_tp
	rec=; [ \$((i % 5)) = 0 ] && rec="--records $W/recs.txt"
	if ! LS_EBPF_ATTACH=\$mode $BIN record --backend ebpf --irq $irqs -D 0.3 --json \$rec \
		> $W/run.json 2> $W/run.err; then
		fail=\$((fail + 1)); echo "run \$i (\$mode): failed: \$(cat $W/run.err)"
		continue
	fi
	grep -q '"stage":"hardirq"' $W/run.json || { quiet=\$((quiet + 1)); echo "run \$i (\$mode): no hardirq seen"; }
done
echo "runs=$RUNS failed=\$fail quiet=\$quiet"
[ \$fail = 0 ] && [ \$quiet = 0 ]
EOF

snap() { lab_exec 0 "bpftool prog show; echo ==; bpftool map show; echo ==; bpftool link show" 2>&1; }
before=$(snap)
lab_bg 1 "ping -i 0.005 -q -w 600 192.0.2.1 > /dev/null 2>&1" > /dev/null
sleep 1
start=$(date +%s)
if out=$(lab_exec_t 900 0 "sh $W/loop.sh" 2>&1); then
	ok "$kver: $RUNS attach/detach cycles under traffic, each saw hardirqs ($(( $(date +%s) - start )) s)"
	diag "$(echo "$out" | tail -1)"
else
	not_ok "$kver: $RUNS attach/detach cycles under traffic, each saw hardirqs" "$out"
fi
lab_exec 1 "pkill -x ping" >/dev/null 2>&1
after=$(snap)
if [ "$before" = "$after" ]; then
	ok "$kver: no programs, maps or links left behind"
else
	not_ok "$kver: no programs, maps or links left behind" "before:" "$before" "after:" "$after"
fi
check "$kver: dmesg has no warnings" dmesg_clean 0
done_testing
