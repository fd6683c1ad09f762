// SPDX-License-Identifier: GPL-2.0
/*
 * The names of the ABI's numbers and the histogram slot decoding: every
 * slot range maps to its stage and id (the watched IRQ, or the softirq
 * vector), IRQ slots past the watched IRQs are not meaningful, and names
 * out of range are safe.
 */
#include "names.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

TEST(slots_decode_to_stage_and_id)
{
	static const uint32_t irqs[2] = { 36, 37 };
	uint32_t id;
	bool has_id;

	EXPECT_EQ(LS_STAGE_HARDIRQ, ls_slot_stage(LS_SLOT_HARDIRQ + 1, irqs, 2, &id, &has_id));
	EXPECT_TRUE(has_id);
	EXPECT_EQ(37, id);
	EXPECT_EQ(LS_STAGE_COMPLETION, ls_slot_stage(LS_SLOT_COMPLETION, irqs, 2, &id, &has_id));
	EXPECT_EQ(36, id);
	EXPECT_EQ(LS_STAGE_IRQ_THREAD, ls_slot_stage(LS_SLOT_IRQ_THREAD + 1, irqs, 2, &id, &has_id));
	EXPECT_EQ(37, id);
	EXPECT_EQ(LS_STAGE_SOFTIRQ_RUN,
		  ls_slot_stage(LS_SLOT_SOFTIRQ_RUN + LS_SOFTIRQ_NET_RX, irqs, 2, &id, &has_id));
	EXPECT_EQ(LS_SOFTIRQ_NET_RX, id);
	EXPECT_STREQ("NET_RX", ls_softirq_name(id));
	EXPECT_EQ(LS_STAGE_SOFTIRQ_WAIT,
		  ls_slot_stage(LS_SLOT_SOFTIRQ_WAIT + LS_SOFTIRQ_NET_TX, irqs, 2, &id, &has_id));
	EXPECT_EQ(LS_SOFTIRQ_NET_TX, id);
	EXPECT_EQ(LS_STAGE_NAPI_POLL, ls_slot_stage(LS_SLOT_NAPI_POLL, irqs, 2, &id, &has_id));
	EXPECT_FALSE(has_id);
	EXPECT_EQ(LS_STAGE_WAKEUP, ls_slot_stage(LS_SLOT_WAKEUP, irqs, 2, &id, &has_id));
	EXPECT_EQ(LS_STAGE_INTERFERENCE, ls_slot_stage(LS_SLOT_INTERFERENCE, irqs, 2, &id, &has_id));
}

TEST(irq_slots_past_the_watched_irqs_are_not_valid)
{
	EXPECT_TRUE(ls_slot_valid(LS_SLOT_HARDIRQ + 1, 2));
	EXPECT_FALSE(ls_slot_valid(LS_SLOT_HARDIRQ + 2, 2));
	EXPECT_FALSE(ls_slot_valid(LS_SLOT_COMPLETION + 5, 2));
	EXPECT_TRUE(ls_slot_valid(LS_SLOT_SOFTIRQ_RUN + LS_SOFTIRQ_RCU, 0));
}

TEST(names_in_and_out_of_range)
{
	EXPECT_STREQ("hardirq", ls_stage_name(LS_STAGE_HARDIRQ));
	EXPECT_STREQ("send", ls_stage_name(LS_STAGE_SEND));
	EXPECT_STREQ("unknown", ls_stage_name(LS_NR_STAGES));
	EXPECT_STREQ("RCU", ls_softirq_name(LS_SOFTIRQ_RCU));
	EXPECT_STREQ("?", ls_softirq_name(LS_NR_SOFTIRQS));
	EXPECT_NE(NULL, ls_handler_name(0));
	EXPECT_EQ(NULL, ls_handler_name(LS_NR_HANDLERS));
}

TEST(twinned_records_split_into_their_interference)
{
	struct ls_record r = { .start_ns = 10, .end_ns = 25, .cpu = 1,
			       .stage = LS_STAGE_HARDIRQ, .id = 36, .aux = 0,
			       .flags = LS_REC_F_INTF | LS_REC_F_RT_THREAD };
	struct ls_record t = { 0 };

	ASSERT_EQ(2, ls_record_untwin(&r, &t));
	EXPECT_EQ(LS_STAGE_HARDIRQ, r.stage);
	EXPECT_EQ(LS_REC_F_RT_THREAD, r.flags);
	EXPECT_EQ(LS_STAGE_INTERFERENCE, t.stage);
	EXPECT_EQ(36, t.id);
	EXPECT_EQ(LS_REC_F_RT_THREAD, t.flags);
	EXPECT_EQ(10, t.start_ns);
	EXPECT_EQ(25, t.end_ns);
	EXPECT_EQ(1, t.cpu);

	r = (struct ls_record){ .start_ns = 5, .end_ns = 9, .stage = LS_STAGE_SOFTIRQ_RUN,
				.id = LS_SOFTIRQ_NET_RX, .aux = 2,
				.flags = LS_REC_F_INTF | LS_REC_F_NESTED };
	ASSERT_EQ(2, ls_record_untwin(&r, &t));
	EXPECT_EQ(LS_ID_SOFTIRQ_BASE + LS_SOFTIRQ_NET_RX, t.id);
	EXPECT_EQ(2, t.aux);
	EXPECT_EQ(LS_REC_F_NESTED, t.flags);
	EXPECT_EQ(LS_SOFTIRQ_NET_RX, r.id);
	EXPECT_EQ(LS_REC_F_NESTED, r.flags);

	/* no flag, or the flag on a stage that has no twin: one record */
	r = (struct ls_record){ .stage = LS_STAGE_HARDIRQ, .id = 36 };
	EXPECT_EQ(1, ls_record_untwin(&r, &t));
	r = (struct ls_record){ .stage = LS_STAGE_NAPI_POLL, .flags = LS_REC_F_INTF };
	EXPECT_EQ(1, ls_record_untwin(&r, &t));
	EXPECT_EQ(0, r.flags);
}

TEST_HARNESS_MAIN
