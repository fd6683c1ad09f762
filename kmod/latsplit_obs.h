/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latsplit.ko: the observer's sampled self-timing, shared by the tracepoint
 * probes (latsplit_probes.c) and the WAKEUP kretprobe (latsplit_wakeup.c).
 */
#ifndef LATSPLIT_OBS_H
#define LATSPLIT_OBS_H

#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

#include "latsplit.h"

/*
 * The observer's own cost, sampled: every call is counted, and one in
 * LS_OBS_SAMPLE runs inside a timed frame with IRQs off from the first
 * clock read to the last (no other probe nests in it on this CPU). An
 * untimed call adds the handler's running mean on this CPU, an EWMA of the
 * timed calls with weight 1/8, so a cell's ns stays monotonic and its sum
 * estimates the wall time taken from that CPU. The timed calls are drawn
 * by a per-CPU xorshift, not every n-th, so the regular pattern of calls a
 * probe sample makes cannot alias with the choice; a cell with no estimate
 * yet times its next call. A timed call pays its own frame, so the mean
 * errs high. Counted only while tracing is on.
 */
#define LS_OBS_SAMPLE		8	/* one call in 8 timed: a power of two */

/* Draw whether this call of handler h is timed (IRQs may be on). */
static __always_inline bool ls_obs_pick(unsigned int h)
{
	struct ls_pcpu *pc = this_cpu_ptr(ls_pcpu);
	u32 x = pc->obs_rng;

	if (unlikely(!x))
		x = 0x9e3779b9U ^ smp_processor_id();
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	pc->obs_rng = x;
	return !(x & (LS_OBS_SAMPLE - 1)) || !READ_ONCE(pc->obs_est[h]);
}

/* Close a timed call of handler h begun at t0. IRQs off. */
static __always_inline void ls_obs_end(unsigned int h, u64 t0)
{
	struct ls_pcpu *pc = this_cpu_ptr(ls_pcpu);
	struct ls_obs_cell *c = &pc->obs[h];
	u64 d = ktime_get_ns() - t0;
	u32 est = pc->obs_est[h], d32 = min_t(u64, d, U32_MAX);

	c->ns += d;
	c->hits++;
	/* est += (d - est) / 8, kept in u32 ns; the first sets it outright */
	est = est ? est - (est >> 3) + (d32 >> 3) : d32;
	WRITE_ONCE(pc->obs_est[h], est);
}

/* Count an untimed call of handler h at its estimate (IRQ-safe adds). */
static __always_inline void ls_obs_guess(unsigned int h)
{
	this_cpu_inc(ls_pcpu->obs[h].hits);
	this_cpu_add(ls_pcpu->obs[h].ns, this_cpu_read(ls_pcpu->obs_est[h]));
}

#endif /* LATSPLIT_OBS_H */
