// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: one direction's pipeline: frame slots, the delay heap, the
 * class FIFOs and the link, from arrival to departure, and the counters
 * and histograms it fills.
 */
#include <sys/socket.h>

#include "labwire_int.h"

/* Bucket of a nanosecond value in a log-linear histogram. */
static unsigned int lhist_bucket(uint64_t v)
{
	unsigned int e, b;

	if (v < 16)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);
	b = 16 + (e - 4) * 8 + (unsigned int)((v >> (e - 3)) & 7);
	return b < HIST_NR ? b : HIST_NR - 1;
}

/* Add one value to h. */
static void lhist_add(struct lhist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	h->b[lhist_bucket(v)]++;
}

/* Sojourn histogram bucket of a nanosecond value (log2 of microseconds). */
static unsigned int soj_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int b;

	if (!us)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(us);
	return b < SOJ_NR ? b : SOJ_NR - 1;
}

/* Serialization time of a len-byte frame at rate bit/s (0 without a rate). */
static uint64_t ser_ns(uint64_t rate, uint32_t len)
{
	uint64_t bytes = len + 4ULL < 64 ? 64 : len + 4ULL;

	if (!rate)
		return 0;
	return (bytes + 20) * 8 * 1000000000ULL / rate;
}

/* Take a free slot with room for len bytes: its index, or -1 with *why set. */
int32_t slot_get(struct dir *d, uint32_t len, uint8_t *why)
{
	struct frame *f;
	uint32_t cap;
	uint8_t *nb;
	int32_t idx;

	if (!d->nfree) {
		*why = WHY_INFLIGHT;
		return -1;
	}
	idx = d->freel[d->nfree - 1];
	f = &d->slots[idx];
	f->pn = 0;
	f->blk_end = false;
	if (f->cap < len) {
		cap = len <= SMALL_BUF ? SMALL_BUF : MAX_FRAME;
		nb = NULL;
		if (d->pool_bytes - f->cap + cap <= POOL_BYTES)
			nb = realloc(f->buf, cap);
		if (!nb) {
			*why = WHY_NOMEM;
			return -1;
		}
		d->pool_bytes += cap - f->cap;
		f->buf = nb;
		f->cap = cap;
	}
	d->nfree--;
	if (++d->inflight > d->max_inflight)
		d->max_inflight = d->inflight;
	return idx;
}

/* Fill slot f with src's fields, keeping f's own buffer. */
void slot_fill(struct frame *f, const struct frame *src)
{
	uint8_t *buf = f->buf;
	uint32_t cap = f->cap;

	*f = *src;
	f->buf = buf;
	f->cap = cap;
}

/* Return slot idx to the free list (its buffer stays with it). */
static void slot_put(struct dir *d, int32_t idx)
{
	d->freel[d->nfree++] = idx;
	d->inflight--;
}

/* Heap order: earlier ready first, then arrival order. */
static bool heap_less(const struct dir *d, int32_t a, int32_t b)
{
	const struct frame *fa = &d->slots[a], *fb = &d->slots[b];

	if (fa->ready != fb->ready)
		return fa->ready < fb->ready;
	return fa->seq < fb->seq;
}

/* Add slot idx to d's delay heap. */
static void heap_push(struct dir *d, int32_t idx)
{
	uint32_t i = d->nheap++, p;

	d->heap[i] = idx;
	while (i > 0) {
		p = (i - 1) / 2;
		if (!heap_less(d, d->heap[i], d->heap[p]))
			break;
		idx = d->heap[p];
		d->heap[p] = d->heap[i];
		d->heap[i] = idx;
		i = p;
	}
}

/* Remove and return the earliest slot of d's delay heap. */
static int32_t heap_pop(struct dir *d)
{
	int32_t top = d->heap[0], t;
	uint32_t i = 0, l, m;

	d->heap[0] = d->heap[--d->nheap];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < d->nheap && heap_less(d, d->heap[l], d->heap[m]))
			m = l;
		if (l + 1 < d->nheap && heap_less(d, d->heap[l + 1], d->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		t = d->heap[m];
		d->heap[m] = d->heap[i];
		d->heap[i] = t;
		i = m;
	}
	return top;
}

/* Finish a frame that does not leave: count, log, free its slot (idx >= 0). */
static void frame_drop(struct dir *d, struct frame *f, int32_t idx, uint8_t action,
		       uint8_t why)
{
	struct ctrs *c[2] = { &d->tot, &d->cls[f->cls] };

	for (int k = 0; k < 2; k++) {
		if (action == ACT_LOSS) {
			c[k]->lost++;
		} else {
			c[k]->dropped++;
			c[k]->why[why]++;
		}
	}
	log_frame(d, f, 0, action, why);
	if (idx >= 0)
		slot_put(d, idx);
}

/* Put the next queued frame on d's idle link, starting no earlier than t. */
static void link_pick(struct dir *d, uint64_t t)
{
	struct frame *f;
	int32_t idx;

	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		idx = d->qhead[c];
		if (idx < 0)
			continue;
		f = &d->slots[idx];
		d->qhead[c] = f->next;
		if (d->qhead[c] < 0)
			d->qtail[c] = -1;
		d->real_queued -= !f->pn;
		f->ser = f->pn ? f->pn * ser_ns(d->rate, f->plen) : ser_ns(d->rate, f->len);
		f->start = f->ready > t ? f->ready : t;
		f->due = f->start + f->ser;
		d->busy = idx;
		d->link_free = f->due;
		return;
	}
}

/*
 * A frame of a higher class than the flow block on d's link arrived at t:
 * the block stops after the frame in progress, and its rest goes back to
 * the head of its class FIFO.
 */
static void flow_preempt(struct dir *d, uint64_t t)
{
	struct frame *b = &d->slots[d->busy], *r;
	uint64_t ser1 = ser_ns(d->rate, b->plen), k;
	uint8_t why;
	int32_t ri;

	if (!ser1)
		return;
	k = t > b->start ? (t - b->start + ser1 - 1) / ser1 : 0;
	if (k >= b->pn)
		return;
	if (!k) {	/* not started: the whole block waits */
		ri = d->busy;
		r = b;
		d->busy = -1;
	} else {
		ri = slot_get(d, 0, &why);
		if (ri < 0)
			return;	/* no slot: the block runs to its end */
		r = &d->slots[ri];
		slot_fill(r, b);
		r->pn = b->pn - (uint32_t)k;
		r->len = r->pn * r->plen;
		b->pn = (uint32_t)k;
		b->len = b->pn * b->plen;
		b->blk_end = false;
		b->ser = k * ser1;
		b->due = b->start + b->ser;
		d->link_free = b->due;
	}
	r->next = d->qhead[r->cls];
	d->qhead[r->cls] = ri;
	if (d->qtail[r->cls] < 0)
		d->qtail[r->cls] = ri;
	d->flow.preempted++;
	if (d->busy < 0)
		link_pick(d, t);
}

/*
 * Bytes of the flow block on d's link that have left it by t: whole frames
 * since its start. A block is counted in queued[] until its last frame
 * leaves; its frames already on the wire are no backlog.
 */
static uint64_t busy_sent(const struct dir *d, uint64_t t)
{
	const struct frame *b;
	uint64_t ser1, k;

	if (d->busy < 0)
		return 0;
	b = &d->slots[d->busy];
	ser1 = ser_ns(d->rate, b->plen);
	if (!b->pn || !ser1 || t <= b->start)
		return 0;
	k = (t - b->start) / ser1;
	return (k < b->pn ? k : b->pn) * b->plen;
}

/* d's backlog at t, bytes not yet on the wire: class c's in *qc, all classes' in *qt. */
static void backlog_at(const struct dir *d, unsigned int c, uint64_t t, uint64_t *qc,
		       uint64_t *qt)
{
	uint64_t sent = busy_sent(d, t);

	*qt = d->queued_total - sent;
	*qc = d->queued[c] - (sent && d->slots[d->busy].cls == c ? sent : 0);
}

/* d's backlog at t, bytes not yet on the wire: class c's, or all classes' (c < 0). */
uint64_t dir_backlog(const struct dir *d, int c, uint64_t t)
{
	uint64_t qc, qt;

	backlog_at(d, c < 0 ? 0 : (unsigned int)c, t, &qc, &qt);
	return c < 0 ? qt : qc;
}

/* Enqueue ready frame idx on its class FIFO (tail drop, CE marking). */
void egress_enqueue(struct dir *d, int32_t idx)
{
	struct frame *f = &d->slots[idx];
	unsigned int c = f->cls;
	struct ctrs *k[2] = { &d->tot, &d->cls[c] };
	uint64_t qc, qt;

	backlog_at(d, c, f->ready, &qc, &qt);

	if (qc + f->len > d->limit[c]) {
		if (f->pn) {
			k[0]->flow_dropped += f->pn;
			k[1]->flow_dropped += f->pn;
			slot_put(d, idx);
			flow_done(d, f, false, f->ready);
			return;
		}
		frame_drop(d, f, idx, ACT_DROP, WHY_QFULL);
		return;
	}
	if (d->ecn[c] && qc > d->ecn[c]) {
		if (f->pn) {
			d->flow.marked += f->ecn_in ? f->pn : 0;
			k[0]->flow_marked += f->ecn_in ? f->pn : 0;
			k[1]->flow_marked += f->ecn_in ? f->pn : 0;
		} else if (mark_ce(f)) {
			d->tot.ce_marked++;
			d->cls[c].ce_marked++;
		}
	}
	d->queued[c] += f->len;
	d->queued_total += f->len;
	d->real_queued += !f->pn;
	if (qc + f->len > d->cls[c].max_queued)
		d->cls[c].max_queued = qc + f->len;
	if (qt + f->len > d->tot.max_queued)
		d->tot.max_queued = qt + f->len;
	f->next = -1;
	if (d->qtail[c] >= 0)
		d->slots[d->qtail[c]].next = idx;
	else
		d->qhead[c] = idx;
	d->qtail[c] = idx;
	if (d->busy < 0)
		link_pick(d, d->link_free);
	else if (d->slots[d->busy].pn && c < d->slots[d->busy].cls)
		flow_preempt(d, f->ready);
}

/* Send the frame on d's link now, then count, log and free it. */
static void link_send(struct dir *d, int32_t idx)
{
	struct frame *f = &d->slots[idx];
	struct ctrs *c[2] = { &d->tot, &d->cls[f->cls] };
	uint64_t t;
	ssize_t n;

	if (f->pn) {	/* a flow block: it leaves the wire here */
		d->queued[f->cls] -= f->len;
		d->queued_total -= f->len;
		for (int k = 0; k < 2; k++) {
			c[k]->flow_frames += f->pn;
			c[k]->flow_bytes += f->len;
		}
		slot_put(d, idx);
		flow_done(d, f, true, f->due);
		return;
	}
	t = mono_ns();
	n = sendto(d->out_fd, f->buf, f->len, MSG_DONTWAIT, (struct sockaddr *)&d->dst,
		   sizeof(d->dst));
	d->queued[f->cls] -= f->len;
	d->queued_total -= f->len;
	W.last_activity = t;
	if (n != (ssize_t)f->len) {
		frame_drop(d, f, idx, ACT_DROP, WHY_SEND);
		return;
	}
	for (int k = 0; k < 2; k++) {
		c[k]->tx_frames++;
		c[k]->tx_bytes += f->len;
		c[k]->soj[soj_bucket(t - f->arrive)]++;
	}
	lhist_add(f->delay ? &d->delay_err : &d->wire_lat, t > f->due ? t - f->due : 0);
	log_frame(d, f, t, ACT_FWD, WHY_NONE);
	slot_put(d, idx);
	flow_issue(d, f->due);	/* room left by it for a block the flow could not issue */
}

/* Run d's scheduled events (delay expiries, link departures) due by now, in time order. */
void process_due(struct dir *d, uint64_t now)
{
	uint64_t th, tl;
	int32_t idx;

	for (;;) {
		th = d->nheap ? d->slots[d->heap[0]].ready : NONE;
		tl = d->busy >= 0 ? d->slots[d->busy].due : NONE;
		if (th <= tl && th <= now) {
			egress_enqueue(d, heap_pop(d));
		} else if (tl <= now) {
			idx = d->busy;
			d->busy = -1;
			link_send(d, idx);
			if (d->busy < 0)	/* a new flow block may have taken it */
				link_pick(d, tl);
		} else {
			break;
		}
	}
}

/*
 * The time of d's next scheduled event, NONE if nothing is in flight. A
 * storage flow's block on the link is no event while no guest frame waits
 * for the link: its departures are caught up, on their own schedule, when
 * the next frame arrives (process_due), so the flow costs no wake-ups.
 */
uint64_t dir_next(const struct dir *d)
{
	uint64_t th = d->nheap ? d->slots[d->heap[0]].ready : NONE;
	uint64_t tl = d->busy >= 0 ? d->slots[d->busy].due : NONE;

	if (d->busy >= 0 && d->slots[d->busy].pn && !d->real_queued)
		tl = NONE;
	return th < tl ? th : tl;
}

/* Take one frame read at now into d's pipeline. */
static void frame_arrive(struct dir *d, const uint8_t *p, uint32_t len, uint64_t now)
{
	struct ctrs *c[2];
	struct frame fr, *f;
	uint8_t why = WHY_NONE;
	int32_t idx;

	memset(&fr, 0, sizeof(fr));
	classify(&fr, p, len);
	fr.len = len;
	fr.seq = d->seq++;
	fr.arrive = now;
	fr.ecn_out = fr.ecn_in;
	fr.cls = d->dscp_map[fr.dscp];
	c[0] = &d->tot;
	c[1] = &d->cls[fr.cls];
	for (int k = 0; k < 2; k++) {
		c[k]->rx_frames++;
		c[k]->rx_bytes += len;
		c[k]->other += fr.kind == KIND_OTHER;
		c[k]->roce += fr.kind == KIND_ROCE;
	}
	W.last_activity = now;
	process_due(d, now);
	if (rules_apply(d, &fr)) {
		frame_drop(d, &fr, -1, ACT_LOSS, WHY_NONE);
		return;
	}
	idx = slot_get(d, len, &why);
	if (idx < 0) {
		frame_drop(d, &fr, -1, ACT_DROP, why);
		return;
	}
	f = &d->slots[idx];
	slot_fill(f, &fr);
	memcpy(f->buf, p, len);
	f->ready = now + f->delay;
	if (f->delay) {
		c[0]->delayed++;
		c[1]->delayed++;
		heap_push(d, idx);
	} else {
		egress_enqueue(d, idx);
	}
	process_due(d, mono_ns());
}

/* Read up to RX_BATCH datagrams from d's ingress socket. */
void dir_rx(struct dir *d)
{
	ssize_t n;

	for (int i = 0; i < RX_BATCH; i++) {
		n = recv(d->in_fd, W.rx, sizeof(W.rx), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fprintf(stderr, "labwire: recv (%s): %s\n", dir_name[d->idx],
					strerror(errno));
			return;
		}
		frame_arrive(d, W.rx, (uint32_t)n, mono_ns());
	}
}

/* Zero d's counters, histograms and sequence numbers. */
void dir_reset(struct dir *d)
{
	memset(&d->tot, 0, sizeof(d->tot));
	memset(d->cls, 0, sizeof(d->cls));
	memset(&d->wire_lat, 0, sizeof(d->wire_lat));
	memset(&d->delay_err, 0, sizeof(d->delay_err));
	d->flow.blocks = d->flow.frames = d->flow.bytes = 0;
	d->flow.marked = d->flow.dropped = d->flow.preempted = 0;
	d->seq = 0;
	d->max_inflight = d->inflight;
	d->tot.max_queued = d->queued_total;
	for (unsigned int c = 0; c < NR_CLASSES; c++)
		d->cls[c].max_queued = d->queued[c];
	for (unsigned int i = 0; i < NR_RULES; i++)
		rule_restart(&d->rules[i]);
}

/* Allocate d's pool and heap and set every knob to its default. */
int dir_init(struct dir *d, uint8_t idx)
{
	d->idx = idx;
	d->busy = -1;
	d->slots = calloc(MAX_INFLIGHT, sizeof(*d->slots));
	d->freel = calloc(MAX_INFLIGHT, sizeof(*d->freel));
	d->heap = calloc(MAX_INFLIGHT, sizeof(*d->heap));
	if (!d->slots || !d->freel || !d->heap)
		return -ENOMEM;
	for (int32_t i = 0; i < MAX_INFLIGHT; i++)
		d->freel[i] = MAX_INFLIGHT - 1 - i;
	d->nfree = MAX_INFLIGHT;
	for (int32_t i = 0; i < PREALLOC; i++) {
		d->slots[i].buf = malloc(SMALL_BUF);
		if (!d->slots[i].buf)
			return -ENOMEM;
		memset(d->slots[i].buf, 0, SMALL_BUF);
		d->slots[i].cap = SMALL_BUF;
		d->pool_bytes += SMALL_BUF;
	}
	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		d->limit[c] = DEFAULT_LIMIT;
		d->qhead[c] = d->qtail[c] = -1;
	}
	return 0;
}
