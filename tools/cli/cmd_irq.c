// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit irq: per-CPU view of one NIC's interrupt handling, refreshed every
 * interval: IRQ affinity and rate, hardirq latency, softirq wait/run per CPU
 * for the network vectors, time stolen from named CPUs, and the affinity
 * warnings the seed asks for.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "commands.h"
#include "io.h"
#include "json.h"
#include "nic.h"
#include "opts.h"
#include "util.h"

struct irq_opts {
	const char *ibdev;
	const char *ifname;
	const char *backend;		/* auto, kmod, ebpf, none */
	uint64_t cpus[LS_CPUMASK_WORDS];	/* application / probe CPUs */
	bool have_cpus;
	bool json;
	uint64_t interval_ns;
	uint64_t count;			/* 0 = until interrupted */
};

/* A warning: a stable code for scripts and a sentence for people. */
struct irq_warning {
	const char *code;
	char msg[256];
};

#define MAX_WARN	(LS_MAX_IRQS + 8)
/* Most values a histogram contributes to samples_ns in JSON. */
#define IRQ_JSON_SAMPLES	20000

struct irq_state {
	struct ls_nic nic;
	const struct ls_backend_ops *ops;
	struct ls_backend *be;
	char unmeasured[512];		/* why there is no kernel backend */
	struct ls_interrupts in0, in1;
	struct ls_snapshot s0, s1;
	struct irq_warning warn[MAX_WARN];
	unsigned int nr_warn;
	unsigned int nr_cpus;		/* columns of /proc/interrupts */
};

/* The softirq vectors a NIC's work runs in, in the order the reports list them. */
static const unsigned int net_vectors[] = {
	LS_SOFTIRQ_NET_RX, LS_SOFTIRQ_NET_TX, LS_SOFTIRQ_TASKLET, LS_SOFTIRQ_IRQ_POLL,
};

/* Print the usage of `latsplit irq`. */
static void irq_usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit irq (-i IF | -d DEV) [OPTIONS] [INTERVAL [COUNT]]\n"
		"\n"
		"Per-CPU NIC interrupt view: affinity, rate, hardirq latency, softirq\n"
		"wait/run per CPU, time stolen from named CPUs, affinity warnings.\n"
		"INTERVAL is in seconds (default 1), COUNT intervals (default 1; 0 = forever).\n"
		"\n"
		"options:\n"
		"  -i, --interface IF     the NIC's network interface\n"
		"  -d, --ib-dev DEV       the NIC's RDMA device (Soft-RoCE: its netdev's IRQs)\n"
		"  -c, --cpus LIST        application/probe CPUs (warn if NIC IRQs land there)\n"
		"  -b, --backend NAME     auto, kmod, ebpf or none (default auto)\n"
		"  -j, --json             one JSON document per interval (kind \"irq\")\n"
		"  -h, --help             this text\n"
		"\n"
		"exit status: 0 no warning, 1 a warning was raised, 2 could not run\n");
}

/* -c LIST: the application's CPUs. */
static int parse_cpus(void *opts, const char *arg, struct ls_err *err)
{
	struct irq_opts *o = opts;

	if (ls_parse_cpulist(arg, o->cpus, LS_MAX_CPUS, err))
		return -1;
	o->have_cpus = true;
	return 0;
}

#define IO struct irq_opts

static const struct ls_opt irq_options[] = {
	LS_OPT_STR("interface", 'i', IO, ifname),
	LS_OPT_STR("ib-dev", 'd', IO, ibdev),
	LS_OPT_CALL("cpus", 'c', parse_cpus),
	LS_OPT_STR("backend", 'b', IO, backend),
	LS_OPT_FLAG("json", 'j', IO, json),
	LS_OPT_HELPOPT,
};

/* Parse options into o: 0, LS_OPTS_HELP after the help, or LS_EXIT_USAGE after printing why. */
static int irq_parse(int argc, char **argv, struct irq_opts *o)
{
	static const struct ls_optcmd cmd = { .name = "irq", .mode = "", .usage = irq_usage };
	struct ls_err err = { 0 };
	double secs = 1;
	int rc;

	memset(o, 0, sizeof(*o));
	o->backend = "auto";
	o->count = 1;
	rc = LS_OPTS_PARSE(argc, argv, &cmd, irq_options, o, &err);
	if (rc)
		return rc;
	if (optind < argc &&
	    ls_parse_double(argv[optind++], 0.01, 86400, &secs, &err, "interval"))
		goto usage_err;
	if (optind < argc &&
	    ls_parse_u64(argv[optind++], 0, 1000000000, &o->count, &err, "count"))
		goto usage_err;
	if (optind < argc) {
		ls_errf(&err, "unexpected argument '%s'", argv[optind]);
		goto usage_err;
	}
	/* Validation after parsing. */
	if (!o->ifname && !o->ibdev) {
		ls_errf(&err, "give the NIC with -i IF or -d DEV");
		goto usage_err;
	}
	if (ls_opt_choice(ls_opt_backends, o->backend, "--backend", &err) < 0)
		goto usage_err;
	o->interval_ns = (uint64_t)(secs * 1e9);
	return 0;
usage_err:
	ls_warn("irq: %s", err.msg);
	return LS_EXIT_USAGE;
}

/* Add a warning. */
static void add_warn(struct irq_state *st, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_warn(struct irq_state *st, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (st->nr_warn >= MAX_WARN)
		return;
	st->warn[st->nr_warn].code = code;
	va_start(ap, fmt);
	vsnprintf(st->warn[st->nr_warn].msg, sizeof(st->warn[0].msg), fmt, ap);
	va_end(ap);
	st->nr_warn++;
}

/* True when a process named comm runs (scans /proc/PID/comm). */
static bool process_running(const char *comm)
{
	struct dirent *de;
	char path[300], buf[64];
	bool found = false;
	DIR *d = opendir("/proc");

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (!ls_read_text(path, buf, sizeof(buf), NULL) && !strcmp(buf, comm))
			found = true;
	}
	closedir(d);
	return found;
}

/* Number of CPUs in a mask. */
static unsigned int mask_weight(const uint64_t *m)
{
	unsigned int n = 0;

	for (int w = 0; w < LS_CPUMASK_WORDS; w++)
		n += (unsigned int)__builtin_popcountll(m[w]);
	return n;
}

/* h = a - b, bucket by bucket (max is a's: a window max is not derivable). */
static void hist_delta(struct ls_hist *h, const struct ls_hist *a, const struct ls_hist *b)
{
	h->count = a->count - b->count;
	h->sum_ns = a->sum_ns - b->sum_ns;
	h->max_ns = h->count ? a->max_ns : 0;
	for (unsigned int i = 0; i < LS_HIST_NR_BUCKETS; i++)
		h->buckets[i] = a->buckets[i] - b->buckets[i];
}

/* Sum over CPUs (all, or those in mask) of the delta of one slot. */
static void slot_delta(const struct irq_state *st, unsigned int slot,
		       int only_cpu, struct ls_hist *out)
{
	struct ls_hist *d = calloc(1, sizeof(*d));

	memset(out, 0, sizeof(*out));
	if (!d || !st->s1.hist || !st->s0.hist) {
		free(d);
		return;
	}
	for (unsigned int c = 0; c < st->s1.nr_cpus && c < st->s0.nr_cpus; c++) {
		if (only_cpu >= 0 && (unsigned int)only_cpu != c)
			continue;
		hist_delta(d, &st->s1.hist[c * LS_NR_SLOTS + slot],
			   &st->s0.hist[c * LS_NR_SLOTS + slot]);
		ls_hist_merge(out, d);
	}
	free(d);
}

/* Index of irq in the backend's watched list, -1 if absent. */
static int snap_irq_index(const struct ls_snapshot *s, uint32_t irq)
{
	for (unsigned int i = 0; i < s->nr_irqs; i++)
		if (s->irqs[i] == irq)
			return (int)i;
	return -1;
}

/* The seed's affinity warnings, from masks and this interval's counts. */
static void compute_warnings(struct irq_state *st, const struct irq_opts *o)
{
	uint64_t served[LS_CPUMASK_WORDS] = { 0 }, def[LS_CPUMASK_WORDS];
	char buf[256], list[512];
	bool by_hand = false;
	unsigned int online = st->nr_cpus, active = 0;

	st->nr_warn = 0;
	if (ls_read_text("/proc/irq/default_smp_affinity", buf, sizeof(buf), NULL))
		buf[0] = '\0';
	memset(def, 0xff, sizeof(def));
	for (unsigned int i = 0; i < st->nic.nr_irqs; i++) {
		uint32_t irq = st->nic.irqs[i];
		uint64_t mask[LS_CPUMASK_WORDS], eff[LS_CPUMASK_WORDS];
		const struct ls_irq_row *r0 = ls_interrupts_find(&st->in0, irq);
		const struct ls_irq_row *r1 = ls_interrupts_find(&st->in1, irq);
		uint64_t here[LS_CPUMASK_WORDS] = { 0 };
		struct ls_err err;

		if (r0 && r1)
			for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
				if (r1->per_cpu[c] > r0->per_cpu[c]) {
					unsigned int id = st->in1.cpu_ids[c];

					here[id / 64] |= 1ull << (id % 64);
					served[id / 64] |= 1ull << (id % 64);
				}
		if (mask_weight(here))
			active++;
		if (ls_irq_affinity(irq, mask, eff, &err))
			continue;
		if (mask_weight(mask) < online)
			by_hand = true;
		/*
		 * x86 moves an IRQ lazily, at its next interrupt: an effective
		 * affinity outside a freshly written mask is only a finding when
		 * interrupts kept landing outside the mask in this interval.
		 */
		for (int w = 0; w < LS_CPUMASK_WORDS; w++) {
			if (eff[w] & ~mask[w] & here[w]) {
				char m[128], e[128];

				ls_format_cpulist(mask, LS_MAX_CPUS, m, sizeof(m));
				ls_format_cpulist(eff, LS_MAX_CPUS, e, sizeof(e));
				add_warn(st, "effective-outside-mask",
					 "IRQ %u (%s): effective affinity %s lies outside its mask %s",
					 irq, st->nic.irq_names[i], e, m);
				break;
			}
		}
		if (o->have_cpus) {
			uint64_t hit[LS_CPUMASK_WORDS];
			bool any = false;

			for (int w = 0; w < LS_CPUMASK_WORDS; w++) {
				hit[w] = (eff[w] | here[w]) & o->cpus[w];
				any |= hit[w] != 0;
			}
			if (any) {
				ls_format_cpulist(hit, LS_MAX_CPUS, list, sizeof(list));
				add_warn(st, "irq-on-app-cpu",
					 "IRQ %u (%s) is served on application/probe CPU %s",
					 irq, st->nic.irq_names[i], list);
			}
		}
	}
	/*
	 * Only a NIC with several busy IRQs (queues) has anything to spread,
	 * and only when more than one CPU outside the named ones could take them.
	 */
	if (online - (o->have_cpus ? mask_weight(o->cpus) : 0) > 1 && active > 1 &&
	    mask_weight(served) == 1) {
		ls_format_cpulist(served, LS_MAX_CPUS, list, sizeof(list));
		add_warn(st, "all-irqs-one-cpu",
			 "all %u busy NIC IRQs were served by CPU %s of %u in this interval",
			 active, list, online);
	}
	if (by_hand && process_running("irqbalance"))
		add_warn(st, "irqbalance-running",
			 "irqbalance is running while NIC IRQ affinity was set by hand: it may move them back");
}

/* One watched IRQ in the interval: its lines of both reads, affinity, count. */
struct irq_line {
	uint32_t irq;
	const struct ls_irq_row *r0, *r1;	/* NULL when a read lacks it */
	bool affinity;				/* m and e were read ("?" if not) */
	char m[128], e[128];			/* smp_affinity and effective lists */
	uint64_t total;				/* its count over every CPU */
};

/* Count of l on CPU column c in the interval (0 when a read lacks the IRQ). */
static uint64_t irq_delta(const struct irq_line *l, unsigned int c)
{
	return l->r0 && l->r1 ? l->r1->per_cpu[c] - l->r0->per_cpu[c] : 0;
}

/* The interval of the i-th watched IRQ into l. */
static void irq_line(const struct irq_state *st, unsigned int i, struct irq_line *l)
{
	uint64_t mask[LS_CPUMASK_WORDS], eff[LS_CPUMASK_WORDS];
	struct ls_err err;

	l->irq = st->nic.irqs[i];
	l->r0 = ls_interrupts_find(&st->in0, l->irq);
	l->r1 = ls_interrupts_find(&st->in1, l->irq);
	l->affinity = !ls_irq_affinity(l->irq, mask, eff, &err);
	if (l->affinity) {
		ls_format_cpulist(mask, LS_MAX_CPUS, l->m, sizeof(l->m));
		ls_format_cpulist(eff, LS_MAX_CPUS, l->e, sizeof(l->e));
	} else {
		snprintf(l->m, sizeof(l->m), "?");
		snprintf(l->e, sizeof(l->e), "?");
	}
	l->total = 0;
	for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
		l->total += irq_delta(l, c);
}

/* Print one interval as a table. */
static void print_table(const struct irq_state *st, const struct irq_opts *o, double secs)
{
	struct ls_hist *h = calloc(1, sizeof(*h));
	bool have = st->be && h;

	printf("NIC %s%s%s, %u IRQs, interval %.2f s, backend %s\n",
	       st->nic.ibdev[0] ? st->nic.ibdev : "", st->nic.ibdev[0] && st->nic.netdev[0] ? "/" : "",
	       st->nic.netdev, st->nic.nr_irqs, secs, st->be ? st->ops->name : "none");
	if (!st->be)
		printf("kernel latency: unmeasured (%s)\n", st->unmeasured);
	printf("%5s %-22s %-9s %-9s %10s", "IRQ", "name", "affinity", "effective", "rate/s");
	for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
		printf(" %8s%u", "CPU", st->in1.cpu_ids[c]);
	if (have)
		printf(" | hardirq(us) %8s %8s %8s", "p50", "p99", "max");
	printf("\n");
	for (unsigned int i = 0; i < st->nic.nr_irqs; i++) {
		struct irq_line l;
		int idx;

		irq_line(st, i, &l);
		printf("%5u %-22.22s %-9s %-9s %10.1f", l.irq, st->nic.irq_names[i], l.m, l.e,
		       (double)l.total / secs);
		for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
			printf(" %11llu", (unsigned long long)irq_delta(&l, c));
		idx = have ? snap_irq_index(&st->s1, l.irq) : -1;
		if (idx >= 0) {
			slot_delta(st, LS_SLOT_HARDIRQ + idx, -1, h);
			if (h->count)
				printf(" | %11s %8.2f %8.2f %8.2f", "",
				       ls_hist_quantile(h, 0.5) / 1e3,
				       ls_hist_quantile(h, 0.99) / 1e3, h->max_ns / 1e3);
			else
				printf(" | %11s %8s %8s %8s", "", "-", "-", "-");
		}
		printf("\n");
	}
	if (have) {
		bool header = false;

		for (unsigned int c = 0; c < st->s1.nr_cpus; c++) {
			for (size_t v = 0; v < ARRAY_SIZE(net_vectors); v++) {
				struct ls_hist *w = h;
				double wp50, wp99;
				uint64_t wn;

				slot_delta(st, LS_SLOT_SOFTIRQ_WAIT + net_vectors[v], (int)c, w);
				if (!w->count)
					continue;
				wn = w->count;
				wp50 = ls_hist_quantile(w, 0.5) / 1e3;
				wp99 = ls_hist_quantile(w, 0.99) / 1e3;
				if (!header) {
					printf("\n%5s %-8s %10s %10s %10s %10s %10s  (us)\n", "CPU", "softirq",
					       "count", "wait p50", "wait p99", "run p50", "run p99");
					header = true;
				}
				slot_delta(st, LS_SLOT_SOFTIRQ_RUN + net_vectors[v], (int)c, w);
				printf("%5u %-8s %10llu %10.2f %10.2f %10.2f %10.2f\n", c,
				       ls_softirq_name(net_vectors[v]), (unsigned long long)wn, wp50, wp99,
				       w->count ? ls_hist_quantile(w, 0.5) / 1e3 : 0,
				       w->count ? ls_hist_quantile(w, 0.99) / 1e3 : 0);
			}
		}
		if (!header)
			printf("\nno network softirqs in this interval\n");
		for (unsigned int c = 0; o->have_cpus && c < st->s1.nr_cpus; c++) {
			if (!(o->cpus[c / 64] & (1ull << (c % 64))))
				continue;
			slot_delta(st, LS_SLOT_INTERFERENCE, (int)c, h);
			printf("CPU %u (named): %.3f%% of the interval stolen by hardirqs and softirqs (%llu events)\n",
			       c, 100.0 * (double)h->sum_ns / (secs * 1e9), (unsigned long long)h->count);
		}
	}
	for (unsigned int w = 0; w < st->nr_warn; w++)
		printf("WARNING [%s] %s\n", st->warn[w].code, st->warn[w].msg);
	if (!st->nr_warn)
		printf("no affinity warnings\n");
	fflush(stdout);
	free(h);
}

/* Write a histogram's summary and its non-empty buckets. */
static void json_hist(struct ls_json *j, const char *key, const struct ls_hist *h)
{
	ls_json_obj_open(j, key);
	ls_json_u64(j, "count", h->count);
	ls_json_u64(j, "sum_ns", h->sum_ns);
	if (h->count) {
		ls_json_dbl(j, "p50_ns", ls_hist_quantile(h, 0.5));
		ls_json_dbl(j, "p99_ns", ls_hist_quantile(h, 0.99));
	} else {
		ls_json_null(j, "p50_ns");
		ls_json_null(j, "p99_ns");
	}
	ls_json_u64(j, "max_ns", h->max_ns);
	/*
	 * samples_ns: the distribution rebuilt from the histogram at bucket
	 * midpoints (within 3.2 %), at most IRQ_JSON_SAMPLES values scaled
	 * proportionally, so `latsplit compare` can test it for significance.
	 */
	ls_json_arr_open(j, "samples_ns");
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS && h->count; b++) {
		double mid = ((double)ls_hist_bucket_lo(b) + (double)ls_hist_bucket_hi(b) - 1) / 2;
		uint64_t n = h->count <= IRQ_JSON_SAMPLES ? h->buckets[b] :
			     (uint64_t)llround((double)h->buckets[b] * IRQ_JSON_SAMPLES / (double)h->count);

		for (uint64_t k = 0; k < n; k++)
			ls_json_dbl(j, NULL, mid);
	}
	ls_json_arr_close(j);
	ls_json_arr_open(j, "buckets");	/* [lo_ns, hi_ns, count] */
	for (unsigned int b = 0; b < LS_HIST_NR_BUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		ls_json_arr_open(j, NULL);
		ls_json_u64(j, NULL, ls_hist_bucket_lo(b));
		ls_json_u64(j, NULL, ls_hist_bucket_hi(b));
		ls_json_u64(j, NULL, h->buckets[b]);
		ls_json_arr_close(j);
	}
	ls_json_arr_close(j);
	ls_json_obj_close(j);
}

/* Print one interval as a JSON document. */
static void print_json(const struct irq_state *st, const struct irq_opts *o, double secs)
{
	struct ls_hist *h = calloc(1, sizeof(*h));
	struct ls_json j;

	if (!h)
		return;
	ls_json_doc_open(&j, stdout, false, "irq");
	ls_json_str(&j, "ib_dev", st->nic.ibdev);
	ls_json_str(&j, "netdev", st->nic.netdev);
	ls_json_dbl(&j, "interval_s", secs);
	ls_json_str(&j, "backend", st->be ? st->ops->name : "none");
	if (!st->be)
		ls_json_str(&j, "unmeasured", st->unmeasured);
	ls_json_arr_open(&j, "cpu_ids");
	for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
		ls_json_u64(&j, NULL, st->in1.cpu_ids[c]);
	ls_json_arr_close(&j);
	ls_json_arr_open(&j, "irqs");
	for (unsigned int i = 0; i < st->nic.nr_irqs; i++) {
		struct irq_line l;
		int idx;

		irq_line(st, i, &l);
		ls_json_obj_open(&j, NULL);
		ls_json_u64(&j, "irq", l.irq);
		ls_json_str(&j, "name", st->nic.irq_names[i]);
		if (l.affinity) {
			ls_json_str(&j, "affinity", l.m);
			ls_json_str(&j, "effective_affinity", l.e);
		}
		ls_json_arr_open(&j, "count_per_cpu");
		for (unsigned int c = 0; c < st->in1.nr_cpus; c++)
			ls_json_u64(&j, NULL, irq_delta(&l, c));
		ls_json_arr_close(&j);
		ls_json_dbl(&j, "rate_per_s", (double)l.total / secs);
		idx = st->be ? snap_irq_index(&st->s1, l.irq) : -1;
		if (idx >= 0) {
			slot_delta(st, LS_SLOT_HARDIRQ + idx, -1, h);
			json_hist(&j, "hardirq", h);
		}
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	if (st->be) {
		ls_json_arr_open(&j, "cpus");
		for (unsigned int c = 0; c < st->s1.nr_cpus; c++) {
			ls_json_obj_open(&j, NULL);
			ls_json_u64(&j, "cpu", c);
			for (size_t v = 0; v < ARRAY_SIZE(net_vectors); v++) {
				char key[32];

				snprintf(key, sizeof(key), "%s_wait", ls_softirq_name(net_vectors[v]));
				slot_delta(st, LS_SLOT_SOFTIRQ_WAIT + net_vectors[v], (int)c, h);
				json_hist(&j, key, h);
				snprintf(key, sizeof(key), "%s_run", ls_softirq_name(net_vectors[v]));
				slot_delta(st, LS_SLOT_SOFTIRQ_RUN + net_vectors[v], (int)c, h);
				json_hist(&j, key, h);
			}
			if (o->have_cpus && (o->cpus[c / 64] & (1ull << (c % 64)))) {
				slot_delta(st, LS_SLOT_INTERFERENCE, (int)c, h);
				ls_json_u64(&j, "stolen_ns", h->sum_ns);
				ls_json_dbl(&j, "stolen_pct", 100.0 * (double)h->sum_ns / (secs * 1e9));
			}
			ls_json_obj_close(&j);
		}
		ls_json_arr_close(&j);
	}
	ls_json_arr_open(&j, "warnings");
	for (unsigned int w = 0; w < st->nr_warn; w++) {
		ls_json_obj_open(&j, NULL);
		ls_json_str(&j, "code", st->warn[w].code);
		ls_json_str(&j, "message", st->warn[w].msg);
		ls_json_obj_close(&j);
	}
	ls_json_arr_close(&j);
	ls_json_obj_close(&j);
	ls_json_end(&j);
	free(h);
}

/* Sleep ns nanoseconds (restarting after signals). */
static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts))
		;
}

/* `latsplit irq`: see irq_usage(). */
int cmd_irq(int argc, char **argv)
{
	struct irq_state *st = NULL;
	struct ls_err err = { 0 };
	struct irq_opts o;
	bool warned = false;
	int ret = LS_EXIT_USAGE, err2;

	err2 = irq_parse(argc, argv, &o);
	if (err2)
		return err2 == LS_OPTS_HELP ? LS_EXIT_OK : err2;
	st = calloc(1, sizeof(*st));
	if (!st) {
		ls_warn("irq: out of memory");
		return LS_EXIT_USAGE;
	}
	err2 = ls_nic_resolve(o.ibdev, o.ifname, &st->nic, &err);
	if (err2)
		goto cleanup;
	if (!st->nic.nr_irqs) {
		ls_errf(&err, "no IRQs found for %s%s (checked msi_irqs, the irq file and /proc/interrupts)",
			st->nic.ibdev[0] ? st->nic.ibdev : "", st->nic.netdev);
		goto cleanup;
	}
	if (st->nic.nr_unwatched)
		ls_warn("irq: %s has %u more IRQs than the %d shown and watched (the lowest-numbered)",
			st->nic.netdev[0] ? st->nic.netdev : st->nic.ibdev, st->nic.nr_unwatched,
			LS_MAX_IRQS);
	if (strcmp(o.backend, "none")) {
		struct ls_backend_cfg cfg = { 0 };
		struct ls_err berr = { 0 };

		memcpy(cfg.irqs, st->nic.irqs, st->nic.nr_irqs * sizeof(cfg.irqs[0]));
		cfg.nr_irqs = st->nic.nr_irqs;
		memcpy(cfg.cpumask, o.cpus, sizeof(cfg.cpumask));
		if (ls_backend_open_named(o.backend, &cfg, &st->ops, &st->be, &berr)) {
			if (strcmp(o.backend, "auto")) {
				ls_errf(&err, "%s", berr.msg);
				goto cleanup;
			}
			snprintf(st->unmeasured, sizeof(st->unmeasured), "%s", berr.msg);
		}
	} else {
		snprintf(st->unmeasured, sizeof(st->unmeasured), "--backend none");
	}
	if (ls_interrupts_read(NULL, &st->in0, &err))
		goto cleanup;
	if (st->be && st->ops->snapshot(st->be, &st->s0, &err))
		goto cleanup;
	for (uint64_t n = 0; o.count == 0 || n < o.count; n++) {
		uint64_t t0 = ls_now_ns();
		double secs;

		sleep_ns(o.interval_ns);
		if (ls_interrupts_read(NULL, &st->in1, &err))
			goto cleanup;
		if (st->be && st->ops->snapshot(st->be, &st->s1, &err))
			goto cleanup;
		secs = (double)(ls_now_ns() - t0) / 1e9;
		st->nr_cpus = st->in1.nr_cpus;
		compute_warnings(st, &o);
		warned |= st->nr_warn > 0;
		if (o.json)
			print_json(st, &o, secs);
		else
			print_table(st, &o, secs);
		ls_interrupts_free(&st->in0);
		st->in0 = st->in1;
		memset(&st->in1, 0, sizeof(st->in1));
		ls_snapshot_free(&st->s0);
		st->s0 = st->s1;
		memset(&st->s1, 0, sizeof(st->s1));
	}
	ret = warned ? LS_EXIT_FAIL : LS_EXIT_OK;
cleanup:
	if (ret == LS_EXIT_USAGE)
		ls_warn("irq: %s", err.msg);
	if (st) {
		if (st->be)
			st->ops->close(st->be);
		ls_interrupts_free(&st->in0);
		ls_interrupts_free(&st->in1);
		ls_snapshot_free(&st->s0);
		ls_snapshot_free(&st->s1);
		free(st);
	}
	return ret;
}
