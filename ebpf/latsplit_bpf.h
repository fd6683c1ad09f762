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

/*
 * The observer (struct ls_ebpf_obs) times one program run in
 * LS_EBPF_OBS_SAMPLE_WEIGHT, drawn at random, and counts every run; the
 * time of a sampled run counts LS_EBPF_OBS_SAMPLE_WEIGHT times in ns (the
 * first run of each CPU and handler since open or reset is always timed
 * and counts once), so ns estimates the time of all runs without bias.
 * LS_EBPF_OBS_SAMPLE_SHIFT 0 times every run. Documentation/ebpf.rst,
 * "The observer's own cost".
 */
#define LS_EBPF_OBS_SAMPLE_SHIFT	3
#define LS_EBPF_OBS_SAMPLE_WEIGHT	(1ull << LS_EBPF_OBS_SAMPLE_SHIFT)

/*
 * One (CPU, handler) cell of the observer map. hits and ns first, as in
 * struct ls_obs_cell, which user space reports (minus its reset's reading).
 */
struct ls_ebpf_obs {
	__u64 hits;			/* every run */
	__u64 ns;			/* estimated time of all runs (sampled, scaled) */
	__u64 timed;			/* runs sampled: the estimate's basis */
	__u64 timed_ns;			/* their exclusive time, not scaled */
	__u64 gen;			/* obs_gen at the cell's last run */
	/* the run in progress (a cell's runs never overlap): obs_enter() */
	__u64 run_t0;			/* its span's start; 0 = not timed */
	__u64 run_acc0;			/* the CPU's obs_acc at run_t0 */
	__u64 run_w;			/* its weight in ns; 0 = not sampled */
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
	/*
	 * The observer's exclusive time on this CPU: every timed run adds
	 * its own time minus that of the runs nested in it (obs_exit()).
	 */
	__u64 obs_acc;
	__u64 obs_rng;			/* the sampling draw's LCG state */
	__u32 obs_open;			/* timed runs in progress on this CPU */
	__u32 obs_pad;
	__u64 raise[LS_NR_SOFTIRQS];	/* first raise since the last entry */
	__u64 comp_start[LS_MAX_IRQS];	/* oldest unprocessed interrupt */
};

/* A named task (WAKEUP, PREEMPT); updated from any CPU with atomics. */
struct ls_ebpf_task {
	__u64 wake_start;		/* WAKEUP start; 0 = none */
	__u64 preempt_start;		/* PREEMPT start << 1 | preempted; 0 = none */
};

#endif /* LS_EBPF_LATSPLIT_BPF_H */
