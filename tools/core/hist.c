// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear histogram helpers (struct ls_hist, include/uapi/latsplit.h):
 * user-space add, merge and quantiles over what the backends collect.
 */
#include "hist.h"

#include <math.h>

/* Add one value (ns) to h. */
void ls_hist_add(struct ls_hist *h, uint64_t v)
{
	h->count++;
	h->sum_ns += v;
	if (v > h->max_ns)
		h->max_ns = v;
	h->buckets[ls_hist_bucket(v)]++;
}

/* Add every count of src into dst. */
void ls_hist_merge(struct ls_hist *dst, const struct ls_hist *src)
{
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++)
		dst->buckets[b] += src->buckets[b];
}

/*
 * Nearest-rank quantile q in [0, 1] (q = 0 gives the smallest bucket): the
 * midpoint of the integer values of the bucket holding rank ceil(q * n),
 * clamped to max_ns; exact below LS_HIST_SUB ns and for q = 1 (max_ns).
 * NaN for an empty histogram. The count is the sum of the buckets, so a
 * snapshot torn by a concurrent update stays consistent with itself.
 */
double ls_hist_quantile(const struct ls_hist *h, double q)
{
	uint64_t n = 0, rank, cum = 0;
	double v;

	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++)
		n += h->buckets[b];
	if (n == 0 || isnan(q))
		return NAN;
	if (q >= 1.0)
		return (double)h->max_ns;
	if (q < 0.0)
		q = 0.0;
	rank = (uint64_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++) {
		cum += h->buckets[b];
		if (cum < rank)
			continue;
		v = (double)ls_hist_bucket_lo(b) +
		    (double)(ls_hist_bucket_hi(b) - ls_hist_bucket_lo(b) - 1) / 2.0;
		if (h->max_ns && v > (double)h->max_ns)
			v = (double)h->max_ns;
		return v;
	}
	return (double)h->max_ns;
}
