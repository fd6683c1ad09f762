// SPDX-License-Identifier: GPL-2.0
/* Small helpers shared by every latsplit command: errors, parsing, files, clocks. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Record an error message; returns -1. */
int ls_errf(struct ls_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = LS_E_FAILED;
	return -1;
}

/* Record an error message of kind code; returns -1. */
int ls_errcf(struct ls_err *err, enum ls_err_code code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	return -1;
}

/* Record an error message with strerror(errnum) appended; returns -1. */
int ls_errnof(struct ls_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
	err->code = LS_E_IO;
	return -1;
}

/* Prefix an existing error message with more context; returns -1. */
int ls_err_wrap(struct ls_err *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;
	size_t n;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	n = strlen(prefix);
	if (n > sizeof(err->msg) - 3)
		n = sizeof(err->msg) - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	n += 2;
	memcpy(err->msg + n, old, sizeof(err->msg) - n - 1);
	err->msg[sizeof(err->msg) - 1] = '\0';
	return -1;
}

/* Exit status of a run that ended with err (see util.h). */
int ls_exit_status(const struct ls_err *err, bool started)
{
	if (err->code == LS_E_PEER_PROTO)
		return LS_EXIT_USAGE;
	return started ? LS_EXIT_FAIL : LS_EXIT_USAGE;
}

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

/* CLOCK_MONOTONIC now, in ns. */
uint64_t ls_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Parse an unsigned decimal in [min, max]. */
int ls_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		 struct ls_err *err, const char *what)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not a number", what, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not a number", what, s);
	if (v < min || v > max)
		return ls_errcf(err, LS_E_USAGE, "%s: %llu is out of range [%llu, %llu]", what,
				v, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

/* Parse a finite double in [min, max]. */
int ls_parse_double(const char *s, double min, double max, double *out,
		    struct ls_err *err, const char *what)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ')
		return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not a number", what, s ? s : "");
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not a number", what, s);
	if (v < min || v > max)
		return ls_errcf(err, LS_E_USAGE, "%s: %g is out of range [%g, %g]", what, v,
				min, max);
	*out = v;
	return 0;
}

/* Parse a duration with unit (ns, us, ms, s; bare number = seconds) into ns. */
int ls_parse_duration_ns(const char *s, uint64_t *out, struct ls_err *err,
			 const char *what)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || *s == ' ')
		return ls_errcf(err, LS_E_USAGE, "%s: empty duration", what);
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not a duration", what, s);
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].mult > 1e18)
			return ls_errcf(err, LS_E_USAGE, "%s: '%s' is too long", what, s);
		*out = (uint64_t)(v * units[i].mult + 0.5);
		return 0;
	}
	return ls_errcf(err, LS_E_USAGE, "%s: '%s' has an unknown unit (ns, us, ms, s)", what, s);
}

/* Parse a CPU list "0-3,6" into a bitmap of nbits bits. */
int ls_parse_cpulist(const char *s, uint64_t *mask, unsigned int nbits,
		     struct ls_err *err)
{
	const char *p = s;

	memset(mask, 0, ((nbits + 63) / 64) * sizeof(uint64_t));
	if (!s || !*s)
		return ls_errcf(err, LS_E_USAGE, "cpu list: empty");
	while (*p) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			return ls_errcf(err, LS_E_USAGE, "cpu list: '%s' is malformed", s);
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return ls_errcf(err, LS_E_USAGE, "cpu list: '%s' is malformed", s);
			b = strtoul(p, &end, 10);
		}
		if (a > b || b >= nbits)
			return ls_errcf(err, LS_E_USAGE, "cpu list: '%s': cpus must be ascending ranges below %u",
					s, nbits);
		for (; a <= b; a++)
			mask[a / 64] |= 1ull << (a % 64);
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return ls_errcf(err, LS_E_USAGE, "cpu list: '%s' is malformed", s);
	}
	return 0;
}

/* Format a bitmap as a CPU list "0-3,6". */
void ls_format_cpulist(const uint64_t *mask, unsigned int nbits, char *buf,
		       size_t len)
{
	unsigned int i = 0;
	size_t n = 0;

	buf[0] = '\0';
	while (i < nbits && n < len) {
		unsigned int j;

		if (!(mask[i / 64] & (1ull << (i % 64)))) {
			i++;
			continue;
		}
		j = i;
		while (j + 1 < nbits && (mask[(j + 1) / 64] & (1ull << ((j + 1) % 64))))
			j++;
		if (j == i)
			n += snprintf(buf + n, len - n, "%s%u", n ? "," : "", i);
		else
			n += snprintf(buf + n, len - n, "%s%u-%u", n ? "," : "", i, j);
		i = j + 1;
	}
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
