/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sample statistics. Percentiles use the nearest-rank definition: the
 * p-quantile of n sorted values is v[ceil(p * n) - 1] (p = 0 gives the
 * minimum), so every reported percentile is a value that was observed.
 * mean and stdev are computed in double (Welford), stdev is the sample
 * standard deviation (n - 1), 0 for a single value.
 */
#ifndef LS_STATS_H
#define LS_STATS_H

#include <stddef.h>
#include <stdint.h>


struct ls_summary {
	size_t count;
	double min, p50, p90, p99, p999, p9999, max;
	double mean, stdev;
};

/* Nearest-rank quantile q in [0, 1] of n ascending values (n > 0). */
double ls_quantile_sorted(const double *sorted, size_t n, double q);
/* Sort v in place (ascending) and fill s; n == 0 gives a zero summary. */
void ls_summarize(double *v, size_t n, struct ls_summary *s);
/* Sort an array of doubles ascending. */
void ls_sort_doubles(double *v, size_t n);

#endif /* LS_STATS_H */
