// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown, the human-readable report and the --samples CSV.
 */
#include <stdio.h>

#include "bd.h"

const char *const bd_host_names[2] = { "prober", "responder" };

const char *const bd_floor_assumption =
	"the base floor is a low percentile of (total - transmission - kernel-attributed): "
	"work common to every sample (posting, PCIe/DMA, NIC pipeline, emulation) that no "
	"kernel stage records; it assumes the fastest samples saw empty queues, so a delay "
	"every sample pays (even a constant queue) lands in it; with --baseline the floor is "
	"the healthy run's median residual instead";

/* One row of the parts table. */
static void print_row(const char *name, const struct ls_summary *s)
{
	printf("  %-22s %10.3f %10.3f %10.3f %10.3f\n", name, s->p50 / 1e3, s->p99 / 1e3,
	       s->p999 / 1e3, s->max / 1e3);
}

/* One host's kernel line. */
static void print_host(const char *role, const struct ls_bd_host *h)
{
	char cpus[128];

	ls_format_cpulist(h->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	if (!h->measured) {
		printf("kernel, %s: unmeasured (%s): its kernel time falls into the base floor or queuing\n",
		       role, h->why);
		return;
	}
	printf("kernel, %s: %s, CPUs %s (probe CPU %d, IRQs", role, h->backend, cpus,
	       h->probe_cpu);
	for (unsigned int i = 0; i < h->nr_irqs; i++)
		printf("%s%u", i ? "," : " ", h->irqs[i]);
	if (h->irqs_unwatched)
		printf(" and %u not watched", h->irqs_unwatched);
	printf("), %llu records (%zu used), %llu dropped%s", (unsigned long long)h->records,
	       h->nrec, (unsigned long long)h->drops,
	       h->truncated ? ", TRUNCATED: raise --ring-kib or shorten the run" : "");
	if (h->comp_stale || h->napi_untimed)
		printf(", untimed: %llu stale completions, %llu NAPI polls outside NET_RX",
		       (unsigned long long)h->comp_stale, (unsigned long long)h->napi_untimed);
	putchar('\n');
}

/*
 * One host's observer line: the backend's handler time on the relevant
 * CPUs per sample, one-way like every part (divided as the total is), as a
 * share of the one-way p50; and the drain thread's CPU time over the run.
 */
static void print_observer(const char *role, const struct ls_bd_host *h,
			   const struct ls_bd_an *a)
{
	const struct ls_bd_obs *o = &h->obs;
	double per = ls_bd_obs_per_sample(h, a), p50 = a->sp.sum_total.p50;
	char cpus[128];

	if (!h->measured)
		return;
	if (!o->ok) {
		printf("observer, %s: not measured (%s)\n", role, o->why);
		return;
	}
	if (o->all_cpus) {
		/* the kernel's BPF run-time statistics have no per-CPU split */
		printf("observer, %s: %s programs %.3f us one-way per sample (%.2f %% of the p50) on all CPUs (no per-CPU split): %llu runs, %.0f ns each",
		       role, h->backend, per / 1e3, p50 > 0 ? 100 * per / p50 : 0.0,
		       (unsigned long long)o->hits, o->hits ? (double)o->ns / o->hits : 0.0);
	} else {
		ls_format_cpulist(h->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
		printf("observer, %s: %s handlers %.3f us one-way per sample (%.2f %% of the p50) on CPUs %s: %llu hits, %.0f ns each; all CPUs %.3f ms",
		       role, h->backend, per / 1e3, p50 > 0 ? 100 * per / p50 : 0.0, cpus,
		       (unsigned long long)o->hits, o->hits ? (double)o->ns / o->hits : 0.0,
		       o->all_ns / 1e6);
	}
	if (o->drain_ok)
		printf("; drain thread %.3f ms CPU in %.3f s", o->drain_cpu_ns / 1e6, o->run_ns / 1e9);
	printf("\n");
}

/* The (host, cpu, stage) table of an attribution; false when it is empty. */
static bool print_cells(const struct ls_bd_an *a, const struct ls_attr *at)
{
	bool any = false;

	if (!at)
		return false;
	printf("  %-10s %4s %-13s %10s %10s %8s %10s\n", "host", "cpu", "stage", "mean",
	       "tail mean", "samples", "max");
	for (int h = 0; h < 2; h++) {
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = ls_bd_cell(at, h, cpu, st);

				if (!cell->total_ns)
					continue;
				any = true;
				printf("  %-10s %4u %-13s %10.3f %10.3f %8llu %10.3f\n", bd_host_names[h],
				       cpu, ls_stage_name(st),
				       (double)cell->total_ns / a->n / a->div / 1e3,
				       a->tail_n ? (double)cell->tail_ns / a->tail_n / a->div / 1e3 : 0,
				       (unsigned long long)cell->windows,
				       (double)cell->max_ns / a->div / 1e3);
			}
		}
	}
	return any;
}

/* The report's head: the run, the transmission model, both hosts' kernel and observer lines. */
static void text_head(const struct ls_bd_an *a, const struct ls_probe_result *r,
		      const struct bd_cli *c, const struct ls_bd_host *local,
		      const struct ls_bd_host *peer)
{
	printf("latsplit breakdown: %s port %u -> %s, RDMA %s %u B, %zu samples, %s, CPU %d\n",
	       r->dev.name, r->dev.port, r->peer, ls_probe_verb_name(r->verb), r->runs[0].size,
	       a->n, r->events ? "completion events" : "busy poll", c->o.cpu);
	printf("one-way = %s; clock %s; %s\n",
	       a->div == 2 ? "RTT/2 (as ib_write_lat)" : "the full READ round trip (as ib_read_lat)",
	       r->clock ? r->clock : "CLOCK_MONOTONIC",
	       r->dev.hwclock == LS_HWCLOCK_NONE ?
	       "no HW completion timestamps: the processing base is inferred" :
	       "HW completion timestamps exist but only at one end of a sample: the processing base is inferred");
	printf("transmission model: %s over %s, MTU %u: %llu packet(s), %llu wire bytes (%llu of headers, padding, preamble/IFG)\n",
	       ls_wire_verb_name(a->wcfg.verb), a->wcfg.ipv6 ? "IPv6" : "IPv4", a->wcfg.mtu,
	       (unsigned long long)a->wire.packets, (unsigned long long)a->wire.wire_bytes,
	       (unsigned long long)a->wire.header_bytes);
	printf("  link %g Gb/s (%s), cable %g m x %u hop(s), switch %s\n", a->wcfg.link_gbps,
	       a->rate_text, a->wcfg.cable_m, a->wcfg.hops, ls_wire_switch_name(a->wcfg.sw));
	printf("  serialization %.3f ns + propagation %.3f ns + switches %.3f ns = %.3f ns (payload alone: %.3f ns)\n",
	       a->wire.serialize_ns, a->wire.propagate_ns, a->wire.switch_ns, a->wire.total_ns,
	       a->wire.payload_only_ns);
	print_host("prober", local);
	if (peer)
		print_host("responder", peer);
	if (a->have_theta)
		printf("responder clock offset: %+.3f us (median of the 1%% fastest round trips of %zu, %s)\n",
		       a->theta_ns / 1e3, a->theta_samples,
		       a->theta_src == LS_BD_THETA_PACKETS ? "packet to packet" :
		       "application stamps");
	printf("preemptions of the probe task not ending within %.0f us before it saw its message (ignored: it was waiting): %zu\n",
	       c->preempt_slack_ns / 1e3, a->preempt_dropped);
	print_observer("prober", local, a);
	if (peer)
		print_observer("responder", peer, a);
}

/* The parts table, the base floor and the tail's shares. */
static void text_parts(const struct ls_bd_an *a, const struct bd_cli *c,
		       const struct ls_bd_base *base)
{
	const struct ls_split_out *sp = &a->sp;

	printf("\n  %-22s %10s %10s %10s %10s\n", "one-way (us)", "p50", "p99", "p99.9", "max");
	print_row("total", &sp->sum_total);
	print_row("transmission", &sp->sum_part[LS_PART_TRANSMISSION]);
	print_row("queuing", &sp->sum_part[LS_PART_QUEUING]);
	print_row("processing", &sp->sum_part[LS_PART_PROCESSING]);
	print_row("  kernel (measured)", &sp->sum_kernel);
	print_row(sp->floor_inferred ? "  base (inferred)" : "  base (baseline)", &sp->sum_base);
	if (base->have)
		printf("\nbase floor B = %.3f us = the median residual (total - transmission - kernel) of --baseline %s: queuing is what this run adds over that healthy run\n",
		       sp->floor_ns / 1e3, c->baseline);
	else
		printf("\nbase floor B = %.3f us = p%g of the residual. Assumption: %s.\n",
		       sp->floor_ns / 1e3, c->floor_q * 100, bd_floor_assumption);
	if (ls_bd_unreliable(a))
		printf("ATTRIBUTION UNRELIABLE for this run: %zu of %zu samples (%.1f %%, over 1 %%) had more kernel time on their path than latency left after transmission; their processing was capped and no verdict is given\n",
		       sp->clamped, a->n, 100.0 * sp->clamped / a->n);
	else if (sp->clamped)
		printf("note: %zu of %zu samples had more kernel time on their path than latency left after transmission; their processing was capped\n",
		       sp->clamped, a->n);
	printf("\ntail: slowest %zu samples (>= %.3f us), mean excess over p50 %.3f us: queuing %.0f%%, processing %.0f%%, transmission %.0f%%\n",
	       sp->tail_n, sp->tail_threshold_ns / 1e3, sp->tail_excess_ns / 1e3,
	       100 * sp->tail_share[LS_PART_QUEUING], 100 * sp->tail_share[LS_PART_PROCESSING],
	       100 * sp->tail_share[LS_PART_TRANSMISSION]);
}

/* What was on the samples' path by host, CPU and stage; the concurrent context; packet matching. */
static void text_cells(const struct ls_bd_an *a)
{
	printf("\nprocessing by stage and CPU (one-way us per sample; each instant counted once):\n");
	if (!print_cells(a, a->attr_ok ? &a->attr : NULL))
		printf("  (no kernel time on the samples' path)\n");
	printf("\nconcurrent: receive-path work that overlapped samples but did not carry their packets (not processing):\n");
	if (!print_cells(a, a->conc_ok ? &a->conc : NULL))
		printf("  (none)\n");
	for (int h = 0; h < 2; h++) {
		if (!a->host_measured[h])
			continue;
		if (a->rx[h].packets)
			printf("  %s: %zu of %zu samples matched by their packets (%zu of %zu RoCE packets seen were the probe's); in the host after their last packet came in: %zu, before their own last packet left: %zu\n",
			       bd_host_names[h], a->rx[h].samples, a->rx[h].n, a->rx[h].matched,
			       a->rx[h].packets, a->rx[h].delivered, a->rx[h].sent);
		else
			printf("  %s: no RoCE packet seen by the backend: its receive path is all concurrent (a NIC that bypasses the kernel, or a backend without RX_PKT records)\n",
			       bd_host_names[h]);
	}
}

/* The counters that moved on either host, then the unreadable ones. */
static void text_counters(const struct ls_bd_host *const hosts[2])
{
	const struct ls_ctr_delta *d;
	bool any = false;
	size_t i;
	int h;

	printf("\ncounters that moved:\n");
	ls_bd_for_each_ctr(hosts, h, i, d) {
		if (!ls_ctr_moved(d))
			continue;
		any = true;
		printf("  %-10s %-44s %-16s %14llu -> %-14llu %+lld\n", bd_host_names[h], d->name,
		       ls_ctr_class_name(d->cls), (unsigned long long)d->before,
		       (unsigned long long)d->after, (long long)d->delta);
	}
	if (!any)
		printf("  (none)\n");
	ls_bd_for_each_ctr(hosts, h, i, d) {
		if (!d->ok)
			printf("  unreadable, %s: %s: %s\n", bd_host_names[h], d->name, d->error);
	}
}

/* The verdict and its findings (none when the attribution is unreliable). */
static void text_verdict(const struct ls_bd_an *a, const struct ls_probe_result *r,
			 const struct bd_cli *c, const struct ls_bd_host *const hosts[2])
{
	const struct ls_split_out *sp = &a->sp;
	const struct ls_verdict *v = &a->v;
	char losses[512];

	if (ls_bd_losses(hosts, losses, sizeof(losses)))
		printf("\nINCOMPLETE: the split misses what the kernel backends lost: %s\n", losses);

	if (ls_bd_unreliable(a)) {
		printf("\nverdict: none: the attribution is unreliable for this run (%zu of %zu samples clamped); p50 %.3f us, p99 %.3f us\n",
		       sp->clamped, a->n, sp->sum_total.p50 / 1e3, sp->sum_total.p99 / 1e3);
		return;
	}
	printf("\nverdict: p50 %.3f us %s, p99 %.3f us %s (thresholds for 4 B: normal %.3g-%.3g us, abnormal > %.3g, hurts training > %.3g",
	       sp->sum_total.p50 / 1e3, ls_level_name(v->level_p50), sp->sum_total.p99 / 1e3,
	       ls_level_name(v->level_p99), c->thr.normal_lo_ns / 1e3, c->thr.normal_hi_ns / 1e3,
	       c->thr.abnormal_ns / 1e3, c->thr.hurts_ns / 1e3);
	if (a->thr.offset_ns >= 0.0005)
		printf("; +%.3f us for %u B on the wire", a->thr.offset_ns / 1e3, r->runs[0].size);
	printf(")\n");
	printf("  p50 dominated by %s%s; tail dominated by %s\n", ls_part_name(v->dom_p50),
	       v->dom_p50_base ? sp->floor_inferred ? " (mostly the inferred base)" :
	       " (mostly the baseline's base)" : "", ls_part_name(v->dom_tail));
	for (unsigned int i = 0; i < v->nf; i++)
		printf("  finding [%s]: %s\n", ls_layer_name(v->f[i].layer), v->f[i].text);
	if (!v->nf)
		printf("  findings: none\n");
	printf("  next: %s: %s\n", ls_layer_name(v->next), v->next_why);
}

/* Human-readable report. */
void bd_print_text(const struct ls_bd_an *a, const struct ls_probe_result *r,
		   const struct bd_cli *c, const struct ls_bd_host *local,
		   const struct ls_bd_host *peer, const struct ls_bd_base *base)
{
	const struct ls_bd_host *const hosts[2] = { local, peer };

	text_head(a, r, c, local, peer);
	text_parts(a, c, base);
	text_cells(a);
	text_counters(hosts);
	text_verdict(a, r, c, hosts);
}

/* Sample i's PSN from a run's first PSN, or -1 when unknown (see ls_probe_run). */
static long long sample_psn(int64_t psn0, const struct ls_probe_run *run, size_t i)
{
	if (psn0 < 0)
		return -1;
	return (long long)(((uint64_t)psn0 + (uint64_t)i * run->pkts) & 0xffffff);
}

/*
 * --samples: one CSV row per sample with its three parts and its packets'
 * PSNs, then the round-trip window's kernel time per host and stage (the
 * columns add up to kernel_rtt_window_ns; RX_PKT and TX_PKT instants take no
 * time).
 */
void bd_write_samples(FILE *fp, const struct ls_bd_an *a, const struct ls_probe_run *run)
{
	static const char *const host[LS_ATTR_HOSTS] = { "prober", "responder" };

	fprintf(fp, "index,start_ns,end_ns,total_ns,transmission_ns,queuing_ns,processing_ns,"
		"kernel_ns,base_ns,kernel_rtt_window_ns,tail,req_psn,ans_psn");
	for (unsigned int h = 0; h < LS_ATTR_HOSTS; h++)
		for (unsigned int st = 0; st < LS_NR_STAGES; st++)
			if (st != LS_STAGE_RX_PKT && st != LS_STAGE_TX_PKT)
				fprintf(fp, ",%s_%s_ns", host[h], ls_stage_name(st));
	fputc('\n', fp);
	for (size_t i = 0; i < a->n; i++) {
		fprintf(fp, "%zu,%llu,%llu,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%u,%lld,%lld", i,
			(unsigned long long)run->samples[i].start_ns,
			(unsigned long long)run->samples[i].end_ns, a->total[i],
			a->sp.part[LS_PART_TRANSMISSION][i], a->sp.part[LS_PART_QUEUING][i],
			a->sp.part[LS_PART_PROCESSING][i], a->sp.kernel[i], a->sp.base[i],
			a->kern_rtt[i], a->tail[i], sample_psn(run->req_psn0, run, i),
			sample_psn(run->ans_psn0, run, i));
		for (unsigned int h = 0; h < LS_ATTR_HOSTS; h++)
			for (unsigned int st = 0; st < LS_NR_STAGES; st++)
				if (st != LS_STAGE_RX_PKT && st != LS_STAGE_TX_PKT)
					fprintf(fp, ",%llu", (unsigned long long)
						ls_attr_win_stage(&a->attr, i, h, st));
		fputc('\n', fp);
	}
}
