/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus text exposition (0.0.4) and OpenMetrics 1.0 text writer, for
 * fleet output (`--prom FILE`). Every family gets its # HELP and # TYPE
 * lines once, its samples stay together (a family cannot be reopened),
 * metric and label names are validated, label values and help text are
 * escaped, and the file is written atomically (ls_afile_*): a scraper or
 * node_exporter's textfile collector sees the old file or the whole new one.
 *
 * Names follow the project's convention: latsplit_*, units in the name
 * (_seconds), counters end in _total (OpenMetrics: the family is declared
 * without the suffix, samples carry it).
 */
#ifndef LS_PROM_H
#define LS_PROM_H

#include <stdbool.h>
#include <stdio.h>

#include "io.h"
#include "stats.h"
#include "util.h"

enum ls_prom_type {
	LS_PROM_GAUGE,
	LS_PROM_COUNTER,
	LS_PROM_SUMMARY,
	LS_PROM_UNTYPED,
};

struct ls_prom_label {
	const char *name;
	const char *value;
};

#define LS_PROM_MAX_FAMILIES	256

/* The head of a fleet command's --prom record of one pair. */
struct ls_prom_pair {
	char peer[80];
	bool ok;			/* the pair's run went to the end */
};

struct ls_prom {
	struct ls_afile af;
	FILE *fp;
	bool to_stdout;			/* stdout or a caller's stream: not atomic */
	bool openmetrics;
	enum ls_prom_type type;		/* of the open family */
	char family[128];		/* the open family ("" = none) */
	char *done[LS_PROM_MAX_FAMILIES];	/* families already written */
	unsigned int nr_done;
	bool failed;
};

/* Start a document at path ("-" = stdout, not atomic). */
int ls_prom_open(struct ls_prom *p, const char *path, bool openmetrics,
		 struct ls_err *err);
/* Start a document on an open stream fp (a memory buffer): commit flushes it, nothing is closed. */
int ls_prom_open_fp(struct ls_prom *p, FILE *fp, bool openmetrics);
/* Start a metric family: writes # HELP and # TYPE. */
int ls_prom_family(struct ls_prom *p, const char *name, enum ls_prom_type type,
		   const char *help, struct ls_err *err);
/*
 * One sample of the open family: name = family name + suffix (suffix may
 * be NULL or "_sum", "_count"...; counters get _total by themselves).
 */
int ls_prom_sample(struct ls_prom *p, const char *suffix,
		   const struct ls_prom_label *labels, unsigned int nr_labels,
		   double value, struct ls_err *err);
/*
 * A latency distribution (ns) as a summary in seconds: quantile 0.5, 0.9,
 * 0.99, 0.999 samples plus _sum and _count. The open family must be a
 * summary.
 */
int ls_prom_summary(struct ls_prom *p, const struct ls_prom_label *labels,
		    unsigned int nr_labels, const struct ls_summary *s_ns,
		    struct ls_err *err);
/*
 * An "up" gauge family: a sample per pair, 1 when its run went to the end,
 * labelled by its peer. The n records are size bytes apart, each beginning
 * with a struct ls_prom_pair.
 */
int ls_prom_up(struct ls_prom *p, const char *name, const char *help,
	       const void *pairs, size_t n, size_t size, struct ls_err *err);
/* Finish (OpenMetrics: "# EOF") and rename into place. */
int ls_prom_commit(struct ls_prom *p, struct ls_err *err);
/* Drop an unfinished document; the target file is left untouched. */
void ls_prom_abort(struct ls_prom *p);

#endif /* LS_PROM_H */
