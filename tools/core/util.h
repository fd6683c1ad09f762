/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by all of latsplit: typed errors, option parsing, CPU lists, the clock. */
#ifndef LS_UTIL_H
#define LS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A macro's value as a string literal. */
#define LS_XSTR(x)	#x
#define LS_STR(x)	LS_XSTR(x)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* An error that carries what failed and why, filled at the failure site. */
/* What kind of failure an ls_err holds: the exit status follows from it. */
enum ls_err_code {
	LS_E_FAILED = 0,	/* an operation failed (ls_errf's default) */
	LS_E_USAGE,		/* bad input: an option, an argument, a file's content */
	LS_E_LIMIT,		/* input over a size or count limit */
	LS_E_UNSUPPORTED,	/* this host, kernel or device cannot do it */
	LS_E_IO,		/* a system call or file operation failed (ls_errnof) */
	LS_E_DEVICE,		/* the RDMA device or its port is missing or refused */
	LS_E_PEER,		/* the peer failed, timed out or hung up */
	LS_E_PEER_PROTO,	/* the peer speaks another protocol or runs another command */
	LS_E_PEER_BUSY,		/* the responder is serving another prober: try again later */
	LS_E_PEER_REFUSED,	/* nothing listens on the responder's port (it may be restarting) */
};

struct ls_err {
	char msg[512];
	enum ls_err_code code;
};

/* Record an error message; returns -1 so callers can `return ls_errf(...)`. */
int ls_errf(struct ls_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Record an error message with strerror(errnum) appended; returns -1. */
int ls_errnof(struct ls_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record an error message of kind code; returns -1. */
int ls_errcf(struct ls_err *err, enum ls_err_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix an existing error message with more context (its code stays); returns -1. */
int ls_err_wrap(struct ls_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A getopt_long() failure of command cmd (opterr 0, optstring starting
 * with ':'): ':' is an option without its argument, else an unknown one;
 * opt is the word of argv it read. Returns LS_EXIT_USAGE.
 */
int ls_getopt_err(int c, const char *opt, const char *cmd, struct ls_err *err);
/* Free the pointer at pp (a T **) and clear it, so its owner may be freed again. */
void ls_freep(void *pp);
/* The name of enum value v in a table of n names in enum order, or "?" past its end. */
const char *ls_enum_name(const char *const *names, size_t n, unsigned int v);
/* Text from elsewhere made safe to print (no escapes, no control bytes). */
size_t ls_str_printable(char *s);

/* Exit statuses shared by all commands. */
#define LS_EXIT_OK	0
#define LS_EXIT_FAIL	1	/* the measurement ran and found a failure / regression */
#define LS_EXIT_USAGE	2	/* bad input, could not run */

/*
 * Exit status of a run that ended with err: LS_EXIT_FAIL when it had
 * started measuring (started), else LS_EXIT_USAGE; a peer that speaks
 * another protocol is LS_EXIT_USAGE either way (no run could succeed).
 */
int ls_exit_status(const struct ls_err *err, bool started);

/* CLOCK_MONOTONIC now, in ns: the clock the kernel backends stamp with. */
uint64_t ls_now_ns(void);

/* Parse an unsigned decimal in [min, max]; the whole string must be used. */
int ls_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		 struct ls_err *err, const char *what);
/* Parse a finite double in [min, max]; the whole string must be used. */
int ls_parse_double(const char *s, double min, double max, double *out,
		    struct ls_err *err, const char *what);
/* Parse a duration with unit (ns, us, ms, s; bare number = seconds) into ns. */
int ls_parse_duration_ns(const char *s, uint64_t *out, struct ls_err *err,
			 const char *what);
/* Parse a CPU list "0-3,6" into a bitmap of nbits bits. */
int ls_parse_cpulist(const char *s, uint64_t *mask, unsigned int nbits,
		     struct ls_err *err);
/* Format a bitmap as a CPU list "0-3,6". */
void ls_format_cpulist(const uint64_t *mask, unsigned int nbits, char *buf,
		       size_t len);
/*
 * Make room for one more element in the array *v of *cap elements of size
 * bytes holding n: doubles *cap (first when it is 0); 0, or -1 with *v kept.
 */
int ls_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

#endif /* LS_UTIL_H */
