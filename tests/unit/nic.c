// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC's IRQ list: past the backends' limit of LS_MAX_IRQS the
 * lowest-numbered IRQs are kept whatever order they are found in, and
 * every other one is counted as unwatched, never dropped unsaid.
 */
#include <stdio.h>
#include <string.h>

#include "nic.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* Offer IRQs base..base+n-1 to nic in a scrambled order (a stride coprime to n). */
static void offer(struct ls_nic *nic, uint32_t base, unsigned int n, unsigned int stride)
{
	char name[32];

	for (unsigned int k = 0; k < n; k++) {
		uint32_t irq = base + (k * stride) % n;

		snprintf(name, sizeof(name), "q%u", irq - base);
		ls_nic_add_irq(nic, irq, name);
	}
}

TEST(under_the_limit_all_watched)
{
	struct ls_nic nic = { 0 };

	offer(&nic, 24, 3, 1);
	ls_nic_add_irq(&nic, 25, "again");	/* once only */
	EXPECT_EQ(3, nic.nr_irqs);
	EXPECT_EQ(0, nic.nr_unwatched);
	EXPECT_STREQ("q1", nic.irq_names[1]);
}

TEST(over_the_limit_lowest_kept_rest_counted)
{
	static const unsigned int sizes[] = { LS_MAX_IRQS, LS_MAX_IRQS + 1, 42, 130 };

	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		unsigned int n = sizes[t];
		struct ls_nic nic = { 0 };
		bool seen[LS_MAX_IRQS] = { false };

		offer(&nic, 100, n, 17);
		ASSERT_EQ(LS_MAX_IRQS, nic.nr_irqs) TH_LOG("%u IRQs", n);
		EXPECT_EQ(n - LS_MAX_IRQS, nic.nr_unwatched) TH_LOG("%u IRQs", n);
		for (unsigned int i = 0; i < nic.nr_irqs; i++) {
			char want[32];
			uint32_t q = nic.irqs[i] - 100;

			ASSERT_LT(q, LS_MAX_IRQS) TH_LOG("%u IRQs: kept IRQ %u", n, nic.irqs[i]);
			EXPECT_FALSE(seen[q]);
			seen[q] = true;
			snprintf(want, sizeof(want), "q%u", q);
			EXPECT_STREQ(want, nic.irq_names[i]);	/* the name follows its IRQ */
		}
		/* offering them all again (a second source) changes nothing */
		offer(&nic, 100, n, 1);
		EXPECT_EQ(LS_MAX_IRQS, nic.nr_irqs);
		EXPECT_EQ(n - LS_MAX_IRQS, nic.nr_unwatched) TH_LOG("%u IRQs offered twice", n);
	}
}

TEST_HARNESS_MAIN
