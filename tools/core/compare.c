// SPDX-License-Identifier: GPL-2.0
/* A/B rows of two series sets: percentiles, significance tests, Holm, verdicts (compare.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "stats.h"

#define TAIL_Q	0.99

/*
 * p50/p99 of a series: from its samples when it has them (*v in measurement
 * order, *sorted ascending), else its summary. An empty samples_ns (no
 * events in that run) gives NAN percentiles.
 */
static int percentiles(const struct ls_series *s, double **v, double **sorted, size_t *n,
		       double *p50, double *p99, bool *empty, struct ls_err *err)
{
	*sorted = NULL;
	if (ls_series_samples(s, v, n, err))
		return -1;
	*empty = s->has_samples && !*n;
	if (*empty) {
		*p50 = NAN;
		*p99 = NAN;
		return 0;
	}
	if (*n) {
		*sorted = malloc(*n * sizeof(double));
		if (!*sorted)
			return ls_errf(err, "%s: out of memory for %zu samples", s->name, *n);
		memcpy(*sorted, *v, *n * sizeof(double));
		ls_sort_doubles(*sorted, *n);
		*p50 = ls_quantile_sorted(*sorted, *n, 0.50);
		*p99 = ls_quantile_sorted(*sorted, *n, TAIL_Q);
	} else {
		*p50 = s->p50_ns;
		*p99 = s->p99_ns;
		*n = s->count;
	}
	return 0;
}

/* Relative change B vs A in percent (NAN when A is 0). */
double ls_cmp_change_pct(double a, double b)
{
	return a > 0 ? 100 * (b - a) / a : NAN;
}

/* One distribution present in both: its percentiles and, with samples in both, its two tests. */
static int test_row(const struct ls_cmp_params *o, const struct ls_series *a,
		    const struct ls_series *b, struct ls_cmp_row *r, size_t *ntests, struct ls_err *err)
{
	double *va = NULL, *vb = NULL, *sa_ = NULL, *sb_ = NULL;
	size_t na = 0, nb = 0;
	int ret = -1;

	r->name = a->name;
	if (percentiles(a, &va, &sa_, &na, &r->p50a, &r->p99a, &r->empty_a, err) ||
	    percentiles(b, &vb, &sb_, &nb, &r->p50b, &r->p99b, &r->empty_b, err))
		goto out;
	r->na = na;
	r->nb = nb;
	if (sa_ && sb_) {
		struct ls_sample xa = { va, sa_, na, a->unordered };
		struct ls_sample xb = { vb, sb_, nb, b->unordered };

		if (ls_mann_whitney_sample(&xa, &xb, !o->independent, &r->mwu, err) ||
		    ls_quantile_test_sample(&xa, &xb, TAIL_Q, !o->independent, &r->qt, err)) {
			ls_err_wrap(err, "%s", r->name);
			goto out;
		}
		r->tested = true;
		*ntests += 2;
	}
	ret = 0;
out:
	free(va);
	free(vb);
	free(sa_);
	free(sb_);
	return ret;
}

/* Holm's adjustment over every test, then each row's directions and regression. */
static int decide_rows(const struct ls_cmp_params *o, struct ls_cmp_row *rows, size_t n,
		       size_t ntests, struct ls_err *err)
{
	double *p = malloc(ntests * sizeof(*p));
	double *adj = malloc(ntests * sizeof(*adj));
	size_t k = 0;
	int ret = -1;

	if (!p || !adj) {
		ls_errf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].tested)
			continue;
		p[k++] = rows[i].mwu.p;
		p[k++] = rows[i].qt.p;
	}
	if (ls_holm_adjust(p, ntests, adj, err))
		goto out;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		struct ls_cmp_row *r = &rows[i];
		double fa, fb;

		if (!r->tested)
			continue;
		r->p_mwu_adj = adj[k++];
		r->p_q_adj = adj[k++];
		/* significant, and (--min-change) large enough to matter */
		if (r->p_mwu_adj <= o->alpha &&
		    !(fabs(ls_cmp_change_pct(r->p50a, r->p50b)) < o->min_change))
			r->dir50 = r->mwu.z > 0 ? 1 : -1;
		fa = (double)r->qt.a_above / (double)r->na;
		fb = (double)r->qt.b_above / (double)r->nb;
		if (r->p_q_adj <= o->alpha && fa != fb &&
		    !(fabs(ls_cmp_change_pct(r->p99a, r->p99b)) < o->min_change))
			r->dir99 = fb > fa ? 1 : -1;
		if (!isnan(o->max_regress))
			r->regression = (r->dir50 > 0 &&
					 ls_cmp_change_pct(r->p50a, r->p50b) > o->max_regress) ||
					(r->dir99 > 0 &&
					 ls_cmp_change_pct(r->p99a, r->p99b) > o->max_regress);
	}
	ret = 0;
out:
	free(p);
	free(adj);
	return ret;
}

/* Build the rows: run both tests for every series with samples on both sides. */
int ls_cmp_build(const struct ls_cmp_params *o, const struct ls_series_set *sa,
		      const struct ls_series_set *sb, struct ls_cmp_row **rows_out, size_t *nrows,
		      struct ls_err *err)
{
	struct ls_cmp_row *rows = calloc(sa->n ? sa->n : 1, sizeof(*rows));
	size_t n = 0, ntests = 0;

	if (!rows)
		return ls_errf(err, "out of memory");
	for (size_t i = 0; i < sa->n; i++) {
		const struct ls_series *a = &sa->v[i], *b = ls_series_find(sb, a->name);

		if (!b || (o->only && strncmp(a->name, o->only, strlen(o->only))))
			continue;
		if (test_row(o, a, b, &rows[n++], &ntests, err))
			goto fail;
	}
	if (ntests && decide_rows(o, rows, n, ntests, err))
		goto fail;
	*rows_out = rows;
	*nrows = n;
	return 0;
fail:
	free(rows);
	return -1;
}

/* One word for a row's outcome. */
const char *ls_cmp_verdict(const struct ls_cmp_row *r)
{
	if (r->empty_a && r->empty_b)
		return "not tested (no samples in A or B)";
	if (r->empty_a)
		return "not tested (no samples in A)";
	if (r->empty_b)
		return "not tested (no samples in B)";
	if (!r->tested)
		return "not tested (no samples_ns)";
	if (r->dir50 > 0 && r->dir99 < 0)
		return "mixed: p50 slower, p99 faster";
	if (r->dir50 < 0 && r->dir99 > 0)
		return "mixed: p50 faster, p99 slower";
	if (r->dir50 > 0 || r->dir99 > 0)
		return "slower";
	if (r->dir50 < 0 || r->dir99 < 0)
		return "faster";
	return "no significant change";
}

