// SPDX-License-Identifier: GPL-2.0
/*
 * The responder -> prober header of `latsplit breakdown`: a round trip keeps
 * what the split needs (measured, CPUs, IRQs, counters), and a peer that
 * speaks another protocol or is not a breakdown responder gets a clear error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "json.h"
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
				.irqs = { 29, 30 }, .records = 1234, .drops = 5,
				.irqs_unwatched = 9, .comp_stale = 3, .napi_untimed = 11,
				.unordered = 2 };
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
	EXPECT_EQ(9, g.irqs_unwatched);
	EXPECT_EQ(3, g.comp_stale);
	EXPECT_EQ(11, g.napi_untimed);
	EXPECT_EQ(2, g.unordered);
	ASSERT_EQ(2, g.ctr.n);
	EXPECT_EQ(7, g.ctr.v[0].delta);
	EXPECT_EQ(LS_CTR_OOS, g.ctr.v[0].cls);
	EXPECT_FALSE(g.ctr.v[1].ok);
	EXPECT_EQ(1, g.ctr.unreadable);
	ls_bd_host_free(&g);
	free(t);
}

TEST(observer_round_trip)
{
	struct ls_bd_host h = { .measured = true }, g;
	struct ls_err e;
	size_t len;
	char *t;

	strcpy(h.backend, "ebpf");
	h.obs.ok = true;
	h.obs.run_ns = 3100000000ull;
	h.obs.hits = 123456;
	h.obs.ns = 24500000;
	h.obs.all_hits = 200000;
	h.obs.all_ns = 40000000;
	h.obs.h_hits[LS_H_SCHED_SWITCH] = 1000;
	h.obs.h_ns[LS_H_SCHED_SWITCH] = 987654;
	h.obs.h_hits[LS_H_RX_SKB] = 7;
	h.obs.h_ns[LS_H_RX_SKB] = 700;
	h.obs.drain_ok = true;
	h.obs.drain_cpu_ns = 16000000;
	t = write_hdr(&h, LS_BD_PROTO, &len);
	ASSERT_EQ(0, ls_bd_peer_parse(t, len, &g, &e));
	EXPECT_TRUE(g.obs.ok);
	EXPECT_EQ(3100000000ull, g.obs.run_ns);
	EXPECT_EQ(123456, g.obs.hits);
	EXPECT_EQ(24500000, g.obs.ns);
	EXPECT_EQ(200000, g.obs.all_hits);
	EXPECT_EQ(40000000, g.obs.all_ns);
	EXPECT_EQ(1000, g.obs.h_hits[LS_H_SCHED_SWITCH]);
	EXPECT_EQ(987654, g.obs.h_ns[LS_H_SCHED_SWITCH]);
	EXPECT_EQ(7, g.obs.h_hits[LS_H_RX_SKB]);
	EXPECT_EQ(0, g.obs.h_hits[LS_H_IRQ_ENTRY]);
	EXPECT_TRUE(g.obs.drain_ok);
	EXPECT_EQ(16000000, g.obs.drain_cpu_ns);
	ls_bd_host_free(&g);
	free(t);

	/* not measured: the reason crosses, no figures do */
	memset(&h.obs, 0, sizeof(h.obs));
	strcpy(h.obs.why, "backend kmod cannot report its cost");
	t = write_hdr(&h, LS_BD_PROTO, &len);
	ASSERT_EQ(0, ls_bd_peer_parse(t, len, &g, &e));
	EXPECT_FALSE(g.obs.ok);
	EXPECT_STREQ("backend kmod cannot report its cost", g.obs.why);
	EXPECT_EQ(0, g.obs.ns);
	ls_bd_host_free(&g);
	free(t);

	/* an older responder without the member: not measured, said so */
	{
		char old[256];

		snprintf(old, sizeof(old), "{\"schema\":%d,\"kind\":\"breakdown-peer\",\"proto\":%d,"
			 "\"measured\":false,\"backend\":\"none\",\"why\":\"x\","
			 "\"cpus\":\"0\",\"probe_cpu\":0}", LS_JSON_SCHEMA, LS_BD_PROTO);
		ASSERT_EQ(0, ls_bd_peer_parse(old, strlen(old), &g, &e));
	}
	EXPECT_FALSE(g.obs.ok);
	EXPECT_NE(NULL, strstr(g.obs.why, "no observer figures"));
	ls_bd_host_free(&g);
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
	EXPECT_EQ(LS_E_PEER_PROTO, e.code);
	/* another protocol is exit 2 even after samples were taken */
	EXPECT_EQ(LS_EXIT_USAGE, ls_exit_status(&e, true));
	free(t);
	/* a JSON object that is not a breakdown header */
	ASSERT_EQ(-1, ls_bd_peer_parse("{\"schema\":1,\"kind\":\"probe\"}", 27, &g, &e));
	EXPECT_NE(NULL, strstr(e.msg, "breakdown-peer"));
	EXPECT_EQ(LS_E_PEER_PROTO, e.code);
	/* not JSON at all */
	ASSERT_EQ(-1, ls_bd_peer_parse("\x01\x02garbage", 9, &g, &e));
	EXPECT_NE(LS_E_PEER_PROTO, e.code);
}

/* A header with the required members, then extra (JSON members with a comma). */
static int parse_extra(const char *extra, struct ls_bd_host *g, struct ls_err *e)
{
	char t[2048];

	snprintf(t, sizeof(t), "{\"schema\":%d,\"kind\":\"breakdown-peer\",\"proto\":%d,"
		 "\"measured\":true,\"backend\":\"kmod\",\"why\":\"\",\"cpus\":\"0\"%s%s}",
		 LS_JSON_SCHEMA, LS_BD_PROTO, strstr(extra, "probe_cpu") ? "" : ",\"probe_cpu\":0",
		 extra);
	return ls_bd_peer_parse(t, strlen(t), g, e);
}

/* True when s holds only printable ASCII. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

TEST(hostile_peer_numbers_are_refused)
{
	static const char *const bad[] = {
		",\"probe_cpu\":1e300", ",\"probe_cpu\":-2", ",\"probe_cpu\":1.5",
		",\"probe_cpu\":256", ",\"irqs\":[29,-1]", ",\"irqs\":[4294967296]",
		",\"records\":1e300", ",\"drops\":-1", ",\"records\":0.5",
		",\"link_gbps\":-1", ",\"link_gbps\":1e309", ",\"irqs_unwatched\":-3",
		",\"completions_stale\":-1", ",\"napi_untimed\":1e300", ",\"unordered\":0.5",
		",\"counters\":[{\"name\":\"hw:x\",\"ok\":true,\"before\":-5,\"after\":3}]",
		",\"counters\":[{\"name\":\"hw:x\",\"ok\":true,\"before\":1,\"after\":1e20}]",
	};
	struct ls_bd_host g;
	struct ls_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = '\0';
		EXPECT_EQ(-1, parse_extra(bad[i], &g, &e)) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(NULL, strstr(e.msg, "responder header")) TH_LOG("%s: %s", bad[i], e.msg);
		EXPECT_EQ(NULL, g.ctr.v);
	}
	/* the edges that are fine */
	ASSERT_EQ(0, parse_extra(",\"probe_cpu\":-1,\"irqs\":[0,4294967295],\"records\":0", &g, &e));
	EXPECT_EQ(-1, g.probe_cpu);
	EXPECT_EQ(4294967295u, g.irqs[1]);
	ls_bd_host_free(&g);
}

TEST(hostile_peer_strings_are_made_printable)
{
	struct ls_bd_host g;
	struct ls_err e;

	ASSERT_EQ(0, parse_extra(",\"netdev\":\"eth\\u001b[2J0\",\"ibdev\":\"rxe\\u0007\","
				 "\"rate\":\"\\u009b31m\",\"counters\":[{\"name\":\"hw:\\u001b]0;x\","
				 "\"ok\":false,\"error\":\"bad\\r\\n\"}]", &g, &e));
	EXPECT_STREQ("eth?[2J0", g.netdev);
	EXPECT_STREQ("rxe?", g.ibdev);
	EXPECT_TRUE(printable(g.rate));
	ASSERT_EQ(1, g.ctr.n);
	EXPECT_STREQ("hw:?]0;x", g.ctr.v[0].name);
	EXPECT_STREQ("bad??", g.ctr.v[0].error);
	ls_bd_host_free(&g);
}

TEST_HARNESS_MAIN
