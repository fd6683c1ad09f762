// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown --prom: what a pair's analysis leaves for Prometheus,
 * and the text file of every pair (node_exporter's textfile collector).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bd.h"
#include "prom.h"

/* Keep what --prom writes of a split pair (peer given in pp->head.peer already). */
int bd_prom_keep(struct bd_prom_pair *pp, const struct ls_bd_an *a,
		 const struct ls_bd_host *local, const struct ls_bd_host *peer,
		 struct ls_err *err)
{
	const struct ls_bd_host *hosts[2] = { local, peer };
	const struct ls_ctr_delta *d;
	size_t n = 0, ci;
	int ch;

	pp->head.ok = true;
	pp->sums[0] = a->sp.sum_total;
	pp->sums[1] = a->sp.sum_part[LS_PART_TRANSMISSION];
	pp->sums[2] = a->sp.sum_part[LS_PART_QUEUING];
	pp->sums[3] = a->sp.sum_part[LS_PART_PROCESSING];
	memcpy(pp->tail_share, a->sp.tail_share, sizeof(pp->tail_share));
	pp->floor_ns = a->sp.floor_ns;
	pp->next = a->v.next;
	pp->dom_p50 = a->v.dom_p50;
	pp->dom_tail = a->v.dom_tail;
	pp->level_p50 = a->v.level_p50;
	pp->clamped = a->sp.clamped;
	pp->n = a->n;
	pp->reliable = !ls_bd_unreliable(a);
	pp->complete = true;
	for (int h = 0; h < 2; h++) {
		const struct ls_bd_host *ho = hosts[h];

		if (!ho || !ho->measured)
			continue;
		pp->loss[h].measured = true;
		pp->loss[h].drops = ho->drops;
		pp->loss[h].truncated = ho->truncated;
		pp->loss[h].unwatched = ho->irqs_unwatched;
		pp->loss[h].stale = ho->comp_stale;
		pp->loss[h].untimed = ho->napi_untimed;
		pp->loss[h].unordered = ho->unordered;
		if (ls_bd_host_lossy(ho))
			pp->complete = false;
		if (!ho->obs.ok)
			continue;
		pp->obs[h].ok = true;
		pp->obs[h].per_ns = ls_bd_obs_per_sample(ho, a);
		pp->obs[h].share = a->sp.sum_total.p50 > 0 ? pp->obs[h].per_ns / a->sp.sum_total.p50 : 0;
		pp->obs[h].drain_s = ho->obs.drain_ok ? ho->obs.drain_cpu_ns / 1e9 : -1;
	}
	ls_bd_for_each_ctr(hosts, ch, ci, d)
		n += ls_ctr_moved(d);
	pp->ctr = n ? calloc(n, sizeof(*pp->ctr)) : NULL;
	if (n && !pp->ctr)
		return ls_errnof(err, ENOMEM, "--prom: statistics of %s", pp->head.peer);
	ls_bd_for_each_ctr(hosts, ch, ci, d) {
		struct bd_prom_ctr *pc;

		if (!ls_ctr_moved(d))
			continue;
		pc = &pp->ctr[pp->nctr++];
		pc->host = ch;
		snprintf(pc->name, sizeof(pc->name), "%s", d->name);
		pc->cls = d->cls;
		pc->value = d->gauge ? (double)d->after : (double)d->delta;
	}
	return 0;
}

/* What a per-host family of --prom shows: the observer's cost, or a loss. */
enum host_fig {
	OBS_PER_SAMPLE, OBS_SHARE, OBS_DRAIN, LOSS_DROPS, LOSS_TRUNC, LOSS_IRQS, LOSS_STALE,
	LOSS_UNTIMED, LOSS_UNORDERED
};

/* Host h's figure fig of pair pp into *v; false when it has none. */
static bool host_fig(const struct bd_prom_pair *pp, int h, enum host_fig fig, double *v)
{
	switch (fig) {
	case OBS_PER_SAMPLE:
		*v = pp->obs[h].per_ns * 1e-9;
		break;
	case OBS_SHARE:
		*v = pp->obs[h].share;
		break;
	case OBS_DRAIN:
		*v = pp->obs[h].drain_s;
		break;
	case LOSS_DROPS:
		*v = (double)pp->loss[h].drops;
		return pp->loss[h].measured;
	case LOSS_TRUNC:
		*v = pp->loss[h].truncated;
		return pp->loss[h].measured;
	case LOSS_STALE:
		*v = (double)pp->loss[h].stale;
		return pp->loss[h].measured;
	case LOSS_UNTIMED:
		*v = (double)pp->loss[h].untimed;
		return pp->loss[h].measured;
	case LOSS_UNORDERED:
		*v = (double)pp->loss[h].unordered;
		return pp->loss[h].measured;
	default:
		*v = pp->loss[h].unwatched;
		return pp->loss[h].measured;
	}
	return pp->obs[h].ok && *v >= 0;
}

/* One per-host family of --prom: a sample per pair and host that has the figure. */
static int prom_host(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		     const char *name, const char *help, enum host_fig fig, struct ls_err *err)
{
	struct ls_prom_label l[2];

	if (ls_prom_family(pr, name, LS_PROM_GAUGE, help, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].head.peer };
		for (int h = 0; h < 2; h++) {
			double v;

			if (!pp[i].head.ok || !host_fig(&pp[i], h, fig, &v))
				continue;
			l[1] = (struct ls_prom_label){ "host", bd_host_names[h] };
			if (ls_prom_sample(pr, NULL, l, 2, v, err))
				return -1;
		}
	}
	return 0;
}

/* What a per-pair family of --prom shows: a part's figure, or the pair's one. */
enum pair_fig { FIG_SUMMARY, FIG_MAX, FIG_TAIL_SHARE, FIG_FLOOR, FIG_CLAMPED, FIG_RELIABLE,
		FIG_COMPLETE };

/* Pair pp's figure fig (of part p for the part figures). */
static double pair_fig(const struct bd_prom_pair *pp, enum pair_fig fig, int p)
{
	switch (fig) {
	case FIG_MAX:
		return pp->sums[p].max * 1e-9;
	case FIG_TAIL_SHARE:
		return pp->tail_share[p];
	case FIG_FLOOR:
		return pp->floor_ns * 1e-9;
	case FIG_CLAMPED:
		return (double)pp->clamped;
	case FIG_COMPLETE:
		return pp->complete;
	default:
		return pp->reliable;
	}
}

/* A family with a sample per split pair: by part (nparts of them), or one (nparts 0). */
static int prom_pairs(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		      const char *name, enum ls_prom_type type, const char *help,
		      enum pair_fig fig, int nparts, struct ls_err *err)
{
	static const char *const names[4] = { "total", "transmission", "queuing", "processing" };
	struct ls_prom_label l[2];

	if (ls_prom_family(pr, name, type, help, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].head.peer };
		if (!pp[i].head.ok)
			continue;
		if (!nparts && ls_prom_sample(pr, NULL, l, 1, pair_fig(&pp[i], fig, 0), err))
			return -1;
		for (int p = 0; p < nparts; p++) {
			l[1] = (struct ls_prom_label){
				"part", fig == FIG_TAIL_SHARE ? ls_part_name(p) : names[p] };
			if (fig == FIG_SUMMARY ? ls_prom_summary(pr, l, 2, &pp[i].sums[p], err) :
			    ls_prom_sample(pr, NULL, l, 2, pair_fig(&pp[i], fig, p), err))
				return -1;
		}
	}
	return 0;
}

/* The pairs' up, the parts' summaries, maxima and tail shares, and the floor. */
static int prom_parts(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		      struct ls_err *err)
{
	if (ls_prom_up(pr, "latsplit_breakdown_up",
		       "1 when the pair was measured and split, 0 when its run failed.",
		       pp, n, sizeof(*pp), err))
		return -1;
	if (prom_pairs(pr, pp, n, "latsplit_breakdown_seconds", LS_PROM_SUMMARY,
		       "One-way RDMA latency by part (total = transmission + queuing + processing).",
		       FIG_SUMMARY, 4, err) ||
	    prom_pairs(pr, pp, n, "latsplit_breakdown_max_seconds", LS_PROM_GAUGE,
		       "Largest one-way latency by part.", FIG_MAX, 4, err) ||
	    prom_pairs(pr, pp, n, "latsplit_breakdown_tail_share", LS_PROM_GAUGE,
		       "Share of the slowest samples' excess over p50 by part.",
		       FIG_TAIL_SHARE, LS_NR_PARTS, err))
		return -1;
	return prom_pairs(pr, pp, n, "latsplit_breakdown_floor_seconds", LS_PROM_GAUGE,
			  "Base floor of processing (inferred, or a baseline's median residual).",
			  FIG_FLOOR, 0, err);
}

/* The attribution's fidelity (capped samples, reliable) and the verdict's level. */
static int prom_verdict(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
			struct ls_err *err)
{
	struct ls_prom_label l[4];

	if (prom_pairs(pr, pp, n, "latsplit_breakdown_clamped_samples", LS_PROM_GAUGE,
		       "Samples with more kernel time on their path than latency (processing capped).",
		       FIG_CLAMPED, 0, err) ||
	    prom_pairs(pr, pp, n, "latsplit_breakdown_attribution_reliable", LS_PROM_GAUGE,
		       "1 when at most 1 % of the samples were capped; 0: no verdict for this run.",
		       FIG_RELIABLE, 0, err) ||
	    prom_pairs(pr, pp, n, "latsplit_breakdown_complete", LS_PROM_GAUGE,
		       "1 when no kernel backend lost records or NIC IRQs; 0: the split misses them.",
		       FIG_COMPLETE, 0, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_breakdown_level", LS_PROM_GAUGE,
			   "Verdict on p50: 0 below normal, 1 normal, 2 elevated, 3 abnormal, 4 hurts training; absent when the attribution is unreliable.",
			   err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!pp[i].head.ok || !pp[i].reliable)
			continue;
		l[0] = (struct ls_prom_label){ "peer", pp[i].head.peer };
		l[1] = (struct ls_prom_label){ "next_layer", ls_layer_name(pp[i].next) };
		l[2] = (struct ls_prom_label){ "dominant_p50", ls_part_name(pp[i].dom_p50) };
		l[3] = (struct ls_prom_label){ "dominant_tail", ls_part_name(pp[i].dom_tail) };
		if (ls_prom_sample(pr, NULL, l, 4, (double)pp[i].level_p50, err))
			return -1;
	}
	return 0;
}

/* The statistics that moved on either host. */
static int prom_stats(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		      struct ls_err *err)
{
	struct ls_prom_label l[4];
	size_t i;

	if (ls_prom_family(pr, "latsplit_breakdown_stat_change", LS_PROM_GAUGE,
			   "NIC/RDMA/qdisc statistics that moved during the run (delta, or level for gauges).",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].head.peer };
		for (size_t k = 0; k < pp[i].nctr; k++) {
			const struct bd_prom_ctr *pc = &pp[i].ctr[k];

			l[1] = (struct ls_prom_label){ "host", bd_host_names[pc->host] };
			l[2] = (struct ls_prom_label){ "stat", pc->name };
			l[3] = (struct ls_prom_label){ "class", ls_ctr_class_name(pc->cls) };
			if (ls_prom_sample(pr, NULL, l, 4, pc->value, err))
				return -1;
		}
	}
	return 0;
}

/* The per-host families: the observer's cost, then what the backends lost. */
static const struct {
	const char *name, *help;
	enum host_fig fig;
} host_families[] = {
	{ "latsplit_breakdown_observer_seconds",
	  "The backend's own handler time on the host's relevant CPUs, one-way per sample.",
	  OBS_PER_SAMPLE },
	{ "latsplit_breakdown_observer_share",
	  "The backend's own handler time per sample as a share of the one-way p50.", OBS_SHARE },
	{ "latsplit_breakdown_drain_cpu_seconds",
	  "CPU time of the thread draining the kernel records during the run.", OBS_DRAIN },
	{ "latsplit_breakdown_dropped_records",
	  "Kernel records the backend dropped (ring full) during the run.", LOSS_DROPS },
	{ "latsplit_breakdown_records_truncated",
	  "1 when the host kept fewer records than the backend produced.", LOSS_TRUNC },
	{ "latsplit_breakdown_unwatched_irqs",
	  "NIC IRQs beyond the backends' limit, not watched.", LOSS_IRQS },
	{ "latsplit_breakdown_stale_completions",
	  "DMA completions pending longer than the backend's limit, dropped untimed.", LOSS_STALE },
	{ "latsplit_breakdown_untimed_napi_polls",
	  "NAPI polls outside NET_RX softirq (busy polling, threaded NAPI), not timed.",
	  LOSS_UNTIMED },
	{ "latsplit_breakdown_unordered_intervals",
	  "Kernel intervals dropped because they ended before their start (clock skew).",
	  LOSS_UNORDERED },
};

/*
 * --prom: Prometheus text (tools/cli/prom.h) for node_exporter's textfile
 * collector; one family at a time over every pair, a peer label each.
 */
int bd_write_prom(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		  struct ls_err *err)
{
	if (prom_parts(pr, pp, n, err) || prom_verdict(pr, pp, n, err))
		return -1;
	for (size_t f = 0; f < ARRAY_SIZE(host_families); f++)
		if (prom_host(pr, pp, n, host_families[f].name, host_families[f].help,
			      host_families[f].fig, err))
			return -1;
	return prom_stats(pr, pp, n, err);
}
