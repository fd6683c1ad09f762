// SPDX-License-Identifier: GPL-2.0
/* `latsplit compare A.json B.json`: A/B latency comparison with significance, exit 1 on regression. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "compare.h"
#include "io.h"
#include "json.h"
#include "jseries.h"
#include "jsonr.h"
#include "opts.h"
#include "signif.h"
#include "stats.h"
#include "util.h"

struct compare_opts {
	const char *file_a, *file_b;
	struct ls_cmp_params p;
	bool json;
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
	LS_OPT_DBL("alpha", 'a', CMP, p.alpha, 1e-9, 0.5),
	LS_OPT_DBL("max-regress", 'r', CMP, p.max_regress, 0, 1e6),
	LS_OPT_STR("only", 'o', CMP, p.only),
	LS_OPT_DBL("min-change", 'm', CMP, p.min_change, 0, 1e6),
	LS_OPT_FLAG("independent", 'i', CMP, p.independent),
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

	o->p.alpha = 0.01;
	o->p.max_regress = NAN;
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
		       const struct ls_series_set *sb, const struct ls_cmp_row *rows, size_t n)
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
	       o->p.independent ? "samples taken as independent" :
	       "variances widened for lag-1 serial correlation (AR(1))", o->p.alpha);
	printf("  %-*s %7s %7s %10s %10s %8s %8s %10s %10s %8s %8s  %s\n", w, "distribution",
	       "n A", "n B", "p50 A", "p50 B", "change", "p adj", "p99 A", "p99 B", "change",
	       "p adj", "verdict");
	for (size_t i = 0; i < n; i++) {
		const struct ls_cmp_row *r = &rows[i];
		char pa[16] = "-", pq[16] = "-";

		if (r->tested) {
			snprintf(pa, sizeof(pa), "%.2g", r->p_mwu_adj);
			snprintf(pq, sizeof(pq), "%.2g", r->p_q_adj);
		}
		printf("  %-*s %7zu %7zu %10s %10s %8s %8s %10s %10s %8s %8s  %s%s\n", w, r->name,
		       r->na, r->nb, fmt_ns(r->p50a, b[0], 32), fmt_ns(r->p50b, b[1], 32),
		       fmt_pct(ls_cmp_change_pct(r->p50a, r->p50b), b[2], 32), pa,
		       fmt_ns(r->p99a, b[3], 32), fmt_ns(r->p99b, b[4], 32),
		       fmt_pct(ls_cmp_change_pct(r->p99a, r->p99b), b[5], 32), pq, ls_cmp_verdict(r),
		       r->regression ? "  REGRESSION" : "");
	}
	for (size_t i = 0; i < sa->n; i++) {
		if (!ls_series_find(sb, sa->v[i].name) &&
		    (!o->p.only || !strncmp(sa->v[i].name, o->p.only, strlen(o->p.only))))
			printf("  %-*s only in A\n", w, sa->v[i].name);
	}
	for (size_t i = 0; i < sb->n; i++) {
		if (!ls_series_find(sa, sb->v[i].name) &&
		    (!o->p.only || !strncmp(sb->v[i].name, o->p.only, strlen(o->p.only))))
			printf("  %-*s only in B\n", w, sb->v[i].name);
	}
}

/* JSON output (kind "compare"). */
static void json_rows(const struct compare_opts *o, const struct ls_series_set *sa,
		      const struct ls_series_set *sb, const struct ls_cmp_row *rows, size_t n,
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
	ls_json_str(&j, "serial_correlation", o->p.independent ? "none (independent samples)" :
		    "lag-1 AR(1) variance factor (1+rho)/(1-rho); ranks for U, exceedances for p99");
	ls_json_dbl(&j, "alpha", o->p.alpha);
	if (isnan(o->p.max_regress))
		ls_json_null(&j, "max_regress_pct");
	else
		ls_json_dbl(&j, "max_regress_pct", o->p.max_regress);
	ls_json_dbl(&j, "min_change_pct", o->p.min_change);
	ls_json_obj_close(&j);
	ls_json_arr_open(&j, "series");
	for (size_t i = 0; i < n; i++) {
		const struct ls_cmp_row *r = &rows[i];

		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "name", r->name);
		ls_json_u64(&j, "count_a", r->na);
		ls_json_u64(&j, "count_b", r->nb);
		ls_json_dbl(&j, "p50_a_ns", r->p50a);
		ls_json_dbl(&j, "p50_b_ns", r->p50b);
		ls_json_dbl(&j, "p50_change_pct", ls_cmp_change_pct(r->p50a, r->p50b));
		ls_json_dbl(&j, "p99_a_ns", r->p99a);
		ls_json_dbl(&j, "p99_b_ns", r->p99b);
		ls_json_dbl(&j, "p99_change_pct", ls_cmp_change_pct(r->p99a, r->p99b));
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
		ls_json_str(&j, "verdict", ls_cmp_verdict(r));
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
	struct ls_cmp_row *rows = NULL;
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
	if (ls_cmp_build(&o.p, &sa, &sb, &rows, &nrows, &err))
		goto out;
	if (!nrows) {
		ls_errf(&err, "nothing to compare: no distribution (p50_ns/p99_ns or samples_ns) "
			"%sin both %s and %s", o.p.only ? "matching --only " : "", o.file_a, o.file_b);
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
		if (!isnan(o.p.max_regress))
			printf("\n%zu significant regression(s) above %g%%\n", nreg, o.p.max_regress);
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
