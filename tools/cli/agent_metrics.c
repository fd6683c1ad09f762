// SPDX-License-Identifier: GPL-2.0
/* The agent's per-peer state and its /metrics page (Prometheus text 0.0.4). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../include/uapi/latsplit.h"
#include "agent.h"
#include "prom.h"

/* The peers of a new list, keeping the records of hosts that stay. */
int ls_agent_peers_merge(const struct ls_agent_peer *old, size_t nold,
			 char *const *names, size_t n, struct ls_agent_peer **out,
			 struct ls_err *err)
{
	struct ls_agent_peer *p;

	*out = NULL;
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		return ls_errnof(err, ENOMEM, "agent: state of %zu peers", n);
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < nold && strcmp(old[k].name, names[i]); k++)
			;
		if (k < nold)
			p[i] = old[k];
		else
			snprintf(p[i].name, sizeof(p[i].name), "%s", names[i]);
	}
	*out = p;
	return 0;
}

/* A measured session's one-way summary s into p's, accumulated. */
static void take_oneway(struct ls_agent_peer *p, const struct ls_summary *s)
{
	p->oneway = *s;
	p->ow_sum_ns += s->mean * (double)s->count;
	p->ow_count += s->count;
}

/* A session of p ended at now: counted, and failed when rc is not 0. */
static void take_session(struct ls_agent_peer *p, int rc, double now)
{
	p->probes++;
	p->probed = true;
	p->last_ts = now;
	p->up = !rc;
	if (rc) {
		p->failures++;
		p->consec_failures++;
	} else {
		p->consec_failures = 0;
	}
}

/* Take a probe session's result into p (see agent.h). */
void ls_agent_take_probe(struct ls_agent_peer *p, int rc, const struct ls_summary *s,
			 double now)
{
	take_session(p, rc, now);
	if (!rc)
		take_oneway(p, s);
}

/* Take a breakdown session's result into p (see agent.h). */
void ls_agent_take_bd(struct ls_agent_peer *p, int rc, const struct bd_prom_pair *bd,
		      double now)
{
	take_session(p, rc, now);
	p->breakdowns++;
	p->bd_ts = now;
	p->have_bd = true;
	if (rc) {
		p->bd_failures++;	/* the last measured figures stay until stale */
		return;
	}
	p->bd = *bd;
	p->bd.ctr = NULL;
	p->bd.nctr = 0;
	p->bd.head.ok = true;
	p->bd_ok_ts = now;
	for (int k = 0; k < 4; k++) {
		p->bd_sum_ns[k] += bd->sums[k].mean * (double)bd->sums[k].count;
		p->bd_count[k] += bd->sums[k].count;
	}
	take_oneway(p, &bd->sums[0]);
}

/* A busy refusal of p's session (see agent.h). */
void ls_agent_take_busy(struct ls_agent_peer *p)
{
	p->probes++;
	p->busy++;
}

/* The peer with the oldest owed session that is not busy, or NULL. */
struct ls_agent_peer *ls_agent_owed_next(struct ls_agent_peer *p, size_t n,
					 bool (*busy)(void *arg, const struct ls_agent_peer *peer),
					 void *arg)
{
	struct ls_agent_peer *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (p[i].owed && (!best || p[i].owed < best->owed) && !(busy && busy(arg, &p[i])))
			best = &p[i];
	return best;
}

/* Whether p's last result, or its joining the list, is older than stale_s. */
bool ls_agent_peer_stale(const struct ls_agent_peer *p, double now, double stale_s)
{
	double ref = p->last_ts > p->since ? p->last_ts : p->since;

	return now > 0 && stale_s > 0 && ref > 0 && now - ref > stale_s;
}

/* A summary with the last window's quantiles and the cumulative _sum and _count. */
static struct ls_summary cumulative(const struct ls_summary *last, double sum_ns,
				    uint64_t count)
{
	struct ls_summary s = *last;

	s.count = count;
	s.mean = count ? sum_ns / (double)count : 0;
	return s;
}

/* Which per-peer counter a family shows. */
enum peer_ctr { CTR_PROBES, CTR_FAILURES, CTR_BUSY, CTR_BD, CTR_BD_FAILURES, CTR_SKIPPED,
		CTR_CONSEC };

/* Peer p's counter c. */
static uint64_t peer_ctr(const struct ls_agent_peer *p, enum peer_ctr c)
{
	switch (c) {
	case CTR_PROBES:
		return p->probes;
	case CTR_FAILURES:
		return p->failures;
	case CTR_BUSY:
		return p->busy;
	case CTR_BD:
		return p->breakdowns;
	case CTR_SKIPPED:
		return p->skipped;
	case CTR_CONSEC:
		return p->consec_failures;
	default:
		return p->bd_failures;
	}
}

/* The per-peer counter families. */
static const struct {
	const char *name, *help;
	enum peer_ctr c;
} peer_ctrs[] = {
	{ "latsplit_agent_probes_total",
	  "Sessions the agent started with the peer, probes and kernel-recorded breakdowns.",
	  CTR_PROBES },
	{ "latsplit_agent_probe_failures_total",
	  "Sessions (probes and breakdowns) with the peer that failed (refusals for busy not counted).",
	  CTR_FAILURES },
	{ "latsplit_agent_probe_busy_total",
	  "Sessions the peer refused because it was serving another prober (tried again later).",
	  CTR_BUSY },
	{ "latsplit_agent_breakdowns_total",
	  "Kernel-recorded breakdowns run with the peer (also counted in latsplit_agent_probes_total).",
	  CTR_BD },
	{ "latsplit_agent_breakdown_failures_total",
	  "Kernel-recorded breakdowns with the peer that failed (also counted in latsplit_agent_probe_failures_total).",
	  CTR_BD_FAILURES },
	{ "latsplit_agent_peer_skipped_slots_total",
	  "The peer's slots skipped because --max-sessions sessions were in flight (its session runs later).",
	  CTR_SKIPPED },
};

/* One family with one sample per peer: a counter (c >= 0), up (-1) or the last result's time (-2). */
static int per_peer(struct ls_prom *pr, const struct ls_agent_peer *p, size_t n,
		    const struct ls_agent_stats *st, const char *name, enum ls_prom_type type,
		    const char *help, int c, struct ls_err *err)
{
	struct ls_prom_label l;

	if (ls_prom_family(pr, name, type, help, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		bool stale = ls_agent_peer_stale(&p[i], st->now, st->stale_s);
		double v;

		l = (struct ls_prom_label){ "peer", p[i].name };
		if (c >= 0)
			v = (double)peer_ctr(&p[i], c);
		else if (c == -1 && stale)
			v = 0;		/* no result for too long: not known to be up */
		else if (!p[i].probed)
			continue;
		else
			v = c == -1 ? (double)p[i].up : p[i].last_ts;
		if (ls_prom_sample(pr, NULL, &l, 1, v, err))
			return -1;
	}
	return 0;
}

/* The agent's own families: build info, peers, schedule and reload counters. */
static int agent_families(struct ls_prom *pr, size_t n, const struct ls_agent_stats *st,
			  struct ls_err *err)
{
	struct ls_prom_label l[2];
	char abi[16];

	snprintf(abi, sizeof(abi), "%d", LATSPLIT_ABI_VERSION);
	l[0] = (struct ls_prom_label){ "version", st->version ? st->version : "unknown" };
	l[1] = (struct ls_prom_label){ "abi", abi };
	if (ls_prom_family(pr, "latsplit_agent_build_info", LS_PROM_GAUGE,
			   "The agent's latsplit version and kernel ABI version; always 1.", err) ||
	    ls_prom_sample(pr, NULL, l, 2, 1, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_peers", LS_PROM_GAUGE,
			   "Peers in the agent's peers file (itself excluded).", err) ||
	    ls_prom_sample(pr, NULL, NULL, 0, (double)n, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_skipped_slots_total", LS_PROM_COUNTER,
			   "Schedule slots skipped because --max-sessions sessions (or the target's own) were in flight.",
			   err) ||
	    ls_prom_sample(pr, NULL, NULL, 0, (double)st->skipped, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_responder_restarts_total", LS_PROM_COUNTER,
			   "Responder processes of the agent that ended with a failure and were restarted.",
			   err) ||
	    ls_prom_sample(pr, NULL, NULL, 0, (double)st->responder_restarts, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_breakdown_stale_after_seconds", LS_PROM_GAUGE,
			   "Age past which the agent drops a breakdown's figures: 3 x --breakdown-every rounds of N-1 slots plus --session-timeout (0: no breakdowns).",
			   err) ||
	    ls_prom_sample(pr, NULL, NULL, 0, st->bd_stale_s, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_peers_reloads_total", LS_PROM_COUNTER,
			   "Re-reads of the peers file on SIGHUP, by result (failed: the old list is kept).",
			   err))
		return -1;
	l[0] = (struct ls_prom_label){ "result", "ok" };
	if (ls_prom_sample(pr, NULL, l, 1, (double)(st->reloads - st->reload_failures), err))
		return -1;
	l[0] = (struct ls_prom_label){ "result", "failed" };
	return ls_prom_sample(pr, NULL, l, 1, (double)st->reload_failures, err);
}

/* The probes' families: liveness, one-way summary, last time, counters. */
static int probe_families(struct ls_prom *pr, const struct ls_agent_peer *p, size_t n,
			  const struct ls_agent_stats *st, struct ls_err *err)
{
	struct ls_prom_label l;

	if (per_peer(pr, p, n, st, "latsplit_agent_peer_up", LS_PROM_GAUGE,
		     "1 when the last finished probe or breakdown of the peer measured to the end, 0 when it failed or when the last result is stale; absent before the first.",
		     -1, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_agent_oneway_seconds", LS_PROM_SUMMARY,
			   "One-way RDMA latency to the peer (RTT/2): quantiles of the agent's last session (probe or breakdown) with it, _sum and _count over all its sessions.",
			   err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct ls_summary s;

		if (!p[i].probed || !p[i].up || !p[i].oneway.count ||
		    ls_agent_peer_stale(&p[i], st->now, st->stale_s))
			continue;
		l = (struct ls_prom_label){ "peer", p[i].name };
		s = cumulative(&p[i].oneway, p[i].ow_sum_ns, p[i].ow_count);
		if (ls_prom_summary(pr, &l, 1, &s, err))
			return -1;
	}
	if (per_peer(pr, p, n, st, "latsplit_agent_last_probe_timestamp_seconds", LS_PROM_GAUGE,
		     "When the agent's last probe or breakdown of the peer ended (ok or not), Unix time.",
		     -2, err))
		return -1;
	for (size_t f = 0; f < ARRAY_SIZE(peer_ctrs); f++)
		if (per_peer(pr, p, n, st, peer_ctrs[f].name, LS_PROM_COUNTER, peer_ctrs[f].help,
			     (int)peer_ctrs[f].c, err))
			return -1;
	return per_peer(pr, p, n, st, "latsplit_agent_peer_consecutive_failures", LS_PROM_GAUGE,
			"Sessions with the peer that failed in a row, up to the last one (0: the last measured); busy refusals do not count.",
			CTR_CONSEC, err);
}

/*
 * The last measured breakdowns, as `breakdown --prom` writes them
 * (latsplit_breakdown_*): a failure keeps the last measured figures until
 * they are stale, then (or before the first measured one) breakdown_up 0
 * without figures; the summaries' _sum and _count over all the peer's
 * measured breakdowns; when the last one ended and the last measured one.
 */
static int bd_families(struct ls_prom *pr, const struct ls_agent_peer *p, size_t n,
		       const struct ls_agent_stats *st, struct ls_err *err)
{
	struct ls_prom_label l;
	struct bd_prom_pair *pp;
	size_t k = 0;
	int rc;

	pp = calloc(n ? n : 1, sizeof(*pp));
	if (!pp)
		return ls_errnof(err, ENOMEM, "agent: breakdown records of %zu peers", n);
	for (size_t i = 0; i < n; i++) {
		if (!p[i].have_bd)
			continue;
		pp[k] = p[i].bd;	/* the last measured one: head.ok, or zeroed (none yet) */
		pp[k].ctr = NULL;
		pp[k].nctr = 0;
		if (st->now > 0 && st->bd_stale_s > 0 && st->now - p[i].bd_ok_ts > st->bd_stale_s)
			pp[k].head.ok = false;
		for (int s = 0; pp[k].head.ok && s < 4; s++)
			pp[k].sums[s] = cumulative(&p[i].bd.sums[s], p[i].bd_sum_ns[s],
						   p[i].bd_count[s]);
		snprintf(pp[k].head.peer, sizeof(pp[k].head.peer), "%s", p[i].name);
		k++;
	}
	rc = bd_write_prom(pr, pp, k, err);
	free(pp);
	if (rc)
		return rc;
	if (ls_prom_family(pr, "latsplit_breakdown_last_timestamp_seconds", LS_PROM_GAUGE,
			   "When the agent's last breakdown of the peer ended (measured or not), Unix time.",
			   err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].have_bd)
			continue;
		l = (struct ls_prom_label){ "peer", p[i].name };
		if (ls_prom_sample(pr, NULL, &l, 1, p[i].bd_ts, err))
			return -1;
	}
	if (ls_prom_family(pr, "latsplit_breakdown_last_success_timestamp_seconds", LS_PROM_GAUGE,
			   "When the agent's last measured breakdown of the peer (the one shown) ended, Unix time.",
			   err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].bd_ok_ts)
			continue;
		l = (struct ls_prom_label){ "peer", p[i].name };
		if (ls_prom_sample(pr, NULL, &l, 1, p[i].bd_ok_ts, err))
			return -1;
	}
	return 0;
}

/* Write the /metrics page. */
int ls_agent_render(FILE *fp, const struct ls_agent_peer *p, size_t n,
		    const struct ls_agent_stats *st, struct ls_err *err)
{
	struct ls_prom pr;
	int err_rc;

	ls_prom_open_fp(&pr, fp, false);
	err_rc = agent_families(&pr, n, st, err);
	if (!err_rc)
		err_rc = probe_families(&pr, p, n, st, err);
	if (!err_rc)
		err_rc = bd_families(&pr, p, n, st, err);
	if (err_rc) {
		ls_prom_abort(&pr);
		return -1;
	}
	return ls_prom_commit(&pr, err);
}

/* Render into a malloc'd buffer. */
int ls_agent_render_buf(const struct ls_agent_peer *p, size_t n,
			const struct ls_agent_stats *st, char **buf, size_t *len,
			struct ls_err *err)
{
	FILE *fp;
	int rc;

	*buf = NULL;
	*len = 0;
	fp = open_memstream(buf, len);
	if (!fp)
		return ls_errnof(err, errno, "agent: /metrics buffer");
	rc = ls_agent_render(fp, p, n, st, err);
	if (fclose(fp) && !rc)
		rc = ls_errnof(err, errno, "agent: /metrics buffer");
	if (rc) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return rc;
}
