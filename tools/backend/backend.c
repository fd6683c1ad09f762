// SPDX-License-Identifier: GPL-2.0
/* Backend selection (auto / kmod / ebpf) and snapshot ownership. */
#include "backend.h"
#include "io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The module's control directory: its presence makes auto pick kmod. */
#define LS_KMOD_DEBUGFS "/sys/kernel/debug/latsplit"

/*
 * Pick a backend by name. "auto" prefers latsplit.ko when it is loaded
 * (its debugfs directory exists), else eBPF when the kernel has BTF.
 */
const struct ls_backend_ops *ls_backend_pick(const char *name,
					     struct ls_err *err)
{
	if (!name || !strcmp(name, "auto")) {
		if (access(LS_KMOD_DEBUGFS, F_OK) == 0 &&
		    ls_backend_kmod.available())
			return &ls_backend_kmod;
		if (ls_backend_ebpf.available())
			return &ls_backend_ebpf;
		ls_errcf(err, LS_E_UNSUPPORTED,
			 "no kernel backend usable: latsplit.ko is not loaded (%s missing) "
			 "and the kernel has no BTF for the eBPF backend (/sys/kernel/btf/vmlinux missing)",
			 LS_KMOD_DEBUGFS);
		return NULL;
	}
	if (!strcmp(name, "kmod"))
		return &ls_backend_kmod;
	if (!strcmp(name, "ebpf"))
		return &ls_backend_ebpf;
	ls_errcf(err, LS_E_USAGE, "unknown backend '%s' (auto, kmod or ebpf)", name);
	return NULL;
}

/* Pick and open the backend called name; auto falls back from a busy module to eBPF. */
int ls_backend_open_named(const char *name, const struct ls_backend_cfg *cfg,
			  const struct ls_backend_ops **ops, struct ls_backend **b,
			  struct ls_err *err)
{
	const struct ls_backend_ops *o = ls_backend_pick(name, err);
	struct ls_err first;

	*ops = NULL;
	*b = NULL;
	if (!o)
		return -1;
	if (!o->available())
		return ls_errcf(err, LS_E_UNSUPPORTED, "backend %s is not available here", o->name);
	if (!o->open(b, cfg, err)) {
		*ops = o;
		return 0;
	}
	*b = NULL;
	ls_err_wrap(err, "backend %s", o->name);
	if ((name && strcmp(name, "auto")) || o != &ls_backend_kmod ||
	    !ls_backend_ebpf.available())
		return -1;
	first = *err;
	if (ls_backend_ebpf.open(b, cfg, err)) {
		struct ls_err second = *err;

		*b = NULL;
		return ls_errf(err, "%s; eBPF instead: %s", first.msg, second.msg);
	}
	ls_warn("%s; recording with eBPF instead", first.msg);
	*ops = &ls_backend_ebpf;
	return 0;
}

/* Free a snapshot's histograms and clear it. */
void ls_snapshot_free(struct ls_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->hist);
	memset(snap, 0, sizeof(*snap));
}

/* Free the observer's cells and clear obs. */
void ls_obs_free(struct ls_obs *obs)
{
	if (!obs)
		return;
	free(obs->cell);
	memset(obs, 0, sizeof(*obs));
}

/* after - before per cell; a changed CPU count or a counter going back is an error. */
int ls_obs_diff(const struct ls_obs *before, const struct ls_obs *after,
		struct ls_obs *d, struct ls_err *err)
{
	size_t n;

	memset(d, 0, sizeof(*d));
	if (before->nr_cpus != after->nr_cpus)
		return ls_errf(err, "observer: CPU count changed between readings (%u, then %u)",
			       before->nr_cpus, after->nr_cpus);
	if (before->all_cpus != after->all_cpus)
		return ls_errf(err, "observer: one reading is split by CPU, the other is not");
	n = (size_t)after->nr_cpus * LS_NR_HANDLERS;
	d->cell = calloc(n ? n : 1, sizeof(*d->cell));
	if (!d->cell)
		return ls_errf(err, "observer: out of memory for %zu cells", n);
	d->nr_cpus = after->nr_cpus;
	d->all_cpus = after->all_cpus;
	for (size_t i = 0; i < n; i++) {
		const struct ls_obs_cell *a = &before->cell[i], *b = &after->cell[i];

		if (b->hits < a->hits || b->ns < a->ns) {
			ls_obs_free(d);
			return ls_errf(err, "observer: CPU %zu handler %s went backwards (reset between readings?)",
				       i / LS_NR_HANDLERS, ls_handler_name(i % LS_NR_HANDLERS));
		}
		d->cell[i].hits = b->hits - a->hits;
		d->cell[i].ns = b->ns - a->ns;
	}
	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		if (after->missed[h] < before->missed[h]) {
			ls_obs_free(d);
			return ls_errf(err, "observer: handler %s skipped-run count went backwards (reset between readings?)",
				       ls_handler_name(h));
		}
		d->missed[h] = after->missed[h] - before->missed[h];
	}
	return 0;
}

/* Handler h's cells of d summed over the CPUs in cpumask (see ls_obs_sum). */
struct ls_obs_cell ls_obs_handler_sum(const struct ls_obs *d, const uint64_t *cpumask,
				      unsigned int h)
{
	struct ls_obs_cell s = { 0, 0 };

	if (d->all_cpus)
		cpumask = NULL;
	for (unsigned int cpu = 0; cpu < d->nr_cpus; cpu++) {
		if (cpumask && (cpu >= LS_MAX_CPUS ||
				!(cpumask[cpu / 64] & (1ull << (cpu % 64)))))
			continue;
		s.hits += d->cell[(size_t)cpu * LS_NR_HANDLERS + h].hits;
		s.ns += d->cell[(size_t)cpu * LS_NR_HANDLERS + h].ns;
	}
	return s;
}

/* Sum of d's cells over the CPUs in cpumask (NULL = every CPU). */
struct ls_obs_cell ls_obs_sum(const struct ls_obs *d, const uint64_t *cpumask)
{
	struct ls_obs_cell s = { 0, 0 };

	for (unsigned int h = 0; h < LS_NR_HANDLERS; h++) {
		struct ls_obs_cell c = ls_obs_handler_sum(d, cpumask, h);

		s.hits += c.hits;
		s.ns += c.ns;
	}
	return s;
}
