/* SPDX-License-Identifier: GPL-2.0 */
/* The commands' output and files: warnings, sysfs/procfs, whole, JSON and atomic files. */
#ifndef LS_IO_H
#define LS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* Print "latsplit: <msg>" on stderr. */
void ls_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a small text file whole (NUL-terminated, trailing newline stripped). */
int ls_read_text(const char *path, char *buf, size_t len, struct ls_err *err);
/* Read a whole file ("-" is stdin) of at most about max_bytes into a new buffer *out. */
int ls_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 struct ls_err *err);

struct ls_jdoc;
struct ls_jlimits;
/* Read and parse a JSON file ("-" is stdin); the doc owns the buffer. */
int ls_jr_parse_file(struct ls_jdoc *doc, const char *path,
		     const struct ls_jlimits *lim, struct ls_err *err);
/* Read and parse a stream of JSON documents (jsonr.h); docs[0].owned holds the buffer. */
int ls_jr_parse_file_stream(struct ls_jdoc **docs, size_t *n, const char *path,
			    const struct ls_jlimits *lim, struct ls_err *err);

/*
 * Atomic output file: written to a temporary file in the same directory and
 * renamed over the target on commit, so a reader sees the whole file or none.
 * A symbolic link's target is the file replaced (the link stays), an existing
 * file keeps its mode. A character device or a FIFO is not replaced: the
 * output is kept in memory and written to it whole on commit, nothing on
 * abort. A directory, a block device or a socket is refused.
 */
struct ls_afile {
	FILE *fp;
	bool direct;		/* a device or FIFO: fp is a memory stream */
	char *buf;		/* direct: the memory stream's buffer */
	size_t len;
	unsigned int mode;	/* the file's mode after commit */
	char path[4096];	/* the file written (a link's target) */
	char tmp[4096];
};
int ls_afile_open(struct ls_afile *af, const char *path, struct ls_err *err);
int ls_afile_commit(struct ls_afile *af, struct ls_err *err);
void ls_afile_abort(struct ls_afile *af);

#endif /* LS_IO_H */
