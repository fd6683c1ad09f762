// SPDX-License-Identifier: GPL-2.0
/*
 * Counter snapshots: sysfs counters from a fake tree (values, deltas,
 * unreadable files named while the rest is read), name classification,
 * and the ethtool/rtnetlink readers on the loopback device.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* Write text to root/rel. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The delta named name in d, or NULL. */
static const struct ls_ctr_delta *find(const struct ls_ctr_diff *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

TEST(classify)
{
	EXPECT_EQ(LS_CTR_PFC, ls_ctr_classify("ethtool:rx_pause_ctrl_phy"));
	EXPECT_EQ(LS_CTR_PFC, ls_ctr_classify("ethtool:rx_prio3_pause_duration_us"));
	EXPECT_EQ(LS_CTR_CNP, ls_ctr_classify("hw:np_cnp_sent"));
	EXPECT_EQ(LS_CTR_CNP, ls_ctr_classify("hw:rp_cnp_handled"));
	EXPECT_EQ(LS_CTR_ECN, ls_ctr_classify("hw:np_ecn_marked_roce_packets"));
	EXPECT_EQ(LS_CTR_OOS, ls_ctr_classify("hw:out_of_sequence"));
	EXPECT_EQ(LS_CTR_OOS, ls_ctr_classify("hw:rcvd_seq_err"));
	EXPECT_EQ(LS_CTR_OOS, ls_ctr_classify("hw:duplicate_request"));
	EXPECT_EQ(LS_CTR_RETRANS, ls_ctr_classify("hw:retry_exceeded_err"));
	EXPECT_EQ(LS_CTR_RETRANS, ls_ctr_classify("hw:local_ack_timeout_err"));
	EXPECT_EQ(LS_CTR_RETRANS, ls_ctr_classify("hw:rcvd_rnr_err"));
	EXPECT_EQ(LS_CTR_DROP, ls_ctr_classify("qdisc:netem:8001:drops"));
	EXPECT_EQ(LS_CTR_DROP, ls_ctr_classify("port:port_rcv_discards"));
	EXPECT_EQ(LS_CTR_DROP, ls_ctr_classify("hw:out_of_buffer"));
	EXPECT_EQ(LS_CTR_QUEUE, ls_ctr_classify("qdisc:netem:8001:backlog"));
	EXPECT_EQ(LS_CTR_OTHER, ls_ctr_classify("hw:sent_pkts"));
	EXPECT_EQ(LS_CTR_ECN, ls_ctr_classify("ipext:InCEPkts"));
	EXPECT_EQ(LS_CTR_OTHER, ls_ctr_classify("ipext:InECT0Pkts"));
	EXPECT_EQ(LS_CTR_OTHER, ls_ctr_classify("ipext:InNoECTPkts"));
}

/* netstat text with IpExt columns in a scrambled order and TcpExt around them. */
static void put_netstat(const char *root, unsigned int ce, unsigned int ect0)
{
	char dir[300], text[600];

	snprintf(dir, sizeof(dir), "%s/proc/net", root);
	snprintf(text, sizeof(text),
		 "TcpExt: SyncookiesSent InCEPkts\nTcpExt: 1 999\n"
		 "IpExt: InNoRoutes InECT1Pkts InCEPkts InOctets InNoECTPkts InECT0Pkts\n"
		 "IpExt: 0 3 %u 123456 77 %u\n"
		 "MPTcpExt: MPCapableSYNRX\nMPTcpExt: 0\n", ce, ect0);
	put(dir, "netstat", text);
}

TEST(ipext_ecn_counters)
{
	char root[] = "/tmp/ls-ipext-XXXXXX", cmd[600];
	struct ls_ctr_cfg cfg = { .ipext = true };
	const struct ls_ctr_delta *c;
	struct ls_ctr_snap a, b;
	struct ls_ctr_diff d;
	struct ls_err e;

	ASSERT_NE(NULL, mkdtemp(root));
	cfg.root = root;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/net", root);
	ASSERT_EQ(0, system(cmd));
	put_netstat(root, 10, 500);
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	EXPECT_EQ(4, a.n);
	put_netstat(root, 52, 900);
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &b, &e));
	ASSERT_EQ(0, ls_ctr_diff(&a, &b, &d, &e));
	c = find(&d, "ipext:InCEPkts");	/* IpExt's column, not TcpExt's */
	ASSERT_NE(NULL, c);
	EXPECT_TRUE(c->ok);
	EXPECT_EQ(10, c->before);
	EXPECT_EQ(42, c->delta);
	EXPECT_EQ(LS_CTR_ECN, c->cls);
	c = find(&d, "ipext:InECT0Pkts");
	ASSERT_NE(NULL, c);
	EXPECT_EQ(400, c->delta);
	c = find(&d, "ipext:InECT1Pkts");
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, c->delta);
	c = find(&d, "ipext:InNoECTPkts");
	ASSERT_NE(NULL, c);
	EXPECT_EQ(77, c->after);
	ls_ctr_diff_free(&d);
	ls_ctr_snap_free(&a);
	ls_ctr_snap_free(&b);
	/* a header without its value line, then no file: named, unreadable */
	snprintf(cmd, sizeof(cmd), "%s/proc/net", root);
	put(cmd, "netstat", "IpExt: InCEPkts InECT0Pkts\n");
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	ASSERT_EQ(4, a.n);
	for (size_t i = 0; i < a.n; i++) {
		EXPECT_FALSE(a.v[i].ok);
		EXPECT_NE(NULL, strstr(a.v[i].error, "no readable IpExt"));
	}
	ls_ctr_snap_free(&a);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	ASSERT_EQ(1, a.n);
	EXPECT_STREQ("ipext:*", a.v[0].name);
	EXPECT_FALSE(a.v[0].ok);
	ls_ctr_snap_free(&a);
	/* the host's own /proc: InCEPkts is readable */
	cfg.root = NULL;
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	EXPECT_EQ(4, a.n);
	for (size_t i = 0; i < a.n; i++)
		EXPECT_TRUE(a.v[i].ok);
	ls_ctr_snap_free(&a);
}

TEST(sysfs_tree_with_unreadable_counters)
{
	char root[] = "/tmp/ls-ctr-XXXXXX", cmd[600], dir[300];
	struct ls_ctr_cfg cfg = { .ibdev = "mlx0", .port = 1, .no_ethtool = true,
				  .no_qdisc = true };
	struct ls_ctr_snap a, b;
	struct ls_ctr_diff d;
	const struct ls_ctr_delta *c;
	struct ls_err e;

	ASSERT_NE(NULL, mkdtemp(root));
	cfg.root = root;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/class/infiniband/mlx0/ports/1/hw_counters "
		 "%s/sys/class/infiniband/mlx0/ports/1/counters/broken", root, root);
	ASSERT_EQ(0, system(cmd));
	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/mlx0/ports/1", root);
	put(dir, "hw_counters/rcvd_seq_err", "5\n");
	put(dir, "hw_counters/np_cnp_sent", "100\n");
	put(dir, "hw_counters/garbage", "n/a\n");
	put(dir, "counters/port_xmit_discards", "0\n");
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	put(dir, "hw_counters/rcvd_seq_err", "7\n");
	put(dir, "hw_counters/np_cnp_sent", "100\n");
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &b, &e));
	ASSERT_EQ(0, ls_ctr_diff(&a, &b, &d, &e));
	c = find(&d, "hw:rcvd_seq_err");
	ASSERT_NE(NULL, c);
	EXPECT_TRUE(c->ok);
	EXPECT_EQ(2, c->delta);
	EXPECT_EQ(LS_CTR_OOS, c->cls);
	EXPECT_TRUE(ls_ctr_moved(c));
	c = find(&d, "hw:np_cnp_sent");
	ASSERT_NE(NULL, c);
	EXPECT_FALSE(ls_ctr_moved(c));
	/* a directory where a counter should be, and text that is no count */
	c = find(&d, "port:broken");
	ASSERT_NE(NULL, c);
	EXPECT_FALSE(c->ok);
	EXPECT_NE(0, strlen(c->error));
	c = find(&d, "hw:garbage");
	ASSERT_NE(NULL, c);
	EXPECT_FALSE(c->ok);
	EXPECT_NE(NULL, strstr(c->error, "not a count"));
	EXPECT_EQ(2, d.unreadable);
	EXPECT_NE(NULL, find(&d, "port:port_xmit_discards"));
	ls_ctr_diff_free(&d);
	ls_ctr_snap_free(&a);
	ls_ctr_snap_free(&b);
	/* a device that does not exist is one named unreadable entry */
	cfg.ibdev = "nosuch0";
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &a, &e));
	ASSERT_EQ(1, a.n);
	EXPECT_STREQ("port:*", a.v[0].name);
	EXPECT_FALSE(a.v[0].ok);
	ls_ctr_snap_free(&a);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ASSERT_EQ(0, system(cmd));
}

TEST(loopback_ethtool_and_qdisc)
{
	struct ls_ctr_cfg cfg = { .netdev = "lo" };
	struct ls_ctr_snap s;
	struct ls_err e;

	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &s, &e));
	for (size_t i = 0; i < s.n; i++) {
		/* lo has no NIC statistics: at most one named unreadable ethtool entry */
		if (!s.v[i].ok) {
			EXPECT_STREQ("ethtool:*", s.v[i].name);
			EXPECT_NE(NULL, strstr(s.v[i].error, "lo"));
		}
		EXPECT_NE(0, strncmp(s.v[i].name, "qdisc:*", 7));
	}
	ls_ctr_snap_free(&s);
	cfg.netdev = "nosuchif0";
	ASSERT_EQ(0, ls_ctr_snapshot(&cfg, &s, &e));
	EXPECT_LE(1, s.n);
	for (size_t i = 0; i < s.n; i++)
		EXPECT_FALSE(s.v[i].ok);
	ls_ctr_snap_free(&s);
}

TEST_HARNESS_MAIN
