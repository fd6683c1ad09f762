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

/* Sorted copies of both samples into their sorted (free both, set or not). */
static int sort_pair(struct ls_sample *sa, struct ls_sample *sb, struct ls_err *err)
{
	sa->sorted = sorted_copy(sa->v, sa->n);
	sb->sorted = sorted_copy(sb->v, sb->n);
	if (!sa->sorted || !sb->sorted)
		return ls_errf(err, "out of memory for %zu samples", sa->n + sb->n);
	return 0;
}

/* Clamp a serial correlation to [0, 0.95] and turn it into f = (1 + rho) / (1 - rho). */
static double ar1_factor(double *rho)
{
	if (!(*rho > 0))
		*rho = 0;
	if (*rho > 0.95)
		*rho = 0.95;
	return (1 + *rho) / (1 - *rho);
}

/* Combined variance factor of two samples: (n_b f_a + n_a f_b) / n. */
static double combined_factor(double fa, size_t na, double fb, size_t nb)
{
	return ((double)nb * fa + (double)na * fb) / (double)(na + nb);
}

/* Index order for ranking. */
static int cmp_index(const void *x, const void *y, void *ctx)
{
	const double *v = ctx;
	double a = v[*(const size_t *)x], b = v[*(const size_t *)y];

	return (a > b) - (a < b);
}

/* Is v sorted (either way)? Then it carries no measurement order. */
bool ls_samples_unordered(const double *v, size_t n)
{
	bool up = true, down = true;

	for (size_t i = 1; i < n && (up || down); i++) {
		up = up && v[i] >= v[i - 1];
		down = down && v[i] <= v[i - 1];
	}
	return up || down;
}

/* Lag-1 autocorrelation of v's mid-ranks, in measurement order. */
double ls_serial_rank_corr(const double *v, size_t n)
{
	double *rank, m = ((double)n + 1) / 2, num = 0, den = 0;
	size_t *idx, i = 0;

	if (n < 3 || ls_samples_unordered(v, n))
		return 0;
	idx = malloc(n * sizeof(*idx));
	rank = malloc(n * sizeof(*rank));
	if (!idx || !rank) {
		free(idx);
		free(rank);
		return 0;
	}
	for (size_t k = 0; k < n; k++)
		idx[k] = k;
	qsort_r(idx, n, sizeof(*idx), cmp_index, (void *)v);
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
			j++;
		for (size_t k = i; k <= j; k++)
			rank[idx[k]] = ((double)i + (double)j) / 2 + 1;
		i = j + 1;
	}
	for (size_t k = 0; k < n; k++) {
		den += (rank[k] - m) * (rank[k] - m);
		if (k + 1 < n)
			num += (rank[k] - m) * (rank[k + 1] - m);
	}
	free(idx);
	free(rank);
	return den > 0 ? num / den : 0;
}

/* Lag-1 autocorrelation of the indicators v[i] > c. */
double ls_serial_exceed_corr(const double *v, size_t n, double c)
{
	double p = 0, num = 0, den = 0;

	if (n < 3 || ls_samples_unordered(v, n))
		return 0;
	for (size_t k = 0; k < n; k++)
		p += v[k] > c;
	p /= (double)n;
	if (p <= 0 || p >= 1)
		return 0;
	for (size_t k = 0; k < n; k++) {
		double x = (v[k] > c) - p;

		den += x * x;
		if (k + 1 < n)
			num += x * ((v[k + 1] > c) - p);
	}
	return num / den;
}

/*
 * Mann-Whitney U of B against A: one merge pass over the sorted samples
 * assigns mid-ranks to each group of equal values and sums B's ranks and
 * the tie term sum(t^3 - t).
 */
int ls_mann_whitney_sample(const struct ls_sample *sa, const struct ls_sample *sb,
			   bool serial, struct ls_mwu *r, struct ls_err *err)
{
	const double *a = sa->sorted, *b = sb->sorted;
	size_t na = sa->n, nb = sb->n, n = na + nb, i = 0, j = 0;
	double rank_b = 0, ties = 0, pos = 0, mean, var, d;

	memset(r, 0, sizeof(*r));
	r->inflation = 1;
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
	if (serial) {
		double fa, fb;

		r->rho_a = sa->unordered ? 0 : ls_serial_rank_corr(sa->v, na);
		r->rho_b = sb->unordered ? 0 : ls_serial_rank_corr(sb->v, nb);
		fa = ar1_factor(&r->rho_a);
		fb = ar1_factor(&r->rho_b);
		r->inflation = combined_factor(fa, na, fb, nb);
		var *= r->inflation;
	}
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

/* Mann-Whitney U of B against A, independent samples. */
int ls_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		    struct ls_mwu *r, struct ls_err *err)
{
	struct ls_sample sa = { a, NULL, na, false }, sb = { b, NULL, nb, false };
	int ret;

	memset(r, 0, sizeof(*r));
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	ret = sort_pair(&sa, &sb, err);
	if (!ret)
		ret = ls_mann_whitney_sample(&sa, &sb, false, r, err);
	free((double *)sa.sorted);
	free((double *)sb.sorted);
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

/* Quantile test at q: merge, pooled q-quantile, Fisher exact on (effective) counts. */
int ls_quantile_test_sample(const struct ls_sample *sa, const struct ls_sample *sb,
			    double q, bool serial, struct ls_qtest *r, struct ls_err *err)
{
	const double *a = sa->sorted, *b = sb->sorted;
	size_t na = sa->n, nb = sb->n, n = na + nb, i = 0, j = 0, k = 0;
	size_t ea, eb, ena, enb;
	double *pool;

	memset(r, 0, sizeof(*r));
	r->inflation = 1;
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
	ea = r->a_above;
	eb = r->b_above;
	ena = na;
	enb = nb;
	if (serial) {
		double fa, fb;

		r->rho_a = sa->unordered ? 0 : ls_serial_exceed_corr(sa->v, na, r->threshold);
		r->rho_b = sb->unordered ? 0 : ls_serial_exceed_corr(sb->v, nb, r->threshold);
		fa = ar1_factor(&r->rho_a);
		fb = ar1_factor(&r->rho_b);
		r->inflation = combined_factor(fa, na, fb, nb);
		/* effective sample sizes: every cell divided by the design effect */
		ena = (size_t)llround((double)na / r->inflation);
		enb = (size_t)llround((double)nb / r->inflation);
		ena = ena ? ena : 1;
		enb = enb ? enb : 1;
		ea = (size_t)llround((double)ea / r->inflation);
		eb = (size_t)llround((double)eb / r->inflation);
		ea = ea > ena ? ena : ea;
		eb = eb > enb ? enb : eb;
	}
	r->p = ls_fisher_exact(ea, ena - ea, eb, enb - eb);
	return 0;
}

/* Quantile test at q, independent samples. */
int ls_quantile_test(const double *a, size_t na, const double *b, size_t nb,
		     double q, struct ls_qtest *r, struct ls_err *err)
{
	struct ls_sample sa = { a, NULL, na, false }, sb = { b, NULL, nb, false };
	int ret;

	memset(r, 0, sizeof(*r));
	if (!(q > 0 && q < 1))
		return ls_errf(err, "quantile %g is not in (0, 1)", q);
	if (check_samples(a, na, "A", err) || check_samples(b, nb, "B", err))
		return -1;
	ret = sort_pair(&sa, &sb, err);
	if (!ret)
		ret = ls_quantile_test_sample(&sa, &sb, q, false, r, err);
	free((double *)sa.sorted);
	free((double *)sb.sorted);
	return ret;
}

/* A p-value and its test's index, for sorting. */
struct holm_p {
	double p;
	size_t i;
};

/* Ascending p (NaN last), ties in test order: the sort is then stable. */
static int holm_cmp(const void *a, const void *b)
{
	const struct holm_p *x = a, *y = b;
	bool xn = isnan(x->p), yn = isnan(y->p);

	if (xn != yn)
		return xn ? 1 : -1;
	if (!xn && x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/*
 * Holm step-down adjusted p-values. O(n log n): compare runs two tests per
 * distribution, and a fleet's documents hold tens of thousands (an
 * insertion sort here made 80,000 take seconds).
 */
int ls_holm_adjust(const double *p, size_t n, double *adj, struct ls_err *err)
{
	struct holm_p *v;
	double run = 0;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return ls_errf(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		v[i].p = p[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), holm_cmp);
	for (size_t i = 0; i < n; i++) {
		double a = (double)(n - i) * v[i].p;

		if (a > 1)
			a = 1;
		if (a > run)
			run = a;
		adj[v[i].i] = run;
	}
	free(v);
	return 0;
}
