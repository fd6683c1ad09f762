// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for tools/jsonr.c. Any input must either be rejected
 * with a message that names a line:column, or parse into a tree that
 * tools/json.c writes back out and jsonr reads again into the same tree
 * (a differential check between the writer and the reader). Parsed trees
 * also go through the distribution finder that compare and model use.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jseries.h"
#include "json.h"
#include "jsonr.h"

/* Write v with the project's JSON writer (key NULL inside arrays). */
static void emit(struct ls_json *j, const char *key, const struct ls_jv *v)
{
	size_t i;

	switch (v->type) {
	case LS_JNULL: ls_json_null(j, key); break;
	case LS_JBOOL: ls_json_bool(j, key, v->b); break;
	case LS_JNUM: ls_json_dbl(j, key, v->num); break;
	case LS_JSTR: ls_json_str(j, key, v->str.s); break;
	case LS_JARR:
		ls_json_arr_open(j, key);
		for (i = 0; i < v->arr.n; i++)
			emit(j, NULL, &v->arr.v[i]);
		ls_json_arr_close(j);
		break;
	case LS_JOBJ:
		ls_json_obj_open(j, key);
		for (i = 0; i < v->obj.n; i++)
			emit(j, v->obj.m[i].key, &v->obj.m[i].val);
		ls_json_obj_close(j);
		break;
	}
}

/* Does the tree hold a string or key with an embedded NUL (the writer stops there)? */
static int has_nul(const struct ls_jv *v)
{
	size_t i;

	if (v->type == LS_JSTR)
		return strlen(v->str.s) != v->str.len;
	if (v->type == LS_JARR) {
		for (i = 0; i < v->arr.n; i++)
			if (has_nul(&v->arr.v[i]))
				return 1;
	}
	if (v->type == LS_JOBJ) {
		for (i = 0; i < v->obj.n; i++)
			if (strlen(v->obj.m[i].key) != v->obj.m[i].key_len ||
			    has_nul(&v->obj.m[i].val))
				return 1;
	}
	return 0;
}

/* Structural equality of two trees. */
static int same(const struct ls_jv *a, const struct ls_jv *b)
{
	size_t i;

	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case LS_JNULL: return 1;
	case LS_JBOOL: return a->b == b->b;
	case LS_JNUM: return a->num == b->num;
	case LS_JSTR: return a->str.len == b->str.len && !memcmp(a->str.s, b->str.s, a->str.len);
	case LS_JARR:
		if (a->arr.n != b->arr.n)
			return 0;
		for (i = 0; i < a->arr.n; i++)
			if (!same(&a->arr.v[i], &b->arr.v[i]))
				return 0;
		return 1;
	case LS_JOBJ:
		if (a->obj.n != b->obj.n)
			return 0;
		for (i = 0; i < a->obj.n; i++)
			if (strcmp(a->obj.m[i].key, b->obj.m[i].key) ||
			    !same(&a->obj.m[i].val, &b->obj.m[i].val))
				return 0;
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Depth below the writer's LS_JSON_MAX_DEPTH so the round trip is exact. */
	struct ls_jlimits lim = { .max_depth = LS_JSON_MAX_DEPTH - 2,
				  .max_values = 100000, .max_bytes = 1 << 20 };
	struct ls_err err = { 0 };
	struct ls_jdoc doc, again;
	struct ls_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if (ls_jr_parse(&doc, "fuzz", (const char *)data, size, &lim, &err)) {
		/* Every rejection names the place: "fuzz:LINE:COL: ..." */
		unsigned int line, col;

		if (sscanf(err.msg, "fuzz:%u:%u: ", &line, &col) != 2 &&
		    err.code != LS_E_LIMIT)
			abort();
		return 0;
	}
	{
		struct ls_series_set set;

		if (!ls_series_collect(&doc, &set, &err)) {
			for (size_t i = 0; i < set.n; i++) {
				double *v;
				size_t n;

				if (ls_series_samples(&set.v[i], &v, &n, &err))
					abort();
				free(v);
			}
			ls_series_free(&set);
		}
	}
	if (has_nul(&doc.root)) {
		ls_jr_free(&doc);
		return 0;
	}
	fp = open_memstream(&buf, &len);
	if (!fp)
		abort();
	ls_json_init(&j, fp, size & 1);
	emit(&j, NULL, &doc.root);
	ls_json_end(&j);
	fclose(fp);
	if (ls_jr_parse(&again, "rewritten", buf, len, &lim, &err)) {
		fprintf(stderr, "writer output rejected: %s\n%s\n", err.msg, buf);
		abort();
	}
	if (!same(&doc.root, &again.root)) {
		fprintf(stderr, "round trip differs:\n%s\n", buf);
		abort();
	}
	ls_jr_free(&again);
	ls_jr_free(&doc);
	free(buf);
	return 0;
}
