// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown, the responder -> prober protocol (breakdown.h): the
 * header JSON object both ways, and the probe's finish hook that ships it
 * with the responder's kernel records.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd.h"
#include "json.h"
#include "jsonr.h"

/*
 * The observer's cost as JSON object key (the peer header and --json share
 * it); --json adds the one-way handler time per sample and its share of
 * the p50 (per_ns NAN: left out).
 */
void bd_obs_json(struct ls_json *j, const char *key, const struct ls_bd_obs *o,
		 double per_ns, double p50_ns)
{
	ls_json_obj_open(j, key);
	if (o->ok && !isnan(per_ns)) {
		ls_json_dbl(j, "oneway_per_sample_ns", per_ns);
		ls_json_dbl(j, "share_of_p50", p50_ns > 0 ? per_ns / p50_ns : 0);
	}
	ls_json_bool(j, "ok", o->ok);
	if (!o->ok)
		ls_json_str(j, "why", o->why);
	/* hits and ns: the relevant CPUs', or every CPU's without a split */
	ls_json_str(j, "scope", o->all_cpus ? "all_cpus" : "relevant_cpus");
	ls_json_u64(j, "run_ns", o->run_ns);
	ls_json_u64(j, "hits", o->hits);
	ls_json_u64(j, "ns", o->ns);
	ls_json_u64(j, "all_cpus_hits", o->all_hits);
	ls_json_u64(j, "all_cpus_ns", o->all_ns);
	ls_json_arr_open(j, "handlers");
	for (unsigned int k = 0; k < LS_NR_HANDLERS; k++) {
		if (!o->h_hits[k])
			continue;
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "name", ls_handler_name(k));
		ls_json_u64(j, "hits", o->h_hits[k]);
		ls_json_u64(j, "ns", o->h_ns[k]);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	ls_json_bool(j, "drain_ok", o->drain_ok);
	ls_json_u64(j, "drain_cpu_ns", o->drain_cpu_ns);
	ls_json_obj_close(j);
}

/* A host's CPUs, probe CPU and IRQs as members (the peer header and --json share them). */
void bd_cpus_json(struct ls_json *j, const struct ls_bd_host *h)
{
	char cpus[256];

	ls_format_cpulist(h->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	ls_json_str(j, "cpus", cpus);
	ls_json_i64(j, "probe_cpu", h->probe_cpu);
	ls_json_arr_open(j, "irqs");
	for (unsigned int i = 0; i < h->nr_irqs; i++)
		ls_json_u64(j, NULL, h->irqs[i]);
	ls_json_arr_close(j);
}

/* Write h's header as the peer JSON object (see breakdown.h). */
void ls_bd_peer_write(FILE *fp, const struct ls_bd_host *h, unsigned int proto)
{
	struct ls_json j;

	ls_json_doc_open(&j, fp, false, "breakdown-peer");
	ls_json_u64(&j, "proto", proto);
	ls_json_bool(&j, "measured", h->measured);
	ls_json_str(&j, "backend", h->backend);
	ls_json_str(&j, "why", h->why);
	bd_cpus_json(&j, h);
	ls_json_u64(&j, "records", h->records);
	ls_json_u64(&j, "drops", h->drops);
	ls_json_u64(&j, "completions_stale", h->comp_stale);
	ls_json_u64(&j, "napi_untimed", h->napi_untimed);
	ls_json_u64(&j, "unordered", h->unordered);
	ls_json_bool(&j, "truncated", h->truncated);
	ls_json_u64(&j, "irqs_unwatched", h->irqs_unwatched);
	ls_json_u64(&j, "shipped", h->nrec);
	ls_json_str(&j, "ibdev", h->ibdev);
	ls_json_str(&j, "netdev", h->netdev);
	ls_json_str(&j, "rate", h->rate);
	ls_json_dbl(&j, "link_gbps", h->link_gbps);
	bd_obs_json(&j, "observer", &h->obs, NAN, 0);
	ls_json_arr_open(&j, "counters");
	for (size_t i = 0; i < h->ctr.n; i++) {
		const struct ls_ctr_delta *d = &h->ctr.v[i];

		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "name", d->name);
		ls_json_bool(&j, "ok", d->ok);
		ls_json_bool(&j, "gauge", d->gauge);
		ls_json_u64(&j, "before", d->before);
		ls_json_u64(&j, "after", d->after);
		ls_json_str(&j, "error", d->error);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* The observer object of a peer header (absent: not measured, with why). */
static void obs_parse(const struct ls_jv *root, struct ls_bd_obs *o)
{
	const struct ls_jv *v = ls_jv_get(root, "observer"), *a;
	char scope[32] = "";

	memset(o, 0, sizeof(*o));
	if (!v || v->type != LS_JOBJ) {
		snprintf(o->why, sizeof(o->why), "the responder sent no observer figures");
		return;
	}
	ls_jv_bool(v, "ok", &o->ok);
	if (!o->ok && !ls_jv_str(v, "why", o->why, sizeof(o->why)))
		snprintf(o->why, sizeof(o->why), "the responder could not measure it");
	o->all_cpus = ls_jv_str(v, "scope", scope, sizeof(scope)) && !strcmp(scope, "all_cpus");
	ls_jv_u64(v, "run_ns", &o->run_ns);
	ls_jv_u64(v, "hits", &o->hits);
	ls_jv_u64(v, "ns", &o->ns);
	ls_jv_u64(v, "all_cpus_hits", &o->all_hits);
	ls_jv_u64(v, "all_cpus_ns", &o->all_ns);
	a = ls_jv_get(v, "handlers");
	for (size_t i = 0; a && a->type == LS_JARR && i < a->arr.n; i++) {
		const struct ls_jv *e = &a->arr.v[i], *n = ls_jv_get(e, "name");

		for (unsigned int k = 0; n && n->type == LS_JSTR && k < LS_NR_HANDLERS; k++) {
			if (strcmp(n->str.s, ls_handler_name(k)))
				continue;
			ls_jv_u64(e, "hits", &o->h_hits[k]);
			ls_jv_u64(e, "ns", &o->h_ns[k]);
		}
	}
	ls_jv_bool(v, "drain_ok", &o->drain_ok);
	ls_jv_u64(v, "drain_cpu_ns", &o->drain_cpu_ns);
}

/* Free a host's records and counter deltas. */
void ls_bd_host_free(struct ls_bd_host *h)
{
	free(h->rec);
	h->rec = NULL;
	h->nrec = 0;
	ls_ctr_diff_free(&h->ctr);
}

/* The largest count a peer's double carries exactly (2^53). */
#define LS_BD_COUNT_MAX		9007199254740992.0

/* True when d is a whole number in [lo, hi] (NaN and infinities are not). */
static bool whole_in(double d, double lo, double hi)
{
	return d >= lo && d <= hi && d == floor(d);
}

/* A count member: absent leaves *out; present must be a whole number in [0, max]. */
static int peer_count(const struct ls_jv *o, const char *key, double max, uint64_t *out,
		      struct ls_err *err)
{
	double d;

	if (!ls_jv_num(o, key, &d))
		return 0;
	if (!whole_in(d, 0, max))
		return ls_errf(err, "responder header: %s %g is not a count", key, d);
	*out = (uint64_t)d;
	return 0;
}

/* The header's IRQ list: whole numbers that fit an IRQ number. */
static int peer_irqs(const struct ls_jv *root, struct ls_bd_host *h, struct ls_err *err)
{
	const struct ls_jv *a = ls_jv_get(root, "irqs");

	if (!a || a->type != LS_JARR)
		return 0;
	for (size_t i = 0; i < a->arr.n && h->nr_irqs < LS_MAX_IRQS; i++) {
		const struct ls_jv *v = &a->arr.v[i];

		if (v->type != LS_JNUM)
			continue;
		if (!whole_in(v->num, 0, UINT32_MAX))
			return ls_errf(err, "responder header: irq %g is not an IRQ number", v->num);
		h->irqs[h->nr_irqs++] = (uint32_t)v->num;
	}
	return 0;
}

/* The header's counter deltas; names and errors made printable. */
static int peer_counters(const struct ls_jv *root, struct ls_bd_host *h,
			 struct ls_err *err)
{
	const struct ls_jv *a = ls_jv_get(root, "counters");

	if (!a || a->type != LS_JARR || !a->arr.n)
		return 0;
	h->ctr.v = calloc(a->arr.n, sizeof(*h->ctr.v));
	if (!h->ctr.v)
		return ls_errnof(err, ENOMEM, "responder counters");
	for (size_t i = 0; i < a->arr.n; i++) {
		const struct ls_jv *o = &a->arr.v[i];
		struct ls_ctr_delta *c = &h->ctr.v[h->ctr.n];

		if (o->type != LS_JOBJ || !ls_jv_str(o, "name", c->name, sizeof(c->name)))
			continue;
		ls_str_printable(c->name);
		ls_jv_bool(o, "ok", &c->ok);
		ls_jv_bool(o, "gauge", &c->gauge);
		if (peer_count(o, "before", LS_BD_COUNT_MAX, &c->before, err) ||
		    peer_count(o, "after", LS_BD_COUNT_MAX, &c->after, err))
			return ls_err_wrap(err, "counter %s", c->name);
		ls_jv_str(o, "error", c->error, sizeof(c->error));
		ls_str_printable(c->error);
		c->delta = (int64_t)(c->after - c->before);
		c->cls = ls_ctr_classify(c->name);
		if (!c->ok)
			h->ctr.unreadable++;
		h->ctr.n++;
	}
	return 0;
}

/*
 * Parse a peer header; another proto or kind is a clear error. The peer is
 * not trusted: numbers are range-checked before conversion, and strings are
 * made printable (a peer's text never reaches a terminal as escapes).
 */
int ls_bd_peer_parse(const char *text, size_t len, struct ls_bd_host *h,
		     struct ls_err *err)
{
	const struct ls_jv *root;
	struct ls_jdoc doc;
	char kind[64], cpus[256];
	uint64_t unwatched = 0;
	double d, proto;
	int ret = -1;

	memset(h, 0, sizeof(*h));
	if (ls_jr_parse(&doc, "responder header", text, len, NULL, err))
		return -1;
	root = &doc.root;
	if (root->type != LS_JOBJ) {
		ls_errf(err, "responder header: not a JSON object");
		goto out;
	}
	if (!ls_jv_str(root, "kind", kind, sizeof(kind)) || strcmp(kind, "breakdown-peer")) {
		ls_errcf(err, LS_E_PEER_PROTO, "responder header: kind is not \"breakdown-peer\": is the peer running `latsplit breakdown`?");
		goto out;
	}
	if (!ls_jv_num(root, "proto", &proto) || proto != LS_BD_PROTO ||
	    !ls_jv_num(root, "schema", &d) || d != LS_JSON_SCHEMA) {
		ls_errcf(err, LS_E_PEER_PROTO, "the responder speaks breakdown protocol %g (JSON schema %g), this latsplit speaks protocol %d (schema %d): run the same latsplit version on both hosts",
			 ls_jv_num(root, "proto", &proto) ? proto : -1.0,
			 ls_jv_num(root, "schema", &d) ? d : -1.0, LS_BD_PROTO, LS_JSON_SCHEMA);
		goto out;
	}
	if (!ls_jv_bool(root, "measured", &h->measured) ||
	    !ls_jv_str(root, "backend", h->backend, sizeof(h->backend)) ||
	    !ls_jv_str(root, "why", h->why, sizeof(h->why)) ||
	    !ls_jv_str(root, "cpus", cpus, sizeof(cpus)) ||
	    !ls_jv_num(root, "probe_cpu", &d)) {
		ls_errf(err, "responder header: a required member (measured, backend, why, cpus, probe_cpu) is missing or mistyped");
		goto out;
	}
	if (!whole_in(d, -1, LS_MAX_CPUS - 1)) {
		ls_errf(err, "responder header: probe_cpu %g is not a CPU number (-1 to %d)",
			d, LS_MAX_CPUS - 1);
		goto out;
	}
	h->probe_cpu = (int)d;
	if (cpus[0] && ls_parse_cpulist(cpus, h->cpumask, LS_MAX_CPUS, err)) {
		ls_err_wrap(err, "responder header: cpus");
		goto out;
	}
	if (peer_irqs(root, h, err) ||
	    peer_count(root, "records", LS_BD_COUNT_MAX, &h->records, err) ||
	    peer_count(root, "drops", LS_BD_COUNT_MAX, &h->drops, err) ||
	    peer_count(root, "completions_stale", LS_BD_COUNT_MAX, &h->comp_stale, err) ||
	    peer_count(root, "napi_untimed", LS_BD_COUNT_MAX, &h->napi_untimed, err) ||
	    peer_count(root, "unordered", LS_BD_COUNT_MAX, &h->unordered, err) ||
	    peer_count(root, "irqs_unwatched", UINT32_MAX, &unwatched, err))
		goto out;
	ls_jv_bool(root, "truncated", &h->truncated);
	h->irqs_unwatched = (unsigned int)unwatched;
	ls_jv_str(root, "ibdev", h->ibdev, sizeof(h->ibdev));
	ls_jv_str(root, "netdev", h->netdev, sizeof(h->netdev));
	ls_jv_str(root, "rate", h->rate, sizeof(h->rate));
	if (ls_jv_num(root, "link_gbps", &h->link_gbps) &&
	    !(h->link_gbps >= 0 && h->link_gbps <= 1e6)) {
		ls_errf(err, "responder header: link_gbps %g is not a link rate", h->link_gbps);
		goto out;
	}
	obs_parse(root, &h->obs);
	if (peer_counters(root, h, err)) {
		ls_err_wrap(err, "responder header");
		goto out;
	}
	ls_str_printable(h->backend);
	ls_str_printable(h->why);
	ls_str_printable(h->ibdev);
	ls_str_printable(h->netdev);
	ls_str_printable(h->rate);
	ls_str_printable(h->obs.why);
	ret = 0;
out:
	if (ret)
		ls_bd_host_free(h);
	ls_jr_free(&doc);
	return ret;
}

/* Probe finish hook: the responder ships its header and records; the prober receives them. */
int bd_on_finish(void *arg, struct ls_oob *oob, bool is_prober, struct ls_err *err)
{
	struct bd_ctx *x = arg;
	uint64_t tmo = x->c->o.wait_timeout_ns;
	char *text = NULL;
	size_t len = 0;
	void *data = NULL;
	FILE *mem;
	int ret;

	if (is_prober) {
		if (ls_oob_recv_blob(oob, LS_BD_TAG_HDR, &data, &len, LS_BD_HDR_MAX, tmo, err))
			return ls_err_wrap(err, "breakdown data from the responder (is it `latsplit breakdown` of the same version?)");
		ret = ls_bd_peer_parse(data, len, &x->peer, err);
		free(data);
		if (ret)
			return -1;
		data = NULL;
		if (ls_oob_recv_blob(oob, LS_BD_TAG_REC, &data, &len, LS_OOB_MAX_PAYLOAD, tmo, err))
			return ls_err_wrap(err, "responder's kernel records");
		if (len % sizeof(struct ls_record)) {
			free(data);
			return ls_errf(err, "responder's kernel records: %zu bytes is not a whole number of %zu-byte records",
				       len, sizeof(struct ls_record));
		}
		x->peer.rec = data;
		x->peer.nrec = len / sizeof(struct ls_record);
		x->have_peer = true;
		return 0;
	}
	/* responder */
	if (x->res) {
		snprintf(x->local.rate, sizeof(x->local.rate), "%s", x->res->dev.rate);
		x->local.link_gbps = x->res->dev.link_gbps;
	}
	bd_stop(x);
	bd_counters(x);
	bd_filter_records(&x->local, x->run_begin > BD_SLACK_NS ? x->run_begin - BD_SLACK_NS : 0,
		       x->run_end + BD_SLACK_NS);
	mem = open_memstream(&text, &len);
	if (!mem)
		return ls_errnof(err, errno, "open_memstream");
	ls_bd_peer_write(mem, &x->local, LS_BD_PROTO);
	if (fclose(mem)) {
		free(text);
		return ls_errnof(err, errno, "responder header");
	}
	ret = ls_oob_send_blob(oob, LS_BD_TAG_HDR, text, len, tmo, err);
	free(text);
	if (ret)
		return ls_err_wrap(err, "sending the breakdown header");
	if (ls_oob_send_blob(oob, LS_BD_TAG_REC, x->local.rec,
			     x->local.nrec * sizeof(struct ls_record), tmo, err))
		return ls_err_wrap(err, "sending %zu kernel records", x->local.nrec);
	return 0;
}
