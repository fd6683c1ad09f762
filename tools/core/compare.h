/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The A/B comparison behind `latsplit compare` and the report's A/B view:
 * every distribution found in both sets (jseries.h) gets its p50 and p99
 * and, when both sides have samples, a Mann-Whitney U test (p50) and a
 * quantile test at p99 (signif.h), Holm-adjusted over all the tests.
 */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "jseries.h"
#include "signif.h"
#include "util.h"

/* How rows are tested and judged. */
struct ls_cmp_params {
	double alpha;		/* family-wise significance level */
	double max_regress;	/* percent; NAN = report only */
	double min_change;	/* percent: smaller significant shifts are no change */
	const char *only;	/* series name prefix, or NULL */
	bool independent;	/* no serial-correlation correction */
};

/* One series present in both documents, and what the tests said. */
struct ls_cmp_row {
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

/*
 * One row per distribution of sa also in sb (and matching o->only), tested
 * and judged; *rows_out (free it) has *nrows rows.
 */
int ls_cmp_build(const struct ls_cmp_params *o, const struct ls_series_set *sa,
		 const struct ls_series_set *sb, struct ls_cmp_row **rows_out, size_t *nrows,
		 struct ls_err *err);
/* Relative change B vs A in percent (NAN when A is 0). */
double ls_cmp_change_pct(double a, double b);
/* One phrase for a row's outcome ("slower", "no significant change", ...). */
const char *ls_cmp_verdict(const struct ls_cmp_row *r);

#endif /* LS_COMPARE_H */
