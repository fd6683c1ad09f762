// SPDX-License-Identifier: GPL-2.0
/* The report's probe, irq and compare sections (the page and breakdown's: report_html.c). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MAX_LINES	8	/* distributions per CDF / time plot */
#define MAX_WARNINGS	64	/* distinct irq warnings listed */

/* Indices of a set's series with samples, largest first, at most max (<= MAX_LINES). */
static size_t pick_series(const struct ls_series_set *set, size_t *idx, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++) {
		size_t j;

		if (!set->v[i].has_samples || !set->v[i].nvals)
			continue;
		if (n < max)
			n++;
		else if (set->v[idx[n - 1]].nvals >= set->v[i].nvals)
			continue;
		for (j = n - 1; j > 0 && set->v[idx[j - 1]].nvals < set->v[i].nvals; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return n;
}

/* irq heatmap cells: mean time per event of every (CPU, softirq) pooled over intervals. */
static int irq_cells(const struct ls_rdoc *d, struct rp_cell **out, size_t *n, struct ls_err *err)
{
	size_t cap = 0, ccap = 0;
	double *cnts = NULL;

	*out = NULL;
	*n = 0;
	for (size_t k = 0; k < d->ndocs; k++) {
		const struct ls_jv *cpus = ls_jv_get(&d->docs[k].root, "cpus");

		for (size_t i = 0; cpus && cpus->type == LS_JARR && i < cpus->arr.n; i++) {
			const struct ls_jv *c = &cpus->arr.v[i];
			uint64_t cpu = 0;

			if (c->type != LS_JOBJ || !ls_jv_u64(c, "cpu", &cpu) || cpu > LONG_MAX)
				continue;
			for (size_t m = 0; m < c->obj.n; m++) {
				const struct ls_jv *h = &c->obj.m[m].val;
				const char *stage = c->obj.m[m].key;
				double cnt = 0, sum = 0;
				size_t j = 0;

				if (!ls_jv_num(h, "count", &cnt) || !ls_jv_num(h, "sum_ns", &sum) || !cnt)
					continue;
				while (j < *n && !((*out)[j].cpu == (long)cpu && !strcmp((*out)[j].stage, stage)))
					j++;
				if (j == *n) {
					if (ls_grow(out, &cap, *n, sizeof(**out), 16) ||
					    ls_grow(&cnts, &ccap, *n, sizeof(*cnts), 16)) {
						free(cnts);
						return ls_errf(err, "out of memory");
					}
					memset(&(*out)[j], 0, sizeof(**out));
					cnts[j] = 0;
					(*out)[j].host = "this host";
					(*out)[j].stage = stage;	/* the full key, in the document */
					(*out)[j].cpu = (long)cpu;
					(*n)++;
				}
				(*out)[j].value_ns += sum;
				cnts[j] += cnt;
			}
		}
	}
	for (size_t j = 0; j < *n; j++)
		(*out)[j].value_ns /= cnts[j];
	free(cnts);
	return 0;
}

/* Is warning e the same (code and message) as f? */
static bool same_warning(const struct ls_jv *e, const struct ls_jv *f)
{
	static const char *const keys[] = { "code", "message" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const struct ls_jv *a = ls_jv_get(e, keys[i]), *b = ls_jv_get(f, keys[i]);

		if (!a != !b || (a && (a->type != LS_JSTR || b->type != LS_JSTR ||
				       strcmp(a->str.s, b->str.s))))
			return false;
	}
	return true;
}

/* irq's warnings (code: message) of every pooled interval, each once with how many it was in. */
static void irq_warnings(struct ls_sb *b, const struct ls_rdoc *d)
{
	const struct ls_jv *seen[MAX_WARNINGS];
	size_t times[MAX_WARNINGS], nseen = 0, more = 0;

	for (size_t k = 0; k < d->ndocs; k++) {
		const struct ls_jv *w = ls_jv_get(&d->docs[k].root, "warnings");

		for (size_t i = 0; w && w->type == LS_JARR && i < w->arr.n; i++) {
			const struct ls_jv *e = &w->arr.v[i];
			size_t j = 0;

			if (e->type != LS_JOBJ)
				continue;
			while (j < nseen && !same_warning(seen[j], e))
				j++;
			if (j < nseen) {
				times[j]++;
			} else if (nseen < MAX_WARNINGS) {
				seen[nseen] = e;
				times[nseen++] = 1;
			} else {
				more++;
			}
		}
	}
	ls_sb_printf(b, "<h3>Warnings</h3>\n<ul class=\"warnings\">\n");
	for (size_t j = 0; j < nseen; j++) {
		ls_sb_printf(b, "<li>");
		rh_jstr(b, seen[j], "code");
		ls_sb_printf(b, ": ");
		rh_jstr(b, seen[j], "message");
		if (d->ndocs > 1)
			ls_sb_printf(b, " (in %zu of %zu intervals)", times[j], d->ndocs);
		ls_sb_printf(b, "</li>\n");
	}
	if (more)
		ls_sb_printf(b, "<li>%zu more warnings not listed</li>\n", more);
	if (!nseen)
		ls_sb_printf(b, "<li>no affinity warnings</li>\n");
	ls_sb_printf(b, "</ul>\n");
}

/* A probe or irq section: CDF of its distributions, then time plots (probe) or a heatmap (irq). */
int rh_sec_series(struct ls_sb *b, const struct ls_rdoc *d, size_t n, struct ls_err *err)
{
	bool irq = !strcmp(d[0].kind, "irq");
	struct rp_series *lines = calloc(MAX_LINES * n, sizeof(*lines));
	char (*labs)[96] = calloc(MAX_LINES * n, sizeof(*labs));
	double **vals = calloc(MAX_LINES * n, sizeof(*vals));
	size_t (*idx)[MAX_LINES] = calloc(n, sizeof(*idx)), *np = calloc(n, sizeof(size_t)), nl = 0;
	const char *lg[MAX_LINES * 4];
	unsigned int lc[MAX_LINES * 4], ld[MAX_LINES * 4];
	struct rp_cell *cells = NULL;
	char title[512], cap[1024];
	struct rh_ab ab = { 0 };
	size_t ncells;
	int ret = -1;

	if (!lines || !labs || !vals || !idx || !np) {
		ls_errf(err, "out of memory");
		goto out;
	}
	if (n > 1 && rh_ab_build(d, n, &ab, err))
		goto out;
	for (size_t k = 0; k < n; k++) {
		/* more than 4 results: 4 dashes tell a result's distributions apart */
		np[k] = pick_series(&d[k].set, idx[k], n > 4 ? 4 : MAX_LINES);
		for (size_t i = 0; i < np[k]; i++) {
			const struct ls_series *s = &d[k].set.v[idx[k][i]];
			size_t m = 0;

			if (ls_series_samples(s, &vals[nl], &m, err))
				goto out;
			snprintf(labs[nl], 96, "%s%s%s", n > 1 ? (char[]){ rh_doc_letter(k), 0 } : "",
				 n > 1 ? ": " : "", strcmp(s->name, "(top level)") ? s->name : "one-way latency");
			lines[nl] = (struct rp_series){ labs[nl], rh_sorted_copy(vals[nl], m), m, 0, 0,
							(unsigned int)k };
			rh_line_style(k, i, n, &lines[nl].color, &lines[nl].dash);
			if (!lines[nl].v) {
				free(vals[nl]);
				vals[nl] = NULL;
				ls_errf(err, "out of memory");
				goto out;
			}
			if (nl < ARRAY_SIZE(lg)) {
				lg[nl] = labs[nl];
				lc[nl] = lines[nl].color;
				ld[nl] = lines[nl].dash;
			}
			nl++;
		}
	}
	ls_sb_printf(b, "<div class=\"row\"><div class=\"plots\">\n");
	snprintf(cap, sizeof(cap), "%s%s%s", rh_cap_cdf, n > 1 ? rh_cap_ab(n) : "",
		 !irq ? "" : n > 4 ? " irq's distributions are rebuilt from its histograms (bucket "
		 "midpoints, within 3.2 %), the largest four of each document shown." :
		 " irq's distributions are rebuilt from its histograms (bucket midpoints, "
		 "within 3.2 %), the largest eight shown.");
	snprintf(title, sizeof(title), "%s latency CDF%s", irq ? "IRQ and softirq" : "One-way probe",
		 n > 1 ? ", A/B" : "");
	rp_cdf(b, title, lines, nl, cap);
	rp_legend(b, lg, lc, ld, nl < ARRAY_SIZE(lg) ? nl : ARRAY_SIZE(lg));
	for (size_t k = 0, base = 0; k < n; base += np[k], k++) {
		const char *suffix = n > 1 ? (char[]){ ',', ' ', rh_doc_letter(k), 0 } : "";

		if (irq) {
			if (irq_cells(&d[k], &cells, &ncells, err))
				goto out;
			snprintf(title, sizeof(title), "Mean time per event by CPU and softirq stage%s", suffix);
			rp_heatmap(b, title, "mean time per event", cells, ncells,
				   "How to read: mean time per event (sum over count, pooled over the "
				   "intervals) for each CPU (rows) and softirq wait or run (columns); "
				   "the stronger the colour, the more time (opacity on a log scale). irq names no verdict "
				   "CPU: its warnings are listed beside.");
			free(cells);
			cells = NULL;
		} else {
			struct rp_series s[MAX_LINES];

			for (size_t i = 0; i < np[k]; i++)
				s[i] = (struct rp_series){ lines[base + i].label, vals[base + i],
							   lines[base + i].n, (unsigned int)(i % 8), 0,
							   (unsigned int)k };
			snprintf(title, sizeof(title), "Probe samples over time%s", suffix);
			rp_time(b, title, s, np[k], rh_cap_time);
		}
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
		if (irq) {
			irq_warnings(b, &d[k]);
			ls_sb_printf(b, "<p>%zu interval(s) pooled.</p>\n", d[k].ndocs);
		}
		rh_kv_table(b, irq ? "Interval" : "Run", root);
		rh_kv_table(b, "Device", ls_jv_get(root, "device"));
	}
	ls_sb_printf(b, "</aside></div>\n");
	ret = 0;
out:
	for (size_t i = 0; i < nl; i++) {
		free(vals[i]);
		free((void *)lines[i].v);
	}
	free(lines);
	free(labs);
	free(vals);
	free(idx);
	free(np);
	free(cells);
	rh_ab_free(&ab);
	return ret;
}

/* A compare section: the changes plot and the rows with their tests. */
int rh_sec_compare(struct ls_sb *b, const struct ls_rdoc *d, struct ls_err *err)
{
	const struct ls_jv *root = &d->docs[0].root, *s = ls_jv_get(root, "series");
	size_t n = s && s->type == LS_JARR ? s->arr.n : 0;
	struct rp_change *c = calloc(n + 1, sizeof(*c));
	char (*names)[256] = calloc(n + 1, sizeof(*names));

	if (!c || !names) {
		free(c);
		free(names);
		return ls_errf(err, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct ls_jv *r = &s->arr.v[i];
		double d50 = 0, d99 = 0;

		ls_jv_str(r, "name", names[i], sizeof(names[i]));
		c[i].label = names[i];
		c[i].p50_pct = c[i].p99_pct = NAN;
		ls_jv_num(r, "p50_change_pct", &c[i].p50_pct);
		ls_jv_num(r, "p99_change_pct", &c[i].p99_pct);
		ls_jv_num(r, "p50_direction", &d50);
		ls_jv_num(r, "p99_direction", &d99);
		c[i].dir50 = (d50 > 0) - (d50 < 0);
		c[i].dir99 = (d99 > 0) - (d99 < 0);
	}
	ls_sb_printf(b, "<div class=\"row\"><div class=\"plots\">\n");
	rp_changes(b, "Change of p50 and p99, B against A", c, n,
		   "How to read: one pair of bars per distribution, p50 (upper) and p99 (lower), as "
		   "the percent change of B against A; right of 0 is slower. Filled bars are "
		   "significant at compare's family-wise alpha, faint ones are not.");
	{
		const char *lg[2] = { "p50 change", "p99 change" };
		unsigned int lc[2] = { 1, 2 };

		rp_legend(b, lg, lc, NULL, 2);
	}
	rh_aside_open(b, d, 1);
	ls_sb_printf(b, "<h3>Distributions</h3>\n<table>\n"
		     "<thead><tr><th scope=\"col\">distribution</th><th scope=\"col\">p50 A</th><th scope=\"col\">p50 B</th><th scope=\"col\">p99 A</th><th scope=\"col\">p99 B</th>"
		     "<th scope=\"col\">verdict</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const struct ls_jv *r = &s->arr.v[i];

		ls_sb_printf(b, "<tr>");
		rh_td_fields(b, r, (const char *const[]){ "name", "p50_a_ns", "p50_b_ns", "p99_a_ns",
							  "p99_b_ns", "verdict", NULL });
		ls_sb_printf(b, "</tr>\n");
	}
	ls_sb_printf(b, "</tbody></table>\n");
	rh_kv_table(b, "Comparison", root);
	ls_sb_printf(b, "</aside></div>\n");
	free(c);
	free(names);
	return 0;
}

