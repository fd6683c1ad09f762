// SPDX-License-Identifier: GPL-2.0
/* The verbs latency probe engine: RC ping-pong / READ between prober and responder. */
#include "probe.h"
#include "io.h"

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
};

/* Samples to preallocate per run. */
static uint64_t run_capacity(const struct ls_probe_opts *o)
{
	uint64_t c;

	if (o->iters)
		return o->iters;
	if (o->capacity)
		return o->capacity;
	c = o->duration_ns / 2000;	/* one sample per 2 us at most */
	if (c < 1024)
		c = 1024;
	if (c > (1ull << 22))
		c = 1ull << 22;
	return c;
}

/* Log a responder line on stderr unless quiet. */
static void note(const struct probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct probe *p, const char *fmt, ...)
{
	va_list ap;

	if (p->o->quiet)
		return;
	fputs("latsplit probe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- device, port, GID ---- */

/* sysfs path of a port attribute. */
static void port_path(char *buf, size_t len, const struct probe *p, const char *rest)
{
	snprintf(buf, len, "/sys/class/infiniband/%s/ports/%u/%s", p->r->dev.name,
		 p->o->ib_port, rest);
}

/* Open the device by name (or the first one), listing the existing ones on failure. */
static int open_device(struct probe *p, struct ls_err *err)
{
	struct ibv_device **list;
	char names[256] = "";
	int n = 0, found = -1;
	size_t off = 0;

	list = ibv_get_device_list(&n);
	if (!list && errno != ENOSYS)	/* ENOSYS: no RDMA subsystem at all */
		return ls_errnof(err, errno, "list RDMA devices");
	for (int i = 0; i < n; i++) {
		const char *nm = ibv_get_device_name(list[i]);

		if (off < sizeof(names))
			off += snprintf(names + off, sizeof(names) - off, "%s%s",
					i ? ", " : "", nm);
		if (found < 0 && (!p->o->device || !strcmp(nm, p->o->device)))
			found = i;
	}
	if (!list || !n) {
		if (list)
			ibv_free_device_list(list);
		return ls_errcf(err, LS_E_DEVICE, "no RDMA devices found (for Soft-RoCE: modprobe rdma_rxe; "
				"rdma link add rxe0 type rxe netdev IF)");
	}
	if (found < 0) {
		ibv_free_device_list(list);
		return ls_errf(err, "unknown RDMA device '%s' (devices: %s)", p->o->device,
			       names);
	}
	p->ctx = ibv_open_device(list[found]);
	if (!p->ctx) {
		int e = errno;

		ibv_free_device_list(list);
		return ls_errnof(err, e, "open RDMA device %s", names);
	}
	p->ctx_owned = true;
	ibv_free_device_list(list);
	return 0;
}

/* GID type of an index from sysfs ("RoCE v2", "IB/RoCE v1") or "". */
static void gid_type(const struct probe *p, int idx, char *buf, size_t len)
{
	char path[256], rel[64];

	snprintf(rel, sizeof(rel), "gid_attrs/types/%d", idx);
	port_path(path, sizeof(path), p, rel);
	if (ls_read_text(path, buf, len, NULL))
		buf[0] = '\0';
}

/* Query a GID; false for an error or an empty (all-zero) entry. */
static bool gid_valid(struct probe *p, int idx, union ibv_gid *g)
{
	static const uint8_t zero[16];

	if (ibv_query_gid(p->ctx, (uint8_t)p->o->ib_port, idx, g))
		return false;
	return memcmp(g->raw, zero, 16) != 0;
}

/* Pick and check the GID index: explicit, or the first RoCE v2 IPv4 one. */
static int pick_gid(struct probe *p, const struct ibv_port_attr *pa, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	int idx = p->o->gid_index, best = -1, v2 = -1;
	char list[256] = "", t[32];
	size_t off = 0;
	union ibv_gid g;

	for (int i = 0; i < pa->gid_tbl_len && i < 64; i++) {
		char s[INET6_ADDRSTRLEN];

		if (!gid_valid(p, i, &g))
			continue;
		gid_type(p, i, t, sizeof(t));
		inet_ntop(AF_INET6, g.raw, s, sizeof(s));
		if (off < sizeof(list))
			off += snprintf(list + off, sizeof(list) - off, "%s%d=%s%s%s%s",
					off ? ", " : "", i, s, *t ? " (" : "", t, *t ? ")" : "");
		if (!strcmp(t, "RoCE v2")) {
			if (v2 < 0)
				v2 = i;
			if (best < 0 && IN6_IS_ADDR_V4MAPPED((struct in6_addr *)g.raw))
				best = i;
		}
	}
	if (idx < 0)
		idx = best >= 0 ? best : v2 >= 0 ? v2 : 0;
	if (idx >= pa->gid_tbl_len || !gid_valid(p, idx, &g)) {
		if (!p->ethernet && p->o->gid_index < 0) {
			memset(&g, 0, sizeof(g));	/* IB without GIDs: LID routing */
		} else {
			return ls_errf(err, "GID index %d on %s port %u is %s (valid: %s)", idx,
				       d->name, p->o->ib_port,
				       idx >= pa->gid_tbl_len ? "beyond the GID table" : "empty",
				       *list ? list : "none");
		}
	}
	p->gid = g;
	d->gid_index = idx;
	inet_ntop(AF_INET6, g.raw, d->gid, sizeof(d->gid));
	gid_type(p, idx, d->gid_type, sizeof(d->gid_type));
	if (!*d->gid_type)
		snprintf(d->gid_type, sizeof(d->gid_type), "%s", p->ethernet ? "RoCE" : "IB");
	return 0;
}

/* Fill device/port facts: MTUs, rate, max message, HW clock; pick the GID. */
static int query_port(struct probe *p, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	char path[256], rel[64];
	int e;

	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(p->ctx->device));
	d->port = p->o->ib_port;
	e = ibv_query_port(p->ctx, (uint8_t)p->o->ib_port, &pa);
	if (e)
		return ls_errnof(err, e, "query %s port %u (does the port exist?)", d->name,
				 p->o->ib_port);
	if (pa.state != IBV_PORT_ACTIVE)
		return ls_errf(err, "%s port %u is not active (state %s)", d->name,
			       p->o->ib_port, ibv_port_state_str(pa.state));
	p->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	p->lid = pa.lid;
	d->active_mtu = ls_probe_ibv_to_mtu(pa.active_mtu);
	d->max_mtu = ls_probe_ibv_to_mtu(pa.max_mtu);
	d->max_msg_sz = pa.max_msg_sz;
	port_path(path, sizeof(path), p, "rate");
	if (!ls_read_text(path, d->rate, sizeof(d->rate), NULL))
		d->link_gbps = strtod(d->rate, NULL);
	memset(&dx, 0, sizeof(dx));
	if (!ibv_query_device_ex(p->ctx, NULL, &dx)) {
		d->hca_core_clock_khz = dx.hca_core_clock;
		if (dx.completion_timestamp_mask && dx.hca_core_clock)
			d->hwclock = LS_HWCLOCK_HCA;
	}
	if (pick_gid(p, &pa, err))
		return -1;
	snprintf(rel, sizeof(rel), "gid_attrs/ndevs/%d", d->gid_index);
	port_path(path, sizeof(path), p, rel);
	if (ls_read_text(path, d->netdev, sizeof(d->netdev), NULL))
		d->netdev[0] = '\0';
	return 0;
}

/* ---- counters for fault reports ---- */

/* True for the hw_counters that explain lost packets or completions. */
static bool counter_wanted(const char *n)
{
	static const char *const keys[] = { "retry", "duplicate", "out_of_seq", "rnr",
					    "seg_drop", "ack_deferred", "retrans", "timeout",
					    "local_ack", "implied_nak" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strstr(n, keys[i]))
			return true;
	return false;
}

/* Read one counter value; false if unreadable. */
static bool counter_read(const struct probe *p, const char *name, uint64_t *v)
{
	char path[256], rel[96], buf[32];

	snprintf(rel, sizeof(rel), "hw_counters/%s", name);
	port_path(path, sizeof(path), p, rel);
	if (ls_read_text(path, buf, sizeof(buf), NULL))
		return false;
	*v = strtoull(buf, NULL, 10);
	return true;
}

/* Snapshot the retry/duplicate counters of the port (rxe: hw_counters). */
static void counters_snapshot(struct probe *p)
{
	char path[256];
	struct dirent *de;
	DIR *dir;

	p->ncounters = 0;
	port_path(path, sizeof(path), p, "hw_counters");
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)) && p->ncounters < MAX_COUNTERS) {
		uint64_t v;

		if (de->d_name[0] == '.' || !counter_wanted(de->d_name) ||
		    strlen(de->d_name) >= sizeof(p->counter_name[0]))
			continue;
		if (!counter_read(p, de->d_name, &v))
			continue;
		snprintf(p->counter_name[p->ncounters], sizeof(p->counter_name[0]), "%s",
			 de->d_name);
		p->counter_base[p->ncounters++] = v;
	}
	closedir(dir);
}

/* Name of a QP state. */
static const char *qp_state_name(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE",
					     "ERR" };

	return (unsigned int)st < ARRAY_SIZE(names) ? names[st] : "?";
}

/* Append the QP state and counter deltas to an error message. */
static int diagnose(struct probe *p, struct ls_err *err)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	char extra[512];
	size_t off = 0, n;

	if (!err)
		return -1;
	if (p->qp && !ibv_query_qp(p->qp, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT, &ia))
		off += snprintf(extra + off, sizeof(extra) - off,
				"QP 0x%x state %s, timeout %u (%.3g s per try), retry_cnt %u",
				p->qp->qp_num, qp_state_name(qa.qp_state), qa.timeout,
				4.096e-6 * (double)(1ull << qa.timeout), qa.retry_cnt);
	if (p->ncounters) {
		off += snprintf(extra + off, sizeof(extra) - off,
				"%s%s port %u counters since start:", off ? "; " : "",
				p->r->dev.name, p->o->ib_port);
		for (int i = 0; i < p->ncounters && off < sizeof(extra); i++) {
			uint64_t v;

			if (!counter_read(p, p->counter_name[i], &v))
				continue;
			off += snprintf(extra + off, sizeof(extra) - off, " %s +%llu",
					p->counter_name[i],
					(unsigned long long)(v - p->counter_base[i]));
		}
	} else {
		off += snprintf(extra + off, sizeof(extra) - off,
				"%sno hw_counters for %s port %u", off ? "; " : "",
				p->r->dev.name, p->o->ib_port);
	}
	n = strlen(err->msg);
	if (off && n + 4 < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, " [%.*s]",
			 (int)(sizeof(err->msg) - n - 4), extra);
	return -1;
}

/* ---- resources ---- */

/* Create the CQ: extended with HW timestamps when offered, else plain. */
static int create_cq(struct probe *p, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	static const uint64_t ts_flags[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0,
	};

	if (p->o->events) {
		p->chan = ibv_create_comp_channel(p->ctx);
		if (!p->chan)
			return ls_errnof(err, errno, "create completion channel on %s", d->name);
		if (fcntl(p->chan->fd, F_SETFL, fcntl(p->chan->fd, F_GETFL) | O_NONBLOCK))
			return ls_errnof(err, errno, "completion channel: set non-blocking");
	}
	for (size_t i = d->hwclock == LS_HWCLOCK_NONE ? 2 : 0; i < ARRAY_SIZE(ts_flags); i++) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = SQ_DEPTH + RQ_DEPTH,
			.channel = p->chan,
			.wc_flags = IBV_WC_STANDARD_FLAGS | ts_flags[i],
		};

		p->cqx = ibv_create_cq_ex(p->ctx, &ca);
		if (p->cqx) {
			p->cq = ibv_cq_ex_to_cq(p->cqx);
			d->hwclock = i == 0 ? LS_HWCLOCK_WALLCLOCK :
				     i == 1 ? LS_HWCLOCK_HCA : LS_HWCLOCK_NONE;
			return 0;
		}
	}
	d->hwclock = LS_HWCLOCK_NONE;
	p->cq = ibv_create_cq(p->ctx, SQ_DEPTH + RQ_DEPTH, NULL, p->chan, 0);
	if (!p->cq)
		return ls_errnof(err, errno, "create CQ on %s", d->name);
	return 0;
}

/* QP init attributes shared by the verbs and rdma_cm paths. */
static void qp_init_attr(struct probe *p, struct ibv_qp_init_attr *qa, uint32_t inl)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = p->cq;
	qa->recv_cq = p->cq;
	qa->qp_type = IBV_QPT_RC;
	qa->sq_sig_all = 0;
	qa->cap.max_send_wr = SQ_DEPTH;
	qa->cap.max_recv_wr = RQ_DEPTH;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
	qa->cap.max_inline_data = inl;
}

/* Create the QP (verbs path, or on the rdma_cm id); inline data if possible. */
static int create_qp(struct probe *p, struct ls_err *err)
{
	struct ibv_qp_init_attr qa;
	int e = 0;

	for (uint32_t inl = MAX_INLINE;; inl = 0) {
		qp_init_attr(p, &qa, inl);
		if (p->cm_id) {
			if (!rdma_create_qp(p->cm_id, p->pd, &qa)) {
				p->qp = p->cm_id->qp;
				break;
			}
			e = errno;
		} else {
			p->qp = ibv_create_qp(p->pd, &qa);
			if (p->qp)
				break;
			e = errno;
		}
		if (!inl)
			return ls_errnof(err, e, "create RC QP on %s", p->r->dev.name);
	}
	p->max_inline = qa.cap.max_inline_data;
	return 0;
}

/* PD, buffer, MR, CQ, QP for the largest size of the session. */
static int create_resources(struct probe *p, const uint32_t *sizes, unsigned int n,
			    struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	uint32_t max = 1;
	long pg = sysconf(_SC_PAGESIZE);

	for (unsigned int i = 0; i < n; i++) {
		if (sizes[i] > d->max_msg_sz)
			return ls_errf(err, "size %u exceeds %s's max message size %u", sizes[i],
				       d->name, d->max_msg_sz);
		if (sizes[i] > max)
			max = sizes[i];
	}
	p->half = ((size_t)max + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	if (posix_memalign((void **)&p->buf, (size_t)pg, 2 * p->half))
		return ls_errnof(err, ENOMEM, "allocate %zu byte buffer", 2 * p->half);
	memset(p->buf, 0, 2 * p->half);
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return ls_errnof(err, errno, "allocate PD on %s", d->name);
	p->mr = ibv_reg_mr(p->pd, p->buf, 2 * p->half, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!p->mr)
		return ls_errnof(err, errno, "register %zu bytes on %s", 2 * p->half, d->name);
	if (create_cq(p, err) || create_qp(p, err))
		return -1;
	if (getrandom(&p->psn, sizeof(p->psn), 0) != sizeof(p->psn))
		p->psn = (uint32_t)ls_now_ns();
	p->psn &= 0xffffff;
	return 0;
}

/* Our endpoint for the peer. */
static void local_qp(const struct probe *p, struct ls_oob_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->qpn = p->qp->qp_num;
	q->psn = p->psn;
	q->lid = p->lid;
	memcpy(q->gid, p->gid.raw, 16);
	q->rkey = p->mr->rkey;
	q->addr = (uintptr_t)p->buf;
	q->buf_len = (uint32_t)p->half;
}

/* INIT -> RTR -> RTS against the remote endpoint (verbs path). */
static int connect_qp(struct probe *p, unsigned int mtu, struct ls_err *err)
{
	static const uint8_t zero_gid[16];
	struct ibv_qp_attr a;
	int e;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)p->o->ib_port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	if (e)
		return ls_errnof(err, e, "QP to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ls_probe_mtu_to_ibv(mtu);
	a.dest_qp_num = p->remote.qpn;
	a.rq_psn = p->remote.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)p->o->ib_port;
	a.ah_attr.dlid = p->remote.lid;
	if (p->ethernet || memcmp(p->remote.gid, zero_gid, 16)) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, p->remote.gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)p->r->dev.gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER);
	if (e)
		return ls_errnof(err, e, "QP to RTR (remote QPN 0x%x, MTU %u)", p->remote.qpn,
				 mtu);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)p->o->qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = p->psn;
	a.max_rd_atomic = 1;
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (e)
		return ls_errnof(err, e, "QP to RTS");
	return 0;
}

/*
 * Have the NIC driver reclaim the QP's sent packets before the QP goes. A
 * soft RoCE device (rxe) lets each sent packet hold its QP until the driver
 * frees the buffer, and virtio-net, among others, frees sent buffers
 * lazily, on a later transmit. Linux 6.1's rxe destroys a QP whose packets
 * are still out after 200 ms anyway (with a kernel warning), and the late
 * free then touches the freed QP (an oops in rxe_skb_tx_dtor, seen in the
 * lab). One empty datagram to the peer's discard port leaves through the
 * same netdev, and its transmit frees what the device has sent.
 */
static void nudge_netdev(const struct probe *p)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t none[16];
	const uint8_t *g = p->remote.gid;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	const struct sockaddr *sa = (const struct sockaddr *)&a6;
	socklen_t sl = sizeof(a6);
	int fd;

	if (!p->ethernet || !memcmp(g, none, 16))
		return;
	if (!memcmp(g, v4mapped, sizeof(v4mapped))) {
		memcpy(&a4.sin_addr, g + 12, 4);
		sa = (const struct sockaddr *)&a4;
		sl = sizeof(a4);
	} else {
		memcpy(&a6.sin6_addr, g, 16);
		if (g[0] == 0xfe && (g[1] & 0xc0) == 0x80 && p->r)
			a6.sin6_scope_id = if_nametoindex(p->r->dev.netdev);
	}
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* Best effort: a failure leaves the old behaviour. */
	(void)!sendto(fd, "", 0, MSG_DONTWAIT, sa, sl);
	close(fd);
}

/*
 * Move the QP to ERR and let the device flush its queues before the QP is
 * destroyed: a soft device (rxe) waits at destroy for in-flight work still
 * holding the QP, and warns in the kernel log when that takes long.
 */
static void drain_qp(struct probe *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	const uint64_t end = ls_now_ns() + 100000000ull;
	struct ibv_wc wc[16];
	unsigned int idle = 0;

	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE) || !p->cq)
		return;
	while (idle < 3 && ls_now_ns() < end) {
		int n = ibv_poll_cq(p->cq, ARRAY_SIZE(wc), wc);
		struct timespec ts = { 0, 1000000 };

		if (n < 0)
			return;
		idle = n ? 0 : idle + 1;
		if (!n)
			nanosleep(&ts, NULL);
	}
	nudge_netdev(p);
}

/* Tear down a session's verbs and rdma_cm resources (not the listen id). */
static void destroy_resources(struct probe *p)
{
	if (p->qp) {
		drain_qp(p);
		if (p->cm_id)
			rdma_destroy_qp(p->cm_id);
		else
			ibv_destroy_qp(p->qp);
		p->qp = NULL;
	}
	if (p->cq) {
		if (p->unacked_events)
			ibv_ack_cq_events(p->cq, p->unacked_events);
		p->unacked_events = 0;
		ibv_destroy_cq(p->cq);
		p->cq = NULL;
		p->cqx = NULL;
	}
	if (p->chan) {
		ibv_destroy_comp_channel(p->chan);
		p->chan = NULL;
	}
	if (p->mr) {
		ibv_dereg_mr(p->mr);
		p->mr = NULL;
	}
	if (p->pd) {
		ibv_dealloc_pd(p->pd);
		p->pd = NULL;
	}
	free(p->buf);
	p->buf = NULL;
	if (p->cm_id) {
		rdma_disconnect(p->cm_id);
		rdma_destroy_id(p->cm_id);
		p->cm_id = NULL;
		if (!p->ctx_owned)
			p->ctx = NULL;
	}
	p->sq_posted = p->sq_done = p->rq_consumed = 0;
	p->armed = false;
}

/* ---- rdma_cm ---- */

/* Wait for one rdma_cm event of type want within timeout_ns. */
static int cm_wait(struct probe *p, enum rdma_cm_event_type want,
		   struct rdma_cm_event **ev, uint64_t timeout_ns, struct ls_err *err)
{
	struct pollfd pfd = { .fd = p->cm_ch->fd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, (int)(timeout_ns / 1000000));
	if (r < 0)
		return ls_errnof(err, errno, "rdma_cm: poll");
	if (!r)
		return ls_errf(err, "rdma_cm: no %s event within %.1f s", rdma_event_str(want),
			       (double)timeout_ns / 1e9);
	if (rdma_get_cm_event(p->cm_ch, ev))
		return ls_errnof(err, errno, "rdma_cm: get event");
	if ((*ev)->event != want) {
		ls_errf(err, "rdma_cm: %s (status %d) while waiting for %s",
			rdma_event_str((*ev)->event), (*ev)->status, rdma_event_str(want));
		rdma_ack_cm_event(*ev);
		return -1;
	}
	return 0;
}

/* Create the rdma_cm event channel, non-blocking. */
static int cm_channel(struct probe *p, struct ls_err *err)
{
	p->cm_ch = rdma_create_event_channel();
	if (!p->cm_ch)
		return ls_errnof(err, errno, "rdma_cm: create event channel");
	fcntl(p->cm_ch->fd, F_SETFL, fcntl(p->cm_ch->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Resolve an address for rdma_cm (host, port). */
static int cm_addr(const char *host, uint16_t port, bool passive, struct sockaddr_storage *ss,
		   struct ls_err *err)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	struct addrinfo *res;
	char pbuf[8];
	int r;

	snprintf(pbuf, sizeof(pbuf), "%u", port);
	r = getaddrinfo(host && *host ? host : NULL, pbuf, &hints, &res);
	if (r)
		return ls_errf(err, "rdma_cm: resolve %s: %s", host ? host : "*", gai_strerror(r));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* Adopt the device rdma_cm chose; -d must agree. */
static int cm_adopt_device(struct probe *p, struct ibv_context *ctx, struct ls_err *err)
{
	const char *nm = ibv_get_device_name(ctx->device);

	if (p->o->device && strcmp(nm, p->o->device))
		return ls_errf(err, "rdma_cm routes to %s, not to -d %s", nm, p->o->device);
	if (p->ctx_owned && p->ctx != ctx) {
		ibv_close_device(p->ctx);
		p->ctx_owned = false;
	}
	p->ctx = ctx;
	return query_port(p, err);
}

/* Connection parameters for rdma_connect / rdma_accept. */
static void cm_params(struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* Prober: resolve address and route, adopt the device. */
static int cm_client_resolve(struct probe *p, struct ls_err *err)
{
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;
	uint8_t to = (uint8_t)p->o->qp_timeout;
	int ms = (int)(p->o->connect_timeout_ns / 1000000);

	if (cm_channel(p, err) || cm_addr(p->o->peer, p->o->port, false, &ss, err))
		return -1;
	if (rdma_create_id(p->cm_ch, &p->cm_id, p, RDMA_PS_TCP))
		return ls_errnof(err, errno, "rdma_cm: create id");
	if (rdma_resolve_addr(p->cm_id, NULL, (struct sockaddr *)&ss, ms))
		return ls_errnof(err, errno, "rdma_cm: resolve address %s", p->o->peer);
	if (cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, &ev, p->o->connect_timeout_ns, err))
		return ls_err_wrap(err, "rdma_cm: resolve %s", p->o->peer);
	rdma_ack_cm_event(ev);
	rdma_set_option(p->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to, sizeof(to));
	if (rdma_resolve_route(p->cm_id, ms))
		return ls_errnof(err, errno, "rdma_cm: resolve route to %s", p->o->peer);
	if (cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev, p->o->connect_timeout_ns, err))
		return -1;
	rdma_ack_cm_event(ev);
	return cm_adopt_device(p, p->cm_id->verbs, err);
}

/* Responder: listen for rdma_cm connections on the control port. */
static int cm_server_listen(struct probe *p, struct ls_err *err)
{
	struct sockaddr_storage ss;

	if (cm_channel(p, err) || cm_addr(p->o->peer, p->o->port, true, &ss, err))
		return -1;
	if (rdma_create_id(p->cm_ch, &p->cm_listen, p, RDMA_PS_TCP))
		return ls_errnof(err, errno, "rdma_cm: create id");
	if (rdma_bind_addr(p->cm_listen, (struct sockaddr *)&ss))
		return ls_errnof(err, errno, "rdma_cm: bind port %u", p->o->port);
	if (rdma_listen(p->cm_listen, 4))
		return ls_errnof(err, errno, "rdma_cm: listen");
	return 0;
}

/* ---- completions ---- */

/* Poll one completion: 1 found, 0 none, -1 poll failure. */
static int poll1(struct probe *p, struct wc *w, struct ls_err *err)
{
	if (p->cqx) {
		struct ibv_poll_cq_attr pa = { 0 };
		int e = ibv_start_poll(p->cqx, &pa);

		if (e == ENOENT)
			return 0;
		if (e)
			return ls_errnof(err, e, "poll CQ");
		w->wr_id = p->cqx->wr_id;
		w->status = p->cqx->status;
		w->ts_ns = 0;
		if (w->status == IBV_WC_SUCCESS) {
			w->opcode = ibv_wc_read_opcode(p->cqx);
			if (p->r->dev.hwclock == LS_HWCLOCK_WALLCLOCK)
				w->ts_ns = ibv_wc_read_completion_wallclock_ns(p->cqx);
			else if (p->r->dev.hwclock == LS_HWCLOCK_HCA)
				w->ts_ns = ls_probe_hca_ticks_to_ns(
					ibv_wc_read_completion_ts(p->cqx),
					p->r->dev.hca_core_clock_khz);
		} else {
			w->vendor_err = ibv_wc_read_vendor_err(p->cqx);
		}
		ibv_end_poll(p->cqx);
		return 1;
	} else {
		struct ibv_wc wc;
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n < 0)
			return ls_errf(err, "poll CQ failed (%d)", n);
		if (!n)
			return 0;
		w->wr_id = wc.wr_id;
		w->status = wc.status;
		w->opcode = wc.opcode;
		w->vendor_err = wc.vendor_err;
		w->ts_ns = 0;
		return 1;
	}
}

/* Account a completion; an error status fails with the QP diagnosis. */
static int handle_wc(struct probe *p, const struct wc *w, struct ls_err *err)
{
	if (w->status != IBV_WC_SUCCESS) {
		ls_errf(err, "%s completion failed: %s (status %d, vendor error 0x%x)",
			WRID_KIND(w->wr_id) == WRID_RECV ? "receive" : "send",
			ibv_wc_status_str(w->status), w->status, w->vendor_err);
		return diagnose(p, err);
	}
	if (WRID_KIND(w->wr_id) == WRID_SEND)
		p->sq_done = WRID_IDX(w->wr_id) + 1;
	else
		p->rq_consumed++;
	return 0;
}

/*
 * Check the control connection during a run. Prober: anything readable is a
 * fault (peer's ERROR or EOF). Responder: END ends the run (returns 1).
 */
static int oob_check(struct probe *p, int timeout_ms, struct ls_err *err)
{
	struct pollfd pfd = { .fd = p->oob.fd, .events = POLLIN };
	struct ls_oob_msg m;
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r <= 0)
		return 0;
	if (p->prober) {
		if (ls_oob_expect(&p->oob, LS_OOB_BYE, &m, LS_OOB_ERROR_MAX_LEN, 1000000000ull,
				  err))
			return ls_err_wrap(err, "responder gone mid-run");
		free(m.payload);
		return ls_errf(err, "responder ended the session mid-run");
	}
	if (ls_oob_expect(&p->oob, LS_OOB_END, &m, LS_OOB_RUN_LEN, 1000000000ull, err))
		return ls_err_wrap(err, "prober gone mid-run");
	r = ls_oob_run_parse(m.payload, m.hdr.length, &p->end_msg, err);
	free(m.payload);
	if (r)
		return -1;
	p->end_seen = true;
	return 1;
}

/* Fail for a wait that ran out of time. */
static int timed_out(struct probe *p, const char *what, uint64_t iter, struct ls_err *err)
{
	ls_errf(err, "no %s for iteration %llu within %.3g s (lost completion or peer gone)",
		what, (unsigned long long)iter, (double)p->o->wait_timeout_ns / 1e9);
	return diagnose(p, err);
}

/*
 * Wait for a wanted completion: a receive (want_send false) or the send
 * with index want_idx. Busy-polls, or sleeps on the completion channel
 * with the control connection watched too. Returns 1 when the responder
 * saw END instead.
 */
static int wait_wc(struct probe *p, bool want_send, uint64_t want_idx, uint64_t deadline,
		   uint64_t iter, uint64_t *ts, struct ls_err *err)
{
	unsigned int spins = 0;
	struct wc w;
	int r;

	for (;;) {
		r = poll1(p, &w, err);
		if (r < 0)
			return -1;
		if (r) {
			if (handle_wc(p, &w, err))
				return -1;
			if (want_send ? (WRID_KIND(w.wr_id) == WRID_SEND &&
					 WRID_IDX(w.wr_id) == want_idx)
				      : WRID_KIND(w.wr_id) == WRID_RECV) {
				*ts = w.ts_ns;
				return 0;
			}
			continue;
		}
		if (!p->o->events) {
			if (++spins % SPIN_CHECK)
				continue;
			if (ls_now_ns() > deadline)
				return timed_out(p, "completion", iter, err);
			r = oob_check(p, 0, err);
			if (r)
				return r;
			continue;
		}
		if (!p->armed) {
			if (ibv_req_notify_cq(p->cq, 0))
				return ls_errnof(err, errno, "arm CQ");
			p->armed = true;
			continue;	/* poll once more: a completion may have raced the arming */
		}
		{
			struct pollfd pfd[2] = {
				{ .fd = p->chan->fd, .events = POLLIN },
				{ .fd = p->oob.fd, .events = POLLIN },
			};
			uint64_t now = ls_now_ns();
			struct ibv_cq *ecq;
			void *ectx;

			if (now > deadline)
				return timed_out(p, "completion event", iter, err);
			r = poll(pfd, 2, (deadline - now) / 1000000 >= 1000 ? 1000 :
				 (int)((deadline - now) / 1000000 + 1));
			if (r < 0 && errno != EINTR)
				return ls_errnof(err, errno, "wait for completion event");
			if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
				r = oob_check(p, 0, err);
				if (r)
					return r;
			}
			if (r > 0 && (pfd[0].revents & POLLIN) &&
			    !ibv_get_cq_event(p->chan, &ecq, &ectx)) {
				p->armed = false;
				if (++p->unacked_events >= 64) {
					ibv_ack_cq_events(p->cq, p->unacked_events);
					p->unacked_events = 0;
				}
			}
		}
	}
}

/* Busy-wait for the last byte of the receive region to become tag. */
static int wait_byte(struct probe *p, volatile uint8_t *b, uint8_t tag, uint64_t deadline,
		     uint64_t iter, struct ls_err *err)
{
	unsigned int spins = 0;
	struct wc w;
	int r;

	while (*b != tag) {
		if (++spins % SPIN_CHECK)
			continue;
		r = poll1(p, &w, err);	/* reap sends, catch error completions */
		if (r < 0 || (r > 0 && handle_wc(p, &w, err)))
			return -1;
		if (ls_now_ns() > deadline)
			return timed_out(p, "answer", iter, err);
		r = oob_check(p, 0, err);
		if (r)
			return r;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

/* Make room in the send queue (reap signaled completions). */
static int sq_room(struct probe *p, uint64_t deadline, uint64_t iter, struct ls_err *err)
{
	uint64_t ts;

	while (p->sq_posted - p->sq_done >= SQ_DEPTH - 1) {
		/* the last signaled WR before the queue filled up */
		uint64_t want = (p->sq_done / SIG_EVERY + 1) * SIG_EVERY - 1;
		int r = wait_wc(p, true, want, deadline, iter, &ts, err);

		if (r)
			return r < 0 ? -1 : ls_errf(err, "END while the send queue was full");
	}
	return 0;
}

/* Post one request / answer; returns its send index. */
static int post(struct probe *p, enum ibv_wr_opcode op, uint32_t size, uint32_t imm,
		bool force_signal, uint64_t *idx, struct ls_err *err)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (op == IBV_WR_RDMA_READ ? 0 : p->half)),
		.length = size,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
	}, *bad;
	uint64_t i = p->sq_posted;
	int e;

	wr.wr_id = WRID_SEND | i;
	if (force_signal || i % SIG_EVERY == SIG_EVERY - 1)
		wr.send_flags = IBV_SEND_SIGNALED;
	if (op != IBV_WR_RDMA_READ && size <= p->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm);
	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = p->remote.addr;
		wr.wr.rdma.rkey = p->remote.rkey;
	}
	e = ibv_post_send(p->qp, &wr, &bad);
	if (e)
		return ls_errnof(err, e, "post %s of %u bytes", ls_probe_verb_name(p->r->verb),
				 size);
	p->sq_posted++;
	*idx = i;
	return 0;
}

/* Post n receives (full receive region each). */
static int post_recvs(struct probe *p, unsigned int n, struct ls_err *err)
{
	for (unsigned int k = 0; k < n; k++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)p->buf, .length = (uint32_t)p->half,
			.lkey = p->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = WRID_RECV, .sg_list = &sge, .num_sge = 1 },
				   *bad;
		int e = ibv_post_recv(p->qp, &wr, &bad);

		if (e)
			return ls_errnof(err, e, "post receive");
	}
	return 0;
}

/* True when this verb/mode answers through receive completions. */
static bool uses_recv(const struct probe *p)
{
	return p->r->verb == LS_VERB_SEND || (p->r->verb == LS_VERB_WRITE && p->o->events);
}

/* The opcode of a request / answer. */
static enum ibv_wr_opcode request_op(const struct probe *p)
{
	switch (p->r->verb) {
	case LS_VERB_SEND:	return IBV_WR_SEND;
	case LS_VERB_READ:	return IBV_WR_RDMA_READ;
	default:		return p->o->events ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	}
}

/* Call the progress hook at most every PROGRESS_NS. */
static void progress(struct probe *p, struct ls_probe_run *run, uint64_t now)
{
	if (!p->o->progress || now < p->next_progress)
		return;
	p->next_progress = now + PROGRESS_NS;
	p->o->progress(p->o->arg, run, run->count);
}

/* ---- runs ---- */

/*
 * Touch every page so the records are resident before the run (a plain
 * memset(0) after malloc may be turned into calloc's lazy zero pages).
 */
static void prefault(void *p, size_t len)
{
	volatile uint8_t *b = p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += pg)
		b[off] = 0;
	if (len)
		b[len - 1] = 0;
}

/* Allocate and prefault a run's records (no page faults during the run). */
static int run_alloc(struct probe *p, struct ls_probe_run *run, uint32_t index, uint32_t size,
		     uint64_t cap, bool hw, struct ls_err *err)
{
	memset(run, 0, sizeof(*run));
	run->index = index;
	run->size = size;
	run->capacity = cap;
	run->req_psn0 = run->ans_psn0 = -1;
	run->samples = malloc(cap * sizeof(*run->samples));
	if (!run->samples)
		return ls_errnof(err, ENOMEM, "allocate %llu samples", (unsigned long long)cap);
	memset(run->samples, 0, cap * sizeof(*run->samples));
	prefault(run->samples, cap * sizeof(*run->samples));
	if (hw) {
		run->hw_end_ns = calloc(cap, sizeof(uint64_t));
		if (!run->hw_end_ns)
			return ls_errnof(err, ENOMEM, "allocate %llu HW stamps",
					 (unsigned long long)cap);
		prefault(run->hw_end_ns, cap * sizeof(uint64_t));
	}
	return 0;
}

/* Prober: the timed loop of one run. */
static int client_loop(struct probe *p, struct ls_probe_run *run, struct ls_err *err)
{
	const uint32_t size = run->size;
	volatile uint8_t *last = p->buf + size - 1;
	uint8_t *slast = p->buf + p->half + size - 1;
	const enum ibv_wr_opcode op = request_op(p);
	const bool poll_byte = p->r->verb == LS_VERB_WRITE && !p->o->events;
	const bool recv = uses_recv(p), read = p->r->verb == LS_VERB_READ;
	const uint64_t stop = p->o->duration_ns ? ls_now_ns() + p->o->duration_ns : UINT64_MAX;
	const uint64_t tmo = p->o->wait_timeout_ns;
	uint64_t i, idx, ts = 0, t0, t1;
	int r;

	for (i = 1; run->count < run->capacity; i++) {
		uint8_t tag = (uint8_t)i;

		t0 = ls_now_ns();
		if (sq_room(p, t0 + tmo, i, err))
			return -1;
		*slast = tag;
		if (post(p, op, size, (uint32_t)i, read, &idx, err))
			return -1;
		if (poll_byte)
			r = wait_byte(p, last, tag, t0 + tmo, i, err);
		else
			r = wait_wc(p, read, idx, t0 + tmo, i, &ts, err);
		if (r)
			return -1;
		t1 = ls_now_ns();
		if (run->hw_end_ns)
			run->hw_end_ns[run->count] = ts;
		ls_probe_record(run, t0, t1);
		if (recv && post_recvs(p, 1, err))
			return -1;
		if (!(i & 255))
			progress(p, run, t1);
		if (t1 >= stop)
			break;
	}
	return 0;
}

/* Responder: answer until the prober's END; READ has nothing to answer. */
static int server_loop(struct probe *p, struct ls_probe_run *run, struct ls_err *err)
{
	const uint32_t size = run->size;
	volatile uint8_t *last = p->buf + size - 1;
	uint8_t *slast = p->buf + p->half + size - 1;
	const enum ibv_wr_opcode op = request_op(p);
	const bool poll_byte = p->r->verb == LS_VERB_WRITE && !p->o->events;
	const uint64_t tmo = p->o->wait_timeout_ns;
	uint64_t i, idx, ts = 0, seen, ans = ls_now_ns();
	int r;

	if (p->r->verb == LS_VERB_READ) {
		/* Passive side: the prober's END comes after at most capacity waits. */
		uint64_t limit = run->capacity * tmo + tmo;

		if (p->o->duration_ns)
			limit = p->o->duration_ns + 2 * tmo;
		r = oob_check(p, (int)(limit / 1000000 > INT32_MAX ? INT32_MAX : limit / 1000000),
			      err);
		if (r < 0)
			return -1;
		if (!r)
			return ls_errf(err, "no END from the prober within %.3g s",
				       (double)limit / 1e9);
		return 0;
	}
	for (i = 1;; i++) {
		uint8_t tag = (uint8_t)i;

		if (poll_byte)
			r = wait_byte(p, last, tag, ans + tmo, i, err);
		else
			r = wait_wc(p, false, 0, ans + tmo, i, &ts, err);
		if (r)
			return r > 0 ? 0 : -1;
		seen = ls_now_ns();
		if (sq_room(p, seen + tmo, i, err))
			return -1;
		*slast = tag;
		/*
		 * Stamped before the doorbell: a soft device (rxe) may put the
		 * answer on the wire and the prober may see it before post()
		 * returns, so only this stamp is sure to precede its arrival
		 * (seen -> answered lies inside the prober's round trip).
		 */
		ans = ls_now_ns();
		if (post(p, op, size, (uint32_t)i, false, &idx, err))
			return -1;
		if (run->count < run->capacity) {
			if (run->hw_end_ns)
				run->hw_end_ns[run->count] = ts;
			ls_probe_record(run, seen, ans);
		}
		if (!poll_byte && post_recvs(p, 1, err))
			return -1;
	}
}

/* The PSNs this run starts at and its packets per message (see ls_probe_run). */
static void run_psns(struct probe *p, struct ls_probe_run *run)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;
	unsigned int mtu = p->r->mtu ? p->r->mtu : 1024;

	run->qpn = p->qp->qp_num;
	run->peer_qpn = p->remote.qpn;
	run->pkts = run->size ? (run->size + mtu - 1) / mtu : 1;
	run->req_psn0 = run->ans_psn0 = -1;
	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(p->qp, &a, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &qi))
		return;
	run->req_psn0 = a.sq_psn & 0xffffff;
	run->ans_psn0 = a.rq_psn & 0xffffff;
}

/* Reset the receive/send regions between runs. */
static void clear_buffers(struct probe *p)
{
	memset(p->buf, 0, 2 * p->half);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Whether HW stamps can end a sample for this verb/mode. */
static bool hw_stamps(const struct probe *p)
{
	return p->r->dev.hwclock != LS_HWCLOCK_NONE &&
	       !(p->r->verb == LS_VERB_WRITE && !p->o->events);
}

/* Pin the calling thread to opts->cpu. */
static int pin_cpu(const struct ls_probe_opts *o, struct ls_probe_result *r, struct ls_err *err)
{
	cpu_set_t set;

	r->cpu = o->cpu;
	if (o->cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return ls_errnof(err, errno, "pin to CPU %d", o->cpu);
	return 0;
}

/* Prober: run every size of the session. */
static int client_runs(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t buf[LS_OOB_RUN_LEN];
	uint64_t cap = run_capacity(o);

	for (unsigned int k = 0; k < o->nsizes; k++) {
		struct ls_probe_run *run = &r->runs[k];
		struct ls_oob_run rm = { .index = k, .size = o->sizes[k], .count = cap };
		struct ls_oob_msg m;
		uint64_t n = 0;
		int rc;

		if (run_alloc(p, run, k, o->sizes[k], cap, hw_stamps(p), err))
			return -1;
		r->nruns = k + 1;
		clear_buffers(p);
		if (ls_oob_send(&p->oob, LS_OOB_RUN, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err) ||
		    ls_oob_expect(&p->oob, LS_OOB_READY, &m, LS_OOB_RUN_LEN, o->wait_timeout_ns,
				  err))
			return -1;
		free(m.payload);
		if (k == 0)
			r->ran_on_cpu = sched_getcpu();
		run_psns(p, run);
		if (o->run_start)
			o->run_start(o->arg, run);
		run->begin_ns = ls_now_ns();
		p->next_progress = run->begin_ns + PROGRESS_NS;
		rc = client_loop(p, run, err);
		run->finish_ns = ls_now_ns();
		if (o->run_end)
			o->run_end(o->arg, run);
		if (rc)
			return -1;
		rm.count = run->count;
		if (ls_oob_send(&p->oob, LS_OOB_END, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err) ||
		    ls_oob_expect(&p->oob, LS_OOB_STAMPS, &m, (uint32_t)ls_oob_stamps_len(cap),
				  o->wait_timeout_ns, err))
			return -1;
		run->peer = malloc(cap * sizeof(*run->peer));
		if (!run->peer) {
			free(m.payload);
			return ls_errnof(err, ENOMEM, "allocate responder stamps");
		}
		rc = ls_oob_stamps_parse(m.payload, m.hdr.length, cap, (uint64_t *)run->peer, &n,
					 err);
		free(m.payload);
		if (rc)
			return ls_err_wrap(err, "responder stamps");
		run->peer_count = n;
		run->complete = true;
	}
	return 0;
}

/* Responder: serve RUN ... END cycles until BYE. */
static int server_runs(struct probe *p, const struct ls_oob_hello *h, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t buf[LS_OOB_RUN_LEN];

	for (;;) {
		struct ls_oob_msg m;
		struct ls_oob_run rm;
		struct ls_probe_run *run;
		uint8_t *sp;
		size_t sl;
		int rc;

		if (ls_oob_recv(&p->oob, &m, LS_OOB_RUN_LEN, o->wait_timeout_ns, err))
			return ls_err_wrap(err, "waiting for RUN or BYE");
		if (m.hdr.type == LS_OOB_BYE) {
			free(m.payload);
			return 0;
		}
		if (m.hdr.type != LS_OOB_RUN) {
			free(m.payload);
			return ls_errf(err, "protocol error: %s where RUN or BYE was expected",
				       ls_oob_type_name(m.hdr.type));
		}
		rc = ls_oob_run_parse(m.payload, m.hdr.length, &rm, err);
		free(m.payload);
		if (rc)
			return -1;
		if (rm.index != r->nruns || rm.index >= h->nsizes || rm.size != h->sizes[rm.index])
			return ls_errf(err, "protocol error: RUN %u of size %u does not follow HELLO",
				       rm.index, rm.size);
		run = &r->runs[rm.index];
		if (run_alloc(p, run, rm.index, rm.size, h->capacity, hw_stamps(p), err))
			return -1;
		r->nruns++;
		clear_buffers(p);
		if (ls_oob_send(&p->oob, LS_OOB_READY, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err))
			return -1;
		if (rm.index == 0)
			r->ran_on_cpu = sched_getcpu();
		if (o->run_start)
			o->run_start(o->arg, run);
		p->end_seen = false;
		run->begin_ns = ls_now_ns();
		rc = server_loop(p, run, err);
		run->finish_ns = ls_now_ns();
		if (o->run_end)
			o->run_end(o->arg, run);
		if (rc)
			return -1;
		if (!p->end_seen)
			return ls_errf(err, "run %u ended without END", rm.index);
		run->complete = true;
		sl = ls_oob_stamps_len(run->count);
		sp = malloc(sl);
		if (!sp)
			return ls_errnof(err, ENOMEM, "encode %llu stamps",
					 (unsigned long long)run->count);
		ls_oob_stamps_encode((const uint64_t *)run->samples, run->count, sp);
		rc = ls_oob_send(&p->oob, LS_OOB_STAMPS, 0, sp, sl, o->wait_timeout_ns, err);
		free(sp);
		if (rc)
			return -1;
	}
}

/* Fill the result header both sides share. */
static void result_init(struct ls_probe_result *r, const struct ls_probe_opts *o, bool prober)
{
	memset(r, 0, sizeof(*r));
	r->is_prober = prober;
	r->verb = o->verb;
	r->events = o->events;
	r->rdma_cm = o->rdma_cm;
	r->cpu = o->cpu;
	r->ran_on_cpu = -1;
	r->clock = "CLOCK_MONOTONIC";
}

/* Path MTU both sides agree on: requested (or active) capped by both ports. */
static unsigned int agree_mtu(unsigned int want, unsigned int a, unsigned int b)
{
	unsigned int m = want ? want : a;

	if (m > a)
		m = a;
	if (m > b)
		m = b;
	return m;
}

/* Read the path MTU and source GID rdma_cm chose. */
static unsigned int qp_mtu(struct probe *p)
{
	struct ls_probe_dev *d = &p->r->dev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	union ibv_gid g;

	if (ibv_query_qp(p->qp, &qa, IBV_QP_PATH_MTU | IBV_QP_AV, &ia))
		return 0;
	if (qa.ah_attr.is_global && !ibv_query_gid(p->ctx, (uint8_t)p->o->ib_port,
						   qa.ah_attr.grh.sgid_index, &g)) {
		d->gid_index = qa.ah_attr.grh.sgid_index;
		inet_ntop(AF_INET6, g.raw, d->gid, sizeof(d->gid));
		gid_type(p, d->gid_index, d->gid_type, sizeof(d->gid_type));
	}
	return ls_probe_ibv_to_mtu(qa.path_mtu);
}

/* Prober session after the control connection is up. */
static int client_session(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t hb[LS_OOB_HELLO_MAX_LEN];
	struct ls_oob_hello h = { 0 };
	struct ls_oob_accept a;
	struct ls_oob_msg m;
	struct rdma_cm_event *ev;
	int rc;

	if (o->rdma_cm && cm_client_resolve(p, err))
		return -1;
	if (create_resources(p, o->sizes, o->nsizes, err))
		return -1;
	if (o->mtu && o->mtu > r->dev.active_mtu)
		ls_warn("probe: MTU %u exceeds %s's active MTU %u, using %u", o->mtu,
			r->dev.name, r->dev.active_mtu, r->dev.active_mtu);
	h.verb = (uint8_t)o->verb;
	h.flags = (o->events ? LS_OOB_F_EVENTS : 0) | (o->rdma_cm ? LS_OOB_F_RDMA_CM : 0);
	h.mtu = (uint16_t)agree_mtu(o->mtu, r->dev.active_mtu, r->dev.active_mtu);
	h.qp_timeout = (uint8_t)o->qp_timeout;
	h.iters = o->iters;
	h.duration_ns = o->duration_ns;
	h.capacity = run_capacity(o);
	h.nsizes = o->nsizes;
	memcpy(h.sizes, o->sizes, sizeof(h.sizes));
	local_qp(p, &h.qp);
	if (ls_oob_send(&p->oob, LS_OOB_HELLO, 0, hb, ls_oob_hello_encode(&h, hb),
			o->connect_timeout_ns, err))
		return -1;
	if (o->rdma_cm) {
		struct rdma_conn_param cp;

		cm_params(&cp);
		if (rdma_connect(p->cm_id, &cp))
			return ls_errnof(err, errno, "rdma_cm: connect to %s", o->peer);
		if (cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, &ev, o->connect_timeout_ns, err))
			return ls_err_wrap(err, "rdma_cm: connect to %s", o->peer);
		rdma_ack_cm_event(ev);
	}
	if (ls_oob_expect(&p->oob, LS_OOB_ACCEPT, &m, LS_OOB_ACCEPT_LEN,
			  o->connect_timeout_ns + o->wait_timeout_ns, err))
		return -1;
	rc = ls_oob_accept_parse(m.payload, m.hdr.length, &a, err);
	free(m.payload);
	if (rc)
		return -1;
	p->remote = a.qp;
	r->peer_active_mtu = a.active_mtu;
	if (a.qp.buf_len < p->half)
		return ls_errf(err, "responder's buffer (%u bytes) is smaller than ours",
			       a.qp.buf_len);
	if (o->rdma_cm) {
		r->mtu = qp_mtu(p);
	} else {
		r->mtu = a.mtu;
		if (connect_qp(p, a.mtu, err))
			return -1;
	}
	if (uses_recv(p) && post_recvs(p, RQ_DEPTH, err))
		return -1;
	counters_snapshot(p);
	if (client_runs(p, err))
		return -1;
	if (ls_oob_send(&p->oob, LS_OOB_BYE, 0, NULL, 0, o->wait_timeout_ns, err))
		return -1;
	if (o->finish && o->finish(o->arg, &p->oob, true, err))
		return ls_err_wrap(err, "finish hook");
	if (ls_oob_expect(&p->oob, LS_OOB_BYE, &m, 0, o->wait_timeout_ns, err))
		return -1;
	free(m.payload);
	return 0;
}

/* Run a session as the prober. */
int ls_probe_run_client(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err)
{
	struct probe p = { .o = o, .r = r, .prober = true, .oob = { .fd = -1 } };
	int rc;

	result_init(r, o, true);
	if (ls_probe_opts_check(o, true, err) || pin_cpu(o, r, err))
		return -1;
	snprintf(r->peer, sizeof(r->peer), "%s:%u", o->peer, o->port);
	/* Bad device, port or GID fail here, before the network is touched. */
	if ((!o->rdma_cm || o->device) && (open_device(&p, err) || query_port(&p, err))) {
		rc = -1;
		goto out;
	}
	for (unsigned int i = 0; r->dev.max_msg_sz && i < o->nsizes; i++) {
		if (o->sizes[i] > r->dev.max_msg_sz) {
			ls_errf(err, "size %u exceeds %s's max message size %u", o->sizes[i],
				r->dev.name, r->dev.max_msg_sz);
			rc = -1;
			goto out;
		}
	}
	if (ls_oob_connect(o->peer, o->port, o->connect_timeout_ns, &p.oob, err)) {
		ls_err_wrap(err, "responder %s unreachable (timeout %.3g s)", r->peer,
			    (double)o->connect_timeout_ns / 1e9);
		rc = -1;
		goto out;
	}
	rc = client_session(&p, err);
	if (rc) {
		snprintf(r->fault, sizeof(r->fault), "%s", err->msg);
		ls_oob_send_error(&p.oob, EIO, err->msg);
	}
out:
	ls_oob_close(&p.oob);
	destroy_resources(&p);
	if (p.cm_ch)
		rdma_destroy_event_channel(p.cm_ch);
	if (p.ctx && p.ctx_owned)
		ibv_close_device(p.ctx);
	return rc;
}

/* Responder: one session on an accepted control connection. */
static int server_session(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t ab[LS_OOB_ACCEPT_LEN];
	struct ls_oob_accept a = { 0 };
	struct ls_oob_hello h;
	struct ls_oob_msg m;
	int rc;

	if (ls_oob_expect(&p->oob, LS_OOB_HELLO, &m, LS_OOB_HELLO_MAX_LEN,
			  o->connect_timeout_ns, err))
		return ls_err_wrap(err, "handshake");
	rc = ls_oob_hello_parse(m.payload, m.hdr.length, &h, err);
	free(m.payload);
	if (rc)
		return ls_err_wrap(err, "handshake");
	if (!!(h.flags & LS_OOB_F_RDMA_CM) != o->rdma_cm)
		return ls_errf(err, "prober %s rdma_cm (-R), this responder %s",
			       (h.flags & LS_OOB_F_RDMA_CM) ? "uses" : "does not use",
			       o->rdma_cm ? "does" : "does not");
	r->verb = (enum ls_probe_verb)h.verb;
	r->events = h.flags & LS_OOB_F_EVENTS;
	p->r->rdma_cm = o->rdma_cm;
	/* The responder follows the prober's mode, verb, timeout and run length. */
	p->eff = *o;
	p->eff.events = r->events;
	p->eff.verb = r->verb;
	p->eff.qp_timeout = h.qp_timeout;
	p->eff.duration_ns = h.duration_ns;
	p->eff.iters = h.iters;
	p->o = o = &p->eff;
	p->remote = h.qp;
	if (o->rdma_cm) {
		struct rdma_conn_param cp;
		struct rdma_cm_event *ev;
		uint8_t to = h.qp_timeout;

		if (cm_wait(p, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, o->connect_timeout_ns, err))
			return -1;
		p->cm_id = ev->id;
		rdma_ack_cm_event(ev);
		if (cm_adopt_device(p, p->cm_id->verbs, err) ||
		    create_resources(p, h.sizes, h.nsizes, err))
			return -1;
		rdma_set_option(p->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to,
				sizeof(to));
		if (uses_recv(p) && post_recvs(p, RQ_DEPTH, err))
			return -1;
		cm_params(&cp);
		if (rdma_accept(p->cm_id, &cp))
			return ls_errnof(err, errno, "rdma_cm: accept");
		if (cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, &ev, o->connect_timeout_ns, err))
			return -1;
		rdma_ack_cm_event(ev);
		r->mtu = qp_mtu(p);
	} else {
		if (create_resources(p, h.sizes, h.nsizes, err))
			return -1;
		r->mtu = agree_mtu(h.mtu, h.mtu, r->dev.active_mtu);
		if (connect_qp(p, r->mtu, err))
			return -1;
		if (uses_recv(p) && post_recvs(p, RQ_DEPTH, err))
			return -1;
	}
	if (h.qp.buf_len < p->half)
		return ls_errf(err, "prober's buffer (%u bytes) is too small", h.qp.buf_len);
	a.mtu = (uint16_t)(r->mtu ? r->mtu : 1024);
	a.active_mtu = (uint16_t)r->dev.active_mtu;
	local_qp(p, &a.qp);
	if (ls_oob_send(&p->oob, LS_OOB_ACCEPT, 0, ab, ls_oob_accept_encode(&a, ab),
			o->connect_timeout_ns, err))
		return -1;
	counters_snapshot(p);
	if (server_runs(p, &h, err))
		return -1;
	if (o->finish && o->finish(o->arg, &p->oob, false, err))
		return ls_err_wrap(err, "finish hook");
	return ls_oob_send(&p->oob, LS_OOB_BYE, 0, NULL, 0, o->wait_timeout_ns, err);
}

/* Free one run's arrays. */
static void run_free(struct ls_probe_run *run)
{
	free(run->samples);
	free(run->hw_end_ns);
	free(run->peer);
	run->samples = run->peer = NULL;
	run->hw_end_ns = NULL;
}

/* Free what a run_* call allocated. */
void ls_probe_result_free(struct ls_probe_result *r)
{
	for (unsigned int i = 0; i < LS_PROBE_MAX_SIZES; i++)
		run_free(&r->runs[i]);
	r->nruns = 0;
}

/* Serve prober sessions. */
int ls_probe_run_server(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err)
{
	struct probe p = { .o = o, .r = r, .prober = false, .oob = { .fd = -1 } };
	int lfd = -1, rc = -1;
	unsigned int served = 0;

	result_init(r, o, false);
	if (ls_probe_opts_check(o, false, err) || pin_cpu(o, r, err))
		return -1;
	/* Fail early on a bad device or GID, before anyone connects. */
	if (open_device(&p, err) || query_port(&p, err))
		goto out;
	if (o->rdma_cm && cm_server_listen(&p, err))
		goto out;
	if (ls_oob_listen(o->peer, o->port, &lfd, err))
		goto out;
	note(&p, "responder listening on port %u (%s port %u, GID %d %s)", o->port,
	     r->dev.name, o->ib_port, r->dev.gid_index, r->dev.gid);
	for (;;) {
		struct ls_err se = { 0 };

		if (ls_oob_accept_conn(lfd, o->listen_timeout_ns, &p.oob, err)) {
			if (served) {	/* --forever: a quiet spell after sessions ends cleanly */
				note(&p, "no prober within %.3g s after %u session%s, exiting",
				     (double)o->listen_timeout_ns / 1e9, served,
				     served == 1 ? "" : "s");
				break;
			}
			ls_err_wrap(err, "no prober within %.3g s",
				    (double)o->listen_timeout_ns / 1e9);
			goto out;
		}
		ls_probe_result_free(r);
		{
			struct ls_probe_dev dev = r->dev;

			result_init(r, o, false);
			r->dev = dev;
			r->cpu = o->cpu;
		}
		snprintf(r->peer, sizeof(r->peer), "%s", p.oob.peer);
		p.o = o;
		rc = server_session(&p, &se);
		if (rc) {
			note(&p, "session with %s failed: %s", p.oob.peer, se.msg);
			snprintf(r->fault, sizeof(r->fault), "%s", se.msg);
			ls_oob_send_error(&p.oob, EPROTO, se.msg);
		} else {
			note(&p, "session with %s done (%u run%s)", p.oob.peer, r->nruns,
			     r->nruns == 1 ? "" : "s");
		}
		ls_oob_close(&p.oob);
		destroy_resources(&p);
		if (!p.ctx && !o->rdma_cm && open_device(&p, err))
			goto out;
		if (!rc && !o->serve_forever)
			break;
		served += !rc;
		rc = -1;
	}
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);
	if (p.cm_listen)
		rdma_destroy_id(p.cm_listen);
	if (p.cm_ch)
		rdma_destroy_event_channel(p.cm_ch);
	if (p.ctx && p.ctx_owned)
		ibv_close_device(p.ctx);
	return rc;
}
