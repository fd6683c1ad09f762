// SPDX-License-Identifier: GPL-2.0
/* The commands' output and small files (io.h): warnings, sysfs/procfs reads, atomic files. */
#include "io.h"

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
