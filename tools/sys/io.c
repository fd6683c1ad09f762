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

/*
 * Follow path's symbolic links (at most 40), also a dangling one, to the file
 * they name, into out; a path that is no link is copied.
 */
static int resolve_links(const char *path, char *out, size_t len, struct ls_err *err)
{
	char link[4096], cur[4096];
	struct stat st;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return ls_errf(err, "%s: path too long", path);
	for (int hop = 0; hop < 40; hop++) {
		const char *slash;
		ssize_t n;

		if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) {
			if (snprintf(out, len, "%s", cur) >= (int)len)
				return ls_errf(err, "%s: path too long", cur);
			return 0;
		}
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return ls_errnof(err, errno, "readlink %s", cur);
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] != '/' && slash) {
			/* relative to the link's directory: cut cur after its last '/' */
			size_t dir = slash - cur + 1;

			if (dir + n >= sizeof(cur))
				return ls_errf(err, "%s: the link's target is too long", path);
			memcpy(cur + dir, link, n + 1);
		} else {
			memcpy(cur, link, n + 1);
		}
	}
	return ls_errnof(err, ELOOP, "%s", path);
}

/*
 * Open an output file. A regular file (or a new one, or one a symbolic link
 * names) is written to a temporary file beside it and renamed over it on
 * commit, keeping an existing file's mode; a character device or a FIFO
 * (/dev/null, /dev/stdout on a terminal or a pipe) is written straight to,
 * whole, on commit. Anything else is refused.
 */
int ls_afile_open(struct ls_afile *af, const char *path, struct ls_err *err)
{
	struct stat st;
	int fd;

	memset(af, 0, sizeof(*af));
	af->mode = 0644;
	if (!path[0])
		return ls_errf(err, "the output file name is empty");
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return ls_errf(err, "%s is a directory, not a file to write", path);
		if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
			return ls_errf(err, "%s is a %s: the output is written only to a regular file, "
				       "a character device or a FIFO", path,
				       S_ISBLK(st.st_mode) ? "block device" : "socket");
		if (snprintf(af->path, sizeof(af->path), "%s", path) >= (int)sizeof(af->path))
			return ls_errf(err, "%s: path too long", path);
		af->direct = true;
		af->fp = open_memstream(&af->buf, &af->len);
		if (!af->fp)
			return ls_errnof(err, errno, "buffer the output for %s", path);
		return 0;
	}
	if (resolve_links(path, af->path, sizeof(af->path), err))
		return -1;
	if (stat(af->path, &st) == 0 && S_ISREG(st.st_mode))
		af->mode = st.st_mode & 07777;
	if (snprintf(af->tmp, sizeof(af->tmp), "%s.XXXXXX", af->path) >= (int)sizeof(af->tmp))
		return ls_errf(err, "%s: path too long", af->path);
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

/* Write the buffered output of a device or FIFO to it, whole. */
static int afile_commit_direct(struct ls_afile *af, struct ls_err *err)
{
	size_t done = 0;
	int fd, e;

	if (fclose(af->fp)) {
		e = errno;
		af->fp = NULL;
		return ls_errnof(err, e, "buffer the output for %s", af->path);
	}
	af->fp = NULL;
	fd = open(af->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ls_errnof(err, errno, "open %s", af->path);
	while (done < af->len) {
		ssize_t n = write(fd, af->buf + done, af->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			close(fd);
			return ls_errnof(err, e, "write %s", af->path);
		}
		done += n;
	}
	if (close(fd))
		return ls_errnof(err, errno, "close %s", af->path);
	return 0;
}

/* Flush, sync and rename the temp file over the target (or write a device whole). */
int ls_afile_commit(struct ls_afile *af, struct ls_err *err)
{
	int e;

	if (af->direct) {
		e = afile_commit_direct(af, err);
		free(af->buf);
		af->buf = NULL;
		return e;
	}
	if (fflush(af->fp) || ferror(af->fp) || fsync(fileno(af->fp))) {
		e = errno ? errno : EIO;
		ls_afile_abort(af);
		return ls_errnof(err, e, "write %s", af->path);
	}
	if (fchmod(fileno(af->fp), af->mode)) {
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

/* Drop the temp file (or the buffered output); the target is left untouched. */
void ls_afile_abort(struct ls_afile *af)
{
	if (af->fp) {
		fclose(af->fp);
		af->fp = NULL;
		if (!af->direct)
			unlink(af->tmp);
	}
	free(af->buf);
	af->buf = NULL;
}
