/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit agent` (tools/cli/cmd_agent.c): what it keeps of each peer and
 * how that becomes its /metrics page, apart from the process so the unit
 * tests can drive them.
 *
 * The agent keeps, per peer of its list, the last probe's one-way summary
 * and counters of probes, failures and busy refusals, and the last
 * breakdown's record (struct bd_prom_pair, as `breakdown --prom` keeps it).
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
	bool probed;			/* a probe session ended (ok or not) */
	bool up;			/* the last finished probe measured to the end */
	struct ls_summary oneway;	/* its one-way latency, ns (probed && up) */
	double last_ts;			/* when the last probe ended, Unix seconds */
	uint64_t probes;		/* probe sessions run (busy refusals included) */
	uint64_t failures;		/* probe sessions that failed (not busy) */
	uint64_t busy;			/* refused: the responder served another prober */
	uint64_t breakdowns, bd_failures;
	bool have_bd;			/* bd holds the last successful breakdown */
	struct bd_prom_pair bd;		/* ctr NULL: its statistics list is not kept */
};

/* The agent's own counters. */
struct ls_agent_stats {
	const char *version;		/* latsplit's, for the build info */
	uint64_t skipped;		/* slots skipped: --max-sessions in flight */
	uint64_t reloads, reload_failures;	/* SIGHUP re-reads of the peers file */
	uint64_t responder_restarts;	/* responder processes that ended with a failure */
};

/*
 * The peers of a new list (names, n of them) into *out (malloc'd, n
 * records): a host in the old list keeps its record, a new one starts
 * empty; old hosts not in names are dropped.
 */
int ls_agent_peers_merge(const struct ls_agent_peer *old, size_t nold,
			 char *const *names, size_t n, struct ls_agent_peer **out,
			 struct ls_err *err);
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
