// SPDX-License-Identifier: GPL-2.0
/*
 * The responder -> prober header of `latsplit breakdown`: a round trip keeps
 * what the split needs (measured, CPUs, IRQs, counters), and a peer that
 * speaks another protocol or is not a breakdown responder gets a clear error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/breakdown.h"
#include "../../tools/json.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* Serialize h with the given protocol number. */
static char *write_hdr(const struct ls_bd_host *h, unsigned int proto, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	ls_bd_peer_write(m, h, proto);
	fclose(m);
	return text;
}

TEST(round_trip)
{
	struct ls_bd_host h = { .measured = true, .probe_cpu = 1, .nr_irqs = 2,
				.irqs = { 29, 30 }, .records = 1234, .drops = 5 };
	struct ls_ctr_delta c[2] = {
		{ .name = "hw:rcvd_seq_err", .ok = true, .before = 3, .after = 10 },
		{ .name = "hw:broken", .ok = false, .error = "not a count" },
	};
	struct ls_bd_host g;
	struct ls_err e;
	size_t len;
	char *t;

	strcpy(h.backend, "kmod");
	h.cpumask[0] = 0x3;
	h.ctr.v = c;
	h.ctr.n = 2;
	t = write_hdr(&h, LS_BD_PROTO, &len);
	ASSERT_EQ(0, ls_bd_peer_parse(t, len, &g, &e));
	EXPECT_TRUE(g.measured);
	EXPECT_STREQ("kmod", g.backend);
	EXPECT_EQ(0x3, g.cpumask[0]);
	EXPECT_EQ(1, g.probe_cpu);
	EXPECT_EQ(2, g.nr_irqs);
	EXPECT_EQ(30, g.irqs[1]);
	EXPECT_EQ(1234, g.records);
	EXPECT_EQ(5, g.drops);
	ASSERT_EQ(2, g.ctr.n);
	EXPECT_EQ(7, g.ctr.v[0].delta);
	EXPECT_EQ(LS_CTR_OOS, g.ctr.v[0].cls);
	EXPECT_FALSE(g.ctr.v[1].ok);
	EXPECT_EQ(1, g.ctr.unreadable);
	ls_bd_host_free(&g);
	free(t);
}

TEST(other_protocol_is_a_clear_error)
{
	struct ls_bd_host h = { 0 }, g;
	struct ls_err e;
	size_t len;
	char *t;

	strcpy(h.backend, "none");
	t = write_hdr(&h, LS_BD_PROTO + 1, &len);
	ASSERT_EQ(-1, ls_bd_peer_parse(t, len, &g, &e));
	EXPECT_NE(NULL, strstr(e.msg, "same latsplit version"));
	EXPECT_NE(NULL, strstr(e.msg, "protocol 2"));
	free(t);
	/* a JSON object that is not a breakdown header */
	ASSERT_EQ(-1, ls_bd_peer_parse("{\"schema\":1,\"kind\":\"probe\"}", 27, &g, &e));
	EXPECT_NE(NULL, strstr(e.msg, "breakdown-peer"));
	/* not JSON at all */
	ASSERT_EQ(-1, ls_bd_peer_parse("\x01\x02garbage", 9, &g, &e));
}

TEST_HARNESS_MAIN
