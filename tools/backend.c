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

/* Free a snapshot's histograms and clear it. */
void ls_snapshot_free(struct ls_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->hist);
	memset(snap, 0, sizeof(*snap));
}
