// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit check: the seed's layer-by-layer checklist for one RDMA port,
 * physical to application: port state, link rate and width, physical
 * errors, PFC pauses, ECN/CNP, out-of-sequence and retransmits, RDMA
 * latency against the thresholds, ICMP ping beside RDMA, NIC IRQ spread.
 * One PASS/WARN/FAIL row each, with its evidence.
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "commands.h"
#include "counters.h"
#include "icmp.h"
#include "io.h"
#include "json.h"
#include "nic.h"
#include "opts.h"
#include "probe.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"

enum row_status { ROW_PASS, ROW_WARN, ROW_FAIL, ROW_SKIP };

static const char *const status_name[] = { "PASS", "WARN", "FAIL", "SKIP" };

struct check_row {
	const char *id;
	const char *title;
	enum row_status status;
	char evidence[768];
};

#define MAX_ROWS	12

struct check_opts {
	const char *ibdev;
	unsigned int port;
	const char *peer;
	double expect_gbps;		/* 0: no expectation */
	double window_s;		/* -w */
	uint64_t window_ns;
	uint64_t iters;
	unsigned int qp_timeout;
	unsigned int oob_port;		/* 0: the probe's default */
	const char *key_file;		/* --key: the responder's shared key */
	unsigned int ping_count;
	struct ls_thresholds th;	/* the breakdown's thresholds and parser */
	bool json;
};

struct check_ctx {
	struct check_opts o;
	struct ls_nic nic;
	struct ls_ctr_diff diff;
	struct check_row rows[MAX_ROWS];
	unsigned int nr_rows;
	/* RDMA probe, when PEER is given */
	bool probed;
	char probe_error[512];
	struct ls_summary rdma;		/* one-way ns */
	/* ping, when PEER is given */
	bool pinged;
	char ping_error[256];
	unsigned int ping_sent, ping_recv;
	struct ls_summary ping;		/* RTT ns */
};

/* Print the usage of `latsplit check`. */
static void check_usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit check -d DEV [OPTIONS] [PEER]\n"
		"\n"
		"Layer-by-layer health check of an RDMA port (physical -> application).\n"
		"With PEER (running `latsplit probe` as responder) it also measures RDMA\n"
		"latency and ICMP ping side by side.\n"
		"\n"
		"options:\n"
		"  -d, --ib-dev DEV         RDMA device (required)\n"
		"  -i, --ib-port N          port number (default 1)\n"
		"  -g, --expect-gbps G      expected link rate; lower is a FAIL (downgrade)\n"
		"  -w, --window SECS        counter window when no PEER is given (default 2)\n"
		"  -n, --iters N            probe iterations (default 1000)\n"
		"  -u, --qp-timeout T       QP local ACK timeout exponent (default 14)\n"
		"  -p, --port P             probe's out-of-band TCP port\n"
		"      --key FILE           the responder's shared key (its --key)\n"
		"  -c, --ping-count N       ICMP echoes (default 20)\n"
		"      --normal-us LO-HI    normal 4 B one-way latency range (default 1.5-3)\n"
		"      --abnormal-us X      abnormal above X (default 5)\n"
		"      --hurts-us X         hurts training above X (default 10)\n"
		"  -j, --json               JSON (kind \"check\")\n"
		"  -h, --help               this text\n"
		"\n"
		"exit status: 0 every row passed or warned, 1 a row failed, 2 could not run\n");
}

/* The options of check. */
enum { OPT_NORMAL = 256, OPT_ABNORMAL, OPT_HURT, OPT_KEY };

#define CO struct check_opts

static const struct ls_opt check_options[] = {
	LS_OPT_STR("ib-dev", 'd', CO, ibdev),
	LS_OPT_U64("ib-port", 'i', CO, port, 1, 255),
	LS_OPT_DBL("expect-gbps", 'g', CO, expect_gbps, 0.001, 10000),
	LS_OPT_DBL("window", 'w', CO, window_s, 0.1, 3600),
	LS_OPT_U64("iters", 'n', CO, iters, 10, 100000000),
	LS_OPT_U64("qp-timeout", 'u', CO, qp_timeout, 1, 31),
	LS_OPT_U64("port", 'p', CO, oob_port, 1, 65535),
	LS_OPT_STR("key", OPT_KEY, CO, key_file),
	LS_OPT_U64("ping-count", 'c', CO, ping_count, 1, 100000),
	LS_OPT_HOOK("normal-us", OPT_NORMAL, CO, th, ls_opt_normal_us),
	LS_OPT_USEC("abnormal-us", OPT_ABNORMAL, CO, th.abnormal_ns, 0, 1e9),
	LS_OPT_USEC("hurts-us", OPT_HURT, CO, th.hurts_ns, 0, 1e9),
	LS_OPT_FLAG("json", 'j', CO, json),
	LS_OPT_HELPOPT,
};

/* Parse and validate options: 0, LS_OPTS_HELP after the help, or LS_EXIT_USAGE after a message. */
static int check_parse(int argc, char **argv, struct check_opts *o)
{
	static const struct ls_optcmd cmd = { .name = "check", .mode = "", .usage = check_usage };
	struct ls_err err = { 0 };
	int rc;

	memset(o, 0, sizeof(*o));
	o->port = 1;
	o->iters = 1000;
	o->qp_timeout = 14;
	o->ping_count = 20;
	o->window_s = 2;
	ls_thresholds_default(&o->th);
	rc = LS_OPTS_PARSE(argc, argv, &cmd, check_options, o, &err);
	if (rc)
		return rc;
	if (optind < argc)
		o->peer = argv[optind++];
	if (optind < argc) {
		ls_errf(&err, "unexpected argument '%s'", argv[optind]);
		goto bad;
	}
	if (!o->ibdev) {
		ls_errf(&err, "-d DEV is required");
		goto bad;
	}
	if (ls_thresholds_check(&o->th, &err))
		goto bad;
	if (o->key_file && !o->peer) {
		ls_errf(&err, "--key needs a PEER to probe");
		goto bad;
	}
	if (o->key_file && ls_auth_key_check(o->key_file, &err))
		goto bad;
	o->window_ns = (uint64_t)(o->window_s * 1e9);
	return 0;
bad:
	ls_warn("check: %s", err.msg);
	return LS_EXIT_USAGE;
}

/* Append a row. */
static struct check_row *add_row(struct check_ctx *cx, const char *id, const char *title,
				 enum row_status st, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static struct check_row *add_row(struct check_ctx *cx, const char *id, const char *title,
				 enum row_status st, const char *fmt, ...)
{
	struct check_row *r;
	va_list ap;

	if (cx->nr_rows >= MAX_ROWS)
		return NULL;
	r = &cx->rows[cx->nr_rows++];
	r->id = id;
	r->title = title;
	r->status = st;
	va_start(ap, fmt);
	vsnprintf(r->evidence, sizeof(r->evidence), fmt, ap);
	va_end(ap);
	return r;
}

/* Append "name +delta" for counters matching pred to buf; returns how many moved. */
static unsigned int moved_list(const struct ls_ctr_diff *d, bool (*pred)(const struct ls_ctr_delta *),
			       char *buf, size_t len, unsigned int *readable)
{
	unsigned int moved = 0;
	size_t n = 0;

	buf[0] = '\0';
	*readable = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct ls_ctr_delta *c = &d->v[i];

		if (!c->ok || !pred(c))
			continue;
		(*readable)++;
		if (!ls_ctr_moved(c))
			continue;
		moved++;
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s %+lld", n ? ", " : "",
					      c->name, (long long)c->delta);
	}
	return moved;
}

/* Counter-name predicates for the rows. */
static bool is_phys(const struct ls_ctr_delta *c)
{
	static const char *const keys[] = {
		"symbol_error", "crc", "fcs", "link_error_recovery", "link_downed",
		"port_rcv_errors", "local_link_integrity", "excessive_buffer_overrun",
		"rx_length_errors", "rx_frame_errors", "align",
	};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strcasestr(c->name, keys[i]))
			return true;
	return false;
}
static bool is_pfc(const struct ls_ctr_delta *c) { return c->cls == LS_CTR_PFC; }
static bool is_ecn_cnp(const struct ls_ctr_delta *c) { return c->cls == LS_CTR_ECN || c->cls == LS_CTR_CNP; }
static bool is_oos_retx(const struct ls_ctr_delta *c) { return c->cls == LS_CTR_OOS || c->cls == LS_CTR_RETRANS; }

/* Total since boot of counters matching pred (non-gauge, readable). */
static uint64_t total_of(const struct ls_ctr_diff *d, bool (*pred)(const struct ls_ctr_delta *))
{
	uint64_t t = 0;

	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].ok && !d->v[i].gauge && pred(&d->v[i]))
			t += d->v[i].after;
	return t;
}

/* Port state and physical state rows. */
static void row_port(struct check_ctx *cx)
{
	char path[256], state[64] = "", phys[64] = "";
	struct ls_err err;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/state", cx->o.ibdev, cx->o.port);
	if (ls_read_text(path, state, sizeof(state), &err)) {
		add_row(cx, "port-state", "port state", ROW_FAIL, "%s", err.msg);
		return;
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/phys_state", cx->o.ibdev, cx->o.port);
	ls_read_text(path, phys, sizeof(phys), NULL);
	add_row(cx, "port-state", "port state", strstr(state, "ACTIVE") &&
		(!phys[0] || strstr(phys, "LinkUp")) ? ROW_PASS : ROW_FAIL,
		"state %s, phys_state %s", state, phys[0] ? phys : "unknown");
}

/* Link rate and width against --expect-gbps. */
static void row_rate(struct check_ctx *cx)
{
	char path[256], rate[96];
	struct ls_err err;
	double gbps;
	char *end;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/rate", cx->o.ibdev, cx->o.port);
	if (ls_read_text(path, rate, sizeof(rate), &err)) {
		add_row(cx, "link-rate", "link rate and width", ROW_FAIL, "%s", err.msg);
		return;
	}
	gbps = strtod(rate, &end);
	if (end == rate) {
		add_row(cx, "link-rate", "link rate and width", ROW_FAIL, "unparsable rate '%s'", rate);
		return;
	}
	if (cx->o.expect_gbps <= 0)
		add_row(cx, "link-rate", "link rate and width", ROW_PASS,
			"%s (no --expect-gbps given to compare with)", rate);
	else if (gbps + 1e-9 < cx->o.expect_gbps)
		add_row(cx, "link-rate", "link rate and width", ROW_FAIL,
			"%s is below the expected %g Gb/s: the link trained down (check cable, optics, width)",
			rate, cx->o.expect_gbps);
	else
		add_row(cx, "link-rate", "link rate and width", ROW_PASS, "%s (expected %g Gb/s)",
			rate, cx->o.expect_gbps);
}

/* One counter-class row: FAIL/WARN when moving, per the class's severity. */
static void row_counters(struct check_ctx *cx, const char *id, const char *title,
			 bool (*pred)(const struct ls_ctr_delta *), enum row_status if_moved,
			 const char *meaning)
{
	char list[600];
	unsigned int readable, moved;
	double secs = (double)cx->o.window_ns / 1e9;

	moved = moved_list(&cx->diff, pred, list, sizeof(list), &readable);
	if (!readable)
		add_row(cx, id, title, ROW_WARN, "no such counter is exposed by %s%s%s: cannot judge",
			cx->o.ibdev, cx->nic.netdev[0] ? " / " : "", cx->nic.netdev);
	else if (moved)
		add_row(cx, id, title, if_moved, "moved during the window: %s (%s)", list, meaning);
	else if (pred == is_phys && total_of(&cx->diff, pred))
		add_row(cx, id, title, ROW_WARN,
			"%u counters steady over %.1f s but %llu errors since they were last cleared",
			readable, secs, (unsigned long long)total_of(&cx->diff, pred));
	else
		add_row(cx, id, title, ROW_PASS, "%u counters, none moved", readable);
}

/* RDMA one-way latency against the thresholds. */
static void row_latency(struct check_ctx *cx)
{
	const struct ls_thresholds *th = &cx->o.th;
	const char *t = "RDMA latency (4 B one-way)";
	enum ls_level lvl;
	double p50, p99;

	if (!cx->o.peer) {
		add_row(cx, "rdma-latency", t, ROW_SKIP, "no PEER given");
		return;
	}
	if (!cx->probed) {
		add_row(cx, "rdma-latency", t, ROW_FAIL, "probe failed: %s", cx->probe_error);
		return;
	}
	p50 = cx->rdma.p50 / 1e3;
	p99 = cx->rdma.p99 / 1e3;
	lvl = ls_level_of(th, cx->rdma.p50);
	if (lvl == LS_LEVEL_HURTS)
		add_row(cx, "rdma-latency", t, ROW_FAIL,
			"p50 %.2f us, p99 %.2f us: above %g us, visibly hurts training", p50, p99,
			th->hurts_ns / 1e3);
	else if (lvl == LS_LEVEL_ABNORMAL)
		add_row(cx, "rdma-latency", t, ROW_FAIL,
			"p50 %.2f us, p99 %.2f us: abnormal (> %g us): queuing or processing trouble",
			p50, p99, th->abnormal_ns / 1e3);
	else if (lvl == LS_LEVEL_ELEVATED || ls_level_of(th, cx->rdma.p99) == LS_LEVEL_HURTS)
		add_row(cx, "rdma-latency", t, ROW_WARN,
			"p50 %.2f us, p99 %.2f us: above the normal %g-%g us, or a tail that hurts",
			p50, p99, th->normal_lo_ns / 1e3, th->normal_hi_ns / 1e3);
	else
		add_row(cx, "rdma-latency", t, ROW_PASS, "p50 %.2f us, p99 %.2f us (normal %g-%g us)",
			p50, p99, th->normal_lo_ns / 1e3, th->normal_hi_ns / 1e3);
}

/* ICMP ping beside RDMA: the seed's pitfall, one fine and the other not. */
static void row_ping(struct check_ctx *cx)
{
	const char *t = "ICMP ping vs RDMA";
	double loss;
	bool rdma_bad;

	if (!cx->o.peer) {
		add_row(cx, "ping-vs-rdma", t, ROW_SKIP, "no PEER given");
		return;
	}
	if (!cx->pinged) {
		add_row(cx, "ping-vs-rdma", t, ROW_WARN, "ping could not run: %s", cx->ping_error);
		return;
	}
	loss = cx->ping_sent ? 100.0 * (cx->ping_sent - cx->ping_recv) / cx->ping_sent : 100;
	rdma_bad = !cx->probed || ls_level_of(&cx->o.th, cx->rdma.p50) >= LS_LEVEL_ABNORMAL;
	if (loss > 0.1)
		add_row(cx, "ping-vs-rdma", t, ROW_FAIL,
			"ICMP loss %.1f%% (%u/%u): a link or forwarding fault%s", loss,
			cx->ping_sent - cx->ping_recv, cx->ping_sent,
			rdma_bad ? "" : ", although RDMA works (ping goes through the L3 path)");
	else if (rdma_bad)
		add_row(cx, "ping-vs-rdma", t, ROW_FAIL,
			"ping fine (RTT p50 %.1f us, no loss) but RDMA is not (%s): ping working does not "
			"mean RDMA works; check PFC/ECN and the RDMA path",
			cx->ping.p50 / 1e3, cx->probed ? "one-way p50 above the abnormal threshold" : "probe failed");
	else
		add_row(cx, "ping-vs-rdma", t, ROW_PASS,
			"ICMP RTT p50 %.1f us (no loss) vs RDMA RTT p50 %.1f us: %.1fx", cx->ping.p50 / 1e3,
			2 * cx->rdma.p50 / 1e3, cx->rdma.p50 > 0 ? cx->ping.p50 / (2 * cx->rdma.p50) : 0);
}

/* NIC IRQ spread across CPUs. */
static void row_irq_spread(struct check_ctx *cx)
{
	uint64_t all[LS_CPUMASK_WORDS] = { 0 };
	unsigned int weight = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char list[256];

	if (!cx->nic.nr_irqs) {
		add_row(cx, "irq-spread", "NIC IRQ spread", ROW_WARN,
			"no IRQs found for %s (netdev %s)", cx->o.ibdev,
			cx->nic.netdev[0] ? cx->nic.netdev : "none");
		return;
	}
	for (unsigned int i = 0; i < cx->nic.nr_irqs; i++) {
		uint64_t mask[LS_CPUMASK_WORDS], eff[LS_CPUMASK_WORDS];

		if (ls_irq_affinity(cx->nic.irqs[i], mask, eff, NULL))
			continue;
		for (int w = 0; w < LS_CPUMASK_WORDS; w++)
			all[w] |= eff[w];
	}
	for (int w = 0; w < LS_CPUMASK_WORDS; w++)
		weight += (unsigned int)__builtin_popcountll(all[w]);
	ls_format_cpulist(all, LS_MAX_CPUS, list, sizeof(list));
	if (cx->nic.nr_unwatched)
		add_row(cx, "irq-watch", "NIC IRQs watched", ROW_WARN,
			"%u of the NIC's %u IRQs are beyond the %d the kernel backends watch: breakdown and irq miss them",
			cx->nic.nr_unwatched, cx->nic.nr_irqs + cx->nic.nr_unwatched, LS_MAX_IRQS);
	if (online > 1 && weight <= 1)
		add_row(cx, "irq-spread", "NIC IRQ spread", ROW_WARN,
			"all %u NIC IRQs are served by CPU %s of %ld online: one busy CPU delays them all",
			cx->nic.nr_irqs, list, online);
	else
		add_row(cx, "irq-spread", "NIC IRQ spread", ROW_PASS,
			"%u NIC IRQs over CPUs %s (%ld online)", cx->nic.nr_irqs, list, online);
}

/* Run the ping and the probe against PEER. */
static void measure_peer(struct check_ctx *cx)
{
	struct ls_ping_result pr;
	struct ls_probe_opts po;
	struct ls_probe_result res;
	struct ls_err err = { 0 };
	double *v;

	if (ls_ping(cx->o.peer, cx->o.ping_count, 200000000ull, 2000000000ull, &pr, &err)) {
		snprintf(cx->ping_error, sizeof(cx->ping_error), "%s", err.msg);
	} else {
		cx->pinged = true;
		cx->ping_sent = pr.sent;
		cx->ping_recv = pr.received;
		ls_summarize(pr.rtt_ns, pr.received, &cx->ping);
		ls_ping_result_free(&pr);
	}

	ls_probe_opts_init(&po);
	po.device = cx->o.ibdev;
	po.ib_port = cx->o.port;
	po.sizes[0] = 4;
	po.nsizes = 1;
	po.iters = cx->o.iters;
	po.qp_timeout = cx->o.qp_timeout;
	po.peer = cx->o.peer;
	po.key_file = cx->o.key_file;
	if (cx->o.oob_port)
		po.port = (uint16_t)cx->o.oob_port;
	memset(&res, 0, sizeof(res));
	if (ls_probe_run_client(&po, &res, &err)) {
		snprintf(cx->probe_error, sizeof(cx->probe_error), "%s", err.msg);
		ls_probe_result_free(&res);
		return;
	}
	v = calloc(res.runs[0].count ? res.runs[0].count : 1, sizeof(double));
	if (!v) {
		snprintf(cx->probe_error, sizeof(cx->probe_error), "out of memory");
		ls_probe_result_free(&res);
		return;
	}
	for (uint64_t i = 0; i < res.runs[0].count; i++)
		v[i] = (double)(res.runs[0].samples[i].end_ns - res.runs[0].samples[i].start_ns) /
		       ls_probe_rtt_divisor(res.verb);
	ls_summarize(v, res.runs[0].count, &cx->rdma);
	cx->probed = res.runs[0].count > 0;
	if (!cx->probed)
		snprintf(cx->probe_error, sizeof(cx->probe_error), "no samples");
	free(v);
	ls_probe_result_free(&res);
}

/* Print the rows as a table. */
static void print_rows(const struct check_ctx *cx)
{
	printf("latsplit check %s port %u%s%s%s\n", cx->o.ibdev, cx->o.port,
	       cx->nic.netdev[0] ? " (netdev " : "", cx->nic.netdev,
	       cx->nic.netdev[0] ? ")" : "");
	for (unsigned int i = 0; i < cx->nr_rows; i++)
		printf("%-4s  %-28s %s\n", status_name[cx->rows[i].status], cx->rows[i].title,
		       cx->rows[i].evidence);
	if (cx->diff.unreadable)
		printf("note: %zu counters could not be read (named in --json)\n", cx->diff.unreadable);
}

/* Print the rows as JSON. */
static void print_json(const struct check_ctx *cx)
{
	struct ls_json j;

	ls_json_doc_open(&j, stdout, true, "check");
	ls_json_str(&j, "ib_dev", cx->o.ibdev);
	ls_json_u64(&j, "ib_port", cx->o.port);
	ls_json_str(&j, "netdev", cx->nic.netdev);
	if (cx->o.peer)
		ls_json_str(&j, "peer", cx->o.peer);
	ls_json_obj_open(&j, "thresholds");
	ls_json_threshold_members(&j, &cx->o.th);
	ls_json_obj_close(&j);
	ls_json_arr_open(&j, "rows");
	for (unsigned int i = 0; i < cx->nr_rows; i++) {
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "id", cx->rows[i].id);
		ls_json_str(&j, "title", cx->rows[i].title);
		ls_json_str(&j, "status", status_name[cx->rows[i].status]);
		ls_json_str(&j, "evidence", cx->rows[i].evidence);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	if (cx->probed)
		ls_json_summary(&j, "rdma_one_way", &cx->rdma);
	if (cx->pinged) {
		ls_json_u64(&j, "ping_sent", cx->ping_sent);
		ls_json_u64(&j, "ping_received", cx->ping_recv);
		ls_json_summary(&j, "ping_rtt", &cx->ping);
	}
	ls_json_arr_open(&j, "counters_moved");
	for (size_t i = 0; i < cx->diff.n; i++) {
		const struct ls_ctr_delta *c = &cx->diff.v[i];

		if (!c->ok || !ls_ctr_moved(c))
			continue;
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "name", c->name);
		ls_json_str(&j, "class", ls_ctr_class_name(c->cls));
		ls_json_i64(&j, "delta", c->delta);
		ls_json_u64(&j, "after", c->after);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_arr_open(&j, "counters_unreadable");
	for (size_t i = 0; i < cx->diff.n; i++) {
		if (cx->diff.v[i].ok)
			continue;
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "name", cx->diff.v[i].name);
		ls_json_str(&j, "error", cx->diff.v[i].error);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* `latsplit check`: see check_usage(). */
int cmd_check(int argc, char **argv)
{
	struct ls_ctr_snap before = { 0 }, after = { 0 };
	struct ls_ctr_cfg ccfg = { 0 };
	struct ls_err err = { 0 };
	struct check_ctx *cx;
	char path[256];
	int ret = LS_EXIT_USAGE, rc;

	cx = calloc(1, sizeof(*cx));
	if (!cx) {
		ls_warn("check: out of memory");
		return LS_EXIT_USAGE;
	}
	rc = check_parse(argc, argv, &cx->o);
	if (rc) {
		free(cx);
		return rc == LS_OPTS_HELP ? LS_EXIT_OK : rc;
	}
	rc = ls_nic_resolve(cx->o.ibdev, NULL, &cx->nic, &err);
	if (rc)
		goto cleanup;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u", cx->o.ibdev, cx->o.port);
	if (access(path, F_OK)) {
		ls_errf(&err, "%s has no port %u", cx->o.ibdev, cx->o.port);
		goto cleanup;
	}
	ccfg.ibdev = cx->o.ibdev;
	ccfg.ipext = true;
	ccfg.port = cx->o.port;
	ccfg.netdev = cx->nic.netdev[0] ? cx->nic.netdev : NULL;
	rc = ls_ctr_snapshot(&ccfg, &before, &err);
	if (rc)
		goto cleanup;
	if (cx->o.peer) {
		uint64_t t0 = ls_now_ns();

		measure_peer(cx);
		cx->o.window_ns = ls_now_ns() - t0;
	} else {
		struct timespec ts = { (time_t)(cx->o.window_ns / 1000000000ull),
				       (long)(cx->o.window_ns % 1000000000ull) };

		while (nanosleep(&ts, &ts))
			;
	}
	rc = ls_ctr_snapshot(&ccfg, &after, &err);
	if (rc)
		goto cleanup;
	rc = ls_ctr_diff(&before, &after, &cx->diff, &err);
	if (rc)
		goto cleanup;

	row_port(cx);
	row_rate(cx);
	row_counters(cx, "phys-errors", "physical errors (symbol/CRC)", is_phys, ROW_FAIL,
		     "bad cable, optics or connector");
	row_counters(cx, "pfc", "PFC pause frames", is_pfc, ROW_FAIL,
		     "the link is being paused: a congested switch queue, look for the source of the burst");
	row_counters(cx, "ecn-cnp", "ECN marks / CNPs", is_ecn_cnp, ROW_WARN,
		     "congestion is being signalled; DCQCN is throttling senders");
	row_counters(cx, "oos-retrans", "out-of-sequence / retransmits", is_oos_retx, ROW_WARN,
		     "packets lost or reordered on the RDMA path");
	row_latency(cx);
	row_ping(cx);
	row_irq_spread(cx);

	if (cx->o.json)
		print_json(cx);
	else
		print_rows(cx);
	ret = LS_EXIT_OK;
	for (unsigned int i = 0; i < cx->nr_rows; i++)
		if (cx->rows[i].status == ROW_FAIL)
			ret = LS_EXIT_FAIL;
cleanup:
	if (ret == LS_EXIT_USAGE)
		ls_warn("check: %s", err.msg);
	ls_ctr_snap_free(&before);
	ls_ctr_snap_free(&after);
	ls_ctr_diff_free(&cx->diff);
	free(cx);
	return ret;
}
