/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict: how bad the latency is against the seed's thresholds, which
 * part dominates the median and the tail, what evidence points at a fault,
 * and the layer to inspect next in the seed's order:
 * link rate/width -> PFC/queues -> RDMA path -> CPU/IRQ affinity.
 *
 * Faults are named only on evidence: a link slower than expected, counters
 * of the relevant class that moved, or a part that is out of proportion.
 * With a baseline, a part is a finding when its p50 grew by at least
 * `share` of the baseline total p50 and carries at least half the growth.
 * Without one, queuing is a finding only when its p50 is at least `share`
 * of the total p50, it is the largest part at the p50 and a backend
 * recorded (else the residual holds processing's spread too); the CPU is
 * a finding only when the kernel's waits (LS_VD_WAIT_STAGES) rose above
 * their floor by at least `share` of the total p50: kernel work
 * (LS_VD_WORK_STAGES) every packet needs is the driver's and transport's.
 * The tail (slowest 1 %) is described by its shares, not called a fault.
 */
#ifndef LS_VERDICT_H
#define LS_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "split.h"
#include "util.h"

enum ls_level {
	LS_LEVEL_FAST,		/* below the normal range */
	LS_LEVEL_NORMAL,	/* within [normal_lo, normal_hi] */
	LS_LEVEL_ELEVATED,	/* above normal, not yet abnormal */
	LS_LEVEL_ABNORMAL,	/* > abnormal */
	LS_LEVEL_HURTS,		/* > hurts: visibly slows training */
};

enum ls_layer {
	LS_LAYER_NONE,
	LS_LAYER_LINK,		/* link rate / width */
	LS_LAYER_QUEUES,	/* PFC / switch and NIC queues */
	LS_LAYER_RDMA,		/* RDMA hardware path */
	LS_LAYER_CPU,		/* CPU / IRQ affinity */
};

/* Thresholds for a 4-byte one-way latency (ns), and how they scale. */
struct ls_thresholds {
	double normal_lo_ns;	/* 1500 */
	double normal_hi_ns;	/* 3000 */
	double abnormal_ns;	/* 5000 */
	double hurts_ns;	/* 10000 */
	double offset_ns;	/* added to all: transmission(size) - transmission(4 B) */
	double share;		/* proportion of the p50 that makes a part a finding (0.2), above */
};

/*
 * Kernel time split in two. Waits: work that was due and did not run (a
 * raised softirq not yet entered, a hard IRQ's thread not yet running, a
 * completion event's task not yet woken, the probe task runnable or its
 * CPU taken, a message in the host that no handler was running for:
 * DELIVER on the way in, SEND on the way out). Work: the handlers running
 * (hard IRQ, softirq, NAPI poll, completion processing). RX_PKT and TX_PKT
 * are instants and in neither.
 */
#define LS_VD_WAIT_STAGES	((1u << LS_STAGE_SOFTIRQ_WAIT) | (1u << LS_STAGE_IRQ_THREAD) | \
				 (1u << LS_STAGE_WAKEUP) | (1u << LS_STAGE_PREEMPT) | \
				 (1u << LS_STAGE_INTERFERENCE) | (1u << LS_STAGE_DELIVER) | \
				 (1u << LS_STAGE_SEND))
#define LS_VD_WORK_STAGES	((1u << LS_STAGE_HARDIRQ) | (1u << LS_STAGE_SOFTIRQ_RUN) | \
				 (1u << LS_STAGE_NAPI_POLL) | (1u << LS_STAGE_COMPLETION))

/* Processing attributed to one CPU of one host (means per sample). */
struct ls_vd_cpu {
	int host;		/* 0 = prober (local), 1 = responder (peer) */
	unsigned int cpu;
	unsigned int stage;	/* the stage that gave it most time */
	double mean_ns;		/* attributed one-way ns per sample */
	double tail_mean_ns;	/* same, over the tail samples */
	double base_mean_ns;	/* baseline run's mean, NAN without baseline */
	double wait_mean_ns;	/* of mean_ns, the wait stages' */
	unsigned int wait_stage;	/* the wait stage that gave it most time */
	double work_mean_ns;	/* of mean_ns, the work stages' */
	unsigned int work_stage;	/* the work stage that gave it most time */
};

/* A counter that moved, on one host. */
struct ls_vd_ctr {
	int host;
	const char *name;
	enum ls_ctr_class cls;
	int64_t delta;
	uint64_t after;
	bool gauge;
};

struct ls_vd_in {
	double total_p50, total_p99;
	double part_p50[LS_NR_PARTS];
	double kernel_p50, base_p50;	/* processing = kernel + base */
	double tail_share[LS_NR_PARTS];
	double tail_excess_ns;
	bool have_baseline;
	double b_total_p50, b_part_p50[LS_NR_PARTS], b_kernel_p50;
	bool recorded;			/* a kernel backend recorded on at least one host */
	/* per sample one-way waits and work (ls_vd_kernel_split): p50 and floor */
	double waits_p50, waits_floor, work_p50, work_floor;
	double rate_gbps, expect_gbps;	/* expect 0 = unknown */
	const struct ls_vd_cpu *cpus;
	size_t ncpus;
	const struct ls_vd_ctr *ctrs;	/* moved counters only */
	size_t nctrs;
};

#define LS_VD_MAX_FINDINGS	8

struct ls_finding {
	enum ls_layer layer;
	char text[400];
};

struct ls_verdict {
	enum ls_level level_p50, level_p99;
	enum ls_part dom_p50, dom_tail;
	bool dom_p50_base;		/* processing's p50 is mostly the inferred base */
	enum ls_layer next;
	char next_why[400];
	struct ls_finding f[LS_VD_MAX_FINDINGS];
	unsigned int nf;
	int cpu_host, cpu;		/* the CPU named (-1: none) */
	unsigned int cpu_stage;
	/* (p50 - floor) / total p50 of waits and of work; NAN when nothing recorded */
	double waits_excess_share, work_excess_share;
};

/* The seed's defaults (1.5-3 us normal, > 5 abnormal, > 10 hurts, share 0.2). */
void ls_thresholds_default(struct ls_thresholds *t);
/* Validate: 0 < lo <= hi <= abnormal <= hurts, 0 < share < 1. */
int ls_thresholds_check(const struct ls_thresholds *t, struct ls_err *err);
/* Parse "LO-HI" in microseconds for the normal range. */
int ls_parse_range_us(const char *s, double *lo_ns, double *hi_ns, struct ls_err *err);
/* Level of a latency against the (offset) thresholds. */
enum ls_level ls_level_of(const struct ls_thresholds *t, double ns);
const char *ls_level_name(enum ls_level l);
const char *ls_layer_name(enum ls_layer l);
/*
 * Each sample's kernel time of the attribution `at` (kept per window, in
 * round-trip windows: one-way = / div) split into waits and work; their
 * p50 and floor_q quantile over the samples into in->waits_* / work_*.
 */
int ls_vd_kernel_split(const struct ls_attr *at, unsigned int div, double floor_q,
		       struct ls_vd_in *in, struct ls_err *err);
/* Decide. */
void ls_verdict_decide(const struct ls_thresholds *t, const struct ls_vd_in *in,
		       struct ls_verdict *v);

#endif /* LS_VERDICT_H */
