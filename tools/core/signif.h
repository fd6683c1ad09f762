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
 * Serial dependence: latency samples taken back to back are correlated (a
 * burst of interference slows several in a row), which makes both tests
 * too eager. With serial correction, each sample's lag-1 autocorrelation
 * rho (of its ranks for U, of its exceedance indicators for the tail test;
 * clamped to [0, 0.95]) gives the AR(1) long-run variance factor
 * f = (1 + rho) / (1 - rho); the two combine as (n_b f_a + n_a f_b) / n.
 * U's variance is multiplied by it, and the tail test's counts divided by
 * it (an effective sample size, as in Rao-Scott's design effect). A sorted
 * sample has no measurement order and gets no correction.
 *
 * Multiple tests: Holm's step-down adjustment controls the family-wise
 * error rate at alpha over all the tests of one comparison.
 */
#ifndef LS_SIGNIF_H
#define LS_SIGNIF_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/*
 * One sample: its values in measurement order and the same values sorted;
 * unordered when v has no measurement order (no serial correction).
 */
struct ls_sample {
	const double *v;
	const double *sorted;
	size_t n;
	bool unordered;
};

struct ls_mwu {
	double rho_a, rho_b;	/* serial correlation used (0 without correction) */
	double inflation;	/* variance factor applied (1 without correction) */
	double u_b;		/* U statistic of B: pairs (a, b) with b > a, ties 1/2 */
	double z;		/* standardized, positive when B tends to be larger */
	double p;		/* two-sided */
	double prob_b_gt_a;	/* U_B / (n_a n_b): P(B > A) + P(B = A)/2 */
};

struct ls_qtest {
	double q;
	double threshold;	/* pooled q-quantile */
	size_t a_above, b_above;
	double rho_a, rho_b;	/* serial correlation of the exceedances */
	double inflation;	/* design effect applied (1 without correction) */
	double p;		/* two-sided Fisher exact (on effective counts) */
};

/*
 * The two tests on samples given in both orders (sorted: O(n) merges), with
 * or without the serial correction.
 */
int ls_mann_whitney_sample(const struct ls_sample *a, const struct ls_sample *b,
			   bool serial, struct ls_mwu *r, struct ls_err *err);
int ls_quantile_test_sample(const struct ls_sample *a, const struct ls_sample *b,
			    double q, bool serial, struct ls_qtest *r, struct ls_err *err);
/*
 * Is v sorted ascending or descending? Such a sample (rebuilt from a
 * histogram, say) has no measurement order, and is taken as independent.
 */
bool ls_samples_unordered(const double *v, size_t n);
/* Lag-1 autocorrelation of v's ranks (measurement order); 0 for n < 3 or sorted v. */
double ls_serial_rank_corr(const double *v, size_t n);
/* Lag-1 autocorrelation of the indicators v[i] > c; 0 when constant or v is sorted. */
double ls_serial_exceed_corr(const double *v, size_t n, double c);
/* Mann-Whitney U of B against A, independent samples (both non-empty, finite). */
int ls_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		    struct ls_mwu *r, struct ls_err *err);
/* Quantile test at q in (0, 1), independent samples (both non-empty, finite). */
int ls_quantile_test(const double *a, size_t na, const double *b, size_t nb,
		     double q, struct ls_qtest *r, struct ls_err *err);
/* Two-sided Fisher exact p of the 2x2 table [[a, b], [c, d]]. */
double ls_fisher_exact(size_t a, size_t b, size_t c, size_t d);
/* Holm-adjusted p-values (adj[i] for p[i]; monotone, capped at 1). */
int ls_holm_adjust(const double *p, size_t n, double *adj, struct ls_err *err);

#endif /* LS_SIGNIF_H */
