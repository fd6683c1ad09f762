// SPDX-License-Identifier: GPL-2.0
/* Backend selection (auto / kmod / ebpf) and snapshot ownership. */
#include "backend.h"

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
		ls_errf(err, "no kernel backend usable: latsplit.ko is not loaded (%s missing) "
			"and the kernel has no BTF for the eBPF backend (/sys/kernel/btf/vmlinux missing)",
			LS_KMOD_DEBUGFS);
		return NULL;
	}
	if (!strcmp(name, "kmod"))
		return &ls_backend_kmod;
	if (!strcmp(name, "ebpf"))
		return &ls_backend_ebpf;
	ls_errf(err, "unknown backend '%s' (auto, kmod or ebpf)", name);
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
		return ls_errf(err, "backend %s is not available here", o->name);
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
