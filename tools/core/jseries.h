/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency distributions found in a latsplit JSON document (any kind).
 *
 * A series is an object that carries a summary (numeric "p50_ns" and
 * "p99_ns", as ls_json_summary() writes) and/or raw values
 * ("samples_ns": [numbers]). An object with samples but no summary of its
 * own that has exactly one child summary without samples is one series,
 * named after that child. Names are dotted paths from the root; array
 * elements are named [name=X], [size=N], [cpu=N], [irq=N], [id=N] or [N]
 * (the first that applies), so the same series matches across two documents.
 */
#ifndef LS_JSERIES_H
#define LS_JSERIES_H

#include <stdbool.h>
#include <stddef.h>

#include "jsonr.h"
#include "util.h"

struct ls_series {
	char name[256];
	bool has_summary;		/* p50_ns/p99_ns were given */
	double p50_ns, p99_ns;		/* from the summary (NAN without one) */
	size_t count;			/* summary "count" if present, else 0 */
	bool has_samples;		/* a "samples_ns" array was given */
	double *vals;			/* its values (owned), pooled over documents */
	size_t nvals;
	bool unordered;			/* some document's samples were sorted: */
					/* no measurement order to rely on */
	size_t ndocs;			/* documents it appeared in */
	size_t last_doc;
};

struct ls_series_set {
	struct ls_series *v;
	size_t n;
	size_t cap;
	size_t *hidx;			/* name hash -> index + 1 (0 empty), open */
	size_t hcap;			/* addressing; a power of two > 2 n */
	size_t ndocs;
	char kind[32];			/* the documents' "kind" */
	double schema;			/* the documents' "schema" */
};

/*
 * Check the header (object with numeric "schema" and string "kind") and
 * collect every series. Values inside samples_ns must be finite numbers
 * >= 0: anything else is an error naming its line:column.
 */
int ls_series_collect(const struct ls_jdoc *doc, struct ls_series_set *set,
		      struct ls_err *err);
/* The same over a stream of n documents, which must share schema and kind. */
int ls_series_collect_docs(const struct ls_jdoc *docs, size_t n,
			   struct ls_series_set *set, struct ls_err *err);
void ls_series_free(struct ls_series_set *set);
/* Find a series by name, or NULL. */
const struct ls_series *ls_series_find(const struct ls_series_set *set,
				       const char *name);
/* Copy a series' samples into a new array (caller frees); n = 0 if none. */
int ls_series_samples(const struct ls_series *s, double **out, size_t *n,
		      struct ls_err *err);

#endif /* LS_JSERIES_H */
