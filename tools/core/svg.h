/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pieces of the HTML report's inline SVG plots (latsplit report): a
 * growing text buffer with XML escaping, linear and logarithmic scales,
 * "nice" ticks (1, 2, 5 x 10^k steps; decades on a log axis), time units for
 * axis labels and polyline paths. Pure: no I/O, unit-tested on known inputs.
 */
#ifndef LS_SVG_H
#define LS_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* A growing NUL-terminated text; failed stays set after an allocation failure. */
struct ls_sb {
	char *s;
	size_t len, cap;
	bool failed;
	size_t nonfinite;	/* non-finite numbers ls_sb_num() was given (written as 0) */
};

/* Append printf-formatted text. */
void ls_sb_printf(struct ls_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Append text with &, <, >, " and ' escaped for HTML/SVG text and attributes;
 * invalid UTF-8, control characters (but tab, LF, CR) and noncharacters
 * become U+FFFD, which HTML allows.
 */
void ls_sb_esc(struct ls_sb *b, const char *text);
/* The same for the first n bytes of text. */
void ls_sb_escn(struct ls_sb *b, const char *text, size_t n);
/* Free the buffer and zero it. */
void ls_sb_free(struct ls_sb *b);

/* A number's text, for ls_sb_printf's %s (valid to the end of the full expression). */
struct ls_num {
	char s[48];
};
/*
 * v as text for an attribute or a label: prec decimals ("%.*f"), or with
 * prec < 0 the shortest exact form ("%.17g"). A non-finite v is written
 * "0" and counted in b->nonfinite, so "nan" or "inf" never reaches the page
 * and the plot can say that values were left out; |v| >= 1e15 is written
 * "%.17g" (no 300-digit "%f").
 */
struct ls_num ls_sb_num(struct ls_sb *b, double v, int prec);

/* A map from a data domain [d0, d1] to a pixel range [r0, r1]. */
struct ls_scale {
	double d0, d1, r0, r1;
	bool log;		/* log10 of the data (domain > 0) */
};

/* Set a scale; a log scale needs 0 < d0, both domains must be finite and d0 != d1. */
int ls_scale_init(struct ls_scale *s, double d0, double d1, double r0, double r1, bool log,
		  struct ls_err *err);
/* Pixel of v (not clamped); on a log scale v <= 0 maps to r0. */
double ls_scale_map(const struct ls_scale *s, double v);

/* The 1, 2 or 5 x 10^k step that cuts span into about target intervals (span > 0). */
double ls_nice_step(double span, unsigned int target);
/* Widen [*lo, *hi] outwards to multiples of its nice step (an empty range gets width). */
void ls_nice_range(double *lo, double *hi, unsigned int target);
/* Widen [*lo, *hi] (both > 0) outwards to powers of ten. */
void ls_log_range(double *lo, double *hi);
/* Ticks at multiples of the nice step inside [lo, hi]; returns how many were written. */
size_t ls_ticks_lin(double lo, double hi, unsigned int target, double *out, size_t max);
/*
 * Ticks of a log axis inside [lo, hi] (0 < lo < hi): the powers of ten, with
 * 2 and 5 x 10^k added when fewer than three decades are spanned, and
 * only every k-th power past ten decades (at most ten ticks then).
 */
size_t ls_ticks_log(double lo, double hi, double *out, size_t max);

/* A time unit for an axis whose values reach max_ns: ns, us, ms or s. */
struct ls_unit {
	const char *name;	/* "ns", "µs", "ms", "s" */
	double ns;		/* nanoseconds in one unit */
};
struct ls_unit ls_time_unit(double max_ns);
/* A tick label: v in the unit, shortest form ("0.5", "20", "1e+06" never for |v| < 1e6); "-" when not finite. */
void ls_tick_label(double v_ns, struct ls_unit u, char *buf, size_t len);

/*
 * SVG path data "M x y L x y ..." of n points through the two scales,
 * pixels rounded to 0.1; points that do not move by a tenth of a pixel
 * are left out. Non-finite points break the line (the next one starts with M),
 * and so do points whose pixel is not finite (counted in b->nonfinite); a
 * pixel is clamped to +-1e7 so the path stays plain numbers.
 */
void ls_svg_path(struct ls_sb *b, const struct ls_scale *x, const struct ls_scale *y,
		 const double *xs, const double *ys, size_t n);

#endif /* LS_SVG_H */
