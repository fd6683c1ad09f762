// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for a responder's limits on what a prober may ask: a HELLO or
 * RUN against the limits is accepted, or refused with a text naming the
 * limit and the option that raises it; a RUN's samples are its planned
 * count; the wait for END is the run's own length plus slack, capped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "probe.h"

/* The lab-sized limits of these tests: 1 MiB, 1M per run, 2M per session, 10 s. */
static const struct ls_probe_limits lim = {
	.max_size = 1u << 20,
	.max_samples = 1000000,
	.max_session_samples = 2000000,
	.max_run_ns = 10000000000ull,
};

/* A HELLO of one 4 B WRITE run of 1000 iterations. */
static struct ls_oob_hello hello(void)
{
	struct ls_oob_hello h = { .verb = LS_OOB_VERB_WRITE, .iters = 1000, .capacity = 1000,
				  .nsizes = 1, .sizes = { 4 } };
	return h;
}

/* The refusal's text has want, fits an ERROR frame, and the error is of kind code. */
static int refused(const struct ls_err *err, enum ls_err_code code, const char *want)
{
	if (!strstr(err->msg, want) || err->code != code || strlen(err->msg) > LS_OOB_TEXT_MAX) {
		fprintf(stderr, "# got '%s' (code %d), want '%s' (code %d)\n", err->msg,
			err->code, want, code);
		return 0;
	}
	return 1;
}

TEST(hello_within_limits_is_accepted)
{
	struct ls_oob_hello h = hello();
	struct ls_err err = { 0 };

	EXPECT_EQ(0, ls_probe_check_hello(&h, &lim, 0, &err));
	h.sizes[0] = 1u << 20;			/* exactly the limit */
	h.iters = h.capacity = 1000000;
	h.nsizes = 2;
	h.sizes[1] = 4;
	EXPECT_EQ(0, ls_probe_check_hello(&h, &lim, 1u << 30, &err));
	h = hello();				/* a duration run of exactly the limit */
	h.iters = 0;
	h.duration_ns = 10000000000ull;
	h.capacity = 1000000;
	EXPECT_EQ(0, ls_probe_check_hello(&h, &lim, 0, &err));
}

TEST(hello_over_a_limit_names_it_and_its_option)
{
	struct ls_oob_hello h = hello();
	struct ls_err err = { 0 };

	h.sizes[0] = 1u << 30;
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 0, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "size 1073741824 exceeds the responder's limit "
			    "of 1048576 bytes (raise it with --max-size)"));
	h.sizes[0] = 65536;			/* within the limit, over the device */
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 32768, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "max message size 32768"));

	h = hello();
	h.verb = LS_OOB_VERB_READ;
	h.iters = h.capacity = 1u << 23;
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 0, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "8388608 iterations exceed the responder's limit "
			    "of 1000000 samples per run (raise it with --max-samples)"));

	h = hello();
	h.iters = 0;
	h.duration_ns = 1000000000ull;
	h.capacity = 1u << 23;
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 0, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "capacity of 8388608 samples exceeds the "
			    "responder's limit of 1000000 samples per run (raise it with --max-samples)"));

	h.capacity = 1000;
	h.duration_ns = 10000000001ull;
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 0, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "(raise it with --max-run-time)"));

	h = hello();
	h.nsizes = 32;
	h.iters = h.capacity = 100000;
	ASSERT_EQ(-1, ls_probe_check_hello(&h, &lim, 0, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "32 runs of 100000 samples exceed the responder's "
			    "limit of 2000000 samples per session (raise it with --max-session-samples)"));
}

TEST(run_samples_are_its_planned_count)
{
	struct ls_oob_hello h = hello();
	struct ls_oob_run rm = { .index = 0, .size = 4, .count = 1000 };
	struct ls_err err = { 0 };
	uint64_t cap = 0;

	ASSERT_EQ(0, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_EQ(1000, cap);
	/* A duration run planning fewer than its capacity gets what it plans. */
	h.iters = 0;
	h.duration_ns = 1000000000ull;
	h.capacity = 500000;
	rm.count = 2000;
	ASSERT_EQ(0, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_EQ(2000, cap);
	rm.count = 0;				/* no plan: the HELLO's capacity */
	ASSERT_EQ(0, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_EQ(500000, cap);
}

TEST(run_over_a_limit_or_off_the_hello_is_refused)
{
	struct ls_oob_hello h = hello();
	struct ls_oob_run rm = { .index = 0, .size = 4, .count = 1001 };
	struct ls_err err = { 0 };
	uint64_t cap = 0;

	ASSERT_EQ(-1, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_TRUE(refused(&err, LS_E_PEER_PROTO, "RUN 0 plans 1001 samples, HELLO allowed 1000"));
	rm.count = 1000;
	rm.size = 8;
	ASSERT_EQ(-1, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_TRUE(refused(&err, LS_E_PEER_PROTO, "RUN 0 of size 8 does not follow HELLO"));
	rm.size = 4;
	rm.index = 1;
	ASSERT_EQ(-1, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_TRUE(refused(&err, LS_E_PEER_PROTO, "does not follow HELLO"));
	/* The session's earlier runs count against its limit. */
	rm.index = 0;
	ASSERT_EQ(-1, ls_probe_check_run(&rm, &h, &lim, 1999500, &cap, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "1000 more samples after 1999500 kept exceed the "
			    "responder's limit of 2000000 per session (raise it with --max-session-samples)"));
	ASSERT_EQ(0, ls_probe_check_run(&rm, &h, &lim, 1999000, &cap, &err));
	/* A HELLO accepted under larger limits cannot slip a RUN past smaller ones. */
	h.iters = h.capacity = 2000000;
	rm.count = 2000000;
	ASSERT_EQ(-1, ls_probe_check_run(&rm, &h, &lim, 0, &cap, &err));
	EXPECT_TRUE(refused(&err, LS_E_LIMIT, "per run (raise it with --max-samples)"));
}

TEST(end_wait_is_the_runs_length_plus_slack_capped)
{
	struct ls_oob_hello h = hello();
	const uint64_t w = 3000000000ull;

	/* 1000 iterations of at most one wait each: capped at 10 s + 2 waits. */
	EXPECT_EQ(16000000000ull, ls_probe_run_wait_ns(&h, 1000, w, &lim));
	/* 2 iterations: 2 waits + 1. */
	EXPECT_EQ(9000000000ull, ls_probe_run_wait_ns(&h, 2, w, &lim));
	/* A 2 s duration run: 2 s + 2 waits. */
	h.iters = 0;
	h.duration_ns = 2000000000ull;
	EXPECT_EQ(8000000000ull, ls_probe_run_wait_ns(&h, 1000, w, &lim));
	/* 2^23 READ iterations of 10 s waits are not 24.9 days: 10 s + 20 s. */
	h = hello();
	EXPECT_EQ(30000000000ull, ls_probe_run_wait_ns(&h, 1u << 23, 10000000000ull, &lim));
	/* No overflow on absurd inputs. */
	EXPECT_EQ(10000000000ull + 2 * (UINT64_MAX / 4),
		  ls_probe_run_wait_ns(&h, UINT64_MAX, UINT64_MAX / 4, &lim));
}

TEST(default_limits_fit_a_default_prober)
{
	struct ls_probe_opts o;
	struct ls_err err = { 0 };

	ls_probe_opts_init(&o);
	EXPECT_EQ(LS_PROBE_DEF_MAX_SIZE, o.lim.max_size);
	EXPECT_EQ(LS_PROBE_DEF_MAX_SAMPLES, o.lim.max_samples);
	EXPECT_EQ(LS_PROBE_DEF_MAX_SESSION, o.lim.max_session_samples);
	EXPECT_EQ(LS_PROBE_DEF_MAX_RUN_NS, o.lim.max_run_ns);
	/* The prober's auto capacity with -D tops out at 2^22: within the default. */
	EXPECT_LE(1ull << 22, o.lim.max_samples);
	/* The -a sweep's largest size (8 MiB) is within the default. */
	EXPECT_LE(8u << 20, o.lim.max_size);
	o.peer = NULL;
	o.insecure = true;	/* a responder needs a key or says it has none */
	EXPECT_EQ(0, ls_probe_opts_check(&o, false, &err)) TH_LOG("%s", err.msg);
	o.lim.max_run_ns = 0;
	EXPECT_EQ(-1, ls_probe_opts_check(&o, false, &err));
	EXPECT_NE(NULL, strstr(err.msg, "--max-run-time must be positive"));
}

TEST_HARNESS_MAIN
