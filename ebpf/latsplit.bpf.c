// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit eBPF backend: the stages of include/uapi/latsplit.h timed with
 * tracepoints, into per-CPU histograms (same slot layout as the module) and,
 * optionally, interval records through a BPF ring buffer.
 *
 * CO-RE: built once against the build host's vmlinux.h, loaded unchanged on
 * 6.1, 6.12, 6.1-rt and 6.18. Every program exists twice, as tp_btf/ and as
 * raw_tp/ with the same body; user space (tools/backend_ebpf.c) turns one
 * set off with bpf_program__set_autoload() before load. Knobs live in
 * .rodata and are set before load, so the verifier sees them as constants
 * and prunes what is switched off. See Documentation/ebpf.rst.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "include/uapi/latsplit.h"
#include "ebpf/latsplit_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Knobs, written by user space before load. */
const volatile __u32 watched_irqs[LS_MAX_IRQS];
const volatile __u32 nr_irqs;
const volatile __u64 cpumask[LS_CPUMASK_WORDS];
const volatile __s32 pids[LS_MAX_TASKS];
const volatile __u32 nr_pids;
const volatile bool records_on;
/* Histograms kept (off when only records are read: breakdown). */
const volatile bool hist_on = true;
/*
 * Wake the reader only once this many bytes wait in the ring: a wakeup per
 * record would switch the reader in on the probe's CPU at every sample,
 * and its switch would emit records of its own (a feedback loop). The
 * reader drains on a timeout as well.
 */
const volatile __u64 wake_bytes;
const volatile bool threaded_irqs;
const volatile bool is_rt;		/* PREEMPT_RT: softirqs run in threads */

/*
 * Histograms, compacted: index = kind * nr_irqs + watched index for the
 * three per-IRQ kinds, then 3 * nr_irqs + (slot - LS_SLOT_SOFTIRQ_WAIT) for
 * the rest. max_entries is set to LS_EBPF_NR_HIST(nr_irqs) before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_hist);
} hists SEC(".maps");

/* Per-CPU tracing state. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_ebpf_cpu);
} cpu_state SEC(".maps");

/* Counters (records, drops, ...), summed over CPUs by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LS_EBPF_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Interval records; max_entries set from the ring size option. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} records SEC(".maps");

/* Named tasks and IRQ threads: cross-CPU state. */
struct ls_ebpf_task tasks[LS_MAX_TASKS];
__u64 ithr_pending[LS_MAX_IRQS];
__u32 ithr_pid[LS_MAX_IRQS];

/*
 * Set by user space (latsplit record --ab) to pause recording without
 * detaching: every program returns at once. Re-attaching takes seconds on
 * some kernels (PREEMPT_RT under emulation: 2-3 s), so a pause keeps the
 * attachment; what stays is the tracepoint's dispatch to a program that
 * returns.
 */
volatile bool paused;

#define IRQ_WAKE_THREAD_BIT	2	/* enum irqreturn */

/*
 * Hide x's value from clang, so the bound check that follows is done on
 * the very register used to index: otherwise clang may test a 32-bit
 * copy and index with the 64-bit original, which 6.1 cannot bound.
 */
#define ls_opaque(x)	asm volatile("" : "+r"(x))

/*
 * A kernel field: a plain (CO-RE relocated) load in a tp_btf program, whose
 * arguments are BTF pointers the verifier guards itself; a
 * bpf_probe_read_kernel() in the raw_tp fallback. btf is the program's
 * constant, so clang keeps one branch. The helper call is most of what a
 * field costs: sched_switch reads two or three per context switch.
 */
#define LS_RD(btf, p, f)	((btf) ? (p)->f : BPF_CORE_READ(p, f))
#define LS_RD2(btf, p, f, g)	((btf) ? (p)->f->g : BPF_CORE_READ(p, f, g))
#define TASK_RUNNING_STATE	0

/* Add one to counter c on this CPU. */
static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Watched-list index of irq, or -1. */
static __always_inline int irq_index(__u32 irq)
{
	for (__u64 i = 0; i < LS_MAX_IRQS; i++) {
		if (i >= nr_irqs)
			break;
		if (watched_irqs[i] == irq)
			return i;
	}
	return -1;
}

/* Named-task index of pid, or -1. */
static __always_inline __u64 task_index(__s32 pid)
{
	for (__u64 i = 0; i < LS_MAX_TASKS; i++) {
		if (i >= nr_pids)
			break;
		if (pids[i] == pid)
			return i;
	}
	return LS_MAX_TASKS;
}

/* True when cpu is one of the INTERFERENCE CPUs. */
static __always_inline bool cpu_watched(__u32 cpu)
{
	__u32 w = cpu / 64;

	/*
	 * Check the word index itself, behind a compiler barrier: clang would
	 * otherwise test a 32-bit copy of cpu and index with the 64-bit
	 * register, which the 6.1 verifier cannot bound.
	 */
	ls_opaque(w);
	if (w >= LS_CPUMASK_WORDS)
		return false;
	return (cpumask[w] >> (cpu % 64)) & 1;
}

/* Compact histogram index of an ABI slot (see the hists map). */
static __always_inline __u32 hist_index(__u32 slot)
{
	if (slot < LS_SLOT_COMPLETION)
		return slot;
	if (slot < LS_SLOT_IRQ_THREAD)
		return nr_irqs + (slot - LS_SLOT_COMPLETION);
	if (slot < LS_SLOT_SOFTIRQ_WAIT)
		return 2 * nr_irqs + (slot - LS_SLOT_IRQ_THREAD);
	return 3 * nr_irqs + (slot - LS_SLOT_SOFTIRQ_WAIT);
}

/* Put one record into the ring when records are on. */
static __always_inline void emit_record(__u32 stage, __u32 id, __u64 start,
					__u64 end, __u32 aux, __u16 flags,
					__u32 cpu)
{
	struct ls_record *r;

	if (!records_on)
		return;
	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		count(LS_EBPF_CNT_DROPS);
		return;
	}
	r->start_ns = start;
	r->end_ns = end;
	r->cpu = cpu;
	r->stage = stage;
	r->flags = flags;
	r->id = id;
	r->aux = aux;
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= wake_bytes ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	count(LS_EBPF_CNT_RECORDS);
}

/*
 * Account one stage instance: histogram slot on this CPU, and a record if
 * records are on. Counts and sums use atomic adds because a hardirq program
 * may interrupt a softirq program updating the same (INTERFERENCE) slot.
 */
static __always_inline void account(__u32 slot, __u32 stage, __u32 id,
				    __u64 start, __u64 end, __u32 aux,
				    __u16 flags, __u32 cpu)
{
	__u32 key = hist_index(slot);
	__u64 d = end - start;
	struct ls_hist *h;
	__u64 b;

	if ((__s64)d < 0) {
		count(LS_EBPF_CNT_UNORDERED);
		return;
	}
	h = hist_on ? bpf_map_lookup_elem(&hists, &key) : NULL;
	if (h) {
		__sync_fetch_and_add(&h->count, 1);
		__sync_fetch_and_add(&h->sum_ns, d);
		if (d > h->max_ns)
			h->max_ns = d;
		b = ls_hist_bucket(d);
		ls_opaque(b);
		if (b < LS_HIST_NR_BUCKETS)
			__sync_fetch_and_add(&h->buckets[b], 1);
	}
	emit_record(stage, id, start, end, aux, flags, cpu);
}

/* This CPU's tracing state. */
static __always_inline struct ls_ebpf_cpu *this_cpu_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* irq_handler_entry: open a hardirq instance (or continue a shared one). */
static __always_inline int on_irq_entry(const bool btf, __u32 irq)
{
	__u32 cpu = bpf_get_smp_processor_id();
	int idx = irq_index(irq);
	struct ls_ebpf_cpu *st;
	__u64 now, i;

	if (idx < 0 && !cpu_watched(cpu))
		return 0;
	/* Stamp before anything costly, like the module's probe does. */
	now = bpf_ktime_get_ns();
	st = this_cpu_state();
	if (!st)
		return 0;
	/* Next action of a shared IRQ: the instance goes on. */
	if (st->irq_cont && st->irq == irq && st->irq_start) {
		st->irq_cont = 0;
		return 0;
	}
	st->irq_start = now;
	st->irq = irq;
	st->irq_idx = idx;
	st->irq_cont = 0;
	st->irq_ret = 0;
	st->irq_thread_pid = 0;
	i = (__u32)idx;
	ls_opaque(i);
	/* The oldest interrupt not yet processed starts COMPLETION. */
	if (i < LS_MAX_IRQS && !(st->comp_pending & (1u << i))) {
		st->comp_start[i] = now;
		st->comp_pending |= 1u << i;
	}
	return 0;
}

/* irq_handler_exit: close the instance after its last action. */
static __always_inline int on_irq_exit(const bool btf, __u32 irq,
				       struct irqaction *action, int ret)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ls_ebpf_cpu *st;
	__u64 now, start, idx;
	__u16 flags;

	if (irq_index(irq) < 0 && !cpu_watched(cpu))
		return 0;
	/* Stamp first: the lookup's cost is not the handler's. */
	now = bpf_ktime_get_ns();
	st = this_cpu_state();
	if (!st || !st->irq_start || st->irq != irq)
		return 0;
	st->irq_ret |= ret;
	if (threaded_irqs && (ret & IRQ_WAKE_THREAD_BIT) && action)
		st->irq_thread_pid = LS_RD2(btf, action, thread, pid);
	if (action && LS_RD(btf, action, next)) {
		/* More actions of this shared IRQ follow. */
		st->irq_cont = 1;
		return 0;
	}
	start = st->irq_start;
	/* irq_idx is -1 (unwatched) or below LS_MAX_IRQS. */
	idx = (__u32)st->irq_idx;
	st->irq_start = 0;
	flags = (st->irq_ret & IRQ_WAKE_THREAD_BIT) ? LS_REC_F_RT_THREAD : 0;

	if (st->softirq_cur)
		st->softirq_nested++;
	if (cpu_watched(cpu))
		account(LS_SLOT_INTERFERENCE, LS_STAGE_INTERFERENCE, irq,
			start, now, 0, flags, cpu);
	ls_opaque(idx);
	if (idx >= LS_MAX_IRQS)
		return 0;
	account(LS_SLOT_HARDIRQ + idx, LS_STAGE_HARDIRQ, irq, start, now, 0,
		flags, cpu);
	if (st->irq_ret & IRQ_WAKE_THREAD_BIT) {
		if (threaded_irqs && st->irq_thread_pid && !ithr_pending[idx]) {
			ithr_pid[idx] = st->irq_thread_pid;
			ithr_pending[idx] = start;
		}
		return 0;
	}
	/*
	 * Handled in hard context: no NAPI poll follows an interrupt that
	 * left no NET_RX pending outside a NET_RX run, so its COMPLETION
	 * must not wait for an unrelated later poll.
	 */
	if (!st->raise[LS_SOFTIRQ_NET_RX] &&
	    st->softirq_cur != LS_SOFTIRQ_NET_RX + 1)
		st->comp_pending &= ~(1u << idx);
	return 0;
}

/* softirq_raise: remember the first raise of a watched vector. */
static __always_inline int on_softirq_raise(const bool btf, __u64 vec)
{
	struct ls_ebpf_cpu *st;

	ls_opaque(vec);
	if (vec >= LS_NR_SOFTIRQS || !((1u << vec) & LS_SOFTIRQ_WATCHED_MASK))
		return 0;
	st = this_cpu_state();
	if (!st)
		return 0;
	if (!st->raise[vec])
		st->raise[vec] = bpf_ktime_get_ns();
	return 0;
}

/* LS_REC_F_RT_THREAD when softirqs run in a thread (PREEMPT_RT, ksoftirqd). */
static __always_inline __u16 softirq_thread_flag(void)
{
	char comm[16];

	if (is_rt)
		return LS_REC_F_RT_THREAD;
	if (bpf_get_current_comm(comm, sizeof(comm)))
		return 0;
	/* "ksoftirqd/" */
	if (comm[0] == 'k' && comm[1] == 's' && comm[2] == 'o' &&
	    comm[3] == 'f' && comm[4] == 't' && comm[5] == 'i' &&
	    comm[6] == 'r' && comm[7] == 'q' && comm[8] == 'd' && comm[9] == '/')
		return LS_REC_F_RT_THREAD;
	return 0;
}

/* softirq_entry: close the wait, open the run. */
static __always_inline int on_softirq_entry(const bool btf, __u64 vec)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ls_ebpf_cpu *st;
	bool watched;
	__u64 now;

	ls_opaque(vec);
	if (vec >= LS_NR_SOFTIRQS)
		return 0;
	watched = (1u << vec) & LS_SOFTIRQ_WATCHED_MASK;
	if (!watched && !cpu_watched(cpu))
		return 0;
	now = bpf_ktime_get_ns();
	st = this_cpu_state();
	if (!st)
		return 0;
	st->run_flags = softirq_thread_flag();
	if (watched && st->raise[vec]) {
		account(LS_SLOT_SOFTIRQ_WAIT + vec, LS_STAGE_SOFTIRQ_WAIT, vec,
			st->raise[vec], now, 0, st->run_flags, cpu);
		st->raise[vec] = 0;
	}
	st->softirq_cur = vec + 1;
	st->softirq_start = now;
	st->softirq_nested = 0;
	if (vec == LS_SOFTIRQ_NET_RX) {
		st->napi_mark = now;
		st->napi_nested = 0;
	}
	return 0;
}

/* softirq_exit: close the run (SOFTIRQ_RUN, softirq INTERFERENCE). */
static __always_inline int on_softirq_exit(const bool btf, __u64 vec)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ls_ebpf_cpu *st;
	__u32 nested;
	__u16 flags;
	__u64 now;

	ls_opaque(vec);
	if (vec >= LS_NR_SOFTIRQS)
		return 0;
	if (!((1u << vec) & LS_SOFTIRQ_WATCHED_MASK) && !cpu_watched(cpu))
		return 0;
	now = bpf_ktime_get_ns();
	st = this_cpu_state();
	if (!st || st->softirq_cur != vec + 1)
		return 0;
	nested = st->softirq_nested;
	flags = st->run_flags | (nested ? LS_REC_F_NESTED : 0);
	st->softirq_cur = 0;
	if (vec == LS_SOFTIRQ_NET_RX)
		st->napi_mark = 0;
	if ((1u << vec) & LS_SOFTIRQ_WATCHED_MASK)
		account(LS_SLOT_SOFTIRQ_RUN + vec, LS_STAGE_SOFTIRQ_RUN, vec,
			st->softirq_start, now, nested, flags, cpu);
	/* Like SOFTIRQ_RUN, the time includes nested hardirqs (aux counts them). */
	if (cpu_watched(cpu))
		account(LS_SLOT_INTERFERENCE, LS_STAGE_INTERFERENCE,
			LS_ID_SOFTIRQ_BASE + vec, st->softirq_start, now,
			nested, flags, cpu);
	return 0;
}

/* napi:napi_poll (fires after the poll): NAPI_POLL and COMPLETION. */
static __always_inline int on_napi_poll(const bool btf,
					struct napi_struct *napi, int work)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 w = work > 0 ? work : 0;
	struct ls_ebpf_cpu *st;
	__u32 nested, pend;
	__u64 now;

	st = this_cpu_state();
	if (!st)
		return 0;
	if (!st->napi_mark) {
		/* Busy polling or threaded NAPI: no start to derive. */
		count(LS_EBPF_CNT_NAPI_UNTIMED);
		if (!st->comp_pending)
			return 0;
	}
	now = bpf_ktime_get_ns();
	if (st->napi_mark && st->softirq_cur == LS_SOFTIRQ_NET_RX + 1) {
		nested = st->softirq_nested - st->napi_nested;
		account(LS_SLOT_NAPI_POLL, LS_STAGE_NAPI_POLL,
			LS_RD(btf, napi, napi_id), st->napi_mark, now, w,
			st->run_flags | (nested ? LS_REC_F_NESTED : 0), cpu);
		st->napi_mark = now;
		st->napi_nested = st->softirq_nested;
	}
	/* Any poll ends the COMPLETION of every interrupt pending here. */
	pend = st->comp_pending;
	st->comp_pending = 0;
	for (__u64 i = 0; i < LS_MAX_IRQS; i++) {
		__u64 t;

		if (i >= nr_irqs)
			break;
		if (!(pend & (1u << i)))
			continue;
		t = st->comp_start[i];
		if (now - t > LS_EBPF_COMPLETION_MAX_NS) {
			count(LS_EBPF_CNT_COMP_STALE);
			continue;
		}
		account(LS_SLOT_COMPLETION + i, LS_STAGE_COMPLETION,
			watched_irqs[i], t, now, w, st->run_flags, cpu);
	}
	return 0;
}

/*
 * A pending PREEMPT keeps its start time and its cause in one word: the time
 * shifted left by one, bit 0 set when it began at a preemption (switched out
 * runnable) rather than at a wakeup. 0 means none pending.
 */
static __always_inline __u64 preempt_mark(__u64 ts, bool preempted)
{
	return ts << 1 | preempted;
}

/* sched_switch: IRQ_THREAD, WAKEUP and PREEMPT ends; PREEMPT starts. */
static __always_inline int on_switch(const bool btf, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__s32 next_pid;
	__u64 now = 0, i, t;

	next_pid = LS_RD(btf, next, pid);
	if (threaded_irqs) {
		for (i = 0; i < LS_MAX_IRQS; i++) {
			if (i >= nr_irqs)
				break;
			t = ithr_pending[i];
			if (!t || ithr_pid[i] != (__u32)next_pid)
				continue;
			ithr_pending[i] = 0;
			if (!now)
				now = bpf_ktime_get_ns();
			account(LS_SLOT_IRQ_THREAD + i, LS_STAGE_IRQ_THREAD,
				watched_irqs[i], t, now, 0, LS_REC_F_RT_THREAD,
				cpu);
		}
	}
	if (!nr_pids)
		return 0;
	i = task_index(LS_RD(btf, prev, pid));
	ls_opaque(i);
	if (i < LS_MAX_TASKS &&
	    (preempt || LS_RD(btf, prev, __state) == TASK_RUNNING_STATE)) {
		if (!now)
			now = bpf_ktime_get_ns();
		__sync_val_compare_and_swap(&tasks[i].preempt_start, 0,
					    preempt_mark(now, true));
	}
	i = task_index(next_pid);
	ls_opaque(i);
	if (i >= LS_MAX_TASKS)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	t = __sync_lock_test_and_set(&tasks[i].wake_start, 0);
	if (t)
		account(LS_SLOT_WAKEUP, LS_STAGE_WAKEUP, next_pid, t, now, 0, 0,
			cpu);
	t = __sync_lock_test_and_set(&tasks[i].preempt_start, 0);
	if (t)
		account(LS_SLOT_PREEMPT, LS_STAGE_PREEMPT, next_pid, t >> 1, now,
			0, (t & 1) ? LS_REC_F_PREEMPTED : 0, cpu);
	return 0;
}

/*
 * sched_wakeup: a named task became runnable: PREEMPT starts. A task still
 * on a CPU (woken between setting its sleep state and switching out) never
 * slept: nothing waits, and a WAKEUP its waker started is void.
 */
static __always_inline int on_wakeup(const bool btf, struct task_struct *p)
{
	__u64 i;

	if (!nr_pids)
		return 0;
	i = task_index(LS_RD(btf, p, pid));
	ls_opaque(i);
	if (i >= LS_MAX_TASKS)
		return 0;
	if (LS_RD(btf, p, on_cpu)) {
		__sync_lock_test_and_set(&tasks[i].wake_start, 0);
		return 0;
	}
	__sync_val_compare_and_swap(&tasks[i].preempt_start, 0,
				    preempt_mark(bpf_ktime_get_ns(), false));
	return 0;
}

/*
 * sched_waking, in the waker's context: a named task woken from inside
 * ib_uverbs_comp_handler on this CPU starts WAKEUP at the handler's entry.
 */
static __always_inline int on_waking(const bool btf, struct task_struct *p)
{
	struct ls_ebpf_cpu *st;
	__u64 i;

	if (!nr_pids)
		return 0;
	st = this_cpu_state();
	if (!st || !st->comp_ts)
		return 0;
	i = task_index(LS_RD(btf, p, pid));
	ls_opaque(i);
	if (i < LS_MAX_TASKS)
		__sync_val_compare_and_swap(&tasks[i].wake_start, 0, st->comp_ts);
	return 0;
}

#define LS_ETH_P_IP	0x0800
#define LS_ETH_P_IPV6	0x86DD
#define LS_IPPROTO_UDP	17

/*
 * netif_receive_skb (tx false): a RoCEv2 packet (UDP 4791, unfragmented
 * IPv4 or IPv6 without extension headers, headers in the linear part)
 * enters the stack on this CPU: an RX_PKT record with its BTH destination
 * QP and PSN | opcode << 24, which ties the receive path's records to the
 * sample the packet belongs to. skb->data is at the network header there.
 * net_dev_start_xmit (tx true): one leaves the stack for the driver, a
 * TX_PKT record (the end of its message's SEND); skb->data is at the link
 * header, the network header where the IP output path set it.
 */
static __always_inline int on_skb(const bool btf, struct sk_buff *skb,
				  bool tx)
{
	__u8 ip[20], udp_bth[20];
	unsigned char *data;
	__u32 head, off;
	__u16 proto;
	__u64 now;

	if (!records_on)
		return 0;
	proto = bpf_ntohs(LS_RD(btf, skb, protocol));
	data = LS_RD(btf, skb, data);
	head = LS_RD(btf, skb, len) - LS_RD(btf, skb, data_len);
	if (tx) {
		/* at net_dev_start_xmit skb->data is at the link header */
		unsigned char *net = LS_RD(btf, skb, head) + LS_RD(btf, skb, network_header);

		if (net < data || net - data >= head)
			return 0;
		head -= net - data;
		data = net;
	}
	if (proto == LS_ETH_P_IP) {
		if (head < sizeof(ip) || bpf_probe_read_kernel(ip, sizeof(ip), data))
			return 0;
		/* version 4, ihl >= 5, UDP, neither MF nor a fragment offset */
		if ((ip[0] >> 4) != 4 || (ip[0] & 15) < 5 || ip[9] != LS_IPPROTO_UDP ||
		    ((ip[6] & 0x3f) | ip[7]))
			return 0;
		off = (ip[0] & 15) * 4;
	} else if (proto == LS_ETH_P_IPV6) {
		if (head < 40 || bpf_probe_read_kernel(ip, 8, data) ||
		    ip[6] != LS_IPPROTO_UDP)
			return 0;
		off = 40;
	} else {
		return 0;
	}
	if (head < off + sizeof(udp_bth) ||
	    bpf_probe_read_kernel(udp_bth, sizeof(udp_bth), data + off))
		return 0;
	/* UDP destination port (bytes 2-3), then the BTH at byte 8 */
	if (((__u32)udp_bth[2] << 8 | udp_bth[3]) != LS_ROCE_UDP_PORT)
		return 0;
	now = bpf_ktime_get_ns();
	emit_record(tx ? LS_STAGE_TX_PKT : LS_STAGE_RX_PKT,
		    (__u32)udp_bth[13] << 16 | (__u32)udp_bth[14] << 8 | udp_bth[15],
		    now, now,
		    LS_RX_AUX((__u32)udp_bth[17] << 16 | (__u32)udp_bth[18] << 8 | udp_bth[19],
			      udp_bth[8]),
		    0, bpf_get_smp_processor_id());
	return 0;
}

/* One tracepoint's program of kind (tp_btf or raw_tp), prefix its name's start. */
#define LS_EBPF_PROG(kind, prefix, is_btf, tp, name, call, args...)			\
	SEC(#kind "/" #tp)								\
	int BPF_PROG(prefix##_##name, args)						\
	{										\
		const bool ls_btf = is_btf;						\
											\
		return paused ? 0 : call;						\
	}
#define LS_EBPF_BTF_PROG(tp, name, call, args...)					\
	LS_EBPF_PROG(tp_btf, btf, true, tp, name, call, args)
#define LS_EBPF_RAW_PROG(tp, name, call, args...)					\
	LS_EBPF_PROG(raw_tp, raw, false, tp, name, call, args)

LS_EBPF_TRACEPOINTS(LS_EBPF_BTF_PROG)
LS_EBPF_TRACEPOINTS(LS_EBPF_RAW_PROG)

/* RDMA completion event being queued: WAKEUP's start for whom it wakes. */
SEC("kprobe/ib_uverbs_comp_handler")
int BPF_KPROBE(kp_comp_handler)
{
	struct ls_ebpf_cpu *st = this_cpu_state();

	if (st && !paused)
		st->comp_ts = bpf_ktime_get_ns();
	return 0;
}

SEC("kretprobe/ib_uverbs_comp_handler")
int BPF_KRETPROBE(kr_comp_handler)
{
	struct ls_ebpf_cpu *st = this_cpu_state();

	if (st)
		st->comp_ts = 0;
	return 0;
}
