#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: all
# lab-smp: any
# latsplit.ko built by kbuild for the guest's own kernel loads and unloads
# cleanly: no taint beyond out-of-tree (O) and unsigned (E), clean dmesg.
. "$(dirname "$0")/../lib.sh"
plan 5

rel=$(lab_kver)
ko=$LS_TOP/build/kmod/$rel/kmod/latsplit.ko
[ -r "$ko" ] || { not_ok "latsplit.ko built for $rel" "missing $ko: run make modules-all"; done_testing; }
ok "latsplit.ko built for $rel"
check "modinfo reports vermagic $rel" lab_exec 0 "modinfo -F vermagic $ko | grep -q '^$rel '"
before=$(lab_exec 0 'cat /proc/sys/kernel/tainted')
if lab_exec 0 "insmod $ko && grep -q '^latsplit ' /proc/modules && rmmod latsplit && ! grep -q '^latsplit ' /proc/modules"; then
	ok "insmod + rmmod on $rel"
else
	not_ok "insmod + rmmod on $rel"
fi
after=$(lab_exec 0 'cat /proc/sys/kernel/tainted')
# Only TAINT_OOT_MODULE (4096) and TAINT_UNSIGNED_MODULE (8192) may appear.
if [ $(((after & ~before) & ~(4096 | 8192))) -eq 0 ]; then
	ok "taint after load is only out-of-tree/unsigned (before $before, after $after)"
else
	not_ok "unexpected taint" "before $before, after $after"
fi
check "dmesg has no warning, oops or lockdep report" dmesg_clean 0
done_testing
