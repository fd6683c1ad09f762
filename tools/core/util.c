// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by all of latsplit (util.h): typed errors, option parsing, CPU lists, the clock. */
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Format an error message of kind code into err (if any); returns -1. */
static __attribute__((format(printf, 3, 0)))
int err_vset(struct ls_err *err, enum ls_err_code code, const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	err->code = code;
	return -1;
}

/* Record an error message; returns -1. */
int ls_errf(struct ls_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, LS_E_FAILED, fmt, ap);
	va_end(ap);
	return -1;
}

/* Record an error message of kind code; returns -1. */
int ls_errcf(struct ls_err *err, enum ls_err_code code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, code, fmt, ap);
	va_end(ap);
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
	err_vset(err, LS_E_IO, fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
	return -1;
}

/* A getopt_long() failure's message (see util.h); returns LS_EXIT_USAGE. */
int ls_getopt_err(int c, const char *opt, const char *cmd, struct ls_err *err)
{
	if (c == ':')
		ls_errf(err, "option '%s' needs an argument", opt);
	else
		ls_errf(err, "unknown option '%s' (see 'latsplit %s --help')", opt, cmd);
	return LS_EXIT_USAGE;
}

/* Free the pointer at pp (a T **) and clear it. */
void ls_freep(void *pp)
{
	void **p = pp;

	free(*p);
	*p = NULL;
}

/* names[v], or "?" when v is past the n names. */
const char *ls_enum_name(const char *const *names, size_t n, unsigned int v)
{
	return v < n ? names[v] : "?";
}

/* Replace every byte of s outside printable ASCII with '?'; returns how many. */
size_t ls_str_printable(char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) {
			*s = '?';
			n++;
		}
	}
	return n;
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

/* Make room for one more element in the array *v (doubling its capacity). */
int ls_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	void **pv = v;
	size_t nc;
	void *nv;

	if (n < *cap)
		return 0;
	nc = *cap ? 2 * *cap : first;
	nv = realloc(*pv, nc * size);
	if (!nv)
		return -1;
	*pv = nv;
	*cap = nc;
	return 0;
}
