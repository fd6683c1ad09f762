/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * latsplit ABI: shared by the kernel module (kmod/), the eBPF backend
 * (ebpf/) and the command-line tool (tools/).
 *
 * Every timestamp is CLOCK_MONOTONIC in nanoseconds (ktime_get_ns() in the
 * kernel, bpf_ktime_get_ns() in BPF, clock_gettime(CLOCK_MONOTONIC) in user
 * space), so kernel records and probe samples line up without conversion.
 *
 * The header compiles in three worlds: the kernel (__KERNEL__), BPF programs
 * (__bpf__, after vmlinux.h) and user space (<linux/types.h>).
 */
#ifndef _UAPI_LATSPLIT_H
#define _UAPI_LATSPLIT_H

#if !defined(__KERNEL__) && !defined(__bpf__) && !defined(__VMLINUX_H__)
#include <linux/types.h>
#endif

/* Bumped on any incompatible change of a structure or of a control verb. */
#define LATSPLIT_ABI_VERSION	2

/*
 * Stages: what "processing" is made of. The numbering is ABI.
 *
 * HARDIRQ		irq_handler_entry -> irq_handler_exit, watched IRQs only.
 *			id = IRQ number.
 * SOFTIRQ_WAIT		softirq_raise -> softirq_entry (NET_TX, NET_RX, TASKLET,
 *			IRQ_POLL). id = softirq vector.
 * SOFTIRQ_RUN		softirq_entry -> softirq_exit, same vectors. Includes
 *			hardirqs that nest inside the softirq (see
 *			Documentation/methodology.rst); id = vector.
 * NAPI_POLL		one napi_poll call: start -> return. id = napi id,
 *			aux = work done (packets) in that poll.
 * COMPLETION		watched NIC hardirq entry -> the napi_poll that
 *			followed it on that CPU returned ("DMA done ->
 *			processed"). id = IRQ number, aux = work.
 * WAKEUP		RDMA completion event queued (ib_uverbs_comp_handler)
 *			-> the named waiting task runs again. id = pid.
 * INTERFERENCE		any hardirq or softirq time on a watched CPU. id = IRQ
 *			number for hardirqs, LS_ID_SOFTIRQ_BASE + vector for
 *			softirqs.
 * PREEMPT		a named task runnable but not running: switched out
 *			while runnable (or woken) -> back on a CPU. id = pid.
 * IRQ_THREAD		PREEMPT_RT and threaded IRQs: hardirq entry -> the
 *			IRQ's thread (or ksoftirqd) runs. id = IRQ number.
 * RX_PKT		an instant, not an interval (start == end): a RoCEv2
 *			packet (UDP port 4791) entered the stack on this CPU
 *			(netif_receive_skb). id = BTH destination QP, aux =
 *			PSN | opcode << 24. No histogram; it ties the receive
 *			path's records to the probe sample whose packet they
 *			carried (causal attribution, see methodology.rst).
 * DELIVER		never emitted by a backend: user space derives it per
 *			sample, from the message's last packet's RX_PKT to the
 *			application seeing the message (the message was in
 *			the host: Soft-RoCE's work items, the completion's
 *			write, the application's next look).
 * TX_PKT		an instant like RX_PKT: a RoCEv2 packet left the stack
 *			for the NIC's driver on this CPU (net_dev_start_xmit).
 *			id = BTH destination QP, aux = PSN | opcode << 24.
 * SEND			never emitted by a backend: user space derives it per
 *			sample, from the application posting its message to
 *			the TX_PKT of the message's last packet (Soft-RoCE's
 *			requester work, the qdisc: the message was still in
 *			the host).
 */
enum ls_stage {
	LS_STAGE_HARDIRQ	= 0,
	LS_STAGE_SOFTIRQ_WAIT	= 1,
	LS_STAGE_SOFTIRQ_RUN	= 2,
	LS_STAGE_NAPI_POLL	= 3,
	LS_STAGE_COMPLETION	= 4,
	LS_STAGE_WAKEUP		= 5,
	LS_STAGE_INTERFERENCE	= 6,
	LS_STAGE_PREEMPT	= 7,
	LS_STAGE_IRQ_THREAD	= 8,
	LS_STAGE_RX_PKT		= 9,
	LS_STAGE_DELIVER	= 10,
	LS_STAGE_TX_PKT		= 11,
	LS_STAGE_SEND		= 12,
	LS_NR_STAGES		= 13,
};

/* Initializer of a name table indexed by enum ls_stage. */
#define LS_STAGE_NAMES {					\
	[LS_STAGE_HARDIRQ]	= "hardirq",			\
	[LS_STAGE_SOFTIRQ_WAIT]	= "softirq_wait",		\
	[LS_STAGE_SOFTIRQ_RUN]	= "softirq_run",		\
	[LS_STAGE_NAPI_POLL]	= "napi_poll",			\
	[LS_STAGE_COMPLETION]	= "completion",			\
	[LS_STAGE_WAKEUP]	= "wakeup",			\
	[LS_STAGE_INTERFERENCE]	= "interference",		\
	[LS_STAGE_PREEMPT]	= "preempt",			\
	[LS_STAGE_IRQ_THREAD]	= "irq_thread",			\
	[LS_STAGE_RX_PKT]	= "rx_pkt",			\
	[LS_STAGE_DELIVER]	= "deliver",			\
	[LS_STAGE_TX_PKT]	= "tx_pkt",			\
	[LS_STAGE_SEND]		= "send",			\
}

/* Softirq vectors as the kernel numbers them (include/linux/interrupt.h). */
#define LS_SOFTIRQ_HI		0
#define LS_SOFTIRQ_TIMER	1
#define LS_SOFTIRQ_NET_TX	2
#define LS_SOFTIRQ_NET_RX	3
#define LS_SOFTIRQ_BLOCK	4
#define LS_SOFTIRQ_IRQ_POLL	5
#define LS_SOFTIRQ_TASKLET	6
#define LS_SOFTIRQ_SCHED	7
#define LS_SOFTIRQ_HRTIMER	8
#define LS_SOFTIRQ_RCU		9
#define LS_NR_SOFTIRQS		10
/* The vectors the network stages watch. */
#define LS_SOFTIRQ_WATCHED_MASK	((1u << LS_SOFTIRQ_NET_TX) | \
				 (1u << LS_SOFTIRQ_NET_RX) | \
				 (1u << LS_SOFTIRQ_IRQ_POLL) | \
				 (1u << LS_SOFTIRQ_TASKLET))
/* INTERFERENCE ids for softirqs are offset so they never collide with IRQs. */
#define LS_ID_SOFTIRQ_BASE	0x40000000u

/* Limits shared by both backends. */
#define LS_MAX_IRQS		32	/* watched IRQ numbers */
#define LS_MAX_TASKS		16	/* named tasks (pids) */
#define LS_MAX_CPUS		256	/* cpu ids usable in masks */
#define LS_CPUMASK_WORDS	(LS_MAX_CPUS / 64)
/*
 * A record ring wakes its reader only once 1/LS_RING_WAKE_DIV of it is
 * full; below that the reader collects on its own timeout. Waking it per
 * record put the reader on the probe's CPU at every sample, and its own
 * context switches emitted the next records: a loop that multiplied the
 * latency being measured.
 */
#define LS_RING_WAKE_DIV	4

/*
 * Log-linear histogram of nanoseconds (HDR-style). Values below
 * LS_HIST_SUB are exact; above, each power of two is split into LS_HIST_SUB
 * equal sub-buckets, so a bucket is at most 1/LS_HIST_SUB = 6.25 % wide
 * and its midpoint is within 3.2 % of any value in it. Values with their
 * top bit at or above LS_HIST_MAX_BITS (>= 2^36 ns, 68.7 s) land in the
 * last bucket.
 */
#define LS_HIST_SUB_BITS	4
#define LS_HIST_SUB		(1u << LS_HIST_SUB_BITS)
#define LS_HIST_MAX_BITS	36
#define LS_HIST_NR_BUCKETS	((LS_HIST_MAX_BITS - LS_HIST_SUB_BITS + 1) * LS_HIST_SUB)

struct ls_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 buckets[LS_HIST_NR_BUCKETS];
};

/* Index of the most significant set bit of v (v != 0); no builtins so BPF can use it. */
static inline __u32 ls_fls64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8)  { v >>= 8;  r += 8; }
	if (v >> 4)  { v >>= 4;  r += 4; }
	if (v >> 2)  { v >>= 2;  r += 2; }
	if (v >> 1)  { r += 1; }
	return r;
}

/* Bucket index of value v (ns). */
static inline __u32 ls_hist_bucket(__u64 v)
{
	__u32 msb;

	if (v < LS_HIST_SUB)
		return (__u32)v;
	msb = ls_fls64(v);
	if (msb >= LS_HIST_MAX_BITS)
		return LS_HIST_NR_BUCKETS - 1;
	return (msb - LS_HIST_SUB_BITS + 1) * LS_HIST_SUB +
	       (__u32)((v >> (msb - LS_HIST_SUB_BITS)) & (LS_HIST_SUB - 1));
}

/* Smallest value that falls in bucket b. */
static inline __u64 ls_hist_bucket_lo(__u32 b)
{
	__u32 oct, sub;

	if (b < LS_HIST_SUB)
		return b;
	oct = b / LS_HIST_SUB;		/* >= 1 */
	sub = b % LS_HIST_SUB;
	return ((__u64)(LS_HIST_SUB + sub)) << (oct - 1);
}

/* One past the largest value that falls in bucket b. */
static inline __u64 ls_hist_bucket_hi(__u32 b)
{
	if (b < LS_HIST_SUB)
		return (__u64)b + 1;
	return ls_hist_bucket_lo(b) + (1ull << (b / LS_HIST_SUB - 1));
}

/*
 * Interval record: one stage instance, emitted to the record ring when
 * records are enabled. 32 bytes, naturally aligned.
 */
struct ls_record {
	__u64 start_ns;
	__u64 end_ns;
	__u32 cpu;
	__u16 stage;		/* enum ls_stage */
	__u16 flags;		/* LS_REC_F_* */
	__u32 id;		/* see enum ls_stage */
	__u32 aux;		/* NAPI work, nested-irq count, ... */
};

#define LS_REC_F_NESTED		0x0001	/* run time includes nested hardirqs */
#define LS_REC_F_RT_THREAD	0x0002	/* served by a thread (PREEMPT_RT / threadirqs) */
#define LS_REC_F_PREEMPTED	0x0004	/* PREEMPT began at a preemption, not a wakeup */
/*
 * On a HARDIRQ or SOFTIRQ_RUN record of an INTERFERENCE CPU: the same
 * interval is INTERFERENCE too (id the IRQ, or LS_ID_SOFTIRQ_BASE + the
 * vector; same aux and flags). latsplit.ko writes one record for both;
 * its reader (the tool's kmod backend) hands on the two, this flag clear.
 */
#define LS_REC_F_INTF		0x0008

/* RX_PKT: the RoCEv2 UDP port, and the fields of a record's aux. */
#define LS_ROCE_UDP_PORT	4791
#define LS_RX_PSN(aux)		((aux) & 0xffffff)
#define LS_RX_OPCODE(aux)	((aux) >> 24)
#define LS_RX_AUX(psn, op)	(((psn) & 0xffffff) | ((__u32)(op) << 24))

/*
 * Histogram slots per CPU: which histogram a (stage, id) pair lands in.
 * HARDIRQ, COMPLETION and IRQ_THREAD have one slot per watched IRQ (index
 * in the watched list); SOFTIRQ_WAIT/RUN one per vector; the others one slot.
 */
#define LS_SLOT_HARDIRQ		0
#define LS_SLOT_COMPLETION	(LS_SLOT_HARDIRQ + LS_MAX_IRQS)
#define LS_SLOT_IRQ_THREAD	(LS_SLOT_COMPLETION + LS_MAX_IRQS)
#define LS_SLOT_SOFTIRQ_WAIT	(LS_SLOT_IRQ_THREAD + LS_MAX_IRQS)
#define LS_SLOT_SOFTIRQ_RUN	(LS_SLOT_SOFTIRQ_WAIT + LS_NR_SOFTIRQS)
#define LS_SLOT_NAPI_POLL	(LS_SLOT_SOFTIRQ_RUN + LS_NR_SOFTIRQS)
#define LS_SLOT_WAKEUP		(LS_SLOT_NAPI_POLL + 1)
#define LS_SLOT_INTERFERENCE	(LS_SLOT_WAKEUP + 1)
#define LS_SLOT_PREEMPT		(LS_SLOT_INTERFERENCE + 1)
#define LS_NR_SLOTS		(LS_SLOT_PREEMPT + 1)

/*
 * latsplit.ko's `hist` file (debugfs, see Documentation/kmod.rst): this
 * header, then nr_cpus * nr_slots struct ls_hist, cpu-major
 * (hist[cpu * nr_slots + slot]), hdr_size bytes after the start of the file.
 * Slots indexed by watched IRQ follow the order of irqs[].
 */
#define LS_HIST_MAGIC		0x3148534cu	/* "LSH1" little-endian */

#define LS_HDR_F_ENABLED	0x0001	/* tracing was on at the snapshot */
#define LS_HDR_F_PREEMPT_RT	0x0002	/* kernel built with PREEMPT_RT */
#define LS_HDR_F_WAKEUP_HOOK	0x0004	/* ib_uverbs_comp_handler hook armed */
#define LS_HDR_F_NO_HIST	0x0008	/* records only: histograms not kept */

struct ls_hist_header {
	__u32 magic;		/* LS_HIST_MAGIC */
	__u32 abi_version;	/* LATSPLIT_ABI_VERSION */
	__u32 hdr_size;		/* sizeof(struct ls_hist_header) */
	__u32 hist_size;	/* sizeof(struct ls_hist) */
	__u32 nr_cpus;		/* nr_cpu_ids: cpu blocks that follow */
	__u32 nr_slots;		/* LS_NR_SLOTS */
	__u32 nr_irqs;		/* entries used in irqs[] */
	__u32 flags;		/* LS_HDR_F_* */
	__u32 irqs[LS_MAX_IRQS];
	__u64 records;		/* records written to the ring since reset */
	__u64 drops;		/* records lost because a ring was full */
	__u64 snapshot_ns;	/* CLOCK_MONOTONIC when the header was made */
	__u64 comp_stale;	/* COMPLETIONs dropped: older than completion_max_us */
	__u64 napi_untimed;	/* napi_poll calls outside NET_RX softirq, not timed */
};

/*
 * The observer's own cost. latsplit.ko counts, per CPU and per handler,
 * how often the handler ran while tracing was on and the time spent inside
 * it (CLOCK_MONOTONIC at its entry to its exit, including the record it
 * wrote), timing one call in 8 drawn at random and adding the handler's
 * running mean for the others; a timed call runs with IRQs off, so none
 * nests in another and a CPU's sum estimates wall time taken from it. The eBPF backend
 * reports the kernel's BPF run-time statistics per handler instead, all
 * CPUs together (Documentation/methodology.rst). The numbering
 * is ABI: latsplit.ko's `observer` file names them.
 */
enum ls_handler {
	LS_H_IRQ_ENTRY		= 0,	/* irq_handler_entry */
	LS_H_IRQ_EXIT		= 1,	/* irq_handler_exit */
	LS_H_SOFTIRQ_RAISE	= 2,	/* softirq_raise */
	LS_H_SOFTIRQ_ENTRY	= 3,	/* softirq_entry */
	LS_H_SOFTIRQ_EXIT	= 4,	/* softirq_exit */
	LS_H_NAPI_POLL		= 5,	/* napi:napi_poll */
	LS_H_SCHED_SWITCH	= 6,	/* sched_switch */
	LS_H_SCHED_WAKING	= 7,	/* sched_waking */
	LS_H_SCHED_WAKEUP	= 8,	/* sched_wakeup */
	LS_H_RX_SKB		= 9,	/* net:netif_receive_skb */
	LS_H_COMP_ENTRY		= 10,	/* ib_uverbs_comp_handler entry (kprobe) */
	LS_H_COMP_RET		= 11,	/* ib_uverbs_comp_handler return */
	LS_H_TX_SKB		= 12,	/* net:net_dev_start_xmit */
	LS_NR_HANDLERS		= 13,
};

/* Initializer of a name table indexed by enum ls_handler. */
#define LS_HANDLER_NAMES {					\
	[LS_H_IRQ_ENTRY]	= "irq_handler_entry",		\
	[LS_H_IRQ_EXIT]		= "irq_handler_exit",		\
	[LS_H_SOFTIRQ_RAISE]	= "softirq_raise",		\
	[LS_H_SOFTIRQ_ENTRY]	= "softirq_entry",		\
	[LS_H_SOFTIRQ_EXIT]	= "softirq_exit",		\
	[LS_H_NAPI_POLL]	= "napi_poll",			\
	[LS_H_SCHED_SWITCH]	= "sched_switch",		\
	[LS_H_SCHED_WAKING]	= "sched_waking",		\
	[LS_H_SCHED_WAKEUP]	= "sched_wakeup",		\
	[LS_H_RX_SKB]		= "netif_receive_skb",		\
	[LS_H_COMP_ENTRY]	= "comp_handler_entry",		\
	[LS_H_COMP_RET]		= "comp_handler_return",	\
	[LS_H_TX_SKB]		= "net_dev_start_xmit",		\
}

/* One (CPU, handler) cell of the observer's cost. */
struct ls_obs_cell {
	__u64 hits;		/* handler invocations while tracing */
	__u64 ns;		/* time inside them (sampled estimate) */
};

#endif /* _UAPI_LATSPLIT_H */
