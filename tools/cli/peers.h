/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Peer lists for fleet runs (--peers FILE): one host per line, blank lines
 * and '#' comments ignored, each host at most once. The prober measures
 * them one after another, so no responder is ever probed twice at once by
 * this prober; a fleet's rounds of disjoint pairs are Documentation/fleet.rst.
 */
#ifndef LS_PEERS_H
#define LS_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct ls_prom;

#define LS_PEERS_MAX		4096	/* hosts in one list */
#define LS_PEER_NAME_MAX	255	/* a DNS name's length */

struct ls_peers {
	char **v;
	size_t n;
};

/* Parse a peer list held in text (len bytes); name is for messages. */
int ls_peers_parse(const char *name, const char *text, size_t len, struct ls_peers *p,
		   struct ls_err *err);
/* Read and parse the peer list file at path. */
int ls_peers_load(const char *path, struct ls_peers *p, struct ls_err *err);
/* Free a list filled by ls_peers_parse() or ls_peers_load(). */
void ls_peers_free(struct ls_peers *p);
/*
 * A fleet run's pair that could not be measured, on stdout: a JSON line
 * {"schema", "kind", "peer", "ok": false, "exit_status"} or a text line.
 */
void ls_peers_print_failed(bool json, const char *kind, const char *peer, int rc);

/* A fleet run's progress over its pairs (one pair when peers is NULL). */
struct ls_fleet {
	const struct ls_peers *peers;
	const char *kind;	/* "probe", "breakdown": messages and failed lines */
	bool json;
	size_t n;		/* pairs */
	size_t failed;		/* pairs whose run returned non-zero */
	size_t unstarted;	/* of those, the ones that could not start */
};

/* Start a fleet over peers (NULL: the one PEER of the command line). */
void ls_fleet_init(struct ls_fleet *f, const struct ls_peers *peers, const char *kind,
		   bool json);
/* Pair i: its host into *peer and, in a text fleet run, the "== pair" line. */
void ls_fleet_next(const struct ls_fleet *f, size_t i, const char **peer);
/* Count pair i's exit status; in a fleet run a failed pair gets its failed line when print. */
void ls_fleet_done(struct ls_fleet *f, const char *peer, int rc, bool print);
/* The fleet's exit status: 2 no pair could start, 1 some failed, else 0. */
int ls_fleet_status(const struct ls_fleet *f);

/*
 * One command's run over its pairs (the one PEER, or every --peers host in
 * turn) with its policy: ls_fleet_run() sets *peer to each host, calls
 * run() with the pair's "host:port" label and its zeroed --prom record
 * (NULL without --prom), counts the exit statuses, and writes the --prom
 * file from every record or drops it.
 */
struct ls_fleet_cmd {
	const char *kind;		/* "probe", "breakdown" */
	/* measure one pair; returns its exit status */
	int (*run)(void *arg, const char *label, void *pair);
	void *arg;
	bool json;
	const struct ls_peers *peers;	/* NULL: the one PEER */
	const char **peer;		/* the probe options' peer, set per pair */
	unsigned int port;		/* the control port, for the labels */
	/*
	 * policy: a run that failed after it started still printed its own
	 * report and kept its --prom record (probe); else its pair gets the
	 * failed line, and one pair's --prom file is not written (breakdown)
	 */
	bool failed_run_reports;
	/* --prom: the opened file (or NULL), a pair's record size, the writer, a record's free */
	struct ls_prom *prom;
	size_t pair_size;
	int (*write_prom)(struct ls_prom *pf, const void *pairs, size_t n, struct ls_err *err);
	void (*free_pair)(void *pair);
};

/* Run fc's pairs (see struct ls_fleet_cmd); returns the command's exit status. */
int ls_fleet_run(const struct ls_fleet_cmd *fc);

#endif /* LS_PEERS_H */
