/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe engine inside (probe.h is its interface): one session's state
 * and the functions its files share. probe.c runs the sessions (prober and
 * responder); probe_dev.c finds the device, port and GID and reads the
 * port's counters for fault reports; probe_qp.c creates the verbs
 * resources and connects the QP (directly or with rdma_cm); probe_cq.c
 * posts work requests and waits for completions; probe_accept.c is the
 * responder's acceptor thread (one session at a time, others refused busy).
 */
#ifndef LS_PROBE_INT_H
#define LS_PROBE_INT_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "io.h"
#include "probe.h"

#define SQ_DEPTH	64
#define SIG_EVERY	16
#define RQ_DEPTH	64
#define MAX_INLINE	220
#define MAX_COUNTERS	32
#define SPIN_CHECK	1024		/* spins between clock / CQ / control checks */
#define PROGRESS_NS	250000000ull

#define WRID_SEND	(1ull << 62)
#define WRID_RECV	(2ull << 62)
#define WRID_KIND(x)	((x) & (3ull << 62))
#define WRID_IDX(x)	((x) & ~(3ull << 62))

/* A completion, whichever CQ flavour produced it. */
struct wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint64_t ts_ns;
};

/* One session's state (a prober, or a responder serving one prober). */
struct probe {
	const struct ls_probe_opts *o;
	struct ls_probe_result *r;
	bool prober;
	struct ls_oob oob;
	const struct ls_auth_key *key;	/* o->key_file's key, NULL without one */
	const char *bind;		/* responder: the address listened on, NULL: any */

	struct ibv_context *ctx;
	bool ctx_owned;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t half;			/* recv region [0, half), send region [half, 2 half) */
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	uint32_t max_inline;
	union ibv_gid gid;
	bool ethernet;
	uint16_t lid;
	uint32_t psn;

	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *cm_listen;
	struct rdma_cm_id *cm_id;

	struct ls_oob_qp remote;
	uint64_t sq_posted, sq_done;
	unsigned int unacked_events;
	bool armed;
	uint64_t rq_consumed;

	int ncounters;
	char counter_name[MAX_COUNTERS][48];
	uint64_t counter_base[MAX_COUNTERS];

	uint64_t next_progress;
	bool end_seen;			/* responder: END arrived during the run */
	struct ls_probe_opts eff;	/* responder: options as the prober set them */
	struct ls_oob_run end_msg;
	struct ls_probe_limits lim;	/* responder: what a prober may ask (resolved) */
	uint64_t kept;			/* responder: samples held by the session's runs */
	uint64_t run_wait_ns;		/* responder: longest wait for this run's END */
};

struct probe_acceptor;

/* probe_accept.c */
/*
 * Start the thread that owns the listening socket: it hands a connection
 * to the session loop when that is idle and refuses others with "busy".
 */
int probe_acceptor_start(struct probe_acceptor **ap, int lfd, bool quiet, struct ls_err *err);
/* Wait for the next connection handed over (timeout_ns 0: forever). */
int probe_acceptor_next(struct probe_acceptor *a, uint64_t timeout_ns, struct ls_oob *c,
			struct ls_err *err);
/* The session on the last connection handed over ended: take the next one. */
void probe_acceptor_idle(struct probe_acceptor *a);
/* Stop the thread and free it (NULL is fine). */
void probe_acceptor_stop(struct probe_acceptor *a);

/* probe_dev.c */
/* Open the device by name (or the first one), listing the existing ones on failure. */
int probe_open_device(struct probe *p, struct ls_err *err);
/* GID type of an index from sysfs ("RoCE v2", "IB/RoCE v1") or "". */
void probe_gid_type(const struct probe *p, int idx, char *buf, size_t len);
/* Fill device/port facts: MTUs, rate, max message, HW clock; pick the GID. */
int probe_query_port(struct probe *p, struct ls_err *err);
/* Snapshot the retry/duplicate counters of the port (rxe: hw_counters). */
void probe_counters_snapshot(struct probe *p);
/* Append the QP state and counter deltas to an error message. */
int probe_diagnose(struct probe *p, struct ls_err *err);

/* probe_qp.c */
/* PD, buffer, MR, CQ, QP for the largest size of the session. */
int probe_create_resources(struct probe *p, const uint32_t *sizes, unsigned int n,
			   struct ls_err *err);
/* Our endpoint for the peer. */
void probe_local_qp(const struct probe *p, struct ls_oob_qp *q);
/* INIT -> RTR -> RTS against the remote endpoint (verbs path). */
int probe_connect_qp(struct probe *p, unsigned int mtu, struct ls_err *err);
/* Tear down a session's verbs and rdma_cm resources (not the listen id). */
void probe_destroy_resources(struct probe *p);
/* Wait for one rdma_cm event of type want within timeout_ns. */
int probe_cm_wait(struct probe *p, enum rdma_cm_event_type want,
		  struct rdma_cm_event **ev, uint64_t timeout_ns, struct ls_err *err);
/* Responder: wait for the CONNECT_REQUEST of QP qpn, rejecting others. */
int probe_cm_wait_request(struct probe *p, uint32_t qpn, struct rdma_cm_event **ev,
			  uint64_t timeout_ns, struct ls_err *err);
/* Adopt the device rdma_cm chose; -d must agree. */
int probe_cm_adopt_device(struct probe *p, struct ibv_context *ctx, struct ls_err *err);
/* Connection parameters for rdma_connect / rdma_accept. */
void probe_cm_params(struct rdma_conn_param *cp);
/* Prober: resolve address and route, adopt the device. */
int probe_cm_client_resolve(struct probe *p, struct ls_err *err);
/* Responder: listen for rdma_cm connections on the control port. */
int probe_cm_server_listen(struct probe *p, struct ls_err *err);

/* probe_cq.c */
/*
 * Check the control connection during a run. Prober: anything readable is a
 * fault (peer's ERROR or EOF). Responder: END ends the run (returns 1).
 */
int probe_oob_check(struct probe *p, int timeout_ms, struct ls_err *err);
/*
 * Wait for a wanted completion: a receive (want_send false) or the send
 * with index want_idx. Busy-polls, or sleeps on the completion channel
 * with the control connection watched too. Returns 1 when the responder
 * saw END instead.
 */
int probe_wait_wc(struct probe *p, bool want_send, uint64_t want_idx, uint64_t deadline,
		  uint64_t iter, uint64_t *ts, struct ls_err *err);
/* Busy-wait for the last byte of the receive region to become tag. */
int probe_wait_byte(struct probe *p, volatile uint8_t *b, uint8_t tag, uint64_t deadline,
		    uint64_t iter, struct ls_err *err);
/* Make room in the send queue (reap signaled completions). */
int probe_sq_room(struct probe *p, uint64_t deadline, uint64_t iter, struct ls_err *err);
/* Post one request / answer; returns its send index. */
int probe_post(struct probe *p, enum ibv_wr_opcode op, uint32_t size, uint32_t imm,
	       bool force_signal, uint64_t *idx, struct ls_err *err);
/* Post n receives (full receive region each). */
int probe_post_recvs(struct probe *p, unsigned int n, struct ls_err *err);
/* True when this verb/mode answers through receive completions. */
bool probe_uses_recv(const struct probe *p);
/* The opcode of a request / answer. */
enum ibv_wr_opcode probe_request_op(const struct probe *p);
/* Call the progress hook at most every PROGRESS_NS. */
void probe_progress(struct probe *p, struct ls_probe_run *run, uint64_t now);

#endif /* LS_PROBE_INT_H */
