/* SPDX-License-Identifier: GPL-2.0 */
/* The probe's command-line options, shared by the commands that run it. */
#ifndef LATSPLIT_PROBE_OPTS_H
#define LATSPLIT_PROBE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "opts.h"
#include "probe.h"
#include "util.h"

/* Keys of the shared long-only options (above any command's own). */
enum {
	LS_PO_VERB = 0x1000,
	LS_PO_CPU,
	LS_PO_CTMO,
	LS_PO_WTMO,
	LS_PO_LTMO,
	LS_PO_BIND,
	LS_PO_KEY,
	LS_PO_INSECURE,
	LS_PO_TCLASS,
};

/* Keys of the responder's limits (a block of their own). */
enum {
	LS_PO_MAXSIZE = 0x1100,
	LS_PO_MAXSAMPLES,
	LS_PO_MAXSESSION,
	LS_PO_MAXRUN,
};

/* How many shared options there are. */
#define LS_PROBE_NR_OPTS 20

/*
 * The shared options, their values into a struct ls_probe_opts: a command
 * that runs the probe reads them as its first group, its own as the second.
 */
extern const struct ls_opt ls_probe_optv[LS_PROBE_NR_OPTS];

/*
 * The responder's limits on what a prober may ask (--max-size, --max-samples,
 * --max-session-samples, --max-run-time), into a struct ls_probe_opts: the
 * group after the shared options. --max-samples is also the prober's
 * capacity with -D.
 */
#define LS_PROBE_NR_LIMIT_OPTS 4
extern const struct ls_opt ls_probe_limit_optv[LS_PROBE_NR_LIMIT_OPTS];
/* Print the limits' help lines. */
void ls_probe_limit_help(FILE *fp);

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
