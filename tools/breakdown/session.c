// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown, one host's session: the kernel backend and the thread
 * that drains its records, the probe's run hooks (counters and the
 * observer's cost before and after), and closing it all down.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "bd.h"
#include "nic.h"

/* Append one record to the local host's buffer (drain callback). */
static int keep_record(const struct ls_record *r, void *arg)
{
	struct bd_ctx *x = arg;
	struct ls_bd_host *h = &x->local;

	if (r->cpu >= LS_MAX_CPUS)
		return 0;
	/*
	 * An IRQ moved during the run (irqbalance, an operator) takes its
	 * softirq work to the new CPU: a CPU joins the relevant set with its
	 * first record of a watched NIC IRQ, which precedes that IRQ's
	 * softirq records in the CPU's ring.
	 */
	if (r->stage == LS_STAGE_HARDIRQ || r->stage == LS_STAGE_COMPLETION ||
	    r->stage == LS_STAGE_IRQ_THREAD)
		x->nic_cpus[r->cpu / 64] |= 1ull << (r->cpu % 64);
	if (!((h->cpumask[r->cpu / 64] | x->nic_cpus[r->cpu / 64]) & (1ull << (r->cpu % 64))))
		return 0;	/* not a CPU that serves the NIC or runs the probe */
	if (!x->prerun_limit)
		x->prerun_limit = BD_PRERUN_MAX;
	if (!x->run_begin && h->nrec >= x->prerun_limit) {
		/* a responder waiting for its prober: keep only the last moments */
		uint64_t keep_from = ls_now_ns() - BD_SLACK_NS;
		size_t k = 0;

		for (size_t i = 0; i < h->nrec; i++)
			if (h->rec[i].end_ns >= keep_from)
				h->rec[k++] = h->rec[i];
		h->nrec = k;
		x->prerun_limit = 2 * k > BD_PRERUN_MAX ? 2 * k : BD_PRERUN_MAX;
	}
	if (h->nrec == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 65536;
		struct ls_record *v;

		if (cap > BD_MAX_RECORDS)
			cap = BD_MAX_RECORDS;
		if (h->nrec == cap) {
			h->truncated = true;
			return 0;
		}
		v = realloc(h->rec, cap * sizeof(*v));
		if (!v) {
			h->truncated = true;
			return 0;
		}
		h->rec = v;
		x->cap = cap;
	}
	h->rec[h->nrec++] = *r;
	return 0;
}

/* Drain thread: move records out of the ring until told to stop. */
static void *drain_main(void *arg)
{
	struct bd_ctx *x = arg;

	while (!x->stop) {
		if (x->ops->drain(x->b, keep_record, x, BD_DRAIN_MS, &x->drain_err) < 0) {
			x->drain_failed = true;
			break;
		}
	}
	return NULL;
}

/* The first RDMA device's name (the probe's default), or "" when there is none. */
static void first_ibdev(char *buf, size_t len)
{
	struct ibv_device **list;
	int n = 0;

	buf[0] = '\0';
	list = ibv_get_device_list(&n);
	if (list && n > 0)
		snprintf(buf, len, "%s", ibv_get_device_name(list[0]));
	if (list)
		ibv_free_device_list(list);
}

/*
 * Resolve the NIC (IRQs, netdev), the relevant CPUs (the IRQs' effective
 * affinity plus the probe CPU; keep_record() adds any CPU the IRQs move
 * to during the run), open the backend and start draining. An
 * unusable backend with --backend auto leaves this host unmeasured.
 */
int bd_start(struct bd_ctx *x, struct ls_err *err)
{
	struct bd_cli *c = x->c;
	struct ls_bd_host *h = &x->local;
	struct ls_backend_cfg cfg = { 0 };
	struct ls_nic nic;
	struct ls_err e2;

	memset(h, 0, sizeof(*h));
	h->probe_cpu = c->o.cpu;
	h->cpumask[c->o.cpu / 64] |= 1ull << (c->o.cpu % 64);
	if (c->o.device)
		snprintf(x->ibdev, sizeof(x->ibdev), "%s", c->o.device);
	else
		first_ibdev(x->ibdev, sizeof(x->ibdev));
	if (!x->ibdev[0])
		return ls_errcf(err, LS_E_DEVICE, "no RDMA device found (is rdma_rxe loaded and rxe0 created?)");
	if (ls_nic_resolve(x->ibdev, NULL, &nic, err))
		return -1;
	snprintf(h->ibdev, sizeof(h->ibdev), "%s", x->ibdev);
	snprintf(h->netdev, sizeof(h->netdev), "%s", nic.netdev);
	h->nr_irqs = nic.nr_irqs;
	memcpy(h->irqs, nic.irqs, sizeof(h->irqs));
	h->irqs_unwatched = nic.nr_unwatched;
	if (nic.nr_unwatched)
		ls_warn("breakdown: %s has %u more IRQs than the %d watched (the lowest-numbered): kernel time on them is missing from the split",
			nic.netdev[0] ? nic.netdev : x->ibdev, nic.nr_unwatched, LS_MAX_IRQS);
	for (unsigned int i = 0; i < nic.nr_irqs; i++) {
		uint64_t mask[LS_CPUMASK_WORDS] = { 0 }, eff[LS_CPUMASK_WORDS] = { 0 };

		if (ls_irq_affinity(nic.irqs[i], mask, eff, &e2)) {
			ls_warn("breakdown: %s (its CPUs are not watched)", e2.msg);
			continue;
		}
		for (int w = 0; w < LS_CPUMASK_WORDS; w++)
			h->cpumask[w] |= eff[w];
	}
	x->ctr_cfg.ibdev = h->ibdev;
	x->ctr_cfg.port = c->o.ib_port;
	x->ctr_cfg.netdev = h->netdev[0] ? h->netdev : NULL;
	x->ctr_cfg.ipext = true;

	snprintf(h->backend, sizeof(h->backend), "none");
	if (!strcmp(c->backend, "none")) {
		snprintf(h->why, sizeof(h->why), "--backend none");
		return 0;
	}
	memcpy(cfg.irqs, nic.irqs, sizeof(cfg.irqs));
	cfg.nr_irqs = nic.nr_irqs;
	cfg.cpumask[c->o.cpu / 64] |= 1ull << (c->o.cpu % 64);
	cfg.pids[0] = getpid();
	cfg.nr_pids = 1;
	cfg.ring_kib = c->ring_kib;
	/* the split reads records only: the eBPF programs skip their histograms */
	cfg.no_hist = true;
	cfg.verbose = c->verbose;
	if (ls_backend_open_named(c->backend, &cfg, &x->ops, &x->b, err)) {
		if (strcmp(c->backend, "auto"))
			return -1;
		/* auto: no usable backend is a measured-nothing side, not a failure */
		snprintf(h->why, sizeof(h->why), "%s", err->msg);
		x->ops = NULL;
		return 0;
	}
	snprintf(h->backend, sizeof(h->backend), "%s", x->ops->name);
	if (pthread_create(&x->th, NULL, drain_main, x)) {
		x->ops->close(x->b);
		x->ops = NULL;
		return ls_errf(err, "cannot start the record drain thread");
	}
	x->th_running = true;
	/* keep the drain off the probe's CPU when there is another one */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE; i++)
			if (i != c->o.cpu)
				CPU_SET(i, &set);
		pthread_setaffinity_np(x->th, sizeof(set), &set);
	}
	h->measured = true;
	return 0;
}

/* The drain thread's CPU time so far; false when it cannot be read. */
static bool drain_cpu_ns(struct bd_ctx *x, uint64_t *ns)
{
	struct timespec ts;
	clockid_t clk;

	if (!x->th_running || pthread_getcpuclockid(x->th, &clk) ||
	    clock_gettime(clk, &ts))
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return true;
}

/* The observer's readings at the run's start (the first run of a sweep only). */
static void obs_begin(struct bd_ctx *x)
{
	struct ls_err e;

	if (x->have_obs0 || !x->ops)
		return;
	x->obs_t0 = ls_now_ns();
	x->have_drain0 = drain_cpu_ns(x, &x->drain_cpu0);
	if (!x->ops->observer) {
		snprintf(x->obs_why, sizeof(x->obs_why), "backend %s cannot report its cost",
			 x->ops->name);
		return;
	}
	if (x->ops->observer(x->b, &x->obs0, &e)) {
		snprintf(x->obs_why, sizeof(x->obs_why), "%s", e.msg);
		return;
	}
	x->have_obs0 = true;
}

/* The observer's readings at the run's end: its cost over the run so far. */
static void obs_end(struct bd_ctx *x)
{
	struct ls_bd_obs *o = &x->local.obs;
	struct ls_obs now;
	struct ls_err e;
	uint64_t d1;

	if (!x->ops)
		return;
	if (x->have_drain0 && drain_cpu_ns(x, &d1)) {
		o->drain_ok = true;
		o->drain_cpu_ns = d1 - x->drain_cpu0;
	}
	if (!x->have_obs0)
		return;
	if (x->ops->observer(x->b, &now, &e)) {
		snprintf(x->obs_why, sizeof(x->obs_why), "%s", e.msg);
		return;
	}
	ls_obs_free(&x->obs_d);
	x->have_obs_d = !ls_obs_diff(&x->obs0, &now, &x->obs_d, &e);
	if (!x->have_obs_d)
		snprintf(x->obs_why, sizeof(x->obs_why), "%s", e.msg);
	ls_obs_free(&now);
}

/*
 * Sum the run's handler cost over the host's relevant CPUs, once they are
 * final (bd_stop adds the CPUs the NIC IRQs moved to).
 */
static void obs_finish(struct bd_ctx *x)
{
	struct ls_bd_host *h = &x->local;
	struct ls_bd_obs *o = &h->obs;
	struct ls_obs_cell all;

	if (!x->have_obs_d) {
		snprintf(o->why, sizeof(o->why), "%s", x->obs_why[0] ? x->obs_why :
			 "no backend recorded");
		return;
	}
	o->run_ns = x->run_end > x->obs_t0 ? x->run_end - x->obs_t0 : 0;
	all = ls_obs_sum(&x->obs_d, NULL);
	o->all_hits = all.hits;
	o->all_ns = all.ns;
	/* without a per-CPU split, every CPU's cost counts (an upper bound) */
	o->all_cpus = x->obs_d.all_cpus;
	for (unsigned int k = 0; k < LS_NR_HANDLERS; k++) {
		struct ls_obs_cell c = ls_obs_handler_sum(&x->obs_d, h->cpumask, k);

		o->h_hits[k] = c.hits;
		o->h_ns[k] = c.ns;
		o->hits += c.hits;
		o->ns += c.ns;
	}
	o->ok = true;
}

/* Stop draining, take the last records and the counts, close the backend. */
void bd_stop(struct bd_ctx *x)
{
	struct ls_bd_host *h = &x->local;
	struct ls_snapshot snap = { 0 };
	struct ls_err e;

	if (!x->ops)
		return;
	x->stop = 1;
	if (x->th_running)
		pthread_join(x->th, NULL);
	x->th_running = false;
	if (!x->drain_failed && x->ops->drain(x->b, keep_record, x, 0, &x->drain_err) < 0)
		x->drain_failed = true;
	for (int w = 0; w < LS_CPUMASK_WORDS; w++)
		h->cpumask[w] |= x->nic_cpus[w];
	if (x->ops->snapshot(x->b, &snap, &e) == 0) {
		h->records = snap.records;
		h->drops = snap.drops;
		h->comp_stale = snap.comp_stale;
		h->napi_untimed = snap.napi_untimed;
		h->unordered = snap.unordered;
		ls_snapshot_free(&snap);
	} else {
		ls_warn("breakdown: %s", e.msg);
	}
	x->ops->close(x->b);
	x->ops = NULL;
	x->b = NULL;
	obs_finish(x);
	if (x->drain_failed) {
		h->measured = false;
		snprintf(h->why, sizeof(h->why), "reading records failed: %s", x->drain_err.msg);
	}
}

/* Keep only records on relevant CPUs that overlap [from, to]. */
void bd_filter_records(struct ls_bd_host *h, uint64_t from, uint64_t to)
{
	size_t k = 0;

	for (size_t i = 0; i < h->nrec; i++) {
		const struct ls_record *r = &h->rec[i];

		if (r->cpu >= LS_MAX_CPUS || !(h->cpumask[r->cpu / 64] & (1ull << (r->cpu % 64))))
			continue;
		if (r->end_ns < from || r->start_ns > to)
			continue;
		h->rec[k++] = *r;
	}
	h->nrec = k;
}

/* Probe callback before the first iteration: counters and observer "before". */
void bd_on_run_start(void *arg, const struct ls_probe_run *run)
{
	struct bd_ctx *x = arg;
	struct ls_err e;

	if (!x->have_before && !ls_ctr_snapshot(&x->ctr_cfg, &x->before, &e))
		x->have_before = true;
	obs_begin(x);
	x->run_begin = ls_now_ns();
}

/* Probe callback after the last iteration: counters and observer "after". */
void bd_on_run_end(void *arg, const struct ls_probe_run *run)
{
	struct bd_ctx *x = arg;
	struct ls_err e;

	x->run_end = ls_now_ns();
	obs_end(x);
	if (x->have_after)
		ls_ctr_snap_free(&x->after);
	x->have_after = !ls_ctr_snapshot(&x->ctr_cfg, &x->after, &e);
}

/* Free what one pair's run left in x, so the next pair starts clean. */
void bd_ctx_reset(struct bd_ctx *x)
{
	struct bd_cli *c = x->c;

	ls_bd_host_free(&x->local);
	ls_bd_host_free(&x->peer);
	if (x->have_before)
		ls_ctr_snap_free(&x->before);
	if (x->have_after)
		ls_ctr_snap_free(&x->after);
	ls_obs_free(&x->obs0);
	ls_obs_free(&x->obs_d);
	memset(x, 0, sizeof(*x));
	x->c = c;
}

/*
 * Responder callback per prober accepted. The first session uses the
 * backend run_responder() opened; a later one (after a session that
 * failed, maybe after its records were shipped and the backend closed)
 * starts from nothing: backend reopened, records, counter snapshots and
 * observer figures of its own, so a prober is never served stale or empty
 * data as measured.
 */
int bd_on_session_start(void *arg, struct ls_err *err)
{
	struct bd_ctx *x = arg;
	const struct ls_probe_result *res = x->res;

	if (!x->had_session) {
		x->had_session = true;
		/* --pause-idle: record from here on, before the probe's traffic */
		if (bd_idle_pause(x, false, err))
			return ls_err_wrap(err, "breakdown responder: resume the backend");
		return 0;
	}
	bd_stop(x);
	bd_ctx_reset(x);
	x->res = res;
	x->had_session = true;
	if (bd_start(x, err))
		return ls_err_wrap(err, "breakdown responder: a new session's backend");
	if (!x->local.measured)
		ls_warn("breakdown: responder: no kernel backend for this session (%s)", x->local.why);
	return 0;
}

/*
 * Responder callback after each session bd_on_session_start began: with
 * --pause-idle the backend pauses until the next prober (a failed session
 * leaves the responder waiting; a completed one ends it, and bd_stop then
 * reads the paused backend's records and counts as usual).
 */
void bd_on_session_end(void *arg, int rc)
{
	struct bd_ctx *x = arg;
	struct ls_err e = { 0 };

	if (bd_idle_pause(x, true, &e))
		ls_warn("breakdown: responder: %s: it records until the next session", e.msg);
}

/* --pause-idle: pause or resume the open backend (see bd.h). */
int bd_idle_pause(struct bd_ctx *x, bool paused, struct ls_err *err)
{
	if (!x->c->pause_idle || !x->ops || x->idle_paused == paused)
		return 0;
	if (!x->ops->pause)
		return ls_errf(err, "--pause-idle: the %s backend cannot pause", x->ops->name);
	if (x->ops->pause(x->b, paused, err))
		return ls_err_wrap(err, "--pause-idle: %s the %s backend",
				   paused ? "pause" : "resume", x->ops->name);
	x->idle_paused = paused;
	return 0;
}

/* Counter deltas of this host (empty when a snapshot failed). */
void bd_counters(struct bd_ctx *x)
{
	struct ls_err e;

	if (x->have_before && x->have_after &&
	    ls_ctr_diff(&x->before, &x->after, &x->local.ctr, &e))
		ls_warn("breakdown: counters: %s", e.msg);
}
