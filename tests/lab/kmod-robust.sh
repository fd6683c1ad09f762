#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit.ko robustness: every malformed control write is refused with
# EINVAL/E2BIG and leaves the configuration as it was; racing writers get
# EBUSY and never a torn configuration; callers without root or without
# CAP_SYS_ADMIN are refused; a CPU goes offline and online while tracing
# under traffic with a reader attached (records stay valid); the module is
# loaded and unloaded under traffic with a reader in read() (rmmod is
# refused while the reader holds the file, the reader is ended by `disable`
# or a signal, then rmmod works). Ownership: the file that wrote `own`
# owns the module (others get EBUSY, config names the owner), its release
# disables tracing and frees the rings (after a still-open reader); a
# second `latsplit record -b kmod` is refused naming the first one's PID
# (`-b auto` takes eBPF instead), and
# kill -9 of the first leaves tracing off and the rings freed. Rings exist
# for online CPUs only; a CPU that comes online gets one. Afterwards the kernel log has no WARNING,
# BUG, Oops or lockdep report. Hotplug 10 times and 12 load/unload cycles
# on 6.1, 4 and 6 on the other kernels (lab_reps; the suite's budget).
# lab-kernels: all
# lab-smp: 2
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kmod-common.inc"

kmod_node_test kmod-robust
HOTPLUGS=$(lab_reps 10 4)
CYCLES=$(lab_reps 12 6)

lab_cleanup_at_exit 0 "pkill -x ping" \
	$N "pkill -f 'cat $KMOD_DIR/records'; echo 1 > /sys/devices/system/cpu/cpu1/online" $N "! grep -q '^latsplit ' /proc/modules || rmmod latsplit"

kmod_node_irqs $N
irq1=${irqs%%,*}

# --- bad input, racing writers, privileges --------------------------------
check "node$N: a valid configuration to compare against" \
	kmod_ctl $N "irqs $irqs\ncpus 0\nring 4\nenable\n"
kmod_tap $N bad-inputs "$irq1"
kmod_tap $N concurrent 4 60
check_fails "node$N: uid 65534 cannot write control" \
	lab_exec $N "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all sh -c 'echo disable > $KMOD_DIR/control'"
check_fails "node$N: uid 65534 cannot read hist" \
	lab_exec $N "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all cat $KMOD_DIR/hist"
out=$(lab_exec $N "setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin $KMOD_TOOL write disable" 2>&1)
if [ "$out" = EPERM ]; then
	ok "node$N: root without CAP_SYS_ADMIN: control write refused (EPERM)"
else
	not_ok "node$N: root without CAP_SYS_ADMIN: control write refused (EPERM)" "$out"
fi
check_fails "node$N: root without CAP_SYS_ADMIN cannot open records" \
	lab_exec $N "setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin timeout 5 cat $KMOD_DIR/records"
check "node$N: still enabled after the refused writes" \
	lab_exec $N "grep -qx 'enabled 1' $KMOD_DIR/config"

# --- ownership ----------------------------------------------------------------
kmod_ctl $N "disable\n" >/dev/null
kmod_tap $N owner
out=$(lab_exec_t 60 $N "B=$LS_BIN; D=$KMOD_DIR
	\$B record -b kmod -i eth0 --records /dev/null --ring-kib 256 -D 50s > /dev/null 2>&1 & p=\$!
	for i in \$(seq 100); do grep -qx 'enabled 1' \$D/config && break; sleep 0.1; done
	grep -x \"owner \$p\" \$D/config || echo 'not owned by record'
	\$B record -b kmod -i eth0 -D 1s > /dev/null 2> $W/second.err; echo second=\$?
	\$B record -b auto -i eth0 -D 1s -j > $W/auto.json 2> $W/auto.err; echo auto=\$?
	grep -o '\"backend\":\"[a-z]*\"' $W/auto.json; cat $W/auto.err
	kill -9 \$p; wait \$p 2>/dev/null
	grep -E '^(enabled|ring_kib|rings|owner) ' \$D/config | tr '\n' ' '
	echo; echo pid=\$p" 2>&1)
diag "$out"
pid=$(echo "$out" | sed -n 's/^pid=//p')
if echo "$out" | grep -qx "owner $pid" && echo "$out" | grep -qx "second=2"; then
	ok "node$N: latsplit record owns the module; a second record is refused (exit 2)"
else
	not_ok "node$N: latsplit record owns the module; a second record is refused (exit 2)" "$out"
fi
if echo "$out" | grep -qx "auto=0" && echo "$out" | grep -qx '"backend":"ebpf"'; then
	ok "node$N: -b auto beside the owner records with eBPF instead"
else
	not_ok "node$N: -b auto beside the owner records with eBPF instead" "$out"
fi
check "node$N: the refusal names the owner's PID $pid" \
	lab_exec $N "grep -q 'owned by process $pid' $W/second.err"
if echo "$out" | grep -qx "enabled 0 ring_kib 0 rings 0 owner none "; then
	ok "node$N: kill -9 of the owner: tracing off, rings freed, unowned"
else
	not_ok "node$N: kill -9 of the owner: tracing off, rings freed, unowned" "$out"
fi

# --- CPU hotplug while tracing ----------------------------------------------
if lab_exec $N "test -w /sys/devices/system/cpu/cpu1/online"; then
	check "node$N: trace cpus 0-1 with a reader attached" \
		lab_exec $N "printf 'disable\nirqs $irqs\ncpus 0-1\nring 1024\nreset\nenable\n' > $KMOD_DIR/control &&
			(cat $KMOD_DIR/records > $W/rec.bin &)"
	lab_bg 0 "ping -f -q -w 60 192.0.2.2 >/dev/null 2>&1" >/dev/null
	out=$(lab_exec_t 120 $N "set -e; C=/sys/devices/system/cpu/cpu1/online
		for i in \$(seq $HOTPLUGS); do
			echo 0 > \$C; sleep 0.3
			[ \$i = 1 ] && { printf 'cpus 1' > $KMOD_DIR/control 2>/dev/null && echo 'cpus 1 accepted while offline'; }
			echo 1 > \$C; sleep 0.3
		done; echo done" 2>&1)
	if [ "$(echo "$out" | tail -1)" = done ] && ! echo "$out" | grep -q accepted; then
		ok "node$N: cpu1 offline/online $HOTPLUGS times while tracing (offline cpu refused in cpus)"
	else
		not_ok "node$N: cpu1 offline/online $HOTPLUGS times while tracing" "$out"
	fi
	lab_exec 0 "pkill -x ping" >/dev/null 2>&1
	check "node$N: disable; reader exits; save hist" \
		lab_exec_t 60 $N "echo disable > $KMOD_DIR/control &&
			for i in \$(seq 100); do pgrep -f 'cat $KMOD_DIR/records' >/dev/null || break; sleep 0.2; done &&
			! pgrep -f 'cat $KMOD_DIR/records' >/dev/null && cat $KMOD_DIR/hist > $W/hist.bin"
	kmod_tap $N records $W $W/rec.bin
	out=$(lab_exec_t 60 $N "C=/sys/devices/system/cpu/cpu1/online; D=$KMOD_DIR
		echo 0 > \$C && printf 'ring 0\nring 32\n' > \$D/control && grep '^rings ' \$D/config
		echo 1 > \$C && grep '^rings ' \$D/config" 2>&1)
	if [ "$(echo $out)" = "rings 1 rings 2" ]; then
		ok "node$N: rings for online CPUs only; cpu1 coming online gets one"
	else
		not_ok "node$N: rings for online CPUs only; cpu1 coming online gets one" "$out"
	fi
else
	skip "node$N: cpu1 offline/online while tracing" "cpu1 is not hotpluggable in this guest"
fi

check "node$N: rmmod latsplit" lab_exec $N "rmmod latsplit"

# --- load/unload under traffic with a reader in read() ----------------------
# 200 pings/s (a flood starves the emulated CPUs). Under TCG each cycle costs
# seconds: attaching and detaching tracepoints patches kernel text, which
# makes the emulator drop its translated code.
lab_bg 0 "ping -q -i 0.005 -w 1500 192.0.2.2 >/dev/null 2>&1" >/dev/null
out=$(lab_exec_t 1800 $N "
	D=$KMOD_DIR
	for i in \$(seq $CYCLES); do
		insmod $KMOD_KO irqs=$irqs cpus=0-1 ring_kib=16 enable=1 || { echo \"insmod \$i failed\"; exit 1; }
		cat \$D/records > /dev/null & r=\$!
		for j in \$(seq 200); do
			[ \"\$(awk '\$1 == \"latsplit\" { print \$3 }' /proc/modules)\" -ge 1 ] && break; sleep 0.05
		done
		timeout 60 rmmod latsplit 2>/dev/null; rc=\$?
		[ \$rc = 1 ] || { echo \"rmmod \$i under an open reader: exit \$rc, want 1 (in use)\"; exit 1; }
		if [ \$((i % 2)) = 0 ]; then
			echo disable > \$D/control || { echo \"disable \$i failed\"; exit 1; }
			wait \$r || { echo \"reader \$i: read failed after disable\"; exit 1; }
		else
			kill \$r; wait \$r 2>/dev/null
		fi
		timeout 60 rmmod latsplit || { echo \"rmmod \$i failed\"; exit 1; }
	done; echo done" 2>&1)
lab_exec 0 "pkill -x ping" >/dev/null 2>&1
if [ "$(echo "$out" | tail -1)" = done ]; then
	ok "node$N: $CYCLES load/unload cycles under traffic with a reader (rmmod refused while it reads)"
else
	not_ok "node$N: $CYCLES load/unload cycles under traffic with a reader" "$out"
fi

kmod_dmesg_ok $N
kmod_dmesg_ok 0
done_testing
