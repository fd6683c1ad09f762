// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the probe engine's pure parts: HW completion timestamp
 * conversion (hca_core_clock is in kHz, the classic trap is to treat it as
 * Hz or MHz), MTU and verb conversions, the one-way divisor (RTT/2 for the
 * ping-pong verbs, the whole READ as ib_read_lat), option validation, and
 * the fixed-size per-sample record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "kselftest_harness.h"

#include "probe.h"

TEST(hca_clock_is_khz)
{
	/* 156.25 MHz (ConnectX-4 class) = 156250 kHz: 156250 ticks are 1 ms. */
	EXPECT_EQ(1000000, ls_probe_hca_ticks_to_ns(156250, 156250));
	/* 1 GHz = 1000000 kHz: one tick per ns. */
	EXPECT_EQ(123456789, ls_probe_hca_ticks_to_ns(123456789, 1000000));
	/* 78.125 MHz: 1 tick = 12.8 ns. */
	EXPECT_EQ(128, ls_probe_hca_ticks_to_ns(10, 78125));
	/* Had the value been read as Hz, 156250 ticks would come out as 1e9 ns. */
	EXPECT_NE(1000000000ull, ls_probe_hca_ticks_to_ns(156250, 156250));
	/* Large tick counts do not overflow (128-bit intermediate): x 6.4 exactly. */
	EXPECT_EQ(1ull << 62, ls_probe_hca_ticks_to_ns(1ull << 62, 1000000));
	EXPECT_EQ(5902958103587056512ull, ls_probe_hca_ticks_to_ns(922337203685477580ull, 156250));
	/* No clock: 0 rather than a division by zero. */
	EXPECT_EQ(0, ls_probe_hca_ticks_to_ns(1000, 0));
}

TEST(mtu_conversions)
{
	static const unsigned int ok[] = { 256, 512, 1024, 2048, 4096 };

	for (unsigned int i = 0; i < 5; i++) {
		int e = ls_probe_mtu_to_ibv(ok[i]);

		EXPECT_EQ((int)i + 1, e);	/* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
		EXPECT_EQ(ok[i], ls_probe_ibv_to_mtu(e));
	}
	EXPECT_EQ(0, ls_probe_mtu_to_ibv(1500));
	EXPECT_EQ(0, ls_probe_mtu_to_ibv(0));
	EXPECT_EQ(0, ls_probe_ibv_to_mtu(0));
	EXPECT_EQ(0, ls_probe_ibv_to_mtu(6));
}

TEST(verbs_and_divisor)
{
	struct ls_err err = { 0 };
	enum ls_probe_verb v;

	ASSERT_EQ(0, ls_probe_parse_verb("send", &v, &err));
	EXPECT_EQ(LS_VERB_SEND, v);
	ASSERT_EQ(0, ls_probe_parse_verb("read", &v, &err));
	EXPECT_EQ(LS_VERB_READ, v);
	EXPECT_EQ(-1, ls_probe_parse_verb("atomic", &v, &err));
	EXPECT_NE(NULL, strstr(err.msg, "atomic"));
	EXPECT_EQ(2, ls_probe_rtt_divisor(LS_VERB_WRITE));
	EXPECT_EQ(2, ls_probe_rtt_divisor(LS_VERB_SEND));
	EXPECT_EQ(1, ls_probe_rtt_divisor(LS_VERB_READ));
	EXPECT_STREQ("write", ls_probe_verb_name(LS_VERB_WRITE));
}

TEST(options_validation)
{
	struct ls_probe_opts o;
	struct ls_err err = { 0 };

	ls_probe_opts_init(&o);
	/* a responder needs a key or --insecure */
	EXPECT_EQ(-1, ls_probe_opts_check(&o, false, &err));
	EXPECT_NE(NULL, strstr(err.msg, "--key FILE"));
	EXPECT_NE(NULL, strstr(err.msg, "--insecure"));
	o.key_file = "/k";
	EXPECT_EQ(0, ls_probe_opts_check(&o, false, &err));
	o.insecure = true;					/* not both */
	EXPECT_EQ(-1, ls_probe_opts_check(&o, false, &err));
	o.key_file = NULL;
	EXPECT_EQ(0, ls_probe_opts_check(&o, false, &err));	/* responder defaults */
	o.bind = "";
	EXPECT_EQ(-1, ls_probe_opts_check(&o, false, &err));
	o.bind = "any";
	EXPECT_EQ(0, ls_probe_opts_check(&o, false, &err));
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));	/* prober needs a peer */
	o.peer = "192.0.2.2";
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));	/* --bind is the responder's */
	EXPECT_NE(NULL, strstr(err.msg, "--bind"));
	o.bind = NULL;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	EXPECT_NE(NULL, strstr(err.msg, "--insecure"));
	o.insecure = false;
	o.key_file = "/k";					/* a prober may have a key */
	EXPECT_EQ(0, ls_probe_opts_check(&o, true, &err));
	o.key_file = NULL;
	EXPECT_EQ(0, ls_probe_opts_check(&o, true, &err));
	o.duration_ns = 1000000000;				/* and iters */
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	o.iters = 0;
	EXPECT_EQ(0, ls_probe_opts_check(&o, true, &err));
	o.mtu = 1500;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	o.mtu = 1024;
	o.rdma_cm = true;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	EXPECT_NE(NULL, strstr(err.msg, "-R"));
	o.mtu = 0;
	o.qp_timeout = 32;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	o.qp_timeout = 20;
	o.sizes[0] = 0;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
	o.sizes[0] = 4;
	o.iters = LS_PROBE_MAX_CAPACITY + 1;
	o.duration_ns = 0;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, true, &err));
}

/* The default bind address of a GID in its textual form, or NULL when refused. */
static const char *gid_bind(const char *gid, char *buf, size_t len)
{
	struct ls_err err = { 0 };
	uint8_t raw[16];

	if (inet_pton(AF_INET6, gid, raw) != 1)
		return "bad test GID";
	if (ls_probe_gid_bind_addr(raw, buf, len, &err))
		return strstr(err.msg, "--bind") ? NULL : "refused without naming --bind";
	return buf;
}

TEST(gid_bind_addr)
{
	char b[64];

	EXPECT_STREQ("192.0.2.2", gid_bind("::ffff:192.0.2.2", b, sizeof(b)));
	EXPECT_STREQ("10.1.2.3", gid_bind("::ffff:10.1.2.3", b, sizeof(b)));
	EXPECT_STREQ("2001:db8::5", gid_bind("2001:db8::5", b, sizeof(b)));
	EXPECT_STREQ("fd00::1", gid_bind("fd00::1", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("fe80::5054:ff:fe12:3456", b, sizeof(b)));	/* link-local */
	EXPECT_EQ(NULL, gid_bind("::", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("::1", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("ff02::1", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("::ffff:0.0.0.0", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("::ffff:127.0.0.1", b, sizeof(b)));
	EXPECT_EQ(NULL, gid_bind("::ffff:224.0.0.1", b, sizeof(b)));
	EXPECT_TRUE(ls_probe_bind_any("any"));
	EXPECT_TRUE(ls_probe_bind_any("0.0.0.0"));
	EXPECT_TRUE(ls_probe_bind_any("::"));
	EXPECT_FALSE(ls_probe_bind_any("192.0.2.2"));
	EXPECT_FALSE(ls_probe_bind_any(NULL));
}

TEST(fixed_size_records)
{
	struct ls_probe_run run = { .capacity = 3 };

	EXPECT_EQ(16, sizeof(struct ls_probe_sample));
	run.samples = calloc(3, sizeof(*run.samples));
	ASSERT_NE(NULL, run.samples);
	ls_probe_record(&run, 100, 250);
	ls_probe_record(&run, 300, 420);
	EXPECT_EQ(2, run.count);
	EXPECT_EQ(100, run.samples[0].start_ns);
	EXPECT_EQ(250, run.samples[0].end_ns);
	EXPECT_EQ(420, run.samples[1].end_ns);
	free(run.samples);
}

/* One GID table entry from its text and sysfs type ("" unreadable). */
static struct ls_probe_gid gid_ent(const char *addr, const char *type)
{
	struct ls_probe_gid g = { .valid = true };

	if (inet_pton(AF_INET6, addr, g.raw) != 1)
		abort();
	snprintf(g.type, sizeof(g.type), "%s", type);
	return g;
}

TEST(gid_choose_auto)
{
	/* rxe after the address is up: v1/v2 link-local, v1/v2 IPv4-mapped */
	struct ls_probe_gid rxe[4] = {
		gid_ent("fe80::5054:ff:fe12:3401", "IB/RoCE v1"),
		gid_ent("fe80::5054:ff:fe12:3401", "RoCE v2"),
		gid_ent("::ffff:192.0.2.1", "IB/RoCE v1"),
		gid_ent("::ffff:192.0.2.1", "RoCE v2"),
	};
	struct ls_err err = { 0 };
	int idx = 99;

	ASSERT_EQ(0, ls_probe_gid_choose(rxe, 4, -1, true, &idx, &err));
	EXPECT_EQ(3, idx);
	/* the IPv4 entry is not valid (address going away): the v2 link-local one */
	rxe[3].valid = false;
	ASSERT_EQ(0, ls_probe_gid_choose(rxe, 4, -1, true, &idx, &err));
	EXPECT_EQ(1, idx);
	/* before any address: only link-local, v2 taken, never the v1 at index 0 */
	ASSERT_EQ(0, ls_probe_gid_choose(rxe, 2, -1, true, &idx, &err));
	EXPECT_EQ(1, idx);
	/* an explicit index wins, even a v1 one */
	rxe[3].valid = true;
	ASSERT_EQ(0, ls_probe_gid_choose(rxe, 4, 2, true, &idx, &err));
	EXPECT_EQ(2, idx);
}

TEST(gid_choose_refused)
{
	struct ls_probe_gid v1[2] = {
		gid_ent("fe80::1", "IB/RoCE v1"),
		gid_ent("::ffff:10.0.0.7", "IB/RoCE v1"),
	};
	struct ls_probe_gid none[2] = { { .valid = false }, { .valid = false } };
	struct ls_err err = { 0 };
	int idx = 99;

	/* Ethernet with v1 entries only: refused, the table named, not index 0 */
	EXPECT_EQ(-1, ls_probe_gid_choose(v1, 2, -1, true, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "no RoCE v2 GID"));
	EXPECT_NE(NULL, strstr(err.msg, "1=::ffff:10.0.0.7 (IB/RoCE v1)"));
	EXPECT_NE(NULL, strstr(err.msg, "-x N"));
	EXPECT_EQ(99, idx);
	/* the same table on InfiniBand: its first GID */
	ASSERT_EQ(0, ls_probe_gid_choose(v1, 2, -1, false, &idx, &err));
	EXPECT_EQ(0, idx);
	/* no GID at all: an Ethernet port is refused, an IB port routes by LID */
	memset(&err, 0, sizeof(err));
	EXPECT_EQ(-1, ls_probe_gid_choose(none, 2, -1, true, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "no GID"));
	ASSERT_EQ(0, ls_probe_gid_choose(none, 2, -1, false, &idx, &err));
	EXPECT_EQ(-1, idx);
	/* explicit indexes: an empty one and one past the table, with the valid ones */
	EXPECT_EQ(-1, ls_probe_gid_choose(none, 2, 1, false, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "GID index 1 is empty (valid: none)"));
	EXPECT_EQ(-1, ls_probe_gid_choose(v1, 2, 5, true, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "GID index 5 is beyond the GID table (valid: 0=fe80::1"));
	EXPECT_EQ(-1, ls_probe_gid_choose(v1, 0, -1, true, &idx, &err));
}

TEST(gid_choose_untyped)
{
	/* a kernel without gid_attrs/types: the IPv4-mapped entry, else the first */
	struct ls_probe_gid t[3] = {
		gid_ent("fe80::1", ""),
		gid_ent("2001:db8::1", ""),
		gid_ent("::ffff:192.0.2.9", ""),
	};
	struct ls_err err = { 0 };
	int idx = 99;

	ASSERT_EQ(0, ls_probe_gid_choose(t, 3, -1, true, &idx, &err));
	EXPECT_EQ(2, idx);
	ASSERT_EQ(0, ls_probe_gid_choose(t, 2, -1, true, &idx, &err));
	EXPECT_EQ(0, idx);
	t[0].valid = false;
	ASSERT_EQ(0, ls_probe_gid_choose(t, 2, -1, true, &idx, &err));
	EXPECT_EQ(1, idx);
}

TEST_HARNESS_MAIN
