// SPDX-License-Identifier: GPL-2.0
/*
 * tools/core/svg.c, the report's plot geometry: scales against hand-computed
 * pixels, nice steps and ticks (1/2/5 x 10^k) and log ticks on known ranges,
 * time units, path data (rounding, dropped repeats, breaks), and the number
 * writer that never lets "nan" or "inf" into the page.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"

/* Linear: 0..100 onto 10..210 px; reversed (SVG y grows downwards) too. */
TEST(scale_linear)
{
	struct ls_scale s;
	struct ls_err err = { 0 };

	ASSERT_EQ(0, ls_scale_init(&s, 0, 100, 10, 210, false, &err));
	EXPECT_EQ(10.0, ls_scale_map(&s, 0));
	EXPECT_EQ(110.0, ls_scale_map(&s, 50));
	EXPECT_EQ(210.0, ls_scale_map(&s, 100));
	EXPECT_LT(fabs(ls_scale_map(&s, 110) - 230), 1e-9);	/* not clamped */
	ASSERT_EQ(0, ls_scale_init(&s, 0, 1, 300, 20, false, &err));
	EXPECT_EQ(300.0, ls_scale_map(&s, 0));
	EXPECT_EQ(90.0, ls_scale_map(&s, 0.75));
}

/* Log: each decade of 1e3..1e6 takes a third of 0..300 px. */
TEST(scale_log)
{
	struct ls_scale s;
	struct ls_err err = { 0 };

	ASSERT_EQ(0, ls_scale_init(&s, 1e3, 1e6, 0, 300, true, &err));
	EXPECT_LT(fabs(ls_scale_map(&s, 1e3) - 0), 1e-9);
	EXPECT_LT(fabs(ls_scale_map(&s, 1e4) - 100), 1e-9);
	EXPECT_LT(fabs(ls_scale_map(&s, 1e5) - 200), 1e-9);
	EXPECT_LT(fabs(ls_scale_map(&s, 3162.2776601683795) - 50), 1e-6);	/* 10^3.5 */
	EXPECT_EQ(0.0, ls_scale_map(&s, 0));	/* v <= 0: the axis' start */
}

/* Bad domains are refused with a message. */
TEST(scale_bad_domain)
{
	struct ls_scale s;
	struct ls_err err = { 0 };

	EXPECT_EQ(-1, ls_scale_init(&s, 0, 10, 0, 100, true, &err));
	EXPECT_NE(NULL, strstr(err.msg, "must be > 0"));
	EXPECT_EQ(-1, ls_scale_init(&s, 5, 5, 0, 100, false, &err));
	EXPECT_EQ(-1, ls_scale_init(&s, 0, NAN, 0, 100, false, &err));
	EXPECT_EQ(-1, ls_scale_init(&s, 0, INFINITY, 0, 100, false, &err));
}

/* Nice steps: span / target rounded to 1, 2 or 5 x 10^k. */
TEST(nice_step)
{
	static const struct { double span; unsigned int target; double step; } t[] = {
		{ 100, 5, 20 }, { 100, 10, 10 }, { 1, 5, 0.2 }, { 7, 5, 1 }, { 8, 5, 2 },
		{ 3e6, 6, 5e5 }, { 0.03, 3, 0.01 }, { 8.9, 1, 10 }, { 2.4e-6, 4, 5e-7 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		EXPECT_LT(fabs(ls_nice_step(t[i].span, t[i].target) - t[i].step),
			  t[i].step * 1e-12) {
			TH_LOG("span %g target %u", t[i].span, t[i].target);
		}
	}
}

/* Ranges widen to step multiples; ticks fall on them, ends included. */
TEST(ticks_linear)
{
	double lo = 3, hi = 97, t[32];
	size_t n;

	ls_nice_range(&lo, &hi, 5);
	EXPECT_EQ(0.0, lo);
	EXPECT_EQ(100.0, hi);
	n = ls_ticks_lin(lo, hi, 5, t, 32);
	ASSERT_EQ(6, n);
	for (size_t i = 0; i < n; i++)
		EXPECT_LT(fabs(t[i] - 20.0 * i), 1e-9);
	/* rounding: 0.1 .. 0.3 by 0.05 must end at 0.3, not miss it */
	n = ls_ticks_lin(0.1, 0.3, 4, t, 32);
	ASSERT_EQ(5, n);
	EXPECT_LT(fabs(t[4] - 0.3), 1e-12);
	/* a range around zero has an exact 0 tick */
	n = ls_ticks_lin(-1, 1, 4, t, 32);
	ASSERT_EQ(5, n);
	EXPECT_EQ(0.0, t[2]);
	/* an empty range gets a width; max caps the count */
	lo = hi = 5;
	ls_nice_range(&lo, &hi, 5);
	EXPECT_LT(lo, 5.0);
	EXPECT_GT(hi, 5.0);
	EXPECT_EQ(3, ls_ticks_lin(0, 100, 10, t, 3));
	EXPECT_EQ(0, ls_ticks_lin(1, 1, 10, t, 3));
}

/* Log ticks: decades, plus 2 and 5 x 10^k over fewer than three decades. */
TEST(ticks_log)
{
	double t[64], lo = 1500, hi = 2.3e6;
	size_t n;

	ls_log_range(&lo, &hi);
	EXPECT_EQ(1e3, lo);
	EXPECT_EQ(1e7, hi);
	n = ls_ticks_log(1e3, 1e7, t, 64);
	ASSERT_EQ(5, n);
	for (size_t i = 0; i < n; i++)
		EXPECT_LT(fabs(t[i] / pow(10, 3 + i) - 1), 1e-9);
	n = ls_ticks_log(1e3, 1e5, t, 64);	/* two decades: 1, 2, 5 each */
	ASSERT_EQ(7, n);
	EXPECT_LT(fabs(t[1] - 2e3), 1e-6);
	EXPECT_LT(fabs(t[2] - 5e3), 1e-6);
	EXPECT_LT(fabs(t[6] - 1e5), 1e-6);
	n = ls_ticks_log(300, 4000, t, 64);	/* partial decades: 500, 1000, 2000 */
	ASSERT_EQ(3, n);
	EXPECT_LT(fabs(t[0] - 500), 1e-9);
	EXPECT_LT(fabs(t[2] - 2000), 1e-9);
	lo = hi = 4000;				/* one value: its decade */
	ls_log_range(&lo, &hi);
	EXPECT_EQ(1e3, lo);
	EXPECT_EQ(1e4, hi);
	EXPECT_EQ(0, ls_ticks_log(0, 10, t, 64));
	n = ls_ticks_log(1e3, 1e13, t, 64);	/* eleven decades: every second one */
	ASSERT_EQ(6, n);
	EXPECT_LT(fabs(t[1] / 1e5 - 1), 1e-9);
	EXPECT_LT(fabs(t[5] / 1e13 - 1), 1e-9);
	n = ls_ticks_log(1e-3, 1e300, t, 64);	/* 304 decades: ten ticks, up to the top */
	ASSERT_GE(10, n);
	ASSERT_LE(9, n);
	EXPECT_LT(fabs(t[0] / 1e-3 - 1), 1e-9);
	EXPECT_LT(1e260, t[n - 1]);
	n = ls_ticks_log(1e3, 1e12, t, 64);	/* ten decades: each */
	EXPECT_EQ(10, n);
}

/* Units and labels: the largest unit that keeps the maximum >= 1. */
TEST(units_labels)
{
	char b[32];

	EXPECT_STREQ("ns", ls_time_unit(999).name);
	EXPECT_STREQ("µs", ls_time_unit(1000).name);
	EXPECT_STREQ("µs", ls_time_unit(250e3).name);
	EXPECT_STREQ("ms", ls_time_unit(2e6).name);
	EXPECT_STREQ("s", ls_time_unit(3e9).name);
	EXPECT_STREQ("ns", ls_time_unit(0).name);
	ls_tick_label(2500, ls_time_unit(1e5), b, sizeof(b));
	EXPECT_STREQ("2.5", b);
	ls_tick_label(2e5, ls_time_unit(1e6), b, sizeof(b));
	EXPECT_STREQ("0.2", b);
	ls_tick_label(-1e-10, ls_time_unit(1e6), b, sizeof(b));
	EXPECT_STREQ("0", b);
}

/* Path data: 0.1 px grid, repeated pixels dropped (the last point kept), breaks. */
TEST(path)
{
	struct ls_scale x, y;
	struct ls_err err = { 0 };
	struct ls_sb b = { 0 };
	double xs[] = { 0, 1, 1.00001, 2, NAN, 3, 4 };
	double ys[] = { 0, 10, 10, 20, 5, 30, 30 };

	ASSERT_EQ(0, ls_scale_init(&x, 0, 4, 0, 400, false, &err));
	ASSERT_EQ(0, ls_scale_init(&y, 0, 40, 200, 0, false, &err));
	ls_svg_path(&b, &x, &y, xs, ys, 7);
	ASSERT_FALSE(b.failed);
	EXPECT_STREQ("M0.0 200.0 L100.0 150.0 L200.0 100.0 M300.0 50.0 L400.0 50.0", b.s);
	ls_sb_free(&b);
	ASSERT_EQ(0, ls_scale_init(&x, 1, 100, 0, 200, true, &err));
	xs[0] = 0;	/* not on a log axis */
	xs[1] = 10;
	ls_svg_path(&b, &x, &y, xs, ys, 2);
	EXPECT_STREQ("M100.0 150.0", b.s);
	ls_sb_free(&b);
	/* a fraction below one pixel keeps its sign */
	ASSERT_EQ(0, ls_scale_init(&x, 0, 1, 0, 1, false, &err));
	xs[0] = -0.25;
	ys[0] = 0;
	ls_svg_path(&b, &x, &y, xs, ys, 1);
	EXPECT_STREQ("M-0.3 200.0", b.s);	/* lround(-2.5) = -3 */
	ls_sb_free(&b);
}

/* Does s (case-insensitively) contain "nan" or "inf"? */
static bool has_nonfinite_text(const char *s)
{
	for (; *s; s++) {
		if (!strncasecmp(s, "nan", 3) || !strncasecmp(s, "inf", 3))
			return true;
	}
	return false;
}

/* The number writer: exact text of finite values, "0" and a count for the others. */
TEST(num_never_nonfinite)
{
	static const double v[] = { NAN, -NAN, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, DBL_MIN,
				    -DBL_MIN, 0.0, -0.0, 1e-300, 1e15, -1e300, 123.456 };
	static const int prec[] = { -1, 0, 1, 2, 17, 40 };
	struct ls_sb b = { 0 };
	size_t bad = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (size_t k = 0; k < sizeof(prec) / sizeof(prec[0]); k++) {
			struct ls_num n = ls_sb_num(&b, v[i], prec[k]);
			char *end;
			double back = strtod(n.s, &end);

			bad += !isfinite(v[i]);
			EXPECT_FALSE(has_nonfinite_text(n.s)) {
				TH_LOG("%g prec %d gave '%s'", v[i], prec[k], n.s);
			}
			EXPECT_EQ('\0', *end);		/* one whole number */
			EXPECT_TRUE(isfinite(back));
			if (isfinite(v[i]) && prec[k] < 0)	/* exact */
				EXPECT_EQ(v[i], back);
			if (!isfinite(v[i]))
				EXPECT_STREQ("0", n.s);
		}
	}
	EXPECT_EQ(bad, b.nonfinite);
	EXPECT_STREQ("2.50", ls_sb_num(&b, 2.5, 2).s);
	EXPECT_STREQ("0.10000000000000001", ls_sb_num(&b, 0.1, -1).s);
	EXPECT_STREQ("-3", ls_sb_num(&b, -3, 0).s);
	ls_sb_free(&b);
}

/* Labels of non-finite values are "-"; a path never holds a non-finite or huge pixel. */
TEST(nonfinite_labels_and_pixels)
{
	struct ls_scale x, y;
	struct ls_err err = { 0 };
	struct ls_sb b = { 0 };
	double xs[] = { 0.5e-300, 1e300, 1e-300 }, ys[] = { 0, 0.5, 1 };
	char t[32];

	ls_tick_label(NAN, ls_time_unit(1e6), t, sizeof(t));
	EXPECT_STREQ("-", t);
	ls_tick_label(INFINITY, ls_time_unit(1e6), t, sizeof(t));
	EXPECT_STREQ("-", t);
	/* 1e300 on [0, 1e-300] maps to an infinite pixel: left out, counted, the line broken */
	ASSERT_EQ(0, ls_scale_init(&x, 0, 1e-300, 0, 100, false, &err));
	ASSERT_EQ(0, ls_scale_init(&y, 0, 1, 100, 0, false, &err));
	ls_svg_path(&b, &x, &y, xs, ys, 3);
	EXPECT_STREQ("M50.0 100.0 M100.0 0.0", b.s);
	EXPECT_EQ(1, b.nonfinite);
	ls_sb_free(&b);
	/* a finite pixel far outside is clamped to 1e7, still a plain number */
	ASSERT_EQ(0, ls_scale_init(&x, 0, 1, 0, 1000, false, &err));
	xs[0] = 1e10;
	ls_svg_path(&b, &x, &y, xs, ys, 1);
	EXPECT_STREQ("M10000000.0 100.0", b.s);
	EXPECT_EQ(0, b.nonfinite);
	ls_sb_free(&b);
}

/* Escaping for text and attributes. */
TEST(escape)
{
	struct ls_sb b = { 0 };

	ls_sb_esc(&b, "a<b & \"c\" 'd'>");
	EXPECT_STREQ("a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;", b.s);
	ls_sb_printf(&b, "%d", 42);
	EXPECT_EQ(strlen(b.s), b.len);
	ls_sb_free(&b);
	EXPECT_EQ(NULL, b.s);
}

/* Bytes HTML forbids become U+FFFD; valid UTF-8, tab and newline are kept. */
TEST(escape_forbidden)
{
	struct ls_sb b = { 0 };

	ls_sb_esc(&b, "a\x01" "b\x7f" "c\xff" "d\xc3\xa9" "e\t\n");
	EXPECT_STREQ("a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd" "d\xc3\xa9" "e\t\n", b.s);
	ls_sb_free(&b);
	/* overlong '/', a surrogate, U+FFFF, a cut 3-byte sequence; 4-byte U+1F600 kept */
	ls_sb_esc(&b, "\xc0\xaf|\xed\xa0\x80|\xef\xbf\xbf|\xe2\x82|\xf0\x9f\x98\x80");
	EXPECT_STREQ("\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
		     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
		     "\xf0\x9f\x98\x80", b.s);
	ls_sb_free(&b);
	ls_sb_escn(&b, "ab\xc3\xa9", 3);	/* cut inside a character */
	EXPECT_STREQ("ab\xef\xbf\xbd", b.s);
	ls_sb_free(&b);
}

TEST_HARNESS_MAIN
