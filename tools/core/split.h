/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The split: attribute kernel time to probe samples and divide every
 * sample's one-way latency into transmission + queuing + processing.
 *
 * Attribution (struct ls_attr) is a streaming merge of one host's sample
 * windows (sorted by start) with that host's kernel interval records
 * (struct ls_record, pushed in non-decreasing start_ns order). A window is
 * finished as soon as a record starts at or after its end, and a record is
 * kept only while it can still overlap an unfinished window, so time is
 * linear in samples + records and memory is bounded by the records that
 * overlap one window.
 *
 * What a window counts: the wall-clock measure of the UNION of the counted
 * records (relevant CPUs, counted stages) clipped to the window. Stages
 * nest (COMPLETION spans a HARDIRQ, the SOFTIRQ_WAIT after it and the
 * SOFTIRQ_RUN that polls; INTERFERENCE repeats HARDIRQ/SOFTIRQ time on the
 * probe's CPU; NAPI_POLL runs inside SOFTIRQ_RUN), so each instant of the
 * union is given to exactly one (cpu, stage): the most specific stage
 * active at that instant (order in ls_attr_stage_rank()), lowest CPU on a
 * tie. Per-stage per-CPU figures therefore add up to the union and nothing
 * is counted twice, also not across CPUs: two CPUs busy at the same time
 * delay one sample once.
 */
#ifndef LS_SPLIT_H
#define LS_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/uapi/latsplit.h"
#include "names.h"
#include "stats.h"
#include "util.h"

/*
 * CPU ids the attribution accepts: a second host's records are passed with
 * their CPU offset by LS_MAX_CPUS (after moving them into the first host's
 * clock), so both hosts' kernel time is one union per sample.
 */
#define LS_ATTR_MAX_CPUS	(2 * LS_MAX_CPUS)
#define LS_ATTR_MASK_WORDS	(LS_ATTR_MAX_CPUS / 64)

/* One sample's window, in CLOCK_MONOTONIC of the host whose records are pushed. */
struct ls_window {
	uint64_t start_ns;
	uint64_t end_ns;
};

/* Time attributed to one (cpu, stage) over all windows. */
struct ls_attr_cell {
	uint64_t total_ns;	/* over all windows */
	uint64_t tail_ns;	/* over the windows flagged as tail */
	uint64_t windows;	/* windows that got any time from it */
	uint64_t max_ns;	/* largest amount in one window */
};

struct ls_attr_cfg {
	const struct ls_window *win;	/* sorted by start_ns */
	size_t n;
	const uint8_t *tail;		/* optional: 1 = window is in the tail */
	uint64_t cpumask[LS_ATTR_MASK_WORDS];	/* relevant CPUs */
	uint32_t stage_mask;		/* counted stages (1 << LS_STAGE_x) */
	bool per_window;		/* keep each window's time per host and stage */
};

/* Hosts told apart by CPU id in ls_attr_win_stage(): below LS_MAX_CPUS, then above. */
#define LS_ATTR_HOSTS		2

struct ls_attr_rec {
	uint64_t start_ns, end_ns;
	long long only;			/* the one window it counts for, or -1 */
	uint32_t cpu;
	uint16_t stage;
};

struct ls_attr {
	struct ls_attr_cfg cfg;
	uint64_t *kernel_ns;		/* [n]: union per window (output) */
	uint32_t *win_stage_ns;		/* [n][LS_ATTR_HOSTS][LS_NR_STAGES] when
					 * cfg.per_window: the union's time given to
					 * each (host, stage), saturated at 2^32-1 */
	struct ls_attr_cell *cells;	/* [LS_ATTR_MAX_CPUS * LS_NR_STAGES] */
	size_t next;			/* first unfinished window */
	uint64_t last_start;		/* order check */
	struct ls_attr_rec *act;	/* records that may overlap next.. */
	size_t nact, cap;
	uint64_t pushed, counted, ignored;	/* records seen / kept / not relevant */
	/* scratch for one window */
	struct ls_attr_ev *ev;
	size_t evcap;
};

/* All stages counted. */
#define LS_ATTR_ALL_STAGES	((1u << LS_NR_STAGES) - 1)

/* Rank of a stage when several cover one instant: lower = more specific, wins. */
int ls_attr_stage_rank(unsigned int stage);

/* Set up an attribution over cfg->win (windows must be sorted by start). */
int ls_attr_init(struct ls_attr *a, const struct ls_attr_cfg *cfg,
		 struct ls_err *err);
/* Feed one record; records must come in non-decreasing start_ns order. */
int ls_attr_push(struct ls_attr *a, const struct ls_record *r,
		 struct ls_err *err);
/*
 * Same, for a record that counts toward window `only` alone (a record on
 * one sample's path, see causal.h); -1 counts it for every window it
 * overlaps, like ls_attr_push().
 */
int ls_attr_push_for(struct ls_attr *a, const struct ls_record *r, long long only,
		     struct ls_err *err);
/* Finish every remaining window (call after the last record). */
void ls_attr_finish(struct ls_attr *a);
/* Cell of (cpu, stage). */
static inline struct ls_attr_cell *ls_attr_cell(struct ls_attr *a,
						unsigned int cpu,
						unsigned int stage)
{
	return &a->cells[cpu * LS_NR_STAGES + stage];
}
void ls_attr_free(struct ls_attr *a);
/* Index of window i's (host, stage) figure in win_stage_ns. */
static inline size_t ls_attr_win_stage_idx(size_t i, unsigned int host, unsigned int stage)
{
	return (i * LS_ATTR_HOSTS + host) * LS_NR_STAGES + stage;
}
/* Window i's time given to (host, stage); 0 without cfg.per_window. */
static inline uint64_t ls_attr_win_stage(const struct ls_attr *a, size_t i,
					 unsigned int host, unsigned int stage)
{
	if (!a->win_stage_ns || i >= a->cfg.n || host >= LS_ATTR_HOSTS ||
	    stage >= LS_NR_STAGES)
		return 0;
	return a->win_stage_ns[ls_attr_win_stage_idx(i, host, stage)];
}

/* Sort records by start_ns (then cpu) so they can be pushed. */
void ls_records_sort(struct ls_record *r, size_t n);

/* The three parts. */
enum ls_part {
	LS_PART_TRANSMISSION,
	LS_PART_QUEUING,
	LS_PART_PROCESSING,
	LS_NR_PARTS,
};
const char *ls_part_name(enum ls_part p);

struct ls_split_in {
	size_t n;
	const double *total_ns;		/* one-way latency per sample (RTT / 2) */
	const double *kernel_ns;	/* one-way kernel-attributed time per sample */
	const double *host_ns;		/* optional: host time from HW completion stamps */
	double transmission_ns;		/* the model's one-way figure */
	double floor_q;			/* quantile of the residual taken as floor (0..1) */
	bool fixed_floor;		/* use floor_ns instead of inferring it */
	double floor_ns;
	double tail_frac;		/* slowest fraction for the tail (0.01) */
};

struct ls_split_out {
	size_t n;
	double *part[LS_NR_PARTS];	/* per sample, sums to total_ns */
	double *base;			/* per sample: floor share of processing */
	double *kernel;			/* per sample: kernel share of processing */
	double floor_ns;		/* B */
	double residual_p50_ns;		/* p50 of total - T - kernel (or - host) */
	bool floor_inferred;		/* B came from this run's residuals */
	bool hw_host;			/* processing measured from HW stamps */
	size_t clamped;			/* samples where T + kernel > total */
	struct ls_summary sum_total, sum_part[LS_NR_PARTS], sum_kernel, sum_base;
	size_t tail_n;			/* samples in the tail */
	double tail_threshold_ns;	/* fastest total in the tail */
	double tail_excess_ns;		/* mean total - p50 over the tail */
	double tail_share[LS_NR_PARTS];	/* shares of the tail's excess, sum 1 */
};

/* Mark the slowest ceil(frac * n) samples (at least one) in tail[]; returns how many. */
size_t ls_split_mark_tail(const double *total_ns, size_t n, double frac,
			  uint8_t *tail);
/* Divide every sample into the three parts and summarize. */
int ls_split_compute(const struct ls_split_in *in, struct ls_split_out *out,
		     struct ls_err *err);
void ls_split_free(struct ls_split_out *out);

#endif /* LS_SPLIT_H */
