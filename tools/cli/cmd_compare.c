// SPDX-License-Identifier: GPL-2.0
/* `latsplit compare A.json B.json`: A/B latency comparison with significance, exit 1 on regression. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io.h"
#include "json.h"
#include "jseries.h"
#include "jsonr.h"
#include "opts.h"
#include "signif.h"
#include "stats.h"
#include "util.h"

#define TAIL_Q	0.99

struct compare_opts {
	const char *file_a, *file_b;
	double alpha;
	double max_regress;	/* percent; NAN = report only */
	double min_change;	/* percent: smaller significant shifts are no change */
	const char *only;	/* series name prefix */
	bool independent;	/* no serial-correlation correction */
	bool json;
};

/* One series present in both documents, and what the tests said. */
struct row {
	const char *name;
	size_t na, nb;
	double p50a, p50b, p99a, p99b;
	bool tested;		/* both sides had samples */
	bool empty_a, empty_b;	/* samples_ns given but empty (no events) */
	struct ls_mwu mwu;
	struct ls_qtest qt;
	double p_mwu_adj, p_q_adj;
	int dir50, dir99;	/* -1 faster, 0 no significant change, +1 slower */
	bool regression;
};

/* Print the usage; its option list is what Documentation/latsplit-compare.rst documents. */
static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit compare [OPTIONS] A.json B.json\n"
		"\n"
		"Compare two results of the same kind (probe, breakdown, irq, record): for\n"
		"every distribution in both, p50 and p99 of A and B, the change, and whether\n"
		"it is significant. p50: Mann-Whitney U on samples_ns (normal approximation,\n"
		"tie-corrected); p99: Fisher's exact test on the counts above the pooled p99.\n"
		"Samples are taken in measurement order: their lag-1 serial correlation\n"
		"widens both tests (AR(1) variance factor). Holm's adjustment keeps the\n"
		"family-wise false-positive rate at --alpha.\n"
		"Exit status: 0 no significant regression, 1 a significant slowdown above\n"
		"--max-regress, 2 error.\n"
		"\n"
		"options:\n"
		"  -a, --alpha A            family-wise significance level (default 0.01)\n"
		"  -r, --max-regress PCT    exit 1 when a significant slowdown of p50 or p99\n"
		"                           exceeds PCT percent (default: report only)\n"
		"  -m, --min-change PCT     a significant change of p50 or p99 smaller than\n"
		"                           PCT percent counts as no change (default 0)\n"
		"  -o, --only PREFIX        compare only distributions whose name starts\n"
		"                           with PREFIX\n"
		"  -i, --independent        treat samples as independent (no serial-\n"
		"                           correlation correction)\n"
		"  -j, --json               JSON output (kind \"compare\")\n"
		"  -h, --help               this help\n");
}

#define CMP struct compare_opts

static const struct ls_opt compare_options[] = {
	LS_OPT_DBL("alpha", 'a', CMP, alpha, 1e-9, 0.5),
	LS_OPT_DBL("max-regress", 'r', CMP, max_regress, 0, 1e6),
	LS_OPT_STR("only", 'o', CMP, only),
	LS_OPT_DBL("min-change", 'm', CMP, min_change, 0, 1e6),
	LS_OPT_FLAG("independent", 'i', CMP, independent),
	LS_OPT_FLAG("json", 'j', CMP, json),
	LS_OPT_HELPOPT,
};

/* Parse argv; returns 0, LS_EXIT_USAGE, or -1 after --help. */
static int parse_args(int argc, char **argv, struct compare_opts *o, struct ls_err *err)
{
	static const struct ls_optcmd cmd = {
		.name = "compare", .mode = ":", .usage = usage, .quiet = true,
	};
	int rc;

	o->alpha = 0.01;
	o->max_regress = NAN;
	rc = LS_OPTS_PARSE(argc, argv, &cmd, compare_options, o, err);
	if (rc)
		return rc;
	if (argc - optind != 2) {
		ls_errf(err, "need two files, A.json and B.json (got %d arguments)", argc - optind);
		return LS_EXIT_USAGE;
	}
	o->file_a = argv[optind];
	o->file_b = argv[optind + 1];
	return 0;
}

/*
 * p50/p99 of a series: from its samples when it has them (*v in measurement
 * order, *sorted ascending), else its summary. An empty samples_ns (no
 * events in that run) gives NAN percentiles.
 */
static int percentiles(const struct ls_series *s, double **v, double **sorted, size_t *n,
		       double *p50, double *p99, bool *empty, struct ls_err *err)
{
	*sorted = NULL;
	if (ls_series_samples(s, v, n, err))
		return -1;
	*empty = s->has_samples && !*n;
	if (*empty) {
		*p50 = NAN;
		*p99 = NAN;
		return 0;
	}
	if (*n) {
		*sorted = malloc(*n * sizeof(double));
		if (!*sorted)
			return ls_errf(err, "%s: out of memory for %zu samples", s->name, *n);
		memcpy(*sorted, *v, *n * sizeof(double));
		ls_sort_doubles(*sorted, *n);
		*p50 = ls_quantile_sorted(*sorted, *n, 0.50);
		*p99 = ls_quantile_sorted(*sorted, *n, TAIL_Q);
	} else {
		*p50 = s->p50_ns;
		*p99 = s->p99_ns;
		*n = s->count;
	}
	return 0;
}

/* Relative change B vs A in percent (NAN when A is 0). */
static double change_pct(double a, double b)
{
	return a > 0 ? 100 * (b - a) / a : NAN;
}

/* One distribution present in both: its percentiles and, with samples in both, its two tests. */
static int test_row(const struct compare_opts *o, const struct ls_series *a,
		    const struct ls_series *b, struct row *r, size_t *ntests, struct ls_err *err)
{
	double *va = NULL, *vb = NULL, *sa_ = NULL, *sb_ = NULL;
	size_t na = 0, nb = 0;
	int ret = -1;

	r->name = a->name;
	if (percentiles(a, &va, &sa_, &na, &r->p50a, &r->p99a, &r->empty_a, err) ||
	    percentiles(b, &vb, &sb_, &nb, &r->p50b, &r->p99b, &r->empty_b, err))
		goto out;
	r->na = na;
	r->nb = nb;
	if (sa_ && sb_) {
		struct ls_sample xa = { va, sa_, na, a->unordered };
		struct ls_sample xb = { vb, sb_, nb, b->unordered };

		if (ls_mann_whitney_sample(&xa, &xb, !o->independent, &r->mwu, err) ||
		    ls_quantile_test_sample(&xa, &xb, TAIL_Q, !o->independent, &r->qt, err)) {
			ls_err_wrap(err, "%s", r->name);
			goto out;
		}
		r->tested = true;
		*ntests += 2;
	}
	ret = 0;
out:
	free(va);
	free(vb);
	free(sa_);
	free(sb_);
	return ret;
}

/* Holm's adjustment over every test, then each row's directions and regression. */
static int decide_rows(const struct compare_opts *o, struct row *rows, size_t n,
		       size_t ntests, struct ls_err *err)
{
	double *p = malloc(ntests * sizeof(*p));
	double *adj = malloc(ntests * sizeof(*adj));
	size_t k = 0;
	int ret = -1;

	if (!p || !adj) {
		ls_errf(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].tested)
			continue;
		p[k++] = rows[i].mwu.p;
		p[k++] = rows[i].qt.p;
	}
	if (ls_holm_adjust(p, ntests, adj, err))
		goto out;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		double fa, fb;

		if (!r->tested)
			continue;
		r->p_mwu_adj = adj[k++];
		r->p_q_adj = adj[k++];
		/* significant, and (--min-change) large enough to matter */
		if (r->p_mwu_adj <= o->alpha &&
		    !(fabs(change_pct(r->p50a, r->p50b)) < o->min_change))
			r->dir50 = r->mwu.z > 0 ? 1 : -1;
		fa = (double)r->qt.a_above / (double)r->na;
		fb = (double)r->qt.b_above / (double)r->nb;
		if (r->p_q_adj <= o->alpha && fa != fb &&
		    !(fabs(change_pct(r->p99a, r->p99b)) < o->min_change))
			r->dir99 = fb > fa ? 1 : -1;
		if (!isnan(o->max_regress))
			r->regression = (r->dir50 > 0 &&
					 change_pct(r->p50a, r->p50b) > o->max_regress) ||
					(r->dir99 > 0 &&
					 change_pct(r->p99a, r->p99b) > o->max_regress);
	}
	ret = 0;
out:
	free(p);
	free(adj);
	return ret;
}

/* Build the rows: run both tests for every series with samples on both sides. */
static int build_rows(const struct compare_opts *o, const struct ls_series_set *sa,
		      const struct ls_series_set *sb, struct row **rows_out, size_t *nrows,
		      struct ls_err *err)
{
	struct row *rows = calloc(sa->n ? sa->n : 1, sizeof(*rows));
	size_t n = 0, ntests = 0;

	if (!rows)
		return ls_errf(err, "out of memory");
	for (size_t i = 0; i < sa->n; i++) {
		const struct ls_series *a = &sa->v[i], *b = ls_series_find(sb, a->name);

		if (!b || (o->only && strncmp(a->name, o->only, strlen(o->only))))
			continue;
		if (test_row(o, a, b, &rows[n++], &ntests, err))
			goto fail;
	}
	if (ntests && decide_rows(o, rows, n, ntests, err))
		goto fail;
	*rows_out = rows;
	*nrows = n;
	return 0;
fail:
	free(rows);
	return -1;
}

/* One word for a row's outcome. */
static const char *verdict(const struct row *r)
{
	if (r->empty_a && r->empty_b)
		return "not tested (no samples in A or B)";
	if (r->empty_a)
		return "not tested (no samples in A)";
	if (r->empty_b)
		return "not tested (no samples in B)";
	if (!r->tested)
		return "not tested (no samples_ns)";
	if (r->dir50 > 0 && r->dir99 < 0)
		return "mixed: p50 slower, p99 faster";
	if (r->dir50 < 0 && r->dir99 > 0)
		return "mixed: p50 faster, p99 slower";
	if (r->dir50 > 0 || r->dir99 > 0)
		return "slower";
	if (r->dir50 < 0 || r->dir99 < 0)
		return "faster";
	return "no significant change";
}

/* Format a time in ns with a unit. */
static const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else if (ns >= 1e9)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else
		snprintf(buf, len, "%.0fns", ns);
	return buf;
}

/* Format a percentage change. */
static const char *fmt_pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", v);
	return buf;
}

/* Human-readable table. */
static void print_rows(const struct compare_opts *o, const struct ls_series_set *sa,
		       const struct ls_series_set *sb, const struct row *rows, size_t n)
{
	char b[8][32];
	int w = 28;

	for (size_t i = 0; i < n; i++) {
		if ((int)strlen(rows[i].name) > w)
			w = (int)strlen(rows[i].name);
	}
	printf("latsplit compare: A %s vs B %s (kind %s)\n", o->file_a, o->file_b, sa->kind);
	if (sa->ndocs > 1 || sb->ndocs > 1)
		printf("  JSON lines pooled: A %zu document(s), B %zu document(s); pooled samples "
		       "are tested, pooled summaries are not\n", sa->ndocs, sb->ndocs);
	printf("  p50: Mann-Whitney U (two-sided, normal approx., tie-corrected); "
	       "p99: Fisher exact on counts above the pooled p99;\n"
	       "  %s; Holm-adjusted p-values, family-wise alpha %g\n\n",
	       o->independent ? "samples taken as independent" :
	       "variances widened for lag-1 serial correlation (AR(1))", o->alpha);
	printf("  %-*s %7s %7s %10s %10s %8s %8s %10s %10s %8s %8s  %s\n", w, "distribution",
	       "n A", "n B", "p50 A", "p50 B", "change", "p adj", "p99 A", "p99 B", "change",
	       "p adj", "verdict");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char pa[16] = "-", pq[16] = "-";

		if (r->tested) {
			snprintf(pa, sizeof(pa), "%.2g", r->p_mwu_adj);
			snprintf(pq, sizeof(pq), "%.2g", r->p_q_adj);
		}
		printf("  %-*s %7zu %7zu %10s %10s %8s %8s %10s %10s %8s %8s  %s%s\n", w, r->name,
		       r->na, r->nb, fmt_ns(r->p50a, b[0], 32), fmt_ns(r->p50b, b[1], 32),
		       fmt_pct(change_pct(r->p50a, r->p50b), b[2], 32), pa,
		       fmt_ns(r->p99a, b[3], 32), fmt_ns(r->p99b, b[4], 32),
		       fmt_pct(change_pct(r->p99a, r->p99b), b[5], 32), pq, verdict(r),
		       r->regression ? "  REGRESSION" : "");
	}
	for (size_t i = 0; i < sa->n; i++) {
		if (!ls_series_find(sb, sa->v[i].name) &&
		    (!o->only || !strncmp(sa->v[i].name, o->only, strlen(o->only))))
			printf("  %-*s only in A\n", w, sa->v[i].name);
	}
	for (size_t i = 0; i < sb->n; i++) {
		if (!ls_series_find(sa, sb->v[i].name) &&
		    (!o->only || !strncmp(sb->v[i].name, o->only, strlen(o->only))))
			printf("  %-*s only in B\n", w, sb->v[i].name);
	}
}

/* JSON output (kind "compare"). */
static void json_rows(const struct compare_opts *o, const struct ls_series_set *sa,
		      const struct ls_series_set *sb, const struct row *rows, size_t n,
		      size_t nreg)
{
	struct ls_json j;

	ls_json_doc_open(&j, stdout, true, "compare");
	ls_json_str(&j, "compared_kind", sa->kind);
	ls_json_str(&j, "a", o->file_a);
	ls_json_str(&j, "b", o->file_b);
	ls_json_u64(&j, "documents_a", sa->ndocs);
	ls_json_u64(&j, "documents_b", sb->ndocs);
	ls_json_obj_open(&j, "method");
	ls_json_str(&j, "p50", "Mann-Whitney U, two-sided, normal approximation, tie and continuity corrected");
	ls_json_str(&j, "p99", "Fisher exact test on the counts above the pooled nearest-rank p99");
	ls_json_str(&j, "multiple_testing", "Holm step-down, family-wise");
	ls_json_str(&j, "serial_correlation", o->independent ? "none (independent samples)" :
		    "lag-1 AR(1) variance factor (1+rho)/(1-rho); ranks for U, exceedances for p99");
	ls_json_dbl(&j, "alpha", o->alpha);
	if (isnan(o->max_regress))
		ls_json_null(&j, "max_regress_pct");
	else
		ls_json_dbl(&j, "max_regress_pct", o->max_regress);
	ls_json_dbl(&j, "min_change_pct", o->min_change);
	ls_json_obj_close(&j);
	ls_json_arr_open(&j, "series");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "name", r->name);
		ls_json_u64(&j, "count_a", r->na);
		ls_json_u64(&j, "count_b", r->nb);
		ls_json_dbl(&j, "p50_a_ns", r->p50a);
		ls_json_dbl(&j, "p50_b_ns", r->p50b);
		ls_json_dbl(&j, "p50_change_pct", change_pct(r->p50a, r->p50b));
		ls_json_dbl(&j, "p99_a_ns", r->p99a);
		ls_json_dbl(&j, "p99_b_ns", r->p99b);
		ls_json_dbl(&j, "p99_change_pct", change_pct(r->p99a, r->p99b));
		ls_json_bool(&j, "tested", r->tested);
		if (r->tested) {
			ls_json_dbl(&j, "mwu_p", r->mwu.p);
			ls_json_dbl(&j, "mwu_p_adj", r->p_mwu_adj);
			ls_json_dbl(&j, "prob_b_gt_a", r->mwu.prob_b_gt_a);
			ls_json_dbl(&j, "serial_corr_a", r->mwu.rho_a);
			ls_json_dbl(&j, "serial_corr_b", r->mwu.rho_b);
			ls_json_dbl(&j, "mwu_variance_factor", r->mwu.inflation);
			ls_json_dbl(&j, "tail_threshold_ns", r->qt.threshold);
			ls_json_u64(&j, "tail_above_a", r->qt.a_above);
			ls_json_u64(&j, "tail_above_b", r->qt.b_above);
			ls_json_dbl(&j, "tail_variance_factor", r->qt.inflation);
			ls_json_dbl(&j, "tail_p", r->qt.p);
			ls_json_dbl(&j, "tail_p_adj", r->p_q_adj);
		}
		ls_json_i64(&j, "p50_direction", r->dir50);
		ls_json_i64(&j, "p99_direction", r->dir99);
		ls_json_str(&j, "verdict", verdict(r));
		ls_json_bool(&j, "regression", r->regression);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_u64(&j, "regressions", nreg);
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* Read one file (a document, or JSON lines: pooled) and its series. */
static int load(const char *path, struct ls_jdoc **docs, size_t *ndocs,
		struct ls_series_set *set, struct ls_err *err)
{
	if (ls_jr_parse_file_stream(docs, ndocs, path, NULL, err))
		return -1;
	if (ls_series_collect_docs(*docs, *ndocs, set, err)) {
		ls_jr_free_stream(*docs, *ndocs);
		*docs = NULL;
		*ndocs = 0;
		return -1;
	}
	return 0;
}

/* `latsplit compare`. */
int cmd_compare(int argc, char **argv)
{
	struct ls_series_set sa = { 0 }, sb = { 0 };
	struct ls_jdoc *da = NULL, *db = NULL;
	size_t nda = 0, ndb = 0;
	struct compare_opts o = { 0 };
	struct ls_err err = { 0 };
	struct row *rows = NULL;
	size_t nrows = 0, nreg = 0, ntested = 0;
	int ret;

	ret = parse_args(argc, argv, &o, &err);
	if (ret)
		return ls_opts_exit(ret, "compare", &err);
	ret = LS_EXIT_USAGE;
	if (load(o.file_a, &da, &nda, &sa, &err) || load(o.file_b, &db, &ndb, &sb, &err))
		goto out;
	if (sa.schema != sb.schema) {
		ls_errf(&err, "different schema versions: %s has %g, %s has %g", o.file_a,
			sa.schema, o.file_b, sb.schema);
		goto out;
	}
	if (sa.schema != LS_JSON_SCHEMA) {
		ls_errf(&err, "%s: schema %g, this latsplit reads schema %d", o.file_a,
			sa.schema, LS_JSON_SCHEMA);
		goto out;
	}
	if (strcmp(sa.kind, sb.kind)) {
		ls_errf(&err, "different kinds: %s is '%s', %s is '%s'", o.file_a, sa.kind,
			o.file_b, sb.kind);
		goto out;
	}
	if (build_rows(&o, &sa, &sb, &rows, &nrows, &err))
		goto out;
	if (!nrows) {
		ls_errf(&err, "nothing to compare: no distribution (p50_ns/p99_ns or samples_ns) "
			"%sin both %s and %s", o.only ? "matching --only " : "", o.file_a, o.file_b);
		goto out;
	}
	for (size_t i = 0; i < nrows; i++) {
		nreg += rows[i].regression;
		ntested += rows[i].tested;
	}
	if (!ntested) {
		ls_errf(&err, "nothing could be tested: none of the %zu distribution(s) in both "
			"files has samples_ns with values in both (empty sample sets, or "
			"summaries only)", nrows);
		goto out;
	}
	if (o.json)
		json_rows(&o, &sa, &sb, rows, nrows, nreg);
	else
		print_rows(&o, &sa, &sb, rows, nrows);
	if (!o.json) {
		if (!isnan(o.max_regress))
			printf("\n%zu significant regression(s) above %g%%\n", nreg, o.max_regress);
	}
	ret = nreg ? LS_EXIT_FAIL : LS_EXIT_OK;
out:
	if (ret == LS_EXIT_USAGE)
		ls_warn("compare: %s", err.msg);
	free(rows);
	ls_series_free(&sa);
	ls_series_free(&sb);
	ls_jr_free_stream(da, nda);
	ls_jr_free_stream(db, ndb);
	return ret;
}
