// SPDX-License-Identifier: GPL-2.0
/*
 * tools/jseries.c: how compare and model find distributions in any
 * latsplit document. Names for the layouts the commands write (breakdown
 * parts, the probe's samples beside its summary, irq's per-CPU and per-IRQ
 * arrays, probe sweeps), bad samples with their line:column, duplicate
 * names, and pooling of a JSON-lines stream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jseries.h"
#include "jsonr.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"
#include "bad_case.h"

/* Parse s and collect its series; returns the collect status. */
static int collect(const char *s, struct ls_jdoc *doc, struct ls_series_set *set,
		   struct ls_err *err)
{
	if (ls_jr_parse(doc, "t.json", s, strlen(s), NULL, err))
		return -2;
	return ls_series_collect(doc, set, err);
}

/* The series names of set joined by spaces, in discovery order. */
static void names(const struct ls_series_set *set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < set->n && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", set->v[i].name);
}

TEST(layouts)
{
	static const struct {
		const char *doc;
		const char *want;
	} cases[] = {
		/* breakdown: summary+samples per part; summary-only parts too */
		{ "{\"schema\":1,\"kind\":\"breakdown\",\"total\":{\"count\":2,\"p50_ns\":1,\"p99_ns\":2,"
		  "\"samples_ns\":[1,2]},\"parts\":{\"queuing\":{\"p50_ns\":1,\"p99_ns\":1,"
		  "\"samples_ns\":[1]},\"base\":{\"p50_ns\":3,\"p99_ns\":3}}}",
		  "total parts.queuing parts.base" },
		/* probe: samples_ns beside one summary child; the responder's is separate */
		{ "{\"schema\":1,\"kind\":\"probe\",\"samples_ns\":[5,6],\"summary\":{\"p50_ns\":5,"
		  "\"p99_ns\":6},\"responder\":{\"turnaround\":{\"p50_ns\":1,\"p99_ns\":1}}}",
		  "summary responder.turnaround" },
		/* probe sweep: runs named by size */
		{ "{\"schema\":1,\"kind\":\"probe\",\"runs\":[{\"size\":4,\"samples_ns\":[1],"
		  "\"summary\":{\"p50_ns\":1,\"p99_ns\":1}},{\"size\":64,\"samples_ns\":[2],"
		  "\"summary\":{\"p50_ns\":2,\"p99_ns\":2}}]}",
		  "runs[size=4].summary runs[size=64].summary" },
		/* irq: arrays by name and cpu; null percentiles + [] samples = no events */
		{ "{\"schema\":1,\"kind\":\"irq\",\"irqs\":[{\"irq\":38,\"name\":\"virtio2-input.0\","
		  "\"hardirq\":{\"count\":0,\"p50_ns\":null,\"p99_ns\":null,\"samples_ns\":[]}}],"
		  "\"cpus\":[{\"cpu\":1,\"NET_RX_wait\":{\"p50_ns\":7,\"p99_ns\":9,\"samples_ns\":[7,9]}}]}",
		  "irqs[name=virtio2-input.0].hardirq cpus[cpu=1].NET_RX_wait" },
		/* samples with two summary children: the samples stand alone */
		{ "{\"schema\":1,\"kind\":\"x\",\"samples_ns\":[1],\"a\":{\"p50_ns\":1,\"p99_ns\":1},"
		  "\"b\":{\"p50_ns\":1,\"p99_ns\":1}}",
		  "(top level) a b" },
		/* arrays without a naming member: by index */
		{ "{\"schema\":1,\"kind\":\"x\",\"v\":[{\"p50_ns\":1,\"p99_ns\":1},{\"p50_ns\":2,\"p99_ns\":2}]}",
		  "v[0] v[1]" },
		/* nothing: an empty set is not an error here */
		{ "{\"schema\":1,\"kind\":\"model\",\"inputs\":{\"gpus\":8}}", "" },
	};
	struct ls_err err = { 0 };
	struct ls_series_set set;
	struct ls_jdoc doc;
	char buf[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(0, collect(cases[i].doc, &doc, &set, &err)) TH_LOG("%zu: %s", i, err.msg);
		names(&set, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want))
			TH_LOG("case %zu: got '%s'", i, buf);
		ASSERT_STREQ(cases[i].want, buf);
		ls_series_free(&set);
		ls_jr_free(&doc);
	}
}

TEST(values)
{
	const char *s = "{\"schema\":1,\"kind\":\"probe\",\"samples_ns\":[5,6,7],"
			"\"summary\":{\"count\":3,\"p50_ns\":6,\"p99_ns\":7},"
			"\"resp\":{\"other\":{\"count\":9,\"p50_ns\":1.5,\"p99_ns\":2.5}}}";
	struct ls_err err = { 0 };
	const struct ls_series *x;
	struct ls_series_set set;
	struct ls_jdoc doc;
	double *v;
	size_t n;

	ASSERT_EQ(0, collect(s, &doc, &set, &err));
	ASSERT_EQ(1.0, set.schema);
	ASSERT_STREQ("probe", set.kind);
	x = ls_series_find(&set, "summary");
	ASSERT_NE(NULL, x);
	ASSERT_TRUE(x->has_summary && x->has_samples);
	ASSERT_EQ(6, x->p50_ns);
	ASSERT_EQ(3, x->count);
	ASSERT_EQ(0, ls_series_samples(x, &v, &n, &err));
	ASSERT_EQ(3, n);
	ASSERT_EQ(7, v[2]);
	ASSERT_TRUE(x->unordered);	/* 5, 6, 7: sorted, no measurement order */
	free(v);
	x = ls_series_find(&set, "resp.other");
	ASSERT_FALSE(x->has_samples);
	ASSERT_EQ(2.5, x->p99_ns);
	ASSERT_EQ(NULL, ls_series_find(&set, "nope"));
	ls_series_free(&set);
	ls_jr_free(&doc);
}

TEST(bad_documents)
{
	static const struct bad_case cases[] = {
		{ "[1]", "not a latsplit document (top level is array" },
		{ "{\"kind\":\"probe\"}", "no numeric \"schema\"" },
		{ "{\"schema\":1,\"kind\":3}", "no string \"kind\"" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\n\"samples_ns\":[1,\"x\"]}}",
		  "t.json:2:17: a: samples_ns[1] is string, expected a finite number >= 0" },
		/* counts past 2^53, fractional or negative: found by the fuzzer */
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"p50_ns\":1,\"p99_ns\":2,\"count\":2.3e88}}",
		  "a: summary count is not a whole number" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"p50_ns\":1,\"p99_ns\":2,\"count\":1.5}}",
		  "summary count is not a whole number" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"p50_ns\":1,\"p99_ns\":2,\"count\":-1}}",
		  "summary count is not a whole number" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"p50_ns\":1,\"p99_ns\":2,\"count\":\"9\"}}",
		  "summary count is not a whole number" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"samples_ns\":[-1]}}", "samples_ns[0] is negative" },
		{ "{\"schema\":1,\"kind\":\"p\",\"a\":{\"samples_ns\":7}}", "a: samples_ns is not an array" },
		/* two array elements with the same name */
		{ "{\"schema\":1,\"kind\":\"irq\",\"cpus\":[{\"cpu\":1,\"p50_ns\":1,\"p99_ns\":1},"
		  "{\"cpu\":1,\"p50_ns\":1,\"p99_ns\":1}]}",
		  "cpus[cpu=1]: two distributions with the same name" },
	};
	struct ls_series_set set;
	struct ls_jdoc doc;
	struct ls_err err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&err, 0, sizeof(err));
		ASSERT_EQ(-1, collect(cases[i].in, &doc, &set, &err)) TH_LOG("case %zu accepted", i);
		assert_err_has(_metadata, &cases[i], err.msg);
		ls_jr_free(&doc);
	}
}

TEST(stream_pooling)
{
	const char *a = "{\"schema\":1,\"kind\":\"irq\",\"x\":{\"p50_ns\":1,\"p99_ns\":2,\"count\":2,"
			"\"samples_ns\":[1,2]},\"y\":{\"p50_ns\":4,\"p99_ns\":4,\"count\":1}}";
	const char *b = "{\"schema\":1,\"kind\":\"irq\",\"x\":{\"p50_ns\":3,\"p99_ns\":3,\"count\":1,"
			"\"samples_ns\":[3]},\"y\":{\"p50_ns\":5,\"p99_ns\":5,\"count\":1}}";
	const char *c = "{\"schema\":1,\"kind\":\"probe\"}";
	struct ls_err err = { 0 };
	struct ls_series_set set;
	const struct ls_series *x;
	struct ls_jdoc docs[2];

	ASSERT_EQ(0, ls_jr_parse(&docs[0], "s.json", a, strlen(a), NULL, &err));
	ASSERT_EQ(0, ls_jr_parse(&docs[1], "s.json", b, strlen(b), NULL, &err));
	ASSERT_EQ(0, ls_series_collect_docs(docs, 2, &set, &err));
	ASSERT_EQ(2, set.ndocs);
	x = ls_series_find(&set, "x");
	ASSERT_EQ(3, x->nvals);		/* samples concatenated */
	ASSERT_EQ(3, x->vals[2]);
	ASSERT_EQ(2, x->ndocs);
	ASSERT_TRUE(isnan(x->p50_ns));	/* summaries of two intervals do not pool */
	ASSERT_FALSE(x->unordered);	/* segments of 2 and 1 values: too short to tell */
	x = ls_series_find(&set, "y");
	ASSERT_TRUE(isnan(x->p99_ns));
	ASSERT_EQ(2, x->count);
	ls_series_free(&set);
	ls_jr_free(&docs[1]);
	ASSERT_EQ(0, ls_jr_parse(&docs[1], "s.json", c, strlen(c), NULL, &err));
	ASSERT_EQ(-1, ls_series_collect_docs(docs, 2, &set, &err));
	ASSERT_NE(NULL, strstr(err.msg, "document 2 is schema 1 kind 'probe', the first is schema 1 kind 'irq'"));
	ls_jr_free(&docs[0]);
	ls_jr_free(&docs[1]);
}

/*
 * Many series, found through the name index: 5,000 names in one document
 * and the same names in reverse order in a second, pooled by name (each
 * series gets its own value from both), every name found at its own series,
 * a name never written not found, and a name twice in one document still
 * refused.
 */
TEST(many_series_index)
{
	enum { N = 5000 };
	char *a = NULL, *b = NULL, *c = NULL;
	size_t la = 0, lb = 0, lc = 0;
	struct ls_err err = { 0 };
	struct ls_series_set set;
	struct ls_jdoc docs[2];
	FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
	FILE *fc = open_memstream(&c, &lc);
	char name[32];

	ASSERT_TRUE(fa && fb && fc);
	fputs("{\"schema\":1,\"kind\":\"irq\"", fa);
	fputs("{\"schema\":1,\"kind\":\"irq\"", fb);
	fputs("{\"schema\":1,\"kind\":\"irq\",\"cpus\":[", fc);
	for (int i = 0; i < N; i++) {
		fprintf(fa, ",\"s%d\":{\"p50_ns\":1,\"p99_ns\":1,\"samples_ns\":[%d]}", i, i);
		fprintf(fb, ",\"s%d\":{\"p50_ns\":1,\"p99_ns\":1,\"samples_ns\":[%d]}",
			N - 1 - i, 2 * (N - 1 - i));
		fprintf(fc, "{\"cpu\":%d,\"p50_ns\":1,\"p99_ns\":1},", i);
	}
	/* the same name twice in one document, far apart */
	fputs("{\"cpu\":17,\"p50_ns\":1,\"p99_ns\":1}]}", fc);
	fputs("}", fa);
	fputs("}", fb);
	ASSERT_EQ(0, fclose(fa));
	ASSERT_EQ(0, fclose(fb));
	ASSERT_EQ(0, fclose(fc));
	ASSERT_EQ(0, ls_jr_parse(&docs[0], "a.json", a, la, NULL, &err));
	ASSERT_EQ(0, ls_jr_parse(&docs[1], "b.json", b, lb, NULL, &err));
	ASSERT_EQ(0, ls_series_collect_docs(docs, 2, &set, &err));
	ASSERT_EQ(N, set.n);
	for (int i = 0; i < N; i++) {
		const struct ls_series *x;

		snprintf(name, sizeof(name), "s%d", i);
		x = ls_series_find(&set, name);
		ASSERT_NE(NULL, x);
		ASSERT_EQ(&set.v[i], x);	/* discovery order kept */
		ASSERT_EQ(2, x->nvals);
		ASSERT_EQ(i, x->vals[0]);
		ASSERT_EQ(2 * i, x->vals[1]);
	}
	ASSERT_EQ(NULL, ls_series_find(&set, "s5000"));
	ASSERT_EQ(NULL, ls_series_find(&set, ""));
	ls_series_free(&set);
	ls_jr_free(&docs[0]);
	ls_jr_free(&docs[1]);
	ASSERT_EQ(0, ls_jr_parse(&docs[0], "c.json", c, lc, NULL, &err));
	ASSERT_EQ(-1, ls_series_collect(&docs[0], &set, &err));
	ASSERT_NE(NULL, strstr(err.msg, "cpus[cpu=17]: two distributions with the same name"));
	ls_jr_free(&docs[0]);
	free(a);
	free(b);
	free(c);
}

TEST_HARNESS_MAIN
