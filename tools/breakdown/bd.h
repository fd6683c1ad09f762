/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit breakdown` inside: the options, one host's session state, what
 * --prom keeps of a pair, and the functions the breakdown/ files share.
 * cli.c runs the command; session.c the backend and the drain; peer.c the
 * responder -> prober protocol; analysis.c and baseline.c the method
 * (analysis.h); report_*.c the outputs.
 */
#ifndef LS_BD_H
#define LS_BD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "backend.h"
#include "counters.h"
#include "io.h"
#include "oob.h"
#include "peers.h"
#include "probe.h"
#include "prom.h"
#include "util.h"

#define BD_DEFAULT_RING_KIB	8192
#define BD_DEFAULT_ITERS	1000
#define BD_MAX_RECORDS		(LS_OOB_MAX_PAYLOAD / sizeof(struct ls_record))
#define BD_DRAIN_MS		500	/* few wakeups: the drain competes with the probe */
#define BD_SLACK_NS		200000000ull	/* records kept around the run */
#define BD_PRERUN_MAX		262144		/* records held while waiting for the run */
#define BD_REFUSED_RETRY_NS	1500000000ull	/* the agent's: a restarting responder's gap */

struct bd_cli {
	struct ls_probe_opts o;
	bool is_prober;
	const char *backend;
	unsigned int ring_kib;
	double link_gbps;		/* 0 = from the port */
	double cable_m;
	unsigned int hops;
	enum ls_wire_switch sw;
	double floor_q;
	double tail_frac;
	uint64_t preempt_slack_ns;
	const char *baseline;
	struct ls_thresholds thr;
	double expect_gbps;
	bool json;
	const char *samples;
	const char *prom;
	const char *report;	/* --report FILE.html */
	const char *peers;		/* --peers FILE: a fleet run */
	struct ls_peers plist;		/* its hosts */
	bool verbose;
	bool pause_idle;		/* responder: backend paused while no prober is served */
};

/* What --prom keeps of one measured pair once its analysis is freed. */
struct bd_prom_ctr {
	int host;
	char name[112];
	enum ls_ctr_class cls;
	double value;
};

struct bd_prom_pair {
	struct ls_prom_pair head;	/* ok: the pair was measured and split */
	struct ls_summary sums[4];	/* total, transmission, queuing, processing */
	double tail_share[LS_NR_PARTS];
	double floor_ns;
	enum ls_layer next;
	enum ls_part dom_p50, dom_tail;
	enum ls_level level_p50;
	size_t clamped, n;		/* the fidelity alarm: samples capped, of n */
	bool reliable;
	struct bd_prom_ctr *ctr;
	size_t nctr;
	struct {
		bool ok;
		double per_ns, share, drain_s;	/* drain_s < 0: not measured */
	} obs[2];			/* the observer's cost per host */
	bool complete;			/* no host lost records or IRQs */
	struct {
		bool measured;
		uint64_t drops;
		bool truncated;
		unsigned int unwatched;
		uint64_t stale, untimed, unordered;
	} loss[2];			/* what each host's backend lost */
};

/* Runtime of one side: backend, drain thread, counters. */
struct bd_ctx {
	struct bd_cli *c;
	const struct ls_backend_ops *ops;
	struct ls_backend *b;
	pthread_t th;
	bool th_running;
	volatile int stop;
	bool drain_failed;
	struct ls_err drain_err;
	size_t cap;
	size_t prerun_limit;		/* compact the pre-run records at this count */
	/* CPUs that served a watched NIC IRQ since the start (drain thread) */
	uint64_t nic_cpus[LS_CPUMASK_WORDS];
	struct ls_bd_host local;
	struct ls_bd_host peer;
	bool have_peer;
	struct ls_ctr_cfg ctr_cfg;
	struct ls_ctr_snap before, after;
	bool have_before, have_after;
	uint64_t run_begin, run_end;
	struct ls_obs obs0, obs_d;	/* handler cost at the run's start; over the run */
	bool have_obs0, have_obs_d;
	uint64_t obs_t0;		/* when obs0 was read */
	char obs_why[160];
	uint64_t drain_cpu0;		/* drain thread's CPU time at the run's start */
	bool have_drain0;
	char ibdev[64];
	const struct ls_probe_result *res;
	bool had_session;		/* responder: a prober session was begun */
	bool idle_paused;		/* --pause-idle: the backend is paused now */
	struct ls_err fail;		/* why the last prober run failed (its code kept) */
};

struct ls_json;

/* The two hosts' names, by host index (0 prober, 1 responder). */
extern const char *const bd_host_names[2];
/* What the inferred base floor assumes (text and JSON reports). */
extern const char *const bd_floor_assumption;

/*
 * cli.c: the agent's breakdown of one peer (argv: `breakdown PEER ...`);
 * on failure err says why (code LS_E_PEER_BUSY: the responder was serving
 * another prober). A refused connect is tried again for BD_REFUSED_RETRY_NS:
 * the breakdown responder restarts between sessions.
 */
int bd_agent_once(int argc, char **argv, struct bd_prom_pair *pp, struct ls_err *err);
/* session.c */
int bd_start(struct bd_ctx *x, struct ls_err *err);
void bd_stop(struct bd_ctx *x);
void bd_ctx_reset(struct bd_ctx *x);
int bd_on_session_start(void *arg, struct ls_err *err);
void bd_on_session_end(void *arg, int rc);
/*
 * --pause-idle: pause (true) or resume (false) the open backend; nothing
 * without --pause-idle or without an open backend. An error when the
 * backend cannot pause or the call failed.
 */
int bd_idle_pause(struct bd_ctx *x, bool paused, struct ls_err *err);
void bd_filter_records(struct ls_bd_host *h, uint64_t from, uint64_t to);
void bd_on_run_start(void *arg, const struct ls_probe_run *run);
void bd_on_run_end(void *arg, const struct ls_probe_run *run);
void bd_counters(struct bd_ctx *x);
/* peer.c */
void bd_obs_json(struct ls_json *j, const char *key, const struct ls_bd_obs *o,
		 double per_ns, double p50_ns);
void bd_cpus_json(struct ls_json *j, const struct ls_bd_host *h);
int bd_on_finish(void *arg, struct ls_oob *oob, bool is_prober, struct ls_err *err);
/* report_text.c */
void bd_print_text(const struct ls_bd_an *a, const struct ls_probe_result *r,
		   const struct bd_cli *c, const struct ls_bd_host *local,
		   const struct ls_bd_host *peer, const struct ls_bd_base *base);
void bd_write_samples(FILE *fp, const struct ls_bd_an *a, const struct ls_probe_run *run);
/* report_json.c */
void bd_print_json(FILE *fp, const struct ls_bd_an *a, const struct ls_probe_result *r,
		   const struct bd_cli *c, const struct ls_bd_host *local,
		   const struct ls_bd_host *peer, const struct ls_bd_base *base);
/* report_prom.c */
int bd_prom_keep(struct bd_prom_pair *pp, const struct ls_bd_an *a,
		 const struct ls_bd_host *local, const struct ls_bd_host *peer,
		 struct ls_err *err);
int bd_write_prom(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		  struct ls_err *err);

#endif /* LS_BD_H */
