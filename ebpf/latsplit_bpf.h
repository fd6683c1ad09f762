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

/*
 * The tracepoints' programs, once as tp_btf (BTF-typed arguments) and once
 * as the raw_tp fallback (same bodies, untyped u64 arguments): X(tracepoint,
 * name, the handler's call, the tracepoint's arguments). The programs are
 * btf_NAME and raw_NAME; backend_ebpf.c turns them on and off by their place
 * in this list. A handler's first argument, ls_btf, is a constant of the
 * program (true in tp_btf): with it, kernel fields are plain loads there
 * and bpf_probe_read_kernel() calls only in the raw_tp fallback.
 */
#define LS_EBPF_TRACEPOINTS(X)								\
	X(irq_handler_entry, irq_entry, on_irq_entry(ls_btf, irq), int irq,			\
	  struct irqaction *action)							\
	X(irq_handler_exit, irq_exit, on_irq_exit(ls_btf, irq, action, ret), int irq,		\
	  struct irqaction *action, int ret)						\
	X(softirq_raise, softirq_raise, on_softirq_raise(ls_btf, vec), unsigned int vec)	\
	X(softirq_entry, softirq_entry, on_softirq_entry(ls_btf, vec), unsigned int vec)	\
	X(softirq_exit, softirq_exit, on_softirq_exit(ls_btf, vec), unsigned int vec)		\
	X(napi_poll, napi_poll, on_napi_poll(ls_btf, napi, work), struct napi_struct *napi,	\
	  int work, int budget)								\
	X(sched_switch, sched_switch, on_switch(ls_btf, preempt, prev, next), bool preempt,	\
	  struct task_struct *prev, struct task_struct *next)				\
	X(sched_wakeup, sched_wakeup, on_wakeup(ls_btf, p), struct task_struct *p)		\
	X(sched_waking, sched_waking, on_waking(ls_btf, p), struct task_struct *p)		\
	X(netif_receive_skb, rx_skb, on_skb(ls_btf, skb, false), struct sk_buff *skb)		\
	X(net_dev_start_xmit, tx_skb, on_skb(ls_btf, skb, true), struct sk_buff *skb,		\
	  struct net_device *dev)

/* Indexes of the counters map. */
enum ls_ebpf_counter {
	LS_EBPF_CNT_RECORDS	= 0,	/* records written to the ring */
	LS_EBPF_CNT_DROPS	= 1,	/* records lost: ring full */
	LS_EBPF_CNT_NAPI_UNTIMED = 2,	/* napi_poll outside NET_RX softirq */
	LS_EBPF_CNT_COMP_STALE	= 3,	/* COMPLETION older than the limit */
	LS_EBPF_CNT_UNORDERED	= 4,	/* interval ending before its start: dropped */
	LS_EBPF_NR_COUNTERS	= 5,
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
