/* SPDX-License-Identifier: GPL-2.0 */
/* The probe's command-line options, shared by the commands that run it. */
#ifndef LATSPLIT_PROBE_OPTS_H
#define LATSPLIT_PROBE_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "probe.h"
#include "util.h"

/* getopt letters of the shared options; a command appends its own. */
#define LS_PROBE_SHORTOPTS "d:i:x:s:n:D:m:eu:p:R"

/* Values of the shared long-only options (above any command's own). */
enum {
	LS_PO_VERB = 0x1000,
	LS_PO_CPU,
	LS_PO_CTMO,
	LS_PO_WTMO,
	LS_PO_LTMO,
};

/* How many shared long options there are: size a command's table with it. */
#define LS_PROBE_NR_LONGOPTS 16

/*
 * The shared long options, then own's nown entries (the last one the NULL
 * entry), into out[LS_PROBE_NR_LONGOPTS + nown].
 */
void ls_probe_longopts(struct option *out, const struct option *own, size_t nown);
/* Apply one shared option to o: 0 applied, 1 not a probe option, -1 bad value (err set). */
int ls_probe_opt_apply(struct ls_probe_opts *o, int opt, const char *arg,
		       struct ls_err *err);

/* The help lines of the shared options that differ between the commands ("" for none). */
struct ls_probe_help {
	const char *after_size;		/* lines after -s (probe: -a, --sweep-max) */
	const char *iters;		/* the -n line */
	const char *duration;		/* the -D line and any after it (probe: --max-samples) */
	const char *cpu;		/* the --cpu line */
	const char *wait;		/* the --wait-timeout line */
};

/* Print the shared options' help, with h's lines where the commands differ. */
void ls_probe_help(FILE *fp, const struct ls_probe_help *h);

/*
 * The option loop of a command that runs the probe: the shared options and
 * the command's own (own[nown], their letters in own_short, 'h' for help),
 * each handed to apply (0 applied, 1 unknown, -1 bad value with err set).
 * An unknown option prints usage on stderr, a bad one "latsplit: CMD: why";
 * both return LS_EXIT_USAGE. -h sets *help and returns 0 at once.
 */
int ls_probe_getopt(int argc, char **argv, const struct option *own, size_t nown,
		    const char *own_short, const char *cmd,
		    int (*apply)(void *ctx, int opt, const char *arg, struct ls_err *err),
		    void *ctx, void (*usage)(FILE *fp), bool *help);

struct ls_peers;

/*
 * The checks a command that runs the probe makes last: the probe options
 * (ls_probe_opts_check, as prober or responder), then with --peers the list
 * (into plist; the first host becomes o->peer). A failure prints
 * "latsplit: CMD: why" and returns LS_EXIT_USAGE; else 0.
 */
int ls_probe_opts_finish(struct ls_probe_opts *o, bool prober, const char *peers,
			 struct ls_peers *plist, const char *cmd);

#endif /* LATSPLIT_PROBE_OPTS_H */
