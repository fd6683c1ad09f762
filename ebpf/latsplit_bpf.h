/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by ebpf/latsplit.bpf.c and tools/backend_ebpf.c (not ABI:
 * they only have to agree within one build).
 */
#ifndef LS_EBPF_LATSPLIT_BPF_H
#define LS_EBPF_LATSPLIT_BPF_H

/* Number of compacted histograms for n watched IRQs (see the hists map). */
#define LS_EBPF_NR_HIST(n)	(3 * (n) + (LS_NR_SLOTS - LS_SLOT_SOFTIRQ_WAIT))

/* Indexes of the counters map. */
enum ls_ebpf_counter {
	LS_EBPF_CNT_RECORDS	= 0,	/* records written to the ring */
	LS_EBPF_CNT_DROPS	= 1,	/* records lost: ring full */
	LS_EBPF_CNT_NAPI_UNTIMED = 2,	/* napi_poll outside NET_RX softirq */
	LS_EBPF_NR_COUNTERS	= 3,
};

/* Per-CPU state of the programs. */
struct ls_ebpf_cpu {
	__u64 irq_start;		/* open hardirq instance; 0 = none */
	__u32 irq;
	__s32 irq_idx;			/* watched index, -1 = not watched */
	__u32 irq_cont;			/* shared IRQ: another action follows */
	__u32 irq_ret;			/* OR of the actions' irqreturn */
	__u32 irq_raised_rx;		/* NET_RX raised inside the instance */
	__u32 irq_thread_pid;		/* thread woken by the instance */
	__u32 softirq_cur;		/* running vector + 1; 0 = none */
	__u32 softirq_nested;		/* hardirqs nested in that run */
	__u64 softirq_start;
	__u64 softirq_nested_ns;
	__u64 comp_start;		/* pending COMPLETION start; 0 = none */
	__u32 comp_idx;
	__u32 pad;
	__u64 napi_mark;		/* start of the next napi_poll */
	__u64 raise[LS_NR_SOFTIRQS];	/* first raise since the last entry */
};

/* A named task (WAKEUP, PREEMPT). */
struct ls_ebpf_task {
	__u64 runnable_since;		/* PREEMPT start; 0 = none */
	__u64 wake_pending;		/* WAKEUP start; 0 = none */
	__u32 oncpu;
	__u32 pad;
};

#endif /* LS_EBPF_LATSPLIT_BPF_H */
