// SPDX-License-Identifier: GPL-2.0
/* `latsplit probe`: a perftest-grade verbs latency probe (responder or prober). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../include/uapi/latsplit.h"
#include "agent.h"
#include "commands.h"
#include "io.h"
#include "json.h"
#include "peers.h"
#include "probe.h"
#include "probe_opts.h"
#include "prom.h"
#include "stats.h"
#include "util.h"

enum { FMT_AUTO, FMT_CSV, FMT_NDJSON };

struct probe_cli {
	struct ls_probe_opts o;
	bool sweep, rtt, json, hist;
	const char *samples;
	const char *prom;		/* --prom FILE */
	const char *peers;		/* --peers FILE: a fleet run */
	struct ls_peers plist;
	uint32_t sweep_max;		/* largest size of -a */
	int samples_fmt;
	bool tty;
	bool progress_shown;
};

/* Print the usage; its option list is the truth the man page is tested against. */
static void usage(FILE *fp)
{
	static const struct ls_probe_help help = {
		.after_size =
"  -a, --all                 size sweep 2, 4, ..., 8388608 bytes\n"
"      --sweep-max BYTES     largest size of the -a sweep (default 8388608)\n",
		.iters = "  -n, --iters N             iterations per size (default 1000)\n",
		.duration =
"  -D, --duration DUR        run each size for DUR (e.g. 5, 500ms) instead of -n\n",
		.cpu = "      --cpu N               pin the probe to CPU N\n",
		.wait = "      --wait-timeout DUR    timeout for one answer or completion (default 10s)\n",
	};

	fprintf(fp,
"usage: latsplit probe [OPTIONS] [PEER | --peers FILE]\n"
"\n"
"Verbs latency probe. Without PEER: responder (waits for a prober). With PEER:\n"
"prober (connects to the responder on PEER and measures).\n"
"\n"
"options:\n");
	ls_probe_help(fp, &help);
	ls_probe_limit_help(fp);
	fprintf(fp,
"other options:\n"
"      --forever             responder: keep serving after a session\n"
"      --rtt                 report round-trip time instead of one-way\n"
"      --json                JSON document on stdout (kind \"probe\")\n"
"      --samples FILE        write every sample to FILE (CSV, or NDJSON for\n"
"                            *.ndjson / *.jsonl)\n"
"      --samples-format FMT  csv or ndjson (overrides the file name)\n"
"      --hist                print a log-linear histogram\n"
"      --prom FILE           per-pair one-way latency in Prometheus text format\n"
"      --peers FILE          prober for every host in FILE (one per line, '#'\n"
"                            comments), one after another; --json gives one JSON\n"
"                            line per pair, --prom one file with a peer label\n"
"  -h, --help                this help\n"
"\n"
"exit status: 0 measured, 1 the run failed after it started (what was measured\n"
"is still reported; --peers: some pair failed), 2 bad input or could not start\n"
"(--peers: no pair could).\n");
}

/* Progress line on stderr (TTY only). */
static void show_progress(void *arg, const struct ls_probe_run *run, uint64_t done)
{
	struct probe_cli *c = arg;

	fprintf(stderr, "\r  size %u: %llu samples", run->size, (unsigned long long)done);
	if (c->o.iters)
		fprintf(stderr, " of %llu", (unsigned long long)c->o.iters);
	fflush(stderr);
	c->progress_shown = true;
}

/* Clear the progress line after a run. */
static void end_progress(void *arg, const struct ls_probe_run *run)
{
	struct probe_cli *c = arg;

	if (c->progress_shown)
		fprintf(stderr, "\r\033[K");
	c->progress_shown = false;
}

/* probe's own long options (the probe engine's come from probe_opts.h). */
enum { O_RTT = 256, O_JSON, O_SAMPLES, O_SFMT, O_HIST, O_FOREVER, O_SWMAX,
       O_PROM, O_PEERS };

static const struct ls_opt_name samples_fmts[] = {
	{ "csv", FMT_CSV }, { "ndjson", FMT_NDJSON }, { NULL, 0 },
};

#define PC struct probe_cli

static const struct ls_opt probe_options[] = {
	LS_OPT_FLAG("all", 'a', PC, sweep),
	LS_OPT_U64("sweep-max", O_SWMAX, PC, sweep_max, 2, 1u << 30),
	LS_OPT_FLAG("forever", O_FOREVER, PC, o.serve_forever),
	LS_OPT_FLAG("rtt", O_RTT, PC, rtt),
	LS_OPT_STR("prom", O_PROM, PC, prom),
	LS_OPT_STR("peers", O_PEERS, PC, peers),
	LS_OPT_FLAG("json", O_JSON, PC, json),
	LS_OPT_STR("samples", O_SAMPLES, PC, samples),
	LS_OPT_ENUM("samples-format", O_SFMT, PC, samples_fmt, samples_fmts),
	LS_OPT_FLAG("hist", O_HIST, PC, hist),
	LS_OPT_HELPOPT,
};

/* What the options said that the checks after them need. */
struct probe_seen {
	bool have_n, have_s;		/* -n, -s given */
};

/* The arguments and the checks across options once all are read; an exit status. */
static int check_args(struct probe_cli *c, int argc, char **argv,
		      const struct probe_seen *seen)
{
	struct ls_probe_opts *o = &c->o;

	if (optind < argc)
		o->peer = argv[optind++];
	if (optind < argc)
		return ls_opts_bad("probe", "unexpected argument '%s'", argv[optind]);
	/* Validation after parsing. */
	if (c->peers && o->peer)
		return ls_opts_bad("probe", "PEER and --peers: give one");
	if (c->peers && c->samples)
		return ls_opts_bad("probe", "--samples is of one pair: not with --peers");
	if (c->peers)
		o->peer = c->peers;	/* checked as a prober; each host's in turn */
	if (c->prom && !o->peer)
		return ls_opts_bad("probe", "--prom is the prober's");
	if (seen->have_n && o->duration_ns)
		return ls_opts_bad("probe", "-n and -D exclude each other");
	if (o->duration_ns)
		o->iters = 0;
	else if (o->capacity && o->peer)
		return ls_opts_bad("probe", "--max-samples of a prober needs -D");
	if (c->sweep && seen->have_s)
		return ls_opts_bad("probe", "-a and -s exclude each other");
	if (c->sweep) {
		o->nsizes = 0;
		for (uint32_t s = 2; s <= c->sweep_max && o->nsizes < LS_PROBE_MAX_SIZES; s <<= 1)
			o->sizes[o->nsizes++] = s;
	}
	if (!o->peer && (c->samples || c->rtt || c->hist || c->sweep || seen->have_n || seen->have_s ||
			 o->duration_ns || o->events || o->verb != LS_VERB_WRITE || o->mtu))
		return ls_opts_bad("probe", "-s/-a/-n/-D/-m/-e/--verb/--rtt/--hist/--samples are "
				   "the prober's (the responder follows the prober's parameters)");
	if (o->peer && (o->serve_forever || o->listen_timeout_ns))
		return ls_opts_bad("probe", "--forever and --listen-timeout are the responder's");
	if (c->samples_fmt == FMT_AUTO && c->samples) {
		size_t n = strlen(c->samples);

		c->samples_fmt = (n > 7 && !strcmp(c->samples + n - 7, ".ndjson")) ||
				 (n > 6 && !strcmp(c->samples + n - 6, ".jsonl")) ?
				 FMT_NDJSON : FMT_CSV;
	}
	return ls_probe_opts_finish(o, o->peer != NULL, c->peers, &c->plist, "probe");
}

/* Parse the options into c: 0, LS_OPTS_HELP after the help, or LS_EXIT_USAGE after a message. */
static int parse(struct probe_cli *c, int argc, char **argv)
{
	static const struct ls_optcmd cmd = { .name = "probe", .mode = "", .usage = usage };
	struct ls_optgroup g[] = {
		LS_OPTGROUP(ls_probe_optv, &c->o), LS_OPTGROUP(probe_options, c),
		LS_OPTGROUP(ls_probe_limit_optv, &c->o),
	};
	struct ls_err err = { 0 };
	struct probe_seen seen;
	int rc;

	c->sweep_max = 1u << 23;
	rc = ls_opts_parse(argc, argv, &cmd, g, ARRAY_SIZE(g), &err);
	if (rc)
		return rc;
	seen.have_n = ls_opt_given(&g[0], 'n');
	seen.have_s = ls_opt_given(&g[0], 's');
	return check_args(c, argc, argv, &seen);
}

/* Latency values of a run (one-way or RTT) in ns, malloc'd; NULL if empty. */
static double *latencies(bool rtt, const struct ls_probe_result *r,
			 const struct ls_probe_run *run)
{
	double div = rtt ? 1.0 : (double)ls_probe_rtt_divisor(r->verb);
	double *v;

	if (!run->count)
		return NULL;
	v = malloc(run->count * sizeof(*v));
	if (!v)
		return NULL;
	for (uint64_t i = 0; i < run->count; i++)
		v[i] = (double)(run->samples[i].end_ns - run->samples[i].start_ns) / div;
	return v;
}

/* Responder turnaround (seen -> answered) in ns, malloc'd; NULL if none. */
static double *turnarounds(const struct ls_probe_sample *s, uint64_t n)
{
	double *v;

	if (!n)
		return NULL;
	v = malloc(n * sizeof(*v));
	if (!v)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		v[i] = (double)(s[i].end_ns - s[i].start_ns);
	return v;
}


static const char *const hwclock_names[] = { "none", "hca", "wallclock" };

/* The header: what was measured, how, with which clock. */
static void print_header(const struct probe_cli *c, const struct ls_probe_result *r)
{
	const struct ls_probe_dev *d = &r->dev;

	printf("# latsplit probe (%s): RC %s %s, %s, %s port %u%s%s\n",
	       r->is_prober ? "prober" : "responder",
	       r->verb == LS_VERB_READ ? "RDMA READ" : r->verb == LS_VERB_SEND ? "SEND/RECV" :
	       r->events ? "RDMA WRITE-with-immediate" : "RDMA WRITE",
	       r->verb == LS_VERB_READ ? "" : "ping-pong",
	       r->rdma_cm ? "rdma_cm" : "TCP control channel", d->name, d->port,
	       *d->netdev ? " on " : "", d->netdev);
	printf("# peer %s, GID %d %s (%s), link %s\n", r->peer, d->gid_index, d->gid,
	       d->gid_type, *d->rate ? d->rate : "rate unknown");
	if (r->nruns > 1)
		printf("# sizes %u..%u B (%u runs), ", r->runs[0].size, r->runs[r->nruns - 1].size,
		       r->nruns);
	else
		printf("# size %u B, ", r->nruns ? r->runs[0].size : c->o.sizes[0]);
	printf("MTU %u (active %u", r->mtu, d->active_mtu);
	if (r->peer_active_mtu)
		printf(", peer active %u", r->peer_active_mtu);
	printf("), mode %s, CPU %s",
	       r->events ? "events (completion channel + ibv_req_notify_cq)" : "busy poll",
	       r->cpu >= 0 ? "pinned " : "not pinned");
	if (r->cpu >= 0)
		printf("%d", r->cpu);
	else if (r->ran_on_cpu >= 0)
		printf(", ran on %d", r->ran_on_cpu);
	printf("\n# clock: CLOCK_MONOTONIC (clock_gettime) per sample; HW completion "
	       "timestamps: %s\n",
	       d->hwclock == LS_HWCLOCK_NONE ? "none (device reports none)" :
	       d->hwclock == LS_HWCLOCK_HCA ? "HCA clock (ticks / hca_core_clock kHz)" :
	       "wallclock ns");
	if (!r->is_prober)
		printf("# responder turnaround: request seen -> answer posted\n");
	else if (c->rtt)
		printf("# latency: round-trip time (--rtt)\n");
	else if (r->verb == LS_VERB_READ)
		printf("# latency: RDMA READ completion time (a READ is one round trip; "
		       "as ib_read_lat)\n");
	else
		printf("# latency: one-way = RTT/2 (as ib_write_lat)\n");
}

/* One table row (figures in us). */
static void print_row(uint32_t size, const struct ls_summary *s, bool complete)
{
	printf("%9u %9zu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f%s\n", size,
	       s->count, s->min / 1e3, s->p50 / 1e3, s->p90 / 1e3, s->p99 / 1e3,
	       s->p999 / 1e3, s->p9999 / 1e3, s->max / 1e3, s->mean / 1e3, s->stdev / 1e3,
	       complete ? "" : "  (cut short)");
}

/* Log-linear histogram of sorted values (ns). */
static void print_hist(const double *v, size_t n)
{
	uint64_t counts[LS_HIST_NR_BUCKETS] = { 0 }, max = 0;

	for (size_t i = 0; i < n; i++)
		counts[ls_hist_bucket((uint64_t)llround(v[i]))]++;
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++)
		if (counts[b] > max)
			max = counts[b];
	printf("# histogram (log-linear, %u sub-buckets per power of two)\n", LS_HIST_SUB);
	printf("# %12s %12s %9s\n", "from_us", "to_us", "count");
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++) {
		int w;

		if (!counts[b])
			continue;
		w = (int)(40 * counts[b] / max);
		printf("  %12.3f %12.3f %9llu %.*s\n", ls_hist_bucket_lo(b) / 1e3,
		       ls_hist_bucket_hi(b) / 1e3, (unsigned long long)counts[b], w ? w : 1,
		       "########################################");
	}
}

/* JSON histogram of values (ns). */
static void json_hist(struct ls_json *j, const double *v, size_t n)
{
	uint64_t *counts = calloc(LS_HIST_NR_BUCKETS, sizeof(*counts));

	ls_json_arr_open(j, "histogram");
	if (counts) {
		for (size_t i = 0; i < n; i++)
			counts[ls_hist_bucket((uint64_t)llround(v[i]))]++;
		for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++) {
			if (!counts[b])
				continue;
			ls_json_obj_open(j, NULL);
			ls_json_u64(j, "lo_ns", ls_hist_bucket_lo(b));
			ls_json_u64(j, "hi_ns", ls_hist_bucket_hi(b));
			ls_json_u64(j, "count", counts[b]);
			ls_json_obj_close(j);
		}
	}
	ls_json_arr_close(j);
	free(counts);
}

/* Human output for the whole result. */
static void print_human(const struct probe_cli *c, const struct ls_probe_result *r)
{
	print_header(c, r);
	printf("# %7s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "bytes", "samples",
	       "min_us", "p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us", "max_us",
	       "mean_us", "stdev_us");
	for (unsigned int k = 0; k < r->nruns; k++) {
		const struct ls_probe_run *run = &r->runs[k];
		double *v = r->is_prober ? latencies(c->rtt, r, run) :
			    turnarounds(run->samples, run->count);
		struct ls_summary s;

		ls_summarize(v, v ? run->count : 0, &s);
		print_row(run->size, &s, run->complete);
		if (c->hist && v)
			print_hist(v, run->count);
		free(v);
	}
	if (r->is_prober && r->nruns) {
		const struct ls_probe_run *run = &r->runs[r->nruns - 1];
		double *t = turnarounds(run->peer, run->peer_count);
		struct ls_summary s;

		if (t) {
			ls_summarize(t, run->peer_count, &s);
			printf("# responder turnaround (seen -> answered, size %u): p50 %.3f us, "
			       "p99 %.3f us, max %.3f us\n", run->size, s.p50 / 1e3, s.p99 / 1e3,
			       s.max / 1e3);
			free(t);
		}
	}
	if (*r->fault)
		printf("# FAULT: %s\n", r->fault);
}

/* One run's figures as JSON members of the current object. */
static void json_run(struct ls_json *j, const struct probe_cli *c,
		     const struct ls_probe_result *r, const struct ls_probe_run *run, bool sweep)
{
	double *v = r->is_prober ? latencies(false, r, run) :
		    turnarounds(run->samples, run->count);
	double *t = r->is_prober ? turnarounds(run->peer, run->peer_count) : NULL;
	struct ls_summary s;

	ls_json_u64(j, "size", run->size);
	ls_json_u64(j, "count", run->count);
	ls_json_u64(j, "packets_per_message", run->pkts);
	ls_json_i64(j, "req_psn0", run->req_psn0);
	ls_json_i64(j, "ans_psn0", run->ans_psn0);
	if (sweep)
		ls_json_bool(j, "complete", run->complete);
	ls_json_u64(j, "begin_ns", run->begin_ns);
	ls_json_u64(j, "finish_ns", run->finish_ns);
	if (r->is_prober) {
		/* samples_ns in measurement order, before sorting */
		ls_json_arr_open(j, "samples_ns");
		for (uint64_t i = 0; v && i < run->count; i++)
			ls_json_dbl(j, NULL, v[i]);
		ls_json_arr_close(j);
	}
	ls_summarize(v, v ? run->count : 0, &s);
	ls_json_summary(j, r->is_prober ? "summary" : "turnaround", &s);
	if (c->hist)
		json_hist(j, v, v ? run->count : 0);
	if (r->is_prober) {
		double *rt = latencies(true, r, run);

		ls_summarize(rt, rt ? run->count : 0, &s);
		ls_json_summary(j, "rtt_summary", &s);
		free(rt);
		ls_json_obj_open(j, "responder");
		ls_json_u64(j, "count", run->peer_count);
		ls_summarize(t, t ? run->peer_count : 0, &s);
		ls_json_summary(j, "turnaround", &s);
		ls_json_obj_close(j);
	}
	free(v);
	free(t);
}

/* JSON output (kind "probe", schema LS_JSON_SCHEMA). */
static void print_json(const struct probe_cli *c, const struct ls_probe_result *r)
{
	const struct ls_probe_dev *d = &r->dev;
	struct ls_json j;

	ls_json_doc_open(&j, stdout, false, "probe");
	ls_json_str(&j, "role", r->is_prober ? "prober" : "responder");
	ls_json_str(&j, "verb", ls_probe_verb_name(r->verb));
	ls_json_str(&j, "mode", r->events ? "events" : "poll");
	/* samples_ns and summary are one-way (RTT / rtt_divisor) whatever --rtt says */
	ls_json_str(&j, "latency", r->verb == LS_VERB_READ ? "read" : "one_way");
	ls_json_u64(&j, "rtt_divisor", ls_probe_rtt_divisor(r->verb));
	ls_json_str(&j, "clock", r->clock);
	ls_json_str(&j, "hw_clock", hwclock_names[d->hwclock]);
	ls_json_bool(&j, "rdma_cm", r->rdma_cm);
	ls_json_str(&j, "peer", r->peer);
	ls_json_u64(&j, "mtu", r->mtu);
	if (r->cpu >= 0)
		ls_json_i64(&j, "cpu", r->cpu);
	else
		ls_json_null(&j, "cpu");
	ls_json_i64(&j, "ran_on_cpu", r->ran_on_cpu);
	ls_json_u64(&j, "qp_timeout", c->o.qp_timeout);
	if (c->o.iters)
		ls_json_u64(&j, "iters", c->o.iters);
	else
		ls_json_null(&j, "iters");
	ls_json_u64(&j, "duration_ns", c->o.duration_ns);
	ls_json_obj_open(&j, "device");
	ls_json_str(&j, "name", d->name);
	ls_json_u64(&j, "port", d->port);
	ls_json_i64(&j, "gid_index", d->gid_index);
	ls_json_str(&j, "gid", d->gid);
	ls_json_str(&j, "gid_type", d->gid_type);
	ls_json_str(&j, "netdev", d->netdev);
	ls_json_u64(&j, "active_mtu", d->active_mtu);
	ls_json_u64(&j, "max_mtu", d->max_mtu);
	ls_json_str(&j, "rate", d->rate);
	ls_json_dbl(&j, "link_gbps", d->link_gbps);
	ls_json_u64(&j, "max_msg_sz", d->max_msg_sz);
	ls_json_u64(&j, "hca_core_clock_khz", d->hca_core_clock_khz);
	ls_json_obj_close(&j);
	ls_json_u64(&j, "peer_active_mtu", r->peer_active_mtu);
	ls_json_bool(&j, "complete", !*r->fault);
	if (*r->fault)
		ls_json_str(&j, "fault", r->fault);
	else
		ls_json_null(&j, "fault");
	if (r->nruns == 1 && !c->sweep) {
		json_run(&j, c, r, &r->runs[0], false);
	} else {
		ls_json_arr_open(&j, "runs");
		for (unsigned int k = 0; k < r->nruns; k++) {
			ls_json_obj_open(&j, NULL);
			json_run(&j, c, r, &r->runs[k], true);
			ls_json_obj_close(&j);
		}
		ls_json_arr_close(&j);
	}
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* Write every sample to FILE atomically (CSV or NDJSON). */
static int write_samples(const struct probe_cli *c, const struct ls_probe_result *r,
			 struct ls_err *err)
{
	double div = (double)ls_probe_rtt_divisor(r->verb);	/* latency_ns is one-way */
	struct ls_afile af;
	uint64_t idx = 0;

	if (ls_afile_open(&af, c->samples, err))
		return -1;
	if (c->samples_fmt == FMT_CSV)
		fprintf(af.fp, "index,size,start_ns,end_ns,rtt_ns,latency_ns,hw_end_ns,"
			"peer_seen_ns,peer_answered_ns\n");
	for (unsigned int k = 0; k < r->nruns; k++) {
		const struct ls_probe_run *run = &r->runs[k];

		for (uint64_t i = 0; i < run->count; i++, idx++) {
			const struct ls_probe_sample *s = &run->samples[i];
			const struct ls_probe_sample *p = i < run->peer_count ? &run->peer[i] : NULL;
			uint64_t rtt = s->end_ns - s->start_ns;
			uint64_t hw = run->hw_end_ns ? run->hw_end_ns[i] : 0;

			if (c->samples_fmt == FMT_CSV) {
				fprintf(af.fp, "%llu,%u,%llu,%llu,%llu,%.1f,", (unsigned long long)idx,
					run->size, (unsigned long long)s->start_ns,
					(unsigned long long)s->end_ns, (unsigned long long)rtt,
					(double)rtt / div);
				if (hw)
					fprintf(af.fp, "%llu", (unsigned long long)hw);
				if (p)
					fprintf(af.fp, ",%llu,%llu\n", (unsigned long long)p->start_ns,
						(unsigned long long)p->end_ns);
				else
					fprintf(af.fp, ",,\n");
				continue;
			}
			fprintf(af.fp, "{\"index\":%llu,\"size\":%u,\"start_ns\":%llu,\"end_ns\":%llu,"
				"\"rtt_ns\":%llu,\"latency_ns\":%.1f", (unsigned long long)idx,
				run->size, (unsigned long long)s->start_ns,
				(unsigned long long)s->end_ns, (unsigned long long)rtt,
				(double)rtt / div);
			if (hw)
				fprintf(af.fp, ",\"hw_end_ns\":%llu", (unsigned long long)hw);
			if (p)
				fprintf(af.fp, ",\"peer_seen_ns\":%llu,\"peer_answered_ns\":%llu",
					(unsigned long long)p->start_ns,
					(unsigned long long)p->end_ns);
			fprintf(af.fp, "}\n");
		}
	}
	return ls_afile_commit(&af, err);
}

/* What --prom keeps of one pair: its one-way summary per size. */
struct probe_prom_run {
	uint32_t size;
	struct ls_summary s;
};

struct probe_prom_pair {
	struct ls_prom_pair head;	/* ok: every run complete */
	struct probe_prom_run *runs;
	size_t nruns;
};

/* Keep the one-way summaries of r's runs in pp. */
static int prom_keep(struct probe_prom_pair *pp, const struct ls_probe_result *r,
		     struct ls_err *err)
{
	pp->runs = calloc(r->nruns ? r->nruns : 1, sizeof(*pp->runs));
	if (!pp->runs)
		return ls_errnof(err, ENOMEM, "--prom: summaries of %s", pp->head.peer);
	for (unsigned int k = 0; k < r->nruns; k++) {
		double *v = latencies(false, r, &r->runs[k]);

		if (r->runs[k].count && !v)
			return ls_errnof(err, ENOMEM, "--prom: summaries of %s", pp->head.peer);
		pp->runs[k].size = r->runs[k].size;
		ls_summarize(v, v ? r->runs[k].count : 0, &pp->runs[k].s);
		free(v);
	}
	pp->nruns = r->nruns;
	return 0;
}

/* One sample per pair and size: the summary, or (!summary) the max in seconds. */
static int runs_samples(struct ls_prom *pf, const struct probe_prom_pair *pp, size_t n,
			bool summary, struct ls_err *err)
{
	struct ls_prom_label l[2];
	char size[16];

	for (size_t i = 0; i < n; i++) {
		l[0] = (struct ls_prom_label){ "peer", pp[i].head.peer };
		for (size_t k = 0; k < pp[i].nruns; k++) {
			const struct ls_summary *s = &pp[i].runs[k].s;
			int rc;

			if (!s->count)
				continue;
			snprintf(size, sizeof(size), "%u", pp[i].runs[k].size);
			l[1] = (struct ls_prom_label){ "size", size };
			rc = summary ? ls_prom_summary(pf, l, 2, s, err) :
				       ls_prom_sample(pf, NULL, l, 2, s->max * 1e-9, err);
			if (rc)
				return -1;
		}
	}
	return 0;
}

/* --prom: every pair's one-way latency per size, a peer label each. */
static int write_prom(struct ls_prom *pf, const struct probe_prom_pair *pp, size_t n,
		      struct ls_err *err)
{
	if (ls_prom_up(pf, "latsplit_probe_up",
		       "1 when the pair was measured to the end, 0 when its run failed.",
		       pp, n, sizeof(*pp), err))
		return -1;
	if (ls_prom_family(pf, "latsplit_probe_seconds", LS_PROM_SUMMARY,
			   "One-way RDMA latency by message size (RTT/2 for write and send, the whole operation for read).",
			   err) ||
	    runs_samples(pf, pp, n, true, err))
		return -1;
	if (ls_prom_family(pf, "latsplit_probe_max_seconds", LS_PROM_GAUGE,
			   "Largest one-way RDMA latency by message size.", err) ||
	    runs_samples(pf, pp, n, false, err))
		return -1;
	return 0;
}

/*
 * One session: a prober run against c->o.peer, or the responder; prints
 * the result and writes the samples file. pp (or NULL) keeps what --prom
 * writes. Returns an exit status.
 */
static int run_session(struct probe_cli *c, struct probe_prom_pair *pp)
{
	struct ls_probe_result *r;
	struct ls_err err = { 0 };
	bool started;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r) {
		ls_warn("probe: out of memory");
		return LS_EXIT_USAGE;
	}
	c->progress_shown = false;
	rc = c->o.peer ? ls_probe_run_client(&c->o, r, &err) : ls_probe_run_server(&c->o, r, &err);
	started = r->nruns > 0;
	if (rc) {
		end_progress(c, NULL);
		ls_warn("probe: %s", err.msg);
		if (!started) {
			ls_probe_result_free(r);
			free(r);
			return LS_EXIT_USAGE;
		}
		if (!*r->fault)
			snprintf(r->fault, sizeof(r->fault), "%s", err.msg);
	}
	if (c->json)
		print_json(c, r);
	else
		print_human(c, r);
	fflush(stdout);
	if (c->samples && started) {
		struct ls_err e2 = { 0 };

		if (write_samples(c, r, &e2)) {
			ls_warn("probe: samples: %s", e2.msg);
			rc = -1;
		}
	}
	if (pp) {
		pp->head.ok = !rc;
		if (prom_keep(pp, r, &err)) {
			ls_warn("probe: %s", err.msg);
			rc = -1;
		}
	}
	ls_probe_result_free(r);
	free(r);
	return rc ? LS_EXIT_FAIL : LS_EXIT_OK;
}

/* The fleet runner's call for one pair: its --prom label, then the session. */
static int fleet_pair(void *arg, const char *label, void *pair)
{
	struct probe_prom_pair *pp = pair;

	if (pp)
		snprintf(pp->head.peer, sizeof(pp->head.peer), "%s", label);
	return run_session(arg, pp);
}

/* The fleet runner's --prom writer over every pair's record. */
static int fleet_prom(struct ls_prom *pf, const void *pairs, size_t n, struct ls_err *err)
{
	return write_prom(pf, pairs, n, err);
}

/* Free what one pair's --prom record holds. */
static void prom_pair_free(void *pair)
{
	free(((struct probe_prom_pair *)pair)->runs);
}

/* `latsplit probe`: responder, one prober run, or one per --peers host. */
int cmd_probe(int argc, char **argv)
{
	struct probe_cli c = { .samples_fmt = FMT_AUTO };
	struct ls_fleet_cmd fc;
	struct ls_err err = { 0 };
	struct ls_prom pf;
	int rc;

	memset(&pf, 0, sizeof(pf));
	ls_probe_opts_init(&c.o);
	rc = parse(&c, argc, argv);
	if (rc)
		return rc == LS_OPTS_HELP ? LS_EXIT_OK : rc;
	c.tty = isatty(STDERR_FILENO);
	c.o.arg = &c;
	if (c.tty && c.o.peer) {
		c.o.progress = show_progress;
		c.o.run_end = end_progress;
	}
	/* Open before the runs so a bad path fails early; visible at commit. */
	if (c.prom && ls_prom_open(&pf, c.prom, false, &err)) {
		ls_warn("probe: --prom: %s", err.msg);
		rc = LS_EXIT_USAGE;
		goto out;
	}
	/*
	 * A run that started printed its own document, failed or not; one
	 * pair that never started writes no --prom file.
	 */
	fc = (struct ls_fleet_cmd){
		.kind = "probe", .run = fleet_pair, .arg = &c, .json = c.json,
		.peers = c.peers ? &c.plist : NULL, .peer = &c.o.peer, .port = c.o.port,
		.failed_run_reports = true, .prom = c.prom ? &pf : NULL,
		.pair_size = sizeof(struct probe_prom_pair), .write_prom = fleet_prom,
		.free_pair = prom_pair_free };
	rc = ls_fleet_run(&fc);
out:
	ls_peers_free(&c.plist);
	return rc;
}

/* The agent's probe of one peer (agent.h), in a child of the agent. */
int ls_probe_once(int argc, char **argv, struct ls_summary *s, struct ls_err *err)
{
	struct probe_cli c = { .samples_fmt = FMT_AUTO };
	struct ls_probe_result *r;
	double *v;
	int rc;

	memset(s, 0, sizeof(*s));
	ls_probe_opts_init(&c.o);
	rc = parse(&c, argc, argv);
	if (rc) {
		ls_errcf(err, LS_E_USAGE, "probe: bad options");
		return rc == LS_OPTS_HELP ? LS_EXIT_USAGE : rc;
	}
	if (!c.o.peer || c.peers) {
		ls_peers_free(&c.plist);
		ls_errcf(err, LS_E_USAGE, "probe: the agent's probe takes one PEER");
		return LS_EXIT_USAGE;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		ls_errnof(err, ENOMEM, "probe: result");
		return LS_EXIT_USAGE;
	}
	rc = ls_probe_run_client(&c.o, r, err);
	if (rc) {
		rc = ls_exit_status(err, r->nruns && r->runs[0].count);
		goto out;
	}
	v = r->nruns ? latencies(false, r, &r->runs[0]) : NULL;
	if (r->nruns && r->runs[0].count && !v) {
		ls_errnof(err, ENOMEM, "probe: %llu samples", (unsigned long long)r->runs[0].count);
		rc = LS_EXIT_FAIL;
		goto out;
	}
	ls_summarize(v, v ? r->runs[0].count : 0, s);
	free(v);
	rc = LS_EXIT_OK;
out:
	ls_probe_result_free(r);
	free(r);
	return rc;
}
