// SPDX-License-Identifier: GPL-2.0
/*
 * tools/jsonr.c: the strict JSON reader. Valid documents (including what
 * tools/json.c writes) round-trip; every malformed or truncated input is
 * rejected with a message that names the right line:column; limits hold.
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "io.h"
#include "jsonr.h"

#undef ARRAY_SIZE	/* kselftest.h defines the same macro */
#include "kselftest_harness.h"
#include "bad_case.h"

/* Parse s; returns 0 on success, else -1 with the message in err. */
static int parse(struct ls_jdoc *doc, const char *s, struct ls_err *err)
{
	return ls_jr_parse(doc, "t.json", s, strlen(s), NULL, err);
}

TEST(valid_documents)
{
	static const char *ok[] = {
		"{}", "[]", "0", "-0", "1.5e+3", "-12.25E-2", "\"\"", "true", "false",
		"null", " \t\r\n{ \"a\" : [ 1 , 2 , { } , [ ] ] } \n",
		"{\"a\":{\"b\":{\"c\":[null,true,false,\"x\"]}}}",
		"\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
		"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
		"1e-400",
	};
	struct ls_err err = { 0 };
	struct ls_jdoc doc;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		int r = parse(&doc, ok[i], &err);

		if (r)
			TH_LOG("input %zu '%s': %s", i, ok[i], err.msg);
		ASSERT_EQ(0, r);
		ls_jr_free(&doc);
	}
}

TEST(values_and_escapes)
{
	const char *s = "{\"n\": -1.25e2, \"s\": \"a\\u0000b\\ud83d\\ude00\", "
			"\"arr\": [1, 2, 3], \"t\": true, \"z\": null}";
	struct ls_err err = { 0 };
	const struct ls_jv *v;
	struct ls_jdoc doc;

	ASSERT_EQ(0, parse(&doc, s, &err));
	ASSERT_EQ(LS_JOBJ, doc.root.type);
	ASSERT_EQ(5, doc.root.obj.n);
	v = ls_jv_get(&doc.root, "n");
	ASSERT_NE(NULL, v);
	ASSERT_EQ(LS_JNUM, v->type);
	ASSERT_EQ(-125.0, v->num);
	v = ls_jv_get(&doc.root, "s");
	ASSERT_EQ(LS_JSTR, v->type);
	ASSERT_EQ(7, v->str.len);	/* a NUL b + 4-byte U+1F600 */
	ASSERT_EQ(0, memcmp(v->str.s, "a\0b\xf0\x9f\x98\x80", 7));
	v = ls_jv_get(&doc.root, "arr");
	ASSERT_EQ(LS_JARR, v->type);
	ASSERT_EQ(3, v->arr.n);
	ASSERT_EQ(3.0, v->arr.v[2].num);
	ASSERT_EQ(true, ls_jv_get(&doc.root, "t")->b);
	ASSERT_EQ(LS_JNULL, ls_jv_get(&doc.root, "z")->type);
	ASSERT_EQ(NULL, ls_jv_get(&doc.root, "missing"));
	ASSERT_EQ(NULL, ls_jv_get(v, "x"));	/* not an object */
	ls_jr_free(&doc);
}

/* Each malformed input, and the "line:col: message" its error must contain. */
static const struct bad_case bad[] = {
	{ "", "1:1: unexpected end of input" },
	{ "   \n  ", "2:3: unexpected end of input" },
	{ "{\"a\":1,}", "1:8: trailing comma in object" },
	{ "[1,2,]", "1:6: trailing comma in array" },
	{ "{\"a\" 1}", "1:6: expected ':'" },
	{ "{a:1}", "1:2: expected a string key" },
	{ "[1 2]", "1:4: expected ',' or ']'" },
	{ "{\"a\":1 \"b\":2}", "1:8: expected ',' or '}'" },
	{ "01", "1:2: leading zero" },
	{ "-", "1:2: unexpected end of input inside a number begun at 1:1" },
	{ ".5", "1:1: unexpected '.'" },
	{ "1.", "unexpected end of input inside a number" },
	{ "1.e5", "1:3: expected a digit after '.'" },
	{ "1e", "end of input inside a number" },
	{ "1e+x", "1:4: expected a digit in exponent" },
	{ "+1", "1:1: unexpected '+'" },
	{ "NaN", "1:1: unexpected 'N'" },
	{ "Infinity", "1:1: unexpected 'I'" },
	{ "1e400", "1:1: number 1e400 is out of range" },
	{ "tru", "1:4: unexpected end of input inside true" },
	{ "trUe", "1:1: unexpected 't'" },
	{ "nul", "inside null" },
	{ "{} {}", "1:4: unexpected '{' after the end of the document" },
	{ "{}x", "1:3: unexpected 'x' after the end" },
	{ "\"abc", "1:5: unexpected end of input inside a string begun at 1:1" },
	{ "\"a\tb\"", "1:3: raw control character 0x09" },
	{ "\"\\x\"", "1:2: unknown escape '\\x'" },
	{ "\"\\u12g4\"", "1:6: bad \\u escape" },
	{ "\"\\udc00\"", "1:2: lone low surrogate" },
	{ "\"\\ud800x\"", "1:2: high surrogate \\ud800 not followed" },
	{ "\"\\ud800\\u0041\"", "1:8: high surrogate \\ud800 followed by \\u0041" },
	{ "\"\xc0\x80\"", "1:2: invalid UTF-8 byte 0xc0" },
	{ "\"\xed\xa0\x80\"", "1:2: invalid UTF-8 sequence in string (overlong, surrogate" },
	{ "\"\xe0\x80\x80\"", "overlong" },
	{ "\"\xf5\x80\x80\x80\"", "invalid UTF-8 byte 0xf5" },
	{ "\"\xc3(\"", "1:2: invalid UTF-8 sequence" },
	{ "{\"a\":1,\n \"b\":2,\n \"a\":3}", "3:6: duplicate key \"a\"" },
	{ "[1,\n2,\n{\"x\": [true, fals]}]", "3:14: unexpected 'f'" },
	{ "// c\n{}", "1:1: unexpected '/'" },
	{ "{'a':1}", "1:2: expected a string key in object, got '''" },
	{ "\xef\xbb\xbf{}", "1:1: unexpected byte 0xef" },
};

TEST(malformed_inputs_name_the_place)
{
	struct ls_err err;
	struct ls_jdoc doc;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		if (parse(&doc, bad[i].in, &err) == 0) {
			TH_LOG("accepted: '%s'", bad[i].in);
			ls_jr_free(&doc);
			ASSERT_TRUE(0);
		}
		assert_err_has(_metadata, &bad[i], err.msg);
		ASSERT_EQ(0, strncmp(err.msg, "t.json:", 7));
	}
}

TEST(every_truncation_is_rejected)
{
	const char *s = "{\"schema\": 1, \"kind\": \"probe\",\n \"x\": [1.5, -2e3, "
			"\"\\u00e9\\ud83d\\ude00\", true, false, null, {\"k\": []}],\n"
			" \"y\": {\"samples_ns\": [10, 20, 30]}}";
	size_t n = strlen(s);
	struct ls_err err;
	struct ls_jdoc doc;

	ASSERT_EQ(0, parse(&doc, s, &err));
	ls_jr_free(&doc);
	for (size_t len = 0; len < n; len++) {
		memset(&err, 0, sizeof(err));
		if (ls_jr_parse(&doc, "t.json", s, len, NULL, &err) == 0) {
			TH_LOG("prefix of %zu bytes accepted", len);
			ls_jr_free(&doc);
			ASSERT_TRUE(0);
		}
		if (!strstr(err.msg, "end of input"))
			TH_LOG("prefix %zu: %s", len, err.msg);
		ASSERT_NE(NULL, strstr(err.msg, "end of input"));
	}
}

TEST(limits)
{
	struct ls_jlimits lim = { .max_depth = 4, .max_values = 10, .max_bytes = 64 };
	struct ls_err err = { 0 };
	struct ls_jdoc doc;
	size_t deep = 200000;
	char *s = malloc(2 * deep + 1);

	ASSERT_EQ(0, ls_jr_parse(&doc, "t", "[[[[1]]]]", 9, &lim, &err));
	ls_jr_free(&doc);
	ASSERT_EQ(-1, ls_jr_parse(&doc, "t", "[[[[[1]]]]]", 11, &lim, &err));
	ASSERT_NE(NULL, strstr(err.msg, "1:5: nesting deeper than 4 levels"));
	ASSERT_EQ(-1, ls_jr_parse(&doc, "t", "[1,2,3,4,5,6,7,8,9,10]", 22, &lim, &err));
	ASSERT_NE(NULL, strstr(err.msg, "more than 10 values"));
	ASSERT_EQ(-1, ls_jr_parse(&doc, "t", s, 65, &lim, &err));
	ASSERT_NE(NULL, strstr(err.msg, "larger than the limit of 64"));
	/* A hostile depth with default limits: an error, not a stack overflow. */
	memset(s, '[', deep);
	memset(s + deep, ']', deep);
	s[2 * deep] = '\0';
	ASSERT_EQ(-1, ls_jr_parse(&doc, "t", s, 2 * deep, NULL, &err));
	ASSERT_NE(NULL, strstr(err.msg, "nesting deeper than 64 levels"));
	free(s);
}

TEST(reads_what_the_writer_writes)
{
	static const double nums[] = { 0, 1, -1, 0.1, 1e-300, 1.7976931348623157e308,
				       123456789012345.0, 9007199254740993.0, -2.5e-7 };
	const char *tricky = "quote\" backslash\\ nl\n tab\t ctl\x01 \xc3\xa9";
	struct ls_err err = { 0 };
	struct ls_jdoc doc;
	const struct ls_jv *v;
	struct ls_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ASSERT_NE(NULL, fp);
	for (int pretty = 0; pretty < 2; pretty++) {
		rewind(fp);
		ls_json_init(&j, fp, pretty);
		ls_json_obj_open(&j, NULL);
		ls_json_u64(&j, "schema", LS_JSON_SCHEMA);
		ls_json_str(&j, tricky, tricky);
		ls_json_arr_open(&j, "nums");
		for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
			ls_json_dbl(&j, NULL, nums[i]);
		ls_json_dbl(&j, NULL, NAN);
		ls_json_arr_close(&j);
		ls_json_u64(&j, "big", UINT64_MAX);
		ls_json_i64(&j, "neg", INT64_MIN);
		ls_json_obj_open(&j, "empty");
		ls_json_obj_close(&j);
		ls_json_obj_close(&j);
		ls_json_end(&j);
		fflush(fp);
		ASSERT_EQ(0, ls_jr_parse(&doc, "w", buf, ftell(fp), NULL, &err)) {
			TH_LOG("%s\n%.*s", err.msg, (int)ftell(fp), buf);
		}
		v = ls_jv_get(&doc.root, tricky);
		ASSERT_NE(NULL, v);
		ASSERT_STREQ(tricky, v->str.s);
		v = ls_jv_get(&doc.root, "nums");
		ASSERT_EQ(ARRAY_SIZE(nums) + 1, v->arr.n);
		for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
			ASSERT_EQ(nums[i], v->arr.v[i].num);
		ASSERT_EQ(LS_JNULL, v->arr.v[ARRAY_SIZE(nums)].type);
		ASSERT_EQ(18446744073709551616.0, ls_jv_get(&doc.root, "big")->num);
		ASSERT_EQ(-9223372036854775808.0, ls_jv_get(&doc.root, "neg")->num);
		ASSERT_EQ(0, ls_jv_get(&doc.root, "empty")->obj.n);
		ls_jr_free(&doc);
	}
	fclose(fp);
	free(buf);
}

TEST(files)
{
	char path[] = "/tmp/jsonr-unit-XXXXXX";
	struct ls_err err = { 0 };
	struct ls_jdoc doc;
	int fd = mkstemp(path);
	unsigned int line, col;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(11, write(fd, "{\"a\":\n [1,\n", 11));
	close(fd);
	ASSERT_EQ(-1, ls_jr_parse_file(&doc, path, NULL, &err));
	ASSERT_NE(NULL, strstr(err.msg, path));
	ASSERT_NE(NULL, strstr(err.msg, ":3:1: unexpected end of input"));
	unlink(path);
	ASSERT_EQ(-1, ls_jr_parse_file(&doc, path, NULL, &err));
	ASSERT_NE(NULL, strstr(err.msg, "No such file"));
	ASSERT_EQ(0, parse(&doc, "{\n  \"k\":\n    [1]}", &err));
	ls_jr_pos(&doc, ls_jv_get(&doc.root, "k")->off, &line, &col);
	ASSERT_EQ(3, line);
	ASSERT_EQ(5, col);
	ls_jr_free(&doc);
}

TEST(streams)
{
	char path[] = "/tmp/jsonr-unit-XXXXXX";
	struct ls_err err = { 0 };
	struct ls_jdoc *docs;
	size_t n;
	int fd = mkstemp(path);
	const char *two = "{\"a\": 1}\n{\"a\": 2}\n\n";
	const char *broken = "{\"a\": 1}\n{\"a\": }\n";

	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)strlen(two), write(fd, two, strlen(two)));
	close(fd);
	ASSERT_EQ(0, ls_jr_parse_file_stream(&docs, &n, path, NULL, &err));
	ASSERT_EQ(2, n);
	ASSERT_EQ(2.0, ls_jv_get(&docs[1].root, "a")->num);
	ls_jr_free_stream(docs, n);
	/* an error in the second document names its line */
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_EQ((ssize_t)strlen(broken), write(fd, broken, strlen(broken)));
	close(fd);
	ASSERT_EQ(-1, ls_jr_parse_file_stream(&docs, &n, path, NULL, &err));
	ASSERT_NE(NULL, strstr(err.msg, ":2:7: unexpected '}'"));
	/* an empty file is an error, not zero documents */
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_EQ(1, write(fd, "\n", 1));
	close(fd);
	ASSERT_EQ(-1, ls_jr_parse_file_stream(&docs, &n, path, NULL, &err));
	ASSERT_NE(NULL, strstr(err.msg, "unexpected end of input"));
	unlink(path);
}

TEST_HARNESS_MAIN
