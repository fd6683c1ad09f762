// SPDX-License-Identifier: GPL-2.0
/* Find the latency distributions (summaries, samples_ns) in a latsplit JSON document. */
#include "jseries.h"
#include "signif.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walker {
	const struct ls_jdoc *doc;
	size_t doc_index;
	struct ls_series_set *set;
	struct ls_err *err;
};

/* Is v a summary object (numeric p50_ns and p99_ns)? */
static bool is_summary(const struct ls_jv *v)
{
	const struct ls_jv *a = ls_jv_get(v, "p50_ns"), *b = ls_jv_get(v, "p99_ns");

	return a && b && a->type == LS_JNUM && b->type == LS_JNUM;
}

/* The samples_ns array of v, or NULL. */
static const struct ls_jv *samples_of(const struct ls_jv *v)
{
	const struct ls_jv *s = ls_jv_get(v, "samples_ns");

	return s && s->type == LS_JARR ? s : NULL;
}

/* Error naming the line:column of v. */
static int at(struct walker *w, const struct ls_jv *v, const char *path,
	      const char *what)
{
	unsigned int line, col;

	ls_jr_pos(w->doc, v->off, &line, &col);
	return ls_errf(w->err, "%s:%u:%u: %s: %s", w->doc->name, line, col,
		       path[0] ? path : "(top level)", what);
}

/* Check a samples_ns array: finite numbers >= 0 only. */
static int check_samples(struct walker *w, const struct ls_jv *samples, const char *path)
{
	for (size_t i = 0; i < samples->arr.n; i++) {
		const struct ls_jv *x = &samples->arr.v[i];

		if (x->type != LS_JNUM || !(x->num >= 0) || !isfinite(x->num)) {
			char what[96];

			snprintf(what, sizeof(what),
				 "samples_ns[%zu] is %s, expected a finite number >= 0", i,
				 x->type != LS_JNUM ? ls_jtype_name(x->type) :
				 x->num < 0 ? "negative" : "not finite");
			return at(w, x, path, what);
		}
	}
	return 0;
}

/* A summary's count, when present, is a whole number in [0, 2^53]. */
static int check_count(struct walker *w, const struct ls_jv *summary, const char *path)
{
	const struct ls_jv *c = ls_jv_get(summary, "count");

	if (!c)
		return 0;
	if (c->type != LS_JNUM || !(c->num >= 0) || c->num > 9007199254740992.0 ||
	    c->num != floor(c->num))
		return at(w, c, path, "summary count is not a whole number in [0, 2^53]");
	return 0;
}

/* FNV-1a of a series name: the index's hash. */
static size_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

/* Put series i into the name index (linear probing; the index has room). */
static void index_put(struct ls_series_set *set, size_t i)
{
	size_t k = name_hash(set->v[i].name) & (set->hcap - 1);

	while (set->hidx[k])
		k = (k + 1) & (set->hcap - 1);
	set->hidx[k] = i + 1;
}

/*
 * Index the newest series, growing the index to four times the series
 * when it would be over half full, so a lookup stays O(1): compare with
 * 40,000 series was quadratic with a linear search (6.4 s).
 */
static int index_add(struct ls_series_set *set)
{
	if (2 * set->n > set->hcap) {
		size_t ncap = 64;

		while (ncap < 4 * set->n)
			ncap *= 2;
		free(set->hidx);
		set->hidx = calloc(ncap, sizeof(*set->hidx));
		set->hcap = set->hidx ? ncap : 0;
		if (!set->hidx)
			return -1;
		for (size_t i = 0; i < set->n; i++)
			index_put(set, i);
		return 0;
	}
	index_put(set, set->n - 1);
	return 0;
}

/* Add a series named path, or pool it into the one of an earlier document. */
static int add(struct walker *w, const char *path, const struct ls_jv *summary,
	       const struct ls_jv *samples)
{
	const char *name = path[0] ? path : "(top level)";
	struct ls_series *s = (struct ls_series *)ls_series_find(w->set, name);
	size_t have;

	if (samples && check_samples(w, samples, path))
		return -1;
	if (summary && check_count(w, summary, path))
		return -1;
	if (s && s->last_doc == w->doc_index)
		return at(w, summary ? summary : samples, path,
			  "two distributions with the same name");
	if (!s) {
		if (w->set->n == w->set->cap) {
			size_t ncap = w->set->cap ? 2 * w->set->cap : 16;
			struct ls_series *nv = realloc(w->set->v, ncap * sizeof(*nv));

			if (!nv)
				return ls_errf(w->err, "%s: out of memory", w->doc->name);
			w->set->v = nv;
			w->set->cap = ncap;
		}
		s = &w->set->v[w->set->n++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->p50_ns = NAN;
		s->p99_ns = NAN;
		if (index_add(w->set))
			return ls_errf(w->err, "%s: out of memory (series index)", w->doc->name);
	}
	s->last_doc = w->doc_index;
	if (summary) {
		const struct ls_jv *c = ls_jv_get(summary, "count");
		size_t count = c ? (size_t)c->num : 0;

		if (!s->ndocs) {
			s->p50_ns = ls_jv_get(summary, "p50_ns")->num;
			s->p99_ns = ls_jv_get(summary, "p99_ns")->num;
		} else {
			s->p50_ns = NAN;	/* percentiles of several intervals do not pool */
			s->p99_ns = NAN;
		}
		s->has_summary = true;
		s->count += count;
	}
	s->ndocs++;
	if (samples) {
		have = s->nvals;
		s->has_samples = true;
		if (samples->arr.n) {
			double *nv = realloc(s->vals, (have + samples->arr.n) * sizeof(*nv));

			if (!nv)
				return ls_errf(w->err, "%s: out of memory for samples", w->doc->name);
			s->vals = nv;
			for (size_t i = 0; i < samples->arr.n; i++)
				s->vals[have + i] = samples->arr.v[i].num;
			s->nvals = have + samples->arr.n;
			if (samples->arr.n > 2 &&
			    ls_samples_unordered(s->vals + have, samples->arr.n))
				s->unordered = true;
		}
	}
	return 0;
}

/* Name of array element i: [name=X], [size=N], [cpu=N], [irq=N], [id=N] or [i]. */
static void elem_name(const struct ls_jv *e, size_t i, char *buf, size_t len)
{
	static const char *const keys[] = { "size", "cpu", "irq", "id" };
	const struct ls_jv *k = ls_jv_get(e, "name");

	if (k && k->type == LS_JSTR) {
		snprintf(buf, len, "[name=%.60s]", k->str.s);
		return;
	}
	for (size_t j = 0; j < ARRAY_SIZE(keys); j++) {
		k = ls_jv_get(e, keys[j]);
		if (k && k->type == LS_JNUM) {
			snprintf(buf, len, "[%s=%.0f]", keys[j], k->num);
			return;
		}
	}
	snprintf(buf, len, "[%zu]", i);
}

/* Join a path and a component. */
static void join(char *out, size_t len, const char *path, const char *comp, bool dot)
{
	snprintf(out, len, "%s%s%s", path, path[0] && dot ? "." : "", comp);
}

/* Walk v (at path), adding every series under it. */
static int walk(struct walker *w, const struct ls_jv *v, const char *path)
{
	char sub[256];
	int err;

	if (v->type == LS_JARR) {
		for (size_t i = 0; i < v->arr.n; i++) {
			char comp[80];

			elem_name(&v->arr.v[i], i, comp, sizeof(comp));
			join(sub, sizeof(sub), path, comp, false);
			err = walk(w, &v->arr.v[i], sub);
			if (err)
				return err;
		}
		return 0;
	}
	if (v->type != LS_JOBJ)
		return 0;
	{
		const struct ls_jv *samples = samples_of(v);
		const struct ls_jv *child = NULL;
		const char *child_key = NULL;
		size_t nchild = 0;

		if (!samples && ls_jv_get(v, "samples_ns"))
			return at(w, ls_jv_get(v, "samples_ns"), path,
				  "samples_ns is not an array");
		if (is_summary(v)) {
			err = add(w, path, v, samples);
			if (err)
				return err;
		} else if (samples) {
			for (size_t i = 0; i < v->obj.n; i++) {
				const struct ls_jv *c = &v->obj.m[i].val;

				if (is_summary(c) && !samples_of(c)) {
					nchild++;
					child = c;
					child_key = v->obj.m[i].key;
				}
			}
			if (nchild == 1) {
				join(sub, sizeof(sub), path, child_key, true);
				err = add(w, sub, child, samples);
			} else {
				err = add(w, path, NULL, samples);
				child = NULL;
			}
			if (err)
				return err;
		}
		for (size_t i = 0; i < v->obj.n; i++) {
			const struct ls_jv *c = &v->obj.m[i].val;

			if (c == child || c == samples)
				continue;
			join(sub, sizeof(sub), path, v->obj.m[i].key, true);
			err = walk(w, c, sub);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Read schema and kind of one document. */
static int header(const struct ls_jdoc *doc, double *schema, char *kind, size_t len,
		  struct ls_err *err)
{
	const struct ls_jv *sc, *k;

	if (doc->root.type != LS_JOBJ)
		return ls_errf(err, "%s: not a latsplit document (top level is %s, not an object)",
			       doc->name, ls_jtype_name(doc->root.type));
	sc = ls_jv_get(&doc->root, "schema");
	k = ls_jv_get(&doc->root, "kind");
	if (!sc || sc->type != LS_JNUM)
		return ls_errf(err, "%s: not a latsplit document (no numeric \"schema\")",
			       doc->name);
	if (!k || k->type != LS_JSTR)
		return ls_errf(err, "%s: not a latsplit document (no string \"kind\")",
			       doc->name);
	*schema = sc->num;
	snprintf(kind, len, "%s", k->str.s);
	return 0;
}

/* Collect every series of a stream of documents. */
int ls_series_collect_docs(const struct ls_jdoc *docs, size_t n,
			   struct ls_series_set *set, struct ls_err *err)
{
	memset(set, 0, sizeof(*set));
	for (size_t i = 0; i < n; i++) {
		struct walker w = { .doc = &docs[i], .doc_index = i, .set = set, .err = err };
		char kind[sizeof(set->kind)];
		double schema = 0;

		if (header(&docs[i], &schema, kind, sizeof(kind), err))
			goto fail;
		if (!i) {
			set->schema = schema;
			memcpy(set->kind, kind, sizeof(kind));
		} else if (schema != set->schema || strcmp(kind, set->kind)) {
			unsigned int line, col;

			ls_jr_pos(&docs[i], docs[i].root.off, &line, &col);
			ls_errf(err, "%s:%u:%u: document %zu is schema %g kind '%s', the first "
				"is schema %g kind '%s'", docs[i].name, line, col, i + 1, schema,
				kind, set->schema, set->kind);
			goto fail;
		}
		if (walk(&w, &docs[i].root, ""))
			goto fail;
	}
	set->ndocs = n;
	return 0;
fail:
	ls_series_free(set);
	return -1;
}

/* Check the header and collect every series of doc. */
int ls_series_collect(const struct ls_jdoc *doc, struct ls_series_set *set,
		      struct ls_err *err)
{
	return ls_series_collect_docs(doc, 1, set, err);
}

/* Free a series set. */
void ls_series_free(struct ls_series_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->v[i].vals);
	free(set->v);
	free(set->hidx);
	set->v = NULL;
	set->hidx = NULL;
	set->n = 0;
	set->cap = 0;
	set->hcap = 0;
}

/* Find a series by name. */
const struct ls_series *ls_series_find(const struct ls_series_set *set,
				       const char *name)
{
	if (!set->hcap) {		/* no index: a set not built by add() */
		for (size_t i = 0; i < set->n; i++)
			if (!strcmp(set->v[i].name, name))
				return &set->v[i];
		return NULL;
	}
	for (size_t k = name_hash(name) & (set->hcap - 1); set->hidx[k];
	     k = (k + 1) & (set->hcap - 1))
		if (!strcmp(set->v[set->hidx[k] - 1].name, name))
			return &set->v[set->hidx[k] - 1];
	return NULL;
}

/* Copy a series' samples into a new array. */
int ls_series_samples(const struct ls_series *s, double **out, size_t *n,
		      struct ls_err *err)
{
	double *v;

	*out = NULL;
	*n = 0;
	if (!s->nvals)
		return 0;
	v = malloc(s->nvals * sizeof(*v));
	if (!v)
		return ls_errf(err, "%s: out of memory for %zu samples", s->name, s->nvals);
	memcpy(v, s->vals, s->nvals * sizeof(*v));
	*out = v;
	*n = s->nvals;
	return 0;
}
