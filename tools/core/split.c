// SPDX-License-Identifier: GPL-2.0
/* The split: streaming attribution of kernel records to samples, three parts, tail. */
#include "split.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One clipped record edge inside a window: +1 at start, -1 at end. */
struct ls_attr_ev {
	uint64_t t;
	int delta;
	unsigned int slot;
};

/*
 * Most specific first: a hardirq interrupts everything; napi_poll runs
 * inside a NET_RX softirq run; an IRQ thread or a preempting task is work
 * done instead of the probe; interference is hardirq/softirq time on the
 * probe CPU not already named above; softirq wait, wakeup and completion
 * are spans that contain the stages above and only keep their gaps, and
 * deliver (a message in the host, its last packet in to "seen") and send
 * (posted to its last packet out) keep what is left.
 */
static const int stage_rank[LS_NR_STAGES] = {
	[LS_STAGE_HARDIRQ]	= 0,
	[LS_STAGE_NAPI_POLL]	= 1,
	[LS_STAGE_SOFTIRQ_RUN]	= 2,
	[LS_STAGE_IRQ_THREAD]	= 3,
	[LS_STAGE_INTERFERENCE]	= 4,
	[LS_STAGE_PREEMPT]	= 5,
	[LS_STAGE_SOFTIRQ_WAIT]	= 6,
	[LS_STAGE_WAKEUP]	= 7,
	[LS_STAGE_COMPLETION]	= 8,
	[LS_STAGE_RX_PKT]	= 9,	/* an instant: never counted */
	[LS_STAGE_DELIVER]	= 10,	/* what no record inside it names */
	[LS_STAGE_SEND]		= 11,	/* likewise, on the way out */
	[LS_STAGE_TX_PKT]	= 12,	/* an instant: never counted */
};

static const char *const part_names[LS_NR_PARTS] = {
	[LS_PART_TRANSMISSION]	= "transmission",
	[LS_PART_QUEUING]	= "queuing",
	[LS_PART_PROCESSING]	= "processing",
};

/* Rank of a stage when several cover one instant (lower wins). */
int ls_attr_stage_rank(unsigned int stage)
{
	return stage < LS_NR_STAGES ? stage_rank[stage] : LS_NR_STAGES;
}

/* Name of a part. */
const char *ls_part_name(enum ls_part p)
{
	return p < LS_NR_PARTS ? part_names[p] : "unknown";
}

/* Set up an attribution over sorted windows. */
int ls_attr_init(struct ls_attr *a, const struct ls_attr_cfg *cfg,
		 struct ls_err *err)
{
	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	for (size_t i = 1; i < cfg->n; i++) {
		if (cfg->win[i].start_ns < cfg->win[i - 1].start_ns)
			return ls_errf(err, "attribution: window %zu starts before window %zu",
				       i, i - 1);
	}
	for (size_t i = 0; i < cfg->n; i++) {
		if (cfg->win[i].end_ns < cfg->win[i].start_ns)
			return ls_errf(err, "attribution: window %zu ends before it starts", i);
	}
	a->kernel_ns = calloc(cfg->n ? cfg->n : 1, sizeof(*a->kernel_ns));
	a->cells = calloc((size_t)LS_ATTR_MAX_CPUS * LS_NR_STAGES, sizeof(*a->cells));
	if (cfg->per_window) {
		a->win_stage_ns = calloc(cfg->n ? cfg->n : 1,
					 LS_ATTR_HOSTS * LS_NR_STAGES * sizeof(*a->win_stage_ns));
		if (!a->win_stage_ns) {
			ls_attr_free(a);
			return ls_errnof(err, ENOMEM, "attribution: stages of %zu windows", cfg->n);
		}
	}
	a->cap = 256;
	a->act = malloc(a->cap * sizeof(*a->act));
	a->evcap = 512;
	a->ev = malloc(a->evcap * sizeof(*a->ev));
	if (!a->kernel_ns || !a->cells || !a->act || !a->ev) {
		ls_attr_free(a);
		return ls_errnof(err, ENOMEM, "attribution: %zu windows", cfg->n);
	}
	return 0;
}

/* Free what ls_attr_init allocated. */
void ls_attr_free(struct ls_attr *a)
{
	ls_freep(&a->kernel_ns);
	ls_freep(&a->win_stage_ns);
	ls_freep(&a->cells);
	ls_freep(&a->act);
	ls_freep(&a->ev);
}

/* Order events by time; at equal times ends before starts (no zero-length overlap). */
static int ev_cmp(const struct ls_attr_ev *x, const struct ls_attr_ev *y)
{
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta;
}

/* qsort adapter for ev_cmp. */
static int ev_qcmp(const void *x, const void *y)
{
	return ev_cmp(x, y);
}

/* Sort a window's events: insertion sort for the usual handful, qsort beyond. */
static void ev_sort(struct ls_attr_ev *ev, size_t n)
{
	if (n > 24) {
		qsort(ev, n, sizeof(*ev), ev_qcmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct ls_attr_ev e = ev[i];
		size_t j = i;

		while (j > 0 && ev_cmp(&ev[j - 1], &e) > 0) {
			ev[j] = ev[j - 1];
			j--;
		}
		ev[j] = e;
	}
}

#define LS_ATTR_MAX_SLOTS	64	/* distinct (cpu, stage) pairs in one window */

/* Add ns to window i's figure of the (host, stage) of slot key (cpu * stages + stage). */
static void win_stage_add(struct ls_attr *a, size_t i, uint32_t key, uint64_t ns)
{
	unsigned int host = key / LS_NR_STAGES >= LS_MAX_CPUS;
	uint32_t *v = &a->win_stage_ns[ls_attr_win_stage_idx(i, host, key % LS_NR_STAGES)];

	*v = ns >= UINT32_MAX - *v ? UINT32_MAX : *v + (uint32_t)ns;
}

/* Finish window i: union of the active records clipped to it, given out by rank. */
static void finish_window(struct ls_attr *a, size_t i)
{
	const struct ls_window *w = &a->cfg.win[i];
	uint32_t slot_key[LS_ATTR_MAX_SLOTS];
	uint64_t slot_ns[LS_ATTR_MAX_SLOTS];
	unsigned int order[LS_ATTR_MAX_SLOTS];
	int count[LS_ATTR_MAX_SLOTS];
	unsigned int nslot = 0, active = 0;
	size_t nev = 0, keep = 0;
	uint64_t sum = 0;

	for (size_t k = 0; k < a->nact; k++) {
		struct ls_attr_rec *r = &a->act[k];
		uint64_t s, e;
		uint32_t key;
		unsigned int sl;

		if (r->end_ns <= w->start_ns || (r->only >= 0 && (size_t)r->only < i))
			continue;		/* done with it: later windows start later */
		a->act[keep++] = *r;
		if (r->only >= 0 && (size_t)r->only != i)
			continue;		/* on another sample's path */
		s = r->start_ns > w->start_ns ? r->start_ns : w->start_ns;
		e = r->end_ns < w->end_ns ? r->end_ns : w->end_ns;
		if (s >= e)
			continue;
		key = r->cpu * LS_NR_STAGES + r->stage;
		for (sl = 0; sl < nslot && slot_key[sl] != key; sl++)
			;
		if (sl == nslot) {
			if (nslot == LS_ATTR_MAX_SLOTS)
				sl = nslot - 1;	/* pathological: fold into the last */
			else
				slot_key[nslot++] = key;
		}
		a->ev[nev++] = (struct ls_attr_ev){ s, +1, sl };
		a->ev[nev++] = (struct ls_attr_ev){ e, -1, sl };
	}
	a->nact = keep;
	if (!nev)
		return;
	ev_sort(a->ev, nev);
	/* slots in winning order: stage rank, then CPU */
	for (unsigned int s = 0; s < nslot; s++) {
		unsigned int j = s;

		while (j > 0) {
			uint32_t kp = slot_key[order[j - 1]], kn = slot_key[s];
			int rp = stage_rank[kp % LS_NR_STAGES], rn = stage_rank[kn % LS_NR_STAGES];

			if (rp < rn || (rp == rn && kp / LS_NR_STAGES <= kn / LS_NR_STAGES))
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = s;
		count[s] = 0;
		slot_ns[s] = 0;
	}
	for (size_t k = 0; k < nev; k++) {
		if (k > 0 && active > 0 && a->ev[k].t > a->ev[k - 1].t) {
			uint64_t dt = a->ev[k].t - a->ev[k - 1].t;

			for (unsigned int o = 0; o < nslot; o++) {
				if (count[order[o]] > 0) {
					slot_ns[order[o]] += dt;
					break;
				}
			}
			sum += dt;
		}
		count[a->ev[k].slot] += a->ev[k].delta;
		active += a->ev[k].delta;
	}
	a->kernel_ns[i] = sum;
	for (unsigned int s = 0; s < nslot; s++) {
		struct ls_attr_cell *c;

		if (!slot_ns[s])
			continue;
		c = &a->cells[slot_key[s]];
		c->total_ns += slot_ns[s];
		c->windows++;
		if (slot_ns[s] > c->max_ns)
			c->max_ns = slot_ns[s];
		if (a->cfg.tail && a->cfg.tail[i])
			c->tail_ns += slot_ns[s];
		if (a->win_stage_ns)
			win_stage_add(a, i, slot_key[s], slot_ns[s]);
	}
}

/* Feed one record (non-decreasing start_ns). */
int ls_attr_push(struct ls_attr *a, const struct ls_record *r,
		 struct ls_err *err)
{
	return ls_attr_push_for(a, r, -1, err);
}

/* Feed one record that counts for window `only` alone (-1: for any window). */
int ls_attr_push_for(struct ls_attr *a, const struct ls_record *r, long long only,
		     struct ls_err *err)
{
	const struct ls_attr_cfg *c = &a->cfg;

	if (r->start_ns < a->last_start)
		return ls_errf(err, "attribution: record at %llu ns after one at %llu ns (records must be sorted by start)",
			       (unsigned long long)r->start_ns,
			       (unsigned long long)a->last_start);
	a->last_start = r->start_ns;
	a->pushed++;
	if (r->cpu >= LS_ATTR_MAX_CPUS || r->stage >= LS_NR_STAGES ||
	    !(c->cpumask[r->cpu / 64] & (1ull << (r->cpu % 64))) ||
	    !(c->stage_mask & (1u << r->stage)) || r->end_ns <= r->start_ns) {
		a->ignored++;
		return 0;
	}
	while (a->next < c->n && r->start_ns >= c->win[a->next].end_ns)
		finish_window(a, a->next++);
	if (a->next == c->n || r->end_ns <= c->win[a->next].start_ns ||
	    (only >= 0 && (size_t)only < a->next))
		return 0;	/* overlaps no unfinished window it counts for */
	if (a->nact == a->cap) {
		struct ls_attr_rec *n = realloc(a->act, 2 * a->cap * sizeof(*n));

		if (!n)
			return ls_errnof(err, ENOMEM, "attribution: %zu active records", a->cap);
		a->act = n;
		a->cap *= 2;
	}
	if (2 * (a->nact + 1) > a->evcap) {
		struct ls_attr_ev *n = realloc(a->ev, 2 * a->evcap * sizeof(*n));

		if (!n)
			return ls_errnof(err, ENOMEM, "attribution: %zu events", a->evcap);
		a->ev = n;
		a->evcap *= 2;
	}
	a->act[a->nact++] = (struct ls_attr_rec){ r->start_ns, r->end_ns, only, r->cpu,
						  r->stage };
	a->counted++;
	return 0;
}

/* Finish every remaining window. */
void ls_attr_finish(struct ls_attr *a)
{
	while (a->next < a->cfg.n)
		finish_window(a, a->next++);
	a->nact = 0;
}

/* qsort comparator: records by start, then CPU. */
static int rec_cmp(const void *x, const void *y)
{
	const struct ls_record *p = x, *q = y;

	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return (p->cpu > q->cpu) - (p->cpu < q->cpu);
}

/* Sort records by start_ns so they can be pushed. */
void ls_records_sort(struct ls_record *r, size_t n)
{
	qsort(r, n, sizeof(*r), rec_cmp);
}

/* Sort context for tail marking (qsort has no argument pointer). */
static const double *tail_vals;

/* qsort comparator: indices by value, then index. */
static int idx_cmp(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	if (tail_vals[i] != tail_vals[j])
		return tail_vals[i] < tail_vals[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* Mark the slowest ceil(frac * n) samples (at least one). */
size_t ls_split_mark_tail(const double *total_ns, size_t n, double frac,
			  uint8_t *tail)
{
	size_t *idx, k;

	memset(tail, 0, n);
	if (!n)
		return 0;
	k = (size_t)ceil(frac * (double)n - 1e-9);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	idx = malloc(n * sizeof(*idx));
	if (!idx) {
		/* without memory for the sort, take a threshold pass instead */
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	tail_vals = total_ns;
	qsort(idx, n, sizeof(*idx), idx_cmp);
	for (size_t i = n - k; i < n; i++)
		tail[idx[i]] = 1;
	free(idx);
	return k;
}

/* Summarize a copy of v (ls_summarize sorts in place). */
static void summarize_copy(const double *v, size_t n, double *scratch,
			   struct ls_summary *s)
{
	memcpy(scratch, v, n * sizeof(*v));
	ls_summarize(scratch, n, s);
}

/* Free the per-sample arrays of a split. */
void ls_split_free(struct ls_split_out *out)
{
	for (int p = 0; p < LS_NR_PARTS; p++) {
		free(out->part[p]);
		out->part[p] = NULL;
	}
	free(out->base);
	free(out->kernel);
	out->base = out->kernel = NULL;
}

/* Each sample's parts: transmission T, then the kernel and up to B of base, the rest queuing. */
static void split_samples(const struct ls_split_in *in, struct ls_split_out *out, double T,
			  double B)
{
	for (size_t i = 0; i < in->n; i++) {
		double avail = in->total_ns[i] - T, k, b, q;

		if (avail < 0) {
			out->part[LS_PART_TRANSMISSION][i] = in->total_ns[i];
			out->clamped++;
			continue;
		}
		out->part[LS_PART_TRANSMISSION][i] = T;
		if (out->hw_host) {
			double h = in->host_ns[i] < avail ? in->host_ns[i] : avail;

			if (h < 0)
				h = 0;
			k = in->kernel_ns[i] < h ? in->kernel_ns[i] : h;
			b = h - k;
			q = avail - h;
		} else {
			k = in->kernel_ns[i];
			if (k > avail) {
				k = avail;
				out->clamped++;
			}
			b = avail - k < B ? avail - k : B;
			q = avail - k - b;
		}
		out->kernel[i] = k;
		out->base[i] = b;
		out->part[LS_PART_PROCESSING][i] = k + b;
		out->part[LS_PART_QUEUING][i] = q;
	}
}

/* The tail's threshold, mean excess over p50 and each part's share of it. */
static void tail_shares(const struct ls_split_in *in, struct ls_split_out *out,
			const uint8_t *tail)
{
	double c[LS_NR_PARTS] = { 0 }, csum = 0;

	out->tail_threshold_ns = INFINITY;
	for (size_t i = 0; i < in->n; i++) {
		if (!tail[i])
			continue;
		if (in->total_ns[i] < out->tail_threshold_ns)
			out->tail_threshold_ns = in->total_ns[i];
		out->tail_excess_ns += in->total_ns[i] - out->sum_total.p50;
		for (int p = 0; p < LS_NR_PARTS; p++)
			c[p] += out->part[p][i] - out->sum_part[p].p50;
	}
	if (out->tail_n)
		out->tail_excess_ns /= (double)out->tail_n;
	else
		out->tail_threshold_ns = 0;
	for (int p = 0; p < LS_NR_PARTS; p++) {
		if (c[p] < 0)
			c[p] = 0;	/* a part smaller in the tail explains none of it */
		csum += c[p];
	}
	for (int p = 0; p < LS_NR_PARTS; p++)
		out->tail_share[p] = csum > 0 ? c[p] / csum : 0;
}

/* Divide every sample into the three parts and summarize. */
int ls_split_compute(const struct ls_split_in *in, struct ls_split_out *out,
		     struct ls_err *err)
{
	size_t n = in->n, alloc = n ? n : 1;
	double *scratch = NULL;
	uint8_t *tail = NULL;
	double T = in->transmission_ns, B = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!(T >= 0) || !(in->floor_q >= 0 && in->floor_q <= 1) ||
	    !(in->tail_frac > 0 && in->tail_frac <= 1) ||
	    (in->fixed_floor && !(in->floor_ns >= 0)))
		return ls_errf(err, "split: invalid parameters (transmission %g ns, floor quantile %g, tail fraction %g, floor %g ns)",
			       T, in->floor_q, in->tail_frac, in->floor_ns);
	out->n = n;
	for (int p = 0; p < LS_NR_PARTS; p++)
		out->part[p] = calloc(alloc, sizeof(double));
	out->base = calloc(alloc, sizeof(double));
	out->kernel = calloc(alloc, sizeof(double));
	scratch = malloc(alloc * sizeof(double));
	tail = malloc(alloc);
	if (!out->part[0] || !out->part[1] || !out->part[2] || !out->base ||
	    !out->kernel || !scratch || !tail) {
		ls_errnof(err, ENOMEM, "split: %zu samples", n);
		goto cleanup;
	}
	out->hw_host = in->host_ns != NULL;
	if (n) {
		for (size_t i = 0; i < n; i++)
			scratch[i] = in->total_ns[i] - T -
				     (out->hw_host ? in->host_ns[i] : in->kernel_ns[i]);
		ls_sort_doubles(scratch, n);
		out->residual_p50_ns = ls_quantile_sorted(scratch, n, 0.5);
	}
	if (out->hw_host) {
		B = 0;
	} else if (in->fixed_floor) {
		B = in->floor_ns;
	} else if (n) {
		B = ls_quantile_sorted(scratch, n, in->floor_q);
		if (B < 0)
			B = 0;
		out->floor_inferred = true;
	}
	out->floor_ns = B;
	split_samples(in, out, T, B);
	summarize_copy(in->total_ns, n, scratch, &out->sum_total);
	for (int p = 0; p < LS_NR_PARTS; p++)
		summarize_copy(out->part[p], n, scratch, &out->sum_part[p]);
	summarize_copy(out->kernel, n, scratch, &out->sum_kernel);
	summarize_copy(out->base, n, scratch, &out->sum_base);

	/* tail: shares of the slowest samples' excess over each part's p50 */
	out->tail_n = ls_split_mark_tail(in->total_ns, n, in->tail_frac, tail);
	if (n && !out->tail_n) {
		ls_errnof(err, ENOMEM, "split: tail of %zu samples", n);
		goto cleanup;
	}
	tail_shares(in, out, tail);
	ret = 0;
cleanup:
	free(scratch);
	free(tail);
	if (ret)
		ls_split_free(out);
	return ret;
}
