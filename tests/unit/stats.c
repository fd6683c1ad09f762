// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for tools/stats.c against hand-computed values. Percentiles are
 * nearest-rank: the q-quantile of n sorted values is v[ceil(q * n) - 1], so
 * the median of 1 2 3 4 is 2 (not 2.5) and every percentile is an observed
 * value. stdev is the sample standard deviation (n - 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "json.h"
#include "stats.h"

#define EPS 1e-9
#define EXPECT_NEAR(want, got, eps) EXPECT_TRUE(fabs((double)(want) - (double)(got)) <= (eps))

TEST(odd_count)
{
	double v[] = { 5, 1, 3 };
	struct ls_summary s;

	ls_summarize(v, 3, &s);
	EXPECT_EQ(3, s.count);
	EXPECT_EQ(1, s.min);
	EXPECT_EQ(3, s.p50);		/* ceil(1.5) = 2nd value */
	EXPECT_EQ(5, s.p90);		/* ceil(2.7) = 3rd */
	EXPECT_EQ(5, s.p99);
	EXPECT_EQ(5, s.max);
	EXPECT_NEAR(3.0, s.mean, EPS);
	EXPECT_NEAR(2.0, s.stdev, EPS);	/* sqrt((4 + 0 + 4) / 2) */
	EXPECT_EQ(1, v[0]);		/* sorted in place */
	EXPECT_EQ(5, v[2]);
}

TEST(even_count)
{
	double v[] = { 4, 1, 3, 2 };
	struct ls_summary s;

	ls_summarize(v, 4, &s);
	EXPECT_EQ(2, s.p50);		/* ceil(2.0) = 2nd value, not the midpoint 2.5 */
	EXPECT_EQ(4, s.p90);		/* ceil(3.6) = 4th */
	EXPECT_EQ(4, s.p999);
	EXPECT_NEAR(2.5, s.mean, EPS);
	EXPECT_NEAR(sqrt(5.0 / 3.0), s.stdev, EPS);	/* (2.25 + .25 + .25 + 2.25) / 3 */
}

/* Every statistic of n copies of x is x, and the spread is 0. */
static void expect_constant(struct __test_metadata *_metadata, double *v, size_t n,
			    double x)
{
	struct ls_summary s;

	ls_summarize(v, n, &s);
	EXPECT_EQ(n, s.count);
	EXPECT_EQ(x, s.min);
	EXPECT_EQ(x, s.p50);
	EXPECT_EQ(x, s.p99);
	EXPECT_EQ(x, s.p9999);
	EXPECT_EQ(x, s.max);
	EXPECT_EQ(x, s.mean);
	EXPECT_EQ(0, s.stdev);
}

TEST(one_sample)
{
	double v[] = { 7.5 };

	expect_constant(_metadata, v, 1, 7.5);
}

TEST(all_equal)
{
	double v[] = { 2, 2, 2, 2, 2, 2 };

	expect_constant(_metadata, v, 6, 2);
}

TEST(hundred_values_exact_ranks)
{
	double v[100];
	struct ls_summary s;

	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;		/* 100 .. 1, reversed */
	ls_summarize(v, 100, &s);
	EXPECT_EQ(50, s.p50);
	EXPECT_EQ(90, s.p90);
	EXPECT_EQ(99, s.p99);		/* 0.99 * 100 must not round up to rank 100 */
	EXPECT_EQ(100, s.p999);		/* ceil(99.9) = 100 */
	EXPECT_EQ(100, s.p9999);
	EXPECT_NEAR(50.5, s.mean, EPS);
	EXPECT_NEAR(sqrt(100.0 * 101.0 / 12.0), s.stdev, 1e-9);	/* n(n+1)/12 for 1..n */
}

TEST(thousand_values_tail)
{
	double *v = malloc(1000 * sizeof(*v));
	struct ls_summary s;

	ASSERT_NE(NULL, v);
	for (int i = 0; i < 1000; i++)
		v[i] = i + 1;
	ls_summarize(v, 1000, &s);
	EXPECT_EQ(500, s.p50);
	EXPECT_EQ(990, s.p99);
	EXPECT_EQ(999, s.p999);		/* rank 999 exactly */
	EXPECT_EQ(1000, s.p9999);	/* ceil(999.9) = 1000 */
	free(v);
}

TEST(quantile_edges)
{
	double v[] = { 1, 2, 3 };

	EXPECT_EQ(1, ls_quantile_sorted(v, 3, 0));
	EXPECT_EQ(1, ls_quantile_sorted(v, 3, 0.2));	/* ceil(0.6) = 1 */
	EXPECT_EQ(2, ls_quantile_sorted(v, 3, 0.34));	/* ceil(1.02) = 2 */
	EXPECT_EQ(3, ls_quantile_sorted(v, 3, 1));
	EXPECT_TRUE(isnan(ls_quantile_sorted(v, 0, 0.5)));
}

TEST(empty_is_zero)
{
	struct ls_summary s;

	memset(&s, 0xff, sizeof(s));
	ls_summarize(NULL, 0, &s);
	EXPECT_EQ(0, s.count);
	EXPECT_EQ(0, s.p50);
	EXPECT_EQ(0, s.stdev);
}

TEST(json_summary_keys)
{
	double v[] = { 1000, 3000 };
	struct ls_summary s;
	struct ls_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ASSERT_NE(NULL, fp);
	ls_summarize(v, 2, &s);
	ls_json_init(&j, fp, false);
	ls_json_obj_open(&j, NULL);
	ls_json_summary(&j, "summary", &s);
	ls_json_obj_close(&j);
	ls_json_end(&j);
	fclose(fp);
	EXPECT_NE(NULL, strstr(buf, "\"count\":2"));
	EXPECT_NE(NULL, strstr(buf, "\"min_ns\":1000"));
	EXPECT_NE(NULL, strstr(buf, "\"p50_ns\":1000"));
	EXPECT_NE(NULL, strstr(buf, "\"p90_ns\":3000"));
	EXPECT_NE(NULL, strstr(buf, "\"mean_ns\":2000"));
	EXPECT_NE(NULL, strstr(buf, "\"stdev_ns\":1414.2135623730"));	/* not truncated */
	free(buf);
}

TEST_HARNESS_MAIN
