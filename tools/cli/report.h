/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit report`: JSON results (breakdown, probe, irq, compare) rendered
 * into one self-contained HTML file with inline SVG plots. cmd_report.c
 * reads the documents and writes the file, report_html.c lays out the page
 * and report_plots.c draws the plots (geometry: tools/core/svg.c).
 */
#ifndef LS_REPORT_H
#define LS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "jseries.h"
#include "jsonr.h"
#include "svg.h"
#include "util.h"

/* Results of one kind overlaid in one A/B section at most (each its own colour or dash). */
#define RH_MAX_AB	8

/* One result shown: a document, or an irq file's intervals pooled. */
struct ls_rdoc {
	char name[320];			/* file name, "#k" added for the k-th of a stream */
	char kind[32];			/* breakdown, probe, irq or compare */
	char peer[128];			/* the peer it measured, "" when unnamed */
	bool fleet;			/* one of a fleet run's documents: shown alone */
	bool failed;			/* a fleet run's pair that was not measured ("ok": false) */
	const struct ls_jdoc *docs;	/* its documents (irq: every interval) */
	size_t ndocs;
	struct ls_series_set set;	/* its distributions (jseries.h; empty when failed) */
};

/* Everything read for one report. */
struct ls_report {
	struct ls_rfile {
		struct ls_jdoc *docs;
		size_t n;
	} *files;
	size_t nfiles;
	struct ls_rdoc *docs;
	size_t ndocs;
};

/* Read a file ("-" is stdin) of one or more documents into r. */
int ls_report_add_file(struct ls_report *r, const char *path, struct ls_err *err);
/* Add the documents in text (len bytes, malloc'd; r owns it from now, even on error). */
int ls_report_add_text(struct ls_report *r, const char *name, char *text, size_t len,
		       struct ls_err *err);
void ls_report_free(struct ls_report *r);
/*
 * A/B overlays: the results of one kind (not compare, not a fleet's pair)
 * are overlaid when there are 2 to RH_MAX_AB of them, whatever else is in
 * the report; the others are each shown alone.
 */
bool ls_report_overlaid(const struct ls_report *r, size_t k);
/* Why result k is shown alone, into buf ("" when it is overlaid). */
void ls_report_alone_why(const struct ls_report *r, size_t k, char *buf, size_t len);
/* Does the report say which results are shown alone (some overlaid, or too many)? */
bool ls_report_tell_alone(const struct ls_report *r);
/* The whole HTML page into out. */
int ls_report_render(const struct ls_report *r, struct ls_sb *out, struct ls_err *err);
/* Render and write to fp (name for messages). */
int ls_report_write_fp(const struct ls_report *r, FILE *fp, const char *name, struct ls_err *err);
/* Render and write atomically to path (NULL or "-": stdout); no file is left on failure. */
int ls_report_write(const struct ls_report *r, const char *path, struct ls_err *err);

/* Plots (report_plots.c); each is a <figure> with a title, axes with units and a caption. */

/* One distribution: its values; color the palette slot, dash the dash, doc its result (A = 0). */
struct rp_series {
	const char *label;
	const double *v;
	size_t n;
	unsigned int color, dash, doc;
};
/* CDF lines: each series' values sorted ascending. */
void rp_cdf(struct ls_sb *b, const char *title, const struct rp_series *l, size_t n,
	    const char *caption);

/* One stacked bar: the three parts' mean near a percentile of the total. */
struct rp_bar {
	char label[64];
	double part[3];
	double total;		/* mean total of the same samples */
	unsigned int doc;
};
void rp_stacked(struct ls_sb *b, const char *title, const char *const part_names[3],
		const struct rp_bar *bars, size_t n, const char *caption);

/* One heatmap cell: a time of (host, cpu, stage), what says which (for the label). */
struct rp_cell {
	const char *host;	/* full names, in the documents (live while drawn) */
	const char *stage;
	long cpu;
	double value_ns;
	bool verdict;		/* the verdict's CPU and stage */
};
void rp_heatmap(struct ls_sb *b, const char *title, const char *what, const struct rp_cell *c,
		size_t n, const char *caption);

/* Series over time: values in measurement order. */
void rp_time(struct ls_sb *b, const char *title, const struct rp_series *s, size_t n,
	     const char *caption);

/* One compare row as bars: p50 and p99 change in percent, significant or not. */
struct rp_change {
	const char *label;
	double p50_pct, p99_pct;
	int dir50, dir99;	/* 0: not significant */
};
void rp_changes(struct ls_sb *b, const char *title, const struct rp_change *c, size_t n,
		const char *caption);

/* A legend entry list: labels with their palette slot and dash. */
void rp_legend(struct ls_sb *b, const char *const *labels, const unsigned int *color,
	       const unsigned int *doc, size_t n);

/* Shared by the sections (report_html.c, report_kinds.c). */
extern const char rh_cap_cdf[], rh_cap_time[];
/* The A/B caption's sentence for n results (how their lines are told apart). */
const char *rh_cap_ab(size_t n);
/*
 * The look of distribution s of result k of n: up to 4 results each have
 * a dash (s the colour), 5 to RH_MAX_AB each a colour (s the dash, so at
 * most 4 distributions each), so no two lines of a plot look alike.
 */
void rh_line_style(size_t k, size_t s, size_t n, unsigned int *color, unsigned int *dash);
/* A time in ns with a unit for text ("-" when not finite). */
void rh_fmt_time(double ns, char *buf, size_t len);
/* A titled key/value table of an object's scalars (nothing when absent). */
void rh_kv_table(struct ls_sb *b, const char *title, const struct ls_jv *obj);
/* A member as escaped text, or "-". */
void rh_jstr(struct ls_sb *b, const struct ls_jv *obj, const char *key);
/* One <td> per key of obj (keys end with NULL). */
void rh_td_fields(struct ls_sb *b, const struct ls_jv *obj, const char *const *keys);
/* A sorted copy of v (NULL when out of memory). */
double *rh_sorted_copy(const double *v, size_t n);
/* The letter of the k-th result of an A/B view. */
char rh_doc_letter(size_t k);
struct ls_cmp_row;
/* compare's rows (compare.h) of every result of an A/B view against the first (k >= 1). */
struct rh_ab {
	struct ls_cmp_row *rows[RH_MAX_AB];
	size_t n[RH_MAX_AB];
};
/* compare's rows of d[1..n) against d[0], at latsplit compare's defaults (computed once). */
int rh_ab_build(const struct ls_rdoc *d, size_t n, struct rh_ab *ab, struct ls_err *err);
void rh_ab_free(struct rh_ab *ab);
/* compare's significance of every result against the first, as tables. */
void rh_ab_tables(struct ls_sb *b, size_t n, const struct rh_ab *ab);
/* End the plots column, open the facts column. */
void rh_aside_open(struct ls_sb *b, const struct ls_rdoc *d, size_t n);
/* The probe and irq sections (n > 1: A/B). */
int rh_sec_series(struct ls_sb *b, const struct ls_rdoc *d, size_t n, struct ls_err *err);
/* A compare document's section. */
int rh_sec_compare(struct ls_sb *b, const struct ls_rdoc *d, struct ls_err *err);

#endif /* LS_REPORT_H */
