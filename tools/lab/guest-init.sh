#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# latsplit lab: initramfs /init. Mounts the host's root read-only over
# virtio-9p with a tmpfs overlay and switches to it, running the lab agent
# from the host's tree as PID 1. Never returns; powers off on failure.
bb=/bin/busybox
die() { echo "latsplit-lab-init: $*" >&2; $bb sleep 1; echo o > /proc/sysrq-trigger; $bb poweroff -f; }

$bb mkdir -p /proc /sys /dev /mnt/lower /mnt/rw /mnt/root
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev

agent= ; shared=
for a in $($bb cat /proc/cmdline); do
	case "$a" in
	ls.agent=*) agent=${a#ls.agent=} ;;
	ls.shared=*) shared=${a#ls.shared=} ;;
	esac
done
[ -n "$agent" ] || die "no ls.agent= on the kernel command line"

while read -r m args; do
	[ -n "$m" ] || continue
	$bb insmod "$m" $args || die "insmod $m failed"
done < /modules.list

$bb mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /mnt/lower ||
	die "cannot mount the host root over virtio-9p"
$bb mount -t tmpfs -o size=768m,mode=0755 tmpfs /mnt/rw || die "tmpfs"
$bb mkdir -p /mnt/rw/upper /mnt/rw/work
$bb mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay /mnt/root ||
	die "cannot mount the overlay root"
for d in proc sys dev; do
	$bb mount --move /$d /mnt/root/$d || die "move /$d"
done
exec $bb switch_root /mnt/root /bin/bash "$agent"
