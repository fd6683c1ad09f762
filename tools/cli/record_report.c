// SPDX-License-Identifier: GPL-2.0
/* latsplit record's reports (record.h): the per-CPU stage table as text or JSON, the observer's cost, --records lines. */
#include "record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "json.h"
#include "names.h"
#include "split.h"

/* Histogram of cpu c, slot s. */
static const struct ls_hist *hist_at(const struct ls_snapshot *snap,
				     unsigned int c, unsigned int s)
{
	return &snap->hist[(size_t)c * LS_NR_SLOTS + s];
}

/* Human label of slot s: "hardirq irq 36", "softirq_run NET_RX", ... */
static void slot_label(unsigned int s, const struct ls_snapshot *snap,
		       char *buf, size_t len)
{
	unsigned int st;
	bool has_id;
	uint32_t id;

	st = ls_slot_stage(s, snap->irqs, snap->nr_irqs, &id, &has_id);
	if (!has_id)
		snprintf(buf, len, "%s", ls_stage_name(st));
	else if (st == LS_STAGE_SOFTIRQ_WAIT || st == LS_STAGE_SOFTIRQ_RUN)
		snprintf(buf, len, "%s %s", ls_stage_name(st), ls_softirq_name(id));
	else
		snprintf(buf, len, "%s irq %u", ls_stage_name(st), id);
}

/* Print one row of per-CPU values in µs ("-" where a CPU has no events). */
static void print_row(const char *name, const struct ls_snapshot *snap,
		      const bool *cols, unsigned int s, int what)
{
	printf("%-8s", name);
	for (unsigned int c = 0; c < snap->nr_cpus; c++) {
		const struct ls_hist *h = hist_at(snap, c, s);
		double v;

		if (!cols[c])
			continue;
		if (what == 0) {
			printf(" %12llu", (unsigned long long)h->count);
			continue;
		}
		if (!h->count) {
			printf(" %12s", "-");
			continue;
		}
		if (what == 1)
			v = ls_hist_quantile(h, 0.5);
		else if (what == 2)
			v = ls_hist_quantile(h, 0.99);
		else if (what == 3)
			v = (double)h->max_ns;
		else
			v = (double)h->sum_ns / (double)h->count;
		printf(" %12.3f", v / 1000.0);
	}
	printf("\n");
}

/* CPU c's cells summed over every handler of obs. */
static struct ls_obs_cell obs_cpu(const struct ls_obs *obs, unsigned int c)
{
	struct ls_obs_cell s = { 0, 0 };

	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		s.hits += obs->cell[(size_t)c * LS_NR_HANDLERS + h].hits;
		s.ns += obs->cell[(size_t)c * LS_NR_HANDLERS + h].ns;
	}
	return s;
}

/* Text: the observer's cost per handler (with hits), a total, and per CPU. */
static void print_observer_text(const struct record_obs *ro, uint64_t window_ns)
{
	struct ls_obs_cell t, c;

	if (!ro->have) {
		printf("\n# observer: not reported (%s)\n", ro->why);
		return;
	}
	t = ls_obs_sum(&ro->obs, NULL);
	printf("\n# observer: the backend's own cost (hits, time inside its handlers)\n");
	printf("%-20s %12s %12s %10s\n", "handler", "hits", "total_us", "mean_ns");
	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		c = ls_obs_handler_sum(&ro->obs, NULL, h);
		if (!c.hits)
			continue;
		printf("%-20s %12llu %12.3f %10.1f\n", ls_handler_name(h),
		       (unsigned long long)c.hits, c.ns / 1000.0,
		       (double)c.ns / (double)c.hits);
	}
	printf("%-20s %12llu %12.3f %10.1f\n", "total",
	       (unsigned long long)t.hits, t.ns / 1000.0,
	       t.hits ? (double)t.ns / (double)t.hits : 0.0);
	if (ro->obs.all_cpus) {
		printf("(every CPU together: the kernel's BPF run-time statistics have no per-CPU split)\n");
		return;
	}
	printf("%-20s %12s %12s %10s\n", "cpu", "hits", "total_us", "%window");
	for (unsigned int cpu = 0; cpu < ro->obs.nr_cpus; cpu++) {
		char name[16];

		c = obs_cpu(&ro->obs, cpu);
		if (!c.hits)
			continue;
		snprintf(name, sizeof(name), "CPU-%03u", cpu);
		printf("%-20s %12llu %12.3f %10.4f\n", name,
		       (unsigned long long)c.hits, c.ns / 1000.0,
		       window_ns ? 100.0 * (double)c.ns / (double)window_ns : 0.0);
	}
}

/* JSON: "observer": handlers (all), cpus (those with hits), totals; or null. */
static void print_observer_json(struct ls_json *j, const struct record_obs *ro)
{
	struct ls_obs_cell t, c;

	if (!ro->have) {
		ls_json_null(j, "observer");
		return;
	}
	t = ls_obs_sum(&ro->obs, NULL);
	ls_json_obj_open(j, "observer");
	ls_json_arr_open(j, "handlers");
	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		c = ls_obs_handler_sum(&ro->obs, NULL, h);
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "name", ls_handler_name(h));
		ls_json_u64(j, "hits", c.hits);
		ls_json_u64(j, "ns", c.ns);
		ls_json_u64(j, "missed", ro->obs.missed[h]);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	/* all_cpus: no per-CPU split, "cpus" stays empty */
	ls_json_str(j, "scope", ro->obs.all_cpus ? "all_cpus" : "per_cpu");
	ls_json_arr_open(j, "cpus");
	for (unsigned int cpu = 0; !ro->obs.all_cpus && cpu < ro->obs.nr_cpus; cpu++) {
		c = obs_cpu(&ro->obs, cpu);
		if (!c.hits)
			continue;
		ls_json_obj_open(j, NULL);
		ls_json_u64(j, "cpu", cpu);
		ls_json_u64(j, "hits", c.hits);
		ls_json_u64(j, "ns", c.ns);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	ls_json_u64(j, "hits", t.hits);
	ls_json_u64(j, "ns", t.ns);
	ls_json_obj_close(j);
}

/* rtla-style text: per slot, count/p50/p99/max rows, one column per CPU. */
void record_print_text(const struct record_opts *o, const struct ls_snapshot *snap,
		       const struct record_obs *ro, const struct record_ab *ab,
		       const char *backend, uint64_t window_ns)
{
	bool *cols = calloc(snap->nr_cpus, sizeof(bool));
	unsigned int ncols = 0, nslots = 0;
	char label[64], cpus[128];

	if (!cols) {
		ls_warn("record: out of memory");
		return;
	}
	for (unsigned int c = 0; c < snap->nr_cpus; c++) {
		for (unsigned int s = 0; s < LS_NR_SLOTS && !cols[c]; s++)
			cols[c] = hist_at(snap, c, s)->count > 0;
		/* Always show the CPUs that exist, even when quiet, up to 16. */
		if (!cols[c] && c < 16 && c < (unsigned int)sysconf(_SC_NPROCESSORS_CONF))
			cols[c] = true;
		ncols += cols[c];
	}
	printf("# latsplit record: backend %s, window %.3f s, unit: us (microseconds)\n",
	       backend, window_ns / 1e9);
	printf("# watched irqs:");
	if (!snap->nr_irqs)
		printf(" none");
	for (unsigned int i = 0; i < snap->nr_irqs; i++)
		printf(" %u", snap->irqs[i]);
	ls_format_cpulist(o->cfg.cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	printf("; interference cpus: %s; tasks:", o->have_cpus ? cpus : "none");
	if (!o->cfg.nr_pids)
		printf(" none");
	for (unsigned int i = 0; i < o->cfg.nr_pids; i++)
		printf(" %d", o->cfg.pids[i]);
	printf("\n");
	if (o->records_path)
		printf("# records: %llu, dropped (ring full): %llu\n",
		       (unsigned long long)snap->records,
		       (unsigned long long)snap->drops);
	if (snap->comp_stale || snap->napi_untimed)
		printf("# untimed: %llu COMPLETION%s pending longer than the limit, %llu NAPI poll%s outside NET_RX softirq (busy polling or threaded NAPI)\n",
		       (unsigned long long)snap->comp_stale, snap->comp_stale == 1 ? "" : "s",
		       (unsigned long long)snap->napi_untimed,
		       snap->napi_untimed == 1 ? "" : "s");
	if (snap->unordered)
		printf("# dropped: %llu interval%s ending before %s start (clock skew between CPUs)\n",
		       (unsigned long long)snap->unordered, snap->unordered == 1 ? "" : "s",
		       snap->unordered == 1 ? "its" : "their");
	if (snap->no_hist)
		printf("\n# histograms: off (--no-hist); the records hold the stages\n");
	for (unsigned int s = 0; s < LS_NR_SLOTS && !snap->no_hist; s++) {
		bool any = false;

		if (!ls_slot_valid(s, snap->nr_irqs))
			continue;
		for (unsigned int c = 0; c < snap->nr_cpus; c++)
			any = any || hist_at(snap, c, s)->count;
		/* Watched IRQs always show, so a silent IRQ is visible. */
		if (!any && s >= snap->nr_irqs)
			continue;
		nslots++;
		slot_label(s, snap, label, sizeof(label));
		printf("\n# %s\n%-8s", label, "");
		for (unsigned int c = 0; c < snap->nr_cpus; c++)
			if (cols[c])
				printf("      CPU-%03u", c);
		printf("\n");
		print_row("count:", snap, cols, s, 0);
		print_row("p50:", snap, cols, s, 1);
		print_row("p99:", snap, cols, s, 2);
		print_row("max:", snap, cols, s, 3);
		print_row("avg:", snap, cols, s, 4);
		if (!o->buckets)
			continue;
		printf("# buckets (lower bound, us)\n");
		for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++) {
			bool nz = false;

			for (unsigned int c = 0; c < snap->nr_cpus; c++)
				nz = nz || (cols[c] && hist_at(snap, c, s)->buckets[b]);
			if (!nz)
				continue;
			printf("%-8.3f", ls_hist_bucket_lo(b) / 1000.0);
			for (unsigned int c = 0; c < snap->nr_cpus; c++)
				if (cols[c])
					printf(" %12llu", (unsigned long long)
					       hist_at(snap, c, s)->buckets[b]);
			printf("\n");
		}
	}
	if (!nslots && !snap->no_hist)
		printf("\n# no events in the window on any stage\n");
	print_observer_text(ro, window_ns);
	if (ab->n) {
		uint64_t on = 0;

		for (size_t i = 0; i < ab->n; i++)
			if (ab->v[i].on)
				on += ab->v[i].end_ns - ab->v[i].begin_ns;
		printf("\n# --ab: %zu phases of %.0f ms, recording on in every other (%.3f s of %.3f s); the histograms and the observer cover those; phases with --json\n",
		       ab->n, o->ab_ns / 1e6, on / 1e9, window_ns / 1e9);
		if (o->records_path)
			printf("# --ab: %llu records drained between phases in %.3f s, in no phase\n",
			       (unsigned long long)ab->drained, ab->drain_ns / 1e9);
	}
	(void)ncols;
	free(cols);
}

/* JSON document, kind "record": per CPU and slot count/sum_ns/max_ns. */
void record_print_json(const struct record_opts *o, const struct ls_snapshot *snap,
		       const struct record_obs *ro, const struct record_ab *ab,
		       const char *backend, uint64_t t0, uint64_t t1, int cmd_status)
{
	struct ls_json j;
	char cpus[128];

	ls_json_doc_open(&j, stdout, false, "record");
	ls_json_str(&j, "backend", backend);
	ls_json_u64(&j, "start_ns", t0);
	ls_json_u64(&j, "end_ns", t1);
	ls_json_u64(&j, "window_ns", t1 - t0);
	ls_json_arr_open(&j, "irqs");
	for (unsigned int i = 0; i < snap->nr_irqs; i++)
		ls_json_u64(&j, NULL, snap->irqs[i]);
	ls_json_arr_close(&j);
	ls_format_cpulist(o->cfg.cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	ls_json_str(&j, "interference_cpus", cpus);
	ls_json_arr_open(&j, "pids");
	for (unsigned int i = 0; i < o->cfg.nr_pids; i++)
		ls_json_i64(&j, NULL, o->cfg.pids[i]);
	ls_json_arr_close(&j);
	ls_json_u64(&j, "nr_cpus", snap->nr_cpus);
	ls_json_u64(&j, "records", snap->records);
	ls_json_u64(&j, "drops", snap->drops);
	ls_json_u64(&j, "completions_stale", snap->comp_stale);
	ls_json_u64(&j, "napi_untimed", snap->napi_untimed);
	ls_json_u64(&j, "unordered", snap->unordered);
	ls_json_bool(&j, "histograms", !snap->no_hist);
	if (o->cmd) {
		ls_json_obj_open(&j, "command");
		ls_json_arr_open(&j, "argv");
		for (char **a = o->cmd; *a; a++)
			ls_json_str(&j, NULL, *a);
		ls_json_arr_close(&j);
		ls_json_i64(&j, "status", cmd_status);
		ls_json_obj_close(&j);
	}
	ls_json_arr_open(&j, "cpus");
	for (unsigned int c = 0; c < snap->nr_cpus; c++) {
		bool opened = false;

		for (unsigned int s = 0; s < LS_NR_SLOTS; s++) {
			const struct ls_hist *h = hist_at(snap, c, s);
			unsigned int st;
			bool has_id;
			uint32_t id;

			if (!h->count || !ls_slot_valid(s, snap->nr_irqs))
				continue;
			if (!opened) {
				ls_json_obj_open(&j, NULL);
				ls_json_u64(&j, "cpu", c);
				ls_json_arr_open(&j, "slots");
				opened = true;
			}
			st = ls_slot_stage(s, snap->irqs, snap->nr_irqs, &id, &has_id);
			ls_json_obj_open(&j, NULL);
			ls_json_u64(&j, "slot", s);
			ls_json_str(&j, "stage", ls_stage_name(st));
			if (has_id)
				ls_json_u64(&j, "id", id);
			ls_json_u64(&j, "count", h->count);
			ls_json_u64(&j, "sum_ns", h->sum_ns);
			ls_json_u64(&j, "max_ns", h->max_ns);
			ls_json_dbl(&j, "p50_ns", ls_hist_quantile(h, 0.5));
			ls_json_dbl(&j, "p99_ns", ls_hist_quantile(h, 0.99));
			ls_json_obj_close(&j);
		}
		if (opened) {
			ls_json_arr_close(&j);
			ls_json_obj_close(&j);
		}
	}
	ls_json_arr_close(&j);
	print_observer_json(&j, ro);
	if (ab->n) {
		ls_json_obj_open(&j, "ab");
		ls_json_u64(&j, "phase_ns", o->ab_ns);
		ls_json_u64(&j, "drained", ab->drained);
		ls_json_u64(&j, "drain_ns", ab->drain_ns);
		ls_json_arr_open(&j, "phases");
		for (size_t i = 0; i < ab->n; i++) {
			ls_json_obj_open(&j, NULL);
			ls_json_bool(&j, "on", ab->v[i].on);
			ls_json_u64(&j, "begin_ns", ab->v[i].begin_ns);
			ls_json_u64(&j, "end_ns", ab->v[i].end_ns);
			ls_json_obj_close(&j);
		}
		ls_json_arr_close(&j);
		ls_json_obj_close(&j);
	} else {
		ls_json_null(&j, "ab");
	}
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* drain() callback: one text line per record. */
int record_write_record(const struct ls_record *r, void *ctx)
{
	FILE *fp = ctx;
	const char *name = ls_stage_name(r->stage);

	fprintf(fp, "%llu %llu %u %u %s %u %u 0x%x\n",
		(unsigned long long)r->start_ns, (unsigned long long)r->end_ns,
		r->cpu, r->stage, name, r->id, r->aux, r->flags);
	return 0;
}
