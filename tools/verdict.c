// SPDX-License-Identifier: GPL-2.0
/* The verdict: level against the seed's thresholds, dominant parts, findings, next layer. */
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const host_names[] = { "prober", "responder" };

/* The seed's defaults. */
void ls_thresholds_default(struct ls_thresholds *t)
{
	t->normal_lo_ns = 1500;
	t->normal_hi_ns = 3000;
	t->abnormal_ns = 5000;
	t->hurts_ns = 10000;
	t->offset_ns = 0;
	t->share = 0.2;
}

/* Validate the thresholds. */
int ls_thresholds_check(const struct ls_thresholds *t, struct ls_err *err)
{
	if (!(t->normal_lo_ns > 0) || !(t->normal_hi_ns >= t->normal_lo_ns) ||
	    !(t->abnormal_ns >= t->normal_hi_ns) || !(t->hurts_ns >= t->abnormal_ns) ||
	    !isfinite(t->hurts_ns))
		return ls_errf(err, "thresholds must satisfy 0 < normal low (%g us) <= normal high (%g us) <= abnormal (%g us) <= hurts (%g us)",
			       t->normal_lo_ns / 1e3, t->normal_hi_ns / 1e3,
			       t->abnormal_ns / 1e3, t->hurts_ns / 1e3);
	if (!(t->share > 0 && t->share < 1))
		return ls_errf(err, "share %g must be in (0, 1)", t->share);
	return 0;
}

/* Parse "LO-HI" (microseconds) into ns. */
int ls_parse_range_us(const char *s, double *lo_ns, double *hi_ns, struct ls_err *err)
{
	char buf[64], *dash;
	double lo, hi;

	if (!s || strlen(s) >= sizeof(buf))
		return ls_errf(err, "normal range '%s': expected LO-HI in microseconds", s ? s : "");
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash || dash == buf)
		return ls_errf(err, "normal range '%s': expected LO-HI in microseconds", s);
	*dash = '\0';
	if (ls_parse_double(buf, 1e-6, 1e9, &lo, err, "low end") ||
	    ls_parse_double(dash + 1, 1e-6, 1e9, &hi, err, "high end"))
		return ls_err_wrap(err, "normal range '%s'", s);
	if (hi < lo)
		return ls_errf(err, "normal range '%s': high end below low end", s);
	*lo_ns = lo * 1e3;
	*hi_ns = hi * 1e3;
	return 0;
}

/* Level of a latency against the thresholds (shifted by offset_ns). */
enum ls_level ls_level_of(const struct ls_thresholds *t, double ns)
{
	ns -= t->offset_ns;
	if (ns > t->hurts_ns)
		return LS_LEVEL_HURTS;
	if (ns > t->abnormal_ns)
		return LS_LEVEL_ABNORMAL;
	if (ns > t->normal_hi_ns)
		return LS_LEVEL_ELEVATED;
	if (ns >= t->normal_lo_ns)
		return LS_LEVEL_NORMAL;
	return LS_LEVEL_FAST;
}

/* Name of a level. */
const char *ls_level_name(enum ls_level l)
{
	switch (l) {
	case LS_LEVEL_FAST:	return "below normal range";
	case LS_LEVEL_NORMAL:	return "normal";
	case LS_LEVEL_ELEVATED:	return "elevated";
	case LS_LEVEL_ABNORMAL:	return "abnormal";
	case LS_LEVEL_HURTS:	return "hurts training";
	}
	return "?";
}

/* Name of a layer. */
const char *ls_layer_name(enum ls_layer l)
{
	switch (l) {
	case LS_LAYER_NONE:	return "none";
	case LS_LAYER_LINK:	return "link rate/width";
	case LS_LAYER_QUEUES:	return "PFC/queues";
	case LS_LAYER_RDMA:	return "RDMA path";
	case LS_LAYER_CPU:	return "CPU/IRQ affinity";
	}
	return "?";
}

/* Append a finding (silently capped). */
static struct ls_finding *add(struct ls_verdict *v, enum ls_layer layer)
{
	struct ls_finding *f;

	if (v->nf == LS_VD_MAX_FINDINGS)
		return NULL;
	f = &v->f[v->nf++];
	f->layer = layer;
	f->text[0] = '\0';
	return f;
}

/* List the moved counters of the given classes into buf; returns how many. */
static unsigned int list_ctrs(const struct ls_vd_in *in, uint32_t classes,
			      char *buf, size_t len)
{
	unsigned int k = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < in->nctrs; i++) {
		const struct ls_vd_ctr *c = &in->ctrs[i];

		if (!(classes & (1u << c->cls)))
			continue;
		if (k < 6 && off < len) {
			if (c->gauge)
				off += snprintf(buf + off, len - off, "%s%s %s=%llu",
						k ? ", " : "", host_names[c->host & 1],
						c->name, (unsigned long long)c->after);
			else
				off += snprintf(buf + off, len - off, "%s%s %s %+lld",
						k ? ", " : "", host_names[c->host & 1],
						c->name, (long long)c->delta);
		}
		k++;
	}
	if (k > 6 && off < len)
		snprintf(buf + off, len - off, " and %u more", k - 6);
	return k;
}

/* Did part p grow enough over the baseline (or is it big enough) to be a finding? */
static bool part_finding(const struct ls_thresholds *t, const struct ls_vd_in *in,
			 double now, double before, char *how, size_t len)
{
	if (in->have_baseline) {
		double d = now - before, dt = in->total_p50 - in->b_total_p50;

		if (d >= t->share * in->b_total_p50 && d >= 0.5 * dt) {
			snprintf(how, len, "p50 rose by %.2f us over the baseline (%.0f%% of the total's growth of %.2f us)",
				 d / 1e3, dt > 0 ? 100 * d / dt : 100.0, dt / 1e3);
			return true;
		}
		return false;
	}
	if (now >= t->share * in->total_p50) {
		snprintf(how, len, "p50 %.2f us is %.0f%% of the total p50 %.2f us",
			 now / 1e3, 100 * now / in->total_p50, in->total_p50 / 1e3);
		return true;
	}
	return false;
}

/* Decide the verdict. */
void ls_verdict_decide(const struct ls_thresholds *t, const struct ls_vd_in *in,
		       struct ls_verdict *v)
{
	char how[200], list[300];
	struct ls_finding *f;
	double best;

	memset(v, 0, sizeof(*v));
	v->cpu_host = v->cpu = -1;
	v->level_p50 = ls_level_of(t, in->total_p50);
	v->level_p99 = ls_level_of(t, in->total_p99);
	v->dom_p50 = LS_PART_TRANSMISSION;
	for (int p = 1; p < LS_NR_PARTS; p++) {
		if (in->part_p50[p] > in->part_p50[v->dom_p50])
			v->dom_p50 = p;
	}
	v->dom_p50_base = v->dom_p50 == LS_PART_PROCESSING && in->base_p50 > in->kernel_p50;
	v->dom_tail = v->dom_p50;
	best = 0;
	for (int p = 0; p < LS_NR_PARTS; p++) {
		if (in->tail_share[p] > best) {
			best = in->tail_share[p];
			v->dom_tail = p;
		}
	}

	/* 1. link rate / width */
	if (in->expect_gbps > 0 && in->rate_gbps < in->expect_gbps * 0.999 &&
	    (f = add(v, LS_LAYER_LINK)))
		snprintf(f->text, sizeof(f->text),
			 "link runs at %g Gb/s, expected %g Gb/s: rate or width downgraded",
			 in->rate_gbps, in->expect_gbps);
	/* 2. PFC / queues */
	if (list_ctrs(in, (1u << LS_CTR_PFC) | (1u << LS_CTR_ECN) | (1u << LS_CTR_CNP) |
		      (1u << LS_CTR_DROP) | (1u << LS_CTR_QUEUE), list, sizeof(list)) &&
	    (f = add(v, LS_LAYER_QUEUES)))
		snprintf(f->text, sizeof(f->text), "congestion counters moved: %s", list);
	if (part_finding(t, in, in->part_p50[LS_PART_QUEUING],
			 in->b_part_p50[LS_PART_QUEUING], how, sizeof(how)) &&
	    (f = add(v, LS_LAYER_QUEUES)))
		snprintf(f->text, sizeof(f->text), "queuing %s", how);
	/* 3. RDMA path */
	if (list_ctrs(in, (1u << LS_CTR_OOS) | (1u << LS_CTR_RETRANS), list, sizeof(list)) &&
	    (f = add(v, LS_LAYER_RDMA)))
		snprintf(f->text, sizeof(f->text),
			 "out-of-sequence/retransmit counters moved: %s", list);
	/* 4. CPU / IRQ affinity: kernel-attributed processing */
	if (part_finding(t, in, in->kernel_p50, in->b_kernel_p50, how, sizeof(how))) {
		const struct ls_vd_cpu *top = NULL;
		double topv = -INFINITY;

		for (size_t i = 0; i < in->ncpus; i++) {
			const struct ls_vd_cpu *c = &in->cpus[i];
			double val = c->mean_ns;

			if (in->have_baseline)
				val -= isnan(c->base_mean_ns) ? 0 : c->base_mean_ns;
			if (val > topv) {
				topv = val;
				top = c;
			}
		}
		f = add(v, LS_LAYER_CPU);
		if (f && top) {
			v->cpu_host = top->host;
			v->cpu = (int)top->cpu;
			v->cpu_stage = top->stage;
			snprintf(f->text, sizeof(f->text),
				 "kernel processing %s; most on the %s's CPU %u (%s, %.2f us per sample%s)",
				 how, host_names[top->host & 1], top->cpu,
				 ls_stage_name(top->stage), top->mean_ns / 1e3,
				 in->have_baseline ? " now" : "");
		} else if (f) {
			snprintf(f->text, sizeof(f->text), "kernel processing %s", how);
		}
	}

	if (v->nf) {
		v->next = v->f[0].layer;
		snprintf(v->next_why, sizeof(v->next_why), "%s", v->f[0].text);
		return;
	}
	if (v->level_p50 <= LS_LEVEL_NORMAL) {
		v->next = LS_LAYER_NONE;
		snprintf(v->next_why, sizeof(v->next_why),
			 "p50 %.2f us is within the normal range and no counter or part points at a fault",
			 in->total_p50 / 1e3);
		return;
	}
	switch (v->dom_p50) {
	case LS_PART_TRANSMISSION:
		v->next = LS_LAYER_LINK;
		snprintf(v->next_why, sizeof(v->next_why),
			 "transmission dominates the p50 (%.2f us): message size over link rate",
			 in->part_p50[LS_PART_TRANSMISSION] / 1e3);
		break;
	case LS_PART_QUEUING:
		v->next = LS_LAYER_QUEUES;
		snprintf(v->next_why, sizeof(v->next_why), "queuing dominates the p50 (%.2f us)",
			 in->part_p50[LS_PART_QUEUING] / 1e3);
		break;
	default:
		if (v->dom_p50_base) {
			v->next = LS_LAYER_RDMA;
			snprintf(v->next_why, sizeof(v->next_why),
				 "processing dominates the p50 and most of it is the inferred base (%.2f us: posting, PCIe/DMA, NIC pipeline), not kernel time",
				 in->base_p50 / 1e3);
		} else {
			v->next = LS_LAYER_CPU;
			snprintf(v->next_why, sizeof(v->next_why),
				 "kernel processing dominates the p50 (%.2f us)",
				 in->kernel_p50 / 1e3);
		}
	}
}
