// SPDX-License-Identifier: GPL-2.0
/*
 * tools/cli/agent_metrics.c: the agent's per-peer records and its /metrics
 * page. A reloaded list keeps the records of the hosts that stay and
 * starts new ones empty; the page has the agent's families with the
 * figures of each peer (a peer never probed has no up sample, a failed one
 * up 0 and no latency), the breakdown's families for the peers that have
 * one (the verdict as the level gauge's labels), label values escaped, and
 * promtool (Debian's prometheus package, the Prometheus project's own
 * checker) accepts it without a lint problem.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* Three peers: a measured one with a breakdown, a failed one, one never probed. */
static struct ls_agent_peer *three(void)
{
	static char *const names[] = { "node1", "node\"2\\", "node3" };
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };

	if (ls_agent_peers_merge(NULL, 0, names, 3, &p, &err))
		return NULL;
	p[0].probed = p[0].up = true;
	p[0].oneway = (struct ls_summary){ .count = 200, .p50 = 2000, .p90 = 3000, .p99 = 4000,
					   .p999 = 5000, .max = 6000, .mean = 2500 };
	p[0].ow_count = 200;
	p[0].ow_sum_ns = 200 * 2500.0;
	p[0].last_ts = 1700000000.5;
	p[0].probes = 7;
	p[0].busy = 2;
	p[0].breakdowns = 1;
	p[0].have_bd = true;
	p[0].bd.head.ok = true;
	p[0].bd.reliable = true;
	p[0].bd.complete = true;
	p[0].bd.level_p50 = LS_LEVEL_ABNORMAL;
	p[0].bd.dom_p50 = LS_PART_QUEUING;
	p[0].bd.dom_tail = LS_PART_PROCESSING;
	for (int k = 0; k < 4; k++) {
		p[0].bd.sums[k] = (struct ls_summary){ .count = 100, .p50 = 1000.0 * (k + 1),
						       .mean = 1000.0 * (k + 1) };
		p[0].bd_count[k] = 100;
		p[0].bd_sum_ns[k] = 100 * 1000.0 * (k + 1);
	}
	p[1].probed = true;
	p[1].probes = 3;
	p[1].failures = 3;
	return p;
}

TEST(merge_keeps_staying_hosts)
{
	static char *const next[] = { "node3", "node1", "node9" };
	struct ls_agent_peer *p = three(), *q;
	struct ls_err err = { 0 };

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ls_agent_peers_merge(p, 3, next, 3, &q, &err));
	EXPECT_STREQ("node3", q[0].name);
	EXPECT_EQ(0, q[0].probes);		/* never probed: still empty */
	EXPECT_STREQ("node1", q[1].name);
	EXPECT_EQ(7, q[1].probes);		/* kept, with its breakdown */
	EXPECT_TRUE(q[1].have_bd);
	EXPECT_EQ(2000, q[1].oneway.p50);
	EXPECT_STREQ("node9", q[2].name);	/* new: empty */
	EXPECT_FALSE(q[2].probed);
	EXPECT_EQ(0, q[2].probes);
	free(p);
	free(q);
}

/* Render p into a malloc'd page. */
static char *page(const struct ls_agent_peer *p, size_t n)
{
	struct ls_agent_stats st = { .version = "9.9", .skipped = 4, .reloads = 3,
				     .reload_failures = 1 };
	struct ls_err err = { 0 };
	size_t len;
	char *buf;

	if (ls_agent_render_buf(p, n, &st, &buf, &len, &err))
		return NULL;
	if (strlen(buf) != len) {
		free(buf);
		return NULL;
	}
	return buf;
}

TEST(page_figures)
{
	struct ls_agent_peer *p = three();
	char *b;

	ASSERT_NE(NULL, p);
	b = page(p, 3);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_build_info{version=\"9.9\",abi=\"2\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peers 3\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_skipped_slots_total 4\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peers_reloads_total{result=\"ok\"} 2\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peers_reloads_total{result=\"failed\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"node1\"} 1\n"));
	/* the label value's quote and backslash are escaped */
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"node\\\"2\\\\\"} 0\n"));
	/* never probed: no up sample, but its counters are there */
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"node3\"}"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probes_total{peer=\"node3\"} 0\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node1\",quantile=\"0.5\"} 2e-06\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds_count{peer=\"node1\"} 200\n"));
	/* the failed peer has no latency */
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node\\\"2"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probe_failures_total{peer=\"node\\\"2\\\\\"} 3\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probe_busy_total{peer=\"node1\"} 2\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_last_probe_timestamp_seconds{peer=\"node1\"} 1700000000.5\n"));
	/* the breakdown of node1 only, its parts and its verdict */
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node1\"} 1\n"));
	EXPECT_EQ(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node3\"}"));
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\",part=\"queuing\",quantile=\"0.5\"} 3e-06\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_level{peer=\"node1\",next_layer="));
	EXPECT_NE(NULL, strstr(b, ",dominant_p50=\"queuing\",dominant_tail=\"processing\"} 3\n"));
	free(b);
	free(p);
}

TEST(page_without_peers)
{
	char *b = page(NULL, 0);

	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peers 0\n"));
	EXPECT_NE(NULL, strstr(b, "# TYPE latsplit_agent_oneway_seconds summary\n"));
	free(b);
}

TEST(promtool_accepts_the_page)
{
	char path[] = "/tmp/ls-agent-page-XXXXXX", cmd[256];
	struct ls_agent_peer *p = three();
	char *b;
	FILE *fp;
	int fd;

	if (system("command -v promtool >/dev/null 2>&1"))
		SKIP(return, "promtool not installed (Debian package prometheus)");
	ASSERT_NE(NULL, p);
	b = page(p, 3);
	ASSERT_NE(NULL, b);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	fp = fdopen(fd, "w");
	ASSERT_NE(NULL, fp);
	fputs(b, fp);
	fclose(fp);
	/* promtool prints lint problems and exits non-zero on any */
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s'", path);
	EXPECT_EQ(0, system(cmd));
	unlink(path);
	free(b);
	free(p);
}

/* Render p with st into a malloc'd page. */
static char *page_st(const struct ls_agent_peer *p, size_t n, const struct ls_agent_stats *st)
{
	struct ls_err err = { 0 };
	size_t len;
	char *buf;

	if (ls_agent_render_buf(p, n, st, &buf, &len, &err))
		return NULL;
	return buf;
}

/* Whether a and b differ by less than tol. */
static bool near(double a, double b, double tol)
{
	return fabs(a - b) < tol;
}

/* The value of the sample line that starts with key in page b, or NAN. */
static double sample(const char *b, const char *key)
{
	const char *at = strstr(b, key);

	return at ? strtod(at + strlen(key), NULL) : NAN;
}

TEST(summary_sum_and_count_accumulate)
{
	struct ls_summary s1 = { .count = 200, .p50 = 2000, .p90 = 3000, .p99 = 4000,
				 .p999 = 5000, .max = 6000, .mean = 2500 };
	struct ls_summary s2 = { .count = 300, .p50 = 1000, .p90 = 1500, .p99 = 2000,
				 .p999 = 2500, .max = 3000, .mean = 1200 };
	static char *const names[] = { "node1" };
	struct ls_agent_stats st = { .version = "9.9" };
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };
	double c1, c2, sum1, sum2;
	char *b;

	ASSERT_EQ(0, ls_agent_peers_merge(NULL, 0, names, 1, &p, &err));
	ls_agent_take_probe(p, 0, &s1, 1700000000);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	c1 = sample(b, "latsplit_agent_oneway_seconds_count{peer=\"node1\"} ");
	sum1 = sample(b, "latsplit_agent_oneway_seconds_sum{peer=\"node1\"} ");
	free(b);
	/* a failed probe in between adds nothing */
	ls_agent_take_probe(p, 1, NULL, 1700000005);
	ls_agent_take_probe(p, 0, &s2, 1700000010);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	c2 = sample(b, "latsplit_agent_oneway_seconds_count{peer=\"node1\"} ");
	sum2 = sample(b, "latsplit_agent_oneway_seconds_sum{peer=\"node1\"} ");
	EXPECT_EQ(200, c1);
	EXPECT_EQ(500, c2);
	EXPECT_TRUE(near(200 * 2500e-9, sum1, 1e-12));
	EXPECT_TRUE(near(200 * 2500e-9 + 300 * 1200e-9, sum2, 1e-12));
	/* the quantiles are the last probe's */
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node1\",quantile=\"0.5\"} 1e-06\n"));
	EXPECT_EQ(3, p->probes);
	EXPECT_EQ(1, p->failures);
	free(b);
	free(p);
}

/* A measured breakdown record with part k's p50 (k + 1) us, n samples each of mean (k + 1) us. */
static struct bd_prom_pair bd_rec(size_t n)
{
	struct bd_prom_pair bd = { 0 };

	bd.head.ok = true;
	bd.reliable = true;
	bd.complete = true;
	bd.level_p50 = LS_LEVEL_ABNORMAL;
	for (int k = 0; k < 4; k++)
		bd.sums[k] = (struct ls_summary){ .count = n, .p50 = 1000.0 * (k + 1),
						  .mean = 1000.0 * (k + 1) };
	return bd;
}

TEST(breakdown_accumulates_fails_and_expires)
{
	static char *const names[] = { "node1" };
	struct ls_agent_stats st = { .version = "9.9" };
	struct bd_prom_pair bd = bd_rec(100);
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };
	char *b;

	ASSERT_EQ(0, ls_agent_peers_merge(NULL, 0, names, 1, &p, &err));
	ls_agent_take_bd(p, 0, &bd, 1700000000);
	/* a measured breakdown shows the peer up */
	EXPECT_TRUE(p->probed);
	EXPECT_TRUE(p->up);
	EXPECT_EQ(1700000000, p->last_ts);
	bd = bd_rec(50);
	ls_agent_take_bd(p, 0, &bd, 1700000100);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node1\"} 1\n"));
	EXPECT_EQ(150, sample(b, "latsplit_breakdown_seconds_count{peer=\"node1\",part=\"queuing\"} "));
	EXPECT_TRUE(near(150 * 3000e-9, sample(b, "latsplit_breakdown_seconds_sum{peer=\"node1\",part=\"queuing\"} "),
		    1e-12));
	EXPECT_EQ(1700000100, sample(b, "latsplit_breakdown_last_timestamp_seconds{peer=\"node1\"} "));
	free(b);
	/* stale: older than bd_stale_s at the page's time: up 0, no figures */
	st.now = 1700000100 + 61;
	st.bd_stale_s = 60;
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node1\"} 0\n"));
	EXPECT_EQ(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\""));
	EXPECT_EQ(NULL, strstr(b, "latsplit_breakdown_level{peer=\"node1\""));
	free(b);
	/*
	 * A failed breakdown while the last measured one is fresh: its
	 * figures stay, with their time; the failure is counted (as a failed
	 * session too) and has a time of its own.
	 */
	st.now = 1700000130;
	ls_agent_take_bd(p, 1, NULL, 1700000120);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node1\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\",part=\"queuing\",quantile=\"0.5\"} 3e-06\n"));
	EXPECT_EQ(1700000120, sample(b, "latsplit_breakdown_last_timestamp_seconds{peer=\"node1\"} "));
	EXPECT_EQ(1700000100, sample(b, "latsplit_breakdown_last_success_timestamp_seconds{peer=\"node1\"} "));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_breakdown_failures_total{peer=\"node1\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_breakdowns_total{peer=\"node1\"} 3\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probe_failures_total{peer=\"node1\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probes_total{peer=\"node1\"} 3\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"node1\"} 0\n"));
	free(b);
	/* ... until the last measured one is stale */
	st.now = 1700000100 + 61;
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_up{peer=\"node1\"} 0\n"));
	EXPECT_EQ(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\""));
	free(b);
	/* a busy refusal is no result: counted, the figures untouched */
	ls_agent_take_busy(p);
	EXPECT_EQ(4, p->probes);
	EXPECT_EQ(1, p->busy);
	EXPECT_EQ(1, p->failures);
	EXPECT_EQ(1700000100, p->bd_ok_ts);
	free(p);
}

/*
 * Every session feeds the one-way summary: a breakdown its total, a probe
 * its summary; --breakdown-every 1 (breakdowns only) still fills the
 * one-way series and counts sessions. The parts come from breakdowns alone.
 */
TEST(every_session_feeds_oneway)
{
	static char *const names[] = { "node1" };
	struct ls_agent_stats st = { .version = "9.9" };
	struct bd_prom_pair bd = bd_rec(100);
	struct ls_summary s = { .count = 40, .p50 = 9000, .mean = 9000 };
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };
	char *b;

	ASSERT_EQ(0, ls_agent_peers_merge(NULL, 0, names, 1, &p, &err));
	ls_agent_take_bd(p, 0, &bd, 1700000000);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	/* the breakdown's total (1 us) is the one-way summary */
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node1\",quantile=\"0.5\"} 1e-06\n"));
	EXPECT_EQ(100, sample(b, "latsplit_agent_oneway_seconds_count{peer=\"node1\"} "));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probes_total{peer=\"node1\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\",part=\"queuing\",quantile=\"0.5\"} 3e-06\n"));
	free(b);
	/* a probe: the one-way summary moves, the breakdown's parts stay as they were */
	ls_agent_take_probe(p, 0, &s, 1700000005);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node1\",quantile=\"0.5\"} 9e-06\n"));
	EXPECT_EQ(140, sample(b, "latsplit_agent_oneway_seconds_count{peer=\"node1\"} "));
	EXPECT_NE(NULL, strstr(b, "latsplit_breakdown_seconds{peer=\"node1\",part=\"queuing\",quantile=\"0.5\"} 3e-06\n"));
	EXPECT_EQ(100, sample(b, "latsplit_breakdown_seconds_count{peer=\"node1\",part=\"queuing\"} "));
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_part_seconds"));
	free(b);
	/* a failed session: no one-way sample, a failure counted */
	ls_agent_take_probe(p, 1, NULL, 1700000015);
	b = page_st(p, 1, &st);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"node1\""));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_probe_failures_total{peer=\"node1\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_consecutive_failures{peer=\"node1\"} 1\n"));
	free(b);
	/* failures in a row count up, busy refusals leave them, a measured session resets them */
	ls_agent_take_bd(p, 1, NULL, 1700000020);
	ls_agent_take_busy(p);
	EXPECT_EQ(2, p->consec_failures);
	ls_agent_take_probe(p, 0, &s, 1700000025);
	EXPECT_EQ(0, p->consec_failures);
	EXPECT_EQ(2, p->failures);
	free(p);
}

TEST(stale_peers_are_down)
{
	static char *const names[] = { "fresh", "old", "never", "new" };
	struct ls_summary s = { .count = 10, .p50 = 2000, .mean = 2000 };
	struct ls_agent_stats st = { .version = "9.9", .now = 1000, .stale_s = 100 };
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };
	char *b;

	ASSERT_EQ(0, ls_agent_peers_merge(NULL, 0, names, 4, &p, &err));
	for (int i = 0; i < 4; i++)
		p[i].since = 500;
	p[3].since = 950;
	ls_agent_take_probe(&p[0], 0, &s, 990);
	ls_agent_take_probe(&p[1], 0, &s, 850);	/* 150 s ago: stale */
	p[1].skipped = 5;
	b = page_st(p, 4, &st);
	ASSERT_NE(NULL, b);
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"fresh\"} 1\n"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"old\"} 0\n"));
	/* its last figures are not shown as current; its last time is */
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"old\""));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_oneway_seconds{peer=\"fresh\""));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_last_probe_timestamp_seconds{peer=\"old\"} 850\n"));
	/* never measured since joining 500 s ago: down; joined 50 s ago: no sample yet */
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"never\"} 0\n"));
	EXPECT_EQ(NULL, strstr(b, "latsplit_agent_peer_up{peer=\"new\"}"));
	EXPECT_NE(NULL, strstr(b, "latsplit_agent_peer_skipped_slots_total{peer=\"old\"} 5\n"));
	free(b);
	free(p);
}

/* Peer "c" has a session in flight. */
static bool is_c(void *arg, const struct ls_agent_peer *peer)
{
	return !strcmp(peer->name, "c");
}

TEST(owed_sessions_oldest_first)
{
	static char *const names[] = { "a", "b", "c" };
	struct ls_agent_peer *p;
	struct ls_err err = { 0 };

	ASSERT_EQ(0, ls_agent_peers_merge(NULL, 0, names, 3, &p, &err));
	EXPECT_EQ(NULL, ls_agent_owed_next(p, 3, NULL, NULL));
	p[2].owed = 1 + 41;
	p[0].owed = 1 + 43;
	EXPECT_EQ(&p[2], ls_agent_owed_next(p, 3, NULL, NULL));
	/* the oldest one's own session still runs: the next one is not held back */
	EXPECT_EQ(&p[0], ls_agent_owed_next(p, 3, is_c, NULL));
	p[0].owed = 0;
	EXPECT_EQ(NULL, ls_agent_owed_next(p, 3, is_c, NULL));
	p[2].owed = 0;
	p[0].owed = 1 + 43;
	EXPECT_EQ(&p[0], ls_agent_owed_next(p, 3, NULL, NULL));
	/* slot 0 is owed as 1: not "none" */
	p[1].owed = 1 + 0;
	EXPECT_EQ(&p[1], ls_agent_owed_next(p, 3, NULL, NULL));
	free(p);
}

/* addr (numeric IPv4 or IPv6) into ss. */
static void sa(struct sockaddr_storage *ss, const char *addr)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		ss->ss_family = AF_INET6;
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)ss)->sin6_addr);
	} else {
		ss->ss_family = AF_INET;
		inet_pton(AF_INET, addr, &((struct sockaddr_in *)ss)->sin_addr);
	}
}

/*
 * This node in its list: by name (case-insensitive), else by one of its
 * addresses; --self not listed and a node listed twice are refused. An IP
 * list without --self found nothing before, so every node probed the
 * same target in a slot.
 */
TEST(self_by_name_or_address)
{
	static char *const ips[] = { "192.0.2.1", "192.0.2.2", "fd00::3" };
	static char *const names[] = { "node1", "Node2", "192.0.2.2" };
	struct ls_peers lip = { (char **)ips, 3 }, lname = { (char **)names, 3 };
	struct sockaddr_storage local[3];
	struct ls_err err = { 0 };
	size_t idx = 99;

	sa(&local[0], "127.0.0.1");
	sa(&local[1], "192.0.2.2");
	sa(&local[2], "fd00::9");
	/* an IP list, the host name not in it: found by address */
	ASSERT_EQ(0, ls_agent_find_self(&lip, "f", "somehost", false, local, 3, &idx, &err));
	EXPECT_EQ(1, idx);
	/* IPv6 too */
	sa(&local[1], "fd00::3");
	ASSERT_EQ(0, ls_agent_find_self(&lip, "f", "somehost", false, local, 3, &idx, &err));
	EXPECT_EQ(2, idx);
	/* none of its addresses listed, no name: not listed (list.n) */
	sa(&local[1], "10.1.1.1");
	sa(&local[2], "fd00::9");
	ASSERT_EQ(0, ls_agent_find_self(&lip, "f", "somehost", false, local, 3, &idx, &err));
	EXPECT_EQ(3, idx);
	/* by name, case-insensitive, before addresses */
	ASSERT_EQ(0, ls_agent_find_self(&lname, "f", "node2", false, local, 3, &idx, &err));
	EXPECT_EQ(1, idx);
	/* --self not in the list: refused */
	EXPECT_EQ(-1, ls_agent_find_self(&lname, "f", "node7", true, local, 3, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "--self node7 is not in f"));
	/* listed twice: by --self and by one of its addresses */
	sa(&local[1], "192.0.2.2");
	EXPECT_EQ(-1, ls_agent_find_self(&lname, "f", "node1", true, local, 3, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "f lists this node twice: node1 (--self) and 192.0.2.2"));
	/* two entries resolving to its addresses, no name: refused */
	sa(&local[2], "fd00::3");
	EXPECT_EQ(-1, ls_agent_find_self(&lip, "f", "somehost", false, local, 3, &idx, &err));
	EXPECT_NE(NULL, strstr(err.msg, "192.0.2.2 and fd00::3 are both addresses of this host"));
}

/* The host's own addresses include loopback's. */
TEST(local_addrs_has_loopback)
{
	struct sockaddr_storage *local, lo;
	struct ls_err err = { 0 };
	size_t n = 0;
	bool found = false;

	ASSERT_EQ(0, ls_agent_local_addrs(&local, &n, &err));
	sa(&lo, "127.0.0.1");
	for (size_t i = 0; i < n; i++)
		found |= local[i].ss_family == AF_INET &&
			 ((struct sockaddr_in *)&local[i])->sin_addr.s_addr ==
			 ((struct sockaddr_in *)&lo)->sin_addr.s_addr;
	EXPECT_TRUE(found);
	free(local);
}

TEST_HARNESS_MAIN
