/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latsplit.ko internals shared by its files:
 *   latsplit_main.c   module init/exit, parameters, configuration swap
 *   latsplit_probes.c tracepoint probes, the ib_uverbs kretprobe
 *   latsplit_ring.c   per-CPU histograms and record rings, the records file
 *   latsplit_ctl.c    debugfs: control, config, hist, stats
 */
#ifndef _LATSPLIT_KMOD_H
#define _LATSPLIT_KMOD_H

#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/stddef.h>
#include <linux/types.h>

#include <uapi/latsplit.h>

struct file;

#define LS_NAME			"latsplit"
/* Largest accepted write to the control file. */
#define LS_CTL_MAX		4096
/* Largest record ring, KiB per CPU. */
#define LS_RING_MAX_KIB		65536

/*
 * A configuration. Immutable once published through ls_active: a change
 * builds a new one and swaps it in while the probes are stopped.
 */
struct ls_cfg {
	u32 nr_irqs;
	u32 irqs[LS_MAX_IRQS];
	/* pid of the IRQ's handler thread (threaded IRQs, PREEMPT_RT), or 0 */
	pid_t irq_thread[LS_MAX_IRQS];
	u32 nr_tasks;
	pid_t tasks[LS_MAX_TASKS];	/* init-namespace thread ids */
	u32 ring_kib;			/* per CPU; 0 = no records */
	bool no_hist;			/* records only: histograms not kept */
	struct cpumask cpus;		/* INTERFERENCE CPUs */
};

/*
 * Per-CPU record ring: one producer (this CPU, IRQs off), one reader. Its
 * cursors live in struct ls_pcpu, so a record touches only its slot's page.
 */
struct ls_ring {
	u32 mask;			/* slots - 1, slots a power of two */
	u32 wake;			/* fill that wakes the reader (LS_RING_WAKE_DIV) */
	struct ls_record rec[] ____cacheline_aligned;
};

/*
 * Per-CPU state. Touched only by probes running on this CPU with IRQs
 * disabled, so plain accesses are enough; the control path clears it only
 * while the probes are stopped (ls_active == NULL after a grace period)
 * or, for CPU hotplug, on the CPU itself with IRQs off.
 */
struct ls_pcpu {
	struct ls_hist *hist;		/* LS_NR_SLOTS histograms (vmalloc) */
	struct ls_ring *ring;		/* NULL when records are off */
	u32 ring_mask;			/* ring->mask, beside the cursors */
	u32 ring_wake;			/* ring->wake */
	u64 written;			/* records written into ring */
	u64 drops;			/* records lost: ring full */
	u64 comp_stale;			/* COMPLETIONs too old to keep */
	u64 napi_untimed;		/* polls with no start (not NET_RX) */
	u64 ring_head;			/* next slot the producer writes */
	/* next slot the reader reads: its own line, the reader writes it */
	u64 ring_tail ____cacheline_aligned;
	/* The observer's own cost on this CPU, per handler (ls_obs_end()). */
	struct ls_obs_cell obs[LS_NR_HANDLERS];
	u32 obs_est[LS_NR_HANDLERS];	/* ns per call: EWMA of the timed ones */
	u32 obs_rng;			/* xorshift32 state: which calls are timed */

	/* Intervals in flight, cleared by ls_pcpu_clear_transient(). */
	struct_group(transient,
	/* watched hardirq entry, 0 = none */
	u64 hard_start ____cacheline_aligned;
	u32 hard_idx;			/* its index in cfg->irqs */
	u32 intf_irq;			/* IRQ of the INTERFERENCE hardirq */
	u64 intf_start;			/* INTERFERENCE hardirq entry */
	u64 comp_start[LS_MAX_IRQS];	/* COMPLETION pending since */
	u64 thr_start[LS_MAX_IRQS];	/* IRQ_THREAD pending since */
	u32 thr_pending;		/* bit i: thr_start[i] != 0 */
	u32 comp_pending;		/* bit i: comp_start[i] != 0 */
	u64 raise_ts[LS_NR_SOFTIRQS];	/* first raise not yet served */
	u64 run_start;			/* softirq entry */
	u32 run_vec;			/* vector + 1 being served, 0 = none */
	u32 run_nested;			/* hardirqs nested in this run */
	u16 run_flags;			/* LS_REC_F_RT_THREAD when threaded */
	u16 run_intf;			/* this run is INTERFERENCE too */
	u64 napi_mark;			/* NET_RX: start of the next poll */
	u32 napi_nested;		/* run_nested at napi_mark */
	u32 comp_depth;			/* ib_uverbs_comp_handler nesting */
	u64 comp_ts;			/* its entry time */
	);
};

/* latsplit_main.c */
extern struct ls_cfg __rcu *ls_active;
extern struct ls_pcpu __percpu *ls_pcpu;
extern unsigned long ls_completion_max_ns;
void ls_pcpu_clear_transient(struct ls_pcpu *pc);
/* Apply control text (one or more verb lines) atomically; caller holds no lock. */
int ls_ctl_apply(const char *text, bool nowait, struct file *file);
void ls_ctl_release(struct file *file);
void ls_ctl_records_closed(void);
/* Format the current configuration as "key value" lines. */
int ls_cfg_show(struct seq_file *m);
bool ls_is_enabled(void);
u32 ls_hdr_flags(void);
/* Copy the watched IRQ list for the hist header; returns the count. */
u32 ls_cfg_irqs(u32 *irqs);

/* latsplit_probes.c */
int ls_probes_register(void);
void ls_probes_unregister(void);
void ls_tasks_clear(void);
bool ls_wakeup_hook_armed(void);
int ls_wakeup_hook_init(void);
void ls_wakeup_hook_exit(void);

/* latsplit_ring.c */
void ls_ring_wake_reader(void);
int ls_rings_alloc(struct ls_ring **rings, u32 kib);
int ls_ring_add_cpu(unsigned int cpu, u32 kib);
unsigned int ls_rings_count(void);
void ls_rings_free(struct ls_ring **rings);
void ls_rings_install(struct ls_ring **rings);
void ls_rings_reset(void);
void ls_hist_reset(void);
void ls_obs_reset(void);
bool ls_records_busy(void);
void ls_records_wake(void);
int ls_ring_init(void);
void ls_ring_exit(void);
extern const struct file_operations ls_records_fops;

/* latsplit_ctl.c */
int ls_debugfs_init(void);
void ls_debugfs_exit(void);

#endif /* _LATSPLIT_KMOD_H */
