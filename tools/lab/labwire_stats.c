// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the `stats` reply (JSON) and the histograms' quantiles.
 */
#include "labwire_int.h"

/* Nearest-rank quantile q of h: the midpoint of its bucket, at most max. */
static uint64_t lhist_quantile(const struct lhist *h, double q)
{
	uint64_t rank, cum = 0, lo, width;
	unsigned int b, e;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < HIST_NR; b++) {
		cum += h->b[b];
		if (cum >= rank)
			break;
	}
	if (b < 16)
		return b;
	e = (b - 16) / 8 + 4;
	width = 1ULL << (e - 3);
	lo = (8ULL + (b - 16) % 8) << (e - 3);
	return lo + width / 2 < h->max ? lo + width / 2 : h->max;
}

/* Write a JSON string (quoted, escaped). */
static void json_str(struct sbuf *sb, const char *s)
{
	sb_printf(sb, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_printf(sb, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			sb_printf(sb, "\\u%04x", (unsigned int)(unsigned char)*s);
		else
			sb_printf(sb, "%c", *s);
	}
	sb_printf(sb, "\"");
}

/* Write counters as JSON members (no braces). */
static void json_ctrs(struct sbuf *sb, const struct ctrs *c)
{
	sb_printf(sb, "\"rx_frames\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
		  ",\"tx_frames\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"delayed\":%" PRIu64
		  ",\"lost\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"ce_marked\":%" PRIu64
		  ",\"other\":%" PRIu64 ",\"roce\":%" PRIu64 ",\"max_queued_bytes\":%" PRIu64,
		  c->rx_frames, c->rx_bytes, c->tx_frames, c->tx_bytes, c->delayed,
		  c->lost, c->dropped, c->ce_marked, c->other, c->roce, c->max_queued);
	sb_printf(sb, ",\"flow_tx_frames\":%" PRIu64 ",\"flow_tx_bytes\":%" PRIu64
		  ",\"flow_ce_marked\":%" PRIu64 ",\"flow_dropped\":%" PRIu64,
		  c->flow_frames, c->flow_bytes, c->flow_marked, c->flow_dropped);
	for (unsigned int w = 1; w < NR_WHY; w++)
		sb_printf(sb, ",\"dropped_%s\":%" PRIu64, why_name[w], c->why[w]);
	sb_printf(sb, ",\"sojourn_us_log2\":[");
	for (unsigned int b = 0; b < SOJ_NR; b++)
		sb_printf(sb, "%s%" PRIu64, b ? "," : "", c->soj[b]);
	sb_printf(sb, "]");
}

/* Write a histogram summary as a JSON object. */
static void json_lhist(struct sbuf *sb, const char *name, const struct lhist *h)
{
	sb_printf(sb, ",\"%s\":{\"count\":%" PRIu64 ",\"mean\":%" PRIu64 ",\"p50\":%" PRIu64
		  ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}", name, h->count,
		  h->count ? h->sum / h->count : 0, lhist_quantile(h, 0.5),
		  lhist_quantile(h, 0.99), h->max);
}

/* Write a rule's match fields and actions as command words. */
static void rule_spec(struct sbuf *sb, const struct rule *r)
{
	const char *sep = "";

	if (r->roce >= 0)
		sb_printf(sb, "%sroce=%d", sep, r->roce), sep = " ";
	if (r->op >= 0)
		sb_printf(sb, "%sop=%s", sep, op_name[r->op]), sep = " ";
	if (r->parity >= 0)
		sb_printf(sb, "%spsn=%s", sep, r->parity == 2 ? "hash" : r->parity ? "odd" : "even"),
			sep = " ";
	if (r->dqpn >= 0)
		sb_printf(sb, "%sdqpn=%" PRId64, sep, r->dqpn), sep = " ";
	if (r->dscp >= 0)
		sb_printf(sb, "%sdscp=%" PRId64, sep, r->dscp), sep = " ";
	if (r->dport >= 0)
		sb_printf(sb, "%sdport=%" PRId64, sep, r->dport), sep = " ";
	if (r->every)
		sb_printf(sb, "%severy=%" PRIu64, sep, r->every), sep = " ";
	sb_printf(sb, "%sdelay=%" PRIu64 " jitter=%" PRIu64 " loss=%" PRIu64 " seed=%" PRIu64,
		  sep, r->delay, r->jitter, r->loss, r->seed);
}

/* Write d's rules in force as a JSON array member. */
static void json_rules(struct sbuf *sb, const struct dir *d)
{
	const struct rule *r;
	const char *sep = "";

	sb_printf(sb, ",\"rules\":[");
	for (unsigned int i = 0; i < NR_RULES; i++) {
		r = &d->rules[i];
		if (!r->used)
			continue;
		sb_printf(sb, "%s{\"index\":%u,\"spec\":\"", sep, i);
		rule_spec(sb, r);
		sb_printf(sb, "\",\"delay\":%" PRIu64 ",\"jitter\":%" PRIu64 ",\"loss\":%" PRIu64
			  ",\"seed\":%" PRIu64 ",\"seen\":%" PRIu64 ",\"hits\":%" PRIu64
			  ",\"lost\":%" PRIu64 ",\"delayed\":%" PRIu64 "}", r->delay, r->jitter,
			  r->loss, r->seed, r->seen, r->hits, r->lost, r->delayed);
		sep = ",";
	}
	sb_printf(sb, "]");
}

/* Write one direction's stats as a JSON object. */
static void json_dir(struct sbuf *sb, const struct dir *d)
{
	uint64_t now = mono_ns();

	sb_printf(sb, "{");
	json_ctrs(sb, &d->tot);
	sb_printf(sb, ",\"seq\":%" PRIu64 ",\"inflight\":%" PRIu64 ",\"max_inflight\":%" PRIu64
		  ",\"queued_bytes\":%" PRIu64 ",\"rate_bps\":%" PRIu64, d->seq, d->inflight,
		  d->max_inflight, dir_backlog(d, -1, now), d->rate);
	json_lhist(sb, "wire_latency_ns", &d->wire_lat);
	json_lhist(sb, "delay_error_ns", &d->delay_err);
	sb_printf(sb, ",\"dscp_map\":[");
	for (unsigned int i = 0; i < NR_DSCP; i++)
		sb_printf(sb, "%s%u", i ? "," : "", d->dscp_map[i]);
	sb_printf(sb, "],\"classes\":[");
	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		sb_printf(sb, "%s{\"class\":%u,\"limit\":%" PRIu64 ",\"ecn\":%" PRIu64
			  ",\"queued_bytes\":%" PRIu64 ",", c ? "," : "", c, d->limit[c],
			  d->ecn[c], dir_backlog(d, (int)c, now));
		json_ctrs(sb, &d->cls[c]);
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]");
	json_rules(sb, d);
	flow_json(sb, d);
	sb_printf(sb, "}");
}

/* Reply to `stats`: the whole wire as one JSON line. */
void cmd_stats(struct sbuf *out)
{
	sb_printf(out, "{\"wire\":{\"version\":1,\"now_ns\":%" PRIu64 ",\"sched\":", mono_ns());
	json_str(out, W.sched_desc);
	sb_printf(out, ",\"mlock\":%s,\"spin_ns\":%" PRIu64 ",\"log\":",
		  W.mlocked ? "true" : "false", W.o.spin);
	if (W.log_path)
		json_str(out, W.log_path);
	else
		sb_printf(out, "null");
	sb_printf(out, ",\"log_pending\":%u,\"log_lines\":%" PRIu64
		  ",\"log_forced_flushes\":%" PRIu64 ",\"log_errors\":%" PRIu64 "}",
		  W.rcount, W.log_lines, W.log_forced, W.log_errors);
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		sb_printf(out, ",\"%s\":", dir_name[i]);
		json_dir(out, &W.d[i]);
	}
	sb_printf(out, "}\n");
}
