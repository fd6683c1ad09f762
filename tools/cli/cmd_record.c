// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit record: attach a kernel backend (latsplit.ko or eBPF) for a time
 * window, or while a command runs, and print per-CPU per-stage histograms:
 * count, p50, p99, max (rtla-style, one column per CPU), or JSON with
 * count/sum_ns/max_ns per CPU and histogram slot (kind "record"); then the
 * observer's own cost (the backend's hits and time per handler and CPU).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "commands.h"
#include "io.h"
#include "opts.h"
#include "record.h"
#include "split.h"
#include "util.h"

static volatile sig_atomic_t record_stop;
static volatile sig_atomic_t record_reset;

/* SIGINT/SIGTERM: end the window. */
static void on_signal(int sig)
{
	(void)sig;
	record_stop = 1;
}

/* SIGUSR1: zero the histograms and restart the window (skip a warm-up). */
static void on_reset(int sig)
{
	(void)sig;
	record_reset = 1;
}

/* SIGCHLD: only interrupts the wait, so the command's exit ends the window at once. */
static void on_child(int sig)
{
	(void)sig;
}

/* Print the usage; the option list is the truth the docs are tested against. */
static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit record [OPTIONS] [-D DURATION | [--] COMMAND [ARGS...]]\n"
		"\n"
		"Attach a kernel backend for a window (or while COMMAND runs) and print\n"
		"per-CPU, per-stage counts, p50, p99 and max.\n"
		"\n"
		"options:\n"
		"  -b, --backend NAME   auto (default; latsplit.ko when loaded, else ebpf), kmod, ebpf\n"
		"  -i, --interface IF   watch the IRQs of network interface IF\n"
		"      --irq N[,M...]   watch these IRQ numbers\n"
		"  -c, --cpus LIST      CPUs whose hardirq+softirq time is INTERFERENCE (e.g. 0-1,3)\n"
		"  -p, --pid P[,P...]   named tasks for the WAKEUP and PREEMPT stages\n"
		"      --pid-command    name COMMAND's process too (it starts once the backend is on)\n"
		"  -D, --duration TIME  window length (ns, us, ms, s; bare number = s)\n"
		"  -r, --records FILE   write every interval record to FILE (text, one per line)\n"
		"      --ring-kib N     record ring size in KiB (default %u, with --records)\n"
		"      --buckets        also print the non-empty histogram buckets\n"
		"      --no-hist        records only (needs --records): no histograms are kept,\n"
		"                       as breakdown runs either backend\n"
		"      --ab TIME        alternate recording on and off every TIME (10ms..60s): an\n"
		"                       in-run A/B of what recording costs COMMAND; the phases are\n"
		"                       printed (CLOCK_MONOTONIC)\n"
		"  -j, --json           JSON output (kind \"record\")\n"
		"  -v, --verbose        print the backend's loader and verifier messages\n"
		"  -h, --help           this text\n"
		"\n"
		"Without -D or COMMAND the window ends on SIGINT/SIGTERM; SIGUSR1 zeroes the\n"
		"histograms and restarts the window (to leave a warm-up out). Exit status:\n"
		"0 ok, 1 COMMAND failed, 2 usage error or the backend could not run.\n",
		RECORD_DEFAULT_RING_KIB);
}

/* Parse "N,M,..." into up to max u32 values in [0, lim]. */
static int parse_u32_list(const char *s, uint32_t *out, unsigned int max,
			  unsigned int *n, uint64_t lim, const char *what,
			  struct ls_err *err)
{
	char buf[1024], *save = NULL, *tok;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return ls_errf(err, "%s: list too long", what);
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= max)
			return ls_errf(err, "%s: at most %u values", what, max);
		if (ls_parse_u64(tok, 0, lim, &v, err, what))
			return -1;
		for (unsigned int i = 0; i < *n; i++)
			if (out[i] == v)
				return ls_errf(err, "%s: %llu given twice", what,
					       (unsigned long long)v);
		out[(*n)++] = (uint32_t)v;
	}
	if (*n == 0)
		return ls_errf(err, "%s: empty list", what);
	return 0;
}

/* Add the IRQs listed in directory dir (msi_irqs) to cfg; count added. */
static int add_msi_irqs(const char *dir, struct ls_backend_cfg *cfg,
			struct ls_err *err)
{
	struct dirent *de;
	int added = 0;
	uint64_t v;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct ls_err e2;

		if (de->d_name[0] == '.')
			continue;
		if (ls_parse_u64(de->d_name, 0, UINT32_MAX, &v, &e2, "irq"))
			continue;
		if (cfg->nr_irqs >= LS_MAX_IRQS) {
			closedir(d);
			return ls_errf(err, "%s: more than %d IRQs", dir, LS_MAX_IRQS);
		}
		cfg->irqs[cfg->nr_irqs++] = (uint32_t)v;
		added++;
	}
	closedir(d);
	return added;
}

/* Sort the watched IRQs ascending (stable output order). */
static void sort_irqs(struct ls_backend_cfg *cfg)
{
	for (unsigned int i = 1; i < cfg->nr_irqs; i++)
		for (unsigned int j = i; j > 0 && cfg->irqs[j - 1] > cfg->irqs[j]; j--) {
			uint32_t t = cfg->irqs[j];

			cfg->irqs[j] = cfg->irqs[j - 1];
			cfg->irqs[j - 1] = t;
		}
}

/*
 * IRQs of interface ifname: the MSI vectors of its device (or of the PCI
 * parent, for virtio), else the device's legacy irq, else the
 * /proc/interrupts lines whose name contains ifname.
 */
static int resolve_if_irqs(const char *ifname, struct ls_backend_cfg *cfg,
			   struct ls_err *err)
{
	static const char *const rel[] = { "device/msi_irqs", "device/../msi_irqs" };
	char path[512], line[1024], text[64];
	uint64_t v;
	int n = 0;
	FILE *fp;

	if (strchr(ifname, '/') || strlen(ifname) >= 64)
		return ls_errf(err, "interface '%s': not a valid name", ifname);
	snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
	if (access(path, F_OK))
		return ls_errnof(err, errno, "interface '%s'", ifname);
	for (size_t i = 0; i < ARRAY_SIZE(rel) && n == 0; i++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, rel[i]);
		n = add_msi_irqs(path, cfg, err);
		if (n < 0)
			return n;
	}
	if (n == 0) {
		struct ls_err e2;

		snprintf(path, sizeof(path), "/sys/class/net/%s/device/irq", ifname);
		if (!ls_read_text(path, text, sizeof(text), &e2) &&
		    !ls_parse_u64(text, 1, UINT32_MAX, &v, &e2, "irq")) {
			cfg->irqs[cfg->nr_irqs++] = (uint32_t)v;
			n = 1;
		}
	}
	if (n == 0 && (fp = fopen("/proc/interrupts", "r"))) {
		while (fgets(line, sizeof(line), fp) && cfg->nr_irqs < LS_MAX_IRQS) {
			unsigned int irq;

			if (sscanf(line, " %u:", &irq) == 1 && strstr(line, ifname)) {
				cfg->irqs[cfg->nr_irqs++] = irq;
				n++;
			}
		}
		fclose(fp);
	}
	if (n == 0)
		return ls_errf(err, "interface '%s': no IRQs found (no msi_irqs, no device irq, no /proc/interrupts line naming it); use --irq",
			       ifname);
	sort_irqs(cfg);
	return 0;
}

/* record's options; the ones checked after the loop keep their text in o->arg. */
enum { OPT_IRQ = 256, OPT_RING, OPT_BUCKETS, OPT_PIDCMD, OPT_AB, OPT_NOHIST };

#define RO struct record_opts

/* record needs a kernel backend: every one but "none". */
static const struct ls_opt_name record_backends[] = {
	{ "auto", 0 }, { "kmod", 0 }, { "ebpf", 0 }, { NULL, 0 },
};

static const struct ls_opt record_options[] = {
	LS_OPT_CHOICE("backend", 'b', RO, backend, record_backends),
	LS_OPT_STR("interface", 'i', RO, ifname),
	LS_OPT_STR("irq", OPT_IRQ, RO, arg.irqs),
	LS_OPT_STR("cpus", 'c', RO, arg.cpus),
	LS_OPT_STR("pid", 'p', RO, arg.pids),
	LS_OPT_STR("duration", 'D', RO, arg.dur),
	LS_OPT_STR("records", 'r', RO, records_path),
	LS_OPT_STR("ring-kib", OPT_RING, RO, arg.ring),
	LS_OPT_FLAG("buckets", OPT_BUCKETS, RO, buckets),
	LS_OPT_FLAG("no-hist", OPT_NOHIST, RO, cfg.no_hist),
	LS_OPT_FLAG("pid-command", OPT_PIDCMD, RO, pid_command),
	LS_OPT_STR("ab", OPT_AB, RO, arg.ab),
	LS_OPT_FLAG("json", 'j', RO, json),
	LS_OPT_FLAG("verbose", 'v', RO, cfg.verbose),
	LS_OPT_HELPOPT,
};

/* An option getopt did not accept, or one without its argument. */
static int unknown_opt(int c, char **argv, struct ls_err *err)
{
	if (optopt && optopt < 256)
		return ls_errf(err, "record: unknown option or missing argument '-%c'", optopt);
	return ls_errf(err, "record: unknown option or missing argument '%s'", argv[optind - 1]);
}

/* --cpus LIST: the interference CPUs, every one of them present. */
static int parse_cpus(struct record_opts *o, const char *cpus, struct ls_err *err)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (ls_parse_cpulist(cpus, o->cfg.cpumask, LS_MAX_CPUS, err))
		return ls_err_wrap(err, "record: --cpus");
	for (long i = ncpu; i < LS_MAX_CPUS; i++)
		if (o->cfg.cpumask[i / 64] & (1ull << (i % 64)))
			return ls_errf(err, "record: --cpus '%s': cpu %ld does not exist (%ld cpus)",
				       cpus, i, ncpu);
	o->have_cpus = true;
	return 0;
}

/* --pid P[,P...]: the named tasks, every one of them alive. */
static int parse_pids(struct record_opts *o, const char *pidlist, struct ls_err *err)
{
	uint32_t pids[LS_MAX_TASKS];

	if (parse_u32_list(pidlist, pids, LS_MAX_TASKS, &o->cfg.nr_pids,
			   INT32_MAX, "--pid", err))
		return -1;
	for (unsigned int i = 0; i < o->cfg.nr_pids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%u", pids[i]);
		if (pids[i] == 0 || access(path, F_OK))
			return ls_errf(err, "record: --pid %u: no such process", pids[i]);
		o->cfg.pids[i] = (int32_t)pids[i];
	}
	return 0;
}

/* Parse and validate the command line into o: 0, 1 after the help, or -1 (err says why). */
static int parse_opts(int argc, char **argv, struct record_opts *o,
		      struct ls_err *err)
{
	static const struct ls_optcmd cmd = {
		.name = "record", .mode = "+", .usage = usage, .quiet = true,
		.unknown = unknown_opt,
	};
	const struct record_args *a = &o->arg;
	uint64_t v;
	int rc;

	o->backend = "auto";
	rc = LS_OPTS_PARSE(argc, argv, &cmd, record_options, o, err);
	if (rc == LS_OPTS_HELP)
		return 1;
	if (rc)
		return -1;
	if (optind < argc)
		o->cmd = argv + optind;

	if (o->ifname && a->irqs)
		return ls_errf(err, "record: give -i IF or --irq, not both");
	if (a->irqs && parse_u32_list(a->irqs, o->cfg.irqs, LS_MAX_IRQS, &o->cfg.nr_irqs,
				      UINT32_MAX, "--irq", err))
		return -1;
	if (o->ifname && resolve_if_irqs(o->ifname, &o->cfg, err))
		return -1;
	if (a->cpus && parse_cpus(o, a->cpus, err))
		return -1;
	if (a->pids && parse_pids(o, a->pids, err))
		return -1;
	if (a->dur) {
		if (ls_parse_duration_ns(a->dur, &o->duration_ns, err, "--duration"))
			return -1;
		if (o->duration_ns == 0)
			return ls_errf(err, "record: --duration must be > 0");
	}
	if (a->dur && o->cmd)
		return ls_errf(err, "record: give -D DURATION or a COMMAND, not both");
	if (a->ring) {
		if (ls_parse_u64(a->ring, 4, 1024 * 1024, &v, err, "--ring-kib"))
			return -1;
		if (!o->records_path)
			return ls_errf(err, "record: --ring-kib needs --records FILE");
		o->ring_kib = (unsigned int)v;
	} else if (o->records_path) {
		o->ring_kib = RECORD_DEFAULT_RING_KIB;
	}
	o->cfg.ring_kib = o->ring_kib;
	if (o->cfg.no_hist && !o->records_path)
		return ls_errf(err, "record: --no-hist needs --records FILE (nothing would be kept)");
	if (o->cfg.no_hist && o->buckets)
		return ls_errf(err, "record: --no-hist and --buckets: no histograms to print");
	if (o->pid_command && !o->cmd)
		return ls_errf(err, "record: --pid-command needs a COMMAND");
	if (o->pid_command && o->cfg.nr_pids >= LS_MAX_TASKS)
		return ls_errf(err, "record: --pid-command: already %d tasks named (the most)",
			       LS_MAX_TASKS);
	if (a->ab) {
		if (ls_parse_duration_ns(a->ab, &o->ab_ns, err, "--ab"))
			return -1;
		if (o->ab_ns < 10000000ull || o->ab_ns > 60000000000ull)
			return ls_errf(err, "record: --ab %s: a phase is 10ms..60s", a->ab);
	}
	return 0;
}

/*
 * Read the observer right before the final snapshot, into ro. Never fails
 * the command: without the op, or when it fails, ro->why says why.
 */
static void read_observer(const struct ls_backend_ops *ops, struct ls_backend *b,
			  struct record_obs *ro)
{
	struct ls_err e = { 0 };

	memset(ro, 0, sizeof(*ro));
	if (!ops->observer) {
		snprintf(ro->why, sizeof(ro->why), "the %s backend does not report it",
			 ops->name);
		return;
	}
	if (ops->observer(b, &ro->obs, &e)) {
		ls_obs_free(&ro->obs);
		snprintf(ro->why, sizeof(ro->why), "reading it failed: %s", e.msg);
		ls_warn("record: observer's cost not reported: %s", e.msg);
		return;
	}
	ro->have = true;
}

/*
 * Start COMMAND; returns its pid or -1. With hold, the child waits before
 * exec until a byte arrives on *hold (written by release_child()).
 */
static pid_t spawn(char **cmd, int *hold, struct ls_err *err)
{
	int p[2] = { -1, -1 };
	pid_t pid;

	if (hold && pipe2(p, O_CLOEXEC)) {
		ls_errnof(err, errno, "record: pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		ls_errnof(err, errno, "record: fork");
		if (hold) {
			close(p[0]);
			close(p[1]);
		}
		return -1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (hold) {
			char c;

			close(p[1]);
			/* held until the backend watches this process; EOF: give up */
			if (read(p[0], &c, 1) != 1)
				_exit(126);
		}
		execvp(cmd[0], cmd);
		fprintf(stderr, "latsplit: record: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	if (hold) {
		close(p[0]);
		*hold = p[1];
	}
	return pid;
}

/* `latsplit record`: attach, wait for the window, print. */
/* Let a held COMMAND exec; closing the pipe without a byte makes it give up. */
static int release_child(int *hold, bool go, struct ls_err *err)
{
	int ret = 0;

	if (*hold < 0)
		return 0;
	if (go && write(*hold, "g", 1) != 1)
		ret = ls_errnof(err, errno, "record: releasing the command");
	close(*hold);
	*hold = -1;
	return ret;
}

/* --ab: the first phase (on) begins now. */
static int ab_start(struct record_ab *ab, uint64_t period, struct ls_err *err)
{
	ab->v = calloc(RECORD_MAX_PHASES, sizeof(*ab->v));
	if (!ab->v)
		return ls_errnof(err, ENOMEM, "record: --ab phases");
	ab->v[0] = (struct record_phase){ .on = true, .begin_ns = ls_now_ns() };
	ab->n = 1;
	ab->next_ns = ab->v[0].begin_ns + period;
	return 0;
}

/*
 * --ab: end the current phase and begin the other. Recording pauses before
 * the records of the phase are drained, so the drain is in no phase.
 */
static int ab_switch(const struct ls_backend_ops *ops, struct ls_backend *b,
		     struct record_ab *ab, uint64_t period, FILE *recfp,
		     struct ls_err *err)
{
	ab->v[ab->n - 1].end_ns = ls_now_ns();
	if (ab->n == RECORD_MAX_PHASES)
		return ls_errf(err, "record: --ab: more than %d phases: a longer TIME",
			       RECORD_MAX_PHASES);
	if (ops->pause(b, !ab->paused, err))
		return ls_err_wrap(err, "record: --ab");
	ab->paused = !ab->paused;
	if (recfp) {
		uint64_t t = ls_now_ns();
		long n = ops->drain(b, record_write_record, recfp, 0, err);

		if (n < 0)
			return -1;
		ab->drained += (uint64_t)n;
		ab->drain_ns += ls_now_ns() - t;
	}
	ab->v[ab->n] = (struct record_phase){ .on = !ab->paused, .begin_ns = ls_now_ns() };
	ab->next_ns = ab->v[ab->n].begin_ns + period;
	ab->n++;
	return 0;
}

/* SIGINT/SIGTERM end the window, SIGCHLD wakes it, SIGUSR1 restarts it. */
static void install_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = on_reset;
	sigaction(SIGUSR1, &sa, NULL);
}

/* The window's report, the ring's losses and how COMMAND ended; an exit status. */
static int report(const struct record_opts *o, const struct ls_snapshot *snap,
		  const struct record_obs *ro, const struct record_ab *ab, const char *backend,
		  uint64_t t0, uint64_t t1, int status)
{
	if (o->json)
		record_print_json(o, snap, ro, ab, backend, t0, t1,
				  o->cmd ? (WIFEXITED(status) ? WEXITSTATUS(status) :
					    128 + WTERMSIG(status)) : 0);
	else
		record_print_text(o, snap, ro, ab, backend, t1 - t0);
	if (o->records_path && snap->drops)
		ls_warn("record: %llu records dropped (ring full): raise --ring-kib",
			(unsigned long long)snap->drops);
	if (o->cmd && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		ls_warn("record: command '%s' failed (status %d)", o->cmd[0],
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return LS_EXIT_FAIL;
	}
	return LS_EXIT_OK;
}

/* One recording's state while its window runs. */
struct record_win {
	const struct ls_backend_ops *ops;
	struct ls_backend *b;
	FILE *recfp;			/* --records, or NULL */
	struct record_ab *ab;
	pid_t child;			/* COMMAND, or -1 */
	int status;			/* its wait status once it exited */
	uint64_t t0;			/* the window's start (moved by SIGUSR1) */
	uint64_t t1;			/* its end */
};

/* Record until the window ends, COMMAND exits or a signal stops it, then drain; -1 with err. */
static int record_window(const struct record_opts *o, struct record_win *w,
			 struct ls_err *err)
{
	while (!record_stop) {
		/* A short poll bounds how late a command's exit is noticed. */
		int wait_ms = w->child > 0 ? 10 : RECORD_POLL_MS;

		if (o->ab_ns) {
			uint64_t now = ls_now_ns();

			if (now >= w->ab->next_ns) {
				if (ab_switch(w->ops, w->b, w->ab, o->ab_ns, w->recfp, err))
					return -1;
				now = ls_now_ns();
			}
			if (w->ab->next_ns > now && w->ab->next_ns - now < (uint64_t)wait_ms * 1000000)
				wait_ms = (int)((w->ab->next_ns - now) / 1000000) + 1;
		}

		if (o->duration_ns) {
			uint64_t now = ls_now_ns();

			if (now >= w->t0 + o->duration_ns)
				break;
			if (w->t0 + o->duration_ns - now < (uint64_t)wait_ms * 1000000)
				wait_ms = (int)((w->t0 + o->duration_ns - now) / 1000000) + 1;
		}
		if (record_reset) {
			record_reset = 0;
			if (w->ops->reset(w->b, err))
				return -1;
			w->t0 = ls_now_ns();
		}
		if (w->child > 0) {
			pid_t got = waitpid(w->child, &w->status, WNOHANG);

			if (got == w->child) {
				w->child = -1;
				break;
			}
		}
		/*
		 * Paused, a backend's records end at once: nothing to wait on.
		 * With --ab the reader sleeps through the "on" phases as well
		 * and drains at each switch, in no phase: a phase then measures
		 * what recording costs the traced path, not the reader's own
		 * work (which, under an emulator running one vCPU at a time,
		 * stalls the probe's CPU even from another one). The ring must
		 * hold one phase; what it cannot hold is counted as drops.
		 */
		if (w->recfp && !o->ab_ns) {
			if (w->ops->drain(w->b, record_write_record, w->recfp, wait_ms, err) < 0)
				return -1;
		} else {
			usleep((useconds_t)wait_ms * 1000);
		}
	}
	if (w->ab->n)
		w->ab->v[w->ab->n - 1].end_ns = ls_now_ns();
	if (w->child > 0) {
		/* Interrupted: let the command finish its own way. */
		kill(w->child, SIGTERM);
		waitpid(w->child, &w->status, 0);
		w->child = -1;
	}
	w->t1 = ls_now_ns();
	if (w->recfp && w->ops->drain(w->b, record_write_record, w->recfp, 0, err) < 0)
		return -1;
	return 0;
}

/* `latsplit record`: a window of kernel recording, then its reports. */
int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	const struct ls_backend_ops *ops;
	struct ls_backend *b = NULL;
	struct ls_snapshot snap = { 0 };
	struct record_obs ro = { 0 };
	struct ls_afile af = { 0 };
	struct ls_err err = { 0 };
	struct record_ab ab = { 0 };
	struct record_win w;
	bool af_open = false;
	int ret, status = 0, rc = LS_EXIT_USAGE, hold = -1;
	uint64_t t0, t1;
	pid_t child = -1;

	ret = parse_opts(argc, argv, &o, &err);
	if (ret > 0)
		return LS_EXIT_OK;	/* the help, printed */
	if (ret) {
		ls_warn("%s", err.msg);
		usage(stderr);
		return LS_EXIT_USAGE;
	}
	ops = ls_backend_pick(o.backend, &err);
	if (!ops)
		goto fail;
	if (o.records_path) {
		if (ls_afile_open(&af, o.records_path, &err))
			goto fail;
		af_open = true;
		fprintf(af.fp, "# start_ns end_ns cpu stage stage_name id aux flags\n");
	}
	install_signals();
	if (o.pid_command) {
		child = spawn(o.cmd, &hold, &err);
		if (child < 0)
			goto fail;
		o.cfg.pids[o.cfg.nr_pids++] = child;
	}
	/* auto: a module owned by another session means eBPF instead */
	if (ls_backend_open_named(o.backend, &o.cfg, &ops, &b, &err))
		goto fail;
	if (o.ab_ns && !ops->pause) {
		ls_errf(&err, "record: --ab: the %s backend cannot pause", ops->name);
		goto fail;
	}
	if (o.cfg.verbose)
		ls_warn("record: %s backend attached", ops->name);
	t0 = ls_now_ns();
	if (o.ab_ns && ab_start(&ab, o.ab_ns, &err))
		goto fail;
	if (o.cmd && !o.pid_command) {
		child = spawn(o.cmd, NULL, &err);
		if (child < 0)
			goto fail;
	}
	if (release_child(&hold, true, &err))
		goto fail;
	w = (struct record_win){ ops, b, af_open ? af.fp : NULL, &ab, child, 0, t0, 0 };
	ret = record_window(&o, &w, &err);
	child = w.child;
	status = w.status;
	t0 = w.t0;
	t1 = w.t1;
	if (ret)
		goto fail;
	/* Since open or the last reset, like the histograms read next. */
	read_observer(ops, b, &ro);
	if (ops->snapshot(b, &snap, &err))
		goto fail;
	ops->close(b);
	b = NULL;
	if (af_open) {
		af_open = false;
		if (ls_afile_commit(&af, &err))
			goto fail;
	}
	rc = report(&o, &snap, &ro, &ab, ops->name, t0, t1, status);
	ls_snapshot_free(&snap);
	ls_obs_free(&ro.obs);
	free(ab.v);
	return rc;
fail:
	ls_warn("%s", err.msg);
	release_child(&hold, false, &err);
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	if (b)
		ops->close(b);
	if (af_open)
		ls_afile_abort(&af);
	ls_snapshot_free(&snap);
	ls_obs_free(&ro.obs);
	free(ab.v);
	return LS_EXIT_USAGE;
}
