// SPDX-License-Identifier: GPL-2.0
/*
 * The observer's readings (tools/backend.c): ls_obs_diff() of two readings
 * cell by cell, ls_obs_sum() over a CPU mask, the errors for a counter that
 * went backwards and for a CPU count that changed, readings without a
 * per-CPU split (all_cpus, the eBPF backend's), and the handler names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* A reading of nr_cpus CPUs whose cell (c, h) is {base + 100c + h, 10x that}. */
static void reading(struct ls_obs *o, unsigned int nr_cpus, uint64_t base)
{
	memset(o, 0, sizeof(*o));
	o->nr_cpus = nr_cpus;
	o->all_cpus = false;
	o->cell = calloc((size_t)nr_cpus * LS_NR_HANDLERS, sizeof(*o->cell));
	for (unsigned int c = 0; c < nr_cpus && o->cell; c++)
		for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
			struct ls_obs_cell *x = &o->cell[(size_t)c * LS_NR_HANDLERS + h];

			x->hits = base + 100 * c + h;
			x->ns = 10 * x->hits;
		}
}

/* Readings a of na CPUs and b of nb, both from base; the test stops if one failed. */
static void readings(struct __test_metadata *_metadata, struct ls_obs *a, unsigned int na,
		     struct ls_obs *b, unsigned int nb, uint64_t base)
{
	reading(a, na, base);
	reading(b, nb, base);
	ASSERT_NE(NULL, a->cell);
	ASSERT_NE(NULL, b->cell);
}

/* ls_obs_diff(a, b) fails saying want, and leaves no difference behind. */
static void expect_diff_error(struct __test_metadata *_metadata, const struct ls_obs *a,
			      const struct ls_obs *b, const char *want)
{
	struct ls_obs d = { 0 };
	struct ls_err e = { 0 };

	EXPECT_EQ(-1, ls_obs_diff(a, b, &d, &e));
	EXPECT_EQ(NULL, d.cell);
	EXPECT_EQ(0, d.nr_cpus);
	EXPECT_NE(NULL, strstr(e.msg, want)) TH_LOG("%s", e.msg);
}

/* after - before, per cell, in place: CPU and handler stay where they were. */
TEST(diff_of_two_readings)
{
	struct ls_obs a, b, d = { 0 };
	struct ls_err e = { 0 };

	readings(_metadata, &a, 3, &b, 3, 1000);
	/* CPU 1 ran softirq_entry 7 more times for 700 ns; CPU 2 napi_poll once. */
	b.cell[1 * LS_NR_HANDLERS + LS_H_SOFTIRQ_ENTRY].hits += 7;
	b.cell[1 * LS_NR_HANDLERS + LS_H_SOFTIRQ_ENTRY].ns += 700;
	b.cell[2 * LS_NR_HANDLERS + LS_H_NAPI_POLL].hits += 1;
	b.cell[2 * LS_NR_HANDLERS + LS_H_NAPI_POLL].ns += 55;
	ASSERT_EQ(0, ls_obs_diff(&a, &b, &d, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(3, d.nr_cpus);
	for (unsigned int c = 0; c < 3; c++)
		for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
			const struct ls_obs_cell *x = &d.cell[c * LS_NR_HANDLERS + h];
			uint64_t hits = 0, ns = 0;

			if (c == 1 && h == LS_H_SOFTIRQ_ENTRY)
				hits = 7, ns = 700;
			if (c == 2 && h == LS_H_NAPI_POLL)
				hits = 1, ns = 55;
			EXPECT_EQ(hits, x->hits) TH_LOG("cpu %u handler %u", c, h);
			EXPECT_EQ(ns, x->ns) TH_LOG("cpu %u handler %u", c, h);
		}
	/* A reading against itself: all zero. */
	ls_obs_free(&d);
	ASSERT_EQ(0, ls_obs_diff(&b, &b, &d, &e));
	EXPECT_EQ(0, ls_obs_sum(&d, NULL).hits);
	EXPECT_EQ(0, ls_obs_sum(&d, NULL).ns);
	ls_obs_free(&d);
	EXPECT_EQ(NULL, d.cell);
	EXPECT_EQ(0, d.nr_cpus);
	ls_obs_free(&a);
	ls_obs_free(&b);
	ls_obs_free(NULL);
}

/* The sum over a mask takes exactly the CPUs in it, every handler of each. */
TEST(sum_over_a_cpu_mask)
{
	static const uint64_t in_mask[] = { 1, 64, 255 };
	uint64_t mask[LS_CPUMASK_WORDS] = { 0 };
	struct ls_obs o;
	struct ls_obs_cell s;
	uint64_t want;

	reading(&o, 300, 0);	/* more CPUs than a mask can name */
	ASSERT_NE(NULL, o.cell);
	/* Every CPU: sum over c < 300 and h < LS_NR_HANDLERS of 100c + h. */
	want = 100ull * (299 * 300 / 2) * LS_NR_HANDLERS +
	       300ull * (LS_NR_HANDLERS * (LS_NR_HANDLERS - 1) / 2);
	s = ls_obs_sum(&o, NULL);
	EXPECT_EQ(want, s.hits);
	EXPECT_EQ(10 * want, s.ns);
	/* An empty mask: nothing. */
	s = ls_obs_sum(&o, mask);
	EXPECT_EQ(0, s.hits);
	EXPECT_EQ(0, s.ns);
	/* CPUs 1, 64 and 255 (three mask words): H x 100c + H(H-1)/2 each. */
	mask[0] = 1ull << 1;
	mask[1] = 1ull << 0;
	mask[3] = 1ull << 63;
	want = 0;
	for (size_t i = 0; i < ARRAY_SIZE(in_mask); i++)
		want += 100 * in_mask[i] * LS_NR_HANDLERS +
			LS_NR_HANDLERS * (LS_NR_HANDLERS - 1) / 2;
	s = ls_obs_sum(&o, mask);
	EXPECT_EQ(want, s.hits);
	EXPECT_EQ(10 * want, s.ns);
	/* CPUs at or beyond LS_MAX_CPUS are never in a mask. */
	memset(mask, 0xff, sizeof(mask));
	want = 100ull * (255 * 256 / 2) * LS_NR_HANDLERS +
	       256ull * (LS_NR_HANDLERS * (LS_NR_HANDLERS - 1) / 2);
	s = ls_obs_sum(&o, mask);
	EXPECT_EQ(want, s.hits);
	ls_obs_free(&o);
}

/* A cell that went backwards (a reset between readings) is an error naming it. */
TEST(counter_going_backwards_is_an_error)
{
	struct ls_obs a, b, d = { 0 };
	struct ls_err e = { 0 };

	readings(_metadata, &a, 2, &b, 2, 50);
	b.cell[1 * LS_NR_HANDLERS + LS_H_SCHED_SWITCH].hits -= 1;
	expect_diff_error(_metadata, &a, &b, "CPU 1 handler sched_switch went backwards");
	/* ns alone going back is as wrong. */
	b.cell[1 * LS_NR_HANDLERS + LS_H_SCHED_SWITCH].hits += 1;
	b.cell[0 * LS_NR_HANDLERS + LS_H_COMP_RET].ns -= 1;
	expect_diff_error(_metadata, &a, &b, "CPU 0 handler comp_handler_return");
	b.cell[0 * LS_NR_HANDLERS + LS_H_COMP_RET].ns += 1;
	/* So is a count of runs the kernel skipped. */
	a.missed[LS_H_NAPI_POLL] = 3;
	b.missed[LS_H_NAPI_POLL] = 2;
	expect_diff_error(_metadata, &a, &b, "handler napi_poll skipped-run count went backwards");
	/* Restored: no error, and the skipped runs are the difference. */
	b.missed[LS_H_NAPI_POLL] = 7;
	EXPECT_EQ(0, ls_obs_diff(&a, &b, &d, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(4, d.missed[LS_H_NAPI_POLL]);
	ls_obs_free(&d);
	ls_obs_free(&a);
	ls_obs_free(&b);
}

/* Readings of different CPU counts do not belong to one session. */
TEST(cpu_count_mismatch_is_an_error)
{
	struct ls_obs a, b;

	readings(_metadata, &a, 2, &b, 4, 0);
	expect_diff_error(_metadata, &a, &b, "CPU count changed between readings (2, then 4)");
	ls_obs_free(&a);
	ls_obs_free(&b);
}

/*
 * A reading without a per-CPU split (one row, every CPU's): the difference
 * keeps that, a CPU mask cannot select from it (the sum is the row's), and
 * it never pairs with a split reading.
 */
TEST(all_cpus_reading)
{
	struct ls_obs a, b, d = { 0 }, split;
	struct ls_err e = { 0 };
	uint64_t mask[LS_CPUMASK_WORDS] = { 0x2 };	/* CPU 1 only */
	struct ls_obs_cell s;

	readings(_metadata, &a, 1, &b, 1, 100);
	reading(&split, 1, 100);
	ASSERT_NE(NULL, split.cell);
	a.all_cpus = b.all_cpus = true;
	b.cell[LS_H_NAPI_POLL].hits += 5;
	b.cell[LS_H_NAPI_POLL].ns += 900;
	ASSERT_EQ(0, ls_obs_diff(&a, &b, &d, &e)) TH_LOG("%s", e.msg);
	EXPECT_TRUE(d.all_cpus);
	EXPECT_EQ(1, d.nr_cpus);
	s = ls_obs_sum(&d, mask);
	EXPECT_EQ(5, s.hits);
	EXPECT_EQ(900, s.ns);
	ls_obs_free(&d);
	/* the split reading's CPU 0 is outside the mask: nothing */
	s = ls_obs_sum(&split, mask);
	EXPECT_EQ(0, s.hits);
	expect_diff_error(_metadata, &split, &b, "one reading is split by CPU, the other is not");
	ls_obs_free(&a);
	ls_obs_free(&b);
	ls_obs_free(&split);
}

/* Every handler has a distinct name; out of range has none. */
TEST(handler_names)
{
	ASSERT_EQ(13, LS_NR_HANDLERS);
	EXPECT_STREQ("irq_handler_entry", ls_handler_name(LS_H_IRQ_ENTRY));
	EXPECT_STREQ("net_dev_start_xmit", ls_handler_name(LS_H_TX_SKB));
	EXPECT_STREQ("softirq_entry", ls_handler_name(LS_H_SOFTIRQ_ENTRY));
	EXPECT_STREQ("comp_handler_return", ls_handler_name(LS_H_COMP_RET));
	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		ASSERT_NE(NULL, ls_handler_name(h)) TH_LOG("handler %u", h);
		for (unsigned int k = 0; k < h; k++)
			EXPECT_STRNE(ls_handler_name(k), ls_handler_name(h));
	}
	EXPECT_EQ(NULL, ls_handler_name(LS_NR_HANDLERS));
	EXPECT_EQ(NULL, ls_handler_name(~0u));
}

TEST_HARNESS_MAIN
