// SPDX-License-Identifier: GPL-2.0
/* Mann-Whitney U, a Fisher-exact quantile test and Holm's adjustment. */
#include "signif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Reject empty or non-finite samples. */
static int check_samples(const double *v, size_t n, const char *which,
			 struct ls_err *err)
{
	if (!n)
		return ls_errf(err, "sample %s is empty", which);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			return ls_errf(err, "sample %s: value %zu is not finite", which, i);
	}
	return 0;
}

/* Sorted copy of v (caller frees), or NULL. */
static double *sorted_copy(const double *v, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		return NULL;
	memcpy(c, v, n * sizeof(*c));
	ls_sort_doubles(c, n);
	return c;
}

/*
 * Mann-Whitney U of B against A, both sorted: one merge pass assigns
 * mid-ranks to each group of equal values and sums B's ranks and the tie
 * term sum(t^3 - t).
 */
int ls_mann_whitney_sorted(const double *a, size_t na, const double *b, size_t nb,
			   struct ls_mwu *r, struct ls_err *err)
{
	size_t n = na + nb, i = 0, j = 0;
	double rank_b = 0, ties = 0, pos = 0, mean, var, d;

	memset(r, 0, sizeof(*r));
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	while (i < na || j < nb) {
		double v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
		double ca = 0, cb = 0, t;

		while (i < na && a[i] == v) {
			i++;
			ca++;
		}
		while (j < nb && b[j] == v) {
			j++;
			cb++;
		}
		t = ca + cb;
		rank_b += cb * (pos + (t + 1) / 2);	/* ranks pos+1 .. pos+t */
		ties += t * t * t - t;
		pos += t;
	}
	r->u_b = rank_b - (double)nb * ((double)nb + 1) / 2;
	r->prob_b_gt_a = r->u_b / ((double)na * (double)nb);
	mean = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 *
	      (((double)n + 1) - (n > 1 ? ties / ((double)n * ((double)n - 1)) : 0));
	d = r->u_b - mean;
	if (var <= 0 || fabs(d) <= 0.5) {
		r->z = 0;
		r->p = 1;
		return 0;
	}
	r->z = (d - (d > 0 ? 0.5 : -0.5)) / sqrt(var);
	r->p = erfc(fabs(r->z) / M_SQRT2);
	if (r->p > 1)
		r->p = 1;
	return 0;
}

/* Mann-Whitney U of B against A, normal approximation with tie correction. */
int ls_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		    struct ls_mwu *r, struct ls_err *err)
{
	double *sa = NULL, *sb = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	sa = sorted_copy(a, na);
	sb = sorted_copy(b, nb);
	if (!sa || !sb)
		ret = ls_errf(err, "out of memory for %zu samples", na + nb);
	else
		ret = ls_mann_whitney_sorted(sa, na, sb, nb, r, err);
	free(sa);
	free(sb);
	return ret;
}

/* log of the hypergeometric probability of x in the table with these margins. */
static double log_hyper(size_t x, size_t na, size_t nb, size_t k)
{
	/* C(na, x) C(nb, k - x) / C(na + nb, k) */
	return lgamma((double)na + 1) - lgamma((double)x + 1) - lgamma((double)(na - x) + 1) +
	       lgamma((double)nb + 1) - lgamma((double)(k - x) + 1) -
	       lgamma((double)(nb - (k - x)) + 1) -
	       (lgamma((double)(na + nb) + 1) - lgamma((double)k + 1) -
		lgamma((double)(na + nb - k) + 1));
}

/* Two-sided Fisher exact p of [[a, b], [c, d]] (rows: A, B; columns: above, not). */
double ls_fisher_exact(size_t a, size_t b, size_t c, size_t d)
{
	size_t na = a + b, nb = c + d, k = a + c;
	size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
	double lp_obs = log_hyper(a, na, nb, k), p = 0;

	for (size_t x = lo; x <= hi; x++) {
		double lp = log_hyper(x, na, nb, k);

		/* relative tolerance as in R's fisher.test */
		if (lp <= lp_obs + 1e-7)
			p += exp(lp);
	}
	return p > 1 ? 1 : p;
}

/* Number of values of sorted v greater than x (binary search). */
static size_t count_above(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n - lo;
}

/* Quantile test at q on sorted samples: merge, pooled q-quantile, Fisher exact. */
int ls_quantile_test_sorted(const double *a, size_t na, const double *b, size_t nb,
			    double q, struct ls_qtest *r, struct ls_err *err)
{
	size_t n = na + nb, i = 0, j = 0, k = 0;
	double *pool;

	memset(r, 0, sizeof(*r));
	if (!(q > 0 && q < 1))
		return ls_errf(err, "quantile %g is not in (0, 1)", q);
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	pool = malloc(n * sizeof(*pool));
	if (!pool)
		return ls_errf(err, "out of memory for %zu samples", n);
	while (i < na || j < nb)
		pool[k++] = j >= nb || (i < na && a[i] <= b[j]) ? a[i++] : b[j++];
	r->q = q;
	r->threshold = ls_quantile_sorted(pool, n, q);
	free(pool);
	r->a_above = count_above(a, na, r->threshold);
	r->b_above = count_above(b, nb, r->threshold);
	r->p = ls_fisher_exact(r->a_above, na - r->a_above, r->b_above, nb - r->b_above);
	return 0;
}

/* Quantile test at q: Fisher exact on the counts above the pooled q-quantile. */
int ls_quantile_test(const double *a, size_t na, const double *b, size_t nb,
		     double q, struct ls_qtest *r, struct ls_err *err)
{
	double *sa = NULL, *sb = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!(q > 0 && q < 1))
		return ls_errf(err, "quantile %g is not in (0, 1)", q);
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	sa = sorted_copy(a, na);
	sb = sorted_copy(b, nb);
	if (!sa || !sb)
		ret = ls_errf(err, "out of memory for %zu samples", na + nb);
	else
		ret = ls_quantile_test_sorted(sa, na, sb, nb, q, r, err);
	free(sa);
	free(sb);
	return ret;
}

/* Holm step-down adjusted p-values. */
int ls_holm_adjust(const double *p, size_t n, double *adj, struct ls_err *err)
{
	size_t *idx;
	double run = 0;

	if (!n)
		return 0;
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return ls_errf(err, "out of memory");
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* insertion sort by p: n is the number of tests, small */
	for (size_t i = 1; i < n; i++) {
		size_t k = idx[i], j = i;

		while (j > 0 && p[idx[j - 1]] > p[k]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = k;
	}
	for (size_t i = 0; i < n; i++) {
		double v = (double)(n - i) * p[idx[i]];

		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[idx[i]] = run;
	}
	free(idx);
	return 0;
}
