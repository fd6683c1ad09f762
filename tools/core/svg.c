// SPDX-License-Identifier: GPL-2.0
/* Scales, ticks, labels and paths for the report's inline SVG (svg.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

/* Make room for need more bytes (and the NUL); false once allocation failed. */
static bool sb_reserve(struct ls_sb *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *s;

	if (b->failed)
		return false;
	while (cap < b->len + need + 1)
		cap *= 2;
	if (cap == b->cap)
		return true;
	s = realloc(b->s, cap);
	if (!s) {
		b->failed = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

/* Append printf-formatted text. */
void ls_sb_printf(struct ls_sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !sb_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Append n raw bytes. */
static void sb_put(struct ls_sb *b, const char *s, size_t n)
{
	if (sb_reserve(b, n)) {
		memcpy(b->s + b->len, s, n);
		b->len += n;
		b->s[b->len] = '\0';
	}
}

/*
 * Length of the UTF-8 character at p (n bytes left) that HTML allows, or 0:
 * a malformed, overlong or surrogate sequence, a code point past U+10FFFF,
 * a control character (but tab, LF and CR) or a noncharacter.
 */
static size_t utf8_ok(const unsigned char *p, size_t n)
{
	size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 :
		     p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	unsigned int cp;

	if (!len || len > n)
		return 0;
	cp = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 0;
	return len;
}

/*
 * Append n bytes of text with the five XML special characters escaped; a
 * byte that does not start a character HTML allows becomes U+FFFD.
 */
void ls_sb_escn(struct ls_sb *b, const char *text, size_t n)
{
	const unsigned char *p = (const unsigned char *)text;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_ok(p + i, n - i);

		switch (len ? p[i] : 0) {
		case 0: sb_put(b, "\xef\xbf\xbd", 3); len = 1; break;	/* U+FFFD */
		case '&': ls_sb_printf(b, "&amp;"); break;
		case '<': ls_sb_printf(b, "&lt;"); break;
		case '>': ls_sb_printf(b, "&gt;"); break;
		case '"': ls_sb_printf(b, "&quot;"); break;
		case '\'': ls_sb_printf(b, "&#39;"); break;
		default: sb_put(b, text + i, len);
		}
		i += len;
	}
}

/* Append text with the five XML special characters escaped (and bad bytes as U+FFFD). */
void ls_sb_esc(struct ls_sb *b, const char *text)
{
	ls_sb_escn(b, text, strlen(text));
}

/* Free the buffer and zero it. */
void ls_sb_free(struct ls_sb *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* v's text with prec decimals (prec < 0: exact); a non-finite v is "0" and counted. */
struct ls_num ls_sb_num(struct ls_sb *b, double v, int prec)
{
	struct ls_num n;

	if (!isfinite(v)) {
		b->nonfinite++;
		snprintf(n.s, sizeof(n.s), "0");
	} else if (prec < 0 || fabs(v) >= 1e15) {
		snprintf(n.s, sizeof(n.s), "%.17g", v);
	} else {
		snprintf(n.s, sizeof(n.s), "%.*f", prec > 17 ? 17 : prec, v);
	}
	return n;
}

/* Set a scale after checking its domain. */
int ls_scale_init(struct ls_scale *s, double d0, double d1, double r0, double r1, bool log,
		  struct ls_err *err)
{
	if (!isfinite(d0) || !isfinite(d1) || !isfinite(r0) || !isfinite(r1) || d0 == d1)
		return ls_errf(err, "scale: empty or non-finite domain [%g, %g]", d0, d1);
	if (log && (d0 <= 0 || d1 <= 0))
		return ls_errf(err, "log scale: domain [%g, %g] must be > 0", d0, d1);
	*s = (struct ls_scale){ d0, d1, r0, r1, log };
	return 0;
}

/* Pixel of v: linear interpolation, in log10 on a log scale. */
double ls_scale_map(const struct ls_scale *s, double v)
{
	double t;

	if (s->log) {
		if (v <= 0)
			return s->r0;
		t = (log10(v) - log10(s->d0)) / (log10(s->d1) - log10(s->d0));
	} else {
		t = (v - s->d0) / (s->d1 - s->d0);
	}
	return s->r0 + t * (s->r1 - s->r0);
}

/* The 1/2/5 x 10^k step nearest span / target, at least span / (2 target). */
double ls_nice_step(double span, unsigned int target)
{
	double raw = span / (target ? target : 1);
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;

	if (f < 1.5)
		return mag;
	if (f < 3.5)
		return 2 * mag;
	if (f < 7.5)
		return 5 * mag;
	return 10 * mag;
}

/* Widen [*lo, *hi] to multiples of the nice step. */
void ls_nice_range(double *lo, double *hi, unsigned int target)
{
	double step;

	if (!(*hi > *lo)) {
		double w = *lo ? fabs(*lo) / 2 : 1;

		*lo -= w;
		*hi += w;
	}
	step = ls_nice_step(*hi - *lo, target);
	*lo = floor(*lo / step + 1e-9) * step;
	*hi = ceil(*hi / step - 1e-9) * step;
}

/* Widen [*lo, *hi] to powers of ten (a single value gets its decade). */
void ls_log_range(double *lo, double *hi)
{
	double a = floor(log10(*lo) + 1e-9), b = ceil(log10(*hi) - 1e-9);

	if (b <= a)
		b = a + 1;
	*lo = pow(10, a);
	*hi = pow(10, b);
}

/* Multiples of the nice step within [lo, hi], tolerant of rounding at the ends. */
size_t ls_ticks_lin(double lo, double hi, unsigned int target, double *out, size_t max)
{
	double step, eps;
	size_t n = 0;

	if (!(hi > lo))
		return 0;
	step = ls_nice_step(hi - lo, target);
	eps = step * 1e-9;
	for (double k = ceil(lo / step - 1e-9); n < max; k++) {
		double v = k * step;

		if (v > hi + eps)
			break;
		out[n++] = fabs(v) < eps ? 0 : v;
	}
	return n;
}

/*
 * Powers of ten in [lo, hi]; with fewer than three decades also 2 and 5 x
 * 10^k; past ten decades every k-th power only, so at most about ten.
 */
size_t ls_ticks_log(double lo, double hi, double *out, size_t max)
{
	static const double sub[] = { 1, 2, 5 };
	double a, b, step;
	bool fine;
	size_t n = 0;

	if (!(lo > 0) || !(hi > lo))
		return 0;
	a = floor(log10(lo) + 1e-9);
	b = floor(log10(hi) + 1e-9);
	fine = b - a < 3;
	step = b - a + 1 > 10 ? ceil((b - a + 1) / 10) : 1;
	for (double e = a; e <= b && n < max; e += step) {
		for (size_t i = 0; i < (fine ? ARRAY_SIZE(sub) : 1) && n < max; i++) {
			double v = sub[i] * pow(10, e);

			if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
				out[n++] = v;
		}
	}
	return n;
}

/* The largest of ns, µs, ms, s that keeps max_ns at 1 unit or more. */
struct ls_unit ls_time_unit(double max_ns)
{
	static const struct ls_unit units[] = {
		{ "s", 1e9 }, { "ms", 1e6 }, { "µs", 1e3 }, { "ns", 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (fabs(max_ns) >= units[i].ns)
			return units[i];
	}
	return units[ARRAY_SIZE(units) - 1];
}

/* v_ns in unit u, %g with up to 6 significant digits. */
void ls_tick_label(double v_ns, struct ls_unit u, char *buf, size_t len)
{
	double v = v_ns / u.ns;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf, len, "%.6g", fabs(v) < 1e-12 ? 0.0 : v);
}

/* Polyline path data; a tenth-of-a-pixel grid, repeated points dropped. */
void ls_svg_path(struct ls_sb *b, const struct ls_scale *x, const struct ls_scale *y,
		 const double *xs, const double *ys, size_t n)
{
	long px = 0, py = 0;
	bool pen = false;

	for (size_t i = 0; i < n; i++) {
		double fx, fy;
		long ix, iy;

		if (!isfinite(xs[i]) || !isfinite(ys[i]) || (x->log && xs[i] <= 0) ||
		    (y->log && ys[i] <= 0)) {
			pen = false;
			continue;
		}
		fx = ls_scale_map(x, xs[i]);
		fy = ls_scale_map(y, ys[i]);
		if (!isfinite(fx) || !isfinite(fy)) {
			b->nonfinite++;
			pen = false;
			continue;
		}
		fx = fmax(-1e7, fmin(1e7, fx));
		fy = fmax(-1e7, fmin(1e7, fy));
		ix = lround(fx * 10);
		iy = lround(fy * 10);
		if (pen && ix == px && iy == py && i + 1 < n)
			continue;
		ls_sb_printf(b, "%s%s%ld.%ld %s%ld.%ld", b->len && pen ? " L" : (b->len ? " M" : "M"),
			     ix < 0 ? "-" : "", labs(ix) / 10, labs(ix) % 10,
			     iy < 0 ? "-" : "", labs(iy) / 10, labs(iy) % 10);
		pen = true;
		px = ix;
		py = iy;
	}
}
