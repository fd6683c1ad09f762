/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit tests' tables of inputs a parser must reject: each input and a
 * part of the error message it must get. Include after kselftest_harness.h.
 */
#ifndef LS_TEST_BAD_CASE_H
#define LS_TEST_BAD_CASE_H

#include <string.h>

struct bad_case {
	const char *in;		/* the input to reject */
	const char *want;	/* what its error message must contain */
};

/* The rejected case c's error message msg must contain c->want (logged when it does not). */
static inline void assert_err_has(struct __test_metadata *_metadata, const struct bad_case *c,
				  const char *msg)
{
	if (!strstr(msg, c->want))
		TH_LOG("input '%s': got '%s', want '%s'", c->in, msg, c->want);
	ASSERT_NE(NULL, strstr(msg, c->want));
}

#endif /* LS_TEST_BAD_CASE_H */
