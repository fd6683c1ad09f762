// SPDX-License-Identifier: GPL-2.0
/*
 * Attribution and split on synthetic samples and records whose overlaps are
 * known by construction: nested stages counted once, records on CPUs that
 * do not serve the NIC ignored, the base floor, queuing >= 0, parts summing
 * to the total and tail shares summing to 1.
 */
#include <math.h>
#include <stdlib.h>

#include "split.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

/* A record of stage st on cpu from s to e. */
static struct ls_record rec(uint64_t s, uint64_t e, unsigned int cpu,
			    unsigned int st)
{
	struct ls_record r = { .start_ns = s, .end_ns = e, .cpu = cpu, .stage = st };
	return r;
}

/* Attribute records r[0..n) (sorted here) to windows w[0..nw) on CPUs 0 and 1. */
static int run(struct ls_attr *a, const struct ls_window *w, size_t nw,
	       struct ls_record *r, size_t n, uint32_t stages)
{
	struct ls_attr_cfg cfg = { .win = w, .n = nw, .stage_mask = stages };
	struct ls_err e;

	cfg.cpumask[0] = 0x3;
	if (ls_attr_init(a, &cfg, &e))
		return -1;
	ls_records_sort(r, n);
	for (size_t i = 0; i < n; i++) {
		if (ls_attr_push(a, &r[i], &e))
			return -1;
	}
	ls_attr_finish(a);
	return 0;
}

/* A cell's expected total: CPU, stage, ns. */
struct cell_want {
	unsigned int cpu, stage;
	uint64_t total_ns;
};

/* Check the totals of the n cells in want. */
static void expect_cells(struct __test_metadata *_metadata, struct ls_attr *a,
			 const struct cell_want *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(want[i].total_ns,
			  ls_attr_cell(a, want[i].cpu, want[i].stage)->total_ns) {
			TH_LOG("cell %zu: CPU %u stage %u", i, want[i].cpu, want[i].stage);
		}
	}
}

TEST(nested_stages_counted_once)
{
	struct ls_window w[] = { { 100, 200 } };
	struct ls_record r[] = {
		rec(105, 150, 0, LS_STAGE_SOFTIRQ_RUN),
		rec(110, 120, 0, LS_STAGE_HARDIRQ),	/* inside the softirq */
		rec(110, 160, 0, LS_STAGE_COMPLETION),	/* spans both */
		rec(112, 118, 0, LS_STAGE_INTERFERENCE),	/* repeats the hardirq */
	};
	struct ls_attr a;

	ASSERT_EQ(0, run(&a, w, 1, r, 4, LS_ATTR_ALL_STAGES));
	/* union [105, 160] = 55 ns, not 45 + 10 + 50 + 6 */
	EXPECT_EQ(55, a.kernel_ns[0]);
	expect_cells(_metadata, &a, (const struct cell_want[]){
		{ 0, LS_STAGE_HARDIRQ, 10 }, { 0, LS_STAGE_SOFTIRQ_RUN, 35 },
		{ 0, LS_STAGE_COMPLETION, 10 }, { 0, LS_STAGE_INTERFERENCE, 0 } }, 4);
	ls_attr_free(&a);
}

TEST(irrelevant_cpus_and_stages_ignored)
{
	struct ls_window w[] = { { 100, 200 } };
	struct ls_record r[] = {
		rec(120, 130, 0, LS_STAGE_HARDIRQ),
		rec(100, 200, 5, LS_STAGE_HARDIRQ),	/* CPU 5 serves nothing */
		rec(140, 190, 1, LS_STAGE_WAKEUP),	/* stage not counted */
	};
	struct ls_attr a;

	ASSERT_EQ(0, run(&a, w, 1, r, 3, LS_ATTR_ALL_STAGES & ~(1u << LS_STAGE_WAKEUP)));
	EXPECT_EQ(10, a.kernel_ns[0]);
	EXPECT_EQ(2, a.ignored);
	EXPECT_EQ(0, ls_attr_cell(&a, 5, LS_STAGE_HARDIRQ)->total_ns);
	ls_attr_free(&a);
}

TEST(clipping_and_records_spanning_windows)
{
	struct ls_window w[] = { { 100, 200 }, { 300, 400 }, { 500, 600 } };
	struct ls_record r[] = {
		rec(50, 110, 0, LS_STAGE_SOFTIRQ_RUN),	/* 10 in w0 */
		rec(190, 310, 1, LS_STAGE_PREEMPT),	/* 10 in w0, 10 in w1 */
		rec(0, 10000, 1, LS_STAGE_SOFTIRQ_WAIT),	/* covers all three */
		rec(420, 480, 0, LS_STAGE_HARDIRQ),	/* between windows */
	};
	struct ls_attr a;

	ASSERT_EQ(0, run(&a, w, 3, r, 4, LS_ATTR_ALL_STAGES));
	/* the long wait fills every window: union = the window */
	EXPECT_EQ(100, a.kernel_ns[0]);
	EXPECT_EQ(100, a.kernel_ns[1]);
	EXPECT_EQ(100, a.kernel_ns[2]);
	EXPECT_EQ(2, ls_attr_cell(&a, 1, LS_STAGE_PREEMPT)->windows);
	expect_cells(_metadata, &a, (const struct cell_want[]){
		{ 0, LS_STAGE_SOFTIRQ_RUN, 10 }, { 1, LS_STAGE_PREEMPT, 20 },
		{ 1, LS_STAGE_SOFTIRQ_WAIT, 80 + 90 + 100 }, { 0, LS_STAGE_HARDIRQ, 0 } }, 4);
	ls_attr_free(&a);
}

TEST(two_cpus_at_once_count_once)
{
	struct ls_window w[] = { { 0, 1000 } };
	struct ls_record r[] = {
		rec(100, 150, 0, LS_STAGE_SOFTIRQ_RUN),
		rec(120, 170, 1, LS_STAGE_SOFTIRQ_RUN),
	};
	struct ls_attr a;

	ASSERT_EQ(0, run(&a, w, 1, r, 2, LS_ATTR_ALL_STAGES));
	EXPECT_EQ(70, a.kernel_ns[0]);
	EXPECT_EQ(50, ls_attr_cell(&a, 0, LS_STAGE_SOFTIRQ_RUN)->total_ns);
	EXPECT_EQ(20, ls_attr_cell(&a, 1, LS_STAGE_SOFTIRQ_RUN)->total_ns);
	ls_attr_free(&a);
}

TEST(second_host_cpus_offset)
{
	/* the responder's CPU 1 arrives as LS_MAX_CPUS + 1; overlapping time counts once */
	struct ls_window w[] = { { 0, 1000 } };
	struct ls_attr_cfg cfg = { .win = w, .n = 1, .stage_mask = LS_ATTR_ALL_STAGES };
	struct ls_record r[] = {
		rec(100, 200, 0, LS_STAGE_SOFTIRQ_RUN),
		rec(150, 400, LS_MAX_CPUS + 1, LS_STAGE_PREEMPT),
		rec(500, 600, LS_MAX_CPUS + 2, LS_STAGE_HARDIRQ),	/* not relevant */
	};
	struct ls_attr a;
	struct ls_err e;

	cfg.cpumask[0] = 1;
	cfg.cpumask[(LS_MAX_CPUS + 1) / 64] |= 1ull << ((LS_MAX_CPUS + 1) % 64);
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, ls_attr_push(&a, &r[i], &e));
	ls_attr_finish(&a);
	EXPECT_EQ(300, a.kernel_ns[0]);
	EXPECT_EQ(100, ls_attr_cell(&a, 0, LS_STAGE_SOFTIRQ_RUN)->total_ns);
	EXPECT_EQ(200, ls_attr_cell(&a, LS_MAX_CPUS + 1, LS_STAGE_PREEMPT)->total_ns);
	EXPECT_EQ(1, a.ignored);
	ls_attr_free(&a);
}

TEST(per_window_figures_by_host_and_stage)
{
	/* two windows; each one's (host, stage) figures add up to its union */
	struct ls_window w[] = { { 0, 1000 }, { 2000, 3000 } };
	struct ls_attr_cfg cfg = { .win = w, .n = 2, .stage_mask = LS_ATTR_ALL_STAGES,
				   .per_window = true };
	struct ls_record r[] = {
		rec(100, 200, 0, LS_STAGE_SOFTIRQ_RUN),
		rec(120, 130, 1, LS_STAGE_HARDIRQ),		/* inside: hardirq wins */
		rec(150, 400, LS_MAX_CPUS + 1, LS_STAGE_PREEMPT),
		rec(900, 2100, LS_MAX_CPUS + 0, LS_STAGE_NAPI_POLL),	/* spans both */
	};
	struct ls_attr a;
	struct ls_err e;
	uint64_t sum[2] = { 0, 0 };

	cfg.cpumask[0] = 3;
	cfg.cpumask[LS_MAX_CPUS / 64] |= 3ull << (LS_MAX_CPUS % 64);
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, ls_attr_push(&a, &r[i], &e));
	ls_attr_finish(&a);
	EXPECT_EQ(90, ls_attr_win_stage(&a, 0, 0, LS_STAGE_SOFTIRQ_RUN));
	EXPECT_EQ(10, ls_attr_win_stage(&a, 0, 0, LS_STAGE_HARDIRQ));
	EXPECT_EQ(200, ls_attr_win_stage(&a, 0, 1, LS_STAGE_PREEMPT));
	EXPECT_EQ(100, ls_attr_win_stage(&a, 0, 1, LS_STAGE_NAPI_POLL));
	EXPECT_EQ(100, ls_attr_win_stage(&a, 1, 1, LS_STAGE_NAPI_POLL));
	EXPECT_EQ(0, ls_attr_win_stage(&a, 1, 0, LS_STAGE_SOFTIRQ_RUN));
	EXPECT_EQ(0, ls_attr_win_stage(&a, 2, 0, LS_STAGE_HARDIRQ));	/* no window 2 */
	for (size_t i = 0; i < 2; i++)
		for (unsigned int h = 0; h < LS_ATTR_HOSTS; h++)
			for (unsigned int st = 0; st < LS_NR_STAGES; st++)
				sum[i] += ls_attr_win_stage(&a, i, h, st);
	EXPECT_EQ(a.kernel_ns[0], sum[0]);
	EXPECT_EQ(a.kernel_ns[1], sum[1]);
	EXPECT_EQ(400, a.kernel_ns[0]);
	ls_attr_free(&a);
}

TEST(out_of_order_records_rejected)
{
	struct ls_window w[] = { { 0, 1000 } };
	struct ls_attr_cfg cfg = { .win = w, .n = 1, .stage_mask = LS_ATTR_ALL_STAGES };
	struct ls_record r1 = rec(500, 600, 0, 0), r2 = rec(400, 450, 0, 0);
	struct ls_attr a;
	struct ls_err e;

	cfg.cpumask[0] = 1;
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	EXPECT_EQ(0, ls_attr_push(&a, &r1, &e));
	EXPECT_EQ(-1, ls_attr_push(&a, &r2, &e));
	ls_attr_free(&a);
}

TEST(random_against_brute_force)
{
	/* union per window checked against a 1-ns bitmap */
	enum { NW = 50, NR = 400, SPAN = 20000 };
	struct ls_window w[NW];
	struct ls_record *r = calloc(NR, sizeof(*r));
	static unsigned char busy[SPAN];
	struct ls_attr a;
	uint64_t t = 0;

	srand(7);
	for (int i = 0; i < NW; i++) {
		t += rand() % 200;
		w[i].start_ns = t;
		w[i].end_ns = t + 50 + rand() % 300;
	}
	for (int i = 0; i < NR; i++) {
		uint64_t s = rand() % (SPAN - 400);

		r[i] = rec(s, s + 1 + rand() % 300, rand() % 3, rand() % LS_NR_STAGES);
		if (r[i].cpu < 2)
			for (uint64_t x = s; x < r[i].end_ns; x++)
				busy[x] = 1;
	}
	ASSERT_EQ(0, run(&a, w, NW, r, NR, LS_ATTR_ALL_STAGES));
	for (int i = 0; i < NW; i++) {
		uint64_t want = 0, got_cells = 0;

		for (uint64_t x = w[i].start_ns; x < w[i].end_ns; x++)
			want += busy[x];
		EXPECT_EQ(want, a.kernel_ns[i]);
		(void)got_cells;
	}
	{
		uint64_t sum_cells = 0, sum_win = 0;

		for (int c = 0; c < LS_MAX_CPUS; c++)
			for (int s = 0; s < LS_NR_STAGES; s++)
				sum_cells += ls_attr_cell(&a, c, s)->total_ns;
		for (int i = 0; i < NW; i++)
			sum_win += a.kernel_ns[i];
		EXPECT_EQ(sum_win, sum_cells);	/* exclusive: cells add up to the unions */
	}
	ls_attr_free(&a);
	free(r);
}

/* Parts of sample i add up to its total and none is negative. */
static int consistent(const struct ls_split_out *o, const double *total)
{
	for (size_t i = 0; i < o->n; i++) {
		double s = 0;

		for (int p = 0; p < LS_NR_PARTS; p++) {
			if (o->part[p][i] < 0)
				return 0;
			s += o->part[p][i];
		}
		if (fabs(s - total[i]) > 1e-6)
			return 0;
	}
	return 1;
}

TEST(base_floor_and_queuing)
{
	double total[100], kern[100];
	struct ls_split_in in = { .n = 100, .total_ns = total, .kernel_ns = kern,
				  .transmission_ns = 100, .floor_q = 0, .tail_frac = 0.01 };
	struct ls_split_out o;
	struct ls_err e;

	for (int i = 0; i < 100; i++) {
		total[i] = 1000 + i;
		kern[i] = i % 2 ? 0 : 0;
	}
	kern[50] = 30;
	ASSERT_EQ(0, ls_split_compute(&in, &o, &e));
	/* residual = 900 + i (sample 50: 920): floor at the minimum = 900 */
	EXPECT_TRUE(o.floor_inferred);
	EXPECT_TRUE(NEAR(o.floor_ns, 900));
	EXPECT_TRUE(NEAR(o.residual_p50_ns, 948));	/* 50th of 900..999 with 950 replaced by 920 */
	EXPECT_TRUE(NEAR(o.part[LS_PART_QUEUING][10], 10));
	EXPECT_TRUE(NEAR(o.part[LS_PART_QUEUING][50], 20));
	EXPECT_TRUE(NEAR(o.part[LS_PART_PROCESSING][50], 930));
	EXPECT_TRUE(NEAR(o.part[LS_PART_TRANSMISSION][0], 100));
	EXPECT_TRUE(consistent(&o, total));
	EXPECT_EQ(0, o.clamped);
	/* tail = sample 99 alone: its excess over p50 is queuing only */
	EXPECT_EQ(1, o.tail_n);
	EXPECT_TRUE(NEAR(o.tail_share[LS_PART_QUEUING], 1));
	ls_split_free(&o);
}

TEST(fixed_floor_kernel_over_total_and_tail_mix)
{
	double total[100], kern[100];
	struct ls_split_in in = { .n = 100, .total_ns = total, .kernel_ns = kern,
				  .transmission_ns = 50, .floor_q = 0.05,
				  .fixed_floor = true, .floor_ns = 400, .tail_frac = 0.02 };
	struct ls_split_out o;
	struct ls_err e;
	double s = 0;

	for (int i = 0; i < 100; i++) {
		total[i] = 500;
		kern[i] = 10;
	}
	total[3] = 800;		/* +300 of queuing */
	total[7] = 600;		/* +100 of processing */
	kern[7] = 110;
	total[9] = 200;		/* kernel + floor exceed what is left */
	kern[9] = 300;
	ASSERT_EQ(0, ls_split_compute(&in, &o, &e));
	EXPECT_FALSE(o.floor_inferred);
	EXPECT_TRUE(consistent(&o, total));
	EXPECT_EQ(1, o.clamped);
	EXPECT_TRUE(NEAR(o.part[LS_PART_QUEUING][9], 0));
	EXPECT_TRUE(NEAR(o.part[LS_PART_PROCESSING][9], 150));
	EXPECT_TRUE(NEAR(o.part[LS_PART_QUEUING][0], 40));
	EXPECT_EQ(2, o.tail_n);
	for (int p = 0; p < LS_NR_PARTS; p++)
		s += o.tail_share[p];
	EXPECT_TRUE(NEAR(s, 1));
	EXPECT_TRUE(NEAR(o.tail_share[LS_PART_QUEUING], 0.75));
	EXPECT_TRUE(NEAR(o.tail_share[LS_PART_PROCESSING], 0.25));
	EXPECT_TRUE(NEAR(o.tail_share[LS_PART_TRANSMISSION], 0));
	ls_split_free(&o);
}

TEST(hardware_host_time_replaces_floor)
{
	double total[4] = { 1000, 1100, 1200, 5000 }, kern[4] = { 100, 100, 100, 100 };
	double host[4] = { 700, 700, 900, 700 };
	struct ls_split_in in = { .n = 4, .total_ns = total, .kernel_ns = kern,
				  .host_ns = host, .transmission_ns = 100,
				  .floor_q = 0.05, .tail_frac = 0.25 };
	struct ls_split_out o;
	struct ls_err e;

	ASSERT_EQ(0, ls_split_compute(&in, &o, &e));
	EXPECT_TRUE(o.hw_host);
	EXPECT_FALSE(o.floor_inferred);
	EXPECT_TRUE(NEAR(o.part[LS_PART_PROCESSING][2], 900));
	EXPECT_TRUE(NEAR(o.part[LS_PART_QUEUING][3], 4200));
	EXPECT_TRUE(NEAR(o.kernel[2], 100));
	EXPECT_TRUE(NEAR(o.base[2], 800));
	EXPECT_TRUE(consistent(&o, total));
	ls_split_free(&o);
}

TEST(bad_parameters)
{
	double total[1] = { 1 }, kern[1] = { 0 };
	struct ls_split_in in = { .n = 1, .total_ns = total, .kernel_ns = kern,
				  .transmission_ns = -1, .floor_q = 0.05, .tail_frac = 0.01 };
	struct ls_split_out o;
	struct ls_err e;

	EXPECT_EQ(-1, ls_split_compute(&in, &o, &e));
	in.transmission_ns = 0;
	in.tail_frac = 0;
	EXPECT_EQ(-1, ls_split_compute(&in, &o, &e));
}

TEST_HARNESS_MAIN
