// SPDX-License-Identifier: GPL-2.0
/*
 * The log-linear histogram of include/uapi/latsplit.h (bucket functions,
 * shared with the module and the BPF programs) and tools/hist.c (add,
 * merge, quantiles) against hand-computed values, and the histogram
 * quantile against the exact nearest-rank value of the same samples.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "stats.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* Hand-computed: msb, sub-bucket = the 4 bits below the msb. */
TEST(bucket_hand_values)
{
	static const struct { uint64_t v; uint32_t b; uint64_t lo, hi; } t[] = {
		{ 0, 0, 0, 1 },
		{ 15, 15, 15, 16 },
		{ 16, 16, 16, 17 },		/* msb 4: width 1 */
		{ 31, 31, 31, 32 },
		{ 32, 32, 32, 34 },		/* msb 5: width 2 */
		{ 33, 32, 32, 34 },
		{ 34, 33, 34, 36 },
		{ 1000, 111, 992, 1024 },	/* msb 9: 96 + (1000 >> 5 & 15) */
		{ 1024, 112, 1024, 1088 },
		{ 5000, 147, 4864, 5120 },	/* msb 12: 144 + 3 */
		{ (1ull << 36) - 1, 527, 31ull << 31, 1ull << 36 },	/* msb 35: 512 + 15 */
	};

	ASSERT_EQ(528, LS_HIST_NR_BUCKETS);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		EXPECT_EQ(t[i].b, ls_hist_bucket(t[i].v)) TH_LOG("v=%llu", (unsigned long long)t[i].v);
		EXPECT_EQ(t[i].lo, ls_hist_bucket_lo(t[i].b)) TH_LOG("b=%u", t[i].b);
		EXPECT_EQ(t[i].hi, ls_hist_bucket_hi(t[i].b)) TH_LOG("b=%u", t[i].b);
	}
	/* At and beyond 2^36 ns everything lands in the last bucket. */
	EXPECT_EQ(527, ls_hist_bucket(1ull << 36));
	EXPECT_EQ(527, ls_hist_bucket(UINT64_MAX));
	EXPECT_EQ(0, ls_fls64(1));
	EXPECT_EQ(63, ls_fls64(1ull << 63));
	EXPECT_EQ(35, ls_fls64((1ull << 36) - 1));
}

/* Buckets tile the range without gaps, and each is at most 1/16 wide. */
TEST(bucket_tiling)
{
	for (uint32_t b = 0; b < LS_HIST_NR_BUCKETS; b++) {
		uint64_t lo = ls_hist_bucket_lo(b), hi = ls_hist_bucket_hi(b);

		ASSERT_LT(lo, hi);
		ASSERT_EQ(b, ls_hist_bucket(lo));
		ASSERT_EQ(b, ls_hist_bucket(hi - 1));
		if (b + 1 < LS_HIST_NR_BUCKETS)
			ASSERT_EQ(hi, ls_hist_bucket_lo(b + 1));
		if (b >= LS_HIST_SUB)
			ASSERT_LE((hi - lo) * LS_HIST_SUB, lo);
	}
}

/* Exact small values: quantiles are the values themselves. */
TEST(quantile_exact_small)
{
	struct ls_hist *h = calloc(1, sizeof(*h));

	ASSERT_NE(NULL, h);
	EXPECT_TRUE(isnan(ls_hist_quantile(h, 0.5)));
	for (uint64_t v = 1; v <= 10; v++)
		ls_hist_add(h, v);
	EXPECT_EQ(10, h->count);
	EXPECT_EQ(55, h->sum_ns);
	EXPECT_EQ(10, h->max_ns);
	EXPECT_EQ(1.0, ls_hist_quantile(h, 0.0));
	EXPECT_EQ(5.0, ls_hist_quantile(h, 0.5));	/* rank ceil(5) = 5 */
	EXPECT_EQ(6.0, ls_hist_quantile(h, 0.51));	/* rank ceil(5.1) = 6 */
	EXPECT_EQ(9.0, ls_hist_quantile(h, 0.9));
	EXPECT_EQ(10.0, ls_hist_quantile(h, 1.0));
	free(h);
}

/* Wide buckets: midpoint of the bucket's integers, clamped to max. */
TEST(quantile_midpoints)
{
	struct ls_hist *h = calloc(1, sizeof(*h));

	ASSERT_NE(NULL, h);
	ls_hist_add(h, 1000);
	/* bucket [992, 1024): midpoint 1007.5 > max 1000 -> 1000 */
	EXPECT_EQ(1000.0, ls_hist_quantile(h, 0.5));
	for (int i = 0; i < 98; i++)
		ls_hist_add(h, 1000);
	ls_hist_add(h, 5000);
	EXPECT_EQ(1007.5, ls_hist_quantile(h, 0.5));
	EXPECT_EQ(1007.5, ls_hist_quantile(h, 0.99));	/* rank 99 */
	EXPECT_EQ(4991.5, ls_hist_quantile(h, 0.995));	/* rank 100: [4864, 5120) */
	EXPECT_EQ(5000.0, ls_hist_quantile(h, 1.0));
	EXPECT_EQ(99 * 1000 + 5000, h->sum_ns);
	free(h);
}

/* merge(a, b) equals adding every value to one histogram. */
TEST(merge)
{
	struct ls_hist *a = calloc(3, sizeof(*a)), *b = a + 1, *all = a + 2;

	ASSERT_NE(NULL, a);
	for (uint64_t v = 1; v < 100000; v = v * 3 + 1) {
		ls_hist_add(v & 1 ? a : b, v);
		ls_hist_add(all, v);
	}
	ls_hist_merge(a, b);
	EXPECT_EQ(0, memcmp(a, all, sizeof(*a)));
	free(a);
}

/* The histogram quantile is within 1/32 of the exact nearest-rank value. */
TEST(quantile_vs_exact)
{
	struct ls_hist *h = calloc(1, sizeof(*h));
	const size_t n = 20000;
	double *v = calloc(n, sizeof(*v));
	static const double qs[] = { 0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0 };
	uint64_t x = 42;

	ASSERT_NE(NULL, h);
	ASSERT_NE(NULL, v);
	for (size_t i = 0; i < n; i++) {
		/* xorshift; log-spread values from 16 ns to ~1 s */
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		v[i] = floor(16.0 * pow(2.0, (double)(x % 25000) / 1000.0));
		ls_hist_add(h, (uint64_t)v[i]);
	}
	ls_sort_doubles(v, n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double exact = ls_quantile_sorted(v, n, qs[i]);
		double got = ls_hist_quantile(h, qs[i]);

		EXPECT_LE(fabs(got - exact), exact / 32.0)
			TH_LOG("q=%g exact %.0f hist %.1f", qs[i], exact, got);
	}
	free(v);
	free(h);
}

TEST_HARNESS_MAIN
