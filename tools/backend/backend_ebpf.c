// SPDX-License-Identifier: GPL-2.0
/*
 * The eBPF backend: loads ebpf/latsplit.bpf.c through its libbpf skeleton.
 * tp_btf/ programs first, the raw_tp/ copies when those cannot load (or
 * when LS_EBPF_ATTACH=raw_tp asks for them). Knobs go to .rodata before
 * load; histograms are read back from a PERCPU array and expanded to the
 * ABI slot layout. Documentation/ebpf.rst describes the stages' hooks.
 */
#include "backend.h"

#include <errno.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ebpf/latsplit_bpf.h"
#include "io.h"
#include "latsplit.skel.h"

#define LS_EBPF_BTF	"/sys/kernel/btf/vmlinux"
#define LS_EBPF_MAX_RING_KIB	(1024u * 1024u)	/* 1 GiB */
#define LS_EBPF_LOG_SIZE	(16u << 20)	/* verifier log buffer with -v */

struct ls_backend {
	struct latsplit_bpf *skel;
	struct ring_buffer *rb;
	unsigned int nr_irqs;
	uint32_t irqs[LS_MAX_IRQS];
	unsigned int nr_hist;
	int nr_cpus;
	bool raw_tp;
	/* drain() state handed to the ring buffer callback */
	ls_record_cb cb;
	void *cb_ctx;
	long delivered;
	bool stopped;
	/*
	 * The kernel's run-time statistics of BPF programs
	 * (BPF_ENABLE_STATS): on while this fd is open and recording is not
	 * paused; -1 when off, stats_err the errno when enabling failed.
	 */
	int stats_fd;
	int stats_err;
	/* the programs' statistics at the last reset (they only grow) */
	struct ls_obs_cell obs_base[LS_NR_HANDLERS];
	uint64_t missed_base[LS_NR_HANDLERS];	/* recursion_misses at open/reset */
};

/* libbpf's messages: printed with -v, else kept for the error message. */
static bool ebpf_verbose;
static char ebpf_last_warn[400];
static char ebpf_failed_prog[64];
/* With -v: the verifier log of the failing program, printed by us whole. */
static char *ebpf_log_buf;

/* libbpf print callback: keep the last warning, print all when verbose. */
static int ebpf_print(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char line[1024];
	const char *p;
	va_list ap2;
	size_t n;


	if (level == LIBBPF_DEBUG && !ebpf_verbose)
		return 0;
	/* Verifier logs come as one message: print it whole. */
	va_copy(ap2, ap);
	if (ebpf_verbose)
		vfprintf(stderr, fmt, ap2);
	va_end(ap2);
	vsnprintf(line, sizeof(line), fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	/* "libbpf: prog 'NAME': BPF program load failed: ..." */
	p = strstr(line, "prog '");
	if (p && strstr(line, "load failed")) {
		p += 6;
		n = strcspn(p, "'");
		if (n >= sizeof(ebpf_failed_prog))
			n = sizeof(ebpf_failed_prog) - 1;
		memcpy(ebpf_failed_prog, p, n);
		ebpf_failed_prog[n] = '\0';
	}
	if (!strstr(line, "-- BEGIN") && !strstr(line, "-- END") &&
	    line[0] != '\0' && strncmp(line, "libbpf: prog", 12) != 0) {
		n = strcspn(line, "\n");
		if (n >= sizeof(ebpf_last_warn))
			n = sizeof(ebpf_last_warn) - 1;
		memcpy(ebpf_last_warn, line, n);
		ebpf_last_warn[n] = '\0';
	}
	return 0;
}

/* True when the kernel exposes BTF (CO-RE needs it). */
static bool ebpf_available(void)
{
	return access(LS_EBPF_BTF, R_OK) == 0;
}

/* Check that every tracepoint the programs use exists in the kernel's BTF. */
static int check_tracepoints(bool need_sched, struct ls_err *err)
{
	static const char *const tps[] = {
		"irq_handler_entry", "irq_handler_exit", "softirq_raise",
		"softirq_entry", "softirq_exit", "napi_poll",
		"sched_switch", "sched_wakeup", "sched_waking",
		"netif_receive_skb", "net_dev_start_xmit",
	};
	char name[128];
	struct btf *btf;
	int ret = 0;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return ls_errnof(err, errno, "ebpf: cannot read kernel BTF %s",
				 LS_EBPF_BTF);
	for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
		if (!need_sched && !strncmp(tps[i], "sched_", 6))
			continue;
		snprintf(name, sizeof(name), "btf_trace_%s", tps[i]);
		if (btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) < 0) {
			ret = ls_errf(err, "ebpf: tracepoint '%s' missing from this kernel (no %s in its BTF)",
				      tps[i], name);
			break;
		}
	}
	btf__free(btf);
	return ret;
}

/* True when kernel symbol sym is in /proc/kallsyms (module loaded). */
static bool have_ksym(const char *sym)
{
	char line[512], name[256];
	bool found = false;
	FILE *fp;

	fp = fopen("/proc/kallsyms", "r");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%*s %*s %255s", name) == 1 && !strcmp(name, sym)) {
			found = true;
			break;
		}
	}
	fclose(fp);
	return found;
}

/* True when some watched IRQ is served by a thread (irq/N-...) or the kernel is RT. */
static bool irqs_threaded(const struct ls_backend_cfg *cfg)
{
	char path[64], comm[64], want[32];
	bool found = false;
	struct dirent *de;
	DIR *d;

	if (cfg->nr_irqs == 0)
		return false;
	if (access("/sys/kernel/realtime", F_OK) == 0)
		return true;
	d = opendir("/proc");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		FILE *fp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
		fp = fopen(path, "r");
		if (!fp)
			continue;
		if (fgets(comm, sizeof(comm), fp)) {
			for (unsigned int i = 0; i < cfg->nr_irqs; i++) {
				snprintf(want, sizeof(want), "irq/%u-", cfg->irqs[i]);
				if (!strncmp(comm, want, strlen(want)))
					found = true;
			}
		}
		fclose(fp);
	}
	closedir(d);
	return found;
}

/* Ring size in bytes for ring_kib: a power of two, at least one page. */
static uint32_t ring_bytes(unsigned int ring_kib)
{
	uint64_t want = (uint64_t)ring_kib * 1024, sz = 4096;

	while (sz < want)
		sz <<= 1;
	return (uint32_t)sz;
}

/* Turn the tp_btf or the raw_tp set of programs off, and unneeded ones. */
static void choose_programs(struct latsplit_bpf *s, bool raw_tp, bool sched,
			    bool tasks, bool kprobe, bool records)
{
#define BTF_PROG(tp, name, call, args...)	s->progs.btf_##name,
#define RAW_PROG(tp, name, call, args...)	s->progs.raw_##name,
	struct bpf_program *btf[] = { LS_EBPF_TRACEPOINTS(BTF_PROG) };
	struct bpf_program *raw[] = { LS_EBPF_TRACEPOINTS(RAW_PROG) };
#undef BTF_PROG
#undef RAW_PROG

	for (size_t i = 0; i < ARRAY_SIZE(btf); i++) {
		/*
		 * 6: sched_switch (tasks, IRQ threads); 7, 8: tasks only;
		 * 9, 10: netif_receive_skb, net_dev_start_xmit: RX_PKT and
		 * TX_PKT records only
		 */
		bool on = i < 6 || (i == 6 && sched) || (i == 7 && tasks) ||
			  (i == 8 && tasks) || (i >= 9 && records);

		bpf_program__set_autoload(btf[i], on && !raw_tp);
		bpf_program__set_autoload(raw[i], on && raw_tp);
	}
	bpf_program__set_autoload(s->progs.kp_comp_handler, kprobe);
	bpf_program__set_autoload(s->progs.kr_comp_handler, kprobe);
}

/* Open the skeleton and write the knobs; ready for load. */
static int skel_prepare(struct ls_backend *b, const struct ls_backend_cfg *cfg,
			bool raw_tp, bool sched, bool threaded, bool kprobe,
			struct ls_err *err)
{
	struct latsplit_bpf *s;
	int ret;

	const char *lvl = getenv("LS_EBPF_LOG_LEVEL");
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		    .kernel_log_buf = ebpf_log_buf,
		    .kernel_log_size = ebpf_log_buf ? LS_EBPF_LOG_SIZE : 0,
		    /* developers: LS_EBPF_LOG_LEVEL=2 logs every program's verification */
		    .kernel_log_level = ebpf_log_buf && lvl ? (__u32)atoi(lvl) : 0);

	if (ebpf_log_buf)
		ebpf_log_buf[0] = '\0';
	s = latsplit_bpf__open_opts(&opts);
	if (!s)
		return ls_errnof(err, errno, "ebpf: opening the BPF object failed");
	b->skel = s;
	for (unsigned int i = 0; i < cfg->nr_irqs; i++)
		s->rodata->watched_irqs[i] = cfg->irqs[i];
	s->rodata->nr_irqs = cfg->nr_irqs;
	for (unsigned int w = 0; w < LS_CPUMASK_WORDS; w++)
		s->rodata->cpumask[w] = cfg->cpumask[w];
	for (unsigned int i = 0; i < cfg->nr_pids; i++)
		s->rodata->pids[i] = cfg->pids[i];
	s->rodata->nr_pids = cfg->nr_pids;
	s->rodata->records_on = cfg->ring_kib > 0;
	s->rodata->hist_on = !(cfg->no_hist && cfg->ring_kib > 0);
	s->rodata->wake_bytes = ring_bytes(cfg->ring_kib) / LS_RING_WAKE_DIV;
	s->rodata->threaded_irqs = threaded;
	s->rodata->is_rt = access("/sys/kernel/realtime", F_OK) == 0;
	ret = bpf_map__set_max_entries(s->maps.hists, b->nr_hist);
	if (!ret)
		ret = bpf_map__set_max_entries(s->maps.records,
					       ring_bytes(cfg->ring_kib));
	if (ret)
		return ls_errnof(err, -ret, "ebpf: sizing the maps failed");
	choose_programs(s, raw_tp, sched, cfg->nr_pids > 0, kprobe,
			cfg->ring_kib > 0);
	return 0;
}

/* Explain a failed load: permissions, memlock, verifier. */
static int load_error(int ret, struct ls_err *err)
{
	struct rlimit rl;

	if (ret == -EPERM && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (64u << 20))
		return ls_errf(err, "ebpf: loading the BPF object failed: %s; RLIMIT_MEMLOCK is %llu KiB and could not be raised (run as root or raise 'ulimit -l')",
			       strerror(-ret), (unsigned long long)rl.rlim_cur / 1024);
	if (ebpf_failed_prog[0])
		return ls_errf(err, "ebpf: the kernel's verifier rejected program '%s' (%s)%s",
			       ebpf_failed_prog, strerror(-ret),
			       ebpf_verbose ? "; its log is above" :
			       "; run with -v to print libbpf's verifier log");
	return ls_errf(err, "ebpf: loading the BPF object failed: %s%s%s",
		       strerror(-ret), ebpf_last_warn[0] ? ": " : "",
		       ebpf_last_warn);
}

static int ring_sample(void *ctx, void *data, size_t size);
static void stats_on(struct ls_backend *b);
static void stats_off(struct ls_backend *b);
static int obs_read(struct ls_backend *b, struct ls_obs_cell *cell, uint64_t *missed,
		    struct ls_err *err);

/* Check the configuration and the system before anything is loaded. */
static int open_checks(const struct ls_backend_cfg *cfg, const char *mode,
		       struct ls_err *err)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (cfg->nr_irqs > LS_MAX_IRQS || cfg->nr_pids > LS_MAX_TASKS)
		return ls_errf(err, "ebpf: at most %d IRQs and %d tasks", LS_MAX_IRQS,
			       LS_MAX_TASKS);
	if (cfg->ring_kib > LS_EBPF_MAX_RING_KIB)
		return ls_errf(err, "ebpf: record ring of %u KiB is too large (max %u)",
			       cfg->ring_kib, LS_EBPF_MAX_RING_KIB);
	if (mode && strcmp(mode, "raw_tp") && strcmp(mode, "tp_btf") &&
	    strcmp(mode, "auto"))
		return ls_errf(err, "ebpf: LS_EBPF_ATTACH='%s': want tp_btf, raw_tp or auto",
			       mode);
	if (geteuid() != 0)
		return ls_errf(err, "ebpf: needs root (CAP_BPF and CAP_PERFMON) to load BPF programs; running as uid %u",
			       (unsigned int)geteuid());
	if (!ebpf_available())
		return ls_errf(err, "ebpf: this kernel has no BTF (%s missing, CONFIG_DEBUG_INFO_BTF off): "
			       "the CO-RE programs cannot be relocated; use --backend kmod",
			       LS_EBPF_BTF);
	/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) && cfg->verbose)
		ls_warn("ebpf: cannot raise RLIMIT_MEMLOCK: %s", strerror(errno));
	return 0;
}

/* Allocate the backend and fill in what the configuration gives. */
static int backend_new(struct ls_backend **out,
		       const struct ls_backend_cfg *cfg, struct ls_err *err)
{
	struct ls_backend *b;
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return ls_errnof(err, errno, "ebpf: out of memory");
	b->stats_fd = -1;
	b->nr_irqs = cfg->nr_irqs;
	memcpy(b->irqs, cfg->irqs, sizeof(b->irqs));
	b->nr_hist = LS_EBPF_NR_HIST(cfg->nr_irqs);
	b->nr_cpus = libbpf_num_possible_cpus();
	if (b->nr_cpus <= 0) {
		ret = ls_errnof(err, -b->nr_cpus, "ebpf: cannot count possible CPUs");
		free(b);
		return ret;
	}
	*out = b;
	return 0;
}

/* Load the prepared skeleton; print the verifier log if one was kept. */
static int skel_load(struct ls_backend *b)
{
	int ret;

	ret = latsplit_bpf__load(b->skel);
	if (ret && ebpf_log_buf && ebpf_log_buf[0])
		fprintf(stderr, "-- verifier log --\n%s-- end of verifier log --\n",
			ebpf_log_buf);
	return ret;
}

/* Load tp_btf programs (raw_tp if asked for), falling back to raw_tp. */
static int load_programs(struct ls_backend *b, const struct ls_backend_cfg *cfg,
			 const char *mode, bool sched, bool threaded,
			 bool kprobe, struct ls_err *err)
{
	bool raw_tp = mode && !strcmp(mode, "raw_tp");
	int ret;

	ret = skel_prepare(b, cfg, raw_tp, sched, threaded, kprobe, err);
	if (ret)
		return ret;
	ret = skel_load(b);
	if (ret && !raw_tp && !(mode && !strcmp(mode, "tp_btf"))) {
		if (cfg->verbose)
			ls_warn("ebpf: tp_btf programs did not load (%s); trying raw_tp",
				strerror(-ret));
		latsplit_bpf__destroy(b->skel);
		b->skel = NULL;
		ebpf_last_warn[0] = ebpf_failed_prog[0] = '\0';
		raw_tp = true;
		ret = skel_prepare(b, cfg, raw_tp, sched, threaded, kprobe, err);
		if (ret)
			return ret;
		ret = skel_load(b);
	}
	if (ret)
		return load_error(ret, err);
	b->raw_tp = raw_tp;
	if (cfg->verbose)
		ls_warn("ebpf: loaded %s programs (%u histograms x %d CPUs%s%s)",
			raw_tp ? "raw_tp" : "tp_btf", b->nr_hist, b->nr_cpus,
			sched ? ", sched" : "", threaded ? ", irq threads" : "");
	return 0;
}

/* Attach the loaded programs and open the record ring if one is wanted. */
static int attach_programs(struct ls_backend *b,
			   const struct ls_backend_cfg *cfg, struct ls_err *err)
{
	int ret;

	ret = latsplit_bpf__attach(b->skel);
	if (ret)
		return ls_errnof(err, -ret, "ebpf: attaching the programs failed%s%s",
				 ebpf_last_warn[0] ? ": " : "", ebpf_last_warn);
	if (cfg->ring_kib) {
		b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.records),
					 ring_sample, b, NULL);
		if (!b->rb)
			return ls_errnof(err, errno, "ebpf: opening the record ring failed");
	}
	return 0;
}

/* Load tp_btf programs, falling back to raw_tp; attach; open the ring. */
static int ebpf_open(struct ls_backend **out, const struct ls_backend_cfg *cfg,
		     struct ls_err *err)
{
	const char *mode = getenv("LS_EBPF_ATTACH");
	bool sched, threaded, kprobe;
	struct ls_backend *b = NULL;
	int ret;

	*out = NULL;
	ret = open_checks(cfg, mode, err);
	if (ret)
		return ret;
	sched = cfg->nr_pids > 0;
	threaded = irqs_threaded(cfg);
	sched = sched || threaded;
	ret = check_tracepoints(sched, err);
	if (ret)
		return ret;
	kprobe = false;
	if (cfg->nr_pids) {
		kprobe = have_ksym("ib_uverbs_comp_handler");
		if (!kprobe)
			ls_warn("ebpf: ib_uverbs is not loaded (no ib_uverbs_comp_handler): the WAKEUP stage is not attached");
	}
	ret = backend_new(&b, cfg, err);
	if (ret)
		return ret;

	ebpf_verbose = cfg->verbose;
	ebpf_last_warn[0] = ebpf_failed_prog[0] = '\0';
	libbpf_set_print(ebpf_print);
	if (cfg->verbose && !ebpf_log_buf)
		ebpf_log_buf = malloc(LS_EBPF_LOG_SIZE);

	ret = load_programs(b, cfg, mode, sched, threaded, kprobe, err);
	if (ret)
		goto fail;
	ret = attach_programs(b, cfg, err);
	if (ret)
		goto fail;
	stats_on(b);
	*out = b;
	return 0;
fail:
	ring_buffer__free(b->rb);
	latsplit_bpf__destroy(b->skel);
	free(b);
	return ret ? ret : -1;
}

/*
 * Hold the kernel's run-time statistics of BPF programs on (every program
 * run then reads the clock twice): the observer's figures. A failure is
 * kept for the observer to report; recording goes on without them.
 */
static void stats_on(struct ls_backend *b)
{
	int fd;

	if (b->stats_fd >= 0 || b->stats_err)
		return;
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0)
		b->stats_err = errno ? errno : EINVAL;
	else
		b->stats_fd = fd;
}

/* Let them go (they stay on while another holder, or the sysctl, keeps them). */
static void stats_off(struct ls_backend *b)
{
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	b->stats_fd = -1;
}

/* Zero a PERCPU array map's nr entries of value_size bytes each. */
static int zero_percpu(int fd, unsigned int nr, size_t value_size, int ncpus,
		       const char *what, struct ls_err *err)
{
	void *zero = calloc((size_t)ncpus, value_size);
	int ret = 0;

	if (!zero)
		return ls_errnof(err, errno, "ebpf: out of memory");
	for (uint32_t k = 0; k < nr; k++) {
		if (bpf_map_update_elem(fd, &k, zero, BPF_ANY)) {
			ret = ls_errnof(err, errno, "ebpf: zeroing %s[%u] failed", what, k);
			break;
		}
	}
	free(zero);
	return ret;
}

/* Zero every histogram and counter. */
static int ebpf_reset(struct ls_backend *b, struct ls_err *err)
{
	int ret;

	ret = zero_percpu(bpf_map__fd(b->skel->maps.hists), b->nr_hist,
			  sizeof(struct ls_hist), b->nr_cpus, "hists", err);
	if (ret)
		return ret;
	/* the statistics cannot be zeroed: keep where they stand */
	if (!b->stats_err) {
		ret = obs_read(b, b->obs_base, b->missed_base, err);
		if (ret)
			return ret;
	}
	return zero_percpu(bpf_map__fd(b->skel->maps.counters), LS_EBPF_NR_COUNTERS,
			   sizeof(uint64_t), b->nr_cpus, "counters", err);
}

/* ABI slot of compacted histogram k (inverse of hist_index() in BPF). */
static unsigned int slot_of(const struct ls_backend *b, unsigned int k)
{
	unsigned int n = b->nr_irqs;

	if (k < n)
		return LS_SLOT_HARDIRQ + k;
	if (k < 2 * n)
		return LS_SLOT_COMPLETION + (k - n);
	if (k < 3 * n)
		return LS_SLOT_IRQ_THREAD + (k - 2 * n);
	return LS_SLOT_SOFTIRQ_WAIT + (k - 3 * n);
}

/* Sum counter c over CPUs. */
static int read_counter(struct ls_backend *b, uint32_t c, uint64_t *out,
			struct ls_err *err)
{
	uint64_t *v = calloc((size_t)b->nr_cpus, sizeof(*v));

	if (!v)
		return ls_errnof(err, errno, "ebpf: out of memory");
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counters), &c, v)) {
		free(v);
		return ls_errnof(err, errno, "ebpf: reading counter %u failed", c);
	}
	*out = 0;
	for (int i = 0; i < b->nr_cpus; i++)
		*out += v[i];
	free(v);
	return 0;
}

/* Copy every histogram out, in the ABI slot layout. */
static int ebpf_snapshot(struct ls_backend *b, struct ls_snapshot *snap,
			 struct ls_err *err)
{
	int fd = bpf_map__fd(b->skel->maps.hists);
	struct ls_hist *buf;
	int ret = 0;

	memset(snap, 0, sizeof(*snap));
	buf = calloc((size_t)b->nr_cpus, sizeof(*buf));
	snap->hist = calloc((size_t)b->nr_cpus * LS_NR_SLOTS, sizeof(*snap->hist));
	if (!buf || !snap->hist) {
		ret = ls_errnof(err, errno, "ebpf: out of memory for a snapshot");
		goto out;
	}
	snap->nr_cpus = (unsigned int)b->nr_cpus;
	for (uint32_t k = 0; k < b->nr_hist; k++) {
		unsigned int slot = slot_of(b, k);

		if (bpf_map_lookup_elem(fd, &k, buf)) {
			ret = ls_errnof(err, errno, "ebpf: reading histogram %u failed", k);
			goto out;
		}
		for (int c = 0; c < b->nr_cpus; c++)
			snap->hist[(size_t)c * LS_NR_SLOTS + slot] = buf[c];
	}
	memcpy(snap->irqs, b->irqs, sizeof(snap->irqs));
	snap->nr_irqs = b->nr_irqs;
	snap->no_hist = !b->skel->rodata->hist_on;
	ret = read_counter(b, LS_EBPF_CNT_RECORDS, &snap->records, err);
	if (!ret)
		ret = read_counter(b, LS_EBPF_CNT_DROPS, &snap->drops, err);
	if (!ret)
		ret = read_counter(b, LS_EBPF_CNT_COMP_STALE, &snap->comp_stale, err);
	if (!ret)
		ret = read_counter(b, LS_EBPF_CNT_NAPI_UNTIMED, &snap->napi_untimed, err);
	if (!ret)
		ret = read_counter(b, LS_EBPF_CNT_UNORDERED, &snap->unordered, err);
out:
	free(buf);
	if (ret)
		ls_snapshot_free(snap);
	return ret;
}

/* Ring buffer sample: hand one record to the drain callback. */
static int ring_sample(void *ctx, void *data, size_t size)
{
	struct ls_backend *b = ctx;
	struct ls_record rec;

	if (size < sizeof(rec))
		return 0;
	memcpy(&rec, data, sizeof(rec));
	b->delivered++;
	if (b->cb(&rec, b->cb_ctx)) {
		b->stopped = true;
		return -ECANCELED;
	}
	return 0;
}

/* Deliver pending records, waiting up to timeout_ms for the first. */
static long ebpf_drain(struct ls_backend *b, ls_record_cb cb, void *ctx,
		       int timeout_ms, struct ls_err *err)
{
	int ret;

	if (!b->rb)
		return 0;
	b->cb = cb;
	b->cb_ctx = ctx;
	b->delivered = 0;
	b->stopped = false;
	ret = timeout_ms > 0 ? ring_buffer__poll(b->rb, timeout_ms) :
			       ring_buffer__consume(b->rb);
	if (ret >= 0 && timeout_ms > 0 && !b->stopped)
		ret = ring_buffer__consume(b->rb);
	if (ret < 0 && !b->stopped && ret != -EINTR)
		return ls_errnof(err, -ret, "ebpf: reading the record ring failed");
	return b->delivered;
}

/* Detach, unload, free. */
static void ebpf_close(struct ls_backend *b)
{
	if (!b)
		return;
	stats_off(b);
	ring_buffer__free(b->rb);
	latsplit_bpf__destroy(b->skel);
	free(b);
}

/*
 * Pause: set the programs' `paused` flag (each returns at once; they stay
 * attached, re-attaching takes seconds on some kernels). Resume: forget
 * the intervals in flight, which would otherwise span the pause (per-CPU
 * state, the named tasks' and IRQ threads' pending starts), then clear the
 * flag. Maps and the ring keep their contents.
 */
static int ebpf_pause(struct ls_backend *b, bool paused, struct ls_err *err)
{
	int ret;

	if (paused) {
		__atomic_store_n(&b->skel->bss->paused, true, __ATOMIC_SEQ_CST);
		/* the paused programs' runs cost no clock reads either */
		stats_off(b);
		return 0;
	}
	stats_on(b);
	ret = zero_percpu(bpf_map__fd(b->skel->maps.cpu_state), 1,
			  sizeof(struct ls_ebpf_cpu), b->nr_cpus, "cpu_state", err);
	if (ret)
		return ret;
	memset(b->skel->bss->tasks, 0, sizeof(b->skel->bss->tasks));
	memset(b->skel->bss->ithr_pending, 0, sizeof(b->skel->bss->ithr_pending));
	__atomic_store_n(&b->skel->bss->paused, false, __ATOMIC_SEQ_CST);
	return 0;
}

/* Which handler a program serves (enum ls_handler), or -1. */
static int prog_handler(const struct latsplit_bpf *s, const struct bpf_program *p)
{
	const struct {
		const struct bpf_program *btf, *raw;
		int h;
	} map[] = {
		{ s->progs.btf_irq_entry, s->progs.raw_irq_entry, LS_H_IRQ_ENTRY },
		{ s->progs.btf_irq_exit, s->progs.raw_irq_exit, LS_H_IRQ_EXIT },
		{ s->progs.btf_softirq_raise, s->progs.raw_softirq_raise, LS_H_SOFTIRQ_RAISE },
		{ s->progs.btf_softirq_entry, s->progs.raw_softirq_entry, LS_H_SOFTIRQ_ENTRY },
		{ s->progs.btf_softirq_exit, s->progs.raw_softirq_exit, LS_H_SOFTIRQ_EXIT },
		{ s->progs.btf_napi_poll, s->progs.raw_napi_poll, LS_H_NAPI_POLL },
		{ s->progs.btf_sched_switch, s->progs.raw_sched_switch, LS_H_SCHED_SWITCH },
		{ s->progs.btf_sched_waking, s->progs.raw_sched_waking, LS_H_SCHED_WAKING },
		{ s->progs.btf_sched_wakeup, s->progs.raw_sched_wakeup, LS_H_SCHED_WAKEUP },
		{ s->progs.btf_rx_skb, s->progs.raw_rx_skb, LS_H_RX_SKB },
		{ s->progs.btf_tx_skb, s->progs.raw_tx_skb, LS_H_TX_SKB },
		{ s->progs.kp_comp_handler, NULL, LS_H_COMP_ENTRY },
		{ s->progs.kr_comp_handler, NULL, LS_H_COMP_RET },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (p == map[i].btf || (map[i].raw && p == map[i].raw))
			return map[i].h;
	return -1;
}

/*
 * The programs' own cost, from the kernel's run-time statistics of each
 * (bpf_prog_info run_cnt, run_time_ns: counted by the kernel around every
 * run while BPF_ENABLE_STATS is held, on every CPU, with no per-CPU split),
 * summed per handler into cell[LS_NR_HANDLERS].
 */
static int obs_read(struct ls_backend *b, struct ls_obs_cell *cell, uint64_t *missed,
		    struct ls_err *err)
{
	struct bpf_program *p;

	memset(cell, 0, LS_NR_HANDLERS * sizeof(*cell));
	memset(missed, 0, LS_NR_HANDLERS * sizeof(*missed));
	if (b->stats_err)
		return ls_errnof(err, b->stats_err,
				 "ebpf: the kernel's BPF run-time statistics could not be enabled (BPF_ENABLE_STATS, Linux 5.8)");
	bpf_object__for_each_program(p, b->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int h = prog_handler(b->skel, p), fd = bpf_program__fd(p);

		if (h < 0 || fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return ls_errnof(err, errno, "ebpf: reading program %s's run-time statistics",
					 bpf_program__name(p));
		cell[h].hits += info.run_cnt;
		cell[h].ns += info.run_time_ns;
		/* runs the kernel skipped: not cost, but events not seen */
		missed[h] += info.recursion_misses;
	}
	return 0;
}

/* The programs' cost since open or the last reset: one row, obs->all_cpus. */
static int ebpf_observer(struct ls_backend *b, struct ls_obs *obs, struct ls_err *err)
{
	int ret;

	memset(obs, 0, sizeof(*obs));
	obs->cell = calloc(LS_NR_HANDLERS, sizeof(*obs->cell));
	if (!obs->cell)
		return ls_errnof(err, ENOMEM, "ebpf: observer cells");
	obs->nr_cpus = 1;
	obs->all_cpus = true;
	ret = obs_read(b, obs->cell, obs->missed, err);
	if (ret) {
		ls_obs_free(obs);
		return ret;
	}
	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		obs->cell[h].hits -= b->obs_base[h].hits;
		obs->cell[h].ns -= b->obs_base[h].ns;
		obs->missed[h] -= b->missed_base[h];
	}
	return 0;
}

const struct ls_backend_ops ls_backend_ebpf = {
	.name = "ebpf",
	.available = ebpf_available,
	.open = ebpf_open,
	.reset = ebpf_reset,
	.snapshot = ebpf_snapshot,
	.drain = ebpf_drain,
	.pause = ebpf_pause,
	.observer = ebpf_observer,
	.close = ebpf_close,
};
