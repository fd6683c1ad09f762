// SPDX-License-Identifier: GPL-2.0
/* Streaming JSON writer: commas, nesting and string escaping handled here. */
#include "json.h"

#include <math.h>
#include <inttypes.h>

/* Initialise a writer on fp. */
void ls_json_init(struct ls_json *j, FILE *fp, bool pretty)
{
	j->fp = fp;
	j->depth = 0;
	j->first[0] = true;
	j->pretty = pretty;
}

/* Start a latsplit document on fp: the top object, its "schema" and its "kind". */
void ls_json_doc_open(struct ls_json *j, FILE *fp, bool pretty, const char *kind)
{
	ls_json_init(j, fp, pretty);
	ls_json_obj_open(j, NULL);
	ls_json_u64(j, "schema", LS_JSON_SCHEMA);
	ls_json_str(j, "kind", kind);
}

/* Write a JSON string literal with escaping. */
static void put_string(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', fp);
	for (; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

/* Separator, indentation and key before a member. */
static void member(struct ls_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->fp);
	j->first[j->depth] = false;
	if (j->pretty && j->depth > 0) {
		fputc('\n', j->fp);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->fp);
	}
	if (key) {
		put_string(j->fp, key);
		fputs(j->pretty ? ": " : ":", j->fp);
	}
}

/* Open a nested container. */
static void open_c(struct ls_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->fp);
	if (j->depth + 1 < LS_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

/* Close a nested container. */
static void close_c(struct ls_json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (j->pretty && !empty) {
		fputc('\n', j->fp);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->fp);
	}
	fputc(c, j->fp);
}

void ls_json_obj_open(struct ls_json *j, const char *key) { open_c(j, key, '{'); }
void ls_json_obj_close(struct ls_json *j) { close_c(j, '}'); }
void ls_json_arr_open(struct ls_json *j, const char *key) { open_c(j, key, '['); }
void ls_json_arr_close(struct ls_json *j) { close_c(j, ']'); }

/* String member. */
void ls_json_str(struct ls_json *j, const char *key, const char *val)
{
	member(j, key);
	put_string(j->fp, val);
}

/* Unsigned integer member. */
void ls_json_u64(struct ls_json *j, const char *key, uint64_t val)
{
	member(j, key);
	fprintf(j->fp, "%" PRIu64, val);
}

/* Signed integer member. */
void ls_json_i64(struct ls_json *j, const char *key, int64_t val)
{
	member(j, key);
	fprintf(j->fp, "%" PRId64, val);
}

/* Floating-point member; non-finite values are written as null. */
void ls_json_dbl(struct ls_json *j, const char *key, double val)
{
	member(j, key);
	if (isfinite(val))
		fprintf(j->fp, "%.17g", val);
	else
		fputs("null", j->fp);
}

/* Boolean member. */
void ls_json_bool(struct ls_json *j, const char *key, bool val)
{
	member(j, key);
	fputs(val ? "true" : "false", j->fp);
}

/* null member. */
void ls_json_null(struct ls_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->fp);
}

/* Finish the document. */
void ls_json_end(struct ls_json *j)
{
	fputc('\n', j->fp);
	fflush(j->fp);
}

/* The seed's latency thresholds, in the open object (ns). */
void ls_json_threshold_members(struct ls_json *j, const struct ls_thresholds *th)
{
	ls_json_dbl(j, "normal_lo_ns", th->normal_lo_ns);
	ls_json_dbl(j, "normal_hi_ns", th->normal_hi_ns);
	ls_json_dbl(j, "abnormal_ns", th->abnormal_ns);
	ls_json_dbl(j, "hurts_ns", th->hurts_ns);
}

/* The members of a summary, in the open object (figures in ns). */
void ls_json_summary_members(struct ls_json *j, const struct ls_summary *s)
{
	ls_json_u64(j, "count", s->count);
	ls_json_dbl(j, "min_ns", s->min);
	ls_json_dbl(j, "p50_ns", s->p50);
	ls_json_dbl(j, "p90_ns", s->p90);
	ls_json_dbl(j, "p99_ns", s->p99);
	ls_json_dbl(j, "p999_ns", s->p999);
	ls_json_dbl(j, "p9999_ns", s->p9999);
	ls_json_dbl(j, "max_ns", s->max);
	ls_json_dbl(j, "mean_ns", s->mean);
	ls_json_dbl(j, "stdev_ns", s->stdev);
}

/* Write s as a JSON object under key (figures in ns). */
void ls_json_summary(struct ls_json *j, const char *key,
		     const struct ls_summary *s)
{
	ls_json_obj_open(j, key);
	ls_json_summary_members(j, s);
	ls_json_obj_close(j);
}
