/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit breakdown` internals shared with the unit tests: what the
 * responder ships to the prober at the end of a session, and the baseline
 * a later run can take its floor from.
 *
 * At the end of a session (the probe's finish hook) the responder sends two
 * tagged OOB blobs: LS_BD_TAG_HDR, a JSON object (kind "breakdown-peer",
 * "proto": LS_BD_PROTO) with its backend, relevant CPUs, IRQs, record and
 * drop counts, link facts and counter deltas; then LS_BD_TAG_REC, its kernel
 * interval records as an array of struct ls_record in host byte order
 * (both ends are the same build; proto guards the layout).
 */
#ifndef LS_BREAKDOWN_H
#define LS_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../include/uapi/latsplit.h"
#include "counters.h"
#include "util.h"

#define LS_BD_PROTO		1
#define LS_BD_TAG_HDR		0x42444831u	/* "BDH1" */
#define LS_BD_TAG_REC		0x42445231u	/* "BDR1" */
#define LS_BD_HDR_MAX		(4u << 20)

/*
 * The observer's own cost on one host over the probe run (between the
 * probe's first and last iteration): time inside the backend's handlers,
 * on the host's relevant CPUs and on all of them, and the CPU time of the
 * thread that drains the records.
 */
struct ls_bd_obs {
	bool ok;			/* both handler readings taken */
	char why[160];			/* why not */
	uint64_t run_ns;		/* between the two readings */
	bool all_cpus;			/* no per-CPU split: hits, ns are every CPU's */
	uint64_t hits, ns;		/* handlers on the relevant CPUs */
	uint64_t all_hits, all_ns;	/* handlers on every CPU */
	uint64_t h_hits[LS_NR_HANDLERS], h_ns[LS_NR_HANDLERS];	/* relevant CPUs */
	bool drain_ok;
	uint64_t drain_cpu_ns;		/* the drain thread's CPU time over the run */
};

/* One host's kernel view, as the split needs it. */
struct ls_bd_host {
	bool measured;			/* a backend recorded on this host */
	char backend[16];		/* "kmod", "ebpf" or "none" */
	char why[300];			/* why unmeasured */
	uint64_t cpumask[LS_CPUMASK_WORDS];	/* relevant CPUs */
	uint32_t irqs[LS_MAX_IRQS];
	unsigned int nr_irqs;
	int probe_cpu;
	uint64_t records;		/* produced by the backend */
	uint64_t drops;			/* lost in the ring */
	uint64_t comp_stale;		/* COMPLETIONs dropped: pending over the limit */
	uint64_t napi_untimed;		/* NAPI polls outside NET_RX: not timed */
	uint64_t unordered;		/* intervals dropped: end before start */
	bool truncated;			/* more records than could be kept/shipped */
	unsigned int irqs_unwatched;	/* NIC IRQs past LS_MAX_IRQS, not watched */
	char ibdev[64], netdev[32], rate[64];
	double link_gbps;
	struct ls_ctr_diff ctr;		/* counter deltas over the run */
	struct ls_bd_obs obs;		/* the observer's own cost */
	struct ls_record *rec;		/* kernel records (sorted by start after load) */
	size_t nrec;
};

/*
 * For each counter delta d of both hosts (hosts[2], either NULL): h its
 * host (0 local, 1 peer), i its index in that host's list.
 */
#define ls_bd_for_each_ctr(hosts, h, i, d)					\
	for ((h) = 0; (h) < 2; (h)++)						\
		for ((i) = 0; (hosts)[h] && (i) < (hosts)[h]->ctr.n &&		\
			      ((d) = &(hosts)[h]->ctr.v[i]); (i)++)

/* Write h's header (everything but rec) as the peer JSON object to fp. */
void ls_bd_peer_write(FILE *fp, const struct ls_bd_host *h, unsigned int proto);
/* Parse a peer header; a different proto or kind is a clear error. */
int ls_bd_peer_parse(const char *text, size_t len, struct ls_bd_host *h,
		     struct ls_err *err);
void ls_bd_host_free(struct ls_bd_host *h);

#endif /* LS_BREAKDOWN_H */
