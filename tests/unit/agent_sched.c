// SPDX-License-Identifier: GPL-2.0
/*
 * tools/core/agent_sched.c: the agent's slot schedule. For every fleet size
 * and slot, both schedules give every node one target such that no two
 * nodes pick the same target and none picks itself, and over a round
 * (n - 1 slots) each node picks each other node exactly once; the random
 * schedule depends on its seed and changes the order between rounds.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_sched.h"

#include "kselftest_harness.h"

/* Check one slot of n nodes: targets form a permutation without a fixed point. */
static int slot_ok(enum ls_sched_kind k, uint64_t seed, size_t n, uint64_t slot, long *t)
{
	char *hit = calloc(n, 1);
	int ok = 1;

	for (size_t i = 0; i < n; i++) {
		t[i] = ls_sched_target(k, seed, i, n, slot);
		if (t[i] < 0 || (size_t)t[i] >= n || (size_t)t[i] == i || hit[t[i]])
			ok = 0;
		else
			hit[t[i]] = 1;
	}
	free(hit);
	return ok;
}

TEST(no_collision_no_self)
{
	long t[64];

	for (int k = 0; k < 2; k++) {
		for (size_t n = 2; n <= 64; n++) {
			for (uint64_t slot = 0; slot < 3 * n + 5; slot++) {
				int ok = slot_ok(k, 7, n, slot + 1000003, t);

				if (!ok)
					TH_LOG("kind %d n %zu slot %llu", k, n,
					       (unsigned long long)slot);
				ASSERT_TRUE(ok);
			}
		}
	}
}

TEST(each_peer_once_per_round)
{
	for (int k = 0; k < 2; k++)
		for (size_t n = 2; n <= 40; n++)
			for (uint64_t round = 0; round < 4; round++)
				for (size_t i = 0; i < n; i++) {
					char seen[40] = { 0 };

					for (uint64_t s = 0; s < n - 1; s++) {
						long t = ls_sched_target(k, 3, i, n,
									 round * (n - 1) + s);

						ASSERT_EQ(0, seen[t]);
						seen[t] = 1;
					}
					ASSERT_EQ(0, seen[i]);
				}
}

TEST(round_robin_order)
{
	/* node 2 of 5: 3, 4, 0, 1, then again */
	static const long want[] = { 3, 4, 0, 1, 3, 4 };

	for (uint64_t s = 0; s < 6; s++)
		EXPECT_EQ(want[s], ls_sched_target(LS_SCHED_RR, 0, 2, 5, s));
}

TEST(random_order_varies_and_follows_seed)
{
	size_t n = 9, diff_rounds = 0, diff_seed = 0;

	for (uint64_t r = 0; r < 32; r++) {
		long a = ls_sched_target(LS_SCHED_RANDOM, 1, 0, n, r * (n - 1));
		long b = ls_sched_target(LS_SCHED_RANDOM, 1, 0, n, (r + 1) * (n - 1));
		long c = ls_sched_target(LS_SCHED_RANDOM, 2, 0, n, r * (n - 1));

		diff_rounds += a != b;
		diff_seed += a != c;
		/* the same seed gives the same target on every call (every node) */
		EXPECT_EQ(a, ls_sched_target(LS_SCHED_RANDOM, 1, 0, n, r * (n - 1)));
	}
	/* 8 possible starts: a fixed order would give 0 */
	EXPECT_GE(diff_rounds, 16);
	EXPECT_GE(diff_seed, 16);
}

TEST(degenerate)
{
	EXPECT_EQ(-1, ls_sched_target(LS_SCHED_RR, 0, 0, 1, 0));
	EXPECT_EQ(-1, ls_sched_target(LS_SCHED_RR, 0, 0, 0, 0));
	EXPECT_EQ(-1, ls_sched_target(LS_SCHED_RANDOM, 0, 3, 3, 0));
	EXPECT_EQ(1, ls_sched_target(LS_SCHED_RR, 0, 0, 2, 12345));
	EXPECT_EQ(0, ls_sched_target(LS_SCHED_RANDOM, 9, 1, 2, 777));
}

TEST(stale_after)
{
	/* 4 nodes: a round is 3 slots of 5 s; 3 rounds and a 60 s session */
	EXPECT_EQ(3 * 3 * 5 + 60, ls_sched_stale_after(4, 5000000000ull, 3, 60000000000ull));
	/* breakdowns every 2 rounds: 6 rounds */
	EXPECT_EQ(6 * 1 * 5 + 60, ls_sched_stale_after(2, 5000000000ull, 6, 60000000000ull));
	/* no other node, or no rounds: never stale */
	EXPECT_EQ(0, ls_sched_stale_after(1, 5000000000ull, 3, 60000000000ull));
	EXPECT_EQ(0, ls_sched_stale_after(4, 5000000000ull, 0, 60000000000ull));
}

TEST_HARNESS_MAIN
