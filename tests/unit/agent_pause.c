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

/* A --pause-idle responder context with the fake backend open (as bd_start leaves it). */
FIXTURE(resp)
{
	struct bd_cli c;
	struct bd_ctx x;
	struct ls_backend b;
	struct ls_err err;
};

FIXTURE_SETUP(resp)
{
	memset(self, 0, sizeof(*self));
	self->c.pause_idle = true;
	self->x.c = &self->c;
	self->x.ops = &fake_ops;
	self->x.b = &self->b;
}

FIXTURE_TEARDOWN(resp)
{
}

TEST_F(resp, paused_while_idle_recording_in_session)
{
	/* run_responder: right after the backend opened */
	ASSERT_EQ(0, bd_idle_pause(&self->x, true, &self->err));
	EXPECT_TRUE(self->b.paused);
	/* an authenticated prober: resumed before its session runs */
	ASSERT_EQ(0, bd_on_session_start(&self->x, &self->err));
	EXPECT_FALSE(self->b.paused);
	EXPECT_EQ(2, self->b.calls);
	/* the session ended (failed: the responder waits for the next prober) */
	bd_on_session_end(&self->x, -1);
	EXPECT_TRUE(self->b.paused);
	EXPECT_EQ(3, self->b.calls);
	/* a second pause is no call: the state is known */
	ASSERT_EQ(0, bd_idle_pause(&self->x, true, &self->err));
	EXPECT_EQ(3, self->b.calls);
}

TEST_F(resp, without_the_option_nothing_pauses)
{
	self->c.pause_idle = false;
	ASSERT_EQ(0, bd_idle_pause(&self->x, true, &self->err));
	ASSERT_EQ(0, bd_on_session_start(&self->x, &self->err));
	bd_on_session_end(&self->x, 0);
	EXPECT_EQ(0, self->b.calls);
	EXPECT_FALSE(self->b.paused);
}

TEST_F(resp, no_backend_open_is_no_call)
{
	/* --backend none, or auto without a usable backend */
	self->x.ops = NULL;
	ASSERT_EQ(0, bd_idle_pause(&self->x, true, &self->err));
	ASSERT_EQ(0, bd_on_session_start(&self->x, &self->err));
	EXPECT_EQ(0, self->b.calls);
}

TEST_F(resp, a_backend_that_cannot_pause_is_an_error)
{
	self->x.ops = &nopause_ops;
	ASSERT_NE(0, bd_idle_pause(&self->x, true, &self->err));
	EXPECT_NE(NULL, strstr(self->err.msg, "the nopause backend cannot pause"));
}

TEST_F(resp, a_failed_resume_refuses_the_session)
{
	ASSERT_EQ(0, bd_idle_pause(&self->x, true, &self->err));
	self->b.fail = true;
	/* a session that would not be recorded is refused, not served unmeasured */
	ASSERT_NE(0, bd_on_session_start(&self->x, &self->err));
	EXPECT_NE(NULL, strstr(self->err.msg, "resume the fake backend"));
	EXPECT_TRUE(self->b.paused);
}

TEST_HARNESS_MAIN
