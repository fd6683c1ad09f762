// SPDX-License-Identifier: GPL-2.0
/*
 * Verdict: threshold validation and levels, the seed's case study (18 us
 * with PFC pause counters moving -> PFC/queues), the seed's layer order,
 * a CPU hog against a baseline naming that CPU, and no invented fault when
 * everything is normal.
 */
#include <math.h>
#include <string.h>

#include "../../tools/verdict.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* A healthy 2 us sample set: 0.1 transmission, 0.1 queuing, 1.8 processing (1.5 base). */
static struct ls_vd_in healthy(void)
{
	struct ls_vd_in in = {
		.total_p50 = 2000, .total_p99 = 2600,
		.part_p50 = { 100, 100, 1800 }, .kernel_p50 = 300, .base_p50 = 1500,
		.tail_share = { 0, 0.3, 0.7 }, .tail_excess_ns = 500,
		.rate_gbps = 100,
	};
	return in;
}

TEST(thresholds)
{
	struct ls_thresholds t;
	struct ls_err e;
	double lo, hi;

	ls_thresholds_default(&t);
	ASSERT_EQ(0, ls_thresholds_check(&t, &e));
	EXPECT_EQ(LS_LEVEL_FAST, ls_level_of(&t, 1000));
	EXPECT_EQ(LS_LEVEL_NORMAL, ls_level_of(&t, 1820));
	EXPECT_EQ(LS_LEVEL_ELEVATED, ls_level_of(&t, 4000));
	EXPECT_EQ(LS_LEVEL_ABNORMAL, ls_level_of(&t, 6000));
	EXPECT_EQ(LS_LEVEL_HURTS, ls_level_of(&t, 18000));
	t.offset_ns = 1000;	/* a larger message: thresholds move with its transmission */
	EXPECT_EQ(LS_LEVEL_NORMAL, ls_level_of(&t, 3500));
	ASSERT_EQ(0, ls_parse_range_us("1.5-3", &lo, &hi, &e));
	EXPECT_EQ(1500, lo);
	EXPECT_EQ(3000, hi);
	EXPECT_EQ(-1, ls_parse_range_us("3-1.5", &lo, &hi, &e));
	EXPECT_EQ(-1, ls_parse_range_us("-1-3", &lo, &hi, &e));
	EXPECT_EQ(-1, ls_parse_range_us("fast", &lo, &hi, &e));
	t.abnormal_ns = 2000;	/* below normal high */
	EXPECT_EQ(-1, ls_thresholds_check(&t, &e));
	ls_thresholds_default(&t);
	t.share = 0;
	EXPECT_EQ(-1, ls_thresholds_check(&t, &e));
	ls_thresholds_default(&t);
	t.hurts_ns = NAN;
	EXPECT_EQ(-1, ls_thresholds_check(&t, &e));
}

TEST(normal_names_nothing)
{
	struct ls_thresholds t;
	struct ls_vd_in in = healthy();
	struct ls_verdict v;

	ls_thresholds_default(&t);
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LEVEL_NORMAL, v.level_p50);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(LS_LAYER_NONE, v.next);
	EXPECT_EQ(-1, v.cpu);
	EXPECT_EQ(LS_PART_PROCESSING, v.dom_p50);
	EXPECT_TRUE(v.dom_p50_base);
	EXPECT_EQ(LS_PART_PROCESSING, v.dom_tail);
}

TEST(seed_case_study_pfc)
{
	struct ls_thresholds t;
	struct ls_vd_in in = healthy();
	struct ls_vd_ctr c[] = {
		{ .host = 0, .name = "ethtool:rx_pause_ctrl_phy", .cls = LS_CTR_PFC, .delta = 5120 },
		{ .host = 1, .name = "hw:sent_pkts", .cls = LS_CTR_OTHER, .delta = 1000 },
	};
	struct ls_verdict v;

	ls_thresholds_default(&t);
	in.total_p50 = 18000;
	in.total_p99 = 30000;
	in.part_p50[LS_PART_QUEUING] = 16100;
	in.tail_share[LS_PART_QUEUING] = 0.9;
	in.tail_share[LS_PART_PROCESSING] = 0.1;
	in.ctrs = c;
	in.nctrs = 2;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LEVEL_HURTS, v.level_p50);
	EXPECT_EQ(LS_PART_QUEUING, v.dom_p50);
	EXPECT_EQ(LS_PART_QUEUING, v.dom_tail);
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	ASSERT_LE(1, v.nf);
	EXPECT_NE(NULL, strstr(v.f[0].text, "rx_pause_ctrl_phy"));
	EXPECT_EQ(NULL, strstr(v.f[0].text, "sent_pkts"));
}

TEST(layer_order_link_first)
{
	struct ls_thresholds t;
	struct ls_vd_in in = healthy();
	struct ls_vd_ctr c[] = {
		{ .host = 1, .name = "hw:retry_exceeded_err", .cls = LS_CTR_RETRANS, .delta = 3 },
		{ .host = 1, .name = "qdisc:netem:8001:drops", .cls = LS_CTR_DROP, .delta = 2 },
	};
	struct ls_verdict v;

	ls_thresholds_default(&t);
	in.total_p50 = 7000;
	in.ctrs = c;
	in.nctrs = 2;
	in.expect_gbps = 100;
	in.rate_gbps = 40;
	ls_verdict_decide(&t, &in, &v);
	ASSERT_EQ(3, v.nf);
	EXPECT_EQ(LS_LAYER_LINK, v.f[0].layer);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[1].layer);
	EXPECT_EQ(LS_LAYER_RDMA, v.f[2].layer);
	EXPECT_EQ(LS_LAYER_LINK, v.next);
	in.expect_gbps = 0;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	in.nctrs = 1;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
}

TEST(cpu_hog_against_baseline_names_the_cpu)
{
	struct ls_thresholds t;
	struct ls_vd_in in = healthy();
	struct ls_vd_cpu cpus[] = {
		{ .host = 0, .cpu = 0, .stage = LS_STAGE_SOFTIRQ_RUN, .mean_ns = 900, .base_mean_ns = 850 },
		{ .host = 1, .cpu = 0, .stage = LS_STAGE_SOFTIRQ_RUN, .mean_ns = 1000, .base_mean_ns = 950 },
		{ .host = 1, .cpu = 1, .stage = LS_STAGE_PREEMPT, .mean_ns = 800, .base_mean_ns = 10 },
	};
	struct ls_verdict v;

	ls_thresholds_default(&t);
	in.have_baseline = true;
	in.b_total_p50 = 2000;
	in.b_part_p50[LS_PART_QUEUING] = 100;
	in.b_part_p50[LS_PART_PROCESSING] = 1800;
	in.b_kernel_p50 = 300;
	in.total_p50 = 3000;
	in.part_p50[LS_PART_QUEUING] = 150;
	in.part_p50[LS_PART_PROCESSING] = 2750;
	in.kernel_p50 = 1250;
	in.cpus = cpus;
	in.ncpus = 3;
	ls_verdict_decide(&t, &in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_CPU, v.next);
	EXPECT_EQ(1, v.cpu_host);
	EXPECT_EQ(1, v.cpu);	/* not responder CPU 0, which has more time but did not move */
	EXPECT_EQ(LS_STAGE_PREEMPT, v.cpu_stage);
	EXPECT_NE(NULL, strstr(v.f[0].text, "responder's CPU 1"));
	/* the same run against a baseline that already had it: nothing moved */
	in.b_total_p50 = 3000;
	in.b_kernel_p50 = 1250;
	in.b_part_p50[LS_PART_QUEUING] = 150;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(0, v.nf);
}

TEST(abnormal_without_evidence_follows_the_dominant_part)
{
	struct ls_thresholds t;
	struct ls_vd_in in = healthy();
	struct ls_verdict v;

	ls_thresholds_default(&t);
	in.total_p50 = 8000;
	in.part_p50[LS_PART_PROCESSING] = 7800;
	in.base_p50 = 7000;
	in.kernel_p50 = 800;	/* 10 %: not a finding */
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LEVEL_ABNORMAL, v.level_p50);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
	in.base_p50 = 0;
	in.kernel_p50 = 7800;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(LS_LAYER_CPU, v.next);
}

TEST_HARNESS_MAIN
