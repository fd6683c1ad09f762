// SPDX-License-Identifier: GPL-2.0
/*
 * tools/model.c: the training-impact model. Reproduces the seed's worked
 * example, shows that the seed's "96 ms at 200 us" does not follow from its
 * own formula, and pins the ring-steps and double-binary-tree variants to
 * hand-computed values.
 */
#include <math.h>
#include <string.h>

#include "model.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* The seed's example: 175B model on 256 A100s. */
static const struct ls_model_in seed = {
	.gpus = 256, .grad_bytes = 500e6, .bw_bps = 12.5e9, .latency_s = 2e-6,
	.compute_s = 0.8, .batch = 1, .algo = LS_ALGO_RING,
};

#define NEAR(want, got, tol) (fabs((want) - (got)) <= (tol))

TEST(seed_example_2us)
{
	struct ls_err err = { 0 };
	struct ls_model_out r;

	ASSERT_EQ(0, ls_model_eval(&seed, &r, &err));
	/* 2 * 255 * 500 MB / (256 * 12.5 GB/s) = 79.6875 ms: the seed's "79.7 ms" */
	ASSERT_TRUE(NEAR(79.6875e-3, r.t_bw_s, 1e-12));
	ASSERT_EQ(797, (int)lround(r.t_bw_s * 1e4));
	/* 2 us * log2 256 = 16 us */
	ASSERT_TRUE(NEAR(16e-6, r.t_lat_s, 1e-15));
	/* utilization 0.8 / 0.8797 = 90.9 % */
	ASSERT_EQ(909, (int)lround(r.utilization * 1000));
	ASSERT_TRUE(NEAR(0.8 / (0.8 + 79.6875e-3 + 16e-6), r.utilization, 1e-12));
	ASSERT_TRUE(NEAR(256 / (0.8 + 79.7035e-3), r.throughput, 1e-9));
}

TEST(seed_200us_is_81_3ms_not_96ms)
{
	struct ls_model_in in = seed;
	struct ls_err err = { 0 };
	struct ls_model_out r;

	in.latency_s = 200e-6;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	/* 79.6875 ms + 200 us * 8 = 81.2875 ms: the formula says 81.3 ms */
	ASSERT_EQ(813, (int)lround(r.t_sync_s * 1e4));
	ASSERT_GT(fabs(r.t_sync_s - 96e-3), 14e-3);
	/* and utilization 90.8 %, not the seed's 89.3 % ... */
	ASSERT_EQ(908, (int)lround(r.utilization * 1000));
	/* ... which is what a T_sync of 96 ms would give: the seed's figures follow from 96 ms */
	ASSERT_EQ(893, (int)lround(0.8 / (0.8 + 0.096) * 1000));
	/* With T_compute = 0.1 s: the formula gives 55.2 %, 96 ms would give the seed's 51 % */
	in.compute_s = 0.1;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_EQ(552, (int)lround(r.utilization * 1000));
	ASSERT_EQ(51, (int)lround(0.1 / (0.1 + 0.096) * 100));
}

TEST(rule_of_thumb_log2n_per_us)
{
	/* Seed: each extra 1 us of point-to-point latency adds log2(N) us to AllReduce. */
	struct ls_model_in in = seed;
	struct ls_model_out a, b;
	struct ls_err err;

	ASSERT_EQ(0, ls_model_eval(&in, &a, &err));
	in.latency_s += 1e-6;
	ASSERT_EQ(0, ls_model_eval(&in, &b, &err));
	ASSERT_TRUE(NEAR(8e-6, b.t_sync_s - a.t_sync_s, 1e-12));
}

TEST(variants_by_hand)
{
	struct ls_model_in in = {
		.gpus = 8, .grad_bytes = 1e6, .bw_bps = 1e9, .latency_s = 1e-6,
		.compute_s = 0.01, .batch = 32,
	};
	struct ls_err err = { 0 };
	struct ls_model_out r;

	in.algo = LS_ALGO_RING;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_TRUE(NEAR(1.75e-3, r.t_bw_s, 1e-15));	/* 2*7*1e6 / (8*1e9) */
	ASSERT_TRUE(NEAR(3e-6, r.t_lat_s, 1e-15));	/* log2 8 = 3 */
	ASSERT_TRUE(NEAR(32 * 8 / (0.01 + 1.753e-3), r.throughput, 1e-6));
	in.algo = LS_ALGO_RING_STEPS;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_TRUE(NEAR(1.75e-3, r.t_bw_s, 1e-15));
	ASSERT_TRUE(NEAR(14e-6, r.t_lat_s, 1e-15));	/* 2 (N-1) steps */
	in.algo = LS_ALGO_TREE;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_TRUE(NEAR(2e-3, r.t_bw_s, 1e-15));	/* 2 D / B */
	ASSERT_TRUE(NEAR(6e-6, r.t_lat_s, 1e-15));	/* 2 * 3 levels */
	in.gpus = 5;					/* ceil(log2 5) = 3 */
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_TRUE(NEAR(6e-6, r.t_lat_s, 1e-15));
	/* At large N the tree's latency term beats the ring's 2 (N-1) steps. */
	in.gpus = 1024;
	in.algo = LS_ALGO_TREE;
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_TRUE(NEAR(20e-6, r.t_lat_s, 1e-15));
	in.gpus = 1;					/* nothing to synchronize */
	ASSERT_EQ(0, ls_model_eval(&in, &r, &err));
	ASSERT_EQ(0, r.t_sync_s);
	ASSERT_EQ(1.0, r.utilization);
}

TEST(bad_inputs)
{
	struct ls_model_in in = seed;
	struct ls_err err = { 0 };
	struct ls_model_out r;

	in.gpus = 0;
	ASSERT_EQ(-1, ls_model_eval(&in, &r, &err));
	ASSERT_NE(NULL, strstr(err.msg, "N must be at least 1"));
	in = seed;
	in.bw_bps = 0;
	ASSERT_EQ(-1, ls_model_eval(&in, &r, &err));
	in = seed;
	in.latency_s = NAN;
	ASSERT_EQ(-1, ls_model_eval(&in, &r, &err));
	in = seed;
	in.compute_s = 0;
	in.gpus = 1;
	ASSERT_EQ(-1, ls_model_eval(&in, &r, &err));
	ASSERT_NE(NULL, strstr(err.msg, "step time is zero"));
}

TEST(unit_parsing)
{
	struct ls_err err = { 0 };
	enum ls_model_algo a;
	double v;

	ASSERT_EQ(0, ls_parse_bytes("500MB", &v, &err, "x"));
	ASSERT_EQ(500e6, v);
	ASSERT_EQ(0, ls_parse_bytes("1.5GiB", &v, &err, "x"));
	ASSERT_EQ(1.5 * 1073741824.0, v);
	ASSERT_EQ(0, ls_parse_bytes("4096", &v, &err, "x"));
	ASSERT_EQ(4096, v);
	ASSERT_EQ(-1, ls_parse_bytes("5 MB", &v, &err, "x"));
	ASSERT_EQ(-1, ls_parse_bytes("-1MB", &v, &err, "x"));
	ASSERT_EQ(-1, ls_parse_bytes("1XB", &v, &err, "--grad-bytes"));
	ASSERT_NE(NULL, strstr(err.msg, "--grad-bytes: '1XB' has an unknown unit"));
	ASSERT_EQ(0, ls_parse_rate("12.5GB/s", &v, &err, "x"));
	ASSERT_EQ(12.5e9, v);
	ASSERT_EQ(0, ls_parse_rate("100Gbit/s", &v, &err, "x"));
	ASSERT_EQ(12.5e9, v);
	ASSERT_EQ(0, ls_parse_rate("12.5", &v, &err, "x"));
	ASSERT_EQ(12.5e9, v);
	ASSERT_EQ(-1, ls_parse_rate("0GB/s", &v, &err, "x"));
	ASSERT_EQ(0, ls_parse_time_s("2us", &v, &err, "x"));
	ASSERT_TRUE(NEAR(2e-6, v, 1e-18));
	ASSERT_EQ(0, ls_parse_time_s("0.8s", &v, &err, "x"));
	ASSERT_EQ(0.8, v);
	ASSERT_EQ(0, ls_parse_time_s("100ms", &v, &err, "x"));
	ASSERT_EQ(-1, ls_parse_time_s("2", &v, &err, "--latency"));
	ASSERT_NE(NULL, strstr(err.msg, "needs a unit"));
	ASSERT_EQ(-1, ls_parse_time_s("nan", &v, &err, "x"));
	ASSERT_EQ(-1, ls_parse_time_s("inf s", &v, &err, "x"));
	ASSERT_EQ(0, ls_model_algo_parse("tree", &a, &err));
	ASSERT_EQ(LS_ALGO_TREE, a);
	ASSERT_EQ(-1, ls_model_algo_parse("butterfly", &a, &err));
}

TEST_HARNESS_MAIN
