/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit agent` (tools/cli/cmd_agent.c): what it keeps of each peer and
 * how that becomes its /metrics page, apart from the process so the unit
 * tests can drive them.
 *
 * The agent keeps, per peer of its list, the last session's one-way
 * summary (with every session's sample sum and count, the summary's _sum
 * and _count), counters of sessions, failures, busy refusals and skipped
 * slots, the session it is owed after a skipped slot, and the last
 * measured breakdown's record (struct bd_prom_pair, as `breakdown --prom`
 * keeps it) with its time. Every session, probe or kernel-recorded
 * breakdown, feeds the one-way summary; the three parts come from
 * breakdowns alone: a probe without kernel records cannot tell the hosts'
 * time from queuing, and an agent must not call one the other. A peer
 * whose last result is older than a bound is shown down.
 * Memory is one fixed-size record per peer (at most LS_PEERS_MAX). The page
 * is rendered with the Prometheus writer (prom.h) into a memory buffer.
 */
#ifndef LS_AGENT_H
#define LS_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bd.h"
#include "peers.h"
#include "stats.h"
#include "util.h"

/* What the agent knows of one peer. */
struct ls_agent_peer {
	char name[LS_PEER_NAME_MAX + 1];
	double since;			/* when it joined the list, Unix seconds */
	bool probed;			/* a session ended (ok or not) */
	bool up;			/* the last finished session (probe or breakdown) measured */
	struct ls_summary oneway;	/* the last session's one-way latency, ns (probed && up) */
	double ow_sum_ns;		/* every successful session's samples: their sum, ns */
	uint64_t ow_count;		/* ... and their count (the summary's _sum, _count) */
	double last_ts;			/* when the last session ended, Unix seconds */
	uint64_t probes;		/* sessions run, probe or breakdown (busy refusals included) */
	uint64_t failures;		/* sessions that failed (not busy) */
	uint64_t consec_failures;	/* ... in a row, up to the last one (0: it measured) */
	uint64_t busy;			/* refused: the responder served another prober */
	uint64_t breakdowns, bd_failures;	/* the kernel-recorded ones among them */
	uint64_t skipped;		/* its slots skipped: --max-sessions in flight */
	uint64_t owed;			/* 0, or 1 + the slot whose session it is owed */
	bool owed_bd;			/* the owed session is a breakdown */
	bool have_bd;			/* a breakdown ended (ok or not) */
	double bd_ts;			/* when the last breakdown ended, Unix seconds */
	double bd_ok_ts;		/* when the last measured one ended (bd holds it), or 0 */
	struct bd_prom_pair bd;		/* ctr NULL: its statistics list is not kept */
	double bd_sum_ns[4];		/* every measured breakdown's samples, by part: sum */
	uint64_t bd_count[4];		/* ... and count */
};

/* The agent's own counters. */
struct ls_agent_stats {
	const char *version;		/* latsplit's, for the build info */
	uint64_t skipped;		/* slots skipped: --max-sessions in flight */
	uint64_t reloads, reload_failures;	/* SIGHUP re-reads of the peers file */
	uint64_t responder_restarts;	/* responder processes that ended with a failure */
	double now;			/* the page's time, Unix seconds (0: nothing is stale) */
	double stale_s;			/* a peer's last result older than this: up 0 */
	double bd_stale_s;		/* a breakdown older than this: its figures dropped */
};

/*
 * Take a probe session's result into p at now (Unix seconds): rc 0 with its
 * one-way summary s (accumulated into _sum and _count), else a failure. A
 * busy refusal is not a result: ls_agent_take_busy().
 */
void ls_agent_take_probe(struct ls_agent_peer *p, int rc, const struct ls_summary *s,
			 double now);
/*
 * Take a breakdown session's result: rc 0 with its record bd (kept; its
 * total feeds the one-way summary, its parts the breakdown's summaries;
 * the peer is up), else a failure, counted as a
 * failed session too; the last measured breakdown's figures stay, with
 * their time, until they are stale.
 */
void ls_agent_take_bd(struct ls_agent_peer *p, int rc, const struct bd_prom_pair *bd,
		      double now);
/*
 * A session (probe or breakdown) the peer refused because it was serving
 * another prober: counted, not a result (the last figures stay).
 */
void ls_agent_take_busy(struct ls_agent_peer *p);
/*
 * The peer whose owed session is the oldest (see owed), or NULL; a peer
 * for which busy(arg, peer) is true (its own session still runs) is passed
 * over, so it does not hold the others back. busy may be NULL.
 */
struct ls_agent_peer *ls_agent_owed_next(struct ls_agent_peer *p, size_t n,
					 bool (*busy)(void *arg, const struct ls_agent_peer *peer),
					 void *arg);
/*
 * Whether p's last result (or, never probed, its joining the list) is
 * older than stale_s at now.
 */
bool ls_agent_peer_stale(const struct ls_agent_peer *p, double now, double stale_s);

/*
 * The peers of a new list (names, n of them) into *out (malloc'd, n
 * records): a host in the old list keeps its record, a new one starts
 * empty; old hosts not in names are dropped.
 */
int ls_agent_peers_merge(const struct ls_agent_peer *old, size_t nold,
			 char *const *names, size_t n, struct ls_agent_peer **out,
			 struct ls_err *err);
struct sockaddr_storage;
/* agent_self.c: this host's IPv4 and IPv6 interface addresses (getifaddrs) into *out (malloc'd). */
int ls_agent_local_addrs(struct sockaddr_storage **out, size_t *n, struct ls_err *err);
/*
 * agent_self.c: this node's index in list l (read from file) into *idx, or
 * l->n when it is not listed. By name first (self, case-insensitive: the
 * host name, or --self when given); without a name match, the one entry
 * that resolves to an address of this host (local[0..nlocal)). Errors:
 * --self given but not listed; this node listed twice (its name and one of
 * its numeric addresses, or two entries resolving to its addresses).
 */
int ls_agent_find_self(const struct ls_peers *l, const char *file, const char *self,
		       bool given, const struct sockaddr_storage *local, size_t nlocal,
		       size_t *idx, struct ls_err *err);
/* Write the /metrics page for peers p[0..n) and st to fp (Prometheus text 0.0.4). */
int ls_agent_render(FILE *fp, const struct ls_agent_peer *p, size_t n,
		    const struct ls_agent_stats *st, struct ls_err *err);
/* Render into a malloc'd NUL-terminated buffer (*buf, *len). */
int ls_agent_render_buf(const struct ls_agent_peer *p, size_t n,
			const struct ls_agent_stats *st, char **buf, size_t *len,
			struct ls_err *err);

/*
 * cmd_probe.c: one prober session of argv (`probe PEER ...`): *s gets the
 * first size's one-way summary; on failure err says why, its code
 * LS_E_PEER_BUSY when the responder was serving another prober. Returns
 * the exit status; the report goes to stdout.
 */
int ls_probe_once(int argc, char **argv, struct ls_summary *s, struct ls_err *err);

#endif /* LS_AGENT_H */
