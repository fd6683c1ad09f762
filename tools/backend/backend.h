/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel-backend interface: the CLI talks to latsplit.ko (backend_kmod.c)
 * and to the eBPF programs (backend_ebpf.c) through these operations only,
 * so every command prints the same thing whichever backend ran.
 */
#ifndef LS_BACKEND_H
#define LS_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "../include/uapi/latsplit.h"
#include "hist.h"
#include "names.h"
#include "util.h"

/* What to watch. Everything here is validated by the backend's open(). */
struct ls_backend_cfg {
	uint32_t irqs[LS_MAX_IRQS];		/* watched IRQ numbers (NIC queues) */
	unsigned int nr_irqs;
	uint64_t cpumask[LS_CPUMASK_WORDS];	/* INTERFERENCE CPUs (probe CPU) */
	int32_t pids[LS_MAX_TASKS];		/* named tasks: WAKEUP, PREEMPT */
	unsigned int nr_pids;
	unsigned int ring_kib;			/* record ring size; 0 = no records */
	bool no_hist;				/* records only (with a ring): no
						 * histograms are kept */
	bool verbose;				/* print loader/verifier logs */
};

/*
 * A snapshot of every histogram: hist[cpu * LS_NR_SLOTS + slot], with the
 * slot layout of include/uapi/latsplit.h. Slots indexed by watched IRQ use
 * the order of cfg.irqs.
 */
struct ls_snapshot {
	unsigned int nr_cpus;
	struct ls_hist *hist;
	uint32_t irqs[LS_MAX_IRQS];
	unsigned int nr_irqs;
	uint64_t records;	/* records produced since open/reset */
	uint64_t drops;		/* records lost because the ring was full */
	uint64_t comp_stale;	/* COMPLETIONs dropped: pending longer than the limit */
	uint64_t napi_untimed;	/* NAPI polls outside NET_RX softirq: not timed */
	uint64_t unordered;	/* intervals dropped: end before start (eBPF only) */
	bool no_hist;		/* histograms were not kept (cfg.no_hist honoured) */
};

/*
 * The observer's own cost since open or the last reset:
 * cell[cpu * LS_NR_HANDLERS + handler], see include/uapi/latsplit.h.
 * all_cpus: the backend cannot split it by CPU (the eBPF backend reads the
 * kernel's run-time statistics of its programs); then nr_cpus is 1 and
 * that one row holds every CPU's cost.
 */
struct ls_obs {
	unsigned int nr_cpus;
	bool all_cpus;
	struct ls_obs_cell *cell;
	/*
	 * Per handler, the calls whose program the kernel skipped (eBPF: its
	 * recursion protection, bpf_prog_info recursion_misses); 0 for the
	 * module, whose probes never skip.
	 */
	uint64_t missed[LS_NR_HANDLERS];
};

struct ls_backend;

/* Called once per record by drain(); a non-zero return stops the drain. */
typedef int (*ls_record_cb)(const struct ls_record *rec, void *ctx);

struct ls_backend_ops {
	const char *name;
	/* True when this backend can run here (module loaded / BPF usable). */
	bool (*available)(void);
	/* Configure and start recording. */
	int (*open)(struct ls_backend **out, const struct ls_backend_cfg *cfg,
		    struct ls_err *err);
	/* Zero every histogram and counter. */
	int (*reset)(struct ls_backend *b, struct ls_err *err);
	/* Copy out all histograms (snap->hist is allocated; free with ls_snapshot_free). */
	int (*snapshot)(struct ls_backend *b, struct ls_snapshot *snap,
			struct ls_err *err);
	/*
	 * Hand pending records to cb, waiting at most timeout_ms for the
	 * first one (0 = do not wait). Returns the number delivered, or -1.
	 */
	long (*drain)(struct ls_backend *b, ls_record_cb cb, void *ctx,
		      int timeout_ms, struct ls_err *err);
	/*
	 * Copy out the observer's own cost (obs->cell is allocated; free
	 * with ls_obs_free). Cheap: callable around a probe run.
	 */
	int (*observer)(struct ls_backend *b, struct ls_obs *obs,
			struct ls_err *err);
	/*
	 * Pause (true) or resume (false) recording, keeping the
	 * configuration, the histograms and the records not yet drained;
	 * while paused nothing is recorded or counted (latsplit.ko's probes
	 * return before any work, the eBPF programs stay attached and return
	 * at once). NULL when the backend cannot.
	 */
	int (*pause)(struct ls_backend *b, bool paused, struct ls_err *err);
	/* Stop recording, detach everything, free b. */
	void (*close)(struct ls_backend *b);
};

extern const struct ls_backend_ops ls_backend_kmod;
extern const struct ls_backend_ops ls_backend_ebpf;

/* Pick a backend by name ("auto", "kmod", "ebpf"); auto prefers kmod if loaded. */
const struct ls_backend_ops *ls_backend_pick(const char *name, struct ls_err *err);
/*
 * Pick and open the backend called name. With "auto", a module that is
 * loaded but refuses the configuration (another latsplit owns it: EBUSY)
 * gives way to the eBPF backend; both reasons are kept if that fails too.
 * On success *ops and *b are set.
 */
int ls_backend_open_named(const char *name, const struct ls_backend_cfg *cfg,
			  const struct ls_backend_ops **ops, struct ls_backend **b,
			  struct ls_err *err);

void ls_snapshot_free(struct ls_snapshot *snap);
void ls_obs_free(struct ls_obs *obs);
/*
 * after - before, per cell, into d (allocated; free with ls_obs_free).
 * Both must come from one backend session; a CPU count that differs or a
 * cell that went backwards (a reset in between) is an error.
 */
int ls_obs_diff(const struct ls_obs *before, const struct ls_obs *after,
		struct ls_obs *d, struct ls_err *err);
/*
 * Sum of d's cells over the CPUs in cpumask (NULL = every CPU; ignored when
 * d->all_cpus: there is no per-CPU split to select from).
 */
struct ls_obs_cell ls_obs_sum(const struct ls_obs *d, const uint64_t *cpumask);
/* The same for handler h alone. */
struct ls_obs_cell ls_obs_handler_sum(const struct ls_obs *d, const uint64_t *cpumask,
				      unsigned int h);

#endif /* LS_BACKEND_H */
