// SPDX-License-Identifier: GPL-2.0
/* Strict JSON reader: RFC 8259 documents into a bounded tree, errors with line:column. */
#include "jsonr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUM_MAX_CHARS	512

struct parser {
	const char *s;
	size_t len;
	size_t pos;
	unsigned int depth, max_depth;
	size_t values, max_values;
	const struct ls_jdoc *doc;
	struct ls_err *err;
};

/* Line and column (1-based) of byte offset off in doc. */
void ls_jr_pos(const struct ls_jdoc *doc, size_t off, unsigned int *line,
	       unsigned int *col)
{
	unsigned int l = 1, c = 1;

	if (off > doc->len)
		off = doc->len;
	for (size_t i = 0; i < off; i++) {
		if (doc->text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/* Record a parse error at byte offset off: "name:line:col: message". */
static int perr(struct parser *p, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(struct parser *p, size_t off, const char *fmt, ...)
{
	char msg[384];
	unsigned int line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ls_jr_pos(p->doc, off, &line, &col);
	return ls_errcf(p->err, LS_E_USAGE, "%s:%u:%u: %s", p->doc->name, line, col, msg);
}

/* Error for input that ends inside a value: the document was truncated. */
static int truncated(struct parser *p, const char *inside, size_t opened_at)
{
	unsigned int line, col;

	ls_jr_pos(p->doc, opened_at, &line, &col);
	return perr(p, p->len, "unexpected end of input inside %s begun at %u:%u "
		    "(truncated document?)", inside, line, col);
}

/* Describe the byte at pos for an error message. */
static void describe(const struct parser *p, size_t pos, char *buf, size_t len)
{
	unsigned char c = (unsigned char)p->s[pos];

	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
}

/* Skip JSON whitespace (space, tab, CR, LF). */
static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

/* Free what a value owns (recursion is bounded by the parse depth). */
static void free_value(struct ls_jv *v)
{
	size_t i;

	switch (v->type) {
	case LS_JSTR:
		free(v->str.s);
		break;
	case LS_JARR:
		for (i = 0; i < v->arr.n; i++)
			free_value(&v->arr.v[i]);
		free(v->arr.v);
		break;
	case LS_JOBJ:
		for (i = 0; i < v->obj.n; i++) {
			free(v->obj.m[i].key);
			free_value(&v->obj.m[i].val);
		}
		free(v->obj.m);
		break;
	default:
		break;
	}
	v->type = LS_JNULL;
}

static int parse_value(struct parser *p, struct ls_jv *out);

/* Append a code point as UTF-8 to buf. */
static size_t put_utf8(char *buf, uint32_t cp)
{
	if (cp < 0x80) {
		buf[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		buf[0] = (char)(0xc0 | (cp >> 6));
		buf[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | (cp >> 12));
		buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	buf[0] = (char)(0xf0 | (cp >> 18));
	buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	buf[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Read 4 hex digits at pos into *cp. */
static int hex4(struct parser *p, size_t pos, size_t opened, uint32_t *cp)
{
	uint32_t v = 0;

	if (pos + 4 > p->len)
		return truncated(p, "a \\u escape", pos - 2);
	for (int i = 0; i < 4; i++) {
		char c = p->s[pos + i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return perr(p, pos + i, "bad \\u escape: expected 4 hex digits");
	}
	(void)opened;
	*cp = v;
	return 0;
}

/* Length of a valid UTF-8 sequence at pos (RFC 3629), or an error. */
static int utf8_seq(struct parser *p, size_t pos, size_t opened, size_t *n)
{
	const unsigned char *u = (const unsigned char *)p->s + pos;
	size_t avail = p->len - pos, need;
	uint32_t cp, min;

	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 2; cp = u[0] & 0x1f; min = 0x80;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 3; cp = u[0] & 0x0f; min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 4; cp = u[0] & 0x07; min = 0x10000;
	} else {
		return perr(p, pos, "invalid UTF-8 byte 0x%02x in string", u[0]);
	}
	if (avail < need)
		return truncated(p, "a string", opened);
	for (size_t i = 1; i < need; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return perr(p, pos, "invalid UTF-8 sequence in string");
		cp = (cp << 6) | (u[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return perr(p, pos, "invalid UTF-8 sequence in string "
			    "(overlong, surrogate or beyond U+10FFFF)");
	*n = need;
	return 0;
}

/* The escape at p->pos (its backslash) into enc, *seq bytes; p->pos moves past it. */
static int parse_escape(struct parser *p, size_t opened, char *enc, size_t *seq)
{
	uint32_t cp, lo;
	char e;
	int err;

	if (p->pos + 1 >= p->len)
		return truncated(p, "a string", opened);
	e = p->s[p->pos + 1];
	*seq = 1;
	switch (e) {
	case '"': enc[0] = '"'; break;
	case '\\': enc[0] = '\\'; break;
	case '/': enc[0] = '/'; break;
	case 'b': enc[0] = '\b'; break;
	case 'f': enc[0] = '\f'; break;
	case 'n': enc[0] = '\n'; break;
	case 'r': enc[0] = '\r'; break;
	case 't': enc[0] = '\t'; break;
	case 'u':
		err = hex4(p, p->pos + 2, opened, &cp);
		if (err)
			return err;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return perr(p, p->pos, "lone low surrogate \\u%04x in string", cp);
		if (cp >= 0xd800 && cp <= 0xdbff) {
			size_t q = p->pos + 6;

			if (q + 2 > p->len)
				return truncated(p, "a string", opened);
			if (p->s[q] != '\\' || p->s[q + 1] != 'u')
				return perr(p, p->pos, "high surrogate \\u%04x not "
					    "followed by a low surrogate", cp);
			err = hex4(p, q + 2, opened, &lo);
			if (err)
				return err;
			if (lo < 0xdc00 || lo > 0xdfff)
				return perr(p, q, "high surrogate \\u%04x followed "
					    "by \\u%04x, not a low surrogate", cp, lo);
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			p->pos += 6;
		}
		*seq = put_utf8(enc, cp);
		p->pos += 4;
		break;
	default:
		return perr(p, p->pos, "unknown escape '\\%c' in string",
			    e >= 0x20 && e < 0x7f ? e : '?');
	}
	p->pos += 2;
	return 0;
}

/* Parse a string at p->pos (on the opening quote) into a new buffer. */
static int parse_string(struct parser *p, char **out, size_t *out_len)
{
	size_t opened = p->pos, cap = 16, n = 0;
	char *buf = malloc(cap);
	int err;

	if (!buf)
		return perr(p, opened, "out of memory");
	p->pos++;
	for (;;) {
		unsigned char c;
		size_t seq = 1;
		char enc[4];
		const char *src;

		if (p->pos >= p->len) {
			err = truncated(p, "a string", opened);
			goto fail;
		}
		c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			err = perr(p, p->pos, "raw control character 0x%02x in string "
				   "(must be escaped)", c);
			goto fail;
		}
		src = p->s + p->pos;
		if (c == '\\') {
			src = enc;
			err = parse_escape(p, opened, enc, &seq);
			if (err)
				goto fail;
		} else if (c >= 0x80) {
			err = utf8_seq(p, p->pos, opened, &seq);
			if (err)
				goto fail;
			p->pos += seq;
		} else {
			p->pos++;
		}
		if (n + seq + 1 > cap) {
			char *nb;

			while (n + seq + 1 > cap)
				cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = perr(p, opened, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		memcpy(buf + n, src, seq);
		n += seq;
	}
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return 0;
fail:
	free(buf);
	return err;
}

/* Parse a number at p->pos with the RFC 8259 grammar. */
static int parse_number(struct parser *p, struct ls_jv *out)
{
	size_t start = p->pos, i = p->pos;
	char tmp[NUM_MAX_CHARS + 1];
	char *end;
	double v;

#define DIGIT(k) ((k) < p->len && p->s[k] >= '0' && p->s[k] <= '9')
	if (i < p->len && p->s[i] == '-')
		i++;
	if (i >= p->len)
		return truncated(p, "a number", start);
	if (p->s[i] == '0') {
		i++;
		if (DIGIT(i))
			return perr(p, i, "leading zero in number");
	} else if (DIGIT(i)) {
		while (DIGIT(i))
			i++;
	} else {
		return perr(p, i, "expected a digit in number");
	}
	if (i < p->len && p->s[i] == '.') {
		i++;
		if (i >= p->len)
			return truncated(p, "a number", start);
		if (!DIGIT(i))
			return perr(p, i, "expected a digit after '.' in number");
		while (DIGIT(i))
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len)
			return truncated(p, "a number", start);
		if (!DIGIT(i))
			return perr(p, i, "expected a digit in exponent");
		while (DIGIT(i))
			i++;
	}
#undef DIGIT
	if (i - start > NUM_MAX_CHARS)
		return perr(p, start, "number longer than %d characters", NUM_MAX_CHARS);
	memcpy(tmp, p->s + start, i - start);
	tmp[i - start] = '\0';
	errno = 0;
	v = strtod(tmp, &end);
	if (*end)
		return perr(p, start, "malformed number");
	if (!isfinite(v))
		return perr(p, start, "number %s is out of range for a double", tmp);
	out->type = LS_JNUM;
	out->num = v;
	p->pos = i;
	return 0;
}

/* Parse one of the literals true, false, null. */
static int parse_literal(struct parser *p, struct ls_jv *out)
{
	static const struct { const char *w; enum ls_jtype t; bool b; } lit[] = {
		{ "true", LS_JBOOL, true },
		{ "false", LS_JBOOL, false },
		{ "null", LS_JNULL, false },
	};
	size_t avail = p->len - p->pos;
	char what[32];

	for (size_t i = 0; i < ARRAY_SIZE(lit); i++) {
		size_t n = strlen(lit[i].w);

		if (lit[i].w[0] != p->s[p->pos])
			continue;
		if (avail < n && !memcmp(p->s + p->pos, lit[i].w, avail))
			return truncated(p, lit[i].w, p->pos);
		if (avail >= n && !memcmp(p->s + p->pos, lit[i].w, n)) {
			out->type = lit[i].t;
			out->b = lit[i].b;
			p->pos += n;
			return 0;
		}
		break;
	}
	describe(p, p->pos, what, sizeof(what));
	return perr(p, p->pos, "unexpected %s, expected a value", what);
}

/* Order members by key (for the duplicate check). */
static int cmp_member(const void *a, const void *b)
{
	const struct ls_jmember *x = *(const struct ls_jmember * const *)a;
	const struct ls_jmember *y = *(const struct ls_jmember * const *)b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);

	if (c)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* Reject an object that repeats a key (O(n log n)). */
static int check_duplicates(struct parser *p, const struct ls_jv *obj)
{
	const struct ls_jmember **v;
	int err = 0;

	if (obj->obj.n < 2)
		return 0;
	v = malloc(obj->obj.n * sizeof(*v));
	if (!v)
		return perr(p, obj->off, "out of memory");
	for (size_t i = 0; i < obj->obj.n; i++)
		v[i] = &obj->obj.m[i];
	qsort(v, obj->obj.n, sizeof(*v), cmp_member);
	for (size_t i = 1; i < obj->obj.n; i++) {
		if (!cmp_member(&v[i - 1], &v[i])) {
			const struct ls_jmember *later = v[i]->val.off > v[i - 1]->val.off ?
							 v[i] : v[i - 1];

			err = perr(p, later->val.off, "duplicate key \"%.64s\" in object",
				   later->key);
			break;
		}
	}
	free(v);
	return err;
}

/*
 * Enter the object or array (an: "an object", for messages) whose opener is
 * at p->pos, to close; *empty when it closes at once (then consumed too).
 */
static int container_open(struct parser *p, char close, const char *an, bool *empty)
{
	size_t opened = p->pos;

	*empty = false;
	p->pos++;
	skip_ws(p);
	if (p->pos >= p->len)
		return truncated(p, an, opened);
	*empty = p->s[p->pos] == close;
	if (*empty)
		p->pos++;
	return 0;
}

/*
 * After an element of the object or array opened at opened (kind: "object",
 * an: "an object"): *more when a ',' and another element follow, else the
 * closer was consumed.
 */
static int container_next(struct parser *p, char close, const char *kind, const char *an,
			  size_t opened, bool *more)
{
	char what[32];

	skip_ws(p);
	if (p->pos >= p->len)
		return truncated(p, an, opened);
	*more = p->s[p->pos] == ',';
	if (*more) {
		p->pos++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == close)
			return perr(p, p->pos, "trailing comma in %s", kind);
		return 0;
	}
	if (p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	describe(p, p->pos, what, sizeof(what));
	return perr(p, p->pos, "expected ',' or '%c' in %s, got %s", close, kind, what);
}

/*
 * Skip whitespace to c inside the object or array opened at opened (an:
 * "an object", for messages); else "expected <expected>, got ...".
 */
static int expect_char(struct parser *p, char c, const char *an, size_t opened,
		       const char *expected)
{
	char what[32];

	skip_ws(p);
	if (p->pos >= p->len)
		return truncated(p, an, opened);
	if (p->s[p->pos] == c)
		return 0;
	describe(p, p->pos, what, sizeof(what));
	return perr(p, p->pos, "expected %s, got %s", expected, what);
}

/* Parse an object at p->pos (on '{'). */
static int parse_object(struct parser *p, struct ls_jv *out)
{
	size_t opened = p->pos, cap = 0;
	bool empty, more;
	int err;

	out->type = LS_JOBJ;
	out->obj.m = NULL;
	out->obj.n = 0;
	err = container_open(p, '}', "an object", &empty);
	if (err || empty)
		return err;
	for (more = true; more;) {
		struct ls_jmember *m;

		err = expect_char(p, '"', "an object", opened, "a string key in object");
		if (err)
			return err;
		if (ls_grow(&out->obj.m, &cap, out->obj.n, sizeof(*m), 8))
			return perr(p, p->pos, "out of memory");
		m = &out->obj.m[out->obj.n];
		memset(m, 0, sizeof(*m));
		err = parse_string(p, &m->key, &m->key_len);
		if (err)
			return err;
		out->obj.n++;		/* owns the key from here on */
		err = expect_char(p, ':', "an object", opened, "':' after object key");
		if (err)
			return err;
		p->pos++;
		err = parse_value(p, &m->val);
		if (err)
			return err;
		err = container_next(p, '}', "object", "an object", opened, &more);
		if (err)
			return err;
	}
	return check_duplicates(p, out);
}

/* Parse an array at p->pos (on '['). */
static int parse_array(struct parser *p, struct ls_jv *out)
{
	size_t opened = p->pos, cap = 0;
	bool empty, more;
	int err;

	out->type = LS_JARR;
	out->arr.v = NULL;
	out->arr.n = 0;
	err = container_open(p, ']', "an array", &empty);
	if (err || empty)
		return err;
	for (more = true; more;) {
		if (ls_grow(&out->arr.v, &cap, out->arr.n, sizeof(*out->arr.v), 8))
			return perr(p, p->pos, "out of memory");
		memset(&out->arr.v[out->arr.n], 0, sizeof(out->arr.v[0]));
		out->arr.n++;		/* a null until parsed: always freeable */
		err = parse_value(p, &out->arr.v[out->arr.n - 1]);
		if (err)
			return err;
		err = container_next(p, ']', "array", "an array", opened, &more);
		if (err)
			return err;
	}
	return 0;
}

/* Parse any value after optional whitespace. */
static int parse_value(struct parser *p, struct ls_jv *out)
{
	int err;
	char c;

	memset(out, 0, sizeof(*out));
	skip_ws(p);
	if (p->pos >= p->len)
		return perr(p, p->len, "unexpected end of input, expected a value "
			    "(truncated or empty document?)");
	if (++p->values > p->max_values)
		return perr(p, p->pos, "more than %zu values in document", p->max_values);
	out->off = p->pos;
	c = p->s[p->pos];
	switch (c) {
	case '{':
	case '[':
		if (++p->depth > p->max_depth)
			return perr(p, p->pos, "nesting deeper than %u levels",
				    p->max_depth);
		err = c == '{' ? parse_object(p, out) : parse_array(p, out);
		p->depth--;
		return err;
	case '"':
		out->type = LS_JSTR;
		return parse_string(p, &out->str.s, &out->str.len);
	case '-':
	case '0' ... '9':
		return parse_number(p, out);
	default:
		return parse_literal(p, out);
	}
}

/* Parse len bytes at text into doc. */
int ls_jr_parse(struct ls_jdoc *doc, const char *name, const char *text,
		size_t len, const struct ls_jlimits *lim, struct ls_err *err)
{
	struct parser p = { 0 };
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : LS_JR_MAX_BYTES;
	char what[32];

	memset(doc, 0, sizeof(*doc));
	snprintf(doc->name, sizeof(doc->name), "%s", name ? name : "<input>");
	doc->text = text;
	doc->len = len;
	p.s = text;
	p.len = len;
	p.doc = doc;
	p.err = err;
	p.max_depth = lim && lim->max_depth ? lim->max_depth : LS_JR_MAX_DEPTH;
	p.max_values = lim && lim->max_values ? lim->max_values : LS_JR_MAX_VALUES;
	if (len > max_bytes)
		return ls_errcf(err, LS_E_LIMIT, "%s: %zu bytes is larger than the limit of %zu",
				doc->name, len, max_bytes);
	if (parse_value(&p, &doc->root))
		goto fail;
	skip_ws(&p);
	if (p.pos < p.len) {
		describe(&p, p.pos, what, sizeof(what));
		perr(&p, p.pos, "unexpected %s after the end of the document", what);
		goto fail;
	}
	return 0;
fail:
	free_value(&doc->root);
	return -1;
}

/* Parse a stream of documents from len bytes at text (kept alive by the caller). */
int ls_jr_parse_stream(struct ls_jdoc **docs, size_t *n, const char *name, const char *text,
		       size_t len, const struct ls_jlimits *lim, struct ls_err *err)
{
	struct ls_jdoc *v = NULL;
	size_t nv = 0, cap = 0;
	struct parser p = { 0 };
	struct ls_jdoc pos;	/* positions and the name for messages */

	*docs = NULL;
	*n = 0;
	memset(&pos, 0, sizeof(pos));
	snprintf(pos.name, sizeof(pos.name), "%s", name);
	pos.text = text;
	pos.len = len;
	p.s = text;
	p.len = len;
	p.doc = &pos;
	p.err = err;
	p.max_depth = lim && lim->max_depth ? lim->max_depth : LS_JR_MAX_DEPTH;
	p.max_values = lim && lim->max_values ? lim->max_values : LS_JR_MAX_VALUES;
	skip_ws(&p);
	do {
		if (ls_grow(&v, &cap, nv, sizeof(*v), 4)) {
			ls_errf(err, "%s: out of memory", name);
			goto fail;
		}
		v[nv] = pos;
		nv++;
		if (parse_value(&p, &v[nv - 1].root))
			goto fail;
		skip_ws(&p);
	} while (p.pos < p.len);
	*docs = v;
	*n = nv;
	return 0;
fail:
	for (size_t i = 0; i < nv; i++)
		free_value(&v[i].root);
	free(v);
	return -1;
}

/* Free what ls_jr_parse_stream (or ls_jr_parse_file_stream) returned. */
void ls_jr_free_stream(struct ls_jdoc *docs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ls_jr_free(&docs[i]);
	free(docs);
}

/* Free a document. */
void ls_jr_free(struct ls_jdoc *doc)
{
	free_value(&doc->root);
	free(doc->owned);
	doc->owned = NULL;
	doc->text = NULL;
	doc->len = 0;
}

/* Member key of an object, or NULL. */
const struct ls_jv *ls_jv_get(const struct ls_jv *obj, const char *key)
{
	size_t len;

	if (!obj || obj->type != LS_JOBJ)
		return NULL;
	len = strlen(key);
	for (size_t i = 0; i < obj->obj.n; i++) {
		if (obj->obj.m[i].key_len == len && !memcmp(obj->obj.m[i].key, key, len))
			return &obj->obj.m[i].val;
	}
	return NULL;
}

/* Member key of obj when it has type t, else NULL. */
static const struct ls_jv *get_typed(const struct ls_jv *obj, const char *key, enum ls_jtype t)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	return v && v->type == t ? v : NULL;
}

/* Member key of obj as a number; false when absent or not a number. */
bool ls_jv_num(const struct ls_jv *obj, const char *key, double *out)
{
	const struct ls_jv *v = get_typed(obj, key, LS_JNUM);

	if (v)
		*out = v->num;
	return v != NULL;
}

/* Member key of obj as a string into buf; false when absent or not a string. */
bool ls_jv_str(const struct ls_jv *obj, const char *key, char *buf, size_t len)
{
	const struct ls_jv *v = get_typed(obj, key, LS_JSTR);

	if (v)
		snprintf(buf, len, "%s", v->str.s);
	return v != NULL;
}

/* Member key of obj as a boolean; false when absent or not a boolean. */
bool ls_jv_bool(const struct ls_jv *obj, const char *key, bool *out)
{
	const struct ls_jv *v = get_typed(obj, key, LS_JBOOL);

	if (v)
		*out = v->b;
	return v != NULL;
}

/* Member key of obj as a non-negative integer; false when absent or not one. */
bool ls_jv_u64(const struct ls_jv *obj, const char *key, uint64_t *out)
{
	const struct ls_jv *v = get_typed(obj, key, LS_JNUM);

	if (!v || !(v->num >= 0) || v->num > 9007199254740992.0)
		return false;
	*out = (uint64_t)v->num;
	return true;
}

/* JSON type names in enum order. */
static const char *const jtype_names[] = {
	"null", "boolean", "number", "string", "array", "object"
};
_Static_assert(ARRAY_SIZE(jtype_names) == LS_JOBJ + 1, "a name per JSON type");

/* Name of a JSON type for messages. */
const char *ls_jtype_name(enum ls_jtype t)
{
	return ls_enum_name(jtype_names, ARRAY_SIZE(jtype_names), t);
}
