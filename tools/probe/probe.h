/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs latency probe engine: an RC ping-pong (RDMA WRITE, SEND/RECV)
 * or RDMA READ between a prober and a responder, connected over the OOB
 * control channel (tools/probe/oob.h) or rdma_cm. `latsplit probe` and
 * `latsplit breakdown` both drive it through this API.
 *
 * Every sample keeps its start and end in CLOCK_MONOTONIC ns (the clock
 * the kernel backends stamp with). Memory is one fixed-size record per
 * sample, preallocated before the first iteration.
 *
 * Prober sample i: start = just before posting request i, end = when the
 * answer was seen (the last byte of the buffer changed, or the completion
 * was polled). Responder iteration i: start = when it saw request i,
 * end = just after it posted the answer. The responder ships its stamps
 * to the prober at the end of every run (LS_OOB_STAMPS).
 */
#ifndef LS_PROBE_H
#define LS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oob.h"
#include "util.h"

enum ls_probe_verb { LS_VERB_WRITE = 0, LS_VERB_SEND = 1, LS_VERB_READ = 2 };

/* What the HW completion timestamps are, when the device has them. */
enum ls_probe_hwclock {
	LS_HWCLOCK_NONE = 0,	/* device reports none (rxe) */
	LS_HWCLOCK_HCA,		/* free-running HCA clock, ticks / hca_core_clock kHz -> ns */
	LS_HWCLOCK_WALLCLOCK,	/* IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, ns */
};

#define LS_PROBE_MAX_SIZES	LS_OOB_MAX_SIZES
#define LS_PROBE_MAX_CAPACITY	((uint64_t)LS_OOB_MAX_COUNT)

struct ls_probe_run;

/*
 * What a responder lets a prober ask of it (every size, count and wait a
 * HELLO or RUN drives); checked before anything is allocated.
 */
struct ls_probe_limits {
	uint32_t max_size;		/* largest message, bytes (--max-size) */
	uint64_t max_samples;		/* samples kept per run (--max-samples) */
	uint64_t max_session_samples;	/* samples kept over a session's runs */
	uint64_t max_run_ns;		/* longest run and wait for END (--max-run-time) */
};

/* Defaults: sized for the lab and the tests (a prober's auto capacity fits). */
#define LS_PROBE_DEF_MAX_SIZE		(8u << 20)
#define LS_PROBE_DEF_MAX_SAMPLES	(1ull << 22)
#define LS_PROBE_DEF_MAX_SESSION	(1ull << 24)
#define LS_PROBE_DEF_MAX_RUN_NS		120000000000ull

struct ls_probe_opts {
	const char *device;		/* NULL: first device (or rdma_cm's choice) */
	unsigned int ib_port;		/* 1-based */
	int gid_index;			/* -1: auto, see ls_probe_gid_choose */
	uint32_t sizes[LS_PROBE_MAX_SIZES];	/* message sizes, one run each */
	unsigned int nsizes;
	uint64_t iters;			/* per run (0 when duration_ns is set) */
	uint64_t duration_ns;		/* per run (0 when iters is set) */
	/*
	 * Prober: samples kept per run with duration_ns (0: auto). Responder:
	 * the most samples per run a prober may ask it to keep (0: default).
	 */
	uint64_t capacity;
	unsigned int mtu;		/* bytes, 0 = port's active MTU */
	enum ls_probe_verb verb;
	bool events;			/* completion channel instead of busy poll */
	unsigned int qp_timeout;	/* IB local ACK timeout exponent (4.096 us * 2^t) */
	/*
	 * GRH traffic class of this side's packets (RoCEv2: the IP TOS byte,
	 * DSCP << 2 | ECN; e.g. 106 = DSCP 26 with ECT(0)). 0: the default.
	 */
	unsigned int tclass;
	int cpu;			/* pin to this CPU, -1 = no pinning */
	const char *peer;		/* prober: the responder's host; responder: NULL */
	/*
	 * Responder: the address to listen on. NULL: the device's own (from
	 * its GID, see ls_probe_gid_bind_addr); "any", "0.0.0.0" or "::": every
	 * address.
	 */
	const char *bind;
	const char *key_file;		/* shared key (auth.h), both sides; NULL: none */
	bool insecure;			/* responder: serve anyone, without a key */
	uint16_t port;			/* OOB TCP port (and rdma_cm port) */
	bool rdma_cm;			/* connect the QP with rdma_cm */
	uint64_t connect_timeout_ns;	/* connecting / handshake */
	uint64_t refused_retry_ns;	/* prober: a refused connect tried again this long (0: not) */
	uint64_t wait_timeout_ns;	/* one iteration's answer or completion */
	uint64_t listen_timeout_ns;	/* responder: wait for a prober, 0 = forever */
	bool serve_forever;		/* responder: keep serving after a session */
	bool quiet;			/* responder: no log lines on stderr */
	struct ls_probe_limits lim;	/* responder: what a prober may ask */

	/* Called about every 250 ms during a run (NULL: none). */
	void (*progress)(void *arg, const struct ls_probe_run *run, uint64_t done);
	/*
	 * Responder: called for each prober accepted, before its session
	 * (NULL: none). Non-zero refuses that session with err, as a failed one.
	 */
	int (*session_start)(void *arg, struct ls_err *err);
	/*
	 * Responder: called after each session whose session_start was called
	 * (NULL: none), with its result (0: completed).
	 */
	void (*session_end)(void *arg, int rc);
	/* Called right before the first iteration / after the last of each run. */
	void (*run_start)(void *arg, const struct ls_probe_run *run);
	void (*run_end)(void *arg, const struct ls_probe_run *run);
	/*
	 * Called on both sides after the last run's stamps were exchanged and
	 * before BYE, with the live control connection: exchange extra data with
	 * ls_oob_send_blob / ls_oob_recv_blob (breakdown ships the responder's
	 * kernel records this way). is_prober tells the side. Non-zero fails
	 * the session with err.
	 */
	int (*finish)(void *arg, struct ls_oob *oob, bool is_prober, struct ls_err *err);
	void *arg;
};

/* One timestamped sample (16 bytes). */
struct ls_probe_sample {
	uint64_t start_ns;
	uint64_t end_ns;
};

/* One run: one message size. */
struct ls_probe_run {
	uint32_t index;
	uint32_t size;
	uint64_t capacity;		/* records preallocated */
	uint64_t count;			/* records filled */
	struct ls_probe_sample *samples;	/* [capacity], this side's stamps */
	uint64_t *hw_end_ns;		/* [capacity] or NULL: HW completion ts that ended a sample */
	uint64_t peer_count;
	struct ls_probe_sample *peer;	/* prober: responder's {seen, answered}, its clock */
	uint64_t begin_ns, finish_ns;	/* run wall time, CLOCK_MONOTONIC */
	bool complete;			/* false when cut short by a fault */
	/*
	 * Where this run's packets sit in the two send queues' PSN spaces (read
	 * from the QP at the run's start, -1 when the device would not say):
	 * sample i's request carries PSN req_psn0 + i * pkts and, in a
	 * ping-pong, its answer ans_psn0 + i * pkts (mod 2^24). A wire's or a
	 * fault injector's per-packet log matches samples by them.
	 */
	int64_t req_psn0, ans_psn0;
	uint32_t pkts;			/* packets per message at the path MTU */
	uint32_t qpn, peer_qpn;		/* our QP and the responder's */
};

/* Facts about the local RDMA port, for headers and the breakdown. */
struct ls_probe_dev {
	char name[64];
	unsigned int port;
	int gid_index;
	char gid[64];			/* textual GID */
	char gid_type[32];		/* "RoCE v2", "IB/RoCE v1", ... */
	char netdev[32];		/* rxe0 -> eth0, "" if unknown */
	unsigned int active_mtu;	/* bytes */
	unsigned int max_mtu;
	char rate[64];			/* sysfs "10 Gb/sec (4X QDR)" */
	double link_gbps;		/* active speed x width, 0 if unknown */
	uint32_t max_msg_sz;
	uint64_t hca_core_clock_khz;
	enum ls_probe_hwclock hwclock;
};

struct ls_probe_result {
	bool is_prober;
	enum ls_probe_verb verb;
	bool events;
	bool rdma_cm;
	unsigned int mtu;		/* path MTU used, bytes */
	int cpu;			/* pinned CPU or -1 */
	int ran_on_cpu;			/* CPU at the start of the first run */
	const char *clock;		/* "CLOCK_MONOTONIC" */
	struct ls_probe_dev dev;
	unsigned int peer_active_mtu;
	char peer[80];
	unsigned int nruns;
	struct ls_probe_run runs[LS_PROBE_MAX_SIZES];
	char fault[512];		/* why the session ended early ("" = clean) */
};

/* Defaults: port 1, auto GID, 4 B, 1000 iters, WRITE, poll, timeout 14, 5 s / 10 s. */
void ls_probe_opts_init(struct ls_probe_opts *o);
/*
 * Validate the options alone (not the device, not the key file's content); 0
 * or an error. A responder needs key_file or insecure.
 */
int ls_probe_opts_check(const struct ls_probe_opts *o, bool is_prober, struct ls_err *err);
/*
 * Run a session as the prober against o->peer. On a fault after runs
 * started, the result keeps what was measured (run->complete false,
 * result->fault set) and the call fails with err.
 */
int ls_probe_run_client(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err);
/*
 * Serve prober sessions. Bad handshakes (garbage, truncated, wrong version)
 * are rejected, logged on stderr and the responder keeps listening. Returns
 * after the first completed session (unless serve_forever), with r holding
 * this side's stamps.
 */
int ls_probe_run_server(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err);
/* Whether a --bind value means every address ("any", "0.0.0.0", "::"). */
bool ls_probe_bind_any(const char *bind);
/*
 * The address a responder listens on by default, from the 16 raw bytes of
 * its GID: a.b.c.d of an IPv4-mapped ::ffff:a.b.c.d, or an IPv6 GID that is
 * a global unicast address; anything else fails (give --bind).
 */
int ls_probe_gid_bind_addr(const uint8_t gid[16], char *buf, size_t len, struct ls_err *err);
/* One entry of a port's GID table as the probe read it (ibv_query_gid, sysfs). */
struct ls_probe_gid {
	uint8_t raw[16];
	char type[32];			/* gid_attrs/types: "RoCE v2", "IB/RoCE v1"; "" unreadable */
	bool valid;			/* queried, and not all-zero */
};

/*
 * Choose the source GID index from a port's table of n entries. want >= 0:
 * that index, which must be valid. want < 0 (auto): the first RoCE v2
 * IPv4-mapped GID, else the first RoCE v2 one; when no entry's type is
 * readable, the first valid IPv4-mapped GID, else the first valid one. An
 * Ethernet port whose types are readable and hold no RoCE v2 GID is refused
 * (Soft-RoCE takes only v2, rxe_modify_qp fails with EINVAL on a v1 source
 * GID: give the index). *idx is the choice, -1 for an IB port without GIDs
 * (LID routing). 0, or an error naming the table.
 */
int ls_probe_gid_choose(const struct ls_probe_gid *tab, int n, int want, bool ethernet,
			int *idx, struct ls_err *err);
/* Free what a run_* call allocated (idempotent). */
void ls_probe_result_free(struct ls_probe_result *r);

/*
 * Responder: check a prober's HELLO against the limits (lim->max_samples
 * already resolved) and the device's largest message (0: unknown) before
 * anything is allocated. A refusal names the limit and its option.
 */
int ls_probe_check_hello(const struct ls_oob_hello *h, const struct ls_probe_limits *lim,
			 uint32_t dev_max_msg, struct ls_err *err);
/*
 * Responder: check a RUN after HELLO h, with kept samples already held by
 * the session's earlier runs; *cap gets the samples to allocate for it.
 */
int ls_probe_check_run(const struct ls_oob_run *rm, const struct ls_oob_hello *h,
		       const struct ls_probe_limits *lim, uint64_t kept, uint64_t *cap,
		       struct ls_err *err);
/* The longest a responder waits for a run's END: its length plus slack, capped. */
uint64_t ls_probe_run_wait_ns(const struct ls_oob_hello *h, uint64_t cap, uint64_t wait_ns,
			      const struct ls_probe_limits *lim);

/* One-way latency of a sample: RTT / 2, or READ's full time (as perftest). */
unsigned int ls_probe_rtt_divisor(enum ls_probe_verb v);
const char *ls_probe_verb_name(enum ls_probe_verb v);
int ls_probe_parse_verb(const char *s, enum ls_probe_verb *v, struct ls_err *err);

/* HCA clock ticks to ns with the clock in kHz (ibv_device_attr_ex.hca_core_clock). */
uint64_t ls_probe_hca_ticks_to_ns(uint64_t ticks, uint64_t khz);
/* Path MTU bytes <-> enum ibv_mtu (0 on an invalid value). */
int ls_probe_mtu_to_ibv(unsigned int bytes);
unsigned int ls_probe_ibv_to_mtu(int ibv_mtu);

/* Record a sample into a preallocated run (the hot-path bookkeeping). */
static inline void ls_probe_record(struct ls_probe_run *run, uint64_t start_ns,
				   uint64_t end_ns)
{
	struct ls_probe_sample *s = &run->samples[run->count++];

	s->start_ns = start_ns;
	s->end_ns = end_ns;
}

#endif /* LS_PROBE_H */
