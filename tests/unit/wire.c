// SPDX-License-Identifier: GPL-2.0
/*
 * Transmission model against figures computed by hand from the header sizes
 * (Eth 14, IPv4 20 / IPv6 40, UDP 8, BTH 12, RETH 16, AETH 4, ICRC 4, FCS 4,
 * preamble + IFG 20) and the seed's 4 KB at 100 Gb/s ~ 0.33 us.
 */
#include <math.h>

#include "wire.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

/* A back-to-back 100 Gb/s link with a 1024-byte MTU. */
static struct ls_wire_cfg base(uint64_t size)
{
	struct ls_wire_cfg c = {
		.size = size, .verb = LS_WIRE_WRITE, .mtu = 1024,
		.link_gbps = 100, .cable_m = 0, .hops = 1, .sw = LS_SWITCH_SF,
	};
	return c;
}

/* The wire figures of c, which must be a valid configuration. */
static struct ls_wire wire_of(struct __test_metadata *_metadata, const struct ls_wire_cfg *c)
{
	struct ls_wire w;
	struct ls_err e;

	memset(&w, 0, sizeof(w));
	ASSERT_EQ(0, ls_wire_compute(c, &w, &e)) TH_LOG("%s", e.msg);
	return w;
}

TEST(seed_payload_only_4k_100g)
{
	struct ls_wire_cfg c = base(4096);
	struct ls_wire w;

	w = wire_of(_metadata, &c);
	/* 4096 * 8 / 100 = 327.68 ns: the seed's "about 0.32-0.33 us" */
	EXPECT_TRUE(NEAR(w.payload_only_ns, 327.68));
}

TEST(write_4k_mtu1024_full_wire)
{
	struct ls_wire_cfg c = base(4096);
	struct ls_wire w;

	w = wire_of(_metadata, &c);
	/* first: 14+20+8+12+16+1024+4+4+20 = 1122; 3 more: 1106 each */
	EXPECT_EQ(4, w.packets);
	EXPECT_EQ(1122 + 3 * 1106, w.wire_bytes);
	EXPECT_EQ(4440 - 4096, w.header_bytes);
	EXPECT_TRUE(NEAR(w.total_ns, 355.2));
	EXPECT_TRUE(NEAR(w.serialize_ns, 355.2));
	EXPECT_TRUE(NEAR(w.switch_ns, 0));
}

TEST(write_4b_cable)
{
	struct ls_wire_cfg c = base(4);
	struct ls_wire w;

	c.cable_m = 2;
	w = wire_of(_metadata, &c);
	/* 14+20+8+12+16+4+4+4 = 82 (>= 64) + 20 = 102 B = 8.16 ns; + 2 m * 5 ns */
	EXPECT_EQ(102, w.wire_bytes);
	EXPECT_TRUE(NEAR(w.total_ns, 18.16));
	EXPECT_TRUE(NEAR(w.propagate_ns, 10));
}

TEST(store_and_forward_vs_cut_through)
{
	struct ls_wire_cfg c = base(4);
	struct ls_wire w;

	c.cable_m = 2;
	c.hops = 3;
	w = wire_of(_metadata, &c);
	/* every link re-serializes: 3 * (8.16 + 10) */
	EXPECT_TRUE(NEAR(w.total_ns, 54.48));
	EXPECT_TRUE(NEAR(w.switch_ns, 2 * 8.16));
	c.sw = LS_SWITCH_CT;
	w = wire_of(_metadata, &c);
	/* each switch waits for preamble+Eth+IPv4 = 42 B = 3.36 ns */
	EXPECT_TRUE(NEAR(w.total_ns, 18.16 + 2 * (3.36 + 10)));
}

TEST(store_and_forward_pipelines_packets)
{
	struct ls_wire_cfg c = base(2048);
	struct ls_wire w;

	c.hops = 2;
	w = wire_of(_metadata, &c);
	/* 1122 B (89.76 ns) + 1106 B (88.48 ns); the switch adds one packet: 89.76 */
	EXPECT_TRUE(NEAR(w.total_ns, 89.76 + 88.48 + 89.76));
}

TEST(read_is_request_plus_response)
{
	struct ls_wire_cfg c = base(4);
	struct ls_wire w;

	c.verb = LS_WIRE_READ;
	w = wire_of(_metadata, &c);
	/* request 14+20+8+12+16+4+4 = 78 + 20; response 14+20+8+12+4+4+4+4 = 70 + 20 */
	EXPECT_EQ(98 + 90, w.wire_bytes);
	/* the probe reports a READ's full round trip (as ib_read_lat) */
	EXPECT_TRUE(NEAR(w.total_ns, (98 + 90) * 8 / 100.0));
}

TEST(ipv6_imm_and_minimum_frame)
{
	struct ls_wire_cfg c = base(4);
	struct ls_wire w;

	c.ipv6 = true;
	c.verb = LS_WIRE_WRITE_IMM;
	w = wire_of(_metadata, &c);
	/* 14+40+8+12+16+4(imm)+4+4+4 = 106 + 20 */
	EXPECT_EQ(126, w.wire_bytes);
	c = base(0);
	c.verb = LS_WIRE_SEND;
	w = wire_of(_metadata, &c);
	/* 14+20+8+12+4+4 = 62 -> padded to 64, + 20 */
	EXPECT_EQ(84, w.wire_bytes);
	c = base(5);
	c.verb = LS_WIRE_SEND;
	w = wire_of(_metadata, &c);
	/* 5 bytes pad to 8: 14+20+8+12+8+4+4 = 70 + 20 */
	EXPECT_EQ(90, w.wire_bytes);
}

TEST(parse_rate)
{
	struct ls_err e;
	double g = 0;

	ASSERT_EQ(0, ls_wire_parse_rate("100 Gb/sec (4X EDR)", &g, &e));
	EXPECT_TRUE(NEAR(g, 100));
	ASSERT_EQ(0, ls_wire_parse_rate("2.5 Gb/sec (1X SDR)", &g, &e));
	EXPECT_TRUE(NEAR(g, 2.5));
	EXPECT_EQ(-1, ls_wire_parse_rate("fast", &g, &e));
	EXPECT_EQ(-1, ls_wire_parse_rate("100 Mb/sec", &g, &e));
	EXPECT_EQ(-1, ls_wire_parse_rate("0 Gb/sec", &g, &e));
}

TEST(bad_config)
{
	struct ls_wire_cfg c = base(4);
	struct ls_wire w;
	struct ls_err e;

	c.cable_m = -1;
	EXPECT_EQ(-1, ls_wire_compute(&c, &w, &e));
	c = base(4);
	c.mtu = 1500;
	EXPECT_EQ(-1, ls_wire_compute(&c, &w, &e));
	c = base(4);
	c.link_gbps = 0;
	EXPECT_EQ(-1, ls_wire_compute(&c, &w, &e));
	c = base(4);
	c.hops = 0;
	EXPECT_EQ(-1, ls_wire_compute(&c, &w, &e));
}

TEST_HARNESS_MAIN
