// SPDX-License-Identifier: GPL-2.0
/*
 * Causal attribution: link receive-path records to the samples whose
 * packets they carried (see causal.h and Documentation/methodology.rst).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "lab/roce_bth.h"

/* True for the stages of the receive path (what a packet's arrival runs). */
bool ls_stage_rx_path(unsigned int stage)
{
	switch (stage) {
	case LS_STAGE_HARDIRQ:
	case LS_STAGE_SOFTIRQ_WAIT:
	case LS_STAGE_SOFTIRQ_RUN:
	case LS_STAGE_NAPI_POLL:
	case LS_STAGE_COMPLETION:
	case LS_STAGE_IRQ_THREAD:
		return true;
	default:
		return false;
	}
}

/* True for the stages tied to the probe task (its CPU, its wakeups). */
bool ls_stage_task(unsigned int stage)
{
	return stage == LS_STAGE_INTERFERENCE || stage == LS_STAGE_PREEMPT ||
	       stage == LS_STAGE_WAKEUP;
}

/* The receive-path records of one host, by CPU then start. */
struct rx_index {
	const struct ls_record *rec;
	size_t *idx;		/* record indices, sorted by (cpu, start):
				 * the receive path's and the RX_PKT instants */
	uint64_t *maxend;	/* running max of end_ns within each CPU's run */
	size_t n;
};

static const struct ls_record *sort_rec;

/* qsort comparator: record indices by (cpu, start_ns, end_ns). */
static int idx_cmp(const void *a, const void *b)
{
	const struct ls_record *x = &sort_rec[*(const size_t *)a];
	const struct ls_record *y = &sort_rec[*(const size_t *)b];

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	return 0;
}

/* qsort comparator: links by (rec, sample). */
static int link_cmp(const void *a, const void *b)
{
	const struct ls_causal_link *x = a, *y = b;

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	if (x->sample != y->sample)
		return x->sample < y->sample ? -1 : 1;
	return 0;
}

/* Build the per-CPU index of the receive-path records. */
static int rx_index_build(struct rx_index *ix, const struct ls_record *rec, size_t nrec)
{
	size_t n = 0;

	ix->rec = rec;
	ix->idx = malloc((nrec ? nrec : 1) * sizeof(*ix->idx));
	ix->maxend = malloc((nrec ? nrec : 1) * sizeof(*ix->maxend));
	if (!ix->idx || !ix->maxend)
		return -1;
	for (size_t i = 0; i < nrec; i++)
		if ((ls_stage_rx_path(rec[i].stage) || rec[i].stage == LS_STAGE_RX_PKT) &&
		    rec[i].end_ns >= rec[i].start_ns)
			ix->idx[n++] = i;
	sort_rec = rec;
	qsort(ix->idx, n, sizeof(*ix->idx), idx_cmp);
	for (size_t k = 0; k < n; k++) {
		const struct ls_record *r = &rec[ix->idx[k]];

		ix->maxend[k] = r->end_ns;
		if (k > 0 && rec[ix->idx[k - 1]].cpu == r->cpu &&
		    ix->maxend[k - 1] > r->end_ns)
			ix->maxend[k] = ix->maxend[k - 1];
	}
	ix->n = n;
	return 0;
}

/* [lo, hi): the index range of CPU cpu. */
static void cpu_range(const struct rx_index *ix, uint32_t cpu, size_t *lo, size_t *hi)
{
	size_t a = 0, b = ix->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (ix->rec[ix->idx[m]].cpu < cpu)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = ix->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (ix->rec[ix->idx[m]].cpu <= cpu)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

/*
 * The records on cpu that overlap [from, to] (both ends included): [*first,
 * *last) holds every one of them (and others to skip by their end).
 */
static void overlap_range(const struct rx_index *ix, uint32_t cpu, uint64_t from,
			  uint64_t to, size_t *first, size_t *last)
{
	size_t lo, hi, a, b;

	cpu_range(ix, cpu, &lo, &hi);
	a = lo;
	b = hi;
	while (a < b) {		/* first k whose running max end reaches from */
		size_t m = a + (b - a) / 2;

		if (ix->maxend[m] < from)
			a = m + 1;
		else
			b = m;
	}
	*first = a;
	b = hi;
	while (a < b) {		/* first k that starts after to */
		size_t m = a + (b - a) / 2;

		if (ix->rec[ix->idx[m]].start_ns <= to)
			a = m + 1;
		else
			b = m;
	}
	*last = a;
}

/* True when a RoCE packet entered on cpu in [from, to). */
static bool rx_between(const struct rx_index *ix, uint32_t cpu, uint64_t from, uint64_t to)
{
	size_t first, last;

	overlap_range(ix, cpu, from, to, &first, &last);
	for (size_t k = first; k < last; k++) {
		const struct ls_record *r = &ix->rec[ix->idx[k]];

		if (r->stage == LS_STAGE_RX_PKT && r->start_ns >= from && r->start_ns < to)
			return true;
	}
	return false;
}

/*
 * Where the receive path of a packet that entered on cpu at t began: at
 * the NIC interrupt that led to its poll (the COMPLETION containing t).
 * Without one (another NAPI's poll, transmit, ended it first, or the poll
 * ran deferred), at the NET_RX raise whose wait ended when the run
 * containing t began, when the run ran in a thread (ksoftirqd, PREEMPT_RT:
 * the CPU was held by what a softirq cannot preempt, and every packet
 * that came meanwhile waited for it) or delivered no other RoCE packet
 * before this one (otherwise the raise was for that one, and this one may
 * still have been on the wire); else at the NAPI poll containing t, else
 * at t.
 */
static uint64_t chain_start(const struct rx_index *ix, uint32_t cpu, uint64_t t)
{
	uint64_t comp = UINT64_MAX, poll = UINT64_MAX, run = UINT64_MAX;
	bool threaded = false;
	size_t first, last;

	overlap_range(ix, cpu, t, t, &first, &last);
	for (size_t k = first; k < last; k++) {
		const struct ls_record *r = &ix->rec[ix->idx[k]];

		if (r->end_ns < t)
			continue;
		if (r->stage == LS_STAGE_COMPLETION && r->start_ns < comp)
			comp = r->start_ns;
		if (r->stage == LS_STAGE_NAPI_POLL && r->start_ns < poll)
			poll = r->start_ns;
		if (r->stage == LS_STAGE_SOFTIRQ_RUN && r->id == LS_SOFTIRQ_NET_RX &&
		    r->start_ns < run) {
			run = r->start_ns;
			threaded = r->flags & LS_REC_F_RT_THREAD;
		}
	}
	if (comp != UINT64_MAX)
		return comp;
	if (run != UINT64_MAX && (threaded || !rx_between(ix, cpu, run, t))) {
		overlap_range(ix, cpu, run, run, &first, &last);
		for (size_t k = first; k < last; k++) {
			const struct ls_record *r = &ix->rec[ix->idx[k]];

			if (r->stage == LS_STAGE_SOFTIRQ_WAIT &&
			    r->id == LS_SOFTIRQ_NET_RX && r->end_ns == run)
				return r->start_ns;
		}
	}
	return poll != UINT64_MAX ? poll : t;
}

/*
 * Message index of a packet record (RX_PKT or TX_PKT) to qpn whose first
 * message starts at psn0, pkts packets each, n messages; requests: request
 * opcodes only, else anything but an ACK. -1 when it is none of them.
 */
static long long packet_msg(const struct ls_record *r, uint32_t qpn, int64_t psn0,
			    uint32_t pkts, bool requests, size_t n)
{
	unsigned int op = LS_RX_OPCODE(r->aux), cls = ls_bth_class(op);
	uint64_t k;

	if (r->id != qpn || psn0 < 0 || !pkts)
		return -1;
	if (requests ? cls != LS_BTH_REQ : cls == LS_BTH_ACK)
		return -1;
	k = (LS_RX_PSN(r->aux) - (uint64_t)psn0) & 0xffffff;
	k /= pkts;
	return k < n ? (long long)k : -1;
}

/* Sample index of an RX_PKT record, or -1 when it is not one of the probe's packets. */
static long long packet_sample(const struct ls_causal_in *in, const struct ls_record *r)
{
	return packet_msg(r, in->qpn, in->psn0, in->pkts, in->requests, in->n);
}

/* True when a packet record is the last packet of its message (PSNs from psn0, pkts each). */
static bool last_of_msg(const struct ls_record *r, int64_t psn0, uint32_t pkts)
{
	uint64_t k = (LS_RX_PSN(r->aux) - (uint64_t)psn0) & 0xffffff;

	return k % pkts == pkts - 1;
}

/* Which of a host's packet records are one message's: stage, QP, PSNs, count. */
struct pkt_kind {
	unsigned int stage;		/* LS_STAGE_RX_PKT or LS_STAGE_TX_PKT */
	uint32_t qpn;
	int64_t psn0;
	uint32_t pkts;
	bool requests;			/* as ls_causal_in's */
	size_t n;			/* messages */
	bool last;			/* the message's last packet only */
};

/*
 * Per message, one of its packet records of kind k into t[k->n] and cpu[]
 * (may be NULL; 0: none): the latest at or before bound[] (latest), else
 * the earliest at or after it.
 */
static void pkt_pick(const struct ls_record *rec, size_t nrec, const struct pkt_kind *k,
		     const uint64_t *bound, bool latest, uint64_t *t, uint32_t *cpu)
{
	for (size_t i = 0; i < k->n; i++) {
		t[i] = 0;
		if (cpu)
			cpu[i] = 0;
	}
	for (size_t p = 0; p < nrec; p++) {
		const struct ls_record *r = &rec[p];
		uint64_t at = r->start_ns;
		long long s;

		if (r->stage != k->stage)
			continue;
		s = packet_msg(r, k->qpn, k->psn0, k->pkts, k->requests, k->n);
		if (s < 0 || (k->last && !last_of_msg(r, k->psn0, k->pkts)) ||
		    (latest ? at > bound[s] : at < bound[s]))
			continue;
		if (t[s] && (latest ? at < t[s] : at >= t[s]))
			continue;
		t[s] = at;
		if (cpu)
			cpu[s] = r->cpu;
	}
}

/* Append a link, growing the array. */
static int add_link(struct ls_causal_out *out, size_t *cap, size_t rec, size_t sample,
		    uint64_t from, uint64_t to)
{
	if (ls_grow(&out->link, cap, out->nlink, sizeof(*out->link), 256))
		return -1;
	out->link[out->nlink++] = (struct ls_causal_link){ rec, sample, from, to };
	return 0;
}

/* qsort comparator: uint64_t ascending. */
static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One of the probe's packets, the sample it names and where its chain began. */
struct pkt_chain {
	size_t rec;
	size_t sample;
	uint64_t chain;		/* chain_start's, before the send bounds it */
};

/*
 * The packets' shortest flight, sender's TX_PKT to the start of their
 * chain here, as the low decile over the packets whose chain began at or
 * after they were sent (a packet that came in while the host was idle:
 * its own interrupt started it); 0 with fewer than LS_CAUSAL_FLIGHT_MIN
 * of them or without in->sent. A packet that came in the middle of a poll
 * was on the wire for at least that long after it was sent: its chain
 * starts no earlier than sent + flight. The clock offset's error is in
 * both terms and cancels. d[np] is scratch.
 */
static uint64_t flight_estimate(const struct ls_causal_in *in, const struct pkt_chain *pc,
				size_t np, uint64_t *d)
{
	size_t nd = 0;

	if (!in->sent)
		return 0;
	for (size_t k = 0; k < np; k++) {
		uint64_t sent = in->sent[pc[k].sample];

		if (sent && pc[k].chain >= sent)
			d[nd++] = pc[k].chain - sent;
	}
	if (nd < LS_CAUSAL_FLIGHT_MIN)
		return 0;
	qsort(d, nd, sizeof(*d), u64_cmp);
	return d[nd / 10];
}

/* When each message's last packet entered the host (see causal.h). */
void ls_causal_last_in(const struct ls_causal_in *in, uint64_t *t, uint32_t *cpu)
{
	const struct pkt_kind k = { LS_STAGE_RX_PKT, in->qpn, in->psn0, in->pkts,
				    in->requests, in->n, true };

	pkt_pick(in->rec, in->nrec, &k, in->seen, true, t, cpu);
}

/* Link the host's receive-path records to the samples whose packets they carried. */
int ls_causal_link(const struct ls_causal_in *in, struct ls_causal_out *out,
		   struct ls_err *err)
{
	struct rx_index ix = { 0 };
	struct pkt_chain *pc = NULL;
	uint64_t *d = NULL;
	uint8_t *hit = NULL;
	size_t cap = 0, np = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->linked = calloc(in->nrec ? in->nrec : 1, 1);
	out->last_rx = calloc(in->n ? in->n : 1, sizeof(*out->last_rx));
	out->last_cpu = calloc(in->n ? in->n : 1, sizeof(*out->last_cpu));
	hit = calloc(in->n ? in->n : 1, 1);
	pc = malloc((in->nrec ? in->nrec : 1) * sizeof(*pc));
	d = malloc((in->nrec ? in->nrec : 1) * sizeof(*d));
	if (!out->linked || !out->last_rx || !out->last_cpu || !hit || !pc || !d ||
	    rx_index_build(&ix, in->rec, in->nrec)) {
		ret = ls_errnof(err, ENOMEM, "causal attribution: %zu records", in->nrec);
		goto out;
	}
	/* the probe's packets: their samples, and where their chains began */
	for (size_t p = 0; p < in->nrec; p++) {
		const struct ls_record *pk = &in->rec[p];
		uint64_t t = pk->start_ns;
		long long s;

		if (pk->stage != LS_STAGE_RX_PKT)
			continue;
		out->packets++;
		s = packet_sample(in, pk);
		if (s < 0 || t > in->seen[s])
			continue;
		out->matched++;
		hit[s] = 1;
		pc[np++] = (struct pkt_chain){ p, (size_t)s, chain_start(&ix, pk->cpu, t) };
	}
	ls_causal_last_in(in, out->last_rx, out->last_cpu);
	out->flight_ns = flight_estimate(in, pc, np, d);
	/* each one's chain, bounded by its send, to the host seeing it */
	for (size_t j = 0; j < np; j++) {
		const struct ls_record *pk = &in->rec[pc[j].rec];
		size_t s = pc[j].sample, first, last;
		uint64_t t = pk->start_ns, chain = pc[j].chain;
		uint64_t bound = in->sent && in->sent[s] ? in->sent[s] + out->flight_ns : 0;

		if (bound > chain)
			chain = bound < t ? bound : t;
		overlap_range(&ix, pk->cpu, chain, in->seen[s], &first, &last);
		for (size_t k = first; k < last; k++) {
			size_t ri = ix.idx[k];

			if (in->rec[ri].end_ns < chain || in->rec[ri].stage == LS_STAGE_RX_PKT)
				continue;
			if (add_link(out, &cap, ri, s, chain, in->seen[s])) {
				ret = ls_errnof(err, ENOMEM, "causal attribution: %zu links",
						out->nlink);
				goto out;
			}
			out->linked[ri] = 1;
		}
	}
	qsort(out->link, out->nlink, sizeof(*out->link), link_cmp);
	if (out->nlink) {
		size_t u = 1;

		for (size_t k = 1; k < out->nlink; k++) {
			struct ls_causal_link *p = &out->link[u - 1], *q = &out->link[k];

			if (link_cmp(q, p)) {
				out->link[u++] = *q;
				continue;
			}
			/* the same record on the same sample's path: one span */
			if (q->from < p->from)
				p->from = q->from;
			if (q->to > p->to)
				p->to = q->to;
		}
		out->nlink = u;
	}
	for (size_t i = 0; i < in->n; i++)
		out->samples += hit[i];
out:
	free(ix.idx);
	free(ix.maxend);
	free(hit);
	free(pc);
	free(d);
	if (ret)
		ls_causal_free(out);
	return ret;
}

/* Per sample, when its message reached the host (0: unknown). */
void ls_causal_arrivals(const struct ls_causal_in *in, const struct ls_causal_out *out,
			uint64_t *arrive)
{
	for (size_t i = 0; i < in->n; i++)
		arrive[i] = 0;
	for (size_t l = 0; l < out->nlink; l++) {
		const struct ls_causal_link *k = &out->link[l];

		if (k->sample < in->n && (!arrive[k->sample] || k->from < arrive[k->sample]))
			arrive[k->sample] = k->from;
	}
	for (size_t i = 0; in->sent && i < in->n; i++)
		if (!arrive[i] && in->sent[i])
			arrive[i] = in->sent[i] + out->flight_ns;
}

/* Free what ls_causal_link allocated; out may be freed again. */
void ls_causal_free(struct ls_causal_out *out)
{
	ls_freep(&out->link);
	ls_freep(&out->linked);
	ls_freep(&out->last_rx);
	ls_freep(&out->last_cpu);
	out->nlink = 0;
}

/*
 * The TX_PKT copies of each message at or after its post, into t[tx->n]
 * (0: none): of its last packet only (last) or of any of its packets, the
 * earliest in each case; cpu[] (may be NULL) the CPU of the one kept.
 */
static void first_out(const struct ls_causal_tx *tx, bool last, uint64_t *t, uint32_t *cpu)
{
	const struct pkt_kind k = { LS_STAGE_TX_PKT, tx->qpn, tx->psn0, tx->pkts,
				    tx->requests, tx->n, last };

	pkt_pick(tx->rec, tx->nrec, &k, tx->posted, false, t, cpu);
}

/* When each of the host's own messages left it (see causal.h). */
void ls_causal_sent(const struct ls_causal_tx *tx, uint64_t *left, uint32_t *cpu)
{
	first_out(tx, true, left, cpu);
}

/* The earliest each message of the sending host can have reached the other (see causal.h). */
void ls_causal_sent_bound(const struct ls_causal_tx *tx, const uint64_t *fallback,
			  int64_t offset, uint64_t *sent)
{
	first_out(tx, false, sent, NULL);
	for (size_t i = 0; i < tx->n; i++) {
		int64_t v = sent[i] ? (int64_t)sent[i] + offset :
			    fallback ? (int64_t)fallback[i] + offset : 0;

		sent[i] = v > 0 ? (uint64_t)v : 0;
	}
}
