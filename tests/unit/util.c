// SPDX-License-Identifier: GPL-2.0
/* Unit tests: parsing, CPU lists, atomic files, /proc/interrupts and /proc/softirqs parsers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "io.h"
#include "nic.h"
#include "util.h"

TEST(parse_u64_bounds)
{
	static const char *const bad[] = { "-1", "12abc", "" };	/* of 0..100 */
	struct ls_err err;
	uint64_t v;

	ASSERT_EQ(0, ls_parse_u64("42", 0, 100, &v, &err, "x"));
	EXPECT_EQ(42, v);
	EXPECT_EQ(-1, ls_parse_u64("101", 0, 100, &v, &err, "x"));
	EXPECT_NE(NULL, strstr(err.msg, "out of range"));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, ls_parse_u64(bad[i], 0, 100, &v, &err, "x")) TH_LOG("'%s'", bad[i]);
	}
	EXPECT_EQ(-1, ls_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v, &err, "x"));
}

TEST(parse_double_rejects_nan_and_garbage)
{
	static const char *const bad[] = { "nan", "inf", "-0.5", "1e" };	/* of 0..10 */
	struct ls_err err;
	double d;

	ASSERT_EQ(0, ls_parse_double("2.5", 0, 10, &d, &err, "x"));
	EXPECT_EQ(2.5, d);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, ls_parse_double(bad[i], 0, 10, &d, &err, "x")) TH_LOG("'%s'", bad[i]);
	}
}

TEST(durations_with_units)
{
	static const struct {
		const char *text;
		uint64_t ns;
	} good[] = {
		{ "2", 2000000000ull }, { "1.5ms", 1500000ull }, { "250us", 250000ull },
		{ "7ns", 7ull },
	};
	static const char *const bad[] = { "3 min", "-1s" };
	struct ls_err err;
	uint64_t ns;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		ASSERT_EQ(0, ls_parse_duration_ns(good[i].text, &ns, &err, "d"))
			TH_LOG("'%s'", good[i].text);
		EXPECT_EQ(good[i].ns, ns) TH_LOG("'%s'", good[i].text);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, ls_parse_duration_ns(bad[i], &ns, &err, "d")) TH_LOG("'%s'", bad[i]);
	}
}

TEST(cpulist_round_trip)
{
	static const char *const bad[] = { "3-1", "0,,1", "256", "a", "1-" };
	uint64_t m[LS_CPUMASK_WORDS];
	struct ls_err err;
	char buf[128];

	ASSERT_EQ(0, ls_parse_cpulist("0-3,6,64-65", m, LS_MAX_CPUS, &err));
	EXPECT_EQ(0x4full, m[0]);
	EXPECT_EQ(0x3ull, m[1]);
	ls_format_cpulist(m, LS_MAX_CPUS, buf, sizeof(buf));
	EXPECT_STREQ("0-3,6,64-65", buf);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, ls_parse_cpulist(bad[i], m, LS_MAX_CPUS, &err)) TH_LOG("'%s'", bad[i]);
	}
}

/* A scratch directory under mktemp for file tests. */
static void scratch(char *dir, size_t len)
{
	snprintf(dir, len, "%s/ls-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		abort();
}

TEST(atomic_file_whole_or_nothing)
{
	char dir[256], path[300], buf[64];
	struct ls_afile af;
	struct ls_err err;
	FILE *fp;

	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	ASSERT_EQ(0, ls_afile_open(&af, path, &err));
	fputs("partial", af.fp);
	EXPECT_NE(0, access(path, F_OK));	/* nothing visible before commit */
	ls_afile_abort(&af);
	EXPECT_NE(0, access(path, F_OK));	/* nor after an abort */
	EXPECT_NE(0, access(af.tmp, F_OK));	/* and no temp file left */

	ASSERT_EQ(0, ls_afile_open(&af, path, &err));
	fputs("whole\n", af.fp);
	ASSERT_EQ(0, ls_afile_commit(&af, &err));
	fp = fopen(path, "r");
	ASSERT_NE(NULL, fp);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), fp));
	fclose(fp);
	EXPECT_STREQ("whole\n", buf);
	unlink(path);

	snprintf(path, sizeof(path), "%s/no/such/dir/out", dir);
	EXPECT_EQ(-1, ls_afile_open(&af, path, &err));
	EXPECT_NE(NULL, strstr(err.msg, "No such file"));
	rmdir(dir);
}

TEST(err_wrap_keeps_the_cause)
{
	struct ls_err err;

	ls_errf(&err, "open /x: Permission denied");
	ls_err_wrap(&err, "backend %s", "kmod");
	EXPECT_STREQ("backend kmod: open /x: Permission denied", err.msg);
}

static const char interrupts_fixture[] =
	"           CPU0       CPU1       \n"
	"  0:         45          0   IO-APIC   2-edge      timer\n"
	" 24:       1000        234   PCI-MSI 49152-edge      virtio0-config\n"
	" 25:      77777          1   PCI-MSI 49153-edge      virtio0-input.0\n"
	"NMI:          0          0   Non-maskable interrupts\n"
	"LOC:     123456     654321   Local timer interrupts\n"
	"ERR:          0\n";

static const char softirqs_fixture[] =
	"                    CPU0       CPU1\n"
	"          HI:          1          0\n"
	"      NET_TX:         10         20\n"
	"      NET_RX:      20000         35\n";

/* Write text to a new file in a scratch dir; returns the path (static). */
static const char *fixture(const char *text)
{
	static char path[300];
	char dir[256];
	FILE *fp;

	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs(text, fp);
	fclose(fp);
	return path;
}

TEST(err_codes_decide_the_exit_status)
{
	struct ls_err err = { 0 };
	uint64_t v;

	/* bad input is a usage error, and wrapping keeps the kind */
	ASSERT_EQ(-1, ls_parse_u64("12x", 0, 100, &v, &err, "--iters"));
	EXPECT_EQ(LS_E_USAGE, err.code);
	ls_err_wrap(&err, "breakdown");
	EXPECT_EQ(LS_E_USAGE, err.code);
	EXPECT_STREQ("breakdown: --iters: '12x' is not a number", err.msg);
	/* a failed system call is I/O; ls_errf is the generic failure */
	ls_errnof(&err, ENOENT, "open %s", "x");
	EXPECT_EQ(LS_E_IO, err.code);
	ls_errf(&err, "lost");
	EXPECT_EQ(LS_E_FAILED, err.code);
	EXPECT_EQ(LS_EXIT_FAIL, ls_exit_status(&err, true));
	EXPECT_EQ(LS_EXIT_USAGE, ls_exit_status(&err, false));
	/* a peer of another protocol: no run could succeed */
	ls_errcf(&err, LS_E_PEER_PROTO, "protocol version %u", 9u);
	EXPECT_EQ(LS_EXIT_USAGE, ls_exit_status(&err, true));
	EXPECT_STREQ("protocol version 9", err.msg);
}

TEST(proc_interrupts_parser)
{
	struct ls_interrupts in;
	const struct ls_irq_row *r;
	struct ls_err err;

	ASSERT_EQ(0, ls_interrupts_read(fixture(interrupts_fixture), &in, &err));
	EXPECT_EQ(2, in.nr_cpus);
	EXPECT_EQ(1, in.cpu_ids[1]);
	r = ls_interrupts_find(&in, 25);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(77777, r->per_cpu[0]);
	EXPECT_EQ(1, r->per_cpu[1]);
	EXPECT_NE(NULL, strstr(r->desc, "virtio0-input.0"));
	EXPECT_EQ(NULL, ls_interrupts_find(&in, 26));
	/* Non-numeric rows are kept but never match an IRQ number. */
	EXPECT_EQ(6, in.nr_rows);
	ls_interrupts_free(&in);
	EXPECT_EQ(-1, ls_interrupts_read("/nonexistent/interrupts", &in, &err));
}

TEST(proc_softirqs_parser)
{
	uint64_t v[LS_MAX_CPUS];
	unsigned int n = 0;
	struct ls_err err;
	const char *p = fixture(softirqs_fixture);

	ASSERT_EQ(0, ls_softirqs_read(p, "NET_RX", v, &n, &err));
	EXPECT_EQ(2, n);
	EXPECT_EQ(20000, v[0]);
	EXPECT_EQ(35, v[1]);
	/* "NET_R" must not match NET_RX. */
	EXPECT_EQ(-1, ls_softirqs_read(p, "NET_R", v, &n, &err));
	EXPECT_EQ(-1, ls_softirqs_read(p, "BLOCK", v, &n, &err));
}

TEST(unknown_devices_list_what_exists)
{
	struct ls_nic nic;
	struct ls_err err;

	EXPECT_EQ(-1, ls_nic_resolve(NULL, "no-such-if0", &nic, &err));
	EXPECT_NE(NULL, strstr(err.msg, "present:"));
	EXPECT_NE(NULL, strstr(err.msg, "lo"));
	EXPECT_EQ(-1, ls_nic_resolve("no_such_ib0", NULL, &nic, &err));
	EXPECT_NE(NULL, strstr(err.msg, "does not exist"));
	EXPECT_EQ(-1, ls_nic_resolve(NULL, "../../etc", &nic, &err));
}

TEST_HARNESS_MAIN
