/* SPDX-License-Identifier: GPL-2.0 */
/* Streaming JSON writer: commas, nesting and string escaping handled here. */
#ifndef LS_JSON_H
#define LS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jsonr.h"	/* LS_JSON_SCHEMA */
#include "stats.h"
#include "verdict.h"

#define LS_JSON_MAX_DEPTH	32

struct ls_json {
	FILE *fp;
	int depth;
	bool first[LS_JSON_MAX_DEPTH];
	bool pretty;
};

void ls_json_init(struct ls_json *j, FILE *fp, bool pretty);
/* Start a latsplit document on fp: the top object, its "schema" and its "kind". */
void ls_json_doc_open(struct ls_json *j, FILE *fp, bool pretty, const char *kind);
/* Open an object / array; key is NULL inside arrays and at the top. */
void ls_json_obj_open(struct ls_json *j, const char *key);
void ls_json_obj_close(struct ls_json *j);
void ls_json_arr_open(struct ls_json *j, const char *key);
void ls_json_arr_close(struct ls_json *j);
/* Members (key NULL inside arrays). */
void ls_json_str(struct ls_json *j, const char *key, const char *val);
void ls_json_u64(struct ls_json *j, const char *key, uint64_t val);
void ls_json_i64(struct ls_json *j, const char *key, int64_t val);
/* Doubles print with enough digits to round-trip; NaN/inf become null. */
void ls_json_dbl(struct ls_json *j, const char *key, double val);
void ls_json_bool(struct ls_json *j, const char *key, bool val);
void ls_json_null(struct ls_json *j, const char *key);
/* Finish the document (newline). */
void ls_json_end(struct ls_json *j);

/* The members of summary s in the open object: count, min_ns ... stdev_ns. */
void ls_json_summary_members(struct ls_json *j, const struct ls_summary *s);
/* The seed's latency thresholds, in the open object (ns). */
void ls_json_threshold_members(struct ls_json *j, const struct ls_thresholds *th);
/* Write s as a JSON object under key; figures in ns with _ns keys. */
void ls_json_summary(struct ls_json *j, const char *key,
		     const struct ls_summary *s);

#endif /* LS_JSON_H */
