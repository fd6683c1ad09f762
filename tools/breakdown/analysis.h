/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit breakdown`'s analysis, pure computation on what it is handed:
 * the responder's clock offset (ls_bd_estimate_theta), the causal
 * attribution of both hosts' kernel records to the probe's samples
 * (ls_bd_attribute), then the transmission model, the split and the
 * verdict (ls_bd_analyze). Method: Documentation/methodology.rst.
 */
#ifndef LS_BD_ANALYSIS_H
#define LS_BD_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breakdown.h"
#include "probe.h"
#include "split.h"
#include "verdict.h"
#include "wire.h"

/* A baseline run's figures (from its --json). */
/* A baseline run's figures (from its --json). */
struct ls_bd_base {
	bool have;
	double floor_ns, total_p50, part_p50[LS_NR_PARTS], kernel_p50;
	struct { int host; unsigned int cpu; double mean_ns; } cpu[2 * LS_MAX_CPUS];
	unsigned int ncpu;
};

/* Samples with all four packet records a packet-level clock offset needs. */
#define LS_BD_THETA_PKT_MIN	8

/* What the responder's clock offset was estimated from. */
enum ls_bd_theta_src {
	LS_BD_THETA_STAMPS,		/* the probe's application stamps */
	LS_BD_THETA_PACKETS,		/* the packets' TX_PKT / RX_PKT records */
};

/* Everything the prober computes after the run. */
struct ls_bd_an {
	size_t n;
	unsigned int div;
	double *total;
	double *kern_rtt;		/* union of both hosts' kernel time in the RTT window */
	double *kernel;			/* one-way kernel-attributed */
	struct ls_window *win;		/* the prober's sample windows */
	size_t preempt_dropped;		/* preemptions not ending at a "seen" */
	struct ls_attr attr;		/* what was on the samples' path */
	bool attr_ok;
	bool per_window;		/* keep attr's figures per sample and stage (--samples, verdict) */
	struct ls_attr conc;		/* receive-path work that only overlapped them */
	bool conc_ok;
	struct {
		size_t packets, matched, samples, n;
		size_t delivered, sent;	/* samples with a DELIVER, a SEND span */
	} rx[2];			/* per host: its probe packets as RX_PKT saw them */
	bool host_measured[2];
	uint8_t *tail;
	size_t tail_n;
	int64_t theta_ns;		/* responder clock - prober clock */
	bool have_theta;
	enum ls_bd_theta_src theta_src;	/* what theta_ns was estimated from */
	size_t theta_samples;		/* from how many samples */
	size_t peer_n;			/* samples with responder stamps */
	struct ls_wire_cfg wcfg;
	struct ls_wire wire;
	char rate_text[96];
	struct ls_split_out sp;
	struct ls_vd_cpu *vcpu;
	size_t nvcpu;
	struct ls_vd_ctr *vctr;
	size_t nvctr;
	struct ls_vd_in vin;
	struct ls_verdict v;
	struct ls_thresholds thr;
};

/* The analysis' settings (breakdown's options). */
struct ls_bd_params {
	double link_gbps;		/* 0 = the port's rate */
	double cable_m;
	unsigned int hops;
	enum ls_wire_switch sw;
	double floor_q;			/* residual quantile taken as the base floor */
	double tail_frac;		/* slowest share of samples in the tail */
	uint64_t preempt_slack_ns;	/* a PREEMPT counts when it ends this close to a "seen" */
	struct ls_thresholds thr;
	double expect_gbps;		/* 0 = no expectation */
};

struct ls_jdoc;
/* A baseline breakdown JSON doc (read from path) measured with size and verb into b. */
int ls_bd_parse_baseline(const struct ls_jdoc *doc, const char *path, uint32_t size,
			 enum ls_probe_verb verb, struct ls_bd_base *b, struct ls_err *err);
/* Load a baseline breakdown JSON file measured with size and verb into b (report_json.c). */
int ls_bd_load_baseline(const char *path, uint32_t size, enum ls_probe_verb verb,
			struct ls_bd_base *b, struct ls_err *err);
/* Responder clock - prober clock from a->peer_n samples' stamps into a->theta_ns. */
int ls_bd_estimate_theta(struct ls_bd_an *a, const struct ls_probe_run *run,
			 struct ls_err *err);
/*
 * The same from the probe packets' TX_PKT and RX_PKT records on both hosts,
 * replacing the stamps' estimate when LS_BD_THETA_PKT_MIN samples have all
 * four; no change otherwise (a host not measured, no records).
 */
int ls_bd_packet_theta(struct ls_bd_an *a, const struct ls_probe_run *run,
		       const struct ls_bd_host *local, const struct ls_bd_host *peer,
		       struct ls_err *err);
/*
 * Attribute both hosts' records to the windows a->win[0..a->n) (a->tail,
 * a->per_window, and a->theta_ns when peer is given, set by the caller):
 * a->attr what was on a sample's path, a->conc what only overlapped it,
 * a->kern_rtt per window.
 */
int ls_bd_attribute(struct ls_bd_an *a, const struct ls_probe_run *run,
		    struct ls_bd_host *local, struct ls_bd_host *peer, uint64_t slack,
		    struct ls_err *err);
/* The whole analysis of the prober's result r and both hosts' data into a. */
int ls_bd_analyze(struct ls_bd_an *a, const struct ls_probe_result *r,
		  const struct ls_bd_params *c, struct ls_bd_host *local,
		  struct ls_bd_host *peer, const struct ls_bd_base *base, struct ls_err *err);
/* Free what ls_bd_analyze (or ls_bd_attribute) allocated in a. */
void ls_bd_an_free(struct ls_bd_an *a);
/* Cell of (host, cpu, stage) in an attribution of both hosts. */
const struct ls_attr_cell *ls_bd_cell(const struct ls_attr *at, int h, unsigned int cpu,
				      unsigned int st);
/* More than 1 % of the samples had more kernel time on their path than latency. */
bool ls_bd_unreliable(const struct ls_bd_an *a);
/* True when a measured host lost anything (records dropped or cut, IRQs unwatched, NAPI untimed). */
bool ls_bd_host_lossy(const struct ls_bd_host *h);
/*
 * What the run's hosts (hosts[0] the prober, hosts[1] the responder, either
 * NULL) lost, as "; "-separated phrases in buf ("" when nothing): a split
 * with losses is incomplete. Returns true when there were any.
 */
bool ls_bd_losses(const struct ls_bd_host *const hosts[2], char *buf, size_t len);
/* A host's handler time on its relevant CPUs, one-way ns per sample. */
double ls_bd_obs_per_sample(const struct ls_bd_host *h, const struct ls_bd_an *a);

#endif /* LS_BD_ANALYSIS_H */
