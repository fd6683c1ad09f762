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
	for (int k = 0; k < 4; k++)
		p[0].bd.sums[k] = (struct ls_summary){ .count = 100, .p50 = 1000.0 * (k + 1),
						       .mean = 1000.0 * (k + 1) };
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

TEST_HARNESS_MAIN
