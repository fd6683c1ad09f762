/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by ebpf/latsplit.bpf.c and tools/backend_ebpf.c (not ABI:
 * they only have to agree within one build).
 */
#ifndef LS_EBPF_LATSPLIT_BPF_H
#define LS_EBPF_LATSPLIT_BPF_H

/* An interrupt whose NAPI poll has not come within this is dropped (as kmod). */
#define LS_EBPF_COMPLETION_MAX_NS	1000000000ull

/* Number of compacted histograms for n watched IRQs (see the hists map). */
#define LS_EBPF_NR_HIST(n)	(3 * (n) + (LS_NR_SLOTS - LS_SLOT_SOFTIRQ_WAIT))

/* Indexes of the counters map. */
enum ls_ebpf_counter {
	LS_EBPF_CNT_RECORDS	= 0,	/* records written to the ring */
	LS_EBPF_CNT_DROPS	= 1,	/* records lost: ring full */
	LS_EBPF_CNT_NAPI_UNTIMED = 2,	/* napi_poll outside NET_RX softirq */
	LS_EBPF_CNT_COMP_STALE	= 3,	/* COMPLETION older than the limit */
	LS_EBPF_NR_COUNTERS	= 4,
};

/* Per-CPU state of the programs. */
struct ls_ebpf_cpu {
	__u64 irq_start;		/* open hardirq instance; 0 = none */
	__u32 irq;
	__s32 irq_idx;			/* watched index, -1 = not watched */
	__u32 irq_cont;			/* shared IRQ: another action follows */
	__u32 irq_ret;			/* OR of the actions' irqreturn */
	__u32 irq_thread_pid;		/* thread woken by the instance */
	__u32 softirq_cur;		/* running vector + 1; 0 = none */
	__u32 softirq_nested;		/* hardirqs nested in that run */
	__u32 napi_nested;		/* softirq_nested at the last poll end */
	__u16 run_flags;		/* LS_REC_F_RT_THREAD: run in a thread */
	__u16 pad16;
	__u32 comp_pending;		/* bit i: COMPLETION of IRQ i pending */
	__u64 softirq_start;
	__u64 napi_mark;		/* start of the next napi_poll */
	__u64 comp_ts;			/* inside ib_uverbs_comp_handler since */
	__u64 raise[LS_NR_SOFTIRQS];	/* first raise since the last entry */
	__u64 comp_start[LS_MAX_IRQS];	/* oldest unprocessed interrupt */
};

/* A named task (WAKEUP, PREEMPT); updated from any CPU with atomics. */
struct ls_ebpf_task {
	__u64 wake_start;		/* WAKEUP start; 0 = none */
	__u64 preempt_start;		/* PREEMPT start << 1 | preempted; 0 = none */
};

#endif /* LS_EBPF_LATSPLIT_BPF_H */
