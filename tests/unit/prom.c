// SPDX-License-Identifier: GPL-2.0
/*
 * tools/prom.c: the Prometheus/OpenMetrics writer. Exact expected text,
 * escaping, refusals of what would make an invalid exposition, atomic
 * replacement, and promtool (Debian's prometheus package; an oracle written
 * by the Prometheus project) accepting the output without lint problems.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prom.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* Read a whole small file into buf. */
static int slurp(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return -1;
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return 0;
}

/* Write the fleet-style document used by several tests. */
static int write_doc(const char *path, bool om, struct ls_err *err)
{
	struct ls_prom_label l[] = {
		{ "src", "node0" }, { "dst", "node\"1\"\\x\ny" }, { "part", "queuing" },
	};
	struct ls_summary s = { .count = 4, .p50 = 2000, .p90 = 3000, .p99 = 5000,
				.p999 = 5000, .mean = 2500 };
	struct ls_prom p;

	if (ls_prom_open(&p, path, om, err))
		return -1;
	if (ls_prom_family(&p, "latsplit_part_latency_seconds", LS_PROM_SUMMARY,
			   "One-way latency per part\\of the split\nper pair", err) ||
	    ls_prom_summary(&p, l, 3, &s, err) ||
	    ls_prom_family(&p, "latsplit_probe_samples_total", LS_PROM_COUNTER,
			   "Probe samples taken", err) ||
	    ls_prom_sample(&p, NULL, l, 2, 4, err) ||
	    ls_prom_family(&p, "latsplit_verdict_abnormal", LS_PROM_GAUGE,
			   "1 when the pair's p50 is above the abnormal threshold", err) ||
	    ls_prom_sample(&p, NULL, l, 2, 1, err) ||
	    ls_prom_sample(&p, NULL, NULL, 0, NAN, err) ||
	    ls_prom_sample(&p, NULL, NULL, 0, -INFINITY, err)) {
		ls_prom_abort(&p);
		return -1;
	}
	return ls_prom_commit(&p, err);
}

static const char expect_prom[] =
	"# HELP latsplit_part_latency_seconds One-way latency per part\\\\of the split\\nper pair\n"
	"# TYPE latsplit_part_latency_seconds summary\n"
	"latsplit_part_latency_seconds{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\",quantile=\"0.5\"} 2e-06\n"
	"latsplit_part_latency_seconds{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\",quantile=\"0.9\"} 3e-06\n"
	"latsplit_part_latency_seconds{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\",quantile=\"0.99\"} 5e-06\n"
	"latsplit_part_latency_seconds{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\",quantile=\"0.999\"} 5e-06\n"
	"latsplit_part_latency_seconds_sum{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\"} 1e-05\n"
	"latsplit_part_latency_seconds_count{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\",part=\"queuing\"} 4\n"
	"# HELP latsplit_probe_samples_total Probe samples taken\n"
	"# TYPE latsplit_probe_samples_total counter\n"
	"latsplit_probe_samples_total{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\"} 4\n"
	"# HELP latsplit_verdict_abnormal 1 when the pair's p50 is above the abnormal threshold\n"
	"# TYPE latsplit_verdict_abnormal gauge\n"
	"latsplit_verdict_abnormal{src=\"node0\",dst=\"node\\\"1\\\"\\\\x\\ny\"} 1\n"
	"latsplit_verdict_abnormal NaN\n"
	"latsplit_verdict_abnormal -Inf\n";

FIXTURE(dir)
{
	char dir[64];
	char path[128];
};

FIXTURE_SETUP(dir)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/prom-unit-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/m.prom", self->dir);
}

FIXTURE_TEARDOWN(dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("cleanup of %s failed", self->dir);
}

TEST_F(dir, prometheus_text_exact)
{
	struct ls_err err = { 0 };
	char buf[8192];

	ASSERT_EQ(0, write_doc(self->path, false, &err)) TH_LOG("%s", err.msg);
	ASSERT_EQ(0, slurp(self->path, buf, sizeof(buf)));
	if (strcmp(buf, expect_prom))
		TH_LOG("got:\n%s", buf);
	ASSERT_STREQ(expect_prom, buf);
}

TEST_F(dir, promtool_accepts_it)
{
	struct ls_err err = { 0 };
	char cmd[512];
	int rc;

	if (system("command -v promtool >/dev/null 2>&1"))
		SKIP(return, "promtool not installed (Debian package prometheus)");
	ASSERT_EQ(0, write_doc(self->path, false, &err));
	/* promtool prints lint problems and exits non-zero on any */
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' > '%s/lint' 2>&1",
		 self->path, self->dir);
	rc = system(cmd);
	if (rc) {
		char lint[2048];

		snprintf(cmd, sizeof(cmd), "%s/lint", self->dir);
		slurp(cmd, lint, sizeof(lint));
		TH_LOG("promtool: %s", lint);
	}
	ASSERT_EQ(0, rc);
	/* and promtool does reject a broken exposition (the oracle can fail) */
	snprintf(cmd, sizeof(cmd), "printf 'latsplit_x{a=\"1} 1\\n' | promtool check metrics "
		 ">/dev/null 2>&1");
	ASSERT_NE(0, system(cmd));
}

TEST_F(dir, openmetrics)
{
	struct ls_err err = { 0 };
	char buf[8192];

	ASSERT_EQ(0, write_doc(self->path, true, &err));
	ASSERT_EQ(0, slurp(self->path, buf, sizeof(buf)));
	/* counter family declared without _total, samples with it; ends in # EOF */
	ASSERT_NE(NULL, strstr(buf, "# TYPE latsplit_probe_samples counter\n"
				    "latsplit_probe_samples_total{"));
	ASSERT_NE(NULL, strstr(buf, "# HELP latsplit_probe_samples Probe"));
	ASSERT_EQ(0, strcmp(buf + strlen(buf) - 6, "# EOF\n"));
}

TEST_F(dir, refusals)
{
	struct ls_prom_label bad_name[] = { { "9x", "v" } };
	struct ls_prom_label reserved[] = { { "__name__", "v" } };
	struct ls_prom_label dup[] = { { "a", "1" }, { "a", "2" } };
	struct ls_err err = { 0 };
	struct ls_prom p;

	ASSERT_EQ(0, ls_prom_open(&p, self->path, false, &err));
	ASSERT_EQ(-1, ls_prom_sample(&p, NULL, NULL, 0, 1, &err));
	ASSERT_NE(NULL, strstr(err.msg, "outside a metric family"));
	ASSERT_EQ(-1, ls_prom_family(&p, "latsplit-bad", LS_PROM_GAUGE, "h", &err));
	ASSERT_EQ(-1, ls_prom_family(&p, "1latsplit", LS_PROM_GAUGE, "h", &err));
	ASSERT_EQ(-1, ls_prom_family(&p, "latsplit_x", LS_PROM_GAUGE, "", &err));
	ASSERT_EQ(-1, ls_prom_family(&p, "latsplit_drops", LS_PROM_COUNTER, "h", &err));
	ASSERT_NE(NULL, strstr(err.msg, "must end in _total"));
	ASSERT_EQ(0, ls_prom_family(&p, "latsplit_a", LS_PROM_GAUGE, "h", &err));
	ASSERT_EQ(-1, ls_prom_sample(&p, NULL, bad_name, 1, 1, &err));
	ASSERT_EQ(-1, ls_prom_sample(&p, NULL, reserved, 1, 1, &err));
	ASSERT_EQ(-1, ls_prom_sample(&p, NULL, dup, 2, 1, &err));
	ASSERT_NE(NULL, strstr(err.msg, "repeated"));
	ASSERT_EQ(0, ls_prom_family(&p, "latsplit_b_total", LS_PROM_COUNTER, "h", &err));
	ASSERT_EQ(-1, ls_prom_sample(&p, NULL, NULL, 0, -1, &err));
	ASSERT_EQ(-1, ls_prom_family(&p, "latsplit_a", LS_PROM_GAUGE, "h", &err));
	ASSERT_NE(NULL, strstr(err.msg, "must be contiguous"));
	ls_prom_abort(&p);
}

TEST_F(dir, atomic_replace)
{
	struct ls_err err = { 0 };
	struct ls_prom p;
	char buf[256];
	FILE *fp = fopen(self->path, "w");

	ASSERT_NE(NULL, fp);
	fputs("old\n", fp);
	fclose(fp);
	/* an aborted document leaves the old file and no temporary behind */
	ASSERT_EQ(0, ls_prom_open(&p, self->path, false, &err));
	ASSERT_EQ(0, ls_prom_family(&p, "latsplit_a", LS_PROM_GAUGE, "h", &err));
	ASSERT_EQ(0, ls_prom_sample(&p, NULL, NULL, 0, 1, &err));
	ls_prom_abort(&p);
	ASSERT_EQ(0, slurp(self->path, buf, sizeof(buf)));
	ASSERT_STREQ("old\n", buf);
	snprintf(buf, sizeof(buf), "test $(ls '%s' | wc -l) = 1", self->dir);
	ASSERT_EQ(0, system(buf));
	ASSERT_EQ(0, write_doc(self->path, false, &err));
	ASSERT_EQ(0, slurp(self->path, buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "# HELP latsplit_part_latency_seconds", 36));
	/* a directory that does not exist: an error naming it */
	ASSERT_EQ(-1, ls_prom_open(&p, "/nonexistent-dir/m.prom", false, &err));
	ASSERT_NE(NULL, strstr(err.msg, "/nonexistent-dir/m.prom"));
}

TEST_HARNESS_MAIN
