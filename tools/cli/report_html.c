// SPDX-License-Identifier: GPL-2.0
/*
 * The report's page: a style sheet for light, dark and print, one section
 * per result (or one A/B section when every result is of the same kind),
 * each with its plots (report_plots.c) and its facts beside them.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "report.h"
#include "stats.h"


/* The light scheme's colours: the page's default, and print's whatever the reader prefers. */
#define LIGHT_PALETTE \
	"--bg:#fff;--fg:#1b1f24;--muted:#57606a;--grid:#d8dee4;" \
	"--c0:#1f2328;--c1:#0969da;--c2:#bc4c00;--c3:#1a7f37;--c4:#8250df;--c5:#cf222e;" \
	"--c6:#0a7d8c;--c7:#9a6700;--heat:#bc4c00;--accent:#cf222e"

static const char css[] =
	":root{color-scheme:light dark;" LIGHT_PALETTE "}\n"
	"@media (prefers-color-scheme: dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;"
	"--grid:#30363d;--c0:#e6edf3;--c1:#58a6ff;--c2:#ffa657;--c3:#3fb950;--c4:#bc8cff;"
	"--c5:#ff7b72;--c6:#39c5cf;--c7:#e3b341;--heat:#ffa657;--accent:#ff7b72}}\n"
	"body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif;margin:1.5rem}\n"
	"h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid var(--grid)}"
	"h3{font-size:1rem;margin:.8rem 0 .3rem}\n"
	".row{display:grid;grid-template-columns:minmax(0,780px) minmax(16rem,1fr);gap:1.5rem;align-items:start}\n"
	"@media (max-width:1100px){.row{grid-template-columns:1fr}}\n"
	"figure.plot{margin:0 0 1.4rem}figcaption{color:var(--muted);font-size:.85rem;max-width:760px}\n"
	"svg{max-width:100%;height:auto;font:11px system-ui,sans-serif}\n"
	"svg text{fill:var(--fg)}svg .title{font-size:14px;font-weight:600;text-anchor:middle}\n"
	"svg .label{font-size:12px}svg .tick{fill:var(--muted)}svg .nodata{text-anchor:middle;fill:var(--muted)}\n"
	".grid{stroke:var(--grid);stroke-width:1}.axis{stroke:var(--fg);stroke-width:1}\n"
	".line{fill:none;stroke-width:1.8}.band{stroke:none;fill-opacity:.22}\n"
	".mark{stroke:var(--bg);stroke-width:1}\n"
	".d1{stroke-dasharray:7 4}.d2{stroke-dasharray:2 3}.d3{stroke-dasharray:10 3 2 3}\n"
	/* a stacked bar's result: four opacities, then the same with an outline (A..H) */
	".f1{fill-opacity:.7}.f2{fill-opacity:.45}.f3{fill-opacity:.25}.seg.o1{stroke:var(--fg);stroke-width:1.5}"
	".hollow{fill-opacity:.15}\n"
	".cell{fill:var(--heat)}.cell.verdict{stroke:var(--accent);stroke-width:3}\n"
	".cellv{font-size:10px;stroke:var(--bg);stroke-width:3px}\n"
	".s0{stroke:var(--c0);fill:var(--c0)}.s1{stroke:var(--c1);fill:var(--c1)}"
	".s2{stroke:var(--c2);fill:var(--c2)}.s3{stroke:var(--c3);fill:var(--c3)}"
	".s4{stroke:var(--c4);fill:var(--c4)}.s5{stroke:var(--c5);fill:var(--c5)}"
	".s6{stroke:var(--c6);fill:var(--c6)}.s7{stroke:var(--c7);fill:var(--c7)}\n"
	".line.s0,.line.s1,.line.s2,.line.s3,.line.s4,.line.s5,.line.s6,.line.s7{fill:none}\n"
	".band.s0,.band.s1,.band.s2,.band.s3,.band.s4,.band.s5,.band.s6,.band.s7{stroke:none}\n"
	".seg{stroke:none}\n"
	"ul.legend{list-style:none;padding:0;margin:.2rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;font-size:.85rem}\n"
	/* legend swatches: the plot line's colour and its dash pattern (d1 7-4, d2 2-3, d3 10-3-2-3) */
	".sw{display:inline-block;width:2.4em;height:3px;margin-right:.4em;vertical-align:middle;"
	"background:currentColor;-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
	".sw.s0{color:var(--c0)}.sw.s1{color:var(--c1)}.sw.s2{color:var(--c2)}"
	".sw.s3{color:var(--c3)}.sw.s4{color:var(--c4)}.sw.s5{color:var(--c5)}"
	".sw.s6{color:var(--c6)}.sw.s7{color:var(--c7)}\n"
	".sw.d1{background:repeating-linear-gradient(90deg,currentColor 0 7px,transparent 7px 11px)}"
	".sw.d2{background:repeating-linear-gradient(90deg,currentColor 0 2px,transparent 2px 5px)}"
	".sw.d3{background:repeating-linear-gradient(90deg,currentColor 0 10px,transparent 10px 13px,"
	"currentColor 13px 15px,transparent 15px 18px)}\n"
	".failure{color:var(--accent);font-weight:600}\n"
	"table{border-collapse:collapse;font-size:.85rem;margin-bottom:.6rem}"
	"td,th{border-bottom:1px solid var(--grid);padding:.15rem .5rem;text-align:left;vertical-align:top}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}.verdict-text{font-weight:600}\n"
	"@media print{:root{color-scheme:light;" LIGHT_PALETTE ";--fg:#000;--muted:#333;--grid:#bbb}"
	"body{margin:0}.row{grid-template-columns:1fr}figure.plot,table{break-inside:avoid}}\n";

static const char *const part_keys[3] = { "transmission", "queuing", "processing" };

/* A time in ns with a unit for text ("-" when NAN). */
void rh_fmt_time(double ns, char *buf, size_t len)
{
	struct ls_unit u = ls_time_unit(ns);
	char v[32];

	if (!isfinite(ns)) {
		snprintf(buf, len, "-");
		return;
	}
	ls_tick_label(ns, u, v, sizeof(v));
	snprintf(buf, len, "%.4g %s", atof(v), u.name);
}

/* One scalar as text: times for keys ending in _ns, whole numbers exactly, else %.6g. */
static void scalar_text(struct ls_sb *b, const char *key, const struct ls_jv *v)
{
	char buf[64];
	size_t kl = strlen(key);

	switch (v->type) {
	case LS_JNULL: ls_sb_printf(b, "-"); break;
	case LS_JBOOL: ls_sb_printf(b, "%s", v->b ? "yes" : "no"); break;
	case LS_JSTR: ls_sb_esc(b, v->str.s); break;
	case LS_JNUM:
		if ((kl > 3 && !strcmp(key + kl - 3, "_ns")) || !strcmp(key, "ns")) {
			rh_fmt_time(v->num, buf, sizeof(buf));
			ls_sb_esc(b, buf);
		} else if (v->num == floor(v->num) && fabs(v->num) < 1e18) {
			ls_sb_printf(b, "%.0f", v->num);	/* 1000000, a qpn or psn: every digit */
		} else {
			ls_sb_printf(b, "%.6g", v->num);
		}
		break;
	default: ls_sb_printf(b, "[%zu]", v->type == LS_JARR ? v->arr.n : v->obj.n);
	}
}

/* Table rows key: value for obj's scalars, nested objects under dotted keys. */
static void kv_rows(struct ls_sb *b, const char *prefix, const struct ls_jv *obj, int depth)
{
	for (size_t i = 0; obj && obj->type == LS_JOBJ && i < obj->obj.n; i++) {
		const struct ls_jmember *m = &obj->obj.m[i];
		char key[256];

		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", m->key);
		if (m->val.type == LS_JOBJ) {
			if (depth < 3)
				kv_rows(b, key, &m->val, depth + 1);
			continue;
		}
		if (m->val.type == LS_JARR)
			continue;
		ls_sb_printf(b, "<tr><th scope=\"row\">");
		ls_sb_esc(b, key);
		ls_sb_printf(b, "</th><td>");
		scalar_text(b, m->key, &m->val);
		ls_sb_printf(b, "</td></tr>\n");
	}
}

/* A titled key/value table of an object (nothing when absent). */
void rh_kv_table(struct ls_sb *b, const char *title, const struct ls_jv *obj)
{
	if (!obj || obj->type != LS_JOBJ)
		return;
	ls_sb_printf(b, "<h3>");
	ls_sb_esc(b, title);
	ls_sb_printf(b, "</h3>\n<table class=\"kv\"><tbody>\n");
	kv_rows(b, "", obj, 0);
	ls_sb_printf(b, "</tbody></table>\n");
}

/* A string member as escaped text, or "-". */
void rh_jstr(struct ls_sb *b, const struct ls_jv *obj, const char *key)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	if (v && v->type == LS_JSTR)
		ls_sb_esc(b, v->str.s);
	else if (v)
		scalar_text(b, key, v);
	else
		ls_sb_printf(b, "-");
}

/* One table cell per key (up to NULL): the member as text, numbers right-aligned. */
void rh_td_fields(struct ls_sb *b, const struct ls_jv *obj, const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++) {
		const struct ls_jv *v = ls_jv_get(obj, keys[i]);

		ls_sb_printf(b, "<td%s>", v && v->type == LS_JNUM ? " class=\"n\"" : "");
		rh_jstr(b, obj, keys[i]);
		ls_sb_printf(b, "</td>");
	}
}

/* Literal HTML and members of obj in turn: parts[0] text, parts[1] a key, ... up to NULL. */
static void text_fields(struct ls_sb *b, const struct ls_jv *obj, const char *const *parts)
{
	for (size_t i = 0; parts[i]; i++) {
		if (i % 2)
			rh_jstr(b, obj, parts[i]);
		else
			ls_sb_printf(b, "%s", parts[i]);
	}
}

/* The breakdown verdict in words. */
static void bd_verdict(struct ls_sb *b, const struct ls_jv *root, bool outlined)
{
	const struct ls_jv *v = ls_jv_get(root, "verdict"), *f, *cpu;
	bool withheld = false;

	if (!v)
		return;
	ls_jv_bool(v, "withheld", &withheld);
	ls_sb_printf(b, "<h3>Verdict</h3>\n<p class=\"verdict-text\">%s",
		     withheld ? "(withheld: attribution unreliable) " : "");
	text_fields(b, v, (const char *const[]){ "p50: ", "level_p50", "; p99: ", "level_p99",
			".<br>Dominant at p50: ", "dominant_p50", "; in the tail: ", "dominant_tail",
			".<br>Look next at: ", "next_layer", "</p>\n<p>", "next_why", "</p>\n", NULL });
	cpu = ls_jv_get(v, "cpu");
	if (cpu && cpu->type == LS_JOBJ)
		text_fields(b, cpu, (const char *const[]){ "<p>CPU to look at: ", "host", " CPU ", "cpu",
				", stage ", "stage", outlined ? " (outlined in the heatmap)</p>\n" :
				" (not in the heatmap: no stages entry for it)</p>\n", NULL });
	f = ls_jv_get(v, "findings");
	if (f && f->type == LS_JARR && f->arr.n) {
		ls_sb_printf(b, "<ul>\n");
		for (size_t i = 0; i < f->arr.n; i++) {
			ls_sb_printf(b, "<li>");
			rh_jstr(b, &f->arr.v[i], "layer");
			ls_sb_printf(b, ": ");
			rh_jstr(b, &f->arr.v[i], "text");
			ls_sb_printf(b, "</li>\n");
		}
		ls_sb_printf(b, "</ul>\n");
	}
}

/* The counters that moved during the run. */
static void bd_counters(struct ls_sb *b, const struct ls_jv *root)
{
	const struct ls_jv *c = ls_jv_get(root, "counters");
	size_t moved = 0, all = c && c->type == LS_JARR ? c->arr.n : 0;

	ls_sb_printf(b, "<h3>Counters that moved</h3>\n<table>\n<thead><tr><th scope=\"col\">host</th><th scope=\"col\">counter</th>"
		     "<th scope=\"col\">class</th><th scope=\"col\">delta</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < all; i++) {
		const struct ls_jv *e = &c->arr.v[i];
		bool m = false;
		double d = 0;

		if (!ls_jv_bool(e, "moved", &m) || !m)
			continue;
		moved++;
		ls_jv_num(e, "delta", &d);
		ls_sb_printf(b, "<tr>");
		rh_td_fields(b, e, (const char *const[]){ "host", "name", "class", NULL });
		ls_sb_printf(b, "<td class=\"n\">%.0f</td></tr>\n", d);
	}
	ls_sb_printf(b, "</tbody></table>\n<p>%zu of %zu counters moved.</p>\n", moved, all);
}

/*
 * obj's samples_ns (copied; *n = 0 when absent), what naming obj for the
 * message: a value that is not a finite number >= 0 is refused (jseries.c
 * refuses it first, with its line and column; this keeps NAN out of the
 * sorts and the plots whatever reaches here).
 */
static int samples_of(const struct ls_rdoc *d, const struct ls_jv *obj, const char *what,
		      double **out, size_t *n, struct ls_err *err)
{
	const struct ls_jv *a = ls_jv_get(obj, "samples_ns");

	*out = NULL;
	*n = 0;
	if (!a || a->type != LS_JARR || !a->arr.n)
		return 0;
	for (size_t i = 0; i < a->arr.n; i++) {
		const struct ls_jv *x = &a->arr.v[i];

		if (x->type != LS_JNUM || !isfinite(x->num) || x->num < 0)
			return ls_errf(err, "%s: %s.samples_ns[%zu] is not a finite number >= 0",
				       d->name, what, i);
	}
	*out = malloc(a->arr.n * sizeof(double));
	if (!*out)
		return ls_errf(err, "out of memory for %zu samples", a->arr.n);
	for (size_t i = 0; i < a->arr.n; i++)
		(*out)[i] = a->arr.v[i].num;
	*n = a->arr.n;
	return 0;
}

/* A sorted copy of v. */
double *rh_sorted_copy(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(double) + 1);

	if (s && n) {
		memcpy(s, v, n * sizeof(double));
		ls_sort_doubles(s, n);
	}
	return s;
}

/* One breakdown's four series (total and the parts) in measurement order and sorted. */
struct bd_vals {
	double *v[4], *sorted[4];
	size_t n[4];
};

/* Read total and parts of a breakdown document. */
static int bd_load(const struct ls_rdoc *d, struct bd_vals *bv, struct ls_err *err)
{
	const struct ls_jv *root = &d->docs[0].root, *parts = ls_jv_get(root, "parts");

	memset(bv, 0, sizeof(*bv));
	if (samples_of(d, ls_jv_get(root, "total"), "total", &bv->v[0], &bv->n[0], err))
		return -1;
	for (int p = 0; p < 3; p++) {
		char what[32];

		snprintf(what, sizeof(what), "parts.%s", part_keys[p]);
		if (samples_of(d, ls_jv_get(parts, part_keys[p]), what, &bv->v[p + 1], &bv->n[p + 1], err))
			return -1;
		if (bv->n[p + 1] != bv->n[0])
			return ls_errf(err, "%s: parts.%s has %zu samples, total %zu", d->name,
				       part_keys[p], bv->n[p + 1], bv->n[0]);
	}
	if (!bv->n[0])
		return ls_errf(err, "%s: a breakdown without samples cannot be drawn "
			       "(total.samples_ns is absent or empty)", d->name);
	for (int s = 0; s < 4; s++) {
		bv->sorted[s] = rh_sorted_copy(bv->v[s], bv->n[s]);
		if (!bv->sorted[s])
			return ls_errf(err, "out of memory");
	}
	return 0;
}

/* Free what bd_load read. */
static void bd_free(struct bd_vals *bv)
{
	for (int s = 0; s < 4; s++) {
		free(bv->v[s]);
		free(bv->sorted[s]);
	}
}

/* qsort_r of sample indices by their total (arg), ties by index. */
static int cmp_by_total(const void *a, const void *b, void *arg)
{
	const double *total = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (total[i] != total[j])
		return total[i] < total[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * The parts' means over the samples whose total ranks within 0.5 % of n
 * around q's nearest rank, the window narrowed to stay centred near the top.
 */
static void bd_bar(const struct bd_vals *bv, const size_t *order, double q, struct rp_bar *bar)
{
	size_t n = bv->n[0], r = (size_t)ceil(q * (double)n), w = n / 200, a, e;

	r = r ? r - 1 : 0;
	if (w > n - 1 - r)
		w = n - 1 - r;
	a = r > w ? r - w : 0;
	e = r + w;
	memset(bar->part, 0, sizeof(bar->part));
	bar->total = 0;
	for (size_t k = a; k <= e; k++) {
		for (int p = 0; p < 3; p++)
			bar->part[p] += bv->v[p + 1][order[k]];
		bar->total += bv->v[0][order[k]];
	}
	for (int p = 0; p < 3; p++)
		bar->part[p] /= (double)(e - a + 1);
	bar->total /= (double)(e - a + 1);
}

/* Member key of obj as a string in the document, or NULL. */
static const char *jstr(const struct ls_jv *obj, const char *key)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	return v && v->type == LS_JSTR ? v->str.s : NULL;
}

/*
 * The heatmap cells of a breakdown's stages (full names), the verdict's one
 * marked; *marked says whether there was one.
 */
static int bd_cells(const struct ls_jv *root, struct rp_cell **out, size_t *n, bool *marked,
		    struct ls_err *err)
{
	const struct ls_jv *st = ls_jv_get(root, "stages"), *vc = ls_jv_get(ls_jv_get(root, "verdict"), "cpu");
	const char *vh = NULL, *vs = NULL;
	uint64_t vcpu = UINT64_MAX;

	*n = 0;
	*marked = false;
	*out = calloc(st && st->type == LS_JARR ? st->arr.n + 1 : 1, sizeof(**out));
	if (!*out)
		return ls_errf(err, "out of memory");
	if (vc && vc->type == LS_JOBJ) {
		vh = jstr(vc, "host");
		vs = jstr(vc, "stage");
		ls_jv_u64(vc, "cpu", &vcpu);
	}
	for (size_t i = 0; st && st->type == LS_JARR && i < st->arr.n; i++) {
		struct rp_cell *c = &(*out)[*n];
		uint64_t cpu = 0;

		c->host = jstr(&st->arr.v[i], "host");
		c->stage = jstr(&st->arr.v[i], "stage");
		if (!c->host || !c->stage ||
		    !ls_jv_u64(&st->arr.v[i], "cpu", &cpu) || cpu > LONG_MAX ||
		    !ls_jv_num(&st->arr.v[i], "mean_ns", &c->value_ns))
			continue;
		c->cpu = (long)cpu;	/* an integer >= 0, checked above */
		c->verdict = vh && vs && !strcmp(c->host, vh) && !strcmp(c->stage, vs) && cpu == vcpu;
		*marked |= c->verdict;
		(*n)++;
	}
	return 0;
}

/* A letter for the k-th document of an A/B view. */
char rh_doc_letter(size_t k)
{
	return (char)('A' + (k % 26));
}

/* End the plots' column and open the facts beside them, named after the results. */
void rh_aside_open(struct ls_sb *b, const struct ls_rdoc *d, size_t n)
{
	ls_sb_printf(b, "</div>\n<aside class=\"facts\" aria-label=\"facts of ");
	ls_sb_esc(b, d[0].kind);
	for (size_t k = 0; k < n; k++) {
		ls_sb_printf(b, " ");
		ls_sb_esc(b, d[k].name);
	}
	ls_sb_printf(b, "\">\n");
}

/* compare's rows of d[1..n) against d[0], as latsplit compare's defaults judge them (alpha 0.01). */
int rh_ab_build(const struct ls_rdoc *d, size_t n, struct rh_ab *ab, struct ls_err *err)
{
	static const struct ls_cmp_params prm = { .alpha = 0.01, .max_regress = NAN };

	memset(ab, 0, sizeof(*ab));
	if (n > RH_MAX_AB)
		return ls_errf(err, "an A/B view of %zu results (at most %d)", n, RH_MAX_AB);
	for (size_t k = 1; k < n; k++) {
		if (ls_cmp_build(&prm, &d[0].set, &d[k].set, &ab->rows[k], &ab->n[k], err)) {
			rh_ab_free(ab);
			return ls_err_wrap(err, "%s vs %s", d[0].name, d[k].name);
		}
	}
	return 0;
}

/* Free what rh_ab_build made. */
void rh_ab_free(struct rh_ab *ab)
{
	for (size_t k = 0; k < RH_MAX_AB; k++)
		free(ab->rows[k]);
	memset(ab, 0, sizeof(*ab));
}

/* A change in percent for a table ("-" when A's percentile is 0). */
static void fmt_change(double a, double b, char *buf, size_t len)
{
	double c = ls_cmp_change_pct(a, b);

	if (isfinite(c))
		snprintf(buf, len, "%+.1f %%", c);
	else
		snprintf(buf, len, "-");
}

/* The A/B significance tables: every document against the first (compare's statistics). */
void rh_ab_tables(struct ls_sb *b, size_t n, const struct rh_ab *ab)
{
	for (size_t k = 1; k < n && k < RH_MAX_AB; k++) {
		const struct ls_cmp_row *rows = ab->rows[k];
		size_t nr = ab->n[k];
		char t[8][32];

		ls_sb_printf(b, "<h3>Significance: %c vs A</h3>\n<table data-ab=\"%zu\">\n<thead><tr><th scope=\"col\">distribution</th>"
			     "<th scope=\"col\">p50 A</th><th scope=\"col\">p50 %c</th><th scope=\"col\">change</th><th scope=\"col\">p adj</th><th scope=\"col\">p99 A</th>"
			     "<th scope=\"col\">p99 %c</th><th scope=\"col\">change</th><th scope=\"col\">p adj</th><th scope=\"col\">verdict</th></tr></thead><tbody>\n",
			     rh_doc_letter(k), k, rh_doc_letter(k), rh_doc_letter(k));
		for (size_t i = 0; i < nr; i++) {
			const struct ls_cmp_row *r = &rows[i];

			rh_fmt_time(r->p50a, t[0], 32);
			rh_fmt_time(r->p50b, t[1], 32);
			rh_fmt_time(r->p99a, t[2], 32);
			rh_fmt_time(r->p99b, t[3], 32);
			fmt_change(r->p50a, r->p50b, t[4], 32);
			fmt_change(r->p99a, r->p99b, t[5], 32);
			snprintf(t[6], 32, r->tested && isfinite(r->p_mwu_adj) ? "%.2g" : "-", r->p_mwu_adj);
			snprintf(t[7], 32, r->tested && isfinite(r->p_q_adj) ? "%.2g" : "-", r->p_q_adj);
			ls_sb_printf(b, "<tr data-series=\"");
			ls_sb_esc(b, r->name);
			ls_sb_printf(b, "\"><td>");
			ls_sb_esc(b, r->name);
			ls_sb_printf(b, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
				     "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
				     "<td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
				     t[0], t[1], t[4], t[6], t[2], t[3], t[5], t[7], ls_cmp_verdict(r));
		}
		ls_sb_printf(b, "</tbody></table>\n<p>p50: Mann-Whitney U; p99: Fisher's exact test on the counts above "
			     "the pooled p99; lag-1 serial correlation widens both; Holm-adjusted, "
			     "family-wise alpha 0.01 (as latsplit compare).</p>\n");
	}
}

const char rh_cap_cdf[] =
	"How to read: each line is one distribution's cumulative share of samples (y) at or below a "
	"latency (x, log scale); further right is slower, and the stretch just below 1 is the tail. "
	"Markers: circle p50, square p99, diamond p99.9 (exact values; hover for them). Lines are "
	"drawn through at most 513 quantile points each; values of 0 cannot sit on a log axis and "
	"are not drawn.";
/* The A/B caption's sentence for n results. */
const char *rh_cap_ab(size_t n)
{
	if (n <= 4)
		return " A/B: document A solid, B dashed, C dotted, D dash-dotted (the legend names "
		       "each line); the tables beside give compare's significance for every "
		       "distribution.";
	return " A/B: each document has its own colour and its distributions their own dash "
	       "(the legend names each line); the tables beside give compare's significance for "
	       "every distribution.";
}

/* Colour and dash of distribution s of result k of n (report.h). */
void rh_line_style(size_t k, size_t s, size_t n, unsigned int *color, unsigned int *dash)
{
	if (n <= 4) {
		*color = (unsigned int)(s % 8);
		*dash = (unsigned int)(k % 4);
	} else {
		*color = (unsigned int)(k % 8);
		*dash = (unsigned int)(s % 4);
	}
}
static const char cap_stack[] =
	"How to read: one bar per percentile of the total; its segments are the mean transmission, "
	"queuing and processing of the samples whose total ranks within 0.5 % of the samples around "
	"that percentile (narrower near the slowest sample, so the window stays centred; one sample "
	"when there are fewer than 200). What grows from p50 to p99.9 is "
	"what the tail is made of; the figure after a bar is those samples' mean total.";
static const char cap_heat[] =
	"How to read: kernel time per sample (mean over the samples' windows) for each CPU (rows) "
	"and stage (columns) of each host; the stronger the colour, the more time (opacity on a log "
	"scale from the smallest to the largest cell). The cell outlined in red is the CPU and stage the "
	"verdict points at.";
const char rh_cap_time[] =
	"How to read: every sample in measurement order (x: sample number, y: one-way latency). "
	"With more samples than pixel columns, each column shows its samples as a shaded band from "
	"min to max with a line through their median, so drift, bursts and periodic noise stay "
	"visible; with fewer, every sample is drawn.";

/* The parts' legend with every document's lines; ab (NULL for one document): compare's verdicts. */
static void bd_legend(struct ls_sb *b, size_t ndocs, const struct rh_ab *ab)
{
	static const char *const names[4] = { "total", "transmission", "queuing", "processing" };
	static const char *const keys[4] = { "total", "parts.transmission", "parts.queuing",
					     "parts.processing" };
	const char *labels[4 * RH_MAX_AB];
	unsigned int color[4 * RH_MAX_AB], dash[4 * RH_MAX_AB];
	char lab[RH_MAX_AB][4][96];
	size_t n = 0;

	for (size_t k = 0; k < ndocs && k < RH_MAX_AB; k++) {
		const struct ls_cmp_row *rows = ab ? ab->rows[k] : NULL;
		size_t nr = ab ? ab->n[k] : 0;

		/* B, C, ...: compare's verdict against A beside each distribution */
		for (unsigned int s = 0; s < 4; s++) {
			const char *v = NULL;

			for (size_t i = 0; i < nr && !v; i++)
				v = strcmp(rows[i].name, keys[s]) ? NULL : ls_cmp_verdict(&rows[i]);
			snprintf(lab[k][s], sizeof(lab[k][s]), "%s%s%s%s%s%s",
				 ndocs > 1 ? (char[]){ rh_doc_letter(k), 0 } : "", ndocs > 1 ? ": " : "",
				 names[s], v ? " (vs A: " : "", v ? v : "", v ? ")" : "");
			labels[n] = lab[k][s];
			rh_line_style(k, s, ndocs, &color[n], &dash[n]);
			n++;
		}
	}
	rp_legend(b, labels, color, dash, n);
}

/* A breakdown section: CDF, stacked parts, heatmap and time plots, and its facts. */
static int sec_breakdown(struct ls_sb *b, const struct ls_rdoc *d, size_t n, struct ls_err *err)
{
	static const char *const names[4] = { "total", "transmission", "queuing", "processing" };
	static const double qs[4] = { 0.5, 0.9, 0.99, 0.999 };
	struct bd_vals *bv = calloc(n, sizeof(*bv));
	struct rp_series *lines = calloc(4 * n, sizeof(*lines));
	struct rp_bar *bars = calloc(4 * n, sizeof(*bars));
	char (*labs)[96] = calloc(4 * n, sizeof(*labs));
	struct rp_cell *cells = NULL;
	size_t *order = NULL, ncells;
	bool outlined[RH_MAX_AB] = { false };
	char title[512], cap[1024];
	struct rh_ab ab = { 0 };
	int ret = -1;

	if (!bv || !lines || !bars || !labs) {
		ls_errf(err, "out of memory");
		goto out;
	}
	if (n > 1 && rh_ab_build(d, n, &ab, err))
		goto out;
	for (size_t k = 0; k < n; k++) {
		if (bd_load(&d[k], &bv[k], err))
			goto out;
		for (unsigned int s = 0; s < 4; s++) {
			struct rp_series *l = &lines[4 * k + s];

			snprintf(labs[4 * k + s], 96, "%s%s%s", n > 1 ? (char[]){ rh_doc_letter(k), 0 } : "",
				 n > 1 ? ": " : "", names[s]);
			*l = (struct rp_series){ labs[4 * k + s], bv[k].sorted[s], bv[k].n[s], 0, 0,
						 (unsigned int)k };
			rh_line_style(k, s, n, &l->color, &l->dash);
		}
		order = malloc(bv[k].n[0] * sizeof(*order));
		if (!order) {
			ls_errf(err, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < bv[k].n[0]; i++)
			order[i] = i;
		qsort_r(order, bv[k].n[0], sizeof(*order), cmp_by_total, bv[k].v[0]);
		for (size_t q = 0; q < 4; q++) {
			struct rp_bar *bar = &bars[q * n + k];

			bd_bar(&bv[k], order, qs[q], bar);
			snprintf(bar->label, sizeof(bar->label), "p%g%s%s", qs[q] * 100, n > 1 ? " " : "",
				 n > 1 ? (char[]){ rh_doc_letter(k), 0 } : "");
			bar->doc = (unsigned int)k;	/* its look: rp_stacked */
		}
		free(order);
		order = NULL;
	}
	ls_sb_printf(b, "<div class=\"row\"><div class=\"plots\">\n");
	snprintf(cap, sizeof(cap), "%s%s", rh_cap_cdf, n > 1 ? rh_cap_ab(n) : "");
	rp_cdf(b, n > 1 ? "One-way latency CDF, A/B: total and parts" :
	       "One-way latency CDF: total and parts", lines, 4 * n, cap);
	bd_legend(b, n, n > 1 ? &ab : NULL);
	rp_stacked(b, "What each percentile is made of (mean parts near p50, p90, p99, p99.9)",
		   part_keys, bars, 4 * n, cap_stack);
	{
		unsigned int lc[3] = { 1, 2, 3 };

		rp_legend(b, (const char *const *)part_keys, lc, NULL, 3);
	}
	for (size_t k = 0; k < n; k++) {
		if (bd_cells(&d[k].docs[0].root, &cells, &ncells, &outlined[k], err))
			goto out;
		snprintf(title, sizeof(title), "Kernel time per sample by CPU and stage%s%s",
			 n > 1 ? ", " : "", n > 1 ? (char[]){ rh_doc_letter(k), 0 } : "");
		rp_heatmap(b, title, "kernel time per sample", cells, ncells, cap_heat);
		free(cells);
		cells = NULL;
	}
	for (size_t k = 0; k < n; k++) {
		struct rp_series s[4];

		for (unsigned int i = 0; i < 4; i++)
			s[i] = (struct rp_series){ names[i], bv[k].v[i], bv[k].n[i], i, 0, (unsigned int)k };
		snprintf(title, sizeof(title), "Samples over time: total and parts%s%s",
			 n > 1 ? ", " : "", n > 1 ? (char[]){ rh_doc_letter(k), 0 } : "");
		rp_time(b, title, s, 4, rh_cap_time);
		bd_legend(b, 1, NULL);
	}
	rh_aside_open(b, d, n);
	if (n > 1)
		rh_ab_tables(b, n, &ab);
	for (size_t k = 0; k < n; k++) {
		const struct ls_jv *root = &d[k].docs[0].root;

		if (n > 1) {
			ls_sb_printf(b, "<h3>%c: ", rh_doc_letter(k));
			ls_sb_esc(b, d[k].name);
			ls_sb_printf(b, "</h3>\n");
		}
		bd_verdict(b, root, outlined[k]);
		rh_kv_table(b, "Tail (slowest share: excess over p50)", ls_jv_get(root, "tail"));
		rh_kv_table(b, "Floor (processing base)", ls_jv_get(root, "floor"));
		rh_kv_table(b, "Transmission model", ls_jv_get(root, "transmission_model"));
		rh_kv_table(b, "Inputs", ls_jv_get(root, "inputs"));
		bd_counters(b, root);
	}
	ls_sb_printf(b, "</aside></div>\n");
	ret = 0;
out:
	for (size_t k = 0; bv && k < n; k++)
		bd_free(&bv[k]);
	free(bv);
	free(lines);
	free(bars);
	free(labs);
	free(cells);
	free(order);
	rh_ab_free(&ab);
	return ret;
}

/* A fleet run's pair that was not measured: its peer, exit status and what that means. */
static int sec_failed(struct ls_sb *b, const struct ls_rdoc *d)
{
	const struct ls_jv *root = &d->docs[0].root;
	double st = -1;
	const char *why;

	ls_jv_num(root, "exit_status", &st);
	if (st == LS_EXIT_FAIL)
		why = "the run started but failed";
	else if (st == LS_EXIT_USAGE)
		why = "the run could not start (options, devices or the peer refused it)";
	else
		why = "the run did not succeed";
	ls_sb_printf(b, "<p class=\"failure\">Not measured: the pair with peer <strong>");
	ls_sb_esc(b, d->peer[0] ? d->peer : "(unnamed)");
	ls_sb_printf(b, "</strong> failed: latsplit ");
	ls_sb_esc(b, d->kind);
	if (st >= 0 && st == floor(st) && st < 256)
		ls_sb_printf(b, " exited with status %d, %s", (int)st, why);
	else
		ls_sb_printf(b, " gave no exit status, %s", why);
	ls_sb_printf(b, ". Its messages went to the fleet run's standard error.</p>\n");
	if (ls_jv_get(root, "error") || ls_jv_get(root, "message")) {
		ls_sb_printf(b, "<p class=\"failure\">Error: ");
		rh_jstr(b, root, ls_jv_get(root, "error") ? "error" : "message");
		ls_sb_printf(b, "</p>\n");
	}
	rh_kv_table(b, "The failed pair's document", root);
	return 0;
}

/* One section of documents of one kind (n > 1: the A/B view). */
static int section(struct ls_sb *b, const struct ls_rdoc *d, size_t n, struct ls_err *err)
{
	int ret;

	ls_sb_printf(b, "<section class=\"doc\" data-kind=\"");
	ls_sb_esc(b, d[0].kind);
	ls_sb_printf(b, "\" data-docs=\"%zu\"%s>\n<h2>", n, d[0].failed ? " data-failed=\"1\"" : "");
	ls_sb_esc(b, d[0].kind);
	ls_sb_printf(b, "%s", n > 1 ? " A/B: " : ": ");
	for (size_t k = 0; k < n; k++) {
		if (n > 1)
			ls_sb_printf(b, "%s%c = ", k ? ", " : "", rh_doc_letter(k));
		ls_sb_esc(b, d[k].name);
	}
	if (n == 1 && (d[0].fleet || d[0].failed) && d[0].peer[0]) {
		ls_sb_printf(b, ", peer ");
		ls_sb_esc(b, d[0].peer);
	}
	ls_sb_printf(b, "%s</h2>\n", d[0].failed ? ": not measured" : "");
	if (d[0].failed)
		ret = sec_failed(b, d);
	else if (!strcmp(d[0].kind, "breakdown"))
		ret = sec_breakdown(b, d, n, err);
	else if (!strcmp(d[0].kind, "compare"))
		ret = rh_sec_compare(b, d, err);
	else
		ret = rh_sec_series(b, d, n, err);
	ls_sb_printf(b, "</section>\n");
	return ret;
}

/* Can result d join an A/B overlay (not compare, not a fleet's pair, measured)? */
static bool overlayable(const struct ls_rdoc *d)
{
	return strcmp(d->kind, "compare") && !d->fleet && !d->failed;
}

/* How many results of d's kind could be overlaid with it (d included)? */
static size_t same_kind(const struct ls_report *r, const struct ls_rdoc *d)
{
	size_t n = 0;

	for (size_t j = 0; j < r->ndocs; j++)
		n += overlayable(&r->docs[j]) && !strcmp(r->docs[j].kind, d->kind);
	return n;
}

/* Is result k overlaid in an A/B section with the others of its kind? */
bool ls_report_overlaid(const struct ls_report *r, size_t k)
{
	size_t n;

	if (!overlayable(&r->docs[k]))
		return false;
	n = same_kind(r, &r->docs[k]);
	return n >= 2 && n <= RH_MAX_AB;
}

/* Why result k is not overlaid, into buf ("" when it is). */
void ls_report_alone_why(const struct ls_report *r, size_t k, char *buf, size_t len)
{
	const struct ls_rdoc *d = &r->docs[k];
	size_t n = overlayable(d) ? same_kind(r, d) : 0;

	if (ls_report_overlaid(r, k))
		snprintf(buf, len, "%s", "");
	else if (!strcmp(d->kind, "compare"))
		snprintf(buf, len, "a compare result is a comparison already, never overlaid");
	else if (d->failed)
		snprintf(buf, len, "a fleet run's pair that was not measured");
	else if (d->fleet)
		snprintf(buf, len, "one pair of a fleet run (--peers), shown pair by pair");
	else if (n > RH_MAX_AB)
		snprintf(buf, len, "%zu %s results: an A/B view overlays at most %d", n, d->kind,
			 RH_MAX_AB);
	else
		snprintf(buf, len, "the only %s result that can be overlaid", d->kind);
}

/*
 * Should the page (and stderr) say which results were not overlaid? When
 * some were and others not, or a kind had too many to overlay.
 */
bool ls_report_tell_alone(const struct ls_report *r)
{
	bool any_ab = false, alone = false;

	for (size_t k = 0; k < r->ndocs; k++) {
		if (ls_report_overlaid(r, k))
			any_ab = true;
		else if (overlayable(&r->docs[k]) && same_kind(r, &r->docs[k]) > RH_MAX_AB)
			return true;
		else
			alone = true;
	}
	return any_ab && alone;
}

/* The A/B section of the results of result k's kind that are overlaid (k the first). */
static int section_ab(struct ls_sb *b, const struct ls_report *r, size_t k, struct ls_err *err)
{
	struct ls_rdoc *g = calloc(RH_MAX_AB, sizeof(*g));
	size_t n = 0;
	int ret;

	if (!g)
		return ls_errf(err, "out of memory");
	for (size_t j = k; j < r->ndocs && n < RH_MAX_AB; j++) {
		if (ls_report_overlaid(r, j) && !strcmp(r->docs[j].kind, r->docs[k].kind))
			g[n++] = r->docs[j];
	}
	ret = section(b, g, n, err);
	free(g);
	return ret;
}

/* Has a result before k of k's kind opened k's A/B section? */
static bool ab_drawn(const struct ls_report *r, size_t k)
{
	for (size_t j = 0; j < k; j++) {
		if (ls_report_overlaid(r, j) && !strcmp(r->docs[j].kind, r->docs[k].kind))
			return true;
	}
	return false;
}

/* The whole page. */
int ls_report_render(const struct ls_report *r, struct ls_sb *out, struct ls_err *err)
{
	size_t failed = 0, groups = 0;
	char why[160];

	for (size_t k = 0; k < r->ndocs; k++)
		groups += ls_report_overlaid(r, k) && !ab_drawn(r, k);
	ls_sb_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<meta name=\"color-scheme\" content=\"light dark\">\n<title>latsplit report</title>\n"
		     "<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>latsplit report</h1>\n"
		     "<p>Inputs:</p>\n<ul>\n", css);
	for (size_t k = 0, letter = 0; k < r->ndocs; k++) {
		ls_sb_printf(out, "<li>");
		/* letters here only when one A/B section: its section names them otherwise */
		if (groups == 1 && ls_report_overlaid(r, k))
			ls_sb_printf(out, "%c: ", rh_doc_letter(letter++));
		ls_sb_esc(out, r->docs[k].name);
		ls_sb_printf(out, " (");
		ls_sb_esc(out, r->docs[k].kind);
		if (r->docs[k].ndocs > 1)
			ls_sb_printf(out, ", %zu documents pooled", r->docs[k].ndocs);
		if (r->docs[k].fleet && r->docs[k].peer[0]) {
			ls_sb_printf(out, ", peer ");
			ls_sb_esc(out, r->docs[k].peer);
		}
		if (r->docs[k].failed)
			ls_sb_printf(out, ", <strong>not measured</strong>");
		failed += r->docs[k].failed;
		ls_sb_printf(out, ")</li>\n");
	}
	ls_sb_printf(out, "</ul>\n");
	if (failed)
		ls_sb_printf(out, "<p class=\"failure\">Not measured: %zu of the %zu results (pairs of "
			     "a fleet run); their sections say why.</p>\n", failed, r->ndocs);
	if (ls_report_tell_alone(r)) {
		ls_sb_printf(out, "<p class=\"alone\">Shown alone, not in an A/B overlay:</p>\n<ul>\n");
		for (size_t k = 0; k < r->ndocs; k++) {
			ls_report_alone_why(r, k, why, sizeof(why));
			if (!why[0])
				continue;
			ls_sb_printf(out, "<li>");
			ls_sb_esc(out, r->docs[k].name);
			ls_sb_printf(out, ": ");
			ls_sb_esc(out, why);
			ls_sb_printf(out, "</li>\n");
		}
		ls_sb_printf(out, "</ul>\n");
	}
	ls_sb_printf(out, "<p>Latencies are one-way (RTT/2 for ping-pong) unless the inputs "
		     "say otherwise; every figure below is in the documents.</p>\n</header>\n<main>\n");
	for (size_t k = 0; k < r->ndocs; k++) {
		if (!ls_report_overlaid(r, k)) {
			if (section(out, &r->docs[k], 1, err))
				return -1;
		} else if (!ab_drawn(r, k)) {
			if (section_ab(out, r, k, err))
				return -1;
		}
	}
	ls_sb_printf(out, "</main>\n</body>\n</html>\n");
	if (out->failed)
		return ls_errf(err, "out of memory while rendering the report");
	return 0;
}
