#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# latsplit lab: the guest agent, PID 1 inside each lab node.
#
# Sets the node up (network, Soft-RoCE), announces readiness, then runs the
# commands the host drops into the shared directory: each command runs in
# its own session, concurrently with others; its stdout, stderr and exit
# status are written back beside it. Idle polling uses no forks.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

arg() { local a; for a in $(</proc/cmdline); do case $a in "ls.$1="*) echo "${a#*=}"; return;; esac; done; }
node=$(arg node); nodes=$(arg nodes); shared=$(arg shared); ip4=$(arg ip); peer=$(arg peer)
state=$shared/state
log() { echo "lab-agent[node$node]: $*" > /dev/console; }
fatal() { log "FATAL: $*"; echo "$*" > "$state/node$node.failed" 2>/dev/null; echo o > /proc/sysrq-trigger; }

mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
# devtmpfs has no /dev/fd: without it bash's <(...) fails.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mkdir -p "$shared"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none lsshared "$shared" ||
	{ log "cannot mount the shared directory"; echo o > /proc/sysrq-trigger; }
hostname "node$node"
ulimit -l unlimited
ip link set lo up

# Network and Soft-RoCE.
modprobe virtio_net 2>/dev/null
for i in $(seq 100); do [ -e /sys/class/net/eth0 ] && break; sleep 0.05; done
[ -e /sys/class/net/eth0 ] || fatal "no eth0"
ip addr add "$ip4/24" dev eth0 || fatal "ip addr"
ip link set eth0 up || fatal "link up"
if [ "$nodes" = 2 ]; then
	modprobe rdma_rxe || fatal "modprobe rdma_rxe"
	modprobe ib_uverbs; modprobe rdma_ucm
	rdma link add rxe0 type rxe netdev eth0 || fatal "rdma link add rxe0"
	for i in $(seq 200); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
		sleep 0.05
	done
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state || fatal "rxe0 port not ACTIVE"
	# Wait until the peer answers so the first test does not race ARP.
	for i in $(seq 100); do ping -c1 -W1 "$peer" >/dev/null 2>&1 && break; done
fi
uname -r > "$state/node$node.ready.tmp" && mv "$state/node$node.ready.tmp" "$state/node$node.ready"
log "ready ($(uname -r))"

cmds=$shared/cmd/node$node
queue=$cmds/queue
mkdir -p "$queue"
# The wait: the host writes a byte to the virtio-serial port "ls.agent"
# after each marker, so a read on it returns as soon as there is work;
# without the port (an older lab), a read timing out on a FIFO held open
# for writing by ourselves, which never delivers data nor EOF (a sleep
# without a fork), and the queue is read every 0.1 s.
wake= idle=0.1
modprobe virtio_console 2>/dev/null
for p in /sys/class/virtio-ports/*; do
	[ "$(cat "$p/name" 2>/dev/null)" = ls.agent ] && wake=/dev/${p##*/}
done
if [ -n "$wake" ] && exec 9< "$wake"; then
	idle=1
	log "wake-ups on $wake"
else
	mkfifo /run/lab-agent.wait && exec 9<> /run/lab-agent.wait || fatal "no wait FIFO"
fi
declare -A seen
set -m

# run_cmd FILE: source the command FILE in this (forked) shell as a fresh
# bash script would run it: no positional parameters, none of the agent's
# options, variables or functions.
run_cmd() {
	local __ls_cmd=$1
	set -- && set +u +m
	unset -v node nodes shared ip4 peer state cmds queue seen f id cwd
	unset -f arg log fatal run_one kill_one
	. "$__ls_cmd"
}

# run_one ID: run the command file ID.cmd as a job of its own (set -m: its
# own process group, which kill_one ends whole). Forks only, no exec of its
# own: under TCG exec'ing bash costs 0.2 s (a fork 10 ms), and tests run
# thousands of commands. The job writes its exit status itself; the host
# waits for a non-empty ID.rc and removes the marker once ID.pid shows
# the job started.
run_one() {
	local id=$1 cwd=/
	read -r cwd < "$cmds/$id.cwd" 2>/dev/null || cwd=/
	{
		cd "$cwd" 2>/dev/null || cd /
		( run_cmd "$cmds/$id.cmd" ) > "$cmds/$id.out" 2> "$cmds/$id.err" < /dev/null
		echo "$?" > "$cmds/$id.rc"
	} &
	echo "$!" > "$cmds/$id.pid"
}

# kill_one ID: end command ID's whole process group (rare: a timeout).
kill_one() {
	local id=$1 pid
	read -r pid < "$cmds/$id.pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
	rm -f "$queue/$id.kill"
}

# The host puts a marker per request into queue/ (ID to run ID.cmd,
# ID.kill to end it, poweroff); the host removes a run marker once the
# job started, the agent a kill marker once acted on; results stay
# beside the commands. queue/ is empty when idle, so a poll costs one
# small readdir over 9p and no fork, however many commands ran before:
# the agent must not steal the CPU whose latency the tests measure.
# Between wake-ups the queue is read every $idle s as well (a lost byte
# costs that much, never a command).
while :; do
	for f in "$queue"/*; do
		[ -e "$f" ] || continue
		id=${f##*/}
		case $id in
		poweroff) sync; echo o > /proc/sysrq-trigger ;;
		*.kill) kill_one "${id%.kill}" ;;
		*)
			[ -n "${seen[$id]:-}" ] && continue
			seen[$id]=1
			run_one "$id" ;;
		esac
	done
	read -r -t "$idle" -n 1 -u 9 _
	case $? in
	0) ;;
	1)	# EOF: the port is gone; read the queue every 0.1 s from now on.
		log "wake-up port closed: polling"
		idle=0.1
		{ [ -p /run/lab-agent.wait ] || mkfifo /run/lab-agent.wait; } &&
			exec 9<> /run/lab-agent.wait || fatal "no wait FIFO"
		continue ;;
	*) continue ;;
	esac
	# A byte: more may be queued, one per marker; take them all.
	while read -r -t 0 -u 9 && read -r -t 1 -n 1 -u 9 _; do :; done
done
