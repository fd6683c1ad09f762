// SPDX-License-Identifier: GPL-2.0
/* `latsplit model`: what point-to-point latency costs a data-parallel training step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io.h"
#include "json.h"
#include "jseries.h"
#include "jsonr.h"
#include "model.h"
#include "opts.h"
#include "stats.h"
#include "util.h"

#define MAX_SWEEP	16

struct model_opts {
	struct ls_model_in in;
	bool all_algos;
	const char *from;
	const char *from_key;
	double lat_sweep[MAX_SWEEP];
	size_t nr_lat;
	double comp_sweep[MAX_SWEEP];
	size_t nr_comp;
	bool json;
};

/* One latency the report evaluates: given on the command line or measured. */
struct lat_case {
	const char *label;	/* "given", "p50", "p99" */
	double latency_s;
};

/* Print the usage; its option list is what Documentation/latsplit-model.rst documents. */
static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit model [OPTIONS]\n"
		"\n"
		"What point-to-point latency costs a synchronous data-parallel training step:\n"
		"T_sync of the gradient AllReduce, GPU utilization and throughput, and a\n"
		"sensitivity table over latency and compute time. Defaults are the seed's\n"
		"example (256 GPUs, 500 MB of gradients, 12.5 GB/s, 2 us, 0.8 s compute).\n"
		"\n"
		"options:\n"
		"  -n, --gpus N             ranks in the AllReduce (default 256)\n"
		"  -D, --grad-bytes SIZE    gradient bytes per step: 500MB, 1.5GiB (default 500MB)\n"
		"  -B, --bandwidth RATE     per-link bandwidth: 12.5GB/s, 100Gbit/s; bare = GB/s\n"
		"                           (default 12.5GB/s)\n"
		"  -l, --latency TIME       one-way point-to-point latency: 2us (default 2us)\n"
		"  -c, --compute TIME       compute time per step: 0.8s, 100ms (default 0.8s)\n"
		"  -b, --batch N            samples per GPU per step (default 1)\n"
		"  -a, --algo ALGO          ring (the seed's formula), ring-steps, tree\n"
		"                           (double binary tree) or all (default ring)\n"
		"  -f, --from FILE          take the latency from a probe or breakdown JSON:\n"
		"                           its p50 and its p99 are evaluated separately\n"
		"  -k, --from-key NAME      which distribution of FILE (default: total,\n"
		"                           one_way, latency, summary or the only one)\n"
		"      --latency-sweep LIST sensitivity rows (default 2us,5us,10us,20us,200us)\n"
		"      --compute-sweep LIST sensitivity columns (default 0.1s,0.2s,0.4s,0.8s)\n"
		"  -j, --json               JSON output (kind \"model\")\n"
		"  -h, --help               this help\n");
}

/* Parse a comma-separated list of durations into seconds. */
static int parse_sweep(const char *s, double *v, size_t *n, struct ls_err *err,
		       const char *what)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return ls_errf(err, "%s: out of memory", what);
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SWEEP) {
			ret = ls_errf(err, "%s: more than %d values", what, MAX_SWEEP);
			break;
		}
		ret = ls_parse_time_s(tok, &v[*n], err, what);
		if (ret)
			break;
		(*n)++;
	}
	if (!ret && !*n)
		ret = ls_errf(err, "%s: empty list", what);
	free(copy);
	return ret;
}

/* -a ALGO: one algorithm, or all of them. */
static int parse_algo(void *opts, const char *arg, struct ls_err *err)
{
	struct model_opts *o = opts;

	if (!strcmp(arg, "all")) {
		o->all_algos = true;
		return 0;
	}
	return ls_model_algo_parse(arg, &o->in.algo, err);
}

/* --latency-sweep LIST. */
static int parse_lat_sweep(void *opts, const char *arg, struct ls_err *err)
{
	struct model_opts *o = opts;

	return parse_sweep(arg, o->lat_sweep, &o->nr_lat, err, "--latency-sweep");
}

/* --compute-sweep LIST. */
static int parse_comp_sweep(void *opts, const char *arg, struct ls_err *err)
{
	struct model_opts *o = opts;

	return parse_sweep(arg, o->comp_sweep, &o->nr_comp, err, "--compute-sweep");
}

/* The options of model. */
enum { OPT_LAT_SWEEP = 256, OPT_COMP_SWEEP };

#define MO struct model_opts

static const struct ls_opt model_options[] = {
	LS_OPT_U64("gpus", 'n', MO, in.gpus, 1, 10000000),
	LS_OPT_FN("grad-bytes", 'D', MO, in.grad_bytes, ls_parse_bytes),
	LS_OPT_FN("bandwidth", 'B', MO, in.bw_bps, ls_parse_rate),
	LS_OPT_FN("latency", 'l', MO, in.latency_s, ls_parse_time_s),
	LS_OPT_FN("compute", 'c', MO, in.compute_s, ls_parse_time_s),
	LS_OPT_DBL("batch", 'b', MO, in.batch, 1e-9, 1e12),
	LS_OPT_CALL("algo", 'a', parse_algo),
	LS_OPT_STR("from", 'f', MO, from),
	LS_OPT_STR("from-key", 'k', MO, from_key),
	LS_OPT_CALL("latency-sweep", OPT_LAT_SWEEP, parse_lat_sweep),
	LS_OPT_CALL("compute-sweep", OPT_COMP_SWEEP, parse_comp_sweep),
	LS_OPT_FLAG("json", 'j', MO, json),
	LS_OPT_HELPOPT,
};

/* Parse argv into o; returns 0, or LS_EXIT_USAGE / -1 (help printed). */
static int parse_args(int argc, char **argv, struct model_opts *o, struct ls_err *err)
{
	static const struct ls_optcmd cmd = {
		.name = "model", .mode = ":", .usage = usage, .quiet = true,
	};
	struct ls_optgroup g[] = { LS_OPTGROUP(model_options, o) };
	bool latency_given;
	int rc;

	o->in = (struct ls_model_in){
		.gpus = 256, .grad_bytes = 500e6, .bw_bps = 12.5e9,
		.latency_s = 2e-6, .compute_s = 0.8, .batch = 1, .algo = LS_ALGO_RING,
	};
	parse_sweep("2us,5us,10us,20us,200us", o->lat_sweep, &o->nr_lat, err, "x");
	parse_sweep("0.1s,0.2s,0.4s,0.8s", o->comp_sweep, &o->nr_comp, err, "x");
	rc = ls_opts_parse(argc, argv, &cmd, g, ARRAY_SIZE(g), err);
	if (rc)
		return rc;
	latency_given = ls_opt_given(&g[0], 'l');
	if (optind < argc) {
		ls_errf(err, "unexpected argument '%s' (model takes options only)", argv[optind]);
		return LS_EXIT_USAGE;
	}
	if (o->from_key && !o->from) {
		ls_errf(err, "--from-key needs --from FILE");
		return LS_EXIT_USAGE;
	}
	if (o->from && latency_given) {
		ls_errf(err, "--latency and --from both set the latency: give one");
		return LS_EXIT_USAGE;
	}
	return 0;
}

/* Pick the measured distribution of a probe/breakdown document. */
static int latency_from(const struct model_opts *o, double *p50_s, double *p99_s,
			char *picked, size_t picked_len, struct ls_err *err)
{
	static const char *const prefer[] = { "total", "one_way", "latency", "summary" };
	const struct ls_series *s = NULL;
	struct ls_series_set set;
	struct ls_jdoc doc;
	int ret = -1;

	if (ls_jr_parse_file(&doc, o->from, NULL, err))
		return -1;
	if (ls_series_collect(&doc, &set, err))
		goto out_doc;
	if (o->from_key) {
		s = ls_series_find(&set, o->from_key);
	} else if (set.n == 1) {
		s = &set.v[0];
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(prefer) && !s; i++)
			s = ls_series_find(&set, prefer[i]);
	}
	if (!s) {
		char names[320] = "";
		size_t n = 0;

		for (size_t i = 0; i < set.n && n < sizeof(names) - 1; i++)
			n += snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
				      set.v[i].name);
		if (!set.n)
			ls_errf(err, "%s: no latency distribution (p50_ns/p99_ns or samples_ns) in this %s document",
				o->from, set.kind);
		else if (o->from_key)
			ls_errf(err, "%s: no distribution '%s'; it has: %s", o->from,
				o->from_key, names);
		else
			ls_errf(err, "%s: several distributions, choose one with --from-key: %s",
				o->from, names);
		goto out_set;
	}
	if (s->has_summary && !isnan(s->p50_ns) && !isnan(s->p99_ns)) {
		*p50_s = s->p50_ns * 1e-9;
		*p99_s = s->p99_ns * 1e-9;
	} else {
		struct ls_summary sum;
		double *v;
		size_t n;

		if (ls_series_samples(s, &v, &n, err))
			goto out_set;
		if (!n) {
			ls_errf(err, "%s: distribution '%s' has no samples", o->from, s->name);
			goto out_set;
		}
		ls_summarize(v, n, &sum);
		free(v);
		*p50_s = sum.p50 * 1e-9;
		*p99_s = sum.p99 * 1e-9;
	}
	if (!(*p50_s >= 0) || !(*p99_s >= 0)) {
		ls_errf(err, "%s: distribution '%s' has no usable p50/p99", o->from, s->name);
		goto out_set;
	}
	snprintf(picked, picked_len, "%s", s->name);
	ret = 0;
out_set:
	ls_series_free(&set);
out_doc:
	ls_jr_free(&doc);
	return ret;
}

/* Format seconds with a readable unit. */
static const char *fmt_time(double s, char *buf, size_t len)
{
	if (s >= 1)
		snprintf(buf, len, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else if (s >= 1e-6)
		snprintf(buf, len, "%.3f us", s * 1e6);
	else
		snprintf(buf, len, "%.1f ns", s * 1e9);
	return buf;
}

/* Evaluate in with another latency and compute time. */
static int eval_at(const struct ls_model_in *base, enum ls_model_algo a, double lat,
		   double comp, struct ls_model_out *out, struct ls_err *err)
{
	struct ls_model_in in = *base;

	in.algo = a;
	in.latency_s = lat;
	in.compute_s = comp;
	return ls_model_eval(&in, out, err);
}

/* Human-readable report for one algorithm. */
static int print_algo(const struct model_opts *o, enum ls_model_algo a,
		      const struct lat_case *cases, size_t nr_cases, struct ls_err *err)
{
	struct ls_model_out r;
	char b1[32], b2[32], b3[32], b4[32];

	printf("\n%s\n", ls_model_formula(a));
	printf("  %-22s %12s %12s %12s %12s %16s\n", "latency", "T_bw", "T_lat", "T_sync",
	       "utilization", "throughput/s");
	for (size_t i = 0; i < nr_cases; i++) {
		char label[64];

		if (eval_at(&o->in, a, cases[i].latency_s, o->in.compute_s, &r, err))
			return -1;
		snprintf(label, sizeof(label), "%s (%s)",
			 fmt_time(cases[i].latency_s, b4, sizeof(b4)), cases[i].label);
		printf("  %-22s %12s %12s %12s %11.2f%% %16.2f\n", label,
		       fmt_time(r.t_bw_s, b1, sizeof(b1)), fmt_time(r.t_lat_s, b2, sizeof(b2)),
		       fmt_time(r.t_sync_s, b3, sizeof(b3)), 100 * r.utilization, r.throughput);
	}
	printf("\n  sensitivity: utilization by latency (rows) and T_compute (columns)\n");
	printf("  %-10s %12s", "latency", "T_sync");
	for (size_t c = 0; c < o->nr_comp; c++)
		printf(" %10s", fmt_time(o->comp_sweep[c], b1, sizeof(b1)));
	printf("\n");
	for (size_t l = 0; l < o->nr_lat; l++) {
		if (eval_at(&o->in, a, o->lat_sweep[l], o->in.compute_s, &r, err))
			return -1;
		printf("  %-10s %12s", fmt_time(o->lat_sweep[l], b1, sizeof(b1)),
		       fmt_time(r.t_sync_s, b2, sizeof(b2)));
		for (size_t c = 0; c < o->nr_comp; c++) {
			if (eval_at(&o->in, a, o->lat_sweep[l], o->comp_sweep[c], &r, err))
				return -1;
			printf(" %9.2f%%", 100 * r.utilization);
		}
		printf("\n");
	}
	return 0;
}

/* Seconds to ns for output, rounded to 1e-3 ns so unit conversions leave no noise. */
static double out_ns(double s)
{
	return round(s * 1e12) / 1e3;
}

/* Write one evaluation as JSON members. */
static void json_result(struct ls_json *j, const struct ls_model_out *r)
{
	ls_json_dbl(j, "t_bw_ns", out_ns(r->t_bw_s));
	ls_json_dbl(j, "t_lat_ns", out_ns(r->t_lat_s));
	ls_json_dbl(j, "t_sync_ns", out_ns(r->t_sync_s));
	ls_json_dbl(j, "step_ns", out_ns(r->step_s));
	ls_json_dbl(j, "utilization", r->utilization);
	ls_json_dbl(j, "throughput_per_s", r->throughput);
}

/* JSON report for one algorithm (an element of "algorithms"). */
static int json_algo(struct ls_json *j, const struct model_opts *o, enum ls_model_algo a,
		     const struct lat_case *cases, size_t nr_cases, struct ls_err *err)
{
	struct ls_model_out r;

	ls_json_obj_open(j, NULL);
	ls_json_str(j, "name", ls_model_algo_name(a));
	ls_json_str(j, "formula", ls_model_formula(a));
	ls_json_arr_open(j, "results");
	for (size_t i = 0; i < nr_cases; i++) {
		if (eval_at(&o->in, a, cases[i].latency_s, o->in.compute_s, &r, err))
			return -1;
		ls_json_obj_open(j, NULL);
		ls_json_str(j, "latency_source", cases[i].label);
		ls_json_dbl(j, "latency_ns", out_ns(cases[i].latency_s));
		json_result(j, &r);
		ls_json_obj_close(j);
	}
	ls_json_arr_close(j);
	ls_json_arr_open(j, "sensitivity");
	for (size_t l = 0; l < o->nr_lat; l++) {
		for (size_t c = 0; c < o->nr_comp; c++) {
			if (eval_at(&o->in, a, o->lat_sweep[l], o->comp_sweep[c], &r, err))
				return -1;
			ls_json_obj_open(j, NULL);
			ls_json_dbl(j, "latency_ns", out_ns(o->lat_sweep[l]));
			ls_json_dbl(j, "compute_ns", out_ns(o->comp_sweep[c]));
			json_result(j, &r);
			ls_json_obj_close(j);
		}
	}
	ls_json_arr_close(j);
	ls_json_obj_close(j);
	return 0;
}

/* `latsplit model`. */
int cmd_model(int argc, char **argv)
{
	struct model_opts o = { 0 };
	struct lat_case cases[2];
	struct ls_err err = { 0 };
	char picked[256] = "", b1[32], b2[32];
	size_t nr_cases = 0;
	int first, last, ret;

	ret = parse_args(argc, argv, &o, &err);
	if (ret)
		return ls_opts_exit(ret, "model", &err);
	if (o.from) {
		double p50, p99;

		if (latency_from(&o, &p50, &p99, picked, sizeof(picked), &err)) {
			ls_warn("model: %s", err.msg);
			return LS_EXIT_USAGE;
		}
		cases[nr_cases++] = (struct lat_case){ "measured p50", p50 };
		cases[nr_cases++] = (struct lat_case){ "measured p99", p99 };
		o.in.latency_s = p50;
	} else {
		cases[nr_cases++] = (struct lat_case){ "given", o.in.latency_s };
	}
	first = o.all_algos ? 0 : (int)o.in.algo;
	last = o.all_algos ? LS_NR_ALGOS - 1 : (int)o.in.algo;
	/* Validate every input once before printing anything. */
	for (int a = first; a <= last; a++) {
		struct ls_model_out r;

		for (size_t i = 0; i < nr_cases; i++) {
			if (eval_at(&o.in, a, cases[i].latency_s, o.in.compute_s, &r, &err)) {
				ls_warn("%s", err.msg);
				return LS_EXIT_USAGE;
			}
		}
	}
	if (o.json) {
		struct ls_json j;

		ls_json_doc_open(&j, stdout, true, "model");
		ls_json_obj_open(&j, "inputs");
		ls_json_u64(&j, "gpus", o.in.gpus);
		ls_json_dbl(&j, "grad_bytes", o.in.grad_bytes);
		ls_json_dbl(&j, "bandwidth_bytes_per_s", o.in.bw_bps);
		ls_json_dbl(&j, "compute_ns", out_ns(o.in.compute_s));
		ls_json_dbl(&j, "batch_per_gpu", o.in.batch);
		if (o.from) {
			ls_json_str(&j, "from", o.from);
			ls_json_str(&j, "from_key", picked);
		}
		ls_json_obj_close(&j);
		ls_json_arr_open(&j, "algorithms");
		for (int a = first; a <= last; a++) {
			if (json_algo(&j, &o, a, cases, nr_cases, &err)) {
				ls_warn("model: %s", err.msg);
				return LS_EXIT_USAGE;
			}
		}
		ls_json_arr_close(&j);
		ls_json_obj_close(&j);
		ls_json_end(&j);
		return LS_EXIT_OK;
	}
	printf("latsplit model: synchronous data-parallel step = T_compute + T_sync\n"
	       "  utilization = T_compute / step, throughput = batch x N / step\n"
	       "  inputs: N %u, D %.6g MB, B %.6g GB/s, T_compute %s, batch %.6g per GPU\n",
	       o.in.gpus, o.in.grad_bytes / 1e6, o.in.bw_bps / 1e9,
	       fmt_time(o.in.compute_s, b1, sizeof(b1)), o.in.batch);
	if (o.from)
		printf("  latency: '%s' of %s (p50 and p99; the tail sets the pace of a "
		       "synchronous step)\n", picked, o.from);
	else
		printf("  latency: %s\n", fmt_time(o.in.latency_s, b2, sizeof(b2)));
	for (int a = first; a <= last; a++) {
		if (print_algo(&o, a, cases, nr_cases, &err)) {
			ls_warn("model: %s", err.msg);
			return LS_EXIT_USAGE;
		}
	}
	return LS_EXIT_OK;
}
