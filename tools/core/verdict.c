// SPDX-License-Identifier: GPL-2.0
/* The verdict: level against the seed's thresholds, dominant parts, findings, next layer. */
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

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

/* Names in enum order (fast, normal, elevated, abnormal, hurts; none, link, queues, RDMA, CPU). */
static const char *const level_names[] = {
	"below normal range", "normal", "elevated", "abnormal", "hurts training"
};
_Static_assert(ARRAY_SIZE(level_names) == LS_LEVEL_HURTS + 1, "a name per level");
static const char *const layer_names[] = {
	"none", "link rate/width", "PFC/queues", "RDMA path", "CPU/IRQ affinity"
};
_Static_assert(ARRAY_SIZE(layer_names) == LS_LAYER_CPU + 1, "a name per layer");

/* Name of a level. */
const char *ls_level_name(enum ls_level l)
{
	return ls_enum_name(level_names, ARRAY_SIZE(level_names), l);
}

/* Name of a layer. */
const char *ls_layer_name(enum ls_layer l)
{
	return ls_enum_name(layer_names, ARRAY_SIZE(layer_names), l);
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

/* Did a part grow enough over the baseline to be a finding (with a baseline only)? */
static bool part_grew(const struct ls_thresholds *t, const struct ls_vd_in *in,
		      double now, double before, char *how, size_t len)
{
	double d = now - before, dt = in->total_p50 - in->b_total_p50;

	if (d >= t->share * in->b_total_p50 && d >= 0.5 * dt) {
		snprintf(how, len, "p50 rose by %.2f us over the baseline (%.0f%% of the total's growth of %.2f us)",
			 d / 1e3, dt > 0 ? 100 * d / dt : 100.0, dt / 1e3);
		return true;
	}
	return false;
}

/*
 * Is queuing a finding? With a baseline: it grew (part_grew). Without: its
 * p50 is at least `share` of the total p50, it is the largest part at the
 * p50, and a backend recorded (else the residual holds processing too).
 */
static bool queuing_finding(const struct ls_thresholds *t, const struct ls_vd_in *in,
			    const struct ls_verdict *v, char *how, size_t len)
{
	double q = in->part_p50[LS_PART_QUEUING];

	if (in->have_baseline)
		return part_grew(t, in, q, in->b_part_p50[LS_PART_QUEUING], how, len);
	if (!in->recorded || v->dom_p50 != LS_PART_QUEUING || !(q >= t->share * in->total_p50))
		return false;
	snprintf(how, len, "p50 %.2f us is %.0f%% of the total p50 %.2f us and the largest part",
		 q / 1e3, 100 * q / in->total_p50, in->total_p50 / 1e3);
	return true;
}

/* What a CPU is ranked by when one is named. */
enum cpu_rank {
	CPU_BY_GROWTH,		/* attributed time over the baseline's */
	CPU_BY_WAIT,		/* wait stages' time */
	CPU_BY_WORK,		/* work stages' time */
};

/*
 * The CPU with the most of `by`. Growth names a CPU whatever its figure
 * (the one that grew most, or shrank least); waits and work need some.
 */
static const struct ls_vd_cpu *top_cpu(const struct ls_vd_in *in, enum cpu_rank by)
{
	const struct ls_vd_cpu *top = NULL;
	double topv = by == CPU_BY_GROWTH ? -INFINITY : 0;

	for (size_t i = 0; i < in->ncpus; i++) {
		const struct ls_vd_cpu *c = &in->cpus[i];
		double val;

		switch (by) {
		case CPU_BY_GROWTH:
			val = c->mean_ns - (isnan(c->base_mean_ns) ? 0 : c->base_mean_ns);
			break;
		case CPU_BY_WAIT:
			val = c->wait_mean_ns;
			break;
		default:
			val = c->work_mean_ns;
		}
		if (val > topv) {
			topv = val;
			top = c;
		}
	}
	return top;
}

/* Name a CPU in the verdict, with the stage that gave it most of what it was ranked by. */
static void name_cpu(struct ls_verdict *v, const struct ls_vd_cpu *c, unsigned int stage)
{
	v->cpu_host = c->host;
	v->cpu = (int)c->cpu;
	v->cpu_stage = stage;
}

/* With a baseline: kernel processing grew; the CPU named is the one that grew most. */
static void cpu_finding_growth(const struct ls_thresholds *t, const struct ls_vd_in *in,
			       struct ls_verdict *v)
{
	const struct ls_vd_cpu *top;
	struct ls_finding *f;
	char how[200];

	if (!part_grew(t, in, in->kernel_p50, in->b_kernel_p50, how, sizeof(how)))
		return;
	f = add(v, LS_LAYER_CPU);
	if (!f)
		return;
	top = top_cpu(in, CPU_BY_GROWTH);
	if (!top) {
		snprintf(f->text, sizeof(f->text), "kernel processing %s", how);
		return;
	}
	name_cpu(v, top, top->stage);
	snprintf(f->text, sizeof(f->text),
		 "kernel processing %s; most on the %s's CPU %u (%s, %.2f us per sample now)",
		 how, host_names[top->host & 1], top->cpu, ls_stage_name(top->stage),
		 top->mean_ns / 1e3);
}

/* Without a baseline: waits above their floor by `share` of the total p50; names the CPU with most wait. */
static void cpu_finding_waits(const struct ls_thresholds *t, const struct ls_vd_in *in,
			      struct ls_verdict *v)
{
	double ex = in->waits_p50 - in->waits_floor;
	const struct ls_vd_cpu *top;
	struct ls_finding *f;
	int off;

	if (!(v->waits_excess_share >= t->share))
		return;
	f = add(v, LS_LAYER_CPU);
	if (!f)
		return;
	off = snprintf(f->text, sizeof(f->text),
		       "softirq/IRQ waits above their floor: %.2f us per sample at the p50 (%.0f%% of the total p50 %.2f us; waits p50 %.2f us, floor %.2f us)",
		       ex / 1e3, 100 * v->waits_excess_share, in->total_p50 / 1e3,
		       in->waits_p50 / 1e3, in->waits_floor / 1e3);
	top = top_cpu(in, CPU_BY_WAIT);
	if (!top || off < 0 || (size_t)off >= sizeof(f->text))
		return;
	name_cpu(v, top, top->wait_stage);
	snprintf(f->text + off, sizeof(f->text) - off,
		 "; most on the %s's CPU %u (%s, %.2f us of waits per sample)",
		 host_names[top->host & 1], top->cpu, ls_stage_name(top->wait_stage),
		 top->wait_mean_ns / 1e3);
}

/*
 * No finding, processing dominates, no baseline: kernel time above the
 * base points at the CPU carrying the most work (waits stayed near their
 * floor, or there would be a finding); a base that dominates is what
 * every sample pays, the RDMA path's.
 */
static void next_processing(const struct ls_thresholds *t, const struct ls_vd_in *in,
			    struct ls_verdict *v)
{
	const struct ls_vd_cpu *top;

	if (v->dom_p50_base) {
		v->next = LS_LAYER_RDMA;
		snprintf(v->next_why, sizeof(v->next_why),
			 "processing dominates the p50 and most of it is what every sample pays: base %.2f us and kernel work %.2f us at the p50%s (posting, PCIe/DMA, NIC pipeline, the transport's own work)",
			 in->base_p50 / 1e3, in->work_p50 / 1e3,
			 in->recorded ? "" : ", no backend recorded");
		return;
	}
	v->next = LS_LAYER_CPU;
	top = top_cpu(in, CPU_BY_WORK);
	if (!top) {
		snprintf(v->next_why, sizeof(v->next_why),
			 "kernel processing dominates the p50 (%.2f us, base %.2f us); no wait is above its floor by %.0f%% of the total p50",
			 in->kernel_p50 / 1e3, in->base_p50 / 1e3, 100 * t->share);
		return;
	}
	name_cpu(v, top, top->work_stage);
	snprintf(v->next_why, sizeof(v->next_why),
		 "kernel time exceeds the base at the p50 (kernel %.2f us: work %.2f us, waits %.2f us; base %.2f us) with no wait above its floor by %.0f%% of the total p50; most work on the %s's CPU %u (%s, %.2f us per sample)",
		 in->kernel_p50 / 1e3, in->work_p50 / 1e3, in->waits_p50 / 1e3,
		 in->base_p50 / 1e3, 100 * t->share, host_names[top->host & 1], top->cpu,
		 ls_stage_name(top->work_stage), top->work_mean_ns / 1e3);
}

/* Share of the total p50 by which a per-sample figure's p50 exceeds its floor; NAN when unmeasured. */
static double excess_share(const struct ls_vd_in *in, double p50, double floor)
{
	if (!in->recorded || !(in->total_p50 > 0))
		return NAN;
	return (p50 - floor) / in->total_p50;
}

/* Split each sample's kernel time into waits and work; their p50 and floor quantile. */
int ls_vd_kernel_split(const struct ls_attr *at, unsigned int div, double floor_q,
		       struct ls_vd_in *in, struct ls_err *err)
{
	size_t n = at->cfg.n;
	double *waits = NULL, *work = NULL;
	int ret = -1;

	if (!at->win_stage_ns || !div)
		return ls_errf(err, "verdict: the attribution kept no per-sample stage figures");
	waits = malloc((n ? n : 1) * sizeof(*waits));
	work = malloc((n ? n : 1) * sizeof(*work));
	if (!waits || !work) {
		ls_errnof(err, ENOMEM, "verdict: waits and work of %zu samples", n);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t w = 0, k = 0;

		for (unsigned int h = 0; h < LS_ATTR_HOSTS; h++) {
			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				uint64_t ns = ls_attr_win_stage(at, i, h, st);

				if (LS_VD_WAIT_STAGES & (1u << st))
					w += ns;
				else if (LS_VD_WORK_STAGES & (1u << st))
					k += ns;
			}
		}
		waits[i] = (double)w / div;
		work[i] = (double)k / div;
	}
	in->waits_p50 = in->waits_floor = in->work_p50 = in->work_floor = 0;
	if (n) {
		ls_sort_doubles(waits, n);
		ls_sort_doubles(work, n);
		in->waits_p50 = ls_quantile_sorted(waits, n, 0.5);
		in->waits_floor = ls_quantile_sorted(waits, n, floor_q);
		in->work_p50 = ls_quantile_sorted(work, n, 0.5);
		in->work_floor = ls_quantile_sorted(work, n, floor_q);
	}
	ret = 0;
cleanup:
	free(waits);
	free(work);
	return ret;
}

/* The levels of p50 and p99, the parts that dominate the p50 and the tail, the excess shares. */
static void dominance(const struct ls_thresholds *t, const struct ls_vd_in *in,
		      struct ls_verdict *v)
{
	double best;

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
	v->waits_excess_share = excess_share(in, in->waits_p50, in->waits_floor);
	v->work_excess_share = excess_share(in, in->work_p50, in->work_floor);
}

/* The findings, layer by layer from the link up: rate, queues, the RDMA path, CPUs. */
static void findings(const struct ls_thresholds *t, const struct ls_vd_in *in,
		     struct ls_verdict *v)
{
	char how[200], list[300];
	struct ls_finding *f;

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
	if (queuing_finding(t, in, v, how, sizeof(how)) && (f = add(v, LS_LAYER_QUEUES)))
		snprintf(f->text, sizeof(f->text), "queuing %s", how);
	/* 3. RDMA path */
	if (list_ctrs(in, (1u << LS_CTR_OOS) | (1u << LS_CTR_RETRANS), list, sizeof(list)) &&
	    (f = add(v, LS_LAYER_RDMA)))
		snprintf(f->text, sizeof(f->text),
			 "out-of-sequence/retransmit counters moved: %s", list);
	/* 4. CPU / IRQ affinity */
	if (in->have_baseline)
		cpu_finding_growth(t, in, v);
	else
		cpu_finding_waits(t, in, v);
}

/* Without a finding, above normal: the next layer from the part that dominates the p50. */
static void next_by_part(const struct ls_thresholds *t, const struct ls_vd_in *in,
			 struct ls_verdict *v)
{
	switch (v->dom_p50) {
	case LS_PART_TRANSMISSION:
		v->next = LS_LAYER_LINK;
		snprintf(v->next_why, sizeof(v->next_why),
			 "transmission dominates the p50 (%.2f us): message size over link rate",
			 in->part_p50[LS_PART_TRANSMISSION] / 1e3);
		break;
	case LS_PART_QUEUING:
		v->next = LS_LAYER_QUEUES;
		if (!in->have_baseline && !in->recorded)
			snprintf(v->next_why, sizeof(v->next_why),
				 "queuing dominates the p50 (%.2f us), but queuing is the unexplained residual: no backend recorded, so it holds processing's spread too",
				 in->part_p50[LS_PART_QUEUING] / 1e3);
		else
			snprintf(v->next_why, sizeof(v->next_why), "queuing dominates the p50 (%.2f us)",
				 in->part_p50[LS_PART_QUEUING] / 1e3);
		break;
	default:
		if (!in->have_baseline) {
			next_processing(t, in, v);
		} else if (v->dom_p50_base) {
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

/* Decide the verdict. */
void ls_verdict_decide(const struct ls_thresholds *t, const struct ls_vd_in *in,
		       struct ls_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->cpu_host = v->cpu = -1;
	dominance(t, in, v);
	findings(t, in, v);
	if (v->nf) {
		const struct ls_vd_cpu *top;

		v->next = v->f[0].layer;
		snprintf(v->next_why, sizeof(v->next_why), "%s", v->f[0].text);
		/*
		 * Findings elsewhere leave the CPU unnamed by them; where kernel
		 * time dominates the p50 the CPU carrying most of its work is
		 * still the one to read after them.
		 */
		if (v->cpu < 0 && !in->have_baseline && v->dom_p50 == LS_PART_PROCESSING &&
		    !v->dom_p50_base && (top = top_cpu(in, CPU_BY_WORK)))
			name_cpu(v, top, top->work_stage);
		return;
	}
	if (v->level_p50 <= LS_LEVEL_NORMAL) {
		v->next = LS_LAYER_NONE;
		snprintf(v->next_why, sizeof(v->next_why),
			 "p50 %.2f us is within the normal range and no counter or part points at a fault",
			 in->total_p50 / 1e3);
		return;
	}
	next_by_part(t, in, v);
}
