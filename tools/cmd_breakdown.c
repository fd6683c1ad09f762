// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown: run the verbs probe while a kernel backend records on
 * both hosts, snapshot counters before and after, and split every sample's
 * one-way latency into transmission + queuing + processing, with a tail
 * decomposition and a verdict. Method: Documentation/methodology.rst.
 *
 *   prober:    latsplit breakdown [OPTIONS] PEER
 *   responder: latsplit breakdown [OPTIONS]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "backend.h"
#include "breakdown.h"
#include "causal.h"
#include "commands.h"
#include "counters.h"
#include "json.h"
#include "jsonr.h"
#include "nic.h"
#include "peers.h"
#include "probe.h"
#include "probe_opts.h"
#include "prom.h"
#include "split.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"
#include "wire.h"

#define BD_DEFAULT_RING_KIB	8192
#define BD_DEFAULT_ITERS	1000
#define BD_MAX_RECORDS		(LS_OOB_MAX_PAYLOAD / sizeof(struct ls_record))
#define BD_DRAIN_MS		500	/* few wakeups: the drain competes with the probe */
#define BD_SLACK_NS		200000000ull	/* records kept around the run */
#define BD_PRERUN_MAX		262144		/* records held while waiting for the run */

static const char *const host_names[2] = { "prober", "responder" };

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
	const char *peers;		/* --peers FILE: a fleet run */
	struct ls_peers plist;		/* its hosts */
	bool verbose;
};

/* What --prom keeps of one measured pair once its analysis is freed. */
struct bd_prom_ctr {
	int host;
	char name[112];
	enum ls_ctr_class cls;
	double value;
};

struct bd_prom_pair {
	char peer[80];
	bool ok;			/* the pair was measured and split */
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
};

/* Print the usage; the option list is the truth the man page is tested against. */
static void usage(FILE *fp)
{
	fprintf(fp,
"usage: latsplit breakdown [OPTIONS] [PEER | --peers FILE]\n"
"\n"
"Split RDMA latency into transmission + queuing + processing. Without PEER:\n"
"responder (run it first on the other host). With PEER: prober; it runs the\n"
"verbs probe while a kernel backend records on both hosts and prints the split.\n"
"\n"
"probe options (as latsplit probe):\n"
"  -d, --ib-dev DEV          RDMA device (default: the first one)\n"
"  -i, --ib-port N           device port (default 1)\n"
"  -x, --gid-index N         GID index (default: first RoCE v2 IPv4 GID)\n"
"  -s, --size BYTES          message size (default 4)\n"
"  -n, --iters N             iterations (default %u)\n"
"  -D, --duration DUR        run for DUR instead of -n\n"
"  -m, --mtu BYTES           path MTU 256..4096 (default: the port's active MTU)\n"
"  -e, --events              completion events instead of busy polling\n"
"  -u, --qp-timeout N        QP local ACK timeout exponent 0..31 (default 14)\n"
"      --verb VERB           write (default), send or read\n"
"      --cpu N               pin the probe to CPU N (default: the CPU it starts on)\n"
"  -p, --port PORT           TCP control port (default %u)\n"
"  -R, --rdma-cm             connect the QP with rdma_cm\n"
"      --connect-timeout DUR connect and handshake timeout (default 5s)\n"
"      --wait-timeout DUR    timeout for one answer, completion or peer data (default 10s)\n"
"      --listen-timeout DUR  responder: give up without a prober (default: never)\n"
"kernel backend:\n"
"  -b, --backend NAME        auto (default), kmod, ebpf or none\n"
"      --ring-kib N          record ring size in KiB (default %u)\n"
"transmission model:\n"
"      --link-gbps G         link rate in Gb/s (default: the port's rate file)\n"
"      --cable-m M           cable metres per hop (default 0; 5 ns/m)\n"
"      --hops N              links between the NICs (default 1)\n"
"      --switch sf|ct        store-and-forward (default) or cut-through switches\n"
"split:\n"
"      --floor-pct P         residual percentile taken as the base floor (default 5)\n"
"      --baseline FILE       an earlier breakdown --json of the same pair, size and\n"
"                            verb taken as healthy: its median residual becomes the\n"
"                            floor, and findings are judged against its figures\n"
"      --tail-pct P          slowest share of samples in the tail (default 1)\n"
"      --preempt-slack DUR   count a preemption of the probe task only when it ends\n"
"                            within DUR before the task saw its message (default 200us)\n"
"verdict (thresholds for a 4-byte one-way latency):\n"
"      --normal-us LO-HI     normal range (default 1.5-3)\n"
"      --abnormal-us X       abnormal above X (default 5)\n"
"      --hurts-us X          hurts training above X (default 10)\n"
"      --share F             share of the p50 that makes queuing or waits a finding (default 0.2)\n"
"      --expect-gbps G       expected link rate: slower is a finding\n"
"output:\n"
"      --json                JSON document on stdout (kind \"breakdown\")\n"
"      --samples FILE        every sample's parts as CSV, with its kernel time\n"
"                            per host and stage\n"
"      --prom FILE           Prometheus text format (node_exporter textfile)\n"
"      --peers FILE          prober for every host in FILE (one per line, '#'\n"
"                            comments), one after another; --json gives one JSON\n"
"                            line per pair, --prom one file with a peer label\n"
"  -v, --verbose             backend loader messages\n"
"  -h, --help                this help\n"
"\n"
"exit status: 0 split done, 1 the run failed after it started (--peers: some\n"
"pair failed), 2 bad input or could not start (--peers: no pair could; also:\n"
"the peer speaks another breakdown protocol).\n",
		BD_DEFAULT_ITERS, LS_OOB_DEFAULT_PORT, BD_DEFAULT_RING_KIB);
}

/* Parse the options into c; returns 0, or LS_EXIT_USAGE after a message. */
static int parse(struct bd_cli *c, int argc, char **argv, bool *help)
{
	enum { O_RING = 256, O_GBPS, O_CABLE, O_HOPS, O_SWITCH, O_FLOOR, O_BASE, O_TAIL,
	       O_NORMAL, O_ABN, O_HURTS, O_SHARE, O_EXPECT, O_JSON, O_SAMPLES, O_PROM,
	       O_SLACK, O_PEERS };
	static const struct option own[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "ring-kib", required_argument, NULL, O_RING },
		{ "link-gbps", required_argument, NULL, O_GBPS },
		{ "cable-m", required_argument, NULL, O_CABLE },
		{ "hops", required_argument, NULL, O_HOPS },
		{ "switch", required_argument, NULL, O_SWITCH },
		{ "floor-pct", required_argument, NULL, O_FLOOR },
		{ "baseline", required_argument, NULL, O_BASE },
		{ "tail-pct", required_argument, NULL, O_TAIL },
		{ "preempt-slack", required_argument, NULL, O_SLACK },
		{ "normal-us", required_argument, NULL, O_NORMAL },
		{ "abnormal-us", required_argument, NULL, O_ABN },
		{ "hurts-us", required_argument, NULL, O_HURTS },
		{ "share", required_argument, NULL, O_SHARE },
		{ "expect-gbps", required_argument, NULL, O_EXPECT },
		{ "json", no_argument, NULL, O_JSON },
		{ "samples", required_argument, NULL, O_SAMPLES },
		{ "prom", required_argument, NULL, O_PROM },
		{ "peers", required_argument, NULL, O_PEERS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ls_probe_opts *o = &c->o;
	struct ls_err err = { "" };
	struct option lo[LS_PROBE_NR_LONGOPTS + ARRAY_SIZE(own)];
	bool have_n = false;
	double d;
	uint64_t v;
	int opt;

	ls_probe_longopts(lo, own, ARRAY_SIZE(own));
	optind = 1;
	while ((opt = getopt_long(argc, argv, LS_PROBE_SHORTOPTS "b:vh", lo, NULL)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'b':
			c->backend = optarg;
			if (strcmp(optarg, "auto") && strcmp(optarg, "kmod") &&
			    strcmp(optarg, "ebpf") && strcmp(optarg, "none"))
				rc = ls_errf(&err, "--backend: '%s' is not auto, kmod, ebpf or none",
					     optarg);
			break;
		case O_RING:
			rc = ls_parse_u64(optarg, 4, 1u << 20, &v, &err, "--ring-kib");
			c->ring_kib = (unsigned int)v;
			break;
		case O_GBPS:
			rc = ls_parse_double(optarg, 1e-3, 1e6, &c->link_gbps, &err, "--link-gbps");
			break;
		case O_CABLE:
			rc = ls_parse_double(optarg, 0, 1e7, &c->cable_m, &err, "--cable-m");
			break;
		case O_HOPS:
			rc = ls_parse_u64(optarg, 1, 64, &v, &err, "--hops");
			c->hops = (unsigned int)v;
			break;
		case O_SWITCH:
			if (!strcmp(optarg, "sf"))
				c->sw = LS_SWITCH_SF;
			else if (!strcmp(optarg, "ct"))
				c->sw = LS_SWITCH_CT;
			else
				rc = ls_errf(&err, "--switch: '%s' is not sf or ct", optarg);
			break;
		case O_FLOOR:
			rc = ls_parse_double(optarg, 0, 100, &d, &err, "--floor-pct");
			c->floor_q = d / 100;
			break;
		case O_BASE:
			c->baseline = optarg;
			break;
		case O_TAIL:
			rc = ls_parse_double(optarg, 1e-6, 100, &d, &err, "--tail-pct");
			c->tail_frac = d / 100;
			break;
		case O_SLACK:
			rc = ls_parse_duration_ns(optarg, &c->preempt_slack_ns, &err,
						  "--preempt-slack");
			break;
		case O_NORMAL:
			rc = ls_parse_range_us(optarg, &c->thr.normal_lo_ns, &c->thr.normal_hi_ns,
					       &err);
			if (rc)
				ls_err_wrap(&err, "--normal-us");
			break;
		case O_ABN:
			rc = ls_parse_double(optarg, 1e-6, 1e9, &d, &err, "--abnormal-us");
			c->thr.abnormal_ns = d * 1e3;
			break;
		case O_HURTS:
			rc = ls_parse_double(optarg, 1e-6, 1e9, &d, &err, "--hurts-us");
			c->thr.hurts_ns = d * 1e3;
			break;
		case O_SHARE:
			rc = ls_parse_double(optarg, 0, 1, &c->thr.share, &err, "--share");
			break;
		case O_EXPECT:
			rc = ls_parse_double(optarg, 1e-3, 1e6, &c->expect_gbps, &err,
					     "--expect-gbps");
			break;
		case O_JSON:
			c->json = true;
			break;
		case O_SAMPLES:
			c->samples = optarg;
			break;
		case O_PROM:
			c->prom = optarg;
			break;
		case O_PEERS:
			c->peers = optarg;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'h':
			*help = true;
			return 0;
		default:
			rc = ls_probe_opt_apply(o, opt, optarg, &err);
			if (rc > 0) {
				usage(stderr);
				return LS_EXIT_USAGE;
			}
			have_n |= opt == 'n';
		}
		if (rc) {
			ls_warn("breakdown: %s", err.msg);
			return LS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		ls_warn("breakdown: one PEER at most ('%s' is extra)", argv[optind + 1]);
		return LS_EXIT_USAGE;
	}
	c->is_prober = argc - optind == 1 || c->peers;
	if (c->peers && argc - optind == 1) {
		ls_warn("breakdown: PEER and --peers: give one");
		return LS_EXIT_USAGE;
	}
	if (c->peers && (c->samples || c->baseline)) {
		ls_warn("breakdown: --samples and --baseline are of one pair: not with --peers");
		return LS_EXIT_USAGE;
	}
	if (argc - optind == 1)
		o->peer = argv[optind];
	if (c->peers)
		o->peer = c->peers;	/* checked as a prober; each host's in turn */
	if (have_n && o->duration_ns) {
		ls_warn("breakdown: --iters and --duration both set the run length: give one");
		return LS_EXIT_USAGE;
	}
	if (o->duration_ns)
		o->iters = 0;
	if (ls_thresholds_check(&c->thr, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (ls_probe_opts_check(o, c->is_prober, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (!c->is_prober && (c->json || c->samples || c->prom || c->baseline)) {
		ls_warn("breakdown: --json, --samples, --prom and --baseline belong to the prober "
			"(the responder ships its data to it)");
		return LS_EXIT_USAGE;
	}
	if (c->peers) {
		if (ls_peers_load(c->peers, &c->plist, &err)) {
			ls_warn("breakdown: %s", err.msg);
			return LS_EXIT_USAGE;
		}
		o->peer = c->plist.v[0];
	}
	return 0;
}

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
static int bd_start(struct bd_ctx *x, struct ls_err *err)
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
		return ls_errf(err, "no RDMA device found (is rdma_rxe loaded and rxe0 created?)");
	if (ls_nic_resolve(x->ibdev, NULL, &nic, err))
		return -1;
	snprintf(h->ibdev, sizeof(h->ibdev), "%s", x->ibdev);
	snprintf(h->netdev, sizeof(h->netdev), "%s", nic.netdev);
	h->nr_irqs = nic.nr_irqs;
	memcpy(h->irqs, nic.irqs, sizeof(h->irqs));
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
static void bd_stop(struct bd_ctx *x)
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
static void filter_records(struct ls_bd_host *h, uint64_t from, uint64_t to)
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
static void on_run_start(void *arg, const struct ls_probe_run *run)
{
	struct bd_ctx *x = arg;
	struct ls_err e;

	if (!x->have_before && !ls_ctr_snapshot(&x->ctr_cfg, &x->before, &e))
		x->have_before = true;
	obs_begin(x);
	x->run_begin = ls_now_ns();
}

/* Probe callback after the last iteration: counters and observer "after". */
static void on_run_end(void *arg, const struct ls_probe_run *run)
{
	struct bd_ctx *x = arg;
	struct ls_err e;

	x->run_end = ls_now_ns();
	obs_end(x);
	if (x->have_after)
		ls_ctr_snap_free(&x->after);
	x->have_after = !ls_ctr_snapshot(&x->ctr_cfg, &x->after, &e);
}

/* Counter deltas of this host (empty when a snapshot failed). */
static void bd_counters(struct bd_ctx *x)
{
	struct ls_err e;

	if (x->have_before && x->have_after &&
	    ls_ctr_diff(&x->before, &x->after, &x->local.ctr, &e))
		ls_warn("breakdown: counters: %s", e.msg);
}

/*
 * The observer's cost as JSON object key (the peer header and --json share
 * it); --json adds the one-way handler time per sample and its share of
 * the p50 (per_ns NAN: left out).
 */
static void obs_json(struct ls_json *j, const char *key, const struct ls_bd_obs *o,
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

/* Member key of obj as a non-negative integer; false when absent or not one. */
static bool ju64(const struct ls_jv *obj, const char *key, uint64_t *out)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	if (!v || v->type != LS_JNUM || !(v->num >= 0) || v->num > 9007199254740992.0)
		return false;
	*out = (uint64_t)v->num;
	return true;
}

/* Write h's header as the peer JSON object (see breakdown.h). */
void ls_bd_peer_write(FILE *fp, const struct ls_bd_host *h, unsigned int proto)
{
	struct ls_json j;
	char cpus[256];

	ls_json_init(&j, fp, false);
	ls_json_obj_open(&j, NULL);
	ls_json_u64(&j, "schema", LS_JSON_SCHEMA);
	ls_json_str(&j, "kind", "breakdown-peer");
	ls_json_u64(&j, "proto", proto);
	ls_json_bool(&j, "measured", h->measured);
	ls_json_str(&j, "backend", h->backend);
	ls_json_str(&j, "why", h->why);
	ls_format_cpulist(h->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	ls_json_str(&j, "cpus", cpus);
	ls_json_i64(&j, "probe_cpu", h->probe_cpu);
	ls_json_arr_open(&j, "irqs");
	for (unsigned int i = 0; i < h->nr_irqs; i++)
		ls_json_u64(&j, NULL, h->irqs[i]);
	ls_json_arr_close(&j);
	ls_json_u64(&j, "records", h->records);
	ls_json_u64(&j, "drops", h->drops);
	ls_json_bool(&j, "truncated", h->truncated);
	ls_json_u64(&j, "shipped", h->nrec);
	ls_json_str(&j, "ibdev", h->ibdev);
	ls_json_str(&j, "netdev", h->netdev);
	ls_json_str(&j, "rate", h->rate);
	ls_json_dbl(&j, "link_gbps", h->link_gbps);
	obs_json(&j, "observer", &h->obs, NAN, 0);
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

/* Member key of obj as a number; false when absent or not a number. */
static bool jnum(const struct ls_jv *obj, const char *key, double *out)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	if (!v || v->type != LS_JNUM)
		return false;
	*out = v->num;
	return true;
}

/* Member key of obj as a string into buf; false when absent or not a string. */
static bool jstr(const struct ls_jv *obj, const char *key, char *buf, size_t len)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	if (!v || v->type != LS_JSTR)
		return false;
	snprintf(buf, len, "%s", v->str.s);
	return true;
}

/* Member key of obj as a boolean; false when absent or not a boolean. */
static bool jbool(const struct ls_jv *obj, const char *key, bool *out)
{
	const struct ls_jv *v = ls_jv_get(obj, key);

	if (!v || v->type != LS_JBOOL)
		return false;
	*out = v->b;
	return true;
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
	jbool(v, "ok", &o->ok);
	if (!o->ok && !jstr(v, "why", o->why, sizeof(o->why)))
		snprintf(o->why, sizeof(o->why), "the responder could not measure it");
	o->all_cpus = jstr(v, "scope", scope, sizeof(scope)) && !strcmp(scope, "all_cpus");
	ju64(v, "run_ns", &o->run_ns);
	ju64(v, "hits", &o->hits);
	ju64(v, "ns", &o->ns);
	ju64(v, "all_cpus_hits", &o->all_hits);
	ju64(v, "all_cpus_ns", &o->all_ns);
	a = ls_jv_get(v, "handlers");
	for (size_t i = 0; a && a->type == LS_JARR && i < a->arr.n; i++) {
		const struct ls_jv *e = &a->arr.v[i], *n = ls_jv_get(e, "name");

		for (unsigned int k = 0; n && n->type == LS_JSTR && k < LS_NR_HANDLERS; k++) {
			if (strcmp(n->str.s, ls_handler_name(k)))
				continue;
			ju64(e, "hits", &o->h_hits[k]);
			ju64(e, "ns", &o->h_ns[k]);
		}
	}
	jbool(v, "drain_ok", &o->drain_ok);
	ju64(v, "drain_cpu_ns", &o->drain_cpu_ns);
}

/* Free a host's records and counter deltas. */
void ls_bd_host_free(struct ls_bd_host *h)
{
	free(h->rec);
	h->rec = NULL;
	h->nrec = 0;
	ls_ctr_diff_free(&h->ctr);
}

/* Parse a peer header; another proto or kind is a clear error. */
int ls_bd_peer_parse(const char *text, size_t len, struct ls_bd_host *h,
		     struct ls_err *err)
{
	const struct ls_jv *root, *a;
	struct ls_jdoc doc;
	char kind[64], cpus[256];
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
	if (!jstr(root, "kind", kind, sizeof(kind)) || strcmp(kind, "breakdown-peer")) {
		ls_errf(err, "responder header: kind is not \"breakdown-peer\": is the peer running `latsplit breakdown`?");
		goto out;
	}
	if (!jnum(root, "proto", &proto) || proto != LS_BD_PROTO ||
	    !jnum(root, "schema", &d) || d != LS_JSON_SCHEMA) {
		ls_errf(err, "the responder speaks breakdown protocol %g (JSON schema %g), this latsplit speaks protocol %d (schema %d): run the same latsplit version on both hosts",
			jnum(root, "proto", &proto) ? proto : -1.0,
			jnum(root, "schema", &d) ? d : -1.0, LS_BD_PROTO, LS_JSON_SCHEMA);
		goto out;
	}
	if (!jbool(root, "measured", &h->measured) ||
	    !jstr(root, "backend", h->backend, sizeof(h->backend)) ||
	    !jstr(root, "why", h->why, sizeof(h->why)) ||
	    !jstr(root, "cpus", cpus, sizeof(cpus)) ||
	    !jnum(root, "probe_cpu", &d)) {
		ls_errf(err, "responder header: a required member (measured, backend, why, cpus, probe_cpu) is missing or mistyped");
		goto out;
	}
	h->probe_cpu = (int)d;
	if (cpus[0] && ls_parse_cpulist(cpus, h->cpumask, LS_MAX_CPUS, err)) {
		ls_err_wrap(err, "responder header: cpus");
		goto out;
	}
	a = ls_jv_get(root, "irqs");
	if (a && a->type == LS_JARR) {
		for (size_t i = 0; i < a->arr.n && h->nr_irqs < LS_MAX_IRQS; i++)
			if (a->arr.v[i].type == LS_JNUM)
				h->irqs[h->nr_irqs++] = (uint32_t)a->arr.v[i].num;
	}
	if (jnum(root, "records", &d))
		h->records = (uint64_t)d;
	if (jnum(root, "drops", &d))
		h->drops = (uint64_t)d;
	jbool(root, "truncated", &h->truncated);
	jstr(root, "ibdev", h->ibdev, sizeof(h->ibdev));
	jstr(root, "netdev", h->netdev, sizeof(h->netdev));
	jstr(root, "rate", h->rate, sizeof(h->rate));
	jnum(root, "link_gbps", &h->link_gbps);
	obs_parse(root, &h->obs);
	a = ls_jv_get(root, "counters");
	if (a && a->type == LS_JARR && a->arr.n) {
		h->ctr.v = calloc(a->arr.n, sizeof(*h->ctr.v));
		if (!h->ctr.v) {
			ls_errnof(err, ENOMEM, "responder counters");
			goto out;
		}
		for (size_t i = 0; i < a->arr.n; i++) {
			const struct ls_jv *o = &a->arr.v[i];
			struct ls_ctr_delta *c = &h->ctr.v[h->ctr.n];
			double b = 0, af = 0;

			if (o->type != LS_JOBJ || !jstr(o, "name", c->name, sizeof(c->name)))
				continue;
			jbool(o, "ok", &c->ok);
			jbool(o, "gauge", &c->gauge);
			jnum(o, "before", &b);
			jnum(o, "after", &af);
			jstr(o, "error", c->error, sizeof(c->error));
			c->before = (uint64_t)b;
			c->after = (uint64_t)af;
			c->delta = (int64_t)(c->after - c->before);
			c->cls = ls_ctr_classify(c->name);
			if (!c->ok)
				h->ctr.unreadable++;
			h->ctr.n++;
		}
	}
	ret = 0;
out:
	ls_jr_free(&doc);
	return ret;
}

/* Probe finish hook: the responder ships its header and records; the prober receives them. */
static int on_finish(void *arg, struct ls_oob *oob, bool is_prober, struct ls_err *err)
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
	filter_records(&x->local, x->run_begin > BD_SLACK_NS ? x->run_begin - BD_SLACK_NS : 0,
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

/* A baseline run's figures (from its --json). */
struct bd_base {
	bool have;
	double floor_ns, total_p50, part_p50[LS_NR_PARTS], kernel_p50;
	struct { int host; unsigned int cpu; double mean_ns; } cpu[2 * LS_MAX_CPUS];
	unsigned int ncpu;
};

/* Everything the prober computes after the run. */
struct bd_an {
	size_t n;
	unsigned int div;
	double *total;
	double *kern_rtt;		/* union of both hosts' kernel time in the RTT window */
	double *kernel;			/* one-way kernel-attributed */
	struct ls_window *win;		/* the prober's sample windows */
	size_t preempt_dropped;		/* preemptions not ending at a "seen" */
	struct ls_attr attr;		/* what was on the samples' path */
	bool attr_ok;
	bool per_window;		/* keep attr's figures per sample and stage (--samples, verdict) */
	struct ls_attr conc;		/* receive-path work that only overlapped them */
	bool conc_ok;
	struct {
		size_t packets, matched, samples, n;
		size_t delivered, sent;	/* samples with a DELIVER, a SEND span */
	} rx[2];			/* per host: its probe packets as RX_PKT saw them */
	bool host_measured[2];
	uint8_t *tail;
	size_t tail_n;
	int64_t theta_ns;		/* responder clock - prober clock */
	bool have_theta;
	size_t peer_n;			/* samples with responder stamps */
	struct ls_wire_cfg wcfg;
	struct ls_wire wire;
	char rate_text[96];
	struct ls_split_out sp;
	struct ls_vd_cpu *vcpu;
	size_t nvcpu;
	struct ls_vd_ctr *vctr;
	size_t nvctr;
	struct ls_vd_in vin;
	struct ls_verdict v;
	struct ls_thresholds thr;
};

/* Load a baseline breakdown JSON (same size and verb). */
static int load_baseline(const char *path, uint32_t size, enum ls_probe_verb verb,
			 struct bd_base *b, struct ls_err *err)
{
	const struct ls_jv *root, *in, *fl, *parts, *st, *p;
	static const char *const pn[LS_NR_PARTS] = { "transmission", "queuing", "processing" };
	struct ls_jdoc doc;
	char kind[32], vb[16];
	double d = -1;
	int ret = -1;

	memset(b, 0, sizeof(*b));
	if (ls_jr_parse_file(&doc, path, NULL, err))
		return ls_err_wrap(err, "--baseline");
	root = &doc.root;
	if (root->type != LS_JOBJ || !jstr(root, "kind", kind, sizeof(kind)) ||
	    strcmp(kind, "breakdown")) {
		ls_errf(err, "--baseline %s: not a breakdown JSON document", path);
		goto out;
	}
	if (!jnum(root, "schema", &d) || d != LS_JSON_SCHEMA) {
		ls_errf(err, "--baseline %s: JSON schema %g, this latsplit reads schema %d",
			path, d, LS_JSON_SCHEMA);
		goto out;
	}
	in = ls_jv_get(root, "inputs");
	fl = ls_jv_get(root, "floor");
	parts = ls_jv_get(root, "parts");
	if (!in || !fl || !parts || !jnum(in, "size", &d) || !jstr(in, "verb", vb, sizeof(vb)) ||
	    !jnum(fl, "residual_p50_ns", &b->floor_ns) ||
	    !jnum(ls_jv_get(root, "total") ? ls_jv_get(root, "total") : root, "p50_ns", &b->total_p50)) {
		ls_errf(err, "--baseline %s: inputs.size, inputs.verb, floor.residual_p50_ns or total.p50_ns missing",
			path);
		goto out;
	}
	if ((uint32_t)d != size || strcmp(vb, ls_probe_verb_name(verb))) {
		ls_errf(err, "--baseline %s was measured with %s %g B, this run is %s %u B: compare like with like",
			path, vb, d, ls_probe_verb_name(verb), size);
		goto out;
	}
	for (int i = 0; i < LS_NR_PARTS; i++) {
		p = ls_jv_get(parts, pn[i]);
		if (!p || !jnum(p, "p50_ns", &b->part_p50[i])) {
			ls_errf(err, "--baseline %s: parts.%s.p50_ns missing", path, pn[i]);
			goto out;
		}
	}
	p = ls_jv_get(parts, "kernel");
	if (!p || !jnum(p, "p50_ns", &b->kernel_p50)) {
		ls_errf(err, "--baseline %s: parts.kernel.p50_ns missing", path);
		goto out;
	}
	st = ls_jv_get(root, "stages");
	if (st && st->type == LS_JARR) {
		for (size_t i = 0; i < st->arr.n; i++) {
			const struct ls_jv *o = &st->arr.v[i];
			char host[16];
			double cpu, mean;
			unsigned int k;
			int h;

			if (!jstr(o, "host", host, sizeof(host)) || !jnum(o, "cpu", &cpu) ||
			    !jnum(o, "mean_ns", &mean) || cpu < 0 || cpu >= LS_MAX_CPUS)
				continue;
			h = !strcmp(host, "responder");
			for (k = 0; k < b->ncpu; k++)
				if (b->cpu[k].host == h && b->cpu[k].cpu == (unsigned int)cpu)
					break;
			if (k == b->ncpu) {
				if (k == ARRAY_SIZE(b->cpu))
					continue;
				b->cpu[k].host = h;
				b->cpu[k].cpu = (unsigned int)cpu;
				b->cpu[k].mean_ns = 0;
				b->ncpu++;
			}
			b->cpu[k].mean_ns += mean;
		}
	}
	b->have = true;
	ret = 0;
out:
	ls_jr_free(&doc);
	return ret;
}

/* Sort context for the clock-offset estimate. */
static const int64_t *theta_net;

/* qsort comparator: sample indices by their network round trip. */
static int net_cmp(const void *a, const void *b)
{
	int64_t x = theta_net[*(const size_t *)a], y = theta_net[*(const size_t *)b];

	return (x > y) - (x < y);
}

/* qsort comparator for int64. */
static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Clock offset theta = responder clock - prober clock, NTP-style: per sample
 * ((seen - start) + (answered - end)) / 2, median over the 1 % of samples
 * with the smallest network round trip (RTT minus the responder's own time),
 * which queuing skewed least. An asymmetric path (e.g. a delay on one
 * direction only) biases it by half the asymmetry.
 */
static int estimate_theta(struct bd_an *a, const struct ls_probe_run *run,
			  struct ls_err *err)
{
	size_t m = a->peer_n, k;
	int64_t *net, *th;
	size_t *idx;

	if (!m)
		return 0;
	net = malloc(m * sizeof(*net));
	th = malloc(m * sizeof(*th));
	idx = malloc(m * sizeof(*idx));
	if (!net || !th || !idx) {
		free(net);
		free(th);
		free(idx);
		return ls_errnof(err, ENOMEM, "clock offset");
	}
	for (size_t i = 0; i < m; i++) {
		const struct ls_probe_sample *s = &run->samples[i], *p = &run->peer[i];

		net[i] = (int64_t)(s->end_ns - s->start_ns) - (int64_t)(p->end_ns - p->start_ns);
		th[i] = ((int64_t)(p->start_ns - s->start_ns) + (int64_t)(p->end_ns - s->end_ns)) / 2;
		idx[i] = i;
	}
	theta_net = net;
	qsort(idx, m, sizeof(*idx), net_cmp);
	k = m / 100 ? m / 100 : 1;
	for (size_t i = 0; i < k; i++)
		net[i] = th[idx[i]];	/* reuse: the best samples' offsets */
	qsort(net, k, sizeof(*net), i64_cmp);
	a->theta_ns = net[k / 2];
	a->have_theta = true;
	free(net);
	free(th);
	free(idx);
	return 0;
}

/*
 * A busy-polling probe task switched out while it waits delays nothing
 * unless its message arrives meanwhile; the preemption that matters is the
 * one that ends just before the task saw the message. Keep a PREEMPT record
 * only if it ends within slack before some "seen" instant (ascending).
 */
static bool preempt_counts(const struct ls_record *r, const uint64_t *seen, size_t n,
			   uint64_t slack)
{
	size_t lo = 0, hi = n;

	if (r->stage != LS_STAGE_PREEMPT)
		return true;
	while (lo < hi) {		/* first seen >= end */
		size_t mid = lo + (hi - lo) / 2;

		if (seen[mid] < r->end_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && seen[lo] - r->end_ns <= slack;
}

/* A record for the attribution, with the one window it counts for (-1: any). */
struct bd_ent {
	struct ls_record r;
	long long only;
};

/* What the attribution is fed: causal entries, and concurrent records. */
struct bd_sets {
	struct bd_ent *ent;
	size_t nent, capent;
	struct ls_record *conc;
	size_t nconc, capconc;
};

/* Append an entry (record r counting for window only, or -1 for any). */
static int sets_ent(struct bd_sets *S, const struct ls_record *r, long long only)
{
	if (S->nent == S->capent) {
		size_t nc = S->capent ? 2 * S->capent : 4096;
		struct bd_ent *v = realloc(S->ent, nc * sizeof(*v));

		if (!v)
			return -1;
		S->ent = v;
		S->capent = nc;
	}
	S->ent[S->nent++] = (struct bd_ent){ *r, only };
	return 0;
}

/* Append a concurrent record. */
static int sets_conc(struct bd_sets *S, const struct ls_record *r)
{
	if (S->nconc == S->capconc) {
		size_t nc = S->capconc ? 2 * S->capconc : 4096;
		struct ls_record *v = realloc(S->conc, nc * sizeof(*v));

		if (!v)
			return -1;
		S->conc = v;
		S->capconc = nc;
	}
	S->conc[S->nconc++] = *r;
	return 0;
}

/* qsort comparator: entries by start, then CPU. */
static int ent_cmp(const void *x, const void *y)
{
	const struct bd_ent *p = x, *q = y;

	if (p->r.start_ns != q->r.start_ns)
		return p->r.start_ns < q->r.start_ns ? -1 : 1;
	if (p->r.cpu != q->r.cpu)
		return p->r.cpu < q->r.cpu ? -1 : 1;
	return 0;
}

/*
 * A probe-task record (already in the prober's clock) into the sets, once
 * per window it overlaps, from that sample's message's arrival on (arrive,
 * the host's clock: shift moves it): before the message was there the
 * task had nothing to see, so time taken from it then delayed nothing.
 */
static int task_ents(const struct bd_an *a, struct bd_sets *S, const struct ls_record *r,
		     const uint64_t *arrive, size_t n, int64_t shift)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {		/* first window starting after the record */
		size_t mid = lo + (hi - lo) / 2;

		if (a->win[mid].start_ns <= r->start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && a->win[lo - 1].end_ns > r->start_ns)
		lo--;
	for (size_t j = lo; j < a->n && a->win[j].start_ns < r->end_ns; j++) {
		struct ls_record c = *r;
		int64_t from = j < n && arrive[j] ? (int64_t)arrive[j] - shift : 0;

		if ((int64_t)c.start_ns < from)
			c.start_ns = (uint64_t)from;
		if (c.end_ns > c.start_ns && sets_ent(S, &c, (long long)j))
			return -1;
	}
	return 0;
}

/*
 * A span the host derived for sample i (DELIVER, SEND) from `from` to `to`
 * in its clock, on its CPU cpu, into the sets (moved by shift, cpu_off).
 */
static int span_ent(struct bd_sets *S, unsigned int stage, size_t i, uint64_t from,
		    uint64_t to, uint32_t cpu, int64_t shift, unsigned int cpu_off)
{
	struct ls_record c = { .stage = stage, .cpu = cpu + cpu_off };
	int64_t st = (int64_t)from - shift, en = (int64_t)to - shift;

	if (!from || st < 0 || en <= st || cpu >= LS_MAX_CPUS)
		return 0;
	c.start_ns = (uint64_t)st;
	c.end_ns = (uint64_t)en;
	return sets_ent(S, &c, (long long)i);
}

/*
 * One host's records into the sets, causally (see causal.h): the probe
 * task's stages count for the windows they overlap from the sample's
 * message's arrival on (a PREEMPT only when it ends just before a "seen"
 * of pre_seen), the receive path only for the samples whose packets it
 * carried, the rest of the receive path is concurrent; each message's
 * DELIVER (its last packet in to "seen") and, with tx, SEND (posted to its
 * last packet out). shift moves the records into the prober's clock,
 * cpu_off keeps the hosts' CPUs apart.
 */
static int host_sets(struct bd_an *a, int hi, const struct ls_bd_host *h,
		     const struct ls_causal_in *cin, const struct ls_causal_tx *tx,
		     const uint64_t *pre_seen, size_t pre_n, uint64_t slack, int64_t shift,
		     unsigned int cpu_off, struct bd_sets *S, struct ls_err *err)
{
	size_t nt = tx && tx->n ? tx->n : 1;
	struct ls_causal_out co;
	uint64_t *arrive, *left;
	uint32_t *left_cpu;
	size_t l = 0;
	int ret = 0;

	arrive = malloc((cin->n ? cin->n : 1) * sizeof(*arrive));
	left = malloc(nt * sizeof(*left));
	left_cpu = malloc(nt * sizeof(*left_cpu));
	if (!arrive || !left || !left_cpu) {
		ls_errnof(err, ENOMEM, "arrivals of %zu samples", cin->n);
		goto fail;
	}
	if (ls_causal_link(cin, &co, err))
		goto fail;
	ls_causal_arrivals(cin, &co, arrive);
	a->rx[hi].packets = co.packets;
	a->rx[hi].matched = co.matched;
	a->rx[hi].samples = co.samples;
	a->rx[hi].n = cin->n;
	for (size_t i = 0; i < h->nrec && !ret; i++) {
		struct ls_record r = h->rec[i];
		int64_t st = (int64_t)r.start_ns - shift;
		int64_t en = (int64_t)r.end_ns - shift;

		if (st < 0 || en < st || r.cpu >= LS_MAX_CPUS)
			continue;
		r.start_ns = (uint64_t)st;
		r.end_ns = (uint64_t)en;
		r.cpu += cpu_off;
		if (ls_stage_task(r.stage)) {
			if (preempt_counts(&h->rec[i], pre_seen, pre_n, slack))
				ret = task_ents(a, S, &r, arrive, cin->n, shift);
			else
				a->preempt_dropped++;
		} else if (ls_stage_rx_path(r.stage) && !co.linked[i]) {
			ret = sets_conc(S, &r);
		} else if (ls_stage_rx_path(r.stage)) {
			while (l < co.nlink && co.link[l].rec < i)
				l++;
			for (; l < co.nlink && co.link[l].rec == i && !ret; l++) {
				/* only the part on the sample's path: its span, clipped */
				const struct ls_causal_link *k = &co.link[l];
				struct ls_record c = r;
				int64_t from = (int64_t)k->from - shift;
				int64_t to = (int64_t)k->to - shift;

				if ((int64_t)c.start_ns < from)
					c.start_ns = from > 0 ? (uint64_t)from : 0;
				if ((int64_t)c.end_ns > to)
					c.end_ns = to > 0 ? (uint64_t)to : 0;
				if (c.end_ns > c.start_ns)
					ret = sets_ent(S, &c, (long long)k->sample);
			}
		}
	}
	/* the message in the host: its last packet in to "seen" */
	for (size_t i = 0; cin->seen_app && i < cin->n && !ret; i++) {
		a->rx[hi].delivered += co.last_rx[i] && co.last_rx[i] < cin->seen[i];
		ret = span_ent(S, LS_STAGE_DELIVER, i, co.last_rx[i], cin->seen[i],
			       co.last_cpu[i], shift, cpu_off);
	}
	/* and the host's own message: posted to its last packet out */
	if (tx) {
		ls_causal_sent(tx, left, left_cpu);
		for (size_t i = 0; i < tx->n && !ret; i++) {
			a->rx[hi].sent += left[i] != 0;
			ret = span_ent(S, LS_STAGE_SEND, i, left[i] ? tx->posted[i] : 0,
				       left[i], left_cpu[i], shift, cpu_off);
		}
	}
	ls_causal_free(&co);
	free(arrive);
	free(left);
	free(left_cpu);
	if (ret)
		return ls_errnof(err, ENOMEM, "attribution: %zu records", h->nrec);
	return 0;
fail:
	free(arrive);
	free(left);
	free(left_cpu);
	return -1;
}

/*
 * One attribution over the prober's windows of both hosts' records: the
 * responder's moved into the prober's clock (minus theta) with their CPU
 * ids offset by LS_MAX_CPUS, so an instant where both hosts were busy is
 * counted once and the kernel part never exceeds the round trip. Only what
 * was on a sample's path counts (host_sets); what merely overlapped it goes
 * into a second attribution, the concurrent context.
 */
static int attribute(struct bd_an *a, const struct ls_probe_run *run,
		     struct ls_bd_host *local, struct ls_bd_host *peer, uint64_t slack,
		     struct ls_err *err)
{
	struct ls_attr_cfg cfg = { .win = a->win, .n = a->n, .tail = a->tail,
				   .stage_mask = LS_ATTR_ALL_STAGES,
				   .per_window = a->per_window };
	uint64_t *seen = malloc((a->n ? a->n : 1) * sizeof(*seen));
	uint64_t *rx_seen = malloc((a->n ? a->n : 1) * sizeof(*rx_seen));
	uint64_t *sent = malloc((a->n ? a->n : 1) * sizeof(*sent));
	uint64_t *posted = malloc((a->n ? a->n : 1) * sizeof(*posted));
	uint64_t *app = malloc((a->n ? a->n : 1) * sizeof(*app));	/* the sender's application stamps */
	struct bd_sets S = { 0 };
	int ret = -1;

	if (!seen || !rx_seen || !sent || !posted || !app) {
		ls_errnof(err, ENOMEM, "%zu samples", a->n);
		goto out;
	}
	if (local->measured) {
		struct ls_causal_in cin = {
			.rec = local->rec, .nrec = local->nrec, .n = a->n, .seen = seen,
			.qpn = run->qpn, .psn0 = run->ans_psn0, .pkts = run->pkts,
			.seen_app = true, .requests = false,
		};

		/*
		 * an answer cannot arrive before its first packet left the
		 * responder (its TX_PKT, else its "answered" stamp)
		 */
		if (a->have_theta && a->peer_n == a->n) {
			struct ls_causal_tx ans = {
				.rec = peer && peer->measured ? peer->rec : NULL,
				.nrec = peer && peer->measured ? peer->nrec : 0,
				.n = a->n, .posted = app, .qpn = run->qpn,
				.psn0 = run->ans_psn0, .pkts = run->pkts, .requests = false,
			};

			for (size_t i = 0; i < a->n; i++)
				app[i] = run->peer[i].end_ns;
			ls_causal_sent_bound(&ans, app, -a->theta_ns, sent);
			cin.sent = sent;
		}
		/* its request: posted at the sample's start, to the responder's QP */
		struct ls_causal_tx tx = {
			.rec = local->rec, .nrec = local->nrec, .n = a->n, .posted = posted,
			.qpn = run->peer_qpn, .psn0 = run->req_psn0, .pkts = run->pkts,
			.requests = true,
		};

		memcpy(cfg.cpumask, local->cpumask, sizeof(local->cpumask));
		for (size_t i = 0; i < a->n; i++) {
			seen[i] = run->samples[i].end_ns;	/* the prober saw the answer */
			posted[i] = run->samples[i].start_ns;
		}
		if (host_sets(a, 0, local, &cin, &tx, seen, a->n, slack, 0, 0, &S, err))
			goto out;
		a->host_measured[0] = true;
	}
	if (peer && peer->measured && a->have_theta) {
		/*
		 * The responder saw sample i's request at peer[i].start_ns; a
		 * run without those stamps (READ: no responder code runs)
		 * bounds its path by the window's end in its clock.
		 */
		size_t rx_n = a->peer_n ? a->peer_n : a->n;
		struct ls_causal_in cin = {
			.rec = peer->rec, .nrec = peer->nrec, .n = rx_n, .seen = rx_seen,
			.qpn = run->peer_qpn, .psn0 = run->req_psn0, .pkts = run->pkts,
			.seen_app = a->peer_n > 0, .requests = true,
		};

		for (int w = 0; w < LS_CPUMASK_WORDS; w++)
			cfg.cpumask[LS_CPUMASK_WORDS + w] = peer->cpumask[w];
		for (size_t i = 0; i < a->peer_n; i++)
			seen[i] = run->peer[i].start_ns;
		/*
		 * a request cannot arrive before its first packet left the
		 * prober (its TX_PKT, else the sample's start)
		 */
		struct ls_causal_tx req = {
			.rec = local->measured ? local->rec : NULL,
			.nrec = local->measured ? local->nrec : 0,
			.n = rx_n, .posted = app, .qpn = run->peer_qpn,
			.psn0 = run->req_psn0, .pkts = run->pkts, .requests = true,
		};

		for (size_t i = 0; i < rx_n; i++)
			app[i] = run->samples[i].start_ns;
		ls_causal_sent_bound(&req, app, a->theta_ns, sent);
		cin.sent = sent;
		for (size_t i = 0; i < rx_n; i++)
			rx_seen[i] = a->peer_n ? run->peer[i].start_ns :
				     (uint64_t)((int64_t)run->samples[i].end_ns + a->theta_ns);
		/* its answer: posted at its "answered" stamp, to the prober's QP */
		struct ls_causal_tx tx = {
			.rec = peer->rec, .nrec = peer->nrec, .n = a->peer_n, .posted = posted,
			.qpn = run->qpn, .psn0 = run->ans_psn0, .pkts = run->pkts,
			.requests = false,
		};

		for (size_t i = 0; i < a->peer_n; i++)
			posted[i] = run->peer[i].end_ns;
		if (host_sets(a, 1, peer, &cin, a->peer_n ? &tx : NULL, seen, a->peer_n, slack, a->theta_ns,
			      LS_MAX_CPUS, &S, err))
			goto out;
		a->host_measured[1] = true;
	}
	if (ls_attr_init(&a->attr, &cfg, err))
		goto out;
	a->attr_ok = true;
	if (ls_attr_init(&a->conc, &cfg, err))
		goto out;
	a->conc_ok = true;
	qsort(S.ent, S.nent, sizeof(*S.ent), ent_cmp);
	for (size_t i = 0; i < S.nent; i++)
		if (ls_attr_push_for(&a->attr, &S.ent[i].r, S.ent[i].only, err))
			goto out;
	ls_attr_finish(&a->attr);
	ls_records_sort(S.conc, S.nconc);
	for (size_t i = 0; i < S.nconc; i++)
		if (ls_attr_push(&a->conc, &S.conc[i], err))
			goto out;
	ls_attr_finish(&a->conc);
	for (size_t i = 0; i < a->n; i++)
		a->kern_rtt[i] = (double)a->attr.kernel_ns[i];
	ret = 0;
out:
	free(S.ent);
	free(S.conc);
	free(seen);
	free(rx_seen);
	free(sent);
	free(posted);
	free(app);
	return ret;
}

/* Cell of (host, cpu, stage) in an attribution of both hosts. */
static const struct ls_attr_cell *cell_in(const struct ls_attr *at, int h, unsigned int cpu,
					  unsigned int st)
{
	return &at->cells[((unsigned int)h * LS_MAX_CPUS + cpu) * LS_NR_STAGES + st];
}

/* Cell of (host, cpu, stage) in the causal attribution. */
static const struct ls_attr_cell *cell_of(const struct bd_an *a, int h, unsigned int cpu,
					  unsigned int st)
{
	return cell_in(&a->attr, h, cpu, st);
}

/* More than 1 % of the samples had more kernel time on their path than latency. */
static bool unreliable(const struct bd_an *a)
{
	return a->sp.clamped * 100 > a->n;
}

/* Map the probe's verb (and mode) to the wire model's. */
static enum ls_wire_verb wire_verb(enum ls_probe_verb v, bool events)
{
	switch (v) {
	case LS_VERB_SEND:
		return LS_WIRE_SEND;
	case LS_VERB_READ:
		return LS_WIRE_READ;
	default:
		return events ? LS_WIRE_WRITE_IMM : LS_WIRE_WRITE;
	}
}

/* Fill the verdict inputs from the split, the cells and the counters. */
static int verdict_inputs(struct bd_an *a, struct ls_bd_host *hosts[2],
			  const struct bd_base *base, const struct bd_cli *c)
{
	struct ls_vd_in *in = &a->vin;
	size_t cap = 0;

	memset(in, 0, sizeof(*in));
	in->total_p50 = a->sp.sum_total.p50;
	in->total_p99 = a->sp.sum_total.p99;
	for (int p = 0; p < LS_NR_PARTS; p++) {
		in->part_p50[p] = a->sp.sum_part[p].p50;
		in->tail_share[p] = a->sp.tail_share[p];
	}
	in->kernel_p50 = a->sp.sum_kernel.p50;
	in->base_p50 = a->sp.sum_base.p50;
	in->tail_excess_ns = a->sp.tail_excess_ns;
	in->recorded = a->host_measured[0] || a->host_measured[1];
	in->rate_gbps = a->wcfg.link_gbps;
	in->expect_gbps = c->expect_gbps;
	if (base->have) {
		in->have_baseline = true;
		in->b_total_p50 = base->total_p50;
		memcpy(in->b_part_p50, base->part_p50, sizeof(in->b_part_p50));
		in->b_kernel_p50 = base->kernel_p50;
	}
	a->vcpu = calloc(2 * LS_MAX_CPUS, sizeof(*a->vcpu));
	for (int h = 0; h < 2; h++)
		if (hosts[h])
			cap += hosts[h]->ctr.n;
	a->vctr = calloc(cap ? cap : 1, sizeof(*a->vctr));
	if (!a->vcpu || !a->vctr)
		return -1;
	for (int h = 0; h < 2; h++) {
		if (!a->attr_ok)
			break;
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			struct ls_vd_cpu *v = &a->vcpu[a->nvcpu];
			uint64_t sum = 0, tail = 0, best = 0, wait = 0, work = 0;
			uint64_t best_wait = 0, best_work = 0;

			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = cell_of(a, h, cpu, st);

				sum += cell->total_ns;
				tail += cell->tail_ns;
				if (cell->total_ns > best) {
					best = cell->total_ns;
					v->stage = st;
				}
				if (LS_VD_WAIT_STAGES & (1u << st)) {
					wait += cell->total_ns;
					if (cell->total_ns > best_wait) {
						best_wait = cell->total_ns;
						v->wait_stage = st;
					}
				} else if (LS_VD_WORK_STAGES & (1u << st)) {
					work += cell->total_ns;
					if (cell->total_ns > best_work) {
						best_work = cell->total_ns;
						v->work_stage = st;
					}
				}
			}
			if (!sum)
				continue;
			v->host = h;
			v->cpu = cpu;
			v->mean_ns = (double)sum / a->n / a->div;
			v->wait_mean_ns = (double)wait / a->n / a->div;
			v->work_mean_ns = (double)work / a->n / a->div;
			v->tail_mean_ns = a->tail_n ? (double)tail / a->tail_n / a->div : 0;
			v->base_mean_ns = base->have ? 0 : NAN;
			for (unsigned int k = 0; k < base->ncpu; k++)
				if (base->cpu[k].host == h && base->cpu[k].cpu == cpu)
					v->base_mean_ns = base->cpu[k].mean_ns;
			a->nvcpu++;
		}
	}
	for (int h = 0; h < 2; h++) {
		if (!hosts[h])
			continue;
		for (size_t i = 0; i < hosts[h]->ctr.n; i++) {
			const struct ls_ctr_delta *d = &hosts[h]->ctr.v[i];

			if (!ls_ctr_moved(d))
				continue;
			a->vctr[a->nvctr++] = (struct ls_vd_ctr){
				.host = h, .name = d->name, .cls = d->cls, .delta = d->delta,
				.after = d->after, .gauge = d->gauge };
		}
	}
	in->cpus = a->vcpu;
	in->ncpus = a->nvcpu;
	in->ctrs = a->vctr;
	in->nctrs = a->nvctr;
	return 0;
}

/* Free the analysis. */
static void an_free(struct bd_an *a)
{
	free(a->total);
	free(a->kern_rtt);
	free(a->kernel);
	free(a->win);
	free(a->tail);
	if (a->attr_ok)
		ls_attr_free(&a->attr);
	if (a->conc_ok)
		ls_attr_free(&a->conc);
	ls_split_free(&a->sp);
	free(a->vcpu);
	free(a->vctr);
}

/* Run the whole analysis on the prober's result and both hosts' data. */
static int analyze(struct bd_an *a, const struct ls_probe_result *r, struct bd_cli *c,
		   struct ls_bd_host *local, struct ls_bd_host *peer,
		   const struct bd_base *base, struct ls_err *err)
{
	const struct ls_probe_run *run = &r->runs[0];
	struct ls_bd_host *hosts[2] = { local, peer };
	struct ls_split_in sin = { 0 };
	struct ls_wire_cfg w4;
	struct ls_wire wire4;

	memset(a, 0, sizeof(*a));
	a->n = run->count;
	a->div = ls_probe_rtt_divisor(r->verb);
	a->peer_n = peer ? (run->peer_count < a->n ? run->peer_count : a->n) : 0;
	a->per_window = true;	/* --samples, and the verdict's waits and work per sample */
	if (!a->n)
		return ls_errf(err, "the probe produced no samples");
	a->total = calloc(a->n, sizeof(double));
	a->kern_rtt = calloc(a->n, sizeof(double));
	a->kernel = calloc(a->n, sizeof(double));
	a->win = calloc(a->n, sizeof(*a->win));
	a->tail = calloc(a->n, 1);
	if (!a->total || !a->kern_rtt || !a->kernel || !a->win || !a->tail)
		return ls_errnof(err, ENOMEM, "breakdown of %zu samples", a->n);
	for (size_t i = 0; i < a->n; i++) {
		a->win[i].start_ns = run->samples[i].start_ns;
		a->win[i].end_ns = run->samples[i].end_ns;
		a->total[i] = (double)(run->samples[i].end_ns - run->samples[i].start_ns) / a->div;
	}
	a->tail_n = ls_split_mark_tail(a->total, a->n, c->tail_frac, a->tail);
	if (peer && estimate_theta(a, run, err))
		return -1;
	if (attribute(a, run, local, peer, c->preempt_slack_ns, err))
		return -1;
	for (size_t i = 0; i < a->n; i++)
		a->kernel[i] = a->kern_rtt[i] / a->div;

	/* transmission model */
	a->wcfg.size = run->size;
	a->wcfg.verb = wire_verb(r->verb, r->events);
	a->wcfg.mtu = r->mtu;
	a->wcfg.ipv6 = r->dev.gid[0] && strncmp(r->dev.gid, "::ffff:", 7) != 0 &&
		       strchr(r->dev.gid, ':') != NULL;
	a->wcfg.cable_m = c->cable_m;
	a->wcfg.hops = c->hops;
	a->wcfg.sw = c->sw;
	if (c->link_gbps > 0) {
		a->wcfg.link_gbps = c->link_gbps;
		snprintf(a->rate_text, sizeof(a->rate_text), "--link-gbps %g", c->link_gbps);
	} else {
		a->wcfg.link_gbps = r->dev.link_gbps;
		snprintf(a->rate_text, sizeof(a->rate_text), "port rate \"%s\"", r->dev.rate);
	}
	a->wcfg.rate_src = a->rate_text;
	if (ls_wire_compute(&a->wcfg, &a->wire, err))
		return ls_err_wrap(err, "transmission model (give --link-gbps if the port rate is unknown)");
	w4 = a->wcfg;
	w4.size = 4;
	if (ls_wire_compute(&w4, &wire4, err))
		return -1;
	a->thr = c->thr;
	a->thr.offset_ns = a->wire.total_ns - wire4.total_ns;

	/* the split */
	sin.n = a->n;
	sin.total_ns = a->total;
	sin.kernel_ns = a->kernel;
	sin.transmission_ns = a->wire.total_ns;
	sin.floor_q = c->floor_q;
	sin.tail_frac = c->tail_frac;
	if (base->have) {
		sin.fixed_floor = true;
		sin.floor_ns = base->floor_ns;
	}
	if (ls_split_compute(&sin, &a->sp, err))
		return -1;
	if (verdict_inputs(a, hosts, base, c))
		return ls_errnof(err, ENOMEM, "verdict inputs");
	if (ls_vd_kernel_split(&a->attr, a->div, c->floor_q, &a->vin, err))
		return -1;
	ls_verdict_decide(&a->thr, &a->vin, &a->v);
	return 0;
}

static const char *const floor_assumption =
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
	printf("), %llu records (%zu used), %llu dropped%s\n", (unsigned long long)h->records,
	       h->nrec, (unsigned long long)h->drops,
	       h->truncated ? ", TRUNCATED: raise --ring-kib or shorten the run" : "");
}

/* A host's handler time on its relevant CPUs, one-way ns per sample. */
static double obs_per_sample(const struct ls_bd_host *h, const struct bd_an *a)
{
	return a->n && a->div ? (double)h->obs.ns / a->n / a->div : 0;
}

/*
 * One host's observer line: the backend's handler time on the relevant
 * CPUs per sample, one-way like every part (divided as the total is), as a
 * share of the one-way p50; and the drain thread's CPU time over the run.
 */
static void print_observer(const char *role, const struct ls_bd_host *h,
			   const struct bd_an *a)
{
	const struct ls_bd_obs *o = &h->obs;
	double per = obs_per_sample(h, a), p50 = a->sp.sum_total.p50;
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
static bool print_cells(const struct bd_an *a, const struct ls_attr *at)
{
	bool any = false;

	if (!at)
		return false;
	printf("  %-10s %4s %-13s %10s %10s %8s %10s\n", "host", "cpu", "stage", "mean",
	       "tail mean", "samples", "max");
	for (int h = 0; h < 2; h++) {
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = cell_in(at, h, cpu, st);

				if (!cell->total_ns)
					continue;
				any = true;
				printf("  %-10s %4u %-13s %10.3f %10.3f %8llu %10.3f\n", host_names[h],
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

/* Human-readable report. */
static void print_text(const struct bd_an *a, const struct ls_probe_result *r,
		       const struct bd_cli *c, const struct ls_bd_host *local,
		       const struct ls_bd_host *peer, const struct bd_base *base)
{
	const struct ls_split_out *sp = &a->sp;
	const struct ls_bd_host *hosts[2] = { local, peer };
	const struct ls_verdict *v = &a->v;
	bool any = false;

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
		printf("responder clock offset: %+.3f us (median of the 1%% fastest round trips)\n",
		       a->theta_ns / 1e3);
	printf("preemptions of the probe task not ending within %.0f us before it saw its message (ignored: it was waiting): %zu\n",
	       c->preempt_slack_ns / 1e3, a->preempt_dropped);
	print_observer("prober", local, a);
	if (peer)
		print_observer("responder", peer, a);

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
		       sp->floor_ns / 1e3, c->floor_q * 100, floor_assumption);
	if (unreliable(a))
		printf("ATTRIBUTION UNRELIABLE for this run: %zu of %zu samples (%.1f %%, over 1 %%) had more kernel time on their path than latency left after transmission; their processing was capped and no verdict is given\n",
		       sp->clamped, a->n, 100.0 * sp->clamped / a->n);
	else if (sp->clamped)
		printf("note: %zu of %zu samples had more kernel time on their path than latency left after transmission; their processing was capped\n",
		       sp->clamped, a->n);
	printf("\ntail: slowest %zu samples (>= %.3f us), mean excess over p50 %.3f us: queuing %.0f%%, processing %.0f%%, transmission %.0f%%\n",
	       sp->tail_n, sp->tail_threshold_ns / 1e3, sp->tail_excess_ns / 1e3,
	       100 * sp->tail_share[LS_PART_QUEUING], 100 * sp->tail_share[LS_PART_PROCESSING],
	       100 * sp->tail_share[LS_PART_TRANSMISSION]);

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
			       host_names[h], a->rx[h].samples, a->rx[h].n, a->rx[h].matched,
			       a->rx[h].packets, a->rx[h].delivered, a->rx[h].sent);
		else
			printf("  %s: no RoCE packet seen by the backend: its receive path is all concurrent (a NIC that bypasses the kernel, or a backend without RX_PKT records)\n",
			       host_names[h]);
	}

	any = false;
	printf("\ncounters that moved:\n");
	for (int h = 0; h < 2; h++) {
		if (!hosts[h])
			continue;
		for (size_t i = 0; i < hosts[h]->ctr.n; i++) {
			const struct ls_ctr_delta *d = &hosts[h]->ctr.v[i];

			if (!ls_ctr_moved(d))
				continue;
			any = true;
			printf("  %-10s %-44s %-16s %14llu -> %-14llu %+lld\n", host_names[h], d->name,
			       ls_ctr_class_name(d->cls), (unsigned long long)d->before,
			       (unsigned long long)d->after, (long long)d->delta);
		}
	}
	if (!any)
		printf("  (none)\n");
	for (int h = 0; h < 2; h++) {
		if (!hosts[h])
			continue;
		for (size_t i = 0; i < hosts[h]->ctr.n; i++) {
			const struct ls_ctr_delta *d = &hosts[h]->ctr.v[i];

			if (!d->ok)
				printf("  unreadable, %s: %s: %s\n", host_names[h], d->name, d->error);
		}
	}

	if (unreliable(a)) {
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
	ls_json_u64(j, "count", s->count);
	ls_json_dbl(j, "min_ns", s->min);
	ls_json_dbl(j, "p50_ns", s->p50);
	ls_json_dbl(j, "p90_ns", s->p90);
	ls_json_dbl(j, "p99_ns", s->p99);
	ls_json_dbl(j, "p999_ns", s->p999);
	ls_json_dbl(j, "p9999_ns", s->p9999);
	ls_json_dbl(j, "max_ns", s->max);
	ls_json_dbl(j, "mean_ns", s->mean);
	ls_json_dbl(j, "stdev_ns", s->stdev);
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
		      const struct bd_an *a)
{
	char cpus[256];

	ls_json_obj_open(j, NULL);
	ls_json_str(j, "role", role);
	ls_json_bool(j, "measured", h->measured);
	ls_json_str(j, "backend", h->backend);
	if (!h->measured)
		ls_json_str(j, "unmeasured_why", h->why);
	ls_format_cpulist(h->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	ls_json_str(j, "cpus", cpus);
	ls_json_i64(j, "probe_cpu", h->probe_cpu);
	ls_json_arr_open(j, "irqs");
	for (unsigned int i = 0; i < h->nr_irqs; i++)
		ls_json_u64(j, NULL, h->irqs[i]);
	ls_json_arr_close(j);
	ls_json_str(j, "ibdev", h->ibdev);
	ls_json_str(j, "netdev", h->netdev);
	ls_json_u64(j, "records", h->records);
	ls_json_u64(j, "records_used", h->nrec);
	ls_json_u64(j, "drops", h->drops);
	ls_json_bool(j, "truncated", h->truncated);
	if (h->measured)
		obs_json(j, "observer", &h->obs, obs_per_sample(h, a), a->sp.sum_total.p50);
	ls_json_obj_close(j);
}

/* An attribution's (host, cpu, stage) cells as the JSON array key. */
static void json_cells(struct ls_json *j, const char *key, const struct bd_an *a,
		       const struct ls_attr *at)
{
	ls_json_arr_open(j, key);
	for (int h = 0; h < 2 && at; h++) {
		for (unsigned int cpu = 0; cpu < LS_MAX_CPUS; cpu++) {
			for (unsigned int st = 0; st < LS_NR_STAGES; st++) {
				const struct ls_attr_cell *cell = cell_in(at, h, cpu, st);

				if (!cell->total_ns)
					continue;
				ls_json_obj_open(j, NULL);
				ls_json_str(j, "host", host_names[h]);
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

/* The JSON document (kind "breakdown"). */
static void print_json(FILE *fp, const struct bd_an *a, const struct ls_probe_result *r,
		       const struct bd_cli *c, const struct ls_bd_host *local,
		       const struct ls_bd_host *peer, const struct bd_base *base)
{
	const struct ls_split_out *sp = &a->sp;
	const struct ls_bd_host *hosts[2] = { local, peer };
	const struct ls_verdict *v = &a->v;
	struct ls_json j;

	ls_json_init(&j, fp, false);
	ls_json_obj_open(&j, NULL);
	ls_json_u64(&j, "schema", LS_JSON_SCHEMA);
	ls_json_str(&j, "kind", "breakdown");
	/* When the probe ran (CLOCK_MONOTONIC of this host). */
	ls_json_obj_open(&j, "run");
	ls_json_u64(&j, "begin_ns", r->runs[0].begin_ns);
	ls_json_u64(&j, "finish_ns", r->runs[0].finish_ns);
	ls_json_obj_close(&j);
	ls_json_obj_open(&j, "inputs");
	ls_json_str(&j, "peer", r->peer);
	ls_json_str(&j, "ibdev", r->dev.name);
	ls_json_u64(&j, "ib_port", r->dev.port);
	ls_json_str(&j, "gid", r->dev.gid);
	ls_json_str(&j, "netdev", r->dev.netdev);
	ls_json_u64(&j, "size", r->runs[0].size);
	ls_json_str(&j, "verb", ls_probe_verb_name(r->verb));
	ls_json_bool(&j, "events", r->events);
	ls_json_u64(&j, "mtu", r->mtu);
	json_qp(&j, &r->runs[0]);
	ls_json_u64(&j, "iters", c->o.iters);
	ls_json_u64(&j, "duration_ns", c->o.duration_ns);
	ls_json_i64(&j, "cpu", c->o.cpu);
	ls_json_str(&j, "backend", c->backend);
	ls_json_str(&j, "clock", r->clock ? r->clock : "CLOCK_MONOTONIC");
	ls_json_str(&j, "one_way", a->div == 2 ? "rtt/2" : "rtt");
	ls_json_bool(&j, "hw_timestamps", r->dev.hwclock != LS_HWCLOCK_NONE);
	ls_json_dbl(&j, "floor_quantile", c->floor_q);
	ls_json_dbl(&j, "tail_fraction", c->tail_frac);
	if (c->baseline)
		ls_json_str(&j, "baseline", c->baseline);
	ls_json_obj_open(&j, "thresholds");
	ls_json_dbl(&j, "normal_lo_ns", c->thr.normal_lo_ns);
	ls_json_dbl(&j, "normal_hi_ns", c->thr.normal_hi_ns);
	ls_json_dbl(&j, "abnormal_ns", c->thr.abnormal_ns);
	ls_json_dbl(&j, "hurts_ns", c->thr.hurts_ns);
	ls_json_dbl(&j, "size_offset_ns", a->thr.offset_ns);
	ls_json_dbl(&j, "share", c->thr.share);
	if (c->expect_gbps > 0)
		ls_json_dbl(&j, "expect_gbps", c->expect_gbps);
	ls_json_obj_close(&j);
	ls_json_obj_close(&j);

	ls_json_obj_open(&j, "transmission_model");
	ls_json_str(&j, "verb", ls_wire_verb_name(a->wcfg.verb));
	ls_json_str(&j, "ip", a->wcfg.ipv6 ? "ipv6" : "ipv4");
	ls_json_u64(&j, "mtu", a->wcfg.mtu);
	ls_json_dbl(&j, "link_gbps", a->wcfg.link_gbps);
	ls_json_str(&j, "link_source", a->rate_text);
	ls_json_dbl(&j, "cable_m", a->wcfg.cable_m);
	ls_json_u64(&j, "hops", a->wcfg.hops);
	ls_json_str(&j, "switch", ls_wire_switch_name(a->wcfg.sw));
	ls_json_u64(&j, "packets", a->wire.packets);
	ls_json_u64(&j, "wire_bytes", a->wire.wire_bytes);
	ls_json_u64(&j, "header_bytes", a->wire.header_bytes);
	ls_json_dbl(&j, "serialize_ns", a->wire.serialize_ns);
	ls_json_dbl(&j, "propagate_ns", a->wire.propagate_ns);
	ls_json_dbl(&j, "switch_ns", a->wire.switch_ns);
	ls_json_dbl(&j, "total_ns", a->wire.total_ns);
	ls_json_dbl(&j, "payload_only_ns", a->wire.payload_only_ns);
	ls_json_obj_close(&j);

	ls_json_arr_open(&j, "hosts");
	json_host(&j, "prober", local, a);
	if (peer)
		json_host(&j, "responder", peer, a);
	ls_json_arr_close(&j);
	if (a->have_theta)
		ls_json_i64(&j, "responder_clock_offset_ns", a->theta_ns);

	ls_json_obj_open(&j, "floor");
	ls_json_dbl(&j, "ns", sp->floor_ns);
	ls_json_dbl(&j, "residual_p50_ns", sp->residual_p50_ns);
	ls_json_str(&j, "source", base->have ? "baseline" : "inferred");
	ls_json_dbl(&j, "quantile", c->floor_q);
	ls_json_str(&j, "assumption", floor_assumption);
	ls_json_obj_close(&j);
	ls_json_u64(&j, "clamped", sp->clamped);
	ls_json_u64(&j, "preempt_slack_ns", c->preempt_slack_ns);
	ls_json_u64(&j, "preempt_ignored", a->preempt_dropped);

	json_dist(&j, "total", &sp->sum_total, a->total, a->n);
	ls_json_obj_open(&j, "parts");
	json_dist(&j, "transmission", &sp->sum_part[LS_PART_TRANSMISSION],
		  sp->part[LS_PART_TRANSMISSION], a->n);
	json_dist(&j, "queuing", &sp->sum_part[LS_PART_QUEUING], sp->part[LS_PART_QUEUING], a->n);
	json_dist(&j, "processing", &sp->sum_part[LS_PART_PROCESSING],
		  sp->part[LS_PART_PROCESSING], a->n);
	json_dist(&j, "kernel", &sp->sum_kernel, NULL, 0);
	json_dist(&j, "base", &sp->sum_base, NULL, 0);
	ls_json_obj_close(&j);

	ls_json_obj_open(&j, "tail");
	ls_json_dbl(&j, "fraction", c->tail_frac);
	ls_json_u64(&j, "count", sp->tail_n);
	ls_json_dbl(&j, "threshold_ns", sp->tail_threshold_ns);
	ls_json_dbl(&j, "excess_mean_ns", sp->tail_excess_ns);
	ls_json_obj_open(&j, "shares");
	for (int p = 0; p < LS_NR_PARTS; p++)
		ls_json_dbl(&j, ls_part_name(p), sp->tail_share[p]);
	ls_json_obj_close(&j);
	ls_json_obj_close(&j);

	json_cells(&j, "stages", a, a->attr_ok ? &a->attr : NULL);
	json_cells(&j, "concurrent", a, a->conc_ok ? &a->conc : NULL);
	ls_json_obj_open(&j, "attribution");
	ls_json_str(&j, "rule", "causal");
	ls_json_u64(&j, "clamped", sp->clamped);
	ls_json_dbl(&j, "clamped_fraction", a->n ? (double)sp->clamped / a->n : 0);
	ls_json_bool(&j, "reliable", !unreliable(a));
	ls_json_arr_open(&j, "hosts");
	for (int h = 0; h < 2; h++) {
		if (!a->host_measured[h])
			continue;
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "role", host_names[h]);
		ls_json_u64(&j, "rx_packets", a->rx[h].packets);
		ls_json_u64(&j, "probe_packets", a->rx[h].matched);
		ls_json_u64(&j, "samples_matched", a->rx[h].samples);
		ls_json_u64(&j, "samples", a->rx[h].n);
		ls_json_u64(&j, "samples_delivered", a->rx[h].delivered);
		ls_json_u64(&j, "samples_sent", a->rx[h].sent);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_obj_close(&j);

	ls_json_arr_open(&j, "counters");
	for (int h = 0; h < 2; h++) {
		if (!hosts[h])
			continue;
		for (size_t i = 0; i < hosts[h]->ctr.n; i++) {
			const struct ls_ctr_delta *d = &hosts[h]->ctr.v[i];

			ls_json_obj_open(&j, NULL);
			ls_json_str(&j, "host", host_names[h]);
			ls_json_str(&j, "name", d->name);
			ls_json_str(&j, "class", ls_ctr_class_name(d->cls));
			ls_json_bool(&j, "ok", d->ok);
			if (d->ok) {
				ls_json_bool(&j, "gauge", d->gauge);
				ls_json_u64(&j, "before", d->before);
				ls_json_u64(&j, "after", d->after);
				ls_json_i64(&j, "delta", d->delta);
				ls_json_bool(&j, "moved", ls_ctr_moved(d));
			} else {
				ls_json_str(&j, "error", d->error);
			}
			ls_json_obj_close(&j);
		}
	}
	ls_json_arr_close(&j);

	ls_json_obj_open(&j, "verdict");
	ls_json_bool(&j, "withheld", unreliable(a));
	ls_json_str(&j, "level_p50", ls_level_name(v->level_p50));
	ls_json_str(&j, "level_p99", ls_level_name(v->level_p99));
	ls_json_str(&j, "dominant_p50", ls_part_name(v->dom_p50));
	ls_json_bool(&j, "dominant_p50_is_base", v->dom_p50_base);
	ls_json_str(&j, "dominant_tail", ls_part_name(v->dom_tail));
	if (!isnan(v->waits_excess_share)) {
		ls_json_dbl(&j, "waits_excess_share", v->waits_excess_share);
		ls_json_dbl(&j, "work_excess_share", v->work_excess_share);
	} else {
		ls_json_null(&j, "waits_excess_share");
		ls_json_null(&j, "work_excess_share");
	}
	ls_json_arr_open(&j, "findings");
	for (unsigned int i = 0; i < v->nf; i++) {
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "layer", ls_layer_name(v->f[i].layer));
		ls_json_str(&j, "text", v->f[i].text);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	if (v->cpu >= 0) {
		ls_json_obj_open(&j, "cpu");
		ls_json_str(&j, "host", host_names[v->cpu_host & 1]);
		ls_json_u64(&j, "cpu", v->cpu);
		ls_json_str(&j, "stage", ls_stage_name(v->cpu_stage));
		ls_json_obj_close(&j);
	} else {
		ls_json_null(&j, "cpu");
	}
	ls_json_str(&j, "next_layer", ls_layer_name(v->next));
	ls_json_str(&j, "next_why", v->next_why);
	ls_json_obj_close(&j);
	ls_json_obj_close(&j);
	ls_json_end(&j);
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
static void write_samples(FILE *fp, const struct bd_an *a, const struct ls_probe_run *run)
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

/* Keep what --prom writes of a split pair (peer given in pp->peer already). */
static int prom_keep(struct bd_prom_pair *pp, const struct bd_an *a,
		     const struct ls_bd_host *local, const struct ls_bd_host *peer,
		     struct ls_err *err)
{
	const struct ls_bd_host *hosts[2] = { local, peer };
	size_t n = 0;

	pp->ok = true;
	pp->sums[0] = a->sp.sum_total;
	pp->sums[1] = a->sp.sum_part[LS_PART_TRANSMISSION];
	pp->sums[2] = a->sp.sum_part[LS_PART_QUEUING];
	pp->sums[3] = a->sp.sum_part[LS_PART_PROCESSING];
	memcpy(pp->tail_share, a->sp.tail_share, sizeof(pp->tail_share));
	pp->floor_ns = a->sp.floor_ns;
	pp->next = a->v.next;
	pp->dom_p50 = a->v.dom_p50;
	pp->dom_tail = a->v.dom_tail;
	pp->level_p50 = a->v.level_p50;
	pp->clamped = a->sp.clamped;
	pp->n = a->n;
	pp->reliable = !unreliable(a);
	for (int h = 0; h < 2; h++) {
		const struct ls_bd_host *ho = hosts[h];

		if (!ho || !ho->measured || !ho->obs.ok)
			continue;
		pp->obs[h].ok = true;
		pp->obs[h].per_ns = obs_per_sample(ho, a);
		pp->obs[h].share = a->sp.sum_total.p50 > 0 ? pp->obs[h].per_ns / a->sp.sum_total.p50 : 0;
		pp->obs[h].drain_s = ho->obs.drain_ok ? ho->obs.drain_cpu_ns / 1e9 : -1;
	}
	for (int h = 0; h < 2; h++)
		for (size_t i = 0; hosts[h] && i < hosts[h]->ctr.n; i++)
			n += ls_ctr_moved(&hosts[h]->ctr.v[i]);
	pp->ctr = n ? calloc(n, sizeof(*pp->ctr)) : NULL;
	if (n && !pp->ctr)
		return ls_errnof(err, ENOMEM, "--prom: statistics of %s", pp->peer);
	for (int h = 0; h < 2; h++) {
		for (size_t i = 0; hosts[h] && i < hosts[h]->ctr.n; i++) {
			const struct ls_ctr_delta *d = &hosts[h]->ctr.v[i];
			struct bd_prom_ctr *pc;

			if (!ls_ctr_moved(d))
				continue;
			pc = &pp->ctr[pp->nctr++];
			pc->host = h;
			snprintf(pc->name, sizeof(pc->name), "%s", d->name);
			pc->cls = d->cls;
			pc->value = d->gauge ? (double)d->after : (double)d->delta;
		}
	}
	return 0;
}

enum obs_fig { OBS_PER_SAMPLE, OBS_SHARE, OBS_DRAIN };

/* One observer family of --prom: a sample per pair and measured host. */
static int prom_obs(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		    const char *name, const char *help, enum obs_fig fig, struct ls_err *err)
{
	struct ls_prom_label l[2];

	if (ls_prom_family(pr, name, LS_PROM_GAUGE, help, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		for (int h = 0; h < 2; h++) {
			double v = fig == OBS_PER_SAMPLE ? pp[i].obs[h].per_ns * 1e-9 :
				   fig == OBS_SHARE ? pp[i].obs[h].share : pp[i].obs[h].drain_s;

			if (!pp[i].ok || !pp[i].obs[h].ok || v < 0)
				continue;
			l[1] = (struct ls_prom_label){ "host", host_names[h] };
			if (ls_prom_sample(pr, NULL, l, 2, v, err))
				return -1;
		}
	}
	return 0;
}

/*
 * --prom: Prometheus text (tools/prom.h) for node_exporter's textfile
 * collector; one family at a time over every pair, a peer label each.
 */
static int write_prom(struct ls_prom *pr, const struct bd_prom_pair *pp, size_t n,
		      struct ls_err *err)
{
	static const char *const names[4] = { "total", "transmission", "queuing", "processing" };
	struct ls_prom_label l[4];
	size_t i;

	if (ls_prom_family(pr, "latsplit_breakdown_up", LS_PROM_GAUGE,
			   "1 when the pair was measured and split, 0 when its run failed.", err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		if (ls_prom_sample(pr, NULL, l, 1, pp[i].ok, err))
			return -1;
	}
	if (ls_prom_family(pr, "latsplit_breakdown_seconds", LS_PROM_SUMMARY,
			   "One-way RDMA latency by part (total = transmission + queuing + processing).",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		for (int p = 0; p < 4 && pp[i].ok; p++) {
			l[1] = (struct ls_prom_label){ "part", names[p] };
			if (ls_prom_summary(pr, l, 2, &pp[i].sums[p], err))
				return -1;
		}
	}
	if (ls_prom_family(pr, "latsplit_breakdown_max_seconds", LS_PROM_GAUGE,
			   "Largest one-way latency by part.", err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		for (int p = 0; p < 4 && pp[i].ok; p++) {
			l[1] = (struct ls_prom_label){ "part", names[p] };
			if (ls_prom_sample(pr, NULL, l, 2, pp[i].sums[p].max * 1e-9, err))
				return -1;
		}
	}
	if (ls_prom_family(pr, "latsplit_breakdown_tail_share", LS_PROM_GAUGE,
			   "Share of the slowest samples' excess over p50 by part.", err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		for (int p = 0; p < LS_NR_PARTS && pp[i].ok; p++) {
			l[1] = (struct ls_prom_label){ "part", ls_part_name(p) };
			if (ls_prom_sample(pr, NULL, l, 2, pp[i].tail_share[p], err))
				return -1;
		}
	}
	if (ls_prom_family(pr, "latsplit_breakdown_floor_seconds", LS_PROM_GAUGE,
			   "Base floor of processing (inferred, or a baseline's median residual).",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		if (pp[i].ok && ls_prom_sample(pr, NULL, l, 1, pp[i].floor_ns * 1e-9, err))
			return -1;
	}
	if (ls_prom_family(pr, "latsplit_breakdown_clamped_samples", LS_PROM_GAUGE,
			   "Samples with more kernel time on their path than latency (processing capped).",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		if (pp[i].ok && ls_prom_sample(pr, NULL, l, 1, (double)pp[i].clamped, err))
			return -1;
	}
	if (ls_prom_family(pr, "latsplit_breakdown_attribution_reliable", LS_PROM_GAUGE,
			   "1 when at most 1 % of the samples were capped; 0: no verdict for this run.",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		if (pp[i].ok && ls_prom_sample(pr, NULL, l, 1, pp[i].reliable, err))
			return -1;
	}
	if (ls_prom_family(pr, "latsplit_breakdown_level", LS_PROM_GAUGE,
			   "Verdict on p50: 0 below normal, 1 normal, 2 elevated, 3 abnormal, 4 hurts training; absent when the attribution is unreliable.",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		if (!pp[i].ok || !pp[i].reliable)
			continue;
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		l[1] = (struct ls_prom_label){ "next_layer", ls_layer_name(pp[i].next) };
		l[2] = (struct ls_prom_label){ "dominant_p50", ls_part_name(pp[i].dom_p50) };
		l[3] = (struct ls_prom_label){ "dominant_tail", ls_part_name(pp[i].dom_tail) };
		if (ls_prom_sample(pr, NULL, l, 4, (double)pp[i].level_p50, err))
			return -1;
	}
	if (prom_obs(pr, pp, n, "latsplit_breakdown_observer_seconds",
		     "The backend's own handler time on the host's relevant CPUs, one-way per sample.",
		     OBS_PER_SAMPLE, err) ||
	    prom_obs(pr, pp, n, "latsplit_breakdown_observer_share",
		     "The backend's own handler time per sample as a share of the one-way p50.",
		     OBS_SHARE, err) ||
	    prom_obs(pr, pp, n, "latsplit_breakdown_drain_cpu_seconds",
		     "CPU time of the thread draining the kernel records during the run.",
		     OBS_DRAIN, err))
		return -1;
	if (ls_prom_family(pr, "latsplit_breakdown_stat_change", LS_PROM_GAUGE,
			   "NIC/RDMA/qdisc statistics that moved during the run (delta, or level for gauges).",
			   err))
		return -1;
	for (i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].peer };
		for (size_t k = 0; k < pp[i].nctr; k++) {
			const struct bd_prom_ctr *pc = &pp[i].ctr[k];

			l[1] = (struct ls_prom_label){ "host", host_names[pc->host] };
			l[2] = (struct ls_prom_label){ "stat", pc->name };
			l[3] = (struct ls_prom_label){ "class", ls_ctr_class_name(pc->cls) };
			if (ls_prom_sample(pr, NULL, l, 4, pc->value, err))
				return -1;
		}
	}
	return 0;
}

/* Open the output files before the run so a bad path fails early; none is visible until commit. */
static int open_outputs(const struct bd_cli *c, struct ls_afile *sf, struct ls_prom *pf,
			struct ls_err *err)
{
	if (c->samples && ls_afile_open(sf, c->samples, err))
		return ls_err_wrap(err, "--samples");
	if (c->prom && ls_prom_open(pf, c->prom, false, err)) {
		if (c->samples)
			ls_afile_abort(sf);
		return ls_err_wrap(err, "--prom");
	}
	return 0;
}

/* The responder: serve one prober session, recording, and ship the data. */
static int run_responder(struct bd_cli *c, struct bd_ctx *x)
{
	struct ls_probe_result r;
	struct ls_err err = { "" };
	int rc;

	memset(&r, 0, sizeof(r));
	x->res = &r;
	if (bd_start(x, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (!x->local.measured)
		ls_warn("breakdown: responder: no kernel backend (%s): the prober will mark this side's processing unmeasured",
			x->local.why);
	rc = ls_probe_run_server(&c->o, &r, &err);
	bd_stop(x);
	if (rc) {
		ls_warn("breakdown: responder: %s", err.msg);
		rc = r.nruns && r.runs[0].count ? LS_EXIT_FAIL : LS_EXIT_USAGE;
	} else {
		fprintf(stderr, "latsplit: breakdown responder: served %s: %llu iterations, shipped %zu kernel records (%s%s)\n",
			r.peer, (unsigned long long)(r.nruns ? r.runs[0].count : 0), x->local.nrec,
			x->local.backend, x->local.measured ? "" : ", unmeasured");
		rc = LS_EXIT_OK;
	}
	ls_probe_result_free(&r);
	return rc;
}

/*
 * One prober run against c->o.peer: measure, split, print; the samples
 * file (sf, or NULL) is filled and committed, and pp (or NULL) keeps what
 * --prom writes. Returns an exit status.
 */
static int run_pair(struct bd_cli *c, struct bd_ctx *x, const struct bd_base *base,
		    struct ls_afile *sf, struct bd_prom_pair *pp)
{
	struct ls_probe_result r;
	struct ls_err err = { "" };
	struct bd_an a;
	char rate[96];
	double gbps;
	int rc = LS_EXIT_USAGE;

	memset(&r, 0, sizeof(r));
	memset(&a, 0, sizeof(a));
	x->res = &r;
	if (bd_start(x, &err)) {
		ls_warn("breakdown: %s", err.msg);
		goto out;
	}
	if (!c->link_gbps &&
	    ls_wire_read_rate(NULL, x->ibdev, c->o.ib_port, &gbps, rate, sizeof(rate), &err)) {
		ls_warn("breakdown: link rate unknown (%s): give --link-gbps", err.msg);
		bd_stop(x);
		goto out;
	}
	if (!x->local.measured)
		ls_warn("breakdown: prober: no kernel backend (%s): this side's processing is unmeasured",
			x->local.why);
	if (ls_probe_run_client(&c->o, &r, &err)) {
		bd_stop(x);
		ls_warn("breakdown: %s", err.msg);
		rc = r.nruns && r.runs[0].count ? LS_EXIT_FAIL : LS_EXIT_USAGE;
		if (strstr(err.msg, "breakdown protocol") || strstr(err.msg, "breakdown-peer"))
			rc = LS_EXIT_USAGE;
		goto out;
	}
	bd_stop(x);
	bd_counters(x);
	filter_records(&x->local, x->run_begin > BD_SLACK_NS ? x->run_begin - BD_SLACK_NS : 0,
		       x->run_end + BD_SLACK_NS);
	snprintf(x->local.rate, sizeof(x->local.rate), "%s", r.dev.rate);
	x->local.link_gbps = r.dev.link_gbps;
	if (!x->have_peer) {
		ls_warn("breakdown: the responder sent no breakdown data");
		rc = LS_EXIT_FAIL;
		goto out;
	}
	if (!x->peer.measured)
		ls_warn("breakdown: responder: no kernel backend (%s): its processing is unmeasured",
			x->peer.why);
	if (analyze(&a, &r, c, &x->local, &x->peer, base, &err)) {
		ls_warn("breakdown: %s", err.msg);
		rc = LS_EXIT_FAIL;
		goto out;
	}
	if (c->json)
		print_json(stdout, &a, &r, c, &x->local, &x->peer, base);
	else
		print_text(&a, &r, c, &x->local, &x->peer, base);
	fflush(stdout);
	rc = LS_EXIT_OK;
	if (sf) {
		write_samples(sf->fp, &a, &r.runs[0]);
		if (ls_afile_commit(sf, &err)) {
			ls_warn("breakdown: --samples: %s", err.msg);
			rc = LS_EXIT_USAGE;
		}
		sf = NULL;
	}
	if (pp && prom_keep(pp, &a, &x->local, &x->peer, &err)) {
		ls_warn("breakdown: %s", err.msg);
		rc = LS_EXIT_USAGE;
	}
out:
	if (sf)
		ls_afile_abort(sf);
	an_free(&a);
	ls_probe_result_free(&r);
	return rc;
}

/* Free what one pair's run left in x, so the next pair starts clean. */
static void ctx_reset(struct bd_ctx *x)
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


/* The prober: one pair (PEER) or every host of --peers in turn, then the files. */
static int run_prober(struct bd_cli *c, struct bd_ctx *x)
{
	struct bd_prom_pair *pp = NULL;
	struct ls_afile sf = { 0 };
	struct ls_err err = { "" };
	struct bd_base base;
	struct ls_prom pf;
	struct ls_fleet fl;
	size_t npeers;
	int rc = LS_EXIT_OK;

	memset(&base, 0, sizeof(base));
	memset(&pf, 0, sizeof(pf));
	ls_fleet_init(&fl, c->peers ? &c->plist : NULL, "breakdown", c->json);
	npeers = fl.n;
	if (c->baseline && load_baseline(c->baseline, c->o.sizes[0], c->o.verb, &base, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (c->prom) {
		pp = calloc(npeers, sizeof(*pp));
		if (!pp) {
			ls_warn("breakdown: --prom: out of memory for %zu pairs", npeers);
			return LS_EXIT_USAGE;
		}
	}
	if (open_outputs(c, &sf, &pf, &err)) {
		ls_warn("breakdown: %s", err.msg);
		free(pp);
		return LS_EXIT_USAGE;
	}
	for (size_t i = 0; i < npeers; i++) {
		ls_fleet_next(&fl, i, &c->o.peer);
		if (c->peers)
			ctx_reset(x);
		if (pp)
			snprintf(pp[i].peer, sizeof(pp[i].peer), "%s:%u", c->o.peer, c->o.port);
		rc = run_pair(c, x, &base, c->samples ? &sf : NULL, pp ? &pp[i] : NULL);
		/* A failed pair printed no split: its failed line stands for it. */
		ls_fleet_done(&fl, pp ? pp[i].peer : c->o.peer, rc, true);
	}
	if (c->peers)
		rc = ls_fleet_status(&fl);
	if (c->prom) {
		/*
		 * One pair that failed writes no file (nothing was measured); a
		 * fleet run writes every pair, the failed ones as up 0.
		 */
		if (c->peers || rc == LS_EXIT_OK) {
			if (write_prom(&pf, pp, npeers, &err) || ls_prom_commit(&pf, &err)) {
				ls_prom_abort(&pf);
				ls_warn("breakdown: --prom: %s", err.msg);
				rc = LS_EXIT_USAGE;
			}
		} else {
			ls_prom_abort(&pf);
		}
		for (size_t i = 0; i < npeers; i++)
			free(pp[i].ctr);
		free(pp);
	}
	return rc;
}

/* `latsplit breakdown`: prober with PEER, responder without. */
int cmd_breakdown(int argc, char **argv)
{
	struct bd_cli c;
	struct bd_ctx x;
	bool help = false;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&x, 0, sizeof(x));
	ls_probe_opts_init(&c.o);
	c.o.iters = BD_DEFAULT_ITERS;
	c.o.sizes[0] = 4;
	c.o.nsizes = 1;
	c.backend = "auto";
	c.ring_kib = BD_DEFAULT_RING_KIB;
	c.hops = 1;
	c.sw = LS_SWITCH_SF;
	c.floor_q = 0.05;
	c.tail_frac = 0.01;
	c.preempt_slack_ns = 200000;
	ls_thresholds_default(&c.thr);
	rc = parse(&c, argc, argv, &help);
	if (rc)
		return rc;
	if (help) {
		usage(stdout);
		return LS_EXIT_OK;
	}
	if (c.o.cpu < 0) {
		c.o.cpu = sched_getcpu();
		if (c.o.cpu < 0 || c.o.cpu >= LS_MAX_CPUS)
			c.o.cpu = 0;
	}
	c.o.run_start = on_run_start;
	c.o.run_end = on_run_end;
	c.o.finish = on_finish;
	c.o.arg = &x;
	x.c = &c;
	rc = c.is_prober ? run_prober(&c, &x) : run_responder(&c, &x);
	ctx_reset(&x);
	ls_peers_free(&c.plist);
	return rc;
}
