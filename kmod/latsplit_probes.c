// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit.ko: the probes. Existing kernel tracepoints found with
 * for_each_kernel_tracepoint() and attached with tracepoint_probe_register()
 * (their symbols are not exported for direct use). The WAKEUP stage's
 * kretprobe is in latsplit_wakeup.c, the sampled self-timing of both in
 * latsplit_obs.h.
 *
 * Every probe starts with rcu_dereference_sched(ls_active): NULL means
 * stopped. Probes run with preemption disabled (tracepoints) and take IRQs
 * off where they may be interrupted by another probe on the same CPU, so
 * all per-CPU state is plain per-CPU data without locks or atomics. Only
 * the named-task slots (WAKEUP, PREEMPT) are shared between CPUs, because
 * a task is woken on one CPU and runs on another: they use atomic64.
 */
#include <linux/interrupt.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/irqreturn.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/udp.h>
#include <net/ip.h>

#include <trace/events/irq.h>
#include <trace/events/napi.h>
#include <trace/events/net.h>
#include <trace/events/sched.h>

#include "latsplit.h"
#include "latsplit_obs.h"

/* Named-task slots: written on the waking CPU, consumed where the task runs. */
struct ls_task_state {
	atomic64_t wake_start;		/* WAKEUP pending since (comp handler) */
	atomic64_t preempt_start;	/* PREEMPT pending: ls_preempt_mark() */
} ____cacheline_aligned_in_smp;

/*
 * A pending PREEMPT keeps its start time and its cause in one word: the time
 * shifted left by one, bit 0 set when it began at a preemption (switched out
 * runnable) rather than at a wakeup. 0 means none pending.
 */
static inline s64 ls_preempt_mark(u64 ts, bool preempted)
{
	return (s64)(ts << 1 | preempted);
}

static struct ls_task_state ls_task[LS_MAX_TASKS];

/* Clear the named-task slots (probes stopped). */
void ls_tasks_clear(void)
{
	int i;

	for (i = 0; i < LS_MAX_TASKS; i++) {
		atomic64_set(&ls_task[i].wake_start, 0);
		atomic64_set(&ls_task[i].preempt_start, 0);
	}
}

/*
 * Put one record into this CPU's ring, if records are on. IRQs off. Inlined
 * into the probes and with the cursors in struct ls_pcpu, a record touches
 * the pages the probe already holds and its slot's: under an emulator every
 * further page is a TLB refill, the main part of a probe's cost there.
 */
static __always_inline void ls_emit_record(struct ls_pcpu *pc, u16 stage,
					   u64 start, u64 end, u32 id, u32 aux,
					   u16 flags)
{
	struct ls_ring *ring = pc->ring;
	struct ls_record *r;
	u64 head;

	if (!ring)
		return;
	head = pc->ring_head;
	if (head - smp_load_acquire(&pc->ring_tail) > pc->ring_mask) {
		pc->drops++;
		return;
	}
	r = &ring->rec[head & pc->ring_mask];
	r->start_ns = start;
	r->end_ns = end;
	r->cpu = smp_processor_id();
	r->stage = stage;
	r->flags = flags;
	r->id = id;
	r->aux = aux;
	smp_store_release(&pc->ring_head, head + 1);
	pc->written++;
	/* Below the mark the reader collects on its timeout: no wakeup. */
	if (unlikely(head + 1 - READ_ONCE(pc->ring_tail) >= pc->ring_wake))
		ls_ring_wake_reader();
}

/*
 * Account one stage instance in its histogram, unless cfg keeps records
 * only. A histogram is 4 KiB per slot, so its update touches a page of its
 * own: a run that reads only records (breakdown) turns them off. IRQs off.
 */
static __always_inline void ls_hist_add(const struct ls_cfg *cfg,
					struct ls_pcpu *pc, u32 slot, u64 start,
					u64 end)
{
	struct ls_hist *h;
	u64 d;

	if (cfg->no_hist)
		return;
	h = &pc->hist[slot];
	d = end - start;
	h->count++;
	h->sum_ns += d;
	if (d > h->max_ns)
		h->max_ns = d;
	h->buckets[ls_hist_bucket(d)]++;
}

/* Account one stage instance in its histogram and, if on, the ring. IRQs off. */
static __always_inline void ls_emit(const struct ls_cfg *cfg, struct ls_pcpu *pc,
				    u32 slot, u16 stage, u64 start, u64 end,
				    u32 id, u32 aux, u16 flags)
{
	/* A start stamped on another CPU may be a hair ahead: clamp. */
	if (unlikely(start > end))
		start = end;
	ls_hist_add(cfg, pc, slot, start, end);
	ls_emit_record(pc, stage, start, end, id, aux, flags);
}

/*
 * A HARDIRQ or SOFTIRQ_RUN that is INTERFERENCE as well (same interval):
 * both histograms, one record flagged LS_REC_F_INTF. IRQs off.
 */
static __always_inline void ls_emit_twin(const struct ls_cfg *cfg,
					 struct ls_pcpu *pc, u32 slot,
					 u16 stage, u64 start, u64 end, u32 id,
					 u32 aux, u16 flags)
{
	if (unlikely(start > end))
		start = end;
	ls_hist_add(cfg, pc, LS_SLOT_INTERFERENCE, start, end);
	ls_emit(cfg, pc, slot, stage, start, end, id, aux, flags | LS_REC_F_INTF);
}

/* Index of irq in the watched list, or -1. */
static __always_inline int ls_irq_idx(const struct ls_cfg *cfg, int irq)
{
	u32 i;

	for (i = 0; i < cfg->nr_irqs; i++)
		if (cfg->irqs[i] == (u32)irq)
			return i;
	return -1;
}

/* Index of a named task (by init-namespace thread id), or -1. */
static __always_inline int ls_task_idx(const struct ls_cfg *cfg, pid_t pid)
{
	u32 i;

	for (i = 0; i < cfg->nr_tasks; i++)
		if (cfg->tasks[i] == pid)
			return i;
	return -1;
}

/* True when this CPU is one of the INTERFERENCE CPUs. */
static __always_inline bool ls_intf_cpu(const struct ls_cfg *cfg)
{
	return cpumask_test_cpu(smp_processor_id(), &cfg->cpus);
}

/* irq_handler_entry: start HARDIRQ / COMPLETION / IRQ_THREAD / INTERFERENCE. */
static __always_inline void __ls_tp_irq_entry(void *data, int irq, struct irqaction *action)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	bool intf;
	u64 now;
	int idx;

	if (!cfg)
		return;
	pc = this_cpu_ptr(ls_pcpu);
	/* A hardirq that interrupts a softirq run is nested in it. */
	if (pc->run_vec)
		pc->run_nested++;
	intf = ls_intf_cpu(cfg);
	idx = ls_irq_idx(cfg, irq);
	if (!intf && idx < 0)
		return;
	now = ktime_get_ns();
	if (intf) {
		pc->intf_start = now;
		pc->intf_irq = irq;
	}
	if (idx < 0)
		return;
	pc->hard_start = now;
	pc->hard_idx = idx;
	/* The oldest interrupt not yet processed sets COMPLETION's start. */
	if (!pc->comp_start[idx]) {
		pc->comp_start[idx] = now;
		pc->comp_pending |= BIT(idx);
	}
	if (cfg->irq_thread[idx] && !pc->thr_start[idx]) {
		pc->thr_start[idx] = now;
		pc->thr_pending |= BIT(idx);
	}
}

/* irq_handler_exit: end HARDIRQ and INTERFERENCE; drop what did not follow. */
static __always_inline void __ls_tp_irq_exit(void *data, int irq, struct irqaction *action,
					     int ret)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	u16 flags = (ret & IRQ_WAKE_THREAD) ? LS_REC_F_RT_THREAD : 0;
	struct ls_pcpu *pc;
	bool intf, hard;
	u64 now;
	u32 idx;

	if (!cfg)
		return;
	pc = this_cpu_ptr(ls_pcpu);
	if (!pc->hard_start && !pc->intf_start)
		return;
	now = ktime_get_ns();
	idx = pc->hard_idx;
	intf = pc->intf_start && pc->intf_irq == (u32)irq;
	hard = pc->hard_start && idx < cfg->nr_irqs && cfg->irqs[idx] == (u32)irq;
	/* one record when both began at the same entry (the usual case) */
	if (intf && hard && pc->intf_start == pc->hard_start) {
		ls_emit_twin(cfg, pc, LS_SLOT_HARDIRQ + idx, LS_STAGE_HARDIRQ,
			     pc->hard_start, now, irq, 0, flags);
	} else {
		if (intf)
			ls_emit(cfg, pc, LS_SLOT_INTERFERENCE, LS_STAGE_INTERFERENCE,
				pc->intf_start, now, irq, 0, flags);
		if (hard)
			ls_emit(cfg, pc, LS_SLOT_HARDIRQ + idx, LS_STAGE_HARDIRQ,
				pc->hard_start, now, irq, 0, flags);
	}
	if (intf)
		pc->intf_start = 0;
	if (!hard)
		return;
	pc->hard_start = 0;
	if (ret & IRQ_WAKE_THREAD)
		return;
	/* Handled in hard context: no thread hop for this interrupt. */
	pc->thr_start[idx] = 0;
	pc->thr_pending &= ~BIT(idx);
	/*
	 * No NAPI poll follows an interrupt that raised no NET_RX outside a
	 * NET_RX run (not a NIC RX/TX event): do not let COMPLETION wait for
	 * an unrelated later poll.
	 */
	if (!pc->raise_ts[LS_SOFTIRQ_NET_RX] &&
	    pc->run_vec != LS_SOFTIRQ_NET_RX + 1) {
		pc->comp_start[idx] = 0;
		pc->comp_pending &= ~BIT(idx);
	}
}

/* softirq_raise: the first raise of a vector not yet served starts SOFTIRQ_WAIT. */
static __always_inline void __ls_tp_softirq_raise(void *data, unsigned int vec)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;

	if (!cfg || vec >= LS_NR_SOFTIRQS || !(LS_SOFTIRQ_WATCHED_MASK & BIT(vec)))
		return;
	/* Callers hold IRQs off (__raise_softirq_irqoff). */
	pc = this_cpu_ptr(ls_pcpu);
	if (!pc->raise_ts[vec])
		pc->raise_ts[vec] = ktime_get_ns();
}

/* True when softirqs on this CPU are being served by a thread. */
static __always_inline u16 ls_softirq_thread_flag(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return LS_REC_F_RT_THREAD;
	if ((current->flags & PF_KTHREAD) &&
	    !strncmp(current->comm, "ksoftirqd/", 10))
		return LS_REC_F_RT_THREAD;
	return 0;
}

/* softirq_entry: end SOFTIRQ_WAIT, start SOFTIRQ_RUN (and the first NAPI poll). */
static __always_inline void __ls_tp_softirq_entry(void *data, unsigned int vec)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	unsigned long fl;
	bool watched, intf;
	u64 now, t;

	if (!cfg || vec >= LS_NR_SOFTIRQS)
		return;
	watched = LS_SOFTIRQ_WATCHED_MASK & BIT(vec);
	intf = ls_intf_cpu(cfg);
	if (!watched && !intf)
		return;
	local_irq_save(fl);
	pc = this_cpu_ptr(ls_pcpu);
	now = ktime_get_ns();
	pc->run_vec = vec + 1;
	pc->run_start = now;
	pc->run_nested = 0;
	pc->run_flags = ls_softirq_thread_flag();
	pc->run_intf = intf;
	if (watched) {
		t = pc->raise_ts[vec];
		pc->raise_ts[vec] = 0;
		if (t)
			ls_emit(cfg, pc, LS_SLOT_SOFTIRQ_WAIT + vec,
				LS_STAGE_SOFTIRQ_WAIT, t, now, vec, 0,
				pc->run_flags);
	}
	if (vec == LS_SOFTIRQ_NET_RX) {
		pc->napi_mark = now;
		pc->napi_nested = 0;
	}
	local_irq_restore(fl);
}

/* softirq_exit: end SOFTIRQ_RUN and softirq INTERFERENCE. */
static __always_inline void __ls_tp_softirq_exit(void *data, unsigned int vec)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	unsigned long fl;
	u16 flags;
	u64 now;

	if (!cfg || vec >= LS_NR_SOFTIRQS)
		return;
	local_irq_save(fl);
	pc = this_cpu_ptr(ls_pcpu);
	if (pc->run_vec != vec + 1)
		goto out;
	now = ktime_get_ns();
	flags = pc->run_flags | (pc->run_nested ? LS_REC_F_NESTED : 0);
	if ((LS_SOFTIRQ_WATCHED_MASK & BIT(vec)) && pc->run_intf)
		ls_emit_twin(cfg, pc, LS_SLOT_SOFTIRQ_RUN + vec,
			     LS_STAGE_SOFTIRQ_RUN, pc->run_start, now, vec,
			     pc->run_nested, flags);
	else if (LS_SOFTIRQ_WATCHED_MASK & BIT(vec))
		ls_emit(cfg, pc, LS_SLOT_SOFTIRQ_RUN + vec, LS_STAGE_SOFTIRQ_RUN,
			pc->run_start, now, vec, pc->run_nested, flags);
	else if (pc->run_intf)
		ls_emit(cfg, pc, LS_SLOT_INTERFERENCE, LS_STAGE_INTERFERENCE,
			pc->run_start, now, LS_ID_SOFTIRQ_BASE + vec,
			pc->run_nested, flags);
	pc->run_vec = 0;
	pc->run_nested = 0;
	if (vec == LS_SOFTIRQ_NET_RX)
		pc->napi_mark = 0;
out:
	local_irq_restore(fl);
}

/*
 * napi:napi_poll fires after a poll returned. A poll inside a NET_RX run
 * started when the previous poll on this CPU returned, or at NET_RX entry
 * for the first one: that gives NAPI_POLL. Any poll ends the COMPLETION of
 * every watched interrupt pending on this CPU.
 */
static __always_inline void __ls_tp_napi_poll(void *data, struct napi_struct *napi, int work,
					      int budget)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	unsigned long fl, pend;
	u32 nested, w = work > 0 ? work : 0;
	u64 now;
	int i;

	if (!cfg)
		return;
	local_irq_save(fl);
	pc = this_cpu_ptr(ls_pcpu);
	if (!pc->napi_mark) {
		/* Busy polling or threaded NAPI: no start to derive. */
		pc->napi_untimed++;
		if (!pc->comp_pending)
			goto out;
	}
	now = ktime_get_ns();
	if (pc->napi_mark && pc->run_vec == LS_SOFTIRQ_NET_RX + 1) {
		nested = pc->run_nested - pc->napi_nested;
		ls_emit(cfg, pc, LS_SLOT_NAPI_POLL, LS_STAGE_NAPI_POLL, pc->napi_mark,
			now, READ_ONCE(napi->napi_id), w,
			pc->run_flags | (nested ? LS_REC_F_NESTED : 0));
		pc->napi_mark = now;
		pc->napi_nested = pc->run_nested;
	}
	pend = pc->comp_pending;
	for_each_set_bit(i, &pend, LS_MAX_IRQS) {
		u64 start = pc->comp_start[i];

		if (i < cfg->nr_irqs && now - start <= ls_completion_max_ns)
			ls_emit(cfg, pc, LS_SLOT_COMPLETION + i, LS_STAGE_COMPLETION,
				start, now, cfg->irqs[i], w, pc->run_flags);
		else if (i < cfg->nr_irqs)
			pc->comp_stale++;
		pc->comp_start[i] = 0;
	}
	pc->comp_pending = 0;
out:
	local_irq_restore(fl);
}

/*
 * sched_switch: IRQ_THREAD ends when the IRQ's thread is switched in;
 * WAKEUP and PREEMPT end when a named task is; PREEMPT starts when a named
 * task is switched out while still runnable. Runs with IRQs off.
 */
static __always_inline void __ls_tp_sched_switch(void *data, bool preempt,
						 struct task_struct *prev,
						 struct task_struct *next,
						 unsigned int prev_state)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	unsigned long pend;
	u64 now = 0, t;
	int i;

	if (!cfg)
		return;
	pc = this_cpu_ptr(ls_pcpu);
	pend = pc->thr_pending;
	for_each_set_bit(i, &pend, LS_MAX_IRQS) {
		if (i >= cfg->nr_irqs)
			break;
		if (next->pid == cfg->irq_thread[i]) {
			now = ktime_get_ns();
			ls_emit(cfg, pc, LS_SLOT_IRQ_THREAD + i, LS_STAGE_IRQ_THREAD,
				pc->thr_start[i], now, cfg->irqs[i], 0,
				LS_REC_F_RT_THREAD);
			pc->thr_start[i] = 0;
			pc->thr_pending &= ~BIT(i);
		}
	}
	/*
	 * An IRQ thread going to sleep has served every interrupt raised
	 * while it ran: those never saw it switched in, so they leave
	 * IRQ_THREAD. If it also left no NET_RX pending or running, it ran no
	 * NAPI for its interrupt: stop that COMPLETION from waiting.
	 */
	if ((pc->thr_pending | pc->comp_pending) && !preempt &&
	    prev_state != TASK_RUNNING) {
		bool no_netrx = !pc->raise_ts[LS_SOFTIRQ_NET_RX] &&
				pc->run_vec != LS_SOFTIRQ_NET_RX + 1;

		for (i = 0; i < cfg->nr_irqs; i++) {
			if (cfg->irq_thread[i] != prev->pid)
				continue;
			pc->thr_start[i] = 0;
			pc->thr_pending &= ~BIT(i);
			if (no_netrx) {
				pc->comp_start[i] = 0;
				pc->comp_pending &= ~BIT(i);
			}
		}
	}
	if (!cfg->nr_tasks)
		return;
	i = ls_task_idx(cfg, prev->pid);
	if (i >= 0 && (preempt || prev_state == TASK_RUNNING)) {
		now = now ?: ktime_get_ns();
		atomic64_cmpxchg(&ls_task[i].preempt_start, 0,
				 ls_preempt_mark(now, true));
	}
	i = ls_task_idx(cfg, next->pid);
	if (i < 0)
		return;
	now = now ?: ktime_get_ns();
	t = atomic64_xchg(&ls_task[i].wake_start, 0);
	if (t)
		ls_emit(cfg, pc, LS_SLOT_WAKEUP, LS_STAGE_WAKEUP, t, now, next->pid,
			0, 0);
	t = atomic64_xchg(&ls_task[i].preempt_start, 0);
	if (t)
		ls_emit(cfg, pc, LS_SLOT_PREEMPT, LS_STAGE_PREEMPT, t >> 1, now,
			next->pid, 0, (t & 1) ? LS_REC_F_PREEMPTED : 0);
}

/*
 * sched_waking: runs in the waker's context. A named task woken from
 * inside ib_uverbs_comp_handler on this CPU starts WAKEUP at the handler's
 * entry.
 */
static __always_inline void __ls_tp_sched_waking(void *data, struct task_struct *p)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	struct ls_pcpu *pc;
	int i;

	if (!cfg || !cfg->nr_tasks)
		return;
	pc = this_cpu_ptr(ls_pcpu);
	if (!pc->comp_ts)
		return;
	i = ls_task_idx(cfg, p->pid);
	if (i >= 0)
		atomic64_cmpxchg(&ls_task[i].wake_start, 0, pc->comp_ts);
}

/*
 * sched_wakeup: a named task became runnable: PREEMPT starts. A task still
 * on a CPU (woken between setting its sleep state and switching out) never
 * slept: nothing waits, and a WAKEUP its waker started is void.
 */
static __always_inline void __ls_tp_sched_wakeup(void *data, struct task_struct *p)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	int i;

	if (!cfg || !cfg->nr_tasks)
		return;
	i = ls_task_idx(cfg, p->pid);
	if (i < 0)
		return;
	if (READ_ONCE(p->on_cpu)) {
		atomic64_set(&ls_task[i].wake_start, 0);
		return;
	}
	atomic64_cmpxchg(&ls_task[i].preempt_start, 0,
			 ls_preempt_mark(ktime_get_ns(), false));
}

/*
 * The RoCEv2 BTH fields of a packet whose network header is at offset
 * `net` from skb->data (0 at netif_receive_skb, the link header's length
 * at net_dev_start_xmit): destination QP and PSN | opcode << 24.
 * Unfragmented IPv4 or IPv6 without extension headers, UDP to port 4791;
 * false for anything else.
 */
static bool ls_roce_bth(const struct sk_buff *skb, int net, u32 *qpn, u32 *aux)
{
	u8 _b[12], *b;
	unsigned int off;
	struct udphdr _uh, *uh;

	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr _iph, *iph;

		iph = skb_header_pointer(skb, net, sizeof(_iph), &_iph);
		if (!iph || iph->version != 4 || iph->ihl < 5 ||
		    iph->protocol != IPPROTO_UDP ||
		    (iph->frag_off & htons(IP_MF | IP_OFFSET)))
			return false;
		off = net + iph->ihl * 4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6, *ip6;

		ip6 = skb_header_pointer(skb, net, sizeof(_ip6), &_ip6);
		if (!ip6 || ip6->nexthdr != IPPROTO_UDP)
			return false;
		off = net + sizeof(*ip6);
	} else {
		return false;
	}
	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(LS_ROCE_UDP_PORT))
		return false;
	b = skb_header_pointer(skb, off + sizeof(_uh), sizeof(_b), _b);
	if (!b)
		return false;
	*qpn = (u32)b[5] << 16 | (u32)b[6] << 8 | b[7];
	*aux = LS_RX_AUX((u32)b[9] << 16 | (u32)b[10] << 8 | b[11], b[0]);
	return true;
}

/*
 * An instant record of a RoCEv2 packet (RX_PKT, TX_PKT), stamped with IRQs
 * off: a hardirq's probe writes the same ring and may not slip in between.
 */
static __always_inline void ls_emit_pkt(u16 stage, u32 qpn, u32 aux)
{
	unsigned long fl;
	u64 now;

	local_irq_save(fl);
	now = ktime_get_ns();
	ls_emit_record(this_cpu_ptr(ls_pcpu), stage, now, now, qpn, aux, 0);
	local_irq_restore(fl);
}

/*
 * netif_receive_skb: a RoCEv2 packet enters the stack on this CPU. Its
 * RX_PKT record ties the receive path's records on this CPU to the probe
 * sample the packet belongs to. Records only: no histogram.
 */
static __always_inline void __ls_tp_rx_skb(void *data, struct sk_buff *skb)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	u32 qpn, aux;

	if (!cfg || !cfg->ring_kib || !ls_roce_bth(skb, 0, &qpn, &aux))
		return;
	ls_emit_pkt(LS_STAGE_RX_PKT, qpn, aux);
}

/*
 * net_dev_start_xmit: a RoCEv2 packet leaves the stack for the NIC's
 * driver on this CPU. Its TX_PKT record tells when the probe's message
 * left its host (the end of the SEND stage). Records only. The network
 * header is set by then; skb->data is at the link header.
 */
static __always_inline void __ls_tp_tx_skb(void *data, const struct sk_buff *skb,
					   const struct net_device *dev)
{
	const struct ls_cfg *cfg = rcu_dereference_sched(ls_active);
	int net = skb_network_offset(skb);
	u32 qpn, aux;

	/* an IP packet has its network header set by the IP output path */
	if (!cfg || !cfg->ring_kib || net < 0 || !ls_roce_bth(skb, net, &qpn, &aux))
		return;
	ls_emit_pkt(LS_STAGE_TX_PKT, qpn, aux);
}

/* Define probe `name` as body `__name`, its cost sampled (see above). */
#define LS_OBS_PROBE(h, name, proto, args)				\
static void name proto							\
{									\
	unsigned long fl;						\
	u64 t0;								\
									\
	if (!rcu_access_pointer(ls_active))				\
		return;							\
	if (!ls_obs_pick(h)) {						\
		__##name args;						\
		ls_obs_guess(h);					\
		return;							\
	}								\
	local_irq_save(fl);						\
	t0 = ktime_get_ns();						\
	__##name args;							\
	ls_obs_end(h, t0);						\
	local_irq_restore(fl);						\
}

LS_OBS_PROBE(LS_H_IRQ_ENTRY, ls_tp_irq_entry,
	     (void *data, int irq, struct irqaction *action),
	     (data, irq, action))
LS_OBS_PROBE(LS_H_IRQ_EXIT, ls_tp_irq_exit,
	     (void *data, int irq, struct irqaction *action, int ret),
	     (data, irq, action, ret))
LS_OBS_PROBE(LS_H_SOFTIRQ_RAISE, ls_tp_softirq_raise,
	     (void *data, unsigned int vec), (data, vec))
LS_OBS_PROBE(LS_H_SOFTIRQ_ENTRY, ls_tp_softirq_entry,
	     (void *data, unsigned int vec), (data, vec))
LS_OBS_PROBE(LS_H_SOFTIRQ_EXIT, ls_tp_softirq_exit,
	     (void *data, unsigned int vec), (data, vec))
LS_OBS_PROBE(LS_H_NAPI_POLL, ls_tp_napi_poll,
	     (void *data, struct napi_struct *napi, int work, int budget),
	     (data, napi, work, budget))
LS_OBS_PROBE(LS_H_SCHED_SWITCH, ls_tp_sched_switch,
	     (void *data, bool preempt, struct task_struct *prev,
	      struct task_struct *next, unsigned int prev_state),
	     (data, preempt, prev, next, prev_state))
LS_OBS_PROBE(LS_H_SCHED_WAKING, ls_tp_sched_waking,
	     (void *data, struct task_struct *p), (data, p))
LS_OBS_PROBE(LS_H_SCHED_WAKEUP, ls_tp_sched_wakeup,
	     (void *data, struct task_struct *p), (data, p))
LS_OBS_PROBE(LS_H_RX_SKB, ls_tp_rx_skb,
	     (void *data, struct sk_buff *skb), (data, skb))
LS_OBS_PROBE(LS_H_TX_SKB, ls_tp_tx_skb,
	     (void *data, const struct sk_buff *skb, const struct net_device *dev),
	     (data, skb, dev))

/* Compile-time checks that each probe matches its tracepoint's prototype. */
static void __maybe_unused ls_probe_prototype_checks(void)
{
	check_trace_callback_type_irq_handler_entry(ls_tp_irq_entry);
	check_trace_callback_type_irq_handler_exit(ls_tp_irq_exit);
	check_trace_callback_type_softirq_raise(ls_tp_softirq_raise);
	check_trace_callback_type_softirq_entry(ls_tp_softirq_entry);
	check_trace_callback_type_softirq_exit(ls_tp_softirq_exit);
	check_trace_callback_type_napi_poll(ls_tp_napi_poll);
	check_trace_callback_type_sched_switch(ls_tp_sched_switch);
	check_trace_callback_type_sched_waking(ls_tp_sched_waking);
	check_trace_callback_type_sched_wakeup(ls_tp_sched_wakeup);
	check_trace_callback_type_netif_receive_skb(ls_tp_rx_skb);
	check_trace_callback_type_net_dev_start_xmit(ls_tp_tx_skb);
}

struct ls_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool registered;
};

static struct ls_tp ls_tps[] = {
	{ .name = "irq_handler_entry",	.probe = ls_tp_irq_entry },
	{ .name = "irq_handler_exit",	.probe = ls_tp_irq_exit },
	{ .name = "softirq_raise",	.probe = ls_tp_softirq_raise },
	{ .name = "softirq_entry",	.probe = ls_tp_softirq_entry },
	{ .name = "softirq_exit",	.probe = ls_tp_softirq_exit },
	{ .name = "napi_poll",		.probe = ls_tp_napi_poll },
	{ .name = "sched_switch",	.probe = ls_tp_sched_switch },
	{ .name = "sched_waking",	.probe = ls_tp_sched_waking },
	{ .name = "sched_wakeup",	.probe = ls_tp_sched_wakeup },
	{ .name = "netif_receive_skb",	.probe = ls_tp_rx_skb },
	{ .name = "net_dev_start_xmit",	.probe = ls_tp_tx_skb },
};

/* for_each_kernel_tracepoint() callback: remember the ones we probe. */
static void ls_tp_lookup(struct tracepoint *tp, void *priv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ls_tps); i++)
		if (!strcmp(tp->name, ls_tps[i].name))
			ls_tps[i].tp = tp;
}

/* Unregister every probe registered so far and wait until none runs. */
void ls_probes_unregister(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ls_tps); i++) {
		if (!ls_tps[i].registered)
			continue;
		WARN_ON(tracepoint_probe_unregister(ls_tps[i].tp, ls_tps[i].probe,
						    NULL));
		ls_tps[i].registered = false;
	}
	tracepoint_synchronize_unregister();
}

/* Find and attach every tracepoint probe; all or none. */
int ls_probes_register(void)
{
	size_t i;
	int err;

	for_each_kernel_tracepoint(ls_tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(ls_tps); i++) {
		if (!ls_tps[i].tp) {
			pr_err(LS_NAME ": tracepoint %s not found\n", ls_tps[i].name);
			err = -ENOENT;
			goto fail;
		}
		err = tracepoint_probe_register(ls_tps[i].tp, ls_tps[i].probe, NULL);
		if (err) {
			pr_err(LS_NAME ": cannot attach to tracepoint %s: %d\n",
			       ls_tps[i].name, err);
			goto fail;
		}
		ls_tps[i].registered = true;
	}
	return 0;
fail:
	ls_probes_unregister();
	return err;
}
