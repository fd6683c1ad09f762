// SPDX-License-Identifier: GPL-2.0
/* Sample statistics: nearest-rank percentiles, mean and stdev in double. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* qsort comparator for doubles (NaN-free input). */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort an array of doubles ascending. */
void ls_sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

/* Nearest-rank quantile q in [0, 1] of n ascending values. */
double ls_quantile_sorted(const double *sorted, size_t n, double q)
{
	double r;
	size_t k;

	if (!n)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	r = ceil(q * (double)n - 1e-9);	/* guard 0.99 * 100 = 99.00000000000001 */
	k = r < 1 ? 1 : (size_t)r;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

/* Sort v in place and fill s. */
void ls_summarize(double *v, size_t n, struct ls_summary *s)
{
	double mean = 0, m2 = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	ls_sort_doubles(v, n);
	for (size_t i = 0; i < n; i++) {
		double d = v[i] - mean;

		mean += d / (double)(i + 1);
		m2 += d * (v[i] - mean);
	}
	s->count = n;
	s->min = v[0];
	s->max = v[n - 1];
	s->p50 = ls_quantile_sorted(v, n, 0.50);
	s->p90 = ls_quantile_sorted(v, n, 0.90);
	s->p99 = ls_quantile_sorted(v, n, 0.99);
	s->p999 = ls_quantile_sorted(v, n, 0.999);
	s->p9999 = ls_quantile_sorted(v, n, 0.9999);
	s->mean = mean;
	s->stdev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
}
