// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown, the analysis (analysis.h): the responder's clock
 * offset, the causal attribution of both hosts' kernel records to the
 * samples, the transmission model, the split and the verdict's inputs.
 * Pure computation on what it is handed: no I/O.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "causal.h"

/* Sort context for the clock-offset estimate. */
static const int64_t *theta_net;

/* qsort comparator: sample indices by their network round trip. */
static int net_cmp(const void *a, const void *b)
{
	int64_t x = theta_net[*(const size_t *)a], y = theta_net[*(const size_t *)b];

	return (x > y) - (x < y);
}

/* qsort comparator for int64. */
static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * NTP-style clock offset from m samples: per sample the offset th[i] (half
 * the forward one-way minus the backward one, each wrong by the offset in
 * opposite directions) and the network round trip net[i] (their sum, free
 * of it). The median offset over the 1 % of samples with the smallest
 * round trip, which queuing skewed least. An asymmetric path biases it by
 * half the asymmetry. net is reused as scratch.
 */
static int64_t theta_pick(int64_t *net, const int64_t *th, size_t *idx, size_t m)
{
	size_t k = m / 100 ? m / 100 : 1;

	for (size_t i = 0; i < m; i++)
		idx[i] = i;
	theta_net = net;
	qsort(idx, m, sizeof(*idx), net_cmp);
	for (size_t i = 0; i < k; i++)
		net[i] = th[idx[i]];	/* the best samples' offsets */
	qsort(net, k, sizeof(*net), i64_cmp);
	return net[k / 2];
}

/*
 * Clock offset theta = responder clock - prober clock from the probe's own
 * stamps: per sample (seen - start) forward and (end - answered) backward.
 * These one-ways include each host's time between its application and the
 * wire (a sender's SEND, a receiver's DELIVER), which need not be alike on
 * both hosts: ls_bd_packet_theta replaces it when both hosts recorded.
 */
int ls_bd_estimate_theta(struct ls_bd_an *a, const struct ls_probe_run *run,
			 struct ls_err *err)
{
	size_t m = a->peer_n;
	int64_t *net, *th;
	size_t *idx;

	if (!m)
		return 0;
	net = malloc(m * sizeof(*net));
	th = malloc(m * sizeof(*th));
	idx = malloc(m * sizeof(*idx));
	if (!net || !th || !idx) {
		free(net);
		free(th);
		free(idx);
		return ls_errnof(err, ENOMEM, "clock offset");
	}
	for (size_t i = 0; i < m; i++) {
		const struct ls_probe_sample *s = &run->samples[i], *p = &run->peer[i];

		net[i] = (int64_t)(s->end_ns - s->start_ns) - (int64_t)(p->end_ns - p->start_ns);
		th[i] = ((int64_t)(p->start_ns - s->start_ns) + (int64_t)(p->end_ns - s->end_ns)) / 2;
	}
	a->theta_ns = theta_pick(net, th, idx, m);
	a->have_theta = true;
	a->theta_src = LS_BD_THETA_STAMPS;
	a->theta_samples = m;
	free(net);
	free(th);
	free(idx);
	return 0;
}

/*
 * One end of a probe message's trip: host h sent it (out) or took it in,
 * to the QP of the side named (requests: the responder's), with the
 * application stamp that bounds the record (posted at, seen at).
 */
struct pkt_end {
	const struct ls_bd_host *h;
	bool in, requests;
	uint64_t *t;		/* [m]: the packet instant, h's clock; 0: no record */
};

/* The instants of one end of m messages, bounded by stamp[] (ls_causal_sent, ls_causal_last_in). */
static void pkt_end_find(const struct pkt_end *e, const struct ls_probe_run *run,
			 const uint64_t *stamp, size_t m, uint32_t *cpu)
{
	uint32_t qpn = e->requests ? run->peer_qpn : run->qpn;
	int64_t psn0 = e->requests ? run->req_psn0 : run->ans_psn0;

	if (e->in) {
		struct ls_causal_in in = { .rec = e->h->rec, .nrec = e->h->nrec, .n = m,
					   .seen = stamp, .qpn = qpn, .psn0 = psn0,
					   .pkts = run->pkts, .requests = e->requests };

		ls_causal_last_in(&in, e->t, cpu);
	} else {
		struct ls_causal_tx tx = { .rec = e->h->rec, .nrec = e->h->nrec, .n = m,
					   .posted = stamp, .qpn = qpn, .psn0 = psn0,
					   .pkts = run->pkts, .requests = e->requests };

		ls_causal_sent(&tx, e->t, cpu);
	}
}

/*
 * Clock offset from the packets themselves, when both hosts recorded: per
 * sample the TX_PKT and RX_PKT of the request's last packet (prober out,
 * responder in) and of the answer's (responder out, prober in). Those
 * one-ways are the wire's alone, driver to stack, so a host's own time
 * (Soft-RoCE's send work waiting for a CPU: milliseconds on a loaded or
 * emulated host, and not the same on both) no longer biases the offset.
 * Samples without all four records are left out; with fewer than
 * LS_BD_THETA_PKT_MIN left, the application-stamp estimate stays.
 */
int ls_bd_packet_theta(struct ls_bd_an *a, const struct ls_probe_run *run,
		       const struct ls_bd_host *local, const struct ls_bd_host *peer,
		       struct ls_err *err)
{
	struct pkt_end e[4] = {
		{ local, false, true, NULL },	/* request: prober out, at the sample's start */
		{ peer, true, true, NULL },	/* responder in, seen at its "seen" */
		{ peer, false, false, NULL },	/* answer: responder out, at "answered" */
		{ local, true, false, NULL },	/* prober in, seen at the sample's end */
	};
	size_t m = a->peer_n, c = 0;
	uint64_t *stamp = NULL;
	int64_t *net = NULL, *th = NULL;
	size_t *idx = NULL;
	uint32_t *cpu = NULL;
	int ret = 0, k;

	if (!m || !local || !peer || !local->measured || !peer->measured)
		return 0;
	for (k = 0; k < 4; k++)
		e[k].t = malloc(m * sizeof(*e[k].t));
	stamp = malloc(m * sizeof(*stamp));
	net = malloc(m * sizeof(*net));
	th = malloc(m * sizeof(*th));
	idx = malloc(m * sizeof(*idx));
	cpu = malloc(m * sizeof(*cpu));
	if (!e[0].t || !e[1].t || !e[2].t || !e[3].t || !stamp || !net || !th || !idx || !cpu) {
		ret = ls_errnof(err, ENOMEM, "clock offset from %zu samples' packets", m);
		goto out;
	}
	for (k = 0; k < 4; k++) {
		for (size_t i = 0; i < m; i++)
			stamp[i] = k == 0 ? run->samples[i].start_ns : k == 1 ? run->peer[i].start_ns :
				   k == 2 ? run->peer[i].end_ns : run->samples[i].end_ns;
		pkt_end_find(&e[k], run, stamp, m, cpu);
	}
	for (size_t i = 0; i < m; i++) {
		int64_t fwd, bwd;

		if (!e[0].t[i] || !e[1].t[i] || !e[2].t[i] || !e[3].t[i])
			continue;
		fwd = (int64_t)(e[1].t[i] - e[0].t[i]);	/* + theta */
		bwd = (int64_t)(e[3].t[i] - e[2].t[i]);	/* - theta */
		if (fwd + bwd < 0)	/* a packet cannot arrive before it left */
			continue;
		net[c] = fwd + bwd;
		th[c++] = (fwd - bwd) / 2;
	}
	if (c >= LS_BD_THETA_PKT_MIN) {
		a->theta_ns = theta_pick(net, th, idx, c);
		a->have_theta = true;
		a->theta_src = LS_BD_THETA_PACKETS;
		a->theta_samples = c;
	}
out:
	for (k = 0; k < 4; k++)
		free(e[k].t);
	free(stamp);
	free(net);
	free(th);
	free(idx);
	free(cpu);
	return ret;
}

/*
 * A busy-polling probe task switched out while it waits delays nothing
 * unless its message arrives meanwhile; the preemption that matters is the
 * one that ends just before the task saw the message. Keep a PREEMPT record
 * only if it ends within slack before some "seen" instant (ascending).
 */
static bool preempt_counts(const struct ls_record *r, const uint64_t *seen, size_t n,
			   uint64_t slack)
{
	size_t lo = 0, hi = n;

	if (r->stage != LS_STAGE_PREEMPT)
		return true;
	while (lo < hi) {		/* first seen >= end */
		size_t mid = lo + (hi - lo) / 2;

		if (seen[mid] < r->end_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && seen[lo] - r->end_ns <= slack;
}

/* A record for the attribution, with the one window it counts for (-1: any). */
struct bd_ent {
	struct ls_record r;
	long long only;
};

/* What the attribution is fed: causal entries, and concurrent records. */
struct bd_sets {
	struct bd_ent *ent;
	size_t nent, capent;
	struct ls_record *conc;
	size_t nconc, capconc;
};

/* Append an entry (record r counting for window only, or -1 for any). */
static int sets_ent(struct bd_sets *S, const struct ls_record *r, long long only)
{
	if (ls_grow(&S->ent, &S->capent, S->nent, sizeof(*S->ent), 4096))
		return -1;
	S->ent[S->nent++] = (struct bd_ent){ *r, only };
	return 0;
}

/* Append a concurrent record. */
static int sets_conc(struct bd_sets *S, const struct ls_record *r)
{
	if (ls_grow(&S->conc, &S->capconc, S->nconc, sizeof(*S->conc), 4096))
		return -1;
	S->conc[S->nconc++] = *r;
	return 0;
}

/* qsort comparator: entries by start, then CPU. */
static int ent_cmp(const void *x, const void *y)
{
	const struct bd_ent *p = x, *q = y;

	if (p->r.start_ns != q->r.start_ns)
		return p->r.start_ns < q->r.start_ns ? -1 : 1;
	if (p->r.cpu != q->r.cpu)
		return p->r.cpu < q->r.cpu ? -1 : 1;
	return 0;
}

/*
 * A probe-task record (already in the prober's clock) into the sets, once
 * per window it overlaps, from that sample's message's arrival on (arrive,
 * the host's clock: shift moves it): before the message was there the
 * task had nothing to see, so time taken from it then delayed nothing.
 */
static int task_ents(const struct ls_bd_an *a, struct bd_sets *S, const struct ls_record *r,
		     const uint64_t *arrive, size_t n, int64_t shift)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {		/* first window starting after the record */
		size_t mid = lo + (hi - lo) / 2;

		if (a->win[mid].start_ns <= r->start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && a->win[lo - 1].end_ns > r->start_ns)
		lo--;
	for (size_t j = lo; j < a->n && a->win[j].start_ns < r->end_ns; j++) {
		struct ls_record c = *r;
		int64_t from = j < n && arrive[j] ? (int64_t)arrive[j] - shift : 0;

		if ((int64_t)c.start_ns < from)
			c.start_ns = (uint64_t)from;
		if (c.end_ns > c.start_ns && sets_ent(S, &c, (long long)j))
			return -1;
	}
	return 0;
}

/*
 * A span the host derived for sample i (DELIVER, SEND) from `from` to `to`
 * in its clock, on its CPU cpu, into the sets (moved by shift, cpu_off).
 */
static int span_ent(struct bd_sets *S, unsigned int stage, size_t i, uint64_t from,
		    uint64_t to, uint32_t cpu, int64_t shift, unsigned int cpu_off)
{
	struct ls_record c = { .stage = stage, .cpu = cpu + cpu_off };
	int64_t st = (int64_t)from - shift, en = (int64_t)to - shift;

	if (!from || st < 0 || en <= st || cpu >= LS_MAX_CPUS)
		return 0;
	c.start_ns = (uint64_t)st;
	c.end_ns = (uint64_t)en;
	return sets_ent(S, &c, (long long)i);
}

/*
 * One host's records into the sets, causally (see causal.h): the probe
 * task's stages count for the windows they overlap from the sample's
 * message's arrival on (a PREEMPT only when it ends just before a "seen"
 * of pre_seen), the receive path only for the samples whose packets it
 * carried, the rest of the receive path is concurrent; each message's
 * DELIVER (its last packet in to "seen") and, with tx, SEND (posted to its
 * last packet out). shift moves the records into the prober's clock,
 * cpu_off keeps the hosts' CPUs apart.
 */
static int host_sets(struct ls_bd_an *a, int hi, const struct ls_bd_host *h,
		     const struct ls_causal_in *cin, const struct ls_causal_tx *tx,
		     const uint64_t *pre_seen, size_t pre_n, uint64_t slack, int64_t shift,
		     unsigned int cpu_off, struct bd_sets *S, struct ls_err *err)
{
	size_t nt = tx && tx->n ? tx->n : 1;
	struct ls_causal_out co;
	uint64_t *arrive, *left;
	uint32_t *left_cpu;
	size_t l = 0;
	int ret = 0;

	arrive = malloc((cin->n ? cin->n : 1) * sizeof(*arrive));
	left = malloc(nt * sizeof(*left));
	left_cpu = malloc(nt * sizeof(*left_cpu));
	if (!arrive || !left || !left_cpu) {
		ls_errnof(err, ENOMEM, "arrivals of %zu samples", cin->n);
		goto fail;
	}
	if (ls_causal_link(cin, &co, err))
		goto fail;
	ls_causal_arrivals(cin, &co, arrive);
	a->rx[hi].packets = co.packets;
	a->rx[hi].matched = co.matched;
	a->rx[hi].samples = co.samples;
	a->rx[hi].n = cin->n;
	for (size_t i = 0; i < h->nrec && !ret; i++) {
		struct ls_record r = h->rec[i];
		int64_t st = (int64_t)r.start_ns - shift;
		int64_t en = (int64_t)r.end_ns - shift;

		if (st < 0 || en < st || r.cpu >= LS_MAX_CPUS)
			continue;
		r.start_ns = (uint64_t)st;
		r.end_ns = (uint64_t)en;
		r.cpu += cpu_off;
		if (ls_stage_task(r.stage)) {
			if (preempt_counts(&h->rec[i], pre_seen, pre_n, slack))
				ret = task_ents(a, S, &r, arrive, cin->n, shift);
			else
				a->preempt_dropped++;
		} else if (ls_stage_rx_path(r.stage) && !co.linked[i]) {
			ret = sets_conc(S, &r);
		} else if (ls_stage_rx_path(r.stage)) {
			while (l < co.nlink && co.link[l].rec < i)
				l++;
			for (; l < co.nlink && co.link[l].rec == i && !ret; l++) {
				/* only the part on the sample's path: its span, clipped */
				const struct ls_causal_link *k = &co.link[l];
				struct ls_record c = r;
				int64_t from = (int64_t)k->from - shift;
				int64_t to = (int64_t)k->to - shift;

				if ((int64_t)c.start_ns < from)
					c.start_ns = from > 0 ? (uint64_t)from : 0;
				if ((int64_t)c.end_ns > to)
					c.end_ns = to > 0 ? (uint64_t)to : 0;
				if (c.end_ns > c.start_ns)
					ret = sets_ent(S, &c, (long long)k->sample);
			}
		}
	}
	/* the message in the host: its last packet in to "seen" */
	for (size_t i = 0; cin->seen_app && i < cin->n && !ret; i++) {
		a->rx[hi].delivered += co.last_rx[i] && co.last_rx[i] < cin->seen[i];
		ret = span_ent(S, LS_STAGE_DELIVER, i, co.last_rx[i], cin->seen[i],
			       co.last_cpu[i], shift, cpu_off);
	}
	/* and the host's own message: posted to its last packet out */
	if (tx) {
		ls_causal_sent(tx, left, left_cpu);
		for (size_t i = 0; i < tx->n && !ret; i++) {
			a->rx[hi].sent += left[i] != 0;
			ret = span_ent(S, LS_STAGE_SEND, i, left[i] ? tx->posted[i] : 0,
				       left[i], left_cpu[i], shift, cpu_off);
		}
	}
	ls_causal_free(&co);
	free(arrive);
	free(left);
	free(left_cpu);
	if (ret)
		return ls_errnof(err, ENOMEM, "attribution: %zu records", h->nrec);
	return 0;
fail:
	free(arrive);
	free(left);
	free(left_cpu);
	return -1;
}

/* Per-sample instants the attribution hands the causal rules. */
struct bd_stamps {
	uint64_t *seen, *rx_seen, *sent, *posted;
	uint64_t *app;			/* the sender's application stamps */
};

/* The prober's records into the sets: its answers in, its requests out. */
static int local_sets(struct ls_bd_an *a, const struct ls_probe_run *run,
		      struct ls_bd_host *local, const struct ls_bd_host *peer, uint64_t slack,
		      struct ls_attr_cfg *cfg, const struct bd_stamps *t, struct bd_sets *S,
		      struct ls_err *err)
{
	uint64_t *seen = t->seen, *sent = t->sent, *posted = t->posted, *app = t->app;
	struct ls_causal_in cin = {
		.rec = local->rec, .nrec = local->nrec, .n = a->n, .seen = seen,
		.qpn = run->qpn, .psn0 = run->ans_psn0, .pkts = run->pkts,
		.seen_app = true, .requests = false,
	};

	/*
	 * an answer cannot arrive before its first packet left the
	 * responder (its TX_PKT, else its "answered" stamp)
	 */
	if (a->have_theta && a->peer_n == a->n) {
		struct ls_causal_tx ans = {
			.rec = peer && peer->measured ? peer->rec : NULL,
			.nrec = peer && peer->measured ? peer->nrec : 0,
			.n = a->n, .posted = app, .qpn = run->qpn,
			.psn0 = run->ans_psn0, .pkts = run->pkts, .requests = false,
		};

		for (size_t i = 0; i < a->n; i++)
			app[i] = run->peer[i].end_ns;
		ls_causal_sent_bound(&ans, app, -a->theta_ns, sent);
		cin.sent = sent;
	}
	/* its request: posted at the sample's start, to the responder's QP */
	struct ls_causal_tx tx = {
		.rec = local->rec, .nrec = local->nrec, .n = a->n, .posted = posted,
		.qpn = run->peer_qpn, .psn0 = run->req_psn0, .pkts = run->pkts,
		.requests = true,
	};

	memcpy(cfg->cpumask, local->cpumask, sizeof(local->cpumask));
	for (size_t i = 0; i < a->n; i++) {
		seen[i] = run->samples[i].end_ns;	/* the prober saw the answer */
		posted[i] = run->samples[i].start_ns;
	}
	if (host_sets(a, 0, local, &cin, &tx, seen, a->n, slack, 0, 0, S, err))
		return -1;
	a->host_measured[0] = true;
	return 0;
}

/* The responder's records, moved into the prober's clock: requests in, answers out. */
static int peer_sets(struct ls_bd_an *a, const struct ls_probe_run *run,
		     const struct ls_bd_host *local, struct ls_bd_host *peer, uint64_t slack,
		     struct ls_attr_cfg *cfg, const struct bd_stamps *t, struct bd_sets *S,
		     struct ls_err *err)
{
	uint64_t *seen = t->seen, *rx_seen = t->rx_seen, *sent = t->sent, *posted = t->posted;
	uint64_t *app = t->app;
	/*
	 * The responder saw sample i's request at peer[i].start_ns; a
	 * run without those stamps (READ: no responder code runs)
	 * bounds its path by the window's end in its clock.
	 */
	size_t rx_n = a->peer_n ? a->peer_n : a->n;
	struct ls_causal_in cin = {
		.rec = peer->rec, .nrec = peer->nrec, .n = rx_n, .seen = rx_seen,
		.qpn = run->peer_qpn, .psn0 = run->req_psn0, .pkts = run->pkts,
		.seen_app = a->peer_n > 0, .requests = true,
	};

	for (int w = 0; w < LS_CPUMASK_WORDS; w++)
		cfg->cpumask[LS_CPUMASK_WORDS + w] = peer->cpumask[w];
	for (size_t i = 0; i < a->peer_n; i++)
		seen[i] = run->peer[i].start_ns;
	/*
	 * a request cannot arrive before its first packet left the
	 * prober (its TX_PKT, else the sample's start)
	 */
	struct ls_causal_tx req = {
		.rec = local->measured ? local->rec : NULL,
		.nrec = local->measured ? local->nrec : 0,
		.n = rx_n, .posted = app, .qpn = run->peer_qpn,
		.psn0 = run->req_psn0, .pkts = run->pkts, .requests = true,
	};

	for (size_t i = 0; i < rx_n; i++)
		app[i] = run->samples[i].start_ns;
	ls_causal_sent_bound(&req, app, a->theta_ns, sent);
	cin.sent = sent;
	for (size_t i = 0; i < rx_n; i++)
		rx_seen[i] = a->peer_n ? run->peer[i].start_ns :
			     (uint64_t)((int64_t)run->samples[i].end_ns + a->theta_ns);
	/* its answer: posted at its "answered" stamp, to the prober's QP */
	struct ls_causal_tx tx = {
		.rec = peer->rec, .nrec = peer->nrec, .n = a->peer_n, .posted = posted,
		.qpn = run->qpn, .psn0 = run->ans_psn0, .pkts = run->pkts,
		.requests = false,
	};

	for (size_t i = 0; i < a->peer_n; i++)
		posted[i] = run->peer[i].end_ns;
	if (host_sets(a, 1, peer, &cin, a->peer_n ? &tx : NULL, seen, a->peer_n, slack, a->theta_ns,
		      LS_MAX_CPUS, S, err))
		return -1;
	a->host_measured[1] = true;
	return 0;
}

/* Both attributions from the sets: the causal entries in order, then the concurrent records. */
static int attr_push_sets(struct ls_bd_an *a, const struct ls_attr_cfg *cfg,
			  struct bd_sets *S, struct ls_err *err)
{
	if (ls_attr_init(&a->attr, cfg, err))
		return -1;
	a->attr_ok = true;
	if (ls_attr_init(&a->conc, cfg, err))
		return -1;
	a->conc_ok = true;
	qsort(S->ent, S->nent, sizeof(*S->ent), ent_cmp);
	for (size_t i = 0; i < S->nent; i++)
		if (ls_attr_push_for(&a->attr, &S->ent[i].r, S->ent[i].only, err))
			return -1;
	ls_attr_finish(&a->attr);
	ls_records_sort(S->conc, S->nconc);
	for (size_t i = 0; i < S->nconc; i++)
		if (ls_attr_push(&a->conc, &S->conc[i], err))
			return -1;
	ls_attr_finish(&a->conc);
	for (size_t i = 0; i < a->n; i++)
		a->kern_rtt[i] = (double)a->attr.kernel_ns[i];
	return 0;
}

/*
 * One attribution over the prober's windows of both hosts' records: the
 * responder's moved into the prober's clock (minus theta) with their CPU
 * ids offset by LS_MAX_CPUS, so an instant where both hosts were busy is
 * counted once and the kernel part never exceeds the round trip. Only what
 * was on a sample's path counts (host_sets); what merely overlapped it goes
 * into a second attribution, the concurrent context.
 */
int ls_bd_attribute(struct ls_bd_an *a, const struct ls_probe_run *run,
		    struct ls_bd_host *local, struct ls_bd_host *peer, uint64_t slack,
		    struct ls_err *err)
{
	struct ls_attr_cfg cfg = { .win = a->win, .n = a->n, .tail = a->tail,
				   .stage_mask = LS_ATTR_ALL_STAGES,
				   .per_window = a->per_window };
	struct bd_stamps t = {
		.seen = malloc((a->n ? a->n : 1) * sizeof(*t.seen)),
		.rx_seen = malloc((a->n ? a->n : 1) * sizeof(*t.rx_seen)),
		.sent = malloc((a->n ? a->n : 1) * sizeof(*t.sent)),
		.posted = malloc((a->n ? a->n : 1) * sizeof(*t.posted)),
		.app = malloc((a->n ? a->n : 1) * sizeof(*t.app)),
	};
	struct bd_sets S = { 0 };
	int ret = -1;

	if (!t.seen || !t.rx_seen || !t.sent || !t.posted || !t.app) {
		ls_errnof(err, ENOMEM, "%zu samples", a->n);
		goto out;
	}
	if (local->measured && local_sets(a, run, local, peer, slack, &cfg, &t, &S, err))
		goto out;
	if (peer && peer->measured && a->have_theta &&
	    peer_sets(a, run, local, peer, slack, &cfg, &t, &S, err))
		goto out;
	if (attr_push_sets(a, &cfg, &S, err))
		goto out;
	ret = 0;
out:
	free(S.ent);
	free(S.conc);
	free(t.seen);
	free(t.rx_seen);
	free(t.sent);
	free(t.posted);
	free(t.app);
	return ret;
}

/* Cell of (host, cpu, stage) in an attribution of both hosts. */
const struct ls_attr_cell *ls_bd_cell(const struct ls_attr *at, int h, unsigned int cpu,
				      unsigned int st)
{
	return &at->cells[((unsigned int)h * LS_MAX_CPUS + cpu) * LS_NR_STAGES + st];
}

/* Cell of (host, cpu, stage) in the causal attribution. */
static const struct ls_attr_cell *cell_of(const struct ls_bd_an *a, int h, unsigned int cpu,
					  unsigned int st)
{
	return ls_bd_cell(&a->attr, h, cpu, st);
}

/* More than 1 % of the samples had more kernel time on their path than latency. */
bool ls_bd_unreliable(const struct ls_bd_an *a)
{
	return a->sp.clamped * 100 > a->n;
}

/*
 * True when a measured host lost anything: records dropped (ring full, or
 * ending before their start) or cut, NIC IRQs unwatched, NAPI polls untimed. Stale completions are not counted
 * here: an interrupt that needed no poll (a transmit completion after the
 * last packet) ends the same way, and the count cannot tell them apart.
 */
bool ls_bd_host_lossy(const struct ls_bd_host *h)
{
	return h && h->measured && (h->drops || h->truncated || h->irqs_unwatched ||
				    h->napi_untimed || h->unordered);
}

/* Append one loss phrase to buf at *off. */
static void loss_add(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void loss_add(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	if (*off) {
		n = snprintf(buf + *off, len - *off, "; ");
		*off += n > 0 ? (size_t)n : 0;
		if (*off >= len)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off += n > 0 ? (size_t)n : 0;
}

/* What the run's hosts lost, "; "-separated (see analysis.h). */
bool ls_bd_losses(const struct ls_bd_host *const hosts[2], char *buf, size_t len)
{
	static const char *const role[2] = { "prober", "responder" };
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < 2; i++) {
		const struct ls_bd_host *h = hosts[i];

		if (!ls_bd_host_lossy(h))
			continue;
		if (h->drops)
			loss_add(buf, len, &off, "%s: %llu kernel records dropped (ring full: raise --ring-kib)",
				 role[i], (unsigned long long)h->drops);
		if (h->truncated)
			loss_add(buf, len, &off, "%s: records cut (more than could be kept: shorten the run)",
				 role[i]);
		if (h->irqs_unwatched)
			loss_add(buf, len, &off, "%s: %u NIC IRQs not watched (over %d)", role[i],
				 h->irqs_unwatched, LS_MAX_IRQS);
		if (h->napi_untimed)
			loss_add(buf, len, &off, "%s: %llu NAPI polls outside NET_RX softirq (busy polling or threaded NAPI), not timed",
				 role[i], (unsigned long long)h->napi_untimed);
		if (h->unordered)
			loss_add(buf, len, &off, "%s: %llu intervals dropped, ending before their start (clock skew between CPUs)",
				 role[i], (unsigned long long)h->unordered);
	}
	return off > 0;
}

/* A host's handler time on its relevant CPUs, one-way ns per sample. */
double ls_bd_obs_per_sample(const struct ls_bd_host *h, const struct ls_bd_an *a)
{
	return a->n && a->div ? (double)h->obs.ns / a->n / a->div : 0;
}

/* Map the probe's verb (and mode) to the wire model's. */
static enum ls_wire_verb wire_verb(enum ls_probe_verb v, bool events)
{
	switch (v) {
	case LS_VERB_SEND:
		return LS_WIRE_SEND;
	case LS_VERB_READ:
		return LS_WIRE_READ;
	default:
		return events ? LS_WIRE_WRITE_IMM : LS_WIRE_WRITE;
	}
}

/* Fill the verdict inputs from the split, the cells and the counters. */
static int verdict_inputs(struct ls_bd_an *a, struct ls_bd_host *hosts[2],
			  const struct ls_bd_base *base, const struct ls_bd_params *c)
{
	struct ls_vd_in *in = &a->vin;
	const struct ls_ctr_delta *d;
	size_t cap = 0, ci;
	int ch;

	memset(in, 0, sizeof(*in));
	in->total_p50 = a->sp.sum_total.p50;
	in->total_p99 = a->sp.sum_total.p99;
	for (int p = 0; p < LS_NR_PARTS; p++) {
		in->part_p50[p] = a->sp.sum_part[p].p50;
		in->tail_share[p] = a->sp.tail_share[p];
	}
	in->kernel_p50 = a->sp.sum_kernel.p50;
	in->base_p50 = a->sp.sum_base.p50;
	in->tail_excess_ns = a->sp.tail_excess_ns;
	in->recorded = a->host_measured[0] || a->host_measured[1];
	in->rate_gbps = a->wcfg.link_gbps;
	in->expect_gbps = c->expect_gbps;
	if (base->have) {
		in->have_baseline = true;
		in->b_total_p50 = base->total_p50;
		memcpy(in->b_part_p50, base->part_p50, sizeof(in->b_part_p50));
		in->b_kernel_p50 = base->kernel_p50;
	}
	a->vcpu = calloc(2 * LS_MAX_CPUS, sizeof(*a->vcpu));
	for (int h = 0; h < 2; h++)
		if (hosts[h])
			cap += hosts[h]->ctr.n;
	a->vctr = calloc(cap ? cap : 1, sizeof(*a->vctr));
	if (!a->vcpu || !a->vctr)
		return -1;
	for (int h = 0; h < 2; h++) {
		if (!a->attr_ok)
			break;
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			struct ls_vd_cpu *v = &a->vcpu[a->nvcpu];
			uint64_t sum = 0, tail = 0, best = 0, wait = 0, work = 0;
			uint64_t best_wait = 0, best_work = 0;

			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = cell_of(a, h, cpu, st);

				sum += cell->total_ns;
				tail += cell->tail_ns;
				if (cell->total_ns > best) {
					best = cell->total_ns;
					v->stage = st;
				}
				if (LS_VD_WAIT_STAGES & (1u << st)) {
					wait += cell->total_ns;
					if (cell->total_ns > best_wait) {
						best_wait = cell->total_ns;
						v->wait_stage = st;
					}
				} else if (LS_VD_WORK_STAGES & (1u << st)) {
					work += cell->total_ns;
					if (cell->total_ns > best_work) {
						best_work = cell->total_ns;
						v->work_stage = st;
					}
				}
			}
			if (!sum)
				continue;
			v->host = h;
			v->cpu = cpu;
			v->mean_ns = (double)sum / a->n / a->div;
			v->wait_mean_ns = (double)wait / a->n / a->div;
			v->work_mean_ns = (double)work / a->n / a->div;
			v->tail_mean_ns = a->tail_n ? (double)tail / a->tail_n / a->div : 0;
			v->base_mean_ns = base->have ? 0 : NAN;
			for (unsigned int k = 0; k < base->ncpu; k++)
				if (base->cpu[k].host == h && base->cpu[k].cpu == cpu)
					v->base_mean_ns = base->cpu[k].mean_ns;
			a->nvcpu++;
		}
	}
	ls_bd_for_each_ctr(hosts, ch, ci, d) {
		if (!ls_ctr_moved(d))
			continue;
		a->vctr[a->nvctr++] = (struct ls_vd_ctr){
			.host = ch, .name = d->name, .cls = d->cls, .delta = d->delta,
			.after = d->after, .gauge = d->gauge };
	}
	in->cpus = a->vcpu;
	in->ncpus = a->nvcpu;
	in->ctrs = a->vctr;
	in->nctrs = a->nvctr;
	return 0;
}

/* Free the analysis. */
void ls_bd_an_free(struct ls_bd_an *a)
{
	free(a->total);
	free(a->kern_rtt);
	free(a->kernel);
	free(a->win);
	free(a->tail);
	if (a->attr_ok)
		ls_attr_free(&a->attr);
	if (a->conc_ok)
		ls_attr_free(&a->conc);
	ls_split_free(&a->sp);
	free(a->vcpu);
	free(a->vctr);
}

/* Run the whole analysis on the prober's result and both hosts' data. */
int ls_bd_analyze(struct ls_bd_an *a, const struct ls_probe_result *r,
		  const struct ls_bd_params *c, struct ls_bd_host *local,
		  struct ls_bd_host *peer, const struct ls_bd_base *base, struct ls_err *err)
{
	const struct ls_probe_run *run = &r->runs[0];
	struct ls_bd_host *hosts[2] = { local, peer };
	struct ls_split_in sin = { 0 };
	struct ls_wire_cfg w4;
	struct ls_wire wire4;

	memset(a, 0, sizeof(*a));
	a->n = run->count;
	a->div = ls_probe_rtt_divisor(r->verb);
	a->peer_n = peer ? (run->peer_count < a->n ? run->peer_count : a->n) : 0;
	a->per_window = true;	/* --samples, and the verdict's waits and work per sample */
	if (!a->n)
		return ls_errf(err, "the probe produced no samples");
	a->total = calloc(a->n, sizeof(double));
	a->kern_rtt = calloc(a->n, sizeof(double));
	a->kernel = calloc(a->n, sizeof(double));
	a->win = calloc(a->n, sizeof(*a->win));
	a->tail = calloc(a->n, 1);
	if (!a->total || !a->kern_rtt || !a->kernel || !a->win || !a->tail)
		return ls_errnof(err, ENOMEM, "breakdown of %zu samples", a->n);
	for (size_t i = 0; i < a->n; i++) {
		a->win[i].start_ns = run->samples[i].start_ns;
		a->win[i].end_ns = run->samples[i].end_ns;
		a->total[i] = (double)(run->samples[i].end_ns - run->samples[i].start_ns) / a->div;
	}
	a->tail_n = ls_split_mark_tail(a->total, a->n, c->tail_frac, a->tail);
	if (peer && ls_bd_estimate_theta(a, run, err))
		return -1;
	if (peer && ls_bd_packet_theta(a, run, local, peer, err))
		return -1;
	if (ls_bd_attribute(a, run, local, peer, c->preempt_slack_ns, err))
		return -1;
	for (size_t i = 0; i < a->n; i++)
		a->kernel[i] = a->kern_rtt[i] / a->div;

	/* transmission model */
	a->wcfg.size = run->size;
	a->wcfg.verb = wire_verb(r->verb, r->events);
	a->wcfg.mtu = r->mtu;
	a->wcfg.ipv6 = r->dev.gid[0] && strncmp(r->dev.gid, "::ffff:", 7) != 0 &&
		       strchr(r->dev.gid, ':') != NULL;
	a->wcfg.cable_m = c->cable_m;
	a->wcfg.hops = c->hops;
	a->wcfg.sw = c->sw;
	if (c->link_gbps > 0) {
		a->wcfg.link_gbps = c->link_gbps;
		snprintf(a->rate_text, sizeof(a->rate_text), "--link-gbps %g", c->link_gbps);
	} else {
		a->wcfg.link_gbps = r->dev.link_gbps;
		snprintf(a->rate_text, sizeof(a->rate_text), "port rate \"%s\"", r->dev.rate);
	}
	a->wcfg.rate_src = a->rate_text;
	if (ls_wire_compute(&a->wcfg, &a->wire, err))
		return ls_err_wrap(err, "transmission model (give --link-gbps if the port rate is unknown)");
	w4 = a->wcfg;
	w4.size = 4;
	if (ls_wire_compute(&w4, &wire4, err))
		return -1;
	a->thr = c->thr;
	a->thr.offset_ns = a->wire.total_ns - wire4.total_ns;

	/* the split */
	sin.n = a->n;
	sin.total_ns = a->total;
	sin.kernel_ns = a->kernel;
	sin.transmission_ns = a->wire.total_ns;
	sin.floor_q = c->floor_q;
	sin.tail_frac = c->tail_frac;
	if (base->have) {
		sin.fixed_floor = true;
		sin.floor_ns = base->floor_ns;
	}
	if (ls_split_compute(&sin, &a->sp, err))
		return -1;
	if (verdict_inputs(a, hosts, base, c))
		return ls_errnof(err, ENOMEM, "verdict inputs");
	if (ls_vd_kernel_split(&a->attr, a->div, c->floor_q, &a->vin, err))
		return -1;
	ls_verdict_decide(&a->thr, &a->vin, &a->v);
	return 0;
}
