// SPDX-License-Identifier: GPL-2.0
/* The commands' output and files (io.h): warnings, sysfs/procfs, whole, JSON and atomic files. */
#include "io.h"
#include "jsonr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Print "latsplit: <msg>" on stderr. */
void ls_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("latsplit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Read a small text file whole (trailing newline stripped). */
int ls_read_text(const char *path, char *buf, size_t len, struct ls_err *err)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ls_errnof(err, errno, "open %s", path);
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return ls_errnof(err, e, "read %s", path);
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* Read a whole file (or stdin for "-") into a new buffer. */
int ls_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 struct ls_err *err)
{
	size_t cap = 65536, n = 0;
	bool is_stdin = !strcmp(path, "-");
	FILE *fp = is_stdin ? stdin : fopen(path, "rb");
	char *buf;
	int ret = 0;

	if (!fp)
		return ls_errnof(err, errno, "open %s", path);
	buf = malloc(cap);
	if (!buf) {
		ret = ls_errf(err, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb;

			if (cap > max_bytes) {
				ret = ls_errcf(err, LS_E_LIMIT, "%s: larger than the limit of %zu bytes",
					       path, max_bytes);
				goto out;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				ret = ls_errf(err, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got)
			continue;
		if (ferror(fp)) {
			ret = ls_errnof(err, errno ? errno : EIO, "read %s", path);
			goto out;
		}
		break;
	}
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	if (!is_stdin)
		fclose(fp);
	return ret;
}

/* Read and parse a JSON file (or stdin for "-"). */
int ls_jr_parse_file(struct ls_jdoc *doc, const char *path,
		     const struct ls_jlimits *lim, struct ls_err *err)
{
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : LS_JR_MAX_BYTES;
	char *buf;
	size_t n;

	memset(doc, 0, sizeof(*doc));
	if (ls_read_file(path, max_bytes, &buf, &n, err))
		return -1;
	if (ls_jr_parse(doc, strcmp(path, "-") ? path : "<stdin>", buf, n, lim, err)) {
		free(buf);
		return -1;
	}
	doc->owned = buf;
	return 0;
}

/* Read and parse a stream of JSON documents (or stdin for "-"). */
int ls_jr_parse_file_stream(struct ls_jdoc **docs, size_t *n, const char *path,
			    const struct ls_jlimits *lim, struct ls_err *err)
{
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : LS_JR_MAX_BYTES;
	char *buf;
	size_t len;

	*docs = NULL;
	*n = 0;
	if (ls_read_file(path, max_bytes, &buf, &len, err))
		return -1;
	if (ls_jr_parse_stream(docs, n, strcmp(path, "-") ? path : "<stdin>", buf, len, lim, err)) {
		free(buf);
		return -1;
	}
	(*docs)[0].owned = buf;
	return 0;
}

/* Open an atomic output file (temp file beside the target). */
int ls_afile_open(struct ls_afile *af, const char *path, struct ls_err *err)
{
	int fd;

	memset(af, 0, sizeof(*af));
	if (snprintf(af->path, sizeof(af->path), "%s", path) >= (int)sizeof(af->path) ||
	    snprintf(af->tmp, sizeof(af->tmp), "%s.XXXXXX", path) >= (int)sizeof(af->tmp))
		return ls_errf(err, "%s: path too long", path);
	fd = mkstemp(af->tmp);
	if (fd < 0)
		return ls_errnof(err, errno, "create temporary file for %s", path);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		int e = errno;

		close(fd);
		unlink(af->tmp);
		return ls_errnof(err, e, "fdopen %s", af->tmp);
	}
	return 0;
}

/* Flush, sync and rename the temp file over the target. */
int ls_afile_commit(struct ls_afile *af, struct ls_err *err)
{
	int e;

	if (fflush(af->fp) || ferror(af->fp) || fsync(fileno(af->fp))) {
		e = errno ? errno : EIO;
		ls_afile_abort(af);
		return ls_errnof(err, e, "write %s", af->path);
	}
	if (fchmod(fileno(af->fp), 0644)) {
		e = errno;
		ls_afile_abort(af);
		return ls_errnof(err, e, "chmod %s", af->tmp);
	}
	if (fclose(af->fp)) {
		e = errno;
		af->fp = NULL;
		unlink(af->tmp);
		return ls_errnof(err, e, "close %s", af->path);
	}
	af->fp = NULL;
	if (rename(af->tmp, af->path)) {
		e = errno;
		unlink(af->tmp);
		return ls_errnof(err, e, "rename %s to %s", af->tmp, af->path);
	}
	return 0;
}

/* Drop the temp file; the target is left untouched. */
void ls_afile_abort(struct ls_afile *af)
{
	if (af->fp) {
		fclose(af->fp);
		af->fp = NULL;
		unlink(af->tmp);
	}
}
