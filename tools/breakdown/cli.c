// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown: run the verbs probe while a kernel backend records on
 * both hosts, snapshot counters before and after, and split every sample's
 * one-way latency into transmission + queuing + processing, with a tail
 * decomposition and a verdict. Method: Documentation/methodology.rst.
 *
 *   prober:    latsplit breakdown [OPTIONS] PEER
 *   responder: latsplit breakdown [OPTIONS]
 *
 * This file: the options, the responder, one prober pair and the --peers
 * loop; the jobs they call are in the other breakdown/ files (bd.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd.h"
#include "commands.h"
#include "nic.h"
#include "peers.h"
#include "probe_opts.h"
#include "prom.h"
#include "report.h"

/* Print the usage; the option list is the truth the man page is tested against. */
static void usage(FILE *fp)
{
	static const struct ls_probe_help help = {
		.after_size = "",
		.iters = "  -n, --iters N             iterations (default " LS_STR(BD_DEFAULT_ITERS) ")\n",
		.duration = "  -D, --duration DUR        run for DUR instead of -n\n",
		.cpu = "      --cpu N               pin the probe to CPU N (default: the CPU it starts on)\n",
		.wait = "      --wait-timeout DUR    timeout for one answer, completion or peer data (default 10s)\n",
	};

	fprintf(fp,
"usage: latsplit breakdown [OPTIONS] [PEER | --peers FILE]\n"
"\n"
"Split RDMA latency into transmission + queuing + processing. Without PEER:\n"
"responder (run it first on the other host). With PEER: prober; it runs the\n"
"verbs probe while a kernel backend records on both hosts and prints the split.\n"
"\n"
"probe options (as latsplit probe):\n");
	ls_probe_help(fp, &help);
	ls_probe_limit_help(fp);
	fprintf(fp,
"kernel backend:\n"
"  -b, --backend NAME        auto (default), kmod, ebpf or none\n"
"      --ring-kib N          record ring size in KiB (default %u)\n"
"      --pause-idle          responder: keep the backend paused while no prober\n"
"                            is served (it records from the session's start)\n"
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
"      --report FILE         the HTML report of the run (as latsplit report draws\n"
"                            from --json), written at the end\n"
"      --peers FILE          prober for every host in FILE (one per line, '#'\n"
"                            comments), one after another; --json gives one JSON\n"
"                            line per pair, --prom one file with a peer label\n"
"  -v, --verbose             backend loader messages\n"
"  -h, --help                this help\n"
"\n"
"exit status: 0 split done, 1 the run failed after it started (--peers: some\n"
"pair failed), 2 bad input or could not start (--peers: no pair could; also:\n"
"the peer speaks another breakdown protocol).\n",
		BD_DEFAULT_RING_KIB);
}

/* breakdown's own long options (the probe's come from probe_opts.h). */
enum { O_RING = 256, O_GBPS, O_CABLE, O_HOPS, O_SWITCH, O_FLOOR, O_BASE, O_TAIL,
       O_NORMAL, O_ABN, O_HURTS, O_SHARE, O_EXPECT, O_JSON, O_SAMPLES, O_PROM, O_REPORT,
       O_SLACK, O_PEERS, O_PAUSE_IDLE };

static const struct ls_opt_name switches[] = {
	{ "sf", LS_SWITCH_SF }, { "ct", LS_SWITCH_CT }, { NULL, 0 },
};

/* --normal-us LO-HI, its errors named after the option. */
static int parse_normal(void *thr, const char *arg, struct ls_err *err)
{
	if (ls_opt_normal_us(thr, arg, err))
		return ls_err_wrap(err, "--normal-us");
	return 0;
}

#define BC struct bd_cli

static const struct ls_opt bd_options[] = {
	LS_OPT_CHOICE("backend", 'b', BC, backend, ls_opt_backends),
	LS_OPT_U64("ring-kib", O_RING, BC, ring_kib, 4, 1u << 20),
	LS_OPT_DBL("link-gbps", O_GBPS, BC, link_gbps, 1e-3, 1e6),
	LS_OPT_DBL("cable-m", O_CABLE, BC, cable_m, 0, 1e7),
	LS_OPT_U64("hops", O_HOPS, BC, hops, 1, 64),
	LS_OPT_ENUM("switch", O_SWITCH, BC, sw, switches),
	LS_OPT_PCT("floor-pct", O_FLOOR, BC, floor_q, 0, 100),
	LS_OPT_STR("baseline", O_BASE, BC, baseline),
	LS_OPT_PCT("tail-pct", O_TAIL, BC, tail_frac, 1e-6, 100),
	LS_OPT_DUR("preempt-slack", O_SLACK, BC, preempt_slack_ns),
	LS_OPT_HOOK("normal-us", O_NORMAL, BC, thr, parse_normal),
	LS_OPT_USEC("abnormal-us", O_ABN, BC, thr.abnormal_ns, 1e-6, 1e9),
	LS_OPT_USEC("hurts-us", O_HURTS, BC, thr.hurts_ns, 1e-6, 1e9),
	LS_OPT_DBL("share", O_SHARE, BC, thr.share, 0, 1),
	LS_OPT_DBL("expect-gbps", O_EXPECT, BC, expect_gbps, 1e-3, 1e6),
	LS_OPT_FLAG("json", O_JSON, BC, json),
	LS_OPT_STR("samples", O_SAMPLES, BC, samples),
	LS_OPT_STR("prom", O_PROM, BC, prom),
	LS_OPT_STR("report", O_REPORT, BC, report),
	LS_OPT_STR("peers", O_PEERS, BC, peers),
	LS_OPT_FLAG("verbose", 'v', BC, verbose),
	LS_OPT_FLAG("pause-idle", O_PAUSE_IDLE, BC, pause_idle),
	LS_OPT_HELPOPT,
};

/* The checks across options and arguments once all are read; an exit status. */
static int check_args(struct bd_cli *c, int argc, char **argv, bool have_n)
{
	struct ls_probe_opts *o = &c->o;
	struct ls_err err = { 0 };
	int rc;

	if (argc - optind > 1)
		return ls_opts_bad("breakdown", "one PEER at most ('%s' is extra)",
				   argv[optind + 1]);
	c->is_prober = argc - optind == 1 || c->peers;
	if (c->peers && argc - optind == 1)
		return ls_opts_bad("breakdown", "PEER and --peers: give one");
	if (c->peers && (c->samples || c->baseline || c->report))
		return ls_opts_bad("breakdown",
				   "--samples, --report and --baseline are of one pair: not with --peers");
	if (argc - optind == 1)
		o->peer = argv[optind];
	if (c->peers)
		o->peer = c->peers;	/* checked as a prober; each host's in turn */
	if (have_n && o->duration_ns)
		return ls_opts_bad("breakdown",
				   "--iters and --duration both set the run length: give one");
	if (o->duration_ns)
		o->iters = 0;
	if (ls_thresholds_check(&c->thr, &err))
		return ls_opts_exit(LS_EXIT_USAGE, "breakdown", &err);
	rc = ls_probe_opts_finish(o, c->is_prober, c->peers, &c->plist, "breakdown");
	if (rc)
		return rc;
	/* --peers makes a prober: this check may come after the list is read */
	if (!c->is_prober && (c->json || c->samples || c->prom || c->baseline || c->report))
		return ls_opts_bad("breakdown", "--json, --samples, --prom, --report and --baseline belong "
				   "to the prober (the responder ships its data to it)");
	if (c->is_prober && c->pause_idle)
		return ls_opts_bad("breakdown", "--pause-idle belongs to the responder (a prober records only while it probes)");
	return 0;
}

/* Parse the options into c: 0, LS_OPTS_HELP after the help, or LS_EXIT_USAGE after a message. */
static int parse(struct bd_cli *c, int argc, char **argv)
{
	static const struct ls_optcmd cmd = { .name = "breakdown", .mode = "", .usage = usage };
	struct ls_optgroup g[] = {
		LS_OPTGROUP(ls_probe_optv, &c->o), LS_OPTGROUP(bd_options, c),
		LS_OPTGROUP(ls_probe_limit_optv, &c->o),
	};
	struct ls_err err = { 0 };
	int rc;

	rc = ls_opts_parse(argc, argv, &cmd, g, ARRAY_SIZE(g), &err);
	if (rc)
		return rc;
	return check_args(c, argc, argv, ls_opt_given(&g[0], 'n'));
}

/* Open the output files before the run so a bad path fails early; none is visible until commit. */
static int open_outputs(const struct bd_cli *c, struct ls_afile *sf, struct ls_afile *rf,
			struct ls_prom *pf, struct ls_err *err)
{
	if (c->samples && ls_afile_open(sf, c->samples, err))
		return ls_err_wrap(err, "--samples");
	if (c->report && ls_afile_open(rf, c->report, err)) {
		if (c->samples)
			ls_afile_abort(sf);
		return ls_err_wrap(err, "--report");
	}
	if (c->prom && ls_prom_open(pf, c->prom, false, err)) {
		if (c->samples)
			ls_afile_abort(sf);
		if (c->report)
			ls_afile_abort(rf);
		return ls_err_wrap(err, "--prom");
	}
	return 0;
}

/* --report: the run's JSON document, built in memory, drawn as latsplit report draws a file. */
static int write_report(struct ls_afile *rf, const struct ls_bd_an *a,
			const struct ls_probe_result *r, const struct bd_cli *c,
			const struct ls_bd_host *local, const struct ls_bd_host *peer,
			const struct ls_bd_base *base, struct ls_err *err)
{
	struct ls_report rep = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int ret = -1;

	mem = open_memstream(&text, &len);
	if (!mem)
		return ls_errnof(err, errno, "--report: open_memstream");
	bd_print_json(mem, a, r, c, local, peer, base);
	if (fclose(mem)) {
		free(text);
		return ls_errnof(err, errno, "--report: build the JSON document");
	}
	if (ls_report_add_text(&rep, "this run", text, len, err) ||
	    ls_report_write_fp(&rep, rf->fp, c->report, err))
		goto out;
	ret = ls_afile_commit(rf, err);
out:
	ls_report_free(&rep);
	return ret;
}

/* The analysis' defaults: one store-and-forward hop, the floor and tail quantiles, the thresholds. */
static void bd_analysis_defaults(struct bd_cli *c)
{
	c->hops = 1;
	c->sw = LS_SWITCH_SF;
	c->floor_q = 0.05;
	c->tail_frac = 0.01;
	c->preempt_slack_ns = 200000;
	ls_thresholds_default(&c->thr);
}

/* The analysis' settings from the options. */
static void bd_params(const struct bd_cli *c, struct ls_bd_params *p)
{
	p->link_gbps = c->link_gbps;
	p->cable_m = c->cable_m;
	p->hops = c->hops;
	p->sw = c->sw;
	p->floor_q = c->floor_q;
	p->tail_frac = c->tail_frac;
	p->preempt_slack_ns = c->preempt_slack_ns;
	p->thr = c->thr;
	p->expect_gbps = c->expect_gbps;
}

/* The responder: serve one prober session, recording, and ship the data. */
static int run_responder(struct bd_cli *c, struct bd_ctx *x)
{
	struct ls_probe_result r;
	struct ls_err err = { 0 };
	int rc;

	memset(&r, 0, sizeof(r));
	x->res = &r;
	if (bd_start(x, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (bd_idle_pause(x, true, &err)) {
		ls_warn("breakdown: responder: %s", err.msg);
		bd_stop(x);
		return LS_EXIT_USAGE;
	}
	if (!x->local.measured)
		ls_warn("breakdown: responder: no kernel backend (%s): the prober will mark this side's processing unmeasured",
			x->local.why);
	rc = ls_probe_run_server(&c->o, &r, &err);
	bd_stop(x);
	if (rc) {
		ls_warn("breakdown: responder: %s", err.msg);
		rc = ls_exit_status(&err, r.nruns && r.runs[0].count);
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
static int run_pair(struct bd_cli *c, struct bd_ctx *x, const struct ls_bd_base *base,
		    struct ls_afile *sf, struct ls_afile *rf, struct bd_prom_pair *pp)
{
	struct ls_probe_result r;
	struct ls_err err = { 0 };
	struct ls_bd_params prm;
	struct ls_bd_an a;
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
		rc = ls_exit_status(&err, r.nruns && r.runs[0].count);
		goto out;
	}
	bd_stop(x);
	bd_counters(x);
	bd_filter_records(&x->local, x->run_begin > BD_SLACK_NS ? x->run_begin - BD_SLACK_NS : 0,
		       x->run_end + BD_SLACK_NS);
	snprintf(x->local.rate, sizeof(x->local.rate), "%s", r.dev.rate);
	x->local.link_gbps = r.dev.link_gbps;
	if (!x->have_peer) {
		ls_errf(&err, "the responder sent no breakdown data");
		ls_warn("breakdown: %s", err.msg);
		rc = LS_EXIT_FAIL;
		goto out;
	}
	if (!x->peer.measured)
		ls_warn("breakdown: responder: no kernel backend (%s): its processing is unmeasured",
			x->peer.why);
	bd_params(c, &prm);
	if (ls_bd_analyze(&a, &r, &prm, &x->local, &x->peer, base, &err)) {
		ls_warn("breakdown: %s", err.msg);
		rc = LS_EXIT_FAIL;
		goto out;
	}
	if (c->json)
		bd_print_json(stdout, &a, &r, c, &x->local, &x->peer, base);
	else
		bd_print_text(&a, &r, c, &x->local, &x->peer, base);
	fflush(stdout);
	rc = LS_EXIT_OK;
	if (sf) {
		bd_write_samples(sf->fp, &a, &r.runs[0]);
		if (ls_afile_commit(sf, &err)) {
			ls_warn("breakdown: --samples: %s", err.msg);
			rc = LS_EXIT_USAGE;
		}
		sf = NULL;
	}
	if (rf) {
		if (write_report(rf, &a, &r, c, &x->local, &x->peer, base, &err)) {
			ls_warn("breakdown: %s", err.msg);
			rc = LS_EXIT_USAGE;
		} else {
			fprintf(stderr, "latsplit: breakdown: wrote the report %s\n", c->report);
		}
		rf = NULL;
	}
	if (pp && bd_prom_keep(pp, &a, &x->local, &x->peer, &err)) {
		ls_warn("breakdown: %s", err.msg);
		rc = LS_EXIT_USAGE;
	}
out:
	if (rc != LS_EXIT_OK) {
		x->fail = err;
		if (!x->fail.msg[0])
			snprintf(x->fail.msg, sizeof(x->fail.msg), "breakdown failed (exit status %d)", rc);
	}
	if (sf)
		ls_afile_abort(sf);
	if (rf)
		ls_afile_abort(rf);
	ls_bd_an_free(&a);
	ls_probe_result_free(&r);
	return rc;
}

/* What the fleet runner hands each breakdown pair. */
struct bd_fleet {
	struct bd_cli *c;
	struct bd_ctx *x;
	const struct ls_bd_base *base;
	struct ls_afile *sf;		/* --samples (one pair only), or NULL */
	struct ls_afile *rf;		/* --report (one pair only), or NULL */
};

/* The fleet runner's call for one pair: a clean context, its --prom label, the run. */
static int fleet_pair(void *arg, const char *label, void *pair)
{
	struct bd_fleet *f = arg;
	struct bd_prom_pair *pp = pair;

	if (f->c->peers)
		bd_ctx_reset(f->x);
	if (pp)
		snprintf(pp->head.peer, sizeof(pp->head.peer), "%s", label);
	return run_pair(f->c, f->x, f->base, f->sf, f->rf, pp);
}

/* The fleet runner's --prom writer over every pair's record. */
static int fleet_prom(struct ls_prom *pf, const void *pairs, size_t n, struct ls_err *err)
{
	return bd_write_prom(pf, pairs, n, err);
}

/* Free what one pair's --prom record holds. */
static void prom_pair_free(void *pair)
{
	free(((struct bd_prom_pair *)pair)->ctr);
}

/* The prober: one pair (PEER) or every host of --peers in turn, then the files. */
static int run_prober(struct bd_cli *c, struct bd_ctx *x)
{
	struct ls_afile sf = { 0 }, rf = { 0 };
	struct ls_fleet_cmd fc;
	struct ls_err err = { 0 };
	struct ls_bd_base base;
	struct bd_fleet f;
	struct ls_prom pf;
	int rc;

	memset(&base, 0, sizeof(base));
	memset(&pf, 0, sizeof(pf));
	if (c->baseline && ls_bd_load_baseline(c->baseline, c->o.sizes[0], c->o.verb, &base, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	if (open_outputs(c, &sf, &rf, &pf, &err)) {
		ls_warn("breakdown: %s", err.msg);
		return LS_EXIT_USAGE;
	}
	f = (struct bd_fleet){ c, x, &base, c->samples ? &sf : NULL, c->report ? &rf : NULL };
	/*
	 * A failed pair printed no split: its failed line stands for it. One
	 * pair that failed writes no --prom file (nothing was measured); a
	 * fleet run writes every pair, the failed ones as up 0.
	 */
	fc = (struct ls_fleet_cmd){
		.kind = "breakdown", .run = fleet_pair, .arg = &f, .json = c->json,
		.peers = c->peers ? &c->plist : NULL, .peer = &c->o.peer, .port = c->o.port,
		.failed_run_reports = false, .prom = c->prom ? &pf : NULL,
		.pair_size = sizeof(struct bd_prom_pair), .write_prom = fleet_prom,
		.free_pair = prom_pair_free };
	rc = ls_fleet_run(&fc);
	ls_afile_abort(&sf);	/* still open only when the --prom records failed */
	ls_afile_abort(&rf);
	return rc;
}

/*
 * Read a breakdown command line into c and x with the defaults and hooks;
 * 0, or an exit status (LS_OPTS_HELP after the help).
 */
static int bd_setup(struct bd_cli *c, struct bd_ctx *x, int argc, char **argv)
{
	int rc;

	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(*x));
	ls_probe_opts_init(&c->o);
	c->o.iters = BD_DEFAULT_ITERS;
	c->o.sizes[0] = 4;
	c->o.nsizes = 1;
	c->backend = "auto";
	c->ring_kib = BD_DEFAULT_RING_KIB;
	bd_analysis_defaults(c);
	rc = parse(c, argc, argv);
	if (rc)
		return rc;
	if (c->o.cpu < 0) {
		c->o.cpu = sched_getcpu();
		if (c->o.cpu < 0 || c->o.cpu >= LS_MAX_CPUS)
			c->o.cpu = 0;
	}
	c->o.run_start = bd_on_run_start;
	c->o.run_end = bd_on_run_end;
	c->o.finish = bd_on_finish;
	c->o.session_start = bd_on_session_start;
	c->o.session_end = bd_on_session_end;
	c->o.arg = x;
	x->c = c;
	return 0;
}

/* `latsplit breakdown`: prober with PEER, responder without. */
int cmd_breakdown(int argc, char **argv)
{
	struct bd_cli c;
	struct bd_ctx x;
	int rc;

	rc = bd_setup(&c, &x, argc, argv);
	if (rc)
		return rc == LS_OPTS_HELP ? LS_EXIT_OK : rc;
	rc = c.is_prober ? run_prober(&c, &x) : run_responder(&c, &x);
	bd_ctx_reset(&x);
	ls_peers_free(&c.plist);
	return rc;
}

/*
 * The agent's breakdown of one peer (tools/cli/cmd_agent.c, in a child of
 * its own): argv is a prober's `breakdown PEER ...` command line; pp gets
 * what --prom keeps of the pair, without its statistics list (ctr NULL:
 * the record crosses a pipe). Returns the exit status; the report goes to
 * stdout (the agent points it at /dev/null).
 */
int bd_agent_once(int argc, char **argv, struct bd_prom_pair *pp, struct ls_err *err)
{
	struct ls_bd_base base;
	struct bd_cli c;
	struct bd_ctx x;
	int rc;

	memset(pp, 0, sizeof(*pp));
	memset(&base, 0, sizeof(base));
	rc = bd_setup(&c, &x, argc, argv);
	if (rc) {
		ls_errcf(err, LS_E_USAGE, "breakdown: bad options");
		return rc == LS_OPTS_HELP ? LS_EXIT_USAGE : rc;
	}
	if (!c.is_prober || c.peers) {
		ls_errcf(err, LS_E_USAGE, "breakdown: the agent's breakdown takes one PEER");
		rc = ls_opts_bad("breakdown", "the agent's breakdown takes one PEER");
		goto out;
	}
	c.o.refused_retry_ns = BD_REFUSED_RETRY_NS;
	rc = run_pair(&c, &x, &base, NULL, NULL, pp);
	if (rc)
		*err = x.fail;
	pp->head.ok = rc == LS_EXIT_OK;
	free(pp->ctr);
	pp->ctr = NULL;
	pp->nctr = 0;
out:
	bd_ctx_reset(&x);
	ls_peers_free(&c.plist);
	return rc;
}
