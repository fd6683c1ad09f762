// SPDX-License-Identifier: GPL-2.0
/*
 * tools/breakdown/session.c's --pause-idle (the agent's breakdown
 * responder): with the option the backend is paused right after it opens,
 * resumed when an authenticated prober's session begins (before the probe
 * runs) and paused again when the session ends; without it no pause call
 * is ever made (the responder records from the start, as before); a
 * backend that cannot pause is an error naming it. The backend is a fake
 * whose pause() records every call and the state it leaves.
 */
#include <stdio.h>
#include <string.h>

#include "bd.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* The fake backend's state: paused or not, and how many pause calls came. */
struct ls_backend {
	bool paused;
	int calls;
	bool fail;
};

/* Fake pause: record the call, fail when told to. */
static int fake_pause(struct ls_backend *b, bool paused, struct ls_err *err)
{
	b->calls++;
	if (b->fail)
		return ls_errf(err, "refused");
	b->paused = paused;
	return 0;
}

static const struct ls_backend_ops fake_ops = { .name = "fake", .pause = fake_pause };
static const struct ls_backend_ops nopause_ops = { .name = "nopause" };

/* A responder context with the fake backend open (as bd_start leaves it). */
static void setup(struct bd_cli *c, struct bd_ctx *x, struct ls_backend *b, bool pause_idle,
		  const struct ls_backend_ops *ops)
{
	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(*x));
	memset(b, 0, sizeof(*b));
	c->pause_idle = pause_idle;
	x->c = c;
	x->ops = ops;
	x->b = b;
}

TEST(paused_while_idle_recording_in_session)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err = { 0 };

	setup(&c, &x, &b, true, &fake_ops);
	/* run_responder: right after the backend opened */
	ASSERT_EQ(0, bd_idle_pause(&x, true, &err));
	EXPECT_TRUE(b.paused);
	/* an authenticated prober: resumed before its session runs */
	ASSERT_EQ(0, bd_on_session_start(&x, &err));
	EXPECT_FALSE(b.paused);
	EXPECT_EQ(2, b.calls);
	/* the session ended (failed: the responder waits for the next prober) */
	bd_on_session_end(&x, -1);
	EXPECT_TRUE(b.paused);
	EXPECT_EQ(3, b.calls);
	/* a second pause is no call: the state is known */
	ASSERT_EQ(0, bd_idle_pause(&x, true, &err));
	EXPECT_EQ(3, b.calls);
}

TEST(without_the_option_nothing_pauses)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err = { 0 };

	setup(&c, &x, &b, false, &fake_ops);
	ASSERT_EQ(0, bd_idle_pause(&x, true, &err));
	ASSERT_EQ(0, bd_on_session_start(&x, &err));
	bd_on_session_end(&x, 0);
	EXPECT_EQ(0, b.calls);
	EXPECT_FALSE(b.paused);
}

TEST(no_backend_open_is_no_call)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err = { 0 };

	/* --backend none, or auto without a usable backend */
	setup(&c, &x, &b, true, NULL);
	ASSERT_EQ(0, bd_idle_pause(&x, true, &err));
	ASSERT_EQ(0, bd_on_session_start(&x, &err));
	EXPECT_EQ(0, b.calls);
}

TEST(a_backend_that_cannot_pause_is_an_error)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err = { 0 };

	setup(&c, &x, &b, true, &nopause_ops);
	ASSERT_NE(0, bd_idle_pause(&x, true, &err));
	EXPECT_NE(NULL, strstr(err.msg, "the nopause backend cannot pause"));
}

TEST(a_failed_resume_refuses_the_session)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err = { 0 };

	setup(&c, &x, &b, true, &fake_ops);
	ASSERT_EQ(0, bd_idle_pause(&x, true, &err));
	b.fail = true;
	/* a session that would not be recorded is refused, not served unmeasured */
	ASSERT_NE(0, bd_on_session_start(&x, &err));
	EXPECT_NE(NULL, strstr(err.msg, "resume the fake backend"));
	EXPECT_TRUE(b.paused);
}

TEST_HARNESS_MAIN
