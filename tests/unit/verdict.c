// SPDX-License-Identifier: GPL-2.0
/*
 * Verdict: threshold validation and levels, the seed's case study (18 us
 * with PFC pause counters moving -> PFC/queues), the seed's layer order,
 * a CPU hog against a baseline naming that CPU, and no invented fault when
 * everything is normal. Without a baseline: a healthy emulated pair (a
 * quarter of the p50 in the residual, kernel work half of it) names no
 * fault; queuing is a finding only when big, largest and recorded;
 * counters stay findings on their own; the CPU is a finding only when its
 * waits rose above their floor, naming the CPU with most wait, while work
 * above its floor only points `next` at the CPU with most work. Each
 * sample's waits and work come from the attribution's per-window figures.
 */
#include <math.h>
#include <string.h>

#include "verdict.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* One CPU's row, no baseline: its mean one-way ns, split into wait and work. */
static struct ls_vd_cpu cpu_row(int host, unsigned int cpu, unsigned int stage, double mean_ns,
				double wait_ns, unsigned int wait_stage, double work_ns,
				unsigned int work_stage)
{
	return (struct ls_vd_cpu){
		.host = host, .cpu = cpu, .stage = stage, .mean_ns = mean_ns,
		.wait_mean_ns = wait_ns, .wait_stage = wait_stage,
		.work_mean_ns = work_ns, .work_stage = work_stage, .base_mean_ns = NAN,
	};
}

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

/* The verdict on in with the default thresholds. */
static void decide(const struct ls_vd_in *in, struct ls_verdict *v)
{
	struct ls_thresholds t;

	ls_thresholds_default(&t);
	ls_verdict_decide(&t, in, v);
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
	struct ls_vd_in in = healthy();
	struct ls_verdict v;

	decide(&in, &v);
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
	struct ls_vd_in in = healthy();
	struct ls_vd_ctr c[] = {
		{ .host = 0, .name = "ethtool:rx_pause_ctrl_phy", .cls = LS_CTR_PFC, .delta = 5120 },
		{ .host = 1, .name = "hw:sent_pkts", .cls = LS_CTR_OTHER, .delta = 1000 },
	};
	struct ls_verdict v;

	in.total_p50 = 18000;
	in.total_p99 = 30000;
	in.part_p50[LS_PART_QUEUING] = 16100;
	in.tail_share[LS_PART_QUEUING] = 0.9;
	in.tail_share[LS_PART_PROCESSING] = 0.1;
	in.ctrs = c;
	in.nctrs = 2;
	decide(&in, &v);
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
	struct ls_vd_in in = healthy();
	struct ls_vd_ctr c[] = {
		{ .host = 1, .name = "hw:retry_exceeded_err", .cls = LS_CTR_RETRANS, .delta = 3 },
		{ .host = 1, .name = "qdisc:netem:8001:drops", .cls = LS_CTR_DROP, .delta = 2 },
	};
	struct ls_verdict v;

	in.total_p50 = 7000;
	in.ctrs = c;
	in.nctrs = 2;
	in.expect_gbps = 100;
	in.rate_gbps = 40;
	decide(&in, &v);
	ASSERT_EQ(3, v.nf);
	EXPECT_EQ(LS_LAYER_LINK, v.f[0].layer);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[1].layer);
	EXPECT_EQ(LS_LAYER_RDMA, v.f[2].layer);
	EXPECT_EQ(LS_LAYER_LINK, v.next);
	in.expect_gbps = 0;
	decide(&in, &v);
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	in.nctrs = 1;
	decide(&in, &v);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
}

TEST(cpu_hog_against_baseline_names_the_cpu)
{
	struct ls_vd_in in = healthy();
	struct ls_vd_cpu cpus[] = {
		{ .host = 0, .cpu = 0, .stage = LS_STAGE_SOFTIRQ_RUN, .mean_ns = 900, .base_mean_ns = 850 },
		{ .host = 1, .cpu = 0, .stage = LS_STAGE_SOFTIRQ_RUN, .mean_ns = 1000, .base_mean_ns = 950 },
		{ .host = 1, .cpu = 1, .stage = LS_STAGE_PREEMPT, .mean_ns = 800, .base_mean_ns = 10 },
	};
	struct ls_verdict v;

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
	decide(&in, &v);
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
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
}

TEST(abnormal_without_evidence_follows_the_dominant_part)
{
	struct ls_vd_in in = healthy();
	struct ls_verdict v;

	in.total_p50 = 8000;
	in.part_p50[LS_PART_PROCESSING] = 7800;
	in.base_p50 = 7000;
	in.kernel_p50 = 800;	/* 10 %: not a finding */
	decide(&in, &v);
	EXPECT_EQ(LS_LEVEL_ABNORMAL, v.level_p50);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
	/*
	 * All of it kernel time, none of it waits: no finding without a
	 * baseline (the old rule called kernel >= share of the p50 a CPU
	 * fault), but the next layer is still the CPU.
	 */
	in.base_p50 = 0;
	in.kernel_p50 = 7800;
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(LS_LAYER_CPU, v.next);
}

/*
 * A healthy lab pair, no baseline, recorded: 400 us p50, a quarter of it
 * queuing (the residual's spread), the rest processing of which kernel
 * 180 us (work 140, waits 40, both 10 us above their floor), base 119 us.
 */
static struct ls_vd_in lab_pair(void)
{
	struct ls_vd_in in = {
		.total_p50 = 400000, .total_p99 = 900000,
		.part_p50 = { 1000, 100000, 299000 }, .kernel_p50 = 180000, .base_p50 = 119000,
		.tail_share = { 0, 0.6, 0.4 }, .tail_excess_ns = 300000,
		.recorded = true,
		.waits_p50 = 40000, .waits_floor = 30000,
		.work_p50 = 140000, .work_floor = 130000,
		.rate_gbps = 10,
	};
	return in;
}

TEST(healthy_lab_pair_names_no_fault)
{
	struct ls_vd_in in = lab_pair();
	struct ls_vd_cpu cpus[] = {
		cpu_row(0, 0, LS_STAGE_SOFTIRQ_RUN, 80000,
			20000, LS_STAGE_INTERFERENCE, 60000, LS_STAGE_SOFTIRQ_RUN),
		cpu_row(1, 0, LS_STAGE_SOFTIRQ_RUN, 100000,
			20000, LS_STAGE_SOFTIRQ_WAIT, 80000, LS_STAGE_SOFTIRQ_RUN),
	};
	struct ls_verdict v;

	in.cpus = cpus;
	in.ncpus = 2;
	decide(&in, &v);
	EXPECT_EQ(LS_LEVEL_HURTS, v.level_p50);
	EXPECT_EQ(LS_PART_PROCESSING, v.dom_p50);
	/* queuing is 25 % >= share but not the largest part; kernel work is 45 % */
	EXPECT_EQ(0, v.nf);
	EXPECT_TRUE(fabs(v.waits_excess_share - 0.025) < 1e-9);
	EXPECT_TRUE(fabs(v.work_excess_share - 0.025) < 1e-9);
	/* kernel time exceeds the base: next is the CPU carrying the most work */
	EXPECT_EQ(LS_LAYER_CPU, v.next);
	EXPECT_EQ(1, v.cpu_host);
	EXPECT_EQ(0, v.cpu);
	EXPECT_EQ(LS_STAGE_SOFTIRQ_RUN, v.cpu_stage);
	EXPECT_NE(NULL, strstr(v.next_why, "most work on the responder's CPU 0"));
}

TEST(queuing_needs_share_largest_and_records)
{
	struct ls_thresholds t;
	struct ls_vd_in in = lab_pair();
	struct ls_verdict v;

	ls_thresholds_default(&t);
	/* congestion: queuing 85 % of the p50, the largest part, recorded */
	in.total_p50 = 2000000;
	in.part_p50[LS_PART_TRANSMISSION] = 10000;
	in.part_p50[LS_PART_QUEUING] = 1700000;
	in.part_p50[LS_PART_PROCESSING] = 290000;
	ls_verdict_decide(&t, &in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[0].layer);
	EXPECT_NE(NULL, strstr(v.f[0].text, "queuing p50 1700.00 us is 85% of the total p50"));
	EXPECT_NE(NULL, strstr(v.f[0].text, "largest part"));
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	EXPECT_EQ(-1, v.cpu);
	/* the same unrecorded: the residual is not a queuing measurement */
	in.recorded = false;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	EXPECT_NE(NULL, strstr(v.next_why, "unexplained residual: no backend recorded, so it holds processing's spread too"));
	EXPECT_TRUE(isnan(v.waits_excess_share));
	EXPECT_TRUE(isnan(v.work_excess_share));
	/* recorded and largest, but under share */
	in.recorded = true;
	t.share = 0.9;
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_EQ(NULL, strstr(v.next_why, "no backend recorded"));
	t.share = 0.85;		/* exactly at share: a finding */
	ls_verdict_decide(&t, &in, &v);
	EXPECT_EQ(1, v.nf);
}

TEST(congestion_counters_are_findings_on_their_own)
{
	struct ls_vd_in in = lab_pair();
	struct ls_vd_ctr c[] = {
		{ .host = 1, .name = "hw:np_ecn_marked_roce_packets", .cls = LS_CTR_ECN, .delta = 12 },
	};
	struct ls_verdict v;

	in.part_p50[LS_PART_QUEUING] = 4000;	/* 1 %: no part finding */
	in.ctrs = c;
	in.nctrs = 1;
	decide(&in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[0].layer);
	EXPECT_NE(NULL, strstr(v.f[0].text, "responder hw:np_ecn_marked_roce_packets +12"));
	EXPECT_EQ(LS_LAYER_QUEUES, v.next);
	in.recorded = false;
	decide(&in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[0].layer);
}

TEST(waits_above_floor_name_the_cpu_with_most_wait)
{
	struct ls_vd_in in = lab_pair();
	struct ls_vd_cpu cpus[] = {
		cpu_row(0, 0, LS_STAGE_SOFTIRQ_RUN, 65000,
			5000, LS_STAGE_PREEMPT, 60000, LS_STAGE_SOFTIRQ_RUN),
		/* most time and most work, little wait */
		cpu_row(1, 0, LS_STAGE_SOFTIRQ_RUN, 130000,
			10000, LS_STAGE_SOFTIRQ_WAIT, 120000, LS_STAGE_SOFTIRQ_RUN),
		/* most wait */
		cpu_row(1, 1, LS_STAGE_HARDIRQ, 100000,
			90000, LS_STAGE_SOFTIRQ_WAIT, 10000, LS_STAGE_HARDIRQ),
	};
	struct ls_verdict v;

	in.cpus = cpus;
	in.ncpus = 3;
	in.waits_p50 = 150000;	/* 120 us over the 30 us floor: 30 % of the p50 */
	in.kernel_p50 = 290000;
	decide(&in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_CPU, v.f[0].layer);
	EXPECT_EQ(LS_LAYER_CPU, v.next);
	EXPECT_TRUE(fabs(v.waits_excess_share - 0.3) < 1e-9);
	EXPECT_EQ(1, v.cpu_host);
	EXPECT_EQ(1, v.cpu);
	EXPECT_EQ(LS_STAGE_SOFTIRQ_WAIT, v.cpu_stage);
	EXPECT_NE(NULL, strstr(v.f[0].text,
			       "softirq/IRQ waits above their floor: 120.00 us per sample at the p50 (30% of the total p50"));
	EXPECT_NE(NULL, strstr(v.f[0].text, "most on the responder's CPU 1 (softirq_wait, 90.00 us"));
	/* just under share: no finding */
	in.waits_p50 = 30000 + 0.19 * 400000;
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
	/* waits every sample pays (a high floor) are not above their floor */
	in.waits_p50 = 150000;
	in.waits_floor = 140000;
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_TRUE(fabs(v.waits_excess_share - 0.025) < 1e-9);
}

TEST(work_above_floor_is_no_finding_next_names_the_work_cpu)
{
	struct ls_vd_ctr retrans = { .host = 1, .name = "hw:duplicate_request",
				     .cls = LS_CTR_RETRANS, .delta = 3, .after = 3 };
	struct ls_vd_in in = lab_pair();
	struct ls_vd_cpu cpus[] = {
		cpu_row(0, 0, LS_STAGE_SOFTIRQ_RUN, 60000,
			0, LS_STAGE_SOFTIRQ_WAIT, 60000, LS_STAGE_SOFTIRQ_RUN),
		/* most time and most wait, little work */
		cpu_row(1, 0, LS_STAGE_SOFTIRQ_WAIT, 190000,
			150000, LS_STAGE_SOFTIRQ_WAIT, 40000, LS_STAGE_HARDIRQ),
		/* most work: where an injected softirq busy-wait ran */
		cpu_row(1, 1, LS_STAGE_SOFTIRQ_RUN, 175000,
			5000, LS_STAGE_PREEMPT, 170000, LS_STAGE_NAPI_POLL),
	};
	struct ls_verdict v;

	in.cpus = cpus;
	in.ncpus = 3;
	in.work_p50 = 250000;	/* 120 us over the 130 us floor: 30 % */
	in.waits_p50 = 38000;	/* 8 us over the floor: 2 % */
	in.kernel_p50 = 290000;
	in.base_p50 = 100000;
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_TRUE(fabs(v.work_excess_share - 0.3) < 1e-9);
	EXPECT_TRUE(fabs(v.waits_excess_share - 0.02) < 1e-9);
	EXPECT_EQ(LS_LAYER_CPU, v.next);
	EXPECT_EQ(1, v.cpu_host);
	EXPECT_EQ(1, v.cpu);
	EXPECT_EQ(LS_STAGE_NAPI_POLL, v.cpu_stage);
	EXPECT_NE(NULL, strstr(v.next_why, "most work on the responder's CPU 1 (napi_poll, 170.00 us"));
	/* a finding elsewhere leads, and the work CPU is still named after it */
	in.ctrs = &retrans;
	in.nctrs = 1;
	decide(&in, &v);
	EXPECT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
	EXPECT_EQ(1, v.cpu_host);
	EXPECT_EQ(1, v.cpu);
	EXPECT_EQ(LS_STAGE_NAPI_POLL, v.cpu_stage);
	in.ctrs = NULL;
	in.nctrs = 0;
	/* the base dominates: what every sample pays, the RDMA path; no CPU named */
	in.kernel_p50 = 150000;
	in.base_p50 = 200000;
	decide(&in, &v);
	EXPECT_EQ(0, v.nf);
	EXPECT_TRUE(v.dom_p50_base);
	EXPECT_EQ(LS_LAYER_RDMA, v.next);
	EXPECT_EQ(-1, v.cpu);
	EXPECT_NE(NULL, strstr(v.next_why,
			       "most of it is what every sample pays: base 200.00 us and kernel work 250.00 us"));
}

TEST(baseline_rules_unchanged)
{
	struct ls_vd_in in = lab_pair();
	struct ls_verdict v;

	in.have_baseline = true;
	in.b_total_p50 = 400000;
	in.b_part_p50[LS_PART_QUEUING] = 20000;
	in.b_part_p50[LS_PART_PROCESSING] = 379000;
	in.b_kernel_p50 = 180000;
	/* queuing grew 200 us (>= 0.2 x 400, all the growth), not the largest, unrecorded */
	in.total_p50 = 600000;
	in.part_p50[LS_PART_QUEUING] = 220000;
	in.part_p50[LS_PART_PROCESSING] = 379000;
	in.recorded = false;
	/* waits far above their floor, but kernel time did not grow */
	in.waits_p50 = 200000;
	decide(&in, &v);
	ASSERT_EQ(1, v.nf);
	EXPECT_EQ(LS_LAYER_QUEUES, v.f[0].layer);
	EXPECT_NE(NULL, strstr(v.f[0].text, "queuing p50 rose by 200.00 us over the baseline"));
	EXPECT_EQ(-1, v.cpu);
}

/* A record of one stage on one CPU. */
static struct ls_record rec(uint64_t s, uint64_t e, uint32_t cpu, uint16_t stage)
{
	struct ls_record r = { .start_ns = s, .end_ns = e, .cpu = cpu, .stage = stage };

	return r;
}

TEST(kernel_split_per_sample)
{
	enum { N = 20 };
	struct ls_window w[N];
	struct ls_attr_cfg cfg = { .win = w, .n = N, .stage_mask = LS_ATTR_ALL_STAGES,
				   .per_window = true };
	struct ls_vd_in in = { 0 };
	struct ls_attr a;
	struct ls_err e;

	for (int i = 0; i < N; i++)
		w[i] = (struct ls_window){ i * 10000ull, i * 10000ull + 5000 };
	cfg.cpumask[0] = 1;					/* prober CPU 0 */
	cfg.cpumask[LS_MAX_CPUS / 64] |= 2ull << (LS_MAX_CPUS % 64);	/* responder CPU 1 */
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	for (int i = 0; i < N; i++) {
		uint64_t s = w[i].start_ns;
		struct ls_record r[] = {
			/* a wait of 100 (i + 1) ns on the prober, a hard IRQ inside it */
			rec(s, s + 100 * (i + 1), 0, LS_STAGE_SOFTIRQ_WAIT),
			rec(s + 10, s + 30, 0, LS_STAGE_HARDIRQ),
			/* 1000 ns of softirq work on the responder, and an RX_PKT instant */
			rec(s + 3000, s + 4000, LS_MAX_CPUS + 1, LS_STAGE_SOFTIRQ_RUN),
			rec(s + 3500, s + 3500, LS_MAX_CPUS + 1, LS_STAGE_RX_PKT),
		};

		for (size_t k = 0; k < ARRAY_SIZE(r); k++)
			ASSERT_EQ(0, ls_attr_push(&a, &r[k], &e));
	}
	ls_attr_finish(&a);
	/* one-way (div 2): waits 50 (i + 1) - 10, work 510 per sample */
	ASSERT_EQ(0, ls_vd_kernel_split(&a, 2, 0.05, &in, &e));
	EXPECT_EQ(490, in.waits_p50);	/* nearest rank: the 10th of 20 */
	EXPECT_EQ(40, in.waits_floor);	/* the 1st */
	EXPECT_EQ(510, in.work_p50);
	EXPECT_EQ(510, in.work_floor);
	ASSERT_EQ(0, ls_vd_kernel_split(&a, 1, 0.5, &in, &e));
	EXPECT_EQ(980, in.waits_floor);
	ls_attr_free(&a);
	/* without per-window figures there is nothing to split: an error, not zeros */
	cfg.per_window = false;
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	ls_attr_finish(&a);
	EXPECT_EQ(-1, ls_vd_kernel_split(&a, 2, 0.05, &in, &e));
	EXPECT_NE(NULL, strstr(e.msg, "per-sample stage figures"));
	ls_attr_free(&a);
}

TEST_HARNESS_MAIN
