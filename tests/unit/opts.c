// SPDX-License-Identifier: GPL-2.0
/*
 * The commands' option layer (tools/cli/opts.c): one table fills a struct
 * of every argument kind, records which options were given, stops at the
 * first operand, and refuses bad values, unknown options and missing
 * arguments with the option's name, leaving the destination untouched.
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

/* Everything one table can fill. */
struct conf {
	bool flag;
	const char *str;
	uint32_t n;
	uint8_t small;
	double d, us_ns, frac;
	uint64_t dur_ns;
	int en;
	const char *choice;
	int hooked;
};

enum { K_SMALL = 256, K_US, K_PCT, K_EN, K_CHOICE, K_HOOK };

static const struct ls_opt_name en_names[] = { { "one", 1 }, { "two", 2 }, { NULL, 0 } };
static const struct ls_opt_name choices[] = { { "a", 0 }, { "b", 0 }, { "c", 0 }, { NULL, 0 } };

/* An LS_ARG_HOOK that counts its calls and refuses "bad". */
static int hook(void *dst, const char *arg, struct ls_err *err)
{
	if (!strcmp(arg, "bad"))
		return ls_errf(err, "--hook: 'bad' refused");
	(*(int *)dst)++;
	return 0;
}

static const struct ls_opt table[] = {
	LS_OPT_FLAG("flag", 'f', struct conf, flag),
	LS_OPT_STR("str", 's', struct conf, str),
	LS_OPT_U64("num", 'n', struct conf, n, 1, 100),
	LS_OPT_U64("small", K_SMALL, struct conf, small, 0, 255),
	LS_OPT_DBL("dbl", 'd', struct conf, d, -1, 1),
	LS_OPT_USEC("us", K_US, struct conf, us_ns, 0, 1e6),
	LS_OPT_PCT("pct", K_PCT, struct conf, frac, 0, 100),
	LS_OPT_DUR("dur", 'D', struct conf, dur_ns),
	LS_OPT_ENUM("en", K_EN, struct conf, en, en_names),
	LS_OPT_CHOICE("choice", K_CHOICE, struct conf, choice, choices),
	LS_OPT_HOOK("hook", K_HOOK, struct conf, hooked, hook),
	LS_OPT_HELPOPT,
};

static int usage_calls;
/* The command's usage: counted, printed nowhere. */
static void usage(FILE *fp)
{
	usage_calls++;
}

static const struct ls_optcmd cmd = { .name = "unit", .mode = "+", .usage = usage,
				      .quiet = true };

/* Parse a NULL-terminated argument list into c (zeroed first). */
static int parse(struct conf *c, struct ls_optgroup *g, struct ls_err *e, const char **args)
{
	char *argv[32];
	int argc = 0;

	memset(c, 0, sizeof(*c));
	memset(e, 0, sizeof(*e));
	argv[argc++] = "latsplit-unit";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	*g = (struct ls_optgroup)LS_OPTGROUP(table, c);
	return ls_opts_parse(argc, argv, &cmd, g, 1, e);
}

TEST(every_kind_is_stored)
{
	const char *args[] = { "-f", "--str", "abc", "-n", "42", "--small", "255", "-d", "-0.5",
			       "--us", "2.5", "--pct", "50", "-D", "1.5s", "--en", "two",
			       "--choice", "b", "--hook", "x", "--hook", "y", "rest", "-f", NULL };
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	ASSERT_EQ(0, parse(&c, &g, &e, args));
	EXPECT_TRUE(c.flag);
	EXPECT_STREQ("abc", c.str);
	EXPECT_EQ(42, c.n);
	EXPECT_EQ(255, c.small);
	EXPECT_EQ(-0.5, c.d);
	EXPECT_EQ(2500, c.us_ns);
	EXPECT_EQ(0.5, c.frac);
	EXPECT_EQ(1500000000ull, c.dur_ns);
	EXPECT_EQ(2, c.en);
	EXPECT_STREQ("b", c.choice);
	EXPECT_EQ(2, c.hooked);
	/* "+" mode: the first operand ends the options */
	EXPECT_EQ(24, optind);
	EXPECT_TRUE(ls_opt_given(&g, 'n'));
	EXPECT_TRUE(ls_opt_given(&g, K_HOOK));
	EXPECT_FALSE(ls_opt_given(&g, 'h'));
}

TEST(given_marks_only_what_was_given)
{
	const char *args[] = { "--pct", "0", NULL };
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	ASSERT_EQ(0, parse(&c, &g, &e, args));
	EXPECT_TRUE(ls_opt_given(&g, K_PCT));
	EXPECT_FALSE(ls_opt_given(&g, 'f'));
	EXPECT_FALSE(ls_opt_given(&g, 'n'));
	EXPECT_EQ(0, c.frac);
}

TEST(bad_values_name_the_option_and_store_nothing)
{
	static const struct {
		const char *opt, *arg, *msg;
	} bad[] = {
		{ "-n", "0", "--num" }, { "-n", "101", "--num" }, { "-n", "4x", "--num" },
		{ "-n", "-1", "--num" }, { "--small", "256", "--small" },
		{ "-d", "1.5", "--dbl" }, { "-d", "nan", "--dbl" }, { "--us", "-1", "--us" },
		{ "--pct", "101", "--pct" }, { "-D", "soon", "--dur" },
		{ "--en", "three", "--en: 'three' is not one or two" },
		{ "--choice", "d", "--choice: 'd' is not a, b or c" },
		{ "--hook", "bad", "--hook: 'bad' refused" },
	};
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = { bad[i].opt, bad[i].arg, NULL };

		EXPECT_EQ(LS_EXIT_USAGE, parse(&c, &g, &e, args)) TH_LOG("%s %s", bad[i].opt, bad[i].arg);
		EXPECT_NE(NULL, strstr(e.msg, bad[i].msg)) TH_LOG("%s %s: %s", bad[i].opt, bad[i].arg, e.msg);
		/* the destination keeps its value (zero) */
		EXPECT_EQ(0, c.n + c.small + c.d + c.us_ns + c.frac + c.dur_ns + c.en + c.hooked);
	}
}

TEST(unknown_option_and_missing_argument_are_usage_errors)
{
	const char *unknown[] = { "--nope", NULL }, *missing[] = { "-f", "--str", NULL };
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	EXPECT_EQ(LS_EXIT_USAGE, parse(&c, &g, &e, unknown));
	EXPECT_NE(0, e.msg[0]);
	EXPECT_EQ(LS_EXIT_USAGE, parse(&c, &g, &e, missing));
	EXPECT_NE(0, e.msg[0]);
	EXPECT_TRUE(c.flag);
}

TEST(help_prints_the_usage_and_stops)
{
	const char *args[] = { "-n", "5", "-h", "-n", "7", NULL };
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	usage_calls = 0;
	EXPECT_EQ(LS_OPTS_HELP, parse(&c, &g, &e, args));
	EXPECT_EQ(1, usage_calls);
	EXPECT_EQ(5, c.n);
	EXPECT_EQ(LS_EXIT_OK, ls_opts_exit(LS_OPTS_HELP, "unit", &e));
}

TEST(a_second_parse_starts_afresh)
{
	/* the first stops inside "-hf": a stale getopt would resume at its f */
	const char *first[] = { "-hf", NULL }, *second[] = { "-n", "9", NULL };
	struct ls_optgroup g;
	struct ls_err e;
	struct conf c;

	EXPECT_EQ(LS_OPTS_HELP, parse(&c, &g, &e, first));
	ASSERT_EQ(0, parse(&c, &g, &e, second));
	EXPECT_EQ(9, c.n);
	EXPECT_FALSE(c.flag);
	EXPECT_FALSE(ls_opt_given(&g, 'f'));
}

TEST_HARNESS_MAIN
