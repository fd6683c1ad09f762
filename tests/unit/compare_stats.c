// SPDX-License-Identifier: GPL-2.0
/*
 * tools/signif.c, the tests behind `latsplit compare`: reference values
 * from the literature (Fisher's tea tasting, R's wilcox.test and p.adjust
 * formulas), a brute-force U, the A/A false-positive rate at the stated
 * alpha over many seeded draws from one distribution, and power against
 * known shifts.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "signif.h"
#include "stats.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* splitmix64: a fixed-seed generator so every run draws the same numbers. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unif(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* A latency-like draw: lognormal around 20 us, rounded to whole ns (ties happen). */
static double draw_latency(double scale)
{
	double u1 = rng_unif(), u2 = rng_unif();
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

	return round(20000 * scale * exp(0.4 * z) / 100) * 100;	/* 100 ns grid: many ties */
}

TEST(mwu_reference_values)
{
	/* R: wilcox.test(c(4,5,6), c(1,2,3), exact=FALSE, correct=TRUE)$p.value = 0.08085 */
	const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	struct ls_err err = { 0 };
	struct ls_mwu r;

	ASSERT_EQ(0, ls_mann_whitney(a, 3, b, 3, &r, &err));
	ASSERT_EQ(9, r.u_b);
	ASSERT_EQ(1.0, r.prob_b_gt_a);
	ASSERT_TRUE(fabs(r.z - 4.0 / sqrt(5.25)) < 1e-12);
	ASSERT_TRUE(fabs(r.p - 0.080856) < 1e-5);
	ASSERT_EQ(0, ls_mann_whitney(b, 3, a, 3, &r, &err));
	ASSERT_EQ(0, r.u_b);
	ASSERT_LT(r.z, 0);
	ASSERT_TRUE(fabs(r.p - 0.080856) < 1e-5);
	/* identical samples: no evidence at all */
	ASSERT_EQ(0, ls_mann_whitney(a, 3, a, 3, &r, &err));
	ASSERT_EQ(1.0, r.p);
	/* all values equal: zero variance, p = 1 rather than a division by zero */
	ASSERT_EQ(0, ls_mann_whitney(a, 1, a, 1, &r, &err));
	ASSERT_EQ(1.0, r.p);
	ASSERT_EQ(-1, ls_mann_whitney(a, 0, b, 3, &r, &err));
	ASSERT_NE(NULL, strstr(err.msg, "sample A is empty"));
}

TEST(mwu_matches_brute_force_with_ties)
{
	struct ls_err err = { 0 };
	double a[300], b[250];
	struct ls_mwu r;

	rng_state = 7;
	for (int round_ = 0; round_ < 20; round_++) {
		double u = 0, n = 550, ties = 0, var, z;
		double all[550];

		for (size_t i = 0; i < ARRAY_SIZE(a); i++)
			all[i] = a[i] = round(draw_latency(1) / 2000);	/* heavy ties */
		for (size_t i = 0; i < ARRAY_SIZE(b); i++)
			all[300 + i] = b[i] = round(draw_latency(1.05) / 2000);
		for (size_t i = 0; i < ARRAY_SIZE(a); i++)
			for (size_t k = 0; k < ARRAY_SIZE(b); k++)
				u += b[k] > a[i] ? 1 : b[k] == a[i] ? 0.5 : 0;
		for (size_t i = 0; i < 550; i++) {	/* tie groups by counting */
			double t = 0;
			int first = 1;

			for (size_t k = 0; k < 550; k++) {
				if (all[k] == all[i]) {
					t++;
					if (k < i)
						first = 0;
				}
			}
			if (first)
				ties += t * t * t - t;
		}
		ASSERT_EQ(0, ls_mann_whitney(a, 300, b, 250, &r, &err));
		ASSERT_TRUE(fabs(r.u_b - u) < 1e-6);
		var = 300.0 * 250 / 12 * ((n + 1) - ties / (n * (n - 1)));
		z = (u - 300.0 * 250 / 2);
		z = (z - (z > 0 ? 0.5 : -0.5)) / sqrt(var);
		ASSERT_TRUE(fabs(r.z - z) < 1e-9);
	}
}

TEST(fisher_reference_values)
{
	/* Fisher's lady tasting tea: [[3,1],[1,3]], two-sided p = 34/70 */
	ASSERT_TRUE(fabs(ls_fisher_exact(3, 1, 1, 3) - 34.0 / 70) < 1e-12);
	/* Textbook [[1,9],[11,3]]: two-sided p = 0.002759 */
	ASSERT_TRUE(fabs(ls_fisher_exact(1, 9, 11, 3) - 0.0027594) < 1e-6);
	/* symmetric and no evidence */
	ASSERT_TRUE(fabs(ls_fisher_exact(5, 95, 5, 95) - 1.0) < 1e-9);
	ASSERT_TRUE(fabs(ls_fisher_exact(0, 0, 0, 10) - 1.0) < 1e-9);
}

TEST(holm_reference_values)
{
	/* R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02 */
	const double p[] = { 0.01, 0.04, 0.03, 0.005 }, want[] = { 0.03, 0.06, 0.06, 0.02 };
	struct ls_err err = { 0 };
	double adj[4];

	ASSERT_EQ(0, ls_holm_adjust(p, 4, adj, &err));
	for (int i = 0; i < 4; i++)
		ASSERT_TRUE(fabs(adj[i] - want[i]) < 1e-12);
}

/*
 * Many tests: Holm's adjusted p of test i is the largest (n - r + 1) p_r
 * (capped at 1) over the tests ranked r at or below i's own rank, computed
 * here by brute force for 3,000 distinct p in a shuffled order, with two
 * of them tied (equal adjusted values), as compare's fleet documents need.
 */
TEST(holm_many_tests)
{
	enum { N = 3000 };
	static double p[N], adj[N];
	static int rank[N];
	struct ls_err err = { 0 };

	for (int i = 0; i < N; i++)
		p[i] = (double)((i * 7919) % N + 1) / (4.0 * N);	/* a permutation */
	p[5] = p[6];
	ASSERT_EQ(0, ls_holm_adjust(p, N, adj, &err));
	for (int i = 0; i < N; i++) {
		rank[i] = 1;
		for (int k = 0; k < N; k++)
			rank[i] += p[k] < p[i] || (p[k] == p[i] && k < i);
	}
	for (int i = 0; i < N; i++) {
		double want = 0;

		for (int j = 0; j < N; j++)
			if (rank[j] <= rank[i] && (N - rank[j] + 1) * p[j] > want)
				want = (N - rank[j] + 1) * p[j];
		if (want > 1)
			want = 1;
		ASSERT_TRUE(fabs(adj[i] - want) < 1e-12) TH_LOG("test %d: %g, want %g", i, adj[i], want);
	}
	ASSERT_EQ(adj[5], adj[6]);
}

TEST(quantile_test_counts)
{
	struct ls_err err = { 0 };
	double a[100], b[100];
	struct ls_qtest r;

	for (int i = 0; i < 100; i++) {
		a[i] = i + 1;
		b[i] = i + 1 + (i >= 90 ? 1000 : 0);	/* B's top 10 % are far out */
	}
	ASSERT_EQ(0, ls_quantile_test(a, 100, b, 100, 0.95, &r, &err));
	/* pooled 200 values, nearest rank 190 = 100 (from A): above it only B's 10 */
	ASSERT_EQ(100, r.threshold);
	ASSERT_EQ(0, r.a_above);
	ASSERT_EQ(10, r.b_above);
	ASSERT_TRUE(fabs(r.p - ls_fisher_exact(0, 100, 10, 90)) < 1e-15);
	ASSERT_LT(r.p, 0.01);
	/* moving only values above the quantile does not move the quantile: no evidence */
	for (int i = 0; i < 100; i++)
		b[i] = i + 1 + (i >= 95 ? 1000 : 0);
	ASSERT_EQ(0, ls_quantile_test(a, 100, b, 100, 0.95, &r, &err));
	ASSERT_EQ(5, r.a_above);
	ASSERT_EQ(5, r.b_above);
	ASSERT_TRUE(fabs(r.p - 1) < 1e-9);
	ASSERT_EQ(-1, ls_quantile_test(a, 100, b, 100, 1.0, &r, &err));
}

/* Count how often each test rejects at alpha over trials of A and B drawn with these scales. */
static void reject_rate(int trials, size_t n, double scale_b, double tail_frac,
			double alpha, int *mwu_rej, int *q_rej, int *family_rej)
{
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	struct ls_err err;
	struct ls_mwu m;
	struct ls_qtest q;

	*mwu_rej = *q_rej = *family_rej = 0;
	for (int t = 0; t < trials; t++) {
		double p[2], adj[2];

		for (size_t i = 0; i < n; i++) {
			a[i] = draw_latency(1);
			b[i] = draw_latency(scale_b);
			if (rng_unif() < tail_frac)
				b[i] *= 5;
		}
		ls_mann_whitney(a, n, b, n, &m, &err);
		ls_quantile_test(a, n, b, n, 0.99, &q, &err);
		*mwu_rej += m.p <= alpha;
		*q_rej += q.p <= alpha;
		p[0] = m.p;
		p[1] = q.p;
		ls_holm_adjust(p, 2, adj, &err);
		*family_rej += adj[0] <= alpha || adj[1] <= alpha;
	}
	free(a);
	free(b);
}

/* One reject_rate() case: its draws and the bounds of each test's rejections. */
struct rate_case {
	const char *what;
	int trials;
	size_t n;
	double scale_b, tail_frac, alpha;
	int lo[3], hi[3];	/* U test, p99 test, Holm family (hi 0: trials) */
};

/*
 * 1000 A/A comparisons of 500 vs 500 samples from one distribution at
 * alpha 0.05: expected 50 rejections, binomial sd 6.9. The bounds are
 * +-4 sd for the calibrated U test; Fisher's test is conservative (fewer
 * rejections), and Holm over both keeps the family at or below alpha.
 * Then at the compare default alpha 0.01: expected 10, sd 3.1.
 */
static const struct rate_case aa_cases[] = {
	{ "A/A at alpha 0.05", 1000, 500, 1.0, 0, 0.05, { 23, 0, 0 }, { 78, 78, 78 } },
	{ "A/A at alpha 0.01", 1000, 500, 1.0, 0, 0.01, { 0, 0, 0 }, { 23, 0, 23 } },
};

/*
 * A 20 % slower typical latency (sigma of log 0.4, 500 vs 500): the U
 * test finds it nearly always (normal-theory power > 0.999). Then 3 %
 * of B five times slower: a tail change the p99 test finds.
 */
static const struct rate_case power_cases[] = {
	{ "+20% shift", 200, 500, 1.20, 0, 0.01, { 195, 0, 195 }, { 0, 0, 0 } },
	{ "3% x5 tail", 200, 2000, 1.0, 0.03, 0.01, { 0, 190, 0 }, { 0, 0, 0 } },
};

/* Seed the draws, run the n cases in turn and check each one's rejection counts. */
static void check_rates(struct __test_metadata *_metadata, uint64_t seed,
			const struct rate_case *cases, size_t n)
{
	static const char *const name[3] = { "U", "p99", "family" };

	rng_state = seed;
	for (size_t i = 0; i < n; i++) {
		const struct rate_case *c = &cases[i];
		int got[3];

		reject_rate(c->trials, c->n, c->scale_b, c->tail_frac, c->alpha, &got[0],
			    &got[1], &got[2]);
		TH_LOG("%s: U %d/%d, p99 %d/%d, family %d/%d", c->what, got[0], c->trials,
		       got[1], c->trials, got[2], c->trials);
		for (int k = 0; k < 3; k++) {
			int hi = c->hi[k] ? c->hi[k] : c->trials;

			ASSERT_GE(got[k], c->lo[k]) TH_LOG("%s: %s", c->what, name[k]);
			ASSERT_LE(got[k], hi) TH_LOG("%s: %s", c->what, name[k]);
		}
	}
}

TEST(aa_false_positive_rate_is_alpha)
{
	check_rates(_metadata, 20261129, aa_cases, ARRAY_SIZE(aa_cases));
}

TEST(power_against_known_shifts)
{
	check_rates(_metadata, 42, power_cases, ARRAY_SIZE(power_cases));
}

/* An AR(1) latency series: log-latency follows x = rho x + sqrt(1 - rho^2) e. */
static void draw_ar1(double *v, size_t n, double rho, double scale)
{
	double x = 0;

	for (size_t i = 0; i < n; i++) {
		double u1 = rng_unif(), u2 = rng_unif();
		double e = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

		x = i ? rho * x + sqrt(1 - rho * rho) * e : e;
		v[i] = round(20000 * scale * exp(0.4 * x) / 100) * 100;
	}
}

TEST(serial_correlation_estimates)
{
	double v[1000];

	for (int i = 0; i < 1000; i++)
		v[i] = i + 50 * (i % 7 == 0);	/* a trend: ranks follow each other */
	ASSERT_GT(ls_serial_rank_corr(v, 1000), 0.9);
	for (int i = 0; i < 1000; i++)
		v[i] = i / 10;			/* sorted (histogram midpoints): no order */
	ASSERT_TRUE(ls_samples_unordered(v, 1000));
	ASSERT_EQ(0, ls_serial_rank_corr(v, 1000));
	ASSERT_EQ(0, ls_serial_exceed_corr(v, 1000, 50));
	v[500] = 1000;
	ASSERT_FALSE(ls_samples_unordered(v, 1000));
	for (int i = 0; i < 1000; i++)
		v[i] = i % 2;			/* alternation: negative */
	ASSERT_LT(ls_serial_rank_corr(v, 1000), -0.99);
	ASSERT_LT(ls_serial_exceed_corr(v, 1000, 0.5), -0.99);
	rng_state = 99;
	draw_ar1(v, 1000, 0, 1);
	ASSERT_LT(fabs(ls_serial_rank_corr(v, 1000)), 0.1);
	draw_ar1(v, 1000, 0.8, 1);
	ASSERT_GT(ls_serial_rank_corr(v, 1000), 0.7);
	ASSERT_EQ(0, ls_serial_rank_corr(v, 2));
	ASSERT_EQ(0, ls_serial_exceed_corr(v, 1000, 1e12));	/* constant indicators */
}

/* Rejections at alpha over trials of two AR(1) series of one distribution (A/A). */
static void serial_aa(int trials, size_t n, double rho, double scale_b, double alpha,
		      bool serial, int *mwu_rej, int *q_rej)
{
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	double *sa = malloc(n * sizeof(*sa)), *sb = malloc(n * sizeof(*sb));
	struct ls_sample xa = { a, sa, n, false }, xb = { b, sb, n, false };
	struct ls_err err;
	struct ls_qtest q;
	struct ls_mwu m;

	*mwu_rej = *q_rej = 0;
	for (int t = 0; t < trials; t++) {
		draw_ar1(a, n, rho, 1);
		draw_ar1(b, n, rho, scale_b);
		memcpy(sa, a, n * sizeof(*a));
		memcpy(sb, b, n * sizeof(*b));
		ls_sort_doubles(sa, n);
		ls_sort_doubles(sb, n);
		ls_mann_whitney_sample(&xa, &xb, serial, &m, &err);
		ls_quantile_test_sample(&xa, &xb, 0.99, serial, &q, &err);
		*mwu_rej += m.p <= alpha;
		*q_rej += q.p <= alpha;
	}
	free(a);
	free(b);
	free(sa);
	free(sb);
}

TEST(serially_correlated_aa)
{
	/*
	 * Back-to-back samples with lag-1 correlation 0.8 (variance factor 9):
	 * treated as independent, an A/A comparison is "significant" far more
	 * often than alpha; with the correction it stays near alpha. 400 trials
	 * of 1000 vs 1000 at alpha 0.05: expected 20, bound 20 + 4 sd = 37.
	 */
	int mwu_iid, q_iid, mwu, q;

	rng_state = 314;
	serial_aa(400, 1000, 0.8, 1.0, 0.05, false, &mwu_iid, &q_iid);
	serial_aa(400, 1000, 0.8, 1.0, 0.05, true, &mwu, &q);
	TH_LOG("AR(1) rho 0.8 A/A, 400 trials: independent U %d, p99 %d; corrected U %d, p99 %d",
	       mwu_iid, q_iid, mwu, q);
	ASSERT_GT(mwu_iid, 100);	/* the problem is real */
	ASSERT_LE(mwu, 37);
	ASSERT_LE(q, 37);
	/* and a 20 % shift is still found most of the time */
	serial_aa(100, 1000, 0.8, 1.2, 0.01, true, &mwu, &q);
	TH_LOG("AR(1) rho 0.8, +20%% shift, 100 trials at alpha 0.01: corrected U %d", mwu);
	ASSERT_GE(mwu, 80);
}

TEST_HARNESS_MAIN
