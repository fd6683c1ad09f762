/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands' option layer: each command declares its options once, as a
 * table (long name, short letter, kind of argument, where the value goes),
 * and one getopt_long loop reads them all, with the long-option array and
 * the short-option string made from the table. An option's error messages
 * name it as "--NAME".
 */
#ifndef LATSPLIT_OPTS_H
#define LATSPLIT_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* What an option's argument is, and how it is stored at base + off. */
enum ls_opt_kind {
	LS_ARG_NONE,		/* no argument: sets a bool */
	LS_ARG_STR,		/* the argument itself (const char *) */
	LS_ARG_U64,		/* a whole number in [min, max], stored in size bytes */
	LS_ARG_DOUBLE,		/* a number in [dmin, dmax] (double) */
	LS_ARG_US,		/* microseconds in [dmin, dmax], stored as ns (double) */
	LS_ARG_PCT,		/* a percent in [dmin, dmax], stored as a fraction (double) */
	LS_ARG_DUR,		/* a duration with unit, stored as ns (uint64_t) */
	LS_ARG_FN,		/* parse_d(arg, (double *)dst, err, "--NAME") */
	LS_ARG_ENUM,		/* one of names[], its val stored (int) */
	LS_ARG_CHOICE,		/* one of names[], the argument itself stored */
	LS_ARG_HOOK,		/* hook(dst, arg, err): the command's own logic */
	LS_ARG_HELP,		/* -h: the usage on stdout, the loop ends with LS_OPTS_HELP */
};

/* One accepted word of an LS_ARG_ENUM or LS_ARG_CHOICE option (NULL name ends the list). */
struct ls_opt_name {
	const char *name;
	int val;
};

/* One option of a command. */
struct ls_opt {
	const char *name;		/* long name, without "--" */
	int key;			/* short letter, or >= 256 for a long-only option */
	enum ls_opt_kind kind;
	size_t off;			/* where the value goes in the group's base */
	unsigned int size;		/* LS_ARG_U64: bytes of the destination */
	uint64_t min, max;		/* LS_ARG_U64 */
	double dmin, dmax;		/* LS_ARG_DOUBLE, LS_ARG_US, LS_ARG_PCT */
	const struct ls_opt_name *names;	/* LS_ARG_ENUM, LS_ARG_CHOICE */
	int (*parse_d)(const char *s, double *out, struct ls_err *err, const char *what);
	int (*hook)(void *dst, const char *arg, struct ls_err *err);
};

/* A table's rows: LS_OPT_<KIND>(long name, key, the base's type, its field, ...). */
#define LS_OPT_(nm, k, kd, T, f)	.name = nm, .key = k, .kind = kd, .off = offsetof(T, f)
#define LS_OPT_FLAG(nm, k, T, f)	{ LS_OPT_(nm, k, LS_ARG_NONE, T, f) }
#define LS_OPT_STR(nm, k, T, f)		{ LS_OPT_(nm, k, LS_ARG_STR, T, f) }
#define LS_OPT_DUR(nm, k, T, f)		{ LS_OPT_(nm, k, LS_ARG_DUR, T, f) }
#define LS_OPT_U64(nm, k, T, f, lo, hi)	\
	{ LS_OPT_(nm, k, LS_ARG_U64, T, f), .size = sizeof(((T *)0)->f), .min = lo, .max = hi }
#define LS_OPT_DBL(nm, k, T, f, lo, hi)	\
	{ LS_OPT_(nm, k, LS_ARG_DOUBLE, T, f), .dmin = lo, .dmax = hi }
#define LS_OPT_USEC(nm, k, T, f, lo, hi)	\
	{ LS_OPT_(nm, k, LS_ARG_US, T, f), .dmin = lo, .dmax = hi }
#define LS_OPT_PCT(nm, k, T, f, lo, hi)	\
	{ LS_OPT_(nm, k, LS_ARG_PCT, T, f), .dmin = lo, .dmax = hi }
#define LS_OPT_FN(nm, k, T, f, fn)	{ LS_OPT_(nm, k, LS_ARG_FN, T, f), .parse_d = fn }
#define LS_OPT_ENUM(nm, k, T, f, nv)	{ LS_OPT_(nm, k, LS_ARG_ENUM, T, f), .names = nv }
#define LS_OPT_CHOICE(nm, k, T, f, nv)	{ LS_OPT_(nm, k, LS_ARG_CHOICE, T, f), .names = nv }
#define LS_OPT_HOOK(nm, k, T, f, fn)	{ LS_OPT_(nm, k, LS_ARG_HOOK, T, f), .hook = fn }
/* A hook handed the group's whole base. */
#define LS_OPT_CALL(nm, k, fn)	\
	{ .name = nm, .key = k, .kind = LS_ARG_HOOK, .hook = fn }
#define LS_OPT_HELPOPT			{ .name = "help", .key = 'h', .kind = LS_ARG_HELP }

/* A table of options and the struct its values go into; given is filled by the loop. */
struct ls_optgroup {
	const struct ls_opt *v;
	size_t n;
	void *base;
	uint64_t given;			/* bit i: v[i] was given (the first 64) */
};

#define LS_OPTGROUP(tbl, b)	{ (tbl), ARRAY_SIZE(tbl), (b), 0 }

/* How a command's loop runs and reports. */
struct ls_optcmd {
	const char *name;		/* the command, in messages */
	const char *mode;		/* getopt's leading flags: "", ":" or "+" */
	void (*usage)(FILE *fp);	/* -h prints it on stdout */
	/*
	 * false: getopt prints its own message, an unknown option prints the
	 * usage on stderr and a bad value "latsplit: CMD: why". true: both are
	 * left in err for the caller (getopt silent).
	 */
	bool quiet;
	/* When quiet: the message of an unknown option (NULL: ls_getopt_err's). */
	int (*unknown)(int c, char **argv, struct ls_err *err);
};

/* ls_opts_parse() met -h (and printed the usage on stdout). */
#define LS_OPTS_HELP	(-1)

/*
 * Read argv's options (optind from 1) into the groups' bases, the groups'
 * options in order. Returns 0 at the first non-option, LS_OPTS_HELP after
 * -h, or LS_EXIT_USAGE for an unknown option or a bad value (reported as cmd
 * says).
 */
int ls_opts_parse(int argc, char **argv, const struct ls_optcmd *cmd,
		  struct ls_optgroup *g, size_t ng, struct ls_err *err);

/* ls_opts_parse() of one table of options into base. */
#define LS_OPTS_PARSE(argc, argv, cmd, tbl, base, err)	\
	ls_opts_parse(argc, argv, cmd, (struct ls_optgroup[]){ LS_OPTGROUP(tbl, base) }, 1, err)

/*
 * The exit status of a command whose option parse returned rc (not 0):
 * LS_EXIT_OK after the help, else LS_EXIT_USAGE after "latsplit: CMD: why"
 * from err.
 */
int ls_opts_exit(int rc, const char *cmd, const struct ls_err *err);

/* "latsplit: CMD: why" on stderr, why from fmt; returns LS_EXIT_USAGE. */
int ls_opts_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether the option with this key of group g was given. */
bool ls_opt_given(const struct ls_optgroup *g, int key);

/* arg's index in names, or -1 with "WHAT: 'ARG' is not A, B or C" in err. */
int ls_opt_choice(const struct ls_opt_name *names, const char *arg, const char *what,
		  struct ls_err *err);

/* An LS_ARG_HOOK for --normal-us LO-HI into a struct ls_thresholds. */
int ls_opt_normal_us(void *thresholds, const char *arg, struct ls_err *err);

/* The kernel backends a command may name with --backend. */
extern const struct ls_opt_name ls_opt_backends[];

#endif /* LATSPLIT_OPTS_H */
