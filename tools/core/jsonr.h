/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict JSON reader (RFC 8259): parses a whole document into a tree.
 *
 * Strict means: one value and nothing after it but whitespace; no comments,
 * trailing commas, NaN/Infinity, leading zeros or single quotes; strings are
 * valid UTF-8 with no raw control characters and well-formed escapes
 * (surrogate pairs paired); numbers must fit a double; an object must not
 * repeat a key. Depth, input size and number of values are bounded, so a
 * hostile file cannot exhaust the stack or memory. Every error names the
 * line and column (1-based; columns count bytes) where it was found.
 */
#ifndef LS_JSONR_H
#define LS_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Every JSON document latsplit writes carries this schema version. */
#define LS_JSON_SCHEMA		1

enum ls_jtype {
	LS_JNULL,
	LS_JBOOL,
	LS_JNUM,
	LS_JSTR,
	LS_JARR,
	LS_JOBJ,
};

struct ls_jmember;

/* One JSON value; off is the byte offset of its first character. */
struct ls_jv {
	enum ls_jtype type;
	size_t off;
	union {
		bool b;
		double num;
		struct {
			char *s;	/* NUL-terminated; may hold \u0000 */
			size_t len;
		} str;
		struct {
			struct ls_jv *v;
			size_t n;
		} arr;
		struct {
			struct ls_jmember *m;	/* in document order */
			size_t n;
		} obj;
	};
};

struct ls_jmember {
	char *key;
	size_t key_len;
	struct ls_jv val;
};

/* Bounds on what the reader accepts; 0 in a field means its default. */
struct ls_jlimits {
	size_t max_bytes;	/* default LS_JR_MAX_BYTES */
	unsigned int max_depth;	/* default LS_JR_MAX_DEPTH */
	size_t max_values;	/* default LS_JR_MAX_VALUES */
};

#define LS_JR_MAX_BYTES		(1ul << 30)
#define LS_JR_MAX_DEPTH		64
#define LS_JR_MAX_VALUES	(64ul << 20)

/* A parsed document. text stays valid (for positions) while the doc lives. */
struct ls_jdoc {
	struct ls_jv root;
	const char *text;
	size_t len;
	char *owned;		/* the file buffer when read by ls_jr_parse_file (io.h) */
	char name[256];		/* file name (or "<input>") for messages */
};

/*
 * Parse len bytes at text (need not be NUL-terminated; the caller keeps it
 * alive while doc is used). name prefixes error messages. lim may be NULL.
 */
int ls_jr_parse(struct ls_jdoc *doc, const char *name, const char *text,
		size_t len, const struct ls_jlimits *lim, struct ls_err *err);
/*
 * A stream of documents (JSON lines, or values separated by whitespace), as
 * `latsplit irq --json` writes one per interval, from len bytes at text (the
 * caller keeps it alive). n >= 1 on success. Reading a file: io.h.
 */
int ls_jr_parse_stream(struct ls_jdoc **docs, size_t *n, const char *name, const char *text,
		       size_t len, const struct ls_jlimits *lim, struct ls_err *err);
/* Free what ls_jr_parse_stream or ls_jr_parse_file_stream returned. */
void ls_jr_free_stream(struct ls_jdoc *docs, size_t n);
/* Free a document (safe on a zeroed or failed one). */
void ls_jr_free(struct ls_jdoc *doc);

/* Line and column (1-based) of byte offset off in doc. */
void ls_jr_pos(const struct ls_jdoc *doc, size_t off, unsigned int *line,
	       unsigned int *col);
/* Member key of an object, or NULL (also when obj is not an object). */
const struct ls_jv *ls_jv_get(const struct ls_jv *obj, const char *key);
/* Member key of obj as a number; false when absent or not a number. */
bool ls_jv_num(const struct ls_jv *obj, const char *key, double *out);
/* Member key of obj as a non-negative integer; false when absent or not one. */
bool ls_jv_u64(const struct ls_jv *obj, const char *key, uint64_t *out);
/* Member key of obj as a string into buf; false when absent or not a string. */
bool ls_jv_str(const struct ls_jv *obj, const char *key, char *buf, size_t len);
/* Member key of obj as a boolean; false when absent or not a boolean. */
bool ls_jv_bool(const struct ls_jv *obj, const char *key, bool *out);
/* Name of a type for messages: "null", "boolean", "number", ... */
const char *ls_jtype_name(enum ls_jtype t);

#endif /* LS_JSONR_H */
