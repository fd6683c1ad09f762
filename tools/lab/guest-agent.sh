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
mkdir -p "$cmds"
exec 9<> <(:)
declare -A seen

# run_one ID: run the command file ID.cmd in its own session.
run_one() {
	local id=$1 dir cwd
	cwd=$(<"$cmds/$id.cwd") 2>/dev/null || cwd=/
	(
		cd "$cwd" 2>/dev/null || cd /
		setsid bash "$cmds/$id.cmd" > "$cmds/$id.out" 2> "$cmds/$id.err" < /dev/null &
		pid=$!
		echo "$pid" > "$cmds/$id.pid"
		wait "$pid"
		rc=$?
		echo "$rc" > "$cmds/$id.rc.tmp" && mv "$cmds/$id.rc.tmp" "$cmds/$id.rc"
	) &
}

while :; do
	for f in "$cmds"/*.cmd; do
		[ -e "$f" ] || continue
		id=${f##*/}; id=${id%.cmd}
		[ -n "${seen[$id]:-}" ] && continue
		seen[$id]=1
		if [ "$id" = poweroff ]; then
			sync; echo o > /proc/sysrq-trigger
		fi
		run_one "$id"
	done
	for f in "$cmds"/*.kill; do
		[ -e "$f" ] || continue
		id=${f##*/}; id=${id%.kill}
		pid=$(<"$cmds/$id.pid") 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
		rm -f "$f"
	done
	read -r -t 0.1 -u 9 _
done
