/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Significance tests for A/B latency comparisons (used by `latsplit compare`).
 *
 * Location: Mann-Whitney U (Wilcoxon rank-sum), two-sided, normal
 * approximation with mid-ranks, tie correction of the variance and a
 * continuity correction of 0.5.
 *
 * Tail: a quantile test at q (Mood's median test generalized to q): the
 * pooled nearest-rank q-quantile c splits both samples into "above c" and
 * "at or below c", and Fisher's exact test (two-sided, summing every table
 * no more probable than the observed one) asks whether A and B put the
 * same share above c. Exact and distribution-free; needs no RNG.
 *
 * Multiple tests: Holm's step-down adjustment controls the family-wise
 * error rate at alpha over all the tests of one comparison.
 */
#ifndef LS_SIGNIF_H
#define LS_SIGNIF_H

#include <stddef.h>

#include "util.h"

struct ls_mwu {
	double u_b;		/* U statistic of B: pairs (a, b) with b > a, ties 1/2 */
	double z;		/* standardized, positive when B tends to be larger */
	double p;		/* two-sided */
	double prob_b_gt_a;	/* U_B / (n_a n_b): P(B > A) + P(B = A)/2 */
};

struct ls_qtest {
	double q;
	double threshold;	/* pooled q-quantile */
	size_t a_above, b_above;
	double p;		/* two-sided Fisher exact */
};

/* The same two tests on samples already sorted ascending: O(n), no copies. */
int ls_mann_whitney_sorted(const double *a, size_t na, const double *b, size_t nb,
			   struct ls_mwu *r, struct ls_err *err);
int ls_quantile_test_sorted(const double *a, size_t na, const double *b, size_t nb,
			    double q, struct ls_qtest *r, struct ls_err *err);
/* Mann-Whitney U of B against A (both non-empty, finite). */
int ls_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		    struct ls_mwu *r, struct ls_err *err);
/* Quantile test at q in (0, 1) (both non-empty, finite). */
int ls_quantile_test(const double *a, size_t na, const double *b, size_t nb,
		     double q, struct ls_qtest *r, struct ls_err *err);
/* Two-sided Fisher exact p of the 2x2 table [[a, b], [c, d]]. */
double ls_fisher_exact(size_t a, size_t b, size_t c, size_t d);
/* Holm-adjusted p-values (adj[i] for p[i]; monotone, capped at 1). */
int ls_holm_adjust(const double *p, size_t n, double *adj, struct ls_err *err);

#endif /* LS_SIGNIF_H */
