// SPDX-License-Identifier: GPL-2.0
/*
 * The report's plots as inline SVG: a CDF on a log axis, stacked part bars,
 * a CPU x stage heatmap, values over time and compare's changes. Colours
 * and dashes are CSS classes (report_html.c's style sheet), so the plots
 * follow the page's light or dark scheme and print in black on white.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"

#define PW	760	/* plot width */
#define PH	340	/* plot height (CDF, time) */
#define MR	30
#define MT	36
#define MB	52
#define NTICKS	64
#define HEAT_ZERO_OPACITY	0.04	/* a heatmap cell of 0: lighter than the smallest (0.1) */

/* A number for an attribute or label of b (never "nan" or "inf": svg.h). */
#define NUM(v, prec)	(ls_sb_num(b, (v), (prec)).s)

/* Open a figure and its SVG (height h) with the title on top; returns b's non-finite count. */
static size_t fig_open(struct ls_sb *b, const char *kind, const char *title, int h)
{
	ls_sb_printf(b, "<figure class=\"plot\" data-plot=\"%s\">\n<svg viewBox=\"0 0 %d %d\" "
		     "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"", kind, PW, h, PW, h);
	ls_sb_esc(b, title);
	ls_sb_printf(b, "\"><text class=\"title\" x=\"%d\" y=\"20\">", PW / 2);
	ls_sb_esc(b, title);
	ls_sb_printf(b, "</text>\n");
	return b->nonfinite;
}

/*
 * Close the SVG and add the caption saying how to read the plot, and how
 * many values were not finite numbers (since: fig_open's count).
 */
static void fig_close(struct ls_sb *b, const char *caption, size_t since)
{
	size_t bad = b->nonfinite - since;

	ls_sb_printf(b, "</svg>\n<figcaption>");
	ls_sb_esc(b, caption);
	if (bad)
		ls_sb_printf(b, " <strong class=\"nonfinite\">Note: %zu value%s of this plot %s not "
			     "a finite number, drawn as 0 or left out.</strong>", bad, bad > 1 ? "s" : "",
			     bad > 1 ? "were" : "was");
	ls_sb_printf(b, "</figcaption>\n</figure>\n");
}

/* A message in place of a plot that has no data. */
static void no_data(struct ls_sb *b, const char *why, int h)
{
	ls_sb_printf(b, "<text class=\"nodata\" x=\"%d\" y=\"%d\">", PW / 2, h / 2);
	ls_sb_esc(b, why);
	ls_sb_printf(b, "</text>\n");
}

/* A tick's text: the value in unit u, or a plain number when u is NULL ("-" when not finite). */
static void tick_text(double v, const struct ls_unit *u, char *buf, size_t len)
{
	if (u)
		ls_tick_label(v, *u, buf, len);
	else if (isfinite(v))
		snprintf(buf, len, "%g", v);
	else
		snprintf(buf, len, "-");
}

/*
 * An axis with its grid lines, tick labels and label: horizontal at pixel
 * "at" (the bottom) with grid lines up to "far", or vertical at pixel "at"
 * (the left) with grid lines right to "far".
 */
static void axis(struct ls_sb *b, bool vertical, const struct ls_scale *sc, const double *t,
		 size_t n, const struct ls_unit *u, const char *label, double at, double far)
{
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		double p = ls_scale_map(sc, t[i]);

		tick_text(t[i], u, buf, sizeof(buf));
		ls_sb_printf(b, "<line class=\"grid\" x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>"
			     "<text class=\"tick\" x=\"%s\" y=\"%s\" text-anchor=\"%s\">",
			     NUM(vertical ? at : p, 1), NUM(vertical ? far : p, 1),
			     NUM(vertical ? p : far, 1), NUM(vertical ? p : at, 1),
			     NUM(vertical ? at - 5 : p, 1), NUM(vertical ? p + 4 : at + 16, 1),
			     vertical ? "end" : "middle");
		ls_sb_esc(b, buf);
		ls_sb_printf(b, "</text>\n");
	}
	ls_sb_printf(b, "<line class=\"axis\" x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
		     NUM(vertical ? at : sc->r0, 1), NUM(vertical ? at : sc->r1, 1),
		     NUM(vertical ? sc->r0 : at, 1), NUM(vertical ? sc->r1 : at, 1));
	if (vertical)
		ls_sb_printf(b, "<text class=\"label\" transform=\"rotate(-90)\" x=\"%s\" y=\"14\" "
			     "text-anchor=\"middle\">", NUM(-(sc->r0 + sc->r1) / 2, 1));
	else
		ls_sb_printf(b, "<text class=\"label\" x=\"%s\" y=\"%s\" text-anchor=\"middle\">",
			     NUM((sc->r0 + sc->r1) / 2, 1), NUM(at + 38, 1));
	ls_sb_esc(b, label);
	ls_sb_printf(b, "</text>\n");
}

/* A value's text in unit u with four significant digits ("-" when not finite). */
static void val_text(double v_ns, struct ls_unit u, char *buf, size_t len)
{
	if (!isfinite(v_ns / u.ns))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.4g", fabs(v_ns) < 1e-12 ? 0.0 : v_ns / u.ns);
}

/* Axis label "what (unit)". */
static const char *unit_label(char *buf, size_t len, const char *what, struct ls_unit u,
			      const char *more)
{
	snprintf(buf, len, "%s (%s%s)", what, u.name, more);
	return buf;
}

/* A percentile marker: circle p50, square p99, diamond p99.9; data-value is exact. */
static void cdf_marker(struct ls_sb *b, const struct rp_series *l, double q, double v,
		       double px, double py, struct ls_unit u)
{
	char val[32];

	val_text(v, u, val, sizeof(val));
	if (q == 0.5)
		ls_sb_printf(b, "<circle class=\"mark s%u\" cx=\"%s\" cy=\"%s\" r=\"4\"", l->color,
			     NUM(px, 1), NUM(py, 1));
	else if (q == 0.99)
		ls_sb_printf(b, "<rect class=\"mark s%u\" x=\"%s\" y=\"%s\" width=\"7\" height=\"7\"",
			     l->color, NUM(px - 3.5, 1), NUM(py - 3.5, 1));
	else
		ls_sb_printf(b, "<path class=\"mark s%u\" d=\"M%s %s l4.5 4.5 l-4.5 4.5 l-4.5 -4.5 z\"",
			     l->color, NUM(px, 1), NUM(py - 4.5, 1));
	ls_sb_printf(b, " data-series=\"");
	ls_sb_esc(b, l->label);
	ls_sb_printf(b, "\" data-doc=\"%u\" data-q=\"%g\" data-value=\"%s\"><title>", l->doc, q,
		     NUM(v, -1));
	ls_sb_esc(b, l->label);
	ls_sb_printf(b, " p%g = %s %s</title></", q * 100, val, u.name);
	ls_sb_printf(b, "%s>\n", q == 0.5 ? "circle" : q == 0.99 ? "rect" : "path");
}

/* The most values a series holds (the samples of the largest). */
static size_t count_values(const struct rp_series *l, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		m = l[i].n > m ? l[i].n : m;
	return m;
}

/*
 * A CDF with no positive value: its axes (1 ns to 1 us) and why it is
 * empty, no samples or every sample 0 (which a log axis cannot place).
 */
static void cdf_empty(struct ls_sb *b, const struct rp_series *l, size_t n, int h)
{
	struct ls_unit u = ls_time_unit(1);
	size_t m = count_values(l, n), nt;
	double t[NTICKS];
	struct ls_scale x, y;
	struct ls_err err;
	char lab[64], why[96];

	if (!ls_scale_init(&x, 1, 1000, 72, PW - MR, true, &err) &&
	    !ls_scale_init(&y, 0, 1, h - MB, MT, false, &err)) {
		nt = ls_ticks_log(1, 1000, t, NTICKS);
		axis(b, false, &x, t, nt, &u, unit_label(lab, sizeof(lab), "latency", u, ", log scale"),
		     h - MB, MT);
		nt = ls_ticks_lin(0, 1, 4, t, NTICKS);
		axis(b, true, &y, t, nt, NULL, "fraction of samples ≤ x", 72, PW - MR);
	}
	if (!m)
		snprintf(why, sizeof(why), "no samples");
	else
		snprintf(why, sizeof(why), "%s %zu sample%s 0 ns: a log axis has no place for 0",
			 m > 1 ? "all" : "its", m, m > 1 ? "s are" : " is");	/* of every line */
	no_data(b, why, h);
}

/* Name, above the plot, the lines a log axis cannot show: every sample 0 ns. */
static void cdf_zero_lines(struct ls_sb *b, const struct rp_series *l, size_t n)
{
	size_t z = 0;

	for (size_t i = 0; i < n; i++) {
		if (!l[i].n || l[i].v[l[i].n - 1] > 0)
			continue;	/* sorted: the last is the largest */
		ls_sb_printf(b, "%s", z++ ? ", " :
			     "<text class=\"tick zero-lines\" x=\"72\" y=\"30\">not drawn (every sample 0 ns): ");
		ls_sb_esc(b, l[i].label);
	}
	if (z)
		ls_sb_printf(b, "</text>\n");
}

/* Latency CDF on a log x axis, one line per series, p50/p99/p99.9 marked. */
void rp_cdf(struct ls_sb *b, const char *title, const struct rp_series *l, size_t n,
	    const char *caption)
{
	static const double qs[] = { 0.5, 0.99, 0.999 };
	double lo = INFINITY, hi = 0, t[NTICKS], xs[514], ys[514];
	struct ls_scale x, y;
	struct ls_err err;
	struct ls_unit u;
	char lab[64];
	size_t nt, since;

	since = fig_open(b, "cdf", title, PH);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < l[i].n; k++) {
			if (l[i].v[k] > 0) {
				lo = fmin(lo, l[i].v[k]);
				break;
			}
		}
		if (l[i].n)
			hi = fmax(hi, l[i].v[l[i].n - 1]);
	}
	if (!(hi > 0)) {
		cdf_empty(b, l, n, PH);
		fig_close(b, caption, since);
		return;
	}
	ls_log_range(&lo, &hi);
	u = ls_time_unit(sqrt(lo * hi));
	if (ls_scale_init(&x, lo, hi, 72, PW - MR, true, &err) ||
	    ls_scale_init(&y, 0, 1, PH - MB, MT, false, &err)) {
		no_data(b, err.msg, PH);
		fig_close(b, caption, since);
		return;
	}
	nt = ls_ticks_log(lo, hi, t, NTICKS);
	axis(b, false, &x, t, nt, &u, unit_label(lab, sizeof(lab), "latency", u, ", log scale"),
	       PH - MB, MT);
	nt = ls_ticks_lin(0, 1, 4, t, NTICKS);
	axis(b, true, &y, t, nt, NULL, "fraction of samples ≤ x", 72, PW - MR);
	cdf_zero_lines(b, l, n);
	for (size_t i = 0; i < n; i++) {
		size_t m = l[i].n, k = m < 512 ? m : 512, np = 0;

		if (!m)
			continue;
		/* at most 513 quantile points: the rank r's value and (r + 1) / m */
		for (size_t j = 0; j <= k && k; j++) {
			size_t r = (size_t)llround((double)j * (double)(m - 1) / (double)k);

			xs[np] = l[i].v[r];
			ys[np++] = (double)(r + 1) / (double)m;
		}
		ls_sb_printf(b, "<path class=\"line s%u d%u\" data-doc=\"%u\" data-series=\"", l[i].color,
			     l[i].dash, l[i].doc);
		ls_sb_esc(b, l[i].label);
		ls_sb_printf(b, "\" d=\"");
		ls_svg_path(b, &x, &y, xs, ys, np);
		ls_sb_printf(b, "\"/>\n");
		for (size_t q = 0; q < ARRAY_SIZE(qs); q++) {
			double v = ls_quantile_sorted(l[i].v, m, qs[q]);

			if (v > 0)
				cdf_marker(b, &l[i], qs[q], v, ls_scale_map(&x, v),
					   ls_scale_map(&y, qs[q]), u);
		}
	}
	fig_close(b, caption, since);
}

/* The largest bar (its total or its parts' sum). */
static double bars_max(const struct rp_bar *bars, size_t n)
{
	double hi = 0;

	for (size_t i = 0; i < n; i++)
		hi = fmax(hi, fmax(bars[i].total, bars[i].part[0] + bars[i].part[1] + bars[i].part[2]));
	return hi;
}

/* Stacked horizontal bars of the three parts, one bar per percentile (and document). */
void rp_stacked(struct ls_sb *b, const char *title, const char *const part_names[3],
		const struct rp_bar *bars, size_t n, const char *caption)
{
	int bh = 20, gap = 8, h = MT + 10 + (int)n * (bh + gap) + MB;
	double lo = 0, hi = 0, t[NTICKS], y0 = MT + 10;
	struct ls_scale x;
	struct ls_err err;
	struct ls_unit u;
	char lab[64], val[32];
	size_t nt, since;

	since = fig_open(b, "stack", title, h);
	hi = bars_max(bars, n);
	if (!(hi > 0))
		hi = 1;		/* all 0 (or none): the axis of 0 to 1 ns, said below */
	ls_nice_range(&lo, &hi, 6);
	u = ls_time_unit(hi);
	if (ls_scale_init(&x, 0, hi, 96, PW - MR - 70, false, &err)) {
		no_data(b, err.msg, h);
		fig_close(b, caption, since);
		return;
	}
	nt = ls_ticks_lin(0, hi, 6, t, NTICKS);
	axis(b, false, &x, t, nt, &u, unit_label(lab, sizeof(lab), "mean one-way time of the samples at that percentile", u, ""),
	       h - MB, MT);
	if (!n || !(bars_max(bars, n) > 0))
		no_data(b, n ? "every part is 0 ns at every percentile" : "no samples", h);
	for (size_t i = 0; i < n; i++) {
		double yb = y0 + (double)i * (bh + gap), acc = 0;

		ls_sb_printf(b, "<text class=\"tick\" x=\"90\" y=\"%s\" text-anchor=\"end\">",
			     NUM(yb + bh - 5, 1));
		ls_sb_esc(b, bars[i].label);
		ls_sb_printf(b, "</text>\n");
		for (int p = 0; p < 3; p++) {
			double x0 = ls_scale_map(&x, acc), x1 = ls_scale_map(&x, acc + bars[i].part[p]);

			val_text(bars[i].part[p], u, val, sizeof(val));
			/* result k: opacity k % 4, outlined from the fifth, so A..H each look apart */
			ls_sb_printf(b, "<rect class=\"seg s%d f%u%s\" x=\"%s\" y=\"%s\" width=\"%s\" "
				     "height=\"%d\" data-bar=\"", p + 1, bars[i].doc % 4,
				     bars[i].doc % 8 >= 4 ? " o1" : "", NUM(x0, 1), NUM(yb, 1),
				     NUM(fmax(0, x1 - x0), 1), bh);
			ls_sb_esc(b, bars[i].label);
			ls_sb_printf(b, "\" data-part=\"");
			ls_sb_esc(b, part_names[p]);
			ls_sb_printf(b, "\" data-value=\"%s\"><title>", NUM(bars[i].part[p], -1));
			ls_sb_esc(b, bars[i].label);
			ls_sb_printf(b, " ");
			ls_sb_esc(b, part_names[p]);
			ls_sb_printf(b, ": %s %s</title></rect>\n", val, u.name);
			acc += bars[i].part[p];
		}
		val_text(bars[i].total, u, val, sizeof(val));
		ls_sb_printf(b, "<text class=\"tick\" x=\"%s\" y=\"%s\">%s %s</text>\n",
			     NUM(ls_scale_map(&x, acc) + 4, 1), NUM(yb + bh - 5, 1), val, u.name);
	}
	fig_close(b, caption, since);
}

/* Index of s in names[0..*n), added when new. */
static size_t name_slot(const char **names, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(names[i], s))
			return i;
	}
	names[*n] = s;
	return (*n)++;
}

/* Ascending longs for qsort. */
static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* A name as a label of at most max bytes: cut at a character, "..." added; the full name in its title. */
static void cut_label(struct ls_sb *b, const char *s, size_t max)
{
	size_t len = strlen(s), cut = len;

	if (len > max) {
		cut = max > 3 ? max - 3 : 0;
		while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;	/* not inside a UTF-8 sequence */
	}
	ls_sb_printf(b, "<title>");
	ls_sb_esc(b, s);
	ls_sb_printf(b, "</title>");
	if (cut == len) {
		ls_sb_esc(b, s);
		return;
	}
	ls_sb_escn(b, s, cut);
	ls_sb_printf(b, "...");
}

/*
 * One host's panel: CPUs as rows, stages as columns; returns its height.
 * cpus has room for n CPUs.
 */
static int heat_panel(struct ls_sb *b, const char *host, const struct rp_cell *c, size_t n,
		      const char **stages, size_t nst, long *cpus, double vmin, double vmax,
		      struct ls_unit u, int y0)
{
	size_t ncpu = 0;
	double cw = (PW - 90 - MR) / (double)(nst ? nst : 1), ch = 22;
	/* a label fits its column (about 6 px a character), a cell's value only a wide one */
	size_t lab_max = cw / 6 > 4 ? (size_t)(cw / 6) : 4;
	bool values = cw >= 36;
	char val[32];

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		if (strcmp(c[i].host, host))
			continue;
		for (size_t k = 0; k < ncpu; k++)
			seen |= cpus[k] == c[i].cpu;
		if (!seen)
			cpus[ncpu++] = c[i].cpu;
	}
	qsort(cpus, ncpu, sizeof(*cpus), cmp_long);
	ls_sb_printf(b, "<text class=\"label\" x=\"8\" y=\"%d\">host: ", y0 + 12);
	ls_sb_esc(b, host);
	ls_sb_printf(b, "</text>\n");
	y0 += 18;
	for (size_t k = 0; k < nst; k++) {
		ls_sb_printf(b, "<text class=\"tick\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">",
			     NUM(90 + cw * ((double)k + 0.5), 1), y0 + 10);
		cut_label(b, stages[k], lab_max);
		ls_sb_printf(b, "</text>\n");
	}
	y0 += 16;
	for (size_t r = 0; r < ncpu; r++) {
		ls_sb_printf(b, "<text class=\"tick\" x=\"84\" y=\"%s\" text-anchor=\"end\">CPU %ld</text>\n",
			     NUM(y0 + ch * (double)r + 15, 1), cpus[r]);
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = 0, k = 0;
		double op;

		if (strcmp(c[i].host, host))
			continue;
		while (r < ncpu && cpus[r] != c[i].cpu)
			r++;
		while (k < nst && strcmp(stages[k], c[i].stage))
			k++;
		/* log scale from the smallest positive cell (0.1) to the largest (1); 0 lightest */
		if (!(c[i].value_ns > 0))
			op = HEAT_ZERO_OPACITY;
		else if (vmax > vmin)
			op = 0.1 + 0.9 * fmax(0, fmin(1, log(c[i].value_ns / vmin) / log(vmax / vmin)));
		else
			op = 1;
		val_text(c[i].value_ns, u, val, sizeof(val));
		ls_sb_printf(b, "<rect class=\"cell%s\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" "
			     "fill-opacity=\"%s\" data-host=\"", c[i].verdict ? " verdict" : "",
			     NUM(90 + cw * (double)k + 1, 1), NUM(y0 + ch * (double)r + 1, 1),
			     NUM(fmax(cw - 2, 1), 1), NUM(ch - 2, 1), NUM(op, 2));
		ls_sb_esc(b, host);
		ls_sb_printf(b, "\" data-cpu=\"%ld\" data-stage=\"", c[i].cpu);
		ls_sb_esc(b, c[i].stage);
		ls_sb_printf(b, "\" data-value=\"%s\"><title>CPU %ld ", NUM(c[i].value_ns, -1), c[i].cpu);
		ls_sb_esc(b, c[i].stage);
		ls_sb_printf(b, ": %s %s per sample%s</title></rect>", val, u.name,
			     c[i].verdict ? " (the verdict's CPU)" : "");
		if (values)
			ls_sb_printf(b, "<text class=\"cellv\" x=\"%s\" y=\"%s\" text-anchor=\"middle\" "
				     "paint-order=\"stroke\">%s</text>",
				     NUM(90 + cw * ((double)k + 0.5), 1), NUM(y0 + ch * (double)r + 15, 1), val);
		ls_sb_printf(b, "\n");
	}
	return 34 + (int)(ch * (double)ncpu) + 10;
}

/*
 * Per-host CPU x stage heatmap of a time (what); the verdict's cell outlined.
 * Every cell is drawn: as many hosts, stages and CPUs as the cells name.
 */
void rp_heatmap(struct ls_sb *b, const char *title, const char *what, const struct rp_cell *c,
		size_t n, const char *caption)
{
	const char **stages = calloc(n + 1, sizeof(*stages)), **hosts = calloc(n + 1, sizeof(*hosts));
	long *cpus = calloc(n + 1, sizeof(*cpus));
	size_t nst = 0, nh = 0;
	double vmin = INFINITY, vmax = 0;
	struct ls_sb body = { 0 };
	struct ls_unit u;
	char lab[160];
	size_t since;
	int y = MT;

	if (!stages || !hosts || !cpus) {
		b->failed = true;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		name_slot(stages, &nst, c[i].stage);
		name_slot(hosts, &nh, c[i].host);
		if (c[i].value_ns > 0 && isfinite(c[i].value_ns)) {
			vmin = fmin(vmin, c[i].value_ns);
			vmax = fmax(vmax, c[i].value_ns);
		}
	}
	u = ls_time_unit(vmax);
	for (size_t h = 0; h < nh; h++)
		y += heat_panel(&body, hosts[h], c, n, stages, nst, cpus, vmin, vmax, u, y);
	since = fig_open(b, "heatmap", title, y + 40);
	if (!n) {
		no_data(b, "no kernel time attributed to any CPU (kernel side unmeasured?)", y + 40);
	} else {
		ls_sb_printf(b, "%s", body.s ? body.s : "");
		snprintf(lab, sizeof(lab), "rows: CPU; columns: stage; cell: %s (%s)", what, u.name);
		ls_sb_printf(b, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", PW / 2,
			     y + 24);
		ls_sb_esc(b, lab);
		ls_sb_printf(b, "</text>\n");
	}
	if (body.failed)
		b->failed = true;
	b->nonfinite += body.nonfinite;
	fig_close(b, caption, since);
out:
	ls_sb_free(&body);
	free(stages);
	free(hosts);
	free(cpus);
}

/* One series over time: raw, or min-max band and median per pixel column. */
static void time_series(struct ls_sb *b, const struct rp_series *s, const struct ls_scale *x,
			const struct ls_scale *y, size_t cols)
{
	double *xs, *band, *md, *tmp;
	size_t nc = 0;

	if (s->n <= cols) {
		xs = malloc(s->n * sizeof(*xs) + 1);
		if (!xs) {
			b->failed = true;
			return;
		}
		for (size_t i = 0; i < s->n; i++)
			xs[i] = (double)i;
		if (s->n == 1)	/* a path of one point draws nothing */
			ls_sb_printf(b, "<circle class=\"dot s%u\" cx=\"%s\" cy=\"%s\" r=\"3\"/>\n",
				     s->color, NUM(ls_scale_map(x, 0), 1), NUM(ls_scale_map(y, s->v[0]), 1));
		ls_sb_printf(b, "<path class=\"line s%u d%u\" d=\"", s->color, s->dash);
		ls_svg_path(b, x, y, xs, s->v, s->n);
		ls_sb_printf(b, "\"/>\n");
		free(xs);
		return;
	}
	/* the band runs along the maxima left to right, back along the minima */
	xs = malloc(cols * 2 * sizeof(double));
	band = malloc(cols * 2 * sizeof(double));
	md = malloc(cols * sizeof(double));
	tmp = malloc((s->n / cols + 2) * sizeof(double));
	if (!xs || !band || !md || !tmp) {
		b->failed = true;
		goto out;
	}
	for (size_t j = 0; j < cols; j++) {
		size_t a = j * s->n / cols, e = (j + 1) * s->n / cols;

		if (e <= a)
			continue;
		memcpy(tmp, s->v + a, (e - a) * sizeof(double));
		ls_sort_doubles(tmp, e - a);
		band[nc] = tmp[e - a - 1];
		band[2 * cols - 1 - nc] = tmp[0];
		md[nc] = tmp[(e - a) / 2];
		xs[nc] = (double)(a + e - 1) / 2;
		xs[2 * cols - 1 - nc] = xs[nc];
		nc++;
	}
	/* close the gap when some columns were empty: minima follow the maxima */
	memmove(band + nc, band + 2 * cols - nc, nc * sizeof(double));
	memmove(xs + nc, xs + 2 * cols - nc, nc * sizeof(double));
	ls_sb_printf(b, "<path class=\"band s%u\" d=\"", s->color);
	ls_svg_path(b, x, y, xs, band, 2 * nc);
	ls_sb_printf(b, " Z\"/>\n<path class=\"line s%u d%u\" d=\"", s->color, s->dash);
	ls_svg_path(b, x, y, xs, md, nc);
	ls_sb_printf(b, "\"/>\n");
out:
	free(xs);
	free(band);
	free(md);
	free(tmp);
}

/* Values over time (sample index), decimated to min/max/median per pixel column. */
void rp_time(struct ls_sb *b, const char *title, const struct rp_series *s, size_t n,
	     const char *caption)
{
	double lo = 0, hi = 0, t[NTICKS];
	size_t nmax = 0, cols = PW - 72 - MR, nt, since, ni = 0;
	bool zero;
	struct ls_scale x, y;
	struct ls_err err;
	struct ls_unit u;
	char lab[64];

	since = fig_open(b, "time", title, PH);
	for (size_t i = 0; i < n; i++) {
		nmax = s[i].n > nmax ? s[i].n : nmax;
		for (size_t k = 0; k < s[i].n; k++)
			hi = fmax(hi, s[i].v[k]);
	}
	zero = !(hi > 0);
	if (zero)
		hi = 1;		/* all 0 (or none): the axis of 0 to 1 ns, said below */
	ls_nice_range(&lo, &hi, 5);
	u = ls_time_unit(hi);
	/* one sample (or none): an axis of samples 0 and 1, the sample a dot */
	if (ls_scale_init(&x, 0, nmax > 1 ? (double)(nmax - 1) : 1, 72, PW - MR, false, &err) ||
	    ls_scale_init(&y, 0, hi, PH - MB, MT, false, &err)) {
		no_data(b, err.msg, PH);
		fig_close(b, caption, since);
		return;
	}
	ls_sb_printf(b, "<g data-samples=\"%zu\" data-columns=\"%zu\" data-decimated=\"%d\">\n", nmax,
		     cols, nmax > cols);
	/* sample numbers are whole: a few samples get no ticks between them */
	nt = ls_ticks_lin(0, nmax > 1 ? (double)(nmax - 1) : 0, 6, t, NTICKS);
	for (size_t i = 0; i < nt; i++) {
		if (t[i] == floor(t[i]))
			t[ni++] = t[i];
	}
	if (nmax <= 1) {
		t[0] = 0;	/* the one sample's number */
		ni = 1;
	}
	axis(b, false, &x, t, ni, NULL, "sample number (measurement order)", PH - MB, MT);
	nt = ls_ticks_lin(0, hi, 5, t, NTICKS);
	axis(b, true, &y, t, nt, &u, unit_label(lab, sizeof(lab), "latency", u, ""), 72, PW - MR);
	for (size_t i = 0; i < n; i++)
		time_series(b, &s[i], &x, &y, cols);
	ls_sb_printf(b, "</g>\n");
	if (!nmax)
		no_data(b, "no samples", PH);
	else if (zero)
		no_data(b, nmax > 1 ? "every sample is 0 ns" : "its one sample is 0 ns", PH);
	fig_close(b, caption, since);
}

/* compare's rows: p50 and p99 change bars around zero; significant ones filled. */
void rp_changes(struct ls_sb *b, const char *title, const struct rp_change *c, size_t n,
		const char *caption)
{
	int bh = 9, rowh = 26, h = MT + 10 + (int)n * rowh + MB;
	double m = 1, t[NTICKS], lo, y0 = MT + 10;
	struct ls_scale x;
	struct ls_err err;
	size_t nt, since;

	since = fig_open(b, "changes", title, h);
	for (size_t i = 0; i < n; i++) {
		if (isfinite(c[i].p50_pct))
			m = fmax(m, fabs(c[i].p50_pct));
		if (isfinite(c[i].p99_pct))
			m = fmax(m, fabs(c[i].p99_pct));
	}
	lo = -m;
	ls_nice_range(&lo, &m, 3);
	m = fmax(-lo, m);
	if (ls_scale_init(&x, -m, m, 230, PW - MR, false, &err)) {
		no_data(b, err.msg, h);
		fig_close(b, caption, since);
		return;
	}
	nt = ls_ticks_lin(-m, m, 6, t, NTICKS);
	axis(b, false, &x, t, nt, NULL, "change of B against A (%)", h - MB, MT);
	if (!n)
		no_data(b, "no distributions in this comparison", h);
	for (size_t i = 0; i < n; i++) {
		double yb = y0 + (double)i * rowh, x0 = ls_scale_map(&x, 0);
		double v[2] = { c[i].p50_pct, c[i].p99_pct };
		int d[2] = { c[i].dir50, c[i].dir99 };

		ls_sb_printf(b, "<text class=\"tick\" x=\"224\" y=\"%s\" text-anchor=\"end\">",
			     NUM(yb + 13, 1));
		ls_sb_esc(b, c[i].label);
		ls_sb_printf(b, "</text>\n");
		for (int k = 0; k < 2; k++) {
			double x1 = isfinite(v[k]) ? ls_scale_map(&x, v[k]) : x0;

			/* a change that is not a number (A's percentile 0) has no bar and says so */
			ls_sb_printf(b, "<rect class=\"seg s%d%s\" x=\"%s\" y=\"%s\" width=\"%s\" "
				     "height=\"%d\" data-q=\"%s\"%s%s%s data-significant=\"%d\">"
				     "<title>%s ", k + 1, d[k] ? "" : " hollow", NUM(fmin(x0, x1), 1),
				     NUM(yb + k * (bh + 1), 1), NUM(fabs(x1 - x0), 1), bh,
				     k ? "p99" : "p50", isfinite(v[k]) ? " data-value=\"" : "",
				     isfinite(v[k]) ? NUM(v[k], -1) : "", isfinite(v[k]) ? "\"" : "",
				     d[k], k ? "p99" : "p50");
			if (isfinite(v[k]))
				ls_sb_printf(b, "%s%s %%", v[k] >= 0 ? "+" : "", NUM(v[k], 1));
			else
				ls_sb_printf(b, "change not defined");
			ls_sb_printf(b, "%s</title></rect>\n", d[k] ? " (significant)" : " (not significant)");
		}
	}
	fig_close(b, caption, since);
}

/* The legend below a plot: one swatch (palette colour, document dash) per label. */
void rp_legend(struct ls_sb *b, const char *const *labels, const unsigned int *color,
	       const unsigned int *doc, size_t n)
{
	ls_sb_printf(b, "<ul class=\"legend\">");
	for (size_t i = 0; i < n; i++) {
		ls_sb_printf(b, "<li><span class=\"sw s%u d%u\"></span>", color[i], doc ? doc[i] : 0);
		ls_sb_esc(b, labels[i]);
		ls_sb_printf(b, "</li>");
	}
	ls_sb_printf(b, "</ul>\n");
}
