/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Congestion and error counters, snapshotted before and after a run:
 *
 *   port:NAME     /sys/class/infiniband/DEV/ports/N/counters/NAME
 *   hw:NAME       /sys/class/infiniband/DEV/ports/N/hw_counters/NAME
 *   ethtool:NAME  the netdev's NIC statistics (ETHTOOL_GSSET_INFO,
 *                 ETHTOOL_GSTRINGS, ETHTOOL_GSTATS ioctls)
 *   qdisc:KIND:HANDLE:FIELD  qdisc statistics over rtnetlink
 *                 (RTM_GETQDISC dump, TCA_STATS2/TCA_STATS_QUEUE):
 *                 drops, overlimits, requeues (counters), backlog and
 *                 qlen (gauges: the after value matters, not the delta)
 *   ipext:NAME    the host's IP ECN counters, /proc/net/netstat IpExt
 *                 InCEPkts (class ECN: CE-marked IP packets received),
 *                 InECT0Pkts, InECT1Pkts, InNoECTPkts (other). They count
 *                 every IP packet of the network namespace, RoCEv2 included:
 *                 where the RDMA device has no ECN counter (Soft-RoCE), the
 *                 receiving kernel's InCEPkts is the ECN evidence.
 *
 * Every counter is classified by its name (PFC pause, ECN, CNP,
 * out-of-sequence, retransmit, drops, queue). A counter that cannot be read
 * is kept with the reason; the rest of the snapshot goes on.
 */
#ifndef LS_COUNTERS_H
#define LS_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum ls_ctr_class {
	LS_CTR_OTHER,
	LS_CTR_PFC,		/* pause frames / PFC, incl. pause durations */
	LS_CTR_ECN,		/* ECN-marked packets */
	LS_CTR_CNP,		/* congestion notification packets */
	LS_CTR_OOS,		/* out-of-sequence, duplicates, sequence errors */
	LS_CTR_RETRANS,		/* retransmits, retries, timeouts, RNR */
	LS_CTR_DROP,		/* drops, discards, overruns */
	LS_CTR_QUEUE,		/* queue occupancy (gauge) */
	LS_NR_CTR_CLASSES,
};

struct ls_ctr {
	char name[112];
	enum ls_ctr_class cls;
	bool gauge;		/* a level, not a running count */
	bool ok;		/* read successfully */
	uint64_t value;
	char error[240];	/* why it could not be read */
};

struct ls_ctr_snap {
	struct ls_ctr *v;
	size_t n, cap;
	uint64_t t_ns;		/* CLOCK_MONOTONIC when taken */
};

/* Where to read from. */
struct ls_ctr_cfg {
	const char *root;	/* prefix for /sys paths ("" or NULL = real root) */
	const char *ibdev;	/* NULL: no RDMA counters */
	unsigned int port;
	const char *netdev;	/* NULL: no ethtool / qdisc counters */
	bool no_ethtool;	/* skip the ioctl (tests with a fake root) */
	bool no_qdisc;
	bool ipext;		/* read ROOT/proc/net/netstat IpExt ECN counters */
};

/* One counter over the run. */
struct ls_ctr_delta {
	char name[112];
	enum ls_ctr_class cls;
	bool gauge;
	bool ok;		/* readable before and after */
	uint64_t before, after;
	int64_t delta;
	char error[240];
};

struct ls_ctr_diff {
	struct ls_ctr_delta *v;
	size_t n;
	size_t unreadable;
};

/* Classify a counter name. */
enum ls_ctr_class ls_ctr_classify(const char *name);
const char *ls_ctr_class_name(enum ls_ctr_class c);
/* Read one sysfs counter file as a count (-1: unreadable or not a count, err says). */
int ls_ctr_read_file(const char *path, uint64_t *v, struct ls_err *err);
/* Take a snapshot; fails only on a bad configuration or no memory. */
int ls_ctr_snapshot(const struct ls_ctr_cfg *cfg, struct ls_ctr_snap *s,
		    struct ls_err *err);
void ls_ctr_snap_free(struct ls_ctr_snap *s);
/* Pair two snapshots by name (a counter missing on one side is unreadable). */
int ls_ctr_diff(const struct ls_ctr_snap *before, const struct ls_ctr_snap *after,
		struct ls_ctr_diff *d, struct ls_err *err);
void ls_ctr_diff_free(struct ls_ctr_diff *d);
/* True when the counter moved: a count changed, or a gauge is non-zero after. */
bool ls_ctr_moved(const struct ls_ctr_delta *c);
/* Add a value to a snapshot (the readers use it; public for tests and peers). */
int ls_ctr_add(struct ls_ctr_snap *s, const char *name, bool gauge, bool ok,
	       uint64_t value, const char *error);

#endif /* LS_COUNTERS_H */
