// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown --json: the document of kind "breakdown"
 * (Documentation/latsplit-breakdown.rst lists its members), and reading
 * an earlier one back as --baseline.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bd.h"
#include "io.h"
#include "json.h"
#include "jsonr.h"

/* The run's QPs and first PSNs: what matches samples to a per-packet log. */
static void json_qp(struct ls_json *j, const struct ls_probe_run *run)
{
	ls_json_obj_open(j, "qp");
	ls_json_u64(j, "qpn", run->qpn);
	ls_json_u64(j, "peer_qpn", run->peer_qpn);
	ls_json_i64(j, "req_psn0", run->req_psn0);
	ls_json_i64(j, "ans_psn0", run->ans_psn0);
	ls_json_u64(j, "packets_per_message", run->pkts);
	ls_json_obj_close(j);
}

/* A distribution: summary members plus, optionally, every value as samples_ns. */
static void json_dist(struct ls_json *j, const char *key, const struct ls_summary *s,
		      const double *v, size_t n)
{
	ls_json_obj_open(j, key);
	ls_json_summary_members(j, s);
	if (v) {
		ls_json_arr_open(j, "samples_ns");
		for (size_t i = 0; i < n; i++)
			ls_json_dbl(j, NULL, v[i]);
		ls_json_arr_close(j);
	}
	ls_json_obj_close(j);
}

/* One host object. */
static void json_host(struct ls_json *j, const char *role, const struct ls_bd_host *h,
		      const struct ls_bd_an *a)
{
	ls_json_obj_open(j, NULL);
	ls_json_str(j, "role", role);
	ls_json_bool(j, "measured", h->measured);
	ls_json_str(j, "backend", h->backend);
	if (!h->measured)
		ls_json_str(j, "unmeasured_why", h->why);
	bd_cpus_json(j, h);
	ls_json_str(j, "ibdev", h->ibdev);
	ls_json_str(j, "netdev", h->netdev);
	ls_json_u64(j, "records", h->records);
	ls_json_u64(j, "records_used", h->nrec);
	ls_json_u64(j, "drops", h->drops);
	ls_json_u64(j, "completions_stale", h->comp_stale);
	ls_json_u64(j, "napi_untimed", h->napi_untimed);
	ls_json_u64(j, "unordered", h->unordered);
	ls_json_bool(j, "truncated", h->truncated);
	ls_json_u64(j, "irqs_unwatched", h->irqs_unwatched);
	if (h->measured)
		bd_obs_json(j, "observer", &h->obs, ls_bd_obs_per_sample(h, a), a->sp.sum_total.p50);
	ls_json_obj_close(j);
}

/* An attribution's (host, cpu, stage) cells as the JSON array key. */
static void json_cells(struct ls_json *j, const char *key, const struct ls_bd_an *a,
		       const struct ls_attr *at)
{
	ls_json_arr_open(j, key);
	for (int h = 0; h < 2 && at; h++) {
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = ls_bd_cell(at, h, cpu, st);

				if (!cell->total_ns)
					continue;
				ls_json_obj_open(j, NULL);
				ls_json_str(j, "host", bd_host_names[h]);
				ls_json_u64(j, "cpu", cpu);
				ls_json_str(j, "stage", ls_stage_name(st));
				ls_json_u64(j, "window_total_ns", cell->total_ns);
				ls_json_dbl(j, "mean_ns", (double)cell->total_ns / a->n / a->div);
				ls_json_dbl(j, "tail_mean_ns", a->tail_n ?
					    (double)cell->tail_ns / a->tail_n / a->div : 0);
				ls_json_u64(j, "samples", cell->windows);
				ls_json_dbl(j, "max_one_way_ns", (double)cell->max_ns / a->div);
				ls_json_obj_close(j);
			}
		}
	}
	ls_json_arr_close(j);
}

/* The run's inputs: peer, device, probe, options and thresholds. */
static void json_inputs(struct ls_json *j, const struct ls_bd_an *a,
			const struct ls_probe_result *r, const struct bd_cli *c)
{
	ls_json_obj_open(j, "inputs");
	ls_json_str(j, "peer", r->peer);
	ls_json_str(j, "ibdev", r->dev.name);
	ls_json_u64(j, "ib_port", r->dev.port);
	ls_json_str(j, "gid", r->dev.gid);
	ls_json_str(j, "netdev", r->dev.netdev);
	ls_json_u64(j, "size", r->runs[0].size);
	ls_json_str(j, "verb", ls_probe_verb_name(r->verb));
	ls_json_bool(j, "events", r->events);
	ls_json_u64(j, "mtu", r->mtu);
	json_qp(j, &r->runs[0]);
	ls_json_u64(j, "iters", c->o.iters);
	ls_json_u64(j, "duration_ns", c->o.duration_ns);
	ls_json_i64(j, "cpu", c->o.cpu);
	ls_json_str(j, "backend", c->backend);
	ls_json_str(j, "clock", r->clock ? r->clock : "CLOCK_MONOTONIC");
	ls_json_str(j, "one_way", a->div == 2 ? "rtt/2" : "rtt");
	ls_json_bool(j, "hw_timestamps", r->dev.hwclock != LS_HWCLOCK_NONE);
	ls_json_dbl(j, "floor_quantile", c->floor_q);
	ls_json_dbl(j, "tail_fraction", c->tail_frac);
	if (c->baseline)
		ls_json_str(j, "baseline", c->baseline);
	ls_json_obj_open(j, "thresholds");
	ls_json_threshold_members(j, &c->thr);
	ls_json_dbl(j, "size_offset_ns", a->thr.offset_ns);
	ls_json_dbl(j, "share", c->thr.share);
	if (c->expect_gbps > 0)
		ls_json_dbl(j, "expect_gbps", c->expect_gbps);
	ls_json_obj_close(j);
	ls_json_obj_close(j);
}

/* The transmission model's inputs and figures. */
static void json_wire(struct ls_json *j, const struct ls_bd_an *a)
{
	ls_json_obj_open(j, "transmission_model");
	ls_json_str(j, "verb", ls_wire_verb_name(a->wcfg.verb));
	ls_json_str(j, "ip", a->wcfg.ipv6 ? "ipv6" : "ipv4");
	ls_json_u64(j, "mtu", a->wcfg.mtu);
	ls_json_dbl(j, "link_gbps", a->wcfg.link_gbps);
	ls_json_str(j, "link_source", a->rate_text);
	ls_json_dbl(j, "cable_m", a->wcfg.cable_m);
	ls_json_u64(j, "hops", a->wcfg.hops);
	ls_json_str(j, "switch", ls_wire_switch_name(a->wcfg.sw));
	ls_json_u64(j, "packets", a->wire.packets);
	ls_json_u64(j, "wire_bytes", a->wire.wire_bytes);
	ls_json_u64(j, "header_bytes", a->wire.header_bytes);
	ls_json_dbl(j, "serialize_ns", a->wire.serialize_ns);
	ls_json_dbl(j, "propagate_ns", a->wire.propagate_ns);
	ls_json_dbl(j, "switch_ns", a->wire.switch_ns);
	ls_json_dbl(j, "total_ns", a->wire.total_ns);
	ls_json_dbl(j, "payload_only_ns", a->wire.payload_only_ns);
	ls_json_obj_close(j);
}

/* The split: floor, the parts' distributions and the tail. */
static void json_split(struct ls_json *j, const struct ls_bd_an *a, const struct bd_cli *c,
		       const struct ls_bd_base *base)
{
	const struct ls_split_out *sp = &a->sp;

	ls_json_obj_open(j, "floor");
	ls_json_dbl(j, "ns", sp->floor_ns);
	ls_json_dbl(j, "residual_p50_ns", sp->residual_p50_ns);
	ls_json_str(j, "source", base->have ? "baseline" : "inferred");
	ls_json_dbl(j, "quantile", c->floor_q);
	ls_json_str(j, "assumption", bd_floor_assumption);
	ls_json_obj_close(j);
	ls_json_u64(j, "clamped", sp->clamped);
	ls_json_u64(j, "preempt_slack_ns", c->preempt_slack_ns);
	ls_json_u64(j, "preempt_ignored", a->preempt_dropped);

	json_dist(j, "total", &sp->sum_total, a->total, a->n);
	ls_json_obj_open(j, "parts");
	json_dist(j, "transmission", &sp->sum_part[LS_PART_TRANSMISSION],
		  sp->part[LS_PART_TRANSMISSION], a->n);
	json_dist(j, "queuing", &sp->sum_part[LS_PART_QUEUING], sp->part[LS_PART_QUEUING], a->n);
	json_dist(j, "processing", &sp->sum_part[LS_PART_PROCESSING],
		  sp->part[LS_PART_PROCESSING], a->n);
	json_dist(j, "kernel", &sp->sum_kernel, NULL, 0);
	json_dist(j, "base", &sp->sum_base, NULL, 0);
	ls_json_obj_close(j);

	ls_json_obj_open(j, "tail");
	ls_json_dbl(j, "fraction", c->tail_frac);
	ls_json_u64(j, "count", sp->tail_n);
	ls_json_dbl(j, "threshold_ns", sp->tail_threshold_ns);
	ls_json_dbl(j, "excess_mean_ns", sp->tail_excess_ns);
	ls_json_obj_open(j, "shares");
	for (int p = 0; p < LS_NR_PARTS; p++)
		ls_json_dbl(j, ls_part_name(p), sp->tail_share[p]);
	ls_json_obj_close(j);
	ls_json_obj_close(j);
}

/* The attribution's reliability and each measured host's packet matching. */
static void json_attribution(struct ls_json *j, const struct ls_bd_an *a)
{
	const struct ls_split_out *sp = &a->sp;

	ls_json_obj_open(j, "attribution");
	ls_json_str(j, "rule", "causal");
	ls_json_u64(j, "clamped", sp->clamped);
	ls_json_dbl(j, "clamped_fraction", a->n ? (double)sp->clamped / a->n : 0);
	ls_json_bool(j, "reliable", !ls_bd_unreliable(a));
	ls_json_arr_open(j, "hosts");
	for (int h = 0; h < 2; h++) {
		if (!a->host_measured[h])
			continue;
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "role", bd_host_names[h]);
		ls_json_u64(j, "rx_packets", a->rx[h].packets);
		ls_json_u64(j, "probe_packets", a->rx[h].matched);
		ls_json_u64(j, "samples_matched", a->rx[h].samples);
		ls_json_u64(j, "samples", a->rx[h].n);
		ls_json_u64(j, "samples_delivered", a->rx[h].delivered);
		ls_json_u64(j, "samples_sent", a->rx[h].sent);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	ls_json_obj_close(j);
}

/* Every counter of both hosts, moved or not, and the unreadable ones. */
static void json_counters(struct ls_json *j, const struct ls_bd_host *const hosts[2])
{
	const struct ls_ctr_delta *d;
	size_t i;
	int h;

	ls_json_arr_open(j, "counters");
	ls_bd_for_each_ctr(hosts, h, i, d) {
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "host", bd_host_names[h]);
		ls_json_str(j, "name", d->name);
		ls_json_str(j, "class", ls_ctr_class_name(d->cls));
		ls_json_bool(j, "ok", d->ok);
		if (d->ok) {
			ls_json_bool(j, "gauge", d->gauge);
			ls_json_u64(j, "before", d->before);
			ls_json_u64(j, "after", d->after);
			ls_json_i64(j, "delta", d->delta);
			ls_json_bool(j, "moved", ls_ctr_moved(d));
		} else {
			ls_json_str(j, "error", d->error);
		}
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
}

/* The verdict: levels, dominant parts, findings, the CPU to look at, the next layer. */
static void json_verdict(struct ls_json *j, const struct ls_bd_an *a,
			 const struct ls_bd_host *const hosts[2])
{
	const struct ls_verdict *v = &a->v;
	char losses[512];
	bool lossy = ls_bd_losses(hosts, losses, sizeof(losses));

	ls_json_obj_open(j, "verdict");
	ls_json_bool(j, "withheld", ls_bd_unreliable(a));
	/* complete: no kernel backend lost records or IRQs (else losses says what) */
	ls_json_bool(j, "complete", !lossy);
	if (lossy)
		ls_json_str(j, "losses", losses);
	else
		ls_json_null(j, "losses");
	ls_json_str(j, "level_p50", ls_level_name(v->level_p50));
	ls_json_str(j, "level_p99", ls_level_name(v->level_p99));
	ls_json_str(j, "dominant_p50", ls_part_name(v->dom_p50));
	ls_json_bool(j, "dominant_p50_is_base", v->dom_p50_base);
	ls_json_str(j, "dominant_tail", ls_part_name(v->dom_tail));
	if (!isnan(v->waits_excess_share)) {
		ls_json_dbl(j, "waits_excess_share", v->waits_excess_share);
		ls_json_dbl(j, "work_excess_share", v->work_excess_share);
	} else {
		ls_json_null(j, "waits_excess_share");
		ls_json_null(j, "work_excess_share");
	}
	ls_json_arr_open(j, "findings");
	for (unsigned int i = 0; i < v->nf; i++) {
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "layer", ls_layer_name(v->f[i].layer));
		ls_json_str(j, "text", v->f[i].text);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	if (v->cpu >= 0) {
		ls_json_obj_open(j, "cpu");
		ls_json_str(j, "host", bd_host_names[v->cpu_host & 1]);
		ls_json_u64(j, "cpu", v->cpu);
		ls_json_str(j, "stage", ls_stage_name(v->cpu_stage));
		ls_json_obj_close(j);
	} else {
		ls_json_null(j, "cpu");
	}
	ls_json_str(j, "next_layer", ls_layer_name(v->next));
	ls_json_str(j, "next_why", v->next_why);
	ls_json_obj_close(j);
}

/* The JSON document (kind "breakdown"). */
void bd_print_json(FILE *fp, const struct ls_bd_an *a, const struct ls_probe_result *r,
		   const struct bd_cli *c, const struct ls_bd_host *local,
		   const struct ls_bd_host *peer, const struct ls_bd_base *base)
{
	const struct ls_bd_host *const hosts[2] = { local, peer };
	struct ls_json j;

	ls_json_doc_open(&j, fp, false, "breakdown");
	/* When the probe ran (CLOCK_MONOTONIC of this host). */
	ls_json_obj_open(&j, "run");
	ls_json_u64(&j, "begin_ns", r->runs[0].begin_ns);
	ls_json_u64(&j, "finish_ns", r->runs[0].finish_ns);
	ls_json_obj_close(&j);
	json_inputs(&j, a, r, c);
	json_wire(&j, a);
	ls_json_arr_open(&j, "hosts");
	json_host(&j, "prober", local, a);
	if (peer)
		json_host(&j, "responder", peer, a);
	ls_json_arr_close(&j);
	if (a->have_theta) {
		ls_json_i64(&j, "responder_clock_offset_ns", a->theta_ns);
		ls_json_str(&j, "responder_clock_offset_from",
			    a->theta_src == LS_BD_THETA_PACKETS ? "packets" : "stamps");
	}
	json_split(&j, a, c, base);
	json_cells(&j, "stages", a, a->attr_ok ? &a->attr : NULL);
	json_cells(&j, "concurrent", a, a->conc_ok ? &a->conc : NULL);
	json_attribution(&j, a);
	json_counters(&j, hosts);
	json_verdict(&j, a, hosts);
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* Load a baseline: an earlier breakdown --json file, read here and checked by the core. */
int ls_bd_load_baseline(const char *path, uint32_t size, enum ls_probe_verb verb,
			struct ls_bd_base *b, struct ls_err *err)
{
	struct ls_jdoc doc;
	int ret;

	memset(b, 0, sizeof(*b));
	if (ls_jr_parse_file(&doc, path, NULL, err))
		return ls_err_wrap(err, "--baseline");
	ret = ls_bd_parse_baseline(&doc, path, size, verb, b, err);
	ls_jr_free(&doc);
	return ret;
}
